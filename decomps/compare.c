/* Decompositions of the comparisons, selections and bounds that are not
 * primitives, down to eq.Tensor, lt.Tensor, where.self and maximum:
 *   ne(a, b) = eq(eq(a, b), false)         gt(a, b) = lt(b, a)
 *   le(a, b) = where(lt(a, b), true, eq(a, b))    ge(a, b) = le(b, a)
 *   minimum(a, b) = where(lt(b, a) or isnan(b), b, a)   (nan from either side)
 *   clamp = minimum(maximum(x, lo), hi), with the kernels' nan rules
 *   masked_fill(x, m, v) = where(m, v, x)    (v a Scalar or a 0-dim tensor)
 * (nan compares false everywhere, so every form keeps PyTorch's answers on
 * nan). Scalars are boxed in the dtype the kernel compares in. */
#include "util.h"

static tj_tensor *bool_const(bool b)
{
    tj_value v = tj_v_bool(b);
    return tj_dc_scalar(&v, TJ_BOOL);
}

static tj_tensor *logical_or(tj_tensor *a, tj_tensor *b) { return tj_where(a, bool_const(true), b); }

/* x != x: true where x is nan (never for integers). */
static tj_tensor *isnan_(tj_tensor *x) { return tj_eq(tj_eq(x, x), bool_const(false)); }

static tj_tensor *less_equal(tj_tensor *a, tj_tensor *b) { return logical_or(tj_lt(a, b), tj_eq(a, b)); }

static tj_tensor *min2(tj_tensor *a, tj_tensor *b) { return tj_where(logical_or(tj_lt(b, a), isnan_(b)), b, a); }

/* A decomposition that runs the shape function of TJ_OPS(ident) (the
 * kernel's checks and errors), then returns EXPR, written over args. */
#define CHECKED(name, ident, EXPR)                              \
    static tj_status name(const tj_value *args, tj_value *outs) \
    {                                                           \
        TJ_DC_CHECK(ident, args, m);                            \
        return tj_dc_done((EXPR), outs);                        \
    }

CHECKED(ne, ne_Tensor, tj_eq(tj_eq(args[0].u.t, args[1].u.t), bool_const(false)))
CHECKED(gt, gt_Tensor, tj_lt(args[1].u.t, args[0].u.t))
CHECKED(le, le_Tensor, less_equal(args[0].u.t, args[1].u.t))
CHECKED(ge, ge_Tensor, tj_le(args[1].u.t, args[0].u.t))
/* The Scalar overloads compare in result_type(self, other): the Scalar
 * (args[1]) as a 0-dim tensor of that dtype. */
static tj_tensor *scalar_of(const tj_value *args) { return tj_dc_scalar(&args[1], tj_result_type(args, 2)); }

CHECKED(eq_scalar, eq_Scalar, tj_eq(args[0].u.t, scalar_of(args)))
CHECKED(ne_scalar, ne_Scalar, tj_ne(args[0].u.t, scalar_of(args)))
CHECKED(lt_scalar, lt_Scalar, tj_lt(args[0].u.t, scalar_of(args)))
CHECKED(le_scalar, le_Scalar, tj_le(args[0].u.t, scalar_of(args)))
CHECKED(gt_scalar, gt_Scalar, tj_lt(scalar_of(args), args[0].u.t))
CHECKED(ge_scalar, ge_Scalar, tj_le(scalar_of(args), args[0].u.t))
CHECKED(minimum, minimum, min2(args[0].u.t, args[1].u.t))

/* clamp(x, lo?, hi?) with Scalar bounds, as the kernel: with both bounds a
 * nan one gives nan everywhere; a single nan bound is ignored. */
static tj_status clamp(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(clamp, args, m);
    tj_dtype dt = m[0].dtype;
    bool has_lo = args[1].kind != TJ_V_NONE, has_hi = args[2].kind != TJ_V_NONE;
    bool lo_nan = has_lo && isnan(tj_value_as_double(&args[1])), hi_nan = has_hi && isnan(tj_value_as_double(&args[2]));
    if (has_lo && has_hi && (lo_nan || hi_nan))
        return tj_dc_done(tj_full(m[0].shape, m[0].ndim, tj_v_float(NAN), (int)dt), outs);
    tj_tensor *x = args[0].u.t;
    bool applied = false;
    /* maximum(lo, x), not (x, lo): on equal values it keeps its second
     * operand, x, as the kernel's `x < lo ? lo : x` does (clamp(-0.0, 0) is -0.0) */
    if (has_lo && !lo_nan) x = tj_maximum(tj_dc_scalar(&args[1], dt), x), applied = true;
    if (has_hi && !hi_nan) x = min2(tj_dc_to(x, dt), tj_dc_scalar(&args[2], dt)), applied = true;
    return tj_dc_done(applied ? x : tj_to_copy(x, (int)dt), outs);
}

/* clamp.Tensor: maximum / minimum, which let nan through from every side,
 * on the three tensors converted to the result dtype first (torch._refs'
 * promotion wrapper, as the kernel): maximum(bool self, float32 0-dim lo)
 * is float32, and a float64 0-dim hi taken after it would round to it. */
static tj_status clamp_tensor(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(clamp_Tensor, args, m);
    tj_dtype dt = m[0].dtype;
    tj_tensor *x = tj_dc_to(args[0].u.t, dt), *lo = tj_opt_tensor(&args[1]), *hi = tj_opt_tensor(&args[2]);
    if (lo) x = tj_maximum(x, tj_dc_to(lo, dt));
    if (hi) x = min2(x, tj_dc_to(hi, dt));
    return tj_dc_done(x, outs);
}

/* masked_fill(self, mask, value) keeps self's dtype. */
static tj_status masked_fill(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(masked_fill_Scalar, args, m);
    tj_tensor *self = args[0].u.t;
    return tj_dc_done(tj_where(args[1].u.t, tj_dc_scalar(&args[2], tj_tensor_dtype(self)), self), outs);
}

/* masked_fill.Tensor: where(mask, value converted to self's dtype, self), as
 * torch._refs. The kernel also refuses a value that overflows self's dtype
 * when it reads it; here, as in torch._refs, the conversion decides (1e300
 * becomes inf in float32). */
static tj_status masked_fill_tensor(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(masked_fill_Tensor, args, m);
    tj_tensor *self = args[0].u.t;
    return tj_dc_done(tj_where(args[1].u.t, tj_dc_to(args[2].u.t, tj_tensor_dtype(self)), self), outs);
}

/* where with Scalar branches: where.self on the Scalars boxed in the result
 * dtype (0-dim, so the shape stays that of condition and the Tensor branch). */
static tj_tensor *branch(const tj_value *v, tj_dtype dt) { return v->kind == TJ_V_TENSOR ? v->u.t : tj_dc_scalar(v, dt); }

#define WHERE_SCALARS(name, ident)                                                        \
    static tj_status name(const tj_value *args, tj_value *outs)                           \
    {                                                                                     \
        TJ_DC_CHECK(ident, args, m);                                                      \
        tj_dtype dt = m[0].dtype;                                                         \
        return tj_dc_done(tj_where(args[0].u.t, branch(&args[1], dt), branch(&args[2], dt)), outs); \
    }
WHERE_SCALARS(where_scalar_other, where_ScalarOther)
WHERE_SCALARS(where_scalar_self, where_ScalarSelf)
WHERE_SCALARS(where_scalar, where_Scalar)

/* torch._refs: logical_not(a) = a == 0; logical_and / or / xor compare
 * (a != 0) and (b != 0) with & (mul on bools), | (maximum on bools) and ^
 * (ne), after converting both to result_type(a, b) as the kernel does (a
 * float64 1e-300 against float32 becomes 0). */
static tj_tensor *truth(const tj_value *args, int i)
{
    tj_dtype dt = tj_result_type(args, 2);
    return tj_eq(tj_eq(tj_dc_to(args[i].u.t, dt), tj_dc_number(0, dt)), bool_const(false));
}

CHECKED(logical_not_, logical_not, tj_eq(args[0].u.t, tj_dc_number(0, tj_tensor_dtype(args[0].u.t))))
CHECKED(logical_and_, logical_and, tj_mul(truth(args, 0), truth(args, 1)))
CHECKED(logical_or_, logical_or, tj_maximum(truth(args, 0), truth(args, 1)))
CHECKED(logical_xor_, logical_xor, tj_ne(truth(args, 0), truth(args, 1)))

/* torch._refs' bitwise_not: of bool logical_not (a == 0), of int64 -1 - a,
 * which wraps as ~a does */
static tj_status bitwise_not(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(bitwise_not, args, m);
    tj_tensor *x = args[0].u.t;
    if (m[0].dtype == TJ_BOOL) return tj_dc_done(tj_eq(x, bool_const(false)), outs);
    return tj_dc_done(tj_sub(tj_dc_number(-1, TJ_INT64), x), outs);
}

/* The .Scalar overloads: the Tensor overload on a 0-dim tensor of the
 * result dtype holding the Scalar, as the kernel boxes it. */
#define BITWISE_SCALAR(name, call)                                                  \
    static tj_status name##_scalar(const tj_value *args, tj_value *outs)           \
    {                                                                               \
        TJ_DC_CHECK(name##_Scalar, args, m);                                        \
        return tj_dc_done(call(args[0].u.t, tj_dc_scalar(&args[1], m[0].dtype)), outs); \
    }
BITWISE_SCALAR(bitwise_and, tj_bitwise_and)
BITWISE_SCALAR(bitwise_or, tj_bitwise_or)
BITWISE_SCALAR(bitwise_xor, tj_bitwise_xor)
#undef BITWISE_SCALAR

void tj_register_compare_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(bitwise_and_Scalar), bitwise_and_scalar, "bitwise_and_scalar");
    tj_op_set_decomposition(TJ_OPS(bitwise_or_Scalar), bitwise_or_scalar, "bitwise_or_scalar");
    tj_op_set_decomposition(TJ_OPS(bitwise_xor_Scalar), bitwise_xor_scalar, "bitwise_xor_scalar");
    tj_op_set_decomposition(TJ_OPS(bitwise_not), bitwise_not, "bitwise_not");
    tj_op_set_decomposition(TJ_OPS(ne_Tensor), ne, "ne");
    tj_op_set_decomposition(TJ_OPS(gt_Tensor), gt, "gt");
    tj_op_set_decomposition(TJ_OPS(le_Tensor), le, "le");
    tj_op_set_decomposition(TJ_OPS(ge_Tensor), ge, "ge");
    tj_op_set_decomposition(TJ_OPS(eq_Scalar), eq_scalar, "eq_scalar");
    tj_op_set_decomposition(TJ_OPS(ne_Scalar), ne_scalar, "ne_scalar");
    tj_op_set_decomposition(TJ_OPS(lt_Scalar), lt_scalar, "lt_scalar");
    tj_op_set_decomposition(TJ_OPS(le_Scalar), le_scalar, "le_scalar");
    tj_op_set_decomposition(TJ_OPS(gt_Scalar), gt_scalar, "gt_scalar");
    tj_op_set_decomposition(TJ_OPS(ge_Scalar), ge_scalar, "ge_scalar");
    tj_op_set_decomposition(TJ_OPS(minimum), minimum, "minimum");
    tj_op_set_decomposition(TJ_OPS(clamp), clamp, "clamp");
    tj_op_set_decomposition(TJ_OPS(clamp_Tensor), clamp_tensor, "clamp_tensor");
    tj_op_set_decomposition(TJ_OPS(masked_fill_Scalar), masked_fill, "masked_fill");
    tj_op_set_decomposition(TJ_OPS(masked_fill_Tensor), masked_fill_tensor, "masked_fill_tensor");
    tj_op_set_decomposition(TJ_OPS(where_ScalarOther), where_scalar_other, "where_scalar_other");
    tj_op_set_decomposition(TJ_OPS(where_ScalarSelf), where_scalar_self, "where_scalar_self");
    tj_op_set_decomposition(TJ_OPS(where_Scalar), where_scalar, "where_scalar");
    tj_op_set_decomposition(TJ_OPS(logical_not), logical_not_, "logical_not");
    tj_op_set_decomposition(TJ_OPS(logical_and), logical_and_, "logical_and");
    tj_op_set_decomposition(TJ_OPS(logical_or), logical_or_, "logical_or");
    tj_op_set_decomposition(TJ_OPS(logical_xor), logical_xor_, "logical_xor");
}
