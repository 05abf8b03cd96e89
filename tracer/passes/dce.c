/* Dead-code elimination: drops call and constant nodes none of whose values
 * are used, walking backwards so that whole dead chains go in one pass.
 * In-place operators are kept: they change their inputs. */
#include "tracer/graph_internal.h"

static void drop_uses(tj_graph *g, const tj_gnode *n)
{
    for (int a = 0; a < n->nargs; a++) {
        if (n->args[a].kind == TJ_GA_VALUE) g->values[n->args[a].u.v].uses--;
        else if (n->args[a].kind == TJ_GA_VALUES)
            for (int k = 0; k < n->args[a].n; k++)
                if (n->args[a].u.vs[k] >= 0) g->values[n->args[a].u.vs[k]].uses--;
    }
}

int tj_pass_dead_code(tj_graph *g)
{
    if (!g) {
        tj_error_null("tj_pass_dead_code: NULL graph");
        return -1;
    }
    tj_graph_count_uses(g);
    int removed = 0;
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        tj_gnode *n = &g->nodes[i];
        if ((n->kind != TJ_NODE_CALL && n->kind != TJ_NODE_CONSTANT) || (n->op && n->op->mutated_args)) continue;
        bool used = false;
        for (int k = 0; k < n->nout; k++)
            if (n->outs[k] >= 0 && g->values[n->outs[k]].uses > 0) used = true;
        if (used) continue;
        n->dead = true;
        drop_uses(g, n);
        removed++;
    }
    if (removed) tj_graph_compact(g);
    return removed;
}
