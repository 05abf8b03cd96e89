/* The interpreter: runs a graph node by node through the dispatcher, so that
 * under a trace mode the graph is traced again (graph-level decomposition).
 * Each intermediate is released right after its last use. */
#include <string.h>

#include "graph_internal.h"
#include "runtime/op_masked.h"

static int list_len(const tj_gnode *n)
{
    int total = 0;
    for (int i = 0; i < n->nargs; i++)
        if (n->args[i].kind == TJ_GA_VALUES) total += n->args[i].n;
    return total;
}

/* Drops one use of every value node n reads; frees values at zero. */
static void release_uses(const tj_gnode *n, tj_tensor **env, int *left)
{
    for (int i = 0; i < n->nargs; i++) {
        const tj_garg *a = &n->args[i];
        if (a->kind == TJ_GA_VALUE) {
            if (--left[a->u.v] == 0) {
                tj_tensor_release(env[a->u.v]);
                env[a->u.v] = NULL;
            }
        } else if (a->kind == TJ_GA_VALUES) {
            for (int k = 0; k < a->n; k++)
                if (a->u.vs[k] >= 0 && --left[a->u.vs[k]] == 0) {
                    tj_tensor_release(env[a->u.vs[k]]);
                    env[a->u.vs[k]] = NULL;
                }
        }
    }
}

static tj_status check_input(const tj_gvalue *v, const tj_tensor *t, int i)
{
    char a[128], b[128];
    if (!t) return tj_error_null("tj_graph_run: input %d (%%%s) is NULL", i, v->name);
    if (t->dtype != v->dtype)
        return tj_error(TJ_ERR_DTYPE, "tj_graph_run: input %d (%%%s) is %s, the graph expects %s", i, v->name,
                        tj_dtype_name(t->dtype), tj_dtype_name(v->dtype));
    bool same = t->ndim == v->ndim;
    for (int d = 0; same && d < t->ndim; d++) same = t->shape[d] == v->shape[d];
    if (!same)
        return tj_error(TJ_ERR_SHAPE, "tj_graph_run: input %d (%%%s) has shape %s, the graph expects %s", i, v->name,
                        tj_shape_str(t->ndim, t->shape, a, sizeof a), tj_shape_str(v->ndim, v->shape, b, sizeof b));
    return TJ_OK;
}

/* An output that is an input written back, or a view of one, stands for
 * the input's value before the write-back (the graph's value, as the
 * plan's copy of it holds: tj_plan_run): cloned here, as the write-back
 * would change it otherwise. */
static tj_status keep_values_written_over(const tj_gnode *n, tj_tensor *const *inputs, tj_tensor **outputs)
{
    for (int k = 0; k < n->nargs; k++) {
        if (n->writeback[k] >= 0) continue;
        bool overwritten = false;
        for (int j = 0; j < n->nargs && !overwritten; j++)
            overwritten = n->writeback[j] >= 0 && outputs[j] != inputs[n->writeback[j]] &&
                          tj_overlap_status(outputs[k], inputs[n->writeback[j]]) != TJ_OVERLAP_NONE;
        if (!overwritten) continue;
        tj_tensor *copy = tj_clone(outputs[k]);
        if (!copy) return tj_last_status();
        tj_scope_drop(outputs[k]);
        outputs[k] = copy;
    }
    return TJ_OK;
}

/* Copies outputs marked "written back" into their inputs (recording off:
 * this stands for the graph's own mutations), which then stand for them. */
static tj_status write_back(const tj_graph *g, tj_tensor *const *inputs, tj_tensor **outputs)
{
    const tj_gnode *n = &g->nodes[g->output_node];
    tj_status st = n->writeback ? keep_values_written_over(n, inputs, outputs) : TJ_OK;
    bool prev = tj_no_grad_begin();
    for (int k = 0; n->writeback && k < n->nargs && st == TJ_OK; k++) {
        if (n->writeback[k] < 0) continue;
        tj_tensor *dst = inputs[n->writeback[k]];
        if (outputs[k] == dst) continue;
        if (!tj_copy_(dst, outputs[k])) st = tj_last_status();
        else {
            tj_scope_drop(outputs[k]);
            outputs[k] = tj_tensor_retain(dst);
            st = tj_scope_adopt(dst);
            if (st != TJ_OK) tj_tensor_release(outputs[k]);
        }
    }
    tj_no_grad_end(prev);
    if (st != TJ_OK)
        for (int k = 0; k < n->nargs; k++) {
            tj_scope_drop(outputs[k]);
            outputs[k] = NULL;
        }
    return st;
}

/* A result whose shape depends on its inputs' values (nonzero,
 * masked_select, x[mask]) must have the graph's recorded shape: the nodes
 * after it were recorded for that count (a size taken from it, a view
 * into it), and would compute with it silently. */
static tj_status check_recorded_shape(const tj_graph *g, const tj_gnode *n, const tj_value *outs)
{
    for (int k = 0; k < n->nout; k++) {
        if (n->outs[k] < 0 || outs[k].kind != TJ_V_TENSOR) continue;
        const tj_gvalue *v = &g->values[n->outs[k]];
        const tj_tensor *t = outs[k].u.t;
        if (t->ndim == v->ndim && memcmp(t->shape, v->shape, sizeof(int64_t) * (size_t)t->ndim) == 0) continue;
        char a[128], b[128];
        return tj_error(TJ_ERR_SHAPE, "tj_graph_run: node %%%s (%s): its result has shape %s here, the graph records "
                        "%s: the shape depends on the input's values, and the graph was recorded for those of its "
                        "trace", v->name, n->op->name, tj_shape_str(t->ndim, t->shape, a, sizeof a),
                        tj_shape_str(v->ndim, v->shape, b, sizeof b));
    }
    return TJ_OK;
}

/* The name of input i's placeholder value. */
static const char *graph_input_name(const void *graph, int i)
{
    const tj_graph *g = graph;
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k].kind == TJ_NODE_PLACEHOLDER && g->nodes[k].input_index == i) return g->values[g->nodes[k].outs[0]].name;
    return "?";
}

tj_status tj_graph_run(const tj_graph *g, tj_tensor *const *inputs, int n_inputs, tj_tensor **outputs)
{
    if (!g) return tj_error_null("tj_graph_run: NULL graph");
    if ((n_inputs && !inputs) || (tj_graph_num_outputs(g) && !outputs))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_graph_run: NULL inputs or outputs");
    if (n_inputs != g->n_inputs)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_graph_run: the graph takes %d input%s, got %d", g->n_inputs,
                        g->n_inputs == 1 ? "" : "s", n_inputs);
    if (g->output_node >= 0) {
        const tj_gnode *out = &g->nodes[g->output_node];
        tj_status st = tj_check_writeback_aliases(inputs, n_inputs, out->writeback, out->nargs, "tj_graph_run",
                                                  graph_input_name, g);
        if (st != TJ_OK) return st;
    }
    size_t env_bytes = sizeof(tj_tensor *) * (size_t)g->n_values, left_bytes = sizeof(int) * (size_t)g->n_values;
    tj_tensor **env = tj_alloc(env_bytes ? env_bytes : 1);
    int *left = tj_alloc(left_bytes ? left_bytes : 1);
    if (!env || !left) {
        tj_free(env, env_bytes);
        tj_free(left, left_bytes);
        return tj_oom("tj_graph_run", env_bytes + left_bytes);
    }
    memset(env, 0, env_bytes);
    for (int v = 0; v < g->n_values; v++) left[v] = g->values[v].uses;
    tj_status st = TJ_OK;
    /* the run's own references: outputs are retained separately at the end */
    for (int i = 0; i < g->n_nodes && st == TJ_OK; i++) {
        const tj_gnode *n = &g->nodes[i];
        switch (n->kind) {
        case TJ_NODE_PLACEHOLDER:
            st = check_input(&g->values[n->outs[0]], inputs[n->input_index], n->input_index);
            if (st == TJ_OK) {
                const tj_gvalue *v = &g->values[n->outs[0]];
                st = tj_graph_check_input_geometry("tj_graph_run", n->input_index, v->name, v->strides, v->offset,
                                                   v->geometry_bound, inputs[n->input_index]);
                /* what the run records holds for this geometry only too (an enclosing make_fx) */
                if (st == TJ_OK && v->geometry_bound) tj_note_geometry_read(inputs[n->input_index], v->geometry_bound);
            }
            if (st == TJ_OK) env[n->outs[0]] = tj_tensor_retain(inputs[n->input_index]);
            break;
        case TJ_NODE_CONSTANT: env[n->outs[0]] = tj_tensor_retain(n->constant); break;
        case TJ_NODE_CALL: {
            tj_value args[TJ_MAX_ARGS], outs[TJ_MAX_RETURNS];
            int nl = list_len(n);
            tj_tensor *stack_lists[64];
            tj_tensor **lists = nl <= 64 ? stack_lists : tj_alloc(sizeof(tj_tensor *) * (size_t)nl);
            if (!lists) {
                st = tj_oom("tj_graph_run", sizeof(tj_tensor *) * (size_t)nl);
                break;
            }
            tj_garg_box(n->args, n->nargs, env, args, lists);
            tj_scope *s = tj_scope_begin();
            st = s ? tj_dispatch(n->op, args, n->nargs, outs) : tj_last_status();
            if (st == TJ_OK && tj_op_shape_reads_values(n->op)) st = check_recorded_shape(g, n, outs);
            if (st == TJ_OK)
                for (int k = 0; k < n->nout; k++)
                    if (n->outs[k] >= 0 && outs[k].kind == TJ_V_TENSOR) env[n->outs[k]] = tj_tensor_retain(outs[k].u.t);
            if (s) tj_scope_end(s);
            if (lists != stack_lists) tj_free(lists, sizeof(tj_tensor *) * (size_t)nl);
            if (st == TJ_OK) {
                for (int k = 0; k < n->nout; k++)
                    if (n->outs[k] >= 0 && left[n->outs[k]] == 0) { /* an unused result */
                        tj_tensor_release(env[n->outs[k]]);
                        env[n->outs[k]] = NULL;
                    }
                release_uses(n, env, left);
            }
            break;
        }
        case TJ_NODE_OUTPUT:
            for (int k = 0; k < n->nargs; k++) {
                outputs[k] = tj_tensor_retain(env[n->args[k].u.v]);
                tj_scope_adopt(outputs[k]);
            }
            release_uses(n, env, left);
            break;
        }
    }
    if (st == TJ_OK) st = write_back(g, inputs, outputs);
    for (int v = 0; v < g->n_values; v++) tj_tensor_release(env[v]);
    tj_free(env, env_bytes);
    tj_free(left, left_bytes);
    return st;
}
