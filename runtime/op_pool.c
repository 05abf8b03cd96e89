/* aten::max_pool2d_with_indices, its backward, and aten::avg_pool2d:
 * argument checks and output sizes as PyTorch 1.13 (Pool.h:
 * pooling_output_shape, pool2d_shape_check), glue to kernels/pool.h. */
#include <string.h>

#include "contig.h"
#include "iter.h"
#include "kernels/pool.h"
#include "op_backward.h"
#include "op_nn.h"

typedef struct pool_params {
    const char *op;   /* "aten::max_pool2d_with_indices", for messages */
    const char *name; /* "max_pool2d", as PyTorch's messages name it */
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    bool ceil_mode;
    int64_t n, c, h, w; /* a 3-d input is one unbatched sample */
    int64_t oh, ow;
} pool_params;

/* Reads an int[2] given as 1 or 2 entries (or, when `dflt` is not NULL, 0
 * entries meaning dflt) into out[2]. */
static tj_status read_pair(const pool_params *p, const char *what, const tj_value *v, const int64_t *dflt,
                           int64_t *out)
{
    if (v->n == 0 && dflt) {
        out[0] = dflt[0];
        out[1] = dflt[1];
        return TJ_OK;
    }
    if (v->n != 1 && v->n != 2)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: %s: %s must either be %sa single int, or a tuple of two ints (got %d values)",
                        p->op, p->name, what, dflt ? "omitted, " : "", v->n);
    out[0] = v->u.ints[0];
    out[1] = v->u.ints[v->n - 1];
    return TJ_OK;
}

/* PyTorch's pooling_output_shape: floor (or ceil) division, and in ceil
 * mode the last window must start inside the input or its left padding.
 * False when a step overflows: with a kernel size or dilation near
 * INT64_MAX the size wrapped around to a positive one (undefined
 * behaviour), and the kernel then looped over ~2^63 taps (hostile tests). */
static bool pool_out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode,
                          int64_t *out)
{
    int64_t num, extent;
    if (__builtin_mul_overflow(dil, k - 1, &extent) || __builtin_mul_overflow(pad, 2, &num) ||
        __builtin_add_overflow(num, in, &num) || __builtin_sub_overflow(num, extent, &num) ||
        __builtin_sub_overflow(num, 1, &num) || (ceil_mode && __builtin_add_overflow(num, stride - 1, &num)))
        return false;
    int64_t q = num / stride - (num % stride < 0); /* floor division, no overflow */
    *out = q + 1;
    if (ceil_mode && (*out - 1) * stride >= in + pad) (*out)--;
    return true;
}

/* Parses kernel_size, stride, padding (args[1..3]), dilation (args[4] when
 * has_dilation) and ceil_mode, checks them against the input and fills p. */
static tj_status pool_params_parse(const char *op, const char *name, const tj_tensor *in, const tj_value *args,
                                   bool has_dilation, bool ceil_mode, pool_params *p)
{
    char buf[96];
    memset(p, 0, sizeof *p);
    p->op = op;
    p->name = name;
    p->ceil_mode = ceil_mode;
    int64_t k[2] = {0}, s[2] = {0}, pad[2] = {0}, dil[2] = {1, 1};
    tj_status st;
    if ((st = read_pair(p, "kernel_size", &args[1], NULL, k)) || (st = read_pair(p, "stride", &args[2], k, s)) ||
        (st = read_pair(p, "padding", &args[3], NULL, pad)) ||
        (has_dilation && (st = read_pair(p, "dilation", &args[4], NULL, dil))))
        return st;
    p->kh = k[0], p->kw = k[1], p->sh = s[0], p->sw = s[1];
    p->ph = pad[0], p->pw = pad[1], p->dh = dil[0], p->dw = dil[1];
    if (p->kh <= 0 || p->kw <= 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: kernel size should be greater than zero, but got kH: %lld kW: %lld",
                        op, (long long)p->kh, (long long)p->kw);
    if (p->sh <= 0 || p->sw <= 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: stride should be greater than zero, but got dH: %lld dW: %lld", op,
                        (long long)p->sh, (long long)p->sw);
    if (p->dh <= 0 || p->dw <= 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "%s: dilation should be greater than zero, but got dilationH: %lld dilationW: %lld", op,
                        (long long)p->dh, (long long)p->dw);
    if (p->ph < 0 || p->pw < 0 || p->kw / 2 < p->pw || p->kh / 2 < p->ph)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "%s: pad should be at most half of kernel size, but got pad=[%lld, %lld] and "
                        "kernel_size=[%lld, %lld]",
                        op, (long long)p->ph, (long long)p->pw, (long long)p->kh, (long long)p->kw);
    int nd = in->ndim;
    const int64_t *sh = in->shape;
    bool ok = (nd == 3 && sh[0] != 0 && sh[1] != 0 && sh[2] != 0) || (nd == 4 && sh[1] != 0 && sh[2] != 0 && sh[3] != 0);
    if (!ok)
        return tj_error(TJ_ERR_SHAPE, "%s: expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got: %s",
                        op, tj_shape_str(nd, sh, buf, sizeof buf));
    p->n = nd == 4 ? sh[0] : 1;
    p->c = sh[nd - 3];
    p->h = sh[nd - 2];
    p->w = sh[nd - 1];
    if (!pool_out_size(p->h, p->kh, p->ph, p->sh, p->dh, ceil_mode, &p->oh) ||
        !pool_out_size(p->w, p->kw, p->pw, p->sw, p->dw, ceil_mode, &p->ow))
        return tj_error(TJ_ERR_OVERFLOW, "%s: the output size overflows (kernel_size [%lld, %lld], stride [%lld, %lld], "
                        "padding [%lld, %lld], dilation [%lld, %lld])", op, (long long)p->kh, (long long)p->kw,
                        (long long)p->sh, (long long)p->sw, (long long)p->ph, (long long)p->pw, (long long)p->dh,
                        (long long)p->dw);
    if (p->oh < 1 || p->ow < 1)
        return tj_error(TJ_ERR_SHAPE, "%s: given input size: (%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lld). Output size is too small",
                        op, (long long)p->c, (long long)p->h, (long long)p->w, (long long)p->c, (long long)p->oh,
                        (long long)p->ow);
    return TJ_OK;
}

/* Output meta: the input's leading dims, then [oh, ow]. */
static void pool_out_meta(const pool_params *p, const tj_tensor *in, tj_dtype dt, tj_meta *m)
{
    m->dtype = dt;
    m->ndim = in->ndim;
    memcpy(m->shape, in->shape, sizeof(int64_t) * (size_t)in->ndim);
    m->shape[in->ndim - 2] = p->oh;
    m->shape[in->ndim - 1] = p->ow;
}

/* The kernels' description, with the input's strides. */
static tj_k_pool2d pool_kernel_desc(const pool_params *p, const tj_tensor *in)
{
    int nd = in->ndim;
    tj_k_pool2d k = {
        .batch = p->n, .channels = p->c, .height = p->h, .width = p->w, .out_h = p->oh, .out_w = p->ow,
        .kh = p->kh, .kw = p->kw, .sh = p->sh, .sw = p->sw, .ph = p->ph, .pw = p->pw, .dh = p->dh, .dw = p->dw,
        .ns = nd == 4 ? in->strides[0] : 0, .cs = in->strides[nd - 3], .ys = in->strides[nd - 2], .xs = in->strides[nd - 1],
    };
    k.threads = tj_threads_for(p->n * p->c * p->oh * p->ow * p->kh * p->kw);
    return k;
}

static tj_status check_float(const pool_params *p, const tj_tensor *t)
{
    if (tj_dtype_is_float(t->dtype)) return TJ_OK;
    return tj_error(TJ_ERR_DTYPE, "%s: \"%s\" not implemented for %s input", p->op, p->name, tj_dtype_name(t->dtype));
}

/* ---- max_pool2d_with_indices ---- */

static tj_status max_pool_params(const tj_value *args, pool_params *p)
{
    const tj_tensor *in = args[0].u.t;
    tj_status st = pool_params_parse("aten::max_pool2d_with_indices", "max_pool2d", in, args, true, args[5].u.b, p);
    return st != TJ_OK ? st : check_float(p, in);
}

tj_status tj_meta_max_pool2d_with_indices(const tj_value *args, tj_meta *outs)
{
    pool_params p;
    tj_status st = max_pool_params(args, &p);
    if (st != TJ_OK) return st;
    pool_out_meta(&p, args[0].u.t, args[0].u.t->dtype, &outs[0]);
    pool_out_meta(&p, args[0].u.t, TJ_INT64, &outs[1]);
    return TJ_OK;
}

tj_status tj_kernel_max_pool2d_with_indices(const tj_value *args, tj_tensor *const *outs)
{
    pool_params p;
    tj_status st = max_pool_params(args, &p);
    if (st != TJ_OK) return st;
    const tj_tensor *in = args[0].u.t;
    tj_k_pool2d k = pool_kernel_desc(&p, in);
    int64_t *idx = (int64_t *)(void *)tj_tensor_ptr(outs[1]);
    if (in->dtype == TJ_FLOAT32)
        tj_k_max_pool2d_f32(&k, (const float *)(void *)tj_tensor_ptr(in), (float *)(void *)tj_tensor_ptr(outs[0]), idx);
    else
        tj_k_max_pool2d_f64(&k, (const double *)(void *)tj_tensor_ptr(in), (double *)(void *)tj_tensor_ptr(outs[0]), idx);
    return TJ_OK;
}

/* ---- max_pool2d_with_indices_backward ---- */

static tj_status max_pool_backward_params(const tj_value *args, pool_params *p)
{
    const char *op = "aten::max_pool2d_with_indices_backward";
    const tj_tensor *go = args[0].u.t, *self = args[1].u.t, *idx = args[7].u.t;
    tj_status st = pool_params_parse(op, "max_pool2d", self, &args[1], true, args[6].u.b, p);
    if (st != TJ_OK || (st = check_float(p, self)) != TJ_OK) return st;
    if (go->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: grad_output (%s) and self (%s) must have the same dtype", op,
                        tj_dtype_name(go->dtype), tj_dtype_name(self->dtype));
    if (idx->dtype != TJ_INT64)
        return tj_error(TJ_ERR_DTYPE, "%s: indices must be int64, got %s", op, tj_dtype_name(idx->dtype));
    tj_meta m;
    pool_out_meta(p, self, go->dtype, &m);
    const tj_tensor *check[2] = {go, idx};
    const char *names[2] = {"grad_output", "indices"};
    for (int i = 0; i < 2; i++)
        if (check[i]->ndim != m.ndim || memcmp(check[i]->shape, m.shape, sizeof(int64_t) * (size_t)m.ndim) != 0) {
            char a[96], b[96];
            return tj_error(TJ_ERR_SHAPE, "%s: %s of size %s does not match the pooling output size %s", op, names[i],
                            tj_shape_str(check[i]->ndim, check[i]->shape, a, sizeof a), tj_shape_str(m.ndim, m.shape, b, sizeof b));
        }
    return TJ_OK;
}

tj_status tj_meta_max_pool2d_with_indices_backward(const tj_value *args, tj_meta *outs)
{
    pool_params p;
    tj_status st = max_pool_backward_params(args, &p);
    if (st != TJ_OK) return st;
    const tj_tensor *self = args[1].u.t;
    tj_meta_like(&outs[0], self);
    return TJ_OK;
}

tj_status tj_kernel_max_pool2d_with_indices_backward(const tj_value *args, tj_tensor *const *outs)
{
    pool_params p;
    tj_status st = max_pool_backward_params(args, &p);
    if (st != TJ_OK) return st;
    tj_contig go = {0}, idx = {0};
    if ((st = tj_contig_get(&go, args[0].u.t)) == TJ_OK && (st = tj_contig_get(&idx, args[7].u.t)) == TJ_OK) {
        tj_k_pool2d k = pool_kernel_desc(&p, args[1].u.t);
        int64_t bad = 0;
        void *gi = tj_tensor_ptr(outs[0]);
        const int64_t *ix = (const int64_t *)(const void *)idx.data;
        bool ok = outs[0]->dtype == TJ_FLOAT32
                      ? tj_k_max_pool2d_backward_f32(&k, (const float *)(const void *)go.data, ix, gi, &bad)
                      : tj_k_max_pool2d_backward_f64(&k, (const double *)(const void *)go.data, ix, gi, &bad);
        if (!ok)
            st = tj_error(TJ_ERR_INDEX, "%s: index %lld is out of range for input planes of %lld x %lld elements",
                          p.op, (long long)bad, (long long)p.h, (long long)p.w);
    }
    tj_contig_release(&go);
    tj_contig_release(&idx);
    return st;
}

/* ---- avg_pool2d ---- */

static tj_status avg_pool_params(const tj_value *args, pool_params *p)
{
    const tj_tensor *in = args[0].u.t;
    tj_status st = pool_params_parse("aten::avg_pool2d", "avg_pool2d", in, args, false, args[4].u.b, p);
    if (st != TJ_OK) return st;
    if (in->dtype == TJ_BOOL)
        return tj_error(TJ_ERR_DTYPE, "%s: \"avg_pool2d\" not implemented for bool input", p->op);
    if (args[6].kind == TJ_V_INT && args[6].u.i == 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: divisor must be not zero", p->op);
    return TJ_OK;
}

tj_status tj_meta_avg_pool2d(const tj_value *args, tj_meta *outs)
{
    pool_params p;
    tj_status st = avg_pool_params(args, &p);
    if (st != TJ_OK) return st;
    pool_out_meta(&p, args[0].u.t, args[0].u.t->dtype, &outs[0]);
    return TJ_OK;
}

tj_status tj_kernel_avg_pool2d(const tj_value *args, tj_tensor *const *outs)
{
    pool_params p;
    tj_status st = avg_pool_params(args, &p);
    if (st != TJ_OK) return st;
    const tj_tensor *in = args[0].u.t;
    tj_k_pool2d k = pool_kernel_desc(&p, in);
    bool include = args[5].u.b;
    const int64_t *div = args[6].kind == TJ_V_INT ? &args[6].u.i : NULL;
    const void *src = tj_tensor_ptr(in);
    void *dst = tj_tensor_ptr(outs[0]);
    switch (in->dtype) {
    case TJ_FLOAT32: tj_k_avg_pool2d_f32(&k, src, dst, include, div); break;
    case TJ_FLOAT64: tj_k_avg_pool2d_f64(&k, src, dst, include, div); break;
    default: tj_k_avg_pool2d_i64(&k, src, dst, include, div); break;
    }
    return TJ_OK;
}
