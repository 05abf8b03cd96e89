/* Decompositions of the creation operators that are not primitives: zeros,
 * ones and scalar_tensor are full (with their own default dtype, float32,
 * where full would infer one from the fill value). */
#include "util.h"

static tj_dtype dtype_or_float(const tj_value *v) { return v->kind == TJ_V_DTYPE ? v->u.dtype : TJ_FLOAT32; }

static tj_status filled(const tj_op *op, const tj_value *args, const tj_value *size, tj_value value,
                        const tj_value *dtype, tj_value *outs)
{
    tj_meta m[1];
    if (tj_dc_check(op, args, m) != TJ_OK) return tj_last_status();
    return tj_dc_done(tj_full(size ? size->u.ints : NULL, size ? size->n : 0, value, (int)dtype_or_float(dtype)), outs);
}

static tj_status zeros(const tj_value *args, tj_value *outs)
{
    return filled(TJ_OPS(zeros), args, &args[0], tj_v_int(0), &args[1], outs);
}

static tj_status ones(const tj_value *args, tj_value *outs)
{
    return filled(TJ_OPS(ones), args, &args[0], tj_v_int(1), &args[1], outs);
}

static tj_status scalar_tensor(const tj_value *args, tj_value *outs)
{
    return filled(TJ_OPS(scalar_tensor), args, NULL, args[0], &args[1], outs);
}

void tj_register_creation_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(zeros), zeros, "zeros");
    tj_op_set_decomposition(TJ_OPS(ones), ones, "ones");
    tj_op_set_decomposition(TJ_OPS(scalar_tensor), scalar_tensor, "scalar_tensor");
}
