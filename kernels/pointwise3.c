/* Ternary pointwise loops used by the optimisers: addcmul, addcdiv, lerp
 * (a Scalar weight, or a tensor of weights).
 * Each evaluates in the order PyTorch's CPU kernels do, so that float32
 * results round identically (no fused multiply-add: the project builds
 * without -mfma and with -std=c11, which keeps contraction off). */
#include "pointwise3.h"

#define LOOP3(T, EXPR)                                                          \
    do {                                                                        \
        T *o = out;                                                             \
        const T *a = in[0], *b = in[1], *c = in[2];                             \
        for (int64_t i = 0; i < n; i++) o[i] = EXPR;                            \
    } while (0)

#define LOOP2(T, EXPR)                                                          \
    do {                                                                        \
        T *o = out;                                                             \
        const T *a = in[0], *b = in[1];                                         \
        for (int64_t i = 0; i < n; i++) o[i] = EXPR;                            \
    } while (0)

void tj_k_addcmul_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_pointwise3_args *k = ctx;
    switch (k->dtype) {
    case TJ_FLOAT32: {
        float v = k->value.f32;
        LOOP3(float, a[i] + v * b[i] * c[i]);
        break;
    }
    case TJ_FLOAT64: {
        double v = k->value.f64;
        LOOP3(double, a[i] + v * b[i] * c[i]);
        break;
    }
    case TJ_INT64: {
        /* wrapping arithmetic, as ATen's int64 kernels */
        uint64_t v = (uint64_t)k->value.i64;
        LOOP3(int64_t, (int64_t)((uint64_t)a[i] + v * (uint64_t)b[i] * (uint64_t)c[i]));
        break;
    }
    case TJ_BOOL: break; /* rejected by the shape function */
    default: break; /* storage dtypes: the dispatcher keeps them from compute kernels */
    }
}

void tj_k_addcdiv_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_pointwise3_args *k = ctx;
    if (k->dtype == TJ_FLOAT32) {
        float v = k->value.f32;
        LOOP3(float, a[i] + v * b[i] / c[i]);
    } else if (k->dtype == TJ_FLOAT64) {
        double v = k->value.f64;
        LOOP3(double, a[i] + v * b[i] / c[i]);
    }
}

/* lerp(a, b, w) = |w| < 0.5 ? a + w * (b - a) : b - (b - a) * (1 - w), the
 * two branches of ATen's lerp (each exact for its half of the weights) */
#define LERP_SMALL(a, b, w) ((a) + (w) * ((b) - (a)))
#define LERP_LARGE(a, b, w) ((b) - ((b) - (a)) * (1 - (w)))
#define LERP(a, b, w) ((w) < 0.5 && (w) > -0.5 ? LERP_SMALL(a, b, w) : LERP_LARGE(a, b, w))

/* One weight for all: the branch is chosen once, outside the loop. */
void tj_k_lerp_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_pointwise3_args *k = ctx;
    if (k->dtype == TJ_FLOAT32) {
        float w = k->value.f32;
        if (w < 0.5f && w > -0.5f) LOOP2(float, LERP_SMALL(a[i], b[i], w));
        else LOOP2(float, LERP_LARGE(a[i], b[i], w));
    } else if (k->dtype == TJ_FLOAT64) {
        double w = k->value.f64;
        if (w < 0.5 && w > -0.5) LOOP2(double, LERP_SMALL(a[i], b[i], w));
        else LOOP2(double, LERP_LARGE(a[i], b[i], w));
    }
}

void tj_k_lerp_tensor_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_pointwise3_args *k = ctx;
    if (k->dtype == TJ_FLOAT32) LOOP3(float, LERP(a[i], b[i], c[i]));
    else if (k->dtype == TJ_FLOAT64) LOOP3(double, LERP(a[i], b[i], c[i]));
}
