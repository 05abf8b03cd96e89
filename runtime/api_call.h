/* What the typed API files (runtime/api*.c) share: dispatching a boxed
 * call and handing its results to the caller, and the boxing shorthands.
 * Internal to runtime/. */
#ifndef TJIT_RUNTIME_API_CALL_H
#define TJIT_RUNTIME_API_CALL_H

#include "internal.h"

/* Dispatches and returns the first result (NULL on failure). */
static inline tj_tensor *tj_api_call1(const tj_op *op, const tj_value *args)
{
    tj_value outs[TJ_MAX_RETURNS];
    if (tj_dispatch(op, args, op->nargs, outs) != TJ_OK) return NULL;
    return outs[0].u.t;
}

/* Dispatches and hands results to the non-NULL pointers (up to three);
 * results the caller did not ask for are released. */
static inline tj_status tj_api_calln(const tj_op *op, const tj_value *args, tj_tensor **r0, tj_tensor **r1,
                                     tj_tensor **r2)
{
    tj_tensor **dst[3] = {r0, r1, r2};
    for (int i = 0; i < 3; i++)
        if (dst[i]) *dst[i] = NULL;
    tj_value outs[TJ_MAX_RETURNS];
    tj_status st = tj_dispatch(op, args, op->nargs, outs);
    if (st != TJ_OK) return st;
    for (int i = 0; i < op->nreturns && i < 3; i++) {
        if (dst[i]) *dst[i] = outs[i].u.t;
        else if (outs[i].kind == TJ_V_TENSOR) tj_scope_drop(outs[i].u.t); /* not wanted */
    }
    return TJ_OK;
}

#define CALL(ident, ...) tj_api_call1(TJ_OPS(ident), (const tj_value[]){__VA_ARGS__})
/* results to r0, r1, r2 (NULL: not wanted) */
#define CALLN(ident, r0, r1, r2, ...) tj_api_calln(TJ_OPS(ident), (const tj_value[]){__VA_ARGS__}, r0, r1, r2)
#define T(x) tj_v_tensor(x)
#define I(x) tj_v_int(x)
#define F(x) tj_v_float(x)
#define B(x) tj_v_bool(x)
#define L(p, n) tj_v_ints((p), (n))
/* Only TJ_DTYPE_NONE means None: any other value goes to the dispatcher as a
 * dtype, whose argument check refuses one out of range, naming the operator
 * and the value (a negative one used to pass as None). */
#define DT(d) ((d) == TJ_DTYPE_NONE ? tj_v_none() : tj_v_dtype((tj_dtype)(d)))
#define OPTL(p, n) ((p) ? tj_v_ints((p), (n)) : tj_v_none())
#define OPTF(p, n) ((p) ? tj_v_floats((p), (n)) : tj_v_none())

#endif
