/* The typed API of include/tjit/inplace.h: box, dispatch, and for in-place
 * operators hand back self (the dispatcher's extra reference to it is
 * dropped, so a call needs no release). */
#include "internal.h"

static tj_tensor *call1(const tj_op *op, const tj_value *args)
{
    tj_value outs[TJ_MAX_RETURNS];
    if (tj_dispatch(op, args, op->nargs, outs) != TJ_OK) return NULL;
    return outs[0].u.t;
}

static tj_tensor *call_inplace(const tj_op *op, const tj_value *args)
{
    tj_tensor *r = call1(op, args);
    if (!r) return NULL;
    tj_scope_drop(r); /* r is self: the caller's reference keeps it alive */
    return r;
}

#define T(x) tj_v_tensor(x)
#define CALL(ident, ...) call1(TJ_OPS(ident), (const tj_value[]){__VA_ARGS__})
#define CALL_(ident, ...) call_inplace(TJ_OPS(ident), (const tj_value[]){__VA_ARGS__})

tj_tensor *tj_add_(tj_tensor *self, tj_tensor *other, tj_value alpha)
{
    return CALL_(add__Tensor, T(self), T(other), alpha);
}
tj_tensor *tj_add_scalar_(tj_tensor *self, tj_value other, tj_value alpha)
{
    return CALL_(add__Scalar, T(self), other, alpha);
}
tj_tensor *tj_sub_(tj_tensor *self, tj_tensor *other, tj_value alpha)
{
    return CALL_(sub__Tensor, T(self), T(other), alpha);
}
tj_tensor *tj_mul_(tj_tensor *self, tj_tensor *other) { return CALL_(mul__Tensor, T(self), T(other)); }
tj_tensor *tj_mul_scalar_(tj_tensor *self, tj_value other) { return CALL_(mul__Scalar, T(self), other); }
tj_tensor *tj_div_(tj_tensor *self, tj_tensor *other) { return CALL_(div__Tensor, T(self), T(other)); }
tj_tensor *tj_div_scalar_(tj_tensor *self, tj_value other) { return CALL_(div__Scalar, T(self), other); }
tj_tensor *tj_sqrt_(tj_tensor *self) { return CALL_(sqrt_, T(self)); }
tj_tensor *tj_addcmul_(tj_tensor *self, tj_tensor *tensor1, tj_tensor *tensor2, tj_value value)
{
    return CALL_(addcmul_, T(self), T(tensor1), T(tensor2), value);
}
tj_tensor *tj_addcdiv_(tj_tensor *self, tj_tensor *tensor1, tj_tensor *tensor2, tj_value value)
{
    return CALL_(addcdiv_, T(self), T(tensor1), T(tensor2), value);
}
tj_tensor *tj_lerp_(tj_tensor *self, tj_tensor *end, tj_value weight)
{
    return CALL_(lerp__Scalar, T(self), T(end), weight);
}
tj_tensor *tj_copy_(tj_tensor *self, tj_tensor *src) { return CALL_(copy_, T(self), T(src), tj_v_bool(false)); }
tj_tensor *tj_zero_(tj_tensor *self) { return CALL_(zero_, T(self)); }
tj_tensor *tj_fill_(tj_tensor *self, tj_value value) { return CALL_(fill__Scalar, T(self), value); }
tj_tensor *tj_tril_(tj_tensor *self, int64_t diagonal) { return CALL_(tril_, T(self), tj_v_int(diagonal)); }
tj_tensor *tj_triu_(tj_tensor *self, int64_t diagonal) { return CALL_(triu_, T(self), tj_v_int(diagonal)); }
tj_tensor *tj_index_put_(tj_tensor *self, tj_tensor *const *indices, int n, tj_tensor *values, bool accumulate)
{
    return CALL_(index_put_, T(self), tj_v_tensors(indices, n), T(values), tj_v_bool(accumulate));
}

tj_tensor *tj_addcmul(tj_tensor *self, tj_tensor *tensor1, tj_tensor *tensor2, tj_value value)
{
    return CALL(addcmul, T(self), T(tensor1), T(tensor2), value);
}
tj_tensor *tj_addcdiv(tj_tensor *self, tj_tensor *tensor1, tj_tensor *tensor2, tj_value value)
{
    return CALL(addcdiv, T(self), T(tensor1), T(tensor2), value);
}
tj_tensor *tj_lerp(tj_tensor *self, tj_tensor *end, tj_value weight)
{
    return CALL(lerp_Scalar, T(self), T(end), weight);
}
tj_tensor *tj_copy(tj_tensor *self, tj_tensor *src) { return CALL(copy, T(self), T(src), tj_v_bool(false)); }
tj_tensor *tj_zero(tj_tensor *self) { return CALL(zero, T(self)); }
tj_tensor *tj_fill(tj_tensor *self, tj_value value) { return CALL(fill_Scalar, T(self), value); }
tj_tensor *tj_slice_scatter(tj_tensor *self, tj_tensor *src, int64_t dim, bool has_start, int64_t start,
                            bool has_end, int64_t end, int64_t step)
{
    return CALL(slice_scatter, T(self), T(src), tj_v_int(dim), has_start ? tj_v_int(start) : tj_v_none(),
                has_end ? tj_v_int(end) : tj_v_none(), tj_v_int(step));
}
tj_tensor *tj_select_scatter(tj_tensor *self, tj_tensor *src, int64_t dim, int64_t index)
{
    return CALL(select_scatter, T(self), T(src), tj_v_int(dim), tj_v_int(index));
}
