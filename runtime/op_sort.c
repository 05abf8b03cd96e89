/* sort, sort.stable and topk, as ATen 1.13 (Sorting.cpp, TensorCompare.cpp):
 * shape functions with PyTorch's checks and the glue to kernels/sort.c.
 * Every form is stable (equal values keep their input order, in both
 * directions): sort.default allows any order of ties (PyTorch's CPU sort
 * with stable=False uses an unstable sort, so its ties may come out in
 * another order); topk's order among ties is unspecified in PyTorch. A 0-dim
 * tensor sorts as one element. */
#include <inttypes.h>
#include <string.h>

#include "iter.h"
#include "kernels/sort.h"
#include "op_sort.h"
#include "op_view.h"

#define SORT "aten::sort"
#define SORT_STABLE "aten::sort.stable"
#define TOPK "aten::topk"

/* values in self's dtype and int64 indices, self's shape with dim `d`
 * holding k elements (0-dim: no dim). */
static tj_status sorted_meta(const char *op, const tj_tensor *self, int d, int64_t k, tj_meta *outs)
{
    if (self->dtype != TJ_FLOAT32 && self->dtype != TJ_FLOAT64 && self->dtype != TJ_INT64 && self->dtype != TJ_BOOL)
        return tj_error(TJ_ERR_DTYPE, "%s: not implemented for '%s'", op, tj_dtype_name(self->dtype));
    for (int i = 0; i < 2; i++) {
        tj_meta_like(&outs[i], self);
        if (self->ndim) outs[i].shape[d] = k;
    }
    outs[1].dtype = TJ_INT64;
    return TJ_OK;
}

/* Sorts self along dim d into outs (values, indices), keeping k per row. */
static tj_status run_sort(const char *op, const tj_tensor *self, int d, int64_t k, bool descending,
                          tj_tensor *const *outs)
{
    if (self->ndim == 0) { /* one element out even for k = 0, as PyTorch */
        tj_copy_tensor(outs[0], self);
        *(int64_t *)tj_tensor_ptr(outs[1]) = 0;
        return TJ_OK;
    }
    if (self->numel == 0 || k == 0) return TJ_OK;
    tj_k_sort s = {.dtype = self->dtype, .descending = descending, .ndim = self->ndim, .dim = d,
                   .shape = self->shape, .x = tj_tensor_ptr(self), .x_strides = self->strides, .k = k,
                   .values = tj_tensor_ptr(outs[0]), .indices = (int64_t *)tj_tensor_ptr(outs[1])};
    int nt = tj_threads_for(self->numel);
    /* scratch through the storage cache: no heap allocation when a replayed
     * plan sorts again */
    size_t nb = tj_k_sort_scratch_bytes(&s, nt), got = 0;
    void *scratch = tj_alloc_storage_bytes(nb, &got);
    if (!scratch) return tj_oom(op, nb);
    tj_k_sort_run(&s, scratch, nt);
    tj_free_storage_bytes(scratch, got);
    return TJ_OK;
}

/* sort.default: (self, dim, descending); sort.stable: (self, stable, dim,
 * descending). */
static tj_status meta_sort(const char *op, const tj_value *args, int dim_arg, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int d;
    if (tj_wrap_dim(op, args[dim_arg].u.i, self->ndim, &d) != TJ_OK) return tj_last_status();
    return sorted_meta(op, self, d, self->ndim ? self->shape[d] : 1, outs);
}

static tj_status kernel_sort(const char *op, const tj_value *args, int dim_arg, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    int d;
    tj_wrap_dim(op, args[dim_arg].u.i, self->ndim, &d);
    return run_sort(op, self, d, self->ndim ? self->shape[d] : 1, args[dim_arg + 1].u.b, outs);
}

tj_status tj_meta_sort(const tj_value *args, tj_meta *outs) { return meta_sort(SORT, args, 1, outs); }
tj_status tj_kernel_sort(const tj_value *args, tj_tensor *const *outs) { return kernel_sort(SORT, args, 1, outs); }
tj_status tj_meta_sort_stable(const tj_value *args, tj_meta *outs) { return meta_sort(SORT_STABLE, args, 2, outs); }
tj_status tj_kernel_sort_stable(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_sort(SORT_STABLE, args, 2, outs);
}

/* topk(self, k, dim, largest, sorted): the k largest (smallest) along dim,
 * always in sorted order. */
tj_status tj_meta_topk(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t k = args[1].u.i;
    int d;
    if (tj_wrap_dim(TOPK, args[2].u.i, self->ndim, &d) != TJ_OK) return tj_last_status();
    int64_t size = self->ndim ? self->shape[d] : 1;
    if (k < 0 || k > size)
        return tj_error(TJ_ERR_INDEX, "%s: selected index k out of range (k = %" PRId64 ", dim %d has size %" PRId64 ")",
                        TOPK, k, d, size);
    /* ATen's topk kernel has no bool (sort has); a 0-dim self never reaches it */
    if (self->dtype == TJ_BOOL && self->ndim > 0) {
        char sh[96];
        return tj_error(TJ_ERR_DTYPE, "%s: \"topk_cpu\" not implemented for 'Bool' (self bool %s)", TOPK,
                        tj_shape_str(self->ndim, self->shape, sh, sizeof sh));
    }
    return sorted_meta(TOPK, self, d, k, outs);
}

tj_status tj_kernel_topk(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    int d;
    tj_wrap_dim(TOPK, args[2].u.i, self->ndim, &d);
    return run_sort(TOPK, self, d, args[1].u.i, args[3].u.b, outs);
}
