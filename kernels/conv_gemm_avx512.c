/* AVX-512 build of the convolution GEMM's kernels (conv_gemm_isa.h): the
 * whole 8 x 32 tile in 16 zmm accumulators. */
#include "simd_rows.h"
#include "conv_gemm_isa.h"
