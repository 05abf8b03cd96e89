/* Session 24 (opsbatch2) operators: reflection_pad1d / 2d,
 * replication_pad1d / 2d and their backward operators (values and
 * gradients against PyTorch 1.13 in float64, float32 bit for bit, strided
 * and empty inputs, errors, the graphs make_fx records, decomposed and
 * replayed). Reference values: tests/opsbatch2_ref.h, written by
 * tests/make_opsbatch2_refs.py, so the tests run without PyTorch. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "opsbatch2_ref.h"
#include "test_util.h"

TestSuite(opsbatch2, .init = test_scope_open, .fini = test_scope_close);

/* A float64 tensor of `shape` holding v, requiring grad when asked. */
static tj_tensor *f64(const double *v, int ndim, const int64_t *shape, bool requires_grad)
{
    tj_tensor *t = test_f64(ndim, shape, v);
    if (requires_grad) cr_assert_eq(tj_tensor_set_requires_grad(t, true), TJ_OK, "%s", tj_last_error());
    return t;
}

/* ---- reflection / replication padding ---- */

typedef tj_tensor *(*pad_fn)(tj_tensor *, const int64_t *, int);
typedef tj_tensor *(*pad_backward_fn)(tj_tensor *, tj_tensor *, const int64_t *, int);

typedef struct pad_case {
    pad_fn fn;
    pad_backward_fn backward;
    int ndim;
    int64_t shape[4];
    int npad;
    int64_t pad[4];
    const double *out, *gx, *ggy; /* PyTorch's output, x's gradient, grad_output's second-order one */
} pad_case;

/* make_opsbatch2_refs.py's PAD_CASES */
static const pad_case pad_cases[] = {
    {tj_reflection_pad1d, tj_reflection_pad1d_backward, 3, {2, 3, 5}, 2, {2, 4}, PAD_REFLECT1_OUT, PAD_REFLECT1_GX,
     PAD_REFLECT1_GGY},
    {tj_reflection_pad1d, tj_reflection_pad1d_backward, 2, {3, 4}, 2, {-1, 3}, PAD_REFLECT1_CROP_OUT,
     PAD_REFLECT1_CROP_GX, PAD_REFLECT1_CROP_GGY},
    {tj_reflection_pad2d, tj_reflection_pad2d_backward, 4, {1, 2, 4, 5}, 4, {1, 4, 3, 2}, PAD_REFLECT2_OUT,
     PAD_REFLECT2_GX, PAD_REFLECT2_GGY},
    {tj_reflection_pad2d, tj_reflection_pad2d_backward, 3, {2, 4, 3}, 4, {-2, 2, 0, -1}, PAD_REFLECT2_CROP_OUT,
     PAD_REFLECT2_CROP_GX, PAD_REFLECT2_CROP_GGY},
    {tj_replication_pad1d, tj_replication_pad1d_backward, 3, {2, 3, 4}, 2, {5, 1}, PAD_REPLICATE1_OUT,
     PAD_REPLICATE1_GX, PAD_REPLICATE1_GGY},
    {tj_replication_pad2d, tj_replication_pad2d_backward, 4, {1, 2, 3, 4}, 4, {2, 3, -1, 2}, PAD_REPLICATE2_OUT,
     PAD_REPLICATE2_GX, PAD_REPLICATE2_GGY},
};
#define NPAD_CASES ((int)(sizeof pad_cases / sizeof *pad_cases))

Test(opsbatch2, padding_matches_pytorch_with_gradients_and_double_backward)
{
    for (int k = 0; k < NPAD_CASES; k++) {
        const pad_case *pc = &pad_cases[k];
        tj_tensor *x = f64(PAD_X, pc->ndim, pc->shape, true);
        tj_tensor *out = pc->fn(x, pc->pad, pc->npad);
        cr_assert_not_null(out, "case %d: %s", k, tj_last_error());
        int64_t n = tj_tensor_numel(out);
        test_expect_close(out, pc->out, n, 0, 0);
        tj_tensor *gy = f64(PAD_GY, tj_tensor_ndim(out), tj_tensor_shape(out), true);
        test_expect_close(test_grad1(x, out, gy), pc->gx, tj_tensor_numel(x), 1e-15, 1e-15);
        /* the backward operator, differentiated in grad_output */
        tj_tensor *gx = pc->backward(gy, x, pc->pad, pc->npad);
        test_expect_close(gx, pc->gx, tj_tensor_numel(x), 1e-15, 1e-15);
        test_expect_close(test_grad1(gy, gx, tj_tensor_detach(x)), pc->ggy, n, 0, 0);
        /* float32: the same values, copied bit for bit */
        tj_tensor *o32 = pc->fn(tj_to_copy(x, TJ_FLOAT32), pc->pad, pc->npad);
        test_expect_close(o32, pc->out, n, 0, 0);
        cr_expect_eq(tj_tensor_dtype(o32), TJ_FLOAT32);
    }
}

/* A strided input (a transposed view, a stepped slice) pads as its
 * contiguous copy; a gradient of non-contiguous layout comes back summed
 * the same way. */
Test(opsbatch2, padding_reads_strided_inputs)
{
    for (int k = 0; k < NPAD_CASES; k++) {
        const pad_case *pc = &pad_cases[k];
        int nd = pc->ndim;
        int64_t tshape[4];
        memcpy(tshape, pc->shape, sizeof tshape);
        tshape[nd - 1] = pc->shape[nd - 2], tshape[nd - 2] = pc->shape[nd - 1];
        /* x^T of the swapped shape, transposed back: x's shape, strided */
        tj_tensor *xt = tj_transpose(test_random_f32(nd, tshape, 30 + (unsigned)k), nd - 1, nd - 2);
        cr_assert(!tj_tensor_is_contiguous(xt));
        tj_tensor *out = pc->fn(xt, pc->pad, pc->npad);
        test_expect_same(out, pc->fn(tj_clone(xt), pc->pad, pc->npad), "transposed input");
        /* every other row of a taller tensor */
        int64_t tall[4];
        memcpy(tall, pc->shape, sizeof tall);
        tall[0] *= 2;
        tj_tensor *xs = tj_slice(test_random_f32(nd, tall, 40 + (unsigned)k), 0, true, 0, true, tall[0], 2);
        test_expect_same(pc->fn(xs, pc->pad, pc->npad), pc->fn(tj_clone(xs), pc->pad, pc->npad), "stepped input");
        /* a transposed grad_output */
        int64_t os[4];
        memcpy(os, tj_tensor_shape(out), sizeof(int64_t) * (size_t)nd);
        int64_t t = os[nd - 1];
        os[nd - 1] = os[nd - 2], os[nd - 2] = t;
        tj_tensor *gt = tj_transpose(test_random_f32(nd, os, 50 + (unsigned)k), nd - 1, nd - 2);
        test_expect_same(pc->backward(gt, xt, pc->pad, pc->npad), pc->backward(tj_clone(gt), xt, pc->pad, pc->npad),
                         "transposed grad_output");
    }
}

Test(opsbatch2, padding_an_empty_batch_gives_an_empty_result)
{
    tj_tensor *x = test_random_f32(4, (int64_t[]){0, 2, 3, 3}, 1);
    const int64_t pad[4] = {1, 2, 2, 1};
    tj_tensor *r = tj_reflection_pad2d(x, pad, 4);
    test_assert_dtype_shape(r, TJ_FLOAT32, 4, (int64_t[]){0, 2, 6, 6});
    test_assert_dtype_shape(tj_replication_pad2d(x, pad, 4), TJ_FLOAT32, 4, (int64_t[]){0, 2, 6, 6});
    test_assert_dtype_shape(tj_reflection_pad2d_backward(r, x, pad, 4), TJ_FLOAT32, 4, (int64_t[]){0, 2, 3, 3});
    test_assert_dtype_shape(tj_replication_pad1d(test_random_f32(3, (int64_t[]){0, 2, 3}, 2), pad, 2), TJ_FLOAT32, 3,
                            (int64_t[]){0, 2, 6});
    /* reflection allows an empty channel dim of an unbatched input, as PyTorch */
    test_assert_dtype_shape(tj_reflection_pad1d(test_random_f32(2, (int64_t[]){0, 3}, 3), pad, 2), TJ_FLOAT32, 2,
                            (int64_t[]){0, 6});
    /* a 2-D pad may crop a dim to nothing (PyTorch's 2d checks allow it) */
    test_assert_dtype_shape(tj_replication_pad2d(x, (int64_t[]){-3, 0, 1, 1}, 4), TJ_FLOAT32, 4,
                            (int64_t[]){0, 2, 5, 0});
}

Test(opsbatch2, padding_refuses_bad_ranks_pads_dtypes_and_gradients)
{
    tj_tensor *x = test_random_f32(3, (int64_t[]){2, 3, 4}, 1);
    const int64_t p2[2] = {1, 1}, p4[4] = {1, 1, 1, 1};
    /* torch: "2D or 3D (batch mode) tensor expected for input, but got: [ torch.FloatTensor{2,0,3} ]" */
    test_expect_error(tj_reflection_pad1d(test_random_f32(3, (int64_t[]){2, 0, 3}, 2), p2, 2), TJ_ERR_SHAPE,
                      "aten::reflection_pad1d", "Expected 2D or 3D (batch mode) tensor");
    test_expect_error(tj_replication_pad1d(test_random_f32(1, (int64_t[]){3}, 2), p2, 2), TJ_ERR_SHAPE,
                      "aten::replication_pad1d", "but got: [3]");
    test_expect_error(tj_replication_pad1d(test_random_f32(2, (int64_t[]){0, 3}, 2), p2, 2), TJ_ERR_SHAPE,
                      "aten::replication_pad1d", "but got: [0, 3]");
    test_expect_error(tj_reflection_pad2d(test_random_f32(5, (int64_t[]){1, 2, 3, 4, 5}, 2), p4, 4), TJ_ERR_SHAPE,
                      "aten::reflection_pad2d", "Expected 3D or 4D (batch mode) tensor");
    /* torch: "Argument #4: Padding size should be less than the corresponding input dimension, but got:
     * padding (4, 1) at dimension 2 of input [2, 3, 4]" */
    test_expect_error(tj_reflection_pad1d(x, (int64_t[]){4, 1}, 2), TJ_ERR_SHAPE, "aten::reflection_pad1d",
                      "padding (4, 1) at dimension 2 of input [2, 3, 4]");
    test_expect_error(tj_reflection_pad2d(x, (int64_t[]){0, 0, 1, 3}, 4), TJ_ERR_SHAPE, "aten::reflection_pad2d",
                      "padding (1, 3) at dimension 1 of input [2, 3, 4]");
    /* torch: "input (W: 4) is too small. Calculated output W: 0" */
    test_expect_error(tj_replication_pad1d(x, (int64_t[]){-4, 0}, 2), TJ_ERR_SHAPE, "aten::replication_pad1d",
                      "the padded size 0 would be less than 1");
    test_expect_error(tj_replication_pad2d(x, (int64_t[]){-5, 0, 0, 0}, 4), TJ_ERR_SHAPE, "aten::replication_pad2d",
                      "the padded size -1 would be less than 0");
    test_expect_error(tj_replication_pad1d(x, (int64_t[]){INT64_MAX, 1}, 2), TJ_ERR_SHAPE, "aten::replication_pad1d",
                      "too small for padding");
    /* torch: "padding size is expected to be 2" */
    test_expect_error(tj_replication_pad1d(x, p4, 4), TJ_ERR_INVALID_ARGUMENT, "aten::replication_pad1d",
                      "padding size is expected to be 2");
    test_expect_error(tj_reflection_pad2d(x, p2, 2), TJ_ERR_INVALID_ARGUMENT, "aten::reflection_pad2d",
                      "padding size is expected to be 4");
    /* torch: "reflection_pad1d" not implemented for 'Long' */
    test_expect_error(tj_reflection_pad1d(tj_to_copy(x, TJ_INT64), p2, 2), TJ_ERR_DTYPE, "aten::reflection_pad1d",
                      "int64");
    test_expect_error(tj_replication_pad2d(tj_to_copy(x, TJ_BOOL), p4, 4), TJ_ERR_DTYPE, "aten::replication_pad2d",
                      "bool");
    /* torch checks only the padded width: "grad_output width unexpected. Expected: 6, Got: 7" */
    test_expect_error(tj_reflection_pad1d_backward(test_random_f32(3, (int64_t[]){2, 3, 7}, 3), x, p2, 2),
                      TJ_ERR_SHAPE, "aten::reflection_pad1d_backward", "grad_output [2, 3, 7] must have the padded "
                      "shape [2, 3, 6] of self [2, 3, 4]");
    test_expect_error(tj_replication_pad1d_backward(test_random_f32(3, (int64_t[]){1, 3, 6}, 3), x, p2, 2),
                      TJ_ERR_SHAPE, "aten::replication_pad1d_backward", "grad_output [1, 3, 6]");
    test_expect_error(tj_replication_pad2d_backward(tj_to_copy(test_random_f32(3, (int64_t[]){2, 5, 6}, 3),
                                                               TJ_FLOAT64), x, p4, 4),
                      TJ_ERR_DTYPE, "aten::replication_pad2d_backward", "float64");
}

/* pad, its gradient through the backward operator, and both again */
static tj_status pad_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]);
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK) return tj_last_status();
    tj_tensor *a = tj_reflection_pad2d(x, (int64_t[]){1, 2, -1, 2}, 4);
    tj_tensor *b = tj_replication_pad1d(tj_view(a, (int64_t[]){2, 3, 35}, 3), (int64_t[]){3, -2}, 2);
    tj_tensor *loss = tj_sum(tj_mul(b, b), TJ_DTYPE_NONE);
    *n_out = 2;
    out[0] = b;
    return loss ? tj_autograd_grad(&loss, 1, NULL, &x, 1, &out[1]) : tj_last_status();
}

Test(opsbatch2, padding_traces_decomposes_and_replays_as_eager)
{
    tj_tensor *in[1] = {test_random_f32(4, (int64_t[]){2, 3, 4, 4}, 9)};
    tj_tensor *eager[2];
    int n_out;
    cr_assert_eq(pad_step(NULL, in, 1, eager, &n_out), TJ_OK, "%s", tj_last_error());
    /* the graph records the operators and their backward operators, as PyTorch's make_fx */
    tj_graph *g = tj_make_fx(pad_step, NULL, in, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    const char *want[] = {"aten.reflection_pad2d.default(%arg0_1, [1, 2, -1, 2])", "aten.replication_pad1d.default(",
                          "aten.replication_pad1d_backward.default(", "aten.reflection_pad2d_backward.default("};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) cr_expect(strstr(text, want[k]), "%s lacks %s", text, want[k]);
    free(text);
    tj_tensor *got[2];
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, in, 1, got), TJ_OK, "%s", tj_last_error());
    test_expect_same(got[0], eager[0], "replayed padding");
    test_expect_same(got[1], eager[1], "replayed gradient");
    tj_plan_free(p);
    tj_graph_free(g);
    /* decomposed to primitives: the moves exact, the gradient's sums within rounding */
    cr_expect(test_run_core(pad_step, NULL, in, 1, got));
    test_expect_same(got[0], eager[0], "decomposed padding");
    cr_assert_eq(tj_tensor_numel(got[1]), 96);
    double want_g[96];
    tj_tensor *e64 = tj_to_copy(eager[1], TJ_FLOAT64);
    memcpy(want_g, tj_tensor_data(e64), sizeof want_g);
    test_expect_close(got[1], want_g, 96, 1e-6, 1e-6);
}
