/* The one-loop elementwise operators: each call is one tj_elementwise pass
 * of one loop of kernels/elementwise.h (tj_k_unary_loop, tj_k_binary_loop,
 * tj_k_compare_loop, tj_k_add_loop) whose context the kernel builds from
 * the arguments alone. This list is the one place they are enumerated:
 * op_elementwise.h declares their shape functions and kernels from it,
 * op_elementwise.c defines them, and op_pointwise.c builds the replay's
 * loop-fusion table from it, so that every operator of the list is fusable
 * (tracer/fuse_pointwise.c) with its kernel's own loop and context.
 * Adding an operator here (and its op_elementwise.def line) is all its
 * wiring needs. Internal to runtime/.
 *
 * X-macro lists, one per loop; each entry's columns:
 *   UNARY(ident, kop, rule)             tj_k_unary_op, op_elementwise.c's unary_rule;
 *                                       the operator's name is "aten::" #ident
 *   BINARY(ident, name, kop, rules)     tj_k_binary_op, op_elementwise.c's R_* rules
 *   COMPARE(ident, name, cop)           tj_k_compare_op: a bool result computed in
 *                                       result_type(self, other)
 *   ADD_SUB(ident, name, is_sub, swap)  self + alpha * other; sub negates alpha,
 *                                       rsub (swap) exchanges self and other
 * ident as in op_elementwise.def; name is the ATen name errors cite. */
#ifndef TJIT_RUNTIME_OP_ELEMENTWISE_LIST_H
#define TJIT_RUNTIME_OP_ELEMENTWISE_LIST_H

#define TJ_EW_UNARY_OPS(UNARY)                                                  \
    UNARY(abs, TJ_K_ABS, KEEP_INT)                                              \
    UNARY(neg, TJ_K_NEG, KEEP_INT)                                              \
    UNARY(exp, TJ_K_EXP, PROMOTE_FLOAT)                                         \
    UNARY(log, TJ_K_LOG, PROMOTE_FLOAT)                                         \
    UNARY(sqrt, TJ_K_SQRT, PROMOTE_FLOAT)                                       \
    UNARY(rsqrt, TJ_K_RSQRT, PROMOTE_FLOAT)                                     \
    UNARY(tanh, TJ_K_TANH, PROMOTE_FLOAT)                                       \
    UNARY(sigmoid, TJ_K_SIGMOID, PROMOTE_FLOAT)                                 \
    UNARY(erf, TJ_K_ERF, PROMOTE_FLOAT)                                         \
    UNARY(reciprocal, TJ_K_RECIPROCAL, PROMOTE_FLOAT)                           \
    UNARY(sin, TJ_K_SIN, PROMOTE_FLOAT)                                         \
    UNARY(cos, TJ_K_COS, PROMOTE_FLOAT)                                         \
    UNARY(log1p, TJ_K_LOG1P, PROMOTE_FLOAT)                                     \
    UNARY(expm1, TJ_K_EXPM1, PROMOTE_FLOAT)                                     \
    UNARY(relu, TJ_K_RELU, KEEP_INT)                                            \
    UNARY(silu, TJ_K_SILU, FLOAT_ONLY)                                          \
    UNARY(sign, TJ_K_SIGN, KEEP_ALL)                                            \
    /* sgn: x / |x| for complex in ATen; sign for the real dtypes tjit has */   \
    UNARY(sgn, TJ_K_SIGN, KEEP_ALL)                                             \
    /* rounding: the identity on int64, as PyTorch (which refuses bool) */      \
    UNARY(floor, TJ_K_FLOOR, KEEP_INT)                                          \
    UNARY(ceil, TJ_K_CEIL, KEEP_INT)                                            \
    UNARY(round, TJ_K_ROUND, KEEP_INT)                                          \
    UNARY(trunc, TJ_K_TRUNC, KEEP_INT)                                          \
    UNARY(frac, TJ_K_FRAC, FLOAT_ONLY)                                          \
    UNARY(asin, TJ_K_ASIN, PROMOTE_FLOAT)                                       \
    UNARY(acos, TJ_K_ACOS, PROMOTE_FLOAT)                                       \
    UNARY(atan, TJ_K_ATAN, PROMOTE_FLOAT)                                       \
    UNARY(sinh, TJ_K_SINH, PROMOTE_FLOAT)                                       \
    UNARY(cosh, TJ_K_COSH, PROMOTE_FLOAT)                                       \
    UNARY(log2, TJ_K_LOG2, PROMOTE_FLOAT)                                       \
    UNARY(log10, TJ_K_LOG10, PROMOTE_FLOAT)                                     \
    UNARY(exp2, TJ_K_EXP2, PROMOTE_FLOAT)                                       \
    UNARY(mish, TJ_K_MISH, FLOAT_ONLY)

#define TJ_EW_BINARY_OPS(BINARY)                                                \
    BINARY(mul_Tensor, "aten::mul.Tensor", TJ_K_MUL, 0)                         \
    BINARY(mul_Scalar, "aten::mul.Scalar", TJ_K_MUL, 0)                         \
    BINARY(div_Tensor, "aten::div.Tensor", TJ_K_DIV, R_TRUE_DIV)                \
    BINARY(div_Scalar, "aten::div.Scalar", TJ_K_DIV, R_TRUE_DIV)                \
    BINARY(pow_Tensor_Tensor, "aten::pow.Tensor_Tensor", TJ_K_POW, R_NO_BOOL)   \
    BINARY(maximum, "aten::maximum", TJ_K_MAXIMUM, 0)                           \
    BINARY(minimum, "aten::minimum", TJ_K_MINIMUM, 0)                           \
    BINARY(logaddexp, "aten::logaddexp", TJ_K_LOGADDEXP, R_FLOAT_ONLY)          \
    BINARY(remainder_Tensor, "aten::remainder.Tensor", TJ_K_REMAINDER, R_NO_BOOL | R_INT_DIV) \
    BINARY(remainder_Scalar, "aten::remainder.Scalar", TJ_K_REMAINDER, R_NO_BOOL | R_INT_DIV) \
    BINARY(fmod_Tensor, "aten::fmod.Tensor", TJ_K_FMOD, R_NO_BOOL | R_INT_DIV)  \
    BINARY(fmod_Scalar, "aten::fmod.Scalar", TJ_K_FMOD, R_NO_BOOL | R_INT_DIV)  \
    BINARY(atan2, "aten::atan2", TJ_K_ATAN2, R_TRUE_DIV)                        \
    BINARY(bitwise_and_Tensor, "aten::bitwise_and.Tensor", TJ_K_BITAND, R_INT_ONLY) \
    BINARY(bitwise_and_Scalar, "aten::bitwise_and.Scalar", TJ_K_BITAND, R_INT_ONLY) \
    BINARY(bitwise_or_Tensor, "aten::bitwise_or.Tensor", TJ_K_BITOR, R_INT_ONLY) \
    BINARY(bitwise_or_Scalar, "aten::bitwise_or.Scalar", TJ_K_BITOR, R_INT_ONLY) \
    BINARY(bitwise_xor_Tensor, "aten::bitwise_xor.Tensor", TJ_K_BITXOR, R_INT_ONLY) \
    BINARY(bitwise_xor_Scalar, "aten::bitwise_xor.Scalar", TJ_K_BITXOR, R_INT_ONLY)

#define TJ_EW_COMPARE_OPS(COMPARE)                                              \
    COMPARE(eq_Tensor, "aten::eq.Tensor", TJ_K_EQ)                              \
    COMPARE(ne_Tensor, "aten::ne.Tensor", TJ_K_NE)                              \
    COMPARE(lt_Tensor, "aten::lt.Tensor", TJ_K_LT)                              \
    COMPARE(le_Tensor, "aten::le.Tensor", TJ_K_LE)                              \
    COMPARE(gt_Tensor, "aten::gt.Tensor", TJ_K_GT)                              \
    COMPARE(ge_Tensor, "aten::ge.Tensor", TJ_K_GE)                              \
    COMPARE(eq_Scalar, "aten::eq.Scalar", TJ_K_EQ)                              \
    COMPARE(gt_Scalar, "aten::gt.Scalar", TJ_K_GT)                              \
    COMPARE(ne_Scalar, "aten::ne.Scalar", TJ_K_NE)                              \
    COMPARE(lt_Scalar, "aten::lt.Scalar", TJ_K_LT)                              \
    COMPARE(le_Scalar, "aten::le.Scalar", TJ_K_LE)                              \
    COMPARE(ge_Scalar, "aten::ge.Scalar", TJ_K_GE)                              \
    /* any dtypes: computed in result_type(self, other), where a value is */    \
    /* zero exactly when it was zero before the conversion */                   \
    COMPARE(logical_and, "aten::logical_and", TJ_K_LOGICAL_AND)                 \
    COMPARE(logical_or, "aten::logical_or", TJ_K_LOGICAL_OR)                    \
    COMPARE(logical_xor, "aten::logical_xor", TJ_K_LOGICAL_XOR)

#define TJ_EW_ADD_SUB_OPS(ADD_SUB)                                              \
    ADD_SUB(add_Tensor, "aten::add.Tensor", false, false)                       \
    ADD_SUB(add_Scalar, "aten::add.Scalar", false, false)                       \
    ADD_SUB(sub_Tensor, "aten::sub.Tensor", true, false)                        \
    ADD_SUB(sub_Scalar, "aten::sub.Scalar", true, false)                        \
    /* the checks are sub's: symmetric in self and other */                     \
    ADD_SUB(rsub_Tensor, "aten::rsub.Tensor", true, true)                       \
    ADD_SUB(rsub_Scalar, "aten::rsub.Scalar", true, true)

/** Every operator of the four lists, each through its family's macro. */
#define TJ_EW_LOOP_OPS(UNARY, BINARY, COMPARE, ADD_SUB)                         \
    TJ_EW_UNARY_OPS(UNARY) TJ_EW_BINARY_OPS(BINARY) TJ_EW_COMPARE_OPS(COMPARE) TJ_EW_ADD_SUB_OPS(ADD_SUB)

#endif
