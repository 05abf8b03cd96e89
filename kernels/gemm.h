/* Matrix products on raw strided buffers: OpenBLAS sgemm/dgemm for float32
 * and float64, except the products that matrix-vector kernels do faster
 * (few rows or columns; float32 x @ W^T with long rows: see gemv.h), plain
 * loops for int64 (as ATen, which has no integer BLAS).
 *
 * Threads: OpenBLAS (pthread build) runs a product whose m*n*k is at most
 * TJ_K_GEMM_SERIAL_WORK on the calling thread alone, and otherwise uses its
 * own pool, sized by tj_set_num_threads. A product issued from inside a
 * parallel loop must therefore stay at or below that size, so that no call
 * oversubscribes the cores; tj_k_gemm chooses between a parallel loop over
 * the batch (small products) and one multi-threaded product per batch item. */
#ifndef TJIT_KERNELS_GEMM_H
#define TJIT_KERNELS_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include <openblas_config.h>

#include "tjit/core.h"

/** Largest m*n*k that OpenBLAS computes without its thread pool (its
 * interface/gemm.c: 65536 * GEMM_MULTITHREAD_THRESHOLD, 4 by default). */
#ifndef OPENBLAS_GEMM_MULTITHREAD_THRESHOLD
#define OPENBLAS_GEMM_MULTITHREAD_THRESHOLD 4
#endif
#define TJ_K_GEMM_SERIAL_WORK (65536.0 * OPENBLAS_GEMM_MULTITHREAD_THRESHOLD)

/** A strided matrix: element (i, j) at p + (i*rs + j*cs) elements. */
typedef struct tj_k_mat {
    const void *p;
    int64_t rs, cs;
} tj_k_mat;

/** True when BLAS reads a rows x cols matrix with strides (rs, cs) as it is:
 * row-major (cs 1) or column-major (rs 1) with a leading dimension that
 * covers a row (column) and fits BLAS's int. Size-1 dims accept any stride. */
bool tj_k_gemm_layout_ok(int64_t rows, int64_t cols, int64_t rs, int64_t cs);

/** For each of `batch` items b: C_b = alpha * A_b @ B_b + beta * C_b, with
 * A_b [m, k] at a.p + b*a_bs, B_b [k, n] at b.p + b*b_bs (element offsets;
 * 0 repeats one matrix), C_b row-major at c + b*c_bs with leading dimension
 * ldc >= max(1, n). dtype is float32 or float64; A and B must satisfy
 * tj_k_gemm_layout_ok. beta == 0 never reads C (nan there is ignored);
 * alpha == 0 (or k == 0) never reads A and B: C = beta * C, as BLAS and
 * PyTorch's addmm.
 * m, n, k, ldc must fit BLAS's int. Uses up to `nthreads` threads (one
 * setting shared with OpenBLAS); call with nthreads 1 from inside a parallel
 * region, and only with m*n*k <= TJ_K_GEMM_SERIAL_WORK. */
void tj_k_gemm(tj_dtype dtype, int64_t batch, int64_t m, int64_t n, int64_t k, double alpha, tj_k_mat a,
               int64_t a_bs, tj_k_mat b, int64_t b_bs, double beta, void *c, int64_t c_bs, int64_t ldc,
               int nthreads);

/** AVX-512 float32 product (gemm_avx512.c, used by tj_k_gemm): C [m, n]
 * (leading dimension ldc) = alpha * A @ B + beta * C, A element (i, p) at
 * a[i*ars + p*acs] (any strides), B element (p, j) at b[p*brs + j*bcs] with
 * bcs == 1 (row-major) or brs == 1 (column-major); m, n, k >= 1; beta == 0
 * never reads C. Threads over blocks of whole rows, or of 64 columns when m
 * is small against B (see split_rows in gemm_avx512.c); each element is
 * computed the same way on any number of threads. */
void tj_k_gemm_f32_avx512(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                          const float *b, int64_t brs, int64_t bcs, float beta, float *c, int64_t ldc, int nthreads);

/** tj_k_gemm for int64 with int64 alpha/beta, any strides (loops, no BLAS).
 * Arithmetic wraps modulo 2^64 as ATen's does. */
void tj_k_gemm_i64(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t alpha, tj_k_mat a, int64_t a_bs,
                   tj_k_mat b, int64_t b_bs, int64_t beta, int64_t *c, int64_t c_bs, int64_t ldc, int nthreads);

/** Copies `batch` strided rows x cols matrices of `esize`-byte elements
 * (batch stride bs) into dst, contiguous row-major. */
void tj_k_pack_matrices(size_t esize, int64_t batch, int64_t rows, int64_t cols, const void *src, int64_t bs,
                        int64_t rs, int64_t cs, void *dst);

#endif
