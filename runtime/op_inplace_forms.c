/* The in-place forms of op_inplace_forms.def: each line's shape function
 * and kernel are the generic ones of op_inplace.c bound to the line's
 * operator and its out-of-place partner, and the pairing itself, which
 * functionalisation, the decompositions and autograd read. */
#include "op_inplace.h"

#define TJ_INPLACE_FORM(ident, schema, functional)                                  \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs)                  \
    {                                                                               \
        return tj_inplace_meta(TJ_OPS(ident), TJ_OPS(functional), args, outs);      \
    }                                                                               \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs)       \
    {                                                                               \
        return tj_inplace_kernel(TJ_OPS(ident), TJ_OPS(functional), args, outs);    \
    }
#include "op_inplace_forms.def"
#undef TJ_INPLACE_FORM

const tj_op *tj_op_inplace_functional(const tj_op *op)
{
    if (!op || !tj_op_is_builtin(op)) return NULL;
    switch (op->index) {
#define TJ_INPLACE_FORM(ident, schema, functional) \
    case TJ_OPI_##ident: return TJ_OPS(functional);
#include "op_inplace_forms.def"
#undef TJ_INPLACE_FORM
    default: return NULL;
    }
}
