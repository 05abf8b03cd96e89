/* AVX-512 build of the float32 exact GELU. */
#include "gelu_isa.h"
