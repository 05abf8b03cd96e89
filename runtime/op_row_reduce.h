/* Row reductions as loop fusion takes them (tracer/fuse_pointwise.c): a
 * sum, amax or amin over the last dim with keepdim, whose result ([..., 1])
 * later members of a fused step read broadcast over the rows. */
#ifndef TJIT_RUNTIME_OP_ROW_REDUCE_H
#define TJIT_RUNTIME_OP_ROW_REDUCE_H

#include "internal.h"
#include "kernels/reduce.h"

/** One call's row reduction: each row of its operand (argument `arg`, of
 * dtype `dtype`, rows of `n` elements) into one value of dtype `out`. */
typedef struct tj_row_reduce {
    tj_k_red_kind kind; /**< TJ_K_RED_SUM, TJ_K_RED_MAX or TJ_K_RED_MIN */
    tj_dtype dtype;     /**< float32 or float64: the operand's */
    tj_dtype out;       /**< float32 or float64: the result's (a sum's `dtype`, else the operand's) */
    int arg;            /**< the operand's argument index (0) */
    int64_t n;          /**< elements per row: the operand's last dim */
} tj_row_reduce;

/** Fills *rr when a call of `op` with boxed `args` (tensors may be fake:
 * dtype and shape only) is aten::sum.dim_IntList (dtype None or a float
 * dtype: the softmax decompositions sum float32 in float64), aten::amax or aten::amin (ops bound to their own kernels)
 * over exactly the last dim (as d or d - ndim) with keepdim=True, of a
 * float32 / float64 operand of 2 <= n <= TJ_K_REDUCE_ROW_MAX elements per
 * row and ndim >= 1. Returns false otherwise (nothing set). */
bool tj_row_reduce_describe(const tj_op *op, const tj_value *args, tj_row_reduce *rr);

/** Reduces nrows contiguous rows of rr->n elements at x into out (one
 * value per row, rr->out), on the calling thread, bit for bit as the
 * operator's kernel does (tj_k_reduce_rows). */
void tj_row_reduce_run(const tj_row_reduce *rr, const void *x, int64_t nrows, void *out);

#endif
