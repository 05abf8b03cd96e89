/* The typed API of op_search_select.def's operators (include/tjit/ops.h:
 * searches and running selections). */
#include "api_call.h"

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
    return CALLN(cummax, values, indices, NULL, T(self), tj_v_int(dim));
}
tj_status tj_cummin(tj_tensor *self, int64_t dim, tj_tensor **values, tj_tensor **indices)
{
    return CALLN(cummin, values, indices, NULL, T(self), tj_v_int(dim));
}
tj_tensor *tj_logcumsumexp(tj_tensor *self, int64_t dim) { return CALL(logcumsumexp, T(self), tj_v_int(dim)); }
tj_status tj_kthvalue(tj_tensor *self, int64_t k, int64_t dim, bool keepdim, tj_tensor **values, tj_tensor **indices)
{
    return CALLN(kthvalue, values, indices, NULL, T(self), tj_v_int(k), tj_v_int(dim), B(keepdim));
}
tj_status tj_median_dim(tj_tensor *self, int64_t dim, bool keepdim, tj_tensor **values, tj_tensor **indices)
{
    return CALLN(median_dim, values, indices, NULL, T(self), tj_v_int(dim), B(keepdim));
}
tj_status tj_nanmedian_dim(tj_tensor *self, int64_t dim, bool keepdim, tj_tensor **values, tj_tensor **indices)
{
    return CALLN(nanmedian_dim, values, indices, NULL, T(self), tj_v_int(dim), B(keepdim));
}
tj_tensor *tj_median(tj_tensor *self) { return CALL(median, T(self)); }
tj_tensor *tj_nanmedian(tj_tensor *self) { return CALL(nanmedian, T(self)); }
tj_status tj_std_mean(tj_tensor *self, const int64_t *dim, int ndim, int64_t correction, bool keepdim,
                      tj_tensor **std, tj_tensor **mean)
{
    return CALLN(std_mean_correction, std, mean, NULL, T(self), tj_v_ints(dim, ndim), correction < 0 ? tj_v_none() :
                 tj_v_int(correction), B(keepdim));
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
