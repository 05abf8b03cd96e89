/* Matrix-vector products (internal to kernels/), and products of a matrix
 * with many vectors: tj_k_gemm routes here the products where these beat
 * sgemm (tj_k_gemv_max_vectors). BLAS's sgemm packs the whole of B even for
 * one row of A, which made a one-row addmm ~5x slower than a GEMV over the
 * same weights (mlp with batch 1: 80 us against 15 us); and with contiguous
 * rows on both sides (x @ W^T, a Linear layer) our AVX-512 row form beats
 * OpenBLAS's Haswell sgemm by 1.4-2x at any batch, its AVX2 instance the
 * GEMM kernels by 1.1-3x up to 8-32 vectors (gemv.c).
 *
 * m is a rows x cols row-major matrix with leading dimension ld >= cols:
 *   row form:    y[i] = alpha * sum_p m[i*ld + p] * x[p] + beta * y[i],  i < rows
 *   column form: y[j] = alpha * sum_p m[p*ld + j] * x[p] + beta * y[j],  j < cols
 * x has stride incx, y stride incy; beta == 0 never reads y (nan there is
 * ignored). */
#ifndef TJIT_KERNELS_GEMV_H
#define TJIT_KERNELS_GEMV_H

#include <stdbool.h>
#include <stdint.h>

#include "tjit/core.h"

/** A batch of products of one shape: product b multiplies m + b*m_bs with
 * nv vectors x + b*x_bs + v*x_vs into y + b*y_bs + v*y_vs (element
 * offsets; 0 repeats an operand). */
typedef struct tj_k_gemv_args {
    tj_dtype dtype; /**< float32 or float64 */
    bool trans;     /**< column form */
    int64_t rows, cols, ld;
    const void *m;
    const void *x;
    int64_t incx; /**< >= 1 */
    void *y;
    int64_t incy;
    double alpha, beta;
    int64_t nv, x_vs, y_vs;
    int64_t batch, m_bs, x_bs, y_bs;
} tj_k_gemv_args;

/** Runs every product (rows, cols, nv, batch >= 1). Uses up to `nthreads`
 * threads (over the batch, or over the outputs of a large product); call
 * with nthreads 1 from inside a parallel loop. */
void tj_k_gemv(const tj_k_gemv_args *g, int nthreads);

/** Whether tj_k_gemv computes products of this dtype and vector stride on
 * our kernels (float32, unit stride, the ISA in use AVX2 or AVX-512:
 * cpu_isa.h) rather than on BLAS's gemv. */
bool tj_k_gemv_on_own_kernel(tj_dtype dtype, int64_t incx);

/** The most vectors (nv) for which tj_k_gemv beats the GEMM kernels on
 * products of g's kind (dtype, form, x's stride, row length) on the ISA in
 * use; at least 1. */
int64_t tj_k_gemv_max_vectors(const tj_k_gemv_args *g);

/** Columns per pass of the float32 row form (gemv_isa.h) over rows of
 * `cols` columns: at most TJ_K_GEMV_ROW_PASS (four rows and four vectors
 * of that many floats stay in L1), a multiple of 16, the passes as even
 * as that allows. */
#define TJ_K_GEMV_ROW_PASS 1024
static inline int64_t tj_k_gemv_n_pass_cols(int64_t cols)
{
    int64_t passes = (cols + TJ_K_GEMV_ROW_PASS - 1) / TJ_K_GEMV_ROW_PASS;
    return ((cols + passes - 1) / passes + 15) / 16 * 16;
}

/** One pass of the float32 row form on our kernel of the ISA in use (AVX2
 * or AVX-512; call only when tj_k_gemv_on_own_kernel), one thread: the
 * dot products of `rows` rows of m (leading dimension ld) with nv vectors
 * x + v*x_vs over n columns, y[v*y_vs + i*incy] = alpha * dot + b * y (b 0:
 * y not read), for a product whose passes are kc columns
 * (tj_k_gemv_n_pass_cols, n <= kc). Each output comes out as in the pass
 * of tj_k_gemv over those columns (its rows split at multiples of 4): a
 * product computed pass by pass, in order, with b its beta for the first
 * and 1 after, gives tj_k_gemv's bytes, whatever holds the pass's columns
 * (the gathered bmm copies each pass of a view into scratch). */
void tj_k_gemv_n_f32_pass(int64_t nv, int64_t rows, int64_t n, int64_t kc, float alpha, const float *m, int64_t ld,
                          const float *x, int64_t x_vs, float b, float *y, int64_t incy, int64_t y_vs);

/** Row form for float32 (gemv_isa.h; one instance per ISA): nv >= 1
 * contiguous vectors x + v*x_vs into y + v*y_vs, stride incy. */
void tj_k_gemv_n_f32_avx512(int64_t nv, int64_t rows, int64_t cols, float alpha, const float *m, int64_t ld,
                            const float *x, int64_t x_vs, float beta, float *y, int64_t incy, int64_t y_vs);
void tj_k_gemv_n_f32_avx2(int64_t nv, int64_t rows, int64_t cols, float alpha, const float *m, int64_t ld,
                          const float *x, int64_t x_vs, float beta, float *y, int64_t incy, int64_t y_vs);
void tj_k_gemv_n_f32_pass_avx512(int64_t nv, int64_t rows, int64_t n, int64_t kc, float alpha, const float *m,
                                 int64_t ld, const float *x, int64_t x_vs, float b, float *y, int64_t incy,
                                 int64_t y_vs);
void tj_k_gemv_n_f32_pass_avx2(int64_t nv, int64_t rows, int64_t n, int64_t kc, float alpha, const float *m,
                               int64_t ld, const float *x, int64_t x_vs, float b, float *y, int64_t incy, int64_t y_vs);
/** Column form for float32, one contiguous vector (gemv_isa.h). */
void tj_k_gemv_t_f32_avx512(int64_t rows, int64_t cols, float alpha, const float *m, int64_t ld, const float *x,
                            float beta, float *y, int64_t incy);
void tj_k_gemv_t_f32_avx2(int64_t rows, int64_t cols, float alpha, const float *m, int64_t ld, const float *x,
                          float beta, float *y, int64_t incy);

#endif
