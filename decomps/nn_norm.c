/* Softmax and layer-norm decompositions.
 *
 * Implicit composites as ATen 1.13 writes them (SoftMax.cpp,
 * layer_norm.cpp): softmax.int / log_softmax.int convert to the requested
 * dtype, then call _softmax / _log_softmax; layer_norm is native_layer_norm's
 * first output.
 *
 * Composites with a kernel as torch._decomp / torch._refs 1.13 write them:
 * _softmax = exp(x - amax) / sum, _log_softmax = (x - amax) - log(sum(exp)),
 * their backward formulas, native_layer_norm through var_mean and rsqrt,
 * native_layer_norm_backward as in decompositions.py. Each first runs the
 * kernel's shape function, so a decomposed call fails as an eager one.
 * Precision follows the kernels (checked by `tjit decomps --verify`): sums
 * in float64, the layer-norm forward wholly in float64, rounded once, its
 * backward in the kernel's steps and dtype. */
#include <string.h>

#include "internal.h"
#include "op_backward.h"
#include "op_nn.h"

static tj_status done(tj_tensor *r, tj_value *outs)
{
    if (!r) return tj_last_status();
    outs[0] = tj_v_tensor(r);
    return TJ_OK;
}

/* self converted to the optional dtype argument (self itself when absent or
 * already of that dtype, as Tensor::to does). */
static tj_tensor *to_dtype(tj_tensor *self, const tj_value *dtype)
{
    if (dtype->kind != TJ_V_DTYPE || dtype->u.dtype == tj_tensor_dtype(self)) return self;
    return tj_to_copy(self, (int)dtype->u.dtype);
}

static tj_status softmax(const tj_value *args, tj_value *outs)
{
    return done(tj__softmax(to_dtype(args[0].u.t, &args[2]), args[1].u.i, false), outs);
}

static tj_status log_softmax(const tj_value *args, tj_value *outs)
{
    return done(tj__log_softmax(to_dtype(args[0].u.t, &args[2]), args[1].u.i, false), outs);
}

static tj_status layer_norm(const tj_value *args, tj_value *outs)
{
    tj_tensor *out = NULL;
    tj_status st = tj_native_layer_norm(args[0].u.t, args[1].u.ints, args[1].n, tj_opt_tensor(&args[2]),
                                        tj_opt_tensor(&args[3]), tj_value_as_double(&args[4]), &out, NULL, NULL);
    return st != TJ_OK ? st : done(out, outs);
}

/* As ATen's batch_norm: native_batch_norm's first output. One value per
 * channel in training is accepted, as by the aten operator (only Python's
 * F.batch_norm refuses it): the output is the bias, running_var nan. An
 * empty batch leaves the running statistics as they are, as ATen's. */
static tj_status batch_norm(const tj_value *args, tj_value *outs)
{
    tj_tensor *out = NULL;
    tj_status st = tj_native_batch_norm(args[0].u.t, tj_opt_tensor(&args[1]), tj_opt_tensor(&args[2]),
                                        tj_opt_tensor(&args[3]), tj_opt_tensor(&args[4]), args[5].u.b,
                                        tj_value_as_double(&args[6]), tj_value_as_double(&args[7]), &out, NULL, NULL);
    return st != TJ_OK ? st : done(out, outs);
}

/* As ATen's group_norm: N = size(0), C = size(1), HxW the product of the
 * rest, then native_group_norm's first output. */
static tj_status group_norm(const tj_value *args, tj_value *outs)
{
    tj_tensor *x = args[0].u.t, *out = NULL;
    int nd = tj_tensor_ndim(x);
    const int64_t *shape = tj_tensor_shape(x);
    if (nd < 2) {
        char s[96];
        return tj_error(TJ_ERR_SHAPE, "aten::group_norm: input %s needs at least 2 dims [N, C, *]",
                        tj_shape_str(nd, shape, s, sizeof s));
    }
    int64_t hw = 1;
    for (int d = 2; d < nd; d++) hw *= shape[d];
    tj_status st = tj_native_group_norm(x, tj_opt_tensor(&args[2]), tj_opt_tensor(&args[3]), shape[0], shape[1], hw,
                                        args[1].u.i, tj_value_as_double(&args[4]), &out, NULL, NULL);
    return st != TJ_OK ? st : done(out, outs);
}

/* ---- _softmax / _log_softmax and their backward operators ---- */

/* The kernel's algorithm: shifted = x - amax, exps in the input dtype,
 * their sum in float64; softmax scales the exps by 1/sum, log_softmax
 * subtracts log(sum) from shifted, each rounded once to the dtype (the
 * kernel's 1.0f / sum and logf(sum) round a float sum). */
static tj_status softmax_common(const tj_value *args, tj_value *outs, bool take_log)
{
    tj_meta m[1];
    if ((take_log ? tj_meta__log_softmax : tj_meta__softmax)(args, m) != TJ_OK) return tj_last_status();
    int64_t dim = args[1].u.i;
    tj_tensor *x = args[0].u.t;
    tj_dtype dt = m[0].dtype;
    if (tj_tensor_numel(x) == 0) return done(tj_to_copy(x, (int)dt), outs);
    tj_tensor *shifted = tj_sub(x, tj_amax(x, &dim, 1, true)), *e = tj_exp(shifted);
    tj_tensor *sum = tj_sum_dim(e, &dim, 1, true, TJ_FLOAT64);
    if (take_log) return done(tj_sub(shifted, tj_to_copy(tj_log(sum), (int)dt)), outs);
    tj_tensor *inv = tj_div(tj_scalar_tensor(tj_v_float(1.0), TJ_FLOAT64), sum);
    return done(tj_mul(e, tj_to_copy(inv, (int)dt)), outs);
}

static tj_status softmax_(const tj_value *args, tj_value *outs) { return softmax_common(args, outs, false); }
static tj_status log_softmax_(const tj_value *args, tj_value *outs) { return softmax_common(args, outs, true); }

/* output * (grad_output - sum(grad_output * output)), the sum of exact
 * products in float64 as the kernel takes it. */
static tj_status softmax_backward_data(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_meta__softmax_backward_data(args, m) != TJ_OK) return tj_last_status();
    int64_t dim = args[2].u.i;
    tj_tensor *g = args[0].u.t, *y = args[1].u.t;
    tj_tensor *gy = tj_mul(tj_to_copy(g, TJ_FLOAT64), tj_to_copy(y, TJ_FLOAT64));
    tj_tensor *a = tj_to_copy(tj_sum_dim(gy, &dim, 1, true, -1), (int)tj_tensor_dtype(y));
    tj_tensor *r = tj_mul(y, tj_sub(g, a));
    return done(r && tj_tensor_dtype(r) != m[0].dtype ? tj_to_copy(r, (int)m[0].dtype) : r, outs);
}

/* grad_output - exp(output) * sum(grad_output) */
static tj_status log_softmax_backward_data(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_meta__log_softmax_backward_data(args, m) != TJ_OK) return tj_last_status();
    int64_t dim = args[2].u.i;
    tj_tensor *g = args[0].u.t, *e = tj_exp(args[1].u.t);
    return done(tj_sub(g, tj_mul(e, tj_sum_dim(g, &dim, 1, true, -1))), outs);
}

/* ---- native_layer_norm and its backward ---- */

/* The normalised dims [axis, ndim) of input for normalized_shape. */
static int norm_axis(const tj_tensor *input, const tj_value *normalized_shape)
{
    return tj_tensor_ndim(input) - normalized_shape->n;
}

static tj_tensor *to_f64(tj_tensor *t) { return t && tj_tensor_dtype(t) != TJ_FLOAT64 ? tj_to_copy(t, TJ_FLOAT64) : t; }
static tj_tensor *to_dt(tj_tensor *t, tj_dtype dt) { return t && tj_tensor_dtype(t) != dt ? tj_to_copy(t, (int)dt) : t; }

/* var_mean (biased) over the normalised dims, rstd = 1/sqrt(var + eps),
 * out = (x - mean) * rstd, then * weight and + bias; computed in float64
 * and rounded once (the kernel's statistics are double too). */
static tj_status native_layer_norm(const tj_value *args, tj_value *outs)
{
    tj_meta m[3];
    if (tj_meta_native_layer_norm(args, m) != TJ_OK) return tj_last_status();
    tj_dtype dt = m[0].dtype;
    tj_tensor *x = to_f64(args[0].u.t), *w = to_f64(tj_opt_tensor(&args[2])), *b = to_f64(tj_opt_tensor(&args[3]));
    int axis = norm_axis(args[0].u.t, &args[1]), nd = tj_tensor_ndim(args[0].u.t);
    int64_t dims[TJ_MAX_DIMS];
    for (int d = axis; d < nd; d++) dims[d - axis] = d;
    tj_tensor *var = NULL, *mean = NULL;
    if (tj_var_mean(x, dims, nd - axis, 0, true, &var, &mean) != TJ_OK) return tj_last_status();
    tj_tensor *rstd = tj_div(tj_scalar_tensor(tj_v_float(1.0), TJ_FLOAT64), tj_sqrt(tj_add_scalar(var, args[4])));
    tj_tensor *out = tj_mul(tj_sub(x, mean), rstd);
    if (w) out = tj_mul(out, w);
    if (b) out = tj_add(out, b);
    out = to_dt(out, dt);
    mean = to_dt(mean, dt);
    rstd = to_dt(rstd, dt);
    if (!out || !mean || !rstd) return tj_last_status();
    outs[0] = tj_v_tensor(out);
    outs[1] = tj_v_tensor(mean);
    outs[2] = tj_v_tensor(rstd);
    return TJ_OK;
}

/* mean / rstd shaped [outer..., 1, ...] to broadcast against the input (the
 * kernel accepts any shape with one value per row). */
static tj_tensor *stat_view(tj_tensor *stat, const int64_t *shape, int nd, int axis)
{
    int64_t want[TJ_MAX_DIMS];
    for (int d = 0; d < nd; d++) want[d] = d < axis ? shape[d] : 1;
    bool same = tj_tensor_ndim(stat) == nd;
    for (int d = 0; same && d < nd; d++) same = tj_tensor_shape(stat)[d] == want[d];
    return same ? stat : tj_reshape(stat, want, nd);
}

/* sum(t) / n over dims (kept), in float64, rounded once to dt. */
static tj_tensor *row_mean(tj_tensor *t, const int64_t *dims, int ndims, int64_t n, tj_dtype dt)
{
    return to_dt(tj_div_scalar(tj_sum_dim(t, dims, ndims, true, TJ_FLOAT64), tj_v_int(n)), dt);
}

/* As the kernel computes it (kernels/layer_norm_backward_isa.h), its steps
 * in its order, in the input's dtype with the sums in float64: wg = g * w,
 * x_hat = (x - mean) * rstd; per row a = sum(wg) / N and b = sum(wg * x_hat)
 * / N over the normalised dims, each rounded once; grad_input = rstd * ((wg
 * - a) - x_hat * b); grad_weight = sum(g * x_hat), grad_bias = sum(g) over
 * the others. The same algebra as torch._decomp's rstd / N * (N wg - sum(wg)
 * - x_hat sum(wg x_hat)), which also computes in the input's dtype (its
 * computation dtype). The one rounding the kernel does not make: wg * x_hat
 * and g * x_hat are rounded before they are summed (the kernel sums the
 * exact products), a relative 2^-24 per term for float32. Outputs whose
 * output_mask entry is false stay undefined. */
static tj_status native_layer_norm_backward(const tj_value *args, tj_value *outs)
{
    tj_meta m[3];
    if (tj_meta_native_layer_norm_backward(args, m) != TJ_OK) return tj_last_status();
    tj_dtype dt = m[0].dtype;
    tj_tensor *g = to_dt(args[0].u.t, dt), *x = to_dt(args[1].u.t, dt), *w = to_dt(tj_opt_tensor(&args[5]), dt);
    const bool *mask = args[7].u.bools;
    int nd = tj_tensor_ndim(x), axis = norm_axis(x, &args[2]);
    const int64_t *shape = tj_tensor_shape(x);
    int64_t inner[TJ_MAX_DIMS], outer[TJ_MAX_DIMS], n = 1, rows = 1;
    for (int d = 0; d < nd; d++) {
        if (d < axis) outer[d] = d, rows *= shape[d];
        else inner[d - axis] = d, n *= shape[d];
    }
    tj_tensor *r[3] = {NULL, NULL, NULL};
    if (rows <= 0 || n <= 0) {
        for (int i = 0; i < 3; i++)
            if (mask[i]) r[i] = tj_zeros(m[i].shape, m[i].ndim, (int)m[i].dtype);
    } else {
        tj_tensor *mean = to_dt(stat_view(args[3].u.t, shape, nd, axis), dt);
        tj_tensor *rstd = to_dt(stat_view(args[4].u.t, shape, nd, axis), dt);
        tj_tensor *x_hat = tj_mul(tj_sub(x, mean), rstd);
        if (mask[0]) {
            tj_tensor *wg = w ? tj_mul(g, w) : g;
            tj_tensor *a = row_mean(wg, inner, nd - axis, n, dt);
            tj_tensor *b = row_mean(tj_mul(wg, x_hat), inner, nd - axis, n, dt);
            r[0] = tj_mul(rstd, tj_sub(tj_sub(wg, a), tj_mul(x_hat, b)));
        }
        if (mask[1]) {
            tj_tensor *gw = tj_mul(g, x_hat);
            r[1] = axis > 0 ? tj_sum_dim(gw, outer, axis, false, -1) : gw;
        }
        if (mask[2]) r[2] = axis > 0 ? tj_sum_dim(g, outer, axis, false, -1) : tj_clone(g);
    }
    for (int i = 0; i < 3; i++) {
        if (mask[i] && !(r[i] = to_dt(r[i], m[i].dtype))) return tj_last_status();
        outs[i] = mask[i] ? tj_v_tensor(r[i]) : tj_v_none();
    }
    return TJ_OK;
}

/* ---- native_batch_norm, native_group_norm and their backward ---- */

/* A [C] tensor (or NULL) shaped [1, C, 1, ...] against an input of rank nd. */
static tj_tensor *per_channel(tj_tensor *p, int nd)
{
    if (!p) return NULL;
    int64_t shape[TJ_MAX_DIMS];
    for (int d = 0; d < nd; d++) shape[d] = d == 1 ? tj_tensor_shape(p)[0] : 1;
    return tj_reshape(to_f64(p), shape, nd);
}

/* The dims a channel's statistics reduce over: all but dim 1. */
static int channel_dims(int nd, int64_t *dims)
{
    int k = 0;
    for (int d = 0; d < nd; d++)
        if (d != 1) dims[k++] = d;
    return k;
}

static int64_t channel_count(tj_tensor *x)
{
    int64_t c = tj_tensor_shape(x)[1];
    return c ? tj_tensor_numel(x) / c : 0;
}

/* As torch._decomp's native_batch_norm: in training var_mean over every dim
 * but the channel, out = (x - mean) * rsqrt(var + eps) * weight + bias, the
 * running statistics momentum-averaged with the unbiased variance; in
 * evaluation the running statistics. In float64, rounded once. Where ATen's
 * kernel differs from torch._decomp, as the kernel: in training a zero
 * variance with eps 0 gives invstd 0 (ATen's InvStd); a channel whose
 * alpha = invstd * weight is infinite or nan gives x * alpha + (bias -
 * mean * alpha) (ATen's form, whose infinities follow x's sign). `functional`
 * returns the new running statistics (_native_batch_norm_legit_functional)
 * instead of copying them into the arguments (native_batch_norm, whose
 * copy_ make_fx records and functionalisation writes back). */
static tj_status batch_norm_common(const tj_value *args, tj_value *outs, bool functional)
{
    tj_meta m[5];
    if ((functional ? tj_meta__native_batch_norm_legit_functional : tj_meta_native_batch_norm)(args, m) != TJ_OK)
        return tj_last_status();
    tj_dtype dt = m[0].dtype;
    tj_tensor *x = to_f64(args[0].u.t), *rm = tj_opt_tensor(&args[3]), *rv = tj_opt_tensor(&args[4]);
    int nd = tj_tensor_ndim(x);
    int64_t c = tj_tensor_shape(x)[1], count = channel_count(x), dims[TJ_MAX_DIMS];
    int k = channel_dims(nd, dims);
    bool train = args[5].u.b;
    double momentum = tj_value_as_double(&args[6]);
    tj_tensor *mean, *invstd, *save_mean, *save_invstd, *new_rm = rm, *new_rv = rv;
    if (train) {
        tj_tensor *var = NULL;
        if (tj_var_mean(x, dims, k, 0, true, &var, &mean) != TJ_OK) return tj_last_status();
        invstd = tj_rsqrt(tj_add_scalar(var, args[7]));
        if (tj_value_as_double(&args[7]) == 0)
            invstd = tj_where_scalar_self(tj_eq_scalar(var, tj_v_int(0)), tj_v_int(0), invstd);
        save_mean = tj_reshape(mean, &c, 1);
        save_invstd = tj_reshape(invstd, &c, 1);
        tj_tensor *unbiased = tj_mul_scalar(tj_reshape(var, &c, 1), tj_v_float((double)count / (double)(count - 1)));
        /* an empty batch leaves the running statistics as they are, as the kernel */
        if (rm && count > 0)
            new_rm = to_dt(tj_add(tj_mul_scalar(save_mean, tj_v_float(momentum)),
                                  tj_mul_scalar(to_f64(rm), tj_v_float(1 - momentum))), dt);
        if (rv && count > 0)
            new_rv = to_dt(tj_add(tj_mul_scalar(unbiased, tj_v_float(momentum)),
                                  tj_mul_scalar(to_f64(rv), tj_v_float(1 - momentum))), dt);
        if (!functional && count > 0 && ((rm && !tj_copy_(rm, new_rm)) || (rv && !tj_copy_(rv, new_rv))))
            return tj_last_status();
    } else {
        mean = per_channel(rm, nd);
        invstd = tj_rsqrt(tj_add_scalar(per_channel(rv, nd), args[7]));
        save_mean = save_invstd = tj_zeros((int64_t[]){0}, 1, (int)TJ_FLOAT64);
    }
    tj_tensor *w = per_channel(tj_opt_tensor(&args[1]), nd), *b = per_channel(tj_opt_tensor(&args[2]), nd);
    tj_tensor *alpha = w ? tj_mul(invstd, w) : invstd;
    /* per channel: shift = mean and beta = bias where alpha is finite, else
     * shift = 0 and beta = bias - mean * alpha; an infinite mean equals its
     * shift and leaves beta = bias (inf - inf would be nan) */
    tj_tensor *shift = tj_where_scalar_other(tj_eq_scalar(tj_sub(alpha, alpha), tj_v_int(0)), mean, tj_v_int(0));
    tj_tensor *beta = tj_mul(tj_where_scalar_self(tj_eq(mean, shift), tj_v_int(0), tj_sub(mean, shift)), alpha);
    beta = b ? tj_sub(b, beta) : tj_neg(beta);
    tj_tensor *out = tj_add(tj_mul(tj_sub(x, shift), alpha), beta);
    tj_tensor *r[5] = {to_dt(out, dt), to_dt(save_mean, dt), to_dt(save_invstd, dt), new_rm, new_rv};
    for (int i = 0; i < (functional ? 5 : 3); i++) {
        if (!r[i]) return tj_last_status();
        /* the functional form returns new tensors, never its arguments */
        bool is_arg = (i == 3 && r[i] == rm) || (i == 4 && r[i] == rv);
        outs[i] = tj_v_tensor(is_arg ? tj_clone(r[i]) : r[i]);
    }
    return TJ_OK;
}

static tj_status native_batch_norm(const tj_value *args, tj_value *outs) { return batch_norm_common(args, outs, false); }
static tj_status native_batch_norm_legit_functional(const tj_value *args, tj_value *outs)
{
    return batch_norm_common(args, outs, true);
}

/* As torch._decomp's native_batch_norm_backward: with sum_dy = sum(g) and
 * dot = sum(g (x - mean)) per channel over its M elements, grad_input =
 * (g - sum_dy / M - (x - mean) invstd^2 dot / M) invstd w in training,
 * g invstd w in evaluation; grad_weight = dot invstd, grad_bias = sum_dy. */
static tj_status native_batch_norm_backward(const tj_value *args, tj_value *outs)
{
    tj_meta m[3];
    if (tj_meta_native_batch_norm_backward(args, m) != TJ_OK) return tj_last_status();
    tj_tensor *g = to_f64(args[0].u.t), *x = to_f64(args[1].u.t);
    const bool *mask = args[9].u.bools;
    bool train = args[7].u.b;
    int nd = tj_tensor_ndim(x);
    int64_t c = tj_tensor_shape(x)[1], count = channel_count(x), dims[TJ_MAX_DIMS];
    int k = channel_dims(nd, dims);
    tj_tensor *mean = per_channel(tj_opt_tensor(&args[train ? 5 : 3]), nd), *invstd;
    if (train) invstd = per_channel(tj_opt_tensor(&args[6]), nd);
    else invstd = tj_rsqrt(tj_add_scalar(per_channel(tj_opt_tensor(&args[4]), nd), args[8]));
    tj_tensor *w = per_channel(tj_opt_tensor(&args[2]), nd), *dev = tj_sub(x, mean);
    tj_tensor *sum_dy = tj_sum_dim(g, dims, k, true, -1), *dot = tj_sum_dim(tj_mul(g, dev), dims, k, true, -1);
    tj_tensor *r[3] = {NULL, NULL, NULL};
    if (mask[0]) {
        tj_tensor *scale = w ? tj_mul(invstd, w) : invstd, *gi = g;
        if (train) {
            tj_tensor *proj = tj_div_scalar(tj_mul(tj_mul(invstd, invstd), dot), tj_v_int(count));
            gi = tj_sub(tj_sub(g, tj_div_scalar(sum_dy, tj_v_int(count))), tj_mul(dev, proj));
        }
        r[0] = tj_mul(gi, scale);
    }
    if (mask[1]) r[1] = tj_reshape(tj_mul(dot, invstd), &c, 1);
    if (mask[2]) r[2] = tj_reshape(sum_dy, &c, 1);
    for (int i = 0; i < 3; i++) {
        if (mask[i] && !(r[i] = to_dt(r[i], m[i].dtype))) return tj_last_status();
        outs[i] = mask[i] ? tj_v_tensor(r[i]) : tj_v_none();
    }
    return TJ_OK;
}

/* input [N, C, *] as [N, group, C / group, HxW] (float64). */
static tj_tensor *grouped(tj_tensor *t, const tj_value *nchw)
{
    int64_t g = nchw[3].u.i, shape[4] = {nchw[0].u.i, g, nchw[1].u.i / g, nchw[2].u.i};
    return tj_reshape(to_f64(t), shape, 4);
}

/* weight [C] (or NULL) as [1, group, C / group, 1] (float64). */
static tj_tensor *grouped_weight(tj_tensor *w, const tj_value *nchw)
{
    int64_t g = nchw[3].u.i, shape[4] = {1, g, nchw[1].u.i / g, 1};
    return w ? tj_reshape(to_f64(w), shape, 4) : NULL;
}

/* As torch._decomp's native_group_norm: var_mean over each sample's group,
 * out = (x - mean) * rsqrt(var + eps), then * weight + bias per channel; in
 * float64, rounded once. mean and rstd [N, group]. */
static tj_status native_group_norm(const tj_value *args, tj_value *outs)
{
    tj_meta m[3];
    if (tj_meta_native_group_norm(args, m) != TJ_OK) return tj_last_status();
    tj_tensor *x = args[0].u.t, *xg = grouped(x, &args[3]), *var = NULL, *mean = NULL;
    int64_t dims[2] = {2, 3}, ng[2] = {args[3].u.i, args[6].u.i};
    if (tj_var_mean(xg, dims, 2, 0, true, &var, &mean) != TJ_OK) return tj_last_status();
    tj_tensor *rstd = tj_rsqrt(tj_add_scalar(var, args[7]));
    tj_tensor *out = tj_mul(tj_sub(xg, mean), rstd), *w = grouped_weight(tj_opt_tensor(&args[1]), &args[3]);
    tj_tensor *b = grouped_weight(tj_opt_tensor(&args[2]), &args[3]);
    if (w) out = tj_mul(out, w);
    if (b) out = tj_add(out, b);
    tj_tensor *r[3] = {tj_reshape(out, m[0].shape, m[0].ndim), tj_reshape(mean, ng, 2), tj_reshape(rstd, ng, 2)};
    for (int i = 0; i < 3; i++) {
        if (!(r[i] = to_dt(r[i], m[i].dtype))) return tj_last_status();
        outs[i] = tj_v_tensor(r[i]);
    }
    return TJ_OK;
}

/* As torch._decomp's native_group_norm_backward: with ds = sum(w g (x -
 * mean)) and db = sum(w g) over each sample's group of M elements,
 * grad_input = rstd w g - ds rstd^3 / M (x - mean) - db rstd / M;
 * grad_weight = sum(g (x - mean) rstd), grad_bias = sum(g) over samples and
 * HxW. */
static tj_status native_group_norm_backward(const tj_value *args, tj_value *outs)
{
    tj_meta m[3];
    if (tj_meta_native_group_norm_backward(args, m) != TJ_OK) return tj_last_status();
    const tj_value *nchw = &args[5];
    const bool *mask = args[9].u.bools;
    int64_t n = nchw[0].u.i, c = nchw[1].u.i, group = nchw[3].u.i, count = c / group * nchw[2].u.i;
    int64_t stat_shape[4] = {n, group, 1, 1}, inner[2] = {2, 3}, outer[2] = {0, 3};
    tj_tensor *g = grouped(args[0].u.t, nchw), *x = grouped(args[1].u.t, nchw);
    tj_tensor *mean = tj_reshape(to_f64(args[2].u.t), stat_shape, 4), *rstd = tj_reshape(to_f64(args[3].u.t), stat_shape, 4);
    tj_tensor *w = grouped_weight(tj_opt_tensor(&args[4]), nchw), *dev = tj_sub(x, mean), *wg = w ? tj_mul(g, w) : g;
    tj_tensor *r[3] = {NULL, NULL, NULL};
    if (mask[0]) {
        tj_tensor *ds = tj_sum_dim(tj_mul(wg, dev), inner, 2, true, -1), *db = tj_sum_dim(wg, inner, 2, true, -1);
        tj_tensor *r3 = tj_div_scalar(tj_mul(tj_mul(rstd, rstd), rstd), tj_v_int(count));
        tj_tensor *gi = tj_sub(tj_sub(tj_mul(wg, rstd), tj_mul(tj_mul(ds, r3), dev)),
                               tj_div_scalar(tj_mul(db, rstd), tj_v_int(count)));
        r[0] = tj_reshape(gi, m[0].shape, m[0].ndim);
    }
    if (mask[1]) r[1] = tj_reshape(tj_sum_dim(tj_mul(tj_mul(g, dev), rstd), outer, 2, false, -1), &c, 1);
    if (mask[2]) r[2] = tj_reshape(tj_sum_dim(g, outer, 2, false, -1), &c, 1);
    for (int i = 0; i < 3; i++) {
        if (mask[i] && !(r[i] = to_dt(r[i], m[i].dtype))) return tj_last_status();
        outs[i] = mask[i] ? tj_v_tensor(r[i]) : tj_v_none();
    }
    return TJ_OK;
}

void tj_register_nn_norm_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(softmax_int), softmax, "softmax");
    tj_op_set_decomposition(TJ_OPS(log_softmax_int), log_softmax, "log_softmax");
    tj_op_set_decomposition(TJ_OPS(layer_norm), layer_norm, "layer_norm");
    tj_op_set_decomposition(TJ_OPS(batch_norm), batch_norm, "batch_norm");
    tj_op_set_decomposition(TJ_OPS(group_norm), group_norm, "group_norm");
    tj_op_set_decomposition(TJ_OPS(_softmax), softmax_, "_softmax");
    tj_op_set_decomposition(TJ_OPS(_log_softmax), log_softmax_, "_log_softmax");
    tj_op_set_decomposition(TJ_OPS(_softmax_backward_data), softmax_backward_data, "_softmax_backward_data");
    tj_op_set_decomposition(TJ_OPS(_log_softmax_backward_data), log_softmax_backward_data,
                            "_log_softmax_backward_data");
    tj_op_set_decomposition(TJ_OPS(native_layer_norm), native_layer_norm, "native_layer_norm");
    tj_op_set_decomposition(TJ_OPS(native_layer_norm_backward), native_layer_norm_backward,
                            "native_layer_norm_backward");
    tj_op_set_decomposition(TJ_OPS(native_batch_norm), native_batch_norm, "native_batch_norm");
    tj_op_set_decomposition(TJ_OPS(_native_batch_norm_legit_functional), native_batch_norm_legit_functional,
                            "_native_batch_norm_legit_functional");
    tj_op_set_decomposition(TJ_OPS(native_batch_norm_backward), native_batch_norm_backward,
                            "native_batch_norm_backward");
    tj_op_set_decomposition(TJ_OPS(native_group_norm), native_group_norm, "native_group_norm");
    tj_op_set_decomposition(TJ_OPS(native_group_norm_backward), native_group_norm_backward,
                            "native_group_norm_backward");
}
