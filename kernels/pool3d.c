/* 3-D pooling (see pool3d.h), one plane per item of a parallel loop. */
#include <math.h>
#include <string.h>

#include "parallel.h"
#include "pool.h"
#include "pool3d.h"

static int64_t volume(const int64_t *v) { return v[0] * v[1] * v[2]; }

/* A window of the average pool along one dim: [start, end) clipped to the
 * padded input gives the count_include_pad size, then to the input. */
typedef struct span {
    int64_t lo, hi; /* inside the input */
    int64_t padded; /* size inside the padded input */
} span;

static span avg_span(const tj_k_pool3d *p, int d, int64_t o)
{
    int64_t lo = o * p->stride[d] - p->padding[d], hi = lo + p->kernel[d];
    if (hi > p->size[d] + p->padding[d]) hi = p->size[d] + p->padding[d];
    span s = {lo < 0 ? 0 : lo, hi > p->size[d] ? p->size[d] : hi, hi - lo};
    return s;
}

static int64_t avg_divisor(const span *s, bool include_pad, const int64_t *divisor)
{
    if (divisor) return *divisor;
    if (include_pad) return s[0].padded * s[1].padded * s[2].padded;
    return (s[0].hi - s[0].lo) * (s[1].hi - s[1].lo) * (s[2].hi - s[2].lo);
}

typedef struct pool_args {
    const tj_k_pool3d *p;
    const void *in;
    void *out;
    const int64_t *idx_in;
    int64_t *idx_out;
    bool include_pad;
    const int64_t *divisor;
    int64_t bad; /* max backward: an index outside the volume, or -1 */
} pool_args;

#define POOL3D_DEFINE(T, SUF)                                                                                  \
    static void max_planes_##SUF(void *ctx, int t, int64_t begin, int64_t end)                                 \
    {                                                                                                          \
        const pool_args *a = ctx;                                                                              \
        const tj_k_pool3d *p = a->p;                                                                           \
        const int64_t *n = p->size, *o = p->out, *k = p->kernel, *s = p->stride, *pd = p->padding,             \
                      *dl = p->dilation;                                                                       \
        int64_t in_vol = volume(n), out_vol = volume(o);                                                       \
        (void)t;                                                                                               \
        for (int64_t pl = begin; pl < end; pl++) {                                                             \
            const T *src = (const T *)a->in + pl * in_vol;                                                     \
            T *dst = (T *)a->out + pl * out_vol;                                                               \
            int64_t *ix = a->idx_out + pl * out_vol;                                                           \
            for (int64_t oz = 0; oz < o[0]; oz++)                                                              \
                for (int64_t oy = 0; oy < o[1]; oy++)                                                          \
                    for (int64_t ox = 0; ox < o[2]; ox++) {                                                    \
                        T best = -INFINITY;                                                                    \
                        int64_t at = -1;                                                                       \
                        for (int64_t a0 = 0; a0 < k[0]; a0++) {                                                \
                            int64_t z = oz * s[0] - pd[0] + a0 * dl[0];                                        \
                            if (z < 0 || z >= n[0]) continue;                                                  \
                            for (int64_t a1 = 0; a1 < k[1]; a1++) {                                            \
                                int64_t y = oy * s[1] - pd[1] + a1 * dl[1];                                    \
                                if (y < 0 || y >= n[1]) continue;                                              \
                                for (int64_t a2 = 0; a2 < k[2]; a2++) {                                        \
                                    int64_t x = ox * s[2] - pd[2] + a2 * dl[2];                                \
                                    if (x < 0 || x >= n[2]) continue;                                          \
                                    int64_t pos = (z * n[1] + y) * n[2] + x;                                   \
                                    T v = src[pos];                                                            \
                                    /* the first in-bounds element, as ATen's start index */                   \
                                    if (at < 0 || v > best || isnan(v)) best = v, at = pos;                    \
                                }                                                                              \
                            }                                                                                  \
                        }                                                                                      \
                        int64_t q = (oz * o[1] + oy) * o[2] + ox;                                              \
                        dst[q] = best;                                                                         \
                        ix[q] = at;                                                                            \
                    }                                                                                          \
        }                                                                                                      \
    }                                                                                                          \
                                                                                                               \
    void tj_k_max_pool3d_##SUF(const tj_k_pool3d *p, const T *in, T *out, int64_t *idx)                        \
    {                                                                                                          \
        pool_args a = {.p = p, .in = in, .out = out, .idx_out = idx};                                          \
        tj_k_parallel(p->threads, p->planes, max_planes_##SUF, &a);                                            \
    }                                                                                                          \
                                                                                                               \
    /* One thread: the index check stops at the first bad index. */                                            \
    bool tj_k_max_pool3d_backward_##SUF(const tj_k_pool3d *p, const T *grad_out, const int64_t *idx,           \
                                        T *grad_in, int64_t *bad)                                              \
    {                                                                                                          \
        int64_t in_vol = volume(p->size), out_vol = volume(p->out);                                            \
        memset(grad_in, 0, sizeof(T) * (size_t)(p->planes * in_vol));                                          \
        for (int64_t pl = 0; pl < p->planes; pl++)                                                             \
            for (int64_t q = 0; q < out_vol; q++) {                                                            \
                int64_t at = idx[pl * out_vol + q];                                                            \
                if (at < 0 || at >= in_vol) {                                                                  \
                    *bad = at;                                                                                 \
                    return false;                                                                              \
                }                                                                                              \
                grad_in[pl * in_vol + at] += grad_out[pl * out_vol + q];                                       \
            }                                                                                                  \
        return true;                                                                                           \
    }                                                                                                          \
                                                                                                               \
    /* Forward (a->out the pooled volumes) or backward (a->out the input   \
     * gradient, a->in the output gradient), by windows. */                                                     \
    static void avg_planes_##SUF(void *ctx, int t, int64_t begin, int64_t end, bool backward)                  \
    {                                                                                                          \
        const pool_args *a = ctx;                                                                              \
        const tj_k_pool3d *p = a->p;                                                                           \
        const int64_t *n = p->size, *o = p->out;                                                               \
        int64_t in_vol = volume(n), out_vol = volume(o);                                                       \
        (void)t;                                                                                               \
        for (int64_t pl = begin; pl < end; pl++) {                                                             \
            const T *src = (const T *)a->in + pl * (backward ? out_vol : in_vol);                              \
            T *dst = (T *)a->out + pl * (backward ? in_vol : out_vol);                                         \
            if (backward) memset(dst, 0, sizeof(T) * (size_t)in_vol);                                          \
            for (int64_t oz = 0; oz < o[0]; oz++)                                                              \
                for (int64_t oy = 0; oy < o[1]; oy++)                                                          \
                    for (int64_t ox = 0; ox < o[2]; ox++) {                                                    \
                        span s[3] = {avg_span(p, 0, oz), avg_span(p, 1, oy), avg_span(p, 2, ox)};              \
                        int64_t q = (oz * o[1] + oy) * o[2] + ox;                                              \
                        int64_t div = avg_divisor(s, a->include_pad, a->divisor);                              \
                        if (backward) {                                                                        \
                            T g = src[q] / (T)div;                                                             \
                            for (int64_t z = s[0].lo; z < s[0].hi; z++)                                        \
                                for (int64_t y = s[1].lo; y < s[1].hi; y++)                                    \
                                    for (int64_t x = s[2].lo; x < s[2].hi; x++) dst[(z * n[1] + y) * n[2] + x] += g; \
                            continue;                                                                          \
                        }                                                                                      \
                        double sum = 0; /* float64 for float32 too: one rounding */                            \
                        for (int64_t z = s[0].lo; z < s[0].hi; z++)                                            \
                            for (int64_t y = s[1].lo; y < s[1].hi; y++)                                        \
                                for (int64_t x = s[2].lo; x < s[2].hi; x++) sum += src[(z * n[1] + y) * n[2] + x]; \
                        dst[q] = (T)(sum / (double)div);                                                       \
                    }                                                                                          \
        }                                                                                                      \
    }                                                                                                          \
    static void avg_forward_##SUF(void *ctx, int t, int64_t begin, int64_t end)                                \
    {                                                                                                          \
        avg_planes_##SUF(ctx, t, begin, end, false);                                                           \
    }                                                                                                          \
    static void avg_backward_##SUF(void *ctx, int t, int64_t begin, int64_t end)                               \
    {                                                                                                          \
        avg_planes_##SUF(ctx, t, begin, end, true);                                                            \
    }                                                                                                          \
                                                                                                               \
    void tj_k_avg_pool3d_##SUF(const tj_k_pool3d *p, const T *in, T *out, bool count_include_pad,              \
                               const int64_t *divisor)                                                         \
    {                                                                                                          \
        pool_args a = {.p = p, .in = in, .out = out, .include_pad = count_include_pad, .divisor = divisor};    \
        tj_k_parallel(p->threads, p->planes, avg_forward_##SUF, &a);                                           \
    }                                                                                                          \
                                                                                                               \
    void tj_k_avg_pool3d_backward_##SUF(const tj_k_pool3d *p, const T *grad_out, T *grad_in,                   \
                                        bool count_include_pad, const int64_t *divisor)                        \
    {                                                                                                          \
        pool_args a = {.p = p, .in = grad_out, .out = grad_in, .include_pad = count_include_pad,               \
                       .divisor = divisor};                                                                    \
        tj_k_parallel(p->threads, p->planes, avg_backward_##SUF, &a);                                          \
    }

POOL3D_DEFINE(float, f32)
POOL3D_DEFINE(double, f64)

/* The window of output o along dim d of adaptive pooling. */
static span adaptive_span(const tj_k_pool3d *p, int d, int64_t o)
{
    span s = {tj_k_adaptive_start(o, p->out[d], p->size[d]), tj_k_adaptive_end(o, p->out[d], p->size[d]), 0};
    s.padded = s.hi - s.lo;
    return s;
}

/* Forward (a->out the pooled volumes) or backward (a->out the input
 * gradient, a->in the output gradient), by windows. */
#define ADAPTIVE_POOL3D_DEFINE(T, SUF)                                                                         \
    static void adaptive_planes_##SUF(void *ctx, int t, int64_t begin, int64_t end, bool backward)             \
    {                                                                                                          \
        const pool_args *a = ctx;                                                                              \
        const tj_k_pool3d *p = a->p;                                                                           \
        const int64_t *n = p->size, *o = p->out;                                                               \
        int64_t in_vol = volume(n), out_vol = volume(o);                                                       \
        (void)t;                                                                                               \
        for (int64_t pl = begin; pl < end; pl++) {                                                             \
            const T *src = (const T *)a->in + pl * (backward ? out_vol : in_vol);                              \
            T *dst = (T *)a->out + pl * (backward ? in_vol : out_vol);                                         \
            if (backward) memset(dst, 0, sizeof(T) * (size_t)in_vol);                                          \
            span s[3]; /* each dim's window, found in its own loop (two divisions each) */                    \
            for (int64_t oz = 0; oz < o[0]; oz++) {                                                            \
                s[0] = adaptive_span(p, 0, oz);                                                                \
                for (int64_t oy = 0; oy < o[1]; oy++) {                                                        \
                    s[1] = adaptive_span(p, 1, oy);                                                            \
                    for (int64_t ox = 0; ox < o[2]; ox++) {                                                    \
                        s[2] = adaptive_span(p, 2, ox);                                                        \
                        int64_t q = (oz * o[1] + oy) * o[2] + ox;                                              \
                        if (backward) {                                                                        \
                            T g = src[q] / (T)s[0].padded / (T)s[1].padded / (T)s[2].padded;                   \
                            for (int64_t z = s[0].lo; z < s[0].hi; z++)                                        \
                                for (int64_t y = s[1].lo; y < s[1].hi; y++)                                    \
                                    for (int64_t x = s[2].lo; x < s[2].hi; x++) dst[(z * n[1] + y) * n[2] + x] += g; \
                            continue;                                                                          \
                        }                                                                                      \
                        double sum = 0; /* float64 for float32 too: one rounding */                            \
                        for (int64_t z = s[0].lo; z < s[0].hi; z++)                                            \
                            for (int64_t y = s[1].lo; y < s[1].hi; y++)                                        \
                                for (int64_t x = s[2].lo; x < s[2].hi; x++) sum += src[(z * n[1] + y) * n[2] + x]; \
                        dst[q] = (T)(sum / (double)s[0].padded / (double)s[1].padded / (double)s[2].padded);   \
                    }                                                                                          \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    }                                                                                                          \
    static void adaptive_forward_planes_##SUF(void *ctx, int t, int64_t begin, int64_t end)                    \
    {                                                                                                          \
        adaptive_planes_##SUF(ctx, t, begin, end, false);                                                      \
    }                                                                                                          \
    static void adaptive_backward_planes_##SUF(void *ctx, int t, int64_t begin, int64_t end)                   \
    {                                                                                                          \
        adaptive_planes_##SUF(ctx, t, begin, end, true);                                                       \
    }                                                                                                          \
    void tj_k_adaptive_avg_pool3d_##SUF(const tj_k_pool3d *p, const T *in, T *out)                             \
    {                                                                                                          \
        pool_args a = {.p = p, .in = in, .out = out};                                                          \
        tj_k_parallel(p->threads, p->planes, adaptive_forward_planes_##SUF, &a);                               \
    }                                                                                                          \
    void tj_k_adaptive_avg_pool3d_backward_##SUF(const tj_k_pool3d *p, const T *grad_out, T *grad_in)          \
    {                                                                                                          \
        pool_args a = {.p = p, .in = grad_out, .out = grad_in};                                                \
        tj_k_parallel(p->threads, p->planes, adaptive_backward_planes_##SUF, &a);                              \
    }

ADAPTIVE_POOL3D_DEFINE(float, f32)
ADAPTIVE_POOL3D_DEFINE(double, f64)
