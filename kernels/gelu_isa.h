/* float32 exact GELU (see gelu.h), written once and compiled per ISA by
 * gelu_avx512.c / gelu_avx2.c. The few instructions that differ are
 * simd_math.h's helpers and those of the first part (the g look-up, 2^n
 * scaling of normal results, lane selection); the algorithm below them is
 * shared. */
#include <float.h>

#include "gelu.h"
#include "gelu_tables.h"
#include "simd_math.h"

/* Every lane below: the polynomial path. */
#define FAST_LIMIT 4.0f
/* |x| is clamped here: beyond it x - x q rounds to x and x q to -0. */
#define LIMIT 14.9f

#if defined(__AVX512F__)

#define FAST_DEGREE 5
#define FAST_SCALE 8.0f /* intervals per unit of |x| */
#define G_PARTS 1       /* vectors per g table: 16 entries */
#define FAST_TABLE(name) GELU_FAST32_##name
#define FAST_COEFFS FAST_TABLE(C1), FAST_TABLE(C2), FAST_TABLE(C3), FAST_TABLE(C4), FAST_TABLE(C5)

static inline vf lookup_g(const vf *t, vi k) { return _mm512_permutexvar_ps(k, t[0]); }
/* v 2^n where only normal results matter (a subnormal one may be 0) */
static inline vf scale_pow2_normal(vf v, vf n) { return _mm512_scalef_ps(v, n); }
/* sign bit of x set (-0 included) ? neg : pos */
static inline vf select_sign(vf x, vf neg, vf pos)
{
    return _mm512_mask_blend_ps(_mm512_movepi32_mask(_mm512_castps_si512(x)), pos, neg);
}
/* y, with nan where x is nan or -inf */
static inline vf nan_for_nan_or_minus_inf(vf x, vf y)
{
    __mmask16 m = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-FLT_MAX), _CMP_NGE_UQ);
    return _mm512_mask_mul_ps(y, m, x, _mm512_setzero_ps());
}

#else /* AVX2 */

#define FAST_DEGREE 6
#define FAST_SCALE 4.0f
#define G_PARTS 2
#define FAST_TABLE(name) GELU_FAST16_##name
#define FAST_COEFFS FAST_TABLE(C1), FAST_TABLE(C2), FAST_TABLE(C3), FAST_TABLE(C4), FAST_TABLE(C5), FAST_TABLE(C6)

static inline vf lookup_g(const vf *t, vi k) { return vf_lookup2(t, k); }
static inline vf pow2i(__m256i n) /* 2^n for n in [-126, 127] */
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
}
/* v 2^max(n, -126): where only normal results matter */
static inline vf scale_pow2_normal(vf v, vf n)
{
    return _mm256_mul_ps(v, pow2i(_mm256_max_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(-126))));
}
static inline vf select_sign(vf x, vf neg, vf pos) { return _mm256_blendv_ps(pos, neg, x); }
static inline vf nan_for_nan_or_minus_inf(vf x, vf y)
{
    vf m = _mm256_cmp_ps(x, _mm256_set1_ps(-FLT_MAX), _CMP_NGE_UQ);
    return _mm256_blendv_ps(y, _mm256_mul_ps(x, _mm256_setzero_ps()), m);
}

#endif

/* The tables in registers (or at least in one place on the stack). */
typedef struct gelu_regs {
    vf fast[FAST_DEGREE + 2][2]; /* vf_pieces tables: C1 .. C(degree), C0, C0LO */
    vf g[8][G_PARTS];            /* centre, C0 .. C6 */
    vf exp[6];
} gelu_regs;

static void load_regs(gelu_regs *r)
{
    static const float *const fast[FAST_DEGREE + 2] = {FAST_COEFFS, FAST_TABLE(C0), FAST_TABLE(C0LO)};
    static const float *const g[8] = {GELU_G_CENTRE, GELU_G_C0, GELU_G_C1, GELU_G_C2,
                                      GELU_G_C3,     GELU_G_C4, GELU_G_C5, GELU_G_C6};
    vf_pieces_load(r->fast, fast, FAST_DEGREE);
    for (int j = 0; j < 8; j++)
        for (int p = 0; p < G_PARTS; p++) r->g[j][p] = vf_load(g[j] + p * VF_N);
    for (int j = 0; j < 6; j++) r->exp[j] = vf_set1(GELU_EXP[j]);
}

/* |x| < FAST_LIMIT in every lane: q = Phi(-a) = C0 + rest by the
 * interval's polynomial (vf_pieces_eval); then x q = -(a q) as a C0
 * (exactly, in two floats) + a rest, and x - a q, each rounded once. The
 * kernel is bound by these operations (one core's share of a 2-thread
 * stream as well), so each one counts: -(a q) is formed negated
 * throughout, without a final sign operation (rounding is symmetric, and
 * the sum is never an exact 0 but for a = 0: -0 as it should be). */
static inline vf gelu_fast(vf x, vf a, const gelu_regs *r)
{
    vf rest, c0 = vf_pieces_eval(r->fast, FAST_DEGREE, FAST_SCALE, a, &rest);
    vf hi = vf_mul(a, c0);
    vf neg = vf_sub(vf_fnmsub(a, rest, vf_fmsub(a, c0, hi)), hi); /* -(a rest + (a c0 - hi)) - hi */
    return select_sign(x, neg, vf_fnmadd(a, vf_add(c0, rest), x));
}

/* Any lane: q = 2^n e^z g(a) with -a^2/2 = n ln2 + z, both results formed
 * from g e^z = C0 + small so that the large part C0 is multiplied exactly. */
static inline vf gelu_general(vf x, const gelu_regs *r)
{
    vf a = vf_min(vf_abs(x), vf_set1(LIMIT)); /* LIMIT for nan too: fixed at the end */
    vf h = vf_mul(a, vf_set1(0.5f));
    vf t = vf_fnmadd(h, a, vf_set1(0.0f)); /* -a^2/2 rounded ... */
    vf et = vf_fnmsub(h, a, t);            /* ... and its rounding error, exactly */
    vf n = vf_round(vf_mul(t, vf_set1(LOG2E)));
    vf z = vf_add(vf_fnmadd(n, vf_set1(LN2_HI), t), vf_fnmadd(n, vf_set1(LN2_LO), et)); /* |z| <= ln2/2 */
    vf pz = r->exp[5];
#pragma GCC unroll 8
    for (int j = 4; j >= 0; j--) pz = vf_fmadd(pz, z, r->exp[j]); /* e^z = 1 + z pz */

    vi k = vi_bits_shr(vf_add(a, vf_set1(1.0f)), 21); /* interval: exponent and 2 bits of a + 1 */
    vf u = vf_sub(a, lookup_g(r->g[0], k));           /* exact: centres are multiples of 2^-10 */
    vf pg = lookup_g(r->g[7], k);
#pragma GCC unroll 8
    for (int j = 6; j >= 2; j--) pg = vf_fmadd(pg, u, lookup_g(r->g[j], k));
    vf c0 = lookup_g(r->g[1], k);
    vf upg = vf_mul(u, pg);
    vf small = vf_fmadd(vf_mul(z, pz), vf_add(c0, upg), upg); /* g e^z - C0 */

    vf hi = vf_mul(a, c0);
    vf neg = vf_negative(vf_scale_pow2(vf_add(vf_fmadd(a, small, vf_fmsub(a, c0, hi)), hi), n)); /* -(a q) */
    vf pos = vf_fnmadd(a, scale_pow2_normal(vf_add(c0, small), n), x); /* a q < ulp(x)/2 from n = -100 */
    return nan_for_nan_or_minus_inf(x, select_sign(x, neg, pos));
}

static inline vf gelu_vec(vf x, const gelu_regs *r)
{
    vf a = vf_abs(x);
    vf fast = gelu_fast(x, a, r);
    /* a vector with some |x| >= FAST_LIMIT: its other lanes keep their
     * polynomial values, so that no result depends on its neighbours (nor on
     * the layout or the thread split) */
    return vf_all_below(a, FAST_LIMIT) ? fast : vf_select_below(a, FAST_LIMIT, fast, gelu_general(x, r));
}

void TJ_ISA(tj_k_gelu_f32)(int64_t n, void *out, const void *in)
{
    const float *x = in;
    float *y = out;
    gelu_regs r;
    load_regs(&r);
    int64_t i = 0;
    for (; i + VF_N <= n; i += VF_N) vf_store(y + i, gelu_vec(vf_load(x + i), &r));
    if (i < n) vf_store_part(y + i, gelu_vec(vf_load_part(x + i, (int)(n - i), 0.0f), &r), (int)(n - i));
}
