/* AdamW's fused update (see adamw.h): the portable loops and the choice of
 * the float32 vector loop. */
#include <math.h>

#include "adamw.h"
#include "cpu_isa.h"

void tj_k_adamw_scalars_init(tj_k_adamw_scalars *s, double lr, double beta1, double beta2, double weight_decay,
                             double eps, double step)
{
    s->decay = 1 - lr * weight_decay;
    s->beta1 = beta1;
    s->one_minus_beta1 = 1 - beta1;
    s->beta2 = beta2;
    s->one_minus_beta2 = 1 - beta2;
    s->bc2_sqrt = sqrt(1 - pow(beta2, step));
    s->eps = eps;
    s->neg_step_size = -(lr / (1 - pow(beta1, step)));
}

/* torch.maximum: a nan in either operand gives nan */
#define MAX_NAN(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) > (b) ? (a) : (b))

#define DEFINE_LOOP(T, SUF, SQRT)                                                                             \
    static void loop_##SUF(int64_t n, const tj_k_adamw_buffers *b, const tj_k_adamw_scalars *s)               \
    {                                                                                                         \
        const T *param = b->param, *grad = b->grad, *exp_avg = b->exp_avg, *exp_avg_sq = b->exp_avg_sq;       \
        const T *max_sq = b->max_sq;                                                                          \
        T *param_out = b->param_out, *exp_avg_out = b->exp_avg_out, *exp_avg_sq_out = b->exp_avg_sq_out;      \
        T *max_sq_out = b->max_sq_out;                                                                        \
        T decay = (T)s->decay, b1 = (T)s->beta1, a1 = (T)s->one_minus_beta1, b2 = (T)s->beta2;                \
        T a2 = (T)s->one_minus_beta2, bc2 = (T)s->bc2_sqrt, eps = (T)s->eps, nss = (T)s->neg_step_size;       \
        for (int64_t i = 0; i < n; i++) {                                                                     \
            T g = grad[i];                                                                                    \
            T p = param[i] * decay;                                                                           \
            T m = exp_avg[i] * b1 + a1 * g;                                                                   \
            T v = exp_avg_sq[i] * b2 + a2 * g * g;                                                            \
            T sq = v;                                                                                         \
            if (max_sq) {                                                                                     \
                sq = MAX_NAN(max_sq[i], v);                                                                   \
                max_sq_out[i] = sq;                                                                           \
            }                                                                                                 \
            exp_avg_out[i] = m;                                                                               \
            exp_avg_sq_out[i] = v;                                                                            \
            param_out[i] = p + nss * m / (SQRT(sq) / bc2 + eps);                                              \
        }                                                                                                     \
    }
DEFINE_LOOP(float, f32, sqrtf)
DEFINE_LOOP(double, f64, sqrt)

void tj_k_adamw(tj_dtype dtype, int64_t n, const tj_k_adamw_buffers *b, const tj_k_adamw_scalars *s)
{
    if (dtype == TJ_FLOAT64) {
        loop_f64(n, b, s);
        return;
    }
    tj_k_isa isa = tj_k_isa_active();
    if (isa == TJ_K_ISA_AVX512) tj_k_adamw_f32_avx512(n, b, s);
    else if (isa == TJ_K_ISA_AVX2) tj_k_adamw_f32_avx2(n, b, s);
    else loop_f32(n, b, s);
}
