/* cumsum and cumprod along one dim (see scan.h). A row scan (inner == 1) is
 * one serial chain of additions (multiplications); with inner > 1 a block of
 * up to BLOCK columns is carried down the dim in a stack accumulator, so the
 * operations of one step are independent and vectorise (float32 widened to
 * float64 and back). */
#include "scan.h"

#include "parallel.h"

#define BLOCK 256 /* columns per accumulator block (2 KiB of float64) */

typedef struct scan_args {
    void *out;
    const void *in;
    int64_t n, inner, nblocks; /* nblocks: column blocks per outer index */
} scan_args;

/* ACC: the accumulator type; int64 works in uint64 (wrapping, no UB). OP:
 * += or *=, from ID (its identity). */
#define SCAN_FNS(T, ACC, SUF, OP, ID)                                                                  \
    static void scan_rows_##SUF(void *ctx, int t, int64_t begin, int64_t end)                          \
    {                                                                                                  \
        const scan_args *a = ctx;                                                                      \
        (void)t;                                                                                       \
        for (int64_t r = begin; r < end; r++) {                                                        \
            const T *x = (const T *)a->in + r * a->n;                                                  \
            T *y = (T *)a->out + r * a->n;                                                             \
            ACC acc = (ID);                                                                            \
            for (int64_t i = 0; i < a->n; i++) {                                                       \
                acc OP(ACC) x[i];                                                                      \
                y[i] = (T)acc;                                                                         \
            }                                                                                          \
        }                                                                                              \
    }                                                                                                  \
    static void scan_cols_##SUF(void *ctx, int t, int64_t begin, int64_t end)                          \
    {                                                                                                  \
        const scan_args *a = ctx;                                                                      \
        (void)t;                                                                                       \
        ACC acc[BLOCK];                                                                                \
        for (int64_t u = begin; u < end; u++) {                                                        \
            int64_t o = u / a->nblocks, c0 = u % a->nblocks * BLOCK;                                   \
            int64_t w = a->inner - c0 < BLOCK ? a->inner - c0 : BLOCK;                                 \
            const T *x = (const T *)a->in + o * a->n * a->inner + c0;                                  \
            T *y = (T *)a->out + o * a->n * a->inner + c0;                                             \
            for (int64_t c = 0; c < w; c++) acc[c] = (ID);                                             \
            for (int64_t i = 0; i < a->n; i++, x += a->inner, y += a->inner)                           \
                for (int64_t c = 0; c < w; c++) {                                                      \
                    acc[c] OP(ACC) x[c];                                                               \
                    y[c] = (T)acc[c];                                                                  \
                }                                                                                      \
        }                                                                                              \
    }
SCAN_FNS(float, double, f32, +=, 0)
SCAN_FNS(double, double, f64, +=, 0)
SCAN_FNS(int64_t, uint64_t, i64, +=, 0)
SCAN_FNS(float, double, prod_f32, *=, 1)
SCAN_FNS(double, double, prod_f64, *=, 1)
SCAN_FNS(int64_t, uint64_t, prod_i64, *=, 1)
#undef SCAN_FNS

/* [product][dtype][rows]: the loop of each scan, dtype 0 float32, 1 float64,
 * 2 int64 */
static const tj_k_block_fn scan_fns[2][3][2] = {
    {{scan_cols_f32, scan_rows_f32}, {scan_cols_f64, scan_rows_f64}, {scan_cols_i64, scan_rows_i64}},
    {{scan_cols_prod_f32, scan_rows_prod_f32}, {scan_cols_prod_f64, scan_rows_prod_f64},
     {scan_cols_prod_i64, scan_rows_prod_i64}},
};

static void scan(bool product, tj_dtype dtype, void *out, const void *in, int64_t outer, int64_t n, int64_t inner,
                 int nthreads)
{
    if (outer == 0 || n == 0 || inner == 0) return;
    scan_args a = {out, in, n, inner, (inner + BLOCK - 1) / BLOCK};
    bool rows = inner == 1;
    int64_t units = rows ? outer : outer * a.nblocks;
    if (units < nthreads) nthreads = (int)units;
    int d = dtype == TJ_FLOAT32 ? 0 : dtype == TJ_FLOAT64 ? 1 : 2;
    tj_k_parallel(nthreads, units, scan_fns[product][d][rows], &a);
}

void tj_k_cumsum(tj_dtype dtype, void *out, const void *in, int64_t outer, int64_t n, int64_t inner, int nthreads)
{
    scan(false, dtype, out, in, outer, n, inner, nthreads);
}

void tj_k_cumprod(tj_dtype dtype, void *out, const void *in, int64_t outer, int64_t n, int64_t inner, int nthreads)
{
    scan(true, dtype, out, in, outer, n, inner, nthreads);
}
