/* PyTorch 1.13's fused inference paths of nn.MultiheadAttention
 * (aten::_native_multi_head_attention) and nn.TransformerEncoderLayer
 * (aten::_transformer_encoder_layer_fwd): argument checks as ATen's CPU
 * implementation (attention.cpp, transformer.cpp) makes them, and the
 * computation, written once over the existing operators. The decomposition
 * runs it through tj_dispatch (traced, attention as bmm / masked_fill /
 * _softmax / bmm); the kernel through tj_dispatch_kernel in a scope of its
 * own (no tracing, no autograd inside).
 *
 * Semantics (checked against torch 1.13): q, k and v are projected with the
 * rows of qkv_weight / qkv_bias, q scaled by 1 / sqrt(head dim); the mask
 * (true = masked, a float mask counts as nonzero) is [B, T] (key padding,
 * mask_type 1 or 2) or [B, H, T, T] (mask_type 1 or 2 too); masked scores
 * are -inf, so a query with every key masked gets nan, as ATen's masked
 * softmax gives. The weights are the softmax, averaged over the heads when
 * average_attn_weights; undefined (None) when need_weights is false. */
#include <assert.h>
#include <math.h>

#include "op_transformer.h"

#define MHA "aten::_native_multi_head_attention"
#define LAYER "aten::_transformer_encoder_layer_fwd"

/* ---- checks ---- */

/* The sizes of one attention call: batch, tokens, embedding, heads. */
typedef struct attn_dims {
    int64_t B, T, E, H;
} attn_dims;

static tj_status want_shape(const char *op, const char *name, const tj_tensor *t, tj_dtype dtype, int ndim,
                            const int64_t *shape)
{
    char s1[96], s2[96];
    if (t->dtype != dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: %s must be %s (the input's dtype), got %s", op, name, tj_dtype_name(dtype),
                        tj_dtype_name(t->dtype));
    bool same = t->ndim == ndim;
    for (int d = 0; same && d < ndim; d++) same = t->shape[d] == shape[d];
    if (!same)
        return tj_error(TJ_ERR_SHAPE, "%s: %s must be %s, got %s", op, name, tj_shape_str(ndim, shape, s1, sizeof s1),
                        tj_shape_str(t->ndim, t->shape, s2, sizeof s2));
    return TJ_OK;
}

/* The inputs (3-D float, one shape), embed_dim / num_heads against them,
 * the projection weights, and the mask with its mask_type. */
static tj_status check_attention(const char *op, const tj_tensor *const *qkv, int n_inputs, int64_t embed_dim,
                                 int64_t num_heads, const tj_tensor *const *w, const tj_tensor *mask,
                                 const tj_value *mask_type, attn_dims *d)
{
    static const char *const inputs[3] = {"query", "key", "value"};
    static const char *const weights[4] = {"qkv_weight", "qkv_bias", "proj_weight", "proj_bias"};
    const tj_tensor *q = qkv[0];
    char s1[96], s2[96];
    if (!tj_dtype_is_float(q->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: %s must be float32 or float64, got %s", op, n_inputs == 1 ? "src" : "query",
                        tj_dtype_name(q->dtype));
    if (q->ndim != 3)
        return tj_error(TJ_ERR_SHAPE, "%s: %s must be 3-D [batch, tokens, embed_dim], got %s", op,
                        n_inputs == 1 ? "src" : "query", tj_shape_str(q->ndim, q->shape, s1, sizeof s1));
    for (int i = 1; i < n_inputs; i++) {
        tj_status st = want_shape(op, inputs[i], qkv[i], q->dtype, 3, q->shape);
        if (st != TJ_OK) return st;
    }
    *d = (attn_dims){q->shape[0], q->shape[1], q->shape[2], num_heads};
    if (embed_dim != d->E)
        return tj_error(TJ_ERR_SHAPE, "%s: embed_dim %lld does not match the input's last dim (%s)", op,
                        (long long)embed_dim, tj_shape_str(3, q->shape, s1, sizeof s1));
    if (num_heads <= 0 || d->E % num_heads != 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: embed_dim %lld must be divisible by num_heads %lld", op,
                        (long long)d->E, (long long)num_heads);
    const int64_t shapes[4][2] = {{3 * d->E, d->E}, {3 * d->E}, {d->E, d->E}, {d->E}};
    for (int i = 0; i < 4; i++) {
        tj_status st = want_shape(op, weights[i], w[i], q->dtype, i % 2 ? 1 : 2, shapes[i]);
        if (st != TJ_OK) return st;
    }
    if (!mask) return TJ_OK;
    if (mask_type->kind != TJ_V_INT)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: a mask needs a mask_type (1: key padding, 2: full)", op);
    int64_t type = mask_type->u.i;
    if (type == 0)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: mask_type 0 (src_mask) is not supported on CPU (as in ATen)", op);
    if (type != 1 && type != 2)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: mask_type must be 0, 1 or 2, got %lld", op, (long long)type);
    if (mask->dtype != TJ_BOOL && mask->dtype != q->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: mask must be bool or %s, got %s", op, tj_dtype_name(q->dtype),
                        tj_dtype_name(mask->dtype));
    const int64_t padding[2] = {d->B, d->T}, full[4] = {d->B, d->H, d->T, d->T};
    bool ok = mask->ndim == 2 ? !memcmp(mask->shape, padding, sizeof padding)
                              : mask->ndim == 4 && !memcmp(mask->shape, full, sizeof full);
    if (!ok)
        return tj_error(TJ_ERR_SHAPE, "%s: mask %s must be %s (key padding) or %s", op,
                        tj_shape_str(mask->ndim, mask->shape, s1, sizeof s1), tj_shape_str(2, padding, s2, sizeof s2),
                        tj_shape_str(4, full, (char[96]){0}, 96));
    return TJ_OK;
}

tj_status tj_meta__native_multi_head_attention(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *qkv[3] = {args[0].u.t, args[1].u.t, args[2].u.t};
    const tj_tensor *w[4] = {args[5].u.t, args[6].u.t, args[7].u.t, args[8].u.t};
    attn_dims d;
    tj_status st = check_attention(MHA, qkv, 3, args[3].u.i, args[4].u.i, w, tj_opt_tensor(&args[9]), &args[12], &d);
    if (st != TJ_OK) return st;
    tj_meta_set(&outs[0], qkv[0]->dtype, 3, qkv[0]->shape);
    const int64_t all[4] = {d.B, d.H, d.T, d.T}, averaged[3] = {d.B, d.T, d.T};
    if (!args[10].u.b) outs[1].undefined = true;
    else if (args[11].u.b) tj_meta_set(&outs[1], qkv[0]->dtype, 3, averaged);
    else tj_meta_set(&outs[1], qkv[0]->dtype, 4, all);
    return TJ_OK;
}

tj_status tj_meta__transformer_encoder_layer_fwd(const tj_value *args, tj_meta *outs)
{
    static const char *const names[8] = {"norm_weight_1", "norm_bias_1", "norm_weight_2", "norm_bias_2",
                                         "ffn_weight_1",  "ffn_bias_1",  "ffn_weight_2",  "ffn_bias_2"};
    const tj_tensor *src = args[0].u.t;
    const tj_tensor *w[4] = {args[3].u.t, args[4].u.t, args[5].u.t, args[6].u.t};
    attn_dims d;
    tj_status st = check_attention(LAYER, &src, 1, args[1].u.i, args[2].u.i, w, tj_opt_tensor(&args[18]), &args[19], &d);
    if (st != TJ_OK) return st;
    const tj_tensor *ffn1 = args[14].u.t;
    char s1[96];
    if (ffn1->ndim != 2)
        return tj_error(TJ_ERR_SHAPE, "%s: ffn_weight_1 must be 2-D [dim_feedforward, %lld], got %s", LAYER,
                        (long long)d.E, tj_shape_str(ffn1->ndim, ffn1->shape, s1, sizeof s1));
    int64_t F = ffn1->shape[0];
    const int64_t shapes[8][2] = {{d.E}, {d.E}, {d.E}, {d.E}, {F, d.E}, {F}, {d.E, F}, {d.E}};
    for (int i = 0; i < 8; i++) {
        st = want_shape(LAYER, names[i], args[10 + i].u.t, src->dtype, i >= 4 && i % 2 == 0 ? 2 : 1, shapes[i]);
        if (st != TJ_OK) return st;
    }
    double eps = tj_value_as_double(&args[9]);
    if (!(eps >= 0)) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: eps must be >= 0, got %g", LAYER, eps);
    tj_meta_set(&outs[0], src->dtype, 3, src->shape);
    return TJ_OK;
}

/* ---- the computation ---- */

/* How the steps run; after the first failure every later step is skipped,
 * so that error is the one reported. */
typedef struct steps {
    bool kernel;
    tj_status st;
} steps;

static tj_tensor *step(steps *s, const tj_op *op, const tj_value *args, tj_value *outs)
{
    if (s->st != TJ_OK) return NULL;
    s->st = s->kernel ? tj_dispatch_kernel(op, args, op->nargs, outs) : tj_dispatch(op, args, op->nargs, outs);
    return s->st == TJ_OK ? outs[0].u.t : NULL;
}

#define T(x) tj_v_tensor(x)
#define I(x) tj_v_int(x)
#define STEP(ident, ...) step(s, TJ_OPS(ident), (const tj_value[]){__VA_ARGS__}, (tj_value[TJ_MAX_RETURNS]){{0}})

static tj_tensor *view(steps *s, tj_tensor *t, int n, const int64_t *shape)
{
    return STEP(view, T(t), tj_v_ints(shape, n));
}

static tj_tensor *permute(steps *s, tj_tensor *t, const int64_t *dims) { return STEP(permute, T(t), tj_v_ints(dims, 4)); }

static tj_tensor *slice(steps *s, tj_tensor *t, int64_t dim, int64_t start, int64_t end)
{
    return STEP(slice_Tensor, T(t), I(dim), I(start), I(end), I(1));
}

/* x [N, in] @ w^T + b */
static tj_tensor *linear(steps *s, tj_tensor *x, tj_tensor *w, tj_tensor *b)
{
    tj_tensor *wt = STEP(t, T(w));
    return STEP(addmm, T(b), T(x), T(wt), I(1), I(1));
}

/* x [B, T, E] as [B * T, E] rows (a copy when not viewable). */
static tj_tensor *rows(steps *s, const attn_dims *d, tj_tensor *x)
{
    if (x && !tj_tensor_is_contiguous(x)) x = STEP(clone, T(x), tj_v_none());
    return view(s, x, 2, (const int64_t[]){d->B * d->T, d->E});
}

static tj_tensor *layer_norm(steps *s, const attn_dims *d, tj_tensor *x, tj_tensor *w, tj_tensor *b, double eps)
{
    return STEP(native_layer_norm, T(x), tj_v_ints(&d->E, 1), T(w), T(b), tj_v_float(eps));
}

/* rows [B * T, E] of one projection as heads [B, H, T, E / H] (a view) */
static tj_tensor *heads(steps *s, const attn_dims *d, tj_tensor *x, const int64_t *order)
{
    return permute(s, view(s, x, 4, (const int64_t[]){d->B, d->T, d->H, d->E / d->H}), order);
}

/* softmax(q k^T / sqrt(dh), masked) v over the heads of q, k, v ([B * T, E]
 * rows), q scaled first as ATen does: [B, H, T, dh], contiguous; *probs
 * gets the softmax when asked. Not the fused attention kernel: its online
 * softmax is more exact in float32 than these steps, and the decomposition
 * must be as exact as the kernel (tjit decomps --verify). */
static tj_tensor *attend(steps *s, const attn_dims *d, tj_tensor *q, tj_tensor *k, tj_tensor *v, tj_tensor *mask,
                         tj_tensor **probs)
{
    static const int64_t bhtd[4] = {0, 2, 1, 3};
    int64_t dh = d->E / d->H, BH = d->B * d->H;
    const int64_t out_shape[4] = {d->B, d->H, d->T, dh};
    tj_tensor *qh = STEP(div_Scalar, T(STEP(clone, T(heads(s, d, q, bhtd)), tj_v_none())), tj_v_float(sqrt((double)dh)));
    tj_tensor *kh = STEP(clone, T(heads(s, d, k, bhtd)), tj_v_none());
    tj_tensor *vh = STEP(clone, T(heads(s, d, v, bhtd)), tj_v_none());
    const int64_t flat[3] = {BH, d->T, dh}, scores4[4] = {d->B, d->H, d->T, d->T}, scores3[3] = {BH, d->T, d->T};
    tj_tensor *kt = STEP(transpose_int, T(view(s, kh, 3, flat)), I(1), I(2));
    tj_tensor *scores = view(s, STEP(bmm, T(view(s, qh, 3, flat)), T(kt)), 4, scores4);
    if (mask) scores = STEP(masked_fill_Scalar, T(scores), T(mask), tj_v_float(-INFINITY));
    tj_tensor *p = STEP(_softmax, T(scores), I(-1), tj_v_bool(false));
    if (probs) *probs = p;
    return view(s, STEP(bmm, T(view(s, p, 3, scores3)), T(view(s, vh, 3, flat))), 4, out_shape);
}

/* The mask as a bool tensor (true = masked) broadcasting to [B, H, T, T]. */
static tj_tensor *attention_mask(steps *s, const attn_dims *d, tj_tensor *mask)
{
    if (!mask) return NULL;
    if (tj_tensor_dtype(mask) != TJ_BOOL) mask = STEP(ne_Scalar, T(mask), I(0));
    return tj_tensor_ndim(mask) == 2 ? view(s, mask, 4, (const int64_t[]){d->B, 1, 1, d->T}) : mask;
}

/* Multi-head self-attention of x (or of query, key, value when they
 * differ) with in-projection w[0], w[1] and out-projection w[2], w[3]:
 * [B, T, E]; *probs as attend's. */
static tj_tensor *multi_head_attention(steps *s, const attn_dims *d, tj_tensor *const *qkv, tj_tensor *const *w,
                                       tj_tensor *mask, tj_tensor **probs)
{
    tj_tensor *proj[3];
    if (qkv[0] == qkv[1] && qkv[1] == qkv[2]) { /* one product for the three projections */
        tj_tensor *all = linear(s, rows(s, d, qkv[0]), w[0], w[1]);
        for (int i = 0; i < 3; i++) proj[i] = slice(s, all, 1, i * d->E, (i + 1) * d->E);
    } else {
        for (int i = 0; i < 3; i++)
            proj[i] = linear(s, rows(s, d, qkv[i]), slice(s, w[0], 0, i * d->E, (i + 1) * d->E),
                             slice(s, w[1], 0, i * d->E, (i + 1) * d->E));
    }
    tj_tensor *ctx = attend(s, d, proj[0], proj[1], proj[2], attention_mask(s, d, mask), probs);
    tj_tensor *merged = STEP(clone, T(permute(s, ctx, (const int64_t[]){0, 2, 1, 3})), tj_v_none());
    tj_tensor *out = linear(s, view(s, merged, 2, (const int64_t[]){d->B * d->T, d->E}), w[2], w[3]);
    return view(s, out, 3, (const int64_t[]){d->B, d->T, d->E});
}

static attn_dims dims_of(const tj_tensor *x, int64_t num_heads)
{
    const int64_t *sh = tj_tensor_shape(x);
    return (attn_dims){sh[0], sh[1], sh[2], num_heads};
}

tj_status tj_native_multi_head_attention_compute(const tj_value *args, bool kernel, tj_value *outs)
{
    steps s[1] = {{kernel, TJ_OK}};
    tj_tensor *qkv[3] = {args[0].u.t, args[1].u.t, args[2].u.t};
    tj_tensor *w[4] = {args[5].u.t, args[6].u.t, args[7].u.t, args[8].u.t};
    attn_dims d = dims_of(qkv[0], args[4].u.i);
    bool need_weights = args[10].u.b;
    tj_tensor *p = NULL;
    tj_tensor *out = multi_head_attention(s, &d, qkv, w, tj_opt_tensor(&args[9]), need_weights ? &p : NULL);
    tj_tensor *weights = NULL;
    if (need_weights && args[11].u.b) /* ATen: the sum over heads, divided by their count */
        weights = STEP(div_Scalar, T(STEP(sum_dim_IntList, T(p), tj_v_ints((const int64_t[]){1}, 1), tj_v_bool(false),
                                          tj_v_none())),
                       I(d.H));
    else if (need_weights)
        weights = p;
    if (s->st != TJ_OK) return s->st;
    outs[0] = T(out);
    outs[1] = tj_v_none();
    if (need_weights) outs[1] = T(weights);
    return TJ_OK;
}

tj_status tj_transformer_encoder_layer_fwd_compute(const tj_value *args, bool kernel, tj_value *outs)
{
    steps s[1] = {{kernel, TJ_OK}};
    tj_tensor *src = args[0].u.t, *w[4] = {args[3].u.t, args[4].u.t, args[5].u.t, args[6].u.t};
    tj_tensor *mask = tj_opt_tensor(&args[18]);
    attn_dims d = dims_of(src, args[2].u.i);
    bool gelu = args[7].u.b, norm_first = args[8].u.b;
    double eps = tj_value_as_double(&args[9]);
    tj_tensor *n1w = args[10].u.t, *n1b = args[11].u.t, *n2w = args[12].u.t, *n2b = args[13].u.t;
    const int64_t bte[3] = {d.B, d.T, d.E};
    /* x = src + attention(norm1(src)), or norm1(src + attention(src)) */
    tj_tensor *h = norm_first ? layer_norm(s, &d, src, n1w, n1b, eps) : src;
    tj_tensor *x = STEP(add_Tensor, T(src), T(multi_head_attention(s, &d, (tj_tensor *[3]){h, h, h}, w, mask, NULL)), I(1));
    if (!norm_first) x = layer_norm(s, &d, x, n1w, n1b, eps);
    /* out = x + ffn(norm2(x)), or norm2(x + ffn(x)); gelu is the erf form */
    h = norm_first ? layer_norm(s, &d, x, n2w, n2b, eps) : x;
    tj_tensor *hidden = linear(s, rows(s, &d, h), args[14].u.t, args[15].u.t);
    hidden = gelu ? STEP(gelu, T(hidden), tj_v_str("none")) : STEP(relu, T(hidden));
    tj_tensor *ffn = view(s, linear(s, hidden, args[16].u.t, args[17].u.t), 3, bte);
    tj_tensor *out = STEP(add_Tensor, T(x), T(ffn), I(1));
    if (!norm_first) out = layer_norm(s, &d, out, n2w, n2b, eps);
    if (s->st != TJ_OK) return s->st;
    outs[0] = T(out);
    return TJ_OK;
}

/* ---- kernels: the computation in a scope of its own, its results copied
 * into the outputs the dispatcher allocated ---- */

static void copy_into(tj_tensor *dst, const tj_tensor *src)
{
    assert(tj_tensor_is_contiguous(src) && src->numel == dst->numel && src->dtype == dst->dtype);
    if (dst->numel) memcpy(tj_tensor_ptr(dst), tj_tensor_ptr(src), (size_t)dst->numel * tj_dtype_size(dst->dtype));
}

typedef tj_status (*compute_fn)(const tj_value *args, bool kernel, tj_value *outs);

static tj_status run_kernel(compute_fn compute, int nreturns, const tj_value *args, tj_tensor *const *outs)
{
    tj_scope *scope = tj_scope_begin();
    if (!scope) return tj_error(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", nreturns == 2 ? MHA : LAYER);
    tj_value r[2];
    tj_status st = compute(args, true, r);
    for (int i = 0; st == TJ_OK && i < nreturns; i++)
        if (outs[i]) copy_into(outs[i], r[i].u.t);
    tj_scope_end(scope);
    return st;
}

tj_status tj_kernel__native_multi_head_attention(const tj_value *args, tj_tensor *const *outs)
{
    return run_kernel(tj_native_multi_head_attention_compute, 2, args, outs);
}

tj_status tj_kernel__transformer_encoder_layer_fwd(const tj_value *args, tj_tensor *const *outs)
{
    return run_kernel(tj_transformer_encoder_layer_fwd_compute, 1, args, outs);
}
