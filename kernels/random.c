/* Philox4x32-10 and the random fills (see random.h). */
#include <math.h>

#include "parallel.h"
#include "random.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u /* golden ratio */
#define PHILOX_W1 0xBB67AE85u /* sqrt(3) - 1 */

#define BLOCK 256 /* elements per work item; even, a multiple of 4 */

void tj_k_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
        }
        uint64_t p0 = (uint64_t)PHILOX_M0 * c0, p1 = (uint64_t)PHILOX_M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* Draws per element (per pair of elements for normals, halved). */
static int draws_per_element(tj_k_random_kind kind, tj_dtype dtype)
{
    return dtype == TJ_FLOAT64 && kind != TJ_K_RANDOM_BERNOULLI ? 2 : 1;
}

uint64_t tj_k_random_draws(tj_k_random_kind kind, tj_dtype dtype, int64_t n)
{
    int64_t m = kind == TJ_K_RANDOM_NORMAL ? (n + 1) / 2 * 2 : n; /* whole pairs */
    return (uint64_t)m * (uint64_t)draws_per_element(kind, dtype);
}

/* Draws [first, first + 4 * nblocks) of the stream into r. */
static void draws(uint64_t seed, uint64_t offset, uint64_t first, int64_t nblocks, uint32_t *r)
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    for (int64_t b = 0; b < nblocks; b++) {
        uint64_t c = offset + first / 4 + (uint64_t)b;
        const uint32_t ctr[4] = {(uint32_t)c, (uint32_t)(c >> 32), 0, 0};
        tj_k_philox4x32_10(ctr, key, r + 4 * b);
    }
}

static double u32_open0(uint32_t r) { return ((double)r + 1.0) * 0x1p-32; }   /* (0, 1] */
static double u32_unit(uint32_t r) { return (double)r * 0x1p-32; }            /* [0, 1) */
static double u64_unit(uint32_t hi, uint32_t lo) { return (double)((((uint64_t)hi << 32) | lo) >> 11) * 0x1p-53; }

static void store01(void *out, tj_dtype d, int64_t i, bool v)
{
    switch (d) {
    case TJ_FLOAT32: ((float *)out)[i] = v; break;
    case TJ_FLOAT64: ((double *)out)[i] = v; break;
    case TJ_INT64: ((int64_t *)out)[i] = v; break;
    case TJ_BOOL: ((uint8_t *)out)[i] = v; break;
    default: break; /* storage dtypes: the dispatcher keeps them from compute kernels */
    }
}

/* Elements [e0, e0 + n) (n <= BLOCK, e0 a multiple of BLOCK). */
static void fill_block(tj_k_random_kind kind, uint64_t seed, uint64_t offset, void *out, tj_dtype d, int64_t e0,
                       int64_t n, double p)
{
    uint32_t r[2 * BLOCK];
    int dpe = draws_per_element(kind, d);
    draws(seed, offset, (uint64_t)e0 * (uint64_t)dpe, (n * dpe + 3) / 4, r);
    switch (kind) {
    case TJ_K_RANDOM_UNIFORM:
        if (d == TJ_FLOAT32)
            for (int64_t i = 0; i < n; i++) ((float *)out)[e0 + i] = (float)(r[i] >> 8) * 0x1p-24f;
        else
            for (int64_t i = 0; i < n; i++) ((double *)out)[e0 + i] = u64_unit(r[2 * i], r[2 * i + 1]);
        break;
    case TJ_K_RANDOM_NORMAL:
        for (int64_t i = 0; i < n; i += 2) {
            double u1, u2;
            if (d == TJ_FLOAT32) {
                u1 = u32_open0(r[i]);
                u2 = u32_unit(r[i + 1]);
            } else {
                u1 = 1.0 - u64_unit(r[2 * i], r[2 * i + 1]); /* (0, 1] */
                u2 = u64_unit(r[2 * i + 2], r[2 * i + 3]);
            }
            double rad = sqrt(-2.0 * log(u1)), s, c;
            sincos(2.0 * M_PI * u2, &s, &c);
            if (d == TJ_FLOAT32) {
                ((float *)out)[e0 + i] = (float)(rad * c);
                if (i + 1 < n) ((float *)out)[e0 + i + 1] = (float)(rad * s);
            } else {
                ((double *)out)[e0 + i] = rad * c;
                if (i + 1 < n) ((double *)out)[e0 + i + 1] = rad * s;
            }
        }
        break;
    case TJ_K_RANDOM_BERNOULLI:
        for (int64_t i = 0; i < n; i++) store01(out, d, e0 + i, u32_unit(r[i]) < p);
        break;
    }
}

/* The operands of a random fill, for its loop over blocks. */
typedef struct random_args {
    tj_k_random_kind kind;
    uint64_t seed, offset;
    void *out;
    tj_dtype dtype;
    int64_t n;
    double p;
} random_args;

/* Blocks [begin, end): each is drawn from its own counters, so the result
 * does not depend on the threads. */
static void fill_blocks(void *ctx, int t, int64_t begin, int64_t end)
{
    const random_args *a = ctx;
    (void)t;
    for (int64_t b = begin; b < end; b++) {
        int64_t e0 = b * BLOCK;
        fill_block(a->kind, a->seed, a->offset, a->out, a->dtype, e0, a->n - e0 < BLOCK ? a->n - e0 : BLOCK, a->p);
    }
}

void tj_k_random_fill(tj_k_random_kind kind, uint64_t seed, uint64_t offset, void *out, tj_dtype dtype, int64_t n,
                      double p, int nthreads)
{
    random_args a = {kind, seed, offset, out, dtype, n, p};
    tj_k_parallel(nthreads, (n + BLOCK - 1) / BLOCK, fill_blocks, &a);
}

/* The blocks [begin, end) of BLOCK / 2 values each (2 draws a value). */
typedef struct u64_args {
    uint64_t seed, offset, *out;
    int64_t n;
} u64_args;

static void u64_blocks(void *ctx, int t, int64_t begin, int64_t end)
{
    const u64_args *a = ctx;
    (void)t;
    uint32_t r[BLOCK];
    for (int64_t b = begin; b < end; b++) {
        int64_t e0 = b * (BLOCK / 2), n = a->n - e0 < BLOCK / 2 ? a->n - e0 : BLOCK / 2;
        draws(a->seed, a->offset, (uint64_t)e0 * 2, (2 * n + 3) / 4, r);
        for (int64_t i = 0; i < n; i++) a->out[e0 + i] = ((uint64_t)r[2 * i] << 32) | r[2 * i + 1];
    }
}

void tj_k_random_u64(uint64_t seed, uint64_t offset, uint64_t *out, int64_t n, int nthreads)
{
    u64_args a = {seed, offset, out, n};
    tj_k_parallel(nthreads, (n + BLOCK / 2 - 1) / (BLOCK / 2), u64_blocks, &a);
}
