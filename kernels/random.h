/* Counter-based random numbers: Philox4x32-10 (Salmon, Moraes, Dror, Shaw,
 * "Parallel random numbers: as easy as 1, 2, 3", SC 2011) and the fills built
 * on it.
 *
 * A stream is a key (the 64-bit seed) and a counter offset. Philox maps the
 * 128-bit counter {lo32(c), hi32(c), 0, 0} under the key {lo32(seed),
 * hi32(seed)} to four 32-bit "draws". Draw d of a stream is lane d % 4 of
 * counter offset + d / 4, so every value is a pure function of (seed,
 * offset, element index): fills give the same numbers whatever the thread
 * count or the way the work is split.
 *
 * Draws per element (tj_k_random_draws): uniform and Bernoulli float32/bool/
 * int64 values use 1 (element i is draw i: counter offset + i / 4), float64
 * uniforms 2 (53-bit resolution); normals come in Box-Muller pairs, elements
 * 2k and 2k+1 sharing the draws of pair k: 2 draws per pair for float32, 4
 * for float64. */
#ifndef TJIT_KERNELS_RANDOM_H
#define TJIT_KERNELS_RANDOM_H

#include <stdint.h>

#include "tjit/core.h"

/** One Philox4x32-10 block: out = philox(ctr, key). */
void tj_k_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

typedef enum tj_k_random_kind {
    TJ_K_RANDOM_UNIFORM,   /**< U[0, 1): float32 with 24 random bits, float64 with 53 */
    TJ_K_RANDOM_NORMAL,    /**< N(0, 1) by Box-Muller (cos for even elements, sin for odd ones) */
    TJ_K_RANDOM_BERNOULLI, /**< 1 with probability p (u < p, u with 32 random bits), else 0 */
} tj_k_random_kind;

/** Draws consumed by n elements of `kind` in `dtype` (counters: ceil(draws / 4)). */
uint64_t tj_k_random_draws(tj_k_random_kind kind, tj_dtype dtype, int64_t n);

/** Fills out[0..n) (contiguous, `dtype`; float32/float64 for UNIFORM and
 * NORMAL, any dtype for BERNOULLI) from the stream (seed, offset), with up to
 * `nthreads` threads. `p` is the Bernoulli probability (ignored
 * otherwise). */
void tj_k_random_fill(tj_k_random_kind kind, uint64_t seed, uint64_t offset, void *out, tj_dtype dtype, int64_t n,
                      double p, int nthreads);

/** out[i] = the 64-bit value of draws 2i (high half) and 2i + 1 (low half)
 * of the stream (seed, offset), for i in [0, n): uses 2n draws. The integer
 * draws of randint, randperm and multinomial. */
void tj_k_random_u64(uint64_t seed, uint64_t offset, uint64_t *out, int64_t n, int nthreads);

#endif
