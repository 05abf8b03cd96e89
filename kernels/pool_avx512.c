/* AVX-512 tap update of max pooling (see pool.h): 16 output columns at a
 * time, a contiguous load for stride 1, two loads and a permute for stride
 * 2, a gather otherwise; masked stores
 * keep the values and indices of the columns where the tap does not win. */
#include <immintrin.h>
#include <limits.h>

#include "pool.h"

void tj_k_max_pool_tap_f32_avx512(const float *row, int64_t y, int64_t width, int64_t lo, int64_t hi, int64_t sw,
                                  int64_t off, int64_t xs, float *o, int64_t *ix)
{
    int64_t step = sw * xs;
    if (step > INT_MAX / 16) {
        tj_k_max_pool_tap_f32_generic(row, y, width, lo, hi, sw, off, xs, o, ix);
        return;
    }
    const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i gather_idx = _mm512_mullo_epi32(lanes, _mm512_set1_epi32((int)step));
    const __m512i even = _mm512_add_epi32(lanes, lanes);
    const __m512i lanes_lo = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i pos_lo = _mm512_mullo_epi64(lanes_lo, _mm512_set1_epi64(sw));
    const __m512i pos_hi = _mm512_add_epi64(pos_lo, _mm512_set1_epi64(8 * sw));
    for (int64_t ox = lo; ox < hi; ox += 16) {
        int64_t n = hi - ox;
        __mmask16 m = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
        int64_t x = ox * sw + off;
        const float *base = row + x * xs;
        __m512 v;
        if (step == 1) {
            v = _mm512_maskz_loadu_ps(m, base);
        } else if (step == 2) {
            /* the even elements of 2n-1 consecutive ones */
            int64_t span = 2 * (n >= 16 ? 16 : n) - 1;
            __mmask16 m0 = span >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << span) - 1);
            __mmask16 m1 = span > 16 ? (__mmask16)((1u << (span - 16)) - 1) : 0;
            v = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(m0, base), even, _mm512_maskz_loadu_ps(m1, base + 16));
        } else {
            v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, gather_idx, base, 4);
        }
        __m512 cur = _mm512_maskz_loadu_ps(m, o + ox);
        __mmask16 take = (_mm512_cmp_ps_mask(v, cur, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)) & m;
        _mm512_mask_storeu_ps(o + ox, take, v);
        __m512i first = _mm512_set1_epi64(y * width + x);
        _mm512_mask_storeu_epi64(ix + ox, (__mmask8)take, _mm512_add_epi64(first, pos_lo));
        _mm512_mask_storeu_epi64(ix + ox + 8, (__mmask8)(take >> 8), _mm512_add_epi64(first, pos_hi));
    }
}
