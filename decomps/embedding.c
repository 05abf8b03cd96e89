/* Decompositions of embedding and its dense gradient over gather and
 * scatter_add (indices flattened to M rows of D values):
 *   embedding: gather(weight, 0, index expanded to [M, D]), viewed as
 *     indices.shape + [D];
 *   embedding_dense_backward: scatter_add of the gradient rows into zeros
 *     [num_weights, D] in index order (the kernel's order); rows whose index
 *     is padding_idx add 0; with scale_grad_by_freq each row is first
 *     multiplied by 1 / (count of its index), the count a scatter_add of
 *     ones.
 * Out-of-range indices fail in gather / scatter_add (TJ_ERR_INDEX), as in
 * the kernels. */
#include "util.h"

/* indices [..] as [M, D] (stride 0 along D). */
static tj_tensor *row_index(tj_tensor *indices, int64_t D)
{
    int64_t flat[2] = {-1, 1};
    tj_tensor *col = tj_reshape(indices, flat, 2);
    int64_t shape[2] = {col ? tj_tensor_shape(col)[0] : 0, D};
    return tj_expand(col, shape, 2);
}

static tj_status embedding(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_dc_check(TJ_OPS(embedding), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *w = args[0].u.t;
    tj_tensor *rows = tj_gather(w, 0, row_index(args[1].u.t, tj_tensor_shape(w)[1]));
    return tj_dc_done(tj_view(rows, m[0].shape, m[0].ndim), outs);
}

static tj_status embedding_dense_backward(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_dc_check(TJ_OPS(embedding_dense_backward), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *g = args[0].u.t, *indices = args[1].u.t;
    int64_t num = args[2].u.i, pad = args[3].u.i, D = m[0].shape[1], flat[1] = {-1}, rows[2] = {-1, D};
    tj_dtype dt = m[0].dtype;
    tj_tensor *idx = tj_reshape(indices, flat, 1), *g2 = tj_reshape(tj_dc_to(g, dt), rows, 2);
    tj_tensor *is_pad = tj_eq(idx, tj_scalar_tensor(tj_v_int(pad), TJ_INT64));
    if (args[4].u.b) {
        int64_t nshape[1] = {num};
        tj_tensor *one = tj_where(is_pad, tj_scalar_tensor(tj_v_int(0), TJ_INT64), tj_scalar_tensor(tj_v_int(1), TJ_INT64));
        tj_tensor *counts = tj_scatter_add(tj_full(nshape, 1, tj_v_int(0), TJ_INT64), 0, idx,
                                           tj_expand(one, tj_tensor_shape(idx), 1));
        tj_tensor *scale = tj_div(tj_scalar_tensor(tj_v_float(1.0), TJ_FLOAT64), tj_gather(counts, 0, idx));
        g2 = tj_mul(g2, tj_unsqueeze(tj_dc_to(scale, dt), 1));
    }
    if (pad >= 0) g2 = tj_where(tj_unsqueeze(is_pad, 1), tj_scalar_tensor(tj_v_int(0), (int)dt), g2);
    tj_tensor *zeros = tj_full(m[0].shape, 2, tj_v_int(0), (int)dt);
    return tj_dc_done(tj_scatter_add(zeros, 0, row_index(idx, D), g2), outs);
}

void tj_register_embedding_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(embedding), embedding, "embedding");
    tj_op_set_decomposition(TJ_OPS(embedding_dense_backward), embedding_dense_backward, "embedding_dense_backward");
}
