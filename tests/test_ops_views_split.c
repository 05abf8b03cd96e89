/* narrow, unbind.int, chunk and split_with_sizes (implicit view composites,
 * op_view.def) and the in-place indexed adds scatter_add_ and index_add_
 * (op_inplace_forms.def): values, views sharing storage, gradients, make_fx
 * text, replay and the core-decomposed trace against eager, and errors.
 * Reference values are PyTorch 1.13's (/usr/bin/python3, the expression
 * next to each), so the tests run without it. */
#include <criterion/criterion.h>
#include <string.h>

#include "alloc_counter.h"
#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(views_split, .init = test_scope_open, .fini = test_scope_close);
TestSuite(views_split_errors, .init = count_allocations);

#define MAX_PIECES 8

/* x = torch.arange(12.).view(3, 4) */
static tj_tensor *arange_3x4(void)
{
    return test_f32(2, (int64_t[]){3, 4}, (float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
}

/* A list-returning operator called through the dispatcher: its pieces. */
static int call_list(const char *op, const tj_value *args, int nargs, tj_tensor **pieces)
{
    tj_value out;
    cr_assert_eq(tj_call(op, args, nargs, &out), TJ_OK, "%s: %s", op, tj_last_error());
    cr_assert_eq(out.kind, TJ_V_TENSORS, "%s returns a Tensor[]", op);
    cr_assert_leq(out.n, MAX_PIECES, "%s: %d pieces", op, out.n);
    memcpy(pieces, out.u.ts, sizeof *pieces * (size_t)out.n);
    return out.n;
}

static void expect_shape(const tj_tensor *t, int ndim, const int64_t *shape, const char *what)
{
    cr_assert_eq(tj_tensor_ndim(t), ndim, "%s: rank", what);
    for (int d = 0; d < ndim; d++) cr_expect_eq(tj_tensor_size(t, d), shape[d], "%s: size %d", what, d);
}

/* ---- narrow ---- */

Test(views_split, narrow_is_a_view_whose_negative_start_counts_from_the_end)
{
    tj_tensor *x = arange_3x4();
    /* x.narrow(1, -3, 2): [[1, 2], [5, 6], [9, 10]], storage offset 1 */
    tj_tensor *v = tj_narrow(x, 1, -3, 2);
    test_expect_close(v, (double[]){1, 2, 5, 6, 9, 10}, 6, 0, 0);
    cr_expect_eq(tj_tensor_storage_offset(v), 1);
    /* written through, the base shows it */
    cr_assert_not_null(tj_fill_(v, tj_v_float(-1)), "%s", tj_last_error());
    test_expect_close(x, (double[]){0, -1, -1, 3, 4, -1, -1, 7, 8, -1, -1, 11}, 12, 0, 0);
    /* x.narrow(0, 1, 2) rows 1, 2 (offset 4); x.narrow(-1, 4, 0): [3, 0] at offset 4 (start == size);
     * torch.zeros(3, 0).narrow(1, -1, 0): [3, 0] (an empty dim wraps as one of size 1) */
    tj_tensor *rows = tj_narrow(x, 0, 1, 2);
    test_expect_close(rows, (double[]){4, -1, -1, 7, 8, -1, -1, 11}, 8, 0, 0);
    cr_expect_eq(tj_tensor_storage_offset(rows), 4);
    tj_tensor *end = tj_narrow(x, -1, 4, 0);
    expect_shape(end, 2, (int64_t[]){3, 0}, "narrow at the end");
    cr_expect_eq(tj_tensor_storage_offset(end), 4);
    expect_shape(tj_narrow(test_f32(2, (int64_t[]){3, 0}, NULL), 1, -1, 0), 2, (int64_t[]){3, 0}, "empty dim");
}

/* The check of one failing call: NULL, the status, a message naming op and
 * needle, and nothing left allocated. */
#define EXPECT_NO_LEAK_ERROR(call, status, op, needle)                        \
    do {                                                                      \
        int64_t base_ = live_allocations();                                   \
        tj_scope *s_ = tj_scope_begin();                                      \
        test_expect_error((call), (status), (op), (needle));                  \
        tj_scope_end(s_);                                                     \
        cr_expect_eq(live_allocations(), base_, "%s leaks nothing", needle);  \
    } while (0)

Test(views_split_errors, narrow_errors_name_the_operator_and_the_values)
{
    tj_tensor *x = arange_3x4(), *scalar = test_f32(0, NULL, (float[]){1});
    /* torch: "start out of range"-like IndexError "(expected to be in range of [-4, 3], but got 5)" */
    EXPECT_NO_LEAK_ERROR(tj_narrow(x, 1, 5, 1), TJ_ERR_INDEX, "aten::narrow",
                         "start out of range (expected to be in range of [-4, 3], but got 5)");
    EXPECT_NO_LEAK_ERROR(tj_narrow(x, 1, -5, 1), TJ_ERR_INDEX, "aten::narrow", "[-4, 3], but got -5");
    /* torch: "start (3) + length (2) exceeds dimension size (4)." for start 3 and -1 */
    EXPECT_NO_LEAK_ERROR(tj_narrow(x, 1, -1, 2), TJ_ERR_INVALID_ARGUMENT, "aten::narrow",
                         "start (3) + length (2) exceeds dimension size (4)");
    EXPECT_NO_LEAK_ERROR(tj_narrow(x, 1, 0, -1), TJ_ERR_INVALID_ARGUMENT, "aten::narrow",
                         "start (0) + length (-1) exceeds dimension size (4)");
    EXPECT_NO_LEAK_ERROR(tj_narrow(x, 2, 0, 1), TJ_ERR_INDEX, "aten::narrow", "dim 2 is out of range");
    EXPECT_NO_LEAK_ERROR(tj_narrow(scalar, 0, 0, 1), TJ_ERR_INDEX, "aten::narrow", "0-dim");
    EXPECT_NO_LEAK_ERROR(tj_narrow(NULL, 0, 0, 1), TJ_ERR_INVALID_ARGUMENT, "aten::narrow", "NULL");
    tj_tensor_release(x);
    tj_tensor_release(scalar);
}

/* ---- unbind, chunk, split_with_sizes ---- */

Test(views_split, unbind_through_the_dispatcher_gives_views_of_each_index)
{
    tj_tensor *x = arange_3x4(), *p[MAX_PIECES];
    int n;
    /* x.unbind(1): columns [0, 4, 8], [1, 5, 9], ... */
    n = call_list("aten::unbind.int", (tj_value[]){tj_v_tensor(x), tj_v_int(1)}, 2, p);
    cr_assert_eq(n, 4, "%d pieces", n);
    for (int k = 0; k < 4; k++) {
        expect_shape(p[k], 1, (int64_t[]){3}, "unbind piece");
        test_expect_close(p[k], (double[]){k, 4 + k, 8 + k}, 3, 0, 0);
    }
    cr_assert_not_null(tj_fill_(p[2], tj_v_int(7)), "%s", tj_last_error());
    test_expect_close(x, (double[]){0, 1, 7, 3, 4, 5, 7, 7, 8, 9, 7, 11}, 12, 0, 0);
    /* torch.zeros(0, 2).unbind(0): no pieces */
    n = call_list("aten::unbind.int", (tj_value[]){tj_v_tensor(test_f32(2, (int64_t[]){0, 2}, NULL)),
                                                            tj_v_int(0)}, 2, p);
    cr_expect_eq(n, 0, "%d pieces", n);
}

Test(views_split, chunk_and_split_with_sizes_through_the_dispatcher_give_pytorchs_pieces)
{
    tj_tensor *x = arange_3x4(), *p[MAX_PIECES];
    int n;
    /* x.chunk(3, 1): two [3, 2] pieces (ceil(4 / 3) = 2 columns each) */
    n = call_list("aten::chunk", (tj_value[]){tj_v_tensor(x), tj_v_int(3), tj_v_int(1)}, 3, p);
    cr_assert_eq(n, 2, "%d pieces", n);
    test_expect_close(p[1], (double[]){2, 3, 6, 7, 10, 11}, 6, 0, 0);
    cr_expect_eq(tj_tensor_storage_offset(p[1]), 2);
    /* torch.arange(5.).chunk(4): sizes 2, 2, 1; torch.zeros(2, 0).chunk(3, 1): three [2, 0] */
    tj_tensor *a5 = test_f32(1, (int64_t[]){5}, (float[]){0, 1, 2, 3, 4});
    n = call_list("aten::chunk", (tj_value[]){tj_v_tensor(a5), tj_v_int(4), tj_v_int(0)}, 3, p);
    cr_assert_eq(n, 3, "%d pieces", n);
    test_expect_close(p[2], (double[]){4}, 1, 0, 0);
    tj_tensor *e = test_f32(2, (int64_t[]){2, 0}, NULL);
    n = call_list("aten::chunk", (tj_value[]){tj_v_tensor(e), tj_v_int(3), tj_v_int(1)}, 3, p);
    cr_assert_eq(n, 3, "%d pieces", n);
    expect_shape(p[2], 2, (int64_t[]){2, 0}, "an empty chunk");
    /* x.split_with_sizes([1, 0, 2]): rows [0], none, [1, 2]; the last written through */
    const int64_t sizes[3] = {1, 0, 2};
    n = call_list("aten::split_with_sizes",
                           (tj_value[]){tj_v_tensor(x), tj_v_ints(sizes, 3), tj_v_int(0)}, 3, p);
    cr_assert_eq(n, 3, "%d pieces", n);
    expect_shape(p[1], 2, (int64_t[]){0, 4}, "the empty piece");
    test_expect_close(p[0], (double[]){0, 1, 2, 3}, 4, 0, 0);
    cr_assert_not_null(tj_fill_(p[2], tj_v_int(-2)), "%s", tj_last_error());
    test_expect_close(x, (double[]){0, 1, 2, 3, -2, -2, -2, -2, -2, -2, -2, -2}, 12, 0, 0);
}

/* One dispatcher call that must fail: the status, a message naming op and
 * needle, and no allocation left behind. */
static void expect_call_error(const char *op, const tj_value *args, int nargs, tj_status status, const char *needle)
{
    int64_t base = live_allocations();
    tj_scope *s = tj_scope_begin();
    tj_value out;
    cr_expect_eq(tj_call(op, args, nargs, &out), status, "%s: %s", op, tj_last_error());
    cr_expect(strstr(tj_last_error(), op) && strstr(tj_last_error(), needle), "%s: '%s' in: %s", op, needle,
              tj_last_error());
    tj_scope_end(s);
    cr_expect_eq(live_allocations(), base, "%s (%s) leaks nothing", op, needle);
}

Test(views_split_errors, list_views_refuse_bad_arguments_naming_the_operator)
{
    tj_tensor *x = arange_3x4(), *scalar = test_f32(0, NULL, (float[]){1});
    tj_value X = tj_v_tensor(x);
    /* torch: "Dimension out of range (expected to be in range of [-2, 1], but got 2)" */
    expect_call_error("aten::unbind.int", (tj_value[]){X, tj_v_int(2)}, 2, TJ_ERR_INDEX, "dim 2 is out of range");
    expect_call_error("aten::unbind.int", (tj_value[]){tj_v_tensor(scalar), tj_v_int(0)}, 2, TJ_ERR_INDEX, "0-dim");
    /* torch: "chunk expects `chunks` to be greater than 0, got: 0" */
    expect_call_error("aten::chunk", (tj_value[]){X, tj_v_int(0), tj_v_int(1)}, 3, TJ_ERR_INVALID_ARGUMENT,
                      "chunk expects `chunks` to be greater than 0, got: 0");
    expect_call_error("aten::chunk", (tj_value[]){X, tj_v_int(-2), tj_v_int(1)}, 3, TJ_ERR_INVALID_ARGUMENT, "got: -2");
    expect_call_error("aten::chunk", (tj_value[]){X, tj_v_int(2), tj_v_int(-3)}, 3, TJ_ERR_INDEX, "dim -3 is out of range");
    /* torch: "split_with_sizes expects split_sizes to sum exactly to 4 (input tensor's size at dimension 1),
     * but got split_sizes=[1, 2]" */
    const int64_t short_sizes[2] = {1, 2}, negative[2] = {5, -1};
    expect_call_error("aten::split_with_sizes", (tj_value[]){X, tj_v_ints(short_sizes, 2), tj_v_int(1)}, 3,
                      TJ_ERR_INVALID_ARGUMENT,
                      "split_with_sizes expects split_sizes to sum exactly to 4 (input tensor's size at dimension 1), "
                      "but got split_sizes=[1, 2]");
    expect_call_error("aten::split_with_sizes", (tj_value[]){X, tj_v_ints(negative, 2), tj_v_int(1)}, 3,
                      TJ_ERR_INVALID_ARGUMENT, "only non-negative entries, but got split_sizes=[5, -1]");
    /* sizes whose sum wraps past INT64_MAX and comes back to 4 (the overflow was
     * forgotten at the next add: the pieces were sliced at wrapped offsets) */
    const int64_t wrapping[3] = {INT64_MAX, 1, 5};
    expect_call_error("aten::split_with_sizes", (tj_value[]){X, tj_v_ints(wrapping, 3), tj_v_int(1)}, 3,
                      TJ_ERR_INVALID_ARGUMENT, "to sum exactly to 4");
    /* more pieces than a dispatched list holds */
    tj_tensor *big = tj_tensor_empty(TJ_FLOAT32, 1, (int64_t[]){300});
    expect_call_error("aten::unbind.int", (tj_value[]){tj_v_tensor(big), tj_v_int(0)}, 2, TJ_ERR_INVALID_ARGUMENT,
                      "300 pieces do not fit in 256 outputs");
    tj_tensor_release(x);
    tj_tensor_release(scalar);
    tj_tensor_release(big);
}

/* ---- tracing ---- */

/* x.narrow(1, -3, 2), x.unbind(0)[2], x.chunk(3, 1)[1], x.split_with_sizes([1, 2], 0)[1] */
static tj_status views_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *u[3], *c[3], *s[2];
    int nu, nc, ns;
    if (tj_unbind(in[0], 0, u, 3, &nu) != TJ_OK || tj_chunk(in[0], 3, 1, c, 3, &nc) != TJ_OK ||
        tj_split_with_sizes(in[0], (const int64_t[]){1, 2}, 2, 0, s, 2, &ns) != TJ_OK)
        return tj_last_status();
    /* each piece through an operator, so that replay copies it out */
    out[0] = tj_neg(tj_narrow(in[0], 1, -3, 2));
    out[1] = tj_neg(u[2]);
    out[2] = tj_neg(c[1]);
    out[3] = tj_neg(s[1]);
    *n_out = 4;
    return out[0] && out[1] && out[2] && out[3] ? TJ_OK : tj_last_status();
}

Test(views_split, make_fx_records_the_pieces_as_slices_and_selects)
{
    /* torch 1.13's make_fx: narrow -> slice.Tensor(x_1, 1, 1, 3), chunk -> split.Tensor(x_1, 2, 1) (whose
     * pieces are slices here), unbind.int and split_with_sizes one node each (a select / slice per piece here) */
    const char *want[] = {"aten.slice.Tensor(%arg0_1, 1, 1, 3)", "aten.select.int(%arg0_1, 0, 2)",
                          "aten.slice.Tensor(%arg0_1, 1, 2, 4)", "aten.slice.Tensor(%arg0_1, 0, 1, 3)"};
    tj_tensor *x = test_random_f32(2, (int64_t[]){3, 4}, 5);
    test_expect_traced(views_step, &x, 1, 4, want, 4, "aten.narrow", 0);
}

/* torch: xs below, loss = (x.narrow(1, -3, 2) * w[:, :2]).sum() + (x.unbind(0)[2] * w[0]).sum()
 *   + (x.chunk(3, 1)[1] * w[:, 2:4]).sum() + 0.5 * (x.split_with_sizes([1, 2], 0)[1] * w[:2]).sum(),
 * w = arange(1., 13.).view(3, 4) */
static const double XS[12] = {0.5, -1.25, 2.0, 3.5, -0.75, 1.5, -2.5, 0.25, 1.0, -3.0, 0.125, 2.25};
static const double VIEWS_GRAD[12] = {0.0, 1.0, 5.0, 4.0, 0.5, 6.0, 14.5, 10.0, 3.5, 14.0, 27.5, 20.0};

static tj_status views_loss_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]), *w = in[1], *u[3], *c[3], *s[2];
    int nu, nc, ns;
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK || tj_unbind(x, 0, u, 3, &nu) != TJ_OK ||
        tj_chunk(x, 3, 1, c, 3, &nc) != TJ_OK || tj_split_with_sizes(x, (const int64_t[]){1, 2}, 2, 0, s, 2, &ns))
        return tj_last_status();
    tj_tensor *terms[4] = {
        tj_sum(tj_mul(tj_narrow(x, 1, -3, 2), tj_narrow(w, 1, 0, 2)), TJ_DTYPE_NONE),
        tj_sum(tj_mul(u[2], tj_select(w, 0, 0)), TJ_DTYPE_NONE),
        tj_sum(tj_mul(c[1], tj_narrow(w, 1, 2, 2)), TJ_DTYPE_NONE),
        tj_mul_scalar(tj_sum(tj_mul(s[1], tj_narrow(w, 0, 0, 2)), TJ_DTYPE_NONE), tj_v_float(0.5)),
    };
    tj_tensor *loss = tj_add(tj_add(terms[0], terms[1]), tj_add(terms[2], terms[3]));
    *n_out = 2;
    out[0] = loss;
    return loss ? tj_autograd_grad(&loss, 1, NULL, &x, 1, &out[1]) : tj_last_status();
}

Test(views_split, gradients_through_the_pieces_match_pytorch_eager_and_traced)
{
    tj_tensor *in[2] = {test_f64(2, (int64_t[]){3, 4}, XS),
                        test_f64(2, (int64_t[]){3, 4}, (double[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})};
    tj_tensor *out[2];
    test_run_eager(views_loss_step, in, 2, out, 2);
    test_expect_close(out[1], VIEWS_GRAD, 12, 0, 0);
    const char *want[] = {"aten.slice_backward.default(", "aten.select_backward.default("};
    test_expect_traced(views_loss_step, in, 2, 2, want, 2, NULL, 0);
}

/* ---- scatter_add_, index_add_ ---- */

/* base = torch.arange(12.).view(4, 3).t(): a transposed [3, 4] self */
static tj_tensor *transposed_self(void)
{
    tj_tensor *b = test_f32(2, (int64_t[]){4, 3}, (float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    return tj_transpose(b, 0, 1);
}
static const int64_t SA_INDEX[8] = {1, 0, 2, 1, 2, 2, 0, 0};
static const float SA_SRC[8] = {0.5f, 1.5f, -2.0f, 4.0f, 3.0f, -1.0f, 0.25f, 2.0f};
static const float IA_SOURCE[12] = {1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4};

Test(views_split, scatter_add_and_index_add_write_a_strided_self_as_pytorch)
{
    tj_tensor *self = transposed_self();
    tj_tensor *i = test_i64(2, (int64_t[]){2, 4}, SA_INDEX), *src = test_f32(2, (int64_t[]){2, 4}, SA_SRC);
    /* base.scatter_add_(0, i, src) */
    cr_expect_eq(tj_scatter_add_(self, 0, i, src), self, "returns self: %s", tj_last_error());
    test_expect_close(self, (double[]){0, 4.5, 6.25, 11, 1.5, 4, 7, 14, 5, 4, 6, 11}, 12, 0, 0);
    /* base.index_add_(0, tensor([2, 0, 2]), source, alpha=2.5): repeated row 2 accumulates */
    tj_tensor *self2 = transposed_self(), *ii = test_i64(1, (int64_t[]){3}, (int64_t[]){2, 0, 2});
    cr_expect_eq(tj_index_add_(self2, 0, ii, test_f32(2, (int64_t[]){3, 4}, IA_SOURCE), tj_v_float(2.5)), self2,
                 "returns self: %s", tj_last_error());
    test_expect_close(self2, (double[]){12.5, 18, 23.5, 29, 1, 4, 7, 10, 2, 5, 8, 11}, 12, 0, 0);
}

/* y = x * 1; y.scatter_add_(0, i, s); y.index_add_(0, [2, 0, 2], so, alpha=2.5);
 * loss = (y * W).sum(); returns y, dloss/dx, dloss/ds, dloss/dso */
static const double W_LOSS[12] = {1, -2, 3, 0.5, 2, 1, -1, 4, 0.25, 3, 2, -2};

static tj_status adds_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *leaves[3];
    for (int k = 0; k < 3; k++)
        if (!(leaves[k] = tj_tensor_detach(in[k])) || tj_tensor_set_requires_grad(leaves[k], true) != TJ_OK)
            return tj_last_status();
    tj_tensor *y = tj_mul_scalar(leaves[0], tj_v_int(1));
    y = tj_scatter_add_(y, 0, in[3], leaves[1]);
    y = tj_index_add_(y, 0, in[4], leaves[2], tj_v_float(2.5));
    tj_tensor *loss = tj_sum(tj_mul(y, in[5]), TJ_DTYPE_NONE);
    *n_out = 4;
    out[0] = y;
    return loss ? tj_autograd_grad(&loss, 1, NULL, leaves, 3, &out[1]) : tj_last_status();
}

Test(views_split, in_place_adds_differentiate_trace_and_replay_as_pytorch)
{
    tj_tensor *in[6] = {test_f64(2, (int64_t[]){3, 4}, XS),
                        tj_to_copy(test_f32(2, (int64_t[]){2, 4}, SA_SRC), TJ_FLOAT64),
                        tj_to_copy(test_f32(2, (int64_t[]){3, 4}, IA_SOURCE), TJ_FLOAT64),
                        test_i64(2, (int64_t[]){2, 4}, SA_INDEX),
                        test_i64(1, (int64_t[]){3}, (int64_t[]){2, 0, 2}),
                        test_f64(2, (int64_t[]){3, 4}, W_LOSS)};
    tj_tensor *out[4];
    test_run_eager(adds_step, in, 6, out, 4);
    /* torch: x gets W (both adds pass the gradient through); s gets W gathered at i; so gets 2.5 W[[2, 0, 2]] */
    test_expect_close(out[1], W_LOSS, 12, 0, 0);
    test_expect_close(out[2], (double[]){2, -2, 2, 4, 0.25, 3, 3, 0.5}, 8, 0, 0);
    test_expect_close(out[3], (double[]){0.625, 7.5, 5, -5, 2.5, -5, 7.5, 1.25, 0.625, 7.5, 5, -5}, 12, 0, 0);
    /* torch 1.13's make_fx records aten.scatter_add_.default and aten.index_add_.default(..., alpha = 2.5) */
    const char *want[] = {"aten.scatter_add_.default(%mul, 0, %arg3_1, %detach_1)",
                          "aten.index_add_.default(%scatter_add_, 0, %arg4_1, %detach_2, alpha = 2.5)"};
    /* and, as there, no copy of self's old value: the formulas read none of it */
    test_expect_traced(adds_step, in, 6, 4, want, 2, "aten.clone", 0);
}

/* x.clone().scatter_add_(0, i, s).index_add_(1, [3, 0], so): no autograd */
static tj_status adds_forward(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_scatter_add_(tj_clone(in[0]), 0, in[1], in[2]);
    out[0] = tj_index_add_(y, 1, test_i64(1, (int64_t[]){2}, (int64_t[]){3, 0}), in[3], tj_v_int(2));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(views_split, functionalisation_turns_the_adds_into_their_functional_operators)
{
    tj_tensor *in[4] = {test_f64(2, (int64_t[]){3, 4}, XS), test_i64(2, (int64_t[]){2, 4}, SA_INDEX),
                        tj_to_copy(test_f32(2, (int64_t[]){2, 4}, SA_SRC), TJ_FLOAT64),
                        test_f64(2, (int64_t[]){3, 2}, (double[]){1, -1, 2, 0.5, -3, 4})};
    tj_tensor *eager;
    test_run_eager(adds_forward, in, 4, &eager, 1);
    tj_graph *g = tj_make_fx(adds_forward, NULL, in, 4, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_pass_functionalize(g), 2, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::scatter_add")), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::index_add")), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::scatter_add_")), 0);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::index_add_")), 0);
    test_expect_same(test_replay1(g, in, 4), eager, "the functionalised graph");
    tj_graph_free(g);
}

Test(views_split_errors, in_place_adds_refuse_bad_indices_and_overlaps_leaving_self_unchanged)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = arange_3x4(), *ones = test_f32(2, (int64_t[]){2, 4}, (float[]){1, 1, 1, 1, 1, 1, 1, 1});
    tj_tensor *i = test_i64(2, (int64_t[]){1, 4}, (int64_t[]){0, 3, 1, 0});
    /* torch: "index 3 is out of bounds for dimension 0 with size 3" */
    EXPECT_NO_LEAK_ERROR(tj_scatter_add_(x, 0, i, ones), TJ_ERR_INDEX, "aten::scatter_add_",
                         "index 3 is out of bounds for dimension 0 with size 3");
    EXPECT_NO_LEAK_ERROR(tj_scatter_add_(x, 2, i, ones), TJ_ERR_INDEX, "aten::scatter_add_", "");
    /* torch: "index out of range in self" */
    tj_tensor *bad = test_i64(1, (int64_t[]){2}, (int64_t[]){0, 3});
    EXPECT_NO_LEAK_ERROR(tj_index_add_(x, 0, bad, ones, tj_v_int(1)), TJ_ERR_INDEX, "aten::index_add_", "3");
    tj_tensor *neg = test_i64(1, (int64_t[]){2}, (int64_t[]){0, -1});
    EXPECT_NO_LEAK_ERROR(tj_index_add_(x, 0, neg, ones, tj_v_int(1)), TJ_ERR_INDEX, "aten::index_add_", "-1");
    EXPECT_NO_LEAK_ERROR(tj_index_add_(x, 2, neg, ones, tj_v_int(1)), TJ_ERR_INDEX, "aten::index_add_", "");
    /* torch: "some elements of the input tensor and the written-to tensor refer to a single memory location" */
    tj_tensor *rows = tj_narrow(x, 0, 0, 2), *ok = test_i64(1, (int64_t[]){2}, (int64_t[]){0, 1});
    EXPECT_NO_LEAK_ERROR(tj_index_add_(x, 0, ok, rows, tj_v_int(1)), TJ_ERR_UNSUPPORTED, "aten::index_add_",
                         "source");
    EXPECT_NO_LEAK_ERROR(tj_scatter_add_(x, 0, tj_zeros((int64_t[]){3, 4}, 2, TJ_INT64), x), TJ_ERR_UNSUPPORTED,
                         "aten::scatter_add_", "src");
    /* torch: "scatter(): Expected self.dtype to be equal to src.dtype" */
    EXPECT_NO_LEAK_ERROR(tj_scatter_add_(x, 0, i, tj_to_copy(ones, TJ_FLOAT64)), TJ_ERR_DTYPE, "aten::scatter_add_",
                         "float64");
    test_expect_close(x, (double[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 12, 0, 0);
    tj_scope_end(s);
}
