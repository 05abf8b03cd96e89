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

/* fill_ and zero_ write one value into every element, so they accept a
 * self whose elements share memory (x.expand(4, 3).zero_(), as PyTorch):
 * along each broadcast (stride-0) dim every index names the same elements,
 * so the value goes through self narrowed to index 0 there, which copy_
 * writes (it refuses a destination that overlaps itself). Other overlaps
 * (overlapping unfold windows) have no such narrowing: refused, naming the
 * operator, where the undecomposed operator runs. */
static tj_status fill_with(const tj_op *op, tj_tensor *self, tj_value value, tj_value *outs)
{
    tj_tensor *dst = self;
    for (int d = 0; d < self->ndim && dst; d++)
        if (self->strides[d] == 0 && self->shape[d] > 1) dst = tj_slice(dst, d, true, 0, true, 1, 1);
    if (!dst) return tj_last_status();
    if (dst->numel != 0 && tj_may_self_overlap(dst)) {
        char shape[160], strides[160];
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: the decomposition cannot write a self of shape %s and strides %s "
                        "whose elements overlap other than along broadcast (stride-0) dims; clone() it first, or "
                        "leave %s out of the decomposition table", op->name,
                        tj_shape_str(self->ndim, self->shape, shape, sizeof shape),
                        tj_shape_str(self->ndim, self->strides, strides, sizeof strides), op->name);
    }
    tj_tensor *r = tj_full(dst->shape, dst->ndim, value, (int)dst->dtype);
    if (!r || !tj_copy_(dst, r)) return tj_last_status();
    outs[0] = tj_v_tensor(self);
    return TJ_OK;
}

static tj_status zero_(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(zero_, args, m);
    return fill_with(TJ_OPS(zero_), args[0].u.t, tj_v_int(0), outs);
}

static tj_status fill_(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(fill__Scalar, args, m);
    return fill_with(TJ_OPS(fill__Scalar), args[0].u.t, tj_dc_convert(&args[1], m[0].dtype), outs);
}

/* index_put_ into a self whose elements share memory (ATen accepts an
 * expanded self, with a deprecation warning) writes some of them: the
 * out-of-place result differs along the broadcast dims, and no copy_ of it
 * gives the elements the values the kernel leaves there. Refused, naming
 * the operator, where the undecomposed operator runs. */
static tj_status index_put_(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(index_put_, args, m);
    tj_tensor *self = args[0].u.t;
    if (self->numel != 0 && tj_may_self_overlap(self)) {
        char shape[160], strides[160];
        return tj_error(TJ_ERR_UNSUPPORTED, "aten::index_put_: the decomposition cannot write a self of shape %s and "
                        "strides %s whose elements share memory; clone() it first, or leave aten::index_put_ out of "
                        "the decomposition table", tj_shape_str(self->ndim, self->shape, shape, sizeof shape),
                        tj_shape_str(self->ndim, self->strides, strides, sizeof strides));
    }
    return write_back(args, tj_index_put(self, args[1].u.ts, args[1].n, args[2].u.t, args[3].u.b), outs);
}

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
