/* Matrix-vector products (see gemv.h): float32 with contiguous vectors on
 * our kernels (gemv_isa.h: AVX-512 or AVX2; ahead of OpenBLAS's sgemv, and
 * free of its thread pool, so usable inside parallel loops), everything
 * else on OpenBLAS's gemv. */
#include <cblas.h>
#include <string.h>

#include "blas_fp.h"
#include "cpu_isa.h"
#include "gemm.h"
#include "gemv.h"
#include "parallel.h"

/* Below this many matrix elements (times vectors) a product stays on one
 * thread: one thread reads float32 rows at ~100 GB/s, so a 256 x 256
 * product takes ~2.7 us, and handing half of it to the pool (parallel.c)
 * cost more than it saved: mlp at batch 1 with its fc2 split took 12.96-
 * 13.31 us against 10.92-11.78 us unsplit at 2 threads (session 36, 1 << 15
 * here). 256 x 784 (mlp's first layer) splits; from 1 MiB of matrix on,
 * two threads gain 1.2-1.4x. */
#define PAR_ELEMS ((int64_t)3 << 16)
/* OpenBLAS runs gemv single-threaded below this many elements (its
 * interface/gemv.c: 2304 * GEMM_MULTITHREAD_THRESHOLD). */
#define BLAS_SERIAL_ELEMS ((int64_t)2304 * OPENBLAS_GEMM_MULTITHREAD_THRESHOLD)

/* When these kernels beat the GEMM ones (tj_k_gemv_max_vectors), measured
 * at 1 thread on mlp and GPT shapes against OpenBLAS 0.3.21 (its Haswell
 * kernels, as OPENBLAS_CORETYPE selects here) and our own GEMM kernel:
 * - our AVX-512 row form loads each 4-row block of the matrix once for
 *   four vectors at a time: 2x sgemm for up to 16 vectors, and level with
 *   or ahead of the GEMM kernel up to 32-48 vectors when rows have 512
 *   columns or more (784x256, 768x2304, 3072x768 weights; shorter rows
 *   spend more in the final reductions). Beyond, the GEMM kernel wins:
 *   at 128 vectors (block768's products) by 1.2-1.3x, and block768's
 *   forward pass took 54 -> 41 ms (1 thread), 32 -> 22-26 ms (2
 *   threads). At 64 vectors (mlp's fc1 at batch 64) the kernel alone is
 *   10% faster on the GEMM kernel, but mlp's forward replay at 2 threads
 *   was slower than eager there (its relu epilogue splits the product by
 *   rows, each thread packing all of B), so 64 stays on the row form;
 * - the AVX2 row form (three vectors at a time, TJ_ISA=avx2 on a Zen 5
 *   EPYC, thread CPU time against the GEMM kernel's AVX2 instance and
 *   sgemm, the faster of the two): 0.3-0.6x their time for 1-3 vectors,
 *   0.6-0.9x for 4-8; rows of 128 columns (gpt's weights) break even at
 *   6-8 vectors (1.2x at 12), rows of 256 (mlp's fc2, fc3) at 12-16, rows
 *   of 512-3072 at 32-48 (1.04-1.06x at 64). mlp's fc1 at batch 64 (784
 *   columns) stays on the row form all the same, as on AVX-512: mlp's
 *   forward replay at 2 threads took 7-15% less time than with fc1 on the
 *   GEMM kernel (0.363-0.369 against 0.392-0.396 ms, three alternated
 *   runs of `tjit bench mlp --threads 2` under TJ_ISA=avx2), at 1 thread
 *   the same within noise;
 * - one vector at a time (the column form, BLAS's gemv) only up to 3. */
#define ROW_FORM_MAX_VECTORS 16
#define ROW_FORM_LONG_ROWS 512
#define ROW_FORM_LONG_MAX_VECTORS 64
#define AVX2_ROW_FORM_MAX_VECTORS 8
#define AVX2_ROW_FORM_MID_ROWS 256
#define AVX2_ROW_FORM_MID_MAX_VECTORS 12
#define AVX2_ROW_FORM_LONG_MAX_VECTORS 64
#define OTHER_MAX_VECTORS 3

bool tj_k_gemv_on_own_kernel(tj_dtype dtype, int64_t incx)
{
    return dtype == TJ_FLOAT32 && incx == 1 && tj_k_isa_active() != TJ_K_ISA_GENERIC;
}

/* y = beta * y for BLAS to add the product to with beta 1, 0 for beta 0
 * without reading y (nan there must not leak, as BLAS may compute 0 * y).
 * Scaling here also keeps a nan or infinite beta IEEE: OpenBLAS's
 * transposed sgemv takes a nan beta for 0 and drops self silently. */
static void scale_y(tj_dtype dtype, int64_t n, double beta, void *y, int64_t incy)
{
    for (int64_t i = 0; i < n; i++) {
        if (dtype == TJ_FLOAT32) {
            float *v = (float *)y + i * incy;
            *v = beta == 0 ? 0.0f : (float)beta * *v;
        } else {
            double *v = (double *)y + i * incy;
            *v = beta == 0 ? 0.0 : beta * *v;
        }
    }
}

/* Plain loops, for a product that must stay on the calling thread. */
#define LOOP_GEMV(T)                                                                                          \
    static void loop_gemv_##T(bool trans, int64_t rows, int64_t cols, T alpha, const T *m, int64_t ld,        \
                              const T *x, int64_t incx, T beta, T *y, int64_t incy)                           \
    {                                                                                                         \
        int64_t nout = trans ? cols : rows, nin = trans ? rows : cols;                                        \
        for (int64_t i = 0; i < nout; i++) {                                                                  \
            T acc = 0;                                                                                        \
            for (int64_t p = 0; p < nin; p++) acc += (trans ? m[p * ld + i] : m[i * ld + p]) * x[p * incx];   \
            y[i * incy] = beta == 0 ? alpha * acc : alpha * acc + beta * y[i * incy];                         \
        }                                                                                                     \
    }
LOOP_GEMV(float)
LOOP_GEMV(double)
#undef LOOP_GEMV

static void blas_gemv(tj_dtype dtype, bool trans, int64_t rows, int64_t cols, double alpha, const void *m, int64_t ld,
                      const void *x, int64_t incx, double beta, void *y, int64_t incy)
{
    if (rows * cols >= BLAS_SERIAL_ELEMS && tj_k_in_parallel()) { /* BLAS would start its own threads */
        if (dtype == TJ_FLOAT32)
            loop_gemv_float(trans, rows, cols, (float)alpha, m, ld, x, incx, (float)beta, y, incy);
        else
            loop_gemv_double(trans, rows, cols, alpha, m, ld, x, incx, beta, y, incy);
        return;
    }
    if (beta != 1) scale_y(dtype, trans ? cols : rows, beta, y, incy);
    beta = 1;
    CBLAS_TRANSPOSE t = trans ? CblasTrans : CblasNoTrans;
    int blas_threads = tj_k_blas_fp_begin();
    if (dtype == TJ_FLOAT32)
        cblas_sgemv(CblasRowMajor, t, (int)rows, (int)cols, (float)alpha, m, (int)ld, x, (int)incx, (float)beta, y,
                    (int)incy);
    else
        cblas_dgemv(CblasRowMajor, t, (int)rows, (int)cols, alpha, m, (int)ld, x, (int)incx, beta, y, (int)incy);
    tj_k_blas_fp_end(blas_threads);
}

/* Our kernels on a slice of the outputs: rows [i0, i1) of the row form
 * (nv vectors at once), or columns [i0, i1) of the column form (nv is 1). */
static void own_slice(const tj_k_gemv_args *g, int64_t nv, const float *m, const float *x, float *y, int64_t i0,
                      int64_t i1)
{
    if (i1 <= i0) return;
    float alpha = (float)g->alpha, beta = (float)g->beta;
    bool avx512 = tj_k_isa_active() == TJ_K_ISA_AVX512;
    if (g->trans)
        (avx512 ? tj_k_gemv_t_f32_avx512 : tj_k_gemv_t_f32_avx2)(g->rows, i1 - i0, alpha, m + i0, g->ld, x, beta,
                                                                 y + i0 * g->incy, g->incy);
    else
        (avx512 ? tj_k_gemv_n_f32_avx512 : tj_k_gemv_n_f32_avx2)(nv, i1 - i0, g->cols, alpha, m + i0 * g->ld, g->ld,
                                                                 x, g->x_vs, beta, y + i0 * g->incy, g->incy,
                                                                 g->y_vs);
}

void tj_k_gemv_n_f32_pass(int64_t nv, int64_t rows, int64_t n, int64_t kc, float alpha, const float *m, int64_t ld,
                          const float *x, int64_t x_vs, float b, float *y, int64_t incy, int64_t y_vs)
{
    (tj_k_isa_active() == TJ_K_ISA_AVX512 ? tj_k_gemv_n_f32_pass_avx512 : tj_k_gemv_n_f32_pass_avx2)(
        nv, rows, n, kc, alpha, m, ld, x, x_vs, b, y, incy, y_vs);
}

/* One group of vectors of a product on our kernels, for own_blocks. */
typedef struct own_args {
    const tj_k_gemv_args *g;
    int64_t group, unit, nout;
    const float *m, *x;
    float *y;
} own_args;

/* Output blocks [b0, b1) of `unit` outputs each. */
static void own_blocks(void *ctx, int t, int64_t b0, int64_t b1)
{
    const own_args *a = ctx;
    int64_t i0 = b0 * a->unit, i1 = b1 * a->unit;
    (void)t;
    own_slice(a->g, a->group, a->m, a->x, a->y, i0, i1 < a->nout ? i1 : a->nout);
}

/* Product b: every vector at once on our row-form kernel (one by one
 * otherwise), split over up to nthreads threads by blocks of outputs when
 * large; BLAS threads by itself. */
static void gemv_item(const tj_k_gemv_args *g, int64_t b, int nthreads)
{
    int64_t es = g->dtype == TJ_FLOAT32 ? (int64_t)sizeof(float) : (int64_t)sizeof(double);
    const char *m = (const char *)g->m + b * g->m_bs * es, *x = (const char *)g->x + b * g->x_bs * es;
    char *y = (char *)g->y + b * g->y_bs * es;
    bool own = tj_k_gemv_on_own_kernel(g->dtype, g->incx);
    int64_t group = own && !g->trans ? g->nv : 1;
    int64_t nout = g->trans ? g->cols : g->rows, unit = g->trans ? 64 : 4; /* the kernels' blocks */
    int64_t blocks = (nout + unit - 1) / unit;
    for (int64_t v0 = 0; v0 < g->nv; v0 += group) {
        const char *xv = x + v0 * g->x_vs * es;
        char *yv = y + v0 * g->y_vs * es;
        if (!own) {
            blas_gemv(g->dtype, g->trans, g->rows, g->cols, g->alpha, m, g->ld, xv, g->incx, g->beta, yv, g->incy);
            continue;
        }
        int nt = g->rows * g->cols * group >= PAR_ELEMS ? nthreads : 1;
        if (nt > blocks) nt = (int)blocks;
        /* every block runs even when the loop runs on fewer threads (a
         * nested call runs them all on its own) */
        own_args a = {g, group, unit, nout, (const float *)m, (const float *)xv, (float *)yv};
        tj_k_parallel(nt, blocks, own_blocks, &a);
    }
}

int64_t tj_k_gemv_max_vectors(const tj_k_gemv_args *g)
{
    if (!tj_k_gemv_on_own_kernel(g->dtype, g->incx) || g->trans) return OTHER_MAX_VECTORS;
    if (tj_k_isa_active() == TJ_K_ISA_AVX512)
        return g->cols >= ROW_FORM_LONG_ROWS ? ROW_FORM_LONG_MAX_VECTORS : ROW_FORM_MAX_VECTORS;
    return g->cols >= ROW_FORM_LONG_ROWS  ? AVX2_ROW_FORM_LONG_MAX_VECTORS
           : g->cols >= AVX2_ROW_FORM_MID_ROWS ? AVX2_ROW_FORM_MID_MAX_VECTORS
                                               : AVX2_ROW_FORM_MAX_VECTORS;
}

/* A batch of products, for batch_items; `inner` threads for each product
 * (1 when the batch is split over the threads). */
typedef struct batch_args {
    const tj_k_gemv_args *g;
    int inner;
} batch_args;

/* Products [b0, b1) of the batch. */
static void batch_items(void *ctx, int t, int64_t b0, int64_t b1)
{
    const batch_args *a = ctx;
    (void)t;
    for (int64_t b = b0; b < b1; b++) gemv_item(a->g, b, a->inner);
}

void tj_k_gemv(const tj_k_gemv_args *g, int nthreads)
{
    int64_t elems = g->rows * g->cols * g->nv;
    /* small products share the threads over the batch, each on one thread
     * (BLAS's gemv only below its own threading threshold) */
    bool one_thread_each = tj_k_gemv_on_own_kernel(g->dtype, g->incx) || g->rows * g->cols < BLAS_SERIAL_ELEMS;
    int nt = nthreads;
    if (nt > g->batch) nt = (int)g->batch;
    if (!one_thread_each || elems >= PAR_ELEMS || (double)elems * (double)g->batch < (double)PAR_ELEMS) nt = 1;
    batch_args a = {g, nt <= 1 ? nthreads : 1};
    tj_k_parallel(nt, g->batch, batch_items, &a);
}
