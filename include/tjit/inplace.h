/* In-place operators (ATen's add_, mul_, addcmul_, ... as the optimisers use
 * them) and the out-of-place operators that functionalisation rewrites them
 * into (addcmul, lerp, copy, zero, fill, slice_scatter, select_scatter).
 *
 * In-place conventions (each is one registered operator, `aten::add_.Tensor`
 * and so on, dispatched like any other, so it is traced and recorded):
 * - The result is computed as by the out-of-place operator and written into
 *   self, which keeps its shape, strides and dtype: the broadcast shape of
 *   the operands must be self's shape (TJ_ERR_SHAPE otherwise), and the
 *   result dtype must be one self can hold (float into int64 or a non-bool
 *   result into bool gives TJ_ERR_DTYPE, as PyTorch's "result type Float can't be cast to
 *   the desired output type Long"), checked before the range of Scalar
 *   arguments as in PyTorch (clamp_ of an int64 self with a bound of 1e300 is
 *   that dtype error, clamp's the overflow error). self may be any view (non-contiguous,
 *   storage offset); its base sees the change.
 * - They return self (the caller's reference, not a new one) or NULL on
 *   failure, with self unchanged. A successful call bumps the version of
 *   self's storage (tj_tensor_version), which autograd checks.
 * - With grad mode on and an operand that requires grad, autograd records the
 *   call as PyTorch does: self's history becomes the call (self's value before
 *   the call is copied first only when the formula reads it: always for
 *   log_'s grad / self, for mul_ / div_ when other requires grad, never for
 *   add_ or for exp_, whose formula reads the result), and a
 *   plain self starts requiring grad. On a view (a view operator's result,
 *   or a view of one: out[:, t].copy_(h), y[:, :2].mul_(2)), as PyTorch's
 *   CopySlices: the view's root base takes the call's history (the gradient
 *   of its old value is its gradient with the view's region replaced by the
 *   call's gradient for self), a base that did not require grad starts
 *   requiring it, and the view's history and that of views of the base taken
 *   before follow the base's new one. Refused at the call, self unchanged
 *   (as PyTorch, TJ_ERR_INVALID_ARGUMENT): self a leaf that requires grad,
 *   or a view of one (run optimiser updates under tj_no_grad_begin, as the
 *   optimisers of optim.h do); a view made in no_grad mode; one of the views
 *   of tj_split, tj_split_with_sizes, tj_chunk, tj_unbind. Refused where
 *   PyTorch is not (TJ_ERR_UNSUPPORTED): a call giving history to a base
 *   without any while other views of it, taken before, are alive (PyTorch
 *   gives those history too; tjit cannot reach them: take them after the
 *   call), and a view of a base whose elements do not fill their storage
 *   span exactly. Views made in no_grad mode of a base that requires grad
 *   keep no history when the base is written in place later (PyTorch refuses
 *   to read them). Fake tensors count their views as real ones do, so a
 *   fake-mode trace records the same in-place calls as a real-mode one.
 *   Aliases from tj_tensor_detach carry no history and do not count: they
 *   see the new values. Values saved for earlier calls and overwritten here
 *   fail the backward pass (TJ_ERR_MODIFIED, autograd.h).
 * Out-of-place ones follow ops.h's conventions (new references owned by the
 * innermost scope). */
#ifndef TJIT_INPLACE_H
#define TJIT_INPLACE_H

#include "dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- in place ---- */
/** aten::add_.Tensor: self += alpha * other (other broadcasts to self). */
tj_tensor *tj_add_(tj_tensor *self, tj_tensor *other, tj_value alpha);
/** aten::add_.Scalar: self += alpha * other. */
tj_tensor *tj_add_scalar_(tj_tensor *self, tj_value other, tj_value alpha);
/** aten::sub_.Tensor: self -= alpha * other. */
tj_tensor *tj_sub_(tj_tensor *self, tj_tensor *other, tj_value alpha);
tj_tensor *tj_mul_(tj_tensor *self, tj_tensor *other);          /**< aten::mul_.Tensor */
tj_tensor *tj_mul_scalar_(tj_tensor *self, tj_value other);     /**< aten::mul_.Scalar */
/** aten::div_.Tensor: true division (int64 self: TJ_ERR_DTYPE). */
tj_tensor *tj_div_(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_div_scalar_(tj_tensor *self, tj_value other);     /**< aten::div_.Scalar */
tj_tensor *tj_sqrt_(tj_tensor *self);                           /**< aten::sqrt_ (float self only) */
/** aten::addcmul_: self += value * tensor1 * tensor2 (evaluated in that
 * order, as ATen's kernel, so float32 rounds identically). */
tj_tensor *tj_addcmul_(tj_tensor *self, tj_tensor *tensor1, tj_tensor *tensor2, tj_value value);
/** aten::addcdiv_: self += value * tensor1 / tensor2 (float only; integer or
 * bool tensor1 and tensor2 are refused whatever self is, as in ATen). */
tj_tensor *tj_addcdiv_(tj_tensor *self, tj_tensor *tensor1, tj_tensor *tensor2, tj_value value);
/** aten::lerp_.Scalar: self += weight * (end - self), with ATen's two-sided
 * formula (end - (end - self) * (1 - weight) when |weight| >= 0.5); end must
 * have self's dtype (float only). TJ_ERR_INVALID_ARGUMENT for a weight that
 * overflows the dtype (1e300 for float32). */
tj_tensor *tj_lerp_(tj_tensor *self, tj_tensor *end, tj_value weight);
/** aten::copy_: copies src (broadcast to self's shape, converted to self's
 * dtype) into self. */
tj_tensor *tj_copy_(tj_tensor *self, tj_tensor *src);
/** aten::zero_ / aten::fill_.Scalar: every element of self (any dtype)
 * takes 0 / value converted to self's dtype; returns self. They accept a
 * self whose elements share memory (x.expand(4, 3).zero_(), as PyTorch),
 * and so does their decomposition where the elements overlap along
 * broadcast (stride-0) dims (it writes self narrowed to index 0 there);
 * where they overlap otherwise (overlapping unfold windows) the
 * decomposition fails with TJ_ERR_UNSUPPORTED naming the operator. */
tj_tensor *tj_zero_(tj_tensor *self);
tj_tensor *tj_fill_(tj_tensor *self, tj_value value); /**< aten::fill_.Scalar (see tj_zero_) */
/** aten::tril_ / aten::triu_: tj_tril / tj_triu (ops.h) written into self
 * (rank >= 2, any dtype), which is returned. Errors: those of tj_tril, and
 * TJ_ERR_UNSUPPORTED for a self whose elements overlap (an expanded
 * tensor), which PyTorch 1.13 does not check. */
tj_tensor *tj_tril_(tj_tensor *self, int64_t diagonal);
tj_tensor *tj_triu_(tj_tensor *self, int64_t diagonal); /**< aten::triu_ (see tj_tril_) */
/** Memory overlap in the in-place indexed writers below (index_copy_,
 * scatter_'s four overloads, scatter_reduce_.two, scatter_add_,
 * index_add_), as ATen 1.13 checks it: an index or src (index_copy_'s and
 * index_add_'s source) that is self, or shares memory with it where both
 * are dense (a permutation of a contiguous layout), is refused, even with
 * no index; one ATen finds too hard to tell (not dense:
 * a column, x[::2]) is accepted and read before self is written (ATen
 * reads it as it writes: where that order matters the values differ). A
 * self that overlaps itself is refused: ATen refuses an expanded self, and
 * accepts overlapping windows with values that depend on its loop order.
 * Such refusals are TJ_ERR_UNSUPPORTED, naming the operator, the operand
 * and the shapes. */
/** aten::scatter_reduce_.two: tj_scatter_reduce (ops.h) written into self
 * (any dtype, any strides), which is returned. Errors: those of
 * tj_scatter_reduce, and the overlaps above. */
tj_tensor *tj_scatter_reduce_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src, const char *reduce,
                              bool include_self);
/** aten::index_copy_: tj_index_copy (ops.h) written into self (any dtype,
 * any strides), which is returned. Errors: those of tj_index_copy, and the
 * overlaps above. */
tj_tensor *tj_index_copy_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *source);
/** aten::scatter_.src / aten::scatter_.value: tj_scatter / tj_scatter_value
 * (ops.h) written into self (any dtype, any strides), which is returned.
 * Errors: those of the out-of-place operators, and the overlaps above. */
tj_tensor *tj_scatter_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src);
tj_tensor *tj_scatter_value_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_value value); /**< see tj_scatter_ */
/** aten::scatter_add_: tj_scatter_add (ops.h) written into self (float32,
 * float64, int64 or bool, any strides), which is returned: src[p] added at
 * p with p[dim] replaced by index[p], for every position p of index (int64,
 * self's rank). src has self's dtype and rank and is no smaller than index.
 * Its gradient is scatter_add's (self: the gradient; src: the gradient
 * gathered at the written positions); functionalisation and the core
 * decomposition table record scatter_add + copy_ (torch 1.13's make_fx
 * records aten.scatter_add_.default). Errors (naming aten::scatter_add_):
 * those of tj_scatter_add (TJ_ERR_INDEX for a dim or an index value out of
 * range, TJ_ERR_SHAPE, TJ_ERR_DTYPE), and the overlaps above. */
tj_tensor *tj_scatter_add_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src);
/** aten::index_add_: tj_index_add (ops.h) written into self (any strides),
 * which is returned: alpha * source.select(dim, i) added to
 * self.select(dim, index[i]) for each i (repeated indices accumulate).
 * alpha is an int or float Scalar, converted to self's dtype. Its gradient
 * is index_add's (self: the gradient; source: alpha times the gradient's
 * index_select); functionalisation and the core decomposition table record
 * index_add + copy_ (torch 1.13's make_fx records aten.index_add_.default).
 * Errors (naming aten::index_add_): those of tj_index_add (TJ_ERR_INDEX for
 * a dim or an index out of range, TJ_ERR_SHAPE, TJ_ERR_DTYPE,
 * TJ_ERR_INVALID_ARGUMENT for an alpha overflowing the dtype), and the
 * overlaps above. */
tj_tensor *tj_index_add_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *source, tj_value alpha);
/** aten::bernoulli_.float: self (any dtype, shape and strides) filled with
 * independent draws of 1 with probability p and 0 otherwise, from the
 * default generator (tj_bernoulli, ops.h, written into self), which keeps
 * its dtype and is returned. torch 1.13's make_fx records a training-mode
 * dropout as empty_like + bernoulli_.float(1 - p) + div_ + mul;
 * functionalisation and the core decomposition table record bernoulli.p +
 * copy_. As in PyTorch, the result keeps a history and passes self a zero
 * gradient (derivatives.yaml; bernoulli.p's result has none). Errors:
 * TJ_ERR_INVALID_ARGUMENT for p outside
 * [0, 1] or nan (naming aten::bernoulli_.float), self unchanged; the
 * overlaps above. */
tj_tensor *tj_bernoulli_(tj_tensor *self, double p);
/** aten::scatter_.reduce / aten::scatter_.value_reduce:
 * tj_scatter_src_reduce / tj_scatter_value_reduce (ops.h) written into self
 * (any dtype, any strides), which is returned. No gradient, as in PyTorch
 * 1.13 (a backward pass reaching the call fails with TJ_ERR_UNSUPPORTED).
 * Errors (naming the in-place operator): those of the out-of-place
 * operators, and the overlaps above. */
tj_tensor *tj_scatter_src_reduce_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src, const char *reduce);
tj_tensor *tj_scatter_value_reduce_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_value value,
                                    const char *reduce); /**< see tj_scatter_src_reduce_ */
/** aten::index_fill_.int_Scalar: tj_index_fill (ops.h) written into self
 * (any dtype, any strides), which is returned. Memory overlap as ATen 1.13
 * checks it (assert_no_overlap): self may be an expanded tensor (PyTorch
 * warns that this is deprecated); an index sharing memory with self is
 * refused, unless one of them is not dense (a permutation of a contiguous
 * layout), which ATen finds too hard to tell and accepts (the indices are
 * read before self is written). Errors: those of tj_index_fill, and
 * TJ_ERR_UNSUPPORTED naming the operator, index and self for such an
 * index. On an expanded self, its decomposition and tj_pass_functionalize
 * accept a dim that is not broadcast (each index of a broadcast dim gets
 * one value) and refuse a broadcast one (TJ_ERR_UNSUPPORTED). */
tj_tensor *tj_index_fill_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_value value);
/** aten::index_fill_.int_Tensor: tj_index_fill_tensor (ops.h) written into
 * self, as tj_index_fill_; the 0-dim value may be an element of self (read
 * first, as PyTorch's value.item()). */
tj_tensor *tj_index_fill_tensor_(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *value);
/** aten::index_put_: self[indices] = values (or += with accumulate), as
 * tj_index_put (ops.h) but in self. Memory overlap as ATen 1.13 checks it
 * (assert_no_overlap): self may be an expanded tensor (PyTorch warns that
 * this is deprecated); values or an index sharing memory with self are
 * refused, unless one of the two is not dense (a permutation of a
 * contiguous layout), which ATen finds too hard to tell and accepts (here
 * values are then read from a copy). Errors: those of tj_index_put, and
 * TJ_ERR_UNSUPPORTED naming the operator, the operand (values,
 * indices[k]) and self for such an overlap. Its decomposition (index_put
 * written back with copy_) and tj_pass_functionalize refuse an expanded
 * self (TJ_ERR_UNSUPPORTED): the values it leaves differ along the
 * broadcast dims, which no write-back reproduces. */
tj_tensor *tj_index_put_(tj_tensor *self, tj_tensor *const *indices, int n, tj_tensor *values, bool accumulate);

/* ---- in-place views ----
 * aten::unsqueeze_, squeeze_.dim, squeeze_, transpose_, t_, as_strided_
 * (PyTorch's x.unsqueeze_(d), ...): self (any dtype, any strides) takes the
 * shape, strides and storage offset of the view of the operator of the
 * same name (tj_unsqueeze, tj_squeeze_dim, tj_squeeze, tj_transpose, tj_t,
 * tj_as_strided of ops.h: as_strided_ is the primitive the others
 * decompose to, as in torch);
 * its storage and values stay, and views taken of it before keep their own
 * geometry. Each returns self (the caller's reference) or NULL with self
 * unchanged. Errors (naming the in-place operator and the values): those of
 * the view operator, TJ_ERR_INDEX for a dim out of range ("aten::unsqueeze_:
 * dim 3 is out of range for a tensor of rank 2 (expected -3..2)"),
 * TJ_ERR_SHAPE for t_ of rank > 2, TJ_ERR_INVALID_ARGUMENT for unsqueeze_ of
 * a tensor of rank TJ_MAX_DIMS. A call bumps self's storage version, as
 * PyTorch: values saved for a gradient through self (exp's result, sin's
 * input) then fail the backward pass with TJ_ERR_MODIFIED.
 * Autograd (as PyTorch 1.13): self's history becomes the call, whose
 * gradient is the view operator's (squeeze_'s unsqueezes at self's old
 * size-1 dims); on a view, only the view's history changes (no write
 * reaches its base), and a later in-place write through it reaches its base
 * over its new geometry. Refused as the in-place operators above are (self a
 * leaf that requires grad or a view of one, a view made in no_grad mode, a
 * view of tj_split / tj_chunk / tj_unbind), TJ_ERR_INVALID_ARGUMENT.
 * Traced calls record the in-place operator (as torch 1.13's make_fx);
 * tj_pass_functionalize turns each into its view operator. */
tj_tensor *tj_unsqueeze_(tj_tensor *self, int64_t dim);
tj_tensor *tj_squeeze_dim_(tj_tensor *self, int64_t dim); /**< aten::squeeze_.dim: no change if size != 1 */
tj_tensor *tj_squeeze_(tj_tensor *self);
tj_tensor *tj_transpose_(tj_tensor *self, int64_t dim0, int64_t dim1);
tj_tensor *tj_t_(tj_tensor *self); /**< aten::t_: rank <= 2 */
/** aten::as_strided_: self takes tj_as_strided's geometry (size, stride: ndim
 * entries each; storage offset self's when has_offset is false), checked
 * against self's storage as tj_as_strided's (errors naming as_strided_). */
tj_tensor *tj_as_strided_(tj_tensor *self, const int64_t *size, const int64_t *stride, int ndim, bool has_offset,
                          int64_t storage_offset);

/* ---- in-place forms of the elementwise operators ----
 * Each is the out-of-place operator of ops.h of the same name (less the
 * trailing '_') written into self under the conventions above: same
 * arguments, dtypes and errors as that operator, each error naming the
 * in-place operator (aten::floor_: ...), plus TJ_ERR_SHAPE when the
 * operands broadcast to a shape other than self's, TJ_ERR_DTYPE when the
 * result dtype is one self cannot hold (int64 self with a float result, as
 * PyTorch's "result type Float can't be cast to the desired output type
 * Long"; comparisons write their bool result as 0 / 1 in self's dtype), and
 * TJ_ERR_UNSUPPORTED when an operand partly overlaps self. A result of a
 * wider dtype of self's kind (float64 into float32) is computed in that
 * dtype and rounded into self. They return self or NULL. Traced calls are
 * recorded as the in-place operator; functionalisation and their
 * decomposition turn them into the out-of-place operator (plus copy_).
 * Under autograd the gradient is the out-of-place operator's, computed over
 * a copy of self's old value when its formula reads it (not for exp_,
 * tanh_, sigmoid_, relu_, rsqrt_, reciprocal_, expm1_, exp2_, which read the
 * result, nor for neg_, the rounding forms, sub_.Scalar, the Scalar
 * remainder_ / fmod_, div_.Scalar_mode, masked_fill_; div_.Tensor_mode,
 * remainder_ / fmod_ .Tensor and lerp_.Tensor only when other or weight
 * requires grad); comparisons and logical operators pass zero. */
/** Unary: aten::abs_, neg_, exp_, log_, rsqrt_, tanh_, sigmoid_, erf_,
 * reciprocal_, sin_, cos_, log1p_, expm1_, relu_, silu_, sign_, square_,
 * hardsigmoid_, hardswish_, floor_, ceil_, round_, trunc_, frac_, asin_,
 * acos_, atan_, sinh_, cosh_, log2_, log10_, exp2_, logical_not_. Float
 * results (exp_, log_, ...) into an int64 self: TJ_ERR_DTYPE. aten::square_
 * is implicit, as in ATen 1.13: pow_.Scalar(self, 2), which graphs record
 * (a bool self: TJ_ERR_DTYPE, the int64 square not fitting it). */
tj_tensor *tj_abs_(tj_tensor *self);
tj_tensor *tj_neg_(tj_tensor *self);
tj_tensor *tj_exp_(tj_tensor *self);
tj_tensor *tj_log_(tj_tensor *self);
tj_tensor *tj_rsqrt_(tj_tensor *self);
tj_tensor *tj_tanh_(tj_tensor *self);
tj_tensor *tj_sigmoid_(tj_tensor *self);
tj_tensor *tj_erf_(tj_tensor *self);
tj_tensor *tj_reciprocal_(tj_tensor *self);
tj_tensor *tj_sin_(tj_tensor *self);
tj_tensor *tj_cos_(tj_tensor *self);
tj_tensor *tj_log1p_(tj_tensor *self);
tj_tensor *tj_expm1_(tj_tensor *self);
tj_tensor *tj_relu_(tj_tensor *self);
tj_tensor *tj_silu_(tj_tensor *self);
tj_tensor *tj_sign_(tj_tensor *self);
tj_tensor *tj_square_(tj_tensor *self);
tj_tensor *tj_hardsigmoid_(tj_tensor *self);
tj_tensor *tj_hardswish_(tj_tensor *self);
tj_tensor *tj_floor_(tj_tensor *self);
tj_tensor *tj_ceil_(tj_tensor *self);
tj_tensor *tj_round_(tj_tensor *self);
tj_tensor *tj_trunc_(tj_tensor *self);
tj_tensor *tj_frac_(tj_tensor *self);
tj_tensor *tj_asin_(tj_tensor *self);
tj_tensor *tj_acos_(tj_tensor *self);
tj_tensor *tj_atan_(tj_tensor *self);
tj_tensor *tj_sinh_(tj_tensor *self);
tj_tensor *tj_cosh_(tj_tensor *self);
tj_tensor *tj_log2_(tj_tensor *self);
tj_tensor *tj_log10_(tj_tensor *self);
tj_tensor *tj_exp2_(tj_tensor *self);
tj_tensor *tj_logical_not_(tj_tensor *self);
tj_tensor *tj_bitwise_not_(tj_tensor *self); /**< aten::bitwise_not_: bool or int64 self (tj_bitwise_not) */
/** The special functions' in-place forms (tj_lgamma, tj_digamma, tj_erfinv,
 * tj_erfc, tj_i0, tj_sinc, tj_logit, tj_hypot, tj_copysign): aten::lgamma_,
 * digamma_, erfinv_, erfc_, i0_, sinc_, logit_ (eps a float or
 * tj_v_none()), hypot_, copysign_.Tensor (other broadcast to self's
 * shape). A float self only: an int64 self cannot hold the float result
 * (TJ_ERR_DTYPE). */
tj_tensor *tj_lgamma_(tj_tensor *self);
tj_tensor *tj_digamma_(tj_tensor *self);
tj_tensor *tj_erfinv_(tj_tensor *self);
tj_tensor *tj_erfc_(tj_tensor *self);
tj_tensor *tj_i0_(tj_tensor *self);
tj_tensor *tj_sinc_(tj_tensor *self);
tj_tensor *tj_logit_(tj_tensor *self, tj_value eps);
tj_tensor *tj_hypot_(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_copysign_(tj_tensor *self, tj_tensor *other);
/** aten::copysign_.Scalar, xlogy_.Tensor, xlogy_.Scalar_Other: tj_copysign_scalar,
 * tj_xlogy and tj_xlogy_scalar_other (ops.h) written into self, which is
 * returned; a float self only (TJ_ERR_DTYPE for an int64 one, which cannot
 * hold the float result), other broadcast to self's shape. */
tj_tensor *tj_copysign_scalar_(tj_tensor *self, tj_value other);
tj_tensor *tj_xlogy_(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_xlogy_scalar_other_(tj_tensor *self, tj_value other);
/** aten::uniform_, aten::normal_, aten::exponential_: tj_uniform,
 * tj_normal_functional and tj_exponential (ops.h) drawn into self (float32
 * / float64, any strides), which is returned; the draws follow self's
 * logical element order, so the in-place and functional forms give the same
 * numbers from the same generator state. Errors as those. */
tj_tensor *tj_uniform_(tj_tensor *self, double from, double to);
tj_tensor *tj_normal_(tj_tensor *self, double mean, double std);
tj_tensor *tj_exponential_(tj_tensor *self, double lambd);
/** aten::polygamma_(self, n): self = tj_polygamma(n, self), returned;
 * implicit (copy_ of polygamma: a graph records those two). A float self
 * only; errors as tj_polygamma (n < 0: TJ_ERR_INVALID_ARGUMENT) and
 * TJ_ERR_DTYPE for an int64 self. */
tj_tensor *tj_polygamma_(tj_tensor *self, int64_t n);
/** Unary with arguments, as tj_gelu, tj_leaky_relu, tj_elu, tj_hardtanh,
 * tj_round_decimals, tj_nan_to_num: aten::gelu_, leaky_relu_, elu_,
 * hardtanh_, round_.decimals, nan_to_num_. */
tj_tensor *tj_gelu_(tj_tensor *self, const char *approximate);
/** aten::celu_, mish_: tj_celu / tj_mish (ops.h) written into self
 * (float32 / float64), which is returned; their gradients are the
 * out-of-place ones over a copy of self's old value (PyTorch's celu_ reads
 * its result instead). aten::selu_ is implicit, as in ATen 1.13: elu_ with
 * SELU's alpha and scale, so a graph records elu_. Errors as the
 * out-of-place operators (selu_'s naming aten::elu_). */
tj_tensor *tj_celu_(tj_tensor *self, tj_value alpha);
tj_tensor *tj_selu_(tj_tensor *self);
tj_tensor *tj_mish_(tj_tensor *self);
tj_tensor *tj_leaky_relu_(tj_tensor *self, tj_value negative_slope);
tj_tensor *tj_elu_(tj_tensor *self, tj_value alpha, tj_value scale, tj_value input_scale);
tj_tensor *tj_hardtanh_(tj_tensor *self, tj_value min_val, tj_value max_val);
tj_tensor *tj_round_decimals_(tj_tensor *self, int64_t decimals);
tj_tensor *tj_nan_to_num_(tj_tensor *self, tj_value nan, tj_value posinf, tj_value neginf);
/** Binary, other broadcasting to self's shape: aten::pow_.Tensor
 * (tj_pow_), pow_.Scalar (tj_pow_scalar_, paired with pow.Tensor_Scalar),
 * remainder_.Tensor / .Scalar, fmod_.Tensor / .Scalar, atan2_,
 * sub_.Scalar, div_.Tensor_mode, div_.Scalar_mode (tj_div_scalar_mode_),
 * masked_fill_.Scalar / masked_fill_.Tensor (mask bool; the .Tensor value
 * 0-dim, read before anything is written, so it may be an element of self,
 * tj_masked_fill_tensor_). */
tj_tensor *tj_pow_(tj_tensor *self, tj_tensor *exponent);
tj_tensor *tj_pow_scalar_(tj_tensor *self, tj_value exponent);
tj_tensor *tj_remainder_(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_remainder_scalar_(tj_tensor *self, tj_value other);
tj_tensor *tj_fmod_(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_fmod_scalar_(tj_tensor *self, tj_value other);
tj_tensor *tj_atan2_(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_sub_scalar_(tj_tensor *self, tj_value other, tj_value alpha);
tj_tensor *tj_div_mode_(tj_tensor *self, tj_tensor *other, const char *rounding_mode);
tj_tensor *tj_div_scalar_mode_(tj_tensor *self, tj_value other, const char *rounding_mode);
tj_tensor *tj_masked_fill_(tj_tensor *self, tj_tensor *mask, tj_value value);
tj_tensor *tj_masked_fill_tensor_(tj_tensor *self, tj_tensor *mask, tj_tensor *value);
/** aten::lerp_.Tensor: tj_lerp_tensor written into self (end and weight
 * broadcast to self's shape). */
tj_tensor *tj_lerp_tensor_(tj_tensor *self, tj_tensor *end, tj_tensor *weight);
/** Clamps: aten::clamp_ (Scalar bounds or tj_v_none()), clamp_.Tensor
 * (tensor bounds, either NULL), clamp_min_ / clamp_max_ (Scalar),
 * clamp_min_.Tensor / clamp_max_.Tensor (tensor bound, gradient reaching
 * it too). A float bound into an int64 self: TJ_ERR_DTYPE. */
tj_tensor *tj_clamp_(tj_tensor *self, tj_value min, tj_value max);
tj_tensor *tj_clamp_tensor_(tj_tensor *self, tj_tensor *min, tj_tensor *max);
tj_tensor *tj_clamp_min_(tj_tensor *self, tj_value min);
tj_tensor *tj_clamp_max_(tj_tensor *self, tj_value max);
tj_tensor *tj_clamp_min_tensor_(tj_tensor *self, tj_tensor *min);
tj_tensor *tj_clamp_max_tensor_(tj_tensor *self, tj_tensor *max);
/** Comparisons and logical operators: aten::eq_ / ne_ / lt_ / le_ / gt_ /
 * ge_ (.Tensor: tj_eq_, ...; .Scalar: tj_eq_scalar_, ...), logical_and_ /
 * or_ / xor_: self becomes 1 where true and 0 elsewhere, in its dtype. */
tj_tensor *tj_eq_(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_ne_(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_lt_(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_le_(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_gt_(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_ge_(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_eq_scalar_(tj_tensor *self, tj_value other);
tj_tensor *tj_ne_scalar_(tj_tensor *self, tj_value other);
tj_tensor *tj_lt_scalar_(tj_tensor *self, tj_value other);
tj_tensor *tj_le_scalar_(tj_tensor *self, tj_value other);
tj_tensor *tj_gt_scalar_(tj_tensor *self, tj_value other);
tj_tensor *tj_ge_scalar_(tj_tensor *self, tj_value other);
tj_tensor *tj_logical_and_(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_logical_or_(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_logical_xor_(tj_tensor *self, tj_tensor *other);

/* ---- out of place ---- */
/** aten::addcmul: self + value * tensor1 * tensor2; the three broadcast; dtype
 * is their result_type (bool: TJ_ERR_DTYPE). */
tj_tensor *tj_addcmul(tj_tensor *self, tj_tensor *tensor1, tj_tensor *tensor2, tj_value value);
/** aten::addcdiv: self + value * tensor1 / tensor2 (float only; integer or
 * bool tensor1 and tensor2 are refused whatever self is, as in ATen). */
tj_tensor *tj_addcdiv(tj_tensor *self, tj_tensor *tensor1, tj_tensor *tensor2, tj_value value);
/** aten::lerp.Scalar: self + weight * (end - self) (float, same dtypes). */
tj_tensor *tj_lerp(tj_tensor *self, tj_tensor *end, tj_value weight);
/** aten::lerp.Tensor: tj_lerp with a weight per element: self, end and
 * weight broadcast together, all of one float dtype; ATen's two-sided
 * formula per element (end - (end - self) * (1 - weight) where |weight| >=
 * 0.5). Result: the broadcast shape, self's dtype. Errors: TJ_ERR_DTYPE
 * when end or weight has another dtype than self ("expected dtype float32
 * for `weight`") or for int64 / bool; TJ_ERR_SHAPE when they do not
 * broadcast. Gradients: grad * (1 - weight) for self, grad * weight for end,
 * grad * (end - self) for weight. */
tj_tensor *tj_lerp_tensor(tj_tensor *self, tj_tensor *end, tj_tensor *weight);
/** aten::copy: a new tensor of self's shape and dtype holding src (broadcast,
 * converted); self's values are not read. */
tj_tensor *tj_copy(tj_tensor *self, tj_tensor *src);
tj_tensor *tj_zero(tj_tensor *self);                            /**< aten::zero: zeros of self's shape and dtype */
tj_tensor *tj_fill(tj_tensor *self, tj_value value);            /**< aten::fill.Scalar: value, self's shape and dtype */
/** aten::fill.Tensor / fill_.Tensor (what `x[:, 1] = 7` records): the 0-dim
 * `value` converted to self's dtype everywhere in self's shape; a value of
 * another rank is TJ_ERR_SHAPE. Gradient: zero for self, the gradient's sum
 * for value. */
tj_tensor *tj_fill_tensor(tj_tensor *self, tj_tensor *value);
tj_tensor *tj_fill_tensor_(tj_tensor *self, tj_tensor *value);
/** aten::slice_scatter: a copy of self whose slice (as tj_slice with the same
 * dim/start/end/step) holds src; src must have exactly the slice's shape
 * (TJ_ERR_SHAPE otherwise). */
tj_tensor *tj_slice_scatter(tj_tensor *self, tj_tensor *src, int64_t dim, bool has_start, int64_t start,
                            bool has_end, int64_t end, int64_t step);
/** aten::select_scatter: a copy of self whose select(dim, index) holds src. */
tj_tensor *tj_select_scatter(tj_tensor *self, tj_tensor *src, int64_t dim, int64_t index);
/** aten::diagonal_scatter: a copy of self (any dtype, rank >= 2) whose
 * diagonal (as tj_diagonal with the same offset / dim1 / dim2) holds src,
 * converted to self's dtype; returns a new tensor of self's shape and dtype.
 * Errors (naming aten::diagonal_scatter): those of tj_diagonal, TJ_ERR_SHAPE
 * when src's shape is not the diagonal's. */
tj_tensor *tj_diagonal_scatter(tj_tensor *self, tj_tensor *src, int64_t offset, int64_t dim1, int64_t dim2);
/** aten::as_strided_scatter: a copy of self (any dtype) whose elements at
 * the as_strided geometry (size, stride: ndim entries each; storage offset,
 * 0 when has_offset is false) over the storage of self's clone hold src,
 * converted to self's dtype, as PyTorch: the clone keeps the layout of a
 * self whose elements fill their span (a transposed one: the geometry
 * follows its storage order), and is row-major otherwise. The result is
 * row-major. The gradient follows the same order (PyTorch 1.13 refuses a
 * non-contiguous self requiring grad). Where the
 * geometry overlaps itself one of the elements written there is kept (which
 * one is unspecified, as in PyTorch). Errors
 * (naming aten::as_strided_scatter): those of tj_as_strided against self's
 * numel, TJ_ERR_SHAPE when src's shape is not size. */
tj_tensor *tj_as_strided_scatter(tj_tensor *self, tj_tensor *src, const int64_t *size, const int64_t *stride, int ndim,
                                 bool has_offset, int64_t storage_offset);

#ifdef __cplusplus
}
#endif
#endif
