/* The implicit forms of the LAPACK operators (op_lapack.def), as ATen 1.13
 * writes them (BatchLinearAlgebra.cpp): the _ex operator's first result.
 * ATen follows it with _linalg_check_errors(info); tjit has the _ex
 * operator check instead (check_errors=True), with the same condition. */
#include "internal.h"

static tj_status linalg_solve(const tj_value *args, tj_value *outs)
{
    tj_tensor *r = NULL;
    tj_status st = tj__linalg_solve_ex(args[0].u.t, args[1].u.t, args[2].u.b, true, &r, NULL, NULL, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(r);
    return st;
}

void tj_register_lapack_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(linalg_solve), linalg_solve, "linalg_solve");
}
