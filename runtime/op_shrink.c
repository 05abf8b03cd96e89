/* aten::hardshrink, softshrink and their backward operators, as ATen 1.13
 * (Activation.cpp): float self only ("hardshrink_cpu" not implemented for
 * integers), softshrink's lambd >= 0, the loops of kernels/shrink.h
 * (decompositions: decomps/shrink.c). */
#include <string.h>

#include "iter.h"
#include "kernels/shrink.h"
#include "op_search_select.h"

#define HARDSHRINK "aten::hardshrink"
#define SOFTSHRINK "aten::softshrink"
#define HARDSHRINK_BACKWARD "aten::hardshrink_backward"
#define SOFTSHRINK_BACKWARD "aten::softshrink_backward"

static tj_status check_self(const char *op, const char *kernel, const tj_tensor *x)
{
    if (tj_dtype_is_float(x->dtype)) return TJ_OK;
    char sh[160];
    return tj_error(TJ_ERR_DTYPE, "%s: \"%s\" not implemented for '%s' (self %s %s)", op, kernel,
                    x->dtype == TJ_INT64 ? "Long" : "Bool", tj_dtype_name(x->dtype),
                    tj_shape_str(x->ndim, x->shape, sh, sizeof sh));
}

static tj_status check_lambd(const char *op, const tj_value *lambd)
{
    double l = tj_value_as_double(lambd);
    if (l >= 0) return TJ_OK;
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: lambda must be greater or equal to 0, but found to be %g.", op, l);
}

/* (self, lambd) */
static tj_status meta_unary(const char *op, const char *kernel, bool soft, const tj_value *args, tj_meta *outs)
{
    if (check_self(op, kernel, args[0].u.t) != TJ_OK) return tj_last_status();
    if (soft && check_lambd(op, &args[1]) != TJ_OK) return tj_last_status();
    tj_meta_like(&outs[0], args[0].u.t);
    return TJ_OK;
}

static tj_status kernel_unary(tj_loop_fn loop, const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *x = args[0].u.t;
    tj_k_shrink k = {x->dtype, tj_value_as_double(&args[1])};
    tj_elementwise(outs[0], &x, 1, x->dtype, loop, &k);
    return TJ_OK;
}

tj_status tj_meta_hardshrink(const tj_value *args, tj_meta *outs)
{
    return meta_unary(HARDSHRINK, "hardshrink_cpu", false, args, outs);
}
tj_status tj_meta_softshrink(const tj_value *args, tj_meta *outs)
{
    return meta_unary(SOFTSHRINK, "softshrink_cpu", true, args, outs);
}
tj_status tj_kernel_hardshrink(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_unary(tj_k_hardshrink_loop, args, outs);
}
tj_status tj_kernel_softshrink(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_unary(tj_k_softshrink_loop, args, outs);
}

/* (grad_output, self, lambd): self's float dtype for both, shapes that
 * broadcast together (the result's shape) */
static tj_status meta_backward(const char *op, const char *kernel, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *g = args[0].u.t, *x = args[1].u.t;
    if (check_self(op, kernel, x) != TJ_OK) return tj_last_status();
    if (g->dtype != x->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: grad_output (%s) and self (%s) must have the same dtype", op,
                        tj_dtype_name(g->dtype), tj_dtype_name(x->dtype));
    tj_meta_like(&outs[0], x);
    return tj_broadcast_shapes(op, g->ndim, g->shape, x->ndim, x->shape, &outs[0].ndim, outs[0].shape);
}

static tj_status kernel_backward(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *in[2] = {args[0].u.t, args[1].u.t};
    tj_k_shrink k = {in[1]->dtype, tj_value_as_double(&args[2])};
    tj_elementwise(outs[0], in, 2, k.dtype, tj_k_shrink_backward_loop, &k);
    return TJ_OK;
}

tj_status tj_meta_hardshrink_backward(const tj_value *args, tj_meta *outs)
{
    return meta_backward(HARDSHRINK_BACKWARD, "hardshrink_backward_cpu", args, outs);
}
tj_status tj_meta_softshrink_backward(const tj_value *args, tj_meta *outs)
{
    return meta_backward(SOFTSHRINK_BACKWARD, "softshrink_backward_cpu", args, outs);
}
tj_status tj_kernel_hardshrink_backward(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_backward(args, outs);
}
tj_status tj_kernel_softshrink_backward(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_backward(args, outs);
}
