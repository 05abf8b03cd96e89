/* The decomposed cnn's gathered products (runtime/op_linalg.h:
 * tj_kernel_bmm_gathered, tj_kernel_bmm_gathered_t; the plan steps
 * "aten::_to_copy + aten::bmm"): each convolution's forward product and
 * weight gradient read from the im2col view of its padded input, against
 * aten::bmm on the view's contiguous copy (copy included), whose bytes
 * they must give (checked first). Median of RUNS calls after one warm-up,
 * in the calling thread's CPU time at 1 thread (run it under taskset -c
 * 0), wall time on more.
 *
 * Usage: bench_gathered [THREADS [RUNS [NAME [alone]]]]   (defaults 1, 21,
 * all): NAME picks the products whose description contains it; `alone`
 * runs the gathered steps only, not the copy and bmm (for perf record). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/op_linalg.h"
#include "models/bench_clock.h"
#include "tjit/tjit.h"

#define MAX_RUNS 201

static clockid_t clock_id = CLOCK_THREAD_CPUTIME_ID;

static double now_ms(void) { return bench_clock_ns(clock_id) / 1e6; }

/* A convolution's im2col view of its padded input x [batch, c, h, w]
 * (stride 1): [1, c, kh, kw, batch, oh, ow]; the forward product is
 * w [1, oc, c*kh*kw] @ view, the weight gradient g [1, oc, batch*oh*ow] @
 * view^T. Per image (the decomposition's forward since session 44): the
 * view [batch, c, kh, kw, oh, ow], w broadcast over the images (batch
 * stride 0), the product [batch, oc, oh*ow]. */
typedef struct conv {
    const char *what;
    int64_t batch, c, h, w, oc, kh, kw;
    bool transposed, per_image;
} conv;

static const conv convs[] = {
    {"cnn conv1 forward (bmm)", 64, 1, 32, 32, 16, 5, 5, false, false},
    {"cnn conv2 forward (bmm_1)", 64, 16, 18, 18, 32, 5, 5, false, false},
    {"cnn conv1 forward per image", 64, 1, 32, 32, 16, 5, 5, false, true},
    {"cnn conv2 forward per image", 64, 16, 18, 18, 32, 5, 5, false, true},
    {"cnn conv2 weight gradient (bmm_9)", 64, 16, 18, 18, 32, 5, 5, true, false},
    {"cnn conv1 weight gradient (bmm_10)", 64, 1, 32, 32, 16, 5, 5, true, false},
};

/* aten::bmm on the view's contiguous copy [b, ck, pos] (or its transpose). */
static tj_tensor *bmm_on_copy(tj_tensor *a, tj_tensor *view, int64_t b, int64_t ck, int64_t pos, bool transposed)
{
    tj_tensor *copy = tj_reshape(tj_contiguous(view), (int64_t[]){b, ck, pos}, 3);
    return copy ? tj_bmm(a, transposed ? tj_transpose(copy, 1, 2) : copy) : NULL;
}

static int bench_conv(const conv *cv, int runs, bool alone)
{
    int64_t oh = cv->h - cv->kh + 1, ow = cv->w - cv->kw + 1, ck = cv->c * cv->kh * cv->kw, pos = cv->batch * oh * ow;
    int64_t xshape[4] = {cv->batch, cv->c, cv->h, cv->w}, image = cv->c * cv->h * cv->w;
    int64_t shape[7] = {1, cv->c, cv->kh, cv->kw, cv->batch, oh, ow};
    int64_t strides[7] = {0, cv->h * cv->w, cv->w, 1, image, cv->w, 1};
    int64_t image_shape[6] = {cv->batch, cv->c, cv->kh, cv->kw, oh, ow};
    int64_t image_strides[6] = {image, cv->h * cv->w, cv->w, 1, cv->w, 1};
    int64_t b = cv->per_image ? cv->batch : 1, per = pos / b; /* product items, columns per item */
    int64_t k = cv->transposed ? pos : ck, n = cv->transposed ? ck : per;
    tj_manual_seed(1);
    tj_tensor *x = tj_randn(xshape, 4, TJ_FLOAT32), *a = tj_randn((int64_t[]){1, cv->oc, k}, 3, TJ_FLOAT32);
    if (a && cv->per_image) a = tj_expand(a, (int64_t[]){b, cv->oc, k}, 3);
    tj_tensor *view = !x                ? NULL
                      : cv->per_image ? tj_as_strided(x, image_shape, image_strides, 6, false, 0)
                                      : tj_as_strided(x, shape, strides, 7, false, 0);
    tj_tensor *out = a ? tj_tensor_empty(TJ_FLOAT32, 3, (int64_t[]){b, cv->oc, n}) : NULL;
    if (!view || !out) {
        fprintf(stderr, "bench_gathered: %s\n", tj_last_error());
        return 1;
    }
    tj_value args[4] = {tj_v_tensor(a), tj_v_tensor(view), tj_v_int(1), tj_v_int(4)}; /* either view */
    tj_tensor *outs[1] = {out};
    tj_status (*step)(const tj_value *, tj_tensor *const *) =
        cv->transposed ? tj_kernel_bmm_gathered_t : tj_kernel_bmm_gathered;
    double t[2][MAX_RUNS];
    tj_tensor *want = bmm_on_copy(a, view, b, ck, per, cv->transposed);
    for (int r = -1; r < runs; r++) {
        tj_scope *inner = tj_scope_begin();
        double t0 = now_ms();
        tj_status st = step(args, outs);
        double t1 = now_ms();
        tj_tensor *ref = alone ? want : bmm_on_copy(a, view, b, ck, per, cv->transposed);
        double t2 = now_ms();
        if (st != TJ_OK || !ref) {
            fprintf(stderr, "bench_gathered: %s\n", tj_last_error());
            return 1;
        }
        if (r >= 0) t[0][r] = t1 - t0, t[1][r] = t2 - t1;
        tj_scope_end(inner);
    }
    bool same = want && memcmp(tj_tensor_data(want), tj_tensor_data(out), sizeof(float) * (size_t)(b * cv->oc * n)) == 0;
    double gathered = bench_median(t[0], runs), copied = bench_median(t[1], runs);
    double gflop = 2e-6 * (double)(b * cv->oc * k * n);
    printf("%-36s %5lld x %5lld x %5lld %9.3f %9.3f %8.1f %5.2f  %s\n", cv->what, (long long)cv->oc, (long long)k,
           (long long)n, gathered, copied, gflop / gathered, copied / gathered, same ? "same bytes" : "BYTES DIFFER");
    return same ? 0 : 1;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1, runs = argc > 2 ? atoi(argv[2]) : 21;
    const char *name = argc > 3 ? argv[3] : "";
    bool alone = argc > 4 && strcmp(argv[4], "alone") == 0;
    if (threads < 1 || runs < 1 || runs > MAX_RUNS || (argc > 4 && !alone)) {
        fprintf(stderr, "usage: bench_gathered [THREADS [RUNS [NAME [alone]]]] (RUNS 1..%d)\n", MAX_RUNS);
        return 2;
    }
    tj_set_num_threads(threads);
    if (threads > 1) clock_id = CLOCK_MONOTONIC;
    printf("%-36s %21s %9s %9s %8s %5s\n", "product", "m x k x n", "gath ms", "copy ms", "GFLOP/s", "ratio");
    int bad = 0;
    tj_scope *scope = tj_scope_begin();
    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++)
        if (strstr(convs[i].what, name)) bad |= bench_conv(&convs[i], runs, alone);
    tj_scope_end(scope);
    return bad;
}
