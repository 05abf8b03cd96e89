/* Grid sampling (see grid_sample.h): one sample per item of a parallel
 * loop, so that the backward's scatter into grad_in never races. */
#include <math.h>
#include <string.h>

#include "grid_sample.h"
#include "parallel.h"

/* The source coordinate of grid coordinate `coord` along a dim of `size`
 * elements, and its derivative with respect to coord in *grad (ATen's
 * grid_sampler_compute_source_index_set_grad). */
static double source_index(const tj_k_grid_sample *g, double coord, int64_t size, double *grad)
{
    double s = (double)size, x, d;
    if (g->align_corners) x = (coord + 1) / 2 * (s - 1), d = (s - 1) / 2;
    else x = ((coord + 1) * s - 1) / 2, d = s / 2;
    if (g->padding == TJ_K_GRID_REFLECTION) {
        double lo = g->align_corners ? 0 : -1, hi = g->align_corners ? 2 * (s - 1) : 2 * s - 1;
        if (lo == hi) {
            x = 0, d = 0;
        } else {
            double min = lo / 2, span = (hi - lo) / 2, sign = 1;
            x -= min;
            if (x < 0) sign = -1, x = -x;
            double extra = fmod(x, span), flips = floor(x / span);
            bool even = fmod(flips, 2) == 0;
            x = even ? extra + min : span - extra + min;
            d *= even ? sign : -sign;
        }
    }
    if (g->padding != TJ_K_GRID_ZEROS) { /* clip into [0, size - 1] */
        if (x <= 0) x = 0, d = 0;
        else if (x >= s - 1) x = s - 1, d = 0;
    }
    *grad = d;
    return x;
}

static bool inside(int64_t y, int64_t x, int64_t h, int64_t w) { return y >= 0 && y < h && x >= 0 && x < w; }

/* v as an index when it is one far enough inside int64 to convert (nan,
 * inf and huge coordinates of zeros padding sample nothing); else -2,
 * outside every corner's reach. */
static int64_t index_of(double v) { return fabs(v) < 0x1p52 ? (int64_t)v : -2; }

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
                double fx = floor(x), fy = floor(y);                                                           \
                int64_t x0 = index_of(fx), y0 = index_of(fy);                                                  \
                bool finite = x0 != -2 && y0 != -2;                                                            \
                T wx1 = (T)(x - fx), wy1 = (T)(y - fy), wx0 = (T)(fx + 1 - x), wy0 = (T)(fy + 1 - y);         \
                T w[4] = {wx0 * wy0, wx1 * wy0, wx0 * wy1, wx1 * wy1};                                         \
                int64_t at[4];                                                                                 \
                bool ok[4];                                                                                    \
                for (int k = 0; k < 4; k++) {                                                                  \
                    int64_t yy = y0 + k / 2, xx = x0 + k % 2;                                                  \
                    ok[k] = finite && inside(yy, xx, H, W);                                                    \
                    at[k] = ok[k] ? yy * W + xx : 0;                                                           \
                }                                                                                              \
                for (int64_t c = 0; c < g->c; c++) {                                                           \
                    const T *s = src + c * plane;                                                              \
                    T v = 0;                                                                                   \
                    for (int k = 0; k < 4; k++)                                                                \
                        if (ok[k]) v += s[at[k]] * w[k];                                                       \
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
                double fx = floor(x), fy = floor(y);                                                           \
                int64_t x0 = index_of(fx), y0 = index_of(fy);                                                  \
                bool finite = x0 != -2 && y0 != -2;                                                            \
                T wx1 = (T)(x - fx), wy1 = (T)(y - fy), wx0 = (T)(fx + 1 - x), wy0 = (T)(fy + 1 - y);         \
                T w[4] = {wx0 * wy0, wx1 * wy0, wx0 * wy1, wx1 * wy1};                                         \
                /* d w[k] / dx and / dy: corners nw, ne, sw, se */                                             \
                T wdx[4] = {-wy0, wy0, -wy1, wy1}, wdy[4] = {-wx0, -wx1, wx0, wx1};                            \
                T sx = 0, sy = 0;                                                                              \
                for (int k = 0; k < 4; k++) {                                                                  \
                    int64_t yy = y0 + k / 2, xx = x0 + k % 2;                                                  \
                    if (!finite || !inside(yy, xx, H, W)) continue;                                            \
                    int64_t at = yy * W + xx;                                                                  \
                    for (int64_t c = 0; c < C; c++) {                                                          \
                        T gv = go[c * P];                                                                      \
                        if (gi) gi[c * plane + at] += w[k] * gv;                                               \
                        T v = src[c * plane + at] * gv;                                                        \
                        sx += wdx[k] * v;                                                                      \
                        sy += wdy[k] * v;                                                                      \
                    }                                                                                          \
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
