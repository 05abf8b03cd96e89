/* Grid sampling (see grid_sample.h): one sample per item of a parallel
 * loop, so that the backward's scatter into grad_in never races. The
 * coordinate arithmetic follows ATen's vectorised CPU kernel
 * (cpu/GridSamplerKernel.cpp, ComputeLocation and ApplyGridSample), which is
 * what torch runs for float32 and float64, down to what it does with nan
 * and infinite grid coordinates (see source_index). */
#include <math.h>
#include <string.h>

#include "grid_sample.h"
#include "parallel.h"

/* Clips x into [0, size - 1]; nan clips to 0 as in ATen's forward (its
 * clamp_min puts the bound first). The clip's derivative is 0 at and beyond
 * the bounds and for nan: ATen's backward turns nan into an out-of-range
 * gather there (a crash), the clipped forward value's derivative is the
 * sane answer. */
static double clip(double x, double s, double *d)
{
    if (!(x > 0)) return *d = 0, 0;
    if (x >= s - 1) return *d = 0, s - 1;
    return x;
}

/* The source coordinate of grid coordinate `coord` along a dim of `size`
 * elements, and its derivative with respect to coord in *grad. Zeros
 * padding keeps nan and ±inf (the bilinear weights then turn the sample
 * nan, nearest samples nothing); border and reflection padding send them
 * to 0 (reflecting ±inf gives nan, which the clip takes to 0). */
static double source_index(const tj_k_grid_sample *g, double coord, int64_t size, double *grad)
{
    double s = (double)size, scale = g->align_corners ? (s - 1) / 2 : s / 2;
    double x = g->align_corners ? (coord + 1) * scale : (coord + 1) * scale - 0.5, d = scale;
    if (g->padding == TJ_K_GRID_REFLECTION) {
        if (g->align_corners && size <= 1) {
            x = 0, d = 0;
        } else { /* reflect about low and low + span (span = twice_span / 2) */
            double low = g->align_corners ? 0 : -0.5, twice_span = g->align_corners ? 2 * (s - 1) : 2 * s;
            double in = x - low, a = fabs(in);
            double extra = a - trunc(a / twice_span) * twice_span, reflected = twice_span - extra;
            bool flip = extra > reflected;
            x = (flip ? reflected : extra) + low;
            if (flip != (in < 0)) d = -d;
        }
    }
    if (g->padding != TJ_K_GRID_ZEROS) {
        double dc = 1;
        x = clip(x, s, &dc);
        d *= dc;
    }
    *grad = d;
    return x;
}

static bool inside(int64_t y, int64_t x, int64_t h, int64_t w) { return y >= 0 && y < h && x >= 0 && x < w; }

/* v as an index when it is one far enough inside int64 to convert (nan,
 * inf and huge coordinates of zeros padding sample nothing); else -2,
 * outside every corner's reach. */
static int64_t index_of(double v) { return fabs(v) < 0x1p52 ? (int64_t)v : -2; }

/* The bilinear neighbourhood of source point (x, y): its distances to the
 * west, east, north and south sides, the corners' (nw, ne, sw, se) weights
 * and offsets, and which corners lie inside the input. As in ATen, the
 * weights are computed whether or not the corners are inside, so that a nan
 * or infinite coordinate makes the sample and the grid gradient nan (an
 * outside corner's value is 0, and 0 * nan is nan). */
typedef struct corners {
    double w, e, n, s, weight[4];
    int64_t at[4];
    bool ok[4];
} corners;

static void corners_of(double x, double y, int64_t h, int64_t w, corners *c)
{
    double fx = floor(x), fy = floor(y);
    c->w = x - fx, c->e = 1 - c->w, c->n = y - fy, c->s = 1 - c->n;
    double weight[4] = {c->s * c->e, c->s * c->w, c->n * c->e, c->n * c->w};
    memcpy(c->weight, weight, sizeof weight);
    int64_t x0 = index_of(fx), y0 = index_of(fy);
    for (int k = 0; k < 4; k++) {
        int64_t yy = y0 + k / 2, xx = x0 + k % 2;
        c->ok[k] = inside(yy, xx, h, w);
        c->at[k] = c->ok[k] ? yy * w + xx : 0;
    }
}

typedef struct gs_args {
    const tj_k_grid_sample *g;
    const void *in, *grid, *grad_out;
    void *out, *grad_in, *grad_grid;
} gs_args;

#define GRID_SAMPLE_DEFINE(T, SUF)                                                                             \
    static void forward_samples_##SUF(void *ctx, int t, int64_t begin, int64_t end)                            \
    {                                                                                                          \
        const gs_args *a = ctx;                                                                                \
        const tj_k_grid_sample *g = a->g;                                                                      \
        int64_t H = g->in_h, W = g->in_w, plane = H * W, P = g->out_h * g->out_w;                              \
        (void)t;                                                                                               \
        for (int64_t n = begin; n < end; n++)                                                                  \
            for (int64_t p = 0; p < P; p++) {                                                                  \
                const T *gp = (const T *)a->grid + (n * P + p) * 2;                                            \
                double unused;                                                                                 \
                double x = source_index(g, gp[0], W, &unused), y = source_index(g, gp[1], H, &unused);         \
                const T *src = (const T *)a->in + n * g->c * plane;                                            \
                T *dst = (T *)a->out + n * g->c * P + p;                                                       \
                if (g->mode == TJ_K_GRID_NEAREST) {                                                            \
                    int64_t xi = index_of(nearbyint(x)), yi = index_of(nearbyint(y));                          \
                    bool ok = inside(yi, xi, H, W);                                                            \
                    for (int64_t c = 0; c < g->c; c++) dst[c * P] = ok ? src[c * plane + yi * W + xi] : 0;     \
                    continue;                                                                                  \
                }                                                                                              \
                corners cn;                                                                                    \
                corners_of(x, y, H, W, &cn);                                                                   \
                for (int64_t c = 0; c < g->c; c++) {                                                           \
                    const T *s = src + c * plane;                                                              \
                    T v = 0;                                                                                   \
                    for (int k = 0; k < 4; k++) v += (cn.ok[k] ? s[cn.at[k]] : 0) * (T)cn.weight[k];           \
                    dst[c * P] = v;                                                                            \
                }                                                                                              \
            }                                                                                                  \
    }                                                                                                          \
                                                                                                               \
    void tj_k_grid_sample_##SUF(const tj_k_grid_sample *g, const T *in, const T *grid, T *out)                 \
    {                                                                                                          \
        gs_args a = {.g = g, .in = in, .grid = grid, .out = out};                                              \
        tj_k_parallel(g->threads, g->n, forward_samples_##SUF, &a);                                            \
    }                                                                                                          \
                                                                                                               \
    static void backward_samples_##SUF(void *ctx, int t, int64_t begin, int64_t end)                           \
    {                                                                                                          \
        const gs_args *a = ctx;                                                                                \
        const tj_k_grid_sample *g = a->g;                                                                      \
        int64_t H = g->in_h, W = g->in_w, plane = H * W, P = g->out_h * g->out_w, C = g->c;                    \
        T *gin = a->grad_in, *ggrid = a->grad_grid;                                                            \
        (void)t;                                                                                               \
        for (int64_t n = begin; n < end; n++) {                                                                \
            if (gin) memset(gin + n * C * plane, 0, sizeof(T) * (size_t)(C * plane));                          \
            for (int64_t p = 0; p < P; p++) {                                                                  \
                const T *gp = (const T *)a->grid + (n * P + p) * 2;                                            \
                double dx, dy;                                                                                 \
                double x = source_index(g, gp[0], W, &dx), y = source_index(g, gp[1], H, &dy);                 \
                const T *src = (const T *)a->in + n * C * plane, *go = (const T *)a->grad_out + n * C * P + p; \
                T *gi = gin ? gin + n * C * plane : NULL;                                                      \
                T *gg = ggrid ? ggrid + (n * P + p) * 2 : NULL;                                                \
                if (g->mode == TJ_K_GRID_NEAREST) {                                                            \
                    int64_t xi = index_of(nearbyint(x)), yi = index_of(nearbyint(y));                          \
                    if (gi && inside(yi, xi, H, W))                                                            \
                        for (int64_t c = 0; c < C; c++) gi[c * plane + yi * W + xi] += go[c * P];              \
                    if (gg) gg[0] = gg[1] = 0;                                                                 \
                    continue;                                                                                  \
                }                                                                                              \
                corners cn;                                                                                    \
                corners_of(x, y, H, W, &cn);                                                                   \
                T sx = 0, sy = 0;                                                                              \
                for (int64_t c = 0; c < C; c++) {                                                              \
                    T gv = go[c * P], v[4];                                                                    \
                    for (int k = 0; k < 4; k++) {                                                              \
                        v[k] = cn.ok[k] ? src[c * plane + cn.at[k]] : 0;                                       \
                        if (gi && cn.ok[k]) gi[c * plane + cn.at[k]] += (T)cn.weight[k] * gv;                  \
                    }                                                                                          \
                    sx += ((v[1] - v[0]) * (T)cn.s + (v[3] - v[2]) * (T)cn.n) * gv;                            \
                    sy += ((v[2] - v[0]) * (T)cn.e + (v[3] - v[1]) * (T)cn.w) * gv;                            \
                }                                                                                              \
                if (gg) gg[0] = (T)(dx * sx), gg[1] = (T)(dy * sy);                                            \
            }                                                                                                  \
        }                                                                                                      \
    }                                                                                                          \
                                                                                                               \
    void tj_k_grid_sample_backward_##SUF(const tj_k_grid_sample *g, const T *grad_out, const T *in,            \
                                         const T *grid, T *grad_in, T *grad_grid)                              \
    {                                                                                                          \
        gs_args a = {.g = g, .in = in, .grid = grid, .grad_out = grad_out, .grad_in = grad_in,                 \
                     .grad_grid = grad_grid};                                                                  \
        tj_k_parallel(g->threads, g->n, backward_samples_##SUF, &a);                                           \
    }

GRID_SAMPLE_DEFINE(float, f32)
GRID_SAMPLE_DEFINE(double, f64)
