/* std_mean.correction as var_mean.correction and sqrt; count_nonzero as
 * torch._refs' sum(self != 0, dim) (the sum of bools is int64). */
#include "util.h"

static tj_status std_mean(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(std_mean_correction, args, m);
    tj_tensor *var, *mean;
    const tj_value *dim = &args[1];
    int64_t correction = args[2].kind == TJ_V_NONE ? -1 : args[2].u.i;
    tj_status st = tj_var_mean(args[0].u.t, dim->kind == TJ_V_INTS ? dim->u.ints : NULL,
                               dim->kind == TJ_V_INTS ? dim->n : 0, correction, args[3].u.b, &var, &mean);
    if (st != TJ_OK) return st;
    tj_tensor *std = tj_sqrt(var);
    if (!std) return tj_last_status();
    outs[1] = tj_v_tensor(mean);
    return tj_dc_done(std, outs);
}

static tj_status count_nonzero_dims(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(count_nonzero_dim_IntList, args, m);
    return tj_dc_done(tj_sum_dim(tj_ne_scalar(args[0].u.t, tj_v_int(0)), args[1].u.ints, args[1].n, false,
                                 TJ_DTYPE_NONE), outs);
}

static tj_status count_nonzero(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(count_nonzero, args, m);
    int64_t d = args[1].kind == TJ_V_INT ? args[1].u.i : 0;
    return tj_dc_done(tj_count_nonzero_dim_intlist(args[0].u.t, &d, args[1].kind == TJ_V_INT), outs);
}

void tj_register_stats_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(std_mean_correction), std_mean, "std_mean.correction");
    tj_op_set_decomposition(TJ_OPS(count_nonzero_dim_IntList), count_nonzero_dims, "count_nonzero.dim_IntList");
    tj_op_set_decomposition(TJ_OPS(count_nonzero), count_nonzero, "count_nonzero");
}
