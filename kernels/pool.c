/* Max and average pooling (see pool.h). */
#include <math.h>
#include <string.h>

#include "pool.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Start of plane number pl (= n*channels + c) of the input. */
#define PLANE(p, in, pl) ((in) + ((pl) / (p)->channels) * (p)->ns + ((pl) % (p)->channels) * (p)->cs)

#define MAXPOOL_DEFINE(T, SUF)                                                                            \
    void tj_k_max_pool2d_##SUF(const tj_k_pool2d *p, const T *in, T *out, int64_t *idx)                  \
    {                                                                                                    \
        int64_t planes = p->batch * p->channels, osize = p->out_h * p->out_w;                            \
        _Pragma("omp parallel for num_threads(p->threads) schedule(static)")                             \
        for (int64_t pl = 0; pl < planes; pl++) {                                                        \
            const T *src = PLANE(p, in, pl);                                                             \
            T *o = out + pl * osize;                                                                     \
            int64_t *ix = idx + pl * osize;                                                              \
            for (int64_t oy = 0; oy < p->out_h; oy++) {                                                  \
                int64_t y0 = oy * p->sh - p->ph;                                                         \
                int64_t y1 = min64(y0 + (p->kh - 1) * p->dh + 1, p->height);                             \
                while (y0 < 0) y0 += p->dh;                                                              \
                for (int64_t ox = 0; ox < p->out_w; ox++) {                                              \
                    int64_t x0 = ox * p->sw - p->pw;                                                     \
                    int64_t x1 = min64(x0 + (p->kw - 1) * p->dw + 1, p->width);                          \
                    while (x0 < 0) x0 += p->dw;                                                          \
                    int64_t best = y0 * p->width + x0;                                                   \
                    T m = -INFINITY;                                                                     \
                    for (int64_t y = y0; y < y1; y += p->dh)                                             \
                        for (int64_t x = x0; x < x1; x += p->dw) {                                       \
                            T v = src[y * p->ys + x * p->xs];                                            \
                            if (v > m || isnan(v)) {                                                     \
                                m = v;                                                                   \
                                best = y * p->width + x;                                                 \
                            }                                                                            \
                        }                                                                                \
                    o[oy * p->out_w + ox] = m;                                                           \
                    ix[oy * p->out_w + ox] = best;                                                       \
                }                                                                                        \
            }                                                                                            \
        }                                                                                                \
    }                                                                                                    \
                                                                                                         \
    bool tj_k_max_pool2d_backward_##SUF(const tj_k_pool2d *p, const T *grad_out, const int64_t *idx,      \
                                        T *grad_in, int64_t *bad)                                        \
    {                                                                                                    \
        int64_t planes = p->batch * p->channels, osize = p->out_h * p->out_w;                            \
        int64_t isize = p->height * p->width;                                                            \
        for (int64_t i = 0; i < planes * osize; i++)                                                     \
            if (idx[i] != -1 && (idx[i] < 0 || idx[i] >= isize)) {                                       \
                *bad = idx[i];                                                                           \
                return false;                                                                            \
            }                                                                                            \
        _Pragma("omp parallel for num_threads(p->threads) schedule(static)")                             \
        for (int64_t pl = 0; pl < planes; pl++) {                                                        \
            T *gi = grad_in + pl * isize;                                                                \
            const T *go = grad_out + pl * osize;                                                         \
            const int64_t *ix = idx + pl * osize;                                                        \
            memset(gi, 0, sizeof(T) * (size_t)isize);                                                    \
            for (int64_t j = 0; j < osize; j++)                                                          \
                if (ix[j] >= 0) gi[ix[j]] += go[j];                                                      \
        }                                                                                                \
        return true;                                                                                     \
    }

MAXPOOL_DEFINE(float, f32)
MAXPOOL_DEFINE(double, f64)

#define AVGPOOL_DEFINE(T, SUF, ACC)                                                                       \
    void tj_k_avg_pool2d_##SUF(const tj_k_pool2d *p, const T *in, T *out, bool count_include_pad,        \
                               const int64_t *divisor_override)                                          \
    {                                                                                                    \
        int64_t planes = p->batch * p->channels, osize = p->out_h * p->out_w;                            \
        _Pragma("omp parallel for num_threads(p->threads) schedule(static)")                             \
        for (int64_t pl = 0; pl < planes; pl++) {                                                        \
            const T *src = PLANE(p, in, pl);                                                             \
            T *o = out + pl * osize;                                                                     \
            for (int64_t oy = 0; oy < p->out_h; oy++)                                                    \
                for (int64_t ox = 0; ox < p->out_w; ox++) {                                              \
                    int64_t y0 = oy * p->sh - p->ph, x0 = ox * p->sw - p->pw;                            \
                    int64_t y1 = min64(y0 + p->kh, p->height + p->ph);                                   \
                    int64_t x1 = min64(x0 + p->kw, p->width + p->pw);                                    \
                    int64_t pool_size = (y1 - y0) * (x1 - x0);                                           \
                    y0 = max64(y0, 0);                                                                   \
                    x0 = max64(x0, 0);                                                                   \
                    y1 = min64(y1, p->height);                                                           \
                    x1 = min64(x1, p->width);                                                            \
                    T *dst = &o[oy * p->out_w + ox];                                                     \
                    if (y0 >= y1 || x0 >= x1) {                                                          \
                        *dst = 0;                                                                        \
                        continue;                                                                        \
                    }                                                                                    \
                    ACC sum = 0;                                                                         \
                    for (int64_t y = y0; y < y1; y++)                                                    \
                        for (int64_t x = x0; x < x1; x++) sum += (ACC)src[y * p->ys + x * p->xs];        \
                    int64_t div = divisor_override ? *divisor_override                                   \
                                  : count_include_pad ? pool_size                                        \
                                                      : (y1 - y0) * (x1 - x0);                           \
                    *dst = (T)(sum / (ACC)div);                                                          \
                }                                                                                        \
        }                                                                                                \
    }

AVGPOOL_DEFINE(float, f32, double)
AVGPOOL_DEFINE(double, f64, double)
AVGPOOL_DEFINE(int64_t, i64, int64_t)
