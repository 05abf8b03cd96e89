/* aten::cummax, aten::cummin and aten::logcumsumexp as ATen 1.13
 * (ReduceOps.cpp): shape functions with its checks, the scans of
 * kernels/cumulative.h over a row-major copy when self is not contiguous.
 * Primitives: no other operator picks a running maximum's position, and a
 * logcumsumexp through cumsum(exp) overflows where ATen's chain does not. */
#include "contig.h"
#include "iter.h"
#include "kernels/cumulative.h"
#include "op_search_select.h"

#define CUMMAX "aten::cummax"
#define CUMMIN "aten::cummin"
#define LOGCUMSUMEXP "aten::logcumsumexp"

/* self's layout as [outer, n, inner] around dim d (0-dim: one element) */
static void split_at(const tj_tensor *x, int d, int64_t *outer, int64_t *n, int64_t *inner)
{
    *outer = 1, *n = x->ndim ? x->shape[d] : 1, *inner = 1;
    for (int k = 0; k < x->ndim; k++) {
        if (k < d) *outer *= x->shape[k];
        if (k > d) *inner *= x->shape[k];
    }
}

/* values of self's dtype and shape, int64 indices (cummax / cummin take
 * every dtype: float32, float64, int64, bool) */
static tj_status meta_select(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    int d;
    if (tj_wrap_dim(op, args[1].u.i, x->ndim, &d) != TJ_OK) return tj_last_status();
    tj_meta_like(&outs[0], x);
    tj_meta_like(&outs[1], x);
    outs[1].dtype = TJ_INT64;
    return TJ_OK;
}

static tj_status kernel_select(const char *op, bool want_max, const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[0].u.t;
    int d;
    tj_wrap_dim(op, args[1].u.i, x->ndim, &d);
    if (x->numel == 0) return TJ_OK;
    tj_contig c;
    if (tj_contig_get(&c, x) != TJ_OK) return tj_last_status();
    int64_t outer, n, inner;
    split_at(x, d, &outer, &n, &inner);
    tj_k_cummax_cummin(x->dtype, want_max, c.data, tj_tensor_ptr(outs[0]), (int64_t *)tj_tensor_ptr(outs[1]), outer, n,
                       inner, tj_threads_for(x->numel));
    tj_contig_release(&c);
    return TJ_OK;
}

tj_status tj_meta_cummax(const tj_value *args, tj_meta *outs) { return meta_select(CUMMAX, args, outs); }
tj_status tj_meta_cummin(const tj_value *args, tj_meta *outs) { return meta_select(CUMMIN, args, outs); }
tj_status tj_kernel_cummax(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_select(CUMMAX, true, args, outs);
}
tj_status tj_kernel_cummin(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_select(CUMMIN, false, args, outs);
}

/* self's float dtype and shape; integer and bool self are not implemented
 * in ATen 1.13 (its kernel dispatches on floating types only) */
tj_status tj_meta_logcumsumexp(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    int d;
    if (tj_wrap_dim(LOGCUMSUMEXP, args[1].u.i, x->ndim, &d) != TJ_OK) return tj_last_status();
    if (!tj_dtype_is_float(x->dtype)) {
        char sh[160];
        return tj_error(TJ_ERR_DTYPE, "%s: \"logcumsumexp_out_cpu\" not implemented for '%s' (self %s %s)",
                        LOGCUMSUMEXP, x->dtype == TJ_INT64 ? "Long" : "Bool", tj_dtype_name(x->dtype),
                        tj_shape_str(x->ndim, x->shape, sh, sizeof sh));
    }
    tj_meta_like(&outs[0], x);
    return TJ_OK;
}

tj_status tj_kernel_logcumsumexp(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[0].u.t;
    int d;
    tj_wrap_dim(LOGCUMSUMEXP, args[1].u.i, x->ndim, &d);
    if (x->numel == 0) return TJ_OK;
    tj_contig c;
    if (tj_contig_get(&c, x) != TJ_OK) return tj_last_status();
    int64_t outer, n, inner;
    split_at(x, d, &outer, &n, &inner);
    tj_k_logcumsumexp(x->dtype, c.data, tj_tensor_ptr(outs[0]), outer, n, inner, tj_threads_for(x->numel));
    tj_contig_release(&c);
    return TJ_OK;
}
