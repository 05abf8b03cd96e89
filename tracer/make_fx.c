/* make_fx: a trace mode on the dispatcher that records every call it sees
 * into a graph, running decompositions from the trace's own table instead of
 * recording the operators the table names. */
#include <stdio.h>
#include <string.h>

#include "decomps/table.h"
#include "graph_internal.h"
#include "runtime/key_map.h"

#define MAX_DECOMP_DEPTH 64

typedef struct tracer {
    tj_mode mode;
    tj_graph *g;
    const tj_decomp_table *table;
    bool fake;
    tj_key_map values; /* tensor uid (never 0) -> value id */
    const tj_op *decomp_stack[MAX_DECOMP_DEPTH];
    int decomp_depth;
    tj_scope *scope; /* make_fx's: tensors it owns were made by the traced function */
    bool active;     /* the trace mode is pushed (fn is running) */
    int *fresh;      /* the _to_copy nodes of fresh_value, to drop where nothing writes */
    int n_fresh, cap_fresh;
    tj_tensor_reader outer_reader; /* the one before ours, told too: an enclosing make_fx */
    void *outer_reader_ctx;
    bool bind_failed; /* a geometry bind ran out of memory: the graph would hold for any */
} tracer;

static tj_status map_put(tracer *tr, const tj_tensor *t, int value)
{
    return tj_key_map_put(&tr->values, t->uid, value, "make_fx");
}

static int map_get(const tracer *tr, const tj_tensor *t) { return tj_key_map_get(&tr->values, t->uid); }

static int fresh_value(tracer *tr, tj_tensor *t);

/* Whether t is a real tensor the traced function made itself while the
 * trace runs (tj_tensor_from_data, tj_tensor_empty, tj_tensor_scalar_*: no
 * call records them), as opposed to one it reached through ctx. */
static bool is_fresh(const tracer *tr, const tj_tensor *t)
{
    return tr->active && !t->fake && tj_scope_owns_since(tr->scope, t);
}

/* The value of tensor t; a tensor the trace has not seen becomes a constant. */
static int value_of(tracer *tr, tj_tensor *t)
{
    int v = map_get(tr, t);
    if (v >= 0) return v;
    if (t->fake) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "make_fx: a fake tensor that is neither an input nor the result of a traced call");
        return -1;
    }
    if (is_fresh(tr, t)) return fresh_value(tr, t);
    int node = tj_graph_add_constant(tr->g, t, NULL);
    if (node < 0) return -1;
    v = tr->g->nodes[node].outs[0];
    return map_put(tr, t, v) == TJ_OK ? v : -1;
}

static tj_status record(tracer *tr, const tj_op *op, const tj_value *args, int nargs, const tj_value *outs,
                        const char *name_base)
{
    tj_garg gargs[TJ_MAX_ARGS];
    int lists[TJ_MAX_ARGS][64];
    for (int i = 0; i < nargs; i++) {
        const tj_value *a = &args[i];
        tj_garg *g = &gargs[i];
        memset(g, 0, sizeof *g);
        switch (a->kind) {
        case TJ_V_NONE: g->kind = TJ_GA_NONE; break;
        case TJ_V_TENSOR:
            g->kind = TJ_GA_VALUE;
            if ((g->u.v = value_of(tr, a->u.t)) < 0) return tj_last_status();
            break;
        case TJ_V_TENSORS:
            if (a->n > 64) return tj_error(TJ_ERR_UNSUPPORTED, "make_fx: %s with more than 64 tensors in a list", op->name);
            g->kind = TJ_GA_VALUES;
            g->n = a->n;
            g->u.vs = lists[i];
            for (int k = 0; k < a->n; k++)
                if (!a->u.ts[k]) lists[i][k] = -1; /* None in a Tensor?[] */
                else if ((lists[i][k] = value_of(tr, a->u.ts[k])) < 0) return tj_last_status();
            break;
        case TJ_V_INT: g->kind = TJ_GA_INT; g->u.i = a->u.i; break;
        case TJ_V_FLOAT: g->kind = TJ_GA_FLOAT; g->u.f = a->u.f; break;
        case TJ_V_BOOL: g->kind = TJ_GA_BOOL; g->u.b = a->u.b; break;
        case TJ_V_INTS: g->kind = TJ_GA_INTS; g->n = a->n; g->u.ints = (int64_t *)a->u.ints; break;
        case TJ_V_BOOLS: g->kind = TJ_GA_BOOLS; g->n = a->n; g->u.bools = (bool *)a->u.bools; break;
        case TJ_V_FLOATS: g->kind = TJ_GA_FLOATS; g->n = a->n; g->u.floats = (double *)a->u.floats; break;
        case TJ_V_STR: g->kind = TJ_GA_STR; g->u.s = (char *)a->u.s; break;
        case TJ_V_DTYPE: g->kind = TJ_GA_DTYPE; g->u.dtype = a->u.dtype; break;
        }
    }
    tj_tensor *results[TJ_MAX_RETURNS];
    for (int i = 0; i < op->nreturns; i++) results[i] = outs[i].kind == TJ_V_TENSOR ? outs[i].u.t : NULL;
    int node = tj_graph_add_call(tr->g, op, gargs, nargs, results, name_base);
    if (node < 0) return tj_last_status();
    for (int i = 0; i < op->nreturns; i++)
        if (results[i] && map_put(tr, results[i], tr->g->nodes[node].outs[i]) != TJ_OK) return tj_last_status();
    return TJ_OK;
}

static tj_status cycle_error(tracer *tr, const tj_op *op)
{
    char chain[1024];
    size_t k = 0;
    for (int i = 0; i < tr->decomp_depth && k < sizeof chain; i++)
        k += (size_t)snprintf(chain + k, sizeof chain - k, "%s -> ", tr->decomp_stack[i]->name);
    if (k < sizeof chain) snprintf(chain + k, sizeof chain - k, "%s", op->name);
    return tj_error(TJ_ERR_CYCLE, "make_fx: decomposition cycle: %s", chain);
}

/* A table's decomposition stands for its operator: results of another
 * dtype or shape than the operator's shape function gives (a user's graph
 * traced for other shapes, a function returning the wrong tensor) are
 * refused, not recorded as the operator's values. A shape function that
 * refuses the call is left to the decomposition, which did not refuse it. */
static bool expected_results(const tj_op *op, const tj_value *args, tj_meta *m)
{
    for (int i = 0; i < op->nreturns; i++) m[i] = (tj_meta){.alias = -1};
    if (op->meta && op->meta(args, m) == TJ_OK) {
        tj_meta_alias_types(op, args, m);
        return true;
    }
    tj_clear_error();
    return false;
}

/* m: expected_results from before the call (an in-place view changes its
 * self's shape). An in-place operator's result is the argument it writes:
 * a decomposition returning a new tensor for it (add_ as add) would drop
 * the write from the graph, and later reads of that argument would see the
 * old values, which eager mode does not. */
static tj_status check_results(const tj_op *op, const tj_meta *m, const tj_value *args, const tj_value *outs)
{
    for (int i = 0; i < op->nreturns; i++) {
        const tj_tensor *t = outs[i].kind == TJ_V_TENSOR ? outs[i].u.t : NULL;
        if (!m[i].undefined && m[i].same && m[i].alias >= 0 && m[i].alias < op->nargs &&
            args[m[i].alias].kind == TJ_V_TENSOR && t != args[m[i].alias].u.t)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "make_fx: the decomposition of %s gave output %d as a new tensor, "
                            "not argument %d, which the operator writes in place and returns", op->name, i,
                            m[i].alias);
        if (m[i].undefined || (t && t->dtype == m[i].dtype && t->ndim == m[i].ndim &&
                               !memcmp(t->shape, m[i].shape, sizeof(int64_t) * (size_t)m[i].ndim)))
            continue;
        char got[128] = "", want[128];
        if (t) tj_shape_str(t->ndim, t->shape, got, sizeof got);
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "make_fx: the decomposition of %s gave output %d as %s%s, the operator "
                        "gives %s%s", op->name, i, t ? tj_dtype_name(t->dtype) : "no tensor", got,
                        tj_dtype_name(m[i].dtype), tj_shape_str(m[i].ndim, m[i].shape, want, sizeof want));
    }
    return TJ_OK;
}

/* Runs op's decomposition from the trace's table; its calls are traced. */
static tj_status decompose(tracer *tr, const tj_op *op, const tj_decomp_entry *e, const tj_value *args, tj_value *outs)
{
    for (int i = 0; i < tr->decomp_depth; i++)
        if (tr->decomp_stack[i] == op) return cycle_error(tr, op);
    if (tr->decomp_depth == MAX_DECOMP_DEPTH) return cycle_error(tr, op);
    tj_meta m[TJ_MAX_RETURNS];
    bool check = expected_results(op, args, m);
    tr->decomp_stack[tr->decomp_depth++] = op;
    tj_status st;
    if (e->fn) {
        st = e->fn(args, outs);
        /* as eager mode names an implicit composite */
        if (st != TJ_OK) st = tj_error_led_by(op->name, tj_error_if_unrecorded(st, op->name, "its decomposition"));
    } else {
        /* a traced counterpart: its placeholders take the call's tensors in order */
        tj_tensor *inputs[TJ_MAX_ARGS], *results[TJ_MAX_RETURNS];
        int n = 0;
        for (int i = 0; i < op->nargs && n < tj_graph_num_inputs(e->graph); i++)
            if (args[i].kind == TJ_V_TENSOR) inputs[n++] = args[i].u.t;
        st = tj_graph_run(e->graph, inputs, n, results);
        for (int i = 0; st == TJ_OK && i < op->nreturns; i++) outs[i] = tj_v_tensor(results[i]);
        if (st != TJ_OK) {
            /* an error of the nested trace (a cycle) names make_fx already */
            const char *inner = tj_last_error();
            if (strncmp(inner, "make_fx: ", 9) == 0) inner += 9;
            char why[768];
            snprintf(why, sizeof why, "%s", inner);
            st = tj_error(st, "make_fx: the decomposition graph of %s: %s", op->name, why);
        }
    }
    tr->decomp_depth--;
    if (st == TJ_OK && check) st = check_results(op, m, args, outs);
    return st;
}

/* An in-place view (unsqueeze_, ...) of a tensor the graph holds as a
 * constant would change that shared object's shape under the graph, which
 * records the old one: refused, self unchanged. */
static tj_status check_inplace_view(tracer *tr, const tj_op *op, const tj_value *args, int nargs)
{
    if (nargs < 1 || args[0].kind != TJ_V_TENSOR || !args[0].u.t) return TJ_OK; /* the dispatcher's error */
    int v = map_get(tr, args[0].u.t);
    if (v >= 0 && tr->g->nodes[tr->g->values[v].node].kind != TJ_NODE_CONSTANT) return TJ_OK;
    return tj_error(TJ_ERR_UNSUPPORTED, "make_fx: %s on a tensor the trace records as a constant (neither an input "
                    "nor the result of a traced call) would change the constant's shape under the graph: clone it "
                    "first, or pass it as an input", op->name);
}

/* A tensor the traced function made is new at every call, so each run must
 * start from its value at first use, as torch's make_fx records
 * torch.tensor(...) (lift_fresh_copy): the graph holds a copy of that value
 * as a constant and reads it through a _to_copy, which in-place calls then
 * write instead of the constant (a real-mode trace wrote the constant while
 * tracing, and every run wrote it again). Copies nothing writes leave the
 * graph when the trace ends (drop_unwritten_copies). */
static int fresh_value(tracer *tr, tj_tensor *t)
{
    const tj_op *clone = tj_op_find("aten::clone"), *to_copy = tj_op_find("aten::_to_copy");
    if (!clone || !to_copy) return -1;
    tj_value arg[2] = {tj_v_tensor(t), tj_v_none()}, out;
    bool grad = tj_no_grad_begin();
    tj_status st = tj_dispatch_kernel(clone, arg, 2, &out); /* not traced */
    tj_no_grad_end(grad);
    if (st != TJ_OK) return -1;
    tj_tensor *snapshot = out.u.t; /* owned by the innermost scope */
    snapshot->storage->sealed = true; /* only graphs reach it: written through the copy below */
    int node = tj_graph_add_constant(tr->g, snapshot, NULL);
    if (node < 0 || map_put(tr, snapshot, tr->g->nodes[node].outs[0]) != TJ_OK) return -1;
    /* _to_copy(snapshot) with the schema's defaults, named as torch names
     * it (so that a dropped copy takes no other value's name); a fake
     * tensor of the snapshot's type stands for its result */
    tj_value args[TJ_MAX_ARGS];
    args[0] = tj_v_tensor(snapshot);
    for (int i = 1; i < to_copy->nargs; i++) args[i] = to_copy->args[i].def;
    tj_tensor *meta = tj_tensor_fake(snapshot->dtype, snapshot->ndim, snapshot->shape);
    tj_value res = tj_v_tensor(meta);
    if (!meta || record(tr, to_copy, args, to_copy->nargs, &res, "lift_fresh_copy") != TJ_OK) return -1;
    int v = map_get(tr, meta);
    if (v < 0 || map_put(tr, t, v) != TJ_OK) return -1;
    if (tr->n_fresh == tr->cap_fresh) {
        int cap = tr->cap_fresh ? 2 * tr->cap_fresh : 16;
        int *f = tj_alloc(sizeof(int) * (size_t)cap);
        if (!f) return tj_oom("make_fx", sizeof(int) * (size_t)cap), -1;
        if (tr->n_fresh) memcpy(f, tr->fresh, sizeof(int) * (size_t)tr->n_fresh);
        tj_free(tr->fresh, sizeof(int) * (size_t)tr->cap_fresh);
        tr->fresh = f;
        tr->cap_fresh = cap;
    }
    tr->fresh[tr->n_fresh++] = tr->g->values[v].node;
    return v;
}

/* The value whose storage v aliases: through views and in-place results. */
static int storage_root(const tj_graph *g, int v)
{
    for (int guard = 0; guard < g->n_values; guard++) {
        const tj_gnode *n = &g->nodes[g->values[v].node];
        if (n->kind != TJ_NODE_CALL || !tj_op_is_view(n->op) || n->nargs < 1 || n->args[0].kind != TJ_GA_VALUE)
            return v;
        v = n->args[0].u.v;
    }
    return v;
}

/* The tensor reader while fn runs. TJ_READ_GEOMETRY: a gradient formula
 * built what it records from t's strides and offset (or tj_graph_run ran a
 * graph bound to them), so when t is an input or a view of one, the graph
 * holds for that input's geometry only; `who` is copied (a graph run may be
 * freed first). TJ_READ_PAST_DISPATCH: steps the trace cannot see (a plan's)
 * read t; a traced t is refused, as its results would be recorded as
 * constants that no longer follow the inputs. An enclosing make_fx records
 * the same calls, so it is told too. */
static tj_status read_tensor(void *ctx, const tj_tensor *t, tj_tensor_read how, const char *who)
{
    tracer *tr = ctx;
    tj_status st = tr->outer_reader ? tr->outer_reader(tr->outer_reader_ctx, t, how, who) : TJ_OK;
    int v = map_get(tr, t);
    if (st != TJ_OK || v < 0) return st;
    if (how == TJ_READ_PAST_DISPATCH)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: tj_make_fx is tracing this tensor (%%%s): a plan's steps do not go "
                        "through the dispatcher, so the trace would hold their results as constants that no longer "
                        "follow the inputs; run the graph the plan was compiled from with tj_graph_run instead",
                        who, tr->g->values[v].name);
    int root = storage_root(tr->g, v);
    const char *was = tr->g->values[root].geometry_bound;
    if (tr->g->nodes[tr->g->values[root].node].kind != TJ_NODE_PLACEHOLDER || (was && !strcmp(was, who))) return TJ_OK;
    if (tj_graph_bind_geometry(tr->g, root, who) != TJ_OK) tr->bind_failed = true;
    return TJ_OK;
}

static bool is_graph_output(const tj_graph *g, int v)
{
    const tj_gnode *o = &g->nodes[g->output_node];
    for (int i = 0; i < o->nargs; i++)
        if (o->args[i].kind == TJ_GA_VALUE && o->args[i].u.v == v) return true;
    return false;
}

/* Removes the copies of fresh_value that no call writes into (through any
 * view) and that are not graph outputs: their readers read the constant. */
static void drop_unwritten_copies(tracer *tr)
{
    tj_graph *g = tr->g;
    int dropped = 0;
    for (int f = 0; f < tr->n_fresh; f++) {
        tj_gnode *copy = &g->nodes[tr->fresh[f]];
        int v = copy->outs[0];
        bool written = is_graph_output(g, v);
        for (int i = 0; i < g->n_nodes && !written; i++) {
            const tj_gnode *n = &g->nodes[i];
            if (n->kind != TJ_NODE_CALL || n->dead) continue;
            bool user = !tj_op_is_builtin(n->op);
            if (!user && !n->op->mutated_args) continue;
            for (int a = 0; a < n->nargs && !written; a++)
                if (user || ((n->op->mutated_args >> a) & 1))
                    for (int k = 0; k < tj_garg_n_values(&n->args[a]) && !written; k++)
                        written = tj_garg_value_at(&n->args[a], k) >= 0 &&
                                  storage_root(g, tj_garg_value_at(&n->args[a], k)) == v;
        }
        if (written) continue;
        tj_graph_replace_uses(g, v, copy->args[0].u.v);
        copy->dead = true;
        dropped++;
    }
    if (dropped) tj_graph_compact(g);
}

static tj_status trace_handler(tj_mode *mode, const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    tracer *tr = mode->ctx;
    if (tj_op_is_inplace_view(op)) {
        tj_status st = check_inplace_view(tr, op, args, nargs);
        if (st != TJ_OK) return st;
    }
    /* Values of tensors first seen here, taken before the call: a real
     * kernel may write a fresh tensor, whose constant takes the value from
     * before the call; and a tensor the call writes comes back as its
     * result, which the function's scope adopts: a captured tensor would
     * then look made by the function, and start afresh in every run, where
     * torch's make_fx holds it by reference (every run updates it). */
    for (int i = 0; i < nargs; i++) {
        bool written = (op->mutated_args >> i) & 1;
        int n = args[i].kind == TJ_V_TENSOR ? 1 : args[i].kind == TJ_V_TENSORS ? args[i].n : 0;
        for (int k = 0; k < n && (written || !tr->fake); k++) {
            tj_tensor *t = args[i].kind == TJ_V_TENSOR ? args[i].u.t : args[i].u.ts[k];
            if (t && map_get(tr, t) < 0 && (written || is_fresh(tr, t)) && value_of(tr, t) < 0)
                return tj_last_status();
        }
    }
    const tj_decomp_entry *e = tj_decomp_table_lookup(tr->table, op);
    /* a decomposition computes in the kernels' dtypes, as the operator
     * does: a call on storage dtypes is widened first, its pieces traced */
    if (e && tj_widen_needed(op, args, nargs)) return tj_widen_call(op, args, outs, tj_dispatch);
    if (e) return decompose(tr, op, e, args, outs);
    tj_status st = tr->fake ? tj_dispatch_fake(op, args, nargs, outs) : tj_redispatch(mode, op, args, nargs, outs);
    if (st != TJ_OK) return st;
    return record(tr, op, args, nargs, outs, NULL);
}

/* A fake tensor with t's dtype, shape, strides and requires_grad flag (as
 * PyTorch's FakeTensorMode.from_tensor: a function that differentiates with
 * respect to an input traces alike in both modes). */
static tj_tensor *fake_like(const tj_tensor *t)
{
    tj_tensor *f = tj_tensor_fake(t->dtype, t->ndim, t->shape);
    if (f) {
        memcpy(f->strides, t->strides, sizeof f->strides);
        f->offset = t->offset;
        if (tj_tensor_requires_grad(t) && tj_tensor_set_requires_grad(f, true) != TJ_OK) return NULL;
    }
    return f;
}

tj_status tj_trace_fn_check_outputs(const char *caller, tj_tensor *const *outputs, int n_outputs)
{
    if (n_outputs < 0 || n_outputs > TJ_MAX_GRAPH_OUTPUTS)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: the traced function returned %d outputs (0 to %d)", caller, n_outputs,
                        TJ_MAX_GRAPH_OUTPUTS);
    for (int i = 0; i < n_outputs; i++)
        if (!outputs[i])
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output %d of the traced function is NULL", caller, i);
    return TJ_OK;
}

tj_graph *tj_make_fx_named(tj_trace_fn fn, void *ctx, tj_tensor *const *inputs, int n_inputs,
                           const tj_decomp_table *table, tj_tracing_mode mode, const char *const *input_names)
{
    if (!fn || n_inputs < 0 || (n_inputs > 0 && !inputs)) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_make_fx: NULL function or inputs");
        return NULL;
    }
    for (int i = 0; i < n_inputs; i++)
        if (!inputs[i]) {
            tj_error_null("tj_make_fx: input %d is NULL", i);
            return NULL;
        }
    tracer tr;
    memset(&tr, 0, sizeof tr);
    tr.mode.handler = trace_handler;
    tr.mode.ctx = &tr;
    tr.mode.name = TJ_MAKE_FX_MODE;
    tr.table = table;
    tr.fake = mode == TJ_TRACE_FAKE;
    tr.g = tj_graph_new();
    if (!tr.g) return NULL;

    tj_status st = TJ_OK;
    tj_scope *scope = tj_scope_begin();
    tr.scope = scope;
    tj_tensor **traced = tj_alloc(sizeof(tj_tensor *) * (size_t)(n_inputs + TJ_MAX_GRAPH_OUTPUTS));
    if (!scope || !traced) {
        st = scope ? tj_oom("tj_make_fx", sizeof(tj_tensor *) * (size_t)n_inputs) : tj_last_status();
        goto done;
    }
    tj_tensor **outputs = traced + n_inputs;
    for (int i = 0; i < n_inputs; i++) {
        traced[i] = tr.fake ? fake_like(inputs[i]) : inputs[i];
        int node = traced[i] ? tj_graph_add_placeholder(tr.g, traced[i], input_names ? input_names[i] : NULL) : -1;
        if (node < 0 || map_put(&tr, traced[i], tr.g->nodes[node].outs[0]) != TJ_OK) {
            st = tj_last_status();
            goto done;
        }
    }
    int n_out = TJ_MAX_GRAPH_OUTPUTS;
    st = tj_mode_push(&tr.mode);
    if (st != TJ_OK) goto done;
    const char *outer_read = tj_fake_data_read_swap(NULL);
    tj_clear_error(); /* an earlier call's error is not fn's */
    int outer_fence = tj_scope_fence(scope);
    tj_tensor_reader reader = read_tensor;
    void *reader_ctx = &tr;
    tj_tensor_reader_swap(&reader, &reader_ctx);
    tr.outer_reader = reader;
    tr.outer_reader_ctx = reader_ctx;
    tr.active = true;
    st = fn(ctx, traced, n_inputs, outputs, &n_out);
    tr.active = false;
    tj_tensor_reader_swap(&reader, &reader_ctx);
    tj_scope_unfence(outer_fence);
    /* modes fn pushed and left above the tracer's are popped with it: the
     * tracer lives in this frame, so it must not stay on the stack */
    int left = tj_mode_pop_above(&tr.mode);
    tj_mode_pop(&tr.mode);
    const char *read = tj_fake_data_read_swap(outer_read);
    if (st == TJ_OK && left > 0) {
        st = tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_make_fx: the traced function left %d mode%s pushed (tj_mode_push "
                      "without tj_mode_pop); popped, the graph discarded", left, left == 1 ? "" : "s");
        goto done;
    }
    if (st != TJ_OK) {
        /* fn's own check failed without tj_error, or gave its own status
         * for a failed call: tj_last_status() still says what it returned */
        if (tj_last_status() == TJ_OK)
            tj_error(st, "tj_make_fx: the traced function returned %s (%d) without recording an error",
                     tj_status_name(st), (int)st);
        else if (tj_last_status() != st) {
            /* an error of the nested trace (a cycle) names make_fx already */
            const char *inner = tj_last_error();
            if (strncmp(inner, "make_fx: ", 9) == 0) inner += 9;
            char why[768];
            snprintf(why, sizeof why, "%s", inner);
            tj_error(st, "tj_make_fx: the traced function returned %s (%d); the last error (%s): %s",
                     tj_status_name(st), (int)st, tj_status_name(tj_last_status()), why);
        }
        goto done;
    }
    if (tr.bind_failed) {
        st = tj_error(TJ_ERR_OUT_OF_MEMORY, "tj_make_fx: out of memory binding an input to its traced geometry");
        goto done;
    }
    if (tr.fake && read) {
        st = tj_error(TJ_ERR_UNSUPPORTED, "tj_make_fx: in fake mode the traced function called %s on a fake tensor: "
                      "values are unknown when tracing shapes, so anything decided on them would be baked into the "
                      "graph; trace in real mode (TJ_TRACE_REAL)", read);
        goto done;
    }
    if ((st = tj_trace_fn_check_outputs("tj_make_fx", outputs, n_out)) != TJ_OK) goto done;
    int out_values[TJ_MAX_GRAPH_OUTPUTS];
    for (int i = 0; i < n_out; i++) {
        if ((out_values[i] = value_of(&tr, outputs[i])) < 0) {
            st = tj_last_status();
            goto done;
        }
    }
    if (tj_graph_add_output(tr.g, out_values, n_out) < 0) {
        st = tj_last_status();
    } else {
        drop_unwritten_copies(&tr);
        tj_graph_count_uses(tr.g);
    }
done:
    tj_free(tr.fresh, sizeof(int) * (size_t)tr.cap_fresh);
    tj_free(traced, sizeof(tj_tensor *) * (size_t)(n_inputs + TJ_MAX_GRAPH_OUTPUTS));
    if (scope) tj_scope_end(scope);
    tj_key_map_free(&tr.values);
    if (st != TJ_OK) {
        tj_graph_free(tr.g);
        return NULL;
    }
    return tr.g;
}

tj_graph *tj_make_fx(tj_trace_fn fn, void *ctx, tj_tensor *const *inputs, int n_inputs, const tj_decomp_table *table,
                     tj_tracing_mode mode)
{
    return tj_make_fx_named(fn, ctx, inputs, n_inputs, table, mode, NULL);
}
