/* _softmax, _log_softmax and their backward operators: argument checks and
 * the glue to kernels/softmax. The tensor is seen as [outer, n, inner]
 * around the reduced dim; any strides that keep that view (outer dims
 * mergeable, the innermost moving dim contiguous) are read in place, others
 * are copied once. */
#include "contig.h"
#include "kernels/softmax.h"
#include "op_backward.h"
#include "op_nn.h"

/* Dims [lo, hi) merged into one (size-1 dims ignored): their element count,
 * and whether the strides allow the merge, with the merged stride. */
static bool merge_dims(const tj_tensor *t, int lo, int hi, int64_t *size, int64_t *stride)
{
    bool ok = true;
    int prev = -1;
    *size = 1;
    *stride = 0;
    for (int d = lo; d < hi; d++) {
        *size *= t->shape[d];
        if (t->shape[d] == 1) continue;
        if (prev >= 0 && t->strides[prev] != t->strides[d] * t->shape[d]) ok = false;
        prev = d;
        *stride = t->strides[d];
    }
    return ok;
}

/* An operand seen as [outer, n, inner] around `dim`: in place when its
 * strides allow, else through a contiguous copy. */
typedef struct view3 {
    tj_k_strided s;
    tj_contig copy;
} view3;

static tj_status view3_get(view3 *v, const tj_tensor *t, int dim, tj_k_softmax_shape *shape)
{
    int nd = t->ndim;
    int64_t n = nd ? t->shape[dim] : 1, ds = nd ? t->strides[dim] : 1, outer, os, inner, is;
    v->copy = (tj_contig){0};
    bool ok = merge_dims(t, 0, dim, &outer, &os);
    ok = merge_dims(t, nd ? dim + 1 : 0, nd, &inner, &is) && ok;
    if (ok && inner == 1) ok = n == 1 || ds == 1;
    else if (ok) ok = is == 1;
    shape->outer = outer;
    shape->n = n;
    shape->inner = inner;
    if (ok) {
        v->s = (tj_k_strided){tj_tensor_ptr(t), os, inner == 1 ? 1 : ds};
        return TJ_OK;
    }
    tj_status st = tj_contig_get(&v->copy, t);
    v->s = (tj_k_strided){v->copy.data, n * inner, inner};
    return st;
}

static tj_status check_float(const char *op, const char *name, const tj_tensor *t)
{
    if (!tj_dtype_is_float(t->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: %s must be float32 or float64, got %s", op, name, tj_dtype_name(t->dtype));
    return TJ_OK;
}

static tj_status meta_softmax(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    int dim;
    tj_status st = check_float(op, "self", x);
    if (st == TJ_OK && args[2].u.b)
        st = tj_error(TJ_ERR_UNSUPPORTED, "%s: half_to_float is not supported on CPU", op);
    if (st == TJ_OK) st = tj_wrap_dim(op, args[1].u.i, x->ndim, &dim);
    if (st != TJ_OK) return st;
    outs[0].dtype = x->dtype;
    outs[0].ndim = x->ndim;
    for (int d = 0; d < x->ndim; d++) outs[0].shape[d] = x->shape[d];
    return TJ_OK;
}

tj_status tj_meta__softmax(const tj_value *args, tj_meta *outs) { return meta_softmax("aten::_softmax", args, outs); }
tj_status tj_meta__log_softmax(const tj_value *args, tj_meta *outs)
{
    return meta_softmax("aten::_log_softmax", args, outs);
}

static tj_status kernel_softmax(const tj_value *args, tj_tensor *out, bool log)
{
    const tj_tensor *x = args[0].u.t;
    int dim = 0;
    tj_wrap_dim("aten::_softmax", args[1].u.i, x->ndim, &dim);
    if (x->numel == 0) return TJ_OK;
    tj_k_softmax_shape s = {.dtype = x->dtype, .log = log, .nthreads = tj_get_num_threads()};
    view3 v;
    tj_status st = view3_get(&v, x, dim, &s);
    if (st == TJ_OK) tj_k_softmax(&s, v.s, tj_tensor_ptr(out));
    tj_contig_release(&v.copy);
    return st;
}

tj_status tj_kernel__softmax(const tj_value *args, tj_tensor *const *outs) { return kernel_softmax(args, outs[0], false); }
tj_status tj_kernel__log_softmax(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_softmax(args, outs[0], true);
}

/* ---- backward: (grad_output, output, dim, input_dtype) ---- */

static tj_status meta_backward(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *g = args[0].u.t, *y = args[1].u.t;
    char sg[96], sy[96];
    int dim;
    tj_status st = check_float(op, "grad_output", g);
    if (st != TJ_OK) return st;
    if (g->dtype != y->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: grad_output (%s) and output (%s) must have the same dtype", op,
                        tj_dtype_name(g->dtype), tj_dtype_name(y->dtype));
    bool same = g->ndim == y->ndim;
    for (int d = 0; same && d < g->ndim; d++) same = g->shape[d] == y->shape[d];
    if (!same)
        return tj_error(TJ_ERR_SHAPE, "%s: grad_output %s and output %s must have the same shape", op,
                        tj_shape_str(g->ndim, g->shape, sg, sizeof sg), tj_shape_str(y->ndim, y->shape, sy, sizeof sy));
    if ((st = tj_wrap_dim(op, args[2].u.i, g->ndim, &dim)) != TJ_OK) return st;
    /* input_dtype only matters for half inputs (CUDA); the CPU result has
     * grad_output's dtype, as in ATen */
    outs[0].dtype = g->dtype;
    outs[0].ndim = g->ndim;
    for (int d = 0; d < g->ndim; d++) outs[0].shape[d] = g->shape[d];
    return TJ_OK;
}

tj_status tj_meta__softmax_backward_data(const tj_value *args, tj_meta *outs)
{
    return meta_backward("aten::_softmax_backward_data", args, outs);
}
tj_status tj_meta__log_softmax_backward_data(const tj_value *args, tj_meta *outs)
{
    return meta_backward("aten::_log_softmax_backward_data", args, outs);
}

static tj_status kernel_backward(const tj_value *args, tj_tensor *out, bool log)
{
    const tj_tensor *g = args[0].u.t, *y = args[1].u.t;
    int dim = 0;
    tj_wrap_dim("aten::_softmax_backward_data", args[2].u.i, g->ndim, &dim);
    if (g->numel == 0) return TJ_OK;
    tj_k_softmax_shape s = {.dtype = g->dtype, .log = log, .nthreads = tj_get_num_threads()};
    view3 vg, vy = {0};
    tj_status st = view3_get(&vg, g, dim, &s);
    if (st == TJ_OK) st = view3_get(&vy, y, dim, &s);
    if (st == TJ_OK) tj_k_softmax_backward(&s, vg.s, vy.s, tj_tensor_ptr(out));
    tj_contig_release(&vg.copy);
    tj_contig_release(&vy.copy);
    return st;
}

tj_status tj_kernel__softmax_backward_data(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_backward(args, outs[0], false);
}
tj_status tj_kernel__log_softmax_backward_data(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_backward(args, outs[0], true);
}
