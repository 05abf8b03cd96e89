/* Views under autograd: what a view remembers of its base, which in-place
 * calls on views autograd refuses (as PyTorch), and the gradients of a
 * view's region of its base, which PyTorch's CopySlices and
 * AsStridedBackward nodes compute and autograd.c's nodes of in-place calls
 * on views call.
 *
 * A view is remembered as its root base and its own geometry (shape,
 * strides, storage offset: as_strided's arguments), which fake tensors have
 * too. The region's elements are addressed through an index into the
 * base's elements in memory order, built from arange calls, so that a
 * traced backward pass records ordinary operators (arange, gather,
 * scatter, scatter_add) that functionalisation and the replayer know. */
#include "autograd_internal.h"

/* grad mode turned off below a recorded call (not the user's no_grad) */
static _Thread_local int below_recorded;

bool tj_autograd_below_begin(void)
{
    below_recorded++;
    return tj_set_grad_enabled(false);
}

void tj_autograd_below_end(bool was_enabled)
{
    tj_set_grad_enabled(was_enabled);
    below_recorded--;
}

void tj_tensor_set_view_of(tj_tensor *view, tj_tensor *base)
{
    tj_tensor *root = base->view_base ? base->view_base : base;
    if (root->borrowed) return; /* it may not outlive the view: the view is a root of its own */
    view->view_base = tj_tensor_retain(root);
    /* a view of a detached alias is of its family, not of the alias's base:
     * an in-place call on that base gives it no history, as in PyTorch */
    if (root->detached) tj_tensor_mark_detached(view);
    if (base->view_kind > TJ_VIEW_DEFAULT) view->view_kind = base->view_kind;
    else view->view_kind = tj_grad_enabled() || below_recorded ? TJ_VIEW_DEFAULT : TJ_VIEW_NO_GRAD;
}

/* ---- which calls are refused ---- */

/* The dims of t ordered by decreasing stride (memory order), into perm;
 * false when t's elements do not fill their storage span exactly once
 * (then no index of its elements in memory order exists). */
static bool dense_order(const tj_tensor *t, int64_t *perm)
{
    for (int d = 0; d < t->ndim; d++) perm[d] = d;
    for (int i = 1; i < t->ndim; i++) /* insertion sort, stable: a few dims */
        for (int j = i; j > 0 && t->strides[perm[j - 1]] < t->strides[perm[j]]; j--) {
            int64_t x = perm[j];
            perm[j] = perm[j - 1];
            perm[j - 1] = x;
        }
    int64_t expect = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        int64_t d = perm[i];
        if (t->shape[d] == 1) continue;
        if (t->strides[d] != expect) return false;
        expect *= t->shape[d];
    }
    return true;
}

tj_status tj_autograd_check_view_inplace(const tj_op *op, const tj_tensor *self)
{
    const tj_tensor *base = self->view_base;
    char what[64], bwhat[64];
    tj_tensor_describe(self, what, sizeof what);
    tj_tensor_describe(base, bwhat, sizeof bwhat);
    if (self->view_kind == TJ_VIEW_MULTI_OUTPUT)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: self (%s) is one of several views returned by one call (split, "
                        "chunk, unbind) of a tensor (%s) and is being modified in place with autograd recording: such "
                        "views may not be modified in place (PyTorch refuses it too); use the out-of-place operator",
                        op->name, what, bwhat);
    if (self->view_kind == TJ_VIEW_NO_GRAD)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: self (%s) is a view of %s created in no_grad mode, modified "
                        "in place with grad mode on (PyTorch refuses it too): make the view and the in-place call "
                        "both under tj_no_grad_begin, or both outside it", op->name, what, bwhat);
    if (tj_tensor_requires_grad(base) && tj_tensor_is_leaf(base))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: self (%s) is a view of a leaf that requires grad (%s), used in "
                        "an in-place operation (PyTorch refuses it too: \"a view of a leaf Variable that requires grad "
                        "is being used in an in-place operation\"); update it under tj_no_grad_begin, or work on a "
                        "clone", op->name, what, bwhat);
    int64_t perm[TJ_MAX_DIMS];
    if (!tj_op_is_inplace_view(op) && !dense_order(base, perm)) /* an in-place view needs no region of the base */
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: an in-place operation recorded by autograd on self (%s), a view of "
                        "%s, whose elements do not fill their storage span exactly (PyTorch accepts it; tjit cannot "
                        "address the view's region of it): clone() the base first", op->name, what, bwhat);
    return TJ_OK;
}

/* ---- the region of a base that a view covers ---- */

/* g (base's shape) as a 1-D tensor of base's elements in memory order. */
static tj_tensor *flat_in_memory_order(tj_tensor *g, const tj_tensor *base)
{
    int64_t perm[TJ_MAX_DIMS], n = base->numel;
    dense_order(base, perm);
    return tj_reshape(tj_permute(g, perm, base->ndim), &n, 1);
}

/* flat_in_memory_order undone: a tensor of base's shape. */
static tj_tensor *unflatten(tj_tensor *flat, const tj_tensor *base)
{
    int64_t perm[TJ_MAX_DIMS], inverse[TJ_MAX_DIMS], shape[TJ_MAX_DIMS];
    dense_order(base, perm);
    for (int i = 0; i < base->ndim; i++) {
        shape[i] = base->shape[perm[i]];
        inverse[perm[i]] = i;
    }
    return tj_permute(tj_view(flat, shape, base->ndim), inverse, base->ndim);
}

/* The position of each of view's elements among base's elements in memory
 * order (view's shape flattened, int64): offset + sum of index * stride
 * over view's dims, relative to base's storage offset. */
static tj_tensor *region_index(const tj_tensor *base, const tj_tensor *view)
{
    int64_t ones[TJ_MAX_DIMS], shape[TJ_MAX_DIMS], numel = view->numel;
    for (int d = 0; d < view->ndim; d++) ones[d] = 1;
    tj_tensor *idx = tj_full(ones, view->ndim, tj_v_int(view->offset - base->offset), TJ_INT64);
    for (int d = 0; d < view->ndim; d++) {
        if (view->shape[d] == 1 || view->strides[d] == 0) continue;
        memcpy(shape, ones, sizeof ones);
        shape[d] = view->shape[d];
        tj_tensor *along = tj_arange(tj_v_int(0), tj_v_int(view->shape[d]), tj_v_int(1), TJ_INT64);
        idx = tj_add(idx, tj_view(tj_mul_scalar(along, tj_v_int(view->strides[d])), shape, view->ndim));
    }
    return tj_reshape(tj_expand(idx, view->shape, view->ndim), &numel, 1);
}

tj_tensor *tj_view_region(tj_tensor *g, const tj_tensor *base, const tj_tensor *view)
{
    if (view->numel == 0) return tj_full(view->shape, view->ndim, tj_v_int(0), g->dtype);
    tj_tensor *flat = flat_in_memory_order(g, base);
    return tj_view(tj_gather(flat, 0, region_index(base, view)), view->shape, view->ndim);
}

tj_tensor *tj_view_region_replace(tj_tensor *g, const tj_tensor *base, const tj_tensor *view, tj_tensor *src)
{
    if (view->numel == 0) return g;
    tj_tensor *flat = flat_in_memory_order(g, base), *idx = region_index(base, view);
    int64_t numel = view->numel;
    flat = src ? tj_scatter(flat, 0, idx, tj_reshape(src, &numel, 1)) : tj_scatter_value(flat, 0, idx, tj_v_int(0));
    return unflatten(flat, base);
}

tj_tensor *tj_view_region_grad(tj_tensor *g, const tj_tensor *base, const tj_tensor *view)
{
    int64_t n = base->numel, numel = view->numel;
    tj_tensor *zeros = tj_full(&n, 1, tj_v_int(0), g->dtype);
    if (numel == 0) return unflatten(zeros, base);
    tj_tensor *flat = tj_scatter_add(zeros, 0, region_index(base, view), tj_reshape(g, &numel, 1));
    return unflatten(flat, base);
}
