/* The joint graph's split into forward and backward graphs (partition.h). */
#include <string.h>

#include "partition.h"

/* What the split decided, per value and node of the joint graph. */
typedef struct split {
    const tj_graph *joint;
    int n_primals;
    int n_forward;       /* the joint's first outputs: the forward's */
    const int *writeback; /* the joint's output node's (NULL: none written back) */
    bool *tangent_read; /* per value: computed from a tangent */
    bool *fwd_use;      /* per value: read by a forward call or output */
    bool *bwd_use;      /* per value: read by a backward call or output */
    bool *backward;     /* per node: the call runs in the backward graph */
    bool *forward;      /* per node: the call runs in the forward graph (a view may run in both) */
    tj_fake_values fakes;
} split;

static void mark_args(split *s, const tj_gnode *n, bool backward)
{
    for (int a = 0; a < n->nargs; a++)
        for (int k = 0; k < tj_garg_n_values(&n->args[a]); k++) {
            int v = tj_garg_value_at(&n->args[a], k);
            if (v >= 0) (backward ? s->bwd_use : s->fwd_use)[v] = true;
        }
}

static bool reads_tangent(const split *s, const tj_gnode *n)
{
    for (int a = 0; a < n->nargs; a++)
        for (int k = 0; k < tj_garg_n_values(&n->args[a]); k++) {
            int v = tj_garg_value_at(&n->args[a], k);
            if (v >= 0 && s->tangent_read[v]) return true;
        }
    return false;
}

static bool reads_no_tensor(const tj_gnode *n)
{
    for (int a = 0; a < n->nargs; a++)
        if (tj_garg_n_values(&n->args[a]) > 0) return false;
    return true;
}

/* A view, or a tensor made from nothing (full, zeros, arange; not a random
 * one), that the backward side reads runs there too rather than being
 * saved: a view's base is saved or an input anyway, and a plan computes a
 * view for nothing (a transposed weight saved would be copied out as a
 * plan's output); a constant tensor takes no arena either. */
static bool recomputed_backward(const split *s, const tj_gnode *n)
{
    if (!tj_op_is_view(n->op) && (n->op->is_random || !reads_no_tensor(n))) return false;
    for (int k = 0; k < n->nout; k++)
        if (n->outs[k] >= 0 && s->bwd_use[n->outs[k]]) return true;
    return false;
}

static bool read_forward(const split *s, const tj_gnode *n)
{
    for (int k = 0; k < n->nout; k++)
        if (n->outs[k] >= 0 && s->fwd_use[n->outs[k]]) return true;
    return false;
}

/* Whether joint output k is the forward graph's: one of the first
 * n_forward, or a new value of an input (written back by the forward). */
static bool forward_output(const split *s, int k)
{
    return k < s->n_forward || (s->writeback && s->writeback[k] >= 0);
}

static void classify(split *s)
{
    const tj_graph *g = s->joint;
    for (int i = 0; i < g->n_nodes; i++) {
        const tj_gnode *n = &g->nodes[i];
        if (n->dead) continue;
        if (n->kind == TJ_NODE_PLACEHOLDER) s->tangent_read[n->outs[0]] = n->input_index >= s->n_primals;
        else if (n->kind == TJ_NODE_CALL && (s->backward[i] = reads_tangent(s, n)))
            for (int k = 0; k < n->nout; k++)
                if (n->outs[k] >= 0) s->tangent_read[n->outs[k]] = true;
    }
    /* uses, from the last node back: a node's readers are decided first */
    const tj_gnode *out = &g->nodes[g->output_node];
    for (int k = 0; k < out->nargs; k++) (forward_output(s, k) ? s->fwd_use : s->bwd_use)[out->args[k].u.v] = true;
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        const tj_gnode *n = &g->nodes[i];
        if (n->dead || n->kind != TJ_NODE_CALL) continue;
        if (!s->backward[i]) {
            bool again = recomputed_backward(s, n);
            s->forward[i] = !again || read_forward(s, n);
            s->backward[i] = again;
        }
        if (s->forward[i]) mark_args(s, n, false);
        if (s->backward[i]) mark_args(s, n, true);
    }
}

/* A value of the joint computed by a call of the forward graph alone that
 * the backward side reads: saved. */
static bool saved(const split *s, int v)
{
    const tj_gvalue *gv = &s->joint->values[v];
    const tj_gnode *n = &s->joint->nodes[gv->node];
    return n->kind == TJ_NODE_CALL && !s->backward[gv->node] && s->bwd_use[v];
}

/* Adds a placeholder for joint value v to g, with v's geometry (or
 * contiguous), name and binding; map[v] its value. */
static tj_status add_input(split *s, tj_graph *g, int v, bool contiguous, int *map)
{
    const tj_gvalue *gv = &s->joint->values[v];
    /* a new fake is the scope's (tj_graph_partition's) */
    tj_tensor *like = contiguous ? tj_tensor_fake(gv->dtype, gv->ndim, gv->shape)
                                 : tj_fake_value(&s->fakes, s->joint, v, "tj_graph_partition");
    if (!like) return tj_last_status();
    int node = tj_graph_add_placeholder(g, like, gv->name); /* like: the scope's */
    if (node < 0) return tj_last_status();
    map[v] = g->nodes[node].outs[0];
    return contiguous ? TJ_OK : tj_graph_bind_geometry(g, map[v], gv->geometry_bound);
}

/* Copies node i of the joint (a constant or a call) into g, its arguments
 * read through map, and maps its values. */
static tj_status add_node(split *s, tj_graph *g, int i, int *map)
{
    const tj_gnode *n = &s->joint->nodes[i];
    tj_tensor *like[TJ_MAX_RETURNS] = {0};
    for (int k = 0; k < n->nout; k++)
        if (n->outs[k] >= 0 && !(like[k] = tj_fake_value(&s->fakes, s->joint, n->outs[k], "tj_graph_partition")))
            return tj_last_status();
    const char *name = n->nout > 0 && n->outs[0] >= 0 ? s->joint->values[n->outs[0]].name : NULL;
    int node = n->kind == TJ_NODE_CONSTANT ? tj_graph_add_constant(g, n->constant, name)
                                           : tj_graph_add_call(g, n->op, n->args, n->nargs, like, name);
    if (node < 0) return tj_last_status();
    tj_gnode *copy = &g->nodes[node];
    tj_garg_remap_values(copy->args, copy->nargs, map);
    for (int k = 0; k < n->nout; k++)
        if (n->outs[k] >= 0) map[n->outs[k]] = copy->outs[k];
    return TJ_OK;
}

/* g's outputs: the joint's outputs of the forward (or backward) side, in
 * order, then the joint values extra[0, n_extra), read through map; in the
 * forward graph, new values of inputs are written back as in the joint. */
static tj_status add_outputs(split *s, tj_graph *g, bool backward, const int *extra, int n_extra, const int *map)
{
    const tj_gnode *out = &s->joint->nodes[s->joint->output_node];
    size_t bytes = sizeof(int) * (size_t)(out->nargs + n_extra + 1);
    int *vals = tj_alloc(bytes);
    int *writeback = !backward && s->writeback ? tj_graph_alloc(g, bytes) : NULL;
    if (!vals || (!backward && s->writeback && !writeback)) {
        if (vals) tj_free(vals, bytes);
        return tj_oom("tj_graph_partition", bytes);
    }
    int total = 0;
    for (int k = 0; k < out->nargs; k++)
        if (forward_output(s, k) != backward) {
            if (writeback) writeback[total] = s->writeback[k];
            vals[total++] = map[out->args[k].u.v];
        }
    for (int k = 0; k < n_extra; k++) {
        if (writeback) writeback[total] = -1;
        vals[total++] = map[extra[k]];
    }
    int node = tj_graph_add_output(g, vals, total);
    tj_free(vals, bytes);
    if (node < 0) return tj_last_status();
    g->nodes[node].writeback = writeback;
    return TJ_OK;
}

/* Whether node i of the joint belongs to the forward (or backward) graph. */
static bool on_side(const split *s, int i, bool backward)
{
    const tj_gnode *n = &s->joint->nodes[i];
    if (n->dead) return false;
    if (n->kind == TJ_NODE_CALL) return backward ? s->backward[i] : s->forward[i];
    return n->kind == TJ_NODE_CONSTANT && (backward ? s->bwd_use : s->fwd_use)[n->outs[0]];
}

static tj_status build_forward(split *s, const int *saved_values, int n_saved, tj_partition *p, int *map)
{
    const tj_graph *j = s->joint;
    tj_status st = (p->forward = tj_graph_new()) ? TJ_OK : tj_last_status();
    for (int i = 0; st == TJ_OK && i < j->n_nodes; i++) {
        const tj_gnode *n = &j->nodes[i];
        if (n->kind == TJ_NODE_PLACEHOLDER && !n->dead && n->input_index < s->n_primals)
            st = add_input(s, p->forward, n->outs[0], false, map);
        else if (on_side(s, i, false)) st = add_node(s, p->forward, i, map);
    }
    return st == TJ_OK ? add_outputs(s, p->forward, false, saved_values, n_saved, map) : st;
}

static tj_status build_backward(split *s, const int *saved_values, int n_saved, tj_partition *p, int *map)
{
    const tj_graph *j = s->joint;
    tj_status st = (p->backward = tj_graph_new()) ? TJ_OK : tj_last_status();
    /* inputs: the primals read, the saved values, the tangents */
    for (int i = 0; st == TJ_OK && i < j->n_nodes; i++) {
        const tj_gnode *n = &j->nodes[i];
        if (n->kind != TJ_NODE_PLACEHOLDER || n->dead || n->input_index >= s->n_primals || !s->bwd_use[n->outs[0]])
            continue;
        p->primal_of[p->n_primals_read++] = n->input_index;
        st = add_input(s, p->backward, n->outs[0], false, map);
    }
    for (int k = 0; st == TJ_OK && k < n_saved; k++) st = add_input(s, p->backward, saved_values[k], true, map);
    for (int i = 0; st == TJ_OK && i < j->n_nodes; i++) {
        const tj_gnode *n = &j->nodes[i];
        if (n->kind == TJ_NODE_PLACEHOLDER && !n->dead && n->input_index >= s->n_primals)
            st = add_input(s, p->backward, n->outs[0], false, map);
    }
    for (int i = 0; st == TJ_OK && i < j->n_nodes; i++)
        if (on_side(s, i, true)) st = add_node(s, p->backward, i, map);
    return st == TJ_OK ? add_outputs(s, p->backward, true, NULL, 0, map) : st;
}

void tj_partition_free(tj_partition *p)
{
    tj_graph_free(p->forward);
    tj_graph_free(p->backward);
    if (p->primal_of) tj_free(p->primal_of, sizeof(int) * (size_t)p->n_primals_alloc);
    *p = (tj_partition){0};
}

tj_status tj_graph_partition(const tj_graph *joint, int n_primals, int n_forward, tj_partition *out)
{
    *out = (tj_partition){0};
    size_t nv = (size_t)(joint->n_values ? joint->n_values : 1), nn = (size_t)(joint->n_nodes ? joint->n_nodes : 1);
    size_t flag_bytes = 3 * nv + 2 * nn, int_bytes = sizeof(int) * 2 * nv;
    bool *flags = tj_alloc(flag_bytes);
    int *ints = tj_alloc(int_bytes);
    tj_scope *scope = flags && ints ? tj_scope_begin() : NULL;
    tj_status st = scope ? TJ_OK : flags && ints ? tj_last_status() : tj_oom("tj_graph_partition", flag_bytes + int_bytes);
    if (st == TJ_OK) {
        memset(flags, 0, flag_bytes);
        split s = {.joint = joint, .n_primals = n_primals, .n_forward = n_forward,
                   .writeback = joint->nodes[joint->output_node].writeback, .tangent_read = flags, .fwd_use = flags + nv,
                   .bwd_use = flags + 2 * nv, .backward = flags + 3 * nv,
                   .forward = flags + 3 * nv + nn};
        int *saved_values = ints, *map = ints + nv;
        out->primal_of = tj_alloc(sizeof(int) * (size_t)(n_primals ? n_primals : 1));
        out->n_primals_alloc = n_primals ? n_primals : 1;
        if (!out->primal_of) st = tj_oom("tj_graph_partition", sizeof(int) * (size_t)n_primals);
        if (st == TJ_OK) {
            classify(&s);
            for (int v = 0; v < joint->n_values; v++)
                if (saved(&s, v)) saved_values[out->n_saved++] = v;
            for (size_t v = 0; v < nv; v++) map[v] = -1;
            st = build_forward(&s, saved_values, out->n_saved, out, map);
            for (size_t v = 0; v < nv; v++) map[v] = -1;
            if (st == TJ_OK) st = build_backward(&s, saved_values, out->n_saved, out, map);
            if (st == TJ_OK && (tj_pass_dead_code(out->forward) < 0 || tj_pass_dead_code(out->backward) < 0))
                st = tj_last_status();
        }
        tj_fake_values_free(&s.fakes);
    }
    if (scope) tj_scope_end(scope);
    if (flags) tj_free(flags, flag_bytes);
    if (ints) tj_free(ints, int_bytes);
    if (st != TJ_OK) tj_partition_free(out);
    return st;
}
