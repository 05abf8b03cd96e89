/* The default random generator: a Philox4x32-10 stream (kernels/random.h)
 * keyed by the seed given to tj_manual_seed, whose counter advances by what
 * each random operator reserves. Same seed, same sequence of calls -> same
 * numbers, whatever the thread count.
 *
 * For kernels that need random numbers (dropout masks, say): reserve the
 * draws first, then fill from the returned stream position; the fill itself
 * touches no shared state, so it may run on any thread and be split freely:
 *
 *     uint64_t seed, offset = tj_random_reserve(n, &seed);
 *     tj_random_bernoulli_u8(seed, offset, 1.0 - p, mask, n);   // keep with prob. 1-p
 */
#ifndef TJIT_RUNTIME_RANDOM_H
#define TJIT_RUNTIME_RANDOM_H

#include "internal.h"
#include "kernels/random.h"

/** Reserves `ndraws` 32-bit draws (ceil(ndraws / 4) Philox counters) of the
 * default generator. Returns the first counter of the reservation and writes
 * the generator's seed to *seed. Thread-safe. */
uint64_t tj_random_reserve(uint64_t ndraws, uint64_t *seed);

/** Reads / restores the default generator's state (seed and next counter),
 * to replay a stretch of random calls exactly. */
void tj_random_get_state(uint64_t *seed, uint64_t *offset);
void tj_random_set_state(uint64_t seed, uint64_t offset);

/** out[i] = U[0, 1) float (24 random bits) from draw i of the stream
 * (seed, offset), for i in [0, n): uses n draws. */
void tj_random_uniform_f32(uint64_t seed, uint64_t offset, float *out, int64_t n);

/** out[i] = 1 with probability p, else 0, from draw i of the stream (seed,
 * offset): uses n draws. p <= 0 gives all 0, p >= 1 all 1. */
void tj_random_bernoulli_u8(uint64_t seed, uint64_t offset, double p, uint8_t *out, int64_t n);

/** Reserves the draws for n elements of `kind` in `dtype` and fills the
 * contiguous `out` with them (the rand / randn / bernoulli kernels). */
void tj_random_fill(tj_k_random_kind kind, void *out, tj_dtype dtype, int64_t n, double p);

/** Reserves 2n draws of the default generator and fills out[0..n) with
 * their 64-bit values (tj_k_random_u64). */
void tj_random_u64(uint64_t *out, int64_t n);

#endif
