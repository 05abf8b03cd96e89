/* AVX-512 float32 GEMM for a row- or column-major B and an A of any
 * strides (see gemm.h): C = alpha * A @ B + beta * C.
 *
 * Blocks of KC x NR of B are packed into a contiguous buffer (rows of B
 * lie a leading dimension apart: 4 KiB strides would map them all onto the
 * same L1 sets) and swept by a 6 x 64 micro-kernel down all the rows of A:
 * per step of the sum, 4 loads of B, 6 broadcasts of A and 24 FMAs into 24
 * accumulators, so that the FMA units, not the loads, set the pace. A is
 * read in place, row- or column-major alike (the mlp and GPT backward
 * products, A @ W and A^T @ X, are both). Threads split C by rows or by
 * columns (split_rows); a fused epilogue runs on each thread's part of C
 * as soon as it is done. */
#include <immintrin.h>

#include "gemm.h"
#include "parallel.h"
#include "transpose16_avx512.h"

#define MR 6    /* rows of C per micro-kernel call */
#define NR 64   /* columns of C per micro-kernel call: 4 vectors */
#define KC 128  /* steps of the sum per packed block: 32 KiB, within L1 */

/* C[r, 0..nc) (r < R) = alpha * sum_p a(r, p) * bp[p, :] + beta * C (beta 0:
 * C is not read). */
#define MICRO(R)                                                                                          \
    static void micro_##R(int64_t kc, const float *a, int64_t ars, int64_t acs, const float *bp, float *c,    \
                          int64_t ldc, int64_t nc, float alpha, float beta)                                   \
    {                                                                                                         \
        __m512 acc[R][4];                                                                                     \
        for (int r = 0; r < R; r++)                                                                           \
            for (int q = 0; q < 4; q++) acc[r][q] = _mm512_setzero_ps();                                      \
        for (int64_t p = 0; p < kc; p++) {                                                                    \
            const float *bq = bp + p * NR, *ap = a + p * acs;                                                 \
            __m512 b0 = _mm512_load_ps(bq), b1 = _mm512_load_ps(bq + 16);                                     \
            __m512 b2 = _mm512_load_ps(bq + 32), b3 = _mm512_load_ps(bq + 48);                                \
            for (int r = 0; r < R; r++) {                                                                     \
                __m512 av = _mm512_set1_ps(ap[r * ars]);                                                      \
                acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);                                               \
                acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);                                               \
                acc[r][2] = _mm512_fmadd_ps(av, b2, acc[r][2]);                                               \
                acc[r][3] = _mm512_fmadd_ps(av, b3, acc[r][3]);                                               \
            }                                                                                                 \
        }                                                                                                     \
        __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);                                         \
        for (int r = 0; r < R; r++)                                                                           \
            for (int q = 0; q < 4; q++) {                                                                     \
                __mmask16 k = tj_k_lanes16(nc - 16 * q);                                                      \
                if (!k) break;                                                                                \
                float *cq = c + r * ldc + 16 * q;                                                             \
                __m512 v = _mm512_mul_ps(acc[r][q], va);                                                      \
                if (beta != 0) v = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, cq), vb, v);                      \
                _mm512_mask_storeu_ps(cq, k, v);                                                              \
            }                                                                                                 \
    }
MICRO(1)
MICRO(2)
MICRO(3)
MICRO(4)
MICRO(5)
MICRO(6)
#undef MICRO

typedef void (*micro_fn)(int64_t, const float *, int64_t, int64_t, const float *, float *, int64_t, int64_t, float,
                         float);
static const micro_fn micro[MR + 1] = {NULL, micro_1, micro_2, micro_3, micro_4, micro_5, micro_6};

/* Rows [p0, p0+kc) and columns [j0, j0+nc) of B into bp, NR per row, zeros
 * past nc (the micro-kernel computes whole vectors). B is row-major (bcs 1:
 * rows copied) or column-major (brs 1: 16 x 16 tiles transposed in
 * registers, 3x faster than scattering its columns element by element). */
static void pack_b(const float *b, int64_t brs, int64_t bcs, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                   float *bp)
{
    if (bcs == 1) {
        for (int64_t p = 0; p < kc; p++) {
            const float *src = b + (p0 + p) * brs + j0;
            float *dst = bp + p * NR;
            for (int q = 0; q < 4; q++)
                _mm512_store_ps(dst + 16 * q, _mm512_maskz_loadu_ps(tj_k_lanes16(nc - 16 * q), src + 16 * q));
        }
        return;
    }
    for (int64_t pq = 0; pq < kc; pq += 16) {
        __mmask16 pm = tj_k_lanes16(kc - pq);
        int64_t np = kc - pq < 16 ? kc - pq : 16;
        for (int q = 0; q < 4; q++) {
            __m512 r[16];
            for (int j = 0; j < 16; j++) {
                int64_t col = 16 * q + j;
                r[j] = col < nc ? _mm512_maskz_loadu_ps(pm, b + (j0 + col) * bcs + p0 + pq) : _mm512_setzero_ps();
            }
            tj_k_transpose16(r);
            for (int64_t i = 0; i < np; i++) _mm512_store_ps(bp + (pq + i) * NR + 16 * q, r[i]);
        }
    }
}

/* Columns [j0, j0 + nc) of C, every row, the whole sum. */
static void column_block(int64_t m, int64_t k, int64_t j0, int64_t nc, float alpha, const float *a, int64_t ars,
                         int64_t acs, const float *b, int64_t brs, int64_t bcs, float beta, float *c, int64_t ldc)
{
    _Alignas(64) float bp[KC * NR];
    for (int64_t p0 = 0; p0 < k; p0 += KC) {
        int64_t kc = k - p0 < KC ? k - p0 : KC;
        float be = p0 == 0 ? beta : 1.0f; /* later blocks add to C */
        pack_b(b, brs, bcs, p0, kc, j0, nc, bp);
        for (int64_t i0 = 0; i0 < m; i0 += MR) {
            int mr = m - i0 < MR ? (int)(m - i0) : MR;
            micro[mr](kc, a + i0 * ars + p0 * acs, ars, acs, bp, c + i0 * ldc + j0, ldc, nc, alpha, be);
        }
    }
}

/* The operands of one product, for column_blocks. */
typedef struct gemm_args {
    int64_t m, n, k, ars, acs, brs, bcs, ldc;
    float alpha, beta;
    const float *a, *b;
    float *c;
    const tj_k_epilogue *epi;
} gemm_args;

/* With an epilogue, a thread runs it after each part of C of about this
 * many bytes, which is then still in its L2 cache. */
#define EPILOGUE_BYTES (128 * 1024)

/* How many column blocks of `block_bytes` of C one epilogue call should
 * cover: all `blocks` without an epilogue, else at least one. */
static int64_t epilogue_group(const gemm_args *g, int64_t block_bytes, int64_t blocks)
{
    if (!g->epi) return blocks;
    int64_t u = EPILOGUE_BYTES / block_bytes;
    return u < 1 ? 1 : u;
}

/* Column blocks [b0, b1) of NR columns each. */
static void column_blocks(void *ctx, int t, int64_t b0, int64_t b1)
{
    const gemm_args *g = ctx;
    int64_t group = epilogue_group(g, g->m * NR * (int64_t)sizeof(float), b1 - b0);
    (void)t;
    for (int64_t gb = b0; gb < b1; gb += group) {
        int64_t ge = gb + group < b1 ? gb + group : b1;
        for (int64_t jb = gb; jb < ge; jb++) {
            int64_t j0 = jb * NR;
            column_block(g->m, g->k, j0, g->n - j0 < NR ? g->n - j0 : NR, g->alpha, g->a, g->ars, g->acs, g->b,
                         g->brs, g->bcs, g->beta, g->c, g->ldc);
        }
        if (g->epi) {
            int64_t j0 = gb * NR, j1 = ge * NR < g->n ? ge * NR : g->n;
            tj_k_epilogue_apply(g->epi, sizeof(float), g->c, g->ldc, 0, g->m, j0, j1 - j0);
        }
    }
}

/* Row tiles [b0, b1) of MR rows each, every column; then the epilogue over
 * those rows. (In groups of rows, B's blocks are packed again for each
 * group: gpt's 512 x 512 x 128 product with gelu at 2 threads took 247 us
 * in groups of 128 KiB of C, 222-233 us in one, 219 us for the product and
 * the gelu apart.) */
static void row_blocks(void *ctx, int t, int64_t b0, int64_t b1)
{
    const gemm_args *g = ctx;
    int64_t i0 = b0 * MR, i1 = b1 * MR < g->m ? b1 * MR : g->m;
    (void)t;
    for (int64_t j0 = 0; i0 < i1 && j0 < g->n; j0 += NR)
        column_block(i1 - i0, g->k, j0, g->n - j0 < NR ? g->n - j0 : NR, g->alpha, g->a + i0 * g->ars, g->ars,
                     g->acs, g->b, g->brs, g->bcs, g->beta, g->c + i0 * g->ldc, g->ldc);
    if (g->epi && i0 < i1) tj_k_epilogue_apply(g->epi, sizeof(float), g->c, g->ldc, i0, i1 - i0, 0, g->n);
}

/* Whether threads split C by rows (each reads its rows of A and writes its
 * rows of C, the parts an elementwise producer and consumer split the same
 * way wrote or will read on the same core: the two vCPUs share no cache,
 * and data the other core wrote comes at DRAM speed) rather than by
 * columns (each packs only its part of B but reads all of A). Rows cost
 * every thread the packing of all of B (k*n), columns the remote half of A
 * and of C (m*(k+n)): rows win from m*(k+n) >= 2*k*n, measured at 2
 * threads with a row-split producer and consumer around the product
 * (crossover m 128-192 for k 128, n 384; m 256 for k = n = 256; columns
 * still at m 256 for k 784, n 256 and k = n = 768). Rows also when there
 * are fewer column blocks than threads. */
static bool split_rows(int64_t m, int64_t n, int64_t k, int nthreads)
{
    return (double)m * (double)(k + n) >= 2.0 * (double)k * (double)n || (n + NR - 1) / NR < nthreads;
}

void tj_k_gemm_f32_avx512(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                          const float *b, int64_t brs, int64_t bcs, float beta, float *c, int64_t ldc, int nthreads,
                          const tj_k_epilogue *epi)
{
    gemm_args g = {m, n, k, ars, acs, brs, bcs, ldc, alpha, beta, a, b, c, epi};
    if (nthreads > 1 && split_rows(m, n, k, nthreads)) {
        int64_t tiles = (m + MR - 1) / MR;
        tj_k_parallel(nthreads < tiles ? nthreads : (int)tiles, tiles, row_blocks, &g);
        return;
    }
    /* A small result split by columns, its epilogue run by each thread on
     * its columns, leaves half of every row on each core for the next
     * kernel, which reads whole rows (mlp batch 64 at 2 threads: 5%
     * slower than the unfused kernels, where the lone elementwise kernel
     * runs on the calling thread). Split by rows, each core keeps whole
     * rows, and the next product, split by rows too, reads its own: 2-3%
     * faster than unfused, though each thread packs all of B. */
    int64_t tiles = (m + MR - 1) / MR, blocks = (n + NR - 1) / NR;
    if (epi && nthreads > 1 && m * n < TJ_K_EPILOGUE_PARALLEL_MIN && tiles >= nthreads) {
        tj_k_parallel(nthreads, tiles, row_blocks, &g);
        return;
    }
    tj_k_parallel(nthreads < blocks ? nthreads : (int)blocks, blocks, column_blocks, &g);
}
