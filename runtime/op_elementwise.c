/* Elementwise operators: argument checks, result dtype and shape (shape
 * functions) and the glue from boxed arguments to the loops in kernels/. */
#include <string.h>

#include "iter.h"
#include "kernels/elementwise.h"
#include "op_elementwise.h"

/* Broadcast shape of two tensors, result dtype from `promo` values. */
static tj_status meta_broadcast2(const char *op, const tj_tensor *a, const tj_tensor *b, tj_dtype dtype, tj_meta *out)
{
    out->dtype = dtype;
    return tj_broadcast_shapes(op, a->ndim, a->shape, b->ndim, b->shape, &out->ndim, out->shape);
}

tj_status tj_meta_add(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *a = args[0].u.t, *b = args[1].u.t;
    tj_dtype dt = tj_result_type(args, 2);
    if (dt == TJ_BOOL && args[2].kind == TJ_V_FLOAT)
        return tj_error(TJ_ERR_DTYPE, "aten::add.Tensor: alpha %g must be bool-compatible for bool tensors", args[2].u.f);
    if (tj_dtype_category(dt) != TJ_CAT_FLOAT && args[2].kind == TJ_V_FLOAT)
        return tj_error(TJ_ERR_DTYPE, "aten::add.Tensor: float alpha %g for %s tensors", args[2].u.f, tj_dtype_name(dt));
    return meta_broadcast2("aten::add.Tensor", a, b, dt, &outs[0]);
}

tj_status tj_kernel_add(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *in[2] = {args[0].u.t, args[1].u.t};
    tj_dtype dt = outs[0]->dtype;
    tj_k_axpby_args k = {.alpha = tj_value_as_double(&args[2]), .dtype = dt};
    tj_elementwise(outs[0], in, 2, dt, tj_k_add_loop, &k);
    return TJ_OK;
}
