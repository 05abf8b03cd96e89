/* The one idiom for parallel loops in the kernels and the runtime:
 * tj_k_parallel runs a body over blocks of [0, n), one block per thread,
 * and with one thread is a plain call: no OpenMP region at all. Entering a
 * region costs about a microsecond on this machine even for a team of one
 * (num_threads(1) or if(0) still start libgomp's team and make a futex
 * call), 20 to 40 times the whole dispatch of a small operator. */
#ifndef TJIT_KERNELS_PARALLEL_H
#define TJIT_KERNELS_PARALLEL_H

#include <stdint.h>

/** The body of a parallel loop: block t, items [begin, end) (maybe empty). */
typedef void (*tj_k_block_fn)(void *ctx, int t, int64_t begin, int64_t end);

/** tj_k_parallel's team path (nt >= 2); call tj_k_parallel instead. */
void tj_k_parallel_team(int nt, int64_t n, tj_k_block_fn fn, void *ctx);

/** Calls fn(ctx, t, begin, end) once for every t in [0, nt), block t of
 * [0, n) split into nt contiguous blocks in order, the first n % nt of them
 * one item longer (the split of libgomp's schedule(static), so per-thread
 * partial results are the same as with an `omp for`). The blocks run on up
 * to nt threads; each t runs exactly once even if the team is smaller, so
 * fn may index per-thread scratch with t. nt <= 1: one plain call
 * fn(ctx, 0, 0, n) on the calling thread. */
static inline void tj_k_parallel(int nt, int64_t n, tj_k_block_fn fn, void *ctx)
{
    if (nt <= 1) fn(ctx, 0, 0, n);
    else tj_k_parallel_team(nt, n, fn, ctx);
}

#endif
