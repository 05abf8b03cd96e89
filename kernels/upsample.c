/* Nearest, bilinear and bicubic resampling over planes of any strides: index and
 * weight tables once per output row and column, then one pass per plane,
 * planes split over threads (parallel.h). See upsample.h. */
#include "upsample.h"

#include <math.h>
#include <string.h>

#include "parallel.h"

/* ATen's compute_scales_value: 1 / the given scale factor, else in / out,
 * in the precision T. */
#define SCALE_VALUE(T, scale, in, out) ((scale) > 0. ? (T)(1.0 / (scale)) : (T)(in) / (T)(out))

void tj_k_nearest_indices(int64_t in, int64_t out, double scale, int64_t *idx)
{
    float s = SCALE_VALUE(float, scale, in, out);
    for (int64_t i = 0; i < out; i++) {
        int64_t src = (int64_t)floorf((float)i * s);
        idx[i] = out == in ? i : out == 2 * in ? i >> 1 : src < in - 1 ? src : in - 1;
    }
}

void tj_k_nearest_indices_nchw(int64_t in, int64_t out, double scale, bool f64, int64_t *idx)
{
    float s = SCALE_VALUE(float, scale, in, out);
    double sd = SCALE_VALUE(double, scale, in, out);
    for (int64_t i = 0; i < out; i++) {
        /* ATen: floorf of the position in the dtype (a double rounded to float first) */
        float real = f64 ? (float)((double)i * sd) : (float)i * s;
        int64_t src = (int64_t)floorf(real);
        idx[i] = src < in - 1 ? src : in - 1;
    }
}

/* a * b + c as ATen's kernels compute it: compiled with FMA contraction,
 * one rounding. For float32 the product is exact in double and the sum
 * rounded once more (the same float but where that double rounding ties);
 * float64 rounds the product, as a build without FMA does. */
#define MULADD_f32(a, b, c) ((float)((double)(a) * (double)(b) + (double)(c)))
#define MULADD_f64(a, b, c) ((a) * (b) + (c))

/* Offset in elements of volume v (= n * channels + c) of the strided input. */
static inline int64_t in_volume_offset(const tj_k_upsample *p, int64_t v)
{
    return (v / p->channels) * p->ns + (v % p->channels) * p->cs;
}

/* The tj_k_parallel body running PLANE(args, pl) on planes [begin, end):
 * PLANE is a static inline function of one plane, so the loops over a plane
 * compile as if written here. */
#define DEFINE_PLANES_TASK(NAME, PLANE)                                                                         \
    static void NAME(void *ctx, int th, int64_t begin, int64_t end)                                              \
    {                                                                                                            \
        (void)th;                                                                                                \
        for (int64_t pl = begin; pl < end; pl++) PLANE(ctx, pl);                                                 \
    }

#define DEFINE_UPSAMPLE(T, SUF)                                                                                     \
    void tj_k_linear_indices_##SUF(int64_t in, int64_t out, double scale, bool align_corners, int64_t *i0,        \
                                   int64_t *i1, T *l0, T *l1)                                                     \
    {                                                                                                             \
        T s = align_corners ? (out > 1 ? (T)(in - 1) / (T)(out - 1) : (T)0) : SCALE_VALUE(T, scale, in, out);     \
        for (int64_t i = 0; i < out; i++) {                                                                       \
            if (out == in) { /* ATen copies: no arithmetic on the index */                                        \
                i0[i] = i1[i] = i;                                                                                \
                l0[i] = 1, l1[i] = 0;                                                                             \
                continue;                                                                                         \
            }                                                                                                     \
            /* the source position stays in double until the weight is rounded (PyTorch 1.13's float32 weights) */ \
            double real = align_corners ? (double)s * (double)i : (double)s * ((double)i + 0.5) - 0.5;            \
            if (real < 0) real = 0;                                                                               \
            i0[i] = (int64_t)real;                                                                                \
            i1[i] = i0[i] + (i0[i] < in - 1 ? 1 : 0);                                                             \
            l1[i] = (T)(real - (double)i0[i]);                                                                    \
            l0[i] = (T)1 - l1[i];                                                                                 \
        }                                                                                                         \
    }                                                                                                             \
                                                                                                                  \
    /* What every plane task reads: nearest uses nt, linear lt. */                                               \
    typedef struct planes_args_##SUF {                                                                            \
        const tj_k_upsample *p;                                                                                   \
        const tj_k_nearest_tables *nt;                                                                            \
        const tj_k_linear_tables_##SUF *lt;                                                                       \
        const T *in;                                                                                              \
        T *out, *scratch;                                                                                         \
    } planes_args_##SUF;                                                                                          \
                                                                                                                  \
    /* output plane pl = (volume, oz) */                                                                          \
    static inline void nearest_plane_##SUF(const planes_args_##SUF *a, int64_t pl)                                \
    {                                                                                                             \
        const tj_k_upsample *p = a->p;                                                                            \
        const tj_k_nearest_tables *t = a->nt;                                                                     \
        const T *src = a->in + in_volume_offset(p, pl / p->out_d) + t->z[pl % p->out_d] * p->zs;                  \
        T *dst = a->out + pl * p->out_h * p->out_w;                                                               \
        for (int64_t y = 0; y < p->out_h; y++, dst += p->out_w) {                                                 \
            const T *row = src + t->y[y] * p->ys;                                                                 \
            for (int64_t x = 0; x < p->out_w; x++) dst[x] = row[t->x[x] * p->xs];                                 \
        }                                                                                                         \
    }                                                                                                             \
    DEFINE_PLANES_TASK(nearest_planes_##SUF, nearest_plane_##SUF)                                                 \
                                                                                                                  \
    void tj_k_upsample_nearest_##SUF(const tj_k_upsample *p, const tj_k_nearest_tables *t, const T *in, T *out)   \
    {                                                                                                             \
        planes_args_##SUF a = {p, t, NULL, in, out, NULL};                                                        \
        tj_k_parallel(p->threads, p->batch * p->channels * p->out_d, nearest_planes_##SUF, &a);                   \
    }                                                                                                             \
                                                                                                                  \
    /* volume v: every output plane adds into the input plane it read */                                          \
    static inline void nearest_backward_volume_##SUF(const planes_args_##SUF *a, int64_t v)                       \
    {                                                                                                             \
        const tj_k_upsample *p = a->p;                                                                            \
        const tj_k_nearest_tables *t = a->nt;                                                                     \
        int64_t plane = p->height * p->width;                                                                     \
        T *gv = a->out + v * p->depth * plane;                                                                    \
        const T *go = a->in + v * p->out_d * p->out_h * p->out_w;                                                 \
        memset(gv, 0, sizeof(T) * (size_t)(p->depth * plane));                                                    \
        for (int64_t z = 0; z < p->out_d; z++) {                                                                  \
            T *gi = gv + t->z[z] * plane;                                                                         \
            for (int64_t y = 0; y < p->out_h; y++, go += p->out_w) {                                              \
                T *row = gi + t->y[y] * p->width;                                                                 \
                for (int64_t x = 0; x < p->out_w; x++) row[t->x[x]] += go[x];                                     \
            }                                                                                                     \
        }                                                                                                         \
    }                                                                                                             \
    DEFINE_PLANES_TASK(nearest_backward_volumes_##SUF, nearest_backward_volume_##SUF)                             \
                                                                                                                  \
    void tj_k_upsample_nearest_backward_##SUF(const tj_k_upsample *p, const tj_k_nearest_tables *t,               \
                                              const T *grad_out, T *grad_in)                                      \
    {                                                                                                             \
        planes_args_##SUF a = {p, t, NULL, grad_out, grad_in, NULL};                                              \
        tj_k_parallel(p->threads, p->batch * p->channels, nearest_backward_volumes_##SUF, &a);                    \
    }                                                                                                             \
                                                                                                                  \
    /* ATen's interpolate along a row (x0, x1 scaled by the column stride) */                                     \
    static inline T lerp_row_##SUF(const T *r, int64_t x0, int64_t x1, T l0, T l1)                                \
    {                                                                                                             \
        return MULADD_##SUF(r[x0], l0, r[x1] * l1);                                                               \
    }                                                                                                             \
                                                                                                                  \
    /* Every row of input plane `src`, interpolated along x (ATen's inner  \
     * sums, the same for every output row that reads the row) into h. */   \
    static inline void lerp_rows_##SUF(const tj_k_upsample *p, const tj_k_linear_tables_##SUF *t, const T *src,  \
                                       T *h)                                                                      \
    {                                                                                                             \
        for (int64_t r = 0; r < p->height; r++, h += p->out_w)                                                    \
            for (int64_t x = 0; x < p->out_w; x++)                                                                \
                h[x] = lerp_row_##SUF(src + r * p->ys, t->x0[x] * p->xs, t->x1[x] * p->xs, t->lx0[x], t->lx1[x]); \
    }                                                                                                             \
                                                                                                                  \
    /* Output planes [begin, end) = (volume, oz): 1-d interpolates each row; */                                   \
    /* 2-d and 3-d take their source planes' x-interpolated rows (thread    */                                   \
    /* th's scratch, 1 or 2 planes) and blend them across rows, then       */                                   \
    /* planes: the values ATen's per-output loop forms, the inner loop     */                                   \
    /* contiguous. */                                                                                             \
    static void linear_planes_##SUF(void *ctx, int th, int64_t begin, int64_t end)                                \
    {                                                                                                             \
        const planes_args_##SUF *a = ctx;                                                                         \
        const tj_k_upsample *p = a->p;                                                                            \
        const tj_k_linear_tables_##SUF *t = a->lt;                                                                \
        int64_t rows = p->height * p->out_w; /* one source plane's */                                            \
        T *h0 = a->scratch + (int64_t)th * (p->spatial == 3 ? 2 : 1) * rows, *h1 = h0 + rows;                     \
        for (int64_t pl = begin; pl < end; pl++) {                                                                \
            int64_t oz = pl % p->out_d;                                                                           \
            const T *vol = a->in + in_volume_offset(p, pl / p->out_d);                                            \
            T *dst = a->out + pl * p->out_h * p->out_w;                                                           \
            if (p->spatial == 1) {                                                                                \
                lerp_rows_##SUF(p, t, vol, dst);                                                                  \
                continue;                                                                                         \
            }                                                                                                     \
            lerp_rows_##SUF(p, t, vol + t->z0[oz] * p->zs, h0);                                                   \
            if (p->spatial == 3) lerp_rows_##SUF(p, t, vol + t->z1[oz] * p->zs, h1);                              \
            T lz0 = t->lz0[oz], lz1 = t->lz1[oz];                                                                 \
            for (int64_t y = 0; y < p->out_h; y++, dst += p->out_w) {                                             \
                int64_t y0 = t->y0[y] * p->out_w, y1 = t->y1[y] * p->out_w;                                       \
                T ly0 = t->ly0[y], ly1 = t->ly1[y];                                                               \
                const T *a0 = h0 + y0, *a1 = h0 + y1, *b0 = h1 + y0, *b1 = h1 + y1;                               \
                if (p->spatial == 2)                                                                              \
                    for (int64_t x = 0; x < p->out_w; x++) dst[x] = MULADD_##SUF(a0[x], ly0, a1[x] * ly1);        \
                else                                                                                              \
                    for (int64_t x = 0; x < p->out_w; x++)                                                        \
                        dst[x] = MULADD_##SUF(MULADD_##SUF(a0[x], ly0, a1[x] * ly1), lz0,                         \
                                              MULADD_##SUF(b0[x], ly0, b1[x] * ly1) * lz1);                       \
            }                                                                                                     \
        }                                                                                                         \
    }                                                                                                             \
                                                                                                                  \
    void tj_k_upsample_linear_##SUF(const tj_k_upsample *p, const tj_k_linear_tables_##SUF *t, const T *in,       \
                                    T *out, T *scratch)                                                           \
    {                                                                                                             \
        planes_args_##SUF a = {p, NULL, t, in, out, scratch};                                                     \
        tj_k_parallel(p->threads, p->batch * p->channels * p->out_d, linear_planes_##SUF, &a);                    \
    }                                                                                                             \
                                                                                                                  \
    /* One output row's gradient into n input rows (n = 1, 2, 4: a        \
     * constant where it is inlined): r[k][x0], r[k][x1] get g w[k] lx0,    \
     * g w[k] lx1, k in order, as ATen's loops add them. */                 \
    static inline void linear_backward_row_##SUF(T *const *r, const T *w, int n, const tj_k_linear_tables_##SUF *t, \
                                                 const T *go, int64_t out_w)                                      \
    {                                                                                                             \
        for (int64_t x = 0; x < out_w; x++) {                                                                     \
            int64_t x0 = t->x0[x], x1 = t->x1[x];                                                                 \
            T lx0 = t->lx0[x], lx1 = t->lx1[x], g = go[x];                                                        \
            for (int k = 0; k < n; k++) {                                                                         \
                r[k][x0] = MULADD_##SUF(w[k] * lx0, g, r[k][x0]);                                                 \
                r[k][x1] = MULADD_##SUF(w[k] * lx1, g, r[k][x1]);                                                 \
            }                                                                                                     \
        }                                                                                                         \
    }                                                                                                             \
                                                                                                                  \
    /* volume v: the rows each output row adds into, with their weights */                                        \
    /* (the plane's times the row's for 3-d, 1 for 1-d: exact) */                                                 \
    static inline void linear_backward_volume_##SUF(const planes_args_##SUF *a, int64_t v)                        \
    {                                                                                                             \
        const tj_k_upsample *p = a->p;                                                                            \
        const tj_k_linear_tables_##SUF *t = a->lt;                                                                \
        int64_t plane = p->height * p->width;                                                                     \
        T *gv = a->out + v * p->depth * plane;                                                                    \
        const T *go = a->in + v * p->out_d * p->out_h * p->out_w;                                                 \
        memset(gv, 0, sizeof(T) * (size_t)(p->depth * plane));                                                    \
        for (int64_t z = 0; z < p->out_d; z++) {                                                                  \
            T *q0 = gv + t->z0[z] * plane, *q1 = gv + t->z1[z] * plane;                                           \
            for (int64_t y = 0; y < p->out_h; y++, go += p->out_w) {                                              \
                int64_t y0 = t->y0[y] * p->width, y1 = t->y1[y] * p->width;                                       \
                T ly0 = t->ly0[y], ly1 = t->ly1[y], lz0 = t->lz0[z], lz1 = t->lz1[z];                             \
                if (p->spatial == 1) {                                                                            \
                    T *r[1] = {q0 + y0}, w[1] = {(T)1};                                                           \
                    linear_backward_row_##SUF(r, w, 1, t, go, p->out_w);                                          \
                } else if (p->spatial == 2) {                                                                     \
                    T *r[2] = {q0 + y0, q0 + y1}, w[2] = {ly0, ly1};                                              \
                    linear_backward_row_##SUF(r, w, 2, t, go, p->out_w);                                          \
                } else {                                                                                          \
                    T *r[4] = {q0 + y0, q0 + y1, q1 + y0, q1 + y1};                                               \
                    T w[4] = {lz0 * ly0, lz0 * ly1, lz1 * ly0, lz1 * ly1};                                        \
                    linear_backward_row_##SUF(r, w, 4, t, go, p->out_w);                                          \
                }                                                                                                 \
            }                                                                                                     \
        }                                                                                                         \
    }                                                                                                             \
    DEFINE_PLANES_TASK(linear_backward_volumes_##SUF, linear_backward_volume_##SUF)                               \
                                                                                                                  \
    void tj_k_upsample_linear_backward_##SUF(const tj_k_upsample *p, const tj_k_linear_tables_##SUF *t,           \
                                             const T *grad_out, T *grad_in)                                       \
    {                                                                                                             \
        planes_args_##SUF a = {p, NULL, t, grad_out, grad_in, NULL};                                              \
        tj_k_parallel(p->threads, p->batch * p->channels, linear_backward_volumes_##SUF, &a);                     \
    }

DEFINE_UPSAMPLE(float, f32)
DEFINE_UPSAMPLE(double, f64)

/* ATen's cubic_convolution1 (|t| <= 1) and cubic_convolution2 (1 < |t| < 2). */
#define CUBIC1(x, A) ((((A) + 2) * (x) - ((A) + 3)) * (x) * (x) + 1)
#define CUBIC2(x, A) (((((A) * (x)) - (5 * (A))) * (x) + (8 * (A))) * (x) - (4 * (A)))

#define DEFINE_BICUBIC(T, SUF)                                                                                    \
    void tj_k_cubic_indices_##SUF(int64_t in, int64_t out, double scale, bool align_corners, int64_t *idx, T *w)  \
    {                                                                                                             \
        T s = align_corners ? (out > 1 ? (T)(in - 1) / (T)(out - 1) : (T)0) : SCALE_VALUE(T, scale, in, out);     \
        const T A = (T)-0.75;                                                                                     \
        for (int64_t i = 0; i < out; i++) {                                                                       \
            T real = align_corners ? s * (T)i : s * ((T)i + (T)0.5) - (T)0.5;                                     \
            int64_t f = (int64_t)floor((double)real);                                                             \
            T t = real - (T)f, t2 = (T)1 - t;                                                                     \
            T c[4] = {CUBIC2(t + (T)1, A), CUBIC1(t, A), CUBIC1(t2, A), CUBIC2(t2 + (T)1, A)};       \
            for (int j = 0; j < 4; j++) {                                                                         \
                int64_t k = f - 1 + j;                                                                            \
                idx[4 * i + j] = k < 0 ? 0 : k > in - 1 ? in - 1 : k;                                             \
                w[4 * i + j] = c[j];                                                                              \
            }                                                                                                     \
        }                                                                                                         \
    }                                                                                                             \
                                                                                                                  \
    typedef struct cubic_args_##SUF {                                                                             \
        const tj_k_upsample *p;                                                                                 \
        const tj_k_cubic_tables_##SUF *t;                                                                         \
        const T *in;                                                                                              \
        T *out, *scratch;                                                                                         \
    } cubic_args_##SUF;                                                                                           \
                                                                                                                  \
    /* Every input row's 4-tap column sums (the inner sums of ATen's loop, \
     * the same for every output row that reads the row), then each output \
     * row the 4-tap sum of its rows' sums: contiguous, so it vectorises. */ \
    static void bicubic_planes_##SUF(void *ctx, int th, int64_t begin, int64_t end)                               \
    {                                                                                                             \
        const cubic_args_##SUF *a = ctx;                                                                          \
        const tj_k_upsample *p = a->p;                                                                          \
        const tj_k_cubic_tables_##SUF *t = a->t;                                                                  \
        T *h = a->scratch + (int64_t)th * p->height * p->out_w;                                                   \
        for (int64_t pl = begin; pl < end; pl++) {                                                                \
            const T *src = a->in + in_volume_offset(p, pl);                                                        \
            T *dst = a->out + pl * p->out_h * p->out_w;                                                           \
            for (int64_t r = 0; r < p->height; r++) {                                                             \
                const T *row = src + r * p->ys;                                                                   \
                T *hr = h + r * p->out_w;                                                                         \
                for (int64_t x = 0; x < p->out_w; x++) {                                                          \
                    const int64_t *ix = t->x + 4 * x;                                                             \
                    const T *wx = t->wx + 4 * x;                                                                  \
                    T v = row[ix[0] * p->xs] * wx[0];                                                             \
                    v = MULADD_##SUF(row[ix[1] * p->xs], wx[1], v);                                               \
                    v = MULADD_##SUF(row[ix[2] * p->xs], wx[2], v);                                               \
                    hr[x] = MULADD_##SUF(row[ix[3] * p->xs], wx[3], v);                                           \
                }                                                                                                 \
            }                                                                                                     \
            for (int64_t y = 0; y < p->out_h; y++, dst += p->out_w) {                                             \
                const int64_t *iy = t->y + 4 * y;                                                                 \
                const T *h0 = h + iy[0] * p->out_w, *h1 = h + iy[1] * p->out_w;                                   \
                const T *h2 = h + iy[2] * p->out_w, *h3 = h + iy[3] * p->out_w;                                   \
                T w0 = t->wy[4 * y], w1 = t->wy[4 * y + 1], w2 = t->wy[4 * y + 2], w3 = t->wy[4 * y + 3];         \
                for (int64_t x = 0; x < p->out_w; x++) {                                                          \
                    T v = h0[x] * w0;                                                                             \
                    v = MULADD_##SUF(h1[x], w1, v);                                                               \
                    v = MULADD_##SUF(h2[x], w2, v);                                                               \
                    dst[x] = MULADD_##SUF(h3[x], w3, v);                                                          \
                }                                                                                                 \
            }                                                                                                     \
        }                                                                                                         \
    }                                                                                                             \
                                                                                                                  \
    void tj_k_upsample_bicubic2d_##SUF(const tj_k_upsample *p, const tj_k_cubic_tables_##SUF *t, const T *in,   \
                                       T *out, T *scratch)                                                        \
    {                                                                                                             \
        cubic_args_##SUF a = {p, t, in, out, scratch};                                                            \
        tj_k_parallel(p->threads, p->batch * p->channels, bicubic_planes_##SUF, &a);                              \
    }                                                                                                             \
                                                                                                                  \
    static inline void bicubic_backward_plane_##SUF(const cubic_args_##SUF *a, int64_t pl)                        \
    {                                                                                                             \
        const tj_k_upsample *p = a->p;                                                                          \
        const tj_k_cubic_tables_##SUF *t = a->t;                                                                  \
        T *gi = a->out + pl * p->height * p->width;                                                               \
        const T *go = a->in + pl * p->out_h * p->out_w;                                                           \
        memset(gi, 0, sizeof(T) * (size_t)(p->height * p->width));                                                \
        for (int64_t y = 0; y < p->out_h; y++, go += p->out_w) {                                                  \
            const int64_t *iy = t->y + 4 * y;                                                                     \
            const T *wy = t->wy + 4 * y;                                                                          \
            for (int64_t x = 0; x < p->out_w; x++) {                                                              \
                const int64_t *ix = t->x + 4 * x;                                                                 \
                const T *wx = t->wx + 4 * x;                                                                      \
                for (int k = 0; k < 4; k++)                                                                       \
                    for (int j = 0; j < 4; j++) {                                                                 \
                        T *at = gi + iy[j] * p->width + ix[k];                                                    \
                        *at = MULADD_##SUF(go[x] * wy[j], wx[k], *at);                                            \
                    }                                                                                             \
            }                                                                                                     \
        }                                                                                                         \
    }                                                                                                             \
    DEFINE_PLANES_TASK(bicubic_backward_planes_##SUF, bicubic_backward_plane_##SUF)                               \
                                                                                                                  \
    void tj_k_upsample_bicubic2d_backward_##SUF(const tj_k_upsample *p, const tj_k_cubic_tables_##SUF *t,       \
                                                const T *grad_out, T *grad_in)                                    \
    {                                                                                                             \
        cubic_args_##SUF a = {p, t, grad_out, grad_in, NULL};                                                     \
        tj_k_parallel(p->threads, p->batch * p->channels, bicubic_backward_planes_##SUF, &a);                     \
    }

DEFINE_BICUBIC(float, f32)
DEFINE_BICUBIC(double, f64)
