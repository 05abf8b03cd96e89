/* Overloads of elementwise operators that run another overload's kernel:
 * clamp_min.Tensor / clamp_max.Tensor (clamp.Tensor with one bound),
 * remainder.Scalar_Tensor (remainder.Tensor with self boxed as a wrapped
 * number), round.decimals (round of self scaled by 10^decimals, as
 * ATen's round_decimals_kernel) and masked_fill.Tensor (masked_fill.Scalar
 * of the 0-dim value's element), and two operators torch 1.13's make_fx
 * records of ordinary code, run with another one's kernel: bitwise_not
 * (`~mask`: logical_not of bool, -1 - x of int64) and floor_divide (tensor
 * `//`: div with rounding_mode "floor"). Errors of the reused shape
 * functions are re-issued under the operator's own name. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "op_elementwise.h"
#include "op_elementwise_util.h"

/* ---- clamp_min.Tensor / clamp_max.Tensor: clamp.Tensor(self, min, None) /
 * clamp.Tensor(self, None, max) ---- */

#define CLAMP_T "aten::clamp.Tensor"

static void clamp_args(const tj_value *args, bool is_min, tj_value *out)
{
    out[0] = args[0];
    out[1] = is_min ? args[1] : tj_v_none();
    out[2] = is_min ? tj_v_none() : args[1];
}

#define CLAMP_BOUND_OP(ident, name, is_min)                                     \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs)              \
    {                                                                           \
        tj_value a[3];                                                          \
        clamp_args(args, is_min, a);                                            \
        return tj_error_renamed(name, CLAMP_T, tj_meta_clamp_Tensor(a, outs)); \
    }                                                                           \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs)   \
    {                                                                           \
        tj_value a[3];                                                          \
        clamp_args(args, is_min, a);                                            \
        return tj_error_renamed(name, CLAMP_T, tj_kernel_clamp_Tensor(a, outs)); \
    }

CLAMP_BOUND_OP(clamp_min_Tensor, "aten::clamp_min.Tensor", true)
CLAMP_BOUND_OP(clamp_max_Tensor, "aten::clamp_max.Tensor", false)

/* ---- remainder.Scalar_Tensor: the Scalar self promotes as a wrapped
 * number (5 % int64 is int64, 5.5 % int64 float32) ---- */

#define REM_ST "aten::remainder.Scalar_Tensor"
#define REM_T "aten::remainder.Tensor"

static void remainder_args(const tj_value *args, tj_ew_scalar_box *box, tj_value *out)
{
    out[0] = tj_v_tensor(tj_ew_box(box, &args[0], tj_result_type(args, 2)));
    out[1] = args[1];
}

tj_status tj_meta_remainder_Scalar_Tensor(const tj_value *args, tj_meta *outs)
{
    tj_ew_scalar_box box;
    tj_value a[2];
    remainder_args(args, &box, a);
    return tj_error_renamed(REM_ST, REM_T, tj_meta_remainder_Tensor(a, outs));
}

tj_status tj_kernel_remainder_Scalar_Tensor(const tj_value *args, tj_tensor *const *outs)
{
    tj_ew_scalar_box box;
    tj_value a[2];
    remainder_args(args, &box, a);
    return tj_error_renamed(REM_ST, REM_T, tj_kernel_remainder_Tensor(a, outs));
}

/* ---- round.decimals: nearbyint(x * 10^d) / 10^d, for negative d
 * nearbyint(x / 10^-d) * 10^-d, 10^|d| rounded to the dtype ---- */

#define ROUND_D "aten::round.decimals"

tj_status tj_meta_round_decimals(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    if (!tj_dtype_is_float(x->dtype))
        return tj_error(TJ_ERR_DTYPE, ROUND_D ": not supported for %s input (float32/float64 only)",
                        tj_dtype_name(x->dtype));
    outs[0].dtype = x->dtype;
    outs[0].ndim = x->ndim;
    memcpy(outs[0].shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    return TJ_OK;
}

tj_status tj_kernel_round_decimals(const tj_value *args, tj_tensor *const *outs)
{
    int64_t d = args[1].u.i;
    tj_value a[2] = {args[0], tj_v_float(pow(10.0, (double)(d < 0 ? -d : d)))};
    tj_status st = d == 0 ? TJ_OK : d > 0 ? tj_kernel_mul_Scalar(a, outs) : tj_kernel_div_Scalar(a, outs);
    a[0] = tj_v_tensor(outs[0]);
    if (st == TJ_OK) st = tj_kernel_round(d == 0 ? args : a, outs);
    if (st == TJ_OK && d != 0) st = d > 0 ? tj_kernel_div_Scalar(a, outs) : tj_kernel_mul_Scalar(a, outs);
    return st;
}

/* ---- masked_fill.Tensor: masked_fill.Scalar of the 0-dim value's element
 * (ATen's value.item()), read when the kernel runs, as ATen does, so that
 * fake tensors need no data ---- */

#define MF_T "aten::masked_fill.Tensor"
#define MF_S "aten::masked_fill.Scalar"

/* masked_fill.Scalar's arguments, the value being v. */
static void masked_fill_args(const tj_value *args, tj_value v, tj_value *out)
{
    out[0] = args[0];
    out[1] = args[1];
    out[2] = v;
}

/* A Scalar of the kind of t's dtype holding t's one element. */
static tj_value item(const tj_tensor *t)
{
    const char *p = tj_tensor_ptr(t);
    switch (t->dtype) {
    case TJ_INT64: return tj_v_int(*(const int64_t *)p);
    case TJ_BOOL: return tj_v_bool(*(const bool *)p);
    default: return tj_v_float(tj_load_f64(p, t->dtype));
    }
}

tj_status tj_meta_masked_fill_Tensor(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *value = args[2].u.t;
    if (value->ndim != 0)
        return tj_error(TJ_ERR_SHAPE, MF_T ": only supports a 0-dimensional value tensor, but got tensor with %d "
                                      "dimension(s)", value->ndim);
    /* masked_fill.Scalar's checks on a zero: all but the value's range */
    tj_value a[3];
    masked_fill_args(args, tj_v_int(0), a);
    return tj_error_renamed(MF_T, MF_S, tj_meta_masked_fill_Scalar(a, outs));
}

tj_status tj_kernel_masked_fill_Tensor(const tj_value *args, tj_tensor *const *outs)
{
    tj_value a[3];
    masked_fill_args(args, item(args[2].u.t), a);
    tj_status st = tj_scalar_check(MF_T, "value", &a[2], outs[0]->dtype);
    return st != TJ_OK ? st : tj_error_renamed(MF_T, MF_S, tj_kernel_masked_fill_Scalar(a, outs));
}

/* ---- bitwise_not: bool and int64 (ATen: "bitwise_not_cpu" not implemented
 * for a float dtype) ---- */

tj_status tj_meta_bitwise_not(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    if (tj_dtype_is_float(x->dtype))
        return tj_error(TJ_ERR_DTYPE, "aten::bitwise_not: not implemented for %s (bool and int64 only)",
                        tj_dtype_name(x->dtype));
    tj_meta_like(&outs[0], x);
    return TJ_OK;
}

/* ~x of bool is logical_not; of int64 -1 - x, which wraps as ~ does. */
tj_status tj_kernel_bitwise_not(const tj_value *args, tj_tensor *const *outs)
{
    if (args[0].u.t->dtype == TJ_BOOL) return tj_kernel_logical_not(args, outs);
    tj_value a[3] = {args[0], tj_v_int(-1), tj_v_int(1)};
    return tj_kernel_rsub_Scalar(a, outs);
}

/* ---- floor_divide and floor_divide.Scalar: div.Tensor_mode /
 * div.Scalar_mode(self, other, rounding_mode="floor"), as ATen 1.13 (which
 * floors, no longer truncates). make_fx records `y // 2` as floor_divide
 * with a Scalar other, which tj_graph_parse reads as floor_divide.Scalar;
 * the Scalar promotes as a wrapped number (int64 // 2.5 is float32). ---- */

static void floor_args(const tj_value *args, tj_value *out)
{
    out[0] = args[0];
    out[1] = args[1];
    out[2] = tj_v_str("floor");
}

#define FLOOR_DIVIDE_OP(ident, name, div_ident, div_name)                       \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs)              \
    {                                                                           \
        tj_value a[3];                                                          \
        floor_args(args, a);                                                    \
        return tj_error_renamed(name, div_name, tj_meta_##div_ident(a, outs));  \
    }                                                                           \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs)   \
    {                                                                           \
        tj_value a[3];                                                          \
        floor_args(args, a);                                                    \
        return tj_error_renamed(name, div_name, tj_kernel_##div_ident(a, outs)); \
    }

FLOOR_DIVIDE_OP(floor_divide, "aten::floor_divide", div_Tensor_mode, "aten::div.Tensor_mode")
FLOOR_DIVIDE_OP(floor_divide_Scalar, "aten::floor_divide.Scalar", div_Scalar_mode, "aten::div.Scalar_mode")
