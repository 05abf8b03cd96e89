/* The one idiom for parallel loops in the kernels and the runtime:
 * tj_k_parallel runs a body over blocks of [0, n), one block per thread,
 * and with one thread is a plain call; tj_k_parallel_items hands out single
 * items to whichever thread is free (uneven work). Both run on tjit's own
 * thread pool (parallel.c), not on OpenMP regions: a libgomp region cost
 * 2.4-3.1 us on this machine, even for a team of one (two futex system
 * calls per region), the pool's hand-off ~0.1-1 us. Every thread runs a
 * loop's body with the calling thread's floating-point control bits (MXCSR:
 * flush of denormals, rounding), as the caller would run it alone. */
#ifndef TJIT_KERNELS_PARALLEL_H
#define TJIT_KERNELS_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

/** Most threads a parallel loop runs on at once (the caller and its pool). */
#define TJ_K_MAX_PARTICIPANTS 64

/** The body of a parallel loop: block t, items [begin, end) (maybe empty). */
typedef void (*tj_k_block_fn)(void *ctx, int t, int64_t begin, int64_t end);
/** The body of tj_k_parallel_items: item i, run by participant `who`. */
typedef void (*tj_k_item_fn)(void *ctx, int who, int64_t i);

/** tj_k_parallel's team path (nt >= 2); call tj_k_parallel instead. */
void tj_k_parallel_team(int nt, int64_t n, tj_k_block_fn fn, void *ctx);

/** Calls fn(ctx, t, begin, end) once for every t in [0, nt), block t of
 * [0, n) split into nt contiguous blocks in order, the first n % nt of them
 * one item longer (the split of OpenMP's schedule(static), so per-thread
 * partial results do not depend on the thread count's implementation). The
 * calling thread runs block 0, pool threads the others, up to nt threads in
 * all; each t runs exactly once on some thread, so fn may index per-block
 * scratch with t. From inside another parallel loop (nested), or while
 * another thread's loop holds the pool, every block runs on the calling
 * thread. nt <= 1: one plain call fn(ctx, 0, 0, n). */
static inline void tj_k_parallel(int nt, int64_t n, tj_k_block_fn fn, void *ctx)
{
    if (nt <= 1) fn(ctx, 0, 0, n);
    else tj_k_parallel_team(nt, n, fn, ctx);
}

/** Calls fn(ctx, who, i) once for every item i in [0, n) (n < 2^32), items
 * handed out one at a time to up to nt threads as they become free (for
 * items of uneven cost: OpenMP's schedule(dynamic)). `who` < min(nt,
 * TJ_K_MAX_PARTICIPANTS) tells the threads running at once apart (per-thread scratch); which items a thread
 * gets varies from run to run. Nested or with the pool taken, or nt <= 1:
 * every item on the calling thread, who 0, in order. */
void tj_k_parallel_items(int nt, int64_t n, tj_k_item_fn fn, void *ctx);

/** Calls fn(ctx, t, i) once for every item i in [0, n) (n < 2^32), on up
 * to nt threads: participant t first runs the items of its own block of
 * tj_k_parallel's split, in order (so that data stays with the core that
 * wrote it at the same split), then takes single items from the ends of
 * the other blocks still running (a thread the system preempted, or one
 * slowed by other processes, holds up the loop by one item, not a block).
 * Which t runs an item varies from run to run, but t is unique among the
 * threads running at once: fn may index per-participant scratch with it
 * (t < min(nt, n, TJ_K_MAX_PARTICIPANTS)). Nested, with the pool taken or
 * nt <= 1: every item on the calling thread (nt <= 1: in order, t = 0). */
void tj_k_parallel_steal(int nt, int64_t n, tj_k_item_fn fn, void *ctx);

/** True inside a parallel loop's body (on any of its threads) or inside a
 * caller's OpenMP region: a library that threads by itself (OpenBLAS) must
 * not be asked to there. */
bool tj_k_in_parallel(void);

#endif
