/* searchsorted.Scalar and bucketize as searchsorted.Tensor (ATen 1.13's
 * kernels are the same search: bucketize(self, b) is searchsorted(b,
 * self) with a 1-D b, a Scalar self is a 0-dim wrapped number). */
#include "util.h"

/* the Scalar as the 0-dim tensor of the dtype it promotes to with b */
static tj_tensor *scalar_self(const tj_value *s, tj_tensor *b)
{
    tj_value v[2] = {tj_v_tensor(b), *s};
    return tj_dc_scalar(s, tj_result_type(v, 2));
}

static tj_status searchsorted_scalar(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(searchsorted_Scalar, args, m);
    tj_tensor *b = args[0].u.t;
    const char *side = args[4].kind == TJ_V_STR ? args[4].u.s : NULL;
    tj_tensor *sorter = args[5].kind == TJ_V_TENSOR ? args[5].u.t : NULL;
    return tj_dc_done(tj_searchsorted(b, scalar_self(&args[1], b), args[2].u.b, args[3].u.b, side, sorter), outs);
}

static tj_status bucketize(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(bucketize_Tensor, args, m);
    return tj_dc_done(tj_searchsorted(args[1].u.t, args[0].u.t, args[2].u.b, args[3].u.b, NULL, NULL), outs);
}

static tj_status bucketize_scalar(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(bucketize_Scalar, args, m);
    tj_tensor *b = args[1].u.t;
    return tj_dc_done(tj_searchsorted(b, scalar_self(&args[0], b), args[2].u.b, args[3].u.b, NULL, NULL), outs);
}

void tj_register_search_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(searchsorted_Scalar), searchsorted_scalar, "searchsorted.Scalar");
    tj_op_set_decomposition(TJ_OPS(bucketize_Tensor), bucketize, "bucketize.Tensor");
    tj_op_set_decomposition(TJ_OPS(bucketize_Scalar), bucketize_scalar, "bucketize.Scalar");
}
