/* float32 convolution by shape class: forward, input gradient and weight
 * gradient (tj_convolution, tj_convolution_backward with one output of the
 * mask each), median of RUNS calls after one warm-up, on a few shapes beside
 * the cnn workload's two layers (few input channels, small images, 1 x 1,
 * stride 2, groups); then the cnn's two MaxPool2d(2), forward and backward.
 * Public API only, so that the same file builds against another version of
 * the library (before / after comparisons).
 *
 * Usage: bench_conv [THREADS] [RUNS]   (defaults 1 and 9). At 1 thread the
 * figures are the thread's CPU time (run it under taskset -c 0); with more
 * threads, wall time. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "models/bench_clock.h"
#include "tjit/tjit.h"

#define MAX_RUNS 101

static clockid_t clock_id = CLOCK_THREAD_CPUTIME_ID;

static double now_ms(void) { return bench_clock_ns(clock_id) / 1e6; }

/* The cnn workload's MaxPool2d(2) layers: forward (values and indices)
 * and backward, as convolutions above. */
static int bench_pools(int runs)
{
    static const int64_t shapes[][4] = {{64, 16, 28, 28}, {64, 32, 14, 14}};
    int64_t two[2] = {2, 2}, zero[2] = {0, 0}, one[2] = {1, 1};
    printf("%-36s %10s %10s\n", "max_pool2d 2x2", "forward", "backward");
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        tj_scope *scope = tj_scope_begin();
        tj_manual_seed(0);
        tj_tensor *x = tj_randn(shapes[c], 4, TJ_FLOAT32);
        double t[2][MAX_RUNS];
        for (int r = -1; r < runs; r++) {
            tj_scope *inner = tj_scope_begin();
            tj_tensor *y = NULL, *idx = NULL;
            double t0 = now_ms();
            tj_status e = tj_max_pool2d_with_indices(x, two, two, zero, one, false, &y, &idx);
            double t1 = now_ms();
            tj_tensor *gx = e == TJ_OK ? tj_max_pool2d_with_indices_backward(y, x, two, two, zero, one, false, idx) : NULL;
            double t2 = now_ms();
            if (!gx) {
                fprintf(stderr, "bench_conv: %s\n", tj_last_error());
                return 1;
            }
            if (r >= 0) t[0][r] = t1 - t0, t[1][r] = t2 - t1;
            tj_scope_end(inner);
        }
        char name[64];
        snprintf(name, sizeof name, "n%lld c%lld %lldx%lld", (long long)shapes[c][0], (long long)shapes[c][1],
                 (long long)shapes[c][2], (long long)shapes[c][3]);
        printf("%-36s %10.3f %10.3f\n", name, bench_median(t[0], runs), bench_median(t[1], runs));
        tj_scope_end(scope);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1, runs = argc > 2 ? atoi(argv[2]) : 9;
    if (threads < 1 || runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "usage: bench_conv [THREADS] [RUNS <= %d]\n", MAX_RUNS);
        return 2;
    }
    tj_set_num_threads(threads);
    if (threads > 1) clock_id = CLOCK_MONOTONIC;
    /* batch, c_in, c_out, h, w, kernel, stride, padding, groups */
    static const int64_t cases[][9] = {
        {64, 1, 16, 28, 28, 5, 1, 2, 1},  {64, 16, 32, 14, 14, 5, 1, 2, 1},   {16, 3, 64, 32, 32, 3, 1, 1, 1},
        {16, 64, 64, 16, 16, 3, 1, 1, 1}, {16, 64, 128, 16, 16, 3, 2, 1, 1},  {16, 128, 128, 8, 8, 1, 1, 0, 1},
        {16, 32, 32, 16, 16, 3, 1, 1, 4}, {8, 128, 256, 8, 8, 3, 1, 1, 1},
    };
    printf("float32 convolution, %d thread%s, median of %d %s times (ms)\n", threads, threads > 1 ? "s" : "", runs,
           threads > 1 ? "wall" : "CPU");
    printf("%-36s %10s %10s %10s\n", "shape", "forward", "grad_in", "grad_w");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t *s = cases[c];
        int64_t xs[4] = {s[0], s[1], s[3], s[4]}, ws[4] = {s[2], s[1] / s[8], s[5], s[5]}, bs[1] = {s[2]};
        int64_t stride[2] = {s[6], s[6]}, pad[2] = {s[7], s[7]}, one[2] = {1, 1}, zero[2] = {0, 0};
        tj_scope *scope = tj_scope_begin();
        tj_manual_seed(0);
        tj_tensor *x = tj_randn(xs, 4, TJ_FLOAT32), *w = tj_randn(ws, 4, TJ_FLOAT32), *b = tj_randn(bs, 1, TJ_FLOAT32);
        double t[3][MAX_RUNS];
        for (int r = -1; r < runs; r++) {
            tj_scope *inner = tj_scope_begin();
            tj_tensor *gi = NULL, *gw = NULL, *gb = NULL;
            const bool in_only[3] = {true, false, false}, w_only[3] = {false, true, false};
            double t0 = now_ms();
            tj_tensor *y = tj_convolution(x, w, b, stride, pad, one, false, zero, s[8]);
            double t1 = now_ms();
            tj_status e1 = tj_convolution_backward(y, x, w, bs, 1, stride, pad, one, false, zero, s[8], in_only, &gi,
                                                   &gw, &gb);
            double t2 = now_ms();
            tj_status e2 = tj_convolution_backward(y, x, w, bs, 1, stride, pad, one, false, zero, s[8], w_only, &gi,
                                                   &gw, &gb);
            double t3 = now_ms();
            if (!y || e1 != TJ_OK || e2 != TJ_OK) {
                fprintf(stderr, "bench_conv: %s\n", tj_last_error());
                return 1;
            }
            if (r >= 0) t[0][r] = t1 - t0, t[1][r] = t2 - t1, t[2][r] = t3 - t2;
            tj_scope_end(inner);
        }
        char name[64];
        snprintf(name, sizeof name, "n%lld %lld->%lld %lldx%lld k%lld s%lld g%lld", (long long)s[0], (long long)s[1],
                 (long long)s[2], (long long)s[3], (long long)s[4], (long long)s[5], (long long)s[6],
                 (long long)s[8]);
        printf("%-36s %10.3f %10.3f %10.3f\n", name, bench_median(t[0], runs), bench_median(t[1], runs),
               bench_median(t[2], runs));
        tj_scope_end(scope);
    }
    return bench_pools(runs);
}
