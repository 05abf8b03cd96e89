/* Row reductions for loop fusion (op_row_reduce.h). Keyed by the
 * operator's kernel, as op_pointwise.c: an operator bound to another
 * kernel is never taken. The kernels (op_reduction.c) run tj_k_reduce with
 * divisor 1 (sum) into the operand's dtype, which tj_k_reduce_rows runs on
 * a block of rows. */
#include "op_reduction.h"
#include "op_row_reduce.h"

bool tj_row_reduce_describe(const tj_op *op, const tj_value *args, tj_row_reduce *rr)
{
    tj_k_red_kind kind;
    tj_dtype out = args[0].kind == TJ_V_TENSOR ? args[0].u.t->dtype : TJ_FLOAT32;
    if (op->kernel == tj_kernel_sum_dim) {
        if (args[3].kind == TJ_V_DTYPE) out = args[3].u.dtype;
        else if (args[3].kind != TJ_V_NONE) return false;
        if (out != TJ_FLOAT32 && out != TJ_FLOAT64) return false;
        kind = TJ_K_RED_SUM;
    } else if (op->kernel == tj_kernel_amax) {
        kind = TJ_K_RED_MAX;
    } else if (op->kernel == tj_kernel_amin) {
        kind = TJ_K_RED_MIN;
    } else {
        return false;
    }
    if (args[0].kind != TJ_V_TENSOR || args[1].kind != TJ_V_INTS || args[1].n != 1 || args[2].kind != TJ_V_BOOL ||
        !args[2].u.b)
        return false;
    const tj_tensor *x = args[0].u.t;
    int64_t d = args[1].u.ints[0];
    if (x->ndim < 1 || (x->dtype != TJ_FLOAT32 && x->dtype != TJ_FLOAT64) || (d != x->ndim - 1 && d != -1))
        return false;
    int64_t n = x->shape[x->ndim - 1];
    if (n < 2 || n > TJ_K_REDUCE_ROW_MAX) return false;
    *rr = (tj_row_reduce){.kind = kind, .dtype = x->dtype, .out = out, .arg = 0, .n = n};
    return true;
}

void tj_row_reduce_run(const tj_row_reduce *rr, const void *x, int64_t nrows, void *out)
{
    tj_k_reduce_rows(rr->kind, rr->dtype, rr->out, x, nrows, rr->n, out);
}
