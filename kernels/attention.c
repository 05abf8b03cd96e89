/* Blocked attention with an online softmax (see attention.h). */
#include <math.h>
#include <string.h>

#include "attention.h"
#include "cpu_isa.h"
#include "gemm.h"
#include "parallel.h"
#include "softmax.h"

#define MAX_KEY_BLOCK 128
#define MAX_QUERY_BLOCK 64

/* Block sizes: bk keys, bq queries, with bq * bk * max(E, Ev) within the
 * work OpenBLAS does on the calling thread. */
static void block_sizes(const tj_k_attention *a, int64_t *bq, int64_t *bk)
{
    double d = (double)(a->E > a->Ev ? a->E : a->Ev), budget = TJ_K_GEMM_SERIAL_WORK;
    if (d < 1) d = 1;
    int64_t k = a->S < MAX_KEY_BLOCK ? a->S : MAX_KEY_BLOCK;
    if (k < 1) k = 1;
    while (k > 1 && (double)k * d > budget) k /= 2;
    int64_t q = (int64_t)(budget / ((double)k * d));
    if (q > MAX_QUERY_BLOCK) q = MAX_QUERY_BLOCK;
    if (q > a->L) q = a->L;
    *bq = q < 1 ? 1 : q;
    *bk = k;
}

/* float32 runs attention_avx512.c where the ISA in use is AVX-512 */
static bool use_avx512(const tj_k_attention *a)
{
    return a->dtype == TJ_FLOAT32 && tj_k_isa_active() == TJ_K_ISA_AVX512;
}

size_t tj_k_attention_scratch(const tj_k_attention *a)
{
    if (use_avx512(a)) return tj_k_attention_scratch_f32_avx512(a);
    int64_t bq, bk;
    block_sizes(a, &bq, &bk);
    return (size_t)(bq * bk + bq * a->Ev + 2 * bq);
}

static int64_t items_of(const tj_k_attention *a)
{
    int64_t bq, bk;
    block_sizes(a, &bq, &bk);
    return a->batch * ((a->L + bq - 1) / bq);
}

int tj_k_attention_threads(const tj_k_attention *a)
{
    double work = (double)a->batch * (double)a->L * (double)(a->S + 1) * (double)(a->E + a->Ev + 1);
    int64_t items = use_avx512(a) ? tj_k_attention_items_f32_avx512(a) : items_of(a);
    int nt = work < 65536 ? 1 : a->nthreads;
    if (nt > items) nt = (int)items;
    return nt < 1 ? 1 : nt;
}

/* max that lets a nan through (and keeps it) */
#define NAN_MAX(a, b) ((b) > (a) || (b) != (b) ? (b) : (a))

/* One (batch item, query block): scores of the key blocks, masked, folded
 * into the running maximum m, sum l and output accumulator acc. */
#define DEFINE_BLOCK(T, SUF, EXP)                                                                             \
    static void block_##SUF(const tj_k_attention *a, int64_t b, int64_t i0, int64_t nq, int64_t bq,           \
                            int64_t bk, T *scratch)                                                           \
    {                                                                                                         \
        T *scores = scratch, *acc = scores + bq * bk, *m = acc + bq * a->Ev, *l = m + bq;                     \
        int64_t Ev = a->Ev, s_end = a->causal && i0 + nq < a->S ? i0 + nq : a->S;                             \
        const T *q = (const T *)a->q.p + a->q.off[b], *k = (const T *)a->k.p + a->k.off[b];                   \
        const T *v = (const T *)a->v.p + a->v.off[b];                                                         \
        const char *mask = a->mask.p ? (const char *)a->mask.p : NULL;                                        \
        int64_t mes = a->mask_is_bool ? 1 : (int64_t)sizeof(T), moff = a->mask.p ? a->mask.off[b] : 0;        \
        memset(acc, 0, sizeof(T) * (size_t)(nq * Ev));                                                        \
        for (int64_t r = 0; r < nq; r++) m[r] = -INFINITY, l[r] = 0;                                          \
        for (int64_t j0 = 0; j0 < s_end; j0 += bk) {                                                          \
            int64_t nk = s_end - j0 < bk ? s_end - j0 : bk;                                                   \
            tj_k_gemm(a->dtype, 1, nq, nk, a->E, a->scale,                                                    \
                      (tj_k_mat){q + i0 * a->q.rs, a->q.rs, a->q.cs}, 0,                                      \
                      (tj_k_mat){k + j0 * a->k.rs, a->k.cs, a->k.rs}, 0, 0.0, scores, 0, nk, 1, NULL);        \
            for (int64_t r = 0; r < nq; r++) {                                                                \
                int64_t i = i0 + r;                                                                           \
                T *s = scores + r * nk, bm = -INFINITY;                                                       \
                for (int64_t c = 0; c < nk; c++) {                                                            \
                    int64_t j = j0 + c;                                                                       \
                    if (mask) {                                                                               \
                        const char *mp = mask + (moff + i * a->mask.rs + j * a->mask.cs) * mes;               \
                        if (a->mask_is_bool) s[c] = (*mp != 0) != a->mask_drops ? s[c] : -INFINITY;          \
                        else s[c] += *(const T *)(const void *)mp;                                            \
                    }                                                                                         \
                    if (a->causal && j > i) s[c] = -INFINITY;                                                 \
                    bm = NAN_MAX(bm, s[c]);                                                                   \
                }                                                                                             \
                T mnew = NAN_MAX(m[r], bm);                                                                   \
                if (mnew == -INFINITY) { /* every key so far masked */                                        \
                    memset(s, 0, sizeof(T) * (size_t)nk);                                                     \
                    continue;                                                                                 \
                }                                                                                             \
                for (int64_t c = 0; c < nk; c++) s[c] -= mnew;                                                \
                EXP(s, nk);                                                                                   \
                T sum = 0, corr = (T)exp((double)(m[r] - mnew));                                              \
                for (int64_t c = 0; c < nk; c++) sum += s[c];                                                 \
                l[r] = l[r] * corr + sum;                                                                     \
                if (corr != 1)                                                                                \
                    for (int64_t e = 0; e < Ev; e++) acc[r * Ev + e] *= corr;                                 \
                m[r] = mnew;                                                                                  \
            }                                                                                                 \
            tj_k_gemm(a->dtype, 1, nq, Ev, nk, 1.0, (tj_k_mat){scores, nk, 1}, 0,                             \
                      (tj_k_mat){v + j0 * a->v.rs, a->v.rs, a->v.cs}, 0, 1.0, acc, 0, Ev, 1, NULL);           \
        }                                                                                                     \
        T *out = (T *)a->out + (b * a->L + i0) * Ev;                                                          \
        for (int64_t r = 0; r < nq; r++)                                                                      \
            for (int64_t e = 0; e < Ev; e++)                                                                  \
                out[r * Ev + e] = l[r] != 0 ? acc[r * Ev + e] / l[r] : a->masked_rows_nan ? (T)NAN : 0;       \
    }

static void exp_f64(double *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) x[i] = exp(x[i]);
}
DEFINE_BLOCK(float, f32, tj_k_exp_f32)
DEFINE_BLOCK(double, f64, exp_f64)

/* The generic path's work, for query_blocks: items are (batch item, block
 * of bq queries); each thread t has per_thread elements of scratch. */
typedef struct run_args {
    const tj_k_attention *a;
    void *scratch;
    size_t per_thread;
    int64_t bq, bk, qblocks;
} run_args;

/* Items [i0, i1) on thread t. */
static void query_blocks(void *ctx, int t, int64_t i0, int64_t i1)
{
    const run_args *r = ctx;
    const tj_k_attention *a = r->a;
    size_t off = (size_t)t * r->per_thread;
    for (int64_t it = i0; it < i1; it++) {
        int64_t b = it / r->qblocks, i0q = (it % r->qblocks) * r->bq, nq = a->L - i0q < r->bq ? a->L - i0q : r->bq;
        if (a->dtype == TJ_FLOAT32) block_f32(a, b, i0q, nq, r->bq, r->bk, (float *)r->scratch + off);
        else block_f64(a, b, i0q, nq, r->bq, r->bk, (double *)r->scratch + off);
    }
}

void tj_k_attention_run(const tj_k_attention *a, void *scratch)
{
    if (a->batch == 0 || a->L == 0 || a->Ev == 0) return;
    if (use_avx512(a)) {
        tj_k_attention_run_f32_avx512(a, tj_k_attention_threads(a), scratch);
        return;
    }
    int64_t bq, bk;
    block_sizes(a, &bq, &bk);
    int64_t qblocks = (a->L + bq - 1) / bq;
    run_args r = {a, scratch, tj_k_attention_scratch(a), bq, bk, qblocks};
    tj_k_parallel(tj_k_attention_threads(a), a->batch * qblocks, query_blocks, &r);
}
