/* Session 24 (opsbatch3) operators: prelu and prelu_backward (values,
 * gradients and double backward against PyTorch 1.13 in float64 and
 * float32, strided inputs, errors, the graphs make_fx records, replayed
 * and decomposed). Reference values: tests/opsbatch3_ref.h, written by
 * tests/make_opsbatch3_refs.py, so the tests run without PyTorch. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "opsbatch3_ref.h"
#include "test_util.h"

TestSuite(opsbatch3, .init = test_scope_open, .fini = test_scope_close);

/* ---- prelu, prelu_backward ---- */

typedef struct prelu_case {
    int xd, wd;
    int64_t xs[4], ws[1];
    const double *out, *gx, *gw, *ggx, *ggw, *ggy; /* make_opsbatch3_refs.py's PRELU_<tag>_* */
} prelu_case;

#define PRELU_CASE(tag, xd, wd, w0, ...)                                                                       \
    {xd, wd, {__VA_ARGS__}, {w0}, PRELU_##tag##_OUT, PRELU_##tag##_GX, PRELU_##tag##_GW, PRELU_##tag##_GGX, PRELU_##tag##_GGW, \
     PRELU_##tag##_GGY}

/* make_opsbatch3_refs.py's PRELU_CASES */
static const prelu_case prelu_cases[] = {
    PRELU_CASE(C3, 3, 1, 3, 2, 3, 4), PRELU_CASE(W1, 3, 1, 1, 2, 3, 4), PRELU_CASE(W0, 2, 0, 0, 2, 3),
    PRELU_CASE(D4, 4, 1, 3, 2, 3, 2, 2), PRELU_CASE(D1, 1, 1, 1, 5), PRELU_CASE(D0, 0, 1, 1, 0),
};

static int64_t numel_of(int nd, const int64_t *s)
{
    int64_t n = 1;
    for (int k = 0; k < nd; k++) n *= s[k];
    return n;
}

/* sum(t * w) for w of t's shape holding v */
static tj_tensor *weighted_sum(tj_tensor *t, const double *v)
{
    return tj_sum(tj_mul(t, test_f64(tj_tensor_ndim(t), tj_tensor_shape(t), v)), TJ_DTYPE_NONE);
}

Test(opsbatch3, prelu_matches_pytorch_with_gradients_and_double_backward)
{
    for (size_t k = 0; k < sizeof prelu_cases / sizeof *prelu_cases; k++) {
        const prelu_case *pc = &prelu_cases[k];
        int64_t nx = numel_of(pc->xd, pc->xs), nw = numel_of(pc->wd, pc->ws);
        tj_tensor *x = test_f64_grad(PRELU_X, pc->xd, pc->xs, true), *w = test_f64_grad(PRELU_W, pc->wd, pc->ws, true);
        tj_tensor *out = tj_prelu(x, w);
        cr_assert_not_null(out, "case %zu: %s", k, tj_last_error());
        test_expect_close(out, pc->out, nx, 0, 0);
        tj_tensor *gy = test_f64_grad(PRELU_GY, pc->xd, pc->xs, true), *g[2];
        tj_tensor *loss = weighted_sum(out, PRELU_GY);
        cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){x, w}, 2, g), TJ_OK, "%s", tj_last_error());
        test_expect_close(g[0], pc->gx, nx, 0, 0);
        test_expect_close(g[1], pc->gw, nw, 1e-15, 0);
        /* the backward operator, differentiated in all three inputs */
        tj_tensor *gx, *gw, *gg[3];
        cr_assert_eq(tj_prelu_backward(gy, x, w, &gx, &gw), TJ_OK, "%s", tj_last_error());
        test_expect_close(gx, pc->gx, nx, 0, 0);
        test_expect_close(gw, pc->gw, nw, 1e-15, 0);
        tj_tensor *second = tj_add(weighted_sum(gx, PRELU_A), weighted_sum(gw, PRELU_B));
        cr_assert_eq(tj_autograd_grad(&second, 1, NULL, (tj_tensor *[]){x, w, gy}, 3, gg), TJ_OK, "%s",
                     tj_last_error());
        if (gg[0]) test_expect_close(gg[0], pc->ggx, nx, 1e-15, 0);
        else for (int64_t i = 0; i < nx; i++) cr_expect_eq(pc->ggx[i], 0.0);
        test_expect_close(gg[1], pc->ggw, nw, 1e-15, 0);
        test_expect_close(gg[2], pc->ggy, nx, 1e-15, 0);
        /* float32: the same values (products of quarters are exact) */
        tj_tensor *o32 = tj_prelu(tj_to_copy(x, TJ_FLOAT32), tj_to_copy(w, TJ_FLOAT32));
        cr_expect_eq(tj_tensor_dtype(o32), TJ_FLOAT32);
        test_expect_close(o32, pc->out, nx, 0, 0);
        tj_tensor *gx32, *gw32;
        cr_assert_eq(tj_prelu_backward(tj_to_copy(gy, TJ_FLOAT32), tj_to_copy(x, TJ_FLOAT32), tj_to_copy(w, TJ_FLOAT32),
                                       &gx32, &gw32), TJ_OK, "%s", tj_last_error());
        test_expect_close(gx32, pc->gx, nx, 0, 0);
        test_expect_close(gw32, pc->gw, nw, 1e-7, 0);
    }
}

/* nan and -0 take the weighted branch (x > 0 is false), as ATen's kernel */
Test(opsbatch3, prelu_nan_infinities_and_signed_zeros_as_pytorch)
{
    tj_tensor *x = test_f64(1, (int64_t[]){6}, PRELU_SPECIAL_X);
    for (int f32 = 0; f32 < 2; f32++) {
        tj_tensor *xx = f32 ? tj_to_copy(x, TJ_FLOAT32) : x;
        tj_dtype dt = tj_tensor_dtype(xx);
        tj_tensor *half = tj_prelu(xx, tj_full((int64_t[]){1}, 1, tj_v_float(0.5), dt));
        test_expect_close(half, PRELU_SPECIAL_OUT, 6, 0, 0);
        double v[6];
        cr_assert_eq(tj_tensor_copy_to(tj_to_copy(half, TJ_FLOAT64), v), TJ_OK);
        cr_expect(signbit(v[1]) && !signbit(v[2]), "-0 * 0.5 is -0, +0 stays +0");
        test_expect_close(tj_prelu(xx, tj_full((int64_t[]){1}, 1, tj_v_float(NAN), dt)), PRELU_SPECIAL_NAN_W_OUT, 6, 0,
                          0);
    }
}

/* A transposed self and a stepped weight give their contiguous copies'
 * values, in both operators. */
Test(opsbatch3, prelu_reads_strided_inputs)
{
    tj_tensor *xt = tj_transpose(test_random_f32(3, (int64_t[]){2, 4, 3}, 7), 1, 2); /* [2, 3, 4], strided */
    tj_tensor *w = tj_slice(test_random_f32(1, (int64_t[]){6}, 8), 0, true, 0, true, 6, 2);
    tj_tensor *gy = tj_transpose(test_random_f32(3, (int64_t[]){2, 4, 3}, 9), 1, 2);
    cr_assert(!tj_tensor_is_contiguous(xt) && !tj_tensor_is_contiguous(w));
    test_expect_same(tj_prelu(xt, w), tj_prelu(tj_clone(xt), tj_clone(w)), "strided prelu");
    tj_tensor *a[2], *b[2];
    cr_assert_eq(tj_prelu_backward(gy, xt, w, &a[0], &a[1]), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_prelu_backward(tj_clone(gy), tj_clone(xt), tj_clone(w), &b[0], &b[1]), TJ_OK, "%s",
                 tj_last_error());
    test_expect_same(a[0], b[0], "strided grad_self");
    test_expect_same(a[1], b[1], "strided grad_weight");
    /* an empty batch: empty output, zero weight gradient */
    tj_tensor *e = tj_zeros((int64_t[]){0, 3}, 2, TJ_FLOAT32), *w3 = tj_ones((int64_t[]){3}, 1, TJ_FLOAT32);
    tj_tensor *ge, *gwe;
    cr_expect_eq(tj_tensor_numel(tj_prelu(e, w3)), 0);
    cr_assert_eq(tj_prelu_backward(e, e, w3, &ge, &gwe), TJ_OK, "%s", tj_last_error());
    test_expect_close(gwe, (const double[]){0, 0, 0}, 3, 0, 0);
}

Test(opsbatch3, prelu_bad_inputs_fail_naming_the_operator)
{
    tj_tensor *x = test_random_f32(2, (int64_t[]){2, 3}, 1);
    tj_tensor *w2 = test_random_f32(1, (int64_t[]){2}, 2), *w3 = test_random_f32(1, (int64_t[]){3}, 3);
    test_expect_error(tj_prelu(x, w2), TJ_ERR_SHAPE, "aten::prelu",
                      "Found parameter numbers = 2 and channel size = 3");
    test_expect_error(tj_prelu(test_random_f32(1, (int64_t[]){3}, 4), w3), TJ_ERR_SHAPE, "aten::prelu",
                      "channel size = 1");
    test_expect_error(tj_prelu(tj_sum(x, TJ_DTYPE_NONE), w3), TJ_ERR_SHAPE, "aten::prelu",
                      "Not allow zero-dim input tensor");
    /* the count is checked before the rank: 3 x 1 weights fit [2, 3]'s channels, not [3]'s */
    test_expect_error(tj_prelu(x, tj_view(w3, (int64_t[]){3, 1}, 2)), TJ_ERR_SHAPE, "aten::prelu",
                      "scalar or 1D tensor, but got ndim = 2");
    test_expect_error(tj_prelu(test_random_f32(1, (int64_t[]){3}, 4), tj_view(w3, (int64_t[]){3, 1}, 2)),
                      TJ_ERR_SHAPE, "aten::prelu", "Found parameter numbers = 3 and channel size = 1");
    test_expect_error(tj_prelu(x, test_random_f32(2, (int64_t[]){1, 1}, 5)), TJ_ERR_SHAPE, "aten::prelu",
                      "Expected `weight` to be a scalar or 1D tensor, but got ndim = 2");
    test_expect_error(tj_prelu(x, tj_to_copy(w3, TJ_FLOAT64)), TJ_ERR_DTYPE, "aten::prelu", "same dtype");
    test_expect_error(tj_prelu(tj_to_copy(x, TJ_INT64), tj_to_copy(w3, TJ_INT64)), TJ_ERR_DTYPE, "aten::prelu",
                      "int64");
    tj_tensor *a, *b;
    cr_expect_eq(tj_prelu_backward(x, x, w2, &a, &b), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "aten::prelu_backward") && strstr(tj_last_error(), "channel size"), "%s",
              tj_last_error());
    cr_expect_eq(tj_prelu_backward(tj_to_copy(x, TJ_FLOAT64), x, w3, &a, &b), TJ_ERR_DTYPE);
    cr_expect(strstr(tj_last_error(), "aten::prelu_backward"), "%s", tj_last_error());
    cr_expect_eq(tj_prelu_backward(test_random_f32(2, (int64_t[]){2, 4}, 6), x, w3, &a, &b), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "aten::prelu_backward") && strstr(tj_last_error(), "[2, 4]"), "%s",
              tj_last_error());
}

/* grad of sum(prelu(x, w) ^ 2) in x and w, from detached inputs */
static tj_status prelu_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]), *w = tj_tensor_detach(in[1]);
    if (!x || !w || tj_tensor_set_requires_grad(x, true) != TJ_OK || tj_tensor_set_requires_grad(w, true) != TJ_OK)
        return tj_last_status();
    tj_tensor *y = tj_prelu(x, w), *loss = tj_sum(tj_mul(y, y), TJ_DTYPE_NONE);
    *n_out = 3;
    out[0] = y;
    return loss ? tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){x, w}, 2, &out[1]) : tj_last_status();
}

/* prelu_backward differentiated in its three inputs */
static tj_status prelu_double_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *t[3];
    for (int k = 0; k < 3; k++)
        if (!(t[k] = tj_tensor_detach(in[k])) || tj_tensor_set_requires_grad(t[k], true) != TJ_OK)
            return tj_last_status();
    tj_tensor *gx, *gw;
    tj_status st = tj_prelu_backward(t[0], t[1], t[2], &gx, &gw);
    if (st != TJ_OK) return st;
    tj_tensor *loss = tj_add(tj_sum(tj_mul(gx, gx), TJ_DTYPE_NONE), tj_sum(tj_mul(gw, gw), TJ_DTYPE_NONE));
    *n_out = 3;
    return loss ? tj_autograd_grad(&loss, 1, NULL, t, 3, out) : tj_last_status();
}

Test(opsbatch3, prelu_traces_as_pytorch_and_replays_and_decomposes_as_eager)
{
    const int64_t xs[3] = {2, 3, 4};
    for (int one = 0; one < 2; one++) {
        tj_tensor *x = test_f64_grad(PRELU_X, 3, xs, false);
        tj_tensor *w = test_f64_grad(PRELU_W, 1, (int64_t[]){one ? 1 : 3}, false);
        const char *want[] = {"aten.detach.default(%arg0_1)", "aten.prelu.default(%detach, %detach_1)",
                              "aten.prelu_backward.default("};
        test_expect_traced(prelu_step, (tj_tensor *[]){x, w}, 2, 3, want, 3, NULL, 1e-15);
        tj_tensor *gy = test_f64_grad(PRELU_GY, 3, xs, false);
        /* 1.13's prelu_double_backward: masks converted with _to_copy, a second prelu_backward for grad_output */
        const char *want2[] = {"aten.gt.Scalar(", "aten.le.Scalar(", "aten._to_copy.default(",
                               "aten.prelu_backward.default("};
        test_expect_traced(prelu_double_step, (tj_tensor *[]){gy, x, w}, 3, 3, want2, 4, NULL, 1e-15);
    }
}

/* ---- index_fill.int_Tensor, index_fill_.int_Tensor ---- */

static void expect_i64(tj_tensor *t, const int64_t *want, int64_t n)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(t), TJ_INT64);
    int64_t got[64];
    cr_assert(n <= 64 && tj_tensor_numel(t) == n);
    cr_assert_eq(tj_tensor_copy_to(t, got), TJ_OK, "%s", tj_last_error());
    for (int64_t i = 0; i < n; i++) cr_expect_eq(got[i], want[i], "element %lld: %lld, not %lld", (long long)i,
                                                  (long long)got[i], (long long)want[i]);
}

Test(opsbatch3, index_fill_tensor_matches_pytorch_with_gradients)
{
    const int64_t s34[2] = {3, 4};
    tj_tensor *x = test_f64_grad(IF_X, 2, s34, true), *v = test_f64_grad((const double[]){-2.5}, 0, NULL, true);
    tj_tensor *index = test_i64(1, (int64_t[]){3}, IF_I1);
    tj_tensor *out = tj_index_fill_tensor(x, 1, index, v);
    test_expect_close(out, IF_OUT, 12, 0, 0);
    tj_tensor *loss = weighted_sum(out, IF_GY), *g[2];
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){x, v}, 2, g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g[0], IF_GX, 12, 0, 0);
    test_expect_close(g[1], IF_GV, 1, 0, 0);
    cr_expect_eq(tj_tensor_ndim(g[1]), 0);
    /* negative indices wrap (and, unlike PyTorch 1.13's index_select, in the value's gradient too) */
    tj_tensor *neg = test_i64(1, (int64_t[]){2}, (const int64_t[]){-1, -4});
    tj_tensor *vq = test_f64_grad((const double[]){0.75}, 0, NULL, true);
    tj_tensor *o2 = tj_index_fill_tensor(x, 1, neg, vq);
    test_expect_close(o2, IF_NEG_OUT, 12, 0, 0);
    test_expect_close(test_grad1(vq, o2, test_f64(2, s34, IF_GY)), (const double[]){-1.75}, 1, 0, 0);
    /* float32 self, float64 value; int64 self, float value truncating */
    tj_tensor *o32 = tj_index_fill_tensor(tj_to_copy(x, TJ_FLOAT32), 1, index, v);
    cr_expect_eq(tj_tensor_dtype(o32), TJ_FLOAT32);
    test_expect_close(o32, IF_OUT, 12, 0, 0);
    tj_tensor *xi = tj_view(tj_arange(tj_v_int(0), tj_v_int(12), tj_v_int(1), TJ_INT64), s34, 2);
    tj_tensor *v32 = tj_full(NULL, 0, tj_v_float(-7.9), TJ_FLOAT32);
    expect_i64(tj_index_fill_tensor(xi, 0, test_i64(1, (int64_t[]){1}, (const int64_t[]){1}), v32), IF_INT_OUT, 12);
    /* in place: the same values in self, which is returned */
    tj_tensor *y = tj_clone(tj_tensor_detach(x));
    cr_expect_eq(tj_index_fill_tensor_(y, 1, index, tj_tensor_detach(v)), y);
    test_expect_close(y, IF_OUT, 12, 0, 0);
    /* a value that is an element of self: refused in place (PyTorch reads it first), clear out of place */
    tj_tensor *z = tj_clone(tj_tensor_detach(x)), *one = test_i64(1, (int64_t[]){1}, (const int64_t[]){1});
    tj_tensor *elem = tj_select(tj_select(z, 0, 1), 0, 0); /* z[1, 0] */
    test_expect_error(tj_index_fill_tensor_(z, 0, one, elem), TJ_ERR_UNSUPPORTED, "aten::index_fill_.int_Tensor",
                      "clone() it first");
    double zr[12];
    cr_assert_eq(tj_tensor_copy_to(tj_index_fill_tensor(z, 0, one, elem), zr), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < 4; i++) cr_expect_eq(zr[4 + i], IF_X[4], "row 1, column %d: %g", i, zr[4 + i]);
}

/* strided self and index give their contiguous copies' values */
Test(opsbatch3, index_fill_tensor_reads_strided_inputs)
{
    tj_tensor *xt = tj_transpose(test_random_f32(2, (int64_t[]){5, 3}, 11), 0, 1);
    tj_tensor *ix = tj_slice(test_i64(1, (int64_t[]){4}, (const int64_t[]){4, 9, 1, 9}), 0, true, 0, true, 4, 2);
    tj_tensor *v = tj_full(NULL, 0, tj_v_float(3.25), TJ_FLOAT32);
    test_expect_same(tj_index_fill_tensor(xt, 1, ix, v), tj_index_fill_tensor(tj_clone(xt), 1, tj_clone(ix), v),
                     "strided");
    tj_tensor *y = tj_clone(xt), *yt = tj_transpose(tj_clone(tj_transpose(xt, 0, 1)), 0, 1);
    cr_assert(!tj_tensor_is_contiguous(yt));
    tj_index_fill_tensor_(y, 1, ix, v);
    tj_index_fill_tensor_(yt, 1, ix, v);
    test_expect_same(yt, y, "strided self in place");
}

Test(opsbatch3, index_fill_tensor_bad_inputs_fail_naming_the_operator)
{
    tj_tensor *x = test_random_f32(2, (int64_t[]){3, 4}, 12), *v = tj_full(NULL, 0, tj_v_float(1), TJ_FLOAT32);
    tj_tensor *i = test_i64(1, (int64_t[]){1}, (const int64_t[]){1});
    const char *op = "aten::index_fill.int_Tensor";
    test_expect_error(tj_index_fill_tensor(x, 1, i, tj_view(v, (int64_t[]){1}, 1)), TJ_ERR_SHAPE, op,
                      "only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s)");
    test_expect_error(tj_index_fill_tensor(x, 1, test_i64(1, (int64_t[]){1}, (const int64_t[]){4}), v), TJ_ERR_INDEX,
                      op, "index 4 is out of bounds for dimension 1 with size 4");
    test_expect_error(tj_index_fill_tensor(x, 2, i, v), TJ_ERR_INDEX, op, "");
    test_expect_error(tj_index_fill_tensor(x, 1, tj_to_copy(i, TJ_FLOAT32), v), TJ_ERR_DTYPE, op, "");
    test_expect_error(tj_index_fill_tensor(x, 1, tj_view(i, (int64_t[]){1, 1}, 2), v), TJ_ERR_SHAPE, op, "");
    tj_tensor *xi = tj_to_copy(x, TJ_INT64);
    test_expect_error(tj_index_fill_tensor(xi, 1, i, tj_full(NULL, 0, tj_v_float(NAN), TJ_FLOAT64)),
                      TJ_ERR_INVALID_ARGUMENT, op, "cannot be converted to type int64 without overflow");
    test_expect_error(tj_index_fill_tensor(x, 1, i, tj_full(NULL, 0, tj_v_float(1e300), TJ_FLOAT64)),
                      TJ_ERR_INVALID_ARGUMENT, op, "without overflow");
    test_expect_error(tj_index_fill_tensor_(x, 1, i, tj_view(v, (int64_t[]){1}, 1)), TJ_ERR_SHAPE,
                      "aten::index_fill_.int_Tensor", "0-dimensional");
}

/* the self and value gradients of index_fill.int_Tensor, from detached inputs */
static tj_status index_fill_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]), *v = tj_tensor_detach(in[2]);
    if (!x || !v || tj_tensor_set_requires_grad(x, true) != TJ_OK || tj_tensor_set_requires_grad(v, true) != TJ_OK)
        return tj_last_status();
    tj_tensor *y = tj_index_fill_tensor(x, 1, in[1], v), *loss = tj_sum(tj_mul(y, y), TJ_DTYPE_NONE);
    *n_out = 3;
    out[0] = y;
    return loss ? tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){x, v}, 2, &out[1]) : tj_last_status();
}

/* the in-place form on a clone */
static tj_status index_fill_inplace_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_clone(in[0]);
    *n_out = 1;
    return (out[0] = tj_index_fill_tensor_(y, 0, in[1], in[2])) ? TJ_OK : tj_last_status();
}

Test(opsbatch3, index_fill_tensor_traces_as_pytorch_and_replays_and_decomposes_as_eager)
{
    tj_tensor *in[3] = {test_f64(2, (int64_t[]){3, 4}, IF_X), test_i64(1, (int64_t[]){3}, IF_I1),
                        tj_full(NULL, 0, tj_v_float(-2.5), TJ_FLOAT64)};
    const char *want[] = {"aten.index_fill.int_Tensor(%detach, 1, %arg1_1, %detach_1)",
                          "aten.index_fill.int_Scalar(%add, 1, %arg1_1, 0)"};
    test_expect_traced(index_fill_step, in, 3, 3, want, 2, NULL, 0);
    tj_tensor *in2[3] = {in[0], test_i64(1, (int64_t[]){2}, (const int64_t[]){2, -3}), in[2]};
    const char *want2[] = {"aten.index_fill_.int_Tensor(%clone, 0, %arg1_1, %arg2_1)"};
    test_expect_traced(index_fill_inplace_step, in2, 3, 1, want2, 1, NULL, 0);
}

/* In place, the value's gradient is the out-of-place one's (and index_copy_'s
 * source gets its gradient too: the forms share their partner's formula). */
Test(opsbatch3, index_fill_tensor_and_index_copy_in_place_pass_gradients_to_their_value_and_source)
{
    const int64_t s34[2] = {3, 4};
    tj_tensor *x = test_f64_grad(IF_X, 2, s34, true), *v = test_f64_grad((const double[]){-2.5}, 0, NULL, true);
    tj_tensor *index = test_i64(1, (int64_t[]){3}, IF_I1), *g[2];
    tj_tensor *y = tj_mul_scalar(x, tj_v_int(1));
    cr_assert_not_null(tj_index_fill_tensor_(y, 1, index, v), "%s", tj_last_error());
    tj_tensor *loss = weighted_sum(y, IF_GY);
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){x, v}, 2, g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g[0], IF_GX, 12, 0, 0);
    test_expect_close(g[1], IF_GV, 1, 0, 0);
    /* index_copy_ of two columns: the source's gradient is the gradient's columns 2 and 0 */
    tj_tensor *src = test_f64_grad(IF_X, 2, (int64_t[]){3, 2}, true);
    tj_tensor *z = tj_mul_scalar(x, tj_v_int(1)), *two = test_i64(1, (int64_t[]){2}, (const int64_t[]){2, 0});
    cr_assert_not_null(tj_index_copy_(z, 1, two, src), "%s", tj_last_error());
    loss = weighted_sum(z, IF_GY);
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, &src, 1, g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g[0], (const double[]){0.75, -0.75, 1, -0.5, 1.25, -0.25}, 6, 0, 0);
}

/* ---- celu_, selu_, mish_, scatter_.src, scatter_.value ---- */

/* the in-place activations on a clone of in[0], and the scatters on a clone of in[1] */
static tj_status inplace_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_clone(in[0]), *z = tj_clone(in[1]);
    if (!tj_celu_(y, tj_v_float(0.5)) || !tj_selu_(y) || !tj_mish_(y)) return tj_last_status();
    if (!tj_scatter_(z, 0, in[2], in[3]) || !tj_scatter_value_(z, 1, in[2], tj_v_float(-1.0))) return tj_last_status();
    *n_out = 2;
    out[0] = y, out[1] = z;
    return TJ_OK;
}

Test(opsbatch3, activation_and_scatter_in_place_forms_trace_as_pytorch_and_equal_the_out_of_place_ones)
{
    tj_tensor *x = test_f64(2, (int64_t[]){3, 4}, IF_X), *s = test_f64(2, (int64_t[]){3, 4}, IF_GY);
    tj_tensor *index = test_i64(2, (int64_t[]){2, 3}, (const int64_t[]){0, 1, 2, 2, 0, 1});
    tj_tensor *src = test_f64(2, (int64_t[]){2, 4}, PRELU_X);
    tj_tensor *in[4] = {x, s, index, src}, *got[2];
    int n;
    cr_assert_eq(inplace_step(NULL, in, 4, got, &n), TJ_OK, "%s", tj_last_error());
    tj_tensor *want = tj_mish(tj_selu(tj_celu(x, tj_v_float(0.5))));
    test_expect_same(got[0], want, "celu_, selu_, mish_");
    test_expect_same(got[1], tj_scatter_value(tj_scatter(s, 0, index, src), 1, index, tj_v_float(-1.0)),
                     "scatter_.src, scatter_.value");
    /* PyTorch 1.13's make_fx: celu_, elu_ for selu_ (implicit), mish_, scatter_.src, scatter_.value */
    const char *want_text[] = {"aten.celu_.default(%clone, 0.5)",
                               "aten.elu_.default(%celu_, 1.6732632423543772, 1.0507009873554805",
                               "aten.mish_.default(%elu_)", "aten.scatter_.src(%clone_1, 0, %arg2_1, %arg3_1)",
                               "aten.scatter_.value(%scatter_, 1, %arg2_1, -1.0)"};
    test_expect_traced(inplace_step, in, 4, 2, want_text, 5, "aten.selu_", 1e-15);
    /* errors name the operator called (selu_'s: elu_, which it is) */
    tj_tensor *xi = tj_to_copy(x, TJ_INT64);
    test_expect_error(tj_celu_(xi, tj_v_float(1)), TJ_ERR_DTYPE, "aten::celu_", "");
    test_expect_error(tj_celu_(tj_clone(x), tj_v_int(0)), TJ_ERR_INVALID_ARGUMENT, "aten::celu_", "alpha cannot be 0");
    test_expect_error(tj_mish_(xi), TJ_ERR_DTYPE, "aten::mish_", "");
    test_expect_error(tj_selu_(xi), TJ_ERR_DTYPE, "aten::selu_", "aten::elu_");
    test_expect_error(tj_scatter_(tj_clone(s), 0, index, tj_to_copy(src, TJ_FLOAT32)), TJ_ERR_DTYPE, "aten::scatter_.src",
                      "");
    test_expect_error(tj_scatter_value_(xi, 0, tj_to_copy(index, TJ_FLOAT32), tj_v_int(1)), TJ_ERR_DTYPE,
                      "aten::scatter_.value", "");
}

/* Under autograd the forms give the out-of-place gradients: selu_ through
 * elu_ (from its result, as celu_: as in PyTorch, writing the result of
 * one again fails the backward pass), scatter_.src's src its own */
Test(opsbatch3, in_place_activation_and_scatter_gradients_equal_the_out_of_place_ones)
{
    tj_tensor *x = test_f64_grad(IF_X, 2, (int64_t[]){3, 4}, true), *gy = test_f64(2, (int64_t[]){3, 4}, IF_GY);
    tj_tensor *y = tj_mul_scalar(x, tj_v_int(1)), *yc = tj_mul_scalar(x, tj_v_int(1));
    cr_assert_not_null(tj_selu_(tj_mish_(y)), "%s", tj_last_error());
    cr_assert_not_null(tj_celu_(yc, tj_v_float(2.0)), "%s", tj_last_error());
    /* from the result, grad * (result + alpha) for elu_, the gradients round otherwise */
    tj_tensor *want = tj_contiguous(test_grad1(x, tj_selu(tj_mish(x)), gy));
    test_expect_close(test_grad1(x, y, gy), tj_tensor_data(want), 12, 1e-14, 0);
    want = tj_contiguous(test_grad1(x, tj_celu(x, tj_v_float(2.0)), gy));
    test_expect_close(test_grad1(x, yc, gy), tj_tensor_data(want), 12, 1e-14, 0);
    tj_tensor *src = test_f64_grad(PRELU_X, 2, (int64_t[]){2, 4}, true);
    tj_tensor *index = test_i64(2, (int64_t[]){2, 3}, (const int64_t[]){0, 1, 2, 2, 0, 1});
    tj_tensor *z = tj_mul_scalar(x, tj_v_int(1));
    cr_assert_not_null(tj_scatter_(z, 0, index, src), "%s", tj_last_error());
    test_expect_same(test_grad1(src, z, gy), test_grad1(src, tj_scatter(x, 0, index, src), gy), "scatter_.src's src");
}
