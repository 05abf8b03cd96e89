/* tril / triu row by row (see trilu.h). */
#include <string.h>

#include "parallel.h"
#include "trilu.h"

typedef struct trilu_ctx {
    const tj_k_trilu_args *a;
    char *dst;
    const char *src;
    int64_t m, n, k; /* rows, columns, diagonal clamped to [-m, n] */
} trilu_ctx;

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Element offsets in dst and src of matrix b's element [0, 0]. */
static void batch_offsets(const tj_k_trilu_args *a, int64_t b, int64_t *doff, int64_t *soff)
{
    *doff = *soff = 0;
    for (int d = a->nbatch - 1; d >= 0; d--) {
        int64_t i = b % a->shape[d];
        b /= a->shape[d];
        *doff += i * a->dst_strides[d];
        *soff += i * a->src_strides[d];
    }
}

/* count elements from s (stride ss) to d (stride ds). */
static void copy_elems(char *d, int64_t ds, const char *s, int64_t ss, int64_t count, size_t es)
{
    if (ds == 1 && ss == 1) {
        memcpy(d, s, (size_t)count * es);
        return;
    }
    switch (es) {
    case 1:
        for (int64_t j = 0; j < count; j++) ((uint8_t *)d)[j * ds] = ((const uint8_t *)s)[j * ss];
        break;
    case 4:
        for (int64_t j = 0; j < count; j++) ((uint32_t *)d)[j * ds] = ((const uint32_t *)s)[j * ss];
        break;
    default:
        for (int64_t j = 0; j < count; j++) ((uint64_t *)d)[j * ds] = ((const uint64_t *)s)[j * ss];
        break;
    }
}

static void zero_elems(char *d, int64_t ds, int64_t count, size_t es)
{
    if (ds == 1) {
        memset(d, 0, (size_t)count * es);
        return;
    }
    for (int64_t j = 0; j < count; j++) memset(d + j * ds * (int64_t)es, 0, es);
}

/* Rows [begin, end) of the batch's M-row matrices stacked. */
static void rows(void *ctx, int t, int64_t begin, int64_t end)
{
    (void)t;
    const trilu_ctx *c = ctx;
    const tj_k_trilu_args *a = c->a;
    int nb = a->nbatch;
    int64_t drow = a->dst_strides[nb], dcol = a->dst_strides[nb + 1];
    int64_t srow = a->src_strides[nb], scol = a->src_strides[nb + 1];
    int64_t es = (int64_t)a->elem_size;
    for (int64_t r = begin; r < end; r++) {
        int64_t i = r % c->m, doff, soff;
        batch_offsets(a, r / c->m, &doff, &soff);
        char *d = c->dst + (doff + i * drow) * es;
        const char *s = c->src + (soff + i * srow) * es;
        /* columns [lo, hi) are kept, the rest zeroed */
        int64_t lo = a->lower ? 0 : clamp(i + c->k, 0, c->n);
        int64_t hi = a->lower ? clamp(i + c->k + 1, 0, c->n) : c->n;
        zero_elems(d, dcol, lo, a->elem_size);
        if (d != s || dcol != scol) /* else in place: the kept elements are there */
            copy_elems(d + lo * dcol * es, dcol, s + lo * scol * es, scol, hi - lo, a->elem_size);
        zero_elems(d + hi * dcol * es, dcol, c->n - hi, a->elem_size);
    }
}

void tj_k_trilu(const tj_k_trilu_args *a, void *dst, const void *src, int nthreads)
{
    int64_t nrows = 1;
    for (int d = 0; d <= a->nbatch; d++) nrows *= a->shape[d];
    trilu_ctx c = {a, dst, src, a->shape[a->nbatch], a->shape[a->nbatch + 1], 0};
    if (nrows == 0 || c.n == 0) return;
    c.k = clamp(a->diagonal, -c.m, c.n);
    if (nthreads > nrows) nthreads = (int)nrows;
    tj_k_parallel(nthreads, nrows, rows, &c);
}
