/* aten::upsample_nearest2d.vec, aten::upsample_bilinear2d.vec,
 * aten::upsample_bicubic2d.vec and their backward operators: output sizes, argument checks and messages as
 * PyTorch 1.13 (UpSample.cpp: compute_output_size, UpSample.h:
 * upsample_2d_common_check), glue to kernels/upsample.h. The six are
 * primitives: see README.md, "Primitive operators". */
#include <math.h>
#include <string.h>

#include "contig.h"
#include "iter.h"
#include "kernels/upsample.h"
#include "op_backward.h"
#include "op_nn.h"

typedef enum upsample_mode { NEAREST, BILINEAR, BICUBIC } upsample_mode;

/* Per mode: the forward's and the backward's names, ATen's name of the
 * tables' function (in its dtype message). */
static const char *const forward_name[] = {"aten::upsample_nearest2d.vec", "aten::upsample_bilinear2d.vec",
                                           "aten::upsample_bicubic2d.vec"};
static const char *const backward_name[] = {"aten::upsample_nearest2d_backward.vec",
                                            "aten::upsample_bilinear2d_backward.vec",
                                            "aten::upsample_bicubic2d_backward.vec"};
static const char *const tables_name[] = {"compute_indices_weights_nearest", "compute_indices_weights_linear",
                                          "compute_indices_weights_cubic"};

typedef struct upsample_params {
    const char *op;                /* "aten::upsample_nearest2d.vec", for messages */
    int64_t n, c, h, w, oh, ow;
    double scale_h, scale_w;       /* the given scale factors, 0 when none */
    upsample_mode mode;
    bool align_corners;
} upsample_params;

/* ATen's compute_output_size and upsample_2d_common_check over the input's
 * sizes (the input's shape, or the backward's input_size): exactly one of
 * output_size and scale_factors, with one entry per spatial dim (the rank
 * minus 2), the rank 4, every size of the plane and of the output > 0. */
static tj_status output_size(upsample_params *p, int nd, const int64_t *in, const tj_value *size,
                             const tj_value *scales)
{
    char a[96], b[96];
    bool has_size = size->kind != TJ_V_NONE, has_scales = scales->kind != TJ_V_NONE;
    if (has_size == has_scales)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: Must specify exactly one of output_size and scale_factors "
                        "(got %s)", p->op, has_size ? "both" : "neither");
    int given = has_size ? size->n : scales->n;
    if (given != nd - 2) {
        if (has_size) tj_shape_str(size->n, size->u.ints, b, sizeof b);
        else tj_value_describe(scales, b, sizeof b);
        return tj_error(TJ_ERR_SHAPE, "%s: Expected %s->size() == spatial_dimensions: %s %s has %d elements for "
                        "input %s with %d spatial dimensions", p->op, has_size ? "output_size" : "scale_factors",
                        has_size ? "output_size" : "scale_factors", b, given, tj_shape_str(nd, in, a, sizeof a),
                        nd - 2);
    }
    if (nd != 4)
        return tj_error(TJ_ERR_SHAPE, "%s: It is expected input_size equals to 4, but got size %d (input %s)", p->op,
                        nd, tj_shape_str(nd, in, a, sizeof a));
    int64_t out[2];
    for (int d = 0; d < 2; d++) {
        if (has_size) {
            out[d] = size->u.ints[d];
            continue;
        }
        double f = (double)in[d + 2] * scales->u.floats[d];
        if (!(f > -0x1p62 && f < 0x1p62)) /* nan, or no int64 */
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: scale_factors [%g, %g] give no output size for input %s",
                            p->op, scales->u.floats[0], scales->u.floats[1], tj_shape_str(nd, in, a, sizeof a));
        out[d] = (int64_t)f; /* truncated, as ATen's cast */
    }
    *p = (upsample_params){.op = p->op, .mode = p->mode, .align_corners = p->align_corners,
                           .n = in[0], .c = in[1], .h = in[2], .w = in[3], .oh = out[0], .ow = out[1],
                           .scale_h = has_scales ? scales->u.floats[0] : 0,
                           .scale_w = has_scales ? scales->u.floats[1] : 0};
    if (p->h <= 0 || p->w <= 0 || p->oh <= 0 || p->ow <= 0)
        return tj_error(TJ_ERR_SHAPE, "%s: Input and output sizes should be greater than 0, but got input (H: %lld, "
                        "W: %lld) output (H: %lld, W: %lld)", p->op, (long long)p->h, (long long)p->w,
                        (long long)p->oh, (long long)p->ow);
    int64_t numel;
    if (__builtin_mul_overflow(p->n, p->c, &numel) || __builtin_mul_overflow(numel, p->oh, &numel) ||
        __builtin_mul_overflow(numel, p->ow, &numel))
        return tj_error(TJ_ERR_OVERFLOW, "%s: output [%lld, %lld, %lld, %lld] has more than 2^63 elements", p->op,
                        (long long)p->n, (long long)p->c, (long long)p->oh, (long long)p->ow);
    return TJ_OK;
}

static tj_status check_dtype(const upsample_params *p, tj_dtype dtype)
{
    if (tj_dtype_is_float(dtype)) return TJ_OK;
    return tj_error(TJ_ERR_DTYPE, "%s: \"%s\" not implemented for %s", p->op, tables_name[p->mode],
                    tj_dtype_name(dtype));
}

/* Forward arguments: (input, output_size?, [align_corners,] scale_factors?). */
static tj_status forward_params(const tj_value *args, upsample_mode mode, upsample_params *p)
{
    const tj_tensor *in = args[0].u.t;
    bool corners = mode != NEAREST; /* the modes with an align_corners argument */
    *p = (upsample_params){.op = forward_name[mode], .mode = mode, .align_corners = corners && args[2].u.b};
    tj_status st = output_size(p, in->ndim, in->shape, &args[1], &args[corners ? 3 : 2]);
    if (st != TJ_OK) return st;
    if (p->c == 0) { /* ATen: input.numel() != 0 || C * H * W != 0 */
        char a[96];
        return tj_error(TJ_ERR_SHAPE, "%s: Non-empty 4D data tensor expected but got a tensor with sizes %s", p->op,
                        tj_shape_str(in->ndim, in->shape, a, sizeof a));
    }
    return check_dtype(p, in->dtype);
}

/* Backward arguments: (grad_output, output_size?, input_size, [align_corners,]
 * scale_factors?); grad_output must have the output's shape. */
static tj_status backward_params(const tj_value *args, upsample_mode mode, upsample_params *p)
{
    const tj_tensor *go = args[0].u.t;
    const tj_value *in = &args[2];
    bool corners = mode != NEAREST;
    *p = (upsample_params){.op = backward_name[mode], .mode = mode, .align_corners = corners && args[3].u.b};
    char a[96], b[96];
    /* ATen reports another length as output_size's or scale_factors' (their
     * length against input_size's minus 2): name input_size instead */
    if (in->n != 4)
        return tj_error(TJ_ERR_SHAPE, "%s: input_size %s has %d elements, expected 4 (the input's [N, C, H, W]) "
                        "for grad_output %s", p->op, tj_shape_str(in->n, in->u.ints, a, sizeof a), in->n,
                        tj_shape_str(go->ndim, go->shape, b, sizeof b));
    tj_status st = output_size(p, in->n, in->u.ints, &args[1], &args[corners ? 4 : 3]);
    if (st != TJ_OK) return st;
    if (p->n < 0 || p->c < 0)
        return tj_error(TJ_ERR_SHAPE, "%s: input_size %s has a negative size", p->op,
                        tj_shape_str(in->n, in->u.ints, a, sizeof a));
    if (go->ndim != 4)
        return tj_error(TJ_ERR_SHAPE, "%s: Expected grad_output to be a tensor of dimension 4 but got: dimension %d "
                        "(grad_output %s)", p->op, go->ndim, tj_shape_str(go->ndim, go->shape, a, sizeof a));
    const int64_t want[4] = {p->n, p->c, p->oh, p->ow};
    for (int d = 0; d < 4; d++)
        if (go->shape[d] != want[d])
            return tj_error(TJ_ERR_SHAPE, "%s: Expected grad_output to have the same shape as output; output.size(%d) "
                            "= %lld but got grad_output.size(%d) = %lld (grad_output %s, input_size %s)", p->op, d,
                            (long long)want[d], d, (long long)go->shape[d],
                            tj_shape_str(go->ndim, go->shape, a, sizeof a),
                            tj_shape_str(in->n, in->u.ints, b, sizeof b));
    return check_dtype(p, go->dtype);
}

static void set_meta(const upsample_params *p, bool backward, tj_dtype dtype, tj_meta *out)
{
    out->dtype = dtype;
    out->ndim = 4;
    const int64_t shape[4] = {p->n, p->c, backward ? p->h : p->oh, backward ? p->w : p->ow};
    memcpy(out->shape, shape, sizeof shape);
}

/* ATen's is_contiguous(ChannelsLast) of an [N, C, H, W] input: the strides
 * of C, W, H, N, skipping dims of size 1, are those of a packed NHWC
 * tensor (so a contiguous input with C = 1 is one too). */
static bool channels_last_contiguous(const upsample_params *p, const int64_t *strides)
{
    static const int order[4] = {1, 3, 2, 0};
    const int64_t sizes[4] = {p->n, p->c, p->h, p->w};
    int64_t expected = 1;
    for (int k = 0; k < 4; k++) {
        int d = order[k];
        if (sizes[d] == 1) continue;
        if (strides[d] != expected) return false;
        expected *= sizes[d];
    }
    return true;
}

/* The bicubic tables (4 taps per output row and column) and the kernel,
 * from s into dst as run's. */
static tj_status run_bicubic(const upsample_params *p, const tj_k_upsample2d *k, bool backward, const void *s,
                             tj_tensor *dst)
{
    bool f32 = dst->dtype == TJ_FLOAT32;
    size_t wsize = f32 ? sizeof(float) : sizeof(double);
    int64_t taps = 4 * (p->oh + p->ow);
    /* the forward's per-thread column sums of every input row */
    size_t scratch = backward ? 0 : (size_t)(k->threads > 1 ? k->threads : 1) * (size_t)(p->h * p->ow);
    size_t bytes = (sizeof(int64_t) + wsize) * (size_t)taps + wsize * scratch;
    char *mem = tj_alloc(bytes);
    if (!mem) return tj_oom(p->op, bytes);
    int64_t *iy = (int64_t *)mem, *ix = iy + 4 * p->oh;
    void *wy = ix + 4 * p->ow, *wx = (char *)wy + wsize * 4 * (size_t)p->oh, *h = (char *)wx + wsize * 4 * (size_t)p->ow;
    void *d = tj_tensor_ptr(dst);
    if (f32) {
        tj_k_cubic_indices_f32(p->h, p->oh, p->scale_h, p->align_corners, iy, wy);
        tj_k_cubic_indices_f32(p->w, p->ow, p->scale_w, p->align_corners, ix, wx);
        tj_k_cubic_tables_f32 t = {iy, ix, wy, wx};
        if (backward) tj_k_upsample_bicubic2d_backward_f32(k, &t, s, d);
        else tj_k_upsample_bicubic2d_f32(k, &t, s, d, h);
    } else {
        tj_k_cubic_indices_f64(p->h, p->oh, p->scale_h, p->align_corners, iy, wy);
        tj_k_cubic_indices_f64(p->w, p->ow, p->scale_w, p->align_corners, ix, wx);
        tj_k_cubic_tables_f64 t = {iy, ix, wy, wx};
        if (backward) tj_k_upsample_bicubic2d_backward_f64(k, &t, s, d);
        else tj_k_upsample_bicubic2d_f64(k, &t, s, d, h);
    }
    tj_free(mem, bytes);
    return TJ_OK;
}

/* Builds the index (and weight) tables and runs the kernel from s into
 * dst: s is the input, of the given strides, or (backward) the contiguous
 * grad_output, strides NULL. */
static tj_status run(const upsample_params *p, bool backward, const void *s, const int64_t *strides,
                     tj_tensor *dst)
{
    tj_dtype dt = dst->dtype;
    tj_k_upsample2d k = {.batch = p->n, .channels = p->c, .height = p->h, .width = p->w, .out_h = p->oh,
                         .out_w = p->ow, .scale_h = p->scale_h, .scale_w = p->scale_w,
                         .align_corners = p->align_corners};
    if (strides) k.ns = strides[0], k.cs = strides[1], k.ys = strides[2], k.xs = strides[3];
    k.threads = tj_threads_for(p->n * p->c * p->oh * p->ow);
    if (p->n * p->c == 0) return TJ_OK;
    if (dt != TJ_FLOAT32 && dt != TJ_FLOAT64)
        return tj_error(TJ_ERR_DTYPE, "%s: \"%s\" not implemented for %s", p->op, tables_name[p->mode],
                        tj_dtype_name(dt));
    if (p->mode == BICUBIC) return run_bicubic(p, &k, backward, s, dst);
    bool bilinear = p->mode == BILINEAR;
    size_t wbytes = bilinear ? 2 * tj_dtype_bytes(dt) : 0; /* l0, l1 per entry */
    size_t entry = sizeof(int64_t) * (bilinear ? 2 : 1) + wbytes;
    size_t bytes = entry * (size_t)(p->oh + p->ow);
    char *mem = tj_alloc(bytes);
    if (!mem) return tj_oom(p->op, bytes);
    int64_t *y0 = (int64_t *)mem, *x0 = y0 + p->oh, *y1 = x0 + p->ow, *x1 = y1 + p->oh;
    void *d = tj_tensor_ptr(dst);
    if (!bilinear && (backward || channels_last_contiguous(p, strides))) {
        /* ATen's backward and channels-last forward: nearest_idx */
        tj_k_nearest_indices(p->h, p->oh, p->scale_h, y0);
        tj_k_nearest_indices(p->w, p->ow, p->scale_w, x0);
    } else if (!bilinear) { /* ATen's generic forward */
        tj_k_nearest_indices_nchw(p->h, p->oh, p->scale_h, dt == TJ_FLOAT64, y0);
        tj_k_nearest_indices_nchw(p->w, p->ow, p->scale_w, dt == TJ_FLOAT64, x0);
    }
    if (!bilinear && dt == TJ_FLOAT32) {
        if (backward) tj_k_upsample_nearest2d_backward_f32(&k, y0, x0, s, d);
        else tj_k_upsample_nearest2d_f32(&k, y0, x0, s, d);
    } else if (!bilinear) {
        if (backward) tj_k_upsample_nearest2d_backward_f64(&k, y0, x0, s, d);
        else tj_k_upsample_nearest2d_f64(&k, y0, x0, s, d);
    } else if (dt == TJ_FLOAT32) {
        float *l = (float *)(x1 + p->ow);
        tj_k_linear_tables_f32 t = {y0, y1, x0, x1, l, l + p->oh, l + 2 * p->oh, l + 2 * p->oh + p->ow};
        tj_k_linear_indices_f32(p->h, p->oh, p->scale_h, p->align_corners, y0, y1, l, l + p->oh);
        tj_k_linear_indices_f32(p->w, p->ow, p->scale_w, p->align_corners, x0, x1, (float *)t.lx0, (float *)t.lx1);
        if (backward) tj_k_upsample_bilinear2d_backward_f32(&k, &t, s, d);
        else tj_k_upsample_bilinear2d_f32(&k, &t, s, d);
    } else {
        double *l = (double *)(x1 + p->ow);
        tj_k_linear_tables_f64 t = {y0, y1, x0, x1, l, l + p->oh, l + 2 * p->oh, l + 2 * p->oh + p->ow};
        tj_k_linear_indices_f64(p->h, p->oh, p->scale_h, p->align_corners, y0, y1, l, l + p->oh);
        tj_k_linear_indices_f64(p->w, p->ow, p->scale_w, p->align_corners, x0, x1, (double *)t.lx0, (double *)t.lx1);
        if (backward) tj_k_upsample_bilinear2d_backward_f64(&k, &t, s, d);
        else tj_k_upsample_bilinear2d_f64(&k, &t, s, d);
    }
    tj_free(mem, bytes);
    return TJ_OK;
}

static tj_status meta_forward(upsample_mode mode, const tj_value *args, tj_meta *outs)
{
    upsample_params p;
    tj_status st = forward_params(args, mode, &p);
    if (st == TJ_OK) set_meta(&p, false, args[0].u.t->dtype, &outs[0]);
    return st;
}

static tj_status kernel_forward(upsample_mode mode, const tj_value *args, tj_tensor *const *outs)
{
    upsample_params p;
    tj_status st = forward_params(args, mode, &p);
    return st == TJ_OK ? run(&p, false, tj_tensor_ptr(args[0].u.t), args[0].u.t->strides, outs[0]) : st;
}

static tj_status meta_backward(upsample_mode mode, const tj_value *args, tj_meta *outs)
{
    upsample_params p;
    tj_status st = backward_params(args, mode, &p);
    if (st == TJ_OK) set_meta(&p, true, args[0].u.t->dtype, &outs[0]);
    return st;
}

static tj_status kernel_backward(upsample_mode mode, const tj_value *args, tj_tensor *const *outs)
{
    upsample_params p;
    tj_status st = backward_params(args, mode, &p);
    if (st != TJ_OK) return st;
    tj_contig go = {0};
    if ((st = tj_contig_get(&go, args[0].u.t)) != TJ_OK) return st;
    st = run(&p, true, go.data, NULL, outs[0]);
    tj_contig_release(&go);
    return st;
}

#define UPSAMPLE_OPS(NAME, MODE)                                                                          \
    tj_status tj_meta_upsample_##NAME##_vec(const tj_value *args, tj_meta *outs)                          \
    {                                                                                                     \
        return meta_forward(MODE, args, outs);                                                            \
    }                                                                                                     \
    tj_status tj_kernel_upsample_##NAME##_vec(const tj_value *args, tj_tensor *const *outs)               \
    {                                                                                                     \
        return kernel_forward(MODE, args, outs);                                                          \
    }                                                                                                     \
    tj_status tj_meta_upsample_##NAME##_backward_vec(const tj_value *args, tj_meta *outs)                 \
    {                                                                                                     \
        return meta_backward(MODE, args, outs);                                                           \
    }                                                                                                     \
    tj_status tj_kernel_upsample_##NAME##_backward_vec(const tj_value *args, tj_tensor *const *outs)      \
    {                                                                                                     \
        return kernel_backward(MODE, args, outs);                                                         \
    }

UPSAMPLE_OPS(nearest2d, NEAREST)
UPSAMPLE_OPS(bilinear2d, BILINEAR)
UPSAMPLE_OPS(bicubic2d, BICUBIC)
