/* aten::im2col and aten::col2im (F.unfold and F.fold): checks and messages
 * as PyTorch 1.13 (Im2Col.cpp, Col2Im.cpp, im2col_shape_check.h); the
 * kernels run the convolution's im2col / col2im (kernels/im2col.h) image by
 * image. Each is the other's gradient (autograd_formulas.c); the
 * decompositions are in decomps/conv.c, next to the convolution's. */
#include <inttypes.h>
#include <string.h>

#include "contig.h"
#include "kernels/im2col.h"
#include "op_nn.h"

#define IM2COL "aten::im2col"
#define COL2IM "aten::col2im"

/* kernel_size, dilation, padding, stride from args[at..]: two entries each
 * (1.13: "It is expected kernel_size equals to 2, but got size 1"), then
 * ATen's checks of their values in its order. */
static tj_status read_geometry(const char *op, const tj_value *args, int at, tj_k_im2col_geom *g)
{
    static const char *const names[4] = {"kernel_size", "dilation", "padding", "stride"};
    for (int i = 0; i < 4; i++)
        if (args[at + i].n != 2)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: It is expected %s equals to 2, but got size %d", op,
                            names[i], args[at + i].n);
    const int64_t *k = args[at].u.ints, *d = args[at + 1].u.ints, *p = args[at + 2].u.ints, *s = args[at + 3].u.ints;
    if (k[0] <= 0 || k[1] <= 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: kernel size should be greater than zero, but got kernel_height: "
                        "%" PRId64 " kernel_width: %" PRId64, op, k[0], k[1]);
    if (d[0] <= 0 || d[1] <= 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: dilation should be greater than zero, but got dilation_height: "
                        "%" PRId64 " dilation_width: %" PRId64, op, d[0], d[1]);
    if (p[0] < 0 || p[1] < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: padding should be non-negative, but got pad_height: %" PRId64
                        " pad_width: %" PRId64, op, p[0], p[1]);
    if (s[0] <= 0 || s[1] <= 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: stride should be greater than zero, but got stride_height: "
                        "%" PRId64 " stride_width: %" PRId64, op, s[0], s[1]);
    *g = (tj_k_im2col_geom){.kh = k[0], .kw = k[1], .dh = d[0], .dw = d[1], .ph = p[0], .pw = p[1], .sh = s[0],
                            .sw = s[1]};
    return TJ_OK;
}

/* floor((size + 2 pad - (dilation (k - 1) + 1)) / stride) + 1, ATen's
 * div_rtn; false when a step overflows int64. */
static bool blocks(int64_t size, int64_t k, int64_t d, int64_t p, int64_t s, int64_t *out)
{
    int64_t span, padded, num;
    if (__builtin_mul_overflow(d, k - 1, &span) || __builtin_add_overflow(span, 1, &span) ||
        __builtin_mul_overflow(p, 2, &padded) || __builtin_add_overflow(size, padded, &padded) ||
        __builtin_sub_overflow(padded, span, &num))
        return false;
    int64_t q = num / s;
    if (num % s != 0 && num < 0) q--;
    *out = q + 1;
    return true;
}

static const char *geometry_str(const tj_k_im2col_geom *g, char *b, size_t n)
{
    snprintf(b, n, "kernel_size=(%" PRId64 ", %" PRId64 "), dilation=(%" PRId64 ", %" PRId64 "), padding=(%" PRId64
             ", %" PRId64 "), stride=(%" PRId64 ", %" PRId64 ")", g->kh, g->kw, g->dh, g->dw, g->ph, g->pw, g->sh,
             g->sw);
    return b;
}

static tj_status check_float(const char *op, const tj_tensor *self)
{
    if (tj_dtype_is_float(self->dtype)) return TJ_OK;
    return tj_error(TJ_ERR_DTYPE, "%s: expected a float32 or float64 input, got %s (PyTorch: \"%s_out_cpu\" not "
                    "implemented)", op, tj_dtype_name(self->dtype), op + 6);
}

/* The geometry of im2col's arguments (channels, image and block counts
 * filled in); the output [N, C kh kw, oh ow] or, unbatched, [C kh kw, oh ow]. */
static tj_status im2col_geometry(const tj_value *args, tj_k_im2col_geom *g, int64_t *rows)
{
    const tj_tensor *self = args[0].u.t;
    tj_status st = read_geometry(IM2COL, args, 1, g);
    if (st != TJ_OK) return st;
    int nd = self->ndim;
    const int64_t *s = self->shape;
    char b[128], geo[256];
    if (!((nd == 3 && s[0] != 0 && s[1] != 0 && s[2] != 0) || (nd == 4 && s[1] != 0 && s[2] != 0 && s[3] != 0)))
        return tj_error(TJ_ERR_SHAPE, IM2COL ": Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                        "and other non-zero dimensions for input, but got: %s",
                        tj_shape_str(nd, s, b, sizeof b));
    if ((st = check_float(IM2COL, self)) != TJ_OK) return st;
    g->channels = s[nd - 3], g->height = s[nd - 2], g->width = s[nd - 1];
    if (!blocks(g->height, g->kh, g->dh, g->ph, g->sh, &g->out_h) ||
        !blocks(g->width, g->kw, g->dw, g->pw, g->sw, &g->out_w) || g->out_h < 1 || g->out_w < 1)
        return tj_error(TJ_ERR_SHAPE, IM2COL ": Given input with spatial size (%" PRId64 ", %" PRId64 "), %s, "
                        "calculated shape of the array of sliding blocks as (%" PRId64 ", %" PRId64 "), but its "
                        "components must be at least one.", g->height, g->width,
                        geometry_str(g, geo, sizeof geo), g->out_h, g->out_w);
    int64_t taps, L;
    if (__builtin_mul_overflow(g->kh, g->kw, &taps) || __builtin_mul_overflow(g->channels, taps, rows) ||
        __builtin_mul_overflow(g->out_h, g->out_w, &L))
        return tj_error(TJ_ERR_OVERFLOW, IM2COL ": %s with %s gives an output larger than INT64_MAX elements per dim",
                        tj_shape_str(nd, s, b, sizeof b), geometry_str(g, geo, sizeof geo));
    return TJ_OK;
}

tj_status tj_meta_im2col(const tj_value *args, tj_meta *outs)
{
    tj_k_im2col_geom g;
    int64_t rows;
    tj_status st = im2col_geometry(args, &g, &rows);
    if (st != TJ_OK) return st;
    const tj_tensor *self = args[0].u.t;
    int b = self->ndim == 4;
    outs[0].dtype = self->dtype;
    outs[0].ndim = 2 + b;
    if (b) outs[0].shape[0] = self->shape[0];
    outs[0].shape[b] = rows;
    outs[0].shape[b + 1] = g.out_h * g.out_w; /* within the output's element count, checked by the dispatcher */
    return TJ_OK;
}

tj_status tj_kernel_im2col(const tj_value *args, tj_tensor *const *outs)
{
    tj_k_im2col_geom g;
    int64_t rows;
    tj_status st = im2col_geometry(args, &g, &rows);
    if (st != TJ_OK) return st;
    const tj_tensor *self = args[0].u.t;
    tj_tensor *out = outs[0];
    int nd = self->ndim;
    int64_t n = nd == 4 ? self->shape[0] : 1, bs = nd == 4 ? self->strides[0] : 0, L = g.out_h * g.out_w;
    const int64_t *st3 = self->strides + nd - 3;
    size_t es = tj_dtype_bytes(self->dtype);
    for (int64_t i = 0; i < n; i++) {
        const char *img = tj_tensor_ptr(self) + i * bs * (int64_t)es;
        char *col = tj_tensor_ptr(out) + i * rows * L * (int64_t)es;
        if (self->dtype == TJ_FLOAT32)
            tj_k_im2col_f32(&g, (const float *)img, st3[0], st3[1], st3[2], (float *)col, L);
        else
            tj_k_im2col_f64(&g, (const double *)img, st3[0], st3[1], st3[2], (double *)col, L);
    }
    return TJ_OK;
}

/* The geometry of col2im's arguments: the image [channels, output_size]
 * and the blocks over it, which must be the input's columns. */
static tj_status col2im_geometry(const tj_value *args, tj_k_im2col_geom *g)
{
    const tj_tensor *self = args[0].u.t;
    if (args[1].n != 2)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, COL2IM ": It is expected output_size equals to 2, but got size %d",
                        args[1].n);
    tj_status st = read_geometry(COL2IM, args, 2, g);
    if (st != TJ_OK) return st;
    int nd = self->ndim;
    const int64_t *s = self->shape, *os = args[1].u.ints;
    char b[128], geo[256];
    if (!((nd == 2 && s[0] != 0 && s[1] != 0) || (nd == 3 && s[1] != 0 && s[2] != 0)))
        return tj_error(TJ_ERR_SHAPE, COL2IM ": Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                        "batch size and non-zero dimensions for input, but got: %s",
                        tj_shape_str(nd, s, b, sizeof b));
    if ((st = check_float(COL2IM, self)) != TJ_OK) return st;
    int64_t planes = s[nd - 2], length = s[nd - 1], taps;
    if (__builtin_mul_overflow(g->kh, g->kw, &taps) || planes % taps != 0)
        return tj_error(TJ_ERR_SHAPE, COL2IM ": Expected size of input's dimension 1 to be divisible by the product "
                        "of kernel_size, but got input.size(1)=%" PRId64 " and kernel_size=(%" PRId64 ", %" PRId64
                        ").", planes, g->kh, g->kw);
    g->channels = planes / taps, g->height = os[0], g->width = os[1];
    bool fit = blocks(os[0], g->kh, g->dh, g->ph, g->sh, &g->out_h) &&
               blocks(os[1], g->kw, g->dw, g->pw, g->sw, &g->out_w);
    int64_t L;
    if (!fit || __builtin_mul_overflow(g->out_h, g->out_w, &L) || length != L || g->out_h < 1 || g->out_w < 1)
        return tj_error(TJ_ERR_SHAPE, COL2IM ": Given output_size=(%" PRId64 ", %" PRId64 "), %s, expected size of "
                        "input's dimension 2 to match the calculated number of sliding blocks %" PRId64 " * %" PRId64
                        " = %" PRId64 " (of at least one block each way), but got input.size(2)=%" PRId64 ".", os[0],
                        os[1], geometry_str(g, geo, sizeof geo), fit ? g->out_h : 0, fit ? g->out_w : 0,
                        fit ? g->out_h * g->out_w : 0, length);
    return TJ_OK;
}

tj_status tj_meta_col2im(const tj_value *args, tj_meta *outs)
{
    tj_k_im2col_geom g;
    tj_status st = col2im_geometry(args, &g);
    if (st != TJ_OK) return st;
    const tj_tensor *self = args[0].u.t;
    int b = self->ndim == 3;
    outs[0].dtype = self->dtype;
    outs[0].ndim = 3 + b;
    if (b) outs[0].shape[0] = self->shape[0];
    outs[0].shape[b] = g.channels;
    outs[0].shape[b + 1] = g.height;
    outs[0].shape[b + 2] = g.width;
    return TJ_OK;
}

/* Every column entry added into the image position it was read from, in
 * the kernel's order (channel, tap, block): zeros where no block reaches. */
tj_status tj_kernel_col2im(const tj_value *args, tj_tensor *const *outs)
{
    tj_k_im2col_geom g;
    tj_status st = col2im_geometry(args, &g);
    if (st != TJ_OK) return st;
    const tj_tensor *self = args[0].u.t;
    tj_tensor *out = outs[0];
    tj_contig cols = {0};
    if ((st = tj_contig_get(&cols, self)) != TJ_OK) return st;
    size_t es = tj_dtype_bytes(self->dtype);
    int64_t n = self->ndim == 3 ? self->shape[0] : 1, L = g.out_h * g.out_w, rows = self->shape[self->ndim - 2];
    int64_t plane = g.channels * g.height * g.width;
    memset(tj_tensor_ptr(out), 0, (size_t)out->numel * es);
    for (int64_t i = 0; i < n; i++) {
        const char *col = cols.data + i * rows * L * (int64_t)es;
        char *img = tj_tensor_ptr(out) + i * plane * (int64_t)es;
        if (self->dtype == TJ_FLOAT32)
            tj_k_col2im_f32(&g, (const float *)col, L, (float *)img);
        else
            tj_k_col2im_f64(&g, (const double *)col, L, (double *)img);
    }
    tj_contig_release(&cols);
    return TJ_OK;
}
