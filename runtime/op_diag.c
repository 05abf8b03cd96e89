/* Diagonal matrices, as ATen 1.13: diag (a vector onto the diagonal of a
 * square matrix, or a copy of a matrix's diagonal), diag_embed (the last dim
 * onto the diagonal of two new dims) and trace (the sum of a matrix's
 * diagonal). diag and diag_embed fill zeros and copy into the diagonal view
 * (tj_zeros_with_diagonal, diagonal_backward's kernel). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "op_diag.h"
#include "op_inplace.h"
#include "op_view.h"

#define SHAPE_BUF 160

/* n + |offset|, the side of a matrix whose diagonal at `offset` has n
 * elements; an error naming op when it overflows. */
static tj_status embedded_side(const char *op, int64_t n, int64_t offset, int64_t *side)
{
    if (offset == INT64_MIN || __builtin_add_overflow(n, llabs(offset), side))
        return tj_error(TJ_ERR_SHAPE, "%s: a diagonal of %" PRId64 " elements at offset %" PRId64
                        " needs more than INT64_MAX rows", op, n, offset);
    return TJ_OK;
}

/* ---- diag_embed(self, offset, dim1, dim2) ---- */

#define DIAG_EMBED "aten::diag_embed"

/* The result's geometry: self's dims but the last, with dims dim1 and dim2
 * (wrapped over rank + 1) of size self.size(-1) + |offset| between them;
 * its diagonal (offset, dim1, dim2) has self's shape. Errors name op. */
static tj_status embed_geometry(const char *op, const tj_tensor *self, int64_t offset, int64_t dim1, int64_t dim2,
                                tj_meta *o)
{
    int nd = self->ndim + 1, d1, d2;
    int64_t side = 0, numel;
    if (nd > TJ_MAX_DIMS)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: the result would have more than %d dims", op, TJ_MAX_DIMS);
    if (tj_wrap_new_dim(op, dim1, self->ndim, &d1) != TJ_OK || tj_wrap_new_dim(op, dim2, self->ndim, &d2) != TJ_OK)
        return tj_last_status();
    if (d1 == d2)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: diagonal dimensions cannot be identical %" PRId64 ", %" PRId64,
                        op, dim1, dim2);
    int64_t n = self->ndim > 0 ? self->shape[self->ndim - 1] : 1;
    if (embedded_side(op, n, offset, &side) != TJ_OK) return tj_last_status();
    o->dtype = self->dtype;
    o->ndim = nd;
    for (int d = 0, k = 0; d < nd; d++) o->shape[d] = d == d1 || d == d2 ? side : self->shape[k++];
    return tj_checked_numel(nd, o->shape, &numel, op);
}

tj_status tj_meta_diag_embed(const tj_value *args, tj_meta *outs)
{
    return embed_geometry(DIAG_EMBED, args[0].u.t, args[1].u.i, args[2].u.i, args[3].u.i, outs);
}

tj_status tj_kernel_diag_embed(const tj_value *args, tj_tensor *const *outs)
{
    return tj_zeros_with_diagonal(outs[0], args[0].u.t, args[1].u.i, args[2].u.i, args[3].u.i);
}

/* ---- diag(self, diagonal) ---- */

#define DIAG "aten::diag"

tj_status tj_meta_diag(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t k = args[1].u.i;
    if (self->ndim == 1) return embed_geometry(DIAG, self, k, 0, 1, outs);
    if (self->ndim != 2) {
        char b[SHAPE_BUF];
        return tj_error(TJ_ERR_SHAPE, "%s: matrix or a vector expected, got self of shape %s", DIAG,
                        tj_shape_str(self->ndim, self->shape, b, sizeof b));
    }
    /* a copy of the diagonal view (empty for an offset past the sizes,
     * where ATen 1.13 fails computing a negative size) */
    tj_value va[4] = {args[0], tj_v_int(k), tj_v_int(0), tj_v_int(1)};
    tj_status st = tj_diagonal_geometry(DIAG, va, outs);
    outs->alias = -1;
    return st;
}

tj_status tj_kernel_diag(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *self = args[0].u.t;
    int64_t k = args[1].u.i;
    if (self->ndim == 1) return tj_zeros_with_diagonal(outs[0], self, k, 0, 1);
    tj_meta m;
    tj_value va[4] = {args[0], tj_v_int(k), tj_v_int(0), tj_v_int(1)};
    tj_diagonal_geometry(DIAG, va, &m); /* checked by the shape function */
    tj_tensor *view = tj_tensor_new_view(self, m.ndim, m.shape, m.strides, m.offset);
    if (!view) return tj_last_status();
    tj_copy_tensor(outs[0], view);
    tj_tensor_release(view);
    return TJ_OK;
}

/* ---- trace(self) ---- */

#define TRACE "aten::trace"

/* A 0-dim sum: float32 and float64 keep their dtype, int64 stays int64 (as
 * sum promotes integers); bool fails, as in ATen. */
tj_status tj_meta_trace(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    if (self->ndim != 2)
        return tj_error(TJ_ERR_SHAPE, "%s: expected a matrix, but got tensor with dim %d", TRACE, self->ndim);
    if (self->dtype == TJ_BOOL)
        return tj_error(TJ_ERR_DTYPE, "%s: not implemented for bool (float32, float64 or int64)", TRACE);
    outs[0].dtype = self->dtype;
    outs[0].ndim = 0;
    return TJ_OK;
}

/* ATen's trace_cpu: one pass down the diagonal, summed in acc_type (double
 * for floats, int64 for integers, wrapping on overflow as ATen's). */
tj_status tj_kernel_trace(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t n = self->shape[0] < self->shape[1] ? self->shape[0] : self->shape[1];
    int64_t step = self->strides[0] + self->strides[1];
    const char *p = tj_tensor_ptr(self);
    char *out = tj_tensor_ptr(outs[0]);
    if (self->dtype == TJ_INT64) {
        uint64_t acc = 0;
        for (int64_t i = 0; i < n; i++) acc += (uint64_t)((const int64_t *)p)[i * step];
        *(int64_t *)out = (int64_t)acc;
    } else {
        double acc = 0;
        if (self->dtype == TJ_FLOAT32)
            for (int64_t i = 0; i < n; i++) acc += ((const float *)p)[i * step];
        else
            for (int64_t i = 0; i < n; i++) acc += ((const double *)p)[i * step];
        if (self->dtype == TJ_FLOAT32) *(float *)out = (float)acc;
        else *(double *)out = acc;
    }
    return TJ_OK;
}
