/* The typed API of the embedding-bag operators (include/tjit/ops.h):
 * arguments boxed in schema order and dispatched, so that tracing records
 * them; tj_embedding_bag is F.embedding_bag's argument handling. */
#include "internal.h"

static tj_value optional(tj_tensor *t) { return t ? tj_v_tensor(t) : tj_v_none(); }

/* Records the error; NULL for the caller to return. */
#define fail(status, ...) (tj_error((status), __VA_ARGS__), (tj_tensor *)NULL)

static bool same_shape(const tj_tensor *a, const tj_tensor *b)
{
    int nd = tj_tensor_ndim(a);
    if (nd != tj_tensor_ndim(b)) return false;
    for (int d = 0; d < nd; d++)
        if (tj_tensor_shape(a)[d] != tj_tensor_shape(b)[d]) return false;
    return true;
}

tj_status tj__embedding_bag(tj_tensor *weight, tj_tensor *indices, tj_tensor *offsets, bool scale_grad_by_freq,
                            int64_t mode, tj_tensor *per_sample_weights, bool include_last_offset,
                            int64_t padding_idx, tj_tensor **out, tj_tensor **offset2bag, tj_tensor **bag_size,
                            tj_tensor **max_indices)
{
    tj_tensor **dst[4] = {out, offset2bag, bag_size, max_indices};
    const tj_value args[9] = {tj_v_tensor(weight), tj_v_tensor(indices), tj_v_tensor(offsets),
                              tj_v_bool(scale_grad_by_freq), tj_v_int(mode), tj_v_bool(false),
                              optional(per_sample_weights), tj_v_bool(include_last_offset), tj_v_int(padding_idx)};
    tj_value outs[TJ_MAX_RETURNS];
    for (int i = 0; i < 4; i++)
        if (dst[i]) *dst[i] = NULL;
    tj_status st = tj_dispatch(TJ_OPS(_embedding_bag), args, 9, outs);
    if (st != TJ_OK) return st;
    for (int i = 0; i < 4; i++) {
        if (dst[i]) *dst[i] = outs[i].u.t;
        else tj_scope_drop(outs[i].u.t); /* not wanted */
    }
    return TJ_OK;
}

tj_tensor *tj_embedding_bag(tj_tensor *weight, tj_tensor *input, tj_tensor *offsets, int64_t mode,
                            tj_tensor *per_sample_weights, bool include_last_offset, bool has_padding_idx,
                            int64_t padding_idx)
{
    static const char op[] = "embedding_bag";
    char si[96], so[96];
    if (!weight || !input) {
        tj_error_null("%s: NULL %s", op, weight ? "input" : "weight");
        return NULL;
    }
    const int64_t *ishape = tj_tensor_shape(input);
    int ind = tj_tensor_ndim(input);
    if (ind == 2 && offsets)
        return fail(TJ_ERR_INVALID_ARGUMENT,
                             "%s: input %s is 2-D (a batch of equal bags), so offsets %s has to be NULL", op,
                             tj_shape_str(ind, ishape, si, sizeof si),
                             tj_shape_str(tj_tensor_ndim(offsets), tj_tensor_shape(offsets), so, sizeof so));
    if (ind == 1 && !offsets)
        return fail(TJ_ERR_INVALID_ARGUMENT, "%s: input %s is 1-D, so offsets has to be given", op,
                             tj_shape_str(ind, ishape, si, sizeof si));
    if (ind != 1 && ind != 2)
        return fail(TJ_ERR_SHAPE, "%s: input %s has to be 1-D or 2-D", op,
                             tj_shape_str(ind, ishape, si, sizeof si));
    if (per_sample_weights && !same_shape(per_sample_weights, input))
        return fail(TJ_ERR_SHAPE, "%s: per_sample_weights %s must have the shape of input %s", op,
                    tj_shape_str(tj_tensor_ndim(per_sample_weights), tj_tensor_shape(per_sample_weights), so, sizeof so),
                    tj_shape_str(ind, ishape, si, sizeof si));
    int64_t rows = tj_tensor_ndim(weight) == 2 ? tj_tensor_shape(weight)[0] : 0;
    if (has_padding_idx && (padding_idx >= rows || padding_idx < -rows))
        return fail(TJ_ERR_INDEX, "%s: padding_idx %lld must be within the %lld rows of weight", op,
                             (long long)padding_idx, (long long)rows);
    int64_t pad = !has_padding_idx ? -1 : padding_idx < 0 ? padding_idx + rows : padding_idx, flat[1] = {-1};
    if (ind == 2) {
        /* F.embedding_bag: bags of input.size(1) positions each */
        offsets = tj_arange(tj_v_int(0), tj_v_int(tj_tensor_numel(input)), tj_v_int(ishape[1]), TJ_INT64);
        input = tj_reshape(input, flat, 1);
        if (per_sample_weights) per_sample_weights = tj_reshape(per_sample_weights, flat, 1);
    }
    tj_tensor *out;
    if (tj__embedding_bag(weight, input, offsets, false, mode, per_sample_weights, include_last_offset, pad, &out,
                          NULL, NULL, NULL) != TJ_OK)
        return NULL;
    return out;
}

tj_tensor *tj__embedding_bag_dense_backward(tj_tensor *grad, tj_tensor *indices, tj_tensor *offset2bag,
                                            tj_tensor *bag_size, tj_tensor *maximum_indices, int64_t num_weights,
                                            bool scale_grad_by_freq, int64_t mode, tj_tensor *per_sample_weights,
                                            int64_t padding_idx)
{
    const tj_value args[10] = {tj_v_tensor(grad), tj_v_tensor(indices), tj_v_tensor(offset2bag),
                               tj_v_tensor(bag_size), tj_v_tensor(maximum_indices), tj_v_int(num_weights),
                               tj_v_bool(scale_grad_by_freq), tj_v_int(mode), optional(per_sample_weights),
                               tj_v_int(padding_idx)};
    tj_value out;
    return tj_dispatch(TJ_OPS(_embedding_bag_dense_backward), args, 10, &out) == TJ_OK ? out.u.t : NULL;
}

tj_tensor *tj__embedding_bag_per_sample_weights_backward(tj_tensor *grad, tj_tensor *weight, tj_tensor *indices,
                                                         tj_tensor *offsets, tj_tensor *offset2bag, int64_t mode,
                                                         int64_t padding_idx)
{
    const tj_value a[7] = {tj_v_tensor(grad),    tj_v_tensor(weight),     tj_v_tensor(indices), tj_v_tensor(offsets),
                           tj_v_tensor(offset2bag), tj_v_int(mode), tj_v_int(padding_idx)};
    tj_value out;
    return tj_dispatch(TJ_OPS(_embedding_bag_per_sample_weights_backward), a, 7, &out) == TJ_OK ? out.u.t : NULL;
}
