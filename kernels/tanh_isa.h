/* float32 tanh (see tanh.h), written once and compiled per ISA by
 * tanh_avx512.c / tanh_avx2.c on simd_rows.h vectors with simd_math.h's
 * helpers; the first part holds the few instructions that differ. */
#include "exp_isa.h"
#include "simd_math.h"
#include "tanh.h"
#include "tanh_tables.h"

/* From here on the result rounds to 1 (tanh(a) > 1 - 2^-25 from a = 9.01):
 * e^(-2a) stays a normal float (2^n within vf_scale_pow2's range) */
#define A_MAX 9.5f

#if defined(__AVX512F__)

/* y with x's sign bit (y's own is 0) */
static inline vf with_sign_of(vf y, vf x) { return _mm512_or_ps(y, _mm512_and_ps(x, _mm512_set1_ps(-0.0f))); }
/* 1 / d within 2^-14 (it scales only a correction of an ulp) */
static inline vf approx_reciprocal(vf d) { return _mm512_rcp14_ps(d); }

#else /* AVX2 */

static inline vf with_sign_of(vf y, vf x) { return _mm256_or_ps(y, _mm256_and_ps(x, _mm256_set1_ps(-0.0f))); }
/* within 1.5 2^-12 */
static inline vf approx_reciprocal(vf d) { return _mm256_rcp_ps(d); }

#endif

/* a in [0, TANH_SMALL_LIMIT): a + a^3 P(a^2), the a^3 P term (at most 13%
 * of the result) added by the one rounding of a fused multiply-add, so a
 * tiny a comes back unchanged */
static inline vf tanh_small(vf a)
{
    vf z = vf_mul(a, a);
    vf p = vf_set1(TANH_SMALL[5]);
#pragma GCC unroll 8
    for (int j = 4; j >= 0; j--) p = vf_fmadd(p, z, vf_set1(TANH_SMALL[j]));
    return vf_fmadd(vf_mul(a, z), p, a);
}

/* Any a >= 0 (or nan, kept): (1 - e) / (1 + e), e = e^(-2a) = e^r 2^n with
 * -2a = n ln2 + r, |r| <= ln2/2 (-2a is exact). y0, the quotient of the
 * rounded 1 - e and 1 + e, is corrected by the residual
 * (1 - e) - y0 (1 + e) = ((1 - y0) - e) - e y0 of the exact e: y0 is in
 * [0.55, 1] and 1 - y0 in [e, 2e], so both subtractions are exact (Sterbenz)
 * and the residual is rounded once; y = y0 + residual / (1 + e) leaves
 * e's own error and the final rounding. */
static inline vf tanh_large(vf a)
{
    vf t = vf_mul(vf_min(vf_set1(A_MAX), a), vf_set1(-2.0f)); /* minps returns its second operand's nan */
    vf n = vf_round(vf_mul(t, vf_set1(LOG2E)));
    vf r = vf_fnmadd(n, vf_set1(LN2_LO), vf_fnmadd(n, vf_set1(LN2_HI), t));
    vf e = vf_scale_pow2(exp_reduced(r), n);
    vf one = vf_set1(1.0f), d = vf_add(one, e);
    vf y0 = vf_div(vf_sub(one, e), d);
    vf res = vf_fnmadd(e, y0, vf_sub(vf_sub(one, y0), e));
    return vf_fmadd(res, approx_reciprocal(d), y0);
}

static inline vf tanh_vec(vf x)
{
    vf a = vf_abs(x);
    vf y = tanh_small(a);
    /* each lane from its own path: a vector with every lane small just
     * skips the other one */
    if (!vf_all_below(a, TANH_SMALL_LIMIT)) y = vf_select_below(a, TANH_SMALL_LIMIT, y, tanh_large(a));
    return with_sign_of(y, x);
}

void TJ_ISA(tj_k_tanh_f32)(int64_t n, void *out, const void *in)
{
    const float *x = in;
    float *y = out;
    int64_t i = 0;
    for (; i + VF_N <= n; i += VF_N) vf_store(y + i, tanh_vec(vf_load(x + i)));
    if (i < n) vf_store_part(y + i, tanh_vec(vf_load_part(x + i, (int)(n - i), 0.0f)), (int)(n - i));
}
