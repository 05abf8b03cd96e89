/* Decompositions of the view and data-movement operators that are not
 * primitives. The primitive views are view, permute, expand, slice and
 * unfold; the copies are _to_copy (convert), slice_scatter (write a slice)
 * and copy_ (write in place):
 *   t, transpose           -> permute
 *   unsqueeze, squeeze.dim, squeeze -> view (a size-1 dim fits any strides)
 *   select.int             -> slice + view
 *   _unsafe_view           -> view, of a copy when the strides do not allow it
 *   clone                  -> _to_copy
 *   cat                    -> full + one slice_scatter per tensor
 *   constant_pad_nd        -> slice (crops) + full + nested slice_scatter
 *   select_scatter         -> slice_scatter of the unsqueezed source
 *   diagonal_backward      -> zeros + diagonal_scatter (torch._decomp)
 *   select_backward, slice_backward -> zeros + select_scatter / slice_scatter
 *                             (torch._decomp)
 *   diag_embed, diag       -> zeros + diagonal_scatter (a vector); diag of a
 *                             matrix -> clone of the diagonal view
 *   trace                  -> sum of the diagonal view (torch._decomp)
 *   copy (out of place)    -> _to_copy of the expanded source
 *   zero, fill.Scalar      -> full
 *   roll                   -> per dim, cat of two slices (torch._refs.roll;
 *                             without dims, of the flattened self, viewed back)
 *   unsqueeze_, squeeze_.dim, squeeze_, transpose_, t_ -> as_strided_ to
 *                             the geometry of their view (torch's
 *                             functionalize records as_strided_ too)
 * The shape functions of the decomposed operators check the arguments. */
#include "op_view.h"
#include "util.h"

static tj_status transpose(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(transpose_int, args, m);
    tj_tensor *x = args[0].u.t;
    int nd = tj_tensor_ndim(x), d0, d1;
    tj_wrap_dim("aten::transpose.int", args[1].u.i, nd, &d0);
    tj_wrap_dim("aten::transpose.int", args[2].u.i, nd, &d1);
    int64_t perm[TJ_MAX_DIMS];
    for (int i = 0; i < nd; i++) perm[i] = i == d0 ? d1 : i == d1 ? d0 : i;
    return tj_dc_done(tj_permute(x, perm, nd), outs);
}

static tj_status t(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(t, args, m);
    tj_tensor *x = args[0].u.t;
    if (tj_tensor_ndim(x) < 2) return tj_dc_done(tj_view(x, m[0].shape, m[0].ndim), outs);
    int64_t perm[2] = {1, 0};
    return tj_dc_done(tj_permute(x, perm, 2), outs);
}

/* unsqueeze, squeeze.dim and squeeze: a view to the shape the shape
 * function gives. */
#define VIEW_TO_META_SHAPE(ident)                                             \
    static tj_status ident(const tj_value *args, tj_value *outs)              \
    {                                                                         \
        TJ_DC_CHECK(ident, args, m);                                          \
        return tj_dc_done(tj_view(args[0].u.t, m[0].shape, m[0].ndim), outs); \
    }
VIEW_TO_META_SHAPE(unsqueeze)
VIEW_TO_META_SHAPE(squeeze_dim)
VIEW_TO_META_SHAPE(squeeze)
#undef VIEW_TO_META_SHAPE

/* The in-place views: as_strided_ to the geometry the shape function gives
 * (which names the operator in its errors, self unchanged). */
#define AS_STRIDED_TO_META(ident)                                                                         \
    static tj_status ident(const tj_value *args, tj_value *outs)                                         \
    {                                                                                                     \
        TJ_DC_CHECK(ident, args, m);                                                                      \
        return tj_dc_done(tj_as_strided_(args[0].u.t, m[0].shape, m[0].strides, m[0].ndim, true, m[0].offset), outs); \
    }
AS_STRIDED_TO_META(unsqueeze_)
AS_STRIDED_TO_META(squeeze__dim)
AS_STRIDED_TO_META(squeeze_)
AS_STRIDED_TO_META(transpose_)
AS_STRIDED_TO_META(t_)
#undef AS_STRIDED_TO_META

/* The dim (into *d) and the index of select / select_scatter on x, wrapped
 * (the shape function has checked both). */
static int64_t wrap_select(const char *op, const tj_tensor *x, int64_t dim, int64_t index, int *d)
{
    tj_wrap_dim(op, dim, tj_tensor_ndim(x), d);
    return index < 0 ? index + tj_tensor_shape(x)[*d] : index;
}

static tj_status select(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(select_int, args, m);
    tj_tensor *x = args[0].u.t;
    int d;
    int64_t index = wrap_select("aten::select.int", x, args[1].u.i, args[2].u.i, &d);
    tj_tensor *s = tj_slice(x, d, true, index, true, index + 1, 1);
    return tj_dc_done(tj_view(s, m[0].shape, m[0].ndim), outs);
}

/* _unsafe_view: a view when self's strides allow it (the shape function
 * says so by aliasing), else a view of a contiguous copy. */
static tj_status unsafe_view(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(_unsafe_view, args, m);
    tj_tensor *x = args[0].u.t;
    if (m[0].alias < 0) x = tj_to_copy(x, -1);
    return tj_dc_done(tj_view(x, m[0].shape, m[0].ndim), outs);
}

static tj_status clone(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(clone, args, m);
    return tj_dc_done(tj_to_copy(args[0].u.t, -1), outs);
}

/* cat: the result filled slice by slice (1-d empty tensors are skipped, the
 * legacy rule the shape function applies). */
static tj_status cat(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(cat, args, m);
    int d = 0;
    if (m[0].ndim > 0) tj_wrap_dim("aten::cat", args[1].u.i, m[0].ndim, &d);
    tj_tensor *r = tj_full(m[0].shape, m[0].ndim, tj_v_int(0), (int)m[0].dtype);
    int64_t offset = 0;
    for (int i = 0; i < args[0].n && r; i++) {
        tj_tensor *x = args[0].u.ts[i];
        if (tj_tensor_ndim(x) == 1 && tj_tensor_numel(x) == 0 && m[0].ndim != 1) continue;
        int64_t len = tj_tensor_ndim(x) ? tj_tensor_shape(x)[d] : 0;
        if (len == 0) continue;
        r = tj_slice_scatter(r, x, d, true, offset, true, offset + len, 1);
        offset += len;
    }
    return tj_dc_done(r, outs);
}

/* constant_pad_nd, as torch._refs: the input cropped by slices where a pad
 * is negative; with no positive pad a copy of that, else a full tensor of
 * the value with the cropped input written into it by nested slice_scatters
 * (one level per padded dim: the innermost writes into a slice of a slice). */
static tj_status constant_pad_nd(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(constant_pad_nd, args, m);
    tj_tensor *c = args[0].u.t;
    tj_pad_plan p;
    tj_pad_plan_make(c, args[1].u.ints, args[1].n, &p);
    int nd = tj_tensor_ndim(c), padded[TJ_MAX_DIMS], np = 0;
    for (int d = 0; d < nd && c; d++) {
        if (p.count[d] != tj_tensor_shape(c)[d]) c = tj_slice(c, d, true, p.src_start[d], true, p.src_start[d] + p.count[d], 1);
        if (p.count[d] != p.out_shape[d]) padded[np++] = d;
    }
    if (!p.grows) return tj_dc_done(tj_clone(c), outs);
    tj_tensor *level[TJ_MAX_DIMS];
    level[0] = tj_full(m[0].shape, m[0].ndim, args[2], (int)m[0].dtype);
    for (int k = 1; k < np; k++) {
        int d = padded[k - 1];
        level[k] = tj_slice(level[k - 1], d, true, p.dst_start[d], true, p.dst_start[d] + p.count[d], 1);
    }
    tj_tensor *r = c;
    for (int k = np - 1; k >= 0; k--) {
        int d = padded[k];
        r = tj_slice_scatter(level[k], r, d, true, p.dst_start[d], true, p.dst_start[d] + p.count[d], 1);
    }
    return tj_dc_done(r, outs);
}

static tj_status select_scatter(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(select_scatter, args, m);
    tj_tensor *self = args[0].u.t;
    int d;
    int64_t index = wrap_select("aten::select_scatter", self, args[2].u.i, args[3].u.i, &d);
    tj_tensor *src = tj_unsqueeze(args[1].u.t, d);
    return tj_dc_done(tj_slice_scatter(self, src, d, true, index, true, index + 1, 1), outs);
}

/* Zeros of the result's geometry m with src diagonal_scatter'ed into them. */
static tj_status zeros_with_diagonal(const tj_meta *m, tj_tensor *src, int64_t offset, int64_t dim1, int64_t dim2,
                                     tj_value *outs)
{
    tj_tensor *zeros = tj_zeros(m->shape, m->ndim, (int)m->dtype);
    return tj_dc_done(tj_diagonal_scatter(zeros, src, offset, dim1, dim2), outs);
}

/* diagonal_backward, as torch._decomp: new_zeros(input_sizes) with the
 * gradient diagonal_scatter'ed into it. */
static tj_status diagonal_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(diagonal_backward, args, m);
    return zeros_with_diagonal(&m[0], args[0].u.t, args[2].u.i, args[3].u.i, args[4].u.i, outs);
}

/* select_backward and slice_backward, as torch._decomp: new_zeros(input_sizes)
 * with the gradient select_scatter'ed / slice_scatter'ed into it. */
static tj_status select_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(select_backward, args, m);
    tj_tensor *zeros = tj_zeros(m[0].shape, m[0].ndim, (int)m[0].dtype);
    return tj_dc_done(tj_select_scatter(zeros, args[0].u.t, args[2].u.i, args[3].u.i), outs);
}

static tj_status slice_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(slice_backward, args, m);
    tj_tensor *zeros = tj_zeros(m[0].shape, m[0].ndim, (int)m[0].dtype);
    return tj_dc_done(tj_slice_scatter(zeros, args[0].u.t, args[2].u.i, true, args[3].u.i, true, args[4].u.i,
                                       args[5].u.i),
                      outs);
}

static tj_status diag_embed(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(diag_embed, args, m);
    return zeros_with_diagonal(&m[0], args[0].u.t, args[1].u.i, args[2].u.i, args[3].u.i, outs);
}

/* diag: a vector onto zeros, or a copy of the matrix's diagonal view. */
static tj_status diag(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(diag, args, m);
    tj_tensor *self = args[0].u.t;
    int64_t k = args[1].u.i;
    if (tj_tensor_ndim(self) == 1) return zeros_with_diagonal(&m[0], self, k, 0, 1, outs);
    return tj_dc_done(tj_clone(tj_diagonal(self, k, 0, 1)), outs);
}

/* trace, as torch._decomp: sum(diagonal(self)). */
static tj_status trace(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(trace, args, m);
    return tj_dc_done(tj_sum(tj_diagonal(args[0].u.t, 0, 0, 1), TJ_DTYPE_NONE), outs);
}

/* copy(self, src): src broadcast to self's shape, in self's dtype. */
static tj_status copy(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(copy, args, m);
    tj_tensor *src = tj_expand(args[1].u.t, m[0].shape, m[0].ndim);
    return tj_dc_done(tj_to_copy(src, (int)m[0].dtype), outs);
}

static tj_status zero(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(zero, args, m);
    return tj_dc_done(tj_full(m[0].shape, m[0].ndim, tj_v_int(0), (int)m[0].dtype), outs);
}

static tj_status fill(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(fill_Scalar, args, m);
    tj_value v = tj_dc_convert(&args[1], m[0].dtype);
    return tj_dc_done(tj_full(m[0].shape, m[0].ndim, v, (int)m[0].dtype), outs);
}

/* fill.Tensor: the value converted to self's dtype, expanded to its shape,
 * copied out (a fresh tensor, as the kernel's). */
static tj_status fill_tensor(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(fill_Tensor, args, m);
    tj_tensor *v = tj_to_copy(args[1].u.t, (int)m[0].dtype);
    return tj_dc_done(tj_clone(tj_expand(v, m[0].shape, m[0].ndim)), outs);
}

/* x rolled by shift along dim d: x[start:] then x[:start], start being
 * (size - shift) mod size (computed without overflowing int64). */
static tj_tensor *roll_dim(tj_tensor *x, int64_t shift, int d)
{
    if (!x) return NULL; /* the failed call before it set the error */
    int64_t size = tj_tensor_shape(x)[d], r = shift % size, start = r > 0 ? size - r : -r;
    tj_tensor *halves[2] = {tj_slice(x, d, true, start, true, size, 1), tj_slice(x, d, true, 0, true, start, 1)};
    return tj_cat(halves, 2, d);
}

static tj_status roll(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(roll, args, m);
    tj_tensor *x = args[0].u.t;
    const int64_t *shifts = args[1].u.ints;
    if (tj_tensor_numel(x) == 0) return tj_dc_done(tj_clone(x), outs);
    if (args[2].n == 0)
        return tj_dc_done(tj_view(roll_dim(tj_flatten(x, 0, -1), shifts[0], 0), m[0].shape, m[0].ndim), outs);
    for (int i = 0; i < args[2].n && x; i++) {
        int d;
        tj_wrap_dim("aten::roll", args[2].u.ints[i], tj_tensor_ndim(x), &d);
        x = roll_dim(x, shifts[i], d);
    }
    return tj_dc_done(x, outs);
}

void tj_register_movement_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(transpose_int), transpose, "transpose");
    tj_op_set_decomposition(TJ_OPS(t), t, "t");
    tj_op_set_decomposition(TJ_OPS(unsqueeze), unsqueeze, "unsqueeze");
    tj_op_set_decomposition(TJ_OPS(squeeze_dim), squeeze_dim, "squeeze_dim");
    tj_op_set_decomposition(TJ_OPS(squeeze), squeeze, "squeeze");
    tj_op_set_decomposition(TJ_OPS(select_int), select, "select");
    tj_op_set_decomposition(TJ_OPS(_unsafe_view), unsafe_view, "unsafe_view");
    tj_op_set_decomposition(TJ_OPS(clone), clone, "clone");
    tj_op_set_decomposition(TJ_OPS(cat), cat, "cat");
    tj_op_set_decomposition(TJ_OPS(constant_pad_nd), constant_pad_nd, "constant_pad_nd");
    tj_op_set_decomposition(TJ_OPS(select_scatter), select_scatter, "select_scatter");
    tj_op_set_decomposition(TJ_OPS(diagonal_backward), diagonal_backward, "diagonal_backward");
    tj_op_set_decomposition(TJ_OPS(select_backward), select_backward, "select_backward");
    tj_op_set_decomposition(TJ_OPS(slice_backward), slice_backward, "slice_backward");
    tj_op_set_decomposition(TJ_OPS(diag_embed), diag_embed, "diag_embed");
    tj_op_set_decomposition(TJ_OPS(diag), diag, "diag");
    tj_op_set_decomposition(TJ_OPS(trace), trace, "trace");
    tj_op_set_decomposition(TJ_OPS(copy), copy, "copy");
    tj_op_set_decomposition(TJ_OPS(zero), zero, "zero");
    tj_op_set_decomposition(TJ_OPS(fill_Scalar), fill, "fill");
    tj_op_set_decomposition(TJ_OPS(fill_Tensor), fill_tensor, "fill_tensor");
    tj_op_set_decomposition(TJ_OPS(roll), roll, "roll");
    tj_op_set_decomposition(TJ_OPS(unsqueeze_), unsqueeze_, "unsqueeze_");
    tj_op_set_decomposition(TJ_OPS(squeeze__dim), squeeze__dim, "squeeze__dim");
    tj_op_set_decomposition(TJ_OPS(squeeze_), squeeze_, "squeeze_");
    tj_op_set_decomposition(TJ_OPS(transpose_), transpose_, "transpose_");
    tj_op_set_decomposition(TJ_OPS(t_), t_, "t_");
}
