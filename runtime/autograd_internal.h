/* Autograd internals shared by the dispatcher (the recording hook), the
 * engine (autograd.c) and the derivative formulas (autograd_formulas.c). */
#ifndef TJIT_RUNTIME_AUTOGRAD_INTERNAL_H
#define TJIT_RUNTIME_AUTOGRAD_INTERNAL_H

#include "internal.h"

/** A saved tensor a formula read after it was written in place (the
 * engine's error message). */
typedef struct tj_grad_stale {
    const tj_tensor *t;       /**< the tensor (NULL: none was stale) */
    int arg, result;          /**< which argument or return it is (-1: not one) */
    uint32_t saved, current;  /**< its versions at the call and now */
    /** the node's saved values were freed by an earlier pass (no
     * retain_graph): the read is refused whatever the versions */
    bool freed;
} tj_grad_stale;

/** What a derivative formula sees of the recorded call. Tensors in `args`
 * and `results` are saved aliases: they share the original's storage,
 * geometry and identity (uid) but carry no autograd history. A formula
 * reads their values through tj_grad_arg / tj_grad_result / tj_grad_value,
 * which check the version saved with them; shapes and dtypes it may read
 * from `args` directly. */
typedef struct tj_grad_ctx {
    const tj_op *op;
    const tj_value *args;        /**< every schema argument */
    tj_tensor *const *results;   /**< one per return (NULL: undefined) */
    const bool *needed;          /**< per input slot: is its gradient wanted */
    const uint32_t *arg_versions;    /**< per input slot, at the call */
    const uint32_t *result_versions; /**< per return, at the call */
    tj_grad_stale *stale;        /**< the first stale read (written by the accessors) */
    /** an earlier pass freed the saved values: they keep their shapes, dtypes
     * and strides but are fake (no data), and reading one is refused */
    bool freed;
} tj_grad_ctx;

/** Tensor argument i of the recorded call, for reading its values; when
 * it was written in place since the call, the node's backward fails with
 * TJ_ERR_MODIFIED (the engine reports it after the formula returns). */
tj_tensor *tj_grad_arg(const tj_grad_ctx *c, int i);
/** Return i of the recorded call, checked as tj_grad_arg. */
tj_tensor *tj_grad_result(const tj_grad_ctx *c, int i);
/** Argument i boxed as recorded, a tensor (or each entry of a tensor list,
 * such as index's indices) checked as tj_grad_arg (for formulas that pass
 * the saved arguments on to a backward operator). */
tj_value tj_grad_value(const tj_grad_ctx *c, int i);
/** Checks every saved tensor as tj_grad_arg does: for formulas that do not
 * say which ones they read (user operators'). False when one is stale. */
bool tj_grad_saved_unmodified(const tj_grad_ctx *c);

/** A derivative formula (a vector-Jacobian product). Input slots number the
 * call's Tensor arguments in schema order, a Tensor[] (or Tensor?[]: a None
 * entry keeps its slot, never needed) argument taking one
 * slot per element (add.Tensor: 0 self, 1 other; addmm: 0 self, 1 mat1,
 * 2 mat2; cat: one per tensor). `grads` holds the gradient of each return
 * (NULL when none reached it). The formula writes into gi[slot] the
 * gradient of each needed slot, computed through the public operator API,
 * or leaves NULL for "zero". It may return a gradient of a broadcast shape
 * or another float dtype: the engine sums it to the input's shape and
 * converts it. Returns TJ_OK or an error status. */
typedef tj_status (*tj_grad_formula)(const tj_grad_ctx *c, tj_tensor *const *grads, tj_tensor **gi);

/** What a formula reads of self's (argument 0's) value. An in-place call
 * overwrites self, so recording one copies self's old value first when the
 * formula reads it (the in-place forms of op_inplace_forms.def take their
 * out-of-place partner's formula, and this with it). PyTorch's
 * derivatives.yaml tells the same apart by naming `self` or `result`. */
typedef enum tj_self_read {
    /** for self's own gradient (log: grad / self): a copy on every
     * recorded call. The default, which is never wrong */
    TJ_SELF_READ = 0,
    /** only for the other inputs' gradients (mul: other's is grad * self):
     * a copy when one of them requires grad */
    TJ_SELF_READ_FOR_OTHERS,
    /** never (exp: grad * result; add; neg; comparisons): no copy */
    TJ_SELF_UNREAD,
} tj_self_read;

typedef struct tj_derivative {
    /** NULL: no formula. A call with an input that requires grad is still
     * recorded, by a node that saves nothing and fails with
     * TJ_ERR_UNSUPPORTED when a backward pass reaches it (PyTorch's
     * NotImplemented node) */
    tj_grad_formula fn;
    bool nondiff;            /**< not differentiable (comparisons, creation, ...) */
    unsigned nondiff_outputs; /**< bit i: return i never carries a gradient */
    /** bit i: schema argument i has no derivative and must not require grad
     * (PyTorch's check_no_requires_grad: a loss's weight, batch norm's
     * running statistics); recording refuses the call otherwise */
    unsigned nondiff_args;
    tj_self_read self_read; /**< read for in-place calls (see tj_self_read) */
} tj_derivative;

/** The derivative entry of a built-in operator (a zero entry when none). */
const tj_derivative *tj_derivative_of(const tj_op *op);

/** Sums `grad` over broadcast dims to `like`'s shape and converts it to
 * like's dtype (ATen's sum_to plus the engine's dtype check). Returns grad
 * itself when nothing is needed; NULL with TJ_ERR_SHAPE when grad's shape
 * does not broadcast to like's (the message names the derivative `name`,
 * an operator's or a node's). */
tj_tensor *tj_autograd_sum_to(tj_tensor *grad, const tj_tensor *like, const char *name);

/* ---- custom functions' nodes (runtime/autograd_function.c) ---- */

/** A backward node (opaque outside autograd.c). */
typedef struct grad_node tj_grad_node;

/** A node whose backward is fn->backward(ctx, ...) (fn is copied and the
 * node keeps its name, "<fn->name>Backward": neither need outlive the call),
 * for n_outputs outputs, with an edge to each of the n_inputs inputs that
 * requires grad. One reference, the caller's. The node owns ctx from then
 * on (released once, see tj_autograd_function_apply); NULL on failure
 * (TJ_ERR_OUT_OF_MEMORY), ctx still the caller's. */
tj_grad_node *tj_autograd_function_node(const tj_autograd_function *fn, void *ctx, tj_tensor *const *inputs,
                                        int n_inputs, int n_outputs);
/** Gives t, which requires grad from then on, the history of return
 * output_nr of node n (retained). */
tj_status tj_grad_node_set_history(tj_tensor *t, tj_grad_node *n, int output_nr);
/** Drops a reference to n (NULL: nothing). */
void tj_grad_node_release(tj_grad_node *n);
/** Brings view t's history up to date with its base's, as the dispatcher
 * does for an operator's arguments (nothing for other tensors). */
tj_status tj_autograd_view_refresh(tj_tensor *t);
/** A fresh alias of t (same storage, geometry, uid and view base, no
 * history; a new reference): for a result that must carry a new history but
 * is an input or has one. NULL when out of memory. */
tj_tensor *tj_autograd_fresh_alias(tj_tensor *t);

/* ---- the dispatcher's hooks (DESIGN.md layer 2) ---- */

/** What tj_autograd_check hands tj_autograd_record about an in-place call
 * (the kernel overwrites self in between). */
typedef struct tj_autograd_call {
    bool inplace;
    tj_tensor *old_self;               /**< a copy of self made before the call, or NULL */
    uint32_t versions[TJ_MAX_ARGS];    /**< of each Tensor argument before the call */
} tj_autograd_call;

/** True when grad mode is on, `op` is differentiable and one of its tensor
 * arguments requires grad: the call then needs a backward node. */
bool tj_autograd_wants(const tj_op *op, const tj_value *args);
/** Refuses calls that cannot be recorded (an argument without a derivative
 * that requires grad; in-place operators on a leaf that requires grad, on
 * the views tj_autograd_check_view_inplace refuses, or giving history to a
 * base whose other views taken before could not follow, real or fake; user
 * operators writing their arguments), brings the history of view arguments
 * up to date with their base's, and prepares an in-place call in `call`
 * (copying self when the formula needs its old value). */
tj_status tj_autograd_check(const tj_op *op, const tj_value *args, tj_autograd_call *call);
/** Attaches a backward node for the finished call to its outputs (owned
 * references in outs; an output that is one of the inputs or already has
 * history is replaced by a fresh alias, except an in-place call's self, whose
 * history the node becomes). Ends `call` whatever happens. On failure outs
 * stay valid for the caller to release. */
tj_status tj_autograd_record(const tj_op *op, const tj_value *args, tj_value *outs, tj_autograd_call *call);
/** Ends a call tj_autograd_check prepared whose kernel failed. */
void tj_autograd_call_end(tj_autograd_call *call);
/** Turns grad mode off for the rest of a recorded call (nothing it triggers
 * is recorded twice); returns the mode for tj_autograd_below_end. Views made
 * in between are not made in no_grad mode (TJ_VIEW_NO_GRAD): they are the
 * recorded call's own results. */
bool tj_autograd_below_begin(void);
/** Gives back the grad mode tj_autograd_below_begin returned. */
void tj_autograd_below_end(bool was_enabled);

/* ---- views (runtime/autograd_views.c) ---- */

/** Makes `view`, a new result of a call aliasing its argument `base` (the
 * dispatcher's view outputs), remember base's root (tj_tensor.view_base,
 * retained) and how it was made (tj_tensor.view_kind): base's kind when
 * base is a view made in no_grad mode or by a multi-output call, as
 * PyTorch propagates CreationMeta; else TJ_VIEW_NO_GRAD when grad mode is
 * off (not by tj_autograd_below_begin), else TJ_VIEW_DEFAULT. A view of
 * a borrowed tensor (tj_tensor.borrowed) is left a root of its own. */
void tj_tensor_set_view_of(tj_tensor *view, tj_tensor *base);
/** Marks t, a new alias, as one without history (tj_tensor.detached: an
 * alias autograd saved, or aten::detach's result), counted in its storage
 * until released so that in-place checks tell it from a view to rebase. */
void tj_tensor_mark_detached(tj_tensor *t);
/** The refusals of an in-place call recorded on `self`, a view
 * (self->view_base set), as PyTorch's check_inplace: a view returned with
 * others by one call, a view made in no_grad mode, a view of a leaf that
 * requires grad (TJ_ERR_INVALID_ARGUMENT each, naming `op` and the shapes);
 * and, which PyTorch accepts, a base whose elements do not fill their
 * storage span exactly (TJ_ERR_UNSUPPORTED: no index addresses the view's
 * region). TJ_OK otherwise. */
tj_status tj_autograd_check_view_inplace(const tj_op *op, const tj_tensor *self);

/* The gradients of a view's region of its base. `base` and `view` give
 * geometry (shape, strides, storage offset: the view's elements are those
 * of base's storage that view addresses) and may be fake; base's elements
 * fill their storage span (tj_autograd_check_view_inplace). Results are
 * new tensors (or g itself) of g's dtype in the current scope, computed
 * through the public API (recorded when traced); NULL with the failing
 * call's error. */
/** The elements of g (base's shape) at view's positions: view's shape
 * (PyTorch's CopySlices taking grad_slice). */
tj_tensor *tj_view_region(tj_tensor *g, const tj_tensor *base, const tj_tensor *view);
/** g (base's shape) with view's positions replaced by src (view's shape and
 * g's dtype), or zeroed when src is NULL (CopySlices' gradient for the
 * base's old value). */
tj_tensor *tj_view_region_replace(tj_tensor *g, const tj_tensor *base, const tj_tensor *view, tj_tensor *src);
/** The gradient of base for the gradient g (view's shape) of view: g at
 * view's positions, summed where view's positions repeat (an expanded
 * view), zero elsewhere (PyTorch's AsStridedBackward, the history of a view
 * after an in-place call on it or on its base). */
tj_tensor *tj_view_region_grad(tj_tensor *g, const tj_tensor *base, const tj_tensor *view);

#endif
