/* Peak live bytes of one eager training step (forward, loss,
 * tj_autograd_grad) through the allocator hook, with the storage cache off
 * so that freed storage leaves at once. Two shapes of step:
 *   step    as models/step.c writes it: the caller's scope holds every
 *           intermediate result until the step ends;
 *   scoped  as a PyTorch loop: the forward runs in a scope that keeps only
 *           the loss, so the saved values hold the activations.
 * each with retain_graph (the graph keeps its saved values to the end of the
 * step, as tjit did before backward freed them) and without (the default).
 * Deterministic: no timing.
 *   build/bench/bench_backward_memory [model ...]    (default: mlp gpt) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models.h"
#include "tjit/tjit.h"

static size_t live, peak;

static void *count_alloc(void *ctx, size_t n)
{
    (void)ctx;
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 64)) return NULL;
    live += n;
    if (live > peak) peak = live;
    return p;
}

static void count_free(void *ctx, void *p, size_t n)
{
    (void)ctx;
    if (!p) return;
    live -= n;
    free(p);
}

/* Peak bytes above the live bytes at the start of one step. */
static size_t step_peak(model *m, tj_tensor *x, tj_tensor *y, bool scoped, bool retain)
{
    tj_scope *outer = tj_scope_begin();
    size_t base = live;
    peak = live;
    tj_tensor *leaves[MODEL_MAX_PARAMS], *grads[MODEL_MAX_PARAMS];
    for (int i = 0; i < m->n_params; i++) {
        leaves[i] = tj_tensor_detach(m->params[i]);
        tj_tensor_set_requires_grad(leaves[i], true);
    }
    tj_scope *inner = scoped ? tj_scope_begin() : NULL;
    tj_tensor *loss = m->def->loss(m, m->def->forward(m, leaves, x), y);
    if (inner) {
        loss = tj_scope_keep(loss); /* owned here, released after the outer scope */
        tj_scope_end(inner);
    }
    tj_backward_options o = {.retain_graph = retain};
    if (!loss || tj_autograd_grad_ex(&loss, 1, NULL, leaves, m->n_params, grads, &o) != TJ_OK) {
        fprintf(stderr, "bench_backward_memory: %s\n", tj_last_error());
        exit(1);
    }
    tj_scope_end(outer);
    if (scoped) tj_tensor_release(loss);
    return peak - base;
}

static tj_tensor *batch_tensor(tj_dtype dtype, int ndim, const int64_t *shape)
{
    tj_tensor *t = dtype == TJ_INT64 ? tj_zeros(shape, ndim, dtype) : tj_full(shape, ndim, tj_v_float(0.1), dtype);
    return tj_scope_keep(t);
}

int main(int argc, char **argv)
{
    const char *defaults[] = {"mlp", "gpt"};
    int n = argc > 1 ? argc - 1 : 2;
    const char *const *ids = argc > 1 ? (const char *const *)argv + 1 : defaults;
    tj_set_num_threads(1);
    tj_storage_cache_set_limit(0);
    tj_allocator a = {count_alloc, count_free, NULL};
    tj_set_allocator(&a);
    printf("%-6s %-7s %14s %14s %7s\n", "model", "step", "retain (MiB)", "free (MiB)", "ratio");
    for (int k = 0; k < n; k++) {
        const model_def *d = model_find(ids[k]);
        model m;
        if (!d || model_create(d, 1, &m) != TJ_OK) {
            fprintf(stderr, "bench_backward_memory: %s: %s\n", ids[k], d ? tj_last_error() : "unknown model");
            return 1;
        }
        tj_tensor *x = batch_tensor(d->x_dtype, d->x_ndim, d->x_shape), *y = batch_tensor(TJ_INT64, d->y_ndim, d->y_shape);
        for (int scoped = 0; scoped < 2; scoped++) {
            step_peak(&m, x, y, scoped, true); /* warm-up: lazily made constants */
            size_t kept = step_peak(&m, x, y, scoped, true), freed = step_peak(&m, x, y, scoped, false);
            printf("%-6s %-7s %14.2f %14.2f %7.3f\n", d->id, scoped ? "scoped" : "step", kept / 1048576.0,
                   freed / 1048576.0, (double)freed / (double)kept);
        }
        tj_tensor_release(x);
        tj_tensor_release(y);
        model_free(&m);
    }
    return 0;
}
