/* native_layer_norm, native_batch_norm, native_group_norm and their
 * backward operators: argument checks (shape functions) and the glue to
 * kernels/layer_norm and kernels/norm_segments. As ATen, the kernels see
 * contiguous operands: a strided input is copied once. */
#include <math.h>
#include <string.h>

#include "contig.h"
#include "kernels/layer_norm.h"
#include "kernels/norm_segments.h"
#include "op_backward.h"
#include "op_nn.h"

/* Checks input against normalized_shape (its trailing dims) and an optional
 * parameter (weight / bias) of exactly that shape and input's dtype; gives
 * the number of rows m and the row length n. */
static tj_status check_normalized(const char *op, const tj_tensor *input, const tj_value *ns, int64_t *m, int64_t *n)
{
    char si[96], sn[96];
    const int64_t *shape = ns->u.ints;
    int k = ns->n, axis = input->ndim - k;
    if (!tj_dtype_is_float(input->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: input must be float32 or float64, got %s", op, tj_dtype_name(input->dtype));
    if (k < 1)
        return tj_error(TJ_ERR_SHAPE, "%s: normalized_shape must have at least one element, got []", op);
    bool ok = axis >= 0;
    for (int d = 0; ok && d < k; d++) ok = input->shape[axis + d] == shape[d];
    if (!ok)
        return tj_error(TJ_ERR_SHAPE, "%s: normalized_shape %s does not match the trailing dims of input %s", op,
                        k <= TJ_MAX_DIMS ? tj_shape_str(k, shape, sn, sizeof sn) : "(too long)",
                        tj_shape_str(input->ndim, input->shape, si, sizeof si));
    *m = 1;
    *n = 1;
    for (int d = 0; d < axis; d++) *m *= input->shape[d];
    for (int d = 0; d < k; d++) *n *= shape[d];
    return TJ_OK;
}

static tj_status check_param(const char *op, const char *name, const tj_tensor *p, const tj_tensor *input,
                             const tj_value *ns)
{
    char sp[96], sn[96];
    if (!p) return TJ_OK;
    if (p->dtype != input->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: %s (%s) must have input's dtype (%s)", op, name, tj_dtype_name(p->dtype),
                        tj_dtype_name(input->dtype));
    bool ok = p->ndim == ns->n;
    for (int d = 0; ok && d < p->ndim; d++) ok = p->shape[d] == ns->u.ints[d];
    if (!ok)
        return tj_error(TJ_ERR_SHAPE, "%s: %s %s must have the shape of normalized_shape %s", op, name,
                        tj_shape_str(p->ndim, p->shape, sp, sizeof sp), tj_shape_str(ns->n, ns->u.ints, sn, sizeof sn));
    return TJ_OK;
}

tj_status tj_meta_native_layer_norm(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::native_layer_norm";
    const tj_tensor *x = args[0].u.t;
    int64_t m, n;
    tj_status st = check_normalized(op, x, &args[1], &m, &n);
    if (st == TJ_OK) st = check_param(op, "weight", tj_opt_tensor(&args[2]), x, &args[1]);
    if (st == TJ_OK) st = check_param(op, "bias", tj_opt_tensor(&args[3]), x, &args[1]);
    if (st != TJ_OK) return st;
    tj_meta_set(&outs[0], x->dtype, x->ndim, x->shape);
    /* mean and rstd keep the normalised dims as size 1 */
    for (int i = 1; i < 3; i++) {
        tj_meta_set(&outs[i], x->dtype, x->ndim, x->shape);
        for (int d = x->ndim - args[1].n; d < x->ndim; d++) outs[i].shape[d] = 1;
    }
    return TJ_OK;
}

/* Dense views of up to four operands, released together. */
typedef struct dense4 {
    tj_contig c[4];
} dense4;

static tj_status dense_get(dense4 *d, const tj_tensor *const *t, int k)
{
    memset(d, 0, sizeof *d);
    for (int i = 0; i < k; i++)
        if (t[i] && tj_contig_get(&d->c[i], t[i]) != TJ_OK) return tj_last_status();
    return TJ_OK;
}

static void dense_release(dense4 *d)
{
    for (int i = 0; i < 4; i++) tj_contig_release(&d->c[i]);
}

/* ATen gives an empty row (n = 0) mean 0 and rstd nan (0/0 variance). */
static void fill_empty_rows(tj_tensor *mean, tj_tensor *rstd, int64_t m)
{
    for (int64_t r = 0; r < m; r++) {
        tj_store_f64(tj_tensor_ptr(mean) + r * (int64_t)tj_dtype_size(mean->dtype), mean->dtype, 0.0);
        tj_store_f64(tj_tensor_ptr(rstd) + r * (int64_t)tj_dtype_size(rstd->dtype), rstd->dtype, NAN);
    }
}

tj_status tj_kernel_native_layer_norm(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[0].u.t;
    int64_t m, n;
    check_normalized("aten::native_layer_norm", x, &args[1], &m, &n);
    if (n == 0) {
        fill_empty_rows(outs[1], outs[2], m);
        return TJ_OK;
    }
    if (m == 0) return TJ_OK;
    const tj_tensor *ops[3] = {x, tj_opt_tensor(&args[2]), tj_opt_tensor(&args[3])};
    dense4 d;
    tj_status st = dense_get(&d, ops, 3);
    if (st == TJ_OK) {
        tj_k_layer_norm_shape s = {.dtype = x->dtype, .m = m, .n = n, .nthreads = tj_get_num_threads()};
        tj_k_layer_norm(&s, d.c[0].data, d.c[1].data, d.c[2].data, tj_value_as_double(&args[4]),
                        tj_tensor_ptr(outs[0]), tj_tensor_ptr(outs[1]), tj_tensor_ptr(outs[2]));
    }
    dense_release(&d);
    return st;
}

/* ---- backward: (grad_out, input, normalized_shape, mean, rstd, weight?,
 * bias?, output_mask) -> (grad_input, grad_weight, grad_bias); an output
 * whose mask entry is false is left undefined. ---- */

tj_status tj_meta_native_layer_norm_backward(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::native_layer_norm_backward";
    const tj_tensor *g = args[0].u.t, *x = args[1].u.t, *mean = args[3].u.t, *rstd = args[4].u.t;
    const tj_tensor *w = tj_opt_tensor(&args[5]), *b = tj_opt_tensor(&args[6]);
    const tj_value *mask = &args[7];
    char s1[96], s2[96];
    int64_t m, n;
    tj_status st = check_normalized(op, x, &args[2], &m, &n);
    if (st == TJ_OK) st = check_param(op, "weight", w, x, &args[2]);
    if (st == TJ_OK) st = check_param(op, "bias", b, x, &args[2]);
    if (st != TJ_OK) return st;
    const tj_tensor *same_dtype[3] = {g, mean, rstd};
    for (int i = 0; i < 3; i++)
        if (same_dtype[i]->dtype != x->dtype)
            return tj_error(TJ_ERR_DTYPE, "%s: grad_out, mean and rstd must have input's dtype %s, got %s", op,
                            tj_dtype_name(x->dtype), tj_dtype_name(same_dtype[i]->dtype));
    bool same = g->ndim == x->ndim;
    for (int d = 0; same && d < g->ndim; d++) same = g->shape[d] == x->shape[d];
    if (!same)
        return tj_error(TJ_ERR_SHAPE, "%s: grad_out %s must have input's shape %s", op,
                        tj_shape_str(g->ndim, g->shape, s1, sizeof s1), tj_shape_str(x->ndim, x->shape, s2, sizeof s2));
    if (mean->numel != m || rstd->numel != m)
        return tj_error(TJ_ERR_SHAPE, "%s: mean %s and rstd %s must hold one value per row (%lld)", op,
                        tj_shape_str(mean->ndim, mean->shape, s1, sizeof s1),
                        tj_shape_str(rstd->ndim, rstd->shape, s2, sizeof s2), (long long)m);
    if (mask->n != 3) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output_mask needs 3 entries, got %d", op, mask->n);
    if ((mask->u.bools[1] && !w) || (mask->u.bools[2] && !b))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output_mask asks for the gradient of an absent %s", op,
                        mask->u.bools[1] && !w ? "weight" : "bias");
    tj_meta_set(&outs[0], x->dtype, x->ndim, x->shape);
    tj_meta_set(&outs[1], x->dtype, args[2].n, args[2].u.ints);
    tj_meta_set(&outs[2], x->dtype, args[2].n, args[2].u.ints);
    for (int i = 0; i < 3; i++) outs[i].undefined = !mask->u.bools[i];
    return TJ_OK;
}

tj_status tj_kernel_native_layer_norm_backward(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[1].u.t;
    int64_t m, n;
    check_normalized("aten::native_layer_norm_backward", x, &args[2], &m, &n);
    if (n == 0) return TJ_OK;
    const tj_tensor *ops[4] = {args[0].u.t, x, args[3].u.t, args[4].u.t};
    const tj_tensor *w = tj_opt_tensor(&args[5]);
    tj_contig cw = {0};
    dense4 d;
    tj_status st = dense_get(&d, ops, 4);
    if (st == TJ_OK && w) st = tj_contig_get(&cw, w);
    if (st == TJ_OK) {
        tj_k_layer_norm_shape s = {.dtype = x->dtype, .m = m, .n = n, .nthreads = tj_get_num_threads()};
        tj_k_layer_norm_backward(&s, d.c[0].data, d.c[1].data, d.c[2].data, d.c[3].data, cw.data,
                                 outs[0] ? tj_tensor_ptr(outs[0]) : NULL, outs[1] ? tj_tensor_ptr(outs[1]) : NULL,
                                 outs[2] ? tj_tensor_ptr(outs[2]) : NULL);
    }
    tj_contig_release(&cw);
    dense_release(&d);
    return st;
}

/* ---- batch norm and group norm: input [N, C, *] as N * C contiguous
 * segments of HW elements (kernels/norm_segments.h); statistics per channel
 * (batch) or per sample and group (group) combine the segments' moments in
 * double. ---- */

/* Element i of a 1-D tensor (any stride) as double, and the store. */
static double elem(const tj_tensor *t, int64_t i)
{
    return tj_load_f64(tj_tensor_ptr(t) + i * t->strides[0] * (int64_t)tj_dtype_size(t->dtype), t->dtype);
}

static void set_elem(tj_tensor *t, int64_t i, double v)
{
    tj_store_f64(tj_tensor_ptr(t) + i * t->strides[0] * (int64_t)tj_dtype_size(t->dtype), t->dtype, v);
}

/* A float32 / float64 input of rank >= 2 (batch norm) and an optional 1-D
 * per-channel tensor of C elements and input's dtype. */
static tj_status check_channels_input(const char *op, const tj_tensor *x)
{
    char s[96];
    if (!tj_dtype_is_float(x->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: input must be float32 or float64, got %s", op, tj_dtype_name(x->dtype));
    if (x->ndim < 2)
        return tj_error(TJ_ERR_SHAPE, "%s: input %s needs at least 2 dims [N, C, ...]", op,
                        tj_shape_str(x->ndim, x->shape, s, sizeof s));
    return TJ_OK;
}

static tj_status check_per_channel(const char *op, const char *name, const tj_tensor *p, const tj_tensor *x, int64_t c)
{
    char sp[96];
    if (!p) return TJ_OK;
    if (p->dtype != x->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: %s (%s) must have input's dtype (%s)", op, name, tj_dtype_name(p->dtype),
                        tj_dtype_name(x->dtype));
    if (p->ndim != 1 || p->shape[0] != c)
        return tj_error(TJ_ERR_SHAPE, "%s: %s %s must have shape [%lld] (one value per channel)", op, name,
                        tj_shape_str(p->ndim, p->shape, sp, sizeof sp), (long long)c);
    return TJ_OK;
}

/* Scratch in double: k arrays of n each, zeroed, from the storage cache
 * (so that a plan's runs allocate nothing after the first); given back
 * with scratch_release. */
typedef struct scratch {
    double *p;
    size_t got;
} scratch;

static double *scratch_get(scratch *sc, const char *op, int k, int64_t n)
{
    size_t bytes = sizeof(double) * (size_t)k * (size_t)(n ? n : 1);
    sc->p = tj_alloc_storage_bytes(bytes, &sc->got);
    if (!sc->p) tj_oom(op, bytes);
    else memset(sc->p, 0, bytes);
    return sc->p;
}

static void scratch_release(scratch *sc)
{
    if (sc->p) tj_free_storage_bytes(sc->p, sc->got);
}

/* Folds segment (count len, mean sm, squared deviations sq) into the
 * running (n, mean, m2) of its channel or group (Chan et al.). */
static void chan_add(double *n, double *mean, double *m2, double len, double sm, double sq)
{
    double tot = *n + len, delta = sm - *mean;
    *mean += delta * len / tot;
    *m2 += sq + delta * delta * *n * len / tot;
    *n = tot;
}

/* ATen's InvStd (batch norm in training): a zero variance with eps 0 gives
 * 0, not inf, so that a constant channel's output is its bias. */
static double inv_std(double var, double eps) { return var == 0 && eps == 0 ? 0.0 : 1.0 / sqrt(var + eps); }

/* native_batch_norm(input, weight?, bias?, running_mean?, running_var?,
 * training, momentum, eps) -> (out, save_mean, save_invstd) */
tj_status tj_meta_native_batch_norm(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::native_batch_norm";
    const tj_tensor *x = args[0].u.t;
    tj_status st = check_channels_input(op, x);
    if (st != TJ_OK) return st;
    int64_t c = x->shape[1];
    const char *names[4] = {"weight", "bias", "running_mean", "running_var"};
    for (int i = 0; i < 4 && st == TJ_OK; i++) st = check_per_channel(op, names[i], tj_opt_tensor(&args[1 + i]), x, c);
    if (st != TJ_OK) return st;
    bool train = args[5].u.b;
    if (!train && (!tj_opt_tensor(&args[3]) || !tj_opt_tensor(&args[4])))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: running_mean and running_var must be given in evaluation mode "
                        "(training=False)", op);
    /* training writes the running statistics, element by element */
    for (int i = 3; train && i < 5; i++)
        if (tj_opt_tensor(&args[i]) && tj_may_self_overlap(tj_opt_tensor(&args[i])))
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: %s, written in training, has elements sharing one memory "
                            "location (an expanded tensor): clone() it first", op, names[i - 1]);
    tj_meta_set(&outs[0], x->dtype, x->ndim, x->shape);
    /* evaluation returns empty save_mean / save_invstd, as ATen's CPU kernel */
    int64_t k = train ? c : 0;
    tj_meta_set(&outs[1], x->dtype, 1, &k);
    tj_meta_set(&outs[2], x->dtype, 1, &k);
    return TJ_OK;
}

/* The geometry of batch / group norm's input as segments. */
static tj_k_segments segments_of(const tj_tensor *x, int64_t n, int64_t c)
{
    int64_t hw = n * c != 0 ? x->numel / (n * c) : 0;
    return (tj_k_segments){.dtype = x->dtype, .count = n * c, .len = hw, .nthreads = tj_get_num_threads()};
}

tj_status tj_kernel_native_batch_norm(const tj_value *args, tj_tensor *const *outs)
{
    const char *op = "aten::native_batch_norm";
    const tj_tensor *x = args[0].u.t, *w = tj_opt_tensor(&args[1]), *b = tj_opt_tensor(&args[2]);
    tj_tensor *rm = tj_opt_tensor(&args[3]), *rv = tj_opt_tensor(&args[4]);
    bool train = args[5].u.b;
    double momentum = tj_value_as_double(&args[6]), eps = tj_value_as_double(&args[7]);
    int64_t n = x->shape[0], c = x->shape[1];
    tj_k_segments s = segments_of(x, n, c);
    double count = (double)n * (double)s.len;
    /* per segment: mean / m2 (training), then shift, alpha, gamma */
    scratch scr;
    double *sc = scratch_get(&scr, op, 5, s.count);
    tj_contig cx = {0};
    tj_status st = !sc ? tj_last_status() : tj_contig_get(&cx, x);
    if (st != TJ_OK) {
        scratch_release(&scr);
        return st;
    }
    double *smean = sc, *sm2 = sc + s.count, *shift = sc + 2 * s.count, *alpha = sc + 3 * s.count,
           *gamma = sc + 4 * s.count;
    if (train && s.len > 0) tj_k_segment_moments(&s, cx.data, smean, sm2);
    for (int64_t ch = 0; ch < c; ch++) {
        double mean, invstd;
        if (train) {
            double k = 0, m = 0, m2 = 0, sum = 0;
            for (int64_t i = 0; i < n && s.len > 0; i++) {
                chan_add(&k, &m, &m2, (double)s.len, smean[i * c + ch], sm2[i * c + ch]);
                sum += smean[i * c + ch];
            }
            /* an infinity or nan in the channel: ATen's mean is its plain
             * sum / count (inf, -inf or nan) and its variance nan */
            if (!isfinite(sum)) m = sum / (double)n, m2 = NAN;
            mean = count > 0 ? m : NAN;
            double var = count > 0 ? m2 / count : NAN;
            invstd = inv_std(var, eps);
            set_elem(outs[1], ch, mean);
            set_elem(outs[2], ch, invstd);
            /* the running variance is unbiased, as ATen's; an empty batch
             * has no statistics and leaves them as they are (ATen's
             * batch_norm does not call this kernel then, and this kernel
             * of PyTorch 1.13 dies dividing by zero) */
            if (rm && count > 0) set_elem(rm, ch, (1 - momentum) * elem(rm, ch) + momentum * mean);
            if (rv && count > 0)
                set_elem(rv, ch, (1 - momentum) * elem(rv, ch) + momentum * (count > 1 ? m2 / (count - 1) : NAN));
        } else {
            mean = elem(rm, ch);
            invstd = 1.0 / sqrt(elem(rv, ch) + eps);
        }
        /* shift is the mean rounded to the dtype: gamma takes the rest; an
         * infinite or nan alpha (eval with running_var + eps = 0) takes
         * ATen's x alpha + (bias - mean alpha), whose infinities' signs
         * follow x's and the mean's; an infinite mean (running_mean in
         * evaluation) is its own shift and leaves gamma no remainder */
        double a = w ? invstd * elem(w, ch) : invstd;
        double sh = !isfinite(a) ? 0.0 : x->dtype == TJ_FLOAT32 ? (double)(float)mean : mean;
        double rest = mean == sh ? 0.0 : mean - sh;
        for (int64_t i = 0; i < n; i++) {
            shift[i * c + ch] = sh;
            alpha[i * c + ch] = a;
            gamma[i * c + ch] = (b ? elem(b, ch) : 0.0) - rest * a;
        }
    }
    if (s.len > 0) tj_k_segment_affine(&s, cx.data, NULL, shift, alpha, NULL, gamma, tj_tensor_ptr(outs[0]));
    tj_contig_release(&cx);
    scratch_release(&scr);
    return TJ_OK;
}

/* _native_batch_norm_legit_functional: native_batch_norm on copies of the
 * running statistics, returned as outputs 3 and 4. */
tj_status tj_meta__native_batch_norm_legit_functional(const tj_value *args, tj_meta *outs)
{
    tj_status st = tj_meta_native_batch_norm(args, outs);
    if (st != TJ_OK) return st;
    for (int i = 3; i < 5; i++) {
        const tj_tensor *r = args[i].u.t;
        tj_meta_set(&outs[i], r->dtype, r->ndim, r->shape);
    }
    return TJ_OK;
}

tj_status tj_kernel__native_batch_norm_legit_functional(const tj_value *args, tj_tensor *const *outs)
{
    tj_value a[8];
    memcpy(a, args, sizeof a);
    for (int i = 3; i < 5; i++) {
        int64_t c = outs[i]->shape[0];
        for (int64_t k = 0; k < c; k++) set_elem(outs[i], k, elem(args[i].u.t, k));
        a[i] = tj_v_tensor(outs[i]);
    }
    return tj_kernel_native_batch_norm(a, outs);
}

/* Checks of the backward operators shared by batch and group norm: grad_out
 * of input's dtype and shape (or only its element count when `flat`: group
 * norm, where ATen reads both as [N, C, HxW] and checks dY.numel()), an
 * output_mask of 3; sets the three outputs (input's shape, [C], [C]). */
static tj_status check_norm_backward(const char *op, const tj_tensor *g, const tj_tensor *x, const tj_value *mask,
                                     int64_t c, bool flat, tj_meta *outs)
{
    char s1[96], s2[96];
    if (g->dtype != x->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: grad_out (%s) must have input's dtype (%s)", op, tj_dtype_name(g->dtype),
                        tj_dtype_name(x->dtype));
    bool same = flat ? g->numel == x->numel : g->ndim == x->ndim;
    for (int d = 0; same && !flat && d < g->ndim; d++) same = g->shape[d] == x->shape[d];
    if (!same && flat)
        return tj_error(TJ_ERR_SHAPE, "%s: grad_out %s must hold input %s's N * C * HxW = %lld elements, got %lld", op,
                        tj_shape_str(g->ndim, g->shape, s1, sizeof s1), tj_shape_str(x->ndim, x->shape, s2, sizeof s2),
                        (long long)x->numel, (long long)g->numel);
    if (!same)
        return tj_error(TJ_ERR_SHAPE, "%s: grad_out %s must have input's shape %s", op,
                        tj_shape_str(g->ndim, g->shape, s1, sizeof s1), tj_shape_str(x->ndim, x->shape, s2, sizeof s2));
    if (mask->n != 3) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output_mask needs 3 entries, got %d", op, mask->n);
    tj_meta_set(&outs[0], x->dtype, x->ndim, x->shape);
    tj_meta_set(&outs[1], x->dtype, 1, &c);
    tj_meta_set(&outs[2], x->dtype, 1, &c);
    for (int i = 0; i < 3; i++) outs[i].undefined = !mask->u.bools[i];
    return TJ_OK;
}

/* native_batch_norm_backward(grad_out, input, weight?, running_mean?,
 * running_var?, save_mean?, save_invstd?, train, eps, output_mask); as ATen,
 * grad_weight may be asked for without a weight (it does not read it). */
tj_status tj_meta_native_batch_norm_backward(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::native_batch_norm_backward";
    const tj_tensor *x = args[1].u.t;
    tj_status st = check_channels_input(op, x);
    if (st != TJ_OK) return st;
    int64_t c = x->shape[1];
    const char *names[5] = {"weight", "running_mean", "running_var", "save_mean", "save_invstd"};
    bool train = args[7].u.b;
    for (int i = 0; i < 5 && st == TJ_OK; i++) {
        /* in evaluation the forward's save_mean / save_invstd are empty (and
         * unread), as torch's autograd passes them back */
        const tj_tensor *p = tj_opt_tensor(&args[2 + i]);
        if (!train && i >= 3 && p && p->ndim == 1 && p->shape[0] == 0 && p->dtype == x->dtype) continue;
        st = check_per_channel(op, names[i], p, x, c);
    }
    if (st != TJ_OK) return st;
    int stats = train ? 5 : 3; /* save_mean / save_invstd, or the running statistics */
    if (!tj_opt_tensor(&args[stats]) || !tj_opt_tensor(&args[stats + 1]))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: %s must be given when train is %s", op,
                        train ? "save_mean and save_invstd" : "running_mean and running_var", train ? "True" : "False");
    return check_norm_backward(op, args[0].u.t, x, &args[9], c, false, outs);
}

/* The backward of both over segments: dots of g and g * (x - mean) per
 * segment (`shift` holds each segment's mean), then `coef` turns them into
 * the input gradient's alpha, beta, gamma per segment and the parameter
 * gradients. */
typedef void (*norm_coef_fn)(const tj_value *args, const double *sum_g, const double *sum_gx, double *alpha,
                             double *beta, double *gamma, tj_tensor *const *outs);

static tj_status norm_backward(const char *op, const tj_value *args, tj_tensor *const *outs, const tj_tensor *g,
                               const tj_tensor *x, int64_t n, int64_t c, bool use_x,
                               void (*means)(const tj_value *args, double *shift), norm_coef_fn coef)
{
    tj_k_segments s = segments_of(x, n, c);
    scratch scr;
    double *sc = scratch_get(&scr, op, 6, s.count);
    tj_contig cg = {0}, cx = {0};
    tj_status st = !sc ? tj_last_status() : tj_contig_get(&cg, g);
    if (st == TJ_OK) st = tj_contig_get(&cx, x);
    if (st == TJ_OK) {
        int64_t k = s.count;
        double *shift = sc, *sg = sc + k, *sgx = sc + 2 * k, *al = sc + 3 * k, *be = sc + 4 * k, *ga = sc + 5 * k;
        means(args, shift);
        if (s.len > 0) tj_k_segment_dots(&s, cg.data, cx.data, shift, sg, sgx);
        coef(args, sg, sgx, al, be, ga, outs);
        if (outs[0] && s.len > 0)
            tj_k_segment_affine(&s, use_x ? cx.data : NULL, cg.data, shift, al, be, ga, tj_tensor_ptr(outs[0]));
    }
    tj_contig_release(&cg);
    tj_contig_release(&cx);
    scratch_release(&scr);
    return st;
}

/* batch norm: segment (i, ch) has its channel's mean (saved, or running in
 * evaluation). */
static void bn_means(const tj_value *args, double *shift)
{
    const tj_tensor *x = args[1].u.t, *mean = tj_opt_tensor(&args[args[7].u.b ? 5 : 3]);
    int64_t n = x->shape[0], c = x->shape[1];
    for (int64_t ch = 0; ch < c; ch++) {
        double m = elem(mean, ch);
        for (int64_t i = 0; i < n; i++) shift[i * c + ch] = m;
    }
}

/* As ATen's batch_norm_backward_cpu: with sum_dy = sum g and dot = sum g (x
 * - mean) over a channel's M elements, grad_input = (g - sum_dy / M - (x -
 * mean) invstd^2 dot / M) invstd w in training, g invstd w in evaluation;
 * grad_weight = dot invstd, grad_bias = sum_dy. */
static void bn_coef(const tj_value *args, const double *sum_g, const double *sum_gx, double *alpha, double *beta,
                    double *gamma, tj_tensor *const *outs)
{
    const tj_tensor *x = args[1].u.t, *w = tj_opt_tensor(&args[2]);
    bool train = args[7].u.b;
    int64_t n = x->shape[0], c = x->shape[1];
    double count = (double)n * (double)(n * c != 0 ? x->numel / (n * c) : 0);
    for (int64_t ch = 0; ch < c; ch++) {
        double invstd = train ? elem(tj_opt_tensor(&args[6]), ch)
                              : 1.0 / sqrt(elem(tj_opt_tensor(&args[4]), ch) + tj_value_as_double(&args[8]));
        double dy = 0, dot = 0, wc = w ? elem(w, ch) : 1.0;
        for (int64_t i = 0; i < n; i++) dy += sum_g[i * c + ch], dot += sum_gx[i * c + ch];
        /* ATen's order, ((g - dy / M) - (x - mean) k) invstd w with k = dot
         * invstd^2 / M: for an infinite invstd (a user's save_invstd) the
         * (x - mean) k term outweighs the rest, so the element is that term
         * times invstd w (nan where x == mean), where the three terms
         * expanded here would add infinities of both signs into nan */
        bool infinite = train && isinf(invstd);
        double a = infinite ? -(dot * invstd * invstd / count) * invstd * wc : -wc * invstd * invstd * invstd * dot / count;
        for (int64_t i = 0; i < n; i++) {
            alpha[i * c + ch] = train ? a : 0.0;
            beta[i * c + ch] = infinite ? 0.0 : wc * invstd;
            gamma[i * c + ch] = train && !infinite ? -wc * invstd * dy / count : 0.0;
        }
        if (outs[1]) set_elem(outs[1], ch, dot * invstd);
        if (outs[2]) set_elem(outs[2], ch, dy);
    }
}

tj_status tj_kernel_native_batch_norm_backward(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[1].u.t;
    return norm_backward("aten::native_batch_norm_backward", args, outs, args[0].u.t, x, x->shape[0], x->shape[1],
                         args[7].u.b, bn_means, bn_coef);
}

/* ---- group norm: native_group_norm(input, weight?, bias?, N, C, HxW,
 * group, eps) -> (out, mean [N, group], rstd [N, group]) ---- */

/* As ATen's checks: group > 0, C divisible by group, and input holding N *
 * C * HxW elements, which the kernels read as [N, C, HxW] whatever its shape
 * (ATen checks no more of the shape); negative sizes are refused. */
static tj_status check_groups(const char *op, const tj_tensor *x, const tj_value *args)
{
    char s[96];
    int64_t n = args[0].u.i, c = args[1].u.i, hw = args[2].u.i, group = args[3].u.i, nc, nchw;
    if (!tj_dtype_is_float(x->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: input must be float32 or float64, got %s", op, tj_dtype_name(x->dtype));
    if (n < 0 || c < 0 || hw < 0 || group <= 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: N (%lld), C (%lld), HxW (%lld) must be >= 0 and group (%lld) > 0",
                        op, (long long)n, (long long)c, (long long)hw, (long long)group);
    if (c % group)
        return tj_error(TJ_ERR_SHAPE, "%s: the number of channels C (%lld) of input %s is not divisible by group "
                        "(%lld)", op, (long long)c, tj_shape_str(x->ndim, x->shape, s, sizeof s), (long long)group);
    if (__builtin_mul_overflow(n, c, &nc) || __builtin_mul_overflow(nc, hw, &nchw) || nchw != x->numel)
        return tj_error(TJ_ERR_SHAPE, "%s: input %s has %lld elements, not N * C * HxW = %lld * %lld * %lld", op,
                        tj_shape_str(x->ndim, x->shape, s, sizeof s), (long long)x->numel, (long long)n,
                        (long long)c, (long long)hw);
    return TJ_OK;
}

tj_status tj_meta_native_group_norm(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::native_group_norm";
    const tj_tensor *x = args[0].u.t;
    tj_status st = check_groups(op, x, &args[3]);
    if (st == TJ_OK) st = check_per_channel(op, "weight", tj_opt_tensor(&args[1]), x, args[4].u.i);
    if (st == TJ_OK) st = check_per_channel(op, "bias", tj_opt_tensor(&args[2]), x, args[4].u.i);
    if (st != TJ_OK) return st;
    int64_t ng[2] = {args[3].u.i, args[6].u.i};
    tj_meta_set(&outs[0], x->dtype, x->ndim, x->shape);
    tj_meta_set(&outs[1], x->dtype, 2, ng);
    tj_meta_set(&outs[2], x->dtype, 2, ng);
    return TJ_OK;
}

tj_status tj_kernel_native_group_norm(const tj_value *args, tj_tensor *const *outs)
{
    const char *op = "aten::native_group_norm";
    const tj_tensor *x = args[0].u.t, *w = tj_opt_tensor(&args[1]), *b = tj_opt_tensor(&args[2]);
    int64_t n = args[3].u.i, c = args[4].u.i, group = args[6].u.i, d = c / group;
    double eps = tj_value_as_double(&args[7]);
    tj_k_segments s = segments_of(x, n, c);
    scratch scr;
    double *sc = scratch_get(&scr, op, 5, s.count);
    tj_contig cx = {0};
    tj_status st = !sc ? tj_last_status() : tj_contig_get(&cx, x);
    if (st == TJ_OK) {
        int64_t k = s.count;
        double *smean = sc, *sm2 = sc + k, *shift = sc + 2 * k, *alpha = sc + 3 * k, *gamma = sc + 4 * k;
        if (s.len > 0) tj_k_segment_moments(&s, cx.data, smean, sm2);
        for (int64_t r = 0; r < n * group; r++) {
            double cnt = 0, mean = 0, m2 = 0;
            for (int64_t j = r * d; j < (r + 1) * d && s.len > 0; j++) chan_add(&cnt, &mean, &m2, (double)s.len, smean[j], sm2[j]);
            if (cnt == 0) mean = 0, m2 = NAN; /* ATen: an empty group has mean 0, rstd nan */
            double rstd = 1.0 / sqrt(m2 / (cnt > 0 ? cnt : 1) + eps);
            double sh = x->dtype == TJ_FLOAT32 ? (double)(float)mean : mean;
            tj_store_f64(tj_tensor_ptr(outs[1]) + r * (int64_t)tj_dtype_size(x->dtype), x->dtype, mean);
            tj_store_f64(tj_tensor_ptr(outs[2]) + r * (int64_t)tj_dtype_size(x->dtype), x->dtype, rstd);
            for (int64_t j = r * d; j < (r + 1) * d; j++) {
                int64_t ch = j % c;
                double a = w ? rstd * elem(w, ch) : rstd;
                shift[j] = sh;
                alpha[j] = a;
                gamma[j] = (b ? elem(b, ch) : 0.0) - (mean - sh) * a;
            }
        }
        if (s.len > 0) tj_k_segment_affine(&s, cx.data, NULL, shift, alpha, NULL, gamma, tj_tensor_ptr(outs[0]));
    }
    tj_contig_release(&cx);
    scratch_release(&scr);
    return st;
}

/* native_group_norm_backward(grad_out, input, mean, rstd, weight?, N, C,
 * HxW, group, output_mask) */
tj_status tj_meta_native_group_norm_backward(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::native_group_norm_backward";
    const tj_tensor *x = args[1].u.t, *mean = args[2].u.t, *rstd = args[3].u.t;
    char s1[96], s2[96];
    tj_status st = check_groups(op, x, &args[5]);
    if (st == TJ_OK) st = check_per_channel(op, "weight", tj_opt_tensor(&args[4]), x, args[6].u.i);
    if (st != TJ_OK) return st;
    int64_t ng = args[5].u.i * args[8].u.i;
    if (mean->dtype != x->dtype || rstd->dtype != x->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: mean and rstd must have input's dtype %s, got %s and %s", op,
                        tj_dtype_name(x->dtype), tj_dtype_name(mean->dtype), tj_dtype_name(rstd->dtype));
    if (mean->numel != ng || rstd->numel != ng)
        return tj_error(TJ_ERR_SHAPE, "%s: mean %s and rstd %s must hold N * group = %lld values", op,
                        tj_shape_str(mean->ndim, mean->shape, s1, sizeof s1),
                        tj_shape_str(rstd->ndim, rstd->shape, s2, sizeof s2), (long long)ng);
    /* ATen 1.13 fails there too (its grad_weight is empty_like(weight)) */
    if (args[9].n == 3 && args[9].u.bools[1] && !tj_opt_tensor(&args[4]))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output_mask asks for the gradient of an absent weight", op);
    return check_norm_backward(op, args[0].u.t, x, &args[9], args[6].u.i, true, outs);
}

/* i-th value of mean / rstd in row-major order (any strides). */
static double stat_at(const tj_tensor *t, int64_t i)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (i % t->shape[d]) * t->strides[d];
        i /= t->shape[d];
    }
    return tj_load_f64(tj_tensor_ptr(t) + off * (int64_t)tj_dtype_size(t->dtype), t->dtype);
}

static void gn_means(const tj_value *args, double *shift)
{
    int64_t n = args[5].u.i, c = args[6].u.i, group = args[8].u.i, d = c / group;
    for (int64_t j = 0; j < n * c; j++) shift[j] = stat_at(args[2].u.t, j / d);
}

/* As ATen's GroupNormBackward CPU kernel, around the mean: with ds =
 * sum_c w (g (x - mean)) and db = sum_c w g over a group of M = C / group
 * * HxW elements, grad_input = rstd w g - ds rstd^3 / M (x - mean) - db
 * rstd / M; grad_weight = sum_n sum g (x - mean) rstd, grad_bias = sum g. */
static void gn_coef(const tj_value *args, const double *sum_g, const double *sum_gx, double *alpha, double *beta,
                    double *gamma, tj_tensor *const *outs)
{
    const tj_tensor *w = tj_opt_tensor(&args[4]);
    int64_t n = args[5].u.i, c = args[6].u.i, hw = args[7].u.i, group = args[8].u.i, d = c / group;
    double inv_m = 1.0 / ((double)d * (double)hw);
    for (int64_t r = 0; r < n * group; r++) {
        double rstd = stat_at(args[3].u.t, r), ds = 0, db = 0;
        for (int64_t j = r * d; j < (r + 1) * d; j++) {
            double wc = w ? elem(w, j % c) : 1.0;
            ds += wc * sum_gx[j];
            db += wc * sum_g[j];
        }
        for (int64_t j = r * d; j < (r + 1) * d; j++) {
            alpha[j] = -ds * rstd * rstd * rstd * inv_m;
            beta[j] = rstd * (w ? elem(w, j % c) : 1.0);
            gamma[j] = -db * rstd * inv_m;
        }
    }
    for (int64_t ch = 0; ch < c && (outs[1] || outs[2]); ch++) {
        double gw = 0, gb = 0;
        for (int64_t i = 0; i < n; i++) {
            gw += sum_gx[i * c + ch] * stat_at(args[3].u.t, i * group + ch / d);
            gb += sum_g[i * c + ch];
        }
        if (outs[1]) set_elem(outs[1], ch, gw);
        if (outs[2]) set_elem(outs[2], ch, gb);
    }
}

tj_status tj_kernel_native_group_norm_backward(const tj_value *args, tj_tensor *const *outs)
{
    return norm_backward("aten::native_group_norm_backward", args, outs, args[0].u.t, args[1].u.t, args[5].u.i,
                         args[6].u.i, true, gn_means, gn_coef);
}
