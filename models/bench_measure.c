/* Timing of interleaved cases and the result list (see bench.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "bench_clock.h"

#define MAX_ROUNDS 400
#define BUDGET_MS 250.0

static double clock_ms(clockid_t id) { return bench_clock_ns(id) * 1e-6; }

/* One call of a case: prepare (untimed), then the timed call: wall and
 * thread CPU time in ms, minor faults. */
static tj_status timed_call(const bench_case *c, double *ms, double *cpu_ms, long *faults)
{
    tj_status st = c->prepare ? c->prepare(c->ctx) : TJ_OK;
    if (st != TJ_OK) return st;
    long f0 = bench_minor_faults();
    double c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID), t0 = clock_ms(CLOCK_MONOTONIC);
    st = c->call(c->ctx);
    *ms = clock_ms(CLOCK_MONOTONIC) - t0;
    *cpu_ms = clock_ms(CLOCK_THREAD_CPUTIME_ID) - c0;
    *faults = bench_minor_faults() - f0;
    return st;
}

static double median(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, bench_cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

tj_status bench_measure(const bench_case *cases, int n, int runs, int warmup, bench_timing *out)
{
    double round_ms = 0, ms, cpu; /* fastest warm-up round */
    long faults;
    for (int w = 0; w < warmup; w++) {
        double this_round = 0;
        for (int i = 0; i < n; i++) {
            tj_status st = timed_call(&cases[i], &ms, &cpu, &faults);
            if (st != TJ_OK) return st;
            this_round += ms;
        }
        if (w == 0 || this_round < round_ms) round_ms = this_round;
    }
    int rounds = runs;
    if (round_ms > 0 && BUDGET_MS / round_ms > rounds) rounds = (int)(BUDGET_MS / round_ms);
    if (rounds > MAX_ROUNDS) rounds = runs > MAX_ROUNDS ? runs : MAX_ROUNDS;
    double *t = malloc(sizeof(double) * (size_t)rounds * (size_t)n);
    double *tc = malloc(sizeof(double) * (size_t)rounds * (size_t)n);
    long *f = calloc((size_t)n, sizeof(long));
    if (!t || !tc || !f) {
        free(t);
        free(tc);
        free(f);
        return tj_error(TJ_ERR_OUT_OF_MEMORY, "bench: out of memory");
    }
    tj_status st = TJ_OK;
    for (int r = 0; r < rounds && st == TJ_OK; r++)
        for (int i = 0; i < n && st == TJ_OK; i++) {
            size_t k = (size_t)i * (size_t)rounds + (size_t)r;
            st = timed_call(&cases[i], &t[k], &tc[k], &faults);
            f[i] += faults;
        }
    for (int i = 0; i < n && st == TJ_OK; i++) {
        double *ti = t + (size_t)i * (size_t)rounds;
        double m = median(ti, rounds);
        out[i] = (bench_timing){rounds, m, ti[0], median(tc + (size_t)i * (size_t)rounds, rounds),
                                (double)f[i] / rounds};
    }
    free(t);
    free(tc);
    free(f);
    return st;
}

static bool is_throughput(const char *unit) { return strchr(unit, '/') != NULL; }

tj_status bench_add(bench_results *r, const char *name, const char *what, const char *mode, int threads,
                    const bench_timing *t, double scale, const char *unit, long long arena_bytes, int kernels)
{
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 64;
        bench_result *items = realloc(r->items, sizeof *items * (size_t)cap);
        if (!items) return tj_error(TJ_ERR_OUT_OF_MEMORY, "bench: out of memory");
        r->items = items;
        r->cap = cap;
    }
    bench_result *x = &r->items[r->n++];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    snprintf(x->what, sizeof x->what, "%s", what);
    snprintf(x->mode, sizeof x->mode, "%s", mode);
    x->threads = threads;
    x->runs = t->runs;
    x->median_ms = t->median_ms;
    x->min_ms = t->min_ms;
    x->cpu_ms = t->cpu_ms;
    x->faults_per_call = t->faults_per_call;
    x->value = is_throughput(unit) ? scale / (t->median_ms * 1e-3) : t->median_ms * scale;
    x->unit = unit;
    x->arena_bytes = arena_bytes;
    x->kernels = kernels;
    return TJ_OK;
}

void bench_results_free(bench_results *r)
{
    free(r->items);
    memset(r, 0, sizeof *r);
}

const bench_result *bench_results_find(const bench_results *r, const char *name, const char *what, const char *mode,
                                       int threads)
{
    for (int i = 0; i < r->n; i++) {
        const bench_result *x = &r->items[i];
        if (!strcmp(x->name, name) && !strcmp(x->what, what) && !strcmp(x->mode, mode) && x->threads == threads)
            return x;
    }
    return NULL;
}
