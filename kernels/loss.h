/* Loss kernels as PyTorch 1.13's CPU kernels: negative log-likelihood
 * (aten/src/ATen/native/LossNLL.cpp) over strided buffers, binary cross
 * entropy, and the pointwise smooth L1 / Huber losses with their gradients. */
#ifndef TJIT_KERNELS_LOSS_H
#define TJIT_KERNELS_LOSS_H

#include <stdbool.h>
#include <stdint.h>

#include "tjit/core.h"

/** One nll_loss call. The input holds `batch` rows of `classes` log
 * probabilities (row i, class c at in[i*in_rs + c*in_cs]); target i is at
 * target[i*target_s]; weight (optional) class c at weight[c*weight_s].
 * rowwise: reduction none on a 2-d input, one loss per row; otherwise one
 * value, summed, and divided by the total weight when reduction is 1 (mean).
 * Targets equal to ignore_index are skipped and never used as indices. */
typedef struct tj_k_nll {
    int64_t batch, classes;
    int64_t in_rs, in_cs, target_s, weight_s;
    int64_t ignore_index;
    int reduction; /**< 0 none, 1 mean, 2 sum */
    bool rowwise;
} tj_k_nll;

/** Forward: out holds `batch` values (rowwise, contiguous) or one; *total_weight
 * is the summed weight of the kept targets (0 when rowwise). Sums run in
 * double. Returns false, with *bad set to the target, when a target other
 * than ignore_index lies outside [0, classes). */
bool tj_k_nll_loss_f32(const tj_k_nll *p, const float *in, const int64_t *target, const float *weight, float *out,
                       float *total_weight, int64_t *bad);
bool tj_k_nll_loss_f64(const tj_k_nll *p, const double *in, const int64_t *target, const double *weight,
                       double *out, double *total_weight, int64_t *bad);

/** Backward: grad_in (contiguous [batch, classes]) is 0 except at each kept
 * target, where it is -weight * g with g = grad_out[i*grad_s] (rowwise) or
 * grad_out[0], divided by total_weight for the mean. Errors as the forward. */
bool tj_k_nll_loss_backward_f32(const tj_k_nll *p, const float *grad_out, int64_t grad_s, const int64_t *target,
                                const float *weight, float total_weight, float *grad_in, int64_t *bad);
bool tj_k_nll_loss_backward_f64(const tj_k_nll *p, const double *grad_out, int64_t grad_s, const int64_t *target,
                                const double *weight, double total_weight, double *grad_in, int64_t *bad);

/** Binary cross entropy over n contiguous elements, as PyTorch 1.13's CPU
 * kernel (Loss.cpp): loss = w * ((t - 1) * max(log(1 - x), -100) - t *
 * max(log(x), -100)), each term in the elements' dtype (w absent: 1).
 * reduction 0 writes the n losses to out, 1 their mean (nan for n = 0) and 2
 * their sum to out[0], summed in double. Returns false, with *bad set to the
 * first offending input, when an x is outside [0, 1] or nan (the target is
 * not checked, as in PyTorch). */
bool tj_k_bce_f32(int64_t n, const float *x, const float *t, const float *w, int reduction, float *out, double *bad);
bool tj_k_bce_f64(int64_t n, const double *x, const double *t, const double *w, int reduction, double *out,
                  double *bad);
/** Its gradient: gi = g * (x - t) / max((1 - x) * x, 1e-12) * w, divided by
 * `divisor` (n for the mean, else 1), over n contiguous elements, x unchecked. */
void tj_k_bce_backward_f32(int64_t n, const float *g, const float *x, const float *t, const float *w, double divisor,
                           float *gi);
void tj_k_bce_backward_f64(int64_t n, const double *g, const double *x, const double *t, const double *w,
                           double divisor, double *gi);

/** Binary cross entropy of logits over n contiguous elements, as PyTorch
 * 1.13's binary_cross_entropy_with_logits (Loss.cpp), each step in the
 * elements' dtype: m = max(-x, 0), s = log(exp(-m) + exp(-x - m)); loss =
 * (1 - t) x + m + s, or with pos_weight p (NULL: none) (1 - t) x +
 * ((p - 1) t + 1) (s + m); times w (NULL: 1). Reduction as tj_k_bce_f32. */
void tj_k_bce_logits_f32(int64_t n, const float *x, const float *t, const float *w, const float *p, int reduction,
                         float *out);
void tj_k_bce_logits_f64(int64_t n, const double *x, const double *t, const double *w, const double *p, int reduction,
                         double *out);

/* ---- smooth_l1_loss, huber_loss, mse_loss (pointwise; the runtime reduces) ---- */

typedef enum tj_k_pointwise_loss_op {
    TJ_K_SMOOTH_L1, /**< param = beta (>= 0) */
    TJ_K_HUBER,     /**< param = delta (> 0) */
    TJ_K_MSE,       /**< no param */
} tj_k_pointwise_loss_op;

typedef struct tj_k_pointwise_loss_args {
    tj_k_pointwise_loss_op op;
    tj_dtype dtype; /**< float32 or float64: inputs, output and arithmetic */
    double param;   /**< converted to dtype by the loops, as ATen's kernels do */
    double norm;    /**< backward: 1 / numel for the mean, else 1 (2 / numel, 2 for mse; converted to dtype) */
} tj_k_pointwise_loss_args;

/** Each element's loss, PyTorch 1.13's CPU kernels (BinaryOpsKernel.cpp),
 * z = |in[0] - in[1]| (self, target): smooth_l1 z < beta ? 0.5 * z * z /
 * beta : z - 0.5 * beta; huber z < delta ? 0.5 * z * z : delta * (z - 0.5 *
 * delta); mse d * d with d = in[0] - in[1]; nan stays nan. A tj_loop_fn;
 * ctx is tj_k_pointwise_loss_args. */
void tj_k_pointwise_loss_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** Their gradients (PointwiseOpsKernel.cpp), x = in[0] - in[1], g = in[2]
 * (grad_output): smooth_l1 x <= -beta ? -norm * g : x >= beta ? norm * g :
 * norm * x * g / beta; huber x <= -delta ? -norm * g * delta : x >= delta ?
 * norm * g * delta : norm * x * g (a nan x takes the last branch); mse
 * norm * x * g. */
void tj_k_pointwise_loss_backward_loop(int64_t n, void *out, const void *const *in, const void *ctx);

#endif
