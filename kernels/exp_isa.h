/* e^t for t <= 0 on simd_rows.h vectors, shared by the float32 softmax
 * (softmax_isa.h) and attention (attention_avx512.c) kernels, and the
 * reduced-argument exponential e^r under it (also gelu_tanh_isa.h's).
 * Include only from a translation unit built for one ISA, after
 * simd_rows.h. */
#ifndef TJIT_KERNELS_EXP_ISA_H
#define TJIT_KERNELS_EXP_ISA_H

#include "gelu_tables.h"
#include "simd_math.h"

/* Up to this many vectors go through the _k forms below together. */
#define EXP_K_MAX 4

/* e^r = 1 + r P(r) for |r| <= ln2/2 by GELU_EXP (the exp polynomial of the
 * gelu kernel, relative error 4e-9), in place in each of r[0, k): the
 * same steps on each vector, taken across them one step at a time, so
 * that k independent latency chains run side by side (always inlined:
 * with k constant the loops unroll and the arrays stay in registers). */
static inline __attribute__((always_inline)) void exp_reduced_k(vf *r, int k)
{
    vf p[EXP_K_MAX];
#pragma GCC unroll 4
    for (int v = 0; v < k; v++) p[v] = vf_set1(GELU_EXP[5]);
#pragma GCC unroll 8
    for (int j = 4; j >= 0; j--)
#pragma GCC unroll 4
        for (int v = 0; v < k; v++) p[v] = vf_fmadd(p[v], r[v], vf_set1(GELU_EXP[j]));
#pragma GCC unroll 4
    for (int v = 0; v < k; v++) r[v] = vf_fmadd(r[v], p[v], vf_set1(1.0f));
}

static inline vf exp_reduced(vf r)
{
    exp_reduced_k(&r, 1);
    return r;
}

/* e^t for t <= 0 (or nan, kept), about 1 ulp, cheaper than SLEEF's general
 * expf: t = n ln2 + r with |r| <= ln2/2, e^r by exp_reduced_k, times 2^n
 * (results below FLT_MIN rounded once). From n <= -151 on (t < -104.3, a
 * causal mask's -inf) that product, below 1.5 * 2^-151, rounds to +0 in
 * round-to-nearest: given as +0 without the scaling, whose underflow an
 * Intel CPU runs as a microcode assist (sleef_limits.h). In place in each
 * of t[0, k), k <= EXP_K_MAX, step by step across them as exp_reduced_k. */
static inline __attribute__((always_inline)) void exp_nonpositive_k(vf *t, int k)
{
    vf n[EXP_K_MAX], r[EXP_K_MAX];
#pragma GCC unroll 4
    for (int v = 0; v < k; v++) {
        t[v] = vf_max(vf_set1(-110.0f), t[v]); /* maxps keeps its second operand's nan */
        n[v] = vf_round(vf_mul(t[v], vf_set1(LOG2E)));
    }
#pragma GCC unroll 4
    for (int v = 0; v < k; v++) r[v] = vf_fnmadd(n[v], vf_set1(LN2_LO), vf_fnmadd(n[v], vf_set1(LN2_HI), t[v]));
    exp_reduced_k(r, k);
#pragma GCC unroll 4
    for (int v = 0; v < k; v++) { /* n >= -159: two normal factors for AVX2 */
        vf n_scaled = vf_select_below(n[v], -150.5f, vf_set1(0.0f), n[v]);
        t[v] = vf_select_below(n[v], -150.5f, vf_set1(0.0f), vf_scale_pow2(r[v], n_scaled));
    }
}

static inline vf exp_nonpositive(vf t)
{
    exp_nonpositive_k(&t, 1);
    return t;
}

#endif
