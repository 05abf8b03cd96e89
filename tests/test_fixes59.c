/* Session 59's fixes: grid_sampler_2d at nan and infinite grid coordinates
 * (as torch 1.13's CPU kernel: zeros padding gives nan, border and
 * reflection clip to 0), ...
 *
 * Reference values: PyTorch 1.13 (/usr/bin/python3), e.g.
 *     x = torch.arange(12.).view(1, 1, 3, 4)
 *     torch.grid_sampler_2d(x, torch.tensor([[[[nan, 0.]]]]), 0, 1, True)  # 4.
 * make_cases_fixes59.py writes the conformance cases of every mode. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(fixes59, .init = test_scope_open, .fini = test_scope_close);

#define SHAPE(...) (const int64_t[]){__VA_ARGS__}

/* step traced in real mode (kernels run) replays to eager's nout results
 * exactly; test_expect_traced covers fake mode and the core table */
static void expect_real_trace_replays(tj_trace_fn step, tj_tensor *const *in, int n, int nout)
{
    tj_tensor *eager[4], *got[4];
    int n_out;
    cr_assert_eq(step(NULL, in, n, eager, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(n_out, nout);
    tj_graph *g = tj_make_fx(step, NULL, in, n, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, in, n, got), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < nout; k++) test_expect_same(got[k], eager[k], "replayed after a real-mode trace");
    tj_plan_free(p);
    tj_graph_free(g);
}

/* ---- grid_sampler_2d with non-finite coordinates ---- */

static tj_tensor *image12(void)
{
    double v[12];
    for (int i = 0; i < 12; i++) v[i] = i;
    return test_f64(4, SHAPE(1, 1, 3, 4), v);
}

/* (nan, 0), (inf, 0), (0, -inf), (1e30, 0): with align_corners, y = 0 is
 * row 1 and x = 0 column 1.5 */
static tj_tensor *nonfinite_grid(tj_dtype dt)
{
    tj_tensor *g = test_f64(4, SHAPE(1, 1, 4, 2), (const double[]){NAN, 0, INFINITY, 0, 0, -INFINITY, 1e30, 0});
    return tj_to_copy(g, dt);
}

Test(fixes59, grid_sample_zeros_padding_gives_nan_at_nonfinite_coordinates)
{
    for (int dt = 0; dt < 2; dt++) {
        tj_dtype d = dt ? TJ_FLOAT32 : TJ_FLOAT64;
        tj_tensor *x = tj_to_copy(image12(), d), *g = nonfinite_grid(d);
        /* bilinear: the weights are nan; 1e30 lies outside: 0 */
        test_expect_close(tj_grid_sampler_2d(x, g, 0, 0, true), (const double[]){NAN, NAN, NAN, 0}, 4, 0, 0);
        /* nearest samples nothing */
        test_expect_close(tj_grid_sampler_2d(x, g, 1, 0, true), (const double[]){0, 0, 0, 0}, 4, 0, 0);
    }
}

Test(fixes59, grid_sample_border_and_reflection_clip_nonfinite_coordinates)
{
    tj_tensor *x = image12(), *g = nonfinite_grid(TJ_FLOAT64);
    /* border: nan and -inf clip to 0, inf and 1e30 to the last column */
    test_expect_close(tj_grid_sampler_2d(x, g, 0, 1, true), (const double[]){4, 7, 1.5, 7}, 4, 0, 0);
    /* reflection: +-inf reflect to nan, clipped to 0; 1e30 reflects to 0 */
    test_expect_close(tj_grid_sampler_2d(x, g, 0, 2, true), (const double[]){4, 4, 1.5, 4}, 4, 0, 0);
    test_expect_close(tj_grid_sampler_2d(x, g, 1, 2, true), (const double[]){4, 4, 2, 4}, 4, 0, 0);
}

Test(fixes59, grid_sample_backward_at_nan_follows_the_clipped_forward)
{
    /* torch 1.13 crashes here; tjit's gradients are the clipped forward's:
     * the whole grad_output reaches the clipped point's corners, and the
     * clipped coordinate's gradient is 0 */
    tj_tensor *x = image12(), *g = test_f64(4, SHAPE(1, 1, 1, 2), (const double[]){NAN, 0.5});
    tj_tensor *go = test_f64(4, SHAPE(1, 1, 1, 1), (const double[]){2});
    tj_tensor *gi = NULL, *gg = NULL;
    cr_assert_eq(tj_grid_sampler_2d_backward(go, x, g, 0, 1, true, (const bool[]){true, true}, &gi, &gg), TJ_OK,
                 "%s", tj_last_error());
    /* y = 0.5 is row 1.5: half of 2 to (1, 0), half to (2, 0) */
    test_expect_close(gi, (const double[]){0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, 12, 0, 0);
    /* d/dy: (x[2, 0] - x[1, 0]) * 2 * (H - 1) / 2 = 4 * 2 = 8 */
    test_expect_close(gg, (const double[]){0, 8}, 2, 0, 0);
}

static tj_status grid_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    *n_out = 3;
    out[0] = tj_grid_sampler_2d(in[0], in[1], 0, 0, false);
    out[1] = tj_grid_sampler_2d(in[0], in[1], 0, 1, false);
    out[2] = tj_grid_sampler_2d(in[0], in[1], 1, 2, true);
    return out[0] && out[1] && out[2] ? TJ_OK : tj_last_status();
}

Test(fixes59, grid_sample_at_nonfinite_coordinates_traces_and_replays)
{
    const char *want[] = {"aten.grid_sampler_2d.default("};
    tj_tensor *in[2] = {image12(), nonfinite_grid(TJ_FLOAT64)};
    test_expect_traced(grid_step, in, 2, 3, want, 1, NULL, 0);
    expect_real_trace_replays(grid_step, in, 2, 3);
}

/* ---- Scalar overloads, heaviside of integers, polygamma ---- */

static tj_tensor *f64_grad(int n, const double *v) { return test_f64_grad(v, 1, (const int64_t[]){n}, true); }
static tj_tensor *ones(int n) { return tj_ones((const int64_t[]){n}, 1, TJ_FLOAT64); }

Test(fixes59, scalar_overloads_promote_as_wrapped_numbers)
{
    tj_tensor *i = test_i64(1, SHAPE(3), (const int64_t[]){3, -4, 0});
    tj_tensor *c = tj_copysign_scalar(i, tj_v_float(-1.5));
    test_assert_dtype_shape(c, TJ_FLOAT32, 1, SHAPE(3));
    test_expect_close(c, (const double[]){-3, -4, -0.0}, 3, 0, 0);
    tj_tensor *x = test_f64(1, SHAPE(3), (const double[]){1.5, -2, 0});
    test_assert_dtype_shape(tj_copysign_scalar(x, tj_v_int(2)), TJ_FLOAT64, 1, SHAPE(3));
    test_assert_dtype_shape(tj_xlogy_scalar_other(i, tj_v_int(2)), TJ_FLOAT32, 1, SHAPE(3));
    test_expect_close(tj_xlogy_scalar_self(tj_v_float(2.5), x), (const double[]){2.5 * log(1.5), NAN, -INFINITY}, 3,
                      1e-15, 0);
    test_expect_close(tj_special_xlog1py_other_scalar(x, tj_v_float(-1)), (const double[]){-INFINITY, INFINITY, 0}, 3,
                      0, 0);
    test_expect_close(tj_special_xlogy_other_scalar(x, tj_v_int(0)), (const double[]){-INFINITY, INFINITY, 0}, 3, 0,
                      0);
}

/* PyTorch 1.13: torch.autograd.grad of the sums at these points */
Test(fixes59, scalar_overload_gradients_follow_derivatives_yaml)
{
    tj_tensor *x = f64_grad(3, (const double[]){1.5, -2, 0});
    test_expect_close(test_grad1(x, tj_copysign_scalar(x, tj_v_float(-1)), ones(3)), (const double[]){-1, 1, 0}, 3,
                      0, 0);
    tj_tensor *y = f64_grad(2, (const double[]){1, 3});
    test_expect_close(test_grad1(y, tj_special_xlog1py_self_scalar(tj_v_float(2.5), y), ones(2)),
                      (const double[]){1.25, 0.625}, 2, 1e-15, 0);
    tj_tensor *y2 = f64_grad(2, (const double[]){0.5, 3});
    test_expect_close(test_grad1(y2, tj_xlogy_scalar_self(tj_v_float(-1.5), y2), ones(2)), (const double[]){-3, -0.5},
                      2, 1e-15, 0);
    /* self's gradient is xlogy(grad, other), 0 at self == 0 only when
     * other <= 0: with other 3 it is log 3 even at self = 0, with -1 it is
     * nan but 0 at self = 0 */
    tj_tensor *x2 = f64_grad(3, (const double[]){0, 2, -1});
    double l3 = log(3.0), l4 = log(4.0);
    test_expect_close(test_grad1(x2, tj_xlogy_scalar_other(x2, tj_v_int(3)), ones(3)), (const double[]){l3, l3, l3},
                      3, 1e-15, 0);
    test_expect_close(test_grad1(x2, tj_xlogy_scalar_other(x2, tj_v_int(-1)), ones(3)), (const double[]){0, NAN, NAN},
                      3, 0, 0);
    test_expect_close(test_grad1(x2, tj_special_xlog1py_other_scalar(x2, tj_v_int(3)), ones(3)),
                      (const double[]){l4, l4, l4}, 3, 1e-15, 0);
    test_expect_close(test_grad1(x2, tj_special_xlog1py_other_scalar(x2, tj_v_int(-1)), ones(3)),
                      (const double[]){0, -INFINITY, -INFINITY}, 3, 0, 0);
}

Test(fixes59, xlog1py_self_gradient_is_zero_at_self_zero_below_minus_one)
{
    /* torch 1.13: (0, -1) and (0, -2) give 0 (tjit gave -inf and nan) */
    tj_tensor *x = f64_grad(4, (const double[]){0, 0, 2, 0});
    tj_tensor *y = test_f64(1, SHAPE(4), (const double[]){-1, -2, -1, 3});
    test_expect_close(test_grad1(x, tj_special_xlog1py(x, y), ones(4)), (const double[]){0, 0, -INFINITY, log(4.0)}, 4,
                      1e-15, 0);
}

Test(fixes59, heaviside_takes_int64_and_bool)
{
    tj_tensor *x = test_i64(1, SHAPE(4), (const int64_t[]){-3, 0, 5, 0});
    tj_tensor *h = tj_heaviside(x, test_i64(1, SHAPE(4), (const int64_t[]){7, -2, 4, 0}));
    test_assert_dtype_shape(h, TJ_INT64, 1, SHAPE(4));
    test_expect_close(h, (const double[]){0, -2, 1, 0}, 4, 0, 0);
    bool bx[4] = {true, false, false, true}, bv[4] = {false, true, false, true};
    tj_tensor *hb = tj_heaviside(test_tensor(TJ_BOOL, 1, SHAPE(4), bx), test_tensor(TJ_BOOL, 1, SHAPE(4), bv));
    test_assert_dtype_shape(hb, TJ_BOOL, 1, SHAPE(4));
    test_expect_close(hb, (const double[]){1, 1, 0, 1}, 4, 0, 0);
    test_expect_error(tj_heaviside(x, tj_ones(SHAPE(4), 1, TJ_FLOAT32)), TJ_ERR_DTYPE, "aten::heaviside",
                      "different dtypes");
}

Test(fixes59, polygamma_at_the_poles_as_torch_in_each_precision)
{
    /* PyTorch 1.13: polygamma(1, [0, -1, -2]) is [inf, 1.29136970e15,
     * 3.22842424e14] in float32 (sinf of float pi times x), [inf,
     * 6.580790147320947e32, 1.6451975368302367e32] in float64; n >= 2 is
     * (-1)^(n+1) inf at every pole, -0 included */
    double p[4] = {0, -1, -2, -0.0};
    tj_tensor *x64 = test_f64(1, SHAPE(4), p), *x32 = tj_to_copy(x64, TJ_FLOAT32);
    test_expect_f32(tj_polygamma(1, x32), (const float[]){INFINITY, 1291369695936512.0f, 322842423984128.0f, INFINITY},
                    4, 0);
    test_expect_close(tj_polygamma(1, x64), (const double[]){INFINITY, 6.580790147320947e32, 1.6451975368302367e32,
                      INFINITY}, 4, 1e-12, 0);
    test_expect_close(tj_polygamma(2, x32), (const double[]){-INFINITY, -INFINITY, -INFINITY, -INFINITY}, 4, 0, 0);
    test_expect_close(tj_polygamma(3, x64), (const double[]){INFINITY, INFINITY, INFINITY, INFINITY}, 4, 0, 0);
}

Test(fixes59, polygamma_in_place_writes_self)
{
    tj_tensor *x = test_f64(1, SHAPE(2), (const double[]){0.3, 4});
    tj_tensor *want = tj_polygamma(2, x);
    tj_tensor *r = tj_polygamma_(x, 2);
    cr_assert_eq(r, x);
    test_expect_same(x, want, "polygamma_");
    test_expect_error(tj_polygamma_(x, -1), TJ_ERR_INVALID_ARGUMENT, "aten::polygamma", "negative n");
    test_expect_error(tj_polygamma_(test_i64(1, SHAPE(1), (const int64_t[]){2}), 1), TJ_ERR_DTYPE, "aten::polygamma_", "result type Float");
}

/* every overload, with the gradients of the differentiable ones */
static tj_status overload_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]), *y = in[1];
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK) return tj_last_status();
    tj_tensor *a = tj_copysign_scalar(x, tj_v_float(-1)), *b = tj_xlogy_scalar_other(x, tj_v_int(-1));
    tj_tensor *c = tj_special_xlog1py_other_scalar(x, tj_v_float(0.5)), *d = tj_xlogy_scalar_self(tj_v_float(2), y);
    tj_tensor *e = tj_special_xlog1py_self_scalar(tj_v_int(3), y), *f = tj_special_xlogy(x, y);
    tj_tensor *loss = tj_sum(tj_add(tj_add(a, b), tj_add(c, f)), TJ_DTYPE_NONE);
    *n_out = 4;
    out[0] = tj_add(d, e);
    out[1] = tj_polygamma_(tj_clone(y), 2);
    out[2] = tj_heaviside(tj_round(x), tj_round(y));
    return loss ? tj_autograd_grad(&loss, 1, NULL, &x, 1, &out[3]) : tj_last_status();
}

Test(fixes59, overloads_trace_replay_and_decompose)
{
    tj_tensor *x = test_f64(1, SHAPE(5), (const double[]){0, 1.5, -2.25, 3, 0.5});
    tj_tensor *y = test_f64(1, SHAPE(5), (const double[]){0.5, 2, 0, 7, -0.5});
    const char *want[] = {"aten.copysign.Scalar(", "aten.xlogy.Scalar_Other(", "aten.special_xlog1py.other_scalar(",
                          "aten.xlogy.Scalar_Self(", "aten.special_xlog1py.self_scalar(", "aten.xlogy.Tensor(",
                          "aten.polygamma.default(", "aten.heaviside.default("};
    test_expect_traced(overload_step, (tj_tensor *[]){x, y}, 2, 4, want, 8, "special_xlogy", 1e-14);
    expect_real_trace_replays(overload_step, (tj_tensor *[]){x, y}, 2, 4);
}

/* ---- special_log_ndtr ---- */

/* PyTorch 1.13, float64: log_ndtr at -40, -5, 0, 3, -1e5 and the gradient
 * of its sum */
Test(fixes59, log_ndtr_and_its_gradient_match_torch_far_into_the_tail)
{
    tj_tensor *x = f64_grad(5, (const double[]){-40, -5, 0, 3, -1e5});
    tj_tensor *y = tj_special_log_ndtr(x);
    test_expect_close(y, (const double[]){-804.6084420137539, -15.064998393988727, -0.6931471805599453,
                                          -0.0013508099647481923, -5000000012.431865}, 5, 1e-14, 0);
    /* the gradient exp(-(result + x^2 / 2)) / sqrt(2 pi) cancels ~x^2 / 2:
     * at -1e5 one ulp of the result (1e-6) moves it by 1e-6 relative */
    tj_tensor *gx = test_grad1(x, y, ones(5));
    test_expect_close(tj_narrow(gx, 0, 0, 4), (const double[]){40.024968847212364, 5.18650396712585,
                      0.7978845608028654, 0.004437839042125664}, 4, 1e-12, 0);
    test_expect_close(tj_narrow(gx, 0, 4, 1), (const double[]){100000.07402897284}, 1, 4e-6, 0);
    /* float32 and int64 give float32; inf, -inf, nan */
    tj_tensor *e = tj_special_log_ndtr(test_f32(1, SHAPE(3), (const float[]){INFINITY, -INFINITY, NAN}));
    test_expect_f32(e, (const float[]){-0.0f, -INFINITY, NAN}, 3, 0);
    test_assert_dtype_shape(tj_special_log_ndtr(test_i64(1, SHAPE(1), (const int64_t[]){-2})), TJ_FLOAT32, 1, SHAPE(1));
}

static tj_status log_ndtr_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]);
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK) return tj_last_status();
    tj_tensor *y = tj_special_log_ndtr(x), *loss = tj_sum(y, TJ_DTYPE_NONE);
    *n_out = 2;
    out[0] = y;
    return loss ? tj_autograd_grad(&loss, 1, NULL, &x, 1, &out[1]) : tj_last_status();
}

Test(fixes59, log_ndtr_traces_with_its_gradient_and_replays)
{
    tj_tensor *x = test_f64(1, SHAPE(4), (const double[]){-50, -2.5, 0.25, 6});
    const char *want[] = {"aten.special_log_ndtr.default(", "aten.exp.default(", "aten.div.Scalar("};
    test_expect_traced(log_ndtr_step, (tj_tensor *[]){x}, 1, 2, want, 3, NULL, 0);
    expect_real_trace_replays(log_ndtr_step, (tj_tensor *[]){x}, 1, 2);
}

/* ---- the float random fills ---- */

typedef struct moments {
    double mean, var, min, max;
} moments;

static moments moments_of(tj_tensor *t)
{
    int64_t n = tj_tensor_numel(t);
    double *v = malloc(sizeof *v * (size_t)n);
    cr_assert_not_null(v);
    cr_assert_eq(tj_tensor_copy_to(tj_to_copy(t, TJ_FLOAT64), v), TJ_OK, "%s", tj_last_error());
    moments m = {0, 0, INFINITY, -INFINITY};
    for (int64_t i = 0; i < n; i++) {
        m.mean += v[i] / (double)n;
        m.min = fmin(m.min, v[i]);
        m.max = fmax(m.max, v[i]);
    }
    for (int64_t i = 0; i < n; i++) m.var += (v[i] - m.mean) * (v[i] - m.mean) / (double)(n - 1);
    free(v);
    return m;
}

#define N_DRAWS 200000

/* 200000 draws each (seed 59): the sample mean's standard error is below
 * 0.01 for all of these, the variance's below 0.02; bounds 5 times those */
Test(fixes59, fills_have_the_distributions_moments_and_ranges)
{
    tj_manual_seed(59);
    for (int d = 0; d < 2; d++) {
        tj_dtype dt = d ? TJ_FLOAT32 : TJ_FLOAT64;
        tj_tensor *x = tj_zeros((const int64_t[]){N_DRAWS}, 1, dt);
        moments u = moments_of(tj_uniform_(tj_clone(x), -2, 3));
        cr_expect(u.min >= -2 && u.max <= 3, "uniform_ in [-2, 3]: [%g, %g]", u.min, u.max);
        cr_expect(fabs(u.mean - 0.5) < 0.05 && fabs(u.var - 25.0 / 12) < 0.1, "uniform_ %g %g", u.mean, u.var);
        moments g = moments_of(tj_normal_(tj_clone(x), 1, 3));
        cr_expect(fabs(g.mean - 1) < 0.05 && fabs(g.var - 9) < 0.3, "normal_ %g %g", g.mean, g.var);
        moments e = moments_of(tj_exponential_(tj_clone(x), 2));
        cr_expect(e.min >= 0 && fabs(e.mean - 0.5) < 0.02 && fabs(e.var - 0.25) < 0.03, "exponential_ %g %g %g",
                  e.min, e.mean, e.var);
        moments f = moments_of(tj_normal_float_float(-4, 0.5, (const int64_t[]){N_DRAWS}, 1, dt));
        cr_expect(fabs(f.mean + 4) < 0.02 && fabs(f.var - 0.25) < 0.02, "normal.float_float %g %g", f.mean, f.var);
    }
    /* mean [2] and std [N, 1] broadcast: column 0 N(10, 1), column 1 N(-10, 4) */
    tj_tensor *mean = test_f64(1, SHAPE(2), (const double[]){10, -10});
    tj_tensor *std = tj_full((const int64_t[]){N_DRAWS / 2, 1}, 2, tj_v_float(1), TJ_FLOAT64);
    tj_tensor *r = tj_normal_tensor_tensor(mean, tj_cat((tj_tensor *[]){std, tj_mul_scalar(std, tj_v_int(2))}, 2, 1));
    test_assert_dtype_shape(r, TJ_FLOAT64, 2, SHAPE(N_DRAWS / 2, 2));
    moments c0 = moments_of(tj_select(r, 1, 0)), c1 = moments_of(tj_select(r, 1, 1));
    cr_expect(fabs(c0.mean - 10) < 0.03 && fabs(c0.var - 1) < 0.05, "column 0: %g %g", c0.mean, c0.var);
    cr_expect(fabs(c1.mean + 10) < 0.06 && fabs(c1.var - 4) < 0.2, "column 1: %g %g", c1.mean, c1.var);
}

Test(fixes59, fills_degenerate_parameters_give_constants)
{
    tj_tensor *x = tj_zeros(SHAPE(5), 1, TJ_FLOAT32);
    test_expect_close(tj_uniform(x, 0.5, 0.5), (const double[]){0.5, 0.5, 0.5, 0.5, 0.5}, 5, 0, 0);
    test_expect_close(tj_normal_functional(x, -1.5, 0), (const double[]){-1.5, -1.5, -1.5, -1.5, -1.5}, 5, 0, 0);
    test_expect_close(tj_exponential(x, 0), (const double[]){INFINITY, INFINITY, INFINITY, INFINITY, INFINITY}, 5, 0,
                      0);
    test_expect_close(tj_normal_float_tensor(2, tj_zeros(SHAPE(2), 1, TJ_FLOAT64)), (const double[]){2, 2}, 2, 0, 0);
}

Test(fixes59, fills_reproduce_under_manual_seed_whatever_the_form_or_strides)
{
    tj_tensor *x = tj_zeros(SHAPE(4, 3), 2, TJ_FLOAT64);
    tj_manual_seed(3);
    tj_tensor *a = tj_uniform(x, -1, 1);
    tj_manual_seed(3);
    tj_tensor *b = tj_uniform_(tj_clone(x), -1, 1);
    test_expect_same(b, a, "uniform_ and uniform from one state");
    /* a transposed self draws in its logical order */
    tj_tensor *base = tj_zeros(SHAPE(3, 4), 2, TJ_FLOAT64), *view = tj_transpose(base, 0, 1);
    tj_manual_seed(3);
    cr_assert_eq(tj_uniform_(view, -1, 1), view);
    test_expect_same(tj_contiguous(view), a, "a strided self");
    /* a fresh state draws other numbers; the next call continues the stream */
    tj_manual_seed(4);
    tj_tensor *c = tj_normal_functional(x, 0, 1), *d = tj_normal_functional(x, 0, 1);
    bool same;
    cr_assert_eq(tj_allclose(c, d, 0, 0, true, &same), TJ_OK);
    cr_expect(!same, "two draws differ");
    tj_manual_seed(4);
    test_expect_same(tj_normal_tensor_float(x, 1), c, "normal.Tensor_float of zeros and std 1 is normal_'s draw");
}

Test(fixes59, fills_refuse_bad_arguments_with_atens_messages)
{
    tj_tensor *x = tj_zeros(SHAPE(3), 1, TJ_FLOAT32), *i = tj_zeros(SHAPE(3), 1, TJ_INT64);
    test_expect_error(tj_uniform_(x, 2, 1), TJ_ERR_INVALID_ARGUMENT, "aten::uniform",
                      "expects to return a [from, to) range, but found from=2 > to=1");
    test_expect_error(tj_uniform_(x, 1e39, 2e39), TJ_ERR_INVALID_ARGUMENT, "aten::uniform",
                      "from is out of bounds for float");
    test_expect_error(tj_uniform(x, NAN, 1), TJ_ERR_INVALID_ARGUMENT, "aten::uniform", "out of bounds");
    test_expect_error(tj_uniform(x, -3e38, 3e38), TJ_ERR_INVALID_ARGUMENT, "aten::uniform", "to-from to exceed");
    test_expect_error(tj_uniform_(i, 0, 1), TJ_ERR_DTYPE, "aten::uniform", "\"check_uniform_bounds\" not implemented");
    test_expect_error(tj_normal_(x, 0, -1), TJ_ERR_INVALID_ARGUMENT, "aten::normal",
                      "normal expects std >= 0.0, but found std -1");
    test_expect_error(tj_normal_(i, 0, 1), TJ_ERR_DTYPE, "aten::normal", "\"normal_kernel_cpu\" not implemented");
    test_expect_error(tj_exponential_(x, -1), TJ_ERR_INVALID_ARGUMENT, "aten::exponential",
                      "expects lambda >= 0.0, but found lambda=-1");
    test_expect_error(tj_exponential_(i, 1), TJ_ERR_DTYPE, "aten::exponential", "\"exponential_cpu\" not implemented");
    test_expect_error(tj_normal_tensor_float(x, -0.5), TJ_ERR_INVALID_ARGUMENT, "aten::normal.Tensor_float",
                      "found std -0.5");
    test_expect_error(tj_normal_float_tensor(0, test_f64(1, SHAPE(2), (const double[]){1, -1})),
                      TJ_ERR_INVALID_ARGUMENT, "aten::normal.float_Tensor", "all elements of std >= 0.0");
    test_expect_error(tj_normal_tensor_tensor(x, tj_zeros(SHAPE(4), 1, TJ_FLOAT32)), TJ_ERR_SHAPE,
                      "aten::normal.Tensor_Tensor", "");
    test_expect_error(tj_normal_tensor_tensor(i, i), TJ_ERR_DTYPE, "aten::normal.Tensor_Tensor", "not implemented");
    test_expect_error(tj_normal_float_float(0, 1, SHAPE(2), 1, TJ_INT64), TJ_ERR_DTYPE, "aten::normal.float_float",
                      "not implemented for 'int64'");
}

Test(fixes59, fills_give_zero_gradients)
{
    tj_tensor *x = f64_grad(3, (const double[]){1, 2, 3});
    tj_tensor *y = tj_uniform_(tj_mul_scalar(x, tj_v_int(2)), 0, 1);
    test_expect_close(test_grad1(x, tj_add(y, x), ones(3)), (const double[]){1, 1, 1}, 3, 0, 0);
    test_expect_close(test_grad1(x, tj_normal_tensor_float(x, 1), ones(3)), (const double[]){0, 0, 0}, 3, 0, 0);
}

/* every fill on in[0] (float64 [2, 3]) and in[1] ([3], std > 0) */
static tj_status fill_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    *n_out = 4;
    tj_tensor *a = tj_uniform_(tj_clone(in[0]), -1, 2), *b = tj_normal_(tj_clone(in[0]), 1, 3);
    tj_tensor *c = tj_exponential_(tj_clone(in[0]), 2);
    out[0] = tj_add(tj_add(a, b), c);
    out[1] = tj_add(tj_normal_tensor_float(in[0], 2), tj_normal_float_tensor(1, in[1]));
    out[2] = tj_normal_tensor_tensor(in[0], in[1]);
    out[3] = tj_normal_float_float(0, 1, (const int64_t[]){2, 3}, 2, TJ_FLOAT64);
    for (int k = 0; k < 4; k++)
        if (!out[k]) return tj_last_status();
    return TJ_OK;
}

/* eager from seed 11, then each traced graph run from seed 11: the
 * recorded graph (fake and real mode) replays eager's numbers exactly, the
 * core-decomposed one (rand / randn and pointwise primitives) too but for
 * exponential's log, whose primitive kernel rounds in its own way */
Test(fixes59, fills_trace_replay_and_decompose_from_the_same_seed)
{
    tj_tensor *x = test_f64(2, SHAPE(2, 3), (const double[]){0.5, -1, 2, 0, 3, -2});
    tj_tensor *s = test_f64(1, SHAPE(3), (const double[]){0.5, 1, 2});
    tj_tensor *in[2] = {x, s}, *eager[4], *got[4];
    int n_out;
    tj_manual_seed(11);
    cr_assert_eq(fill_step(NULL, in, 2, eager, &n_out), TJ_OK, "%s", tj_last_error());
    const char *want[] = {"aten.uniform_.default(", "aten.normal_.default(", "aten.exponential_.default(",
                          "aten.normal.Tensor_float(", "aten.normal.float_Tensor(", "aten.normal.Tensor_Tensor(",
                          "aten.normal.float_float("};
    for (int mode = 0; mode < 2; mode++) {
        tj_graph *g = tj_make_fx(fill_step, NULL, in, 2, NULL, mode ? TJ_TRACE_REAL : TJ_TRACE_FAKE);
        cr_assert_not_null(g, "%s", tj_last_error());
        char *text = tj_graph_to_string(g);
        for (size_t k = 0; k < sizeof want / sizeof *want; k++) cr_expect(strstr(text, want[k]), "%s lacks %s", text, want[k]);
        free(text);
        tj_plan *p = tj_compile(g, NULL);
        cr_assert_not_null(p, "%s", tj_last_error());
        tj_manual_seed(11);
        cr_assert_eq(tj_plan_run(p, in, 2, got), TJ_OK, "%s", tj_last_error());
        for (int k = 0; k < 4; k++) test_expect_same(got[k], eager[k], "replayed");
        tj_plan_free(p);
        tj_graph_free(g);
    }
    tj_manual_seed(11);
    cr_expect(test_run_core(fill_step, NULL, in, 2, got), "the decomposed graph holds primitives only");
    for (int k = 1; k < 4; k++) test_expect_same(got[k], eager[k], "decomposed");
    double w[6];
    cr_assert_eq(tj_tensor_copy_to(eager[0], w), TJ_OK);
    test_expect_close(got[0], w, 6, 1e-14, 1e-14);
}
