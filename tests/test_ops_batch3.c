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
