/* Graph-level decomposition (tj_graph_decompose): the graph's calls replayed
 * under make_fx in fake mode with a decomposition table, so that each call
 * the table names is recorded as its decomposition. Unlike tj_graph_run, the
 * replay leaves write-back outputs as outputs (the new graph carries the same
 * write-back marks), and keeps the placeholder names. */
#include <string.h>

#include "graph_internal.h"
#include "tjit/decomp.h"

typedef struct replay {
    const tj_graph *g;
    tj_tensor **env; /* value id -> tensor, owned by make_fx's scope */
    bool widen;      /* record the pieces of the calls that widen (tj_graph_lower) */
} replay;

/* The traced function: the nodes of g in order, through the dispatcher. */
static tj_status replay_nodes(void *ctx, tj_tensor *const *inputs, int n_inputs, tj_tensor **outputs, int *n_outputs)
{
    replay *r = ctx;
    const tj_graph *g = r->g;
    (void)n_inputs;
    for (int i = 0; i < g->n_nodes; i++) {
        const tj_gnode *n = &g->nodes[i];
        if (n->dead) continue;
        switch (n->kind) {
        case TJ_NODE_PLACEHOLDER: r->env[n->outs[0]] = inputs[n->input_index]; break;
        case TJ_NODE_CONSTANT: r->env[n->outs[0]] = n->constant; break;
        case TJ_NODE_CALL: {
            tj_value args[TJ_MAX_ARGS], outs[TJ_MAX_RETURNS];
            int nl = 0;
            for (int k = 0; k < n->nargs; k++) nl += n->args[k].kind == TJ_GA_VALUES ? n->args[k].n : 0;
            tj_tensor *lists[TJ_MAX_ARGS * 64];
            if (nl > TJ_MAX_ARGS * 64)
                return tj_error(TJ_ERR_UNSUPPORTED, "tj_graph_decompose: %s with %d listed tensors", n->op->name, nl);
            tj_garg_box(n->args, n->nargs, r->env, args, lists);
            tj_status st = r->widen && tj_graph_node_widens(g, n) ? tj_widen_call(n->op, args, outs, tj_dispatch)
                                                                  : tj_dispatch(n->op, args, n->nargs, outs);
            if (st != TJ_OK) return st;
            for (int k = 0; k < n->nout; k++)
                if (n->outs[k] >= 0) r->env[n->outs[k]] = outs[k].kind == TJ_V_TENSOR ? outs[k].u.t : NULL;
            break;
        }
        case TJ_NODE_OUTPUT:
            for (int k = 0; k < n->nargs; k++) outputs[k] = r->env[n->args[k].u.v];
            *n_outputs = n->nargs;
            break;
        }
    }
    return TJ_OK;
}

/* Fake inputs with the placeholders' dtypes, shapes and strides, and the
 * placeholders' names. */
static tj_status fake_inputs(const tj_graph *g, tj_tensor **inputs, const char **names)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const tj_gnode *n = &g->nodes[i];
        if (n->kind != TJ_NODE_PLACEHOLDER) continue;
        const tj_gvalue *v = &g->values[n->outs[0]];
        tj_tensor *t = tj_tensor_fake(v->dtype, v->ndim, v->shape);
        if (!t) return tj_last_status();
        memcpy(t->strides, v->strides, sizeof t->strides);
        t->offset = v->offset; /* the placeholder's geometry, which a bind (copy_interface) holds it to */
        inputs[n->input_index] = t;
        names[n->input_index] = v->name;
    }
    return TJ_OK;
}

/* Geometry binds and write-back marks of `from` onto `to` (the names came
 * with tj_make_fx_named): the replay runs no gradient formula, so the binds
 * a traced one set (make_fx.c, read_tensor) must be carried over. */
static tj_status copy_interface(const tj_graph *from, tj_graph *to)
{
    for (int i = 0; i < from->n_nodes; i++) {
        const tj_gnode *n = &from->nodes[i];
        if (n->kind != TJ_NODE_PLACEHOLDER) continue;
        for (int k = 0; k < to->n_nodes; k++) {
            if (to->nodes[k].kind != TJ_NODE_PLACEHOLDER || to->nodes[k].input_index != n->input_index) continue;
            tj_status st = tj_graph_bind_geometry(to, to->nodes[k].outs[0], from->values[n->outs[0]].geometry_bound);
            if (st != TJ_OK) return st;
        }
    }
    if (from->output_node < 0 || !from->nodes[from->output_node].writeback) return TJ_OK;
    const tj_gnode *fo = &from->nodes[from->output_node];
    tj_gnode *o = &to->nodes[to->output_node];
    o->writeback = tj_graph_alloc(to, sizeof(int) * (size_t)fo->nargs);
    if (!o->writeback) return tj_oom("tj_graph_decompose", sizeof(int) * (size_t)fo->nargs);
    memcpy(o->writeback, fo->writeback, sizeof(int) * (size_t)fo->nargs);
    return TJ_OK;
}

static tj_graph *replay_graph(const tj_graph *g, const tj_decomp_table *table, bool widen)
{
    if (!g || g->output_node < 0) {
        if (!g) tj_error_null("tj_graph_decompose: NULL graph");
        else tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_graph_decompose: a graph without outputs");
        return NULL;
    }
    tj_graph *out = NULL;
    tj_scope *scope = tj_scope_begin();
    size_t in_bytes = sizeof(tj_tensor *) * (size_t)(g->n_inputs ? g->n_inputs : 1);
    size_t names_bytes = sizeof(const char *) * (size_t)(g->n_inputs ? g->n_inputs : 1);
    size_t env_bytes = sizeof(tj_tensor *) * (size_t)(g->n_values ? g->n_values : 1);
    tj_tensor **inputs = tj_alloc(in_bytes), **env = tj_alloc(env_bytes);
    const char **names = tj_alloc(names_bytes);
    if (!scope || !inputs || !env || !names) {
        if (scope) tj_oom("tj_graph_decompose", env_bytes);
        goto done;
    }
    memset(env, 0, env_bytes);
    if (fake_inputs(g, inputs, names) != TJ_OK) goto done;
    replay r = {g, env, widen};
    out = tj_make_fx_named(replay_nodes, &r, inputs, g->n_inputs, table, TJ_TRACE_FAKE, names);
    if (out && copy_interface(g, out) != TJ_OK) {
        tj_graph_free(out);
        out = NULL;
    }
done:
    tj_free(inputs, in_bytes);
    tj_free((void *)names, names_bytes);
    tj_free(env, env_bytes);
    if (scope) tj_scope_end(scope);
    return out;
}

tj_graph *tj_graph_decompose(const tj_graph *g, const tj_decomp_table *table) { return replay_graph(g, table, false); }

tj_graph *tj_graph_lower(const tj_graph *g) { return replay_graph(g, NULL, true); }
