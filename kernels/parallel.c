/* The thread pool behind tj_k_parallel and tj_k_parallel_items (see
 * parallel.h).
 *
 * One job at a time: the calling thread publishes it (a new generation),
 * runs block 0 itself, then claims further blocks from a shared counter as
 * the workers do; blocks are claimed dynamically, so a worker that is slow
 * to wake (or never started) costs time, not correctness. Workers spin on
 * the generation for SPIN_NS after their last job, then sleep on a futex;
 * the caller makes the wake-up system call only when one is asleep. That is
 * the difference from libgomp, which calls futex_wake at every region start
 * and end (~1.3 us each on this VM, where a system call also flushes the
 * TLB): a region cost 2.4-3.1 us there and costs ~0.1-1 us here (the hand-
 * off is one cache line each way between cores that share no cache).
 *
 * A call from inside a job (nested), or while another thread's job holds
 * the pool, runs every block on the calling thread: results never depend
 * on which thread runs a block. */
#include <immintrin.h>
#include <linux/futex.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fp_control.h"
#include "parallel.h"

/* How long an idle worker spins before it sleeps: longer than the gaps
 * between parallel kernels of a model step (a serial kernel in between),
 * so that a worker is rarely asleep when a job comes. OMP_WAIT_POLICY=
 * passive (as for OpenMP: idle threads use no CPU) makes it sleep at once. */
#define SPIN_NS 1000000
#define MAX_WORKERS (TJ_K_MAX_PARTICIPANTS - 1)

typedef struct job {
    tj_k_block_fn blocks; /* block job: claims are blocks [0, nt) of [0, n) */
    tj_k_item_fn items;   /* item job: claims are items [0, n), run by participants [0, nt) */
    void *ctx;
    int64_t n;
    int nt;
    /* the caller's floating-point control bits (fp_control.h), taken by every
     * thread that claims work of the job (tj_set_flush_denormal): the pool's
     * threads would otherwise keep the bits they started with, and a result
     * would depend on which thread computed it */
    unsigned fp_control;
} job;

/* Claims and limits carry the generation of their job in the high 32 bits:
 * a worker that wakes late, after its job ended and another began, sees a
 * tag that is not its own and claims nothing (a claim is a compare-and-swap
 * on a matching tag, so it cannot take a newer job's claim either). While a
 * claim of job g is running, job g cannot end, so its description is stable. */
static struct {
    _Alignas(64) atomic_uint generation; /* a new job */
    _Alignas(64) atomic_uint_least64_t next; /* tag | next claim */
    atomic_uint_least64_t limit;             /* tag | claims in the job */
    atomic_uint_least64_t participants;      /* tag | threads that may claim */
    _Alignas(64) atomic_long done;           /* claims finished */
    _Alignas(64) atomic_int sleepers;        /* workers in futex_wait */
    atomic_bool busy;                        /* a caller owns the pool */
    atomic_int n_workers;
    job j;
    pthread_mutex_t start_lock; /* serialises worker creation */
} pool = {.start_lock = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local bool in_job;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t tagged(unsigned gen, uint64_t v) { return (uint64_t)gen << 32 | v; }

static void run_block(const job *j, int t)
{
    int64_t q = j->n / j->nt, r = j->n % j->nt;
    int64_t begin = t * q + (t < r ? t : r);
    j->blocks(j->ctx, t, begin, begin + q + (t < r));
}

/* Claims and runs work of job `gen` until none is left or the job is no
 * longer current. `who` is the participant's number (0: the caller). */
static void run_claims(unsigned gen, int who)
{
    uint64_t lim = atomic_load_explicit(&pool.limit, memory_order_acquire);
    uint64_t par = atomic_load_explicit(&pool.participants, memory_order_acquire);
    if (lim >> 32 != gen || par >> 32 != gen || (uint32_t)par <= (uint32_t)who) return;
    uint64_t c = atomic_load_explicit(&pool.next, memory_order_acquire);
    for (;;) {
        if (c >> 32 != gen || (uint32_t)c >= (uint32_t)lim) return;
        if (!atomic_compare_exchange_weak_explicit(&pool.next, &c, c + 1, memory_order_acq_rel, memory_order_acquire))
            continue;
        const job *j = &pool.j;
        tj_k_fp_control_set(j->fp_control);
        if (j->blocks) run_block(j, (int)(uint32_t)c);
        else j->items(j->ctx, who, (int64_t)(uint32_t)c);
        atomic_fetch_add_explicit(&pool.done, 1, memory_order_release);
        c = atomic_load_explicit(&pool.next, memory_order_acquire);
    }
}

static int64_t spin_ns(void)
{
    const char *policy = getenv("OMP_WAIT_POLICY");
    return policy && !strcasecmp(policy, "passive") ? 0 : SPIN_NS;
}

/* The generation each worker was started at (by ensure_workers, under
 * start_lock, before the job that wanted it is published): the worker takes
 * part in that job even when its thread first runs after the publication. */
static unsigned started_at[MAX_WORKERS + 1];

static void *worker_main(void *arg)
{
    int who = (int)(intptr_t)arg;
    int64_t spin_limit = spin_ns();
    unsigned seen = started_at[who];
    in_job = true; /* anything a worker runs is inside a job */
    for (;;) {
        unsigned g;
        int64_t idle_since = now_ns();
        int spins = 0;
        while ((g = atomic_load_explicit(&pool.generation, memory_order_acquire)) == seen) {
            _mm_pause();
            if (++spins % 256 || now_ns() - idle_since < spin_limit) continue;
            atomic_fetch_add(&pool.sleepers, 1);
            if (atomic_load(&pool.generation) == seen) /* the kernel re-checks it atomically */
                syscall(SYS_futex, &pool.generation, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
            atomic_fetch_sub(&pool.sleepers, 1);
            idle_since = now_ns();
        }
        seen = g;
        run_claims(g, who);
    }
    return NULL;
}

/* Starts workers up to `want` (fewer if the system refuses threads: the
 * caller then runs more of the claims itself). */
static void ensure_workers(int want)
{
    if (want > MAX_WORKERS) want = MAX_WORKERS;
    if (atomic_load_explicit(&pool.n_workers, memory_order_relaxed) >= want) return;
    pthread_mutex_lock(&pool.start_lock);
    for (int n = atomic_load(&pool.n_workers); n < want; n++) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        started_at[n + 1] = atomic_load(&pool.generation); /* pthread_create orders it before the thread */
        int rc = pthread_create(&t, &attr, worker_main, (void *)(intptr_t)(n + 1));
        pthread_attr_destroy(&attr);
        if (rc != 0) break;
        atomic_store(&pool.n_workers, n + 1);
    }
    pthread_mutex_unlock(&pool.start_lock);
}

/* Runs job j on up to j->nt threads, or all of it here when the pool is
 * taken (a nested call, or another thread's job). */
static void run_job(const job *j)
{
    uint32_t limit = j->blocks ? (uint32_t)j->nt : (uint32_t)j->n;
    if (in_job || atomic_exchange_explicit(&pool.busy, true, memory_order_acquire)) {
        bool outer = in_job;
        in_job = true; /* the bodies see a parallel loop either way (tj_k_in_parallel) */
        for (uint32_t c = 0; c < limit; c++)
            if (j->blocks) run_block(j, (int)c);
            else j->items(j->ctx, 0, c);
        in_job = outer;
        return;
    }
    ensure_workers(j->nt - 1);
    unsigned gen = atomic_load_explicit(&pool.generation, memory_order_relaxed) + 1;
    pool.j = *j;
    pool.j.fp_control = tj_k_fp_control();
    atomic_store_explicit(&pool.done, 0, memory_order_relaxed);
    atomic_store_explicit(&pool.limit, tagged(gen, limit), memory_order_release);
    atomic_store_explicit(&pool.participants, tagged(gen, (uint32_t)j->nt), memory_order_release);
    atomic_store_explicit(&pool.next, tagged(gen, j->blocks ? 1 : 0), memory_order_release);
    atomic_store(&pool.generation, gen); /* seq_cst: ordered before the sleepers check */
    if (atomic_load(&pool.sleepers) > 0)
        syscall(SYS_futex, &pool.generation, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
    in_job = true;
    if (j->blocks) {
        run_block(j, 0);
        atomic_fetch_add_explicit(&pool.done, 1, memory_order_release);
    }
    run_claims(gen, 0);
    in_job = false;
    int64_t waited_since = 0;
    for (int spins = 1; atomic_load_explicit(&pool.done, memory_order_acquire) < (long)limit; spins++) {
        _mm_pause();
        if (spins % 1024) continue;
        /* a worker was preempted in its block: let it have this CPU */
        if (!waited_since) waited_since = now_ns();
        else if (now_ns() - waited_since > 50000) sched_yield();
    }
    atomic_store_explicit(&pool.busy, false, memory_order_release);
}

void tj_k_parallel_team(int nt, int64_t n, tj_k_block_fn fn, void *ctx)
{
    job j = {.blocks = fn, .ctx = ctx, .n = n, .nt = nt};
    run_job(&j);
}

void tj_k_parallel_items(int nt, int64_t n, tj_k_item_fn fn, void *ctx)
{
    if (nt > n) nt = (int)n;
    if (nt <= 1) {
        for (int64_t i = 0; i < n; i++) fn(ctx, 0, i);
        return;
    }
    if (nt > TJ_K_MAX_PARTICIPANTS) nt = TJ_K_MAX_PARTICIPANTS;
    job j = {.items = fn, .ctx = ctx, .n = n, .nt = nt};
    run_job(&j);
}

/* tj_k_parallel_steal's claims: block b's unclaimed items [front, back),
 * front in the low and back in the high 32 bits of one word, so that the
 * owner's claims (from the front) and the others' (from the back) cannot
 * both take the last item. */
typedef struct steal_block {
    _Alignas(64) atomic_uint_least64_t range;
} steal_block;

typedef struct steal_args {
    steal_block b[TJ_K_MAX_PARTICIPANTS];
    int nt;
    tj_k_item_fn fn;
    void *ctx;
} steal_args;

/* An item of block b, from the front (own) or the back, or -1 when none is left. */
static int64_t steal_claim(steal_block *b, bool own)
{
    uint64_t r = atomic_load_explicit(&b->range, memory_order_relaxed);
    for (;;) {
        uint32_t front = (uint32_t)r, back = (uint32_t)(r >> 32);
        if (front >= back) return -1;
        uint64_t next = own ? (uint64_t)back << 32 | (front + 1) : (uint64_t)(back - 1) << 32 | front;
        if (atomic_compare_exchange_weak_explicit(&b->range, &r, next, memory_order_relaxed, memory_order_relaxed))
            return own ? front : back - 1;
    }
}

static void steal_block_run(void *ctx, int t, int64_t begin, int64_t end)
{
    (void)begin, (void)end;
    steal_args *a = ctx;
    for (int64_t i; (i = steal_claim(&a->b[t], true)) >= 0;) a->fn(a->ctx, t, i);
    for (int k = 1; k < a->nt; k++) {
        steal_block *b = &a->b[(t + k) % a->nt];
        for (int64_t i; (i = steal_claim(b, false)) >= 0;) a->fn(a->ctx, t, i);
    }
}

void tj_k_parallel_steal(int nt, int64_t n, tj_k_item_fn fn, void *ctx)
{
    if (nt > n) nt = (int)n;
    if (nt > TJ_K_MAX_PARTICIPANTS) nt = TJ_K_MAX_PARTICIPANTS;
    if (nt <= 1) {
        for (int64_t i = 0; i < n; i++) fn(ctx, 0, i);
        return;
    }
    steal_args a = {.nt = nt, .fn = fn, .ctx = ctx};
    for (int t = 0; t < nt; t++) {
        int64_t q = n / nt, r = n % nt, begin = t * q + (t < r ? t : r);
        atomic_init(&a.b[t].range, (uint64_t)(begin + q + (t < r)) << 32 | (uint64_t)begin);
    }
    tj_k_parallel_team(nt, n, steal_block_run, &a);
}

bool tj_k_in_parallel(void) { return in_job || omp_in_parallel(); }
