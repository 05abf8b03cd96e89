/* Helpers for float32 function kernels over simd_rows.h vectors (exp_isa.h,
 * gelu_isa.h, gelu_tanh_isa.h): int32 lanes, the other fused multiplies,
 * rounding, 2^n scaling, lane tests, look-ups in tables held in registers
 * and piecewise polynomials over them, plus the constants of the ln 2 range
 * reduction. Include only from a translation unit built for one ISA.
 *
 * vi: VF_N int32 lanes. */
#ifndef TJIT_KERNELS_SIMD_MATH_H
#define TJIT_KERNELS_SIMD_MATH_H

#include <stdbool.h>

#include "simd_rows.h"

#define LOG2E 1.44269504088896341f
/* ln 2 = LN2_HI + LN2_LO; LN2_HI has 9 significant bits, so n LN2_HI is exact */
#define LN2_HI 0.693359375f
#define LN2_LO -2.12194440e-4f

#if defined(__AVX512F__)

typedef __m512i vi;

static inline vf vf_abs(vf x) { return _mm512_abs_ps(x); }
/* -|x|: x with the sign bit set (a zero becomes -0) */
static inline vf vf_negative(vf x) { return _mm512_or_ps(x, _mm512_set1_ps(-0.0f)); }
static inline vf vf_fmsub(vf a, vf b, vf c) { return _mm512_fmsub_ps(a, b, c); }
static inline vf vf_fnmadd(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); }
static inline vf vf_fnmsub(vf a, vf b, vf c) { return _mm512_fnmsub_ps(a, b, c); }
/* to the nearest integer, ties to even */
static inline vf vf_round(vf x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vi vi_trunc(vf x) { return _mm512_cvttps_epi32(x); }
static inline vf vf_from_vi(vi k) { return _mm512_cvtepi32_ps(k); }
/* the bits of x shifted right by s */
static inline vi vi_bits_shr(vf x, int s) { return _mm512_srli_epi32(_mm512_castps_si512(x), s); }
/* v 2^n, n integral (in [-252, 254] for the AVX2 version); a subnormal
 * result rounded once */
static inline vf vf_scale_pow2(vf v, vf n) { return _mm512_scalef_ps(v, n); }
/* a < limit in every lane (nan is not) */
static inline bool vf_all_below(vf a, float limit)
{
    return _mm512_cmp_ps_mask(a, _mm512_set1_ps(limit), _CMP_LT_OQ) == 0xffff;
}
/* lanes of a below limit (nan is not) from `below`, the others from `other` */
static inline vf vf_select_below(vf a, float limit, vf below, vf other)
{
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(limit), _CMP_LT_OQ), other, below);
}
/* t[k]: t the two vectors of a 2 VF_N = 32-entry table, k's low 5 bits */
static inline vf vf_lookup2(const vf *t, vi k) { return _mm512_permutex2var_ps(t[0], k, t[1]); }
/* k = trunc(a scale) and w = a scale - k - 1/2 for 0 <= a scale < 2^22 and
 * scale a power of 2 (a scale exact), without the AVX2 version's two
 * conversions: a scale + 2^23 rounded down is 2^23 + k (k in its low bits),
 * and one fused multiply rounds the exact a scale - (k + 1/2) once, as the
 * AVX2 version's last subtraction does: the same k and w. Other lanes get
 * values not meant to be used. */
static inline vi vf_pieces_interval(float scale, vf a, vf *w)
{
    vf f = _mm512_fmadd_round_ps(a, vf_set1(scale), vf_set1(0x1p23f), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    *w = vf_fmsub(a, vf_set1(scale), vf_sub(f, vf_set1(0x1p23f - 0.5f)));
    return _mm512_castps_si512(f);
}

#else /* AVX2 */

typedef __m256i vi;

static inline vf vf_abs(vf x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
static inline vf vf_negative(vf x) { return _mm256_or_ps(x, _mm256_set1_ps(-0.0f)); }
static inline vf vf_fmsub(vf a, vf b, vf c) { return _mm256_fmsub_ps(a, b, c); }
static inline vf vf_fnmadd(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }
static inline vf vf_fnmsub(vf a, vf b, vf c) { return _mm256_fnmsub_ps(a, b, c); }
static inline vf vf_round(vf x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vi vi_trunc(vf x) { return _mm256_cvttps_epi32(x); }
static inline vf vf_from_vi(vi k) { return _mm256_cvtepi32_ps(k); }
static inline vi vi_bits_shr(vf x, int s) { return _mm256_srli_epi32(_mm256_castps_si256(x), s); }
/* v 2^n in two normal factors (n in [-252, 254]): exact, then rounded once */
static inline vf vf_scale_pow2(vf v, vf n)
{
    __m256i k = _mm256_cvtps_epi32(n), k1 = _mm256_srai_epi32(k, 1), bias = _mm256_set1_epi32(127);
    vf f1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
    vf f2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(k, k1), bias), 23));
    return vf_mul(vf_mul(v, f1), f2);
}
static inline bool vf_all_below(vf a, float limit)
{
    return _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(limit), _CMP_LT_OQ)) == 0xff;
}
static inline vf vf_select_below(vf a, float limit, vf below, vf other)
{
    return _mm256_blendv_ps(other, below, _mm256_cmp_ps(a, _mm256_set1_ps(limit), _CMP_LT_OQ));
}
/* t[k]: t the two halves of a 2 VF_N = 16-entry table, k's low 4 bits; bit
 * 3, moved to the sign bit, picks the upper half */
static inline vf vf_lookup2(const vf *t, vi k)
{
    return _mm256_blendv_ps(_mm256_permutevar8x32_ps(t[0], k), _mm256_permutevar8x32_ps(t[1], k),
                            _mm256_castsi256_ps(_mm256_slli_epi32(k, 28)));
}
/* k = trunc(a scale) and w = a scale - k - 1/2 (exact when a scale is) */
static inline vi vf_pieces_interval(float scale, vf a, vf *w)
{
    vf s = vf_mul(a, vf_set1(scale));
    vi k = vi_trunc(s);
    *w = vf_sub(vf_sub(s, vf_from_vi(k)), vf_set1(0.5f));
    return k;
}

#endif

/* Piecewise polynomials in registers, one interval per entry of 2 VF_N-entry
 * tables: t[j] holds the two vectors of coefficient table j, C1 .. C(degree)
 * and then C0, C0LO (the constant term as a sum of two floats). */
static inline void vf_pieces_load(vf (*t)[2], const float *const *tables, int degree)
{
    for (int j = 0; j < degree + 2; j++)
        for (int h = 0; h < 2; h++) t[j][h] = vf_load(tables[j] + h * VF_N);
}

/* The polynomial of a >= 0's interval k = trunc(a scale) (< 2 VF_N; scale
 * a power of 2) at w = a scale - k - 1/2, the position from the interval's
 * middle (exact, in [-1/2, 1/2)): returns C0[k], and *rest = C0LO[k] +
 * w (C1[k] + C2[k] w + ...). */
static inline vf vf_pieces_eval(const vf (*t)[2], int degree, float scale, vf a, vf *rest)
{
    vf w;
    vi k = vf_pieces_interval(scale, a, &w);
    vf p = vf_lookup2(t[degree - 1], k);
#pragma GCC unroll 8
    for (int j = degree - 2; j >= 0; j--) p = vf_fmadd(p, w, vf_lookup2(t[j], k));
    *rest = vf_fmadd(w, p, vf_lookup2(t[degree + 1], k));
    return vf_lookup2(t[degree], k);
}

#endif
