/* PReLU's pointwise loops (see runtime/iter.h for the tj_loop_fn contract:
 * contiguous arrays of the compute dtype, float32 or float64; ctx points to
 * that tj_dtype). The weight arrives broadcast to self's elements. As ATen
 * 1.13's CPU kernels (Activation.cpp): x > 0 tests the input, so nan and
 * -0 take the weighted branch. */
#ifndef TJIT_KERNELS_PRELU_H
#define TJIT_KERNELS_PRELU_H

#include <stdint.h>

/** out = x > 0 ? x : w * x; in[0] = x, in[1] = w. */
void tj_k_prelu_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** self's gradient: out = x > 0 ? g : w * g; in[0] = g, in[1] = x, in[2] = w. */
void tj_k_prelu_backward_self_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** the terms of weight's gradient, before their sum over the elements that
 * share a weight: out = x > 0 ? 0 : x * g; in[0] = g, in[1] = x. */
void tj_k_prelu_backward_weight_loop(int64_t n, void *out, const void *const *in, const void *ctx);

#endif
