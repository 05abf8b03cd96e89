/* Matrix products of the models' shapes: tj_k_gemm (which routes each
 * product to OpenBLAS, our matrix-vector kernels or our GEMM kernel, see
 * kernels/gemm.h) and our GEMM kernel called directly (tj_k_gemm_f32: its
 * AVX-512 or AVX2 instance), against cblas_sgemm called directly on the
 * same operands, float32, on THREADS threads (tjit's and OpenBLAS's; 1 by
 * default).
 *
 * Each figure is the median of several calls, the three taken in turn so
 * that they see the same machine: in the calling thread's CPU time at 1
 * thread (CLOCK_THREAD_CPUTIME_ID: other load on the machine does not
 * inflate it; every flop runs on this thread), in wall time on more. The
 * results are compared first (largest difference from sgemm's relative to
 * its largest value).
 *
 * Usage: bench_gemm [THREADS [NAME]]: NAME picks the products whose
 * description contains it. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/gemm.h"
#include "models/bench_clock.h"
#include "tjit/tjit.h"

static clockid_t clock_id = CLOCK_THREAD_CPUTIME_ID;

static double now_ns(void) { return bench_clock_ns(clock_id); }

/* C [m, n] = A @ B; A [m, k] row-major, or stored as [k, m] (a_t); B
 * [k, n] row-major, or stored as [n, k] (b_t: x @ W^T, a Linear layer). */
typedef struct shape {
    const char *what;
    int m, n, k;
    bool a_t, b_t;
} shape;

static const shape shapes[] = {
    {"mlp_b1 fc1: x @ W1^T", 1, 256, 784, false, true},
    {"mlp_b1 fc2", 1, 256, 256, false, true},
    {"mlp fc1 (batch 4)", 4, 256, 784, false, true},
    {"mlp fc1 (batch 64)", 64, 256, 784, false, true},
    {"mlp fc2", 64, 256, 256, false, true},
    {"mlp fc3", 64, 10, 256, false, true},
    {"mlp backward: g2 @ W2", 64, 256, 256, false, false},
    {"mlp backward: g1^T @ x", 256, 784, 64, true, false},
    {"mlp backward: g2^T @ h1", 256, 256, 64, true, false},
    {"gpt qkv: x @ W^T", 512, 384, 128, false, true},
    {"gpt proj: x @ W^T", 512, 128, 128, false, true},
    {"gpt mlp up: x @ W^T", 512, 512, 128, false, true},
    {"gpt mlp down: h @ W^T", 512, 128, 512, false, true},
    {"gpt head: x @ E^T", 512, 256, 128, false, true},
    {"gpt backward: g @ W", 512, 128, 384, false, false},
    {"gpt backward: g @ W_up", 512, 128, 512, false, false},
    {"gpt backward: g @ W_down", 512, 512, 128, false, false},
    {"gpt backward: g^T @ x", 384, 128, 512, true, false},
    {"gpt backward: g_up^T @ x", 512, 128, 512, true, false},
    {"gpt backward: g_dn^T @ h", 128, 512, 512, true, false},
    /* one head of one sequence (tj_k_gemm runs the 32 as a batch) */
    {"gpt attention: q @ k^T", 64, 64, 32, false, true},
    {"gpt attention: a @ v", 64, 32, 64, false, false},
    {"gpt attention back: g @ v^T", 64, 64, 32, false, true},
    {"gpt attention back: a^T @ g", 64, 32, 64, true, false},
    {"cnn fc1: x @ W^T", 64, 128, 1568, false, true},
    {"cnn backward: g @ W1", 64, 1568, 128, false, false},
    {"cnn backward: g^T @ x", 128, 1568, 64, true, false},
    {"block768 qkv", 128, 2304, 768, false, true},
    {"block768 mlp up", 128, 3072, 768, false, true},
    {"block768 mlp down", 128, 768, 3072, false, true},
    /* decomposed cnn (im2col + bmm): few rows against a large B or C */
    {"cnn conv1: W @ cols", 16, 50176, 25, false, false},
    {"cnn conv2: W @ cols", 32, 12544, 400, false, false},
    {"cnn conv2 back: W^T @ g", 400, 12544, 32, true, false},
    {"cnn conv2 back: g @ cols^T", 32, 400, 12544, false, true},
    {"cnn conv1 back: g @ cols^T", 16, 25, 50176, false, true},
};

/* 64-byte aligned, as tensor storage is */
static float *random_floats(size_t n)
{
    float *p = aligned_alloc(64, (n * sizeof *p + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "bench_gemm: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) p[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    return p;
}

enum { MAX_RUNS = 400 };

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    if (threads < 1) {
        fprintf(stderr, "usage: bench_gemm [THREADS [NAME]]\n");
        return 2;
    }
    if (threads > 1) clock_id = CLOCK_MONOTONIC;
    tj_set_num_threads(threads);
    openblas_set_num_threads(threads);
    bool own = tj_k_gemm_f32_supported();
    printf("float32 products, %d thread%s, median %s\n", threads, threads > 1 ? "s" : "",
           threads > 1 ? "wall time" : "in thread CPU time");
    printf("%-27s %5s %5s %5s %9s %9s %9s %7s %7s %7s %8s %8s\n", "product", "m", "n", "k", "sgemm us", "kernel us",
           "tj_k us", "sgemm GF", "kern GF", "tj_k GF", "kern/bl", "diff");
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        const shape *sh = &shapes[s];
        if (argc > 2 && !strstr(sh->what, argv[2])) continue;
        int m = sh->m, n = sh->n, k = sh->k;
        float *a = random_floats((size_t)m * k), *b = random_floats((size_t)k * n);
        float *c0 = random_floats((size_t)m * n), *c1 = random_floats((size_t)m * n);
        float *c2 = random_floats((size_t)m * n);
        int lda = sh->a_t ? m : k, ldb = sh->b_t ? k : n;
        tj_k_mat am = {a, sh->a_t ? 1 : k, sh->a_t ? m : 1}, bm = {b, sh->b_t ? 1 : n, sh->b_t ? k : 1};
        double flops = 2.0 * m * n * k, t_blas[MAX_RUNS], t_own[MAX_RUNS], t_tjit[MAX_RUNS];
        int runs = flops > 1e8 ? 15 : flops > 1e7 ? 60 : MAX_RUNS;
        for (int r = 0; r < runs; r++) {
            double t0 = now_ns();
            cblas_sgemm(CblasRowMajor, sh->a_t ? CblasTrans : CblasNoTrans, sh->b_t ? CblasTrans : CblasNoTrans, m, n,
                        k, 1.0f, a, lda, b, ldb, 0.0f, c0, n);
            double t1 = now_ns();
            if (own) tj_k_gemm_f32(m, n, k, 1.0f, a, am.rs, am.cs, b, bm.rs, bm.cs, 0.0f, c2, n, threads, NULL);
            double t2 = now_ns();
            tj_k_gemm(TJ_FLOAT32, 1, m, n, k, 1.0, am, 0, bm, 0, 0.0, c1, 0, n, threads, NULL);
            double t3 = now_ns();
            t_blas[r] = t1 - t0, t_own[r] = t2 - t1, t_tjit[r] = t3 - t2;
        }
        double diff = 0, scale = 0;
        for (size_t i = 0; i < (size_t)m * n; i++) {
            diff = fmax(diff, fabs((double)c0[i] - c1[i]));
            if (own) diff = fmax(diff, fabs((double)c0[i] - c2[i]));
            scale = fmax(scale, fabs((double)c0[i]));
        }
        double tb = bench_median(t_blas, runs), to = own ? bench_median(t_own, runs) : NAN;
        double tt = bench_median(t_tjit, runs);
        printf("%-27s %5d %5d %5d %9.1f %9.1f %9.1f %7.1f %7.1f %7.1f %7.2fx %8.1e\n", sh->what, m, n, k, tb * 1e-3,
               to * 1e-3, tt * 1e-3, flops / tb, flops / to, flops / tt, tb / to, diff / scale);
        free(a), free(b), free(c0), free(c1), free(c2);
    }
    return 0;
}
