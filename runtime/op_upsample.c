/* aten::upsample_nearest1d.vec, upsample_linear1d.vec, upsample_nearest2d.vec,
 * upsample_bilinear2d.vec, upsample_bicubic2d.vec, upsample_nearest3d.vec,
 * upsample_trilinear3d.vec and their backward operators: output sizes,
 * argument checks and messages as PyTorch 1.13 (UpSample.cpp:
 * compute_output_size, UpSample.h: upsample_1d/2d/3d_common_check), glue to
 * kernels/upsample.h. The fourteen are primitives: see README.md,
 * "Primitive operators". */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "contig.h"
#include "iter.h"
#include "kernels/upsample.h"
#include "op_backward.h"
#include "op_nn.h"

typedef enum upsample_mode { NEAREST, LINEAR, CUBIC } upsample_mode;

/* One operator pair: its names, mode and count of resampled dims. */
typedef struct upsample_kind {
    const char *forward, *backward; /* "aten::upsample_nearest2d.vec", for messages */
    upsample_mode mode;
    int spatial;
} upsample_kind;

enum { NEAREST1D, LINEAR1D, NEAREST2D, BILINEAR2D, BICUBIC2D, NEAREST3D, TRILINEAR3D };
static const upsample_kind kinds[] = {
    [NEAREST1D] = {"aten::upsample_nearest1d.vec", "aten::upsample_nearest1d_backward.vec", NEAREST, 1},
    [LINEAR1D] = {"aten::upsample_linear1d.vec", "aten::upsample_linear1d_backward.vec", LINEAR, 1},
    [NEAREST2D] = {"aten::upsample_nearest2d.vec", "aten::upsample_nearest2d_backward.vec", NEAREST, 2},
    [BILINEAR2D] = {"aten::upsample_bilinear2d.vec", "aten::upsample_bilinear2d_backward.vec", LINEAR, 2},
    [BICUBIC2D] = {"aten::upsample_bicubic2d.vec", "aten::upsample_bicubic2d_backward.vec", CUBIC, 2},
    [NEAREST3D] = {"aten::upsample_nearest3d.vec", "aten::upsample_nearest3d_backward.vec", NEAREST, 3},
    [TRILINEAR3D] = {"aten::upsample_trilinear3d.vec", "aten::upsample_trilinear3d_backward.vec", LINEAR, 3},
};

/* ATen's name of the tables' function, in its dtype message. */
static const char *const tables_name[] = {"compute_indices_weights_nearest", "compute_indices_weights_linear",
                                          "compute_indices_weights_cubic"};

/* Sizes as 3 spatial dims: a 2-d operator's depth is 1, a 1-d one's depth
 * and height too. */
typedef struct upsample_params {
    const upsample_kind *kind;
    const char *op; /* the forward's or the backward's name */
    int64_t n, c, in[3], out[3];
    double scale[3]; /* the given scale factors, 0 when none */
    bool align_corners;
} upsample_params;

/* "D: 3, H: 4, W: 5" for the last `spatial` of the three sizes. */
static const char *dims_str(int spatial, const int64_t *v, char *buf, size_t cap)
{
    static const char *const names[3] = {"D", "H", "W"};
    size_t used = 0;
    buf[0] = 0;
    for (int d = 3 - spatial; d < 3 && used < cap; d++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s: %lld", d > 3 - spatial ? ", " : "", names[d],
                                 (long long)v[d]);
    return buf;
}

/* ATen's compute_output_size and upsample_Nd_common_check over the input's
 * sizes (the input's shape, or the backward's input_size, nd entries):
 * exactly one of output_size and scale_factors, with one entry per spatial
 * dim (the rank minus 2), the rank the operator's, every size of the
 * spatial dims and of the output > 0. */
static tj_status output_size(upsample_params *p, int nd, const int64_t *in, const tj_value *size,
                             const tj_value *scales)
{
    char a[96], b[96];
    int sp = p->kind->spatial;
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
    if (nd != sp + 2)
        return tj_error(TJ_ERR_SHAPE, "%s: It is expected input_size equals to %d, but got size %d (input %s)",
                        p->op, sp + 2, nd, tj_shape_str(nd, in, a, sizeof a));
    p->n = in[0], p->c = in[1];
    for (int d = 0; d < 3; d++) {
        int k = d - (3 - sp); /* the entry of output_size / scale_factors */
        p->in[d] = k < 0 ? 1 : in[2 + k];
        p->scale[d] = k >= 0 && has_scales ? scales->u.floats[k] : 0;
        if (k < 0) p->out[d] = 1;
        else if (has_size) p->out[d] = size->u.ints[k];
        else {
            double f = (double)p->in[d] * scales->u.floats[k];
            if (!(f > -0x1p62 && f < 0x1p62)) { /* nan, or no int64 */
                tj_value_describe(scales, b, sizeof b);
                return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: scale_factors %s give no output size for input %s",
                                p->op, b, tj_shape_str(nd, in, a, sizeof a));
            }
            p->out[d] = (int64_t)f; /* truncated, as ATen's cast */
        }
    }
    for (int d = 0; d < 3; d++)
        if (p->in[d] <= 0 || p->out[d] <= 0)
            return tj_error(TJ_ERR_SHAPE, "%s: Input and output sizes should be greater than 0, but got input (%s) "
                            "output (%s)", p->op, dims_str(sp, p->in, a, sizeof a), dims_str(sp, p->out, b, sizeof b));
    int64_t numel;
    bool over = __builtin_mul_overflow(p->n, p->c, &numel);
    for (int d = 0; d < 3; d++) over = over || __builtin_mul_overflow(numel, p->out[d], &numel);
    if (over) {
        int64_t shape[5] = {p->n, p->c, p->out[0], p->out[1], p->out[2]};
        return tj_error(TJ_ERR_OVERFLOW, "%s: output %s has more than 2^63 elements", p->op,
                        tj_shape_str(sp + 2, shape, a, sizeof a));
    }
    return TJ_OK;
}

static tj_status check_dtype(const upsample_params *p, tj_dtype dtype)
{
    if (tj_dtype_is_float(dtype)) return TJ_OK;
    return tj_error(TJ_ERR_DTYPE, "%s: \"%s\" not implemented for %s", p->op, tables_name[p->kind->mode],
                    tj_dtype_name(dtype));
}

/* Forward arguments: (input, output_size?, [align_corners,] scale_factors?). */
static tj_status forward_params(const tj_value *args, const upsample_kind *kind, upsample_params *p)
{
    const tj_tensor *in = args[0].u.t;
    bool corners = kind->mode != NEAREST; /* the modes with an align_corners argument */
    *p = (upsample_params){.kind = kind, .op = kind->forward, .align_corners = corners && args[2].u.b};
    tj_status st = output_size(p, in->ndim, in->shape, &args[1], &args[corners ? 3 : 2]);
    if (st != TJ_OK) return st;
    if (p->c == 0) { /* ATen: input.numel() != 0 || C * spatial sizes != 0 */
        char a[96];
        return tj_error(TJ_ERR_SHAPE, "%s: Non-empty %dD data tensor expected but got a tensor with sizes %s", p->op,
                        kind->spatial + 2, tj_shape_str(in->ndim, in->shape, a, sizeof a));
    }
    return check_dtype(p, in->dtype);
}

/* Backward arguments: (grad_output, output_size?, input_size, [align_corners,]
 * scale_factors?); grad_output must have the output's shape. */
static tj_status backward_params(const tj_value *args, const upsample_kind *kind, upsample_params *p)
{
    static const char *const labels[3] = {"[N, C, W]", "[N, C, H, W]", "[N, C, D, H, W]"};
    const tj_tensor *go = args[0].u.t;
    const tj_value *in = &args[2];
    bool corners = kind->mode != NEAREST;
    int nd = kind->spatial + 2;
    *p = (upsample_params){.kind = kind, .op = kind->backward, .align_corners = corners && args[3].u.b};
    char a[96], b[96];
    /* ATen reports another length as output_size's or scale_factors' (their
     * length against input_size's minus 2): name input_size instead */
    if (in->n != nd)
        return tj_error(TJ_ERR_SHAPE, "%s: input_size %s has %d elements, expected %d (the input's %s) for "
                        "grad_output %s", p->op, tj_shape_str(in->n, in->u.ints, a, sizeof a), in->n, nd,
                        labels[kind->spatial - 1], tj_shape_str(go->ndim, go->shape, b, sizeof b));
    tj_status st = output_size(p, in->n, in->u.ints, &args[1], &args[corners ? 4 : 3]);
    if (st != TJ_OK) return st;
    if (p->n < 0 || p->c < 0)
        return tj_error(TJ_ERR_SHAPE, "%s: input_size %s has a negative size", p->op,
                        tj_shape_str(in->n, in->u.ints, a, sizeof a));
    if (go->ndim != nd)
        return tj_error(TJ_ERR_SHAPE, "%s: Expected grad_output to be a tensor of dimension %d but got: dimension %d "
                        "(grad_output %s)", p->op, nd, go->ndim, tj_shape_str(go->ndim, go->shape, a, sizeof a));
    for (int d = 0; d < nd; d++) {
        int64_t w = d == 0 ? p->n : d == 1 ? p->c : p->out[d - nd + 3]; /* the output's size of dim d */
        if (go->shape[d] != w)
            return tj_error(TJ_ERR_SHAPE, "%s: Expected grad_output to have the same shape as output; output.size(%d) "
                            "= %lld but got grad_output.size(%d) = %lld (grad_output %s, input_size %s)", p->op, d,
                            (long long)w, d, (long long)go->shape[d], tj_shape_str(go->ndim, go->shape, a, sizeof a),
                            tj_shape_str(in->n, in->u.ints, b, sizeof b));
    }
    return check_dtype(p, go->dtype);
}

static void set_meta(const upsample_params *p, bool backward, tj_dtype dtype, tj_meta *out)
{
    int sp = p->kind->spatial;
    const int64_t *sizes = backward ? p->in : p->out;
    out->dtype = dtype;
    out->ndim = sp + 2;
    out->shape[0] = p->n, out->shape[1] = p->c;
    for (int d = 0; d < sp; d++) out->shape[2 + d] = sizes[3 - sp + d];
}

/* ATen's is_contiguous(ChannelsLast) / (ChannelsLast3d) of an [N, C, H, W]
 * / [N, C, D, H, W] input (1-d has no channels-last kernel): the strides of
 * C, the spatial dims from the last, N, skipping dims of size 1, are those
 * of a packed channels-last tensor (so a contiguous input with C = 1 is one
 * too). */
static bool channels_last_contiguous(const upsample_params *p, int ndim, const int64_t *shape,
                                     const int64_t *strides)
{
    if (p->kind->spatial == 1) return false;
    int64_t expected = 1;
    for (int k = 0; k < ndim; k++) {
        int d = k == 0 ? 1 : k == ndim - 1 ? 0 : ndim - k; /* C, W, H, [D,] N */
        if (shape[d] == 1) continue;
        if (strides[d] != expected) return false;
        expected *= shape[d];
    }
    return true;
}

/* The bicubic tables (4 taps per output row and column) and the kernel,
 * from s into dst as run's. */
static tj_status run_bicubic(const upsample_params *p, const tj_k_upsample *k, bool backward, const void *s,
                             tj_tensor *dst)
{
    bool f32 = dst->dtype == TJ_FLOAT32;
    size_t wsize = f32 ? sizeof(float) : sizeof(double);
    int64_t h = p->in[1], w = p->in[2], oh = p->out[1], ow = p->out[2], taps = 4 * (oh + ow);
    /* the forward's per-thread column sums of every input row */
    size_t scratch = backward ? 0 : (size_t)(k->threads > 1 ? k->threads : 1) * (size_t)(h * ow);
    size_t bytes = (sizeof(int64_t) + wsize) * (size_t)taps + wsize * scratch;
    char *mem = tj_alloc(bytes);
    if (!mem) return tj_oom(p->op, bytes);
    int64_t *iy = (int64_t *)mem, *ix = iy + 4 * oh;
    void *wy = ix + 4 * ow, *wx = (char *)wy + wsize * 4 * (size_t)oh, *sums = (char *)wx + wsize * 4 * (size_t)ow;
    void *d = tj_tensor_ptr(dst);
    if (f32) {
        tj_k_cubic_indices_f32(h, oh, p->scale[1], p->align_corners, iy, wy);
        tj_k_cubic_indices_f32(w, ow, p->scale[2], p->align_corners, ix, wx);
        tj_k_cubic_tables_f32 t = {iy, ix, wy, wx};
        if (backward) tj_k_upsample_bicubic2d_backward_f32(k, &t, s, d);
        else tj_k_upsample_bicubic2d_f32(k, &t, s, d, sums);
    } else {
        tj_k_cubic_indices_f64(h, oh, p->scale[1], p->align_corners, iy, wy);
        tj_k_cubic_indices_f64(w, ow, p->scale[2], p->align_corners, ix, wx);
        tj_k_cubic_tables_f64 t = {iy, ix, wy, wx};
        if (backward) tj_k_upsample_bicubic2d_backward_f64(k, &t, s, d);
        else tj_k_upsample_bicubic2d_f64(k, &t, s, d, sums);
    }
    tj_free(mem, bytes);
    return TJ_OK;
}

/* Nearest tables: ATen's nearest_idx for the backward and the
 * channels-last forward, its generic kernel's indices otherwise. */
static void nearest_tables(const upsample_params *p, bool nearest_idx, bool f64, int64_t *const idx[3])
{
    for (int d = 0; d < 3; d++) {
        if (nearest_idx) tj_k_nearest_indices(p->in[d], p->out[d], p->scale[d], idx[d]);
        else tj_k_nearest_indices_nchw(p->in[d], p->out[d], p->scale[d], f64, idx[d]);
    }
}

#define LINEAR_RUN(T, SUF)                                                                                        \
    static void linear_run_##SUF(const upsample_params *p, const tj_k_upsample *k, bool backward, int64_t *idx,   \
                                 T *l, T *scratch, const void *s, void *d)                                       \
    {                                                                                                             \
        int64_t *i0[3], *i1[3];                                                                                   \
        T *l0[3], *l1[3];                                                                                         \
        for (int a = 0; a < 3; a++) {                                                                             \
            i0[a] = idx, i1[a] = idx + p->out[a], l0[a] = l, l1[a] = l + p->out[a];                               \
            tj_k_linear_indices_##SUF(p->in[a], p->out[a], p->scale[a], p->align_corners, i0[a], i1[a], l0[a],     \
                                      l1[a]);                                                                     \
            idx += 2 * p->out[a], l += 2 * p->out[a];                                                             \
        }                                                                                                         \
        tj_k_linear_tables_##SUF t = {i0[0], i1[0], i0[1], i1[1], i0[2], i1[2],                                   \
                                      l0[0], l1[0], l0[1], l1[1], l0[2], l1[2]};                                  \
        if (backward) tj_k_upsample_linear_backward_##SUF(k, &t, s, d);                                           \
        else tj_k_upsample_linear_##SUF(k, &t, s, d, scratch);                                                    \
    }
LINEAR_RUN(float, f32)
LINEAR_RUN(double, f64)

/* Builds the index (and weight) tables and runs the kernel from s into
 * dst: s is the input, of the given shape and strides, or (backward) the
 * contiguous grad_output, strides NULL. */
static tj_status run(const upsample_params *p, bool backward, const void *s, int ndim, const int64_t *shape,
                     const int64_t *strides, tj_tensor *dst)
{
    tj_dtype dt = dst->dtype;
    int sp = p->kind->spatial;
    tj_k_upsample k = {.batch = p->n, .channels = p->c, .depth = p->in[0], .height = p->in[1], .width = p->in[2],
                       .out_d = p->out[0], .out_h = p->out[1], .out_w = p->out[2], .scale_d = p->scale[0],
                       .scale_h = p->scale[1], .scale_w = p->scale[2], .spatial = sp,
                       .align_corners = p->align_corners};
    if (strides) {
        k.ns = strides[0], k.cs = strides[1], k.xs = strides[ndim - 1];
        k.ys = sp >= 2 ? strides[ndim - 2] : 0;
        k.zs = sp == 3 ? strides[2] : 0;
    }
    k.threads = tj_threads_for(p->n * p->c * p->out[0] * p->out[1] * p->out[2]);
    if (p->n * p->c == 0) return TJ_OK;
    if (dt != TJ_FLOAT32 && dt != TJ_FLOAT64)
        return tj_error(TJ_ERR_DTYPE, "%s: \"%s\" not implemented for %s", p->op, tables_name[p->kind->mode],
                        tj_dtype_name(dt));
    if (p->kind->mode == CUBIC) return run_bicubic(p, &k, backward, s, dst);
    bool linear = p->kind->mode == LINEAR;
    int64_t entries = p->out[0] + p->out[1] + p->out[2];
    /* nearest: one index per entry; linear: i0, i1, l0, l1, and the
     * forward's per-thread x-interpolated rows of 1 (2-d) or 2 (3-d) planes */
    size_t wsize = tj_dtype_bytes(dt), rows = 0;
    if (linear && !backward && sp > 1)
        rows = (size_t)(k.threads > 1 ? k.threads : 1) * (size_t)(sp - 1) * (size_t)(p->in[1] * p->out[2]);
    size_t bytes = (size_t)entries * (linear ? 2 * (sizeof(int64_t) + wsize) : sizeof(int64_t)) + rows * wsize;
    char *mem = tj_alloc(bytes);
    if (!mem) return tj_oom(p->op, bytes);
    int64_t *idx = (int64_t *)mem;
    void *d = tj_tensor_ptr(dst);
    if (linear && dt == TJ_FLOAT32) {
        float *l = (float *)(idx + 2 * entries);
        linear_run_f32(p, &k, backward, idx, l, rows ? l + 2 * entries : NULL, s, d);
    } else if (linear) {
        double *l = (double *)(idx + 2 * entries);
        linear_run_f64(p, &k, backward, idx, l, rows ? l + 2 * entries : NULL, s, d);
    }
    else {
        int64_t *const tables[3] = {idx, idx + p->out[0], idx + p->out[0] + p->out[1]};
        nearest_tables(p, backward || channels_last_contiguous(p, ndim, shape, strides), dt == TJ_FLOAT64, tables);
        tj_k_nearest_tables t = {tables[0], tables[1], tables[2]};
        if (dt == TJ_FLOAT32 && backward) tj_k_upsample_nearest_backward_f32(&k, &t, s, d);
        else if (dt == TJ_FLOAT32) tj_k_upsample_nearest_f32(&k, &t, s, d);
        else if (backward) tj_k_upsample_nearest_backward_f64(&k, &t, s, d);
        else tj_k_upsample_nearest_f64(&k, &t, s, d);
    }
    tj_free(mem, bytes);
    return TJ_OK;
}

static tj_status meta_forward(int kind, const tj_value *args, tj_meta *outs)
{
    upsample_params p;
    tj_status st = forward_params(args, &kinds[kind], &p);
    if (st == TJ_OK) set_meta(&p, false, args[0].u.t->dtype, &outs[0]);
    return st;
}

static tj_status kernel_forward(int kind, const tj_value *args, tj_tensor *const *outs)
{
    upsample_params p;
    tj_status st = forward_params(args, &kinds[kind], &p);
    const tj_tensor *in = args[0].u.t;
    return st == TJ_OK ? run(&p, false, tj_tensor_ptr(in), in->ndim, in->shape, in->strides, outs[0]) : st;
}

static tj_status meta_backward(int kind, const tj_value *args, tj_meta *outs)
{
    upsample_params p;
    tj_status st = backward_params(args, &kinds[kind], &p);
    if (st == TJ_OK) set_meta(&p, true, args[0].u.t->dtype, &outs[0]);
    return st;
}

static tj_status kernel_backward(int kind, const tj_value *args, tj_tensor *const *outs)
{
    upsample_params p;
    tj_status st = backward_params(args, &kinds[kind], &p);
    if (st != TJ_OK) return st;
    tj_contig go = {0};
    if ((st = tj_contig_get(&go, args[0].u.t)) != TJ_OK) return st;
    st = run(&p, true, go.data, 0, NULL, NULL, outs[0]);
    tj_contig_release(&go);
    return st;
}

#define UPSAMPLE_OPS(NAME, KIND)                                                                          \
    tj_status tj_meta_upsample_##NAME##_vec(const tj_value *args, tj_meta *outs)                          \
    {                                                                                                     \
        return meta_forward(KIND, args, outs);                                                            \
    }                                                                                                     \
    tj_status tj_kernel_upsample_##NAME##_vec(const tj_value *args, tj_tensor *const *outs)               \
    {                                                                                                     \
        return kernel_forward(KIND, args, outs);                                                          \
    }                                                                                                     \
    tj_status tj_meta_upsample_##NAME##_backward_vec(const tj_value *args, tj_meta *outs)                 \
    {                                                                                                     \
        return meta_backward(KIND, args, outs);                                                           \
    }                                                                                                     \
    tj_status tj_kernel_upsample_##NAME##_backward_vec(const tj_value *args, tj_tensor *const *outs)      \
    {                                                                                                     \
        return kernel_backward(KIND, args, outs);                                                         \
    }

UPSAMPLE_OPS(nearest1d, NEAREST1D)
UPSAMPLE_OPS(linear1d, LINEAR1D)
UPSAMPLE_OPS(nearest2d, NEAREST2D)
UPSAMPLE_OPS(bilinear2d, BILINEAR2D)
UPSAMPLE_OPS(bicubic2d, BICUBIC2D)
UPSAMPLE_OPS(nearest3d, NEAREST3D)
UPSAMPLE_OPS(trilinear3d, TRILINEAR3D)
