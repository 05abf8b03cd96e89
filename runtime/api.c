/* The typed operator API: each function boxes its arguments in schema order
 * and dispatches. */
#include <stdint.h>

#include "api_call.h"
#include "op_view.h"

#define UNARY(fn, ident) \
    tj_tensor *fn(tj_tensor *self) { return CALL(ident, T(self)); }
UNARY(tj_abs, abs)
UNARY(tj_neg, neg)
UNARY(tj_exp, exp)
UNARY(tj_log, log)
UNARY(tj_sqrt, sqrt)
UNARY(tj_rsqrt, rsqrt)
UNARY(tj_tanh, tanh)
UNARY(tj_sigmoid, sigmoid)
UNARY(tj_erf, erf)
UNARY(tj_reciprocal, reciprocal)
UNARY(tj_sin, sin)
UNARY(tj_cos, cos)
UNARY(tj_log1p, log1p)
UNARY(tj_expm1, expm1)
UNARY(tj_relu, relu)
UNARY(tj_silu, silu)
UNARY(tj_t, t)
#undef UNARY

/* clone and contiguous take memory_format=None after self */
tj_tensor *tj_clone(tj_tensor *self) { return CALL(clone, T(self), tj_v_none()); }
tj_tensor *tj_contiguous(tj_tensor *self) { return CALL(contiguous, T(self), tj_v_none()); }

tj_tensor *tj_gelu(tj_tensor *self, const char *approximate)
{
    return CALL(gelu, T(self), tj_v_str(approximate ? approximate : "none"));
}

#define BINARY(fn, ident) \
    tj_tensor *fn(tj_tensor *self, tj_tensor *other) { return CALL(ident, T(self), T(other)); }
BINARY(tj_mul, mul_Tensor)
BINARY(tj_div, div_Tensor)
BINARY(tj_pow, pow_Tensor_Tensor)
BINARY(tj_maximum, maximum)
BINARY(tj_minimum, minimum)
BINARY(tj_eq, eq_Tensor)
BINARY(tj_ne, ne_Tensor)
BINARY(tj_lt, lt_Tensor)
BINARY(tj_le, le_Tensor)
BINARY(tj_gt, gt_Tensor)
BINARY(tj_ge, ge_Tensor)
BINARY(tj_logaddexp, logaddexp)
BINARY(tj_mm, mm)
BINARY(tj_bmm, bmm)
BINARY(tj_matmul, matmul)
BINARY(tj_sigmoid_backward, sigmoid_backward)
BINARY(tj_tanh_backward, tanh_backward)
#undef BINARY

#define WITH_SCALAR(fn, ident) \
    tj_tensor *fn(tj_tensor *self, tj_value other) { return CALL(ident, T(self), other); }
WITH_SCALAR(tj_mul_scalar, mul_Scalar)
WITH_SCALAR(tj_div_scalar, div_Scalar)
WITH_SCALAR(tj_pow_scalar, pow_Tensor_Scalar)
WITH_SCALAR(tj_eq_scalar, eq_Scalar)
WITH_SCALAR(tj_gt_scalar, gt_Scalar)
WITH_SCALAR(tj_ne_scalar, ne_Scalar)
WITH_SCALAR(tj_lt_scalar, lt_Scalar)
WITH_SCALAR(tj_le_scalar, le_Scalar)
WITH_SCALAR(tj_ge_scalar, ge_Scalar)
#undef WITH_SCALAR

tj_tensor *tj_add(tj_tensor *self, tj_tensor *other) { return CALL(add_Tensor, T(self), T(other), I(1)); }
tj_tensor *tj_add_alpha(tj_tensor *self, tj_tensor *other, tj_value alpha) { return CALL(add_Tensor, T(self), T(other), alpha); }
tj_tensor *tj_add_scalar(tj_tensor *self, tj_value other) { return CALL(add_Scalar, T(self), other, I(1)); }
tj_tensor *tj_sub(tj_tensor *self, tj_tensor *other) { return CALL(sub_Tensor, T(self), T(other), I(1)); }
tj_tensor *tj_sub_alpha(tj_tensor *self, tj_tensor *other, tj_value alpha) { return CALL(sub_Tensor, T(self), T(other), alpha); }
tj_tensor *tj_sub_scalar(tj_tensor *self, tj_value other) { return CALL(sub_Scalar, T(self), other, I(1)); }
tj_tensor *tj_div_mode(tj_tensor *self, tj_tensor *other, const char *rounding_mode)
{
    return CALL(div_Tensor_mode, T(self), T(other), tj_v_str(rounding_mode));
}
tj_tensor *tj_div_scalar_mode(tj_tensor *self, tj_value other, const char *rounding_mode)
{
    return CALL(div_Scalar_mode, T(self), other, tj_v_str(rounding_mode));
}
tj_tensor *tj_where(tj_tensor *condition, tj_tensor *self, tj_tensor *other) { return CALL(where_self, T(condition), T(self), T(other)); }
tj_tensor *tj_clamp(tj_tensor *self, tj_value min, tj_value max) { return CALL(clamp, T(self), min, max); }
tj_tensor *tj_clamp_tensor(tj_tensor *self, tj_tensor *min, tj_tensor *max) { return CALL(clamp_Tensor, T(self), T(min), T(max)); }
tj_tensor *tj_masked_fill(tj_tensor *self, tj_tensor *mask, tj_value value) { return CALL(masked_fill_Scalar, T(self), T(mask), value); }
tj_tensor *tj_masked_fill_tensor(tj_tensor *self, tj_tensor *mask, tj_tensor *value)
{
    return CALL(masked_fill_Tensor, T(self), T(mask), T(value));
}

/* session 14 elementwise operators */
tj_tensor *tj_where_scalar_other(tj_tensor *condition, tj_tensor *self, tj_value other) { return CALL(where_ScalarOther, T(condition), T(self), other); }
tj_tensor *tj_where_scalar_self(tj_tensor *condition, tj_value self, tj_tensor *other) { return CALL(where_ScalarSelf, T(condition), self, T(other)); }
tj_tensor *tj_where_scalar(tj_tensor *condition, tj_value self, tj_value other) { return CALL(where_Scalar, T(condition), self, other); }
tj_tensor *tj_logical_not(tj_tensor *self) { return CALL(logical_not, T(self)); }
tj_tensor *tj_bitwise_not(tj_tensor *self) { return CALL(bitwise_not, T(self)); }
tj_tensor *tj_bitwise_and(tj_tensor *self, tj_tensor *other) { return CALL(bitwise_and_Tensor, T(self), T(other)); }
tj_tensor *tj_bitwise_or(tj_tensor *self, tj_tensor *other) { return CALL(bitwise_or_Tensor, T(self), T(other)); }
tj_tensor *tj_bitwise_xor(tj_tensor *self, tj_tensor *other) { return CALL(bitwise_xor_Tensor, T(self), T(other)); }
tj_tensor *tj_bitwise_and_scalar(tj_tensor *self, tj_value other) { return CALL(bitwise_and_Scalar, T(self), other); }
tj_tensor *tj_bitwise_or_scalar(tj_tensor *self, tj_value other) { return CALL(bitwise_or_Scalar, T(self), other); }
tj_tensor *tj_bitwise_xor_scalar(tj_tensor *self, tj_value other) { return CALL(bitwise_xor_Scalar, T(self), other); }
tj_tensor *tj_logical_and(tj_tensor *self, tj_tensor *other) { return CALL(logical_and, T(self), T(other)); }
tj_tensor *tj_logical_or(tj_tensor *self, tj_tensor *other) { return CALL(logical_or, T(self), T(other)); }
tj_tensor *tj_logical_xor(tj_tensor *self, tj_tensor *other) { return CALL(logical_xor, T(self), T(other)); }
tj_tensor *tj_sign(tj_tensor *self) { return CALL(sign, T(self)); }
tj_tensor *tj_sgn(tj_tensor *self) { return CALL(sgn, T(self)); }
tj_tensor *tj_square(tj_tensor *self) { return CALL(square, T(self)); }
tj_tensor *tj_rsub(tj_tensor *self, tj_tensor *other, tj_value alpha) { return CALL(rsub_Tensor, T(self), T(other), alpha); }
tj_tensor *tj_rsub_scalar(tj_tensor *self, tj_value other, tj_value alpha) { return CALL(rsub_Scalar, T(self), other, alpha); }
tj_tensor *tj_leaky_relu(tj_tensor *self, tj_value negative_slope) { return CALL(leaky_relu, T(self), negative_slope); }
tj_tensor *tj_softplus(tj_tensor *self, tj_value beta, tj_value threshold) { return CALL(softplus, T(self), beta, threshold); }
tj_tensor *tj_elu(tj_tensor *self, tj_value alpha, tj_value scale, tj_value input_scale)
{
    return CALL(elu, T(self), alpha, scale, input_scale);
}
tj_tensor *tj_celu(tj_tensor *self, tj_value alpha) { return CALL(celu, T(self), alpha); }
tj_tensor *tj_selu(tj_tensor *self) { return CALL(selu, T(self)); }
tj_tensor *tj_prelu(tj_tensor *self, tj_tensor *weight) { return CALL(prelu, T(self), T(weight)); }
tj_status tj_prelu_backward(tj_tensor *grad_output, tj_tensor *self, tj_tensor *weight, tj_tensor **grad_self,
                            tj_tensor **grad_weight)
{
    return CALLN(prelu_backward, grad_self, grad_weight, NULL, T(grad_output), T(self), T(weight));
}
tj_tensor *tj_leaky_relu_backward(tj_tensor *g, tj_tensor *self, tj_value negative_slope, bool self_is_result)
{
    return CALL(leaky_relu_backward, T(g), T(self), negative_slope, B(self_is_result));
}
tj_tensor *tj_mish(tj_tensor *self) { return CALL(mish, T(self)); }
tj_tensor *tj_log_sigmoid(tj_tensor *self) { return CALL(log_sigmoid, T(self)); }
tj_status tj_log_sigmoid_forward(tj_tensor *self, tj_tensor **output, tj_tensor **buffer)
{
    return CALLN(log_sigmoid_forward, output, buffer, NULL, T(self));
}
tj_tensor *tj_log_sigmoid_backward(tj_tensor *g, tj_tensor *self, tj_tensor *buffer)
{
    return CALL(log_sigmoid_backward, T(g), T(self), T(buffer));
}
/* torch.nn.functional.softsign: no ATen operator */
tj_tensor *tj_softsign(tj_tensor *self) { return tj_div(self, tj_add_scalar(tj_abs(self), I(1))); }
tj_tensor *tj_glu(tj_tensor *self, int64_t dim) { return CALL(glu, T(self), I(dim)); }
tj_tensor *tj_glu_backward(tj_tensor *g, tj_tensor *self, int64_t dim) { return CALL(glu_backward, T(g), T(self), I(dim)); }
tj_tensor *tj_softplus_backward(tj_tensor *g, tj_tensor *self, tj_value beta, tj_value threshold)
{
    return CALL(softplus_backward, T(g), T(self), beta, threshold);
}
tj_tensor *tj_elu_backward(tj_tensor *g, tj_value alpha, tj_value scale, tj_value input_scale, bool is_result,
                           tj_tensor *self_or_result)
{
    return CALL(elu_backward, T(g), alpha, scale, input_scale, B(is_result), T(self_or_result));
}
tj_tensor *tj_hardtanh(tj_tensor *self, tj_value min_val, tj_value max_val)
{
    return CALL(hardtanh, T(self), min_val, max_val);
}
tj_tensor *tj_relu6(tj_tensor *self) { return CALL(relu6, T(self)); }

/* session 19 elementwise operators */
#define UNARY(fn, ident) \
    tj_tensor *fn(tj_tensor *self) { return CALL(ident, T(self)); }
UNARY(tj_floor, floor)
UNARY(tj_ceil, ceil)
UNARY(tj_round, round)
UNARY(tj_trunc, trunc)
UNARY(tj_frac, frac)
UNARY(tj_isnan, isnan)
UNARY(tj_isinf, isinf)
UNARY(tj_isfinite, isfinite)
UNARY(tj_asin, asin)
UNARY(tj_acos, acos)
UNARY(tj_atan, atan)
UNARY(tj_sinh, sinh)
UNARY(tj_cosh, cosh)
UNARY(tj_log2, log2)
UNARY(tj_log10, log10)
UNARY(tj_exp2, exp2)
#undef UNARY
tj_tensor *tj_remainder(tj_tensor *self, tj_tensor *other) { return CALL(remainder_Tensor, T(self), T(other)); }
tj_tensor *tj_floor_divide(tj_tensor *self, tj_tensor *other) { return CALL(floor_divide, T(self), T(other)); }
tj_tensor *tj_floor_divide_scalar(tj_tensor *self, tj_value other) { return CALL(floor_divide_Scalar, T(self), other); }
tj_tensor *tj_xlogy(tj_tensor *self, tj_tensor *other) { return CALL(xlogy_Tensor, T(self), T(other)); }
tj_tensor *tj_xlogy_scalar_self(tj_value self, tj_tensor *other) { return CALL(xlogy_Scalar_Self, self, T(other)); }
tj_tensor *tj_xlogy_scalar_other(tj_tensor *self, tj_value other) { return CALL(xlogy_Scalar_Other, T(self), other); }
tj_tensor *tj_special_xlogy(tj_tensor *self, tj_tensor *other) { return CALL(special_xlogy, T(self), T(other)); }
tj_tensor *tj_special_xlogy_self_scalar(tj_value self, tj_tensor *other)
{
    return CALL(special_xlogy_self_scalar, self, T(other));
}
tj_tensor *tj_special_xlogy_other_scalar(tj_tensor *self, tj_value other)
{
    return CALL(special_xlogy_other_scalar, T(self), other);
}
tj_tensor *tj_remainder_scalar(tj_tensor *self, tj_value other) { return CALL(remainder_Scalar, T(self), other); }
tj_tensor *tj_remainder_scalar_tensor(tj_value self, tj_tensor *other)
{
    return CALL(remainder_Scalar_Tensor, self, T(other));
}
tj_tensor *tj_clamp_min_tensor(tj_tensor *self, tj_tensor *min) { return CALL(clamp_min_Tensor, T(self), T(min)); }
tj_tensor *tj_clamp_max_tensor(tj_tensor *self, tj_tensor *max) { return CALL(clamp_max_Tensor, T(self), T(max)); }
tj_tensor *tj_round_decimals(tj_tensor *self, int64_t decimals)
{
    return CALL(round_decimals, T(self), tj_v_int(decimals));
}
tj_tensor *tj_fmod(tj_tensor *self, tj_tensor *other) { return CALL(fmod_Tensor, T(self), T(other)); }
tj_tensor *tj_fmod_scalar(tj_tensor *self, tj_value other) { return CALL(fmod_Scalar, T(self), other); }
tj_tensor *tj_atan2(tj_tensor *self, tj_tensor *other) { return CALL(atan2, T(self), T(other)); }
tj_tensor *tj_nan_to_num(tj_tensor *self, tj_value nan, tj_value posinf, tj_value neginf)
{
    return CALL(nan_to_num, T(self), nan, posinf, neginf);
}
tj_tensor *tj_clamp_min(tj_tensor *self, tj_value min) { return CALL(clamp_min, T(self), min); }
tj_tensor *tj_clamp_max(tj_tensor *self, tj_value max) { return CALL(clamp_max, T(self), max); }
tj_tensor *tj_hardsigmoid(tj_tensor *self) { return CALL(hardsigmoid, T(self)); }
tj_tensor *tj_hardswish(tj_tensor *self) { return CALL(hardswish, T(self)); }
tj_tensor *tj_hardtanh_backward(tj_tensor *g, tj_tensor *self, tj_value min_val, tj_value max_val)
{
    return CALL(hardtanh_backward, T(g), T(self), min_val, max_val);
}
tj_tensor *tj_hardsigmoid_backward(tj_tensor *g, tj_tensor *self) { return CALL(hardsigmoid_backward, T(g), T(self)); }
tj_tensor *tj_hardswish_backward(tj_tensor *g, tj_tensor *self) { return CALL(hardswish_backward, T(g), T(self)); }

/* ---- reductions ---- */
tj_tensor *tj_sum_dim(tj_tensor *self, const int64_t *dim, int ndim, bool keepdim, int dtype)
{
    return CALL(sum_dim_IntList, T(self), L(dim, ndim), B(keepdim), DT(dtype));
}
tj_tensor *tj_sum(tj_tensor *self, int dtype) { return CALL(sum, T(self), DT(dtype)); }
tj_tensor *tj_cumsum(tj_tensor *self, int64_t dim, int dtype) { return CALL(cumsum, T(self), I(dim), DT(dtype)); }
tj_tensor *tj_mean_dim(tj_tensor *self, const int64_t *dim, int ndim, bool keepdim, int dtype)
{
    return CALL(mean_dim, T(self), L(dim, ndim), B(keepdim), DT(dtype));
}
tj_tensor *tj_amax(tj_tensor *self, const int64_t *dim, int ndim, bool keepdim) { return CALL(amax, T(self), L(dim, ndim), B(keepdim)); }
tj_tensor *tj_amin(tj_tensor *self, const int64_t *dim, int ndim, bool keepdim) { return CALL(amin, T(self), L(dim, ndim), B(keepdim)); }
tj_tensor *tj_argmax(tj_tensor *self, bool has_dim, int64_t dim, bool keepdim)
{
    return CALL(argmax, T(self), has_dim ? I(dim) : tj_v_none(), B(keepdim));
}
tj_status tj_max_dim(tj_tensor *self, int64_t dim, bool keepdim, tj_tensor **values, tj_tensor **indices)
{
    return CALLN(max_dim, values, indices, NULL, T(self), I(dim), B(keepdim));
}
tj_tensor *tj_var(tj_tensor *self, const int64_t *dim, int ndim, int64_t correction, bool keepdim)
{
    return CALL(var_correction, T(self), L(dim, ndim), correction < 0 ? tj_v_none() : I(correction), B(keepdim));
}
tj_status tj_var_mean(tj_tensor *self, const int64_t *dim, int ndim, int64_t correction, bool keepdim,
                      tj_tensor **var, tj_tensor **mean)
{
    return CALLN(var_mean_correction, var, mean, NULL, T(self), L(dim, ndim), correction < 0 ? tj_v_none() :
                 I(correction), B(keepdim));
}
tj_tensor *tj_logsumexp(tj_tensor *self, const int64_t *dim, int ndim, bool keepdim)
{
    return CALL(logsumexp, T(self), L(dim, ndim), B(keepdim));
}
tj_tensor *tj_mean(tj_tensor *self, int dtype) { return CALL(mean, T(self), DT(dtype)); }
tj_tensor *tj_max(tj_tensor *self) { return CALL(max, T(self)); }
tj_tensor *tj_min(tj_tensor *self) { return CALL(min, T(self)); }
tj_status tj_min_dim(tj_tensor *self, int64_t dim, bool keepdim, tj_tensor **values, tj_tensor **indices)
{
    return CALLN(min_dim, values, indices, NULL, T(self), I(dim), B(keepdim));
}
tj_tensor *tj_argmin(tj_tensor *self, bool has_dim, int64_t dim, bool keepdim)
{
    return CALL(argmin, T(self), has_dim ? I(dim) : tj_v_none(), B(keepdim));
}
tj_tensor *tj_prod(tj_tensor *self, int dtype) { return CALL(prod, T(self), DT(dtype)); }
tj_tensor *tj_prod_dim(tj_tensor *self, int64_t dim, bool keepdim, int dtype)
{
    return CALL(prod_dim_int, T(self), I(dim), B(keepdim), DT(dtype));
}
tj_tensor *tj_cumprod(tj_tensor *self, int64_t dim, int dtype) { return CALL(cumprod, T(self), I(dim), DT(dtype)); }
tj_tensor *tj_all(tj_tensor *self) { return CALL(all, T(self)); }
tj_tensor *tj_all_dim(tj_tensor *self, int64_t dim, bool keepdim) { return CALL(all_dim, T(self), I(dim), B(keepdim)); }
tj_tensor *tj_any(tj_tensor *self) { return CALL(any, T(self)); }
tj_tensor *tj_any_dim(tj_tensor *self, int64_t dim, bool keepdim) { return CALL(any_dim, T(self), I(dim), B(keepdim)); }
tj_tensor *tj_std(tj_tensor *self, const int64_t *dim, int ndim, int64_t correction, bool keepdim)
{
    return CALL(std_correction, T(self), L(dim, ndim), correction < 0 ? tj_v_none() : I(correction), B(keepdim));
}
tj_status tj_sort(tj_tensor *self, int64_t dim, bool descending, tj_tensor **values, tj_tensor **indices)
{
    return CALLN(sort, values, indices, NULL, T(self), I(dim), B(descending));
}
tj_status tj_topk(tj_tensor *self, int64_t k, int64_t dim, bool largest, bool sorted, tj_tensor **values,
                  tj_tensor **indices)
{
    return CALLN(topk, values, indices, NULL, T(self), I(k), I(dim), B(largest), B(sorted));
}
tj_tensor *tj_linalg_vector_norm(tj_tensor *self, tj_value ord, const int64_t *dim, int ndim, bool keepdim, int dtype)
{
    return CALL(linalg_vector_norm, T(self), ord, OPTL(dim, ndim), B(keepdim), DT(dtype));
}
tj_tensor *tj_norm_dim(tj_tensor *self, tj_value p, const int64_t *dim, int ndim, bool keepdim)
{
    return CALL(norm_ScalarOpt_dim, T(self), p, tj_v_ints(dim, ndim), B(keepdim));
}

/* ---- views and data movement ---- */
tj_tensor *tj_view(tj_tensor *self, const int64_t *size, int ndim) { return CALL(view, T(self), L(size, ndim)); }
tj_tensor *tj_unsafe_view(tj_tensor *self, const int64_t *size, int ndim) { return CALL(_unsafe_view, T(self), L(size, ndim)); }
tj_tensor *tj_permute(tj_tensor *self, const int64_t *dims, int ndim) { return CALL(permute, T(self), L(dims, ndim)); }
tj_tensor *tj_transpose(tj_tensor *self, int64_t dim0, int64_t dim1) { return CALL(transpose_int, T(self), I(dim0), I(dim1)); }
tj_tensor *tj_expand(tj_tensor *self, const int64_t *size, int ndim) { return CALL(expand, T(self), L(size, ndim), B(false)); }
tj_tensor *tj_unsqueeze(tj_tensor *self, int64_t dim) { return CALL(unsqueeze, T(self), I(dim)); }
tj_tensor *tj_squeeze_dim(tj_tensor *self, int64_t dim) { return CALL(squeeze_dim, T(self), I(dim)); }
tj_tensor *tj_squeeze(tj_tensor *self) { return CALL(squeeze, T(self)); }
tj_tensor *tj_select(tj_tensor *self, int64_t dim, int64_t index) { return CALL(select_int, T(self), I(dim), I(index)); }
tj_tensor *tj_diagonal(tj_tensor *self, int64_t offset, int64_t dim1, int64_t dim2)
{
    return CALL(diagonal, T(self), I(offset), I(dim1), I(dim2));
}
tj_tensor *tj_diagonal_backward(tj_tensor *grad_output, const int64_t *input_sizes, int ndim, int64_t offset,
                                int64_t dim1, int64_t dim2)
{
    return CALL(diagonal_backward, T(grad_output), L(input_sizes, ndim), I(offset), I(dim1), I(dim2));
}
tj_tensor *tj_select_backward(tj_tensor *grad_output, const int64_t *input_sizes, int ndim, int64_t dim,
                              int64_t index)
{
    return CALL(select_backward, T(grad_output), L(input_sizes, ndim), I(dim), I(index));
}
tj_tensor *tj_slice_backward(tj_tensor *grad_output, const int64_t *input_sizes, int ndim, int64_t dim,
                             int64_t start, int64_t end, int64_t step)
{
    return CALL(slice_backward, T(grad_output), L(input_sizes, ndim), I(dim), I(start), I(end), I(step));
}
tj_tensor *tj_as_strided(tj_tensor *self, const int64_t *size, const int64_t *stride, int ndim, bool has_offset,
                         int64_t storage_offset)
{
    return CALL(as_strided, T(self), L(size, ndim), L(stride, ndim), has_offset ? I(storage_offset) : tj_v_none());
}
tj_tensor *tj_slice(tj_tensor *self, int64_t dim, bool has_start, int64_t start, bool has_end, int64_t end, int64_t step)
{
    return CALL(slice_Tensor, T(self), I(dim), has_start ? I(start) : tj_v_none(), has_end ? I(end) : tj_v_none(), I(step));
}
tj_tensor *tj_cat(tj_tensor *const *tensors, int n, int64_t dim) { return CALL(cat, tj_v_tensors(tensors, n), I(dim)); }
tj_tensor *tj_flip(tj_tensor *self, const int64_t *dims, int ndims) { return CALL(flip, T(self), L(dims, ndims)); }
tj_tensor *tj_constant_pad_nd(tj_tensor *self, const int64_t *pad, int npad, tj_value value)
{
    return CALL(constant_pad_nd, T(self), L(pad, npad), value);
}
tj_tensor *tj_tril(tj_tensor *self, int64_t diagonal) { return CALL(tril, T(self), I(diagonal)); }
tj_tensor *tj_triu(tj_tensor *self, int64_t diagonal) { return CALL(triu, T(self), I(diagonal)); }
tj_tensor *tj_repeat(tj_tensor *self, const int64_t *repeats, int nrepeats)
{
    return CALL(repeat, T(self), L(repeats, nrepeats));
}
tj_tensor *tj_roll(tj_tensor *self, const int64_t *shifts, int nshifts, const int64_t *dims, int ndims)
{
    return CALL(roll, T(self), L(shifts, nshifts), L(dims, ndims));
}
tj_tensor *tj_diag(tj_tensor *self, int64_t diagonal) { return CALL(diag, T(self), I(diagonal)); }
tj_tensor *tj_diag_embed(tj_tensor *self, int64_t offset, int64_t dim1, int64_t dim2)
{
    return CALL(diag_embed, T(self), I(offset), I(dim1), I(dim2));
}
tj_tensor *tj_trace(tj_tensor *self) { return CALL(trace, T(self)); }
tj_tensor *tj_to_copy(tj_tensor *self, int dtype)
{
    return CALL(_to_copy, T(self), DT(dtype), tj_v_none(), tj_v_none(), tj_v_none(), B(false), tj_v_none());
}
tj_tensor *tj_reshape(tj_tensor *self, const int64_t *shape, int ndim) { return CALL(reshape, T(self), L(shape, ndim)); }
tj_tensor *tj_flatten(tj_tensor *self, int64_t start_dim, int64_t end_dim) { return CALL(flatten_using_ints, T(self), I(start_dim), I(end_dim)); }
tj_tensor *tj_stack(tj_tensor *const *tensors, int n, int64_t dim) { return CALL(stack, tj_v_tensors(tensors, n), I(dim)); }
tj_tensor *tj_narrow(tj_tensor *self, int64_t dim, int64_t start, int64_t length)
{
    return CALL(narrow, T(self), I(dim), I(start), I(length));
}

/* Hands the views made so far back (to the scope) on a failure. */
static tj_status drop_views(tj_tensor **outs, int64_t n)
{
    for (int64_t k = 0; k < n; k++) tj_scope_drop(outs[k]);
    return tj_last_status();
}

tj_status tj_split(tj_tensor *self, int64_t split_size, int64_t dim, tj_tensor **outs, int max_outs, int *n_outs)
{
    if (!outs || !n_outs) return tj_error(TJ_ERR_INVALID_ARGUMENT, "aten::split.Tensor: NULL outs or n_outs");
    *n_outs = 0;
    if (!self) return tj_error_null("aten::split.Tensor: argument 0 'self' expects Tensor, got a NULL tensor");
    int d;
    int64_t n;
    if (tj_split_plan(self, split_size, dim, &d, &n) != TJ_OK) return tj_last_status();
    if (n > max_outs)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "aten::split.Tensor: %lld chunks do not fit in %d outputs", (long long)n, max_outs);
    int64_t size = self->shape[d];
    for (int64_t i = 0; i < n; i++) {
        int64_t s = i * split_size, e = size - s > split_size ? s + split_size : size;
        if (!(outs[i] = tj_slice(self, d, true, s, true, e, 1))) return drop_views(outs, i);
    }
    tj_tensor_mark_multi_output(outs, (int)n);
    *n_outs = (int)n;
    return TJ_OK;
}

/* The checks tj_chunk, tj_split_with_sizes and tj_unbind share: outs and
 * n_outs given, self not NULL and not 0-dim, dim in range; *size gets the
 * size of the wrapped dim *d. */
static tj_status views_start(const char *op, tj_tensor *self, int64_t dim, tj_tensor **outs, int *n_outs, int *d,
                             int64_t *size)
{
    if (!outs || !n_outs) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: NULL outs or n_outs", op);
    *n_outs = 0;
    if (!self) return tj_error_null("%s: argument 0 'self' expects Tensor, got a NULL tensor", op);
    if (self->ndim == 0)
        return tj_error(TJ_ERR_INDEX, "%s: expects at least a 1-dimensional tensor, got a 0-dim one", op);
    if (tj_wrap_dim(op, dim, self->ndim, d) != TJ_OK) return tj_last_status();
    *size = self->shape[*d];
    return TJ_OK;
}

static tj_status too_many(const char *op, int64_t n, int max_outs)
{
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: %lld pieces do not fit in %d outputs", op, (long long)n, max_outs);
}

tj_status tj_split_with_sizes(tj_tensor *self, const int64_t *split_sizes, int n, int64_t dim, tj_tensor **outs,
                              int max_outs, int *n_outs)
{
    const char *op = "aten::split_with_sizes";
    int d = 0;
    int64_t size = 0, total = 0;
    bool wrapped = false; /* a sum past INT64_MAX, which later sizes must not bring back to size */
    if (views_start(op, self, dim, outs, n_outs, &d, &size) != TJ_OK) return tj_last_status();
    char b[192];
    for (int i = 0; i < n; i++) {
        if (split_sizes[i] < 0)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: split_with_sizes expects split_sizes have only non-negative "
                            "entries, but got split_sizes=%s", op, tj_shape_str(n, split_sizes, b, sizeof b));
        wrapped |= __builtin_add_overflow(total, split_sizes[i], &total);
    }
    if (wrapped || total != size)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: split_with_sizes expects split_sizes to sum exactly to %lld "
                        "(input tensor's size at dimension %d), but got split_sizes=%s", op, (long long)size, d,
                        tj_shape_str(n, split_sizes, b, sizeof b));
    if (n > max_outs) return too_many(op, n, max_outs);
    int64_t start = 0;
    for (int i = 0; i < n; i++) {
        if (!(outs[i] = tj_slice(self, d, true, start, true, start + split_sizes[i], 1))) return drop_views(outs, i);
        start += split_sizes[i];
    }
    tj_tensor_mark_multi_output(outs, n);
    *n_outs = n;
    return TJ_OK;
}

tj_status tj_chunk(tj_tensor *self, int64_t chunks, int64_t dim, tj_tensor **outs, int max_outs, int *n_outs)
{
    const char *op = "aten::chunk";
    int d = 0;
    int64_t size = 0;
    if (views_start(op, self, dim, outs, n_outs, &d, &size) != TJ_OK) return tj_last_status();
    if (chunks <= 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: chunk expects `chunks` to be greater than 0, got: %lld", op,
                        (long long)chunks);
    int64_t split_size = size / chunks + (size % chunks != 0);
    if (split_size > 0) return tj_split(self, split_size, d, outs, max_outs, n_outs);
    /* an empty dim: `chunks` empty pieces (split would give one) */
    if (chunks > max_outs) return too_many(op, chunks, max_outs);
    for (int64_t i = 0; i < chunks; i++)
        if (!(outs[i] = tj_slice(self, d, true, 0, true, 0, 1))) return drop_views(outs, i);
    tj_tensor_mark_multi_output(outs, (int)chunks);
    *n_outs = (int)chunks;
    return TJ_OK;
}

tj_status tj_unbind(tj_tensor *self, int64_t dim, tj_tensor **outs, int max_outs, int *n_outs)
{
    const char *op = "aten::unbind.int";
    int d = 0;
    int64_t size = 0;
    if (views_start(op, self, dim, outs, n_outs, &d, &size) != TJ_OK) return tj_last_status();
    if (size > max_outs) return too_many(op, size, max_outs);
    for (int64_t i = 0; i < size; i++)
        if (!(outs[i] = tj_select(self, d, i))) return drop_views(outs, i);
    tj_tensor_mark_multi_output(outs, (int)size);
    *n_outs = (int)size;
    return TJ_OK;
}

/* ---- creation ---- */
#define CREATE_REST(dtype) DT(dtype), tj_v_none(), tj_v_none(), tj_v_none()
tj_tensor *tj_zeros(const int64_t *size, int ndim, int dtype) { return CALL(zeros, L(size, ndim), CREATE_REST(dtype)); }
tj_tensor *tj_ones(const int64_t *size, int ndim, int dtype) { return CALL(ones, L(size, ndim), CREATE_REST(dtype)); }
tj_tensor *tj_full(const int64_t *size, int ndim, tj_value fill_value, int dtype) { return CALL(full, L(size, ndim), fill_value, CREATE_REST(dtype)); }
tj_tensor *tj_arange(tj_value start, tj_value end, tj_value step, int dtype) { return CALL(arange_start_step, start, end, step, CREATE_REST(dtype)); }
tj_tensor *tj_arange_default(tj_value end, int dtype) { return CALL(arange_default, end, CREATE_REST(dtype)); }
tj_tensor *tj_arange_start(tj_value start, tj_value end, int dtype) { return CALL(arange_start, start, end, CREATE_REST(dtype)); }
tj_tensor *tj_empty(const int64_t *size, int ndim, int dtype) { return CALL(empty_memory_format, L(size, ndim), CREATE_REST(dtype), tj_v_none()); }
tj_tensor *tj_scalar_tensor(tj_value s, int dtype) { return CALL(scalar_tensor, s, CREATE_REST(dtype)); }
tj_tensor *tj_rand(const int64_t *size, int ndim, int dtype) { return CALL(rand, L(size, ndim), CREATE_REST(dtype)); }
tj_tensor *tj_randn(const int64_t *size, int ndim, int dtype) { return CALL(randn, L(size, ndim), CREATE_REST(dtype)); }
tj_tensor *tj_bernoulli(tj_tensor *self, double p) { return CALL(bernoulli_p, T(self), F(p), tj_v_none()); }
tj_tensor *tj_eye(int64_t n, int dtype) { return CALL(eye, I(n), CREATE_REST(dtype)); }
tj_tensor *tj_eye_m(int64_t n, int64_t m, int dtype) { return CALL(eye_m, I(n), I(m), CREATE_REST(dtype)); }
tj_tensor *tj_linspace(tj_value start, tj_value end, int64_t steps, int dtype) { return CALL(linspace, start, end, I(steps), CREATE_REST(dtype)); }
/* the *_like operators end with MemoryFormat? memory_format=None */
#define LIKE_REST(dtype) CREATE_REST(dtype), tj_v_none()
tj_tensor *tj_zeros_like(tj_tensor *self, int dtype) { return CALL(zeros_like, T(self), LIKE_REST(dtype)); }
tj_tensor *tj_ones_like(tj_tensor *self, int dtype) { return CALL(ones_like, T(self), LIKE_REST(dtype)); }
tj_tensor *tj_full_like(tj_tensor *self, tj_value fill_value, int dtype) { return CALL(full_like, T(self), fill_value, LIKE_REST(dtype)); }
tj_tensor *tj_empty_like(tj_tensor *self, int dtype) { return CALL(empty_like, T(self), LIKE_REST(dtype)); }
tj_tensor *tj_rand_like(tj_tensor *self, int dtype) { return CALL(rand_like, T(self), LIKE_REST(dtype)); }
tj_tensor *tj_randn_like(tj_tensor *self, int dtype) { return CALL(randn_like, T(self), LIKE_REST(dtype)); }
#undef LIKE_REST
tj_tensor *tj_new_zeros(tj_tensor *self, const int64_t *size, int ndim, int dtype) { return CALL(new_zeros, T(self), L(size, ndim), CREATE_REST(dtype)); }
tj_tensor *tj_new_ones(tj_tensor *self, const int64_t *size, int ndim, int dtype) { return CALL(new_ones, T(self), L(size, ndim), CREATE_REST(dtype)); }
tj_tensor *tj_new_full(tj_tensor *self, const int64_t *size, int ndim, tj_value fill_value, int dtype) { return CALL(new_full, T(self), L(size, ndim), fill_value, CREATE_REST(dtype)); }
tj_tensor *tj_new_empty(tj_tensor *self, const int64_t *size, int ndim, int dtype) { return CALL(new_empty, T(self), L(size, ndim), CREATE_REST(dtype)); }
#undef CREATE_REST

/* ---- linear algebra ---- */
tj_tensor *tj_addmm(tj_tensor *self, tj_tensor *mat1, tj_tensor *mat2, tj_value beta, tj_value alpha)
{
    return CALL(addmm, T(self), T(mat1), T(mat2), beta, alpha);
}
tj_tensor *tj_baddbmm(tj_tensor *self, tj_tensor *batch1, tj_tensor *batch2, tj_value beta, tj_value alpha)
{
    return CALL(baddbmm, T(self), T(batch1), T(batch2), beta, alpha);
}
tj_tensor *tj_mv(tj_tensor *self, tj_tensor *vec) { return CALL(mv, T(self), T(vec)); }
tj_tensor *tj_dot(tj_tensor *self, tj_tensor *tensor) { return CALL(dot, T(self), T(tensor)); }
tj_tensor *tj_outer(tj_tensor *self, tj_tensor *vec2) { return CALL(outer, T(self), T(vec2)); }
tj_tensor *tj_addmv(tj_tensor *self, tj_tensor *mat, tj_tensor *vec, tj_value beta, tj_value alpha)
{
    return CALL(addmv, T(self), T(mat), T(vec), beta, alpha);
}
tj_tensor *tj_addr(tj_tensor *self, tj_tensor *vec1, tj_tensor *vec2, tj_value beta, tj_value alpha)
{
    return CALL(addr, T(self), T(vec1), T(vec2), beta, alpha);
}
tj_tensor *tj_linear(tj_tensor *input, tj_tensor *weight, tj_tensor *bias) { return CALL(linear, T(input), T(weight), T(bias)); }

/* ---- neural networks ---- */
tj_tensor *tj__softmax(tj_tensor *self, int64_t dim, bool h) { return CALL(_softmax, T(self), I(dim), B(h)); }
tj_tensor *tj__log_softmax(tj_tensor *self, int64_t dim, bool h) { return CALL(_log_softmax, T(self), I(dim), B(h)); }
tj_tensor *tj_softmax(tj_tensor *self, int64_t dim) { return CALL(softmax_int, T(self), I(dim), tj_v_none()); }
tj_tensor *tj_log_softmax(tj_tensor *self, int64_t dim) { return CALL(log_softmax_int, T(self), I(dim), tj_v_none()); }
tj_status tj_native_layer_norm(tj_tensor *input, const int64_t *normalized_shape, int n, tj_tensor *weight,
                               tj_tensor *bias, double eps, tj_tensor **out, tj_tensor **mean, tj_tensor **rstd)
{
    return CALLN(native_layer_norm, out, mean, rstd, T(input), L(normalized_shape, n), T(weight), T(bias), F(eps));
}
tj_tensor *tj_layer_norm(tj_tensor *input, const int64_t *normalized_shape, int n, tj_tensor *weight,
                         tj_tensor *bias, double eps)
{
    return CALL(layer_norm, T(input), L(normalized_shape, n), T(weight), T(bias), F(eps), B(true));
}
tj_status tj_native_batch_norm(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, tj_tensor *running_mean,
                               tj_tensor *running_var, bool training, double momentum, double eps, tj_tensor **out,
                               tj_tensor **save_mean, tj_tensor **save_invstd)
{
    return CALLN(native_batch_norm, out, save_mean, save_invstd, T(input), T(weight), T(bias), T(running_mean),
                 T(running_var), B(training), F(momentum), F(eps));
}
tj_tensor *tj_batch_norm(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, tj_tensor *running_mean,
                         tj_tensor *running_var, bool training, double momentum, double eps)
{
    return CALL(batch_norm, T(input), T(weight), T(bias), T(running_mean), T(running_var), B(training), F(momentum),
                F(eps), B(true));
}
tj_status tj_native_group_norm(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, int64_t n, int64_t c, int64_t hxw,
                               int64_t group, double eps, tj_tensor **out, tj_tensor **mean, tj_tensor **rstd)
{
    return CALLN(native_group_norm, out, mean, rstd, T(input), T(weight), T(bias), I(n), I(c), I(hxw), I(group),
                 F(eps));
}
tj_tensor *tj_group_norm(tj_tensor *input, int64_t num_groups, tj_tensor *weight, tj_tensor *bias, double eps)
{
    return CALL(group_norm, T(input), I(num_groups), T(weight), T(bias), F(eps), B(true));
}
tj_tensor *tj_convolution(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, const int64_t *stride,
                          const int64_t *padding, const int64_t *dilation, bool transposed,
                          const int64_t *output_padding, int64_t groups)
{
    static const int64_t zero2[2] = {0, 0};
    return CALL(convolution, T(input), T(weight), T(bias), L(stride, 2), L(padding, 2), L(dilation, 2), B(transposed),
                L(output_padding ? output_padding : zero2, 2), I(groups));
}
tj_tensor *tj_conv2d(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, const int64_t *stride,
                     const int64_t *padding, const int64_t *dilation, int64_t groups)
{
    return CALL(conv2d, T(input), T(weight), T(bias), L(stride, 2), L(padding, 2), L(dilation, 2), I(groups));
}
tj_tensor *tj_conv1d(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, int64_t stride, int64_t padding,
                     int64_t dilation, int64_t groups)
{
    return CALL(conv1d, T(input), T(weight), T(bias), L(&stride, 1), L(&padding, 1), L(&dilation, 1), I(groups));
}
tj_tensor *tj_conv_transpose1d(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, int64_t stride, int64_t padding,
                               int64_t output_padding, int64_t groups, int64_t dilation)
{
    return CALL(conv_transpose1d, T(input), T(weight), T(bias), L(&stride, 1), L(&padding, 1), L(&output_padding, 1),
                I(groups), L(&dilation, 1));
}
tj_tensor *tj_conv_transpose2d(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, const int64_t *stride,
                               const int64_t *padding, const int64_t *output_padding, int64_t groups,
                               const int64_t *dilation)
{
    static const int64_t zero2[2] = {0, 0};
    return CALL(conv_transpose2d_input, T(input), T(weight), T(bias), L(stride, 2), L(padding, 2),
                L(output_padding ? output_padding : zero2, 2), I(groups), L(dilation, 2));
}
tj_tensor *tj_conv3d(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, const int64_t *stride,
                     const int64_t *padding, const int64_t *dilation, int64_t groups)
{
    return CALL(conv3d, T(input), T(weight), T(bias), L(stride, 3), L(padding, 3), L(dilation, 3), I(groups));
}
tj_tensor *tj_conv_transpose3d(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, const int64_t *stride,
                               const int64_t *padding, const int64_t *output_padding, int64_t groups,
                               const int64_t *dilation)
{
    static const int64_t zero3[3] = {0, 0, 0};
    return CALL(conv_transpose3d_input, T(input), T(weight), T(bias), L(stride, 3), L(padding, 3),
                L(output_padding ? output_padding : zero3, 3), I(groups), L(dilation, 3));
}
tj_status tj_max_pool2d_with_indices(tj_tensor *self, const int64_t *kernel_size, const int64_t *stride,
                                     const int64_t *padding, const int64_t *dilation, bool ceil_mode,
                                     tj_tensor **out, tj_tensor **indices)
{
    return CALLN(max_pool2d_with_indices, out, indices, NULL, T(self), L(kernel_size, 2), L(stride, stride ? 2 : 0),
                 L(padding, 2), L(dilation, 2), B(ceil_mode));
}
tj_tensor *tj_max_pool2d(tj_tensor *self, const int64_t *kernel_size, const int64_t *stride,
                         const int64_t *padding, const int64_t *dilation, bool ceil_mode)
{
    return CALL(max_pool2d, T(self), L(kernel_size, 2), L(stride, stride ? 2 : 0), L(padding, 2), L(dilation, 2), B(ceil_mode));
}
tj_status tj_max_pool3d_with_indices(tj_tensor *self, const int64_t *kernel_size, const int64_t *stride,
                                     const int64_t *padding, const int64_t *dilation, bool ceil_mode,
                                     tj_tensor **out, tj_tensor **indices)
{
    return CALLN(max_pool3d_with_indices, out, indices, NULL, T(self), L(kernel_size, 3), L(stride, stride ? 3 : 0),
                 L(padding, 3), L(dilation, 3), B(ceil_mode));
}
tj_tensor *tj_max_pool3d(tj_tensor *self, const int64_t *kernel_size, const int64_t *stride,
                         const int64_t *padding, const int64_t *dilation, bool ceil_mode)
{
    return CALL(max_pool3d, T(self), L(kernel_size, 3), L(stride, stride ? 3 : 0), L(padding, 3), L(dilation, 3),
                B(ceil_mode));
}
tj_tensor *tj_max_pool3d_with_indices_backward(tj_tensor *grad_output, tj_tensor *self, const int64_t *kernel_size,
                                               const int64_t *stride, const int64_t *padding,
                                               const int64_t *dilation, bool ceil_mode, tj_tensor *indices)
{
    return CALL(max_pool3d_with_indices_backward, T(grad_output), T(self), L(kernel_size, 3), L(stride, 3),
                L(padding, 3), L(dilation, 3), B(ceil_mode), T(indices));
}
tj_tensor *tj_avg_pool3d(tj_tensor *self, const int64_t *kernel_size, const int64_t *stride, const int64_t *padding,
                         bool ceil_mode, bool count_include_pad, int64_t divisor_override)
{
    return CALL(avg_pool3d, T(self), L(kernel_size, 3), L(stride, stride ? 3 : 0), L(padding, 3), B(ceil_mode),
                B(count_include_pad), divisor_override > 0 ? I(divisor_override) : tj_v_none());
}
tj_tensor *tj_avg_pool3d_backward(tj_tensor *grad_output, tj_tensor *self, const int64_t *kernel_size,
                                  const int64_t *stride, const int64_t *padding, bool ceil_mode,
                                  bool count_include_pad, int64_t divisor_override)
{
    return CALL(avg_pool3d_backward, T(grad_output), T(self), L(kernel_size, 3), L(stride, 3), L(padding, 3),
                B(ceil_mode), B(count_include_pad), divisor_override > 0 ? I(divisor_override) : tj_v_none());
}
tj_tensor *tj_grid_sampler_2d(tj_tensor *input, tj_tensor *grid, int64_t interpolation_mode, int64_t padding_mode,
                              bool align_corners)
{
    return CALL(grid_sampler_2d, T(input), T(grid), I(interpolation_mode), I(padding_mode), B(align_corners));
}
tj_status tj_grid_sampler_2d_backward(tj_tensor *grad_output, tj_tensor *input, tj_tensor *grid,
                                      int64_t interpolation_mode, int64_t padding_mode, bool align_corners,
                                      const bool *output_mask, tj_tensor **grad_input, tj_tensor **grad_grid)
{
    return CALLN(grid_sampler_2d_backward, grad_input, grad_grid, NULL, T(grad_output), T(input), T(grid),
                 I(interpolation_mode), I(padding_mode), B(align_corners), tj_v_bools(output_mask, 2));
}
tj_tensor *tj_avg_pool2d(tj_tensor *self, const int64_t *kernel_size, const int64_t *stride,
                         const int64_t *padding, bool ceil_mode, bool count_include_pad, int64_t divisor_override)
{
    return CALL(avg_pool2d, T(self), L(kernel_size, 2), L(stride, stride ? 2 : 0), L(padding, 2), B(ceil_mode),
                B(count_include_pad), divisor_override > 0 ? I(divisor_override) : tj_v_none());
}
tj_tensor *tj_adaptive_avg_pool2d(tj_tensor *self, const int64_t *output_size)
{
    return CALL(adaptive_avg_pool2d, T(self), L(output_size, 2));
}
tj_tensor *tj__adaptive_avg_pool2d(tj_tensor *self, const int64_t *output_size)
{
    return CALL(_adaptive_avg_pool2d, T(self), L(output_size, 2));
}
tj_tensor *tj_upsample_nearest2d_vec(tj_tensor *input, const int64_t *output_size, const double *scale_factors)
{
    return CALL(upsample_nearest2d_vec, T(input), OPTL(output_size, 2), OPTF(scale_factors, 2));
}
tj_tensor *tj_upsample_bilinear2d_vec(tj_tensor *input, const int64_t *output_size, bool align_corners,
                                      const double *scale_factors)
{
    return CALL(upsample_bilinear2d_vec, T(input), OPTL(output_size, 2), B(align_corners), OPTF(scale_factors, 2));
}
tj_tensor *tj_upsample_bicubic2d_vec(tj_tensor *input, const int64_t *output_size, bool align_corners,
                                     const double *scale_factors)
{
    return CALL(upsample_bicubic2d_vec, T(input), OPTL(output_size, 2), B(align_corners), OPTF(scale_factors, 2));
}
tj_tensor *tj_upsample_nearest1d_vec(tj_tensor *input, const int64_t *output_size, const double *scale_factors)
{
    return CALL(upsample_nearest1d_vec, T(input), OPTL(output_size, 1), OPTF(scale_factors, 1));
}
tj_tensor *tj_upsample_nearest3d_vec(tj_tensor *input, const int64_t *output_size, const double *scale_factors)
{
    return CALL(upsample_nearest3d_vec, T(input), OPTL(output_size, 3), OPTF(scale_factors, 3));
}
tj_tensor *tj_upsample_linear1d_vec(tj_tensor *input, const int64_t *output_size, bool align_corners,
                                    const double *scale_factors)
{
    return CALL(upsample_linear1d_vec, T(input), OPTL(output_size, 1), B(align_corners), OPTF(scale_factors, 1));
}
tj_tensor *tj_upsample_trilinear3d_vec(tj_tensor *input, const int64_t *output_size, bool align_corners,
                                       const double *scale_factors)
{
    return CALL(upsample_trilinear3d_vec, T(input), OPTL(output_size, 3), B(align_corners), OPTF(scale_factors, 3));
}
tj_status tj_adaptive_max_pool2d(tj_tensor *self, const int64_t *output_size, tj_tensor **out, tj_tensor **indices)
{
    return CALLN(adaptive_max_pool2d, out, indices, NULL, T(self), L(output_size, 2));
}
tj_tensor *tj__adaptive_avg_pool3d(tj_tensor *self, const int64_t *output_size)
{
    return CALL(_adaptive_avg_pool3d, T(self), L(output_size, 3));
}
#define PAD_API(ident)                                                                                   \
    tj_tensor *tj_##ident(tj_tensor *self, const int64_t *padding, int npad)                            \
    {                                                                                                    \
        return CALL(ident, T(self), L(padding, npad));                                                   \
    }                                                                                                    \
    tj_tensor *tj_##ident##_backward(tj_tensor *grad_output, tj_tensor *self, const int64_t *padding, int npad) \
    {                                                                                                    \
        return CALL(ident##_backward, T(grad_output), T(self), L(padding, npad));                        \
    }
PAD_API(reflection_pad1d)
PAD_API(reflection_pad2d)
PAD_API(replication_pad1d)
PAD_API(replication_pad2d)
tj_tensor *tj_pixel_shuffle(tj_tensor *self, int64_t upscale_factor)
{
    return CALL(pixel_shuffle, T(self), I(upscale_factor));
}
tj_tensor *tj_pixel_unshuffle(tj_tensor *self, int64_t downscale_factor)
{
    return CALL(pixel_unshuffle, T(self), I(downscale_factor));
}
tj_tensor *tj_im2col(tj_tensor *self, const int64_t *kernel_size, const int64_t *dilation, const int64_t *padding,
                     const int64_t *stride)
{
    return CALL(im2col, T(self), L(kernel_size, 2), L(dilation, 2), L(padding, 2), L(stride, 2));
}
tj_tensor *tj_col2im(tj_tensor *self, const int64_t *output_size, const int64_t *kernel_size, const int64_t *dilation,
                     const int64_t *padding, const int64_t *stride)
{
    return CALL(col2im, T(self), L(output_size, 2), L(kernel_size, 2), L(dilation, 2), L(padding, 2), L(stride, 2));
}
tj_tensor *tj__cdist_forward(tj_tensor *x1, tj_tensor *x2, double p, bool has_compute_mode, int64_t compute_mode)
{
    return CALL(_cdist_forward, T(x1), T(x2), F(p), has_compute_mode ? I(compute_mode) : tj_v_none());
}
tj_tensor *tj__euclidean_dist(tj_tensor *x1, tj_tensor *x2) { return CALL(_euclidean_dist, T(x1), T(x2)); }
tj_tensor *tj__cdist_backward(tj_tensor *grad, tj_tensor *x1, tj_tensor *x2, double p, tj_tensor *cdist)
{
    return CALL(_cdist_backward, T(grad), T(x1), T(x2), F(p), T(cdist));
}
#define OPTI(has, v) ((has) ? I(v) : tj_v_none())
tj_tensor *tj_repeat_interleave(tj_tensor *repeats, bool has_output_size, int64_t output_size)
{
    return CALL(repeat_interleave_Tensor, T(repeats), OPTI(has_output_size, output_size));
}
tj_tensor *tj_repeat_interleave_self_int(tj_tensor *self, int64_t repeats, bool has_dim, int64_t dim,
                                         bool has_output_size, int64_t output_size)
{
    return CALL(repeat_interleave_self_int, T(self), I(repeats), OPTI(has_dim, dim),
                OPTI(has_output_size, output_size));
}
tj_tensor *tj_repeat_interleave_self_tensor(tj_tensor *self, tj_tensor *repeats, bool has_dim, int64_t dim,
                                            bool has_output_size, int64_t output_size)
{
    return CALL(repeat_interleave_self_Tensor, T(self), T(repeats), OPTI(has_dim, dim),
                OPTI(has_output_size, output_size));
}
#undef OPTI
tj_tensor *tj_embedding(tj_tensor *weight, tj_tensor *indices, int64_t padding_idx)
{
    return CALL(embedding, T(weight), T(indices), I(padding_idx), B(false), B(false));
}
tj_status tj_native_dropout(tj_tensor *input, double p, bool train, tj_tensor **out, tj_tensor **mask)
{
    return CALLN(native_dropout, out, mask, NULL, T(input), F(p), B(train));
}
tj_tensor *tj_dropout(tj_tensor *input, double p, bool train) { return CALL(dropout, T(input), F(p), B(train)); }
tj_status tj_nll_loss_forward(tj_tensor *self, tj_tensor *target, tj_tensor *weight, int64_t reduction,
                              int64_t ignore_index, tj_tensor **output, tj_tensor **total_weight)
{
    return CALLN(nll_loss_forward, output, total_weight, NULL, T(self), T(target), T(weight), I(reduction),
                 I(ignore_index));
}
tj_tensor *tj_nll_loss(tj_tensor *self, tj_tensor *target, tj_tensor *weight, int64_t reduction, int64_t ignore_index)
{
    return CALL(nll_loss, T(self), T(target), T(weight), I(reduction), I(ignore_index));
}
tj_tensor *tj_cross_entropy(tj_tensor *self, tj_tensor *target, tj_tensor *weight, int64_t reduction,
                            int64_t ignore_index, double label_smoothing)
{
    return CALL(cross_entropy_loss, T(self), T(target), T(weight), I(reduction), I(ignore_index), F(label_smoothing));
}
tj_tensor *tj_mse_loss(tj_tensor *self, tj_tensor *target, int64_t reduction) { return CALL(mse_loss, T(self), T(target), I(reduction)); }
tj_tensor *tj_binary_cross_entropy_with_logits(tj_tensor *self, tj_tensor *target, tj_tensor *weight,
                                               tj_tensor *pos_weight, int64_t reduction)
{
    return CALL(binary_cross_entropy_with_logits, T(self), T(target), T(weight), T(pos_weight), I(reduction));
}
tj_tensor *tj_binary_cross_entropy(tj_tensor *self, tj_tensor *target, tj_tensor *weight, int64_t reduction)
{
    return CALL(binary_cross_entropy, T(self), T(target), T(weight), I(reduction));
}
tj_tensor *tj_l1_loss(tj_tensor *self, tj_tensor *target, int64_t reduction)
{
    return CALL(l1_loss, T(self), T(target), I(reduction));
}
tj_tensor *tj_smooth_l1_loss(tj_tensor *self, tj_tensor *target, int64_t reduction, double beta)
{
    return CALL(smooth_l1_loss, T(self), T(target), I(reduction), F(beta));
}
tj_tensor *tj_huber_loss(tj_tensor *self, tj_tensor *target, int64_t reduction, double delta)
{
    return CALL(huber_loss, T(self), T(target), I(reduction), F(delta));
}
tj_tensor *tj_scaled_dot_product_attention(tj_tensor *query, tj_tensor *key, tj_tensor *value, tj_tensor *attn_mask,
                                           double dropout_p, bool is_causal)
{
    return CALL(scaled_dot_product_attention, T(query), T(key), T(value), T(attn_mask), F(dropout_p), B(is_causal));
}

/* ---- backward ---- */
tj_tensor *tj_threshold_backward(tj_tensor *g, tj_tensor *self, tj_value threshold) { return CALL(threshold_backward, T(g), T(self), threshold); }
tj_tensor *tj_gelu_backward(tj_tensor *g, tj_tensor *self, const char *approximate)
{
    return CALL(gelu_backward, T(g), T(self), tj_v_str(approximate ? approximate : "none"));
}
tj_tensor *tj__softmax_backward_data(tj_tensor *g, tj_tensor *output, int64_t dim, tj_dtype input_dtype)
{
    return CALL(_softmax_backward_data, T(g), T(output), I(dim), tj_v_dtype(input_dtype));
}
tj_tensor *tj__log_softmax_backward_data(tj_tensor *g, tj_tensor *output, int64_t dim, tj_dtype input_dtype)
{
    return CALL(_log_softmax_backward_data, T(g), T(output), I(dim), tj_v_dtype(input_dtype));
}
tj_status tj_native_layer_norm_backward(tj_tensor *grad_out, tj_tensor *input, const int64_t *normalized_shape, int n,
                                        tj_tensor *mean, tj_tensor *rstd, tj_tensor *weight, tj_tensor *bias,
                                        const bool output_mask[3], tj_tensor **grad_input, tj_tensor **grad_weight,
                                        tj_tensor **grad_bias)
{
    return CALLN(native_layer_norm_backward, grad_input, grad_weight, grad_bias, T(grad_out), T(input),
                 L(normalized_shape, n), T(mean), T(rstd), T(weight), T(bias), tj_v_bools(output_mask, 3));
}
tj_status tj_native_batch_norm_backward(tj_tensor *grad_out, tj_tensor *input, tj_tensor *weight,
                                        tj_tensor *running_mean, tj_tensor *running_var, tj_tensor *save_mean,
                                        tj_tensor *save_invstd, bool train, double eps, const bool output_mask[3],
                                        tj_tensor **grad_input, tj_tensor **grad_weight, tj_tensor **grad_bias)
{
    return CALLN(native_batch_norm_backward, grad_input, grad_weight, grad_bias, T(grad_out), T(input), T(weight),
                 T(running_mean), T(running_var), T(save_mean), T(save_invstd), B(train), F(eps),
                 tj_v_bools(output_mask, 3));
}
tj_status tj_native_group_norm_backward(tj_tensor *grad_out, tj_tensor *input, tj_tensor *mean, tj_tensor *rstd,
                                        tj_tensor *weight, int64_t n, int64_t c, int64_t hxw, int64_t group,
                                        const bool output_mask[3], tj_tensor **grad_input, tj_tensor **grad_weight,
                                        tj_tensor **grad_bias)
{
    return CALLN(native_group_norm_backward, grad_input, grad_weight, grad_bias, T(grad_out), T(input), T(mean),
                 T(rstd), T(weight), I(n), I(c), I(hxw), I(group), tj_v_bools(output_mask, 3));
}
tj_tensor *tj_nll_loss_backward(tj_tensor *g, tj_tensor *self, tj_tensor *target, tj_tensor *weight, int64_t reduction,
                                int64_t ignore_index, tj_tensor *total_weight)
{
    return CALL(nll_loss_backward, T(g), T(self), T(target), T(weight), I(reduction), I(ignore_index), T(total_weight));
}
tj_tensor *tj_binary_cross_entropy_backward(tj_tensor *grad_output, tj_tensor *self, tj_tensor *target, tj_tensor *weight,
                                            int64_t reduction)
{
    return CALL(binary_cross_entropy_backward, T(grad_output), T(self), T(target), T(weight), I(reduction));
}
tj_tensor *tj_smooth_l1_loss_backward(tj_tensor *grad_output, tj_tensor *self, tj_tensor *target, int64_t reduction,
                                      double beta)
{
    return CALL(smooth_l1_loss_backward, T(grad_output), T(self), T(target), I(reduction), F(beta));
}
tj_tensor *tj_huber_loss_backward(tj_tensor *grad_output, tj_tensor *self, tj_tensor *target, int64_t reduction,
                                  double delta)
{
    return CALL(huber_loss_backward, T(grad_output), T(self), T(target), I(reduction), F(delta));
}
tj_tensor *tj_mse_loss_backward(tj_tensor *grad_output, tj_tensor *self, tj_tensor *target, int64_t reduction)
{
    return CALL(mse_loss_backward, T(grad_output), T(self), T(target), I(reduction));
}
tj_tensor *tj_embedding_dense_backward(tj_tensor *g, tj_tensor *indices, int64_t num_weights, int64_t padding_idx,
                                       bool scale_grad_by_freq)
{
    return CALL(embedding_dense_backward, T(g), T(indices), I(num_weights), I(padding_idx), B(scale_grad_by_freq));
}
tj_status tj_convolution_backward(tj_tensor *grad_output, tj_tensor *input, tj_tensor *weight, const int64_t *bias_sizes,
                                  int n_bias_sizes, const int64_t *stride, const int64_t *padding, const int64_t *dilation,
                                  bool transposed, const int64_t *output_padding, int64_t groups, const bool output_mask[3],
                                  tj_tensor **grad_input, tj_tensor **grad_weight, tj_tensor **grad_bias)
{
    static const int64_t zero2[2] = {0, 0};
    return CALLN(convolution_backward, grad_input, grad_weight, grad_bias, T(grad_output), T(input), T(weight),
                 OPTL(bias_sizes, n_bias_sizes), L(stride, 2), L(padding, 2), L(dilation, 2), B(transposed),
                 L(output_padding ? output_padding : zero2, 2), I(groups), tj_v_bools(output_mask, 3));
}
tj_tensor *tj__adaptive_avg_pool2d_backward(tj_tensor *grad_output, tj_tensor *self)
{
    return CALL(_adaptive_avg_pool2d_backward, T(grad_output), T(self));
}
tj_tensor *tj_adaptive_max_pool2d_backward(tj_tensor *grad_output, tj_tensor *self, tj_tensor *indices)
{
    return CALL(adaptive_max_pool2d_backward, T(grad_output), T(self), T(indices));
}
tj_tensor *tj__adaptive_avg_pool3d_backward(tj_tensor *grad_output, tj_tensor *self)
{
    return CALL(_adaptive_avg_pool3d_backward, T(grad_output), T(self));
}
tj_tensor *tj_upsample_nearest2d_backward_vec(tj_tensor *grad_output, const int64_t *output_size,
                                              const int64_t *input_size, int n_input_size,
                                              const double *scale_factors)
{
    return CALL(upsample_nearest2d_backward_vec, T(grad_output), OPTL(output_size, 2), L(input_size, n_input_size),
                OPTF(scale_factors, 2));
}
tj_tensor *tj_upsample_bilinear2d_backward_vec(tj_tensor *grad_output, const int64_t *output_size,
                                               const int64_t *input_size, int n_input_size, bool align_corners,
                                               const double *scale_factors)
{
    return CALL(upsample_bilinear2d_backward_vec, T(grad_output), OPTL(output_size, 2), L(input_size, n_input_size),
                B(align_corners), OPTF(scale_factors, 2));
}
tj_tensor *tj_upsample_bicubic2d_backward_vec(tj_tensor *grad_output, const int64_t *output_size,
                                              const int64_t *input_size, int n_input_size, bool align_corners,
                                              const double *scale_factors)
{
    return CALL(upsample_bicubic2d_backward_vec, T(grad_output), OPTL(output_size, 2), L(input_size, n_input_size),
                B(align_corners), OPTF(scale_factors, 2));
}
tj_tensor *tj_upsample_nearest1d_backward_vec(tj_tensor *grad_output, const int64_t *output_size,
                                              const int64_t *input_size, int n_input_size,
                                              const double *scale_factors)
{
    return CALL(upsample_nearest1d_backward_vec, T(grad_output), OPTL(output_size, 1), L(input_size, n_input_size),
                OPTF(scale_factors, 1));
}
tj_tensor *tj_upsample_linear1d_backward_vec(tj_tensor *grad_output, const int64_t *output_size,
                                             const int64_t *input_size, int n_input_size, bool align_corners,
                                             const double *scale_factors)
{
    return CALL(upsample_linear1d_backward_vec, T(grad_output), OPTL(output_size, 1), L(input_size, n_input_size),
                B(align_corners), OPTF(scale_factors, 1));
}
tj_tensor *tj_upsample_nearest3d_backward_vec(tj_tensor *grad_output, const int64_t *output_size,
                                              const int64_t *input_size, int n_input_size,
                                              const double *scale_factors)
{
    return CALL(upsample_nearest3d_backward_vec, T(grad_output), OPTL(output_size, 3), L(input_size, n_input_size),
                OPTF(scale_factors, 3));
}
tj_tensor *tj_upsample_trilinear3d_backward_vec(tj_tensor *grad_output, const int64_t *output_size,
                                                const int64_t *input_size, int n_input_size, bool align_corners,
                                                const double *scale_factors)
{
    return CALL(upsample_trilinear3d_backward_vec, T(grad_output), OPTL(output_size, 3), L(input_size, n_input_size),
                B(align_corners), OPTF(scale_factors, 3));
}
tj_tensor *tj_max_pool2d_with_indices_backward(tj_tensor *g, tj_tensor *self, const int64_t *kernel_size,
                                               const int64_t *stride, const int64_t *padding, const int64_t *dilation,
                                               bool ceil_mode, tj_tensor *indices)
{
    return CALL(max_pool2d_with_indices_backward, T(g), T(self), L(kernel_size, 2), L(stride, 2), L(padding, 2),
                L(dilation, 2), B(ceil_mode), T(indices));
}
tj_tensor *tj_einsum(const char *equation, tj_tensor *const *tensors, int n, const int64_t *path, int npath)
{
    return CALL(einsum, tj_v_str(equation), tj_v_tensors(tensors, n), OPTL(path, npath));
}
