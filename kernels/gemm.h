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

/** A fused epilogue (as oneDNN's post-ops and cuBLASLt's epilogues): a
 * bias row added to every row of C, then an elementwise loop, either one
 * optional. The bias (NULL: none) is n elements of C's dtype, contiguous:
 * C[i, j] + bias[j], one rounding, as the add kernel computes it; our
 * float32 kernel adds it as the last step of each element's sum, from
 * registers. The loop (NULL: none) has the contract of
 * kernels/elementwise.h (n values, out, in[], ctx) and runs in place over
 * C's elements once they are final, by the thread that computed them and
 * while they are still in its cache.
 * The loop reads `nin` (1 or 2) inputs: in[self] is the part of C itself;
 * the other, when nin is 2, is the same part of `other`, a matrix of C's
 * shape and dtype with row stride other_rs and contiguous columns. The loop
 * must give each element a value that depends only on its own inputs, so
 * that applying it in pieces equals applying it once over C. */
typedef struct tj_k_epilogue {
    void (*loop)(int64_t n, void *out, const void *const *in, const void *ctx);
    const void *ctx;
    int nin;
    int self;
    const void *other;
    int64_t other_rs;
    const void *bias;
} tj_k_epilogue;

/** Results smaller than this (elements) get an epilogue that runs after
 * the product from the calling thread alone, as tj_elementwise runs an
 * operator of that size on one thread; with an epilogue, our kernel splits
 * them by rows (gemm_isa.h). */
#define TJ_K_EPILOGUE_PARALLEL_MIN 32768

/** Applies `e` to rows [i0, i0 + rows) and columns [j0, j0 + cols) of C
 * (`esize`-byte elements, leading dimension ldc): one loop call per row, or
 * one for the whole block when its rows are adjacent in C and in other. */
static inline void tj_k_epilogue_apply(const tj_k_epilogue *e, size_t esize, void *c, int64_t ldc, int64_t i0,
                                       int64_t rows, int64_t j0, int64_t cols)
{
    for (int64_t i = i0; e->bias && i < i0 + rows; i++) {
        if (esize == sizeof(float)) {
            float *row = (float *)c + i * ldc + j0;
            const float *b = (const float *)e->bias + j0;
            for (int64_t j = 0; j < cols; j++) row[j] = row[j] + b[j];
        } else {
            double *row = (double *)c + i * ldc + j0;
            const double *b = (const double *)e->bias + j0;
            for (int64_t j = 0; j < cols; j++) row[j] = row[j] + b[j];
        }
    }
    if (!e->loop) return;
    bool whole = ldc == cols && (e->nin < 2 || e->other_rs == cols);
    int64_t calls = whole ? 1 : rows, n = whole ? rows * cols : cols;
    for (int64_t r = 0; r < calls; r++) {
        int64_t i = i0 + r;
        const void *in[2];
        char *row = (char *)c + (size_t)(i * ldc + j0) * esize;
        in[e->self] = row;
        if (e->nin > 1) in[1 - e->self] = (const char *)e->other + (size_t)(i * e->other_rs + j0) * esize;
        e->loop(n, row, in, e->ctx);
    }
}

/** For each of `batch` items b: C_b = alpha * A_b @ B_b + beta * C_b, with
 * A_b [m, k] at a.p + b*a_bs, B_b [k, n] at b.p + b*b_bs (element offsets;
 * 0 repeats one matrix), C_b row-major at c + b*c_bs with leading dimension
 * ldc >= max(1, n). dtype is float32 or float64; A and B must satisfy
 * tj_k_gemm_layout_ok. beta == 0 never reads C (nan there is ignored);
 * alpha == 0 (or k == 0) never reads A and B: C = beta * C, as BLAS and
 * PyTorch's addmm.
 * m, n, k, ldc must fit BLAS's int. Uses up to `nthreads` threads (one
 * setting shared with OpenBLAS); call with nthreads 1 from inside a parallel
 * region, and only with m*n*k <= TJ_K_GEMM_SERIAL_WORK.
 * `epi` (NULL: none; batch must be 1 otherwise) runs on C after the
 * product: inside our GEMM kernel on each thread's part as soon as it is
 * done, after the whole product on the other routes. */
void tj_k_gemm(tj_dtype dtype, int64_t batch, int64_t m, int64_t n, int64_t k, double alpha, tj_k_mat a,
               int64_t a_bs, tj_k_mat b, int64_t b_bs, double beta, void *c, int64_t c_bs, int64_t ldc,
               int nthreads, const tj_k_epilogue *epi);

/** Whether our float32 GEMM kernel, tj_k_gemm_f32, runs under the ISA in use
 * (cpu_isa.h): AVX-512 (the 6 x 64 instance) or AVX2 and FMA (the 6 x 16 one). */
bool tj_k_gemm_f32_supported(void);

/** Our float32 GEMM kernel (gemm_isa.h; used by tj_k_gemm where
 * own_kernel in gemm.c routes to it), on the instance of the ISA in use;
 * call only when tj_k_gemm_f32_supported(). C [m, n] (leading dimension
 * ldc) = alpha * A @ B + beta * C, A element (i, p) at a[i*ars + p*acs]
 * (any strides), B element (p, j) at b[p*brs + j*bcs] with bcs == 1
 * (row-major) or brs == 1 (column-major); m, n, k >= 1; beta == 0 never
 * reads C. Threads over blocks of whole rows, or of 64 (AVX2: 16) columns
 * when m is small against B (see split_rows in gemm_isa.h); each element
 * is computed the same way on any number of threads and wherever its
 * column falls in the call. `epi` (NULL: none) runs on each thread's rows
 * or columns of C right after that thread computed them. A long sum into a
 * small C with a column-major B (17-64 rows on AVX-512, 9-16 on AVX2;
 * k >= 4096) is computed as C^T = B^T @ A^T, with the same bytes (long_sum
 * in gemm_isa.h); `epi` then runs over C at the end. */
void tj_k_gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                   const float *b, int64_t brs, int64_t bcs, float beta, float *c, int64_t ldc, int nthreads,
                   const tj_k_epilogue *epi);

/** A k x n float32 matrix read where it lies, through offset tables:
 * element (p, j) at base[row_off[p] + col_off[j]] (offsets in elements),
 * e.g. a strided view whose dims split into a group for the rows and one
 * for the columns. The tables hold k and n entries; base + row_off[p] and
 * base + col_off[j] must point into the same object as the elements (as
 * with row_off[0] = col_off[0] = 0 and strides >= 0). */
typedef struct tj_k_offset_mat {
    const float *base;
    const int64_t *row_off, *col_off;
} tj_k_offset_mat;

/** tj_k_gemm_f32 with B given by offset tables (`b`, not retained): C
 * [m, n] (leading dimension ldc) = alpha * A @ B + beta * C, m, n, k >= 1,
 * beta == 0 never reads C; call only when tj_k_gemm_f32_supported(). Our
 * kernel packs B's blocks straight from where the tables point, one masked
 * load per run of consecutive elements, into the very blocks it packs from
 * a copy of B, and computes every element of C with the bytes
 * tj_k_gemm_f32 gives for that copy, row- or column-major, on any number
 * of threads (its long-sum path included: that gives the same bytes). */
void tj_k_gemm_f32_offsets(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                           const tj_k_offset_mat *b, float beta, float *c, int64_t ldc, int nthreads);

/** Steps of the sum per block in tj_k_gemm_f32 (and _offsets) on the ISA in
 * use (call only when tj_k_gemm_f32_supported()): each element of C is
 * summed block by block, steps [0, block), [block, 2 block), ... each a
 * chain of fused multiply-adds from 0 in order, and each block's sum then
 * added to C's value so far (the first block's stored as it is, alpha 1).
 * Kernels that must give the same bytes as the GEMM (the window products
 * of conv_implicit.h) sum in the same blocks. */
int64_t tj_k_gemm_f32_block(void);

/** The instances behind tj_k_gemm_f32 and tj_k_gemm_f32_offsets
 * (gemm_avx512.c, gemm_avx2.c), each callable only on a CPU with its ISA. */
void tj_k_gemm_f32_avx512(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                          const float *b, int64_t brs, int64_t bcs, float beta, float *c, int64_t ldc, int nthreads,
                          const tj_k_epilogue *epi);
void tj_k_gemm_f32_avx2(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                        const float *b, int64_t brs, int64_t bcs, float beta, float *c, int64_t ldc, int nthreads,
                        const tj_k_epilogue *epi);
int64_t tj_k_gemm_f32_block_avx512(void);
int64_t tj_k_gemm_f32_block_avx2(void);
void tj_k_gemm_f32_offsets_avx512(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars,
                                  int64_t acs, const tj_k_offset_mat *b, float beta, float *c, int64_t ldc,
                                  int nthreads);
void tj_k_gemm_f32_offsets_avx2(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars,
                                int64_t acs, const tj_k_offset_mat *b, float beta, float *c, int64_t ldc, int nthreads);

/** Whether tj_k_gemm computes the float product of an m x k matrix with
 * strides a.rs, a.cs and a k x n one with strides b.rs, b.cs (batch 1,
 * alpha nonzero) on tj_k_gemm_f32, rather than on the
 * matrix-vector kernels or BLAS. */
bool tj_k_gemm_on_own_kernel(tj_dtype dtype, int64_t m, int64_t n, int64_t k, tj_k_mat a, tj_k_mat b);

/** Whether tj_k_gemm computes that product (batch items alike) on our
 * float32 row-form matrix-vector kernel (gemv.h), the rows of A as the
 * vectors and B^T's rows as the matrix: each output's sum then runs pass
 * by pass as tj_k_gemv_n_f32_pass computes it (a column-major B with few
 * columns: a weight gradient's g @ columns^T for few output channels). */
bool tj_k_gemm_on_row_form(tj_dtype dtype, int64_t m, int64_t n, int64_t k, tj_k_mat a, tj_k_mat b);

/** Whether the product's columns may be computed in pieces: true when
 * every call of tj_k_gemm (batch 1, alpha nonzero) on A and a range of
 * B's columns, [j0, j1) with j1 - j0 >= min_cols, in B's layout (row- or
 * column-major; any leading dimension), into C's same columns, gives the
 * bytes the whole product's call gives there, on any number of threads and
 * inside a parallel loop or not. That holds where every such call takes
 * one route, and one that computes each column of C with the same
 * operations wherever the column falls in the call: our GEMM
 * kernel, or the matrix-vector column form on AVX-512 over few rows of A
 * with unit-stride rows. False for the others (BLAS, whose sums depend on
 * a column's place in the call), for float64, for an empty product and
 * for layouts tj_k_gemm_layout_ok refuses. */
bool tj_k_gemm_columns_independent(tj_dtype dtype, int64_t m, int64_t n, int64_t k, tj_k_mat a, tj_k_mat b,
                                   int64_t min_cols);

/** tj_k_gemm for int64 with int64 alpha/beta, any strides (loops, no BLAS).
 * Arithmetic wraps modulo 2^64 as ATen's does. */
void tj_k_gemm_i64(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t alpha, tj_k_mat a, int64_t a_bs,
                   tj_k_mat b, int64_t b_bs, int64_t beta, int64_t *c, int64_t c_bs, int64_t ldc, int nthreads);

/** Copies `batch` strided rows x cols matrices of `esize`-byte elements
 * (batch stride bs) into dst, contiguous row-major. */
void tj_k_pack_matrices(size_t esize, int64_t batch, int64_t rows, int64_t cols, const void *src, int64_t bs,
                        int64_t rs, int64_t cs, void *dst);

#endif
