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

int64_t tj_k_index_find_invalid(tj_k_index_array index, int ndim, const int64_t *shape, int64_t size, int64_t *value)
{
    /* A broadcast dim (stride 0) repeats the same values: it is checked at
     * position 0 only, which finds the same first invalid value (the first
     * one in row-major order has every broadcast coordinate 0). */
    int64_t walk[TJ_MAX_DIMS] = {0}, flat_stride[TJ_MAX_DIMS] = {0};
    for (int d = ndim - 1; d >= 0; d--) {
        flat_stride[d] = d == ndim - 1 ? 1 : flat_stride[d + 1] * shape[d + 1];
        walk[d] = index.strides[d] == 0 && shape[d] > 0 ? 1 : shape[d];
    }
    int64_t inner = ndim ? walk[ndim - 1] : 1, rows = 1;
    for (int d = 0; d < ndim - 1; d++) rows *= walk[d];
    const int64_t *const strides[3] = {index.strides, NULL, NULL};
    const int skip[3] = {-1, -1, -1};
    int64_t s = ndim ? index.strides[ndim - 1] : 0;
    for (int64_t r = 0; r < rows && inner; r++) {
        int64_t off[3];
        row_offsets(r, ndim, walk, strides, skip, off);
        const int64_t *p = (const int64_t *)index.data + off[0];
        for (int64_t j = 0; j < inner; j++)
            if (p[j * s] < 0 || p[j * s] >= size) {
                *value = p[j * s];
                int64_t flat = ndim ? j * flat_stride[ndim - 1] : 0;
                for (int d = ndim - 2; d >= 0; d--) { /* the row's coordinates, in the full shape */
                    flat += r % walk[d] * flat_stride[d];
                    r /= walk[d];
                }
                return flat;
            }
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

#define GATHER_RUN(T)                                                                                  \
    for (int64_t j = 0; j < inner; j++)                                                                \
        ((T *)o)[j] = ((const T *)s)[idx[j * is] * ds + j * ss];

static void gather_rows(void *ctx, int t, int64_t begin, int64_t end)
{
    const index_args *a = ctx;
    int ndim = a->ndim, last = ndim - 1, dim = a->dim;
    int64_t inner = a->shape[last];
    /* the run's dim in src: indexed (dim == last) or walked */
    int64_t ds = a->src.strides[dim], ss = dim == last ? 0 : a->src.strides[last], is = a->index.strides[last];
    const int64_t *const strides[3] = {a->src.strides, NULL, a->index.strides};
    const int skip[3] = {dim, -1, -1};
    (void)t;
    for (int64_t r = begin; r < end; r++) {
        int64_t off[3];
        row_offsets(r, ndim, a->shape, strides, skip, off);
        const char *s = (const char *)a->src.data + off[0] * (int64_t)a->esize;
        const int64_t *idx = (const int64_t *)a->index.data + off[2];
        char *o = (char *)a->out.data + r * inner * (int64_t)a->esize;
        if (is == 0 && dim != last && ss == 1) { /* one index for a contiguous run: index_select's rows */
            memcpy(o, s + idx[0] * ds * (int64_t)a->esize, (size_t)inner * a->esize);
            continue;
        }
        switch (a->esize) {
        case 8: GATHER_RUN(uint64_t) break;
        case 4: GATHER_RUN(uint32_t) break;
        default: GATHER_RUN(uint8_t) break;
        }
    }
}

void tj_k_gather(size_t esize, void *out, tj_k_index_array src, tj_k_index_array index, int ndim,
                 const int64_t *shape, int dim, int nthreads)
{
    int64_t rows = 1;
    for (int d = 0; d < ndim - 1; d++) rows *= shape[d];
    if (shape[ndim - 1] == 0 || rows == 0) return;
    index_args a = {.out = {out, NULL}, .src = src, .index = index, .ndim = ndim, .dim = dim, .shape = shape,
                    .esize = esize};
    tj_k_parallel(nthreads, rows, gather_rows, &a);
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

size_t tj_k_scatter_add_scratch_bytes(tj_dtype dtype, tj_k_index_array out, tj_k_index_array src,
                                      tj_k_index_array index, int ndim, const int64_t *shape, int dim)
{
    if (!runs_pay(dtype, out, src, index, ndim, shape, dim)) return 0;
    return (size_t)(shape[ndim - 1] / RUNS_PER_ENTRY + 1) * sizeof(int64_t);
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

/* The run path's rows: index_args plus the shared run list. */
typedef struct run_rows_args {
    index_args a;
    const int64_t *runs;
    int64_t nruns;
} run_rows_args;

static void scatter_add_run_rows(void *ctx, int t, int64_t begin, int64_t end)
{
    const run_rows_args *ra = ctx;
    const index_args *a = &ra->a;
    const int64_t *const strides[3] = {a->out.strides, a->src.strides, NULL};
    const int skip[3] = {a->dim, -1, -1};
    (void)t;
    for (int64_t r = begin; r < end; r++) {
        int64_t off[3];
        row_offsets(r, a->ndim, a->shape, strides, skip, off);
        tj_k_scatter_add_runs_f32_avx512((float *)a->out.data + off[0], (const float *)a->src.data + off[1],
                                         ra->runs, ra->nruns);
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
        int64_t nruns = build_runs(index.data, inner, scratch, inner / RUNS_PER_ENTRY + 1);
        if (nruns >= 0) {
            run_rows_args ra = {a, scratch, nruns};
            tj_k_parallel(nthreads, rows, scatter_add_run_rows, &ra);
            return;
        }
    }
    /* rows write disjoint parts of out only when the run's dim is the
     * indexed one; otherwise they run in order, keeping the sums'
     * order */
    tj_k_parallel(dim == ndim - 1 ? nthreads : 1, rows, scatter_rows, &a);
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
