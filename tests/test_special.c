/* The special functions (op_special.def): values and gradients against
 * PyTorch 1.13 in float64 (tests/special_ref.h, from
 * tests/make_special_refs.py), the poles, signed zeros and domain ends as
 * torch, erfinv near +-1 against mpmath, errors, and torch.distributions'
 * Gamma.log_prob and Normal.icdf with their gradients, eager, traced
 * (fake and real mode), replayed and lowered to the primitives. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "special_ref.h"
#include "test_util.h"

TestSuite(special, .init = test_scope_open, .fini = test_scope_close);

static const int64_t SHAPE[2] = {2, 3};

static tj_tensor *f64v(const double *v, bool requires_grad) { return test_f64_grad(v, 2, SHAPE, requires_grad); }
static tj_tensor *f32(int64_t n, const float *v) { return test_f32(1, (int64_t[]){n}, v); }

/* the function of special_ref.h's case `name` */
static tj_tensor *apply(const char *name, tj_tensor *x, tj_tensor *y)
{
    if (!strcmp(name, "lgamma")) return tj_lgamma(x);
    if (!strcmp(name, "digamma")) return tj_digamma(x);
    if (!strncmp(name, "polygamma", 9)) return tj_polygamma(name[9] - '0', x);
    if (!strcmp(name, "erfinv")) return tj_erfinv(x);
    if (!strcmp(name, "erfc")) return tj_erfc(x);
    if (!strcmp(name, "i0")) return tj_i0(x);
    if (!strcmp(name, "i0e")) return tj_special_i0e(x);
    if (!strcmp(name, "i1")) return tj_special_i1(x);
    if (!strcmp(name, "i1e")) return tj_special_i1e(x);
    if (!strcmp(name, "ndtri")) return tj_special_ndtri(x);
    if (!strcmp(name, "entr")) return tj_special_entr(x);
    if (!strcmp(name, "logit")) return tj_logit(x, tj_v_none());
    if (!strcmp(name, "logit_eps")) return tj_logit(x, tj_v_float(0.2));
    if (!strcmp(name, "sinc")) return tj_sinc(x);
    if (!strcmp(name, "hypot")) return tj_hypot(x, y);
    if (!strcmp(name, "copysign")) return tj_copysign(x, y);
    if (!strcmp(name, "xlog1py")) return tj_special_xlog1py(x, y);
    cr_assert_fail("no function for %s", name);
    return NULL;
}

static bool is_binary(const char *name)
{
    return !strcmp(name, "hypot") || !strcmp(name, "copysign") || !strcmp(name, "xlog1py");
}

Test(special, values_and_gradients_match_torch_float64)
{
    for (size_t k = 0; k < sizeof special_cases / sizeof *special_cases; k++) {
        const special_case *c = &special_cases[k];
        bool binary = is_binary(c->name);
        tj_tensor *x = f64v(c->x, true), *y = binary ? f64v(c->y, true) : NULL, *g[2];
        tj_tensor *r = apply(c->name, x, y);
        cr_assert_not_null(r, "%s: %s", c->name, tj_last_error());
        cr_expect_eq(tj_tensor_dtype(r), TJ_FLOAT64, "%s", c->name);
        test_expect_close(r, c->out, 6, 1e-12, 1e-14);
        tj_tensor *loss = tj_sum(tj_mul(r, f64v(loss_weights, false)), TJ_DTYPE_NONE);
        tj_tensor *wrt[2] = {x, y};
        cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, wrt, binary ? 2 : 1, g), TJ_OK, "%s: %s", c->name,
                     tj_last_error());
        test_expect_close(g[0], c->gx, 6, 1e-10, 1e-12);
        if (binary) test_expect_close(g[1], c->gy, 6, 1e-10, 1e-12);
    }
}

/* float32 keeps its dtype and rounds the float64 value once; int64 and
 * bool compute in float32: torch's float64 values of lgamma([0.5, 3.5]),
 * digamma([1, 4]), i0([1, 0]) rounded to float32 (torch's own float32
 * kernels give -0.5772159 for digamma(1) and 0.99999994 for i0(0)) */
Test(special, float32_and_integer_inputs_as_torch)
{
    tj_tensor *r = tj_lgamma(f32(2, (float[]){0.5f, 3.5f}));
    cr_assert_eq(tj_tensor_dtype(r), TJ_FLOAT32);
    test_expect_f32(r, (float[]){0.5723649263381958f, 1.200973629951477f}, 2, 0);
    tj_tensor *d = tj_digamma(test_i64(1, (int64_t[]){2}, (int64_t[]){1, 4}));
    cr_assert_eq(tj_tensor_dtype(d), TJ_FLOAT32);
    test_expect_f32(d, (float[]){-0.5772156715393066f, 1.2561177015304565f}, 2, 0);
    tj_tensor *b = tj_i0(test_tensor(TJ_BOOL, 1, (int64_t[]){2}, (uint8_t[]){1, 0}));
    test_expect_f32(b, (float[]){1.2660658359527588f, 1.0f}, 2, 0);
}

/* torch 1.13 float64: digamma(+0) = -inf, digamma(-0) = inf, nan at the
 * negative integers and -inf; lgamma inf at the poles; polygamma(1, 0) =
 * inf; erfinv(+-1) = +-inf, nan beyond; ndtri(0) = -inf, ndtri(1) = inf;
 * entr(-1) = -inf; sinc(0) = 1 */
Test(special, poles_signed_zeros_and_domain_ends_as_torch)
{
    const double z[6] = {0.0, -0.0, -2.0, -INFINITY, INFINITY, NAN};
    tj_tensor *x = f64v(z, false);
    test_expect_close(tj_digamma(x), (double[]){-INFINITY, INFINITY, NAN, NAN, INFINITY, NAN}, 6, 0, 0);
    test_expect_close(tj_lgamma(x), (double[]){INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, NAN}, 6, 0, 0);
    test_expect_close(tj_polygamma(1, x), (double[]){INFINITY, INFINITY, 1.6451975368302367e+32, NAN, 0, NAN}, 6,
                      1e-12, 0);
    const double u[6] = {1.0, -1.0, 1.5, -0.0, 0.0, 0.5};
    test_expect_close(tj_erfinv(f64v(u, false)),
                      (double[]){INFINITY, -INFINITY, NAN, -0.0, 0.0, 0.4769362762044699}, 6, 1e-15, 0);
    cr_expect(signbit(tj_tensor_item_at(tj_erfinv(f64v(u, false)), 3)), "erfinv(-0) is -0");
    const double p[6] = {0.0, 1.0, -0.5, 0.5, 1e-300, 0.975};
    test_expect_close(tj_special_ndtri(f64v(p, false)),
                      (double[]){-INFINITY, INFINITY, NAN, 0, -37.0470962993612, 1.959963984540054}, 6, 1e-13, 0);
    const double e[6] = {-1.0, 0.0, -0.0, NAN, INFINITY, 1.0};
    test_expect_close(tj_special_entr(f64v(e, false)), (double[]){-INFINITY, 0, 0, NAN, -INFINITY, -0.0}, 6, 0, 0);
    test_expect_close(tj_sinc(f64v(z, false)), (double[]){1, 1, -3.8981718325193755e-17, NAN, NAN, NAN}, 6, 1e-6,
                      1e-30);
}

/* Near +-1 torch 1.13's float64 erfinv loses digits (4.572825001442121 at
 * 0.9999999999, -5.863948532247121 at -(1 - 2^-53), 3.458910737283175 at
 * 0.999999); tjit's are mpmath's (mp.dps = 40: 4.572824958544924937...,
 * -5.863584748755167927..., 3.458910737275498777...) */
Test(special, erfinv_near_one_is_accurate)
{
    const double y[6] = {0.9999999999, -0.99999999999999989, 0.999999, -0.5, 0.75, 1e-300};
    tj_tensor *r = tj_erfinv(f64v(y, false));
    test_expect_close(r, (double[]){4.572824958544925, -5.863584748755168, 3.4589107372754988, -0.4769362762044699,
                                    0.8134198475976185, 8.862269254527580e-301},
                      6, 2e-15, 0);
}

/* polygamma(n >= 2) of x far below 0 folds the Hurwitz zeta sum to
 * positive arguments instead of stepping |x| times (the direct sum, torch's,
 * would take ~1e15 steps at -999999999999999.5, where the value is 2 pi^4
 * to double precision: psi3(-N - 1/2) = pi^4 + 6 sum_{k <= N} (k + 1/2)^-4).
 * The others are torch.polygamma(3, x) in float64. */
Test(special, polygamma_far_below_zero_takes_no_steps_per_unit)
{
    const double x[6] = {-100.7, -1000.3, -12345.6, -65.25, -999999999999999.5, -0.5};
    tj_tensor *r = tj_polygamma(3, f64v(x, false));
    test_expect_close(r, (double[]){769.0209124039048, 769.0209143319254, 283.602300080033, 1558.5454495085792,
                                    194.81818206800483, 193.40909103400242},
                      6, 1e-12, 0);
}

Test(special, errors_name_the_operator_and_the_offending_value)
{
    tj_tensor *x = f32(3, (float[]){1, 2, 3});
    test_expect_error(tj_polygamma(-1, x), TJ_ERR_INVALID_ARGUMENT, "aten::polygamma", "negative n (-1)");
    tj_tensor *i = test_i64(1, (int64_t[]){2}, (int64_t[]){1, 2});
    test_expect_error(tj_hypot(i, i), TJ_ERR_DTYPE, "aten::hypot", "int64");
    test_expect_error(tj_hypot(x, f32(2, (float[]){1, 2})), TJ_ERR_SHAPE, "aten::hypot", "[3] and [2]");
    test_expect_error(tj_heaviside(x, tj_to_copy(x, TJ_FLOAT64)), TJ_ERR_DTYPE, "aten::heaviside",
                      "different dtypes (float32, float64)");
    test_expect_error(tj_heaviside(i, x), TJ_ERR_DTYPE, "aten::heaviside", "different dtypes (int64, float32)");
    test_expect_error(tj_special_xlog1py(x, f32(2, (float[]){1, 2})), TJ_ERR_SHAPE, "aten::special_xlog1py",
                      "[3] and [2]");
    test_expect_error(tj_logit_backward(x, f32(2, (float[]){1, 2}), tj_v_none()), TJ_ERR_SHAPE,
                      "aten::logit_backward", "[3] and [2]");
    /* an int64 self cannot hold the in-place float result */
    test_expect_error(tj_lgamma_(test_i64(1, (int64_t[]){2}, (int64_t[]){1, 2})), TJ_ERR_DTYPE, "aten::lgamma_",
                      "int64");
}

/* torch.distributions.Gamma(alpha, beta).log_prob(value) =
 * xlogy(alpha, beta) + xlogy(alpha - 1, value) - beta value - lgamma(alpha) */
static tj_tensor *gamma_log_prob_of(tj_tensor *alpha, tj_tensor *beta, tj_tensor *value)
{
    tj_tensor *a = tj_add(tj_xlogy(alpha, beta), tj_xlogy(tj_sub_scalar(alpha, tj_v_int(1)), value));
    return tj_sub(tj_sub(a, tj_mul(beta, value)), tj_lgamma(alpha));
}

/* inputs: alpha, beta, value, weights; outputs: sum(W * log_prob) and its
 * gradients in alpha and beta (lgamma's through digamma) */
static tj_status gamma_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *alpha = tj_mul_scalar(in[0], tj_v_int(1)), *beta = tj_mul_scalar(in[1], tj_v_int(1));
    tj_tensor *lp = tj_sum(tj_mul(gamma_log_prob_of(alpha, beta, in[2]), in[3]), TJ_DTYPE_NONE), *g[2];
    tj_status st = tj_autograd_grad(&lp, 1, NULL, (tj_tensor *[]){in[0], in[1]}, 2, g);
    if (st != TJ_OK) return st;
    out[0] = lp, out[1] = g[0], out[2] = g[1];
    *n_out = 3;
    return TJ_OK;
}

static void gamma_inputs(tj_tensor **in)
{
    in[0] = f64v(gamma_alpha, true);
    in[1] = f64v(gamma_beta, true);
    in[2] = f64v(gamma_value, false);
    in[3] = f64v(loss_weights, false);
}

Test(special, gamma_log_prob_and_its_gradients_match_torch_distributions)
{
    tj_tensor *in[4], *out[3];
    gamma_inputs(in);
    test_expect_close(gamma_log_prob_of(in[0], in[1], in[2]), gamma_log_prob, 6, 1e-12, 1e-14);
    test_run_eager(gamma_step, in, 4, out, 3);
    test_expect_close(out[1], gamma_grad_alpha, 6, 1e-12, 1e-14);
    test_expect_close(out[2], gamma_grad_beta, 6, 1e-12, 1e-14);
}

/* make_fx (fake mode) records lgamma and, for its gradient, digamma; the
 * plan replays eager's values exactly and the core-decomposed trace too
 * (both are primitives) */
Test(special, gamma_log_prob_step_traces_replays_and_lowers)
{
    tj_tensor *in[4];
    gamma_inputs(in);
    const char *want[] = {"aten.lgamma.default", "aten.digamma.default", "aten.xlogy.Tensor"};
    test_expect_traced(gamma_step, in, 4, 3, want, 3, NULL, 0);
    /* real mode: the same graph, replayed to eager's values */
    tj_graph *g = tj_make_fx(gamma_step, NULL, in, 4, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor *eager[3], *got[3];
    test_run_eager(gamma_step, in, 4, eager, 3);
    test_replay(g, in, 4, got, 3);
    for (int k = 0; k < 3; k++) test_expect_same(got[k], eager[k], "real-mode replay");
    tj_graph_free(g);
}

/* Normal(0.5, scale).icdf(p) = 0.5 + scale * erfinv(2p - 1) * sqrt(2), and
 * its gradient in scale; logit with eps and its backward operator on the
 * way (sum(W * logit(p, 0.2)) by p), lowered to the primitives by the core
 * table (logit and logit_backward decompose as torch._decomp) */
static tj_status icdf_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *p = in[1], *scale = tj_mul_scalar(in[0], tj_v_int(1));
    tj_tensor *e = tj_erfinv(tj_sub_scalar(tj_mul_scalar(p, tj_v_int(2)), tj_v_int(1)));
    tj_tensor *q = tj_add_scalar(tj_mul(scale, tj_mul_scalar(e, tj_v_float(sqrt(2.0)))), tj_v_float(0.5));
    tj_tensor *loss = tj_sum(tj_mul(q, in[2]), TJ_DTYPE_NONE), *g;
    tj_status st = tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){in[0]}, 1, &g);
    if (st != TJ_OK) return st;
    tj_tensor *lg = tj_sum(tj_mul(tj_logit(in[3], tj_v_float(0.2)), in[2]), TJ_DTYPE_NONE), *gl;
    st = tj_autograd_grad(&lg, 1, NULL, (tj_tensor *[]){in[3]}, 1, &gl);
    if (st != TJ_OK) return st;
    out[0] = q, out[1] = g, out[2] = gl;
    *n_out = 3;
    return TJ_OK;
}

Test(special, normal_icdf_and_logit_gradients_match_torch_and_lower)
{
    const special_case *logit = NULL;
    for (size_t k = 0; k < sizeof special_cases / sizeof *special_cases; k++)
        if (!strcmp(special_cases[k].name, "logit_eps")) logit = &special_cases[k];
    cr_assert_not_null(logit);
    tj_tensor *in[4] = {f64v(normal_scale, true), f64v(normal_p, false), f64v(loss_weights, false),
                        f64v(logit->x, true)};
    tj_tensor *out[3];
    test_run_eager(icdf_step, in, 4, out, 3);
    test_expect_close(out[0], normal_icdf, 6, 1e-12, 1e-14);
    test_expect_close(out[1], normal_grad_scale, 6, 1e-12, 1e-14);
    test_expect_close(out[2], logit->gx, 6, 1e-12, 1e-14);
    const char *want[] = {"aten.erfinv.default", "aten.logit.default", "aten.logit_backward.default"};
    test_expect_traced(icdf_step, in, 4, 3, want, 3, NULL, 1e-12);
}
