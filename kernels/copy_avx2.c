/* AVX2 moves for tj_k_convert (see copy.h): float32 <-> float64, float16 /
 * bfloat16 <-> float32. */
#include <immintrin.h>

#include "copy.h"
#include "dtype_convert.h"

/* vcvtps2pd / vcvtpd2ps give the scalar conversions' bits element by
 * element (NaN quieted with its payload kept, rounding under the current
 * mode); the tail converts one element at a time with those. */
void tj_k_f32_to_f64_avx2(double *d, const float *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_pd(d + i, _mm256_cvtps_pd(_mm_loadu_ps(s + i)));
        _mm256_storeu_pd(d + i + 4, _mm256_cvtps_pd(_mm_loadu_ps(s + i + 4)));
    }
    for (; i < n; i++) d[i] = (double)s[i];
}

void tj_k_f64_to_f32_avx2(float *d, const double *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm_storeu_ps(d + i, _mm256_cvtpd_ps(_mm256_loadu_pd(s + i)));
        _mm_storeu_ps(d + i + 4, _mm256_cvtpd_ps(_mm256_loadu_pd(s + i + 4)));
    }
    for (; i < n; i++) d[i] = (float)s[i];
}

/* float16 <-> float32 by F16C's vcvtph2ps / vcvtps2ph, bfloat16 <-> float32
 * by integer shifts, eight lanes a step, the tail by dtype_convert.h's
 * scalar conversions, whose bits the steps give (NaN lanes rebuilt as in
 * copy_avx512.c). */
void tj_k_f16_to_f32_avx2(float *d, const uint16_t *s, int64_t n)
{
    const __m256i abs = _mm256_set1_epi32(0x7fff), exp_mask = _mm256_set1_epi32(0x7c00);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i raw = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m256 f = _mm256_cvtph_ps(raw);
        __m256i h = _mm256_cvtepu16_epi32(raw);
        __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(h, abs), exp_mask);
        if (!_mm256_testz_si256(nan, nan)) {
            __m256i bits = _mm256_or_si256(
                _mm256_slli_epi32(_mm256_and_si256(h, _mm256_set1_epi32(0x8000)), 16),
                _mm256_or_si256(_mm256_set1_epi32(0x7f800000),
                                _mm256_slli_epi32(_mm256_and_si256(h, _mm256_set1_epi32(0x3ff)), 13)));
            f = _mm256_blendv_ps(f, _mm256_castsi256_ps(bits), _mm256_castsi256_ps(nan));
        }
        _mm256_storeu_ps(d + i, f);
    }
    for (; i < n; i++) d[i] = tj_k_f16_to_f32(s[i]);
}

void tj_k_f32_to_f16_avx2(uint16_t *d, const float *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 f = _mm256_loadu_ps(s + i);
        __m128i h = _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m256 unord = _mm256_cmp_ps(f, f, _CMP_UNORD_Q);
        if (_mm256_movemask_ps(unord)) {
            __m256i nan32 = _mm256_castps_si256(unord);
            __m128i nan = _mm_packs_epi32(_mm256_castsi256_si128(nan32), _mm256_extracti128_si256(nan32, 1));
            __m128i canon = _mm_or_si128(_mm_and_si128(h, _mm_set1_epi16((short)0x8000)), _mm_set1_epi16(0x7e00));
            h = _mm_blendv_epi8(h, canon, nan);
        }
        _mm_storeu_si128((__m128i *)(void *)(d + i), h);
    }
    for (; i < n; i++) d[i] = tj_k_f32_to_f16(s[i]);
}

void tj_k_bf16_to_f32_avx2(float *d, const uint16_t *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i x = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(s + i)));
        _mm256_storeu_ps(d + i, _mm256_castsi256_ps(_mm256_slli_epi32(x, 16)));
    }
    for (; i < n; i++) d[i] = tj_k_bf16_to_f32(s[i]);
}

void tj_k_f32_to_bf16_avx2(uint16_t *d, const float *s, int64_t n)
{
    const __m256i one = _mm256_set1_epi32(1), half = _mm256_set1_epi32(0x7fff), qnan = _mm256_set1_epi32(0x7fc0);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 f = _mm256_loadu_ps(s + i);
        __m256i x = _mm256_castps_si256(f);
        __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), one);
        __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, half), lsb), 16);
        r = _mm256_blendv_epi8(r, qnan, _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)));
        /* r's lanes fit 16 bits: pack within the 128-bit halves, then gather them */
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
        _mm_storeu_si128((__m128i *)(void *)(d + i), _mm256_castsi256_si128(packed));
    }
    for (; i < n; i++) d[i] = tj_k_f32_to_bf16(s[i]);
}
