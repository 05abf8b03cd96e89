/* Loops of the activation backward operators that the elementwise tables do
 * not hold: float32 threshold_backward without a branch per element,
 * log_sigmoid_backward and glu_backward's three-operand steps (see
 * activation_backward.c). */
#ifndef TJIT_KERNELS_ACTIVATION_BACKWARD_H
#define TJIT_KERNELS_ACTIVATION_BACKWARD_H

#include <stdint.h>

/** threshold_backward on float32: out[i] = self[i] <= threshold ? 0 : grad[i]
 * (in[0] = grad, in[1] = self; ctx is tj_k_select_args with value.f32 set).
 * A tj_loop_fn for tj_elementwise. */
void tj_k_threshold_backward_f32_loop(int64_t n, void *out, const void *const *in, const void *ctx);

/** log_sigmoid_backward as ATen's CPU kernel (float32 / float64; ctx points
 * to the tj_dtype): in[0] = grad, in[1] = self, in[2] = buffer b;
 * out = (max_deriv - sign * (b / (1 + b))) * grad with max_deriv, sign =
 * 1, 1 for self < 0 and 0, -1 otherwise. */
void tj_k_log_sigmoid_backward_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** glu_backward's second half (ctx points to the tj_dtype): in[0] =
 * sigmoid(second half), in[1] = first half, in[2] = grad;
 * out = (1 - in[0]) * in[0] * in[1] * in[2], as ATen's CPU kernel. */
void tj_k_glu_backward_loop(int64_t n, void *out, const void *const *in, const void *ctx);

#endif
