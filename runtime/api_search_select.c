/* The typed API of op_search_select.def's operators (include/tjit/ops.h:
 * searches and running selections). */
#include "internal.h"

static tj_tensor *call1(const tj_op *op, const tj_value *args)
{
    tj_value outs[TJ_MAX_RETURNS];
    if (tj_dispatch(op, args, op->nargs, outs) != TJ_OK) return NULL;
    return outs[0].u.t;
}

/* Dispatches a (values, indices) operator; results not wanted are released. */
static tj_status call2(const tj_op *op, const tj_value *args, tj_tensor **r0, tj_tensor **r1)
{
    tj_tensor **dst[2] = {r0, r1};
    for (int i = 0; i < 2; i++)
        if (dst[i]) *dst[i] = NULL;
    tj_value outs[TJ_MAX_RETURNS];
    tj_status st = tj_dispatch(op, args, op->nargs, outs);
    if (st != TJ_OK) return st;
    for (int i = 0; i < 2; i++) {
        if (dst[i]) *dst[i] = outs[i].u.t;
        else tj_scope_drop(outs[i].u.t);
    }
    return TJ_OK;
}

#define CALL(ident, ...) call1(TJ_OPS(ident), (const tj_value[]){__VA_ARGS__})
#define T(x) tj_v_tensor(x)
#define B(x) tj_v_bool(x)

tj_tensor *tj_searchsorted(tj_tensor *sorted_sequence, tj_tensor *self, bool out_int32, bool right, const char *side,
                           tj_tensor *sorter)
{
    return CALL(searchsorted_Tensor, T(sorted_sequence), T(self), B(out_int32), B(right), tj_v_str(side), T(sorter));
}
tj_tensor *tj_searchsorted_scalar(tj_tensor *sorted_sequence, tj_value self, bool out_int32, bool right,
                                  const char *side, tj_tensor *sorter)
{
    return CALL(searchsorted_Scalar, T(sorted_sequence), self, B(out_int32), B(right), tj_v_str(side), T(sorter));
}
tj_tensor *tj_bucketize(tj_tensor *self, tj_tensor *boundaries, bool out_int32, bool right)
{
    return CALL(bucketize_Tensor, T(self), T(boundaries), B(out_int32), B(right));
}
tj_tensor *tj_bucketize_scalar(tj_value self, tj_tensor *boundaries, bool out_int32, bool right)
{
    return CALL(bucketize_Scalar, self, T(boundaries), B(out_int32), B(right));
}
tj_status tj_cummax(tj_tensor *self, int64_t dim, tj_tensor **values, tj_tensor **indices)
{
    return call2(TJ_OPS(cummax), (const tj_value[]){T(self), tj_v_int(dim)}, values, indices);
}
tj_status tj_cummin(tj_tensor *self, int64_t dim, tj_tensor **values, tj_tensor **indices)
{
    return call2(TJ_OPS(cummin), (const tj_value[]){T(self), tj_v_int(dim)}, values, indices);
}
tj_tensor *tj_logcumsumexp(tj_tensor *self, int64_t dim) { return CALL(logcumsumexp, T(self), tj_v_int(dim)); }
tj_status tj_kthvalue(tj_tensor *self, int64_t k, int64_t dim, bool keepdim, tj_tensor **values, tj_tensor **indices)
{
    return call2(TJ_OPS(kthvalue), (const tj_value[]){T(self), tj_v_int(k), tj_v_int(dim), B(keepdim)}, values,
                 indices);
}
tj_status tj_median_dim(tj_tensor *self, int64_t dim, bool keepdim, tj_tensor **values, tj_tensor **indices)
{
    return call2(TJ_OPS(median_dim), (const tj_value[]){T(self), tj_v_int(dim), B(keepdim)}, values, indices);
}
tj_status tj_nanmedian_dim(tj_tensor *self, int64_t dim, bool keepdim, tj_tensor **values, tj_tensor **indices)
{
    return call2(TJ_OPS(nanmedian_dim), (const tj_value[]){T(self), tj_v_int(dim), B(keepdim)}, values, indices);
}
tj_tensor *tj_median(tj_tensor *self) { return CALL(median, T(self)); }
tj_tensor *tj_nanmedian(tj_tensor *self) { return CALL(nanmedian, T(self)); }
tj_status tj_std_mean(tj_tensor *self, const int64_t *dim, int ndim, int64_t correction, bool keepdim,
                      tj_tensor **std, tj_tensor **mean)
{
    return call2(TJ_OPS(std_mean_correction),
                 (const tj_value[]){T(self), tj_v_ints(dim, ndim), correction < 0 ? tj_v_none() : tj_v_int(correction),
                                    B(keepdim)},
                 std, mean);
}
tj_tensor *tj_count_nonzero_dim_intlist(tj_tensor *self, const int64_t *dim, int ndim)
{
    return CALL(count_nonzero_dim_IntList, T(self), tj_v_ints(dim, ndim));
}
tj_tensor *tj_count_nonzero_opt_dim(tj_tensor *self, bool has_dim, int64_t dim)
{
    return CALL(count_nonzero, T(self), has_dim ? tj_v_int(dim) : tj_v_none());
}
tj_tensor *tj_hardshrink(tj_tensor *self, tj_value lambd) { return CALL(hardshrink, T(self), lambd); }
tj_tensor *tj_softshrink(tj_tensor *self, tj_value lambd) { return CALL(softshrink, T(self), lambd); }
tj_tensor *tj_hardshrink_backward(tj_tensor *grad_out, tj_tensor *self, tj_value lambd)
{
    return CALL(hardshrink_backward, T(grad_out), T(self), lambd);
}
tj_tensor *tj_softshrink_backward(tj_tensor *grad_output, tj_tensor *self, tj_value lambd)
{
    return CALL(softshrink_backward, T(grad_output), T(self), lambd);
}
