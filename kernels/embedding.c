/* Embedding gather and dense gradient (see embedding.h). */
#include <omp.h>
#include <string.h>

#include "embedding.h"

int64_t tj_k_embedding_find_invalid(const int64_t *idx, int64_t n, int64_t num, const int64_t *skip)
{
    for (int64_t i = 0; i < n; i++)
        if ((idx[i] < 0 || idx[i] >= num) && !(skip && idx[i] == *skip)) return i;
    return -1;
}

void tj_k_embedding(size_t esize, const int64_t *idx, int64_t n, const void *w, int64_t wrs, int64_t wcs,
                    int64_t dim, void *out, int nthreads)
{
    const char *wp = w;
    char *op = out;
    int64_t row_bytes = dim * (int64_t)esize;
    int nt = (double)n * (double)row_bytes < 262144 ? 1 : nthreads;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t i = 0; i < n; i++) {
        const char *src = wp + idx[i] * wrs * (int64_t)esize;
        char *dst = op + i * row_bytes;
        if (wcs == 1) {
            memcpy(dst, src, (size_t)row_bytes);
            continue;
        }
        for (int64_t j = 0; j < dim; j++) memcpy(dst + j * (int64_t)esize, src + j * wcs * (int64_t)esize, esize);
    }
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

void tj_k_embedding_backward(tj_dtype dtype, const int64_t *idx, int64_t n, const void *g, int64_t dim, int64_t num,
                             int64_t padding_idx, bool scale_grad_by_freq, int64_t *counts, void *gw, int nthreads)
{
    if (scale_grad_by_freq) {
        memset(counts, 0, sizeof(int64_t) * (size_t)num);
        for (int64_t i = 0; i < n; i++)
            if (idx[i] != padding_idx) counts[idx[i]]++;
    }
    const int64_t *cnt = scale_grad_by_freq ? counts : NULL;
    int nt = (double)n * (double)dim < 65536 || num < 2 ? 1 : nthreads;
    if (nt > num) nt = (int)num;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int t = omp_get_thread_num(), got = omp_get_num_threads();
        int64_t lo = num * t / got, hi = num * (t + 1) / got;
        if (dtype == TJ_FLOAT32) backward_rows_f32(idx, n, g, dim, padding_idx, cnt, gw, lo, hi);
        else backward_rows_f64(idx, n, g, dim, padding_idx, cnt, gw, lo, hi);
    }
}
