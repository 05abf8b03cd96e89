/* Grouping, counting and index-generating operators (_unique2,
 * unique_consecutive, unique_dim, bincount, histc, tril_indices,
 * triu_indices, argsort) and the random ones (randint, randperm,
 * multinomial): values, errors, what tracing makes of them (the unique
 * family and bincount refuse fake mode and hold their traced count, as
 * nonzero; histc, the index generators and the random operators trace
 * statically and replay as eager does).
 *
 * Reference values from PyTorch 1.13 (/usr/bin/python3), nan = float('nan'):
 *   torch.unique(torch.tensor([3., 1, 2, 3, 1]), return_inverse=True, return_counts=True)
 *     -> [1, 2, 3], [2, 0, 1, 2, 0], [2, 1, 2]
 *   torch.unique_consecutive(torch.tensor([3, 3, 1, 1, 1, 2, 3, 3, 0]), return_inverse=True, return_counts=True)
 *     -> [3, 1, 2, 3, 0], [0, 0, 1, 1, 1, 2, 3, 3, 4], [2, 3, 1, 2, 1]
 *   torch.unique(torch.tensor([[3, 2], [1, 2], [3, 2]]), dim=0, return_inverse=True, return_counts=True)
 *     -> [[1, 2], [3, 2]], [1, 0, 1], [1, 2]
 *   torch.bincount(torch.tensor([1, 4, 1, 0, 7, 4, 4])) -> [1, 2, 0, 0, 3, 0, 0, 1]
 *   torch.bincount(torch.tensor([1, 4, 1]), torch.tensor([0.5, 2., 0.25]), minlength=6) -> [0, 0.75, 0, 0, 2, 0]
 *   torch.histc(torch.tensor([0., 1, 2, 3, nan, 3.5]), 3, 0, 3) -> [2, 1, 2] (nan in the first bin)
 *   torch.histc(torch.tensor([2., 2, 2]), 4) -> [0, 0, 3, 0] (range [1, 3])
 *   torch.tril_indices(3, 4, 1) -> [[0, 0, 1, 1, 1, 2, 2, 2, 2], [0, 1, 0, 1, 2, 0, 1, 2, 3]]
 *   torch.triu_indices(3, 3, -1) -> [[0, 0, 0, 1, 1, 1, 2, 2], [0, 1, 2, 0, 1, 2, 1, 2]]
 * torch's random streams are not tjit's (Philox): the random operators are
 * checked by their statistics under a fixed seed, with tolerances of about
 * five standard errors of the sample, and by determinism. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(unique_random, .init = test_scope_open, .fini = test_scope_close);

static tj_tensor *vec_f32(int64_t n, const float *v) { return test_f32(1, &n, v); }
static tj_tensor *vec_i64(int64_t n, const int64_t *v) { return test_i64(1, &n, v); }

/* ---- the unique family ---- */

Test(unique_random, unique2_sorts_and_counts)
{
    tj_tensor *x = vec_f32(5, (const float[]){3, 1, 2, 3, 1}), *v, *inv, *c;
    for (int sorted = 0; sorted < 2; sorted++) { /* sorted=False sorts too */
        cr_assert_eq(tj_unique2(x, sorted, true, true, &v, &inv, &c), TJ_OK, "%s", tj_last_error());
        test_assert_dtype_shape(v, TJ_FLOAT32, 1, (const int64_t[]){3});
        test_expect_close(v, (const double[]){1, 2, 3}, 3, 0, 0);
        test_expect_i64(inv, 5, (const int64_t[]){2, 0, 1, 2, 0});
        test_expect_i64(c, 3, (const int64_t[]){2, 1, 2});
    }
    /* not asked for: [0] */
    cr_assert_eq(tj_unique2(x, true, false, false, &v, &inv, &c), TJ_OK, "%s", tj_last_error());
    test_assert_dtype_shape(inv, TJ_INT64, 1, (const int64_t[]){0});
    test_assert_dtype_shape(c, TJ_INT64, 1, (const int64_t[]){0});
}

/* -0 equals +0 (the first seen is kept); each nan is a value of its own */
Test(unique_random, unique2_keeps_first_zero_and_counts_each_nan)
{
    const double d[6] = {NAN, 1, NAN, -0.0, 0.0, 1};
    tj_tensor *v, *inv, *c;
    cr_assert_eq(tj_unique2(test_f64(1, (const int64_t[]){6}, d), true, true, true, &v, &inv, &c), TJ_OK, "%s",
                 tj_last_error());
    test_expect_close(v, (const double[]){0, 1, NAN, NAN}, 4, 0, 0);
    double first;
    cr_assert_eq(tj_tensor_copy_to(tj_select(v, 0, 0), &first), TJ_OK);
    cr_expect(signbit(first), "the first zero seen is -0");
    test_expect_i64(inv, 6, (const int64_t[]){2, 1, 3, 0, 0, 1});
    test_expect_i64(c, 4, (const int64_t[]){2, 2, 1, 1});
}

Test(unique_random, unique_consecutive_groups_runs_and_slices)
{
    tj_tensor *x = vec_i64(9, (const int64_t[]){3, 3, 1, 1, 1, 2, 3, 3, 0}), *v, *inv, *c;
    cr_assert_eq(tj_unique_consecutive(x, true, true, false, 0, &v, &inv, &c), TJ_OK, "%s", tj_last_error());
    test_expect_i64(v, 5, (const int64_t[]){3, 1, 2, 3, 0});
    test_expect_i64(inv, 9, (const int64_t[]){0, 0, 1, 1, 1, 2, 3, 3, 4});
    test_expect_i64(c, 5, (const int64_t[]){2, 3, 1, 2, 1});
    /* along dim 1 of the transposed rows: whole columns compared */
    tj_tensor *rows = test_i64(2, (const int64_t[]){4, 2}, (const int64_t[]){1, 2, 1, 2, 0, 5, 1, 2});
    cr_assert_eq(tj_unique_consecutive(tj_t(rows), false, false, true, 1, &v, &inv, &c), TJ_OK, "%s",
                 tj_last_error());
    test_assert_dtype_shape(v, TJ_INT64, 2, (const int64_t[]){2, 3});
    test_expect_i64(v, 6, (const int64_t[]){1, 0, 1, 2, 5, 2});
    test_expect_i64(inv, 4, (const int64_t[]){0, 0, 1, 2}); /* always computed along a dim */
    test_expect_i64(c, 3, (const int64_t[]){2, 1, 1});
}

Test(unique_random, unique_dim_sorts_slices)
{
    tj_tensor *rows = test_i64(2, (const int64_t[]){3, 2}, (const int64_t[]){3, 2, 1, 2, 3, 2}), *v, *inv, *c;
    cr_assert_eq(tj_unique_dim(rows, 0, false, false, false, &v, &inv, &c), TJ_OK, "%s", tj_last_error());
    test_assert_dtype_shape(v, TJ_INT64, 2, (const int64_t[]){2, 2});
    test_expect_i64(v, 4, (const int64_t[]){1, 2, 3, 2});
    test_expect_i64(inv, 3, (const int64_t[]){1, 0, 1});
    test_expect_i64(c, 2, (const int64_t[]){1, 2});
}

Test(unique_random, unique_errors_name_the_operator)
{
    tj_tensor *v;
    cr_expect_eq(tj_unique_dim(tj_scalar_tensor(tj_v_float(1), TJ_FLOAT32), 0, true, true, true, &v, NULL, NULL),
                 TJ_ERR_INDEX);
    cr_expect(strstr(tj_last_error(), "aten::unique_dim: Dimension specified as 0 but tensor has no dimensions"), "%s",
              tj_last_error());
    cr_expect_eq(tj_unique_dim(tj_zeros((const int64_t[]){2, 0}, 2, TJ_FLOAT32), 0, true, true, true, &v, NULL, NULL),
                 TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "There are 0 sized dimensions, and they aren't selected"), "%s", tj_last_error());
    cr_expect_eq(tj_unique_consecutive(vec_i64(2, (const int64_t[]){1, 2}), true, true, true, 1, &v, NULL, NULL),
                 TJ_ERR_INDEX);
    cr_expect(strstr(tj_last_error(), "aten::unique_consecutive"), "%s", tj_last_error());
    cr_expect_eq(tj_unique2(tj_tensor_fake(TJ_FLOAT32, 1, (const int64_t[]){3}), true, true, true, &v, NULL, NULL),
                 TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "aten::_unique2: output shape depends on the input's values"), "%s",
              tj_last_error());
}

static tj_status unique_counts(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *v, *c;
    tj_status st = tj_unique2(in[0], true, false, true, &v, NULL, &c);
    if (st != TJ_OK) return st;
    out[0] = tj_mul(v, tj_to_copy(c, TJ_FLOAT32));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* As nonzero: refused in fake mode; a real-mode trace holds its count of
 * distinct values, runs inputs with that count and refuses others. */
Test(unique_random, unique_traces_in_real_mode_only)
{
    tj_tensor *x = vec_f32(5, (const float[]){3, 1, 2, 3, 1});
    test_expect_error(tj_make_fx(unique_counts, NULL, &x, 1, NULL, TJ_TRACE_FAKE), TJ_ERR_UNSUPPORTED,
                      "aten::_unique2", "output shape depends on the input's values");
    tj_graph *g = tj_make_fx(unique_counts, NULL, &x, 1, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::_unique2")), 1);
    tj_tensor *same = vec_f32(5, (const float[]){5, 5, 4, 0, 4}), *out[1], *want[1] = {NULL};
    int n_out;
    cr_assert_eq(tj_graph_run(g, &same, 1, out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(unique_counts(NULL, &same, 1, want, &n_out), TJ_OK);
    test_expect_same(out[0], want[0], "graph vs eager");
    test_expect_close(out[0], (const double[]){0, 8, 10}, 3, 0, 0);
    tj_tensor *more = vec_f32(5, (const float[]){1, 2, 3, 4, 5});
    cr_expect_eq(tj_graph_run(g, &more, 1, out), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "aten::_unique2"), "%s", tj_last_error());
    tj_graph_free(g);
}

/* ---- bincount / histc ---- */

Test(unique_random, bincount_counts_and_sums_weights)
{
    tj_tensor *x = vec_i64(7, (const int64_t[]){1, 4, 1, 0, 7, 4, 4});
    tj_tensor *r = tj_bincount(x, NULL, 0);
    test_assert_dtype_shape(r, TJ_INT64, 1, (const int64_t[]){8});
    test_expect_i64(r, 8, (const int64_t[]){1, 2, 0, 0, 3, 0, 0, 1});
    tj_tensor *w = tj_bincount(vec_i64(3, (const int64_t[]){1, 4, 1}), vec_f32(3, (const float[]){0.5f, 2, 0.25f}), 6);
    test_assert_dtype_shape(w, TJ_FLOAT32, 1, (const int64_t[]){6});
    test_expect_close(w, (const double[]){0, 0.75, 0, 0, 2, 0}, 6, 0, 0);
    /* int64 weights sum in float64 */
    tj_tensor *wi = tj_bincount(vec_i64(3, (const int64_t[]){1, 4, 1}), vec_i64(3, (const int64_t[]){2, 3, 4}), 0);
    test_assert_dtype_shape(wi, TJ_FLOAT64, 1, (const int64_t[]){5});
    test_expect_close(wi, (const double[]){0, 6, 0, 0, 3}, 5, 0, 0);
}

Test(unique_random, bincount_errors_as_torch)
{
    test_expect_error(tj_bincount(vec_i64(2, (const int64_t[]){1, -1}), NULL, 0), TJ_ERR_INVALID_ARGUMENT,
                      "aten::bincount", "bincount only supports 1-d non-negative integral inputs");
    test_expect_error(tj_bincount(test_i64(2, (const int64_t[]){1, 1}, (const int64_t[]){1}), NULL, 0), TJ_ERR_SHAPE,
                      "aten::bincount", "bincount only supports 1-d non-negative integral inputs");
    test_expect_error(tj_bincount(vec_f32(1, (const float[]){1}), NULL, 0), TJ_ERR_DTYPE, "aten::bincount",
                      "\"bincount_cpu\" not implemented for 'float32'");
    test_expect_error(tj_bincount(vec_i64(2, (const int64_t[]){1, 2}), vec_f32(1, (const float[]){1}), 0),
                      TJ_ERR_SHAPE, "aten::bincount", "weights should be 1-d and have the same length as input");
    test_expect_error(tj_bincount(vec_i64(2, (const int64_t[]){1, 2}), NULL, -1), TJ_ERR_INVALID_ARGUMENT,
                      "aten::bincount", "minlength should be >= 0");
    test_expect_error(tj_bincount(tj_tensor_fake(TJ_INT64, 1, (const int64_t[]){3}), NULL, 0), TJ_ERR_UNSUPPORTED,
                      "aten::bincount", "output shape depends on the input's values");
}

Test(unique_random, histc_bins_like_torch)
{
    tj_tensor *x = vec_f32(6, (const float[]){0, 1, 2, 3, NAN, 3.5f});
    tj_tensor *r = tj_histc(x, 3, tj_v_int(0), tj_v_int(3));
    test_assert_dtype_shape(r, TJ_FLOAT32, 1, (const int64_t[]){3});
    test_expect_close(r, (const double[]){2, 1, 2}, 3, 0, 0);
    test_expect_close(tj_histc(vec_f32(3, (const float[]){2, 2, 2}), 4, tj_v_int(0), tj_v_int(0)),
                      (const double[]){0, 0, 3, 0}, 4, 0, 0);
    test_expect_error(tj_histc(x, 3, tj_v_int(3), tj_v_int(1)), TJ_ERR_INVALID_ARGUMENT, "aten::histc",
                      "max must be larger than min");
    test_expect_error(tj_histc(x, 0, tj_v_int(0), tj_v_int(1)), TJ_ERR_INVALID_ARGUMENT, "aten::histc",
                      "bins must be > 0");
    test_expect_error(tj_histc(vec_i64(1, (const int64_t[]){1}), 3, tj_v_int(0), tj_v_int(1)), TJ_ERR_DTYPE,
                      "aten::histc", "\"histogram_cpu\" not implemented for 'int64'");
    test_expect_error(tj_histc(vec_f32(2, (const float[]){1, INFINITY}), 3, tj_v_int(0), tj_v_int(0)),
                      TJ_ERR_INVALID_ARGUMENT, "aten::histc", "range of [1, inf] is not finite");
}

static tj_status histc_of(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_histc(tj_mul(in[0], in[0]), 5, tj_v_int(0), tj_v_int(0));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* histc's size is `bins`: it traces in fake mode, its range (min == max)
 * read from each run's values */
Test(unique_random, histc_traces_statically)
{
    tj_tensor *x = test_random_f32(1, (const int64_t[]){40}, 3);
    test_expect_traced(histc_of, &x, 1, 1, (const char *[]){"aten.histc.default"}, 1, NULL, 0);
}

/* ---- tril_indices / triu_indices ---- */

Test(unique_random, tril_and_triu_indices_match_torch)
{
    tj_tensor *l = tj_tril_indices(3, 4, 1, TJ_DTYPE_NONE);
    test_assert_dtype_shape(l, TJ_INT64, 2, (const int64_t[]){2, 9});
    test_expect_i64(l, 18, (const int64_t[]){0, 0, 1, 1, 1, 2, 2, 2, 2, 0, 1, 0, 1, 2, 0, 1, 2, 3});
    tj_tensor *u = tj_triu_indices(3, 3, -1, TJ_INT64);
    test_expect_i64(u, 16, (const int64_t[]){0, 0, 0, 1, 1, 1, 2, 2, 0, 1, 2, 0, 1, 2, 1, 2});
    test_assert_dtype_shape(tj_tril_indices(0, 4, 0, TJ_DTYPE_NONE), TJ_INT64, 2, (const int64_t[]){2, 0});
    test_expect_error(tj_tril_indices(-1, 4, 0, TJ_DTYPE_NONE), TJ_ERR_INVALID_ARGUMENT, "aten::tril_indices",
                      "row must be non-negative, got -1");
    test_expect_error(tj_triu_indices(2, 4, 0, TJ_FLOAT32), TJ_ERR_DTYPE, "aten::triu_indices",
                      "\"triu_indices\" not implemented for 'float32'");
}

static tj_status trilu_wide(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n, (void)in;
    out[0] = tj_tril_indices(37, 50, -5, TJ_DTYPE_NONE);
    out[1] = tj_triu_indices(50, 37, 13, TJ_DTYPE_NONE);
    *n_out = 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

/* The core table records torch._refs' float64-root decompositions: the
 * same indices as the kernel's loops, bit for bit */
Test(unique_random, trilu_indices_decompose_exactly)
{
    tj_tensor *x = tj_zeros((const int64_t[]){1}, 1, TJ_FLOAT32);
    test_expect_traced(trilu_wide, &x, 1, 2, (const char *[]){"aten.tril_indices.default", "aten.triu_indices.default"},
                       2, NULL, 0);
}

/* ---- argsort ---- */

static tj_status argsort_rows(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_argsort(in[0], -1, true);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* argsort is sort's indices, and traces as sort (implicit) */
Test(unique_random, argsort_is_sort_indices)
{
    tj_tensor *x = test_f32(2, (const int64_t[]){2, 4}, (const float[]){3, 1, 2, 1, NAN, -1, 0, -1});
    test_expect_i64(tj_argsort(x, -1, false), 8, (const int64_t[]){1, 3, 2, 0, 1, 3, 2, 0});
    test_expect_traced(argsort_rows, &x, 1, 1, (const char *[]){"aten.sort.default"}, 1, "argsort", 0);
}

/* ---- random ---- */

/* Pearson's chi-square of counts against expected ones. */
static double chi_square(const int64_t *count, const double *expected, int k)
{
    double s = 0;
    for (int i = 0; i < k; i++) s += (count[i] - expected[i]) * (count[i] - expected[i]) / expected[i];
    return s;
}

/* 0.999999 quantiles of chi-square: a correct sampler fails once in a
 * million seeds (the seeds are fixed, so never) */
#define CHI2_DF3 30.7
#define CHI2_DF4 33.4
#define CHI2_DF9 42.9

Test(unique_random, randint_is_uniform_and_seeded)
{
    enum { N = 100000 };
    tj_manual_seed(2024);
    tj_tensor *r = tj_randint_low(-3, 7, (const int64_t[]){N}, 1, TJ_DTYPE_NONE);
    test_assert_dtype_shape(r, TJ_INT64, 1, (const int64_t[]){N});
    const int64_t *v = tj_tensor_data(r);
    int64_t count[10] = {0};
    double mean = 0, m2 = 0;
    for (int i = 0; i < N; i++) {
        cr_assert(v[i] >= -3 && v[i] < 7, "value %lld out of [-3, 7)", (long long)v[i]);
        count[v[i] + 3]++;
        mean += v[i];
    }
    mean /= N;
    for (int i = 0; i < N; i++) m2 += (v[i] - 1.5) * (v[i] - 1.5);
    /* mean 1.5 (standard error sqrt(8.25 / N) = 0.009), variance (10^2 - 1) / 12
     * = 8.25 (standard error sqrt(52.8 / N) = 0.023) */
    cr_expect(fabs(mean - 1.5) < 0.05, "mean %g", mean);
    cr_expect(fabs(m2 / N - 8.25) < 0.12, "variance %g", m2 / N);
    double e[10];
    for (int i = 0; i < 10; i++) e[i] = N / 10.0;
    cr_expect(chi_square(count, e, 10) < CHI2_DF9, "chi-square %g", chi_square(count, e, 10));
    /* the same seed, the same numbers; tj_randint is randint.low from 0 */
    tj_manual_seed(2024);
    test_expect_same_bits(tj_randint_low(-3, 7, (const int64_t[]){N}, 1, TJ_DTYPE_NONE), r, "reseeded");
    tj_manual_seed(5);
    tj_tensor *a = tj_randint(9, (const int64_t[]){3, 4}, 2, TJ_FLOAT64);
    tj_manual_seed(5);
    test_expect_same(a, tj_randint_low(0, 9, (const int64_t[]){3, 4}, 2, TJ_FLOAT64), "randint vs randint.low");
    tj_tensor *b = tj_randint_like(tj_zeros((const int64_t[]){6}, 1, TJ_BOOL), 0, 2, TJ_DTYPE_NONE);
    test_assert_dtype_shape(b, TJ_BOOL, 1, (const int64_t[]){6});
    test_expect_error(tj_randint_low(3, 3, (const int64_t[]){2}, 1, TJ_DTYPE_NONE), TJ_ERR_INVALID_ARGUMENT,
                      "aten::randint.low", "random_ expects 'from' to be less than 'to', but got from=3 >= to=3");
    test_expect_error(tj_randint_low(0, 3, (const int64_t[]){2}, 1, TJ_BOOL), TJ_ERR_INVALID_ARGUMENT,
                      "aten::randint.low", "to - 1 is out of bounds for bool");
}

Test(unique_random, randperm_is_a_uniform_permutation)
{
    enum { CALLS = 20000, N = 5 };
    tj_manual_seed(77);
    int64_t first[N] = {0};
    for (int k = 0; k < CALLS; k++) {
        tj_tensor *p = tj_randperm(N, TJ_DTYPE_NONE);
        const int64_t *v = tj_tensor_data(p);
        bool seen[N] = {false};
        for (int i = 0; i < N; i++) {
            cr_assert(v[i] >= 0 && v[i] < N && !seen[v[i]], "not a permutation");
            seen[v[i]] = true;
        }
        first[v[0]]++;
    }
    double e[N];
    for (int i = 0; i < N; i++) e[i] = CALLS / (double)N;
    cr_expect(chi_square(first, e, N) < CHI2_DF4, "chi-square %g", chi_square(first, e, N));
    tj_tensor *f = tj_randperm(1000, TJ_FLOAT32), *idx;
    cr_assert_eq(tj_sort(f, 0, false, &idx, NULL), TJ_OK);
    test_expect_same(idx, tj_arange(tj_v_int(0), tj_v_int(1000), tj_v_int(1), TJ_FLOAT32), "sorted permutation");
    test_expect_error(tj_randperm(3, TJ_BOOL), TJ_ERR_DTYPE, "aten::randperm", "\"randperm\" not implemented for 'Bool'");
    test_expect_error(tj_randperm(-1, TJ_DTYPE_NONE), TJ_ERR_SHAPE, "aten::randperm", "negative dimension -1");
}

Test(unique_random, multinomial_with_replacement_follows_the_weights)
{
    enum { N = 100000 };
    tj_manual_seed(3);
    tj_tensor *p = vec_f32(5, (const float[]){1, 2, 3, 4, 0});
    tj_tensor *s = tj_multinomial(p, N, true);
    test_assert_dtype_shape(s, TJ_INT64, 1, (const int64_t[]){N});
    const int64_t *v = tj_tensor_data(s);
    int64_t count[5] = {0};
    for (int i = 0; i < N; i++) count[v[i]]++;
    cr_expect_eq(count[4], 0, "a zero weight is never drawn");
    const double e[4] = {0.1 * N, 0.2 * N, 0.3 * N, 0.4 * N};
    cr_expect(chi_square(count, e, 4) < CHI2_DF3, "chi-square %g", chi_square(count, e, 4));
}

Test(unique_random, multinomial_without_replacement_draws_distinct_categories)
{
    enum { ROWS = 20000 };
    tj_manual_seed(4);
    tj_tensor *row = tj_view(vec_f32(4, (const float[]){1, 2, 3, 4}), (const int64_t[]){1, 4}, 2);
    tj_tensor *p = tj_expand(row, (const int64_t[]){ROWS, 4}, 2);
    tj_tensor *s = tj_multinomial(p, 2, false);
    test_assert_dtype_shape(s, TJ_INT64, 2, (const int64_t[]){ROWS, 2});
    const int64_t *v = tj_tensor_data(s);
    int64_t first[4] = {0};
    for (int r = 0; r < ROWS; r++) {
        cr_assert_neq(v[2 * r], v[2 * r + 1], "row %d draws a category twice", r);
        first[v[2 * r]]++;
    }
    const double e[4] = {0.1 * ROWS, 0.2 * ROWS, 0.3 * ROWS, 0.4 * ROWS};
    cr_expect(chi_square(first, e, 4) < CHI2_DF3, "chi-square %g", chi_square(first, e, 4));
    /* zero weights come last, in index order */
    tj_tensor *z = tj_multinomial(vec_f32(4, (const float[]){0, 1, 0, 2}), 4, false);
    const int64_t *zv = tj_tensor_data(z);
    cr_expect((zv[0] == 1 && zv[1] == 3) || (zv[0] == 3 && zv[1] == 1));
    cr_expect(zv[2] == 0 && zv[3] == 2);
}

Test(unique_random, multinomial_errors_as_torch)
{
    test_expect_error(tj_multinomial(vec_f32(2, (const float[]){1, 2}), 3, false), TJ_ERR_INVALID_ARGUMENT,
                      "aten::multinomial", "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
    test_expect_error(tj_multinomial(vec_f32(2, (const float[]){1, -2}), 1, false), TJ_ERR_INVALID_ARGUMENT,
                      "aten::multinomial", "probability tensor contains either `inf`, `nan` or element < 0");
    test_expect_error(tj_multinomial(vec_f32(2, (const float[]){0, 0}), 1, true), TJ_ERR_INVALID_ARGUMENT,
                      "aten::multinomial", "invalid multinomial distribution (sum of probabilities <= 0)");
    test_expect_error(tj_multinomial(vec_f32(2, (const float[]){1, 2}), 0, true), TJ_ERR_INVALID_ARGUMENT,
                      "aten::multinomial", "cannot sample n_sample <= 0 samples");
    test_expect_error(tj_multinomial(tj_ones((const int64_t[]){1, 1, 2}, 3, TJ_FLOAT32), 1, true), TJ_ERR_SHAPE,
                      "aten::multinomial", "prob_dist must be 1 or 2 dim");
    test_expect_error(tj_multinomial(vec_i64(2, (const int64_t[]){1, 2}), 1, true), TJ_ERR_DTYPE, "aten::multinomial",
                      "multinomial only supports floating-point dtypes for input, got: int64");
}

static tj_status draw_all(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_randint(7, (const int64_t[]){3, 4}, 2, TJ_DTYPE_NONE);
    out[1] = tj_randperm(9, TJ_DTYPE_NONE);
    out[2] = tj_multinomial(in[0], 6, true);
    out[3] = tj_add(tj_randint_like(in[0], -2, 2, TJ_DTYPE_NONE), in[0]);
    *n_out = 4;
    for (int k = 0; k < 4; k++)
        if (!out[k]) return tj_last_status();
    return TJ_OK;
}

/* The random operators trace in fake mode; under one seed the plan (and the
 * core-decomposed graph, where randint is randint.low) draws eager's
 * numbers. */
Test(unique_random, random_graphs_replay_eager_draws)
{
    tj_tensor *w = tj_view(vec_f32(6, (const float[]){1, 0, 2, 3, 1, 1}), (const int64_t[]){2, 3}, 2), *eager[4], *got[4];
    int n_out;
    tj_manual_seed(31);
    cr_assert_eq(draw_all(NULL, &w, 1, eager, &n_out), TJ_OK, "%s", tj_last_error());
    for (int core = 0; core < 2; core++) {
        tj_decomp_table *t = core ? tj_core_decompositions() : NULL;
        tj_graph *g = tj_make_fx(draw_all, NULL, &w, 1, t, TJ_TRACE_FAKE);
        tj_decomp_table_free(t);
        cr_assert_not_null(g, "%s", tj_last_error());
        /* the core table records randint and randint_like as randint.low */
        cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::randint.low")), core ? 2 : 0);
        cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::randint")), core ? 0 : 1);
        tj_plan *p = tj_compile(g, NULL);
        cr_assert_not_null(p, "%s", tj_last_error());
        tj_manual_seed(31);
        cr_assert_eq(tj_plan_run(p, &w, 1, got), TJ_OK, "%s", tj_last_error());
        for (int k = 0; k < 4; k++) test_expect_same_bits(got[k], eager[k], "plan vs eager");
        tj_plan_free(p);
        tj_graph_free(g);
    }
}
