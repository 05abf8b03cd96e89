/* The typed API of the indexing operators (include/tjit/ops.h, "Indexing"). */
#include "api_call.h"



tj_tensor *tj_gather(tj_tensor *self, int64_t dim, tj_tensor *index)
{
    return CALL(gather, tj_v_tensor(self), tj_v_int(dim), tj_v_tensor(index), tj_v_bool(false));
}

tj_tensor *tj_scatter(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src)
{
    return CALL(scatter_src, tj_v_tensor(self), tj_v_int(dim), tj_v_tensor(index), tj_v_tensor(src));
}
tj_tensor *tj_scatter_value(tj_tensor *self, int64_t dim, tj_tensor *index, tj_value value)
{
    return CALL(scatter_value, tj_v_tensor(self), tj_v_int(dim), tj_v_tensor(index), value);
}
tj_tensor *tj_scatter_reduce(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src, const char *reduce,
                             bool include_self)
{
    return CALL(scatter_reduce_two, tj_v_tensor(self), tj_v_int(dim), tj_v_tensor(index), tj_v_tensor(src),
                tj_v_str(reduce), tj_v_bool(include_self));
}
tj_tensor *tj_scatter_src_reduce(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src, const char *reduce)
{
    return CALL(scatter_reduce, tj_v_tensor(self), tj_v_int(dim), tj_v_tensor(index), tj_v_tensor(src),
                tj_v_str(reduce));
}
tj_tensor *tj_scatter_value_reduce(tj_tensor *self, int64_t dim, tj_tensor *index, tj_value value, const char *reduce)
{
    return CALL(scatter_value_reduce, tj_v_tensor(self), tj_v_int(dim), tj_v_tensor(index), value, tj_v_str(reduce));
}
tj_tensor *tj_index_copy(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *source)
{
    return CALL(index_copy, tj_v_tensor(self), tj_v_int(dim), tj_v_tensor(index), tj_v_tensor(source));
}
tj_tensor *tj_index_fill(tj_tensor *self, int64_t dim, tj_tensor *index, tj_value value)
{
    return CALL(index_fill_int_Scalar, tj_v_tensor(self), tj_v_int(dim), tj_v_tensor(index), value);
}
tj_tensor *tj_index_fill_tensor(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *value)
{
    return CALL(index_fill_int_Tensor, tj_v_tensor(self), tj_v_int(dim), tj_v_tensor(index), tj_v_tensor(value));
}
tj_tensor *tj_scatter_add(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src)
{
    return CALL(scatter_add, tj_v_tensor(self), tj_v_int(dim), tj_v_tensor(index), tj_v_tensor(src));
}

tj_tensor *tj_index_select(tj_tensor *self, int64_t dim, tj_tensor *index)
{
    return CALL(index_select, tj_v_tensor(self), tj_v_int(dim), tj_v_tensor(index));
}

tj_tensor *tj_index_add(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *source, tj_value alpha)
{
    return CALL(index_add, tj_v_tensor(self), tj_v_int(dim), tj_v_tensor(index), tj_v_tensor(source), alpha);
}

tj_tensor *tj_index(tj_tensor *self, tj_tensor *const *indices, int n)
{
    return CALL(index_Tensor, tj_v_tensor(self), tj_v_tensors(indices, n));
}

tj_tensor *tj_index_put(tj_tensor *self, tj_tensor *const *indices, int n, tj_tensor *values, bool accumulate)
{
    return CALL(index_put, tj_v_tensor(self), tj_v_tensors(indices, n), tj_v_tensor(values), tj_v_bool(accumulate));
}

tj_tensor *tj_nonzero(tj_tensor *self) { return CALL(nonzero, tj_v_tensor(self)); }

tj_status tj_where_condition(tj_tensor *condition, tj_tensor **outs, int max_outs, int *n_outs)
{
    if (!outs || !n_outs) return tj_error(TJ_ERR_INVALID_ARGUMENT, "aten::where: NULL outs or n_outs");
    *n_outs = 0;
    if (!condition) return tj_error_null("aten::where: argument 0 'condition' expects Tensor, got a NULL tensor");
    /* ATen's nonzero_numpy: a 0-dim condition counts as one element */
    tj_tensor *nz = tj_nonzero(condition->ndim ? condition : tj_unsqueeze(condition, 0));
    return nz ? tj_unbind(nz, 1, outs, max_outs, n_outs) : tj_last_status();
}

tj_tensor *tj_masked_select(tj_tensor *self, tj_tensor *mask)
{
    return CALL(masked_select, tj_v_tensor(self), tj_v_tensor(mask));
}

tj_tensor *tj_masked_scatter(tj_tensor *self, tj_tensor *mask, tj_tensor *source)
{
    return CALL(masked_scatter, tj_v_tensor(self), tj_v_tensor(mask), tj_v_tensor(source));
}

tj_tensor *tj_unfold(tj_tensor *self, int64_t dimension, int64_t size, int64_t step)
{
    return CALL(unfold, tj_v_tensor(self), tj_v_int(dimension), tj_v_int(size), tj_v_int(step));
}
