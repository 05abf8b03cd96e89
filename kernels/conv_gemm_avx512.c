/* AVX-512 micro-kernel of the convolution GEMM (see conv_gemm.h): an 8 x 32
 * tile held in 16 zmm accumulators, one broadcast of A per row and two loads
 * of B per step of k; edges use masked loads and stores. */
#include <immintrin.h>

#include "conv_gemm.h"

_Static_assert(TJ_K_GEMM_MR == 8 && TJ_K_GEMM_NR == 32, "the AVX-512 micro-kernel is written for 8 x 32 tiles");

void tj_k_sgemm_ukernel_avx512(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int mr, int nr,
                               float beta, const float *bias)
{
    __m512 lo[8], hi[8];
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++) lo[r] = hi[r] = _mm512_setzero_ps();
    for (int64_t p = 0; p < kc; p++, ap += 8, bp += 32) {
        __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) {
            __m512 a = _mm512_set1_ps(ap[r]);
            lo[r] = _mm512_fmadd_ps(a, b0, lo[r]);
            hi[r] = _mm512_fmadd_ps(a, b1, hi[r]);
        }
    }
    __mmask16 m0 = nr >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nr) - 1);
    __mmask16 m1 = nr >= 32 ? (__mmask16)0xFFFF : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1) : 0;
    __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++) {
        if (r >= mr) break;
        float *row = c + r * ldc;
        __m512 v0 = lo[r], v1 = hi[r];
        if (bias) {
            __m512 add = _mm512_set1_ps(bias[r]);
            v0 = _mm512_add_ps(v0, add);
            v1 = _mm512_add_ps(v1, add);
        }
        if (beta != 0.0f) {
            v0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, row), v0);
            v1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, row + 16), v1);
        }
        _mm512_mask_storeu_ps(row, m0, v0);
        _mm512_mask_storeu_ps(row + 16, m1, v1);
    }
}
