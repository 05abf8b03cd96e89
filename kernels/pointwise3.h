/* Ternary pointwise loops (see runtime/iter.h for the tj_loop_fn contract:
 * contiguous arrays of the compute dtype; out may alias in[0] exactly). */
#ifndef TJIT_KERNELS_POINTWISE3_H
#define TJIT_KERNELS_POINTWISE3_H

#include <stdint.h>

#include "elementwise.h"

typedef struct tj_k_pointwise3_args {
    tj_dtype dtype;
    tj_k_scalar value; /**< addcmul / addcdiv: value; lerp: weight */
} tj_k_pointwise3_args;

/** out = in[0] + value * in[1] * in[2] (float32, float64, int64 wrapping). */
void tj_k_addcmul_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** out = in[0] + value * in[1] / in[2] (float32, float64). */
void tj_k_addcdiv_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** out = lerp(in[0], in[1], weight) with PyTorch's two-sided formula (float
 * only): in[0] + w * (in[1] - in[0]) when |w| < 0.5, else
 * in[1] - (in[1] - in[0]) * (1 - w). */
void tj_k_lerp_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** tj_k_lerp_loop with a weight per element, in[2] (float only; ctx's value
 * is unused). */
void tj_k_lerp_tensor_loop(int64_t n, void *out, const void *const *in, const void *ctx);

#endif
