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

/* Elements of src read ahead: the hardware prefetcher does not follow a
 * stream of masked loads, which then wait for memory each (3x slower on
 * the col2im of a decomposed convolution's input gradient). */
#define PREFETCH_AHEAD 1024

/* The loop for a constant nrows (inlined twice below: the source pointers
 * then stay in registers). */
static inline __attribute__((always_inline)) void add_runs(float *const *o, const float *const *src, int nrows,
                                                           const int64_t *runs, int64_t nruns)
{
    const float *s[TJ_K_SCATTER_ADD_ROWS_AT_ONCE];
    for (int q = 0; q < nrows; q++) s[q] = src[q];
    for (int64_t k = 0; k < nruns; k++) {
        int64_t e = runs[k];
        int len = (int)(e & 15) + 1;
        __mmask16 m = (__mmask16)((1u << len) - 1);
        for (int q = 0; q < nrows; q++) {
            float *d = o[q] + (e >> 4);
            _mm_prefetch((const char *)(s[q] + PREFETCH_AHEAD), _MM_HINT_T0);
            __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, d), _mm512_maskz_loadu_ps(m, s[q]));
            _mm512_mask_storeu_ps(d, m, v);
            s[q] += len;
        }
    }
}

void tj_k_scatter_add_runs_f32_avx512(float *const *o, const float *const *src, int nrows, const int64_t *runs,
                                      int64_t nruns)
{
    if (nrows == 2) add_runs(o, src, 2, runs, nruns);
    else add_runs(o, src, 1, runs, nruns);
}
