/* AVX-512 float32 GEMM for a row-major B and an A of any strides (see
 * gemm.h): C = alpha * A @ B + beta * C.
 *
 * Blocks of KC x NR of B are packed into a contiguous buffer (rows of B
 * lie a leading dimension apart: 4 KiB strides would map them all onto the
 * same L1 sets) and swept by a 6 x 64 micro-kernel down all the rows of A:
 * per step of the sum, 4 loads of B, 6 broadcasts of A and 24 FMAs into 24
 * accumulators, so that the FMA units, not the loads, set the pace. A is
 * read in place, row- or column-major alike (the mlp and GPT backward
 * products, A @ W and A^T @ X, are both). */
#include <immintrin.h>

#include "gemm.h"
#include "parallel.h"

#define MR 6    /* rows of C per micro-kernel call */
#define NR 64   /* columns of C per micro-kernel call: 4 vectors */
#define KC 128  /* steps of the sum per packed block: 32 KiB, within L1 */

static inline __mmask16 lane_mask(int64_t n) { return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? 0 : (__mmask16)((1u << n) - 1); }

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
                __mmask16 k = lane_mask(nc - 16 * q);                                                         \
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
 * rows copied) or column-major (brs 1: columns scattered down bp). */
static void pack_b(const float *b, int64_t brs, int64_t bcs, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                   float *bp)
{
    if (bcs == 1) {
        for (int64_t p = 0; p < kc; p++) {
            const float *src = b + (p0 + p) * brs + j0;
            float *dst = bp + p * NR;
            for (int q = 0; q < 4; q++)
                _mm512_store_ps(dst + 16 * q, _mm512_maskz_loadu_ps(lane_mask(nc - 16 * q), src + 16 * q));
        }
        return;
    }
    for (int64_t j = 0; j < NR; j++) {
        const float *src = b + (j0 + j) * bcs + p0 * brs;
        for (int64_t p = 0; p < kc; p++) bp[p * NR + j] = j < nc ? src[p] : 0.0f;
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
} gemm_args;

/* Column blocks [b0, b1) of NR columns each. */
static void column_blocks(void *ctx, int t, int64_t b0, int64_t b1)
{
    const gemm_args *g = ctx;
    (void)t;
    for (int64_t jb = b0; jb < b1; jb++) {
        int64_t j0 = jb * NR;
        column_block(g->m, g->k, j0, g->n - j0 < NR ? g->n - j0 : NR, g->alpha, g->a, g->ars, g->acs, g->b, g->brs,
                     g->bcs, g->beta, g->c, g->ldc);
    }
}

void tj_k_gemm_f32_avx512(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                          const float *b, int64_t brs, int64_t bcs, float beta, float *c, int64_t ldc, int nthreads)
{
    int64_t blocks = (n + NR - 1) / NR;
    gemm_args g = {m, n, k, ars, acs, brs, bcs, ldc, alpha, beta, a, b, c};
    tj_k_parallel(nthreads < blocks ? nthreads : (int)blocks, blocks, column_blocks, &g);
}
