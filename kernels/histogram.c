/* Counting kernels (see histogram.h). */
#include <string.h>

#include "dtype_convert.h"
#include "fill.h"
#include "histogram.h"

void tj_k_bincount(const int64_t *x, int64_t xstride, int64_t n, const void *w, tj_dtype wdtype, int64_t wstride,
                   void *out, tj_dtype odtype, int64_t nbins)
{
    memset(out, 0, tj_k_dtype_bytes(odtype) * (size_t)nbins);
    const char *wb = w;
    int64_t wstep = wstride * (int64_t)(w ? tj_k_dtype_bytes(wdtype) : 0);
    if (!w) {
        int64_t *o = out;
        for (int64_t i = 0; i < n; i++) o[x[i * xstride]]++;
    } else if (odtype == TJ_FLOAT32) {
        float *o = out;
        for (int64_t i = 0; i < n; i++) o[x[i * xstride]] += (float)tj_k_load_f64(wb + i * wstep, wdtype);
    } else {
        double *o = out;
        for (int64_t i = 0; i < n; i++) o[x[i * xstride]] += tj_k_load_f64(wb + i * wstep, wdtype);
    }
}

/* The bin of elt (lo <= elt <= hi) in T: the linear guess, then the edge
 * interval around it that holds elt (the edges are rounded). */
#define HISTC(T, SUF)                                                                           \
    static void histc_##SUF(const T *x, int64_t n, int64_t bins, T lo, T hi, const T *edges, T *out) \
    {                                                                                           \
        memset(out, 0, sizeof(T) * (size_t)bins);                                               \
        for (int64_t i = 0; i < n; i++) {                                                       \
            T elt = x[i];                                                                       \
            if (elt < lo || elt > hi) continue;                                                 \
            if (elt != elt) { /* ATen's test lets nan through, into the first bin */            \
                out[0] += 1;                                                                    \
                continue;                                                                       \
            }                                                                                   \
            int64_t pos = (int64_t)((elt - lo) * (T)bins / (hi - lo));                          \
            int64_t a = pos - 1 > 0 ? pos - 1 : 0, b = pos + 2 < bins + 1 ? pos + 2 : bins + 1; \
            while (a < b) { /* upper_bound of elt in edges[a, b) */                             \
                int64_t mid = a + (b - a) / 2;                                                  \
                if (elt < edges[mid]) b = mid;                                                  \
                else a = mid + 1;                                                               \
            }                                                                                   \
            pos = a - 1;                                                                        \
            if (pos == bins) pos--; /* the last bin holds its right edge */                     \
            out[pos] += 1;                                                                      \
        }                                                                                       \
    }
HISTC(float, f32)
HISTC(double, f64)

void tj_k_histc(const void *x, tj_dtype dtype, int64_t n, int64_t bins, double lo, double hi, void *edges, void *out)
{
    tj_k_linspace(edges, dtype, lo, hi, bins + 1, 1);
    if (dtype == TJ_FLOAT32) {
        const float *e = edges;
        histc_f32(x, n, bins, e[0], e[bins], e, out);
    } else {
        const double *e = edges;
        histc_f64(x, n, bins, e[0], e[bins], e, out);
    }
}
