/* Portable float32 tanh (see tanh.h): C's tanh in double, rounded once. */
#include <math.h>

#include "tanh.h"

void tj_k_tanh_f32_generic(int64_t n, void *out, const void *in)
{
    const float *x = in;
    float *y = out;
    for (int64_t i = 0; i < n; i++) y[i] = (float)tanh((double)x[i]);
}
