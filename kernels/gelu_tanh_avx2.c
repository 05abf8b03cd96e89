/* AVX2 build of the float32 tanh-approximation GELU. */
#include "gelu_tanh_isa.h"
