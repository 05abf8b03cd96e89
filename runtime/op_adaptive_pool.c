/* aten::_adaptive_avg_pool2d, aten::adaptive_max_pool2d,
 * aten::_adaptive_avg_pool3d and their backward operators: argument checks
 * and messages as PyTorch 1.13 (AdaptiveAveragePooling.cpp,
 * AdaptiveMaxPooling2d.cpp, AdaptiveAveragePooling3d.cpp), glue to the
 * kernels of kernels/pool.h and kernels/pool3d.h. */
#include <string.h>

#include "contig.h"
#include "iter.h"
#include "kernels/pool.h"
#include "kernels/pool3d.h"
#include "op_backward.h"
#include "op_nn.h"

/* Sizes of a 3-d (one unbatched sample) or 4-d input and its output. */
typedef struct adaptive_params {
    int64_t n, c, h, w, oh, ow;
} adaptive_params;

/* Checks self (rank, non-empty dims from first_dim on, float dtype) against
 * the output size out = [OH, OW] (both >= 0) and fills p; `name` is ATen's
 * own prefix of the messages ("adaptive_avg_pool2d"). ATen checks the plane's
 * dims for the average, every dim but the first for the max. */
static tj_status adaptive_params_parse(const char *op, const char *name, const tj_tensor *self, const int64_t *out,
                                       bool from_dim1, adaptive_params *p)
{
    char buf[96];
    int nd = self->ndim;
    if (nd != 3 && nd != 4)
        return tj_error(TJ_ERR_SHAPE, "%s: %s(): Expected 3D or 4D tensor, but got %s", op, name,
                        tj_shape_str(nd, self->shape, buf, sizeof buf));
    for (int d = from_dim1 ? 1 : nd - 2; d < nd; d++)
        if (self->shape[d] == 0)
            return tj_error(TJ_ERR_SHAPE,
                            "%s: %s(): Expected input to have non-zero size for non-batch dimensions, but input "
                            "has sizes %s with dimension %d being empty",
                            op, name, tj_shape_str(nd, self->shape, buf, sizeof buf), d);
    if (!tj_dtype_is_float(self->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: \"%s\" not implemented for %s input", op, name,
                        tj_dtype_name(self->dtype));
    *p = (adaptive_params){.n = nd == 4 ? self->shape[0] : 1, .c = self->shape[nd - 3], .h = self->shape[nd - 2],
                           .w = self->shape[nd - 1], .oh = out[0], .ow = out[1]};
    /* the window bounds multiply an input size by an output index + 1 (up
     * to the output size: in * out + in, each step checked, as out + 1
     * overflows for an output size of INT64_MAX) */
    int64_t span_h, span_w;
    if (__builtin_mul_overflow(p->h, p->oh, &span_h) || __builtin_add_overflow(span_h, p->h, &span_h) ||
        __builtin_mul_overflow(p->w, p->ow, &span_w) || __builtin_add_overflow(span_w, p->w, &span_w))
        return tj_error(TJ_ERR_OVERFLOW, "%s: output_size [%lld, %lld] is too large for input %s", op,
                        (long long)p->oh, (long long)p->ow, tj_shape_str(nd, self->shape, buf, sizeof buf));
    return TJ_OK;
}

void tj_adaptive_window(int64_t i, int64_t out, int64_t in, int64_t *start, int64_t *end)
{
    *start = tj_k_adaptive_start(i, out, in);
    *end = tj_k_adaptive_end(i, out, in);
}

/* The kernels' description: sizes, self's strides, threads. */
static tj_k_pool2d adaptive_kernel_desc(const adaptive_params *p, const tj_tensor *self)
{
    int nd = self->ndim;
    tj_k_pool2d k = {
        .batch = p->n, .channels = p->c, .height = p->h, .width = p->w, .out_h = p->oh, .out_w = p->ow,
        .ns = nd == 4 ? self->strides[0] : 0, .cs = self->strides[nd - 3], .ys = self->strides[nd - 2],
        .xs = self->strides[nd - 1],
    };
    /* each input element is read about once per window holding it */
    int64_t larger_h = p->h > p->oh ? p->h : p->oh, larger_w = p->w > p->ow ? p->w : p->ow;
    k.threads = tj_threads_for(p->n * p->c * larger_h * larger_w);
    return k;
}

/* ---- _adaptive_avg_pool2d ---- */

static tj_status forward_params(const tj_value *args, adaptive_params *p)
{
    const char *op = "aten::_adaptive_avg_pool2d";
    const tj_value *size = &args[1];
    char buf[96];
    if (size->n != 2)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: adaptive_avg_pool2d: output_size must be 2, got %s", op,
                        tj_shape_str(size->n, size->u.ints, buf, sizeof buf));
    if (size->u.ints[0] < 0 || size->u.ints[1] < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "%s: adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
                        "received {%lld, %lld}",
                        op, (long long)size->u.ints[0], (long long)size->u.ints[1]);
    return adaptive_params_parse(op, "adaptive_avg_pool2d", args[0].u.t, size->u.ints, false, p);
}

tj_status tj_meta__adaptive_avg_pool2d(const tj_value *args, tj_meta *outs)
{
    adaptive_params p;
    tj_status st = forward_params(args, &p);
    if (st != TJ_OK) return st;
    tj_meta_like(&outs[0], args[0].u.t);
    outs[0].shape[outs[0].ndim - 2] = p.oh;
    outs[0].shape[outs[0].ndim - 1] = p.ow;
    return TJ_OK;
}

tj_status tj_kernel__adaptive_avg_pool2d(const tj_value *args, tj_tensor *const *outs)
{
    adaptive_params p;
    tj_status st = forward_params(args, &p);
    if (st != TJ_OK) return st;
    const tj_tensor *self = args[0].u.t;
    tj_k_pool2d k = adaptive_kernel_desc(&p, self);
    const void *src = tj_tensor_ptr(self);
    void *dst = tj_tensor_ptr(outs[0]);
    if (self->dtype == TJ_FLOAT32) tj_k_adaptive_avg_pool2d_f32(&k, src, dst);
    else tj_k_adaptive_avg_pool2d_f64(&k, src, dst);
    return TJ_OK;
}

/* ---- _adaptive_avg_pool2d_backward ---- */

/* self's checks as the forward's, with the output size grad_output's; then
 * grad_output: PyTorch's checks (every dim but the first non-empty, self's
 * dtype) and, beyond them, self's rank and leading sizes (PyTorch reads
 * past a smaller grad_output). */
static tj_status backward_params(const tj_value *args, adaptive_params *p)
{
    const char *op = "aten::_adaptive_avg_pool2d_backward";
    const tj_tensor *go = args[0].u.t, *self = args[1].u.t;
    char a[96], b[96];
    int nd = go->ndim;
    if (nd != 3 && nd != 4)
        return tj_error(TJ_ERR_SHAPE, "%s: adaptive_avg_pool2d_backward(): Expected 3D or 4D grad_output, but got %s",
                        op, tj_shape_str(nd, go->shape, a, sizeof a));
    for (int d = 1; d < nd; d++)
        if (go->shape[d] == 0)
            return tj_error(TJ_ERR_SHAPE,
                            "%s: adaptive_avg_pool2d_backward(): Expected grad_output to have non-zero size for "
                            "non-batch dimensions, but grad_output has sizes %s with dimension %d being empty",
                            op, tj_shape_str(nd, go->shape, a, sizeof a), d);
    tj_status st = adaptive_params_parse(op, "adaptive_avg_pool2d", self, go->shape + nd - 2, false, p);
    if (st != TJ_OK) return st;
    if (go->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: expected dtype %s for `grad_output` but got dtype %s", op,
                        tj_dtype_name(self->dtype), tj_dtype_name(go->dtype));
    if (self->ndim != nd || memcmp(go->shape, self->shape, sizeof(int64_t) * (size_t)(nd - 2)) != 0)
        return tj_error(TJ_ERR_SHAPE, "%s: grad_output of size %s does not match self of size %s (the leading "
                        "dims must be equal)", op, tj_shape_str(nd, go->shape, a, sizeof a),
                        tj_shape_str(self->ndim, self->shape, b, sizeof b));
    return TJ_OK;
}

tj_status tj_meta__adaptive_avg_pool2d_backward(const tj_value *args, tj_meta *outs)
{
    adaptive_params p;
    tj_status st = backward_params(args, &p);
    if (st != TJ_OK) return st;
    tj_meta_like(&outs[0], args[1].u.t);
    return TJ_OK;
}

tj_status tj_kernel__adaptive_avg_pool2d_backward(const tj_value *args, tj_tensor *const *outs)
{
    adaptive_params p;
    tj_status st = backward_params(args, &p);
    if (st != TJ_OK) return st;
    tj_contig go = {0};
    if ((st = tj_contig_get(&go, args[0].u.t)) != TJ_OK) return st;
    tj_k_pool2d k = adaptive_kernel_desc(&p, args[1].u.t);
    void *gi = tj_tensor_ptr(outs[0]);
    if (outs[0]->dtype == TJ_FLOAT32) tj_k_adaptive_avg_pool2d_backward_f32(&k, (const void *)go.data, gi);
    else tj_k_adaptive_avg_pool2d_backward_f64(&k, (const void *)go.data, gi);
    tj_contig_release(&go);
    return TJ_OK;
}

/* ---- adaptive_max_pool2d ---- */

static tj_status max_forward_params(const tj_value *args, adaptive_params *p)
{
    const char *op = "aten::adaptive_max_pool2d";
    const tj_value *size = &args[1];
    char buf[96];
    if (size->n != 2)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: adaptive_max_pool2d(): output_size must be 2, got %s", op,
                        tj_shape_str(size->n, size->u.ints, buf, sizeof buf));
    if (size->u.ints[0] < 0 || size->u.ints[1] < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: adaptive_max_pool2d(): output_size %s has a negative size", op,
                        tj_shape_str(2, size->u.ints, buf, sizeof buf));
    return adaptive_params_parse(op, "adaptive_max_pool2d", args[0].u.t, size->u.ints, true, p);
}

tj_status tj_meta_adaptive_max_pool2d(const tj_value *args, tj_meta *outs)
{
    adaptive_params p;
    tj_status st = max_forward_params(args, &p);
    if (st != TJ_OK) return st;
    tj_meta_like(&outs[0], args[0].u.t);
    outs[0].shape[outs[0].ndim - 2] = p.oh;
    outs[0].shape[outs[0].ndim - 1] = p.ow;
    outs[1] = outs[0];
    outs[1].dtype = TJ_INT64;
    return TJ_OK;
}

tj_status tj_kernel_adaptive_max_pool2d(const tj_value *args, tj_tensor *const *outs)
{
    adaptive_params p;
    tj_status st = max_forward_params(args, &p);
    if (st != TJ_OK) return st;
    const tj_tensor *self = args[0].u.t;
    tj_k_pool2d k = adaptive_kernel_desc(&p, self);
    const void *src = tj_tensor_ptr(self);
    void *dst = tj_tensor_ptr(outs[0]);
    int64_t *idx = (int64_t *)(void *)tj_tensor_ptr(outs[1]);
    switch (self->dtype) {
    case TJ_FLOAT32: tj_k_adaptive_max_pool2d_f32(&k, src, dst, idx); return TJ_OK;
    case TJ_FLOAT64: tj_k_adaptive_max_pool2d_f64(&k, src, dst, idx); return TJ_OK;
    default:
        return tj_error(TJ_ERR_DTYPE, "aten::adaptive_max_pool2d: \"adaptive_max_pool2d\" not implemented for %s",
                        tj_dtype_name(self->dtype));
    }
}

/* ---- adaptive_max_pool2d_backward ---- */

/* grad_output: ATen's checks (rank 3 or 4, every dim but the first
 * non-empty, self's dtype); beyond them self's checks as the forward's with
 * grad_output's plane as the output size, self's rank and leading sizes,
 * and int64 indices of grad_output's shape (ATen reads past smaller ones). */
static tj_status max_backward_params(const tj_value *args, adaptive_params *p)
{
    const char *op = "aten::adaptive_max_pool2d_backward";
    const tj_tensor *go = args[0].u.t, *self = args[1].u.t, *idx = args[2].u.t;
    char a[96], b[96];
    int nd = go->ndim;
    if (nd != 3 && nd != 4)
        return tj_error(TJ_ERR_SHAPE, "%s: adaptive_max_pooling2d_backward(): Expected 3D or 4D grad_output, but "
                        "got: %s", op, tj_shape_str(nd, go->shape, a, sizeof a));
    for (int d = 1; d < nd; d++)
        if (go->shape[d] == 0)
            return tj_error(TJ_ERR_SHAPE,
                            "%s: adaptive_max_pool2d_backward(): Expected grad_output to have non-zero size for "
                            "non-batch dimensions, but grad_output has sizes %s with dimension %d being empty",
                            op, tj_shape_str(nd, go->shape, a, sizeof a), d);
    if (go->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: expected dtype %s for `grad_output` but got dtype %s", op,
                        tj_dtype_name(self->dtype), tj_dtype_name(go->dtype));
    tj_status st = adaptive_params_parse(op, "adaptive_max_pool2d", self, go->shape + nd - 2, true, p);
    if (st != TJ_OK) return st;
    if (self->ndim != nd || memcmp(go->shape, self->shape, sizeof(int64_t) * (size_t)(nd - 2)) != 0)
        return tj_error(TJ_ERR_SHAPE, "%s: grad_output of size %s does not match self of size %s (the leading "
                        "dims must be equal)", op, tj_shape_str(nd, go->shape, a, sizeof a),
                        tj_shape_str(self->ndim, self->shape, b, sizeof b));
    if (idx->dtype != TJ_INT64)
        return tj_error(TJ_ERR_DTYPE, "%s: indices must be int64, got %s", op, tj_dtype_name(idx->dtype));
    if (idx->ndim != nd || memcmp(idx->shape, go->shape, sizeof(int64_t) * (size_t)nd) != 0)
        return tj_error(TJ_ERR_SHAPE, "%s: indices of size %s do not match grad_output of size %s", op,
                        tj_shape_str(idx->ndim, idx->shape, a, sizeof a), tj_shape_str(nd, go->shape, b, sizeof b));
    return TJ_OK;
}

tj_status tj_meta_adaptive_max_pool2d_backward(const tj_value *args, tj_meta *outs)
{
    adaptive_params p;
    tj_status st = max_backward_params(args, &p);
    if (st == TJ_OK) tj_meta_like(&outs[0], args[1].u.t);
    return st;
}

tj_status tj_kernel_adaptive_max_pool2d_backward(const tj_value *args, tj_tensor *const *outs)
{
    adaptive_params p;
    tj_status st = max_backward_params(args, &p);
    if (st != TJ_OK) return st;
    if (outs[0]->dtype != TJ_FLOAT32 && outs[0]->dtype != TJ_FLOAT64)
        return tj_error(TJ_ERR_DTYPE, "aten::adaptive_max_pool2d_backward: not implemented for %s",
                        tj_dtype_name(outs[0]->dtype));
    tj_contig go = {0}, idx = {0};
    if ((st = tj_contig_get(&go, args[0].u.t)) == TJ_OK && (st = tj_contig_get(&idx, args[2].u.t)) == TJ_OK) {
        tj_k_pool2d k = adaptive_kernel_desc(&p, args[1].u.t);
        const int64_t *ix = (const int64_t *)(const void *)idx.data;
        void *gi = tj_tensor_ptr(outs[0]);
        int64_t bad = 0;
        bool ok = outs[0]->dtype == TJ_FLOAT32
                      ? tj_k_max_pool2d_backward_f32(&k, (const float *)(const void *)go.data, ix, gi, &bad)
                      : tj_k_max_pool2d_backward_f64(&k, (const double *)(const void *)go.data, ix, gi, &bad);
        if (!ok)
            st = tj_error(TJ_ERR_INDEX, "%s: index %lld is out of range for input planes of %lld x %lld elements",
                          "aten::adaptive_max_pool2d_backward", (long long)bad, (long long)p.h, (long long)p.w);
    }
    tj_contig_release(&go);
    tj_contig_release(&idx);
    return st;
}

/* ---- _adaptive_avg_pool3d, _adaptive_avg_pool3d_backward ---- */

/* self: ATen's checks (rank 4 or 5, every dim but the first non-empty, a
 * float dtype) against out[3] (>= 0); k: planes (N * C, or C unbatched),
 * the volume and the output. */
static tj_status adaptive3d_parse(const char *op, const tj_tensor *self, const int64_t *out, tj_k_pool3d *k)
{
    char buf[96];
    int nd = self->ndim;
    if (nd != 4 && nd != 5)
        return tj_error(TJ_ERR_SHAPE, "%s: adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got %s", op,
                        tj_shape_str(nd, self->shape, buf, sizeof buf));
    for (int d = 1; d < nd; d++)
        if (self->shape[d] == 0)
            return tj_error(TJ_ERR_SHAPE,
                            "%s: adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch "
                            "dimensions, but input has sizes %s with dimension %d being empty",
                            op, tj_shape_str(nd, self->shape, buf, sizeof buf), d);
    if (!tj_dtype_is_float(self->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: \"adaptive_avg_pool3d_cpu\" not implemented for %s", op,
                        tj_dtype_name(self->dtype));
    *k = (tj_k_pool3d){.planes = nd == 5 ? self->shape[0] * self->shape[1] : self->shape[0]};
    int64_t larger = k->planes;
    for (int d = 0; d < 3; d++) {
        int64_t in = self->shape[nd - 3 + d], span;
        k->size[d] = in, k->out[d] = out[d];
        /* the window bounds multiply the input size by an output index + 1 */
        if (__builtin_mul_overflow(in, out[d], &span) || __builtin_add_overflow(span, in, &span))
            return tj_error(TJ_ERR_OVERFLOW, "%s: output_size [%lld, %lld, %lld] is too large for input %s", op,
                            (long long)out[0], (long long)out[1], (long long)out[2],
                            tj_shape_str(nd, self->shape, buf, sizeof buf));
        larger *= in > out[d] ? in : out[d];
    }
    k->threads = tj_threads_for(larger);
    return TJ_OK;
}

static tj_status avg3d_forward_params(const tj_value *args, tj_k_pool3d *k)
{
    const char *op = "aten::_adaptive_avg_pool3d";
    const tj_value *size = &args[1];
    char buf[96];
    if (size->n != 3)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: adaptive_avg_pool3d: output_size must be 3, got %s", op,
                        tj_shape_str(size->n, size->u.ints, buf, sizeof buf));
    const int64_t *o = size->u.ints;
    if (o[0] < 0 || o[1] < 0 || o[2] < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "%s: adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 but "
                        "received {%lld, %lld, %lld}", op, (long long)o[0], (long long)o[1], (long long)o[2]);
    return adaptive3d_parse(op, args[0].u.t, o, k);
}

tj_status tj_meta__adaptive_avg_pool3d(const tj_value *args, tj_meta *outs)
{
    tj_k_pool3d k;
    tj_status st = avg3d_forward_params(args, &k);
    if (st != TJ_OK) return st;
    tj_meta_like(&outs[0], args[0].u.t);
    memcpy(outs[0].shape + outs[0].ndim - 3, k.out, sizeof k.out);
    return TJ_OK;
}

tj_status tj_kernel__adaptive_avg_pool3d(const tj_value *args, tj_tensor *const *outs)
{
    tj_k_pool3d k;
    tj_status st = avg3d_forward_params(args, &k);
    if (st != TJ_OK) return st;
    tj_contig in = {0};
    if ((st = tj_contig_get(&in, args[0].u.t)) != TJ_OK) return st;
    void *dst = tj_tensor_ptr(outs[0]);
    switch (outs[0]->dtype) {
    case TJ_FLOAT32: tj_k_adaptive_avg_pool3d_f32(&k, (const float *)(const void *)in.data, dst); break;
    case TJ_FLOAT64: tj_k_adaptive_avg_pool3d_f64(&k, (const double *)(const void *)in.data, dst); break;
    default:
        st = tj_error(TJ_ERR_DTYPE, "aten::_adaptive_avg_pool3d: not implemented for %s",
                      tj_dtype_name(outs[0]->dtype));
    }
    tj_contig_release(&in);
    return st;
}

/* grad_output: ATen's checks (rank 4 or 5, every dim but the first
 * non-empty, self's dtype); self: the forward's, with grad_output's volume
 * as the output size, and (beyond ATen) self's rank and leading sizes. */
static tj_status avg3d_backward_params(const tj_value *args, tj_k_pool3d *k)
{
    const char *op = "aten::_adaptive_avg_pool3d_backward";
    const tj_tensor *go = args[0].u.t, *self = args[1].u.t;
    char a[96], b[96];
    int nd = go->ndim;
    if (nd != 4 && nd != 5)
        return tj_error(TJ_ERR_SHAPE, "%s: adaptive_avg_pool3d_backward(): Expected 4D or 5D grad_output, but got %s",
                        op, tj_shape_str(nd, go->shape, a, sizeof a));
    for (int d = 1; d < nd; d++)
        if (go->shape[d] == 0)
            return tj_error(TJ_ERR_SHAPE,
                            "%s: adaptive_avg_pool3d_backward(): Expected grad_output to have non-zero size for "
                            "non-batch dimensions, but grad_output has sizes %s with dimension %d being empty",
                            op, tj_shape_str(nd, go->shape, a, sizeof a), d);
    if (go->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: expected dtype %s for `grad_output` but got dtype %s", op,
                        tj_dtype_name(self->dtype), tj_dtype_name(go->dtype));
    tj_status st = adaptive3d_parse(op, self, go->shape + nd - 3, k);
    if (st != TJ_OK) return st;
    if (self->ndim != nd || memcmp(go->shape, self->shape, sizeof(int64_t) * (size_t)(nd - 3)) != 0)
        return tj_error(TJ_ERR_SHAPE, "%s: grad_output of size %s does not match self of size %s (the leading "
                        "dims must be equal)", op, tj_shape_str(nd, go->shape, a, sizeof a),
                        tj_shape_str(self->ndim, self->shape, b, sizeof b));
    return TJ_OK;
}

tj_status tj_meta__adaptive_avg_pool3d_backward(const tj_value *args, tj_meta *outs)
{
    tj_k_pool3d k;
    tj_status st = avg3d_backward_params(args, &k);
    if (st == TJ_OK) tj_meta_like(&outs[0], args[1].u.t);
    return st;
}

tj_status tj_kernel__adaptive_avg_pool3d_backward(const tj_value *args, tj_tensor *const *outs)
{
    tj_k_pool3d k;
    tj_status st = avg3d_backward_params(args, &k);
    if (st != TJ_OK) return st;
    tj_contig go = {0};
    if ((st = tj_contig_get(&go, args[0].u.t)) != TJ_OK) return st;
    void *gi = tj_tensor_ptr(outs[0]);
    switch (outs[0]->dtype) {
    case TJ_FLOAT32: tj_k_adaptive_avg_pool3d_backward_f32(&k, (const float *)(const void *)go.data, gi); break;
    case TJ_FLOAT64: tj_k_adaptive_avg_pool3d_backward_f64(&k, (const double *)(const void *)go.data, gi); break;
    default:
        st = tj_error(TJ_ERR_DTYPE, "aten::_adaptive_avg_pool3d_backward: not implemented for %s",
                      tj_dtype_name(outs[0]->dtype));
    }
    tj_contig_release(&go);
    return st;
}
