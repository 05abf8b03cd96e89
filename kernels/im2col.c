/* im2col / col2im for float32 and float64 (see im2col.h). */
#include <string.h>

#include "im2col.h"

/* Output positions [lo, hi) along one axis whose input coordinate
 * o*stride + off lies inside [0, size). */
static void valid_range(int64_t off, int64_t stride, int64_t size, int64_t n_out, int64_t *lo, int64_t *hi)
{
    int64_t l = off >= 0 ? 0 : (-off - 1) / stride + 1; /* ceil(-off / stride); -off + stride - 1 overflowed */
    int64_t h = size - 1 - off < 0 ? 0 : (size - 1 - off) / stride + 1;
    if (l > n_out) l = n_out;
    if (h > n_out) h = n_out;
    if (h < l) h = l;
    *lo = l;
    *hi = h;
}

int tj_k_im2col_is_identity(const tj_k_im2col_geom *g)
{
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 &&
           g->out_h == g->height && g->out_w == g->width;
}

#define IM2COL_DEFINE(T, SUF)                                                                                   \
    void tj_k_im2col_##SUF(const tj_k_im2col_geom *g, const T *img, int64_t cs, int64_t ys, int64_t xs, T *col, \
                           int64_t ldcol)                                                                      \
    {                                                                                                          \
        int64_t ow = g->out_w;                                                                                 \
        for (int64_t c = 0; c < g->channels; c++)                                                              \
            for (int64_t i = 0; i < g->kh; i++)                                                                \
                for (int64_t j = 0; j < g->kw; j++) {                                                          \
                    T *row = col + ((c * g->kh + i) * g->kw + j) * ldcol;                                      \
                    int64_t xoff = j * g->dw - g->pw, lo, hi;                                                  \
                    valid_range(xoff, g->sw, g->width, ow, &lo, &hi);                                          \
                    for (int64_t oy = 0; oy < g->out_h; oy++) {                                                \
                        T *dst = row + oy * ow;                                                                \
                        int64_t y = oy * g->sh - g->ph + i * g->dh;                                            \
                        if (y < 0 || y >= g->height) {                                                         \
                            memset(dst, 0, sizeof(T) * (size_t)ow);                                            \
                            continue;                                                                          \
                        }                                                                                      \
                        const T *src = img + c * cs + y * ys;                                                  \
                        memset(dst, 0, sizeof(T) * (size_t)lo);                                                \
                        if (g->sw == 1 && xs == 1)                                                             \
                            memcpy(dst + lo, src + lo + xoff, sizeof(T) * (size_t)(hi - lo));                  \
                        else                                                                                   \
                            for (int64_t ox = lo; ox < hi; ox++) dst[ox] = src[(ox * g->sw + xoff) * xs];      \
                        memset(dst + hi, 0, sizeof(T) * (size_t)(ow - hi));                                    \
                    }                                                                                          \
                }                                                                                              \
    }                                                                                                          \
                                                                                                               \
    void tj_k_col2im_##SUF(const tj_k_im2col_geom *g, const T *col, int64_t ldcol, T *img)                     \
    {                                                                                                          \
        int64_t ow = g->out_w, w = g->width;                                                                   \
        for (int64_t c = 0; c < g->channels; c++)                                                              \
            for (int64_t i = 0; i < g->kh; i++)                                                                \
                for (int64_t j = 0; j < g->kw; j++) {                                                          \
                    const T *row = col + ((c * g->kh + i) * g->kw + j) * ldcol;                                \
                    int64_t xoff = j * g->dw - g->pw, lo, hi;                                                  \
                    valid_range(xoff, g->sw, w, ow, &lo, &hi);                                                 \
                    for (int64_t oy = 0; oy < g->out_h; oy++) {                                                \
                        int64_t y = oy * g->sh - g->ph + i * g->dh;                                            \
                        if (y < 0 || y >= g->height) continue;                                                 \
                        const T *src = row + oy * ow;                                                          \
                        T *dst = img + (c * g->height + y) * w;                                                \
                        for (int64_t ox = lo; ox < hi; ox++) dst[ox * g->sw + xoff] += src[ox];                \
                    }                                                                                          \
                }                                                                                              \
    }

IM2COL_DEFINE(float, f32)
IM2COL_DEFINE(double, f64)
