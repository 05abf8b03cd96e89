/* aten::kthvalue, median.dim, nanmedian.dim, median and nanmedian as ATen
 * 1.13 (Sorting.cpp): its checks and messages, the selections of
 * kernels/select.h over a row-major copy when self is not contiguous.
 * Primitives: a selection is no composition of the others without a full
 * sort, and kthvalue's position among equal values is quick_select's. */
#include <inttypes.h>
#include <math.h>

#include "contig.h"
#include "iter.h"
#include "kernels/select.h"
#include "op_search_select.h"

#define KTHVALUE "aten::kthvalue"
#define MEDIAN_DIM "aten::median.dim"
#define NANMEDIAN_DIM "aten::nanmedian.dim"
#define MEDIAN "aten::median"
#define NANMEDIAN "aten::nanmedian"

/* ATen's AT_DISPATCH_ALL_TYPES: no bool */
static tj_status check_dtype(const char *op, const char *kernel, const tj_tensor *x)
{
    if (x->dtype != TJ_BOOL) return TJ_OK;
    char sh[160];
    return tj_error(TJ_ERR_DTYPE, "%s: \"%s\" not implemented for 'Bool' (self bool %s)", op, kernel,
                    tj_shape_str(x->ndim, x->shape, sh, sizeof sh));
}

/* ATen's zero_numel_check_dims: the reduced dim must not be empty (other
 * dims may: no rows) */
static tj_status zero_size_check(const char *op, const char *fn, const tj_tensor *x, int d)
{
    if (x->ndim == 0 || x->shape[d] != 0) return TJ_OK;
    char sh[160];
    return tj_error(TJ_ERR_SHAPE, "%s: %s: Expected reduction dim %d to have non-zero size (self %s)", op, fn, d,
                    tj_shape_str(x->ndim, x->shape, sh, sizeof sh));
}

/* values of self's dtype and int64 indices: self's shape without dim d
 * (kept as 1 with keepdim; a 0-dim self gives 0-dim results) */
static void reduced_pair(const tj_tensor *x, int d, bool keepdim, tj_meta *outs)
{
    for (int i = 0; i < 2; i++) {
        outs[i].ndim = 0;
        for (int k = 0; k < x->ndim; k++)
            if (k != d) outs[i].shape[outs[i].ndim++] = x->shape[k];
            else if (keepdim) outs[i].shape[outs[i].ndim++] = 1;
        outs[i].dtype = i ? TJ_INT64 : x->dtype;
    }
}

/* Runs the selection over the rows of self's elements as [outer, n,
 * inner] (row-major) into values / indices (indices NULL: one scratch
 * position, for the full reductions, whose one row is everything). */
static tj_status run_rows(const char *op, tj_k_select_kind kind, const tj_tensor *x, int64_t outer, int64_t n,
                          int64_t inner, int64_t k, tj_tensor *values, tj_tensor *indices)
{
    if (x->numel == 0) return TJ_OK;
    tj_contig c;
    if (tj_contig_get(&c, x) != TJ_OK) return tj_last_status();
    int64_t one_index;
    tj_k_select s = {.kind = kind, .dtype = x->dtype, .in = c.data, .outer = outer, .n = n, .inner = inner, .k = k,
                     .values = tj_tensor_ptr(values),
                     .indices = indices ? (int64_t *)tj_tensor_ptr(indices) : &one_index};
    int nt = tj_threads_for(x->numel * 4);
    size_t nb = tj_k_select_scratch_bytes(&s, nt), got = 0;
    void *scratch = tj_alloc_storage_bytes(nb, &got);
    tj_status st = scratch ? TJ_OK : tj_oom(op, nb);
    if (scratch) {
        tj_k_select_run(&s, scratch, nt);
        tj_free_storage_bytes(scratch, got);
    }
    tj_contig_release(&c);
    return st;
}

/* the selection along dim d */
static tj_status run(const char *op, tj_k_select_kind kind, const tj_tensor *x, int d, int64_t k, tj_tensor *values,
                     tj_tensor *indices)
{
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < x->ndim; i++) {
        if (i < d) outer *= x->shape[i];
        if (i > d) inner *= x->shape[i];
    }
    return run_rows(op, kind, x, outer, x->ndim ? x->shape[d] : 1, inner, k, values, indices);
}

/* kthvalue(self, k, dim=-1, keepdim=False) */
tj_status tj_meta_kthvalue(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    int64_t k = args[1].u.i;
    int d;
    if (tj_wrap_dim(KTHVALUE, args[2].u.i, x->ndim, &d) != TJ_OK) return tj_last_status();
    if (zero_size_check(KTHVALUE, "kthvalue()", x, d) != TJ_OK) return tj_last_status();
    int64_t size = x->ndim ? x->shape[d] : 1;
    if (k < 1 || k > size)
        return tj_error(TJ_ERR_INDEX, "%s: kthvalue(): selected number k out of range for dimension %d (k = %" PRId64
                        ", size %" PRId64 ")", KTHVALUE, d, k, size);
    if (check_dtype(KTHVALUE, "kthvalue_cpu", x) != TJ_OK) return tj_last_status();
    reduced_pair(x, d, args[3].u.b, outs);
    return TJ_OK;
}

tj_status tj_kernel_kthvalue(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[0].u.t;
    int d;
    tj_wrap_dim(KTHVALUE, args[2].u.i, x->ndim, &d);
    return run(KTHVALUE, TJ_K_SELECT_KTH, x, d, args[1].u.i, outs[0], outs[1]);
}

/* median.dim / nanmedian.dim (self, dim, keepdim=False) */
static tj_status meta_median_dim(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    int d;
    if (tj_wrap_dim(op, args[1].u.i, x->ndim, &d) != TJ_OK) return tj_last_status();
    if (zero_size_check(op, "median()", x, d) != TJ_OK) return tj_last_status();
    if (check_dtype(op, "median_out", x) != TJ_OK) return tj_last_status();
    reduced_pair(x, d, args[2].u.b, outs);
    return TJ_OK;
}

static tj_status kernel_median_dim(const char *op, tj_k_select_kind kind, const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[0].u.t;
    int d;
    tj_wrap_dim(op, args[1].u.i, x->ndim, &d);
    return run(op, kind, x, d, 0, outs[0], outs[1]);
}

tj_status tj_meta_median_dim(const tj_value *args, tj_meta *outs) { return meta_median_dim(MEDIAN_DIM, args, outs); }
tj_status tj_meta_nanmedian_dim(const tj_value *args, tj_meta *outs)
{
    return meta_median_dim(NANMEDIAN_DIM, args, outs);
}
tj_status tj_kernel_median_dim(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_median_dim(MEDIAN_DIM, TJ_K_SELECT_MEDIAN, args, outs);
}
tj_status tj_kernel_nanmedian_dim(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_median_dim(NANMEDIAN_DIM, TJ_K_SELECT_NANMEDIAN, args, outs);
}

/* median / nanmedian (self): the lower median of all elements, 0-dim */
static tj_status meta_median(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    if (check_dtype(op, "median_cpu", x) != TJ_OK) return tj_last_status();
    outs[0].ndim = 0;
    outs[0].dtype = x->dtype;
    return TJ_OK;
}

/* self flattened: one row of numel elements; an empty self gives nan
 * converted to self's dtype (ATen 1.13's full({}, nan).to(dtype): int64's
 * INT64_MIN, as x86's conversion of nan) */
static tj_status kernel_median(const char *op, tj_k_select_kind kind, const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[0].u.t;
    if (x->numel == 0) {
        char *p = tj_tensor_ptr(outs[0]);
        if (x->dtype == TJ_FLOAT32) *(float *)p = NAN;
        else if (x->dtype == TJ_FLOAT64) *(double *)p = NAN;
        else *(int64_t *)p = INT64_MIN;
        return TJ_OK;
    }
    return run_rows(op, kind, x, 1, x->numel, 1, 0, outs[0], NULL);
}

tj_status tj_meta_median(const tj_value *args, tj_meta *outs) { return meta_median(MEDIAN, args, outs); }
tj_status tj_meta_nanmedian(const tj_value *args, tj_meta *outs) { return meta_median(NANMEDIAN, args, outs); }
tj_status tj_kernel_median(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_median(MEDIAN, TJ_K_SELECT_MEDIAN, args, outs);
}
tj_status tj_kernel_nanmedian(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_median(NANMEDIAN, TJ_K_SELECT_NANMEDIAN, args, outs);
}
