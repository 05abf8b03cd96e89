/* e^t for t <= 0 on simd_rows.h vectors, shared by the float32 softmax
 * (softmax_isa.h) and attention (attention_avx512.c) kernels, and the
 * reduced-argument exponential e^r under it (also gelu_tanh_isa.h's).
 * Include only from a translation unit built for one ISA, after
 * simd_rows.h. */
#ifndef TJIT_KERNELS_EXP_ISA_H
#define TJIT_KERNELS_EXP_ISA_H

#include "gelu_tables.h"
#include "simd_math.h"

/* e^r = 1 + r P(r) for |r| <= ln2/2 by GELU_EXP (the exp polynomial of the
 * gelu kernel, relative error 4e-9) */
static inline vf exp_reduced(vf r)
{
    vf p = vf_set1(GELU_EXP[5]);
#pragma GCC unroll 8
    for (int j = 4; j >= 0; j--) p = vf_fmadd(p, r, vf_set1(GELU_EXP[j]));
    return vf_fmadd(r, p, vf_set1(1.0f));
}

/* e^t for t <= 0 (or nan, kept), about 1 ulp, cheaper than SLEEF's general
 * expf: t = n ln2 + r with |r| <= ln2/2, e^r by exp_reduced, times 2^n
 * (results below FLT_MIN rounded once; t < -110 gives 0). */
static inline vf exp_nonpositive(vf t)
{
    t = vf_max(vf_set1(-110.0f), t); /* maxps keeps its second operand's nan */
    vf n = vf_round(vf_mul(t, vf_set1(LOG2E)));
    vf r = vf_fnmadd(n, vf_set1(LN2_LO), vf_fnmadd(n, vf_set1(LN2_HI), t));
    return vf_scale_pow2(exp_reduced(r), n); /* n >= -159: two normal factors for AVX2 */
}

#endif
