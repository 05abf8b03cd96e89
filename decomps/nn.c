/* Neural-network decompositions.
 *
 * Implicit composites, as ATen 1.13 writes them (Convolution.cpp,
 * Pooling.cpp, AdaptiveAveragePooling.cpp, Dropout.cpp, LossNLL.cpp,
 * Loss.cpp): conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,
 * conv_transpose3d -> convolution, max_pool2d -> max_pool2d_with_indices,
 * max_pool3d -> max_pool3d_with_indices, adaptive_avg_pool2d -> mean
 * (1 x 1) or _adaptive_avg_pool2d, dropout -> native_dropout,
 * nll_loss -> nll_loss_forward, cross_entropy_loss -> _log_softmax +
 * nll_loss_forward, l1_loss -> sub, abs, mean / sum.
 *
 * Composites with a kernel that torch._decomp (1.13) decomposes:
 * nll_loss_forward, nll_loss_backward, native_dropout,
 * binary_cross_entropy (+ backward), binary_cross_entropy_with_logits, mse_loss (+ backward) and
 * huber_loss_backward, into primitives
 * (the forward gathers the targets' entries; the backward compares the
 * targets with an arange into a one-hot mask); smooth_l1_loss (+ backward)
 * and huber_loss, which torch._decomp leaves alone, are written from ATen's
 * kernels so that the core table lowers them too. Convolution and pooling,
 * with their backward operators, decompose in conv.c, pool.c and
 * adaptive_pool.c. */
#include <math.h>
#include <string.h>

#include "op_nn.h"
#include "util.h"

static tj_status done(tj_tensor *r, tj_value *outs)
{
    if (!r) return tj_last_status();
    outs[0] = tj_v_tensor(r);
    return TJ_OK;
}

/* conv1d..conv3d and conv_transpose1d..conv_transpose3d as ATen writes
 * them: batchify (an input of spatial + 1 dims is one unbatched sample,
 * given a batch dim of 1 around the call), then convolution with the lists
 * as given, which checks them against the weight with PyTorch's messages.
 * The forms differ in their spatial dims, transposition and where
 * dilation, output_padding (a plain convolution passes zeros) and groups
 * sit among the arguments. */
typedef struct conv_form {
    const tj_op *op;
    int spatial;
    bool transposed;
    int dilation, output_padding, groups; /* argument positions; output_padding -1: none */
} conv_form;

static tj_status batchified_convolution(const conv_form *f, const tj_value *args, tj_value *outs)
{
    static const int64_t zeros[3] = {0, 0, 0};
    tj_tensor *input = args[0].u.t;
    int nd = tj_tensor_ndim(input);
    if (nd != f->spatial + 1 && nd != f->spatial + 2) {
        char buf[96];
        return tj_error(TJ_ERR_SHAPE,
                        "%s: Expected %dD (unbatched) or %dD (batched) input to %s, but got input of size: %s",
                        f->op->name, f->spatial + 1, f->spatial + 2, f->op->base,
                        tj_shape_str(nd, tj_tensor_shape(input), buf, sizeof buf));
    }
    bool batched = nd == f->spatial + 2;
    tj_tensor *x = batched ? input : tj_unsqueeze(input, 0);
    if (!x) return tj_last_status();
    tj_value conv_args[9] = {tj_v_tensor(x), args[1], args[2], args[3], args[4], args[f->dilation],
                             tj_v_bool(f->transposed),
                             f->output_padding >= 0 ? args[f->output_padding] : tj_v_ints(zeros, f->spatial),
                             args[f->groups]};
    tj_value out;
    tj_status st = tj_dispatch(TJ_OPS(convolution), conv_args, 9, &out);
    if (st != TJ_OK) return st;
    return done(batched ? out.u.t : tj_squeeze_dim(out.u.t, 0), outs);
}

/* (input, weight, bias?, stride, padding, dilation, groups) */
static tj_status conv1d(const tj_value *args, tj_value *outs)
{
    return batchified_convolution(&(conv_form){TJ_OPS(conv1d), 1, false, 5, -1, 6}, args, outs);
}

static tj_status conv2d(const tj_value *args, tj_value *outs)
{
    return batchified_convolution(&(conv_form){TJ_OPS(conv2d), 2, false, 5, -1, 6}, args, outs);
}

static tj_status conv3d(const tj_value *args, tj_value *outs)
{
    return batchified_convolution(&(conv_form){TJ_OPS(conv3d), 3, false, 5, -1, 6}, args, outs);
}

/* (input, weight, bias?, stride, padding, output_padding, groups, dilation) */
static tj_status conv_transpose1d(const tj_value *args, tj_value *outs)
{
    return batchified_convolution(&(conv_form){TJ_OPS(conv_transpose1d), 1, true, 7, 5, 6}, args, outs);
}

static tj_status conv_transpose2d(const tj_value *args, tj_value *outs)
{
    return batchified_convolution(&(conv_form){TJ_OPS(conv_transpose2d_input), 2, true, 7, 5, 6}, args, outs);
}

static tj_status conv_transpose3d(const tj_value *args, tj_value *outs)
{
    return batchified_convolution(&(conv_form){TJ_OPS(conv_transpose3d_input), 3, true, 7, 5, 6}, args, outs);
}

/* max_pool2d, max_pool3d: the first output of max_pool2d_with_indices /
 * max_pool3d_with_indices (same arguments). */
static tj_status max_pool_values(const char *with_indices, const tj_value *args, tj_value *outs)
{
    tj_value r[2];
    tj_status st = tj_call(with_indices, args, 6, r);
    if (st != TJ_OK) return st;
    outs[0] = r[0];
    return TJ_OK;
}

static tj_status max_pool2d(const tj_value *args, tj_value *outs)
{
    return max_pool_values("aten::max_pool2d_with_indices", args, outs);
}

static tj_status max_pool3d(const tj_value *args, tj_value *outs)
{
    return max_pool_values("aten::max_pool3d_with_indices", args, outs);
}

/* adaptive_avg_pool2d(self, output_size): as ATen, a 1 x 1 output is the
 * mean over the last two dims (keepdim, so any rank of 2 or more), any
 * other _adaptive_avg_pool2d, which checks output_size. */
static tj_status adaptive_avg_pool2d(const tj_value *args, tj_value *outs)
{
    const tj_value *size = &args[1];
    if (size->n == 2 && size->u.ints[0] == 1 && size->u.ints[1] == 1) {
        static const int64_t last_two[2] = {-1, -2};
        return done(tj_mean_dim(args[0].u.t, last_two, 2, true, TJ_DTYPE_NONE), outs);
    }
    return tj_dispatch(TJ_OPS(_adaptive_avg_pool2d), args, 2, outs);
}

/* dropout(input, p, train): the input itself when nothing is dropped (not
 * training, p = 0, empty), else native_dropout's output. */
static tj_status dropout(const tj_value *args, tj_value *outs)
{
    tj_tensor *input = args[0].u.t;
    double p = tj_value_as_double(&args[1]);
    if (!(p >= 0.0 && p <= 1.0))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "aten::dropout: dropout probability has to be between 0 and 1, but got %g", p);
    if (!args[2].u.b || p == 0.0 || tj_tensor_numel(input) == 0) return done(input, outs);
    tj_tensor *out = NULL, *mask = NULL;
    if (tj_native_dropout(input, p, true, &out, &mask) != TJ_OK) return tj_last_status();
    return done(out, outs);
}

/* ATen's nll_loss_nd: 1-d and 2-d inputs go to nll_loss_forward; an input
 * [N, C, d1, ...] with target [N, d1, ...] is flattened to [N*d1*..., C]
 * (ATen calls nll_loss2d there; the values are the same) and, without
 * reduction, the losses take the target's shape. *total_weight, when not
 * NULL, receives nll_loss_forward's total weight. */
static tj_tensor *nll_loss_nd(tj_tensor *self, tj_tensor *target, tj_tensor *weight, int64_t reduction,
                              int64_t ignore_index, tj_tensor **total_weight)
{
    const char *op = "aten::nll_loss";
    if (!self || !target) return NULL; /* an earlier call failed: keep its error */
    int nd = tj_tensor_ndim(self), tnd = tj_tensor_ndim(target);
    const int64_t *s = tj_tensor_shape(self), *ts = tj_tensor_shape(target);
    char a[96], b[96];
    if (nd < 1) {
        tj_error(TJ_ERR_SHAPE, "%s: expected 1 or more dimensions (got %d)", op, nd);
        return NULL;
    }
    if (nd != 1 && (tnd < 1 || s[0] != ts[0])) {
        tj_error(TJ_ERR_SHAPE, "%s: expected input batch_size (%lld) to match target batch_size (%lld)", op,
                 (long long)s[0], (long long)(tnd < 1 ? 1 : ts[0]));
        return NULL;
    }
    tj_tensor *out = NULL, *tw = NULL;
    if (nd <= 2) {
        if (tj_nll_loss_forward(self, target, weight, reduction, ignore_index, &out, &tw) != TJ_OK) return NULL;
    } else {
        bool same = tnd == nd - 1;
        for (int i = 1; same && i < tnd; i++) same = ts[i] == s[i + 1];
        if (!same) {
            tj_error(TJ_ERR_SHAPE, "%s: expected target of size [N, d1, ...] matching input %s, got %s", op,
                     tj_shape_str(nd, s, a, sizeof a), tj_shape_str(tnd, ts, b, sizeof b));
            return NULL;
        }
        int64_t perm[TJ_MAX_DIMS], flat[2] = {-1, s[1]}, all = -1;
        perm[0] = 0;
        for (int i = 2; i < nd; i++) perm[i - 1] = i;
        perm[nd - 1] = 1;
        tj_tensor *rows = tj_reshape(tj_permute(self, perm, nd), flat, 2);
        if (tj_nll_loss_forward(rows, tj_reshape(target, &all, 1), weight, reduction, ignore_index, &out, &tw) != TJ_OK)
            return NULL;
        if (reduction == 0) out = tj_view(out, ts, tnd);
    }
    if (total_weight) *total_weight = tw;
    return out;
}

/* nll_loss(self, target, weight?, reduction, ignore_index). */
static tj_status nll_loss(const tj_value *args, tj_value *outs)
{
    return done(nll_loss_nd(args[0].u.t, args[1].u.t, tj_opt_tensor(&args[2]), args[3].u.i, args[4].u.i, NULL), outs);
}

/* The [N, C, H, W] input and [N, H, W] target nll_loss2d_* take, or an
 * error naming op and both shapes. */
static tj_status check_2d(const char *op, tj_tensor *self, tj_tensor *target)
{
    char a[96], b[96];
    if (tj_tensor_ndim(self) == 4 && tj_tensor_ndim(target) == 3) return TJ_OK;
    return tj_error(TJ_ERR_SHAPE, "%s: only batches of spatial targets supported (4D input [N, C, H, W] and 3D "
                    "target [N, H, W]), got input %s and target %s", op,
                    tj_shape_str(tj_tensor_ndim(self), tj_tensor_shape(self), a, sizeof a),
                    tj_shape_str(tj_tensor_ndim(target), tj_tensor_shape(target), b, sizeof b));
}

/* nll_loss2d_forward(self [N, C, H, W], target [N, H, W], weight?,
 * reduction, ignore_index) -> (output, total_weight): ATen's kernel for
 * images, here nll_loss_nd's rows of pixels; the losses in target's shape
 * without reduction. */
static tj_status nll_loss2d_forward(const tj_value *args, tj_value *outs)
{
    tj_status st = check_2d("aten::nll_loss2d_forward", args[0].u.t, args[1].u.t);
    if (st != TJ_OK) return st;
    tj_tensor *total = NULL;
    tj_tensor *out = nll_loss_nd(args[0].u.t, args[1].u.t, tj_opt_tensor(&args[2]), args[3].u.i, args[4].u.i, &total);
    if (!out) return tj_last_status();
    outs[1] = tj_v_tensor(total);
    return done(out, outs);
}

/* nll_loss2d_backward(grad_output, self, target, weight?, reduction,
 * ignore_index, total_weight): nll_loss_backward of the rows of pixels,
 * laid back out as self ([N, C, H, W], contiguous as ATen's). */
static tj_status nll_loss2d_backward(const tj_value *args, tj_value *outs)
{
    tj_tensor *g = args[0].u.t, *self = args[1].u.t, *target = args[2].u.t;
    tj_status st = check_2d("aten::nll_loss2d_backward", self, target);
    if (st != TJ_OK) return st;
    const int64_t *s = tj_tensor_shape(self);
    int64_t to_rows[4] = {0, 2, 3, 1}, back[4] = {0, 3, 1, 2}, flat[2] = {-1, s[1]}, all = -1;
    int64_t nhwc[4] = {s[0], s[2], s[3], s[1]};
    tj_tensor *rows = tj_reshape(tj_permute(self, to_rows, 4), flat, 2);
    tj_tensor *g_rows = args[4].u.i == 0 ? tj_reshape(g, &all, 1) : g;
    tj_tensor *gi = tj_nll_loss_backward(g_rows, rows, tj_reshape(target, &all, 1), tj_opt_tensor(&args[3]),
                                         args[4].u.i, args[5].u.i, args[6].u.t);
    return done(tj_contiguous(tj_permute(tj_reshape(gi, nhwc, 4), back, 4)), outs);
}

/* Class weights shaped to broadcast along the class dim 1 of an input of
 * rank nd (as is for rank 1). */
static tj_tensor *class_weight_view(tj_tensor *weight, int nd)
{
    if (nd <= 1) return weight;
    int64_t shape[TJ_MAX_DIMS];
    for (int i = 0; i < nd; i++) shape[i] = 1;
    shape[1] = tj_tensor_numel(weight);
    return tj_view(weight, shape, nd);
}

/* Soft targets (target of the input's shape, class probabilities):
 * -(log_softmax(self) * target * weight) summed over classes, then reduced;
 * the mean divides by the number of samples. */
static tj_tensor *cross_entropy_prob_target(tj_tensor *self, tj_tensor *target, tj_tensor *weight, int64_t reduction,
                                            double label_smoothing)
{
    const char *op = "aten::cross_entropy_loss";
    int nd = tj_tensor_ndim(self);
    int64_t class_dim = nd == 1 ? 0 : 1, n_classes = tj_tensor_size(self, (int)class_dim);
    if (tj_dtype_category(tj_tensor_dtype(target)) != TJ_CAT_FLOAT) {
        tj_error(TJ_ERR_DTYPE, "%s: expected floating point type for target with class probabilities, got %s", op,
                 tj_dtype_name(tj_tensor_dtype(target)));
        return NULL;
    }
    if (weight && (tj_tensor_ndim(weight) != 1 || tj_tensor_numel(weight) != n_classes)) {
        tj_error(TJ_ERR_SHAPE, "%s: weight tensor should be defined either for all %lld classes or no classes", op,
                 (long long)n_classes);
        return NULL;
    }
    if (reduction < 0 || reduction > 2) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: invalid reduction %lld", op, (long long)reduction);
        return NULL;
    }
    tj_tensor *input = tj__log_softmax(self, class_dim, false);
    if (label_smoothing > 0.0)
        target = tj_add_scalar(tj_mul_scalar(target, tj_v_float(1.0 - label_smoothing)),
                               tj_v_float(label_smoothing / (double)n_classes));
    tj_tensor *prod = tj_mul(input, target);
    if (weight) prod = tj_mul(prod, class_weight_view(weight, nd));
    if (reduction == 0) return tj_neg(tj_sum_dim(prod, &class_dim, 1, false, -1));
    tj_tensor *total = tj_neg(tj_sum(prod, -1));
    if (reduction == 2) return total;
    /* an empty input divides 0 by 0: nan, as ATen's fill_(NAN) */
    int64_t samples = n_classes ? tj_tensor_numel(self) / n_classes : 0;
    return tj_div_scalar(total, tj_v_int(samples));
}

/* Label smoothing with class-index targets: (1 - ls) * nll_loss +
 * (ls / C) * smooth_loss, smooth_loss = -sum over classes of
 * log_softmax(self) (* weight), 0 at ignored targets; the mean divides by the
 * total weight of the kept targets (nll_loss_forward's total_weight). */
static tj_tensor *cross_entropy_label_smoothing(tj_tensor *self, tj_tensor *target, tj_tensor *weight,
                                                int64_t reduction, int64_t ignore_index, double label_smoothing)
{
    int nd = tj_tensor_ndim(self);
    int64_t class_dim = nd == 1 ? 0 : 1, n_classes = tj_tensor_size(self, (int)class_dim);
    tj_tensor *input = tj__log_softmax(self, class_dim, false), *total_weight = NULL;
    tj_tensor *nll = nll_loss_nd(input, target, weight, reduction, ignore_index, &total_weight);
    if (!nll) return NULL;
    tj_tensor *ignore_mask = tj_eq_scalar(target, tj_v_int(ignore_index));
    tj_tensor *per_class = weight ? tj_mul(input, class_weight_view(weight, nd)) : input;
    tj_tensor *smooth = tj_masked_fill(tj_neg(tj_sum_dim(per_class, &class_dim, 1, false, -1)), ignore_mask,
                                       tj_v_float(0.0));
    tj_tensor *ret = reduction == 0 ? smooth : tj_sum(smooth, -1);
    if (reduction == 1) ret = tj_div(ret, total_weight);
    return tj_add(tj_mul_scalar(nll, tj_v_float(1.0 - label_smoothing)),
                  tj_mul_scalar(ret, tj_v_float(label_smoothing / (double)n_classes)));
}

/* cross_entropy_loss(self, target, weight?, reduction, ignore_index,
 * label_smoothing). */
static tj_status cross_entropy_loss(const tj_value *args, tj_value *outs)
{
    const char *op = "aten::cross_entropy_loss";
    tj_tensor *self = args[0].u.t, *target = args[1].u.t, *weight = tj_opt_tensor(&args[2]);
    int64_t reduction = args[3].u.i, ignore_index = args[4].u.i;
    double ls = tj_value_as_double(&args[5]);
    int nd = tj_tensor_ndim(self);
    if (nd < 1) return tj_error(TJ_ERR_SHAPE, "%s: expected 1 or more dimensions (got 0)", op);
    if (ls > 1.0 || isnan(ls))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: label_smoothing must be between 0.0 and 1.0. Got: %g", op, ls);
    bool soft = nd == tj_tensor_ndim(target) &&
                memcmp(tj_tensor_shape(self), tj_tensor_shape(target), sizeof(int64_t) * (size_t)nd) == 0;
    if (soft) {
        if (ignore_index >= 0)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: ignore_index is not supported for floating point target", op);
        return done(cross_entropy_prob_target(self, target, weight, reduction, ls), outs);
    }
    if (ls > 0.0) return done(cross_entropy_label_smoothing(self, target, weight, reduction, ignore_index, ls), outs);
    tj_tensor *logp = tj__log_softmax(self, nd == 1 ? 0 : 1, false);
    return done(nll_loss_nd(logp, target, weight, reduction, ignore_index, NULL), outs);
}

/* ATen's apply_loss_reduction: the mean (1), the sum (2) or the loss (0). */
static tj_tensor *apply_loss_reduction(tj_tensor *loss, int64_t reduction)
{
    if (reduction == 1) return tj_mean(loss, -1);
    return reduction == 2 ? tj_sum(loss, -1) : loss;
}

/* mse_loss(self, target, reduction), torch._decomp's: (self - target)^2,
 * then reduced, both operands first converted to the result's dtype (as
 * its pw_cast_for_opmath does): a bool operand is no subtraction of a bool
 * tensor there. */
static tj_status mse_loss(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(mse_loss, args, m);
    tj_tensor *d = tj_sub(tj_dc_to(args[0].u.t, m[0].dtype), tj_dc_to(args[1].u.t, m[0].dtype));
    return done(apply_loss_reduction(tj_pow_scalar(d, tj_v_int(2)), args[2].u.i), outs);
}

/* mse_loss_backward(grad, self, target, reduction), torch._decomp's: norm *
 * (self - target) * grad, norm = 2 / numel(self) for the mean, else 2
 * (rounded to the dtype the kernel computes in), in self's dtype. */
static tj_status mse_loss_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(mse_loss_backward, args, m);
    tj_dtype dt = tj_result_type(args, 3);
    tj_value norm = tj_v_float(args[3].u.i == 1 ? 2.0 / (double)tj_tensor_numel(args[1].u.t) : 2.0);
    norm = tj_dc_convert(&norm, dt);
    tj_tensor *d = tj_sub(tj_dc_to(args[1].u.t, dt), tj_dc_to(args[2].u.t, dt));
    tj_tensor *r = tj_mul(tj_mul_scalar(d, norm), tj_dc_to(args[0].u.t, dt));
    return done(tj_dc_to(r, m[0].dtype), outs);
}

/* l1_loss(self, target, reduction), ATen 1.13's composite: abs(self -
 * target), then reduced (an unknown reduction is an error here; ATen
 * returns the unreduced loss). */
static tj_status l1_loss(const tj_value *args, tj_value *outs)
{
    tj_status st = tj_check_reduction("aten::l1_loss", args[2].u.i);
    if (st != TJ_OK) return st;
    return done(apply_loss_reduction(tj_abs(tj_sub(args[0].u.t, args[1].u.t)), args[2].u.i), outs);
}

/* ---- composites with a kernel ---- */

/* Validates `op`'s arguments with its shape function alone (fake outputs,
 * nothing recorded), so that a decomposition fails exactly as the kernel. */
static tj_status check_args(const char *op, const tj_value *args, int nargs)
{
    tj_value fake[TJ_MAX_RETURNS];
    return tj_dispatch_fake(tj_op_find(op), args, nargs, fake);
}

/* The classes dim's one-hot of the targets, [N, C] (or [C] for a 1-d
 * input), with ignored targets moved to class 0; *ignored gets the mask of
 * ignored targets, shaped to broadcast against the one-hot. */
static tj_tensor *target_one_hot(tj_tensor *self, tj_tensor *target, int64_t ignore_index, tj_tensor **ignored)
{
    int nd = tj_tensor_ndim(self);
    int64_t classes = tj_tensor_shape(self)[nd - 1];
    tj_tensor *mask = tj_eq_scalar(target, tj_v_int(ignore_index));
    tj_tensor *safe = tj_where(mask, tj_scalar_tensor(tj_v_int(0), TJ_INT64), target);
    tj_tensor *range = tj_arange(tj_v_int(0), tj_v_int(classes), tj_v_int(1), TJ_INT64);
    *ignored = nd == 2 ? tj_unsqueeze(mask, 1) : mask;
    return tj_eq(range, nd == 2 ? tj_unsqueeze(safe, 1) : safe);
}

/* The kernels' check on data: a target that is neither ignore_index nor a
 * class is an error. Fake tensors (tracing for shapes) have no data to check:
 * in a replayed graph, nll_loss_forward's gather of such a target fails. */
static tj_status check_targets(const char *op, tj_tensor *target, int64_t classes, int64_t ignore_index)
{
    if (tj_tensor_is_fake(target)) return TJ_OK;
    const int64_t *t = tj_tensor_data(target);
    int64_t stride = tj_tensor_ndim(target) ? tj_tensor_strides(target)[0] : 0;
    for (int64_t i = 0; i < tj_tensor_numel(target); i++) {
        int64_t v = t[i * stride];
        if (v != ignore_index && (v < 0 || v >= classes))
            return tj_error(TJ_ERR_INDEX, "%s: target %lld is out of bounds (%lld classes)", op, (long long)v,
                            (long long)classes);
    }
    return TJ_OK;
}

/* float32 reductions run in float64, as in the kernel (rounded once). */
static tj_tensor *widen(tj_tensor *t) { return tj_tensor_dtype(t) == TJ_FLOAT32 ? tj_to_copy(t, TJ_FLOAT64) : t; }

/* nll_loss_forward(self, target, weight?, reduction, ignore_index) ->
 * (output, total_weight): loss_i = -self[i, t_i] * w[t_i], 0 for ignored
 * targets; total_weight sums w[t_i] over the kept targets. self[i, t_i] and
 * w[t_i] are gathers (as torch._decomp's): N reads, not a one-hot of N x C,
 * and a target out of range fails in a replayed graph as in the kernel,
 * instead of silently weighing nothing. */
static tj_status nll_loss_forward(const tj_value *args, tj_value *outs)
{
    const char *op = "aten::nll_loss_forward";
    tj_status st = check_args(op, args, 5);
    tj_tensor *self = args[0].u.t, *target = args[1].u.t, *weight = tj_opt_tensor(&args[2]);
    int64_t reduction = args[3].u.i, class_dim = tj_tensor_ndim(self) - 1;
    int64_t classes = st == TJ_OK ? tj_tensor_shape(self)[class_dim] : 0;
    if (st != TJ_OK || (st = check_targets(op, target, classes, args[4].u.i)) != TJ_OK) return st;
    int dtype = (int)tj_tensor_dtype(self);
    tj_tensor *zero = tj_scalar_tensor(tj_v_float(0.0), dtype), *picked, *w = tj_scalar_tensor(tj_v_float(1.0), dtype);
    tj_tensor *ignored = tj_eq_scalar(target, tj_v_int(args[4].u.i));
    if (classes == 0) {
        /* no class to read: every target is ignored (checked above on real data) */
        picked = tj_zeros(tj_tensor_shape(target), tj_tensor_ndim(target), dtype);
        if (weight) w = picked;
    } else {
        /* ignored targets read class 0, whatever ignore_index is, and count for nothing */
        tj_tensor *safe = tj_unsqueeze(tj_where(ignored, tj_scalar_tensor(tj_v_int(0), TJ_INT64), target), class_dim);
        picked = tj_squeeze_dim(tj_gather(self, class_dim, safe), class_dim);
        if (weight)
            w = class_dim == 1 ? tj_gather(weight, 0, tj_squeeze_dim(safe, 1)) : tj_squeeze_dim(tj_gather(weight, 0, safe), 0);
    }
    if (reduction == 0 && class_dim == 1) {
        outs[1] = tj_v_tensor(zero);
        return done(tj_where(ignored, zero, tj_neg(tj_mul(picked, w))), outs);
    }
    /* products and sums in float64 for float32, as the kernel */
    w = widen(w);
    tj_tensor *loss = tj_where(ignored, zero, tj_neg(tj_mul(widen(picked), w)));
    tj_tensor *total = tj_sum(tj_where(ignored, zero, w), -1);
    tj_tensor *out = reduction == 0 ? loss : tj_sum(loss, -1);
    if (reduction == 1) out = tj_div(out, total);
    out = tj_to_copy(out, dtype);
    total = tj_to_copy(total, dtype);
    if (!out || !total) return tj_last_status();
    outs[1] = tj_v_tensor(total);
    return done(out, outs);
}

/* nll_loss_backward(grad_output, self, target, weight?, reduction,
 * ignore_index, total_weight): -w[t_i] * g_i at each kept target, 0
 * elsewhere; g = grad_output (per row without reduction), divided by
 * total_weight for the mean. */
static tj_status nll_loss_backward(const tj_value *args, tj_value *outs)
{
    const char *op = "aten::nll_loss_backward";
    tj_status st = check_args(op, args, 7);
    tj_tensor *g = args[0].u.t, *self = args[1].u.t, *weight = tj_opt_tensor(&args[3]), *ignored;
    int64_t reduction = args[4].u.i;
    if (st != TJ_OK || (st = check_targets(op, args[2].u.t, tj_tensor_shape(self)[tj_tensor_ndim(self) - 1],
                                           args[5].u.i)) != TJ_OK)
        return st;
    tj_tensor *zero = tj_scalar_tensor(tj_v_float(0.0), (int)tj_tensor_dtype(self));
    tj_tensor *hot = target_one_hot(self, args[2].u.t, args[5].u.i, &ignored);
    if (reduction == 1) g = tj_div(g, args[6].u.t);
    if (reduction == 0 && tj_tensor_ndim(self) == 2) g = tj_unsqueeze(g, 1);
    if (weight) g = tj_mul(g, weight);
    return done(tj_where(ignored, zero, tj_where(hot, tj_neg(g), zero)), outs);
}

/* native_dropout(input, p, train?) -> (out, mask): the mask is bernoulli(1-p)
 * on a bool tensor, which draws the same numbers as the kernel, so a
 * decomposed graph drops the same elements as eager mode. */
static tj_status native_dropout(const tj_value *args, tj_value *outs)
{
    tj_status st = check_args("aten::native_dropout", args, 3);
    if (st != TJ_OK) return st;
    tj_tensor *input = args[0].u.t;
    double p = tj_value_as_double(&args[1]);
    bool train = args[2].kind == TJ_V_NONE || args[2].u.b;
    int nd = tj_tensor_ndim(input);
    const int64_t *shape = tj_tensor_shape(input);
    int dtype = (int)tj_tensor_dtype(input);
    tj_tensor *mask;
    if (tj_tensor_numel(input) == 0) {
        /* as the kernel (and ATen): an empty mask of the input's dtype */
        mask = tj_zeros(shape, nd, dtype);
    } else if (!train) {
        mask = tj_ones(shape, nd, TJ_BOOL);
    } else {
        mask = tj_bernoulli(tj_zeros(shape, nd, TJ_BOOL), 1.0 - p);
        tj_tensor *out = tj_mul_scalar(tj_mul(input, mask), tj_v_float(p == 1.0 ? 0.0 : 1.0 / (1.0 - p)));
        if (!out || !mask) return tj_last_status();
        outs[1] = tj_v_tensor(mask);
        return done(out, outs);
    }
    tj_tensor *out = tj_clone(input);
    if (!out || !mask) return tj_last_status();
    outs[1] = tj_v_tensor(mask);
    return done(out, outs);
}

/* binary_cross_entropy(self, target, weight?, reduction), as torch._decomp:
 * (t - 1) * maximum(log(1 - x), -100) - t * maximum(log(x), -100), times the
 * weight, then mean, sum or nothing. Like PyTorch's decomposition it cannot
 * refuse inputs outside [0, 1] (that is data-dependent); the shape function
 * checks the rest. */
static tj_status binary_cross_entropy(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(binary_cross_entropy, args, m);
    tj_tensor *x = args[0].u.t, *t = args[1].u.t, *w = tj_opt_tensor(&args[2]);
    tj_tensor *floor = tj_dc_number(-100, tj_tensor_dtype(x));
    tj_tensor *one_minus_x = tj_rsub_scalar(x, tj_v_int(1), tj_v_int(1));
    tj_tensor *loss = tj_sub(tj_mul(tj_sub_scalar(t, tj_v_int(1)), tj_maximum(tj_log(one_minus_x), floor)),
                             tj_mul(t, tj_maximum(tj_log(x), floor)));
    if (w) loss = tj_mul(loss, w);
    return done(apply_loss_reduction(loss, args[3].u.i), outs);
}

/* binary_cross_entropy_with_logits(self, target, weight?, pos_weight?,
 * reduction), as torch._decomp: m = clamp_min(-x, 0), s = log(exp(-m) +
 * exp(-x - m)); (1 - t) x + m + s, or (1 - t) x + ((p - 1) t + 1) (s + m)
 * with pos_weight p; times the weight, then reduced. */
static tj_status binary_cross_entropy_with_logits(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(binary_cross_entropy_with_logits, args, m);
    tj_tensor *x = args[0].u.t, *t = args[1].u.t, *w = tj_opt_tensor(&args[2]), *p = tj_opt_tensor(&args[3]);
    tj_tensor *max_val = tj_clamp_min(tj_neg(x), tj_v_int(0));
    tj_tensor *s = tj_log(tj_add(tj_exp(tj_neg(max_val)), tj_exp(tj_sub(tj_neg(x), max_val))));
    tj_tensor *loss = tj_mul(tj_rsub_scalar(t, tj_v_int(1), tj_v_int(1)), x);
    if (p) {
        tj_tensor *log_weight = tj_add_scalar(tj_mul(tj_sub_scalar(p, tj_v_int(1)), t), tj_v_int(1));
        loss = tj_add(loss, tj_mul(log_weight, tj_add(s, max_val)));
    } else {
        loss = tj_add(tj_add(loss, max_val), s);
    }
    if (w) loss = tj_mul(loss, w);
    return done(apply_loss_reduction(loss, args[4].u.i), outs);
}

/* grad_output paired with x's elements as ATen's kernel pairs them: both
 * without their size-1 dims, grad_output's broadcast to x's (the shape
 * function checked it), then in x's shape. */
static tj_tensor *grad_like(tj_tensor *g, tj_tensor *x)
{
    int gn = tj_tensor_ndim(g), xn = tj_tensor_ndim(x);
    if (gn == xn && !memcmp(tj_tensor_shape(g), tj_tensor_shape(x), sizeof(int64_t) * (size_t)xn)) return g;
    int64_t gs[TJ_MAX_DIMS], xs[TJ_MAX_DIMS];
    gn = tj_squeezed(g, gs, NULL);
    xn = tj_squeezed(x, xs, NULL);
    tj_tensor *r = tj_reshape(g, gs, gn);
    if (tj_tensor_numel(g) == 1) return r; /* 0-dim: broadcasts as is */
    return tj_reshape(tj_expand(r, xs, xn), tj_tensor_shape(x), tj_tensor_ndim(x));
}

/* binary_cross_entropy_backward(grad_output, self, target, weight?,
 * reduction), as torch._decomp: grad * (x - t) / clamp(x * (1 - x), min=1e-12),
 * times the weight, divided by x's element count for the mean; grad_output
 * paired with x as ATen's kernel (grad_like), not broadcast as torch._decomp. */
static tj_status binary_cross_entropy_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(binary_cross_entropy_backward, args, m);
    tj_tensor *x = args[1].u.t, *t = args[2].u.t, *w = tj_opt_tensor(&args[3]), *g = grad_like(args[0].u.t, x);
    tj_tensor *denom = tj_clamp(tj_mul(x, tj_rsub_scalar(x, tj_v_int(1), tj_v_int(1))), tj_v_float(1e-12), tj_v_none());
    tj_tensor *r = tj_div(tj_mul(g, tj_sub(x, t)), denom);
    if (w) r = tj_mul(r, w);
    if (args[4].u.i == 1) r = tj_div_scalar(r, tj_v_int(tj_tensor_numel(x)));
    return done(r, outs);
}

/* ---- smooth_l1_loss, huber_loss and their gradients ---- */

/* The operands of a pointwise loss (or its gradient) in the dtype its kernel
 * computes in, result_type of the n tensors, into x; *p the parameter (beta,
 * delta) and, for a gradient (norm not NULL), *norm = 1 / numel(self) for
 * the mean (mean_of not NULL) or 1, each rounded to that dtype as the kernel
 * converts them. */
static void pointwise_loss_operands(const tj_value *args, int n, const tj_value *param, const tj_tensor *mean_of,
                                    tj_tensor **x, tj_value *p, tj_value *norm)
{
    tj_dtype dt = tj_result_type(args, n);
    for (int i = 0; i < n; i++) x[i] = tj_dc_to(args[i].u.t, dt);
    *p = tj_dc_convert(param, dt);
    if (!norm) return;
    tj_value one_over_n = tj_v_float(mean_of ? 1.0 / (double)tj_tensor_numel(mean_of) : 1.0);
    *norm = tj_dc_convert(&one_over_n, dt);
}

/* smooth_l1_loss(self, target, reduction, beta), as ATen's kernel (torch._decomp
 * has none): z = |self - target|, where(z < beta, 0.5 * z * z / beta, z -
 * 0.5 * beta) (beta = 0: z, the other branch is never taken), reduced. */
static tj_status smooth_l1_loss(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(smooth_l1_loss, args, m);
    tj_tensor *x[2];
    tj_value beta;
    pointwise_loss_operands(args, 2, &args[3], NULL, x, &beta, NULL);
    tj_tensor *z = tj_abs(tj_sub(x[0], x[1]));
    tj_tensor *small = tj_div_scalar(tj_mul(tj_mul_scalar(z, tj_v_float(0.5)), z), beta);
    tj_tensor *large = tj_sub_scalar(z, tj_v_float(0.5 * beta.u.f));
    return done(apply_loss_reduction(tj_where(tj_lt_scalar(z, beta), small, large), args[2].u.i), outs);
}

/* huber_loss(self, target, reduction, delta), as torch._refs: z = |self -
 * target|, where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)),
 * rounded to self's dtype (ATen's empty_like(self) result), reduced. */
static tj_status huber_loss(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(huber_loss, args, m);
    tj_tensor *x[2];
    tj_value delta;
    pointwise_loss_operands(args, 2, &args[3], NULL, x, &delta, NULL);
    tj_tensor *z = tj_abs(tj_sub(x[0], x[1]));
    tj_tensor *small = tj_mul(tj_mul_scalar(z, tj_v_float(0.5)), z);
    tj_tensor *large = tj_mul_scalar(tj_sub_scalar(z, tj_v_float(0.5 * delta.u.f)), delta);
    tj_tensor *loss = tj_dc_to(tj_where(tj_lt_scalar(z, delta), small, large), m[0].dtype);
    return done(apply_loss_reduction(loss, args[2].u.i), outs);
}

/* smooth_l1_loss_backward(grad, self, target, reduction, beta), as ATen's
 * kernel: x = self - target, where(x <= -beta, -norm * grad, where(x >=
 * beta, norm * grad, norm * x * grad / beta)) in self's dtype. */
static tj_status smooth_l1_loss_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(smooth_l1_loss_backward, args, m);
    tj_tensor *x[3];
    tj_value beta, norm;
    pointwise_loss_operands(args, 3, &args[4], args[3].u.i == 1 ? args[1].u.t : NULL, x, &beta, &norm);
    tj_tensor *g = x[0], *d = tj_sub(x[1], x[2]);
    tj_tensor *mid = tj_div_scalar(tj_mul(tj_mul_scalar(d, norm), g), beta);
    tj_tensor *upper = tj_where(tj_ge_scalar(d, beta), tj_mul_scalar(g, norm), mid);
    tj_tensor *r = tj_where(tj_le_scalar(d, tj_v_float(-beta.u.f)), tj_mul_scalar(g, tj_v_float(-norm.u.f)), upper);
    return done(tj_dc_to(r, m[0].dtype), outs);
}

/* huber_loss_backward(grad, self, target, reduction, delta), torch._decomp's
 * with ATen's comparisons and order: x = self - target, where(x <= -delta,
 * -norm * grad * delta, where(x >= delta, norm * grad * delta, norm * x *
 * grad)). */
static tj_status huber_loss_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(huber_loss_backward, args, m);
    tj_tensor *x[3];
    tj_value delta, norm;
    pointwise_loss_operands(args, 3, &args[4], args[3].u.i == 1 ? args[1].u.t : NULL, x, &delta, &norm);
    tj_tensor *g = x[0], *d = tj_sub(x[1], x[2]);
    tj_tensor *upper = tj_where(tj_ge_scalar(d, delta), tj_mul_scalar(tj_mul_scalar(g, norm), delta),
                                tj_mul(tj_mul_scalar(d, norm), g));
    tj_tensor *lower = tj_mul_scalar(tj_mul_scalar(g, tj_v_float(-norm.u.f)), delta);
    return done(tj_where(tj_le_scalar(d, tj_v_float(-delta.u.f)), lower, upper), outs);
}

void tj_register_nn_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(nll_loss_forward), nll_loss_forward, "nll_loss_forward");
    tj_op_set_decomposition(TJ_OPS(nll_loss_backward), nll_loss_backward, "nll_loss_backward");
    tj_op_set_decomposition(TJ_OPS(binary_cross_entropy), binary_cross_entropy, "binary_cross_entropy");
    tj_op_set_decomposition(TJ_OPS(binary_cross_entropy_with_logits), binary_cross_entropy_with_logits,
                            "binary_cross_entropy_with_logits");
    tj_op_set_decomposition(TJ_OPS(binary_cross_entropy_backward), binary_cross_entropy_backward,
                            "binary_cross_entropy_backward");
    tj_op_set_decomposition(TJ_OPS(native_dropout), native_dropout, "native_dropout");
    tj_op_set_decomposition(TJ_OPS(conv1d), conv1d, "conv1d");
    tj_op_set_decomposition(TJ_OPS(conv2d), conv2d, "conv2d");
    tj_op_set_decomposition(TJ_OPS(conv_transpose1d), conv_transpose1d, "conv_transpose1d");
    tj_op_set_decomposition(TJ_OPS(conv_transpose2d_input), conv_transpose2d, "conv_transpose2d");
    tj_op_set_decomposition(TJ_OPS(conv3d), conv3d, "conv3d");
    tj_op_set_decomposition(TJ_OPS(conv_transpose3d_input), conv_transpose3d, "conv_transpose3d");
    tj_op_set_decomposition(TJ_OPS(max_pool2d), max_pool2d, "max_pool2d");
    tj_op_set_decomposition(TJ_OPS(max_pool3d), max_pool3d, "max_pool3d");
    tj_op_set_decomposition(TJ_OPS(adaptive_avg_pool2d), adaptive_avg_pool2d, "adaptive_avg_pool2d");
    tj_op_set_decomposition(TJ_OPS(dropout), dropout, "dropout");
    tj_op_set_decomposition(TJ_OPS(nll_loss), nll_loss, "nll_loss");
    tj_op_set_decomposition(TJ_OPS(nll_loss2d_forward), nll_loss2d_forward, "nll_loss2d_forward");
    tj_op_set_decomposition(TJ_OPS(nll_loss2d_backward), nll_loss2d_backward, "nll_loss2d_backward");
    tj_op_set_decomposition(TJ_OPS(cross_entropy_loss), cross_entropy_loss, "cross_entropy_loss");
    tj_op_set_decomposition(TJ_OPS(mse_loss), mse_loss, "mse_loss");
    tj_op_set_decomposition(TJ_OPS(mse_loss_backward), mse_loss_backward, "mse_loss_backward");
    tj_op_set_decomposition(TJ_OPS(l1_loss), l1_loss, "l1_loss");
    tj_op_set_decomposition(TJ_OPS(smooth_l1_loss), smooth_l1_loss, "smooth_l1_loss");
    tj_op_set_decomposition(TJ_OPS(huber_loss), huber_loss, "huber_loss");
    tj_op_set_decomposition(TJ_OPS(smooth_l1_loss_backward), smooth_l1_loss_backward, "smooth_l1_loss_backward");
    tj_op_set_decomposition(TJ_OPS(huber_loss_backward), huber_loss_backward, "huber_loss_backward");
}
