/* AVX2 + FMA build of the float32 matrix-vector kernels (gemv_isa.h):
 * blocks of 4 rows x 3 vectors of the row form in 12 ymm accumulators. */
#include "gemv_isa.h"
