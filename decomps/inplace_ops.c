/* Decompositions of zero_, fill_, index_put_ and of the in-place forms of
 * op_inplace_forms.def: the out-of-place result written back with copy_, so
 * that a traced graph keeps the mutation for functionalisation. The
 * in-place operator's own shape function checks first that the result fits
 * self (no broadcasting of self, no dtype change). */
#include "util.h"

/* copy_(self, r); the result is self itself. */
static tj_status write_back(const tj_value *args, tj_tensor *r, tj_value *outs)
{
    if (!r) return tj_last_status();
    return tj_dc_done(tj_copy_(args[0].u.t, r), outs);
}

#define INPLACE(name, ident, EXPR)                                               \
    static tj_status name(const tj_value *args, tj_value *outs)                  \
    {                                                                            \
        TJ_DC_CHECK(ident, args, m);                                             \
        tj_tensor *self = args[0].u.t;                                           \
        (void)self;                                                              \
        return write_back(args, (EXPR), outs);                              \
    }

INPLACE(zero_, zero_, tj_full(m[0].shape, m[0].ndim, tj_v_int(0), (int)m[0].dtype))
INPLACE(fill_, fill__Scalar, tj_full(m[0].shape, m[0].ndim, tj_dc_convert(&args[1], m[0].dtype), (int)m[0].dtype))
INPLACE(index_put_, index_put_, tj_index_put(self, args[1].u.ts, args[1].n, args[2].u.t, args[3].u.b))

/* The in-place forms of op_inplace_forms.def, one rule for all: the
 * out-of-place partner on the same arguments, copy_ into self. */
static tj_status write_back_form(const tj_op *op, const tj_value *args, tj_value *outs)
{
    tj_meta m[TJ_MAX_RETURNS];
    if (tj_dc_check(op, args, m) != TJ_OK) return tj_last_status();
    const tj_op *f = tj_op_inplace_functional(op);
    tj_value r[TJ_MAX_RETURNS];
    if (tj_dispatch(f, args, f->nargs, r) != TJ_OK) return tj_last_status();
    return write_back(args, r[0].u.t, outs);
}

#define TJ_INPLACE_FORM(ident, schema, functional)                      \
    static tj_status form_##ident(const tj_value *args, tj_value *outs) \
    {                                                                   \
        return write_back_form(TJ_OPS(ident), args, outs);              \
    }
#include "op_inplace_forms.def"
#undef TJ_INPLACE_FORM

/* selu_ (implicit, as in ATen 1.13): elu_ with SELU's alpha and scale, so
 * a graph records elu_ */
static tj_status selu_(const tj_value *args, tj_value *outs)
{
    return tj_dc_done(tj_elu_(args[0].u.t, tj_v_float(1.6732632423543772848170429916717),
                              tj_v_float(1.0507009873554804934193349852946), tj_v_int(1)), outs);
}

/* square_ (implicit, as in ATen 1.13): pow_.Scalar(self, 2), so a graph
 * records pow_ */
static tj_status square_(const tj_value *args, tj_value *outs)
{
    return tj_dc_done(tj_pow_scalar_(args[0].u.t, tj_v_int(2)), outs);
}

void tj_register_inplace_ops_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(selu_), selu_, "selu_");
    tj_op_set_decomposition(TJ_OPS(square_), square_, "square_");
#define TJ_INPLACE_FORM(ident, schema, functional) \
    tj_op_set_decomposition(TJ_OPS(ident), form_##ident, "write_back_" #ident);
#include "op_inplace_forms.def"
#undef TJ_INPLACE_FORM
    tj_op_set_decomposition(TJ_OPS(zero_), zero_, "zero_");
    tj_op_set_decomposition(TJ_OPS(fill__Scalar), fill_, "fill_");
    tj_op_set_decomposition(TJ_OPS(index_put_), index_put_, "index_put_");
}
