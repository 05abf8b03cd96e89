/* float32 tanh-approximation GELU and its backward (see gelu_tanh.h),
 * written once and compiled per ISA by gelu_tanh_avx512.c /
 * gelu_tanh_avx2.c on simd_rows.h vectors with simd_math.h's helpers; the
 * first part holds the few other instructions that differ. */
#include "exp_isa.h"
#include "gelu_tanh.h"
#include "gelu_tanh_tables.h"
#include "simd_math.h"

/* Every lane below: the polynomial path. */
#define FAST_LIMIT 4.0f

/* 2|u| = a (C1 + C3 a^2), a = |x|: C1 = 2 sqrt(2/pi) = C1_HI + C1_LO with
 * C1_HI a multiple of 2^-20 (so that C1_HI - q is exact for q < 16), and
 * C3 = 0.044715 C1 = C3_HI + C3_LO. */
#define C1_HI 1.595768929e+00f
#define C1_LO 1.930778950e-07f
#define C3_HI 7.135481387e-02f
#define C3_LO 2.398832466e-09f
/* a is clamped here: 2|u| > 112, so e^(-2|u|) and everything it scales
 * round to 0 (and 2^n stays within two normal factors for AVX2) */
#define A_MAX 11.0f

#if defined(__AVX512F__)

#define FAST_DEGREE 5
#define FAST_SCALE 8.0f /* intervals per unit of |x| */
#define FAST_TABLE(name) GELU_TANH_FAST32_##name
#define FAST_COEFFS FAST_TABLE(C1), FAST_TABLE(C2), FAST_TABLE(C3), FAST_TABLE(C4), FAST_TABLE(C5)

typedef __mmask16 vmask;
/* x < 0 (-0 and nan are not) */
static inline vmask negative(vf x) { return _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ); }
static inline vf v_select(vmask m, vf a, vf b) { return _mm512_mask_blend_ps(m, b, a); }

#else /* AVX2 */

#define FAST_DEGREE 6
#define FAST_SCALE 4.0f
#define FAST_TABLE(name) GELU_TANH_FAST16_##name
#define FAST_COEFFS FAST_TABLE(C1), FAST_TABLE(C2), FAST_TABLE(C3), FAST_TABLE(C4), FAST_TABLE(C5), FAST_TABLE(C6)

typedef __m256 vmask;
static inline vmask negative(vf x) { return _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ); }
static inline vf v_select(vmask m, vf a, vf b) { return _mm256_blendv_ps(b, a, m); }

#endif

/* The tables in registers (or at least in one place on the stack):
 * vf_pieces tables C1 .. C(degree), C0, C0LO. */
typedef struct fast_regs {
    vf c[FAST_DEGREE + 2][2];
} fast_regs;

static void load_regs(fast_regs *r)
{
    static const float *const t[FAST_DEGREE + 2] = {FAST_COEFFS, FAST_TABLE(C0), FAST_TABLE(C0LO)};
    vf_pieces_load(r->c, t, FAST_DEGREE);
}

/* |x| < FAST_LIMIT in every lane: Q = sigmoid(-2|u|) = e / (1 + e) as
 * C0 + rest by the interval's polynomial (vf_pieces_eval). */
static inline vf fast_q(vf a, const fast_regs *r, vf *rest)
{
    return vf_pieces_eval(r->c, FAST_DEGREE, FAST_SCALE, a, rest);
}

/* y = x Q for x < 0, x - a Q for x >= 0: -(a Q) with a C0 exact in two
 * floats, and x - a Q, each rounded once */
static inline vf gelu_tanh_fast(vf x, vf a, const fast_regs *r)
{
    vf rest, c0 = fast_q(a, r, &rest);
    vf hi = vf_mul(a, c0);
    vf neg = vf_fnmsub(vf_fmadd(a, rest, vf_fmsub(a, c0, hi)), vf_set1(1.0f), hi); /* -lo - hi: -0 for 0 */
    return v_select(negative(x), neg, vf_fnmadd(a, vf_add(c0, rest), x));
}

/* dy (s + x Q (1 - Q) P), s = Q for x < 0 and 1 - Q for x >= 0,
 * P = 2u'(x) = C1 + 3 C3 x^2 */
static inline vf gelu_tanh_backward_fast(vf dy, vf x, vf a, const fast_regs *r)
{
    vf rest, c0 = fast_q(a, r, &rest);
    vf q = vf_add(c0, rest), q1 = vf_sub(vf_sub(vf_set1(1.0f), c0), rest);
    vf p = vf_fmadd(vf_set1(3.0f * C3_HI), vf_mul(a, a), vf_set1(C1_HI + C1_LO));
    return vf_mul(dy, vf_fmadd(x, vf_mul(vf_mul(q, q1), p), v_select(negative(x), q, q1)));
}

/* e^(-2|u|) = p 2^n for the lanes of x (nan for nan), e itself (see the
 * end), and a^2 of a = |x| clamped to A_MAX. 2|u| = a q + a qe:
 * q = C1_HI + C3_HI a^2 rounded, qe the rest (q's rounding, a^2's rounding,
 * the constants' low parts). */
typedef struct exp_parts {
    vf p, n, e, a2;
} exp_parts;

static inline exp_parts exp_minus_2u(vf x)
{
    vf a = vf_min(vf_set1(A_MAX), vf_abs(x)); /* minps returns its second operand's nan */
    vf a2 = vf_mul(a, a);
    vf q = vf_fmadd(vf_set1(C3_HI), a2, vf_set1(C1_HI));
    vf qe = vf_fmadd(vf_set1(C3_HI), a2, vf_sub(vf_set1(C1_HI), q));
    qe = vf_fmadd(vf_set1(C3_HI), vf_fmsub(a, a, a2), qe);
    qe = vf_add(qe, vf_fmadd(vf_set1(C3_LO), a2, vf_set1(C1_LO)));
    /* -2|u| = n ln2 + r, |r| <= ln2/2 (plus the corrections): a q is used
     * unrounded inside the fma, n LN2_HI is exact */
    vf n = vf_round(vf_mul(vf_mul(a, q), vf_set1(-LOG2E)));
    vf r = vf_fnmsub(a, q, vf_mul(n, vf_set1(LN2_HI)));
    r = vf_fnmadd(n, vf_set1(LN2_LO), vf_fnmadd(a, qe, r));
    vf p = exp_reduced(r);
    /* e feeds only 1 + e and the x >= 0 lanes (x e r P with x <= A_MAX in
     * the backward), where anything below 2^-100 is as good as 0: kept
     * normal (a multiply by a subnormal is slow) */
    return (exp_parts){.p = p, .n = n, .e = vf_scale_pow2(p, vf_max(n, vf_set1(-100.0f))), .a2 = a2};
}

/* Any lane: x / (1 + e), or for x < 0 x e / (1 + e) = (x p / (1 + e)) 2^n,
 * scaled last so that a subnormal e costs no precision. x < 0 is clamped
 * like a (the result is -0 from x = -A_MAX) and -inf gets a nan from x - x,
 * as PyTorch's -inf * 0. */
static inline vf gelu_tanh_general(vf x)
{
    exp_parts t = exp_minus_2u(x);
    vmask neg = negative(x);
    vf xp = vf_fmadd(vf_max(x, vf_set1(-A_MAX)), t.p, vf_sub(x, x));
    vf y = vf_div(v_select(neg, xp, x), vf_add(t.e, vf_set1(1.0f)));
    return vf_scale_pow2(y, v_select(neg, t.n, vf_set1(0.0f)));
}

/* Any lane: dy (s + x s (1 - s) P), s = sigmoid(2u), P = 2u'(x) =
 * C1 + 3 C3 a^2, with r = 1/(1 + e): s = r and s (1 - s) = e r^2 for x >= 0; for x < 0
 * s = e r = p r 2^n and s (1 - s) = p r^2 2^n, the 2^n applied last as in
 * the forward. x is clamped to +-A_MAX (the x s (1 - s) P term is far below
 * an ulp of s from there); +-inf give x - x = nan, as PyTorch. */
static inline vf gelu_tanh_backward_general(vf dy, vf x)
{
    exp_parts t = exp_minus_2u(x);
    vmask neg = negative(x);
    vf r = vf_div(vf_set1(1.0f), vf_add(t.e, vf_set1(1.0f)));
    vf m = v_select(neg, t.p, vf_set1(1.0f)), k = v_select(neg, t.p, t.e);
    vf p = vf_fmadd(vf_set1(3.0f * C3_HI), t.a2, vf_set1(C1_HI + C1_LO));
    vf xc = vf_min(vf_set1(A_MAX), vf_max(x, vf_set1(-A_MAX))); /* nan: from x - x */
    vf h = vf_fmadd(xc, vf_mul(vf_mul(k, r), vf_mul(r, p)), vf_fmadd(m, r, vf_sub(x, x)));
    /* 2^n last (a multiply with a subnormal result is slow, scalef is not);
     * |h| < 2^9 and 2^-10 before dy keeps dy h finite */
    vf hs = vf_mul(h, v_select(neg, vf_set1(0x1p-10f), vf_set1(1.0f)));
    return vf_scale_pow2(vf_mul(dy, hs), v_select(neg, vf_add(t.n, vf_set1(10.0f)), vf_set1(0.0f)));
}

static inline vf gelu_tanh_vec(vf x, const fast_regs *r)
{
    vf a = vf_abs(x);
    vf fast = gelu_tanh_fast(x, a, r);
    /* each lane from its own path, whatever its neighbours (see gelu_isa.h) */
    return vf_all_below(a, FAST_LIMIT) ? fast : vf_select_below(a, FAST_LIMIT, fast, gelu_tanh_general(x));
}

static inline vf gelu_tanh_backward_vec(vf dy, vf x, const fast_regs *r)
{
    vf a = vf_abs(x);
    vf fast = gelu_tanh_backward_fast(dy, x, a, r);
    return vf_all_below(a, FAST_LIMIT) ? fast : vf_select_below(a, FAST_LIMIT, fast, gelu_tanh_backward_general(dy, x));
}

void TJ_ISA(tj_k_gelu_tanh_f32)(int64_t n, void *out, const void *in)
{
    const float *x = in;
    float *y = out;
    fast_regs r;
    load_regs(&r);
    int64_t i = 0;
    for (; i + VF_N <= n; i += VF_N) vf_store(y + i, gelu_tanh_vec(vf_load(x + i), &r));
    if (i < n) vf_store_part(y + i, gelu_tanh_vec(vf_load_part(x + i, (int)(n - i), 0.0f), &r), (int)(n - i));
}

void TJ_ISA(tj_k_gelu_tanh_backward_f32)(int64_t n, void *out, const void *dy, const void *x)
{
    const float *g = dy, *v = x;
    float *o = out;
    fast_regs r;
    load_regs(&r);
    int64_t i = 0;
    for (; i + VF_N <= n; i += VF_N) vf_store(o + i, gelu_tanh_backward_vec(vf_load(g + i), vf_load(v + i), &r));
    if (i < n) {
        int m = (int)(n - i);
        vf_store_part(o + i, gelu_tanh_backward_vec(vf_load_part(g + i, m, 0.0f), vf_load_part(v + i, m, 0.0f), &r), m);
    }
}
