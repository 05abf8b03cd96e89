/* Decompositions of pixel_shuffle and pixel_unshuffle, as torch._refs
 * writes them (PyTorch 2's torch/_refs/nn/functional): split the channel
 * (or the spatial) dims with a view, permute, and one contiguous copy
 * (clone) viewed as the result. A self whose strides allow no view is
 * copied by reshape first. */
#include "util.h"

/* self reshaped to split[0 .. n), permuted by perm, copied and viewed as
 * the shape function's output m. */
static tj_status rearrange(tj_tensor *self, const int64_t *split, int n, const int64_t *perm, const tj_meta *m,
                           tj_value *outs)
{
    tj_tensor *x = tj_permute(tj_reshape(self, split, n), perm, n);
    return tj_dc_done(tj_view(tj_clone(x), m->shape, m->ndim), outs);
}

/* The batch dims of self: copied into split and perm (identity). */
static int batch_dims(const tj_tensor *self, int64_t *split, int64_t *perm)
{
    int nb = tj_tensor_ndim(self) - 3;
    for (int d = 0; d < nb; d++) split[d] = tj_tensor_shape(self)[d], perm[d] = d;
    return nb;
}

/* [*, C r², H, W] -> [*, C, r, r, H, W] -> [*, C, H, r, W, r] -> [*, C, H r, W r] */
static tj_status pixel_shuffle(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(pixel_shuffle, args, m);
    tj_tensor *self = args[0].u.t;
    int64_t r = args[1].u.i, split[TJ_MAX_DIMS], perm[TJ_MAX_DIMS];
    int b = batch_dims(self, split, perm);
    const int64_t *s = tj_tensor_shape(self) + b;
    const int64_t tail[5] = {s[0] / (r * r), r, r, s[1], s[2]}, order[5] = {0, 3, 1, 4, 2};
    for (int d = 0; d < 5; d++) split[b + d] = tail[d], perm[b + d] = b + order[d];
    return rearrange(self, split, b + 5, perm, m, outs);
}

/* [*, C, H r, W r] -> [*, C, H, r, W, r] -> [*, C, r, r, H, W] -> [*, C r², H, W] */
static tj_status pixel_unshuffle(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(pixel_unshuffle, args, m);
    tj_tensor *self = args[0].u.t;
    int64_t r = args[1].u.i, split[TJ_MAX_DIMS], perm[TJ_MAX_DIMS];
    int b = batch_dims(self, split, perm);
    const int64_t *s = tj_tensor_shape(self) + b;
    const int64_t tail[5] = {s[0], s[1] / r, r, s[2] / r, r}, order[5] = {0, 2, 4, 1, 3};
    for (int d = 0; d < 5; d++) split[b + d] = tail[d], perm[b + d] = b + order[d];
    return rearrange(self, split, b + 5, perm, m, outs);
}

void tj_register_pixel_shuffle_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(pixel_shuffle), pixel_shuffle, "pixel_shuffle");
    tj_op_set_decomposition(TJ_OPS(pixel_unshuffle), pixel_unshuffle, "pixel_unshuffle");
}
