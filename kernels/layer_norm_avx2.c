/* AVX2 + FMA build of the float32 layer-norm row. */
#include "layer_norm_isa.h"
