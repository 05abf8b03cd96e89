/* Session 24 (opsbatch2) operators: reflection_pad1d / 2d,
 * replication_pad1d / 2d and their backward operators, scatter_reduce.two,
 * index_copy, index_fill.int_Scalar (and their in-place forms), mv, dot,
 * addmv, addr, outer, celu, selu (values and gradients against PyTorch 1.13 in
 * float64, float32 and int64, strided and empty inputs, errors, the graphs
 * make_fx records, replayed and decomposed). Reference values:
 * tests/opsbatch2_ref.h, written by tests/make_opsbatch2_refs.py, so the
 * tests run without PyTorch. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "opsbatch2_ref.h"
#include "test_util.h"

TestSuite(opsbatch2, .init = test_scope_open, .fini = test_scope_close);

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
        tj_tensor *x = test_f64_grad(PAD_X, pc->ndim, pc->shape, true);
        tj_tensor *out = pc->fn(x, pc->pad, pc->npad);
        cr_assert_not_null(out, "case %d: %s", k, tj_last_error());
        int64_t n = tj_tensor_numel(out);
        test_expect_close(out, pc->out, n, 0, 0);
        tj_tensor *gy = test_f64_grad(PAD_GY, tj_tensor_ndim(out), tj_tensor_shape(out), true);
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
    /* the operators and their backward operators, as PyTorch's make_fx; decomposed,
     * the gradient's sums round in another order */
    const char *want[] = {"aten.reflection_pad2d.default(%detach, [1, 2, -1, 2])", "aten.replication_pad1d.default(",
                          "aten.replication_pad1d_backward.default(", "aten.reflection_pad2d_backward.default("};
    test_expect_traced(pad_step, (tj_tensor *[]){test_random_f32(4, (int64_t[]){2, 3, 4, 4}, 9)}, 1, 2, want, 4, NULL, 1e-6);
}

/* ---- scatter_reduce.two ---- */

static const char *const reductions[5] = {"sum", "prod", "mean", "amax", "amin"};

/* make_opsbatch2_refs.py's SR_<REDUCE>_<INC|EXC>_D<dim> values, in its loop order */
static const double *const sr_refs[5][2][2][3] = {
#define SR(R, I, D) {SR_##R##_##I##_D##D##_OUT, SR_##R##_##I##_D##D##_GSELF, SR_##R##_##I##_D##D##_GSRC}
#define SR_RED(R) {{SR(R, INC, 0), SR(R, INC, 1)}, {SR(R, EXC, 0), SR(R, EXC, 1)}}
    SR_RED(SUM), SR_RED(PROD), SR_RED(MEAN), SR_RED(AMAX), SR_RED(AMIN),
#undef SR_RED
#undef SR
};

Test(opsbatch2, scatter_reduce_matches_pytorch_for_every_reduction_with_gradients)
{
    static const int64_t s34[2] = {3, 4}, i0[2] = {2, 3}, s0[2] = {2, 4}, i1[2] = {3, 2}, s1[2] = {3, 3};
    for (int r = 0; r < 5; r++)
        for (int inc = 0; inc < 2; inc++)
            for (int d = 0; d < 2; d++) {
                const double *const *want = sr_refs[r][inc][d];
                tj_tensor *self = test_f64_grad(SR_SELF, 2, s34, true);
                tj_tensor *src = d == 0 ? test_f64_grad(SR_SRC0, 2, s0, true) : test_f64_grad(SR_SRC1, 2, s1, true);
                tj_tensor *index = test_i64(2, d == 0 ? i0 : i1, d == 0 ? SR_I0 : SR_I1);
                tj_tensor *out = tj_scatter_reduce(self, d, index, src, reductions[r], inc == 0);
                cr_assert_not_null(out, "%s: %s", reductions[r], tj_last_error());
                test_expect_close(out, want[0], 12, 1e-15, 0);
                tj_tensor *gy = test_f64(2, s34, SR_GY), *got[2];
                cr_assert_eq(tj_autograd_grad(&out, 1, &gy, (tj_tensor *[]){self, src}, 2, got), TJ_OK, "%s %d %d: %s",
                             reductions[r], inc, d, tj_last_error());
                test_expect_close(got[0], want[1], 12, 1e-15, 1e-15);
                test_expect_close(got[1], want[2], tj_tensor_numel(src), 1e-15, 1e-15);
                /* float32 within rounding, a transposed src as its copy */
                tj_tensor *o32 = tj_scatter_reduce(tj_to_copy(self, TJ_FLOAT32), d, index, tj_to_copy(src, TJ_FLOAT32),
                                                   reductions[r], inc == 0);
                test_expect_close(o32, want[0], 12, 1e-6, 1e-6);
                tj_tensor *st = tj_t(tj_clone(tj_t(tj_tensor_detach(src))));
                cr_assert(!tj_tensor_is_contiguous(st));
                test_expect_same(tj_scatter_reduce(self, d, index, st, reductions[r], inc == 0),
                                 tj_scatter_reduce(self, d, index, tj_clone(st), reductions[r], inc == 0), "strided src");
            }
}

Test(opsbatch2, scatter_reduce_on_int64_rounds_means_down)
{
    tj_tensor *x = test_i64(2, (int64_t[]){2, 3}, (int64_t[]){5, -7, 3, 0, 2, 9});
    tj_tensor *i = test_i64(2, (int64_t[]){2, 2}, (int64_t[]){1, 1, 0, 1});
    tj_tensor *s = test_i64(2, (int64_t[]){2, 3}, (int64_t[]){-4, 1, 6, 3, 2, 8});
    const int64_t *want[5] = {SR_I64_SUM, SR_I64_PROD, SR_I64_MEAN, SR_I64_AMAX, SR_I64_AMIN};
    for (int r = 0; r < 5; r++) {
        tj_tensor *out = tj_scatter_reduce(x, 1, i, s, reductions[r], false);
        test_assert_dtype_shape(out, TJ_INT64, 2, (int64_t[]){2, 3});
        cr_expect_arr_eq(tj_tensor_data(out), want[r], sizeof(int64_t) * 6, "%s", reductions[r]);
    }
}

/* torch 1.13: self [T, F, F, T], index [0, 1, 1, 2], src [F, T, T, F]; bool
 * sums are or, products and; mean is not implemented for bool there either */
Test(opsbatch2, scatter_reduce_on_bool_is_or_and_and)
{
    const uint8_t self[4] = {1, 0, 0, 1}, src[4] = {0, 1, 1, 0};
    tj_tensor *x = test_tensor(TJ_BOOL, 1, (int64_t[]){4}, self), *s = test_tensor(TJ_BOOL, 1, (int64_t[]){4}, src);
    tj_tensor *i = test_i64(1, (int64_t[]){4}, (int64_t[]){0, 1, 1, 2});
    static const uint8_t with_self[5][4] = {{1, 1, 0, 1}, {0, 0, 0, 1}, {0}, {1, 1, 0, 1}, {0, 0, 0, 1}};
    static const uint8_t without_self[4] = {0, 1, 0, 1}; /* every reduction but mean */
    for (int r = 0; r < 5; r++) {
        if (r == 2) continue;
        tj_tensor *a = tj_scatter_reduce(x, 0, i, s, reductions[r], true), *b = tj_scatter_reduce(x, 0, i, s, reductions[r], false);
        test_assert_dtype_shape(a, TJ_BOOL, 1, (int64_t[]){4});
        cr_expect_arr_eq(tj_tensor_data(a), with_self[r], 4, "%s", reductions[r]);
        cr_expect_arr_eq(tj_tensor_data(b), without_self, 4, "%s without self", reductions[r]);
    }
    test_expect_error(tj_scatter_reduce(x, 0, i, s, "mean", true), TJ_ERR_DTYPE, "aten::scatter_reduce.two",
                      "reduce \"mean\" not implemented for bool");
    /* scatter.reduce / scatter.value_reduce: add [T, T, F, T], multiply [F, F, F, T]; value True: add all
     * true, multiply [T, F, F, T] */
    cr_expect_arr_eq(tj_tensor_data(tj_scatter_src_reduce(x, 0, i, s, "add")), with_self[0], 4);
    cr_expect_arr_eq(tj_tensor_data(tj_scatter_src_reduce(x, 0, i, s, "multiply")), with_self[1], 4);
    cr_expect_arr_eq(tj_tensor_data(tj_scatter_value_reduce(x, 0, i, tj_v_bool(true), "add")),
                     ((uint8_t[]){1, 1, 1, 1}), 4);
    cr_expect_arr_eq(tj_tensor_data(tj_scatter_value_reduce(x, 0, i, tj_v_bool(true), "multiply")), self, 4);
}

Test(opsbatch2, scatter_reduce_propagates_nan_and_keeps_self_for_an_empty_index)
{
    tj_tensor *x = test_f32(1, (int64_t[]){3}, (float[]){1, NAN, 2});
    tj_tensor *i = test_i64(1, (int64_t[]){4}, (int64_t[]){0, 0, 1, 2});
    tj_tensor *s = test_f32(1, (int64_t[]){4}, (float[]){NAN, 5, 3, -1});
    test_expect_f32(tj_scatter_reduce(x, 0, i, s, "amax", true), (float[]){NAN, NAN, 2}, 3, 0);
    test_expect_f32(tj_scatter_reduce(x, 0, i, s, "amin", false), (float[]){NAN, 3, -1}, 3, 0);
    test_expect_f32(tj_scatter_reduce(x, 0, test_i64(1, (int64_t[]){0}, NULL), test_f32(1, (int64_t[]){0}, NULL),
                                      "mean", false),
                    (float[]){1, NAN, 2}, 3, 0);
}

Test(opsbatch2, scatter_reduce_refuses_bad_reductions_dtypes_and_indices)
{
    tj_tensor *x = test_random_f32(2, (int64_t[]){3, 4}, 1), *s = test_random_f32(2, (int64_t[]){2, 4}, 2);
    tj_tensor *i = test_i64(2, (int64_t[]){1, 2}, (int64_t[]){0, 2});
    /* torch: "reduce argument must be either sum, prod, mean, amax or amin, got max" */
    test_expect_error(tj_scatter_reduce(x, 0, i, s, "max", true), TJ_ERR_INVALID_ARGUMENT, "aten::scatter_reduce.two",
                      "must be either sum, prod, mean, amax or amin, got \"max\"");
    test_expect_error(tj_scatter_reduce(x, 0, i, tj_to_copy(s, TJ_FLOAT64), "sum", true), TJ_ERR_DTYPE,
                      "aten::scatter_reduce.two", "float64");
    test_expect_error(tj_scatter_reduce(x, 0, test_i64(2, (int64_t[]){1, 2}, (int64_t[]){0, 3}), s, "prod", true),
                      TJ_ERR_INDEX, "aten::scatter_reduce.two", "index 3 is out of bounds for dimension 0 with size 3");
    test_expect_error(tj_scatter_reduce(x, 2, i, s, "sum", true), TJ_ERR_INDEX, "aten::scatter_reduce.two", "");
    test_expect_error(tj_scatter_reduce(x, 0, test_i64(1, (int64_t[]){2}, (int64_t[]){0, 1}), s, "sum", true),
                      TJ_ERR_SHAPE, "aten::scatter_reduce.two", "same number of dimensions");
}

/* sum and amax with their gradients, traced: PyTorch 1.13's make_fx graph
 * (gather and scatter.value for sum; the formula's eq / scatter_add for amax) */
static tj_status scatter_reduce_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]), *s = tj_tensor_detach(in[1]);
    if (!x || !s || tj_tensor_set_requires_grad(x, true) != TJ_OK || tj_tensor_set_requires_grad(s, true) != TJ_OK)
        return tj_last_status();
    tj_tensor *a = tj_scatter_reduce(x, 0, in[2], s, "sum", false);
    tj_tensor *b = tj_scatter_reduce(a, 1, in[3], s, "amax", true);
    tj_tensor *loss = tj_sum(tj_mul(b, b), TJ_DTYPE_NONE);
    *n_out = 3;
    out[0] = b;
    return loss ? tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){x, s}, 2, &out[1]) : tj_last_status();
}

Test(opsbatch2, scatter_reduce_traces_and_replays_as_eager)
{
    tj_tensor *in[4] = {test_random_f32(2, (int64_t[]){3, 4}, 3), test_random_f32(2, (int64_t[]){2, 4}, 4),
                        test_i64(2, (int64_t[]){2, 3}, SR_I0), test_i64(2, (int64_t[]){2, 2}, (int64_t[]){3, 3, 0, 1})};
    const char *want[] = {"aten.scatter_reduce.two(%detach, 0, %arg2_1, %detach_1, 'sum', include_self = False)",
                          "aten.scatter.value(", "aten.gather.default(", "aten.eq.Tensor("};
    test_expect_traced(scatter_reduce_step, in, 4, 3, want, 4, NULL, 0);
}

/* scatter_reduce_ writes into a strided self, reads a src that is self
 * itself, and differentiates as the out-of-place operator */
Test(opsbatch2, scatter_reduce_in_place_matches_the_out_of_place_operator)
{
    tj_tensor *base = test_random_f32(2, (int64_t[]){4, 3}, 5), *index = test_i64(2, (int64_t[]){2, 3}, SR_I0);
    tj_tensor *src = test_random_f32(2, (int64_t[]){2, 4}, 6);
    for (int r = 0; r < 5; r++) {
        tj_tensor *want = tj_scatter_reduce(tj_t(base), 0, index, src, reductions[r], r % 2 == 0);
        tj_tensor *self = tj_t(tj_clone(base));
        cr_assert_eq(tj_scatter_reduce_(self, 0, index, src, reductions[r], r % 2 == 0), self, "%s", tj_last_error());
        test_expect_same(self, want, reductions[r]);
        /* src is self: refused, as ATen (tests/test_index_overlap.c) */
        tj_tensor *x = tj_clone(base);
        test_expect_error(tj_scatter_reduce_(x, 1, index, x, reductions[r], true), TJ_ERR_UNSUPPORTED,
                          "aten::scatter_reduce_.two", "some elements of src [4, 3] and of the written-to tensor");
        test_expect_same(x, base, "self after the refusal");
    }
    /* the gradient of an in-place call on a non-leaf */
    tj_tensor *s = test_f64_grad(SR_SRC0, 2, (int64_t[]){2, 4}, true), *x = test_f64_grad(SR_SELF, 2, (int64_t[]){3, 4}, true);
    tj_tensor *y = tj_mul_scalar(x, tj_v_int(1));
    tj_tensor *out = tj_scatter_reduce_(y, 0, test_i64(2, (int64_t[]){2, 3}, SR_I0), s, "amax", false);
    cr_assert_not_null(out, "%s", tj_last_error());
    tj_tensor *gy = test_f64(2, (int64_t[]){3, 4}, SR_GY), *got[2];
    cr_assert_eq(tj_autograd_grad(&out, 1, &gy, (tj_tensor *[]){x, s}, 2, got), TJ_OK, "%s", tj_last_error());
    test_expect_close(got[0], SR_AMAX_EXC_D0_GSELF, 12, 1e-15, 1e-15);
    test_expect_close(got[1], SR_AMAX_EXC_D0_GSRC, 8, 1e-15, 1e-15);
}

/* ---- index_copy / index_fill.int_Scalar ---- */

static const int64_t S43[2] = {4, 3};

Test(opsbatch2, index_copy_and_index_fill_match_pytorch_with_gradients)
{
    tj_tensor *x = test_f64_grad(IC_SELF, 2, S43, true), *src = test_f64_grad(IC_SOURCE, 2, (int64_t[]){3, 3}, true);
    tj_tensor *out = tj_index_copy(x, 0, test_i64(1, (int64_t[]){3}, (int64_t[]){3, 0, 3}), src);
    test_expect_close(out, IC_OUT, 12, 0, 0);
    tj_tensor *gy = test_f64(2, S43, IC_GY), *got[2];
    cr_assert_eq(tj_autograd_grad(&out, 1, &gy, (tj_tensor *[]){x, src}, 2, got), TJ_OK, "%s", tj_last_error());
    test_expect_close(got[0], IC_GSELF, 12, 0, 0);
    test_expect_close(got[1], IC_GSOURCE, 9, 0, 0);
    /* the in-place form differentiates source too */
    tj_tensor *b = tj_mul_scalar(x, tj_v_int(1));
    cr_assert_eq(tj_index_copy_(b, 0, test_i64(1, (int64_t[]){3}, (int64_t[]){3, 0, 3}), src), b, "%s",
                 tj_last_error());
    cr_assert_eq(tj_autograd_grad(&b, 1, &gy, (tj_tensor *[]){x, src}, 2, got), TJ_OK, "%s", tj_last_error());
    test_expect_close(got[0], IC_GSELF, 12, 0, 0);
    test_expect_close(got[1], IC_GSOURCE, 9, 0, 0);
    tj_tensor *filled = tj_index_fill(x, 1, test_i64(1, (int64_t[]){3}, (int64_t[]){0, -1, 0}), tj_v_float(-2.5));
    test_expect_close(filled, IF_OUT, 12, 0, 0);
    test_expect_close(test_grad1(x, filled, gy), IF_GSELF, 12, 0, 0);
    /* a 0-dim index keeps its dim in source; int64 truncates the value */
    tj_tensor *one = tj_index_copy(tj_zeros((int64_t[]){2, 3}, 2, TJ_INT64), 1, test_i64(0, NULL, (int64_t[]){2}),
                                   test_i64(2, (int64_t[]){2, 1}, (int64_t[]){7, -7}));
    cr_expect_arr_eq(tj_tensor_data(one), ((int64_t[]){0, 0, 7, 0, 0, -7}), 6 * sizeof(int64_t));
    tj_tensor *fi = tj_index_fill(tj_zeros((int64_t[]){3}, 1, TJ_INT64), 0, test_i64(1, (int64_t[]){1}, (int64_t[]){1}),
                                  tj_v_float(2.7));
    cr_expect_arr_eq(tj_tensor_data(fi), ((int64_t[]){0, 2, 0}), 3 * sizeof(int64_t));
}

Test(opsbatch2, index_copy_and_index_fill_read_strided_tensors_and_write_in_place)
{
    tj_tensor *base = test_random_f32(2, (int64_t[]){3, 4}, 8), *xt = tj_t(base); /* [4, 3], strided */
    tj_tensor *src = tj_t(test_random_f32(2, (int64_t[]){3, 2}, 9));              /* [2, 3], strided */
    tj_tensor *index = tj_slice(test_i64(1, (int64_t[]){4}, (int64_t[]){3, 9, 1, 9}), 0, true, 0, true, 4, 2);
    tj_tensor *want = tj_index_copy(tj_clone(xt), 0, tj_clone(index), tj_clone(src));
    test_expect_same(tj_index_copy(xt, 0, index, src), want, "strided index_copy");
    tj_tensor *self = tj_t(tj_clone(base));
    cr_assert_eq(tj_index_copy_(self, 0, index, src), self, "%s", tj_last_error());
    test_expect_same(self, want, "index_copy_");
    tj_tensor *wf = tj_index_fill(tj_clone(xt), 0, tj_clone(index), tj_v_float(NAN));
    test_expect_same(tj_index_fill(xt, 0, index, tj_v_float(NAN)), wf, "strided index_fill");
    cr_assert_eq(tj_index_fill_(xt, 0, index, tj_v_float(NAN)), xt, "%s", tj_last_error());
    test_expect_same(xt, wf, "index_fill_ into a transposed view");
    /* source is self: refused, as ATen (tests/test_index_overlap.c) */
    tj_tensor *x = tj_clone(base), *rev = test_i64(1, (int64_t[]){3}, (int64_t[]){2, 1, 0});
    test_expect_error(tj_index_copy_(x, 0, rev, x), TJ_ERR_UNSUPPORTED, "aten::index_copy_",
                      "some elements of source [3, 4] and of the written-to tensor (self) [3, 4]");
    test_expect_same(x, base, "self after the refusal");
    /* empty: no index leaves a copy; an empty self stays empty */
    tj_tensor *none = test_i64(1, (int64_t[]){0}, NULL);
    test_expect_same(tj_index_fill(base, 0, none, tj_v_int(1)), base, "no index");
    test_assert_dtype_shape(tj_index_copy(tj_zeros((int64_t[]){0, 3}, 2, TJ_FLOAT32), 1,
                                          test_i64(1, (int64_t[]){2}, (int64_t[]){2, 0}),
                                          tj_zeros((int64_t[]){0, 2}, 2, TJ_FLOAT32)),
                            TJ_FLOAT32, 2, (int64_t[]){0, 3});
}

Test(opsbatch2, index_copy_and_index_fill_refuse_bad_indices_sources_and_values)
{
    tj_tensor *x = test_random_f32(2, (int64_t[]){3, 4}, 1), *s = test_random_f32(2, (int64_t[]){2, 4}, 2);
    tj_tensor *i2 = test_i64(1, (int64_t[]){2}, (int64_t[]){0, 2});
    /* torch: "index_copy_(): index 3 is out of bounds for dimension 0 with size 3" (and -1, which index_fill wraps) */
    test_expect_error(tj_index_copy(x, 0, test_i64(1, (int64_t[]){2}, (int64_t[]){0, 3}), s), TJ_ERR_INDEX,
                      "aten::index_copy", "index 3 is out of bounds for dimension 0 with size 3");
    test_expect_error(tj_index_copy(x, 0, test_i64(1, (int64_t[]){2}, (int64_t[]){-1, 0}), s), TJ_ERR_INDEX,
                      "aten::index_copy", "index -1 is out of bounds");
    test_expect_error(tj_index_copy(x, 0, i2, test_random_f32(2, (int64_t[]){2, 3}, 3)), TJ_ERR_SHAPE,
                      "aten::index_copy", "source [2, 3] must have the shape of self [3, 4] with dimension 0 of size 2");
    test_expect_error(tj_index_copy(x, 0, test_i64(1, (int64_t[]){3}, (int64_t[]){0, 1, 2}), s), TJ_ERR_SHAPE,
                      "aten::index_copy", "");
    test_expect_error(tj_index_copy(x, 0, test_i64(2, (int64_t[]){1, 2}, (int64_t[]){0, 1}), s), TJ_ERR_SHAPE,
                      "aten::index_copy", "index must be 1-D or 0-dim");
    test_expect_error(tj_index_copy(x, 0, i2, tj_to_copy(s, TJ_FLOAT64)), TJ_ERR_DTYPE, "aten::index_copy",
                      "(self) float32 and (source) float64");
    test_expect_error(tj_index_copy(x, 2, i2, s), TJ_ERR_INDEX, "aten::index_copy", "");
    test_expect_error(tj_index_fill(x, 1, test_i64(1, (int64_t[]){2}, (int64_t[]){0, -5}), tj_v_int(1)), TJ_ERR_INDEX,
                      "aten::index_fill.int_Scalar", "index -5 is out of bounds for dimension 1 with size 4");
    test_expect_error(tj_index_fill(x, 1, tj_to_copy(i2, TJ_FLOAT32), tj_v_int(1)), TJ_ERR_DTYPE,
                      "aten::index_fill.int_Scalar", "int64");
    test_expect_error(tj_index_fill(x, 1, i2, tj_v_float(1e300)), TJ_ERR_INVALID_ARGUMENT,
                      "aten::index_fill.int_Scalar", "");
}

/* index_copy and index_fill with their gradients: recorded as themselves,
 * decomposed to index_put (torch._decomp) and replayed as eager */
static tj_status index_write_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]), *s = tj_tensor_detach(in[1]);
    if (!x || !s || tj_tensor_set_requires_grad(x, true) != TJ_OK || tj_tensor_set_requires_grad(s, true) != TJ_OK)
        return tj_last_status();
    tj_tensor *a = tj_index_fill(tj_index_copy(x, 0, in[2], s), 1, in[3], tj_v_float(0.5));
    tj_tensor *loss = tj_sum(tj_mul(a, a), TJ_DTYPE_NONE);
    *n_out = 3;
    out[0] = a;
    return loss ? tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){x, s}, 2, &out[1]) : tj_last_status();
}

Test(opsbatch2, index_copy_and_index_fill_trace_decompose_and_replay_as_eager)
{
    tj_tensor *in[4] = {test_random_f32(2, S43, 3), test_random_f32(2, (int64_t[]){3, 3}, 4),
                        test_i64(1, (int64_t[]){3}, (int64_t[]){3, 0, 3}), test_i64(1, (int64_t[]){2}, (int64_t[]){-1, 1})};
    const char *want[] = {"aten.index_copy.default(%detach, 0, %arg2_1, %detach_1)", "aten.index_fill.int_Scalar(",
                          "aten.index_select.default("};
    test_expect_traced(index_write_step, in, 4, 3, want, 3, NULL, 0);
}

/* ---- mv, dot, addmv, addr, outer ---- */

/* values and gradients of sum(out * LIN_GY) against PyTorch (exact: small
 * sums of dyadic values), then the float32 forward */
static void check_lin(tj_tensor *out, tj_tensor *const *ins, int n, const double *want, const double *const *grads)
{
    cr_assert_not_null(out, "%s", tj_last_error());
    int64_t numel = tj_tensor_numel(out);
    test_expect_close(out, want, numel, 0, 0);
    tj_tensor *gy = test_f64(tj_tensor_ndim(out), tj_tensor_shape(out), LIN_GY), *got[3];
    cr_assert_eq(tj_autograd_grad(&out, 1, &gy, ins, n, got), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < n; k++) test_expect_close(got[k], grads[k], tj_tensor_numel(ins[k]), 0, 0);
}

Test(opsbatch2, matrix_vector_products_match_pytorch_with_gradients)
{
    static const int64_t s34[2] = {3, 4}, s4[1] = {4}, s3[1] = {3};
    tj_tensor *m = test_f64_grad(LIN_MAT, 2, s34, true), *v = test_f64_grad(LIN_VEC, 1, s4, true), *u = test_f64_grad(LIN_U, 1, s3, true);
    tj_tensor *s3v = test_f64_grad(LIN_SELF, 1, s3, true), *s34t = test_f64_grad(LIN_SELF, 2, s34, true), *m4 = test_f64_grad(LIN_MAT, 1, s4, true);
    check_lin(tj_mv(m, v), (tj_tensor *[]){m, v}, 2, MV_OUT, (const double *const[]){MV_G0, MV_G1});
    check_lin(tj_dot(v, m4), (tj_tensor *[]){v, m4}, 2, DOT_OUT, (const double *const[]){DOT_G0, DOT_G1});
    check_lin(tj_addmv(s3v, m, v, tj_v_float(0.5), tj_v_int(-2)), (tj_tensor *[]){s3v, m, v}, 3, ADDMV_OUT,
              (const double *const[]){ADDMV_G0, ADDMV_G1, ADDMV_G2});
    check_lin(tj_addr(s34t, u, v, tj_v_float(-1.5), tj_v_float(0.5)), (tj_tensor *[]){s34t, u, v}, 3, ADDR_OUT,
              (const double *const[]){ADDR_G0, ADDR_G1, ADDR_G2});
    check_lin(tj_outer(u, v), (tj_tensor *[]){u, v}, 2, OUTER_OUT, (const double *const[]){OUTER_G0, OUTER_G1});
    /* float32 and int64 forward */
    test_expect_close(tj_mv(tj_to_copy(m, TJ_FLOAT32), tj_to_copy(v, TJ_FLOAT32)), MV_OUT, 3, 0, 0);
    tj_tensor *mi = tj_to_copy(tj_mul_scalar(m, tj_v_int(2)), TJ_INT64);
    tj_tensor *vi = tj_to_copy(tj_mul_scalar(v, tj_v_int(4)), TJ_INT64);
    tj_tensor *ri = tj_mv(mi, vi);
    test_assert_dtype_shape(ri, TJ_INT64, 1, s3);
    cr_expect_arr_eq(tj_tensor_data(ri), ((int64_t[]){-30, 61, 64}), 3 * sizeof(int64_t));
}

/* a (float32) within float32 rounding of b: strided operands may take
 * another matrix-vector kernel (rows against columns), summing in another
 * order */
static void expect_near(tj_tensor *a, tj_tensor *b, const char *what)
{
    double want[64];
    int64_t n = tj_tensor_numel(b);
    cr_assert(n <= 64);
    cr_assert_eq(tj_tensor_copy_to(tj_to_copy(b, TJ_FLOAT64), want), TJ_OK, "%s", tj_last_error());
    cr_assert_not_null(a, "%s: %s", what, tj_last_error());
    test_expect_close(a, want, n, 1e-5, 1e-6);
}

Test(opsbatch2, matrix_vector_products_read_strided_and_empty_operands)
{
    tj_tensor *mt = tj_t(test_random_f32(2, (int64_t[]){6, 5}, 1));                           /* [5, 6] */
    tj_tensor *v = tj_slice(test_random_f32(1, (int64_t[]){12}, 2), 0, true, 0, true, 12, 2); /* [6], stride 2 */
    expect_near(tj_mv(mt, v), tj_mv(tj_clone(mt), tj_clone(v)), "strided mv");
    expect_near(tj_dot(v, tj_select(mt, 0, 1)), tj_dot(tj_clone(v), tj_clone(tj_select(mt, 0, 1))), "strided dot");
    tj_tensor *u = tj_select(mt, 1, 0); /* [5], stride 6 */
    expect_near(tj_addr(mt, u, v, tj_v_int(1), tj_v_int(2)),
                     tj_addr(tj_clone(mt), tj_clone(u), tj_clone(v), tj_v_int(1), tj_v_int(2)), "strided addr");
    expect_near(tj_addmv(u, mt, v, tj_v_float(0.5), tj_v_int(1)),
                     tj_addmv(tj_clone(u), tj_clone(mt), tj_clone(v), tj_v_float(0.5), tj_v_int(1)), "strided addmv");
    /* an empty inner size sums nothing: zeros (addmv: beta * self) */
    tj_tensor *e = tj_zeros((int64_t[]){3, 0}, 2, TJ_FLOAT32), *e0 = tj_zeros((int64_t[]){0}, 1, TJ_FLOAT32);
    test_expect_f32(tj_mv(e, e0), (float[]){0, 0, 0}, 3, 0);
    test_expect_f32(tj_dot(e0, e0), (float[]){0}, 1, 0);
    test_expect_f32(tj_addmv(test_f32(1, (int64_t[]){3}, (float[]){1, 2, 3}), e, e0, tj_v_int(2), tj_v_int(1)),
                    (float[]){2, 4, 6}, 3, 0);
    test_assert_dtype_shape(tj_outer(e0, v), TJ_FLOAT32, 2, (int64_t[]){0, 6});
}

Test(opsbatch2, matrix_vector_products_refuse_bad_ranks_sizes_and_dtypes)
{
    tj_tensor *m = test_random_f32(2, (int64_t[]){3, 4}, 1), *v4 = test_random_f32(1, (int64_t[]){4}, 2);
    tj_tensor *v5 = test_random_f32(1, (int64_t[]){5}, 3), *v3 = test_random_f32(1, (int64_t[]){3}, 4);
    /* torch: "size mismatch, got 3, 3x4,5" */
    test_expect_error(tj_mv(m, v5), TJ_ERR_SHAPE, "aten::mv", "mat [3, 4] and vec [5] cannot be multiplied (4 != 5)");
    /* torch: "vector + matrix @ vector expected, got 1, 2, 2" */
    test_expect_error(tj_mv(m, m), TJ_ERR_SHAPE, "aten::mv", "vector + matrix @ vector expected");
    test_expect_error(tj_mv(m, tj_to_copy(v4, TJ_FLOAT64)), TJ_ERR_DTYPE, "aten::mv", "float64");
    test_expect_error(tj_dot(v4, v5), TJ_ERR_SHAPE, "aten::dot",
                      "inconsistent tensor size, expected tensor [4] and src [5]");
    test_expect_error(tj_dot(m, v4), TJ_ERR_SHAPE, "aten::dot", "1D tensors expected, but got 2D and 1D tensors");
    test_expect_error(tj_dot(tj_to_copy(v4, TJ_BOOL), tj_to_copy(v4, TJ_BOOL)), TJ_ERR_DTYPE, "aten::dot", "bool");
    test_expect_error(tj_addmv(test_random_f32(2, (int64_t[]){3, 1}, 5), m, v4, tj_v_int(1), tj_v_int(1)), TJ_ERR_SHAPE,
                      "aten::addmv", "self [3, 1] cannot be broadcast to [3]");
    test_expect_error(tj_addmv(v3, m, v4, tj_v_float(1e300), tj_v_int(1)), TJ_ERR_INVALID_ARGUMENT, "aten::addmv",
                      "beta");
    /* torch: "addr: Expected 1-D argument vec1, but got 2-D" */
    test_expect_error(tj_addr(m, m, v4, tj_v_int(1), tj_v_int(1)), TJ_ERR_SHAPE, "aten::addr",
                      "Expected 1-D argument vec1, but got 2-D");
    test_expect_error(tj_addr(test_random_f32(2, (int64_t[]){2, 4}, 6), v3, v4, tj_v_int(1), tj_v_int(1)), TJ_ERR_SHAPE,
                      "aten::addr", "cannot be broadcast to [3, 4]");
    test_expect_error(tj_outer(m, v4), TJ_ERR_SHAPE, "aten::outer", "Expected 1-D argument self, but got 2-D");
}

/* the products and their gradients: recorded as PyTorch's make_fx records
 * them (outer as view + mul), decomposed to mm / bmm and replayed */
static tj_status lin_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *m = tj_tensor_detach(in[0]), *v = tj_tensor_detach(in[1]), *u = tj_tensor_detach(in[2]);
    if (!m || !v || !u || tj_tensor_set_requires_grad(m, true) != TJ_OK || tj_tensor_set_requires_grad(v, true) != TJ_OK ||
        tj_tensor_set_requires_grad(u, true) != TJ_OK)
        return tj_last_status();
    tj_tensor *a = tj_addmv(u, m, v, tj_v_float(0.5), tj_v_int(2));
    tj_tensor *b = tj_addr(m, a, v, tj_v_int(1), tj_v_float(-0.5));
    tj_tensor *loss = tj_add(tj_sum(tj_mul(tj_outer(tj_mv(b, v), v), b), TJ_DTYPE_NONE), tj_dot(u, a));
    *n_out = 4;
    out[0] = loss;
    return loss ? tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){m, v, u}, 3, &out[1]) : tj_last_status();
}

Test(opsbatch2, matrix_vector_products_trace_decompose_and_replay_as_eager)
{
    tj_tensor *in[3] = {tj_to_copy(test_random_f32(2, (int64_t[]){3, 4}, 1), TJ_FLOAT64),
                        tj_to_copy(test_random_f32(1, (int64_t[]){4}, 2), TJ_FLOAT64),
                        tj_to_copy(test_random_f32(1, (int64_t[]){3}, 3), TJ_FLOAT64)};
    const char *want[] = {"aten.addmv.default(%detach_2, %detach, %detach_1, beta = 0.5, alpha = 2)", "aten.addr.default(",
                          "aten.mv.default(", "aten.dot.default("};
    test_expect_traced(lin_step, in, 3, 4, want, 4, "aten.outer", 1e-12);
}

/* ---- celu, selu ---- */

static tj_status act_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]);
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK) return tj_last_status();
    tj_tensor *loss = tj_sum(tj_add(tj_celu(x, tj_v_float(0.5)), tj_selu(x)), TJ_DTYPE_NONE);
    *n_out = 1;
    return loss ? tj_autograd_grad(&loss, 1, NULL, &x, 1, &out[0]) : tj_last_status();
}

Test(opsbatch2, celu_and_selu_match_pytorch_and_record_elu)
{
    static const int64_t s12[1] = {12};
    tj_tensor *x = test_f64_grad(ELU_X, 1, s12, true), *gy = test_f64(1, s12, LIN_GY);
    tj_tensor *c = tj_celu(x, tj_v_float(0.5)), *s = tj_selu(x);
    test_expect_close(c, CELU_OUT, 12, 1e-15, 1e-300);
    test_expect_close(test_grad1(x, c, gy), CELU_GX, 12, 1e-15, 1e-300);
    test_expect_close(s, SELU_OUT, 12, 1e-15, 1e-300);
    test_expect_close(test_grad1(x, s, gy), SELU_GX, 12, 1e-15, 1e-300);
    test_expect_close(tj_celu(tj_to_copy(x, TJ_FLOAT32), tj_v_float(0.5)), CELU_OUT, 12, 2e-7, 1e-30);
    test_expect_error(tj_celu(x, tj_v_int(0)), TJ_ERR_INVALID_ARGUMENT, "aten::celu", "alpha cannot be 0 for CELU");
    test_expect_error(tj_selu(tj_to_copy(x, TJ_INT64)), TJ_ERR_DTYPE, "aten::elu", "");
    /* PyTorch 1.13's make_fx: celu, elu for selu, elu_backward for both gradients */
    tj_graph *g = tj_make_fx(act_step, NULL, (tj_tensor *[]){tj_tensor_detach(x)}, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    const char *want[] = {"aten.celu.default(%detach, 0.5)",
                          "aten.elu.default(%detach, 1.6732632423543772, 1.0507009873554805",
                          "aten.elu_backward.default(%expand, 0.5, 1, 2.0, False, %detach)",
                          "aten.elu_backward.default(%expand, 1.6732632423543772, 1.0507009873554805, 1, False, %detach)"};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++)
        cr_expect(strstr(text, want[k]), "%s lacks %s", text, want[k]);
    cr_expect(!strstr(text, "aten.selu"), "selu is implicit: %s", text);
    free(text);
    tj_graph_free(g);
}
