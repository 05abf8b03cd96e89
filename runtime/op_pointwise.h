/* Elementwise operators as the loop their kernel runs (runtime/iter.h's
 * tj_loop_fn over contiguous arrays), for loop fusion: the replay compiler
 * (tracer/fuse_pointwise.c) runs several operators' loops one after the
 * other on chunks of their operands that stay in cache, instead of one pass
 * over memory per operator. The description is the kernel's own: the same
 * loop function, the same context, the same Scalar conversion, so a fused
 * step computes the kernel's bits. Internal to the library. */
#ifndef TJIT_RUNTIME_OP_POINTWISE_H
#define TJIT_RUNTIME_OP_POINTWISE_H

#include "internal.h"
#include "iter.h"
#include "kernels/elementwise.h"

/** One call's loop: out[i] = fn(in[0][i], ..., in[nin - 1][i]), where
 * input k is argument arg[k] (a tensor, converted by the engine to
 * loop[k]) or, with arg[k] = -1, a Scalar whose value in loop[k] is
 * scalar[k]. */
typedef struct tj_pointwise {
    tj_loop_fn fn;
    int nin;
    int arg[TJ_ITER_MAX_INPUTS];
    tj_dtype loop[TJ_ITER_MAX_INPUTS];
    tj_k_scalar scalar[TJ_ITER_MAX_INPUTS];
    union {
        tj_k_unary_args unary;
        tj_k_binary_args binary;
        tj_k_axpby_args axpby;
        tj_k_compare_args compare;
        tj_k_pow_scalar_args pow;
        tj_k_select_args select;
        tj_k_compare_where_args compare_where; /**< a comparison merged into its where (tracer/fuse_pointwise.c) */
        tj_k_mul_add_args mul_add;             /**< a mul merged into the add reading it (same) */
        tj_dtype convert[2]; /**< _to_copy, clone: [0] to, [1] from */
    } ctx; /**< the loop's context (fn's ctx argument is &ctx) */
} tj_pointwise;

/** The loop of _to_copy and clone: ctx is tj_pointwise's ctx.convert. */
void tj_pointwise_copy_loop(int64_t n, void *out, const void *const *in, const void *ctx);

/** Fills *pw when a call of `op` with boxed `args` (tensors of any
 * geometry: only dtypes are read) and a result of dtype `out` runs one
 * tj_elementwise loop over float32, float64 or bool operands, computed in
 * float32 or float64 (comparisons: a bool result, where: a bool
 * condition), that is the same bits for every element wherever a chunk
 * boundary falls; false otherwise (other operators, integer dtypes,
 * integer division, kernels with several passes). */
bool tj_pointwise_describe(const tj_op *op, const tj_value *args, tj_dtype out, tj_pointwise *pw);

#endif
