/* AVX2 + FMA build of the float32 GEMM kernel (gemm_isa.h). */
#include "gemm_isa.h"
