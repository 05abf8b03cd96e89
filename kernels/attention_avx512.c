/* AVX-512 float32 attention (attention.h). Per (batch item, block of BQ
 * queries), key blocks of BK are folded into the running maxima, sums and
 * output rows, one group of MR queries at a time:
 *   - scores: an MR x BK register tile of Q K^T, Q read in place
 *     (broadcasts) against the keys transposed and pre-scaled into
 *     [E][BK] blocks (16 x 16 in-register transposes, once per batch item
 *     and thread), so that 4 loads and MR broadcasts feed 4 MR FMAs, as in
 *     gemm_avx512.c;
 *   - masking and the online softmax with the cheap exp of exp_isa.h;
 *   - output: an MR x 64 register tile of P V (V read in place when its
 *     rows are whole contiguous vectors, else copied), the old rows
 *     rescaled on load.
 * A key block (BK x E packed, BK x Ev of V) stays in L1 over the groups.
 * Causal attention skips the key blocks after the query block and, in the
 * diagonal block, the keys after each group's last query. Measured with
 * `tjit bench sdpa` ([1, 12, 128, 64], causal): about 2.4x faster than the
 * decomposed matmul-softmax-matmul at 1 thread, 3x at 2. */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "attention.h"
#include "parallel.h"
#include "transpose16_avx512.h"
#include "exp_isa.h"

#define BK 64 /* keys per block: 4 vectors of a score row */
#define BQ 64 /* queries per block (one work item) */
#define MR 6  /* queries per register tile */
#define NV 4  /* vectors per register tile row */

static inline int64_t round16(int64_t n) { return (n + 15) & ~(int64_t)15; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Per-thread scratch (floats, each piece 64-byte aligned): the keys of
 * one batch item packed block by block (kt, BK keys x E per block) and V
 * with padded rows when packed (vp), one group's weights (p), the query
 * block's output rows (acc), running maxima (m) and sums (l, one vector
 * per query, added up at the end). */
typedef struct layout {
    int64_t evp;    /* Ev rounded up to 16: row length of acc and of packed V */
    bool pack_v;    /* V's rows are not whole contiguous vectors: they are copied */
    size_t kt, vp, p, acc, m, l; /* offsets */
    size_t total;
} layout;

static layout layout_of(const tj_k_attention *a)
{
    int64_t sp = (a->S + BK - 1) / BK * BK;
    layout s = {.evp = round16(a->Ev), .pack_v = (a->v.cs != 1 && a->Ev > 1) || a->Ev % 16 != 0};
    s.kt = 0;
    s.vp = s.kt + (size_t)(round16(a->E) * sp);
    s.p = s.vp + (s.pack_v ? (size_t)(sp * s.evp) : 0);
    s.acc = s.p + (size_t)(MR * BK);
    s.m = s.acc + (size_t)(BQ * s.evp);
    s.l = s.m + BQ;
    s.total = s.l + (size_t)(BQ * 16);
    return s;
}

/* Which batch item's key blocks a thread's kt and vp hold, and how many. */
typedef struct packed {
    int64_t b, blocks;
} packed;

size_t tj_k_attention_scratch_f32_avx512(const tj_k_attention *a) { return layout_of(a).total; }

int64_t tj_k_attention_items_f32_avx512(const tj_k_attention *a) { return a->batch * ((a->L + BQ - 1) / BQ); }

/* kt[e * BK + c] = scale * k(c, e) for the nk keys of a block (k: key 0
 * of the block, strides rs, cs), zeros up to the next multiple of 16. */
static void pack_keys(const float *k, int64_t rs, int64_t cs, int64_t nk, int64_t E, float scale, float *kt)
{
    if (cs != 1) {
        for (int64_t c = 0; c < round16(nk); c++)
            for (int64_t e = 0; e < E; e++) kt[e * BK + c] = c < nk ? scale * k[c * rs + e * cs] : 0.0f;
        return;
    }
    __m512 vs = _mm512_set1_ps(scale), r[16];
    for (int64_t c0 = 0; c0 < nk; c0 += 16)
        for (int64_t e0 = 0; e0 < E; e0 += 16) {
            __mmask16 em = tj_k_lanes16(E - e0);
            for (int i = 0; i < 16; i++)
                r[i] = c0 + i < nk ? _mm512_mul_ps(vs, _mm512_maskz_loadu_ps(em, k + (c0 + i) * rs + e0))
                                   : _mm512_setzero_ps();
            tj_k_transpose16(r);
            for (int64_t i = 0; i < 16 && e0 + i < E; i++) _mm512_store_ps(kt + (e0 + i) * BK + c0, r[i]);
        }
}

/* Scores of R queries (rows of q, strides qrs, qcs) against w vectors of
 * keys: s[r * BK + j] = sum_e q(r, e) kt[e * BK + j]. */
static inline __attribute__((always_inline)) void score_tile(int R, int w, int64_t E, const float *q, int64_t qrs,
                                                             int64_t qcs, const float *kt, float *s)
{
    __m512 acc[MR][NV];
    for (int r = 0; r < R; r++)
        for (int v = 0; v < w; v++) acc[r][v] = _mm512_setzero_ps();
    for (int64_t e = 0; e < E; e++) {
        __m512 kv[NV];
        for (int v = 0; v < w; v++) kv[v] = _mm512_load_ps(kt + e * BK + 16 * v);
        for (int r = 0; r < R; r++) {
            __m512 qv = _mm512_set1_ps(q[r * qrs + e * qcs]);
            for (int v = 0; v < w; v++) acc[r][v] = _mm512_fmadd_ps(qv, kv[v], acc[r][v]);
        }
    }
    for (int r = 0; r < R; r++)
        for (int v = 0; v < w; v++) _mm512_store_ps(s + r * BK + 16 * v, acc[r][v]);
}

/* Output rows acc (R rows, leading dim ld, w vectors) = corr[r] * acc +
 * sum_{c < kc} p[r * BK + c] v(c, :), v's rows holding whole vectors (a
 * masked load in the loop makes GCC 12 -O3 spill the tile every step). */
static inline __attribute__((always_inline)) void output_tile(int R, int w, int64_t kc, const float *p, const float *v,
                                                              int64_t vrs, const float *corr, float *acc, int64_t ld)
{
    __m512 o[MR][NV];
    for (int r = 0; r < R; r++) {
        __m512 cr = _mm512_set1_ps(corr[r]);
        for (int j = 0; j < w; j++) o[r][j] = _mm512_mul_ps(cr, _mm512_load_ps(acc + r * ld + 16 * j));
    }
    for (int64_t c = 0; c < kc; c++) {
        __m512 vv[NV];
        for (int j = 0; j < w; j++) vv[j] = _mm512_loadu_ps(v + c * vrs + 16 * j);
        for (int r = 0; r < R; r++) {
            __m512 pv = _mm512_set1_ps(p[r * BK + c]);
            for (int j = 0; j < w; j++) o[r][j] = _mm512_fmadd_ps(pv, vv[j], o[r][j]);
        }
    }
    for (int r = 0; r < R; r++)
        for (int j = 0; j < w; j++) _mm512_store_ps(acc + r * ld + 16 * j, o[r][j]);
}

typedef void (*score_fn)(int64_t, const float *, int64_t, int64_t, const float *, float *);
typedef void (*output_fn)(int64_t, const float *, const float *, int64_t, const float *, float *, int64_t);

/* One instance per (rows, vectors): the tile loops unroll into registers. */
#define TILES(R, W)                                                                                               \
    static void score_##R##_##W(int64_t E, const float *q, int64_t qrs, int64_t qcs, const float *kt, float *s)  \
    {                                                                                                             \
        score_tile(R, W, E, q, qrs, qcs, kt, s);                                                                  \
    }                                                                                                             \
    static void output_##R##_##W(int64_t kc, const float *p, const float *v, int64_t vrs, const float *corr,       \
                                 float *acc, int64_t ld)                                                          \
    {                                                                                                             \
        output_tile(R, W, kc, p, v, vrs, corr, acc, ld);                                                          \
    }
#define TILES_R(R) TILES(R, 1) TILES(R, 2) TILES(R, 3) TILES(R, 4)
TILES_R(1)
TILES_R(2)
TILES_R(3)
TILES_R(4)
TILES_R(5)
TILES_R(6)
#undef TILES_R
#undef TILES

#define ROW(X, R) {X##_##R##_1, X##_##R##_2, X##_##R##_3, X##_##R##_4}
static const score_fn score_tiles[MR][NV] = {ROW(score, 1), ROW(score, 2), ROW(score, 3),
                                             ROW(score, 4), ROW(score, 5), ROW(score, 6)};
static const output_fn output_tiles[MR][NV] = {ROW(output, 1), ROW(output, 2), ROW(output, 3),
                                               ROW(output, 4), ROW(output, 5), ROW(output, 6)};
#undef ROW

/* The lanes of `keep` (keys j.. of a query whose mask row starts at mrow)
 * that the mask keeps (a bool mask with mask_drops: the lanes it does not
 * mark), and the float mask added to x. */
static inline __m512 apply_mask(const tj_k_attention *a, const char *mrow, int64_t j, __m512 x, __mmask16 *keep)
{
    int n = __builtin_popcount(*keep); /* keep is a prefix of lanes */
    int64_t cs = a->mask.cs;
    if (a->mask_is_bool) {
        unsigned char b[16] = {0};
        if (cs == 1) memcpy(b, mrow + j, (size_t)n);
        else
            for (int i = 0; i < n; i++) b[i] = (unsigned char)mrow[(j + i) * cs];
        __m512i w = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)b));
        *keep &= a->mask_drops ? _mm512_testn_epi32_mask(w, w) : _mm512_test_epi32_mask(w, w);
        return x;
    }
    const float *f = (const float *)(const void *)mrow;
    if (cs == 1) return _mm512_add_ps(x, _mm512_maskz_loadu_ps(*keep, f + j));
    _Alignas(64) float add[16] = {0};
    for (int i = 0; i < n; i++) add[i] = f[(j + i) * cs];
    return _mm512_add_ps(x, _mm512_load_ps(add));
}

/* Online softmax step of the group's R queries (the first is query i,
 * its mask row at mrow, the next ones mrs bytes apart) over w vectors of
 * scores p[r * BK + ...] of the key block at j0, of which the first kc
 * exist (and for causal query i + r, those up to key i + r): p becomes the
 * weights exp(s - m') (0 where masked), m the running maxima, l the
 * running sums (a vector per query); corr receives the factors for the
 * old output rows. A query with every key so far masked keeps m = -inf
 * and gets weights 0. */
static inline void softmax_group(const tj_k_attention *a, const char *mrow, int64_t mrs, int64_t i, int R, int64_t j0,
                                 int64_t kc, int w, float *p, float *m, float *l, float *corr)
{
    _Alignas(64) float old[16] = {0}, shift[16] = {0};
    __m512 sums[MR], ninf = _mm512_set1_ps(-INFINITY);
    for (int r = 0; r < R; r++) {
        int64_t n = a->causal ? min64(kc, i + r - j0 + 1) : kc;
        float *s = p + r * BK;
        __m512 x[NV], mx = ninf;
        for (int v = 0; v < w; v++) {
            __mmask16 keep = tj_k_lanes16(n - 16 * v);
            x[v] = _mm512_load_ps(s + 16 * v);
            if (mrow && keep) x[v] = apply_mask(a, mrow + r * mrs, j0 + 16 * v, x[v], &keep);
            x[v] = _mm512_mask_blend_ps(keep, ninf, x[v]);
            mx = _mm512_max_ps(mx, x[v]);
        }
        /* a nan score need not reach the maximum: its weight, hence the row, is nan */
        float bm = _mm512_reduce_max_ps(mx), mnew = bm > m[r] || bm != bm ? bm : m[r];
        old[r] = m[r];
        shift[r] = mnew == -INFINITY ? 0.0f : mnew;
        m[r] = mnew;
        __m512 vs = _mm512_set1_ps(shift[r]), sum = _mm512_setzero_ps();
        for (int v = 0; v < w; v++) {
            __m512 e = exp_nonpositive(_mm512_sub_ps(x[v], vs));
            _mm512_store_ps(s + 16 * v, e);
            sum = _mm512_add_ps(sum, e);
        }
        sums[r] = sum;
    }
    _mm512_store_ps(corr, exp_nonpositive(_mm512_sub_ps(_mm512_load_ps(old), _mm512_load_ps(shift))));
    for (int r = 0; r < R; r++)
        _mm512_store_ps(l + 16 * r, _mm512_fmadd_ps(_mm512_load_ps(l + 16 * r), _mm512_set1_ps(corr[r]), sums[r]));
}

/* Packs the key blocks (and V's rows, if copied) of batch item b up to
 * key s_end, unless the thread holds them already. */
static void pack_item(const tj_k_attention *a, const layout *ly, int64_t b, int64_t s_end, float *scratch, packed *pk)
{
    int64_t E = a->E, Ev = a->Ev, evp = ly->evp, step = round16(E) * BK;
    const float *k = (const float *)a->k.p + a->k.off[b], *v = (const float *)a->v.p + a->v.off[b];
    if (pk->b != b) pk->b = b, pk->blocks = 0;
    for (; pk->blocks * BK < s_end; pk->blocks++) {
        int64_t j0 = pk->blocks * BK, nk = min64(BK, a->S - j0);
        pack_keys(k + j0 * a->k.rs, a->k.rs, a->k.cs, nk, E, (float)a->scale, scratch + ly->kt + pk->blocks * step);
        if (!ly->pack_v) continue;
        float *vp = scratch + ly->vp + j0 * evp;
        for (int64_t c = 0; c < nk; c++)
            for (int64_t e = 0; e < evp; e++) vp[c * evp + e] = e < Ev ? v[(j0 + c) * a->v.rs + e * a->v.cs] : 0.0f;
    }
}

/* One work item: queries [i0, i0 + nq) of batch item b. */
static void query_block(const tj_k_attention *a, const layout *ly, int64_t b, int64_t i0, int64_t nq, float *scratch,
                        packed *pk)
{
    float *p = scratch + ly->p, *acc = scratch + ly->acc, *m = scratch + ly->m, *l = scratch + ly->l;
    int64_t E = a->E, Ev = a->Ev, evp = ly->evp, step = round16(E) * BK;
    const float *q = (const float *)a->q.p + a->q.off[b] + i0 * a->q.rs;
    const float *v = ly->pack_v ? scratch + ly->vp : (const float *)a->v.p + a->v.off[b];
    int64_t vrs = ly->pack_v ? evp : a->v.rs;
    size_t mes = a->mask_is_bool ? 1 : sizeof(float);
    const char *mask = a->mask.p ? (const char *)a->mask.p + (size_t)(a->mask.off[b] + i0 * a->mask.rs) * mes : NULL;
    int64_t s_end = a->causal ? min64(a->S, i0 + nq) : a->S;
    pack_item(a, ly, b, s_end, scratch, pk);
    for (int64_t r = 0; r < nq; r++) m[r] = -INFINITY;
    memset(l, 0, sizeof(float) * (size_t)(nq * 16));
    memset(acc, 0, sizeof(float) * (size_t)(nq * evp));
    for (int64_t j0 = 0; j0 < s_end; j0 += BK) {
        int64_t nk = min64(BK, s_end - j0);
        const float *kt = scratch + ly->kt + j0 / BK * step;
        for (int64_t r0 = 0; r0 < nq; r0 += MR) {
            int R = (int)min64(MR, nq - r0);
            /* keys of this block that the group's last query sees */
            int64_t kc = a->causal ? min64(nk, i0 + r0 + R - j0) : nk;
            if (kc <= 0) continue;
            int w = (int)((kc + 15) / 16);
            _Alignas(64) float corr[16];
            score_tiles[R - 1][w - 1](E, q + r0 * a->q.rs, a->q.rs, a->q.cs, kt, p);
            softmax_group(a, mask ? mask + (size_t)(r0 * a->mask.rs) * mes : NULL, (int64_t)mes * a->mask.rs,
                          i0 + r0, R, j0, kc, w, p, m + r0, l + 16 * r0, corr);
            for (int64_t e0 = 0; e0 < Ev; e0 += 16 * NV) {
                int wv = (int)min64(NV, (Ev - e0 + 15) / 16);
                output_tiles[R - 1][wv - 1](kc, p, v + j0 * vrs + e0, vrs, corr, acc + r0 * evp + e0, evp);
            }
        }
    }
    float *out = (float *)a->out + (b * a->L + i0) * Ev;
    for (int64_t r = 0; r < nq; r++) {
        float sum = _mm512_reduce_add_ps(_mm512_load_ps(l + 16 * r));
        __m512 inv = _mm512_set1_ps(sum != 0 ? 1.0f / sum : a->masked_rows_nan ? NAN : 0.0f);
        for (int64_t e0 = 0; e0 < Ev; e0 += 16)
            _mm512_mask_storeu_ps(out + r * Ev + e0, tj_k_lanes16(Ev - e0),
                                  _mm512_mul_ps(inv, _mm512_load_ps(acc + r * evp + e0)));
    }
}

/* Work items of `span` query blocks of one batch item, in order. */
static void run_items(const tj_k_attention *a, const layout *ly, int64_t it, int64_t span, float *scratch, packed *pk)
{
    int64_t qblocks = (a->L + BQ - 1) / BQ;
    for (int64_t x = it * span; x < (it + 1) * span; x++) {
        int64_t b = x / qblocks, i0 = (x % qblocks) * BQ;
        query_block(a, ly, b, i0, min64(BQ, a->L - i0), scratch, pk);
    }
}

/* The work items of one call, for run_item; a packed-keys state per thread. */
typedef struct items_job {
    const tj_k_attention *a;
    layout ly;
    int64_t span;
    float *scratch;
    packed pk[TJ_K_MAX_PARTICIPANTS];
} items_job;

static void run_item(void *ctx, int who, int64_t it)
{
    items_job *j = ctx;
    run_items(j->a, &j->ly, it, j->span, j->scratch + (size_t)who * j->ly.total, &j->pk[who]);
}

/* Batch items [b0, b1), each whole, on block t's thread. */
static void run_items_block(void *ctx, int t, int64_t b0, int64_t b1)
{
    items_job *j = ctx;
    for (int64_t it = b0; it < b1; it++)
        run_items(j->a, &j->ly, it, j->span, j->scratch + (size_t)t * j->ly.total, &j->pk[t]);
}

void tj_k_attention_run_f32_avx512(const tj_k_attention *a, int nthreads, float *scratch)
{
    items_job j = {.a = a, .ly = layout_of(a), .scratch = scratch};
    int64_t qblocks = (a->L + BQ - 1) / BQ, items = a->batch * qblocks;
    for (int t = 0; t < TJ_K_MAX_PARTICIPANTS; t++) j.pk[t] = (packed){-1, 0};
    /* whole batch items per thread when there are enough of them, so that
     * each packs its keys once: in contiguous runs, as a product split by
     * rows (the q, k, v projection) laid the tokens out, since the two
     * vCPUs here share no cache (gpt at 2 threads: attention 54-83 us
     * instead of 106-109 handing the items out dynamically); else single
     * query blocks, handed out as threads become free (causal blocks
     * differ in cost) */
    if (a->batch >= 2 * nthreads) {
        j.span = qblocks;
        tj_k_parallel(nthreads < TJ_K_MAX_PARTICIPANTS ? nthreads : TJ_K_MAX_PARTICIPANTS, a->batch, run_items_block, &j);
        return;
    }
    j.span = 1;
    tj_k_parallel_items(nthreads, items, run_item, &j);
}
