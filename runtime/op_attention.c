/* scaled_dot_product_attention (the OPS.md schema): argument checks and the
 * glue to the fused kernel (kernels/attention). Batch dims of query, key,
 * value and mask broadcast together; operands BLAS cannot read as they are
 * are copied once. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "contig.h"
#include "kernels/attention.h"
#include "kernels/gemm.h"
#include "op_nn.h"

static const char *const OP = "aten::scaled_dot_product_attention";

/* The broadcast batch shape (dims before the last two) of q, k, v and the
 * mask (whose last two dims must broadcast to [L, S]). */
static tj_status batch_shape(const tj_tensor *const *t, const tj_tensor *mask, int *nb, int64_t *shape)
{
    int n = 0;
    int64_t tmp[TJ_MAX_DIMS];
    for (int i = 0; i < 3; i++) {
        if (tj_broadcast_shapes(OP, n, shape, t[i]->ndim - 2, t[i]->shape, &n, tmp) != TJ_OK) return tj_last_status();
        memcpy(shape, tmp, sizeof(int64_t) * (size_t)n);
    }
    if (mask) {
        int64_t full[TJ_MAX_DIMS + 2];
        int nf;
        memcpy(full, shape, sizeof(int64_t) * (size_t)n);
        full[n] = t[0]->shape[t[0]->ndim - 2];
        full[n + 1] = t[1]->shape[t[1]->ndim - 2];
        if (n + 2 > TJ_MAX_DIMS)
            return tj_error(TJ_ERR_SHAPE, "%s: attention weights would exceed %d dims", OP, TJ_MAX_DIMS);
        if (tj_broadcast_shapes(OP, n + 2, full, mask->ndim, mask->shape, &nf, tmp) != TJ_OK) return tj_last_status();
        if (tmp[nf - 2] != full[n] || tmp[nf - 1] != full[n + 1]) {
            char sm[96];
            return tj_error(TJ_ERR_SHAPE, "%s: attn_mask %s does not broadcast to [..., %lld, %lld]", OP,
                            tj_shape_str(mask->ndim, mask->shape, sm, sizeof sm), (long long)full[n],
                            (long long)full[n + 1]);
        }
        n = nf - 2;
        memcpy(shape, tmp, sizeof(int64_t) * (size_t)n);
    }
    *nb = n;
    return TJ_OK;
}

tj_status tj_meta_scaled_dot_product_attention(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *t[3] = {args[0].u.t, args[1].u.t, args[2].u.t}, *mask = tj_opt_tensor(&args[3]);
    static const char *const names[3] = {"query", "key", "value"};
    double p = tj_value_as_double(&args[4]);
    char s1[96], s2[96];
    for (int i = 0; i < 3; i++) {
        if (!tj_dtype_is_float(t[i]->dtype))
            return tj_error(TJ_ERR_DTYPE, "%s: %s must be float32 or float64, got %s", OP, names[i],
                            tj_dtype_name(t[i]->dtype));
        if (t[i]->dtype != t[0]->dtype)
            return tj_error(TJ_ERR_DTYPE, "%s: query (%s) and %s (%s) must have the same dtype", OP,
                            tj_dtype_name(t[0]->dtype), names[i], tj_dtype_name(t[i]->dtype));
        if (t[i]->ndim < 2)
            return tj_error(TJ_ERR_SHAPE, "%s: %s %s must have at least 2 dims", OP, names[i],
                            tj_shape_str(t[i]->ndim, t[i]->shape, s1, sizeof s1));
        for (int d = t[i]->ndim - 2; d < t[i]->ndim; d++)
            if (t[i]->shape[d] > INT_MAX)
                return tj_error(TJ_ERR_UNSUPPORTED, "%s: %s %s: a matrix dim exceeds BLAS's int range", OP, names[i],
                                tj_shape_str(t[i]->ndim, t[i]->shape, s1, sizeof s1));
    }
    const int64_t *q = t[0]->shape, *k = t[1]->shape, *v = t[2]->shape;
    int qn = t[0]->ndim, kn = t[1]->ndim, vn = t[2]->ndim;
    if (q[qn - 1] != k[kn - 1])
        return tj_error(TJ_ERR_SHAPE, "%s: query %s and key %s must have the same embedding size (%lld != %lld)", OP,
                        tj_shape_str(qn, q, s1, sizeof s1), tj_shape_str(kn, k, s2, sizeof s2),
                        (long long)q[qn - 1], (long long)k[kn - 1]);
    if (k[kn - 2] != v[vn - 2])
        return tj_error(TJ_ERR_SHAPE, "%s: key %s and value %s must have the same sequence length (%lld != %lld)", OP,
                        tj_shape_str(kn, k, s1, sizeof s1), tj_shape_str(vn, v, s2, sizeof s2),
                        (long long)k[kn - 2], (long long)v[vn - 2]);
    if (p != 0)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: dropout_p %g is not supported (only 0.0)", OP, p);
    if (mask && args[5].u.b)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: attn_mask must not be given with is_causal=True", OP);
    if (mask && mask->dtype != TJ_BOOL && mask->dtype != t[0]->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: attn_mask must be bool or query's dtype %s, got %s", OP,
                        tj_dtype_name(t[0]->dtype), tj_dtype_name(mask->dtype));
    int nb = 0;
    int64_t shape[TJ_MAX_DIMS];
    tj_status st = batch_shape(t, mask, &nb, shape);
    if (st != TJ_OK) return st;
    if (nb + 2 > TJ_MAX_DIMS) return tj_error(TJ_ERR_SHAPE, "%s: the result would exceed %d dims", OP, TJ_MAX_DIMS);
    outs[0].dtype = t[0]->dtype;
    outs[0].ndim = nb + 2;
    memcpy(outs[0].shape, shape, sizeof(int64_t) * (size_t)nb);
    outs[0].shape[nb] = q[qn - 2];
    outs[0].shape[nb + 1] = v[vn - 1];
    return TJ_OK;
}

/* Scratch of the kernel call: per-batch offsets, copies, per-thread blocks. */
typedef struct attn_buffers {
    int64_t *off;
    size_t off_bytes;
    void *scratch;
    size_t scratch_bytes;
    tj_contig copy[3];
} attn_buffers;

/* How the kernel reads t (element strides ds) as [batch..., rows, cols]
 * (right-aligned broadcast, stride 0 where t has size 1 or lacks the dim):
 * per-batch offsets and the matrix strides. */
static void layout(const tj_tensor *t, const int64_t *ds, int nb, const int64_t *batch_shape, int64_t batch,
                   int64_t *off, tj_k_attn_operand *o)
{
    int64_t st[TJ_MAX_DIMS + 2];
    for (int d = 0; d < nb + 2; d++) {
        int td = d - (nb + 2 - t->ndim);
        st[d] = td >= 0 && t->shape[td] != 1 ? ds[td] : 0;
    }
    for (int64_t b = 0; b < batch; b++) {
        int64_t rem = b, x = 0;
        for (int d = nb - 1; d >= 0; d--) {
            x += (rem % batch_shape[d]) * st[d];
            rem /= batch_shape[d];
        }
        off[b] = x;
    }
    o->off = off;
    o->rs = st[nb];
    o->cs = st[nb + 1];
}

/* q, k or v: in place when BLAS can read its matrices, else a contiguous
 * copy; *ds receives the strides of the data read. */
static tj_status matrices(const tj_tensor *t, tj_contig *copy, tj_k_attn_operand *o, int64_t *ds)
{
    int nd = t->ndim;
    memcpy(ds, t->strides, sizeof(int64_t) * (size_t)nd);
    o->p = tj_tensor_ptr(t);
    if (tj_k_gemm_layout_ok(t->shape[nd - 2], t->shape[nd - 1], ds[nd - 2], ds[nd - 1])) return TJ_OK;
    if (tj_contig_get(copy, t) != TJ_OK) return tj_last_status();
    tj_contiguous_strides(nd, t->shape, ds);
    o->p = copy->data;
    return TJ_OK;
}

/* How the kernel runs beyond q, k, v and the mask. */
typedef struct attn_mode {
    bool causal, mask_drops, masked_rows_nan;
    bool scaled;  /* scale given; else 1 / sqrt(E) */
    double scale;
} attn_mode;

/* out = attention(t[0], t[1], t[2], mask) as `mode` says. */
static tj_status attention(const tj_tensor *const *t, const tj_tensor *mask, attn_mode mode, tj_tensor *out)
{
    int nb = out->ndim - 2;
    int64_t batch = 1, ds[TJ_MAX_DIMS];
    for (int d = 0; d < nb; d++) batch *= out->shape[d];
    tj_k_attention a = {
        .dtype = out->dtype,
        .batch = batch,
        .L = out->shape[nb],
        .S = t[1]->shape[t[1]->ndim - 2],
        .E = t[0]->shape[t[0]->ndim - 1],
        .Ev = out->shape[nb + 1],
        .mask_is_bool = mask && mask->dtype == TJ_BOOL,
        .mask_drops = mode.mask_drops,
        .causal = mode.causal,
        .masked_rows_nan = mode.masked_rows_nan,
        .out = tj_tensor_ptr(out),
        .nthreads = tj_get_num_threads(),
    };
    a.scale = mode.scaled ? mode.scale : 1.0 / sqrt((double)a.E);
    if (out->numel == 0) return TJ_OK;
    attn_buffers buf = {0};
    tj_k_attn_operand *ops[3] = {&a.q, &a.k, &a.v};
    size_t off_bytes = sizeof(int64_t) * (size_t)(batch * 4);
    buf.off = tj_alloc_storage_bytes(off_bytes, &buf.off_bytes);
    tj_status st = buf.off ? TJ_OK : tj_oom(OP, off_bytes);
    for (int i = 0; st == TJ_OK && i < 3; i++) {
        st = matrices(t[i], &buf.copy[i], ops[i], ds);
        if (st == TJ_OK) layout(t[i], ds, nb, out->shape, batch, buf.off + i * batch, ops[i]);
    }
    if (st == TJ_OK && mask) {
        a.mask.p = tj_tensor_ptr(mask);
        layout(mask, mask->strides, nb, out->shape, batch, buf.off + 3 * batch, &a.mask);
    }
    if (st == TJ_OK) {
        size_t nbytes = (size_t)tj_k_attention_threads(&a) * tj_k_attention_scratch(&a) * tj_dtype_size(a.dtype);
        buf.scratch = tj_alloc_storage_bytes(nbytes, &buf.scratch_bytes);
        if (!buf.scratch) st = tj_oom(OP, nbytes);
    }
    if (st == TJ_OK) tj_k_attention_run(&a, buf.scratch);
    tj_free_storage_bytes(buf.scratch, buf.scratch_bytes);
    tj_free_storage_bytes(buf.off, buf.off_bytes);
    for (int i = 0; i < 3; i++) tj_contig_release(&buf.copy[i]);
    return st;
}

tj_status tj_kernel_scaled_dot_product_attention(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *t[3] = {args[0].u.t, args[1].u.t, args[2].u.t};
    return attention(t, tj_opt_tensor(&args[3]), (attn_mode){.causal = args[5].u.b}, outs[0]);
}

/* Whether bool mask m, broadcast to [..., L, S], is the same [L, S] matrix
 * for every batch item and true exactly above the diagonal (key j > query
 * i): what a causal mask marks for masked_fill. */
static bool marks_causal(const tj_tensor *m, int64_t L, int64_t S)
{
    int nd = m->ndim;
    if (nd < 2) return false; /* the same row for every query: not causal unless L is 1, which gains nothing */
    for (int d = 0; d < nd - 2; d++)
        if (m->shape[d] != 1 && m->strides[d] != 0) return false;
    int64_t rs = m->shape[nd - 2] != 1 ? m->strides[nd - 2] : 0, cs = m->shape[nd - 1] != 1 ? m->strides[nd - 1] : 0;
    const unsigned char *p = (const unsigned char *)tj_tensor_ptr(m);
    for (int64_t i = 0; i < L; i++)
        for (int64_t j = 0; j < S; j++)
            if ((p[i * rs + j * cs] != 0) != (j > i)) return false;
    return true;
}

tj_status tj_kernel_fused_attention(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *q = args[0].u.t, *mask = tj_opt_tensor(&args[3]);
    int nd = q->ndim;
    /* k arrives as k^T (what the first product read); out as the second
     * product's [batch, L, Ev] result: both as q's [..., rows, cols] */
    tj_tensor k = *args[1].u.t, out = *outs[0];
    int64_t S = k.shape[nd - 1], L = q->shape[nd - 2], Ev = out.shape[out.ndim - 1];
    k.shape[nd - 1] = k.shape[nd - 2];
    k.shape[nd - 2] = S;
    int64_t ks = k.strides[nd - 1];
    k.strides[nd - 1] = k.strides[nd - 2];
    k.strides[nd - 2] = ks;
    out.ndim = nd;
    memcpy(out.shape, q->shape, sizeof(int64_t) * (size_t)(nd - 2));
    out.shape[nd - 2] = L;
    out.shape[nd - 1] = Ev;
    tj_contiguous_strides(nd, out.shape, out.strides);
    const tj_tensor *t[3] = {q, &k, args[2].u.t};
    attn_mode mode = {.mask_drops = true, .masked_rows_nan = true, .scaled = true, .scale = tj_value_as_double(&args[4])};
    if (mask && marks_causal(mask, L, S)) { /* the kernel then skips the keys after each query */
        mode.causal = true;
        mask = NULL;
    }
    return attention(t, mask, mode, &out);
}
