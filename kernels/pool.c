/* Max and average pooling (see pool.h). */
#include <math.h>
#include <string.h>

#include "cpu_isa.h"
#include "parallel.h"
#include "pool.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Start of plane number pl (= n*channels + c) of the input. */
#define PLANE(p, in, pl) ((in) + ((pl) / (p)->channels) * (p)->ns + ((pl) % (p)->channels) * (p)->cs)

/* take ? a : b without a branch: the comparisons of max pooling are coin
 * tosses on real data, and compilers keep them as jumps. */
#define SELECT_BITS(SUF, T, U)                                             \
    static inline T select_##SUF(int take, T a, T b)                       \
    {                                                                      \
        U x, y, mask = (U)0 - (U)take;                                     \
        memcpy(&x, &a, sizeof x);                                          \
        memcpy(&y, &b, sizeof y);                                          \
        x = (x & mask) | (y & ~mask);                                      \
        memcpy(&a, &x, sizeof a);                                          \
        return a;                                                          \
    }
SELECT_BITS(f32, float, uint32_t)
SELECT_BITS(f64, double, uint64_t)
SELECT_BITS(i64, int64_t, uint64_t)

/* Output columns [lo, hi) whose input column o*stride + off lies in [0, size). */
static void valid_range(int64_t off, int64_t stride, int64_t size, int64_t n_out, int64_t *lo, int64_t *hi)
{
    int64_t l = off >= 0 ? 0 : (-off - 1) / stride + 1; /* ceil(-off / stride); -off + stride - 1 overflowed */
    int64_t h = size - 1 - off < 0 ? 0 : (size - 1 - off) / stride + 1;
    *lo = min64(l, n_out);
    *hi = max64(min64(h, n_out), *lo);
}

/* One tap over output columns [lo, hi), generic: see pool.h. */
#define MAXPOOL_TAP_DEFINE(T, SUF)                                                                        \
    static void max_pool_tap_##SUF(const T *row, int64_t y, int64_t width, int64_t lo, int64_t hi,        \
                                   int64_t sw, int64_t off, int64_t xs, T *o, int64_t *ix)                \
    {                                                                                                    \
        for (int64_t ox = lo; ox < hi; ox++) {                                                           \
            int64_t x = ox * sw + off;                                                                   \
            T v = row[x * xs];                                                                           \
            int take = (v > o[ox]) | (v != v);                                                           \
            o[ox] = select_##SUF(take, v, o[ox]);                                                        \
            ix[ox] = select_i64(take, y * width + x, ix[ox]);                                            \
        }                                                                                                \
    }
MAXPOOL_TAP_DEFINE(float, f32)
MAXPOOL_TAP_DEFINE(double, f64)

void tj_k_max_pool_tap_f32_generic(const float *row, int64_t y, int64_t width, int64_t lo, int64_t hi, int64_t sw,
                                   int64_t off, int64_t xs, float *o, int64_t *ix)
{
    max_pool_tap_f32(row, y, width, lo, hi, sw, off, xs, o, ix);
}

typedef void (*max_pool_tap_fn_f32)(const float *, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                    float *, int64_t *);
typedef void (*max_pool_tap_fn_f64)(const double *, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                    double *, int64_t *);

static max_pool_tap_fn_f32 pick_tap_f32(void)
{
    return tj_k_isa_active() == TJ_K_ISA_AVX512 ? tj_k_max_pool_tap_f32_avx512 : max_pool_tap_f32;
}
static max_pool_tap_fn_f64 pick_tap_f64(void) { return max_pool_tap_f64; }

/* The whole-plane kernel (float32 on AVX-512, up to MAX_ROW_TAPS columns of
 * taps; on AVX2, the 2 x 2 geometry), or NULL for the tap-by-tap loop. */
#define MAX_ROW_TAPS 64
typedef void (*max_pool_plane_fn_f32)(const tj_k_pool2d *, const float *, const int64_t *, const int64_t *, float *,
                                      int64_t *);
typedef void (*max_pool_plane_fn_f64)(const tj_k_pool2d *, const double *, const int64_t *, const int64_t *,
                                      double *, int64_t *);

static max_pool_plane_fn_f32 pick_plane_f32(const tj_k_pool2d *p)
{
    tj_k_isa isa = tj_k_isa_active();
    if (isa == TJ_K_ISA_AVX512)
        return p->kw <= MAX_ROW_TAPS && tj_k_max_pool_plane_f32_avx512_ok(p) ? tj_k_max_pool_plane_f32_avx512 : NULL;
    bool two = isa == TJ_K_ISA_AVX2 && tj_k_max_pool_plane_2x2_f32_avx2_ok(p);
    return two ? tj_k_max_pool_plane_2x2_f32_avx2 : NULL;
}
static max_pool_plane_fn_f64 pick_plane_f64(const tj_k_pool2d *p) { return (void)p, NULL; }

bool tj_k_max_pool_is_2x2(const tj_k_pool2d *p)
{
    return p->kh == 2 && p->kw == 2 && p->sh == 2 && p->sw == 2 && p->ph == 0 && p->pw == 0 && p->dh == 1 &&
           p->dw == 1;
}

/* *target = min(*target, v), atomically: blocks of planes report their
 * first bad plane concurrently. */
static void atomic_min64(int64_t *target, int64_t v)
{
    int64_t cur = __atomic_load_n(target, __ATOMIC_RELAXED);
    while (v < cur && !__atomic_compare_exchange_n(target, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

/* Each output row is built tap by tap (taps in row-major window order, as
 * PyTorch visits them), every output column updated independently: no
 * chain of unpredictable branches from one element to the next, and room
 * for SIMD. The start index is PyTorch's first in-bounds position
 * (ih0 * width + iw0). */
#define MAXPOOL_DEFINE(T, SUF)                                                                           \
    typedef struct max_pool_args_##SUF {                                                                 \
        const tj_k_pool2d *p;                                                                            \
        const T *in;                                                                                     \
        T *out;                                                                                          \
        int64_t *idx;                                                                                    \
        max_pool_tap_fn_##SUF tap;                                                                       \
        max_pool_plane_fn_##SUF whole; /* or NULL: tap by tap */                                         \
        const int64_t *tap_lo, *tap_hi; /* whole's column ranges per tap */                              \
    } max_pool_args_##SUF;                                                                               \
                                                                                                         \
    static void max_pool_planes_##SUF(void *ctx, int t, int64_t begin, int64_t end)                      \
    {                                                                                                    \
        const max_pool_args_##SUF *a = ctx;                                                              \
        const tj_k_pool2d *p = a->p;                                                                     \
        const T *in = a->in;                                                                             \
        T *out = a->out;                                                                                 \
        int64_t *idx = a->idx, ow = p->out_w, osize = p->out_h * ow;                                     \
        max_pool_tap_fn_##SUF tap = a->tap;                                                              \
        max_pool_plane_fn_##SUF whole = a->whole;                                                        \
        (void)t;                                                                                         \
        for (int64_t pl = begin; pl < end; pl++) {                                                       \
            const T *src = PLANE(p, in, pl);                                                             \
            if (whole) {                                                                                 \
                whole(p, src, a->tap_lo, a->tap_hi, out + pl * osize, idx + pl * osize);                 \
                continue;                                                                                \
            }                                                                                            \
            for (int64_t oy = 0; oy < p->out_h; oy++) {                                                  \
                T *o = out + pl * osize + oy * ow;                                                       \
                int64_t *ix = idx + pl * osize + oy * ow;                                                \
                int64_t y0 = oy * p->sh - p->ph;                                                         \
                while (y0 < 0) y0 += p->dh;                                                              \
                for (int64_t ox = 0; ox < ow; ox++) {                                                    \
                    int64_t x0 = ox * p->sw - p->pw;                                                     \
                    while (x0 < 0) x0 += p->dw;                                                          \
                    o[ox] = -INFINITY;                                                                   \
                    ix[ox] = y0 * p->width + x0;                                                         \
                }                                                                                        \
                for (int64_t i = 0; i < p->kh; i++) {                                                    \
                    int64_t y = oy * p->sh - p->ph + i * p->dh;                                          \
                    if (y < 0 || y >= p->height) continue;                                               \
                    for (int64_t j = 0; j < p->kw; j++) {                                                \
                        int64_t off = j * p->dw - p->pw, lo, hi;                                         \
                        valid_range(off, p->sw, p->width, ow, &lo, &hi);                                 \
                        tap(src + y * p->ys, y, p->width, lo, hi, p->sw, off, p->xs, o, ix);             \
                    }                                                                                    \
                }                                                                                        \
            }                                                                                            \
        }                                                                                                \
    }                                                                                                    \
                                                                                                         \
    void tj_k_max_pool2d_##SUF(const tj_k_pool2d *p, const T *in, T *out, int64_t *idx)                  \
    {                                                                                                    \
        max_pool_plane_fn_##SUF whole = pick_plane_##SUF(p);                                             \
        int64_t tap_lo[MAX_ROW_TAPS], tap_hi[MAX_ROW_TAPS];                                              \
        for (int64_t j = 0; whole && j < p->kw; j++)                                                     \
            valid_range(j * p->dw - p->pw, p->sw, p->width, p->out_w, &tap_lo[j], &tap_hi[j]);           \
        max_pool_args_##SUF a = {.p = p, .in = in, .out = out, .idx = idx, .tap = pick_tap_##SUF(),      \
                                 .whole = whole, .tap_lo = tap_lo, .tap_hi = tap_hi};                    \
        tj_k_parallel(p->threads, p->batch * p->channels, max_pool_planes_##SUF, &a);                    \
    }                                                                                                    \
                                                                                                         \
    typedef struct max_pool_backward_args_##SUF {                                                        \
        const tj_k_pool2d *p;                                                                            \
        const T *grad_out;                                                                               \
        const int64_t *idx;                                                                              \
        T *grad_in;                                                                                      \
        int64_t first_bad; /* the first plane with an invalid index, or the number of planes */          \
    } max_pool_backward_args_##SUF;                                                                      \
                                                                                                         \
    static void max_pool_backward_planes_##SUF(void *ctx, int t, int64_t begin, int64_t end)             \
    {                                                                                                    \
        max_pool_backward_args_##SUF *a = ctx;                                                           \
        const tj_k_pool2d *p = a->p;                                                                     \
        int64_t osize = p->out_h * p->out_w, isize = p->height * p->width;                               \
        (void)t;                                                                                         \
        for (int64_t pl = begin; pl < end; pl++) {                                                       \
            T *gi = a->grad_in + pl * isize;                                                             \
            const T *go = a->grad_out + pl * osize;                                                      \
            const int64_t *ix = a->idx + pl * osize;                                                     \
            memset(gi, 0, sizeof(T) * (size_t)isize);                                                    \
            for (int64_t j = 0; j < osize; j++) {                                                        \
                int64_t v = ix[j];                                                                       \
                if ((uint64_t)v + 1 > (uint64_t)isize) { /* outside [-1, isize) */                       \
                    atomic_min64(&a->first_bad, pl); /* planes run in order: the block's first */        \
                    break;                                                                               \
                }                                                                                        \
                if (v >= 0) gi[v] += go[j];                                                              \
            }                                                                                            \
        }                                                                                                \
    }                                                                                                    \
                                                                                                         \
    bool tj_k_max_pool2d_backward_##SUF(const tj_k_pool2d *p, const T *grad_out, const int64_t *idx,     \
                                        T *grad_in, int64_t *bad)                                        \
    {                                                                                                    \
        int64_t planes = p->batch * p->channels, osize = p->out_h * p->out_w;                            \
        int64_t isize = p->height * p->width;                                                            \
        max_pool_backward_args_##SUF a = {.p = p, .grad_out = grad_out, .idx = idx, .grad_in = grad_in,  \
                                          .first_bad = planes};                                          \
        tj_k_parallel(p->threads, planes, max_pool_backward_planes_##SUF, &a);                           \
        if (a.first_bad == planes) return true;                                                          \
        for (int64_t j = 0; j < osize; j++) {                                                            \
            int64_t v = idx[a.first_bad * osize + j];                                                    \
            if (v < -1 || v >= isize) *bad = v;                                                          \
            if (v < -1 || v >= isize) break;                                                             \
        }                                                                                                \
        return false;                                                                                    \
    }

MAXPOOL_DEFINE(float, f32)
MAXPOOL_DEFINE(double, f64)

#define AVGPOOL_DEFINE(T, SUF, ACC)                                                                      \
    typedef struct avg_pool_args_##SUF {                                                                 \
        const tj_k_pool2d *p;                                                                            \
        const T *in;                                                                                     \
        T *out;                                                                                          \
        bool count_include_pad;                                                                          \
        const int64_t *divisor_override;                                                                 \
    } avg_pool_args_##SUF;                                                                               \
                                                                                                         \
    static void avg_pool_planes_##SUF(void *ctx, int t, int64_t begin, int64_t end)                      \
    {                                                                                                    \
        const avg_pool_args_##SUF *a = ctx;                                                              \
        const tj_k_pool2d *p = a->p;                                                                     \
        const int64_t *divisor_override = a->divisor_override;                                           \
        bool count_include_pad = a->count_include_pad;                                                   \
        int64_t osize = p->out_h * p->out_w;                                                             \
        (void)t;                                                                                         \
        for (int64_t pl = begin; pl < end; pl++) {                                                       \
            const T *src = PLANE(p, a->in, pl);                                                          \
            T *o = a->out + pl * osize;                                                                  \
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
    }                                                                                                    \
                                                                                                         \
    void tj_k_avg_pool2d_##SUF(const tj_k_pool2d *p, const T *in, T *out, bool count_include_pad,        \
                               const int64_t *divisor_override)                                          \
    {                                                                                                    \
        avg_pool_args_##SUF a = {.p = p, .in = in, .out = out, .count_include_pad = count_include_pad,   \
                                 .divisor_override = divisor_override};                                  \
        tj_k_parallel(p->threads, p->batch * p->channels, avg_pool_planes_##SUF, &a);                    \
    }

AVGPOOL_DEFINE(float, f32, double)
AVGPOOL_DEFINE(double, f64, double)
AVGPOOL_DEFINE(int64_t, i64, int64_t)

/* ATen's start_index / end_index, written so that neither product
 * overflows when in * (out + 1) fits. */
int64_t tj_k_adaptive_start(int64_t i, int64_t out_size, int64_t in_size)
{
    return (i / out_size) * in_size + ((i % out_size) * in_size) / out_size;
}

int64_t tj_k_adaptive_end(int64_t i, int64_t out_size, int64_t in_size)
{
    return 1 + ((i + 1) * in_size - 1) / out_size;
}

/* Window sizes of output row oy / column ox. */
static int64_t window_h(const tj_k_pool2d *p, int64_t oy)
{
    return tj_k_adaptive_end(oy, p->out_h, p->height) - tj_k_adaptive_start(oy, p->out_h, p->height);
}
static int64_t window_w(const tj_k_pool2d *p, int64_t ox)
{
    return tj_k_adaptive_end(ox, p->out_w, p->width) - tj_k_adaptive_start(ox, p->out_w, p->width);
}

/* The backward gathers instead of scattering: the windows that hold input
 * row y are the outputs [start(y, in -> out), end(y, in -> out)) (the
 * window bounds are monotone), so each input element sums its terms in
 * the order PyTorch's scatter adds them, in one double accumulator. */
#define ADAPTIVE_AVGPOOL_DEFINE(T, SUF)                                                                  \
    typedef struct adaptive_args_##SUF {                                                                 \
        const tj_k_pool2d *p;                                                                            \
        const T *src;                                                                                    \
        T *dst;                                                                                          \
    } adaptive_args_##SUF;                                                                               \
                                                                                                         \
    static void adaptive_avg_planes_##SUF(void *ctx, int t, int64_t begin, int64_t end)                  \
    {                                                                                                    \
        const adaptive_args_##SUF *a = ctx;                                                              \
        const tj_k_pool2d *p = a->p;                                                                     \
        (void)t;                                                                                         \
        for (int64_t pl = begin; pl < end; pl++) {                                                       \
            const T *src = PLANE(p, a->src, pl);                                                         \
            T *o = a->dst + pl * p->out_h * p->out_w;                                                    \
            for (int64_t oy = 0; oy < p->out_h; oy++) {                                                  \
                int64_t y0 = tj_k_adaptive_start(oy, p->out_h, p->height);                               \
                int64_t y1 = tj_k_adaptive_end(oy, p->out_h, p->height);                                 \
                for (int64_t ox = 0; ox < p->out_w; ox++) {                                              \
                    int64_t x0 = tj_k_adaptive_start(ox, p->out_w, p->width);                            \
                    int64_t x1 = tj_k_adaptive_end(ox, p->out_w, p->width);                              \
                    double sum = 0;                                                                      \
                    for (int64_t y = y0; y < y1; y++)                                                    \
                        for (int64_t x = x0; x < x1; x++) sum += (double)src[y * p->ys + x * p->xs];     \
                    o[oy * p->out_w + ox] = (T)(sum / (double)(y1 - y0) / (double)(x1 - x0));            \
                }                                                                                        \
            }                                                                                            \
        }                                                                                                \
    }                                                                                                    \
                                                                                                         \
    void tj_k_adaptive_avg_pool2d_##SUF(const tj_k_pool2d *p, const T *in, T *out)                       \
    {                                                                                                    \
        adaptive_args_##SUF a = {.p = p, .src = in, .dst = out};                                         \
        tj_k_parallel(p->threads, p->batch * p->channels, adaptive_avg_planes_##SUF, &a);                \
    }                                                                                                    \
                                                                                                         \
    static void adaptive_avg_backward_planes_##SUF(void *ctx, int t, int64_t begin, int64_t end)         \
    {                                                                                                    \
        const adaptive_args_##SUF *a = ctx;                                                              \
        const tj_k_pool2d *p = a->p;                                                                     \
        (void)t;                                                                                         \
        for (int64_t pl = begin; pl < end; pl++) {                                                       \
            const T *go = a->src + pl * p->out_h * p->out_w;                                             \
            T *gi = a->dst + pl * p->height * p->width;                                                  \
            for (int64_t y = 0; y < p->height; y++) {                                                    \
                int64_t oy0 = tj_k_adaptive_start(y, p->height, p->out_h);                               \
                int64_t oy1 = tj_k_adaptive_end(y, p->height, p->out_h);                                 \
                for (int64_t x = 0; x < p->width; x++) {                                                 \
                    int64_t ox0 = tj_k_adaptive_start(x, p->width, p->out_w);                            \
                    int64_t ox1 = tj_k_adaptive_end(x, p->width, p->out_w);                              \
                    double sum = 0;                                                                      \
                    for (int64_t oy = oy0; oy < oy1; oy++)                                               \
                        for (int64_t ox = ox0; ox < ox1; ox++)                                           \
                            sum += (double)go[oy * p->out_w + ox] / (double)window_h(p, oy) /            \
                                   (double)window_w(p, ox);                                              \
                    gi[y * p->width + x] = (T)sum;                                                       \
                }                                                                                        \
            }                                                                                            \
        }                                                                                                \
    }                                                                                                    \
                                                                                                         \
    void tj_k_adaptive_avg_pool2d_backward_##SUF(const tj_k_pool2d *p, const T *grad_out, T *grad_in)    \
    {                                                                                                    \
        adaptive_args_##SUF a = {.p = p, .src = grad_out, .dst = grad_in};                               \
        tj_k_parallel(p->threads, p->batch * p->channels, adaptive_avg_backward_planes_##SUF, &a);       \
    }

ADAPTIVE_AVGPOOL_DEFINE(float, f32)
ADAPTIVE_AVGPOOL_DEFINE(double, f64)

/* Adaptive max pooling: ATen's cpu_adaptive_max_pool loop, the window's
 * first position the start (a window of -inf keeps it). */
#define ADAPTIVE_MAXPOOL_DEFINE(T, SUF)                                                                  \
    typedef struct adaptive_max_args_##SUF {                                                             \
        const tj_k_pool2d *p;                                                                            \
        const T *src;                                                                                    \
        T *dst;                                                                                          \
        int64_t *idx;                                                                                    \
    } adaptive_max_args_##SUF;                                                                           \
                                                                                                         \
    static void adaptive_max_planes_##SUF(void *ctx, int t, int64_t begin, int64_t end)                  \
    {                                                                                                    \
        const adaptive_max_args_##SUF *a = ctx;                                                          \
        const tj_k_pool2d *p = a->p;                                                                     \
        (void)t;                                                                                         \
        for (int64_t pl = begin; pl < end; pl++) {                                                       \
            const T *src = PLANE(p, a->src, pl);                                                         \
            T *o = a->dst + pl * p->out_h * p->out_w;                                                    \
            int64_t *ix = a->idx + pl * p->out_h * p->out_w;                                             \
            for (int64_t oy = 0; oy < p->out_h; oy++) {                                                  \
                int64_t y0 = tj_k_adaptive_start(oy, p->out_h, p->height);                               \
                int64_t y1 = tj_k_adaptive_end(oy, p->out_h, p->height);                                 \
                for (int64_t ox = 0; ox < p->out_w; ox++) {                                              \
                    int64_t x0 = tj_k_adaptive_start(ox, p->out_w, p->width);                            \
                    int64_t x1 = tj_k_adaptive_end(ox, p->out_w, p->width);                              \
                    T best = -INFINITY;                                                                  \
                    int64_t at = y0 * p->width + x0;                                                     \
                    for (int64_t y = y0; y < y1; y++)                                                    \
                        for (int64_t x = x0; x < x1; x++) {                                              \
                            T v = src[y * p->ys + x * p->xs];                                            \
                            bool take = v > best || v != v;                                              \
                            best = take ? v : best;                                                      \
                            at = take ? y * p->width + x : at;                                           \
                        }                                                                                \
                    o[oy * p->out_w + ox] = best;                                                        \
                    ix[oy * p->out_w + ox] = at;                                                         \
                }                                                                                        \
            }                                                                                            \
        }                                                                                                \
    }                                                                                                    \
                                                                                                         \
    void tj_k_adaptive_max_pool2d_##SUF(const tj_k_pool2d *p, const T *in, T *out, int64_t *idx)         \
    {                                                                                                    \
        adaptive_max_args_##SUF a = {.p = p, .src = in, .dst = out, .idx = idx};                         \
        tj_k_parallel(p->threads, p->batch * p->channels, adaptive_max_planes_##SUF, &a);                \
    }

ADAPTIVE_MAXPOOL_DEFINE(float, f32)
ADAPTIVE_MAXPOOL_DEFINE(double, f64)
