/* aten::sort, sort.stable and topk: PyTorch's order (nan above +inf, -0
 * equal to +0, ties in input order in both directions), every dtype, dims
 * and strided inputs, long rows (the radix path) against a naive stable
 * sort, gradients, make_fx recording, topk lowered to sort + slice, replay
 * against eager, and the error paths. Values marked "torch" were printed
 * by PyTorch 1.13 (/usr/bin/python3) for the same inputs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(sort, .init = test_scope_open, .fini = test_scope_close);

static const float X34[12] = {0.5f, -1.25f, 3.0f, 2.0f, 1.5f, 3.0f, -0.75f, 0.25f, 3.0f, -2.0f, 0.125f, -2.0f};
static tj_tensor *x34(void) { return test_f32(2, (int64_t[]){3, 4}, X34); }

static void expect(const tj_tensor *t, tj_dtype dtype, int ndim, const int64_t *shape, const double *want)
{
    int64_t n = test_assert_dtype_shape(t, dtype, ndim, shape);
    test_expect_close(t, want, n, 0, 0);
}

static void expect_i64(const tj_tensor *t, int ndim, const int64_t *shape, const int64_t *want)
{
    int64_t n = test_assert_dtype_shape(t, TJ_INT64, ndim, shape);
    for (int64_t k = 0; k < n; k++)
        cr_expect_eq(((const int64_t *)tj_tensor_data(t))[k], want[k], "[%lld]: %lld, want %lld", (long long)k,
                     (long long)((const int64_t *)tj_tensor_data(t))[k], (long long)want[k]);
}

static void sort_ok(tj_tensor *x, int64_t dim, bool descending, tj_tensor **v, tj_tensor **i)
{
    cr_assert_eq(tj_sort(x, dim, descending, v, i), TJ_OK, "%s", tj_last_error());
}

static void topk_ok(tj_tensor *x, int64_t k, int64_t dim, bool largest, tj_tensor **v, tj_tensor **i)
{
    cr_assert_eq(tj_topk(x, k, dim, largest, true, v, i), TJ_OK, "%s", tj_last_error());
}

/* ---- values ---- */

Test(sort, nan_infinities_and_signed_zeros_sort_as_torch)
{
    const float d[9] = {1, NAN, 1, -0.0f, 0, -INFINITY, INFINITY, NAN, -2};
    tj_tensor *x = test_f32(1, (int64_t[]){9}, d), *v, *i;
    sort_ok(x, 0, false, &v, &i);
    expect(v, TJ_FLOAT32, 1, (int64_t[]){9}, (double[]){-INFINITY, -2, 0, 0, 1, 1, INFINITY, NAN, NAN}); /* torch */
    expect_i64(i, 1, (int64_t[]){9}, (int64_t[]){5, 8, 3, 4, 0, 2, 6, 1, 7});                           /* torch */
    cr_expect(signbit(((float *)tj_tensor_data(v))[2]) && !signbit(((float *)tj_tensor_data(v))[3]),
              "-0 (position 3) keeps its place before +0 (position 4)");
    sort_ok(x, -1, true, &v, &i);
    expect(v, TJ_FLOAT32, 1, (int64_t[]){9}, (double[]){NAN, NAN, INFINITY, 1, 1, 0, 0, -2, -INFINITY}); /* torch */
    expect_i64(i, 1, (int64_t[]){9}, (int64_t[]){1, 7, 6, 0, 2, 3, 4, 8, 5});                           /* torch */
    /* float64: the same order */
    tj_tensor *x64 = tj_to_copy(x, TJ_FLOAT64);
    sort_ok(x64, 0, true, &v, &i);
    expect_i64(i, 1, (int64_t[]){9}, (int64_t[]){1, 7, 6, 0, 2, 3, 4, 8, 5});
    cr_expect_eq(tj_tensor_dtype(v), TJ_FLOAT64);
}

Test(sort, dims_strided_input_int64_and_bool_as_torch)
{
    tj_tensor *x = x34(), *v, *i;
    sort_ok(x, 0, false, &v, &i);
    expect(v, TJ_FLOAT32, 2, (int64_t[]){3, 4}, (double[]){0.5, -2, -0.75, -2, 1.5, -1.25, 0.125, 0.25, 3, 3, 3, 2});
    expect_i64(i, 2, (int64_t[]){3, 4}, (int64_t[]){0, 2, 1, 2, 1, 0, 2, 1, 2, 1, 0, 0}); /* torch */
    /* a transposed (non-contiguous) input, descending along its rows */
    sort_ok(tj_t(x), 1, true, &v, &i);
    expect(v, TJ_FLOAT32, 2, (int64_t[]){4, 3}, (double[]){3, 1.5, 0.5, 3, -1.25, -2, 3, 0.125, -0.75, 2, 0.25, -2});
    expect_i64(i, 2, (int64_t[]){4, 3}, (int64_t[]){2, 1, 0, 1, 0, 2, 0, 2, 1, 0, 1, 2}); /* torch */
    /* int64 extremes, descending with a tie */
    tj_tensor *n = test_i64(1, (int64_t[]){5}, (int64_t[]){5, INT64_MIN, INT64_MAX, 5, 0});
    sort_ok(n, 0, true, &v, &i);
    expect_i64(v, 1, (int64_t[]){5}, (int64_t[]){INT64_MAX, 5, 5, 0, INT64_MIN});
    expect_i64(i, 1, (int64_t[]){5}, (int64_t[]){2, 0, 3, 4, 1}); /* torch */
    /* bool */
    tj_tensor *b = tj_to_copy(test_f32(1, (int64_t[]){4}, (float[]){1, 0, 1, 0}), TJ_BOOL);
    sort_ok(b, 0, true, &v, &i);
    cr_assert_eq(tj_tensor_dtype(v), TJ_BOOL);
    const bool *bv = tj_tensor_data(v);
    cr_expect(bv[0] && bv[1] && !bv[2] && !bv[3]);
    expect_i64(i, 1, (int64_t[]){4}, (int64_t[]){0, 2, 1, 3}); /* torch */
    /* 0-dim: itself and index 0; empty: empty results */
    sort_ok(test_f32(0, NULL, (float[]){3}), -1, false, &v, &i);
    expect(v, TJ_FLOAT32, 0, NULL, (double[]){3});
    expect_i64(i, 0, NULL, (int64_t[]){0});
    sort_ok(tj_zeros((int64_t[]){0, 3}, 2, TJ_FLOAT32), 0, false, &v, &i);
    test_assert_dtype_shape(v, TJ_FLOAT32, 2, (int64_t[]){0, 3});
    test_assert_dtype_shape(i, TJ_INT64, 2, (int64_t[]){0, 3});
}

/* A naive stable insertion sort of positions by the same order (nan
 * highest, -0 equal to 0). */
static bool before(float a, float b, bool descending)
{
    if (descending) return isnan(a) ? !isnan(b) : !isnan(b) && a > b;
    return isnan(b) ? !isnan(a) : !isnan(a) && a < b;
}

Test(sort, long_rows_take_the_radix_path_and_stay_stable)
{
    enum { R = 3, C = 5000 };
    float *d = malloc(sizeof(float) * R * C);
    int64_t *want = malloc(sizeof(int64_t) * C);
    cr_assert(d && want);
    srand(11);
    for (int64_t k = 0; k < (int64_t)R * C; k++) d[k] = (float)(rand() % 301 - 150) / 4; /* many ties */
    for (int64_t j = 0; j < C; j += 97) d[C + j] = NAN;
    for (int64_t j = 0; j < C; j++) d[2 * C + j] = j % 2 ? 0.0f : -0.0f;
    d[2 * C + 4321] = -1e-30f;
    tj_tensor *x = test_f32(2, (int64_t[]){R, C}, d);
    for (int desc = 0; desc < 2; desc++) {
        tj_tensor *v, *i;
        /* rows of x, and the same rows as columns of a transposed copy */
        tj_tensor *xt = tj_t(tj_contiguous(tj_t(x)));
        for (int pass = 0; pass < 2; pass++) {
            sort_ok(pass ? xt : x, 1, desc, &v, &i);
            for (int r = 0; r < R; r++) {
                const float *row = d + (int64_t)r * C;
                for (int64_t a = 0; a < C; a++) {
                    int64_t j = a;
                    for (; j > 0 && before(row[a], row[want[j - 1]], desc); j--) want[j] = want[j - 1];
                    want[j] = a;
                }
                const int64_t *got = (const int64_t *)tj_tensor_data(i) + (int64_t)r * C;
                const float *gv = (const float *)tj_tensor_data(v) + (int64_t)r * C;
                int64_t bad = -1;
                for (int64_t a = 0; a < C && bad < 0; a++)
                    if (got[a] != want[a] || memcmp(&gv[a], &row[want[a]], 4)) bad = a;
                cr_expect_eq(bad, -1, "row %d descending %d pass %d: first difference at %lld", r, desc, pass,
                             (long long)bad);
            }
        }
    }
    /* int64 and float64 rows: sorted and a permutation */
    tj_tensor *xi = tj_to_copy(tj_mul_scalar(x, tj_v_int(1000)), TJ_INT64), *xd = tj_to_copy(x, TJ_FLOAT64), *v, *i;
    sort_ok(xi, 1, false, &v, &i);
    const int64_t *iv = tj_tensor_data(v);
    for (int64_t k = 1; k < C; k++) cr_assert_leq(iv[k - 1], iv[k]);
    sort_ok(xd, 1, true, &v, &i);
    const double *dv = tj_tensor_data(v);
    for (int64_t k = 1; k < C; k++) cr_assert_geq(dv[k - 1], dv[k]);
    free(d);
    free(want);
}

Test(sort, topk_is_sorts_first_k)
{
    tj_tensor *x = x34(), *v, *i;
    topk_ok(x, 2, 1, true, &v, &i);
    expect(v, TJ_FLOAT32, 2, (int64_t[]){3, 2}, (double[]){3, 2, 3, 1.5, 3, 0.125}); /* torch */
    expect_i64(i, 2, (int64_t[]){3, 2}, (int64_t[]){2, 3, 1, 0, 0, 2});             /* torch */
    topk_ok(x, 2, 0, false, &v, &i);
    expect(v, TJ_FLOAT32, 2, (int64_t[]){2, 4}, (double[]){0.5, -2, -0.75, -2, 1.5, -1.25, 0.125, 0.25});
    expect_i64(i, 2, (int64_t[]){2, 4}, (int64_t[]){0, 2, 1, 2, 1, 0, 2, 1}); /* torch */
    /* nan counts as the largest */
    tj_tensor *n = test_f32(1, (int64_t[]){9}, (float[]){1, NAN, 1, -0.0f, 0, -INFINITY, INFINITY, NAN, -2});
    topk_ok(n, 4, 0, true, &v, &i);
    expect(v, TJ_FLOAT32, 1, (int64_t[]){4}, (double[]){NAN, NAN, INFINITY, 1}); /* torch */
    expect_i64(i, 1, (int64_t[]){4}, (int64_t[]){1, 7, 6, 0});                  /* torch */
    /* k = 0 and k = size; a 0-dim self is its own top 0 and top 1 (torch) */
    topk_ok(x, 0, -1, true, &v, &i);
    test_assert_dtype_shape(v, TJ_FLOAT32, 2, (int64_t[]){3, 0});
    topk_ok(x, 4, -1, false, &v, &i);
    expect_i64(i, 2, (int64_t[]){3, 4}, (int64_t[]){1, 0, 3, 2, 2, 3, 0, 1, 1, 3, 2, 0});
    for (int k = 0; k < 2; k++) {
        topk_ok(test_f32(0, NULL, (float[]){3}), k, 0, true, &v, &i);
        expect(v, TJ_FLOAT32, 0, NULL, (double[]){3});
        expect_i64(i, 0, NULL, (int64_t[]){0});
    }
}

Test(sort, bad_arguments_are_errors_naming_the_op)
{
    tj_tensor *x = x34(), *v = NULL, *i = NULL;
    cr_expect_eq(tj_topk(x, 5, 1, true, true, &v, &i), TJ_ERR_INDEX);
    cr_expect(strstr(tj_last_error(), "aten::topk: selected index k out of range (k = 5, dim 1 has size 4)"), "%s",
              tj_last_error());
    cr_expect_eq(tj_topk(x, -1, 1, true, true, &v, &i), TJ_ERR_INDEX);
    cr_expect_eq(tj_topk(test_f32(0, NULL, (float[]){3}), 2, 0, true, true, &v, &i), TJ_ERR_INDEX);
    cr_expect_eq(tj_sort(x, 2, false, &v, &i), TJ_ERR_INDEX);
    cr_expect(strstr(tj_last_error(), "aten::sort"), "%s", tj_last_error());
    cr_expect_eq(tj_topk(x, 1, -3, true, true, &v, &i), TJ_ERR_INDEX);
    cr_expect(strstr(tj_last_error(), "aten::topk"), "%s", tj_last_error());
}

static tj_status topk_of_input(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n;
    *n_out = 2;
    return tj_topk(in[0], 2, 0, true, true, &out[0], &out[1]);
}

/* ATen's topk kernel has no bool ("topk_cpu" not implemented for 'Bool'),
 * for any k and empty input too, while sort takes bool; a 0-dim bool never
 * reaches the kernel: topk(tensor(True), 0 or 1) = (True, 0). A dim or k out
 * of range is reported first, as PyTorch. The decomposition refuses too. */
Test(sort, topk_refuses_bool_but_a_0dim_bool_passes)
{
    tj_tensor *b = tj_to_copy(test_f32(1, (int64_t[]){3}, (float[]){1, 0, 1}), TJ_BOOL), *v = NULL, *i = NULL;
    for (int64_t k = 0; k < 3; k++) {
        cr_expect_eq(tj_topk(b, k, 0, true, true, &v, &i), TJ_ERR_DTYPE);
        cr_expect(strstr(tj_last_error(), "aten::topk: \"topk_cpu\" not implemented for 'Bool'"), "%s",
                  tj_last_error());
    }
    cr_expect(strstr(tj_last_error(), "(self bool [3])"), "%s", tj_last_error());
    cr_expect_eq(tj_topk(tj_zeros((int64_t[]){0}, 1, TJ_BOOL), 0, 0, true, true, &v, &i), TJ_ERR_DTYPE);
    cr_expect_eq(tj_topk(b, 5, 0, true, true, &v, &i), TJ_ERR_INDEX);
    cr_expect_eq(tj_topk(b, 1, 3, true, true, &v, &i), TJ_ERR_INDEX);
    tj_decomp_table *core = tj_core_decompositions();
    cr_expect_null(tj_make_fx(topk_of_input, NULL, &b, 1, core, TJ_TRACE_FAKE));
    cr_expect_eq(tj_last_status(), TJ_ERR_DTYPE, "%s", tj_last_error());
    tj_decomp_table_free(core);
    tj_tensor *t = tj_to_copy(test_f32(0, NULL, (float[]){1}), TJ_BOOL);
    for (int64_t k = 0; k < 2; k++) {
        topk_ok(t, k, 0, true, &v, &i);
        test_assert_dtype_shape(v, TJ_BOOL, 0, NULL);
        cr_expect(*(const bool *)tj_tensor_data(v));
        expect_i64(i, 0, NULL, (int64_t[]){0});
    }
}

/* ---- gradients (torch) ---- */

Test(sort, gradients_go_back_to_the_selected_positions)
{
    tj_tensor *x = x34(), *v, *i;
    tj_tensor_set_requires_grad(x, true);
    topk_ok(x, 2, 1, true, &v, &i);
    cr_assert_eq(tj_backward(v, test_f32(2, (int64_t[]){3, 2}, (float[]){1, 2, 3, 4, 5, 6})), TJ_OK, "%s",
                 tj_last_error());
    expect(tj_tensor_grad(x), TJ_FLOAT32, 2, (int64_t[]){3, 4}, (double[]){0, 0, 1, 2, 4, 3, 0, 0, 5, 0, 6, 0});
    x = x34();
    tj_tensor_set_requires_grad(x, true);
    sort_ok(x, 0, true, &v, &i);
    float g[12];
    for (int k = 0; k < 12; k++) g[k] = (float)k;
    cr_assert_eq(tj_backward(v, test_f32(2, (int64_t[]){3, 4}, g)), TJ_OK, "%s", tj_last_error());
    expect(tj_tensor_grad(x), TJ_FLOAT32, 2, (int64_t[]){3, 4}, (double[]){8, 5, 2, 3, 4, 1, 10, 7, 0, 9, 6, 11});
}

/* ---- tracing, decomposition, replay ---- */

static tj_status fn_sort_topk(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_status st = tj_sort(in[0], 0, true, &out[0], &out[1]);
    if (st == TJ_OK) st = tj_topk(in[0], 3, -1, false, true, &out[2], &out[3]);
    *n_out = 4;
    return st;
}

static void expect_same_bits(const tj_tensor *a, const tj_tensor *b, const char *what, int k)
{
    cr_assert_eq(tj_tensor_dtype(a), tj_tensor_dtype(b), "%s %d", what, k);
    cr_assert_eq(tj_tensor_numel(a), tj_tensor_numel(b), "%s %d", what, k);
    tj_tensor *ca = tj_contiguous((tj_tensor *)a), *cb = tj_contiguous((tj_tensor *)b);
    size_t nb = (size_t)tj_tensor_numel(a) * tj_dtype_size(tj_tensor_dtype(a));
    cr_assert(!memcmp(tj_tensor_data(ca), tj_tensor_data(cb), nb), "%s output %d differs", what, k);
}

Test(sort, make_fx_records_sort_and_topk_and_the_lowered_graph_and_plan_give_eagers_bits)
{
    tj_tensor *x = test_f32(2, (int64_t[]){3, 4}, (float[]){0.5f, NAN, 3, 2, 1.5f, 3, -0.0f, 0, 3, -2, 0.125f, -2});
    tj_tensor *eager[4];
    int ne;
    cr_assert_eq(fn_sort_topk(NULL, &x, 1, eager, &ne), TJ_OK, "%s", tj_last_error());
    tj_graph *g = tj_make_fx(fn_sort_topk, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    const tj_op *sort = tj_op_find("aten::sort"), *topk = tj_op_find("aten::topk");
    cr_assert(sort && topk);
    cr_expect_eq(tj_graph_count_op(g, sort), 1);
    cr_expect_eq(tj_graph_count_op(g, topk), 1);
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *got[4];
    for (int run = 0; run < 2; run++) {
        cr_assert_eq(tj_plan_run(p, &x, 1, got), TJ_OK, "%s", tj_last_error());
        for (int k = 0; k < 4; k++) expect_same_bits(got[k], eager[k], "replay", k);
    }
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *d = tj_graph_decompose(g, core);
    cr_assert_not_null(d, "%s", tj_last_error());
    cr_expect(test_only_primitives(d));
    cr_expect_eq(tj_graph_count_op(d, topk), 0);
    cr_expect_eq(tj_graph_count_op(d, sort), 2);
    tj_tensor *dec[4];
    cr_assert_eq(tj_graph_run(d, &x, 1, dec), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < 4; k++) expect_same_bits(dec[k], eager[k], "decomposed", k);
    tj_plan_free(p);
    tj_decomp_table_free(core);
    tj_graph_free(g);
    tj_graph_free(d);
}
