/* Ternary pointwise loops used by the optimisers: addcmul, addcdiv, lerp.
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

/* lerp(a, b, w) = |w| < 0.5 ? a + w * (b - a) : b - (b - a) * (1 - w) */
void tj_k_lerp_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_pointwise3_args *k = ctx;
    if (k->dtype == TJ_FLOAT32) {
        float w = k->value.f32;
        if (w < 0.5f && w > -0.5f) LOOP2(float, a[i] + w * (b[i] - a[i]));
        else LOOP2(float, b[i] - (b[i] - a[i]) * (1.0f - w));
    } else if (k->dtype == TJ_FLOAT64) {
        double w = k->value.f64;
        if (w < 0.5 && w > -0.5) LOOP2(double, a[i] + w * (b[i] - a[i]));
        else LOOP2(double, b[i] - (b[i] - a[i]) * (1.0 - w));
    }
}
