/* Reverse-mode automatic differentiation (PyTorch's autograd, in C).
 *
 * A tensor that requires grad is a leaf the user marked with
 * tj_tensor_set_requires_grad, or the result of an operator call that had
 * such an input while grad mode was on. Every such call is recorded by the
 * dispatcher (DESIGN.md, "The path of one call", layer 2) as a backward node
 * holding the operator's derivative formula and the values it needs; the
 * nodes form a graph that tj_backward / tj_autograd_grad walk from the
 * outputs back to the leaves.
 *
 * As in PyTorch (retain_graph=False), a pass frees each node's saved values
 * once the node's derivative has run: the memory of values only the graph
 * held goes during backward, and a second pass through such a node fails
 * with TJ_ERR_INVALID_ARGUMENT ("trying to backward through the graph a
 * second time", naming the operator). A node whose derivative reads no
 * saved value (add, sum, views, ...) may run again, as in PyTorch, so a
 * second pass through a graph made of such nodes only accumulates again.
 * tj_backward_ex / tj_autograd_grad_ex with retain_graph keep the values
 * for further passes.
 *
 * Derivative formulas call the public operator API (threshold_backward for
 * relu, convolution_backward for convolution, mm for mm, ...), so when a
 * backward pass runs under make_fx its operators are traced like any other
 * call: forward, backward and optimiser update land in one graph. Backward
 * passes themselves record nothing (no higher-order gradients).
 *
 * Operators without a derivative formula (the backward operators such as
 * convolution_backward, the fused optimiser steps, user operators without
 * tj_op_set_backward) are recorded too, as PyTorch records them with a
 * NotImplemented node: the call runs and its float results require grad,
 * and only a backward pass that needs gradients through the call fails
 * (TJ_ERR_UNSUPPORTED, naming the operator). So a traced training step runs
 * through tj_graph_run on parameters that require grad. Operators that are
 * not differentiable at all (comparisons, argmax, creation, random) and
 * integer or bool results never require grad.
 *
 * Custom functions (tj_autograd_function_apply, PyTorch's
 * torch.autograd.Function) give outputs computed any way, such as by a
 * compiled plan, a history whose backward is a user callback.
 *
 * Grad mode is per thread and on by default. In-place operators are recorded
 * too, on views as PyTorch (the base's history is rebased), with the limits
 * inplace.h lists (not on leaves that require grad nor views of them).
 *
 * Saved values are checked as PyTorch's version counters check them: a node
 * records the version (tj_tensor_version) of every tensor it saves, and a
 * backward pass whose formula reads the values of one that was written in
 * place since the call fails with TJ_ERR_MODIFIED instead of computing a
 * wrong gradient (x * w with x modified before backward: the gradient of w
 * needs the old x). A formula that needs only a saved tensor's shape
 * (sum, view, expand, select, cat, ...) is not affected; a user operator's
 * formula (tj_op_set_backward) may read any saved tensor, so all of them
 * are checked. */
#ifndef TJIT_AUTOGRAD_H
#define TJIT_AUTOGRAD_H

#include "dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tensors ---- */

/** Marks a leaf tensor as requiring grad (or not). Only float32/float64
 * tensors can require grad (TJ_ERR_DTYPE); only leaves can change the flag
 * (TJ_ERR_INVALID_ARGUMENT for the result of a recorded call, as PyTorch's
 * "you can only change requires_grad flags of leaf variables"). Fake
 * tensors are allowed. */
tj_status tj_tensor_set_requires_grad(tj_tensor *t, bool requires_grad);
/** True when t requires grad (a marked leaf or a recorded result). */
bool tj_tensor_requires_grad(const tj_tensor *t);
/** True unless t is the result of a recorded call (PyTorch's is_leaf). */
bool tj_tensor_is_leaf(const tj_tensor *t);
/** The gradient accumulated into leaf t by tj_backward, or NULL (none yet,
 * or t is not a leaf that requires grad). Borrowed: valid until the next
 * tj_tensor_set_grad on t or t's release. */
tj_tensor *tj_tensor_grad(const tj_tensor *t);
/** Replaces t's .grad with `grad` (retained; NULL clears it, like
 * zero_grad(set_to_none=True)). TJ_ERR_SHAPE / TJ_ERR_DTYPE when grad's
 * shape or dtype differ from t's, TJ_ERR_INVALID_ARGUMENT when one of them
 * is fake and the other real, or when grad is t itself (PyTorch's "can't
 * assign Variable as its own grad": backward would add into t's values). */
tj_status tj_tensor_set_grad(tj_tensor *t, tj_tensor *grad);
/** aten::detach: a tensor sharing t's storage and geometry without autograd
 * history: it does not require grad, is a leaf, and an in-place call on it
 * changes t's values and version without giving t history (PyTorch's
 * detach, a non-differentiable view). Dispatched like every operator, so
 * make_fx records it (`aten.detach.default`) and a traced graph run under
 * autograd stops gradients there as the eager call does. New reference,
 * owned by the innermost open scope (or the caller). NULL for NULL (see
 * tj_last_error for the status). */
tj_tensor *tj_tensor_detach(tj_tensor *t);

/* ---- grad mode ---- */

/** Whether calls are recorded on the calling thread (default true). */
bool tj_grad_enabled(void);
/** Turns recording on or off for the calling thread; returns the previous
 * setting (PyTorch's torch.set_grad_enabled). */
bool tj_set_grad_enabled(bool enabled);
/** A no-grad scope (torch.no_grad): tj_no_grad_begin turns recording off and
 * returns the previous setting, to be handed to tj_no_grad_end. Scopes nest. */
bool tj_no_grad_begin(void);
void tj_no_grad_end(bool previous);

/* ---- backward passes ---- */

/** Options of a backward pass (zero-initialise, then set what you need). */
typedef struct tj_backward_options {
    /** keep the nodes' saved values so that the graph can be run backward
     * again (PyTorch's retain_graph=True); false frees them as the pass goes */
    bool retain_graph;
} tj_backward_options;

/** torch.autograd.backward for one output: accumulates d(output)/d(leaf)
 * into the .grad of every leaf that requires grad when the pass runs (one
 * turned off with tj_tensor_set_requires_grad since the forward calls gets
 * nothing, as PyTorch's AccumulateGrad) and that output depends on. output
 * must require grad (TJ_ERR_INVALID_ARGUMENT otherwise).
 * grad_output is the gradient flowing into output (output's shape; converted
 * to its dtype); NULL means ones, allowed only when output has one element
 * (TJ_ERR_SHAPE otherwise). The first gradient a leaf receives is stored
 * (copied when it shares storage with anything else); later ones are added
 * in place. The saved values of the nodes the pass runs are freed
 * (tj_backward_ex keeps them): another pass through them fails.
 * Errors: a failing derivative (its operator's error), TJ_ERR_UNSUPPORTED
 * when the pass reaches a call of an operator without a derivative formula
 * ("aten::OP: derivative not implemented ... tjit has no derivative
 * formula for aten::OP"), TJ_ERR_MODIFIED when a
 * formula needs a saved value that was since written in place (the message
 * names the operator, the argument and the versions), TJ_ERR_INVALID_ARGUMENT
 * for a node whose saved values an earlier pass freed (retain_graph was
 * not set), and TJ_ERR_INVALID_ARGUMENT when a real leaf would get a fake
 * gradient: in a fake-mode trace, a tensor that requires
 * grad and that the traced function reached without getting it as an input
 * (a parameter captured in its ctx; pass it as an input, whose fake copy
 * takes the gradient, or trace in real mode, which sets its .grad as
 * eagerly). PyTorch's fake mode refuses such a
 * tensor already at the forward operator. A failing pass stores nothing
 * into any .grad (leaves get their gradients only once the whole pass has
 * run); the saved values of the nodes it ran before failing are freed as by
 * any pass unless retain_graph was set. */
tj_status tj_backward(tj_tensor *output, tj_tensor *grad_output);
/** tj_backward with options (NULL: the defaults, as tj_backward). */
tj_status tj_backward_ex(tj_tensor *output, tj_tensor *grad_output, const tj_backward_options *options);

/** torch.autograd.grad: gradients of the n_outputs outputs (weighted by
 * grad_outputs, as tj_backward; grad_outputs may be NULL, or hold NULL
 * entries, for ones on one-element outputs) with respect to the n_inputs
 * inputs, which may be leaves or intermediate results that require grad.
 * Writes one gradient per input into results (input's shape and dtype; new
 * references owned by the innermost open scope, not requiring grad), or NULL
 * for an input the outputs do not depend on (PyTorch's allow_unused=True).
 * .grad fields are left alone, and only the part of the graph between the
 * outputs and the inputs runs, freeing its nodes' saved values as
 * tj_backward does. Errors as tj_backward; inputs that do not require grad
 * give TJ_ERR_INVALID_ARGUMENT. */
tj_status tj_autograd_grad(tj_tensor *const *outputs, int n_outputs, tj_tensor *const *grad_outputs,
                           tj_tensor *const *inputs, int n_inputs, tj_tensor **results);
/** tj_autograd_grad with options (NULL: the defaults, as tj_autograd_grad). */
tj_status tj_autograd_grad_ex(tj_tensor *const *outputs, int n_outputs, tj_tensor *const *grad_outputs,
                              tj_tensor *const *inputs, int n_inputs, tj_tensor **results,
                              const tj_backward_options *options);

/* ---- custom functions (torch.autograd.Function) ---- */

/** Backward of a custom function (torch.autograd.Function.backward).
 * grad_outputs[i]: the gradient flowing into outputs[i] of the apply call,
 * accumulated over every use of it, of that output's shape and dtype (NULL
 * when none reached it; always NULL for an integer or bool output), for
 * n_outputs as given to apply; at least one is set. needed[i]: whether input
 * i's gradient is wanted in this pass (false for inputs that do not require
 * grad). Stores into grad_inputs[i] (n_inputs slots, all NULL on entry) a
 * tensor of input i's shape (or of a shape input i broadcasts to, [2, 3] for
 * a [3] input, or of another dtype: the engine sums it down to the input's
 * shape and converts it as for operator formulas; any other shape, [1, 3]
 * for a [2, 3] input, fails the pass with TJ_ERR_SHAPE), or leaves
 * NULL for zero; slots not needed are ignored. Tensors it creates belong to
 * the scope the engine opens around the call (no release needed); returning
 * an existing tensor (a grad_output) is fine too: grad_inputs hold borrowed
 * references, and the engine retains what it keeps. It runs as operator
 * formulas run: with grad mode off (tjit records nothing during a backward
 * pass, so there is no create_graph: a double backward goes through a traced
 * backward, see tj_make_fx), and inside tj_make_fx every operator it calls is
 * traced into the graph as the built-in formulas' are, on fake tensors in
 * fake mode. Returns TJ_OK or an error (recorded with tj_error; a status
 * returned without one is reported as such), which fails the backward pass
 * (nothing stored into any .grad). */
typedef tj_status (*tj_function_backward_fn)(void *ctx, tj_tensor *const *grad_outputs, int n_outputs,
                                             const bool *needed, tj_tensor **grad_inputs, int n_inputs);

/** What a custom function's node calls. Copied by tj_autograd_function_apply
 * (the struct need not outlive the call). */
typedef struct tj_autograd_function {
    /** e.g. "CompiledFunction" (required): errors name the node
     * "CompiledFunctionBackward", as PyTorch names a Function's node */
    const char *name;
    tj_function_backward_fn backward; /**< required */
    /** frees ctx (its saved tensors); NULL: nothing to free */
    void (*release)(void *ctx);
} tj_autograd_function;

/** torch.autograd.Function.apply for outputs already computed (by a compiled
 * plan, under tj_no_grad_begin, ...): gives outputs[0..n_outputs) a history
 * whose backward is fn->backward(ctx, ...), with an edge to each of
 * inputs[0..n_inputs) that requires grad: a leaf accumulates into its .grad,
 * a recorded result passes the gradient on to its own history. The same
 * tensor given twice takes two slots, whose gradients add up.
 *
 * When grad mode is on and an input requires grad, one node is made: every
 * float32/float64 output requires grad from then on, output i being return i
 * of the node (tj_tensor_is_leaf false); integer and bool outputs get no
 * history. outputs hold references owned as operator results are (by the
 * innermost open scope, or by the caller when none is open): an output that
 * is one of the inputs, appears earlier in outputs, or already has autograd
 * state (a history, or a leaf's requires_grad) is replaced in outputs[i] by a
 * fresh alias of it (same storage and values) carrying the history, owned
 * the same way, and the old reference dropped (taken out of the innermost
 * scope and released, or released when no scope owns it; one an outer scope
 * owns stays with that scope), as the dispatcher does for operators
 * returning an input. Otherwise (grad mode off, or no input requires grad)
 * nothing is recorded, outputs stay as they are, and release(ctx) is called
 * at once.
 *
 * The engine does not look into ctx: tensors kept there are not checked by
 * version as operators' saved values are (to refuse a backward after an
 * in-place write, as save_for_backward does, record tj_tensor_version at
 * the call and compare in the backward, returning TJ_ERR_MODIFIED). Keep
 * an output there as tj_tensor_detach(output), its alias without history,
 * not as the output itself: the output holds the node, which holds ctx, a
 * cycle that only a backward pass running the node breaks (without one,
 * ctx is never released). In a tj_jit function with gradients the backward
 * runs once, while the joint graph is traced (see tj_jit_run).
 *
 * ctx is the apply call's from the start, whatever happens: fn->release(ctx)
 * is called exactly once, at once when no node is made or on failure; else
 * by the first backward pass without retain_graph that runs the node (as
 * PyTorch frees saved variables: a later pass reaching the node fails with
 * TJ_ERR_INVALID_ARGUMENT, "<name>Backward: backward: trying to backward
 * through the graph a second time"), or when the node is freed (its last
 * output and everything recorded from them released). ctx must not hold a
 * reference to an output object that takes the history: the output holds
 * the node, which holds ctx, and none of them would ever be freed; to save
 * an output for backward, save tj_tensor_detach(output) (an alias without
 * history, as a node saves its operator's results). The callback runs on
 * the thread of the backward pass. Works on fake tensors as on real ones
 * (tj_make_fx).
 *
 * Errors (ctx released, but for a NULL fn, which has no release; outputs
 * stay the caller's, valid and without new history, except after an
 * out-of-memory error while giving them theirs, which may leave the first
 * ones with it): TJ_ERR_INVALID_ARGUMENT for a NULL fn, fn->name or
 * fn->backward, NULL inputs / outputs arrays with a positive count or NULL
 * entries in them, negative counts or counts over TJ_MAX_GRAPH_OUTPUTS
 * (1024, graph.h); TJ_ERR_OUT_OF_MEMORY. */
tj_status tj_autograd_function_apply(const tj_autograd_function *fn, void *ctx, tj_tensor *const *inputs,
                                     int n_inputs, tj_tensor **outputs, int n_outputs);

/** Whether `op` has a derivative formula (false also for operators that are
 * not differentiable, such as comparisons; see tj_op_is_differentiable). */
bool tj_op_has_derivative(const tj_op *op);
/** Whether `op` is differentiable at all: false for comparisons, argmax,
 * creation and random operators, whose results never require grad. */
bool tj_op_is_differentiable(const tj_op *op);

#ifdef __cplusplus
}
#endif
#endif
