/* nonzero, masked_select and masked_scatter, as ATen 1.13: shape functions
 * with PyTorch's checks and messages, and the glue to kernels/masked.c.
 *
 * nonzero's and masked_select's result sizes are counts of the input's
 * values. Their shape functions read those values: eagerly they are there;
 * a fake tensor has none (make_fx's fake mode, tj_compile's shape pass), and
 * the call is refused, naming the operator, as PyTorch's fake tensors do. A
 * graph recorded in real mode holds the count of its trace: the kernels
 * refuse to write another count into a result sized for it, and
 * tj_graph_run refuses a node whose result shape differs from the graph's,
 * so that no later step computes with the recorded count silently. */
#include <inttypes.h>
#include <string.h>

#include "kernels/masked.h"
#include "op_masked.h"
#include "op_view.h"

#define NONZERO "aten::nonzero"
#define MASKED_SELECT "aten::masked_select"
#define MASKED_SCATTER "aten::masked_scatter"

tj_status tj_count_nonzero(const char *op, const char *what, const tj_tensor *t, int64_t *count)
{
    if (t->fake)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: output shape depends on the input's values (%s), which a fake tensor "
                        "does not have: a static-shape graph cannot hold this call (fake-mode tracing, tj_compile); "
                        "call it eagerly, or trace in real mode and run the graph with tj_graph_run", op, what);
    *count = tj_k_count_nonzero(t->dtype, tj_tensor_ptr(t), t->ndim, t->shape, t->strides);
    return TJ_OK;
}

tj_status tj_stale_count_error(const char *op, const char *what, int64_t now, int64_t sized)
{
    return tj_error(TJ_ERR_SHAPE, "%s: output shape depends on the input's values: %s gives %" PRId64 " here, the "
                    "result was sized for %" PRId64 " (a graph recorded with other values)", op, what, now, sized);
}

bool tj_op_shape_reads_values(const tj_op *op)
{
    return op == TJ_OPS(nonzero) || op == TJ_OPS(masked_select) || op == TJ_OPS(index_Tensor) ||
           op == TJ_OPS(index_put) || op == TJ_OPS(index_put_) || op == TJ_OPS(_unique2) ||
           op == TJ_OPS(unique_consecutive) || op == TJ_OPS(unique_dim) || op == TJ_OPS(bincount);
}

tj_status tj_meta_nonzero(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t n;
    if (tj_count_nonzero(NONZERO, "self", self, &n) != TJ_OK) return tj_last_status();
    outs[0].dtype = TJ_INT64;
    outs[0].ndim = 2;
    outs[0].shape[0] = n;
    outs[0].shape[1] = self->ndim;
    return TJ_OK;
}

tj_status tj_kernel_nonzero(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    tj_tensor *out = outs[0];
    int64_t n = tj_k_nonzero(self->dtype, tj_tensor_ptr(self), self->ndim, self->shape, self->strides,
                             (int64_t *)tj_tensor_ptr(out), out->shape[0]);
    return n == out->shape[0] ? TJ_OK : tj_stale_count_error(NONZERO, "the count of non-zero elements", n, out->shape[0]);
}

/* mask's dtype, and self and mask broadcast together into (ndim, shape). */
static tj_status masked_shape(const char *op, const tj_tensor *self, const tj_tensor *mask, int *ndim, int64_t *shape)
{
    char s[160];
    if (mask->dtype != TJ_BOOL)
        return tj_error(TJ_ERR_DTYPE, "%s: expected a bool mask, got %s%s", op, tj_dtype_name(mask->dtype),
                        tj_shape_str(mask->ndim, mask->shape, s, sizeof s));
    return tj_broadcast_shapes(op, self->ndim, self->shape, mask->ndim, mask->shape, ndim, shape);
}

tj_status tj_meta_masked_select(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *mask = args[1].u.t;
    int ndim;
    int64_t shape[TJ_MAX_DIMS], strides[TJ_MAX_DIMS], n;
    if (masked_shape(MASKED_SELECT, self, mask, &ndim, shape) != TJ_OK) return tj_last_status();
    if (mask->fake) return tj_count_nonzero(MASKED_SELECT, "mask", mask, &n); /* the refusal */
    tj_broadcast_strides(mask, ndim, shape, strides);
    outs[0].dtype = self->dtype;
    outs[0].ndim = 1;
    outs[0].shape[0] = tj_k_count_nonzero(TJ_BOOL, tj_tensor_ptr(mask), ndim, shape, strides);
    return TJ_OK;
}

tj_status tj_kernel_masked_select(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t, *mask = args[1].u.t;
    tj_tensor *out = outs[0];
    int ndim;
    int64_t shape[TJ_MAX_DIMS], sstrides[TJ_MAX_DIMS], mstrides[TJ_MAX_DIMS];
    masked_shape(MASKED_SELECT, self, mask, &ndim, shape); /* checked by the shape function */
    tj_broadcast_strides(self, ndim, shape, sstrides);
    tj_broadcast_strides(mask, ndim, shape, mstrides);
    int64_t n = tj_k_masked_select(tj_dtype_bytes(self->dtype), tj_tensor_ptr(out), out->numel, tj_tensor_ptr(self),
                                   sstrides, (const bool *)tj_tensor_ptr(mask), mstrides, ndim, shape);
    return n == out->numel ? TJ_OK : tj_stale_count_error(MASKED_SELECT, "the mask's count of true elements", n, out->numel);
}

tj_status tj_meta_masked_scatter(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *mask = args[1].u.t, *source = args[2].u.t;
    if (masked_shape(MASKED_SCATTER, self, mask, &outs[0].ndim, outs[0].shape) != TJ_OK) return tj_last_status();
    if (source->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: expected self and source to have same dtypes but got %s and %s",
                        MASKED_SCATTER, tj_dtype_name(self->dtype), tj_dtype_name(source->dtype));
    outs[0].dtype = self->dtype;
    return TJ_OK;
}

/* The true positions of mask take source's elements in order: source must
 * hold as many (a check of values, made before anything is written). */
tj_status tj_kernel_masked_scatter(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t, *mask = args[1].u.t, *source = args[2].u.t;
    tj_tensor *out = outs[0];
    int64_t sstrides[TJ_MAX_DIMS], mstrides[TJ_MAX_DIMS];
    tj_broadcast_strides(self, out->ndim, out->shape, sstrides);
    tj_broadcast_strides(mask, out->ndim, out->shape, mstrides);
    const bool *m = (const bool *)tj_tensor_ptr(mask);
    int64_t n = tj_k_count_nonzero(TJ_BOOL, m, out->ndim, out->shape, mstrides);
    char s1[160], s2[160];
    if (n > source->numel)
        return tj_error(TJ_ERR_SHAPE, "%s: Number of elements of source < number of ones in mask: source %s has %" PRId64
                        ", mask %s %" PRId64 " true", MASKED_SCATTER,
                        tj_shape_str(source->ndim, source->shape, s1, sizeof s1), source->numel,
                        tj_shape_str(mask->ndim, mask->shape, s2, sizeof s2), n);
    tj_tensor *copy = NULL;
    /* source read in row-major order: a copy when it is laid out otherwise or
     * shares memory with the result (an in-place caller's self) */
    if (!tj_tensor_is_contiguous(source) || tj_overlap_status(out, source) != TJ_OVERLAP_NONE) {
        tj_meta cm = {.dtype = source->dtype, .ndim = source->ndim, .alias = -1};
        memcpy(cm.shape, source->shape, sizeof(int64_t) * (size_t)source->ndim);
        if (!(copy = tj_tensor_new_meta(&cm, false))) return tj_last_status();
        tj_copy_tensor(copy, source);
    }
    tj_k_masked_scatter(tj_dtype_bytes(self->dtype), tj_tensor_ptr(out), tj_tensor_ptr(self), sstrides, m, mstrides,
                        out->ndim, out->shape, tj_tensor_ptr(copy ? copy : source));
    tj_tensor_release(copy);
    return TJ_OK;
}
