/* nll_loss forward and backward (see loss.h). */
#include <string.h>

#include "loss.h"

/* Target of row i, or -1 with *bad set when it is out of range; *skip is
 * set for ignore_index. */
static bool read_target(const tj_k_nll *p, const int64_t *target, int64_t i, int64_t *t, bool *skip, int64_t *bad)
{
    *t = target[i * p->target_s];
    *skip = *t == p->ignore_index;
    if (*skip || (*t >= 0 && *t < p->classes)) return true;
    *bad = *t;
    return false;
}

#define NLL_DEFINE(T, SUF)                                                                                    \
    bool tj_k_nll_loss_##SUF(const tj_k_nll *p, const T *in, const int64_t *target, const T *weight, T *out, \
                             T *total_weight, int64_t *bad)                                                  \
    {                                                                                                        \
        double loss = 0, wsum = 0;                                                                           \
        for (int64_t i = 0; i < p->batch; i++) {                                                             \
            int64_t t;                                                                                       \
            bool skip;                                                                                       \
            if (!read_target(p, target, i, &t, &skip, bad)) return false;                                    \
            double w = skip ? 0.0 : weight ? (double)weight[t * p->weight_s] : 1.0;                         \
            double v = skip ? 0.0 : -(double)in[i * p->in_rs + t * p->in_cs] * w;                          \
            if (p->rowwise) {                                                                                \
                out[i] = (T)v;                                                                               \
                continue;                                                                                    \
            }                                                                                                \
            if (skip) continue;                                                                              \
            loss += v;                                                                                       \
            wsum += w;                                                                                       \
        }                                                                                                    \
        *total_weight = (T)wsum;                                                                             \
        if (p->rowwise) return true;                                                                         \
        /* an empty batch: nan for the mean (0/0), 0 for the sum */                                        \
        out[0] = (T)(p->reduction == 1 ? loss / wsum : loss);                                                \
        return true;                                                                                         \
    }                                                                                                        \
                                                                                                             \
    bool tj_k_nll_loss_backward_##SUF(const tj_k_nll *p, const T *grad_out, int64_t grad_s, const int64_t *target, \
                                      const T *weight, T total_weight, T *grad_in, int64_t *bad)             \
    {                                                                                                        \
        memset(grad_in, 0, sizeof(T) * (size_t)(p->batch * p->classes));                                    \
        T g = p->rowwise ? 0 : p->reduction == 1 ? grad_out[0] / total_weight : grad_out[0];                \
        for (int64_t i = 0; i < p->batch; i++) {                                                             \
            int64_t t;                                                                                       \
            bool skip;                                                                                       \
            if (!read_target(p, target, i, &t, &skip, bad)) return false;                                    \
            if (skip) continue;                                                                              \
            T gi = p->rowwise ? grad_out[i * grad_s] : g;                                                    \
            grad_in[i * p->classes + t] = weight ? -weight[t * p->weight_s] * gi : -gi;                      \
        }                                                                                                    \
        return true;                                                                                         \
    }

NLL_DEFINE(float, f32)
NLL_DEFINE(double, f64)
