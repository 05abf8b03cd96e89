/* tj_set_flush_denormal: denormal results and operands as zeros on the
 * calling thread, in eager calls, plan runs and on every thread of the
 * pool; IEEE denormals again once off. Each test runs in its own process,
 * so a setting does not reach the next test. */
#include <criterion/criterion.h>
#include <immintrin.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "kernels/parallel.h"
#include "tjit/tjit.h"

#define N_LARGE (1 << 20) /* elements: a multiplication split over the pool's threads */

/* 1e-30f * 1e-10f: about 1e-40, a float32 denormal (smallest normal: 1.18e-38). */
static const float tiny = 1e-30f, small = 1e-10f;

static tj_tensor *filled(int64_t n, float v)
{
    tj_tensor *t = tj_full(&n, 1, tj_v_float(v), TJ_FLOAT32);
    cr_assert_not_null(t, "%s", tj_last_error());
    return t;
}

/* Asserts every element of the float32 tensor t has the bits of `want`. */
static void expect_all(tj_tensor *t, float want, const char *what)
{
    const float *d = tj_tensor_data(t);
    int64_t n = tj_tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&d[i], &want, sizeof want)) cr_assert_fail("%s: element %lld is %a, want %a", what, (long long)i, d[i], want);
}

Test(flush_denormal, eager_results_and_operands_flushed_then_ieee_again)
{
    volatile float a = tiny, b = small;
    float denormal = a * b; /* IEEE: this test's thread does not flush yet */
    cr_assert(denormal > 0 && denormal < 1.17549435e-38f);
    cr_assert_not(tj_get_flush_denormal());
    tj_scope *s = tj_scope_begin();

    cr_assert(tj_set_flush_denormal(true)); /* x86-64 CPUs of this century have DAZ */
    cr_assert(tj_get_flush_denormal());
    expect_all(tj_mul(filled(4, tiny), filled(4, small)), 0.0f, "flushed result");
    /* a denormal operand (made before) read as zero: d * 2^100 would be normal */
    tj_tensor *d = tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){1}, &denormal);
    cr_assert_not_null(d);
    expect_all(tj_mul_scalar(d, tj_v_float(0x1p100)), 0.0f, "denormal operand");

    cr_assert(tj_set_flush_denormal(false));
    cr_assert_not(tj_get_flush_denormal());
    expect_all(tj_mul(filled(4, tiny), filled(4, small)), denormal, "IEEE result");
    expect_all(tj_mul_scalar(d, tj_v_float(0x1p100)), denormal * 0x1p100f, "IEEE operand");
    tj_scope_end(s);
}

/* Every element of a product split over two threads, with the flag on then
 * off: a pool thread keeping its own bits would leave denormals in its
 * block, or zeros after the flag is off. */
Test(flush_denormal, every_thread_of_a_split_kernel_follows_the_caller)
{
    tj_set_num_threads(2);
    tj_scope *s = tj_scope_begin();
    tj_tensor *a = filled(N_LARGE, tiny), *b = filled(N_LARGE, small);
    volatile float x = tiny, y = small;
    float denormal = x * y;
    cr_assert(tj_set_flush_denormal(true));
    expect_all(tj_mul(a, b), 0.0f, "2 threads, flushed");
    cr_assert(tj_set_flush_denormal(false));
    expect_all(tj_mul(a, b), denormal, "2 threads, IEEE");
    cr_assert(tj_set_flush_denormal(true));
    expect_all(tj_mul(a, b), 0.0f, "2 threads, flushed again");
    tj_scope_end(s);
}

static tj_status multiply(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_mul(in[0], in[1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(flush_denormal, plan_runs_follow_the_running_thread)
{
    tj_set_num_threads(2);
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[2] = {filled(N_LARGE, tiny), filled(N_LARGE, small)}, *out[1];
    volatile float x = tiny, y = small;
    float denormal = x * y;
    tj_graph *g = tj_make_fx(multiply, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_assert(tj_set_flush_denormal(true));
    cr_assert_eq(tj_plan_run(p, in, 2, out), TJ_OK, "%s", tj_last_error());
    expect_all(out[0], 0.0f, "plan, flushed");
    cr_assert(tj_set_flush_denormal(false));
    cr_assert_eq(tj_plan_run(p, in, 2, out), TJ_OK, "%s", tj_last_error());
    expect_all(out[0], denormal, "plan, IEEE");
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* Block 0 (the caller) waits until block 1 has started, so that a pool
 * thread runs block 1 (unless none comes within a second: a worker started
 * by this very call may miss it); each block notes its thread and MXCSR. */
typedef struct seen {
    atomic_bool second_started;
    unsigned csr[2];
    pthread_t thread[2];
} seen;

static void note_csr(void *ctx, int t, int64_t begin, int64_t end)
{
    (void)begin, (void)end;
    seen *s = ctx;
    s->csr[t] = _mm_getcsr();
    s->thread[t] = pthread_self();
    if (t == 1) atomic_store(&s->second_started, true);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (t == 0 && !atomic_load(&s->second_started)) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 1) break;
    }
}

Test(flush_denormal, pool_threads_take_the_callers_control_bits_rounding_included)
{
    unsigned base = _mm_getcsr();
    unsigned modes[] = {base | 0x8040u, base & ~0x8040u, (base & ~0x6000u) | 0x2000u /* round down */, base};
    for (int m = 0; m < 4; m++) {
        _mm_setcsr(modes[m]);
        seen s = {0};
        for (int tries = 0; tries < 3 && (!tries || pthread_equal(s.thread[1], pthread_self())); tries++) {
            memset(&s, 0, sizeof s);
            tj_k_parallel(2, 2, note_csr, &s);
        }
        cr_assert_not(pthread_equal(s.thread[1], pthread_self()), "no pool thread ran block 1");
        cr_expect_eq(s.csr[1] & 0xffc0u, modes[m] & 0xffc0u, "mode %d: pool thread MXCSR %#x, caller's %#x", m,
                     s.csr[1], modes[m]);
        cr_expect_eq(_mm_getcsr() & 0xffc0u, modes[m] & 0xffc0u, "the caller's bits changed");
    }
    _mm_setcsr(base);
}

/* float64 matmul goes to OpenBLAS, whose threads kept the MXCSR they were
 * started with: with 2 threads half the rows kept their denormal products
 * (1e-155^2 = 1e-310), summed to normals; 1 thread gave zeros. */
Test(flush_denormal, blas_products_flush_for_every_thread_count)
{
    tj_scope *s = tj_scope_begin();
    int64_t shape[2] = {256, 256};
    tj_tensor *a = tj_full(shape, 2, tj_v_float(1e-155), TJ_FLOAT64);
    cr_assert_not_null(a, "%s", tj_last_error());
    cr_assert(tj_set_flush_denormal(true));
    for (int threads = 1; threads <= 2; threads++) {
        tj_set_num_threads(threads);
        tj_tensor *c = tj_mm(a, a);
        cr_assert_not_null(c, "%s", tj_last_error());
        const double *d = tj_tensor_data(c);
        for (int64_t i = 0; i < 256 * 256; i++)
            if (d[i] != 0) cr_assert_fail("%d threads: element %lld is %a, want 0", threads, (long long)i, d[i]);
    }
    tj_scope_end(s);
}

/* OpenBLAS starts the threads a larger count needs from the calling thread,
 * which hands them its MXCSR: set from a flushing thread, they flushed the
 * rows they computed for every caller after (here half the products). */
Test(flush_denormal, blas_threads_started_under_flush_do_not_flush)
{
    tj_scope *s = tj_scope_begin();
    int64_t shape[2] = {512, 512};
    tj_tensor *a = tj_full(shape, 2, tj_v_float(1e-155), TJ_FLOAT64);
    cr_assert_not_null(a, "%s", tj_last_error());
    cr_assert(tj_set_flush_denormal(true));
    tj_set_num_threads(4);
    cr_assert(tj_set_flush_denormal(false));
    tj_tensor *c = tj_mm(a, a); /* IEEE: 512 products of 1e-310 sum to a normal 5.12e-308 */
    cr_assert_not_null(c, "%s", tj_last_error());
    const double *d = tj_tensor_data(c);
    for (int64_t i = 0; i < 512 * 512; i++)
        if (d[i] < 5e-308) cr_assert_fail("element %lld is %a, want about 5.12e-308", (long long)i, d[i]);
    tj_scope_end(s);
}
