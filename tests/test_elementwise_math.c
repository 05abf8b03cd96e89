/* The session 19 elementwise operators: floor, ceil, round, trunc, frac,
 * remainder, fmod, isnan, isinf, isfinite, nan_to_num, clamp_min, clamp_max,
 * atan2, asin, acos, atan, sinh, cosh, log2, log10, exp2.
 *
 * Reference values come from PyTorch 1.13 (/usr/bin/python3), stored here so
 * that the tests run without it: each float32 row is torch.<op>(x) on the
 * float32 tensor `xs` (or `as`, `bs` for the binary tables), each float64
 * row the same on xs.double(); gradients are x.grad after
 * (torch.<op>(x) * gs).sum().backward(). Every operator is also traced
 * (make_fx records its ATen name), lowered by the core decompositions (to
 * primitives, with the kernel's bits; exp2 = pow(2, x) within 1 ulp) and
 * replayed from a compiled plan (eager's bits). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "test_util.h"

TestSuite(emath, .init = test_scope_open, .fini = test_scope_close_isa);

#define NX 20
static const float xs[NX] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.3f,
                             -0.7f, 1.0f, -1.0f, 3.7f, -3.7f, 1e-3f, 100.0f, 1e20f};

static tj_tensor *f32(int64_t n, const float *v) { return test_tensor(TJ_FLOAT32, 1, (int64_t[]){n}, v); }
static tj_tensor *f64(int64_t n, const double *v) { return test_tensor(TJ_FLOAT64, 1, (int64_t[]){n}, v); }
static tj_tensor *i64(int64_t n, const int64_t *v) { return test_tensor(TJ_INT64, 1, (int64_t[]){n}, v); }
static tj_tensor *b8(int64_t n, const uint8_t *v) { return test_tensor(TJ_BOOL, 1, (int64_t[]){n}, v); }
static tj_tensor *xs64(void)
{
    double d[NX];
    for (int i = 0; i < NX; i++) d[i] = xs[i];
    return f64(NX, d);
}

static void expect_dtype(const tj_tensor *t, tj_dtype dt, int64_t n)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(t), dt, "dtype %s", tj_dtype_name(tj_tensor_dtype(t)));
    cr_assert_eq(tj_tensor_numel(t), n);
}

/* float64 values equal to want's bits (nan matching nan) when exact, else
 * within 1e-15 relative. */
static void expect_f64(const tj_tensor *t, const double *want, int64_t n, bool exact)
{
    expect_dtype(t, TJ_FLOAT64, n);
    const double *p = tj_tensor_data(t);
    for (int64_t i = 0; i < n; i++) {
        bool same = test_bits_f64(p[i]) == test_bits_f64(want[i]) || (isnan(p[i]) && isnan(want[i]));
        cr_expect(same || (!exact && test_close(p[i], want[i], 1e-15, 0)), "[%lld] = %.17g, want %.17g",
                  (long long)i, p[i], want[i]);
    }
}

/* ---- unary values ---- */

typedef struct {
    const char *name;
    tj_tensor *(*fn)(tj_tensor *);
    bool exact; /* bit for bit; else the SLEEF functions, within 1 ulp of PyTorch's (float32: rtol 2.5e-7) */
    float want32[NX];
    double want64[NX];
} unary_case;

static tj_tensor *nan_to_num_defaults(tj_tensor *x) { return tj_nan_to_num(x, tj_v_none(), tj_v_none(), tj_v_none()); }

/* torch.<name>(xs) and torch.<name>(xs.double()) */
static const unary_case unary_cases[] = {
    {"floor", tj_floor, true, {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 0.0f, -1.0f, 1.0f, -2.0f, 2.0f, -3.0f, 0.0f, -1.0f, 1.0f, -1.0f, 3.0f, -4.0f, 0.0f, 100.0f, 1.0000000200408773e+20f},
     {NAN, INFINITY, -INFINITY, -0.0, 0.0, 0.0, -1.0, 1.0, -2.0, 2.0, -3.0, 0.0, -1.0, 1.0, -1.0, 3.0, -4.0, 0.0, 100.0, 1.0000000200408773e+20}},
    {"ceil", tj_ceil, true, {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1.0f, -0.0f, 2.0f, -1.0f, 3.0f, -2.0f, 1.0f, -0.0f, 1.0f, -1.0f, 4.0f, -3.0f, 1.0f, 100.0f, 1.0000000200408773e+20f},
     {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1.0, -0.0, 2.0, -1.0, 3.0, -2.0, 1.0, -0.0, 1.0, -1.0, 4.0, -3.0, 1.0, 100.0, 1.0000000200408773e+20}},
    {"round", tj_round, true, {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 0.0f, -0.0f, 2.0f, -2.0f, 2.0f, -2.0f, 0.0f, -1.0f, 1.0f, -1.0f, 4.0f, -4.0f, 0.0f, 100.0f, 1.0000000200408773e+20f},
     {NAN, INFINITY, -INFINITY, -0.0, 0.0, 0.0, -0.0, 2.0, -2.0, 2.0, -2.0, 0.0, -1.0, 1.0, -1.0, 4.0, -4.0, 0.0, 100.0, 1.0000000200408773e+20}},
    {"trunc", tj_trunc, true, {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 0.0f, -0.0f, 1.0f, -1.0f, 3.0f, -3.0f, 0.0f, 100.0f, 1.0000000200408773e+20f},
     {NAN, INFINITY, -INFINITY, -0.0, 0.0, 0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 0.0, 100.0, 1.0000000200408773e+20}},
    {"frac", tj_frac, true, {NAN, NAN, NAN, 0.0f, 0.0f, 0.5f, -0.5f, 0.5f, -0.5f, 0.5f, -0.5f, 0.30000001192092896f, -0.699999988079071f, 0.0f, 0.0f, 0.7000000476837158f, -0.7000000476837158f, 0.0010000000474974513f, 0.0f, 0.0f},
     {NAN, NAN, NAN, 0.0, 0.0, 0.5, -0.5, 0.5, -0.5, 0.5, -0.5, 0.30000001192092896, -0.699999988079071, 0.0, 0.0, 0.7000000476837158, -0.7000000476837158, 0.0010000000474974513, 0.0, 0.0}},
    {"asin", tj_asin, false, {NAN, NAN, NAN, -0.0f, 0.0f, 0.5235987901687622f, -0.5235987901687622f, NAN, NAN, NAN, NAN, 0.30469265580177307f, -0.7753974795341492f, 1.5707963705062866f, -1.5707963705062866f, NAN, NAN, 0.0010000001639127731f, NAN, NAN},
     {NAN, NAN, NAN, -0.0, 0.0, 0.5235987755982989, -0.5235987755982989, NAN, NAN, NAN, NAN, 0.3046926665119266, -0.7753974799181138, 1.5707963267948966, -1.5707963267948966, NAN, NAN, 0.0010000002141642168, NAN, NAN}},
    {"acos", tj_acos, false, {NAN, NAN, NAN, 1.5707963705062866f, 1.5707963705062866f, 1.0471975803375244f, 2.094395160675049f, NAN, NAN, NAN, NAN, 1.2661036252975464f, 2.346193790435791f, 0.0f, 3.1415927410125732f, NAN, NAN, 1.5697963237762451f, NAN, NAN},
     {NAN, NAN, NAN, 1.5707963267948966, 1.5707963267948966, 1.0471975511965976, 2.0943951023931957, NAN, NAN, NAN, NAN, 1.26610366028297, 2.3461938067130106, 0.0, 3.141592653589793, NAN, NAN, 1.5697963265807324, NAN, NAN}},
    {"atan", tj_atan, false, {NAN, 1.5707963705062866f, -1.5707963705062866f, -0.0f, 0.0f, 0.46364760398864746f, -0.46364760398864746f, 0.9827937483787537f, -0.9827937483787537f, 1.1902899742126465f, -1.1902899742126465f, 0.29145681858062744f, -0.6107259392738342f, 0.7853981256484985f, -0.7853981256484985f, 1.3068325519561768f, -1.3068325519561768f, 0.0009999996982514858f, 1.5607966184616089f, 1.5707963705062866f},
     {NAN, 1.5707963267948966, -1.5707963267948966, -0.0, 0.0, 0.4636476090008061, -0.4636476090008061, 0.982793723247329, -0.982793723247329, 1.1902899496825317, -1.1902899496825317, 0.29145680541449914, -0.6107259563885851, 0.7853981633974483, -0.7853981633974483, 1.3068326064151903, -1.3068326064151903, 0.0009999997141642704, 1.5607966601082315, 1.5707963267948966}},
    {"sinh", tj_sinh, false, {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 0.5210952758789062f, -0.5210952758789062f, 2.129279375076294f, -2.129279375076294f, 6.050204277038574f, -6.050204277038574f, 0.30452030897140503f, -0.758583664894104f, 1.175201177597046f, -1.175201177597046f, 20.211292266845703f, -20.211292266845703f, 0.0010000001639127731f, INFINITY, INFINITY},
     {NAN, INFINITY, -INFINITY, -0.0, 0.0, 0.5210953054937474, -0.5210953054937474, 2.1292794550948173, -2.1292794550948173, 6.0502044810397875, -6.0502044810397875, 0.3045203059085488, -0.758583686876753, 1.1752011936438014, -1.1752011936438014, 20.211291381726888, -20.211291381726888, 0.00100000021416415, 1.3440585709080678e+43, INFINITY}},
    {"cosh", tj_cosh, false, {NAN, INFINITY, INFINITY, 1.0f, 1.0f, 1.1276259422302246f, 1.1276259422302246f, 2.352409601211548f, 2.352409601211548f, 6.132289409637451f, 6.132289409637451f, 1.04533851146698f, 1.2551690340042114f, 1.5430806875228882f, 1.5430806875228882f, 20.23601531982422f, 20.23601531982422f, 1.0000004768371582f, INFINITY, INFINITY},
     {NAN, INFINITY, INFINITY, 1.0, 1.0, 1.1276259652063807, 1.1276259652063807, 2.352409615243247, 2.352409615243247, 6.132289479663686, 6.132289479663686, 1.0453385177590253, 1.2551689965879207, 1.5430806348152437, 1.5430806348152437, 20.236014907018316, 20.236014907018316, 1.000000500000089, 1.3440585709080678e+43, INFINITY}},
    {"log2", tj_log2, false, {NAN, INFINITY, NAN, -INFINITY, -INFINITY, -1.0f, NAN, 0.5849624872207642f, NAN, 1.3219281435012817f, NAN, -1.736965537071228f, NAN, 0.0f, NAN, 1.8875253200531006f, NAN, -9.965784072875977f, 6.643856048583984f, 66.43856048583984f},
     {NAN, INFINITY, NAN, -INFINITY, -INFINITY, -1.0, NAN, 0.5849625007211562, NAN, 1.3219280948873624, NAN, -1.736965536838657, NAN, 0.0, NAN, 1.8875252893343064, NAN, -9.96578421613775, 6.643856189774724, 66.43856192666011}},
    {"log10", tj_log10, false, {NAN, INFINITY, NAN, -INFINITY, -INFINITY, -0.3010300099849701f, NAN, 0.1760912537574768f, NAN, 0.3979400098323822f, NAN, -0.5228787064552307f, NAN, 0.0f, NAN, 0.5682017207145691f, NAN, -3.0f, 2.0f, 20.0f},
     {NAN, INFINITY, NAN, -INFINITY, -INFINITY, -0.3010299956639812, NAN, 0.17609125905568124, NAN, 0.3979400086720376, NAN, -0.5228787280230257, NAN, 0.0, NAN, 0.5682017296639611, NAN, -2.9999999793721193, 2.0, 20.000000008703644}},
    {"exp2", tj_exp2, false, {NAN, INFINITY, 0.0f, 1.0f, 1.0f, 1.4142135381698608f, 0.7071067690849304f, 2.8284270763397217f, 0.3535533845424652f, 5.656854152679443f, 0.1767766922712326f, 1.2311444282531738f, 0.6155722141265869f, 2.0f, 0.5f, 12.996038436889648f, 0.07694652676582336f, 1.000693440437317f, 1.2676506002282294e+30f, INFINITY},
     {NAN, INFINITY, 0.0, 1.0, 1.0, 1.4142135623730951, 0.7071067811865476, 2.8284271247461903, 0.3535533905932738, 5.656854249492381, 0.1767766952966369, 1.2311444235178113, 0.6155722117589056, 2.0, 0.5, 12.996038771242667, 0.07694652329083357, 1.0006933874955262, 1.2676506002282294e+30, INFINITY}},
    {"nan_to_num", nan_to_num_defaults, true, {0.0f, 3.4028234663852886e+38f, -3.4028234663852886e+38f, -0.0f, 0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.30000001192092896f, -0.699999988079071f, 1.0f, -1.0f, 3.700000047683716f, -3.700000047683716f, 0.0010000000474974513f, 100.0f, 1.0000000200408773e+20f},
     {0.0, 1.7976931348623157e+308, -1.7976931348623157e+308, -0.0, 0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.30000001192092896, -0.699999988079071, 1.0, -1.0, 3.700000047683716, -3.700000047683716, 0.0010000000474974513, 100.0, 1.0000000200408773e+20}},
};

Test(emath, unary_values_match_torch_in_float32_and_float64_on_every_isa)
{
    tj_tensor *x = f32(NX, xs), *x64 = xs64();
    for (size_t k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (size_t c = 0; c < sizeof unary_cases / sizeof *unary_cases; c++) {
            const unary_case *u = &unary_cases[c];
            cr_log_info("%s %s", test_isas[k], u->name);
            test_expect_f32(u->fn(x), u->want32, NX, u->exact ? 0 : 2.5e-7);
            expect_f64(u->fn(x64), u->want64, NX, u->exact);
        }
    }
}

/* sinh and cosh near the top of the range, where exp(|x|) overflows but the
 * result does not (float32 |x| in (88.72, 89.42), float64 (709.78, 710.48)).
 * Reference: torch.sinh / torch.cosh of each value alone, as a 1-element
 * float32 / float64 tensor (PyTorch 1.13's scalar loop, the C library's; its
 * vectorised float64 loop gives inf there), and x.grad after
 * torch.<op>(x).sum().backward(), which is cosh / sinh. */
#define NH32 9
#define NH64 7
static const float xh32[NH32] = {88.5f, 88.72f, 88.75f, 89.0f, 89.4f, 89.4159f, 89.42f, -89.0f, -89.4f};
static const double xh64[NH64] = {709.5, 709.79, 710.0, 710.47, 710.48, -710.0, -710.47};
static const float cosh32[NH32] = {1.361543959006414e+38f, 1.6965903001937122e+38f, 1.7482568991216704e+38f,
                                   2.2448063889081578e+38f, 3.3488627241070614e+38f, 3.4025338335761485e+38f,
                                   INFINITY, 2.2448063889081578e+38f, 3.3488627241070614e+38f};
static const double cosh64[NH64] = {6.774931596573164e+307, 9.054204815152345e+307, 1.1169973830808557e+308,
                                    1.787189326768405e+308, INFINITY, 1.1169973830808557e+308,
                                    1.787189326768405e+308};

static tj_tensor *grad_ones(tj_tensor *(*fn)(tj_tensor *), tj_tensor *x)
{
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *y = fn(x);
    cr_assert_not_null(y, "%s", tj_last_error());
    return test_grad1(x, y, tj_ones((int64_t[]){tj_tensor_numel(y)}, 1, tj_tensor_dtype(y)));
}

Test(emath, sinh_cosh_stay_finite_until_the_result_overflows_on_every_isa)
{
    float sinh32[NH32];
    double sinh64[NH64];
    for (int i = 0; i < NH32; i++) sinh32[i] = xh32[i] < 0 ? -cosh32[i] : cosh32[i];
    for (int i = 0; i < NH64; i++) sinh64[i] = xh64[i] < 0 ? -cosh64[i] : cosh64[i];
    for (size_t k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        cr_log_info("%s", test_isas[k]);
        tj_tensor *x = f32(NH32, xh32), *x64 = f64(NH64, xh64);
        /* one more rounding than SLEEF's exp: within 2 ulp */
        test_expect_f32(tj_sinh(x), sinh32, NH32, 2.5e-7);
        test_expect_f32(tj_cosh(x), cosh32, NH32, 2.5e-7);
        expect_f64(tj_sinh(x64), sinh64, NH64, false);
        expect_f64(tj_cosh(x64), cosh64, NH64, false);
        /* sinh' = cosh, cosh' = sinh */
        test_expect_f32(grad_ones(tj_sinh, f32(NH32, xh32)), cosh32, NH32, 2.5e-7);
        test_expect_f32(grad_ones(tj_cosh, f32(NH32, xh32)), sinh32, NH32, 2.5e-7);
        expect_f64(grad_ones(tj_sinh, f64(NH64, xh64)), cosh64, NH64, false);
        expect_f64(grad_ones(tj_cosh, f64(NH64, xh64)), sinh64, NH64, false);
    }
}

Test(emath, rounding_is_the_identity_on_int64_and_refuses_bool)
{
    int64_t v[4] = {-7, 0, INT64_MAX, INT64_MIN};
    tj_tensor *i = i64(4, v), *b = b8(2, (uint8_t[]){1, 0});
    tj_tensor *(*const fns[4])(tj_tensor *) = {tj_floor, tj_ceil, tj_round, tj_trunc};
    const char *names[4] = {"aten::floor", "aten::ceil", "aten::round", "aten::trunc"};
    for (int k = 0; k < 4; k++) {
        test_expect_i64(fns[k](i), 4, v);
        test_expect_error(fns[k](b), TJ_ERR_DTYPE, names[k], "bool");
    }
    /* torch.frac: "frac_cpu" not implemented for 'Long' / 'Bool' */
    test_expect_error(tj_frac(i), TJ_ERR_DTYPE, "aten::frac", "int64");
    test_expect_error(tj_frac(b), TJ_ERR_DTYPE, "aten::frac", "bool");
}

Test(emath, transcendentals_promote_int64_and_bool_to_float32)
{
    /* torch.asin(tensor([-7, 7, 0])) = [nan, nan, 0]; torch.exp2(tensor([True, False])) = [2, 1] */
    tj_tensor *r = tj_asin(i64(3, (int64_t[]){-7, 7, 0}));
    test_expect_f32(r, (float[]){NAN, NAN, 0}, 3, 0);
    test_expect_f32(tj_exp2(b8(2, (uint8_t[]){1, 0})), (float[]){2, 1}, 2, 0);
    test_expect_f32(tj_log2(i64(2, (int64_t[]){8, 0})), (float[]){3, -INFINITY}, 2, 0);
    test_expect_f32(tj_atan2(i64(2, (int64_t[]){1, -1}), i64(2, (int64_t[]){0, 0})),
                    (float[]){(float)M_PI_2, (float)-M_PI_2}, 2, 0);
}

/* torch.isnan / isinf / isfinite (xs) */
Test(emath, isnan_isinf_isfinite_match_torch_and_are_constant_on_integers)
{
    tj_tensor *x = f32(NX, xs), *x64 = xs64();
    static const uint8_t nan_[NX] = {1}, inf_[NX] = {0, 1, 1};
    uint8_t fin[NX];
    for (int i = 0; i < NX; i++) fin[i] = i >= 3;
    test_expect_bool(tj_isnan(x), NX, nan_);
    test_expect_bool(tj_isinf(x), NX, inf_);
    test_expect_bool(tj_isfinite(x), NX, fin);
    test_expect_bool(tj_isnan(x64), NX, nan_);
    test_expect_bool(tj_isinf(x64), NX, inf_);
    test_expect_bool(tj_isfinite(x64), NX, fin);
    tj_tensor *i = i64(2, (int64_t[]){INT64_MAX, -1}), *b = b8(2, (uint8_t[]){1, 0});
    test_expect_bool(tj_isnan(i), 2, (uint8_t[]){0, 0});
    test_expect_bool(tj_isinf(b), 2, (uint8_t[]){0, 0});
    test_expect_bool(tj_isfinite(i), 2, (uint8_t[]){1, 1});
    test_expect_bool(tj_isfinite(b), 2, (uint8_t[]){1, 1});
}

Test(emath, nan_to_num_converts_its_replacements_to_the_dtype)
{
    /* torch.nan_to_num(xs, 1.5, 1e300, -2.0): 1e300 overflows float32 to inf */
    tj_tensor *r = tj_nan_to_num(f32(NX, xs), tj_v_float(1.5), tj_v_float(1e300), tj_v_float(-2));
    float w[NX];
    memcpy(w, xs, sizeof w);
    w[0] = 1.5f, w[1] = INFINITY, w[2] = -2;
    test_expect_f32(r, w, NX, 0);
    double w64[NX];
    for (int i = 0; i < NX; i++) w64[i] = xs[i];
    w64[0] = 1.5, w64[1] = 1e300, w64[2] = -2;
    expect_f64(tj_nan_to_num(xs64(), tj_v_float(1.5), tj_v_float(1e300), tj_v_float(-2)), w64, NX, true);
    /* integers: a copy, whatever the replacements */
    test_expect_i64(tj_nan_to_num(i64(3, (int64_t[]){-7, 7, 0}), tj_v_float(1.5), tj_v_float(2), tj_v_float(3)), 3,
                    (int64_t[]){-7, 7, 0});
    test_expect_bool(tj_nan_to_num(b8(2, (uint8_t[]){1, 0}), tj_v_none(), tj_v_none(), tj_v_none()), 2,
                     (uint8_t[]){1, 0});
}

/* ---- binary values ---- */

#define NB 17
static const float as[NB] = {7, -7, 7, -7, 5.5f, -5.5f, 0.0f, -0.0f, 3, 1, INFINITY, -INFINITY, NAN, 2, 1e20f,
                             -1e-3f, 0.25f};
static const float bs[NB] = {2, 2, -2, -2, 2, -2, 3, 3, 0, -0.0f, 2, 2, 2, INFINITY, 3, INFINITY, -INFINITY};

typedef struct {
    const char *name;
    tj_tensor *(*fn)(tj_tensor *, tj_tensor *);
    bool exact; /* as unary_case's */
    float want32[NB];
    double want64[NB];
} binary_case;

/* torch.<name>(as, bs) and torch.<name>(as.double(), bs.double()) */
static const binary_case binary_cases[] = {
    {"remainder", tj_remainder, true, {1.0f, 1.0f, -1.0f, -1.0f, 1.5f, -1.5f, 0.0f, -0.0f, NAN, NAN, NAN, NAN, NAN, 2.0f, 2.0f, INFINITY, -INFINITY},
     {1.0, 1.0, -1.0, -1.0, 1.5, -1.5, 0.0, -0.0, NAN, NAN, NAN, NAN, NAN, 2.0, 2.0, INFINITY, -INFINITY}},
    {"fmod", tj_fmod, true, {1.0f, -1.0f, 1.0f, -1.0f, 1.5f, -1.5f, 0.0f, -0.0f, NAN, NAN, NAN, NAN, NAN, 2.0f, 2.0f, -0.0010000000474974513f, 0.25f},
     {1.0, -1.0, 1.0, -1.0, 1.5, -1.5, 0.0, -0.0, NAN, NAN, NAN, NAN, NAN, 2.0, 2.0, -0.0010000000474974513, 0.25}},
    {"atan2", tj_atan2, false, {1.292496681213379f, -1.292496681213379f, 1.8490959405899048f, -1.8490959405899048f, 1.2220252752304077f, -1.919567346572876f, 0.0f, -0.0f, 1.5707963705062866f, 1.5707963705062866f, 1.5707963705062866f, -1.5707963705062866f, NAN, 0.0f, 1.5707963705062866f, -0.0f, 3.1415927410125732f},
     {1.2924966677897853, -1.2924966677897853, 1.849095985800008, -1.849095985800008, 1.2220253232109897, -1.9195673303788037, 0.0, -0.0, 1.5707963267948966, 1.5707963267948966, 1.5707963267948966, -1.5707963267948966, NAN, 0.0, 1.5707963267948966, -0.0, 3.141592653589793}},
};

static tj_tensor *to64(const float *v, int64_t n)
{
    double d[NB];
    for (int64_t i = 0; i < n; i++) d[i] = v[i];
    return f64(n, d);
}

Test(emath, remainder_fmod_atan2_match_torch_with_signed_zeros_and_infinities_on_every_isa)
{
    tj_tensor *a = f32(NB, as), *b = f32(NB, bs), *a64 = to64(as, NB), *b64 = to64(bs, NB);
    for (size_t k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (size_t c = 0; c < sizeof binary_cases / sizeof *binary_cases; c++) {
            const binary_case *u = &binary_cases[c];
            cr_log_info("%s %s", test_isas[k], u->name);
            test_expect_f32(u->fn(a, b), u->want32, NB, u->exact ? 0 : 2.5e-7);
            expect_f64(u->fn(a64, b64), u->want64, NB, u->exact);
        }
    }
}

/* Operand pairs for the bit-for-bit fmod check, from a 64-bit LCG: random
 * bit patterns (nan, infinities, subnormals, quotients past 2^24 and 2^53),
 * integers and their multiples (exact zeros of either sign), quotients just
 * below an integer (the division rounds up to it), quotients from 2^20 to
 * 2^30 (float32) or 2^49 to 2^59 (float64), and infinite divisors. */
#define NMOD 4099 /* not a multiple of any vector width: the tail runs too */

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 11;
}

/* The float64 (dbl) or float32 value of u's bits. */
static double from_bits(uint64_t u, bool dbl)
{
    double d;
    float f;
    uint32_t u32 = (uint32_t)u;
    memcpy(&d, &u, 8);
    memcpy(&f, &u32, 4);
    return dbl ? d : f;
}

static void modulo_operands(bool dbl, double *a, double *b)
{
    uint64_t s = 5;
    int bits = dbl ? 53 : 24;
    for (int i = 0; i < NMOD; i++) {
        uint64_t r = lcg(&s);
        double sign = r >> 8 & 1 ? -1 : 1, sign2 = r >> 9 & 1 ? -1 : 1;
        double y = (double)(lcg(&s) % 1000 + 1) / 64 * sign2, n = (double)(lcg(&s) % 100000 + 1);
        uint64_t u = lcg(&s) << 11 ^ lcg(&s);
        switch (r % 6) {
        case 0: a[i] = from_bits(u, dbl), b[i] = y; break;
        case 1: a[i] = y * (double)(lcg(&s) % 100), b[i] = from_bits(u, dbl); break;
        case 2: a[i] = sign * (double)(lcg(&s) % 50) * fabs(y), b[i] = y; break; /* exact multiples */
        case 3: /* q just below an integer: n * y less two ulps */
            a[i] = dbl ? nextafter(nextafter(sign * n * y, 0), 0) : nextafterf(nextafterf((float)(sign * n * y), 0), 0);
            b[i] = y;
            break;
        case 4: a[i] = sign * ldexp((double)(lcg(&s) % (1u << 20)) + 0.5, bits - 4 + (int)(lcg(&s) % 10)) * y, b[i] = y; break;
        default: a[i] = sign * (double)(lcg(&s) % 1000) / 7, b[i] = lcg(&s) % 4 ? y : sign2 * INFINITY; break;
        }
        if (!dbl) a[i] = (float)a[i], b[i] = (float)b[i];
    }
}

/* fmod and remainder of float32 or float64 operands against C's fmod (and
 * the Python-style fix-up, r + b where r != 0 differs in sign from b),
 * bit for bit: payloads and signs of nan and zeros too. */
static void expect_modulo_as_c(bool dbl)
{
    static double a[NMOD], b[NMOD];
    modulo_operands(dbl, a, b);
    tj_dtype dt = dbl ? TJ_FLOAT64 : TJ_FLOAT32;
    tj_tensor *ta = tj_to_copy(f64(NMOD, a), dt), *tb = tj_to_copy(f64(NMOD, b), dt);
    tj_tensor *fm = tj_fmod(ta, tb), *rm = tj_remainder(ta, tb);
    cr_assert(fm && rm, "%s", tj_last_error());
    int bad = 0;
    for (int i = 0; i < NMOD && bad < 10; i++) {
        uint64_t got[2] = {0, 0}, want[2] = {0, 0};
        if (dbl) {
            double w = fmod(a[i], b[i]), rw = w != 0 && (w < 0) != (b[i] < 0) ? w + b[i] : w;
            memcpy(&want[0], &w, 8), memcpy(&want[1], &rw, 8);
            memcpy(&got[0], (const double *)tj_tensor_data(fm) + i, 8);
            memcpy(&got[1], (const double *)tj_tensor_data(rm) + i, 8);
        } else {
            float x = (float)a[i], y = (float)b[i], w = fmodf(x, y), rw = w != 0 && (w < 0) != (y < 0) ? w + y : w;
            memcpy(&want[0], &w, 4), memcpy(&want[1], &rw, 4);
            memcpy(&got[0], (const float *)tj_tensor_data(fm) + i, 4);
            memcpy(&got[1], (const float *)tj_tensor_data(rm) + i, 4);
        }
        for (int k = 0; k < 2; k++)
            if (got[k] != want[k]) {
                bad++;
                cr_expect_fail("%s %s(%a, %a): bits %llx, C gives %llx", tj_dtype_name(dt), k ? "remainder" : "fmod",
                               a[i], b[i], (unsigned long long)got[k], (unsigned long long)want[k]);
            }
    }
}

Test(emath, fmod_and_remainder_give_c_fmods_bits_on_every_isa)
{
    for (size_t k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        cr_log_info("%s", test_isas[k]);
        expect_modulo_as_c(false);
        expect_modulo_as_c(true);
    }
}

Test(emath, remainder_and_fmod_on_int64_follow_python_and_c)
{
    /* torch.remainder / torch.fmod of these int64 tensors */
    tj_tensor *a = i64(8, (int64_t[]){7, -7, 7, -7, 0, 5, INT64_MIN, INT64_MAX}),
              *b = i64(8, (int64_t[]){3, 3, -3, -3, 5, 1, 3, -2});
    test_expect_i64(tj_remainder(a, b), 8, (int64_t[]){1, 2, -2, -1, 0, 0, 1, -1});
    test_expect_i64(tj_fmod(a, b), 8, (int64_t[]){1, -1, 1, -1, 0, 0, -2, 1});
    test_expect_i64(tj_remainder_scalar(a, tj_v_int(-3)), 8, (int64_t[]){-2, -1, -2, -1, 0, -1, -2, -2});
    /* a float Scalar promotes to float32: torch.fmod(a, 2.5), torch.remainder(a, 2.5) */
    test_expect_f32(tj_fmod_scalar(a, tj_v_float(2.5)), (float[]){2, -2, 2, -2, 0, 0, -0.5f, 0.5f}, 8, 0);
    test_expect_f32(tj_remainder_scalar(a, tj_v_float(2.5)), (float[]){2, 0.5f, 2, 0.5f, 0, 0, 2, 0.5f}, 8, 0);
    /* INT64_MIN % -1 (PyTorch 1.13 itself dies of SIGFPE here): 0, as Python */
    test_expect_i64(tj_remainder_scalar(i64(1, (int64_t[]){INT64_MIN}), tj_v_int(-1)), 1, (int64_t[]){0});
    test_expect_i64(tj_fmod(i64(1, (int64_t[]){INT64_MIN}), i64(1, (int64_t[]){-1})), 1, (int64_t[]){0});
    /* bool self with an int64 divisor computes in int64: torch.remainder(tensor([True, False]), tensor([3, 2])) */
    test_expect_i64(tj_remainder(b8(2, (uint8_t[]){1, 0}), i64(2, (int64_t[]){3, 2})), 2, (int64_t[]){1, 0});
}

Test(emath, scalar_overloads_match_torch_in_float32)
{
    /* torch.remainder(as, -0.75), torch.fmod(as, -0.75) */
    tj_tensor *a = f32(NB, as);
    test_expect_f32(tj_remainder_scalar(a, tj_v_float(-0.75)),
                    (float[]){-0.5f, -0.25f, -0.5f, -0.25f, -0.5f, -0.25f, 0.0f, -0.0f, 0.0f, -0.5f, NAN, NAN, NAN,
                              -0.25f, -0.25f, -1e-3f, -0.5f},
                    NB, 0);
    test_expect_f32(tj_fmod_scalar(a, tj_v_float(-0.75)),
                    (float[]){0.25f, -0.25f, 0.25f, -0.25f, 0.25f, -0.25f, 0.0f, -0.0f, 0.0f, 0.25f, NAN, NAN, NAN,
                              0.5f, 0.5f, -1e-3f, 0.25f},
                    NB, 0);
}

Test(emath, clamp_min_and_clamp_max_promote_and_fill_nan_for_a_nan_bound)
{
    /* torch.clamp_min(xs, 0.0): -0.0 stays -0.0; torch.clamp_max(xs, 0.5) */
    tj_tensor *x = f32(NX, xs);
    test_expect_f32(tj_clamp_min(x, tj_v_float(0.0)),
                    (float[]){NAN, INFINITY, 0.0f, -0.0f, 0.0f, 0.5f, 0.0f, 1.5f, 0.0f, 2.5f, 0.0f, 0.3f, 0.0f, 1.0f,
                              0.0f, 3.7f, 0.0f, 1e-3f, 100.0f, 1e20f},
                    NX, 0);
    test_expect_f32(tj_clamp_max(x, tj_v_float(0.5)),
                    (float[]){NAN, 0.5f, -INFINITY, -0.0f, 0.0f, 0.5f, -0.5f, 0.5f, -1.5f, 0.5f, -2.5f, 0.3f, -0.7f,
                              0.5f, -1.0f, 0.5f, -3.7f, 1e-3f, 0.5f, 0.5f},
                    NX, 0);
    /* a nan bound: nan everywhere (clamp with a single nan bound ignores it) */
    tj_tensor *ones = f32(3, (float[]){1, 2, 3});
    test_expect_f32(tj_clamp_min(ones, tj_v_float(NAN)), (float[]){NAN, NAN, NAN}, 3, 0);
    test_expect_f32(tj_clamp_max(ones, tj_v_float(NAN)), (float[]){NAN, NAN, NAN}, 3, 0);
    /* torch.clamp_min(tensor([-3, 0, 4]), 1), clamp_max(..., 0.5), clamp_min(tensor([True, False]), 0) */
    tj_tensor *i = i64(3, (int64_t[]){-3, 0, 4});
    test_expect_i64(tj_clamp_min(i, tj_v_int(1)), 3, (int64_t[]){1, 1, 4});
    test_expect_f32(tj_clamp_max(i, tj_v_float(0.5)), (float[]){-3, 0, 0.5f}, 3, 0);
    test_expect_i64(tj_clamp_min(b8(2, (uint8_t[]){1, 0}), tj_v_int(0)), 2, (int64_t[]){1, 0});
}

/* ---- errors ---- */

Test(emath, errors_name_the_operator)
{
    tj_tensor *i = i64(3, (int64_t[]){7, -7, 1}), *z = i64(3, (int64_t[]){2, 0, 1});
    tj_tensor *b = b8(2, (uint8_t[]){1, 0});
    /* torch: RuntimeError: ZeroDivisionError */
    test_expect_error(tj_remainder(i, z), TJ_ERR_INVALID_ARGUMENT, "aten::remainder.Tensor", "ZeroDivisionError");
    test_expect_error(tj_fmod(i, z), TJ_ERR_INVALID_ARGUMENT, "aten::fmod.Tensor", "ZeroDivisionError");
    test_expect_error(tj_remainder_scalar(i, tj_v_int(0)), TJ_ERR_INVALID_ARGUMENT, "aten::remainder.Scalar",
                      "ZeroDivisionError");
    test_expect_error(tj_fmod_scalar(i, tj_v_int(0)), TJ_ERR_INVALID_ARGUMENT, "aten::fmod.Scalar",
                      "ZeroDivisionError");
    /* float zero divisors are nan, not errors (the binary tables) */
    test_expect_f32(tj_fmod_scalar(i, tj_v_float(0.0)), (float[]){NAN, NAN, NAN}, 3, 0);
    /* torch: "remainder_cpu" / "fmod_cpu" not implemented for 'Bool' */
    test_expect_error(tj_remainder(b, b), TJ_ERR_DTYPE, "aten::remainder.Tensor", "bool");
    test_expect_error(tj_fmod(b, b), TJ_ERR_DTYPE, "aten::fmod.Tensor", "bool");
    /* torch: "clamp_max_scalar_cpu" not implemented for 'Bool' */
    test_expect_error(tj_clamp_max(b, tj_v_bool(true)), TJ_ERR_DTYPE, "aten::clamp_max", "bool");
    test_expect_error(tj_clamp_min(f32(1, (float[]){1}), tj_v_float(1e300)), TJ_ERR_INVALID_ARGUMENT,
                      "aten::clamp_min", "min");
    tj_tensor *a3 = f32(3, (float[]){1, 2, 3}), *a4 = f32(4, (float[]){1, 2, 3, 4});
    test_expect_error(tj_atan2(a3, a4), TJ_ERR_SHAPE, "aten::atan2", "[3] and [4]");
    test_expect_error(tj_remainder(a3, a4), TJ_ERR_SHAPE, "aten::remainder.Tensor", "[3] and [4]");
}

/* ---- gradients ---- */

#define NG 5
/* the upstream gradient */
static const float gs[NG] = {1, -2, 0.5f, 3, -1.5f};

static tj_tensor *grad_of(tj_tensor *(*fn)(tj_tensor *), const float *x)
{
    tj_tensor *t = f32(NG, x);
    tj_tensor_set_requires_grad(t, true);
    return test_grad1(t, fn(t), f32(NG, gs));
}

static tj_tensor *clamp_min0(tj_tensor *x) { return tj_clamp_min(x, tj_v_float(0)); }
static tj_tensor *clamp_max03(tj_tensor *x) { return tj_clamp_max(x, tj_v_float(0.3)); }
static tj_tensor *nan_to_num0(tj_tensor *x) { return tj_nan_to_num(x, tj_v_none(), tj_v_none(), tj_v_none()); }

Test(emath, unary_gradients_match_torch)
{
    static const float xu[NG] = {0.3f, -0.7f, 0.5f, -0.2f, 0.9f}, xp[NG] = {0.3f, 1.7f, 0.5f, 2, 9};
    const double r = 2.5e-7;
    test_expect_f32(grad_of(tj_asin, xu), (float[]){1.048284888267517f, -2.8005599975585938f, 0.5773502588272095f,
                                                    3.061861991882324f, -3.4412355422973633f}, NG, r);
    test_expect_f32(grad_of(tj_acos, xu), (float[]){-1.048284888267517f, 2.8005599975585938f, -0.5773502588272095f,
                                                    -3.061861991882324f, 3.4412355422973633f}, NG, r);
    test_expect_f32(grad_of(tj_atan, xu), (float[]){0.9174311757087708f, -1.3422818183898926f, 0.4000000059604645f,
                                                    2.884615421295166f, -0.8287293314933777f}, NG, r);
    test_expect_f32(grad_of(tj_sinh, xu), (float[]){1.04533851146698f, -2.510338068008423f, 0.5638129711151123f,
                                                    3.0602002143859863f, -2.149629592895508f}, NG, r);
    test_expect_f32(grad_of(tj_cosh, xu), (float[]){0.30452030897140503f, 1.517167329788208f, 0.2605476379394531f,
                                                    -0.6040080189704895f, -1.539775013923645f}, NG, r);
    test_expect_f32(grad_of(tj_exp2, xu), (float[]){0.8533642888069153f, -0.8533642888069153f, 0.4901290535926819f,
                                                    1.8102589845657349f, -1.9401875734329224f}, NG, r);
    test_expect_f32(grad_of(tj_log2, xp), (float[]){4.808983325958252f, -1.6972882747650146f, 1.4426950216293335f,
                                                    2.1640424728393555f, -0.24044917523860931f}, NG, r);
    test_expect_f32(grad_of(tj_log10, xp), (float[]){1.4476481676101685f, -0.5109346508979797f, 0.4342944622039795f,
                                                     0.6514416933059692f, -0.07238241285085678f}, NG, r);
    /* rounding: zeros; frac: the gradient itself */
    tj_tensor *(*const zero_grad[4])(tj_tensor *) = {tj_floor, tj_ceil, tj_round, tj_trunc};
    for (int k = 0; k < 4; k++) test_expect_f32(grad_of(zero_grad[k], xu), (float[]){0, 0, 0, 0, 0}, NG, 0);
    test_expect_f32(grad_of(tj_frac, xu), gs, NG, 0);
    test_expect_f32(grad_of(clamp_min0, xu), (float[]){1, 0, 0.5f, 0, -1.5f}, NG, 0);
    test_expect_f32(grad_of(clamp_max03, xu), (float[]){1, -2, 0, 3, 0}, NG, 0);
    /* at the bound the gradient passes (self >= min, self <= max) */
    static const float xb[NG] = {0, -0.7f, 0.3f, -0.2f, 0.9f};
    test_expect_f32(grad_of(clamp_min0, xb), (float[]){1, 0, 0.5f, 0, -1.5f}, NG, 0);
    test_expect_f32(grad_of(clamp_max03, xb), (float[]){1, -2, 0.5f, 3, 0}, NG, 0);
    /* nan_to_num: grad * isfinite(self) (-2 * 0 = -0.0 as in torch) */
    test_expect_f32(grad_of(nan_to_num0, (float[]){NAN, INFINITY, -INFINITY, -0.5f, 2.5f}),
                    (float[]){0, -0.0f, 0, 3, -1.5f}, NG, 0);
}

/* Gradients of self and other for fn(a, b) (other a Tensor). */
static void binary_grads(tj_tensor *(*fn)(tj_tensor *, tj_tensor *), const float *ga, const float *gb, double rtol)
{
    tj_tensor *a = f32(NG, (float[]){7, -7, 5.5f, -0.5f, 3}), *b = f32(NG, (float[]){2, 2, -2, 0.75f, -4});
    tj_tensor_set_requires_grad(a, true);
    tj_tensor_set_requires_grad(b, true);
    cr_assert_eq(tj_backward(fn(a, b), f32(NG, gs)), TJ_OK, "%s", tj_last_error());
    test_expect_f32(tj_tensor_grad(a), ga, NG, rtol);
    test_expect_f32(tj_tensor_grad(b), gb, NG, rtol);
}

Test(emath, binary_gradients_match_torch)
{
    /* other: -grad * self.div(other, rounding_mode='floor' (remainder) / 'trunc' (fmod)) */
    binary_grads(tj_remainder, gs, (float[]){-3, -8, 1.5f, 3, -1.5f}, 0);
    binary_grads(tj_fmod, gs, (float[]){-3, -6, 1, 0, -0.0f}, 0);
    binary_grads(tj_atan2,
                 (float[]){0.03773584961891174f, -0.07547169923782349f, -0.029197080060839653f, 2.769230842590332f,
                           0.23999999463558197f},
                 (float[]){-0.1320754736661911f, -0.2641509473323822f, -0.08029197156429291f, 1.846153974533081f,
                           0.17999999225139618f},
                 2.5e-7);
    tj_tensor *a = f32(NG, (float[]){7, -7, 5.5f, -0.5f, 3});
    tj_tensor_set_requires_grad(a, true);
    test_expect_f32(test_grad1(a, tj_remainder_scalar(a, tj_v_float(1.5)), f32(NG, gs)), gs, NG, 0);
    test_expect_f32(test_grad1(a, tj_fmod_scalar(a, tj_v_float(1.5)), f32(NG, gs)), gs, NG, 0);
}

/* ---- tracing, decomposition, replay ---- */

/* Every new operator once on x (float32 [2, NX / 2]) and y (float32 [NX / 2]). */
static tj_status all_ops(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n;
    tj_tensor *x = in[0], *y = in[1];
    int k = 0;
    out[k++] = tj_floor(x);
    out[k++] = tj_ceil(x);
    out[k++] = tj_round(x);
    out[k++] = tj_trunc(x);
    out[k++] = tj_frac(x);
    out[k++] = tj_remainder(x, y);
    out[k++] = tj_remainder_scalar(x, tj_v_float(-0.75));
    out[k++] = tj_fmod(x, y);
    out[k++] = tj_fmod_scalar(x, tj_v_float(-0.75));
    out[k++] = tj_isnan(x);
    out[k++] = tj_isinf(x);
    out[k++] = tj_nan_to_num(x, tj_v_float(1.5), tj_v_none(), tj_v_float(-2));
    out[k++] = tj_clamp_min(x, tj_v_float(0));
    out[k++] = tj_clamp_max(x, tj_v_float(NAN));
    out[k++] = tj_atan2(x, y);
    out[k++] = tj_asin(x);
    out[k++] = tj_acos(x);
    out[k++] = tj_atan(x);
    out[k++] = tj_sinh(x);
    out[k++] = tj_cosh(x);
    out[k++] = tj_log2(x);
    out[k++] = tj_log10(x);
    out[k++] = tj_exp2(x);
    out[k++] = tj_isfinite(x); /* implicit: recorded as eq, abs, ne.Scalar, mul */
    *n_out = k;
    for (int i = 0; i < k; i++)
        if (!out[i]) return tj_last_status();
    return TJ_OK;
}

#define NOPS 24
#define NRECORDED 23
static const char *const op_names[NOPS] = {
    "aten::floor", "aten::ceil", "aten::round", "aten::trunc", "aten::frac", "aten::remainder.Tensor",
    "aten::remainder.Scalar", "aten::fmod.Tensor", "aten::fmod.Scalar", "aten::isnan", "aten::isinf",
    "aten::nan_to_num", "aten::clamp_min", "aten::clamp_max", "aten::atan2", "aten::asin", "aten::acos",
    "aten::atan", "aten::sinh", "aten::cosh", "aten::log2", "aten::log10", "aten::exp2", "aten::isfinite"};

static void inputs(tj_tensor **in)
{
    in[0] = test_tensor(TJ_FLOAT32, 2, (int64_t[]){2, NX / 2}, xs);
    in[1] = f32(NX / 2, (float[]){2, -2, 0.75f, -0.0f, INFINITY, 3, -1.5f, NAN, 0.5f, -3});
}

Test(emath, make_fx_records_the_aten_names_and_not_the_implicit_isfinite)
{
    tj_tensor *in[2];
    inputs(in);
    tj_graph *g = tj_make_fx(all_ops, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    test_expect_op_count(g, op_names, NRECORDED, 1);
    test_expect_op_count(g, op_names + NRECORDED, NOPS - NRECORDED, 0);
    tj_graph_free(g);
}

Test(emath, decomposed_graph_and_plan_give_the_kernels_bits)
{
    tj_tensor *in[2];
    inputs(in);
    tj_tensor *eager[NOPS];
    test_run_eager(all_ops, in, 2, eager, NOPS);
    /* the core table lowers everything to primitives with the kernels' bits,
     * except exp2 = pow(2, x): SLEEF's pow and exp2 may differ by an ulp */
    tj_tensor *got[NOPS];
    cr_expect(test_run_core(all_ops, NULL, in, 2, got));
    for (int k = 0; k < NOPS; k++) {
        if (strcmp(op_names[k], "aten::exp2") != 0) test_expect_identical(got[k], eager[k], op_names[k]);
        else test_expect_f32(got[k], tj_tensor_data(eager[k]), NX, 1.2e-7);
    }
    /* the undecomposed graph compiled into a plan replays eager's bits */
    tj_graph *g = tj_make_fx(all_ops, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    test_replay(g, in, 2, got, NOPS);
    for (int k = 0; k < NOPS; k++) test_expect_identical(got[k], eager[k], op_names[k]);
    tj_graph_free(g);
}

static tj_status remainder_int(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n;
    out[0] = tj_remainder(in[0], in[1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(emath, int64_division_by_zero_fails_in_a_plan)
{
    tj_tensor *in[2] = {i64(3, (int64_t[]){7, -7, 1}), i64(3, (int64_t[]){2, 0, 1})};
    tj_tensor *out;
    tj_graph *g = tj_make_fx(remainder_int, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_expect_eq(tj_plan_run(p, in, 2, &out), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "ZeroDivisionError"), "%s", tj_last_error());
    tj_plan_free(p);
    tj_graph_free(g);
}

/* remainder's core decomposition is lean: fmod, the two sign tests, their
 * agreement, the zero test, the fix-up add and two wheres on primitives
 * (session 19's logical_and / xor / ne re-derived every bool, 30 nodes).
 * In real mode an int64 zero divisor fails in fmod, reported under
 * remainder's name (earlier: "aten::where.self: argument 0 ... is NULL"). */
Test(emath, remainder_core_decomposition_is_lean_and_its_errors_name_remainder)
{
    tj_tensor *in[2] = {f32(3, (float[]){7, -7, 1}), f32(3, (float[]){2, -2, 0})};
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(remainder_int, NULL, in, 2, core, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect(test_only_primitives(g));
    cr_expect_leq(tj_graph_num_calls(g), 10, "%d calls", tj_graph_num_calls(g));
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::eq.Tensor")), 2);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::where.self")), 2);
    tj_graph_free(g);
    tj_tensor *zero[2] = {i64(3, (int64_t[]){7, -7, 1}), i64(3, (int64_t[]){2, 0, 1})};
    cr_expect_null(tj_make_fx(remainder_int, NULL, zero, 2, core, TJ_TRACE_REAL));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    const char *e = tj_last_error();
    cr_expect(strstr(e, "aten::remainder.Tensor: aten::fmod.Tensor: integer division by zero") == e, "%s", e);
    tj_decomp_table_free(core);
}

/* exp below SLEEF's zero limit (kernels/sleef_limits.h) is fed 0 and given
 * +0 without the underflow: in a vector mixing such lanes with others, the
 * others keep the bits they get in a vector of their own, and the low ones
 * are +0; sigmoid and silu, which take exp(-x), likewise for large x; and
 * float64 below -1000. */
static void expect_lanes_alone(tj_tensor *(*fn)(tj_tensor *), const float *x, int n, const char *what)
{
    const float *mixed = tj_tensor_data(fn(f32(n, x)));
    for (int i = 0; i < n; i++) {
        float alone[16], want;
        for (int j = 0; j < 16; j++) alone[j] = x[i];
        want = ((const float *)tj_tensor_data(fn(f32(16, alone))))[0];
        cr_expect(!memcmp(&mixed[i], &want, sizeof want), "%s(%a): %a in a mixed vector, %a alone", what, x[i],
                  mixed[i], want);
    }
}

Test(emath, exp_lanes_below_the_zero_limit_are_zero_and_leave_the_others_alone_on_every_isa)
{
    static const float low[16] = {-INFINITY, -1e30f, -104.5f, -104.0001f, -103.99f, -103.5f, -90.0f, -87.5f,
                                  -50.0f,    0.0f,   NAN,     -200.0f,    1.0f,     88.0f,   -0.0f,  -104.0f};
    float high[16];
    for (int i = 0; i < 16; i++) high[i] = -low[i];
    for (size_t k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        cr_log_info("%s", test_isas[k]);
        const float *e = tj_tensor_data(tj_exp(f32(16, low)));
        for (int i = 0; i < 5; i++) cr_expect(e[i] == 0 && !signbit(e[i]), "exp(%a) = %a, want +0", low[i], e[i]);
        cr_expect_gt(e[6], 0, "exp(-90) is a denormal, not 0");
        expect_lanes_alone(tj_exp, low, 16, "exp");
        expect_lanes_alone(tj_sigmoid, high, 16, "sigmoid");
        expect_lanes_alone(tj_silu, high, 16, "silu");
        static const double low64[8] = {-INFINITY, -1e300, -1000.5, -999.5, -745.0, -700.0, 0.0, NAN};
        const double *e64 = tj_tensor_data(tj_exp(f64(8, low64)));
        for (int i = 0; i < 3; i++) cr_expect(e64[i] == 0 && !signbit(e64[i]), "exp(%a) = %a", low64[i], e64[i]);
        cr_expect_gt(e64[5], 0);
        cr_expect(isnan(e64[7]));
    }
}
