/* The typed API of op_unique.def's and op_random.def's operators and of
 * tril_indices / triu_indices (include/tjit/ops.h). */
#include "api_call.h"

#define CREATE_REST(dtype) DT(dtype), tj_v_none(), tj_v_none(), tj_v_none()

tj_status tj_unique2(tj_tensor *self, bool sorted, bool return_inverse, bool return_counts, tj_tensor **values,
                     tj_tensor **inverse, tj_tensor **counts)
{
    return CALLN(_unique2, values, inverse, counts, T(self), B(sorted), B(return_inverse), B(return_counts));
}
tj_status tj_unique_consecutive(tj_tensor *self, bool return_inverse, bool return_counts, bool has_dim, int64_t dim,
                                tj_tensor **values, tj_tensor **inverse, tj_tensor **counts)
{
    return CALLN(unique_consecutive, values, inverse, counts, T(self), B(return_inverse), B(return_counts), has_dim
                 ? I(dim) : tj_v_none());
}
tj_status tj_unique_dim(tj_tensor *self, int64_t dim, bool sorted, bool return_inverse, bool return_counts,
                        tj_tensor **values, tj_tensor **inverse, tj_tensor **counts)
{
    return CALLN(unique_dim, values, inverse, counts, T(self), I(dim), B(sorted), B(return_inverse),
                 B(return_counts));
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

/* the float fills (op_random_fills.c); generator None */
tj_tensor *tj_uniform(tj_tensor *self, double from, double to) { return CALL(uniform, T(self), F(from), F(to), tj_v_none()); }
tj_tensor *tj_normal_functional(tj_tensor *self, double mean, double std)
{
    return CALL(normal_functional, T(self), F(mean), F(std), tj_v_none());
}
tj_tensor *tj_exponential(tj_tensor *self, double lambd) { return CALL(exponential, T(self), F(lambd), tj_v_none()); }
tj_tensor *tj_normal_tensor_float(tj_tensor *mean, double std)
{
    return CALL(normal_Tensor_float, T(mean), F(std), tj_v_none());
}
tj_tensor *tj_normal_float_tensor(double mean, tj_tensor *std)
{
    return CALL(normal_float_Tensor, F(mean), T(std), tj_v_none());
}
tj_tensor *tj_normal_tensor_tensor(tj_tensor *mean, tj_tensor *std)
{
    return CALL(normal_Tensor_Tensor, T(mean), T(std), tj_v_none());
}
tj_tensor *tj_normal_float_float(double mean, double std, const int64_t *size, int ndim, int dtype)
{
    return CALL(normal_float_float, F(mean), F(std), tj_v_ints(size, ndim), tj_v_none(), CREATE_REST(dtype));
}
