/* Reductions over strided buffers: sums, products, extrema, arg-extrema,
 * sums of squared deviations and of exponentials, all / any, over any set of dims of an input of
 * any strides, into a contiguous output holding one value per combination of
 * the kept dims (row-major in their order).
 *
 * Use: fill a tj_k_reduce (kind, input, output, options), call
 * tj_k_reduce_prepare with the input geometry and the dims to reduce, give
 * tj_k_reduce_run a scratch buffer of tj_k_reduce_scratch_bytes bytes.
 *
 * Strategy, chosen from the strides:
 * - the innermost reduced dim is contiguous: each output folds contiguous
 *   runs (vectorised with independent lanes); leading reduced dims that lie
 *   outside every kept dim in memory are walked outermost, so that memory is
 *   read in order (sums over N, H, W of an NCHW tensor);
 * - the innermost kept dim is contiguous: rows of outputs are accumulated row
 *   by row of the reduced dims (no transposing copy), vectorised across the
 *   outputs;
 * - otherwise each output folds strided runs.
 * Long reductions are cut into fixed-size chunks whose partial results are
 * combined in order, so that results do not depend on the thread count.
 * Floating sums and products accumulate in double. */
#ifndef TJIT_KERNELS_REDUCE_H
#define TJIT_KERNELS_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "tjit/core.h"

typedef enum tj_k_red_kind {
    TJ_K_RED_SUM,      /**< sum(x) / divisor: double for a float result, int64 (wrapping) for an integer one */
    TJ_K_RED_SUMSQDEV, /**< sum((x - param[o])^2) / divisor, in double */
    TJ_K_RED_SUMEXP,   /**< log(sum(exp(x - param[o]))) + param[o], in double */
    TJ_K_RED_MAX,      /**< largest value; nan propagates */
    TJ_K_RED_MIN,      /**< smallest value; nan propagates */
    TJ_K_RED_ARGMAX,   /**< largest value and its first flat index over the reduced dims; nan counts as largest */
    TJ_K_RED_ARGMIN,   /**< smallest value and its first flat index; nan counts as smallest */
    TJ_K_RED_PROD,     /**< product: double for a float result, int64 (wrapping) for an integer one */
    TJ_K_RED_ALL,      /**< no element is 0 (nan is not 0), into a bool result; any input dtype */
    TJ_K_RED_ANY,      /**< some element is not 0, into a bool result; any input dtype */
} tj_k_red_kind;

/** Coalesced geometry of one group of dims (kept or reduced). */
typedef struct tj_k_red_dims {
    int n;
    int64_t size[TJ_MAX_DIMS];
    int64_t stride[TJ_MAX_DIMS];
} tj_k_red_dims;

typedef struct tj_k_reduce {
    tj_k_red_kind kind;
    const void *x;  /**< element [0, ..., 0] of the input */
    tj_dtype x_dtype;
    /** SUM, PROD of an int64/bool input: accumulate in int64 (true) or in
     * double (false, for a float result). Other kinds ignore it. */
    bool int_acc;
    const double *param; /**< SUMSQDEV, SUMEXP: one value per output */
    double divisor;      /**< SUM, SUMSQDEV: the result is divided by it (1 for a plain sum) */
    bool root;           /**< SUMSQDEV: the square root of the quotient, in double (std) */
    void *out;           /**< one value per output, contiguous; NULL allowed for ARGMAX */
    tj_dtype out_dtype;  /**< float32/float64 for float results, int64/bool for integer ones, bool for ALL/ANY */
    int64_t *out_index;  /**< ARGMAX, ARGMIN: one index per output */
    /* set by tj_k_reduce_prepare */
    tj_k_red_dims kept, red;
    int64_t nout, nred;
} tj_k_reduce;

/** Computes the geometry: `reduced[d]` marks the dims folded into each
 * output. Dims of size 1 are dropped, neighbouring dims merged where the
 * strides allow. */
void tj_k_reduce_prepare(tj_k_reduce *r, int ndim, const int64_t *shape, const int64_t *strides,
                         const bool *reduced);
/** Bytes of scratch tj_k_reduce_run needs (0 when none). */
size_t tj_k_reduce_scratch_bytes(const tj_k_reduce *r);
/** Runs the reduction with up to `nthreads` threads. An empty
 * reduction gives 0 for sums (so nan for a mean), 1 for PROD, true for ALL,
 * false for ANY, -inf/+inf for MAX/MIN and index 0 for ARGMAX/ARGMIN:
 * callers reject those that PyTorch rejects. */
void tj_k_reduce_run(const tj_k_reduce *r, void *scratch, int nthreads);

/** Longest row tj_k_reduce_rows takes: a run folded into one partial
 * result (longer rows are cut into parts, which need scratch). */
#define TJ_K_REDUCE_ROW_MAX 16384

/** The reductions of `nrows` contiguous rows of n elements each (x: row r
 * at x + r * n elements, dtype `dt`, float32 or float64) into out[r]
 * (dtype `out_dt`, float32 or float64; dt for MAX and MIN), on the calling
 * thread: kind TJ_K_RED_SUM (a plain sum, divisor 1: accumulated in double
 * whatever the dtypes), TJ_K_RED_MAX or TJ_K_RED_MIN. Each row's value is bit for bit the one
 * tj_k_reduce_run gives for that row in a reduction over the contiguous
 * last dim of any number of rows, at any thread count and ISA: each row
 * is one run of one part there, folded by the same loops (fold / folds of
 * the ISA in use) from the same initial accumulator and finished alike,
 * without the driver's planning per call. Loop fusion
 * (tracer/fuse_pointwise.c) calls it on a chunk of rows at a time.
 * 2 <= n <= TJ_K_REDUCE_ROW_MAX, nrows >= 0. */
void tj_k_reduce_rows(tj_k_red_kind kind, tj_dtype dt, tj_dtype out_dt, const void *x, int64_t nrows, int64_t n,
                      void *out);

#endif
