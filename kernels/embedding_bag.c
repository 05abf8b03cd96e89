/* Embedding bags (see embedding_bag.h). The forward runs bag by bag, each
 * bag's rows accumulated in position order into its output row (ATen's
 * order); threads own disjoint bags, or in the backward disjoint gradient
 * rows, so results do not depend on the thread count. */
#include <string.h>

#include "embedding_bag.h"
#include "parallel.h"

void tj_k_embedding_bag_offset2bag(const tj_k_bags *b, int64_t *offset2bag)
{
    int64_t j = 0;
    for (int64_t i = 0; i < b->n; i++) {
        while (j < b->noffsets && b->offsets[j] <= i) j++;
        offset2bag[i] = j - 1;
    }
}

static int64_t bag_end(const tj_k_bags *b, int64_t bag)
{
    return bag + 1 < b->noffsets ? b->offsets[bag + 1] : b->n;
}

typedef struct bag_args {
    const tj_k_bags *b;
    int mode;
    const void *w;
    int64_t wrs, wcs, dim;
    const void *psw, *g;
    const int64_t *offset2bag, *bag_size;
    const int64_t *counts;
    void *out;
    int64_t *bag_size_out, *max_indices;
} bag_args;

/* Rows are gathered at random from a weight usually far larger than the
 * caches: the row PREFETCH_AHEAD positions on (in the same bag) is requested
 * while this one is added (a sum of 2048 bags of 32 rows of a 100000 x 64
 * float32 weight, one thread: 1.75 -> 1.14 ms). */
enum { PREFETCH_AHEAD = 8 };

static inline void prefetch_row(const void *row, int64_t bytes)
{
    for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch((const char *)row + o);
}

/* Bags [lo, hi) of the forward. */
#define DEFINE_FORWARD(T, SUF)                                                                              \
    static void forward_##SUF(const bag_args *a, int64_t lo, int64_t hi)                                    \
    {                                                                                                       \
        const tj_k_bags *b = a->b;                                                                          \
        const T *w = a->w, *psw = a->psw;                                                                   \
        int64_t dim = a->dim, row_bytes = a->wcs == 1 ? dim * (int64_t)sizeof(T) : 0;                       \
        for (int64_t bag = lo; bag < hi; bag++) {                                                           \
            T *dst = (T *)a->out + bag * dim;                                                               \
            int64_t *mi = a->max_indices ? a->max_indices + bag * dim : NULL, count = 0;                    \
            for (int64_t j = 0; j < dim; j++) dst[j] = 0;                                                   \
            for (int64_t j = 0; mi && j < dim; j++) mi[j] = 0;                                              \
            for (int64_t i = b->offsets[bag], end = bag_end(b, bag); i < end; i++) {                        \
                int64_t k = b->idx[i];                                                                      \
                if (i + PREFETCH_AHEAD < end) prefetch_row(w + b->idx[i + PREFETCH_AHEAD] * a->wrs, row_bytes);  \
                if (k == b->padding_idx) continue;                                                          \
                const T *src = w + k * a->wrs;                                                              \
                if (mi) {                                                                                   \
                    for (int64_t j = 0; j < dim; j++) {                                                     \
                        T v = src[j * a->wcs];                                                              \
                        if (count == 0 || v > dst[j]) dst[j] = v, mi[j] = k;                                \
                    }                                                                                       \
                } else if (psw) {                                                                           \
                    T s = psw[i];                                                                           \
                    for (int64_t j = 0; j < dim; j++) dst[j] += s * src[j * a->wcs];                        \
                } else if (a->wcs == 1) {                                                                   \
                    for (int64_t j = 0; j < dim; j++) dst[j] += src[j];                                     \
                } else {                                                                                    \
                    for (int64_t j = 0; j < dim; j++) dst[j] += src[j * a->wcs];                            \
                }                                                                                           \
                count++;                                                                                    \
            }                                                                                               \
            if (a->mode == TJ_EMBEDDING_BAG_MEAN && count > 0)                                              \
                for (int64_t j = 0; j < dim; j++) dst[j] /= (T)count;                                       \
            if (a->bag_size_out) a->bag_size_out[bag] = count;                                              \
        }                                                                                                   \
    }
DEFINE_FORWARD(float, f32)
DEFINE_FORWARD(double, f64)

static void forward_block_f32(void *ctx, int t, int64_t lo, int64_t hi) { (void)t; forward_f32(ctx, lo, hi); }
static void forward_block_f64(void *ctx, int t, int64_t lo, int64_t hi) { (void)t; forward_f64(ctx, lo, hi); }

void tj_k_embedding_bag(tj_dtype dtype, const tj_k_bags *b, int mode, const void *w, int64_t wrs, int64_t wcs,
                        int64_t dim, const void *psw, void *out, int64_t *bag_size, int64_t *max_indices,
                        int nthreads)
{
    bag_args a = {.b = b, .mode = mode, .w = w, .wrs = wrs, .wcs = wcs, .dim = dim, .psw = psw, .out = out,
                  .bag_size_out = bag_size, .max_indices = mode == TJ_EMBEDDING_BAG_MAX ? max_indices : NULL};
    int nt = (double)b->n * (double)dim < 65536 || b->nbags < 2 ? 1 : nthreads;
    if (nt > b->nbags) nt = (int)(b->nbags > 0 ? b->nbags : 1);
    tj_k_parallel(nt, b->nbags, dtype == TJ_FLOAT32 ? forward_block_f32 : forward_block_f64, &a);
}

/* Gradient rows [lo, hi) of the sum / mean backward: every position is
 * scanned, only those whose index is in the range add. */
#define DEFINE_BACKWARD(T, SUF)                                                                             \
    static void backward_##SUF(const bag_args *a, int64_t lo, int64_t hi)                                   \
    {                                                                                                       \
        const tj_k_bags *b = a->b;                                                                          \
        const T *g = a->g, *psw = a->psw;                                                                   \
        T *gw = a->out;                                                                                     \
        int64_t dim = a->dim;                                                                               \
        for (int64_t e = lo * dim; e < hi * dim; e++) gw[e] = 0;                                            \
        for (int64_t i = 0; i < b->n; i++) {                                                                \
            int64_t k = b->idx[i], o = a->offset2bag[i];                                                    \
            if (k == b->padding_idx || k < lo || k >= hi || o < 0 || o >= b->nbags) continue;               \
            T scale = psw ? psw[i] : (T)1;                                                                  \
            if (a->counts) scale /= (T)a->counts[k];                                                        \
            if (a->mode == TJ_EMBEDDING_BAG_MEAN && a->bag_size[o] != 0) scale /= (T)a->bag_size[o];        \
            T *dst = gw + k * dim;                                                                          \
            const T *src = g + o * dim;                                                                     \
            for (int64_t j = 0; j < dim; j++) dst[j] += scale * src[j];                                     \
        }                                                                                                   \
    }
DEFINE_BACKWARD(float, f32)
DEFINE_BACKWARD(double, f64)

static void backward_block_f32(void *ctx, int t, int64_t lo, int64_t hi) { (void)t; backward_f32(ctx, lo, hi); }
static void backward_block_f64(void *ctx, int t, int64_t lo, int64_t hi) { (void)t; backward_f64(ctx, lo, hi); }

/* scratch[num + k]: what ATen 1.13 divides row k's gradient by under
 * scale_grad_by_freq. Its loop over the distinct indices (ascending, the
 * g-th of them being k) reads counts[sorted[g]], sorted the indices in
 * ascending order, where counts[k] was meant: a divisor that is k's count
 * only while every smaller index occurs once. Counts include padding_idx. */
static void freq_divisors(const tj_k_bags *b, int64_t num, int64_t *scratch)
{
    int64_t *counts = scratch, *divisor = scratch + num, v = 0, below_v = 0, g = 0;
    memset(counts, 0, sizeof(int64_t) * (size_t)num);
    for (int64_t i = 0; i < b->n; i++) counts[b->idx[i]]++;
    for (int64_t k = 0; k < num; k++) {
        if (!counts[k]) continue;
        /* sorted[g]: the value whose run of positions holds position g */
        while (below_v + counts[v] <= g) below_v += counts[v++];
        divisor[k] = counts[v];
        g++;
    }
}

void tj_k_embedding_bag_backward_sum_mean(tj_dtype dtype, const tj_k_bags *b, const int64_t *offset2bag, int mode,
                                          const int64_t *bag_size, const void *psw, bool scale_grad_by_freq,
                                          int64_t *counts, const void *g, int64_t dim, int64_t num, void *gw,
                                          int nthreads)
{
    if (scale_grad_by_freq) freq_divisors(b, num, counts);
    bag_args a = {.b = b, .mode = mode, .dim = dim, .psw = psw, .g = g, .offset2bag = offset2bag,
                  .bag_size = bag_size, .counts = scale_grad_by_freq ? counts + num : NULL, .out = gw};
    int nt = (double)b->n * (double)dim < 65536 || num < 2 ? 1 : nthreads;
    if (nt > num) nt = (int)(num > 0 ? num : 1);
    tj_k_parallel(nt, num, dtype == TJ_FLOAT32 ? backward_block_f32 : backward_block_f64, &a);
}

#define DEFINE_BACKWARD_MAX(T, SUF)                                                                         \
    static void backward_max_##SUF(int64_t nbags, const int64_t *bag_size, const int64_t *mi, const T *g,   \
                                   int64_t dim, int64_t num, T *gw)                                         \
    {                                                                                                       \
        for (int64_t e = 0; e < num * dim; e++) gw[e] = 0;                                                  \
        for (int64_t o = 0; o < nbags; o++) {                                                               \
            if (bag_size[o] <= 0) continue;                                                                 \
            for (int64_t j = 0; j < dim; j++) gw[mi[o * dim + j] * dim + j] += g[o * dim + j];              \
        }                                                                                                   \
    }
DEFINE_BACKWARD_MAX(float, f32)
DEFINE_BACKWARD_MAX(double, f64)

void tj_k_embedding_bag_backward_max(tj_dtype dtype, int64_t nbags, const int64_t *bag_size,
                                     const int64_t *max_indices, const void *g, int64_t dim, int64_t num, void *gw)
{
    if (dtype == TJ_FLOAT32) backward_max_f32(nbags, bag_size, max_indices, g, dim, num, gw);
    else backward_max_f64(nbags, bag_size, max_indices, g, dim, num, gw);
}

#define DEFINE_PSW_BACKWARD(T, SUF)                                                                         \
    static void psw_backward_##SUF(const tj_k_bags *b, const int64_t *offset2bag, const T *g, const T *w,   \
                                   int64_t wrs, int64_t wcs, int64_t dim, T *out)                           \
    {                                                                                                       \
        for (int64_t i = 0; i < b->n; i++) {                                                                \
            int64_t k = b->idx[i], o = offset2bag[i];                                                       \
            T acc = 0;                                                                                      \
            if (k != b->padding_idx && o >= 0 && o < b->nbags)                                              \
                for (int64_t j = 0; j < dim; j++) acc += g[o * dim + j] * w[k * wrs + j * wcs];            \
            out[i] = acc;                                                                                   \
        }                                                                                                   \
    }
DEFINE_PSW_BACKWARD(float, f32)
DEFINE_PSW_BACKWARD(double, f64)

void tj_k_embedding_bag_psw_backward(tj_dtype dtype, const tj_k_bags *b, const int64_t *offset2bag, const void *g,
                                     const void *w, int64_t wrs, int64_t wcs, int64_t dim, void *out)
{
    if (dtype == TJ_FLOAT32) psw_backward_f32(b, offset2bag, g, w, wrs, wcs, dim, out);
    else psw_backward_f64(b, offset2bag, g, w, wrs, wcs, dim, out);
}
