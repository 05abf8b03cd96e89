/* aten::mean (.default), max / min (.default), min.dim, argmin and
 * std.correction: values, dtypes and shapes, empty and 0-dim inputs, nan
 * propagation, ties (first index), negative dims, int64 input, long rows of
 * every instruction set against a naive loop, gradients, make_fx recording,
 * decomposed graphs and replayed plans against eager, and the error paths.
 * Reference values marked "torch" were printed by PyTorch 1.13
 * (/usr/bin/python3) for the same inputs; the others are exact by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "runtime/internal.h"
#include "test_util.h"

TestSuite(reduce_full, .init = test_scope_open, .fini = test_scope_close_isa);

/* [3, 4], with a tie for the smallest value in the last row and for the
 * largest across rows */
static const float X34[12] = {0.5f, -1.25f, 3.0f, 2.0f, 1.5f, 3.0f, -0.75f, 0.25f, 3.0f, -2.0f, 0.125f, -2.0f};
static tj_tensor *x34(void) { return test_f32(2, (int64_t[]){3, 4}, X34); }

static void expect(const tj_tensor *t, tj_dtype dtype, int ndim, const int64_t *shape, const double *want, double tol)
{
    int64_t n = test_assert_dtype_shape(t, dtype, ndim, shape);
    test_expect_close(t, want, n, tol, 0);
}

static void expect_error(const void *r, tj_status status, const char *needle)
{
    cr_assert_null(r);
    cr_assert_eq(tj_last_status(), status, "status %s: %s", tj_status_name(tj_last_status()), tj_last_error());
    cr_assert(strstr(tj_last_error(), needle), "message '%s' lacks '%s'", tj_last_error(), needle);
}

/* ---- values ---- */

Test(reduce_full, mean_max_min_of_every_element)
{
    tj_tensor *x = x34();
    tj_tensor *m = tj_mean(x, -1);
    expect(m, TJ_FLOAT32, 0, NULL, (double[]){0.6145833134651184}, 0); /* torch */
    cr_assert_eq(test_bits_f32(*(float *)tj_tensor_data(m)), 0x3f1d5555u); /* torch's bits */
    expect(tj_mean(x, TJ_FLOAT64), TJ_FLOAT64, 0, NULL, (double[]){0.6145833333333334}, 1e-16); /* torch */
    expect(tj_max(x), TJ_FLOAT32, 0, NULL, (double[]){3}, 0);
    expect(tj_min(x), TJ_FLOAT32, 0, NULL, (double[]){-2}, 0);
    /* int64 in, int64 out; mean needs a float dtype */
    tj_tensor *i = test_i64(2, (int64_t[]){2, 3}, (int64_t[]){4, -7, 9, -7, 2, 9});
    expect(tj_max(i), TJ_INT64, 0, NULL, (double[]){9}, 0);
    expect(tj_min(i), TJ_INT64, 0, NULL, (double[]){-7}, 0);
    expect(tj_mean(i, TJ_FLOAT64), TJ_FLOAT64, 0, NULL, (double[]){10.0 / 6}, 1e-16);
    expect_error(tj_mean(i, -1), TJ_ERR_DTYPE, "aten::mean: could not infer output dtype. Input dtype");
    expect_error(tj_mean(x, TJ_INT64), TJ_ERR_DTYPE, "Optional dtype must be either a floating point");
    /* 0-dim */
    tj_tensor *s = test_f32(0, NULL, (float[]){2.5f});
    expect(tj_mean(s, -1), TJ_FLOAT32, 0, NULL, (double[]){2.5}, 0);
    expect(tj_max(s), TJ_FLOAT32, 0, NULL, (double[]){2.5}, 0);
    expect(tj_min(s), TJ_FLOAT32, 0, NULL, (double[]){2.5}, 0);
}

Test(reduce_full, empty_mean_is_nan_and_empty_max_min_are_errors)
{
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){0, 3});
    expect(tj_mean(e, -1), TJ_FLOAT32, 0, NULL, (double[]){NAN}, 0); /* torch: nan */
    expect_error(tj_max(e), TJ_ERR_SHAPE, "aten::max: Expected reduction dim to be specified for input.numel() == 0");
    expect_error(tj_min(e), TJ_ERR_SHAPE, "aten::min: Expected reduction dim to be specified");
    expect_error(tj_argmin(e, false, 0, false), TJ_ERR_SHAPE, "aten::argmin: Expected reduction dim to be specified");
    tj_tensor *v, *ix;
    cr_assert_eq(tj_min_dim(e, 0, false, &v, &ix), TJ_ERR_SHAPE);
    cr_assert(strstr(tj_last_error(), "aten::min.dim: Expected reduction dim 0 to have non-zero size (input shape [0, 3])"),
              "%s", tj_last_error());
    cr_assert_null(v);
    /* reducing the non-empty dim of an empty tensor is fine: no outputs */
    cr_assert_eq(tj_min_dim(e, 1, false, &v, &ix), TJ_OK, "%s", tj_last_error());
    expect(ix, TJ_INT64, 1, (int64_t[]){0}, NULL, 0);
    expect(tj_argmin(e, true, 1, false), TJ_INT64, 1, (int64_t[]){0}, NULL, 0);
}

Test(reduce_full, nan_propagates_and_argmin_takes_the_first_nan)
{
    tj_tensor *n = test_f32(2, (int64_t[]){3, 3}, (float[]){1, NAN, 0, NAN, -1, NAN, 2, 2, -5});
    expect(tj_max(n), TJ_FLOAT32, 0, NULL, (double[]){NAN}, 0);
    expect(tj_min(n), TJ_FLOAT32, 0, NULL, (double[]){NAN}, 0);
    expect(tj_argmin(n, false, 0, false), TJ_INT64, 0, NULL, (double[]){1}, 0);              /* torch */
    expect(tj_argmin(n, true, 1, false), TJ_INT64, 1, (int64_t[]){3}, (double[]){1, 0, 2}, 0); /* torch */
    tj_tensor *v, *ix;
    cr_assert_eq(tj_min_dim(n, 1, false, &v, &ix), TJ_OK, "%s", tj_last_error());
    expect(v, TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){NAN, NAN, -5}, 0); /* torch */
    expect(ix, TJ_INT64, 1, (int64_t[]){3}, (double[]){1, 0, 2}, 0);
}

Test(reduce_full, min_dim_and_argmin_ties_negative_dims_keepdim_int64)
{
    tj_tensor *x = x34(), *v, *ix;
    cr_assert_eq(tj_min_dim(x, 1, false, &v, &ix), TJ_OK, "%s", tj_last_error());
    expect(v, TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){-1.25, -0.75, -2}, 0); /* torch */
    expect(ix, TJ_INT64, 1, (int64_t[]){3}, (double[]){1, 2, 1}, 0);          /* torch: the first -2 */
    cr_assert_eq(tj_min_dim(x, -2, true, &v, &ix), TJ_OK, "%s", tj_last_error());
    expect(v, TJ_FLOAT32, 2, (int64_t[]){1, 4}, (double[]){0.5, -2, -0.75, -2}, 0); /* torch */
    expect(ix, TJ_INT64, 2, (int64_t[]){1, 4}, (double[]){0, 2, 1, 2}, 0);
    expect(tj_argmin(x, false, 0, false), TJ_INT64, 0, NULL, (double[]){9}, 0); /* torch */
    expect(tj_argmin(x, true, 0, false), TJ_INT64, 1, (int64_t[]){4}, (double[]){0, 2, 1, 2}, 0);
    expect(tj_argmin(x, true, -1, true), TJ_INT64, 2, (int64_t[]){3, 1}, (double[]){1, 2, 1}, 0);
    /* strided runs (x^T flattened: four runs of three): the tie across runs
     * keeps the earlier one */
    expect(tj_argmin(tj_t(x), false, 0, false), TJ_INT64, 0, NULL, (double[]){5}, 0); /* torch */
    /* the values pointer may be left out */
    cr_assert_eq(tj_min_dim(x, 0, false, NULL, &ix), TJ_OK);
    expect(ix, TJ_INT64, 1, (int64_t[]){4}, (double[]){0, 2, 1, 2}, 0);
    tj_tensor *i = test_i64(2, (int64_t[]){2, 3}, (int64_t[]){4, -7, 9, -7, 2, 9});
    cr_assert_eq(tj_min_dim(i, 1, false, &v, &ix), TJ_OK);
    expect(v, TJ_INT64, 1, (int64_t[]){2}, (double[]){-7, -7}, 0); /* torch */
    expect(ix, TJ_INT64, 1, (int64_t[]){2}, (double[]){1, 0}, 0);
    expect(tj_argmin(i, false, 0, false), TJ_INT64, 0, NULL, (double[]){1}, 0);                /* torch */
    expect(tj_argmin(i, true, 0, false), TJ_INT64, 1, (int64_t[]){3}, (double[]){1, 0, 0}, 0); /* torch */
    /* 0-dim: dim 0 and -1 name the only "dim" */
    tj_tensor *s = test_i64(0, NULL, (int64_t[]){-3});
    expect(tj_argmin(s, true, -1, false), TJ_INT64, 0, NULL, (double[]){0}, 0);
    cr_assert_eq(tj_min_dim(s, 0, false, &v, &ix), TJ_OK);
    expect(v, TJ_INT64, 0, NULL, (double[]){-3}, 0);
}

Test(reduce_full, bad_dims_and_dtypes_are_errors_naming_the_op)
{
    tj_tensor *x = x34(), *v = NULL, *ix = NULL;
    expect_error(tj_argmin(x, true, 2, false), TJ_ERR_INDEX,
                 "aten::argmin: dim 2 is out of range for a tensor of rank 2 (expected -2..1)");
    cr_assert_eq(tj_min_dim(x, -3, false, &v, &ix), TJ_ERR_INDEX);
    cr_assert(strstr(tj_last_error(), "aten::min.dim: dim -3 is out of range"), "%s", tj_last_error());
    cr_assert_null(ix);
    expect_error(tj_std(x, (int64_t[]){5}, 1, -1, false), TJ_ERR_INDEX, "aten::std.correction");
    tj_tensor *b = tj_tensor_from_data(TJ_BOOL, 1, (int64_t[]){2}, (uint8_t[]){1, 0});
    expect_error(tj_argmin(b, false, 0, false), TJ_ERR_DTYPE, "aten::argmin: not implemented for 'bool'");
    tj_tensor *i = test_i64(1, (int64_t[]){2}, (int64_t[]){1, 2});
    expect_error(tj_std(i, NULL, 0, -1, false), TJ_ERR_DTYPE, "aten::std.correction: std and var only support floating");
}

Test(reduce_full, std_values_match_torch)
{
    tj_tensor *x = x34();
    /* torch's float32 bits: the square root is taken before rounding */
    tj_tensor *s = tj_std(x, (int64_t[]){1}, 1, -1, false);
    test_assert_dtype_shape(s, TJ_FLOAT32, 1, (int64_t[]){3});
    const uint32_t want[3] = {0x3fed2375u, 0x3fcf623au, 0x40178f8fu};
    for (int k = 0; k < 3; k++) cr_expect_eq(test_bits_f32(((float *)tj_tensor_data(s))[k]), want[k], "[%d]", k);
    expect(tj_std(x, NULL, 0, 0, true), TJ_FLOAT32, 2, (int64_t[]){1, 1}, (double[]){1.8067137002944946}, 1e-7);
    expect(tj_std(x, (int64_t[]){0}, 1, 2, false), TJ_FLOAT32, 1, (int64_t[]){4},
           (double[]){1.7795130014419556, 3.8133537769317627, 2.7745120525360107, 2.8357832431793213}, 1e-7);
    tj_tensor *off = test_f32(1, (int64_t[]){4}, (float[]){10000.5f, 10001, 10000, 10001.5f});
    expect(tj_std(off, NULL, 0, -1, false), TJ_FLOAT32, 0, NULL, (double[]){0.64549720287323}, 1e-7); /* torch */
    /* correction >= N: divisor max(0, N - correction) = 0; empty: nan */
    tj_tensor *one = test_f32(0, NULL, (float[]){7});
    expect(tj_std(one, NULL, 0, -1, false), TJ_FLOAT32, 0, NULL, (double[]){NAN}, 0); /* torch */
    expect(tj_std(one, NULL, 0, 0, false), TJ_FLOAT32, 0, NULL, (double[]){0}, 0);    /* torch */
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){0, 3});
    expect(tj_std(e, (int64_t[]){0}, 1, -1, false), TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){NAN, NAN, NAN}, 0);
}

/* ---- long rows and columns: every instruction set, against a naive loop ---- */

/* first index of the smallest value of n elements `s` apart (nan smallest) */
static int64_t naive_argmin(const float *x, int64_t n, int64_t s)
{
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++) {
        float v = x[i * s], b = x[best * s];
        if (isnan(b)) break;
        if (isnan(v) || v < b) best = i;
    }
    return best;
}

Test(reduce_full, long_rows_and_columns_match_a_naive_loop_on_every_isa)
{
    enum { R = 5, C = 40009 };
    float *d = malloc(sizeof(float) * R * C);
    cr_assert_not_null(d);
    srand(7);
    for (int64_t i = 0; i < (int64_t)R * C; i++) d[i] = (float)(rand() % 2001 - 1000) / 8;
    /* row 1: a tie for the minimum far apart (across the 16384 chunks);
     * row 2: a late nan; row 3: a late minimum; row 4: signed zeros only */
    d[1 * C + 20000] = -500;
    d[1 * C + 39000] = -500;
    d[2 * C + 40000] = NAN;
    d[3 * C + 40008] = -1000;
    for (int64_t j = 0; j < C; j++) d[4 * C + j] = j % 3 ? 0.0f : -0.0f;
    tj_tensor *x = test_f32(2, (int64_t[]){R, C}, d);
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        tj_tensor *am = tj_argmin(x, true, 1, false), *v, *ix;
        cr_assert_not_null(am, "%s", tj_last_error());
        for (int r = 0; r < R; r++)
            cr_expect_eq(((int64_t *)tj_tensor_data(am))[r], naive_argmin(d + (int64_t)r * C, C, 1), "%s row %d",
                         test_isas[k], r);
        /* the columns of the transpose: the row strategy */
        cr_assert_eq(tj_min_dim(tj_t(x), 0, false, &v, &ix), TJ_OK, "%s", tj_last_error());
        for (int r = 0; r < R; r++) {
            int64_t want = naive_argmin(d + (int64_t)r * C, C, 1);
            cr_expect_eq(((int64_t *)tj_tensor_data(ix))[r], want, "%s column %d", test_isas[k], r);
            float got = ((float *)tj_tensor_data(v))[r], wv = d[(int64_t)r * C + want];
            cr_expect(isnan(wv) ? isnan(got) : got == wv, "%s column %d value %g", test_isas[k], r, got);
        }
        /* along dim 0 (columns of x: strided folds) */
        tj_tensor *a0 = tj_argmin(x, true, 0, false);
        for (int64_t j = 0; j < C; j++) {
            int64_t want = naive_argmin(d + j, R, C);
            cr_expect_eq(((int64_t *)tj_tensor_data(a0))[j], want, "%s dim 0 col %lld", test_isas[k], (long long)j);
        }
        /* full reductions */
        float mn = tj_tensor_item_at(tj_min(tj_slice(x, 0, true, 0, true, 2, 1)), 0);
        cr_expect_eq(mn, -500.0f, "%s", test_isas[k]);
        cr_expect(isnan(tj_tensor_item_at(tj_max(x), 0)), "%s", test_isas[k]);
    }
    free(d);
}

/* ---- gradients (torch) ---- */

static tj_tensor *grad_of(tj_tensor *x, tj_tensor *y, tj_tensor *gy)
{
    cr_assert_not_null(y, "%s", tj_last_error());
    cr_assert_eq(tj_backward(y, gy), TJ_OK, "%s", tj_last_error());
    tj_tensor *g = tj_tensor_grad(x);
    cr_assert_not_null(g);
    return g;
}

static tj_tensor *leaf34(void)
{
    tj_tensor *x = x34();
    tj_tensor_set_requires_grad(x, true);
    return x;
}

Test(reduce_full, max_min_gradients_split_evenly_among_ties_and_nans)
{
    tj_tensor *x = leaf34();
    double third = 1.0 / 3;
    expect(grad_of(x, tj_max(x), NULL), TJ_FLOAT32, 2, (int64_t[]){3, 4},
           (double[]){0, 0, third, 0, 0, third, 0, 0, third, 0, 0, 0}, 1e-7); /* torch */
    x = leaf34();
    expect(grad_of(x, tj_min(x), test_f32(0, NULL, (float[]){6})), TJ_FLOAT32, 2, (int64_t[]){3, 4},
           (double[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 3}, 0); /* torch */
    tj_tensor *n = test_f32(1, (int64_t[]){4}, (float[]){1, NAN, 3, NAN});
    tj_tensor_set_requires_grad(n, true);
    expect(grad_of(n, tj_max(n), NULL), TJ_FLOAT32, 1, (int64_t[]){4}, (double[]){0, 0.5, 0, 0.5}, 0); /* torch */
    n = test_f32(1, (int64_t[]){4}, (float[]){1, NAN, 3, NAN});
    tj_tensor_set_requires_grad(n, true);
    expect(grad_of(n, tj_min(n), NULL), TJ_FLOAT32, 1, (int64_t[]){4}, (double[]){0, 0.5, 0, 0.5}, 0); /* torch */
}

Test(reduce_full, mean_min_dim_and_std_gradients_match_torch)
{
    tj_tensor *x = leaf34();
    double g12[12];
    for (int k = 0; k < 12; k++) g12[k] = 1.0 / 12;
    expect(grad_of(x, tj_mean(x, -1), NULL), TJ_FLOAT32, 2, (int64_t[]){3, 4}, g12, 1e-7); /* torch */
    x = leaf34();
    tj_tensor *v, *ix;
    cr_assert_eq(tj_min_dim(x, 1, false, &v, &ix), TJ_OK);
    expect(grad_of(x, v, test_f32(1, (int64_t[]){3}, (float[]){1, 2, 3})), TJ_FLOAT32, 2, (int64_t[]){3, 4},
           (double[]){0, 1, 0, 0, 0, 0, 2, 0, 0, 3, 0, 0}, 0); /* torch: the first tied -2 only */
    x = leaf34();
    expect(grad_of(x, tj_sum(tj_std(x, (int64_t[]){1}, 1, -1, false), -1), NULL), TJ_FLOAT32, 2, (int64_t[]){3, 4},
           (double[]){-0.10120667517185211, -0.41607189178466797, 0.3486007750034332, 0.16867779195308685,
                      0.10286890715360641, 0.41147562861442566, -0.36004117131233215, -0.15430335700511932,
                      0.45306357741355896, -0.25072452425956726, 0.04838543385267258, -0.25072452425956726},
           1e-6); /* torch */
    /* a constant row: std 0, gradient 0 (not nan) */
    tj_tensor *c = test_f32(2, (int64_t[]){2, 3}, (float[]){1, 1, 1, 1, 2, 3});
    tj_tensor_set_requires_grad(c, true);
    expect(grad_of(c, tj_sum(tj_std(c, (int64_t[]){1}, 1, -1, false), -1), NULL), TJ_FLOAT32, 2, (int64_t[]){2, 3},
           (double[]){0, 0, 0, -0.5, 0, 0.5}, 1e-7); /* torch */
}

/* ---- tracing, decomposition, replay ---- */

/* out: mean, max, min, min.dim(1) values and indices, argmin(0), std(1),
 * argmin of the flattened input */
static tj_status fn_all(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0];
    out[0] = tj_mean(x, -1);
    out[1] = tj_max(x);
    out[2] = tj_min(x);
    tj_status st = tj_min_dim(x, 1, false, &out[3], &out[4]);
    if (st != TJ_OK) return st;
    out[5] = tj_argmin(x, true, 0, true);
    out[6] = tj_std(x, (int64_t[]){1}, 1, -1, false);
    out[7] = tj_argmin(x, false, 0, false);
    *n_out = 8;
    for (int k = 0; k < 8; k++)
        if (!out[k]) return tj_last_status();
    return TJ_OK;
}

static const char *const NAMES[] = {"aten::mean", "aten::max", "aten::min", "aten::min.dim", "aten::argmin",
                                    "aten::std.correction"};

static void expect_same_bits(const tj_tensor *a, const tj_tensor *b, const char *what, int k)
{
    cr_assert_eq(tj_tensor_dtype(a), tj_tensor_dtype(b), "%s %d", what, k);
    cr_assert_eq(tj_tensor_numel(a), tj_tensor_numel(b), "%s %d", what, k);
    size_t nb = (size_t)tj_tensor_numel(a) * tj_dtype_size(tj_tensor_dtype(a));
    cr_assert(!memcmp(tj_tensor_data(a), tj_tensor_data(b), nb), "%s output %d differs", what, k);
}

Test(reduce_full, make_fx_records_the_aten_names_and_replay_gives_eagers_bits)
{
    tj_tensor *x = x34();
    tj_tensor *eager[8];
    int ne;
    cr_assert_eq(fn_all(NULL, &x, 1, eager, &ne), TJ_OK, "%s", tj_last_error());
    tj_graph *g = tj_make_fx(fn_all, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    for (size_t k = 0; k < sizeof NAMES / sizeof *NAMES; k++) {
        const tj_op *op = tj_op_find(NAMES[k]);
        cr_assert_not_null(op, "%s", NAMES[k]);
        cr_expect_geq(tj_graph_count_op(g, op), 1, "%s not recorded", NAMES[k]);
    }
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *got[8];
    for (int run = 0; run < 2; run++) {
        cr_assert_eq(tj_plan_run(p, &x, 1, got), TJ_OK, "%s", tj_last_error());
        for (int k = 0; k < 8; k++) expect_same_bits(got[k], eager[k], "replay", k);
    }
    /* lowered to primitives: the same answers (bits for all but mean and
     * std, which round differently through sum.dim and div) */
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *d = tj_graph_decompose(g, core);
    cr_assert_not_null(d, "%s", tj_last_error());
    cr_assert(test_only_primitives(d));
    for (size_t k = 0; k < sizeof NAMES / sizeof *NAMES; k++)
        cr_expect_eq(tj_graph_count_op(d, tj_op_find(NAMES[k])), 0, "%s left after decomposition", NAMES[k]);
    tj_tensor *dec[8];
    cr_assert_eq(tj_graph_run(d, &x, 1, dec), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < 8; k++) {
        int64_t n = tj_tensor_numel(eager[k]);
        double want[16];
        for (int64_t j = 0; j < n; j++) want[j] = tj_tensor_item_at(eager[k], j);
        cr_assert_eq(tj_tensor_dtype(dec[k]), tj_tensor_dtype(eager[k]), "output %d", k);
        test_expect_close(dec[k], want, n, k == 0 || k == 6 ? 1e-7 : 0, 0);
    }
    tj_plan_free(p);
    tj_graph_free(d);
    tj_graph_free(g);
    tj_decomp_table_free(core);
}

/* out: min, min.dim(1) values and indices, argmin, amin over dim 0 */
static tj_status fn_int_min(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0];
    out[0] = tj_min(x);
    tj_status st = tj_min_dim(x, 1, false, &out[1], &out[2]);
    if (st != TJ_OK) return st;
    out[3] = tj_argmin(x, false, 0, false);
    out[4] = tj_amin(x, (int64_t[]){0}, 1, false);
    *n_out = 5;
    for (int k = 0; k < 5; k++)
        if (!out[k]) return tj_last_status();
    return TJ_OK;
}

/* amin lowers through amax of an order-reversed copy: for int64 that must
 * not be -x, which maps INT64_MIN to itself. */
Test(reduce_full, int64_extremes_keep_their_order_through_the_core_decompositions)
{
    tj_tensor *x = test_i64(2, (int64_t[]){2, 3}, (int64_t[]){5, INT64_MIN, INT64_MAX, -1, INT64_MAX, INT64_MIN + 1});
    const int64_t want[5][3] = {{INT64_MIN}, {INT64_MIN, INT64_MIN + 1}, {1, 2}, {1}, {-1, INT64_MIN, INT64_MIN + 1}};
    const int64_t count[5] = {1, 2, 2, 1, 3};
    tj_graph *g = tj_make_fx(fn_int_min, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *d = tj_graph_decompose(g, core);
    cr_assert_not_null(d, "%s", tj_last_error());
    cr_assert(test_only_primitives(d));
    tj_tensor *eager[5], *dec[5];
    int ne;
    cr_assert_eq(fn_int_min(NULL, &x, 1, eager, &ne), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_graph_run(d, &x, 1, dec), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < 5; k++)
        for (int64_t j = 0; j < count[k]; j++) {
            cr_expect_eq(((const int64_t *)tj_tensor_data(eager[k]))[j], want[k][j], "eager output %d[%ld]", k, (long)j);
            cr_expect_eq(((const int64_t *)tj_tensor_data(dec[k]))[j], want[k][j], "decomposed output %d[%ld]", k,
                         (long)j);
        }
    tj_graph_free(d);
    tj_graph_free(g);
    tj_decomp_table_free(core);
}
