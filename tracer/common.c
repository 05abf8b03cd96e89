/* Common subexpressions at compile time: a call node with the same
 * operator and the same arguments as an earlier one computes the same
 * values, so the nodes after it read the earlier one's results instead, and
 * the duplicate, read by nothing, leaves the plan with the dead code
 * (prune.c), as Inductor's CSE does on the graphs make_fx records. A
 * decomposed training step recomputes what the forward pass had: the core
 * table's convolution_backward pads the layer's input again (two full +
 * slice_scatter) for the weight gradient's im2col.
 *
 * Done as tj_compile walks the graph: each call's arguments are rewritten
 * to their canonical values before its shape function runs, so views of a
 * merged result get the earlier result's geometry, and chains (full, then
 * slice_scatter over it, then the unfold views) merge link by link. Only
 * pure operators (tj_plan_op_is_pure) merge, and nothing at all in a graph
 * with in-place or user operators: a read after a write is not the read
 * before it. Copies (_to_copy, clone) do not merge, nor elementwise calls
 * far apart (COMMON_ELEMENTWISE_NEAR): recomputed, they cost what reading
 * their operands again does, inside a fused step (fuse_pointwise.c) nothing
 * more, and a copy read by one product is no copy at all (the product packs
 * from its source, fuse_gather.c); shared, their results would be written
 * out and kept alive from the forward pass to the backward (gpt's decomposed
 * training step: arena 11.2 -> 15.2 MiB when all of them merged). Merged
 * results other than those still live longer, which may take more arena
 * than recomputing them did. */
#include <string.h>

#include "plan_internal.h"

/* An elementwise call merges into an identical one at most this many plan
 * nodes before it: its readers then are near the first's, in the same fused
 * step (decomposed layer_norm subtracts the mean twice, var_mean's x - mean
 * and its own, ten nodes apart: one pass fewer over each chunk). */
#define COMMON_ELEMENTWISE_NEAR 16

tj_status tj_plan_common_begin(tj_plan_common *cs, const tj_graph *g, bool enabled)
{
    memset(cs, 0, sizeof *cs);
    for (int i = 0; enabled && i < g->n_nodes; i++) {
        const tj_gnode *n = &g->nodes[i];
        if (!n->dead && n->kind == TJ_NODE_CALL &&
            (!tj_op_is_builtin(n->op) || n->op->mutated_args || tj_op_is_inplace_view(n->op)))
            enabled = false;
    }
    if (!enabled) return TJ_OK;
    cs->cap = 64;
    while (cs->cap < (size_t)g->n_nodes * 2) cs->cap *= 2;
    cs->bytes = sizeof(int) * (cs->cap + (size_t)g->n_values + 1);
    cs->slots = tj_alloc(cs->bytes);
    if (!cs->slots) return tj_oom("tj_compile", cs->bytes);
    cs->canon = cs->slots + cs->cap;
    for (size_t s = 0; s < cs->cap; s++) cs->slots[s] = -1;
    for (int v = 0; v < g->n_values; v++) cs->canon[v] = v;
    return TJ_OK;
}

void tj_plan_common_canonical_args(const tj_plan_common *cs, tj_pnode *n)
{
    if (cs->slots) tj_garg_remap_values(n->args, n->nargs, cs->canon);
}

/* Whether node y computes what x does: same operator and arguments (both
 * canonical), and x has a value for every result y has one for. */
static bool same_call(const tj_pnode *x, const tj_pnode *y)
{
    if (x->op != y->op || x->nargs != y->nargs || x->nout != y->nout ||
        !tj_garg_lists_equal(x->args, y->args, x->nargs))
        return false;
    for (int k = 0; k < y->nout; k++)
        if (y->outs[k] >= 0 && x->outs[k] < 0) return false;
    return true;
}

void tj_plan_common_add(tj_plan_common *cs, tj_plan *p, int i)
{
    const tj_pnode *n = &p->nodes[i];
    if (!cs->slots || !tj_plan_op_is_pure(n->op) || n->op == TJ_OPS(_to_copy) || n->op == TJ_OPS(clone)) return;
    bool elementwise = tj_plan_is_elementwise(n->op);
    size_t s = tj_call_hash(n->op, n->args, n->nargs) & (cs->cap - 1);
    while (cs->slots[s] >= 0 && !same_call(&p->nodes[cs->slots[s]], n)) s = (s + 1) & (cs->cap - 1);
    if (cs->slots[s] < 0 || (elementwise && i - cs->slots[s] > COMMON_ELEMENTWISE_NEAR)) {
        cs->slots[s] = i; /* the one later calls merge into */
        return;
    }
    const tj_pnode *first = &p->nodes[cs->slots[s]];
    for (int k = 0; k < n->nout; k++)
        if (n->outs[k] >= 0) cs->canon[n->outs[k]] = first->outs[k];
    p->nodes[i].merged = true;
    p->stats.n_common++;
}

void tj_plan_common_end(tj_plan_common *cs)
{
    if (cs->slots) tj_free(cs->slots, cs->bytes);
    memset(cs, 0, sizeof *cs);
}
