/* tj_compile: turns a graph into a plan. Each call node's shape function
 * runs once here, on prototype tensors carrying the compiled geometry, to
 * learn which results are new tensors, strided views (resolved now, no node
 * at run time) or the in-place operator's argument itself; calls identical
 * to an earlier one are merged into it on the way (common.c); kernels are
 * bound, dead nodes dropped (prune.c), nodes reading no input folded into
 * constants (fold.c), multiplications and divisions by one turned into
 * aliases (simplify.c), attention, products into the scatter_add after
 * them, copies into products, the zero padding left over into one
 * pass, elementwise epilogues and chains of elementwise calls fused
 * (fuse_attention.c, fuse_scatter.c, fuse_gather.c, fuse_pad.c, fuse.c,
 * fuse_pointwise.c), and the memory
 * planner places every intermediate. */
#include <stdio.h>
#include <string.h>

#include "plan_internal.h"
#include "runtime/op_view.h"

/* Compile-time state: a prototype tensor per value (no storage). */
typedef struct compiler {
    const tj_graph *g;
    tj_plan *p;
    tj_tensor *protos; /* geometry of each value as compiled */
    tj_tensor **pv;    /* the prototype each value reads as */
    /* in-place views (t_, unsqueeze_, ...) give a tensor object a new
     * geometry: a later read of any value naming that object (self, or an
     * earlier in-place result) reads the latest of them, as the graph run
     * eagerly does */
    int *object;   /* per value: the first value naming its tensor object */
    int *reads;    /* per value: the value a call reading it reads */
    bool *reshaped; /* per object: an in-place view changed its geometry */
    tj_plan_common common;
} compiler;

static void *pool_copy(tj_pool *pool, const void *src, size_t n)
{
    void *d = tj_pool_alloc(pool, n ? n : 1);
    if (d && n) memcpy(d, src, n);
    return d;
}

/* Deep-copies a node's arguments into the plan. */
static tj_status copy_args(tj_plan *p, tj_pnode *pn, const tj_gnode *gn)
{
    pn->nargs = gn->nargs;
    pn->args = tj_pool_alloc(p->pool, sizeof(tj_garg) * (size_t)(gn->nargs ? gn->nargs : 1));
    if (!pn->args) return TJ_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < gn->nargs; i++) {
        const tj_garg *s = &gn->args[i];
        tj_garg *d = &pn->args[i];
        *d = *s;
        void *copy = d;
        switch (s->kind) {
        case TJ_GA_VALUES:
            copy = d->u.vs = pool_copy(p->pool, s->u.vs, sizeof(int) * (size_t)s->n);
            pn->nlist += s->n;
            break;
        case TJ_GA_INTS: copy = d->u.ints = pool_copy(p->pool, s->u.ints, sizeof(int64_t) * (size_t)s->n); break;
        case TJ_GA_BOOLS: copy = d->u.bools = pool_copy(p->pool, s->u.bools, sizeof(bool) * (size_t)s->n); break;
        case TJ_GA_FLOATS: copy = d->u.floats = pool_copy(p->pool, s->u.floats, sizeof(double) * (size_t)s->n); break;
        case TJ_GA_STR: copy = d->u.s = pool_copy(p->pool, s->u.s, strlen(s->u.s) + 1); break;
        default: break;
        }
        if (!copy) return TJ_ERR_OUT_OF_MEMORY;
    }
    pn->nout = gn->nout;
    pn->outs = pool_copy(p->pool, gn->outs, sizeof(int) * (size_t)gn->nout);
    return pn->outs ? TJ_OK : TJ_ERR_OUT_OF_MEMORY;
}

static char *pool_strdup(tj_pool *pool, const char *s)
{
    return pool_copy(pool, s, strlen(s) + 1);
}

/* Copies a graph value's type and name into a plan value and its prototype. */
static tj_status set_type(tj_plan *p, tj_pvalue *v, tj_tensor *proto, const tj_gvalue *gv)
{
    v->dtype = gv->dtype;
    v->ndim = gv->ndim;
    memcpy(v->shape, gv->shape, sizeof v->shape);
    v->numel = 1;
    for (int d = 0; d < gv->ndim; d++) v->numel *= gv->shape[d];
    proto->dtype = v->dtype;
    proto->ndim = v->ndim;
    proto->numel = v->numel;
    proto->fake = true;
    memcpy(proto->shape, v->shape, sizeof v->shape);
    v->name = pool_strdup(p->pool, gv->name ? gv->name : "");
    return v->name ? TJ_OK : TJ_ERR_OUT_OF_MEMORY;
}

static void set_geometry(tj_pvalue *v, tj_tensor *proto, const int64_t *strides, int64_t offset)
{
    memcpy(v->strides, strides, sizeof(int64_t) * (size_t)v->ndim);
    v->offset = offset;
    memcpy(proto->strides, strides, sizeof(int64_t) * (size_t)v->ndim);
    proto->offset = offset;
}

static tj_status check_result(const tj_pnode *pn, const tj_meta *m, const tj_pvalue *v)
{
    bool same = m->dtype == v->dtype && m->ndim == v->ndim;
    for (int d = 0; same && d < m->ndim; d++) same = m->shape[d] == v->shape[d];
    if (same) return TJ_OK;
    char a[128], b[128];
    return tj_error(TJ_ERR_SHAPE, "tj_compile: node %%%s (%s): the shape function gives %s%s, the graph records %s%s",
                    pn->name, pn->op->name, tj_dtype_name(m->dtype), tj_shape_str(m->ndim, m->shape, a, sizeof a),
                    tj_dtype_name(v->dtype), tj_shape_str(v->ndim, v->shape, b, sizeof b));
}

/* An in-place view (unsqueeze_, ...) compiles to a strided view of its
 * argument; refused on a graph input's own tensor object (or a constant),
 * whose shape the caller would see change when the graph runs eagerly: a
 * plan binds the caller's tensors and leaves their shapes alone. */
static tj_status check_inplace_view(const compiler *c, const tj_pnode *pn)
{
    int v = pn->args[0].kind == TJ_GA_VALUE ? pn->args[0].u.v : -1;
    while (v >= 0) {
        const tj_pvalue *pv = &c->p->values[v];
        if (pv->kind == TJ_PV_INPUT || pv->kind == TJ_PV_CONSTANT)
            return tj_error(TJ_ERR_UNSUPPORTED, "tj_compile: node %%%s: %s changes the shape of graph %s %%%s in "
                            "place, which a plan cannot do to the caller's tensor: clone it first (or run the graph "
                            "with tj_graph_run)", pn->name, pn->op->name,
                            pv->kind == TJ_PV_INPUT ? "input" : "constant", pv->name);
        bool same_object = pv->kind == TJ_PV_SAME ||
                           (pv->kind == TJ_PV_VIEW && pv->node >= 0 && tj_op_is_inplace_view(c->p->nodes[pv->node].op));
        v = same_object ? pv->base : -1;
    }
    return TJ_OK;
}

/* Classifies node pn's results from its shape function. */
static tj_status compile_call(compiler *c, int pi, const tj_gnode *gn)
{
    tj_plan *p = c->p;
    tj_pnode *pn = &p->nodes[pi];
    tj_status st = copy_args(p, pn, gn);
    if (st != TJ_OK) return st;
    tj_garg_remap_values(pn->args, pn->nargs, c->reads);
    tj_plan_common_canonical_args(&c->common, pn);
    pn->op = gn->op;
    pn->name = pool_strdup(p->pool, tj_graph_node_name(c->g, (int)(gn - c->g->nodes)));
    if (!pn->name) return TJ_ERR_OUT_OF_MEMORY;
    if (!pn->op->meta)
        return tj_error(TJ_ERR_UNSUPPORTED, "tj_compile: node %%%s: %s has no %s", pn->name, pn->op->name,
                        pn->op->kernel ? "shape function" : "kernel");
    if (tj_op_is_inplace_view(pn->op) && (st = check_inplace_view(c, pn)) != TJ_OK) return st;
    tj_value args[TJ_MAX_ARGS];
    tj_tensor *lists_stack[64];
    tj_tensor **lists = pn->nlist <= 64 ? lists_stack : tj_alloc(sizeof(tj_tensor *) * (size_t)pn->nlist);
    if (!lists) return tj_oom("tj_compile", sizeof(tj_tensor *) * (size_t)pn->nlist);
    tj_garg_box(pn->args, pn->nargs, c->pv, args, lists);
    tj_meta m[TJ_MAX_RETURNS];
    memset(m, 0, sizeof m);
    for (int i = 0; i < TJ_MAX_RETURNS; i++) m[i].alias = -1;
    if ((st = pn->op->meta(args, m)) != TJ_OK) {
        tj_error_if_unrecorded(st, pn->op->name, "its shape function");
        char msg[512];
        snprintf(msg, sizeof msg, "%s", tj_last_error());
        tj_error(st, "tj_compile: node %%%s: %s", pn->name, msg);
    } else {
        tj_meta_alias_types(pn->op, args, m);
    }
    for (int i = 0; st == TJ_OK && i < pn->nout; i++) {
        int vid = pn->outs[i];
        if (vid < 0 && !m[i].undefined) /* the kernel would write through NULL */
            st = tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_compile: node %%%s (%s): result %d is computed but has no value in the graph",
                          pn->name, pn->op->name, i);
        if (vid < 0) continue;
        tj_pvalue *v = &p->values[vid];
        tj_tensor *proto = &c->protos[vid];
        if ((st = set_type(p, v, proto, &c->g->values[vid])) != TJ_OK) break;
        v->node = pi;
        v->index = i;
        if (m[i].undefined) continue; /* stays UNUSED; a use of it fails below */
        if ((st = check_result(pn, &m[i], v)) != TJ_OK) break;
        if (m[i].alias < 0) {
            int64_t strides[TJ_MAX_DIMS];
            tj_contiguous_strides(v->ndim, v->shape, strides);
            v->kind = TJ_PV_ARENA;
            v->root = vid;
            set_geometry(v, proto, strides, 0);
            c->pv[vid] = proto;
            pn->is_step = true;
            continue;
        }
        if (m[i].alias >= pn->nargs || pn->args[m[i].alias].kind != TJ_GA_VALUE) {
            st = tj_error(TJ_ERR_UNSUPPORTED, "tj_compile: node %%%s (%s): result %d aliases a non-tensor argument",
                          pn->name, pn->op->name, i);
            break;
        }
        const tj_garg *a = &pn->args[m[i].alias];
        v->base = a->u.v;
        v->root = p->values[a->u.v].root;
        if (m[i].same) {
            v->kind = TJ_PV_SAME;
            c->pv[vid] = c->pv[a->u.v];
            pn->is_step = true;
        } else {
            v->kind = TJ_PV_VIEW;
            set_geometry(v, proto, m[i].strides, m[i].offset);
            v->rel_offset = m[i].offset - p->values[v->root].offset;
            v->abs_offset = p->values[a->u.v].abs_offset ||
                            (pn->op->meta == tj_meta_as_strided && pn->nargs > 3 && pn->args[3].kind != TJ_GA_NONE);
            c->pv[vid] = proto;
            p->values[v->root].n_views++;
        }
    }
    pn->kernel = pn->op->kernel;
    if (st == TJ_OK && pn->is_step && !pn->op->kernel)
        st = tj_error(TJ_ERR_UNSUPPORTED, "tj_compile: node %%%s: %s has no kernel", pn->name, pn->op->name);
    if (st == TJ_OK && pn->is_step) {
        tj_tensor *outs[TJ_MAX_RETURNS];
        for (int i = 0; i < pn->nout; i++) outs[i] = pn->outs[i] >= 0 ? c->pv[pn->outs[i]] : NULL;
        tj_plan_node_cost(pn, args, outs);
    }
    if (lists != lists_stack) tj_free(lists, sizeof(tj_tensor *) * (size_t)pn->nlist);
    return st;
}

static tj_status compile_leaf(compiler *c, const tj_gnode *gn)
{
    tj_plan *p = c->p;
    int vid = gn->outs[0];
    tj_pvalue *v = &p->values[vid];
    tj_tensor *proto = &c->protos[vid];
    const tj_gvalue *gv = &c->g->values[vid];
    if (set_type(p, v, proto, gv) != TJ_OK) return TJ_ERR_OUT_OF_MEMORY;
    v->root = vid;
    v->node = -1;
    if (gn->kind == TJ_NODE_PLACEHOLDER) {
        v->kind = TJ_PV_INPUT;
        v->input_index = gn->input_index;
        /* the plan outlives the graph, whose arena may hold the string */
        if (gv->geometry_bound && !(v->geometry_bound = pool_strdup(p->pool, gv->geometry_bound)))
            return TJ_ERR_OUT_OF_MEMORY;
        p->input_values[gn->input_index] = vid;
        set_geometry(v, proto, gv->strides, gv->offset);
        c->pv[vid] = proto;
    } else {
        v->kind = TJ_PV_CONSTANT;
        v->constant = tj_tensor_retain(gn->constant);
        set_geometry(v, proto, gn->constant->strides, gn->constant->offset);
        c->pv[vid] = gn->constant;
        p->stats.n_constants++;
    }
    return TJ_OK;
}

/* Every value a live node reads must be defined; only a Tensor?[] argument
 * of a call's operator `op` may have absent entries (the kernels are bound
 * without the dispatcher's argument checks). */
static tj_status check_uses(const tj_plan *p, const tj_pnode *pn, const tj_op *op, const tj_garg *args, int nargs,
                            const char *who)
{
    for (int i = 0; i < nargs; i++) {
        const tj_garg *a = &args[i];
        bool may_be_absent = a->kind == TJ_GA_VALUES && op && i < op->nargs && op->args[i].elem_optional;
        for (int k = 0; k < tj_garg_n_values(a); k++) {
            int v = tj_garg_value_at(a, k);
            if (v == -1 && may_be_absent) continue;
            if (v < 0 || v >= p->n_values || p->values[v].kind == TJ_PV_UNUSED)
                return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_compile: %s%s reads an undefined value", who,
                                pn ? pn->name : "");
        }
    }
    return TJ_OK;
}

/* An in-place call's result names self's tensor object; after an
 * in-place view, every value naming that object reads the newest one. */
static void follow_inplace_result(compiler *c, const tj_pnode *pn)
{
    if (!pn->op->is_inplace || pn->nout < 1 || pn->outs[0] < 0 || pn->nargs < 1 || pn->args[0].kind != TJ_GA_VALUE)
        return;
    int o = pn->outs[0], obj = c->object[pn->args[0].u.v];
    c->object[o] = obj;
    c->reshaped[obj] |= tj_op_is_inplace_view(pn->op);
    if (!c->reshaped[obj]) return;
    for (int v = 0; v < c->p->n_values; v++)
        if (c->object[v] == obj) c->reads[v] = o;
}

static tj_status compile_nodes(compiler *c)
{
    const tj_graph *g = c->g;
    tj_plan *p = c->p;
    int pi = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const tj_gnode *gn = &g->nodes[i];
        if (gn->dead) continue;
        tj_status st = TJ_OK;
        switch (gn->kind) {
        case TJ_NODE_PLACEHOLDER:
        case TJ_NODE_CONSTANT: st = compile_leaf(c, gn); break;
        case TJ_NODE_CALL:
            if ((st = check_uses(p, NULL, gn->op, gn->args, gn->nargs, "a call node")) != TJ_OK) break;
            st = compile_call(c, pi, gn);
            if (st == TJ_OK) follow_inplace_result(c, &p->nodes[pi]);
            if (st == TJ_OK) tj_plan_common_add(&c->common, p, pi);
            if (st == TJ_OK && p->nodes[pi].is_step) p->nodes[pi].step = p->n_steps++;
            if (st == TJ_OK && !p->nodes[pi].is_step) p->stats.n_views++;
            pi++;
            break;
        case TJ_NODE_OUTPUT:
            if ((st = check_uses(p, NULL, NULL, gn->args, gn->nargs, "the output node")) != TJ_OK) break;
            for (int k = 0; k < gn->nargs; k++) p->output_values[k] = c->reads[gn->args[k].u.v];
            break;
        }
        if (st != TJ_OK) return st;
    }
    return TJ_OK;
}

void tj_plan_renumber_steps(tj_plan *p)
{
    p->n_steps = 0;
    for (int i = 0; i < p->n_nodes; i++)
        if (p->nodes[i].is_step) p->nodes[i].step = p->n_steps++;
}

/* The graph constant whose storage node n writes through an argument its
 * schema marks Tensor(a!) (self of an in-place operator, the running
 * statistics of native_batch_norm, a user operator's declared outputs), or
 * -1. As torch's make_fx records a captured tensor written in place, such a
 * constant is the caller's tensor itself, which every run updates: the
 * plan then runs on one context at a time (plan.c). */
static int written_constant(const tj_plan *p, const tj_pnode *n)
{
    /* Only the schema's own arguments can be marked (a bit each): a fused
     * step carries more arguments than its operator's schema. */
    int nargs = n->nargs < n->op->nargs ? n->nargs : n->op->nargs;
    for (int a = 0; a < nargs; a++) {
        if (!((n->op->mutated_args >> a) & 1)) continue;
        for (int k = 0; k < tj_garg_n_values(&n->args[a]); k++) {
            int v = tj_garg_value_at(&n->args[a], k);
            if (v >= 0 && p->values[p->values[v].root].kind == TJ_PV_CONSTANT) return p->values[v].root;
        }
    }
    return -1;
}

/* Lists and bookkeeping totals derived from the nodes. */
static tj_status finish(tj_plan *p)
{
    p->constant_writer = p->written_constant = -1;
    p->step_nodes = tj_pool_alloc(p->pool, sizeof(int) * (size_t)(p->n_steps + 1));
    p->input_views = tj_pool_alloc(p->pool, sizeof(int) * (size_t)(p->n_values + 1));
    p->input_writers = tj_pool_alloc(p->pool, sizeof(int) * (size_t)(p->n_nodes + 1));
    if (!p->step_nodes || !p->input_views || !p->input_writers) return TJ_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < p->n_nodes; i++) {
        const tj_pnode *n = &p->nodes[i];
        if (n->is_step) p->step_nodes[n->step] = i;
        bool writes_input = false;
        for (int k = 0; n->is_step && k < n->nout; k++) {
            const tj_pvalue *v = n->outs[k] >= 0 ? &p->values[n->outs[k]] : NULL;
            writes_input |= v && v->kind == TJ_PV_SAME && p->values[v->root].kind == TJ_PV_INPUT;
        }
        if (writes_input) p->input_writers[p->n_input_writers++] = i;
        if (p->constant_writer < 0 && n->is_step) p->written_constant = written_constant(p, n);
        if (p->constant_writer < 0 && p->written_constant >= 0) p->constant_writer = i;
        p->n_args += (size_t)n->nargs;
        p->n_lists += (size_t)n->nlist;
        p->n_outs += (size_t)n->nout;
    }
    for (int v = 0; v < p->n_values; v++)
        if (p->values[v].kind == TJ_PV_VIEW && p->values[p->values[v].root].kind == TJ_PV_INPUT)
            p->input_views[p->n_input_views++] = v;
    p->stats.n_kernels = p->n_steps;
    return TJ_OK;
}

bool tj_plan_is_reshape_view(const tj_op *op)
{
    return op->meta == tj_meta_view || op->meta == tj_meta_unsafe_view;
}

/* Whether viewing a tensor of `shape` as `new_shape` needs some strides of
 * it to be contiguous with one another (it merges dims): then it is a view
 * for some strides only. Tried with strides that make no two dims
 * contiguous, the view fails exactly then. */
static bool view_merges_dims(int ndim, const int64_t *shape, int new_ndim, const int64_t *new_shape)
{
    int64_t gapped[TJ_MAX_DIMS], out[TJ_MAX_DIMS];
    for (int d = ndim - 1; d >= 0; d--) gapped[d] = d == ndim - 1 ? 1 : gapped[d + 1] * (shape[d + 1] + 1);
    return !tj_view_strides(ndim, shape, gapped, new_ndim, new_shape, out);
}

/* Staging blocks, before the memory plan: an input read through a view that
 * the run's strides may not allow (view or _unsafe_view merging its dims)
 * gets a contiguous block of its size, which a run copies it into when they
 * do not (plan.c). Not for an input that a step writes in place: writes into
 * the copy would not reach the caller's tensor (such runs stay refused). */
static void plan_staging(tj_plan *p)
{
    for (int k = 0; k < p->n_input_views; k++) {
        const tj_pvalue *v = &p->values[p->input_views[k]], *b = &p->values[v->base];
        const tj_pnode *n = &p->nodes[v->node];
        if (!n->identity && tj_plan_is_reshape_view(n->op) && view_merges_dims(b->ndim, b->shape, v->ndim, v->shape))
            p->values[v->root].staged = p->values[v->root].last >= 0;
    }
    for (int k = 0; k < p->n_input_writers; k++) {
        const tj_pnode *n = &p->nodes[p->input_writers[k]];
        for (int i = 0; i < n->nout; i++)
            if (n->outs[i] >= 0) p->values[p->values[n->outs[i]].root].staged = false;
    }
}

/* Whether the kernel making output value v may write into input j's buffer:
 * v is a block of its own, and every read of the input's old value happens
 * before that kernel, or in it, element by element at the same positions. */
static bool writeback_direct(const tj_plan *p, int v, int j)
{
    int r = tj_plan_object_value(p, v), in = p->input_values[j];
    const tj_pvalue *o = &p->values[r], *x = &p->values[in];
    if (o->kind != TJ_PV_ARENA || x->last > o->def) return false;
    if (x->last < o->def) return true;
    const tj_pnode *n = &p->nodes[o->node];
    if (!tj_plan_reads_before_writes(n->op)) return false;
    int64_t strides[TJ_MAX_DIMS];
    tj_contiguous_strides(x->ndim, x->shape, strides);
    if (memcmp(strides, x->strides, sizeof(int64_t) * (size_t)x->ndim) != 0) return false;
    for (int i = 0; i < n->nargs; i++) {
        const tj_garg *a = &n->args[i];
        for (int k = 0; k < tj_garg_n_values(a); k++) {
            int u = tj_garg_value_at(a, k);
            if (u >= 0 && p->values[u].root == in && tj_plan_object_value(p, u) != in) return false; /* a view of it */
        }
    }
    return true;
}

static tj_status check_writeback(const tj_plan *p, int k, int j, const bool *taken)
{
    if (j < -1 || j >= p->n_inputs)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_compile: output %d is written back to input %d of %d", k, j,
                        p->n_inputs);
    if (j < 0) return TJ_OK;
    const tj_pvalue *o = &p->values[p->output_values[k]], *x = &p->values[p->input_values[j]];
    if (taken[j])
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_compile: input %d (%%%s) is written back by two outputs", j, x->name);
    bool same = o->dtype == x->dtype && o->ndim == x->ndim;
    for (int d = 0; same && d < o->ndim; d++) same = o->shape[d] == x->shape[d];
    if (!same) {
        char a[128], b[128];
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_compile: output %d (%%%s, %s%s) cannot be written back to input %d (%%%s, %s%s)",
                        k, o->name, tj_dtype_name(o->dtype), tj_shape_str(o->ndim, o->shape, a, sizeof a), j, x->name,
                        tj_dtype_name(x->dtype), tj_shape_str(x->ndim, x->shape, b, sizeof b));
    }
    int obj = tj_plan_object_value(p, p->output_values[k]);
    if (o->root == p->input_values[j] && obj != p->input_values[j])
        return tj_error(TJ_ERR_UNSUPPORTED, "tj_compile: output %d (%%%s) is a view of input %d (%%%s), its write-back target",
                        k, o->name, j, x->name);
    return TJ_OK;
}

/* Write-backs, before the memory plan: which kernels write straight into
 * the buffer of the input their result is written back to (each block
 * for one input only); those results take no arena block (in_input). */
static tj_status plan_writebacks(tj_plan *p, const tj_graph *g, const tj_compile_options *opts)
{
    const int *wb = opts->writeback ? opts->writeback : g->nodes[g->output_node].writeback;
    int no = p->n_outputs;
    p->wb_direct = tj_pool_alloc(p->pool, (size_t)no + 1);
    p->writeback = tj_pool_alloc(p->pool, sizeof(int) * (size_t)(no + 1));
    bool *taken = tj_pool_alloc(p->pool, (size_t)p->n_inputs + 1);
    if (!p->wb_direct || !p->writeback || !taken) return TJ_ERR_OUT_OF_MEMORY;
    for (int k = 0; k < no; k++) {
        int j = wb ? wb[k] : -1;
        tj_status st = check_writeback(p, k, j, taken);
        if (st != TJ_OK) return st;
        p->writeback[k] = j;
        if (j < 0) continue;
        taken[j] = true;
        p->stats.n_writeback++;
        tj_pvalue *o = &p->values[tj_plan_object_value(p, p->output_values[k])];
        if (!o->in_input && writeback_direct(p, p->output_values[k], j)) {
            p->wb_direct[k] = o->in_input = true;
            p->stats.n_writeback_direct++;
        }
    }
    /* the write-backs run one after another: a value that is an input
     * another output writes back into (or a view of it) would be read after
     * that input took its new value (two inputs swapped) */
    for (int k = 0; k < no; k++)
        for (int m = 0; p->writeback[k] >= 0 && m < no; m++) {
            int i = p->writeback[m], v = p->output_values[k];
            if (m != k && i >= 0 && p->values[v].root == p->input_values[i])
                return tj_error(TJ_ERR_UNSUPPORTED, "tj_compile: output %d (%%%s), written back into input %d, is input "
                                "%d (%%%s) or a view of it, which output %d is written back into: the write-backs run "
                                "one after another, so it would take that new value (write a copy: aten.clone)", k,
                                p->values[v].name, p->writeback[k], i, p->values[p->input_values[i]].name, m);
        }
    return TJ_OK;
}

/* Direct outputs, after the memory plan: which kernels write into the
 * caller's output tensors (each block for one destination only; blocks
 * written into an input have theirs), and the tensor object of each block. */
static tj_status plan_outputs(tj_plan *p)
{
    int no = p->n_outputs;
    p->direct_out = tj_pool_alloc(p->pool, (size_t)no + 1);
    bool *claimed = tj_pool_alloc(p->pool, (size_t)p->n_values + 1); /* blocks with a destination */
    if (!p->direct_out || !claimed) return TJ_ERR_OUT_OF_MEMORY;
    for (int v = 0; v < p->n_values; v++) claimed[v] = p->values[v].kind == TJ_PV_ARENA && p->values[v].in_input;
    for (int k = 0; k < no; k++) {
        int obj = tj_plan_object_value(p, p->output_values[k]);
        if (p->values[obj].kind != TJ_PV_ARENA || claimed[obj]) continue;
        p->direct_out[k] = claimed[obj] = true;
    }
    /* a result over its donor's block, with the same geometry, can run as the
     * donor's tensor object unless it is pointed elsewhere at run time (the
     * donor never is: it dies there); long elementwise chains then touch one
     * object instead of one per node. In step order, as the memory plan
     * chose donors: a donor's step runs first, but its value may come later
     * in the graph (a fused step runs where its last member was) */
    for (int v = 0; v < p->n_values; v++) p->values[v].object = v;
    for (int s = 0; s < p->n_steps; s++) {
        const tj_pnode *n = &p->nodes[p->step_nodes[s]];
        for (int k = 0; k < n->nout; k++) {
            tj_pvalue *pv = n->outs[k] >= 0 ? &p->values[n->outs[k]] : NULL;
            if (pv && pv->kind == TJ_PV_ARENA && pv->inplace && !claimed[n->outs[k]])
                pv->object = p->values[pv->donor].object;
        }
    }
    return TJ_OK;
}

static tj_plan *compile_graph(const tj_graph *g, const tj_compile_options *opts)
{
    tj_compile_options defaults = {0};
    if (!opts) opts = &defaults;
    if (!g) {
        tj_error_null("tj_compile: NULL graph");
        return NULL;
    }
    if (g->output_node < 0) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_compile: the graph has no output node");
        return NULL;
    }
    tj_pool *pool = tj_pool_new("plan");
    tj_plan *p = pool ? tj_pool_alloc(pool, sizeof *p) : NULL;
    if (!p) {
        tj_pool_free(pool);
        return NULL;
    }
    p->pool = pool;
    pthread_mutex_init(&p->lock, NULL);
    p->epoch_ns = tj_plan_now_ns();
    atomic_init(&p->profiling, opts->profile);
    atomic_init(&p->constant_busy, false);
    int n_calls = 0;
    for (int i = 0; i < g->n_nodes; i++) n_calls += !g->nodes[i].dead && g->nodes[i].kind == TJ_NODE_CALL;
    p->n_nodes = n_calls;
    p->n_values = g->n_values;
    p->n_inputs = g->n_inputs;
    p->n_outputs = g->nodes[g->output_node].nargs;
    p->nodes = tj_pool_alloc(pool, sizeof *p->nodes * (size_t)(n_calls + 1));
    p->values = tj_pool_alloc(pool, sizeof *p->values * (size_t)(g->n_values + 1));
    p->input_values = tj_pool_alloc(pool, sizeof(int) * (size_t)(g->n_inputs + 1));
    p->output_values = tj_pool_alloc(pool, sizeof(int) * (size_t)(p->n_outputs + 1));
    compiler c = {.g = g, .p = p};
    size_t proto_bytes = sizeof(tj_tensor) * (size_t)(g->n_values + 1);
    size_t pv_bytes = sizeof(tj_tensor *) * (size_t)(g->n_values + 1);
    size_t object_bytes = (2 * sizeof(int) + sizeof(bool)) * (size_t)(g->n_values + 1);
    c.protos = tj_alloc(proto_bytes);
    c.pv = tj_alloc(pv_bytes);
    c.object = tj_alloc(object_bytes);
    tj_status st = TJ_OK;
    if (!p->nodes || !p->values || !p->input_values || !p->output_values || !c.protos || !c.pv || !c.object) {
        st = tj_oom("tj_compile", proto_bytes + pv_bytes + object_bytes);
    } else {
        memset(c.protos, 0, proto_bytes);
        memset(c.pv, 0, pv_bytes);
        c.reads = c.object + g->n_values + 1;
        c.reshaped = (bool *)(c.reads + g->n_values + 1);
        for (int v = 0; v <= g->n_values; v++) {
            c.object[v] = c.reads[v] = v;
            c.reshaped[v] = false;
        }
        st = tj_plan_common_begin(&c.common, g, !opts->no_common_subexpressions);
        if (st == TJ_OK) st = compile_nodes(&c);
        tj_plan_common_end(&c.common);
    }
    if (st == TJ_OK && !opts->no_dead_code) st = tj_plan_prune_dead(p);
    if (st == TJ_OK && !opts->no_constant_folding) st = tj_plan_fold_constants(p);
    if (st == TJ_OK && !opts->no_identity_elimination) st = tj_plan_simplify_identities(p);
    if (st == TJ_OK && !opts->no_fusion && !opts->no_attention_fusion) st = tj_plan_fuse_attention(p);
    if (st == TJ_OK && !opts->no_fusion && !opts->no_product_scatter_fusion) st = tj_plan_fuse_product_scatters(p);
    if (st == TJ_OK && !opts->no_fusion) st = tj_plan_fuse_gathered_operands(p);
    if (st == TJ_OK && !opts->no_fusion) st = tj_plan_fuse_zero_padding(p); /* what a product did not absorb */
    if (st == TJ_OK && !opts->no_fusion) st = tj_plan_fuse_epilogues(p);
    if (st == TJ_OK && !opts->no_fusion && !opts->no_pointwise_fusion) st = tj_plan_fuse_pointwise(p);
    if (st == TJ_OK && opts->native_code && !opts->no_fusion && !opts->no_pointwise_fusion)
        st = tj_plan_native_code(p);
    if (st == TJ_OK) st = finish(p);
    if (st == TJ_OK) {
        tj_plan_liveness(p);
        plan_staging(p);
        st = plan_writebacks(p, g, opts);
    }
    if (st == TJ_OK) st = tj_plan_memory(p, opts);
    if (st == TJ_OK) st = plan_outputs(p);
    tj_free(c.protos, proto_bytes);
    tj_free(c.pv, pv_bytes);
    tj_free(c.object, object_bytes);
    if (st != TJ_OK) {
        tj_plan_free(p);
        return NULL;
    }
    return p;
}

tj_plan *tj_compile(const tj_graph *g, const tj_compile_options *opts)
{
    if (!g || !tj_graph_needs_lowering(g)) return compile_graph(g, opts);
    /* Implicit operators have no kernel: they are replaced by the calls they
     * make for the placeholders' layouts (a view, or a copy), as make_fx
     * records them; hand-written graph text may hold them. A kernel computes
     * in no storage dtype: such calls get their conversions as nodes. */
    tj_graph *lowered = tj_graph_lower(g);
    tj_plan *p = lowered ? compile_graph(lowered, opts) : NULL;
    tj_graph_free(lowered);
    return p;
}
