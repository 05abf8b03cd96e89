/* No-op elimination: calls whose result equals one of their inputs (same
 * dtype, shape and values) are replaced by that input. Copies (clone,
 * _to_copy to the same dtype) are only dropped when their input has no other
 * use and the graph mutates nothing, since a copy protects against aliasing,
 * and when they keep their input's strides and offset.
 * A graph output is only replaced by another call's result that is not an
 * output itself (never by an input or a constant). */
#include <math.h>
#include <string.h>

#include "tracer/graph_internal.h"

static bool same_meta(const tj_gvalue *a, const tj_gvalue *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim) return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d]) return false;
    return true;
}

static bool same_view(const tj_gvalue *a, const tj_gvalue *b)
{
    if (!same_meta(a, b) || a->offset != b->offset) return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != 1 && a->strides[d] != b->strides[d]) return false;
    return true;
}

/* Whether x equals v; for zeros, x's sign is matched too unless any_zero:
 * x + (+0) turns -0 into +0 and x - (-0) likewise, while x + (-0) and
 * x - (+0) are exact, so a float add or sub of zero is a no-op only for the
 * zero of the right sign. */
static bool number_is(double x, double v, bool any_zero)
{
    return x == v && (v != 0 || any_zero || signbit(x) == signbit(v));
}

static bool scalar_is(const tj_garg *a, double v, bool any_zero)
{
    return (a->kind == TJ_GA_INT && number_is((double)a->u.i, v, any_zero)) ||
           (a->kind == TJ_GA_FLOAT && number_is(a->u.f, v, any_zero));
}

/* A constant tensor whose every element is v (any_zero as for number_is). */
static bool constant_all(const tj_graph *g, const tj_garg *a, double v, bool any_zero)
{
    if (a->kind != TJ_GA_VALUE) return false;
    const tj_gnode *n = &g->nodes[g->values[a->u.v].node];
    if (n->kind != TJ_NODE_CONSTANT) return false;
    for (int64_t i = 0; i < n->constant->numel; i++)
        if (!number_is(tj_tensor_item_at(n->constant, i), v, any_zero)) return false;
    return true;
}

static bool is_op(const tj_gnode *n, const char *base, const char *overload)
{
    return tj_op_is_builtin(n->op) && strcmp(n->op->base, base) == 0 && strcmp(n->op->overload, overload) == 0;
}

/* The value n can be replaced by, or -1. */
static int replacement(const tj_graph *g, const tj_gnode *n, bool mutates)
{
    if (n->nout != 1 || n->outs[0] < 0 || n->nargs == 0 || n->args[0].kind != TJ_GA_VALUE) return -1;
    int in = n->args[0].u.v;
    const tj_gvalue *out = &g->values[n->outs[0]], *x = &g->values[in];
    const tj_garg *a = n->args;
    /* t(t(x)) and transpose(transpose(x)) of the same dims give x back */
    if (is_op(n, "t", "") || is_op(n, "transpose", "int")) {
        const tj_gnode *p = &g->nodes[x->node];
        if (p->kind == TJ_NODE_CALL && p->op == n->op && p->args[0].kind == TJ_GA_VALUE &&
            (is_op(n, "t", "") || (p->args[1].u.i == a[1].u.i && p->args[2].u.i == a[2].u.i) ||
             (p->args[1].u.i == a[2].u.i && p->args[2].u.i == a[1].u.i))) {
            int orig = p->args[0].u.v;
            if (same_view(&g->values[orig], out)) return orig;
        }
        return -1;
    }
    if (!same_meta(out, x)) return -1;
    if ((is_op(n, "mul", "Scalar") || is_op(n, "div", "Scalar")) && scalar_is(&a[1], 1, true)) return in;
    if ((is_op(n, "mul", "Tensor") || is_op(n, "div", "Tensor")) && constant_all(g, &a[1], 1, true)) return in;
    if (is_op(n, "add", "Scalar") || is_op(n, "sub", "Scalar") || is_op(n, "add", "Tensor") ||
        is_op(n, "sub", "Tensor")) {
        /* alpha must be 1 (alpha * 0 is nan for an infinite alpha, +0 for a
         * negative one); integers have one zero, and for floats the exact
         * no-ops are x + (-0) and x - (+0) */
        if (n->nargs > 2 && !scalar_is(&a[2], 1, true)) return -1;
        bool integral = out->dtype == TJ_INT64 || out->dtype == TJ_BOOL;
        double zero = strcmp(n->op->base, "add") == 0 ? -0.0 : 0.0;
        return scalar_is(&a[1], zero, integral) || constant_all(g, &a[1], zero, integral) ? in : -1;
    }
    if ((is_op(n, "view", "") || is_op(n, "_unsafe_view", "") || is_op(n, "expand", "")) && same_view(out, x))
        return in;
    /* a copy that lays its input out anew (a decomposed convolution's
     * contiguous copy of a permuted im2col view) is what the views after it
     * read: only one that keeps the layout goes */
    if (!mutates && x->uses == 1 && (is_op(n, "clone", "") || is_op(n, "_to_copy", "")) && same_view(out, x))
        return in;
    return -1;
}

/* Whether value v is one of the graph's outputs. */
static bool is_output(const tj_graph *g, int v)
{
    if (g->output_node < 0) return false;
    const tj_gnode *o = &g->nodes[g->output_node];
    for (int i = 0; i < o->nargs; i++)
        for (int k = 0; k < tj_garg_n_values(&o->args[i]); k++)
            if (tj_garg_value_at(&o->args[i], k) == v) return true;
    return false;
}

/* A graph output is a tensor the caller owns, distinct from every input
 * and from every other output (mul(x, 1) in PyTorch is a new tensor, and
 * x.view(x.shape) a new view): replacing it by a placeholder, a constant or
 * a value that is already an output would hand the caller its own input
 * object, the graph's constant or the same object twice. */
static bool keeps_output_identity(const tj_graph *g, const tj_gnode *n, int r)
{
    if (!is_output(g, n->outs[0])) return true;
    return g->nodes[g->values[r].node].kind == TJ_NODE_CALL && !is_output(g, r);
}

int tj_pass_noop(tj_graph *g)
{
    if (!g) {
        tj_error_null("tj_pass_noop: NULL graph");
        return -1;
    }
    bool mutates = false;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].kind == TJ_NODE_CALL && g->nodes[i].op->mutated_args) mutates = true;
    tj_graph_count_uses(g);
    int removed = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        tj_gnode *n = &g->nodes[i];
        if (n->kind != TJ_NODE_CALL) continue;
        int r = replacement(g, n, mutates);
        if (r < 0 || !keeps_output_identity(g, n, r)) continue;
        tj_graph_replace_uses(g, n->outs[0], r);
        g->values[r].uses += g->values[n->outs[0]].uses - 1;
        g->values[n->outs[0]].uses = 0;
        n->dead = true;
        removed++;
    }
    if (removed) tj_graph_compact(g);
    return removed;
}
