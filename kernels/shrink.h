/* The shrink activations' pointwise loops (see runtime/iter.h for the
 * tj_loop_fn contract: contiguous arrays of the compute dtype); ctx points
 * to a tj_k_shrink. As ATen 1.13's CPU kernels (Activation.cpp): a nan
 * input gives nan through hardshrink and 0 through softshrink, and the
 * backward passes the gradient where self is outside [-lambd, lambd] (nan
 * included). */
#ifndef TJIT_KERNELS_SHRINK_H
#define TJIT_KERNELS_SHRINK_H

#include <stdint.h>

#include "tjit/core.h"

typedef struct tj_k_shrink {
    tj_dtype dtype; /**< float32 or float64 */
    double lambd;   /**< converted to the dtype by the loops, as ATen's scalar_t */
} tj_k_shrink;

/** out = -lambd <= x <= lambd ? 0 : x; in[0] = x. */
void tj_k_hardshrink_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** out = x > lambd ? x - lambd : x < -lambd ? x + lambd : 0; in[0] = x. */
void tj_k_softshrink_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** out = -lambd <= x <= lambd ? 0 : g; in[0] = g, in[1] = x. */
void tj_k_shrink_backward_loop(int64_t n, void *out, const void *const *in, const void *ctx);

#endif
