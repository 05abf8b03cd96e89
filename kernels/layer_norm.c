/* Layer norm forward and backward over contiguous rows (see layer_norm.h):
 * rows are spread over threads; float32 blocks of rows go to the per-ISA rows. */
#include <math.h>

#include "cpu_isa.h"
#include "layer_norm.h"
#include "parallel.h"

/* columns per block when reducing the parameter gradients over rows */
#define COLS 256

typedef void (*rows_f32_fn)(const float *x, float *y, int64_t rows, int64_t n, const float *w, const float *b,
                            double eps, float *mean, float *rstd);

/* Portable row, the same algorithm in C (float32 keeps the mean's low part
 * m_lo; for float64 it is 0). A row whose values are all equal takes that
 * value as its mean, exactly (its sum in double need not be exact for
 * float64). */
#define DEFINE_ROW(T, SUF)                                                                                    \
    static void row_##SUF(const T *x, T *y, int64_t n, const T *w, const T *b, double eps, T *mean_out,       \
                          T *rstd_out)                                                                        \
    {                                                                                                         \
        double sum = 0;                                                                                       \
        T lo = x[0], hi = x[0];                                                                               \
        for (int64_t i = 0; i < n; i++) {                                                                     \
            sum += x[i];                                                                                      \
            lo = x[i] < lo ? x[i] : lo;                                                                       \
            hi = x[i] > hi ? x[i] : hi;                                                                       \
        }                                                                                                     \
        T m = (T)(sum / (double)n), m_lo = (T)(sum / (double)n - (double)m);                                  \
        if (lo == hi && m == m) m = lo, m_lo = 0;                                                             \
        double sd = 0, sq = 0;                                                                                \
        for (int64_t i = 0; i < n; i++) {                                                                     \
            double d = (double)(x[i] - m);                                                                    \
            sd += d;                                                                                          \
            sq += d * d;                                                                                      \
        }                                                                                                     \
        double var = (sq - sd * sd / (double)n) / (double)n;                                                  \
        T r = var != var ? (T)NAN : (T)(1.0 / sqrt((var > 0 ? var : 0) + eps));                               \
        for (int64_t i = 0; i < n; i++) {                                                                     \
            T t = (x[i] - m - m_lo) * r;                                                                      \
            if (w) t *= w[i];                                                                                 \
            if (b) t += b[i];                                                                                 \
            y[i] = t;                                                                                         \
        }                                                                                                     \
        *mean_out = m;                                                                                        \
        *rstd_out = r;                                                                                        \
    }
DEFINE_ROW(float, f32_c)
DEFINE_ROW(double, f64)

static void rows_f32_c(const float *x, float *y, int64_t rows, int64_t n, const float *w, const float *b, double eps,
                       float *mean, float *rstd)
{
    for (int64_t r = 0; r < rows; r++) row_f32_c(x + r * n, y + r * n, n, w, b, eps, mean + r, rstd + r);
}

static rows_f32_fn pick_rows_f32(void)
{
    tj_k_isa isa = tj_k_isa_active();
    return isa == TJ_K_ISA_AVX512 ? tj_k_layer_norm_rows_f32_avx512
           : isa == TJ_K_ISA_AVX2 ? tj_k_layer_norm_rows_f32_avx2
                                  : rows_f32_c;
}

static int threads_for(const tj_k_layer_norm_shape *s, int64_t items)
{
    int nt = (double)s->m * (double)s->n < 16384 ? 1 : s->nthreads;
    return nt > items ? (int)items : nt < 1 ? 1 : nt;
}

/* The forward's arguments, for forward_rows. */
typedef struct forward_args {
    const tj_k_layer_norm_shape *s;
    rows_f32_fn rows_f32;
    const void *x, *w, *b;
    double eps;
    void *y, *mean, *rstd;
} forward_args;

static void forward_rows(void *ctx, int t, int64_t r0, int64_t r1)
{
    const forward_args *a = ctx;
    (void)t;
    int64_t n = a->s->n;
    if (a->s->dtype == TJ_FLOAT32) {
        a->rows_f32((const float *)a->x + r0 * n, (float *)a->y + r0 * n, r1 - r0, n, a->w, a->b, a->eps,
                    (float *)a->mean + r0, (float *)a->rstd + r0);
        return;
    }
    for (int64_t r = r0; r < r1; r++)
        row_f64((const double *)a->x + r * n, (double *)a->y + r * n, n, a->w, a->b, a->eps, (double *)a->mean + r,
                (double *)a->rstd + r);
}

void tj_k_layer_norm(const tj_k_layer_norm_shape *s, const void *x, const void *w, const void *b, double eps,
                     void *y, void *mean, void *rstd)
{
    int64_t m = s->m;
    if (m == 0) return;
    forward_args a = {s, pick_rows_f32(), x, w, b, eps, y, mean, rstd};
    /* one contiguous block of rows per thread: each streams its own part */
    tj_k_parallel(threads_for(s, m), m, forward_rows, &a);
}

/* Input gradient of one row; sums in double. */
#define DEFINE_BACKWARD(T, SUF)                                                                               \
    static void grad_input_##SUF(const T *g, const T *x, T m, T r, const T *w, T *gx, int64_t n)              \
    {                                                                                                         \
        double sa = 0, sb = 0;                                                                                \
        for (int64_t j = 0; j < n; j++) {                                                                     \
            T wg = w ? g[j] * w[j] : g[j];                                                                    \
            sa += wg;                                                                                         \
            sb += (double)wg * ((x[j] - m) * r);                                                              \
        }                                                                                                     \
        T ca = (T)(sa / (double)n), cb = (T)(sb / (double)n);                                                 \
        for (int64_t j = 0; j < n; j++) {                                                                     \
            T wg = w ? g[j] * w[j] : g[j];                                                                    \
            gx[j] = r * (wg - ca - (x[j] - m) * r * cb);                                                      \
        }                                                                                                     \
    }                                                                                                         \
    /* Parameter gradients of columns [j0, j0 + c), summed over all rows. */                                  \
    static void grad_params_##SUF(const T *g, const T *x, const T *mean, const T *rstd, int64_t rows,         \
                                  int64_t n, int64_t j0, int64_t c, T *gw, T *gb)                             \
    {                                                                                                         \
        double aw[COLS] = {0}, ab[COLS] = {0};                                                                \
        for (int64_t r = 0; r < rows; r++) {                                                                  \
            const T *gr = g + r * n + j0, *xr = x + r * n + j0;                                               \
            T m = mean[r], rs = rstd[r];                                                                      \
            for (int64_t j = 0; j < c; j++) {                                                                 \
                aw[j] += (double)gr[j] * ((xr[j] - m) * rs);                                                  \
                ab[j] += gr[j];                                                                               \
            }                                                                                                 \
        }                                                                                                     \
        for (int64_t j = 0; j < c; j++) {                                                                     \
            if (gw) gw[j0 + j] = (T)aw[j];                                                                    \
            if (gb) gb[j0 + j] = (T)ab[j];                                                                    \
        }                                                                                                     \
    }
DEFINE_BACKWARD(float, f32)
DEFINE_BACKWARD(double, f64)

typedef void (*grad_input_f32_fn)(const float *g, const float *x, float m, float r, const float *w, float *gx,
                                  int64_t n);
typedef void (*grad_params_f32_fn)(const float *g, const float *x, const float *mean, const float *rstd,
                                   int64_t rows, int64_t n, int64_t j0, int64_t c, float *gw, float *gb);

/* The backward's arguments, for grad_input_rows and grad_params_blocks. */
typedef struct backward_args {
    const tj_k_layer_norm_shape *s;
    const void *g, *x, *mean, *rstd, *w;
    void *gx, *gw, *gb;
    grad_input_f32_fn grad_input;
    grad_params_f32_fn grad_params;
} backward_args;

/* Rows [r0, r1) of the input gradient. */
static void grad_input_rows(void *ctx, int t, int64_t r0, int64_t r1)
{
    const backward_args *a = ctx;
    int64_t n = a->s->n;
    (void)t;
    for (int64_t r = r0; r < r1; r++) {
        if (a->s->dtype == TJ_FLOAT32)
            a->grad_input((const float *)a->g + r * n, (const float *)a->x + r * n, ((const float *)a->mean)[r],
                          ((const float *)a->rstd)[r], a->w, (float *)a->gx + r * n, n);
        else
            grad_input_f64((const double *)a->g + r * n, (const double *)a->x + r * n, ((const double *)a->mean)[r],
                           ((const double *)a->rstd)[r], a->w, (double *)a->gx + r * n, n);
    }
}

/* Column blocks [b0, b1) of the weight and bias gradients (sums over all rows). */
static void grad_params_blocks(void *ctx, int t, int64_t b0, int64_t b1)
{
    const backward_args *a = ctx;
    int64_t m = a->s->m, n = a->s->n;
    (void)t;
    for (int64_t blk = b0; blk < b1; blk++) {
        int64_t j0 = blk * COLS, c = n - j0 < COLS ? n - j0 : COLS;
        if (a->s->dtype == TJ_FLOAT32) a->grad_params(a->g, a->x, a->mean, a->rstd, m, n, j0, c, a->gw, a->gb);
        else grad_params_f64(a->g, a->x, a->mean, a->rstd, m, n, j0, c, a->gw, a->gb);
    }
}

void tj_k_layer_norm_backward(const tj_k_layer_norm_shape *s, const void *g, const void *x, const void *mean,
                              const void *rstd, const void *w, void *gx, void *gw, void *gb)
{
    tj_k_isa isa = tj_k_isa_active();
    backward_args a = {
        s, g, x, mean, rstd, w, gx, gw, gb,
        isa == TJ_K_ISA_AVX512 ? tj_k_layer_norm_grad_input_f32_avx512
        : isa == TJ_K_ISA_AVX2 ? tj_k_layer_norm_grad_input_f32_avx2
                               : grad_input_f32,
        isa == TJ_K_ISA_AVX512 ? tj_k_layer_norm_grad_params_f32_avx512
        : isa == TJ_K_ISA_AVX2 ? tj_k_layer_norm_grad_params_f32_avx2
                               : grad_params_f32,
    };
    if (gx && s->m > 0) tj_k_parallel(threads_for(s, s->m), s->m, grad_input_rows, &a);
    if (gw || gb) {
        int64_t blocks = (s->n + COLS - 1) / COLS;
        tj_k_parallel(threads_for(s, blocks), blocks, grad_params_blocks, &a);
    }
}
