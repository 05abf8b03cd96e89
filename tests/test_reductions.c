/* Reductions: sum, mean, amax/amin, argmax, max.dim, var, var_mean and
 * logsumexp through the typed API and the dispatcher. Values, dtypes and
 * shapes, dim lists (None, [], negative, keepdim), empty and 0-dim inputs,
 * non-contiguous and broadcast inputs, nan/inf, accuracy of long float32 sums
 * and of var with a large common offset, thread-count independence, and the
 * error paths. Reference values marked "torch" were printed by PyTorch 1.13
 * (/usr/bin/python3) for the same inputs; the others are exact by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(reduce, .init = test_scope_open, .fini = test_scope_close);

/* [2, 3] = [[1, 2, 3], [4, 5, 6]] */
static tj_tensor *m23(void) { return test_f32(2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6}); }

/* Checks dtype, shape and values (nan matches nan, infinities match exactly). */
static void expect(const tj_tensor *t, tj_dtype dtype, int ndim, const int64_t *shape, const double *want, double tol)
{
    int64_t n = test_assert_dtype_shape(t, dtype, ndim, shape);
    for (int64_t i = 0; i < n; i++) {
        double g = tj_tensor_item_at(t, i), e = want[i];
        if (isnan(e)) cr_assert(isnan(g), "[%lld] = %g, want nan", (long long)i, g);
        else if (isinf(e)) cr_assert_eq(g, e, "[%lld] = %g, want %g", (long long)i, g, e);
        else cr_assert(fabs(g - e) <= tol * (1 + fabs(e)), "[%lld] = %.9g, want %.9g", (long long)i, g, e);
    }
}

static void expect_error(const tj_tensor *t, tj_status status, const char *needle)
{
    cr_assert_null(t);
    cr_assert_eq(tj_last_status(), status, "status %s: %s", tj_status_name(tj_last_status()), tj_last_error());
    cr_assert(strstr(tj_last_error(), needle), "message '%s' lacks '%s'", tj_last_error(), needle);
}

/* ---- sum ---- */

Test(reduce, sum_over_dim1_and_negative_dim0_keepdim)
{
    tj_tensor *x = m23();
    expect(tj_sum_dim(x, (int64_t[]){1}, 1, false, -1), TJ_FLOAT32, 1, (int64_t[]){2}, (double[]){6, 15}, 0);
    expect(tj_sum_dim(x, (int64_t[]){-2}, 1, true, -1), TJ_FLOAT32, 2, (int64_t[]){1, 3}, (double[]){5, 7, 9}, 0);
}

Test(reduce, sum_dim_none_and_empty_list_reduce_everything)
{
    tj_tensor *x = m23();
    expect(tj_sum_dim(x, NULL, 0, false, -1), TJ_FLOAT32, 0, NULL, (double[]){21}, 0);
    tj_value out;
    cr_assert_eq(tj_call("aten::sum.dim_IntList", (tj_value[]){tj_v_tensor(x), tj_v_none(), tj_v_bool(true)}, 3, &out),
                 TJ_OK, "%s", tj_last_error());
    expect(out.u.t, TJ_FLOAT32, 2, (int64_t[]){1, 1}, (double[]){21}, 0);
    expect(tj_sum(x, TJ_DTYPE_NONE), TJ_FLOAT32, 0, NULL, (double[]){21}, 0);
}

Test(reduce, sum_of_bool_and_int64_gives_int64)
{
    tj_tensor *b = tj_tensor_from_data(TJ_BOOL, 2, (int64_t[]){2, 3}, (uint8_t[]){1, 0, 1, 1, 1, 1});
    expect(tj_sum_dim(b, (int64_t[]){1}, 1, false, -1), TJ_INT64, 1, (int64_t[]){2}, (double[]){2, 3}, 0);
    tj_tensor *i = test_i64(1, (int64_t[]){3}, (int64_t[]){INT64_C(4000000000000), -7, 9});
    tj_tensor *s = tj_sum(i, TJ_DTYPE_NONE);
    expect(s, TJ_INT64, 0, NULL, (double[]){4000000000002.0}, 0);
    cr_assert_eq(*(int64_t *)tj_tensor_data(s), INT64_C(4000000000002));
}

Test(reduce, sum_dtype_argument_converts_first)
{
    tj_tensor *x = test_f32(1, (int64_t[]){2}, (float[]){1.7f, 2.7f});
    expect(tj_sum(x, TJ_FLOAT64), TJ_FLOAT64, 0, NULL, (double[]){(double)1.7f + (double)2.7f}, 1e-15);
    expect(tj_sum(x, TJ_INT64), TJ_INT64, 0, NULL, (double[]){3}, 0); /* torch: tensor(3) */
    expect(tj_sum(x, TJ_BOOL), TJ_BOOL, 0, NULL, (double[]){1}, 0);
    tj_tensor *i = test_i64(1, (int64_t[]){3}, (int64_t[]){1, 2, 4});
    expect(tj_sum(i, TJ_FLOAT32), TJ_FLOAT32, 0, NULL, (double[]){7}, 0);
}

Test(reduce, sum_of_empty_is_zero_and_of_0dim_is_the_value)
{
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){0, 3});
    expect(tj_sum(e, -1), TJ_FLOAT32, 0, NULL, (double[]){0}, 0);
    expect(tj_sum_dim(e, (int64_t[]){0}, 1, false, -1), TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){0, 0, 0}, 0);
    expect(tj_sum_dim(e, (int64_t[]){1}, 1, false, -1), TJ_FLOAT32, 1, (int64_t[]){0}, NULL, 0);
    tj_tensor *z = tj_tensor_scalar_f32(2.5f);
    expect(tj_sum_dim(z, (int64_t[]){0}, 1, true, -1), TJ_FLOAT32, 0, NULL, (double[]){2.5}, 0);
}

Test(reduce, sum_of_transposed_input_over_either_dim)
{
    tj_tensor *t = tj_transpose(m23(), 0, 1); /* [3, 2] = [[1, 4], [2, 5], [3, 6]] */
    expect(tj_sum_dim(t, (int64_t[]){0}, 1, false, -1), TJ_FLOAT32, 1, (int64_t[]){2}, (double[]){6, 15}, 0);
    expect(tj_sum_dim(t, (int64_t[]){1}, 1, false, -1), TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){5, 7, 9}, 0);
}

Test(reduce, sum_of_broadcast_input)
{
    tj_tensor *c = test_f32(2, (int64_t[]){3, 1}, (float[]){1, 2, 3});
    tj_tensor *x = tj_expand(c, (int64_t[]){3, 5}, 2); /* stride 0 along dim 1 */
    expect(tj_sum_dim(x, (int64_t[]){1}, 1, false, -1), TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){5, 10, 15}, 0);
    expect(tj_sum_dim(x, (int64_t[]){0}, 1, false, -1), TJ_FLOAT32, 1, (int64_t[]){5}, (double[]){6, 6, 6, 6, 6}, 0);
}

Test(reduce, sum_over_middle_and_outer_dims_of_3d)
{
    float v[24];
    for (int i = 0; i < 24; i++) v[i] = (float)i;
    tj_tensor *x = test_f32(3, (int64_t[]){2, 3, 4}, v);
    /* dims {0, 2}: out[j] = sum_i sum_k (12 i + 4 j + k) = 2*4*4j + 4*12 + 2*6 */
    expect(tj_sum_dim(x, (int64_t[]){0, 2}, 2, false, -1), TJ_FLOAT32, 1, (int64_t[]){3},
           (double[]){60, 92, 124}, 0);
    /* dim 1: out[i][k] = 3 (12 i + k) + 12 */
    expect(tj_sum_dim(x, (int64_t[]){1}, 1, false, -1), TJ_FLOAT32, 2, (int64_t[]){2, 4},
           (double[]){12, 15, 18, 21, 48, 51, 54, 57}, 0);
}

Test(reduce, long_float32_sums_stay_accurate)
{
    int64_t n = 1000003;
    tj_tensor *x = tj_full((int64_t[]){n}, 1, tj_v_float(0.1), -1);
    double want = (double)n * (double)0.1f;
    expect(tj_sum(x, -1), TJ_FLOAT32, 0, NULL, (double[]){want}, 1e-7);
    /* the same count along an outer dim (rows strategy) */
    tj_tensor *y = tj_full((int64_t[]){n, 2}, 2, tj_v_float(0.1), -1);
    expect(tj_sum_dim(y, (int64_t[]){0}, 1, false, -1), TJ_FLOAT32, 1, (int64_t[]){2}, (double[]){want, want}, 1e-7);
}

Test(reduce, results_do_not_depend_on_the_thread_count)
{
    int64_t n = 300007;
    tj_manual_seed(7);
    tj_tensor *x = tj_randn((int64_t[]){n}, 1, -1);
    tj_tensor *y = tj_randn((int64_t[]){n, 3}, 2, -1);
    float s[2], r[2][3], v[2];
    for (int k = 0; k < 2; k++) {
        tj_set_num_threads(k ? 4 : 1);
        tj_tensor_copy_to(tj_sum(x, -1), &s[k]);
        tj_tensor_copy_to(tj_sum_dim(y, (int64_t[]){0}, 1, false, -1), r[k]);
        tj_tensor_copy_to(tj_var(x, NULL, 0, -1, false), &v[k]);
    }
    cr_assert_eq(memcmp(&s[0], &s[1], sizeof s[0]), 0, "%.9g vs %.9g", s[0], s[1]);
    cr_assert_eq(memcmp(r[0], r[1], sizeof r[0]), 0);
    cr_assert_eq(memcmp(&v[0], &v[1], sizeof v[0]), 0);
}

Test(reduce, sum_propagates_inf_and_nan)
{
    tj_tensor *x = test_f32(2, (int64_t[]){3, 2}, (float[]){INFINITY, 1, INFINITY, -INFINITY, NAN, 1});
    expect(tj_sum_dim(x, (int64_t[]){1}, 1, false, -1), TJ_FLOAT32, 1, (int64_t[]){3},
           (double[]){INFINITY, NAN, NAN}, 0);
}

/* ---- mean ---- */

Test(reduce, mean_values_empty_nan_and_dtype_argument)
{
    tj_tensor *x = m23();
    expect(tj_mean_dim(x, (int64_t[]){-1}, 1, true, -1), TJ_FLOAT32, 2, (int64_t[]){2, 1}, (double[]){2, 5}, 1e-7);
    expect(tj_mean_dim(x, NULL, 0, false, TJ_FLOAT64), TJ_FLOAT64, 0, NULL, (double[]){3.5}, 0);
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){0, 2});
    expect(tj_mean_dim(e, (int64_t[]){0}, 1, false, -1), TJ_FLOAT32, 1, (int64_t[]){2}, (double[]){NAN, NAN}, 0);
    tj_tensor *i = test_i64(1, (int64_t[]){4}, (int64_t[]){1, 2, 3, 5});
    expect(tj_mean_dim(i, NULL, 0, false, TJ_FLOAT32), TJ_FLOAT32, 0, NULL, (double[]){2.75}, 0);
}

Test(reduce, mean_of_integer_input_is_a_dtype_error)
{
    tj_tensor *i = test_i64(1, (int64_t[]){2}, (int64_t[]){1, 2});
    expect_error(tj_mean_dim(i, NULL, 0, false, -1), TJ_ERR_DTYPE, "aten::mean.dim: could not infer output dtype");
    expect_error(tj_mean_dim(m23(), NULL, 0, false, TJ_INT64), TJ_ERR_DTYPE, "Optional dtype");
}

/* ---- amax / amin ---- */

Test(reduce, amax_amin_over_dims_with_nan_and_inf)
{
    tj_tensor *x = test_f32(2, (int64_t[]){3, 3}, (float[]){1, NAN, 3, -INFINITY, -INFINITY, -INFINITY, 2, -5, 7});
    expect(tj_amax(x, (int64_t[]){1}, 1, false), TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){NAN, -INFINITY, 7}, 0);
    expect(tj_amin(x, (int64_t[]){1}, 1, true), TJ_FLOAT32, 2, (int64_t[]){3, 1}, (double[]){NAN, -INFINITY, -5}, 0);
    expect(tj_amax(x, (int64_t[]){0}, 1, false), TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){2, NAN, 7}, 0);
    expect(tj_amin(m23(), (int64_t[]){-1, 0}, 2, false), TJ_FLOAT32, 0, NULL, (double[]){1}, 0);
    expect(tj_amax(m23(), NULL, 0, false), TJ_FLOAT32, 0, NULL, (double[]){6}, 0);
}

Test(reduce, amax_of_int64_and_bool)
{
    tj_tensor *i = test_i64(2, (int64_t[]){2, 2}, (int64_t[]){INT64_MIN, -3, 5, INT64_MAX});
    expect(tj_amax(i, (int64_t[]){1}, 1, false), TJ_INT64, 1, (int64_t[]){2}, (double[]){-3, (double)INT64_MAX}, 0);
    tj_tensor *b = tj_tensor_from_data(TJ_BOOL, 1, (int64_t[]){3}, (uint8_t[]){0, 1, 1});
    expect(tj_amax(b, NULL, 0, false), TJ_BOOL, 0, NULL, (double[]){1}, 0);
    expect(tj_amin(b, NULL, 0, false), TJ_BOOL, 0, NULL, (double[]){0}, 0);
}

Test(reduce, amax_long_contiguous_row_with_a_late_nan)
{
    int64_t n = 40000;
    tj_tensor *x = tj_arange(tj_v_int(0), tj_v_int(n), tj_v_int(1), TJ_FLOAT32);
    expect(tj_amax(x, NULL, 0, false), TJ_FLOAT32, 0, NULL, (double[]){(double)(n - 1)}, 0);
    ((float *)tj_tensor_data(x))[n - 2] = NAN;
    expect(tj_amax(x, NULL, 0, false), TJ_FLOAT32, 0, NULL, (double[]){NAN}, 0);
    expect(tj_amin(x, NULL, 0, false), TJ_FLOAT32, 0, NULL, (double[]){NAN}, 0);
}

Test(reduce, amax_of_an_empty_reduction_is_an_error_naming_the_op)
{
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){0, 3});
    expect_error(tj_amax(e, (int64_t[]){0}, 1, false), TJ_ERR_SHAPE, "aten::amax: Expected reduction dim 0");
    expect_error(tj_amin(e, NULL, 0, false), TJ_ERR_SHAPE, "aten::amin: Expected reduction dim to be specified");
    /* reducing the non-empty dim is fine */
    expect(tj_amax(e, (int64_t[]){1}, 1, false), TJ_FLOAT32, 1, (int64_t[]){0}, NULL, 0);
}

/* ---- argmax / max.dim ---- */

Test(reduce, argmax_ties_first_nan_wins_and_all_neg_inf_gives_zero)
{
    tj_tensor *x = test_f32(2, (int64_t[]){4, 4}, (float[]){1, 3, 3, 2, 1, NAN, 5, NAN, -INFINITY, -INFINITY, -INFINITY,
                                                            -INFINITY, INFINITY, 0, INFINITY, 1});
    expect(tj_argmax(x, true, 1, false), TJ_INT64, 1, (int64_t[]){4}, (double[]){1, 1, 0, 0}, 0);
    expect(tj_argmax(x, true, 0, true), TJ_INT64, 2, (int64_t[]){1, 4}, (double[]){3, 1, 3, 1}, 0);
}

Test(reduce, argmax_without_dim_indexes_the_flattened_tensor)
{
    tj_tensor *x = test_f32(2, (int64_t[]){2, 3}, (float[]){1, 9, 2, 9, 0, 4});
    expect(tj_argmax(x, false, 0, false), TJ_INT64, 0, NULL, (double[]){1}, 0);
    expect(tj_argmax(x, false, 0, true), TJ_INT64, 2, (int64_t[]){1, 1}, (double[]){1}, 0);
    /* flat index follows the logical (row-major) order, not memory order */
    /* [[1,9],[2,5],[3,6]] */
    tj_tensor *t = tj_transpose(test_f32(2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 9, 5, 6}), 0, 1);
    expect(tj_argmax(t, false, 0, false), TJ_INT64, 0, NULL, (double[]){1}, 0);
    expect(tj_argmax(tj_tensor_scalar_f32(4), true, 0, false), TJ_INT64, 0, NULL, (double[]){0}, 0);
}

Test(reduce, argmax_long_rows_and_outer_dim)
{
    int64_t n = 50000;
    tj_tensor *x = tj_arange(tj_v_int(0), tj_v_int(n), tj_v_int(1), TJ_FLOAT32);
    float *p = tj_tensor_data(x);
    p[30000] = 1e9f;
    p[45000] = 1e9f; /* a later tie in another chunk */
    expect(tj_argmax(x, false, 0, false), TJ_INT64, 0, NULL, (double[]){30000}, 0);
    tj_tensor *y = tj_view(x, (int64_t[]){n / 2, 2}, 2);
    expect(tj_argmax(y, true, 0, false), TJ_INT64, 1, (int64_t[]){2}, (double[]){15000, n / 2 - 1}, 0);
}

Test(reduce, argmax_errors_on_empty_and_bool)
{
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){0, 3});
    expect_error(tj_argmax(e, true, 0, false), TJ_ERR_SHAPE, "aten::argmax: Expected reduction dim 0");
    expect_error(tj_argmax(e, false, 0, false), TJ_ERR_SHAPE, "aten::argmax");
    expect(tj_argmax(e, true, 1, false), TJ_INT64, 1, (int64_t[]){0}, NULL, 0);
    tj_tensor *b = tj_tensor_from_data(TJ_BOOL, 1, (int64_t[]){2}, (uint8_t[]){0, 1});
    expect_error(tj_argmax(b, false, 0, false), TJ_ERR_DTYPE, "aten::argmax");
}

Test(reduce, max_dim_values_and_indices)
{
    tj_tensor *t = tj_transpose(test_f32(2, (int64_t[]){2, 3}, (float[]){1, 7, 7, NAN, 0, 2}), 0, 1); /* [3, 2] */
    tj_tensor *v, *i;
    cr_assert_eq(tj_max_dim(t, 0, true, &v, &i), TJ_OK, "%s", tj_last_error());
    expect(v, TJ_FLOAT32, 2, (int64_t[]){1, 2}, (double[]){7, NAN}, 0);
    expect(i, TJ_INT64, 2, (int64_t[]){1, 2}, (double[]){1, 0}, 0);
    tj_tensor *n = test_i64(2, (int64_t[]){2, 3}, (int64_t[]){-4, -2, -2, 8, 9, 9});
    cr_assert_eq(tj_max_dim(n, -1, false, &v, &i), TJ_OK, "%s", tj_last_error());
    expect(v, TJ_INT64, 1, (int64_t[]){2}, (double[]){-2, 9}, 0);
    expect(i, TJ_INT64, 1, (int64_t[]){2}, (double[]){1, 1}, 0);
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){0, 3});
    cr_assert_eq(tj_max_dim(e, 0, false, &v, &i), TJ_ERR_SHAPE);
    cr_assert(strstr(tj_last_error(), "aten::max.dim"), "%s", tj_last_error());
}

/* ---- var / var_mean ---- */

/* rows: small values, a large common offset (1e4), tiny values */
static tj_tensor *var_input(void)
{
    return test_f32(2, (int64_t[]){3, 4}, (float[]){0.5f, -1.25f, 3.0f, 2.0f, 10000.0f, 10001.0f, 10002.5f, 9999.5f,
                                                   1e-3f, 2e-3f, -4e-3f, 7e-3f});
}

Test(reduce, var_default_correction_and_population)
{
    tj_tensor *x = var_input();
    /* torch.var(x, dim=1) / torch.var(x, dim=1, correction=0) */
    expect(tj_var(x, (int64_t[]){1}, 1, -1, false), TJ_FLOAT32, 1, (int64_t[]){3},
           (double[]){3.4322917461395264, 1.75, 2.0333334759925492e-05}, 1e-6);
    expect(tj_var(x, (int64_t[]){1}, 1, 0, true), TJ_FLOAT32, 2, (int64_t[]){3, 1},
           (double[]){2.57421875, 1.3125, 1.525000152469147e-05}, 1e-6);
}

Test(reduce, var_large_offset_rows_are_accurate)
{
    /* 1e6 + small deviations, exact in float32: var of {-2,-1,0,1,2} + 1e6 is 2.5 */
    tj_tensor *x = test_f32(1, (int64_t[]){5}, (float[]){999998, 999999, 1000000, 1000001, 1000002});
    expect(tj_var(x, NULL, 0, -1, false), TJ_FLOAT32, 0, NULL, (double[]){2.5}, 1e-7);
}

Test(reduce, var_divisor_clamps_at_zero)
{
    tj_tensor *x = test_f32(2, (int64_t[]){2, 2}, (float[]){1, 3, 2, 2});
    /* N - correction = -1 -> divisor 0: positive / 0 = inf, 0 / 0 = nan */
    expect(tj_var(x, (int64_t[]){1}, 1, 3, false), TJ_FLOAT32, 1, (int64_t[]){2}, (double[]){INFINITY, NAN}, 0);
    tj_tensor *one = test_f32(2, (int64_t[]){2, 1}, (float[]){1, 2});
    expect(tj_var(one, (int64_t[]){1}, 1, -1, false), TJ_FLOAT32, 1, (int64_t[]){2}, (double[]){NAN, NAN}, 0);
}

Test(reduce, var_mean_returns_var_then_mean)
{
    tj_tensor *x = var_input(), *v, *m;
    cr_assert_eq(tj_var_mean(x, (int64_t[]){1}, 1, 1, false, &v, &m), TJ_OK, "%s", tj_last_error());
    expect(v, TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){3.4322917461395264, 1.75, 2.0333334759925492e-05}, 1e-6);
    expect(m, TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){1.0625, 10000.75, 0.0015}, 1e-7);
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT64, 2, (int64_t[]){0, 2});
    cr_assert_eq(tj_var_mean(e, (int64_t[]){0}, 1, 1, false, &v, &m), TJ_OK, "%s", tj_last_error());
    expect(v, TJ_FLOAT64, 1, (int64_t[]){2}, (double[]){NAN, NAN}, 0);
    expect(m, TJ_FLOAT64, 1, (int64_t[]){2}, (double[]){NAN, NAN}, 0);
}

Test(reduce, var_over_outer_dim_matches_torch)
{
    /* torch.var(x, dim=0) */
    expect(tj_var(var_input(), (int64_t[]){0}, 1, -1, false), TJ_FLOAT32, 1, (int64_t[]){4},
           (double[]){33331664.0, 33344162.0, 33340016.0, 33323312.0}, 1e-6);
}

Test(reduce, var_of_integer_input_is_a_dtype_error)
{
    tj_tensor *i = test_i64(1, (int64_t[]){2}, (int64_t[]){1, 2});
    expect_error(tj_var(i, NULL, 0, -1, false), TJ_ERR_DTYPE, "aten::var.correction");
}

/* ---- logsumexp ---- */

Test(reduce, logsumexp_handles_infinities_and_nan)
{
    tj_tensor *y = test_f32(2, (int64_t[]){4, 4}, (float[]){0.5f, -1.25f, 3.0f, 2.0f, -INFINITY, -INFINITY, -INFINITY,
                                                            -INFINITY, INFINITY, 1, 2, -INFINITY, 1, NAN, 2, 3});
    /* torch.logsumexp(y, dim=1) */
    expect(tj_logsumexp(y, (int64_t[]){1}, 1, false), TJ_FLOAT32, 1, (int64_t[]){4},
           (double[]){3.381328582763672, -INFINITY, INFINITY, NAN}, 1e-6);
}

Test(reduce, logsumexp_outer_dim_empty_and_integer_input)
{
    /* torch.logsumexp(x, dim=0) over the var input: the 1e4 row dominates */
    expect(tj_logsumexp(var_input(), (int64_t[]){0}, 1, true), TJ_FLOAT32, 2, (int64_t[]){1, 4},
           (double[]){10000.0, 10001.0, 10002.5, 9999.5}, 1e-7);
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){0, 3});
    expect(tj_logsumexp(e, (int64_t[]){0}, 1, false), TJ_FLOAT32, 1, (int64_t[]){3},
           (double[]){-INFINITY, -INFINITY, -INFINITY}, 0);
    /* torch.logsumexp(torch.tensor([[1,2,3]]), dim=1) */
    tj_tensor *i = test_i64(2, (int64_t[]){1, 3}, (int64_t[]){1, 2, 3});
    expect(tj_logsumexp(i, (int64_t[]){1}, 1, false), TJ_FLOAT32, 1, (int64_t[]){1}, (double[]){3.4076058864593506},
           1e-6);
}

/* ---- dim errors ---- */

Test(reduce, dim_out_of_range_is_an_index_error_naming_the_op)
{
    tj_tensor *x = m23();
    expect_error(tj_sum_dim(x, (int64_t[]){2}, 1, false, -1), TJ_ERR_INDEX, "aten::sum.dim_IntList");
    expect_error(tj_amax(x, (int64_t[]){-3}, 1, false), TJ_ERR_INDEX, "aten::amax");
    expect_error(tj_argmax(x, true, 5, false), TJ_ERR_INDEX, "aten::argmax");
    expect_error(tj_logsumexp(x, (int64_t[]){9}, 1, false), TJ_ERR_INDEX, "aten::logsumexp");
    expect_error(tj_sum_dim(tj_tensor_scalar_f32(1), (int64_t[]){1}, 1, false, -1), TJ_ERR_INDEX, "aten::sum");
}

Test(reduce, repeated_dims_are_an_error)
{
    tj_tensor *x = m23();
    expect_error(tj_sum_dim(x, (int64_t[]){1, -1}, 2, false, -1), TJ_ERR_INVALID_ARGUMENT,
                 "aten::sum.dim_IntList: dim 1 appears multiple times");
    expect_error(tj_var(x, (int64_t[]){0, 0}, 2, -1, false), TJ_ERR_INVALID_ARGUMENT, "aten::var.correction");
    expect_error(tj_mean_dim(x, (int64_t[]){0, -2}, 2, false, -1), TJ_ERR_INVALID_ARGUMENT, "aten::mean.dim");
}

Test(reduce, fake_tensors_get_shapes_without_data)
{
    tj_tensor *f = tj_tensor_fake(TJ_BOOL, 3, (int64_t[]){2, 3, 4});
    tj_tensor *s = tj_sum_dim(f, (int64_t[]){0, 2}, 2, true, -1);
    cr_assert_not_null(s, "%s", tj_last_error());
    cr_assert(tj_tensor_is_fake(s));
    cr_assert_eq(tj_tensor_dtype(s), TJ_INT64);
    cr_assert_eq(tj_tensor_ndim(s), 3);
    cr_assert_eq(tj_tensor_shape(s)[1], 3);
}

/* ---- decompositions of the composites agree with their kernels ---- */

/* Runs op's kernel (through the dispatcher) and its registered decomposition
 * on the same arguments and compares every output. */
static void expect_decomposition_matches(const tj_op *op, const tj_value *args, double tol)
{
    tj_value k[TJ_MAX_RETURNS], d[TJ_MAX_RETURNS];
    cr_assert_eq(tj_dispatch(op, args, tj_op_num_args(op), k), TJ_OK, "%s", tj_last_error());
    cr_assert_not_null(op->decomp, "%s has no decomposition", tj_op_name(op));
    cr_assert_eq(op->decomp(args, d), TJ_OK, "%s: %s", tj_op_name(op), tj_last_error());
    for (int i = 0; i < tj_op_num_returns(op); i++) {
        tj_tensor *kt = k[i].u.t;
        double want[64];
        cr_assert_leq(tj_tensor_numel(kt), 64);
        for (int64_t j = 0; j < tj_tensor_numel(kt); j++) want[j] = tj_tensor_item_at(kt, j);
        expect(d[i].u.t, tj_tensor_dtype(kt), tj_tensor_ndim(kt), tj_tensor_shape(kt), want, tol);
    }
}

Test(reduce, mean_decomposition_matches_kernel)
{
    tj_tensor *x = var_input();
    const tj_op *op = TJ_OPS(mean_dim);
    expect_decomposition_matches(op, (tj_value[]){tj_v_tensor(x), tj_v_ints((int64_t[]){1}, 1), tj_v_bool(true), tj_v_none()}, 1e-6);
    expect_decomposition_matches(op, (tj_value[]){tj_v_tensor(x), tj_v_none(), tj_v_bool(false), tj_v_dtype(TJ_FLOAT64)}, 1e-12);
    tj_value out[1];
    tj_tensor *i = test_i64(1, (int64_t[]){2}, (int64_t[]){1, 2});
    cr_assert_eq(op->decomp((tj_value[]){tj_v_tensor(i), tj_v_none(), tj_v_bool(false), tj_v_none()}, out), TJ_ERR_DTYPE);
}

Test(reduce, var_and_var_mean_decompositions_match_kernels)
{
    tj_tensor *x = var_input();
    const tj_op *var = TJ_OPS(var_correction), *vm = TJ_OPS(var_mean_correction);
    expect_decomposition_matches(var, (tj_value[]){tj_v_tensor(x), tj_v_ints((int64_t[]){-1}, 1), tj_v_none(), tj_v_bool(false)}, 1e-5);
    expect_decomposition_matches(var, (tj_value[]){tj_v_tensor(x), tj_v_ints((int64_t[]){0}, 1), tj_v_int(0), tj_v_bool(true)}, 1e-5);
    expect_decomposition_matches(var, (tj_value[]){tj_v_tensor(x), tj_v_ints((int64_t[]){1}, 1), tj_v_int(5), tj_v_bool(false)}, 0);
    expect_decomposition_matches(vm, (tj_value[]){tj_v_tensor(x), tj_v_none(), tj_v_int(1), tj_v_bool(false)}, 1e-5);
    expect_decomposition_matches(vm, (tj_value[]){tj_v_tensor(x), tj_v_ints((int64_t[]){1}, 1), tj_v_int(1), tj_v_bool(true)}, 1e-5);
}

Test(reduce, logsumexp_decomposition_matches_kernel)
{
    tj_tensor *y = test_f32(2, (int64_t[]){4, 4}, (float[]){0.5f, -1.25f, 3.0f, 2.0f, -INFINITY, -INFINITY, -INFINITY,
                                                            -INFINITY, INFINITY, 1, 2, -INFINITY, 1, NAN, 2, 3});
    const tj_op *op = TJ_OPS(logsumexp);
    expect_decomposition_matches(op, (tj_value[]){tj_v_tensor(y), tj_v_ints((int64_t[]){1}, 1), tj_v_bool(false)}, 1e-6);
    expect_decomposition_matches(op, (tj_value[]){tj_v_tensor(var_input()), tj_v_ints((int64_t[]){0}, 1), tj_v_bool(true)}, 1e-6);
    tj_tensor *i = test_i64(2, (int64_t[]){1, 3}, (int64_t[]){1, 2, 3});
    expect_decomposition_matches(op, (tj_value[]){tj_v_tensor(i), tj_v_ints((int64_t[]){1}, 1), tj_v_bool(false)}, 1e-6);
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){0, 3});
    expect_decomposition_matches(op, (tj_value[]){tj_v_tensor(e), tj_v_ints((int64_t[]){0}, 1), tj_v_bool(false)}, 0);
}

Test(reduce, allocation_failures_are_reported_not_crashed)
{
    /* 40000 x 3 over dim 0 needs scratch for partial results; var also a
     * buffer of means, logsumexp of int64 a converted copy */
    tj_tensor *x = tj_full((int64_t[]){40000, 3}, 2, tj_v_float(0.5), -1);
    tj_tensor *xi = tj_full((int64_t[]){3000}, 1, tj_v_int(1), -1);
    for (uint64_t n = 1; n <= 6; n++) {
        tj_debug_fail_allocation(n);
        tj_tensor *v = tj_var(x, (int64_t[]){0}, 1, -1, false);
        tj_debug_fail_allocation(n);
        tj_tensor *l = tj_logsumexp(xi, (int64_t[]){0}, 1, false);
        tj_debug_fail_allocation(0);
        if (!v) cr_assert_eq(tj_last_status(), TJ_ERR_OUT_OF_MEMORY, "%s", tj_last_error());
        else expect(v, TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){0, 0, 0}, 0);
        if (l) expect(l, TJ_FLOAT32, 0, NULL, (double[]){1 + log(3000.0)}, 1e-6);
    }
}

/* Naive double-precision sum of x[a][b][c] (contiguous [A, B, C]) over the
 * dims marked in red, for checking the strategies on larger shapes. */
static void naive_sum3(const float *x, const int64_t *s, const bool *red, double *out, int64_t nout)
{
    for (int64_t o = 0; o < nout; o++) out[o] = 0;
    for (int64_t a = 0; a < s[0]; a++)
        for (int64_t b = 0; b < s[1]; b++)
            for (int64_t c = 0; c < s[2]; c++) {
                int64_t idx[3] = {a, b, c}, o = 0;
                for (int d = 0; d < 3; d++)
                    if (!red[d]) o = o * s[d] + idx[d];
                out[o] += x[(a * s[1] + b) * s[2] + c];
            }
}

Test(reduce, every_dim_combination_of_a_3d_tensor_matches_a_naive_sum)
{
    /* sizes chosen so that some reductions exceed one chunk (16384) */
    int64_t s[3] = {64, 3, 601};
    tj_manual_seed(3);
    tj_tensor *x = tj_rand(s, 3, -1);
    const float *px = tj_tensor_data(x);
    static double want[64 * 3 * 601];
    for (int mask = 1; mask < 8; mask++) {
        bool red[3];
        int64_t dims[3], nd = 0, nout = 1, oshape[3];
        int no = 0;
        for (int d = 0; d < 3; d++) {
            red[d] = mask >> d & 1;
            if (red[d]) dims[nd++] = d;
            else oshape[no++] = s[d], nout *= s[d];
        }
        naive_sum3(px, s, red, want, nout);
        expect(tj_sum_dim(x, dims, (int)nd, false, -1), TJ_FLOAT32, no, oshape, want, 1e-6);
        /* the same through a permuted (non-contiguous) view: dims map back */
        tj_tensor *p = tj_permute(x, (int64_t[]){2, 0, 1}, 3);
        int64_t pdims[3];
        for (int k = 0; k < nd; k++) pdims[k] = (dims[k] + 1) % 3;
        tj_tensor *r = tj_sum_dim(p, pdims, (int)nd, false, -1);
        if (no == 2 && !red[1]) r = tj_permute(r, (int64_t[]){1, 0}, 2); /* kept (c, a) -> (a, c) */
        if (no == 2 && !red[0]) r = tj_permute(r, (int64_t[]){1, 0}, 2); /* kept (c, b) -> (b, c) */
        expect(r, TJ_FLOAT32, no, oshape, want, 1e-6);
    }
}
