/* Reduction driver and loops (see reduce.h).
 *
 * The loops come in two shapes per (kind, input dtype): `fold` folds a
 * strided run of one output's reduced elements into its accumulator, with
 * LANES independent partial results on contiguous runs so that the compiler
 * vectorises them without reassociating; `row` folds one row of a block of
 * outputs whose kept dim is contiguous into their accumulators. */
#include <math.h>
#include <string.h>

#include "reduce.h"

#define LANES 8
#define CHUNK 16384 /* reduced elements folded into one partial result */
#define JB 2048     /* outputs per block in the row strategy */
#define MAX_ROW_CHUNKS 64

/* Accumulator of one output. */
typedef struct acc {
    double f;    /* float sums and extrema */
    int64_t i;   /* integer sums (wrapping) and extrema */
    int64_t idx; /* ARGMAX: flat index over the reduced dims */
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
/* x: m contiguous elements, one per output of the block; r: flat reduced
 * index of the row; p: the block's params (NULL when the kind has none). */
typedef void (*row_fn)(const char *x, int64_t m, int64_t r, const double *p, const acc_rows *a);

typedef struct loops {
    fold_fn fold;
    row_fn row;
} loops;

/* ---- float-valued sums: EXPR of v (the element as double) and q (param) ---- */
#define DEF_FSUM(NAME, T, EXPR, QROW)                                                            \
    static void NAME##_fold(const char *xp, int64_t n, int64_t s, int64_t base, double q, acc *a) \
    {                                                                                            \
        const T *x = (const T *)xp;                                                              \
        double l[LANES] = {0};                                                                   \
        int64_t i = 0;                                                                           \
        if (s == 1)                                                                              \
            for (; i + LANES <= n; i += LANES)                                                   \
                for (int k = 0; k < LANES; k++) {                                                \
                    double v = (double)x[i + k];                                                 \
                    l[k] += (EXPR);                                                              \
                }                                                                                \
        for (; i < n; i++) {                                                                     \
            double v = (double)x[i * s];                                                         \
            l[0] += (EXPR);                                                                      \
        }                                                                                        \
        for (int w = LANES / 2; w > 0; w /= 2)                                                   \
            for (int k = 0; k < w; k++) l[k] += l[k + w];                                        \
        a->f += l[0];                                                                            \
    }                                                                                            \
    static void NAME##_row(const char *xp, int64_t m, int64_t r, const double *p, const acc_rows *a) \
    {                                                                                            \
        const T *restrict x = (const T *)xp;                                                     \
        double *restrict o = a->f;                                                               \
        for (int64_t j = 0; j < m; j++) {                                                        \
            double v = (double)x[j], q = (QROW);                                                 \
            (void)q;                                                                             \
            o[j] += (EXPR);                                                                      \
        }                                                                                        \
    }

DEF_FSUM(sum_f32, float, v, 0.0)
DEF_FSUM(sum_f64, double, v, 0.0)
DEF_FSUM(sum_i64, int64_t, v, 0.0)
DEF_FSUM(sum_u8, uint8_t, v, 0.0)
DEF_FSUM(sqdev_f32, float, (v - q) * (v - q), p[j])
DEF_FSUM(sqdev_f64, double, (v - q) * (v - q), p[j])
DEF_FSUM(sumexp_f32, float, exp(v - q), p[j])
DEF_FSUM(sumexp_f64, double, exp(v - q), p[j])

/* ---- integer sums, wrapping like int64 arithmetic in PyTorch ---- */
#define DEF_ISUM(NAME, T)                                                                        \
    static void NAME##_fold(const char *xp, int64_t n, int64_t s, int64_t base, double q, acc *a) \
    {                                                                                            \
        const T *x = (const T *)xp;                                                              \
        uint64_t l[LANES] = {0};                                                                 \
        int64_t i = 0;                                                                           \
        if (s == 1)                                                                              \
            for (; i + LANES <= n; i += LANES)                                                   \
                for (int k = 0; k < LANES; k++) l[k] += (uint64_t)x[i + k];                      \
        for (; i < n; i++) l[0] += (uint64_t)x[i * s];                                           \
        for (int k = 1; k < LANES; k++) l[0] += l[k];                                            \
        a->i = (int64_t)((uint64_t)a->i + l[0]);                                                 \
    }                                                                                            \
    static void NAME##_row(const char *xp, int64_t m, int64_t r, const double *p, const acc_rows *a) \
    {                                                                                            \
        const T *restrict x = (const T *)xp;                                                     \
        uint64_t *restrict o = (uint64_t *)a->i;                                                 \
        for (int64_t j = 0; j < m; j++) o[j] += (uint64_t)x[j];                                  \
    }

DEF_ISUM(isum_i64, int64_t)
DEF_ISUM(isum_u8, uint8_t)

/* ---- extrema. `v OP c | v != v` takes v when it is better or nan, so a nan
 * sticks once taken (nothing compares better than nan). FLD is the
 * accumulator field: f for float inputs, i for integer ones. ---- */
#define BETTER(OP, v, c) (((v)OP(c)) | ((v) != (v)))

#define DEF_EXT(NAME, T, FLD, OP, INIT)                                                          \
    static T NAME##_scan(const T *x, int64_t n, int64_t s)                                       \
    {                                                                                            \
        T l[LANES];                                                                              \
        for (int k = 0; k < LANES; k++) l[k] = (INIT);                                           \
        int64_t i = 0;                                                                           \
        if (s == 1)                                                                              \
            for (; i + LANES <= n; i += LANES)                                                   \
                for (int k = 0; k < LANES; k++) {                                                \
                    T v = x[i + k];                                                              \
                    l[k] = BETTER(OP, v, l[k]) ? v : l[k];                                       \
                }                                                                                \
        for (; i < n; i++) {                                                                     \
            T v = x[i * s];                                                                      \
            l[0] = BETTER(OP, v, l[0]) ? v : l[0];                                               \
        }                                                                                        \
        for (int k = 1; k < LANES; k++) l[0] = BETTER(OP, l[k], l[0]) ? l[k] : l[0];             \
        return l[0];                                                                             \
    }                                                                                            \
    static void NAME##_fold(const char *xp, int64_t n, int64_t s, int64_t base, double q, acc *a) \
    {                                                                                            \
        T m = NAME##_scan((const T *)xp, n, s);                                                  \
        if (BETTER(OP, m, a->FLD)) a->FLD = m;                                                   \
    }                                                                                            \
    static void NAME##_row(const char *xp, int64_t m, int64_t r, const double *p, const acc_rows *a) \
    {                                                                                            \
        const T *restrict x = (const T *)xp;                                                     \
        __typeof__(a->FLD[0]) *restrict o = a->FLD;                                              \
        for (int64_t j = 0; j < m; j++) {                                                        \
            T v = x[j];                                                                          \
            o[j] = BETTER(OP, v, o[j]) ? v : o[j];                                               \
        }                                                                                        \
    }

/* ARGMAX: the run's maximum first (vectorised), then, only when it beats the
 * accumulator, the first position holding it. A tie keeps the earlier index;
 * a nan beats everything but an earlier nan. */
#define ARG_BETTER(v, c) (((v) > (c)) | (((v) != (v)) & ((c) == (c))))

#define DEF_ARGMAX(NAME, T, FLD, MAXNAME)                                                        \
    static void NAME##_fold(const char *xp, int64_t n, int64_t s, int64_t base, double q, acc *a) \
    {                                                                                            \
        const T *x = (const T *)xp;                                                              \
        T m = MAXNAME##_scan(x, n, s);                                                           \
        if (n == 0 || !ARG_BETTER(m, a->FLD)) return;                                            \
        a->FLD = m;                                                                              \
        bool want_nan = m != m;                                                                  \
        for (int64_t i = 0; i < n; i++) {                                                        \
            T v = x[i * s];                                                                      \
            if (want_nan ? v != v : v == m) {                                                    \
                a->idx = base + i;                                                               \
                return;                                                                          \
            }                                                                                    \
        }                                                                                        \
    }                                                                                            \
    static void NAME##_row(const char *xp, int64_t m, int64_t r, const double *p, const acc_rows *a) \
    {                                                                                            \
        const T *restrict x = (const T *)xp;                                                     \
        __typeof__(a->FLD[0]) *restrict o = a->FLD;                                              \
        int64_t *restrict ix = a->idx;                                                           \
        for (int64_t j = 0; j < m; j++) {                                                        \
            T v = x[j];                                                                          \
            bool b = ARG_BETTER(v, o[j]);                                                        \
            o[j] = b ? v : o[j];                                                                 \
            ix[j] = b ? r : ix[j];                                                               \
        }                                                                                        \
    }

DEF_EXT(max_f32, float, f, >, -INFINITY)
DEF_EXT(max_f64, double, f, >, -INFINITY)
DEF_EXT(max_i64, int64_t, i, >, INT64_MIN)
DEF_EXT(max_u8, uint8_t, i, >, 0)
DEF_EXT(min_f32, float, f, <, INFINITY)
DEF_EXT(min_f64, double, f, <, INFINITY)
DEF_EXT(min_i64, int64_t, i, <, INT64_MAX)
DEF_EXT(min_u8, uint8_t, i, <, 1)
DEF_ARGMAX(argmax_f32, float, f, max_f32)
DEF_ARGMAX(argmax_f64, double, f, max_f64)
DEF_ARGMAX(argmax_i64, int64_t, i, max_i64)
DEF_ARGMAX(argmax_u8, uint8_t, i, max_u8)

#define L(name) {name##_fold, name##_row}
/* [kind][input dtype]; integer SUMs with int_acc use int_sum_loops. */
static const loops loop_table[6][TJ_NUM_DTYPES] = {
    [TJ_K_RED_SUM] = {[TJ_FLOAT32] = L(sum_f32), [TJ_FLOAT64] = L(sum_f64), [TJ_INT64] = L(sum_i64), [TJ_BOOL] = L(sum_u8)},
    [TJ_K_RED_SUMSQDEV] = {[TJ_FLOAT32] = L(sqdev_f32), [TJ_FLOAT64] = L(sqdev_f64)},
    [TJ_K_RED_SUMEXP] = {[TJ_FLOAT32] = L(sumexp_f32), [TJ_FLOAT64] = L(sumexp_f64)},
    [TJ_K_RED_MAX] = {[TJ_FLOAT32] = L(max_f32), [TJ_FLOAT64] = L(max_f64), [TJ_INT64] = L(max_i64), [TJ_BOOL] = L(max_u8)},
    [TJ_K_RED_MIN] = {[TJ_FLOAT32] = L(min_f32), [TJ_FLOAT64] = L(min_f64), [TJ_INT64] = L(min_i64), [TJ_BOOL] = L(min_u8)},
    [TJ_K_RED_ARGMAX] = {[TJ_FLOAT32] = L(argmax_f32), [TJ_FLOAT64] = L(argmax_f64), [TJ_INT64] = L(argmax_i64),
                         [TJ_BOOL] = L(argmax_u8)},
};
static const loops int_sum_loops[TJ_NUM_DTYPES] = {[TJ_INT64] = L(isum_i64), [TJ_BOOL] = L(isum_u8)};
#undef L

/* Whether the accumulator works on its integer field. */
static bool acc_is_int(const tj_k_reduce *r)
{
    bool int_in = r->x_dtype == TJ_INT64 || r->x_dtype == TJ_BOOL;
    return int_in && (r->kind != TJ_K_RED_SUM || r->int_acc);
}

static const loops *loops_for(const tj_k_reduce *r)
{
    if (r->kind == TJ_K_RED_SUM && acc_is_int(r)) return &int_sum_loops[r->x_dtype];
    return &loop_table[r->kind][r->x_dtype];
}

static acc acc_init(tj_k_red_kind kind, int64_t idx)
{
    acc a = {0, 0, idx};
    if (kind == TJ_K_RED_MAX || kind == TJ_K_RED_ARGMAX) {
        a.f = -INFINITY;
        a.i = INT64_MIN;
    } else if (kind == TJ_K_RED_MIN) {
        a.f = INFINITY;
        a.i = INT64_MAX;
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
        if (is_int ? b->i > a->i : ARG_BETTER(b->f, a->f)) *a = *b;
        break;
    }
}

static void store(void *out, tj_dtype d, int64_t o, bool is_int, double f, int64_t i)
{
    switch (d) {
    case TJ_FLOAT32: ((float *)out)[o] = is_int ? (float)i : (float)f; break;
    case TJ_FLOAT64: ((double *)out)[o] = is_int ? (double)i : f; break;
    case TJ_INT64: ((int64_t *)out)[o] = is_int ? i : (int64_t)f; break;
    case TJ_BOOL: ((uint8_t *)out)[o] = is_int ? i != 0 : f != 0; break;
    }
}

static void finish(const tj_k_reduce *r, bool is_int, const acc *a, int64_t o)
{
    switch (r->kind) {
    case TJ_K_RED_SUM:
        if (is_int) store(r->out, r->out_dtype, o, true, 0, a->i);
        else store(r->out, r->out_dtype, o, false, a->f / r->divisor, 0);
        break;
    case TJ_K_RED_SUMSQDEV: store(r->out, r->out_dtype, o, false, a->f / r->divisor, 0); break;
    case TJ_K_RED_SUMEXP: store(r->out, r->out_dtype, o, false, log(a->f) + r->param[o], 0); break;
    case TJ_K_RED_ARGMAX:
        r->out_index[o] = a->idx;
        if (r->out) store(r->out, r->out_dtype, o, is_int, a->f, a->i);
        break;
    case TJ_K_RED_MAX:
    case TJ_K_RED_MIN: store(r->out, r->out_dtype, o, is_int, a->f, a->i); break;
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

/* How the work is cut; depends on sizes only, never on the thread count. */
typedef struct plan {
    bool rows;     /* row strategy */
    int64_t parts; /* partial results per output (1: none) */
    int64_t span;  /* reduced elements (rows for the row strategy) per part */
    int64_t m, nblk, items;
} plan;

static plan plan_of(const tj_k_reduce *r)
{
    plan pl = {0};
    const tj_k_red_dims *k = &r->kept, *d = &r->red;
    bool inner = d->stride[d->n - 1] == 1;
    pl.rows = !inner && k->n > 0 && k->stride[k->n - 1] == 1;
    if (pl.rows) {
        pl.m = k->size[k->n - 1];
        pl.nblk = (pl.m + JB - 1) / JB;
        int64_t base_items = r->nout / pl.m * pl.nblk;
        int64_t per_item = r->nred * (pl.m < JB ? pl.m : JB);
        pl.parts = base_items >= 8 ? 1 : per_item / CHUNK;
        if (pl.parts > MAX_ROW_CHUNKS) pl.parts = MAX_ROW_CHUNKS;
        if (pl.parts > r->nred) pl.parts = r->nred;
        if (pl.parts < 1) pl.parts = 1;
        pl.span = (r->nred + pl.parts - 1) / pl.parts;
        pl.items = base_items * pl.parts;
    } else {
        pl.parts = r->nred > CHUNK ? (r->nred + CHUNK - 1) / CHUNK : 1;
        pl.span = CHUNK;
        pl.items = r->nout * pl.parts;
    }
    return pl;
}

size_t tj_k_reduce_scratch_bytes(const tj_k_reduce *r)
{
    if (r->nout == 0) return 0;
    plan pl = plan_of(r);
    return pl.parts > 1 ? (size_t)(r->nout * pl.parts) * sizeof(acc) : 0;
}

/* Folds the reduced elements [r0, r1) of the output at xo. */
static void fold_range(const tj_k_reduce *r, fold_fn fold, const char *xo, size_t es, int64_t r0, int64_t r1,
                       double q, acc *a)
{
    if (r0 >= r1) return; /* also an empty reduction, whose dims may be 0 */
    const tj_k_red_dims *g = &r->red;
    int nr = g->n;
    int64_t idx[TJ_MAX_DIMS];
    int64_t rem = r0;
    for (int d = nr - 1; d >= 0; d--) {
        idx[d] = rem % g->size[d];
        rem /= g->size[d];
    }
    int64_t inner = g->size[nr - 1], is = g->stride[nr - 1];
    while (r0 < r1) {
        int64_t off = 0;
        for (int d = 0; d < nr; d++) off += idx[d] * g->stride[d];
        int64_t len = inner - idx[nr - 1];
        if (len > r1 - r0) len = r1 - r0;
        fold(xo + off * (int64_t)es, len, is, r0, q, a);
        r0 += len;
        idx[nr - 1] += len;
        for (int d = nr - 1; d > 0 && idx[d] >= g->size[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

static void run_item_outputs(const tj_k_reduce *r, const loops *lp, const plan *pl, bool is_int, acc *partial,
                             int64_t item)
{
    size_t es = tj_dtype_size(r->x_dtype);
    int64_t o = item / pl->parts, c = item % pl->parts;
    int64_t r0 = c * pl->span, r1 = r0 + pl->span < r->nred ? r0 + pl->span : r->nred;
    const char *xo = (const char *)r->x + offset_of(o, &r->kept, r->kept.n) * (int64_t)es;
    acc a = acc_init(r->kind, r0);
    fold_range(r, lp->fold, xo, es, r0, r1, r->param ? r->param[o] : 0, &a);
    if (pl->parts == 1) finish(r, is_int, &a, o);
    else partial[item] = a;
}

static void run_item_rows(const tj_k_reduce *r, const loops *lp, const plan *pl, bool is_int, acc *partial,
                          int64_t item)
{
    size_t es = tj_dtype_size(r->x_dtype);
    const tj_k_red_dims *g = &r->red;
    int64_t c = item % pl->parts, rest = item / pl->parts;
    int64_t b = rest % pl->nblk, k0 = rest / pl->nblk;
    int64_t j0 = b * JB, jl = pl->m - j0 < JB ? pl->m - j0 : JB;
    int64_t r0 = c * pl->span, r1 = r0 + pl->span < r->nred ? r0 + pl->span : r->nred;
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
    if (r0 < r1) {
        int nr = g->n;
        int64_t idx[TJ_MAX_DIMS], rem = r0, roff = 0;
        for (int d = nr - 1; d >= 0; d--) {
            idx[d] = rem % g->size[d];
            rem /= g->size[d];
            roff += idx[d] * g->stride[d];
        }
        for (int64_t rr = r0; rr < r1; rr++) {
            lp->row(xo + roff * (int64_t)es, jl, rr, p, &ar);
            for (int d = nr - 1; d >= 0; d--) {
                idx[d]++;
                roff += g->stride[d];
                if (idx[d] < g->size[d]) break;
                roff -= idx[d] * g->stride[d];
                idx[d] = 0;
            }
        }
    }
    for (int64_t j = 0; j < jl; j++) {
        acc a = {f[j], iv[j], ix[j]};
        if (pl->parts == 1) finish(r, is_int, &a, obase + j);
        else partial[(obase + j) * pl->parts + c] = a;
    }
}

void tj_k_reduce_run(const tj_k_reduce *r, void *scratch, int nthreads)
{
    if (r->nout == 0) return;
    const loops *lp = loops_for(r);
    bool is_int = acc_is_int(r);
    plan pl = plan_of(r);
    acc *partial = scratch;
    int nt = nthreads < 1 ? 1 : nthreads;
#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(static)
    for (int64_t it = 0; it < pl.items; it++) {
        if (pl.rows) run_item_rows(r, lp, &pl, is_int, partial, it);
        else run_item_outputs(r, lp, &pl, is_int, partial, it);
    }
    if (pl.parts == 1) return;
#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(static)
    for (int64_t o = 0; o < r->nout; o++) {
        acc a = partial[o * pl.parts];
        for (int64_t c = 1; c < pl.parts; c++) acc_combine(r->kind, is_int, &a, &partial[o * pl.parts + c]);
        finish(r, is_int, &a, o);
    }
}
