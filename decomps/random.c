/* randint and the randint_like forms as randint.low (ATen's randint is
 * random_(0, high) as randint.low's is random_(low, high); the _like forms
 * take self's shape and, for dtype None, its dtype). */
#include "util.h"

static tj_status randint(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(randint, args, m);
    return tj_dc_done(tj_randint_low(0, args[0].u.i, m[0].shape, m[0].ndim, (int)m[0].dtype), outs);
}

static tj_status randint_like(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(randint_like, args, m);
    return tj_dc_done(tj_randint_low(0, args[1].u.i, m[0].shape, m[0].ndim, (int)m[0].dtype), outs);
}

static tj_status randint_like_low_dtype(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(randint_like_low_dtype, args, m);
    return tj_dc_done(tj_randint_low(args[1].u.i, args[2].u.i, m[0].shape, m[0].ndim, (int)m[0].dtype), outs);
}

void tj_register_random_decompositions(void);
void tj_register_random_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(randint), randint, "randint");
    tj_op_set_decomposition(TJ_OPS(randint_like), randint_like, "randint_like");
    tj_op_set_decomposition(TJ_OPS(randint_like_low_dtype), randint_like_low_dtype, "randint_like_low_dtype");
}
