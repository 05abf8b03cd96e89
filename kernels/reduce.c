/* Reduction driver and loops (see reduce.h).
 *
 * The loops come in two shapes per (kind, input dtype): `fold` folds a
 * strided run of one output's reduced elements into its accumulator, with
 * independent partial results (lanes) on contiguous runs so that the
 * compiler vectorises them without reassociating; `row` folds rows of a
 * block of outputs whose kept dim is contiguous into their accumulators,
 * vectorised across the outputs. An instruction set's loops (reduce_isa.h)
 * give the generic ones' results bit for bit; `folds` folds one run of
 * several outputs at once. */
#include <math.h>
#include <string.h>

#include "cpu_isa.h"
#include "parallel.h"
#include "reduce.h"
#include "reduce_isa.h"

#define LANES 8
#define CHUNK 16384 /* reduced elements folded into one partial result */
#define JB 2048     /* outputs per block in the row strategy, at most */
#define JB_MIN 64   /* ... and at least, when narrower blocks avoid partial results */
#define MAX_ROW_CHUNKS 16 /* bounds the scratch of partial results in the row strategy */
#define OB 64 /* outputs per block in the outputs strategy */
#define RUNS_AT_ONCE 4 /* ... and at least (as many as there are): the runs loop folds four at once */
#define NKINDS (TJ_K_RED_ANY + 1)
_Static_assert(TJ_K_REDUCE_ROW_MAX <= CHUNK, "tj_k_reduce_rows: a row is one part");

/* Accumulator of one output. */
typedef struct acc {
    double f;    /* float sums and extrema */
    int64_t i;   /* integer sums (wrapping) and extrema */
    int64_t idx; /* ARGMAX, ARGMIN: flat index over the reduced dims */
} acc;

/* Accumulators of a block of outputs, one array per field. */
typedef struct acc_rows {
    double *f;
    int64_t *i;
    int64_t *idx;
} acc_rows;

/* x: first element of the run; n elements `s` apart; `base`: flat reduced
 * index of the first one; q: the output's param. */
typedef void (*fold_fn)(const char *x, int64_t n, int64_t s, int64_t base, double q, acc *a);
/* x: nrows rows, rs elements apart, of m contiguous elements (one per output
 * of the block); r: flat reduced index of the first row; p: the block's
 * params (NULL when the kind has none). */
typedef void (*row_fn)(const char *x, int64_t nrows, int64_t rs, int64_t m, int64_t r, const double *p,
                       const acc_rows *a);

/* Folds, for each output t < on, the run at x + off[t] bytes (the same n,
 * s and base for all) into a[t] with param q[t], as fold would one by one. */
typedef void (*folds_fn)(const char *x, const int64_t *off, int64_t on, int64_t n, int64_t s, int64_t base,
                         const double *q, acc *a);

typedef struct loops {
    fold_fn fold;
    row_fn row;
    folds_fn folds; /* NULL: fold one output at a time */
} loops;

/* ---- the row loop: runs STMT with the element `e` (type T) of output j in
 * row rr, for rows x + k * rs (k < nrows, rr = r + k) of m contiguous
 * elements. Four rows per pass over the outputs, so that each accumulator is
 * loaded and stored once per four rows; the updates stay in row order. ---- */
#define ROW_STEP(T, X, RR, STMT)                                                                 \
    {                                                                                            \
        T e = (X);                                                                               \
        int64_t rr = (RR);                                                                       \
        (void)rr;                                                                                \
        STMT;                                                                                    \
    }
#define ROW_FN(NAME, T, STMT)                                                                    \
    static void NAME##_row(const char *xp, int64_t nrows, int64_t rs, int64_t m, int64_t r,      \
                           const double *p, const acc_rows *a)                                   \
    {                                                                                            \
        const T *x = (const T *)xp;                                                              \
        int64_t k = 0;                                                                           \
        for (; k + 4 <= nrows; k += 4) {                                                         \
            const T *x0 = x + k * rs, *x1 = x0 + rs, *x2 = x1 + rs, *x3 = x2 + rs;               \
            for (int64_t j = 0; j < m; j++) {                                                    \
                ROW_STEP(T, x0[j], r + k, STMT)                                                  \
                ROW_STEP(T, x1[j], r + k + 1, STMT)                                              \
                ROW_STEP(T, x2[j], r + k + 2, STMT)                                              \
                ROW_STEP(T, x3[j], r + k + 3, STMT)                                              \
            }                                                                                    \
        }                                                                                        \
        for (; k < nrows; k++) {                                                                 \
            const T *x0 = x + k * rs;                                                            \
            for (int64_t j = 0; j < m; j++) ROW_STEP(T, x0[j], r + k, STMT)                      \
        }                                                                                        \
    }

/* ---- float-valued folds of EXPR, a function of v (the element as double)
 * and q (the output's param; QROW reads it for output j in a row), with OP
 * (+= for sums, *= for products) from ID (its identity) ---- */
#define DEF_FFOLD(NAME, T, OP, ID, EXPR, QROW)                                                   \
    static void NAME##_fold(const char *xp, int64_t n, int64_t s, int64_t base, double q, acc *a) \
    {                                                                                            \
        const T *x = (const T *)xp;                                                              \
        double l[LANES];                                                                         \
        for (int k = 0; k < LANES; k++) l[k] = (ID);                                             \
        int64_t i = 0;                                                                           \
        if (s == 1)                                                                              \
            for (; i + LANES <= n; i += LANES)                                                   \
                for (int k = 0; k < LANES; k++) {                                                \
                    double v = (double)x[i + k];                                                 \
                    l[k] OP(EXPR);                                                               \
                }                                                                                \
        for (; i < n; i++) {                                                                     \
            double v = (double)x[i * s];                                                         \
            l[0] OP(EXPR);                                                                       \
        }                                                                                        \
        for (int w = LANES / 2; w > 0; w /= 2)                                                   \
            for (int k = 0; k < w; k++) l[k] OP l[k + w];                                        \
        a->f OP l[0];                                                                            \
    }                                                                                            \
    ROW_FN(NAME, T, double *restrict o = a->f; double v = (double)e; double q = (QROW); (void)q; \
           o[j] OP(EXPR))
#define DEF_FSUM(NAME, T, EXPR, QROW) DEF_FFOLD(NAME, T, +=, 0.0, EXPR, QROW)

DEF_FSUM(sum_f32, float, v, 0.0)
DEF_FSUM(sum_f64, double, v, 0.0)
DEF_FSUM(sum_i64, int64_t, v, 0.0)
DEF_FSUM(sum_u8, uint8_t, v, 0.0)
DEF_FSUM(sqdev_f32, float, (v - q) * (v - q), p[j])
DEF_FSUM(sqdev_f64, double, (v - q) * (v - q), p[j])
DEF_FSUM(sumexp_f32, float, exp(v - q), p[j])
DEF_FSUM(sumexp_f64, double, exp(v - q), p[j])

/* products of float32, float64, and of int64 / bool for a float result */
DEF_FFOLD(prod_f32, float, *=, 1.0, v, 0.0)
DEF_FFOLD(prod_f64, double, *=, 1.0, v, 0.0)
DEF_FFOLD(prod_i64, int64_t, *=, 1.0, v, 0.0)
DEF_FFOLD(prod_u8, uint8_t, *=, 1.0, v, 0.0)

/* ---- integer sums (OP +=, ID 0) and products (*=, 1), wrapping like int64
 * arithmetic in PyTorch ---- */
#define DEF_IFOLD(NAME, T, OP, ID)                                                               \
    static void NAME##_fold(const char *xp, int64_t n, int64_t s, int64_t base, double q, acc *a) \
    {                                                                                            \
        const T *x = (const T *)xp;                                                              \
        uint64_t l[LANES];                                                                       \
        for (int k = 0; k < LANES; k++) l[k] = (ID);                                             \
        int64_t i = 0;                                                                           \
        if (s == 1)                                                                              \
            for (; i + LANES <= n; i += LANES)                                                   \
                for (int k = 0; k < LANES; k++) l[k] OP(uint64_t) x[i + k];                      \
        for (; i < n; i++) l[0] OP(uint64_t) x[i * s];                                           \
        for (int k = 1; k < LANES; k++) l[0] OP l[k];                                            \
        uint64_t r = (uint64_t)a->i;                                                             \
        r OP l[0];                                                                               \
        a->i = (int64_t)r;                                                                       \
    }                                                                                            \
    ROW_FN(NAME, T, uint64_t *restrict o = (uint64_t *)a->i; o[j] OP(uint64_t) e)
#define DEF_ISUM(NAME, T) DEF_IFOLD(NAME, T, +=, 0)

DEF_ISUM(isum_i64, int64_t)
DEF_ISUM(isum_u8, uint8_t)
DEF_IFOLD(iprod_i64, int64_t, *=, 1)
DEF_IFOLD(iprod_u8, uint8_t, *=, 1)

/* ---- all / any: whether some element is a hit (HIT of v: v == 0 for ALL,
 * v != 0 for ANY, so nan is a hit for ANY only), into the accumulator's
 * integer field; ALL's result is its negation. Contiguous runs are scanned
 * in blocks that the compiler vectorises, and a run stops at the block of
 * its first hit. ---- */
#define FLAG_BLOCK 64

#define DEF_FLAG(NAME, T, HIT)                                                                   \
    static void NAME##_fold(const char *xp, int64_t n, int64_t s, int64_t base, double q, acc *a) \
    {                                                                                            \
        const T *x = (const T *)xp;                                                              \
        int64_t i = 0;                                                                           \
        if (a->i) return;                                                                        \
        if (s == 1)                                                                              \
            for (; i + FLAG_BLOCK <= n; i += FLAG_BLOCK) {                                       \
                int h = 0;                                                                       \
                for (int k = 0; k < FLAG_BLOCK; k++) {                                           \
                    T v = x[i + k];                                                              \
                    h |= (HIT);                                                                  \
                }                                                                                \
                if (h) {                                                                         \
                    a->i = 1;                                                                    \
                    return;                                                                      \
                }                                                                                \
            }                                                                                    \
        for (; i < n; i++) {                                                                     \
            T v = x[i * s];                                                                      \
            if (HIT) {                                                                           \
                a->i = 1;                                                                        \
                return;                                                                          \
            }                                                                                    \
        }                                                                                        \
    }                                                                                            \
    ROW_FN(NAME, T, int64_t *restrict o = a->i; T v = e; o[j] |= (HIT))

DEF_FLAG(all_f32, float, v == 0)
DEF_FLAG(all_f64, double, v == 0)
DEF_FLAG(all_i64, int64_t, v == 0)
DEF_FLAG(all_u8, uint8_t, v == 0)
DEF_FLAG(any_f32, float, v != 0)
DEF_FLAG(any_f64, double, v != 0)
DEF_FLAG(any_i64, int64_t, v != 0)
DEF_FLAG(any_u8, uint8_t, v != 0)

/* ---- extrema. The scan of a run keeps SCAN_LANES partial extrema and nan
 * flags, written so that the compiler vectorises it (maxps/minps): nans are
 * tracked apart and win outright. MT is an integer type of T's size (the
 * flags); NANV is T's nan (0 for integers, which have none). ---- */
#define SCAN_LANES 32

#define DEF_SCAN(NAME, T, MT, OP, INIT, NANV)                                                    \
    static T NAME##_scan(const T *x, int64_t n, int64_t s)                                       \
    {                                                                                            \
        T best = (INIT);                                                                         \
        MT nan = 0;                                                                              \
        int64_t i = 0;                                                                           \
        if (s == 1 && n >= SCAN_LANES) {                                                         \
            T l[SCAN_LANES];                                                                     \
            MT nl[SCAN_LANES];                                                                   \
            for (int k = 0; k < SCAN_LANES; k++) {                                               \
                l[k] = best;                                                                     \
                nl[k] = 0;                                                                       \
            }                                                                                    \
            for (; i + SCAN_LANES <= n; i += SCAN_LANES)                                         \
                for (int k = 0; k < SCAN_LANES; k++) {                                           \
                    T v = x[i + k];                                                              \
                    l[k] = v OP l[k] ? v : l[k];                                                 \
                    nl[k] |= v != v;                                                             \
                }                                                                                \
            for (int k = 0; k < SCAN_LANES; k++) {                                               \
                best = l[k] OP best ? l[k] : best;                                               \
                nan |= nl[k];                                                                    \
            }                                                                                    \
        }                                                                                        \
        for (; i < n; i++) {                                                                     \
            T v = x[i * s];                                                                      \
            best = v OP best ? v : best;                                                         \
            nan |= v != v;                                                                       \
        }                                                                                        \
        return nan ? (NANV) : best;                                                              \
    }

/* `v OP c | v != v` takes v when it is better or nan, so a nan sticks once
 * taken (nothing compares better than nan). FLD is the accumulator field: f
 * for float inputs, i for integer ones. */
#define BETTER(OP, v, c) (((v)OP(c)) | ((v) != (v)))

/* SCAN: the function scanning a run (NAME##_scan, or a vectorised one). */
#define DEF_EXT_FOLD(NAME, T, FLD, OP, SCAN)                                                     \
    static void NAME##_fold(const char *xp, int64_t n, int64_t s, int64_t base, double q, acc *a) \
    {                                                                                            \
        T m = SCAN((const T *)xp, n, s);                                                         \
        if (n > 0 && BETTER(OP, m, a->FLD)) a->FLD = m;                                          \
    }
#define DEF_EXT(NAME, T, FLD, OP)                                                                \
    DEF_EXT_FOLD(NAME, T, FLD, OP, NAME##_scan)                                                  \
    ROW_FN(NAME, T, __typeof__(a->FLD[0]) *restrict o = a->FLD; o[j] = BETTER(OP, e, o[j]) ? e : o[j])

/* ARGMAX / ARGMIN: the run's extreme first (vectorised), then, only when it
 * beats the accumulator, the first position holding it. A tie keeps the
 * earlier index; a nan beats everything but an earlier nan. OP is > for
 * ARGMAX, < for ARGMIN. */
#define ARG_BETTER(OP, v, c) (((v)OP(c)) | (((v) != (v)) & ((c) == (c))))

#define DEF_ARG_FOLD(NAME, T, FLD, OP, SCAN)                                                      \
    static void NAME##_fold(const char *xp, int64_t n, int64_t s, int64_t base, double q, acc *a) \
    {                                                                                            \
        const T *x = (const T *)xp;                                                              \
        T m = SCAN(x, n, s);                                                                     \
        if (n == 0 || !ARG_BETTER(OP, m, a->FLD)) return;                                        \
        a->FLD = m;                                                                              \
        bool want_nan = m != m;                                                                  \
        for (int64_t i = 0; i < n; i++) {                                                        \
            T v = x[i * s];                                                                      \
            if (want_nan ? v != v : v == m) {                                                    \
                a->idx = base + i;                                                               \
                return;                                                                          \
            }                                                                                    \
        }                                                                                        \
    }
#define DEF_ARG(NAME, T, FLD, OP, SCANNAME)                                                      \
    DEF_ARG_FOLD(NAME, T, FLD, OP, SCANNAME##_scan)                                              \
    ROW_FN(NAME, T, __typeof__(a->FLD[0]) *restrict o = a->FLD; int64_t *restrict ix = a->idx;   \
           bool b = ARG_BETTER(OP, e, o[j]); o[j] = b ? e : o[j]; ix[j] = b ? rr : ix[j])

DEF_SCAN(max_f32, float, int32_t, >, -INFINITY, NAN)
DEF_SCAN(max_f64, double, int64_t, >, -INFINITY, NAN)
DEF_SCAN(max_i64, int64_t, int64_t, >, INT64_MIN, 0)
DEF_SCAN(max_u8, uint8_t, uint8_t, >, 0, 0)
DEF_SCAN(min_f32, float, int32_t, <, INFINITY, NAN)
DEF_SCAN(min_f64, double, int64_t, <, INFINITY, NAN)
DEF_SCAN(min_i64, int64_t, int64_t, <, INT64_MAX, 0)
DEF_SCAN(min_u8, uint8_t, uint8_t, <, 1, 0)
DEF_EXT(max_f32, float, f, >)
DEF_EXT(max_f64, double, f, >)
DEF_EXT(max_i64, int64_t, i, >)
DEF_EXT(max_u8, uint8_t, i, >)
DEF_EXT(min_f32, float, f, <)
DEF_EXT(min_f64, double, f, <)
DEF_EXT(min_i64, int64_t, i, <)
DEF_EXT(min_u8, uint8_t, i, <)
DEF_ARG(argmax_f32, float, f, >, max_f32)
DEF_ARG(argmax_f64, double, f, >, max_f64)
DEF_ARG(argmax_i64, int64_t, i, >, max_i64)
DEF_ARG(argmax_u8, uint8_t, i, >, max_u8)
DEF_ARG(argmin_f32, float, f, <, min_f32)
DEF_ARG(argmin_f64, double, f, <, min_f64)
DEF_ARG(argmin_i64, int64_t, i, <, min_i64)
DEF_ARG(argmin_u8, uint8_t, i, <, min_u8)

#define L(name) {name##_fold, name##_row}
/* [kind][input dtype]; integer SUMs and PRODs with int_acc use int_loops. */
static const loops loop_table[NKINDS][TJ_NUM_DTYPES] = {
    [TJ_K_RED_SUM] = {[TJ_FLOAT32] = L(sum_f32), [TJ_FLOAT64] = L(sum_f64), [TJ_INT64] = L(sum_i64), [TJ_BOOL] = L(sum_u8)},
    [TJ_K_RED_SUMSQDEV] = {[TJ_FLOAT32] = L(sqdev_f32), [TJ_FLOAT64] = L(sqdev_f64)},
    [TJ_K_RED_SUMEXP] = {[TJ_FLOAT32] = L(sumexp_f32), [TJ_FLOAT64] = L(sumexp_f64)},
    [TJ_K_RED_MAX] = {[TJ_FLOAT32] = L(max_f32), [TJ_FLOAT64] = L(max_f64), [TJ_INT64] = L(max_i64), [TJ_BOOL] = L(max_u8)},
    [TJ_K_RED_MIN] = {[TJ_FLOAT32] = L(min_f32), [TJ_FLOAT64] = L(min_f64), [TJ_INT64] = L(min_i64), [TJ_BOOL] = L(min_u8)},
    [TJ_K_RED_ARGMAX] = {[TJ_FLOAT32] = L(argmax_f32), [TJ_FLOAT64] = L(argmax_f64), [TJ_INT64] = L(argmax_i64),
                         [TJ_BOOL] = L(argmax_u8)},
    [TJ_K_RED_ARGMIN] = {[TJ_FLOAT32] = L(argmin_f32), [TJ_FLOAT64] = L(argmin_f64), [TJ_INT64] = L(argmin_i64),
                         [TJ_BOOL] = L(argmin_u8)},
    [TJ_K_RED_PROD] = {[TJ_FLOAT32] = L(prod_f32), [TJ_FLOAT64] = L(prod_f64), [TJ_INT64] = L(prod_i64),
                       [TJ_BOOL] = L(prod_u8)},
    [TJ_K_RED_ALL] = {[TJ_FLOAT32] = L(all_f32), [TJ_FLOAT64] = L(all_f64), [TJ_INT64] = L(all_i64),
                      [TJ_BOOL] = L(all_u8)},
    [TJ_K_RED_ANY] = {[TJ_FLOAT32] = L(any_f32), [TJ_FLOAT64] = L(any_f64), [TJ_INT64] = L(any_i64),
                      [TJ_BOOL] = L(any_u8)},
};
static const loops int_loops[NKINDS][TJ_NUM_DTYPES] = {
    [TJ_K_RED_SUM] = {[TJ_INT64] = L(isum_i64), [TJ_BOOL] = L(isum_u8)},
    [TJ_K_RED_PROD] = {[TJ_INT64] = L(iprod_i64), [TJ_BOOL] = L(iprod_u8)},
};
#undef L

static bool is_sum_or_prod(tj_k_red_kind kind) { return kind == TJ_K_RED_SUM || kind == TJ_K_RED_PROD; }

/* Whether the accumulator works on its integer field: ALL / ANY always
 * (a flag), the other kinds for int64 / bool inputs (sums and products
 * only with int_acc). */
static bool acc_is_int(const tj_k_reduce *r)
{
    if (r->kind == TJ_K_RED_ALL || r->kind == TJ_K_RED_ANY) return true;
    bool int_in = r->x_dtype == TJ_INT64 || r->x_dtype == TJ_BOOL;
    return int_in && (!is_sum_or_prod(r->kind) || r->int_acc);
}

/* ---- AVX-512 float32 loops (reduce_avx512.c): the same results bit for
 * bit; strided runs keep the generic folds. ---- */
static void sum_f32_row_avx512(const char *x, int64_t nrows, int64_t rs, int64_t m, int64_t r, const double *p,
                               const acc_rows *a)
{
    (void)r, (void)p;
    tj_k_sum_f32_rows_avx512((const float *)(const void *)x, nrows, rs, m, a->f);
}

/* The sum's (product's) folds on the AVX-512 runs loop: COP is += (*=), the
 * fold of each run's result into its accumulator. */
#define DEF_FOLDS_AVX512(NAME, COP)                                                                        \
    static void NAME##_folds_avx512(const char *x, const int64_t *off, int64_t on, int64_t n, int64_t s,     \
                                    int64_t base, const double *q, acc *a)                                 \
    {                                                                                                      \
        double part[OB];                                                                                   \
        if (s != 1) {                                                                                      \
            for (int64_t t = 0; t < on; t++) NAME##_fold(x + off[t], n, s, base, q[t], &a[t]);             \
            return;                                                                                        \
        }                                                                                                  \
        tj_k_##NAME##_runs_avx512(x, off, on, n, part);                                                    \
        for (int64_t t = 0; t < on; t++) a[t].f COP part[t];                                               \
    }
DEF_FOLDS_AVX512(sum_f32, +=)
DEF_FOLDS_AVX512(prod_f32, *=)
DEF_FOLDS_AVX512(sum_f64, +=)

/* NAME's folds (max or min of T, OP > or <) of contiguous runs on SCANS,
 * each run's extreme taken as NAME##_fold takes it. */
#define DEF_EXT_FOLDS(NAME, T, OP, SCANS)                                                          \
    static void NAME##_folds(const char *x, const int64_t *off, int64_t on, int64_t n, int64_t s,   \
                             int64_t base, const double *q, acc *a)                                 \
    {                                                                                               \
        T m[OB];                                                                                    \
        if (s != 1) {                                                                               \
            for (int64_t t = 0; t < on; t++) NAME##_fold(x + off[t], n, s, base, q[t], &a[t]);      \
            return;                                                                                 \
        }                                                                                           \
        SCANS(x, off, on, n, m);                                                                    \
        for (int64_t t = 0; t < on; t++)                                                            \
            if (n > 0 && BETTER(OP, m[t], a[t].f)) a[t].f = m[t];                                   \
    }

/* The float32 extrema folds on ISA's scans of contiguous runs (strided
 * runs keep the generic scan). */
#define DEF_EXTREMA_ISA(ISA)                                                                    \
    static float max_f32_scan_##ISA(const float *x, int64_t n, int64_t s)                       \
    {                                                                                           \
        return s == 1 ? tj_k_max_f32_scan_##ISA(x, n) : max_f32_scan(x, n, s);                  \
    }                                                                                           \
    static float min_f32_scan_##ISA(const float *x, int64_t n, int64_t s)                       \
    {                                                                                           \
        return s == 1 ? tj_k_min_f32_scan_##ISA(x, n) : min_f32_scan(x, n, s);                  \
    }                                                                                           \
    DEF_EXT_FOLD(max_f32_##ISA, float, f, >, max_f32_scan_##ISA)                                \
    DEF_EXT_FOLD(min_f32_##ISA, float, f, <, min_f32_scan_##ISA)                                \
    DEF_EXT_FOLDS(max_f32_##ISA, float, >, tj_k_max_f32_scans_##ISA)                            \
    DEF_EXT_FOLDS(min_f32_##ISA, float, <, tj_k_min_f32_scans_##ISA)                            \
    DEF_ARG_FOLD(argmax_f32_##ISA, float, f, >, max_f32_scan_##ISA)                             \
    DEF_ARG_FOLD(argmin_f32_##ISA, float, f, <, min_f32_scan_##ISA)
DEF_EXTREMA_ISA(avx512)
DEF_EXTREMA_ISA(avx2)

/* The float64 extrema folds on AVX-512's scans (argmax / argmin keep the
 * generic ones). */
static double max_f64_scan_avx512(const double *x, int64_t n, int64_t s)
{
    return s == 1 ? tj_k_max_f64_scan_avx512(x, n) : max_f64_scan(x, n, s);
}
static double min_f64_scan_avx512(const double *x, int64_t n, int64_t s)
{
    return s == 1 ? tj_k_min_f64_scan_avx512(x, n) : min_f64_scan(x, n, s);
}
DEF_EXT_FOLD(max_f64_avx512, double, f, >, max_f64_scan_avx512)
DEF_EXT_FOLD(min_f64_avx512, double, f, <, min_f64_scan_avx512)
DEF_EXT_FOLDS(max_f64_avx512, double, >, tj_k_max_f64_scans_avx512)
DEF_EXT_FOLDS(min_f64_avx512, double, <, tj_k_min_f64_scans_avx512)

/* [kind] for float32 inputs when the ISA in use is AVX-512. */
static const loops avx512_f32_loops[NKINDS] = {
    [TJ_K_RED_SUM] = {sum_f32_fold, sum_f32_row_avx512, sum_f32_folds_avx512},
    [TJ_K_RED_MAX] = {max_f32_avx512_fold, max_f32_row, max_f32_avx512_folds},
    [TJ_K_RED_MIN] = {min_f32_avx512_fold, min_f32_row, min_f32_avx512_folds},
    [TJ_K_RED_ARGMAX] = {argmax_f32_avx512_fold, argmax_f32_row},
    [TJ_K_RED_ARGMIN] = {argmin_f32_avx512_fold, argmin_f32_row},
    /* the generic row loop (an AVX-512 one exists for the sum only) */
    [TJ_K_RED_PROD] = {prod_f32_fold, prod_f32_row, prod_f32_folds_avx512},
};

/* [kind] for float64 inputs when the ISA in use is AVX-512: the sum's runs
 * four at a time (one chain of additions per run is latency-bound), the
 * extrema's scans. */
static const loops avx512_f64_loops[NKINDS] = {
    [TJ_K_RED_SUM] = {sum_f64_fold, sum_f64_row, sum_f64_folds_avx512},
    [TJ_K_RED_MAX] = {max_f64_avx512_fold, max_f64_row, max_f64_avx512_folds},
    [TJ_K_RED_MIN] = {min_f64_avx512_fold, min_f64_row, min_f64_avx512_folds},
};

/* [kind] for float32 inputs when the ISA in use is AVX2: the extrema. */
static const loops avx2_f32_loops[NKINDS] = {
    [TJ_K_RED_MAX] = {max_f32_avx2_fold, max_f32_row, max_f32_avx2_folds},
    [TJ_K_RED_MIN] = {min_f32_avx2_fold, min_f32_row, min_f32_avx2_folds},
    [TJ_K_RED_ARGMAX] = {argmax_f32_avx2_fold, argmax_f32_row},
    [TJ_K_RED_ARGMIN] = {argmin_f32_avx2_fold, argmin_f32_row},
};

/* The loops of a float-accumulating reduction of kind over dt inputs, for
 * the ISA in use. */
static const loops *float_loops_for(tj_k_red_kind kind, tj_dtype dt)
{
    tj_k_isa isa = tj_k_isa_active();
    if (dt == TJ_FLOAT32 && avx512_f32_loops[kind].fold && isa == TJ_K_ISA_AVX512) return &avx512_f32_loops[kind];
    if (dt == TJ_FLOAT32 && avx2_f32_loops[kind].fold && isa == TJ_K_ISA_AVX2) return &avx2_f32_loops[kind];
    if (dt == TJ_FLOAT64 && avx512_f64_loops[kind].fold && isa == TJ_K_ISA_AVX512) return &avx512_f64_loops[kind];
    return &loop_table[kind][dt];
}

static const loops *loops_for(const tj_k_reduce *r)
{
    if (is_sum_or_prod(r->kind) && acc_is_int(r)) return &int_loops[r->kind][r->x_dtype];
    return float_loops_for(r->kind, r->x_dtype);
}

static acc acc_init(tj_k_red_kind kind, int64_t idx)
{
    acc a = {0, 0, idx};
    if (kind == TJ_K_RED_MAX || kind == TJ_K_RED_ARGMAX) {
        a.f = -INFINITY;
        a.i = INT64_MIN;
    } else if (kind == TJ_K_RED_MIN || kind == TJ_K_RED_ARGMIN) {
        a.f = INFINITY;
        a.i = INT64_MAX;
    } else if (kind == TJ_K_RED_PROD) {
        a.f = 1;
        a.i = 1;
    }
    return a;
}

/* Folds the later partial result b into a. */
static void acc_combine(tj_k_red_kind kind, bool is_int, acc *a, const acc *b)
{
    switch (kind) {
    case TJ_K_RED_SUM:
    case TJ_K_RED_SUMSQDEV:
    case TJ_K_RED_SUMEXP:
        a->f += b->f;
        a->i = (int64_t)((uint64_t)a->i + (uint64_t)b->i);
        break;
    case TJ_K_RED_MAX:
        if (is_int ? b->i > a->i : BETTER(>, b->f, a->f)) *a = *b;
        break;
    case TJ_K_RED_MIN:
        if (is_int ? b->i < a->i : BETTER(<, b->f, a->f)) *a = *b;
        break;
    case TJ_K_RED_ARGMAX:
        if (is_int ? b->i > a->i : ARG_BETTER(>, b->f, a->f)) *a = *b;
        break;
    case TJ_K_RED_ARGMIN:
        if (is_int ? b->i < a->i : ARG_BETTER(<, b->f, a->f)) *a = *b;
        break;
    case TJ_K_RED_PROD:
        a->f *= b->f;
        a->i = (int64_t)((uint64_t)a->i * (uint64_t)b->i);
        break;
    case TJ_K_RED_ALL:
    case TJ_K_RED_ANY: a->i |= b->i; break;
    }
}

static void store(void *out, tj_dtype d, int64_t o, bool is_int, double f, int64_t i)
{
    switch (d) {
    case TJ_FLOAT32: ((float *)out)[o] = is_int ? (float)i : (float)f; break;
    case TJ_FLOAT64: ((double *)out)[o] = is_int ? (double)i : f; break;
    case TJ_INT64: ((int64_t *)out)[o] = is_int ? i : (int64_t)f; break;
    case TJ_BOOL: ((uint8_t *)out)[o] = is_int ? i != 0 : f != 0; break;
    default: break; /* storage dtypes: the dispatcher keeps them from compute kernels */
    }
}

static void finish(const tj_k_reduce *r, bool is_int, const acc *a, int64_t o)
{
    switch (r->kind) {
    case TJ_K_RED_SUM:
        if (is_int) store(r->out, r->out_dtype, o, true, 0, a->i);
        else store(r->out, r->out_dtype, o, false, a->f / r->divisor, 0);
        break;
    case TJ_K_RED_SUMSQDEV: {
        double v = a->f / r->divisor;
        store(r->out, r->out_dtype, o, false, r->root ? sqrt(v) : v, 0);
        break;
    }
    case TJ_K_RED_SUMEXP: store(r->out, r->out_dtype, o, false, log(a->f) + r->param[o], 0); break;
    case TJ_K_RED_ARGMAX:
    case TJ_K_RED_ARGMIN:
        r->out_index[o] = a->idx;
        if (r->out) store(r->out, r->out_dtype, o, is_int, a->f, a->i);
        break;
    case TJ_K_RED_MAX:
    case TJ_K_RED_MIN:
    case TJ_K_RED_PROD: store(r->out, r->out_dtype, o, is_int, a->f, a->i); break;
    case TJ_K_RED_ALL: store(r->out, r->out_dtype, o, true, 0, !a->i); break;
    case TJ_K_RED_ANY: store(r->out, r->out_dtype, o, true, 0, a->i); break;
    }
}

/* ---- geometry ---- */
static void dims_push(tj_k_red_dims *g, int64_t size, int64_t stride)
{
    if (size == 1) return;
    if (g->n > 0 && g->stride[g->n - 1] == stride * size) {
        g->size[g->n - 1] *= size;
        g->stride[g->n - 1] = stride;
        return;
    }
    g->size[g->n] = size;
    g->stride[g->n] = stride;
    g->n++;
}

void tj_k_reduce_prepare(tj_k_reduce *r, int ndim, const int64_t *shape, const int64_t *strides, const bool *reduced)
{
    memset(&r->kept, 0, sizeof r->kept);
    memset(&r->red, 0, sizeof r->red);
    r->nout = r->nred = 1;
    for (int d = 0; d < ndim; d++) {
        if (reduced[d]) {
            r->nred *= shape[d];
            dims_push(&r->red, shape[d], strides[d]);
        } else {
            r->nout *= shape[d];
            dims_push(&r->kept, shape[d], strides[d]);
        }
    }
    if (r->red.n == 0) { /* one element per output */
        r->red.n = 1;
        r->red.size[0] = 1;
        r->red.stride[0] = 0;
    }
}

/* Element offset of the `o`-th combination (row-major) of the first n dims. */
static int64_t offset_of(int64_t o, const tj_k_red_dims *g, int n)
{
    int64_t off = 0;
    for (int d = n - 1; d >= 0; d--) {
        off += (o % g->size[d]) * g->stride[d];
        o /= g->size[d];
    }
    return off;
}

/* How the work is cut. Parts (partial results per output, combined in
 * order) depend on sizes only, so results never depend on the thread count;
 * blocks of outputs do not change any output's sequence of operations and
 * may follow the thread count. */
typedef struct plan {
    bool rows;      /* row strategy */
    int64_t parts;  /* partial results per output (1: none) */
    int64_t span;   /* flat reduced indices per part */
    int64_t m;      /* rows: size of the contiguous kept dim */
    int64_t bsize;  /* outputs per block */
    int64_t nblk;   /* blocks (per combination of the outer kept dims, for rows) */
    int64_t ninner; /* outputs strategy: flat reduced indices per step of the
                     * leading reduced dims that lie outside every kept dim in
                     * memory (folded in memory order: for each step, all
                     * outputs of the block) */
    int64_t items;
} plan;

static plan plan_of(const tj_k_reduce *r, int nthreads)
{
    plan pl = {0};
    const tj_k_red_dims *k = &r->kept, *d = &r->red;
    bool inner = d->stride[d->n - 1] == 1;
    pl.rows = !inner && k->n > 0 && k->stride[k->n - 1] == 1;
    if (pl.rows) {
        pl.m = k->size[k->n - 1];
        /* narrower blocks rather than partial results while there are too
         * few blocks for the threads: partials cost a scratch as large as
         * the outputs times the parts, and a pass to combine them */
        pl.bsize = JB;
        while (pl.bsize > JB_MIN && r->nout / pl.m * ((pl.m + pl.bsize - 1) / pl.bsize) < 8) pl.bsize /= 2;
        pl.nblk = (pl.m + pl.bsize - 1) / pl.bsize;
        int64_t base_items = r->nout / pl.m * pl.nblk;
        int64_t per_item = r->nred * (pl.m < pl.bsize ? pl.m : pl.bsize);
        pl.parts = base_items >= 8 ? 1 : per_item / CHUNK;
        if (pl.parts > MAX_ROW_CHUNKS) pl.parts = MAX_ROW_CHUNKS;
        if (pl.parts > r->nred) pl.parts = r->nred;
        if (pl.parts < 1) pl.parts = 1;
        pl.span = (r->nred + pl.parts - 1) / pl.parts;
        pl.items = base_items * pl.parts;
        return pl;
    }
    pl.parts = r->nred > CHUNK ? (r->nred + CHUNK - 1) / CHUNK : 1;
    pl.span = CHUNK;
    /* about four items per thread, counting the parts; blocks of at least
     * RUNS_AT_ONCE outputs, which the runs loop folds at once (a cnn bias
     * gradient, 16 outputs of 4 parts, in blocks of 2 at 2 threads took
     * each thread 1.4x the CPU time of the whole sum in blocks of 4) */
    int64_t per_thread = r->nout * pl.parts / (4 * (int64_t)(nthreads < 1 ? 1 : nthreads));
    pl.bsize = per_thread < RUNS_AT_ONCE ? RUNS_AT_ONCE : per_thread > OB ? OB : per_thread;
    if (pl.bsize > r->nout) pl.bsize = r->nout;
    pl.nblk = (r->nout + pl.bsize - 1) / pl.bsize;
    pl.items = pl.nblk * pl.parts;
    int64_t kmax = 0;
    for (int i = 0; i < k->n; i++)
        if (k->stride[i] > kmax) kmax = k->stride[i];
    int h = 0;
    while (k->n > 0 && h < d->n - 1 && d->stride[h] > kmax) h++;
    pl.ninner = 1;
    for (int i = h; i < d->n; i++) pl.ninner *= d->size[i];
    if (pl.ninner == 0) pl.ninner = 1; /* empty reduction: no step at all */
    return pl;
}

size_t tj_k_reduce_scratch_bytes(const tj_k_reduce *r)
{
    if (r->nout == 0) return 0;
    plan pl = plan_of(r, 1);
    return pl.parts > 1 ? (size_t)(r->nout * pl.parts) * sizeof(acc) : 0;
}

/* Walks the reduced elements [r0, r1) as runs along the innermost reduced
 * dim (the unit the fold and row loops work on). */
typedef struct run_iter {
    const tj_k_red_dims *g;
    int64_t idx[TJ_MAX_DIMS];
    int64_t r, r1;
} run_iter;

static void run_begin(run_iter *it, const tj_k_red_dims *g, int64_t r0, int64_t r1)
{
    it->g = g;
    it->r = r0;
    it->r1 = r1;
    if (r0 >= r1) return; /* also an empty reduction, whose dims may be 0 */
    for (int d = g->n - 1; d >= 0; d--) {
        it->idx[d] = r0 % g->size[d];
        r0 /= g->size[d];
    }
}

/* Length of the next run (0 at the end); *off: element offset of its first
 * element, *first: its flat reduced index. */
static int64_t run_next(run_iter *it, int64_t *off, int64_t *first)
{
    if (it->r >= it->r1) return 0;
    const tj_k_red_dims *g = it->g;
    int nr = g->n;
    *off = 0;
    for (int d = 0; d < nr; d++) *off += it->idx[d] * g->stride[d];
    *first = it->r;
    int64_t len = g->size[nr - 1] - it->idx[nr - 1];
    if (len > it->r1 - it->r) len = it->r1 - it->r;
    it->r += len;
    it->idx[nr - 1] += len;
    for (int d = nr - 1; d > 0 && it->idx[d] >= g->size[d]; d--) {
        it->idx[d] = 0;
        it->idx[d - 1]++;
    }
    return len;
}

static void part_range(const tj_k_reduce *r, const plan *pl, int64_t c, int64_t *r0, int64_t *r1)
{
    *r0 = c * pl->span;
    *r1 = *r0 + pl->span < r->nred ? *r0 + pl->span : r->nred;
}

/* Element offsets of the outputs o0 .. o0 + on - 1 (row-major over the kept
 * dims g), counted like an odometer from the first. */
static void offsets_of(int64_t o0, int64_t on, const tj_k_red_dims *g, int64_t *off)
{
    int64_t idx[TJ_MAX_DIMS], cur = 0;
    for (int d = g->n - 1; d >= 0; d--) {
        idx[d] = o0 % g->size[d];
        o0 /= g->size[d];
        cur += idx[d] * g->stride[d];
    }
    for (int64_t t = 0; t < on; t++) {
        off[t] = cur;
        for (int d = g->n - 1; d >= 0; d--) {
            cur += g->stride[d];
            if (++idx[d] < g->size[d]) break;
            cur -= idx[d] * g->stride[d];
            idx[d] = 0;
        }
    }
}

/* Folds, for each output t < on, the run of len elements `is` apart at x +
 * boff[t] bytes (flat reduced index of its first: first) into a[t] with
 * param q[t]. */
static void fold_outputs(const loops *lp, const char *x, const int64_t *boff, int64_t on, int64_t len, int64_t is,
                         int64_t first, const double *q, acc *a)
{
    if (lp->folds) lp->folds(x, boff, on, len, is, first, q, a);
    else
        for (int64_t t = 0; t < on; t++) lp->fold(x + boff[t], len, is, first, q[t], &a[t]);
}

/* Per step, the step's runs in order and each run for every output of the
 * block: every output folds its runs in the same order as alone, and the
 * runs are walked once per step, not once per output. */
static void run_item_outputs(const tj_k_reduce *r, const loops *lp, const plan *pl, bool is_int, acc *partial,
                             int64_t item)
{
    int64_t es = (int64_t)tj_dtype_size(r->x_dtype);
    /* part-major: a thread's block of items covers a range of the reduced
     * indices (the batch, in a bias gradient) for every output, the part of
     * the input that the elementwise step before, split the same way, left
     * in its core's cache */
    int64_t blk = item % pl->nblk, c = item / pl->nblk, r0, r1;
    part_range(r, pl, c, &r0, &r1);
    int64_t o0 = blk * pl->bsize, on = r->nout - o0 < pl->bsize ? r->nout - o0 : pl->bsize;
    acc a[OB];
    int64_t ooff[OB];
    double q[OB];
    offsets_of(o0, on, &r->kept, ooff);
    for (int64_t t = 0; t < on; t++) {
        a[t] = acc_init(r->kind, r0);
        q[t] = r->param ? r->param[o0 + t] : 0;
    }
    const char *x = r->x;
    int64_t is = r->red.stride[r->red.n - 1], ni = pl->ninner;
    for (int64_t step = r0 / ni; step * ni < r1; step++) {
        int64_t s0 = step * ni > r0 ? step * ni : r0, s1 = (step + 1) * ni < r1 ? (step + 1) * ni : r1;
        run_iter it;
        run_begin(&it, &r->red, s0, s1);
        int64_t len, off, first;
        while ((len = run_next(&it, &off, &first))) {
            int64_t boff[OB];
            for (int64_t t = 0; t < on; t++) boff[t] = (ooff[t] + off) * es;
            fold_outputs(lp, x, boff, on, len, is, first, q, a);
        }
    }
    for (int64_t t = 0; t < on; t++) {
        if (pl->parts == 1) finish(r, is_int, &a[t], o0 + t);
        else partial[(o0 + t) * pl->parts + c] = a[t];
    }
}

static void run_item_rows(const tj_k_reduce *r, const loops *lp, const plan *pl, bool is_int, acc *partial,
                          int64_t item)
{
    size_t es = tj_dtype_size(r->x_dtype);
    int64_t c = item % pl->parts, rest = item / pl->parts, r0, r1;
    part_range(r, pl, c, &r0, &r1);
    int64_t b = rest % pl->nblk, k0 = rest / pl->nblk;
    int64_t j0 = b * pl->bsize, jl = pl->m - j0 < pl->bsize ? pl->m - j0 : pl->bsize;
    int64_t obase = k0 * pl->m + j0;
    const char *xo = (const char *)r->x + (offset_of(k0, &r->kept, r->kept.n - 1) + j0) * (int64_t)es;

    double f[JB];
    int64_t iv[JB], ix[JB];
    acc init = acc_init(r->kind, r0);
    for (int64_t j = 0; j < jl; j++) {
        f[j] = init.f;
        iv[j] = init.i;
        ix[j] = init.idx;
    }
    acc_rows ar = {f, iv, ix};
    const double *p = r->param ? r->param + obase : NULL;
    run_iter it;
    run_begin(&it, &r->red, r0, r1);
    int64_t len, off, first, is = r->red.stride[r->red.n - 1];
    while ((len = run_next(&it, &off, &first))) lp->row(xo + off * (int64_t)es, len, is, jl, first, p, &ar);
    for (int64_t j = 0; j < jl; j++) {
        acc a = {f[j], iv[j], ix[j]};
        if (pl->parts == 1) finish(r, is_int, &a, obase + j);
        else partial[(obase + j) * pl->parts + c] = a;
    }
}

static void run_item(const tj_k_reduce *r, const loops *lp, const plan *pl, bool is_int, acc *partial, int64_t it)
{
    if (pl->rows) run_item_rows(r, lp, pl, is_int, partial, it);
    else run_item_outputs(r, lp, pl, is_int, partial, it);
}

static void combine_parts(const tj_k_reduce *r, const plan *pl, bool is_int, const acc *partial, int64_t o)
{
    acc a = partial[o * pl->parts];
    for (int64_t c = 1; c < pl->parts; c++) acc_combine(r->kind, is_int, &a, &partial[o * pl->parts + c]);
    finish(r, is_int, &a, o);
}

/* What the parallel loops of tj_k_reduce_run share. */
typedef struct run_args {
    const tj_k_reduce *r;
    const loops *lp;
    plan pl;
    bool is_int;
    acc *partial;
} run_args;

static void run_items(void *ctx, int t, int64_t begin, int64_t end)
{
    const run_args *a = ctx;
    (void)t;
    for (int64_t it = begin; it < end; it++) run_item(a->r, a->lp, &a->pl, a->is_int, a->partial, it);
}

static void combine_outputs(void *ctx, int t, int64_t begin, int64_t end)
{
    const run_args *a = ctx;
    (void)t;
    for (int64_t o = begin; o < end; o++) combine_parts(a->r, &a->pl, a->is_int, a->partial, o);
}

void tj_k_reduce_run(const tj_k_reduce *r, void *scratch, int nthreads)
{
    if (r->nout == 0) return;
    int nt = nthreads < 1 ? 1 : nthreads;
    /* each item and each output is computed alone: the results do not
     * depend on the threads */
    run_args a = {r, loops_for(r), plan_of(r, nt), acc_is_int(r), scratch};
    tj_k_parallel(nt, a.pl.items, run_items, &a);
    if (a.pl.parts > 1) tj_k_parallel(nt, r->nout, combine_outputs, &a);
}

void tj_k_reduce_rows(tj_k_red_kind kind, tj_dtype dt, tj_dtype out_dt, const void *x, int64_t nrows, int64_t n,
                      void *out)
{
    /* what tj_k_reduce_run's outputs strategy does for rows of one
     * contiguous run of at most CHUNK elements (one part): each output's
     * accumulator from acc_init, its run folded, finish (for a plain sum and
     * an extremum: the accumulator's value, divided by 1 for the sum, which
     * is exact, rounded to out_dt). No descriptor and no params are built
     * per call: loop fusion calls this once per chunk of a few rows, where
     * zeroing them cost more than folding short rows. */
    static const double no_params[OB];
    const loops *lp = float_loops_for(kind, dt);
    const acc init = acc_init(kind, 0);
    int64_t es = (int64_t)tj_dtype_size(dt);
    acc a[OB];
    int64_t boff[OB];
    for (int64_t o0 = 0; o0 < nrows; o0 += OB) {
        int64_t on = nrows - o0 < OB ? nrows - o0 : OB;
        for (int64_t t = 0; t < on; t++) {
            a[t] = init;
            boff[t] = (o0 + t) * n * es;
        }
        fold_outputs(lp, x, boff, on, n, 1, 0, no_params, a);
        if (out_dt == TJ_FLOAT32)
            for (int64_t t = 0; t < on; t++) ((float *)out)[o0 + t] = (float)a[t].f;
        else
            for (int64_t t = 0; t < on; t++) ((double *)out)[o0 + t] = a[t].f;
    }
}
