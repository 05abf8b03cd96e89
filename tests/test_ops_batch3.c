/* Session 24 (opsbatch3) operators: prelu and prelu_backward (values,
 * gradients and double backward against PyTorch 1.13 in float64 and
 * float32, strided inputs, errors, the graphs make_fx records, replayed
 * and decomposed), index_fill.int_Tensor, in-place forms, and scatter's
 * reduce overloads (scatter.reduce, scatter.value_reduce and their
 * in-place forms: float64, float32 and int64 values, reduction order,
 * 0-dim and strided inputs, errors, no derivative, graphs). Reference values: tests/opsbatch3_ref.h, written by
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

/* prelu_backward(in[0], in[1], in[2]) */
static tj_status prelu_backward_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    *n_out = 2;
    return tj_prelu_backward(in[0], in[1], in[2], &out[0], &out[1]);
}

/* The kernel takes a grad_output broadcasting to self's shape (a 0-dim one
 * here): the decomposition broadcasts the weight along self's dim 1 as
 * well, by self's rank, not grad_output's */
Test(opsbatch3, prelu_backward_decomposes_as_its_kernel_for_a_broadcast_grad_output)
{
    const int64_t xs[3] = {2, 3, 4};
    for (int one = 0; one < 2; one++) {
        tj_tensor *in[3] = {tj_tensor_scalar_f64(0.75), test_f64_grad(PRELU_X, 3, xs, false),
                            test_f64_grad(PRELU_W, 1, (int64_t[]){one ? 1 : 3}, false)};
        test_expect_traced(prelu_backward_step, in, 3, 2, (const char *[]){"aten.prelu_backward.default("}, 1, NULL,
                           1e-15);
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
    /* a value that is an element of self, out of place and in place: read
     * first (torch 1.13's index_fill_ takes value.item(): z.index_fill_(0,
     * tensor([1]), z[1, 0]) fills row 1 with z[1, 0]) */
    tj_tensor *z = tj_clone(tj_tensor_detach(x)), *one = test_i64(1, (int64_t[]){1}, (const int64_t[]){1});
    tj_tensor *elem = tj_select(tj_select(z, 0, 1), 0, 0); /* z[1, 0] */
    double zr[12];
    cr_assert_eq(tj_tensor_copy_to(tj_index_fill_tensor(z, 0, one, elem), zr), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < 4; i++) cr_expect_eq(zr[4 + i], IF_X[4], "row 1, column %d: %g", i, zr[4 + i]);
    cr_assert_eq(tj_index_fill_tensor_(z, 0, one, elem), z, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_copy_to(z, zr), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < 4; i++) cr_expect_eq(zr[4 + i], IF_X[4], "in place: row 1, column %d: %g", i, zr[4 + i]);
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

/* scatter_ reads an index or src sharing self's memory before writing:
 * each index taken from self's old value, never one already overwritten
 * (which pointed outside self: a crash). Self itself is refused, as ATen
 * (tests/test_index_overlap.c); views ATen cannot judge (x[:, ::2], not
 * dense) are accepted, as there. torch 1.13, x = tensor([[1, 9, 2, 9, 0, 9]]):
 * x.scatter_(1, tensor([[1, 3, 5]]), x[:, ::2]) -> [[1, 1, 2, 2, 0, 0]]. With
 * x = tensor([[4, 9, 2, 9, 0, 9]]), x.scatter_(1, x[:, ::2], 1000000) and
 * x.scatter_(1, x[:, ::2], tensor([[-5, 7, 7]])) fail in ATen, which reads
 * each index as it writes ("index 1000000 is out of bounds for dimension 1
 * with size 6"); here they read the indices 4, 2, 0 first. */
Test(opsbatch3, scatter_in_place_reads_an_index_or_src_in_self_before_writing)
{
    const int64_t shape[] = {1, 6}, s13[] = {1, 3}, old[] = {4, 9, 2, 9, 0, 9};
    tj_tensor *x = test_i64(2, shape, old);
    cr_assert_eq(tj_scatter_value_(x, 1, tj_slice(x, 1, true, 0, true, 6, 2), tj_v_int(1000000)), x, "%s",
                 tj_last_error());
    test_expect_close(x, (const double[]){1000000, 9, 1000000, 9, 1000000, 9}, 6, 0, 0);
    x = test_i64(2, shape, old);
    cr_assert_eq(tj_scatter_(x, 1, tj_slice(x, 1, true, 0, true, 6, 2), test_i64(2, s13, (const int64_t[]){-5, 7, 7})),
                 x, "%s", tj_last_error());
    test_expect_close(x, (const double[]){7, 9, 7, 9, -5, 9}, 6, 0, 0);
    x = test_i64(2, shape, (const int64_t[]){1, 9, 2, 9, 0, 9});
    cr_assert_eq(tj_scatter_(x, 1, test_i64(2, s13, (const int64_t[]){1, 3, 5}), tj_slice(x, 1, true, 0, true, 6, 2)),
                 x, "%s", tj_last_error());
    test_expect_close(x, (const double[]){1, 1, 2, 2, 0, 0}, 6, 0, 0);
    x = test_i64(2, s13, (const int64_t[]){1, 2, 0});
    test_expect_error(tj_scatter_value_(x, 1, x, tj_v_int(1000000)), TJ_ERR_UNSUPPORTED, "aten::scatter_.value",
                      "some elements of index [1, 3]");
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

/* ---- scatter.reduce, scatter.value_reduce, scatter_.reduce, scatter_.value_reduce ---- */

static const char *const add_mul[2] = {"add", "multiply"};

/* make_opsbatch3_refs.py's SCR_ / SCV_<ADD|MUL>_D<dim>_OUT, [reduce][dim] */
static const double *const scr_refs[2][2] = {{SCR_ADD_D0_OUT, SCR_ADD_D1_OUT}, {SCR_MUL_D0_OUT, SCR_MUL_D1_OUT}};
static const double *const scv_refs[2][2] = {{SCV_ADD_D0_OUT, SCV_ADD_D1_OUT}, {SCV_MUL_D0_OUT, SCV_MUL_D1_OUT}};

/* make_opsbatch3_refs.py's inputs along dim d: self [3, 4], index [2, 4]
 * (d 0) or [3, 2] (d 1), src [2, 4] or [3, 3]; float64 */
typedef struct scr_inputs {
    tj_tensor *x, *index, *src;
} scr_inputs;

static scr_inputs scr_case(int d)
{
    static const int64_t s34[2] = {3, 4}, ishape[2][2] = {{2, 4}, {3, 2}}, sshape[2][2] = {{2, 4}, {3, 3}};
    return (scr_inputs){test_f64(2, s34, SCR_X), test_i64(2, ishape[d], d ? SCR_I1 : SCR_I0),
                        test_f64(2, sshape[d], SCR_SRC)};
}

Test(opsbatch3, scatter_reduce_overloads_match_pytorch_in_float64_float32_and_int64)
{
    for (int r = 0; r < 2; r++)
        for (int d = 0; d < 2; d++) {
            scr_inputs c = scr_case(d);
            tj_tensor *out = tj_scatter_src_reduce(c.x, d, c.index, c.src, add_mul[r]);
            test_expect_close(out, scr_refs[r][d], 12, 0, 0);
            tj_tensor *v = tj_scatter_value_reduce(c.x, d, c.index, tj_v_float(-1.5), add_mul[r]);
            test_expect_close(v, scv_refs[r][d], 12, 0, 0);
            /* scatter_reduce.two's sum / prod with self: its decomposition */
            test_expect_same(out, tj_scatter_reduce(c.x, d, c.index, c.src, r ? "prod" : "sum", true), add_mul[r]);
            /* float32: the same values (products of halves and quarters are exact) */
            tj_tensor *x32 = tj_to_copy(c.x, TJ_FLOAT32);
            tj_tensor *o32 = tj_scatter_src_reduce(x32, d, c.index, tj_to_copy(c.src, TJ_FLOAT32), add_mul[r]);
            test_assert_dtype_shape(o32, TJ_FLOAT32, 2, (int64_t[]){3, 4});
            test_expect_close(o32, scr_refs[r][d], 12, 0, 0);
            tj_tensor *v32 = tj_scatter_value_reduce(x32, d, c.index, tj_v_float(-1.5), add_mul[r]);
            test_assert_dtype_shape(v32, TJ_FLOAT32, 2, (int64_t[]){3, 4});
            test_expect_close(v32, scv_refs[r][d], 12, 0, 0);
        }
    /* int64: sums and products of src along dim 0; the value 2.7 truncated to 2 along dim 1 */
    const int64_t s34[2] = {3, 4};
    tj_tensor *xi = tj_sub_scalar(tj_view(tj_arange(tj_v_int(0), tj_v_int(12), tj_v_int(1), TJ_INT64), s34, 2),
                                  tj_v_int(5));
    tj_tensor *si = test_i64(2, (int64_t[]){2, 4}, SCR_I64_SRC);
    tj_tensor *i0 = test_i64(2, (int64_t[]){2, 4}, SCR_I0), *i1 = test_i64(2, (int64_t[]){3, 2}, SCR_I1);
    expect_i64(tj_scatter_src_reduce(xi, 0, i0, si, "add"), SCR_I64_ADD, 12);
    expect_i64(tj_scatter_src_reduce(xi, 0, i0, si, "multiply"), SCR_I64_MUL, 12);
    expect_i64(tj_scatter_value_reduce(xi, 1, i1, tj_v_float(2.7), "add"), SCV_I64_ADD, 12);
    expect_i64(tj_scatter_value_reduce(xi, 1, i1, tj_v_float(2.7), "multiply"), SCV_I64_MUL, 12);
}

/* The values reduced into one element arrive in index order (PyTorch's
 * CPU loop): make_opsbatch3_refs.py's SCR_ORDER_<F32|F64>; a 0-dim self
 * and index take part as one element; an empty index gives a copy. */
Test(opsbatch3, scatter_reduce_overloads_reduce_in_index_order_and_take_0_dim_and_empty_inputs)
{
    tj_tensor *zeros = test_i64(1, (int64_t[]){4}, (const int64_t[]){0, 0, 0, 0});
    for (int f64 = 0; f64 < 2; f64++) {
        tj_dtype dt = f64 ? TJ_FLOAT64 : TJ_FLOAT32;
        double add_big = f64 ? 1e17 : 1e8, mul_big = f64 ? 1e300 : 1e30;
        const double *want = f64 ? SCR_ORDER_F64 : SCR_ORDER_F32;
        tj_tensor *a = tj_to_copy(test_f64(1, (int64_t[]){1}, &add_big), dt);
        tj_tensor *as = tj_to_copy(test_f64(1, (int64_t[]){4}, (const double[]){1, 1, -add_big, 1}), dt);
        test_expect_close(tj_scatter_src_reduce(a, 0, zeros, as, "add"), &want[0], 1, 0, 0);
        tj_tensor *m = tj_full((int64_t[]){1}, 1, tj_v_float(2), dt);
        tj_tensor *ms = tj_to_copy(test_f64(1, (int64_t[]){4}, (const double[]){mul_big, mul_big, 0, 3}), dt);
        test_expect_close(tj_scatter_src_reduce(m, 0, zeros, ms, "multiply"), &want[1], 1, 0, 0);
    }
    tj_tensor *x0 = test_f64(0, NULL, (const double[]){3}), *i0 = test_i64(0, NULL, (const int64_t[]){0});
    tj_tensor *s0 = test_f64(0, NULL, (const double[]){2.5});
    tj_tensor *r[3] = {tj_scatter_src_reduce(x0, 0, i0, s0, "add"), tj_scatter_src_reduce(x0, 0, i0, s0, "multiply"),
                       tj_scatter_value_reduce(x0, -1, i0, tj_v_int(4), "multiply")};
    for (int k = 0; k < 3; k++) {
        test_assert_dtype_shape(r[k], TJ_FLOAT64, 0, NULL);
        test_expect_close(r[k], &SCR_0DIM[k], 1, 0, 0);
    }
    scr_inputs c = scr_case(0);
    tj_tensor *none = test_i64(2, (int64_t[]){0, 4}, NULL);
    test_expect_same(tj_scatter_src_reduce(c.x, 0, none, c.src, "multiply"), c.x, "empty index");
    test_expect_same(tj_scatter_value_reduce(c.x, 1, test_i64(2, (int64_t[]){3, 0}, NULL), tj_v_float(9), "add"), c.x,
                     "empty index, a value");
}

/* transposed self, index and src (their contiguous copies' values) give the references */
Test(opsbatch3, scatter_reduce_overloads_read_strided_inputs)
{
    for (int d = 0; d < 2; d++) {
        scr_inputs c = scr_case(d);
        tj_tensor *xt = tj_t(tj_clone(tj_t(c.x))), *it = tj_t(tj_clone(tj_t(c.index))), *st = tj_t(tj_clone(tj_t(c.src)));
        cr_assert(!tj_tensor_is_contiguous(xt) && !tj_tensor_is_contiguous(it) && !tj_tensor_is_contiguous(st));
        for (int r = 0; r < 2; r++) {
            test_expect_close(tj_scatter_src_reduce(xt, d, it, st, add_mul[r]), scr_refs[r][d], 12, 0, 0);
            test_expect_close(tj_scatter_value_reduce(xt, d, it, tj_v_float(-1.5), add_mul[r]), scv_refs[r][d], 12, 0,
                              0);
        }
    }
}

/* In place: self is written and returned with its version bumped, a
 * strided self too; src may not be self itself (as ATen). */
Test(opsbatch3, scatter_reduce_in_place_forms_write_self_and_refuse_self_as_src)
{
    for (int r = 0; r < 2; r++)
        for (int d = 0; d < 2; d++) {
            scr_inputs c = scr_case(d);
            tj_tensor *y = tj_clone(c.x);
            uint32_t v = tj_tensor_version(y);
            cr_assert_eq(tj_scatter_src_reduce_(y, d, c.index, c.src, add_mul[r]), y, "%s", tj_last_error());
            cr_expect_gt(tj_tensor_version(y), v);
            test_expect_close(y, scr_refs[r][d], 12, 0, 0);
            tj_tensor *yt = tj_t(tj_clone(tj_t(c.x)));
            v = tj_tensor_version(yt);
            cr_assert_eq(tj_scatter_value_reduce_(yt, d, c.index, tj_v_float(-1.5), add_mul[r]), yt, "%s",
                         tj_last_error());
            cr_expect_gt(tj_tensor_version(yt), v);
            cr_expect(!tj_tensor_is_contiguous(yt));
            test_expect_close(yt, scv_refs[r][d], 12, 0, 0);
            /* self as src: refused, as ATen (tests/test_index_overlap.c) */
            tj_tensor *z = tj_clone(c.x);
            test_expect_error(tj_scatter_src_reduce_(z, d, c.index, z, add_mul[r]), TJ_ERR_UNSUPPORTED,
                              "aten::scatter_.reduce", "some elements of src");
        }
    /* a view of self (rows 1 and 2): the base sees the write, row 0 keeps its values */
    scr_inputs c = scr_case(1);
    tj_tensor *base = tj_clone(c.x), *rows = tj_slice(base, 0, true, 1, true, 3, 1);
    tj_tensor *index = tj_slice(c.index, 0, true, 0, true, 2, 1);
    tj_tensor *want = tj_scatter_value_reduce(tj_clone(rows), 1, index, tj_v_float(-1.5), "multiply");
    cr_assert_eq(tj_scatter_value_reduce_(rows, 1, index, tj_v_float(-1.5), "multiply"), rows, "%s", tj_last_error());
    test_expect_same(tj_slice(base, 0, true, 1, true, 3, 1), want, "the view's rows of the base");
    test_expect_same(tj_slice(base, 0, true, 0, true, 1, 1), tj_slice(c.x, 0, true, 0, true, 1, 1), "row 0");
}

/* Each error names the operator called and the offending value, shape or
 * dtype (in place, self keeps its values and version). */
Test(opsbatch3, scatter_reduce_overloads_bad_inputs_fail_naming_the_operator)
{
    scr_inputs c = scr_case(0);
    const char *op = "aten::scatter.reduce", *vop = "aten::scatter.value_reduce";
    /* PyTorch: "reduce argument must be either add or multiply." */
    test_expect_error(tj_scatter_src_reduce(c.x, 0, c.index, c.src, "sum"), TJ_ERR_INVALID_ARGUMENT, op,
                      "reduce argument must be either add or multiply, got \"sum\"");
    test_expect_error(tj_scatter_value_reduce(c.x, 0, c.index, tj_v_int(1), "mean"), TJ_ERR_INVALID_ARGUMENT, vop,
                      "got \"mean\"");
    test_expect_error(tj_scatter_src_reduce(c.x, 2, c.index, c.src, "add"), TJ_ERR_INDEX, op,
                      "dim 2 is out of range for a tensor of rank 2");
    test_expect_error(tj_scatter_value_reduce(c.x, -3, c.index, tj_v_int(1), "add"), TJ_ERR_INDEX, vop, "dim -3");
    tj_tensor *i3 = test_i64(2, (int64_t[]){1, 2}, (const int64_t[]){0, 3});
    test_expect_error(tj_scatter_src_reduce(c.x, 0, i3, c.src, "multiply"), TJ_ERR_INDEX, op,
                      "index 3 is out of bounds for dimension 0 with size 3");
    test_expect_error(tj_scatter_value_reduce(c.x, 1, test_i64(2, (int64_t[]){1, 2}, (const int64_t[]){-1, 0}),
                                              tj_v_int(1), "add"),
                      TJ_ERR_INDEX, vop, "index -1 is out of bounds for dimension 1 with size 4");
    test_expect_error(tj_scatter_src_reduce(c.x, 0, tj_zeros((int64_t[]){1, 5}, 2, TJ_INT64), c.src, "add"), TJ_ERR_SHAPE,
                      op, "expected index [1, 5] to be smaller than src [2, 4]");
    test_expect_error(tj_scatter_value_reduce(c.x, 0, tj_zeros((int64_t[]){1, 5}, 2, TJ_INT64), tj_v_int(1), "add"),
                      TJ_ERR_SHAPE, vop, "expected index [1, 5] to be smaller than self [3, 4]");
    test_expect_error(tj_scatter_src_reduce(c.x, 0, test_i64(1, (int64_t[]){2}, (const int64_t[]){0, 1}), c.src, "add"),
                      TJ_ERR_SHAPE, op, "same number of dimensions as the input tensor (1 != 2)");
    test_expect_error(tj_scatter_src_reduce(c.x, 0, c.index, tj_to_copy(c.src, TJ_FLOAT32), "add"), TJ_ERR_DTYPE, op,
                      "(float64 != float32)");
    test_expect_error(tj_scatter_src_reduce(c.x, 0, tj_to_copy(c.index, TJ_FLOAT32), c.src, "add"), TJ_ERR_DTYPE, op,
                      "expected dtype int64 for index, got float32");
    test_expect_error(tj_scatter_value_reduce(tj_to_copy(c.x, TJ_INT64), 0, c.index, tj_v_float(NAN), "multiply"),
                      TJ_ERR_INVALID_ARGUMENT, vop, "value nan cannot be converted to type int64");
    /* in place: the form's name; self unchanged */
    tj_tensor *y = tj_clone(c.x);
    uint32_t v = tj_tensor_version(y);
    test_expect_error(tj_scatter_src_reduce_(y, 0, c.index, c.src, "amax"), TJ_ERR_INVALID_ARGUMENT,
                      "aten::scatter_.reduce", "got \"amax\"");
    test_expect_error(tj_scatter_src_reduce_(y, 0, i3, c.src, "add"), TJ_ERR_INDEX, "aten::scatter_.reduce", "index 3");
    test_expect_error(tj_scatter_value_reduce_(y, 1, c.index, tj_v_int(1), "prod"), TJ_ERR_INVALID_ARGUMENT,
                      "aten::scatter_.value_reduce", "got \"prod\"");
    test_expect_error(tj_scatter_value_reduce_(y, 0, tj_to_copy(c.index, TJ_FLOAT64), tj_v_int(1), "add"), TJ_ERR_DTYPE,
                      "aten::scatter_.value_reduce", "got float64");
    cr_expect_eq(tj_tensor_version(y), v);
    test_expect_same(y, c.x, "self after the failed calls");
}

/* No derivative, as in PyTorch 1.13 ("derivative for aten::scatter is not
 * implemented"): the call runs and its result requires grad; a backward
 * pass reaching it fails naming the operator. */
Test(opsbatch3, scatter_reduce_overloads_have_no_derivative_as_in_pytorch)
{
    scr_inputs c = scr_case(0);
    tj_tensor *x = test_f64_grad(SCR_X, 2, (int64_t[]){3, 4}, true);
    tj_tensor *src = test_f64_grad(SCR_SRC, 2, (int64_t[]){2, 4}, true), *g;
    struct {
        tj_tensor *out, *wrt;
        const char *op;
    } cases[4] = {
        {tj_scatter_src_reduce(x, 0, c.index, src, "add"), x, "aten::scatter.reduce"},
        {tj_scatter_src_reduce(c.x, 0, c.index, src, "multiply"), src, "aten::scatter.reduce"},
        {tj_scatter_value_reduce(x, 0, c.index, tj_v_float(2), "multiply"), x, "aten::scatter.value_reduce"},
        {tj_scatter_src_reduce_(tj_mul_scalar(x, tj_v_int(1)), 0, c.index, c.src, "add"), x, "aten::scatter_.reduce"},
    };
    for (int k = 0; k < 4; k++) {
        cr_assert_not_null(cases[k].out, "case %d: %s", k, tj_last_error());
        cr_expect(tj_tensor_requires_grad(cases[k].out), "case %d", k);
        tj_tensor *loss = tj_sum(cases[k].out, TJ_DTYPE_NONE);
        cr_expect_eq(tj_autograd_grad(&loss, 1, NULL, &cases[k].wrt, 1, &g), TJ_ERR_UNSUPPORTED, "case %d", k);
        cr_expect(strstr(tj_last_error(), cases[k].op) && strstr(tj_last_error(), "derivative not implemented"),
                  "case %d: %s", k, tj_last_error());
    }
    test_expect_close(cases[0].out, SCR_ADD_D0_OUT, 12, 0, 0);
}

/* scatter.reduce then scatter.value_reduce on its result */
static tj_status scatter_reduce_overloads_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    *n_out = 1;
    out[0] = tj_scatter_value_reduce(tj_scatter_src_reduce(in[0], 0, in[1], in[2], "add"), 1, in[3], tj_v_float(-1.5),
                                     "multiply");
    return out[0] ? TJ_OK : tj_last_status();
}

/* the in-place forms on a clone */
static tj_status scatter_reduce_forms_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_clone(in[0]);
    if (!tj_scatter_src_reduce_(y, 0, in[1], in[2], "multiply") ||
        !tj_scatter_value_reduce_(y, 1, in[3], tj_v_float(1.5), "add"))
        return tj_last_status();
    *n_out = 1;
    out[0] = y;
    return TJ_OK;
}

Test(opsbatch3, scatter_reduce_overloads_trace_as_pytorch_and_replay_and_decompose_as_eager)
{
    scr_inputs c = scr_case(0);
    tj_tensor *in[4] = {c.x, c.index, c.src, test_i64(2, (int64_t[]){3, 2}, SCR_I1)};
    /* PyTorch 1.13's make_fx (torch._decomp has no decomposition of either) */
    const char *want[] = {"%scatter = aten.scatter.reduce(%arg0_1, 0, %arg1_1, %arg2_1, reduce = 'add')",
                          "%scatter_1 = aten.scatter.value_reduce(%scatter, 1, %arg3_1, -1.5, reduce = 'multiply')"};
    test_expect_traced(scatter_reduce_overloads_step, in, 4, 1, want, 2, NULL, 0);
    const char *want2[] = {"%clone = aten.clone.default(%arg0_1)",
                           "%scatter_ = aten.scatter_.reduce(%clone, 0, %arg1_1, %arg2_1, reduce = 'multiply')",
                           "%scatter__1 = aten.scatter_.value_reduce(%scatter_, 1, %arg3_1, 1.5, reduce = 'add')"};
    test_expect_traced(scatter_reduce_forms_step, in, 4, 1, want2, 3, NULL, 0);
    /* the core table lowers both to scatter_reduce.two's sum / prod with self */
    tj_tensor *out;
    cr_expect(test_run_core(scatter_reduce_overloads_step, NULL, in, 4, &out));
    test_expect_same(out, tj_scatter_reduce(tj_scatter_reduce(c.x, 0, c.index, c.src, "sum", true), 1, in[3],
                                            tj_full((int64_t[]){3, 2}, 2, tj_v_float(-1.5), TJ_FLOAT64), "prod", true),
                     "decomposed");
}
