/* _embedding_bag, _embedding_bag_forward_only and their gradients
 * _embedding_bag_dense_backward and _embedding_bag_per_sample_weights_backward
 * (PyTorch 1.13's CPU operators): argument checks, the four outputs' shapes,
 * and the glue to kernels/embedding_bag. Offsets and indices are validated
 * before anything is written; a bad value is an error naming the operator
 * and the value. */
#include <string.h>

#include "contig.h"
#include "kernels/embedding.h"
#include "kernels/embedding_bag.h"
#include "op_backward.h"
#include "op_nn.h"

static tj_status check_int64(const char *op, const char *what, const tj_tensor *t)
{
    char s[96];
    if (t->dtype != TJ_INT64)
        return tj_error(TJ_ERR_DTYPE, "%s: %s must be int64 (int32 is not supported), got %s", op, what,
                        tj_dtype_name(t->dtype));
    if (t->ndim != 1)
        return tj_error(TJ_ERR_SHAPE, "%s: %s %s must be 1-D", op, what, tj_shape_str(t->ndim, t->shape, s, sizeof s));
    return TJ_OK;
}

static tj_status check_float(const char *op, const char *what, const tj_tensor *t)
{
    if (!tj_dtype_is_float(t->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: %s must be float32 or float64, got %s", op, what, tj_dtype_name(t->dtype));
    return TJ_OK;
}

static tj_status check_mode(const char *op, int64_t mode)
{
    if (mode < TJ_EMBEDDING_BAG_SUM || mode > TJ_EMBEDDING_BAG_MAX)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: mode %lld is not 0 (sum), 1 (mean) or 2 (max)", op,
                        (long long)mode);
    return TJ_OK;
}

static tj_status check_padding(const char *op, int64_t pad, int64_t num)
{
    if (pad < -1 || pad >= num)
        return tj_error(TJ_ERR_INDEX, "%s: padding_idx %lld is out of range for %lld rows (-1 for none)", op,
                        (long long)pad, (long long)num);
    return TJ_OK;
}

/* per_sample_weights (None or a tensor): sum only, one weight per index, of
 * the weight's dtype. */
static tj_status check_psw(const char *op, const tj_value *psw, int64_t mode, const tj_tensor *indices,
                           tj_dtype dtype)
{
    char s[96], si[96];
    if (psw->kind != TJ_V_TENSOR) return TJ_OK;
    const tj_tensor *p = psw->u.t;
    if (mode != TJ_EMBEDDING_BAG_SUM)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: per_sample_weights only supported with mode='sum' (mode %lld)",
                        op, (long long)mode);
    if (p->dtype != dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: per_sample_weights is %s, weight is %s", op, tj_dtype_name(p->dtype),
                        tj_dtype_name(dtype));
    if (p->ndim != 1 || p->numel != indices->numel)
        return tj_error(TJ_ERR_SHAPE, "%s: per_sample_weights %s must be 1-D with one weight per index of indices %s",
                        op, tj_shape_str(p->ndim, p->shape, s, sizeof s),
                        tj_shape_str(indices->ndim, indices->shape, si, sizeof si));
    return TJ_OK;
}

static void meta_1d(tj_meta *m, int64_t n)
{
    m->dtype = TJ_INT64;
    m->ndim = 1;
    m->shape[0] = n;
}

/* The shapes of _embedding_bag's outputs (forward_only: bag_size and
 * max_indices are [offsets] in sum mode, as ATen's forward-only path). */
static tj_status meta_forward(const char *op, bool forward_only, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *w = args[0].u.t, *indices = args[1].u.t, *offsets = args[2].u.t;
    int64_t mode = args[4].u.i, pad = args[8].u.i;
    bool include_last = args[7].u.b;
    char s[96];
    tj_status st;
    if ((st = check_float(op, "weight", w)) != TJ_OK) return st;
    if (w->ndim != 2)
        return tj_error(TJ_ERR_SHAPE, "%s: weight %s must be 2-D", op, tj_shape_str(w->ndim, w->shape, s, sizeof s));
    if ((st = check_int64(op, "indices", indices)) != TJ_OK || (st = check_int64(op, "offsets", offsets)) != TJ_OK ||
        (st = check_mode(op, mode)) != TJ_OK || (st = check_padding(op, pad, w->shape[0])) != TJ_OK ||
        (st = check_psw(op, &args[6], mode, indices, w->dtype)) != TJ_OK)
        return st;
    if (args[5].u.b) return tj_error(TJ_ERR_UNSUPPORTED, "%s: sparse gradients are not supported", op);
    if (include_last && offsets->shape[0] < 1)
        return tj_error(TJ_ERR_SHAPE, "%s: include_last_offset needs at least 1 offset, got 0", op);
    int64_t bags = offsets->shape[0] - (include_last ? 1 : 0), n = indices->shape[0], dim = w->shape[1];
    /* ATen's float32 sum fills offset2bag only for padding_idx, where its
     * fast path does not run; the backward rebuilds it from the offsets */
    bool no_offset2bag = mode == TJ_EMBEDDING_BAG_SUM && w->dtype == TJ_FLOAT32 && pad < 0;
    int64_t sizes = forward_only && mode == TJ_EMBEDDING_BAG_SUM ? offsets->shape[0] : bags;
    outs[0].dtype = w->dtype;
    outs[0].ndim = 2;
    outs[0].shape[0] = bags;
    outs[0].shape[1] = dim;
    meta_1d(&outs[1], no_offset2bag ? 0 : n);
    meta_1d(&outs[2], sizes);
    meta_1d(&outs[3], sizes);
    if (mode == TJ_EMBEDDING_BAG_MAX) {
        outs[3].ndim = 2;
        outs[3].shape[1] = dim;
    }
    return TJ_OK;
}

/* Contiguous int64 indices and offsets of a bag layout. */
typedef struct bag_operands {
    tj_contig idx, offsets;
    tj_k_bags bags;
} bag_operands;

static tj_status bags_get(bag_operands *o, const tj_tensor *indices, const tj_tensor *offsets, int64_t nbags,
                          int64_t pad)
{
    memset(o, 0, sizeof *o);
    tj_status st = tj_contig_get(&o->idx, indices);
    if (st == TJ_OK) st = tj_contig_get(&o->offsets, offsets);
    o->bags = (tj_k_bags){(const int64_t *)(const void *)o->idx.data, indices->numel,
                          (const int64_t *)(const void *)o->offsets.data, offsets->numel, nbags, pad};
    return st;
}

static void bags_release(bag_operands *o)
{
    tj_contig_release(&o->idx);
    tj_contig_release(&o->offsets);
}

/* Every index within the weight's num rows. */
static tj_status check_rows(const char *op, const tj_k_bags *b, int64_t num)
{
    int64_t bad = tj_k_embedding_find_invalid(b->idx, b->n, num, NULL);
    if (bad >= 0)
        return tj_error(TJ_ERR_INDEX, "%s: index %lld (at position %lld) is out of range for %lld rows", op,
                        (long long)b->idx[bad], (long long)bad, (long long)num);
    return TJ_OK;
}

/* ATen's checks of the offsets (the first is 0, the last at most the number
 * of indices; tjit also refuses decreasing ones, which ATen reads past) and
 * of the indices (within the weight's rows). */
static tj_status bags_validate(const char *op, const tj_k_bags *b, int64_t num)
{
    const int64_t *off = b->offsets;
    if (b->noffsets > 0 && off[0] != 0)
        return tj_error(TJ_ERR_INDEX, "%s: offsets[0] is %lld, the first bag has to start at position 0", op,
                        (long long)off[0]);
    for (int64_t j = 1; j < b->noffsets; j++)
        if (off[j] < off[j - 1])
            return tj_error(TJ_ERR_INDEX, "%s: offsets decrease at position %lld (%lld after %lld)", op, (long long)j,
                            (long long)off[j], (long long)off[j - 1]);
    if (b->noffsets > 0 && off[b->noffsets - 1] > b->n)
        return tj_error(TJ_ERR_INDEX, "%s: offsets[-1] is %lld, past the end of the %lld indices", op,
                        (long long)off[b->noffsets - 1], (long long)b->n);
    return check_rows(op, b, num);
}

static int64_t *data_i64(const tj_tensor *t) { return (int64_t *)(void *)tj_tensor_ptr(t); }

static tj_status kernel_forward(const char *op, const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *w = args[0].u.t;
    int64_t mode = args[4].u.i, pad = args[8].u.i, nbags = outs[0]->shape[0];
    const tj_tensor *psw = args[6].kind == TJ_V_TENSOR ? args[6].u.t : NULL;
    bag_operands o;
    tj_contig cp = {0};
    tj_status st = bags_get(&o, args[1].u.t, args[2].u.t, nbags, pad);
    if (st == TJ_OK) st = bags_validate(op, &o.bags, w->shape[0]);
    if (st == TJ_OK && psw) st = tj_contig_get(&cp, psw);
    if (st == TJ_OK) {
        bool counted = mode != TJ_EMBEDDING_BAG_SUM;
        if (outs[1]->numel) tj_k_embedding_bag_offset2bag(&o.bags, data_i64(outs[1]));
        for (int64_t b = 0; !counted && b < outs[2]->numel; b++) data_i64(outs[2])[b] = 0;
        tj_k_embedding_bag(w->dtype, &o.bags, (int)mode, tj_tensor_ptr(w), w->strides[0], w->strides[1],
                           w->shape[1], psw ? cp.data : NULL, tj_tensor_ptr(outs[0]), counted ? data_i64(outs[2]) : NULL,
                           data_i64(outs[3]), tj_get_num_threads());
        /* sum and mean: max_indices is a copy of bag_size, as in ATen */
        for (int64_t b = 0; mode != TJ_EMBEDDING_BAG_MAX && b < outs[2]->numel; b++)
            data_i64(outs[3])[b] = data_i64(outs[2])[b];
    }
    tj_contig_release(&cp);
    bags_release(&o);
    return st;
}

tj_status tj_meta__embedding_bag(const tj_value *args, tj_meta *outs)
{
    return meta_forward("aten::_embedding_bag", false, args, outs);
}

tj_status tj_kernel__embedding_bag(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_forward("aten::_embedding_bag", args, outs);
}

tj_status tj_meta__embedding_bag_forward_only(const tj_value *args, tj_meta *outs)
{
    return meta_forward("aten::_embedding_bag_forward_only", true, args, outs);
}

tj_status tj_kernel__embedding_bag_forward_only(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_forward("aten::_embedding_bag_forward_only", args, outs);
}

/* ---- (grad, indices, offset2bag, bag_size, maximum_indices, num_weights,
 *       scale_grad_by_freq, mode, per_sample_weights, padding_idx) ---- */

tj_status tj_meta__embedding_bag_dense_backward(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::_embedding_bag_dense_backward";
    const tj_tensor *g = args[0].u.t, *indices = args[1].u.t, *o2b = args[2].u.t, *bag_size = args[3].u.t,
                    *mi = args[4].u.t;
    int64_t num = args[5].u.i, mode = args[7].u.i, pad = args[9].u.i;
    char s[96], s2[96];
    tj_status st;
    if ((st = check_float(op, "grad", g)) != TJ_OK || (st = check_int64(op, "indices", indices)) != TJ_OK ||
        (st = check_int64(op, "offset2bag", o2b)) != TJ_OK || (st = check_int64(op, "bag_size", bag_size)) != TJ_OK ||
        (st = check_mode(op, mode)) != TJ_OK || (st = check_psw(op, &args[8], mode, indices, g->dtype)) != TJ_OK)
        return st;
    if (num < 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: num_weights %lld is negative", op, (long long)num);
    if ((st = check_padding(op, pad, num)) != TJ_OK) return st;
    /* sum mode does not read bag_size (forward_only's is [offsets]) */
    if (g->ndim != 2 || (mode != TJ_EMBEDDING_BAG_SUM && bag_size->shape[0] != g->shape[0]))
        return tj_error(TJ_ERR_SHAPE, "%s: grad %s must be 2-D with one row per bag of bag_size %s", op,
                        tj_shape_str(g->ndim, g->shape, s, sizeof s),
                        tj_shape_str(bag_size->ndim, bag_size->shape, s2, sizeof s2));
    int64_t bags = g->shape[0], dim = g->shape[1];
    if (mode == TJ_EMBEDDING_BAG_MAX) {
        if (mi->dtype != TJ_INT64 || mi->ndim != 2 || mi->shape[0] != bags || mi->shape[1] != dim)
            return tj_error(TJ_ERR_SHAPE, "%s: maximum_indices %s %s must be int64 of grad's shape %s", op,
                            tj_dtype_name(mi->dtype), tj_shape_str(mi->ndim, mi->shape, s, sizeof s),
                            tj_shape_str(g->ndim, g->shape, s2, sizeof s2));
    } else if (o2b->numel != indices->numel) {
        return tj_error(TJ_ERR_SHAPE, "%s: offset2bag %s must hold the bag of each of the %lld indices", op,
                        tj_shape_str(o2b->ndim, o2b->shape, s, sizeof s), (long long)indices->numel);
    }
    int64_t shape[2] = {num, dim}, count;
    if ((st = tj_checked_numel(2, shape, &count, op)) != TJ_OK) return st;
    tj_meta_set(&outs[0], g->dtype, 2, shape);
    return TJ_OK;
}

static tj_status max_backward(const char *op, const tj_value *args, tj_tensor *out)
{
    const tj_tensor *g = args[0].u.t, *bag_size = args[3].u.t, *mi = args[4].u.t;
    int64_t num = args[5].u.i, bags = g->shape[0], dim = g->shape[1];
    tj_contig cg = {0}, cb = {0}, cm = {0};
    tj_status st = tj_contig_get(&cg, g);
    if (st == TJ_OK) st = tj_contig_get(&cb, bag_size);
    if (st == TJ_OK) st = tj_contig_get(&cm, mi);
    const int64_t *sizes = (const int64_t *)(const void *)cb.data, *rows = (const int64_t *)(const void *)cm.data;
    for (int64_t o = 0; st == TJ_OK && o < bags; o++) {
        if (sizes[o] <= 0) continue;
        int64_t bad = tj_k_embedding_find_invalid(rows + o * dim, dim, num, NULL);
        if (bad >= 0)
            st = tj_error(TJ_ERR_INDEX, "%s: maximum_indices[%lld, %lld] = %lld is out of range for %lld rows", op,
                          (long long)o, (long long)bad, (long long)rows[o * dim + bad], (long long)num);
    }
    if (st == TJ_OK) tj_k_embedding_bag_backward_max(g->dtype, bags, sizes, rows, cg.data, dim, num, tj_tensor_ptr(out));
    tj_contig_release(&cm);
    tj_contig_release(&cb);
    tj_contig_release(&cg);
    return st;
}

tj_status tj_kernel__embedding_bag_dense_backward(const tj_value *args, tj_tensor *const *outs)
{
    const char *op = "aten::_embedding_bag_dense_backward";
    const tj_tensor *g = args[0].u.t, *psw = args[8].kind == TJ_V_TENSOR ? args[8].u.t : NULL;
    int64_t num = args[5].u.i, mode = args[7].u.i, pad = args[9].u.i, dim = g->shape[1];
    bool scale = args[6].u.b;
    if (mode == TJ_EMBEDDING_BAG_MAX) return max_backward(op, args, outs[0]);
    /* indices and offset2bag made contiguous as a layout's indices and
     * offsets: this backward reads each position's bag, no offsets */
    bag_operands o;
    tj_contig cg = {0}, cb = {0}, cp = {0};
    size_t want = sizeof(int64_t) * (size_t)(num > 0 ? 2 * num : 1), count_bytes = 0;
    int64_t *counts = NULL;
    tj_status st = bags_get(&o, args[1].u.t, args[2].u.t, g->shape[0], pad);
    const int64_t *offset2bag = o.bags.offsets;
    o.bags.offsets = NULL;
    o.bags.noffsets = 0;
    if (st == TJ_OK) st = check_rows(op, &o.bags, num);
    if (st == TJ_OK) st = tj_contig_get(&cg, g);
    if (st == TJ_OK) st = tj_contig_get(&cb, args[3].u.t);
    if (st == TJ_OK && psw) st = tj_contig_get(&cp, psw);
    if (st == TJ_OK && scale && !(counts = tj_alloc_storage_bytes(want, &count_bytes))) st = tj_oom(op, want);
    if (st == TJ_OK)
        tj_k_embedding_bag_backward_sum_mean(g->dtype, &o.bags, offset2bag, (int)mode,
                                             (const int64_t *)(const void *)cb.data, psw ? cp.data : NULL, scale,
                                             counts, cg.data, dim, num, tj_tensor_ptr(outs[0]), tj_get_num_threads());
    tj_free_storage_bytes(counts, count_bytes);
    tj_contig_release(&cp);
    tj_contig_release(&cb);
    tj_contig_release(&cg);
    bags_release(&o);
    return st;
}

/* ---- (grad, weight, indices, offsets, offset2bag, mode, padding_idx) ---- */

tj_status tj_meta__embedding_bag_per_sample_weights_backward(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::_embedding_bag_per_sample_weights_backward";
    const tj_tensor *g = args[0].u.t, *w = args[1].u.t, *indices = args[2].u.t, *o2b = args[4].u.t;
    int64_t mode = args[5].u.i;
    char s[96], s2[96];
    tj_status st;
    if ((st = check_float(op, "grad", g)) != TJ_OK || (st = check_int64(op, "indices", indices)) != TJ_OK ||
        (st = check_int64(op, "offsets", args[3].u.t)) != TJ_OK || (st = check_int64(op, "offset2bag", o2b)) != TJ_OK)
        return st;
    if (mode != TJ_EMBEDDING_BAG_SUM)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: per_sample_weights only supported for mode='sum' (mode %lld)",
                        op, (long long)mode);
    if (w->dtype != g->dtype || w->ndim != 2 || g->ndim != 2 || w->shape[1] != g->shape[1])
        return tj_error(TJ_ERR_SHAPE, "%s: weight %s %s and grad %s %s must be 2-D of one dtype and row length", op,
                        tj_dtype_name(w->dtype), tj_shape_str(w->ndim, w->shape, s, sizeof s), tj_dtype_name(g->dtype),
                        tj_shape_str(g->ndim, g->shape, s2, sizeof s2));
    if (o2b->numel != 0 && o2b->numel != indices->numel)
        return tj_error(TJ_ERR_SHAPE, "%s: offset2bag %s must be empty or hold the bag of each of the %lld indices",
                        op, tj_shape_str(o2b->ndim, o2b->shape, s, sizeof s), (long long)indices->numel);
    if ((st = check_padding(op, args[6].u.i, w->shape[0])) != TJ_OK) return st;
    meta_1d(&outs[0], indices->numel);
    outs[0].dtype = g->dtype;
    return TJ_OK;
}

tj_status tj_kernel__embedding_bag_per_sample_weights_backward(const tj_value *args, tj_tensor *const *outs)
{
    const char *op = "aten::_embedding_bag_per_sample_weights_backward";
    const tj_tensor *g = args[0].u.t, *w = args[1].u.t, *o2b = args[4].u.t;
    bag_operands o;
    tj_contig cg = {0}, co = {0};
    int64_t n = args[2].u.t->numel;
    size_t want = sizeof(int64_t) * (size_t)(n > 0 ? n : 1), got = 0;
    int64_t *rebuilt = NULL;
    tj_status st = bags_get(&o, args[2].u.t, args[3].u.t, g->shape[0], args[6].u.i);
    if (st == TJ_OK) st = bags_validate(op, &o.bags, w->shape[0]);
    if (st == TJ_OK) st = tj_contig_get(&cg, g);
    /* an empty offset2bag (ATen's float32 sum path) is rebuilt from the offsets */
    if (st == TJ_OK && o2b->numel) st = tj_contig_get(&co, o2b);
    else if (st == TJ_OK && !(rebuilt = tj_alloc_storage_bytes(want, &got))) st = tj_oom(op, want);
    if (st == TJ_OK) {
        if (rebuilt) tj_k_embedding_bag_offset2bag(&o.bags, rebuilt);
        tj_k_embedding_bag_psw_backward(g->dtype, &o.bags, rebuilt ? rebuilt : (const int64_t *)(const void *)co.data,
                                        cg.data, tj_tensor_ptr(w), w->strides[0], w->strides[1], w->shape[1],
                                        tj_tensor_ptr(outs[0]));
    }
    tj_free_storage_bytes(rebuilt, got);
    tj_contig_release(&co);
    tj_contig_release(&cg);
    bags_release(&o);
    return st;
}
