/* Advanced indexing's strided copy (see index_advanced.h). */
#include <string.h>

#include "index_advanced.h"
#include "parallel.h"

typedef struct adv_ctx {
    tj_dtype dtype;
    size_t esize;
    tj_k_adv_side dst, src;
    const tj_k_adv_shape *s;
    bool accumulate;
    bool rows; /* post elements contiguous on both sides: runs of memcpy / adds */
    int64_t npre, npost;
} adv_ctx;

/* Offset of flat position i over `ndim` dims of `shape` with `strides`. */
static int64_t flat_offset(int64_t i, int ndim, const int64_t *shape, const int64_t *strides)
{
    int64_t off = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        off += i % shape[d] * strides[d];
        i /= shape[d];
    }
    return off;
}

static bool post_contiguous(const tj_k_adv_shape *s, const int64_t *strides)
{
    int64_t expect = 1;
    for (int d = s->post_ndim - 1; d >= 0; d--) {
        if (s->post[d] != 1 && strides[d] != expect) return false;
        expect *= s->post[d];
    }
    return true;
}

/* n elements of src added into dst (both contiguous). */
static void add_run(tj_dtype dtype, void *dst, const void *src, int64_t n)
{
    switch (dtype) {
    case TJ_FLOAT32: for (int64_t i = 0; i < n; i++) ((float *)dst)[i] += ((const float *)src)[i]; break;
    case TJ_FLOAT64: for (int64_t i = 0; i < n; i++) ((double *)dst)[i] += ((const double *)src)[i]; break;
    case TJ_INT64: /* wrapping, as ATen's two's complement */
        for (int64_t i = 0; i < n; i++)
            ((int64_t *)dst)[i] = (int64_t)((uint64_t)((int64_t *)dst)[i] + (uint64_t)((const int64_t *)src)[i]);
        break;
    default: for (int64_t i = 0; i < n; i++) ((bool *)dst)[i] |= ((const bool *)src)[i]; break;
    }
}

/* Post positions [q0, q1) of (p, b), whose bases are d and s. */
static void post_range(const adv_ctx *c, char *d, const char *s, int64_t q0, int64_t q1)
{
    if (c->rows) {
        d += (size_t)q0 * c->esize;
        s += (size_t)q0 * c->esize;
        if (c->accumulate) add_run(c->dtype, d, s, q1 - q0);
        else memcpy(d, s, (size_t)(q1 - q0) * c->esize);
        return;
    }
    const tj_k_adv_shape *sh = c->s;
    for (int64_t q = q0; q < q1; q++) {
        char *dq = d + flat_offset(q, sh->post_ndim, sh->post, c->dst.post_strides) * (int64_t)c->esize;
        const char *sq = s + flat_offset(q, sh->post_ndim, sh->post, c->src.post_strides) * (int64_t)c->esize;
        if (c->accumulate) add_run(c->dtype, dq, sq, 1);
        else memcpy(dq, sq, c->esize);
    }
}

/* (p, b) with post positions [q0, q1). */
static void one(const adv_ctx *c, int64_t p, int64_t b, int64_t q0, int64_t q1)
{
    const tj_k_adv_shape *sh = c->s;
    int64_t dp = flat_offset(p, sh->pre_ndim, sh->pre, c->dst.pre_strides) + c->dst.offs[b];
    int64_t sp = flat_offset(p, sh->pre_ndim, sh->pre, c->src.pre_strides) + c->src.offs[b];
    post_range(c, (char *)c->dst.data + dp * (int64_t)c->esize, (const char *)c->src.data + sp * (int64_t)c->esize,
               q0, q1);
}

/* Threads over (p, b) rows: only when every dst position is distinct. */
static void by_rows(void *ctx, int t, int64_t begin, int64_t end)
{
    const adv_ctx *c = ctx;
    (void)t;
    for (int64_t r = begin; r < end; r++) one(c, r / c->s->nb, r % c->s->nb, 0, c->npost);
}

/* Threads over pre positions: distinct p never share a dst element. */
static void by_pre(void *ctx, int t, int64_t begin, int64_t end)
{
    const adv_ctx *c = ctx;
    (void)t;
    for (int64_t p = begin; p < end; p++)
        for (int64_t b = 0; b < c->s->nb; b++) one(c, p, b, 0, c->npost);
}

/* Threads over post positions: each thread walks every (p, b) in order. */
static void by_post(void *ctx, int t, int64_t begin, int64_t end)
{
    const adv_ctx *c = ctx;
    (void)t;
    if (begin == end) return;
    for (int64_t p = 0; p < c->npre; p++)
        for (int64_t b = 0; b < c->s->nb; b++) one(c, p, b, begin, end);
}

void tj_k_adv_copy(tj_dtype dtype, tj_k_adv_side dst, tj_k_adv_side src, const tj_k_adv_shape *shape, bool accumulate,
                   bool dst_unique, int nthreads)
{
    adv_ctx c = {.dtype = dtype, .esize = tj_dtype_size(dtype), .dst = dst, .src = src, .s = shape,
                 .accumulate = accumulate, .npre = 1, .npost = 1};
    for (int d = 0; d < shape->pre_ndim; d++) c.npre *= shape->pre[d];
    for (int d = 0; d < shape->post_ndim; d++) c.npost *= shape->post[d];
    if (c.npre == 0 || c.npost == 0 || shape->nb == 0) return;
    c.rows = post_contiguous(shape, dst.post_strides) && post_contiguous(shape, src.post_strides);
    if (dst_unique) tj_k_parallel(nthreads, c.npre * shape->nb, by_rows, &c);
    else if (c.npre >= nthreads) tj_k_parallel(nthreads, c.npre, by_pre, &c);
    else tj_k_parallel(c.npost >= nthreads ? nthreads : 1, c.npost, by_post, &c);
}
