/* gather, scatter_add and scatter along one dim (see index.h). The innermost dim of
 * the index shape is walked as a run; the outer positions are enumerated
 * with a multi-index counter (split across threads for gather). */
#include <string.h>

#include "cpu_isa.h"
#include "index.h"
#include "index_isa.h"
#include "parallel.h"

/* Offsets of row `row` (a flat position over the outer ndim-1 dims of shape)
 * in up to three strided arrays (NULL strides: unused). Dim skip[k] of array
 * k is left out (-1: none): the index supplies that coordinate. */
static void row_offsets(int64_t row, int ndim, const int64_t *shape, const int64_t *const strides[3],
                        const int skip[3], int64_t off[3])
{
    off[0] = off[1] = off[2] = 0;
    for (int d = ndim - 2; d >= 0; d--) {
        int64_t i = row % shape[d];
        row /= shape[d];
        for (int k = 0; k < 3; k++)
            if (strides[k] && d != skip[k]) off[k] += i * strides[k][d];
    }
}

/* Blocks (one per thread) to split n items into: at most nthreads and
 * TJ_K_MAX_PARTICIPANTS, each of at least min_block items, at least one. */
static int blocks_for(int nthreads, int64_t n, int64_t min_block)
{
    int64_t most = n / min_block;
    int nb = nthreads > TJ_K_MAX_PARTICIPANTS ? TJ_K_MAX_PARTICIPANTS : nthreads;
    if (nb > most) nb = (int)most;
    return nb < 1 ? 1 : nb;
}

/* Values a thread checks at least: 128 KiB of index, ~10 us, well above
 * the cost of handing a block to another thread. */
#define FIND_MIN_BLOCK 16384

/* tj_k_index_find_invalid's walk: the index over `walk` (its shape with
 * broadcast dims cut to 1), rows of `inner` values, and per block of the
 * split the first walked position holding an invalid value (or -1). */
typedef struct find_args {
    tj_k_index_array index;
    int ndim;
    const int64_t *walk;
    int64_t inner, size;
    int64_t first[TJ_K_MAX_PARTICIPANTS];
} find_args;

/* The first j in [j0, j1) with p[j * s] outside [0, size), or -1. */
static int64_t first_invalid(const int64_t *p, int64_t s, int64_t j0, int64_t j1, int64_t size)
{
    if (s == 1 && tj_k_isa_active() == TJ_K_ISA_AVX512) {
        int64_t j = tj_k_index_first_invalid_avx512(p + j0, j1 - j0, size);
        return j < 0 ? -1 : j0 + j;
    }
    for (int64_t j = j0; j < j1; j++)
        if ((uint64_t)p[j * s] >= (uint64_t)size) return j; /* negative values wrap to huge ones */
    return -1;
}

/* Walked positions [begin, end), row by row. */
static void find_block(void *ctx, int t, int64_t begin, int64_t end)
{
    find_args *a = ctx;
    const int64_t *const strides[3] = {a->index.strides, NULL, NULL};
    const int skip[3] = {-1, -1, -1};
    int64_t s = a->index.strides[a->ndim - 1], inner = a->inner, size = a->size;
    a->first[t] = -1;
    for (int64_t pos = begin; pos < end;) {
        int64_t r = pos / inner, j0 = pos % inner, j1 = end - pos < inner - j0 ? j0 + (end - pos) : inner, off[3];
        row_offsets(r, a->ndim, a->walk, strides, skip, off);
        const int64_t *p = (const int64_t *)a->index.data + off[0];
        int64_t bad = first_invalid(p, s, j0, j1, size);
        if (bad >= 0) {
            a->first[t] = r * inner + bad;
            return;
        }
        pos += j1 - j0;
    }
}

int64_t tj_k_index_find_invalid(tj_k_index_array index, int ndim, const int64_t *shape, int64_t size, int64_t *value,
                                int nthreads)
{
    /* A broadcast dim (stride 0) repeats the same values: it is checked at
     * position 0 only, which finds the same first invalid value (the first
     * one in row-major order has every broadcast coordinate 0). */
    int64_t walk[TJ_MAX_DIMS] = {0}, flat_stride[TJ_MAX_DIMS] = {0};
    for (int d = ndim - 1; d >= 0; d--) {
        flat_stride[d] = d == ndim - 1 ? 1 : flat_stride[d + 1] * shape[d + 1];
        walk[d] = index.strides[d] == 0 && shape[d] > 0 ? 1 : shape[d];
    }
    static const int64_t scalar_strides[1] = {0};
    if (ndim == 0) { /* one value: a row of one */
        walk[0] = 1;
        index.strides = scalar_strides;
        ndim = 1;
    }
    int64_t inner = walk[ndim - 1], total = inner;
    for (int d = 0; d < ndim - 1; d++) total *= walk[d];
    if (total == 0) return -1;
    /* Blocks in order: the first block with an invalid value holds the
     * first one, whichever thread ran which block. */
    int nt = blocks_for(nthreads, total, FIND_MIN_BLOCK);
    find_args a = {.index = index, .ndim = ndim, .walk = walk, .inner = inner, .size = size};
    tj_k_parallel(nt, total, find_block, &a);
    for (int t = 0; t < nt; t++) {
        if (a.first[t] < 0) continue;
        int64_t r = a.first[t] / inner, j = a.first[t] % inner, off[3];
        row_offsets(r, ndim, walk, (const int64_t *const[3]){index.strides, NULL, NULL}, (const int[3]){-1, -1, -1},
                    off);
        *value = ((const int64_t *)index.data)[off[0] + j * index.strides[ndim - 1]];
        int64_t flat = j * flat_stride[ndim - 1];
        for (int d = ndim - 2; d >= 0; d--) { /* the row's coordinates, in the full shape */
            flat += r % walk[d] * flat_stride[d];
            r /= walk[d];
        }
        return flat;
    }
    return -1;
}

/* The operands of gather and scatter_add, for their row loops. */
typedef struct index_args {
    tj_k_index_array out, src, index; /* gather: out is contiguous in shape */
    int ndim, dim;
    const int64_t *shape;
    size_t esize;   /* gather and scatter, which copy elements by size */
    tj_dtype dtype; /* scatter_add, which adds them (esize 0) */
} index_args;

/* gather's row loop: index_args, the indexed dim's size, and per block
 * whether it met an index value outside [0, size). */
typedef struct gather_args {
    index_args a;
    int64_t size;
    bool invalid[TJ_K_MAX_PARTICIPANTS];
} gather_args;

#define GATHER_RUN(T)                                                                                  \
    for (int64_t j = 0; j < n; j++) {                                                                  \
        int64_t i = idx[j * is];                                                                       \
        if ((uint64_t)i >= (uint64_t)size) return false; /* negative values wrap to huge ones */       \
        ((T *)o)[j] = ((const T *)s)[i * ds + j * ss];                                                 \
    }                                                                                                  \
    return true;

/* One row: o[j] = s[idx[j * is] * ds + j * ss] for j in [0, n), elements
 * of esize bytes; false at an index value outside [0, size). A contiguous
 * index takes AVX-512's vector gathers (4 and 8 bytes): with the values
 * checked in the same pass, [1024, 1, 196] int64 from an expanded [8, 196]
 * took 92 us, as long as a memcpy of its 1.6 MB, against 144 us for the
 * checking pass and the scalar loop before. */
static bool gather_run(size_t esize, char *o, const char *s, const int64_t *idx, int64_t n, int64_t is, int64_t ds,
                       int64_t ss, int64_t size)
{
    if (is == 1 && tj_k_isa_active() == TJ_K_ISA_AVX512) {
        if (esize == 8) return tj_k_gather_run64_avx512((uint64_t *)o, (const uint64_t *)s, idx, n, ds, ss, size);
        if (esize == 4) return tj_k_gather_run32_avx512((uint32_t *)o, (const uint32_t *)s, idx, n, ds, ss, size);
    }
    switch (esize) {
    case 8: GATHER_RUN(uint64_t)
    case 4: GATHER_RUN(uint32_t)
    default: GATHER_RUN(uint8_t)
    }
}

static void gather_rows(void *ctx, int t, int64_t begin, int64_t end)
{
    gather_args *g = ctx;
    const index_args *a = &g->a;
    int ndim = a->ndim, last = ndim - 1, dim = a->dim;
    int64_t inner = a->shape[last], size = g->size, esize = (int64_t)a->esize;
    /* the run's dim in src: indexed (dim == last) or walked */
    int64_t ds = a->src.strides[dim], ss = dim == last ? 0 : a->src.strides[last], is = a->index.strides[last];
    const int64_t *const strides[3] = {a->src.strides, NULL, a->index.strides};
    const int skip[3] = {dim, -1, -1};
    g->invalid[t] = false;
    for (int64_t r = begin; r < end; r++) {
        int64_t off[3];
        row_offsets(r, ndim, a->shape, strides, skip, off);
        const char *s = (const char *)a->src.data + off[0] * esize;
        const int64_t *idx = (const int64_t *)a->index.data + off[2];
        char *o = (char *)a->out.data + r * inner * esize;
        bool valid;
        if (is == 0 && dim != last && ss == 1) { /* one index for a contiguous run: index_select's rows */
            valid = (uint64_t)idx[0] < (uint64_t)size;
            if (valid) memcpy(o, s + idx[0] * ds * esize, (size_t)(inner * esize));
        } else {
            valid = gather_run(a->esize, o, s, idx, inner, is, ds, ss, size);
        }
        if (!valid) {
            g->invalid[t] = true;
            return;
        }
    }
}

bool tj_k_gather(size_t esize, void *out, tj_k_index_array src, tj_k_index_array index, int ndim,
                 const int64_t *shape, int dim, int64_t size, int nthreads)
{
    int64_t rows = 1;
    for (int d = 0; d < ndim - 1; d++) rows *= shape[d];
    if (shape[ndim - 1] == 0 || rows == 0) return true;
    int nt = blocks_for(nthreads, rows, 1);
    gather_args g = {.a = {.out = {out, NULL}, .src = src, .index = index, .ndim = ndim, .dim = dim, .shape = shape,
                           .esize = esize},
                     .size = size};
    tj_k_parallel(nt, rows, gather_rows, &g);
    for (int t = 0; t < nt; t++)
        if (g.invalid[t]) return false;
    return true;
}

/* One run: out[idx[j] along dim] = ACC, of *dst and v = src[j]. The
 * common layout (index and src contiguous along the run, the run's dim the
 * indexed one, out contiguous there) gets its own loop (no stride
 * multiplications). */
#define SCATTER_RUN(T, ACC)                                                                            \
    do {                                                                                               \
        T *o = (T *)a->out.data + off[0];                                                              \
        const T *s = (const T *)a->src.data + off[1];                                                  \
        if (ds == 1 && os == 0 && ss == 1 && is == 1) {                                                \
            for (int64_t j = 0; j < inner; j++) {                                                      \
                T *dst = o + idx[j];                                                                   \
                T v = s[j];                                                                            \
                *dst = ACC;                                                                            \
            }                                                                                          \
            break;                                                                                     \
        }                                                                                              \
        for (int64_t j = 0; j < inner; j++) {                                                          \
            T *dst = o + idx[j * is] * ds + j * os;                                                    \
            T v = s[j * ss];                                                                           \
            *dst = ACC;                                                                                \
        }                                                                                              \
    } while (0)

/* Rows [begin, end) of scatter (esize set) or scatter_add. */
static void scatter_rows(void *ctx, int t, int64_t begin, int64_t end)
{
    const index_args *a = ctx;
    int ndim = a->ndim, last = ndim - 1, dim = a->dim;
    int64_t inner = a->shape[last];
    int64_t ds = a->out.strides[dim], os = dim == last ? 0 : a->out.strides[last], ss = a->src.strides[last],
            is = a->index.strides[last];
    const int64_t *const strides[3] = {a->out.strides, a->src.strides, a->index.strides};
    const int skip[3] = {dim, -1, -1};
    (void)t;
    for (int64_t r = begin; r < end; r++) {
        int64_t off[3];
        row_offsets(r, ndim, a->shape, strides, skip, off);
        const int64_t *idx = (const int64_t *)a->index.data + off[2];
        if (a->esize) {
            switch (a->esize) {
            case 8: SCATTER_RUN(uint64_t, v); break;
            case 4: SCATTER_RUN(uint32_t, v); break;
            default: SCATTER_RUN(uint8_t, v); break;
            }
            continue;
        }
        switch (a->dtype) {
        case TJ_FLOAT32: SCATTER_RUN(float, *dst + v); break;
        case TJ_FLOAT64: SCATTER_RUN(double, *dst + v); break;
        case TJ_INT64: SCATTER_RUN(int64_t, (int64_t)((uint64_t)*dst + (uint64_t)v)); break;
        case TJ_BOOL: SCATTER_RUN(uint8_t, (uint8_t)(*dst || v)); break;
        default: break; /* storage dtypes: the dispatcher keeps them from compute kernels */
        }
    }
}

/* The run path (index_isa.h) pays when the run list, built once per call
 * at about the cost of one element-by-element pass over a row, serves
 * several long rows: the index is then the same for every row (stride 0
 * in the outer dims, as the expanded col2im index of a decomposed
 * convolution's input gradient) and runs along the last dim. */
#define RUNS_MIN_INNER 1024
#define RUNS_MIN_ROWS 4
/* Runs per index entry the list holds at most: shorter runs on average
 * (scattered indices) gain nothing over the element-by-element loop. */
#define RUNS_PER_ENTRY 8

static bool runs_pay(tj_dtype dtype, tj_k_index_array out, tj_k_index_array src, tj_k_index_array index, int ndim,
                     const int64_t *shape, int dim)
{
    int last = ndim - 1;
    if (dtype != TJ_FLOAT32 || dim != last || shape[last] < RUNS_MIN_INNER) return false;
    if (out.strides[last] != 1 || src.strides[last] != 1 || index.strides[last] != 1) return false;
    int64_t rows = 1;
    for (int d = 0; d < last; d++) {
        if (shape[d] > 1 && index.strides[d] != 0) return false;
        rows *= shape[d];
    }
    return rows >= RUNS_MIN_ROWS && tj_k_isa_active() == TJ_K_ISA_AVX512;
}

/* Run list entries per scratch: RUNS_PER_ENTRY per index entry, plus one
 * per block it is built in (at most TJ_K_MAX_PARTICIPANTS). */
static int64_t runs_capacity(int64_t inner) { return inner / RUNS_PER_ENTRY + TJ_K_MAX_PARTICIPANTS; }

size_t tj_k_scatter_add_scratch_bytes(tj_dtype dtype, tj_k_index_array out, tj_k_index_array src,
                                      tj_k_index_array index, int ndim, const int64_t *shape, int dim)
{
    if (!runs_pay(dtype, out, src, index, ndim, shape, dim)) return 0;
    return (size_t)runs_capacity(shape[ndim - 1]) * sizeof(int64_t);
}

/* The runs of idx[0..n): up to 16 consecutive values each, encoded as
 * start * 16 + (length - 1). -1 when they would be more than cap. */
static int64_t build_runs(const int64_t *idx, int64_t n, int64_t *runs, int64_t cap)
{
    int64_t nr = 0;
    for (int64_t j = 0; j < n;) {
        int64_t start = idx[j], len = 1;
        while (len < 16 && j + len < n && idx[j + len] == start + len) len++;
        if (nr == cap) return -1;
        runs[nr++] = start * 16 + (len - 1);
        j += len;
    }
    return nr;
}

/* Index entries a block of the run list holds at least: building it costs
 * ~1 ns an entry, a hand-off to another thread ~1 us. */
#define RUNS_MIN_BLOCK 16384

/* The run list, built in blocks of the index row (tj_k_parallel's split,
 * one per thread): block b's runs cover entries [begin[b], begin[b] + len)
 * and sit at runs + at[b], count[b] of them (-1: more than the block's
 * share). A run never crosses a block's end, so the list may hold a few
 * more runs than one built in one piece; each element of out still gets
 * src's values in index order. */
typedef struct run_list {
    const int64_t *idx;
    int64_t *runs;
    int nblocks;
    int64_t begin[TJ_K_MAX_PARTICIPANTS], at[TJ_K_MAX_PARTICIPANTS], count[TJ_K_MAX_PARTICIPANTS];
} run_list;

static void build_block(void *ctx, int t, int64_t begin, int64_t end)
{
    run_list *l = ctx;
    /* block t's share of runs_capacity: its own entries' and one more,
     * after the shares of the blocks before it */
    l->begin[t] = begin;
    l->at[t] = begin / RUNS_PER_ENTRY + t;
    l->count[t] = build_runs(l->idx + begin, end - begin, l->runs + l->at[t], (end - begin) / RUNS_PER_ENTRY + 1);
}

/* The run path's rows: index_args plus the run list. */
typedef struct run_rows_args {
    index_args a;
    const run_list *list;
} run_rows_args;

static void scatter_add_run_rows(void *ctx, int t, int64_t begin, int64_t end)
{
    const run_rows_args *ra = ctx;
    const index_args *a = &ra->a;
    const run_list *l = ra->list;
    const int64_t *const strides[3] = {a->out.strides, a->src.strides, NULL};
    const int skip[3] = {a->dim, -1, -1};
    (void)t;
    for (int64_t r = begin; r < end;) {
        int nrows = end - r < TJ_K_SCATTER_ADD_ROWS_AT_ONCE ? (int)(end - r) : TJ_K_SCATTER_ADD_ROWS_AT_ONCE;
        float *o[TJ_K_SCATTER_ADD_ROWS_AT_ONCE];
        const float *s[TJ_K_SCATTER_ADD_ROWS_AT_ONCE];
        for (int q = 0; q < nrows; q++) {
            int64_t off[3];
            row_offsets(r + q, a->ndim, a->shape, strides, skip, off);
            o[q] = (float *)a->out.data + off[0];
            s[q] = (const float *)a->src.data + off[1];
        }
        for (int b = 0; b < l->nblocks; b++) {
            const float *sb[TJ_K_SCATTER_ADD_ROWS_AT_ONCE];
            for (int q = 0; q < nrows; q++) sb[q] = s[q] + l->begin[b];
            tj_k_scatter_add_runs_f32_avx512(o, sb, nrows, l->runs + l->at[b], l->count[b]);
        }
        r += nrows;
    }
}

void tj_k_scatter_add(tj_dtype dtype, tj_k_index_array out, tj_k_index_array src, tj_k_index_array index, int ndim,
                      const int64_t *shape, int dim, void *scratch, int nthreads)
{
    int64_t rows = 1;
    for (int d = 0; d < ndim - 1; d++) rows *= shape[d];
    if (shape[ndim - 1] == 0) return;
    index_args a = {.out = out, .src = src, .index = index, .ndim = ndim, .dim = dim, .shape = shape, .dtype = dtype};
    if (scratch && runs_pay(dtype, out, src, index, ndim, shape, dim)) {
        int64_t inner = shape[ndim - 1];
        int nb = blocks_for(nthreads, inner, RUNS_MIN_BLOCK);
        run_list l = {.idx = index.data, .runs = scratch, .nblocks = nb};
        tj_k_parallel(nb, inner, build_block, &l);
        bool fits = true;
        for (int b = 0; b < nb; b++) fits = fits && l.count[b] >= 0;
        if (fits) {
            run_rows_args ra = {a, &l};
            tj_k_parallel(nthreads, rows, scatter_add_run_rows, &ra);
            return;
        }
    }
    /* rows write disjoint parts of out only when the run's dim is the
     * indexed one; otherwise they run in order, keeping the sums'
     * order. (Threads taking blocks of every row's positions keep the
     * order too, but ran 2x slower than one thread on [4096, 768] into
     * [1000, 768] along dim 0, both threads writing halves of the same
     * rows of out.) */
    tj_k_parallel(dim == ndim - 1 ? nthreads : 1, rows, scatter_rows, &a);
}

/* scatter_add_rows' operands: index_args (shape the index's, dim the
 * last), self's row for each row of out, the indexed dim's size, and per
 * block whether it met an index value outside [0, size). */
typedef struct fused_args {
    index_args a;
    tj_k_index_array self;
    int64_t size;
    bool invalid[TJ_K_MAX_PARTICIPANTS];
} fused_args;

/* o[0..n) = self's row (elements of esize bytes, stride ss): a memset for a
 * zero broadcast value, a memcpy for a contiguous one. */
static void copy_row(size_t esize, char *o, const char *s, int64_t ss, int64_t n)
{
    static const char zero[8];
    if (ss == 0 && memcmp(s, zero, esize) == 0) {
        memset(o, 0, (size_t)n * esize);
    } else if (ss == 1) {
        memcpy(o, s, (size_t)n * esize);
    } else {
        for (int64_t j = 0; j < n; j++) memcpy(o + (size_t)j * esize, s + (size_t)(j * ss) * esize, esize);
    }
}

/* One row: o[idx[j * is]] = ACC of *dst and v = s[j * ss], j in [0, n),
 * in order; false at an index value outside [0, size). Contiguous index
 * and src (the max pool backward's) get their own loop, with no stride
 * multiplications. */
#define CHECKED_LOOP(T, ACC, IS, SS)                                                                   \
    for (int64_t j = 0; j < n; j++) {                                                                  \
        int64_t i = idx[j * (IS)];                                                                     \
        if ((uint64_t)i >= (uint64_t)size) return false; /* negative values wrap to huge ones */       \
        T *dst = (T *)orow + i;                                                                        \
        T v = ((const T *)srow)[j * (SS)];                                                             \
        *dst = ACC;                                                                                    \
    }
#define SCATTER_ADD_CHECKED(T, ACC)                                                                    \
    do {                                                                                               \
        if (is == 1 && ss == 1) CHECKED_LOOP(T, ACC, 1, 1)                                             \
        else CHECKED_LOOP(T, ACC, is, ss)                                                              \
    } while (0)

static bool scatter_add_row(tj_dtype dtype, void *orow, const void *srow, const int64_t *idx, int64_t n, int64_t is,
                            int64_t ss, int64_t size)
{
    switch (dtype) {
    case TJ_FLOAT32: SCATTER_ADD_CHECKED(float, *dst + v); break;
    case TJ_FLOAT64: SCATTER_ADD_CHECKED(double, *dst + v); break;
    case TJ_INT64: SCATTER_ADD_CHECKED(int64_t, (int64_t)((uint64_t)*dst + (uint64_t)v)); break;
    case TJ_BOOL: SCATTER_ADD_CHECKED(uint8_t, (uint8_t)(*dst || v)); break;
    default: break; /* storage dtypes: the dispatcher keeps them from compute kernels */
    }
    return true;
}

/* Rows [begin, end): out's row gets self's, then src's row added while it
 * is in cache. */
static void scatter_add_fused_rows(void *ctx, int t, int64_t begin, int64_t end)
{
    fused_args *f = ctx;
    const index_args *a = &f->a;
    int ndim = a->ndim, last = ndim - 1;
    size_t esize = tj_dtype_size(a->dtype);
    int64_t n = a->shape[last], size = f->size, is = a->index.strides[last], ss = a->src.strides[last],
            selfs = f->self.strides[last];
    const int64_t *const strides[3] = {a->out.strides, a->src.strides, a->index.strides};
    const int64_t *const self_strides[3] = {f->self.strides, NULL, NULL};
    const int skip[3] = {-1, -1, -1};
    f->invalid[t] = false;
    for (int64_t r = begin; r < end; r++) {
        int64_t off[3], soff[3];
        row_offsets(r, ndim, a->shape, strides, skip, off);
        row_offsets(r, ndim, a->shape, self_strides, skip, soff);
        char *o = (char *)a->out.data + (size_t)off[0] * esize;
        copy_row(esize, o, (const char *)f->self.data + (size_t)soff[0] * esize, selfs, size);
        if (!scatter_add_row(a->dtype, o, (const char *)a->src.data + (size_t)off[1] * esize,
                             (const int64_t *)a->index.data + off[2], n, is, ss, size)) {
            f->invalid[t] = true;
            return;
        }
    }
}

bool tj_k_scatter_add_rows(tj_dtype dtype, tj_k_index_array out, tj_k_index_array self, tj_k_index_array src,
                           tj_k_index_array index, int ndim, const int64_t *shape, int64_t size, int nthreads)
{
    int64_t rows = 1;
    for (int d = 0; d < ndim - 1; d++) rows *= shape[d];
    if (rows == 0) return true;
    int nt = blocks_for(nthreads, rows, 1);
    fused_args f = {.a = {.out = out, .src = src, .index = index, .ndim = ndim, .dim = ndim - 1, .shape = shape,
                          .dtype = dtype},
                    .self = self,
                    .size = size};
    tj_k_parallel(nt, rows, scatter_add_fused_rows, &f);
    for (int t = 0; t < nt; t++)
        if (f.invalid[t]) return false;
    return true;
}

void tj_k_scatter(size_t esize, tj_k_index_array out, tj_k_index_array src, tj_k_index_array index, int ndim,
                  const int64_t *shape, int dim, int nthreads)
{
    int64_t rows = 1;
    for (int d = 0; d < ndim - 1; d++) rows *= shape[d];
    if (shape[ndim - 1] == 0 || rows == 0) return;
    index_args a = {.out = out, .src = src, .index = index, .ndim = ndim, .dim = dim, .shape = shape, .esize = esize};
    tj_k_parallel(dim == ndim - 1 ? nthreads : 1, rows, scatter_rows, &a);
}
