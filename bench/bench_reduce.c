/* The float32 sum over one dim of contiguous matrices (tj_sum_dim): the
 * generic loops against the AVX-512 ones (tj_k_isa_force), 1 thread.
 *
 * Reducing dim 0 runs the driver's row loop (a block of outputs whose kept
 * dim is contiguous, the rows added in order: the bias gradient of a Linear
 * layer); dim 1 runs the fold over contiguous runs. The two variants are
 * checked to give the same bits, then timed call by call in turn (generic,
 * AVX-512, generic, ...), so that their ratio holds while a shared machine
 * drifts. Each figure is the median over the runs of the wall time and of
 * the thread's CPU time (which time spent descheduled does not inflate).
 * PyTorch's torch.sum(x, dim) under the same conditions: bench/torch_sum.py.
 *
 * Usage: bench_reduce [RUNS]   (default 21; run it under taskset -c 0) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "models/bench_clock.h"
#include "tjit/tjit.h"

#define DEFAULT_RUNS 21
#define MAX_RUNS 201

typedef struct shape {
    int64_t rows, cols;
} shape;

static const shape shapes[] = {{4096, 4096}, {64, 4096}, {4096, 64}, {512, 512}};
static const char *const isas[2] = {"generic", "avx512"};

static void fail(const char *what)
{
    fprintf(stderr, "bench_reduce: %s: %s\n", what, tj_last_error());
    exit(1);
}

/* calls per run: about 16 Mi elements a run, at least one call */
static int calls_for(const shape *s)
{
    int64_t c = ((int64_t)16 << 20) / (s->rows * s->cols);
    return c < 1 ? 1 : (int)c;
}

static void time_calls(tj_tensor *x, int64_t dim, int calls, double *wall, double *cpu)
{
    double w0 = bench_clock_ns(CLOCK_MONOTONIC), c0 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < calls; i++) {
        tj_scope *sc = tj_scope_begin();
        if (!tj_sum_dim(x, &dim, 1, false, TJ_DTYPE_NONE)) fail("sum.dim_IntList");
        tj_scope_end(sc);
    }
    *wall = (bench_clock_ns(CLOCK_MONOTONIC) - w0) / calls;
    *cpu = (bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / calls;
}

/* Both variants' results hold the same bits. */
static void check_same(tj_tensor *x, int64_t dim)
{
    tj_tensor *r[2];
    for (int v = 0; v < 2; v++) {
        if (!tj_k_isa_force(isas[v])) fail("this CPU has no AVX-512");
        if (!(r[v] = tj_sum_dim(x, &dim, 1, false, TJ_DTYPE_NONE))) fail("sum.dim_IntList");
    }
    int64_t n = tj_tensor_numel(r[0]);
    if (memcmp(tj_tensor_data(r[0]), tj_tensor_data(r[1]), (size_t)n * sizeof(float)) != 0) {
        fprintf(stderr, "bench_reduce: generic and AVX-512 sums differ\n");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : DEFAULT_RUNS;
    if (runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "usage: bench_reduce [RUNS]   (1..%d)\n", MAX_RUNS);
        return 2;
    }
    tj_set_num_threads(1);
    printf("float32 sum over one dim, 1 thread, median of %d alternated runs (ms per call; CPU time)\n", runs);
    printf("%-14s %3s %24s %24s %8s\n", "shape", "dim", "generic", "avx512", "ratio");
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        const shape *s = &shapes[i];
        int64_t sh[2] = {s->rows, s->cols};
        tj_tensor *x = tj_randn(sh, 2, TJ_FLOAT32);
        if (!x) fail("randn");
        int calls = calls_for(s);
        for (int64_t dim = 0; dim < 2; dim++) {
            check_same(x, dim);
            double wall[2][MAX_RUNS], cpu[2][MAX_RUNS], w, c;
            for (int v = 0; v < 2; v++) { /* warm-up */
                tj_k_isa_force(isas[v]);
                time_calls(x, dim, calls, &w, &c);
            }
            for (int r = 0; r < runs; r++)
                for (int v = 0; v < 2; v++) {
                    tj_k_isa_force(isas[v]);
                    time_calls(x, dim, calls, &wall[v][r], &cpu[v][r]);
                }
            double mw[2], mc[2];
            for (int v = 0; v < 2; v++) {
                mw[v] = bench_median(wall[v], runs) / 1e6;
                mc[v] = bench_median(cpu[v], runs) / 1e6;
            }
            char name[32], a[2][32];
            snprintf(name, sizeof name, "[%lld, %lld]", (long long)s->rows, (long long)s->cols);
            for (int v = 0; v < 2; v++) snprintf(a[v], sizeof a[v], "%.4f (%.4f)", mw[v], mc[v]);
            printf("%-14s %3lld %24s %24s %8.2f\n", name, (long long)dim, a[0], a[1], mw[1] / mw[0]);
            fflush(stdout);
        }
        tj_tensor_release(x);
    }
    tj_k_isa_force(NULL);
    return 0;
}
