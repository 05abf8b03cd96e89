/* The typed API of op_unique.def's and op_random.def's operators and of
 * tril_indices / triu_indices (include/tjit/ops.h). */
#include "internal.h"

static tj_tensor *call1(const tj_op *op, const tj_value *args)
{
    tj_value outs[TJ_MAX_RETURNS];
    if (tj_dispatch(op, args, op->nargs, outs) != TJ_OK) return NULL;
    return outs[0].u.t;
}

/* Dispatches a three-result operator; results not wanted are released. */
static tj_status call3(const tj_op *op, const tj_value *args, tj_tensor **r0, tj_tensor **r1, tj_tensor **r2)
{
    tj_tensor **dst[3] = {r0, r1, r2};
    for (int i = 0; i < 3; i++)
        if (dst[i]) *dst[i] = NULL;
    tj_value outs[TJ_MAX_RETURNS];
    tj_status st = tj_dispatch(op, args, op->nargs, outs);
    if (st != TJ_OK) return st;
    for (int i = 0; i < 3; i++) {
        if (dst[i]) *dst[i] = outs[i].u.t;
        else tj_scope_drop(outs[i].u.t);
    }
    return TJ_OK;
}

#define CALL(ident, ...) call1(TJ_OPS(ident), (const tj_value[]){__VA_ARGS__})
#define T(x) tj_v_tensor(x)
#define B(x) tj_v_bool(x)
#define I(x) tj_v_int(x)
#define DT(d) ((d) == TJ_DTYPE_NONE ? tj_v_none() : tj_v_dtype((tj_dtype)(d)))
#define CREATE_REST(dtype) DT(dtype), tj_v_none(), tj_v_none(), tj_v_none()

tj_status tj_unique2(tj_tensor *self, bool sorted, bool return_inverse, bool return_counts, tj_tensor **values,
                     tj_tensor **inverse, tj_tensor **counts)
{
    return call3(TJ_OPS(_unique2), (const tj_value[]){T(self), B(sorted), B(return_inverse), B(return_counts)}, values,
                 inverse, counts);
}
tj_status tj_unique_consecutive(tj_tensor *self, bool return_inverse, bool return_counts, bool has_dim, int64_t dim,
                                tj_tensor **values, tj_tensor **inverse, tj_tensor **counts)
{
    return call3(TJ_OPS(unique_consecutive),
                 (const tj_value[]){T(self), B(return_inverse), B(return_counts), has_dim ? I(dim) : tj_v_none()},
                 values, inverse, counts);
}
tj_status tj_unique_dim(tj_tensor *self, int64_t dim, bool sorted, bool return_inverse, bool return_counts,
                        tj_tensor **values, tj_tensor **inverse, tj_tensor **counts)
{
    return call3(TJ_OPS(unique_dim), (const tj_value[]){T(self), I(dim), B(sorted), B(return_inverse), B(return_counts)},
                 values, inverse, counts);
}
tj_tensor *tj_bincount(tj_tensor *self, tj_tensor *weights, int64_t minlength)
{
    return CALL(bincount, T(self), T(weights), I(minlength));
}
tj_tensor *tj_histc(tj_tensor *self, int64_t bins, tj_value min, tj_value max)
{
    return CALL(histc, T(self), I(bins), min, max);
}
tj_tensor *tj_tril_indices(int64_t row, int64_t col, int64_t offset, int dtype)
{
    return CALL(tril_indices, I(row), I(col), I(offset), CREATE_REST(dtype));
}
tj_tensor *tj_triu_indices(int64_t row, int64_t col, int64_t offset, int dtype)
{
    return CALL(triu_indices, I(row), I(col), I(offset), CREATE_REST(dtype));
}
tj_tensor *tj_randint_low(int64_t low, int64_t high, const int64_t *size, int ndim, int dtype)
{
    return CALL(randint_low, I(low), I(high), tj_v_ints(size, ndim), CREATE_REST(dtype));
}
tj_tensor *tj_randint(int64_t high, const int64_t *size, int ndim, int dtype)
{
    return CALL(randint, I(high), tj_v_ints(size, ndim), CREATE_REST(dtype));
}
tj_tensor *tj_randint_like(tj_tensor *self, int64_t low, int64_t high, int dtype)
{
    return CALL(randint_like_low_dtype, T(self), I(low), I(high), CREATE_REST(dtype), tj_v_none());
}
tj_tensor *tj_randperm(int64_t n, int dtype) { return CALL(randperm, I(n), CREATE_REST(dtype)); }
tj_tensor *tj_multinomial(tj_tensor *self, int64_t num_samples, bool replacement)
{
    return CALL(multinomial, T(self), I(num_samples), B(replacement), tj_v_none());
}
tj_tensor *tj_argsort(tj_tensor *self, int64_t dim, bool descending)
{
    return CALL(argsort, T(self), I(dim), B(descending));
}
