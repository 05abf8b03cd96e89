/* mm as a batch of one bmm: bmm is the one matrix-product primitive (every
 * GEMM of a decomposed graph goes through it). */
#include "util.h"

static tj_status mm(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_dc_check(TJ_OPS(mm), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *r = tj_bmm(tj_unsqueeze(args[0].u.t, 0), tj_unsqueeze(args[1].u.t, 0));
    return tj_dc_done(tj_view(r, m[0].shape, m[0].ndim), outs);
}

void tj_register_blas_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(mm), mm, "mm");
}
