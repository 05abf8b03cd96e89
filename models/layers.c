/* Parameters and the transformer block shared by gpt and block768. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "layers.h"

static tj_status add_param(model *m, const char *name, tj_tensor *t)
{
    if (!t) return tj_last_status();
    if (m->n_params == MODEL_MAX_PARAMS) {
        tj_tensor_release(t);
        return tj_error(TJ_ERR_OVERFLOW, "model: more than %d parameters", MODEL_MAX_PARAMS);
    }
    char *copy = strdup(name);
    if (!copy) {
        tj_tensor_release(t);
        return tj_error(TJ_ERR_OUT_OF_MEMORY, "model: out of memory");
    }
    m->names[m->n_params] = copy;
    m->params[m->n_params++] = t;
    return TJ_OK;
}

/* Ends the scope a parameter was made in, keeping the parameter. */
static tj_tensor *kept(tj_scope *s, tj_tensor *t)
{
    if (t) tj_tensor_retain(t);
    tj_scope_end(s);
    return t;
}

tj_status param_uniform(model *m, const char *name, int ndim, const int64_t *shape, double bound)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *r = tj_rand(shape, ndim, TJ_FLOAT32);
    tj_tensor *t = tj_add_scalar(tj_mul_scalar(r, tj_v_float(2 * bound)), tj_v_float(-bound));
    return add_param(m, name, kept(s, t));
}

tj_status param_normal(model *m, const char *name, int ndim, const int64_t *shape)
{
    tj_scope *s = tj_scope_begin();
    return add_param(m, name, kept(s, tj_randn(shape, ndim, TJ_FLOAT32)));
}

tj_status param_fill(model *m, const char *name, int ndim, const int64_t *shape, double value)
{
    tj_scope *s = tj_scope_begin();
    return add_param(m, name, kept(s, tj_full(shape, ndim, tj_v_float(value), TJ_FLOAT32)));
}

static tj_status named(char *buf, size_t n, const char *prefix, const char *leaf)
{
    snprintf(buf, n, "%s%s%s", prefix, prefix[0] ? "." : "", leaf);
    return TJ_OK;
}

tj_status linear_params(model *m, const char *prefix, int64_t in, int64_t out, bool bias)
{
    char name[128];
    double bound = 1.0 / sqrt((double)in);
    named(name, sizeof name, prefix, "weight");
    tj_status st = param_uniform(m, name, 2, (int64_t[]){out, in}, bound);
    if (st != TJ_OK || !bias) return st;
    named(name, sizeof name, prefix, "bias");
    return param_uniform(m, name, 1, (int64_t[]){out}, bound);
}

tj_status conv2d_params(model *m, const char *prefix, int64_t cin, int64_t cout, int64_t k)
{
    char name[128];
    double bound = 1.0 / sqrt((double)(cin * k * k));
    named(name, sizeof name, prefix, "weight");
    tj_status st = param_uniform(m, name, 4, (int64_t[]){cout, cin, k, k}, bound);
    if (st != TJ_OK) return st;
    named(name, sizeof name, prefix, "bias");
    return param_uniform(m, name, 1, (int64_t[]){cout}, bound);
}

tj_status layer_norm_params(model *m, const char *prefix, int64_t d)
{
    char name[128];
    named(name, sizeof name, prefix, "weight");
    tj_status st = param_fill(m, name, 1, (int64_t[]){d}, 1.0);
    if (st != TJ_OK) return st;
    named(name, sizeof name, prefix, "bias");
    return param_fill(m, name, 1, (int64_t[]){d}, 0.0);
}

/* Parameter order inside a block: ln1 w,b; attn.qkv w,b; attn.proj w,b;
 * ln2 w,b; mlp.fc w,b; mlp.proj w,b. */
tj_status block_params(model *m, const char *prefix, int64_t d, int64_t hidden)
{
    char p[128];
    tj_status st;
    snprintf(p, sizeof p, "%s.ln1", prefix);
    if ((st = layer_norm_params(m, p, d)) != TJ_OK) return st;
    snprintf(p, sizeof p, "%s.attn.qkv", prefix);
    if ((st = linear_params(m, p, d, 3 * d, true)) != TJ_OK) return st;
    snprintf(p, sizeof p, "%s.attn.proj", prefix);
    if ((st = linear_params(m, p, d, d, true)) != TJ_OK) return st;
    snprintf(p, sizeof p, "%s.ln2", prefix);
    if ((st = layer_norm_params(m, p, d)) != TJ_OK) return st;
    snprintf(p, sizeof p, "%s.mlp.fc", prefix);
    if ((st = linear_params(m, p, d, hidden, true)) != TJ_OK) return st;
    snprintf(p, sizeof p, "%s.mlp.proj", prefix);
    return linear_params(m, p, hidden, d, true);
}

tj_tensor *causal_mask_new(int64_t t)
{
    /* made in its own scope: the model owns the mask, not the caller's scope */
    tj_scope *s = tj_scope_begin();
    tj_tensor *mask = tj_tensor_empty(TJ_BOOL, 2, (int64_t[]){t, t});
    if (mask) {
        unsigned char *p = tj_tensor_data(mask);
        for (int64_t i = 0; i < t; i++)
            for (int64_t j = 0; j < t; j++) p[i * t + j] = j <= i;
    }
    return kept(s, mask);
}

/* y = proj(softmax(mask(q k^T / sqrt(hd))) v), as nn.Module code writes it. */
static tj_tensor *causal_self_attention(tj_tensor *const *p, tj_tensor *x, int64_t heads, tj_tensor *mask)
{
    int64_t B = tj_tensor_size(x, 0), T = tj_tensor_size(x, 1), d = tj_tensor_size(x, 2), hd = d / heads;
    tj_tensor *qkv = tj_linear(x, p[0], p[1]);
    tj_tensor *parts[3];
    int n = 0;
    if (tj_split(qkv, d, 2, parts, 3, &n) != TJ_OK) return NULL;
    int64_t heads_shape[4] = {B, T, heads, hd};
    tj_tensor *q = tj_transpose(tj_view(parts[0], heads_shape, 4), 1, 2);
    tj_tensor *k = tj_transpose(tj_view(parts[1], heads_shape, 4), 1, 2);
    tj_tensor *v = tj_transpose(tj_view(parts[2], heads_shape, 4), 1, 2);
    tj_tensor *att = tj_mul_scalar(tj_matmul(q, tj_transpose(k, -2, -1)), tj_v_float(1.0 / sqrt((double)hd)));
    tj_tensor *visible = tj_slice(tj_slice(mask, 0, true, 0, true, T, 1), 1, true, 0, true, T, 1);
    att = tj_masked_fill(att, tj_eq_scalar(visible, tj_v_int(0)), tj_v_float(-INFINITY));
    att = tj_softmax(att, -1);
    tj_tensor *y = tj_matmul(att, v);
    int64_t out_shape[3] = {B, T, d};
    y = tj_view(tj_contiguous(tj_transpose(y, 1, 2)), out_shape, 3);
    return tj_linear(y, p[2], p[3]);
}

tj_tensor *block_forward(tj_tensor *const *p, tj_tensor *x, int64_t heads, tj_tensor *mask)
{
    int64_t d[1] = {tj_tensor_size(x, -1)};
    tj_tensor *h = tj_layer_norm(x, d, 1, p[0], p[1], 1e-5);
    x = tj_add(x, causal_self_attention(p + 2, h, heads, mask));
    h = tj_layer_norm(x, d, 1, p[6], p[7], 1e-5);
    h = tj_linear(tj_gelu(tj_linear(h, p[8], p[9]), "tanh"), p[10], p[11]);
    return tj_add(x, h);
}

tj_tensor *classification_loss(const model *m, tj_tensor *logits, tj_tensor *y)
{
    (void)m;
    return tj_cross_entropy(logits, y, NULL, 1, -100, 0.0);
}
