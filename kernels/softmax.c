/* Softmax / log-softmax forward and backward (see softmax.h): row mode
 * when the reduced dim is innermost, column mode (blocks of the inner dim
 * side by side) otherwise; float32 rows and exps go to the per-ISA pieces. */
#include <math.h>

#include "cpu_isa.h"
#include "parallel.h"
#include "softmax.h"

/* inner positions handled together in column mode (stack buffers) */
#define CHUNK 256

typedef void (*rows_f32_fn)(const float *x, int64_t xs, float *y, int64_t rows, int64_t n, bool take_log);
typedef void (*exp_f32_fn)(float *x, int64_t n);

static void row_f32_c(const float *x, float *y, int64_t n, bool take_log);
static void rows_f32_c(const float *x, int64_t xs, float *y, int64_t rows, int64_t n, bool take_log)
{
    for (int64_t r = 0; r < rows; r++) row_f32_c(x + r * xs, y + r * n, n, take_log);
}
static void exp_f32_c(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) x[i] = expf(x[i]);
}
static void exp_f64_c(double *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) x[i] = exp(x[i]);
}

static rows_f32_fn pick_rows_f32(void)
{
    tj_k_isa isa = tj_k_isa_active();
    return isa == TJ_K_ISA_AVX512 ? tj_k_softmax_rows_f32_avx512
           : isa == TJ_K_ISA_AVX2 ? tj_k_softmax_rows_f32_avx2
                                  : rows_f32_c;
}

static exp_f32_fn pick_exp_f32(void)
{
    tj_k_isa isa = tj_k_isa_active();
    return isa == TJ_K_ISA_AVX512 ? tj_k_exp_f32_avx512 : isa == TJ_K_ISA_AVX2 ? tj_k_exp_f32_avx2 : exp_f32_c;
}

void tj_k_exp_f32(float *x, int64_t n) { pick_exp_f32()(x, n); }

/* Portable row: maximum (a nan is skipped here but poisons the sum), exp
 * and sum (in double), then scale or shift. */
#define DEFINE_ROW(T, SUF, EXP, LOG)                                                                          \
    static void row_##SUF(const T *x, T *y, int64_t n, bool take_log)                                         \
    {                                                                                                         \
        T max = -INFINITY;                                                                                    \
        for (int64_t i = 0; i < n; i++) max = x[i] > max ? x[i] : max;                                        \
        double sum = 0;                                                                                       \
        for (int64_t i = 0; i < n; i++) {                                                                     \
            T e = EXP(x[i] - max);                                                                            \
            if (!take_log) y[i] = e;                                                                          \
            sum += e;                                                                                         \
        }                                                                                                     \
        if (!take_log) {                                                                                      \
            T inv = (T)(1.0 / sum);                                                                           \
            for (int64_t i = 0; i < n; i++) y[i] *= inv;                                                      \
        } else {                                                                                              \
            T lsum = (T)LOG(sum);                                                                             \
            for (int64_t i = 0; i < n; i++) y[i] = (x[i] - max) - lsum;                                       \
        }                                                                                                     \
    }
DEFINE_ROW(float, f32_c, expf, log)
DEFINE_ROW(double, f64, exp, log)

/* Column mode over inner positions [j0, j0 + c) of one outer slab: x row d
 * at x + d*ds, y row d at y + d*inner. */
#define DEFINE_COLS(T, SUF, LOG)                                                                              \
    static void cols_##SUF(const T *x, int64_t ds, T *y, int64_t n, int64_t inner, int64_t j0, int64_t c,     \
                           bool take_log, void (*exp_arr)(T *, int64_t))                                      \
    {                                                                                                         \
        T m[CHUNK], s[CHUNK];                                                                                 \
        for (int64_t j = 0; j < c; j++) m[j] = -INFINITY, s[j] = 0;                                           \
        for (int64_t d = 0; d < n; d++) {                                                                     \
            const T *xr = x + d * ds + j0;                                                                    \
            for (int64_t j = 0; j < c; j++) m[j] = xr[j] > m[j] ? xr[j] : m[j];                               \
        }                                                                                                     \
        for (int64_t d = 0; d < n; d++) {                                                                     \
            const T *xr = x + d * ds + j0;                                                                    \
            T *yr = y + d * inner + j0;                                                                       \
            for (int64_t j = 0; j < c; j++) yr[j] = xr[j] - m[j];                                             \
            exp_arr(yr, c);                                                                                   \
            for (int64_t j = 0; j < c; j++) s[j] += yr[j];                                                    \
        }                                                                                                     \
        for (int64_t j = 0; j < c; j++) s[j] = take_log ? LOG(s[j]) : 1 / s[j];                               \
        for (int64_t d = 0; d < n; d++) {                                                                     \
            const T *xr = x + d * ds + j0;                                                                    \
            T *yr = y + d * inner + j0;                                                                       \
            if (take_log)                                                                                     \
                for (int64_t j = 0; j < c; j++) yr[j] = (xr[j] - m[j]) - s[j];                                \
            else                                                                                              \
                for (int64_t j = 0; j < c; j++) yr[j] *= s[j];                                                \
        }                                                                                                     \
    }
DEFINE_COLS(float, f32, logf)
DEFINE_COLS(double, f64, log)

/* Work items: (outer, block of inner); threads only when there is enough. */
static int threads_for(const tj_k_softmax_shape *s, int64_t items)
{
    double work = (double)s->outer * (double)s->n * (double)s->inner;
    int nt = work < 16384 ? 1 : s->nthreads;
    return nt > items ? (int)items : nt < 1 ? 1 : nt;
}

/* The forward's arguments, for forward_items. */
typedef struct forward_args {
    const tj_k_softmax_shape *s;
    tj_k_strided x;
    void *y;
    int64_t nchunks;
    rows_f32_fn rows_f32;
    exp_f32_fn exp_f32;
} forward_args;

/* Work items [i0, i1): (outer, block of inner) pairs; in row mode (inner
 * 1) the rows [i0, i1), float32 ones in one call of the rows kernel. */
static void forward_items(void *ctx, int t, int64_t i0, int64_t i1)
{
    const forward_args *a = ctx;
    (void)t;
    int64_t n = a->s->n, inner = a->s->inner;
    bool take_log = a->s->log;
    if (inner == 1 && a->s->dtype == TJ_FLOAT32) {
        a->rows_f32((const float *)a->x.p + i0 * a->x.os, a->x.os, (float *)a->y + i0 * n, i1 - i0, n, take_log);
        return;
    }
    for (int64_t it = i0; it < i1; it++) {
        int64_t o = it / a->nchunks, j0 = (it % a->nchunks) * CHUNK, c = inner - j0 < CHUNK ? inner - j0 : CHUNK;
        if (a->s->dtype == TJ_FLOAT32) {
            const float *xo = (const float *)a->x.p + o * a->x.os;
            float *yo = (float *)a->y + o * n * inner;
            cols_f32(xo, a->x.ds, yo, n, inner, j0, c, take_log, a->exp_f32);
        } else {
            const double *xo = (const double *)a->x.p + o * a->x.os;
            double *yo = (double *)a->y + o * n * inner;
            if (inner == 1) row_f64(xo, yo, n, take_log);
            else cols_f64(xo, a->x.ds, yo, n, inner, j0, c, take_log, exp_f64_c);
        }
    }
}

void tj_k_softmax(const tj_k_softmax_shape *s, tj_k_strided x, void *y)
{
    int64_t outer = s->outer, n = s->n, inner = s->inner;
    if (outer == 0 || n == 0 || inner == 0) return;
    int64_t nchunks = (inner + CHUNK - 1) / CHUNK, items = outer * nchunks;
    forward_args a = {s, x, y, nchunks, pick_rows_f32(), pick_exp_f32()};
    /* one contiguous block of items per thread: each streams its own part */
    tj_k_parallel(threads_for(s, items), items, forward_items, &a);
}

/* Backward: one sum per row (row mode) or per inner position of a block
 * (column mode), accumulated in double, then the elementwise formula. */
#define DEFINE_BWD(T, SUF, EXP)                                                                               \
    static void bwd_row_##SUF(const T *g, const T *y, T *gx, int64_t n, bool take_log)                        \
    {                                                                                                         \
        double acc = 0;                                                                                       \
        for (int64_t i = 0; i < n; i++) acc += take_log ? (double)g[i] : (double)g[i] * y[i];                 \
        T a = (T)acc;                                                                                         \
        if (take_log)                                                                                         \
            for (int64_t i = 0; i < n; i++) gx[i] = g[i] - EXP(y[i]) * a;                                     \
        else                                                                                                  \
            for (int64_t i = 0; i < n; i++) gx[i] = y[i] * (g[i] - a);                                        \
    }                                                                                                         \
    static void bwd_cols_##SUF(const T *g, int64_t gds, const T *y, int64_t yds, T *gx, int64_t n,            \
                               int64_t inner, int64_t j0, int64_t c, bool take_log)                           \
    {                                                                                                         \
        double acc[CHUNK];                                                                                    \
        for (int64_t j = 0; j < c; j++) acc[j] = 0;                                                           \
        for (int64_t d = 0; d < n; d++) {                                                                     \
            const T *gr = g + d * gds + j0, *yr = y + d * yds + j0;                                           \
            for (int64_t j = 0; j < c; j++) acc[j] += take_log ? (double)gr[j] : (double)gr[j] * yr[j];       \
        }                                                                                                     \
        for (int64_t d = 0; d < n; d++) {                                                                     \
            const T *gr = g + d * gds + j0, *yr = y + d * yds + j0;                                           \
            T *out = gx + d * inner + j0;                                                                     \
            if (take_log)                                                                                     \
                for (int64_t j = 0; j < c; j++) out[j] = gr[j] - EXP(yr[j]) * (T)acc[j];                      \
            else                                                                                              \
                for (int64_t j = 0; j < c; j++) out[j] = yr[j] * (gr[j] - (T)acc[j]);                         \
        }                                                                                                     \
    }
DEFINE_BWD(float, f32, expf)
DEFINE_BWD(double, f64, exp)

typedef void (*bwd_row_f32_fn)(const float *g, const float *y, float *gx, int64_t n, bool take_log);

static bwd_row_f32_fn pick_bwd_row_f32(void)
{
    tj_k_isa isa = tj_k_isa_active();
    return isa == TJ_K_ISA_AVX512 ? tj_k_softmax_backward_row_f32_avx512
           : isa == TJ_K_ISA_AVX2 ? tj_k_softmax_backward_row_f32_avx2
                                  : bwd_row_f32;
}

/* The backward's arguments, for backward_block. */
typedef struct backward_args {
    const tj_k_softmax_shape *s;
    tj_k_strided g, y;
    void *gx;
    int64_t nchunks;
    bwd_row_f32_fn row_f32;
} backward_args;

/* Items [i0, i1) of the backward: item = (outer index, chunk of inner). */
static void backward_block(void *ctx, int t, int64_t i0, int64_t i1)
{
    const backward_args *a = ctx;
    int64_t n = a->s->n, inner = a->s->inner, nchunks = a->nchunks;
    bool take_log = a->s->log, f32 = a->s->dtype == TJ_FLOAT32;
    tj_k_strided g = a->g, y = a->y;
    (void)t;
    for (int64_t it = i0; it < i1; it++) {
        int64_t o = it / nchunks, j0 = (it % nchunks) * CHUNK, c = inner - j0 < CHUNK ? inner - j0 : CHUNK;
        if (f32) {
            const float *go = (const float *)g.p + o * g.os, *yo = (const float *)y.p + o * y.os;
            float *out = (float *)a->gx + o * n * inner;
            if (inner == 1) a->row_f32(go, yo, out, n, take_log);
            else bwd_cols_f32(go, g.ds, yo, y.ds, out, n, inner, j0, c, take_log);
        } else {
            const double *go = (const double *)g.p + o * g.os, *yo = (const double *)y.p + o * y.os;
            double *out = (double *)a->gx + o * n * inner;
            if (inner == 1) bwd_row_f64(go, yo, out, n, take_log);
            else bwd_cols_f64(go, g.ds, yo, y.ds, out, n, inner, j0, c, take_log);
        }
    }
}

void tj_k_softmax_backward(const tj_k_softmax_shape *s, tj_k_strided g, tj_k_strided y, void *gx)
{
    if (s->outer == 0 || s->n == 0 || s->inner == 0) return;
    int64_t nchunks = (s->inner + CHUNK - 1) / CHUNK, items = s->outer * nchunks;
    backward_args a = {s, g, y, gx, nchunks, pick_bwd_row_f32()};
    tj_k_parallel(threads_for(s, items), items, backward_block, &a);
}
