/* Tracing cost: make_fx in fake mode of a chain of 100,000 adds (no
 * decomposition), in microseconds per recorded call, wall and thread CPU
 * time (the machine is shared: CPU time is not inflated by other load).
 * Median of 20 traces after one warm-up. Usage: bench_trace [N] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tjit/tjit.h"

#define RUNS 20

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static tj_status chain(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    long calls = *(long *)ctx;
    (void)n;
    tj_tensor *x = in[0];
    for (long i = 0; i < calls; i++) x = tj_add(x, in[1]);
    out[0] = x;
    *n_out = 1;
    return x ? TJ_OK : tj_last_status();
}

int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 100000;
    int64_t shape[1] = {1};
    tj_tensor *a = tj_tensor_fake(TJ_FLOAT32, 1, shape), *b = tj_tensor_fake(TJ_FLOAT32, 1, shape);
    tj_tensor *in[2] = {a, b};
    double wall[RUNS], cpu[RUNS];
    for (int r = -1; r < RUNS; r++) {
        double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        tj_graph *g = tj_make_fx(chain, &calls, in, 2, NULL, TJ_TRACE_FAKE);
        double w1 = clock_s(CLOCK_MONOTONIC), c1 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        if (!g) {
            fprintf(stderr, "bench_trace: %s\n", tj_last_error());
            return 1;
        }
        if (r >= 0) {
            wall[r] = (w1 - w0) / (double)calls * 1e6;
            cpu[r] = (c1 - c0) / (double)calls * 1e6;
        }
        if (r == RUNS - 1) printf("graph: %d call nodes\n", tj_graph_num_calls(g));
        tj_graph_free(g);
    }
    qsort(wall, RUNS, sizeof *wall, cmp);
    qsort(cpu, RUNS, sizeof *cpu, cmp);
    printf("make_fx (fake) of %ld adds: %.3f us per recorded call wall, %.3f us CPU time (median of %d)\n", calls,
           wall[RUNS / 2], cpu[RUNS / 2], RUNS);
    tj_tensor_release(a);
    tj_tensor_release(b);
    return 0;
}
