/* A small float32 vector vocabulary for the row kernels (softmax, layer
 * norm), so that one template (softmax_isa.h, layer_norm_isa.h) compiles to
 * both an AVX-512 and an AVX2 object. Include only from a translation unit
 * built for that ISA (kernels_avx512_src / kernels_avx2_src): SLEEF declares
 * its vector functions only there.
 *
 * vf: VF_N floats; vd: VF_N / 2 doubles (to accumulate in double).
 * TJ_ISA(name) appends the ISA suffix to a function name. */
#ifndef TJIT_KERNELS_SIMD_ROWS_H
#define TJIT_KERNELS_SIMD_ROWS_H

#include <immintrin.h>
#include <math.h>
#include <sleef.h>
#include <stdint.h>

#include "sleef_limits.h"

#if defined(__AVX512F__)

#include "transpose16_avx512.h"

#define TJ_ISA(name) name##_avx512
#define VF_N 16
typedef __m512 vf;
typedef __m512d vd;

static inline vf vf_set1(float x) { return _mm512_set1_ps(x); }
static inline vf vf_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void vf_store(float *p, vf v) { _mm512_storeu_ps(p, v); }
/* the first n (< VF_N) lanes from p, the others `fill` */
static inline vf vf_load_part(const float *p, int n, float fill)
{
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), (__mmask16)((1u << n) - 1), p);
}
static inline void vf_store_part(float *p, vf v, int n) { _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1), v); }
static inline vf vf_add(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
/* -a, flipping the sign bit (of zeros and nans too), as C negation does */
static inline vf vf_neg(vf a) { return _mm512_xor_ps(a, _mm512_set1_ps(-0.0f)); }
static inline vf vf_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static inline vf vf_fmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline vf vf_max(vf a, vf b) { return _mm512_max_ps(a, b); }
static inline vf vf_min(vf a, vf b) { return _mm512_min_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm512_div_ps(a, b); }
static inline vf vf_sqrt(vf a) { return _mm512_sqrt_ps(a); }
/* torch.maximum: a nan in either operand gives nan */
static inline vf vf_max_nan(vf a, vf b) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), _mm512_max_ps(a, b), a); }
/* SLEEF's expf, each lane below TJ_SLEEF_EXPF_ZERO_BELOW fed 0 and given +0 (sleef_limits.h) */
static inline vf vf_exp(vf x)
{
    __mmask16 zero = _mm512_cmp_ps_mask(x, _mm512_set1_ps(TJ_SLEEF_EXPF_ZERO_BELOW), _CMP_LT_OQ);
    if (!zero) return Sleef_expf16_u10avx512f(x);
    return _mm512_maskz_mov_ps((__mmask16)~zero, Sleef_expf16_u10avx512f(_mm512_maskz_mov_ps((__mmask16)~zero, x)));
}
static inline float vf_hsum(vf v) { return _mm512_reduce_add_ps(v); }
static inline float vf_hmax(vf v) { return _mm512_reduce_max_ps(v); }
static inline float vf_hmin(vf v) { return _mm512_reduce_min_ps(v); }
/* r[i][j] <- r[j][i] over VF_N rows of VF_N floats */
static inline void vf_transpose(vf r[VF_N]) { tj_k_transpose16(r); }

static inline vd vd_zero(void) { return _mm512_setzero_pd(); }
static inline vd vd_lo(vf v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
static inline vd vd_hi(vf v) { return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))); }
static inline vd vd_add(vd a, vd b) { return _mm512_add_pd(a, b); }
static inline vd vd_fmadd(vd a, vd b, vd c) { return _mm512_fmadd_pd(a, b, c); }
static inline double vd_hsum(vd v) { return _mm512_reduce_add_pd(v); }
static inline void vd_store(double *p, vd v) { _mm512_storeu_pd(p, v); }

#elif defined(__AVX2__)

#define TJ_ISA(name) name##_avx2
#define VF_N 8
typedef __m256 vf;
typedef __m256d vd;

static inline __m256i vf_mask(int n) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)); }
static inline vf vf_set1(float x) { return _mm256_set1_ps(x); }
static inline vf vf_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void vf_store(float *p, vf v) { _mm256_storeu_ps(p, v); }
static inline vf vf_load_part(const float *p, int n, float fill)
{
    __m256i m = vf_mask(n);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
}
static inline void vf_store_part(float *p, vf v, int n) { _mm256_maskstore_ps(p, vf_mask(n), v); }
static inline vf vf_add(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf vf_neg(vf a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
static inline vf vf_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf vf_fmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf vf_max(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf vf_min(vf a, vf b) { return _mm256_min_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm256_div_ps(a, b); }
static inline vf vf_sqrt(vf a) { return _mm256_sqrt_ps(a); }
static inline vf vf_max_nan(vf a, vf b) { return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q)); }
static inline vf vf_exp(vf x)
{
    __m256 zero = _mm256_cmp_ps(x, _mm256_set1_ps(TJ_SLEEF_EXPF_ZERO_BELOW), _CMP_LT_OQ);
    if (!_mm256_movemask_ps(zero)) return Sleef_expf8_u10avx2(x);
    return _mm256_andnot_ps(zero, Sleef_expf8_u10avx2(_mm256_andnot_ps(zero, x)));
}
static inline float vf_hsum(vf v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
static inline float vf_hmax(vf v)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
}
static inline float vf_hmin(vf v)
{
    __m128 s = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_min_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_min_ss(s, _mm_movehdup_ps(s)));
}

/* r[i][j] <- r[j][i]: pairs of floats, pairs of doubles, then 128-bit lanes. */
static inline void vf_transpose(vf r[VF_N])
{
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int g = 0; g < 2; g++) {
        __m256d lo = _mm256_castps_pd(t[4 * g]), hi = _mm256_castps_pd(t[4 * g + 1]);
        __m256d lo2 = _mm256_castps_pd(t[4 * g + 2]), hi2 = _mm256_castps_pd(t[4 * g + 3]);
        u[4 * g] = _mm256_castpd_ps(_mm256_unpacklo_pd(lo, lo2));
        u[4 * g + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(lo, lo2));
        u[4 * g + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(hi, hi2));
        u[4 * g + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(hi, hi2));
    }
    for (int c = 0; c < 4; c++) {
        r[c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x20);
        r[4 + c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x31);
    }
}

static inline vd vd_zero(void) { return _mm256_setzero_pd(); }
static inline vd vd_lo(vf v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
static inline vd vd_hi(vf v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }
static inline vd vd_add(vd a, vd b) { return _mm256_add_pd(a, b); }
static inline vd vd_fmadd(vd a, vd b, vd c) { return _mm256_fmadd_pd(a, b, c); }
static inline void vd_store(double *p, vd v) { _mm256_storeu_pd(p, v); }
static inline double vd_hsum(vd v)
{
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

#else
#error "simd_rows.h needs -mavx512f or -mavx2 -mfma"
#endif

#endif
