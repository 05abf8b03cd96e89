/* The typed API of include/tjit/inplace.h: box, dispatch, and for in-place
 * operators hand back self (the dispatcher's extra reference to it is
 * dropped, so a call needs no release). */
#include "api_call.h"


static tj_tensor *call_inplace(const tj_op *op, const tj_value *args)
{
    tj_tensor *r = tj_api_call1(op, args);
    if (!r) return NULL;
    tj_scope_drop(r); /* r is self: the caller's reference keeps it alive */
    return r;
}

#define CALL_(ident, ...) call_inplace(TJ_OPS(ident), (const tj_value[]){__VA_ARGS__})

tj_tensor *tj_add_(tj_tensor *self, tj_tensor *other, tj_value alpha)
{
    return CALL_(add__Tensor, T(self), T(other), alpha);
}
tj_tensor *tj_add_scalar_(tj_tensor *self, tj_value other, tj_value alpha)
{
    return CALL_(add__Scalar, T(self), other, alpha);
}
tj_tensor *tj_sub_(tj_tensor *self, tj_tensor *other, tj_value alpha)
{
    return CALL_(sub__Tensor, T(self), T(other), alpha);
}
tj_tensor *tj_mul_(tj_tensor *self, tj_tensor *other) { return CALL_(mul__Tensor, T(self), T(other)); }
tj_tensor *tj_mul_scalar_(tj_tensor *self, tj_value other) { return CALL_(mul__Scalar, T(self), other); }
tj_tensor *tj_div_(tj_tensor *self, tj_tensor *other) { return CALL_(div__Tensor, T(self), T(other)); }
tj_tensor *tj_div_scalar_(tj_tensor *self, tj_value other) { return CALL_(div__Scalar, T(self), other); }
tj_tensor *tj_sqrt_(tj_tensor *self) { return CALL_(sqrt_, T(self)); }
tj_tensor *tj_addcmul_(tj_tensor *self, tj_tensor *tensor1, tj_tensor *tensor2, tj_value value)
{
    return CALL_(addcmul_, T(self), T(tensor1), T(tensor2), value);
}
tj_tensor *tj_addcdiv_(tj_tensor *self, tj_tensor *tensor1, tj_tensor *tensor2, tj_value value)
{
    return CALL_(addcdiv_, T(self), T(tensor1), T(tensor2), value);
}
tj_tensor *tj_lerp_(tj_tensor *self, tj_tensor *end, tj_value weight)
{
    return CALL_(lerp__Scalar, T(self), T(end), weight);
}
tj_tensor *tj_unsqueeze_(tj_tensor *self, int64_t dim) { return CALL_(unsqueeze_, T(self), tj_v_int(dim)); }
tj_tensor *tj_squeeze_dim_(tj_tensor *self, int64_t dim) { return CALL_(squeeze__dim, T(self), tj_v_int(dim)); }
tj_tensor *tj_squeeze_(tj_tensor *self) { return CALL_(squeeze_, T(self)); }
tj_tensor *tj_transpose_(tj_tensor *self, int64_t dim0, int64_t dim1)
{
    return CALL_(transpose_, T(self), tj_v_int(dim0), tj_v_int(dim1));
}
tj_tensor *tj_t_(tj_tensor *self) { return CALL_(t_, T(self)); }
tj_tensor *tj_as_strided_(tj_tensor *self, const int64_t *size, const int64_t *stride, int ndim, bool has_offset,
                          int64_t storage_offset)
{
    return CALL_(as_strided_, T(self), tj_v_ints(size, ndim), tj_v_ints(stride, ndim),
                 has_offset ? tj_v_int(storage_offset) : tj_v_none());
}
tj_tensor *tj_copy_(tj_tensor *self, tj_tensor *src) { return CALL_(copy_, T(self), T(src), tj_v_bool(false)); }
tj_tensor *tj_zero_(tj_tensor *self) { return CALL_(zero_, T(self)); }
tj_tensor *tj_fill_(tj_tensor *self, tj_value value) { return CALL_(fill__Scalar, T(self), value); }
tj_tensor *tj_fill_tensor_(tj_tensor *self, tj_tensor *value) { return CALL_(fill__Tensor, T(self), T(value)); }
tj_tensor *tj_tril_(tj_tensor *self, int64_t diagonal) { return CALL_(tril_, T(self), tj_v_int(diagonal)); }
tj_tensor *tj_scatter_reduce_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src, const char *reduce,
                              bool include_self)
{
    return CALL_(scatter_reduce__two, T(self), tj_v_int(dim), T(index), T(src), tj_v_str(reduce),
                 tj_v_bool(include_self));
}
tj_tensor *tj_index_copy_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *source)
{
    return CALL_(index_copy_, T(self), tj_v_int(dim), T(index), T(source));
}
tj_tensor *tj_index_fill_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_value value)
{
    return CALL_(index_fill__int_Scalar, T(self), tj_v_int(dim), T(index), value);
}
tj_tensor *tj_index_fill_tensor_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *value)
{
    return CALL_(index_fill__int_Tensor, T(self), tj_v_int(dim), T(index), T(value));
}
tj_tensor *tj_triu_(tj_tensor *self, int64_t diagonal) { return CALL_(triu_, T(self), tj_v_int(diagonal)); }
tj_tensor *tj_index_put_(tj_tensor *self, tj_tensor *const *indices, int n, tj_tensor *values, bool accumulate)
{
    return CALL_(index_put_, T(self), tj_v_tensors(indices, n), T(values), tj_v_bool(accumulate));
}

tj_tensor *tj_addcmul(tj_tensor *self, tj_tensor *tensor1, tj_tensor *tensor2, tj_value value)
{
    return CALL(addcmul, T(self), T(tensor1), T(tensor2), value);
}
tj_tensor *tj_addcdiv(tj_tensor *self, tj_tensor *tensor1, tj_tensor *tensor2, tj_value value)
{
    return CALL(addcdiv, T(self), T(tensor1), T(tensor2), value);
}
tj_tensor *tj_lerp(tj_tensor *self, tj_tensor *end, tj_value weight)
{
    return CALL(lerp_Scalar, T(self), T(end), weight);
}
tj_tensor *tj_lerp_tensor(tj_tensor *self, tj_tensor *end, tj_tensor *weight)
{
    return CALL(lerp_Tensor, T(self), T(end), T(weight));
}
tj_tensor *tj_copy(tj_tensor *self, tj_tensor *src) { return CALL(copy, T(self), T(src), tj_v_bool(false)); }
tj_tensor *tj_zero(tj_tensor *self) { return CALL(zero, T(self)); }
tj_tensor *tj_fill(tj_tensor *self, tj_value value) { return CALL(fill_Scalar, T(self), value); }
tj_tensor *tj_fill_tensor(tj_tensor *self, tj_tensor *value) { return CALL(fill_Tensor, T(self), T(value)); }
tj_tensor *tj_slice_scatter(tj_tensor *self, tj_tensor *src, int64_t dim, bool has_start, int64_t start,
                            bool has_end, int64_t end, int64_t step)
{
    return CALL(slice_scatter, T(self), T(src), tj_v_int(dim), has_start ? tj_v_int(start) : tj_v_none(),
                has_end ? tj_v_int(end) : tj_v_none(), tj_v_int(step));
}
tj_tensor *tj_select_scatter(tj_tensor *self, tj_tensor *src, int64_t dim, int64_t index)
{
    return CALL(select_scatter, T(self), T(src), tj_v_int(dim), tj_v_int(index));
}

tj_tensor *tj_diagonal_scatter(tj_tensor *self, tj_tensor *src, int64_t offset, int64_t dim1, int64_t dim2)
{
    return CALL(diagonal_scatter, T(self), T(src), tj_v_int(offset), tj_v_int(dim1), tj_v_int(dim2));
}

tj_tensor *tj_as_strided_scatter(tj_tensor *self, tj_tensor *src, const int64_t *size, const int64_t *stride, int ndim,
                                 bool has_offset, int64_t storage_offset)
{
    return CALL(as_strided_scatter, T(self), T(src), tj_v_ints(size, ndim), tj_v_ints(stride, ndim),
                has_offset ? tj_v_int(storage_offset) : tj_v_none());
}

/* ---- the in-place forms of op_inplace_forms.def ---- */

#define UNARY_(name, ident) \
    tj_tensor *tj_##name(tj_tensor *self) { return CALL_(ident, T(self)); }
#define TENSOR_(name, ident) \
    tj_tensor *tj_##name(tj_tensor *self, tj_tensor *other) { return CALL_(ident, T(self), T(other)); }
#define SCALAR_(name, ident) \
    tj_tensor *tj_##name(tj_tensor *self, tj_value other) { return CALL_(ident, T(self), other); }

UNARY_(abs_, abs_)
UNARY_(neg_, neg_)
UNARY_(exp_, exp_)
UNARY_(log_, log_)
UNARY_(rsqrt_, rsqrt_)
UNARY_(tanh_, tanh_)
UNARY_(sigmoid_, sigmoid_)
UNARY_(erf_, erf_)
UNARY_(reciprocal_, reciprocal_)
UNARY_(sin_, sin_)
UNARY_(cos_, cos_)
UNARY_(log1p_, log1p_)
UNARY_(expm1_, expm1_)
UNARY_(relu_, relu_)
UNARY_(silu_, silu_)
UNARY_(sign_, sign_)
UNARY_(square_, square_)
UNARY_(hardsigmoid_, hardsigmoid_)
UNARY_(hardswish_, hardswish_)
UNARY_(floor_, floor_)
UNARY_(ceil_, ceil_)
UNARY_(round_, round_)
UNARY_(trunc_, trunc_)
UNARY_(frac_, frac_)
UNARY_(asin_, asin_)
UNARY_(acos_, acos_)
UNARY_(atan_, atan_)
UNARY_(sinh_, sinh_)
UNARY_(cosh_, cosh_)
UNARY_(log2_, log2_)
UNARY_(log10_, log10_)
UNARY_(exp2_, exp2_)
UNARY_(logical_not_, logical_not_)
UNARY_(bitwise_not_, bitwise_not_)
UNARY_(lgamma_, lgamma_)
UNARY_(digamma_, digamma_)
UNARY_(erfinv_, erfinv_)
UNARY_(erfc_, erfc_)
UNARY_(i0_, i0_)
UNARY_(sinc_, sinc_)
TENSOR_(hypot_, hypot_)
TENSOR_(copysign_, copysign__Tensor)
SCALAR_(copysign_scalar_, copysign__Scalar)
TENSOR_(xlogy_, xlogy__Tensor)
SCALAR_(xlogy_scalar_other_, xlogy__Scalar_Other)
tj_tensor *tj_uniform_(tj_tensor *self, double from, double to)
{
    return CALL_(uniform_, T(self), tj_v_float(from), tj_v_float(to), tj_v_none());
}
tj_tensor *tj_normal_(tj_tensor *self, double mean, double std)
{
    return CALL_(normal_, T(self), tj_v_float(mean), tj_v_float(std), tj_v_none());
}
tj_tensor *tj_exponential_(tj_tensor *self, double lambd) { return CALL_(exponential_, T(self), tj_v_float(lambd), tj_v_none()); }
tj_tensor *tj_polygamma_(tj_tensor *self, int64_t n) { return CALL_(polygamma_, T(self), tj_v_int(n)); }
SCALAR_(logit_, logit_)
TENSOR_(pow_, pow__Tensor)
TENSOR_(remainder_, remainder__Tensor)
TENSOR_(fmod_, fmod__Tensor)
TENSOR_(atan2_, atan2_)
TENSOR_(clamp_min_tensor_, clamp_min__Tensor)
TENSOR_(clamp_max_tensor_, clamp_max__Tensor)
TENSOR_(eq_, eq__Tensor)
TENSOR_(ne_, ne__Tensor)
TENSOR_(lt_, lt__Tensor)
TENSOR_(le_, le__Tensor)
TENSOR_(gt_, gt__Tensor)
TENSOR_(ge_, ge__Tensor)
TENSOR_(logical_and_, logical_and_)
TENSOR_(logical_or_, logical_or_)
TENSOR_(logical_xor_, logical_xor_)
SCALAR_(pow_scalar_, pow__Scalar)
SCALAR_(remainder_scalar_, remainder__Scalar)
SCALAR_(fmod_scalar_, fmod__Scalar)
SCALAR_(clamp_min_, clamp_min_)
SCALAR_(clamp_max_, clamp_max_)
SCALAR_(leaky_relu_, leaky_relu_)
SCALAR_(eq_scalar_, eq__Scalar)
SCALAR_(ne_scalar_, ne__Scalar)
SCALAR_(lt_scalar_, lt__Scalar)
SCALAR_(le_scalar_, le__Scalar)
SCALAR_(gt_scalar_, gt__Scalar)
SCALAR_(ge_scalar_, ge__Scalar)

tj_tensor *tj_gelu_(tj_tensor *self, const char *approximate)
{
    return CALL_(gelu_, T(self), tj_v_str(approximate ? approximate : "none"));
}
tj_tensor *tj_elu_(tj_tensor *self, tj_value alpha, tj_value scale, tj_value input_scale)
{
    return CALL_(elu_, T(self), alpha, scale, input_scale);
}
tj_tensor *tj_celu_(tj_tensor *self, tj_value alpha) { return CALL_(celu_, T(self), alpha); }
tj_tensor *tj_selu_(tj_tensor *self) { return CALL_(selu_, T(self)); }
tj_tensor *tj_mish_(tj_tensor *self) { return CALL_(mish_, T(self)); }
tj_tensor *tj_scatter_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src)
{
    return CALL_(scatter__src, T(self), tj_v_int(dim), T(index), T(src));
}
tj_tensor *tj_scatter_value_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_value value)
{
    return CALL_(scatter__value, T(self), tj_v_int(dim), T(index), value);
}
tj_tensor *tj_scatter_add_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src)
{
    return CALL_(scatter_add_, T(self), tj_v_int(dim), T(index), T(src));
}
tj_tensor *tj_index_add_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *source, tj_value alpha)
{
    return CALL_(index_add_, T(self), tj_v_int(dim), T(index), T(source), alpha);
}
tj_tensor *tj_scatter_src_reduce_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src, const char *reduce)
{
    return CALL_(scatter__reduce, T(self), tj_v_int(dim), T(index), T(src), tj_v_str(reduce));
}
tj_tensor *tj_scatter_value_reduce_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_value value, const char *reduce)
{
    return CALL_(scatter__value_reduce, T(self), tj_v_int(dim), T(index), value, tj_v_str(reduce));
}
tj_tensor *tj_bernoulli_(tj_tensor *self, double p) { return CALL_(bernoulli__float, T(self), tj_v_float(p), tj_v_none()); }
tj_tensor *tj_hardtanh_(tj_tensor *self, tj_value min_val, tj_value max_val)
{
    return CALL_(hardtanh_, T(self), min_val, max_val);
}
tj_tensor *tj_round_decimals_(tj_tensor *self, int64_t decimals)
{
    return CALL_(round__decimals, T(self), tj_v_int(decimals));
}
tj_tensor *tj_nan_to_num_(tj_tensor *self, tj_value nan, tj_value posinf, tj_value neginf)
{
    return CALL_(nan_to_num_, T(self), nan, posinf, neginf);
}
tj_tensor *tj_sub_scalar_(tj_tensor *self, tj_value other, tj_value alpha)
{
    return CALL_(sub__Scalar, T(self), other, alpha);
}
tj_tensor *tj_div_mode_(tj_tensor *self, tj_tensor *other, const char *rounding_mode)
{
    return CALL_(div__Tensor_mode, T(self), T(other), tj_v_str(rounding_mode));
}
tj_tensor *tj_clamp_(tj_tensor *self, tj_value min, tj_value max) { return CALL_(clamp_, T(self), min, max); }
tj_tensor *tj_clamp_tensor_(tj_tensor *self, tj_tensor *min, tj_tensor *max)
{
    return CALL_(clamp__Tensor, T(self), T(min), T(max));
}
tj_tensor *tj_div_scalar_mode_(tj_tensor *self, tj_value other, const char *rounding_mode)
{
    return CALL_(div__Scalar_mode, T(self), other, tj_v_str(rounding_mode));
}
tj_tensor *tj_masked_fill_(tj_tensor *self, tj_tensor *mask, tj_value value)
{
    return CALL_(masked_fill__Scalar, T(self), T(mask), value);
}
tj_tensor *tj_masked_fill_tensor_(tj_tensor *self, tj_tensor *mask, tj_tensor *value)
{
    return CALL_(masked_fill__Tensor, T(self), T(mask), T(value));
}
tj_tensor *tj_lerp_tensor_(tj_tensor *self, tj_tensor *end, tj_tensor *weight)
{
    return CALL_(lerp__Tensor, T(self), T(end), T(weight));
}
