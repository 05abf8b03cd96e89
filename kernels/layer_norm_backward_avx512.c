/* AVX-512 build of the float32 layer-norm backward pieces. */
#include "layer_norm_backward_isa.h"
