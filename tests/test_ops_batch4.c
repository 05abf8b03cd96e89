/* Session 57 (opsbatch4) operators: searchsorted / bucketize, cummax /
 * cummin, logcumsumexp. Their values are conformance cases
 * (tests/conformance/make_cases_opsbatch4.py, run by test_conformance);
 * here: gradients against PyTorch 1.13 in float64 (tests/opsbatch4_ref.h,
 * written by tests/make_opsbatch4_refs.py), the errors, and the graphs
 * make_fx records, replayed and core-decomposed. Also kthvalue, median.dim,
 * nanmedian.dim, median and nanmedian; std_mean.correction and
 * count_nonzero. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "opsbatch4_ref.h"
#include "test_util.h"

TestSuite(opsbatch4, .init = test_scope_open, .fini = test_scope_close);

static const int64_t S34[2] = {3, 4};

/* ---- gradients ---- */

typedef tj_tensor *(*cum_fn)(tj_tensor *x, int64_t dim);
static tj_tensor *cummax_values(tj_tensor *x, int64_t dim)
{
    tj_tensor *v;
    return tj_cummax(x, dim, &v, NULL) == TJ_OK ? v : NULL;
}
static tj_tensor *cummin_values(tj_tensor *x, int64_t dim)
{
    tj_tensor *v;
    return tj_cummin(x, dim, &v, NULL) == TJ_OK ? v : NULL;
}

static void expect_grad(cum_fn fn, const double *x, int64_t dim, const double *want, double rtol)
{
    tj_tensor *t = test_f64_grad(x, 2, S34, true);
    tj_tensor *g = test_grad1(t, fn(t, dim), test_f64(2, S34, CUM_GY));
    test_expect_close(g, want, 12, rtol, 1e-15);
}

Test(opsbatch4, cummax_cummin_gradients_go_to_the_selected_positions)
{
    expect_grad(cummax_values, CUM_X, 0, CUMMAX_D0_GX, 0);
    expect_grad(cummax_values, CUM_X, 1, CUMMAX_D1_GX, 0);
    expect_grad(cummin_values, CUM_X, 0, CUMMIN_D0_GX, 0);
    expect_grad(cummin_values, CUM_X, -1, CUMMIN_D1_GX, 0);
}

Test(opsbatch4, logcumsumexp_gradient_matches_pytorch)
{
    double x[12];
    for (int i = 0; i < 12; i++) x[i] = isnan(CUM_X[i]) ? 0.25 : CUM_X[i]; /* as make_opsbatch4_refs.py */
    expect_grad(tj_logcumsumexp, x, 0, LCSE_D0_GX, 1e-13);
    expect_grad(tj_logcumsumexp, x, 1, LCSE_D1_GX, 1e-13);
}

Test(opsbatch4, gradients_of_0dim_and_empty_inputs)
{
    tj_tensor *x = test_f64_grad((const double[]){2.5}, 0, NULL, true), *gy = test_f64(0, NULL, (const double[]){3});
    test_expect_close(test_grad1(x, cummax_values(x, -1), gy), (const double[]){3}, 1, 0, 0);
    test_expect_close(test_grad1(x, tj_logcumsumexp(x, 0), gy), (const double[]){3}, 1, 0, 0);
    const int64_t s20[2] = {2, 0};
    tj_tensor *e = test_f64_grad(NULL, 2, s20, true);
    tj_tensor *ge = test_grad1(e, cummin_values(e, 1), test_f64(2, s20, NULL));
    test_assert_dtype_shape(ge, TJ_FLOAT64, 2, s20);
}

Test(opsbatch4, searches_have_no_gradient)
{
    tj_tensor *b = test_f64_grad((const double[]){0, 1, 2}, 1, (const int64_t[]){3}, true);
    tj_tensor *r = tj_bucketize(test_f64(1, (const int64_t[]){2}, (const double[]){0.5, 3}), b, false, false);
    test_expect_i64(r, 2, (const int64_t[]){1, 3});
    cr_expect_not(tj_tensor_requires_grad(r));
}

/* ---- errors ---- */

Test(opsbatch4, searchsorted_refuses_bad_arguments_naming_the_operator)
{
    tj_tensor *b = test_f64(1, (const int64_t[]){3}, (const double[]){1, 2, 3});
    tj_tensor *v = test_f64(1, (const int64_t[]){2}, (const double[]){2, 5});
    const char *op = "aten::searchsorted.Tensor";
    test_expect_error(tj_searchsorted(b, v, false, true, "left", NULL), TJ_ERR_INVALID_ARGUMENT, op, "opposites");
    test_expect_error(tj_searchsorted(b, v, false, false, "middle", NULL), TJ_ERR_INVALID_ARGUMENT, op, "middle");
    test_expect_error(tj_searchsorted(b, v, true, false, NULL, NULL), TJ_ERR_UNSUPPORTED, op, "int32");
    tj_tensor *b23 = tj_zeros((const int64_t[]){2, 3}, 2, TJ_FLOAT64), *v33 = tj_zeros((const int64_t[]){3, 3}, 2, TJ_FLOAT64);
    test_expect_error(tj_searchsorted(b23, v33, false, false, NULL, NULL), TJ_ERR_SHAPE, op, "[2, 3]");
    test_expect_error(tj_searchsorted(b23, test_f64(0, NULL, (const double[]){1}), false, false, NULL, NULL),
                      TJ_ERR_SHAPE, op, "scalar only");
    test_expect_error(tj_searchsorted(test_f64(0, NULL, (const double[]){1}), v, false, false, NULL, NULL),
                      TJ_ERR_SHAPE, op, "positive dimension");
    test_expect_error(tj_searchsorted(b, v, false, false, NULL, tj_zeros((const int64_t[]){2}, 1, TJ_INT64)),
                      TJ_ERR_SHAPE, op, "same size");
    test_expect_error(tj_searchsorted(b, v, false, false, NULL, b), TJ_ERR_DTYPE, op, "long");
    test_expect_error(tj_searchsorted(b, v, false, false, NULL, test_i64(1, (const int64_t[]){3}, (const int64_t[]){0, 3, 1})),
                      TJ_ERR_INDEX, op, "sorter holds 3");
    tj_tensor *bb = tj_gt_scalar(b, tj_v_int(1));
    test_expect_error(tj_searchsorted(bb, bb, false, false, NULL, NULL), TJ_ERR_DTYPE, op, "Bool");
    test_expect_error(tj_bucketize(v, b23, false, false), TJ_ERR_SHAPE, "aten::bucketize.Tensor", "dim(2)");
    test_expect_error(tj_bucketize_scalar(tj_v_float(1), b, true, false), TJ_ERR_UNSUPPORTED,
                      "aten::bucketize.Scalar", "int32");
}

Test(opsbatch4, scans_refuse_bad_dims_and_dtypes)
{
    tj_tensor *x = tj_zeros(S34, 2, TJ_FLOAT64), *v;
    cr_expect_eq(tj_cummax(x, 2, &v, NULL), TJ_ERR_INDEX);
    cr_expect(strstr(tj_last_error(), "aten::cummax"), "%s", tj_last_error());
    cr_expect_eq(tj_cummin(x, -3, &v, NULL), TJ_ERR_INDEX);
    test_expect_error(tj_logcumsumexp(x, 5), TJ_ERR_INDEX, "aten::logcumsumexp", "");
    test_expect_error(tj_logcumsumexp(tj_zeros((const int64_t[]){2}, 1, TJ_INT64), 0), TJ_ERR_DTYPE, "aten::logcumsumexp",
                      "Long");
}

/* ---- traced graphs ---- */

/* the searches of in[1] in in[0] in all four forms */
static tj_status search_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    *n_out = 4;
    out[0] = tj_searchsorted(in[0], in[1], false, false, NULL, NULL);
    out[1] = tj_searchsorted_scalar(in[0], tj_v_int(1), false, true, "right", NULL);
    out[2] = tj_bucketize(in[1], in[0], false, true);
    out[3] = tj_bucketize_scalar(tj_v_float(0.5), in[0], false, false);
    return out[0] && out[1] && out[2] && out[3] ? TJ_OK : tj_last_status();
}

Test(opsbatch4, searches_trace_replay_and_decompose_to_searchsorted)
{
    tj_tensor *b = test_f64(1, (const int64_t[]){4}, (const double[]){-1, 0, 1, 1});
    tj_tensor *v = test_f64(2, (const int64_t[]){2, 3}, (const double[]){-2, 1, 0.5, 1, 7, -1});
    const char *want[] = {"aten.searchsorted.Tensor(", "aten.searchsorted.Scalar(", "aten.bucketize.Tensor(",
                          "aten.bucketize.Scalar("};
    test_expect_traced(search_step, (tj_tensor *[]){b, v}, 2, 4, want, 4, NULL, 0);
}

/* cummax, cummin and logcumsumexp along dim 1 and their gradients */
static tj_status scan_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]);
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK) return tj_last_status();
    tj_tensor *mx, *mi, *imx;
    if (tj_cummax(x, 1, &mx, &imx) != TJ_OK || tj_cummin(x, 0, &mi, NULL) != TJ_OK) return tj_last_status();
    tj_tensor *l = tj_logcumsumexp(x, 1);
    tj_tensor *loss = tj_sum(tj_add(tj_mul(mx, l), tj_mul(mi, mi)), TJ_DTYPE_NONE);
    *n_out = 4;
    out[0] = mx, out[1] = imx, out[2] = l;
    return loss ? tj_autograd_grad(&loss, 1, NULL, &x, 1, &out[3]) : tj_last_status();
}

Test(opsbatch4, scans_trace_with_their_gradients_replay_and_decompose)
{
    const int64_t s[2] = {4, 5};
    tj_tensor *x = test_random_tensor(TJ_FLOAT64, 2, s, 7, -3, 3);
    const char *want[] = {"aten.cummax.default(", "aten.cummin.default(", "aten.logcumsumexp.default(",
                          "aten.scatter_add.default(", "aten.flip.default("};
    test_expect_traced(scan_step, (tj_tensor *[]){x}, 1, 4, want, 5, NULL, 1e-12);
}

/* ---- order statistics ---- */

typedef tj_status (*select_fn)(tj_tensor *x, int64_t dim, tj_tensor **v);
static tj_status kth2(tj_tensor *x, int64_t dim, tj_tensor **v) { return tj_kthvalue(x, 2, dim, false, v, NULL); }
static tj_status med(tj_tensor *x, int64_t dim, tj_tensor **v) { return tj_median_dim(x, dim, false, v, NULL); }
static tj_status nanmed(tj_tensor *x, int64_t dim, tj_tensor **v) { return tj_nanmedian_dim(x, dim, false, v, NULL); }

static void expect_select_grad(select_fn fn, int64_t dim, const double *want)
{
    tj_tensor *t = test_f64_grad(CUM_X, 2, S34, true), *v;
    cr_assert_eq(fn(t, dim, &v), TJ_OK, "%s", tj_last_error());
    tj_tensor *gy = test_f64(tj_tensor_ndim(v), tj_tensor_shape(v), CUM_GY); /* GY's first elements */
    test_expect_close(test_grad1(t, v, gy), want, 12, 0, 0);
}

Test(opsbatch4, selection_gradients_scatter_to_the_selected_positions)
{
    expect_select_grad(kth2, 0, KTH2_D0_GX);
    expect_select_grad(kth2, 1, KTH2_D1_GX);
    expect_select_grad(med, 0, MED_D0_GX);
    expect_select_grad(med, 1, MED_D1_GX);
    expect_select_grad(nanmed, 0, NANMED_D0_GX);
    expect_select_grad(nanmed, -1, NANMED_D1_GX);
}

static void expect_full_grad(tj_tensor *(*fn)(tj_tensor *), const double *x, int ndim, const int64_t *shape,
                             const double *want, int64_t n)
{
    tj_tensor *t = test_f64_grad(x, ndim, shape, true);
    test_expect_close(test_grad1(t, fn(t), test_f64(0, NULL, (const double[]){2.5})), want, n, 0, 0);
}

Test(opsbatch4, full_median_gradient_is_shared_among_equal_elements)
{
    const int64_t s6[1] = {6};
    expect_full_grad(tj_median, CUM_X, 2, S34, MED_ALL_X_GX, 12);
    expect_full_grad(tj_median, SEL_XT, 1, s6, MED_ALL_XT_GX, 6);
    expect_full_grad(tj_nanmedian, CUM_X, 2, S34, NANMED_ALL_X_GX, 12);
    expect_full_grad(tj_nanmedian, SEL_XT, 1, s6, NANMED_ALL_XT_GX, 6);
}

Test(opsbatch4, selections_refuse_bad_arguments_naming_the_operator)
{
    tj_tensor *x = tj_zeros(S34, 2, TJ_FLOAT64), *v;
    cr_expect_eq(tj_kthvalue(x, 5, 1, false, &v, NULL), TJ_ERR_INDEX);
    cr_expect(strstr(tj_last_error(), "aten::kthvalue: kthvalue(): selected number k out of range for dimension 1"),
              "%s", tj_last_error());
    cr_expect_eq(tj_kthvalue(x, 0, 1, false, &v, NULL), TJ_ERR_INDEX);
    cr_expect_eq(tj_kthvalue(x, 1, 2, false, &v, NULL), TJ_ERR_INDEX);
    tj_tensor *e = tj_zeros((const int64_t[]){3, 0}, 2, TJ_FLOAT64);
    cr_expect_eq(tj_median_dim(e, 1, false, &v, NULL), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "aten::median.dim: median(): Expected reduction dim 1 to have non-zero size"),
              "%s", tj_last_error());
    cr_expect_eq(tj_kthvalue(e, 1, -1, false, &v, NULL), TJ_ERR_SHAPE);
    tj_tensor *b = tj_gt_scalar(x, tj_v_int(0));
    cr_expect_eq(tj_nanmedian_dim(b, 0, false, &v, NULL), TJ_ERR_DTYPE);
    cr_expect(strstr(tj_last_error(), "'Bool'"), "%s", tj_last_error());
    test_expect_error(tj_median(b), TJ_ERR_DTYPE, "aten::median", "Bool");
}

/* kthvalue, median.dim, median and their gradients */
static tj_status select_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]);
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK) return tj_last_status();
    tj_tensor *kv, *ki, *mv;
    if (tj_kthvalue(x, 3, 0, true, &kv, &ki) != TJ_OK || tj_nanmedian_dim(x, 1, false, &mv, NULL) != TJ_OK)
        return tj_last_status();
    tj_tensor *loss = tj_add(tj_add(tj_sum(tj_mul(kv, kv), TJ_DTYPE_NONE), tj_sum(mv, TJ_DTYPE_NONE)),
                             tj_median(x));
    *n_out = 4;
    out[0] = kv, out[1] = ki, out[2] = mv;
    return loss ? tj_autograd_grad(&loss, 1, NULL, &x, 1, &out[3]) : tj_last_status();
}

Test(opsbatch4, selections_trace_with_their_gradients_replay_and_decompose)
{
    const int64_t s[2] = {5, 6};
    tj_tensor *x = test_random_tensor(TJ_FLOAT64, 2, s, 3, -2, 2);
    const char *want[] = {"aten.kthvalue.default(", "aten.nanmedian.dim(", "aten.median.default(",
                          "aten.scatter.src("};
    test_expect_traced(select_step, (tj_tensor *[]){x}, 1, 4, want, 4, NULL, 1e-15);
}

/* ---- std_mean, count_nonzero ---- */

Test(opsbatch4, std_mean_gradient_matches_pytorch)
{
    double x[12];
    for (int i = 0; i < 12; i++) x[i] = isnan(CUM_X[i]) ? 0.25 : CUM_X[i];
    const int64_t one = 1, s3[1] = {3};
    const double *want[2] = {STDMEAN_C1_GX, STDMEAN_C0_GX};
    for (int corr = 1; corr >= 0; corr--) {
        tj_tensor *t = test_f64_grad(x, 2, S34, true), *sd, *mn, *gx;
        cr_assert_eq(tj_std_mean(t, &one, 1, corr, false, &sd, &mn), TJ_OK, "%s", tj_last_error());
        tj_tensor *loss = tj_add(tj_sum(tj_mul(sd, test_f64(1, s3, CUM_GY)), TJ_DTYPE_NONE),
                                 tj_sum(tj_mul(mn, test_f64(1, s3, CUM_GY + 3)), TJ_DTYPE_NONE));
        cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, &t, 1, &gx), TJ_OK, "%s", tj_last_error());
        test_expect_close(gx, want[1 - corr], 12, 1e-14, 1e-15);
    }
}

Test(opsbatch4, std_mean_and_count_nonzero_errors_name_the_operator)
{
    tj_tensor *sd, *mn;
    cr_expect_eq(tj_std_mean(tj_zeros(S34, 2, TJ_INT64), NULL, 0, -1, false, &sd, &mn), TJ_ERR_DTYPE);
    cr_expect(strstr(tj_last_error(), "aten::std_mean.correction: "), "%s", tj_last_error());
    const int64_t twice[2] = {1, -1};
    test_expect_error(tj_count_nonzero_dim_intlist(tj_zeros(S34, 2, TJ_FLOAT32), twice, 2), TJ_ERR_INVALID_ARGUMENT,
                      "aten::count_nonzero.dim_IntList", "multiple times");
    test_expect_error(tj_count_nonzero_opt_dim(tj_zeros(S34, 2, TJ_FLOAT32), true, 2), TJ_ERR_INDEX,
                      "aten::count_nonzero", "");
}

/* std_mean with its gradient, count_nonzero in both forms */
static tj_status stats_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]);
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK) return tj_last_status();
    const int64_t dim = 0;
    tj_tensor *sd, *mn;
    if (tj_std_mean(x, &dim, 1, -1, true, &sd, &mn) != TJ_OK) return tj_last_status();
    tj_tensor *loss = tj_sum(tj_mul(sd, mn), TJ_DTYPE_NONE);
    *n_out = 4;
    out[0] = sd, out[1] = mn;
    out[2] = tj_add(tj_count_nonzero_dim_intlist(tj_relu(x), &dim, 1), tj_count_nonzero_opt_dim(x, false, 0));
    return loss ? tj_autograd_grad(&loss, 1, NULL, &x, 1, &out[3]) : tj_last_status();
}

Test(opsbatch4, std_mean_and_count_nonzero_trace_replay_and_decompose)
{
    const int64_t s[2] = {4, 5};
    tj_tensor *x = test_random_tensor(TJ_FLOAT64, 2, s, 5, -2, 2);
    const char *want[] = {"aten.std_mean.correction(", "aten.count_nonzero.dim_IntList(", "aten.count_nonzero.default("};
    test_expect_traced(stats_step, (tj_tensor *[]){x}, 1, 4, want, 3, NULL, 1e-12);
}

/* ---- hardshrink, softshrink ---- */

Test(opsbatch4, shrink_errors_name_the_operator)
{
    tj_tensor *i = tj_zeros(S34, 2, TJ_INT64), *x = tj_zeros(S34, 2, TJ_FLOAT32);
    test_expect_error(tj_hardshrink(i, tj_v_float(0.5)), TJ_ERR_DTYPE, "aten::hardshrink", "'Long'");
    test_expect_error(tj_softshrink(x, tj_v_float(-1)), TJ_ERR_INVALID_ARGUMENT, "aten::softshrink",
                      "greater or equal to 0");
    test_expect_error(tj_hardshrink_backward(tj_zeros(S34, 2, TJ_FLOAT64), x, tj_v_float(0.5)), TJ_ERR_DTYPE,
                      "aten::hardshrink_backward", "same dtype");
    test_expect_error(tj_softshrink_backward(tj_zeros((const int64_t[]){2}, 1, TJ_FLOAT32), x, tj_v_float(0.5)),
                      TJ_ERR_SHAPE, "aten::softshrink_backward", "");
}

/* hardshrink and softshrink with their gradients and double backward */
static tj_status shrink_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]);
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK) return tj_last_status();
    tj_tensor *h = tj_hardshrink(x, tj_v_float(0.5)), *s = tj_softshrink(x, tj_v_int(1));
    tj_tensor *loss = tj_sum(tj_add(tj_mul(h, h), tj_mul(s, x)), TJ_DTYPE_NONE);
    *n_out = 3;
    out[0] = h, out[1] = s;
    return loss ? tj_autograd_grad(&loss, 1, NULL, &x, 1, &out[2]) : tj_last_status();
}

Test(opsbatch4, shrinks_trace_with_their_gradients_replay_and_decompose)
{
    const int64_t s[2] = {4, 5};
    tj_tensor *x = test_random_tensor(TJ_FLOAT32, 2, s, 9, -2, 2);
    const char *want[] = {"aten.hardshrink.default(", "aten.softshrink.default(", "aten.hardshrink_backward.default(",
                          "aten.softshrink_backward.default("};
    test_expect_traced(shrink_step, (tj_tensor *[]){x}, 1, 3, want, 4, NULL, 0);
}
