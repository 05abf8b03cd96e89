/* Template body of the vectorised float loops; no include guard on purpose.
 * A per-ISA file includes it once per element type after defining:
 *
 *   T             element type (float / double)
 *   V, W          vector type and its lane count (V = T, W = 1 for scalar code)
 *   FNS           name of the tj_k_math_fns table to define
 *   SFX(name)     makes the element-type-specific name of a static function
 *   SLEEF(fn)     the SLEEF function for `fn` (exp, log, tanh, erf, sin, cos,
 *                 log1p, expm1, pow, asin, acos, atan, atan2, sinh, cosh,
 *                 log2, log10, exp2) at this width, 1.0-ULP variant
 *   VFMOD(a, b)   (optional, scalar code: C's fmod) vector code gets
 *                 SFX(fmod_v) below, which needs:
 *   VFNMADD(a, b, c)  c - a b rounded once, and VMASK_BITS(m) an int with
 *                 bit j set for lane j of the VMASK m
 *   LOADU(p), STOREU(p, v), SPLAT(x), VSQRT(v), VABS(v)
 *   VMAX(a, b)    a > b ? a : b, and b when either is nan (x86 maxps)
 *   VMIN(a, b)    a < b ? a : b, and b when either is nan (x86 minps)
 *   VISNAN(a)     the VMASK of a's nan lanes
 *   VMASK, VCMP_EQ(a, b), VCMP_GT(a, b), VCMP_GE(a, b) (false for nan), VMASK_AND(m1, m2),
 *   VMASK_XOR(m1, m2),
 *   VBLEND(m, a, b) (m ? a : b)
 *   VFLOOR(v), VCEIL(v), VTRUNC(v), VRINT(v) (to nearest, halves to even)
 *   GELU_LOOP     (optional) the exact-gelu loop to use instead of the
 *                 SLEEF-erf formula
 *   GELU_TANH_LOOP, GELU_TANH_BACKWARD_LOOP (optional) the tanh-gelu
 *                 loops to use instead of the SLEEF-exp formula
 *   TANH_LOOP     (optional) the tanh loop to use instead of SLEEF's tanh
 *
 * and undefines them all at its end, so the next instantiation starts clean.
 * Arithmetic uses GCC's vector operators (which also accept a scalar
 * operand), so one expression serves every width. Formulas follow PyTorch
 * 1.13's vectorised CPU kernels, so that float32 results round alike. */

#define CT(x) ((T)(x))

/* out[i] = EXPR(x) over n elements of `a`; a partial last vector goes
 * through a zero-padded stack buffer. */
#define LOOP1(EXPR)                                                            \
    do {                                                                       \
        int64_t i_ = 0;                                                        \
        for (; i_ + W <= n; i_ += W) {                                         \
            V x = LOADU(a + i_);                                               \
            STOREU(o + i_, (EXPR));                                            \
        }                                                                      \
        if (W > 1 && i_ < n) {                                                 \
            T xb_[W] = {0}, ob_[W];                                            \
            for (int64_t j_ = 0; j_ < n - i_; j_++) xb_[j_] = a[i_ + j_];      \
            V x = LOADU(xb_);                                                  \
            STOREU(ob_, (EXPR));                                               \
            for (int64_t j_ = 0; j_ < n - i_; j_++) o[i_ + j_] = ob_[j_];      \
        }                                                                      \
    } while (0)

/* The whole vectors of out[i] = EXPR(x, y) over n elements of `a` and `b`,
 * from i_ on; i_ ends at the first element left over. */
#define LOOP2_VECTORS(EXPR)                                                    \
    for (; i_ + W <= n; i_ += W) {                                             \
        V x = LOADU(a + i_), y = LOADU(b + i_);                                \
        STOREU(o + i_, (EXPR));                                                \
    }

/* out[i] = EXPR(x, y) over n elements of `a` and `b`; a partial last vector
 * goes through zero-padded stack buffers. */
#define LOOP2(EXPR)                                                            \
    do {                                                                       \
        int64_t i_ = 0;                                                        \
        LOOP2_VECTORS(EXPR)                                                    \
        if (W > 1 && i_ < n) {                                                 \
            T xb_[W] = {0}, yb_[W] = {0}, ob_[W];                              \
            for (int64_t j_ = 0; j_ < n - i_; j_++) {                          \
                xb_[j_] = a[i_ + j_];                                          \
                yb_[j_] = b[i_ + j_];                                          \
            }                                                                  \
            V x = LOADU(xb_), y = LOADU(yb_);                                  \
            STOREU(ob_, (EXPR));                                               \
            for (int64_t j_ = 0; j_ < n - i_; j_++) o[i_ + j_] = ob_[j_];      \
        }                                                                      \
    } while (0)

/* LOOP2 for IEEE arithmetic (+, -, *, / with one rounding each), whose
 * scalar and vector forms give the same bits: the tail runs on scalars,
 * which for the one-element operands of a dispatch-bound call costs a few
 * cycles where LOOP2's buffered tail stalls twice on store forwarding (the
 * scalar stores read back as one vector, and back), ~13 ns per call. */
#define LOOP2_ARITH(EXPR)                                                      \
    do {                                                                       \
        int64_t i_ = 0;                                                        \
        LOOP2_VECTORS(EXPR)                                                    \
        for (; i_ < n; i_++) {                                                 \
            T x = a[i_], y = b[i_];                                            \
            o[i_] = (EXPR);                                                    \
        }                                                                      \
    } while (0)

#define UNARY(name, EXPR)                                                      \
    static void SFX(name)(int64_t n, void *out, const void *in)                \
    {                                                                          \
        T *o = out;                                                            \
        const T *a = in;                                                       \
        LOOP1(EXPR);                                                           \
    }

#define BINARY(name, EXPR)                                                     \
    static void SFX(name)(int64_t n, void *out, const void *in0, const void *in1) \
    {                                                                          \
        T *o = out;                                                            \
        const T *a = in0, *b = in1;                                            \
        LOOP2(EXPR);                                                           \
    }

/* gelu constants as PyTorch spells them */
#define GELU_ALPHA CT(M_SQRT1_2)                   /* 1/sqrt(2) */
#define GELU_PDF CT(M_2_SQRTPI * M_SQRT1_2 * 0.5)  /* 1/sqrt(2 pi) */
#define GELU_BETA CT(M_SQRT2 * M_2_SQRTPI * 0.5)   /* sqrt(2/pi) */
#define GELU_KAPPA CT(0.044715)

/* SLEEF's exp, each lane below the limit where it gives +0 fed 0 and given
 * +0: the same bits without the underflow (sleef_limits.h). */
#ifdef VMASK_BITS
#define EXP_ANY_ZERO(m) (VMASK_BITS(m) != 0)
#else
#define EXP_ANY_ZERO(m) (m)
#endif
static inline V SFX(exp_v)(V x)
{
    VMASK zero = VCMP_GT(SPLAT(CT(sizeof(T) == 4 ? TJ_SLEEF_EXPF_ZERO_BELOW : TJ_SLEEF_EXP_ZERO_BELOW)), x);
    if (!EXP_ANY_ZERO(zero)) return SLEEF(exp)(x);
    return VBLEND(zero, SPLAT(CT(0)), SLEEF(exp)(VBLEND(zero, SPLAT(CT(0)), x)));
}
#undef EXP_ANY_ZERO

/* e^(-2|u|), u = sqrt(2/pi) (x + 0.044715 x^3): gelu_tanh(x) = x sigmoid(2u)
 * without 1 + tanh(u)'s cancellation (gelu_tanh.h, whose float32 loops the
 * vector instantiations use) */
static inline V SFX(exp_minus_2u)(V x)
{
    V a = VABS(x);
    return SFX(exp_v)(CT(-2) * GELU_BETA * (a + GELU_KAPPA * (a * a * a)));
}

/* x / (1 + e), or x e / (1 + e) for x < 0 (nan either way; -inf gives nan) */
static inline V SFX(gelu_tanh)(V x)
{
    V e = SFX(exp_minus_2u)(x);
    return VBLEND(VCMP_EQ(VABS(x), x), x, x * e) / (CT(1) + e);
}

static inline V SFX(gelu_backward)(V dy, V x)
{
    V cdf = CT(0.5) * (CT(1) + SLEEF(erf)(x * GELU_ALPHA));
    V pdf = GELU_PDF * SFX(exp_v)(x * x * CT(-0.5));
    return dy * (cdf + x * pdf);
}

/* dy (s + x s (1 - s) 2u'(x)), s = sigmoid(2u): s (1 - s) = e r^2 with
 * r = 1 / (1 + e); +-inf gives inf * 0 = nan, as PyTorch */
static inline V SFX(gelu_tanh_backward)(V dy, V x)
{
    V e = SFX(exp_minus_2u)(x);
    V r = CT(1) / (CT(1) + e);
    V s = VBLEND(VCMP_EQ(VABS(x), x), r, e * r);
    V p = CT(2) * GELU_BETA * (CT(1) + CT(3) * GELU_KAPPA * (x * x));
    return dy * (s + x * (e * r * r * p));
}

/* log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)); equal infinities
 * return themselves (the formula would give inf - inf = nan). */
static inline V SFX(logaddexp)(V x, V y)
{
    V m = VMAX(x, y);
    V r = m + SLEEF(log1p)(SFX(exp_v)(-VABS(x - y)));
    VMASK same_inf = VMASK_AND(VCMP_EQ(x, y), VCMP_EQ(VABS(x), SPLAT(CT(INFINITY))));
    return VBLEND(same_inf, x, r);
}

UNARY(abs, VABS(x))
UNARY(neg, -x)
UNARY(exp, SFX(exp_v)(x))
UNARY(log, SLEEF(log)(x))
UNARY(sqrt, VSQRT(x))
UNARY(rsqrt, CT(1) / VSQRT(x))
/* TANH_LOOP: an instantiation's own float32 loop (tanh.h) */
#ifndef TANH_LOOP
UNARY(tanh, SLEEF(tanh)(x))
#define TANH_LOOP SFX(tanh)
#endif
UNARY(sigmoid, CT(1) / (CT(1) + SFX(exp_v)(-x)))
UNARY(erf, SLEEF(erf)(x))
UNARY(reciprocal, CT(1) / x)
UNARY(sin, SLEEF(sin)(x))
UNARY(cos, SLEEF(cos)(x))
UNARY(log1p, SLEEF(log1p)(x))
UNARY(expm1, SLEEF(expm1)(x))
UNARY(relu, VMAX(SPLAT(CT(0)), x))
/* GELU_LOOP: an instantiation's own exact-gelu loop (gelu.h, float32) */
#ifndef GELU_LOOP
UNARY(gelu, x * CT(0.5) * (CT(1) + SLEEF(erf)(x * GELU_ALPHA)))
#define GELU_LOOP SFX(gelu)
#endif
/* GELU_TANH_LOOP, GELU_TANH_BACKWARD_LOOP: an instantiation's own float32
 * loops (gelu_tanh.h) */
#ifndef GELU_TANH_LOOP
UNARY(gelu_tanh_fwd, SFX(gelu_tanh)(x))
#define GELU_TANH_LOOP SFX(gelu_tanh_fwd)
#endif
UNARY(silu, x / (CT(1) + SFX(exp_v)(-x)))
/* (0 < x) - (x < 0), as PyTorch: +0 for both zeros and for nan */
UNARY(sign, VBLEND(VCMP_GT(x, SPLAT(CT(0))), SPLAT(CT(1)),
                   VBLEND(VCMP_GT(SPLAT(CT(0)), x), SPLAT(CT(-1)), SPLAT(CT(0)))))
UNARY(floor, VFLOOR(x))
UNARY(ceil, VCEIL(x))
UNARY(round, VRINT(x))
UNARY(trunc, VTRUNC(x))
/* ATen's frac: x - trunc(x) (inf - inf = nan for the infinities) */
UNARY(frac, x - VTRUNC(x))
UNARY(asin, SLEEF(asin)(x))
UNARY(acos, SLEEF(acos)(x))
UNARY(atan, SLEEF(atan)(x))
/* SLEEF's sinh and cosh form exp(|x|) before halving it, so they give inf
 * once exp(|x|) overflows (|x| > 88.72 in float32, 709.78 in float64) though
 * the result itself is finite up to |x| = 89.42 / 710.48. On those lanes,
 * and only those, use h = exp(|x| / 2) (the halving is exact) and
 * (0.5 h) h, one more rounding than exp: every finite SLEEF result stays
 * as it was, and inf stays inf where the true result overflows too. */
static inline V SFX(cosh_big)(V x)
{
    V h = SFX(exp_v)(VABS(x) * CT(0.5));
    return (CT(0.5) * h) * h;
}
static inline V SFX(sinh_big)(V x)
{
    V c = SFX(cosh_big)(x);
    return VBLEND(VCMP_GT(x, SPLAT(CT(0))), c, -c);
}
static inline V SFX(sinh_fixed)(V x)
{
    V r = SLEEF(sinh)(x);
    return VBLEND(VCMP_EQ(VABS(r), SPLAT(CT(INFINITY))), SFX(sinh_big)(x), r);
}
static inline V SFX(cosh_fixed)(V x)
{
    V r = SLEEF(cosh)(x);
    return VBLEND(VCMP_EQ(r, SPLAT(CT(INFINITY))), SFX(cosh_big)(x), r);
}
UNARY(sinh, SFX(sinh_fixed)(x))
UNARY(cosh, SFX(cosh_fixed)(x))
UNARY(log2, SLEEF(log2)(x))
UNARY(log10, SLEEF(log10)(x))
UNARY(exp2, SLEEF(exp2)(x))
/* PyTorch 1.13's mish kernel: x * tanh(log1p(exp(x))), no threshold */
UNARY(mish, x * SLEEF(tanh)(SLEEF(log1p)(SFX(exp_v)(x))))
UNARY(exp_neg_abs, SFX(exp_v)(-VABS(x)))

/* Activations with Scalar parameters, p[] converted to T as PyTorch's
 * kernels convert them; formulas and evaluation order of PyTorch 1.13's
 * vectorised CPU kernels (nan takes the `<= 0` / `<= threshold` side). */
static void SFX(leaky_relu)(int64_t n, void *out, const void *in, const double *p)
{
    T *o = out;
    const T *a = in;
    V zero = SPLAT(CT(0)), slope = SPLAT(CT(p[0]));
    LOOP1(VBLEND(VCMP_GT(x, zero), x, x * slope));
}

/* p = {beta, threshold}: x * beta > threshold ? x : log1p(exp(x * beta)) / beta */
static void SFX(softplus)(int64_t n, void *out, const void *in, const double *p)
{
    T *o = out;
    const T *a = in;
    V beta = SPLAT(CT(p[0])), threshold = SPLAT(CT(p[1]));
    LOOP1(VBLEND(VCMP_GT(x * beta, threshold), x, SLEEF(log1p)(SFX(exp_v)(x * beta)) / beta));
}

/* p = {alpha, scale, input_scale}: x > 0 ? x * scale : (exp(x * input_scale)
 * - 1) * (alpha * scale), the coefficient products rounded in T as
 * PyTorch 1.13's elu kernel forms them (exp, not expm1, as it does) */
static void SFX(elu)(int64_t n, void *out, const void *in, const double *p)
{
    T *o = out;
    const T *a = in;
    V zero = SPLAT(CT(0)), one = SPLAT(CT(1)), negcoef = SPLAT(CT(p[0]) * CT(p[1])), poscoef = SPLAT(CT(p[1])),
      negiptcoef = SPLAT(CT(p[2]));
    LOOP1(VBLEND(VCMP_GT(x, zero), x * poscoef, (SFX(exp_v)(x * negiptcoef) - one) * negcoef));
}

/* a = grad, b = self: self > 0 ? grad : grad * slope */
static void SFX(leaky_relu_bwd)(int64_t n, void *out, const void *in0, const void *in1, const double *p)
{
    T *o = out;
    const T *a = in0, *b = in1;
    V zero = SPLAT(CT(0)), slope = SPLAT(CT(p[0]));
    LOOP2(VBLEND(VCMP_GT(y, zero), x, x * slope));
}

/* a = grad, b = self (or elu's result when p[3] != 0): b > 0 ? grad * scale
 * : grad * input_scale * alpha * scale * exp(b * input_scale), or with the
 * result grad * input_scale * (b + alpha * scale) */
static void SFX(elu_bwd)(int64_t n, void *out, const void *in0, const void *in1, const double *p)
{
    T *o = out;
    const T *a = in0, *b = in1;
    V zero = SPLAT(CT(0)), negcoef = SPLAT(CT(p[0]) * CT(p[1])), poscoef = SPLAT(CT(p[1])),
      negiptcoef = SPLAT(CT(p[2]));
    if (p[3] != 0)
        LOOP2(VBLEND(VCMP_GT(y, zero), x * poscoef, x * negiptcoef * (y + negcoef)));
    else
        LOOP2(VBLEND(VCMP_GT(y, zero), x * poscoef, x * negiptcoef * negcoef * SFX(exp_v)(y * negiptcoef)));
}

/* self * beta > threshold ? grad : grad * z / (z + 1), z = exp(self * beta) */
static void SFX(softplus_bwd)(int64_t n, void *out, const void *in0, const void *in1, const double *p)
{
    T *o = out;
    const T *a = in0, *b = in1;
    V beta = SPLAT(CT(p[0])), threshold = SPLAT(CT(p[1]));
    LOOP2(VBLEND(VCMP_GT(y * beta, threshold), x, x * SFX(exp_v)(y * beta) / (SFX(exp_v)(y * beta) + CT(1))));
}

/* p = {nan, posinf, neginf}: ATen's nan_to_num, isnan(x) ? nan : x == inf ?
 * posinf : x == -inf ? neginf : x */
static void SFX(nan_to_num)(int64_t n, void *out, const void *in, const double *p)
{
    T *o = out;
    const T *a = in;
    V nan = SPLAT(CT(p[0])), pos = SPLAT(CT(p[1])), neg = SPLAT(CT(p[2])), inf = SPLAT(CT(INFINITY));
    LOOP1(VBLEND(VISNAN(x), nan, VBLEND(VCMP_EQ(x, inf), pos, VBLEND(VCMP_EQ(x, -inf), neg, x))));
}

/* The hard activations, as PyTorch 1.13's CPU kernels evaluate them. Their
 * backward operators follow the kernels' scalar loops at the kinks and at
 * nan (1.13's vectorised loops differ there: see tj_hardswish_backward). */

/* clamp(x + 3, 0, 6), nan kept (ATen's maximum / minimum propagate it) */
static inline V SFX(relu6_of_x_plus_3)(V x)
{
    V r = VMIN(VMAX(x + CT(3), SPLAT(CT(0))), SPLAT(CT(6)));
    return VBLEND(VISNAN(x), x, r);
}

/* relu6(x + 3) / 6 */
static void SFX(hardsigmoid)(int64_t n, void *out, const void *in, const double *p)
{
    T *o = out;
    const T *a = in;
    LOOP1(SFX(relu6_of_x_plus_3)(x) / CT(6));
}

/* x * relu6(x + 3) / 6 */
static void SFX(hardswish)(int64_t n, void *out, const void *in, const double *p)
{
    T *o = out;
    const T *a = in;
    LOOP1(x * SFX(relu6_of_x_plus_3)(x) / CT(6));
}

/* a = grad, b = self: -3 < self < 3 ? grad * (1/6 rounded to float32, as
 * ATen's constant) : 0 */
static void SFX(hardsigmoid_bwd)(int64_t n, void *out, const void *in0, const void *in1, const double *p)
{
    T *o = out;
    const T *a = in0, *b = in1;
    V zero = SPLAT(CT(0)), three = SPLAT(CT(3)), sixth = SPLAT(CT(1.0f / 6.0f));
    LOOP2(VBLEND(VMASK_AND(VCMP_GT(y, -three), VCMP_GT(three, y)), x * sixth, zero));
}

/* self < -3 ? 0 : self <= 3 ? grad * (self / 3 + 0.5) : grad (nan: grad) */
static void SFX(hardswish_bwd)(int64_t n, void *out, const void *in0, const void *in1, const double *p)
{
    T *o = out;
    const T *a = in0, *b = in1;
    V zero = SPLAT(CT(0)), three = SPLAT(CT(3)), half = SPLAT(CT(0.5));
    LOOP2(VBLEND(VCMP_GT(-three, y), zero, VBLEND(VCMP_GE(three, y), x * (y / three + half), x)));
}

/* self <= min_val || self >= max_val ? 0 : grad (nan self or bound: the
 * comparison is false) */
static void SFX(hardtanh_bwd)(int64_t n, void *out, const void *in0, const void *in1, const double *p)
{
    T *o = out;
    const T *a = in0, *b = in1;
    V zero = SPLAT(CT(0)), lo = SPLAT(CT(p[0])), hi = SPLAT(CT(p[1]));
    LOOP2(VBLEND(VCMP_GE(lo, y), zero, VBLEND(VCMP_GE(y, hi), zero, x)));
}

/* the arithmetic the plain C loops did at SSE2 width: one rounding per
 * operation at every width (the project builds with -std=c11, so nothing
 * contracts into a fused multiply-add), hence the same bits */
static void SFX(mul)(int64_t n, void *out, const void *in0, const void *in1)
{
    T *o = out;
    const T *a = in0, *b = in1;
    LOOP2_ARITH(x * y);
}

static void SFX(div)(int64_t n, void *out, const void *in0, const void *in1)
{
    T *o = out;
    const T *a = in0, *b = in1;
    LOOP2_ARITH(x / y);
}

static void SFX(add)(int64_t n, void *out, const void *in0, const void *in1, double alpha)
{
    T *o = out;
    const T *a = in0, *b = in1;
    T al = (T)alpha;
    if (al == CT(1)) LOOP2_ARITH(x + y);
    else LOOP2_ARITH(x + al * y);
}

/* LOOP2_ARITH with a third operand, z from `c`; y is YV (a vector at i_)
 * and YS (an element at i_). */
#define LOOP3_ARITH_Y(EXPR, YV, YS)                                            \
    do {                                                                       \
        int64_t i_ = 0;                                                        \
        for (; i_ + W <= n; i_ += W) {                                         \
            V x = LOADU(a + i_), y = (YV), z = LOADU(c + i_);                  \
            STOREU(o + i_, (EXPR));                                            \
        }                                                                      \
        for (; i_ < n; i_++) {                                                 \
            T x = a[i_], y = (YS), z = c[i_];                                  \
            o[i_] = (EXPR);                                                    \
        }                                                                      \
    } while (0)

/* y from `b`, or the one value yv / ys */
#define LOOP3_ARITH(EXPR)                                                      \
    do {                                                                       \
        if (one_b) LOOP3_ARITH_Y(EXPR, yv, ys);                                \
        else LOOP3_ARITH_Y(EXPR, LOADU(b + i_), b[i_]);                        \
    } while (0)

/* tj_k_mul_add_loop: mul's product, then add's sum with it (alpha as add
 * takes it), each rounded once; one_b: b holds one value, repeated. */
static void SFX(mul_add)(int64_t n, void *out, const void *in0, const void *in1, const void *in2, double alpha,
                         bool product_first, bool one_b)
{
    if (n <= 0) return; /* one_b reads b[0] */
    T *o = out;
    const T *a = in0, *b = in1, *c = in2;
    T al = (T)alpha, ys = b[0];
    V yv = SPLAT(ys);
    if (product_first && al == CT(1)) LOOP3_ARITH((x * y) + z);
    else if (product_first) LOOP3_ARITH((x * y) + al * z);
    else if (al == CT(1)) LOOP3_ARITH(z + (x * y));
    else LOOP3_ARITH(z + al * (x * y));
}

/* Row r of nr rows of len elements: out = EXPR(x, y) of the row's x and
 * y = vals[r], vector and scalar tail alike (LOOP2_ARITH's one rounding per
 * operation). The last row first, its value read before its row is
 * written: out may cover vals (a fused step's buffer taken back), row r's
 * elements holding values r len and on, read by then. */
#define ROWS_ARITH(EXPR)                                                       \
    for (int64_t r_ = nr - 1; r_ >= 0; r_--) {                                 \
        T ys_ = v[r_];                                                         \
        V yv_ = SPLAT(ys_);                                                    \
        const T *a_ = a + r_ * len;                                            \
        T *o_ = o + r_ * len;                                                  \
        int64_t i_ = 0;                                                        \
        for (; i_ + W <= len; i_ += W) {                                       \
            V x = LOADU(a_ + i_), y = yv_;                                     \
            STOREU(o_ + i_, (EXPR));                                           \
        }                                                                      \
        for (; i_ < len; i_++) {                                               \
            T x = a_[i_], y = ys_;                                             \
            o_[i_] = (EXPR);                                                   \
        }                                                                      \
    }

/* tj_k_rows_loop: add, mul and div with one operand a value per row, as
 * add (alpha rounded to T first, 1 leaving y alone) and mul / div compute
 * it spread over the row. */
static void SFX(rows_arith)(int64_t nr, int64_t len, void *out, const void *in, const void *vals,
                            const tj_k_rows_args *k)
{
    T *o = out;
    const T *a = in, *v = vals;
    T al = (T)k->alpha;
    switch (k->op) {
    case TJ_K_ROWS_ADD:
        if (k->rows_first && al == CT(1)) ROWS_ARITH(y + x)
        else if (k->rows_first) ROWS_ARITH(y + al * x)
        else if (al == CT(1)) ROWS_ARITH(x + y)
        else ROWS_ARITH(x + al * y)
        break;
    case TJ_K_ROWS_MUL:
        if (k->rows_first) ROWS_ARITH(y * x)
        else ROWS_ARITH(x * y)
        break;
    case TJ_K_ROWS_DIV:
        if (k->rows_first) ROWS_ARITH(y / x)
        else ROWS_ARITH(x / y)
        break;
    }
}

/* The plain C loops' nan rule, a != a ? a : b != b ? b : a > b ? a : b
 * (signed zeros included): a nan `a` is kept by the blend, and maxps /
 * minps return their second operand, `b`, for a nan `b` and for equal
 * operands (+0 against -0). */
BINARY(maximum, VBLEND(VISNAN(x), x, VMAX(x, y)))
BINARY(minimum, VBLEND(VISNAN(x), x, VMIN(x, y)))
BINARY(pow, SLEEF(pow)(x, y))
BINARY(atan2, SLEEF(atan2)(x, y))
#ifndef VFMOD
/* C's fmod, lane by lane and bit for bit (fmod is exact; SLEEF 3.5's fmod
 * is not: it returns nan once |x / y| overflows). For finite x and a finite
 * non-zero y with q = trunc(|x| / |y|) below 2^(mantissa bits), q is the
 * quotient or, where the division rounded up to an integer, one more;
 * fma(-q, |y|, |x|) is then exact (the remainder, or the remainder minus
 * |y|: a multiple of the smaller ulp of x and y below |y|), |y| is added
 * back where it is negative and x's sign set, as C's fmod keeps it (a zero
 * remainder is x * 0: -0 for a negative x). The other lanes (nan,
 * infinities, a zero divisor, larger quotients) go to C's fmod, whose
 * double result is exact in float too. */
static inline V SFX(fmod_v)(V x, V y)
{
    V zero = SPLAT(CT(0)), ax = VABS(x), ay = VABS(y);
    V q = VTRUNC(ax / ay);
    V r = VFNMADD(q, ay, ax);
    r = VBLEND(VCMP_GT(zero, r), r + ay, r);
    r = VBLEND(VCMP_GT(zero, x), -r, r);
    r = VBLEND(VCMP_EQ(r, zero), x * CT(0), r);
    int ok = VMASK_BITS(VMASK_AND(VCMP_GT(SPLAT(CT(sizeof(T) == 4 ? 0x1p23 : 0x1p52)), q),
                                  VCMP_GT(SPLAT(CT(INFINITY)), ay)));
    if (ok == (1 << W) - 1) return r;
    T xs[W], ys[W], rs[W];
    STOREU(xs, x);
    STOREU(ys, y);
    STOREU(rs, r);
    for (int j = 0; j < W; j++)
        if (!(ok >> j & 1)) rs[j] = (T)fmod(xs[j], ys[j]);
    return LOADU(rs);
}
#define VFMOD(a, b) SFX(fmod_v)(a, b)
#endif
BINARY(fmod, VFMOD(x, y))
/* Python's modulo (the sign of the divisor), as ATen's kernel and the plain
 * C loop it replaces: r = fmod(x, y), plus y where r is non-zero (or nan)
 * and r and y differ in sign (comparisons with 0, false for nan). */
static inline V SFX(remainder_v)(V x, V y)
{
    V r = VFMOD(x, y), zero = SPLAT(CT(0));
    V fixed = VBLEND(VMASK_XOR(VCMP_GT(zero, r), VCMP_GT(zero, y)), r + y, r);
    return VBLEND(VCMP_EQ(r, zero), r, fixed);
}
BINARY(remainder, SFX(remainder_v)(x, y))
BINARY(logaddexp_fwd, SFX(logaddexp)(x, y))
/* log_sigmoid_forward's output from self and its buffer z = exp(-|x|), as
 * ATen's CPU kernel: min(x, 0) - log1p(z) */
BINARY(log_sigmoid_fwd, VMIN(x, SPLAT(CT(0))) - SLEEF(log1p)(y))
/* glu: a * (1 / (1 + exp(-b))), ATen's CPU formula */
BINARY(glu_fwd, x * (CT(1) / (CT(1) + SFX(exp_v)(-y))))
BINARY(gelu_bwd, SFX(gelu_backward)(x, y))
#ifndef GELU_TANH_BACKWARD_LOOP
BINARY(gelu_tanh_bwd, SFX(gelu_tanh_backward)(x, y))
#define GELU_TANH_BACKWARD_LOOP SFX(gelu_tanh_bwd)
#endif

/* PyTorch's pow(Tensor, Scalar) shortcuts, then SLEEF's pow. */
static void SFX(pow_scalar)(int64_t n, void *out, const void *in, double e)
{
    T *o = out;
    const T *a = in;
    if (e == 0) {
        for (int64_t i = 0; i < n; i++) o[i] = CT(1);
    } else if (e == 1) {
        LOOP1(x);
    } else if (e == 2) {
        LOOP1(x * x);
    } else if (e == 3) {
        LOOP1(x * x * x);
    } else if (e == 0.5) {
        LOOP1(VSQRT(x));
    } else if (e == -0.5) {
        LOOP1(CT(1) / VSQRT(x));
    } else if (e == -1) {
        LOOP1(CT(1) / x);
    } else if (e == -2) {
        LOOP1(CT(1) / (x * x));
    } else {
        V ev = SPLAT(CT(e));
        LOOP1(SLEEF(pow)(x, ev));
    }
}

/* Comparisons and where as plain C: the compiler vectorises them for this
 * file's instruction set (the bool side is 1 byte a lane, which the
 * intrinsic macros above do not model). */
#define COMPARE(name, OP)                                                      \
    static void SFX(name)(int64_t n, void *out, const void *in0, const void *in1) \
    {                                                                          \
        uint8_t *o = out;                                                      \
        const T *a = in0, *b = in1;                                            \
        for (int64_t i = 0; i < n; i++) o[i] = a[i] OP b[i];                   \
    }
COMPARE(eq, ==)
COMPARE(ne, !=)
COMPARE(lt, <)
COMPARE(le, <=)
COMPARE(gt, >)
COMPARE(ge, >=)
/* logical_and / or / xor: each operand's truth is `!= 0` (nan is true, -0 false) */
#define LOGICAL(name, OP)                                                      \
    static void SFX(name)(int64_t n, void *out, const void *in0, const void *in1) \
    {                                                                          \
        uint8_t *o = out;                                                      \
        const T *a = in0, *b = in1;                                            \
        for (int64_t i = 0; i < n; i++) o[i] = (a[i] != CT(0)) OP (b[i] != CT(0)); \
    }
LOGICAL(logical_and, &)
LOGICAL(logical_or, |)
LOGICAL(logical_xor, ^)

/* Both operands loaded unconditionally: a blend, not a branch mispredicted
 * on mixed conditions. */
static void SFX(where)(int64_t n, void *out, const uint8_t *c, const void *in0, const void *in1)
{
    T *o = out;
    const T *a = in0, *b = in1;
    for (int64_t i = 0; i < n; i++) {
        T x = a[i], y = b[i];
        o[i] = c[i] != 0 ? x : y;
    }
}

/* where(a OP b, x, y) with no mask in memory between them (a fused
 * compare and where), selecting T or bool (S, named SNAME); a blend, as
 * in where. Bit k of ONE (a constant where inlined): operand k holds one
 * value, read once (a fused step's constant, not its splat buffer). */
#define COMPARE_WHERE_TO(name, OP, S, SNAME)                                   \
    static inline __attribute__((always_inline)) void SFX(name##_where_##SNAME##_one)( \
        int64_t n, S *o, const T *a, const T *b, const S *x, const S *y, unsigned ONE) \
    {                                                                          \
        T a0 = a[0], b0 = b[0];                                                \
        S x0 = x[0], y0 = y[0];                                                \
        for (int64_t i = 0; i < n; i++) {                                      \
            S u = ONE & 4 ? x0 : x[i], v = ONE & 8 ? y0 : y[i];                \
            o[i] = (ONE & 1 ? a0 : a[i]) OP (ONE & 2 ? b0 : b[i]) ? u : v;     \
        }                                                                      \
    }                                                                          \
    static void SFX(name##_where_##SNAME)(int64_t n, void *out, const void *in0, const void *in1, \
                                          const void *in2, const void *in3, unsigned one) \
    {                                                                          \
        if (n <= 0) return; /* one value operands read [0] */                  \
        switch (one & 15) {                                                    \
        COMPARE_WHERE_ONE(name, SNAME, 0) COMPARE_WHERE_ONE(name, SNAME, 1)    \
        COMPARE_WHERE_ONE(name, SNAME, 2) COMPARE_WHERE_ONE(name, SNAME, 3)    \
        COMPARE_WHERE_ONE(name, SNAME, 4) COMPARE_WHERE_ONE(name, SNAME, 5)    \
        COMPARE_WHERE_ONE(name, SNAME, 6) COMPARE_WHERE_ONE(name, SNAME, 7)    \
        COMPARE_WHERE_ONE(name, SNAME, 8) COMPARE_WHERE_ONE(name, SNAME, 9)    \
        COMPARE_WHERE_ONE(name, SNAME, 10) COMPARE_WHERE_ONE(name, SNAME, 11)  \
        COMPARE_WHERE_ONE(name, SNAME, 12) COMPARE_WHERE_ONE(name, SNAME, 13)  \
        COMPARE_WHERE_ONE(name, SNAME, 14) COMPARE_WHERE_ONE(name, SNAME, 15)  \
        }                                                                      \
    }
#define COMPARE_WHERE_ONE(name, SNAME, ONE)                                    \
    case ONE: SFX(name##_where_##SNAME##_one)(n, out, in0, in1, in2, in3, ONE); break;
#define COMPARE_WHERE(name, OP)                                                \
    COMPARE_WHERE_TO(name, OP, T, same)                                        \
    COMPARE_WHERE_TO(name, OP, uint8_t, b8)
COMPARE_WHERE(eq, ==)
COMPARE_WHERE(ne, !=)
COMPARE_WHERE(lt, <)
COMPARE_WHERE(le, <=)
COMPARE_WHERE(gt, >)
COMPARE_WHERE(ge, >=)

/* Copies of one value's bits (a float move never changes them, nan
 * payloads included). */
static void SFX(splat)(int64_t n, void *out, const void *value)
{
    T v, *o = out;
    memcpy(&v, value, sizeof v);
    for (int64_t i = 0; i < n; i++) o[i] = v;
}

/* Each of nr values copied len times, row after row: a bit copy too. */
static void SFX(spread)(int64_t nr, int64_t len, void *out, const void *vals)
{
    const T *v = vals;
    T *o = out;
    for (int64_t i = 0; i < nr; i++, o += len) {
        T x = v[i];
        for (int64_t j = 0; j < len; j++) o[j] = x;
    }
}

static const tj_k_math_fns FNS = {
    .unary = {
        [TJ_K_ABS] = SFX(abs),
        [TJ_K_NEG] = SFX(neg),
        [TJ_K_EXP] = SFX(exp),
        [TJ_K_LOG] = SFX(log),
        [TJ_K_SQRT] = SFX(sqrt),
        [TJ_K_RSQRT] = SFX(rsqrt),
        [TJ_K_TANH] = TANH_LOOP,
        [TJ_K_SIGMOID] = SFX(sigmoid),
        [TJ_K_ERF] = SFX(erf),
        [TJ_K_RECIPROCAL] = SFX(reciprocal),
        [TJ_K_SIN] = SFX(sin),
        [TJ_K_COS] = SFX(cos),
        [TJ_K_LOG1P] = SFX(log1p),
        [TJ_K_EXPM1] = SFX(expm1),
        [TJ_K_RELU] = SFX(relu),
        [TJ_K_GELU] = GELU_LOOP,
        [TJ_K_GELU_TANH] = GELU_TANH_LOOP,
        [TJ_K_SILU] = SFX(silu),
        [TJ_K_SIGN] = SFX(sign),
        [TJ_K_FLOOR] = SFX(floor),
        [TJ_K_CEIL] = SFX(ceil),
        [TJ_K_ROUND] = SFX(round),
        [TJ_K_TRUNC] = SFX(trunc),
        [TJ_K_FRAC] = SFX(frac),
        [TJ_K_ASIN] = SFX(asin),
        [TJ_K_ACOS] = SFX(acos),
        [TJ_K_ATAN] = SFX(atan),
        [TJ_K_SINH] = SFX(sinh),
        [TJ_K_COSH] = SFX(cosh),
        [TJ_K_LOG2] = SFX(log2),
        [TJ_K_LOG10] = SFX(log10),
        [TJ_K_EXP2] = SFX(exp2),
        [TJ_K_MISH] = SFX(mish),
        [TJ_K_EXP_NEG_ABS] = SFX(exp_neg_abs),
    },
    .binary = {
        [TJ_K_MUL] = SFX(mul),
        [TJ_K_DIV] = SFX(div),
        [TJ_K_MAXIMUM] = SFX(maximum),
        [TJ_K_MINIMUM] = SFX(minimum),
        [TJ_K_POW] = SFX(pow),
        [TJ_K_ATAN2] = SFX(atan2),
        [TJ_K_FMOD] = SFX(fmod),
        [TJ_K_REMAINDER] = SFX(remainder),
        [TJ_K_LOGADDEXP] = SFX(logaddexp_fwd),
        [TJ_K_GELU_BACKWARD] = SFX(gelu_bwd),
        [TJ_K_GELU_TANH_BACKWARD] = GELU_TANH_BACKWARD_LOOP,
        [TJ_K_LOG_SIGMOID] = SFX(log_sigmoid_fwd),
        [TJ_K_GLU] = SFX(glu_fwd),
    },
    .compare = {
        [TJ_K_EQ] = SFX(eq),
        [TJ_K_NE] = SFX(ne),
        [TJ_K_LT] = SFX(lt),
        [TJ_K_LE] = SFX(le),
        [TJ_K_GT] = SFX(gt),
        [TJ_K_GE] = SFX(ge),
        [TJ_K_LOGICAL_AND] = SFX(logical_and),
        [TJ_K_LOGICAL_OR] = SFX(logical_or),
        [TJ_K_LOGICAL_XOR] = SFX(logical_xor),
    },
    .act = {[TJ_K_LEAKY_RELU] = SFX(leaky_relu), [TJ_K_SOFTPLUS] = SFX(softplus), [TJ_K_ELU] = SFX(elu),
            [TJ_K_HARDSIGMOID] = SFX(hardsigmoid), [TJ_K_HARDSWISH] = SFX(hardswish),
            [TJ_K_NAN_TO_NUM] = SFX(nan_to_num)},
    .act_backward = {[TJ_K_LEAKY_RELU] = SFX(leaky_relu_bwd), [TJ_K_SOFTPLUS] = SFX(softplus_bwd),
                     [TJ_K_ELU] = SFX(elu_bwd), [TJ_K_HARDSIGMOID] = SFX(hardsigmoid_bwd),
                     [TJ_K_HARDSWISH] = SFX(hardswish_bwd), [TJ_K_HARDTANH] = SFX(hardtanh_bwd)},
    .add = SFX(add),
    .where = SFX(where),
    .compare_where = {[TJ_K_EQ] = SFX(eq_where_same), [TJ_K_NE] = SFX(ne_where_same),
                      [TJ_K_LT] = SFX(lt_where_same), [TJ_K_LE] = SFX(le_where_same),
                      [TJ_K_GT] = SFX(gt_where_same), [TJ_K_GE] = SFX(ge_where_same)},
    .compare_where_b8 = {[TJ_K_EQ] = SFX(eq_where_b8), [TJ_K_NE] = SFX(ne_where_b8),
                         [TJ_K_LT] = SFX(lt_where_b8), [TJ_K_LE] = SFX(le_where_b8),
                         [TJ_K_GT] = SFX(gt_where_b8), [TJ_K_GE] = SFX(ge_where_b8)},
    .splat = SFX(splat),
    .spread = SFX(spread),
    .rows_arith = SFX(rows_arith),
    .mul_add = SFX(mul_add),
    .pow_scalar = SFX(pow_scalar),
};

#undef CT
#undef LOOP1
#undef LOOP2
#undef ROWS_ARITH
#undef LOOP3_ARITH
#undef UNARY
#undef BINARY
#undef COMPARE
#undef LOGICAL
#undef COMPARE_WHERE
#undef COMPARE_WHERE_ONE
#undef COMPARE_WHERE_TO
#undef GELU_ALPHA
#undef GELU_PDF
#undef GELU_BETA
#undef GELU_KAPPA
#undef GELU_LOOP
#undef GELU_TANH_LOOP
#undef GELU_TANH_BACKWARD_LOOP
#undef TANH_LOOP

#undef T
#undef V
#undef W
#undef FNS
#undef SFX
#undef SLEEF
#undef LOADU
#undef STOREU
#undef SPLAT
#undef VSQRT
#undef VABS
#undef VMAX
#undef VMIN
#undef VISNAN
#undef VMASK
#undef VCMP_EQ
#undef VCMP_GT
#undef VCMP_GE
#undef VMASK_AND
#undef VMASK_XOR
#undef VFMOD
#undef VFNMADD
#undef VMASK_BITS
#undef VBLEND
#undef VFLOOR
#undef VCEIL
#undef VTRUNC
#undef VRINT
