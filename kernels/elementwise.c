/* Generic (any x86-64) elementwise loops. */
#include "elementwise.h"

void tj_k_add_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_axpby_args *k = ctx;
    switch (k->dtype) {
    case TJ_FLOAT32: {
        float *o = out;
        const float *a = in[0], *b = in[1];
        float al = (float)k->alpha;
        if (al == 1.0f)
            for (int64_t i = 0; i < n; i++) o[i] = a[i] + b[i];
        else
            for (int64_t i = 0; i < n; i++) o[i] = a[i] + al * b[i];
        break;
    }
    case TJ_FLOAT64: {
        double *o = out;
        const double *a = in[0], *b = in[1];
        for (int64_t i = 0; i < n; i++) o[i] = a[i] + k->alpha * b[i];
        break;
    }
    case TJ_INT64: {
        int64_t *o = out;
        const int64_t *a = in[0], *b = in[1];
        int64_t al = (int64_t)k->alpha;
        for (int64_t i = 0; i < n; i++) o[i] = (int64_t)((uint64_t)a[i] + (uint64_t)al * (uint64_t)b[i]);
        break;
    }
    case TJ_BOOL: {
        uint8_t *o = out;
        const uint8_t *a = in[0], *b = in[1];
        for (int64_t i = 0; i < n; i++) o[i] = a[i] || (k->alpha != 0 && b[i]);
        break;
    }
    }
}
