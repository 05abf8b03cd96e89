/* threshold_backward (ReLU's backward) for float32 without a branch per
 * element: the sign of a ReLU input is random, so a branch mispredicts about
 * every other element (10x slower than this select). Both operands are loaded
 * before the comparison so that the compiler may vectorise the select; a nan
 * self compares false and lets the gradient through, as in PyTorch. */
#include "activation_backward.h"

#include "elementwise.h"

void tj_k_threshold_backward_f32_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_select_args *k = ctx;
    const float t = k->value.f32, *grad = in[0], *self = in[1];
    float *o = out;
    for (int64_t i = 0; i < n; i++) {
        float g = grad[i], s = self[i];
        o[i] = s <= t ? 0.0f : g;
    }
}
