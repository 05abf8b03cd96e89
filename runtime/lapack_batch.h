/* What the LAPACK operators share (op_lapack.c, op_lapack_factor.c): a
 * tensor read as a batch of matrices, column-major scratch copies (LAPACK's
 * layout) and back, scratch through the storage cache, and ATen's input
 * checks (LinearAlgebraUtils.h) and _linalg_check_errors. */
#ifndef TJIT_RUNTIME_LAPACK_BATCH_H
#define TJIT_RUNTIME_LAPACK_BATCH_H

#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "internal.h"
/* ---- matrices of a batch ---- */

/* A tensor's elements as a batch of matrices: its shape and strides, with a
 * vector B (linalg.solve's vector case) read as [.., n, 1]. */
typedef struct mats {
    char *p;
    tj_dtype dtype;
    int ndim;
    int64_t shape[TJ_MAX_DIMS + 1], strides[TJ_MAX_DIMS + 1];
} mats;

static inline mats mats_of(const tj_tensor *t, bool as_column)
{
    mats m = {tj_tensor_ptr(t), t->dtype, t->ndim, {0}, {0}};
    memcpy(m.shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(m.strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    if (as_column) m.shape[m.ndim] = 1, m.strides[m.ndim++] = 1;
    return m;
}

static inline int64_t rows_of(const mats *m) { return m->shape[m->ndim - 2]; }
static inline int64_t cols_of(const mats *m) { return m->shape[m->ndim - 1]; }

/* The element offset of batch item b (row-major over `bshape`, nb dims) in
 * m, whose `mdims` trailing dims are not batch dims and whose batch dims
 * broadcast against bshape (right-aligned; size 1 repeats). */
static inline int64_t item_offset(const mats *m, int mdims, int nb, const int64_t *bshape, int64_t b)
{
    int64_t off = 0;
    int mb = m->ndim - mdims;
    for (int d = nb - 1; d >= 0; d--) {
        int64_t i = b % bshape[d];
        b /= bshape[d];
        int md = d - (nb - mb);
        if (md >= 0 && m->shape[md] != 1) off += i * m->strides[md];
    }
    return off;
}

static inline int64_t count_of(int nb, const int64_t *bshape)
{
    int64_t n = 1;
    for (int d = 0; d < nb; d++) n *= bshape[d];
    return n;
}

/* The matrix at offset `off` of m (r x c), or its transpose, into dst
 * column-major: dst[i + j * rows] = X[i][j], X the matrix copied. */
static inline void load_colmajor(const mats *m, int64_t off, bool transpose, void *dst)
{
    int64_t r = rows_of(m), c = cols_of(m), rs = m->strides[m->ndim - 2], cs = m->strides[m->ndim - 1];
    if (transpose) {
        int64_t t = r;
        r = c, c = t, t = rs, rs = cs, cs = t;
    }
    if (m->dtype == TJ_FLOAT64) {
        const double *s = (const double *)(void *)m->p + off;
        double *d = dst;
        for (int64_t j = 0; j < c; j++)
            for (int64_t i = 0; i < r; i++) d[i + j * r] = s[i * rs + j * cs];
    } else {
        const float *s = (const float *)(void *)m->p + off;
        float *d = dst;
        for (int64_t j = 0; j < c; j++)
            for (int64_t i = 0; i < r; i++) d[i + j * r] = s[i * rs + j * cs];
    }
}

/* The inverse of load_colmajor into item b of contiguous `out` (r x c
 * matrices): out[i][j] = X[i][j] with X column-major in src (transpose:
 * src holds X^T, c x r). */
static inline void store_rowmajor(const void *src, bool transpose, tj_dtype dtype, int64_t r, int64_t c, void *out,
                                  int64_t b)
{
    int64_t si = transpose ? c : 1, sj = transpose ? 1 : r;
    if (dtype == TJ_FLOAT64) {
        const double *s = src;
        double *d = (double *)out + b * r * c;
        for (int64_t i = 0; i < r; i++)
            for (int64_t j = 0; j < c; j++) d[i * c + j] = s[i * si + j * sj];
    } else {
        const float *s = src;
        float *d = (float *)out + b * r * c;
        for (int64_t i = 0; i < r; i++)
            for (int64_t j = 0; j < c; j++) d[i * c + j] = s[i * si + j * sj];
    }
}

/* Scratch for one batch item through the storage cache (a replayed plan
 * allocates nothing new). */
typedef struct scratch {
    void *p;
    size_t got;
} scratch;

static inline tj_status scratch_get(scratch *s, const char *op, size_t nbytes)
{
    s->p = tj_alloc_storage_bytes(nbytes ? nbytes : 1, &s->got);
    return s->p ? TJ_OK : tj_oom(op, nbytes);
}

static inline void scratch_release(scratch *s) { tj_free_storage_bytes(s->p, s->got); }

/* ---- shape checks (ATen's LinearAlgebraUtils.h) ---- */

static inline tj_status check_float(const char *op, const char *name, const tj_tensor *t)
{
    char s[96];
    if (!tj_dtype_is_float(t->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: %s %s of dtype %s: expected float32 or float64", op, name,
                        tj_shape_str(t->ndim, t->shape, s, sizeof s), tj_dtype_name(t->dtype));
    return TJ_OK;
}

static inline tj_status check_same_dtype(const char *op, const char *na, const tj_tensor *a, const char *nb,
                                         const tj_tensor *b)
{
    if (a->dtype != b->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: expected %s and %s to have the same dtype, but found %s of type %s and %s of type %s",
                        op, na, nb, na, tj_dtype_name(a->dtype), nb, tj_dtype_name(b->dtype));
    return TJ_OK;
}

/* ATen's checkIsMatrix; sizes must also fit LAPACK's int. */
static inline tj_status check_matrix(const char *op, const char *name, const tj_tensor *t)
{
    char s[96];
    if (t->ndim < 2)
        return tj_error(TJ_ERR_SHAPE, "%s: the input tensor %s %s must have at least 2 dimensions", op, name,
                        tj_shape_str(t->ndim, t->shape, s, sizeof s));
    if (t->shape[t->ndim - 2] > INT_MAX / 2 || t->shape[t->ndim - 1] > INT_MAX / 2)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: %s %s: a matrix dimension exceeds LAPACK's int range", op, name,
                        tj_shape_str(t->ndim, t->shape, s, sizeof s));
    return TJ_OK;
}

/* ATen's squareCheckInputs: float, at least 2-D, square. */
static inline tj_status check_square(const char *op, const char *name, const tj_tensor *t)
{
    char s[96];
    tj_status st;
    if ((st = check_float(op, name, t)) || (st = check_matrix(op, name, t))) return st;
    if (t->shape[t->ndim - 1] != t->shape[t->ndim - 2])
        return tj_error(TJ_ERR_SHAPE, "%s: %s must be batches of square matrices, but they are %" PRId64 " by %" PRId64
                        " matrices (%s)", op, name, t->shape[t->ndim - 2], t->shape[t->ndim - 1],
                        tj_shape_str(t->ndim, t->shape, s, sizeof s));
    return TJ_OK;
}

/* The error of the first item whose info is not 0, for the _ex operators
 * with check_errors (ATen's _linalg_check_errors). */
static inline tj_status check_info(const char *op, const char *api, const char *routine, const tj_tensor *A,
                                   const tj_tensor *info, const char *problem)
{
    const int64_t *v = (const int64_t *)(void *)tj_tensor_ptr(info);
    char s[96];
    for (int64_t i = 0; i < info->numel; i++)
        if (v[i] != 0)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s (%s): batch element %" PRId64 " of A %s: %s (LAPACK %s info %"
                            PRId64 ")", op, api, i, tj_shape_str(A->ndim, A->shape, s, sizeof s), problem, routine, v[i]);
    return TJ_OK;
}

#endif
