/* Memory another framework lends tjit (DLPack imports, plans run on a
 * binding's arrays): the checks both make before a tensor reads it. */
#include "internal.h"

/* An empty tensor's data may be NULL; tjit's never is (memcpy of 0 bytes
 * from NULL is undefined). */
static _Alignas(64) char no_elements[64];

tj_status tj_check_lent_memory(const char *who, tj_dtype dtype, int ndim, const int64_t *shape,
                               const int64_t *strides, char **data, size_t *bytes)
{
    int64_t numel;
    tj_status st = tj_checked_view_numel(ndim, shape, &numel, who);
    if (st != TJ_OK) return st;
    size_t esize = tj_dtype_size(dtype);
    int64_t last = 0, extent = 0;
    for (int k = 0; numel && k < ndim; k++) {
        /* a dim of one index never uses its stride: NumPy's x[::-1] of a [1, n] array has -n there */
        if (strides[k] < 0 && shape[k] > 1)
            return tj_error(TJ_ERR_UNSUPPORTED, "%s: stride %lld of dim %d is negative", who, (long long)strides[k], k);
        int64_t step;
        if (__builtin_mul_overflow(shape[k] - 1, strides[k], &step) || __builtin_add_overflow(last, step, &last))
            return tj_error(TJ_ERR_OVERFLOW, "%s: the strides reach past int64 elements", who);
    }
    if (numel && (__builtin_add_overflow(last, 1, &last) || __builtin_mul_overflow(last, (int64_t)esize, &extent)))
        return tj_error(TJ_ERR_OVERFLOW, "%s: the strides reach past int64 bytes", who);
    if (!*data && extent) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: NULL data for %lld bytes", who, (long long)extent);
    if (!*data) *data = no_elements;
    if ((uintptr_t)*data % esize)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: data at %p is not aligned to its %zu-byte %s elements", who,
                        (void *)*data, esize, tj_dtype_name(dtype));
    *bytes = (size_t)extent;
    return TJ_OK;
}
