/* AVX2 + FMA build of the float32 softmax pieces. */
#include "softmax_isa.h"
