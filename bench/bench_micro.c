/* Micro-benchmarks of the runtime core.
 *
 *   dispatch      ns per tj_add of two float32[1] tensors (a new result each
 *                 call, released each time), with no mode and with one
 *                 pass-through mode that redispatches;
 *   elementwise   add, exp, gelu (erf) and gelu (tanh) over float32[16 Mi] contiguous
 *                 tensors in GB/s (bytes read + written), next to a memcpy of
 *                 the same bytes measured in the same rounds, with 1 and 2
 *                 threads; the ratio to memcpy is the median of the
 *                 per-round ratios (with 1 thread also from the thread's CPU
 *                 time, which time spent descheduled does not inflate);
 *   allocator     what the storage cache and huge pages save (issue 3): gelu
 *                 of float32[16 Mi] into a new tensor each call with the
 *                 cache on and off, and the first touch of a fresh 64 MiB
 *                 block with and without transparent huge pages, 1 thread.
 *
 * Every figure is the median of timed runs (dispatch: 401 runs of 1000
 * calls; throughput: 25 rounds of 4 calls); minor page faults per call
 * (getrusage) are printed next to each, since first-touch faults cost about
 * 10 us per 4 KiB page on this machine. The dispatch figures also give the
 * thread's CPU time per call, which time spent descheduled (a busy machine)
 * does not inflate.
 *
 * upsample: upsample_bilinear2d.vec of f32[8, 64, 64, 64] by scale
 * factors [2, 2] (align_corners false), 1 thread; bench/torch_upsample.py
 * times PyTorch on the same call.
 *
 * index: x[idx] (aten::index.Tensor with one int64 index tensor) against
 * aten::index_select of the same rows, on tables from f32[100000, 256]
 * gathered with 4096 indices down to f32[1000, 64] with 32, and one
 * x[:, idx] on dim 1; 1 thread, the two operators alternated run by run
 * (401 runs of a few calls each, each operator first in every other run),
 * median time per call of each and the median of the per-run ratios.
 *
 * fmod: fmod and remainder of two float32[16 Mi] tensors in GB/s next to
 * memcpy, 1 thread, as the elementwise figures.
 *
 * tanh: tanh (and exp, for scale) of float32[1 Mi] (4 MiB in, 4 MiB out)
 * into a new tensor each call, in ns per element and GB/s (bytes read +
 * written), with 1 and 2 threads: inputs uniform in [-3, 3) in random
 * order (nearly every vector mixes |x| < 0.625 and larger, both paths of
 * kernels/tanh.h) and in [-0.5, 0.5); 25 runs of 20 calls.
 *
 * Usage: bench_micro [dispatch|elementwise|allocator|upsample|index|fmod|tanh]...   (default: all) */
#include <cblas.h>
#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "models/bench_clock.h"
#include "tjit/tjit.h"

#define RUNS 25
/* dispatch: many short runs, so that most of them run undisturbed on a
 * loaded machine (a run that is preempted refills its caches after) */
#define DISPATCH_RUNS 401
#define DISPATCH_CALLS 1000
#define ELEMENTWISE_N ((int64_t)16 << 20)
#define ELEMENTWISE_CALLS 4

static double now_ns(void) { return bench_clock_ns(CLOCK_MONOTONIC); }

/* One measured figure: the median time per call over `runs` runs of
 * `calls` calls each, and the minor page faults per call over all runs. */
typedef struct {
    double ns_per_call;     /* median */
    double min_ns_per_call; /* fastest run: less sensitive to other load */
    double cpu_ns_per_call; /* median of the thread's CPU time: excludes time descheduled */
    double faults_per_call;
} figure;

typedef void (*body_fn)(void *ctx, int calls);

static figure measure(body_fn body, void *ctx, int calls, int runs)
{
    double t[DISPATCH_RUNS], cpu[DISPATCH_RUNS];
    body(ctx, calls); /* warm-up: caches, storage cache, thread pool */
    long f0 = bench_minor_faults();
    for (int r = 0; r < runs; r++) {
        double c = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID), s = now_ns();
        body(ctx, calls);
        t[r] = (now_ns() - s) / calls;
        cpu[r] = (bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c) / calls;
    }
    long f1 = bench_minor_faults();
    qsort(t, (size_t)runs, sizeof *t, bench_cmp_double);
    qsort(cpu, (size_t)runs, sizeof *cpu, bench_cmp_double);
    figure f = {t[runs / 2], t[0], cpu[runs / 2], (double)(f1 - f0) / ((double)runs * calls)};
    return f;
}

static void fail(const char *what)
{
    fprintf(stderr, "bench_micro: %s: %s\n", what, tj_last_error());
    exit(1);
}

/* ---- dispatch ---- */

typedef struct {
    tj_tensor *a, *b;
} add_ctx;

static void add_calls(void *ctx, int calls)
{
    add_ctx *c = ctx;
    for (int i = 0; i < calls; i++) {
        tj_tensor *r = tj_add(c->a, c->b);
        if (!r) fail("tj_add");
        tj_tensor_release(r);
    }
}

static tj_status pass_through(tj_mode *mode, const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    return tj_redispatch(mode, op, args, nargs, outs);
}

static void bench_dispatch(void)
{
    const int64_t one[1] = {1};
    add_ctx c = {tj_tensor_from_data(TJ_FLOAT32, 1, one, (float[]){1}),
                 tj_tensor_from_data(TJ_FLOAT32, 1, one, (float[]){2})};
    if (!c.a || !c.b) fail("tensor");
    figure plain = measure(add_calls, &c, DISPATCH_CALLS, DISPATCH_RUNS);
    tj_mode mode = {pass_through, NULL, "pass-through"};
    if (tj_mode_push(&mode) != TJ_OK) fail("tj_mode_push");
    figure moded = measure(add_calls, &c, DISPATCH_CALLS, DISPATCH_RUNS);
    tj_mode_pop(&mode);
    printf("| dispatch: tj_add f32[1] + f32[1], no mode | %.1f ns (min %.1f, CPU time %.1f) | %.3f | |\n",
           plain.ns_per_call, plain.min_ns_per_call, plain.cpu_ns_per_call, plain.faults_per_call);
    printf("| dispatch: tj_add f32[1] + f32[1], one pass-through mode | %.1f ns (min %.1f, CPU time %.1f) | %.3f | |\n",
           moded.ns_per_call, moded.min_ns_per_call, moded.cpu_ns_per_call, moded.faults_per_call);
    tj_tensor_release(c.a);
    tj_tensor_release(c.b);
}

/* ---- elementwise throughput ---- */

typedef struct {
    tj_tensor *a, *b;
    tj_tensor *(*unary)(tj_tensor *);
    tj_tensor *(*binary)(tj_tensor *, tj_tensor *);
    char *src, *dst;
    size_t bytes;
    int threads;
} stream_ctx;

static void binary_calls(void *ctx, int calls)
{
    stream_ctx *c = ctx;
    for (int i = 0; i < calls; i++) {
        tj_tensor *r = c->binary(c->a, c->b);
        if (!r) fail("binary operator");
        tj_tensor_release(r);
    }
}

static void unary_calls(void *ctx, int calls)
{
    stream_ctx *c = ctx;
    for (int i = 0; i < calls; i++) {
        tj_tensor *r = c->unary(c->a);
        if (!r) fail("unary operator");
        tj_tensor_release(r);
    }
}

static void gelu_mode_calls(const stream_ctx *c, int calls, const char *approximate)
{
    for (int i = 0; i < calls; i++) {
        tj_tensor *r = tj_gelu(c->a, approximate);
        if (!r) fail("tj_gelu");
        tj_tensor_release(r);
    }
}

static void gelu_calls(void *ctx, int calls) { gelu_mode_calls(ctx, calls, "none"); }
static void gelu_tanh_calls(void *ctx, int calls) { gelu_mode_calls(ctx, calls, "tanh"); }

/* memcpy of c->bytes, split over the same number of threads as the kernels. */
static void memcpy_calls(void *ctx, int calls)
{
    stream_ctx *c = ctx;
    for (int i = 0; i < calls; i++) {
#pragma omp parallel num_threads(c->threads)
        {
            int t = omp_get_thread_num(), n = omp_get_num_threads();
            size_t chunk = (c->bytes / (size_t)n + 63) & ~(size_t)63;
            size_t s = (size_t)t * chunk, e = s + chunk < c->bytes ? s + chunk : c->bytes;
            if (s < e) memcpy(c->dst + s, c->src + s, e - s);
        }
    }
}

/* One streamed operation and its traffic (bytes read + written per call). */
typedef struct {
    const char *name;
    body_fn body;
    double bytes;
    double gbs[RUNS], ratio[RUNS]; /* per round; ratio to the round's memcpy */
    double cpu_gbs[RUNS];          /* from the calling thread's CPU time (all the work with 1 thread) */
    long faults;
} stream_case;

/* Runs the cases in turn, round after round, so that every round's memcpy
 * (case 0) and kernels see the same load from the rest of the machine; the
 * ratio to memcpy is taken within each round. */
static void measure_streams(stream_case *cases, int n, stream_ctx *c)
{
    for (int k = 0; k < n; k++) cases[k].body(c, 1); /* warm-up */
    for (int r = 0; r < RUNS; r++) {
        for (int k = 0; k < n; k++) {
            long f0 = bench_minor_faults();
            double s = now_ns(), cs = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
            cases[k].body(c, ELEMENTWISE_CALLS);
            double ns = (now_ns() - s) / ELEMENTWISE_CALLS;
            double cpu_ns = (bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - cs) / ELEMENTWISE_CALLS;
            cases[k].faults += bench_minor_faults() - f0;
            cases[k].gbs[r] = cases[k].bytes / ns; /* bytes per ns = GB/s */
            cases[k].cpu_gbs[r] = cases[k].bytes / cpu_ns;
            cases[k].ratio[r] = cases[k].gbs[r] / cases[0].gbs[r];
        }
    }
}

/* The cases (case 0: memcpy) over a and b of float32[16 Mi] filled by
 * fill(i, 0) and fill(i, 1), with `threads` threads, one table row each. */
static void stream_table(int threads, stream_case *cases, int n, tj_tensor *(*binary)(tj_tensor *, tj_tensor *),
                         float (*fill)(int64_t i, int which))
{
    tj_set_num_threads(threads);
    const int64_t shape[1] = {ELEMENTWISE_N};
    size_t bytes = (size_t)ELEMENTWISE_N * sizeof(float);
    float *init = malloc(bytes);
    if (!init) fail("malloc");
    for (int64_t i = 0; i < ELEMENTWISE_N; i++) init[i] = fill(i, 0);
    stream_ctx c = {tj_tensor_from_data(TJ_FLOAT32, 1, shape, init), NULL, tj_exp, binary, NULL, NULL, bytes,
                    threads};
    for (int64_t i = 0; i < ELEMENTWISE_N; i++) init[i] = fill(i, 1);
    c.b = tj_tensor_from_data(TJ_FLOAT32, 1, shape, init);
    /* memcpy between tensor storages: the same allocator (and huge pages) as
     * the kernels' operands and results */
    tj_tensor *dst = tj_tensor_empty(TJ_FLOAT32, 1, shape);
    if (!c.a || !c.b || !dst) fail("tensor");
    free(init);
    c.src = tj_tensor_data(c.a);
    c.dst = tj_tensor_data(dst);
    memset(c.dst, 1, bytes); /* fault the destination in, as the storage cache holds the kernels' */
    cases[0] = (stream_case){.name = "memcpy 64 MiB", .body = memcpy_calls, .bytes = 2.0 * (double)bytes};
    measure_streams(cases, n, &c);
    double memcpy_cpu = bench_median(cases[0].cpu_gbs, RUNS);
    for (int k = 0; k < n; k++) {
        double gbs = bench_median(cases[k].gbs, RUNS), best = cases[k].gbs[RUNS - 1];
        double cpu = bench_median(cases[k].cpu_gbs, RUNS);
        char rel[64] = "reference", cpu_text[64] = "";
        if (k && threads == 1)
            snprintf(rel, sizeof rel, "%.0f%% of memcpy (CPU time: %.0f%%)", 100.0 * bench_median(cases[k].ratio, RUNS),
                     100.0 * cpu / memcpy_cpu);
        else if (k)
            snprintf(rel, sizeof rel, "%.0f%% of memcpy", 100.0 * bench_median(cases[k].ratio, RUNS));
        if (threads == 1) snprintf(cpu_text, sizeof cpu_text, "; CPU time %.2f GB/s", cpu);
        printf("| %s, %d thread%s | %.2f GB/s (%.2f ms; best %.2f GB/s%s) | %.1f | %s |\n", cases[k].name, threads,
               threads > 1 ? "s" : "", gbs, cases[k].bytes / gbs / 1e6, best, cpu_text,
               (double)cases[k].faults / ((double)RUNS * ELEMENTWISE_CALLS), rel);
    }
    tj_tensor_release(c.a);
    tj_tensor_release(c.b);
    tj_tensor_release(dst);
}

/* values in [-0.5, 0.5) for both operands */
static float fill_small(int64_t i, int which)
{
    (void)which;
    return (float)(i % 1000) * 1e-3f - 0.5f;
}

static void bench_elementwise(int threads)
{
    double bytes = (double)ELEMENTWISE_N * sizeof(float);
    stream_case cases[] = {
        {0},
        {.name = "add f32[16Mi] + f32[16Mi]", .body = binary_calls, .bytes = 3.0 * bytes},
        {.name = "exp f32[16Mi]", .body = unary_calls, .bytes = 2.0 * bytes},
        {.name = "gelu (erf) f32[16Mi]", .body = gelu_calls, .bytes = 2.0 * bytes},
        {.name = "gelu (tanh) f32[16Mi]", .body = gelu_tanh_calls, .bytes = 2.0 * bytes},
    };
    stream_table(threads, cases, (int)(sizeof cases / sizeof cases[0]), tj_add, fill_small);
}

/* fmod / remainder operands: a in [-500, 500), b of either sign and
 * magnitudes 0.25 to 31 (quotients up to about 2000) */
static float fill_modulo(int64_t i, int which)
{
    if (which == 0) return (float)(i % 10007) * 0.1f - 500.0f;
    return (float)(i % 124 + 1) * (i % 2 ? 0.25f : -0.25f);
}

static void bench_fmod(void)
{
    double bytes = (double)ELEMENTWISE_N * sizeof(float);
    stream_case cases[] = {
        {0},
        {.name = "fmod f32[16Mi], f32[16Mi]", .body = binary_calls, .bytes = 3.0 * bytes},
    };
    stream_case rem[] = {
        {0},
        {.name = "remainder f32[16Mi], f32[16Mi]", .body = binary_calls, .bytes = 3.0 * bytes},
    };
    stream_table(1, cases, 2, tj_fmod, fill_modulo);
    stream_table(1, rem, 2, tj_remainder, fill_modulo);
}

/* ---- tanh ---- */

#define TANH_N ((int64_t)1 << 20)
#define TANH_CALLS 20

typedef struct {
    tj_tensor *x;
    tj_tensor *(*fn)(tj_tensor *);
} tanh_ctx;

static void tanh_calls(void *ctx, int calls)
{
    tanh_ctx *c = ctx;
    for (int i = 0; i < calls; i++) {
        tj_tensor *r = c->fn(c->x);
        if (!r) fail("unary operator");
        tj_tensor_release(r);
    }
}

/* float32[TANH_N] uniform in [-half, half), a fixed pseudo-random order */
static tj_tensor *uniform_tensor(float half)
{
    float *v = malloc(sizeof(float) * TANH_N);
    if (!v) fail("malloc");
    uint64_t s = 0x9e3779b97f4a7c15u;
    for (int64_t i = 0; i < TANH_N; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        v[i] = ((float)(s >> 40) * 0x1p-24f * 2.0f - 1.0f) * half;
    }
    tj_tensor *t = tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){TANH_N}, v);
    free(v);
    if (!t) fail("tensor");
    return t;
}

static void bench_tanh(void)
{
    const float halves[2] = {3.0f, 0.5f};
    const struct {
        const char *name;
        tj_tensor *(*fn)(tj_tensor *);
    } ops[2] = {{"tanh", tj_tanh}, {"exp", tj_exp}};
    for (int threads = 1; threads <= 2; threads++) {
        tj_set_num_threads(threads);
        for (int h = 0; h < 2; h++) {
            tanh_ctx c = {uniform_tensor(halves[h]), NULL};
            for (int k = 0; k < 2; k++) {
                c.fn = ops[k].fn;
                figure f = measure(tanh_calls, &c, TANH_CALLS, RUNS);
                double ns = f.ns_per_call / TANH_N;
                printf("| %s f32[1Mi] in [-%g, %g), %d thread%s | %.3f ns/element, %.2f GB/s (best %.3f ns/element) | "
                       "%.1f | |\n",
                       ops[k].name, (double)halves[h], (double)halves[h], threads, threads > 1 ? "s" : "", ns,
                       8.0 / ns, f.min_ns_per_call / TANH_N, f.faults_per_call);
            }
            tj_tensor_release(c.x);
        }
    }
}

/* gelu into a new tensor, as a user calls it: the storage cache decides
 * whether each result is a recycled block or fresh pages */
static void gelu_alloc_calls(void *ctx, int calls)
{
    for (int i = 0; i < calls; i++) tj_tensor_release(tj_gelu(ctx, "none"));
}

/* First touch of a fresh 64 MiB block (aligned to 2 MiB as the allocator
 * aligns large blocks), with huge pages asked for or refused. */
static void first_touch_calls(void *ctx, int calls)
{
    int advice = *(int *)ctx;
    size_t bytes = (size_t)64 << 20;
    for (int i = 0; i < calls; i++) {
        char *p = aligned_alloc((size_t)2 << 20, bytes);
        if (!p) fail("aligned_alloc");
        madvise(p, bytes, advice);
        memset(p, 1, bytes);
        __asm__ volatile("" : : "r"(p) : "memory"); /* keeps the memset of a block freed next */
        free(p);
    }
}

static void bench_allocator(void)
{
    tj_set_num_threads(1);
    const int64_t shape[1] = {ELEMENTWISE_N};
    tj_tensor *x = tj_rand(shape, 1, TJ_FLOAT32);
    if (!x) fail("tensor");
    int runs = 9;
    figure cached = measure(gelu_alloc_calls, x, 2, runs);
    tj_storage_cache_set_limit(0); /* every result: fresh pages, freed to the OS */
    figure uncached = measure(gelu_alloc_calls, x, 2, runs);
    tj_storage_cache_set_limit((size_t)1 << 30);
    tj_tensor_release(x);
    double bytes = 2.0 * (double)ELEMENTWISE_N * sizeof(float);
    printf("| gelu f32[16Mi] into a new tensor, storage cache on | %.2f GB/s (%.2f ms) | %.1f | |\n",
           bytes / cached.ns_per_call, cached.ns_per_call / 1e6, cached.faults_per_call);
    printf("| gelu f32[16Mi] into a new tensor, storage cache off | %.2f GB/s (%.2f ms) | %.1f | cache: %.1fx faster |\n",
           bytes / uncached.ns_per_call, uncached.ns_per_call / 1e6, uncached.faults_per_call,
           uncached.ns_per_call / cached.ns_per_call);
    int huge = MADV_HUGEPAGE, small = MADV_NOHUGEPAGE;
    figure with_huge = measure(first_touch_calls, &huge, 1, runs);
    figure without_huge = measure(first_touch_calls, &small, 1, runs);
    printf("| first touch of a fresh 64 MiB block, MADV_HUGEPAGE | %.2f ms | %.1f | |\n", with_huge.ns_per_call / 1e6,
           with_huge.faults_per_call);
    printf("| first touch of a fresh 64 MiB block, MADV_NOHUGEPAGE | %.2f ms | %.1f | huge pages: %.1fx faster |\n",
           without_huge.ns_per_call / 1e6, without_huge.faults_per_call,
           without_huge.ns_per_call / with_huge.ns_per_call);
}

/* ---- upsample ---- */

static void upsample_calls(void *ctx, int calls)
{
    static const double two[2] = {2, 2};
    for (int i = 0; i < calls; i++) {
        tj_tensor *r = tj_upsample_bilinear2d_vec(ctx, NULL, false, two);
        if (!r) fail("tj_upsample_bilinear2d_vec");
        tj_tensor_release(r);
    }
}

static void bench_upsample(void)
{
    tj_set_num_threads(1);
    const int64_t shape[4] = {8, 64, 64, 64};
    tj_tensor *x = tj_rand(shape, 4, TJ_FLOAT32);
    if (!x) fail("tensor");
    figure f = measure(upsample_calls, x, 1, RUNS);
    tj_tensor_release(x);
    printf("| upsample_bilinear2d.vec f32[8,64,64,64] x2, 1 thread | %.2f ms (min %.2f, CPU time %.2f) | %.1f | |\n",
           f.ns_per_call / 1e6, f.min_ns_per_call / 1e6, f.cpu_ns_per_call / 1e6, f.faults_per_call);
}

/* ---- index.Tensor against index_select ---- */

typedef struct {
    tj_tensor *x, *idx;
    int dim;
} gather_ctx;

static void index_tensor_calls(void *ctx, int calls)
{
    gather_ctx *c = ctx;
    tj_tensor *ix[2] = {NULL, NULL};
    ix[c->dim] = c->idx;
    for (int i = 0; i < calls; i++) {
        tj_tensor *r = tj_index(c->x, ix, c->dim + 1);
        if (!r) fail("tj_index");
        tj_tensor_release(r);
    }
}

static void index_select_calls(void *ctx, int calls)
{
    gather_ctx *c = ctx;
    for (int i = 0; i < calls; i++) {
        tj_tensor *r = tj_index_select(c->x, c->dim, c->idx);
        if (!r) fail("tj_index_select");
        tj_tensor_release(r);
    }
}

#define INDEX_RUNS 401

/* index.Tensor and index_select of the same rows, alternated run by run. */
static void bench_index_case(int64_t rows, int64_t cols, int64_t n, int dim)
{
    const int64_t shape[2] = {rows, cols}, ishape[1] = {n};
    int64_t size = shape[dim];
    int64_t *iv = malloc(sizeof(int64_t) * (size_t)n);
    if (!iv) fail("malloc");
    uint64_t state = 42;
    for (int64_t i = 0; i < n; i++) { /* a fixed pseudo-random draw (64-bit LCG) */
        state = state * 6364136223846793005u + 1442695040888963407u;
        iv[i] = (int64_t)((state >> 33) % (uint64_t)size);
    }
    gather_ctx c = {tj_rand(shape, 2, TJ_FLOAT32), tj_tensor_from_data(TJ_INT64, 1, ishape, iv), dim};
    free(iv);
    if (!c.x || !c.idx) fail("tensor");
    double bytes = (double)(n * (dim == 0 ? cols : rows)) * sizeof(float);
    int calls = bytes > (1 << 20) ? 1 : bytes > (64 << 10) ? 10 : 100;
    double ti[INDEX_RUNS], ts[INDEX_RUNS], ratio[INDEX_RUNS];
    index_tensor_calls(&c, calls);
    index_select_calls(&c, calls);
    for (int r = 0; r < INDEX_RUNS; r++) { /* which goes first alternates: the second finds the rows in cache */
        body_fn first = r % 2 ? index_select_calls : index_tensor_calls;
        body_fn second = r % 2 ? index_tensor_calls : index_select_calls;
        double s = now_ns();
        first(&c, calls);
        double m = now_ns();
        second(&c, calls);
        double e = now_ns();
        ti[r] = (r % 2 ? e - m : m - s) / calls;
        ts[r] = (r % 2 ? m - s : e - m) / calls;
        ratio[r] = ti[r] / ts[r];
    }
    double mi = bench_median(ti, INDEX_RUNS), ms = bench_median(ts, INDEX_RUNS), mr = bench_median(ratio, INDEX_RUNS);
    char what[64];
    snprintf(what, sizeof what, "%sidx] f32[%" PRId64 ",%" PRId64 "], %" PRId64 " indices", dim ? "x[:, " : "x[",
             rows, cols, n);
    printf("| %s, 1 thread | index.Tensor %.2f us, index_select %.2f us | | index.Tensor / index_select %.2f |\n",
           what, mi / 1e3, ms / 1e3, mr);
    tj_tensor_release(c.x);
    tj_tensor_release(c.idx);
}

static void bench_index(void)
{
    tj_set_num_threads(1);
    bench_index_case(100000, 256, 4096, 0);
    bench_index_case(50000, 16, 4096, 0);
    bench_index_case(1000, 64, 32, 0);
    bench_index_case(256, 1024, 128, 1);
}

int main(int argc, char **argv)
{
    bool dispatch = argc < 2, elementwise = argc < 2, allocator = argc < 2, upsample = argc < 2, index = argc < 2,
         modulo = argc < 2, tanh_section = argc < 2;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "dispatch") == 0) dispatch = true;
        else if (strcmp(argv[i], "elementwise") == 0) elementwise = true;
        else if (strcmp(argv[i], "allocator") == 0) allocator = true;
        else if (strcmp(argv[i], "upsample") == 0) upsample = true;
        else if (strcmp(argv[i], "index") == 0) index = true;
        else if (strcmp(argv[i], "fmod") == 0) modulo = true;
        else if (strcmp(argv[i], "tanh") == 0) tanh_section = true;
        else {
            fprintf(stderr, "usage: bench_micro [dispatch|elementwise|allocator|upsample|index|fmod|tanh]...\n");
            return 2;
        }
    }
    printf("OpenBLAS core: %s; OMP_NUM_THREADS=%s; TJ_NUM_THREADS=%s; median of %d runs (dispatch: %d)\n\n",
           openblas_get_corename(), getenv("OMP_NUM_THREADS") ? getenv("OMP_NUM_THREADS") : "unset",
           getenv("TJ_NUM_THREADS") ? getenv("TJ_NUM_THREADS") : "unset", RUNS, DISPATCH_RUNS);
    printf("| figure | value | minor faults per call | |\n|---|---|---|---|\n");
    if (dispatch) {
        tj_set_num_threads(1);
        bench_dispatch();
    }
    if (elementwise) {
        bench_elementwise(1);
        bench_elementwise(2);
    }
    if (allocator) bench_allocator();
    if (upsample) bench_upsample();
    if (index) bench_index();
    if (modulo) bench_fmod();
    if (tanh_section) bench_tanh();
    return 0;
}
