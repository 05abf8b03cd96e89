/* Training runners for the four modes (see trainer.h). */
#include <stdlib.h>
#include <string.h>

#include "trainer.h"

struct runner {
    model *m;
    run_mode mode;
    train_state state;
    tj_decomp_table *table;
    step_ctx ctx;
    tj_jit *train, *forward; /* all but eager mode: a plan per batch size (jit mode: the loss's) */
    tj_tensor *last_logits;
};

static const char *const mode_names[N_RUN_MODES] = {"eager", "traced", "decomposed", "jit"};

bool run_mode_parse(const char *s, run_mode *out)
{
    for (int i = 0; s && i < N_RUN_MODES; i++)
        if (!strcmp(s, mode_names[i])) {
            *out = (run_mode)i;
            return true;
        }
    return false;
}

const char *run_mode_name(run_mode m) { return m >= 0 && m < N_RUN_MODES ? mode_names[m] : "?"; }

runner *runner_new(model *m, run_mode mode, bool native_code)
{
    runner *r = calloc(1, sizeof *r);
    if (!r) {
        tj_error(TJ_ERR_OUT_OF_MEMORY, "runner: out of memory");
        return NULL;
    }
    r->m = m;
    r->mode = mode;
    if ((m->def->trainable && train_state_init(m, &r->state) != TJ_OK) ||
        (mode == MODE_DECOMPOSED && !(r->table = tj_core_decompositions()))) {
        runner_free(r);
        return NULL;
    }
    r->ctx = (step_ctx){m, r->state.n, true};
    tj_jit_options o = {.decompositions = r->table, .compile.native_code = native_code};
    step_kind train = mode == MODE_JIT ? STEP_LOSS : STEP_TRAIN;
    if (mode != MODE_EAGER && (!(r->train = tj_jit_new(step_function(train), &r->ctx, &o)) ||
                               !(r->forward = tj_jit_new(step_function(STEP_FORWARD), &r->ctx, &o)))) {
        runner_free(r);
        return NULL;
    }
    return r;
}

void runner_free(runner *r)
{
    if (!r) return;
    tj_jit_free(r->train);
    tj_jit_free(r->forward);
    train_state_free(&r->state);
    tj_decomp_table_free(r->table);
    tj_tensor_release(r->last_logits);
    free(r);
}

train_state *runner_state(runner *r) { return &r->state; }

/* Runs the step's plan for these inputs (traced and compiled on first use
 * per batch size): its one output, NULL on error. */
static tj_tensor *run_step(tj_jit *jit, tj_tensor *const *inputs, int n)
{
    tj_plan *p = tj_jit_plan(jit, inputs, n);
    if (p && tj_plan_native_code_error(p)) {
        tj_error(TJ_ERR_UNSUPPORTED, "runner: native code not built: %s", tj_plan_native_code_error(p));
        return NULL;
    }
    tj_tensor *out = NULL;
    int n_out;
    return p && tj_jit_run(jit, inputs, n, &out, 1, &n_out) == TJ_OK ? out : NULL;
}

/* loss = loss_fn(model(x), y); loss.backward(); opt.step(): the loss through
 * the jit, its gradients by the compiled backward plan. */
static tj_tensor *jit_train_step(runner *r, tj_tensor *x, tj_tensor *y)
{
    tj_tensor *inputs[MODEL_MAX_PARAMS + 2];
    int n = step_loss_inputs(r->m, x, y, inputs);
    tj_tensor *loss = n < 0 ? NULL : run_step(r->train, inputs, n);
    return loss && step_backward_update(r->m, &r->state, loss, inputs) == TJ_OK ? loss : NULL;
}

tj_status runner_train_step(runner *r, tj_tensor *x, tj_tensor *y, double *loss)
{
    tj_scope *scope = tj_scope_begin();
    tj_tensor *l, *inputs[4 * MODEL_MAX_PARAMS + 2];
    if (r->mode == MODE_EAGER) l = step_train_eager(r->m, &r->state, x, y);
    else if (r->mode == MODE_JIT) l = jit_train_step(r, x, y);
    else l = run_step(r->train, inputs, step_inputs(r->m, &r->state, x, y, inputs));
    tj_status st = l ? TJ_OK : tj_last_status();
    if (l) *loss = tj_tensor_item_at(l, 0);
    tj_scope_end(scope);
    return st;
}

tj_tensor *runner_forward(runner *r, tj_tensor *x)
{
    tj_tensor_release(r->last_logits);
    r->last_logits = NULL;
    tj_tensor *inputs[MODEL_MAX_PARAMS + 1];
    int n = step_inputs(r->m, NULL, x, NULL, inputs);
    tj_scope *scope = tj_scope_begin();
    bool prev = tj_no_grad_begin();
    tj_tensor *logits = r->mode == MODE_EAGER ? r->m->def->forward(r->m, inputs, x) : run_step(r->forward, inputs, n);
    tj_no_grad_end(prev);
    r->last_logits = tj_tensor_retain(logits);
    tj_scope_end(scope);
    return r->last_logits;
}

tj_status runner_train_stats(runner *r, int64_t batch, tj_plan_statistics *out)
{
    if (r->mode == MODE_EAGER) return tj_error(TJ_ERR_INVALID_ARGUMENT, "runner: eager mode has no plan");
    /* the plan is compiled for the inputs' signature: fake ones of this batch size will do */
    const model_def *d = r->m->def;
    int64_t xs[4], ys[4];
    memcpy(xs, d->x_shape, sizeof xs);
    memcpy(ys, d->y_shape, sizeof ys);
    xs[0] = ys[0] = batch;
    tj_scope *scope = tj_scope_begin();
    tj_tensor *x = tj_tensor_fake(d->x_dtype, d->x_ndim, xs), *y = tj_tensor_fake(TJ_INT64, d->y_ndim, ys);
    tj_tensor *inputs[4 * MODEL_MAX_PARAMS + 2];
    int n = -1;
    if (x && y) n = r->mode == MODE_JIT ? step_loss_inputs(r->m, x, y, inputs) : step_inputs(r->m, &r->state, x, y, inputs);
    tj_plan *p = n >= 0 ? tj_jit_plan(r->train, inputs, n) : NULL;
    tj_status st = p ? tj_plan_stats(p, out) : tj_last_status();
    tj_scope_end(scope);
    return st;
}

tj_status runner_train_jit_stats(runner *r, tj_jit_statistics *out)
{
    if (r->mode == MODE_EAGER) return tj_error(TJ_ERR_INVALID_ARGUMENT, "runner: eager mode has no jit");
    return tj_jit_stats(r->train, out);
}

tj_status make_batch(const model *m, const fashion_mnist *d, const int64_t *idx, int64_t n, tj_tensor **x, tj_tensor **y)
{
    int64_t xs[4];
    memcpy(xs, m->def->x_shape, sizeof xs);
    xs[0] = n;
    *x = tj_tensor_empty(TJ_FLOAT32, m->def->x_ndim, xs);
    *y = *x ? tj_tensor_empty(TJ_INT64, 1, &n) : NULL;
    if (!*y) return tj_last_status();
    const float *src = tj_tensor_data(d->images);
    const int64_t *lab = tj_tensor_data(d->labels);
    float *dx = tj_tensor_data(*x);
    int64_t *dy = tj_tensor_data(*y);
    for (int64_t i = 0; i < n; i++) {
        memcpy(dx + i * 784, src + idx[i] * 784, 784 * sizeof(float));
        dy[i] = lab[idx[i]];
    }
    return TJ_OK;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void shuffle_indices(int64_t *idx, int64_t n, uint64_t seed, int epoch)
{
    uint64_t s = seed * 1000003u + (uint64_t)epoch;
    for (int64_t i = 0; i < n; i++) idx[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(splitmix64(&s) % (uint64_t)(i + 1));
        int64_t t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
}

tj_status train_epoch(runner *r, const fashion_mnist *d, int64_t batch, uint64_t seed, int epoch, batch_done_fn on_batch,
                      void *ctx)
{
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(d->n ? d->n : 1));
    if (!idx) return tj_error(TJ_ERR_OUT_OF_MEMORY, "train_epoch: out of memory for %lld indices", (long long)d->n);
    shuffle_indices(idx, d->n, seed, epoch);
    int64_t n_batches = (d->n + batch - 1) / batch;
    tj_status st = TJ_OK;
    for (int64_t b = 0; b < n_batches && st == TJ_OK; b++) {
        int64_t start = b * batch, n = d->n - start < batch ? d->n - start : batch;
        tj_scope *scope = tj_scope_begin();
        tj_tensor *x, *y;
        double loss = 0;
        st = make_batch(r->m, d, idx + start, n, &x, &y);
        if (st == TJ_OK) st = runner_train_step(r, x, y, &loss);
        tj_scope_end(scope);
        if (st == TJ_OK && on_batch) on_batch(ctx, b + 1, n_batches, start + n, loss);
    }
    free(idx);
    return st;
}

tj_status evaluate(runner *r, const fashion_mnist *test, double *accuracy)
{
    int64_t correct = 0, batch = 1000;
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)batch);
    if (!idx) return tj_error(TJ_ERR_OUT_OF_MEMORY, "evaluate: out of memory");
    tj_status st = TJ_OK;
    for (int64_t start = 0; start < test->n && st == TJ_OK; start += batch) {
        int64_t n = test->n - start < batch ? test->n - start : batch;
        for (int64_t i = 0; i < n; i++) idx[i] = start + i;
        tj_scope *scope = tj_scope_begin();
        tj_tensor *x, *y;
        st = make_batch(r->m, test, idx, n, &x, &y);
        tj_tensor *logits = st == TJ_OK ? runner_forward(r, x) : NULL;
        tj_tensor *pred = logits ? tj_argmax(logits, true, 1, false) : NULL;
        if (!pred) st = tj_last_status();
        for (int64_t i = 0; st == TJ_OK && i < n; i++) correct += tj_tensor_item_at(pred, i) == tj_tensor_item_at(y, i);
        tj_scope_end(scope);
    }
    free(idx);
    *accuracy = (double)correct / (double)test->n;
    return st;
}
