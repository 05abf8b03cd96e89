/* AVX2 build of the float32 SGD loop. */
#include "sgd_isa.h"
