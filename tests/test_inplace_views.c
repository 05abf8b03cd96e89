/* The in-place views aten::unsqueeze_, squeeze_.dim, squeeze_, transpose_,
 * t_: self's shape, strides and storage offset change, not its data.
 *
 * Reference values from PyTorch 1.13 (/usr/bin/python3, torch 1.13.0a0):
 * geometries as x.shape / x.stride() / x.storage_offset() after the calls
 * written next to each test, gradients as x.grad, and the graphs as
 * make_fx(f)(x).code and make_fx(functorch.functionalize(f))(x).code,
 * whose operator sequences are stored below. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tracer/graph_internal.h"

TestSuite(inplace_views, .init = test_scope_open, .fini = test_scope_close);

/* torch.arange(n, dtype=float32) viewed as `shape` */
static tj_tensor *arange_as(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    float v[64];
    for (int64_t i = 0; i < n; i++) v[i] = (float)i;
    return test_f32(ndim, shape, v);
}

static void expect_geometry(const tj_tensor *t, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset)
{
    cr_assert_eq(tj_tensor_ndim(t), ndim, "rank %d, want %d", tj_tensor_ndim(t), ndim);
    for (int d = 0; d < ndim; d++) {
        cr_expect_eq(tj_tensor_shape(t)[d], shape[d], "size %d: %lld, want %lld", d, (long long)tj_tensor_shape(t)[d],
                     (long long)shape[d]);
        cr_expect_eq(tj_tensor_strides(t)[d], strides[d], "stride %d: %lld, want %lld", d,
                     (long long)tj_tensor_strides(t)[d], (long long)strides[d]);
    }
    cr_expect_eq(t->offset, offset, "offset %lld, want %lld", (long long)t->offset, (long long)offset);
}

/* ---- eager ---- */

/* x = arange(6.).reshape(2,3)[:, 1:]; x.unsqueeze_(2) -> [2,2,1] (3,1,1);
 * x.unsqueeze_(0) -> [1,2,2,1] (6,3,1,1), storage offset 1 */
Test(inplace_views, unsqueeze_changes_the_handle_in_place_and_returns_self)
{
    int64_t s[2] = {2, 3};
    tj_tensor *base = arange_as(2, s), *x = tj_slice(base, 1, true, 1, false, 0, 1);
    const void *data = tj_tensor_data(x);
    uint32_t v0 = tj_tensor_version(x);
    cr_assert_eq(tj_unsqueeze_(x, 2), x, "returns self");
    expect_geometry(x, 3, (int64_t[]){2, 2, 1}, (int64_t[]){3, 1, 1}, 1);
    cr_assert_eq(tj_unsqueeze_(x, 0), x);
    expect_geometry(x, 4, (int64_t[]){1, 2, 2, 1}, (int64_t[]){6, 3, 1, 1}, 1);
    cr_expect_eq(tj_tensor_data(x), data, "same storage, same first element");
    cr_expect_eq(tj_tensor_numel(x), 4);
    cr_expect_eq(tj_tensor_version(x), v0 + 2, "each call bumps the version, as torch's x._version");
    double want[4] = {1, 2, 4, 5};
    test_expect_close(x, want, 4, 0, 0);
}

/* x = arange(24.).reshape(2,1,3,1,4)[:, :, 1:]  (strides 12,12,4,4,1);
 * x.squeeze_() -> [2,2,4] (12,4,1), storage offset 4 */
Test(inplace_views, squeeze_drops_every_size_one_dim_of_a_strided_view)
{
    int64_t s[5] = {2, 1, 3, 1, 4};
    tj_tensor *x = tj_slice(arange_as(5, s), 2, true, 1, false, 0, 1);
    cr_assert_eq(tj_squeeze_(x), x);
    expect_geometry(x, 3, (int64_t[]){2, 2, 4}, (int64_t[]){12, 4, 1}, 4);
    double want[16] = {4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23};
    test_expect_close(x, want, 16, 0, 0);
}

/* squeeze_.dim removes a size-1 dim and leaves other sizes (and 0-dim) alone */
Test(inplace_views, squeeze_dim_removes_only_a_size_one_dim)
{
    int64_t s[3] = {2, 1, 3};
    tj_tensor *x = arange_as(3, s);
    cr_assert_eq(tj_squeeze_dim_(x, 0), x);
    expect_geometry(x, 3, s, (int64_t[]){3, 3, 1}, 0);
    cr_assert_eq(tj_squeeze_dim_(x, -2), x);
    expect_geometry(x, 2, (int64_t[]){2, 3}, (int64_t[]){3, 1}, 0);
    tj_tensor *z = tj_scalar_tensor(tj_v_float(5), TJ_FLOAT32);
    cr_assert_eq(tj_squeeze_dim_(z, -1), z, "torch.tensor(5.).squeeze_(-1) is allowed");
    cr_expect_eq(tj_tensor_ndim(z), 0);
}

/* x = arange(6.).reshape(2,3)[:, 1:]; x.t_() -> [2,2] (1,3), offset 1 */
Test(inplace_views, t_and_transpose_swap_the_strides_of_self)
{
    int64_t s[2] = {2, 3};
    tj_tensor *x = tj_slice(arange_as(2, s), 1, true, 1, false, 0, 1);
    cr_assert_eq(tj_t_(x), x);
    expect_geometry(x, 2, (int64_t[]){2, 2}, (int64_t[]){1, 3}, 1);
    double want[4] = {1, 4, 2, 5};
    test_expect_close(x, want, 4, 0, 0);
    int64_t s3[3] = {2, 3, 4};
    tj_tensor *y = arange_as(3, s3);
    cr_assert_eq(tj_transpose_(y, -1, 0), y);
    expect_geometry(y, 3, (int64_t[]){4, 3, 2}, (int64_t[]){1, 4, 12}, 0);
    tj_tensor *z = tj_scalar_tensor(tj_v_float(5), TJ_FLOAT32);
    cr_assert_eq(tj_t_(z), z, "torch.tensor(5.).t_() has shape []");
    cr_assert_eq(tj_transpose_(z, 0, -1), z);
    cr_expect_eq(tj_tensor_ndim(z), 0);
    cr_assert_eq(tj_unsqueeze_(z, 0), z);
    expect_geometry(z, 1, (int64_t[]){1}, (int64_t[]){1}, 0);
}

Test(inplace_views, views_taken_before_keep_their_geometry_and_share_the_data)
{
    int64_t s[2] = {2, 3};
    tj_tensor *x = arange_as(2, s), *v = tj_transpose(x, 0, 1), *w = tj_select(x, 0, 1);
    cr_assert_eq(tj_unsqueeze_(x, 1), x);
    expect_geometry(x, 3, (int64_t[]){2, 1, 3}, (int64_t[]){3, 3, 1}, 0);
    expect_geometry(v, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 0);
    expect_geometry(w, 1, (int64_t[]){3}, (int64_t[]){1}, 3);
    /* a write through self after the call reaches the older views */
    cr_assert_not_null(tj_mul_scalar_(x, tj_v_int(10)), "%s", tj_last_error());
    double wv[6] = {0, 30, 10, 40, 20, 50}, ww[3] = {30, 40, 50};
    test_expect_close(v, wv, 6, 0, 0);
    test_expect_close(w, ww, 3, 0, 0);
}

/* The errors torch 1.13 gives (IndexError "Dimension out of range (expected
 * to be in range of [-3, 2], but got 3)", RuntimeError "t_() expects a
 * tensor with <= 2 dimensions, but self is 3D"), naming the in-place
 * operator; self keeps its geometry and version. */
static void expect_unchanged(const tj_tensor *x, uint32_t version)
{
    expect_geometry(x, 2, (int64_t[]){2, 3}, (int64_t[]){3, 1}, 0);
    cr_expect_eq(tj_tensor_version(x), version, "no version bump on failure");
}

Test(inplace_views, errors_name_the_operator_and_leave_self_unchanged)
{
    int64_t s[2] = {2, 3};
    tj_tensor *x = arange_as(2, s);
    uint32_t v = tj_tensor_version(x);
    test_expect_error(tj_unsqueeze_(x, 3), TJ_ERR_INDEX, "aten::unsqueeze_", "dim 3 is out of range for a new dim of a tensor of rank 2 (expected -3..2)");
    expect_unchanged(x, v);
    test_expect_error(tj_unsqueeze_(x, -4), TJ_ERR_INDEX, "aten::unsqueeze_", "dim -4");
    expect_unchanged(x, v);
    test_expect_error(tj_squeeze_dim_(x, 2), TJ_ERR_INDEX, "aten::squeeze_.dim", "dim 2 is out of range");
    expect_unchanged(x, v);
    test_expect_error(tj_squeeze_dim_(x, -3), TJ_ERR_INDEX, "aten::squeeze_.dim", "dim -3");
    expect_unchanged(x, v);
    test_expect_error(tj_transpose_(x, 0, 2), TJ_ERR_INDEX, "aten::transpose_", "dim 2");
    expect_unchanged(x, v);
    test_expect_error(tj_transpose_(x, -3, 0), TJ_ERR_INDEX, "aten::transpose_", "dim -3");
    expect_unchanged(x, v);
    int64_t s3[3] = {1, 2, 3};
    tj_tensor *y = arange_as(3, s3);
    test_expect_error(tj_t_(y), TJ_ERR_SHAPE, "aten::t_", "self is 3D (shape [1, 2, 3])");
    expect_geometry(y, 3, s3, (int64_t[]){6, 3, 1}, 0);
    tj_tensor *z = tj_scalar_tensor(tj_v_float(5), TJ_FLOAT32);
    test_expect_error(tj_squeeze_dim_(z, 1), TJ_ERR_INDEX, "aten::squeeze_.dim", "dim 1");
    test_expect_error(tj_unsqueeze_(z, -3), TJ_ERR_INDEX, "aten::unsqueeze_", "dim -3");
    cr_expect_eq(tj_tensor_ndim(z), 0);
    test_expect_error(tj_t_(NULL), TJ_ERR_INVALID_ARGUMENT, "aten::t_", "NULL");
}

/* ---- autograd ---- */

static const double X6[6] = {0.5, -1, 2, 3, 0.25, -2};

/* torch: x = randn(2,3, requires_grad=True); y = x * 2; y.unsqueeze_(0);
 * y.sum().backward() -> x.grad all 2, y.grad_fn UnsqueezeBackward1 */
Test(inplace_views, gradient_flows_through_unsqueeze_of_a_non_leaf)
{
    int64_t s[2] = {2, 3};
    tj_tensor *x = test_f64_grad(X6, 2, s, true), *y = tj_mul_scalar(x, tj_v_int(2));
    cr_assert_eq(tj_unsqueeze_(y, 0), y, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_ndim(y), 3);
    cr_expect_not(tj_tensor_is_leaf(y));
    cr_assert_eq(tj_backward(tj_sum(y, -1), NULL), TJ_OK, "%s", tj_last_error());
    double want[6] = {2, 2, 2, 2, 2, 2};
    test_expect_close(tj_tensor_grad(x), want, 6, 0, 0);
}

/* torch: y = x * 2; y.t_(); y.unsqueeze_(1); w = arange(6.).reshape(3,1,2);
 * (y * y * w).sum().backward() -> x.grad [[0,-16,64],[24,6,-80]] */
Test(inplace_views, gradient_of_t_then_unsqueeze_matches_torch)
{
    int64_t s[2] = {2, 3}, sw[3] = {3, 1, 2};
    tj_tensor *x = test_f64_grad(X6, 2, s, true), *y = tj_mul_scalar(x, tj_v_int(2));
    cr_assert_not_null(tj_t_(y), "%s", tj_last_error());
    cr_assert_not_null(tj_unsqueeze_(y, 1), "%s", tj_last_error());
    tj_tensor *w = tj_to_copy(arange_as(3, sw), TJ_FLOAT64);
    cr_assert_eq(tj_backward(tj_sum(tj_mul(tj_mul(y, y), w), -1), NULL), TJ_OK, "%s", tj_last_error());
    double want[6] = {0, -16, 64, 24, 6, -80};
    test_expect_close(tj_tensor_grad(x), want, 6, 1e-12, 0);
}

/* torch: y = (x * 1).reshape(2,1,3); y.squeeze_(); w = arange(6.).reshape(2,3)+1;
 * (y * w * y).sum().backward() -> x.grad [[1,-4,12],[24,2.5,-24]] */
Test(inplace_views, gradient_of_squeeze_unsqueezes_at_the_old_size_one_dims)
{
    int64_t s[2] = {2, 3}, s3[3] = {2, 1, 3};
    tj_tensor *x = test_f64_grad(X6, 2, s, true), *y = tj_reshape(tj_mul_scalar(x, tj_v_int(1)), s3, 3);
    cr_assert_not_null(tj_squeeze_(y), "%s", tj_last_error());
    tj_tensor *w = tj_add_scalar(tj_to_copy(arange_as(2, s), TJ_FLOAT64), tj_v_int(1));
    cr_assert_eq(tj_backward(tj_sum(tj_mul(tj_mul(y, w), y), -1), NULL), TJ_OK, "%s", tj_last_error());
    double want[6] = {1, -4, 12, 24, 2.5, -24};
    test_expect_close(tj_tensor_grad(x), want, 6, 1e-12, 0);
}

/* torch: y = x * 2; y.transpose_(0, 1); y.squeeze_(1) (size 2: no change);
 * (y * arange(6.).reshape(3,2)).sum().backward() -> [[0,4,8],[2,6,10]] */
Test(inplace_views, gradient_of_transpose_and_a_no_op_squeeze_dim)
{
    int64_t s[2] = {2, 3}, sw[2] = {3, 2};
    tj_tensor *x = test_f64_grad(X6, 2, s, true), *y = tj_mul_scalar(x, tj_v_int(2));
    cr_assert_not_null(tj_transpose_(y, 0, 1), "%s", tj_last_error());
    cr_assert_not_null(tj_squeeze_dim_(y, 1), "%s", tj_last_error());
    tj_tensor *w = tj_to_copy(arange_as(2, sw), TJ_FLOAT64);
    cr_assert_eq(tj_backward(tj_sum(tj_mul(y, w), -1), NULL), TJ_OK, "%s", tj_last_error());
    double want[6] = {0, 4, 8, 2, 6, 10};
    test_expect_close(tj_tensor_grad(x), want, 6, 0, 0);
}

/* torch: "a leaf Variable that requires grad is being used in an in-place
 * operation." and "a view of a leaf Variable ..."; self unchanged */
Test(inplace_views, leaf_that_requires_grad_and_views_of_it_are_refused)
{
    int64_t s[2] = {2, 3};
    tj_tensor *x = test_f64_grad(X6, 2, s, true);
    uint32_t v = tj_tensor_version(x);
    test_expect_error(tj_unsqueeze_(x, 0), TJ_ERR_INVALID_ARGUMENT, "aten::unsqueeze_", "leaf that requires grad");
    expect_unchanged(x, v);
    test_expect_error(tj_t_(x), TJ_ERR_INVALID_ARGUMENT, "aten::t_", "leaf that requires grad");
    expect_unchanged(x, v);
    tj_tensor *row = tj_select(x, 0, 0);
    test_expect_error(tj_unsqueeze_(row, 0), TJ_ERR_INVALID_ARGUMENT, "aten::unsqueeze_", "view of a leaf");
    cr_expect_eq(tj_tensor_ndim(row), 1);
    /* under no_grad it is allowed, as torch's (x stays a leaf requiring grad) */
    bool was = tj_set_grad_enabled(false);
    cr_expect_eq(tj_unsqueeze_(x, 0), x, "%s", tj_last_error());
    tj_set_grad_enabled(was);
    cr_expect_eq(tj_tensor_ndim(x), 3);
    cr_expect(tj_tensor_requires_grad(x) && tj_tensor_is_leaf(x));
}

/* torch: y = x * 2; a, b = y.split(1); a.squeeze_(0) -> "Output 0 of
 * SplitBackward0 is a view ... returns multiple views" */
Test(inplace_views, views_of_split_are_refused_under_autograd)
{
    int64_t s[2] = {2, 3};
    tj_tensor *x = test_f64_grad(X6, 2, s, true), *y = tj_mul_scalar(x, tj_v_int(2)), *parts[2];
    int np;
    cr_assert_eq(tj_split(y, 1, 0, parts, 2, &np), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(np, 2);
    test_expect_error(tj_squeeze_dim_(parts[0], 0), TJ_ERR_INVALID_ARGUMENT, "aten::squeeze_.dim", "several views");
    cr_expect_eq(tj_tensor_ndim(parts[0]), 2);
}

/* torch: y = x * 2; v = y[0]; v.unsqueeze_(0) (v stays a view of y, its
 * grad_fn UnsqueezeBackward1); (v * arange(3.)).sum().backward() ->
 * x.grad [[0,2,4],[0,0,0]] */
Test(inplace_views, on_a_view_only_the_views_history_changes)
{
    int64_t s[2] = {2, 3}, s3[1] = {3};
    tj_tensor *x = test_f64_grad(X6, 2, s, true), *y = tj_mul_scalar(x, tj_v_int(2)), *v = tj_select(y, 0, 0);
    cr_assert_eq(tj_unsqueeze_(v, 0), v, "%s", tj_last_error());
    cr_expect_eq(v->view_base, y, "still a view of y");
    tj_tensor *w = tj_to_copy(arange_as(1, s3), TJ_FLOAT64);
    cr_assert_eq(tj_backward(tj_sum(tj_mul(v, w), -1), NULL), TJ_OK, "%s", tj_last_error());
    double want[6] = {0, 2, 4, 0, 0, 0};
    test_expect_close(tj_tensor_grad(x), want, 6, 0, 0);
}

/* torch: y = x * 2; v = y.t(); v.unsqueeze_(0); v.mul_(3) (CopySlices into
 * y over v's new geometry); (y * arange(6.).reshape(2,3)).sum().backward()
 * -> x.grad [[0,6,12],[18,24,30]] */
Test(inplace_views, a_later_write_through_the_view_reaches_its_base)
{
    int64_t s[2] = {2, 3};
    tj_tensor *x = test_f64_grad(X6, 2, s, true), *y = tj_mul_scalar(x, tj_v_int(2)), *v = tj_t(y);
    cr_assert_not_null(tj_unsqueeze_(v, 0), "%s", tj_last_error());
    cr_assert_not_null(tj_mul_scalar_(v, tj_v_int(3)), "%s", tj_last_error());
    double wy[6] = {3, -6, 12, 18, 1.5, -12};
    test_expect_close(y, wy, 6, 1e-12, 0);
    tj_tensor *w = tj_to_copy(arange_as(2, s), TJ_FLOAT64);
    cr_assert_eq(tj_backward(tj_sum(tj_mul(y, w), -1), NULL), TJ_OK, "%s", tj_last_error());
    double want[6] = {0, 6, 12, 18, 24, 30};
    test_expect_close(tj_tensor_grad(x), want, 6, 0, 0);
}

/* torch: y = x.exp(); y.unsqueeze_(0); y.sum().backward() -> "one of the
 * variables needed for gradient computation has been modified by an
 * inplace operation" (the version bump) */
Test(inplace_views, a_saved_value_changed_in_place_fails_the_backward_pass)
{
    int64_t s[2] = {2, 3};
    tj_tensor *x = test_f64_grad(X6, 2, s, true), *y = tj_exp(x);
    cr_assert_not_null(tj_unsqueeze_(y, 0), "%s", tj_last_error());
    cr_expect_eq(tj_backward(tj_sum(y, -1), NULL), TJ_ERR_MODIFIED);
}

/* ---- tracing, functionalisation, replay ---- */

/* f(x): y = x * 2; y.unsqueeze_(0); y.transpose_(0, 2); y.squeeze_();
 * y.t_(); y.squeeze_(0); return y + 1 */
static tj_status chain(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_mul_scalar(in[0], tj_v_int(2));
    if (!tj_unsqueeze_(y, 0) || !tj_transpose_(y, 0, 2) || !tj_squeeze_(y) || !tj_t_(y) || !tj_squeeze_dim_(y, 0))
        return tj_last_status();
    out[0] = tj_add_scalar(y, tj_v_int(1));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* The call nodes' operators in order. */
static void expect_ops(const tj_graph *g, const char *const *want, int n)
{
    int k = 0;
    for (int i = 0; i < tj_graph_num_nodes(g); i++) {
        if (tj_graph_node_kind(g, i) != TJ_NODE_CALL) continue;
        const char *got = tj_op_name(tj_graph_node_op(g, i));
        cr_assert_lt(k, n, "extra call %s", got);
        cr_expect_str_eq(got, want[k], "call %d: %s, want %s", k, got, want[k]);
        k++;
    }
    cr_expect_eq(k, n, "%d calls, want %d", k, n);
}

/* make_fx(f)(x).code in torch 1.13:
 *     mul = torch.ops.aten.mul.Tensor(x_1, 2)
 *     unsqueeze_ = torch.ops.aten.unsqueeze_.default(mul, 0)
 *     transpose_ = torch.ops.aten.transpose_.default(unsqueeze_, 0, 2)
 *     squeeze_ = torch.ops.aten.squeeze_.default(transpose_)
 *     t_ = torch.ops.aten.t_.default(squeeze_)
 *     squeeze__1 = torch.ops.aten.squeeze_.dim(t_, 0)
 *     add = torch.ops.aten.add.Tensor(squeeze__1, 1)
 * as tjit prints it (tj_mul_scalar / tj_add_scalar record the .Scalar
 * overloads where torch wraps the number for .Tensor) */
static const char CHAIN_TEXT[] = "graph(%arg0_1 : f32[2, 3]):\n"
                                 "    %mul = aten.mul.Scalar(%arg0_1, 2)\n"
                                 "    %unsqueeze_ = aten.unsqueeze_.default(%mul, 0)\n"
                                 "    %transpose_ = aten.transpose_.default(%unsqueeze_, 0, 2)\n"
                                 "    %squeeze_ = aten.squeeze_.default(%transpose_)\n"
                                 "    %t_ = aten.t_.default(%squeeze_)\n"
                                 "    %squeeze__1 = aten.squeeze_.dim(%t_, 0)\n"
                                 "    %add = aten.add.Scalar(%squeeze__1, 1)\n"
                                 "    return (%add,)\n";
/* make_fx(functorch.functionalize(f))(x).code in torch 1.13:
 *     mul = torch.ops.aten.mul.Tensor(x_1, 2)
 *     unsqueeze = torch.ops.aten.unsqueeze.default(mul, 0)
 *     transpose = torch.ops.aten.transpose.int(unsqueeze, 0, 2)
 *     squeeze = torch.ops.aten.squeeze.default(transpose)
 *     t = torch.ops.aten.t.default(squeeze)
 *     squeeze_1 = torch.ops.aten.squeeze.dim(t, 0)
 *     add = torch.ops.aten.add.Tensor(squeeze_1, 1) */
static const char CHAIN_FUNCTIONAL_TEXT[] = "graph(%arg0_1 : f32[2, 3]):\n"
                                            "    %mul = aten.mul.Scalar(%arg0_1, 2)\n"
                                            "    %unsqueeze = aten.unsqueeze.default(%mul, 0)\n"
                                            "    %transpose = aten.transpose.int(%unsqueeze, 0, 2)\n"
                                            "    %squeeze = aten.squeeze.default(%transpose)\n"
                                            "    %t = aten.t.default(%squeeze)\n"
                                            "    %squeeze_1 = aten.squeeze.dim(%t, 0)\n"
                                            "    %add = aten.add.Scalar(%squeeze_1, 1)\n"
                                            "    return (%add,)\n";

static void expect_text(const tj_graph *g, const char *want)
{
    char *text = tj_graph_to_string(g);
    cr_assert_not_null(text);
    cr_expect_str_eq(text, want);
    free(text);
}

Test(inplace_views, make_fx_records_the_in_place_views_as_torch)
{
    int64_t s[2] = {2, 3};
    tj_tensor *x = arange_as(2, s);
    for (int mode = 0; mode < 2; mode++) {
        tj_graph *g = tj_make_fx(chain, NULL, &x, 1, NULL, mode ? TJ_TRACE_FAKE : TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s", tj_last_error());
        expect_text(g, CHAIN_TEXT);
        cr_expect_eq(tj_tensor_ndim(x), 2, "the input is not changed by tracing");
        tj_graph_free(g);
    }
    /* eager, replay and the core-decomposed trace agree: f(arange(6.)) = 2x+1 */
    const char *want[] = {"aten.unsqueeze_.default", "aten.t_.default", "aten.squeeze_.dim"};
    test_expect_traced(chain, &x, 1, 1, want, 3, NULL, 0);
    tj_tensor *r;
    cr_assert(test_run_core(chain, NULL, &x, 1, &r));
    double wr[6] = {1, 3, 5, 7, 9, 11};
    test_expect_close(r, wr, 6, 0, 0);
}

Test(inplace_views, functionalisation_records_the_view_operators)
{
    int64_t s[2] = {2, 3};
    tj_tensor *x = arange_as(2, s);
    tj_graph *g = tj_make_fx(chain, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_assert_eq(tj_pass_functionalize(g), 5, "%s", tj_last_error());
    expect_text(g, CHAIN_FUNCTIONAL_TEXT);
    cr_expect_eq(tj_graph_num_outputs(g), 1, "nothing written back");
    double wr[6] = {1, 3, 5, 7, 9, 11};
    test_expect_close(test_replay1(g, &x, 1), wr, 6, 0, 0);
    tj_tensor *out;
    cr_assert_eq(tj_graph_run(g, &x, 1, &out), TJ_OK, "%s", tj_last_error());
    test_expect_close(out, wr, 6, 0, 0);
    tj_graph_free(g);
}

/* g(x): y = x * 2; v = y[0]; y.t_(); y.select(0, 1).add_(10);
 * y.unsqueeze_(0); y.mul_(3); return v + 0, y * 1
 * torch on arange(6.).reshape(2,3): v + 0 = [0, 36, 12],
 * y * 1 = [[[0, 18], [36, 54], [12, 30]]] (shape [1, 3, 2]) */
static tj_status mixed(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_mul_scalar(in[0], tj_v_int(2)), *v = tj_select(y, 0, 0);
    if (!tj_t_(y) || !tj_add_scalar_(tj_select(y, 0, 1), tj_v_int(10), tj_v_int(1)) || !tj_unsqueeze_(y, 0) ||
        !tj_mul_scalar_(y, tj_v_int(3)))
        return tj_last_status();
    out[0] = tj_add_scalar(v, tj_v_int(0));
    out[1] = tj_mul_scalar(y, tj_v_int(1));
    *n_out = 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

/* torch 1.13's make_fx(g)(x).code records the same calls:
 *     mul = mul.Tensor(x_1, 2); select = select.int(mul, 0, 0); t_ = t_.default(mul)
 *     select_1 = select.int(t_, 0, 1); add_ = add_.Tensor(select_1, 10)
 *     unsqueeze_ = unsqueeze_.default(t_, 0); mul_ = mul_.Tensor(unsqueeze_, 3)
 *     add = add.Tensor(select, 0); mul_1 = mul.Tensor(mul_, 1); return (add, mul_1) */
static const char MIXED_TEXT[] = "graph(%arg0_1 : f32[2, 3]):\n"
                                 "    %mul = aten.mul.Scalar(%arg0_1, 2)\n"
                                 "    %select = aten.select.int(%mul, 0, 0)\n"
                                 "    %t_ = aten.t_.default(%mul)\n"
                                 "    %select_1 = aten.select.int(%t_, 0, 1)\n"
                                 "    %add_ = aten.add_.Scalar(%select_1, 10)\n"
                                 "    %unsqueeze_ = aten.unsqueeze_.default(%t_, 0)\n"
                                 "    %mul_ = aten.mul_.Scalar(%unsqueeze_, 3)\n"
                                 "    %add = aten.add.Scalar(%select, 0)\n"
                                 "    %mul_1 = aten.mul.Scalar(%mul_, 1)\n"
                                 "    return (%add, %mul_1)\n";
/* torch 1.13's make_fx(functionalize(g))(x).code computes the same with
 * more view regenerations (t_1 .. t_5): t, select, add, select_scatter(t_1,
 * add, 0, 1), unsqueeze, mul, squeeze.dim(mul_1, 0), t, select, add, mul;
 * tjit's pass regenerates a view only when it is read again. */
static const char MIXED_FUNCTIONAL_TEXT[] = "graph(%arg0_1 : f32[2, 3]):\n"
                                            "    %mul = aten.mul.Scalar(%arg0_1, 2)\n"
                                            "    %t = aten.t.default(%mul)\n"
                                            "    %select_1 = aten.select.int(%t, 0, 1)\n"
                                            "    %add = aten.add.Scalar(%select_1, 10)\n"
                                            "    %select_scatter = aten.select_scatter.default(%t, %add, 0, 1)\n"
                                            "    %unsqueeze = aten.unsqueeze.default(%select_scatter, 0)\n"
                                            "    %mul_1 = aten.mul.Scalar(%unsqueeze, 3)\n"
                                            "    %squeeze = aten.squeeze.dim(%mul_1, 0)\n"
                                            "    %t_2 = aten.t.default(%squeeze)\n"
                                            "    %select_2 = aten.select.int(%t_2, 0, 0)\n"
                                            "    %add_1 = aten.add.Scalar(%select_2, 0)\n"
                                            "    %mul_2 = aten.mul.Scalar(%mul_1, 1)\n"
                                            "    return (%add_1, %mul_2)\n";

Test(inplace_views, writes_through_an_in_place_viewed_tensor_functionalise_and_replay)
{
    int64_t s[2] = {2, 3};
    tj_tensor *x = arange_as(2, s), *eager[2];
    int n_out;
    cr_assert_eq(mixed(NULL, &x, 1, eager, &n_out), TJ_OK, "%s", tj_last_error());
    double w0[3] = {0, 36, 12}, w1[6] = {0, 18, 36, 54, 12, 30};
    test_expect_close(eager[0], w0, 3, 0, 0);
    test_expect_close(eager[1], w1, 6, 0, 0);
    expect_geometry(eager[1], 3, (int64_t[]){1, 3, 2}, (int64_t[]){6, 2, 1}, 0);

    tj_graph *g = tj_make_fx(mixed, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor *outs[2];
    cr_assert_eq(tj_graph_run(g, &x, 1, outs), TJ_OK, "%s", tj_last_error());
    test_expect_close(outs[0], w0, 3, 0, 0);
    test_expect_close(outs[1], w1, 6, 0, 0);
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, &x, 1, outs), TJ_OK, "%s", tj_last_error());
    test_expect_close(outs[0], w0, 3, 0, 0);
    test_expect_close(outs[1], w1, 6, 0, 0);
    tj_plan_free(p);

    expect_text(g, MIXED_TEXT);
    cr_assert_eq(tj_pass_functionalize(g), 4, "%s", tj_last_error());
    expect_text(g, MIXED_FUNCTIONAL_TEXT);
    cr_assert_eq(tj_graph_run(g, &x, 1, outs), TJ_OK, "%s", tj_last_error());
    test_expect_close(outs[0], w0, 3, 0, 0);
    test_expect_close(outs[1], w1, 6, 0, 0);
    p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, &x, 1, outs), TJ_OK, "%s", tj_last_error());
    test_expect_close(outs[0], w0, 3, 0, 0);
    test_expect_close(outs[1], w1, 6, 0, 0);
    tj_plan_free(p);
    tj_graph_free(g);
}

/* h(x): x.unsqueeze_(1); return x * 2. torch's make_fx records
 * unsqueeze_(x_1, 1); its functionalize records as_strided_ on the input
 * (an in-place view tjit lacks): refused here, as by tj_compile; the graph
 * itself runs as eager, changing the caller's tensor. */
static tj_status on_input(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    if (!tj_unsqueeze_(in[0], 1)) return tj_last_status();
    out[0] = tj_mul_scalar(in[0], tj_v_int(2));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(inplace_views, an_input_changed_in_place_runs_eagerly_and_is_refused_by_compile_and_functionalize)
{
    int64_t s[2] = {2, 3};
    tj_tensor *x = arange_as(2, s);
    tj_graph *g = tj_make_fx(on_input, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    const char *const want[] = {"aten::unsqueeze_", "aten::mul.Scalar"};
    expect_ops(g, want, 2);
    cr_expect_eq(tj_tensor_ndim(x), 2, "a fake-mode trace leaves the input alone");
    test_expect_error(tj_compile(g, NULL), TJ_ERR_UNSUPPORTED, "tj_compile", "aten::unsqueeze_ changes the shape of graph input");
    tj_tensor *out;
    cr_assert_eq(tj_graph_run(g, &x, 1, &out), TJ_OK, "%s", tj_last_error());
    expect_geometry(x, 3, (int64_t[]){2, 1, 3}, (int64_t[]){3, 3, 1}, 0);
    double w[6] = {0, 2, 4, 6, 8, 10};
    test_expect_close(out, w, 6, 0, 0);
    cr_expect_eq(tj_tensor_ndim(out), 3);
    cr_expect_eq(tj_pass_functionalize(g), -1);
    cr_expect_eq(tj_last_status(), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "graph input 0"), "%s", tj_last_error());
    tj_graph_free(g);
}

/* a tensor the function did not receive: a constant of the graph, whose
 * shape an in-place view would change under it */
static tj_status on_constant(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_tensor *c = ctx;
    if (!tj_t_(c)) return tj_last_status();
    out[0] = tj_mul(in[0], c);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(inplace_views, make_fx_refuses_an_in_place_view_of_a_constant)
{
    int64_t s[2] = {2, 3}, st[2] = {3, 2};
    tj_tensor *x = arange_as(2, st), *c = arange_as(2, s);
    test_expect_error(tj_make_fx(on_constant, c, &x, 1, NULL, TJ_TRACE_REAL), TJ_ERR_UNSUPPORTED, "aten::t_",
                      "records as a constant");
    expect_geometry(c, 2, s, (int64_t[]){3, 1}, 0);
}

Test(inplace_views, graph_text_with_in_place_views_parses_back)
{
    test_expect_round_trip(CHAIN_TEXT);
    test_expect_round_trip(MIXED_TEXT);
}

/* as_strided_, the primitive: torch x = arange(6.).reshape(2,3);
 * x.as_strided_((3, 2), (1, 3)) is x.t_(); errors name aten::as_strided_ */
Test(inplace_views, as_strided_gives_self_the_geometry_and_checks_the_storage)
{
    int64_t s[2] = {2, 3}, size[2] = {3, 2}, stride[2] = {1, 3};
    tj_tensor *x = arange_as(2, s);
    cr_assert_eq(tj_as_strided_(x, size, stride, 2, false, 0), x, "%s", tj_last_error());
    expect_geometry(x, 2, size, stride, 0);
    double want[6] = {0, 3, 1, 4, 2, 5};
    test_expect_close(x, want, 6, 0, 0);
    int64_t big[2] = {3, 3}, bs[2] = {3, 1};
    test_expect_error(tj_as_strided_(x, big, bs, 2, false, 0), TJ_ERR_SHAPE, "aten::as_strided_", "");
    expect_geometry(x, 2, size, stride, 0);
}

/* its gradient is as_strided's: y = x * 2; y.as_strided_((3,2), (1,3));
 * (y * arange(6.).reshape(3,2)).sum().backward() -> [[0,4,8],[2,6,10]] */
Test(inplace_views, gradient_of_as_strided_)
{
    int64_t s[2] = {2, 3}, size[2] = {3, 2}, stride[2] = {1, 3};
    tj_tensor *x = test_f64_grad(X6, 2, s, true), *y = tj_mul_scalar(x, tj_v_int(2));
    cr_assert_not_null(tj_as_strided_(y, size, stride, 2, false, 0), "%s", tj_last_error());
    tj_tensor *w = tj_to_copy(arange_as(2, size), TJ_FLOAT64);
    cr_assert_eq(tj_backward(tj_sum(tj_mul(y, w), -1), NULL), TJ_OK, "%s", tj_last_error());
    double want[6] = {0, 4, 8, 2, 6, 10};
    test_expect_close(tj_tensor_grad(x), want, 6, 0, 0);
}

/* with the core table each in-place view decomposes to as_strided_ */
Test(inplace_views, core_decomposition_records_as_strided_)
{
    int64_t s[2] = {2, 3};
    tj_tensor *x = arange_as(2, s);
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(chain, NULL, &x, 1, core, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, TJ_OPS(as_strided_)), 5);
    cr_expect_eq(tj_graph_count_op(g, TJ_OPS(unsqueeze_)), 0);
    double wr[6] = {1, 3, 5, 7, 9, 11};
    test_expect_close(test_replay1(g, &x, 1), wr, 6, 0, 0);
    cr_assert_gt(tj_pass_functionalize(g), 0, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, TJ_OPS(as_strided_)), 0);
    test_expect_close(test_replay1(g, &x, 1), wr, 6, 0, 0);
    tj_graph_free(g);
    tj_decomp_table_free(core);
}

/* ---- writes through expand: every mode gives eager's values or its error ----
 * fill_ and zero_ write one value, so PyTorch accepts them on a self whose
 * elements share memory along broadcast (stride-0) dims; other in-place
 * operators refuse such a self. Each function below takes the base tensor
 * as its input, writes through an expand of it and returns base * 2 + 1;
 * it runs eagerly and traced (fake mode) plain, with the core table, with
 * the core table applied after tracing (tj_graph_decompose), functionalised
 * and both, each graph replayed by tj_graph_run and by a plan, and the
 * output and the base after the run are checked in each. Reference values
 * from PyTorch 1.13 eagerly (/usr/bin/python3), written next to each
 * function. (PyTorch's functionalize writes an expand back with sum_to,
 * which gives x.expand(4, 3).fill_(2) the base [8, 8, 8]: tjit follows
 * eager.) */

enum { EAGER, TRACED, CORE, DECOMPOSED_AFTER, FUNCTIONAL, CORE_FUNCTIONAL, NMODES };
static const char *const mode_names[NMODES] = {"eager", "traced", "core table", "decomposed after tracing",
                                               "functionalised", "core table, functionalised"};

/* The graph of fn in `mode` (not EAGER), or NULL with the error. */
static tj_graph *trace_in_mode(tj_trace_fn fn, tj_tensor *like, int mode)
{
    tj_decomp_table *core = tj_core_decompositions();
    bool with_core = mode == CORE || mode == CORE_FUNCTIONAL;
    tj_graph *g = tj_make_fx(fn, NULL, &like, 1, with_core ? core : NULL, TJ_TRACE_FAKE);
    if (g && mode == DECOMPOSED_AFTER) {
        tj_graph *d = tj_graph_decompose(g, core);
        tj_graph_free(g);
        g = d;
    }
    if (g && (mode == FUNCTIONAL || mode == CORE_FUNCTIONAL) && tj_pass_functionalize(g) < 0) {
        tj_graph_free(g);
        g = NULL;
    }
    tj_decomp_table_free(core);
    return g;
}

/* Runs fn on a fresh base (make_base) in `mode`, by tj_graph_run or by a
 * plan; checks the output and the base against want_out / want_base (n
 * elements each). */
static void expect_mode(tj_trace_fn fn, tj_tensor *(*make_base)(void), int mode, bool plan, const double *want_out,
                        const double *want_base, int n)
{
    const char *how = mode == EAGER ? "" : plan ? " (plan)" : " (interpreter)";
    tj_tensor *base = make_base(), *outs[4] = {NULL};
    if (mode == EAGER) {
        int n_out;
        cr_assert_eq(fn(NULL, &base, 1, outs, &n_out), TJ_OK, "eager: %s", tj_last_error());
    } else {
        tj_graph *g = trace_in_mode(fn, make_base(), mode);
        cr_assert_not_null(g, "%s: %s", mode_names[mode], tj_last_error());
        cr_assert_leq(tj_graph_num_outputs(g), 4);
        if (plan) {
            tj_plan *p = tj_compile(g, NULL);
            cr_assert_not_null(p, "%s: %s", mode_names[mode], tj_last_error());
            cr_assert_eq(tj_plan_run(p, &base, 1, outs), TJ_OK, "%s%s: %s", mode_names[mode], how, tj_last_error());
            tj_plan_free(p);
        } else {
            cr_assert_eq(tj_graph_run(g, &base, 1, outs), TJ_OK, "%s%s: %s", mode_names[mode], how,
                         tj_last_error());
        }
        tj_graph_free(g);
    }
    for (int i = 0; i < n; i++) {
        cr_expect_eq(tj_tensor_item_at(outs[0], i), want_out[i], "%s%s: output[%d] %g, want %g", mode_names[mode],
                     how, i, tj_tensor_item_at(outs[0], i), want_out[i]);
        cr_expect_eq(tj_tensor_item_at(base, i), want_base[i], "%s%s: base[%d] %g, want %g", mode_names[mode], how,
                     i, tj_tensor_item_at(base, i), want_base[i]);
    }
}

static void expect_every_mode(tj_trace_fn fn, tj_tensor *(*make_base)(void), const double *want_out,
                              const double *want_base, int n)
{
    for (int mode = 0; mode < NMODES; mode++)
        for (int plan = 0; plan < (mode == EAGER ? 1 : 2); plan++)
            expect_mode(fn, make_base, mode, plan, want_out, want_base, n);
}

static tj_status twice_plus_one(tj_tensor *base, tj_tensor **out, int *n_out)
{
    *n_out = 1;
    out[0] = tj_add_scalar(tj_mul_scalar(base, tj_v_int(2)), tj_v_int(1));
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_tensor *arange_2x2x3(void) { return arange_as(3, (int64_t[]){2, 2, 3}); }

/* base = arange(12.).view(2,2,3); base[:, 0:1].expand(5,2,4,3).fill_(-1.5)
 * (a new leading dim and a size-1 dim broadcast) */
static tj_status fill_through_expand(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor *rows = tj_slice(in[0], 1, true, 0, true, 1, 1);
    tj_tensor *e = tj_expand(rows, (int64_t[]){5, 2, 4, 3}, 4);
    if (!e || !tj_fill_(e, tj_v_float(-1.5))) return tj_last_status();
    return twice_plus_one(in[0], out, n_out);
}

Test(inplace_views, fill_through_an_expand_reaches_the_base_in_every_mode)
{
    double want_base[12] = {-1.5, -1.5, -1.5, 3, 4, 5, -1.5, -1.5, -1.5, 9, 10, 11};
    double want_out[12] = {-2, -2, -2, 7, 9, 11, -2, -2, -2, 19, 21, 23};
    expect_every_mode(fill_through_expand, arange_2x2x3, want_out, want_base, 12);
}

static tj_tensor *vec3(void) { return test_f32(1, (int64_t[]){3}, (float[]){1.5f, -2, 4}); }

/* x = [1.5, -2, 4]; x.unsqueeze(1).expand(3, 4).zero_() -> x [0, 0, 0] */
static tj_status zero_through_expand(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor *e = tj_expand(tj_unsqueeze(in[0], 1), (int64_t[]){3, 4}, 2);
    if (!e || !tj_zero_(e)) return tj_last_status();
    return twice_plus_one(in[0], out, n_out);
}

Test(inplace_views, zero_through_an_expand_reaches_the_base_in_every_mode)
{
    double want_base[3] = {0, 0, 0}, want_out[3] = {1, 1, 1};
    expect_every_mode(zero_through_expand, vec3, want_out, want_base, 3);
}

/* x = [1.5, -2, 4]; x.expand(4, 3)[1].add_(10) -> x [11.5, 8, 14]: a row
 * of the expand is one element each, so add_ is allowed */
static tj_status add_to_a_row_of_an_expand(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor *row = tj_select(tj_expand(in[0], (int64_t[]){4, 3}, 2), 0, 1);
    if (!row || !tj_add_scalar_(row, tj_v_int(10), tj_v_int(1))) return tj_last_status();
    return twice_plus_one(in[0], out, n_out);
}

Test(inplace_views, a_write_to_one_row_of_an_expand_reaches_the_base_in_every_mode)
{
    double want_base[3] = {11.5, 8, 14}, want_out[3] = {24, 17, 29};
    expect_every_mode(add_to_a_row_of_an_expand, vec3, want_out, want_base, 3);
}

/* x = [1.5, -2, 4]; x.expand(4, 3).index_fill_(1, tensor([0]), 9) -> x
 * [9, -2, 4]: column 0 of every row, one value along the broadcast dim
 * (PyTorch warns that this is deprecated) */
static tj_status index_fill_a_column_of_an_expand(void *ctx, tj_tensor *const *in, int n, tj_tensor **out,
                                                  int *n_out)
{
    tj_tensor *index = tj_tensor_from_data(TJ_INT64, 1, (int64_t[]){1}, (int64_t[]){0});
    tj_tensor *e = tj_expand(in[0], (int64_t[]){4, 3}, 2);
    if (!e || !tj_index_fill_(e, 1, index, tj_v_int(9))) return tj_last_status();
    return twice_plus_one(in[0], out, n_out);
}

Test(inplace_views, index_fill_of_a_column_of_an_expand_reaches_the_base_in_every_mode)
{
    double want_base[3] = {9, -2, 4}, want_out[3] = {19, -3, 9};
    expect_every_mode(index_fill_a_column_of_an_expand, vec3, want_out, want_base, 3);
}

/* x.expand(4, 3)[1:3][1].sub_(-1) -> x [2.5, -1, 5]: selects and slices
 * along the broadcast dim reach one row */
static tj_status sub_from_a_row_of_rows_of_an_expand(void *ctx, tj_tensor *const *in, int n, tj_tensor **out,
                                                    int *n_out)
{
    tj_tensor *rows = tj_slice(tj_expand(in[0], (int64_t[]){4, 3}, 2), 0, true, 1, true, 3, 1);
    tj_tensor *row = tj_select(rows, 0, 1);
    if (!row || !tj_sub_scalar_(row, tj_v_int(-1), tj_v_int(1))) return tj_last_status();
    return twice_plus_one(in[0], out, n_out);
}

Test(inplace_views, a_write_to_a_row_of_a_slice_of_an_expand_reaches_the_base_in_every_mode)
{
    double want_base[3] = {2.5, -1, 5}, want_out[3] = {6, -1, 11};
    expect_every_mode(sub_from_a_row_of_rows_of_an_expand, vec3, want_out, want_base, 3);
}

/* x.expand(4, 3).add_(1) and .copy_(row): refused by PyTorch ("more than
 * one element of the written-to tensor refers to a single memory
 * location"), the same error eagerly and in every trace */
static tj_status add_into_expand(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    *n_out = 0;
    tj_tensor *e = tj_expand(in[0], (int64_t[]){4, 3}, 2);
    return tj_add_scalar_(e, tj_v_int(1), tj_v_int(1)) ? TJ_OK : tj_last_status();
}

static tj_status copy_into_expand(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    *n_out = 0;
    tj_tensor *e = tj_expand(in[0], (int64_t[]){4, 3}, 2);
    return tj_copy_(e, vec3()) ? TJ_OK : tj_last_status();
}

Test(inplace_views, other_writes_into_an_expand_are_refused_alike_in_every_mode)
{
    const struct {
        tj_trace_fn fn;
        const char *op;
    } cases[] = {{add_into_expand, "aten::add_.Scalar"}, {copy_into_expand, "aten::copy_"}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        for (int mode = 0; mode < NMODES; mode++) {
            tj_tensor *x = vec3(), *out;
            int n_out;
            tj_clear_error();
            if (mode == EAGER) cr_expect_neq(cases[c].fn(NULL, &x, 1, &out, &n_out), TJ_OK);
            else cr_expect_null(trace_in_mode(cases[c].fn, x, mode), "%s: traced", mode_names[mode]);
            cr_expect_eq(tj_last_status(), TJ_ERR_UNSUPPORTED, "%s: %s", mode_names[mode], tj_last_error());
            cr_expect(strstr(tj_last_error(), cases[c].op) && strstr(tj_last_error(), "unsupported operation: more "
                      "than one element of the written-to tensor (self) refers to a single memory location"),
                      "%s: %s", mode_names[mode], tj_last_error());
            double want[3] = {1.5, -2, 4};
            test_expect_close(x, want, 3, 0, 0);
        }
    }
}
