/* cummax, cummin and logcumsumexp along one dim (see cumulative.h). Work
 * units are [outer index, block of up to BLOCK columns]: a row scan
 * (inner == 1) is one serial chain, with inner > 1 the BLOCK columns of a
 * block are carried down the dim together, so each step's operations are
 * independent and the loads contiguous. */
#include "cumulative.h"

#include <math.h>

#include "parallel.h"

#define BLOCK 256

typedef struct cum_args {
    const void *in;
    void *out;
    int64_t *indices;
    int64_t n, inner, nblocks;
} cum_args;

/* the column block of unit u: its first element's offset and its width */
static inline int64_t unit_start(const cum_args *a, int64_t u, int64_t *w)
{
    int64_t o = u / a->nblocks, c0 = u % a->nblocks * BLOCK;
    *w = a->inner - c0 < BLOCK ? a->inner - c0 : BLOCK;
    return o * a->n * a->inner + c0;
}

/* ATen's test: isnan(x) || (!isnan(cur) && x >= cur) (<= for cummin);
 * integers and bools are never nan (x != x is false) */
#define SELECT_FN(T, SUF, CMP)                                                                         \
    static void select_##SUF(void *ctx, int t, int64_t begin, int64_t end)                           \
    {                                                                                                \
        const cum_args *a = ctx;                                                                     \
        T cur[BLOCK];                                                                                \
        int64_t pos[BLOCK];                                                                          \
        (void)t;                                                                                     \
        for (int64_t u = begin; u < end; u++) {                                                      \
            int64_t w, at = unit_start(a, u, &w);                                                    \
            const T *x = (const T *)a->in + at;                                                      \
            T *y = (T *)a->out + at;                                                                 \
            int64_t *ix = a->indices + at;                                                           \
            for (int64_t c = 0; c < w; c++) cur[c] = x[c], pos[c] = 0;                               \
            for (int64_t i = 0; i < a->n; i++, x += a->inner, y += a->inner, ix += a->inner)         \
                for (int64_t c = 0; c < w; c++) {                                                    \
                    T v = x[c];                                                                      \
                    bool take = v != v || (cur[c] == cur[c] && v CMP cur[c]);                        \
                    cur[c] = take ? v : cur[c];                                                      \
                    pos[c] = take ? i : pos[c];                                                      \
                    y[c] = cur[c];                                                                   \
                    ix[c] = pos[c];                                                                  \
                }                                                                                    \
        }                                                                                            \
    }
SELECT_FN(float, max_f32, >=)
SELECT_FN(double, max_f64, >=)
SELECT_FN(int64_t, max_i64, >=)
SELECT_FN(uint8_t, max_b8, >=)
SELECT_FN(float, min_f32, <=)
SELECT_FN(double, min_f64, <=)
SELECT_FN(int64_t, min_i64, <=)
SELECT_FN(uint8_t, min_b8, <=)
#undef SELECT_FN

/* _log_add_exp_helper(acc, x): min / max taking y's nan, log1p(exp(min -
 * max)) + max unless both are the same infinity (then acc) */
#define LCSE_FN(T, SUF, EXP, LOG1P)                                                                    \
    static inline T log_add_exp_##SUF(T acc, T x)                                                    \
    {                                                                                                \
        T lo = x != x ? x : (x < acc ? x : acc), hi = x != x ? x : (acc < x ? x : acc);              \
        if (lo != hi || isfinite(lo)) return LOG1P(EXP(lo - hi)) + hi;                               \
        return acc;                                                                                  \
    }                                                                                                \
    static void lcse_##SUF(void *ctx, int t, int64_t begin, int64_t end)                             \
    {                                                                                                \
        const cum_args *a = ctx;                                                                     \
        T acc[BLOCK];                                                                                \
        (void)t;                                                                                     \
        for (int64_t u = begin; u < end; u++) {                                                      \
            int64_t w, at = unit_start(a, u, &w);                                                    \
            const T *x = (const T *)a->in + at;                                                      \
            T *y = (T *)a->out + at;                                                                 \
            for (int64_t c = 0; c < w; c++) acc[c] = -(T)INFINITY;                                   \
            for (int64_t i = 0; i < a->n; i++, x += a->inner, y += a->inner)                         \
                for (int64_t c = 0; c < w; c++) {                                                    \
                    acc[c] = log_add_exp_##SUF(acc[c], x[c]);                                        \
                    y[c] = acc[c];                                                                   \
                }                                                                                    \
        }                                                                                            \
    }
LCSE_FN(float, f32, expf, log1pf)
LCSE_FN(double, f64, exp, log1p)
#undef LCSE_FN

static void run(tj_k_block_fn fn, cum_args *a, int64_t outer, int nthreads)
{
    if (outer == 0 || a->n == 0 || a->inner == 0) return;
    a->nblocks = (a->inner + BLOCK - 1) / BLOCK;
    int64_t units = outer * a->nblocks;
    if (units < nthreads) nthreads = (int)units;
    tj_k_parallel(nthreads, units, fn, a);
}

void tj_k_cummax_cummin(tj_dtype dtype, bool want_max, const void *in, void *values, int64_t *indices, int64_t outer,
                        int64_t n, int64_t inner, int nthreads)
{
    static const tj_k_block_fn fns[2][4] = {{select_min_f32, select_min_f64, select_min_i64, select_min_b8},
                                            {select_max_f32, select_max_f64, select_max_i64, select_max_b8}};
    int d = dtype == TJ_FLOAT32 ? 0 : dtype == TJ_FLOAT64 ? 1 : dtype == TJ_INT64 ? 2 : 3;
    cum_args a = {.in = in, .out = values, .indices = indices, .n = n, .inner = inner};
    run(fns[want_max][d], &a, outer, nthreads);
}

void tj_k_logcumsumexp(tj_dtype dtype, const void *in, void *out, int64_t outer, int64_t n, int64_t inner,
                       int nthreads)
{
    cum_args a = {.in = in, .out = out, .n = n, .inner = inner};
    run(dtype == TJ_FLOAT32 ? lcse_f32 : lcse_f64, &a, outer, nthreads);
}
