/* The functions a model runs and traces: its forward pass, and a whole
 * training step (forward, loss, torch.autograd.grad, optimiser update), with
 * every parameter and every piece of optimiser state an argument, as
 * AOTAutograd lays them out. The same C function runs eagerly and under
 * make_fx, so eager, traced and decomposed training compute the same thing. */
#ifndef TJIT_MODELS_STEP_H
#define TJIT_MODELS_STEP_H

#include "models.h"

typedef enum step_kind {
    STEP_FORWARD, /**< inputs: params..., x; output: logits */
    STEP_TRAIN,   /**< inputs: params..., optimiser state..., x, y; output: loss */
    STEP_LOSS,    /**< inputs: params..., x, y; output: loss (the model with its loss, as
                       torch.compile(model) sees it; gradients and update are the caller's) */
} step_kind;

/** Optimiser state of a training step: SGD (lr 0.01, momentum 0.9) momentum
 * buffers for mlp/cnn; AdamW (lr 3e-4) exp_avg, exp_avg_sq and step count
 * per parameter for gpt. Tensors are zeros at the start, updated in place. */
typedef struct train_state {
    int n;                            /**< state tensors, in step-input order */
    tj_tensor *tensors[3 * MODEL_MAX_PARAMS];
} train_state;

tj_status train_state_init(const model *m, train_state *s);
/** The key of state tensor i in a PyTorch optimizer state_dict's per-parameter
 * state: "momentum_buffer" (SGD); "exp_avg", "exp_avg_sq", "step" (AdamW).
 * Its parameter is m->params[i % m->n_params]. */
const char *train_state_key(const model *m, int i);
void train_state_free(train_state *s);

/** Lays out a step's inputs: params..., [state...], x, [y]: the state when
 * both s and y are given (STEP_TRAIN), y when given (STEP_TRAIN, STEP_LOSS). */
int step_inputs(const model *m, const train_state *s, tj_tensor *x, tj_tensor *y, tj_tensor **inputs);

/** The optimiser's update of the model's parameters `params` (laid out as
 * m->params) with their gradients `grads` and the state tensors of
 * train_state (`state`, in its order), in place: SGD lr 0.01 momentum 0.9
 * (mlp, cnn), AdamW lr 3e-4 (gpt; `capturable`: its step count is read from
 * its tensor, as when traced). Records no gradients. Errors: those of
 * tj_sgd_update / tj_adamw_update. */
tj_status step_optimizer_update(const model *m, tj_tensor *const *params, tj_tensor *const *grads,
                                tj_tensor *const *state, bool capturable);

/** Lays out the loss step's inputs (STEP_LOSS) for a gradient, as
 * `torch.compile(model)` gets its parameters: new aliases of m's parameters
 * (tj_tensor_detach: the same storage; new leaves owned by the innermost
 * open scope, their .grad dropped with them, as zero_grad(set_to_none=True))
 * marked requires grad, then x, y. m's own tensors keep their flags. Returns
 * the input count; -1 on error (tj_last_status). */
int step_loss_inputs(const model *m, tj_tensor *x, tj_tensor *y, tj_tensor **inputs);
/** loss.backward(); opt.step(): tj_backward on `loss` (a one-element loss
 * computed from `leaves`, step_loss_inputs' aliases), then
 * step_optimizer_update of m's parameters and s with the leaves' .grad, as
 * eager mode's step (not capturable). Errors: those of tj_backward and of
 * the update. */
tj_status step_backward_update(model *m, train_state *s, tj_tensor *loss, tj_tensor *const *leaves);

/** The context of step_function's functions. */
typedef struct step_ctx {
    model *m;
    int n_state;
    bool capturable; /**< AdamW's step count read from its tensor (tracing) */
} step_ctx;

/** The step as a function to trace (tj_trace_fn), on step_inputs' inputs
 * with a step_ctx: the forward pass returns the logits; the training step
 * (forward, loss, gradients, the optimiser's update of the parameters and
 * state in place) returns the loss; the loss step returns the loss (with
 * its history when parameters require grad). */
tj_trace_fn step_function(step_kind kind);

/** Runs one training step eagerly: updates params and state in place and
 * returns the loss (new reference, owned by the innermost open scope). */
tj_tensor *step_train_eager(model *m, train_state *s, tj_tensor *x, tj_tensor *y);

/** make_fx of a step on a batch of the model's WORKLOADS.md shape (or
 * `batch` when > 0), with `table` (may be NULL). Training graphs are functionalised: parameters and state come back
 * as outputs written back into their inputs. NULL on error. */
tj_graph *step_trace(model *m, step_kind kind, int64_t batch, const tj_decomp_table *table, tj_tracing_mode mode);

#endif
