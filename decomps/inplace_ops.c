/* Decompositions of zero_, fill_, index_put_ and of the in-place forms of
 * op_inplace_forms.def: the out-of-place result written back with copy_, so
 * that a traced graph keeps the mutation for functionalisation. The
 * in-place operator's own shape function checks first that the result fits
 * self (no broadcasting of self, no dtype change). */
#include "util.h"

/* copy_(self, r) for in-place operator op (r broadcasts to self); the
 * result is self itself. copy_ refuses a destination whose elements share
 * memory, which fill_, zero_, index_fill_ and index_put_ accept (as ATen:
 * x.expand(4, 3).zero_()). Along each broadcast (stride-0) dim every index
 * names the same elements: where op gives them one value
 * (tj_inplace_writes_one_value), self and r are written narrowed to index 0
 * there. Otherwise (index_put_, index_fill_ along a broadcast dim,
 * overlapping unfold windows) no copy_ gives the values the kernel leaves:
 * refused, naming op, where the undecomposed operator runs. */
static tj_status write_back(const tj_op *op, const tj_value *args, tj_tensor *r, tj_value *outs)
{
    tj_tensor *self = args[0].u.t, *dst = self;
    if (!r) return tj_last_status();
    if (self->numel != 0 && tj_may_self_overlap(self)) {
        bool one_value = tj_inplace_writes_one_value(op, op->nargs > 1 && args[1].kind == TJ_V_INT ? args[1].u.i : 0,
                                                     self->ndim, self->shape, self->strides);
        bool other_overlap = tj_layout_may_self_overlap(self->ndim, self->shape, self->strides, true);
        if (other_overlap || !one_value) {
            char shape[160], strides[160];
            return tj_error(TJ_ERR_UNSUPPORTED, "%s: the decomposition cannot write a self of shape %s and strides %s "
                            "whose elements share memory %s; clone() it first, or leave %s out of the decomposition "
                            "table", op->name, tj_shape_str(self->ndim, self->shape, shape, sizeof shape),
                            tj_shape_str(self->ndim, self->strides, strides, sizeof strides),
                            other_overlap ? "other than along broadcast (stride-0) dims"
                                          : "with values that differ along its broadcast (stride-0) dims", op->name);
        }
        for (int d = 0; d < self->ndim && dst && r; d++) {
            if (self->strides[d] != 0 || self->shape[d] == 1) continue;
            dst = tj_slice(dst, d, true, 0, true, 1, 1);
            int rd = d - (self->ndim - r->ndim);
            if (rd >= 0 && r->shape[rd] > 1) r = tj_slice(r, rd, true, 0, true, 1, 1);
        }
        if (!dst || !r) return tj_last_status();
    }
    if (!tj_copy_(dst, r)) return tj_last_status();
    outs[0] = tj_v_tensor(self);
    return TJ_OK;
}

/* fill_ and zero_: the value as a tensor of self's rank, of size 1 along
 * the broadcast dims (nothing of an expanded size is made). */
static tj_status fill_with(const tj_op *op, const tj_value *args, tj_value value, tj_value *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t shape[TJ_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++) shape[d] = self->strides[d] == 0 ? 1 : self->shape[d];
    return write_back(op, args, tj_full(shape, self->ndim, value, (int)self->dtype), outs);
}

static tj_status zero_(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(zero_, args, m);
    return fill_with(TJ_OPS(zero_), args, tj_v_int(0), outs);
}

static tj_status fill_(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(fill__Scalar, args, m);
    return fill_with(TJ_OPS(fill__Scalar), args, tj_dc_convert(&args[1], m[0].dtype), outs);
}

/* fill_.Tensor is copy_ of the 0-dim value (broadcast and converted) */
static tj_status fill__tensor(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(fill__Tensor, args, m);
    return tj_dc_done(tj_copy_(args[0].u.t, args[1].u.t), outs);
}

static tj_status index_put_(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(index_put_, args, m);
    tj_tensor *self = args[0].u.t;
    return write_back(TJ_OPS(index_put_), args, tj_index_put(self, args[1].u.ts, args[1].n, args[2].u.t, args[3].u.b),
                      outs);
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
    return write_back(op, args, r[0].u.t, outs);
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

/* polygamma_(self, n): copy_(self, polygamma(n, self)), so a graph records
 * the functional pair (torch 1.13's make_fx records polygamma_ itself) */
static tj_status polygamma_(const tj_value *args, tj_value *outs)
{
    tj_tensor *self = args[0].u.t;
    tj_dtype dt = tj_tensor_dtype(self);
    if (!tj_dtype_is_float(dt)) /* copy_ would truncate: refuse as ATen */
        return tj_error(TJ_ERR_DTYPE, "aten::polygamma_: result type Float can't be cast to the desired output type %s",
                        tj_dtype_name(dt));
    return tj_dc_done(tj_copy_(self, tj_polygamma(args[1].u.i, self)), outs);
}

void tj_register_inplace_ops_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(polygamma_), polygamma_, "polygamma_");
    tj_op_set_decomposition(TJ_OPS(selu_), selu_, "selu_");
    tj_op_set_decomposition(TJ_OPS(square_), square_, "square_");
#define TJ_INPLACE_FORM(ident, schema, functional) \
    tj_op_set_decomposition(TJ_OPS(ident), form_##ident, "write_back_" #ident);
#include "op_inplace_forms.def"
#undef TJ_INPLACE_FORM
    tj_op_set_decomposition(TJ_OPS(zero_), zero_, "zero_");
    tj_op_set_decomposition(TJ_OPS(fill__Scalar), fill_, "fill_");
    tj_op_set_decomposition(TJ_OPS(fill__Tensor), fill__tensor, "fill__tensor");
    tj_op_set_decomposition(TJ_OPS(index_put_), index_put_, "index_put_");
}
