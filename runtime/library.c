/* User operators (include/tjit/library.h): torch.library's define + impl +
 * register_fake + register_autograd. A registered operator is a record like
 * the built-in ones, so the dispatcher, the tracer, the parser and the
 * replay compiler need nothing of their own for it. */
#include <string.h>

#include "autograd_internal.h"

static const char *const WHO = "tj_op_register";

/* The checks that need the parsed schema: namespace, kind and functions. */
static tj_status check_definition(const struct tj_op *op)
{
    if (strcmp(op->ns, "aten") == 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: \"%s\": the namespace 'aten' is the built-in operators'; "
                                                 "use one of your own", WHO, op->schema);
    switch (op->kind) {
    case TJ_OP_PRIMITIVE:
    case TJ_OP_COMPOSITE:
        if (!op->meta)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: \"%s\": a %s operator needs a shape function", WHO,
                            op->schema, tj_op_kind_name(op->kind));
        if (!op->kernel && !op->is_view)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: \"%s\": a %s operator needs a kernel (only views have none)",
                            WHO, op->schema, tj_op_kind_name(op->kind));
        return TJ_OK;
    case TJ_OP_IMPLICIT:
        if (op->kernel || op->meta)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: \"%s\": an implicit operator has no kernel or shape function "
                                                     "(every call runs its decomposition)", WHO, op->schema);
        return TJ_OK;
    }
    return TJ_OK;
}

const tj_op *tj_op_register(const char *schema, tj_op_kind kind, tj_kernel_fn kernel, tj_meta_fn meta)
{
    if (!schema) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: NULL schema", WHO);
        return NULL;
    }
    if (kind != TJ_OP_PRIMITIVE && kind != TJ_OP_COMPOSITE && kind != TJ_OP_IMPLICIT) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: \"%s\": invalid kind %d", WHO, schema, (int)kind);
        return NULL;
    }
    struct tj_op *op = tj_alloc(sizeof *op);
    if (!op) {
        tj_oom(WHO, sizeof *op);
        return NULL;
    }
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->kernel = kernel;
    op->meta = meta;
    op->any_dtype = true;
    tj_status st = tj_schema_parse(op, schema, NULL, WHO);
    if (st != TJ_OK) {
        tj_free(op, sizeof *op);
        return NULL;
    }
    if ((st = check_definition(op)) != TJ_OK || (st = tj_registry_add(op, WHO)) != TJ_OK) {
        tj_schema_free(op);
        tj_free(op, sizeof *op);
        return NULL;
    }
    return op;
}

/* ---- autograd ---- */

/* The engine's formula for every user operator: calls the one registered,
 * which may read any saved tensor, so none may have been written since. */
static tj_status user_formula(const tj_grad_ctx *c, tj_tensor *const *grads, tj_tensor **gi)
{
    if (!tj_grad_saved_unmodified(c)) return TJ_ERR_MODIFIED;
    return c->op->backward(c->args, c->results, grads, c->needed, gi);
}

static const tj_derivative with_formula = {user_formula, false, 0};
static const tj_derivative not_differentiable = {NULL, true, 0};

tj_status tj_op_set_backward(const tj_op *op, tj_backward_fn fn)
{
    if (!op) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_op_set_backward: NULL operator");
    if (tj_op_is_builtin(op))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_op_set_backward: %s is built in; only operators from "
                                                 "tj_op_register take a backward formula", op->name);
    if (op->kind == TJ_OP_IMPLICIT)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_op_set_backward: %s is implicit: autograd differentiates "
                                                 "its decomposition", op->name);
    struct tj_op *o = (struct tj_op *)op;
    tj_registry_lock();
    o->backward = fn;
    o->derivative = fn ? &with_formula : &not_differentiable;
    tj_registry_unlock();
    return TJ_OK;
}
