/* AVX2 + FMA build of the convolution GEMM's kernels (conv_gemm_isa.h): the
 * 8 x 32 tile in four passes of 4 rows x 16 columns (8 ymm accumulators). */
#include "simd_rows.h"
#include "conv_gemm_isa.h"
