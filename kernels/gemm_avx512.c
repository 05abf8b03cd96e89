/* AVX-512 build of the float32 GEMM kernel (gemm_isa.h). */
#include "gemm_isa.h"
