/* 3-D convolution through vol2col + OpenBLAS GEMM (see conv3d.h). */
#include <cblas.h>
#include <stdbool.h>
#include <string.h>

#include "blas_fp.h"
#include "conv3d.h"

static int64_t col_rows(const tj_k_vol2col_geom *g)
{
    return g->channels * g->kernel[0] * g->kernel[1] * g->kernel[2];
}
static int64_t col_cols(const tj_k_vol2col_geom *g) { return g->out[0] * g->out[1] * g->out[2]; }
static int64_t volume(const tj_k_vol2col_geom *g) { return g->size[0] * g->size[1] * g->size[2]; }

/* A 1 x 1 x 1 kernel, stride 1, no padding: the columns are the volume. */
static bool is_identity(const tj_k_vol2col_geom *g)
{
    for (int i = 0; i < 3; i++)
        if (g->kernel[i] != 1 || g->stride[i] != 1 || g->padding[i] != 0 || g->out[i] != g->size[i]) return false;
    return true;
}

/* The columns of volume `img`: itself when the unfolding is the identity,
 * else unfolded into `work`. */
#define COLUMNS(SUF, g, img, work) \
    (is_identity(g) ? (img) : (tj_k_vol2col_##SUF((g), (img), (work)), (work)))

size_t tj_k_conv3d_work_bytes(const tj_k_conv3d *cv, tj_dtype dt)
{
    size_t es = dt == TJ_FLOAT32 ? sizeof(float) : sizeof(double);
    return is_identity(&cv->geom) ? 0 : es * (size_t)(col_rows(&cv->geom) * col_cols(&cv->geom));
}

/* Output positions [lo, hi) along the innermost axis whose input
 * coordinate x*stride + off lies inside [0, size). */
static void valid_range(int64_t off, int64_t stride, int64_t size, int64_t n_out, int64_t *lo, int64_t *hi)
{
    int64_t l = off >= 0 ? 0 : (-off - 1) / stride + 1;
    int64_t h = size - 1 - off < 0 ? 0 : (size - 1 - off) / stride + 1;
    if (l > n_out) l = n_out;
    if (h > n_out) h = n_out;
    if (h < l) h = l;
    *lo = l;
    *hi = h;
}

/* Calls BODY for every (row, z, y) of the column matrix whose input plane
 * zi and row yi lie inside the volume, with `src` the input row, `dst` the
 * column row segment, [lo, hi) the valid x positions and xoff the input x
 * of position 0; rows outside get SKIP. Shared by vol2col and col2vol. */
#define FOR_EACH_COLUMN_ROW(g, SKIP, BODY)                                                                        \
    do {                                                                                                         \
        const int64_t *k_ = (g)->kernel, *s_ = (g)->stride, *p_ = (g)->padding, *d_ = (g)->dilation;             \
        const int64_t *o_ = (g)->out, *n_ = (g)->size;                                                           \
        int64_t row = 0;                                                                                         \
        for (int64_t c = 0; c < (g)->channels; c++)                                                              \
            for (int64_t a = 0; a < k_[0]; a++)                                                                  \
                for (int64_t i = 0; i < k_[1]; i++)                                                              \
                    for (int64_t j = 0; j < k_[2]; j++, row++) {                                                 \
                        int64_t xoff = j * d_[2] - p_[2], lo, hi;                                                \
                        valid_range(xoff, s_[2], n_[2], o_[2], &lo, &hi);                                        \
                        for (int64_t z = 0; z < o_[0]; z++)                                                      \
                            for (int64_t y = 0; y < o_[1]; y++) {                                                \
                                int64_t at = (row * o_[0] + z) * o_[1] + y;                                      \
                                int64_t zi = z * s_[0] - p_[0] + a * d_[0], yi = y * s_[1] - p_[1] + i * d_[1]; \
                                if (zi < 0 || zi >= n_[0] || yi < 0 || yi >= n_[1]) {                            \
                                    SKIP;                                                                        \
                                    continue;                                                                    \
                                }                                                                                \
                                int64_t in_at = ((c * n_[0] + zi) * n_[1] + yi) * n_[2];                         \
                                BODY;                                                                            \
                            }                                                                                    \
                    }                                                                                            \
    } while (0)

/* C = A·B (op(A) [m, k] row-major, B [k, n]) + beta·C on OpenBLAS. */
#define BLAS_GEMM(T, SUF, CBLAS_GEMM)                                                                          \
    static void gemm_##SUF(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T *a, int64_t lda,         \
                           const T *b, int64_t ldb, T beta, T *c, int64_t ldc)                                 \
    {                                                                                                          \
        if (m <= 0 || n <= 0) return;                                                                          \
        if (k <= 0) {                                                                                          \
            for (int64_t r = 0; r < m; r++)                                                                    \
                for (int64_t q = 0; q < n; q++) c[r * ldc + q] = beta != 0 ? beta * c[r * ldc + q] : 0;        \
            return;                                                                                            \
        }                                                                                                      \
        int saved = tj_k_blas_fp_begin();                                                                      \
        CBLAS_GEMM(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m,      \
                   (int)n, (int)k, 1, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);                            \
        tj_k_blas_fp_end(saved);                                                                               \
    }
BLAS_GEMM(float, f32, cblas_sgemm)
BLAS_GEMM(double, f64, cblas_dgemm)
#undef BLAS_GEMM

#define CONV3D_DEFINE(T, SUF)                                                                                  \
    void tj_k_vol2col_##SUF(const tj_k_vol2col_geom *g, const T *img, T *col)                                  \
    {                                                                                                          \
        int64_t ow = g->out[2], sw = g->stride[2];                                                             \
        FOR_EACH_COLUMN_ROW(g, memset(col + at * ow, 0, sizeof(T) * (size_t)ow), {                             \
            T *dst = col + at * ow;                                                                            \
            const T *src = img + in_at; /* position x reads src[x * sw + xoff] */                              \
            memset(dst, 0, sizeof(T) * (size_t)lo);                                                            \
            if (sw == 1) memcpy(dst + lo, src + lo + xoff, sizeof(T) * (size_t)(hi - lo));                     \
            else                                                                                               \
                for (int64_t x = lo; x < hi; x++) dst[x] = src[x * sw + xoff];                                 \
            memset(dst + hi, 0, sizeof(T) * (size_t)(ow - hi));                                                \
        });                                                                                                    \
    }                                                                                                          \
                                                                                                               \
    void tj_k_col2vol_##SUF(const tj_k_vol2col_geom *g, const T *col, T *img)                                  \
    {                                                                                                          \
        int64_t ow = g->out[2], sw = g->stride[2];                                                             \
        FOR_EACH_COLUMN_ROW(g, (void)0, {                                                                      \
            const T *src = col + at * ow;                                                                      \
            T *dst = img + in_at;                                                                              \
            for (int64_t x = lo; x < hi; x++) dst[x * sw + xoff] += src[x];                                    \
        });                                                                                                    \
    }                                                                                                          \
                                                                                                               \
    void tj_k_conv3d_unfold_mm_##SUF(const tj_k_conv3d *cv, const T *img, const T *w, const T *bias, T *mat,   \
                                     void *work)                                                               \
    {                                                                                                          \
        const tj_k_vol2col_geom *g = &cv->geom;                                                                \
        int64_t G = cv->groups, R = cv->mat_channels, K = col_rows(g), P = col_cols(g);                        \
        T *col = work;                                                                                         \
        for (int64_t it = 0; it < cv->batch * G; it++) {                                                       \
            int64_t gi = it % G;                                                                               \
            T *dst = mat + it * R * P;                                                                         \
            for (int64_t r = 0; r < R; r++)                                                                    \
                for (int64_t q = 0; q < P; q++) dst[r * P + q] = bias ? bias[gi * R + r] : 0;                  \
            const T *cols = COLUMNS(SUF, g, img + it * g->channels * volume(g), col);                          \
            gemm_##SUF(false, false, R, P, K, w + gi * R * K, K, cols, P, 1, dst, P);                          \
        }                                                                                                      \
    }                                                                                                          \
                                                                                                               \
    void tj_k_conv3d_mm_fold_##SUF(const tj_k_conv3d *cv, const T *mat, const T *w, const T *bias, T *img,     \
                                   void *work)                                                                 \
    {                                                                                                          \
        const tj_k_vol2col_geom *g = &cv->geom;                                                                \
        int64_t G = cv->groups, R = cv->mat_channels, K = col_rows(g), P = col_cols(g), C = g->channels;       \
        int64_t vol = volume(g);                                                                               \
        bool identity = is_identity(g);                                                                        \
        T *col = work;                                                                                         \
        for (int64_t it = 0; it < cv->batch * G; it++) {                                                       \
            int64_t gi = it % G;                                                                               \
            T *dst = img + it * C * vol;                                                                       \
            for (int64_t c = 0; c < C; c++)                                                                    \
                for (int64_t i = 0; i < vol; i++) dst[c * vol + i] = bias ? bias[gi * C + c] : 0;             \
            if (identity) { /* the columns are the volume: the product adds into it */                         \
                gemm_##SUF(true, false, K, P, R, w + gi * R * K, K, mat + it * R * P, P, 1, dst, P);           \
                continue;                                                                                      \
            }                                                                                                  \
            gemm_##SUF(true, false, K, P, R, w + gi * R * K, K, mat + it * R * P, P, 0, col, P);               \
            tj_k_col2vol_##SUF(g, col, dst);                                                                   \
        }                                                                                                      \
    }                                                                                                          \
                                                                                                               \
    void tj_k_conv3d_weight_grad_##SUF(const tj_k_conv3d *cv, const T *img, const T *mat, T *gw, void *work)   \
    {                                                                                                          \
        const tj_k_vol2col_geom *g = &cv->geom;                                                                \
        int64_t G = cv->groups, R = cv->mat_channels, K = col_rows(g), P = col_cols(g);                        \
        T *col = work;                                                                                         \
        memset(gw, 0, sizeof(T) * (size_t)(G * R * K));                                                        \
        for (int64_t it = 0; it < cv->batch * G; it++) {                                                       \
            int64_t gi = it % G;                                                                               \
            const T *cols = COLUMNS(SUF, g, img + it * g->channels * volume(g), col);                          \
            gemm_##SUF(false, true, R, K, P, mat + it * R * P, P, cols, P, 1, gw + gi * R * K, K);             \
        }                                                                                                      \
    }

CONV3D_DEFINE(float, f32)
CONV3D_DEFINE(double, f64)
