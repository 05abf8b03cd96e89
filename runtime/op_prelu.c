/* aten::prelu and aten::prelu_backward: the checks and messages of ATen
 * 1.13's prelu_cpu / prelu_backward_cpu (Activation.cpp), the kernels of
 * kernels/prelu.h over self and the weight viewed to broadcast along
 * self's dim 1 (decompositions: decomps/elementwise.c). */
#include <inttypes.h>
#include <string.h>

#include "iter.h"
#include "kernels/prelu.h"
#include "op_elementwise_util.h"
#include "op_nn.h"
#include "op_reduction.h"

#define PRELU "aten::prelu"
#define PRELU_BACKWARD "aten::prelu_backward"

/* weight: one element, or one per channel (self's dim 1; a 1-D self has
 * one channel), of rank <= 1 and self's float dtype; the checks in
 * prelu_cpu's order */
static tj_status check_weight(const char *op, const tj_tensor *self, const tj_tensor *weight)
{
    char a[160], b[160];
    int64_t n = weight->numel;
    if (n != 1) {
        if (self->ndim == 0)
            return tj_error(TJ_ERR_SHAPE, "%s: Not allow zero-dim input tensor (weight %s has %" PRId64 " elements, "
                            "not 1)", op, tj_shape_str(weight->ndim, weight->shape, b, sizeof b), n);
        int64_t channels = self->ndim > 1 ? self->shape[1] : 1;
        if (channels != n)
            return tj_error(TJ_ERR_SHAPE, "%s: Mismatch of parameter numbers and input channel size. Found parameter "
                            "numbers = %" PRId64 " and channel size = %" PRId64 " (self %s, weight %s)", op, n,
                            channels, tj_shape_str(self->ndim, self->shape, a, sizeof a),
                            tj_shape_str(weight->ndim, weight->shape, b, sizeof b));
    }
    if (weight->ndim > 1)
        return tj_error(TJ_ERR_SHAPE, "%s: Expected `weight` to be a scalar or 1D tensor, but got ndim = %d (weight "
                        "%s)", op, weight->ndim, tj_shape_str(weight->ndim, weight->shape, b, sizeof b));
    if (weight->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: self (%s) and weight (%s) must have the same dtype", op,
                        tj_dtype_name(self->dtype), tj_dtype_name(weight->dtype));
    return tj_ew_require_float(op, self->dtype);
}

/* weight as a view that broadcasts against self: one element as a 0-dim
 * view, else [C, 1, ...] over self's dims from 1 on. NULL on failure. */
static tj_tensor *weight_view(tj_tensor *self, tj_tensor *weight)
{
    int64_t shape[TJ_MAX_DIMS], strides[TJ_MAX_DIMS];
    int nd = 0;
    if (weight->numel != 1) { /* then self has >= 2 dims (check_weight) */
        nd = self->ndim - 1;
        shape[0] = weight->numel;
        strides[0] = weight->strides[0];
        for (int k = 1; k < nd; k++) shape[k] = 1, strides[k] = 0;
    }
    return tj_tensor_new_view(weight, nd, shape, strides, weight->offset);
}

tj_status tj_meta_prelu(const tj_value *args, tj_meta *outs)
{
    if (check_weight(PRELU, args[0].u.t, args[1].u.t) != TJ_OK) return tj_last_status();
    tj_meta_like(&outs[0], args[0].u.t);
    return TJ_OK;
}

tj_status tj_kernel_prelu(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *self = args[0].u.t, *w = weight_view(self, args[1].u.t);
    if (!w) return tj_last_status();
    tj_tensor *in[2] = {self, w};
    tj_dtype dt = self->dtype;
    tj_elementwise(outs[0], in, 2, dt, tj_k_prelu_loop, &dt);
    tj_tensor_release(w);
    return TJ_OK;
}

/* self and weight as prelu's; grad_output of self's dtype, broadcasting to
 * self's shape; the gradients have self's and weight's shapes */
tj_status tj_meta_prelu_backward(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *g = args[0].u.t, *self = args[1].u.t, *weight = args[2].u.t;
    char a[160], b[160];
    if (check_weight(PRELU_BACKWARD, self, weight) != TJ_OK) return tj_last_status();
    if (g->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: grad_output (%s) and self (%s) must have the same dtype", PRELU_BACKWARD,
                        tj_dtype_name(g->dtype), tj_dtype_name(self->dtype));
    int nd;
    int64_t shape[TJ_MAX_DIMS];
    bool ok = tj_broadcast_shapes(PRELU_BACKWARD, g->ndim, g->shape, self->ndim, self->shape, &nd, shape) == TJ_OK &&
              nd == self->ndim && memcmp(shape, self->shape, sizeof(int64_t) * (size_t)nd) == 0;
    if (!ok)
        return tj_error(TJ_ERR_SHAPE, "%s: grad_output %s does not broadcast to self's shape %s", PRELU_BACKWARD,
                        tj_shape_str(g->ndim, g->shape, a, sizeof a), tj_shape_str(self->ndim, self->shape, b, sizeof b));
    tj_meta_like(&outs[0], self);
    tj_meta_like(&outs[1], weight);
    return TJ_OK;
}

/* self's gradient pointwise; weight's the terms x <= 0 ? x * g : 0 summed
 * over every dim but the channels' (all of them for one weight) by
 * aten::sum's kernels */
tj_status tj_kernel_prelu_backward(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *g = args[0].u.t, *self = args[1].u.t, *weight = args[2].u.t;
    tj_dtype dt = self->dtype;
    tj_tensor *w = weight_view(self, weight);
    if (!w) return tj_last_status();
    tj_tensor *in[3] = {g, self, w};
    tj_elementwise(outs[0], in, 3, dt, tj_k_prelu_backward_self_loop, &dt);
    tj_tensor_release(w);
    tj_meta m = {.alias = -1};
    tj_meta_like(&m, self);
    tj_tensor *terms = tj_tensor_new_meta(&m, false);
    if (!terms) return tj_last_status();
    tj_elementwise(terms, in, 2, dt, tj_k_prelu_backward_weight_loop, &dt);
    tj_status st;
    if (weight->numel == 1) {
        st = tj_kernel_sum((const tj_value[]){tj_v_tensor(terms), tj_v_none()}, &outs[1]);
    } else {
        int64_t dims[TJ_MAX_DIMS];
        int nd = 0;
        for (int d = 0; d < self->ndim; d++)
            if (d != 1) dims[nd++] = d;
        st = tj_kernel_sum_dim((const tj_value[]){tj_v_tensor(terms), tj_v_ints(dims, nd), tj_v_bool(false),
                                                  tj_v_none()}, &outs[1]);
    }
    tj_tensor_release(terms);
    return st;
}
