/* The Scalar overloads of the binary special functions torch 1.13 records
 * (copysign.Scalar, special_xlog1py.self_scalar / .other_scalar,
 * xlogy.Scalar_Self / .Scalar_Other): as ATen's CompositeExplicitAutograd
 * kernels, the Tensor overload with the Scalar boxed as a wrapped number
 * (so `int64 tensor, 2.5` computes in float32), its errors re-issued under
 * the overload's name. Decompositions in decomps/overloads.c. */
#include "op_elementwise.h"
#include "op_elementwise_util.h"
#include "op_special.h"

/* args with the Scalar at `at` (0: self, 1: other) boxed in
 * result_type(self, other) */
static void boxed_args(const tj_value *args, int at, tj_ew_scalar_box *box, tj_value *out)
{
    out[0] = args[0], out[1] = args[1];
    out[at] = tj_v_tensor(tj_ew_box(box, &args[at], tj_result_type(args, 2)));
}

#define SCALAR_OVERLOAD(ident, name, at, tensor_ident, tensor_name)                          \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs)                           \
    {                                                                                        \
        tj_ew_scalar_box box;                                                                \
        tj_value a[2];                                                                       \
        boxed_args(args, at, &box, a);                                                       \
        return tj_error_renamed(name, tensor_name, tj_meta_##tensor_ident(a, outs));         \
    }                                                                                        \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs)                \
    {                                                                                        \
        tj_ew_scalar_box box;                                                                \
        tj_value a[2];                                                                       \
        boxed_args(args, at, &box, a);                                                       \
        return tj_error_renamed(name, tensor_name, tj_kernel_##tensor_ident(a, outs));       \
    }

SCALAR_OVERLOAD(copysign_Scalar, "aten::copysign.Scalar", 1, copysign_Tensor, "aten::copysign.Tensor")
SCALAR_OVERLOAD(special_xlog1py_self_scalar, "aten::special_xlog1py.self_scalar", 0, special_xlog1py,
                "aten::special_xlog1py")
SCALAR_OVERLOAD(special_xlog1py_other_scalar, "aten::special_xlog1py.other_scalar", 1, special_xlog1py,
                "aten::special_xlog1py")
SCALAR_OVERLOAD(xlogy_Scalar_Self, "aten::xlogy.Scalar_Self", 0, xlogy_Tensor, "aten::xlogy.Tensor")
SCALAR_OVERLOAD(xlogy_Scalar_Other, "aten::xlogy.Scalar_Other", 1, xlogy_Tensor, "aten::xlogy.Tensor")
