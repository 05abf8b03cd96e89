/* Optimisers: SGD and AdamW with PyTorch 1.13's exact update rules
 * (torch/optim/sgd.py and adamw.py, the single-tensor path that PyTorch
 * uses on the CPU by default), applied in place through the in-place
 * operators of inplace.h. Updates run with grad mode off.
 *
 * Two forms: functional updates (torch.optim._functional), which take the
 * gradients and the optimiser state as tensors, so that a traced training
 * step can hold the update (the state tensors then are graph inputs that the
 * graph updates in place); and optimiser objects, which keep their own state
 * and read each parameter's .grad (autograd.h). */
#ifndef TJIT_OPTIM_H
#define TJIT_OPTIM_H

#include "dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/** torch.optim.SGD's hyper-parameters. */
typedef struct tj_sgd_options {
    double lr;           /**< learning rate, >= 0 (no default in PyTorch) */
    double momentum;     /**< default 0 (>= 0) */
    double dampening;    /**< default 0 */
    double weight_decay; /**< L2 penalty, default 0 (>= 0) */
    bool nesterov;       /**< default false; needs momentum > 0 and dampening 0 */
    bool maximize;       /**< default false: minimise */
} tj_sgd_options;

/** PyTorch's defaults with the given learning rate. */
tj_sgd_options tj_sgd_defaults(double lr);

/** torch.optim.AdamW's hyper-parameters. */
typedef struct tj_adamw_options {
    double lr;           /**< default 1e-3 */
    double beta1, beta2; /**< defaults 0.9, 0.999 (each in [0, 1)) */
    double eps;          /**< default 1e-8 */
    double weight_decay; /**< decoupled, default 1e-2 */
    bool amsgrad;        /**< default false */
    bool maximize;       /**< default false */
    /** false (default): the step count is read from its tensor and the
     * update runs operator by operator, as PyTorch does on the CPU (it
     * reads the count as a number, so it cannot be traced: inside
     * tj_make_fx it is refused). true: each parameter's update is one
     * aten::_fused_adamw_step call, whose kernel reads the count from its
     * tensor (a traced step keeps it a graph input; required in fake-mode
     * tracing) and rounds as the default path does; its decomposition is
     * PyTorch's capturable branch (bias corrections with tensor
     * operators). */
    bool capturable;
} tj_adamw_options;

/** PyTorch's defaults. */
tj_adamw_options tj_adamw_defaults(void);

/** One SGD step on n parameters (PyTorch's _single_tensor_sgd):
 *     d_p = grad (negated when maximize) + weight_decay * param
 *     buf = clone(d_p) on the first step, else buf * momentum + (1 - dampening) * d_p
 *     d_p = nesterov ? d_p + momentum * buf : buf        (when momentum != 0)
 *     param -= lr * d_p
 * params and grads: float tensors of matching shapes (a NULL grad skips its
 * parameter). momentum_buffers: the state, updated in place; a NULL entry is
 * the first step and receives a new buffer (owned by the innermost open scope,
 * or the caller); may be NULL when momentum is 0. Once a parameter's buffer
 * exists (and has its parameter's and gradient's dtype), its update is one
 * aten::_fused_sgd_step call, rounded as the operators above, its results
 * copied back in place. Errors: invalid options (TJ_ERR_INVALID_ARGUMENT),
 * and those of the operators (shapes, dtypes). */
tj_status tj_sgd_update(const tj_sgd_options *o, tj_tensor *const *params, tj_tensor *const *grads,
                        tj_tensor **momentum_buffers, int n);

/** One AdamW step on n parameters (PyTorch's _single_tensor_adamw):
 *     step += 1;  param *= 1 - lr * weight_decay
 *     exp_avg = beta1 * exp_avg + (1 - beta1) * grad
 *     exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * grad * grad
 *     param -= lr / (1 - beta1^step) * exp_avg / (sqrt(exp_avg_sq) / sqrt(1 - beta2^step) + eps)
 * (with amsgrad, max_exp_avg_sq = max(max_exp_avg_sq, exp_avg_sq) replaces
 * exp_avg_sq in the denominator). exp_avgs, exp_avg_sqs (and
 * max_exp_avg_sqs with amsgrad, else it may be NULL) are tensors of the
 * parameters' shapes, zeros before the first step; steps are float32 0-dim
 * counts, 0 before the first step; all updated in place. A NULL grad skips
 * its parameter. Without capturable, a call inside tj_make_fx (real or
 * fake mode) or a fake step count gives TJ_ERR_UNSUPPORTED, nothing changed.
 * Other errors, nothing changed either: invalid options, a negative n, a
 * NULL list (named) or a missing state tensor (TJ_ERR_INVALID_ARGUMENT); a
 * step count that is not float32 / float64 (TJ_ERR_DTYPE) or not one
 * element (TJ_ERR_SHAPE); state or gradients whose shape or dtype differ
 * from their parameter's (TJ_ERR_SHAPE, TJ_ERR_DTYPE). */
tj_status tj_adamw_update(const tj_adamw_options *o, tj_tensor *const *params, tj_tensor *const *grads,
                          tj_tensor *const *exp_avgs, tj_tensor *const *exp_avg_sqs,
                          tj_tensor *const *max_exp_avg_sqs, tj_tensor *const *steps, int n);

/* ---- optimiser objects ----
 * For eager training. Not for a traced training step: the object's
 * parameters and state are its own tensors, not the traced function's
 * inputs, so under a fake trace its step would find no .grad and record
 * nothing, and under a real one its state would be baked into the graph;
 * tj_optimizer_step refuses to run inside tj_make_fx. Use tj_sgd_update /
 * tj_adamw_update on the inputs there. */

typedef struct tj_optimizer tj_optimizer;

/** An SGD optimiser over n parameters (retained; they should require grad).
 * NULL on invalid options, a NULL parameter or one given twice
 * (TJ_ERR_INVALID_ARGUMENT: torch.optim warns that a repeated parameter will
 * be an error) or out of memory. */
tj_optimizer *tj_sgd_new(tj_tensor *const *params, int n, const tj_sgd_options *o);
/** An AdamW optimiser; state is created on a parameter's first step. Errors
 * as tj_sgd_new's. */
tj_optimizer *tj_adamw_new(tj_tensor *const *params, int n, const tj_adamw_options *o);
/** One step with each parameter's .grad (parameters without one are
 * skipped, as in PyTorch). TJ_ERR_INVALID_ARGUMENT for NULL;
 * TJ_ERR_UNSUPPORTED inside tj_make_fx (see above), nothing changed. */
tj_status tj_optimizer_step(tj_optimizer *opt);
/** Clears the parameters' gradients: zeroes them in place, or drops them
 * when set_to_none (PyTorch 1.13's default is false). */
tj_status tj_optimizer_zero_grad(tj_optimizer *opt, bool set_to_none);
/** Changes the learning rate (for schedules). */
void tj_optimizer_set_lr(tj_optimizer *opt, double lr);
/** A state tensor of parameter i: "momentum_buffer" (SGD), "step",
 * "exp_avg", "exp_avg_sq", "max_exp_avg_sq" (AdamW). Borrowed; NULL when it
 * does not exist (yet). */
tj_tensor *tj_optimizer_state(const tj_optimizer *opt, int i, const char *name);
void tj_optimizer_free(tj_optimizer *opt);

#ifdef __cplusplus
}
#endif
#endif
