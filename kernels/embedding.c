/* Embedding gather and dense gradient (see embedding.h). */
#include <string.h>

#include "embedding.h"
#include "parallel.h"

int64_t tj_k_embedding_find_invalid(const int64_t *idx, int64_t n, int64_t num, const int64_t *skip)
{
    for (int64_t i = 0; i < n; i++)
        if ((idx[i] < 0 || idx[i] >= num) && !(skip && idx[i] == *skip)) return i;
    return -1;
}

/* The operands of the embedding loops. */
typedef struct embedding_args {
    size_t esize;
    tj_dtype dtype;
    const int64_t *idx;
    int64_t n;
    const char *w; /* forward */
    int64_t wrs, wcs, dim;
    char *out;
    const void *g; /* backward */
    int64_t pad;
    const int64_t *counts;
    void *gw;
} embedding_args;

/* Output rows [begin, end): the weight rows they index. */
static void gather_rows(void *ctx, int t, int64_t begin, int64_t end)
{
    const embedding_args *a = ctx;
    int64_t es = (int64_t)a->esize, row_bytes = a->dim * es;
    (void)t;
    for (int64_t i = begin; i < end; i++) {
        const char *src = a->w + a->idx[i] * a->wrs * es;
        char *dst = a->out + i * row_bytes;
        if (a->wcs == 1) {
            memcpy(dst, src, (size_t)row_bytes);
            continue;
        }
        for (int64_t j = 0; j < a->dim; j++) memcpy(dst + j * es, src + j * a->wcs * es, a->esize);
    }
}

void tj_k_embedding(size_t esize, const int64_t *idx, int64_t n, const void *w, int64_t wrs, int64_t wcs,
                    int64_t dim, void *out, int nthreads)
{
    embedding_args a = {.esize = esize, .idx = idx, .n = n, .w = w, .wrs = wrs, .wcs = wcs, .dim = dim, .out = out};
    int nt = (double)n * (double)dim * (double)esize < 262144 ? 1 : nthreads;
    tj_k_parallel(nt, n, gather_rows, &a);
}

/* Rows [lo, hi) of the gradient: every index is scanned, only those in the
 * range are added, so threads own disjoint rows and the order of additions
 * is the index order, as in ATen. */
#define DEFINE_BACKWARD(T, SUF)                                                                               \
    static void backward_rows_##SUF(const int64_t *idx, int64_t n, const T *g, int64_t dim, int64_t pad,      \
                                     const int64_t *counts, T *gw, int64_t lo, int64_t hi)                    \
    {                                                                                                         \
        memset(gw + lo * dim, 0, sizeof(T) * (size_t)((hi - lo) * dim));                                      \
        for (int64_t i = 0; i < n; i++) {                                                                     \
            int64_t k = idx[i];                                                                               \
            if (k == pad || k < lo || k >= hi) continue;                                                      \
            T scale = counts ? (T)(1.0 / (double)counts[k]) : (T)1;                                           \
            T *dst = gw + k * dim;                                                                            \
            const T *src = g + i * dim;                                                                       \
            for (int64_t j = 0; j < dim; j++) dst[j] += scale * src[j];                                       \
        }                                                                                                     \
    }
DEFINE_BACKWARD(float, f32)
DEFINE_BACKWARD(double, f64)

/* Gradient rows [lo, hi). */
static void backward_block(void *ctx, int t, int64_t lo, int64_t hi)
{
    const embedding_args *a = ctx;
    (void)t;
    if (a->dtype == TJ_FLOAT32) backward_rows_f32(a->idx, a->n, a->g, a->dim, a->pad, a->counts, a->gw, lo, hi);
    else backward_rows_f64(a->idx, a->n, a->g, a->dim, a->pad, a->counts, a->gw, lo, hi);
}

void tj_k_embedding_backward(tj_dtype dtype, const int64_t *idx, int64_t n, const void *g, int64_t dim, int64_t num,
                             int64_t padding_idx, bool scale_grad_by_freq, int64_t *counts, void *gw, int nthreads)
{
    if (scale_grad_by_freq) {
        memset(counts, 0, sizeof(int64_t) * (size_t)num);
        for (int64_t i = 0; i < n; i++)
            if (idx[i] != padding_idx) counts[idx[i]]++;
    }
    embedding_args a = {.dtype = dtype, .idx = idx, .n = n, .dim = dim, .g = g, .pad = padding_idx,
                        .counts = scale_grad_by_freq ? counts : NULL, .gw = gw};
    int nt = (double)n * (double)dim < 65536 || num < 2 ? 1 : nthreads;
    if (nt > num) nt = (int)num;
    tj_k_parallel(nt, num, backward_block, &a);
}
