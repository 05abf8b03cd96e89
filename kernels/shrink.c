/* The shrink activations' pointwise loops (see shrink.h). */
#include "shrink.h"

/* o[i] = EXPR over a = in[0] (and b = in[1] when NIN is 2), with l the
 * lambda in the loop's dtype */
#define LOOP(T, NIN, EXPR)                                                      \
    do {                                                                        \
        T *o = out, l = (T)k->lambd;                                            \
        const T *a = in[0], *b = NIN > 1 ? in[NIN - 1] : NULL;                  \
        (void)b;                                                                \
        for (int64_t i = 0; i < n; i++) o[i] = EXPR;                            \
    } while (0)

#define BY_DTYPE(NIN, EXPR)                                                     \
    do {                                                                        \
        const tj_k_shrink *k = ctx;                                             \
        if (k->dtype == TJ_FLOAT32) LOOP(float, NIN, EXPR);                     \
        else LOOP(double, NIN, EXPR);                                           \
    } while (0)

void tj_k_hardshrink_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    BY_DTYPE(1, a[i] >= -l && a[i] <= l ? 0 : a[i]);
}

void tj_k_softshrink_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    BY_DTYPE(1, a[i] > l ? a[i] - l : a[i] < -l ? a[i] + l : 0);
}

void tj_k_shrink_backward_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    BY_DTYPE(2, b[i] >= -l && b[i] <= l ? 0 : a[i]);
}
