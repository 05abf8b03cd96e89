/* Selection by values (kernels/masked.h): one pass over the positions in
 * row-major order, rows of the last dim inner. Single-threaded: each output
 * position depends on the count of true positions before it. */
#include "masked.h"

#include <string.h>

/* The rows of `shape` (all dims but the last) and a row's length; 0 rows
 * for an empty shape. A 0-dim shape is one row of one element. */
typedef struct rows {
    int ndim;
    const int64_t *shape;
    int64_t n_rows, len;
    int64_t idx[TJ_MAX_DIMS]; /* the current row's coordinates */
} rows;

static rows rows_of(int ndim, const int64_t *shape)
{
    rows r = {.ndim = ndim, .shape = shape, .n_rows = 1, .len = ndim ? shape[ndim - 1] : 1};
    for (int d = 0; d < ndim - 1; d++) r.n_rows *= shape[d];
    if (r.len == 0) r.n_rows = 0;
    memset(r.idx, 0, sizeof r.idx);
    return r;
}

/* The current row's first element offset through strides. */
static int64_t row_offset(const rows *r, const int64_t *strides)
{
    int64_t off = 0;
    for (int d = 0; d < r->ndim - 1; d++) off += r->idx[d] * strides[d];
    return off;
}

static int64_t last_stride(const rows *r, const int64_t *strides) { return r->ndim ? strides[r->ndim - 1] : 0; }

static void next_row(rows *r)
{
    for (int d = r->ndim - 2; d >= 0; d--) {
        if (++r->idx[d] < r->shape[d]) return;
        r->idx[d] = 0;
    }
}

static inline bool nonzero_at(tj_dtype dtype, const char *base, int64_t i)
{
    switch (dtype) {
    case TJ_FLOAT32: return ((const float *)base)[i] != 0;
    case TJ_FLOAT64: return ((const double *)base)[i] != 0;
    case TJ_INT64: return ((const int64_t *)base)[i] != 0;
    case TJ_BOOL: return ((const unsigned char *)base)[i] != 0;
    default: break; /* storage dtypes: the dispatcher keeps them from compute kernels */
    }
    return false;
}

int64_t tj_k_count_nonzero(tj_dtype dtype, const void *data, int ndim, const int64_t *shape, const int64_t *strides)
{
    return tj_k_nonzero(dtype, data, ndim, shape, strides, NULL, 0);
}

int64_t tj_k_nonzero(tj_dtype dtype, const void *data, int ndim, const int64_t *shape, const int64_t *strides,
                     int64_t *out, int64_t max)
{
    rows r = rows_of(ndim, shape);
    int64_t count = 0, step = last_stride(&r, strides);
    for (int64_t row = 0; row < r.n_rows; row++, next_row(&r)) {
        int64_t off = row_offset(&r, strides);
        for (int64_t k = 0; k < r.len; k++) {
            if (!nonzero_at(dtype, data, off + k * step)) continue;
            if (count < max) {
                int64_t *at = out + count * ndim;
                memcpy(at, r.idx, sizeof(int64_t) * (size_t)(ndim ? ndim - 1 : 0));
                if (ndim) at[ndim - 1] = k;
            }
            count++;
        }
    }
    return count;
}

int64_t tj_k_masked_select(size_t elem, void *out, int64_t max, const void *src, const int64_t *src_strides,
                           const bool *mask, const int64_t *mask_strides, int ndim, const int64_t *shape)
{
    rows r = rows_of(ndim, shape);
    int64_t count = 0, sstep = last_stride(&r, src_strides), mstep = last_stride(&r, mask_strides);
    for (int64_t row = 0; row < r.n_rows; row++, next_row(&r)) {
        const char *s = (const char *)src + row_offset(&r, src_strides) * (int64_t)elem;
        const bool *m = mask + row_offset(&r, mask_strides);
        for (int64_t k = 0; k < r.len; k++) {
            if (!m[k * mstep]) continue;
            if (count < max) memcpy((char *)out + count * (int64_t)elem, s + k * sstep * (int64_t)elem, elem);
            count++;
        }
    }
    return count;
}

void tj_k_masked_scatter(size_t elem, void *dst, const void *self, const int64_t *self_strides, const bool *mask,
                         const int64_t *mask_strides, int ndim, const int64_t *shape, const void *source)
{
    rows r = rows_of(ndim, shape);
    int64_t j = 0, sstep = last_stride(&r, self_strides), mstep = last_stride(&r, mask_strides);
    char *d = dst;
    for (int64_t row = 0; row < r.n_rows; row++, next_row(&r)) {
        const char *s = (const char *)self + row_offset(&r, self_strides) * (int64_t)elem;
        const bool *m = mask + row_offset(&r, mask_strides);
        for (int64_t k = 0; k < r.len; k++, d += elem) {
            const char *from = m[k * mstep] ? (const char *)source + j++ * (int64_t)elem : s + k * sstep * (int64_t)elem;
            memcpy(d, from, elem);
        }
    }
}
