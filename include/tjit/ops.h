/* The typed operator API: one function per ATen overload, each a thin
 * wrapper that boxes its arguments and calls tj_dispatch, so every call is
 * seen by the mode stack (tracing) and autograd.
 *
 * Conventions for every function below:
 * - Tensor arguments may have any strides (views, broadcast strides); results
 *   are new contiguous tensors unless the operator is a view, whose result
 *   shares storage with its input.
 * - Results are new references owned by the innermost open scope, or by the
 *   caller (release with tj_tensor_release) when no scope is open.
 * - On failure the function returns NULL (or a status) and sets the thread's
 *   last error, naming the ATen operator and the offending shapes, dtypes or
 *   values. A NULL tensor argument gives NULL, so a chain of calls can be
 *   checked once at the end: tj_relu(tj_add(a, b)) after a failed tj_add
 *   keeps tj_add's status (TJ_ERR_SHAPE) and names it in the message, until
 *   the error is read; after that a NULL argument is TJ_ERR_INVALID_ARGUMENT
 *   (see tj_last_error).
 * - Array arguments (sizes, dims, tensor lists, masks) come with their
 *   length: a NULL array of positive length, a negative length or an int
 *   list of more than 64 entries gives TJ_ERR_INVALID_ARGUMENT.
 * - Functions with several results (tj_status ... tj_tensor **a, **b) write
 *   them to the non-NULL pointers and release the ones not asked for.
 * - `Scalar` arguments are boxed values: tj_v_int(2) or tj_v_float(2.0). As in
 *   PyTorch, an int Scalar keeps an int64 tensor int64; a float Scalar makes it
 *   float32.
 * - Semantics (broadcasting, type promotion, NaN propagation, negative dims,
 *   empty tensors) are PyTorch 1.13's for the named ATen operator. */
#ifndef TJIT_OPS_H
#define TJIT_OPS_H

#include "dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Elementwise, unary: float32/float64 in (int64 and bool inputs are
 * promoted to float32, except abs and neg, which keep int64), same shape
 * out. ---- */
tj_tensor *tj_abs(tj_tensor *self);        /**< aten::abs; int64 stays int64 */
tj_tensor *tj_neg(tj_tensor *self);        /**< aten::neg; bool input: TJ_ERR_DTYPE */
tj_tensor *tj_exp(tj_tensor *self);        /**< aten::exp (SLEEF, 1 ULP) */
tj_tensor *tj_log(tj_tensor *self);        /**< aten::log; log(0) = -inf, log(<0) = nan */
tj_tensor *tj_sqrt(tj_tensor *self);       /**< aten::sqrt */
tj_tensor *tj_rsqrt(tj_tensor *self);      /**< aten::rsqrt: 1/sqrt(x) */
tj_tensor *tj_tanh(tj_tensor *self);       /**< aten::tanh */
tj_tensor *tj_sigmoid(tj_tensor *self);    /**< aten::sigmoid: 1/(1+exp(-x)) */
tj_tensor *tj_erf(tj_tensor *self);        /**< aten::erf */
tj_tensor *tj_reciprocal(tj_tensor *self); /**< aten::reciprocal: 1/x */
tj_tensor *tj_sin(tj_tensor *self);        /**< aten::sin */
tj_tensor *tj_cos(tj_tensor *self);        /**< aten::cos */
tj_tensor *tj_log1p(tj_tensor *self);      /**< aten::log1p: log(1+x), accurate near 0 */
tj_tensor *tj_expm1(tj_tensor *self);      /**< aten::expm1: exp(x)-1, accurate near 0 */
tj_tensor *tj_relu(tj_tensor *self);       /**< aten::relu: max(x, 0); keeps the dtype (int64 too); nan stays nan */
/** aten::gelu. approximate is "none" (x*Phi(x) through erf) or "tanh" (the
 * tanh approximation of Hendrycks & Gimpel); other strings give
 * TJ_ERR_INVALID_ARGUMENT; integer input gives TJ_ERR_DTYPE. */
tj_tensor *tj_gelu(tj_tensor *self, const char *approximate);
tj_tensor *tj_silu(tj_tensor *self);       /**< aten::silu: x*sigmoid(x) */

/* ---- Elementwise, binary and ternary: operands broadcast (TJ_ERR_SHAPE when
 * they cannot); the result dtype follows PyTorch's result_type. An alpha that
 * overflows the result dtype (1e300 for float32) gives TJ_ERR_INVALID_ARGUMENT
 * as in PyTorch; a Scalar `other` does not (it may become inf). ---- */
tj_tensor *tj_add(tj_tensor *self, tj_tensor *other);                   /**< aten::add.Tensor, alpha 1 */
tj_tensor *tj_add_alpha(tj_tensor *self, tj_tensor *other, tj_value alpha); /**< aten::add.Tensor: self + alpha*other */
tj_tensor *tj_add_scalar(tj_tensor *self, tj_value other);              /**< aten::add.Scalar, alpha 1 */
tj_tensor *tj_sub(tj_tensor *self, tj_tensor *other);                   /**< aten::sub.Tensor; bool operands: TJ_ERR_DTYPE */
tj_tensor *tj_sub_alpha(tj_tensor *self, tj_tensor *other, tj_value alpha); /**< aten::sub.Tensor: self - alpha*other */
tj_tensor *tj_sub_scalar(tj_tensor *self, tj_value other);              /**< aten::sub.Scalar */
tj_tensor *tj_mul(tj_tensor *self, tj_tensor *other);                   /**< aten::mul.Tensor */
tj_tensor *tj_mul_scalar(tj_tensor *self, tj_value other);              /**< aten::mul.Scalar */
tj_tensor *tj_div(tj_tensor *self, tj_tensor *other);                   /**< aten::div.Tensor: true division (int/int gives float32) */
tj_tensor *tj_div_scalar(tj_tensor *self, tj_value other);              /**< aten::div.Scalar */
/** aten::div.Tensor_mode: rounding_mode NULL (true division), "trunc" or
 * "floor" (other strings: TJ_ERR_INVALID_ARGUMENT); integer division by zero
 * gives TJ_ERR_INVALID_ARGUMENT ("ZeroDivisionError" in PyTorch). */
tj_tensor *tj_div_mode(tj_tensor *self, tj_tensor *other, const char *rounding_mode);
/** aten::div.Scalar_mode: tj_div_mode by a Scalar, which promotes as a
 * wrapped number (int64 self floor-divided by 2 stays int64, by 2.5 gives
 * float32; true division of int64 gives float32). Result: self's shape.
 * Errors: TJ_ERR_INVALID_ARGUMENT for an unknown rounding_mode and for an
 * integer division by zero; TJ_ERR_DTYPE for a bool result with a rounding
 * mode. Gradient: grad / other (zero with a rounding mode). */
tj_tensor *tj_div_scalar_mode(tj_tensor *self, tj_value other, const char *rounding_mode);
tj_tensor *tj_pow_scalar(tj_tensor *self, tj_value exponent);           /**< aten::pow.Tensor_Scalar */
tj_tensor *tj_pow(tj_tensor *self, tj_tensor *exponent);                /**< aten::pow.Tensor_Tensor */
tj_tensor *tj_maximum(tj_tensor *self, tj_tensor *other);               /**< aten::maximum; nan propagates */
tj_tensor *tj_minimum(tj_tensor *self, tj_tensor *other);               /**< aten::minimum; nan propagates */
tj_tensor *tj_eq(tj_tensor *self, tj_tensor *other);                    /**< aten::eq.Tensor -> bool */
tj_tensor *tj_ne(tj_tensor *self, tj_tensor *other);                    /**< aten::ne.Tensor -> bool */
tj_tensor *tj_lt(tj_tensor *self, tj_tensor *other);                    /**< aten::lt.Tensor -> bool */
tj_tensor *tj_le(tj_tensor *self, tj_tensor *other);                    /**< aten::le.Tensor -> bool */
tj_tensor *tj_gt(tj_tensor *self, tj_tensor *other);                    /**< aten::gt.Tensor -> bool */
tj_tensor *tj_ge(tj_tensor *self, tj_tensor *other);                    /**< aten::ge.Tensor -> bool */
/* The Scalar forms (PyTorch's `x < 0.5`) compare in result_type(self, other)
 * (an int64 tensor against a float Scalar compares in float32); nan compares
 * false, except in ne (true). */
tj_tensor *tj_eq_scalar(tj_tensor *self, tj_value other);               /**< aten::eq.Scalar -> bool */
tj_tensor *tj_ne_scalar(tj_tensor *self, tj_value other);               /**< aten::ne.Scalar -> bool */
tj_tensor *tj_lt_scalar(tj_tensor *self, tj_value other);               /**< aten::lt.Scalar -> bool */
tj_tensor *tj_le_scalar(tj_tensor *self, tj_value other);               /**< aten::le.Scalar -> bool */
tj_tensor *tj_gt_scalar(tj_tensor *self, tj_value other);               /**< aten::gt.Scalar -> bool */
tj_tensor *tj_ge_scalar(tj_tensor *self, tj_value other);               /**< aten::ge.Scalar -> bool */
/** aten::where.self: condition must be bool (TJ_ERR_DTYPE otherwise); the
 * three operands broadcast together. */
tj_tensor *tj_where(tj_tensor *condition, tj_tensor *self, tj_tensor *other);
/** aten::clamp: min/max are Scalars or tj_v_none(); both none gives
 * TJ_ERR_INVALID_ARGUMENT. nan in self propagates. Errors: TJ_ERR_DTYPE for
 * a bool result; TJ_ERR_INVALID_ARGUMENT for a bound that overflows the
 * result dtype (1e300 for float32, as PyTorch). */
tj_tensor *tj_clamp(tj_tensor *self, tj_value min, tj_value max);
/** aten::clamp.Tensor: min/max tensors (either may be NULL, not both); they
 * broadcast with self; nan in a bound propagates. A bool result (all
 * operands bool) is allowed with one bound (max / min of the masks, as
 * PyTorch 1.13's maximum / minimum path) and TJ_ERR_DTYPE with both (as
 * PyTorch's "clamp_cpu not implemented for 'Bool'"). */
tj_tensor *tj_clamp_tensor(tj_tensor *self, tj_tensor *min, tj_tensor *max);
/** aten::masked_fill.Scalar: self where mask is false, value (converted to
 * self's dtype) where it is true. mask is bool and broadcasts with self;
 * the result has their broadcast shape and self's dtype. Errors:
 * TJ_ERR_DTYPE for a mask of another dtype (PyTorch documents a bool mask;
 * torch 1.13 reads an int64 or float mask's first byte per element, an
 * accident tjit does not follow), TJ_ERR_SHAPE when they do not broadcast,
 * TJ_ERR_INVALID_ARGUMENT for a value that overflows self's dtype. */
tj_tensor *tj_masked_fill(tj_tensor *self, tj_tensor *mask, tj_value value);
/** aten::masked_fill.Tensor: tj_masked_fill with the value read from a 0-dim
 * tensor of any dtype (converted to self's: 7.5 into int64 is 7). Result:
 * the broadcast shape of self and mask, self's dtype. Errors: TJ_ERR_SHAPE
 * for a value that is not 0-dim or a mask that does not broadcast;
 * TJ_ERR_DTYPE for a mask that is not bool; TJ_ERR_INVALID_ARGUMENT when the
 * call runs and the value overflows self's dtype (float64 1e300 into
 * float32, nan into int64). Gradients reach self where mask is false and
 * value as the sum of the gradient where it is true. */
tj_tensor *tj_masked_fill_tensor(tj_tensor *self, tj_tensor *mask, tj_tensor *value);
tj_tensor *tj_logaddexp(tj_tensor *self, tj_tensor *other);             /**< aten::logaddexp: log(exp(a)+exp(b)), stable */

/* ---- Session 14 elementwise operators. Results are new contiguous tensors
 * owned by the caller's scope; NULL on error (see tj_last_error()). ---- */
/** aten::where.ScalarOther / where.ScalarSelf / where.Scalar: tj_where with
 * one or both branches a Scalar (tj_v_int / tj_v_float / tj_v_bool). The
 * result dtype is PyTorch's result_type(self, other), a Scalar counting as a
 * wrapped number: where(c, int64 x, 0.5) is float32, where(c, 1.0, 0) float32,
 * where(c, 1, 0) int64, where(c, true, false) bool; the shape is the broadcast
 * of condition and the Tensor branch. Errors: TJ_ERR_DTYPE for a non-bool
 * condition, TJ_ERR_SHAPE when condition and the Tensor branch do not
 * broadcast. */
tj_tensor *tj_where_scalar_other(tj_tensor *condition, tj_tensor *self, tj_value other);
tj_tensor *tj_where_scalar_self(tj_tensor *condition, tj_value self, tj_tensor *other);
tj_tensor *tj_where_scalar(tj_tensor *condition, tj_value self, tj_value other);
/** aten::logical_not: bool tensor of self == 0 (any dtype; nan is true, so
 * its logical_not false; -0.0 is false). Shape of self. Never fails on
 * valid tensors. */
tj_tensor *tj_logical_not(tj_tensor *self);
/** aten::bitwise_not: ~self, of bool self logical_not, of int64 the
 * bitwise complement (-1 - self, wrapping: ~INT64_MIN is INT64_MAX). torch
 * 1.13 records it for `~mask` and for cross_entropy with label_smoothing.
 * Result: self's shape and dtype; no gradient. Errors: TJ_ERR_DTYPE for a
 * float self (as PyTorch's "not implemented for 'Float'"). */
tj_tensor *tj_bitwise_not(tj_tensor *self);
/** aten::bitwise_and.Tensor / bitwise_or.Tensor / bitwise_xor.Tensor: self & | ^
 * other elementwise, broadcast, in result_type(self, other): int64 (two's
 * complement bits) or bool (logical and / or / xor). TJ_ERR_DTYPE naming the
 * operator for a float result dtype (ATen: "bitwise_and_cpu" not implemented
 * for 'Float'), TJ_ERR_SHAPE for shapes that do not broadcast. No gradient. */
tj_tensor *tj_bitwise_and(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_bitwise_or(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_bitwise_xor(tj_tensor *self, tj_tensor *other);
/** The .Scalar overloads: other an int or bool Scalar (a float one makes a
 * float32 result: refused as above). */
tj_tensor *tj_bitwise_and_scalar(tj_tensor *self, tj_value other);
tj_tensor *tj_bitwise_or_scalar(tj_tensor *self, tj_value other);
tj_tensor *tj_bitwise_xor_scalar(tj_tensor *self, tj_value other);
/** aten::logical_and / logical_or / logical_xor: bool tensor of (self != 0)
 * op (other != 0), any dtypes (compared in their result_type; nan is
 * true). self and other broadcast; TJ_ERR_SHAPE naming the operator and both
 * shapes when they do not. Non-differentiable. */
tj_tensor *tj_logical_and(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_logical_or(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_logical_xor(tj_tensor *self, tj_tensor *other);
/** aten::sign: (0 < x) - (x < 0) in self's dtype (float, int64, bool: the
 * identity); nan and -0.0 give +0. Its gradient is zero. */
tj_tensor *tj_sign(tj_tensor *self);
/** aten::sgn: self / |self| (0 at 0), ATen's complex-aware sign; for the
 * real dtypes (float32, float64, int64, bool) the same values as tj_sign:
 * -1, 0 or 1 in self's dtype, nan and -0.0 give +0, bool is the identity.
 * Returns a new tensor of self's shape and dtype; NULL with TJ_ERR_INVALID_ARGUMENT
 * for a NULL self. Its gradient is zero; abs's gradient is grad * sgn(self). */
tj_tensor *tj_sgn(tj_tensor *self);
/** aten::square: self * self; float stays float, int64 wraps, bool becomes
 * int64. Implicit, as in ATen 1.13: it is pow.Tensor_Scalar(self, 2), which
 * graphs record (and whose gradient, pow_backward's). */
tj_tensor *tj_square(tj_tensor *self);
/** aten::rsub.Tensor: other - alpha * self, broadcasting and promoting as
 * tj_sub_alpha(other, self, alpha) does. Errors as aten::sub: TJ_ERR_DTYPE
 * for a bool operand, a bool alpha with a non-bool result or a float alpha
 * with integer operands; TJ_ERR_SHAPE when the operands do not broadcast. */
tj_tensor *tj_rsub(tj_tensor *self, tj_tensor *other, tj_value alpha);
/** aten::rsub.Scalar: other - alpha * self with a Scalar other, computed in
 * result_type(self, other) (int64 self, 2.5 gives float32). Errors as
 * tj_rsub. */
tj_tensor *tj_rsub_scalar(tj_tensor *self, tj_value other, tj_value alpha);
/** aten::leaky_relu: self > 0 ? self : self * negative_slope (nan stays
 * nan); float32 / float64 self of any shape, same shape and dtype out.
 * Errors: TJ_ERR_DTYPE for int64 or bool self, TJ_ERR_INVALID_ARGUMENT for a
 * slope that overflows float32. */
tj_tensor *tj_leaky_relu(tj_tensor *self, tj_value negative_slope);
/** aten::softplus: log1p(exp(self * beta)) / beta, or self where self *
 * beta > threshold (PyTorch's defaults: beta 1, threshold 20). float32 /
 * float64 self, same shape and dtype out. Errors as tj_leaky_relu. */
tj_tensor *tj_softplus(tj_tensor *self, tj_value beta, tj_value threshold);
/** aten::elu: self > 0 ? self * scale : (exp(self * input_scale) - 1) *
 * alpha * scale (PyTorch's defaults: 1, 1, 1; nan stays nan), with
 * alpha * scale rounded in self's dtype as PyTorch 1.13's kernel does.
 * float32 / float64 self of any shape, same shape and dtype out. Errors:
 * TJ_ERR_DTYPE for int64 or bool self, TJ_ERR_INVALID_ARGUMENT for a Scalar
 * that overflows float32. */
tj_tensor *tj_elu(tj_tensor *self, tj_value alpha, tj_value scale, tj_value input_scale);
/** aten::celu (Barron 2017): max(0, x) + min(0, alpha (exp(x / alpha) -
 * 1)), computed as ATen 1.13 does, as tj_elu(self, alpha, 1, 1 / alpha)
 * (so a graph records celu, and its gradient elu_backward); alpha defaults
 * to 1.0 in PyTorch. Dtypes, shapes and errors as tj_elu, plus
 * TJ_ERR_INVALID_ARGUMENT for alpha 0 ("alpha cannot be 0 for CELU"). */
tj_tensor *tj_celu(tj_tensor *self, tj_value alpha);
/** aten::selu (Klambauer et al. 2017; implicit, as in ATen 1.13):
 * tj_elu(self, 1.6732632423543772, 1.0507009873554805, 1), so a graph
 * records elu. Dtypes, shapes and errors as tj_elu. */
tj_tensor *tj_selu(tj_tensor *self);
/** aten::prelu (He et al. 2015): self > 0 ? self : weight * self, with
 * one weight for all of self or one per channel (self's dim 1; a 1-D self
 * has one channel), as ATen 1.13's CPU kernel (nan and -0 take the
 * weighted branch). self: float32 / float64, any shape (0-dim only with
 * one weight); weight: self's dtype, 0-dim or 1-D, of 1 or self.size(1)
 * elements. Returns a new tensor of self's shape and dtype. Gradients:
 * tj_prelu_backward (what make_fx records), and its own, 1.13's
 * prelu_double_backward. Errors (naming aten::prelu): TJ_ERR_SHAPE for a
 * weight of another element count (PyTorch's "Mismatch of parameter
 * numbers and input channel size"), of rank > 1, or of several elements
 * with a 0-dim self; TJ_ERR_DTYPE for dtypes that differ or are not
 * float32 / float64. */
tj_tensor *tj_prelu(tj_tensor *self, tj_tensor *weight);
/** aten::prelu_backward: *grad_self = self > 0 ? grad_output : weight *
 * grad_output (self's shape) and *grad_weight = the sum of self *
 * grad_output over the elements self <= 0 that each weight multiplies
 * (weight's shape), new tensors of self's dtype (NULL pointers: not
 * wanted). self and weight as tj_prelu; grad_output of self's dtype,
 * broadcasting to self's shape. Returns TJ_OK or the error: those of
 * tj_prelu (naming aten::prelu_backward), TJ_ERR_DTYPE for a grad_output of
 * another dtype, TJ_ERR_SHAPE for one that does not broadcast to self's
 * shape (PyTorch takes a larger one). */
tj_status tj_prelu_backward(tj_tensor *grad_output, tj_tensor *self, tj_tensor *weight, tj_tensor **grad_self,
                            tj_tensor **grad_weight);
/** aten::mish (Misra 2019): self * tanh(log1p(exp(self))), as PyTorch 1.13's
 * CPU kernel (no softplus threshold; its decomposition, torch._refs', uses
 * softplus). float32 / float64 self of any shape, a new tensor of its shape
 * and dtype. Its gradient is PyTorch's formula in other operators (what
 * make_fx records): grad * (t + self * sigmoid(self) * (1 - t * t)), t =
 * tanh(softplus(self)). Errors: TJ_ERR_DTYPE for int64 or bool self. */
tj_tensor *tj_mish(tj_tensor *self);
/** aten::log_sigmoid (implicit, as in ATen 1.13: the output of
 * log_sigmoid_forward): log(1 / (1 + exp(-self))) computed stably as
 * min(self, 0) - log1p(exp(-|self|)). float32 / float64, a new tensor of
 * self's shape. Errors: TJ_ERR_DTYPE for int64 or bool self. */
tj_tensor *tj_log_sigmoid(tj_tensor *self);
/** aten::log_sigmoid_forward: *output = log_sigmoid(self) and *buffer =
 * exp(-|self|) (ATen's CPU buffer, which log_sigmoid_backward reads), new
 * tensors of self's shape and dtype (NULL pointers: not wanted). Errors as
 * tj_log_sigmoid. */
tj_status tj_log_sigmoid_forward(tj_tensor *self, tj_tensor **output, tj_tensor **buffer);
/** softsign, x / (1 + |x|) (torch.nn.functional.softsign; ATen has no
 * operator for it, so a graph records abs, add and div). Any float
 * self; errors those of tj_abs / tj_div (naming them). */
tj_tensor *tj_softsign(tj_tensor *self);
/** aten::glu (Dauphin et al. 2017): a * sigmoid(b), where a and b are the
 * first and second halves of self along dim (negative counts from the
 * end). float32 / float64 self of rank >= 1; a new tensor of self's shape
 * with that dim halved. Errors: TJ_ERR_SHAPE for a 0-dim self or an odd
 * size along dim ("Halving dimension must be even", naming dim and size);
 * TJ_ERR_INDEX for dim out of range; TJ_ERR_DTYPE for int64 or bool. */
tj_tensor *tj_glu(tj_tensor *self, int64_t dim);
/** aten::hardtanh: clamp(self, min_val, max_val) (PyTorch's defaults -1,
 * 1): nan stays nan, a nan bound makes every element nan and min_val >
 * max_val gives max_val everywhere, as clamp. float32 / float64 / int64 self
 * of any shape (int64: the bounds are truncated to integers first, as ATen,
 * and the result stays int64); a new tensor of self's shape and dtype.
 * Errors: TJ_ERR_DTYPE for bool self, TJ_ERR_INVALID_ARGUMENT for a bound
 * that overflows self's dtype. */
tj_tensor *tj_hardtanh(tj_tensor *self, tj_value min_val, tj_value max_val);
/** aten::relu6 (implicit: hardtanh(self, 0, 6), as ATen 1.13); arguments,
 * result and errors as tj_hardtanh (messages name aten::hardtanh). */
tj_tensor *tj_relu6(tj_tensor *self);
/** aten::hardsigmoid: min(max(self + 3, 0), 6) / 6 in self's dtype (nan
 * stays nan, -inf gives 0). float32 / float64 self of any shape, same shape
 * and dtype out. Errors: TJ_ERR_DTYPE for int64 or bool self. */
tj_tensor *tj_hardsigmoid(tj_tensor *self);
/** aten::hardswish: self * min(max(self + 3, 0), 6) / 6 (nan stays nan;
 * -inf gives nan, as -inf * 0 in PyTorch). Arguments, result and errors as
 * tj_hardsigmoid. */
tj_tensor *tj_hardswish(tj_tensor *self);

/* ---- Rounding, modulo, float classification and more transcendental
 * functions. Each returns a new contiguous
 * tensor of the (broadcast) input shape owned by the caller's scope, or NULL
 * on error (see tj_last_error(), which names the operator). ---- */
/** aten::floor / ceil / trunc / round (round: to nearest, halves to even, as
 * torch.round). float32 / float64 keep their dtype; int64 is returned
 * unchanged (the identity, as PyTorch). Errors: TJ_ERR_DTYPE for bool input.
 * Their gradient is zero. */
tj_tensor *tj_floor(tj_tensor *self);
tj_tensor *tj_ceil(tj_tensor *self);
tj_tensor *tj_round(tj_tensor *self);
tj_tensor *tj_trunc(tj_tensor *self);
/** aten::frac: self - trunc(self) (sign of self; nan for +-inf). float32 /
 * float64 only: TJ_ERR_DTYPE for int64 and bool, as PyTorch. */
tj_tensor *tj_frac(tj_tensor *self);
/** aten::remainder.Tensor: Python's modulo, self - floor(self / other) *
 * other with the sign of other (computed from fmod, exactly). Operands
 * broadcast; the dtype is result_type(self, other), int64 staying int64.
 * Errors: TJ_ERR_DTYPE when both are bool; TJ_ERR_SHAPE when they do not
 * broadcast; TJ_ERR_INVALID_ARGUMENT for an int64 zero divisor
 * ("ZeroDivisionError" in PyTorch). A float zero divisor gives nan. */
tj_tensor *tj_remainder(tj_tensor *self, tj_tensor *other);
/** aten::remainder.Scalar: tj_remainder with a Scalar other (a wrapped
 * number: int64 self % 2.5 is float32). Errors as tj_remainder. */
tj_tensor *tj_remainder_scalar(tj_tensor *self, tj_value other);
/** aten::fmod.Tensor: C's fmod, the sign of self (int64: C's `%`). Dtypes,
 * broadcasting and errors as tj_remainder. */
tj_tensor *tj_fmod(tj_tensor *self, tj_tensor *other);
/** aten::fmod.Scalar: tj_fmod with a Scalar other. Errors as tj_remainder. */
tj_tensor *tj_fmod_scalar(tj_tensor *self, tj_value other);
/** aten::floor_divide: tensor `//`, which ATen 1.13 computes as
 * div(self, other, rounding_mode="floor") (it floors: -7 // 2 is -4), as
 * tj_div_mode. Operands broadcast; the dtype is result_type(self, other),
 * int64 staying int64. No gradient (PyTorch's "derivative for
 * aten::floor_divide is not implemented"). Errors (naming
 * aten::floor_divide): TJ_ERR_DTYPE for bool operands, TJ_ERR_SHAPE when
 * they do not broadcast, TJ_ERR_INVALID_ARGUMENT for an integer zero divisor
 * ("ZeroDivisionError" in PyTorch); a float zero divisor gives +-inf or nan. */
tj_tensor *tj_floor_divide(tj_tensor *self, tj_tensor *other);
/** aten::floor_divide.Scalar: tj_floor_divide by a Scalar, which promotes
 * as a wrapped number (int64 // 2 stays int64, // 2.5 gives float32), as
 * tj_div_scalar_mode; make_fx records `y // 2` as floor_divide with a
 * Scalar other, which tj_graph_parse reads as this overload. Result:
 * self's shape. Errors as tj_floor_divide (naming aten::floor_divide.Scalar). */
tj_tensor *tj_floor_divide_scalar(tj_tensor *self, tj_value other);
/** aten::xlogy.Tensor: self * log(other), 0 where self == 0 (whatever
 * other, but nan), nan where other is nan (ATen's kernel; F.kl_div records
 * it). Operands broadcast; the dtype is result_type(self, other), an int64
 * or bool one becoming float32. Gradients as derivatives.yaml: self
 * xlogy(grad, other), 0 where self == 0 and other <= 0; other grad * self /
 * other. Errors: TJ_ERR_SHAPE when the operands do not broadcast. */
tj_tensor *tj_xlogy(tj_tensor *self, tj_tensor *other);
/** aten::xlogy.Scalar_Self / aten::xlogy.Scalar_Other: tj_xlogy with self
 * / other a Scalar (INT, FLOAT or BOOL), which promotes as a wrapped number
 * (int64 tensor and 2.5: float32). Result: the tensor's shape. Gradients
 * as derivatives.yaml: Scalar_Self other grad * self / other; Scalar_Other
 * self xlogy(grad, other), 0 where self == 0 if other <= 0. Errors as
 * tj_xlogy's (the dispatcher's for a value that is no Scalar). */
tj_tensor *tj_xlogy_scalar_self(tj_value self, tj_tensor *other);
tj_tensor *tj_xlogy_scalar_other(tj_tensor *self, tj_value other);
/** aten::special_xlogy and its .self_scalar / .other_scalar overloads
 * (torch.special.xlogy): tj_xlogy, tj_xlogy_scalar_self and
 * tj_xlogy_scalar_other under another name (CompositeImplicitAutograd:
 * make_fx records xlogy). Results, gradients and errors as those. */
tj_tensor *tj_special_xlogy(tj_tensor *self, tj_tensor *other);
tj_tensor *tj_special_xlogy_self_scalar(tj_value self, tj_tensor *other);
tj_tensor *tj_special_xlogy_other_scalar(tj_tensor *self, tj_value other);
/** aten::isnan / aten::isinf (+-inf): bool tensor of self's shape, any
 * dtype (int64 and bool give false). Non-differentiable. */
tj_tensor *tj_isnan(tj_tensor *self);
tj_tensor *tj_isinf(tj_tensor *self);
/** aten::isfinite (implicit, as ATen: (self == self) * (abs(self) != inf)):
 * bool tensor of self's shape; true for every int64 and bool element. */
tj_tensor *tj_isfinite(tj_tensor *self);
/** aten::nan_to_num: nan, +inf and -inf of a float self replaced by `nan`,
 * `posinf`, `neginf` (each tj_v_float or tj_v_none(); None gives 0, the
 * dtype's largest finite value and its lowest), converted to self's dtype
 * (1e300 becomes inf in float32, as PyTorch). int64 and bool self: a copy.
 * Never fails on a valid tensor. Gradient: grad where self is finite, 0
 * elsewhere. */
tj_tensor *tj_nan_to_num(tj_tensor *self, tj_value nan, tj_value posinf, tj_value neginf);
/** aten::clamp_min / aten::clamp_max: tj_clamp with one Scalar bound, the
 * dtype result_type(self, bound) (int64 self, 0.5 gives float32), except
 * that a nan bound gives nan everywhere (as PyTorch's clamp_min_out).
 * Errors: TJ_ERR_DTYPE for a bool result; TJ_ERR_INVALID_ARGUMENT for a
 * bound that overflows the result dtype. */
tj_tensor *tj_clamp_min(tj_tensor *self, tj_value min);
tj_tensor *tj_clamp_max(tj_tensor *self, tj_value max);
/** aten::clamp_min.Tensor / aten::clamp_max.Tensor: tj_clamp_tensor with the
 * one bound (a tensor broadcasting with self; nan in it propagates). Same
 * dtypes and errors, named after these operators. Gradients reach self
 * where it is kept and the bound where it is taken. */
tj_tensor *tj_clamp_min_tensor(tj_tensor *self, tj_tensor *min);
tj_tensor *tj_clamp_max_tensor(tj_tensor *self, tj_tensor *max);
/** aten::remainder.Scalar_Tensor: tj_remainder with a Scalar self, which
 * promotes as a wrapped number (5 % int64 is int64, 5.5 % int64 float32,
 * 5 % float64 float64). Result: other's shape. Errors as tj_remainder
 * (bool other with a bool self: TJ_ERR_DTYPE). Not differentiable with
 * respect to other, as PyTorch: the call succeeds under autograd and a
 * backward pass that reaches it fails with TJ_ERR_UNSUPPORTED. */
tj_tensor *tj_remainder_scalar_tensor(tj_value self, tj_tensor *other);
/** aten::round.decimals: round half to even at `decimals` decimal places:
 * round(x * 10^d) / 10^d, and for negative d round(x / 10^-d) * 10^-d, 10^|d|
 * rounded to self's dtype (ATen's round_decimals_kernel, so 0.125 -> 0.12
 * and 15 -> 20 at -1). float32 / float64 self, result of its shape and
 * dtype. Errors: TJ_ERR_DTYPE for int64 and bool (as PyTorch 1.13, even for
 * decimals = 0). Gradient zero. */
tj_tensor *tj_round_decimals(tj_tensor *self, int64_t decimals);
/** aten::atan2: the angle of (other, self) in [-pi, pi] (SLEEF, 1 ULP), with
 * C's atan2 signed zeros and infinities. Operands broadcast; int64 / bool
 * compute in float32. Errors: TJ_ERR_SHAPE when they do not broadcast. */
tj_tensor *tj_atan2(tj_tensor *self, tj_tensor *other);
/** aten::asin, acos, atan, sinh, cosh, log2, log10, exp2 (SLEEF, 1 ULP):
 * float32 / float64 keep their dtype, int64 and bool compute in float32;
 * asin / acos outside [-1, 1] and log2 / log10 of negatives give nan. Never
 * fail on a valid tensor. */
tj_tensor *tj_asin(tj_tensor *self);
tj_tensor *tj_acos(tj_tensor *self);
tj_tensor *tj_atan(tj_tensor *self);
tj_tensor *tj_sinh(tj_tensor *self);
tj_tensor *tj_cosh(tj_tensor *self);
tj_tensor *tj_log2(tj_tensor *self);
tj_tensor *tj_log10(tj_tensor *self);
tj_tensor *tj_exp2(tj_tensor *self);

/* ---- Reductions. `dim` lists may be NULL/empty (ndim 0) to reduce over every
 * dim; dims out of range give TJ_ERR_INDEX; repeated dims TJ_ERR_INVALID_ARGUMENT.
 * `dtype` arguments take a dtype or TJ_DTYPE_NONE; any other value (negative
 * or past the last dtype) gives TJ_ERR_INVALID_ARGUMENT ("aten::sum: argument 1
 * 'dtype' is not a dtype (-2)"). ---- */
/** aten::sum.dim_IntList. bool/int64 input sums to int64. Empty reduces to 0. */
tj_tensor *tj_sum_dim(tj_tensor *self, const int64_t *dim, int ndim, bool keepdim, int dtype);
tj_tensor *tj_sum(tj_tensor *self, int dtype); /**< aten::sum: 0-dim result */
/** aten::cumsum: the inclusive running sum of self along dim (negative
 * counts from the end; a 0-dim self takes 0 or -1), a new tensor of self's
 * shape. Result dtype: `dtype` (float32, float64 or int64; self is converted
 * to it first, float -> int64 truncating) or, for TJ_DTYPE_NONE, self's float
 * dtype, int64 for int64 and bool self. float32 sums in a float64
 * accumulator, each output rounded once (PyTorch's CPU kernel); int64 wraps.
 * Errors: TJ_ERR_INDEX for dim out of range, TJ_ERR_DTYPE for a bool result. */
tj_tensor *tj_cumsum(tj_tensor *self, int64_t dim, int dtype);
/** aten::mean.dim: float input only (TJ_ERR_DTYPE otherwise); empty gives nan. */
tj_tensor *tj_mean_dim(tj_tensor *self, const int64_t *dim, int ndim, bool keepdim, int dtype);
/** aten::amax / aten::amin: nan propagates; an empty reduction gives TJ_ERR_SHAPE. */
tj_tensor *tj_amax(tj_tensor *self, const int64_t *dim, int ndim, bool keepdim);
tj_tensor *tj_amin(tj_tensor *self, const int64_t *dim, int ndim, bool keepdim);
/** aten::argmax: int64 indices; first occurrence wins; nan counts as the
 * largest. has_dim false reduces over the flattened tensor. */
tj_tensor *tj_argmax(tj_tensor *self, bool has_dim, int64_t dim, bool keepdim);
/** aten::max.dim: values and int64 indices (first occurrence, nan largest). */
tj_status tj_max_dim(tj_tensor *self, int64_t dim, bool keepdim, tj_tensor **values, tj_tensor **indices);
/** aten::var.correction: correction < 0 means None (1); divides by
 * max(0, N - correction); empty gives nan. */
tj_tensor *tj_var(tj_tensor *self, const int64_t *dim, int ndim, int64_t correction, bool keepdim);
/** aten::var_mean.correction: (var, mean) as tj_var and tj_mean_dim. */
tj_status tj_var_mean(tj_tensor *self, const int64_t *dim, int ndim, int64_t correction, bool keepdim,
                      tj_tensor **var, tj_tensor **mean);
/** aten::logsumexp: stable; an all -inf slice gives -inf. */
tj_tensor *tj_logsumexp(tj_tensor *self, const int64_t *dim, int ndim, bool keepdim);
/** aten::mean (mean.default): the mean of every element of self as a new
 * 0-dim tensor of `dtype` (a float dtype, or TJ_DTYPE_NONE for self's dtype), summed in
 * float64 and rounded once. self: float32/float64 (integer input needs a
 * float `dtype`: TJ_ERR_DTYPE otherwise). An empty self gives nan. */
tj_tensor *tj_mean(tj_tensor *self, int dtype);
/** aten::max / aten::min (the .default overloads): the largest / smallest
 * element of self (any dtype, any shape) as a new 0-dim tensor of self's
 * dtype; nan propagates. Errors: TJ_ERR_SHAPE for an empty self (PyTorch:
 * "Expected reduction dim to be specified for input.numel() == 0"). */
tj_tensor *tj_max(tj_tensor *self);
tj_tensor *tj_min(tj_tensor *self);
/** aten::min.dim: the smallest values along `dim` (negative counts from the
 * end) and their int64 indices, first occurrence on ties, nan counting as
 * the smallest (its first index). New tensors of self's shape without dim
 * (kept as 1 with keepdim) in *values / *indices (either pointer may be
 * NULL when not wanted). Errors: TJ_ERR_INDEX for dim out of range,
 * TJ_ERR_SHAPE for an empty dim. */
tj_status tj_min_dim(tj_tensor *self, int64_t dim, bool keepdim, tj_tensor **values, tj_tensor **indices);
/** aten::argmin: int64 indices of the smallest values along dim (has_dim
 * false: of the flattened tensor, a 0-dim result); first occurrence on ties;
 * nan counts as the smallest. self: float32/float64/int64 (bool:
 * TJ_ERR_DTYPE). Errors: TJ_ERR_INDEX for dim out of range, TJ_ERR_SHAPE for
 * an empty reduction. */
tj_tensor *tj_argmin(tj_tensor *self, bool has_dim, int64_t dim, bool keepdim);
/** aten::std.correction: sqrt(var.correction), as tj_var (two passes in
 * float64, divisor max(0, N - correction), correction < 0 meaning None = 1)
 * with the square root taken in float64 and rounded once to self's dtype.
 * self: float32/float64 (TJ_ERR_DTYPE otherwise). Empty gives nan. */
tj_tensor *tj_std(tj_tensor *self, const int64_t *dim, int ndim, int64_t correction, bool keepdim);
/** aten::prod: the product of every element of self (any shape and
 * strides; float32, float64, int64 or bool) as a new 0-dim tensor. Result
 * dtype: `dtype` if given, else self's for float32/float64 and int64 for
 * int64 and bool. self is converted to `dtype` first when that is bool (the
 * product is then "all") or an integer dtype while self is float (each
 * element truncated). Float results are multiplied in float64 and rounded
 * once, also from float64 or int64 to a float32 `dtype` (PyTorch 1.13
 * converts self to `dtype` and multiplies float32 in float32, so a float32
 * product whose partial products leave float32's range gives inf or 0
 * there and a finite value here, and others may differ in the last bit);
 * int64 wraps around as in PyTorch. nan propagates, 0 * inf is nan; an
 * empty self gives 1. The gradient is ATen's prod_backward: grad * result /
 * self without zeros, the product of the other elements at a single zero,
 * 0 with several zeros; traced (make_fx), the formula exact for every input
 * (cumprod from both ends). Errors: TJ_ERR_INVALID_ARGUMENT for a dtype
 * that is not one. */
tj_tensor *tj_prod(tj_tensor *self, int dtype);
/** aten::prod.dim_int: the products along `dim` (negative counts from the
 * end; 0 or -1 for a 0-dim self), as a new tensor of self's shape without
 * dim (kept as size 1 with keepdim); dtypes, rounding, nan and empty
 * products as tj_prod (an empty dim gives ones). Gradient: grad * result /
 * self when self holds no zero at all, else (and traced) the formula exact
 * with zeros along dim, as ATen. Errors: TJ_ERR_INDEX for dim out of range;
 * TJ_ERR_INVALID_ARGUMENT for a dtype that is not one. */
tj_tensor *tj_prod_dim(tj_tensor *self, int64_t dim, bool keepdim, int dtype);
/** aten::cumprod: the inclusive running product of self along dim
 * (negative counts from the end; a 0-dim self takes 0 or -1), a new tensor
 * of self's shape; dtypes as tj_cumsum (float32 multiplied in a float64
 * accumulator, each output rounded once, as PyTorch's CPU kernel; int64
 * wraps). The gradient is ATen's cumprod_backward: reversed_cumsum(grad *
 * result) / self when self holds no zero, else the formula exact with
 * zeros (elements after a row's first zero get 0); traced (make_fx), the
 * formula exact for every input that PyTorch records, O(n^2) calls for n
 * along dim. The gradient itself does not require grad (no double
 * backward, as the rest of autograd). Errors:
 * TJ_ERR_INDEX for dim out of range, TJ_ERR_DTYPE for a bool result. */
tj_tensor *tj_cumprod(tj_tensor *self, int64_t dim, int dtype);
/** aten::all / aten::any: whether every element / some element of self
 * (any shape and strides; float32, float64, int64 or bool) is non-zero, as
 * a new 0-dim bool tensor; nan counts as non-zero, -0.0 as zero. An empty
 * self gives true for all, false for any. Not differentiable (the result
 * never requires grad). */
tj_tensor *tj_all(tj_tensor *self);
tj_tensor *tj_any(tj_tensor *self);
/** aten::all.dim / aten::any.dim: tj_all / tj_any along `dim` (negative
 * counts from the end; 0 or -1 for a 0-dim self), a new bool tensor of
 * self's shape without dim (kept as size 1 with keepdim); an empty dim
 * gives true / false. Errors: TJ_ERR_INDEX for dim out of range. */
tj_tensor *tj_all_dim(tj_tensor *self, int64_t dim, bool keepdim);
tj_tensor *tj_any_dim(tj_tensor *self, int64_t dim, bool keepdim);
/** aten::sort: self sorted along `dim` (negative counts from the end),
 * ascending or with `descending`, into new tensors of self's shape: the
 * values in *values (self's dtype) and their int64 positions along dim in
 * *indices (either pointer may be NULL when not wanted). PyTorch's order:
 * nan above +inf (last ascending, first descending), -0 equal to +0, and
 * equal values in input order in both directions (stable, as
 * aten::sort.stable with stable=True; PyTorch's default CPU sort may order
 * ties differently, since sort.default allows any order). A 0-dim self
 * gives itself and index 0. self: float32, float64, int64 or bool
 * (TJ_ERR_DTYPE otherwise). Errors: TJ_ERR_INDEX for dim out of range. */
tj_status tj_sort(tj_tensor *self, int64_t dim, bool descending, tj_tensor **values, tj_tensor **indices);
/** aten::topk: the k largest (smallest with !largest) values of self along
 * `dim` and their int64 positions, in sorted order (largest first, or
 * smallest first), as tj_sort's first k: nan counts as the largest, ties in
 * input order (PyTorch leaves their order unspecified). `sorted` is accepted
 * for the schema; the result is always sorted. New tensors of self's shape
 * with dim of size k. Errors: TJ_ERR_INDEX for dim out of range or k
 * outside [0, size of dim] ("selected index k out of range"); TJ_ERR_DTYPE as
 * tj_sort, and for a bool self of rank >= 1 (ATen's topk kernel has no bool;
 * a 0-dim one gives itself and index 0). */
tj_status tj_topk(tj_tensor *self, int64_t k, int64_t dim, bool largest, bool sorted, tj_tensor **values,
                  tj_tensor **indices);
/** aten::linalg_vector_norm: the ord-norm of self over `dim` (NULL: None,
 * every dim; [] likewise), as torch.linalg.vector_norm: ord 2 sqrt(sum x^2),
 * 1 sum |x|, inf max |x|, -inf min |x|, 0 the count of non-zeros (nan
 * counts), any other p (sum |x|^p)^(1/p) (negative p allowed: a zero gives
 * 0). nan propagates. self float32 / float64, any shape (0-dim: dim [] / [0] /
 * [-1]); `dtype` (TJ_DTYPE_NONE: self's) a float dtype at least as wide as
 * self's, self converted to it first. Computed in float64 and rounded once.
 * Returns a new tensor of `dtype` shaped as self without the reduced dims
 * (size 1 with keepdim); an empty reduction gives 0. Errors: TJ_ERR_DTYPE for
 * an integer / bool self or dtype, or float64 self with float32 dtype;
 * TJ_ERR_SHAPE for ord < 0 or inf on an empty reduction (no identity);
 * TJ_ERR_INDEX / TJ_ERR_INVALID_ARGUMENT for dims out of range / repeated. */
tj_tensor *tj_linalg_vector_norm(tj_tensor *self, tj_value ord, const int64_t *dim, int ndim, bool keepdim, int dtype);
/** aten::norm.ScalarOpt_dim, which torch 1.13's make_fx records for
 * F.normalize and x.norm(dim=1): tj_linalg_vector_norm of self over `dim`
 * (ndim dims, at least one) with ord p (tj_v_none(): 2) and self's dtype;
 * its gradient is that operator's (derivatives.yaml's norm_backward). The
 * core decomposition table records linalg_vector_norm. Shapes, dtypes and
 * errors as tj_linalg_vector_norm, named aten::norm.ScalarOpt_dim. */
tj_tensor *tj_norm_dim(tj_tensor *self, tj_value p, const int64_t *dim, int ndim, bool keepdim);

/* ---- Views (share storage with self) and data movement. ---- */
/** aten::view: one size may be -1 (inferred); the view must be expressible
 * with self's strides (TJ_ERR_SHAPE otherwise; use tj_reshape). */
tj_tensor *tj_view(tj_tensor *self, const int64_t *size, int ndim);
tj_tensor *tj_unsafe_view(tj_tensor *self, const int64_t *size, int ndim); /**< aten::_unsafe_view */
tj_tensor *tj_permute(tj_tensor *self, const int64_t *dims, int ndim);      /**< aten::permute */
tj_tensor *tj_transpose(tj_tensor *self, int64_t dim0, int64_t dim1);       /**< aten::transpose.int */
tj_tensor *tj_t(tj_tensor *self);                                            /**< aten::t: rank <= 2 */
/** aten::expand: size -1 keeps a dim; new leading dims allowed; only size-1
 * dims expand (stride 0). */
tj_tensor *tj_expand(tj_tensor *self, const int64_t *size, int ndim);
tj_tensor *tj_unsqueeze(tj_tensor *self, int64_t dim);                       /**< aten::unsqueeze */
tj_tensor *tj_squeeze_dim(tj_tensor *self, int64_t dim);                     /**< aten::squeeze.dim: no-op if size != 1 */
/** aten::squeeze: a view of self (any dtype) without its size-1 dims (a
 * tensor of one element becomes 0-dim; an empty dim stays). Its gradient
 * unsqueezes at each of those dims in turn, as PyTorch 1.13's
 * unsqueeze_to. No errors beyond a NULL self. */
tj_tensor *tj_squeeze(tj_tensor *self);
tj_tensor *tj_select(tj_tensor *self, int64_t dim, int64_t index);           /**< aten::select.int; negative index counts from the end */
/** aten::diagonal (a view sharing self's storage: writing through it writes
 * self): dims dim1 and dim2 of self (any dtype, rank >= 2; negative dims
 * count from the end) replaced by their diagonal, appended as the last dim;
 * offset > 0 takes the diagonal above the main one, < 0 below; an offset
 * beyond either size gives an empty diagonal. Shape: self's other dims, then
 * max(0, min(n1, n2 - offset)) (offset >= 0) or max(0, min(n1 + offset,
 * n2)); stride: the sum of the two dims' strides. Errors (naming
 * aten::diagonal): TJ_ERR_INDEX for rank < 2 or a dim out of range,
 * TJ_ERR_INVALID_ARGUMENT for dim1 == dim2 or for strides whose sum
 * overflows (size-1 dims of as_strided). Its gradient is
 * tj_diagonal_backward. */
tj_tensor *tj_diagonal(tj_tensor *self, int64_t offset, int64_t dim1, int64_t dim2);
/** aten::as_strided (a view sharing self's storage): self's storage (any
 * dtype) read with shape `size` and strides `stride` (ndim entries each, in
 * elements) from `storage_offset` (self's own when has_offset is false).
 * Every element must lie inside the storage. The gradient is PyTorch 1.13's
 * as_strided_backward (overlapping geometries, as expanded ones, sum into
 * shared elements; an overlapping input divides by its multiplicity).
 * Errors (naming aten::as_strided and the size, stride and offset):
 * TJ_ERR_SHAPE for lists of different lengths, a negative size or an
 * element outside the storage; TJ_ERR_INVALID_ARGUMENT for a negative
 * stride or offset. A plan replays the geometry traced: an input whose
 * storage offset differs at run time from the traced one shifts it; a run
 * whose input storage the shifted geometry reaches past fails with
 * TJ_ERR_SHAPE naming aten::as_strided, as eagerly. */
tj_tensor *tj_as_strided(tj_tensor *self, const int64_t *size, const int64_t *stride, int ndim, bool has_offset,
                         int64_t storage_offset);
/** aten::diagonal_backward: a new tensor of input_sizes (ndim dims) and
 * grad_output's dtype, zero but for its diagonal (tj_diagonal's offset,
 * dim1, dim2), which holds grad_output. Errors (naming
 * aten::diagonal_backward): those of tj_diagonal on input_sizes, TJ_ERR_SHAPE
 * for a negative size or a grad_output of another shape than the diagonal. */
tj_tensor *tj_diagonal_backward(tj_tensor *grad_output, const int64_t *input_sizes, int ndim, int64_t offset,
                                int64_t dim1, int64_t dim2);
/** aten::select_backward (select's gradient, as derivatives.yaml and
 * PyTorch 1.13's make_fx record it): a new contiguous tensor of
 * input_sizes (ndim dims) and grad_output's dtype, zero but for
 * tj_select(result, dim, index), which holds grad_output. Decomposes to
 * zeros + select_scatter (torch._decomp). Errors (naming
 * aten::select_backward): those of tj_select on input_sizes, TJ_ERR_SHAPE
 * for a negative size or a grad_output of another shape than the
 * selected view. */
tj_tensor *tj_select_backward(tj_tensor *grad_output, const int64_t *input_sizes, int ndim, int64_t dim,
                              int64_t index);
/** aten::slice_backward (slice.Tensor's gradient): a new contiguous tensor
 * of input_sizes (ndim dims) and grad_output's dtype, zero but for
 * tj_slice(result, dim, start, end, step) (start and end clamp as there;
 * INT64_MAX is "to the end"), which holds grad_output. Decomposes to
 * zeros + slice_scatter (torch._decomp). Errors (naming
 * aten::slice_backward): those of tj_slice on input_sizes, TJ_ERR_SHAPE for
 * a negative size or a grad_output of another shape than the slice. */
tj_tensor *tj_slice_backward(tj_tensor *grad_output, const int64_t *input_sizes, int ndim, int64_t dim,
                             int64_t start, int64_t end, int64_t step);
/** aten::slice.Tensor: start/end clamp to the size (INT64_MAX for "to the
 * end"); has_start/has_end false means None; step >= 1. */
tj_tensor *tj_slice(tj_tensor *self, int64_t dim, bool has_start, int64_t start, bool has_end, int64_t end,
                    int64_t step);
/** aten::cat: same rank and dtype-promotable tensors equal except along dim;
 * 1-d empty tensors are skipped (legacy rule). */
tj_tensor *tj_cat(tj_tensor *const *tensors, int n, int64_t dim);
/** aten::flip: a new contiguous tensor of self's shape and dtype (any) with
 * the order of elements reversed along each of the `ndims` dims listed
 * (negative dims count from the end; none: a copy; a 0-dim self takes 0 or
 * -1). Errors: TJ_ERR_INDEX for a dim out of range, TJ_ERR_INVALID_ARGUMENT
 * for a dim listed twice. */
tj_tensor *tj_flip(tj_tensor *self, const int64_t *dims, int ndims);
/** aten::constant_pad_nd: self (any dtype, any shape) padded with `value`.
 * pad holds npad / 2 (before, after) pairs, the first pair for the last dim,
 * the next for the dim before it, and so on; a negative entry crops that many
 * elements instead (PyTorch's F.pad with mode "constant"). value is converted
 * to self's dtype (a float into int64 truncates). Returns a new contiguous
 * tensor of self's dtype, each padded dim of size size + before + after, never
 * a view (also when nothing is padded). Errors: TJ_ERR_INVALID_ARGUMENT for an
 * odd npad, npad > 2 * ndim, or a value that overflows the dtype; TJ_ERR_SHAPE
 * when a crop exceeds its dim or, with some positive padding, a padded dim
 * would get size <= 0 (PyTorch's "resulted in a negative output size");
 * TJ_ERR_OVERFLOW when size + before + after overflows int64. */
tj_tensor *tj_constant_pad_nd(tj_tensor *self, const int64_t *pad, int npad, tj_value value);
/** aten::reflection_pad1d / reflection_pad2d / replication_pad1d /
 * replication_pad2d (torch.nn.functional.pad with mode "reflect" or
 * "replicate" on a 2-D / 3-D or 3-D / 4-D input): self, float32 or float64,
 * any strides, of rank 2 or 3 (the 1d forms: [C, W] or [N, C, W]) or 3 or 4
 * (the 2d forms: [C, H, W] or [N, C, H, W]), padded along its last one or
 * two dims. padding holds npad = 2 (1d: left, right) or 4 (2d: left, right,
 * top, bottom) entries; a negative one crops. Output position j of a padded
 * dim of size n reads position k = j - before of the input mapped into
 * [0, n): reflection mirrors it about the edge without repeating the edge
 * element (n - 1 - |n - 1 - |k||), replication clamps it to [0, n - 1].
 * Returns a new contiguous tensor of self's dtype, each padded dim of size
 * size + before + after. Errors (naming the aten operator): TJ_ERR_DTYPE for
 * an integer or bool self (as PyTorch 1.13's CPU kernels);
 * TJ_ERR_INVALID_ARGUMENT for npad other than 2 / 4 (PyTorch does not
 * check reflection's); TJ_ERR_SHAPE for another rank or a zero-sized dim
 * other than the batch dim (reflection: other than the first dim), for a
 * reflection pad not smaller than its dim, or for a padded size below 1
 * (1d) or 0 (2d), as PyTorch. */
tj_tensor *tj_reflection_pad1d(tj_tensor *self, const int64_t *padding, int npad);
tj_tensor *tj_reflection_pad2d(tj_tensor *self, const int64_t *padding, int npad); /**< see tj_reflection_pad1d */
tj_tensor *tj_replication_pad1d(tj_tensor *self, const int64_t *padding, int npad); /**< see tj_reflection_pad1d */
tj_tensor *tj_replication_pad2d(tj_tensor *self, const int64_t *padding, int npad); /**< see tj_reflection_pad1d */
/** aten::tril: the lower triangle of each matrix of self ([..., M, N], rank
 * >= 2, any strides, any dtype), the other elements zero (+0.0, 0, false):
 * element (..., i, j) is kept when j - i <= diagonal. diagonal 0 is the main
 * diagonal, > 0 above it, < 0 below it; any int64 (beyond the matrix: all
 * or nothing kept). Returns a new contiguous tensor of self's shape and
 * dtype (the caller releases it, or the innermost open scope does). Errors:
 * TJ_ERR_INDEX for a self of rank 0 or 1 (PyTorch 1.13 fails the same
 * call with IndexError "Dimension out of range"). Decomposes (core table)
 * into arange, sub, le and where, as torch._refs.tril; its gradient is
 * tril of the gradient. tj_tril_ (inplace.h) writes into self. */
tj_tensor *tj_tril(tj_tensor *self, int64_t diagonal);
/** aten::triu: the upper triangle, element (..., i, j) kept when
 * j - i >= diagonal; otherwise as tj_tril (same shapes, dtypes, result,
 * errors). */
tj_tensor *tj_triu(tj_tensor *self, int64_t diagonal);
/** aten::repeat: self (any dtype and strides, 0-dim too) tiled repeats[d]
 * times along each dim d. repeats holds nrepeats >= self's rank entries;
 * when longer, self gets leading size-1 dims first (a [3] self with
 * repeats {2, 2} gives [2, 6]). Returns a new contiguous tensor of self's
 * dtype and shape padded[d] * repeats[d] (never a view, also for repeats
 * of 1 or none), owned by the caller or the innermost open scope. A repeat
 * of 0 gives an empty result. Errors: TJ_ERR_INVALID_ARGUMENT for fewer
 * repeats than self's dims or more than TJ_MAX_DIMS, TJ_ERR_SHAPE for a
 * negative result size (a negative repeat of a non-empty dim; of a size-0
 * dim it gives 0, as PyTorch), TJ_ERR_OVERFLOW for a size or element
 * count past int64. Decomposes (core table) into view, expand and clone;
 * its gradient sums the gradient over the tiles (PyTorch's
 * repeat_backward). */
tj_tensor *tj_repeat(tj_tensor *self, const int64_t *repeats, int nrepeats);
/** aten::roll (torch.roll): self (any dtype and strides) shifted
 * circularly, element i of dim dims[k] moving to (i + shifts[k]) mod size
 * (negative shifts roll backwards, any int64 value; a dim listed twice
 * rolls by the sum). With ndims 0, self is rolled as if flattened by
 * shifts[0] and viewed back. Returns a new contiguous tensor of self's
 * shape and dtype, owned by the caller or the innermost open scope.
 * Errors, as ATen 1.13: TJ_ERR_INVALID_ARGUMENT for no shift, or for
 * nshifts != ndims (nshifts != 1 without dims) and for more than
 * TJ_MAX_DIMS shifts (a tjit limit); TJ_ERR_INDEX for a dim out
 * of range or any dim of a 0-dim self; an empty self gives an empty copy
 * without its dims being checked. Decomposes (core table) into slices and
 * cat per dim, as torch._refs.roll; its gradient is the gradient rolled
 * back (shifts negated, both lists reversed, as PyTorch's derivative). */
tj_tensor *tj_roll(tj_tensor *self, const int64_t *shifts, int nshifts, const int64_t *dims, int ndims);
/** aten::diag: for a vector self ([n], any dtype and strides), a new square
 * matrix [n + |diagonal|, n + |diagonal|] of zeros (+0.0, 0, false) with self
 * on its diagonal at `diagonal` (tj_diagonal's offset: > 0 above the main
 * one, < 0 below); for a matrix self ([m, n]), a new vector holding a copy of
 * that diagonal (empty for an offset past the sizes, where PyTorch 1.13
 * fails computing a negative size). Returned in self's dtype, contiguous,
 * owned by the caller or the innermost open scope. Errors (naming
 * aten::diag): TJ_ERR_SHAPE for a self of rank 0 or above 2 ("matrix or a
 * vector expected") or a side past INT64_MAX, TJ_ERR_OUT_OF_MEMORY.
 * Decomposes (core table) into zeros + diagonal_scatter (a vector) or
 * diagonal + clone (a matrix); its gradient is diag of the gradient (a
 * vector or square self) or diagonal_backward (another matrix, or an
 * offset past a square self's sizes), as PyTorch's diag_backward. */
tj_tensor *tj_diag(tj_tensor *self, int64_t diagonal);
/** aten::diag_embed: self ([..., n], rank >= 1, any dtype and strides) placed on the diagonal (tj_diagonal's offset, dim1, dim2)
 * of a new tensor of zeros with one more dim: self's dims but the last, with
 * dims dim1 and dim2 (negative: counted from the end of the result) of size
 * n + |offset|. Returned contiguous in self's dtype, owned by the caller or
 * the innermost open scope. Errors (naming aten::diag_embed): TJ_ERR_INDEX
 * for a dim out of range, TJ_ERR_INVALID_ARGUMENT for dim1 == dim2 or a
 * result of more than TJ_MAX_DIMS dims, TJ_ERR_SHAPE for a size past
 * INT64_MAX. Decomposes (core table) into zeros + diagonal_scatter; its
 * gradient is the diagonal of the gradient. */
tj_tensor *tj_diag_embed(tj_tensor *self, int64_t offset, int64_t dim1, int64_t dim2);
/** aten::trace: the sum of the main diagonal of the matrix self ([m, n],
 * float32, float64 or int64, any strides) as a new 0-dim tensor of self's
 * dtype, summed in double for floats (ATen's acc_type; int64 wraps on
 * overflow, as ATen). Errors (naming aten::trace): TJ_ERR_SHAPE for a self
 * that is not a matrix, TJ_ERR_DTYPE for bool. Decomposes (core table) into
 * sum(diagonal(self)), as torch._decomp; its gradient records PyTorch's
 * trace_backward (zeros, arange, index_fill, view), whose arange stops at
 * the diagonal's end for a tall matrix (PyTorch 1.13's also fills ones
 * below it). */
tj_tensor *tj_trace(tj_tensor *self);
tj_tensor *tj_clone(tj_tensor *self);                                        /**< aten::clone */
/** aten::_to_copy: a copy converted to dtype (TJ_DTYPE_NONE: same dtype; another
 * value that is not a dtype: TJ_ERR_INVALID_ARGUMENT). Any dtype to any
 * dtype, the storage dtypes too, converted as tj_dtype (tjit/core.h) says:
 * float -> int truncates toward zero; anything -> bool is x != 0. */
tj_tensor *tj_to_copy(tj_tensor *self, int dtype);
tj_tensor *tj_reshape(tj_tensor *self, const int64_t *shape, int ndim);      /**< aten::reshape (implicit): view if possible, else copy */
tj_tensor *tj_flatten(tj_tensor *self, int64_t start_dim, int64_t end_dim);  /**< aten::flatten.using_ints (implicit) */
tj_tensor *tj_contiguous(tj_tensor *self);                                   /**< aten::contiguous (implicit) */
/** aten::stack: the n tensors (n >= 1, one shape, any dtypes) side by side
 * along a new dim `dim` (wrapped over rank + 1), in the dtype cat promotes
 * them to: a new contiguous tensor. Recorded by make_fx as aten.stack (its
 * decomposition: unsqueeze + cat). Errors: TJ_ERR_INVALID_ARGUMENT for an
 * empty list, TJ_ERR_SHAPE naming the first entry whose shape differs,
 * TJ_ERR_INDEX for dim out of range. */
tj_tensor *tj_stack(tj_tensor *const *tensors, int n, int64_t dim);
/** aten::narrow (implicit, as in ATen): the view of self's elements
 * [start, start + length) along dim, recorded by make_fx as slice.Tensor
 * (as torch 1.13 records it). self has rank >= 1, any dtype and strides; a
 * negative start counts from the end (start wraps as a dim index into
 * size(dim), and start == size(dim) is allowed: an empty piece). The result
 * shares self's storage, has self's rank and dtype and size `length` along
 * dim; it belongs to the current scope like any operator result. Its
 * gradient is slice_backward's. Errors (naming aten::narrow): TJ_ERR_INDEX
 * for a 0-dim self, dim out of range, or start outside [-size, size)
 * (naming the range and start: [-1, 0] for an empty dim, as ATen);
 * TJ_ERR_INVALID_ARGUMENT for length < 0 or start + length past the size
 * (naming start, length and the size); TJ_ERR_INVALID_ARGUMENT for a NULL
 * self. */
tj_tensor *tj_narrow(tj_tensor *self, int64_t dim, int64_t start, int64_t length);
/** aten::split.Tensor (implicit): chunks of split_size along dim (the last may
 * be smaller). Writes up to max_outs views into outs and their count into
 * n_outs; TJ_ERR_INVALID_ARGUMENT when max_outs is too small. make_fx records
 * the chunks as slice.Tensor calls (torch records aten.split.Tensor and a
 * getitem per chunk: graph nodes have a fixed number of outputs here). */
tj_status tj_split(tj_tensor *self, int64_t split_size, int64_t dim, tj_tensor **outs, int max_outs, int *n_outs);
/* The other list-returning view functions. tjit's graphs hold a fixed number
 * of outputs per node, so these operators are implicit composites, as
 * split.Tensor: each returns its pieces as slice.Tensor / select.int views
 * of self, and make_fx records those (PyTorch 1.13 records chunk as
 * split.Tensor, and one aten.split_with_sizes / unbind.int node with a
 * getitem per piece). Through the dispatcher
 * (tj_call) they return a Tensor[] of at most 256 pieces, valid until the
 * thread's next list-returning call. The caller provides `outs` (room for
 * max_outs pointers) and keeps owning that array; each view written into it
 * belongs to the current scope like any operator result (release it with
 * tj_tensor_release outside a scope). On failure nothing is written to outs
 * that stays alive and *n_outs is 0. Shared errors: TJ_ERR_INVALID_ARGUMENT
 * for NULL outs / n_outs / self or more pieces than max_outs, TJ_ERR_INDEX
 * for a 0-dim self or dim out of range. */
/** aten::split_with_sizes: pieces of split_sizes[i] (n entries, >= 0, summing
 * to self's size along dim; TJ_ERR_INVALID_ARGUMENT otherwise) along dim. */
tj_status tj_split_with_sizes(tj_tensor *self, const int64_t *split_sizes, int n, int64_t dim, tj_tensor **outs,
                              int max_outs, int *n_outs);
/** aten::chunk (implicit in ATen: split.Tensor with split_size
 * ceil(size / chunks)): at most `chunks` pieces (fewer when the size does not
 * fill them: torch.chunk(arange(5), 4) gives 3), or `chunks` empty ones for an
 * empty dim. chunks <= 0 gives TJ_ERR_INVALID_ARGUMENT. */
tj_status tj_chunk(tj_tensor *self, int64_t chunks, int64_t dim, tj_tensor **outs, int max_outs, int *n_outs);
/** aten::unbind.int: the size(dim) slices select(self, dim, i), each of rank
 * ndim - 1 (none for an empty dim). */
tj_status tj_unbind(tj_tensor *self, int64_t dim, tj_tensor **outs, int max_outs, int *n_outs);

/* ---- Indexing. ---- */
/** aten::gather: out[p] = self[p with p[dim] replaced by index[p]]; index is
 * int64 of self's rank, no larger than self in any dim but `dim`; the result
 * has index's shape and self's dtype. An index outside [0, size of dim)
 * gives TJ_ERR_INDEX; rank or size mismatches TJ_ERR_SHAPE. */
tj_tensor *tj_gather(tj_tensor *self, int64_t dim, tj_tensor *index);
/** aten::scatter_add: a copy of self with src[p] added at p with p[dim]
 * replaced by index[p], for every position p of index (in row-major order);
 * src has self's dtype and rank and is no smaller than index. Errors as
 * tj_gather. */
tj_tensor *tj_scatter_add(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src);
/** aten::scatter.src: a new tensor, a copy of self (any dtype) with src[p]
 * written at p with p[dim] replaced by index[p], for every position p of
 * index (int64, self's rank, no larger than src in any dim nor than self
 * apart from dim; an empty index gives a copy). Where several positions
 * write one element the last in row-major order wins (the one with the
 * largest coordinate along dim), as PyTorch's CPU kernel (its documentation
 * calls the choice undefined); the gradient of src reaches every position,
 * the overwritten ones included, as PyTorch's (grad.gather). src has self's
 * dtype and rank. Errors (naming aten::scatter.src): TJ_ERR_INDEX for a
 * dim or an index value out of range (naming the value, dim and size);
 * TJ_ERR_SHAPE for rank or size mismatches (naming the shapes);
 * TJ_ERR_DTYPE for an index that is not int64 or a src of another dtype. */
tj_tensor *tj_scatter(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src);
/** aten::scatter.value: tj_scatter with every written element `value`,
 * converted to self's dtype (a float into int64 truncates; one that
 * overflows the dtype gives TJ_ERR_INVALID_ARGUMENT). index is no larger
 * than self apart from dim. Errors otherwise as tj_scatter. */
tj_tensor *tj_scatter_value(tj_tensor *self, int64_t dim, tj_tensor *index, tj_value value);
/** aten::scatter_reduce.two: a new tensor, a copy of self (any dtype) with every src[p] reduced into the element at p with p[dim]
 * replaced by index[p], for every position p of index (rules and errors of
 * tj_scatter's arguments), the values arriving in the order of p[dim].
 * reduce is "sum", "prod", "mean", "amax" or "amin"; include_self false
 * leaves self's value out of every element some position writes (the
 * others keep it). "mean" divides by the number of values reduced (self's
 * counted with include_self), rounding down for int64; "amax" / "amin"
 * propagate nan; int64 sums and products wrap; bool sums are or, products
 * and, amax / amin or / and. Gradients as PyTorch 1.13's
 * scatter_reduce_backward: "amax" / "amin" split the gradient evenly
 * between the values equal to the result, "prod" handles zeros as
 * PyTorch (one zero in a product gets the product of the others).
 * Errors (naming aten::scatter_reduce.two): those of tj_scatter, plus
 * TJ_ERR_INVALID_ARGUMENT for another reduce and TJ_ERR_DTYPE for "mean"
 * of bool (as PyTorch). */
tj_tensor *tj_scatter_reduce(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src, const char *reduce,
                             bool include_self);
/** aten::scatter.reduce: a new tensor, a copy of self (any dtype) with every src[p] added (reduce "add") or multiplied (reduce
 * "multiply") into the element at p with p[dim] replaced by index[p], for
 * every position p of index (int64, self's rank, no larger than src in any
 * dim nor than self apart from dim; an empty index gives a copy; a 0-dim
 * tensor counts as one element of rank 1). Self's value is included in
 * every reduction, and the values arrive in the order of p[dim] (float
 * sums round in that order), as PyTorch 1.13's CPU kernel; int64 sums and
 * products wrap; bool sums are or, products and. It is tj_scatter_reduce with reduce "sum" / "prod" and
 * include_self true (its decomposition). src has self's dtype and rank.
 * There is no gradient, as in PyTorch 1.13: a backward pass reaching the
 * call fails with TJ_ERR_UNSUPPORTED naming aten::scatter.reduce.
 * Errors (naming aten::scatter.reduce): TJ_ERR_INVALID_ARGUMENT for
 * another reduce (naming it); TJ_ERR_INDEX for a dim or an index value out
 * of range (naming the value, dim and size); TJ_ERR_SHAPE for rank or size
 * mismatches (naming the shapes); TJ_ERR_DTYPE for an index that is not
 * int64 or a src of another dtype. */
tj_tensor *tj_scatter_src_reduce(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *src, const char *reduce);
/** aten::scatter.value_reduce: tj_scatter_src_reduce with every src value
 * `value`, converted to self's dtype first (a float into int64 truncates;
 * one that overflows the dtype gives TJ_ERR_INVALID_ARGUMENT); index is no
 * larger than self apart from dim. Its decomposition is tj_scatter_reduce
 * of a full tensor of index's shape. Errors (naming
 * aten::scatter.value_reduce) otherwise as tj_scatter_src_reduce. */
tj_tensor *tj_scatter_value_reduce(tj_tensor *self, int64_t dim, tj_tensor *index, tj_value value, const char *reduce);
/** aten::index_copy: a new tensor, a copy of self (any dtype) with the
 * slices source.select(dim, i) written at self.select(dim, index[i]);
 * index: int64, 1-D or 0-dim, values in [0, size) (no wrapping, as
 * PyTorch); source: self's dtype and rank (0-dim counting as one dim) and
 * exactly self's shape with dim resized to the number of indices. Of
 * duplicate indices the last wins (PyTorch's CPU loop; it calls the choice
 * undefined). Gradients: self's with the written slices zeroed, source's
 * the gradient's slices at index. Errors (naming aten::index_copy):
 * TJ_ERR_INDEX for a dim or an index value out of range; TJ_ERR_SHAPE for
 * an index of rank > 1 or a source of another shape; TJ_ERR_DTYPE for a
 * non-int64 index or a source of another dtype. */
tj_tensor *tj_index_copy(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *source);
/** aten::index_fill.int_Scalar: a new tensor, a copy of self (any dtype)
 * with every element of the slices self.select(dim, index[i]) set to
 * value (converted to self's dtype, a float into int64 truncating); index:
 * int64, 1-D or 0-dim, values in [-size, size) (negative ones count from
 * the end, as PyTorch). Errors (naming aten::index_fill.int_Scalar):
 * TJ_ERR_INDEX for a dim or an index value out of range; TJ_ERR_SHAPE for
 * an index of rank > 1; TJ_ERR_DTYPE for a non-int64 index;
 * TJ_ERR_INVALID_ARGUMENT for a value that overflows self's dtype. */
tj_tensor *tj_index_fill(tj_tensor *self, int64_t dim, tj_tensor *index, tj_value value);
/** aten::index_fill.int_Tensor: tj_index_fill with the value held by a
 * 0-dim tensor of any dtype (converted to self's as the Scalar is).
 * Gradients:
 * self's as tj_index_fill's; value's the sum of the gradient over the
 * filled elements (PyTorch sums index_select(grad, dim, unique(index)):
 * the same terms, in another order). Errors (naming
 * aten::index_fill.int_Tensor): those of tj_index_fill, and TJ_ERR_SHAPE
 * for a value of rank > 0 ("index_fill_ only supports a 0-dimensional
 * value tensor"); the overflow of the value is found when the kernel runs. */
tj_tensor *tj_index_fill_tensor(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *value);
/** aten::index_select: the slices self.select(dim, index[i]) stacked along
 * dim, i.e. self's shape with dim resized to index's numel (a 0-dim self
 * gives a 0-dim result); any self dtype, a new contiguous tensor. index:
 * int64, 1-D or 0-dim, values in [0, size of dim). Errors: TJ_ERR_INDEX for
 * dim out of range or an index value out of bounds (the message names the
 * value and the dim's size), TJ_ERR_DTYPE for a non-int64 index,
 * TJ_ERR_SHAPE for an index of rank > 1 (or an empty index on a 0-dim
 * self). */
tj_tensor *tj_index_select(tj_tensor *self, int64_t dim, tj_tensor *index);
/** aten::index_add: a copy of self with alpha * source.select(dim, i) added
 * to self.select(dim, index[i]) for i in order (repeated indices
 * accumulate, deterministically). source has self's dtype (float32, float64,
 * int64 wrapping, bool or-ing) and rank (a 0-dim tensor counting as one
 * dim; PyTorch also broadcasts lower-rank sources), source.size(dim) ==
 * index's numel, its other sizes self's or 1; index as tj_index_select's. alpha is
 * converted to self's dtype (int64 truncates, as PyTorch); alpha * source is
 * rounded before the sum (PyTorch's vectorised loop fuses it: alpha != 1 may
 * differ in the last bit). Errors: as tj_index_select, plus TJ_ERR_DTYPE for
 * a source dtype other than self's, TJ_ERR_SHAPE for a source that does
 * not fit, TJ_ERR_INVALID_ARGUMENT for an alpha that overflows the dtype. */
tj_tensor *tj_index_add(tj_tensor *self, int64_t dim, tj_tensor *index, tj_tensor *source, tj_value alpha);
/** aten::index.Tensor, PyTorch's x[indices] with index tensors: indices[k]
 * indexes self's dim k, a NULL entry is a full slice (x[:, i] is {NULL, i}),
 * dims past the list are full slices. An entry is an int64 tensor of any
 * shape, values in [-size, size) of its dim (negative ones count from the
 * end), or a bool mask of m >= 1 dims, which covers the next m dims of self
 * (its shape must equal theirs) and stands for its true positions in
 * row-major order: m int64 index tensors of [count], the columns of
 * tj_nonzero(mask) (x[mask], x[:, mask], as ATen). The index tensors
 * broadcast together to a shape B. Result (any self dtype, a new contiguous
 * tensor the caller releases): self's shape with the indexed dims replaced
 * by B, in their place when the indexed dims are adjacent (x[:, i, j]: [s0,
 * B..., s3...]), first otherwise (x[i, :, j]: [B..., s1, s3...]), as ATen
 * and NumPy. A NULL entry is read as None: check the calls producing index
 * tensors first. With a bool mask the result's shape depends on its values
 * (as tj_nonzero): a fake mask is refused (TJ_ERR_UNSUPPORTED, "output
 * shape depends on the input's values"), so fake-mode tracing and
 * tj_compile refuse the call; a graph traced in real mode records the count
 * of its trace and refuses other counts when run. Errors (message naming
 * aten::index.Tensor): TJ_ERR_INDEX for more indexed dims than self's rank
 * ("too many indices"), a mask whose shape differs from the dims it covers
 * (naming both shapes) or a value out of range (naming the value, dim and
 * size); TJ_ERR_DTYPE for an index of another dtype; TJ_ERR_UNSUPPORTED for
 * a 0-dim bool mask (x[True]: unsqueeze self instead) and the fake mask
 * above; TJ_ERR_SHAPE for index shapes that do not broadcast (a mask's
 * [count] included) and, when run from a graph, for a count other than the
 * recorded one; TJ_ERR_INVALID_ARGUMENT when every entry is NULL;
 * TJ_ERR_OVERFLOW when B has more than 2^60 positions or the result more
 * than INT64_MAX elements (naming the shape). */
tj_tensor *tj_index(tj_tensor *self, tj_tensor *const *indices, int n);
/** aten::index_put: a copy of self with values written at self[indices]
 * (indices as tj_index, bool masks included: x[mask] = v). values has
 * self's dtype and broadcasts to the shape tj_index would return.
 * accumulate false: repeated positions keep the last value in row-major
 * order of the broadcast indices; true: they sum, in that order (float32,
 * float64, int64 wrapping, bool or), whatever the thread count. The result
 * has self's shape whatever a mask's count: with one bool mask, no int64
 * index and values of size 1 along the masked positions (x[mask] = 0.5,
 * x[mask] = row), the call is static and traces in fake mode too (the
 * positions are found when it runs); other calls with a fake mask are
 * refused as tj_index's. Errors: as tj_index (naming aten::index_put), plus
 * TJ_ERR_DTYPE for values of another dtype, TJ_ERR_SHAPE for values that
 * do not broadcast (naming both shapes). */
tj_tensor *tj_index_put(tj_tensor *self, tj_tensor *const *indices, int n, tj_tensor *values, bool accumulate);
/** aten::nonzero: the coordinates of self's non-zero elements (NaN counts,
 * -0.0 does not; true for bool), one row each in row-major order. self:
 * float32, float64, int64 or bool, any shape and layout. Returns a new int64
 * tensor [count, self's rank] (a 0-dim self gives [0 or 1, 0]) that the
 * caller releases. Its shape depends on self's values: a fake self is
 * refused (TJ_ERR_UNSUPPORTED "aten::nonzero: output shape depends on the
 * input's values", PyTorch's DataDependentOutputException), which fake-mode
 * tracing and tj_compile report; a graph traced in real mode holds the count
 * of its trace, and its run refuses another (TJ_ERR_SHAPE, tj_graph_run
 * naming the node and both shapes; the kernel naming both counts). No
 * gradient. */
tj_tensor *tj_nonzero(tj_tensor *self);
/** aten::where (the one-argument form, torch.where(condition); ATen's
 * nonzero_numpy): the coordinates of condition's non-zero elements, one
 * int64 tensor [count] per dim (a 0-dim condition counts as 1-D), the
 * columns of tj_nonzero(condition) as select views of it. condition: any
 * dtype tj_nonzero takes. Writes condition's rank (1 for 0-dim) views into
 * outs, and their number into n_outs; each belongs to the current scope
 * like any operator result (the caller keeps owning the outs array).
 * Through the dispatcher (tj_call "aten::where") it returns a Tensor[],
 * valid until the thread's next such call. The count depends on the values:
 * refused for a fake condition as tj_nonzero. Errors (naming aten::where or
 * aten::nonzero): TJ_ERR_INVALID_ARGUMENT for NULL outs / n_outs or more
 * dims than max_outs; TJ_ERR_UNSUPPORTED for a fake condition; TJ_ERR_DTYPE
 * as tj_nonzero. On failure *n_outs is 0. */
tj_status tj_where_condition(tj_tensor *condition, tj_tensor **outs, int max_outs, int *n_outs);
/** aten::masked_select: the elements of self where mask is true, self and
 * mask broadcast together, in row-major order of that shape. self: any
 * dtype; mask: bool. Returns a new 1-D tensor of self's dtype, [count], that
 * the caller releases. Its shape depends on mask's values, refused for a
 * fake mask as tj_nonzero's. Gradient (self): the gradient written at the
 * true positions of zeros (tj_masked_scatter), summed to self's shape.
 * Errors naming aten::masked_select: TJ_ERR_DTYPE for a mask that is not
 * bool (naming its dtype and shape), TJ_ERR_SHAPE for shapes that do not
 * broadcast, TJ_ERR_UNSUPPORTED for a fake mask. */
tj_tensor *tj_masked_select(tj_tensor *self, tj_tensor *mask);
/** aten::masked_scatter: self and mask broadcast together, with the
 * positions where mask is true taking source's elements one after the
 * other (source read in row-major order, its shape otherwise free; elements
 * past the count unused). self and source: one dtype (any); mask: bool.
 * Returns a new tensor of the broadcast shape (static: it does not depend
 * on the values) and self's dtype, that the caller releases. Gradients:
 * self the gradient where mask is false; source the gradient at the true
 * positions in order, zeros for unused elements. Errors naming
 * aten::masked_scatter: TJ_ERR_DTYPE for a mask that is not bool or a source
 * of another dtype than self's; TJ_ERR_SHAPE for shapes that do not
 * broadcast, or when source has fewer elements than mask has true positions
 * (naming both counts; found when the kernel runs, before anything is
 * written). */
tj_tensor *tj_masked_scatter(tj_tensor *self, tj_tensor *mask, tj_tensor *source);
/** aten::unfold (a view): dim `dimension` of self cut into windows of `size`
 * elements `step` apart; shape [..., (n - size) / step + 1, ..., size].
 * size > n gives TJ_ERR_SHAPE, step < 1 TJ_ERR_INVALID_ARGUMENT. */
tj_tensor *tj_unfold(tj_tensor *self, int64_t dimension, int64_t size, int64_t step);

/* ---- Creation and random. dtype TJ_DTYPE_NONE means float32 (int64 for arange with
 * integer arguments); a value that is neither a dtype nor TJ_DTYPE_NONE gives
 * TJ_ERR_INVALID_ARGUMENT, as in the reductions. ---- */
tj_tensor *tj_zeros(const int64_t *size, int ndim, int dtype);              /**< aten::zeros */
tj_tensor *tj_ones(const int64_t *size, int ndim, int dtype);               /**< aten::ones */
tj_tensor *tj_full(const int64_t *size, int ndim, tj_value fill_value, int dtype); /**< aten::full */
/** aten::arange.start_step: [start, end) by step (step 0 or wrong sign:
 * TJ_ERR_INVALID_ARGUMENT). */
tj_tensor *tj_arange(tj_value start, tj_value end, tj_value step, int dtype);
/** aten::arange (torch.arange(end)) and aten::arange.start (torch.arange(start,
 * end)): tj_arange with start 0 and step 1. Returns a new 1-d tensor of
 * ceil((end - start) / step) elements, owned by the caller (or its scope);
 * dtype TJ_DTYPE_NONE gives int64 when every given Scalar is an int or a
 * bool, float32 when one is a float. Errors, naming the overload
 * (aten::arange or aten::arange.start) and the values: TJ_ERR_INVALID_ARGUMENT
 * for an end below start (-3 in arange(-3)), an infinite or nan bound of a
 * float arange, or a Scalar that overflows the dtype; TJ_ERR_DTYPE for bool;
 * TJ_ERR_OVERFLOW for a length of 2^62 or more. */
tj_tensor *tj_arange_default(tj_value end, int dtype);
tj_tensor *tj_arange_start(tj_value start, tj_value end, int dtype);
/** aten::empty.memory_format (torch.empty(size)): a new contiguous tensor of
 * `size` (ndim dims), float32 for TJ_DTYPE_NONE, owned by the caller (or its
 * scope). Its values are unspecified in PyTorch; here always zero-filled, as
 * tj_empty_like's (a plan may reuse memory, so zeros are what a replay gives
 * too). Errors (naming aten::empty.memory_format): TJ_ERR_SHAPE for a
 * negative size, TJ_ERR_INVALID_ARGUMENT for more than TJ_MAX_DIMS dims,
 * TJ_ERR_OVERFLOW for an element count past int64, TJ_ERR_OUT_OF_MEMORY. */
tj_tensor *tj_empty(const int64_t *size, int ndim, int dtype);
tj_tensor *tj_scalar_tensor(tj_value s, int dtype);                         /**< aten::scalar_tensor: 0-dim */
tj_tensor *tj_rand(const int64_t *size, int ndim, int dtype);               /**< aten::rand: U[0,1) from the default generator */
tj_tensor *tj_randn(const int64_t *size, int ndim, int dtype);              /**< aten::randn: N(0,1) */
tj_tensor *tj_bernoulli(tj_tensor *self, double p);                         /**< aten::bernoulli.p: 1 with probability p, self's shape and dtype */
/** aten::eye: the n x n identity matrix (dtype any, float32 by default).
 * n < 0 gives TJ_ERR_INVALID_ARGUMENT. */
tj_tensor *tj_eye(int64_t n, int dtype);
/** aten::eye.m: [n, m], ones where row == column, zeros elsewhere. n or m
 * negative gives TJ_ERR_INVALID_ARGUMENT (naming aten::eye.m and the value). */
tj_tensor *tj_eye_m(int64_t n, int64_t m, int dtype);
/** aten::linspace: `steps` evenly spaced values from start to end, both
 * included ([steps]; steps 1 gives [start], 0 an empty tensor). dtype
 * float32 (the default), float64 or int64. As PyTorch's CPU loop: step =
 * (end - start) / (steps - 1) in the result's precision, the first half
 * start + step * i, the second half end - step * (steps - 1 - i); int64
 * truncates start and end, computes in double and truncates each value
 * (PyTorch 1.13's vectorised int64 loop gives other, inconsistent values).
 * Errors: TJ_ERR_INVALID_ARGUMENT for steps < 0 or a start / end that
 * overflows the dtype (1e39 for float32, nan for int64); TJ_ERR_DTYPE for
 * bool. */
tj_tensor *tj_linspace(tj_value start, tj_value end, int64_t steps, int dtype);

/* ---- The *_like family: a new contiguous tensor of self's shape, of self's
 * dtype when dtype is TJ_DTYPE_NONE (any other dtype value gives one of that
 * dtype; a value that is no dtype gives TJ_ERR_INVALID_ARGUMENT). self's
 * values are not read (a fake self gives a fake result under make_fx); the
 * result never requires grad. The caller owns the result (or its scope). */
tj_tensor *tj_zeros_like(tj_tensor *self, int dtype); /**< aten::zeros_like */
tj_tensor *tj_ones_like(tj_tensor *self, int dtype);  /**< aten::ones_like */
/** aten::full_like: every element fill_value converted to the dtype (a float
 * into int64 truncates, anything into bool is value != 0); a value that
 * overflows the dtype (1e39 for float32, nan or inf for int64) gives
 * TJ_ERR_INVALID_ARGUMENT. */
tj_tensor *tj_full_like(tj_tensor *self, tj_value fill_value, int dtype);
/** aten::empty_like: unspecified values in PyTorch; here always zero-filled
 * (a plan may reuse memory, so zeros are what a replay gives too). */
tj_tensor *tj_empty_like(tj_tensor *self, int dtype);
/** aten::rand_like / aten::randn_like: rand / randn of self's shape, from the
 * same default generator and stream (a seed gives tj_rand's numbers). A
 * result dtype other than float32 / float64 gives TJ_ERR_DTYPE (an int64
 * self needs a float dtype argument, as in PyTorch). */
tj_tensor *tj_rand_like(tj_tensor *self, int dtype);
tj_tensor *tj_randn_like(tj_tensor *self, int dtype);

/* ---- The new_* family (Tensor.new_zeros etc.): a new contiguous tensor of
 * `size` (ndim dims), of self's dtype when dtype is TJ_DTYPE_NONE (another
 * dtype gives one of that dtype); self's shape and values are not read. The
 * caller owns the result (or its scope); it never requires grad. Errors,
 * naming the operator: TJ_ERR_INVALID_ARGUMENT for a NULL self, a dtype
 * value that is no dtype or more than TJ_MAX_DIMS dims; TJ_ERR_SHAPE for a
 * negative size; TJ_ERR_OVERFLOW for an element count past int64. ---- */
tj_tensor *tj_new_zeros(tj_tensor *self, const int64_t *size, int ndim, int dtype); /**< aten::new_zeros */
tj_tensor *tj_new_ones(tj_tensor *self, const int64_t *size, int ndim, int dtype);  /**< aten::new_ones */
/** aten::new_full: every element fill_value converted to the dtype (self's:
 * not inferred from the value, unlike tj_full; a float into int64
 * truncates); a value that overflows it (1e39 for float32, nan for int64)
 * gives TJ_ERR_INVALID_ARGUMENT. */
tj_tensor *tj_new_full(tj_tensor *self, const int64_t *size, int ndim, tj_value fill_value, int dtype);
/** aten::new_empty: unspecified values in PyTorch; here zero-filled, as
 * tj_empty. */
tj_tensor *tj_new_empty(tj_tensor *self, const int64_t *size, int ndim, int dtype);
/** Seeds the default generator (Philox4x32-10): the same seed gives the same
 * numbers whatever the thread count. */
void tj_manual_seed(uint64_t seed);

/* ---- Linear algebra (OpenBLAS). ---- */
/** aten::mm: [n, k] x [k, m] -> [n, m]; float32/float64, same dtype. */
tj_tensor *tj_mm(tj_tensor *self, tj_tensor *mat2);
/** aten::bmm: [b, n, k] x [b, k, m] -> [b, n, m]. */
tj_tensor *tj_bmm(tj_tensor *self, tj_tensor *mat2);
/** aten::addmm: beta*self + alpha*(mat1 @ mat2); self broadcasts to [n, m];
 * beta = 0 ignores self entirely (nan included). TJ_ERR_INVALID_ARGUMENT
 * for a beta or alpha that overflows the dtype (1e300 for float32). */
tj_tensor *tj_addmm(tj_tensor *self, tj_tensor *mat1, tj_tensor *mat2, tj_value beta, tj_value alpha);
/** aten::baddbmm: beta * self + alpha * bmm(batch1, batch2). batch1 [b, n, k]
 * and batch2 [b, k, m] of one dtype (float32, float64 or int64, whose
 * Scalars truncate), self of that dtype broadcasting to [b, n, m]; beta = 0
 * ignores self entirely (nan included). Returns a new [b, n, m] tensor.
 * Errors (naming aten::baddbmm): TJ_ERR_SHAPE for a batch that is not 3-D,
 * differing batch sizes, inner sizes that differ or a self that does not
 * broadcast (naming the shapes); TJ_ERR_DTYPE for mixed or bool dtypes;
 * TJ_ERR_INVALID_ARGUMENT for a beta or alpha that overflows the dtype. */
tj_tensor *tj_baddbmm(tj_tensor *self, tj_tensor *batch1, tj_tensor *batch2, tj_value beta, tj_value alpha);
/** aten::mv: the matrix-vector product self [m, k] @ vec [k], a new [m]
 * tensor; float32, float64 or int64 (one dtype), any strides (products of
 * one column run on the matrix-vector kernels of kernels/gemv.h; k = 0
 * gives zeros). aten::dot: self [n] . tensor [n], a new 0-dim tensor.
 * Errors (naming the operator): TJ_ERR_SHAPE for other ranks or sizes that
 * do not match (dot: "1D tensors expected", "inconsistent tensor size");
 * TJ_ERR_DTYPE for differing dtypes or bool. */
tj_tensor *tj_mv(tj_tensor *self, tj_tensor *vec);
tj_tensor *tj_dot(tj_tensor *self, tj_tensor *tensor); /**< aten::dot (see tj_mv) */
/** aten::addmv: beta * self + alpha * (mat [m, k] @ vec [k]), a new [m]
 * tensor; self (rank <= 1) broadcasts to [m]; beta 0 ignores self (nan
 * there included), as addmm. aten::addr: beta * self + alpha * the outer
 * product of vec1 [m] and vec2 [n], a new [m, n] tensor; self (rank <= 2)
 * broadcasts to [m, n]. Dtypes, errors and Scalars as tj_addmm (bool,
 * which PyTorch's addr takes, is refused); addr's vectors must be 1-D
 * ("Expected 1-D argument vec1"). */
tj_tensor *tj_addmv(tj_tensor *self, tj_tensor *mat, tj_tensor *vec, tj_value beta, tj_value alpha);
tj_tensor *tj_addr(tj_tensor *self, tj_tensor *vec1, tj_tensor *vec2, tj_value beta,
                   tj_value alpha); /**< see tj_addmv */
/** aten::outer (implicit, as in ATen: self.reshape([n, 1]) * vec2, so a
 * graph records view and mul): the outer product of self [n] and vec2
 * [m], a new [n, m] tensor of their promoted dtype. Errors: TJ_ERR_SHAPE
 * naming aten::outer for an argument that is not 1-D; those of tj_mul. */
tj_tensor *tj_outer(tj_tensor *self, tj_tensor *vec2);
/** aten::linear (implicit): input [..., in] x weight [out, in]^T + bias [out]
 * (bias may be NULL). The bias broadcasts to the product's shape, never
 * enlarging it (ATen adds it in place): TJ_ERR_SHAPE naming aten::linear, the
 * bias and the product's shape otherwise. */
tj_tensor *tj_linear(tj_tensor *input, tj_tensor *weight, tj_tensor *bias);
/** aten::matmul (implicit): numpy matmul semantics (1-D, 2-D, batched with
 * broadcast batch dims). */
tj_tensor *tj_matmul(tj_tensor *self, tj_tensor *other);
/** aten::einsum (implicit, as torch.einsum): the Einstein summation of the n
 * tensors `tensors` described by `equation`, e.g. "bhqd,bhkd->bhqk" or
 * "ii". The equation gives one comma-separated group of subscripts (A-Z,
 * a-z; spaces ignored) per operand, one per dim, where "..." stands for the
 * dims no subscript names (right-aligned, broadcast across operands); after
 * "->" the output's subscripts, each at most once; without "->" the output
 * is "..." then every subscript used once, in A-Z, a-z order. A subscript
 * repeated within one operand takes its diagonal; subscripts left out of the
 * output are summed; sizes of 1 broadcast. Operands are multiplied two at a
 * time, left to right, or in the order of `path` (npath entries, or NULL for
 * None: n == 1 ? 1 : 2 * (n - 1) operand indices, opt_einsum's format),
 * each pair as one aten::bmm over the subscripts they share and no other
 * operand needs (aten::mul when there are none), after permute / view /
 * sum: make_fx records those calls, never einsum. Any dtypes and strides:
 * a product of two operands promotes as tj_mul, a contraction needs one
 * dtype, not bool (tj_bmm's rule; PyTorch refuses mixed dtypes too), and a
 * sum of one operand's subscript gives int64 for integer or bool input (as
 * tj_sum_dim). Returns a tensor of the output's shape (a view of the input
 * for a permutation such as "ij->ji", as PyTorch). Errors (messages as
 * ATen's): TJ_ERR_INVALID_ARGUMENT for a NULL equation or operand, no
 * operands, operand counts that do not match the equation, an output
 * subscript repeated or in no operand, a path of the wrong length or
 * contracting an operand with itself; TJ_ERR_PARSE for a character other
 * than a letter, space, ',' or "->" and for a '.' outside one "..." per
 * operand and output; TJ_ERR_SHAPE for a subscript count other than the
 * operand's rank (at most it with "..."), sizes of a subscript (or of
 * ellipsis dims) that differ and are not 1, or a repeated subscript over
 * dims of different sizes; TJ_ERR_INDEX for a path index out of range;
 * TJ_ERR_UNSUPPORTED when the distinct subscripts and ellipsis dims exceed
 * TJ_MAX_DIMS (ATen aligns every operand on all of them); tj_bmm's
 * TJ_ERR_DTYPE for a contraction of mixed dtypes or bool. */
tj_tensor *tj_einsum(const char *equation, tj_tensor *const *tensors, int n, const int64_t *path, int npath);

/* ---- Dense linear algebra on LAPACK (OpenBLAS). Matrices are the last two
 * dims, the dims before them a batch; float32 or float64 (one dtype for all
 * operands), computed in that dtype. pivots and info are int64 tensors
 * (PyTorch 1.13 returns int32 there; the values are the same): pivots as
 * LAPACK's getrf writes them (1-based row swaps), info LAPACK's per matrix
 * (0: success; k > 0: the factorization broke down at step k). Errors common
 * to all: TJ_ERR_DTYPE for another dtype or mixed dtypes, TJ_ERR_SHAPE for
 * an operand of fewer than 2 dims, a matrix that must be square and is not,
 * shapes that do not fit the equation or batch dims that do not broadcast
 * (messages name the operator and the shapes), TJ_ERR_UNSUPPORTED for a
 * matrix dim beyond LAPACK's int. ---- */

/** aten::linalg_solve_triangular: X with A X = B (left) or X A = B
 * (!left), A [*, n, n] triangular (only its `upper` or lower triangle is
 * read; with `unitriangular` its diagonal is taken as ones), B [*, n, k]
 * (left) or [*, k, n]; batch dims broadcast. Returns X of the broadcast
 * batch and B's matrix shape. A zero on the diagonal gives inf / nan, as
 * PyTorch (no error). Differentiable in A and B (derivatives.yaml). */
tj_tensor *tj_linalg_solve_triangular(tj_tensor *A, tj_tensor *B, bool upper, bool left, bool unitriangular);
/** aten::linalg_lu_solve: X with op(A) X = B (left) or X op(A) = B, A
 * given by its LU factors (LU [*, n, n], pivots int64 [*, n], as
 * tj__linalg_solve_ex returns them), op(A) = A^T with `adjoint`. B [*, n,
 * k] (left) or [*, k, n]; batch dims broadcast. Not differentiable in
 * tjit (PyTorch's formula is not implemented): a backward pass that
 * reaches it fails with TJ_ERR_UNSUPPORTED. Errors also:
 * TJ_ERR_DTYPE for pivots that are not int64, TJ_ERR_SHAPE for pivots not
 * of LU's shape without its last dim, TJ_ERR_INVALID_ARGUMENT (when run)
 * for a pivot outside [1, n]. */
tj_tensor *tj_linalg_lu_solve(tj_tensor *LU, tj_tensor *pivots, tj_tensor *B, bool left, bool adjoint);
/** aten::_linalg_solve_ex: X with A X = B (left) or X A = B, by LU with
 * partial pivoting (getrf, getrs). A [*, n, n]; B [*, n, k] (left) or
 * [*, k, n], or a vector B ([n], or A's shape without its last dim: then X
 * is B's shape); batch dims broadcast. Writes the new tensors X (*result),
 * the LU factors (*LU, A's shape), pivots (int64, A's shape without the last
 * dim) and info (int64, A's batch shape); any pointer may be NULL. As
 * PyTorch 1.13, a contiguous A is factored as its transpose (LU and pivots
 * are A^T's then; det and solves are unchanged). A singular A gives info >
 * 0 and inf / nan in X, or with `check_errors` TJ_ERR_INVALID_ARGUMENT naming
 * the operator, the first singular batch element and LAPACK's info.
 * Differentiable in A and B through result. */
tj_status tj__linalg_solve_ex(tj_tensor *A, tj_tensor *B, bool left, bool check_errors, tj_tensor **result,
                              tj_tensor **LU, tj_tensor **pivots, tj_tensor **info);
/** aten::linalg_solve: tj__linalg_solve_ex's result with check_errors
 * (implicit: PyTorch 1.13 records _linalg_solve_ex and a separate
 * _linalg_check_errors; tjit's error is the _ex operator's). */
tj_tensor *tj_linalg_solve(tj_tensor *A, tj_tensor *B, bool left);
/** aten::linalg_inv_ex: the inverse of each matrix of A [*, n, n] (LU
 * with partial pivoting, then getrs on the identity, as ATen 1.13) into a
 * new tensor of A's shape (*inverse), and info (int64, A's batch shape) as
 * tj__linalg_solve_ex's; either pointer may be NULL. A singular A gives info
 * > 0 and inf / nan, or with `check_errors` TJ_ERR_INVALID_ARGUMENT naming
 * the operator, the batch element and getrf's info. Differentiable through
 * inverse. */
tj_status tj_linalg_inv_ex(tj_tensor *A, bool check_errors, tj_tensor **inverse, tj_tensor **info);
/** aten::linalg_inv: tj_linalg_inv_ex's inverse with check_errors
 * (implicit). */
tj_tensor *tj_linalg_inv(tj_tensor *A);
/** aten::_linalg_det: the determinant of each matrix of A [*, n, n] (A's
 * batch shape and dtype; 1 for n = 0), from its LU factors, written with
 * them (LU, pivots: as tj__linalg_solve_ex's) to the non-NULL pointers. A
 * singular A gives 0 (no error). Differentiable through result (PyTorch
 * 1.13's linalg_det_backward, eps on U's zero pivots without grad mode). */
tj_status tj__linalg_det(tj_tensor *A, tj_tensor **result, tj_tensor **LU, tj_tensor **pivots);
/** aten::linalg_det: tj__linalg_det's result (implicit). */
tj_tensor *tj_linalg_det(tj_tensor *A);
/** aten::_linalg_slogdet: the sign (-1, 0 or 1) and log |det| of each matrix
 * of A [*, n, n] (A's batch shape and dtype; a singular A gives 0 and
 * -inf), with the LU factors and pivots as tj__linalg_det's; pointers may be
 * NULL. Differentiable through logabsdet (the real sign has no gradient). */
tj_status tj__linalg_slogdet(tj_tensor *A, tj_tensor **sign, tj_tensor **logabsdet, tj_tensor **LU,
                             tj_tensor **pivots);
/** aten::linalg_slogdet: tj__linalg_slogdet's sign and logabsdet
 * (implicit). */
tj_status tj_linalg_slogdet(tj_tensor *A, tj_tensor **sign, tj_tensor **logabsdet);
/** aten::linalg_cholesky_ex: the Cholesky factor of each matrix of A [*, n,
 * n] (potrf), lower (A = L L^T, reading A's lower triangle) or with `upper`
 * upper (A = U^T U, its upper triangle), the other triangle zero, into a new
 * tensor of A's shape (*L), and info (int64, A's batch shape: k > 0 when the
 * minor of order k is not positive-definite; L is then potrf's partial
 * factor); either pointer may be NULL. With `check_errors` such an A gives
 * TJ_ERR_INVALID_ARGUMENT naming the operator, the batch element and
 * potrf's info. Differentiable through L (cholesky_backward). */
tj_status tj_linalg_cholesky_ex(tj_tensor *A, bool upper, bool check_errors, tj_tensor **L, tj_tensor **info);
/** aten::linalg_cholesky: tj_linalg_cholesky_ex's L with check_errors
 * (implicit). */
tj_tensor *tj_linalg_cholesky(tj_tensor *A, bool upper);
/** aten::cholesky_solve: X with (L L^T) X = B, or (U^T U) X = B with
 * `upper`, from a Cholesky factor L [*, n, n] (only its lower / upper
 * triangle is read) and B [*, n, k]; batch dims broadcast. Returns X of the
 * broadcast batch and B's matrix shape. Differentiable in B and L. */
tj_tensor *tj_cholesky_solve(tj_tensor *B, tj_tensor *L, bool upper);
/** aten::linalg_lu_factor_ex: the LU factors with partial pivoting of each
 * matrix of A [*, m, n] (getrf of A itself, as ATen 1.13: P A = L U) into
 * new tensors LU ([*, m, n]: L strictly below the diagonal, its unit
 * diagonal implied; U on and above), pivots (int64 [*, min(m, n)], 1-based
 * row swaps) and info (int64 [*]: k > 0 when U[k-1][k-1] is 0); pointers
 * may be NULL. tj_linalg_lu_solve(LU, pivots, B, left, false) then solves A
 * X = B for a square A. `pivot` false gives TJ_ERR_UNSUPPORTED (PyTorch: not
 * on the CPU); with `check_errors` a singular A gives TJ_ERR_INVALID_ARGUMENT
 * naming the batch element and getrf's info. Not differentiable in tjit
 * (PyTorch's lu_factor_ex_backward is not written here): a backward pass
 * that reaches it fails with TJ_ERR_UNSUPPORTED. */
tj_status tj_linalg_lu_factor_ex(tj_tensor *A, bool pivot, bool check_errors, tj_tensor **LU, tj_tensor **pivots,
                                 tj_tensor **info);
/** aten::linalg_lu_factor: tj_linalg_lu_factor_ex's LU and pivots with
 * check_errors (implicit). */
tj_status tj_linalg_lu_factor(tj_tensor *A, bool pivot, tj_tensor **LU, tj_tensor **pivots);
/** aten::linalg_lu: the LU factorization with partial pivoting A = P L U
 * of each matrix of A [*, m, n] (getrf, as ATen 1.13's lu_factor_ex and
 * lu_unpack), k = min(m, n): new tensors P ([*, m, m], a permutation
 * matrix), L ([*, m, k], unit lower trapezoidal) and U ([*, k, n], upper
 * trapezoidal), of A's dtype; pointers may be NULL. A singular A is no
 * error (a zero on U's diagonal). `pivot` false gives TJ_ERR_UNSUPPORTED
 * (PyTorch: not on the CPU). Differentiable through L and U
 * (linalg_lu_backward) for square matrices; the backward pass of a
 * rectangular A fails with TJ_ERR_UNSUPPORTED (not written here). */
tj_status tj_linalg_lu(tj_tensor *A, bool pivot, tj_tensor **P, tj_tensor **L, tj_tensor **U);
/** aten::linalg_qr: the QR factorization A = Q R of each matrix of A [*, m,
 * n] (geqrf, orgqr, as ATen 1.13: R's diagonal has LAPACK's signs), k =
 * min(m, n). `mode` "reduced": Q [*, m, k] with orthonormal columns, R [*,
 * k, n] upper triangular; "complete": Q [*, m, m] orthogonal, R [*, m, n];
 * "r": R [*, k, n] only, Q an empty tensor of shape [0]. New tensors in
 * *Q and *R (either pointer may be NULL). Errors: TJ_ERR_INVALID_ARGUMENT
 * for another mode. Differentiable (linalg_qr_backward) for modes
 * "reduced" and "complete" when m >= n: the backward pass of mode "r"
 * fails with TJ_ERR_INVALID_ARGUMENT as PyTorch's, that of m < n with
 * TJ_ERR_UNSUPPORTED (PyTorch's wide-matrix formula is not written here). */
tj_status tj_linalg_qr(tj_tensor *A, const char *mode, tj_tensor **Q, tj_tensor **R);
/** aten::_linalg_eigh: the eigendecomposition A = V diag(w) V^T of each
 * symmetric matrix of A [*, n, n] (syevd, as ATen 1.13: only the lower
 * triangle is read with UPLO "L", the upper with "U", either case):
 * eigenvalues w ([*, n], ascending, A's dtype) and, with `compute_v`, the
 * orthonormal eigenvectors as V's columns ([*, n, n]; each column's sign is
 * LAPACK's, which PyTorch's also is); without it an empty [0] tensor.
 * Pointers may be NULL. Errors: TJ_ERR_SHAPE for non-square matrices,
 * TJ_ERR_INVALID_ARGUMENT for another UPLO, and (when run) for a matrix
 * syevd does not converge on (nan entries), naming the batch element and
 * LAPACK's info. Differentiable (linalg_eig_backward, Hermitian case); the
 * gradient through V is defined for distinct eigenvalues only (inf / nan
 * otherwise, as PyTorch). */
tj_status tj__linalg_eigh(tj_tensor *A, const char *UPLO, bool compute_v, tj_tensor **eigenvalues,
                          tj_tensor **eigenvectors);
/** aten::linalg_eigh: tj__linalg_eigh with compute_v (implicit). */
tj_status tj_linalg_eigh(tj_tensor *A, const char *UPLO, tj_tensor **eigenvalues, tj_tensor **eigenvectors);
/** aten::linalg_eigvalsh: tj__linalg_eigh's eigenvalues (implicit; the
 * eigenvectors are computed, as PyTorch 1.13 does, when A requires grad). */
tj_tensor *tj_linalg_eigvalsh(tj_tensor *A, const char *UPLO);
/** aten::_linalg_svd: the singular value decomposition A = U diag(S) Vh of
 * each matrix of A [*, m, n] (gesdd, as ATen 1.13: the singular vectors'
 * signs are LAPACK's), k = min(m, n): S [*, k] descending, A's dtype; with
 * `compute_uv` U [*, m, k] and Vh [*, k, n] (with `full_matrices` U [*, m,
 * m] and Vh [*, n, n]; of an empty A these are identities), without it
 * empty [0] tensors. Pointers may be NULL. `driver` must be NULL (PyTorch:
 * CUDA only; otherwise TJ_ERR_UNSUPPORTED). Errors also TJ_ERR_INVALID_ARGUMENT
 * (when run) for a matrix gesdd does not converge on, naming the batch
 * element and LAPACK's info. Differentiable (svd_backward); the gradient
 * through U or Vh is defined for distinct non-zero singular values only. */
tj_status tj__linalg_svd(tj_tensor *A, bool full_matrices, bool compute_uv, const char *driver, tj_tensor **U,
                         tj_tensor **S, tj_tensor **Vh);
/** aten::linalg_svd: tj__linalg_svd with compute_uv (implicit). */
tj_status tj_linalg_svd(tj_tensor *A, bool full_matrices, const char *driver, tj_tensor **U, tj_tensor **S,
                        tj_tensor **Vh);
/** aten::linalg_svdvals: tj__linalg_svd's S (implicit; U and Vh are
 * computed, as PyTorch 1.13 does, when A requires grad). */
tj_tensor *tj_linalg_svdvals(tj_tensor *A, const char *driver);
/** aten::linalg_matrix_norm (implicit, as ATen 1.13): the ord-norm of the
 * matrices of A over its two dims `dim` (NULL: the last two; ndim must be
 * 2, distinct dims after wrapping): ord 2 / -2 the largest / smallest
 * singular value (tj_linalg_svdvals of A with those dims moved last), 1 /
 * -1 the largest / smallest column sum of |A|, inf / -inf the same of the
 * rows (linalg_vector_norm, then amax / amin). Returns a new tensor of A's
 * other dims (with `keepdim` the two dims kept as size 1), of `dtype`
 * (TJ_DTYPE_NONE: A's; A is converted to it first). Errors:
 * TJ_ERR_INVALID_ARGUMENT for another ord, a dim that is not two distinct
 * dims; TJ_ERR_SHAPE for A of fewer than 2 dims; TJ_ERR_DTYPE for a narrower dtype or a
 * non-float A or dtype; TJ_ERR_INDEX for a dim out of range.
 * Differentiable through its operators (svd_backward for ord +-2: defined
 * for distinct singular values). */
tj_tensor *tj_linalg_matrix_norm(tj_tensor *A, tj_value ord, const int64_t *dim, int ndim, bool keepdim, int dtype);
/** aten::linalg_matrix_norm.str_ord (implicit): ord "fro" the 2-norm of
 * the entries (linalg_vector_norm over `dim`), "nuc" the sum of the
 * singular values; arguments, result and errors as tj_linalg_matrix_norm's
 * (TJ_ERR_INVALID_ARGUMENT for another ord). */
tj_tensor *tj_linalg_matrix_norm_str_ord(tj_tensor *A, const char *ord, const int64_t *dim, int ndim, bool keepdim,
                                         int dtype);

/* ---- Neural networks. ---- */
tj_tensor *tj__softmax(tj_tensor *self, int64_t dim, bool half_to_float);     /**< aten::_softmax */
tj_tensor *tj__log_softmax(tj_tensor *self, int64_t dim, bool half_to_float); /**< aten::_log_softmax */
tj_tensor *tj_softmax(tj_tensor *self, int64_t dim);                          /**< aten::softmax.int (implicit) */
tj_tensor *tj_log_softmax(tj_tensor *self, int64_t dim);                      /**< aten::log_softmax.int (implicit) */
/** aten::native_layer_norm: normalises over the trailing dims given by
 * normalized_shape; weight/bias may be NULL. mean and rstd keep the
 * normalised dims as size 1. Any of the out pointers may be NULL. */
tj_status tj_native_layer_norm(tj_tensor *input, const int64_t *normalized_shape, int n, tj_tensor *weight,
                               tj_tensor *bias, double eps, tj_tensor **out, tj_tensor **mean, tj_tensor **rstd);
tj_tensor *tj_layer_norm(tj_tensor *input, const int64_t *normalized_shape, int n, tj_tensor *weight,
                         tj_tensor *bias, double eps); /**< aten::layer_norm (implicit) */
/** aten::native_batch_norm (Ioffe & Szegedy 2015): input [N, C, *] (float32 /
 * float64, rank >= 2) normalised per channel c, out = (x - mean_c) *
 * invstd_c * weight[c] + bias[c]. In training the statistics are the
 * channel's biased mean and variance over N and the trailing dims, invstd =
 * 1 / sqrt(var + eps) (0 when var and eps are both 0, as ATen's InvStd: a
 * constant channel then gives its bias); a channel holding an infinity or
 * nan has ATen's mean, sum / count (inf, -inf or nan), and variance nan;
 * running_mean / running_var, when given, are updated in place to (1 -
 * momentum) * old + momentum * new, with the unbiased variance for
 * running_var (as ATen: nan when the channel holds one value). In evaluation
 * (training false) the running statistics are used and must be given; where
 * invstd * weight is infinite (running_var + eps = 0) the output is ATen's x
 * alpha + (bias - mean alpha): inf, -inf or nan. weight, bias, running_mean,
 * running_var: [C] of input's dtype, each may be NULL (when training).
 * Results (new tensors, the caller's; any out pointer may be NULL): out of
 * input's shape, save_mean and save_invstd [C] in training, [0] in
 * evaluation (as ATen's CPU kernel). Under make_fx the call is recorded with
 * its writes to the running statistics, which tj_pass_functionalize turns
 * into outputs written back into those inputs. Errors: TJ_ERR_DTYPE
 * (non-float input, or another tensor of another dtype), TJ_ERR_SHAPE (rank
 * < 2, a [C] tensor of another shape), TJ_ERR_INVALID_ARGUMENT (evaluation
 * without running statistics), TJ_ERR_UNSUPPORTED (running statistics that
 * require grad in grad mode, as PyTorch). */
tj_status tj_native_batch_norm(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, tj_tensor *running_mean,
                               tj_tensor *running_var, bool training, double momentum, double eps, tj_tensor **out,
                               tj_tensor **save_mean, tj_tensor **save_invstd);
/** aten::batch_norm (implicit): tj_native_batch_norm's out, as
 * torch.nn.functional.batch_norm (BatchNorm1d/2d) without its Python check:
 * one value per channel in training is accepted, as by the aten operator
 * (the output is the bias, the new running_var nan). Errors as
 * tj_native_batch_norm. */
tj_tensor *tj_batch_norm(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, tj_tensor *running_mean,
                         tj_tensor *running_var, bool training, double momentum, double eps);
/** aten::native_group_norm (Wu & He 2018): input (float32 / float64) of n *
 * c * hxw elements read in row-major order as [n, c, hxw] whatever its shape,
 * as ATen (usually input [N, C, *] with hxw the product of the trailing
 * dims); the c channels form `group` groups of c / group consecutive
 * channels, each sample's group normalised by its biased mean and variance,
 * then * weight[c] + bias[c] ([c] of input's dtype, or NULL). Results (new,
 * the caller's; out pointers may be NULL): out of input's shape, mean and
 * rstd = 1 / sqrt(var + eps) of shape [n, group]. Errors: TJ_ERR_DTYPE,
 * TJ_ERR_SHAPE (c not divisible by group, input not of n * c * hxw
 * elements, weight / bias not [c]), TJ_ERR_INVALID_ARGUMENT (negative
 * sizes, group <= 0). */
tj_status tj_native_group_norm(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, int64_t n, int64_t c, int64_t hxw,
                               int64_t group, double eps, tj_tensor **out, tj_tensor **mean, tj_tensor **rstd);
/** aten::group_norm (implicit): tj_native_group_norm's out for input [N, C,
 * *], as torch.nn.GroupNorm; errors as tj_native_group_norm. */
tj_tensor *tj_group_norm(tj_tensor *input, int64_t num_groups, tj_tensor *weight, tj_tensor *bias, double eps);
/** aten::convolution, 2-D: input [N, C_in, H, W], weight [C_out, C_in/groups,
 * kH, kW], bias [C_out] or NULL; stride/padding/dilation have 2 entries.
 * An input with an empty spatial dim is computed only when N or C_in is 0
 * (as ATen; TJ_ERR_SHAPE otherwise, naming the input shape); so is an
 * empty kernel (kH or kW 0: TJ_ERR_SHAPE otherwise, as ATen's CPU
 * backends). An input without channels (C_in = 0) gives [N, 0, OH, OW], as ATen's empty
 * backend (tj_convolution_backward then wants that grad_output and gives a
 * zero grad_bias). */
tj_tensor *tj_convolution(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, const int64_t *stride,
                          const int64_t *padding, const int64_t *dilation, bool transposed,
                          const int64_t *output_padding, int64_t groups);
tj_tensor *tj_conv2d(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, const int64_t *stride,
                     const int64_t *padding, const int64_t *dilation, int64_t groups); /**< aten::conv2d (implicit) */
/** aten::conv1d (implicit: recorded as aten::convolution), as
 * torch.nn.functional.conv1d: the cross-correlation of input [N, C_in, L]
 * with weight [C_out, C_in / groups, K], plus bias [C_out] (NULL: none),
 * giving [N, C_out, L_out], L_out = (L + 2 padding - dilation (K - 1) - 1)
 * / stride + 1. An unbatched input [C_in, L] gives [C_out, L_out]. One
 * dtype, float32 or float64, for all; a new tensor. stride, dilation and
 * groups >= 1, padding >= 0. Errors (the message names aten::conv1d, then
 * aten::convolution for the convolution's own checks, and the offending
 * sizes or values): TJ_ERR_SHAPE for an input of rank other than 2 or 3, a
 * weight of another rank than the batched input's, channels that do not
 * match (C_in != weight's dim 1 * groups, C_out not divisible by groups), a
 * bias not [C_out], a kernel extent larger than the padded input, an
 * empty L when N and C_in are not 0 (as ATen);
 * TJ_ERR_DTYPE for mixed or non-float dtypes; TJ_ERR_INVALID_ARGUMENT for
 * a non-positive stride, dilation or groups or a negative padding. */
tj_tensor *tj_conv1d(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, int64_t stride, int64_t padding,
                     int64_t dilation, int64_t groups);
/** aten::conv_transpose1d (implicit: recorded as aten::convolution with
 * transposed = true), as torch.nn.functional.conv_transpose1d: the
 * gradient of conv1d with respect to its input. input [N, C_in, L] (or
 * unbatched [C_in, L]), weight [C_in, C_out / groups, K], bias [C_out] or
 * NULL; result [N, C_out, L_out] (unbatched: [C_out, L_out]), L_out = (L -
 * 1) stride - 2 padding + dilation (K - 1) + output_padding + 1. Dtypes
 * and errors as tj_conv1d's, the channel check being C_in == weight's dim
 * 0, plus TJ_ERR_INVALID_ARGUMENT for an output_padding that is negative
 * or not smaller than either stride or dilation (the message gives the
 * three values) and TJ_ERR_SHAPE for L_out < 1. */
tj_tensor *tj_conv_transpose1d(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, int64_t stride, int64_t padding,
                               int64_t output_padding, int64_t groups, int64_t dilation);
/** aten::conv_transpose2d.input (implicit: recorded as aten::convolution
 * with transposed = true), as torch.nn.functional.conv_transpose2d:
 * tj_conv_transpose1d in two dims. input [N, C_in, H, W] (or unbatched [C_in,
 * H, W]), weight [C_in, C_out / groups, kH, kW], bias [C_out] or NULL;
 * stride, padding, output_padding (NULL: zeros) and dilation hold 2 entries
 * (height, width), each dim's output size as tj_conv_transpose1d's.
 * Errors as tj_conv_transpose1d's (an input of rank other than 3 or 4 gives
 * TJ_ERR_SHAPE). */
tj_tensor *tj_conv_transpose2d(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, const int64_t *stride,
                               const int64_t *padding, const int64_t *output_padding, int64_t groups,
                               const int64_t *dilation);
/** aten::conv3d (implicit: recorded as aten::convolution), as
 * torch.nn.functional.conv3d: tj_conv1d in three dims. input [N, C_in, D,
 * H, W] (or unbatched [C_in, D, H, W]), weight [C_out, C_in / groups, kD,
 * kH, kW], bias [C_out] or NULL; stride, padding and dilation hold 3
 * entries (depth, height, width), each dim's output size as tj_conv1d's.
 * Computed as vol2col + one GEMM per sample and group (kernels/conv3d.h).
 * Errors as tj_conv1d's (an input of rank other than 4 or 5 gives
 * TJ_ERR_SHAPE). */
tj_tensor *tj_conv3d(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, const int64_t *stride,
                     const int64_t *padding, const int64_t *dilation, int64_t groups);
/** aten::conv_transpose3d.input (implicit: recorded as aten::convolution
 * with transposed = true): tj_conv_transpose1d in three dims. input [N,
 * C_in, D, H, W] (or unbatched [C_in, D, H, W]), weight [C_in, C_out /
 * groups, kD, kH, kW], bias [C_out] or NULL; stride, padding,
 * output_padding (NULL: zeros) and dilation hold 3 entries. Errors as
 * tj_conv_transpose1d's (an input of rank other than 4 or 5 gives
 * TJ_ERR_SHAPE). */
tj_tensor *tj_conv_transpose3d(tj_tensor *input, tj_tensor *weight, tj_tensor *bias, const int64_t *stride,
                               const int64_t *padding, const int64_t *output_padding, int64_t groups,
                               const int64_t *dilation);
/** aten::max_pool3d_with_indices, as torch.nn.functional.max_pool3d with
 * return_indices: self [N, C, D, H, W] or unbatched [C, D, H, W], float32
 * or float64, non-empty but for N; kernel_size, padding, dilation hold 3
 * entries (depth, height, width), stride 3 or NULL (the kernel size). out
 * (self's dtype) and indices (int64, (z * H + y) * W + x within each
 * volume) are new tensors of self's leading dims and the output sizes of
 * PyTorch's pooling_output_shape; a nan wins its window (the last one of
 * several), ties keep the first position. Errors: TJ_ERR_SHAPE (rank, an
 * empty dim, an output size below 1), TJ_ERR_DTYPE (not float),
 * TJ_ERR_INVALID_ARGUMENT (a kernel size, stride or dilation below 1, a
 * padding negative or above half the kernel). */
tj_status tj_max_pool3d_with_indices(tj_tensor *self, const int64_t *kernel_size, const int64_t *stride,
                                     const int64_t *padding, const int64_t *dilation, bool ceil_mode,
                                     tj_tensor **out, tj_tensor **indices);
/** aten::max_pool3d (implicit): tj_max_pool3d_with_indices's out. */
tj_tensor *tj_max_pool3d(tj_tensor *self, const int64_t *kernel_size, const int64_t *stride,
                         const int64_t *padding, const int64_t *dilation, bool ceil_mode);
/** aten::max_pool3d_with_indices_backward: grad_output (self's dtype) summed
 * into a new tensor of self's shape at `indices`; the pooling arguments as
 * the forward's (stride not NULL). Errors as the forward's, plus
 * TJ_ERR_SHAPE for a grad_output or indices not of the output's shape and
 * TJ_ERR_INDEX for an index outside the volume. */
tj_tensor *tj_max_pool3d_with_indices_backward(tj_tensor *grad_output, tj_tensor *self, const int64_t *kernel_size,
                                               const int64_t *stride, const int64_t *padding,
                                               const int64_t *dilation, bool ceil_mode, tj_tensor *indices);
/** aten::avg_pool3d, as torch.nn.functional.avg_pool3d: the mean of each
 * window, divided by divisor_override when positive, else by the window's
 * size inside the padded input (count_include_pad) or the input; sums in
 * float64. Arguments, result and errors as tj_max_pool3d's (no dilation). */
tj_tensor *tj_avg_pool3d(tj_tensor *self, const int64_t *kernel_size, const int64_t *stride, const int64_t *padding,
                         bool ceil_mode, bool count_include_pad, int64_t divisor_override);
/** aten::avg_pool3d_backward: the adjoint of tj_avg_pool3d (grad_output / the
 * divisor added to each element of its window), a new tensor of self's
 * shape. Errors as tj_avg_pool3d's, plus TJ_ERR_SHAPE for a grad_output not
 * of the output's shape and TJ_ERR_DTYPE for one not of self's dtype. */
tj_tensor *tj_avg_pool3d_backward(tj_tensor *grad_output, tj_tensor *self, const int64_t *kernel_size,
                                  const int64_t *stride, const int64_t *padding, bool ceil_mode,
                                  bool count_include_pad, int64_t divisor_override);
/** aten::grid_sampler_2d, as torch.nn.functional.grid_sample of 4-d inputs
 * (Jaderberg et al. 2015): input [N, C, H, W] sampled at grid [N, OH, OW, 2]
 * ((x, y) in [-1, 1], the corners' centres when align_corners, their outer
 * edges otherwise), both float32 or both float64; interpolation_mode 0
 * (bilinear) or 1 (nearest, halves to even), padding_mode 0 (zeros), 1
 * (border) or 2 (reflection). Returns a new [N, C, OH, OW] tensor. Errors:
 * TJ_ERR_DTYPE (mixed or non-float dtypes), TJ_ERR_SHAPE (ranks, batch
 * sizes, grid's last dim not 2, an empty H or W), TJ_ERR_UNSUPPORTED
 * (bicubic, mode 2), TJ_ERR_INVALID_ARGUMENT (other modes). */
tj_tensor *tj_grid_sampler_2d(tj_tensor *input, tj_tensor *grid, int64_t interpolation_mode, int64_t padding_mode,
                              bool align_corners);
/** aten::grid_sampler_2d_backward: the gradients of tj_grid_sampler_2d for
 * grad_output [N, C, OH, OW], of input (*grad_input, computed when
 * output_mask[0] says so, else NULL) and grid (*grad_grid, zeros in nearest
 * mode; always computed, as ATen 1.13's CPU kernel), new tensors. Errors as tj_grid_sampler_2d's, plus TJ_ERR_SHAPE / TJ_ERR_DTYPE for
 * a grad_output not of the output's shape or dtype. */
tj_status tj_grid_sampler_2d_backward(tj_tensor *grad_output, tj_tensor *input, tj_tensor *grid,
                                      int64_t interpolation_mode, int64_t padding_mode, bool align_corners,
                                      const bool *output_mask, tj_tensor **grad_input, tj_tensor **grad_grid);
/** aten::max_pool2d_with_indices: stride NULL means kernel_size. indices are
 * int64 flat positions within each input plane. */
tj_status tj_max_pool2d_with_indices(tj_tensor *self, const int64_t *kernel_size, const int64_t *stride,
                                     const int64_t *padding, const int64_t *dilation, bool ceil_mode,
                                     tj_tensor **out, tj_tensor **indices);
tj_tensor *tj_max_pool2d(tj_tensor *self, const int64_t *kernel_size, const int64_t *stride,
                         const int64_t *padding, const int64_t *dilation, bool ceil_mode); /**< aten::max_pool2d (implicit) */
/** aten::avg_pool2d; divisor_override <= 0 means None. */
tj_tensor *tj_avg_pool2d(tj_tensor *self, const int64_t *kernel_size, const int64_t *stride,
                         const int64_t *padding, bool ceil_mode, bool count_include_pad, int64_t divisor_override);
/** aten::_adaptive_avg_pool2d: self [N, C, H, W] or unbatched [C, H, W]
 * (float32 / float64, any strides, H and W >= 1) averaged over windows into
 * [.., OH, OW] = output_size (2 entries >= 0; 0 gives an empty result):
 * output (i, j) is the mean of rows [floor(i H / OH), ceil((i + 1) H / OH))
 * and columns [floor(j W / OW), ceil((j + 1) W / OW)) (windows overlap when
 * the sizes do not divide; OH > H repeats rows). Sums run in float64,
 * divided by the window's height and then its width, rounded once
 * (PyTorch sums float32 in float: within an ulp of it). Returns a new
 * contiguous tensor of self's dtype. Errors: TJ_ERR_INVALID_ARGUMENT for
 * output_size not of 2 entries or with a negative one (the message gives
 * them), TJ_ERR_SHAPE for self of rank other than 3 or 4 or with H or W 0
 * (the message gives self's sizes), TJ_ERR_DTYPE for int64 or bool self,
 * TJ_ERR_OVERFLOW when H (OH + 1) or W (OW + 1) exceeds int64. */
tj_tensor *tj__adaptive_avg_pool2d(tj_tensor *self, const int64_t *output_size);
/** aten::adaptive_avg_pool2d (implicit), as
 * torch.nn.functional.adaptive_avg_pool2d: output_size [1, 1] is the mean
 * over the last two dims, keeping them (as ATen: any float self of rank >=
 * 2; an empty plane gives nan; errors tj_mean_dim's), any other size
 * tj__adaptive_avg_pool2d (recorded as aten::_adaptive_avg_pool2d, with its
 * errors, named after aten::adaptive_avg_pool2d). */
tj_tensor *tj_adaptive_avg_pool2d(tj_tensor *self, const int64_t *output_size);
/** aten::adaptive_max_pool2d (torch.nn.functional.adaptive_max_pool2d;
 * adaptive_max_pool1d records it on an unsqueezed input): self [N, C, H, W]
 * or unbatched [C, H, W] (float32 / float64, any strides, every dim but the
 * first >= 1) reduced to [.., OH, OW] = output_size (2 entries >= 0): output
 * (i, j) is the max over the windows of tj__adaptive_avg_pool2d, *indices
 * (int64, the same shape) its flat position h W + w in its plane. Ties keep
 * the first position in row-major window order; a nan wins, and with
 * several nans the last one does (ATen 1.13's CPU kernel). *out and
 * *indices are new contiguous tensors (the caller's, or the scope's); both
 * NULL on error. Errors: TJ_ERR_INVALID_ARGUMENT for output_size not of 2
 * entries or with a negative one; TJ_ERR_SHAPE for self of rank other than
 * 3 or 4 or with a size 0 after its first dim (the message gives self's
 * sizes); TJ_ERR_DTYPE for int64 or bool self; TJ_ERR_OVERFLOW when
 * H (OH + 1) or W (OW + 1) exceeds int64. */
tj_status tj_adaptive_max_pool2d(tj_tensor *self, const int64_t *output_size, tj_tensor **out, tj_tensor **indices);
/** aten::_adaptive_avg_pool3d (torch.nn.functional.adaptive_avg_pool3d
 * records it for every output size but 1 x 1 x 1, which is a mean): self
 * [N, C, D, H, W] or unbatched [C, D, H, W] (float32 / float64, any
 * strides, every dim but the first >= 1) averaged over windows into
 * [.., OD, OH, OW] = output_size (3 entries >= 0), each dim's windows as
 * tj__adaptive_avg_pool2d's. Sums run in float64, divided by the window's
 * depth, height and width in turn, rounded once (PyTorch sums float32 in
 * float: within an ulp of it). Returns a new contiguous tensor of self's
 * dtype. Errors: TJ_ERR_INVALID_ARGUMENT for output_size not of 3 entries
 * or with a negative one; TJ_ERR_SHAPE for self of rank other than 4 or 5
 * or with a size 0 after its first dim (the message gives self's sizes);
 * TJ_ERR_DTYPE for int64 or bool self; TJ_ERR_OVERFLOW when a size times
 * (its output size + 1) exceeds int64. */
tj_tensor *tj__adaptive_avg_pool3d(tj_tensor *self, const int64_t *output_size);
/** aten::upsample_nearest2d.vec (what torch.nn.functional.interpolate
 * records for mode="nearest"): input [N, C, H, W] (float32 / float64, any
 * strides, C, H, W >= 1, N may be 0) resampled to [N, C, OH, OW]: output
 * (y, x) is input (min(floor(y s_h), H - 1), min(floor(x s_w), W - 1)), s
 * = 1 / the scale factor when one is given, else H / OH (W / OW), y s
 * computed in the dtype (float64: rounded to float before the floor), as
 * ATen 1.13's generic kernel. An input that is channels-last contiguous in
 * ATen's sense (which includes a contiguous one with C = 1) takes ATen's
 * channels-last kernel instead (nearest_idx, s in float): row y is y itself
 * when OH = H and y / 2 when OH = 2 H, whatever the scale factor (likewise
 * columns). The two differ only for a scale factor giving OH = H or 2 H
 * without being 1 or 2 (F.interpolate(x, scale_factor=2.1)); the backward
 * always maps as nearest_idx, as ATen's. Exactly one of output_size ([OH, OW]) and
 * scale_factors ([f_h, f_w]; OH = floor(H f_h)) is given, the other NULL.
 * Returns a new contiguous tensor of input's dtype. Errors:
 * TJ_ERR_INVALID_ARGUMENT for both or neither of output_size and
 * scale_factors, or a scale factor giving no int64 size (nan, inf);
 * TJ_ERR_SHAPE for input of rank other than 4, C 0, or an input or output
 * size below 1 (the message gives them); TJ_ERR_DTYPE for int64 / bool
 * input; TJ_ERR_OVERFLOW for an output of more than 2^63 elements. */
tj_tensor *tj_upsample_nearest2d_vec(tj_tensor *input, const int64_t *output_size, const double *scale_factors);
/** aten::upsample_bilinear2d.vec (torch.nn.functional.interpolate,
 * mode="bilinear"): as tj_upsample_nearest2d_vec, each output the
 * bilinear interpolation of the 2 x 2 input elements around its source
 * position, ATen 1.13's: align_corners true maps the corners onto each
 * other (source y (H - 1) / (OH - 1) * y), false the pixel areas (source
 * (y + 0.5) s - 0.5, clamped at 0, s as for nearest); weights in the
 * input's precision. Same arguments, result and errors as
 * tj_upsample_nearest2d_vec. */
tj_tensor *tj_upsample_bilinear2d_vec(tj_tensor *input, const int64_t *output_size, bool align_corners,
                                      const double *scale_factors);
/** aten::upsample_bicubic2d.vec (torch.nn.functional.interpolate,
 * mode="bicubic"): as tj_upsample_bilinear2d_vec, each output the bicubic
 * interpolation of the 4 x 4 input elements around its source position
 * (Keys' cubic convolution with A = -0.75, ATen 1.13's): the source y is
 * (H - 1) / (OH - 1) * y with align_corners, else (y + 0.5) s - 0.5 (not
 * clamped: it may be negative); rows floor(y) - 1 .. floor(y) + 2 are read
 * clamped to [0, H - 1] (likewise columns). Positions and weights in the
 * input's precision; the 4 column sums per row, then the row sum, added in
 * tap order. Same arguments, result and errors as tj_upsample_nearest2d_vec. */
tj_tensor *tj_upsample_bicubic2d_vec(tj_tensor *input, const int64_t *output_size, bool align_corners,
                                     const double *scale_factors);
/** aten::upsample_nearest1d.vec and aten::upsample_nearest3d.vec
 * (torch.nn.functional.interpolate, mode="nearest", of a 3-d [N, C, W] or
 * 5-d [N, C, D, H, W] input): as tj_upsample_nearest2d_vec over 1 or 3
 * spatial dims, output_size and scale_factors of 1 or 3 entries. Each dim
 * maps as the 2-d operator's; 1-d always as ATen's generic kernel (it has no
 * channels-last one), 3-d as its channels-last kernel for an input
 * contiguous in ATen's ChannelsLast3d sense. Errors as
 * tj_upsample_nearest2d_vec's, the rank 3 or 5 (the message gives it). */
tj_tensor *tj_upsample_nearest1d_vec(tj_tensor *input, const int64_t *output_size, const double *scale_factors);
tj_tensor *tj_upsample_nearest3d_vec(tj_tensor *input, const int64_t *output_size, const double *scale_factors);
/** aten::upsample_linear1d.vec and aten::upsample_trilinear3d.vec
 * (torch.nn.functional.interpolate, mode="linear" / "trilinear"): as
 * tj_upsample_bilinear2d_vec over 1 or 3 spatial dims, each dim's indices
 * and weights as there; trilinear blends the bilinear results of the two
 * source planes. Arguments and errors as tj_upsample_nearest1d_vec /
 * tj_upsample_nearest3d_vec. */
tj_tensor *tj_upsample_linear1d_vec(tj_tensor *input, const int64_t *output_size, bool align_corners,
                                    const double *scale_factors);
tj_tensor *tj_upsample_trilinear3d_vec(tj_tensor *input, const int64_t *output_size, bool align_corners,
                                       const double *scale_factors);
/** aten::pixel_shuffle (composite: view, permute and a copy): self [*, C r²,
 * H, W] (any dtype, strides, 3 to 6 dims) rearranged to [*, C, H r, W r],
 * output (c, h r + i, w r + j) = self (c r² + i r + j, h, w). Returns a
 * new contiguous tensor. Errors: TJ_ERR_SHAPE for fewer than 3 dims or
 * channels not divisible by r² (the message gives self's sizes);
 * TJ_ERR_INVALID_ARGUMENT for upscale_factor <= 0; TJ_ERR_UNSUPPORTED for
 * more than 6 dims; TJ_ERR_OVERFLOW for sizes times r beyond int64. */
tj_tensor *tj_pixel_shuffle(tj_tensor *self, int64_t upscale_factor);
/** aten::pixel_unshuffle, the inverse of tj_pixel_shuffle: self [*, C, H r,
 * W r] to [*, C r², H, W]. Errors as tj_pixel_shuffle's, TJ_ERR_SHAPE for
 * H or W not divisible by downscale_factor. */
tj_tensor *tj_pixel_unshuffle(tj_tensor *self, int64_t downscale_factor);
/** aten::im2col (F.unfold): the sliding blocks of self [N, C, H, W] (N may
 * be 0) or unbatched [C, H, W] (C, H, W > 0), each a column: result
 * [N, C kh kw, L] or [C kh kw, L], row (c kh + i) kw + j holding the element
 * under tap (i, j) of block l = bh bw_count + bw (0 in the padding), L =
 * oh ow blocks with o = floor((size + 2 pad - (dilation (k - 1) + 1)) /
 * stride) + 1 per dim. kernel_size, dilation, padding, stride: 2 values
 * each (height, width). self float32 or float64, any strides; the result
 * is new, contiguous, of self's dtype, owned by the caller. Its gradient is
 * tj_col2im. Errors (naming aten::im2col and the values, as PyTorch 1.13):
 * TJ_ERR_INVALID_ARGUMENT for kernel_size, dilation or stride < 1 or a
 * negative padding; TJ_ERR_SHAPE for a rank other than 3 / 4, a zero
 * C / H / W, or no block fitting (o < 1); TJ_ERR_DTYPE for int64 / bool. */
tj_tensor *tj_im2col(tj_tensor *self, const int64_t *kernel_size, const int64_t *dilation, const int64_t *padding,
                     const int64_t *stride);
/** aten::col2im (F.fold), the adjoint of tj_im2col: self [N, C kh kw, L]
 * (N may be 0) or unbatched [C kh kw, L] holds columns laid out as
 * tj_im2col writes them for an image of output_size (height, width); each
 * entry is added into the image element it would have been read from
 * (entries in the padding are dropped), in order channel, tap, block.
 * Result [N, C, H, W] or [C, H, W], new, contiguous, self's dtype (float32
 * or float64), owned by the caller. Its gradient is tj_im2col. Errors
 * (naming aten::col2im): TJ_ERR_INVALID_ARGUMENT as tj_im2col's;
 * TJ_ERR_SHAPE for a rank other than 2 / 3, a zero row or column count,
 * rows not divisible by kh kw, or L other than the number of blocks over
 * output_size (which must be at least one each way); TJ_ERR_DTYPE for
 * int64 / bool. */
tj_tensor *tj_col2im(tj_tensor *self, const int64_t *output_size, const int64_t *kernel_size, const int64_t *dilation,
                     const int64_t *padding, const int64_t *stride);
/** aten::_cdist_forward (torch.cdist): the p-norm distances between the
 * rows of x1 [*B1, r1, c] and x2 [*B2, r2, c], [*B, r1, r2] with B the
 * broadcast of the batch shapes. p >= 0: 0 counts differing columns, 1 sums
 * |a - b|, 2 is Euclidean, INFINITY the largest |a - b|, other p
 * (sum |a - b|^p)^(1/p); each distance accumulated over the columns in
 * order in the input dtype, as ATen's CPU kernel. compute_mode (ignored
 * unless p is 2): has_compute_mode false or 0 takes ATen's matrix-product
 * formula sqrt(max(|a|^2 + |b|^2 - 2 a.b, 0)) when r1 or r2 exceeds 25,
 * 1 always, 2 never (the differences), as torch does: the product formula
 * loses accuracy for nearby rows, as torch's. x1 and x2 float32 or float64,
 * one dtype, any strides; c = 0 gives zeros. The result is new, contiguous,
 * x1's dtype, owned by the caller; gradients by tj__cdist_backward.
 * Errors (naming aten::_cdist_forward): TJ_ERR_SHAPE for rank < 2, column
 * counts that differ or batch shapes that do not broadcast; TJ_ERR_DTYPE
 * for a non-float or mixed dtypes; TJ_ERR_INVALID_ARGUMENT for p < 0 (or
 * nan) or compute_mode outside 0..2. */
tj_tensor *tj__cdist_forward(tj_tensor *x1, tj_tensor *x2, double p, bool has_compute_mode, int64_t compute_mode);
/** aten::_euclidean_dist, what torch.cdist records for p = 2 when r1 or r2
 * exceeds 25 (compute_mode None or 1): tj__cdist_forward(x1, x2, 2, mode 1),
 * ATen's matrix-product formula sqrt(max(|a|^2 + |b|^2 - 2 a.b, 0)) (its
 * decomposition is torch._decomp's: pow, sum, cat, matmul, clamp_min,
 * sqrt). Shapes, dtypes, ownership and errors as tj__cdist_forward's
 * (naming aten::_euclidean_dist); the gradient is ATen's
 * _euclidean_dist_backward (0 where a distance is 0). */
tj_tensor *tj__euclidean_dist(tj_tensor *x1, tj_tensor *x2);
/** aten::_cdist_backward: the gradient with respect to x1 of
 * tj__cdist_forward(x1, x2, p) = cdist, given its gradient grad (both
 * [*B, r1, r2], x1's dtype): [*B, r1, c] (the broadcast batch: autograd
 * sums it to x1's shape), computed as ATen's CPU kernel from the
 * differences, grad and cdist (0 where a distance is 0, for p < 1 also
 * where a difference is 0; p 0 gives zeros). x2's gradient is this with x1
 * and x2 swapped and grad, cdist transposed. New, contiguous, owned by the
 * caller; has no gradient of its own (as PyTorch's). Errors (naming
 * aten::_cdist_backward): those of tj__cdist_forward for x1, x2, p, and
 * TJ_ERR_SHAPE / TJ_ERR_DTYPE for a grad or cdist of another shape or
 * dtype than the distances'. */
tj_tensor *tj__cdist_backward(tj_tensor *grad, tj_tensor *x1, tj_tensor *x2, double p, tj_tensor *cdist);
/** aten::repeat_interleave.Tensor: int64 [output size], index i written
 * repeats[i] times in order (torch.repeat_interleave(repeats)). repeats:
 * int64, 1-D, values >= 0. The output size is the sum of repeats, read from
 * its values; has_output_size gives it instead, which a fake-mode trace
 * (tj_make_fx) and a compiled graph need: without it a fake repeats gives
 * TJ_ERR_UNSUPPORTED (data-dependent output shape, PyTorch's
 * DynamicOutputShapeException). New tensor owned by the caller; no
 * gradient. Errors (naming aten::repeat_interleave.Tensor): TJ_ERR_SHAPE
 * for a repeats of rank other than 1, TJ_ERR_DTYPE for a non-int64 one,
 * TJ_ERR_INVALID_ARGUMENT for a negative value, a negative output_size or
 * one other than the sum (PyTorch leaves such an output partly unwritten),
 * TJ_ERR_OVERFLOW for a sum past INT64_MAX, TJ_ERR_UNSUPPORTED as above. */
tj_tensor *tj_repeat_interleave(tj_tensor *repeats, bool has_output_size, int64_t output_size);
/** aten::repeat_interleave.self_int (implicit, as ATen 1.13): each slice of
 * self along dim (has_dim false: of self flattened, dim 0) repeated
 * `repeats` times in place, i.e. index_select(self, dim,
 * repeat_interleave(full([size of dim], repeats))); any dtype, gradient
 * through index_select. The output size is static (repeats times the size),
 * passed on as output_size, so fake-mode traces hold it (PyTorch's fake mode
 * refuses it). New contiguous tensor owned by the caller. Errors (naming
 * aten::repeat_interleave.self_int): TJ_ERR_INVALID_ARGUMENT for repeats < 0
 * or an output_size other than repeats times the size, TJ_ERR_INDEX for
 * dim out of range (any dim of a 0-dim self, as PyTorch), TJ_ERR_OVERFLOW
 * when the size overflows. */
tj_tensor *tj_repeat_interleave_self_int(tj_tensor *self, int64_t repeats, bool has_dim, int64_t dim,
                                         bool has_output_size, int64_t output_size);
/** aten::repeat_interleave.self_Tensor (implicit, as ATen 1.13): as
 * tj_repeat_interleave_self_int with a repeat count per slice: repeats is
 * int64, 0-dim or [1] (one count for every slice) or [size of dim]; the
 * result is index_select(self, dim, tj_repeat_interleave(repeats,
 * output_size)), data-dependent without output_size (see
 * tj_repeat_interleave). Errors: TJ_ERR_SHAPE for a repeats of rank > 1
 * ("repeats must be 0-dim or 1-dim tensor") or of another length than the
 * dim ("repeats must have the same size as input along dim"), and those of
 * tj_repeat_interleave and tj_index_select. */
tj_tensor *tj_repeat_interleave_self_tensor(tj_tensor *self, tj_tensor *repeats, bool has_dim, int64_t dim,
                                            bool has_output_size, int64_t output_size);
/** aten::embedding: weight [num, dim], int64 indices of any shape; an index
 * out of range gives TJ_ERR_INDEX. */
tj_tensor *tj_embedding(tj_tensor *weight, tj_tensor *indices, int64_t padding_idx);
/** aten::native_dropout: (out, bool mask); train false: out = input, mask all
 * true; scale 1/(1-p). */
tj_status tj_native_dropout(tj_tensor *input, double p, bool train, tj_tensor **out, tj_tensor **mask);
tj_tensor *tj_dropout(tj_tensor *input, double p, bool train); /**< aten::dropout (implicit) */
/** aten::nll_loss_forward: reduction 0 none, 1 mean, 2 sum; targets equal to
 * ignore_index are skipped; others out of range give TJ_ERR_INDEX. A weight
 * that requires grad in grad mode gives TJ_ERR_UNSUPPORTED (it has no
 * derivative; PyTorch refuses it too). */
tj_status tj_nll_loss_forward(tj_tensor *self, tj_tensor *target, tj_tensor *weight, int64_t reduction,
                              int64_t ignore_index, tj_tensor **output, tj_tensor **total_weight);
tj_tensor *tj_nll_loss(tj_tensor *self, tj_tensor *target, tj_tensor *weight, int64_t reduction,
                       int64_t ignore_index); /**< aten::nll_loss (implicit) */
tj_tensor *tj_cross_entropy(tj_tensor *self, tj_tensor *target, tj_tensor *weight, int64_t reduction,
                            int64_t ignore_index, double label_smoothing); /**< aten::cross_entropy_loss (implicit) */
/** aten::mse_loss: (self - target)^2 as ATen's kernel (d * d), in the dtype
 * of result_type(self, target), which must be float32 / float64; self and
 * target broadcast. reduction 0 (none): a new tensor of the broadcast shape;
 * 1 (mean, nan when empty) or 2 (sum): a new 0-dim tensor, reduced as
 * tj_mean / tj_sum. Recorded by make_fx as aten.mse_loss (its decomposition
 * is torch._decomp's: sub, pow, mean / sum). Errors: TJ_ERR_INVALID_ARGUMENT for a
 * reduction outside 0..2, TJ_ERR_DTYPE for an integer or bool result type
 * (ATen: "mse_cpu" not implemented for 'Long'), TJ_ERR_SHAPE naming both
 * shapes when self and target do not broadcast. */
tj_tensor *tj_mse_loss(tj_tensor *self, tj_tensor *target, int64_t reduction);
/** aten::binary_cross_entropy: -w * (t * log(x) + (1 - t) * log(1 - x)) with
 * each log clamped at -100, as PyTorch 1.13 (x = self, t = target, w =
 * weight). self float32 / float64 of any shape, every element in [0, 1];
 * target (not range-checked, as PyTorch) and weight (NULL: 1) of self's dtype,
 * broadcasting to self's shape. reduction 0 (none): a new tensor of self's
 * shape; 1 (mean, nan for an empty self) or 2 (sum): a new 0-dim tensor; sums
 * in float64. Errors: TJ_ERR_INVALID_ARGUMENT for an element of self outside
 * [0, 1] or nan (the message gives the value) or another reduction;
 * TJ_ERR_DTYPE for a non-float self or a target / weight of another dtype;
 * TJ_ERR_SHAPE when target or weight does not broadcast to self;
 * TJ_ERR_UNSUPPORTED for a weight that requires grad in grad mode (it has no
 * derivative; PyTorch refuses it too). */
tj_tensor *tj_binary_cross_entropy(tj_tensor *self, tj_tensor *target, tj_tensor *weight, int64_t reduction);
/** aten::binary_cross_entropy_with_logits: binary cross entropy of
 * sigmoid(self) against target, computed stably from the logits as PyTorch
 * 1.13: m = max(-x, 0), loss = (1 - t) x + m + log(exp(-m) + exp(-x - m)),
 * or with pos_weight p (the weight of the positive class) (1 - t) x +
 * ((p - 1) t + 1) (log(exp(-m) + exp(-x - m)) + m); times weight. self
 * float32 / float64 of any shape; target of self's dtype and shape; weight
 * and pos_weight (NULL: none) of self's dtype, broadcasting to self's shape.
 * reduction 0 (none): a new tensor of self's shape; 1 (mean, nan for an
 * empty self) or 2 (sum): a new 0-dim tensor, summed in float64.
 * Differentiable in self and target (PyTorch's formulas, so a traced
 * gradient reads sigmoid / sub / mul as torch's does); weight and pos_weight
 * are not. Errors: TJ_ERR_DTYPE for a non-float self or another operand of
 * another dtype; TJ_ERR_SHAPE for a target of another shape or a weight /
 * pos_weight that does not broadcast (naming the shapes);
 * TJ_ERR_INVALID_ARGUMENT for a reduction outside 0..2; TJ_ERR_UNSUPPORTED
 * for a weight or pos_weight that requires grad in grad mode. */
tj_tensor *tj_binary_cross_entropy_with_logits(tj_tensor *self, tj_tensor *target, tj_tensor *weight,
                                               tj_tensor *pos_weight, int64_t reduction);
/** aten::l1_loss (implicit, as ATen 1.13: abs(self - target), then reduced):
 * self and target broadcast and promote as tj_sub's operands; reduction 0
 * (none) returns the broadcast shape, 1 (mean, nan when empty; float results
 * only) and 2 (sum) a new 0-dim tensor. Errors (messages start with
 * aten::l1_loss): those of sub, abs, mean or sum, which they name
 * (TJ_ERR_SHAPE when the operands do not broadcast, TJ_ERR_DTYPE for bool
 * operands or the mean of int64 ones), TJ_ERR_INVALID_ARGUMENT for a
 * reduction outside 0..2 (PyTorch returns the unreduced loss for one). */
tj_tensor *tj_l1_loss(tj_tensor *self, tj_tensor *target, int64_t reduction);
/** aten::smooth_l1_loss: with z = |self - target|, z < beta ? 0.5 * z^2 /
 * beta : z - 0.5 * beta (beta = 0 gives the L1 loss), in the dtype of
 * result_type(self, target), which must be float32 / float64 (an int64
 * target next to a float self is fine); self and target broadcast.
 * reduction 0 (none): a new tensor of the broadcast shape; 1 (mean, nan when
 * empty) or 2 (sum): a new 0-dim tensor, reduced as tj_mean / tj_sum. nan
 * stays nan. Errors: TJ_ERR_INVALID_ARGUMENT for beta < 0 or nan (the
 * message gives beta) or a reduction outside 0..2, TJ_ERR_DTYPE for an
 * integer or bool result type, TJ_ERR_SHAPE naming both shapes when self and
 * target do not broadcast. */
tj_tensor *tj_smooth_l1_loss(tj_tensor *self, tj_tensor *target, int64_t reduction, double beta);
/** aten::huber_loss: with z = |self - target|, z < delta ? 0.5 * z^2 : delta
 * * (z - 0.5 * delta), computed in result_type(self, target) and returned in
 * self's dtype (ATen writes it into a tensor like self: a float64 target
 * gives a float32 loss for a float32 self). Shapes, reductions and errors
 * as tj_smooth_l1_loss, except that delta must be > 0 and that an int64 self
 * is an error (TJ_ERR_DTYPE) whatever the target. */
tj_tensor *tj_huber_loss(tj_tensor *self, tj_tensor *target, int64_t reduction, double delta);
/** aten::scaled_dot_product_attention: softmax(q k^T / sqrt(E) + mask) v over
 * [..., L, E] x [..., S, E] x [..., S, Ev]. attn_mask NULL, bool (true = keep)
 * or float (added). Unlike softmax, a fully masked row gives zeros, not nan. */
tj_tensor *tj_scaled_dot_product_attention(tj_tensor *query, tj_tensor *key, tj_tensor *value,
                                           tj_tensor *attn_mask, double dropout_p, bool is_causal);
/** aten::_native_multi_head_attention (PyTorch 1.13, what an eval
 * nn.MultiheadAttention(batch_first=True) calls under no_grad): query, key,
 * value [B, T, E] (float32 / float64, one shape and dtype) are projected by
 * the rows [0, E), [E, 2E), [2E, 3E) of qkv_weight [3E, E] and qkv_bias [3E],
 * split into num_head heads of E / num_head, attended (softmax(q k^T /
 * sqrt(E / num_head)) v per head), merged and projected by proj_weight [E, E]
 * and proj_bias [E]. mask (NULL: none; bool, or of query's dtype read as
 * nonzero) marks what to ignore: [B, T] (padding of the keys) or [B,
 * num_head, T, T]; it needs has_mask_type with mask_type 1 (key padding) or
 * 2 (full), which ATen's CPU path treats alike (the shape decides); 0
 * (src_mask) is refused, as on ATen's CPU path. Masked scores are -inf: a
 * query whose keys are all masked gets nan, as in ATen. *out: a new [B, T,
 * E] tensor; *weights: the softmax, [B, T, T] averaged over the heads when
 * average_attn_weights, else [B, num_head, T, T]; NULL when need_weights is
 * false (ATen returns an undefined tensor). Results go to the non-NULL
 * pointers (owned as any result). Errors (naming the operator and shapes):
 * TJ_ERR_DTYPE for integer inputs or operands of another dtype;
 * TJ_ERR_SHAPE for inputs that are not 3-D or differ, embed_dim other than
 * E, weights or a mask of other shapes; TJ_ERR_INVALID_ARGUMENT when E is
 * not divisible by num_head (or num_head <= 0), for a mask without a
 * mask_type or a mask_type outside 0..2; TJ_ERR_UNSUPPORTED for mask_type 0.
 * Decomposes into addmm, view, permute, bmm, masked_fill, _softmax. */
tj_status tj__native_multi_head_attention(tj_tensor *query, tj_tensor *key, tj_tensor *value, int64_t embed_dim,
                                          int64_t num_head, tj_tensor *qkv_weight, tj_tensor *qkv_bias,
                                          tj_tensor *proj_weight, tj_tensor *proj_bias, tj_tensor *mask,
                                          bool need_weights, bool average_attn_weights, bool has_mask_type,
                                          int64_t mask_type, tj_tensor **out, tj_tensor **weights);
/** aten::_transformer_encoder_layer_fwd (PyTorch 1.13, what an eval
 * nn.TransformerEncoderLayer(batch_first=True) calls under no_grad): with
 * attn(x) = tj__native_multi_head_attention(x, x, x, embed_dim, num_heads,
 * qkv_weight, qkv_bias, proj_weight, proj_bias, mask, need_weights false,
 * mask_type) and ffn(x) = linear(act(linear(x, ffn_weight_1 [F, E],
 * ffn_bias_1 [F])), ffn_weight_2 [E, F], ffn_bias_2 [E]), act GELU (the erf
 * form) when use_gelu, else ReLU; norm1 / norm2 layer norms over E with
 * norm_weight_1 / norm_bias_1, norm_weight_2 / norm_bias_2 ([E]) and eps:
 * norm_first: x = src + attn(norm1(src)); out = x + ffn(norm2(x)); else x =
 * norm1(src + attn(src)); out = norm2(x + ffn(x)). src [B, T, E] float32 /
 * float64, every weight of its dtype. Returns a new [B, T, E] tensor.
 * Errors: those of tj__native_multi_head_attention (src for query), and
 * TJ_ERR_SHAPE for norm or ffn weights of other shapes,
 * TJ_ERR_INVALID_ARGUMENT for eps < 0 or nan. Decomposes as
 * tj__native_multi_head_attention, with native_layer_norm, gelu / relu and
 * add. */
tj_tensor *tj__transformer_encoder_layer_fwd(tj_tensor *src, int64_t embed_dim, int64_t num_heads,
                                             tj_tensor *qkv_weight, tj_tensor *qkv_bias, tj_tensor *proj_weight,
                                             tj_tensor *proj_bias, bool use_gelu, bool norm_first, double eps,
                                             tj_tensor *norm_weight_1, tj_tensor *norm_bias_1,
                                             tj_tensor *norm_weight_2, tj_tensor *norm_bias_2,
                                             tj_tensor *ffn_weight_1, tj_tensor *ffn_bias_1, tj_tensor *ffn_weight_2,
                                             tj_tensor *ffn_bias_2, tj_tensor *mask, bool has_mask_type,
                                             int64_t mask_type);

/* ---- Whole-tensor comparison (a bool answer: not dispatched). ---- */
/** aten::allclose: writes to *out whether every element pair of self and
 * other (broadcast together) satisfies aten::isclose:
 *     self == other  or  (equal_nan and both nan)
 *     or  isfinite(|self - other|) and |self - other| <= atol + |rtol * other|
 * (not symmetric: the relative term uses other). PyTorch's defaults are rtol
 * 1e-5, atol 1e-8, equal_nan false. inf is close only to the same inf; with
 * rtol = atol = 0 only equal values are close. As PyTorch computes it: in
 * float64 for float64 tensors, in float32 for float32, int64 and bool ones
 * (int64 values rounded to float32 before subtracting, rtol and atol rounded
 * to float32); int64 and bool values that are equal are always close, and
 * equal_nan matters only for floats. Empty broadcast shapes give true. Reads
 * the data directly: not seen by the mode stack or autograd, so a traced
 * graph does not record it (there is no tensor result to record). self and
 * other may have any strides. *out is written only on success. Errors:
 * TJ_ERR_DTYPE when the dtypes differ (PyTorch: "Float did not match
 * Double"; no promotion), TJ_ERR_INVALID_ARGUMENT for rtol or atol negative
 * or nan, a NULL argument or a fake tensor, TJ_ERR_SHAPE naming
 * aten::allclose and both shapes when they do not broadcast. */
tj_status tj_allclose(const tj_tensor *self, const tj_tensor *other, double rtol, double atol, bool equal_nan,
                      bool *out);

/* ---- Backward operators (used by autograd; same conventions). Each is the
 * ATen operator PyTorch 1.13's derivatives.yaml calls for the forward
 * operator named; the derivative formulas in runtime/autograd_formulas.c
 * call them the same way. Results are new contiguous tensors. ---- */
/** aten::threshold_backward (ReLU's backward: relu's formula calls it with
 * threshold 0 and self = the ReLU's result): grad_output where self >
 * threshold, 0 elsewhere; a nan self lets the gradient through.
 * grad_output and self broadcast and promote as a binary operator's (any
 * dtype but bool); the result has the broadcast shape and the promoted
 * dtype. Errors: TJ_ERR_SHAPE when they do not broadcast, TJ_ERR_DTYPE for
 * a bool result, TJ_ERR_INVALID_ARGUMENT for a float threshold that
 * overflows the result dtype (beyond FLT_MAX for float32, outside int64's
 * range for int64). */
tj_tensor *tj_threshold_backward(tj_tensor *grad_output, tj_tensor *self, tj_value threshold);
/** aten::gelu_backward: grad_output * GELU'(self), with approximate "none"
 * (Phi(x) + x * phi(x)) or "tanh" (the derivative of tj_gelu's tanh form).
 * self is the GELU's input. Operands broadcast and promote as
 * tj_threshold_backward's; the promoted dtype must be float32 / float64. Errors: TJ_ERR_INVALID_ARGUMENT
 * for another approximate string, TJ_ERR_DTYPE for an integer or bool result,
 * TJ_ERR_SHAPE when the operands do not broadcast. */
tj_tensor *tj_gelu_backward(tj_tensor *grad_output, tj_tensor *self, const char *approximate);
/** aten::sigmoid_backward: grad_output * (1 - output) * output, where output
 * is sigmoid's result (not its input). Broadcasting, promotion and errors as
 * tj_gelu_backward (float results only). */
tj_tensor *tj_sigmoid_backward(tj_tensor *grad_output, tj_tensor *output);
/** aten::tanh_backward: grad_output * (1 - output^2), output being tanh's
 * result. Broadcasting, promotion and errors as tj_gelu_backward. */
tj_tensor *tj_tanh_backward(tj_tensor *grad_output, tj_tensor *output);
/** aten::leaky_relu_backward: self > 0 ? grad_output : grad_output *
 * negative_slope; self is leaky_relu's input, or its result when
 * self_is_result (then negative_slope must be >= 0: TJ_ERR_INVALID_ARGUMENT
 * otherwise, as PyTorch). Broadcasting, promotion and errors as
 * tj_gelu_backward (float results only). */
tj_tensor *tj_leaky_relu_backward(tj_tensor *grad_output, tj_tensor *self, tj_value negative_slope,
                                  bool self_is_result);
/** aten::softplus_backward: grad_output where self * beta > threshold, else
 * grad_output * z / (z + 1), z = exp(self * beta); self is softplus's input.
 * Broadcasting, promotion and errors as tj_gelu_backward. */
tj_tensor *tj_softplus_backward(tj_tensor *grad_output, tj_tensor *self, tj_value beta, tj_value threshold);
/** aten::log_sigmoid_backward: grad_output * (max_deriv - sign * buffer /
 * (1 + buffer)), max_deriv and sign 1 and 1 where self < 0, else 0 and -1;
 * buffer is log_sigmoid_forward's (exp(-|self|)). The three broadcast and
 * promote to a float dtype (else TJ_ERR_DTYPE); TJ_ERR_SHAPE when they do
 * not broadcast. Not differentiable itself. */
tj_tensor *tj_log_sigmoid_backward(tj_tensor *grad_output, tj_tensor *self, tj_tensor *buffer);
/** aten::glu_backward: the gradient of tj_glu(self, dim) for grad_output
 * of its result's shape and self's dtype: sigmoid(b) * grad for the first
 * half, (1 - sigmoid(b)) sigmoid(b) a grad for the second, a new tensor of
 * self's shape. Errors as tj_glu, plus TJ_ERR_SHAPE / TJ_ERR_DTYPE for a
 * grad_output of another shape or dtype. Not differentiable itself. */
tj_tensor *tj_glu_backward(tj_tensor *grad_output, tj_tensor *self, int64_t dim);
/** aten::elu_backward: with c = alpha * scale (rounded in the result
 * dtype), self_or_result > 0 ? grad_output * scale : grad_output *
 * input_scale * c * exp(self_or_result * input_scale), self_or_result being
 * elu's input; when is_result it is elu's result and the negative side is
 * grad_output * input_scale * (self_or_result + c) (alpha must then be >= 0:
 * TJ_ERR_INVALID_ARGUMENT otherwise, as PyTorch). A nan self_or_result takes
 * the negative side (PyTorch's vectorised kernel). Broadcasting, promotion
 * and errors as tj_gelu_backward (float results only). */
tj_tensor *tj_elu_backward(tj_tensor *grad_output, tj_value alpha, tj_value scale, tj_value input_scale,
                           bool is_result, tj_tensor *self_or_result);
/** aten::hardtanh_backward: self <= min_val || self >= max_val ? 0 :
 * grad_output (the gradient is 0 at both bounds; a nan self, or a nan
 * bound's side, lets grad_output through: ATen 1.13's scalar loop and
 * torch._decomp; 1.13's vectorised loop gives 0 there). self is hardtanh's
 * input. Broadcasting, promotion and errors as tj_gelu_backward (float
 * results only), plus TJ_ERR_INVALID_ARGUMENT for a bound that overflows
 * the result dtype. */
tj_tensor *tj_hardtanh_backward(tj_tensor *grad_output, tj_tensor *self, tj_value min_val, tj_value max_val);
/** aten::hardsigmoid_backward: -3 < self < 3 ? grad_output * (1/6 rounded
 * to float32, as ATen's constant, float64 too) : 0 (0 at +-3 and for nan).
 * Broadcasting, promotion and errors as tj_gelu_backward. */
tj_tensor *tj_hardsigmoid_backward(tj_tensor *grad_output, tj_tensor *self);
/** aten::hardswish_backward: self < -3 ? 0 : self <= 3 ? grad_output *
 * (self / 3 + 0.5) : grad_output, as ATen 1.13's scalar loop and
 * torch._decomp: -0.5 * grad at -3, 1.5 * grad at 3, grad_output for a nan
 * self. (1.13's vectorised loop, which PyTorch runs on full SIMD blocks of
 * large contiguous tensors, gives grad at 3 and nan for nan; later PyTorch
 * makes it follow the scalar loop at nan.) Broadcasting, promotion and errors
 * as tj_gelu_backward. */
tj_tensor *tj_hardswish_backward(tj_tensor *grad_output, tj_tensor *self);
/** aten::_softmax_backward_data: output * (grad_output - sum(grad_output *
 * output, dim, keepdim)), output being _softmax's result along dim.
 * grad_output and output: one float32 / float64 dtype, one shape (no
 * broadcasting); the result has that shape and dtype. input_dtype is the
 * forward input's dtype; as in ATen on the CPU it does not change the result
 * (it matters for half inputs only). Errors: TJ_ERR_DTYPE for an integer or
 * bool grad_output or differing dtypes, TJ_ERR_SHAPE for differing shapes,
 * TJ_ERR_INDEX for dim out of range (negative counts from the end). */
tj_tensor *tj__softmax_backward_data(tj_tensor *grad_output, tj_tensor *output, int64_t dim, tj_dtype input_dtype);
/** aten::_log_softmax_backward_data: grad_output - exp(output) *
 * sum(grad_output, dim, keepdim), output being _log_softmax's result.
 * Arguments, result and errors as tj__softmax_backward_data. */
tj_tensor *tj__log_softmax_backward_data(tj_tensor *grad_output, tj_tensor *output, int64_t dim,
                                         tj_dtype input_dtype);
/** aten::native_layer_norm_backward: the gradients of tj_native_layer_norm
 * with respect to input, weight and bias. input [..., *normalized_shape]
 * (float32 / float64, n >= 1 trailing dims equal to normalized_shape);
 * grad_out of input's shape; mean and rstd as tj_native_layer_norm returned
 * them (one value per row: any shape of that element count); weight and bias
 * of shape normalized_shape, or NULL (a NULL weight counts as ones for
 * grad_input). Every tensor has input's dtype. output_mask[i] says whether
 * result i is computed: grad_input (input's shape), grad_weight
 * (normalized_shape: sum over rows of grad_out * normalised input), grad_bias
 * (normalized_shape: sum over rows of grad_out); a result not asked for is
 * written as NULL. Errors: TJ_ERR_DTYPE for a non-float input or a tensor of
 * another dtype, TJ_ERR_SHAPE for normalized_shape not matching input's
 * trailing dims, grad_out of another shape, weight / bias of another shape
 * or mean / rstd of the wrong element count, TJ_ERR_INVALID_ARGUMENT when
 * output_mask asks for grad_weight without weight or grad_bias without bias. */
tj_status tj_native_layer_norm_backward(tj_tensor *grad_out, tj_tensor *input, const int64_t *normalized_shape,
                                        int n, tj_tensor *mean, tj_tensor *rstd, tj_tensor *weight,
                                        tj_tensor *bias, const bool output_mask[3], tj_tensor **grad_input,
                                        tj_tensor **grad_weight, tj_tensor **grad_bias);
/** aten::native_batch_norm_backward: the gradients of tj_native_batch_norm
 * with respect to input, weight and bias. grad_out and input [N, C, *]
 * (float32 / float64, the same shape); weight, running_mean, running_var,
 * save_mean, save_invstd: [C] of input's dtype or NULL. train true takes
 * save_mean / save_invstd (required in training) as the forward returned
 * them (empty [0] ones from an evaluation forward, which torch's autograd
 * passes back, are taken and not read):
 * grad_input = (g - sum(g) / M - (x - mean) invstd^2 sum(g (x - mean)) / M)
 * invstd weight over each channel's M elements; train false takes the
 * running statistics (required) with eps: grad_input = g invstd weight.
 * grad_weight = sum(g (x - mean)) invstd, grad_bias = sum(g), [C]. A NULL
 * weight counts as ones (grad_weight may still be asked for, as ATen).
 * output_mask[i] says whether result i is computed; one not asked for is
 * written as NULL. Errors: TJ_ERR_DTYPE, TJ_ERR_SHAPE (grad_out not of
 * input's shape, a [C] tensor of another shape), TJ_ERR_INVALID_ARGUMENT
 * (statistics missing for the mode). */
tj_status tj_native_batch_norm_backward(tj_tensor *grad_out, tj_tensor *input, tj_tensor *weight,
                                        tj_tensor *running_mean, tj_tensor *running_var, tj_tensor *save_mean,
                                        tj_tensor *save_invstd, bool train, double eps, const bool output_mask[3],
                                        tj_tensor **grad_input, tj_tensor **grad_weight, tj_tensor **grad_bias);
/** aten::native_group_norm_backward: the gradients of tj_native_group_norm
 * with respect to input, weight and bias. input as the forward's; grad_out
 * of input's dtype and element count, any shape (read as [N, C, HxW], as
 * ATen, TJ_ERR_SHAPE otherwise); mean and rstd as it returned them (N * group values of
 * input's dtype); weight [C] or NULL (ones); n, c, hxw, group as the
 * forward's. grad_input as ATen's CPU kernel: rstd w g - ds rstd^3 / M (x -
 * mean) - db rstd / M per group of M = C / group * hxw elements, with ds =
 * sum(w g (x - mean)) and db = sum(w g) over the group; grad_weight [C] =
 * sum(g (x - mean) rstd), grad_bias [C] = sum(g) over samples and trailing
 * dims. output_mask and errors as tj_native_batch_norm_backward (plus those
 * of tj_native_group_norm's arguments, TJ_ERR_SHAPE for mean / rstd of
 * another element count, and TJ_ERR_INVALID_ARGUMENT for grad_weight asked
 * for without weight, which ATen 1.13 refuses too). */
tj_status tj_native_group_norm_backward(tj_tensor *grad_out, tj_tensor *input, tj_tensor *mean, tj_tensor *rstd,
                                        tj_tensor *weight, int64_t n, int64_t c, int64_t hxw, int64_t group,
                                        const bool output_mask[3], tj_tensor **grad_input, tj_tensor **grad_weight,
                                        tj_tensor **grad_bias);
/** aten::nll_loss_backward: the gradient of tj_nll_loss_forward with respect
 * to self: a tensor of self's shape ([N, C] or [C]) and dtype, zero except
 * at each row's target class, where it is -weight[target] * g (weight NULL:
 * -g) with g = grad_output[i] for reduction 0 on [N, C] input (grad_output
 * [N]), grad_output / total_weight for reduction 1 (mean) and grad_output
 * for 2 (sum) or for 0 on [C] input (grad_output one element). Rows whose target is ignore_index
 * get no gradient. target int64 [N] (or 0-dim for [C] input); weight
 * float [C] or NULL; total_weight the one-element tensor
 * tj_nll_loss_forward returned. Errors: TJ_ERR_SHAPE for ranks or sizes
 * that do not fit (grad_output's included, total_weight of more than one
 * element), TJ_ERR_DTYPE for a non-float self, a non-int64 target or
 * grad_output / weight / total_weight of another dtype than self's,
 * TJ_ERR_INVALID_ARGUMENT for a reduction outside 0..2, TJ_ERR_INDEX for a
 * target outside [0, C) that is not ignore_index. */
tj_tensor *tj_nll_loss_backward(tj_tensor *grad_output, tj_tensor *self, tj_tensor *target, tj_tensor *weight,
                                int64_t reduction, int64_t ignore_index, tj_tensor *total_weight);
/** aten::binary_cross_entropy_backward: the gradient of tj_binary_cross_entropy
 * with respect to self: grad_output * (x - t) / max((1 - x) * x, 1e-12) * w,
 * divided by self's element count for reduction 1 (mean), as PyTorch 1.13.
 * grad_output, target and weight (NULL: 1) of self's dtype; target and
 * weight broadcast to self's shape, grad_output (0-dim for the mean and the
 * sum) to self's once both drop their size-1 dims, as ATen's kernel, which
 * squeezes them (a [2, 1] grad_output pairs with the columns of a [2, 2]
 * self); self is not range-checked. Returns a new tensor of self's shape and
 * dtype. Errors as tj_binary_cross_entropy, except the range. */
tj_tensor *tj_binary_cross_entropy_backward(tj_tensor *grad_output, tj_tensor *self, tj_tensor *target, tj_tensor *weight,
                                            int64_t reduction);
/** aten::smooth_l1_loss_backward: with x = self - target and norm = 1 /
 * self's element count for reduction 1 (mean), else 1: x <= -beta ? -norm *
 * g : x >= beta ? norm * g : norm * x * g / beta (g = grad_output; a nan x
 * gives nan; beta is not checked, as ATen). grad_output (0-dim for the mean
 * and the sum), self and target broadcast together; computed in their
 * result_type (float32 / float64) and returned in self's dtype, as a new
 * tensor of the broadcast shape. The gradient of tj_smooth_l1_loss with
 * respect to self, when self already has the loss's shape (autograd passes
 * it expanded; PyTorch 1.13 divides by the unexpanded count). Errors:
 * TJ_ERR_DTYPE for an integer or bool result type or self,
 * TJ_ERR_INVALID_ARGUMENT for a reduction outside 0..2, TJ_ERR_SHAPE when
 * the operands do not broadcast. */
tj_tensor *tj_smooth_l1_loss_backward(tj_tensor *grad_output, tj_tensor *self, tj_tensor *target, int64_t reduction,
                                      double beta);
/** aten::huber_loss_backward: with x and norm as tj_smooth_l1_loss_backward:
 * x <= -delta ? -norm * g * delta : x >= delta ? norm * g * delta : norm * x
 * * g. Arguments, result and errors as tj_smooth_l1_loss_backward, except
 * that every operand must have self's dtype (TJ_ERR_DTYPE otherwise, as
 * ATen's kernel). */
tj_tensor *tj_huber_loss_backward(tj_tensor *grad_output, tj_tensor *self, tj_tensor *target, int64_t reduction,
                                  double delta);
/** aten::mse_loss_backward: norm * (self - target) * grad_output with norm =
 * 2 / self's element count for reduction 1 (mean), else 2 (ATen's kernel).
 * Arguments, result and errors as tj_smooth_l1_loss_backward. */
tj_tensor *tj_mse_loss_backward(tj_tensor *grad_output, tj_tensor *self, tj_tensor *target, int64_t reduction);
/** aten::embedding_dense_backward: the gradient of tj_embedding with respect
 * to its weight: a [num_weights, D] tensor of grad_output's dtype (float32 /
 * float64) whose row k is the sum of the rows of grad_output ([*indices'
 * shape, D]) at the positions where indices (int64, any shape) hold k;
 * rows for padding_idx stay zero (a negative padding_idx, -1, means none).
 * scale_grad_by_freq divides each row by the number of times its index
 * occurs (padding_idx not counted). Errors: TJ_ERR_DTYPE for non-int64
 * indices or a non-float grad_output, TJ_ERR_SHAPE when grad_output does not
 * hold one D-row per index, TJ_ERR_INVALID_ARGUMENT for a negative
 * num_weights, TJ_ERR_INDEX for an index outside [0, num_weights). */
tj_tensor *tj_embedding_dense_backward(tj_tensor *grad_output, tj_tensor *indices, int64_t num_weights,
                                       int64_t padding_idx, bool scale_grad_by_freq);
/* ---- embedding bags (nn.EmbeddingBag, F.embedding_bag; PyTorch 1.13) ---- */
/** aten::_embedding_bag: per bag, the sum (mode 0), mean (1) or max (2) of
 * the rows of weight ([num, D], float32 / float64) that int64 indices [n]
 * name. Bag b holds positions [offsets[b], offsets[b + 1]) (the last bag up
 * to n); with include_last_offset the last offset only ends the last bag
 * (B = offsets - 1 bags) and positions from it on belong to no bag.
 * padding_idx (-1: none, else in [0, num)) adds nothing and is not counted.
 * per_sample_weights (NULL: none; sum only; [n], weight's dtype) multiplies
 * each row. scale_grad_by_freq only affects the gradient. Writes to the
 * non-NULL pointers new tensors owned by the caller (the others are
 * released), exactly as ATen's CPU kernel:
 * - out [B, D], weight's dtype: empty bags give zeros (max too); mean
 *   divides by the bag's count;
 * - offset2bag int64 [n], the bag of each position ((offsets <= i) - 1);
 *   [0] for float32 sum without padding_idx (ATen's fast path; the
 *   gradient rebuilds it);
 * - bag_size int64 [B], the non-padding count per bag (mean, max; zeros
 *   for sum);
 * - max_indices int64 [B, D] for max, the row of the first maximum per
 *   column (0 for empty bags; NaN rows do not replace a number, a leading
 *   NaN stays); for sum / mean a copy of bag_size.
 * Differentiable in weight and per_sample_weights. Errors (naming
 * aten::_embedding_bag): TJ_ERR_DTYPE for integer weight or indices /
 * offsets / per_sample_weights of another dtype (int32 is refused),
 * TJ_ERR_SHAPE for a weight not 2-D, indices or offsets not 1-D, a
 * per_sample_weights not [n], include_last_offset with no offset,
 * TJ_ERR_INVALID_ARGUMENT for another mode or per_sample_weights with mode
 * != 0, TJ_ERR_INDEX for a padding_idx out of range, offsets[0] != 0,
 * decreasing offsets (ATen reads past them), offsets[-1] > n or an index
 * outside [0, num). */
tj_status tj__embedding_bag(tj_tensor *weight, tj_tensor *indices, tj_tensor *offsets, bool scale_grad_by_freq,
                            int64_t mode, tj_tensor *per_sample_weights, bool include_last_offset,
                            int64_t padding_idx, tj_tensor **out, tj_tensor **offset2bag, tj_tensor **bag_size,
                            tj_tensor **max_indices);
/** F.embedding_bag (torch.nn.functional, 1.13): tj__embedding_bag's output.
 * input int64 [n] with offsets [B] (or [B + 1] with include_last_offset),
 * or [B, L] with offsets NULL (bags of L positions; per_sample_weights then
 * [B, L] too). mode 0 sum, 1 mean, 2 max. has_padding_idx false: no
 * padding; else padding_idx in [-num, num), a negative one counting from
 * the end. Returns a new [B, D] tensor owned by the caller, differentiable
 * in weight and per_sample_weights. Errors (naming embedding_bag):
 * TJ_ERR_INVALID_ARGUMENT for a NULL weight or input, a 2-D input with
 * offsets or a 1-D one without; TJ_ERR_SHAPE for an input of another rank
 * or a per_sample_weights of another shape than input; TJ_ERR_INDEX for a
 * padding_idx out of range; then those of tj__embedding_bag. */
tj_tensor *tj_embedding_bag(tj_tensor *weight, tj_tensor *input, tj_tensor *offsets, int64_t mode,
                            tj_tensor *per_sample_weights, bool include_last_offset, bool has_padding_idx,
                            int64_t padding_idx);
/** aten::_embedding_bag_dense_backward: the gradient of tj__embedding_bag
 * with respect to weight, [num_weights, D] of grad's dtype (float32 /
 * float64), grad [B, D] the output's gradient. Sum / mean: row k adds, for
 * each position i with indices[i] = k (not padding_idx) and offset2bag[i]
 * = o in [0, B), grad[o] * per_sample_weights[i] (NULL: 1) / divisor of k
 * (scale_grad_by_freq: ATen 1.13's, the count of sorted(indices)[g] for the
 * g-th distinct index k, which is k's count only while every smaller index
 * occurs once) / bag_size[o] (mean, when nonzero); offset2bag must
 * hold n entries (rebuild ATen's empty one first). Max: grad[o, j] goes to
 * row maximum_indices[o, j] for bags with bag_size[o] > 0. New tensor owned
 * by the caller. Errors (naming aten::_embedding_bag_dense_backward):
 * TJ_ERR_DTYPE for a non-float grad or non-int64 indices, offset2bag,
 * bag_size; TJ_ERR_SHAPE for a grad not 2-D, a bag_size (mean, max) not
 * [B], a maximum_indices (max) not int64 [B, D], an offset2bag (sum, mean)
 * not [n], a per_sample_weights not [n]; TJ_ERR_INVALID_ARGUMENT for a
 * negative num_weights, another mode, per_sample_weights with mode != 0;
 * TJ_ERR_INDEX for a padding_idx, an index or a maximum index outside
 * [0, num_weights). */
tj_tensor *tj__embedding_bag_dense_backward(tj_tensor *grad, tj_tensor *indices, tj_tensor *offset2bag,
                                            tj_tensor *bag_size, tj_tensor *maximum_indices, int64_t num_weights,
                                            bool scale_grad_by_freq, int64_t mode, tj_tensor *per_sample_weights,
                                            int64_t padding_idx);
/** aten::_embedding_bag_per_sample_weights_backward: the gradient of
 * tj__embedding_bag (mode 0) with respect to per_sample_weights, [n] of
 * grad's dtype: entry i is dot(grad[offset2bag[i]], weight[indices[i]]), 0
 * at padding_idx and for positions in no bag. offset2bag [n], or [0] to
 * rebuild it from offsets. New tensor owned by the caller. Errors (naming
 * aten::_embedding_bag_per_sample_weights_backward): TJ_ERR_INVALID_ARGUMENT
 * for mode != 0; TJ_ERR_DTYPE / TJ_ERR_SHAPE for a non-float grad, a weight
 * of another dtype or row length, non-int64 or non-1-D indices, offsets,
 * offset2bag, an offset2bag neither [0] nor [n]; TJ_ERR_INDEX as
 * tj__embedding_bag for the offsets, indices and padding_idx. */
tj_tensor *tj__embedding_bag_per_sample_weights_backward(tj_tensor *grad, tj_tensor *weight, tj_tensor *indices,
                                                         tj_tensor *offsets, tj_tensor *offset2bag, int64_t mode,
                                                         int64_t padding_idx);
/** aten::convolution_backward: the gradients of tj_convolution (same
 * input, weight, stride, padding, dilation, transposed, output_padding
 * (NULL: zeros) and groups, with the same checks and errors) with respect
 * to input, weight and bias. grad_output has the convolution's output shape
 * and input's dtype. output_mask[i] says whether result i is computed:
 * grad_input (input's shape), grad_weight (weight's shape), grad_bias ([C_out]:
 * grad_output summed over batch and space); a result not asked for is
 * written as NULL. bias_sizes (NULL or [C_out]) is the schema's and is not
 * read: grad_bias depends on output_mask[2] only. Errors: tj_convolution's
 * (TJ_ERR_DTYPE, TJ_ERR_SHAPE, TJ_ERR_INVALID_ARGUMENT, TJ_ERR_UNSUPPORTED
 * beyond 2-D), TJ_ERR_DTYPE for grad_output of another dtype than input,
 * TJ_ERR_SHAPE for grad_output not of the output shape. */
tj_status tj_convolution_backward(tj_tensor *grad_output, tj_tensor *input, tj_tensor *weight,
                                  const int64_t *bias_sizes, int n_bias_sizes, const int64_t *stride,
                                  const int64_t *padding, const int64_t *dilation, bool transposed,
                                  const int64_t *output_padding, int64_t groups, const bool output_mask[3],
                                  tj_tensor **grad_input, tj_tensor **grad_weight, tj_tensor **grad_bias);
/** aten::max_pool2d_with_indices_backward: the gradient of
 * tj_max_pool2d_with_indices with respect to self: a tensor of self's shape
 * and dtype, zero except that each grad_output element is added at the
 * position its index names within its plane (windows that overlap add up).
 * self, kernel_size, stride, padding, dilation (2 entries each; stride may
 * not be NULL here) and ceil_mode as in the forward call (same checks);
 * grad_output and indices (int64) of the
 * forward output's shape; grad_output of self's dtype. Errors: the
 * forward's, TJ_ERR_DTYPE for grad_output of another dtype or non-int64
 * indices, TJ_ERR_SHAPE for grad_output / indices not of the output shape,
 * TJ_ERR_INDEX for an index outside its plane (-1, no position, is
 * skipped). */
tj_tensor *tj_max_pool2d_with_indices_backward(tj_tensor *grad_output, tj_tensor *self, const int64_t *kernel_size,
                                               const int64_t *stride, const int64_t *padding,
                                               const int64_t *dilation, bool ceil_mode, tj_tensor *indices);
/** aten::_adaptive_avg_pool2d_backward: the gradient of
 * tj__adaptive_avg_pool2d with respect to self: each grad_output element
 * divided by its window's height and width and added to every element of
 * its window (float64 sums, rounded once); a new contiguous tensor of
 * self's shape and dtype. self's values are not read: its sizes give the
 * windows. grad_output: self's dtype, rank and leading dims, [.., OH, OW]
 * with OH, OW >= 1. Errors: the forward's checks of self (TJ_ERR_SHAPE,
 * TJ_ERR_DTYPE, TJ_ERR_OVERFLOW); TJ_ERR_SHAPE for grad_output of rank
 * other than 3 or 4, with a size 0 after its first dim (as PyTorch), or
 * with leading dims other than self's (PyTorch does not check them);
 * TJ_ERR_DTYPE for grad_output of another dtype than self. */
tj_tensor *tj__adaptive_avg_pool2d_backward(tj_tensor *grad_output, tj_tensor *self);
/** aten::adaptive_max_pool2d_backward: the gradient of
 * tj_adaptive_max_pool2d with respect to self (composite: a scatter_add):
 * each grad_output element added, in row-major order, at the plane position
 * its indices entry gives (-1 is skipped); a new contiguous tensor of self's
 * shape and dtype, zero elsewhere. self's values are not read. grad_output:
 * self's dtype, rank and leading dims, [.., OH, OW] with OH, OW >= 1;
 * indices: int64 of grad_output's shape (the forward's). Errors: the
 * forward's checks of self; TJ_ERR_SHAPE for grad_output of rank other than
 * 3 or 4, with a size 0 after its first dim, with leading dims other than
 * self's, or indices of another shape; TJ_ERR_DTYPE for grad_output of
 * another dtype than self or indices not int64; TJ_ERR_INDEX for an index
 * outside the plane (the message gives it). */
tj_tensor *tj_adaptive_max_pool2d_backward(tj_tensor *grad_output, tj_tensor *self, tj_tensor *indices);
/** aten::_adaptive_avg_pool3d_backward: the gradient of
 * tj__adaptive_avg_pool3d with respect to self: each grad_output element
 * divided by its window's depth, height and width and added (in the
 * dtype, row-major output order, as ATen) to every element of its window;
 * a new contiguous tensor of self's shape and dtype. self's values are not
 * read. grad_output: self's dtype, rank and leading dims, [.., OD, OH, OW]
 * with each >= 1. Errors: the forward's checks of self; TJ_ERR_SHAPE for
 * grad_output of rank other than 4 or 5, with a size 0 after its first
 * dim, or with leading dims other than self's; TJ_ERR_DTYPE for
 * grad_output of another dtype than self. */
tj_tensor *tj__adaptive_avg_pool3d_backward(tj_tensor *grad_output, tj_tensor *self);
/** aten::upsample_nearest2d_backward.vec: the gradient of
 * tj_upsample_nearest2d_vec for an input of input_size: n_input_size
 * entries, which must be 4, [N, C, H, W] (the forward input's shape):
 * each grad_output element added, in row-major order and in its dtype (as
 * ATen), to the input element the forward read it from. grad_output
 * (float32 / float64, any strides) must be [N, C, OH, OW], the forward's
 * output size from output_size or scale_factors (exactly one non-NULL, as in
 * the forward, 2 entries each). Returns a new contiguous tensor of
 * input_size and grad_output's dtype. Errors: the forward's, with
 * input_size for the input's sizes; TJ_ERR_SHAPE for n_input_size other
 * than 4, a negative N or C, or grad_output of another rank or shape (the
 * message gives input_size and grad_output's shape, and for a mismatch the
 * dim and both sizes); TJ_ERR_INVALID_ARGUMENT for n_input_size < 0 or >
 * 64, or a NULL input_size with n_input_size > 0. */
tj_tensor *tj_upsample_nearest2d_backward_vec(tj_tensor *grad_output, const int64_t *output_size,
                                              const int64_t *input_size, int n_input_size,
                                              const double *scale_factors);
/** aten::upsample_bilinear2d_backward.vec: the gradient of
 * tj_upsample_bilinear2d_vec: each grad_output element times the four
 * weights of its source positions, added to them in row-major order (in
 * grad_output's dtype, as ATen). Arguments, result and errors as
 * tj_upsample_nearest2d_backward_vec. */
tj_tensor *tj_upsample_bilinear2d_backward_vec(tj_tensor *grad_output, const int64_t *output_size,
                                               const int64_t *input_size, int n_input_size, bool align_corners,
                                               const double *scale_factors);
/** aten::upsample_bicubic2d_backward.vec: the gradient of
 * tj_upsample_bicubic2d_vec: each grad_output element times the product of
 * its row and column weights (grad times the row weight, then times the
 * column weight), added to the 16 (clamped) source positions, output
 * positions in row-major order and the taps column-major, in grad_output's
 * dtype (as ATen's loop). Arguments, result and errors as
 * tj_upsample_nearest2d_backward_vec. */
tj_tensor *tj_upsample_bicubic2d_backward_vec(tj_tensor *grad_output, const int64_t *output_size,
                                              const int64_t *input_size, int n_input_size, bool align_corners,
                                              const double *scale_factors);
/** aten::upsample_nearest1d_backward.vec, upsample_linear1d_backward.vec,
 * upsample_nearest3d_backward.vec and upsample_trilinear3d_backward.vec:
 * the gradients of tj_upsample_nearest1d_vec, tj_upsample_linear1d_vec,
 * tj_upsample_nearest3d_vec and tj_upsample_trilinear3d_vec, as
 * tj_upsample_nearest2d_backward_vec / tj_upsample_bilinear2d_backward_vec
 * over 1 or 3 spatial dims (input_size of 3 or 5 entries, output_size and
 * scale_factors of 1 or 3; trilinear adds each grad_output element times
 * lz ly lx at its 8 sources). Arguments, result and errors as
 * tj_upsample_nearest2d_backward_vec's. */
tj_tensor *tj_upsample_nearest1d_backward_vec(tj_tensor *grad_output, const int64_t *output_size,
                                              const int64_t *input_size, int n_input_size,
                                              const double *scale_factors);
tj_tensor *tj_upsample_linear1d_backward_vec(tj_tensor *grad_output, const int64_t *output_size,
                                             const int64_t *input_size, int n_input_size, bool align_corners,
                                             const double *scale_factors);
tj_tensor *tj_upsample_nearest3d_backward_vec(tj_tensor *grad_output, const int64_t *output_size,
                                              const int64_t *input_size, int n_input_size,
                                              const double *scale_factors);
tj_tensor *tj_upsample_trilinear3d_backward_vec(tj_tensor *grad_output, const int64_t *output_size,
                                                const int64_t *input_size, int n_input_size, bool align_corners,
                                                const double *scale_factors);
/** aten::reflection_pad1d_backward / reflection_pad2d_backward /
 * replication_pad1d_backward / replication_pad2d_backward: the gradient of
 * the padding operator (tj_reflection_pad1d, ...) of self for grad_output:
 * a new contiguous tensor of self's shape and dtype, zero where no output
 * read an element, else the sum of the grad_output elements that read it,
 * added in row-major order of grad_output (in its dtype, as ATen's CPU
 * kernel). grad_output has self's dtype and the padded shape, any strides;
 * self's values are not read. Errors: those of the forward operator for
 * self and padding; TJ_ERR_DTYPE / TJ_ERR_SHAPE for a grad_output of
 * another dtype or shape (PyTorch checks only its padded sizes). */
tj_tensor *tj_reflection_pad1d_backward(tj_tensor *grad_output, tj_tensor *self, const int64_t *padding, int npad);
tj_tensor *tj_reflection_pad2d_backward(tj_tensor *grad_output, tj_tensor *self, const int64_t *padding,
                                        int npad); /**< see tj_reflection_pad1d_backward */
tj_tensor *tj_replication_pad1d_backward(tj_tensor *grad_output, tj_tensor *self, const int64_t *padding,
                                         int npad); /**< see tj_reflection_pad1d_backward */
tj_tensor *tj_replication_pad2d_backward(tj_tensor *grad_output, tj_tensor *self, const int64_t *padding,
                                         int npad); /**< see tj_reflection_pad1d_backward */

/* ---- Optimiser operators. ---- */
/** aten::_fused_adamw_step: one AdamW step of one parameter in a single
 * kernel, functional (a single-parameter form of PyTorch 2's
 * aten::_fused_adamw_, not in PyTorch 1.13). self, grad, exp_avg,
 * exp_avg_sq and max_exp_avg_sq (NULL without amsgrad) are float32 or
 * float64 tensors of one shape; step is the step count, already
 * incremented (one float element), read by the kernel, so a traced graph
 * keeps it an input. The bias corrections are computed in double from the
 * count and every elementwise operation rounds as in PyTorch 1.13's
 * single-tensor AdamW (see tj_adamw_update). Writes four new tensors to
 * outs: the new parameter, exp_avg, exp_avg_sq and max_exp_avg_sq (NULL
 * without amsgrad). Errors: TJ_ERR_DTYPE / TJ_ERR_SHAPE for a tensor unlike
 * self, TJ_ERR_INVALID_ARGUMENT for a step that is not one float count or
 * NULL outs. */
tj_status tj__fused_adamw_step(tj_tensor *self, tj_tensor *grad, tj_tensor *exp_avg, tj_tensor *exp_avg_sq,
                               tj_tensor *max_exp_avg_sq, tj_tensor *step, double lr, double beta1, double beta2,
                               double weight_decay, double eps, tj_tensor **outs);
/** aten::_fused_sgd_step: one SGD step of one parameter whose momentum
 * buffer exists, in a single kernel, functional (a single-parameter form of
 * PyTorch 2's aten::_fused_sgd_, not in PyTorch 1.13). self (the
 * parameter), grad and momentum_buffer are float32 or float64 tensors of
 * one dtype and shape, any strides. Computes, elementwise, rounding every
 * operation as PyTorch 1.13's _single_tensor_sgd (see tj_sgd_update) does
 * operator by operator (each constant converted to the dtype, no fused
 * multiply-add):
 *     d = grad (negated when maximize) + weight_decay * self   (no term when weight_decay is 0)
 *     buf = momentum_buffer * momentum + (1 - dampening) * d
 *     self - lr * (nesterov ? d + momentum * buf : buf)
 * Writes two new contiguous tensors of self's shape and dtype to outs (the
 * caller releases them, or the innermost open scope does): the new
 * parameter and the new momentum buffer. The scalars are not range-checked
 * (tj_sgd_update checks its options). Errors: TJ_ERR_DTYPE for a self that
 * is not float32 / float64 or a grad / momentum_buffer of another dtype,
 * TJ_ERR_SHAPE for one of another shape, TJ_ERR_INVALID_ARGUMENT for a
 * NULL tensor or NULL outs. */
tj_status tj__fused_sgd_step(tj_tensor *self, tj_tensor *grad, tj_tensor *momentum_buffer, double lr, double momentum,
                             double dampening, double weight_decay, bool nesterov, bool maximize, tj_tensor **outs);

/* ---- searches and running selections (op_search_select.def) ---- */
/** aten::searchsorted.Tensor: for each element of self, the position in
 * sorted_sequence (1-D: one row for all of self; N-D: self's leading dims,
 * one row per row of self) where it would be inserted to keep the row
 * sorted: the first element >= it (left), or > it (right, or side
 * "right"), read through `sorter` (NULL: none; int64 of sorted_sequence's
 * shape, each row a permutation giving the sorted order) when given. As
 * ATen 1.13's binary search (a nan compares as larger than everything).
 * sorted_sequence and self float32 / float64 / int64, promoted to their
 * result_type; self 0-dim only with a 1-D sorted_sequence. `side`: NULL,
 * "left" or "right". Returns a new int64 tensor of self's shape. Errors:
 * TJ_ERR_SHAPE for sequence and self shapes that do not match as above or
 * a sorter of another shape, TJ_ERR_DTYPE for a sorter not int64 or bool
 * operands, TJ_ERR_INVALID_ARGUMENT for an unknown side or side "left" with
 * right, TJ_ERR_INDEX for a sorter entry outside its row (ATen reads out of
 * bounds), TJ_ERR_UNSUPPORTED for out_int32 (tjit has no int32). */
tj_tensor *tj_searchsorted(tj_tensor *sorted_sequence, tj_tensor *self, bool out_int32, bool right, const char *side,
                           tj_tensor *sorter);
/** aten::searchsorted.Scalar: tj_searchsorted of one value (an int or float
 * Scalar, a wrapped number in type promotion); a 0-dim int64 result. */
tj_tensor *tj_searchsorted_scalar(tj_tensor *sorted_sequence, tj_value self, bool out_int32, bool right,
                                  const char *side, tj_tensor *sorter);
/** aten::bucketize.Tensor: tj_searchsorted(boundaries, self, out_int32,
 * right, NULL, NULL) with boundaries 1-D (TJ_ERR_SHAPE otherwise): each
 * element's bucket index, int64, self's shape. */
tj_tensor *tj_bucketize(tj_tensor *self, tj_tensor *boundaries, bool out_int32, bool right);
/** aten::bucketize.Scalar: tj_bucketize of one Scalar value (0-dim result). */
tj_tensor *tj_bucketize_scalar(tj_value self, tj_tensor *boundaries, bool out_int32, bool right);
/** aten::cummax / aten::cummin: along `dim`, the running maximum
 * (minimum) of self and the int64 position it came from, as ATen 1.13: of
 * equal values the last one's position, a nan taken and kept (later nans
 * move the position). self float32 / float64 / int64 / bool, any shape
 * (0-dim: itself and 0). *values (self's dtype) and *indices (int64): new
 * tensors of self's shape (NULL pointers: not wanted). Gradient: the
 * incoming gradient scattered-added into zeros at the indices (ATen's
 * cummaxmin_backward). Errors: TJ_ERR_INDEX for dim out of range. */
tj_status tj_cummax(tj_tensor *self, int64_t dim, tj_tensor **values, tj_tensor **indices);
tj_status tj_cummin(tj_tensor *self, int64_t dim, tj_tensor **values, tj_tensor **indices);
/** aten::logcumsumexp: log(cumsum(exp(self))) along `dim` without overflow,
 * as ATen 1.13's chain log1p(exp(min - max)) + max from -inf (nan
 * propagates; -inf inputs add nothing). self float32 / float64, any shape;
 * a new tensor of its shape and dtype. Gradient: FunctionsManual 1.13's
 * logcumsumexp_backward (the positive and negative parts of the gradient
 * through reversed logcumsumexps). Errors: TJ_ERR_INDEX for dim out of
 * range, TJ_ERR_DTYPE for int64 / bool self. */
tj_tensor *tj_logcumsumexp(tj_tensor *self, int64_t dim);

/** aten::kthvalue: the k-th smallest (1-based) element of self along
 * `dim` and its int64 position, nan counting as the largest, as ATen
 * 1.13's CPU kernel (quick_select_template: of equal values, the position
 * its partitioning leaves there). self float32 / float64 / int64, non-empty;
 * a 0-dim self gives itself and 0. *values (self's dtype) and *indices:
 * new tensors of self's shape without dim (kept as 1 with keepdim); NULL
 * pointers: not wanted. Gradient: the incoming one scattered into zeros at
 * the indices. Errors: TJ_ERR_INDEX for dim out of range or k outside [1,
 * size of dim], TJ_ERR_SHAPE for a dim of size 0 (other dims may be
 * empty: empty results), TJ_ERR_DTYPE for bool. */
tj_status tj_kthvalue(tj_tensor *self, int64_t k, int64_t dim, bool keepdim, tj_tensor **values,
                      tj_tensor **indices);
/** aten::median.dim: the lower median of self along `dim` in the order of
 * (value, position) (of equal values the one at the lower rank's place),
 * or the first nan of a row holding one, and its int64 position, as ATen
 * 1.13's CPU kernel; aten::nanmedian.dim (tj_nanmedian_dim): the lower
 * median of the row's non-nan values (an all-nan row: a nan, at the
 * position libstdc++'s nth_element leaves there, as ATen). Shapes, dtypes,
 * gradient and errors as tj_kthvalue. */
tj_status tj_median_dim(tj_tensor *self, int64_t dim, bool keepdim, tj_tensor **values, tj_tensor **indices);
tj_status tj_nanmedian_dim(tj_tensor *self, int64_t dim, bool keepdim, tj_tensor **values, tj_tensor **indices);
/** aten::median / aten::nanmedian: the lower median of all of self's
 * elements (median: nan when one is nan; nanmedian: of the non-nan ones,
 * nan when all are), a new 0-dim tensor of self's dtype; an empty self
 * gives nan (int64: INT64_MIN, as 1.13's conversion of it). Gradient:
 * 1.13's evenly_distribute_backward (shared among the elements equal to
 * the result, nan matching nan). Errors: TJ_ERR_DTYPE for bool. */
tj_tensor *tj_median(tj_tensor *self);
tj_tensor *tj_nanmedian(tj_tensor *self);

/** aten::std_mean.correction: (std, mean) of self over `dim` (ndim dims;
 * NULL or none: every dim), std as tj_std (divisor max(0, N -
 * correction), correction < 0 meaning None = 1, the root of the float64
 * variance rounded once), mean as tj_var_mean's. New tensors of self's
 * float dtype and the reduced shape (NULL pointers: not wanted). Errors as
 * tj_var_mean's, naming aten::std_mean.correction. */
tj_status tj_std_mean(tj_tensor *self, const int64_t *dim, int ndim, int64_t correction, bool keepdim,
                      tj_tensor **std, tj_tensor **mean);
/** aten::count_nonzero.dim_IntList: the number of non-zero elements of
 * self (nan counts, -0 does not) over `dim` (ndim dims; none: all), a new
 * int64 tensor of the reduced shape (no keepdim); self any dtype.
 * aten::count_nonzero (tj_count_nonzero_opt_dim: the name tj_count_nonzero
 * is an internal helper's): over one dim, or all when !has_dim. Errors: TJ_ERR_INDEX for a dim out of range,
 * TJ_ERR_INVALID_ARGUMENT for a dim listed twice. No gradient. */
tj_tensor *tj_count_nonzero_dim_intlist(tj_tensor *self, const int64_t *dim, int ndim);
tj_tensor *tj_count_nonzero_opt_dim(tj_tensor *self, bool has_dim, int64_t dim);

/** aten::hardshrink: 0 where -lambd <= self <= lambd, else self (nan kept);
 * aten::softshrink (tj_softshrink): self - lambd above lambd, self + lambd
 * below -lambd, else 0 (nan gives 0), as ATen 1.13's CPU kernels; lambd
 * converted to self's dtype. self float32 / float64, any shape; a new
 * tensor of its shape and dtype. Gradients: the backward operators below.
 * Errors: TJ_ERR_DTYPE for int64 / bool self; softshrink:
 * TJ_ERR_INVALID_ARGUMENT for lambd < 0. */
tj_tensor *tj_hardshrink(tj_tensor *self, tj_value lambd);
tj_tensor *tj_softshrink(tj_tensor *self, tj_value lambd);
/** aten::hardshrink_backward / aten::softshrink_backward: 0 where -lambd <=
 * self <= lambd, else grad_output (both operators' gradient, as ATen's
 * shrink_backward). grad_output of self's float dtype, the two shapes
 * broadcasting together (the result's). Errors: TJ_ERR_DTYPE for other
 * dtypes, TJ_ERR_SHAPE for shapes that do not broadcast. */
tj_tensor *tj_hardshrink_backward(tj_tensor *grad_out, tj_tensor *self, tj_value lambd);
tj_tensor *tj_softshrink_backward(tj_tensor *grad_output, tj_tensor *self, tj_value lambd);

/* ---- grouping, counting, index generation and random integers ---- */

/** aten::_unique2 (what torch 1.13's make_fx records for torch.unique):
 * the distinct values of self (flattened), ascending, as a new 1-D tensor
 * [m] of self's dtype; with return_inverse, the int64 position in it of
 * each element (self's shape), else an int64 [0]; with return_counts, the
 * int64 count of each value ([m]), else [0]. `sorted` is accepted for the
 * schema: the result is always sorted (torch 1.13's CPU kernel returns its
 * hash set's order for sorted=False, which PyTorch leaves unspecified).
 * -0 equals +0 (the first one seen is kept); a nan equals nothing, so each
 * nan is a value of its own, last, with a count of 1 (torch 1.13 gives such
 * values inverse 0 and count 0). self: float32, float64, int64 or bool, any
 * shape (0-dim: one value). New tensors owned by the caller (NULL pointers:
 * not wanted). m depends on self's values: a fake self is refused
 * (TJ_ERR_UNSUPPORTED "output shape depends on the input's values", as
 * tj_nonzero), so fake-mode tracing and tj_compile refuse the call; a graph
 * traced in real mode records m and refuses another (TJ_ERR_SHAPE). No
 * gradient. */
tj_status tj_unique2(tj_tensor *self, bool sorted, bool return_inverse, bool return_counts, tj_tensor **values,
                     tj_tensor **inverse, tj_tensor **counts);
/** aten::unique_consecutive: tj_unique2 without sorting, each run of equal
 * neighbouring elements one value (nan never equal). With has_dim, the
 * slices self.select(dim, i) are the elements (compared whole): values are
 * self's shape with dim of size m, inverse [self.size(dim)] and counts [m],
 * both always computed (as ATen's unique_dim_consecutive). Errors naming
 * aten::unique_consecutive: TJ_ERR_INDEX for a dim out of range or any dim
 * of a 0-dim self; TJ_ERR_SHAPE for an empty self with dim of non-zero size
 * ("There are 0 sized dimensions, and they aren't selected"); the fake self
 * of tj_unique2. No gradient. */
tj_status tj_unique_consecutive(tj_tensor *self, bool return_inverse, bool return_counts, bool has_dim, int64_t dim,
                                tj_tensor **values, tj_tensor **inverse, tj_tensor **counts);
/** aten::unique_dim (torch.unique(x, dim=d)): the distinct slices
 * self.select(dim, i), sorted lexicographically (each slice read in
 * row-major order of the other dims, as ATen's moveaxis(dim, 0) and
 * flatten), with inverse [self.size(dim)] and counts [m], always computed
 * (ATen ignores the flags and `sorted`). Shapes and errors as
 * tj_unique_consecutive with a dim, naming aten::unique_dim. */
tj_status tj_unique_dim(tj_tensor *self, int64_t dim, bool sorted, bool return_inverse, bool return_counts,
                        tj_tensor **values, tj_tensor **inverse, tj_tensor **counts);
/** aten::bincount: out[v] = the number of elements of self equal to v (the
 * sum of their weights with `weights`), for v in [0, max(minlength,
 * max(self) + 1)). self: 1-D int64 of non-negative values; weights (NULL:
 * none): 1-D of self's length, any dtype. Returns a new 1-D tensor: int64
 * without weights, float32 for float32 weights, else float64 (summed in
 * that dtype in element order, as ATen). Its size depends on self's values:
 * refused for a fake self as tj_unique2. Errors naming aten::bincount:
 * TJ_ERR_DTYPE for a self that is not int64; TJ_ERR_INVALID_ARGUMENT for
 * minlength < 0 or a negative value; TJ_ERR_SHAPE for a self that is not
 * 1-D ("bincount only supports 1-d non-negative integral inputs") or
 * weights of another shape. No gradient. */
tj_tensor *tj_bincount(tj_tensor *self, tj_tensor *weights, int64_t minlength);
/** aten::histc: the counts of self's elements in `bins` equal-width bins
 * between min and max (int or float Scalars; min == max: the smallest and
 * largest element, widened by 1 each way when equal), the last bin holding
 * max; elements outside are not counted, nan is, in the first bin (as ATen
 * 1.13, whose range test lets it through). Bin edges are
 * linspace(min, max, bins + 1) in self's dtype, and an element's bin is
 * found as ATen's (linear guess, then a local search of the edges). self:
 * float32 / float64, any shape. Returns a new [bins] tensor of self's dtype.
 * Errors naming aten::histc: TJ_ERR_DTYPE for int64 / bool self;
 * TJ_ERR_INVALID_ARGUMENT for bins <= 0, min > max ("max must be larger
 * than min") or a range that is not finite (an infinity or nan among the
 * elements when min == max). No gradient (torch: not implemented). */
tj_tensor *tj_histc(tj_tensor *self, int64_t bins, tj_value min, tj_value max);
/** aten::tril_indices / aten::triu_indices: the coordinates (i, j) of a
 * [row, col] matrix with j - i <= offset (tril) or j - i >= offset (triu),
 * in row-major order, as a new int64 tensor [2, N] (row indices, then
 * column indices). dtype: TJ_DTYPE_NONE or TJ_INT64. Errors naming the
 * operator: TJ_ERR_INVALID_ARGUMENT for a negative row or col; TJ_ERR_DTYPE
 * for another dtype. */
tj_tensor *tj_tril_indices(int64_t row, int64_t col, int64_t offset, int dtype);
tj_tensor *tj_triu_indices(int64_t row, int64_t col, int64_t offset, int dtype);
/** aten::randint.low: a new tensor of `size` (ndim dims) of integers
 * uniform in [low, high), from the default generator (tj_manual_seed; the
 * Philox stream of tj_rand, not torch's numbers): low + u mod (high - low)
 * for a 64-bit draw u per element. dtype: int64 for TJ_DTYPE_NONE,
 * float32, float64 or bool. aten::randint (tj_randint) is low 0.
 * aten::randint_like.low_dtype (tj_randint_like): self's shape, self's
 * dtype for TJ_DTYPE_NONE. Errors naming the operator:
 * TJ_ERR_INVALID_ARGUMENT for low >= high ("random_ expects 'from' to be
 * less than 'to'") or ends outside [0, 1] for bool; size errors as tj_zeros. */
tj_tensor *tj_randint_low(int64_t low, int64_t high, const int64_t *size, int ndim, int dtype);
tj_tensor *tj_randint(int64_t high, const int64_t *size, int ndim, int dtype);
tj_tensor *tj_randint_like(tj_tensor *self, int64_t low, int64_t high, int dtype);
/** aten::randperm: a random permutation of [0, n) as a new 1-D tensor,
 * int64 for TJ_DTYPE_NONE, float32 or float64, from the default generator:
 * ATen's loop (for each i, swap positions i and i + u mod (n - i), u a
 * 64-bit draw). Errors naming aten::randperm: TJ_ERR_SHAPE for n < 0;
 * TJ_ERR_DTYPE for bool; TJ_ERR_INVALID_ARGUMENT for n past 2^24 + 1
 * (float32) or 2^53 + 1 (float64). */
tj_tensor *tj_randperm(int64_t n, int dtype);
/** aten::multinomial: num_samples category indices per row of self (1-D
 * [C] or 2-D [R, C] non-negative weights, float32 / float64, not
 * necessarily normalised), drawn from the default generator: with
 * replacement, each by inverse transform of a uniform over the cumulative
 * weights (zero-weight categories never drawn); without, ATen's top
 * num_samples of p / q with q ~ Exp(1) (positive-weight categories first,
 * then zero-weight ones in index order, as ATen). Returns a new int64 tensor
 * [num_samples] or [R, num_samples]. Errors naming aten::multinomial:
 * TJ_ERR_SHAPE for a self that is not 1-D or 2-D; TJ_ERR_DTYPE for int64 /
 * bool self; TJ_ERR_INVALID_ARGUMENT for num_samples <= 0, num_samples > C
 * without replacement, C > 2^24, a negative, infinite or nan weight
 * ("probability tensor contains either `inf`, `nan` or element < 0") or a
 * row summing to 0 ("invalid multinomial distribution (sum of
 * probabilities <= 0)"). */
tj_tensor *tj_multinomial(tj_tensor *self, int64_t num_samples, bool replacement);
/** The float random fills, from the default generator (tj_manual_seed; the
 * Philox stream of tj_rand / tj_randn, not torch's numbers), each a new
 * float32 / float64 tensor whose values are one draw per element in
 * logical order:
 * - aten::uniform(self, from, to): U[from, to) as rand * (to - from) + from
 *   (rounding may reach to), self's shape and dtype, self's values unread;
 * - aten::normal_functional(self, mean, std): randn * std + mean;
 * - aten::exponential(self, lambd): Exp(lambd) as log(1 - rand) * (-1 /
 *   lambd) (lambd 0: inf);
 * - aten::normal.Tensor_float / .float_Tensor / .Tensor_Tensor(mean, std):
 *   randn * std + mean of the tensor's shape and dtype (for two tensors,
 *   of their broadcast shape and mean's dtype, as ATen);
 * - aten::normal.float_float(mean, std, size, ndim, dtype): of `size`,
 *   float32 for TJ_DTYPE_NONE.
 * Gradients (derivatives.yaml): zeros for self / mean / std. Errors naming
 * the operator, with ATen's messages: TJ_ERR_DTYPE for an integer or bool
 * dtype; TJ_ERR_INVALID_ARGUMENT for from > to, a from / to outside the
 * dtype's range (nan too) or whose difference overflows it, std < 0 (nan
 * too; "normal expects all elements of std >= 0.0" for a tensor std,
 * checked when the kernel runs), lambd < 0; TJ_ERR_SHAPE for mean and std
 * that do not broadcast; size errors as tj_zeros. */
tj_tensor *tj_uniform(tj_tensor *self, double from, double to);
tj_tensor *tj_normal_functional(tj_tensor *self, double mean, double std);
tj_tensor *tj_exponential(tj_tensor *self, double lambd);
tj_tensor *tj_normal_tensor_float(tj_tensor *mean, double std);
tj_tensor *tj_normal_float_tensor(double mean, tj_tensor *std);
tj_tensor *tj_normal_tensor_tensor(tj_tensor *mean, tj_tensor *std);
tj_tensor *tj_normal_float_float(double mean, double std, const int64_t *size, int ndim, int dtype);
/** aten::argsort: the int64 indices of tj_sort(self, dim, descending), an
 * implicit composite (torch records sort); aten::argsort.stable likewise
 * decomposes into sort.stable (torch 1.13 records argsort.stable). Shapes
 * and errors as tj_sort. */
tj_tensor *tj_argsort(tj_tensor *self, int64_t dim, bool descending);
/* ---- Special functions (op_special.def; torch.special, torch.distributions).
 * Each takes float32 / float64 tensors of any shape (int64 and bool ones
 * compute in float32, as torch's integer-to-float promotion) and returns a
 * new contiguous tensor of the input's shape (binary ones: the broadcast
 * shape, in result_type(self, other)); values match PyTorch 1.13's float64
 * results within a few ulps (float32 is computed in float64 and rounded).
 * Errors: TJ_ERR_SHAPE naming the operator when binary operands do not
 * broadcast; others below. Gradients as derivatives.yaml 1.13. ---- */
/** aten::lgamma: log |Gamma(x)| (inf at 0 and the negative integers).
 * Gradient: grad * digamma(self). */
tj_tensor *tj_lgamma(tj_tensor *self);
/** aten::digamma: psi(x) = Gamma'(x) / Gamma(x), as torch: -inf at +0, inf
 * at -0, nan at the negative integers and -inf. Gradient: grad *
 * polygamma(1, self). */
tj_tensor *tj_digamma(tj_tensor *self);
/** aten::polygamma(int n, Tensor self): the n-th derivative of digamma
 * (n = 0 is digamma, 1 trigamma). Gradient: grad * polygamma(n + 1, self).
 * Errors: TJ_ERR_INVALID_ARGUMENT for n < 0. */
tj_tensor *tj_polygamma(int64_t n, tj_tensor *self);
/** aten::erfinv: the inverse of erf, +-inf at +-1, nan outside [-1, 1].
 * Near +-1 the result is the accurate one (torch 1.13's float64 kernel
 * loses digits for 1 - |x| < 1e-9). Gradient: 0.5 sqrt(pi) exp(erfinv(x)^2)
 * grad. */
tj_tensor *tj_erfinv(tj_tensor *self);
/** aten::erfc: 1 - erf(x) without cancellation (SLEEF, 1.5 ulp). Gradient:
 * -2 / sqrt(pi) exp(-x^2) grad. */
tj_tensor *tj_erfc(tj_tensor *self);
/** aten::i0, aten::special_i0e, aten::special_i1, aten::special_i1e: the
 * modified Bessel functions of the first kind of orders 0 and 1, and the
 * same times exp(-|x|). i0 and i1 give inf for |x| > 709.78, as torch.
 * Gradients: i0: grad * i1(x); i0e: grad * (i1e(x) - sgn(x) i0e(x)); i1:
 * grad * (i0(x) - i1(x) / x); i1e: grad * (i0e(x) - i1e(x) (sgn(x) + 1 /
 * x)); i1 and i1e 0.5 grad at |x| <= machine epsilon. */
tj_tensor *tj_i0(tj_tensor *self);
tj_tensor *tj_special_i0e(tj_tensor *self);
tj_tensor *tj_special_i1(tj_tensor *self);
tj_tensor *tj_special_i1e(tj_tensor *self);
/** aten::special_ndtri: the inverse of the standard normal CDF, -inf at 0,
 * inf at 1, nan outside [0, 1]. Gradient: grad sqrt(2 pi) exp(result^2 /
 * 2). */
tj_tensor *tj_special_ndtri(tj_tensor *self);
/** aten::special_log_ndtr: log of the standard normal CDF, accurate far
 * into the lower tail (about -x^2 / 2 there; -inf at -inf, 0 at inf, nan
 * for nan). float32 / float64 self keeps its dtype, int64 and bool compute
 * in float32; a new tensor of self's shape. Gradient (derivatives.yaml):
 * grad / sqrt(2 pi) * exp(-(result + self^2 / 2)). */
tj_tensor *tj_special_log_ndtr(tj_tensor *self);
/** aten::special_entr: -x log x for x > 0, 0 at 0, -inf for x < 0 (nan
 * kept). Gradient: -grad (1 + log x). */
tj_tensor *tj_special_entr(tj_tensor *self);
/** aten::logit: log(x / (1 - x)), x first clamped to [eps, 1 - eps] when
 * eps is a float (tj_v_float; tj_v_none(): no clamping). Gradient:
 * tj_logit_backward. */
tj_tensor *tj_logit(tj_tensor *self, tj_value eps);
/** aten::logit_backward: grad_output / (self (1 - self)); with eps None,
 * nan where self is outside [0, 1]; with eps, 0 where self is outside
 * [eps, 1 - eps] (ATen's kernel). grad_output and self broadcast; the
 * dtype is their result_type (float32 for integers). Gradients:
 * grad_output as itself, self grad grad_output (2 self - 1) / (self (1 -
 * self))^2. */
tj_tensor *tj_logit_backward(tj_tensor *grad_output, tj_tensor *self, tj_value eps);
/** aten::sinc: sin(pi x) / (pi x), 1 at 0. Gradient: grad (pi x cos(pi x)
 * - sin(pi x)) / (pi x^2), 0 at 0. */
tj_tensor *tj_sinc(tj_tensor *self);
/** aten::hypot: sqrt(self^2 + other^2) without overflow (C's hypot).
 * Gradients: grad * self / result, grad * other / result. Errors:
 * TJ_ERR_DTYPE when result_type(self, other) is not a float dtype (as
 * torch's "not implemented for 'Long'"). */
tj_tensor *tj_hypot(tj_tensor *self, tj_tensor *other);
/** aten::copysign.Tensor: |self| with other's sign bit (-0 and -nan count
 * as negative). Gradients: grad * result / self (0 where self is 0) for
 * self, zeros for other. */
tj_tensor *tj_copysign(tj_tensor *self, tj_tensor *other);
/** aten::copysign.Scalar: tj_copysign with other a Scalar, promoting as a
 * wrapped number (int64 tensor: float32; float64 tensor and an int:
 * float64). Result: self's shape. Gradient: self's as tj_copysign's. */
tj_tensor *tj_copysign_scalar(tj_tensor *self, tj_value other);
/** aten::heaviside(self, values): values where self is 0, else 1 where
 * self > 0, 0 below (and for nan). float32, float64, int64 or bool
 * operands of one dtype, broadcast; the result has their dtype. No
 * gradient. Errors: TJ_ERR_DTYPE for operands of different dtypes (as
 * torch), TJ_ERR_UNSUPPORTED for the storage dtypes. */
tj_tensor *tj_heaviside(tj_tensor *self, tj_tensor *values);
/** aten::special_xlog1py: self * log1p(other), 0 where self is 0 (other
 * not nan), nan where other is nan (ATen's kernel). Gradients: grad *
 * log1p(other), grad * self / (other + 1). */
tj_tensor *tj_special_xlog1py(tj_tensor *self, tj_tensor *other);
/** aten::special_xlog1py.self_scalar / .other_scalar: tj_special_xlog1py
 * with self / other a Scalar, promoting as a wrapped number. Result: the
 * tensor's shape. Gradients: self_scalar other grad * self / (other + 1);
 * other_scalar self grad * log1p(other). */
tj_tensor *tj_special_xlog1py_self_scalar(tj_value self, tj_tensor *other);
tj_tensor *tj_special_xlog1py_other_scalar(tj_tensor *self, tj_value other);

#ifdef __cplusplus
}
#endif
#endif
