/* AVX-512 scatter_add over runs of consecutive indices (see index_isa.h). */
#include <immintrin.h>

#include "index_isa.h"

/* Elements of src read ahead: the hardware prefetcher does not follow a
 * stream of masked loads, which then wait for memory each (3x slower on
 * the col2im of a decomposed convolution's input gradient). */
#define PREFETCH_AHEAD 1024

void tj_k_scatter_add_runs_f32_avx512(float *o, const float *src, const int64_t *runs, int64_t nruns)
{
    for (int64_t k = 0; k < nruns; k++) {
        int64_t e = runs[k];
        int len = (int)(e & 15) + 1;
        __mmask16 m = (__mmask16)((1u << len) - 1);
        float *d = o + (e >> 4);
        _mm_prefetch((const char *)(src + PREFETCH_AHEAD), _MM_HINT_T0);
        __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, d), _mm512_maskz_loadu_ps(m, src));
        _mm512_mask_storeu_ps(d, m, v);
        src += len;
    }
}
