/* scatter_reduce (see scatter_reduce.h): the index positions enumerated in
 * row-major order with a multi-index counter, one element at a time, so
 * that every target element receives its values in the order of their
 * coordinate along dim, as ATen's CPU loop. */
#include "scatter_reduce.h"

#include <math.h>
#include <string.h>

/* Offsets (elements) of the current position in index, src and out. */
typedef struct walk {
    int ndim, dim;
    const int64_t *shape, *istr, *sstr;
    int64_t ostr[TJ_MAX_DIMS];
    int64_t c[TJ_MAX_DIMS];
} walk;

static void walk_init(walk *w, int ndim, int dim, const int64_t *shape, const int64_t *out_shape,
                      const int64_t *istr, const int64_t *sstr)
{
    *w = (walk){.ndim = ndim, .dim = dim, .shape = shape, .istr = istr, .sstr = sstr};
    for (int d = ndim - 1; d >= 0; d--) w->ostr[d] = d == ndim - 1 ? 1 : w->ostr[d + 1] * out_shape[d + 1];
}

/* The flat position q in out and the offset in src of the current
 * position, then the counter moved on. */
static int64_t walk_next(walk *w, const int64_t *index, int64_t *src_off)
{
    int64_t io = 0, so = 0, q = 0;
    for (int d = 0; d < w->ndim; d++) {
        io += w->c[d] * w->istr[d];
        so += w->c[d] * w->sstr[d];
        if (d != w->dim) q += w->c[d] * w->ostr[d];
    }
    q += index[io] * w->ostr[w->dim];
    *src_off = so;
    for (int d = w->ndim - 1; d >= 0; d--) {
        if (++w->c[d] < w->shape[d]) break;
        w->c[d] = 0;
    }
    return q;
}

#define SCATTER_REDUCE(T, name, LOWEST, HIGHEST, ADD, MUL, ISNAN, DIV)                                     \
    static void name(tj_k_scatter_reduction op, bool include_self, T *out, int64_t nout, const int64_t *out_shape, \
                     tj_k_index_array src, tj_k_index_array index, int ndim, const int64_t *shape, int dim,   \
                     int64_t n, int64_t *count)                                                            \
    {                                                                                                      \
        const T *s = src.data;                                                                             \
        const int64_t *ix = index.data;                                                                    \
        walk w;                                                                                            \
        int64_t so;                                                                                        \
        if (!include_self) {                                                                               \
            T id = op == TJ_K_SCATTER_PROD ? (T)1 : op == TJ_K_SCATTER_AMAX ? LOWEST                         \
                 : op == TJ_K_SCATTER_AMIN ? HIGHEST : (T)0;                                               \
            walk_init(&w, ndim, dim, shape, out_shape, index.strides, src.strides);                        \
            for (int64_t k = 0; k < n; k++) out[walk_next(&w, ix, &so)] = id;                              \
        }                                                                                                  \
        if (count)                                                                                         \
            for (int64_t k = 0; k < nout; k++) count[k] = include_self;                                    \
        walk_init(&w, ndim, dim, shape, out_shape, index.strides, src.strides);                            \
        for (int64_t k = 0; k < n; k++) {                                                                  \
            int64_t q = walk_next(&w, ix, &so);                                                            \
            T v = s[so], *o = &out[q];                                                                     \
            switch (op) {                                                                                  \
            case TJ_K_SCATTER_MEAN: count[q]++; /* fall through */                                         \
            case TJ_K_SCATTER_SUM: *o = ADD(*o, v); break;                                                 \
            case TJ_K_SCATTER_PROD: *o = MUL(*o, v); break;                                                \
            case TJ_K_SCATTER_AMAX: *o = ISNAN(v) ? v : *o < v ? v : *o; break;                            \
            case TJ_K_SCATTER_AMIN: *o = ISNAN(v) ? v : v < *o ? v : *o; break;                            \
            }                                                                                              \
        }                                                                                                  \
        if (op == TJ_K_SCATTER_MEAN)                                                                       \
            for (int64_t k = 0; k < nout; k++) out[k] = DIV(out[k], count[k] ? count[k] : 1);              \
    }

#define F_ADD(a, b) ((a) + (b))
#define F_MUL(a, b) ((a) * (b))
#define F_DIV(a, c) ((a) / (c))
#define I_ADD(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define I_MUL(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))
#define I_NAN(v) ((void)(v), 0)
/* floor division by a positive count */
#define I_DIV(a, c) ((a) / (c) - ((a) % (c) < 0))
SCATTER_REDUCE(float, reduce_f32, -INFINITY, INFINITY, F_ADD, F_MUL, isnan, F_DIV)
SCATTER_REDUCE(double, reduce_f64, -INFINITY, INFINITY, F_ADD, F_MUL, isnan, F_DIV)
SCATTER_REDUCE(int64_t, reduce_i64, INT64_MIN, INT64_MAX, I_ADD, I_MUL, I_NAN, I_DIV)
/* bool (one byte, 0 or 1): sum is or, prod is and, as ATen's bool
 * arithmetic; no mean (refused before the kernel) */
#define B_OR(a, b) ((uint8_t)((a) | (b)))
#define B_AND(a, b) ((uint8_t)((a) & (b)))
SCATTER_REDUCE(uint8_t, reduce_b8, 0, 1, B_OR, B_AND, I_NAN, I_DIV)

void tj_k_scatter_reduce(tj_dtype dtype, tj_k_scatter_reduction op, bool include_self, void *out,
                         const int64_t *out_shape, tj_k_index_array src, tj_k_index_array index, int ndim,
                         const int64_t *shape, int dim, int64_t *count)
{
    int64_t n = 1, nout = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d], nout *= out_shape[d];
    if (op != TJ_K_SCATTER_MEAN) count = NULL;
    switch (dtype) {
    case TJ_FLOAT32: reduce_f32(op, include_self, out, nout, out_shape, src, index, ndim, shape, dim, n, count); break;
    case TJ_FLOAT64: reduce_f64(op, include_self, out, nout, out_shape, src, index, ndim, shape, dim, n, count); break;
    case TJ_INT64: reduce_i64(op, include_self, out, nout, out_shape, src, index, ndim, shape, dim, n, count); break;
    case TJ_BOOL: reduce_b8(op, include_self, out, nout, out_shape, src, index, ndim, shape, dim, n, count); break;
    default: break;
    }
}
