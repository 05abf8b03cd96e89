/* AVX-512 build of the float32 matrix-vector kernels (gemv_isa.h): blocks
 * of 4 rows x 4 vectors of the row form in 16 zmm accumulators. */
#include "gemv_isa.h"
