/* Convolution through im2col + GEMM (see conv.h). */
#include <cblas.h>
#include <string.h>

#include "conv.h"
#include "conv_gemm.h"
#include "conv_implicit.h"
#include "blas_fp.h"
#include "cpu_isa.h"
#include "parallel.h"

static int64_t col_rows(const tj_k_conv *cv) { return cv->geom.channels * cv->geom.kh * cv->geom.kw; }
static int64_t col_cols(const tj_k_conv *cv) { return cv->geom.out_h * cv->geom.out_w; }
static size_t round64(size_t n) { return (n + 63) / 64 * 64; }

/* float32 runs on our GEMM kernels where the ISA in use has them
 * (tj_k_conv_own_kernels); float64, and float32 elsewhere, on OpenBLAS.
 * Below AVX-512 (an AVX2 CPU, or TJ_ISA=avx2), products of 64 or more
 * output channels per group stay on OpenBLAS too: its sgemm is ahead of
 * the AVX2 kernels there (small images, 1 x 1, stride 2; bench/RESULTS.md,
 * session 26). The choice depends on the shape only, so a convolution
 * never changes route with the thread count; on our kernels every thread
 * count gives the same bits, on OpenBLAS (which splits its products by its
 * own thread count) not always. */
static bool own_gemm(const tj_k_conv *cv, tj_dtype dt)
{
    if (dt != TJ_FLOAT32 || !tj_k_conv_own_kernels()) return false;
    return tj_k_isa_active() == TJ_K_ISA_AVX512 || cv->mat_channels < 64;
}

/* OpenBLAS must not be called from several threads at once (it threads
 * itself): one thread runs the samples. */
int tj_k_conv_threads(const tj_k_conv *cv, tj_dtype dt)
{
    int64_t items = cv->batch * cv->groups;
    int64_t nt = own_gemm(cv, dt) ? cv->threads : 1;
    if (nt > items) nt = items;
    return nt < 1 ? 1 : (int)nt;
}

/* One thread's scratch: the unfolded columns, the packing space of the
 * float32 GEMM and, for weight_grad, a partial sum of the weight gradient. */
typedef struct slices {
    void *col, *gemm, *partial;
} slices;

static size_t slice_bytes(const tj_k_conv *cv, tj_dtype dt, tj_k_conv_op op, size_t *col, size_t *gemm, size_t *part)
{
    size_t es = dt == TJ_FLOAT32 ? sizeof(float) : sizeof(double);
    *col = round64(es * (size_t)(col_rows(cv) * col_cols(cv)));
    *gemm = own_gemm(cv, dt) ? round64(tj_k_sgemm_work_bytes()) : 0;
    *part = op == TJ_K_CONV_WEIGHT_GRAD ? round64(es * (size_t)(cv->groups * cv->mat_channels * col_rows(cv))) : 0;
    return *col + *gemm + *part;
}

static slices thread_slices(const tj_k_conv *cv, tj_dtype dt, tj_k_conv_op op, void *work, int t)
{
    size_t col, gemm, part;
    char *base = (char *)work + (size_t)t * slice_bytes(cv, dt, op, &col, &gemm, &part);
    return (slices){base, base + col, base + col + gemm};
}

/* float32 with stride 1 goes the implicit way, on our kernels. */
static bool implicit(const tj_k_conv *cv, tj_dtype dt) { return own_gemm(cv, dt) && tj_k_conv_implicit_ok(cv); }

size_t tj_k_conv_work_bytes(const tj_k_conv *cv, tj_dtype dt, tj_k_conv_op op)
{
    if (implicit(cv, dt)) return tj_k_conv_implicit_work_bytes(cv, op);
    size_t col, gemm, part;
    return (size_t)tj_k_conv_threads(cv, dt) * slice_bytes(cv, dt, op, &col, &gemm, &part);
}

/* C = A·B + beta·C (+ bias[i] on row i) on OpenBLAS: the bias added into C
 * first, then the product added with beta 1. */
#define BLAS_GEMM(T, SUF, CBLAS_GEMM)                                                                           \
    static void blas_gemm_##SUF(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T *a, int64_t lda,    \
                                const T *b, int64_t ldb, T beta, T *c, int64_t ldc, const T *bias)            \
    {                                                                                                       \
        if (m <= 0 || n <= 0) return;                                                                       \
        if (bias || k <= 0) {                                                                               \
            for (int64_t i = 0; i < m; i++)                                                                 \
                for (int64_t j = 0; j < n; j++)                                                             \
                    c[i * ldc + j] = (beta != 0 ? beta * c[i * ldc + j] : 0) + (bias ? bias[i] : 0);        \
            beta = 1;                                                                                       \
        }                                                                                                   \
        if (k <= 0) return;                                                                                 \
        int blas_threads = tj_k_blas_fp_begin();                                                            \
        CBLAS_GEMM(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, \
                   (int)k, 1, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);                                  \
        tj_k_blas_fp_end(blas_threads);                                                                     \
    }
BLAS_GEMM(float, f32, cblas_sgemm)
BLAS_GEMM(double, f64, cblas_dgemm)
#undef BLAS_GEMM

static void gemm_f32(const tj_k_conv *cv, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a,
                     int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc, const float *bias,
                     void *work)
{
    if (own_gemm(cv, TJ_FLOAT32)) tj_k_sgemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc, bias, work);
    else blas_gemm_f32(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc, bias);
}

static void gemm_f64(const tj_k_conv *cv, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double *a,
                     int64_t lda, const double *b, int64_t ldb, double beta, double *c, int64_t ldc, const double *bias,
                     void *work)
{
    (void)cv, (void)work;
    blas_gemm_f64(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc, bias);
}

/* Columns of image item `src` for the GEMM: the image itself when the
 * unfolding is the identity, else unfolded into the thread's buffer. */
#define UNFOLD(T, SUF, g, src, s, P) \
    (tj_k_im2col_is_identity(g) ? (src) : (tj_k_im2col_##SUF((g), (src), (g)->height * (g)->width, (g)->width, 1, \
                                                             (T *)(s).col, (P)), (const T *)(s).col))

/* The operands of a convolution loop over (sample, group) items, arrays of
 * the convolution's element type; thread t uses slice t of work. */
typedef struct conv_args {
    const tj_k_conv *cv;
    const void *in;   /* unfold_mm, weight_grad: the image; mm_fold: the matrix */
    const void *w;    /* the weight (weight_grad: the matrix) */
    const void *bias; /* or NULL */
    void *out;        /* bias_grad: the channel sums */
    void *work;
    int64_t n, c, s; /* bias_grad: samples, channels, positions per channel */
} conv_args;

#define CONV_DEFINE(T, SUF, DT)                                                                                  \
    static void unfold_mm_items_##SUF(void *ctx, int t, int64_t begin, int64_t end)                              \
    {                                                                                                            \
        const conv_args *a = ctx;                                                                                \
        const tj_k_conv *cv = a->cv;                                                                             \
        const tj_k_im2col_geom *g = &cv->geom;                                                                   \
        const T *img = a->in, *w = a->w, *bias = a->bias;                                                        \
        T *mat = a->out;                                                                                         \
        int64_t G = cv->groups, R = cv->mat_channels, K = col_rows(cv), P = col_cols(cv);                        \
        int64_t img_size = g->channels * g->height * g->width;                                                   \
        slices s = thread_slices(cv, DT, TJ_K_CONV_UNFOLD_MM, a->work, t);                                       \
        for (int64_t it = begin; it < end; it++) {                                                               \
            int64_t gi = it % G;                                                                                 \
            const T *cols = UNFOLD(T, SUF, g, img + it * img_size, s, P);                                        \
            gemm_##SUF(cv, false, false, R, P, K, w + gi * R * K, K, cols, P, 0, mat + it * R * P, P,            \
                       bias ? bias + gi * R : NULL, s.gemm);                                                     \
        }                                                                                                        \
    }                                                                                                            \
                                                                                                                 \
    void tj_k_conv_unfold_mm_##SUF(const tj_k_conv *cv, const T *img, const T *w, const T *bias, T *mat,         \
                                   void *work)                                                                   \
    {                                                                                                            \
        if (implicit(cv, DT)) {                                                                                  \
            tj_k_conv_implicit_unfold_mm(cv, (const void *)img, (const void *)w, (const void *)bias, (void *)mat, \
                                         work);                                                                  \
            return;                                                                                              \
        }                                                                                                        \
        conv_args a = {.cv = cv, .in = img, .w = w, .bias = bias, .out = mat, .work = work};                     \
        tj_k_parallel(tj_k_conv_threads(cv, DT), cv->batch * cv->groups, unfold_mm_items_##SUF, &a);             \
    }                                                                                                            \
                                                                                                                 \
    static void mm_fold_items_##SUF(void *ctx, int t, int64_t begin, int64_t end)                                \
    {                                                                                                            \
        const conv_args *a = ctx;                                                                                \
        const tj_k_conv *cv = a->cv;                                                                             \
        const tj_k_im2col_geom *g = &cv->geom;                                                                   \
        const T *mat = a->in, *w = a->w, *bias = a->bias;                                                        \
        T *img = a->out;                                                                                         \
        int64_t G = cv->groups, R = cv->mat_channels, K = col_rows(cv), P = col_cols(cv), C = g->channels;       \
        int64_t plane = g->height * g->width;                                                                    \
        bool identity = tj_k_im2col_is_identity(g);                                                              \
        slices s = thread_slices(cv, DT, TJ_K_CONV_MM_FOLD, a->work, t);                                         \
        for (int64_t it = begin; it < end; it++) {                                                               \
            int64_t gi = it % G;                                                                                 \
            T *dst = img + it * C * plane;                                                                       \
            const T *b = bias ? bias + gi * C : NULL;                                                            \
            if (identity) {                                                                                      \
                gemm_##SUF(cv, true, false, K, P, R, w + gi * R * K, K, mat + it * R * P, P, 0, dst, P, b,       \
                           s.gemm);                                                                              \
                continue;                                                                                        \
            }                                                                                                    \
            gemm_##SUF(cv, true, false, K, P, R, w + gi * R * K, K, mat + it * R * P, P, 0, (T *)s.col, P, NULL, \
                       s.gemm);                                                                                  \
            for (int64_t c = 0; c < C; c++)                                                                      \
                for (int64_t i = 0; i < plane; i++) dst[c * plane + i] = b ? b[c] : 0;                           \
            tj_k_col2im_##SUF(g, (const T *)s.col, P, dst);                                                      \
        }                                                                                                        \
    }                                                                                                            \
                                                                                                                 \
    void tj_k_conv_mm_fold_##SUF(const tj_k_conv *cv, const T *mat, const T *w, const T *bias, T *img,           \
                                 void *work)                                                                     \
    {                                                                                                            \
        if (implicit(cv, DT)) {                                                                                  \
            tj_k_conv_implicit_mm_fold(cv, (const void *)mat, (const void *)w, (const void *)bias, (void *)img,  \
                                       work);                                                                    \
            return;                                                                                              \
        }                                                                                                        \
        conv_args a = {.cv = cv, .in = mat, .w = w, .bias = bias, .out = img, .work = work};                     \
        tj_k_parallel(tj_k_conv_threads(cv, DT), cv->batch * cv->groups, mm_fold_items_##SUF, &a);               \
    }                                                                                                            \
                                                                                                                 \
    /* Items [begin, end) summed into thread t's partial weight gradient. */                                     \
    static void weight_grad_items_##SUF(void *ctx, int t, int64_t begin, int64_t end)                            \
    {                                                                                                            \
        const conv_args *a = ctx;                                                                                \
        const tj_k_conv *cv = a->cv;                                                                             \
        const tj_k_im2col_geom *g = &cv->geom;                                                                   \
        const T *img = a->in, *mat = a->w;                                                                       \
        int64_t G = cv->groups, R = cv->mat_channels, K = col_rows(cv), P = col_cols(cv);                        \
        int64_t img_size = g->channels * g->height * g->width;                                                   \
        slices s = thread_slices(cv, DT, TJ_K_CONV_WEIGHT_GRAD, a->work, t);                                     \
        T *part = s.partial;                                                                                     \
        memset(part, 0, sizeof(T) * (size_t)(G * R * K));                                                        \
        for (int64_t it = begin; it < end; it++) {                                                               \
            int64_t gi = it % G;                                                                                 \
            const T *cols = UNFOLD(T, SUF, g, img + it * img_size, s, P);                                        \
            gemm_##SUF(cv, false, true, R, K, P, mat + it * R * P, P, cols, P, 1, part + gi * R * K, K, NULL,    \
                       s.gemm);                                                                                  \
        }                                                                                                        \
    }                                                                                                            \
                                                                                                                 \
    void tj_k_conv_weight_grad_##SUF(const tj_k_conv *cv, const T *img, const T *mat, T *gw, void *work)         \
    {                                                                                                            \
        if (implicit(cv, DT)) {                                                                                  \
            tj_k_conv_implicit_weight_grad(cv, (const void *)img, (const void *)mat, (void *)gw, work);          \
            return;                                                                                              \
        }                                                                                                        \
        int64_t wsize = cv->groups * cv->mat_channels * col_rows(cv);                                            \
        int nt = tj_k_conv_threads(cv, DT);                                                                      \
        conv_args a = {.cv = cv, .in = img, .w = mat, .work = work};                                             \
        tj_k_parallel(nt, cv->batch * cv->groups, weight_grad_items_##SUF, &a);                                  \
        /* gw = ((0 + partial 0) + partial 1) + ...: the sum in thread order */                                  \
        memset(gw, 0, sizeof(T) * (size_t)wsize);                                                                \
        for (int t = 0; t < nt; t++) {                                                                           \
            const T *part = thread_slices(cv, DT, TJ_K_CONV_WEIGHT_GRAD, work, t).partial;                       \
            for (int64_t i = 0; i < wsize; i++) gw[i] += part[i];                                                \
        }                                                                                                        \
    }                                                                                                            \
                                                                                                                 \
    static void bias_grad_channels_##SUF(void *ctx, int t, int64_t begin, int64_t end)                           \
    {                                                                                                            \
        const conv_args *a = ctx;                                                                                \
        int64_t n = a->n, c = a->c, s = a->s;                                                                    \
        const T *g = a->in;                                                                                      \
        T *gb = a->out;                                                                                          \
        (void)t;                                                                                                 \
        for (int64_t ch = begin; ch < end; ch++) {                                                               \
            double total = 0;                                                                                    \
            for (int64_t i = 0; i < n; i++) {                                                                    \
                const T *row = g + (i * c + ch) * s;                                                             \
                T lanes[16] = {0};                                                                               \
                int64_t j = 0;                                                                                   \
                for (; j + 16 <= s; j += 16)                                                                     \
                    for (int u = 0; u < 16; u++) lanes[u] += row[j + u];                                         \
                for (; j < s; j++) lanes[0] += row[j];                                                           \
                for (int u = 0; u < 16; u++) total += lanes[u];                                                  \
            }                                                                                                    \
            gb[ch] = (T)total;                                                                                   \
        }                                                                                                        \
    }                                                                                                            \
                                                                                                                 \
    void tj_k_conv_bias_grad_##SUF(int64_t n, int64_t c, int64_t s, const T *g, T *gb, int threads)              \
    {                                                                                                            \
        conv_args a = {.in = g, .out = gb, .n = n, .c = c, .s = s};                                              \
        tj_k_parallel(n * c * s > (1 << 16) ? threads : 1, c, bias_grad_channels_##SUF, &a);                     \
    }

CONV_DEFINE(float, f32, TJ_FLOAT32)
CONV_DEFINE(double, f64, TJ_FLOAT64)
