/* Custom differentiable functions (torch.autograd.Function.apply): outputs
 * computed any way get a history whose backward is a user callback. The
 * node itself, and running it, live with the engine (autograd.c); here the
 * checks and the outputs' history, as the dispatcher's recording gives it
 * to an operator's results. */
#include "autograd_internal.h"

/* The first error of the arguments, or TJ_OK. */
static tj_status check_arguments(const tj_autograd_function *fn, tj_tensor *const *inputs, int n_inputs,
                                 tj_tensor *const *outputs, int n_outputs)
{
    if (!fn || !fn->name || !fn->backward)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_autograd_function_apply: %s", !fn ? "NULL function"
                        : !fn->name ? "the function has no name" : "the function has no backward");
    if (n_inputs < 0 || n_outputs < 0 || n_inputs > TJ_MAX_GRAPH_OUTPUTS || n_outputs > TJ_MAX_GRAPH_OUTPUTS)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_autograd_function_apply: %s: %d inputs and %d outputs (from 0 "
                        "to %d each)", fn->name, n_inputs, n_outputs, TJ_MAX_GRAPH_OUTPUTS);
    for (int i = 0; i < n_inputs; i++)
        if (!inputs || !inputs[i]) return tj_error_null("tj_autograd_function_apply: %s: input %d is NULL", fn->name, i);
    for (int i = 0; i < n_outputs; i++)
        if (!outputs || !outputs[i])
            return tj_error_null("tj_autograd_function_apply: %s: output %d is NULL", fn->name, i);
    return TJ_OK;
}

/* Whether outputs[i] must be replaced by a fresh alias to carry its history:
 * it has autograd state already, is an input, or an earlier output. */
static bool taken(tj_tensor *const *inputs, int n_inputs, tj_tensor *const *outputs, int i)
{
    tj_tensor *t = outputs[i];
    if (t->autograd) return true;
    for (int k = 0; k < n_inputs; k++)
        if (inputs[k] == t) return true;
    for (int k = 0; k < i; k++)
        if (outputs[k] == t) return true;
    return false;
}

/* Replaces *t by a fresh alias owned as *t was, as operator results are (by
 * the innermost open scope, or the caller); *t unchanged on failure. */
static tj_status replace_by_alias(tj_tensor **t)
{
    tj_tensor *a = tj_autograd_fresh_alias(*t);
    if (!a) return tj_last_status();
    if (tj_scope_adopt(a) != TJ_OK) {
        tj_tensor_release(a);
        return tj_last_status();
    }
    tj_scope_drop(*t);
    *t = a;
    return TJ_OK;
}

/* The node and the outputs' history; ctx is the node's once it is made. */
static tj_status record(const tj_autograd_function *fn, void *ctx, tj_tensor *const *inputs, int n_inputs,
                        tj_tensor **outputs, int n_outputs, bool *ctx_taken)
{
    for (int i = 0; i < n_outputs; i++)
        if (tj_dtype_is_floating_point(outputs[i]->dtype) && taken(inputs, n_inputs, outputs, i) &&
            replace_by_alias(&outputs[i]) != TJ_OK)
            return tj_last_status();
    tj_grad_node *n = tj_autograd_function_node(fn, ctx, inputs, n_inputs, n_outputs);
    if (!n) return tj_last_status();
    *ctx_taken = true;
    tj_status st = TJ_OK;
    for (int i = 0; i < n_outputs && st == TJ_OK; i++)
        if (tj_dtype_is_floating_point(outputs[i]->dtype)) st = tj_grad_node_set_history(outputs[i], n, i);
    tj_grad_node_release(n); /* the outputs hold it (none: it goes, and ctx with it) */
    return st;
}

tj_status tj_autograd_function_apply(const tj_autograd_function *fn, void *ctx, tj_tensor *const *inputs,
                                     int n_inputs, tj_tensor **outputs, int n_outputs)
{
    tj_status st = check_arguments(fn, inputs, n_inputs, outputs, n_outputs);
    bool wanted = false, ctx_taken = false;
    for (int i = 0; i < n_inputs && st == TJ_OK; i++) {
        st = tj_autograd_view_refresh(inputs[i]); /* a view's history follows its base's, as for operators */
        wanted |= tj_tensor_requires_grad(inputs[i]);
    }
    if (st == TJ_OK && wanted && tj_grad_enabled())
        st = record(fn, ctx, inputs, n_inputs, outputs, n_outputs, &ctx_taken);
    if (!ctx_taken && fn && fn->release) fn->release(ctx);
    return st;
}
