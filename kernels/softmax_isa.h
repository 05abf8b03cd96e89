/* float32 softmax pieces, written once over simd_rows.h and compiled per
 * ISA by softmax_avx512.c / softmax_avx2.c. */
#include <stdbool.h>

#include "exp_isa.h"
#include "simd_rows.h"
#include "softmax.h"

/* Rows are swept in blocks of four vectors (four 64-byte lines on AVX-512,
 * two on AVX2); a line holds 16 floats. */
#define BLOCK (4 * VF_N)
#define LINE_FLOATS 16

/* Pass 1 of a row: its maximum in four vector accumulators, in one fixed
 * order (row_max makes the whole pass; the pipelined loop below the same
 * steps interleaved with the previous row's pass 2, bit-identical). The
 * accumulator is maxps's first operand, so a nan entry is skipped here
 * (the sum, which sees it, becomes nan). */
typedef struct max_acc {
    vf m[4];
} max_acc;

static inline max_acc max_start(void)
{
    vf m = vf_set1(-INFINITY);
    return (max_acc){{m, m, m, m}};
}

/* Elements [i, i + BLOCK). */
static inline void max_add_block(max_acc *a, const float *x, int64_t i)
{
    for (int k = 0; k < 4; k++) a->m[k] = vf_max(a->m[k], vf_load(x + i + k * VF_N));
}

/* Elements [i, n) (fewer than BLOCK; masked lanes load -inf), then the
 * row's maximum. */
static inline float max_finish(max_acc *a, const float *x, int64_t i, int64_t n)
{
    for (; i + VF_N <= n; i += VF_N) a->m[0] = vf_max(a->m[0], vf_load(x + i));
    if (i < n) a->m[1] = vf_max(a->m[1], vf_load_part(x + i, (int)(n - i), -INFINITY));
    return vf_hmax(vf_max(vf_max(a->m[0], a->m[1]), vf_max(a->m[2], a->m[3])));
}

static inline float row_max(const float *x, int64_t n)
{
    max_acc a = max_start();
    int64_t i = 0;
    for (; i + BLOCK <= n; i += BLOCK) max_add_block(&a, x, i);
    return max_finish(&a, x, i, n);
}

/* Pass 2 of a row: e = exp(x - max), stored to y for softmax (not for
 * log-softmax), and summed in two vector accumulators taking alternate
 * vectors, in one fixed order. */
typedef struct exp_acc {
    vf max, s[2];
} exp_acc;

static inline exp_acc exp_start(float max)
{
    vf z = vf_set1(0.0f);
    return (exp_acc){vf_set1(max), {z, z}};
}

/* Elements [i, i + k VF_N) for k = 2 or 4: their exps together
 * (exp_nonpositive_k), then stored and summed (vector j into s[j % 2]). */
static inline __attribute__((always_inline)) void exp_add(exp_acc *a, const float *x, float *y, int64_t i, int k,
                                                          bool store)
{
    vf e[4];
    for (int j = 0; j < k; j++) e[j] = vf_sub(vf_load(x + i + j * VF_N), a->max);
    exp_nonpositive_k(e, k);
    for (int j = 0; j < k; j++) {
        if (store) vf_store(y + i + j * VF_N, e[j]);
        a->s[j % 2] = vf_add(a->s[j % 2], e[j]);
    }
}

/* Elements [i, n) (i a multiple of 2 VF_N), then the row's sum. Masked
 * lanes load -inf and contribute exp(-inf) = 0. */
static inline float exp_finish(exp_acc *a, const float *x, float *y, int64_t i, int64_t n, bool store)
{
    for (; i + 2 * VF_N <= n; i += 2 * VF_N) exp_add(a, x, y, i, 2, store);
    for (; i < n; i += VF_N) {
        int part = n - i < VF_N ? (int)(n - i) : VF_N;
        vf e = exp_nonpositive(vf_sub(vf_load_part(x + i, part, -INFINITY), a->max));
        if (store) vf_store_part(y + i, e, part);
        a->s[0] = vf_add(a->s[0], e);
    }
    return vf_hsum(vf_add(a->s[0], a->s[1]));
}

/* Pass 3 of a row, from its maximum and sum: y = e / sum, as e times
 * 1 / sum (softmax); y = (x - max) - log(sum) (log-softmax: an exact first
 * step, so entries near the maximum keep their precision). */
typedef struct out_params {
    vf max, scale; /* scale: 1 / sum, or log(sum) */
} out_params;

static inline out_params out_start(bool take_log, float max, float sum)
{
    return (out_params){vf_set1(max), vf_set1(take_log ? logf(sum) : 1.0f / sum)};
}

/* y[i, i + part) (part <= VF_N; masked under VF_N). */
static inline void out_vec(const out_params *p, bool take_log, const float *x, float *y, int64_t i, int part)
{
    bool full = part == VF_N;
    vf v = take_log ? vf_sub(vf_sub(full ? vf_load(x + i) : vf_load_part(x + i, part, 0.0f), p->max), p->scale)
                       : vf_mul(full ? vf_load(y + i) : vf_load_part(y + i, part, 0.0f), p->scale);
    if (full) vf_store(y + i, v);
    else vf_store_part(y + i, v, part);
}

/* Elements [i, n). */
static inline void out_finish(const out_params *p, bool take_log, const float *x, float *y, int64_t i, int64_t n)
{
    for (; i < n; i += VF_N) out_vec(p, take_log, x, y, i, n - i < VF_N ? (int)(n - i) : VF_N);
}

/* The lines of floats [i, i + BLOCK) from p towards L1; none for NULL.
 * Always inlined: GCC 12 takes a function that only prefetches for one
 * without side effects, and deletes its calls. */
static inline __attribute__((always_inline)) void prefetch_block(const float *p, int64_t i)
{
    if (!p) return;
    for (int k = 0; k < BLOCK; k += LINE_FLOATS) _mm_prefetch((const char *)(p + i + k), _MM_HINT_T0);
}

/* Rows in three passes each (see above), software-pipelined: one loop
 * makes pass 2 of row r, pass 1 of row r + 1 and pass 3 of row r - 1, so
 * the exps' arithmetic overlaps the next row's loads and the previous
 * row's stores instead of alternating with them, and no pass waits for
 * the reduction that ends the one before. Meanwhile the lines of x two
 * rows ahead are prefetched, and those of y one row ahead: pass 2 stores
 * to y, and a store to a line not in cache stalls on its fetch (prefetches
 * stay within the rows: another thread may own what follows). Every row
 * gets the bits it gets alone. */
static inline __attribute__((always_inline)) void rows_pipelined(const float *x, int64_t xs, float *y, int64_t rows,
                                                                  int64_t n, bool take_log)
{
    float max = row_max(x, n);
    out_params prev = {0};
    for (int64_t r = 0; r < rows; r++) {
        bool next = r + 1 < rows;
        const float *xr = x + r * xs, *xn = next ? xr + xs : NULL, *xp = r > 0 ? xr - xs : NULL;
        float *yr = y + r * n, *yp = r > 0 ? yr - n : NULL;
        const float *pfx = r + 2 < rows ? xr + 2 * xs : NULL, *pfy = next ? yr + n : NULL;
        max_acc m = max_start();
        exp_acc e = exp_start(max);
        int64_t i = 0;
        for (; i + BLOCK <= n; i += BLOCK) {
            prefetch_block(pfx, i);
            prefetch_block(pfy, i);
            if (next) max_add_block(&m, xn, i);
            exp_add(&e, xr, yr, i, 4, !take_log);
            if (r > 0)
                for (int k = 0; k < 4; k++) out_vec(&prev, take_log, xp, yp, i + k * VF_N, VF_N);
        }
        if (r > 0) out_finish(&prev, take_log, xp, yp, i, n);
        prev = out_start(take_log, max, exp_finish(&e, xr, yr, i, n, !take_log));
        if (next) max = max_finish(&m, xn, i, n);
    }
    out_finish(&prev, take_log, x + (rows - 1) * xs, y + (rows - 1) * n, 0, n);
}

/* (rows_pipelined compiled once per take_log: no test of it in the loop) */
void TJ_ISA(tj_k_softmax_rows_f32)(const float *x, int64_t xs, float *y, int64_t rows, int64_t n, bool take_log)
{
    if (rows <= 0 || n <= 0) return;
    if (take_log) rows_pipelined(x, xs, y, rows, n, true);
    else rows_pipelined(x, xs, y, rows, n, false);
}

void TJ_ISA(tj_k_exp_f32)(float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + VF_N <= n; i += VF_N) vf_store(x + i, vf_exp(vf_load(x + i)));
    if (i < n) vf_store_part(x + i, vf_exp(vf_load_part(x + i, (int)(n - i), 0.0f)), (int)(n - i));
}
