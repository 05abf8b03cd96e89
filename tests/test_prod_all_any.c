/* aten::prod (.default, .dim_int), all / any (.default, .dim) and cumprod:
 * values, dtypes and shapes, empty and 0-dim inputs, nan and infinities,
 * strided inputs, long rows and columns on every instruction set and thread
 * count against naive loops, prod's gradient with no, one and several
 * zeros (eager, and the safe formula a trace records), make_fx in real and
 * fake mode, the decomposition of all / any, plan replay, and the error
 * paths. Reference values marked "torch" were printed by PyTorch 1.13
 * (/usr/bin/python3) for the same inputs, e.g. torch.tensor(X34).prod(1) or
 * torch.autograd.grad(x.prod(1), x, gy); the others are exact by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "runtime/internal.h"
#include "test_util.h"

TestSuite(prodany, .init = test_scope_open, .fini = test_scope_close_isa);

/* [3, 4] of binary fractions with few bits: every product of them is
 * exact in float32, so the results do not depend on the order of the
 * multiplications */
static const float X34[12] = {0.5f, -1.25f, 3.0f, 2.0f, 1.5f, 3.0f, -0.75f, 0.25f, 3.0f, -2.0f, 0.125f, -2.0f};
static tj_tensor *x34(void) { return test_f32(2, (int64_t[]){3, 4}, X34); }

static void expect(const tj_tensor *t, tj_dtype dtype, int ndim, const int64_t *shape, const double *want, double tol)
{
    int64_t n = test_assert_dtype_shape(t, dtype, ndim, shape);
    test_expect_close(t, want, n, tol, 0);
}

/* int64 results compared as int64 (some do not fit a double) */
static void expect_i64(const tj_tensor *t, int ndim, const int64_t *shape, const int64_t *want)
{
    int64_t n = test_assert_dtype_shape(t, TJ_INT64, ndim, shape);
    const int64_t *p = tj_tensor_data(t);
    for (int64_t i = 0; i < n; i++)
        cr_expect_eq(p[i], want[i], "[%lld]: %lld, want %lld", (long long)i, (long long)p[i], (long long)want[i]);
}

static void expect_bool(const tj_tensor *t, int ndim, const int64_t *shape, const uint8_t *want)
{
    int64_t n = test_assert_dtype_shape(t, TJ_BOOL, ndim, shape);
    const uint8_t *p = tj_tensor_data(t);
    for (int64_t i = 0; i < n; i++) cr_expect_eq(p[i], want[i], "[%lld]: %d, want %d", (long long)i, p[i], want[i]);
}

static tj_tensor *bools(int ndim, const int64_t *shape, const uint8_t *data)
{
    return test_tensor(TJ_BOOL, ndim, shape, data);
}

/* ---- prod: values ---- */

Test(prodany, prod_values_dtypes_and_shapes_match_torch)
{
    tj_tensor *x = x34();
    expect(tj_prod(x, -1), TJ_FLOAT32, 0, NULL, (double[]){4.74609375}, 0); /* torch */
    const double p0[4] = {2.25, 7.5, -0.28125, -1}, p1[3] = {-3.75, -0.84375, 1.5}; /* torch */
    expect(tj_prod_dim(x, 0, false, -1), TJ_FLOAT32, 1, (int64_t[]){4}, p0, 0);
    expect(tj_prod_dim(x, 1, true, -1), TJ_FLOAT32, 2, (int64_t[]){3, 1}, p1, 0);
    expect(tj_prod_dim(x, -1, false, -1), TJ_FLOAT32, 1, (int64_t[]){3}, p1, 0);
    /* strided runs, every other column, a broadcast (stride 0) dim */
    expect(tj_prod_dim(tj_t(x), 1, false, -1), TJ_FLOAT32, 1, (int64_t[]){4}, p0, 0);
    expect(tj_prod_dim(tj_slice(x, 1, true, 0, false, 0, 2), 1, false, -1), TJ_FLOAT32, 1, (int64_t[]){3},
           (double[]){1.5, -1.125, 0.375}, 0); /* torch */
    tj_tensor *row = test_f32(1, (int64_t[]){2}, (float[]){1.5f, -2});
    expect(tj_prod_dim(tj_expand(row, (int64_t[]){3, 2}, 2), 0, false, -1), TJ_FLOAT32, 1, (int64_t[]){2},
           (double[]){3.375, -8}, 0); /* torch */
    /* float64, and a float64 result of float32 */
    expect(tj_prod_dim(tj_to_copy(x, TJ_FLOAT64), 1, false, -1), TJ_FLOAT64, 1, (int64_t[]){3}, p1, 0);
    expect(tj_prod_dim(x, 0, false, TJ_FLOAT64), TJ_FLOAT64, 1, (int64_t[]){4}, p0, 0);
    /* int64 and bool give int64; int64 wraps around */
    tj_tensor *i = test_i64(2, (int64_t[]){2, 3}, (int64_t[]){4, -7, 9, -7, 2, 9});
    expect_i64(tj_prod(i, -1), 0, NULL, (int64_t[]){31752});                      /* torch */
    expect_i64(tj_prod_dim(i, 0, false, -1), 1, (int64_t[]){3}, (int64_t[]){-28, -14, 81}); /* torch */
    expect(tj_prod(i, TJ_FLOAT32), TJ_FLOAT32, 0, NULL, (double[]){31752}, 0);
    expect_i64(tj_prod(test_i64(1, (int64_t[]){3}, (int64_t[]){INT64_C(1) << 62, 4, 3}), -1), 0, NULL,
               (int64_t[]){0}); /* torch */
    expect_i64(tj_prod(test_i64(1, (int64_t[]){2}, (int64_t[]){INT64_C(4052555153018976267), 243}), -1), 0, NULL,
               (int64_t[]){INT64_C(7093466277004997233)}); /* torch: 3**39 * 3**5 */
    tj_tensor *b = bools(2, (int64_t[]){2, 3}, (uint8_t[]){1, 1, 0, 1, 1, 1});
    expect_i64(tj_prod(b, -1), 0, NULL, (int64_t[]){0});                         /* torch */
    expect_i64(tj_prod_dim(b, 1, false, -1), 1, (int64_t[]){2}, (int64_t[]){0, 1}); /* torch */
    /* an integer dtype truncates each float element first; bool is "all" */
    tj_tensor *f = test_f32(1, (int64_t[]){3}, (float[]){2.5f, -3.5f, 4});
    expect_i64(tj_prod(f, TJ_INT64), 0, NULL, (int64_t[]){-24}); /* torch */
    tj_tensor *f22 = test_f32(2, (int64_t[]){2, 2}, (float[]){2, 0.5f, 0, 1});
    expect_bool(tj_prod_dim(f22, 1, false, TJ_BOOL), 1, (int64_t[]){2}, (uint8_t[]){1, 0}); /* torch */
    /* 0-dim: dim 0 and -1 name the only "dim" */
    tj_tensor *s = test_f32(0, NULL, (float[]){2.5f});
    expect(tj_prod_dim(s, 0, true, -1), TJ_FLOAT32, 0, NULL, (double[]){2.5}, 0);
    expect(tj_prod_dim(s, -1, false, -1), TJ_FLOAT32, 0, NULL, (double[]){2.5}, 0);
    expect(tj_prod(s, -1), TJ_FLOAT32, 0, NULL, (double[]){2.5}, 0);
}

Test(prodany, prod_rounds_once_from_a_float64_product)
{
    /* x[k] = 0.5 + ((37 k) % 101) / 100 in float32, [4, 64] (the same
     * expression in torch); PyTorch multiplies in float32, this kernel in
     * float64: the results agree to float32's precision */
    float d[256];
    for (int k = 0; k < 256; k++) d[k] = 0.5f + (float)((k * 37) % 101) / 100.0f;
    tj_tensor *x = test_f32(2, (int64_t[]){4, 64}, d);
    expect(tj_prod_dim(x, 1, false, -1), TJ_FLOAT32, 1, (int64_t[]){4},
           (double[]){0.040788598358631134, 0.02766810916364193, 0.12705658376216888, 0.02804206684231758},
           1e-6); /* torch */
    expect(tj_prod(tj_slice(x, 1, true, 0, true, 16, 1), -1), TJ_FLOAT32, 0, NULL, (double[]){0.015351826325058937},
           1e-6); /* torch */
    /* the float64 product rounded once: no float32 rounding on the way */
    long double want = 1;
    for (int k = 0; k < 64; k++) want *= d[k];
    float got = (float)tj_tensor_item_at(tj_prod_dim(x, 1, false, -1), 0);
    cr_expect_eq(got, (float)want, "%a vs %a", (double)got, (double)(float)want);
}

Test(prodany, prod_of_an_empty_reduction_is_one_and_nan_propagates)
{
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){0, 3});
    expect(tj_prod(e, -1), TJ_FLOAT32, 0, NULL, (double[]){1}, 0);                         /* torch */
    expect(tj_prod_dim(e, 0, false, -1), TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){1, 1, 1}, 0); /* torch */
    expect(tj_prod_dim(e, 1, true, -1), TJ_FLOAT32, 2, (int64_t[]){0, 1}, NULL, 0);
    expect_i64(tj_prod(tj_tensor_empty(TJ_INT64, 1, (int64_t[]){0}), -1), 0, NULL, (int64_t[]){1});
    expect_i64(tj_prod(tj_tensor_empty(TJ_BOOL, 1, (int64_t[]){0}), -1), 0, NULL, (int64_t[]){1});
    float inf = INFINITY;
    tj_tensor *n = test_f32(2, (int64_t[]){3, 3}, (float[]){1, NAN, 2, 0, inf, 1, inf, -1, 2});
    expect(tj_prod_dim(n, 1, false, -1), TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){NAN, NAN, -INFINITY}, 0); /* torch */
    expect(tj_prod(n, -1), TJ_FLOAT32, 0, NULL, (double[]){NAN}, 0);
}

/* ---- all / any: values ---- */

Test(prodany, all_any_values_match_torch_on_every_dtype)
{
    float inf = INFINITY;
    /* nan and tiny values are true, -0.0 false */
    const float fd[12] = {1, NAN, -0.0f, 2, 0, 0, -0.0f, 0, inf, -3, 0.5f, 1e-30f};
    tj_tensor *f = test_f32(2, (int64_t[]){3, 4}, fd);
    expect_bool(tj_all(f), 0, NULL, (uint8_t[]){0}); /* torch */
    expect_bool(tj_any(f), 0, NULL, (uint8_t[]){1}); /* torch */
    const uint8_t all1[3] = {0, 0, 1}, any1[3] = {1, 0, 1}; /* torch */
    expect_bool(tj_all_dim(f, 1, false), 1, (int64_t[]){3}, all1);
    expect_bool(tj_any_dim(f, 1, false), 1, (int64_t[]){3}, any1);
    expect_bool(tj_all_dim(f, 0, true), 2, (int64_t[]){1, 4}, (uint8_t[]){0, 0, 0, 0}); /* torch */
    expect_bool(tj_any_dim(f, -2, false), 1, (int64_t[]){4}, (uint8_t[]){1, 1, 1, 1}); /* torch */
    /* strided runs */
    expect_bool(tj_all_dim(tj_t(f), 0, false), 1, (int64_t[]){3}, all1);
    expect_bool(tj_any_dim(tj_t(f), -2, false), 1, (int64_t[]){3}, any1);
    tj_tensor *d = tj_to_copy(f, TJ_FLOAT64);
    expect_bool(tj_all_dim(d, 1, false), 1, (int64_t[]){3}, all1);
    expect_bool(tj_any_dim(d, 1, true), 2, (int64_t[]){3, 1}, any1);
    tj_tensor *i = test_i64(2, (int64_t[]){2, 3}, (int64_t[]){0, 5, -1, 2, 3, 4});
    expect_bool(tj_all(i), 0, NULL, (uint8_t[]){0});                                    /* torch */
    expect_bool(tj_any_dim(i, 0, false), 1, (int64_t[]){3}, (uint8_t[]){1, 1, 1});      /* torch */
    expect_bool(tj_all_dim(i, 1, false), 1, (int64_t[]){2}, (uint8_t[]){0, 1});         /* torch */
    tj_tensor *b = bools(2, (int64_t[]){3, 2}, (uint8_t[]){0, 0, 1, 0, 1, 1});
    expect_bool(tj_all_dim(b, 1, false), 1, (int64_t[]){3}, (uint8_t[]){0, 0, 1}); /* torch */
    expect_bool(tj_any_dim(b, 1, false), 1, (int64_t[]){3}, (uint8_t[]){0, 1, 1}); /* torch */
    expect_bool(tj_any(b), 0, NULL, (uint8_t[]){1});                               /* torch */
    expect_bool(tj_all(b), 0, NULL, (uint8_t[]){0});                               /* torch */
    /* 0-dim */
    tj_tensor *z = test_f32(0, NULL, (float[]){-0.0f});
    expect_bool(tj_any_dim(z, 0, true), 0, NULL, (uint8_t[]){0});
    expect_bool(tj_all_dim(test_f32(0, NULL, (float[]){NAN}), -1, false), 0, NULL, (uint8_t[]){1});
}

Test(prodany, all_of_an_empty_reduction_is_true_and_any_false)
{
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 1, (int64_t[]){0});
    expect_bool(tj_all(e), 0, NULL, (uint8_t[]){1}); /* torch */
    expect_bool(tj_any(e), 0, NULL, (uint8_t[]){0}); /* torch */
    tj_tensor *e02 = tj_tensor_empty(TJ_INT64, 2, (int64_t[]){0, 2});
    expect_bool(tj_all_dim(e02, 0, false), 1, (int64_t[]){2}, (uint8_t[]){1, 1}); /* torch */
    expect_bool(tj_any_dim(e02, 0, true), 2, (int64_t[]){1, 2}, (uint8_t[]){0, 0}); /* torch */
    tj_tensor *e20 = tj_tensor_empty(TJ_BOOL, 2, (int64_t[]){2, 0});
    expect_bool(tj_all_dim(e20, 0, false), 1, (int64_t[]){0}, NULL);
    expect_bool(tj_any_dim(e20, 1, false), 1, (int64_t[]){2}, (uint8_t[]){0, 0}); /* torch */
    expect_bool(tj_all_dim(e20, -1, false), 1, (int64_t[]){2}, (uint8_t[]){1, 1});
}

/* ---- long rows and columns: every instruction set and thread count ---- */

enum { R = 5, C = 40009 }; /* 40009 reduced elements make three partial results */

/* values near 1 (the product of a row stays in range), with a zero in row
 * 3 just before a partial result's end and in row 4 at its start */
static float *near_one(void)
{
    float *d = malloc(sizeof(float) * R * C);
    cr_assert_not_null(d);
    for (int64_t k = 0; k < (int64_t)R * C; k++) d[k] = 1.0f + (float)((k * 37) % 201 - 100) / 65536.0f;
    d[3 * C + 16383] = 0;
    d[4 * C + 16384] = -0.0f;
    return d;
}

/* zeros with, per row: nothing; a 1 as last element; -0.0 only; a nan in
 * the middle; a denormal where the second partial result starts */
static float *mostly_zero(void)
{
    float *d = calloc((size_t)R * C, sizeof(float));
    cr_assert_not_null(d);
    d[1 * C + C - 1] = 1;
    for (int64_t j = 0; j < C; j++) d[2 * C + j] = -0.0f;
    d[3 * C + 20000] = NAN;
    d[4 * C + 16384] = 1e-45f;
    return d;
}

static bool naive_any(const float *x, int64_t n, int64_t s)
{
    for (int64_t i = 0; i < n; i++)
        if (x[i * s] != 0) return true;
    return false;
}

static bool naive_all(const float *x, int64_t n, int64_t s)
{
    for (int64_t i = 0; i < n; i++)
        if (x[i * s] == 0) return false;
    return true;
}

static float naive_prod(const float *x, int64_t n, int64_t s)
{
    long double p = 1;
    for (int64_t i = 0; i < n; i++) p *= x[i * s];
    return (float)p;
}

static void expect_bytes(const tj_tensor *a, const tj_tensor *b, const char *what)
{
    cr_assert(a && b, "%s: %s", what, tj_last_error());
    cr_assert_eq(tj_tensor_dtype(a), tj_tensor_dtype(b), "%s", what);
    cr_assert_eq(tj_tensor_ndim(a), tj_tensor_ndim(b), "%s", what);
    for (int d = 0; d < tj_tensor_ndim(a); d++) cr_assert_eq(tj_tensor_shape(a)[d], tj_tensor_shape(b)[d], "%s", what);
    size_t nb = (size_t)tj_tensor_numel(a) * tj_dtype_size(tj_tensor_dtype(a));
    cr_expect(!memcmp(tj_tensor_data(a), tj_tensor_data(b), nb), "%s differs", what);
}

/* rows (dim 1: contiguous runs, in three partial results) and columns
 * (dim 0: the row strategy) of x against the naive loops on d */
static void check_long(tj_tensor *x, const float *d, const char *isa, int nt)
{
    tj_tensor *p1 = tj_prod_dim(x, 1, false, -1), *a1 = tj_all_dim(x, 1, false), *n1 = tj_any_dim(x, 1, false);
    tj_tensor *p0 = tj_prod_dim(x, 0, false, -1), *a0 = tj_all_dim(x, 0, false), *n0 = tj_any_dim(x, 0, false);
    cr_assert(p1 && a1 && n1 && p0 && a0 && n0, "%s", tj_last_error());
    for (int r = 0; r < R; r++) {
        const float *row = d + (int64_t)r * C;
        float want = naive_prod(row, C, 1), got = ((float *)tj_tensor_data(p1))[r];
        cr_expect(test_close(got, want, 2.4e-7, 0), "%s %d threads: prod row %d: %a vs %a", isa, nt, r, (double)got,
                  (double)want);
        cr_expect_eq(((uint8_t *)tj_tensor_data(a1))[r], naive_all(row, C, 1), "%s %d threads: all row %d", isa, nt, r);
        cr_expect_eq(((uint8_t *)tj_tensor_data(n1))[r], naive_any(row, C, 1), "%s %d threads: any row %d", isa, nt, r);
    }
    int bad = 0;
    for (int64_t j = 0; j < C; j++) {
        float want = naive_prod(d + j, R, C), got = ((float *)tj_tensor_data(p0))[j];
        bad += !test_close(got, want, 2.4e-7, 0);
        bad += ((uint8_t *)tj_tensor_data(a0))[j] != naive_all(d + j, R, C);
        bad += ((uint8_t *)tj_tensor_data(n0))[j] != naive_any(d + j, R, C);
    }
    cr_expect_eq(bad, 0, "%s %d threads: %d column results differ", isa, nt, bad);
}

Test(prodany, long_rows_and_columns_match_naive_loops_on_every_isa_and_thread_count)
{
    float *d[2] = {near_one(), mostly_zero()};
    for (int v = 0; v < 2; v++) {
        tj_tensor *x = test_f32(2, (int64_t[]){R, C}, d[v]);
        tj_tensor *first[3] = {NULL, NULL, NULL};
        for (int k = 0; k < TEST_NISA; k++) {
            if (!tj_k_isa_force(test_isas[k])) continue;
            for (int nt = 1; nt <= 3; nt++) {
                tj_set_num_threads(nt);
                check_long(x, d[v], test_isas[k], nt);
                /* the same bytes whatever the instruction set and threads */
                tj_tensor *got[3] = {tj_prod(x, -1), tj_all(x), tj_any(x)};
                for (int j = 0; j < 3; j++) {
                    if (!first[j]) first[j] = got[j];
                    else expect_bytes(got[j], first[j], test_isas[k]);
                }
            }
        }
    }
    free(d[0]);
    free(d[1]);
}

Test(prodany, long_int64_products_wrap_as_a_naive_loop)
{
    int64_t *d = malloc(sizeof(int64_t) * R * C);
    cr_assert_not_null(d);
    /* odd factors: the wrapped products never become 0 */
    for (int64_t k = 0; k < (int64_t)R * C; k++) d[k] = (int64_t[]){1, 3, -1, 1, 7, 1, -5}[k % 7];
    tj_tensor *x = test_i64(2, (int64_t[]){R, C}, d);
    tj_tensor *p = tj_prod_dim(x, 1, false, -1), *q = tj_prod_dim(tj_t(x), 0, false, -1);
    cr_assert(p && q, "%s", tj_last_error());
    for (int r = 0; r < R; r++) {
        uint64_t want = 1;
        for (int64_t j = 0; j < C; j++) want *= (uint64_t)d[(int64_t)r * C + j];
        cr_expect_eq(((int64_t *)tj_tensor_data(p))[r], (int64_t)want, "row %d", r);
        cr_expect_eq(((int64_t *)tj_tensor_data(q))[r], (int64_t)want, "strided row %d", r);
    }
    free(d);
}

/* ---- cumprod ---- */

Test(prodany, cumprod_values_and_dtypes_match_torch)
{
    tj_tensor *x = x34();
    expect(tj_cumprod(x, 1, -1), TJ_FLOAT32, 2, (int64_t[]){3, 4},
           (double[]){0.5, -0.625, -1.875, -3.75, 1.5, 4.5, -3.375, -0.84375, 3, -6, -0.75, 1.5}, 0); /* torch */
    expect(tj_cumprod(x, -2, -1), TJ_FLOAT32, 2, (int64_t[]){3, 4},
           (double[]){0.5, -1.25, 3, 2, 0.75, -3.75, -2.25, 0.5, 2.25, 7.5, -0.28125, -1}, 0); /* torch */
    expect_i64(tj_cumprod(test_i64(1, (int64_t[]){4}, (int64_t[]){2, 3, INT64_C(1) << 62, 5}), 0, -1), 1,
               (int64_t[]){4}, (int64_t[]){2, 6, INT64_MIN, INT64_MIN}); /* torch */
    expect_i64(tj_cumprod(bools(1, (int64_t[]){4}, (uint8_t[]){1, 1, 0, 1}), 0, -1), 1, (int64_t[]){4},
               (int64_t[]){1, 1, 0, 0}); /* torch */
    expect_i64(tj_cumprod(test_f32(1, (int64_t[]){3}, (float[]){2.5f, -3.5f, 4}), 0, TJ_INT64), 1, (int64_t[]){3},
               (int64_t[]){2, -6, -24}); /* torch */
    expect(tj_cumprod(test_f32(1, (int64_t[]){4}, (float[]){2, 0, INFINITY, 3}), 0, -1), TJ_FLOAT32, 1,
           (int64_t[]){4}, (double[]){2, 0, NAN, NAN}, 0); /* torch */
    test_expect_error(tj_cumprod(x, 0, TJ_BOOL), TJ_ERR_DTYPE, "aten::cumprod", "not implemented for a bool result");
    test_expect_error(tj_cumprod(x, 2, -1), TJ_ERR_INDEX, "aten::cumprod", "dim 2 is out of range");
}

/* ---- gradients (torch) ---- */

static tj_tensor *leaf(const float *v)
{
    tj_tensor *x = test_f32(2, (int64_t[]){3, 4}, v);
    tj_tensor_set_requires_grad(x, true);
    return x;
}

/* X34 with x[1][2] = 0, and with x[2][0] = 0 too */
static void with_zeros(float *one, float *two)
{
    memcpy(one, X34, sizeof X34);
    one[6] = 0;
    memcpy(two, one, sizeof X34);
    two[8] = 0;
}

Test(prodany, prod_gradient_matches_torch_without_zeros_and_with_one_or_several)
{
    float one[12], two[12];
    with_zeros(one, two);
    const int64_t s34[2] = {3, 4};
    tj_tensor *g2 = test_f32(0, NULL, (float[]){2});
    tj_tensor *x = leaf(X34);
    expect(test_grad1(x, tj_prod(x, -1), g2), TJ_FLOAT32, 2, s34,
           (double[]){18.984375, -7.59375, 3.1640625, 4.74609375, 6.328125, 3.1640625, -12.65625, 37.96875, 3.1640625,
                      -4.74609375, 75.9375, -4.74609375}, 0); /* torch */
    /* one zero: only it gets a gradient, the product of the others */
    x = leaf(one);
    expect(test_grad1(x, tj_prod(x, -1), g2), TJ_FLOAT32, 2, s34,
           (double[]){0, 0, 0, 0, 0, 0, -12.65625, 0, 0, 0, 0, 0}, 0); /* torch */
    /* several zeros: zero everywhere */
    x = leaf(two);
    double zero12[12] = {0};
    expect(test_grad1(x, tj_prod(x, -1), g2), TJ_FLOAT32, 2, s34, zero12, 0); /* torch */
    /* along dim 1, the rows with a zero take the safe formula */
    tj_tensor *gy = test_f32(1, (int64_t[]){3}, (float[]){1, -2, 0.5f});
    x = leaf(X34);
    expect(test_grad1(x, tj_prod_dim(x, 1, false, -1), gy), TJ_FLOAT32, 2, s34,
           (double[]){-7.5, 3, -1.25, -1.875, 1.125, 0.5625, -2.25, 6.75, 0.25, -0.375, 6, -0.375}, 0); /* torch */
    x = leaf(one);
    expect(test_grad1(x, tj_prod_dim(x, 1, false, -1), gy), TJ_FLOAT32, 2, s34,
           (double[]){-7.5, 3, -1.25, -1.875, 0, 0, -2.25, 0, 0.25, -0.375, 6, -0.375}, 0); /* torch */
    x = leaf(two);
    expect(test_grad1(x, tj_prod_dim(x, 1, false, -1), gy), TJ_FLOAT32, 2, s34,
           (double[]){-7.5, 3, -1.25, -1.875, 0, 0, -2.25, 0, 0.25, 0, 0, 0}, 0); /* torch */
    /* two zeros in one row, keepdim; along dim 0 */
    float row2[12];
    memcpy(row2, X34, sizeof X34);
    row2[5] = row2[7] = 0;
    x = leaf(row2);
    expect(test_grad1(x, tj_prod_dim(x, -1, true, -1), tj_view(gy, (int64_t[]){3, 1}, 2)), TJ_FLOAT32, 2, s34,
           (double[]){-7.5, 3, -1.25, -1.875, 0, 0, 0, 0, 0.25, -0.375, 6, -0.375}, 0); /* torch */
    x = leaf(row2);
    tj_tensor *g4 = test_f32(1, (int64_t[]){4}, (float[]){1, 2, 3, 4});
    expect(test_grad1(x, tj_prod_dim(x, 0, false, -1), g4), TJ_FLOAT32, 2, s34,
           (double[]){4.5, 0, -0.28125, 0, 1.5, 5, 1.125, -16, 0.75, 0, -6.75, 0}, 0); /* torch */
    /* a float64 result: the gradient comes back as float32 */
    x = leaf(one);
    expect(test_grad1(x, tj_prod_dim(x, 0, false, TJ_FLOAT64), tj_to_copy(g4, TJ_FLOAT64)), TJ_FLOAT32, 2, s34,
           (double[]){4.5, -12, 0, -2, 1.5, 5, 1.125, -16, 0.75, -7.5, 0, 2}, 0); /* torch */
    /* a float32 result of float64: self is converted to float32 before the
     * division, as in PyTorch */
    tj_tensor *w = test_f64(1, (int64_t[]){3}, (double[]){0.1, 2, 4});
    tj_tensor_set_requires_grad(w, true);
    expect(test_grad1(w, tj_prod(w, TJ_FLOAT32), test_f32(0, NULL, (float[]){1})), TJ_FLOAT64, 1, (int64_t[]){3},
           (double[]){8, 0.4000000059604645, 0.20000000298023224}, 0); /* torch */
    /* 0-dim */
    tj_tensor *s = test_f32(0, NULL, (float[]){2.5f});
    tj_tensor_set_requires_grad(s, true);
    expect(test_grad1(s, tj_prod_dim(s, 0, false, -1), test_f32(0, NULL, (float[]){3})), TJ_FLOAT32, 0, NULL,
           (double[]){3}, 0); /* torch */
}

Test(prodany, prod_gradient_keeps_torchs_special_values)
{
    float inf = INFINITY;
    /* no zero: grad * result / x, so inf / inf is nan (torch: [nan, inf]) */
    tj_tensor *x = test_f32(1, (int64_t[]){2}, (float[]){inf, 2});
    tj_tensor_set_requires_grad(x, true);
    expect(test_grad1(x, tj_prod(x, -1), test_f32(0, NULL, (float[]){1})), TJ_FLOAT32, 1, (int64_t[]){2},
           (double[]){NAN, INFINITY}, 0);
    /* with a zero elsewhere in the tensor the safe formula holds for every
     * slice (torch: [[0, 0], [inf, 2]]); the product underflowing to 0
     * gives 0 without zeros (torch: [[0, 0], [3, 2]]) */
    x = test_f32(2, (int64_t[]){2, 2}, (float[]){0, 0, 2, inf});
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *ones = test_f32(1, (int64_t[]){2}, (float[]){1, 1});
    expect(test_grad1(x, tj_prod_dim(x, 1, false, -1), ones), TJ_FLOAT32, 2, (int64_t[]){2, 2},
           (double[]){0, 0, INFINITY, 2}, 0);
    x = test_f32(2, (int64_t[]){2, 2}, (float[]){1e-30f, 1e-30f, 2, 3});
    tj_tensor_set_requires_grad(x, true);
    expect(test_grad1(x, tj_prod_dim(x, 1, false, -1), ones), TJ_FLOAT32, 2, (int64_t[]){2, 2}, (double[]){0, 0, 3, 2},
           0);
    /* several zeros and an infinity: 0, not nan (torch: [0, 0, 0]) */
    x = test_f32(1, (int64_t[]){3}, (float[]){0, 0, inf});
    tj_tensor_set_requires_grad(x, true);
    expect(test_grad1(x, tj_prod(x, -1), test_f32(0, NULL, (float[]){1})), TJ_FLOAT32, 1, (int64_t[]){3},
           (double[]){0, 0, 0}, 0);
}

Test(prodany, all_any_results_never_require_grad)
{
    tj_tensor *x = leaf(X34);
    tj_tensor *r[4] = {tj_all(x), tj_any(x), tj_all_dim(x, 0, false), tj_any_dim(x, 1, true)};
    for (int k = 0; k < 4; k++) {
        cr_assert_not_null(r[k], "%s", tj_last_error());
        cr_expect_not(tj_tensor_requires_grad(r[k]), "result %d", k);
    }
}

/* ---- tracing, decomposition, replay ---- */

/* out: prod, prod.dim_int(1), prod.dim_int(0, keepdim, float64), all, any,
 * all.dim(1), any.dim(0, keepdim), cumprod(1) */
static tj_status fn_fwd(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0];
    out[0] = tj_prod(x, -1);
    out[1] = tj_prod_dim(x, 1, false, -1);
    out[2] = tj_prod_dim(x, 0, true, TJ_FLOAT64);
    out[3] = tj_all(x);
    out[4] = tj_any(x);
    out[5] = tj_all_dim(x, 1, false);
    out[6] = tj_any_dim(x, 0, true);
    out[7] = tj_cumprod(x, 1, -1);
    *n_out = 8;
    for (int k = 0; k < 8; k++)
        if (!out[k]) return tj_last_status();
    return TJ_OK;
}

static const char *const FWD_NAMES[] = {"aten::prod", "aten::prod.dim_int", "aten::all", "aten::any", "aten::all.dim",
                                        "aten::any.dim", "aten::cumprod"};
#define N_FWD 8

static void expect_same_bits(tj_tensor *const *got, tj_tensor *const *want, int n, const char *what)
{
    for (int k = 0; k < n; k++) {
        char w[64];
        snprintf(w, sizeof w, "%s output %d", what, k);
        expect_bytes(got[k], want[k], w);
    }
}

Test(prodany, make_fx_records_the_aten_names_and_replay_gives_eagers_bits)
{
    /* one zero, a nan in row 2, a column whose elements add up to 0 (any
     * counts the non-zeros, it does not add them) */
    float v[12];
    memcpy(v, X34, sizeof X34);
    v[5] = 0;
    v[10] = NAN;
    v[0] = 1.5f, v[4] = -1.5f, v[8] = 0;
    tj_tensor *x = test_f32(2, (int64_t[]){3, 4}, v), *eager[N_FWD];
    int ne;
    cr_assert_eq(fn_fwd(NULL, &x, 1, eager, &ne), TJ_OK, "%s", tj_last_error());
    tj_decomp_table *core = tj_core_decompositions();
    for (int mode = 0; mode < 2; mode++) {
        tj_graph *g = tj_make_fx(fn_fwd, NULL, &x, 1, NULL, mode ? TJ_TRACE_FAKE : TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s", tj_last_error());
        for (size_t k = 0; k < sizeof FWD_NAMES / sizeof *FWD_NAMES; k++)
            cr_expect_geq(tj_graph_count_op(g, tj_op_find(FWD_NAMES[k])), 1, "%s not recorded", FWD_NAMES[k]);
        char *text = tj_graph_to_string(g);
        cr_assert_not_null(text, "%s", tj_last_error());
        cr_expect(strstr(text, "aten.prod.dim_int(%arg0_1, 0, True, dtype = torch.float64)"), "%s", text);
        test_expect_round_trip(text);
        free(text);
        tj_plan *p = tj_compile(g, NULL);
        cr_assert_not_null(p, "%s", tj_last_error());
        tj_tensor *got[N_FWD];
        for (int run = 0; run < 2; run++) {
            cr_assert_eq(tj_plan_run(p, &x, 1, got), TJ_OK, "%s", tj_last_error());
            expect_same_bits(got, eager, N_FWD, "replay");
        }
        /* lowered by the core table: all / any become sums of bools and
         * comparisons; prod and cumprod stay (primitives) */
        tj_graph *d = tj_graph_decompose(g, core);
        cr_assert_not_null(d, "%s", tj_last_error());
        cr_expect(test_only_primitives(d));
        for (size_t k = 2; k < 6; k++)
            cr_expect_eq(tj_graph_count_op(d, tj_op_find(FWD_NAMES[k])), 0, "%s left", FWD_NAMES[k]);
        cr_expect_eq(tj_graph_count_op(d, TJ_OPS(prod)), 1);
        cr_expect_eq(tj_graph_count_op(d, TJ_OPS(prod_dim_int)), 2);
        tj_tensor *dec[N_FWD];
        cr_assert_eq(tj_graph_run(d, &x, 1, dec), TJ_OK, "%s", tj_last_error());
        expect_same_bits(dec, eager, N_FWD, "decomposed");
        tj_plan_free(p);
        tj_graph_free(d);
        tj_graph_free(g);
    }
    tj_decomp_table_free(core);
}

/* d sum(prod.dim_int(w, 1)) / d w and d prod(w) / d w */
static tj_status fn_grads(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *w = tj_tensor_detach(in[0]);
    tj_tensor_set_requires_grad(w, true);
    tj_tensor *y[2] = {tj_sum(tj_prod_dim(w, 1, false, -1), -1), tj_prod(w, -1)};
    if (!y[0] || !y[1]) return tj_last_status();
    *n_out = 2;
    tj_status st = tj_autograd_grad(&y[0], 1, NULL, &w, 1, &out[0]);
    return st != TJ_OK ? st : tj_autograd_grad(&y[1], 1, NULL, &w, 1, &out[1]);
}

Test(prodany, a_traced_prod_gradient_takes_the_safe_formula_and_replays_eagers_values)
{
    float one[12], two[12];
    with_zeros(one, two);
    const float *inputs[3] = {X34, one, two};
    for (int mode = 0; mode < 2; mode++) {
        tj_tensor *ex = test_f32(2, (int64_t[]){3, 4}, X34);
        tj_graph *g = tj_make_fx(fn_grads, NULL, &ex, 1, NULL, mode ? TJ_TRACE_FAKE : TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s", tj_last_error());
        /* as PyTorch's make_fx: two cumprods per gradient, no division by x,
         * whatever the example's values */
        cr_expect_eq(tj_graph_count_op(g, TJ_OPS(cumprod)), 4);
        cr_expect_eq(tj_graph_count_op(g, TJ_OPS(div_Tensor)), 0);
        tj_plan *p = tj_compile(g, NULL);
        cr_assert_not_null(p, "%s", tj_last_error());
        for (int k = 0; k < 3; k++) {
            /* eager takes grad * result / x without zeros, else the same
             * formula; on these inputs every path is exact */
            tj_tensor *x = test_f32(2, (int64_t[]){3, 4}, inputs[k]), *eager[2], *got[2];
            int ne;
            cr_assert_eq(fn_grads(NULL, &x, 1, eager, &ne), TJ_OK, "%s", tj_last_error());
            cr_assert_eq(tj_plan_run(p, &x, 1, got), TJ_OK, "%s", tj_last_error());
            for (int j = 0; j < 2; j++) {
                double want[12];
                for (int i = 0; i < 12; i++) want[i] = tj_tensor_item_at(eager[j], i);
                expect(got[j], TJ_FLOAT32, 2, (int64_t[]){3, 4}, want, 0);
            }
        }
        tj_plan_free(p);
        tj_graph_free(g);
    }
}

/* ---- errors ---- */

Test(prodany, bad_dims_and_dtypes_are_errors_naming_the_operator)
{
    tj_tensor *x = x34();
    test_expect_error(tj_prod_dim(x, 2, false, -1), TJ_ERR_INDEX, "aten::prod.dim_int",
                      "dim 2 is out of range for a tensor of rank 2 (expected -2..1)");
    test_expect_error(tj_all_dim(x, -3, false), TJ_ERR_INDEX, "aten::all.dim", "dim -3 is out of range");
    test_expect_error(tj_any_dim(x, 5, true), TJ_ERR_INDEX, "aten::any.dim", "dim 5 is out of range");
    tj_tensor *s = test_f32(0, NULL, (float[]){1});
    test_expect_error(tj_prod_dim(s, 1, false, -1), TJ_ERR_INDEX, "aten::prod.dim_int", "dim 1 is out of range");
    test_expect_error(tj_prod(x, 99), TJ_ERR_INVALID_ARGUMENT, "aten::prod", "'dtype' is not a dtype (99)");
    test_expect_error(tj_prod_dim(x, 0, false, -2), TJ_ERR_INVALID_ARGUMENT, "aten::prod.dim_int", "is not a dtype");
    test_expect_error(tj_all(NULL), TJ_ERR_INVALID_ARGUMENT, "aten::all", "self");
    test_expect_error(tj_any_dim(NULL, 0, false), TJ_ERR_INVALID_ARGUMENT, "aten::any.dim", "self");
    /* the shape functions refuse the same on fake tensors */
    tj_tensor *f = tj_tensor_fake(TJ_FLOAT32, 2, (int64_t[]){3, 4});
    test_expect_error(tj_prod_dim(f, -3, true, -1), TJ_ERR_INDEX, "aten::prod.dim_int", "dim -3 is out of range");
    test_expect_error(tj_all_dim(f, 2, false), TJ_ERR_INDEX, "aten::all.dim", "dim 2 is out of range");
}

Test(prodany, shape_functions_give_torchs_dtypes_and_shapes_on_fake_tensors)
{
    tj_tensor *f = tj_tensor_fake(TJ_FLOAT32, 2, (int64_t[]){3, 4});
    tj_tensor *i = tj_tensor_fake(TJ_INT64, 2, (int64_t[]){3, 4}), *b = tj_tensor_fake(TJ_BOOL, 1, (int64_t[]){5});
    test_assert_dtype_shape(tj_prod(f, -1), TJ_FLOAT32, 0, NULL);
    test_assert_dtype_shape(tj_prod(b, -1), TJ_INT64, 0, NULL);
    test_assert_dtype_shape(tj_prod_dim(i, 1, true, -1), TJ_INT64, 2, (int64_t[]){3, 1});
    test_assert_dtype_shape(tj_prod_dim(i, 0, false, TJ_FLOAT64), TJ_FLOAT64, 1, (int64_t[]){4});
    test_assert_dtype_shape(tj_prod_dim(f, -1, false, TJ_BOOL), TJ_BOOL, 1, (int64_t[]){3});
    test_assert_dtype_shape(tj_all(i), TJ_BOOL, 0, NULL);
    test_assert_dtype_shape(tj_any(f), TJ_BOOL, 0, NULL);
    test_assert_dtype_shape(tj_all_dim(f, 0, true), TJ_BOOL, 2, (int64_t[]){1, 4});
    test_assert_dtype_shape(tj_any_dim(b, -1, false), TJ_BOOL, 0, NULL);
    test_assert_dtype_shape(tj_cumprod(b, 0, -1), TJ_INT64, 1, (int64_t[]){5});
    test_assert_dtype_shape(tj_cumprod(f, 1, TJ_FLOAT64), TJ_FLOAT64, 2, (int64_t[]){3, 4});
}
