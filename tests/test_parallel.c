/* tj_k_parallel (kernels/parallel.h): the blocks it hands out, and no
 * OpenMP region with one thread. */
#include <criterion/criterion.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

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

/* ---- the pool (kernels/parallel.c) ---- */

typedef struct nest {
    _Atomic int inner_calls[4][4]; /* [outer block][inner block] */
    int in_parallel[4];
    _Atomic int inner_on_other_thread;
} nest;

typedef struct nest_call {
    nest *n;
    int outer;
    pthread_t thread;
} nest_call;

static void inner_block(void *ctx, int t, int64_t begin, int64_t end)
{
    nest_call *c = ctx;
    (void)begin, (void)end;
    c->n->inner_calls[c->outer][t]++;
    if (!pthread_equal(pthread_self(), c->thread)) c->n->inner_on_other_thread++;
}

static void outer_block(void *ctx, int t, int64_t begin, int64_t end)
{
    nest *n = ctx;
    (void)begin, (void)end;
    n->in_parallel[t] = tj_k_in_parallel();
    nest_call c = {n, t, pthread_self()};
    tj_k_parallel(4, 400, inner_block, &c); /* a nested loop: all its blocks, on this thread */
}

Test(parallel, a_nested_loop_runs_every_block_on_the_thread_that_calls_it)
{
    nest n = {0};
    tj_k_parallel(4, 4, outer_block, &n);
    for (int o = 0; o < 4; o++) {
        cr_expect_eq(n.in_parallel[o], 1, "tj_k_in_parallel() false in block %d", o);
        for (int t = 0; t < 4; t++)
            cr_expect_eq(n.inner_calls[o][t], 1, "outer block %d: inner block %d ran %d times", o, t, n.inner_calls[o][t]);
    }
    cr_expect_eq(n.inner_on_other_thread, 0, "%d nested blocks ran on another thread", n.inner_on_other_thread);
    cr_expect(!tj_k_in_parallel(), "tj_k_in_parallel() still true after the loop");
}

typedef struct items_record {
    _Atomic int calls[1000];
    _Atomic int busy[TJ_K_MAX_PARTICIPANTS];
    _Atomic int who_clash, who_out_of_range;
    int nt;
} items_record;

static void note_item(void *ctx, int who, int64_t i)
{
    items_record *r = ctx;
    if (who < 0 || who >= r->nt) {
        r->who_out_of_range++;
        return;
    }
    if (r->busy[who]++) r->who_clash++; /* two threads with one number at once */
    r->calls[i]++;
    for (volatile int k = 0; k < (int)(i % 7) * 50; k++) /* uneven items */
        ;
    r->busy[who]--;
}

Test(parallel, items_run_once_each_with_distinct_participant_numbers)
{
    for (int nt = 1; nt <= 5; nt++) {
        items_record r = {.nt = nt};
        tj_k_parallel_items(nt, 1000, note_item, &r);
        cr_expect_eq(r.who_out_of_range, 0, "nt %d: participant number out of range", nt);
        cr_expect_eq(r.who_clash, 0, "nt %d: two threads ran as one participant", nt);
        for (int i = 0; i < 1000; i++) cr_assert_eq(r.calls[i], 1, "nt %d: item %d ran %d times", nt, i, r.calls[i]);
    }
}

/* tj_k_parallel_steal: every item once, participant numbers distinct and
 * in range, for item counts below, at and above the thread count; one
 * thread runs the items in order. */
Test(parallel, steal_runs_every_item_once_with_distinct_participant_numbers)
{
    const int64_t sizes[] = {0, 1, 2, 3, 7, 1000};
    for (int nt = 1; nt <= 5; nt++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            items_record r = {.nt = nt};
            tj_k_parallel_steal(nt, sizes[k], note_item, &r);
            cr_expect_eq(r.who_out_of_range, 0, "nt %d: participant number out of range", nt);
            cr_expect_eq(r.who_clash, 0, "nt %d: two threads ran as one participant", nt);
            for (int64_t i = 0; i < sizes[k]; i++)
                cr_assert_eq(r.calls[i], 1, "nt %d, n %lld: item %lld ran %d times", nt, (long long)sizes[k],
                             (long long)i, r.calls[i]);
        }
}

typedef struct steal_record {
    _Atomic int order[100];
    _Atomic int who[100];
    _Atomic int next;
} steal_record;

/* Participant 1 stalls 200 ms on its first item (a preempted thread). */
static void stall_first_of_one(void *ctx, int who, int64_t i)
{
    steal_record *r = ctx;
    r->who[i] = who;
    r->order[i] = r->next++;
    if (who == 1 && i == 50) {
        struct timespec ts = {0, 200000000};
        nanosleep(&ts, NULL);
    }
}

/* With one thread all 100 items run on participant 0 in order; with two,
 * block 1 (items 50-99) belongs to participant 1, but while it stalls in
 * its first item participant 0 takes the rest of the block, from the back. */
Test(parallel, steal_hands_a_stalled_threads_items_to_the_others)
{
    steal_record one = {0};
    tj_k_parallel_steal(1, 100, stall_first_of_one, &one);
    for (int i = 0; i < 100; i++) {
        cr_assert_eq(one.who[i], 0);
        cr_assert_eq(one.order[i], i, "one thread: item %d ran %d-th", i, one.order[i]);
    }
    steal_record two = {0};
    tj_k_parallel_steal(2, 100, stall_first_of_one, &two);
    for (int i = 51; i < 100; i++) cr_assert_eq(two.who[i], 0, "item %d ran on participant %d", i, two.who[i]);
    for (int i = 52; i < 100; i++)
        cr_assert_gt(two.order[i - 1], two.order[i], "items %d and %d not taken from the back", i - 1, i);
}

/* Many short loops in a row (a worker may wake after its loop ended and
 * the next began) and from several threads at once (one holds the pool,
 * the others run theirs alone): every block of every loop runs once. */
typedef struct counts {
    _Atomic long sum;
} counts;

static void add_range(void *ctx, int t, int64_t begin, int64_t end)
{
    counts *c = ctx;
    (void)t;
    long s = 0;
    for (int64_t i = begin; i < end; i++) s += i;
    c->sum += s;
}

static void *many_loops(void *arg)
{
    long *failures = arg;
    for (int k = 0; k < 3000; k++) {
        counts c = {0};
        int64_t n = k % 97;
        tj_k_parallel(2 + k % 3, n, add_range, &c);
        if (c.sum != n * (n - 1) / 2) ++*failures;
    }
    return NULL;
}

Test(parallel, back_to_back_loops_from_several_threads_each_run_every_block_once)
{
    pthread_t th[4];
    long failures[4] = {0};
    for (int i = 0; i < 4; i++) cr_assert_eq(pthread_create(&th[i], NULL, many_loops, &failures[i]), 0);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) cr_expect_eq(failures[i], 0, "caller %d: %ld loops with a wrong sum", i, failures[i]);
    long mine = 0;
    many_loops(&mine);
    cr_expect_eq(mine, 0, "%ld loops with a wrong sum on the main thread", mine);
}

/* While one thread's loop holds the pool, another thread's loop runs on its
 * caller alone, and its bodies still see a parallel loop (tj_k_in_parallel:
 * gemv.c keeps threaded BLAS out of loop bodies either way, so results do
 * not depend on whether the pool was free). */
static _Atomic int holder_started, other_done, other_saw_parallel = -1;

static void holding_block(void *ctx, int t, int64_t begin, int64_t end)
{
    (void)ctx, (void)begin, (void)end;
    if (t != 0) return;
    holder_started = 1;
    while (!other_done) sched_yield();
}

static void *hold_the_pool(void *arg)
{
    (void)arg;
    tj_k_parallel(2, 2, holding_block, NULL);
    return NULL;
}

static void note_in_parallel(void *ctx, int t, int64_t begin, int64_t end)
{
    (void)ctx, (void)t, (void)begin, (void)end;
    other_saw_parallel = tj_k_in_parallel();
}

Test(parallel, a_loop_run_alone_while_the_pool_is_taken_still_counts_as_parallel)
{
    pthread_t holder;
    cr_assert_eq(pthread_create(&holder, NULL, hold_the_pool, NULL), 0);
    while (!holder_started) sched_yield();
    tj_k_parallel(2, 2, note_in_parallel, NULL);
    other_done = 1;
    pthread_join(holder, NULL);
    cr_expect_eq(other_saw_parallel, 1, "tj_k_in_parallel() was %d in a loop body run on its caller", other_saw_parallel);
    cr_expect(!tj_k_in_parallel());
}

/* The first loop of a process starts its worker and publishes the job at
 * once: the worker, whose thread may first run after that, still takes part
 * (it used to wait for the next job, leaving the caller all the blocks).
 * Block 0 waits up to 2 s for block 1 to start on another thread. */
static _Atomic int second_block_started;
static pthread_t second_block_thread;

static void wait_for_second_block(void *ctx, int t, int64_t begin, int64_t end)
{
    (void)ctx, (void)begin, (void)end;
    if (t == 1) {
        second_block_thread = pthread_self();
        second_block_started = 1;
        return;
    }
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do clock_gettime(CLOCK_MONOTONIC, &now);
    while (!second_block_started && now.tv_sec - start.tv_sec < 2);
}

Test(parallel, the_worker_a_loop_starts_takes_part_in_that_loop)
{
    tj_k_parallel(2, 2, wait_for_second_block, NULL); /* the process's first loop: criterion forks each test */
    cr_assert(second_block_started);
    cr_expect_not(pthread_equal(second_block_thread, pthread_self()), "block 1 ran on the caller after block 0");
}
