/* Portable float32 exact GELU (see gelu.h): each element in double. */
#include <math.h>

#include "gelu.h"

void tj_k_gelu_f32_generic(int64_t n, void *out, const void *in)
{
    const float *x = in;
    float *y = out;
    for (int64_t i = 0; i < n; i++) {
        double v = x[i];
        y[i] = (float)(0.5 * v * erfc(-v * M_SQRT1_2));
    }
}
