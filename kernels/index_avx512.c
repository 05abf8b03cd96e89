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
