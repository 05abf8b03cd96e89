/* float32 GEMM for a row- or column-major B and an A of any strides (see
 * gemm.h): C = alpha * A @ B + beta * C, written once over simd_rows.h and
 * compiled per ISA by gemm_avx512.c (6 x 64 micro-kernel: 4 vectors of
 * 16) and gemm_avx2.c (6 x 16: 2 vectors of 8, its 12 accumulators, 2
 * vectors of B and a broadcast within the 16 ymm registers).
 *
 * Blocks of KC x NR of B are packed into a contiguous buffer (rows of B
 * lie a leading dimension apart: 4 KiB strides would map them all onto the
 * same L1 sets) and swept by a 6 x NR micro-kernel down all the rows of A:
 * per step of the sum, NV loads of B, 6 broadcasts of A and 6 * NV FMAs
 * into as many accumulators, so that the FMA units, not the loads, set the
 * pace. A is
 * read in place, row- or column-major alike (the mlp and GPT backward
 * products, A @ W and A^T @ X, are both). A long sum's B is packed a
 * chunk of the sum (a few blocks) at a time, and each tile of C runs
 * through the chunk's blocks in a row, staying in L1. Column blocks go in
 * panels whose part of C stays in L2 across the chunks of the sum. While
 * one block is swept, the next block of a large B is prefetched and the
 * next tile of C prefetched for writing: with few rows of A (decomposed
 * cnn: 16-32 rows against 400 x 12544), packing and the first writes of C
 * otherwise stall on DRAM for as long as the FMAs run. Threads split C
 * by rows or by columns (split_rows); a fused epilogue runs on each
 * thread's part of C as soon as it is done. A long sum into a small C with
 * a column-major B swaps the operands' roles instead (long_sum). B may
 * also be given by offset tables (tj_k_gemm_f32_offsets: a strided view
 * such as im2col's columns), its blocks packed from where the tables point
 * (pack_offsets) into the same packed blocks.
 *
 * Each element of C is summed the same way on either ISA's instance, block
 * by block of KC steps in order, one FMA per step into its lane; the
 * instances differ in how many columns they compute at once, not in the
 * arithmetic. (The AVX-512 figures in the comments below were measured on
 * AVX-512 machines.) */
#include "gemm.h"
#include "parallel.h"
#include "simd_rows.h"

#if VF_N == 16

#define NV 4   /* vectors of C per micro-kernel row */
#define KC 128 /* steps of the sum per packed block: 32 KiB, within L1 */
#define CHUNK 512

/* A vector of the packed block (64-byte aligned). */
static inline vf packed_load(const float *p) { return _mm512_load_ps(p); }
static inline void packed_store(float *p, vf v) { _mm512_store_ps(p, v); }
/* Lanes [0, n) of the vector at p, the others 0; n <= 0: none, n >= VF_N: all. */
static inline vf lanes_load(const float *p, int64_t n) { return _mm512_maskz_loadu_ps(tj_k_lanes16(n), p); }
/* Lanes [0, n) of v to p. */
static inline void lanes_store(float *p, vf v, int64_t n) { _mm512_mask_storeu_ps(p, tj_k_lanes16(n), v); }
/* Lanes [l0, l1) of a vector (0 <= l0 <= l1 <= VF_N). */
typedef __mmask16 lane_mask;
static inline lane_mask lanes_between(int l0, int l1) { return (lane_mask)(tj_k_lanes16(l1) & ~tj_k_lanes16(l0)); }
/* The lanes m of the vector at p, the others 0 (and not read: a masked
 * load does not fault on them). */
static inline vf masked_load(const float *p, lane_mask m) { return _mm512_maskz_loadu_ps(m, p); }
static inline vf lanes_or(vf a, vf b)
{
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}

#else
/* KC 384: 24 KiB of B. Against OpenBLAS's Haswell sgemm at 1 thread on
 * the models' products (bench_gemm, this block or 512), 128 left the
 * kernel 5-18% behind where the sum is longer than one block (gpt's
 * 512 x 128 by k 512: C's tiles read and written back once per block);
 * 384 and 512 put it 0-7% ahead with A row-major, and 512 lost more than
 * 384 with A column-major (kc lines of A per tile, a power-of-two stride
 * apart: L1 conflicts against B's block). */
#define NV 2
#define KC 384
#define CHUNK (4 * KC)

static inline vf packed_load(const float *p) { return _mm256_load_ps(p); }
static inline void packed_store(float *p, vf v) { _mm256_store_ps(p, v); }
static inline vf lanes_load(const float *p, int64_t n)
{
    return n >= VF_N ? vf_load(p) : vf_load_part(p, n <= 0 ? 0 : (int)n, 0.0f);
}
static inline void lanes_store(float *p, vf v, int64_t n)
{
    if (n >= VF_N) vf_store(p, v);
    else vf_store_part(p, v, n <= 0 ? 0 : (int)n);
}
typedef __m256i lane_mask;
static inline lane_mask lanes_between(int l0, int l1) { return _mm256_andnot_si256(vf_mask(l0), vf_mask(l1)); }
static inline vf masked_load(const float *p, lane_mask m) { return _mm256_maskload_ps(p, m); }
static inline vf lanes_or(vf a, vf b) { return _mm256_or_ps(a, b); }
#endif

#define MR 6    /* rows of C per micro-kernel call */
#define NR (NV * VF_N) /* columns of C per micro-kernel call */

/* Lines of B to prefetch while a block is swept, a few per step of the
 * micro-kernel (spread out, they overlap the FMAs; packed at once, they
 * stalled: packing decomposed cnn's 400 x 12544 B took 1.0 ms, the
 * products 1.5 ms, 2.5 ms together). Lines go vector by vector: rows of a
 * row-major B, columns of a column-major one. */
typedef struct ahead {
    const char *vec;          /* the current vector's first line */
    int64_t stride;           /* bytes between vectors */
    int64_t per_vector, line; /* lines per vector; the next one in this vector */
    int64_t left, per_call;   /* lines left; lines per micro-kernel call */
} ahead;

static inline void ahead_line(ahead *h)
{
    _mm_prefetch(h->vec + 64 * h->line, _MM_HINT_T0);
    if (++h->line == h->per_vector) h->line = 0, h->vec += h->stride;
}

/* C[r, 0..nc) (r < R, nc <= VF_N * Q) = alpha * sum_p a(r, p) * bp[p, :] +
 * beta * C (beta 0: C is not read), then + bias[0..nc) when bias is not
 * NULL (a rounding of its own, as an add after the product), from the
 * first Q vectors of each packed row (a narrower last column block
 * computes only those); on the way,
 * h->per_call lines of `h`, up to 2 per step. P_R_Q reads A as MICRO_A_PARAMS
 * say: MICRO_A_STEP at each step p, then MICRO_A(r) is a(r, p). */
#define MICRO(P, R, Q)                                                                                        \
    static void P##_##R##_##Q(int64_t kc, MICRO_A_PARAMS, const float *bp, float *c, int64_t ldc, int64_t nc,  \
                              float alpha, float beta, const float *bias, ahead *h)                           \
    {                                                                                                         \
        vf acc[R][Q];                                                                                         \
        for (int r = 0; r < R; r++)                                                                           \
            for (int q = 0; q < Q; q++) acc[r][q] = vf_set1(0.0f);                                            \
        int64_t pf = h->per_call < h->left ? h->per_call : h->left;                                           \
        h->left -= pf;                                                                                        \
        for (int64_t p = 0; p < kc; p++) {                                                                    \
            for (int l = 0; l < 2 && pf > 0; l++, pf--) ahead_line(h);                                        \
            const float *bq = bp + p * NR;                                                                    \
            MICRO_A_STEP;                                                                                     \
            vf bv[Q];                                                                                         \
            for (int q = 0; q < Q; q++) bv[q] = packed_load(bq + VF_N * q);                                   \
            for (int r = 0; r < R; r++) {                                                                     \
                vf av = vf_set1(MICRO_A(r));                                                                  \
                for (int q = 0; q < Q; q++) acc[r][q] = vf_fmadd(av, bv[q], acc[r][q]);                       \
            }                                                                                                 \
        }                                                                                                     \
        vf va = vf_set1(alpha), vb = vf_set1(beta);                                                           \
        for (int r = 0; r < R; r++)                                                                           \
            for (int q = 0; q < Q; q++) {                                                                     \
                float *cq = c + r * ldc + VF_N * q;                                                           \
                vf v = vf_mul(acc[r][q], va);                                                                 \
                if (beta != 0) v = vf_fmadd(lanes_load(cq, nc - VF_N * q), vb, v);                            \
                if (bias) v = vf_add(v, lanes_load(bias + VF_N * q, nc - VF_N * q));                          \
                lanes_store(cq, v, nc - VF_N * q);                                                            \
            }                                                                                                 \
        for (; pf > 0; pf--) ahead_line(h);                                                                   \
    }
#if NV == 4
#define MICRO_ROWS(P, R) MICRO(P, R, 1) MICRO(P, R, 2) MICRO(P, R, 3) MICRO(P, R, 4)
#define MICRO_ROW(P, R) {P##_##R##_1, P##_##R##_2, P##_##R##_3, P##_##R##_4}
#else
#define MICRO_ROWS(P, R) MICRO(P, R, 1) MICRO(P, R, 2)
#define MICRO_ROW(P, R) {P##_##R##_1, P##_##R##_2}
#endif
#define MICRO_ALL(P) \
    MICRO_ROWS(P, 1) MICRO_ROWS(P, 2) MICRO_ROWS(P, 3) MICRO_ROWS(P, 4) MICRO_ROWS(P, 5) MICRO_ROWS(P, 6)
#define MICRO_TABLE(P) \
    {MICRO_ROW(P, 1), MICRO_ROW(P, 2), MICRO_ROW(P, 3), MICRO_ROW(P, 4), MICRO_ROW(P, 5), MICRO_ROW(P, 6)}

/* A read in place: a(r, p) at a[r * ars + p * acs]. */
#define MICRO_A_PARAMS const float *a, int64_t ars, int64_t acs
#define MICRO_A_STEP const float *ap = a + p * acs
#define MICRO_A(r) ap[(r) * ars]
MICRO_ALL(micro)
#undef MICRO_A_PARAMS
#undef MICRO_A_STEP
#undef MICRO_A

/* A through offset tables (the long-sum path of an offset-table B, whose
 * transpose is A there): a(r, p) at ar[r][aoff[p]]. */
#define MICRO_A_PARAMS const float *const *ar, const int64_t *aoff
#define MICRO_A_STEP const int64_t ao = aoff[p]
#define MICRO_A(r) ar[r][ao]
MICRO_ALL(micro_off)
#undef MICRO_A_PARAMS
#undef MICRO_A_STEP
#undef MICRO_A

typedef void (*micro_fn)(int64_t, const float *, int64_t, int64_t, const float *, float *, int64_t, int64_t, float,
                         float, const float *, ahead *);
typedef void (*micro_off_fn)(int64_t, const float *const *, const int64_t *, const float *, float *, int64_t, int64_t,
                             float, float, const float *, ahead *);
/* micro[R - 1][Q - 1], micro_off[R - 1][Q - 1] */
static const micro_fn micro[MR][NV] = MICRO_TABLE(micro);
static const micro_off_fn micro_off[MR][NV] = MICRO_TABLE(micro_off);
#undef MICRO_TABLE
#undef MICRO_ALL
#undef MICRO_ROWS
#undef MICRO_ROW
#undef MICRO

/* Rows [p0, p0+kc) and columns [j0, j0+nc) of B into bp, NR per row, zeros
 * past nc (the micro-kernel computes whole vectors). B is row-major (bcs 1:
 * rows copied) or column-major (brs 1: VF_N x VF_N tiles transposed in
 * registers, 3x faster than scattering its columns element by element). */
static void pack_b(const float *b, int64_t brs, int64_t bcs, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                   float *bp)
{
    if (bcs == 1) {
        for (int64_t p = 0; p < kc; p++) {
            const float *src = b + (p0 + p) * brs + j0;
            float *dst = bp + p * NR;
            for (int q = 0; q < NV; q++) packed_store(dst + VF_N * q, lanes_load(src + VF_N * q, nc - VF_N * q));
        }
        return;
    }
    for (int64_t pq = 0; pq < kc; pq += VF_N) {
        int64_t np = kc - pq < VF_N ? kc - pq : VF_N;
        for (int q = 0; q < NV; q++) {
            vf r[VF_N];
            for (int j = 0; j < VF_N; j++) {
                int64_t col = VF_N * q + j;
                r[j] = col < nc ? lanes_load(b + (j0 + col) * bcs + p0 + pq, np) : vf_set1(0.0f);
            }
            vf_transpose(r);
            for (int64_t i = 0; i < np; i++) packed_store(bp + (pq + i) * NR + VF_N * q, r[i]);
        }
    }
}

/* A run of lanes of one vector whose elements lie next to each other in
 * memory: lane l at base + off + l (off may be negative: the lanes before
 * the run are masked off, never read). */
typedef struct lane_run {
    lane_mask mask;
    int64_t off;
    int l0, l1; /* the lanes */
} lane_run;

/* The runs of consecutive offsets in off[0, n) (n <= NR), split where a
 * vector of VF_N lanes ends: vector q's runs are r[first[q], first[q + 1]).
 * Where runs start is found branch-free first (a bit per lane): packing
 * cnn's first layer (25 rows a block) spent a quarter of its time here. */
static void lane_runs(const int64_t *off, int64_t n, lane_run *r, int first[NV + 1])
{
    uint64_t starts = 0;
    for (int64_t j = 1; j < n; j++) starts |= (uint64_t)(off[j] != off[j - 1] + 1) << j;
    for (int q = 0; q < NV; q++) starts |= (uint64_t)1 << (VF_N * q);
    if (n < 64) starts &= ((uint64_t)1 << n) - 1;
    int nr = 0, q = -1;
    while (starts) {
        int j = __builtin_ctzll(starts);
        starts &= starts - 1;
        int e = starts ? __builtin_ctzll(starts) : (int)n;
        while (q < j / VF_N) first[++q] = nr;
        int l = j % VF_N, le = e - (j - l); /* <= VF_N: every vector's first lane starts a run */
        r[nr++] = (lane_run){lanes_between(l, le), off[j] - l, l, le};
    }
    while (q < NV) first[++q] = nr;
}

/* The lanes of runs r[r0, r1) from base, the others 0: independent masked
 * loads ORed together (merging each into the last serialised them). The
 * address is formed as an integer: a run's vector may start before base. */
static inline vf runs_load(const float *base, const lane_run *r, int r0, int r1)
{
    vf v = vf_set1(0.0f);
    for (int i = r0; i < r1; i++)
        v = lanes_or(v, masked_load((const float *)((uintptr_t)base + (uintptr_t)r[i].off * sizeof(float)), r[i].mask));
    return v;
}

/* Rows [0, kc) of one vector of a packed block (rows NR floats apart from
 * bp): row p's lanes are runs r[0, nr) read from base + row_off[p], and
 * the lines at base + row_off[p] + pf[0, npf) are prefetched on the way.
 * Up to three runs (runs longer than a third of a vector: im2col's rows
 * of 14 output positions give two or three) as that many masked loads ORed,
 * with no loop over the runs. */
static inline __attribute__((always_inline)) void pack_vector_runs(const float *base, const int64_t *row_off,
                                                                   int64_t kc, const lane_run *r, int nr,
                                                                   const int64_t *pf, int npf, float *bp)
{
    for (int64_t p = 0; p < kc; p++) {
        const float *src = base + row_off[p];
        packed_store(bp + p * NR, runs_load(src, r, 0, nr));
        for (int i = 0; i < npf; i++) _mm_prefetch((const char *)(src + pf[i]), _MM_HINT_T0);
    }
}

static void pack_vector_rows(const float *base, const int64_t *row_off, int64_t kc, const lane_run *r, int nr,
                             const int64_t *pf, int npf, float *bp)
{
    switch (nr) {
    case 1: pack_vector_runs(base, row_off, kc, r, 1, pf, npf, bp); return;
    case 2: pack_vector_runs(base, row_off, kc, r, 2, pf, npf, bp); return;
    case 3: pack_vector_runs(base, row_off, kc, r, 3, pf, npf, bp); return;
    default: pack_vector_runs(base, row_off, kc, r, nr, pf, npf, bp); return; /* none (past nc): zeros */
    }
}

/* pack_b for an offset-table B (tj_k_offset_mat): the same packed block,
 * each vector assembled from the runs of consecutive elements it covers,
 * one masked load per run. Along rows of the block (rows: the column
 * offsets run, as im2col's output positions along a row of the image) or,
 * like a column-major B, along columns then transposed in registers (the
 * row offsets run: the transposed columns of a weight gradient). */
static void pack_offsets(const tj_k_offset_mat *b, bool rows, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                         int64_t next, float *bp)
{
    lane_run r[NR];
    int first[NV + 1];
    if (rows) {
        /* The same rows of the next `next` columns are prefetched on the
         * way, the lines of each vector's first and last element: the
         * view's lines come from L3 the first time, and the block's sweep
         * then hides the wait. */
        int64_t pf[2 * NV];
        int npf = 0;
        for (int64_t j = 0; j < next; j += VF_N) {
            pf[npf++] = b->col_off[j0 + nc + j];
            pf[npf++] = b->col_off[j0 + nc + (next - j < VF_N ? next : j + VF_N) - 1];
        }
        lane_runs(b->col_off + j0, nc, r, first);
        /* Vector by vector down the rows, its runs' masks and offsets kept
         * in registers (row by row, the four vectors' eight masks and
         * offsets did not fit and were reloaded from the stack at each
         * row); each vector's two prefetches per row go on the way. */
        for (int q = 0; q < NV; q++) {
            const int64_t *pq = pf + 2 * q;
            int qpf = npf - 2 * q < 0 ? 0 : npf - 2 * q > 2 ? 2 : npf - 2 * q;
            pack_vector_rows(b->base, b->row_off + p0, kc, r + first[q], first[q + 1] - first[q], pq, qpf,
                             bp + VF_N * q);
        }
        return;
    }
    for (int64_t pq = 0, np; pq < kc; pq += np) {
        /* A tile of np rows: VF_N, or one run of at least half as many (a
         * row of im2col's output positions, 14 in cnn's second layer): one
         * load per column rather than two. */
        np = kc - pq < VF_N ? kc - pq : VF_N;
        lane_runs(b->row_off + p0 + pq, np, r, first);
        if (first[1] > 1) {
            int64_t run = 1;
            while (run < np && b->row_off[p0 + pq + run] == b->row_off[p0 + pq] + run) run++;
            if (2 * run >= VF_N) {
                np = run;
                lane_runs(b->row_off + p0 + pq, np, r, first);
            }
        }
        for (int q = 0; q < NV; q++) {
            vf v[VF_N];
            for (int j = 0; j < VF_N; j++) {
                int64_t col = VF_N * q + j;
                v[j] = col < nc ? runs_load(b->base + b->col_off[j0 + col], r, first[0], first[1]) : vf_set1(0.0f);
            }
            vf_transpose(v);
            for (int64_t i = 0; i < np; i++) packed_store(bp + (pq + i) * NR + VF_N * q, v[i]);
        }
    }
}

/* The operands of one product, for column_blocks and row_blocks. */
typedef struct gemm_args {
    int64_t m, n, k, ars, acs, brs, bcs, ldc;
    float alpha, beta;
    const float *a, *b;
    float *c;
    const tj_k_epilogue *epi;
    bool ahead_b, ahead_c;     /* prefetch B (with ob: in pack_offsets), C */
    const tj_k_offset_mat *ob; /* B as offset tables instead of b, brs, bcs (NULL: not) */
    bool ob_rows;              /* pack_offsets along rows */
    const tj_k_offset_mat *oa; /* A as offset tables instead of a, ars, acs (NULL: not) */
    const float *bias;         /* the epilogue's bias, added by the micro-kernel (NULL: none) */
} gemm_args;

/* Block [p0, p0 + kc) x [j0, j0 + nc) of g's B into bp (pack_b). */
static void pack_block(const gemm_args *g, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float *bp)
{
    int64_t next = !g->ahead_b ? 0 : g->n - j0 - nc < NR ? g->n - j0 - nc : NR;
    if (g->ob) pack_offsets(g->ob, g->ob_rows, p0, kc, j0, nc, next, bp);
    else pack_b(g->b, g->brs, g->bcs, p0, kc, j0, nc, bp);
}

/* B and C are prefetched when larger than this: smaller, they stay in L2
 * from one product to the next, and the prefetches cost 1-3% (m 32, n 512,
 * k 400; m 512, n 128, k 512). */
#define AHEAD_MIN_BYTES (1024 * 1024)

/* C's part per panel: that stays in L2 between the chunks of the sum, and
 * with an epilogue is still there when the epilogue runs over it. */
#define PANEL_C_BYTES (128 * 1024)

/* Column blocks per panel for `rows` rows of C: at least one. */
static int64_t panel_blocks(int64_t rows)
{
    int64_t u = PANEL_C_BYTES / (rows * NR * (int64_t)sizeof(float));
    return u < 1 ? 1 : u;
}

/* B's rows [p0, p0 + kc) and columns [j0, j1), prefetched over `calls`
 * micro-kernel calls (none without g->ahead or when empty). */
static ahead ahead_start(const gemm_args *g, int64_t p0, int64_t kc, int64_t j0, int64_t j1, int64_t calls)
{
    bool rows = g->bcs == 1;
    ahead h = {NULL, 0, 0, 0, 0, 0};
    if (!g->ahead_b || g->ob || j1 <= j0 || kc <= 0) return h; /* offsets: pack_offsets prefetches */
    h.vec = (const char *)(g->b + p0 * g->brs + j0 * g->bcs);
    h.stride = (int64_t)sizeof(float) * (rows ? g->brs : g->bcs);
    h.per_vector = rows ? (j1 - j0 + 15) / 16 : (kc + 15) / 16; /* 16 floats a line */
    h.left = (rows ? kc : j1 - j0) * h.per_vector;
    h.per_call = (h.left + calls - 1) / calls;
    return h;
}

/* C's rows [i, min(i + MR, i1)) and columns [j, j + nc), prefetched for
 * writing: prefetchw brings a line in owned, where a plain store miss waits
 * for it (m 400, k 32, n 12544: 3.4 -> 1.9 ms; 16 floats a line). Every
 * AVX-512 CPU and AMD's AVX2 ones have PRFCHW, and Intel's AVX2 CPUs
 * without it (Haswell) run the instruction as a no-op; written in assembly because GCC 12 emits prefetcht0 for
 * __builtin_prefetch(p, 1) unless the whole file is built with -mprfchw. */
static void prefetch_c(const gemm_args *g, int64_t i, int64_t i1, int64_t j, int64_t nc)
{
    for (int64_t r = i; r < i + MR && r < i1; r++)
        for (int64_t q = 0; q < nc; q += 16) __asm__ volatile("prefetchw %0" : : "m"(g->c[r * g->ldc + j + q]));
}

/* Steps of the sum per chunk of B packed at once, KC at a time, when the
 * sum is longer than that: 128 KiB, in L2. Each tile of C then runs
 * through all the chunk's blocks in a row, its part of C in L1 from one
 * block to the next, rather than once per block of the sum through a
 * panel of C that had to stay in L2: a power-of-two ldc maps C's rows onto
 * a few L2 sets, where the panel did not stay (1 thread, thread CPU time:
 * 1024^3 35-48 -> 44-63 GFLOP/s, 128 x 768 x 3072 +9-14%, 128 x 2304 x 768
 * +4-10%). Shorter sums keep one block per chunk, B's block in L1 across
 * the tiles: chunks of 256-512 steps were 3-8% slower there (64 x 256 x
 * 256, 384 x 128 x 512). */

/* Rows [i0, i1) and columns [j0, j1) of C, the whole sum: per chunk of the
 * sum (CHUNK or KC steps), each column block of B is packed and each
 * tile of rows swept through the chunk's blocks of KC steps in order, the next column
 * block (of this panel, else the first of the next chunk or of the next
 * panel) prefetched meanwhile, and in the first chunk (with g->ahead_c)
 * each next tile of C too. Each element's sum runs in the same order,
 * block by block, however C is split. */
static void panel(const gemm_args *g, int64_t i0, int64_t i1, int64_t j0, int64_t j1)
{
    _Alignas(64) float bp[CHUNK * NR];
    int64_t tiles = (i1 - i0 + MR - 1) / MR, chunk = g->k > CHUNK ? CHUNK : KC;
    for (int64_t c0 = 0; c0 < g->k; c0 += chunk) {
        int64_t c1 = g->k - c0 < chunk ? g->k : c0 + chunk, cn = g->k - c1 < chunk ? g->k - c1 : chunk;
        int64_t calls = tiles * ((c1 - c0 + KC - 1) / KC);
        for (int64_t jb = j0; jb < j1; jb += NR) {
            int64_t nc = j1 - jb < NR ? j1 - jb : NR;
            const float *bias = g->bias ? g->bias + jb : NULL; /* added after the sum's last block */
            ahead h;
            if (jb + NR < j1) h = ahead_start(g, c0, c1 - c0, jb + NR, j1 - jb - NR < NR ? j1 : jb + 2 * NR, calls);
            else if (cn > 0) h = ahead_start(g, c1, cn, j0, j1 - j0 < NR ? j1 : j0 + NR, calls);
            else h = ahead_start(g, 0, g->k < chunk ? g->k : chunk, j1, g->n - j1 < NR ? g->n : j1 + NR, calls);
            for (int64_t p0 = c0; p0 < c1; p0 += KC)
                pack_block(g, p0, c1 - p0 < KC ? c1 - p0 : KC, jb, nc, bp + (p0 - c0) * NR);
            for (int64_t i = i0; i < i1; i += MR) {
                int mr = i1 - i < MR ? (int)(i1 - i) : MR;
                if (g->ahead_c && c0 == 0) {
                    if (i + MR < i1) prefetch_c(g, i + MR, i1, jb, nc);
                    else if (jb + NR < j1) prefetch_c(g, i0, i1, jb + NR, j1 - jb - NR < NR ? j1 - jb - NR : NR);
                }
                if (g->oa) {
                    const float *ar[MR];
                    for (int r = 0; r < mr; r++) ar[r] = g->oa->base + g->oa->row_off[i + r];
                    for (int64_t p0 = c0; p0 < c1; p0 += KC)
                        micro_off[mr - 1][(nc - 1) / VF_N](c1 - p0 < KC ? c1 - p0 : KC, ar, g->oa->col_off + p0,
                                                         bp + (p0 - c0) * NR, g->c + i * g->ldc + jb, g->ldc, nc,
                                                         g->alpha, p0 == 0 ? g->beta : 1.0f,
                                                         p0 + KC >= g->k ? bias : NULL, &h);
                    continue;
                }
                for (int64_t p0 = c0; p0 < c1; p0 += KC)
                    micro[mr - 1][(nc - 1) / VF_N](c1 - p0 < KC ? c1 - p0 : KC, g->a + i * g->ars + p0 * g->acs, g->ars,
                                                 g->acs, bp + (p0 - c0) * NR, g->c + i * g->ldc + jb, g->ldc, nc,
                                                 g->alpha, p0 == 0 ? g->beta : 1.0f, p0 + KC >= g->k ? bias : NULL,
                                                 &h);
            }
        }
    }
}

/* Column blocks [b0, b1) of NR columns each, every row, panel by panel;
 * with an epilogue, that runs over each panel once it is done. */
static void column_blocks(void *ctx, int t, int64_t b0, int64_t b1)
{
    const gemm_args *g = ctx;
    int64_t step = panel_blocks(g->m);
    (void)t;
    for (int64_t pb = b0; pb < b1; pb += step) {
        int64_t j0 = pb * NR, j1 = (pb + step < b1 ? pb + step : b1) * NR;
        if (j1 > g->n) j1 = g->n;
        panel(g, 0, g->m, j0, j1);
        if (g->epi) tj_k_epilogue_apply(g->epi, sizeof(float), g->c, g->ldc, 0, g->m, j0, j1 - j0);
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
    if (i0 >= i1) return;
    int64_t width = panel_blocks(i1 - i0) * NR;
    for (int64_t j0 = 0; j0 < g->n; j0 += width) panel(g, i0, i1, j0, g->n - j0 < width ? g->n : j0 + width);
    if (g->epi) tj_k_epilogue_apply(g->epi, sizeof(float), g->c, g->ldc, i0, i1 - i0, 0, g->n);
}

/* A long sum into a small C with a column-major B (decomposed cnn's weight
 * gradients, g @ columns^T: 32 x 400 by k 12544, the columns [400, 12544]
 * as stored) is computed as C^T = B^T @ A^T, with the roles of the
 * operands swapped: the small A, packed in chunks of the sum, becomes the
 * micro-kernel's B and stays in L2, while B's columns (rows of B^T), the
 * large operand, are read a few at a time along the sum by the
 * broadcasts, sequential streams the hardware prefetches. The regular
 * panels pack B^T 64 rows at a time, each row in pieces of KC, from DRAM:
 * 32 x 400 x 12544 took 2.7 ms that way, 2.2 ms this way (1 thread, thread
 * CPU time). Each element of C^T is the same sum, block by block, as that
 * element of C on the regular path, so the bytes are the same. C^T is
 * computed in a buffer on the stack and transposed into C at the end. */
#define LONG_SUM_MIN 4096
#define LONG_SUM_MAX_C 16384 /* elements of C: 64 KiB of stack */

/* Whether tj_k_gemm_f32 takes the long-sum path: B column-major, A
 * row- or column-major (packed as the micro-kernel's B), VF_N + 1 to NR
 * rows (one column block of C^T, at least two vectors wide: 17-64 on
 * AVX-512, 9-16 on AVX2). */
static bool long_sum(int64_t m, int64_t n, int64_t k, int64_t ars, int64_t acs, int64_t brs)
{
    return brs == 1 && (ars == 1 || acs == 1) && m > VF_N && m <= NR && k >= LONG_SUM_MIN && m * n <= LONG_SUM_MAX_C;
}

/* The long-sum path (long_sum): C^T's row tiles split over the threads,
 * each computed by panel (a single column block: A packed a chunk of the
 * sum at a time, in L2). B^T, the micro-kernel's A, is b (rows bcs apart)
 * or, when ob is not NULL, ob's transpose. */
static void long_sum_product(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                             const float *b, int64_t bcs, const tj_k_offset_mat *ob, float beta, float *c,
                             int64_t ldc, int nthreads, const tj_k_epilogue *epi)
{
    _Alignas(64) float ct[LONG_SUM_MAX_C];
    if (beta != 0)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) ct[j * m + i] = c[i * ldc + j];
    /* C^T [n, m] = B^T (row-major, rows bcs apart) @ A^T (element (p, i) at a[i * ars + p * acs]) */
    tj_k_offset_mat bt = ob ? (tj_k_offset_mat){ob->base, ob->col_off, ob->row_off} : (tj_k_offset_mat){0};
    /* A^T's next chunk is prefetched while one is swept when it exceeds
     * L2's share (decomposed cnn's g, 32 x 12544: packing its strided
     * columns otherwise waited on memory, 14% of the product's samples,
     * 5.5% with the prefetches). */
    bool ahead_a = (double)m * (double)k * sizeof(float) > AHEAD_MIN_BYTES;
    gemm_args g = {n,    m,       k,     bcs,  1,     acs, ars, m, alpha, beta, b, a, ct,
                   NULL, ahead_a, false, NULL, false, ob ? &bt : NULL};
    int64_t tiles = (n + MR - 1) / MR;
    tj_k_parallel(nthreads < tiles ? nthreads : (int)tiles, tiles, row_blocks, &g);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) c[i * ldc + j] = ct[j * m + i];
    if (epi) tj_k_epilogue_apply(epi, sizeof(float), c, ldc, 0, m, 0, n);
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

/* The product g describes, on up to nthreads threads (see tj_k_gemm_f32). */
static void product(gemm_args *g, int nthreads)
{
    int64_t tiles = (g->m + MR - 1) / MR, blocks = (g->n + NR - 1) / NR;
    if (nthreads > 1 && split_rows(g->m, g->n, g->k, nthreads)) {
        tj_k_parallel(nthreads < tiles ? nthreads : (int)tiles, tiles, row_blocks, g);
        return;
    }
    /* A small result split by columns, its epilogue run by each thread on
     * its columns, leaves half of every row on each core for the next
     * kernel, which reads whole rows (mlp batch 64 at 2 threads: 5%
     * slower than the unfused kernels, where the lone elementwise kernel
     * runs on the calling thread). Split by rows, each core keeps whole
     * rows, and the next product, split by rows too, reads its own: 2-3%
     * faster than unfused, though each thread packs all of B. */
    if ((g->epi || g->bias) && nthreads > 1 && g->m * g->n < TJ_K_EPILOGUE_PARALLEL_MIN && tiles >= nthreads) {
        tj_k_parallel(nthreads, tiles, row_blocks, g);
        return;
    }
    tj_k_parallel(nthreads < blocks ? nthreads : (int)blocks, blocks, column_blocks, g);
}

void TJ_ISA(tj_k_gemm_f32)(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                          const float *b, int64_t brs, int64_t bcs, float beta, float *c, int64_t ldc, int nthreads,
                          const tj_k_epilogue *epi)
{
    if (long_sum(m, n, k, ars, acs, brs)) {
        long_sum_product(m, n, k, alpha, a, ars, acs, b, bcs, NULL, beta, c, ldc, nthreads, epi);
        return;
    }
    /* the bias inside the micro-kernel, the loop over C after it */
    tj_k_epilogue loop = epi ? *epi : (tj_k_epilogue){0};
    loop.bias = NULL;
    gemm_args g = {m, n, k, ars, acs, brs, bcs, ldc, alpha, beta, a, b, c, loop.loop ? &loop : NULL,
                   (double)k * (double)n * sizeof(float) > AHEAD_MIN_BYTES,
                   (double)m * (double)n * sizeof(float) > AHEAD_MIN_BYTES, NULL, false, NULL,
                   epi ? epi->bias : NULL};
    product(&g, nthreads);
}

int64_t TJ_ISA(tj_k_gemm_f32_block)(void) { return KC; }

/* Breaks in off[0, n): places where an offset is not the one before plus
 * 1; *span: the largest offset minus the smallest, plus 1. */
static int64_t breaks(const int64_t *off, int64_t n, int64_t *span)
{
    int64_t nb = 0, lo = off[0], hi = off[0];
    for (int64_t i = 1; i < n; i++) {
        nb += off[i] != off[i - 1] + 1;
        lo = off[i] < lo ? off[i] : lo;
        hi = off[i] > hi ? off[i] : hi;
    }
    *span = hi - lo + 1;
    return nb;
}

void TJ_ISA(tj_k_gemm_f32_offsets)(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars,
                                  int64_t acs, const tj_k_offset_mat *b, float beta, float *c, int64_t ldc,
                                  int nthreads)
{
    /* Packed along whichever offsets run longer on average. The lines of
     * B are prefetched (pack_offsets: the next block's rows) only where
     * what the tables reach exceeds L2 (cnn's second layer's view reads
     * 1.3 MB of its input, the first layer's 262 KB: there the prefetches
     * only cost). */
    int64_t row_span, col_span;
    int64_t row_breaks = breaks(b->row_off, k, &row_span), col_breaks = breaks(b->col_off, n, &col_span);
    bool rows = (double)n * (double)(row_breaks + 1) >= (double)k * (double)(col_breaks + 1);
    bool ahead = (double)(row_span + col_span) * sizeof(float) > AHEAD_MIN_BYTES;
    /* A long sum down runs of B's rows takes the long-sum path as a
     * column-major B would (a weight gradient's g @ columns^T: 32 x 400 by
     * k 12544, 1.5x as fast as the panels, which transpose B's blocks). */
    if (!rows && long_sum(m, n, k, ars, acs, 1)) {
        long_sum_product(m, n, k, alpha, a, ars, acs, NULL, 0, b, beta, c, ldc, nthreads, NULL);
        return;
    }
    /* More rows than the long-sum path takes: in groups of rows it does
     * take (each element the same bytes whatever path computes it). */
    int64_t groups = (m + NR - 1) / NR;
    if (!rows && m > NR && long_sum(m / groups, n, k, ars, acs, 1) &&
        long_sum((m + groups - 1) / groups, n, k, ars, acs, 1)) {
        for (int64_t g = 0; g < groups; g++) {
            int64_t i0 = g * m / groups, i1 = (g + 1) * m / groups;
            long_sum_product(i1 - i0, n, k, alpha, a + i0 * ars, ars, acs, NULL, 0, b, beta, c + i0 * ldc, ldc,
                             nthreads, NULL);
        }
        return;
    }
    gemm_args g = {m, n, k, ars, acs, 0, 0, ldc, alpha, beta, a, NULL, c, NULL, ahead,
                   (double)m * (double)n * sizeof(float) > AHEAD_MIN_BYTES, b, rows, NULL};
    product(&g, nthreads);
}
