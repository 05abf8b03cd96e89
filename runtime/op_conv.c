/* aten::convolution and aten::convolution_backward, 1-D, 2-D and 3-D:
 * argument checks as PyTorch 1.13's ConvUtils, and the glue to the kernels:
 * im2col + GEMM (kernels/conv.h) for 1-D (a 2-D convolution of height 1)
 * and 2-D, vol2col + GEMM (kernels/conv3d.h) for 3-D. */
#include <string.h>

#include "contig.h"
#include "kernels/conv.h"
#include "kernels/conv3d.h"
#include "op_backward.h"
#include "op_nn.h"

/* Everything a convolution's geometry needs, in 3-D form, dims (d, h, w):
 * a 2-D convolution has d = od = kd = 1, a 1-D one h = oh = kh = 1 too,
 * with stride and dilation 1 and padding 0 on the missing dims. */
typedef struct conv_params {
    const char *op;
    int spatial; /* 1, 2 or 3 */
    bool transposed;
    int64_t groups;
    int64_t stride[3], padding[3], dilation[3], output_padding[3];
    int64_t n, c_in, c_out;
    int64_t in[3], k[3], out[3];
} conv_params;

/* Reads an int[] of 1 or `spatial` entries (one entry is repeated) into
 * out[3] in (d, h, w) order; the missing leading dims get `fill`. */
static tj_status read_param(const conv_params *p, const char *name, const tj_value *v, int64_t fill, int64_t *out)
{
    char buf[96];
    if (v->n != 1 && v->n != p->spatial)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "%s: expected %s to be a single integer value or a list of %d values to match the "
                        "convolution dimensions, but got %s=%s",
                        p->op, name, p->spatial, name, tj_shape_str(v->n, v->u.ints, buf, sizeof buf));
    for (int i = 0; i < 3; i++) {
        int at = i - (3 - p->spatial);
        out[i] = at < 0 ? fill : v->u.ints[v->n == 1 ? 0 : at];
    }
    return TJ_OK;
}

/* "(a x b ..)" of the last `spatial` entries of v[3]. */
static const char *dims_str(const conv_params *p, const int64_t *v, char *buf, size_t size)
{
    size_t at = (size_t)snprintf(buf, size, "(");
    for (int i = 3 - p->spatial; i < 3 && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%lld", i > 3 - p->spatial ? " x " : "", (long long)v[i]);
    if (at < size) snprintf(buf + at, size - at, ")");
    return buf;
}

/* Checks input, weight (and bias when given) against each other and the
 * parameters `prm` (stride, padding, dilation, transposed, output_padding,
 * groups, in schema order) and fills p, output size included. */
static tj_status conv_params_parse(const char *op, const tj_tensor *input, const tj_tensor *weight,
                                   const tj_tensor *bias, const tj_value *prm, conv_params *p)
{
    char a[96], b[96];
    memset(p, 0, sizeof *p);
    p->op = op;
    p->transposed = prm[3].u.b;
    p->groups = prm[5].u.i;
    int wd = weight->ndim;
    if (wd < 3 || wd > 5)
        return tj_error(TJ_ERR_SHAPE,
                        "%s: weight should have three to five dimensions (1-D to 3-D convolutions), got weight of "
                        "size %s",
                        op, tj_shape_str(wd, weight->shape, a, sizeof a));
    if (input->ndim != wd)
        return tj_error(TJ_ERR_SHAPE,
                        "%s: expected %d-dimensional input for %d-dimensional weight %s, but got %d-dimensional "
                        "input of size %s instead",
                        op, wd, wd, tj_shape_str(wd, weight->shape, a, sizeof a), input->ndim,
                        tj_shape_str(input->ndim, input->shape, b, sizeof b));
    if (input->dtype != weight->dtype || (bias && bias->dtype != input->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: input type (%s), weight type (%s)%s%s should be the same", op,
                        tj_dtype_name(input->dtype), tj_dtype_name(weight->dtype), bias ? " and bias type " : "",
                        bias ? tj_dtype_name(bias->dtype) : "");
    if (!tj_dtype_is_float(input->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: expected float32 or float64 input, got %s", op,
                        tj_dtype_name(input->dtype));
    p->spatial = wd - 2;
    tj_status st;
    if ((st = read_param(p, "stride", &prm[0], 1, p->stride)) || (st = read_param(p, "padding", &prm[1], 0, p->padding)) ||
        (st = read_param(p, "dilation", &prm[2], 1, p->dilation)) ||
        (st = read_param(p, "output_padding", &prm[4], 0, p->output_padding)))
        return st;
    for (int i = 0; i < 3; i++) {
        if (p->padding[i] < 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: negative padding is not supported", op);
        if (p->output_padding[i] < 0)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: negative output_padding is not supported", op);
        if (p->stride[i] <= 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: non-positive stride is not supported", op);
        if (p->dilation[i] <= 0)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: dilation should be greater than zero", op);
        if (p->transposed && p->output_padding[i] >= p->stride[i] && p->output_padding[i] >= p->dilation[i])
            return tj_error(TJ_ERR_INVALID_ARGUMENT,
                            "%s: output padding must be smaller than either stride or dilation, but got "
                            "output_padding %lld, stride %lld, dilation %lld",
                            op, (long long)p->output_padding[i], (long long)p->stride[i], (long long)p->dilation[i]);
    }
    int64_t g = p->groups;
    if (g <= 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: non-positive groups is not supported (groups=%lld)", op, (long long)g);
    tj_shape_str(wd, weight->shape, a, sizeof a);
    tj_shape_str(input->ndim, input->shape, b, sizeof b);
    if (weight->shape[0] < g || weight->shape[0] % g != 0)
        return tj_error(TJ_ERR_SHAPE,
                        "%s: given groups=%lld, expected weight to be %s %lld at dimension 0, but got weight of size "
                        "%s instead",
                        op, (long long)g, weight->shape[0] < g ? "at least" : "divisible by", (long long)g, a);
    p->n = input->shape[0];
    p->c_in = input->shape[1];
    for (int i = 0; i < 3; i++) {
        int at = i - (3 - p->spatial);
        p->in[i] = at < 0 ? 1 : input->shape[2 + at];
        p->k[i] = at < 0 ? 1 : weight->shape[2 + at];
    }
    int64_t expect_in = p->transposed ? weight->shape[0] : weight->shape[1] * g;
    if (p->c_in != expect_in)
        return tj_error(TJ_ERR_SHAPE,
                        "%s: given %s=%lld, weight of size %s, expected input%s to have %lld channels, but got "
                        "%lld channels instead",
                        op, p->transposed ? "transposed" : "groups", p->transposed ? 1LL : (long long)g, a, b,
                        (long long)expect_in, (long long)p->c_in);
    p->c_out = p->transposed ? weight->shape[1] * g : weight->shape[0];
    if (bias && (bias->ndim != 1 || bias->shape[0] != p->c_out)) {
        char c[96];
        return tj_error(TJ_ERR_SHAPE,
                        "%s: given weight of size %s, expected bias to be 1-dimensional with %lld elements, but "
                        "got bias of size %s instead",
                        op, a, (long long)p->c_out, tj_shape_str(bias->ndim, bias->shape, c, sizeof c));
    }
    int64_t extent[3], span[3];
    for (int i = 0; i < 3; i++) {
        /* checked arithmetic, every dim before any message prints them: a
         * stride, padding or dilation near INT64_MAX wrapped the sizes
         * around (undefined behaviour), and a wrapped padded size let im2col
         * read outside the input (hostile tests) */
        int64_t twice_pad;
        bool over = __builtin_mul_overflow(p->dilation[i], p->k[i] - 1, &extent[i]) ||
                    __builtin_add_overflow(extent[i], 1, &extent[i]) ||
                    __builtin_mul_overflow(p->padding[i], 2, &twice_pad);
        if (p->transposed)
            over = over || __builtin_mul_overflow(p->in[i] - 1, p->stride[i], &span[i]) ||
                   __builtin_sub_overflow(span[i], twice_pad, &span[i]) ||
                   __builtin_add_overflow(span[i], extent[i], &span[i]) ||
                   __builtin_add_overflow(span[i], p->output_padding[i], &span[i]);
        else
            over = over || __builtin_add_overflow(p->in[i], twice_pad, &span[i]);
        if (over)
            return tj_error(TJ_ERR_OVERFLOW, "%s: the output size overflows (input %s, weight %s, stride %lld, "
                            "padding %lld, dilation %lld)", op, b, a, (long long)p->stride[i],
                            (long long)p->padding[i], (long long)p->dilation[i]);
    }
    for (int i = 0; i < 3 && !p->transposed; i++)
        if (span[i] < extent[i]) {
            char s1[80], s2[80];
            return tj_error(TJ_ERR_SHAPE,
                            "%s: calculated padded input size per channel: %s. Kernel size: %s. Kernel size can't "
                            "be greater than actual input size",
                            op, dims_str(p, span, s1, sizeof s1), dims_str(p, extent, s2, sizeof s2));
        }
    /* ATen's CPU backends (slow_conv2d, slow_conv3d, slow_conv_transpose2d
     * and 3d) refuse an empty kernel; only an input without channels (its
     * empty backend) passes */
    if (p->c_in != 0 && (p->k[0] == 0 || p->k[1] == 0 || p->k[2] == 0)) {
        if (p->spatial == 3)
            return tj_error(TJ_ERR_SHAPE,
                            "%s: kernel size should be greater than zero, but got kT: %lld kH: %lld kW: %lld "
                            "(weight %s)",
                            op, (long long)p->k[0], (long long)p->k[1], (long long)p->k[2], a);
        return tj_error(TJ_ERR_SHAPE,
                        "%s: kernel size should be greater than zero, but got kernel_height: %lld kernel_width: %lld "
                        "(weight %s)",
                        op, (long long)p->k[1], (long long)p->k[2], a);
    }
    /* ATen (select_conv_backend) computes nothing for an empty input but
     * one with no samples or no channels, and checks this after the kernel
     * size and before a transposed output size */
    if (p->n != 0 && p->c_in != 0 && (p->in[0] == 0 || p->in[1] == 0 || p->in[2] == 0))
        return tj_error(TJ_ERR_SHAPE,
                        "%s: only zero batch or zero channel inputs are supported, but got input shape: %s", op, b);
    for (int i = 0; i < 3; i++) {
        if (p->transposed) {
            p->out[i] = span[i];
            if (p->out[i] <= 0)
                return tj_error(TJ_ERR_SHAPE, "%s: given input %s and weight %s, the calculated output size %lld "
                                "is too small", op, b, a, (long long)p->out[i]);
        } else {
            p->out[i] = (span[i] - extent[i]) / p->stride[i] + 1;
        }
    }
    return TJ_OK;
}

/* Output shape [N, C_out, out..]; an input without channels gives no
 * output channels, as ATen 1.13's empty backend (calc_output_size). */
static void conv_out_shape(const conv_params *p, int *ndim, int64_t *shape)
{
    *ndim = p->spatial + 2;
    shape[0] = p->n;
    shape[1] = p->c_in == 0 ? 0 : p->c_out;
    for (int i = 0; i < p->spatial; i++) shape[2 + i] = p->out[3 - p->spatial + i];
}

/* The image side of the kernels: the input of a convolution, the output
 * of a transposed one (see kernels/conv.h); the matrix side the other. */
static const int64_t *image_size(const conv_params *p) { return p->transposed ? p->out : p->in; }
static const int64_t *matrix_size(const conv_params *p) { return p->transposed ? p->in : p->out; }

static int64_t image_channels(const conv_params *p) { return (p->transposed ? p->c_out : p->c_in) / p->groups; }
static int64_t matrix_channels(const conv_params *p) { return (p->transposed ? p->c_in : p->c_out) / p->groups; }

/* The 2-D kernels' description (1-D and 2-D: dims h, w). */
static tj_k_conv conv_kernel_desc(const conv_params *p)
{
    const int64_t *img = image_size(p), *mat = matrix_size(p);
    tj_k_conv cv = {.batch = p->n, .groups = p->groups, .mat_channels = matrix_channels(p)};
    cv.geom = (tj_k_im2col_geom){.channels = image_channels(p), .height = img[1], .width = img[2],
                                 .kh = p->k[1], .kw = p->k[2], .sh = p->stride[1], .sw = p->stride[2],
                                 .ph = p->padding[1], .pw = p->padding[2], .dh = p->dilation[1],
                                 .dw = p->dilation[2], .out_h = mat[1], .out_w = mat[2]};
    /* threads pay only for enough multiply-adds */
    int64_t macs = cv.batch * cv.groups * cv.mat_channels * cv.geom.channels * p->k[1] * p->k[2] * mat[1] * mat[2];
    cv.threads = macs >= (1 << 20) ? tj_get_num_threads() : 1;
    return cv;
}

/* The 3-D kernels' description. */
static tj_k_conv3d conv3d_kernel_desc(const conv_params *p)
{
    tj_k_conv3d cv = {.batch = p->n, .groups = p->groups, .mat_channels = matrix_channels(p)};
    cv.geom.channels = image_channels(p);
    for (int i = 0; i < 3; i++) {
        cv.geom.size[i] = image_size(p)[i];
        cv.geom.out[i] = matrix_size(p)[i];
        cv.geom.kernel[i] = p->k[i];
        cv.geom.stride[i] = p->stride[i];
        cv.geom.padding[i] = p->padding[i];
        cv.geom.dilation[i] = p->dilation[i];
    }
    return cv;
}

/* Scratch for one kernel call, from the caching allocator (the buffers are
 * large and needed on every call: no page faults after the first). */
typedef struct scratch {
    void *p;
    size_t got;
} scratch;

static tj_status scratch_get(const char *op, size_t n, scratch *s)
{
    s->p = NULL;
    s->got = 0;
    if (n == 0) return TJ_OK;
    s->p = tj_alloc_storage_bytes(n, &s->got);
    return s->p ? TJ_OK : tj_oom(op, n);
}

static void scratch_put(scratch *s) { tj_free_storage_bytes(s->p, s->got); }

/* One of the three 3-D kernel operations (kernels/conv3d.h). */
static void conv3d_op(tj_k_conv_op op, const tj_k_conv3d *cv, bool f32, const void *img, const void *mat,
                      const void *w, const void *bias, void *o, void *work)
{
    switch (op) {
    case TJ_K_CONV_UNFOLD_MM:
        if (f32) tj_k_conv3d_unfold_mm_f32(cv, img, w, bias, o, work);
        else tj_k_conv3d_unfold_mm_f64(cv, img, w, bias, o, work);
        break;
    case TJ_K_CONV_MM_FOLD:
        if (f32) tj_k_conv3d_mm_fold_f32(cv, mat, w, bias, o, work);
        else tj_k_conv3d_mm_fold_f64(cv, mat, w, bias, o, work);
        break;
    case TJ_K_CONV_WEIGHT_GRAD:
        if (f32) tj_k_conv3d_weight_grad_f32(cv, img, mat, o, work);
        else tj_k_conv3d_weight_grad_f64(cv, img, mat, o, work);
        break;
    }
}

/* One of the three 2-D kernel operations (kernels/conv.h). */
static void conv2d_op(tj_k_conv_op op, const tj_k_conv *cv, bool f32, const void *img, const void *mat,
                      const void *w, const void *bias, void *o, void *work)
{
    switch (op) {
    case TJ_K_CONV_UNFOLD_MM:
        if (f32) tj_k_conv_unfold_mm_f32(cv, img, w, bias, o, work);
        else tj_k_conv_unfold_mm_f64(cv, img, w, bias, o, work);
        break;
    case TJ_K_CONV_MM_FOLD:
        if (f32) tj_k_conv_mm_fold_f32(cv, mat, w, bias, o, work);
        else tj_k_conv_mm_fold_f64(cv, mat, w, bias, o, work);
        break;
    case TJ_K_CONV_WEIGHT_GRAD:
        if (f32) tj_k_conv_weight_grad_f32(cv, img, mat, o, work);
        else tj_k_conv_weight_grad_f64(cv, img, mat, o, work);
        break;
    }
}

/* Runs one of the three kernel operations of p's geometry on row-major
 * buffers of dtype dt, with scratch from the caching allocator. */
static tj_status conv_op(const char *name, tj_k_conv_op op, const conv_params *p, tj_dtype dt, const void *img,
                         const void *mat, const void *w, const void *bias, tj_tensor *out)
{
    if (out->numel == 0) return TJ_OK;
    tj_k_conv cv2 = {0};
    tj_k_conv3d cv3 = {0};
    if (p->spatial == 3) cv3 = conv3d_kernel_desc(p);
    else cv2 = conv_kernel_desc(p);
    size_t bytes = p->spatial == 3 ? tj_k_conv3d_work_bytes(&cv3, dt) : tj_k_conv_work_bytes(&cv2, dt, op);
    scratch s;
    tj_status st = scratch_get(name, bytes, &s);
    if (st != TJ_OK) return st;
    bool f32 = dt == TJ_FLOAT32;
    if (p->spatial == 3) conv3d_op(op, &cv3, f32, img, mat, w, bias, tj_tensor_ptr(out), s.p);
    else conv2d_op(op, &cv2, f32, img, mat, w, bias, tj_tensor_ptr(out), s.p);
    scratch_put(&s);
    return TJ_OK;
}

tj_status tj_meta_convolution(const tj_value *args, tj_meta *outs)
{
    conv_params p;
    const tj_tensor *bias = tj_opt_tensor(&args[2]);
    tj_status st = conv_params_parse("aten::convolution", args[0].u.t, args[1].u.t, bias, &args[3], &p);
    if (st != TJ_OK) return st;
    outs[0].dtype = args[0].u.t->dtype;
    conv_out_shape(&p, &outs[0].ndim, outs[0].shape);
    return TJ_OK;
}

tj_status tj_kernel_convolution(const tj_value *args, tj_tensor *const *outs)
{
    const char *name = "aten::convolution";
    conv_params p;
    const tj_tensor *bias_arg = tj_opt_tensor(&args[2]);
    tj_status st = conv_params_parse(name, args[0].u.t, args[1].u.t, bias_arg, &args[3], &p);
    if (st != TJ_OK) return st;
    tj_contig in = {0}, w = {0}, bias = {0};
    if ((st = tj_contig_get(&in, args[0].u.t)) == TJ_OK && (st = tj_contig_get(&w, args[1].u.t)) == TJ_OK &&
        (!bias_arg || (st = tj_contig_get(&bias, bias_arg)) == TJ_OK)) {
        tj_dtype dt = args[0].u.t->dtype;
        st = p.transposed ? conv_op(name, TJ_K_CONV_MM_FOLD, &p, dt, NULL, in.data, w.data, bias.data, outs[0])
                          : conv_op(name, TJ_K_CONV_UNFOLD_MM, &p, dt, in.data, NULL, w.data, bias.data, outs[0]);
    }
    tj_contig_release(&in);
    tj_contig_release(&w);
    tj_contig_release(&bias);
    return st;
}

/* ---- convolution_backward ---- */

static tj_status conv_backward_params(const tj_value *args, conv_params *p)
{
    const char *name = "aten::convolution_backward";
    const tj_tensor *go = args[0].u.t, *input = args[1].u.t, *weight = args[2].u.t;
    tj_status st = conv_params_parse(name, input, weight, NULL, &args[4], p);
    if (st != TJ_OK) return st;
    if (go->dtype != input->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: grad_output type (%s) and input type (%s) should be the same", name,
                        tj_dtype_name(go->dtype), tj_dtype_name(input->dtype));
    int ndim;
    int64_t shape[5];
    conv_out_shape(p, &ndim, shape);
    if (go->ndim != ndim || memcmp(go->shape, shape, sizeof(int64_t) * (size_t)ndim) != 0) {
        char a[96], b[96];
        return tj_error(TJ_ERR_SHAPE, "%s: grad_output of size %s does not match the convolution's output size %s",
                        name, tj_shape_str(go->ndim, go->shape, a, sizeof a), tj_shape_str(ndim, shape, b, sizeof b));
    }
    if (args[10].n != 3)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output_mask must have 3 entries, got %d", name, args[10].n);
    return TJ_OK;
}

tj_status tj_meta_convolution_backward(const tj_value *args, tj_meta *outs)
{
    conv_params p;
    tj_status st = conv_backward_params(args, &p);
    if (st != TJ_OK) return st;
    const tj_tensor *shaped[2] = {args[1].u.t, args[2].u.t};
    for (int i = 0; i < 3; i++) {
        outs[i].dtype = args[0].u.t->dtype;
        outs[i].undefined = !args[10].u.bools[i];
        if (i < 2) {
            outs[i].ndim = shaped[i]->ndim;
            memcpy(outs[i].shape, shaped[i]->shape, sizeof(int64_t) * (size_t)shaped[i]->ndim);
        } else {
            outs[i].ndim = 1;
            outs[i].shape[0] = p.c_out;
        }
    }
    return TJ_OK;
}

tj_status tj_kernel_convolution_backward(const tj_value *args, tj_tensor *const *outs)
{
    const char *name = "aten::convolution_backward";
    conv_params p;
    tj_status st = conv_backward_params(args, &p);
    if (st != TJ_OK) return st;
    tj_contig go = {0}, in = {0}, w = {0};
    if ((st = tj_contig_get(&go, args[0].u.t)) != TJ_OK || (st = tj_contig_get(&in, args[1].u.t)) != TJ_OK ||
        (st = tj_contig_get(&w, args[2].u.t)) != TJ_OK)
        goto done;
    tj_dtype dt = args[0].u.t->dtype;
    /* image and matrix side: see kernels/conv.h */
    const void *img = p.transposed ? go.data : in.data, *mat = p.transposed ? in.data : go.data;
    if (outs[0])
        st = p.transposed ? conv_op(name, TJ_K_CONV_UNFOLD_MM, &p, dt, go.data, NULL, w.data, NULL, outs[0])
                          : conv_op(name, TJ_K_CONV_MM_FOLD, &p, dt, NULL, go.data, w.data, NULL, outs[0]);
    if (st == TJ_OK && outs[1]) st = conv_op(name, TJ_K_CONV_WEIGHT_GRAD, &p, dt, img, mat, NULL, NULL, outs[1]);
    if (st == TJ_OK && outs[2] && p.c_in == 0) { /* the output had no channels: bias got no gradient */
        memset(tj_tensor_ptr(outs[2]), 0, (size_t)(p.c_out * tj_dtype_size(dt)));
    } else if (st == TJ_OK && outs[2]) {
        int64_t spatial = p.out[0] * p.out[1] * p.out[2];
        int nt = tj_get_num_threads();
        void *gb = tj_tensor_ptr(outs[2]);
        if (dt == TJ_FLOAT32) tj_k_conv_bias_grad_f32(p.n, p.c_out, spatial, (const void *)go.data, gb, nt);
        else tj_k_conv_bias_grad_f64(p.n, p.c_out, spatial, (const void *)go.data, gb, nt);
    }
done:
    tj_contig_release(&go);
    tj_contig_release(&in);
    tj_contig_release(&w);
    return st;
}
