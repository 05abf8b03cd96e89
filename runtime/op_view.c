/* Views and data movement, following ATen 1.13 (TensorShape.cpp): views are
 * shape functions only (alias of argument 0 with new shape, strides and
 * storage offset); cat, stack, clone and _to_copy copy through kernels/copy.c. */
#include <inttypes.h>
#include <string.h>

#include "iter.h"
#include "kernels/copy.h"
#include "kernels/fill.h"
#include "op_view.h"

#define SHAPE_BUF 192

/* ---- view geometry helpers ---- */

tj_status tj_view_infer_size(const char *op, const int64_t *size, int n, int64_t numel, int64_t *out)
{
    char b[SHAPE_BUF];
    if (n > TJ_MAX_DIMS)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: shape %s has %d dims, more than %d", op,
                        tj_shape_str(n, size, b, sizeof b), n, TJ_MAX_DIMS);
    int infer = -1;
    int64_t newsize = 1;
    bool overflow = false, zero = false;
    for (int d = 0; d < n; d++) {
        if (size[d] == -1) {
            if (infer >= 0)
                return tj_error(TJ_ERR_SHAPE, "%s: only one dimension can be inferred (shape %s)", op,
                                tj_shape_str(n, size, b, sizeof b));
            infer = d;
        } else if (size[d] < 0) {
            return tj_error(TJ_ERR_SHAPE, "%s: invalid shape dimension %" PRId64 " in shape %s", op, size[d],
                            tj_shape_str(n, size, b, sizeof b));
        } else if (size[d] == 0) {
            zero = true;
        } else if (__builtin_mul_overflow(newsize, size[d], &newsize)) {
            overflow = true;
        }
        out[d] = size[d];
    }
    if (zero) {
        /* the other sizes must still multiply within int64, as every
         * tensor's do (tj_checked_view_numel): [2^62, 8, 0] is no shape */
        int64_t count;
        if (overflow && infer < 0) return tj_checked_view_numel(n, out, &count, op);
        newsize = 0;
        overflow = false;
    }
    if (!overflow && (numel == newsize || (infer >= 0 && newsize > 0 && numel % newsize == 0))) {
        if (infer < 0) return TJ_OK;
        if (newsize == 0)
            return tj_error(TJ_ERR_SHAPE,
                            "%s: cannot reshape tensor of 0 elements into shape %s because the unspecified "
                            "dimension size -1 can be any value and is ambiguous",
                            op, tj_shape_str(n, size, b, sizeof b));
        out[infer] = numel / newsize;
        return TJ_OK;
    }
    return tj_error(TJ_ERR_SHAPE, "%s: shape '%s' is invalid for input of size %" PRId64, op,
                    tj_shape_str(n, size, b, sizeof b), numel);
}

bool tj_view_strides(int ndim, const int64_t *shape, const int64_t *strides, int new_ndim, const int64_t *new_shape,
                     int64_t *new_strides)
{
    if (ndim == 0) {
        for (int d = 0; d < new_ndim; d++) new_strides[d] = 1;
        return true;
    }
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++) numel *= shape[d];
    if (numel == 0) {
        /* strides are arbitrary; like NumPy, keep them when the shape is unchanged */
        bool same = ndim == new_ndim && memcmp(shape, new_shape, sizeof(int64_t) * (size_t)ndim) == 0;
        if (same) memcpy(new_strides, strides, sizeof(int64_t) * (size_t)ndim);
        else tj_contiguous_strides(new_ndim, new_shape, new_strides);
        return true;
    }
    /* walk both shapes from the back, one chunk of mutually contiguous dims
     * of the old shape at a time; the new dims must tile each chunk */
    int view_d = new_ndim - 1;
    int64_t chunk_base_stride = strides[ndim - 1], tensor_numel = 1, view_numel = 1;
    for (int td = ndim - 1; td >= 0; td--) {
        tensor_numel *= shape[td];
        if (td == 0 || (shape[td - 1] != 1 && strides[td - 1] != tensor_numel * chunk_base_stride)) {
            while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
                new_strides[view_d] = view_numel * chunk_base_stride;
                view_numel *= new_shape[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel) return false;
            if (td > 0) {
                chunk_base_stride = strides[td - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

/* Output geometry equal to self's: an alias view to be edited by the caller. */
static void alias_of(const tj_tensor *self, tj_meta *o)
{
    o->dtype = self->dtype;
    o->ndim = self->ndim;
    o->alias = 0;
    o->offset = self->offset;
    memcpy(o->shape, self->shape, sizeof(int64_t) * (size_t)self->ndim);
    memcpy(o->strides, self->strides, sizeof(int64_t) * (size_t)self->ndim);
}

/* view and _unsafe_view: a view when self's strides allow it; otherwise an
 * error (view) or a new contiguous tensor that the copy kernel fills. */
static tj_status meta_view_like(const char *op, const tj_value *args, tj_meta *o, bool copy_if_needed)
{
    const tj_tensor *self = args[0].u.t;
    int n = args[1].n;
    if (tj_view_infer_size(op, args[1].u.ints, n, self->numel, o->shape) != TJ_OK) return tj_last_status();
    o->dtype = self->dtype;
    o->ndim = n;
    if (tj_view_strides(self->ndim, self->shape, self->strides, n, o->shape, o->strides)) {
        o->alias = 0;
        o->offset = self->offset;
        return TJ_OK;
    }
    if (copy_if_needed) return TJ_OK; /* alias stays -1: a copy */
    char b1[SHAPE_BUF], b2[SHAPE_BUF], b3[SHAPE_BUF];
    return tj_error(TJ_ERR_SHAPE,
                    "%s: view size %s is not compatible with input tensor's size %s and stride %s (at least one "
                    "dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
                    op, tj_shape_str(n, o->shape, b1, sizeof b1), tj_shape_str(self->ndim, self->shape, b2, sizeof b2),
                    tj_shape_str(self->ndim, self->strides, b3, sizeof b3));
}

tj_status tj_meta_view(const tj_value *args, tj_meta *outs)
{
    return meta_view_like("aten::view", args, outs, false);
}

tj_status tj_meta_unsafe_view(const tj_value *args, tj_meta *outs)
{
    return meta_view_like("aten::_unsafe_view", args, outs, true);
}

tj_status tj_meta_permute(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::permute";
    const tj_tensor *self = args[0].u.t;
    const int64_t *dims = args[1].u.ints;
    int n = args[1].n;
    char b1[SHAPE_BUF], b2[SHAPE_BUF];
    if (n != self->ndim)
        return tj_error(TJ_ERR_SHAPE, "%s: dims %s has %d entries but the tensor of shape %s has %d dims", op,
                        tj_shape_str(n, dims, b1, sizeof b1), n, tj_shape_str(self->ndim, self->shape, b2, sizeof b2),
                        self->ndim);
    bool seen[TJ_MAX_DIMS] = {false};
    alias_of(self, outs);
    for (int i = 0; i < n; i++) {
        int d;
        if (tj_wrap_dim(op, dims[i], n, &d) != TJ_OK) return tj_last_status();
        if (seen[d])
            return tj_error(TJ_ERR_SHAPE, "%s: repeated dim %" PRId64 " in dims %s", op, dims[i],
                            tj_shape_str(n, dims, b1, sizeof b1));
        seen[d] = true;
        outs->shape[i] = self->shape[d];
        outs->strides[i] = self->strides[d];
    }
    return TJ_OK;
}

/* Swaps two (already wrapped) dims of an alias of self; a 0-dim tensor
 * stays as it is. */
static void swap_dims(const tj_tensor *self, int d0, int d1, tj_meta *o)
{
    alias_of(self, o);
    if (self->ndim == 0) return;
    o->shape[d0] = self->shape[d1];
    o->shape[d1] = self->shape[d0];
    o->strides[d0] = self->strides[d1];
    o->strides[d1] = self->strides[d0];
}

tj_status tj_meta_detach(const tj_value *args, tj_meta *outs)
{
    alias_of(args[0].u.t, outs);
    return TJ_OK;
}

/* transpose / transpose_, t / t_: the geometry of the view; errors name `op`. */
static tj_status meta_transpose(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int d0, d1;
    if (tj_wrap_dim(op, args[1].u.i, self->ndim, &d0) != TJ_OK || tj_wrap_dim(op, args[2].u.i, self->ndim, &d1) != TJ_OK)
        return tj_last_status();
    swap_dims(self, d0, d1, outs);
    return TJ_OK;
}

static tj_status meta_t(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    char b[SHAPE_BUF];
    if (self->ndim > 2)
        return tj_error(TJ_ERR_SHAPE, "%s: expects a tensor with <= 2 dimensions, but self is %dD (shape %s)", op,
                        self->ndim, tj_shape_str(self->ndim, self->shape, b, sizeof b));
    swap_dims(self, 0, self->ndim < 2 ? 0 : 1, outs);
    return TJ_OK;
}

tj_status tj_meta_transpose(const tj_value *args, tj_meta *outs) { return meta_transpose("aten::transpose.int", args, outs); }
tj_status tj_meta_t(const tj_value *args, tj_meta *outs) { return meta_t("aten::t", args, outs); }

tj_status tj_meta_expand(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::expand";
    const tj_tensor *self = args[0].u.t;
    const int64_t *size = args[1].u.ints;
    int n = args[1].n, nd = self->ndim;
    char b1[SHAPE_BUF], b2[SHAPE_BUF];
    if (n < nd)
        return tj_error(TJ_ERR_SHAPE,
                        "%s: the number of sizes provided (%d) in %s must be greater or equal to the number of "
                        "dimensions in the tensor (%d, shape %s)",
                        op, n, tj_shape_str(n, size, b1, sizeof b1), nd, tj_shape_str(nd, self->shape, b2, sizeof b2));
    if (n > TJ_MAX_DIMS)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: size %s has %d dims, more than %d", op,
                        tj_shape_str(n, size, b1, sizeof b1), n, TJ_MAX_DIMS);
    tj_meta *o = outs;
    alias_of(self, o);
    o->ndim = n;
    for (int i = n - 1; i >= 0; i--) {
        int d = nd - n + i; /* self's dim aligned with i, < 0 for a new leading dim */
        int64_t cur = d >= 0 ? self->shape[d] : 1;
        /* a new leading dim continues the next one; a 0-dim self gets stride 0 */
        int64_t stride = d >= 0 ? self->strides[d] : nd == 0 ? 0 : o->shape[i + 1] * o->strides[i + 1];
        int64_t target = size[i];
        if (target == -1) {
            if (d < 0)
                return tj_error(TJ_ERR_SHAPE,
                                "%s: the expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                                "dimension %d (sizes %s, tensor shape %s)",
                                op, i, tj_shape_str(n, size, b1, sizeof b1), tj_shape_str(nd, self->shape, b2, sizeof b2));
            target = cur;
        }
        if (target < 0)
            return tj_error(TJ_ERR_SHAPE, "%s: negative size %" PRId64 " at dim %d of sizes %s", op, target, i,
                            tj_shape_str(n, size, b1, sizeof b1));
        if (cur != target) {
            if (cur != 1)
                return tj_error(TJ_ERR_SHAPE,
                                "%s: the expanded size of the tensor (%" PRId64 ") must match the existing size (%" PRId64
                                ") at non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                                op, target, cur, i, tj_shape_str(n, size, b1, sizeof b1),
                                tj_shape_str(nd, self->shape, b2, sizeof b2));
            stride = 0;
        }
        o->shape[i] = target;
        o->strides[i] = stride;
    }
    int64_t numel;
    return tj_checked_view_numel(n, o->shape, &numel, op);
}

static tj_status meta_unsqueeze(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int nd = self->ndim, d;
    if (nd >= TJ_MAX_DIMS)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: a tensor of rank %d cannot gain a dim (at most %d)", op, nd,
                        TJ_MAX_DIMS);
    if (tj_wrap_new_dim(op, args[1].u.i, nd, &d) != TJ_OK) return tj_last_status();
    tj_meta *o = outs;
    alias_of(self, o);
    o->ndim = nd + 1;
    for (int i = nd; i > d; i--) {
        o->shape[i] = self->shape[i - 1];
        o->strides[i] = self->strides[i - 1];
    }
    o->shape[d] = 1;
    o->strides[d] = d >= nd ? 1 : self->shape[d] * self->strides[d];
    return TJ_OK;
}

static tj_status meta_squeeze_dim(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int d;
    if (tj_wrap_dim(op, args[1].u.i, self->ndim, &d) != TJ_OK) return tj_last_status();
    tj_meta *o = outs;
    alias_of(self, o);
    if (self->ndim == 0 || self->shape[d] != 1) return TJ_OK;
    o->ndim--;
    for (int i = d; i < o->ndim; i++) {
        o->shape[i] = self->shape[i + 1];
        o->strides[i] = self->strides[i + 1];
    }
    return TJ_OK;
}

tj_status tj_meta_squeeze(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    tj_meta *o = outs;
    alias_of(self, o);
    o->ndim = 0;
    for (int i = 0; i < self->ndim; i++)
        if (self->shape[i] != 1) {
            o->shape[o->ndim] = self->shape[i];
            o->strides[o->ndim++] = self->strides[i];
        }
    return TJ_OK;
}

tj_status tj_meta_unsqueeze(const tj_value *args, tj_meta *outs) { return meta_unsqueeze("aten::unsqueeze", args, outs); }
tj_status tj_meta_squeeze_dim(const tj_value *args, tj_meta *outs) { return meta_squeeze_dim("aten::squeeze.dim", args, outs); }

/* ---- in-place views: the view's geometry, which the dispatcher gives self
 * (tj_op_is_inplace_view); errors name the in-place operator ---- */
tj_status tj_meta_unsqueeze_(const tj_value *args, tj_meta *outs) { return meta_unsqueeze("aten::unsqueeze_", args, outs); }
tj_status tj_meta_squeeze__dim(const tj_value *args, tj_meta *outs) { return meta_squeeze_dim("aten::squeeze_.dim", args, outs); }
tj_status tj_meta_squeeze_(const tj_value *args, tj_meta *outs) { return tj_meta_squeeze(args, outs); }
tj_status tj_meta_transpose_(const tj_value *args, tj_meta *outs) { return meta_transpose("aten::transpose_", args, outs); }
tj_status tj_meta_t_(const tj_value *args, tj_meta *outs) { return meta_t("aten::t_", args, outs); }

tj_status tj_meta_select(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::select.int";
    const tj_tensor *self = args[0].u.t;
    int64_t index = args[2].u.i;
    char b[SHAPE_BUF];
    int d;
    if (self->ndim == 0) return tj_error(TJ_ERR_INDEX, "%s: select() cannot be applied to a 0-dim tensor", op);
    if (tj_wrap_dim(op, args[1].u.i, self->ndim, &d) != TJ_OK) return tj_last_status();
    int64_t size = self->shape[d];
    if (index < -size || index >= size)
        return tj_error(TJ_ERR_INDEX, "%s: index %" PRId64 " out of range for tensor of size %s at dimension %d", op,
                        index, tj_shape_str(self->ndim, self->shape, b, sizeof b), d);
    if (index < 0) index += size;
    tj_meta *o = outs;
    alias_of(self, o);
    o->offset += index * self->strides[d];
    o->ndim--;
    for (int i = d; i < o->ndim; i++) {
        o->shape[i] = self->shape[i + 1];
        o->strides[i] = self->strides[i + 1];
    }
    return TJ_OK;
}

void tj_slice_range(int64_t size, const tj_value *start_arg, const tj_value *end_arg, int64_t *start, int64_t *end)
{
    int64_t a = start_arg->kind == TJ_V_INT ? start_arg->u.i : 0;
    int64_t b = end_arg->kind == TJ_V_INT ? end_arg->u.i : INT64_MAX;
    if (a == INT64_MAX) a = 0; /* INT64_MAX stands for the default */
    if (a < 0) a += size;
    if (b < 0) b += size;
    if (a < 0) a = 0;
    else if (a > size) a = size;
    if (b < a) b = a;
    else if (b > size) b = size;
    *start = a;
    *end = b;
}

tj_status tj_meta_slice(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::slice.Tensor";
    const tj_tensor *self = args[0].u.t;
    int64_t step = args[4].u.i;
    int d;
    if (self->ndim == 0) return tj_error(TJ_ERR_INDEX, "%s: slice() cannot be applied to a 0-dim tensor", op);
    if (tj_wrap_dim(op, args[1].u.i, self->ndim, &d) != TJ_OK) return tj_last_status();
    if (step <= 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: slice step must be positive, got %" PRId64, op, step);
    int64_t start, end;
    tj_slice_range(self->shape[d], &args[2], &args[3], &start, &end);
    int64_t len = end - start;
    tj_meta *o = outs;
    alias_of(self, o);
    o->offset += start * self->strides[d];
    o->shape[d] = len == 0 ? 0 : 1 + (len - 1) / step; /* rounds up without overflow */
    if (__builtin_mul_overflow(self->strides[d], step, &o->strides[d]))
        o->strides[d] = self->strides[d]; /* step >= len: a single element, its stride is irrelevant */
    return TJ_OK;
}

/* diagonal(self, offset, dim1, dim2), as ATen 1.13's diagonal
 * (TensorShape.cpp): dim1 and dim2 go, the diagonal becomes the last dim,
 * stepping over both (stride dim1 + stride dim2); a positive offset drops
 * the first columns (along dim2), a negative one the first rows (dim1).
 * An offset beyond either size gives an empty diagonal at self's offset. */
tj_status tj_diagonal_geometry(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t offset = args[1].u.i;
    int d1, d2;
    if (self->ndim < 2) {
        char b[SHAPE_BUF];
        return tj_error(TJ_ERR_INDEX, "%s: self of shape %s has %d dims, a diagonal needs 2 (dim1 %" PRId64
                        ", dim2 %" PRId64 ")", op, tj_shape_str(self->ndim, self->shape, b, sizeof b), self->ndim,
                        args[2].u.i, args[3].u.i);
    }
    if (tj_wrap_dim(op, args[2].u.i, self->ndim, &d1) != TJ_OK || tj_wrap_dim(op, args[3].u.i, self->ndim, &d2) != TJ_OK)
        return tj_last_status();
    if (d1 == d2)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: diagonal dimensions cannot be identical %" PRId64 ", %" PRId64, op,
                        args[2].u.i, args[3].u.i);
    int64_t n1 = self->shape[d1], n2 = self->shape[d2], size, step;
    /* strides of size-1 dims may be anything (as_strided's): ATen's sum
     * wraps negative there, which its as_strided refuses */
    if (__builtin_add_overflow(self->strides[d1], self->strides[d2], &step))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: the diagonal's stride, the sum of strides %" PRId64
                        " and %" PRId64 " of dims %d and %d, overflows", op, self->strides[d1], self->strides[d2], d1,
                        d2);
    /* the differences stay in range: sizes are >= 0, offset any int64 */
    if (offset >= 0) size = offset >= n2 ? 0 : n1 < n2 - offset ? n1 : n2 - offset;
    else size = offset <= -n1 ? 0 : n1 + offset < n2 ? n1 + offset : n2;
    tj_meta *o = outs;
    alias_of(self, o);
    if (size > 0) o->offset += offset >= 0 ? offset * self->strides[d2] : -offset * self->strides[d1];
    int k = 0;
    for (int d = 0; d < self->ndim; d++)
        if (d != d1 && d != d2) {
            o->shape[k] = self->shape[d];
            o->strides[k++] = self->strides[d];
        }
    o->ndim = k + 1;
    o->shape[k] = size;
    o->strides[k] = step;
    return TJ_OK;
}

tj_status tj_meta_diagonal(const tj_value *args, tj_meta *outs)
{
    return tj_diagonal_geometry("aten::diagonal", args, outs);
}

/* ---- as_strided ---- */

/* One past the last element t addresses (its offset when empty). */
static int64_t span_end(const tj_tensor *t)
{
    int64_t end = t->offset + 1;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] == 0) return t->offset;
        end += (t->shape[d] - 1) * t->strides[d];
    }
    return end;
}

/* The elements from storage offset 0 that t's storage holds, as PyTorch's
 * storage size: the span of t's root base (a new tensor's elements), or t's
 * own span when that reaches further; never more than the allocation (whose
 * capacity may be rounded up). An alias of unknown base that is not dense
 * (an expanded or strided alias without view_base: a plan's compile-time
 * value) is bounded by the allocation alone, unbounded for a fake: the
 * traced call was checked. */
int64_t tj_storage_elements(const tj_tensor *t)
{
    int64_t capacity = !t->fake && t->storage ? (int64_t)(t->storage->nbytes / tj_dtype_size(t->dtype)) : INT64_MAX;
    int64_t own = span_end(t), root = t->view_base ? span_end(t->view_base) : own;
    if (!t->view_base && t->numel > 0 && own - t->offset != t->numel) return capacity;
    int64_t logical = own > root ? own : root;
    return logical < capacity ? logical : capacity;
}

tj_status tj_as_strided_geometry(const char *op, const tj_tensor *self, int64_t storage_elements,
                                 const tj_value *args, int64_t default_offset, tj_meta *o)
{
    const int64_t *size = args[0].u.ints, *stride = args[1].u.ints;
    int n = args[0].n;
    int64_t offset = args[2].kind == TJ_V_INT ? args[2].u.i : default_offset;
    char b1[SHAPE_BUF], b2[SHAPE_BUF];
    if (args[1].n != n)
        return tj_error(TJ_ERR_SHAPE, "%s: mismatch in length of strides and shape (size %s, stride %s)", op,
                        tj_shape_str(n, size, b1, sizeof b1), tj_shape_str(args[1].n, stride, b2, sizeof b2));
    if (n > TJ_MAX_DIMS)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: size %s has more than %d dims", op,
                        tj_shape_str(n, size, b1, sizeof b1), TJ_MAX_DIMS);
    for (int d = 0; d < n; d++) {
        if (size[d] < 0)
            return tj_error(TJ_ERR_SHAPE, "%s: Trying to create tensor with negative dimension %" PRId64 ": %s", op,
                            size[d], tj_shape_str(n, size, b1, sizeof b1));
        if (stride[d] < 0)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: Negative strides are not supported at the moment, got "
                            "strides: %s", op, tj_shape_str(n, stride, b1, sizeof b1));
    }
    if (offset < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: Tensor: invalid storage offset %" PRId64, op, offset);
    int64_t numel;
    if (tj_checked_numel(n, size, &numel, op) != TJ_OK) return tj_last_status();
    /* the last element read: offset + sum (size - 1) * stride, overflow-checked */
    int64_t last = offset;
    bool overflow = false;
    for (int d = 0; d < n && numel > 0; d++) {
        int64_t step;
        overflow |= __builtin_mul_overflow(size[d] - 1, stride[d], &step) || __builtin_add_overflow(last, step, &last);
    }
    if (overflow || (numel > 0 && last >= storage_elements) || (numel == 0 && offset > storage_elements))
        return tj_error(TJ_ERR_SHAPE, "%s: size %s, stride %s and storage offset %" PRId64 " reach element %s%" PRId64
                        ", out of bounds for a storage of %" PRId64 " elements", op,
                        tj_shape_str(n, size, b1, sizeof b1), tj_shape_str(n, stride, b2, sizeof b2), offset,
                        overflow ? "beyond " : "", overflow ? INT64_MAX : numel > 0 ? last : offset, storage_elements);
    o->dtype = self->dtype;
    o->ndim = n;
    o->alias = 0;
    o->offset = offset;
    for (int d = 0; d < n; d++) { /* a 0-dim view's arrays may be NULL */
        o->shape[d] = size[d];
        o->strides[d] = stride[d];
    }
    return TJ_OK;
}

/* as_strided(self, size, stride, storage_offset=None): a view of self's
 * storage with any geometry inside it (ATen's as_strided_tensorimpl and
 * setStrided checks); the offset defaults to self's. */
tj_status tj_meta_as_strided(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    return tj_as_strided_geometry("aten::as_strided", self, tj_storage_elements(self), args + 1, self->offset, outs);
}

tj_status tj_meta_as_strided_(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    return tj_as_strided_geometry("aten::as_strided_", self, tj_storage_elements(self), args + 1, self->offset, outs);
}

tj_status tj_split_plan(const tj_tensor *self, int64_t split_size, int64_t dim, int *wrapped, int64_t *nchunks)
{
    const char *op = "aten::split.Tensor";
    if (self->ndim == 0) return tj_error(TJ_ERR_INDEX, "%s: split expects at least a 1-dimensional tensor", op);
    if (split_size < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: split expects split_size be non-negative, but got split_size=%" PRId64,
                        op, split_size);
    if (tj_wrap_dim(op, dim, self->ndim, wrapped) != TJ_OK) return tj_last_status();
    int64_t size = self->shape[*wrapped];
    if (split_size == 0 && size != 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "%s: split_size can only be 0 if dimension size is 0, but got dimension size of %" PRId64, op,
                        size);
    int64_t n = split_size == 0 ? 1 : size / split_size + (size % split_size != 0);
    *nchunks = n > 0 ? n : 1;
    return TJ_OK;
}

/* ---- data movement ---- */

/* PyTorch's legacy rule: a 1-d tensor of shape [0] takes no part in cat's
 * shape checks, whatever the rank of the others. */
static bool cat_skips(const tj_tensor *t)
{
    return t->ndim == 1 && t->shape[0] == 0;
}

tj_status tj_meta_cat(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::cat";
    tj_tensor *const *ts = args[0].u.ts;
    int n = args[0].n;
    char b1[SHAPE_BUF], b2[SHAPE_BUF];
    for (int i = 0; i < n; i++)
        if (ts[i]->ndim == 0)
            return tj_error(TJ_ERR_SHAPE, "%s: zero-dimensional tensor (at position %d) cannot be concatenated", op, i);
    if (n == 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: expected a non-empty list of Tensors", op);
    /* result_type over every input (none is 0-dim), skipped ones included */
    tj_dtype dtype = ts[0]->dtype;
    int valid = -1;
    for (int i = 0; i < n; i++) {
        dtype = tj_promote_types(dtype, ts[i]->dtype);
        if (valid < 0 && !cat_skips(ts[i])) valid = i;
    }
    tj_meta *o = outs;
    o->dtype = dtype;
    if (valid < 0) { /* every input is a skipped [0] */
        o->ndim = 1;
        o->shape[0] = 0;
        return TJ_OK;
    }
    const tj_tensor *first = ts[valid];
    int dim;
    if (tj_wrap_dim(op, args[1].u.i, first->ndim, &dim) != TJ_OK) return tj_last_status();
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        const tj_tensor *t = ts[i];
        if (cat_skips(t)) continue;
        if (t->ndim != first->ndim)
            return tj_error(TJ_ERR_SHAPE,
                            "%s: tensors must have same number of dimensions: got %d and %d (shapes %s at position "
                            "%d and %s at position %d)",
                            op, first->ndim, t->ndim, tj_shape_str(first->ndim, first->shape, b1, sizeof b1), valid,
                            tj_shape_str(t->ndim, t->shape, b2, sizeof b2), i);
        for (int d = 0; d < t->ndim; d++)
            if (d != dim && t->shape[d] != first->shape[d])
                return tj_error(TJ_ERR_SHAPE,
                                "%s: sizes of tensors must match except in dimension %d. Expected size %" PRId64
                                " but got size %" PRId64 " for tensor number %d in the list (shapes %s and %s)",
                                op, dim, first->shape[d], t->shape[d], i,
                                tj_shape_str(first->ndim, first->shape, b1, sizeof b1),
                                tj_shape_str(t->ndim, t->shape, b2, sizeof b2));
        if (__builtin_add_overflow(total, t->shape[dim], &total))
            return tj_error(TJ_ERR_OVERFLOW, "%s: the concatenated size along dim %d overflows", op, dim);
    }
    o->ndim = first->ndim;
    memcpy(o->shape, first->shape, sizeof(int64_t) * (size_t)first->ndim);
    o->shape[dim] = total;
    return TJ_OK;
}

/* ---- constant_pad_nd ---- */

static const char *const PAD = "aten::constant_pad_nd";

tj_status tj_pad_plan_make(const tj_tensor *self, const int64_t *pad, int npad, tj_pad_plan *p)
{
    if (npad % 2 != 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: Length of pad must be even but instead it equals %d", PAD, npad);
    int nd = self->ndim, lead = nd - npad / 2;
    if (lead < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "%s: Length of pad should be no more than twice the number of dimensions of the input. Pad "
                        "length is %d while the input has %d dimensions.",
                        PAD, npad, nd);
    p->grows = false;
    for (int k = 0; k < npad; k++) p->grows |= pad[k] > 0;
    for (int d = 0; d < nd; d++) {
        int64_t size = self->shape[d], before = 0, after = 0;
        if (d >= lead) {
            before = pad[2 * (nd - 1 - d)];
            after = pad[2 * (nd - 1 - d) + 1];
        }
        /* the sums stay far from overflow only for sane pads: check them
         * (negating INT64_MIN included) */
        int64_t lo = 0, hi = 0, kept, out;
        bool overflow = (before < 0 && __builtin_sub_overflow((int64_t)0, before, &lo)) ||
                        (after < 0 && __builtin_sub_overflow((int64_t)0, after, &hi)) ||
                        __builtin_sub_overflow(size, lo, &kept) || __builtin_sub_overflow(kept, hi, &kept) ||
                        __builtin_add_overflow(size, before, &out) || __builtin_add_overflow(out, after, &out);
        if (overflow)
            return tj_error(TJ_ERR_OVERFLOW,
                            "%s: The input size %" PRId64 ", plus padding %" PRId64 " and %" PRId64
                            " overflows int64. Check dimension %d of your input.",
                            PAD, size, before, after, d);
        if (kept < 0 || (p->grows && d >= lead && out <= 0))
            return tj_error(TJ_ERR_SHAPE,
                            "%s: The input size %" PRId64 ", plus negative padding %" PRId64 " and %" PRId64
                            " resulted in a negative output size, which is invalid. Check dimension %d of your input.",
                            PAD, size, before, after, d);
        p->src_start[d] = lo;
        p->count[d] = kept;
        p->dst_start[d] = before > 0 ? before : 0;
        p->out_shape[d] = out;
    }
    return TJ_OK;
}

tj_status tj_meta_constant_pad_nd(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    tj_pad_plan p;
    char buf[8];
    if (tj_pad_plan_make(self, args[1].u.ints, args[1].n, &p) != TJ_OK) return tj_last_status();
    if (tj_scalar_to(PAD, &args[2], self->dtype, buf) != TJ_OK) return tj_last_status();
    outs[0].dtype = self->dtype;
    outs[0].ndim = self->ndim;
    memcpy(outs[0].shape, p.out_shape, sizeof(int64_t) * (size_t)self->ndim);
    int64_t numel;
    return tj_checked_numel(self->ndim, p.out_shape, &numel, PAD);
}

/* The border filled with the value, then the kept block of the input copied
 * in one strided copy (no fill where the input covers the whole result). */
tj_status tj_kernel_constant_pad_nd(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    tj_tensor *out = outs[0];
    tj_pad_plan p;
    tj_pad_plan_make(self, args[1].u.ints, args[1].n, &p); /* checked by the shape function */
    size_t es = tj_dtype_size(out->dtype);
    if (p.grows) {
        _Alignas(8) char value[8];
        tj_scalar_to(PAD, &args[2], out->dtype, value);
        tj_k_fill(tj_tensor_ptr(out), es, value, out->numel, tj_threads_for(out->numel));
    }
    int64_t src_off = 0, dst_off = 0, n = 1;
    for (int d = 0; d < self->ndim; d++) {
        src_off += p.src_start[d] * self->strides[d];
        dst_off += p.dst_start[d] * out->strides[d];
        n *= p.count[d];
    }
    if (n == 0) return TJ_OK;
    tj_k_strided dst = {tj_tensor_ptr(out) + dst_off * (int64_t)es, out->dtype, out->strides};
    tj_k_strided src = {tj_tensor_ptr(self) + src_off * (int64_t)es, self->dtype, self->strides};
    tj_k_copy_strided(dst, src, self->ndim, p.count, tj_threads_for(n));
    return TJ_OK;
}

static void same_geometry(const tj_tensor *self, tj_dtype dtype, tj_meta *o)
{
    o->dtype = dtype;
    o->ndim = self->ndim;
    memcpy(o->shape, self->shape, sizeof(int64_t) * (size_t)self->ndim);
}

tj_status tj_meta_clone(const tj_value *args, tj_meta *outs)
{
    same_geometry(args[0].u.t, args[0].u.t->dtype, outs);
    return TJ_OK;
}

tj_status tj_meta_to_copy(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    same_geometry(self, args[1].kind == TJ_V_DTYPE ? args[1].u.dtype : self->dtype, outs);
    return TJ_OK;
}

/* Copies src into dst memory laid out with `dst_strides` over src's shape,
 * converting to dst's dtype. */
static void copy_into(void *dst, tj_dtype dd, const int64_t *dst_strides, const tj_tensor *src)
{
    tj_k_strided d = {dst, dd, dst_strides};
    tj_k_strided s = {tj_tensor_ptr(src), src->dtype, src->strides};
    tj_k_copy_strided(d, s, src->ndim, src->shape, tj_threads_for(src->numel));
}

void tj_copy_tensor(tj_tensor *dst, const tj_tensor *src)
{
    if (dst->dtype != src->dtype) {
        tj_copy_convert(dst, src);
        return;
    }
    copy_into(tj_tensor_ptr(dst), dst->dtype, dst->strides, src);
}

/* ---- stack: cat along a new dim ---- */

#define STACK "aten::stack"

/* ATen's stack: every tensor of one shape (TJ_ERR_SHAPE naming the first
 * that differs), dim wrapped over rank + 1, the dtype cat promotes to. */
tj_status tj_meta_stack(const tj_value *args, tj_meta *outs)
{
    tj_tensor *const *ts = args[0].u.ts;
    int n = args[0].n, d;
    if (n == 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: expects a non-empty TensorList", STACK);
    const tj_tensor *first = ts[0];
    tj_dtype dtype = first->dtype;
    if (first->ndim == TJ_MAX_DIMS)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: the result would have more than %d dims", STACK, TJ_MAX_DIMS);
    if (tj_wrap_new_dim(STACK, args[1].u.i, first->ndim, &d) != TJ_OK) return tj_last_status();
    for (int i = 1; i < n; i++) {
        const tj_tensor *t = ts[i];
        if (t->ndim != first->ndim || memcmp(t->shape, first->shape, sizeof(int64_t) * (size_t)t->ndim) != 0) {
            char b1[SHAPE_BUF], b2[SHAPE_BUF];
            return tj_error(TJ_ERR_SHAPE, "%s: expects each tensor to be equal size, but got %s at entry 0 and %s at "
                            "entry %d", STACK, tj_shape_str(first->ndim, first->shape, b1, sizeof b1),
                            tj_shape_str(t->ndim, t->shape, b2, sizeof b2), i);
        }
        dtype = tj_promote_types(dtype, t->dtype);
    }
    tj_meta *o = outs;
    o->dtype = dtype;
    o->ndim = first->ndim + 1;
    for (int k = 0, src = 0; k < o->ndim; k++) o->shape[k] = k == d ? n : first->shape[src++];
    return TJ_OK;
}

/* Tensor i goes to index i of the new dim: a strided copy into the output
 * through its strides without that dim. */
tj_status tj_kernel_stack(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *out = outs[0];
    if (out->numel == 0) return TJ_OK;
    int d;
    tj_wrap_dim(STACK, args[1].u.i, out->ndim, &d); /* checked by the shape function */
    int64_t strides[TJ_MAX_DIMS];
    for (int k = 0, m = 0; k < out->ndim; k++)
        if (k != d) strides[m++] = out->strides[k];
    size_t es = tj_dtype_size(out->dtype);
    for (int i = 0; i < args[0].n; i++)
        copy_into(tj_tensor_ptr(out) + i * out->strides[d] * (int64_t)es, out->dtype, strides, args[0].u.ts[i]);
    return TJ_OK;
}

/* ---- flip: a copy read through negated strides ---- */

#define FLIP "aten::flip"

/* The dims of flip's list, wrapped, each at most once (PyTorch's
 * dim_list_to_bitset): TJ_ERR_INDEX for one out of range, TJ_ERR_INVALID_ARGUMENT
 * for a repeat. */
static tj_status flip_dims(const tj_tensor *self, const tj_value *dims, bool *flipped)
{
    memset(flipped, 0, sizeof(bool) * TJ_MAX_DIMS);
    for (int i = 0; i < dims->n; i++) {
        int d;
        if (tj_wrap_dim(FLIP, dims->u.ints[i], self->ndim, &d) != TJ_OK) return tj_last_status();
        if (flipped[d])
            return tj_error(TJ_ERR_INVALID_ARGUMENT, FLIP ": dim %d appears multiple times in the list of dims", d);
        flipped[d] = true;
    }
    return TJ_OK;
}

tj_status tj_meta_flip(const tj_value *args, tj_meta *outs)
{
    bool flipped[TJ_MAX_DIMS];
    if (flip_dims(args[0].u.t, &args[1], flipped) != TJ_OK) return tj_last_status();
    same_geometry(args[0].u.t, args[0].u.t->dtype, outs);
    return TJ_OK;
}

/* out = self read from the far end of every flipped dim (stride negated):
 * the strided copy's runs, a reversed gather along a flipped last dim. */
tj_status tj_kernel_flip(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    bool flipped[TJ_MAX_DIMS];
    flip_dims(self, &args[1], flipped); /* checked by the shape function */
    if (self->numel == 0) return TJ_OK;
    int64_t strides[TJ_MAX_DIMS], first = 0;
    for (int d = 0; d < self->ndim; d++) {
        strides[d] = flipped[d] ? -self->strides[d] : self->strides[d];
        if (flipped[d]) first += (self->shape[d] - 1) * self->strides[d];
    }
    tj_k_strided src = {tj_tensor_ptr(self) + first * (int64_t)tj_dtype_bytes(self->dtype), self->dtype, strides};
    tj_k_strided dst = {tj_tensor_ptr(outs[0]), outs[0]->dtype, outs[0]->strides};
    tj_k_copy_strided(dst, src, self->ndim, self->shape, tj_threads_for(self->numel));
    return TJ_OK;
}

tj_status tj_kernel_copy(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t strides[TJ_MAX_DIMS]; /* the output, row-major over self's shape */
    tj_contiguous_strides(self->ndim, self->shape, strides);
    copy_into(tj_tensor_ptr(outs[0]), outs[0]->dtype, strides, self);
    return TJ_OK;
}

tj_status tj_kernel_cat(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *const *ts = args[0].u.ts;
    tj_tensor *out = outs[0];
    if (out->numel == 0) return TJ_OK;
    int dim;
    tj_wrap_dim("aten::cat", args[1].u.i, out->ndim, &dim); /* checked by the shape function */
    size_t es = tj_dtype_size(out->dtype);
    int64_t at = 0; /* where the next input starts along dim */
    for (int i = 0; i < args[0].n; i++) {
        if (cat_skips(ts[i])) continue;
        copy_into(tj_tensor_ptr(out) + at * out->strides[dim] * (int64_t)es, out->dtype, out->strides, ts[i]);
        at += ts[i]->shape[dim];
    }
    return TJ_OK;
}
