/* SGD's fused momentum update (see sgd.h): the portable loops and the
 * choice of the float32 vector loop. */
#include <string.h>

#include "cpu_isa.h"
#include "sgd.h"

void tj_k_sgd_scalars_init(tj_k_sgd_scalars *s, double lr, double momentum, double dampening, double weight_decay,
                           bool nesterov, bool maximize)
{
    s->neg_lr = -lr;
    s->momentum = momentum;
    s->one_minus_dampening = 1 - dampening;
    s->weight_decay = weight_decay;
    s->nesterov = nesterov;
    s->maximize = maximize;
}

#define DEFINE_LOOP(T, SUF)                                                                                   \
    static void loop_##SUF(int64_t n, const tj_k_sgd_buffers *b, const tj_k_sgd_scalars *s)                   \
    {                                                                                                         \
        const T *param = b->param, *grad = b->grad, *buf = b->buf;                                            \
        T *param_out = b->param_out, *buf_out = b->buf_out;                                                   \
        T nlr = (T)s->neg_lr, mom = (T)s->momentum, omd = (T)s->one_minus_dampening, wd = (T)s->weight_decay; \
        bool decay = s->weight_decay != 0, nesterov = s->nesterov, maximize = s->maximize;                    \
        for (int64_t i = 0; i < n; i++) {                                                                     \
            T p = param[i], d = maximize ? -grad[i] : grad[i];                                                \
            if (decay) d = d + wd * p;                                                                        \
            T m = buf[i] * mom;                                                                               \
            m = m + omd * d;                                                                                  \
            buf_out[i] = m;                                                                                   \
            param_out[i] = p + nlr * (nesterov ? d + mom * m : m);                                            \
        }                                                                                                     \
    }
DEFINE_LOOP(float, f32)
DEFINE_LOOP(double, f64)

void tj_k_sgd(tj_dtype dtype, int64_t n, const tj_k_sgd_buffers *b, const tj_k_sgd_scalars *s)
{
    if (dtype == TJ_FLOAT64) {
        loop_f64(n, b, s);
        return;
    }
    tj_k_isa isa = tj_k_isa_active();
    if (isa == TJ_K_ISA_AVX512) tj_k_sgd_f32_avx512(n, b, s);
    else if (isa == TJ_K_ISA_AVX2) tj_k_sgd_f32_avx2(n, b, s);
    else loop_f32(n, b, s);
}
