/* The default random generator (see random.h). */
#include <pthread.h>

#include "iter.h"
#include "random.h"

/* PyTorch's default seed (c10::detail::default_rng_seed_val). */
#define DEFAULT_SEED 67280421310721ull

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t gen_seed = DEFAULT_SEED;
static uint64_t gen_offset; /* next unused counter */

void tj_manual_seed(uint64_t seed) { tj_random_set_state(seed, 0); }

void tj_random_set_state(uint64_t seed, uint64_t offset)
{
    pthread_mutex_lock(&lock);
    gen_seed = seed;
    gen_offset = offset;
    pthread_mutex_unlock(&lock);
}

void tj_random_get_state(uint64_t *seed, uint64_t *offset)
{
    pthread_mutex_lock(&lock);
    if (seed) *seed = gen_seed;
    if (offset) *offset = gen_offset;
    pthread_mutex_unlock(&lock);
}

uint64_t tj_random_reserve(uint64_t ndraws, uint64_t *seed)
{
    pthread_mutex_lock(&lock);
    uint64_t first = gen_offset;
    gen_offset += ndraws / 4 + (ndraws % 4 != 0);
    if (seed) *seed = gen_seed;
    pthread_mutex_unlock(&lock);
    return first;
}

void tj_random_uniform_f32(uint64_t seed, uint64_t offset, float *out, int64_t n)
{
    tj_k_random_fill(TJ_K_RANDOM_UNIFORM, seed, offset, out, TJ_FLOAT32, n, 0, tj_threads_for(n * 8));
}

void tj_random_bernoulli_u8(uint64_t seed, uint64_t offset, double p, uint8_t *out, int64_t n)
{
    tj_k_random_fill(TJ_K_RANDOM_BERNOULLI, seed, offset, out, TJ_BOOL, n, p, tj_threads_for(n * 8));
}

void tj_random_fill(tj_k_random_kind kind, void *out, tj_dtype dtype, int64_t n, double p)
{
    uint64_t seed, offset = tj_random_reserve(tj_k_random_draws(kind, dtype, n), &seed);
    /* a Philox block costs about as much as a few dozen cheap elementwise ops */
    tj_k_random_fill(kind, seed, offset, out, dtype, n, p, tj_threads_for(n * 8));
}

void tj_random_u64(uint64_t *out, int64_t n)
{
    uint64_t seed, offset = tj_random_reserve(2 * (uint64_t)n, &seed);
    tj_k_random_u64(seed, offset, out, n, tj_threads_for(n * 8));
}
