/* Dead-code elimination at compile time: call nodes none of whose results
 * reach a graph output, directly, through views or through other live
 * nodes, leave the plan before folding, fusion and memory planning see it,
 * as Inductor drops the dead nodes of the graphs make_fx records. Tracing
 * records every call the model makes: max_pool2d's indices in a forward
 * pass, or, in a decomposed graph, the whole chain that computes them.
 *
 * Only calls of operators whose results are a function of their arguments
 * alone go (tj_plan_op_is_pure): in-place and user operators write into
 * storage, and random ones advance the generator, whose later draws the
 * other nodes (and eager mode) see. */
#include <string.h>

#include "plan_internal.h"

/* Marks every value node n reads as needed. */
static void need_args(const tj_pnode *n, bool *needed)
{
    for (int a = 0; a < n->nargs; a++)
        for (int k = 0; k < tj_garg_n_values(&n->args[a]); k++)
            if (tj_garg_value_at(&n->args[a], k) >= 0) needed[tj_garg_value_at(&n->args[a], k)] = true;
}

/* Node n leaves the plan: its values are no longer defined. */
static void drop_node(tj_plan *p, const tj_pnode *n)
{
    for (int k = 0; k < n->nout; k++) {
        int v = n->outs[k];
        if (v < 0) continue;
        tj_pvalue *pv = &p->values[v];
        if (pv->kind == TJ_PV_VIEW) p->values[pv->root].n_views--;
        pv->kind = TJ_PV_UNUSED;
        pv->node = -1;
    }
    if (!n->is_step) p->stats.n_views--;
    if (!n->merged) p->stats.n_dead++; /* counted in n_common */
}

tj_status tj_plan_prune_dead(tj_plan *p)
{
    size_t bytes = (size_t)p->n_values + 1 + sizeof(int) * ((size_t)p->n_nodes + 1);
    char *mem = tj_alloc(bytes);
    if (!mem) return tj_oom("tj_compile", bytes);
    memset(mem, 0, bytes);
    int *new_index = (int *)(void *)mem;
    bool *needed = (bool *)(new_index + p->n_nodes + 1);
    for (int k = 0; k < p->n_outputs; k++) needed[p->output_values[k]] = true;
    for (int i = p->n_nodes - 1; i >= 0; i--) { /* readers come after what they read */
        const tj_pnode *n = &p->nodes[i];
        bool live = !tj_plan_op_is_pure(n->op);
        for (int k = 0; k < n->nout && !live; k++) live = n->outs[k] >= 0 && needed[n->outs[k]];
        new_index[i] = live ? 0 : -1;
        if (live) need_args(n, needed);
        else drop_node(p, n);
    }
    int kept = 0;
    for (int i = 0; i < p->n_nodes; i++) {
        if (new_index[i] < 0) continue;
        new_index[i] = kept;
        if (kept != i) p->nodes[kept] = p->nodes[i];
        kept++;
    }
    for (int v = 0; v < p->n_values; v++)
        if (p->values[v].node >= 0) p->values[v].node = new_index[p->values[v].node];
    p->n_nodes = kept;
    tj_plan_renumber_steps(p);
    tj_free(mem, bytes);
    return TJ_OK;
}
