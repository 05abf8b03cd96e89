/* aten::max_pool3d_with_indices, aten::avg_pool3d and their backward
 * operators: argument checks and output sizes as PyTorch 1.13 (Pool.h:
 * pooling_output_shape, pool3d_shape_check), glue to kernels/pool3d.h. */
#include <string.h>

#include "contig.h"
#include "iter.h"
#include "kernels/pool3d.h"
#include "op_backward.h"
#include "op_nn.h"

typedef struct pool3d_params {
    const char *op;   /* "aten::max_pool3d_with_indices", for messages */
    const char *name; /* "max_pool3d", as PyTorch's messages name it */
    tj_k_pool3d k;    /* planes = N * C of a 5-d input, C of a 4-d (unbatched) one */
} pool3d_params;

/* Reads an int[3] given as 1 or 3 entries (or, when `dflt` is not NULL, 0
 * entries meaning dflt) into out[3]. */
static tj_status read_triple(const pool3d_params *p, const char *what, const tj_value *v, const int64_t *dflt,
                             int64_t *out)
{
    if (v->n == 0 && dflt) {
        memcpy(out, dflt, 3 * sizeof *out);
        return TJ_OK;
    }
    if (v->n != 1 && v->n != 3)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "%s: %s: %s must either be %sa single int, or a tuple of three ints (got %d values)", p->op,
                        p->name, what, dflt ? "omitted, " : "", v->n);
    for (int i = 0; i < 3; i++) out[i] = v->u.ints[v->n == 1 ? 0 : i];
    return TJ_OK;
}

/* PyTorch's pooling_output_shape (see op_pool.c); false on overflow. */
static bool out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode, int64_t *out)
{
    int64_t num, extent;
    if (__builtin_mul_overflow(dil, k - 1, &extent) || __builtin_mul_overflow(pad, 2, &num) ||
        __builtin_add_overflow(num, in, &num) || __builtin_sub_overflow(num, extent, &num) ||
        __builtin_sub_overflow(num, 1, &num) || (ceil_mode && __builtin_add_overflow(num, stride - 1, &num)))
        return false;
    *out = num / stride - (num % stride < 0) + 1;
    if (ceil_mode && (*out - 1) * stride >= in + pad) (*out)--;
    return true;
}

/* Parses kernel_size, stride, padding (args[1..3]), dilation (args[4] when
 * has_dilation) and ceil_mode, checks them against `in` (4-d or 5-d, of a
 * float dtype) and fills p. */
static tj_status pool3d_parse(const char *op, const char *name, const tj_tensor *in, const tj_value *args,
                              bool has_dilation, bool ceil_mode, pool3d_params *p)
{
    char buf[96];
    memset(p, 0, sizeof *p);
    p->op = op;
    p->name = name;
    tj_k_pool3d *k = &p->k;
    static const int64_t ones[3] = {1, 1, 1};
    tj_status st;
    if ((st = read_triple(p, "kernel_size", &args[1], NULL, k->kernel)) ||
        (st = read_triple(p, "stride", &args[2], k->kernel, k->stride)) ||
        (st = read_triple(p, "padding", &args[3], NULL, k->padding)) ||
        (st = has_dilation ? read_triple(p, "dilation", &args[4], NULL, k->dilation)
                           : read_triple(p, "dilation", &(tj_value){.kind = TJ_V_INTS}, ones, k->dilation)))
        return st;
    const int64_t *kk = k->kernel, *s = k->stride, *d = k->dilation, *pd = k->padding;
    if (kk[0] <= 0 || kk[1] <= 0 || kk[2] <= 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "%s: kernel size should be greater than zero, but got kT: %lld kH: %lld kW: %lld", op,
                        (long long)kk[0], (long long)kk[1], (long long)kk[2]);
    if (s[0] <= 0 || s[1] <= 0 || s[2] <= 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: stride should be greater than zero, but got dT: %lld dH: %lld dW: %lld",
                        op, (long long)s[0], (long long)s[1], (long long)s[2]);
    if (d[0] <= 0 || d[1] <= 0 || d[2] <= 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "%s: dilation should be greater than zero, but got dilationT: %lld dilationH: %lld "
                        "dilationW: %lld",
                        op, (long long)d[0], (long long)d[1], (long long)d[2]);
    for (int i = 0; i < 3; i++)
        if (pd[i] < 0 || kk[i] / 2 < pd[i])
            return tj_error(TJ_ERR_INVALID_ARGUMENT,
                            "%s: pad should be smaller than or equal to half of kernel size, but got kT: %lld kW: "
                            "%lld kH: %lld padT: %lld padW: %lld padH: %lld",
                            op, (long long)kk[0], (long long)kk[2], (long long)kk[1], (long long)pd[0],
                            (long long)pd[2], (long long)pd[1]);
    int nd = in->ndim;
    const int64_t *sh = in->shape;
    bool ok = (nd == 4 || nd == 5) && sh[nd - 4] != 0 && sh[nd - 3] != 0 && sh[nd - 2] != 0 && sh[nd - 1] != 0;
    if (!ok)
        return tj_error(TJ_ERR_SHAPE,
                        "%s: expected 4D or 5D (batch mode) tensor with optional 0 dim batch size for input, but "
                        "got: %s",
                        op, tj_shape_str(nd, sh, buf, sizeof buf));
    if (!tj_dtype_is_float(in->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: \"%s\" not implemented for %s input", op, name, tj_dtype_name(in->dtype));
    k->planes = (nd == 5 ? sh[0] : 1) * sh[nd - 4];
    for (int i = 0; i < 3; i++) {
        k->size[i] = sh[nd - 3 + i];
        if (!out_size(k->size[i], kk[i], pd[i], s[i], d[i], ceil_mode, &k->out[i]))
            return tj_error(TJ_ERR_OVERFLOW, "%s: the output size overflows (input %s)", op,
                            tj_shape_str(nd, sh, buf, sizeof buf));
    }
    const int64_t *o = k->out;
    if (o[0] < 1 || o[1] < 1 || o[2] < 1)
        return tj_error(TJ_ERR_SHAPE,
                        "%s: given input size: (%lldx%lldx%lldx%lld). Calculated output size: "
                        "(%lldx%lldx%lldx%lld). Output size is too small",
                        op, (long long)sh[nd - 4], (long long)k->size[0], (long long)k->size[1],
                        (long long)k->size[2], (long long)sh[nd - 4], (long long)o[0], (long long)o[1],
                        (long long)o[2]);
    k->threads = tj_threads_for(k->planes * o[0] * o[1] * o[2] * kk[0] * kk[1] * kk[2]);
    return TJ_OK;
}

/* Output meta: the input's leading dims, then out[0..2]. */
static void pool3d_out_meta(const pool3d_params *p, const tj_tensor *in, tj_dtype dt, tj_meta *m)
{
    m->dtype = dt;
    m->ndim = in->ndim;
    memcpy(m->shape, in->shape, sizeof(int64_t) * (size_t)in->ndim);
    memcpy(m->shape + in->ndim - 3, p->k.out, 3 * sizeof(int64_t));
}

/* TJ_ERR_SHAPE unless t has the pooling output's shape (what: its name). */
static tj_status check_out_shaped(const pool3d_params *p, const tj_tensor *self, const tj_tensor *t, const char *what)
{
    tj_meta m;
    pool3d_out_meta(p, self, t->dtype, &m);
    if (t->ndim == m.ndim && memcmp(t->shape, m.shape, sizeof(int64_t) * (size_t)m.ndim) == 0) return TJ_OK;
    char a[96], b[96];
    return tj_error(TJ_ERR_SHAPE, "%s: %s of size %s does not match the pooling output size %s", p->op, what,
                    tj_shape_str(t->ndim, t->shape, a, sizeof a), tj_shape_str(m.ndim, m.shape, b, sizeof b));
}

static tj_status check_grad_dtype(const pool3d_params *p, const tj_tensor *go, const tj_tensor *self)
{
    if (go->dtype == self->dtype) return TJ_OK;
    return tj_error(TJ_ERR_DTYPE, "%s: grad_output (%s) and self (%s) must have the same dtype", p->op,
                    tj_dtype_name(go->dtype), tj_dtype_name(self->dtype));
}

/* ---- max_pool3d_with_indices ---- */

static tj_status max_params(const tj_value *args, pool3d_params *p)
{
    return pool3d_parse("aten::max_pool3d_with_indices", "max_pool3d", args[0].u.t, args, true, args[5].u.b, p);
}

tj_status tj_meta_max_pool3d_with_indices(const tj_value *args, tj_meta *outs)
{
    pool3d_params p;
    tj_status st = max_params(args, &p);
    if (st != TJ_OK) return st;
    pool3d_out_meta(&p, args[0].u.t, args[0].u.t->dtype, &outs[0]);
    pool3d_out_meta(&p, args[0].u.t, TJ_INT64, &outs[1]);
    return TJ_OK;
}

tj_status tj_kernel_max_pool3d_with_indices(const tj_value *args, tj_tensor *const *outs)
{
    pool3d_params p;
    tj_status st = max_params(args, &p);
    if (st != TJ_OK) return st;
    tj_contig in = {0};
    if ((st = tj_contig_get(&in, args[0].u.t)) != TJ_OK) return st;
    int64_t *idx = (int64_t *)(void *)tj_tensor_ptr(outs[1]);
    if (outs[0]->dtype == TJ_FLOAT32)
        tj_k_max_pool3d_f32(&p.k, (const float *)(const void *)in.data, (float *)(void *)tj_tensor_ptr(outs[0]), idx);
    else
        tj_k_max_pool3d_f64(&p.k, (const double *)(const void *)in.data, (double *)(void *)tj_tensor_ptr(outs[0]),
                            idx);
    tj_contig_release(&in);
    return TJ_OK;
}

/* ---- max_pool3d_with_indices_backward ---- */

static tj_status max_backward_params(const tj_value *args, pool3d_params *p)
{
    const tj_tensor *go = args[0].u.t, *self = args[1].u.t, *idx = args[7].u.t;
    tj_status st = pool3d_parse("aten::max_pool3d_with_indices_backward", "max_pool3d", self, &args[1], true,
                                args[6].u.b, p);
    if (st != TJ_OK || (st = check_grad_dtype(p, go, self)) != TJ_OK) return st;
    if (idx->dtype != TJ_INT64)
        return tj_error(TJ_ERR_DTYPE, "%s: indices must be int64, got %s", p->op, tj_dtype_name(idx->dtype));
    if ((st = check_out_shaped(p, self, go, "grad_output")) != TJ_OK) return st;
    return check_out_shaped(p, self, idx, "indices");
}

tj_status tj_meta_max_pool3d_with_indices_backward(const tj_value *args, tj_meta *outs)
{
    pool3d_params p;
    tj_status st = max_backward_params(args, &p);
    if (st == TJ_OK) tj_meta_like(&outs[0], args[1].u.t);
    return st;
}

tj_status tj_kernel_max_pool3d_with_indices_backward(const tj_value *args, tj_tensor *const *outs)
{
    pool3d_params p;
    tj_status st = max_backward_params(args, &p);
    if (st != TJ_OK) return st;
    tj_contig go = {0}, idx = {0};
    if ((st = tj_contig_get(&go, args[0].u.t)) == TJ_OK && (st = tj_contig_get(&idx, args[7].u.t)) == TJ_OK) {
        int64_t bad = 0;
        void *gi = tj_tensor_ptr(outs[0]);
        const int64_t *ix = (const int64_t *)(const void *)idx.data;
        bool ok = outs[0]->dtype == TJ_FLOAT32
                      ? tj_k_max_pool3d_backward_f32(&p.k, (const float *)(const void *)go.data, ix, gi, &bad)
                      : tj_k_max_pool3d_backward_f64(&p.k, (const double *)(const void *)go.data, ix, gi, &bad);
        if (!ok)
            st = tj_error(TJ_ERR_INDEX, "%s: index %lld is out of range for input volumes of %lld x %lld x %lld elements",
                          p.op, (long long)bad, (long long)p.k.size[0], (long long)p.k.size[1],
                          (long long)p.k.size[2]);
    }
    tj_contig_release(&go);
    tj_contig_release(&idx);
    return st;
}

/* ---- avg_pool3d, avg_pool3d_backward ---- */

/* args from self: self, kernel_size, stride, padding, ceil_mode,
 * count_include_pad, divisor_override. */
static tj_status avg_params(const char *op, const tj_value *args, pool3d_params *p)
{
    tj_status st = pool3d_parse(op, "avg_pool3d", args[0].u.t, args, false, args[4].u.b, p);
    if (st == TJ_OK && args[6].kind == TJ_V_INT && args[6].u.i == 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: divisor must be not zero", op);
    return st;
}

static const int64_t *divisor_of(const tj_value *v) { return v->kind == TJ_V_INT ? &v->u.i : NULL; }

tj_status tj_meta_avg_pool3d(const tj_value *args, tj_meta *outs)
{
    pool3d_params p;
    tj_status st = avg_params("aten::avg_pool3d", args, &p);
    if (st == TJ_OK) pool3d_out_meta(&p, args[0].u.t, args[0].u.t->dtype, &outs[0]);
    return st;
}

tj_status tj_kernel_avg_pool3d(const tj_value *args, tj_tensor *const *outs)
{
    pool3d_params p;
    tj_status st = avg_params("aten::avg_pool3d", args, &p);
    if (st != TJ_OK) return st;
    tj_contig in = {0};
    if ((st = tj_contig_get(&in, args[0].u.t)) != TJ_OK) return st;
    bool include = args[5].u.b;
    const int64_t *div = divisor_of(&args[6]);
    if (outs[0]->dtype == TJ_FLOAT32)
        tj_k_avg_pool3d_f32(&p.k, (const float *)(const void *)in.data, (float *)(void *)tj_tensor_ptr(outs[0]),
                            include, div);
    else
        tj_k_avg_pool3d_f64(&p.k, (const double *)(const void *)in.data, (double *)(void *)tj_tensor_ptr(outs[0]),
                            include, div);
    tj_contig_release(&in);
    return TJ_OK;
}

/* grad_output, then avg_pool3d's arguments from self. */
static tj_status avg_backward_params(const tj_value *args, pool3d_params *p)
{
    tj_status st = avg_params("aten::avg_pool3d_backward", &args[1], p);
    if (st != TJ_OK || (st = check_grad_dtype(p, args[0].u.t, args[1].u.t)) != TJ_OK) return st;
    return check_out_shaped(p, args[1].u.t, args[0].u.t, "grad_output");
}

tj_status tj_meta_avg_pool3d_backward(const tj_value *args, tj_meta *outs)
{
    pool3d_params p;
    tj_status st = avg_backward_params(args, &p);
    if (st == TJ_OK) tj_meta_like(&outs[0], args[1].u.t);
    return st;
}

tj_status tj_kernel_avg_pool3d_backward(const tj_value *args, tj_tensor *const *outs)
{
    pool3d_params p;
    tj_status st = avg_backward_params(args, &p);
    if (st != TJ_OK) return st;
    tj_contig go = {0};
    if ((st = tj_contig_get(&go, args[0].u.t)) != TJ_OK) return st;
    bool include = args[6].u.b;
    const int64_t *div = divisor_of(&args[7]);
    if (outs[0]->dtype == TJ_FLOAT32)
        tj_k_avg_pool3d_backward_f32(&p.k, (const float *)(const void *)go.data, (float *)(void *)tj_tensor_ptr(outs[0]),
                                     include, div);
    else
        tj_k_avg_pool3d_backward_f64(&p.k, (const double *)(const void *)go.data,
                                     (double *)(void *)tj_tensor_ptr(outs[0]), include, div);
    tj_contig_release(&go);
    return TJ_OK;
}
