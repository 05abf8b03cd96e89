/* Concurrency (issue 9; CI also runs this file under ThreadSanitizer):
 * eager calls from several threads at once, each thread with its own mode
 * stack, scopes and last error; make_fx traces on several threads at once;
 * the OpenMP team inside kernels; tensors shared and released across
 * threads. Results are compared with the same work done on one thread. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tjit/tjit.h"

#define THREADS 4

/* A deterministic [rows, cols] float32 tensor (owned by the open scope, if any). */
static tj_tensor *ramp(int64_t rows, int64_t cols, int seed)
{
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){rows, cols});
    float *d = tj_tensor_data(t);
    for (int64_t i = 0; i < rows * cols; i++) d[i] = (float)((i * 7 + seed * 13) % 17) / 17.0f - 0.5f;
    return t;
}

/* A small eager workload: matmul, elementwise, softmax, reductions. Returns
 * a 0-dim sum of its result (new reference, owned by the open scope). */
static tj_tensor *workload(tj_tensor *x, tj_tensor *w)
{
    tj_tensor *h = tj_relu(tj_add(tj_mm(x, w), x));
    tj_tensor *p = tj_softmax(tj_mul(h, h), 1);
    int64_t dim = 0;
    return tj_sum(tj_exp(tj_sum_dim(p, &dim, 1, false, -1)), -1);
}

typedef struct eager_job {
    int seed;
    double result;
    int64_t mm_calls, total_calls;
    int depth_inside, depth_after;
    char error[256];
    tj_status st;
} eager_job;

static void *eager_thread(void *arg)
{
    eager_job *j = arg;
    tj_counter_mode *cm = tj_counter_mode_new();
    if (!cm || tj_mode_push(tj_counter_mode_base(cm)) != TJ_OK) {
        j->st = tj_last_status();
        return NULL;
    }
    j->depth_inside = tj_mode_depth();
    tj_scope *s = tj_scope_begin();
    double acc = 0;
    for (int rep = 0; rep < 20; rep++) {
        tj_tensor *x = ramp(16, 16, j->seed + rep), *w = ramp(16, 16, j->seed * 3 + rep); /* the scope's */
        acc += tj_tensor_item_at(workload(x, w), 0);
    }
    /* a failing call: the message is this thread's own */
    tj_tensor *a = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){2, 10 + j->seed}); /* never fits [5, 4] */
    tj_tensor *b = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){5, 4});
    if (tj_mm(a, b)) j->st = TJ_ERR_INVALID_ARGUMENT;
    snprintf(j->error, sizeof j->error, "%s", tj_last_error());
    tj_scope_end(s);
    j->mm_calls = tj_counter_mode_count(cm, tj_op_find("aten::mm"));
    j->total_calls = tj_counter_mode_total(cm);
    tj_mode_pop(tj_counter_mode_base(cm));
    j->depth_after = tj_mode_depth();
    tj_counter_mode_free(cm);
    j->result = acc;
    return NULL;
}

Test(threads, eager_calls_on_four_threads_each_see_only_their_own_mode_stack_and_errors)
{
    eager_job ref[THREADS], job[THREADS];
    for (int t = 0; t < THREADS; t++) {
        ref[t] = (eager_job){.seed = t};
        eager_thread(&ref[t]); /* one at a time: the reference */
        cr_assert_eq(ref[t].st, TJ_OK, "thread %d alone: %s (%s)", t, tj_status_name(ref[t].st), ref[t].error);
    }
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) {
        job[t] = (eager_job){.seed = t};
        cr_assert_eq(pthread_create(&th[t], NULL, eager_thread, &job[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    cr_assert_eq(tj_mode_depth(), 0, "another thread's modes leaked onto the main thread");
    for (int t = 0; t < THREADS; t++) {
        cr_assert_eq(job[t].st, TJ_OK);
        cr_expect_eq(job[t].result, ref[t].result, "thread %d: %.17g, alone %.17g", t, job[t].result, ref[t].result);
        cr_expect_eq(job[t].depth_inside, 1, "thread %d saw %d modes", t, job[t].depth_inside);
        cr_expect_eq(job[t].depth_after, 0);
        cr_expect_eq(job[t].mm_calls, 21, "thread %d counted %lld mm calls", t, (long long)job[t].mm_calls);
        cr_expect_eq(job[t].total_calls, ref[t].total_calls, "thread %d counted another thread's calls", t);
        char want[64];
        snprintf(want, sizeof want, "[2, %d]", 10 + t);
        cr_expect(strstr(job[t].error, "aten::mm") && strstr(job[t].error, want), "thread %d: error '%s'", t, job[t].error);
    }
}

/* ---- make_fx on several threads ---- */

static tj_status traced_fn(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n;
    out[0] = workload(in[0], in[1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

typedef struct trace_job {
    bool decompose;
    char *text;
    tj_status st;
} trace_job;

static void *trace_thread(void *arg)
{
    trace_job *j = arg;
    tj_decomp_table *table = j->decompose ? tj_core_decompositions() : NULL;
    tj_tensor *in[2] = {tj_tensor_fake(TJ_FLOAT32, 2, (int64_t[]){8, 8}), tj_tensor_fake(TJ_FLOAT32, 2, (int64_t[]){8, 8})};
    for (int rep = 0; rep < 10; rep++) {
        tj_graph *g = tj_make_fx(traced_fn, NULL, in, 2, table, TJ_TRACE_FAKE);
        if (!g) {
            j->st = tj_last_status();
            break;
        }
        free(j->text);
        j->text = tj_graph_to_string(g);
        tj_graph_free(g);
    }
    tj_tensor_release(in[0]);
    tj_tensor_release(in[1]);
    tj_decomp_table_free(table);
    return NULL;
}

Test(threads, make_fx_on_four_threads_with_different_tables_records_each_trace_alone)
{
    trace_job ref[2] = {{.decompose = false}, {.decompose = true}}, job[THREADS];
    for (int k = 0; k < 2; k++) {
        trace_thread(&ref[k]);
        cr_assert_eq(ref[k].st, TJ_OK, "%s", tj_last_error());
    }
    cr_assert_str_neq(ref[0].text, ref[1].text);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) {
        job[t] = (trace_job){.decompose = t % 2};
        cr_assert_eq(pthread_create(&th[t], NULL, trace_thread, &job[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++) {
        cr_assert_eq(job[t].st, TJ_OK);
        cr_expect_str_eq(job[t].text, ref[t % 2].text, "thread %d's graph differs from the same trace alone", t);
        free(job[t].text);
    }
    free(ref[0].text);
    free(ref[1].text);
}

/* ---- the OpenMP team inside kernels ---- */

Test(threads, kernels_on_two_threads_give_the_one_thread_results)
{
    /* large enough that elementwise, reduction and softmax kernels split the work */
    tj_tensor *x = ramp(512, 1024, 1), *w = ramp(1024, 256, 2);
    tj_scope *s = tj_scope_begin();
    double r[2];
    for (int k = 0; k < 2; k++) {
        tj_set_num_threads(k + 1);
        tj_tensor *y = tj_softmax(tj_exp(tj_mul(x, x)), 1);
        tj_tensor *z = tj_mm(y, w);
        int64_t dim = 1;
        r[k] = tj_tensor_item_at(tj_sum(tj_sum_dim(z, &dim, 1, false, -1), -1), 0);
        cr_assert(isfinite(r[k]), "%s", tj_last_error());
    }
    cr_expect(fabs(r[1] - r[0]) <= 1e-6 * fabs(r[0]), "two threads %.9g, one thread %.9g", r[1], r[0]);
    tj_scope_end(s);
    tj_tensor_release(x);
    tj_tensor_release(w);
}

/* ---- a tensor shared by threads ---- */

static void *retain_release_thread(void *arg)
{
    tj_tensor *t = arg;
    for (int i = 0; i < 10000; i++) tj_tensor_release(tj_tensor_retain(t));
    /* views share the storage's reference count */
    for (int i = 0; i < 200; i++) {
        tj_scope *s = tj_scope_begin();
        tj_tensor *v = tj_t(t);
        if (tj_tensor_item_at(v, 1) != tj_tensor_item_at(t, 3)) abort();
        tj_scope_end(s);
    }
    return NULL;
}

Test(threads, a_tensor_retained_and_viewed_on_four_threads_is_freed_once)
{
    tj_tensor *t = ramp(3, 3, 5);
    pthread_t th[THREADS];
    for (int k = 0; k < THREADS; k++) cr_assert_eq(pthread_create(&th[k], NULL, retain_release_thread, t), 0);
    for (int k = 0; k < THREADS; k++) pthread_join(th[k], NULL);
    cr_expect_eq(tj_tensor_item_at(t, 4), (double)((float)((4 * 7 + 65) % 17) / 17.0f - 0.5f), "the data survived");
    tj_tensor_release(t);
}
