/* PReLU's pointwise loops (kernels/prelu.h). */
#include "prelu.h"

#include "tjit/core.h"

#define LOOP(T, NIN, EXPR)                                                      \
    do {                                                                        \
        T *o = out;                                                             \
        const T *a = in[0], *b = in[1], *c = NIN > 2 ? in[2] : NULL;            \
        (void)c;                                                                \
        for (int64_t i = 0; i < n; i++) o[i] = EXPR;                            \
    } while (0)

#define BY_DTYPE(NIN, EXPR)                                                     \
    do {                                                                        \
        if (*(const tj_dtype *)ctx == TJ_FLOAT32) LOOP(float, NIN, EXPR);       \
        else LOOP(double, NIN, EXPR);                                           \
    } while (0)

void tj_k_prelu_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    BY_DTYPE(2, a[i] > 0 ? a[i] : b[i] * a[i]);
}

void tj_k_prelu_backward_self_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    BY_DTYPE(3, b[i] > 0 ? a[i] : c[i] * a[i]);
}

void tj_k_prelu_backward_weight_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    BY_DTYPE(2, b[i] > 0 ? 0 : b[i] * a[i]);
}
