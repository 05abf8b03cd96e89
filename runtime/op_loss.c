/* aten::nll_loss_forward, aten::nll_loss_backward (LossNLL.cpp),
 * aten::binary_cross_entropy and its backward, binary_cross_entropy_with_logits
 * (Loss.cpp): checks and output
 * shapes as PyTorch 1.13, glue to kernels/loss.h. */
#include <string.h>

#include "contig.h"
#include "kernels/copy.h"
#include "kernels/loss.h"
#include "op_backward.h"
#include "op_nn.h"

tj_status tj_check_reduction(const char *op, int64_t reduction)
{
    if (reduction >= 0 && reduction <= 2) return TJ_OK;
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: reduction must be 0 (none), 1 (mean) or 2 (sum), got %lld", op,
                    (long long)reduction);
}

/* Checks self [C] or [N, C], target [] or [N] (int64), weight [C] (or
 * absent), reduction, and fills the kernel description. */
static tj_status nll_params(const char *op, const tj_tensor *self, const tj_tensor *target, const tj_tensor *weight,
                            int64_t reduction, int64_t ignore_index, tj_k_nll *k)
{
    char a[96], b[96];
    if (self->ndim < 1 || self->ndim > 2)
        return tj_error(TJ_ERR_SHAPE, "%s: input tensor should be 1D or 2D, got %s", op,
                        tj_shape_str(self->ndim, self->shape, a, sizeof a));
    if (target->ndim > 1)
        return tj_error(TJ_ERR_SHAPE, "%s: 0D or 1D target tensor expected, multi-target not supported (got %s)", op,
                        tj_shape_str(target->ndim, target->shape, a, sizeof a));
    bool no_batch = self->ndim == 1 && target->ndim == 0;
    if (!no_batch && (target->ndim == 0 || self->shape[0] != target->shape[0]))
        return tj_error(TJ_ERR_SHAPE, "%s: size mismatch (got input: %s, target: %s)", op,
                        tj_shape_str(self->ndim, self->shape, a, sizeof a),
                        tj_shape_str(target->ndim, target->shape, b, sizeof b));
    if (!tj_dtype_is_float(self->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: expected float32 or float64 input, got %s", op, tj_dtype_name(self->dtype));
    if (target->dtype != TJ_INT64)
        return tj_error(TJ_ERR_DTYPE, "%s: expected int64 target, got %s", op, tj_dtype_name(target->dtype));
    int64_t classes = self->shape[self->ndim - 1];
    if (weight && (weight->numel != classes || weight->ndim != 1))
        return tj_error(TJ_ERR_SHAPE,
                        "%s: weight tensor should be defined either for all %lld classes or no classes but got "
                        "weight tensor of shape: %s",
                        op, (long long)classes, tj_shape_str(weight->ndim, weight->shape, a, sizeof a));
    if (weight && weight->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: weight (%s) and input (%s) must have the same dtype", op,
                        tj_dtype_name(weight->dtype), tj_dtype_name(self->dtype));
    tj_status st = tj_check_reduction(op, reduction);
    if (st != TJ_OK) return st;
    /* a [C] input takes one target, except an empty [0] target (then C is
     * 0 too): a batch of none, as torch's target.numel() == 0 case */
    *k = (tj_k_nll){
        .batch = self->ndim == 2 ? self->shape[0] : target->numel == 0 ? 0 : 1,
        .classes = classes,
        .in_rs = self->ndim == 2 ? self->strides[0] : 0,
        .in_cs = self->strides[self->ndim - 1],
        .target_s = target->ndim == 1 ? target->strides[0] : 0,
        .weight_s = weight ? weight->strides[0] : 0,
        .ignore_index = ignore_index,
        .reduction = (int)reduction,
        .rowwise = reduction == 0 && self->ndim == 2,
    };
    return TJ_OK;
}

static tj_status target_error(const char *op, int64_t bad, int64_t classes)
{
    return tj_error(TJ_ERR_INDEX, "%s: target %lld is out of bounds (%lld classes)", op, (long long)bad,
                    (long long)classes);
}

/* ---- nll_loss_forward(self, target, weight?, reduction, ignore_index) ---- */

tj_status tj_meta_nll_loss_forward(const tj_value *args, tj_meta *outs)
{
    tj_k_nll k = {0};
    tj_status st = nll_params("aten::nll_loss_forward", args[0].u.t, args[1].u.t, tj_opt_tensor(&args[2]), args[3].u.i,
                              args[4].u.i, &k);
    if (st != TJ_OK) return st;
    outs[0].dtype = outs[1].dtype = args[0].u.t->dtype;
    outs[0].ndim = k.rowwise ? 1 : 0;
    outs[0].shape[0] = k.batch;
    outs[1].ndim = 0;
    return TJ_OK;
}

tj_status tj_kernel_nll_loss_forward(const tj_value *args, tj_tensor *const *outs)
{
    const char *op = "aten::nll_loss_forward";
    const tj_tensor *self = args[0].u.t, *target = args[1].u.t, *weight = tj_opt_tensor(&args[2]);
    tj_k_nll k = {0};
    tj_status st = nll_params(op, self, target, weight, args[3].u.i, args[4].u.i, &k);
    if (st != TJ_OK) return st;
    const void *in = tj_tensor_ptr(self), *w = weight ? tj_tensor_ptr(weight) : NULL;
    const int64_t *t = (const int64_t *)(const void *)tj_tensor_ptr(target);
    void *out = tj_tensor_ptr(outs[0]), *tw = tj_tensor_ptr(outs[1]);
    int64_t bad = 0;
    bool ok = self->dtype == TJ_FLOAT32 ? tj_k_nll_loss_f32(&k, in, t, w, out, tw, &bad)
                                        : tj_k_nll_loss_f64(&k, in, t, w, out, tw, &bad);
    return ok ? TJ_OK : target_error(op, bad, k.classes);
}

/* ---- nll_loss_backward(grad_output, self, target, weight?, reduction,
 * ignore_index, total_weight) ---- */

static tj_status nll_backward_params(const tj_value *args, tj_k_nll *k)
{
    const char *op = "aten::nll_loss_backward";
    const tj_tensor *go = args[0].u.t, *self = args[1].u.t, *tw = args[6].u.t;
    tj_status st = nll_params(op, self, args[2].u.t, tj_opt_tensor(&args[3]), args[4].u.i, args[5].u.i, k);
    if (st != TJ_OK) return st;
    char a[96];
    if (tw->numel != 1)
        return tj_error(TJ_ERR_SHAPE, "%s: expected total_weight to be a single element tensor, got: %s (%lld elements)",
                        op, tj_shape_str(tw->ndim, tw->shape, a, sizeof a), (long long)tw->numel);
    if (k->rowwise ? go->ndim != 1 || go->shape[0] != k->batch : go->ndim > 1 || go->numel != 1)
        return tj_error(TJ_ERR_SHAPE, "%s: expected grad_output of size %s, but got %s", op,
                        k->rowwise ? "[batch]" : "[] (a single element)", tj_shape_str(go->ndim, go->shape, a, sizeof a));
    if (go->dtype != self->dtype || tw->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: grad_output (%s) and total_weight (%s) must have the input's dtype (%s)", op,
                        tj_dtype_name(go->dtype), tj_dtype_name(tw->dtype), tj_dtype_name(self->dtype));
    return TJ_OK;
}

tj_status tj_meta_nll_loss_backward(const tj_value *args, tj_meta *outs)
{
    tj_k_nll k = {0};
    tj_status st = nll_backward_params(args, &k);
    if (st != TJ_OK) return st;
    const tj_tensor *self = args[1].u.t;
    tj_meta_like(&outs[0], self);
    return TJ_OK;
}

tj_status tj_kernel_nll_loss_backward(const tj_value *args, tj_tensor *const *outs)
{
    tj_k_nll k = {0};
    tj_status st = nll_backward_params(args, &k);
    if (st != TJ_OK) return st;
    const tj_tensor *go = args[0].u.t, *self = args[1].u.t, *weight = tj_opt_tensor(&args[3]), *tw = args[6].u.t;
    const void *g = tj_tensor_ptr(go), *w = weight ? tj_tensor_ptr(weight) : NULL;
    const int64_t *t = (const int64_t *)(const void *)tj_tensor_ptr(args[2].u.t);
    int64_t gs = go->ndim == 1 ? go->strides[0] : 0, bad = 0;
    void *gi = tj_tensor_ptr(outs[0]);
    bool ok = self->dtype == TJ_FLOAT32
                  ? tj_k_nll_loss_backward_f32(&k, g, gs, t, w, *(const float *)(const void *)tj_tensor_ptr(tw), gi, &bad)
                  : tj_k_nll_loss_backward_f64(&k, g, gs, t, w, *(const double *)(const void *)tj_tensor_ptr(tw), gi, &bad);
    return ok ? TJ_OK : target_error("aten::nll_loss_backward", bad, k.classes);
}

/* ---- binary_cross_entropy(self, target, weight?, reduction) and
 * binary_cross_entropy_backward(grad_output, self, target, weight?,
 * reduction) ---- */

static const char *const BCE = "aten::binary_cross_entropy";
static const char *const BCE_BACKWARD = "aten::binary_cross_entropy_backward";

/* `t` (named `what`) must have self's dtype and broadcast to self's shape;
 * `squeeze`: once both drop their size-1 dims (ATen's backward kernel
 * iterates over squeeze()d grad_output and self). */
static tj_status check_like_self(const char *op, const char *what, const tj_tensor *t, const tj_tensor *self,
                                 bool squeeze)
{
    if (t->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: %s has dtype %s but self has %s (they must match)", op, what,
                        tj_dtype_name(t->dtype), tj_dtype_name(self->dtype));
    int nd, tn = t->ndim, sn = self->ndim;
    int64_t shape[TJ_MAX_DIMS], ts[TJ_MAX_DIMS], ss[TJ_MAX_DIMS];
    memcpy(ts, t->shape, sizeof(int64_t) * (size_t)tn);
    memcpy(ss, self->shape, sizeof(int64_t) * (size_t)sn);
    if (squeeze) tn = tj_squeezed(t, ts, NULL), sn = tj_squeezed(self, ss, NULL);
    char a[96], b[96];
    if (tj_broadcast_shapes(op, tn, ts, sn, ss, &nd, shape) != TJ_OK || nd != sn ||
        memcmp(shape, ss, sizeof(int64_t) * (size_t)nd) != 0)
        return tj_error(TJ_ERR_SHAPE, "%s: %s of shape %s does not broadcast to self's shape %s%s", op, what,
                        tj_shape_str(t->ndim, t->shape, a, sizeof a),
                        tj_shape_str(self->ndim, self->shape, b, sizeof b),
                        squeeze ? " once both drop their size-1 dims (ATen squeezes them)" : "");
    return TJ_OK;
}

/* self float32 / float64; target, weight (optional) of its dtype,
 * broadcasting to its shape, and grad_output (the backward's, optional) of
 * its dtype, broadcasting to it without size-1 dims; reduction 0, 1 or 2. */
static tj_status bce_check(const char *op, const tj_tensor *self, const tj_tensor *target, const tj_tensor *weight,
                           const tj_tensor *grad, int64_t reduction)
{
    if (!tj_dtype_is_float(self->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: expected float32 or float64 self, got %s", op, tj_dtype_name(self->dtype));
    tj_status st = check_like_self(op, "target", target, self, false);
    if (st == TJ_OK && weight) st = check_like_self(op, "weight", weight, self, false);
    if (st == TJ_OK && grad) st = check_like_self(op, "grad_output", grad, self, true);
    return st != TJ_OK ? st : tj_check_reduction(op, reduction);
}

tj_status tj_meta_binary_cross_entropy(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    tj_status st = bce_check(BCE, self, args[1].u.t, tj_opt_tensor(&args[2]), NULL, args[3].u.i);
    if (st != TJ_OK) return st;
    tj_meta_like(&outs[0], self);
    if (args[3].u.i != 0) outs[0].ndim = 0;
    return TJ_OK;
}

/* Row-major elements of t broadcast to like's shape (`squeeze`: both
 * without their size-1 dims, as check_like_self): t's own memory when it
 * already is that, else a temporary dense copy (released with c). */
static tj_status dense_as(tj_contig *c, const tj_tensor *t, const tj_tensor *like, bool squeeze)
{
    if (t->numel == like->numel) return tj_contig_get(c, t);
    tj_meta m = {.dtype = t->dtype, .ndim = like->ndim, .alias = -1};
    memcpy(m.shape, like->shape, sizeof(int64_t) * (size_t)like->ndim);
    if (!(c->copy = tj_tensor_new_meta(&m, false))) return tj_last_status();
    int nd = like->ndim;
    int64_t shape[TJ_MAX_DIMS], bs[TJ_MAX_DIMS], ds[TJ_MAX_DIMS];
    memcpy(shape, like->shape, sizeof(int64_t) * (size_t)nd);
    memcpy(ds, c->copy->strides, sizeof(int64_t) * (size_t)nd);
    if (squeeze) {
        int64_t ts[TJ_MAX_DIMS], tst[TJ_MAX_DIMS];
        int tn = tj_squeezed(t, ts, tst);
        nd = tj_squeezed(c->copy, shape, ds);
        for (int d = 0; d < nd; d++) bs[d] = d >= nd - tn ? tst[d - (nd - tn)] : 0;
    } else {
        tj_broadcast_strides(t, nd, shape, bs);
    }
    tj_k_strided dst = {tj_tensor_ptr(c->copy), t->dtype, ds}, src = {tj_tensor_ptr(t), t->dtype, bs};
    tj_k_copy_strided(dst, src, nd, shape, 1);
    c->data = tj_tensor_ptr(c->copy);
    return TJ_OK;
}

/* Dense operands of a bce call: [0] self, then target, weight and
 * grad_output or pos_weight (those given; grad_output paired as ATen,
 * without size-1 dims). */
typedef struct bce_operands {
    tj_contig c[4];
} bce_operands;

static void bce_release(bce_operands *o)
{
    for (int i = 0; i < 4; i++) tj_contig_release(&o->c[i]);
}

static tj_status bce_get(bce_operands *o, const tj_tensor *self, const tj_tensor *const *others, bool third_is_grad)
{
    memset(o, 0, sizeof *o);
    tj_status st = tj_contig_get(&o->c[0], self);
    for (int i = 0; st == TJ_OK && i < 3; i++)
        if (others[i]) st = dense_as(&o->c[i + 1], others[i], self, i == 2 && third_is_grad);
    if (st != TJ_OK) bce_release(o);
    return st;
}

tj_status tj_kernel_binary_cross_entropy(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t, *weight = tj_opt_tensor(&args[2]);
    int reduction = (int)args[3].u.i;
    bce_operands o;
    tj_status st = bce_get(&o, self, (const tj_tensor *const[]){args[1].u.t, weight, NULL}, false);
    if (st != TJ_OK) return st;
    double bad = 0;
    const void *x = o.c[0].data, *t = o.c[1].data, *w = weight ? o.c[2].data : NULL;
    void *out = tj_tensor_ptr(outs[0]);
    bool ok = self->dtype == TJ_FLOAT32 ? tj_k_bce_f32(self->numel, x, t, w, reduction, out, &bad)
                                        : tj_k_bce_f64(self->numel, x, t, w, reduction, out, &bad);
    bce_release(&o);
    if (ok) return TJ_OK;
    char a[96];
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: all elements of input should be between 0 and 1 (self %s holds %g)",
                    BCE, tj_shape_str(self->ndim, self->shape, a, sizeof a), bad);
}

tj_status tj_meta_binary_cross_entropy_backward(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[1].u.t;
    tj_status st = bce_check(BCE_BACKWARD, self, args[2].u.t, tj_opt_tensor(&args[3]), args[0].u.t, args[4].u.i);
    if (st != TJ_OK) return st;
    tj_meta_like(&outs[0], self);
    return TJ_OK;
}

tj_status tj_kernel_binary_cross_entropy_backward(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[1].u.t, *weight = tj_opt_tensor(&args[3]);
    bce_operands o;
    tj_status st = bce_get(&o, self, (const tj_tensor *const[]){args[2].u.t, weight, args[0].u.t}, true);
    if (st != TJ_OK) return st;
    const void *x = o.c[0].data, *t = o.c[1].data, *w = weight ? o.c[2].data : NULL, *g = o.c[3].data;
    double divisor = args[4].u.i == 1 ? (double)self->numel : 1;
    void *gi = tj_tensor_ptr(outs[0]);
    if (self->dtype == TJ_FLOAT32) tj_k_bce_backward_f32(self->numel, g, x, t, w, divisor, gi);
    else tj_k_bce_backward_f64(self->numel, g, x, t, w, divisor, gi);
    bce_release(&o);
    return TJ_OK;
}

/* ---- binary_cross_entropy_with_logits(self, target, weight?, pos_weight?,
 * reduction) ---- */

static const char *const BCE_LOGITS = "aten::binary_cross_entropy_with_logits";

/* bce's checks, with target of self's shape (torch.nn.functional's check:
 * ATen's in-place steps need it too) and pos_weight like weight. */
tj_status tj_meta_binary_cross_entropy_with_logits(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *target = args[1].u.t, *pos_weight = tj_opt_tensor(&args[3]);
    tj_status st = bce_check(BCE_LOGITS, self, target, tj_opt_tensor(&args[2]), NULL, args[4].u.i);
    if (st == TJ_OK && pos_weight) st = check_like_self(BCE_LOGITS, "pos_weight", pos_weight, self, false);
    if (st != TJ_OK) return st;
    char a[96], b[96];
    if (target->ndim != self->ndim || memcmp(target->shape, self->shape, sizeof(int64_t) * (size_t)self->ndim))
        return tj_error(TJ_ERR_SHAPE, "%s: target size %s must be the same as input size %s", BCE_LOGITS,
                        tj_shape_str(target->ndim, target->shape, a, sizeof a),
                        tj_shape_str(self->ndim, self->shape, b, sizeof b));
    tj_meta_like(&outs[0], self);
    if (args[4].u.i != 0) outs[0].ndim = 0;
    return TJ_OK;
}

tj_status tj_kernel_binary_cross_entropy_with_logits(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t, *weight = tj_opt_tensor(&args[2]), *pos_weight = tj_opt_tensor(&args[3]);
    int reduction = (int)args[4].u.i;
    bce_operands o;
    tj_status st = bce_get(&o, self, (const tj_tensor *const[]){args[1].u.t, weight, pos_weight}, false);
    if (st != TJ_OK) return st;
    const void *x = o.c[0].data, *t = o.c[1].data, *w = weight ? o.c[2].data : NULL,
               *p = pos_weight ? o.c[3].data : NULL;
    void *out = tj_tensor_ptr(outs[0]);
    if (self->dtype == TJ_FLOAT32) tj_k_bce_logits_f32(self->numel, x, t, w, p, reduction, out);
    else tj_k_bce_logits_f64(self->numel, x, t, w, p, reduction, out);
    bce_release(&o);
    return TJ_OK;
}
