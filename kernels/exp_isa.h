/* e^t for t <= 0 on simd_rows.h vectors, shared by the float32 softmax
 * (softmax_isa.h) and attention (attention_avx512.c) kernels. Include only
 * from a translation unit built for one ISA, after simd_rows.h. */
#ifndef TJIT_KERNELS_EXP_ISA_H
#define TJIT_KERNELS_EXP_ISA_H

#include "gelu_tables.h"
#include "simd_rows.h"

#define EXP_LOG2E 1.44269504088896341f
#define EXP_LN2_HI 0.693359375f /* 9 significant bits: n EXP_LN2_HI is exact */
#define EXP_LN2_LO -2.12194440e-4f

/* e^t for t <= 0 (or nan, kept), about 1 ulp, cheaper than SLEEF's general
 * expf: t = n ln2 + r with |r| <= ln2/2, e^r = 1 + r P(r) by GELU_EXP (the
 * exp polynomial of the gelu kernel, relative error 4e-9), times 2^n
 * (results below FLT_MIN rounded once; t < -110 gives 0). */
static inline vf exp_nonpositive(vf t)
{
    t = vf_max(vf_set1(-110.0f), t); /* maxps keeps its second operand's nan */
#if defined(__AVX512F__)
    vf n = _mm512_roundscale_ps(vf_mul(t, vf_set1(EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    vf r = _mm512_fnmadd_ps(n, vf_set1(EXP_LN2_LO), _mm512_fnmadd_ps(n, vf_set1(EXP_LN2_HI), t));
#else
    vf n = _mm256_round_ps(vf_mul(t, vf_set1(EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    vf r = _mm256_fnmadd_ps(n, vf_set1(EXP_LN2_LO), _mm256_fnmadd_ps(n, vf_set1(EXP_LN2_HI), t));
#endif
    vf p = vf_set1(GELU_EXP[5]);
    for (int j = 4; j >= 0; j--) p = vf_fmadd(p, r, vf_set1(GELU_EXP[j]));
    p = vf_fmadd(r, p, vf_set1(1.0f));
#if defined(__AVX512F__)
    return _mm512_scalef_ps(p, n);
#else
    /* 2^n in two normal factors (n >= -159): exact, then rounded once */
    __m256i k = _mm256_cvtps_epi32(n), k1 = _mm256_srai_epi32(k, 1), bias = _mm256_set1_epi32(127);
    vf f1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
    vf f2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(k, k1), bias), 23));
    return vf_mul(vf_mul(p, f1), f2);
#endif
}

#endif
