/* Model benchmarks: forward pass and training step in eager, traced,
 * decomposed and jit modes, checked against each other, then timed (see
 * bench.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define WARM_STEPS 3 /* training steps from seed 0 before the state is saved */
#define N_MODES N_RUN_MODES
#define MAX_SAVED (4 * MODEL_MAX_PARAMS)

/* Tolerances of float32 round-off between modes (kernels and decompositions
 * differ in summation order). */
#define OUT_ATOL 1e-4
#define OUT_RTOL 1e-4
#define PARAM_ATOL 1e-5
#define PARAM_RTOL 1e-4

const char *const bench_model_names[] = {"mlp", "cnn", "gpt", "block768", NULL};

/* A model with its batch, optimiser state, the state every timed training
 * step starts from, the plans of the two replayed modes and jit mode's
 * compiled functions. */
typedef struct workload {
    model m;
    train_state s;
    tj_tensor *x, *y;
    tj_plan *forward[N_MODES], *train[N_MODES]; /* traced and decomposed modes' (the others stay NULL) */
    step_ctx ctx;                               /* the jits' */
    tj_jit *jit_forward, *jit_loss;             /* jit mode: the forward pass; the loss, with gradients */
    tj_tensor *jit_out[2];                      /* jit mode's last output, by step_kind (forward, train) */
    int n_saved;
    tj_tensor *saved_t[MAX_SAVED];
    void *saved[MAX_SAVED];
} workload;

typedef struct mode_case {
    workload *w;
    run_mode mode;
} mode_case;

static bool trains(const workload *w) { return w->m.def->trainable && w->y; }

static bool replayed(run_mode mode) { return mode == MODE_TRACED || mode == MODE_DECOMPOSED; }

/* Keeps `out` (NULL: an error) as jit mode's last output of `kind`. */
static tj_status keep_jit_output(workload *w, step_kind kind, tj_tensor *out)
{
    if (!out) return tj_last_status();
    tj_tensor_release(w->jit_out[kind]);
    w->jit_out[kind] = tj_tensor_retain(out);
    return TJ_OK;
}

/* ---- the state training steps start from ---- */

static tj_status snapshot(workload *w)
{
    tj_tensor *all[MAX_SAVED];
    int n = 0;
    for (int i = 0; i < w->m.n_params; i++) all[n++] = w->m.params[i];
    for (int i = 0; i < w->s.n; i++) all[n++] = w->s.tensors[i];
    for (int i = 0; i < n; i++) {
        if (!tj_tensor_is_contiguous(all[i])) return tj_error(TJ_ERR_UNSUPPORTED, "bench: a parameter is not contiguous");
        size_t bytes = (size_t)tj_tensor_numel(all[i]) * tj_dtype_size(tj_tensor_dtype(all[i]));
        if (!(w->saved[i] = malloc(bytes ? bytes : 1))) return tj_error(TJ_ERR_OUT_OF_MEMORY, "bench: out of memory");
        memcpy(w->saved[i], tj_tensor_data(all[i]), bytes);
        w->saved_t[i] = all[i];
        w->n_saved = i + 1;
    }
    return TJ_OK;
}

static tj_status restore(void *ctx)
{
    workload *w = ((mode_case *)ctx)->w;
    for (int i = 0; i < w->n_saved; i++) {
        tj_tensor *t = w->saved_t[i];
        memcpy(tj_tensor_data(t), w->saved[i], (size_t)tj_tensor_numel(t) * tj_dtype_size(tj_tensor_dtype(t)));
    }
    return TJ_OK;
}

/* ---- the timed calls ---- */

static tj_status run_forward(void *ctx)
{
    mode_case *c = ctx;
    workload *w = c->w;
    tj_tensor *in[MODEL_MAX_PARAMS + 1];
    int n = step_inputs(&w->m, NULL, w->x, NULL, in), n_out;
    if (replayed(c->mode)) return tj_plan_run_into(w->forward[c->mode], in, n, NULL);
    tj_scope *scope = tj_scope_begin();
    bool prev = tj_no_grad_begin();
    tj_tensor *out = NULL;
    tj_status st;
    if (c->mode == MODE_JIT)
        st = keep_jit_output(w, STEP_FORWARD, tj_jit_run(w->jit_forward, in, n, &out, 1, &n_out) == TJ_OK ? out : NULL);
    else st = (out = w->m.def->forward(&w->m, in, w->x)) ? TJ_OK : tj_last_status();
    tj_no_grad_end(prev);
    tj_scope_end(scope);
    return st;
}

/* The torch.compile way: the loss through the jit (forward plan), backward
 * (its backward plan), the eager optimiser. */
static tj_status run_train_jit(workload *w)
{
    tj_scope *scope = tj_scope_begin();
    tj_tensor *in[MODEL_MAX_PARAMS + 2], *loss = NULL;
    int n = step_loss_inputs(&w->m, w->x, w->y, in), n_out;
    tj_status st = n < 0 ? tj_last_status() : tj_jit_run(w->jit_loss, in, n, &loss, 1, &n_out);
    if (st == TJ_OK) st = step_backward_update(&w->m, &w->s, loss, in);
    if (st == TJ_OK) st = keep_jit_output(w, STEP_TRAIN, loss);
    tj_scope_end(scope);
    return st;
}

static tj_status run_train(void *ctx)
{
    mode_case *c = ctx;
    workload *w = c->w;
    if (c->mode == MODE_EAGER) {
        tj_scope *scope = tj_scope_begin();
        tj_tensor *loss = step_train_eager(&w->m, &w->s, w->x, w->y);
        tj_scope_end(scope);
        return loss ? TJ_OK : tj_last_status();
    }
    if (c->mode == MODE_JIT) return run_train_jit(w);
    tj_tensor *in[4 * MODEL_MAX_PARAMS + 2];
    int n = step_inputs(&w->m, &w->s, w->x, w->y, in);
    return tj_plan_run_into(w->train[c->mode], in, n, NULL);
}

/* The output of the last run of (kind, mode): a new reference. */
static tj_tensor *last_output(workload *w, step_kind kind, run_mode mode)
{
    if (mode == MODE_JIT) return tj_tensor_retain(w->jit_out[kind]);
    tj_plan *p = kind == STEP_TRAIN ? w->train[mode] : w->forward[mode];
    return tj_tensor_retain(tj_plan_context_output(tj_plan_default_context(p), 0));
}

/* ---- set-up ---- */

static void workload_free(workload *w)
{
    for (int i = 0; i < N_MODES; i++) {
        tj_plan_free(w->forward[i]);
        tj_plan_free(w->train[i]);
    }
    tj_jit_free(w->jit_forward);
    tj_jit_free(w->jit_loss);
    for (int i = 0; i < 2; i++) tj_tensor_release(w->jit_out[i]);
    for (int i = 0; i < w->n_saved; i++) free(w->saved[i]);
    train_state_free(&w->s);
    tj_tensor_release(w->x);
    tj_tensor_release(w->y);
    if (w->m.def) model_free(&w->m);
    memset(w, 0, sizeof *w);
}

/* TJ_ERR_UNSUPPORTED when p's native code was asked for and not built: the
 * loops' times would stand as native code's. NULL p: the error already set. */
static tj_status native_code_built(const tj_plan *p)
{
    if (!p) return tj_last_status();
    if (!tj_plan_native_code_error(p)) return TJ_OK;
    return tj_error(TJ_ERR_UNSUPPORTED, "bench: native code not built: %s", tj_plan_native_code_error(p));
}

static tj_plan *compile_step(workload *w, step_kind kind, int64_t batch, const tj_decomp_table *table,
                             bool native_code)
{
    tj_graph *g = step_trace(&w->m, kind, batch, table, TJ_TRACE_FAKE);
    tj_compile_options opts = {.native_code = native_code};
    tj_plan *p = g ? tj_compile(g, &opts) : NULL;
    tj_graph_free(g);
    if (native_code_built(p) != TJ_OK) {
        tj_plan_free(p);
        return NULL;
    }
    return p;
}

/* jit mode's compiled functions (new ones: plans depend on the thread
 * count), their plans compiled now for the inputs and grad mode of the
 * timed calls (jit mode's backward plan: with the forward one). */
static tj_status compile_jits(workload *w, bool native_code)
{
    tj_jit_free(w->jit_forward);
    tj_jit_free(w->jit_loss);
    w->jit_loss = NULL;
    w->ctx = (step_ctx){&w->m, w->s.n, false};
    tj_jit_options o = {.compile.native_code = native_code};
    if (!(w->jit_forward = tj_jit_new(step_function(STEP_FORWARD), &w->ctx, &o)) ||
        (trains(w) && !(w->jit_loss = tj_jit_new(step_function(STEP_LOSS), &w->ctx, &o))))
        return tj_last_status();
    tj_scope *scope = tj_scope_begin();
    tj_tensor *in[MODEL_MAX_PARAMS + 2];
    bool prev = tj_no_grad_begin();
    tj_status st = native_code_built(tj_jit_plan(w->jit_forward, in, step_inputs(&w->m, NULL, w->x, NULL, in)));
    tj_no_grad_end(prev);
    if (st == TJ_OK && trains(w)) {
        int n = step_loss_inputs(&w->m, w->x, w->y, in);
        st = n < 0 ? tj_last_status() : native_code_built(tj_jit_plan(w->jit_loss, in, n));
    }
    tj_scope_end(scope);
    return st;
}

/* Model from seed 0, its batch, WARM_STEPS eager steps (trainable models,
 * when `train`) and the saved state; workload_compile makes the plans. */
static tj_status workload_init(workload *w, const model_def *def, int64_t batch, bool train)
{
    memset(w, 0, sizeof *w);
    tj_status st = model_create(def, 0, &w->m);
    if (st != TJ_OK) return st;
    tj_tensor *y = NULL;
    if ((st = bench_batch(&w->m, batch, &w->x, &y)) != TJ_OK) return st;
    train = train && def->trainable;
    if (train) {
        w->y = y;
        if ((st = train_state_init(&w->m, &w->s)) != TJ_OK) return st;
        mode_case eager = {w, MODE_EAGER};
        for (int i = 0; i < WARM_STEPS && st == TJ_OK; i++) st = run_train(&eager);
    } else {
        tj_tensor_release(y);
    }
    return st == TJ_OK ? snapshot(w) : st;
}

/* The plans of both replayed modes and of jit mode, compiled (again) for
 * the current thread count: fusion and memory placement depend on it. */
static tj_status workload_compile(workload *w, int64_t batch, bool native_code)
{
    tj_decomp_table *core = tj_core_decompositions();
    tj_status st = core ? TJ_OK : tj_last_status();
    for (int mode = MODE_TRACED; mode <= MODE_DECOMPOSED && st == TJ_OK; mode++) {
        const tj_decomp_table *table = mode == MODE_DECOMPOSED ? core : NULL;
        tj_plan_free(w->forward[mode]);
        tj_plan_free(w->train[mode]);
        w->train[mode] = NULL;
        if (!(w->forward[mode] = compile_step(w, STEP_FORWARD, batch, table, native_code))) st = tj_last_status();
        else if (trains(w) && !(w->train[mode] = compile_step(w, STEP_TRAIN, batch, table, native_code)))
            st = tj_last_status();
    }
    tj_decomp_table_free(core);
    return st == TJ_OK ? compile_jits(w, native_code) : st;
}

/* ---- checks before timing ---- */

static tj_status mismatch_error(const workload *w, const char *what, run_mode mode, double err)
{
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "bench: %s %s: %s mode differs from eager mode (%.3g times the tolerance)",
                    w->m.def->id, what, run_mode_name(mode), err);
}

/* Forward outputs of the other modes against eager mode. */
static tj_status check_forward(workload *w)
{
    tj_scope *scope = tj_scope_begin();
    tj_tensor *in[MODEL_MAX_PARAMS + 1];
    step_inputs(&w->m, NULL, w->x, NULL, in);
    bool prev = tj_no_grad_begin();
    tj_tensor *ref = w->m.def->forward(&w->m, in, w->x);
    tj_no_grad_end(prev);
    tj_status st = ref ? TJ_OK : tj_last_status();
    for (int mode = MODE_TRACED; mode < N_MODES && st == TJ_OK; mode++) {
        mode_case c = {w, (run_mode)mode};
        if ((st = run_forward(&c)) != TJ_OK) break;
        tj_tensor *out = last_output(w, STEP_FORWARD, (run_mode)mode);
        double err = bench_mismatch(out, ref, OUT_ATOL, OUT_RTOL);
        tj_tensor_release(out);
        if (err > 1) st = mismatch_error(w, "forward", (run_mode)mode, err);
    }
    tj_scope_end(scope);
    return st;
}

/* One training step from the saved state in each mode: the loss and every
 * updated parameter against eager mode's. */
static tj_status check_train(workload *w)
{
    tj_scope *scope = tj_scope_begin();
    mode_case eager = {w, MODE_EAGER};
    restore(&eager);
    tj_tensor *loss = step_train_eager(&w->m, &w->s, w->x, w->y), *after[MODEL_MAX_PARAMS];
    tj_status st = loss ? TJ_OK : tj_last_status();
    for (int i = 0; i < w->m.n_params && st == TJ_OK; i++)
        if (!(after[i] = tj_clone(w->m.params[i]))) st = tj_last_status();
    for (int mode = MODE_TRACED; mode < N_MODES && st == TJ_OK; mode++) {
        mode_case c = {w, (run_mode)mode};
        restore(&c);
        if ((st = run_train(&c)) != TJ_OK) break;
        tj_tensor *l = last_output(w, STEP_TRAIN, (run_mode)mode);
        double err = bench_mismatch(l, loss, 0, 1e-5);
        tj_tensor_release(l);
        if (err > 1) st = mismatch_error(w, "training-step loss", (run_mode)mode, err);
        for (int i = 0; i < w->m.n_params && st == TJ_OK; i++)
            if ((err = bench_mismatch(w->m.params[i], after[i], PARAM_ATOL, PARAM_RTOL)) > 1)
                st = mismatch_error(w, w->m.names[i], (run_mode)mode, err);
    }
    restore(&eager);
    tj_scope_end(scope);
    return st;
}

/* ---- timing ---- */

static tj_status time_modes(workload *w, const char *name, step_kind kind, int threads, const bench_options *o,
                            double scale, const char *unit, bench_results *out)
{
    mode_case cases[N_MODES];
    bench_case bc[N_MODES];
    bench_timing t[N_MODES];
    for (int mode = 0; mode < N_MODES; mode++) {
        cases[mode] = (mode_case){w, (run_mode)mode};
        bc[mode] = (bench_case){kind == STEP_TRAIN ? restore : NULL, kind == STEP_TRAIN ? run_train : run_forward,
                                &cases[mode]};
    }
    tj_status st = bench_measure(bc, N_MODES, o->runs, 3, t);
    const char *what = kind == STEP_TRAIN ? "train" : "forward";
    for (int mode = 0; mode < N_MODES && st == TJ_OK; mode++) {
        tj_plan_statistics ps = {0};
        tj_plan *p = kind == STEP_TRAIN ? w->train[mode] : w->forward[mode];
        if (p && (st = tj_plan_stats(p, &ps)) != TJ_OK) break;
        st = bench_add(out, name, what, run_mode_name((run_mode)mode), threads, &t[mode], scale, unit,
                       p ? (long long)ps.arena_bytes : -1, p ? ps.n_kernels : 0);
    }
    if (st == TJ_OK && o->log) {
        fprintf(o->log,
                "  %s %s, %d thread%s: eager %.3f ms, traced %.3f ms, decomposed %.3f ms, jit %.3f ms (%d runs)\n",
                name, what, threads, threads > 1 ? "s" : "", t[MODE_EAGER].median_ms, t[MODE_TRACED].median_ms,
                t[MODE_DECOMPOSED].median_ms, t[MODE_JIT].median_ms, t[0].runs);
        fflush(o->log);
    }
    return st;
}

/* Forward (and training step when `train`) of model `id` at `batch` rows,
 * reported under `name` in `unit` (ms per call times `scale`). */
static tj_status bench_workload(const char *id, const char *name, int64_t batch, bool train, double scale,
                                const char *unit, const bench_options *o, bench_results *out)
{
    const model_def *def = model_find(id);
    if (!def) return tj_error(TJ_ERR_NOT_FOUND, "bench: unknown model '%s'", id);
    if (o->log) {
        fprintf(o->log, "%s: setting up (seed 0, %d eager steps, tracing and compiling the replayed and jit modes)\n",
                name, WARM_STEPS);
        fflush(o->log);
    }
    workload w;
    tj_status st = workload_init(&w, def, batch, train);
    for (int i = 0; i < o->n_threads && st == TJ_OK; i++) {
        tj_set_num_threads(o->threads[i]);
        st = workload_compile(&w, batch, o->native_code);
        if (st == TJ_OK) st = check_forward(&w);
        if (st == TJ_OK && trains(&w)) st = check_train(&w);
        if (st == TJ_OK) st = time_modes(&w, name, STEP_FORWARD, o->threads[i], o, scale, unit, out);
        if (st == TJ_OK && trains(&w)) st = time_modes(&w, name, STEP_TRAIN, o->threads[i], o, scale, unit, out);
    }
    workload_free(&w);
    return st;
}

tj_status bench_model(const char *id, const bench_options *o, bench_results *out)
{
    return bench_workload(id, id, 0, true, 1, "ms", o, out);
}

tj_status bench_model_b1(const bench_options *o, bench_results *out)
{
    return bench_workload("mlp", "mlp_b1", 1, false, 1e3, "us", o, out);
}

/* ---- batches and comparisons ---- */

static uint64_t mix(uint64_t z)
{
    z = (z + 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* int64 values in [0, classes) from a hash of (salt, index). */
static tj_tensor *labels(int ndim, const int64_t *shape, int64_t classes, uint64_t salt)
{
    tj_tensor *t = tj_tensor_empty(TJ_INT64, ndim, shape);
    if (!t) return NULL;
    int64_t *p = tj_tensor_data(t), n = tj_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) p[i] = (int64_t)(mix(salt * 0x100000001ull + (uint64_t)i) % (uint64_t)classes);
    return t;
}

tj_status bench_batch(const model *m, int64_t batch, tj_tensor **x, tj_tensor **y)
{
    const model_def *d = m->def;
    int64_t xs[4], ys[4];
    memcpy(xs, d->x_shape, sizeof xs);
    memcpy(ys, d->y_shape, sizeof ys);
    if (batch > 0) xs[0] = ys[0] = batch;
    bool tokens = d->x_dtype == TJ_INT64;
    tj_scope *scope = tj_scope_begin();
    tj_manual_seed(1);
    *x = tj_tensor_retain(tokens ? labels(d->x_ndim, xs, 256, 1) : tj_randn(xs, d->x_ndim, d->x_dtype));
    *y = *x && d->trainable ? tj_tensor_retain(labels(d->y_ndim, ys, tokens ? 256 : 10, 2)) : NULL;
    tj_status st = *x && (*y || !d->trainable) ? TJ_OK : tj_last_status();
    tj_scope_end(scope);
    if (st != TJ_OK) {
        tj_tensor_release(*x);
        *x = NULL;
    }
    return st;
}

double bench_mismatch(const tj_tensor *a, const tj_tensor *b, double atol, double rtol)
{
    if (!a || !b || tj_tensor_dtype(a) != TJ_FLOAT32 || tj_tensor_dtype(b) != TJ_FLOAT32 ||
        tj_tensor_ndim(a) != tj_tensor_ndim(b) ||
        memcmp(tj_tensor_shape(a), tj_tensor_shape(b), sizeof(int64_t) * (size_t)tj_tensor_ndim(a)))
        return HUGE_VAL;
    size_t n = (size_t)tj_tensor_numel(a);
    float *pa = malloc(sizeof(float) * (n ? n : 1)), *pb = malloc(sizeof(float) * (n ? n : 1));
    double worst = HUGE_VAL;
    if (pa && pb && tj_tensor_copy_to(a, pa) == TJ_OK && tj_tensor_copy_to(b, pb) == TJ_OK) {
        worst = 0;
        for (size_t i = 0; i < n; i++) {
            if (pa[i] == pb[i]) continue;
            double e = fabs((double)pa[i] - (double)pb[i]) / (atol + rtol * fabs((double)pb[i]));
            if (isnan(e)) {
                worst = HUGE_VAL;
                break;
            }
            if (e > worst) worst = e;
        }
    }
    free(pa);
    free(pb);
    return worst;
}
