/* Matrix products of the models' shapes: tj_k_gemm (which routes each
 * product to OpenBLAS, our matrix-vector kernels or our AVX-512 GEMM
 * kernel, see kernels/gemm.h) against cblas_sgemm called directly on the
 * same operands, float32, 1 thread (tjit's and OpenBLAS's).
 *
 * Each figure is the fastest of several runs in the calling thread's CPU
 * time (CLOCK_THREAD_CPUTIME_ID: other load on the machine does not inflate
 * it; with 1 thread every flop runs on this thread). The results of both
 * are compared first (largest difference relative to the largest value).
 *
 * Usage: bench_gemm */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kernels/gemm.h"
#include "tjit/tjit.h"

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

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
    {"gpt mlp down: h @ W^T", 512, 128, 512, false, true},
    {"gpt backward: g @ W", 512, 128, 384, false, false},
    {"gpt backward: g^T @ x", 384, 128, 512, true, false},
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

int main(void)
{
    tj_set_num_threads(1);
    openblas_set_num_threads(1);
    printf("float32 products, 1 thread, fastest run in thread CPU time\n");
    printf("%-26s %5s %5s %5s %11s %11s %9s %9s %7s %9s\n", "product", "m", "n", "k", "sgemm us", "tj_k_gemm us",
           "sgemm GF", "tjit GF", "speed-up", "rel diff");
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        const shape *sh = &shapes[s];
        int m = sh->m, n = sh->n, k = sh->k;
        float *a = random_floats((size_t)m * k), *b = random_floats((size_t)k * n);
        float *c0 = random_floats((size_t)m * n), *c1 = random_floats((size_t)m * n);
        int lda = sh->a_t ? m : k, ldb = sh->b_t ? k : n;
        tj_k_mat am = {a, sh->a_t ? 1 : k, sh->a_t ? m : 1}, bm = {b, sh->b_t ? 1 : n, sh->b_t ? k : 1};
        double flops = 2.0 * m * n * k, t_blas = INFINITY, t_tjit = INFINITY;
        int runs = flops > 1e8 ? 5 : flops > 1e7 ? 20 : 200;
        for (int r = 0; r < runs; r++) {
            double t0 = cpu_ns();
            cblas_sgemm(CblasRowMajor, sh->a_t ? CblasTrans : CblasNoTrans, sh->b_t ? CblasTrans : CblasNoTrans, m, n,
                        k, 1.0f, a, lda, b, ldb, 0.0f, c0, n);
            double t1 = cpu_ns();
            tj_k_gemm(TJ_FLOAT32, 1, m, n, k, 1.0, am, 0, bm, 0, 0.0, c1, 0, n, 1, NULL);
            double t2 = cpu_ns();
            t_blas = fmin(t_blas, t1 - t0);
            t_tjit = fmin(t_tjit, t2 - t1);
        }
        double diff = 0, scale = 0;
        for (size_t i = 0; i < (size_t)m * n; i++) {
            diff = fmax(diff, fabs((double)c0[i] - c1[i]));
            scale = fmax(scale, fabs((double)c0[i]));
        }
        printf("%-26s %5d %5d %5d %11.1f %11.1f %9.1f %9.1f %6.2fx %9.1e\n", sh->what, m, n, k, t_blas * 1e-3,
               t_tjit * 1e-3, flops / t_blas, flops / t_tjit, t_blas / t_tjit, diff / scale);
        free(a), free(b), free(c0), free(c1);
    }
    return 0;
}
