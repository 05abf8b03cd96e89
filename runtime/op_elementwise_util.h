/* Helpers shared by the elementwise glue files (op_elementwise.c,
 * op_elementwise_backward.c, op_elementwise_overloads.c) and the loop
 * descriptions of op_pointwise.c: Scalar conversion, result
 * dtypes and loop contexts that a kernel and its fused loop must compute
 * alike, broadcasting shape functions, the `approximate` argument.
 * Internal to runtime/. */
#ifndef TJIT_RUNTIME_OP_ELEMENTWISE_UTIL_H
#define TJIT_RUNTIME_OP_ELEMENTWISE_UTIL_H

#include <math.h>
#include <string.h>

#include "internal.h"
#include "iter.h"
#include "kernels/elementwise.h"

/* double -> int64 without undefined behaviour (nan gives 0, saturates). */
static inline int64_t tj_ew_f64_to_i64(double f)
{
    if (f != f) return 0;
    if (f >= 9223372036854775807.0) return INT64_MAX;
    if (f <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)f;
}

/** A Scalar (INT, FLOAT or BOOL value) converted to `dt` as PyTorch converts
 * a wrapped number: int64 -> float rounds once, float -> int truncates. */
static inline tj_k_scalar tj_ew_scalar(const tj_value *v, tj_dtype dt)
{
    tj_k_scalar s;
    memset(&s, 0, sizeof s);
    bool is_f = v->kind == TJ_V_FLOAT;
    int64_t i = v->kind == TJ_V_INT ? v->u.i : v->kind == TJ_V_BOOL ? (int64_t)v->u.b : tj_ew_f64_to_i64(v->u.f);
    switch (dt) {
    case TJ_FLOAT32: s.f32 = is_f ? (float)v->u.f : (float)i; break;
    case TJ_FLOAT64: s.f64 = is_f ? v->u.f : (double)i; break;
    case TJ_INT64: s.i64 = i; break;
    case TJ_BOOL: s.b = is_f ? v->u.f != 0 : i != 0; break;
    default: break; /* storage dtypes: the dispatcher keeps them from compute kernels */
    }
    return s;
}

/** A Scalar as a 0-dim tensor on the stack (no allocation), so that Scalar
 * overloads run the Tensor overloads' loops; the engine converts it once. */
typedef struct tj_ew_scalar_box {
    tj_tensor t;
    tj_storage s;
    tj_k_scalar v;
} tj_ew_scalar_box;

static inline tj_tensor *tj_ew_box(tj_ew_scalar_box *b, const tj_value *v, tj_dtype dt)
{
    memset(b, 0, sizeof *b);
    b->v = tj_ew_scalar(v, dt);
    b->s.data = &b->v;
    b->s.nbytes = sizeof b->v;
    b->t.dtype = dt;
    b->t.numel = 1;
    b->t.storage = &b->s;
    return &b->t;
}

/** result_type of args[0..n) (tj_result_type). Two tensors of one dtype
 * (the common case) give that dtype whatever their ranks, without walking
 * the lattice. */
static inline tj_dtype tj_ew_result_type(const tj_value *args, int n)
{
    if (n == 2 && args[0].kind == TJ_V_TENSOR && args[1].kind == TJ_V_TENSOR && args[0].u.t && args[1].u.t &&
        args[0].u.t->dtype == args[1].u.t->dtype)
        return args[0].u.t->dtype;
    return tj_result_type(args, n);
}

/** The dtype a comparison (eq ... ge, logical_and / or / xor; self a
 * tensor, other a tensor or a Scalar) computes in: result_type(self,
 * other). Its result is bool. */
static inline tj_dtype tj_ew_compare_dtype(const tj_value *args) { return tj_ew_result_type(args, 2); }

/** Fills *k, the context of tj_k_add_loop for add / sub / rsub (self +
 * alpha * other in `dt`; sub negates alpha): `alpha` (INT, FLOAT or BOOL)
 * converted to dt as a wrapped number, for int64 and bool results to int64
 * (negated with wrapping). Inlined, filling the caller's struct, so that
 * add's dispatch path compiles to the code it had written out (is_sub a
 * constant; a returned struct schedules differently). */
static inline __attribute__((always_inline)) void tj_ew_axpby_args(tj_k_axpby_args *k, const tj_value *alpha,
                                                                tj_dtype dt, bool is_sub)
{
    tj_k_scalar al = tj_ew_scalar(alpha, dt == TJ_BOOL ? TJ_INT64 : dt);
    *k = (tj_k_axpby_args){.dtype = dt};
    if (dt == TJ_FLOAT32) k->alpha = is_sub ? -al.f32 : al.f32;
    else if (dt == TJ_FLOAT64) k->alpha = is_sub ? -al.f64 : al.f64;
    else k->ialpha = is_sub ? (int64_t)(0 - (uint64_t)al.i64) : al.i64;
}

/** Output of the broadcast shape of the n tensors (NULL entries skipped). */
static inline tj_status tj_ew_meta_broadcast(const char *op, const tj_tensor *const *ts, int n, tj_dtype dt,
                                             tj_meta *out)
{
    out->dtype = dt;
    out->ndim = 0;
    for (int i = 0; i < n; i++) {
        if (!ts[i]) continue;
        tj_status st = tj_broadcast_shapes(op, out->ndim, out->shape, ts[i]->ndim, ts[i]->shape, &out->ndim,
                                           out->shape);
        if (st != TJ_OK) return st;
    }
    return TJ_OK;
}

/** Reads gelu's `approximate`: "none" or "tanh" (TJ_ERR_INVALID_ARGUMENT
 * otherwise). */
static inline tj_status tj_ew_approximate(const char *op, const tj_value *v, bool *is_tanh)
{
    const char *s = v->u.s;
    if (!strcmp(s, "none") || !strcmp(s, "tanh")) {
        *is_tanh = s[0] == 't';
        return TJ_OK;
    }
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: approximate argument must be either 'none' or 'tanh', got '%s'", op,
                    s);
}

/** TJ_ERR_DTYPE unless `dt` is float32 or float64. */
static inline tj_status tj_ew_require_float(const char *op, tj_dtype dt)
{
    if (tj_dtype_is_float(dt)) return TJ_OK;
    return tj_error(TJ_ERR_DTYPE, "%s: not supported for %s (float32/float64 only)", op, tj_dtype_name(dt));
}

/** Runs a tj_k_binary_loop operator over two tensors computed in `dt`. */
static inline tj_status tj_ew_run_binary(tj_tensor *out, tj_tensor *a, tj_tensor *b, tj_dtype dt, tj_k_binary_op op)
{
    tj_k_binary_args k = {.op = op, .dtype = dt};
    tj_tensor *in[2] = {a, b};
    tj_elementwise(out, in, 2, dt, tj_k_binary_loop, &k);
    return TJ_OK;
}

#endif
