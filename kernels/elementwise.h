/* Elementwise loops over contiguous arrays (see runtime/iter.h for the
 * tj_loop_fn contract: `in[k]` holds n values of the compute dtype, `out`
 * receives n values of the output dtype; out may alias an input exactly).
 * Kernels know no tensor, only pointers, counts and a context struct.
 *
 * Float transcendentals go through SLEEF's 1.0-ULP functions, vectorised in
 * per-ISA files (AVX-512, AVX2) chosen at run time, with a generic C
 * fallback, except float32 gelu (gelu.h, gelu_tanh.h) and tanh (tanh.h),
 * which have kernels of their own; the other loops are plain C that the
 * compiler vectorises. */
#ifndef TJIT_KERNELS_ELEMENTWISE_H
#define TJIT_KERNELS_ELEMENTWISE_H

#include <stdatomic.h>
#include <stdint.h>

#include "tjit/core.h"

/* ---- unary ---- */

/** Unary operators. abs, neg, relu and sign also take int64 (sign also bool);
 * floor, ceil, round and trunc are the identity on int64; the others
 * float only. */
typedef enum tj_k_unary_op {
    TJ_K_ABS,
    TJ_K_NEG,
    TJ_K_EXP,
    TJ_K_LOG,
    TJ_K_SQRT,
    TJ_K_RSQRT,
    TJ_K_TANH,
    TJ_K_SIGMOID,
    TJ_K_ERF,
    TJ_K_RECIPROCAL,
    TJ_K_SIN,
    TJ_K_COS,
    TJ_K_LOG1P,
    TJ_K_EXPM1,
    TJ_K_RELU,
    TJ_K_GELU,      /**< x * Phi(x) through erf */
    TJ_K_GELU_TANH, /**< the tanh approximation */
    TJ_K_SILU,
    TJ_K_SIGN,      /**< (0 < x) - (x < 0): 0 for nan; int64; bool is the identity */
    TJ_K_FLOOR,
    TJ_K_CEIL,
    TJ_K_ROUND,     /**< to nearest, halves to even (nearbyint) */
    TJ_K_TRUNC,
    TJ_K_FRAC,      /**< x - trunc(x): nan for +-inf */
    TJ_K_ASIN,
    TJ_K_ACOS,
    TJ_K_ATAN,
    TJ_K_SINH,
    TJ_K_COSH,
    TJ_K_LOG2,
    TJ_K_LOG10,
    TJ_K_EXP2,
    TJ_K_MISH,        /**< x * tanh(log1p(exp(x))) */
    TJ_K_EXP_NEG_ABS, /**< exp(-|x|): log_sigmoid_forward's buffer */
    TJ_K_UNARY_COUNT
} tj_k_unary_op;

typedef struct tj_k_unary_args {
    tj_k_unary_op op;
    tj_dtype dtype; /**< input = output dtype */
} tj_k_unary_args;

/** out = op(in[0]); ctx is tj_k_unary_args. */
void tj_k_unary_loop(int64_t n, void *out, const void *const *in, const void *ctx);

/* ---- binary arithmetic (in[0], in[1] and out of one dtype) ---- */

typedef struct tj_k_axpby_args {
    double alpha;   /**< float dtypes */
    int64_t ialpha; /**< int64 and bool */
    tj_dtype dtype;
} tj_k_axpby_args;

/** out = in[0] + alpha * in[1] (int64 wraps; bool: a || (alpha && b)).
 * ctx is tj_k_axpby_args; sub is add with -alpha. */
void tj_k_add_loop(int64_t n, void *out, const void *const *in, const void *ctx);

/** Binary operators whose output has the inputs' dtype. */
typedef enum tj_k_binary_op {
    TJ_K_MUL,       /**< bool: and; int64 wraps */
    TJ_K_DIV,       /**< true division, float only */
    TJ_K_DIV_TRUNC, /**< float: trunc(a / b); int64: C division (b = 0 flags an error) */
    TJ_K_DIV_FLOOR, /**< Python's floor division on the exact quotient */
    TJ_K_MAXIMUM,   /**< nan propagates; bool: or */
    TJ_K_MINIMUM,   /**< nan propagates; bool: and */
    TJ_K_POW,       /**< float: SLEEF pow; int64: exact (wrapping), negative exponents as PyTorch */
    TJ_K_LOGADDEXP, /**< float only */
    TJ_K_FMOD,      /**< C fmod: the sign of a; int64 `%` (b = 0 flags an error) */
    TJ_K_REMAINDER, /**< Python's modulo: the sign of b; int64 too (b = 0 flags an error) */
    TJ_K_ATAN2,     /**< float only */
    TJ_K_GELU_BACKWARD,      /**< in[0] = grad, in[1] = x; float only */
    TJ_K_GELU_TANH_BACKWARD, /**< same for the tanh approximation */
    TJ_K_SIGMOID_BACKWARD,   /**< in[1] = sigmoid output: g * (1 - y) * y */
    TJ_K_TANH_BACKWARD,      /**< in[1] = tanh output: g * (1 - y * y) */
    TJ_K_LOG_SIGMOID,        /**< in[0] = x, in[1] = exp(-|x|): min(x, 0) - log1p(in[1]) */
    TJ_K_GLU,                /**< in[0] = a, in[1] = b: a * (1 / (1 + exp(-b))) */
    TJ_K_BITAND,             /**< int64 and bool only: a & b */
    TJ_K_BITOR,              /**< int64 and bool only: a | b */
    TJ_K_BITXOR,             /**< int64 and bool only: a ^ b */
    TJ_K_BINARY_COUNT
} tj_k_binary_op;

typedef struct tj_k_binary_args {
    tj_k_binary_op op;
    tj_dtype dtype;
    atomic_int *div_by_zero; /**< DIV_TRUNC / DIV_FLOOR / FMOD / REMAINDER on int64: set to 1 when b == 0 */
} tj_k_binary_args;

/** out = op(in[0], in[1]); ctx is tj_k_binary_args. */
void tj_k_binary_loop(int64_t n, void *out, const void *const *in, const void *ctx);

/* ---- comparisons (inputs of `dtype`, output bool) ---- */

/** Comparisons, and logical_and / or / xor of the operands' truth (`!= 0`). */
typedef enum tj_k_compare_op {
    TJ_K_EQ,
    TJ_K_NE,
    TJ_K_LT,
    TJ_K_LE,
    TJ_K_GT,
    TJ_K_GE,
    TJ_K_LOGICAL_AND,
    TJ_K_LOGICAL_OR,
    TJ_K_LOGICAL_XOR,
    TJ_K_COMPARE_COUNT
} tj_k_compare_op;

typedef struct tj_k_compare_args {
    tj_k_compare_op op;
    tj_dtype dtype;
} tj_k_compare_args;

/** out (bool) = in[0] op in[1]; nan compares false except for NE (and is
 * true for the logical operators). */
void tj_k_compare_loop(int64_t n, void *out, const void *const *in, const void *ctx);

/* ---- float classification (any input dtype, output bool) ---- */

typedef enum tj_k_classify_op {
    TJ_K_ISNAN, /**< false for int64 and bool */
    TJ_K_ISINF, /**< +-inf; false for int64 and bool */
} tj_k_classify_op;

typedef struct tj_k_classify_args {
    tj_k_classify_op op;
    tj_dtype dtype; /**< the input's */
} tj_k_classify_args;

/** out (bool) = op(in[0]); ctx is tj_k_classify_args. */
void tj_k_classify_loop(int64_t n, void *out, const void *const *in, const void *ctx);

/* ---- activations with Scalar parameters (float only) ---- */

typedef enum tj_k_act_op {
    TJ_K_LEAKY_RELU, /**< p[0] = negative_slope */
    TJ_K_SOFTPLUS,   /**< p[0] = beta, p[1] = threshold */
    TJ_K_ELU,        /**< p[0] = alpha, p[1] = scale, p[2] = input_scale; backward: p[3] != 0 when in[1] is
                          elu's result (is_result) */
    TJ_K_HARDSIGMOID, /**< no parameters */
    TJ_K_HARDSWISH,   /**< no parameters */
    TJ_K_HARDTANH,    /**< backward only (the forward is clamp): p[0] = min_val, p[1] = max_val */
    TJ_K_NAN_TO_NUM,  /**< not an activation: p[0] replaces nan, p[1] +inf, p[2] -inf (forward only) */
    TJ_K_ACT_COUNT
} tj_k_act_op;

typedef struct tj_k_act_args {
    tj_k_act_op op;
    tj_dtype dtype; /**< float32 or float64 */
    double p[4];    /**< converted to dtype by the loops */
} tj_k_act_args;

/** out = op(in[0]; p); ctx is tj_k_act_args. */
void tj_k_act_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** out = the backward operator: in[0] = grad, in[1] = self; ctx is tj_k_act_args. */
void tj_k_act_backward_loop(int64_t n, void *out, const void *const *in, const void *ctx);

/* ---- loops with scalar operands (values already in the compute dtype) ---- */

/** A scalar of the loop's dtype. */
typedef union tj_k_scalar {
    float f32;
    double f64;
    int64_t i64;
    uint8_t b;
} tj_k_scalar;

typedef struct tj_k_pow_scalar_args {
    tj_dtype dtype;
    tj_k_scalar exponent; /**< int64 loops: a non-negative exponent */
} tj_k_pow_scalar_args;

/** out = in[0] ^ exponent, with PyTorch's shortcuts for 2, 3, 0.5, -0.5, -1,
 * -2 on floats; ctx is tj_k_pow_scalar_args. */
void tj_k_pow_scalar_loop(int64_t n, void *out, const void *const *in, const void *ctx);

typedef struct tj_k_clamp_args {
    tj_dtype dtype;
    bool has_min, has_max;
    tj_k_scalar min, max;
} tj_k_clamp_args;

/** out = min(max(in[0], min), max) with either bound optional; nan in[0]
 * stays nan; a nan bound is ignored (as std::max / std::min do). */
void tj_k_clamp_loop(int64_t n, void *out, const void *const *in, const void *ctx);

typedef struct tj_k_select_args {
    tj_dtype dtype;
    tj_k_scalar value; /**< masked_fill: the fill value; threshold: the threshold */
} tj_k_select_args;

/** where: out = in[0] != 0 ? in[1] : in[2]; in[0] is bool, in[1] and in[2]
 * of the select dtype; ctx is tj_k_select_args (value unused). */
void tj_k_where_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** where(in[0] op in[1], in[2], in[3]) in one pass, op one of EQ .. GE:
 * the bits of tj_k_compare_loop then tj_k_where_loop, without the bool
 * mask between them (the replay's loop fusion merges the pair,
 * tracer/fuse_pointwise.c). */
typedef struct tj_k_compare_where_args {
    tj_k_compare_op op;  /**< EQ, NE, LT, LE, GT or GE */
    tj_dtype compare;    /**< in[0], in[1]: float32 or float64 */
    tj_dtype dtype;      /**< in[2], in[3] and out: float32, float64 or bool */
    unsigned one;        /**< bit k set: in[k] is one value (in[k][0]) for every element: a fused step's constant */
} tj_k_compare_where_args;

/** out = in[0] op in[1] ? in[2] : in[3] (nan compares as in
 * tj_k_compare_loop); with bit k of one set, in[k] holds one element, the
 * bits of it repeated n times. ctx is tj_k_compare_where_args. */
void tj_k_compare_where_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** masked_fill: out = in[1] != 0 ? value : in[0]; in[1] is bool. */
void tj_k_masked_fill_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** threshold_backward: out = in[1] <= value ? 0 : in[0] (in[0] = grad, in[1] = self). */
void tj_k_threshold_backward_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** clamp.Tensor with both bounds: out = nan if a bound is nan, else
 * min(max(in[0], in[1]), in[2]) (nan in[0] propagates). */
void tj_k_clamp3_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** Fills out with value (clamp with a nan bound fills nan). */
void tj_k_fill_loop(int64_t n, void *out, const void *const *in, const void *ctx);

/** Copies the es-byte value at `value` (es 1, 2, 4 or 8) into out[0..n) with
 * the widest stores the CPU has; out and value may not overlap. */
void tj_k_splat(void *out, const void *value, int64_t n, size_t es);

/** Row i of out (len elements, rows one after the other) filled with the
  * es-byte value i of the nr at vals (es 1, 2, 4 or 8), bits unchanged, with
 * the widest stores the CPU has and the ISA chosen once, not per row: a
 * fused row step's row values (a mean, a softmax's max and sum) over the
 * rows of its chunk. out and vals may not overlap. */
void tj_k_spread(void *out, const void *vals, int64_t nr, int64_t len, size_t es);


/* ---- a product and the sum reading it ---- */

typedef struct tj_k_mul_add_args {
    tj_dtype dtype;     /**< float32 or float64: operands and result */
    double alpha;       /**< tj_k_add_loop's, on its second operand */
    bool product_first; /**< the product is the sum's first operand */
    bool one_b;         /**< in[1] is one value (in[1][0]) for every element: a fused step's constant */
} tj_k_mul_add_args;

/** out = p + alpha in[2] (product_first) or in[2] + alpha p, p = in[0]
 * in[1]: tj_k_binary_loop's MUL then tj_k_add_loop on its result, each
 * operation rounded once (no fused multiply-add), in one pass (loop fusion
 * merges a mul into the add that alone reads it: tracer/fuse_pointwise.c).
 * With one_b, in[1] holds one element, the bits of it repeated n times.
 * ctx is tj_k_mul_add_args; out may be any input exactly. */
void tj_k_mul_add_loop(int64_t n, void *out, const void *const *in, const void *ctx);

/** The arithmetic of tj_k_rows_loop. */
typedef enum tj_k_rows_op { TJ_K_ROWS_ADD, TJ_K_ROWS_MUL, TJ_K_ROWS_DIV } tj_k_rows_op;

typedef struct tj_k_rows_args {
    tj_k_rows_op op;
    tj_dtype dtype;  /**< float32 or float64: operands and result */
    double alpha;    /**< ADD: the operand after the first is multiplied by alpha (tj_k_add_loop's) */
    bool rows_first; /**< the row value is the first operand (vals[r] op x) */
} tj_k_rows_args;

/** Row r of nr rows of len elements (rows one after the other): out = x op
 * vals[r] (vals[r] op x with rows_first), op tj_k_add_loop's x + alpha y,
 * or tj_k_binary_loop's MUL or DIV: the bits those loops give on the row
 * value spread over the row (tj_k_spread), without the spread's pass. A
 * fused row step's x - mean, x * rstd, e / sum over its chunk. out may be x
 * exactly, or begin at vals (rows are written last first). */
void tj_k_rows_loop(int64_t nr, int64_t len, void *out, const void *x, const void *vals, const tj_k_rows_args *k);

#endif
