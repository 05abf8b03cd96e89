/* embedding and embedding_dense_backward: argument checks and the glue to
 * kernels/embedding. Indices are validated before anything is written: an
 * index out of range is an error naming the operator and the index. */
#include <string.h>

#include "contig.h"
#include "kernels/embedding.h"
#include "op_backward.h"
#include "op_nn.h"

static tj_status check_indices(const char *op, const tj_tensor *indices)
{
    if (indices->dtype != TJ_INT64)
        return tj_error(TJ_ERR_DTYPE, "%s: indices must be int64, got %s", op, tj_dtype_name(indices->dtype));
    return TJ_OK;
}

/* Fails with the first invalid index of idx (skipping *skip when given). */
static tj_status validate(const char *op, const int64_t *idx, int64_t n, int64_t num, const int64_t *skip)
{
    int64_t bad = tj_k_embedding_find_invalid(idx, n, num, skip);
    if (bad < 0) return TJ_OK;
    return tj_error(TJ_ERR_INDEX, "%s: index %lld (at position %lld) is out of range for %lld rows", op,
                    (long long)idx[bad], (long long)bad, (long long)num);
}

tj_status tj_meta_embedding(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::embedding";
    const tj_tensor *w = args[0].u.t, *indices = args[1].u.t;
    int64_t pad = args[2].u.i;
    char s[96];
    tj_status st = check_indices(op, indices);
    if (st != TJ_OK) return st;
    if (w->ndim != 2)
        return tj_error(TJ_ERR_SHAPE, "%s: weight %s must be 2-D", op, tj_shape_str(w->ndim, w->shape, s, sizeof s));
    if (pad < -1 || pad >= w->shape[0])
        return tj_error(TJ_ERR_INDEX, "%s: padding_idx %lld is out of range for %lld rows (-1 for none)", op,
                        (long long)pad, (long long)w->shape[0]);
    if (args[4].u.b) return tj_error(TJ_ERR_UNSUPPORTED, "%s: sparse gradients are not supported", op);
    if (indices->ndim >= TJ_MAX_DIMS)
        return tj_error(TJ_ERR_SHAPE, "%s: indices %s: the result would exceed %d dims", op,
                        tj_shape_str(indices->ndim, indices->shape, s, sizeof s), TJ_MAX_DIMS);
    outs[0].dtype = w->dtype;
    outs[0].ndim = indices->ndim + 1;
    memcpy(outs[0].shape, indices->shape, sizeof(int64_t) * (size_t)indices->ndim);
    outs[0].shape[indices->ndim] = w->shape[1];
    return TJ_OK;
}

tj_status tj_kernel_embedding(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *w = args[0].u.t, *indices = args[1].u.t;
    if (outs[0]->numel == 0 && indices->numel == 0) return TJ_OK;
    tj_contig ci;
    tj_status st = tj_contig_get(&ci, indices);
    if (st == TJ_OK) st = validate("aten::embedding", (const int64_t *)(const void *)ci.data, indices->numel, w->shape[0], NULL);
    if (st == TJ_OK)
        tj_k_embedding(tj_dtype_size(w->dtype), (const int64_t *)(const void *)ci.data, indices->numel, tj_tensor_ptr(w),
                       w->strides[0], w->strides[1], w->shape[1], tj_tensor_ptr(outs[0]), tj_get_num_threads());
    tj_contig_release(&ci);
    return st;
}

/* ---- (grad_output, indices, num_weights, padding_idx, scale_grad_by_freq) ---- */

tj_status tj_meta_embedding_dense_backward(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::embedding_dense_backward";
    const tj_tensor *g = args[0].u.t, *indices = args[1].u.t;
    int64_t num = args[2].u.i;
    char sg[96], si[96];
    tj_status st = check_indices(op, indices);
    if (st != TJ_OK) return st;
    if (!tj_dtype_is_float(g->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: grad_output must be float32 or float64, got %s", op, tj_dtype_name(g->dtype));
    if (num < 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: num_weights %lld is negative", op, (long long)num);
    int64_t dim = g->ndim ? g->shape[g->ndim - 1] : 0;
    if (g->ndim == 0 || indices->numel * dim != g->numel)
        return tj_error(TJ_ERR_SHAPE, "%s: grad_output %s does not hold one row per index of indices %s", op,
                        tj_shape_str(g->ndim, g->shape, sg, sizeof sg),
                        tj_shape_str(indices->ndim, indices->shape, si, sizeof si));
    int64_t shape[2] = {num, dim}, count;
    if ((st = tj_checked_numel(2, shape, &count, op)) != TJ_OK) return st;
    tj_meta_set(&outs[0], g->dtype, 2, shape);
    return TJ_OK;
}

tj_status tj_kernel_embedding_dense_backward(const tj_value *args, tj_tensor *const *outs)
{
    const char *op = "aten::embedding_dense_backward";
    const tj_tensor *g = args[0].u.t, *indices = args[1].u.t;
    int64_t num = args[2].u.i, pad = args[3].u.i, n = indices->numel, dim = outs[0]->shape[1];
    bool scale = args[4].u.b;
    tj_contig cg = {0}, ci;
    size_t want = sizeof(int64_t) * (size_t)(num > 0 ? num : 1), count_bytes = 0;
    int64_t *counts = NULL;
    tj_status st = tj_contig_get(&ci, indices);
    if (st == TJ_OK) st = validate(op, (const int64_t *)(const void *)ci.data, n, num, &pad);
    if (st == TJ_OK) st = tj_contig_get(&cg, g);
    if (st == TJ_OK && scale && !(counts = tj_alloc_storage_bytes(want, &count_bytes))) st = tj_oom(op, want);
    if (st == TJ_OK)
        tj_k_embedding_backward(g->dtype, (const int64_t *)(const void *)ci.data, n, cg.data, dim, num, pad, scale,
                                counts, tj_tensor_ptr(outs[0]), tj_get_num_threads());
    tj_free_storage_bytes(counts, count_bytes);
    tj_contig_release(&cg);
    tj_contig_release(&ci);
    return st;
}
