/* AVX2 build of the float32 tanh. */
#include "tanh_isa.h"
