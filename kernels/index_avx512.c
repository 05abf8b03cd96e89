/* AVX-512 loops of the index kernels (see index_isa.h). */
#include <immintrin.h>

#include "index_isa.h"

int64_t tj_k_index_first_invalid_avx512(const int64_t *idx, int64_t n, int64_t size)
{
    const __m512i bound = _mm512_set1_epi64(size);
    int64_t j = 0;
    /* unsigned compare: negative values read as huge ones */
    for (; j + 8 <= n; j += 8) {
        __mmask8 bad = _mm512_cmpge_epu64_mask(_mm512_loadu_si512(idx + j), bound);
        if (bad) return j + __builtin_ctz(bad);
    }
    if (j < n) {
        __mmask8 m = (__mmask8)((1u << (n - j)) - 1);
        __mmask8 bad = _mm512_mask_cmpge_epu64_mask(m, _mm512_maskz_loadu_epi64(m, idx + j), bound);
        if (bad) return j + __builtin_ctz(bad);
    }
    return -1;
}

/* src offsets of 8 elements: idx * ds + the walked dim's offsets `walk`;
 * the lanes of m only, the others 0. false when one of them is outside
 * [0, size). */
static inline bool gather_offsets(__mmask8 m, const int64_t *idx, __m512i ds, __m512i walk, __m512i bound,
                                  __m512i *off)
{
    __m512i i = _mm512_maskz_loadu_epi64(m, idx);
    if (_mm512_mask_cmpge_epu64_mask(m, i, bound)) return false; /* unsigned: negatives read as huge */
    *off = _mm512_add_epi64(_mm512_mullo_epi64(i, ds), walk);
    return true;
}

/* The loop of both element sizes: STORE(j, m, off) gathers and stores
 * out[j..j+8) (the lanes of m). */
#define GATHER_RUN_AVX512(STORE)                                                                       \
    const __m512i vds = _mm512_set1_epi64(ds), bound = _mm512_set1_epi64(size),                        \
                  step = _mm512_set1_epi64(8 * ss);                                                    \
    __m512i walk = _mm512_mullo_epi64(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_set1_epi64(ss)), off; \
    for (int64_t j = 0; j < n; j += 8) {                                                               \
        __mmask8 m = n - j >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (n - j)) - 1);                     \
        if (!gather_offsets(m, idx + j, vds, walk, bound, &off)) return false;                         \
        STORE(j, m, off);                                                                              \
        walk = _mm512_add_epi64(walk, step);                                                           \
    }                                                                                                  \
    return true;

bool tj_k_gather_run64_avx512(uint64_t *out, const uint64_t *src, const int64_t *idx, int64_t n, int64_t ds,
                              int64_t ss, int64_t size)
{
#define STORE64(j, m, off)                                                                             \
    _mm512_mask_storeu_epi64(out + (j), m, _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), m, off, src, 8))
    GATHER_RUN_AVX512(STORE64)
#undef STORE64
}

bool tj_k_gather_run32_avx512(uint32_t *out, const uint32_t *src, const int64_t *idx, int64_t n, int64_t ds,
                              int64_t ss, int64_t size)
{
#define STORE32(j, m, off)                                                                             \
    _mm256_mask_storeu_epi32(out + (j), m, _mm512_mask_i64gather_epi32(_mm256_setzero_si256(), m, off, src, 4))
    GATHER_RUN_AVX512(STORE32)
#undef STORE32
}
