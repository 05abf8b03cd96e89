/* Replay benchmarks.
 *
 *   overhead   a graph of 10,000 aten::add.Tensor on float32[1] (x = x + y,
 *              chained), in ns per node: the plan (results left in the
 *              context, no allocation), the interpreter (tj_graph_run) and
 *              eager calls of the same function; next to the add kernel
 *              called directly 10,000 times in a loop (the floor: the
 *              difference is the plan's own cost per node); with 1 and 2
 *              kernel threads, and with two threads each running its own
 *              context of one plan at once.
 *   models     forward of the WORKLOADS.md models (mlp at batch 1 and 64,
 *              cnn, gpt, block768): eager against the traced graph replayed,
 *              in us per call, timed in alternation; the speed-up is the
 *              median of the per-pair ratios; with 1 and 2 threads.
 *   train      training steps of mlp, cnn and gpt (forward, loss, backward,
 *              optimiser, functionalised): the memory plan (arena against
 *              the naive sum and the lower bound, write-backs), and eager
 *              steps against replayed ones in alternation.
 *   jit        the mlp forward at batch 1 through a compiled function
 *              (tj_jit_run: the signature's look-up, then the plan) against
 *              tj_plan_run of the same plan's graph, both returning new
 *              output tensors, in alternation: the jit's cost per call.
 *   jit_grad   forward and backward of the mlp, cnn and gpt losses (the
 *              parameters' .grad cleared, the loss computed, tj_backward):
 *              eagerly against the loss through a compiled function with
 *              gradients (tj_jit_run's forward plan, then its backward plan
 *              run by tj_backward), in alternation, 1 thread.
 *   fusion     the forward passes and training steps of the models, traced
 *              (no decomposition), each compiled twice, with no_fusion and
 *              with the defaults, and the two plans timed in alternation:
 *              fusion's A/B in one process, where the drift of the machine
 *              affects both sides alike.
 *
 * Every figure is the median of RUNS timed runs after a warm-up (overhead:
 * wall time, fastest run and the thread's CPU time, which other load on the
 * machine does not inflate); minor page faults per run (getrusage) are
 * printed next to the replay figures.
 *
 * Usage: bench_replay [--no-fusion] [--flush-denormal] [overhead|models|train|fusion|jit|jit_grad]...
 * (default: the first three; --no-fusion compiles their plans without
 * fusion, for A/B runs across processes; --flush-denormal flushes denormals
 * to zero, tj_set_flush_denormal, as `tjit bench --flush-denormal`) */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models.h"
#include "models/bench_clock.h"
#include "runtime/internal.h"
#include "step.h"
#include "tjit/tjit.h"

#define RUNS 25
#define CHAIN 10000

static double now_ns(void) { return bench_clock_ns(CLOCK_MONOTONIC); }

/* CPU time of the calling thread: time spent descheduled does not count,
 * so it is robust to other load on the machine. */
static double cpu_ns(void) { return bench_clock_ns(CLOCK_THREAD_CPUTIME_ID); }

static void fail(const char *what)
{
    fprintf(stderr, "bench_replay: %s: %s\n", what, tj_last_error());
    exit(1);
}

typedef struct figure {
    double median_ns, min_ns; /* wall time per run */
    double cpu_ns;            /* median of the thread's CPU time per run */
    double faults;            /* minor page faults per run */
} figure;

typedef void (*body_fn)(void *ctx);

/* One timed run, bracketed the same way for every body (as `tjit bench`
 * does): the page-fault count and the thread CPU clock outside, the wall
 * clock inside. Reading the CPU clock or getrusage is a system call, about
 * 1.3 us each on this VM (kvm-clock), so wall time holds none of them, and
 * CPU time about one CPU-clock read on every side alike; nothing else may
 * sit between the readings, or the body after it pays for it. */
typedef struct sample {
    double wall, cpu;
    long faults;
} sample;

static sample time_run(body_fn body, void *ctx)
{
    long f0 = bench_minor_faults();
    double c0 = cpu_ns(), w0 = now_ns();
    body(ctx);
    double w1 = now_ns(), c1 = cpu_ns();
    return (sample){w1 - w0, c1 - c0, bench_minor_faults() - f0};
}

static figure measure(body_fn body, void *ctx)
{
    double t[RUNS], c[RUNS];
    long faults = 0;
    body(ctx); /* warm-up: caches, arenas, thread pool */
    body(ctx);
    for (int r = 0; r < RUNS; r++) {
        sample x = time_run(body, ctx);
        t[r] = x.wall;
        c[r] = x.cpu;
        faults += x.faults;
    }
    qsort(t, RUNS, sizeof *t, bench_cmp_double);
    qsort(c, RUNS, sizeof *c, bench_cmp_double);
    return (figure){t[RUNS / 2], t[0], c[RUNS / 2], (double)faults / RUNS};
}

/* Two bodies timed in alternation (a, b, a, b, ...), so that the machine's
 * drift affects both alike: their medians (wall and the calling thread's CPU
 * time) and the medians of the ratios a/b over the pairs. With one
 * thread every kernel runs on the calling thread, so its CPU time is the
 * whole cost, free of the time other processes take from it. */
typedef struct pair_figure {
    figure a, b;
    double ratio_wall, ratio_cpu;
} pair_figure;

static pair_figure measure_pair(body_fn a, body_fn b, void *ctx)
{
    double ta[RUNS], tb[RUNS], ca[RUNS], cb[RUNS], rw[RUNS], rc[RUNS];
    a(ctx);
    b(ctx);
    long fa = 0, fb = 0;
    for (int r = 0; r < RUNS; r++) {
        sample x = time_run(a, ctx), y = time_run(b, ctx);
        ta[r] = x.wall;
        tb[r] = y.wall;
        ca[r] = x.cpu;
        cb[r] = y.cpu;
        fa += x.faults;
        fb += y.faults;
        rw[r] = ta[r] / tb[r];
        rc[r] = ca[r] / cb[r];
    }
    qsort(ta, RUNS, sizeof *ta, bench_cmp_double);
    qsort(tb, RUNS, sizeof *tb, bench_cmp_double);
    qsort(ca, RUNS, sizeof *ca, bench_cmp_double);
    qsort(cb, RUNS, sizeof *cb, bench_cmp_double);
    qsort(rw, RUNS, sizeof *rw, bench_cmp_double);
    qsort(rc, RUNS, sizeof *rc, bench_cmp_double);
    return (pair_figure){{ta[RUNS / 2], ta[0], ca[RUNS / 2], (double)fa / RUNS},
                         {tb[RUNS / 2], tb[0], cb[RUNS / 2], (double)fb / RUNS},
                         rw[RUNS / 2], rc[RUNS / 2]};
}

/* How every plan is compiled: the defaults, or with --no-fusion every
 * operator as its own kernel (the fusion's A/B in one binary). */
static tj_compile_options compile_options;

/* ---- a traced function and its three ways of running ---- */
typedef struct subject {
    tj_trace_fn fn;
    void *fn_ctx;
    tj_tensor **in;
    int n_in;
    tj_graph *g;
    tj_plan *p;
} subject;

static void run_eager(void *ctx)
{
    subject *s = ctx;
    tj_tensor *out[TJ_MAX_GRAPH_OUTPUTS];
    int n_out = TJ_MAX_GRAPH_OUTPUTS;
    tj_scope *sc = tj_scope_begin();
    if (s->fn(s->fn_ctx, s->in, s->n_in, out, &n_out) != TJ_OK) fail("eager");
    tj_scope_end(sc);
}

static void run_interpreter(void *ctx)
{
    subject *s = ctx;
    tj_tensor *out[TJ_MAX_GRAPH_OUTPUTS];
    tj_scope *sc = tj_scope_begin();
    if (tj_graph_run(s->g, s->in, s->n_in, out) != TJ_OK) fail("tj_graph_run");
    tj_scope_end(sc);
}

static void run_plan(void *ctx)
{
    subject *s = ctx;
    if (tj_plan_run_into(s->p, s->in, s->n_in, NULL) != TJ_OK) fail("tj_plan_run_into");
}

static void subject_compile(subject *s)
{
    s->g = tj_make_fx(s->fn, s->fn_ctx, s->in, s->n_in, NULL, TJ_TRACE_REAL);
    if (!s->g) fail("make_fx");
    s->p = tj_compile(s->g, &compile_options);
    if (!s->p) fail("tj_compile");
}

/* Compiles the plan again for the current thread count (thread-aware
 * placement and fusion depend on it). */
static void subject_recompile(subject *s)
{
    tj_plan_free(s->p);
    s->p = tj_compile(s->g, &compile_options);
    if (!s->p) fail("tj_compile");
}

static void subject_free(subject *s)
{
    tj_plan_free(s->p);
    tj_graph_free(s->g);
}

/* ---- overhead: 10,000 chained adds on float32[1] ---- */
static tj_status fn_chain(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0];
    for (int i = 0; i < CHAIN && x; i++) x = tj_add(x, in[1]); /* released when the caller's scope ends */
    out[0] = x;
    *n_out = 1;
    return x ? TJ_OK : tj_last_status();
}

/* The add kernel alone, called CHAIN times on one float32[1] in place
 * (x = x + y, as the plan's in-place reuse makes it). */
typedef struct kernel_loop {
    tj_value args[3];
    tj_tensor *outs[1];
} kernel_loop;

static void run_kernel(void *ctx)
{
    kernel_loop *k = ctx;
    tj_kernel_fn fn = TJ_OPS(add_Tensor)->kernel;
    for (int i = 0; i < CHAIN; i++)
        if (fn(k->args, k->outs) != TJ_OK) fail("add kernel");
}

typedef struct two_ctx {
    subject *s;
    tj_plan_context *c;
    pthread_barrier_t *start;
    double ns, cpu; /* per run: wall, thread CPU time */
} two_ctx;

static void *context_worker(void *arg)
{
    two_ctx *w = arg;
    for (int i = 0; i < 3; i++) tj_plan_run_ctx_into(w->c, w->s->in, w->s->n_in, NULL);
    pthread_barrier_wait(w->start);
    double t0 = now_ns(), c0 = cpu_ns();
    for (int r = 0; r < RUNS; r++)
        if (tj_plan_run_ctx_into(w->c, w->s->in, w->s->n_in, NULL) != TJ_OK) fail("context run");
    w->cpu = (cpu_ns() - c0) / RUNS;
    w->ns = (now_ns() - t0) / RUNS;
    return NULL;
}

/* Two threads, each with its own context of one plan, at once: ns per node
 * seen by each thread (the slower one), wall and CPU time. */
static void two_contexts(subject *s, double *wall, double *cpu)
{
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 2);
    two_ctx w[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        w[i] = (two_ctx){s, tj_plan_context_new(s->p), &start, 0};
        if (!w[i].c) fail("tj_plan_context_new");
        pthread_create(&th[i], NULL, context_worker, &w[i]);
    }
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) tj_plan_context_free(w[i].c);
    pthread_barrier_destroy(&start);
    *wall = (w[0].ns > w[1].ns ? w[0].ns : w[1].ns) / CHAIN;
    *cpu = (w[0].cpu > w[1].cpu ? w[0].cpu : w[1].cpu) / CHAIN;
}

static void bench_overhead(void)
{
    int64_t one = 1;
    tj_tensor *in[2] = {tj_tensor_from_data(TJ_FLOAT32, 1, &one, (float[]){1.0f}),
                        tj_tensor_from_data(TJ_FLOAT32, 1, &one, (float[]){0.5f})};
    subject s = {fn_chain, NULL, in, 2, NULL, NULL};
    subject_compile(&s);
    tj_plan_statistics st;
    tj_plan_stats(s.p, &st);
    printf("overhead: %d x aten::add.Tensor on float32[1]; plan: %d kernels, arena %zu bytes (naive %zu)\n", CHAIN,
           st.n_kernels, st.arena_bytes, st.naive_bytes);
    tj_tensor *acc = tj_tensor_from_data(TJ_FLOAT32, 1, &one, (float[]){1.0f});
    kernel_loop kl = {{tj_v_tensor(acc), tj_v_tensor(in[1]), tj_v_int(1)}, {acc}};
    printf("ns per node: wall median (fastest run) / thread CPU time median\n");
    printf("%-8s %22s %22s %22s %22s %13s %8s\n", "threads", "replay", "add kernel alone", "interpreter", "eager",
           "eager/replay", "faults");
    for (int nt = 1; nt <= 2; nt++) {
        tj_set_num_threads(nt);
        figure r = measure(run_plan, &s), k = measure(run_kernel, &kl), i = measure(run_interpreter, &s),
               e = measure(run_eager, &s);
        const figure *f[4] = {&r, &k, &i, &e};
        printf("%-8d", nt);
        for (int j = 0; j < 4; j++) {
            char cell[64];
            snprintf(cell, sizeof cell, "%.1f (%.1f) / %.1f", f[j]->median_ns / CHAIN, f[j]->min_ns / CHAIN,
                     f[j]->cpu_ns / CHAIN);
            printf(" %22s", cell);
        }
        printf(" %12.1fx %8.1f\n", e.cpu_ns / r.cpu_ns, r.faults);
    }
    tj_tensor_release(acc);
    tj_set_num_threads(1);
    double wall, cpu;
    two_contexts(&s, &wall, &cpu);
    printf("two contexts of one plan in two threads at once (1 kernel thread each): %.1f ns/node per thread "
           "(CPU time %.1f)\n\n", wall, cpu);
    subject_free(&s);
    tj_tensor_release(in[0]);
    tj_tensor_release(in[1]);
}

/* ---- models: forward, eager against replay ---- */
typedef struct model_run {
    model m;
    int64_t batch;
} model_run;

/* inputs: the parameters, then x */
static tj_status fn_forward(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    model_run *mr = ctx;
    out[0] = mr->m.def->forward(&mr->m, in, in[n - 1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_tensor *model_input(const model_def *d, int64_t batch)
{
    int64_t shape[4];
    memcpy(shape, d->x_shape, sizeof shape);
    if (batch > 0) shape[0] = batch;
    tj_tensor *x = tj_tensor_empty(d->x_dtype, d->x_ndim, shape);
    if (!x) fail("model input");
    int64_t n = tj_tensor_numel(x);
    if (d->x_dtype == TJ_INT64) {
        int64_t *p = tj_tensor_data(x);
        for (int64_t i = 0; i < n; i++) p[i] = (i * 7919) % 256;
    } else {
        float *p = tj_tensor_data(x);
        for (int64_t i = 0; i < n; i++) p[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
    }
    return x;
}

/* Targets of a trainable model's batch: (i * 7) % 10. */
static tj_tensor *model_targets(const model_def *d)
{
    int64_t ys[4];
    memcpy(ys, d->y_shape, sizeof ys);
    tj_tensor *y = tj_tensor_empty(TJ_INT64, d->y_ndim, ys);
    if (!y) fail("targets");
    int64_t *yd = tj_tensor_data(y);
    for (int64_t i = 0; i < tj_tensor_numel(y); i++) yd[i] = (i * 7) % 10;
    return y;
}

static void bench_model(const char *id, int64_t batch, const char *label)
{
    const model_def *d = model_find(id);
    if (!d) {
        printf("%-14s (model not available)\n", label);
        return;
    }
    model_run mr = {.batch = batch};
    if (model_create(d, 0, &mr.m) != TJ_OK) fail("model_create");
    tj_tensor *in[MODEL_MAX_PARAMS + 1];
    memcpy(in, mr.m.params, sizeof(tj_tensor *) * (size_t)mr.m.n_params);
    in[mr.m.n_params] = model_input(d, batch);
    subject s = {fn_forward, &mr, in, mr.m.n_params + 1, NULL, NULL};
    subject_compile(&s);
    for (int nt = 1; nt <= 2; nt++) {
        tj_set_num_threads(nt);
        subject_recompile(&s);
        tj_plan_statistics st;
        tj_plan_stats(s.p, &st);
        pair_figure f = measure_pair(run_eager, run_plan, &s);
        printf("%-14s %7d %10.1f %10.1f %10.1f %10.1f %8.2fx %8.2fx %7.1f %8d %10.2f %10.2f\n", label, nt,
               f.a.median_ns * 1e-3, f.b.median_ns * 1e-3, f.a.cpu_ns * 1e-3, f.b.cpu_ns * 1e-3, f.ratio_wall,
               f.ratio_cpu, f.b.faults, st.n_kernels, st.arena_bytes / 1048576.0, st.naive_bytes / 1048576.0);
    }
    subject_free(&s);
    tj_tensor_release(in[mr.m.n_params]);
    model_free(&mr.m);
}

static void bench_models(void)
{
    printf("models, forward: eager vs traced replay (us per call, median of %d alternated pairs; wall and the\n"
           "calling thread's CPU time; speed-up: median of the per-pair ratios eager/replay)\n", RUNS);
    printf("%-14s %7s %10s %10s %10s %10s %9s %9s %7s %8s %10s %10s\n", "model", "threads", "eager", "replay",
           "eager CPU", "repl. CPU", "wall x", "CPU x", "faults", "kernels", "arena MiB", "naive MiB");
    bench_model("mlp", 1, "mlp (batch 1)");
    bench_model("mlp", 0, "mlp (batch 64)");
    bench_model("cnn", 0, "cnn");
    bench_model("gpt", 0, "gpt");
    bench_model("block768", 0, "block768");
    printf("\n");
}

/* ---- jit: a compiled function against its plan ---- */
typedef struct jit_run {
    subject s;
    tj_jit *jit;
} jit_run;

static void run_plan_outputs(void *ctx)
{
    subject *s = &((jit_run *)ctx)->s;
    tj_tensor *out[1];
    tj_scope *sc = tj_scope_begin();
    if (tj_plan_run(s->p, s->in, s->n_in, out) != TJ_OK) fail("tj_plan_run");
    tj_scope_end(sc);
}

static void run_jit(void *ctx)
{
    jit_run *r = ctx;
    tj_tensor *out[1];
    int n_out;
    tj_scope *sc = tj_scope_begin();
    if (tj_jit_run(r->jit, r->s.in, r->s.n_in, out, 1, &n_out) != TJ_OK) fail("tj_jit_run");
    tj_scope_end(sc);
}

static void bench_jit(void)
{
    const model_def *d = model_find("mlp");
    model_run mr = {.batch = 1};
    if (!d || model_create(d, 0, &mr.m) != TJ_OK) fail("model_create");
    tj_tensor *in[MODEL_MAX_PARAMS + 1];
    memcpy(in, mr.m.params, sizeof(tj_tensor *) * (size_t)mr.m.n_params);
    in[mr.m.n_params] = model_input(d, 1);
    tj_set_num_threads(1);
    jit_run r = {{fn_forward, &mr, in, mr.m.n_params + 1, NULL, NULL}, tj_jit_new(fn_forward, &mr, NULL)};
    if (!r.jit) fail("tj_jit_new");
    subject_compile(&r.s);
    pair_figure f = measure_pair(run_jit, run_plan_outputs, &r);
    printf("jit: mlp forward at batch 1 (%d inputs), 1 thread, us per call (median of %d alternated pairs)\n",
           r.s.n_in, RUNS);
    printf("tj_jit_run %.2f (CPU %.2f), tj_plan_run %.2f (CPU %.2f): the jit's cost %.0f ns of CPU time per call "
           "(ratio %.3fx)\n\n", f.a.median_ns * 1e-3, f.a.cpu_ns * 1e-3, f.b.median_ns * 1e-3, f.b.cpu_ns * 1e-3,
           f.a.cpu_ns - f.b.cpu_ns, f.ratio_cpu);
    tj_jit_free(r.jit);
    subject_free(&r.s);
    tj_tensor_release(in[mr.m.n_params]);
    model_free(&mr.m);
}

/* ---- training steps: memory plan, eager against replay ---- */
/* ---- jit_grad: forward and backward through a compiled function ---- */
typedef struct grad_run {
    model m;
    tj_tensor *in[MODEL_MAX_PARAMS + 2]; /* the parameters (requiring grad), x, y */
    tj_jit *jit;
} grad_run;

/* inputs: the parameters, x, y; output: the loss */
static tj_status fn_loss(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const model *m = ctx;
    out[0] = m->def->loss(m, m->def->forward(m, in, in[n - 2]), in[n - 1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static void clear_grads(grad_run *r)
{
    for (int i = 0; i < r->m.n_params; i++)
        if (tj_tensor_set_grad(r->m.params[i], NULL) != TJ_OK) fail("tj_tensor_set_grad");
}

/* One step: .grad cleared, the loss computed eagerly or through the jit, backward. */
static void grad_step(grad_run *r, bool jit)
{
    clear_grads(r);
    tj_scope *sc = tj_scope_begin();
    tj_tensor *loss;
    int n_out, n = r->m.n_params + 2;
    tj_status st = jit ? tj_jit_run(r->jit, r->in, n, &loss, 1, &n_out) : fn_loss(&r->m, r->in, n, &loss, &n_out);
    if (st != TJ_OK || tj_backward(loss, NULL) != TJ_OK) fail(jit ? "tj_jit_run and backward" : "eager step");
    tj_scope_end(sc);
}

static void run_grad_eager(void *ctx) { grad_step(ctx, false); }
static void run_grad_jit(void *ctx) { grad_step(ctx, true); }

static void bench_jit_grad(void)
{
    tj_set_num_threads(1);
    printf("jit_grad: forward, loss and backward (.grad of every parameter), eager vs a compiled function with\n"
           "gradients (AOTAutograd: forward plan, backward plan), 1 thread, us per step (median of %d pairs)\n", RUNS);
    printf("%-10s %10s %10s %10s %10s %9s\n", "model", "eager", "jit", "eager CPU", "jit CPU", "CPU x");
    static const char *const ids[3] = {"mlp", "cnn", "gpt"};
    for (int k = 0; k < 3; k++) {
        const model_def *d = model_find(ids[k]);
        grad_run r = {0};
        if (!d || model_create(d, 0, &r.m) != TJ_OK) fail("model_create");
        for (int i = 0; i < r.m.n_params; i++) {
            if (tj_tensor_set_requires_grad(r.m.params[i], true) != TJ_OK) fail("requires_grad");
            r.in[i] = r.m.params[i];
        }
        r.in[r.m.n_params] = model_input(d, 0);
        r.in[r.m.n_params + 1] = model_targets(d);
        if (!(r.jit = tj_jit_new(fn_loss, &r.m, NULL))) fail("tj_jit_new");
        pair_figure f = measure_pair(run_grad_eager, run_grad_jit, &r);
        printf("%-10s %10.1f %10.1f %10.1f %10.1f %8.2fx\n", ids[k], f.a.median_ns * 1e-3, f.b.median_ns * 1e-3,
               f.a.cpu_ns * 1e-3, f.b.cpu_ns * 1e-3, f.ratio_cpu);
        tj_jit_free(r.jit);
        tj_tensor_release(r.in[r.m.n_params]);
        tj_tensor_release(r.in[r.m.n_params + 1]);
        model_free(&r.m);
    }
    printf("\n");
}

typedef struct train_run {
    model m[2];           /* eager's and replay's copies, from one seed */
    train_state state[2];
    tj_tensor *x, *y;
    tj_tensor *in[3 * MODEL_MAX_PARAMS + 2];
    int n_in;
    tj_plan *p;
} train_run;

static void run_train_eager(void *ctx)
{
    train_run *t = ctx;
    tj_scope *sc = tj_scope_begin();
    if (!step_train_eager(&t->m[0], &t->state[0], t->x, t->y)) fail("eager training step");
    tj_scope_end(sc);
}

static void run_train_plan(void *ctx)
{
    train_run *t = ctx;
    if (tj_plan_run_into(t->p, t->in, t->n_in, NULL) != TJ_OK) fail("replayed training step");
}

static void bench_train_model(const char *id)
{
    const model_def *d = model_find(id);
    train_run t = {0};
    for (int k = 0; k < 2; k++)
        if (model_create(d, 0, &t.m[k]) != TJ_OK || train_state_init(&t.m[k], &t.state[k]) != TJ_OK) fail("model");
    t.x = model_input(d, 0);
    t.y = model_targets(d);
    tj_graph *g = step_trace(&t.m[1], STEP_TRAIN, 0, NULL, TJ_TRACE_FAKE);
    if (!g) fail("step_trace");
    t.n_in = step_inputs(&t.m[1], &t.state[1], t.x, t.y, t.in);
    for (int nt = 1; nt <= 2; nt++) {
        tj_set_num_threads(nt); /* the plan for this thread count */
        tj_plan_free(t.p);
        t.p = tj_compile(g, &compile_options);
        if (!t.p) fail("tj_compile");
        tj_plan_statistics st;
        tj_plan_stats(t.p, &st);
        if (nt == 1)
            printf("%-6s %7d %6d %9.2f %9.2f %7.1f%% %9.2f %8d %6d (%d)\n", id, st.n_kernels, st.n_views,
                   st.arena_bytes / 1048576.0, st.naive_bytes / 1048576.0,
                   100.0 * (double)st.arena_bytes / (double)st.naive_bytes, st.lower_bound_bytes / 1048576.0,
                   st.n_inplace, st.n_writeback, st.n_writeback_direct);
        pair_figure f = measure_pair(run_train_eager, run_train_plan, &t);
        printf("       %d thread%s: eager %.2f ms, replay %.2f ms wall; CPU %.2f / %.2f ms; eager/replay %.2fx wall, "
               "%.2fx CPU; replay faults/run %.1f\n", nt, nt > 1 ? "s" : " ", f.a.median_ns * 1e-6, f.b.median_ns * 1e-6,
               f.a.cpu_ns * 1e-6, f.b.cpu_ns * 1e-6, f.ratio_wall, f.ratio_cpu, f.b.faults);
    }
    tj_plan_free(t.p);
    tj_graph_free(g);
    for (int k = 0; k < 2; k++) {
        train_state_free(&t.state[k]);
        model_free(&t.m[k]);
    }
    tj_tensor_release(t.x);
    tj_tensor_release(t.y);
}

static void bench_train(void)
{
    printf("training steps (step_trace(STEP_TRAIN), default batch): memory plan, then eager against replay\n"
           "(median of %d alternated pairs, each side updating its own parameters)\n", RUNS);
    printf("%-6s %7s %6s %9s %9s %8s %9s %8s %s\n", "model", "kernels", "views", "arena MiB", "naive MiB", "arena %",
           "lower MiB", "in place", "write-backs (direct)");
    bench_train_model("mlp");
    bench_train_model("cnn");
    bench_train_model("gpt");
    printf("\n");
}

/* ---- fusion: one graph compiled without and with fusion, in alternation ---- */
typedef struct fusion_run {
    tj_plan *p[2]; /* no_fusion, default */
    tj_tensor **in;
    int n_in;
} fusion_run;

static void run_plan_index(const fusion_run *r, int k)
{
    if (tj_plan_run_into(r->p[k], r->in, r->n_in, NULL) != TJ_OK) fail("replay");
}
static void run_unfused(void *ctx) { run_plan_index(ctx, 0); }
static void run_fused(void *ctx) { run_plan_index(ctx, 1); }

static void bench_fusion_step(const char *id, step_kind kind)
{
    const model_def *d = model_find(id);
    model m;
    train_state state = {0};
    bool train = kind == STEP_TRAIN;
    if (!d || model_create(d, 0, &m) != TJ_OK || (train && train_state_init(&m, &state) != TJ_OK)) fail("model");
    tj_tensor *x = model_input(d, 0), *y = train ? model_targets(d) : NULL;
    tj_graph *g = step_trace(&m, kind, 0, NULL, TJ_TRACE_FAKE);
    if (!g) fail("step_trace");
    tj_tensor *in[3 * MODEL_MAX_PARAMS + 2];
    fusion_run r = {.in = in, .n_in = step_inputs(&m, train ? &state : NULL, x, y, in)};
    for (int nt = 1; nt <= 2; nt++) {
        tj_set_num_threads(nt); /* the plans for this thread count */
        int kernels[2];
        for (int k = 0; k < 2; k++) {
            tj_compile_options o = {.no_fusion = k == 0};
            tj_plan_statistics st;
            if (!(r.p[k] = tj_compile(g, &o))) fail("tj_compile");
            tj_plan_stats(r.p[k], &st);
            kernels[k] = st.n_kernels;
        }
        pair_figure f = measure_pair(run_unfused, run_fused, &r);
        printf("%-9s %-7s %7d %9d %9d %10.1f %10.1f %10.1f %10.1f %8.3fx %8.3fx\n", id,
               train ? "train" : "forward", nt, kernels[0], kernels[1], f.a.median_ns * 1e-3,
               f.b.median_ns * 1e-3, f.a.cpu_ns * 1e-3, f.b.cpu_ns * 1e-3, f.ratio_wall, f.ratio_cpu);
        for (int k = 0; k < 2; k++) tj_plan_free(r.p[k]);
    }
    tj_graph_free(g);
    tj_tensor_release(x);
    tj_tensor_release(y);
    if (train) train_state_free(&state);
    model_free(&m);
}

static void bench_fusion(void)
{
    printf("fusion: traced plans compiled with no_fusion (unfused) and with the defaults (fused), timed in\n"
           "alternation (us per call, median of %d pairs; wall and the calling thread's CPU time;\n"
           "speed-up: median of the per-pair ratios unfused/fused)\n", RUNS);
    printf("%-9s %-7s %7s %9s %9s %10s %10s %10s %10s %9s %9s\n", "model", "step", "threads", "kernels", "(fused)",
           "unfused", "fused", "unf. CPU", "fused CPU", "wall x", "CPU x");
    static const char *const ids[] = {"mlp", "cnn", "gpt", "block768"};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        bench_fusion_step(ids[i], STEP_FORWARD);
        if (model_find(ids[i])->trainable) bench_fusion_step(ids[i], STEP_TRAIN);
    }
    printf("\n");
}

static const char USAGE[] =
    "usage: bench_replay [--no-fusion] [--flush-denormal] [overhead|models|train|fusion|jit|jit_grad]...\n";

int main(int argc, char **argv)
{
    static const struct option options[] = {{"no-fusion", no_argument, NULL, 'n'},
                                             {"flush-denormal", no_argument, NULL, 'f'},
                                             {"help", no_argument, NULL, 'h'},
                                             {0}};
    for (int c; (c = getopt_long(argc, argv, "h", options, NULL)) != -1;) {
        if (c == 'n') compile_options.no_fusion = true;
        else if (c == 'f') tj_set_flush_denormal(true);
        else if (c == 'h') {
            printf("%s\nReplay benchmarks (the head comment of bench/bench_replay.c says what each measures):\n"
                   "  overhead  ns per node of a 10,000-add graph: plan, interpreter, eager\n"
                   "  models    model forwards, eager against replay\n"
                   "  train     training steps: memory plan, eager against replay\n"
                   "  fusion    each model's fused and unfused plans in alternation\n"
                   "  jit       a compiled function's cost per call against its plan\n"
                   "  jit_grad  loss forward and backward, eager against a compiled function with gradients\n"
                   "Default: overhead, models, train.\n", USAGE);
            return 0;
        } else {
            fputs(USAGE, stderr);
            return 2;
        }
    }
    int first = optind;
    bool all = argc <= first;
    for (int i = first; i < argc; i++)
        if (strcmp(argv[i], "overhead") && strcmp(argv[i], "models") && strcmp(argv[i], "train") &&
            strcmp(argv[i], "fusion") && strcmp(argv[i], "jit") && strcmp(argv[i], "jit_grad")) {
            fputs(USAGE, stderr);
            return 2;
        }
    for (int i = 0; i < (all ? 1 : argc - first); i++) {
        const char *what = all ? NULL : argv[i + first];
        if (!what || !strcmp(what, "overhead")) bench_overhead();
        if (!what || !strcmp(what, "models")) bench_models();
        if (!what || !strcmp(what, "train")) bench_train();
        if (what && !strcmp(what, "fusion")) bench_fusion();
        if (what && !strcmp(what, "jit")) bench_jit();
        if (what && !strcmp(what, "jit_grad")) bench_jit_grad();
    }
    return 0;
}
