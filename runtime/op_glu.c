/* aten::glu and aten::glu_backward: checks and messages as PyTorch 1.13
 * (Activation.cpp, GatedLinearUnit.cpp); the kernels run the elementwise
 * loops over the two halves of self along dim, as ATen's CPU kernels
 * (decompositions: decomps/elementwise.c). */
#include "iter.h"
#include "kernels/activation_backward.h"
#include "kernels/elementwise.h"
#include "op_elementwise_util.h"
#include "op_nn.h"

#define GLU "aten::glu"
#define GLU_BACKWARD "aten::glu_backward"

/* self float, at least 1-D, dim (wrapped into *d) of even size; out: self's
 * shape with that dim halved */
static tj_status glu_shape(const char *op, const tj_tensor *self, int64_t dim, int *d, tj_meta *out)
{
    if (self->ndim == 0)
        return tj_error(TJ_ERR_SHAPE, "%s: glu does not support scalars because halving size must be even", op);
    if (tj_wrap_dim(op, dim, self->ndim, d) != TJ_OK) return tj_last_status();
    if (self->shape[*d] % 2)
        return tj_error(TJ_ERR_SHAPE, "%s: Halving dimension must be even, but dimension %d is size %lld", op, *d,
                        (long long)self->shape[*d]);
    tj_status st = tj_ew_require_float(op, self->dtype);
    if (st != TJ_OK) return st;
    tj_meta_like(out, self);
    out->shape[*d] /= 2;
    return TJ_OK;
}

/* Half k (0: first, 1: second) of t along dim d, a view without a
 * reference of its own (it lives while t does). */
static tj_tensor half_of(const tj_tensor *t, int d, int k)
{
    tj_tensor h = *t;
    h.shape[d] /= 2;
    h.numel /= 2;
    h.offset += k * h.shape[d] * t->strides[d];
    return h;
}

tj_status tj_meta_glu(const tj_value *args, tj_meta *outs)
{
    int d;
    return glu_shape(GLU, args[0].u.t, args[1].u.i, &d, &outs[0]);
}

tj_status tj_kernel_glu(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *self = args[0].u.t;
    int d;
    tj_wrap_dim(GLU, args[1].u.i, self->ndim, &d);
    tj_tensor a = half_of(self, d, 0), b = half_of(self, d, 1);
    return tj_ew_run_binary(outs[0], &a, &b, outs[0]->dtype, TJ_K_GLU);
}

/* grad_output has glu's result shape and self's dtype */
tj_status tj_meta_glu_backward(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *g = args[0].u.t, *self = args[1].u.t;
    int d;
    tj_meta half;
    tj_status st = glu_shape(GLU_BACKWARD, self, args[2].u.i, &d, &half);
    if (st != TJ_OK) return st;
    char a[96], b[96];
    if (g->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: grad_output (%s) and self (%s) must have the same dtype", GLU_BACKWARD,
                        tj_dtype_name(g->dtype), tj_dtype_name(self->dtype));
    if (g->ndim != half.ndim || memcmp(g->shape, half.shape, sizeof(int64_t) * (size_t)g->ndim))
        return tj_error(TJ_ERR_SHAPE, "%s: grad_output %s must have glu's result shape %s", GLU_BACKWARD,
                        tj_shape_str(g->ndim, g->shape, a, sizeof a), tj_shape_str(half.ndim, half.shape, b, sizeof b));
    tj_meta_like(&outs[0], self);
    return TJ_OK;
}

/* As ATen's glu_backward_cpu_out: the first half of the result holds
 * sigmoid(second half), the second half (1 - s) s first grad, then the
 * first half is multiplied by grad. */
tj_status tj_kernel_glu_backward(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *g = args[0].u.t, *self = args[1].u.t, *out = outs[0];
    tj_dtype dt = out->dtype;
    int d;
    tj_wrap_dim(GLU_BACKWARD, args[2].u.i, self->ndim, &d);
    tj_tensor a = half_of(self, d, 0), b = half_of(self, d, 1), ga = half_of(out, d, 0), gb = half_of(out, d, 1);
    tj_k_unary_args sig = {.op = TJ_K_SIGMOID, .dtype = dt};
    tj_tensor *pb = &b, *in3[3] = {&ga, &a, g};
    tj_elementwise(&ga, &pb, 1, dt, tj_k_unary_loop, &sig);
    tj_elementwise(&gb, in3, 3, dt, tj_k_glu_backward_loop, &dt);
    return tj_ew_run_binary(&ga, &ga, g, dt, TJ_K_MUL);
}
