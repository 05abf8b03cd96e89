/* tril / triu (the lower / upper triangle of each matrix of a batch, the
 * rest zeroed) and repeat (self tiled along each dim), as ATen 1.13. */
#include <stdio.h>
#include <string.h>

#include "iter.h"
#include "kernels/copy.h"
#include "kernels/trilu.h"
#include "op_tri_repeat.h"

/* ---- tril / triu ---- */

/* self must be a batch of matrices: ATen 1.13 fails on size(-2) with an
 * IndexError ("Dimension out of range"), torch._refs with this message. */
static tj_status meta_trilu(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    char b[160];
    if (self->ndim < 2)
        return tj_error(TJ_ERR_INDEX, "%s: input tensor must have at least 2 dimensions, got shape %s", op,
                        tj_shape_str(self->ndim, self->shape, b, sizeof b));
    tj_meta_like(outs, self);
    return TJ_OK;
}

/* outs[0] is a new contiguous tensor, or self itself for tril_ / triu_.
 * Rows of self that are not contiguous (a transposed self) are copied
 * whole first, by the strided copy's cache-sized tiles, and the result
 * masked in place: reading them row by row, element by element, took
 * 18.6 ms for a transposed 2048 x 2048 float32 matrix on one thread, copy
 * and mask 6.6 ms (PyTorch 1.13: 31 ms). */
static tj_status kernel_trilu(bool lower, const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t, *src = self;
    tj_tensor *out = outs[0];
    int nt = tj_threads_for(self->numel);
    bool in_place = tj_tensor_ptr(out) == tj_tensor_ptr(self); /* then out has self's strides */
    if (!in_place && self->shape[self->ndim - 1] > 1 && self->strides[self->ndim - 1] != 1) {
        tj_k_strided to = {tj_tensor_ptr(out), out->dtype, out->strides};
        tj_k_strided from = {tj_tensor_ptr(self), self->dtype, self->strides};
        tj_k_copy_strided(to, from, self->ndim, self->shape, nt);
        src = out;
    }
    tj_k_trilu_args a = {tj_dtype_bytes(self->dtype), lower, args[1].u.i, self->ndim - 2, self->shape, out->strides,
                         src->strides};
    tj_k_trilu(&a, tj_tensor_ptr(out), tj_tensor_ptr(src), nt);
    return TJ_OK;
}

tj_status tj_meta_tril(const tj_value *args, tj_meta *outs) { return meta_trilu("aten::tril", args, outs); }
tj_status tj_meta_triu(const tj_value *args, tj_meta *outs) { return meta_trilu("aten::triu", args, outs); }
tj_status tj_kernel_tril(const tj_value *args, tj_tensor *const *outs) { return kernel_trilu(true, args, outs); }
tj_status tj_kernel_triu(const tj_value *args, tj_tensor *const *outs) { return kernel_trilu(false, args, outs); }

/* ---- repeat ---- */

#define REPEAT "aten::repeat"

/* self's shape with leading 1s up to n dims (its strides with 0s there). */
static void padded(const tj_tensor *self, int n, int64_t *shape, int64_t *strides)
{
    int lead = n - self->ndim;
    for (int d = 0; d < n; d++) {
        shape[d] = d < lead ? 1 : self->shape[d - lead];
        if (strides) strides[d] = d < lead ? 0 : self->strides[d - lead];
    }
}

tj_status tj_meta_repeat(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    const tj_value *reps = &args[1];
    char a[200], b[200];
    if (reps->n < self->ndim)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        REPEAT ": Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                        "tensor: repeats %s for self of shape %s",
                        tj_shape_str(reps->n, reps->u.ints, a, sizeof a),
                        tj_shape_str(self->ndim, self->shape, b, sizeof b));
    if (reps->n > TJ_MAX_DIMS)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, REPEAT ": repeats %s has %d dims, more than the maximum rank %d",
                        tj_shape_str(reps->n, reps->u.ints, a, sizeof a), reps->n, TJ_MAX_DIMS);
    tj_meta *o = &outs[0];
    o->dtype = self->dtype;
    o->ndim = reps->n;
    padded(self, reps->n, o->shape, NULL);
    for (int d = 0; d < reps->n; d++)
        if (__builtin_mul_overflow(o->shape[d], reps->u.ints[d], &o->shape[d]))
            return tj_error(TJ_ERR_OVERFLOW, REPEAT ": dim %d of size %lld repeated %lld times overflows int64", d,
                            (long long)(d < reps->n - self->ndim ? 1 : self->shape[d - (reps->n - self->ndim)]),
                            (long long)reps->u.ints[d]);
    /* a negative repeat of a size-0 dim gives 0, as ATen (the sizes are checked, not the repeats) */
    for (int d = 0; d < o->ndim; d++)
        if (o->shape[d] < 0)
            return tj_error(TJ_ERR_SHAPE, REPEAT ": Trying to create tensor with negative dimension %lld: %s",
                            (long long)o->shape[d], tj_shape_str(o->ndim, o->shape, a, sizeof a));
    int64_t numel;
    return tj_checked_numel(o->ndim, o->shape, &numel, REPEAT);
}

/* Tile 0 (self) copied into the result, then the filled block doubled along
 * each repeated dim from the last: once the dims after d are complete, the
 * tiles along d are contiguous runs of size[d] * stride[d] elements, so
 * copying the first `have` tiles behind themselves takes log2(repeats)
 * strided copies of at most d + 1 dims (the rank limit holds, where one
 * copy with a tile dim per dim would need twice the rank; nor was that one
 * copy faster). */
tj_status tj_kernel_repeat(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    tj_tensor *out = outs[0];
    if (out->numel == 0) return TJ_OK;
    const int64_t *reps = args[1].u.ints;
    int n = out->ndim;
    int64_t p[TJ_MAX_DIMS], ps[TJ_MAX_DIMS], shape[TJ_MAX_DIMS];
    padded(self, n, p, ps);
    char *o = tj_tensor_ptr(out);
    int64_t es = (int64_t)tj_dtype_bytes(out->dtype);
    tj_k_strided tile = {o, out->dtype, out->strides}, src = {tj_tensor_ptr(self), self->dtype, ps};
    tj_k_copy_strided(tile, src, n, p, tj_threads_for(self->numel));
    int64_t strides[TJ_MAX_DIMS]; /* the outer dims' strides, then 1 for the run (dims past d unused) */
    memcpy(strides, out->strides, sizeof(int64_t) * (size_t)n);
    for (int d = n - 1; d >= 0; d--) {
        if (reps[d] == 1) continue;
        int64_t run = p[d] * out->strides[d], outer = 1;
        for (int k = 0; k < d; k++) outer *= shape[k] = p[k];
        strides[d] = 1;
        for (int64_t have = 1; have < reps[d]; have *= 2) {
            shape[d] = (have < reps[d] - have ? have : reps[d] - have) * run;
            tj_k_strided to = {o + have * run * es, out->dtype, strides}, from = {o, out->dtype, strides};
            tj_k_copy_strided(to, from, d + 1, shape, tj_threads_for(outer * shape[d]));
        }
    }
    return TJ_OK;
}
