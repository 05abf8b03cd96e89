/* hardshrink, softshrink and their backward operators as torch._refs /
 * torch._decomp write them, in where and comparisons (a nan self fails
 * every comparison: hardshrink keeps it, softshrink gives 0, the backward
 * operators pass the gradient). */
#include "util.h"

/* -lambd <= self <= lambd, as a bool tensor */
static tj_tensor *inside(tj_tensor *self, const tj_value *lambd)
{
    tj_value neg = tj_v_float(-tj_value_as_double(lambd));
    return tj_logical_and(tj_ge_scalar(self, neg), tj_le_scalar(self, *lambd));
}

static tj_status hardshrink(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(hardshrink, args, m);
    tj_tensor *x = args[0].u.t;
    return tj_dc_done(tj_where_scalar_self(inside(x, &args[1]), tj_v_float(0), x), outs);
}

/* where(x > l, x - l, where(x < -l, x + l, 0)) */
static tj_status softshrink(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(softshrink, args, m);
    tj_tensor *x = args[0].u.t;
    tj_value l = args[1], neg = tj_v_float(-tj_value_as_double(&l));
    tj_tensor *below = tj_where_scalar_other(tj_lt_scalar(x, neg), tj_add_scalar(x, l), tj_v_float(0));
    return tj_dc_done(tj_where(tj_gt_scalar(x, l), tj_sub_scalar(x, l), below), outs);
}

/* where(-l <= self <= l, 0, grad_output), broadcast */
static tj_status shrink_backward(const tj_value *args, tj_value *outs)
{
    tj_tensor *g = args[0].u.t, *x = args[1].u.t;
    return tj_dc_done(tj_where_scalar_self(inside(x, &args[2]), tj_v_float(0), g), outs);
}

static tj_status hardshrink_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(hardshrink_backward, args, m);
    return shrink_backward(args, outs);
}

static tj_status softshrink_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(softshrink_backward, args, m);
    return shrink_backward(args, outs);
}

void tj_register_shrink_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(hardshrink), hardshrink, "hardshrink");
    tj_op_set_decomposition(TJ_OPS(softshrink), softshrink, "softshrink");
    tj_op_set_decomposition(TJ_OPS(hardshrink_backward), hardshrink_backward, "hardshrink_backward");
    tj_op_set_decomposition(TJ_OPS(softshrink_backward), softshrink_backward, "softshrink_backward");
}
