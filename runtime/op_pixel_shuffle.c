/* aten::pixel_shuffle and aten::pixel_unshuffle: checks and messages as
 * PyTorch 1.13 (PixelShuffle.cpp); the kernels are one strided copy each
 * (kernels/copy.h), the decompositions (decomps/pixel_shuffle.c) view,
 * permute and copy as torch._refs does. */
#include <string.h>

#include "iter.h"
#include "kernels/copy.h"
#include "op_nn.h"

/* The batch dims, then 5 for the channel and the two split spatial dims. */
#define MAX_RANK (TJ_MAX_DIMS - 2)

static tj_status check_common(const char *name, const char *factor, const tj_tensor *self, int64_t r)
{
    char b[128];
    if (self->ndim < 3)
        return tj_error(TJ_ERR_SHAPE, "aten::%s: %s expects input to have at least 3 dimensions, but got input "
                        "with %d dimension(s) (input %s)", name, name, self->ndim,
                        tj_shape_str(self->ndim, self->shape, b, sizeof b));
    if (r <= 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "aten::%s: %s expects a positive %s, but got %lld", name, name,
                        factor, (long long)r);
    if (self->ndim > MAX_RANK)
        return tj_error(TJ_ERR_UNSUPPORTED, "aten::%s: input %s has more than %d dimensions", name,
                        tj_shape_str(self->ndim, self->shape, b, sizeof b), MAX_RANK);
    return TJ_OK;
}

tj_status tj_meta_pixel_shuffle(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t r = args[1].u.i, rr;
    tj_status st = check_common("pixel_shuffle", "upscale_factor", self, r);
    if (st != TJ_OK) return st;
    int nd = self->ndim;
    const int64_t *s = self->shape;
    int64_t oh, ow;
    char b[128];
    if (__builtin_mul_overflow(r, r, &rr) || __builtin_mul_overflow(s[nd - 2], r, &oh) ||
        __builtin_mul_overflow(s[nd - 1], r, &ow))
        return tj_error(TJ_ERR_OVERFLOW, "aten::pixel_shuffle: upscale_factor %lld is too large for input %s",
                        (long long)r, tj_shape_str(nd, s, b, sizeof b));
    if (s[nd - 3] % rr != 0)
        return tj_error(TJ_ERR_SHAPE, "aten::pixel_shuffle: pixel_shuffle expects its input's 'channel' dimension "
                        "to be divisible by the square of upscale_factor, but input.size(-3)=%lld is not divisible "
                        "by %lld (input %s)", (long long)s[nd - 3], (long long)rr,
                        tj_shape_str(nd, s, b, sizeof b));
    tj_meta_like(&outs[0], self);
    outs[0].shape[nd - 3] = s[nd - 3] / rr;
    outs[0].shape[nd - 2] = oh;
    outs[0].shape[nd - 1] = ow;
    return TJ_OK;
}

tj_status tj_meta_pixel_unshuffle(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t r = args[1].u.i, rr, oc;
    tj_status st = check_common("pixel_unshuffle", "downscale_factor", self, r);
    if (st != TJ_OK) return st;
    int nd = self->ndim;
    const int64_t *s = self->shape;
    char b[128];
    for (int d = nd - 2; d < nd; d++)
        if (s[d] % r != 0)
            return tj_error(TJ_ERR_SHAPE, "aten::pixel_unshuffle: pixel_unshuffle expects %s to be divisible by "
                            "downscale_factor, but input.size(%d)=%lld is not divisible by %lld (input %s)",
                            d == nd - 2 ? "height" : "width", d - nd, (long long)s[d], (long long)r,
                            tj_shape_str(nd, s, b, sizeof b));
    if (__builtin_mul_overflow(r, r, &rr) || __builtin_mul_overflow(s[nd - 3], rr, &oc))
        return tj_error(TJ_ERR_OVERFLOW, "aten::pixel_unshuffle: downscale_factor %lld is too large for input %s",
                        (long long)r, tj_shape_str(nd, s, b, sizeof b));
    tj_meta_like(&outs[0], self);
    outs[0].shape[nd - 3] = oc;
    outs[0].shape[nd - 2] = s[nd - 2] / r;
    outs[0].shape[nd - 1] = s[nd - 1] / r;
    return TJ_OK;
}

/* Copies self into out in out's element order: shape, out's and self's
 * strides of the batch dims followed by the 5 given ones. */
static tj_status copy5(const tj_tensor *self, tj_tensor *out, const int64_t *shape5, const int64_t *dst5,
                       const int64_t *src5)
{
    int nb = self->ndim - 3, n = nb + 5;
    int64_t shape[TJ_MAX_DIMS], ds[TJ_MAX_DIMS], ss[TJ_MAX_DIMS];
    memcpy(shape, self->shape, sizeof(int64_t) * (size_t)nb);
    memcpy(ds, out->strides, sizeof(int64_t) * (size_t)nb);
    memcpy(ss, self->strides, sizeof(int64_t) * (size_t)nb);
    memcpy(shape + nb, shape5, sizeof(int64_t) * 5);
    memcpy(ds + nb, dst5, sizeof(int64_t) * 5);
    memcpy(ss + nb, src5, sizeof(int64_t) * 5);
    tj_k_strided to = {tj_tensor_ptr(out), out->dtype, ds}, from = {tj_tensor_ptr(self), self->dtype, ss};
    if (out->numel) tj_k_copy_strided(to, from, n, shape, tj_threads_for(out->numel));
    return TJ_OK;
}

/* out[..., c, h*r + i, w*r + j] = self[..., c*r*r + i*r + j, h, w] */
tj_status tj_kernel_pixel_shuffle(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    tj_tensor *out = outs[0];
    int64_t r = args[1].u.i;
    int nd = self->ndim;
    const int64_t *ss = self->strides + nd - 3, *os = out->strides + nd - 3;
    const int64_t shape[5] = {out->shape[nd - 3], self->shape[nd - 2], r, self->shape[nd - 1], r};
    const int64_t dst[5] = {os[0], os[1] * r, os[1], os[2] * r, os[2]};
    const int64_t src[5] = {ss[0] * r * r, ss[1], ss[0] * r, ss[2], ss[0]};
    return copy5(self, out, shape, dst, src);
}

/* out[..., c*r*r + i*r + j, h, w] = self[..., c, h*r + i, w*r + j] */
tj_status tj_kernel_pixel_unshuffle(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    tj_tensor *out = outs[0];
    int64_t r = args[1].u.i;
    int nd = self->ndim;
    const int64_t *ss = self->strides + nd - 3, *os = out->strides + nd - 3;
    const int64_t shape[5] = {self->shape[nd - 3], r, r, out->shape[nd - 2], out->shape[nd - 1]};
    const int64_t dst[5] = {os[0] * r * r, os[0] * r, os[0], os[1], os[2]};
    const int64_t src[5] = {ss[0], ss[1], ss[2], ss[1] * r, ss[2] * r};
    return copy5(self, out, shape, dst, src);
}
