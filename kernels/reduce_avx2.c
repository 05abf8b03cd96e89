/* AVX2 float32 extrema scans (reduce.c, DEF_SCAN with SCAN_LANES 32) on a
 * contiguous run, bit for bit as the generic scan: the same 32 lanes as four
 * vectors of eight, otherwise as reduce_avx512.c's scans. A value replaces
 * the best so far only when strictly better (_mm256_max_ps(v, l) is
 * `v > l ? v : l`, so a nan element never enters a lane); nans are flagged
 * apart and win outright as NAN. Lane k takes x[i + k] for every whole group
 * of 32; the lanes are then taken in lane order, and the remaining elements
 * in order, each only when strictly better. That keeps the first holder of
 * the extreme value; holders differ at most in the sign of a zero, so the
 * extreme is found by a tree and the first holder's sign read from the sign
 * mask. */
#include <immintrin.h>
#include <math.h>
#include <stdbool.h>

#include "reduce_isa.h"

/* all ones in the lanes k < m (m <= 8 after clamping) */
static __m256i lanes_below(int64_t m)
{
    int32_t c = (int32_t)(m < 8 ? m : 8);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(c), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* NAME##_first: of the first m (<= 32) lanes of v[0..3] (lane 8 j + k is
 * v[j] lane k), the first that is strictly better than best and equal to
 * their extreme, else best; a nan among them sets *nan (the result then does
 * not matter). */
#define DEF_SCAN_AVX2(NAME, VOP, OP, INIT)                                                               \
    static float NAME##_first(__m256 v[4], int64_t m, float best, bool *nan)                             \
    {                                                                                                    \
        __m256 init = _mm256_set1_ps(INIT);                                                              \
        for (int j = 0; j < 4; j++)                                                                      \
            v[j] = _mm256_blendv_ps(init, v[j], _mm256_castsi256_ps(lanes_below(m - 8 * j)));            \
        __m256 un = _mm256_or_ps(_mm256_cmp_ps(v[0], v[1], _CMP_UNORD_Q), _mm256_cmp_ps(v[2], v[3], _CMP_UNORD_Q)); \
        if (_mm256_movemask_ps(un)) {                                                                    \
            *nan = true;                                                                                 \
            return best;                                                                                 \
        }                                                                                                \
        __m256 t = _mm256_##VOP##_ps(_mm256_##VOP##_ps(v[0], v[1]), _mm256_##VOP##_ps(v[2], v[3]));      \
        __m128 h = _mm_##VOP##_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));               \
        h = _mm_##VOP##_ps(h, _mm_movehl_ps(h, h));                                                      \
        h = _mm_##VOP##_ss(h, _mm_movehdup_ps(h));                                                       \
        float e = _mm_cvtss_f32(h);                                                                      \
        if (!(e OP best)) return best;                                                                   \
        __m256 ev = _mm256_set1_ps(e);                                                                   \
        uint32_t eq = 0, neg = 0;                                                                        \
        for (int j = 0; j < 4; j++) {                                                                    \
            eq |= (uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(v[j], ev, _CMP_EQ_OQ)) << (8 * j);          \
            neg |= (uint32_t)_mm256_movemask_ps(v[j]) << (8 * j);                                        \
        }                                                                                                \
        return copysignf(e, (neg >> __builtin_ctz(eq)) & 1 ? -1.0f : 1.0f);                              \
    }                                                                                                    \
    static inline float NAME##_scan(const float *x, int64_t n)                                           \
    {                                                                                                    \
        float best = (INIT);                                                                             \
        bool nan = false;                                                                                \
        int64_t i = 0;                                                                                   \
        if (n >= 32) {                                                                                   \
            __m256 l[4], nf = _mm256_setzero_ps();                                                       \
            for (int j = 0; j < 4; j++) l[j] = _mm256_set1_ps(INIT);                                     \
            for (; i + 32 <= n; i += 32) {                                                               \
                __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);                     \
                __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);               \
                l[0] = _mm256_##VOP##_ps(v0, l[0]);                                                      \
                l[1] = _mm256_##VOP##_ps(v1, l[1]);                                                      \
                l[2] = _mm256_##VOP##_ps(v2, l[2]);                                                      \
                l[3] = _mm256_##VOP##_ps(v3, l[3]);                                                      \
                nf = _mm256_or_ps(nf, _mm256_or_ps(_mm256_cmp_ps(v0, v1, _CMP_UNORD_Q),                  \
                                                   _mm256_cmp_ps(v2, v3, _CMP_UNORD_Q)));                \
            }                                                                                            \
            if (_mm256_movemask_ps(nf)) return NAN;                                                      \
            best = NAME##_first(l, 32, best, &nan);                                                      \
        }                                                                                                \
        if (i < n) {                                                                                     \
            int64_t m = n - i; /* < 32 */                                                                \
            __m256 v[4];                                                                                 \
            for (int j = 0; j < 4; j++) v[j] = _mm256_maskload_ps(x + i + 8 * j, lanes_below(m - 8 * j)); \
            best = NAME##_first(v, m, best, &nan);                                                       \
        }                                                                                                \
        return nan ? NAN : best;                                                                         \
    }                                                                                                    \
    float tj_k_##NAME##_scan_avx2(const float *x, int64_t n) { return NAME##_scan(x, n); }               \
    void tj_k_##NAME##_scans_avx2(const char *x, const int64_t *off, int64_t nruns, int64_t n, float *out) \
    {                                                                                                    \
        for (int64_t r = 0; r < nruns; r++) out[r] = NAME##_scan((const float *)(const void *)(x + off[r]), n); \
    }

DEF_SCAN_AVX2(max_f32, max, >, -INFINITY)
DEF_SCAN_AVX2(min_f32, min, <, INFINITY)
