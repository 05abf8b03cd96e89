/* A small single-threaded float32 GEMM for the convolution kernels.
 *
 * Convolutions split their work over the batch (tj_k_parallel) and need a
 * GEMM that runs inside each thread without starting threads of its own
 * (OpenBLAS called from a parallel loop either oversubscribes the cores or,
 * set to one thread, changes a process-wide setting). Blocked and packed as in
 * Goto & van de Geijn, "Anatomy of High-Performance Matrix Multiplication":
 * B is packed in panels of TJ_K_GEMM_NR columns, A in panels of TJ_K_GEMM_MR
 * rows, and an MR x NR micro-kernel (AVX-512 or AVX2 + FMA when the ISA in
 * use, cpu_isa.h, is one of them, generic C otherwise; conv_gemm_isa.h)
 * accumulates in registers. The AVX-512 and AVX2 kernels give the same bits: each element of C gets the
 * same fused multiply-adds in the same order. */
#ifndef TJIT_KERNELS_CONV_GEMM_H
#define TJIT_KERNELS_CONV_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TJ_K_GEMM_MR 8
#define TJ_K_GEMM_NR 32
#define TJ_K_GEMM_KC 256
#define TJ_K_GEMM_MC 64
#define TJ_K_GEMM_NC 512

/** True when the ISA in use (cpu_isa.h) runs our float32 micro-kernels
 * (AVX-512, or AVX2 with FMA): tj_k_sgemm and the implicit convolution
 * (conv_implicit.h). Elsewhere their portable C versions stay correct but run several times slower than
 * OpenBLAS's sgemm, so float32 convolution goes through OpenBLAS there
 * (conv.c). */
bool tj_k_conv_own_kernels(void);

/** Bytes of scratch tj_k_sgemm needs (packed blocks of A and B), any shape. */
size_t tj_k_sgemm_work_bytes(void);

/** C[m x n] = A·B + beta·C (+ bias[i] on row i when bias is not NULL).
 * A is m x k, stored row-major with leading dimension lda, or, when trans_a,
 * stored as its k x m transpose; likewise B (k x n, or n x k when trans_b).
 * beta 0 ignores C's previous contents (nan included). `work` holds
 * tj_k_sgemm_work_bytes() bytes, 64-byte aligned. Single-threaded. */
void tj_k_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                const float *b, int64_t ldb, float beta, float *c, int64_t ldc, const float *bias, void *work);

/** Packing of tj_k_sgemm's blocks: an mc x kc block of A into panels of MR
 * rows (element (r, p) at a[r*lda + p], or a[p*lda + r] when trans) or a
 * kc x nc block of B into panels of NR columns (element (p, j) at
 * b[p*ldb + j], or b[j*ldb + p] when trans); missing rows / columns of the
 * last panel are zeros. Generic C, AVX-512 and AVX2. */
typedef void (*tj_k_sgemm_pack)(bool trans, const float *src, int64_t ld, int64_t rows_or_kc, int64_t kc_or_cols,
                                float *dst);
void tj_k_sgemm_pack_a_generic(bool trans, const float *a, int64_t lda, int64_t mc, int64_t kc, float *ap);
void tj_k_sgemm_pack_a_avx512(bool trans, const float *a, int64_t lda, int64_t mc, int64_t kc, float *ap);
void tj_k_sgemm_pack_a_avx2(bool trans, const float *a, int64_t lda, int64_t mc, int64_t kc, float *ap);
void tj_k_sgemm_pack_b_generic(bool trans, const float *b, int64_t ldb, int64_t kc, int64_t nc, float *bp);
void tj_k_sgemm_pack_b_avx512(bool trans, const float *b, int64_t ldb, int64_t kc, int64_t nc, float *bp);
void tj_k_sgemm_pack_b_avx2(bool trans, const float *b, int64_t ldb, int64_t kc, int64_t nc, float *bp);

/** Micro-kernel: the MR x NR tile of ap (kc x MR, packed) times bp (kc x NR,
 * packed) is written to the top-left mr x nr corner of c (leading dimension
 * ldc), after adding beta·c (beta 0: c not read) and bias[i] (when not NULL)
 * to row i. */
typedef void (*tj_k_sgemm_ukernel)(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int mr,
                                   int nr, float beta, const float *bias);

void tj_k_sgemm_ukernel_generic(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int mr, int nr,
                                float beta, const float *bias);
void tj_k_sgemm_ukernel_avx512(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int mr, int nr,
                               float beta, const float *bias);
void tj_k_sgemm_ukernel_avx2(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int mr, int nr,
                             float beta, const float *bias);

/* Variants for convolutions that read B or A straight from an image (see
 * conv_implicit.h); the tile, beta and bias work as above. */

/** B row p is the NR floats at b + off[p] (unpacked, any alignment). */
typedef void (*tj_k_sgemm_ukernel_offsets)(int64_t kc, const float *ap, const float *b, const int64_t *off, float *c,
                                           int64_t ldc, int mr, int nr, float beta, const float *bias);
void tj_k_sgemm_ukernel_offsets_generic(int64_t kc, const float *ap, const float *b, const int64_t *off, float *c,
                                        int64_t ldc, int mr, int nr, float beta, const float *bias);
void tj_k_sgemm_ukernel_offsets_avx512(int64_t kc, const float *ap, const float *b, const int64_t *off, float *c,
                                       int64_t ldc, int mr, int nr, float beta, const float *bias);
void tj_k_sgemm_ukernel_offsets_avx2(int64_t kc, const float *ap, const float *b, const int64_t *off, float *c,
                                     int64_t ldc, int mr, int nr, float beta, const float *bias);

/** The reduction runs over rows x cols steps: A row r at step (y, x) is
 * arows[r][y*row_stride + x], B (packed) row y*cols + x. */
typedef void (*tj_k_sgemm_ukernel_rows)(int64_t rows, int64_t cols, int64_t row_stride, const float *const *arows,
                                        const float *bp, float *c, int64_t ldc, int mr, int nr, float beta,
                                        const float *bias);
void tj_k_sgemm_ukernel_rows_generic(int64_t rows, int64_t cols, int64_t row_stride, const float *const *arows,
                                     const float *bp, float *c, int64_t ldc, int mr, int nr, float beta,
                                     const float *bias);
void tj_k_sgemm_ukernel_rows_avx512(int64_t rows, int64_t cols, int64_t row_stride, const float *const *arows,
                                    const float *bp, float *c, int64_t ldc, int mr, int nr, float beta,
                                    const float *bias);
void tj_k_sgemm_ukernel_rows_avx2(int64_t rows, int64_t cols, int64_t row_stride, const float *const *arows,
                                  const float *bp, float *c, int64_t ldc, int mr, int nr, float beta,
                                  const float *bias);

/** Each of the mr rows of A has its own base: A row r at step p is
 * arows[r][off[p]] (B packed as for the plain kernel). */
typedef void (*tj_k_sgemm_ukernel_taps)(int64_t kc, const float *const *arows, const int64_t *off, const float *bp,
                                        float *c, int64_t ldc, int mr, int nr, float beta, const float *bias);
void tj_k_sgemm_ukernel_taps_generic(int64_t kc, const float *const *arows, const int64_t *off, const float *bp,
                                     float *c, int64_t ldc, int mr, int nr, float beta, const float *bias);
void tj_k_sgemm_ukernel_taps_avx512(int64_t kc, const float *const *arows, const int64_t *off, const float *bp,
                                    float *c, int64_t ldc, int mr, int nr, float beta, const float *bias);
void tj_k_sgemm_ukernel_taps_avx2(int64_t kc, const float *const *arows, const int64_t *off, const float *bp,
                                  float *c, int64_t ldc, int mr, int nr, float beta, const float *bias);

/** The same with 16-column tiles (B packed in panels of 16 columns, nr <= 16):
 * for 16 or fewer output channels. */
void tj_k_sgemm_ukernel_taps16_generic(int64_t kc, const float *const *arows, const int64_t *off, const float *bp,
                                       float *c, int64_t ldc, int mr, int nr, float beta, const float *bias);
void tj_k_sgemm_ukernel_taps16_avx512(int64_t kc, const float *const *arows, const int64_t *off, const float *bp,
                                      float *c, int64_t ldc, int mr, int nr, float beta, const float *bias);
void tj_k_sgemm_ukernel_taps16_avx2(int64_t kc, const float *const *arows, const int64_t *off, const float *bp,
                                    float *c, int64_t ldc, int mr, int nr, float beta, const float *bias);

/** dst[c*ldd + r] = src[r*lds + c] (+ bias[c] when bias is not NULL) for
 * the rows x cols matrix src. */
typedef void (*tj_k_transpose_bias)(const float *src, int64_t rows, int64_t cols, int64_t lds, const float *bias,
                                    float *dst, int64_t ldd);
void tj_k_transpose_bias_generic(const float *src, int64_t rows, int64_t cols, int64_t lds, const float *bias,
                                 float *dst, int64_t ldd);
void tj_k_transpose_bias_avx512(const float *src, int64_t rows, int64_t cols, int64_t lds, const float *bias,
                                float *dst, int64_t ldd);
void tj_k_transpose_bias_avx2(const float *src, int64_t rows, int64_t cols, int64_t lds, const float *bias,
                              float *dst, int64_t ldd);

/** The rows kernel with 16-column tiles (B packed in panels of 16 columns,
 * nr <= 16): for 16 or fewer columns. */
void tj_k_sgemm_ukernel_rows16_generic(int64_t rows, int64_t cols, int64_t row_stride, const float *const *arows,
                                       const float *bp, float *c, int64_t ldc, int mr, int nr, float beta,
                                       const float *bias);
void tj_k_sgemm_ukernel_rows16_avx512(int64_t rows, int64_t cols, int64_t row_stride, const float *const *arows,
                                      const float *bp, float *c, int64_t ldc, int mr, int nr, float beta,
                                      const float *bias);
void tj_k_sgemm_ukernel_rows16_avx2(int64_t rows, int64_t cols, int64_t row_stride, const float *const *arows,
                                    const float *bp, float *c, int64_t ldc, int mr, int nr, float beta,
                                    const float *bias);

/** Packs the transpose of the rows x cols row-major matrix src as the B
 * operand of the rows kernels, in panels of `width` (16 or NR) columns:
 * (col c, row r) goes to dst[(r / width) * cols * width + c * width + r % width].
 * Entries for rows past `rows` in the last panel are not written. */
typedef void (*tj_k_sgemm_pack_transposed)(const float *src, int64_t rows, int64_t cols, int width, float *dst);
void tj_k_sgemm_pack_transposed_generic(const float *src, int64_t rows, int64_t cols, int width, float *dst);
void tj_k_sgemm_pack_transposed_avx512(const float *src, int64_t rows, int64_t cols, int width, float *dst);
void tj_k_sgemm_pack_transposed_avx2(const float *src, int64_t rows, int64_t cols, int width, float *dst);

/** Copies `rows` rows of n floats (row starts src_stride / dst_stride
 * apart): the framing of images for the implicit convolutions, whose rows
 * are too short for memcpy calls to pay. */
typedef void (*tj_k_copy_rows)(const float *src, int64_t src_stride, float *dst, int64_t dst_stride, int64_t rows,
                               int64_t n);
void tj_k_copy_rows_generic(const float *src, int64_t src_stride, float *dst, int64_t dst_stride, int64_t rows,
                            int64_t n);
void tj_k_copy_rows_avx512(const float *src, int64_t src_stride, float *dst, int64_t dst_stride, int64_t rows,
                           int64_t n);
void tj_k_copy_rows_avx2(const float *src, int64_t src_stride, float *dst, int64_t dst_stride, int64_t rows,
                         int64_t n);

/** The kernels of the ISA in use (cpu_isa.h: AVX-512, AVX2 + FMA or generic C). */
tj_k_sgemm_ukernel tj_k_sgemm_pick_ukernel(void);
tj_k_sgemm_ukernel_offsets tj_k_sgemm_pick_ukernel_offsets(void);
tj_k_sgemm_ukernel_rows tj_k_sgemm_pick_ukernel_rows(void);
tj_k_sgemm_ukernel_rows tj_k_sgemm_pick_ukernel_rows16(void);
tj_k_sgemm_pack_transposed tj_k_sgemm_pick_pack_transposed(void);
tj_k_sgemm_ukernel_taps tj_k_sgemm_pick_ukernel_taps(void);
tj_k_sgemm_ukernel_taps tj_k_sgemm_pick_ukernel_taps16(void);
tj_k_sgemm_pack tj_k_sgemm_pick_pack_a(void);
tj_k_sgemm_pack tj_k_sgemm_pick_pack_b(void);
tj_k_transpose_bias tj_k_pick_transpose_bias(void);
tj_k_copy_rows tj_k_pick_copy_rows(void);

#endif
