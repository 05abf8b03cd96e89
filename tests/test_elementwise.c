/* Elementwise operators: values of every unary and binary operator against
 * reference numbers (on every instruction set the CPU has: generic, AVX2,
 * AVX-512), type promotion (0-dim tensors, int and float Scalars, true
 * division, bool results), broadcasting, non-contiguous and broadcast
 * inputs, empty and 0-dim tensors, nan/inf behaviour, the backward
 * operators, the composite operators' decompositions and the error paths.
 *
 * Reference values marked "torch" were printed by PyTorch 1.13
 * (/usr/bin/python3): float32 unary results as torch.<op>(x.double()).float()
 * (the float64 result rounded, as the conformance cases do) except gelu with
 * approximate='tanh', computed by torch in float32; binary results by the
 * torch call on the same float32 / int64 inputs. Float64 results are checked
 * against glibc's double functions. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "kernels/elementwise.h"
#include "runtime/internal.h"
#include "runtime/iter.h"
#include "test_util.h"

TestSuite(ew, .init = test_scope_open, .fini = test_scope_close_isa);

/* ---- helpers ---- */

static tj_tensor *f32(int64_t n, const float *data) { return test_tensor(TJ_FLOAT32, 1, (int64_t[]){n}, data); }
static tj_tensor *f64(int64_t n, const double *data) { return test_tensor(TJ_FLOAT64, 1, (int64_t[]){n}, data); }
static tj_tensor *i64(int64_t n, const int64_t *data) { return test_tensor(TJ_INT64, 1, (int64_t[]){n}, data); }
static tj_tensor *b8(int64_t n, const uint8_t *data) { return test_tensor(TJ_BOOL, 1, (int64_t[]){n}, data); }

/* A strided view of `base` (shares its storage). */
static tj_tensor *view(tj_tensor *base, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset)
{
    tj_tensor *v = tj_tensor_new_view(base, ndim, shape, strides, offset);
    cr_assert_not_null(v, "%s", tj_last_error());
    tj_scope_adopt(v);
    return v;
}

static bool close_to(double g, double e, double rtol, double atol)
{
    if (isnan(e)) return isnan(g);
    if (isinf(e)) return g == e;
    return isfinite(g) && fabs(g - e) <= atol + rtol * fabs(e);
}

/* Checks dtype, shape and values (nan matches nan, infinities exactly). */
static void expect_tol(const tj_tensor *t, tj_dtype dtype, int ndim, const int64_t *shape, const double *want,
                       double rtol, double atol)
{
    int64_t n = test_assert_dtype_shape(t, dtype, ndim, shape);
    for (int64_t i = 0; i < n; i++) {
        double g = tj_tensor_item_at(t, i);
        cr_assert(close_to(g, want[i], rtol, atol), "[%lld] = %.9g, want %.9g", (long long)i, g, want[i]);
    }
}

static void expect(const tj_tensor *t, tj_dtype dtype, int ndim, const int64_t *shape, const double *want)
{
    expect_tol(t, dtype, ndim, shape, want, 1e-5, 1e-6);
}

/* 1-d results */
static void expect1(const tj_tensor *t, tj_dtype dtype, int64_t n, const double *want)
{
    expect(t, dtype, 1, (int64_t[]){n}, want);
}

/* ---- unary: values ---- */

#define NX 20
/* torch: the inputs of the unary tables below */
static const float ux[NX] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0.5f, -0.5f, 1.0f, -1.5f, 3.0f, -3.0f, 10.0f,
                             -10.0f, 1e-4f, 20.0f, -20.0f, 88.0f, -100.0f, 1e30f, 2.5f};

typedef struct {
    const char *name;
    tj_tensor *(*fn)(tj_tensor *);
    double want[NX];
} unary_case;

static tj_tensor *gelu_none(tj_tensor *x) { return tj_gelu(x, "none"); }
static tj_tensor *gelu_tanh(tj_tensor *x) { return tj_gelu(x, "tanh"); }

/* torch */
static const unary_case unary_cases[] = {
    {"abs", tj_abs, {NAN, INFINITY, INFINITY, 0.0, 0.0, 0.5, 0.5, 1.0, 1.5, 3.0, 3.0, 10.0, 10.0, 9.999999747378752e-05, 20.0, 20.0, 88.0, 100.0, 1.0000000150474662e+30, 2.5}},
    {"neg", tj_neg, {NAN, -INFINITY, INFINITY, -0.0, 0.0, -0.5, 0.5, -1.0, 1.5, -3.0, 3.0, -10.0, 10.0, -9.999999747378752e-05, -20.0, 20.0, -88.0, 100.0, -1.0000000150474662e+30, -2.5}},
    {"exp", tj_exp, {NAN, INFINITY, 0.0, 1.0, 1.0, 1.6487212181091309, 0.6065306663513184, 2.7182817459106445, 0.22313016653060913, 20.08553695678711, 0.049787066876888275, 22026.46484375, 4.539993096841499e-05, 1.000100016593933, 485165184.0, 2.06115369216775e-09, 1.6516362661361307e+38, 3.783505853677006e-44, INFINITY, 12.182494163513184}},
    {"log", tj_log, {NAN, INFINITY, NAN, -INFINITY, -INFINITY, -0.6931471824645996, NAN, 0.0, NAN, 1.0986123085021973, NAN, 2.3025851249694824, NAN, -9.21034049987793, 2.995732307434082, NAN, 4.477336883544922, NAN, 69.07755279541016, 0.9162907600402832}},
    {"sqrt", tj_sqrt, {NAN, INFINITY, NAN, 0.0, -0.0, 0.7071067690849304, NAN, 1.0, NAN, 1.7320507764816284, NAN, 3.1622776985168457, NAN, 0.009999999776482582, 4.4721360206604, NAN, 9.380831718444824, NAN, 999999986991104.0, 1.5811388492584229}},
    {"rsqrt", tj_rsqrt, {NAN, 0.0, NAN, INFINITY, -INFINITY, 1.4142135381698608, NAN, 1.0, NAN, 0.5773502588272095, NAN, 0.3162277638912201, NAN, 100.0, 0.22360679507255554, NAN, 0.10660035908222198, NAN, 1.0000000036274937e-15, 0.6324555277824402}},
    {"tanh", tj_tanh, {NAN, 1.0, -1.0, 0.0, -0.0, 0.46211716532707214, -0.46211716532707214, 0.7615941762924194, -0.9051482677459717, 0.9950547814369202, -0.9950547814369202, 1.0, -1.0, 9.999999747378752e-05, 1.0, -1.0, 1.0, -1.0, 1.0, 0.9866142868995667}},
    {"sigmoid", tj_sigmoid, {NAN, 1.0, 0.0, 0.5, 0.5, 0.622459352016449, 0.3775406777858734, 0.7310585975646973, 0.18242552876472473, 0.9525741338729858, 0.04742587357759476, 0.9999545812606812, 4.539786823443137e-05, 0.5000249743461609, 1.0, 2.06115369216775e-09, 1.0, 3.783505853677006e-44, 1.0, 0.9241418242454529}},
    {"erf", tj_erf, {NAN, 1.0, -1.0, 0.0, -0.0, 0.5204998850822449, -0.5204998850822449, 0.8427007794380188, -0.9661051630973816, 0.9999778866767883, -0.9999778866767883, 1.0, -1.0, 0.00011283791536698118, 1.0, -1.0, 1.0, -1.0, 1.0, 0.9995930194854736}},
    {"reciprocal", tj_reciprocal, {NAN, 0.0, -0.0, INFINITY, -INFINITY, 2.0, -2.0, 1.0, -0.6666666865348816, 0.3333333432674408, -0.3333333432674408, 0.10000000149011612, -0.10000000149011612, 10000.0, 0.05000000074505806, -0.05000000074505806, 0.011363636702299118, -0.009999999776482582, 1.0000000031710769e-30, 0.4000000059604645}},
    {"sin", tj_sin, {NAN, NAN, NAN, 0.0, -0.0, 0.4794255495071411, -0.4794255495071411, 0.8414709568023682, -0.9974949955940247, 0.14112000167369843, -0.14112000167369843, -0.5440211296081543, 0.5440211296081543, 9.999999747378752e-05, 0.9129452705383301, -0.9129452705383301, 0.03539830446243286, 0.5063656568527222, -0.791163444519043, 0.5984721183776855}},
    {"cos", tj_cos, {NAN, NAN, NAN, 1.0, 1.0, 0.8775825500488281, 0.8775825500488281, 0.5403022766113281, 0.07073719799518585, -0.9899924993515015, -0.9899924993515015, -0.83907151222229, -0.83907151222229, 1.0, 0.4080820679664612, 0.4080820679664612, 0.9993732571601868, 0.8623188734054565, -0.6116048097610474, -0.8011435866355896}},
    {"log1p", tj_log1p, {NAN, INFINITY, NAN, 0.0, -0.0, 0.40546509623527527, -0.6931471824645996, 0.6931471824645996, NAN, 1.3862943649291992, NAN, 2.397895336151123, NAN, 9.999499889090657e-05, 3.044522523880005, NAN, 4.488636493682861, NAN, 69.07755279541016, 1.2527629137039185}},
    {"expm1", tj_expm1, {NAN, INFINITY, -1.0, 0.0, -0.0, 0.6487212777137756, -0.39346933364868164, 1.718281865119934, -0.7768698334693909, 19.08553695678711, -0.9502129554748535, 22025.46484375, -0.9999545812606812, 0.00010000499605666846, 485165184.0, -1.0, 1.6516362661361307e+38, -1.0, INFINITY, 11.182494163513184}},
    {"relu", tj_relu, {NAN, INFINITY, 0.0, 0.0, -0.0, 0.5, 0.0, 1.0, 0.0, 3.0, 0.0, 10.0, 0.0, 9.999999747378752e-05, 20.0, 0.0, 88.0, 0.0, 1.0000000150474662e+30, 2.5}},
    {"gelu", gelu_none, {NAN, INFINITY, NAN, 0.0, -0.0, 0.3457312285900116, -0.1542687714099884, 0.8413447737693787, -0.10021080076694489, 2.995950222015381, -0.004049694165587425, 10.0, -0.0, 5.000398959964514e-05, 20.0, -0.0, 88.0, -0.0, 1.0000000150474662e+30, 2.48447585105896}},
    {"gelu tanh", gelu_tanh, {NAN, INFINITY, NAN, 0.0, -0.0, 0.3457140028476715, -0.1542859971523285, 0.8411920070648193, -0.10042843222618103, 2.9963626861572266, -0.0036374330520629883, 10.0, -0.0, 5.000398596166633e-05, 20.0, -0.0, 88.0, -0.0, 1.0000000150474662e+30, 2.4849157333374023}},
    {"silu", tj_silu, {NAN, INFINITY, NAN, 0.0, -0.0, 0.3112296760082245, -0.1887703388929367, 0.7310585975646973, -0.2736382782459259, 2.857722282409668, -0.14227761328220367, 9.99954605102539, -0.0004539786896202713, 5.000249802833423e-05, 20.0, -4.122307117881974e-08, 88.0, -3.7204474227823893e-42, 1.0000000150474662e+30, 2.310354471206665}},
};

Test(ew, unary_float32_edge_values_match_torch_on_every_isa)
{
    tj_tensor *x = f32(NX, ux);
    for (size_t k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (size_t c = 0; c < sizeof unary_cases / sizeof *unary_cases; c++) {
            const unary_case *u = &unary_cases[c];
            tj_tensor *r = u->fn(x);
            cr_assert_not_null(r, "%s: %s", u->name, tj_last_error());
            for (int i = 0; i < NX; i++) {
                double g = tj_tensor_item_at(r, i);
                cr_assert(close_to(g, u->want[i], 1e-5, 1e-6), "%s on %s: %s(%g) = %.9g, want %.9g", test_isas[k],
                          u->name, u->name, ux[i], g, u->want[i]);
            }
        }
    }
}

/* glibc double versions of the unary operators (index = tj_k_unary_op). */
static double ref_unary(tj_k_unary_op op, double x)
{
    switch (op) {
    case TJ_K_ABS: return fabs(x);
    case TJ_K_NEG: return -x;
    case TJ_K_EXP: return exp(x);
    case TJ_K_LOG: return log(x);
    case TJ_K_SQRT: return sqrt(x);
    case TJ_K_RSQRT: return 1 / sqrt(x);
    case TJ_K_TANH: return tanh(x);
    case TJ_K_SIGMOID: return 1 / (1 + exp(-x));
    case TJ_K_ERF: return erf(x);
    case TJ_K_RECIPROCAL: return 1 / x;
    case TJ_K_SIN: return sin(x);
    case TJ_K_COS: return cos(x);
    case TJ_K_LOG1P: return log1p(x);
    case TJ_K_EXPM1: return expm1(x);
    case TJ_K_RELU: return x > 0 ? x : 0;
    case TJ_K_GELU: return x * 0.5 * (1 + erf(x * M_SQRT1_2));
    case TJ_K_GELU_TANH: return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case TJ_K_SILU: return x / (1 + exp(-x));
    case TJ_K_SIGN: return (0 < x) - (x < 0);
    case TJ_K_FLOOR: return floor(x);
    case TJ_K_CEIL: return ceil(x);
    case TJ_K_ROUND: return nearbyint(x);
    case TJ_K_TRUNC: return trunc(x);
    case TJ_K_FRAC: return x - trunc(x);
    case TJ_K_ASIN: return asin(x);
    case TJ_K_ACOS: return acos(x);
    case TJ_K_ATAN: return atan(x);
    case TJ_K_SINH: return sinh(x);
    case TJ_K_COSH: return cosh(x);
    case TJ_K_LOG2: return log2(x);
    case TJ_K_LOG10: return log10(x);
    case TJ_K_EXP2: return exp2(x);
    case TJ_K_MISH: return x * tanh(log1p(exp(x)));
    case TJ_K_EXP_NEG_ABS: return exp(-fabs(x));
    default: return NAN;
    }
}

/* 1003 values over [-12, 12] (and |x| for log/sqrt), an odd count so that
 * every vector width ends in a partial vector. */
#define NW 1003
static double wide_x(tj_k_unary_op op, int i)
{
    double x = -12.0 + 24.0 * i / (NW - 1);
    bool positive = op == TJ_K_LOG || op == TJ_K_SQRT || op == TJ_K_RSQRT || op == TJ_K_LOG1P || op == TJ_K_LOG2 ||
                    op == TJ_K_LOG10;
    /* asin / acos: mostly inside their domain [-1, 1] */
    if (op == TJ_K_ASIN || op == TJ_K_ACOS) return x / 11;
    return positive ? fabs(x) + 1e-3 : x;
}

Test(ew, unary_wide_range_float32_and_float64_agree_with_glibc_on_every_isa)
{
    static float xf[NW];
    static double xd[NW];
    for (size_t k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (int op = 0; op < TJ_K_UNARY_COUNT; op++) {
            for (int i = 0; i < NW; i++) xd[i] = xf[i] = (float)wide_x(op, i);
            static float of[NW];
            static double od[NW];
            tj_k_unary_args af = {op, TJ_FLOAT32}, ad = {op, TJ_FLOAT64};
            tj_k_unary_loop(NW, of, (const void *[]){xf}, &af);
            tj_k_unary_loop(NW, od, (const void *[]){xd}, &ad);
            for (int i = 0; i < NW; i++) {
                double e = ref_unary(op, xd[i]);
                cr_assert(close_to(of[i], e, 1e-5, 1e-6), "%s op %d f32(%g) = %.9g, want %.9g", test_isas[k], op, xd[i],
                          of[i], e);
                cr_assert(close_to(od[i], e, 1e-12, 1e-14), "%s op %d f64(%.17g) = %.17g, want %.17g", test_isas[k], op,
                          xd[i], od[i], e);
            }
        }
    }
}

Test(ew, unary_promotion_int64_and_bool_to_float32_except_abs_neg_relu)
{
    tj_tensor *i = i64(3, (int64_t[]){-2, 0, 3});
    expect1(tj_exp(i), TJ_FLOAT32, 3, (double[]){exp(-2.0), 1, exp(3.0)});
    expect1(tj_sqrt(tj_abs(i)), TJ_FLOAT32, 3, (double[]){sqrt(2.0), 0, sqrt(3.0)});
    expect1(tj_reciprocal(i), TJ_FLOAT32, 3, (double[]){-0.5, INFINITY, 1.0 / 3});
    test_expect_i64(tj_abs(i), 3, (int64_t[]){2, 0, 3});
    test_expect_i64(tj_neg(i), 3, (int64_t[]){2, 0, -3});
    test_expect_i64(tj_relu(i), 3, (int64_t[]){0, 0, 3});
    tj_tensor *b = b8(2, (uint8_t[]){1, 0});
    expect1(tj_sigmoid(b), TJ_FLOAT32, 2, (double[]){1 / (1 + exp(-1.0)), 0.5});
    /* int64 abs/neg wrap at INT64_MIN (PyTorch gives the same bits) */
    test_expect_i64(tj_abs(i64(1, (int64_t[]){INT64_MIN})), 1, (int64_t[]){INT64_MIN});
}

Test(ew, unary_float64_stays_float64)
{
    tj_tensor *x = f64(2, (double[]){0.5, -1.25});
    expect_tol(tj_erf(x), TJ_FLOAT64, 1, (int64_t[]){2}, (double[]){erf(0.5), erf(-1.25)}, 1e-14, 0);
    expect_tol(tj_gelu(x, "tanh"), TJ_FLOAT64, 1, (int64_t[]){2},
               (double[]){ref_unary(TJ_K_GELU_TANH, 0.5), ref_unary(TJ_K_GELU_TANH, -1.25)}, 1e-14, 0);
}

Test(ew, unary_empty_and_0dim_keep_their_shape)
{
    tj_tensor *e = test_tensor(TJ_FLOAT32, 2, (int64_t[]){0, 3}, NULL);
    expect(tj_exp(e), TJ_FLOAT32, 2, (int64_t[]){0, 3}, NULL);
    tj_tensor *s = tj_tensor_scalar_f32(-2.0f);
    expect(tj_abs(s), TJ_FLOAT32, 0, NULL, (double[]){2});
    expect(tj_gelu(s, "none"), TJ_FLOAT32, 0, NULL, (double[]){-0.04550026389635842}); /* torch */
}

Test(ew, unary_on_transposed_and_broadcast_views)
{
    /* base [2, 3] = 0..5; its transpose [3, 2] and a row broadcast to [4, 3] */
    tj_tensor *base = test_tensor(TJ_FLOAT32, 2, (int64_t[]){2, 3}, (float[]){0, 1, 2, 3, 4, 5});
    tj_tensor *t = view(base, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 0);
    expect(tj_neg(t), TJ_FLOAT32, 2, (int64_t[]){3, 2}, (double[]){-0.0, -3, -1, -4, -2, -5});
    tj_tensor *row = view(base, 2, (int64_t[]){4, 3}, (int64_t[]){0, 1}, 3);
    double want[12];
    for (int i = 0; i < 12; i++) want[i] = exp(3 + i % 3);
    expect(tj_exp(row), TJ_FLOAT32, 2, (int64_t[]){4, 3}, want);
}

/* ---- unary: errors ---- */

Test(ew, unary_dtype_and_approximate_errors_name_the_op)
{
    tj_tensor *b = b8(2, (uint8_t[]){1, 0});
    tj_tensor *i = i64(2, (int64_t[]){1, 2});
    test_expect_error(tj_neg(b), TJ_ERR_DTYPE, "aten::neg", "bool");
    test_expect_error(tj_abs(b), TJ_ERR_DTYPE, "aten::abs", "bool");
    test_expect_error(tj_relu(b), TJ_ERR_DTYPE, "aten::relu", "bool");
    test_expect_error(tj_gelu(i, "none"), TJ_ERR_DTYPE, "aten::gelu", "int64");
    test_expect_error(tj_silu(i), TJ_ERR_DTYPE, "aten::silu", "int64");
    tj_tensor *x = f32(1, (float[]){1});
    test_expect_error(tj_gelu(x, "erf"), TJ_ERR_INVALID_ARGUMENT, "aten::gelu", "'erf'");
}

/* ---- binary arithmetic ---- */

Test(ew, add_sub_with_alpha_and_broadcasting)
{
    tj_tensor *a = test_tensor(TJ_FLOAT32, 2, (int64_t[]){3, 1}, (float[]){1, 2, 3});
    tj_tensor *b = f32(4, (float[]){10, 20, 30, 40});
    expect(tj_add_alpha(a, b, tj_v_float(0.5)), TJ_FLOAT32, 2, (int64_t[]){3, 4},
           (double[]){6, 11, 16, 21, 7, 12, 17, 22, 8, 13, 18, 23});
    expect(tj_sub_alpha(a, b, tj_v_int(2)), TJ_FLOAT32, 2, (int64_t[]){3, 4},
           (double[]){-19, -39, -59, -79, -18, -38, -58, -78, -17, -37, -57, -77});
    tj_tensor *i = i64(2, (int64_t[]){5, -7});
    test_expect_i64(tj_sub_alpha(i, i64(2, (int64_t[]){1, 1}), tj_v_int(3)), 2, (int64_t[]){2, -10});
    /* int64 arithmetic wraps around instead of trapping */
    test_expect_i64(tj_add_alpha(i64(1, (int64_t[]){1}), i64(1, (int64_t[]){INT64_MAX}), tj_v_int(2)), 1,
                    (int64_t[]){-1});
}

/* PyTorch 1.13 converts alpha, addmm's beta / alpha and lerp's weight with
 * Scalar::to<float> and refuses 1e300 ("value cannot be converted to type
 * float without overflow"); it wraps add.Scalar's `other` and mul.Scalar's
 * into a tensor instead, which becomes inf. inf itself converts. */
Test(ew, scalar_args_that_overflow_float32_are_refused)
{
    tj_tensor *x = f32(2, (float[]){1, 2}), *y = f32(2, (float[]){3, 4});
    tj_value big = tj_v_float(1e300), one = tj_v_int(1);
    test_expect_error(tj_add_alpha(x, y, big), TJ_ERR_INVALID_ARGUMENT, "aten::add.Tensor", "alpha 1e+300");
    test_expect_error(tj_sub_alpha(x, y, tj_v_float(-1e300)), TJ_ERR_INVALID_ARGUMENT, "aten::sub.Tensor",
                      "alpha -1e+300 cannot be converted to type float32 without overflow");
    test_expect_error(tj_add_(x, y, big), TJ_ERR_INVALID_ARGUMENT, "aten::add_.Tensor", "alpha 1e+300");
    tj_tensor *m = test_tensor(TJ_FLOAT32, 2, (int64_t[]){1, 1}, (float[]){2});
    test_expect_error(tj_addmm(m, m, m, big, one), TJ_ERR_INVALID_ARGUMENT, "aten::addmm", "beta 1e+300");
    test_expect_error(tj_addmm(m, m, m, one, big), TJ_ERR_INVALID_ARGUMENT, "aten::addmm", "alpha 1e+300");
    test_expect_error(tj_lerp(x, y, big), TJ_ERR_INVALID_ARGUMENT, "aten::lerp.Scalar", "weight 1e+300");
    test_expect_error(tj_lerp_(x, y, big), TJ_ERR_INVALID_ARGUMENT, "aten::lerp_.Scalar", "weight 1e+300");
    expect1(x, TJ_FLOAT32, 2, (double[]){1, 2}); /* the refused in-place calls wrote nothing */
    /* converted as PyTorch converts them (torch) */
    expect1(tj_add_alpha(x, y, tj_v_float(INFINITY)), TJ_FLOAT32, 2, (double[]){INFINITY, INFINITY});
    expect1(tj_add_scalar(x, big), TJ_FLOAT32, 2, (double[]){INFINITY, INFINITY});
    expect1(tj_mul_scalar(x, big), TJ_FLOAT32, 2, (double[]){INFINITY, INFINITY});
    tj_tensor *xd = f64(1, (double[]){1});
    expect1(tj_add_alpha(xd, xd, big), TJ_FLOAT64, 1, (double[]){1e300});
    tj_tensor *md = test_tensor(TJ_FLOAT64, 2, (int64_t[]){1, 1}, (double[]){2});
    expect(tj_addmm(md, md, md, one, big), TJ_FLOAT64, 2, (int64_t[]){1, 1}, (double[]){4e300});
}

Test(ew, add_scalar_promotion_follows_scalar_kind)
{
    tj_tensor *i = i64(2, (int64_t[]){3, -2});
    test_expect_i64(tj_add_scalar(i, tj_v_int(7)), 2, (int64_t[]){10, 5});
    expect1(tj_add_scalar(i, tj_v_float(1.5)), TJ_FLOAT32, 2, (double[]){4.5, -0.5});
    test_expect_i64(tj_add_scalar(b8(2, (uint8_t[]){1, 0}), tj_v_int(2)), 2, (int64_t[]){3, 2});
    /* add.Scalar(self, other, alpha): 1 + 2 * 1.5 (torch) */
    tj_value args[3] = {tj_v_tensor(b8(2, (uint8_t[]){1, 0})), tj_v_float(1.5), tj_v_int(2)}, out[1];
    cr_assert_eq(tj_call("aten::add.Scalar", args, 3, out), TJ_OK, "%s", tj_last_error());
    expect1(out[0].u.t, TJ_FLOAT32, 2, (double[]){4, 3});
    expect1(tj_sub_scalar(f32(2, (float[]){1, 2}), tj_v_int(3)), TJ_FLOAT32, 2, (double[]){-2, -1});
}

Test(ew, zero_dim_operands_raise_the_dtype_only_from_a_higher_category)
{
    tj_tensor *m = test_tensor(TJ_FLOAT32, 2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
    tj_tensor *d0 = tj_tensor_scalar_f64(0.5);
    expect(tj_add(m, d0), TJ_FLOAT32, 2, (int64_t[]){2, 3}, (double[]){1.5, 2.5, 3.5, 4.5, 5.5, 6.5});
    tj_tensor *im = test_tensor(TJ_INT64, 2, (int64_t[]){2, 3}, (int64_t[]){1, 2, 3, 4, 5, 6});
    tj_tensor *r = tj_mul(im, d0);
    expect(r, TJ_FLOAT64, 2, (int64_t[]){2, 3}, (double[]){0.5, 1, 1.5, 2, 2.5, 3});
    expect(tj_mul(im, tj_tensor_scalar_f32(2)), TJ_FLOAT32, 2, (int64_t[]){2, 3}, (double[]){2, 4, 6, 8, 10, 12});
    /* two 0-dim operands: a 0-dim result of their promoted dtype */
    expect(tj_add(tj_tensor_scalar_f32(1), tj_tensor_scalar_f64(2)), TJ_FLOAT64, 0, NULL, (double[]){3});
}

Test(ew, bool_arithmetic_is_logical)
{
    tj_tensor *a = b8(4, (uint8_t[]){1, 1, 0, 0}), *b = b8(4, (uint8_t[]){1, 0, 1, 0});
    test_expect_bool(tj_add(a, b), 4, (uint8_t[]){1, 1, 1, 0});
    test_expect_bool(tj_mul(a, b), 4, (uint8_t[]){1, 0, 0, 0});
    test_expect_bool(tj_maximum(a, b), 4, (uint8_t[]){1, 1, 1, 0});
    test_expect_bool(tj_minimum(a, b), 4, (uint8_t[]){1, 0, 0, 0});
    expect(tj_mul(test_tensor(TJ_BOOL, 2, (int64_t[]){2, 1}, (uint8_t[]){1, 0}), f32(2, (float[]){2, 3})),
           TJ_FLOAT32, 2, (int64_t[]){2, 2}, (double[]){2, 3, 0, 0});
}

Test(ew, nonfinite_arithmetic_follows_ieee)
{
    tj_tensor *a = f32(5, (float[]){INFINITY, INFINITY, NAN, 0, 3e38f});
    tj_tensor *b = f32(5, (float[]){-INFINITY, 0, 1, INFINITY, 3e38f});
    expect1(tj_add(a, b), TJ_FLOAT32, 5, (double[]){NAN, INFINITY, NAN, INFINITY, INFINITY});
    expect1(tj_mul(a, b), TJ_FLOAT32, 5, (double[]){-INFINITY, NAN, NAN, NAN, INFINITY});
    expect1(tj_div(f32(4, (float[]){1, -1, 0, -2}), f32(4, (float[]){0, 0, 0, -0.0f})), TJ_FLOAT32, 4,
            (double[]){INFINITY, -INFINITY, NAN, INFINITY});
}

Test(ew, true_division_of_integers_gives_float32)
{
    tj_tensor *a = i64(4, (int64_t[]){1, 0, 7, -7}), *b = i64(4, (int64_t[]){0, 0, 2, 2});
    expect1(tj_div(a, b), TJ_FLOAT32, 4, (double[]){INFINITY, NAN, 3.5, -3.5});
    expect1(tj_div_scalar(a, tj_v_int(2)), TJ_FLOAT32, 4, (double[]){0.5, 0, 3.5, -3.5});
    expect1(tj_div_mode(a, b, NULL), TJ_FLOAT32, 4, (double[]){INFINITY, NAN, 3.5, -3.5});
}

/* torch */
static const float diva[12] = {-7, 7, -0.5f, 1, 5, -0.0f, 3, INFINITY, NAN, 1, 0.3f, -1};
static const float divb[12] = {2, -2, 0, 0.1f, INFINITY, 2, -INFINITY, 2, 1, 0, 0.1f, 0};

Test(ew, div_rounding_modes_on_floats_match_torch)
{
    tj_tensor *a = f32(12, diva), *b = f32(12, divb);
    /* trunc is trunc(a / b) of the rounded quotient (1 / 0.1f gives 10) */
    expect1(tj_div_mode(a, b, "trunc"), TJ_FLOAT32, 12,
            (double[]){-3, -3, -INFINITY, 10, 0, -0.0, -0.0, INFINITY, NAN, INFINITY, 3, -INFINITY});
    /* floor is Python's floor division of the exact quotient (1 / 0.1f gives 9) */
    expect1(tj_div_mode(a, b, "floor"), TJ_FLOAT32, 12,
            (double[]){-4, -4, -INFINITY, 9, 0, -0.0, -1, NAN, NAN, INFINITY, 3, -INFINITY});
}

Test(ew, div_rounding_modes_on_int64_match_torch)
{
    tj_tensor *a = i64(7, (int64_t[]){-7, 7, -8, -9, 0, 9, -1}), *b = i64(7, (int64_t[]){2, -2, 3, -1, 5, -4, 3});
    test_expect_i64(tj_div_mode(a, b, "trunc"), 7, (int64_t[]){-3, -3, -2, 9, 0, -2, 0});
    test_expect_i64(tj_div_mode(a, b, "floor"), 7, (int64_t[]){-4, -4, -3, 9, 0, -3, -1});
    /* INT64_MIN / -1 wraps (PyTorch traps with SIGFPE) */
    test_expect_i64(tj_div_mode(i64(1, (int64_t[]){INT64_MIN}), i64(1, (int64_t[]){-1}), "floor"), 1,
                    (int64_t[]){INT64_MIN});
    /* bool / int64 floor: int64 (torch) */
    test_expect_i64(tj_div_mode(b8(1, (uint8_t[]){1}), i64(1, (int64_t[]){2}), "floor"), 1, (int64_t[]){0});
}

Test(ew, div_rounding_mode_errors)
{
    tj_tensor *a = i64(2, (int64_t[]){5, 3}), *z = i64(2, (int64_t[]){1, 0});
    test_expect_error(tj_div_mode(a, z, "floor"), TJ_ERR_INVALID_ARGUMENT, "aten::div.Tensor_mode", "division by zero");
    test_expect_error(tj_div_mode(a, z, "trunc"), TJ_ERR_INVALID_ARGUMENT, "aten::div.Tensor_mode", "division by zero");
    test_expect_error(tj_div_mode(a, a, "round"), TJ_ERR_INVALID_ARGUMENT, "aten::div.Tensor_mode", "'round'");
    tj_tensor *b = b8(1, (uint8_t[]){1});
    test_expect_error(tj_div_mode(b, b, "trunc"), TJ_ERR_DTYPE, "aten::div.Tensor_mode", "bool");
    /* float division by zero is not an error */
    expect1(tj_div_mode(f32(1, (float[]){5}), f32(1, (float[]){0}), "floor"), TJ_FLOAT32, 1,
            (double[]){INFINITY});
}

/* ---- pow ---- */

/* torch */
static const float px[9] = {-2, -0.5f, 0, 0.25f, 3, INFINITY, -INFINITY, NAN, -0.0f};

Test(ew, pow_scalar_shortcuts_and_general_exponent_match_torch)
{
    tj_tensor *x = f32(9, px);
    struct {
        double e;
        double want[9];
    } cases[] = {
        {2, {4.0, 0.25, 0.0, 0.0625, 9.0, INFINITY, INFINITY, NAN, 0.0}},
        {3, {-8.0, -0.125, 0.0, 0.015625, 27.0, INFINITY, -INFINITY, NAN, -0.0}},
        {0.5, {NAN, NAN, 0.0, 0.5, 1.7320507764816284, INFINITY, NAN, NAN, -0.0}},
        {-0.5, {NAN, NAN, INFINITY, 2.0, 0.5773502588272095, 0.0, NAN, NAN, -INFINITY}},
        {-1, {-0.5, -2.0, INFINITY, 4.0, 0.3333333432674408, 0.0, -0.0, NAN, -INFINITY}},
        {-2, {0.25, 4.0, INFINITY, 16.0, 0.1111111119389534, 0.0, 0.0, NAN, INFINITY}},
        {2.5, {NAN, NAN, 0.0, 0.03125, 15.588457107543945, INFINITY, INFINITY, NAN, 0.0}},
        {0, {1, 1, 1, 1, 1, 1, 1, 1, 1}},
        {1, {-2.0, -0.5, 0.0, 0.25, 3.0, INFINITY, -INFINITY, NAN, -0.0}},
    };
    for (size_t k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            tj_value e = cases[c].e == (int)cases[c].e ? tj_v_int((int64_t)cases[c].e) : tj_v_float(cases[c].e);
            expect1(tj_pow_scalar(x, e), TJ_FLOAT32, 9, cases[c].want);
        }
    }
}

Test(ew, pow_tensor_special_values_and_negative_bases)
{
    /* torch: 1^nan=1, nan^0=1, 0^-2=inf, inf^-1=0, (-inf)^3=-inf, 2^inf=inf, 0.5^-inf=inf */
    tj_tensor *a = f32(7, (float[]){1, NAN, 0, INFINITY, -INFINITY, 2, 0.5f});
    tj_tensor *b = f32(7, (float[]){NAN, 0, -2, -1, 3, INFINITY, -INFINITY});
    expect1(tj_pow(a, b), TJ_FLOAT32, 7, (double[]){1, 1, INFINITY, 0, -INFINITY, INFINITY, INFINITY});
    expect1(tj_pow(f32(4, (float[]){-2, -2, -3, -1.5f}), f32(4, (float[]){2, 3, -1, 0.5f})), TJ_FLOAT32, 4,
            (double[]){4, -8, -1.0 / 3, NAN});
}

Test(ew, pow_int64_is_exact_and_wraps)
{
    /* torch: 2^63 wraps to INT64_MIN; negative exponents give 1, +-1 or 0 */
    tj_tensor *a = i64(9, (int64_t[]){2, 3, 1, -1, -1, 2, 0, 5, -3});
    tj_tensor *b = i64(9, (int64_t[]){63, 50, -3, -3, -2, -1, -2, 0, 3});
    test_expect_i64(tj_pow(a, b), 9, (int64_t[]){INT64_MIN, 6048575297968530377LL, 1, -1, 1, 0, 0, 1, -27});
    test_expect_i64(tj_pow_scalar(i64(3, (int64_t[]){2, -3, 7}), tj_v_int(3)), 3, (int64_t[]){8, -27, 343});
    test_expect_i64(tj_pow_scalar(b8(2, (uint8_t[]){1, 0}), tj_v_int(2)), 2, (int64_t[]){1, 0});
    expect1(tj_pow_scalar(i64(2, (int64_t[]){4, 2}), tj_v_float(0.5)), TJ_FLOAT32, 2, (double[]){2, sqrt(2.0)});
}

Test(ew, pow_errors)
{
    tj_tensor *i = i64(2, (int64_t[]){2, 3});
    test_expect_error(tj_pow_scalar(i, tj_v_int(-1)), TJ_ERR_INVALID_ARGUMENT, "aten::pow.Tensor_Scalar", "negative");
    tj_tensor *b = b8(1, (uint8_t[]){1});
    test_expect_error(tj_pow(b, b), TJ_ERR_DTYPE, "aten::pow.Tensor_Tensor", "bool");
}

/* ---- maximum / minimum / logaddexp ---- */

Test(ew, maximum_minimum_propagate_nan_and_promote)
{
    tj_tensor *a = f32(5, (float[]){1, NAN, 3, -INFINITY, 2}), *b = f32(5, (float[]){NAN, 2, 1, 5, 2});
    expect1(tj_maximum(a, b), TJ_FLOAT32, 5, (double[]){NAN, NAN, 3, 5, 2});
    expect1(tj_minimum(a, b), TJ_FLOAT32, 5, (double[]){NAN, NAN, 1, -INFINITY, 2});
    expect1(tj_maximum(i64(2, (int64_t[]){3, -2}), tj_tensor_scalar_f64(2.5)), TJ_FLOAT64, 2, (double[]){3, 2.5});
    test_expect_i64(tj_minimum(i64(2, (int64_t[]){3, -2}), i64(1, (int64_t[]){0})), 2, (int64_t[]){0, -2});
}

Test(ew, logaddexp_is_stable_and_handles_infinities)
{
    /* torch */
    float la[10] = {-INFINITY, INFINITY, NAN, 1, -INFINITY, 0, 100, -100, INFINITY, 3};
    float lb[10] = {-INFINITY, INFINITY, 1, NAN, 2, 0, -100, 100, -INFINITY, 2};
    double want[10] = {-INFINITY, INFINITY, NAN, NAN, 2.0, 0.6931471805599453, 100, 100, INFINITY, 3.313261687518223};
    for (size_t k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        expect1(tj_logaddexp(f32(10, la), f32(10, lb)), TJ_FLOAT32, 10, want);
        double da[10], db[10];
        for (int i = 0; i < 10; i++) da[i] = la[i], db[i] = lb[i];
        expect_tol(tj_logaddexp(f64(10, da), f64(10, db)), TJ_FLOAT64, 1, (int64_t[]){10}, want, 1e-14, 0);
    }
    test_expect_error(tj_logaddexp(i64(1, (int64_t[]){1}), i64(1, (int64_t[]){2})), TJ_ERR_DTYPE, "aten::logaddexp",
                      "int64");
}

/* ---- comparisons ---- */

Test(ew, comparisons_give_bool_with_nan_false_except_ne)
{
    tj_tensor *a = f32(7, (float[]){NAN, NAN, 1, INFINITY, 0.0f, 1, 2});
    tj_tensor *b = f32(7, (float[]){NAN, 1, NAN, INFINITY, -0.0f, 2, 1});
    test_expect_bool(tj_eq(a, b), 7, (uint8_t[]){0, 0, 0, 1, 1, 0, 0});
    test_expect_bool(tj_ne(a, b), 7, (uint8_t[]){1, 1, 1, 0, 0, 1, 1});
    test_expect_bool(tj_lt(a, b), 7, (uint8_t[]){0, 0, 0, 0, 0, 1, 0});
    test_expect_bool(tj_le(a, b), 7, (uint8_t[]){0, 0, 0, 1, 1, 1, 0});
    test_expect_bool(tj_gt(a, b), 7, (uint8_t[]){0, 0, 0, 0, 0, 0, 1});
    test_expect_bool(tj_ge(a, b), 7, (uint8_t[]){0, 0, 0, 1, 1, 0, 1});
}

Test(ew, comparisons_compute_in_the_promoted_dtype)
{
    /* int64 vs float32 compares in float32: 16777217 rounds to 16777216 */
    test_expect_bool(tj_eq(i64(2, (int64_t[]){16777217, 3}), f32(2, (float[]){16777216, 3})), 2, (uint8_t[]){1, 1});
    /* a float Scalar is converted to float32 first: 0.1f == 0.1 */
    test_expect_bool(tj_eq_scalar(f32(2, (float[]){0.1f, 0.2f}), tj_v_float(0.1)), 2, (uint8_t[]){1, 0});
    test_expect_bool(tj_gt_scalar(f32(2, (float[]){0.1f, 0.2f}), tj_v_float(0.1)), 2, (uint8_t[]){0, 1});
    test_expect_bool(tj_gt_scalar(i64(3, (int64_t[]){1, 2, 3}), tj_v_float(1.5)), 3, (uint8_t[]){0, 1, 1});
    test_expect_bool(tj_eq_scalar(b8(2, (uint8_t[]){1, 0}), tj_v_int(0)), 2, (uint8_t[]){0, 1});
    test_expect_bool(tj_gt_scalar(f32(2, (float[]){1, NAN}), tj_v_float(NAN)), 2, (uint8_t[]){0, 0});
    tj_tensor *r =
        tj_gt(test_tensor(TJ_FLOAT32, 2, (int64_t[]){3, 1}, (float[]){1, 2, 3}), f32(2, (float[]){1.5f, 2.5f}));
    cr_assert_eq(tj_tensor_shape(r)[0], 3);
    test_expect_bool(r, 6, (uint8_t[]){0, 0, 1, 0, 1, 1});
}

/* x < 0.5, x <= 0.5, x >= 0.5, x != 0.5 */
static tj_status scalar_compares(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n;
    out[0] = tj_lt_scalar(in[0], tj_v_float(0.5));
    out[1] = tj_le_scalar(in[0], tj_v_float(0.5));
    out[2] = tj_ge_scalar(in[0], tj_v_float(0.5));
    out[3] = tj_ne_scalar(in[0], tj_v_float(0.5));
    *n_out = 4;
    return out[0] && out[1] && out[2] && out[3] ? TJ_OK : tj_last_status();
}

/* Values from PyTorch 1.13: torch.lt(a, 0.5) and so on, a as below. */
Test(ew, scalar_comparisons_give_pytorchs_answers)
{
    tj_tensor *a = f32(7, (float[]){NAN, -INFINITY, -1, 0.1f, 0.5f, 2, INFINITY});
    test_expect_bool(tj_lt_scalar(a, tj_v_float(0.5)), 7, (uint8_t[]){0, 1, 1, 1, 0, 0, 0});
    test_expect_bool(tj_le_scalar(a, tj_v_float(0.5)), 7, (uint8_t[]){0, 1, 1, 1, 1, 0, 0});
    test_expect_bool(tj_ge_scalar(a, tj_v_float(0.5)), 7, (uint8_t[]){0, 0, 0, 0, 1, 1, 1});
    test_expect_bool(tj_ne_scalar(a, tj_v_float(0.5)), 7, (uint8_t[]){1, 1, 1, 1, 0, 1, 1});
    /* int64 against a float Scalar compares in float32, against an int in int64 */
    tj_tensor *i = i64(3, (int64_t[]){1, 2, 3});
    test_expect_bool(tj_lt_scalar(i, tj_v_float(2.5)), 3, (uint8_t[]){1, 1, 0});
    test_expect_bool(tj_lt_scalar(i, tj_v_int(2)), 3, (uint8_t[]){1, 0, 0});
    test_expect_bool(tj_le_scalar(i, tj_v_int(2)), 3, (uint8_t[]){1, 1, 0});
    test_expect_bool(tj_ge_scalar(i, tj_v_int(2)), 3, (uint8_t[]){0, 1, 1});
    test_expect_bool(tj_ne_scalar(i, tj_v_float(2.5)), 3, (uint8_t[]){1, 1, 1});
    /* 0.1 becomes 0.1f: equal, so lt false and le true; a nan Scalar: only ne */
    tj_tensor *f = f32(2, (float[]){0.1f, 0.2f});
    test_expect_bool(tj_lt_scalar(f, tj_v_float(0.1)), 2, (uint8_t[]){0, 0});
    test_expect_bool(tj_le_scalar(f, tj_v_float(0.1)), 2, (uint8_t[]){1, 0});
    test_expect_bool(tj_ge_scalar(f, tj_v_float(NAN)), 2, (uint8_t[]){0, 0});
    test_expect_bool(tj_ne_scalar(f, tj_v_float(NAN)), 2, (uint8_t[]){1, 1});
}

Test(ew, scalar_comparisons_are_recorded_and_lowered_to_primitives)
{
    tj_tensor *x = f32(4, (float[]){-1, 0.5f, NAN, 3});
    tj_graph *g = tj_make_fx(scalar_compares, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    const char *names[4] = {"aten::lt.Scalar", "aten::le.Scalar", "aten::ge.Scalar", "aten::ne.Scalar"};
    for (int k = 0; k < 4; k++) cr_expect_eq(tj_graph_count_op(g, tj_op_find(names[k])), 1, "%s", names[k]);
    tj_graph_free(g);
    /* the core table lowers them to eq / lt / where with the kernels' answers */
    tj_decomp_table *core = tj_core_decompositions();
    g = tj_make_fx(scalar_compares, NULL, &x, 1, core, TJ_TRACE_FAKE);
    tj_decomp_table_free(core);
    cr_assert_not_null(g, "%s", tj_last_error());
    for (int n = 0; n < tj_graph_num_nodes(g); n++)
        if (tj_graph_node_kind(g, n) == TJ_NODE_CALL)
            cr_expect_eq(tj_op_kind_of(tj_graph_node_op(g, n)), TJ_OP_PRIMITIVE, "%s",
                         tj_op_name(tj_graph_node_op(g, n)));
    tj_tensor *outs[4];
    cr_assert_eq(tj_graph_run(g, &x, 1, outs), TJ_OK, "%s", tj_last_error());
    tj_graph_free(g);
    test_expect_bool(outs[0], 4, (uint8_t[]){1, 0, 0, 0});
    test_expect_bool(outs[1], 4, (uint8_t[]){1, 1, 0, 0});
    test_expect_bool(outs[2], 4, (uint8_t[]){0, 1, 0, 1});
    test_expect_bool(outs[3], 4, (uint8_t[]){1, 0, 1, 1});
}

/* ---- where / clamp / masked_fill ---- */

Test(ew, where_broadcasts_three_ways_and_promotes)
{
    tj_tensor *c = test_tensor(TJ_BOOL, 2, (int64_t[]){3, 1}, (uint8_t[]){1, 0, 1});
    tj_tensor *a = f32(4, (float[]){1, 2, 3, 4});
    tj_tensor *r = tj_where(c, a, tj_tensor_scalar_f64(-1));
    expect(r, TJ_FLOAT32, 2, (int64_t[]){3, 4}, (double[]){1, 2, 3, 4, -1, -1, -1, -1, 1, 2, 3, 4});
    expect1(tj_where(b8(2, (uint8_t[]){1, 0}), i64(2, (int64_t[]){3, -2}), f32(2, (float[]){0.5f, 0.25f})),
            TJ_FLOAT32, 2, (double[]){3, 0.25});
    /* nan / inf in the branch not taken do not leak */
    expect1(tj_where(b8(2, (uint8_t[]){1, 0}), f32(2, (float[]){1, NAN}), f32(2, (float[]){INFINITY, 2})),
            TJ_FLOAT32, 2, (double[]){1, 2});
    expect(tj_where(test_tensor(TJ_BOOL, 2, (int64_t[]){0, 1}, NULL), a, a), TJ_FLOAT32, 2, (int64_t[]){0, 4}, NULL);
}

Test(ew, where_errors_name_the_op)
{
    tj_tensor *a = f32(2, (float[]){1, 2});
    test_expect_error(tj_where(i64(2, (int64_t[]){1, 0}), a, a), TJ_ERR_DTYPE, "aten::where.self", "bool");
    test_expect_error(tj_where(b8(3, (uint8_t[]){1, 0, 1}), a, a), TJ_ERR_SHAPE, "aten::where.self", "[3]");
}

Test(ew, clamp_scalar_bounds_follow_pytorch_nan_rules)
{
    tj_tensor *x = f32(5, (float[]){NAN, -INFINITY, INFINITY, -3, 0.5f});
    expect1(tj_clamp(x, tj_v_float(-1), tj_v_float(1)), TJ_FLOAT32, 5, (double[]){NAN, -1, 1, -1, 0.5});
    /* min > max: everything becomes max */
    expect1(tj_clamp(x, tj_v_float(2), tj_v_float(1)), TJ_FLOAT32, 5, (double[]){NAN, 1, 1, 1, 1});
    /* a single nan bound is ignored; with both bounds it fills nan (torch) */
    expect1(tj_clamp(x, tj_v_float(NAN), tj_v_none()), TJ_FLOAT32, 5, (double[]){NAN, -INFINITY, INFINITY, -3, 0.5});
    expect1(tj_clamp(x, tj_v_float(0), tj_v_float(NAN)), TJ_FLOAT32, 5, (double[]){NAN, NAN, NAN, NAN, NAN});
    expect1(tj_clamp(x, tj_v_none(), tj_v_int(0)), TJ_FLOAT32, 5, (double[]){NAN, -INFINITY, 0, -3, 0});
    tj_tensor *i = i64(4, (int64_t[]){-5, 0, 5, 9});
    test_expect_i64(tj_clamp(i, tj_v_int(0), tj_v_int(5)), 4, (int64_t[]){0, 0, 5, 5});
    expect1(tj_clamp(i, tj_v_float(0.5), tj_v_float(1.5)), TJ_FLOAT32, 4, (double[]){0.5, 0.5, 1.5, 1.5});
    test_expect_i64(tj_clamp(b8(2, (uint8_t[]){1, 0}), tj_v_int(0), tj_v_int(1)), 2, (int64_t[]){1, 0});
}

Test(ew, clamp_tensor_bounds_broadcast_and_propagate_nan)
{
    tj_tensor *x = f32(4, (float[]){-2, 0.5f, 3, NAN});
    tj_tensor *lo = test_tensor(TJ_FLOAT32, 2, (int64_t[]){2, 1}, (float[]){0, NAN});
    tj_tensor *hi = f32(4, (float[]){1, 1, 1, 1});
    expect(tj_clamp_tensor(x, lo, hi), TJ_FLOAT32, 2, (int64_t[]){2, 4},
           (double[]){0, 0.5, 1, NAN, NAN, NAN, NAN, NAN});
    expect(tj_clamp_tensor(x, lo, NULL), TJ_FLOAT32, 2, (int64_t[]){2, 4},
           (double[]){0, 0.5, 3, NAN, NAN, NAN, NAN, NAN});
    expect1(tj_clamp_tensor(x, NULL, f32(1, (float[]){NAN})), TJ_FLOAT32, 4, (double[]){NAN, NAN, NAN, NAN});
    /* int64 self with a float64 bound: float64 (torch) */
    expect1(tj_clamp_tensor(i64(2, (int64_t[]){3, -2}), NULL, f64(2, (double[]){0.5, 1.5})), TJ_FLOAT64, 2,
            (double[]){0.5, -2});
}

/* PyTorch 1.13: clamp.Tensor with one bound runs maximum / minimum, which
 * take bool masks (clamp(b, lo) == b | lo, clamp(b, None, hi) == b & hi; a
 * bool result needs every operand bool); with both bounds it refuses bool
 * (tested in clamp_errors). */
Test(ew, clamp_tensor_with_one_bool_bound_gives_bool)
{
    tj_tensor *b = b8(4, (uint8_t[]){1, 0, 1, 0});
    tj_tensor *lo = b8(4, (uint8_t[]){0, 0, 1, 1}), *hi = b8(4, (uint8_t[]){1, 0, 0, 1});
    test_expect_bool(tj_clamp_tensor(b, lo, NULL), 4, (uint8_t[]){1, 0, 1, 1});
    test_expect_bool(tj_clamp_tensor(b, NULL, hi), 4, (uint8_t[]){1, 0, 0, 0});
    /* a 0-dim bound broadcasts (torch: [True, True]) */
    test_expect_bool(tj_clamp_tensor(b8(2, (uint8_t[]){1, 0}), test_tensor(TJ_BOOL, 0, NULL, (uint8_t[]){1}), NULL), 2,
                     (uint8_t[]){1, 1});
}

Test(ew, clamp_errors)
{
    tj_tensor *x = f32(2, (float[]){1, 2});
    test_expect_error(tj_clamp(x, tj_v_none(), tj_v_none()), TJ_ERR_INVALID_ARGUMENT, "aten::clamp", "min");
    test_expect_error(tj_clamp_tensor(x, NULL, NULL), TJ_ERR_INVALID_ARGUMENT, "aten::clamp.Tensor", "min");
    tj_tensor *b = b8(1, (uint8_t[]){1});
    test_expect_error(tj_clamp_tensor(b, b, b), TJ_ERR_DTYPE, "aten::clamp.Tensor", "bool");
    test_expect_error(tj_clamp(b, tj_v_bool(false), tj_v_none()), TJ_ERR_DTYPE, "aten::clamp", "bool");
    test_expect_error(tj_clamp(i64(1, (int64_t[]){1}), tj_v_float(1e300), tj_v_none()), TJ_ERR_INVALID_ARGUMENT,
                      "aten::clamp", "overflow");
    test_expect_error(tj_clamp_tensor(x, f32(3, (float[]){0, 0, 0}), NULL), TJ_ERR_SHAPE, "aten::clamp.Tensor", "[3]");
}

Test(ew, masked_fill_broadcasts_self_with_mask_and_keeps_self_dtype)
{
    tj_tensor *x = test_tensor(TJ_FLOAT32, 2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
    expect(tj_masked_fill(x, b8(3, (uint8_t[]){1, 0, 1}), tj_v_float(-1.5)), TJ_FLOAT32, 2, (int64_t[]){2, 3},
           (double[]){-1.5, 2, -1.5, -1.5, 5, -1.5});
    /* self [1] with mask [2]: the result is [2] (torch) */
    expect1(tj_masked_fill(f32(1, (float[]){0}), b8(2, (uint8_t[]){1, 0}), tj_v_int(2)), TJ_FLOAT32, 2,
            (double[]){2, 0});
    /* an int64 self truncates a float value; a bool self takes value != 0 */
    test_expect_i64(tj_masked_fill(i64(2, (int64_t[]){3, -2}), b8(2, (uint8_t[]){1, 1}), tj_v_float(-2.7)), 2,
                    (int64_t[]){-2, -2});
    test_expect_bool(tj_masked_fill(b8(2, (uint8_t[]){1, 0}), b8(2, (uint8_t[]){1, 1}), tj_v_float(2.5)), 2,
                     (uint8_t[]){1, 1});
    expect1(tj_masked_fill(f32(2, (float[]){1, 2}), b8(2, (uint8_t[]){0, 1}), tj_v_float(NAN)), TJ_FLOAT32, 2,
            (double[]){1, NAN});
}

Test(ew, masked_fill_errors)
{
    tj_tensor *x = f32(2, (float[]){1, 2});
    test_expect_error(tj_masked_fill(x, i64(2, (int64_t[]){1, 0}), tj_v_int(1)), TJ_ERR_DTYPE,
                      "aten::masked_fill.Scalar",
                      "bool");
    tj_tensor *m = b8(2, (uint8_t[]){1, 0});
    test_expect_error(tj_masked_fill(i64(2, (int64_t[]){1, 2}), m, tj_v_float(NAN)), TJ_ERR_INVALID_ARGUMENT,
                      "aten::masked_fill.Scalar", "overflow");
    test_expect_error(tj_masked_fill(x, m, tj_v_float(1e300)), TJ_ERR_INVALID_ARGUMENT, "aten::masked_fill.Scalar",
                      "float32");
    test_expect_error(tj_masked_fill(x, b8(3, (uint8_t[]){1, 0, 1}), tj_v_int(0)), TJ_ERR_SHAPE,
                      "aten::masked_fill.Scalar", "broadcast");
}

/* ---- backward operators ---- */

/* torch: grad, x and the results of the backward operators */
static const float bg[8] = {1, -2, 0.5f, 3, 1, 1, 1, 2};
static const float bx[8] = {-3, -1, -0.1f, 0, 0.7f, 2, 5, NAN};

Test(ew, gelu_backward_matches_torch_on_every_isa)
{
    double none[8] = {-0.011945647187530994, 0.16663093864917755, 0.21023845672607422, 1.5, 0.9766141176223755,
                      1.0852317810058594, 1.000007152557373, NAN};
    double tanh_[8] = {-0.011584296822547913, 0.1659281849861145, 0.21023909747600555, 1.5, 0.9763572216033936,
                       1.0860992670059204, 1.0000020265579224, NAN};
    for (size_t k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        expect1(tj_gelu_backward(f32(8, bg), f32(8, bx), "none"), TJ_FLOAT32, 8, none);
        expect1(tj_gelu_backward(f32(8, bg), f32(8, bx), "tanh"), TJ_FLOAT32, 8, tanh_);
    }
}

Test(ew, sigmoid_tanh_threshold_backward_match_torch)
{
    tj_tensor *g = f32(8, bg);
    tj_tensor *sy = f32(8, (float[]){0.04742587357759476f, 0.2689414322376251f, 0.47502079606056213f, 0.5f,
                                     0.6681877374649048f, 0.8807970285415649f, 0.9933071732521057f, NAN});
    expect1(tj_sigmoid_backward(g, sy), TJ_FLOAT32, 8,
            (double[]){0.045176658779382706, -0.3932238817214966, 0.12468802183866501, 0.75, 0.2217128872871399,
                       0.10499362647533417, 0.0066480329260230064, NAN});
    tj_tensor *ty = f32(8, (float[]){-0.9950547814369202f, -0.7615941762924194f, -0.0996679961681366f, 0,
                                     0.6043677926063538f, 0.9640275835990906f, 0.9999092221260071f, NAN});
    expect1(tj_tanh_backward(g, ty), TJ_FLOAT32, 8,
            (double[]){0.00986598152667284, -0.8399485945701599, 0.4950331449508667, 3.0, 0.6347395777702332,
                       0.07065081596374512, 0.0001815475116018206, NAN});
    /* self <= threshold gives 0, so a nan self lets the gradient through */
    expect1(tj_threshold_backward(g, f32(8, bx), tj_v_float(0.5)), TJ_FLOAT32, 8,
            (double[]){0, 0, 0, 0, 1, 1, 1, 2});
}

Test(ew, backward_operators_promote_and_broadcast)
{
    /* torch: tanh_backward(f32[2], f64 0-dim) -> float32; (f32[2], f64[2]) -> float64 */
    tj_tensor *g = f32(2, (float[]){1.5f, -2});
    expect1(tj_tanh_backward(g, tj_tensor_scalar_f64(2)), TJ_FLOAT32, 2, (double[]){-4.5, 6});
    expect1(tj_tanh_backward(g, f64(2, (double[]){1, 2})), TJ_FLOAT64, 2, (double[]){0, 6});
    test_expect_i64(tj_threshold_backward(i64(2, (int64_t[]){1, 2}), i64(2, (int64_t[]){1, -2}), tj_v_int(0)), 2,
                    (int64_t[]){1, 0});
    expect1(tj_threshold_backward(g, tj_tensor_scalar_f32(1), tj_v_int(0)), TJ_FLOAT32, 2, (double[]){1.5, -2});
    expect(tj_gelu_backward(test_tensor(TJ_FLOAT32, 1, (int64_t[]){0}, NULL),
                            test_tensor(TJ_FLOAT32, 1, (int64_t[]){0}, NULL), "tanh"),
           TJ_FLOAT32, 1, (int64_t[]){0}, NULL);
}

Test(ew, backward_errors_name_the_op)
{
    tj_tensor *i = i64(2, (int64_t[]){1, 2}), *x = f32(2, (float[]){1, 2});
    test_expect_error(tj_sigmoid_backward(i, i), TJ_ERR_DTYPE, "aten::sigmoid_backward", "int64");
    test_expect_error(tj_tanh_backward(i, i), TJ_ERR_DTYPE, "aten::tanh_backward", "int64");
    test_expect_error(tj_gelu_backward(x, x, "fast"), TJ_ERR_INVALID_ARGUMENT, "aten::gelu_backward", "'fast'");
    tj_tensor *b = b8(2, (uint8_t[]){1, 0});
    test_expect_error(tj_threshold_backward(b, b, tj_v_int(0)), TJ_ERR_DTYPE, "aten::threshold_backward", "bool");
    test_expect_error(tj_sigmoid_backward(x, f32(3, (float[]){1, 2, 3})), TJ_ERR_SHAPE, "aten::sigmoid_backward",
                      "[3]");
}

/* ---- shapes and the engine ---- */

Test(ew, non_broadcastable_shapes_name_the_op_and_shapes)
{
    tj_tensor *a = test_tensor(TJ_FLOAT32, 2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
    tj_tensor *b = f32(2, (float[]){1, 2});
    test_expect_error(tj_add(a, b), TJ_ERR_SHAPE, "aten::add.Tensor", "[2, 3]");
    test_expect_error(tj_mul(a, b), TJ_ERR_SHAPE, "aten::mul.Tensor", "[2]");
    test_expect_error(tj_eq(a, b), TJ_ERR_SHAPE, "aten::eq.Tensor", "broadcast");
    test_expect_error(tj_pow(a, b), TJ_ERR_SHAPE, "aten::pow.Tensor_Tensor", "broadcast");
    test_expect_error(tj_logaddexp(a, b), TJ_ERR_SHAPE, "aten::logaddexp", "broadcast");
}

Test(ew, bool_where_not_allowed_and_float_alpha_errors)
{
    tj_tensor *b = b8(2, (uint8_t[]){1, 0});
    tj_tensor *i = i64(2, (int64_t[]){1, 2});
    test_expect_error(tj_sub(b, b), TJ_ERR_DTYPE, "aten::sub.Tensor", "bool");
    /* the advice names PyTorch's logical_not (and tjit's function for it) */
    cr_expect(strstr(tj_last_error(), "logical_not, tj_logical_not"), "%s", tj_last_error());
    test_expect_bool(tj_logical_not(b), 2, (uint8_t[]){0, 1});
    test_expect_error(tj_sub(i, b), TJ_ERR_DTYPE, "aten::sub.Tensor", "bool");
    test_expect_error(tj_sub_scalar(b, tj_v_int(1)), TJ_ERR_DTYPE, "aten::sub.Scalar", "bool");
    test_expect_error(tj_add_alpha(i, i, tj_v_float(1.5)), TJ_ERR_DTYPE, "aten::add.Tensor", "alpha");
    test_expect_error(tj_add_alpha(i, i, tj_v_bool(true)), TJ_ERR_DTYPE, "aten::add.Tensor", "alpha");
}

Test(ew, empty_operands_give_empty_broadcast_results)
{
    tj_tensor *e = test_tensor(TJ_FLOAT32, 2, (int64_t[]){0, 3}, NULL);
    tj_tensor *r = f32(3, (float[]){1, 2, 3});
    expect(tj_mul(e, r), TJ_FLOAT32, 2, (int64_t[]){0, 3}, NULL);
    tj_tensor *c = tj_eq(e, r);
    cr_assert_eq(tj_tensor_dtype(c), TJ_BOOL);
    cr_assert_eq(tj_tensor_numel(c), 0);
    expect(tj_masked_fill(e, b8(3, (uint8_t[]){1, 0, 1}), tj_v_float(1)), TJ_FLOAT32, 2, (int64_t[]){0, 3}, NULL);
    expect(tj_add_scalar(test_tensor(TJ_FLOAT32, 2, (int64_t[]){2, 0}, NULL), tj_v_float(1)), TJ_FLOAT32, 2,
           (int64_t[]){2, 0}, NULL);
}

/* x[i, j] = i * 1000 + j as float32 (or converted to dt), contiguous */
static tj_tensor *iota2(tj_dtype dt, int64_t rows, int64_t cols)
{
    tj_tensor *t = tj_tensor_empty(dt, 2, (int64_t[]){rows, cols});
    cr_assert_not_null(t, "%s", tj_last_error());
    char *p = tj_tensor_data(t);
    for (int64_t i = 0; i < rows * cols; i++)
        tj_store_f64(p + i * (int64_t)tj_dtype_size(dt), dt, (double)(i / cols * 1000 + i % cols) / 8);
    return t;
}

/* A contiguous copy of t's elements in dtype dt, made element by element
 * (independently of the engine). */
static tj_tensor *contiguous_copy(const tj_tensor *t, tj_dtype dt)
{
    tj_tensor *c = tj_tensor_empty(dt, tj_tensor_ndim(t), tj_tensor_shape(t));
    cr_assert_not_null(c, "%s", tj_last_error());
    char *p = tj_tensor_data(c);
    for (int64_t i = 0; i < tj_tensor_numel(t); i++)
        tj_store_f64(p + i * (int64_t)tj_dtype_size(dt), dt, tj_tensor_item_at(t, i));
    return c;
}

/* Strided, transposed, offset and broadcast operands of mixed dtypes, small
 * and long inner dims (both of the engine's blocked paths), on one and two
 * threads, give the same values as contiguous copies of the same elements. */
Test(ew, strided_and_broadcast_operands_match_contiguous_copies)
{
    const int64_t shapes[][2] = {{5, 7}, {3, 700}, {90, 1100}};
    for (int threads = 1; threads <= 2; threads++) {
        tj_set_num_threads(threads);
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            int64_t r = shapes[s][0], c = shapes[s][1];
            /* a: transpose of a [c, r] int64 tensor; b: every other column of
             * a [r, 2c + 1] float32 tensor, offset by one; row: [c] broadcast */
            tj_tensor *at = iota2(TJ_INT64, c, r);
            tj_tensor *a = view(at, 2, (int64_t[]){r, c}, (int64_t[]){1, r}, 0);
            tj_tensor *bb = iota2(TJ_FLOAT32, r, 2 * c + 1);
            tj_tensor *b = view(bb, 2, (int64_t[]){r, c}, (int64_t[]){2 * c + 1, 2}, 1);
            tj_tensor *row = view(bb, 2, (int64_t[]){r, c}, (int64_t[]){0, 1}, 0);
            tj_tensor *ac = contiguous_copy(a, TJ_INT64), *bc = contiguous_copy(b, TJ_FLOAT32),
                      *rc = contiguous_copy(row, TJ_FLOAT32);
            test_expect_same(tj_add_alpha(a, b, tj_v_float(0.5)), tj_add_alpha(ac, bc, tj_v_float(0.5)), "elementwise");
            test_expect_same(tj_mul(b, row), tj_mul(bc, rc), "elementwise");
            test_expect_same(tj_gt(a, row), tj_gt(ac, rc), "elementwise");
            test_expect_same(tj_where(tj_gt(b, row), a, tj_tensor_scalar_f64(-1)),
                        tj_where(tj_gt(bc, rc), ac, tj_tensor_scalar_f64(-1)), "elementwise");
            test_expect_same(tj_exp(tj_neg(b)), tj_exp(tj_neg(bc)), "elementwise");
            test_expect_same(tj_add_scalar(b, tj_v_int(3)), tj_add_scalar(bc, tj_v_int(3)), "elementwise");
            test_expect_same(tj_clamp_tensor(a, row, NULL), tj_clamp_tensor(ac, rc, NULL), "elementwise");
        }
    }
}

Test(ew, copy_convert_reads_and_writes_strided_tensors)
{
    tj_tensor *src = view(iota2(TJ_FLOAT64, 4, 300), 2, (int64_t[]){300, 4}, (int64_t[]){1, 300}, 0);
    tj_tensor *got = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){300, 4});
    tj_copy_convert(got, src);
    test_expect_same(got, contiguous_copy(src, TJ_FLOAT32), "elementwise");

    tj_tensor *dst = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){3, 4});
    for (int i = 0; i < 12; i++) ((float *)tj_tensor_data(dst))[i] = -1;
    /* the transpose of dst's first 2 columns: [2, 3] with strides [1, 4] */
    tj_tensor *t = view(dst, 2, (int64_t[]){2, 3}, (int64_t[]){1, 4}, 0);
    tj_copy_convert(t, test_tensor(TJ_INT64, 2, (int64_t[]){2, 3}, (int64_t[]){1, 2, 3, 4, 5, 6}));
    expect(dst, TJ_FLOAT32, 2, (int64_t[]){3, 4}, (double[]){1, 4, -1, -1, 2, 5, -1, -1, 3, 6, -1, -1});
}

Test(ew, out_of_memory_fails_cleanly)
{
    tj_tensor *a = f32(3, (float[]){1, 2, 3});
    tj_storage_cache_release();
    tj_storage_cache_set_limit(0);
    tj_debug_fail_allocation(1);
    tj_tensor *r = tj_add(a, a);
    tj_debug_fail_allocation(0);
    tj_storage_cache_set_limit((size_t)1 << 30);
    test_expect_error(r, TJ_ERR_OUT_OF_MEMORY, "", "");
    expect1(tj_add(a, a), TJ_FLOAT32, 3, (double[]){2, 4, 6});
}

/* ---- decompositions ---- */

/* Runs op's registered decomposition (as a decomposition table would). */
static tj_tensor *decompose(const char *name, const tj_value *args)
{
    const tj_op *op = tj_op_find(name);
    cr_assert_not_null(op);
    cr_assert_not_null(op->decomp, "%s has no decomposition", name);
    tj_value outs[1];
    tj_scope *s = tj_scope_begin();
    tj_status st = op->decomp(args, outs);
    tj_tensor *r = st == TJ_OK ? tj_scope_keep(outs[0].u.t) : NULL;
    tj_scope_end(s); /* r moved to the test's scope */
    return r;
}

static void expect_close_tensors(const tj_tensor *got, const tj_tensor *want)
{
    cr_assert_not_null(got, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(got), tj_tensor_dtype(want));
    cr_assert_eq(tj_tensor_numel(got), tj_tensor_numel(want));
    for (int64_t i = 0; i < tj_tensor_numel(got); i++) {
        double g = tj_tensor_item_at(got, i), e = tj_tensor_item_at(want, i);
        cr_assert(close_to(g, e, 1e-6, 1e-7), "[%lld] = %.9g, want %.9g", (long long)i, g, e);
    }
}

Test(ew, decompositions_of_composites_match_their_kernels)
{
    tj_tensor *x = f32(NX, ux), *g = tj_add_scalar(tj_mul_scalar(x, tj_v_float(-0.5)), tj_v_int(1));
    tj_tensor *y = tj_sigmoid(x);
    for (int i = 0; i < 2; i++) {
        const char *ap = i ? "tanh" : "none";
        tj_value ga[2] = {tj_v_tensor(x), tj_v_str(ap)};
        expect_close_tensors(decompose("aten::gelu", ga), tj_gelu(x, ap));
        tj_value gb[3] = {tj_v_tensor(g), tj_v_tensor(x), tj_v_str(ap)};
        expect_close_tensors(decompose("aten::gelu_backward", gb), tj_gelu_backward(g, x, ap));
    }
    tj_value one[1] = {tj_v_tensor(x)};
    expect_close_tensors(decompose("aten::relu", one), tj_relu(x));
    expect_close_tensors(decompose("aten::silu", one), tj_silu(x));
    tj_tensor *x2 = tj_neg(tj_mul_scalar(x, tj_v_float(0.5)));
    tj_value two[2] = {tj_v_tensor(x), tj_v_tensor(x2)};
    expect_close_tensors(decompose("aten::logaddexp", two), tj_logaddexp(x, x2));
    tj_value sb[2] = {tj_v_tensor(g), tj_v_tensor(y)};
    expect_close_tensors(decompose("aten::sigmoid_backward", sb), tj_sigmoid_backward(g, y));
    expect_close_tensors(decompose("aten::tanh_backward", sb), tj_tanh_backward(g, y));
    tj_value tb[3] = {tj_v_tensor(g), tj_v_tensor(x), tj_v_float(0.5)};
    expect_close_tensors(decompose("aten::threshold_backward", tb), tj_threshold_backward(g, x, tj_v_float(0.5)));
    tj_tensor *i = i64(3, (int64_t[]){-1, 0, 4});
    tj_value ri[1] = {tj_v_tensor(i)};
    expect_close_tensors(decompose("aten::relu", ri), tj_relu(i));
}

Test(ew, decompositions_fail_like_the_kernels)
{
    tj_tensor *i = i64(2, (int64_t[]){1, 2});
    tj_value ga[2] = {tj_v_tensor(f32(1, (float[]){1})), tj_v_str("bad")};
    test_expect_error(decompose("aten::gelu", ga), TJ_ERR_INVALID_ARGUMENT, "aten::gelu", "'bad'");
    tj_value la[2] = {tj_v_tensor(i), tj_v_tensor(i)};
    test_expect_error(decompose("aten::logaddexp", la), TJ_ERR_DTYPE, "aten::logaddexp", "int64");
    tj_value ra[1] = {tj_v_tensor(b8(1, (uint8_t[]){1}))};
    test_expect_error(decompose("aten::relu", ra), TJ_ERR_DTYPE, "aten::relu", "bool");
}
