/* Compiled functions (include/tjit/jit.h): plans cached by their inputs'
 * signature, traced and compiled on the first call that misses. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "jit_autograd.h"
#include "plan_internal.h"

#define DEFAULT_CACHE_LIMIT 8

/* What a plan was compiled for, of one input. */
typedef struct input_key {
    tj_dtype dtype;
    int ndim;
    bool requires_grad;
    bool offset_bound; /* the graph holds for this storage offset only */
    int64_t offset;
    int64_t shape[TJ_MAX_DIMS];
    int64_t strides[TJ_MAX_DIMS];
} input_key;

typedef struct jit_entry {
    int n_inputs;
    bool grad_enabled;
    input_key *keys;
    tj_plan *plan;     /* NULL: fn is called eagerly (eager_fallback) */
    int n_user;        /* the plan's outputs not written back: fn's, then those saved for backward */
    int *user_outputs; /* their plan output indices */
    int n_fn;          /* fn's outputs (n_user less the saved values) */
    tj_jit_backward *backward; /* NULL: the outputs get no history */
    tj_tensor **slots; /* per plan output: tj_plan_run_into's tensor (NULL: written back) */
    uint64_t last_used;
} jit_entry;

struct tj_jit {
    tj_trace_fn fn;
    void *ctx;
    tj_jit_options opts;
    int limit;
    jit_entry *entries; /* limit of them, n_entries used */
    int n_entries;
    uint64_t clock;
    atomic_flag busy;
    tj_jit_statistics stats;
};

tj_jit *tj_jit_new(tj_trace_fn fn, void *ctx, const tj_jit_options *opts)
{
    tj_jit_options o = opts ? *opts : (tj_jit_options){0};
    if (!fn || o.cache_limit < 0 || o.compile.writeback) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_jit_new: %s",
                 !fn ? "NULL function"
                 : o.cache_limit < 0 ? "negative cache_limit"
                                     : "compile.writeback must be NULL (each graph has its own write-backs)");
        return NULL;
    }
    tj_jit *j = tj_alloc(sizeof *j);
    int limit = o.cache_limit ? o.cache_limit : DEFAULT_CACHE_LIMIT;
    jit_entry *entries = j ? tj_alloc(sizeof *entries * (size_t)limit) : NULL;
    if (!entries) {
        if (j) tj_free(j, sizeof *j);
        tj_oom("tj_jit_new", sizeof *j + sizeof *entries * (size_t)limit);
        return NULL;
    }
    *j = (tj_jit){.fn = fn, .ctx = ctx, .opts = o, .limit = limit, .entries = entries};
    atomic_flag_clear(&j->busy);
    return j;
}

static void entry_free(jit_entry *e)
{
    size_t n_out = e->plan && e->plan->n_outputs ? (size_t)e->plan->n_outputs : 1;
    tj_plan_free(e->plan);
    tj_jit_backward_release(e->backward);
    if (e->keys) tj_free(e->keys, sizeof *e->keys * (size_t)(e->n_inputs ? e->n_inputs : 1));
    if (e->user_outputs) tj_free(e->user_outputs, sizeof(int) * n_out);
    if (e->slots) tj_free(e->slots, sizeof(tj_tensor *) * n_out);
    *e = (jit_entry){0};
}

void tj_jit_free(tj_jit *j)
{
    if (!j) return;
    for (int i = 0; i < j->n_entries; i++) entry_free(&j->entries[i]);
    tj_free(j->entries, sizeof *j->entries * (size_t)j->limit);
    tj_free(j, sizeof *j);
}

/* A dim of length 0 or 1 has no stride to speak of (the plan accepts any). */
static int64_t stride_key(const tj_tensor *t, int d) { return t->shape[d] > 1 ? t->strides[d] : 0; }

static void key_of(const tj_tensor *t, input_key *k)
{
    *k = (input_key){.dtype = t->dtype, .ndim = t->ndim, .requires_grad = tj_tensor_requires_grad(t)};
    memcpy(k->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    for (int d = 0; d < t->ndim; d++) k->strides[d] = stride_key(t, d);
    k->offset = t->offset;
}

/* The guards of one input, in the order a miss is reported. */
typedef enum guard { GUARD_HOLDS, GUARD_DTYPE, GUARD_SHAPE, GUARD_STRIDES, GUARD_REQUIRES_GRAD, GUARD_OFFSET } guard;

/* The first guard of k that t fails. */
static guard failed_guard(const input_key *k, const tj_tensor *t)
{
    if (k->dtype != t->dtype) return GUARD_DTYPE;
    if (k->ndim != t->ndim) return GUARD_SHAPE;
    for (int d = 0; d < k->ndim; d++)
        if (k->shape[d] != t->shape[d]) return GUARD_SHAPE;
    for (int d = 0; d < k->ndim; d++)
        if (k->strides[d] != stride_key(t, d)) return GUARD_STRIDES;
    if (k->requires_grad != tj_tensor_requires_grad(t)) return GUARD_REQUIRES_GRAD;
    return k->offset_bound && k->offset != t->offset ? GUARD_OFFSET : GUARD_HOLDS;
}

static jit_entry *lookup(tj_jit *j, tj_tensor *const *inputs, int n)
{
    bool grad = tj_grad_enabled();
    for (int i = 0; i < j->n_entries; i++) {
        jit_entry *e = &j->entries[i];
        if (e->n_inputs != n || e->grad_enabled != grad) continue;
        int k = 0;
        while (k < n && failed_guard(&e->keys[k], inputs[k]) == GUARD_HOLDS) k++;
        if (k == n) return e;
    }
    return NULL;
}

/* The input names as the graph took them: make_fx_named suffixes a repeated
 * name and takes NULL for the default, and the graph checks none. Setting
 * each again applies tj_graph_set_input_name's rules (a name already held
 * is accepted as it is; a suffixed repeat is refused as used). */
static tj_status check_input_names(const tj_jit *j, tj_graph *g, int n)
{
    for (int i = 0; j->opts.input_names && i < n; i++)
        if (tj_graph_set_input_name(g, i, j->opts.input_names[i]) != TJ_OK) {
            char why[512];
            snprintf(why, sizeof why, "%s", tj_last_error());
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_jit_run: input_names[%d]: %s", i, why);
        }
    return TJ_OK;
}

typedef struct traced_call {
    const tj_jit *j;
    tj_tensor *const *inputs; /* the caller's */
    int n_outputs;            /* fn's, in the last trace */
    bool requires_grad[TJ_MAX_GRAPH_OUTPUTS]; /* per output */
} traced_call;

/* fn as traced, refusing what it did to the trace's copies of the inputs
 * that a plan cannot do to the caller's tensors: store a .grad
 * (tj_backward), or change requires_grad (tj_tensor_set_requires_grad, or
 * an in-place update by a value that requires grad, which gives the input a
 * history). Eagerly the caller's tensors would change: TJ_ERR_UNSUPPORTED,
 * a graph break for eager_fallback. */
static tj_status traced_fn(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    traced_call *c = ctx;
    tj_status st = c->j->fn(c->j->ctx, in, n, out, n_out);
    c->n_outputs = st == TJ_OK ? *n_out : 0;
    for (int k = 0; k < c->n_outputs; k++) c->requires_grad[k] = out[k] && tj_tensor_requires_grad(out[k]);
    for (int i = 0; st == TJ_OK && i < n; i++) {
        bool requires_grad = tj_tensor_requires_grad(c->inputs[i]);
        if (tj_tensor_grad(in[i]))
            st = tj_error(TJ_ERR_UNSUPPORTED, "tj_jit_run: the function stored a gradient into input %d's .grad "
                          "(tj_backward), which a plan cannot do; return the gradients (tj_autograd_grad), or set "
                          "eager_fallback", i);
        else if (tj_tensor_requires_grad(in[i]) != requires_grad)
            st = tj_error(TJ_ERR_UNSUPPORTED, "tj_jit_run: the function made input %d %s grad (%s), which a plan "
                          "cannot do; set eager_fallback", i, requires_grad ? "not require" : "require",
                          requires_grad ? "tj_tensor_set_requires_grad"
                                        : "tj_tensor_set_requires_grad, or an in-place update by a value that does");
    }
    return st;
}

/* fn's graph for these inputs, functionalised; NULL on error (*refused:
 * input_names', which no fallback hides). */
static tj_graph *trace(tj_jit *j, traced_call *call, tj_tensor *const *inputs, int n, bool *refused)
{
    tj_graph *g = tj_make_fx_named(traced_fn, call, inputs, n, j->opts.decompositions, TJ_TRACE_FAKE,
                                   j->opts.input_names);
    if (!g) return NULL;
    tj_status st = check_input_names(j, g, n);
    *refused = st != TJ_OK;
    if (st == TJ_OK && tj_pass_functionalize(g) < 0) st = tj_last_status();
    if (st == TJ_OK) return g;
    tj_graph_free(g);
    return NULL;
}

/* Whether calls with these inputs need their outputs' history: gradients
 * recorded, an input requiring grad and an output that does in the trace
 * `g`, and no input requiring grad updated in place (an optimiser's step in
 * a training step: the outputs' history would end in the parameters' old
 * values, which are gone after the call; its outputs get none, as a plan's). */
static bool differentiable(const traced_call *call, const tj_graph *g, tj_tensor *const *inputs, int n)
{
    bool any_input = false, any_output = false;
    for (int i = 0; i < n; i++) any_input |= tj_tensor_requires_grad(inputs[i]);
    for (int k = 0; k < call->n_outputs; k++) any_output |= call->requires_grad[k];
    for (int k = 0; k < tj_graph_num_outputs(g); k++) {
        int input = tj_graph_output_writeback(g, k);
        if (input >= 0 && tj_tensor_requires_grad(inputs[input])) return false;
    }
    return tj_grad_enabled() && any_input && any_output;
}

/* The forward graph to compile for these inputs (fn's, shown to on_graph;
 * for a differentiable signature, the forward half of the joint graph,
 * with e->backward the compiled backward half); NULL on error. */
static tj_graph *forward_graph(tj_jit *j, tj_tensor *const *inputs, int n, jit_entry *e, bool *refused)
{
    traced_call *call = tj_alloc(sizeof *call);
    if (!call) {
        tj_oom("tj_jit_run", sizeof *call);
        return NULL;
    }
    *call = (traced_call){.j = j, .inputs = inputs};
    tj_graph *g = trace(j, call, inputs, n, refused);
    e->n_fn = call->n_outputs;
    if (g && differentiable(call, g, inputs, n)) {
        tj_jit_outputs outs = {.n = call->n_outputs, .requires_grad = call->requires_grad, .graph = g};
        tj_graph *forward = NULL;
        tj_jit_differentiate(traced_fn, call, inputs, n, &j->opts, &outs, &forward, &e->backward, refused);
        tj_graph_free(g);
        g = forward;
    } else if (g && j->opts.on_graph) {
        tj_status st = j->opts.on_graph(j->opts.on_graph_ctx, g);
        if (st != TJ_OK) {
            *refused = true;
            tj_error_if_unrecorded(st, "tj_jit_run", "on_graph");
            tj_graph_free(g);
            g = NULL;
        }
    }
    tj_free(call, sizeof *call);
    return g;
}

/* The entry's plan and tables for fn's graph on these inputs; without a
 * plan (fn called eagerly) when that is unsupported and eager_fallback on. */
static tj_status entry_build(tj_jit *j, tj_tensor *const *inputs, int n, jit_entry *e)
{
    *e = (jit_entry){.n_inputs = n, .grad_enabled = tj_grad_enabled()};
    bool refused = false;
    tj_graph *g = forward_graph(j, inputs, n, e, &refused);
    if (g) {
        e->plan = tj_compile(g, &j->opts.compile);
        tj_graph_free(g);
    }
    if (!e->plan && !refused && !j->opts.eager_fallback && tj_last_status() == TJ_ERR_UNSUPPORTED) {
        /* what make_fx suggests (real mode) a jit does not do; this it does */
        char why[1024];
        snprintf(why, sizeof why, "%s", tj_last_error());
        return tj_error(TJ_ERR_UNSUPPORTED, "%s (tj_jit: set eager_fallback to call the function eagerly for these "
                        "inputs, as torch.compile falls back at a graph break)", why);
    }
    if (!e->plan && (refused || !j->opts.eager_fallback || tj_last_status() != TJ_ERR_UNSUPPORTED))
        return tj_last_status();
    const tj_plan *p = e->plan;
    /* sized as entry_free frees them: at least one element */
    size_t key_bytes = sizeof *e->keys * (size_t)(n ? n : 1), n_out = (size_t)(p && p->n_outputs ? p->n_outputs : 1);
    e->keys = tj_alloc(key_bytes);
    e->user_outputs = tj_alloc(sizeof(int) * n_out);
    e->slots = tj_alloc(sizeof(tj_tensor *) * n_out);
    if (!e->keys || !e->user_outputs || !e->slots)
        return tj_oom("tj_jit_run", key_bytes + (sizeof(int) + sizeof(tj_tensor *)) * n_out);
    for (int i = 0; i < n; i++) {
        key_of(inputs[i], &e->keys[i]);
        e->keys[i].offset_bound = p && p->values[p->input_values[i]].geometry_bound != NULL;
    }
    for (int k = 0; p && k < p->n_outputs; k++)
        if (p->writeback[k] < 0) e->user_outputs[e->n_user++] = k;
    if (!e->backward) e->n_fn = e->n_user;
    return TJ_OK;
}

/* Fake inputs only when the plan is not to run (or fn is traced through). */
static tj_status check_inputs(tj_tensor *const *inputs, int n, const char *fn, bool allow_fake)
{
    for (int i = 0; i < n; i++)
        if (!inputs[i] || (!allow_fake && tj_tensor_is_fake(inputs[i])))
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: input %d is %s", fn, i,
                            inputs[i] ? "a fake tensor (the plan runs on real ones)" : "NULL");
    return TJ_OK;
}

/* How far inputs are from entry e: the inputs failing one of its guards
 * (n + 1 when the count or the grad mode differs). */
static int distance(const jit_entry *e, tj_tensor *const *inputs, int n)
{
    if (e->n_inputs != n || e->grad_enabled != tj_grad_enabled()) return n + 1;
    int failing = 0;
    for (int i = 0; i < n; i++) failing += failed_guard(&e->keys[i], inputs[i]) != GUARD_HOLDS;
    return failing;
}

/* Why these inputs miss the cache, as TORCH_LOGS=recompiles says it: the
 * first guard they fail of the plan they are closest to (the fewest inputs
 * failing a guard; of those, the most recently used), so that a new
 * requires-grad flag is named as such after calls with other shapes. */
static void miss_reason(const tj_jit *j, tj_tensor *const *inputs, int n, char *buf, size_t size)
{
    const jit_entry *last = NULL;
    int last_distance = 0;
    for (int i = 0; i < j->n_entries; i++) {
        int d = distance(&j->entries[i], inputs, n);
        if (!last || d < last_distance || (d == last_distance && j->entries[i].last_used > last->last_used)) {
            last = &j->entries[i];
            last_distance = d;
        }
    }
    bool grad = tj_grad_enabled();
    if (!last) snprintf(buf, size, "first call");
    else if (last->n_inputs != n) snprintf(buf, size, "%d inputs, was %d", n, last->n_inputs);
    else if (last->grad_enabled != grad)
        snprintf(buf, size, "gradients %s, were %s", grad ? "recorded" : "off", grad ? "off" : "recorded");
    else
        for (int i = 0; i < n; i++) {
            const input_key *was = &last->keys[i];
            input_key now;
            key_of(inputs[i], &now);
            char a[128], b[128];
            switch (failed_guard(was, inputs[i])) {
            case GUARD_HOLDS: continue;
            case GUARD_DTYPE:
                snprintf(buf, size, "input %d: dtype %s, was %s", i, tj_dtype_name(now.dtype), tj_dtype_name(was->dtype));
                break;
            case GUARD_SHAPE:
                snprintf(buf, size, "input %d: shape %s, was %s", i, tj_shape_str(now.ndim, now.shape, a, sizeof a),
                         tj_shape_str(was->ndim, was->shape, b, sizeof b));
                break;
            case GUARD_STRIDES:
                snprintf(buf, size, "input %d: strides %s, was %s", i, tj_shape_str(now.ndim, now.strides, a, sizeof a),
                         tj_shape_str(was->ndim, was->strides, b, sizeof b));
                break;
            case GUARD_REQUIRES_GRAD:
                snprintf(buf, size, "input %d: requires_grad %s, was %s", i, now.requires_grad ? "true" : "false",
                         was->requires_grad ? "true" : "false");
                break;
            case GUARD_OFFSET:
                snprintf(buf, size, "input %d: storage offset %" PRId64 ", was %" PRId64 " (the graph is bound to it)",
                         i, now.offset, was->offset);
                break;
            }
            break;
        }
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* The cached entry for these inputs, or a new one (replacing the least
 * recently used at the cache limit); NULL on error. */
static jit_entry *entry_for(tj_jit *j, tj_tensor *const *inputs, int n)
{
    jit_entry *e = lookup(j, inputs, n);
    if (!e) {
        char why[320] = "";
        if (j->opts.log) miss_reason(j, inputs, n, why, sizeof why);
        double t0 = now_ms();
        jit_entry fresh;
        tj_status st = entry_build(j, inputs, n, &fresh);
        if (j->opts.log) {
            bool evicts = st == TJ_OK && j->n_entries == j->limit;
            fprintf(j->opts.log, "tj_jit: %s in %.2f ms (%s)%s\n",
                    st != TJ_OK  ? "tracing or compiling failed"
                    : fresh.plan ? "traced and compiled"
                                 : "traced, running eagerly (eager_fallback)",
                    now_ms() - t0, why, evicts ? "; evicting the least recently used plan" : "");
            /* the error, or the graph break's cause */
            if (st != TJ_OK || !fresh.plan) fprintf(j->opts.log, "  %s\n", tj_last_error());
        }
        if (st != TJ_OK) {
            entry_free(&fresh);
            return NULL;
        }
        j->stats.compiles++;
        j->stats.eager_signatures += !fresh.plan;
        if (j->n_entries < j->limit) e = &j->entries[j->n_entries++];
        else {
            e = &j->entries[0];
            for (int i = 1; i < j->n_entries; i++)
                if (j->entries[i].last_used < e->last_used) e = &j->entries[i];
            entry_free(e);
            j->stats.evictions++;
        }
        *e = fresh;
    }
    e->last_used = ++j->clock;
    return e;
}

static bool enter(tj_jit *j)
{
    if (!atomic_flag_test_and_set(&j->busy)) return true;
    tj_error(TJ_ERR_UNSUPPORTED, "tj_jit_run: another call of this jit is in progress (a jit runs one call at a time)");
    return false;
}

tj_plan *tj_jit_plan(tj_jit *j, tj_tensor *const *inputs, int n)
{
    if (!j || (!inputs && n) || n < 0) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_jit_plan: NULL jit or inputs, or a negative count");
        return NULL;
    }
    if (check_inputs(inputs, n, "tj_jit_plan", true) != TJ_OK || !enter(j)) return NULL;
    jit_entry *e = entry_for(j, inputs, n);
    atomic_flag_clear(&j->busy);
    if (e && !e->plan)
        tj_error(TJ_ERR_UNSUPPORTED, "tj_jit_plan: no plan: the function runs eagerly for these inputs (eager_fallback)");
    return e ? e->plan : NULL;
}

/* Runs e's plan: new tensors for its outputs not written back (fn's, then
 * the values saved for backward: room for e->n_user in outputs). */
static tj_status entry_run(jit_entry *e, tj_tensor *const *inputs, int n, tj_tensor **outputs)
{
    const tj_plan *p = e->plan;
    tj_status st = TJ_OK;
    for (int k = 0; k < p->n_outputs; k++) e->slots[k] = NULL;
    for (int u = 0; u < e->n_user && st == TJ_OK; u++) {
        const tj_pvalue *v = &p->values[p->output_values[e->user_outputs[u]]];
        if (!(e->slots[e->user_outputs[u]] = tj_tensor_empty(v->dtype, v->ndim, v->shape))) st = tj_last_status();
    }
    if (st == TJ_OK) st = tj_plan_run_into(e->plan, inputs, n, e->slots);
    for (int u = 0; u < e->n_user; u++) {
        tj_tensor **slot = &e->slots[e->user_outputs[u]];
        if (st != TJ_OK) tj_scope_drop(*slot);
        outputs[u] = st == TJ_OK ? *slot : NULL;
        *slot = NULL;
    }
    return st;
}

/* Runs a differentiable entry's forward plan and gives fn's outputs (into
 * `outputs`, owned as tj_plan_run's) the history that runs its backward
 * plan, which holds the saved values. */
static tj_status entry_run_differentiable(jit_entry *e, tj_tensor *const *inputs, int n, tj_tensor **outputs)
{
    tj_tensor *stack[64];
    tj_tensor **all = e->n_user <= 64 ? stack : tj_alloc(sizeof *all * (size_t)e->n_user);
    if (!all) return tj_oom("tj_jit_run", sizeof *all * (size_t)e->n_user);
    tj_status st = entry_run(e, inputs, n, all);
    if (st == TJ_OK) {
        /* the saved values: references of the history's, whatever scope is open */
        for (int u = e->n_fn; u < e->n_user; u++) {
            tj_tensor_retain(all[u]);
            tj_scope_drop(all[u]);
        }
        st = tj_jit_backward_attach(e->backward, inputs, n, all, all + e->n_fn);
        for (int k = 0; k < e->n_fn; k++)
            if (st == TJ_OK) outputs[k] = all[k];
            else tj_scope_drop(all[k]);
    }
    if (all != stack) tj_free(all, sizeof *all * (size_t)e->n_user);
    return st;
}

static tj_status too_few_outputs(int n_out, int max_outputs)
{
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_jit_run: the function returns %d output%s, outputs has room for %d", n_out,
                    n_out == 1 ? "" : "s", max_outputs);
}

/* fn called as it is, in a scope of its own, with room for as many outputs
 * as a trace gives it: new references to its outputs. */
static tj_status call_eagerly(tj_jit *j, tj_tensor *const *inputs, int n, tj_tensor **outputs, int max_outputs,
                              int *n_outputs)
{
    tj_tensor *out[TJ_MAX_GRAPH_OUTPUTS];
    int n_out = TJ_MAX_GRAPH_OUTPUTS;
    tj_scope *scope = tj_scope_begin();
    if (!scope) return tj_oom("tj_jit_run", sizeof(void *));
    tj_status st = tj_error_if_unrecorded(j->fn(j->ctx, inputs, n, out, &n_out), "tj_jit_run", "the function");
    if (st == TJ_OK) st = tj_trace_fn_check_outputs("tj_jit_run", out, n_out);
    if (st == TJ_OK && n_out > max_outputs) st = too_few_outputs(n_out, max_outputs);
    for (int k = 0; st == TJ_OK && k < n_out; k++) outputs[k] = tj_tensor_retain(out[k]);
    tj_scope_end(scope);
    for (int k = 0; st == TJ_OK && k < n_out; k++)
        if ((st = tj_scope_adopt(outputs[k])) != TJ_OK) {
            for (int i = k; i < n_out; i++) tj_tensor_release(outputs[i]);
            for (int i = 0; i < k; i++) tj_scope_drop(outputs[i]);
        }
    if (st == TJ_OK) *n_outputs = n_out;
    return st;
}

tj_status tj_jit_run(tj_jit *j, tj_tensor *const *inputs, int n, tj_tensor **outputs, int max_outputs,
                     int *n_outputs)
{
    if (!j || (!inputs && n) || n < 0 || !n_outputs || (!outputs && max_outputs > 0) || max_outputs < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "tj_jit_run: NULL jit, inputs or n_outputs, NULL outputs with room for %d, or a negative count",
                        max_outputs);
    *n_outputs = 0;
    /* called while traced (from a traced function, or another jit's fn):
     * fn is traced through, as make_fx traces through a torch.compile'd
     * function; a plan's steps would bypass the trace */
    bool traced = tj_mode_active(TJ_MAKE_FX_MODE);
    if (check_inputs(inputs, n, "tj_jit_run", traced) != TJ_OK || !enter(j)) return tj_last_status();
    jit_entry *e = traced ? NULL : entry_for(j, inputs, n);
    tj_status st = e || traced ? TJ_OK : tj_last_status();
    if (traced || (e && !e->plan)) {
        if ((st = call_eagerly(j, inputs, n, outputs, max_outputs, n_outputs)) == TJ_OK) j->stats.eager_calls++;
    } else if (e && e->n_fn > max_outputs)
        st = too_few_outputs(e->n_fn, max_outputs);
    else if (st == TJ_OK && (st = e->backward ? entry_run_differentiable(e, inputs, n, outputs)
                                              : entry_run(e, inputs, n, outputs)) == TJ_OK)
        *n_outputs = e->n_fn;
    if (st == TJ_OK) j->stats.calls++;
    atomic_flag_clear(&j->busy);
    return st;
}

tj_status tj_jit_stats(const tj_jit *j, tj_jit_statistics *out)
{
    if (!j || !out) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_jit_stats: NULL argument");
    *out = j->stats;
    out->plans = j->n_entries;
    return TJ_OK;
}
