/* AVX-512 moves for tj_k_copy_strided and tj_k_convert (see copy.h): transposed
 * float32 tiles, short runs, strided 4-byte runs, float -> int64, float32 <-> float64,
 * float16 / bfloat16 <-> float32. */
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

void tj_k_gather_runs32_avx512(uint32_t *d, int64_t dstep, const uint32_t *s, int64_t sstep, int64_t count,
                               int64_t len, int64_t ss)
{
    if (ss == 2) { /* 16 elements from 31 consecutive ones: the even lanes of two vectors */
        const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        int64_t full = len & ~(int64_t)15, span = 2 * (len - full) - 1; /* the tail's source span */
        __mmask16 lo_m = tj_k_lanes16(span), hi_m = tj_k_lanes16(span - 16), out_m = tj_k_lanes16(len - full);
        for (int64_t j = 0; j < count; j++) {
            uint32_t *d_ = d + j * dstep;
            const uint32_t *s_ = s + j * sstep;
            for (int64_t i = 0; i < full; i += 16) { /* the 32nd element is not the run's: masked off */
                __m512i lo = _mm512_loadu_si512((const void *)(s_ + 2 * i));
                __m512i hi = _mm512_maskz_loadu_epi32(0x7FFF, s_ + 2 * i + 16);
                _mm512_storeu_si512((void *)(d_ + i), _mm512_permutex2var_epi32(lo, even, hi));
            }
            if (out_m) {
                __m512i lo = _mm512_maskz_loadu_epi32(lo_m, s_ + 2 * full);
                __m512i hi = _mm512_maskz_loadu_epi32(hi_m, s_ + 2 * full + 16);
                _mm512_mask_storeu_epi32(d_ + full, out_m, _mm512_permutex2var_epi32(lo, even, hi));
            }
        }
        return;
    }
    const __m512i at = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                          _mm512_set1_epi32((int)ss));
    for (int64_t j = 0; j < count; j++) {
        uint32_t *d_ = d + j * dstep;
        const uint32_t *s_ = s + j * sstep;
        for (int64_t i = 0; i < len; i += 16) {
            __mmask16 m = tj_k_lanes16(len - i);
            __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, at, s_ + i * ss, 4);
            _mm512_mask_storeu_epi32(d_ + i, m, v);
        }
    }
}

/* cvttps2qq / cvttpd2qq truncate toward zero and give the "integer
 * indefinite" value, INT64_MIN, for NaN and for anything outside int64's
 * range: tj_k_float_to_i64, 8 lanes at a time. */
void tj_k_f32_to_i64_avx512(int64_t *d, const float *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm512_storeu_si512((void *)(d + i), _mm512_cvttps_epi64(_mm256_loadu_ps(s + i)));
    if (i < n) {
        __mmask8 m = (__mmask8)((1u << (n - i)) - 1);
        _mm512_mask_storeu_epi64(d + i, m, _mm512_cvttps_epi64(_mm256_maskz_loadu_ps(m, s + i)));
    }
}

void tj_k_f64_to_i64_avx512(int64_t *d, const double *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm512_storeu_si512((void *)(d + i), _mm512_cvttpd_epi64(_mm512_loadu_pd(s + i)));
    if (i < n) {
        __mmask8 m = (__mmask8)((1u << (n - i)) - 1);
        _mm512_mask_storeu_epi64(d + i, m, _mm512_cvttpd_epi64(_mm512_maskz_loadu_pd(m, s + i)));
    }
}

void tj_k_f32_to_f64_avx512(double *d, const float *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_storeu_pd(d + i, _mm512_cvtps_pd(_mm256_loadu_ps(s + i)));
        _mm512_storeu_pd(d + i + 8, _mm512_cvtps_pd(_mm256_loadu_ps(s + i + 8)));
    }
    for (; i < n; i += 8) {
        __mmask8 m = (__mmask8)(n - i >= 8 ? 0xff : (1u << (n - i)) - 1);
        _mm512_mask_storeu_pd(d + i, m, _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, s + i)));
    }
}

void tj_k_f64_to_f32_avx512(float *d, const double *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm256_storeu_ps(d + i, _mm512_cvtpd_ps(_mm512_loadu_pd(s + i)));
        _mm256_storeu_ps(d + i + 8, _mm512_cvtpd_ps(_mm512_loadu_pd(s + i + 8)));
    }
    for (; i < n; i += 8) {
        __mmask8 m = (__mmask8)(n - i >= 8 ? 0xff : (1u << (n - i)) - 1);
        _mm256_mask_storeu_ps(d + i, m, _mm512_cvtpd_ps(_mm512_maskz_loadu_pd(m, s + i)));
    }
}

/* float16 <-> float32 by vcvtph2ps / vcvtps2ph, bfloat16 <-> float32 by
 * integer shifts, sixteen lanes a step and the tail masked: the bits of
 * dtype_convert.h's scalar conversions (c10's). The instructions' own NaN
 * results differ (vcvtph2ps quiets a signalling NaN, vcvtps2ph keeps the
 * top payload bits): NaN lanes are rebuilt as the scalar code makes them. */
void tj_k_f16_to_f32_avx512(float *d, const uint16_t *s, int64_t n)
{
    const __m512i exp_mask = _mm512_set1_epi32(0x7c00), mant = _mm512_set1_epi32(0x3ff);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = tj_k_lanes16(n - i);
        __m512i h = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, s + i));
        __m512 f = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(h));
        __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(h, _mm512_set1_epi32(0x7fff)), exp_mask);
        if (nan) { /* sign, all-ones exponent, the payload as it was */
            __m512i bits = _mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(h, _mm512_set1_epi32(0x8000)), 16),
                                           _mm512_or_si512(_mm512_set1_epi32(0x7f800000),
                                                           _mm512_slli_epi32(_mm512_and_si512(h, mant), 13)));
            f = _mm512_mask_mov_ps(f, nan, _mm512_castsi512_ps(bits));
        }
        _mm512_mask_storeu_ps(d + i, m, f);
    }
}

void tj_k_f32_to_f16_avx512(uint16_t *d, const float *s, int64_t n)
{
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = tj_k_lanes16(n - i);
        __m512 f = _mm512_maskz_loadu_ps(m, s + i);
        __m256i h = _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __mmask16 nan = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);
        if (nan) { /* sign | 0x7e00 */
            __m256i canon = _mm256_or_si256(_mm256_and_si256(h, _mm256_set1_epi16((short)0x8000)),
                                            _mm256_set1_epi16(0x7e00));
            h = _mm256_mask_mov_epi16(h, nan, canon);
        }
        _mm256_mask_storeu_epi16(d + i, m, h);
    }
}

void tj_k_bf16_to_f32_avx512(float *d, const uint16_t *s, int64_t n)
{
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = tj_k_lanes16(n - i);
        __m512i x = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, s + i)), 16);
        _mm512_mask_storeu_ps(d + i, m, _mm512_castsi512_ps(x));
    }
}

/* rounded to nearest even by adding 0x7fff plus the kept part's lowest bit;
 * NaN is 0x7fc0 whatever its sign (c10's round_to_nearest_even) */
void tj_k_f32_to_bf16_avx512(uint16_t *d, const float *s, int64_t n)
{
    const __m512i one = _mm512_set1_epi32(1), half = _mm512_set1_epi32(0x7fff), qnan = _mm512_set1_epi32(0x7fc0);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = tj_k_lanes16(n - i);
        __m512 f = _mm512_maskz_loadu_ps(m, s + i);
        __m512i x = _mm512_castps_si512(f);
        __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), one);
        __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, half), lsb), 16);
        r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q), qnan);
        _mm256_mask_storeu_epi16(d + i, m, _mm512_cvtepi32_epi16(r));
    }
}
