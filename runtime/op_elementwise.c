/* Elementwise operators: argument checks, result dtype and shape (shape
 * functions) and the glue from boxed arguments to the loops in kernels/.
 * Type promotion is PyTorch's result_type over the tensor and Scalar
 * operands; Scalar overloads wrap the Scalar as a 0-dim tensor and run the
 * Tensor overload's loop. The one-loop operators (unary, binary,
 * comparisons, add / sub) are defined from op_elementwise_list.h, through
 * their family's macro (UNARY_OP, BINARY_OP, COMPARE_OP, ADD_SUB_OP). */
#include <float.h>

#include "op_elementwise.h"
#include "op_elementwise_util.h"
#include "op_view.h"

/* ---- unary ---- */

typedef enum {
    PROMOTE_FLOAT, /* int64 / bool compute in float32 */
    KEEP_INT,      /* int64 stays int64; bool is an error */
    FLOAT_ONLY,    /* int64 / bool are errors */
    KEEP_ALL,      /* every dtype is kept (sign) */
} unary_rule;

static tj_status meta_unary(const char *op, const tj_value *args, unary_rule rule, tj_meta *out)
{
    const tj_tensor *x = args[0].u.t;
    tj_dtype dt = x->dtype;
    if (!tj_dtype_is_float(dt)) {
        if (rule == FLOAT_ONLY || (rule == KEEP_INT && dt == TJ_BOOL))
            return tj_error(TJ_ERR_DTYPE, "%s: not supported for %s input%s", op, tj_dtype_name(dt),
                            rule == FLOAT_ONLY ? " (float32/float64 only)" : "");
        if (rule == PROMOTE_FLOAT) dt = TJ_FLOAT32;
    }
    out->dtype = dt;
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    return TJ_OK;
}

static tj_status kernel_unary(const tj_value *args, tj_tensor *const *outs, tj_k_unary_op op)
{
    tj_k_unary_args k = {.op = op, .dtype = outs[0]->dtype};
    tj_elementwise(outs[0], &args[0].u.t, 1, k.dtype, tj_k_unary_loop, &k);
    return TJ_OK;
}

#define UNARY_OP(ident, kop, rule)                                              \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs)              \
    {                                                                           \
        return meta_unary("aten::" #ident, args, rule, outs);                   \
    }                                                                           \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs)   \
    {                                                                           \
        return kernel_unary(args, outs, kop);                                   \
    }

TJ_EW_UNARY_OPS(UNARY_OP)

/* log_sigmoid_forward: output and buffer of self's shape (float only); the
 * buffer exp(-|x|) first, then min(x, 0) - log1p(buffer), as ATen's CPU
 * kernel. */
tj_status tj_meta_log_sigmoid_forward(const tj_value *args, tj_meta *outs)
{
    tj_status st = meta_unary("aten::log_sigmoid_forward", args, FLOAT_ONLY, &outs[0]);
    outs[1] = outs[0];
    return st;
}

tj_status tj_kernel_log_sigmoid_forward(const tj_value *args, tj_tensor *const *outs)
{
    kernel_unary(args, &outs[1], TJ_K_EXP_NEG_ABS);
    return tj_ew_run_binary(outs[0], args[0].u.t, outs[1], outs[0]->dtype, TJ_K_LOG_SIGMOID);
}

/* isnan / isinf: a bool result of self's shape; any dtype (integers give
 * false everywhere, as PyTorch). */
static tj_status meta_classify(const char *op, const tj_value *args, tj_meta *outs)
{
    tj_status st = meta_unary(op, args, KEEP_ALL, outs);
    outs[0].dtype = TJ_BOOL;
    return st;
}

static tj_status kernel_classify(const tj_value *args, tj_tensor *const *outs, tj_k_classify_op op)
{
    tj_tensor *x = args[0].u.t;
    tj_k_classify_args k = {.op = op, .dtype = x->dtype};
    const tj_dtype dts[1] = {x->dtype};
    tj_elementwise_typed(outs[0], &x, 1, dts, tj_k_classify_loop, &k);
    return TJ_OK;
}

#define CLASSIFY_OP(ident, kop)                                                 \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs)              \
    {                                                                           \
        return meta_classify("aten::" #ident, args, outs);                      \
    }                                                                           \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs)   \
    {                                                                           \
        return kernel_classify(args, outs, kop);                                \
    }

CLASSIFY_OP(isnan, TJ_K_ISNAN)
CLASSIFY_OP(isinf, TJ_K_ISINF)

tj_status tj_meta_gelu(const tj_value *args, tj_meta *outs)
{
    bool is_tanh;
    tj_status st = tj_ew_approximate("aten::gelu", &args[1], &is_tanh);
    return st != TJ_OK ? st : meta_unary("aten::gelu", args, FLOAT_ONLY, outs);
}

tj_status tj_kernel_gelu(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_unary(args, outs, args[1].u.s[0] == 't' ? TJ_K_GELU_TANH : TJ_K_GELU);
}

/* ---- binary: shared rules ---- */

enum {
    R_TRUE_DIV = 1,   /* an int64 / bool result dtype becomes float32 */
    R_NO_BOOL = 2,    /* a bool result dtype is an error */
    R_FLOAT_ONLY = 4, /* an int64 / bool result dtype is an error */
    R_BOOL_OUT = 8,   /* comparisons: computed in the result dtype, output bool */
    R_INT_DIV = 16,   /* an int64 zero divisor is an error (ZeroDivisionError) */
    R_INT_ONLY = 32,  /* a float result dtype is an error (the bitwise operators) */
};

/* The dtype the loop computes in: result_type of the operands args[0..n). */
static tj_status binary_dtype(const char *op, const tj_value *args, int n, unsigned rules, tj_dtype *out)
{
    tj_dtype dt = tj_ew_result_type(args, n);
    if ((rules & R_TRUE_DIV) && !tj_dtype_is_float(dt)) dt = TJ_FLOAT32;
    *out = dt;
    if ((rules & R_FLOAT_ONLY) && !tj_dtype_is_float(dt)) return tj_ew_require_float(op, dt);
    if ((rules & R_NO_BOOL) && dt == TJ_BOOL)
        return tj_error(TJ_ERR_DTYPE, "%s: not supported for bool operands", op);
    if ((rules & R_INT_ONLY) && tj_dtype_is_float(dt))
        return tj_error(TJ_ERR_DTYPE, "%s: not implemented for %s operands (int64 and bool only)", op,
                        tj_dtype_name(dt));
    return TJ_OK;
}

/* binary_shape's broadcasting case, out of line: the common case then needs
 * no stack frame. */
static __attribute__((noinline)) tj_status broadcast_shape(const char *op, const tj_tensor *a, const tj_tensor *b,
                                                           tj_dtype dt, tj_meta *out)
{
    const tj_tensor *ts[2] = {a, b};
    return tj_ew_meta_broadcast(op, ts, 2, dt, out);
}

/* Output of dtype dt and the broadcast shape of self and other (a Tensor or
 * a Scalar). When other is a Scalar or has self's shape (the common case),
 * that is self's shape: no broadcasting rules to run. */
static tj_status binary_shape(const char *op, const tj_value *args, tj_dtype dt, tj_meta *out)
{
    const tj_tensor *a = args[0].u.t, *b = tj_opt_tensor(&args[1]);
    bool same = !b || a->ndim == b->ndim;
    for (int d = 0; same && b && d < a->ndim; d++) same = a->shape[d] == b->shape[d];
    if (!same) return broadcast_shape(op, a, b, dt, out);
    out->dtype = dt;
    out->ndim = a->ndim;
    for (int d = 0; d < a->ndim; d++) out->shape[d] = a->shape[d];
    return TJ_OK;
}

/* Shape function of self (op) other, other a Tensor or a Scalar. */
static tj_status meta_binary(const char *op, const tj_value *args, unsigned rules, tj_meta *out)
{
    tj_dtype dt;
    tj_status st = binary_dtype(op, args, 2, rules, &dt);
    if (st != TJ_OK) return st;
    return binary_shape(op, args, (rules & R_BOOL_OUT) ? TJ_BOOL : dt, out);
}

/* The second operand: the tensor, or the Scalar boxed in the compute dtype. */
static tj_tensor *other_operand(const tj_value *args, tj_dtype dt, tj_ew_scalar_box *box)
{
    return args[1].kind == TJ_V_TENSOR ? args[1].u.t : tj_ew_box(box, &args[1], dt);
}

/* An integer division (div with rounding, fmod, remainder): the loops flag a
 * zero int64 divisor instead of trapping, and the call fails as PyTorch's
 * ZeroDivisionError. */
static tj_status run_int_division(const char *op, tj_tensor *out, tj_tensor *a, tj_tensor *b, tj_dtype dt,
                                  tj_k_binary_op kop)
{
    atomic_int by_zero = 0;
    tj_k_binary_args k = {.op = kop, .dtype = dt, .div_by_zero = &by_zero};
    tj_tensor *in[2] = {a, b};
    tj_elementwise(out, in, 2, dt, tj_k_binary_loop, &k);
    if (atomic_load(&by_zero))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: integer division by zero (ZeroDivisionError)", op);
    return TJ_OK;
}

static tj_status kernel_binary(const char *op, const tj_value *args, tj_tensor *const *outs, unsigned rules,
                               tj_k_binary_op kop)
{
    tj_dtype dt;
    tj_status st = binary_dtype(op, args, 2, rules, &dt);
    if (st != TJ_OK) return st;
    tj_ew_scalar_box box;
    tj_tensor *other = other_operand(args, dt, &box);
    if ((rules & R_INT_DIV) && dt == TJ_INT64) return run_int_division(op, outs[0], args[0].u.t, other, dt, kop);
    return tj_ew_run_binary(outs[0], args[0].u.t, other, dt, kop);
}

static tj_status kernel_compare(const tj_value *args, tj_tensor *const *outs, tj_k_compare_op cop)
{
    tj_dtype dt = tj_ew_compare_dtype(args);
    tj_ew_scalar_box box;
    tj_tensor *in[2] = {args[0].u.t, other_operand(args, dt, &box)};
    tj_k_compare_args k = {.op = cop, .dtype = dt};
    tj_elementwise(outs[0], in, 2, dt, tj_k_compare_loop, &k);
    return TJ_OK;
}

#define BINARY_OP(ident, name, kop, rules)                                      \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs)              \
    {                                                                           \
        return meta_binary(name, args, rules, outs);                            \
    }                                                                           \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs)   \
    {                                                                           \
        return kernel_binary(name, args, outs, rules, kop);                     \
    }

#define COMPARE_OP(ident, name, cop)                                            \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs)              \
    {                                                                           \
        return meta_binary(name, args, R_BOOL_OUT, outs);                       \
    }                                                                           \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs)   \
    {                                                                           \
        return kernel_compare(args, outs, cop);                                 \
    }

TJ_EW_BINARY_OPS(BINARY_OP)
TJ_EW_COMPARE_OPS(COMPARE_OP)

/* logical_not(x) = (x == 0), on the comparison loop against a boxed zero. */
tj_status tj_meta_logical_not(const tj_value *args, tj_meta *outs)
{
    tj_status st = meta_unary("aten::logical_not", args, KEEP_ALL, outs);
    outs[0].dtype = TJ_BOOL;
    return st;
}

tj_status tj_kernel_logical_not(const tj_value *args, tj_tensor *const *outs)
{
    tj_dtype dt = args[0].u.t->dtype;
    tj_ew_scalar_box box;
    tj_value zero = tj_v_int(0);
    tj_tensor *in[2] = {args[0].u.t, tj_ew_box(&box, &zero, dt)};
    tj_k_compare_args k = {.op = TJ_K_EQ, .dtype = dt};
    tj_elementwise(outs[0], in, 2, dt, tj_k_compare_loop, &k);
    return TJ_OK;
}

/* ---- add / sub: self + alpha * other ---- */

/* PyTorch's alpha_check and, for sub, sub_check. */
static tj_status meta_add_sub(const char *op, bool is_sub, const tj_value *args, tj_meta *out)
{
    const tj_tensor *a = args[0].u.t;
    const tj_value *alpha = &args[2];
    bool other_bool = args[1].kind == TJ_V_TENSOR && args[1].u.t->dtype == TJ_BOOL;
    if (is_sub && (a->dtype == TJ_BOOL || other_bool))
        return tj_error(TJ_ERR_DTYPE, "%s: subtraction with a bool tensor is not supported (to invert a mask "
                                      "use logical_not, tj_logical_not; for the xor of two masks logical_xor, "
                                      "tj_logical_xor)", op);
    tj_dtype dt = tj_ew_result_type(args, 2);
    if (alpha->kind == TJ_V_BOOL && dt != TJ_BOOL)
        return tj_error(TJ_ERR_DTYPE, "%s: a bool alpha is only supported for bool results, not %s", op,
                        tj_dtype_name(dt));
    if (alpha->kind == TJ_V_FLOAT && !tj_dtype_is_float(dt))
        return tj_error(TJ_ERR_DTYPE, "%s: alpha %g must not be a floating point number for %s operands", op,
                        alpha->u.f, tj_dtype_name(dt));
    tj_status st = tj_scalar_check(op, "alpha", alpha, dt);
    return st != TJ_OK ? st : binary_shape(op, args, dt, out);
}

/* rsub (`swap`) is sub with the operands exchanged: other - alpha * self. Inlined into each
 * operator so that is_sub and swap are constants on add's dispatch fast path. */
static inline __attribute__((always_inline)) tj_status kernel_add_sub(const tj_value *args, tj_tensor *const *outs, bool is_sub, bool swap)
{
    tj_dtype dt = outs[0]->dtype;
    tj_k_axpby_args k;
    tj_ew_axpby_args(&k, &args[2], dt, is_sub);
    tj_ew_scalar_box box;
    tj_tensor *other = other_operand(args, dt, &box);
    tj_tensor *in[2] = {swap ? other : args[0].u.t, swap ? args[0].u.t : other};
    tj_elementwise(outs[0], in, 2, dt, tj_k_add_loop, &k);
    return TJ_OK;
}

#define ADD_SUB_OP(ident, name, is_sub, swap)                                   \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs)              \
    {                                                                           \
        return meta_add_sub(name, is_sub, args, outs);                          \
    }                                                                           \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs)   \
    {                                                                           \
        return kernel_add_sub(args, outs, is_sub, swap);                        \
    }

TJ_EW_ADD_SUB_OPS(ADD_SUB_OP)

/* ---- div with rounding_mode: other a Tensor (div.Tensor_mode) or a Scalar
 * (div.Scalar_mode: ATen divides by the wrapped number, which is how
 * other_operand boxes it) ---- */

/* NULL for true division; "trunc" or "floor". */
static tj_status rounding_mode(const char *op, const tj_value *v, const char **mode)
{
    *mode = v->kind == TJ_V_STR ? v->u.s : NULL;
    if (!*mode || !strcmp(*mode, "trunc") || !strcmp(*mode, "floor")) return TJ_OK;
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: rounding_mode must be None, 'trunc' or 'floor', got '%s'", op,
                    *mode);
}

static tj_status meta_div_mode(const char *op, const tj_value *args, tj_meta *outs)
{
    const char *mode;
    tj_status st = rounding_mode(op, &args[2], &mode);
    return st != TJ_OK ? st : meta_binary(op, args, mode ? R_NO_BOOL : R_TRUE_DIV, outs);
}

static tj_status kernel_div_mode(const char *op, const tj_value *args, tj_tensor *const *outs)
{
    const char *mode;
    rounding_mode(op, &args[2], &mode);
    tj_dtype dt = outs[0]->dtype;
    tj_ew_scalar_box box;
    tj_tensor *other = other_operand(args, dt, &box);
    if (!mode) return tj_ew_run_binary(outs[0], args[0].u.t, other, dt, TJ_K_DIV);
    return run_int_division(op, outs[0], args[0].u.t, other, dt, mode[0] == 't' ? TJ_K_DIV_TRUNC : TJ_K_DIV_FLOOR);
}

#define DIV_MODE_OP(ident, name)                                                \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs)              \
    {                                                                           \
        return meta_div_mode(name, args, outs);                                 \
    }                                                                           \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs)   \
    {                                                                           \
        return kernel_div_mode(name, args, outs);                               \
    }

DIV_MODE_OP(div_Tensor_mode, "aten::div.Tensor_mode")
DIV_MODE_OP(div_Scalar_mode, "aten::div.Scalar_mode")

/* ---- pow with a Scalar exponent ---- */

#define POW_SCALAR "aten::pow.Tensor_Scalar"

tj_status tj_meta_pow_Tensor_Scalar(const tj_value *args, tj_meta *outs)
{
    tj_status st = meta_binary(POW_SCALAR, args, R_NO_BOOL, outs);
    if (st != TJ_OK) return st;
    if (outs[0].dtype == TJ_INT64 && args[1].kind == TJ_V_INT && args[1].u.i < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, POW_SCALAR ": integers to negative integer powers are not "
                                                 "allowed (exponent %lld)", (long long)args[1].u.i);
    return TJ_OK;
}

tj_status tj_kernel_pow_Tensor_Scalar(const tj_value *args, tj_tensor *const *outs)
{
    tj_k_pow_scalar_args k = {.dtype = outs[0]->dtype, .exponent = tj_ew_scalar(&args[1], outs[0]->dtype)};
    tj_elementwise(outs[0], &args[0].u.t, 1, k.dtype, tj_k_pow_scalar_loop, &k);
    return TJ_OK;
}

/* ---- where (self and other each a Tensor or a Scalar) ---- */

/* The result has result_type(self, other) (a Scalar counting as a wrapped
 * number) and the broadcast shape of condition and the Tensor branches. */
static tj_status meta_where(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *c = args[0].u.t;
    if (c->dtype != TJ_BOOL)
        return tj_error(TJ_ERR_DTYPE, "%s: condition must be a bool tensor, got %s", op, tj_dtype_name(c->dtype));
    tj_dtype dt = tj_result_type(args + 1, 2);
    for (int i = 1; i <= 2; i++)
        if (args[i].kind != TJ_V_TENSOR && tj_scalar_check(op, i == 1 ? "self" : "other", &args[i], dt) != TJ_OK)
            return tj_last_status();
    const tj_tensor *ts[3] = {c, tj_opt_tensor(&args[1]),
                              tj_opt_tensor(&args[2])};
    return tj_ew_meta_broadcast(op, ts, 3, dt, outs);
}

/* A Scalar branch is boxed in the result dtype and broadcast by the engine. */
static tj_status kernel_where(const tj_value *args, tj_tensor *const *outs)
{
    tj_k_select_args k = {.dtype = outs[0]->dtype};
    tj_ew_scalar_box boxes[2];
    tj_tensor *in[3] = {args[0].u.t};
    for (int i = 1; i <= 2; i++)
        in[i] = args[i].kind == TJ_V_TENSOR ? args[i].u.t : tj_ew_box(&boxes[i - 1], &args[i], k.dtype);
    const tj_dtype dts[3] = {TJ_BOOL, k.dtype, k.dtype};
    tj_elementwise_typed(outs[0], in, 3, dts, tj_k_where_loop, &k);
    return TJ_OK;
}

#define WHERE_OP(ident, name)                                                   \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs)              \
    {                                                                           \
        return meta_where(name, args, outs);                                    \
    }                                                                           \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs)   \
    {                                                                           \
        return kernel_where(args, outs);                                        \
    }

WHERE_OP(where_self, "aten::where.self")
WHERE_OP(where_ScalarOther, "aten::where.ScalarOther")
WHERE_OP(where_ScalarSelf, "aten::where.ScalarSelf")
WHERE_OP(where_Scalar, "aten::where.Scalar")

/* ---- clamp ---- */

#define CLAMP "aten::clamp"
#define CLAMP_T "aten::clamp.Tensor"

/* result_type of self and the given bounds; neither bound given and a bool
 * result are errors. */
/* Bool results: PyTorch 1.13 runs clamp.Tensor with a single bound as
 * maximum / minimum, which accept bool; Scalar bounds, and two tensor
 * bounds, reach clamp kernels that refuse bool ("not implemented for
 * 'Bool'"). bool_one_bound says whether this overload takes the first path. */
static tj_status clamp_dtype(const char *op, const tj_value *args, bool bool_one_bound, tj_dtype *dt)
{
    bool has_min = args[1].kind != TJ_V_NONE, has_max = args[2].kind != TJ_V_NONE;
    if (!has_min && !has_max)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: at least one of 'min' or 'max' must not be None", op);
    *dt = tj_result_type(args, 3);
    if (*dt == TJ_BOOL && !(bool_one_bound && has_min != has_max))
        return tj_error(TJ_ERR_DTYPE, "%s: not supported for bool operands with %s", op,
                        bool_one_bound ? "both min and max (one bound only)" : "Scalar bounds");
    return TJ_OK;
}

/* clamp, and clamp_min / clamp_max through it (`op` names the caller). */
static tj_status meta_clamp(const char *op, const tj_value *args, tj_meta *outs)
{
    tj_dtype dt;
    tj_status st = clamp_dtype(op, args, false, &dt);
    for (int i = 1; i <= 2 && st == TJ_OK; i++)
        if (args[i].kind != TJ_V_NONE) st = tj_scalar_check(op, i == 1 ? "min" : "max", &args[i], dt);
    if (st != TJ_OK) return st;
    const tj_tensor *self = args[0].u.t;
    return tj_ew_meta_broadcast(op, &self, 1, dt, outs);
}

tj_status tj_meta_clamp(const tj_value *args, tj_meta *outs) { return meta_clamp(CLAMP, args, outs); }

tj_status tj_kernel_clamp(const tj_value *args, tj_tensor *const *outs)
{
    tj_dtype dt = outs[0]->dtype;
    tj_k_clamp_args k = {.dtype = dt, .has_min = args[1].kind != TJ_V_NONE, .has_max = args[2].kind != TJ_V_NONE};
    if (k.has_min) k.min = tj_ew_scalar(&args[1], dt);
    if (k.has_max) k.max = tj_ew_scalar(&args[2], dt);
    /* PyTorch 1.13: with both bounds, a nan bound fills the result with nan
     * (a single nan bound is ignored by the loop's comparisons) */
    bool nan_bound = k.has_min && k.has_max && (isnan(tj_value_as_double(&args[1])) ||
                                                isnan(tj_value_as_double(&args[2])));
    if (nan_bound) {
        tj_value nan = tj_v_float(NAN);
        tj_k_select_args f = {.dtype = dt, .value = tj_ew_scalar(&nan, dt)};
        tj_elementwise(outs[0], NULL, 0, dt, tj_k_fill_loop, &f);
        return TJ_OK;
    }
    tj_elementwise(outs[0], &args[0].u.t, 1, dt, tj_k_clamp_loop, &k);
    return TJ_OK;
}

/* clamp_min / clamp_max as clamp's arguments: the bound on its side, None on
 * the other, except that a nan bound fills the result with nan (ATen's
 * clamp_min_out / clamp_max_out), which is clamp with that bound on both
 * sides. */
static void one_sided_clamp(const tj_value *args, bool is_min, tj_value *c)
{
    c[0] = args[0];
    bool nan_bound = args[1].kind == TJ_V_FLOAT && isnan(args[1].u.f);
    c[1] = is_min || nan_bound ? args[1] : tj_v_none();
    c[2] = !is_min || nan_bound ? args[1] : tj_v_none();
}

#define ONE_SIDED_CLAMP_OP(ident, is_min)                                       \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs)              \
    {                                                                           \
        tj_value c[3];                                                          \
        one_sided_clamp(args, is_min, c);                                       \
        return meta_clamp("aten::" #ident, c, outs);                            \
    }                                                                           \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs)   \
    {                                                                           \
        tj_value c[3];                                                          \
        one_sided_clamp(args, is_min, c);                                       \
        return tj_kernel_clamp(c, outs);                                        \
    }

ONE_SIDED_CLAMP_OP(clamp_min, true)
ONE_SIDED_CLAMP_OP(clamp_max, false)

tj_status tj_meta_clamp_Tensor(const tj_value *args, tj_meta *outs)
{
    tj_dtype dt;
    tj_status st = clamp_dtype(CLAMP_T, args, true, &dt);
    if (st != TJ_OK) return st;
    const tj_tensor *ts[3] = {args[0].u.t, tj_opt_tensor(&args[1]),
                              tj_opt_tensor(&args[2])};
    return tj_ew_meta_broadcast(CLAMP_T, ts, 3, dt, outs);
}

/* A single bound is maximum / minimum (nan propagates from either side). */
tj_status tj_kernel_clamp_Tensor(const tj_value *args, tj_tensor *const *outs)
{
    tj_dtype dt = outs[0]->dtype;
    tj_tensor *self = args[0].u.t, *lo = tj_opt_tensor(&args[1]),
              *hi = tj_opt_tensor(&args[2]);
    if (!hi) return tj_ew_run_binary(outs[0], self, lo, dt, TJ_K_MAXIMUM);
    if (!lo) return tj_ew_run_binary(outs[0], self, hi, dt, TJ_K_MINIMUM);
    tj_k_select_args k = {.dtype = dt};
    tj_tensor *in[3] = {self, lo, hi};
    tj_elementwise(outs[0], in, 3, dt, tj_k_clamp3_loop, &k);
    return TJ_OK;
}

/* ---- masked_fill ---- */

#define MASKED_FILL "aten::masked_fill.Scalar"

/* The result keeps self's dtype and has the broadcast shape of self and mask.
 * The mask must be bool, as PyTorch documents it (and torch 2 checks):
 * torch 1.13's CPU kernel reads the first byte of each element of any other
 * mask, and fails unless it is 0 or 1 (so an int64 256 counts as false and
 * every float32 value from 1.0 to 2.0 as false), which tjit does not copy. */
tj_status tj_meta_masked_fill_Scalar(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *mask = args[1].u.t;
    if (mask->dtype != TJ_BOOL)
        return tj_error(TJ_ERR_DTYPE, MASKED_FILL ": mask must be a bool tensor, got %s (compare it with 0 first: "
                        "tj_ne_scalar)", tj_dtype_name(mask->dtype));
    tj_status st = tj_scalar_check(MASKED_FILL, "value", &args[2], self->dtype);
    if (st != TJ_OK) return st;
    const tj_tensor *ts[2] = {self, mask};
    return tj_ew_meta_broadcast(MASKED_FILL, ts, 2, self->dtype, outs);
}

tj_status tj_kernel_masked_fill_Scalar(const tj_value *args, tj_tensor *const *outs)
{
    tj_dtype dt = outs[0]->dtype;
    tj_k_select_args k = {.dtype = dt, .value = tj_ew_scalar(&args[2], dt)};
    tj_tensor *in[2] = {args[0].u.t, args[1].u.t};
    const tj_dtype dts[2] = {dt, TJ_BOOL};
    tj_elementwise_typed(outs[0], in, 2, dts, tj_k_masked_fill_loop, &k);
    return TJ_OK;
}

/* ---- activations with Scalar parameters ---- */

/* Float input only; each parameter args[1..np] must convert to the dtype. */
static tj_status meta_act(const char *op, const tj_value *args, int np, const char *const *names, tj_meta *outs)
{
    tj_status st = meta_unary(op, args, FLOAT_ONLY, outs);
    for (int i = 0; i < np && st == TJ_OK; i++)
        st = tj_scalar_check(op, names[i], &args[1 + i], outs[0].dtype);
    return st;
}

static tj_status kernel_act(const tj_value *args, tj_tensor *const *outs, tj_k_act_op op, int np)
{
    tj_k_act_args k = {.op = op, .dtype = outs[0]->dtype};
    for (int i = 0; i < np; i++) k.p[i] = tj_value_as_double(&args[1 + i]);
    tj_elementwise(outs[0], &args[0].u.t, 1, k.dtype, tj_k_act_loop, &k);
    return TJ_OK;
}

tj_status tj_meta_leaky_relu(const tj_value *args, tj_meta *outs)
{
    return meta_act("aten::leaky_relu", args, 1, (const char *const[]){"negative_slope"}, outs);
}

tj_status tj_kernel_leaky_relu(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_act(args, outs, TJ_K_LEAKY_RELU, 1);
}

/* PyTorch 1.13 converts all three Scalars with Scalar::to<scalar_t>. */
tj_status tj_meta_elu(const tj_value *args, tj_meta *outs)
{
    return meta_act("aten::elu", args, 3, (const char *const[]){"alpha", "scale", "input_scale"}, outs);
}

tj_status tj_kernel_elu(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_act(args, outs, TJ_K_ELU, 3);
}

tj_status tj_meta_softplus(const tj_value *args, tj_meta *outs)
{
    return meta_act("aten::softplus", args, 2, (const char *const[]){"beta", "threshold"}, outs);
}

tj_status tj_kernel_softplus(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_act(args, outs, TJ_K_SOFTPLUS, 2);
}

/* ---- hard activations ---- */

#define HARDTANH "aten::hardtanh"

/* clamp(self, min_val, max_val) keeping self's dtype (int64 too; bool is an
 * error), as ATen's hardtanh_out. */
tj_status tj_meta_hardtanh(const tj_value *args, tj_meta *outs)
{
    tj_status st = meta_unary(HARDTANH, args, KEEP_INT, outs);
    for (int i = 1; i <= 2 && st == TJ_OK; i++)
        st = tj_scalar_check(HARDTANH, i == 1 ? "min_val" : "max_val", &args[i], outs[0].dtype);
    return st;
}

/* clamp's kernel, which converts the bounds to the result dtype: for int64
 * self they truncate ("boundaries not causing type promotion" in ATen; a nan
 * one is refused by the shape function). */
tj_status tj_kernel_hardtanh(const tj_value *args, tj_tensor *const *outs) { return tj_kernel_clamp(args, outs); }

tj_status tj_meta_hardsigmoid(const tj_value *args, tj_meta *outs)
{
    return meta_act("aten::hardsigmoid", args, 0, NULL, outs);
}

tj_status tj_kernel_hardsigmoid(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_act(args, outs, TJ_K_HARDSIGMOID, 0);
}

tj_status tj_meta_hardswish(const tj_value *args, tj_meta *outs)
{
    return meta_act("aten::hardswish", args, 0, NULL, outs);
}

tj_status tj_kernel_hardswish(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_act(args, outs, TJ_K_HARDSWISH, 0);
}

/* ---- nan_to_num ---- */

tj_status tj_meta_nan_to_num(const tj_value *args, tj_meta *outs)
{
    return meta_unary("aten::nan_to_num", args, KEEP_ALL, outs);
}

/* Floats: nan (None: 0), posinf and neginf (None: the dtype's largest and
 * lowest finite values) converted to the dtype as ATen's static_cast does
 * (1e300 becomes inf in float32). Integers have nothing to replace: a copy. */
tj_status tj_kernel_nan_to_num(const tj_value *args, tj_tensor *const *outs)
{
    tj_dtype dt = outs[0]->dtype;
    if (!tj_dtype_is_float(dt)) /* over self (a plan's in-place reuse), the values are already there */
        return tj_tensor_ptr(outs[0]) == tj_tensor_ptr(args[0].u.t) ? TJ_OK : tj_kernel_copy(args, outs);
    double big = dt == TJ_FLOAT32 ? FLT_MAX : DBL_MAX;
    const double dflt[3] = {0, big, -big};
    tj_k_act_args k = {.op = TJ_K_NAN_TO_NUM, .dtype = dt};
    for (int i = 0; i < 3; i++) k.p[i] = args[1 + i].kind == TJ_V_NONE ? dflt[i] : tj_value_as_double(&args[1 + i]);
    tj_elementwise(outs[0], &args[0].u.t, 1, dt, tj_k_act_loop, &k);
    return TJ_OK;
}

/* ---- celu: elu(self, alpha, 1, 1 / alpha), as ATen 1.13's celu ---- */

/* elu's arguments for celu's (self, alpha), after ATen's alpha check */
static tj_status celu_as_elu(const tj_value *args, tj_value *elu_args)
{
    double alpha = tj_value_as_double(&args[1]);
    if (alpha == 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "aten::celu: ZeroDivisionError: alpha cannot be 0 for CELU");
    elu_args[0] = args[0];
    elu_args[1] = args[1];
    elu_args[2] = tj_v_float(1.0);
    elu_args[3] = tj_v_float(1.0 / alpha);
    return TJ_OK;
}

tj_status tj_meta_celu(const tj_value *args, tj_meta *outs)
{
    tj_value e[4];
    if (celu_as_elu(args, e) != TJ_OK) return tj_last_status();
    return meta_act("aten::celu", e, 3, (const char *const[]){"alpha", "scale", "input_scale"}, outs);
}

tj_status tj_kernel_celu(const tj_value *args, tj_tensor *const *outs)
{
    tj_value e[4];
    if (celu_as_elu(args, e) != TJ_OK) return tj_last_status();
    return kernel_act(e, outs, TJ_K_ELU, 3);
}
