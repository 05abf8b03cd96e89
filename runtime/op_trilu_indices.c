/* tril_indices and triu_indices, as ATen 1.13 (TensorFactories.cpp): the
 * coordinates of a [row, col] matrix's lower (col - row <= offset) or upper
 * (col - row >= offset) triangle, in row-major order, as a [2, N] int64
 * tensor (row indices, then column indices). torch._refs' decompositions
 * (decomps/trilu_indices.c) compute them with float64 square roots; these
 * loops are exact and need no intermediates. */
#include "op_creation.h"

#define TRIL_INDICES "aten::tril_indices"
#define TRIU_INDICES "aten::triu_indices"

/* Columns [*lo, *hi) of row i in the triangle. */
static void row_span(bool upper, int64_t i, int64_t col, int64_t offset, int64_t *lo, int64_t *hi)
{
    int64_t edge = i + offset; /* the diagonal's column on row i */
    if (upper) {
        *lo = edge < 0 ? 0 : edge > col ? col : edge;
        *hi = col;
    } else {
        *lo = 0;
        *hi = edge + 1 < 0 ? 0 : edge + 1 > col ? col : edge + 1;
    }
}

/* (row, col, offset, *, dtype=long, layout, device, pin_memory) */
static tj_status meta_trilu(const char *op, const char *name, bool upper, const tj_value *args, tj_meta *outs)
{
    int64_t row = args[0].u.i, col = args[1].u.i, offset = args[2].u.i;
    if (row < 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: row must be non-negative, got %lld", op, (long long)row);
    if (col < 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: col must be non-negative, got %lld", op, (long long)col);
    if (args[3].kind == TJ_V_DTYPE && args[3].u.dtype != TJ_INT64)
        return tj_error(TJ_ERR_DTYPE, "%s: \"%s\" not implemented for '%s'", op, name, tj_dtype_name(args[3].u.dtype));
    int64_t shape[2] = {2, 0}, lo, hi;
    for (int64_t i = 0; i < row; i++) {
        row_span(upper, i, col, offset, &lo, &hi);
        shape[1] += hi - lo;
    }
    tj_value size = tj_v_ints(shape, 2);
    return tj_size_meta(op, &size, TJ_INT64, &outs[0]);
}

static tj_status kernel_trilu(bool upper, const tj_value *args, tj_tensor *const *outs)
{
    int64_t row = args[0].u.i, col = args[1].u.i, offset = args[2].u.i, lo, hi, n = outs[0]->shape[1], k = 0;
    int64_t *r = (int64_t *)tj_tensor_ptr(outs[0]), *c = r + n;
    for (int64_t i = 0; i < row; i++) {
        row_span(upper, i, col, offset, &lo, &hi);
        for (int64_t j = lo; j < hi; j++, k++) r[k] = i, c[k] = j;
    }
    return TJ_OK;
}

tj_status tj_meta_tril_indices(const tj_value *args, tj_meta *outs)
{
    return meta_trilu(TRIL_INDICES, "tril_indices", false, args, outs);
}
tj_status tj_kernel_tril_indices(const tj_value *args, tj_tensor *const *outs) { return kernel_trilu(false, args, outs); }
tj_status tj_meta_triu_indices(const tj_value *args, tj_meta *outs)
{
    return meta_trilu(TRIU_INDICES, "triu_indices", true, args, outs);
}
tj_status tj_kernel_triu_indices(const tj_value *args, tj_tensor *const *outs) { return kernel_trilu(true, args, outs); }
