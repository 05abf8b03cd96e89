/* Float32 loops of the activation backward operators that the generic
 * elementwise table compiles to a branch per element (see
 * activation_backward.c). */
#ifndef TJIT_KERNELS_ACTIVATION_BACKWARD_H
#define TJIT_KERNELS_ACTIVATION_BACKWARD_H

#include <stdint.h>

/** threshold_backward on float32: out[i] = self[i] <= threshold ? 0 : grad[i]
 * (in[0] = grad, in[1] = self; ctx is tj_k_select_args with value.f32 set).
 * A tj_loop_fn for tj_elementwise. */
void tj_k_threshold_backward_f32_loop(int64_t n, void *out, const void *const *in, const void *ctx);

#endif
