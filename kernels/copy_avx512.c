/* AVX-512 transposed float32 tiles for tj_k_copy_strided (see copy.h). */
#include "copy.h"
#include "transpose16_avx512.h"

void tj_k_transpose_tile_f32_avx512(float *d, int64_t drow, const float *s, int64_t scol, int64_t rows,
                                    int64_t cols)
{
    for (int64_t r0 = 0; r0 < rows; r0 += 16) {
        __mmask16 rm = tj_k_lanes16(rows - r0);
        int64_t nr = rows - r0 < 16 ? rows - r0 : 16;
        for (int64_t c0 = 0; c0 < cols; c0 += 16) {
            __mmask16 cm = tj_k_lanes16(cols - c0);
            __m512 v[16];
            for (int64_t j = 0; j < 16; j++) /* v[j]: column c0 + j of d, rows r0.. (contiguous in s) */
                v[j] = c0 + j < cols ? _mm512_maskz_loadu_ps(rm, s + r0 + (c0 + j) * scol) : _mm512_setzero_ps();
            tj_k_transpose16(v);
            for (int64_t i = 0; i < nr; i++) _mm512_mask_storeu_ps(d + (r0 + i) * drow + c0, cm, v[i]);
        }
    }
}

/* One run of n bytes as moves of W bytes, the last one ending at n
 * (overlapping the previous one): n >= W. */
#define RUNS(W, LOAD, STORE)                                                                            \
    for (int64_t j = 0; j < count; j++) {                                                              \
        char *d_ = d + j * dstep;                                                                      \
        const char *s_ = s + j * sstep;                                                                \
        for (int64_t i = 0; i + W < nbytes; i += W) STORE(d_ + i, LOAD(s_ + i));                       \
        STORE(d_ + nbytes - W, LOAD(s_ + nbytes - W));                                                 \
    }

#define LD64(p) _mm512_loadu_si512((const void *)(p))
#define ST64(p, v) _mm512_storeu_si512((void *)(p), v)
#define LD32(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define ST32(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
#define LD16(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define ST16(p, v) _mm_storeu_si128((__m128i *)(void *)(p), v)

void tj_k_copy_runs_avx512(char *d, int64_t dstep, const char *s, int64_t sstep, int64_t count, int64_t nbytes)
{
    if (nbytes >= 64) RUNS(64, LD64, ST64)
    else if (nbytes >= 32) RUNS(32, LD32, ST32)
    else if (nbytes >= 16) RUNS(16, LD16, ST16)
    else tj_k_copy_runs_generic(d, dstep, s, sstep, count, nbytes);
}
#undef RUNS
#undef LD64
#undef ST64
#undef LD32
#undef ST32
#undef LD16
#undef ST16
