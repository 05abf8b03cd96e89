/* Traced and eager step functions of the models (see step.h). */
#include <stdio.h>
#include <string.h>

#include "step.h"

static bool uses_adamw(const model *m) { return !strcmp(m->def->id, "gpt"); }

tj_status train_state_init(const model *m, train_state *s)
{
    memset(s, 0, sizeof *s);
    int per_param = uses_adamw(m) ? 3 : 1;
    for (int k = 0; k < per_param; k++)
        for (int i = 0; i < m->n_params; i++) {
            const tj_tensor *p = m->params[i];
            tj_scope *scope = tj_scope_begin();
            /* AdamW's third state tensor is its 0-dim step count */
            tj_tensor *t = k < 2 ? tj_zeros(tj_tensor_shape(p), tj_tensor_ndim(p), TJ_FLOAT32) : tj_zeros(NULL, 0, TJ_FLOAT32);
            if (t) tj_tensor_retain(t);
            tj_scope_end(scope);
            if (!t) {
                train_state_free(s);
                return tj_last_status();
            }
            s->tensors[s->n++] = t;
        }
    return TJ_OK;
}

const char *train_state_key(const model *m, int i)
{
    static const char *adamw[] = {"exp_avg", "exp_avg_sq", "step"};
    return uses_adamw(m) ? adamw[i / m->n_params] : "momentum_buffer";
}

void train_state_free(train_state *s)
{
    for (int i = 0; i < s->n; i++) tj_tensor_release(s->tensors[i]);
    memset(s, 0, sizeof *s);
}

int step_inputs(const model *m, const train_state *s, tj_tensor *x, tj_tensor *y, tj_tensor **inputs)
{
    int n = 0;
    for (int i = 0; i < m->n_params; i++) inputs[n++] = m->params[i];
    for (int i = 0; s && y && i < s->n; i++) inputs[n++] = s->tensors[i];
    inputs[n++] = x;
    if (y) inputs[n++] = y;
    return n;
}

static tj_status forward_fn(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    step_ctx *s = ctx;
    out[0] = s->m->def->forward(s->m, in, in[n - 1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

tj_status step_optimizer_update(const model *m, tj_tensor *const *params, tj_tensor *const *grads,
                                tj_tensor *const *state, bool capturable)
{
    int np = m->n_params;
    tj_status st;
    bool prev = tj_no_grad_begin();
    if (uses_adamw(m)) {
        tj_adamw_options o = tj_adamw_defaults();
        o.lr = 3e-4;
        o.capturable = capturable;
        st = tj_adamw_update(&o, params, grads, state, state + np, NULL, state + 2 * np, np);
    } else {
        tj_sgd_options o = tj_sgd_defaults(0.01);
        o.momentum = 0.9;
        /* zero buffers make the first step buf = grad, as PyTorch's clone does */
        st = tj_sgd_update(&o, params, grads, (tj_tensor **)state, np);
    }
    tj_no_grad_end(prev);
    return st;
}

int step_loss_inputs(const model *m, tj_tensor *x, tj_tensor *y, tj_tensor **inputs)
{
    int n = step_inputs(m, NULL, x, y, inputs);
    for (int i = 0; i < m->n_params; i++)
        if (!(inputs[i] = tj_tensor_detach(m->params[i])) || tj_tensor_set_requires_grad(inputs[i], true) != TJ_OK)
            return -1;
    return n;
}

tj_status step_backward_update(model *m, train_state *s, tj_tensor *loss, tj_tensor *const *leaves)
{
    tj_tensor *grads[MODEL_MAX_PARAMS];
    tj_status st = tj_backward(loss, NULL);
    for (int i = 0; st == TJ_OK && i < m->n_params; i++) grads[i] = tj_tensor_grad(leaves[i]);
    return st == TJ_OK ? step_optimizer_update(m, m->params, grads, s->tensors, false) : st;
}

/* The model and its loss: inputs params..., x, y. */
static tj_status loss_fn(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    step_ctx *s = ctx;
    out[0] = s->m->def->loss(s->m, s->m->def->forward(s->m, in, in[n - 2]), in[n - 1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* forward, loss, torch.autograd.grad, optimiser update (in place). */
static tj_status train_fn(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    step_ctx *s = ctx;
    model *m = s->m;
    int np = m->n_params;
    tj_tensor *const *state = in + np;
    tj_tensor *x = in[n - 2], *y = in[n - 1];
    tj_tensor *leaves[MODEL_MAX_PARAMS], *grads[MODEL_MAX_PARAMS];
    for (int i = 0; i < np; i++) {
        leaves[i] = tj_tensor_detach(in[i]); /* the same value to the tracer, with its own grad flag */
        if (!leaves[i] || tj_tensor_set_requires_grad(leaves[i], true) != TJ_OK) return tj_last_status();
    }
    tj_tensor *loss = m->def->loss(m, m->def->forward(m, leaves, x), y);
    if (!loss) return tj_last_status();
    tj_status st = tj_autograd_grad(&loss, 1, NULL, leaves, np, grads);
    if (st != TJ_OK) return st;
    if ((st = step_optimizer_update(m, in, grads, state, s->capturable)) != TJ_OK) return st;
    out[0] = tj_tensor_detach(loss);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

tj_trace_fn step_function(step_kind kind)
{
    return kind == STEP_TRAIN ? train_fn : kind == STEP_LOSS ? loss_fn : forward_fn;
}

tj_tensor *step_train_eager(model *m, train_state *s, tj_tensor *x, tj_tensor *y)
{
    tj_tensor *inputs[4 * MODEL_MAX_PARAMS + 2], *out[1];
    int n = step_inputs(m, s, x, y, inputs), n_out = 1;
    step_ctx ctx = {m, s->n, false};
    return train_fn(&ctx, inputs, n, out, &n_out) == TJ_OK ? out[0] : NULL;
}

/* Placeholders named like the state_dict: fc1.weight -> fc1_weight. */
static void name_inputs(tj_graph *g, const model *m, step_kind kind, int n_state)
{
    char name[160];
    int k = 0;
    for (int i = 0; i < m->n_params; i++) {
        size_t j = 0;
        for (const char *p = m->names[i]; *p && j + 1 < sizeof name; p++) name[j++] = *p == '.' ? '_' : *p;
        name[j] = 0;
        tj_graph_set_input_name(g, k++, name);
    }
    for (int i = 0; kind == STEP_TRAIN && i < n_state; i++) {
        snprintf(name, sizeof name, "state%d", i);
        tj_graph_set_input_name(g, k++, name);
    }
    tj_graph_set_input_name(g, k++, "x");
    if (kind != STEP_FORWARD) tj_graph_set_input_name(g, k, "y");
}

tj_graph *step_trace(model *m, step_kind kind, int64_t batch, const tj_decomp_table *table, tj_tracing_mode mode)
{
    const model_def *d = m->def;
    if (kind != STEP_FORWARD && !d->trainable) {
        tj_error(TJ_ERR_UNSUPPORTED, "%s: forward only, no training step", d->id);
        return NULL;
    }
    tj_scope *scope = tj_scope_begin();
    train_state s = {0};
    tj_graph *g = NULL;
    int64_t xs[4], ys[4];
    memcpy(xs, d->x_shape, sizeof xs);
    memcpy(ys, d->y_shape, sizeof ys);
    if (batch > 0) xs[0] = ys[0] = batch;
    /* a real-mode trace runs the kernels: it needs real inputs (zeros are
     * valid tokens and class labels) */
    bool fake = mode == TJ_TRACE_FAKE;
    tj_tensor *x = fake ? tj_tensor_fake(d->x_dtype, d->x_ndim, xs) : tj_zeros(xs, d->x_ndim, d->x_dtype);
    tj_tensor *y = kind == STEP_FORWARD ? NULL
                   : fake               ? tj_tensor_fake(TJ_INT64, d->y_ndim, ys)
                                        : tj_zeros(ys, d->y_ndim, TJ_INT64);
    if (!x || (kind != STEP_FORWARD && !y) || (kind == STEP_TRAIN && train_state_init(m, &s) != TJ_OK)) goto done;
    tj_tensor *inputs[4 * MODEL_MAX_PARAMS + 2];
    int n = step_inputs(m, kind == STEP_TRAIN ? &s : NULL, x, y, inputs);
    step_ctx ctx = {m, s.n, true};
    g = tj_make_fx(step_function(kind), &ctx, inputs, n, table, mode);
    if (g && kind == STEP_TRAIN && tj_pass_functionalize(g) < 0) {
        tj_graph_free(g);
        g = NULL;
    }
    if (g) name_inputs(g, m, kind, s.n);
done:
    train_state_free(&s);
    tj_scope_end(scope);
    return g;
}
