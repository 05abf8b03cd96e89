/* AVX-512 row loop of the float32 sum (see reduce.c): the rows of a block of
 * outputs whose kept dim is contiguous, converted to double and added in row
 * order, eight outputs per vector, so that every output sees the same
 * sequence of additions as in the generic loop (the bias gradients of
 * Linear layers, sum over the batch dim, run this). */
#include <immintrin.h>

#include "reduce_isa.h"

void tj_k_sum_f32_rows_avx512(const float *x, int64_t nrows, int64_t rs, int64_t m, double *o)
{
    int64_t j = 0;
    for (; j + 8 <= m; j += 8) {
        __m512d acc = _mm512_loadu_pd(o + j);
        for (int64_t k = 0; k < nrows; k++) acc = _mm512_add_pd(acc, _mm512_cvtps_pd(_mm256_loadu_ps(x + k * rs + j)));
        _mm512_storeu_pd(o + j, acc);
    }
    if (j < m) {
        __mmask8 mask = (__mmask8)((1u << (m - j)) - 1);
        __m512d acc = _mm512_maskz_loadu_pd(mask, o + j);
        for (int64_t k = 0; k < nrows; k++)
            acc = _mm512_add_pd(acc, _mm512_cvtps_pd(_mm256_maskz_loadu_ps(mask, x + k * rs + j)));
        _mm512_mask_storeu_pd(o + j, mask, acc);
    }
}
