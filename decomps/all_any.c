/* Decompositions of all / any, after torch._refs in PyTorch 1.13: self is
 * converted to bool (nan is true, -0.0 false), then
 *   any(x, dim, keepdim) = ne(sum(bool(x), dim, keepdim), False)
 *   all(x, dim, keepdim) = eq(sum(logical_not(bool(x)), dim, keepdim), 0)
 * with the sum counting in int64 (sum.dim_IntList over every dim for the
 * .default overloads), so an empty reduction gives false / true. */
#include "util.h"

/* dim: the dim argument, or NULL for every dim */
static tj_tensor *flag(tj_tensor *x, const tj_value *dim, bool keepdim, bool all)
{
    int64_t d = dim ? dim->u.i : 0;
    tj_tensor *b = tj_dc_to(x, TJ_BOOL);
    if (all) b = tj_logical_not(b);
    tj_tensor *count = tj_sum_dim(b, dim ? &d : NULL, dim ? 1 : 0, keepdim, TJ_DTYPE_NONE);
    return all ? tj_eq_scalar(count, tj_v_int(0)) : tj_ne_scalar(count, tj_v_bool(false));
}

static tj_status all_(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(all, args, m);
    return tj_dc_done(flag(args[0].u.t, NULL, false, true), outs);
}

static tj_status any_(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(any, args, m);
    return tj_dc_done(flag(args[0].u.t, NULL, false, false), outs);
}

static tj_status all_dim(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(all_dim, args, m);
    return tj_dc_done(flag(args[0].u.t, &args[1], args[2].u.b, true), outs);
}

static tj_status any_dim(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(any_dim, args, m);
    return tj_dc_done(flag(args[0].u.t, &args[1], args[2].u.b, false), outs);
}

void tj_register_all_any_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(all), all_, "all");
    tj_op_set_decomposition(TJ_OPS(any), any_, "any");
    tj_op_set_decomposition(TJ_OPS(all_dim), all_dim, "all_dim");
    tj_op_set_decomposition(TJ_OPS(any_dim), any_dim, "any_dim");
}
