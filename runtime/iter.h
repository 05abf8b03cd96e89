/* The elementwise engine: runs a contiguous loop function over an output and
 * up to three inputs of any strides, broadcasting and dtypes.
 *
 * Each input reaches the loop in its loop dtype (the compute dtype, or one
 * per input with tj_elementwise_typed). When every operand is contiguous, of
 * the output's shape and of its loop dtype, the loop runs directly on the
 * tensors' memory. Otherwise dims that are contiguous in every operand are
 * merged and the work goes in blocks: operands are gathered and converted in
 * per-thread buffers (blocks of 512 elements), except that when the
 * innermost dim is long enough blocks follow its rows (up to 4096 elements)
 * and operands contiguous along it (already of the loop dtype) are used in
 * place, an operand that is one value broadcast everywhere (a 0-dim tensor,
 * a wrapped Scalar) is converted once, and one that is constant along each
 * row (a [1, C, 1, 1] bias) is refilled only when its value changes.
 * So loop functions only ever see contiguous arrays. Work is split over
 * threads when it is large enough to pay. */
#ifndef TJIT_RUNTIME_ITER_H
#define TJIT_RUNTIME_ITER_H

#include "internal.h"

#define TJ_ITER_MAX_INPUTS 4 /* where(compare(a, b), x, y) fused takes four */

/** Loop over n contiguous elements: `in[k]` holds n values of the compute
 * dtype, `out` receives n values of the output's dtype. */
typedef void (*tj_loop_fn)(int64_t n, void *out, const void *const *in, const void *ctx);

/** Runs `fn` over every element of `out` (any strides; may alias an input
 * exactly, for in-place operators). Each `in[k]` must broadcast to out's shape
 * (checked by the caller's shape function). Never fails. */
void tj_elementwise(tj_tensor *out, tj_tensor *const *in, int nin, tj_dtype compute,
                    tj_loop_fn fn, const void *ctx);

/** tj_elementwise with a loop dtype for each input: in[k] reaches the loop
 * as dtypes[k] (a bool condition next to float values, say). */
void tj_elementwise_typed(tj_tensor *out, tj_tensor *const *in, int nin, const tj_dtype *dtypes, tj_loop_fn fn,
                          const void *ctx);

/** Copies src into dst (same shape, or src broadcastable to dst), converting
 * dtypes (float -> int truncates toward zero, anything -> bool is != 0). */
void tj_copy_convert(tj_tensor *dst, const tj_tensor *src);

/** Threads to use for `work` units of cheap elementwise work (1 when small). */
int tj_threads_for(int64_t work);

#endif
