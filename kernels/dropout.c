/* Dropout's masked scaling (see dropout.h). */
#include "dropout.h"

#define DROPOUT_LOOP(T)                                                \
    do {                                                               \
        T *o = out;                                                    \
        const T *x = in[0], *m = in[1];                                \
        T s = (T)a->scale;                                             \
        for (int64_t i = 0; i < n; i++) o[i] = (x[i] * m[i]) * s;      \
    } while (0)

void tj_k_dropout_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_dropout_args *a = ctx;
    if (a->dtype == TJ_FLOAT32) DROPOUT_LOOP(float);
    else DROPOUT_LOOP(double);
}
