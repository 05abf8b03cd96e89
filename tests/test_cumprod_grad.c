/* cumprod's gradient (FunctionsManual's cumprod_backward): eager without
 * zeros (the reversed cumsum of result * grad over self) and with zeros (the
 * first-zero formula: a zero first in its row, two and three zeros in one
 * row, a zero last), along either dim of a matrix and an inner dim of a 3-d
 * tensor, negative dims, float32, float64 and a dtype argument, special
 * values, sizes with nothing to multiply; the exact formula make_fx records
 * (real and fake mode) replaying eager's values with and without zeros; and
 * no double backward. Values marked "torch" were printed by PyTorch 1.13
 * (/usr/bin/python3) in float64 for the same inputs:
 *     x = torch.tensor(Z, dtype=torch.float64, requires_grad=True)
 *     torch.autograd.grad(torch.cumprod(x, dim), x, torch.tensor(G, dtype=torch.float64))[0]
 * All inputs are binary fractions with few bits, so every path is exact. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(cumprodgrad, .init = test_scope_open, .fini = test_scope_close);

/* rows: a zero first, two zeros apart, three zeros at the end, a zero
 * last, no zero */
static const double Z[25] = {
    0,     1.5,   -0.5, 2,    0.75,
    1.25,  0,     -2,   0,    0.5,
    0.5,   -1.5,  0,    0,    0,
    1.5,   -0.75, 2,    1.25, 0,
    -1.25, 0.5,   1.5,  -2,   0.75,
};
static const double G[25] = {
    1,    -0.5, 2,     0.25,  -1.5,
    0.75, 1.5,  -1,    2,     0.5,
    -2,   1,    0.5,   -0.75, 1.25,
    1.5,  0.25, -1.25, 1,     -0.5,
    0.5,  -1,   1.75,  -0.25, 2,
};
/* no zero */
static const double NZ[15] = {-1.25, 0.5, 1.5, -2, 0.75, 1.5, -0.75, 2, 1.25, 0.5, 0.25, 3, -0.5, 1.5, -1};

static const int64_t S55[2] = {5, 5}, S35[2] = {3, 5}, S25[2] = {2, 5};

static tj_tensor *leaf64(int ndim, const int64_t *shape, const double *v)
{
    tj_tensor *x = test_f64(ndim, shape, v);
    tj_tensor_set_requires_grad(x, true);
    return x;
}

static void expect(const tj_tensor *t, tj_dtype dtype, int ndim, const int64_t *shape, const double *want)
{
    int64_t n = test_assert_dtype_shape(t, dtype, ndim, shape);
    test_expect_close(t, want, n, 0, 0);
}

Test(cumprodgrad, gradient_with_zeros_matches_torch_along_either_dim)
{
    tj_tensor *x = leaf64(2, S55, Z), *g = test_f64(2, S55, G);
    expect(test_grad1(x, tj_cumprod(x, 1, -1), g), TJ_FLOAT64, 2, S55,
           (double[]){0.0625, 0, 0, 0, 0,
                      0.75, 4.375, 0, 0, 0,
                      -3.5, 0.5, -0.375, 0, 0,
                      1.3125, 0.375, 0, -2.25, 1.40625,
                      -0.5625, 2.65625, 0.46875, -1.171875, 3.75}); /* torch */
    /* along dim 0 (as -2), column 0 starts with a zero */
    expect(test_grad1(x, tj_cumprod(x, -2, -1), g), TJ_FLOAT64, 2, S55,
           (double[]){1.5078125, -0.5, 4, 0.25, -1.25,
                      0, -0.421875, 0.5, 4, 0.375,
                      0, 0, 3.25, 0, 0.46875,
                      0, 0, 0, 0, 0,
                      0, 0, 0, 0, 0}); /* torch */
}

Test(cumprodgrad, gradient_without_zeros_matches_torch_in_float64_and_float32)
{
    tj_tensor *x = leaf64(2, S35, NZ), *g = test_f64(2, S35, G);
    const double along1[15] = {3.5625, -6.40625, -2.34375, 0.8203125, -2.8125, -3.09375, 7.6875, -2.0390625,
                               -5.0625, -1.40625, 4.75, 0.5625, -1.875, 0.75, -0.703125}; /* torch */
    expect(test_grad1(x, tj_cumprod(x, -1, -1), g), TJ_FLOAT64, 2, S35, along1);
    expect(test_grad1(x, tj_cumprod(x, 0, -1), g), TJ_FLOAT64, 2, S35,
           (double[]){1.375, -3.875, -0.5, 1.34375, -1.875, -0.3125, 2.25, -1.875, -1.75, -0.5625, 3.75, -0.375, 1.5,
                      1.875, 0.46875}); /* torch */
    /* float32, and a float64 result of float32 (the gradient comes back as
     * float32, as torch's) */
    tj_tensor *xf = tj_to_copy(test_f64(2, S25, NZ), TJ_FLOAT32), *gf = test_f64(2, S25, G);
    tj_tensor_set_requires_grad(xf, true);
    expect(test_grad1(xf, tj_cumprod(xf, 1, -1), tj_to_copy(gf, TJ_FLOAT32)), TJ_FLOAT32, 2, S25, along1);
    expect(test_grad1(xf, tj_cumprod(xf, 1, TJ_FLOAT64), gf), TJ_FLOAT32, 2, S25, along1); /* torch */
}

Test(cumprodgrad, gradient_with_zeros_of_a_float64_result_of_float32)
{
    /* PyTorch 1.13 fails here (masked_scatter: Float and Double); the
     * values are its float64 gradient for the same values, rounded */
    tj_tensor *x = tj_to_copy(test_f64(2, S25, Z + 5), TJ_FLOAT32);
    tj_tensor_set_requires_grad(x, true);
    expect(test_grad1(x, tj_cumprod(x, 1, TJ_FLOAT64), test_f64(2, S25, G)), TJ_FLOAT32, 2, S25,
           (double[]){1, -5.625, 0, 0, 0, -1.5, 0.75, 0.75, 0, 0}); /* torch, float64 */
}

Test(cumprodgrad, gradient_along_an_inner_dim_of_a_3d_tensor_matches_torch)
{
    const int64_t s[3] = {2, 2, 4};
    const double v[16] = {0, 1.5, -0.5, 2, 1.25, 0, -2, 0, 0.5, -1.5, 0, 0, 0.5, 2, 0, -1};
    double gv[16];
    for (int i = 0; i < 16; i++) gv[i] = i * 0.25 - 1.5; /* torch.arange(16) * 0.25 - 1.5 */
    tj_tensor *x = leaf64(3, s, v), *g = test_f64(3, s, gv);
    expect(test_grad1(x, tj_cumprod(x, 1, -1), g), TJ_FLOAT64, 3, s,
           (double[]){-2.125, -1.25, -1, -0.75, 0, -0.375, 0, 0.5, 1.25, 4.25, 1, -1, 0.75, -2.625, 0, 0}); /* torch */
    expect(test_grad1(x, tj_cumprod(x, -1, -1), g), TJ_FLOAT64, 3, s,
           (double[]){-1.5, 0, 0, 0, -0.5, -0.3125, 0, 0, -0.625, 0.375, -0.75, 0, 5, 0.875, -0.25, 0}); /* torch */
}

Test(cumprodgrad, gradient_keeps_torchs_special_values)
{
    const int64_t s3[1] = {3};
    tj_tensor *ones = test_f64(1, s3, (double[]){1, 1, 1});
    /* a zero before an infinity: the first-zero sum holds it */
    tj_tensor *x = leaf64(1, s3, (double[]){2, 0, INFINITY});
    expect(test_grad1(x, tj_cumprod(x, 0, -1), ones), TJ_FLOAT64, 1, s3, (double[]){1, INFINITY, 0}); /* torch */
    /* and a second zero after it: inf * 0 makes that sum nan, the later
     * elements still get 0 */
    const int64_t s4[1] = {4};
    x = leaf64(1, s4, (double[]){2, 0, INFINITY, 0});
    expect(test_grad1(x, tj_cumprod(x, 0, -1), test_f64(1, s4, (double[]){1, 1, 1, 1})), TJ_FLOAT64, 1, s4,
           (double[]){1, NAN, 0, 0}); /* torch */
    /* no zero: divided by self, inf / inf is nan */
    x = leaf64(1, s3, (double[]){INFINITY, 2, 3});
    expect(test_grad1(x, tj_cumprod(x, 0, -1), ones), TJ_FLOAT64, 1, s3, (double[]){NAN, INFINITY, INFINITY}); /* torch */
    /* a result underflowing to 0 is no zero of self */
    x = leaf64(1, s3, (double[]){1e-200, 1e-200, 3});
    expect(test_grad1(x, tj_cumprod(x, 0, -1), ones), TJ_FLOAT64, 1, s3, (double[]){1, 0, 0}); /* torch */
}

Test(cumprodgrad, nothing_to_multiply_passes_the_gradient_through)
{
    /* size 1 along dim, 0-dim, and an empty tensor: grad itself */
    tj_tensor *x = leaf64(2, (int64_t[]){3, 1}, (double[]){0, 2, -1});
    tj_tensor *g = test_f64(2, (int64_t[]){3, 1}, (double[]){1.5, -2, 4});
    expect(test_grad1(x, tj_cumprod(x, -1, -1), g), TJ_FLOAT64, 2, (int64_t[]){3, 1}, (double[]){1.5, -2, 4});
    x = leaf64(0, NULL, (double[]){0});
    expect(test_grad1(x, tj_cumprod(x, 0, -1), test_f64(0, NULL, (double[]){3})), TJ_FLOAT64, 0, NULL, (double[]){3});
    const int64_t s03[2] = {0, 3};
    x = tj_tensor_empty(TJ_FLOAT64, 2, s03);
    tj_tensor_set_requires_grad(x, true);
    expect(test_grad1(x, tj_cumprod(x, 1, -1), tj_tensor_empty(TJ_FLOAT64, 2, s03)), TJ_FLOAT64, 2, s03, NULL);
}

Test(cumprodgrad, the_gradient_has_no_history_so_double_backward_is_refused)
{
    tj_tensor *x = leaf64(2, S55, Z);
    tj_tensor *g = test_grad1(x, tj_cumprod(x, 1, -1), test_f64(2, S55, G));
    cr_expect_not(tj_tensor_requires_grad(g));
    tj_tensor *s = tj_sum(g, -1), *gg = NULL;
    cr_expect_eq(tj_autograd_grad(&s, 1, NULL, &x, 1, &gg), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "does not require grad"), "%s", tj_last_error());
    cr_expect_null(gg);
}

/* ---- tracing ---- */

/* d sum(in[1] * cumprod(in[0], 1)) / d in[0] */
static tj_status fn_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *w = tj_tensor_detach(in[0]), *gy = in[1];
    tj_tensor_set_requires_grad(w, true);
    tj_tensor *y = tj_cumprod(w, 1, -1);
    if (!y) return tj_last_status();
    *n_out = 1;
    return tj_autograd_grad(&y, 1, &gy, &w, 1, out);
}

Test(cumprodgrad, a_traced_gradient_takes_the_exact_formula_and_replays_eagers_values)
{
    double no_zero[25];
    for (int i = 0; i < 25; i++) no_zero[i] = Z[i] ? Z[i] : 1.75;
    const double *inputs[2] = {Z, no_zero};
    for (int mode = 0; mode < 2; mode++) {
        tj_tensor *ex[2] = {test_f64(2, S55, no_zero), test_f64(2, S55, G)};
        tj_graph *gr = tj_make_fx(fn_grad, NULL, ex, 2, NULL, mode ? TJ_TRACE_FAKE : TJ_TRACE_REAL);
        cr_assert_not_null(gr, "%s", tj_last_error());
        /* as PyTorch's make_fx, whatever the example's values: per column k
         * a prod of x[:k] (k > 0) and a cumprod of x[k+1:] (k < 4), plus the
         * forward cumprod; no division by x */
        cr_expect_eq(tj_graph_count_op(gr, TJ_OPS(cumprod)), 5);
        cr_expect_eq(tj_graph_count_op(gr, TJ_OPS(prod_dim_int)), 4);
        cr_expect_eq(tj_graph_count_op(gr, TJ_OPS(div_Tensor)), 0);
        for (int k = 0; k < 2; k++) {
            tj_tensor *in[2] = {test_f64(2, S55, inputs[k]), ex[1]}, *eager;
            int ne;
            cr_assert_eq(fn_grad(NULL, in, 2, &eager, &ne), TJ_OK, "%s", tj_last_error());
            double want[25];
            for (int i = 0; i < 25; i++) want[i] = tj_tensor_item_at(eager, i);
            expect(test_replay1(gr, in, 2), TJ_FLOAT64, 2, S55, want);
        }
        tj_graph_free(gr);
    }
}
