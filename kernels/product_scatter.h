/* A product whose result goes straight into a scatter_add (a decomposed
 * convolution's input gradient: the columns W^T @ g, then col2im's
 * scatter_add into the zero-padded image), computed a block of columns at
 * a time into scratch that stays in L2, each block's entries added to
 * their targets right after: the product never goes through memory.
 *
 * The scatter's entries are laid out as the product's result [batch, m, n]
 * in order, cut into `rows` scatter rows of lines x n entries (lines rows of
 * the product each; m a multiple of lines). Targets of different scatter
 * rows are distinct (their coordinates outside the scattered dim differ),
 * so scatter rows may go to different threads; each scatter row's entries
 * share one pattern of targets relative to the row's base (the index is
 * the same for every row), given as runs of consecutive targets per line
 * and block of columns. The compiler (tracer/fuse_scatter.c) checked that
 * the blocked order gives every target its additions in the order of the
 * entries, so the sums are those of the product followed by the scatter,
 * bit for bit. */
#ifndef TJIT_KERNELS_PRODUCT_SCATTER_H
#define TJIT_KERNELS_PRODUCT_SCATTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gemm.h"

/** Bytes of a block of the product (all the rows a thread computes at
 * once, times the block's columns): half of a 1 MiB L2, leaving room for
 * B's block and the targets. The compiler sizes blocks of columns by it. */
#define TJ_K_PRODUCT_SCATTER_BLOCK_BYTES (512 * 1024)

/** The targets of one scatter row's entries. */
typedef struct tj_k_scatter_pattern {
    int64_t lines;           /**< rows of the product per scatter row */
    int64_t width;           /**< columns of the product per block (the last block may be narrower) */
    int64_t blocks;          /**< ceil(n / width) */
    bool descending;         /**< blocks are taken last first */
    int64_t rows;            /**< scatter rows: batch * m / lines */
    const int64_t *row_base; /**< [rows]: element offset of each scatter row in out */
    const int64_t *at;       /**< [lines * blocks + 1]: first run of (line, block), line-major */
    const int64_t *runs;     /**< runs of up to 16 consecutive targets, start * 16 + (length - 1),
                                  start relative to the row's base; each line's block of entries
                                  in order */
} tj_k_scatter_pattern;

/** Adds src's elements, in order, into o along the runs: o[start + i] +=
 * src[...] for each run (float32; AVX-512 or AVX2 where active, else a
 * loop: the same additions, and no element outside the runs touched). */
void tj_k_scatter_add_runs_f32(float *o, const float *src, const int64_t *runs, int64_t nruns);

/** Bytes of scratch tj_k_product_scatter_add needs for a product of `batch`
 * items of [m, k] x [k, n] on up to nthreads threads, blocked or not (see
 * there). */
size_t tj_k_product_scatter_scratch_bytes(const tj_k_scatter_pattern *pat, int64_t batch, int64_t m, int64_t n,
                                          bool blocked, int nthreads);

/** Whether tj_k_product_scatter_add takes blocks of columns for this
 * product: where tj_k_gemm computes it on our GEMM kernel, whose every
 * element comes out the same wherever it falls in a call. Otherwise the
 * whole product is computed first (the unfused route's bits). */
bool tj_k_product_scatter_blocked(int64_t m, int64_t n, int64_t k, tj_k_mat a, tj_k_mat b);

/** out (float32, already holding self's values) += the scatter of A_b @ B_b
 * (float32, A_b [m, k] at a.p + b*a_bs, B_b [k, n] at b.p + b*b_bs, layouts
 * tj_k_gemm_layout_ok accepts) along `pat`. Blocked: scatter rows split over
 * up to nthreads threads, each computing blocks of columns of its rows into
 * its slice of scratch; otherwise the whole product (tj_k_gemm, as the
 * unfused bmm) into scratch, then the scatter in the entries' order.
 * `scratch`: tj_k_product_scatter_scratch_bytes of memory. */
void tj_k_product_scatter_add(const tj_k_scatter_pattern *pat, int64_t batch, int64_t m, int64_t n, int64_t k,
                              tj_k_mat a, int64_t a_bs, tj_k_mat b, int64_t b_bs, float *out, float *scratch,
                              bool blocked, int nthreads);

#endif
