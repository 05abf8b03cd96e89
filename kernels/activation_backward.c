/* threshold_backward (ReLU's backward) for float32 without a branch per
 * element: the sign of a ReLU input is random, so a branch mispredicts about
 * every other element (10x slower than this select). Both operands are loaded
 * before the comparison so that the compiler may vectorise the select; a nan
 * self compares false and lets the gradient through, as in PyTorch. */
#include "activation_backward.h"

#include "elementwise.h"

/* The loops below are plain selects and arithmetic (no calls), which the
 * compiler vectorises for float32 and float64 alike. */
#define LOOP3(T, EXPR)                                                          \
    do {                                                                        \
        T *o = out;                                                             \
        const T *a = in[0], *b = in[1], *c = in[2];                             \
        for (int64_t i = 0; i < n; i++) o[i] = (EXPR);                          \
    } while (0)

#define LOG_SIGMOID_BACKWARD(T) \
    ((b[i] < (T)0 ? (T)1 : (T)0) - (b[i] < (T)0 ? (T)1 : (T)-1) * (c[i] / ((T)1 + c[i]))) * a[i]

void tj_k_log_sigmoid_backward_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    if (*(const tj_dtype *)ctx == TJ_FLOAT32) LOOP3(float, LOG_SIGMOID_BACKWARD(float));
    else LOOP3(double, LOG_SIGMOID_BACKWARD(double));
}

void tj_k_glu_backward_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    if (*(const tj_dtype *)ctx == TJ_FLOAT32) LOOP3(float, (1.0f - a[i]) * a[i] * b[i] * c[i]);
    else LOOP3(double, (1.0 - a[i]) * a[i] * b[i] * c[i]);
}

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
