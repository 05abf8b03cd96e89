/* Decompositions of the index-driven operators over gather, scatter_add
 * and scatter: scatter.value (scatter.src of a full tensor of index's shape),
 * scatter.reduce and scatter.value_reduce (scatter_reduce.two's sum / prod
 * with self included),
 * index_select and index_add (below), embedding and its dense gradient
 * (indices flattened to M rows of D values):
 *   embedding: gather(weight, 0, index expanded to [M, D]), viewed as
 *     indices.shape + [D];
 *   embedding_dense_backward: scatter_add of the gradient rows into zeros
 *     [num_weights, D] in index order (the kernel's order); rows whose index
 *     is padding_idx add 0; with scale_grad_by_freq each row is first
 *     multiplied by 1 / (count of its index), the count a scatter_add of
 *     ones.
 * Out-of-range indices fail in gather / scatter_add (TJ_ERR_INDEX), as in
 * the kernels. */
#include "util.h"

/* indices [..] as [M, D] (stride 0 along D). */
static tj_tensor *row_index(tj_tensor *indices, int64_t D)
{
    int64_t flat[2] = {-1, 1};
    tj_tensor *col = tj_reshape(indices, flat, 2);
    int64_t shape[2] = {col ? tj_tensor_shape(col)[0] : 0, D};
    return tj_expand(col, shape, 2);
}

static tj_status embedding(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_dc_check(TJ_OPS(embedding), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *w = args[0].u.t;
    tj_tensor *rows = tj_gather(w, 0, row_index(args[1].u.t, tj_tensor_shape(w)[1]));
    return tj_dc_done(tj_view(rows, m[0].shape, m[0].ndim), outs);
}

static tj_status embedding_dense_backward(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_dc_check(TJ_OPS(embedding_dense_backward), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *g = args[0].u.t, *indices = args[1].u.t;
    int64_t num = args[2].u.i, pad = args[3].u.i, D = m[0].shape[1], flat[1] = {-1}, rows[2] = {-1, D};
    tj_dtype dt = m[0].dtype;
    tj_tensor *idx = tj_reshape(indices, flat, 1), *g2 = tj_reshape(tj_dc_to(g, dt), rows, 2);
    tj_tensor *is_pad = tj_eq(idx, tj_scalar_tensor(tj_v_int(pad), TJ_INT64));
    if (args[4].u.b) {
        int64_t nshape[1] = {num};
        tj_tensor *one = tj_where(is_pad, tj_scalar_tensor(tj_v_int(0), TJ_INT64), tj_scalar_tensor(tj_v_int(1), TJ_INT64));
        tj_tensor *counts = tj_scatter_add(tj_full(nshape, 1, tj_v_int(0), TJ_INT64), 0, idx,
                                           tj_expand(one, tj_tensor_shape(idx), 1));
        tj_tensor *scale = tj_div(tj_scalar_tensor(tj_v_float(1.0), TJ_FLOAT64), tj_gather(counts, 0, idx));
        g2 = tj_mul(g2, tj_unsqueeze(tj_dc_to(scale, dt), 1));
    }
    if (pad >= 0) g2 = tj_where(tj_unsqueeze(is_pad, 1), tj_scalar_tensor(tj_v_int(0), (int)dt), g2);
    tj_tensor *zeros = tj_full(m[0].shape, 2, tj_v_int(0), (int)dt);
    return tj_dc_done(tj_scatter_add(zeros, 0, row_index(idx, D), g2), outs);
}

/* index_select / index_add run over the positions P = self's shape (0-dim:
 * [1]) with P[dim] = the number of indices; the index, viewed [1, .., n, ..,
 * 1], is expanded to P, as their kernels broadcast it. */
static tj_tensor *index_along(tj_tensor *index, int ndim, const int64_t *p, int dim)
{
    int64_t v[TJ_MAX_DIMS];
    for (int d = 0; d < ndim; d++) v[d] = d == dim ? p[d] : 1;
    return tj_expand(tj_reshape(index, v, ndim), p, ndim);
}

/* The rank-1 view [1] of a 0-dim tensor (x itself otherwise). */
static tj_tensor *at_least_1d(tj_tensor *x)
{
    int64_t one[1] = {1};
    return x && tj_tensor_ndim(x) == 0 ? tj_reshape(x, one, 1) : x;
}

/* P, the shape of what an index_* call gathers or writes: self's with dim
 * (wrapped into *d) resized to index's element count; self's rank. */
static int index_extent(const tj_tensor *self, int64_t dim, const tj_tensor *index, int64_t *p, int *d)
{
    int nd = tj_tensor_ndim(self);
    *d = dim < 0 ? (int)dim + nd : (int)dim;
    memcpy(p, tj_tensor_shape(self), sizeof(int64_t) * (size_t)nd);
    p[*d] = tj_tensor_numel(index);
    return nd;
}

/* index_select(self, dim, index) = gather(self, dim, index expanded to the
 * result's shape): the same copies (torch._refs reaches them through
 * aten::index). */
static tj_status index_select(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(index_select, args, m);
    tj_tensor *self = at_least_1d(args[0].u.t), *index = args[2].u.t;
    int64_t p[TJ_MAX_DIMS];
    int dim, nd = index_extent(self, args[1].u.i, index, p, &dim);
    tj_tensor *r = tj_gather(self, dim, index_along(index, nd, p, dim));
    /* a 0-dim self: its element, once */
    return tj_dc_done(m[0].ndim == 0 ? tj_view(tj_slice(r, 0, true, 0, true, 1, 1), m[0].shape, 0) : r, outs);
}

/* index_add(self, dim, index, source, alpha) = scatter_add(self, dim, index
 * expanded to P, source * alpha expanded to P): the kernel's loop and
 * order (torch._refs: clone + index_add_). */
static tj_status index_add(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(index_add, args, m);
    tj_dtype dt = m[0].dtype;
    tj_tensor *self = at_least_1d(args[0].u.t), *index = args[2].u.t, *source = at_least_1d(args[3].u.t);
    tj_value a = tj_dc_convert(&args[4], dt);
    bool alpha_one = a.kind == TJ_V_FLOAT ? a.u.f == 1 : a.kind == TJ_V_INT ? a.u.i == 1 : a.u.b;
    if (!alpha_one) source = tj_mul(source, tj_dc_scalar(&args[4], dt));
    int64_t p[TJ_MAX_DIMS];
    int dim, nd = index_extent(self, args[1].u.i, index, p, &dim);
    tj_tensor *r = tj_scatter_add(self, dim, index_along(index, nd, p, dim), tj_expand(source, p, nd));
    return tj_dc_done(m[0].ndim == 0 ? tj_view(r, m[0].shape, 0) : r, outs);
}

/* The src of a scatter of one value: full(index.shape, value, dt). */
static tj_tensor *value_src(const tj_value *args, tj_dtype dt)
{
    tj_tensor *index = args[2].u.t;
    return tj_full(tj_tensor_shape(index), tj_tensor_ndim(index), args[3], (int)dt);
}

/* scatter.value(self, dim, index, value) = scatter.src(self, dim, index,
 * full(index.shape, value, self's dtype)) */
static tj_status scatter_value(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(scatter_value, args, m);
    return tj_dc_done(tj_scatter(args[0].u.t, args[1].u.i, args[2].u.t, value_src(args, m[0].dtype)), outs);
}

/* scatter_reduce.two's reduction for scatter.reduce's reduce (checked by
 * the shape function): "add" is "sum", "multiply" "prod" */
static const char *sum_or_prod(const tj_value *reduce) { return strcmp(reduce->u.s, "add") == 0 ? "sum" : "prod"; }

/* scatter.reduce(self, dim, index, src, reduce) = scatter_reduce.two(self,
 * dim, index, src, sum / prod, include_self=True) */
static tj_status scatter_src_reduce(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(scatter_reduce, args, m);
    tj_tensor *r = tj_scatter_reduce(args[0].u.t, args[1].u.i, args[2].u.t, args[3].u.t, sum_or_prod(&args[4]), true);
    return tj_dc_done(r, outs);
}

/* scatter.value_reduce: scatter.reduce of full(index.shape, value, self's
 * dtype) */
static tj_status scatter_value_reduce(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(scatter_value_reduce, args, m);
    return tj_dc_done(tj_scatter_reduce(args[0].u.t, args[1].u.i, args[2].u.t, value_src(args, m[0].dtype),
                                        sum_or_prod(&args[4]), true),
                      outs);
}

/* index_fill.int_Scalar / int_Tensor, as torch._decomp: index_put with
 * index at position dim of the indices (None before it), the values a full
 * tensor of the value (index_fill's negative indices wrap in index_put as
 * in the kernel); a 0-dim self as a [1] */
static tj_status index_write(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *values, const tj_meta *m,
                             tj_value *outs)
{
    tj_tensor *x = at_least_1d(self), *ix[TJ_MAX_DIMS] = {0};
    int nd = tj_tensor_ndim(x), d = dim < 0 ? (int)dim + nd : (int)dim;
    ix[d] = at_least_1d(index);
    tj_tensor *r = tj_index_put(x, ix, d + 1, values, false);
    return tj_dc_done(m[0].ndim == 0 ? tj_view(r, m[0].shape, 0) : r, outs);
}

/* index_copy(self, dim, index, source) = scatter.src(self, dim, index
 * expanded to P, source), P source's shape (self's with dim resized to the
 * number of indices): scatter refuses a negative index as the kernel (and
 * torch 1.13's decomposition, through index_copy_) does, where index_put
 * would wrap it; a repeated index keeps its last row in both. */
static tj_status index_copy(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(index_copy, args, m);
    tj_tensor *self = at_least_1d(args[0].u.t), *source = at_least_1d(args[3].u.t);
    int64_t p[TJ_MAX_DIMS];
    int dim, nd = index_extent(self, args[1].u.i, args[2].u.t, p, &dim);
    tj_tensor *r = tj_scatter(self, dim, index_along(args[2].u.t, nd, p, dim), tj_reshape(source, p, nd));
    return tj_dc_done(m[0].ndim == 0 ? tj_view(r, m[0].shape, 0) : r, outs);
}

/* index_fill's values: a full tensor of the Scalar, or the value tensor
 * converted and expanded, of self's shape with dim resized to the number
 * of indices */
static tj_status index_fill_with(const tj_value *args, const tj_meta *m, tj_value *outs)
{
    int64_t shape[TJ_MAX_DIMS];
    int d, nd = index_extent(at_least_1d(args[0].u.t), args[1].u.i, args[2].u.t, shape, &d);
    tj_tensor *values = args[3].kind == TJ_V_TENSOR
                            ? tj_expand(tj_to_copy(args[3].u.t, (int)m[0].dtype), shape, nd)
                            : tj_full(shape, nd, tj_dc_convert(&args[3], m[0].dtype), (int)m[0].dtype);
    return index_write(args[0].u.t, args[1].u.i, args[2].u.t, values, m, outs);
}

static tj_status index_fill(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(index_fill_int_Scalar, args, m);
    return index_fill_with(args, m, outs);
}

static tj_status index_fill_tensor(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(index_fill_int_Tensor, args, m);
    return index_fill_with(args, m, outs);
}

void tj_register_embedding_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(index_copy), index_copy, "index_copy");
    tj_op_set_decomposition(TJ_OPS(index_fill_int_Scalar), index_fill, "index_fill");
    tj_op_set_decomposition(TJ_OPS(index_fill_int_Tensor), index_fill_tensor, "index_fill_tensor");
    tj_op_set_decomposition(TJ_OPS(scatter_value), scatter_value, "scatter_value");
    tj_op_set_decomposition(TJ_OPS(scatter_reduce), scatter_src_reduce, "scatter_src_reduce");
    tj_op_set_decomposition(TJ_OPS(scatter_value_reduce), scatter_value_reduce, "scatter_value_reduce");
    tj_op_set_decomposition(TJ_OPS(index_select), index_select, "index_select");
    tj_op_set_decomposition(TJ_OPS(index_add), index_add, "index_add");
    tj_op_set_decomposition(TJ_OPS(embedding), embedding, "embedding");
    tj_op_set_decomposition(TJ_OPS(embedding_dense_backward), embedding_dense_backward, "embedding_dense_backward");
}
