/* AVX-512 build of the float32 layer-norm row. */
#include "layer_norm_isa.h"
