/* tj_k_parallel (kernels/parallel.h): the blocks it hands out, and no
 * OpenMP region with one thread. */
#include <criterion/criterion.h>
#include <omp.h>
#include <pthread.h>

#include "kernels/parallel.h"

#define MAX_T 8

typedef struct record {
    int calls[MAX_T];
    int64_t begin[MAX_T], end[MAX_T];
    int in_parallel[MAX_T];
    pthread_t thread[MAX_T];
} record;

static void note(void *ctx, int t, int64_t begin, int64_t end)
{
    record *r = ctx;
    r->calls[t]++;
    r->begin[t] = begin;
    r->end[t] = end;
    r->in_parallel[t] = omp_in_parallel();
    r->thread[t] = pthread_self();
}

Test(parallel, one_thread_is_one_plain_call_on_the_caller_over_the_whole_range)
{
    for (int nt = -1; nt <= 1; nt++) {
        record r = {0};
        tj_k_parallel(nt, 1000, note, &r);
        cr_assert_eq(r.calls[0], 1, "nt %d", nt);
        cr_expect_eq(r.begin[0], 0);
        cr_expect_eq(r.end[0], 1000);
        cr_expect_eq(r.in_parallel[0], 0, "nt %d entered an OpenMP region", nt);
        cr_expect(pthread_equal(r.thread[0], pthread_self()));
    }
}

Test(parallel, blocks_are_contiguous_in_order_the_first_n_mod_nt_one_longer)
{
    record r = {0};
    tj_k_parallel(3, 10, note, &r);
    const int64_t begin[3] = {0, 4, 7}, end[3] = {4, 7, 10};
    for (int t = 0; t < 3; t++) {
        cr_assert_eq(r.calls[t], 1, "block %d ran %d times", t, r.calls[t]);
        cr_expect_eq(r.begin[t], begin[t], "block %d", t);
        cr_expect_eq(r.end[t], end[t], "block %d", t);
    }
}

Test(parallel, every_thread_index_runs_once_even_with_fewer_items_than_threads)
{
    /* threads past the items still run (with an empty block): per-thread
     * scratch such as partial sums gets initialised by each */
    record r = {0};
    tj_k_parallel(4, 2, note, &r);
    const int64_t begin[4] = {0, 1, 2, 2}, end[4] = {1, 2, 2, 2};
    for (int t = 0; t < 4; t++) {
        cr_assert_eq(r.calls[t], 1, "block %d ran %d times", t, r.calls[t]);
        cr_expect_eq(r.begin[t], begin[t], "block %d", t);
        cr_expect_eq(r.end[t], end[t], "block %d", t);
    }
}

Test(parallel, blocks_are_those_of_an_omp_for_schedule_static)
{
    /* per-thread partial results (convolution weight gradients) stay as
     * they were with `omp for schedule(static)` */
    for (int nt = 2; nt <= 4; nt++)
        for (int64_t n = 0; n <= 23; n++) {
            int owner[23], team = nt;
#pragma omp parallel num_threads(nt)
            {
#pragma omp single
                team = omp_get_num_threads();
#pragma omp for schedule(static)
                for (int64_t i = 0; i < n; i++) owner[i] = omp_get_thread_num();
            }
            cr_assert_eq(team, nt, "OpenMP gave a team of %d for %d threads", team, nt);
            record r = {0};
            tj_k_parallel(nt, n, note, &r);
            for (int t = 0; t < nt; t++)
                for (int64_t i = r.begin[t]; i < r.end[t]; i++)
                    cr_expect_eq(owner[i], t, "nt %d, n %lld: item %lld in block %d, omp for gave it to %d", nt,
                                 (long long)n, (long long)i, t, owner[i]);
        }
}
