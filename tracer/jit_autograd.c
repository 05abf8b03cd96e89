/* Differentiable compiled functions (tracer/jit_autograd.h), as
 * AOTAutograd compiles a torch.compile'd function's forward and backward:
 * the joint graph is traced once per signature, split, and both halves
 * compiled; at each call the forward plan computes the outputs and the
 * values the backward needs, and the outputs' history runs the backward
 * plan on them. */
#include <stdatomic.h>
#include <string.h>

#include "jit_autograd.h"
#include "partition.h"
#include "plan_internal.h"

struct tj_jit_backward {
    atomic_int refs;
    tj_plan *plan;
    atomic_flag running; /* a pass runs the plan on its default context */
    int n_inputs;     /* fn's */
    int n_outputs;    /* fn's */
    int n_primals_read, *primal_of, n_primals_alloc; /* fn's inputs among the plan's first inputs */
    int n_saved;      /* the plan's next inputs */
    int n_tangents;   /* the plan's last inputs: the gradients of fn's outputs tangent_of[t] */
    int *tangent_of;
    int n_grads;      /* the plan's outputs: the gradients of fn's inputs grad_of[k] */
    int *grad_of;
};

static void backward_free(tj_jit_backward *b)
{
    tj_plan_free(b->plan);
    if (b->primal_of) tj_free(b->primal_of, sizeof(int) * (size_t)b->n_primals_alloc);
    if (b->tangent_of) tj_free(b->tangent_of, sizeof(int) * (size_t)(b->n_outputs ? b->n_outputs : 1));
    if (b->grad_of) tj_free(b->grad_of, sizeof(int) * (size_t)(b->n_inputs ? b->n_inputs : 1));
    tj_free(b, sizeof *b);
}

void tj_jit_backward_release(tj_jit_backward *b)
{
    if (b && atomic_fetch_sub(&b->refs, 1) == 1) backward_free(b);
}

/* ---- the joint graph ---- */

typedef struct joint_call {
    tj_trace_fn fn;
    void *ctx;
    int n_primals;
    tj_jit_backward *b; /* tangent_of read, grad_of and n_grads written */
} joint_call;

/* fn, then the gradients of its outputs that require grad (weighted by the
 * tangents) with respect to its inputs that do: fn's outputs, then those
 * gradients. */
static tj_status joint_fn(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    joint_call *c = ctx;
    tj_jit_backward *b = c->b;
    int room = *n_out, n_fn = room;
    tj_status st = c->fn(c->ctx, in, c->n_primals, out, &n_fn);
    if (st != TJ_OK) return st;
    if (n_fn != b->n_outputs)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_jit_run: the function returned %d outputs when traced with its "
                        "backward, %d before", n_fn, b->n_outputs);
    tj_tensor *diff[TJ_MAX_GRAPH_OUTPUTS], *targets[TJ_MAX_GRAPH_OUTPUTS], *grads[TJ_MAX_GRAPH_OUTPUTS];
    int target_of[TJ_MAX_GRAPH_OUTPUTS], n_targets = 0;
    for (int t = 0; t < b->n_tangents; t++) diff[t] = out[b->tangent_of[t]];
    for (int i = 0; i < c->n_primals && n_targets < TJ_MAX_GRAPH_OUTPUTS; i++)
        if (tj_tensor_requires_grad(in[i])) {
            target_of[n_targets] = i;
            targets[n_targets++] = in[i];
        }
    st = tj_autograd_grad(diff, b->n_tangents, in + c->n_primals, targets, n_targets, grads);
    b->n_grads = 0;
    for (int k = 0; st == TJ_OK && k < n_targets; k++) {
        if (!grads[k]) continue; /* an input no output depends on: no gradient (None) */
        if (n_fn + b->n_grads >= room)
            return tj_error(TJ_ERR_UNSUPPORTED, "tj_jit_run: the function's %d outputs and its inputs' gradients are "
                            "more than the %d a graph returns", n_fn, room);
        out[n_fn + b->n_grads] = grads[k];
        b->grad_of[b->n_grads++] = target_of[k];
    }
    *n_out = n_fn + b->n_grads;
    return st;
}

static tj_jit_backward *backward_new(int n_inputs, const tj_jit_outputs *outputs)
{
    tj_jit_backward *b = tj_alloc(sizeof *b);
    if (!b) {
        tj_oom("tj_jit_run", sizeof *b);
        return NULL;
    }
    *b = (tj_jit_backward){.n_inputs = n_inputs, .n_outputs = outputs->n};
    atomic_init(&b->refs, 1);
    atomic_flag_clear(&b->running);
    b->tangent_of = tj_alloc(sizeof(int) * (size_t)(outputs->n ? outputs->n : 1));
    b->grad_of = tj_alloc(sizeof(int) * (size_t)(n_inputs ? n_inputs : 1));
    if (!b->tangent_of || !b->grad_of) {
        tj_oom("tj_jit_run", sizeof(int) * (size_t)(outputs->n + n_inputs));
        backward_free(b);
        return NULL;
    }
    for (int k = 0; k < outputs->n; k++)
        if (outputs->requires_grad[k]) b->tangent_of[b->n_tangents++] = k;
    return b;
}

/* The joint graph of fn on the inputs and a contiguous tangent per output
 * that requires grad (named tangents_1, ... as AOTAutograd names them),
 * functionalised; NULL on error. */
static tj_graph *trace_joint(tj_trace_fn fn, void *fn_ctx, tj_tensor *const *inputs, int n, const tj_jit_options *opts,
                             const tj_jit_outputs *outputs, tj_jit_backward *b)
{
    int n_all = n + b->n_tangents;
    size_t bytes = (sizeof(tj_tensor *) + sizeof(char *) + 32) * (size_t)(n_all ? n_all : 1);
    tj_tensor **all = tj_alloc(bytes);
    if (!all) {
        tj_oom("tj_jit_run", bytes);
        return NULL;
    }
    const char **names = (const char **)(all + n_all);
    char(*tangent_names)[32] = (char(*)[32])(names + n_all);
    memcpy(all, inputs, sizeof *all * (size_t)n);
    for (int i = 0; i < n; i++) names[i] = opts->input_names ? opts->input_names[i] : NULL;
    tj_graph *g = NULL;
    tj_scope *scope = tj_scope_begin();
    bool made = scope != NULL;
    const tj_gnode *out = &outputs->graph->nodes[outputs->graph->output_node];
    for (int t = 0; made && t < b->n_tangents; t++) {
        const tj_gvalue *v = &outputs->graph->values[out->args[b->tangent_of[t]].u.v];
        made = (all[n + t] = tj_tensor_fake(v->dtype, v->ndim, v->shape)) != NULL; /* the scope's */
        snprintf(tangent_names[t], sizeof tangent_names[t], "tangents_%d", t + 1);
        names[n + t] = tangent_names[t];
    }
    joint_call call = {fn, fn_ctx, n, b};
    if (made) g = tj_make_fx_named(joint_fn, &call, all, n_all, opts->decompositions, TJ_TRACE_FAKE, names);
    if (scope) tj_scope_end(scope);
    tj_free(all, bytes);
    if (g && tj_pass_functionalize(g) < 0) {
        tj_graph_free(g);
        return NULL;
    }
    return g;
}

static tj_status show(const tj_jit_options *opts, tj_graph *g, bool *refused)
{
    if (!opts->on_graph) return TJ_OK;
    tj_status st = opts->on_graph(opts->on_graph_ctx, g);
    *refused = st != TJ_OK;
    return st == TJ_OK ? TJ_OK : tj_error_if_unrecorded(st, "tj_jit_run", "on_graph");
}

tj_status tj_jit_differentiate(tj_trace_fn fn, void *fn_ctx, tj_tensor *const *inputs, int n,
                               const tj_jit_options *opts, const tj_jit_outputs *outputs, tj_graph **forward,
                               tj_jit_backward **backward, bool *refused)
{
    *forward = NULL;
    *backward = NULL;
    *refused = false;
    tj_jit_backward *b = backward_new(n, outputs);
    if (!b) return tj_last_status();
    tj_graph *joint = trace_joint(fn, fn_ctx, inputs, n, opts, outputs, b);
    tj_partition parts = {0};
    tj_status st = joint ? tj_graph_partition(joint, n, outputs->n, &parts) : tj_last_status();
    tj_graph_free(joint);
    if (st == TJ_OK) st = show(opts, parts.forward, refused);
    if (st == TJ_OK) st = show(opts, parts.backward, refused);
    if (st == TJ_OK && !(b->plan = tj_compile(parts.backward, &opts->compile))) st = tj_last_status();
    if (st == TJ_OK) {
        b->n_saved = parts.n_saved;
        b->n_primals_read = parts.n_primals_read;
        b->primal_of = parts.primal_of;
        b->n_primals_alloc = parts.n_primals_alloc;
        parts.primal_of = NULL;
        *forward = parts.forward;
        parts.forward = NULL;
        *backward = b;
    } else
        backward_free(b);
    tj_partition_free(&parts);
    return st;
}

/* ---- each call's history ---- */

/* What one call's outputs' history keeps for its backward. */
typedef struct call_record {
    tj_jit_backward *b;   /* a reference */
    tj_tensor **primals;  /* b->n_primals_read inputs (references), then the b->n_saved saved values */
    uint32_t *versions;   /* of the primals, at the call */
} call_record;

static void record_free(void *ctx)
{
    call_record *r = ctx;
    int n = r->b->n_primals_read + r->b->n_saved;
    for (int k = 0; k < n; k++) tj_tensor_release(r->primals[k]);
    tj_free(r->primals, sizeof(tj_tensor *) * (size_t)(n ? n : 1));
    tj_free(r->versions, sizeof(uint32_t) * (size_t)(r->b->n_primals_read ? r->b->n_primals_read : 1));
    tj_jit_backward_release(r->b);
    tj_free(r, sizeof *r);
}

/* Runs b's plan: on its default context, or, while another pass runs it
 * there (on another thread, through the outputs of another call: they share
 * the plan), on a context of its own, as eager passes run side by side. */
static tj_status run_plan(tj_jit_backward *b, tj_tensor *const *in, int n, tj_tensor **grads)
{
    if (!atomic_flag_test_and_set(&b->running)) {
        tj_status st = tj_plan_run(b->plan, in, n, grads);
        atomic_flag_clear(&b->running);
        return st;
    }
    tj_plan_context *c = tj_plan_context_new(b->plan);
    tj_status st = c ? tj_plan_run_ctx(c, in, n, grads) : tj_last_status();
    tj_plan_context_free(c);
    return st;
}

/* The backward plan on the saved values and the outputs' gradients. */
static tj_status compiled_backward(void *ctx, tj_tensor *const *grad_outputs, int n_outputs, const bool *needed,
                                   tj_tensor **grad_inputs, int n_inputs)
{
    (void)n_outputs;
    (void)needed;
    (void)n_inputs;
    call_record *r = ctx;
    tj_jit_backward *b = r->b;
    for (int k = 0; k < b->n_primals_read; k++)
        if (tj_tensor_version(r->primals[k]) != r->versions[k])
            return tj_error(TJ_ERR_MODIFIED, "CompiledFunctionBackward: input %d of the compiled function, which its "
                            "backward reads, was modified in place since the call (version %u, was %u)",
                            b->primal_of[k], tj_tensor_version(r->primals[k]), r->versions[k]);
    const tj_plan *p = b->plan;
    int n_in = b->n_primals_read + b->n_saved + b->n_tangents;
    tj_tensor *stack[64];
    tj_tensor **in = n_in <= 64 ? stack : tj_alloc(sizeof *in * (size_t)n_in);
    tj_tensor *grads_stack[64];
    tj_tensor **grads = b->n_grads <= 64 ? grads_stack : tj_alloc(sizeof *grads * (size_t)b->n_grads);
    tj_status st = in && grads ? TJ_OK : tj_oom("CompiledFunctionBackward", sizeof *in * (size_t)(n_in + b->n_grads));
    for (int k = 0; st == TJ_OK && k < b->n_primals_read + b->n_saved; k++) in[k] = r->primals[k];
    for (int t = 0; st == TJ_OK && t < b->n_tangents; t++) {
        /* the plan takes each gradient contiguous, zeros where none flowed */
        tj_tensor *g = grad_outputs[t];
        const tj_pvalue *v = &p->values[p->input_values[b->n_primals_read + b->n_saved + t]];
        g = g ? tj_contiguous(g) : tj_zeros(v->shape, v->ndim, (int)v->dtype);
        if (!(in[b->n_primals_read + b->n_saved + t] = g)) st = tj_last_status();
    }
    if (st == TJ_OK) st = run_plan(b, in, n_in, grads);
    for (int k = 0; st == TJ_OK && k < b->n_grads; k++) grad_inputs[b->grad_of[k]] = grads[k];
    if (in && in != stack) tj_free(in, sizeof *in * (size_t)n_in);
    if (grads && grads != grads_stack) tj_free(grads, sizeof *grads * (size_t)b->n_grads);
    return st;
}

static const tj_autograd_function COMPILED_FUNCTION = {
    .name = "CompiledFunction", .backward = compiled_backward, .release = record_free};

tj_status tj_jit_backward_attach(tj_jit_backward *b, tj_tensor *const *inputs, int n, tj_tensor **outputs,
                                 tj_tensor **saved)
{
    int n_kept = b->n_primals_read + b->n_saved;
    call_record *r = tj_alloc(sizeof *r);
    tj_tensor **kept = r ? tj_alloc(sizeof *kept * (size_t)(n_kept ? n_kept : 1)) : NULL;
    uint32_t *versions = kept ? tj_alloc(sizeof *versions * (size_t)(b->n_primals_read ? b->n_primals_read : 1)) : NULL;
    if (!versions) {
        if (kept) tj_free(kept, sizeof *kept * (size_t)(n_kept ? n_kept : 1));
        if (r) tj_free(r, sizeof *r);
        for (int k = 0; k < b->n_saved; k++) tj_tensor_release(saved[k]);
        return tj_oom("tj_jit_run", sizeof *r + (sizeof *kept + sizeof *versions) * (size_t)n_kept);
    }
    for (int k = 0; k < b->n_primals_read; k++) {
        kept[k] = tj_tensor_retain(inputs[b->primal_of[k]]);
        versions[k] = tj_tensor_version(kept[k]);
    }
    memcpy(kept + b->n_primals_read, saved, sizeof *kept * (size_t)b->n_saved);
    atomic_fetch_add(&b->refs, 1);
    *r = (call_record){.b = b, .primals = kept, .versions = versions};
    /* the node's outputs: those that require grad in the trace (the
     * tangents'); the others stay as fn gave them, without history, as
     * AOTAutograd marks them non-differentiable */
    tj_tensor *differentiable[TJ_MAX_GRAPH_OUTPUTS];
    for (int t = 0; t < b->n_tangents; t++) differentiable[t] = outputs[b->tangent_of[t]];
    tj_status st = tj_autograd_function_apply(&COMPILED_FUNCTION, r, inputs, n, differentiable, b->n_tangents);
    for (int t = 0; t < b->n_tangents; t++) outputs[b->tangent_of[t]] = differentiable[t];
    return st;
}
