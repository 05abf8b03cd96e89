/* nll_loss, binary_cross_entropy, smooth_l1 / huber (see loss.h). */
#include <math.h>
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

/* ---- binary_cross_entropy ---- */

#define BCE_DEFINE(T, SUF, LOG, MAX)                                                                           \
    bool tj_k_bce_##SUF(int64_t n, const T *x, const T *t, const T *w, int reduction, T *out, double *bad)      \
    {                                                                                                          \
        double sum = 0;                                                                                        \
        for (int64_t i = 0; i < n; i++) {                                                                      \
            T xi = x[i], ti = t[i];                                                                            \
            if (!(xi >= 0 && xi <= 1)) {                                                                       \
                *bad = (double)xi;                                                                             \
                return false;                                                                                  \
            }                                                                                                  \
            T l = (ti - (T)1) * MAX(LOG((T)1 - xi), (T)-100) - ti * MAX(LOG(xi), (T)-100);                    \
            if (w) l *= w[i];                                                                                  \
            if (reduction == 0) out[i] = l;                                                                    \
            else sum += (double)l;                                                                             \
        }                                                                                                      \
        if (reduction != 0) out[0] = (T)(reduction == 1 ? sum / (double)n : sum);                              \
        return true;                                                                                           \
    }                                                                                                          \
    void tj_k_bce_backward_##SUF(int64_t n, const T *g, const T *x, const T *t, const T *w, double divisor,     \
                                 T *gi)                                                                        \
    {                                                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                                      \
            T r = g[i] * (x[i] - t[i]) / MAX(((T)1 - x[i]) * x[i], (T)1e-12);                                  \
            if (w) r *= w[i];                                                                                  \
            gi[i] = divisor == 1 ? r : r / (T)divisor;                                                         \
        }                                                                                                      \
    }

/* std::max(a, b) returns a unless a < b: a nan log stays nan */
static inline float max_f32(float a, float b) { return a < b ? b : a; }
static inline double max_f64(double a, double b) { return a < b ? b : a; }
BCE_DEFINE(float, f32, logf, max_f32)
BCE_DEFINE(double, f64, log, max_f64)

#define BCE_LOGITS_DEFINE(T, SUF, LOG, EXP)                                                                    \
    void tj_k_bce_logits_##SUF(int64_t n, const T *x, const T *t, const T *w, const T *p, int reduction, T *out) \
    {                                                                                                          \
        double sum = 0;                                                                                        \
        for (int64_t i = 0; i < n; i++) {                                                                      \
            T xi = x[i], ti = t[i], m = xi > 0 ? (T)0 : -xi;                                                   \
            T s = LOG(EXP(-m) + EXP(-xi - m));                                                                 \
            T l = p ? ((T)1 - ti) * xi + ((p[i] - (T)1) * ti + (T)1) * (s + m) : ((T)1 - ti) * xi + m + s;     \
            if (w) l *= w[i];                                                                                  \
            if (reduction == 0) out[i] = l;                                                                    \
            else sum += (double)l;                                                                             \
        }                                                                                                      \
        if (reduction != 0) out[0] = (T)(reduction == 1 ? sum / (double)n : sum);                              \
    }
BCE_LOGITS_DEFINE(float, f32, logf, expf)
BCE_LOGITS_DEFINE(double, f64, log, exp)

/* ---- smooth_l1_loss, huber_loss, mse_loss ---- */

#define POINTWISE_LOSS_DEFINE(T, SUF, ABS)                                                                     \
    static void pointwise_loss_##SUF(const tj_k_pointwise_loss_args *k, int64_t n, T *o, const T *a, const T *b) \
    {                                                                                                          \
        const T p = (T)k->param, half = (T)0.5;                                                                \
        if (k->op == TJ_K_MSE)                                                                                 \
            for (int64_t i = 0; i < n; i++) {                                                                  \
                T d = a[i] - b[i];                                                                             \
                o[i] = d * d;                                                                                  \
            }                                                                                                  \
        else if (k->op == TJ_K_SMOOTH_L1)                                                                      \
            for (int64_t i = 0; i < n; i++) {                                                                  \
                T z = ABS(a[i] - b[i]);                                                                        \
                o[i] = z < p ? half * z * z / p : z - half * p;                                                \
            }                                                                                                  \
        else                                                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                                  \
                T z = ABS(a[i] - b[i]);                                                                        \
                o[i] = z < p ? half * z * z : p * (z - half * p);                                              \
            }                                                                                                  \
    }                                                                                                          \
    static void pointwise_loss_backward_##SUF(const tj_k_pointwise_loss_args *k, int64_t n, T *o, const T *a,   \
                                              const T *b, const T *g)                                          \
    {                                                                                                          \
        const T p = (T)k->param, norm = (T)k->norm;                                                            \
        if (k->op == TJ_K_MSE)                                                                                 \
            for (int64_t i = 0; i < n; i++) o[i] = norm * (a[i] - b[i]) * g[i];                                \
        else if (k->op == TJ_K_SMOOTH_L1)                                                                      \
            for (int64_t i = 0; i < n; i++) {                                                                  \
                T x = a[i] - b[i];                                                                             \
                o[i] = x <= -p ? -norm * g[i] : x >= p ? norm * g[i] : norm * x * g[i] / p;                    \
            }                                                                                                  \
        else                                                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                                  \
                T x = a[i] - b[i];                                                                             \
                o[i] = x <= -p ? -norm * g[i] * p : x >= p ? norm * g[i] * p : norm * x * g[i];                \
            }                                                                                                  \
    }

POINTWISE_LOSS_DEFINE(float, f32, fabsf)
POINTWISE_LOSS_DEFINE(double, f64, fabs)

void tj_k_pointwise_loss_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_pointwise_loss_args *k = ctx;
    if (k->dtype == TJ_FLOAT32) pointwise_loss_f32(k, n, out, in[0], in[1]);
    else pointwise_loss_f64(k, n, out, in[0], in[1]);
}

void tj_k_pointwise_loss_backward_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_pointwise_loss_args *k = ctx;
    if (k->dtype == TJ_FLOAT32) pointwise_loss_backward_f32(k, n, out, in[0], in[1], in[2]);
    else pointwise_loss_backward_f64(k, n, out, in[0], in[1], in[2]);
}
