/* Portable float32 tanh-approximation GELU (see gelu_tanh.h): each element
 * in double, with the same sigmoid form as the vector kernels. */
#include <math.h>

#include "gelu_tanh.h"

#define C1 1.5957691216057307117 /* 2 sqrt(2/pi) */
#define KAPPA 0.044715

/* e^(-2|u|) for the float x (its cube is finite in double) */
static double exp_minus_2u(double x)
{
    double a = fabs(x);
    return exp(-C1 * (a + KAPPA * (a * a * a)));
}

void tj_k_gelu_tanh_f32_generic(int64_t n, void *out, const void *in)
{
    const float *x = in;
    float *y = out;
    for (int64_t i = 0; i < n; i++) {
        double v = x[i], e = exp_minus_2u(v);
        y[i] = (float)((v < 0 ? v * e : v) / (1 + e));
    }
}

void tj_k_gelu_tanh_backward_f32_generic(int64_t n, void *out, const void *dy, const void *x)
{
    const float *g = dy, *xs = x;
    float *o = out;
    for (int64_t i = 0; i < n; i++) {
        double v = xs[i], e = exp_minus_2u(v), r = 1 / (1 + e);
        double s = v < 0 ? e * r : r, p = C1 * (1 + 3 * KAPPA * (v * v));
        o[i] = (float)(g[i] * (s + v * (e * r * r * p))); /* +-inf: inf * 0 = nan */
    }
}
