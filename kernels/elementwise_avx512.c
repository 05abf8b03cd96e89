/* AVX-512 instantiation of the float loops (built with -mavx512f ...;
 * SLEEF declares its AVX-512 functions only in such a translation unit). */
#include <immintrin.h>
#include <math.h>
#include <sleef.h>
#include <string.h>

#include "elementwise_isa.h"
#include "gelu.h"
#include "gelu_tanh.h"
#include "tanh.h"

/* C's fmod, lane by lane and bit for bit (fmod is exact; SLEEF 3.5's fmod
 * is not: it returns nan once |x / y| overflows). For finite x and a finite
 * non-zero y with q = trunc(|x| / |y|) < 2^23, q is the quotient or, where
 * the division rounded up to an integer, one more; fma(-q, |y|, |x|) is then
 * exact (the remainder, or the remainder minus |y|: a multiple of the
 * smaller ulp of x and y below |y|), |y| is added back where it is negative
 * and x's sign set, as C's fmod keeps it (-0 included). The other lanes
 * (nan, infinities, a zero divisor, larger quotients) go to C's fmod. */
static inline __m512 fmod_f32x16(__m512 x, __m512 y)
{
    __m512 ax = _mm512_abs_ps(x), ay = _mm512_abs_ps(y);
    __m512 q = _mm512_roundscale_ps(_mm512_div_ps(ax, ay), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(q, ay, ax);
    r = _mm512_mask_add_ps(r, _mm512_cmp_ps_mask(r, _mm512_setzero_ps(), _CMP_LT_OQ), r, ay);
    r = _mm512_or_ps(r, _mm512_and_ps(x, _mm512_set1_ps(-0.0f)));
    __mmask16 ok = _mm512_cmp_ps_mask(q, _mm512_set1_ps(0x1p23f), _CMP_LT_OQ) &
                   _mm512_cmp_ps_mask(ay, _mm512_set1_ps(INFINITY), _CMP_LT_OQ);
    if (ok == 0xffff) return r;
    float xs[16], ys[16], rs[16];
    _mm512_storeu_ps(xs, x);
    _mm512_storeu_ps(ys, y);
    _mm512_storeu_ps(rs, r);
    for (int j = 0; j < 16; j++)
        if (!(ok >> j & 1)) rs[j] = fmodf(xs[j], ys[j]);
    return _mm512_loadu_ps(rs);
}

/* C's fmod, lane by lane and bit for bit (fmod is exact; SLEEF 3.5's fmod
 * is not: it returns nan once |x / y| overflows). For finite x and a finite
 * non-zero y with q = trunc(|x| / |y|) < 2^52, q is the quotient or, where
 * the division rounded up to an integer, one more; fma(-q, |y|, |x|) is then
 * exact (the remainder, or the remainder minus |y|: a multiple of the
 * smaller ulp of x and y below |y|), |y| is added back where it is negative
 * and x's sign set, as C's fmod keeps it (-0 included). The other lanes
 * (nan, infinities, a zero divisor, larger quotients) go to C's fmod. */
static inline __m512d fmod_f64x8(__m512d x, __m512d y)
{
    __m512d ax = _mm512_abs_pd(x), ay = _mm512_abs_pd(y);
    __m512d q = _mm512_roundscale_pd(_mm512_div_pd(ax, ay), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m512d r = _mm512_fnmadd_pd(q, ay, ax);
    r = _mm512_mask_add_pd(r, _mm512_cmp_pd_mask(r, _mm512_setzero_pd(), _CMP_LT_OQ), r, ay);
    r = _mm512_or_pd(r, _mm512_and_pd(x, _mm512_set1_pd(-0.0)));
    __mmask8 ok = _mm512_cmp_pd_mask(q, _mm512_set1_pd(0x1p52), _CMP_LT_OQ) &
                  _mm512_cmp_pd_mask(ay, _mm512_set1_pd(INFINITY), _CMP_LT_OQ);
    if (ok == 0xff) return r;
    double xs[8], ys[8], rs[8];
    _mm512_storeu_pd(xs, x);
    _mm512_storeu_pd(ys, y);
    _mm512_storeu_pd(rs, r);
    for (int j = 0; j < 8; j++)
        if (!(ok >> j & 1)) rs[j] = fmod(xs[j], ys[j]);
    return _mm512_loadu_pd(rs);
}

#define T float
#define GELU_LOOP tj_k_gelu_f32_avx512
#define GELU_TANH_LOOP tj_k_gelu_tanh_f32_avx512
#define GELU_TANH_BACKWARD_LOOP tj_k_gelu_tanh_backward_f32_avx512
#define TANH_LOOP tj_k_tanh_f32_avx512
#define V __m512
#define W 16
#define FNS fns_f32
#define SFX(name) name##_f32
#define SLEEF(fn) Sleef_##fn##f16_u10avx512f
#define VFMOD(a, b) fmod_f32x16(a, b)
#define LOADU(p) _mm512_loadu_ps(p)
#define STOREU(p, v) _mm512_storeu_ps(p, v)
#define SPLAT(x) _mm512_set1_ps(x)
#define VSQRT(v) _mm512_sqrt_ps(v)
#define VABS(v) _mm512_abs_ps(v)
#define VMAX(a, b) _mm512_max_ps(a, b)
#define VMIN(a, b) _mm512_min_ps(a, b)
#define VISNAN(a) _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q)
#define VMASK __mmask16
#define VCMP_EQ(a, b) _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ)
#define VCMP_GT(a, b) _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ)
#define VCMP_GE(a, b) _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ)
#define VMASK_AND(a, b) ((__mmask16)((a) & (b)))
#define VMASK_XOR(a, b) ((__mmask16)((a) ^ (b)))
#define VBLEND(m, a, b) _mm512_mask_blend_ps(m, b, a)
#define VFLOOR(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define VCEIL(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)
#define VTRUNC(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define VRINT(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#include "elementwise_simd.h"

#define T double
#define V __m512d
#define W 8
#define FNS fns_f64
#define SFX(name) name##_f64
#define SLEEF(fn) Sleef_##fn##d8_u10avx512f
#define VFMOD(a, b) fmod_f64x8(a, b)
#define LOADU(p) _mm512_loadu_pd(p)
#define STOREU(p, v) _mm512_storeu_pd(p, v)
#define SPLAT(x) _mm512_set1_pd(x)
#define VSQRT(v) _mm512_sqrt_pd(v)
#define VABS(v) _mm512_abs_pd(v)
#define VMAX(a, b) _mm512_max_pd(a, b)
#define VMIN(a, b) _mm512_min_pd(a, b)
#define VISNAN(a) _mm512_cmp_pd_mask(a, a, _CMP_UNORD_Q)
#define VMASK __mmask8
#define VCMP_EQ(a, b) _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ)
#define VCMP_GT(a, b) _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ)
#define VCMP_GE(a, b) _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ)
#define VMASK_AND(a, b) ((__mmask8)((a) & (b)))
#define VMASK_XOR(a, b) ((__mmask8)((a) ^ (b)))
#define VBLEND(m, a, b) _mm512_mask_blend_pd(m, b, a)
#define VFLOOR(v) _mm512_roundscale_pd(v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define VCEIL(v) _mm512_roundscale_pd(v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)
#define VTRUNC(v) _mm512_roundscale_pd(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define VRINT(v) _mm512_roundscale_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#include "elementwise_simd.h"

const tj_k_math_isa tj_k_math_avx512 = {"avx512", &fns_f32, &fns_f64};
