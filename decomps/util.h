/* Helpers shared by the decompositions of decomps/: the argument checks of an
 * operator's own shape function (so that a decomposed call fails exactly like
 * the kernel), Scalars boxed as 0-dim tensors the way a kernel converts a
 * wrapped number, and the result hand-off. */
#ifndef TJIT_DECOMPS_UTIL_H
#define TJIT_DECOMPS_UTIL_H

#include <float.h>
#include <math.h>

#include "internal.h"

/** outs[0] = r, or the failing inner call's status when r is NULL. */
static inline tj_status tj_dc_done(tj_tensor *r, tj_value *outs)
{
    if (!r) return tj_last_status();
    outs[0] = tj_v_tensor(r);
    return TJ_OK;
}

/** Runs op's shape function on args: the checks (and errors) of the kernel,
 * including the one the dispatcher makes when it creates the kernel's
 * outputs (an element count that overflows: the shape function accepts it,
 * and a decomposition multiplying those sizes would overflow); `m`
 * receives the output geometry (room for op's returns). */
static inline tj_status tj_dc_check(const tj_op *op, const tj_value *args, tj_meta *m)
{
    for (int i = 0; i < op->nreturns; i++) m[i] = (tj_meta){.alias = -1};
    tj_status st = op->meta(args, m);
    for (int i = 0; i < op->nreturns && st == TJ_OK; i++) {
        int64_t numel;
        if (m[i].undefined || m[i].alias >= 0 || tj_checked_numel(m[i].ndim, m[i].shape, &numel, "tensor") == TJ_OK)
            continue;
        char why[512];
        snprintf(why, sizeof why, "%s", tj_last_error());
        st = tj_error(tj_last_status(), "%s: output %d: %s", op->name, i, why);
    }
    return st;
}

/** In a decomposition: declares `tj_meta m[TJ_MAX_RETURNS]`, runs the shape
 * function of TJ_OPS(ident) on args into it and returns its error. */
#define TJ_DC_CHECK(ident, args, m) \
    tj_meta m[TJ_MAX_RETURNS];      \
    if (tj_dc_check(TJ_OPS(ident), args, m) != TJ_OK) return tj_last_status()

/** An optional Tensor argument, or NULL. */

/** The Scalar v converted to `dt` as a kernel converts a wrapped number
 * (int -> float rounds once, float -> int truncates with nan -> 0 and
 * saturation, float64 -> float32 may overflow to inf), as a Scalar that
 * scalar_tensor stores unchanged. */
static inline tj_value tj_dc_convert(const tj_value *v, tj_dtype dt)
{
    bool is_f = v->kind == TJ_V_FLOAT;
    double f = is_f ? v->u.f : 0;
    int64_t i = v->kind == TJ_V_INT ? v->u.i : v->kind == TJ_V_BOOL ? (int64_t)v->u.b
              : f != f ? 0 : f >= 9223372036854775807.0 ? INT64_MAX : f <= -9223372036854775808.0 ? INT64_MIN : (int64_t)f;
    switch (dt) {
    case TJ_FLOAT32: return tj_v_float(is_f ? (double)(float)f : (double)(float)i);
    case TJ_FLOAT64: return is_f ? tj_v_float(f) : tj_v_float((double)i);
    case TJ_INT64: return tj_v_int(i);
    case TJ_BOOL: return tj_v_bool(is_f ? f != 0 : i != 0);
    default: break; /* storage dtypes: no decomposition computes in them */
    }
    return *v;
}

/** A 0-dim tensor of `dt` holding the Scalar v as a kernel would convert it. */
static inline tj_tensor *tj_dc_scalar(const tj_value *v, tj_dtype dt)
{
    return tj_scalar_tensor(tj_dc_convert(v, dt), (int)dt);
}

/** A 0-dim tensor of `dt` holding the number x. */
static inline tj_tensor *tj_dc_number(double x, tj_dtype dt)
{
    tj_value v = tj_v_float(x);
    return tj_dc_scalar(&v, dt);
}

/** x converted to dt (x itself when it already has it). */
static inline tj_tensor *tj_dc_to(tj_tensor *x, tj_dtype dt)
{
    return x && tj_tensor_dtype(x) != dt ? tj_to_copy(x, (int)dt) : x;
}

#endif
