/* 3-D pooling: max_pool3d_with_indices (max_pool3d is its first result),
 * avg_pool3d and their backward operators. Values and indices against
 * PyTorch 1.13, the nan and tie rules, errors naming the operator and the
 * offending values, make_fx in real and fake mode (the core table keeps
 * them: primitives) and replay, and the gradients through autograd.
 * Gradients are gradchecked in test_gradcheck.c; float32 / float64 values
 * of every operator are conformance cases (make_cases_vision.py).
 *
 * Reference values: PyTorch 1.13 on x = ramp([1,2,3,4,4], 5, 11, 5)
 * (element i: (i * 5) % 11 - 5):
 *     F.max_pool3d(x, [2,3,2], [1,2,2], [1,1,0], dilation=[1,1,2], ceil_mode=True, return_indices=True)
 *     F.avg_pool3d(x.double(), [3,2,3], [2,2,2], [1,1,1], ceil_mode=True, count_include_pad=False)
 * printed with repr() of each element. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(pool3d, .init = test_scope_open, .fini = test_scope_close);

#define SHAPE(...) (const int64_t[]){__VA_ARGS__}

static tj_tensor *ramp_x(tj_dtype dt)
{
    tj_tensor *t = tj_tensor_empty(dt, 5, SHAPE(1, 2, 3, 4, 4));
    cr_assert_not_null(t, "%s", tj_last_error());
    for (int64_t i = 0; i < 96; i++) {
        double v = (double)(i * 5 % 11) - 5;
        if (dt == TJ_FLOAT32) ((float *)tj_tensor_data(t))[i] = (float)v;
        else ((double *)tj_tensor_data(t))[i] = v;
    }
    return t;
}

static const int64_t mk[3] = {2, 3, 2}, ms[3] = {1, 2, 2}, mp[3] = {1, 1, 0}, md[3] = {1, 1, 2};
static const double max_want[48] = {5, 5, 4, 3, 0, -1, 5, 5, 5, 4, 3, 2, 1, 0, 5, 5, 5, 5, 1, 0, 5, 5, 5, 5,
                                    4, 3, 2, 1, -2, -3, 5, 4, 5, 4, 1, 0, 5, 4, 5, 5, 4, 3, -1, -2, 5, 5, 4, 3};
static const int64_t max_idx_want[48] = {2,  2,  4,  6,  12, 14, 2,  2,  24, 26, 28, 30, 32, 34, 24, 46,
                                         46, 46, 32, 34, 46, 46, 46, 46, 0,  2,  4,  6,  12, 14, 20, 22,
                                         20, 22, 28, 30, 20, 22, 20, 42, 44, 46, 32, 34, 42, 42, 44, 46};

Test(pool3d, max_pool3d_with_dilation_padding_and_ceil_mode_matches_pytorch_in_both_dtypes)
{
    for (int d = 0; d < 2; d++) {
        tj_dtype dt = d ? TJ_FLOAT64 : TJ_FLOAT32;
        tj_tensor *out = NULL, *idx = NULL;
        cr_assert_eq(tj_max_pool3d_with_indices(ramp_x(dt), mk, ms, mp, md, true, &out, &idx), TJ_OK, "%s",
                     tj_last_error());
        test_assert_dtype_shape(out, dt, 5, SHAPE(1, 2, 4, 3, 2));
        test_expect_close(out, max_want, 48, 0, 0);
        test_expect_i64(idx, 48, max_idx_want);
        test_expect_same(tj_max_pool3d(ramp_x(dt), mk, ms, mp, md, true), out, "max_pool3d");
    }
}

Test(pool3d, a_nan_wins_its_window_the_last_of_several_and_ties_keep_the_first_position)
{
    /* one window over [2, 2, 2]: values 1 2 2 nan 0 nan 2 1 */
    tj_tensor *x = test_f64(4, SHAPE(1, 2, 2, 2), (const double[]){1, 2, 2, NAN, 0, NAN, 2, 1});
    tj_tensor *t = test_f64(4, SHAPE(1, 2, 2, 2), (const double[]){1, 2, 2, 0, 0, -1, 2, 1});
    tj_tensor *out, *idx;
    cr_assert_eq(tj_max_pool3d_with_indices(x, SHAPE(2, 2, 2), NULL, SHAPE(0, 0, 0), SHAPE(1, 1, 1), false, &out,
                                            &idx),
                 TJ_OK, "%s", tj_last_error());
    cr_expect(isnan(tj_tensor_item_at(out, 0)));
    test_expect_i64(idx, 1, (const int64_t[]){5});
    cr_assert_eq(tj_max_pool3d_with_indices(t, SHAPE(2, 2, 2), NULL, SHAPE(0, 0, 0), SHAPE(1, 1, 1), false, &out,
                                            &idx),
                 TJ_OK, "%s", tj_last_error());
    test_expect_i64(idx, 1, (const int64_t[]){1});
}

static const double avg_want[36] = {
    -1.0, 1.0,  0.5,  0.125, -1.0833333333333333, -2.5, 1.25, 0.5, 0.0, -0.75, 0.3333333333333333, 3.5,
    0.375, 0.08333333333333333, 0.5, -1.25, -0.16666666666666666, -2.5, -0.25, -1.0, -1.5, 0.875,
    -0.3333333333333333, -1.75, -0.75, 0.3333333333333333, 3.5, 0.0, 0.16666666666666666, 1.5, -0.25,
    -0.08333333333333333, -1.5, -0.5, -0.3333333333333333, 1.0};

Test(pool3d, avg_pool3d_without_the_padding_in_its_divisor_matches_pytorch)
{
    tj_tensor *y = tj_avg_pool3d(ramp_x(TJ_FLOAT64), SHAPE(3, 2, 3), SHAPE(2, 2, 2), SHAPE(1, 1, 1), true, false, 0);
    test_assert_dtype_shape(y, TJ_FLOAT64, 5, SHAPE(1, 2, 2, 3, 3));
    test_expect_close(y, avg_want, 36, 1e-15, 0);
    /* float32: sums in float64, one rounding */
    tj_tensor *y32 = tj_avg_pool3d(ramp_x(TJ_FLOAT32), SHAPE(3, 2, 3), SHAPE(2, 2, 2), SHAPE(1, 1, 1), true, false, 0);
    test_expect_same(y32, tj_to_copy(y, TJ_FLOAT32), "float32 avg_pool3d");
}

/* <v, pool(x)> = <backward(v), x>: each backward operator is its forward's
 * adjoint (max pooling's for x's own indices). */
Test(pool3d, backward_operators_are_the_adjoints_of_the_forward_ones)
{
    tj_tensor *x = ramp_x(TJ_FLOAT64);
    tj_tensor *y = tj_avg_pool3d(x, SHAPE(3, 2, 3), SHAPE(2, 2, 2), SHAPE(1, 1, 1), true, false, 0);
    tj_tensor *v = tj_sin(tj_add(y, tj_ones(SHAPE(1), 1, TJ_FLOAT64)));
    tj_tensor *g = tj_avg_pool3d_backward(v, x, SHAPE(3, 2, 3), SHAPE(2, 2, 2), SHAPE(1, 1, 1), true, false, 0);
    double lhs = tj_tensor_item_at(tj_sum(tj_mul(v, y), -1), 0), rhs = tj_tensor_item_at(tj_sum(tj_mul(g, x), -1), 0);
    cr_expect(fabs(lhs - rhs) < 1e-12, "%.17g vs %.17g", lhs, rhs);
    tj_tensor *out, *idx;
    cr_assert_eq(tj_max_pool3d_with_indices(x, mk, ms, mp, md, true, &out, &idx), TJ_OK, "%s", tj_last_error());
    tj_tensor *w = tj_cos(out);
    tj_tensor *gm = tj_max_pool3d_with_indices_backward(w, x, mk, ms, mp, md, true, idx);
    lhs = tj_tensor_item_at(tj_sum(tj_mul(w, out), -1), 0);
    rhs = tj_tensor_item_at(tj_sum(tj_mul(gm, x), -1), 0);
    cr_expect(fabs(lhs - rhs) < 1e-12, "%.17g vs %.17g", lhs, rhs);
}

Test(pool3d, errors_name_the_operator_and_values)
{
    tj_tensor *x = ramp_x(TJ_FLOAT32), *out, *idx;
    cr_expect_neq(tj_max_pool3d_with_indices(tj_select(x, 0, 0), SHAPE(2, 2, 2), NULL, SHAPE(2, 0, 0),
                                             SHAPE(1, 1, 1), false, &out, &idx),
                  TJ_OK);
    cr_expect(strstr(tj_last_error(), "pad should be smaller than or equal to half of kernel size"), "%s",
              tj_last_error());
    test_expect_error(tj_max_pool3d(tj_select(tj_select(x, 0, 0), 0, 0), SHAPE(2, 2, 2), NULL, SHAPE(0, 0, 0),
                                    SHAPE(1, 1, 1), false),
                      TJ_ERR_SHAPE, "aten::max_pool3d_with_indices", "expected 4D or 5D");
    test_expect_error(tj_avg_pool3d(x, SHAPE(4, 2, 2), NULL, SHAPE(0, 0, 0), false, true, 0), TJ_ERR_SHAPE,
                      "aten::avg_pool3d", "Output size is too small");
    test_expect_error(tj_avg_pool3d(tj_to_copy(x, TJ_INT64), SHAPE(2, 2, 2), NULL, SHAPE(0, 0, 0), false, true, 0),
                      TJ_ERR_DTYPE, "aten::avg_pool3d", "int64");
    test_expect_error(tj_max_pool3d(x, SHAPE(2, 0, 2), NULL, SHAPE(0, 0, 0), SHAPE(1, 1, 1), false),
                      TJ_ERR_INVALID_ARGUMENT, "aten::max_pool3d_with_indices", "kT: 2 kH: 0 kW: 2");
    tj_tensor *y = tj_avg_pool3d(x, SHAPE(2, 2, 2), NULL, SHAPE(0, 0, 0), false, true, 0);
    test_expect_error(tj_avg_pool3d_backward(tj_narrow(y, 4, 0, 1), x, SHAPE(2, 2, 2), SHAPE(2, 2, 2),
                                             SHAPE(0, 0, 0), false, true, 0),
                      TJ_ERR_SHAPE, "aten::avg_pool3d_backward", "grad_output of size [1, 2, 1, 2, 1]");
    cr_assert_eq(tj_max_pool3d_with_indices(x, SHAPE(2, 2, 2), NULL, SHAPE(0, 0, 0), SHAPE(1, 1, 1), false, &out,
                                            &idx),
                 TJ_OK);
    tj_tensor *bad = tj_add(idx, tj_full(SHAPE(1), 1, tj_v_int(1000), TJ_INT64));
    test_expect_error(tj_max_pool3d_with_indices_backward(out, x, SHAPE(2, 2, 2), SHAPE(2, 2, 2), SHAPE(0, 0, 0),
                                                          SHAPE(1, 1, 1), false, bad),
                      TJ_ERR_INDEX, "aten::max_pool3d_with_indices_backward", "out of range");
}

static tj_status fn_pools(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_max_pool3d(in[0], mk, ms, mp, md, true);
    out[1] = tj_avg_pool3d(in[0], SHAPE(3, 2, 3), SHAPE(2, 2, 2), SHAPE(1, 1, 1), true, false, 0);
    *n_out = 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

/* The gradient of <w, max_pool3d(x)> + <v, avg_pool3d(x)>. */
static tj_status fn_pool_grads(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor *p[2];
    int two;
    tj_status st = fn_pools(ctx, in, n, p, &two);
    if (st != TJ_OK) return st;
    tj_tensor *y = tj_add(tj_sum(tj_mul(p[0], in[1]), -1), tj_sum(tj_mul(p[1], in[2]), -1));
    *n_out = 1;
    return y ? tj_autograd_grad(&y, 1, NULL, &in[0], 1, out) : tj_last_status();
}

Test(pool3d, pools_and_their_gradients_trace_and_replay)
{
    tj_tensor *x = ramp_x(TJ_FLOAT64);
    test_expect_traced(fn_pools, &x, 1, 2,
                       (const char *[]){"aten.max_pool3d_with_indices.default", "aten.avg_pool3d.default"}, 2,
                       "aten.max_pool3d.default", 0);
    tj_tensor *w = tj_cos(tj_max_pool3d(x, mk, ms, mp, md, true));
    tj_tensor *v = tj_sin(tj_avg_pool3d(x, SHAPE(3, 2, 3), SHAPE(2, 2, 2), SHAPE(1, 1, 1), true, false, 0));
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *in[3] = {x, w, v};
    test_expect_traced(fn_pool_grads, in, 3, 1,
                       (const char *[]){"aten.max_pool3d_with_indices_backward.default",
                                        "aten.avg_pool3d_backward.default"},
                       2, NULL, 0);
}
