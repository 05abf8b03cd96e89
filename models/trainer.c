/* Training runners for the three modes (see trainer.h). */
#include <stdlib.h>
#include <string.h>

#include "trainer.h"

#define MAX_PLANS 4

typedef struct compiled {
    int64_t batch;
    tj_plan *plan;
} compiled;

struct runner {
    model *m;
    run_mode mode;
    bool native_code;
    train_state state;
    tj_decomp_table *table;
    compiled train[MAX_PLANS], forward[MAX_PLANS];
    tj_tensor *last_logits;
};

bool run_mode_parse(const char *s, run_mode *out)
{
    static const char *names[] = {"eager", "traced", "decomposed"};
    for (int i = 0; s && i < 3; i++)
        if (!strcmp(s, names[i])) {
            *out = (run_mode)i;
            return true;
        }
    return false;
}

const char *run_mode_name(run_mode m)
{
    return m == MODE_EAGER ? "eager" : m == MODE_TRACED ? "traced" : "decomposed";
}

runner *runner_new(model *m, run_mode mode, bool native_code)
{
    runner *r = calloc(1, sizeof *r);
    if (!r) {
        tj_error(TJ_ERR_OUT_OF_MEMORY, "runner: out of memory");
        return NULL;
    }
    r->m = m;
    r->mode = mode;
    r->native_code = native_code;
    if ((m->def->trainable && train_state_init(m, &r->state) != TJ_OK) ||
        (mode == MODE_DECOMPOSED && !(r->table = tj_core_decompositions()))) {
        runner_free(r);
        return NULL;
    }
    return r;
}

void runner_free(runner *r)
{
    if (!r) return;
    for (int i = 0; i < MAX_PLANS; i++) {
        tj_plan_free(r->train[i].plan);
        tj_plan_free(r->forward[i].plan);
    }
    train_state_free(&r->state);
    tj_decomp_table_free(r->table);
    tj_tensor_release(r->last_logits);
    free(r);
}

train_state *runner_state(runner *r) { return &r->state; }

/* The plan for (kind, batch), traced in fake mode and compiled on first use. */
static tj_plan *plan_for(runner *r, step_kind kind, int64_t batch)
{
    compiled *cache = kind == STEP_TRAIN ? r->train : r->forward;
    for (int i = 0; i < MAX_PLANS; i++)
        if (cache[i].plan && cache[i].batch == batch) return cache[i].plan;
    int slot = 0;
    while (slot < MAX_PLANS - 1 && cache[slot].plan) slot++;
    tj_graph *g = step_trace(r->m, kind, batch, r->table, TJ_TRACE_FAKE);
    if (!g) return NULL;
    tj_compile_options opts = {.native_code = r->native_code};
    tj_plan *p = tj_compile(g, &opts);
    tj_graph_free(g);
    if (!p) return NULL;
    if (tj_plan_native_code_error(p)) {
        tj_error(TJ_ERR_UNSUPPORTED, "runner: native code not built: %s", tj_plan_native_code_error(p));
        tj_plan_free(p);
        return NULL;
    }
    tj_plan_free(cache[slot].plan);
    cache[slot] = (compiled){batch, p};
    return p;
}

tj_status runner_train_step(runner *r, tj_tensor *x, tj_tensor *y, double *loss)
{
    tj_scope *scope = tj_scope_begin();
    tj_status st = TJ_OK;
    if (r->mode == MODE_EAGER) {
        tj_tensor *l = step_train_eager(r->m, &r->state, x, y);
        if (!l) st = tj_last_status();
        else *loss = tj_tensor_item_at(l, 0);
    } else {
        tj_plan *p = plan_for(r, STEP_TRAIN, tj_tensor_size(x, 0));
        tj_tensor *inputs[4 * MODEL_MAX_PARAMS + 2];
        int n = step_inputs(r->m, &r->state, x, y, inputs);
        st = p ? tj_plan_run_into(p, inputs, n, NULL) : tj_last_status();
        if (st == TJ_OK) *loss = tj_tensor_item_at(tj_plan_context_output(tj_plan_default_context(p), 0), 0);
    }
    tj_scope_end(scope);
    return st;
}

tj_tensor *runner_forward(runner *r, tj_tensor *x)
{
    tj_tensor_release(r->last_logits);
    r->last_logits = NULL;
    tj_tensor *inputs[MODEL_MAX_PARAMS + 1];
    int n = step_inputs(r->m, NULL, x, NULL, inputs);
    if (r->mode == MODE_EAGER) {
        tj_scope *scope = tj_scope_begin();
        bool prev = tj_no_grad_begin();
        tj_tensor *logits = r->m->def->forward(r->m, inputs, x);
        tj_no_grad_end(prev);
        r->last_logits = tj_tensor_retain(logits);
        tj_scope_end(scope);
        return r->last_logits;
    }
    tj_plan *p = plan_for(r, STEP_FORWARD, tj_tensor_size(x, 0));
    if (!p || tj_plan_run_into(p, inputs, n, NULL) != TJ_OK) return NULL;
    return tj_plan_context_output(tj_plan_default_context(p), 0);
}

tj_status runner_train_stats(runner *r, int64_t batch, tj_plan_statistics *out)
{
    if (r->mode == MODE_EAGER) return tj_error(TJ_ERR_INVALID_ARGUMENT, "runner: eager mode has no plan");
    tj_plan *p = plan_for(r, STEP_TRAIN, batch);
    return p ? tj_plan_stats(p, out) : tj_last_status();
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
