/* AVX2 max pooling of the common MaxPool2d(2) geometry (see pool.h), for
 * CPUs without AVX-512: pool_avx512.c's 2 x 2 plane kernel, 8 windows of
 * an output row per step, the last step of a row (fewer windows, or a
 * ceil_mode window missing its second column) with masked loads. Its
 * scatter-free backward, written the same way, was no faster than the
 * scatter on AMD EPYC (0.92-1.0 ms against 0.6-0.85 for [64, 16, 28, 28]):
 * the backward keeps the scatter here. */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pool.h"
#include "simd_rows.h"

/* The even and the odd elements of the 16 floats a, b. */
static inline void deinterleave(__m256 a, __m256 b, __m256 *even, __m256 *odd)
{
    /* within 128-bit lanes: a0 a2 b0 b2 | a4 a6 b4 b6; then the 64-bit pairs in order */
    *even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
    *odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
}

/* The running maximum takes v in the lanes of `valid` where v wins
 * (larger, or nan); its index becomes pos: the update of the tap loop
 * (pool.c). */
static inline void max_update(__m256 *cur, __m256i *at, __m256 v, __m256i pos, __m256i valid)
{
    __m256 take = _mm256_or_ps(_mm256_cmp_ps(v, *cur, _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    take = _mm256_and_ps(take, _mm256_castsi256_ps(valid));
    *cur = _mm256_blendv_ps(*cur, v, take);
    *at = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(*at), _mm256_castsi256_ps(pos), take));
}

bool tj_k_max_pool_plane_2x2_f32_avx2_ok(const tj_k_pool2d *p)
{
    /* indices in 32 bits */
    return tj_k_max_pool_is_2x2(p) && p->xs == 1 && p->height * p->width <= INT32_MAX / 2;
}

void tj_k_max_pool_plane_2x2_f32_avx2(const tj_k_pool2d *p, const float *plane, const int64_t *tap_lo,
                                      const int64_t *tap_hi, float *out, int64_t *idx)
{
    (void)tap_lo, (void)tap_hi; /* every tap of a 2 x 2 window lies inside the input */
    const __m256i even_pos = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14), one = _mm256_set1_epi32(1);
    int64_t width = p->width, ow = p->out_w;
    for (int64_t oy = 0; oy < p->out_h; oy++) {
        int64_t y = 2 * oy;
        int rows = y + 1 < p->height ? 2 : 1;
        float *o = out + oy * ow;
        int64_t *ix = idx + oy * ow;
        for (int64_t ox = 0; ox < ow; ox += 8) {
            /* n windows over `cols` columns: a ceil_mode edge window may lack its second one */
            int64_t x = 2 * ox, n = ow - ox < 8 ? ow - ox : 8, cols = width - x < 2 * n ? width - x : 2 * n;
            /* lanes of the masked loads (simd_rows.h's vf_mask: n <= 0 none, n >= 8 all); a partial
             * step stores through a buffer on the stack: masked stores are microcoded on AMD's
             * cores (with them, [64, 16, 28, 28] took 1.5 ms instead of 1.2) */
            __m256i m = vf_mask((int)n), m_odd = vf_mask((int)cols / 2);
            __m256i m0 = vf_mask((int)cols), m1 = vf_mask((int)cols - 8);
            __m256 cur = _mm256_set1_ps(-INFINITY);
            __m256i at = _mm256_add_epi32(even_pos, _mm256_set1_epi32((int32_t)(y * width + x)));
            for (int i = 0; i < rows; i++) {
                const float *src = plane + (y + i) * p->ys + x;
                __m256 ve, vo;
                deinterleave(_mm256_maskload_ps(src, m0), _mm256_maskload_ps(src + 8, m1), &ve, &vo);
                __m256i pos = _mm256_add_epi32(even_pos, _mm256_set1_epi32((int32_t)((y + i) * width + x)));
                max_update(&cur, &at, ve, pos, m);
                max_update(&cur, &at, vo, _mm256_add_epi32(pos, one), m_odd);
            }
            __m256i at_lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(at));
            __m256i at_hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(at, 1));
            float v[8];
            int64_t i64[8];
            bool whole = n == 8;
            _mm256_storeu_ps(whole ? o + ox : v, cur);
            _mm256_storeu_si256((__m256i *)(void *)(whole ? ix + ox : i64), at_lo);
            _mm256_storeu_si256((__m256i *)(void *)(whole ? ix + ox + 4 : i64 + 4), at_hi);
            if (!whole) {
                memcpy(o + ox, v, sizeof(float) * (size_t)n);
                memcpy(ix + ox, i64, sizeof(int64_t) * (size_t)n);
            }
        }
    }
}
