/* aten::reflection_pad1d, reflection_pad2d, replication_pad1d,
 * replication_pad2d and their _backward operators: checks and messages as
 * PyTorch 1.13 (ReflectionPad.cpp, ReplicationPadding.cpp), glue to
 * kernels/pad.h. The decompositions (decomps/pad.c) index the input with
 * arange-built positions, as torch._decomp does from PyTorch 2.0 on.
 * Also the plan step making zero padding in one pass (tj_kernel_zero_padded). */
#include <assert.h>
#include <inttypes.h>
#include <string.h>

#include "iter.h"
#include "kernels/pad.h"
#include "op_backward.h"
#include "op_nn.h"

typedef struct pad_op {
    const char *name; /* "aten::reflection_pad1d", for messages */
    int dims;         /* padded dims: 1 or 2 */
    tj_k_pad_mode mode;
} pad_op;

static const pad_op REFLECT1 = {"aten::reflection_pad1d", 1, TJ_K_PAD_REFLECT},
                    REFLECT2 = {"aten::reflection_pad2d", 2, TJ_K_PAD_REFLECT},
                    REPLICATE1 = {"aten::replication_pad1d", 1, TJ_K_PAD_REPLICATE},
                    REPLICATE2 = {"aten::replication_pad2d", 2, TJ_K_PAD_REPLICATE},
                    REFLECT1_BW = {"aten::reflection_pad1d_backward", 1, TJ_K_PAD_REFLECT},
                    REFLECT2_BW = {"aten::reflection_pad2d_backward", 2, TJ_K_PAD_REFLECT},
                    REPLICATE1_BW = {"aten::replication_pad1d_backward", 1, TJ_K_PAD_REPLICATE},
                    REPLICATE2_BW = {"aten::replication_pad2d_backward", 2, TJ_K_PAD_REPLICATE};

/* The geometry of padding self (its padded dims last, the others folded
 * into n and c) and the padded shape, after ATen's checks: float32 or
 * float64; 2 * dims padding entries; rank dims + 1 or dims + 2 with every
 * dim non-zero but the batch (reflection: but the first); reflection pads
 * smaller than their dim; a padded size >= 1 (1-D) or >= 0 (2-D, as ATen). */
static tj_status pad_geometry(const pad_op *op, const tj_tensor *self, const tj_value *padding, tj_k_pad_geom *g,
                              tj_meta *out)
{
    char b[96];
    int nd = self->ndim, dims = op->dims;
    if (!tj_dtype_is_float(self->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: not implemented for %s (float32 and float64 only)", op->name,
                        tj_dtype_name(self->dtype));
    if (padding->n != 2 * dims)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: padding size is expected to be %d, but got %d entries",
                        op->name, 2 * dims, padding->n);
    bool ok = nd == dims + 1 || nd == dims + 2;
    int first = op->mode == TJ_K_PAD_REFLECT || nd == dims + 2 ? 1 : 0;
    for (int d = first; ok && d < nd; d++) ok = self->shape[d] != 0;
    if (!ok)
        return tj_error(TJ_ERR_SHAPE, "%s: Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and "
                        "other non-zero dimensions for input, but got: %s", op->name, dims + 1, dims + 2,
                        tj_shape_str(nd, self->shape, b, sizeof b));
    const int64_t *pad = padding->u.ints;
    int64_t sizes[2], outs[2];
    for (int k = 0; k < dims; k++) { /* k = 0: the last dim */
        int d = nd - 1 - k;
        int64_t size = self->shape[d], before = pad[2 * k], after = pad[2 * k + 1], o;
        if (op->mode == TJ_K_PAD_REFLECT && (before >= size || after >= size))
            return tj_error(TJ_ERR_SHAPE, "%s: Padding size should be less than the corresponding input dimension, "
                            "but got: padding (%" PRId64 ", %" PRId64 ") at dimension %d of input %s", op->name,
                            before, after, d, tj_shape_str(nd, self->shape, b, sizeof b));
        if (__builtin_add_overflow(size, before, &o) || __builtin_add_overflow(o, after, &o) || o < (dims == 1))
            return tj_error(TJ_ERR_SHAPE, "%s: input %s is too small for padding (%" PRId64 ", %" PRId64 ") at "
                            "dimension %d: the padded size %.0f would be less than %d", op->name,
                            tj_shape_str(nd, self->shape, b, sizeof b), before, after, d,
                            (double)size + (double)before + (double)after, dims == 1);
        sizes[k] = size;
        outs[k] = o;
    }
    *g = (tj_k_pad_geom){.n = nd == dims + 2 ? self->shape[0] : 1, .c = self->shape[nd - dims - 1],
                         .iw = sizes[0], .ow = outs[0], .left = pad[0], .ih = 1, .oh = 1};
    if (dims == 2) g->ih = sizes[1], g->oh = outs[1], g->top = pad[2];
    tj_meta_like(out, self);
    out->shape[nd - 1] = outs[0];
    if (dims == 2) out->shape[nd - 2] = outs[1];
    int64_t numel;
    return tj_checked_numel(nd, out->shape, &numel, op->name);
}

/* The 4 strides [n, c, h, w] of t, a tensor of rank dims + 1 or dims + 2
 * (the missing ones 0). */
static void pad_strides(const tj_tensor *t, int dims, int64_t *st)
{
    int nd = t->ndim;
    st[0] = nd == dims + 2 ? t->strides[0] : 0;
    st[1] = t->strides[nd - dims - 1];
    st[2] = dims == 2 ? t->strides[nd - 2] : 0;
    st[3] = t->strides[nd - 1];
}

static tj_status meta_pad(const pad_op *op, const tj_value *args, tj_meta *outs)
{
    tj_k_pad_geom g;
    return pad_geometry(op, args[0].u.t, &args[1], &g, &outs[0]);
}

static tj_status kernel_pad(const pad_op *op, const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    tj_k_pad_geom g;
    tj_meta m;
    if (pad_geometry(op, self, &args[1], &g, &m) != TJ_OK) return tj_last_status();
    int64_t st[4];
    pad_strides(self, op->dims, st);
    tj_k_pad_forward(op->mode, tj_dtype_bytes(self->dtype), tj_tensor_ptr(self), st, tj_tensor_ptr(outs[0]), &g,
                     tj_threads_for(outs[0]->numel));
    return TJ_OK;
}

/* grad_output: self's dtype and the padded shape. */
static tj_status meta_pad_backward(const pad_op *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *go = args[0].u.t, *self = args[1].u.t;
    tj_k_pad_geom g;
    tj_meta padded;
    char a[96], b[96], c[96];
    if (pad_geometry(op, self, &args[2], &g, &padded) != TJ_OK) return tj_last_status();
    if (go->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: grad_output (%s) must have self's dtype %s", op->name,
                        tj_dtype_name(go->dtype), tj_dtype_name(self->dtype));
    if (go->ndim != padded.ndim || memcmp(go->shape, padded.shape, sizeof(int64_t) * (size_t)go->ndim) != 0)
        return tj_error(TJ_ERR_SHAPE, "%s: grad_output %s must have the padded shape %s of self %s", op->name,
                        tj_shape_str(go->ndim, go->shape, a, sizeof a),
                        tj_shape_str(padded.ndim, padded.shape, b, sizeof b),
                        tj_shape_str(self->ndim, self->shape, c, sizeof c));
    tj_meta_like(&outs[0], self);
    return TJ_OK;
}

static tj_status kernel_pad_backward(const pad_op *op, const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *go = args[0].u.t, *self = args[1].u.t;
    tj_k_pad_geom g;
    tj_meta m;
    if (pad_geometry(op, self, &args[2], &g, &m) != TJ_OK) return tj_last_status();
    int64_t st[4];
    pad_strides(go, op->dims, st);
    tj_k_pad_backward(op->mode, go->dtype, tj_tensor_ptr(go), st, tj_tensor_ptr(outs[0]), &g,
                      tj_threads_for(go->numel));
    return TJ_OK;
}

#define PAD_OP(ident, spec)                                                                                   \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs) { return meta_pad(&spec, args, outs); }     \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs) { return kernel_pad(&spec, args, outs); }
#define PAD_BACKWARD_OP(ident, spec)                                                                          \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs) { return meta_pad_backward(&spec, args, outs); } \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs)                                 \
    {                                                                                                         \
        return kernel_pad_backward(&spec, args, outs);                                                        \
    }
PAD_OP(reflection_pad1d, REFLECT1)
PAD_OP(reflection_pad2d, REFLECT2)
PAD_OP(replication_pad1d, REPLICATE1)
PAD_OP(replication_pad2d, REPLICATE2)
PAD_BACKWARD_OP(reflection_pad1d_backward, REFLECT1_BW)
PAD_BACKWARD_OP(reflection_pad2d_backward, REFLECT2_BW)
PAD_BACKWARD_OP(replication_pad1d_backward, REPLICATE1_BW)
PAD_BACKWARD_OP(replication_pad2d_backward, REPLICATE2_BW)

tj_status tj_kernel_zero_padded(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[0].u.t;
    tj_tensor *out = outs[0];
    int nd = x->ndim, dims = nd - 2;
    assert((nd == 3 || nd == 4) && out->ndim == nd && tj_tensor_is_contiguous(out) && x->dtype == out->dtype);
    tj_k_pad_geom g = {.n = x->shape[0], .c = x->shape[1], .ih = 1, .oh = 1, .iw = x->shape[nd - 1],
                       .ow = out->shape[nd - 1], .top = args[1].u.ints[0], .left = args[1].u.ints[1]};
    if (dims == 2) g.ih = x->shape[2], g.oh = out->shape[2];
    int64_t st[4];
    pad_strides(x, dims, st);
    tj_k_pad_zeros(tj_dtype_bytes(x->dtype), tj_tensor_ptr(x), st, tj_tensor_ptr(out), &g,
                   tj_threads_for(out->numel));
    return TJ_OK;
}
