/* View composites, as ATen 1.13 writes them (TensorShape.cpp). Implicit:
 * reshape is a view when the strides allow it and otherwise
 * _unsafe_view(clone(x)); flatten reshapes; contiguous is self or a clone;
 * split, split_with_sizes and chunk are lists of slices, unbind a list of
 * selects, narrow one slice (torch 1.13's make_fx records narrow as that
 * slice and chunk as split.Tensor; split.Tensor, split_with_sizes and
 * unbind.int it records as one node each, which a graph here cannot hold:
 * the pieces' slice / select nodes instead).
 * stack (a kernel of its own, recorded as aten.stack as torch's make_fx
 * does) decomposes to unsqueeze + cat. */
#include <inttypes.h>
#include <string.h>

#include "op_view.h"
#include "util.h"

static tj_status done(tj_tensor *r, tj_value *outs)
{
    if (!r) return tj_last_status();
    outs[0] = tj_v_tensor(r);
    return TJ_OK;
}

static tj_status reshape(const tj_value *args, tj_value *outs)
{
    tj_tensor *self = args[0].u.t;
    int n = args[1].n, nd = tj_tensor_ndim(self);
    int64_t shape[TJ_MAX_DIMS], strides[TJ_MAX_DIMS];
    if (tj_view_infer_size("aten::reshape", args[1].u.ints, n, tj_tensor_numel(self), shape) != TJ_OK)
        return tj_last_status();
    if (tj_view_strides(nd, tj_tensor_shape(self), tj_tensor_strides(self), n, shape, strides))
        return done(tj_view(self, shape, n), outs);
    return done(tj_unsafe_view(tj_clone(self), shape, n), outs);
}

static tj_status flatten(const tj_value *args, tj_value *outs)
{
    const char *op = "aten::flatten.using_ints";
    tj_tensor *self = args[0].u.t;
    int nd = tj_tensor_ndim(self), start, end;
    if (tj_wrap_dim(op, args[1].u.i, nd, &start) != TJ_OK || tj_wrap_dim(op, args[2].u.i, nd, &end) != TJ_OK)
        return tj_last_status();
    if (start > end)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "%s: invalid args: start_dim %" PRId64 " cannot come after end_dim %" PRId64, op,
                        args[1].u.i, args[2].u.i);
    if (nd == 0) return done(tj_reshape(self, (const int64_t[]){1}, 1), outs);
    if (start == end) return done(self, outs);
    /* the merged size is computed, not inferred: [0, 1, 3, 0] flattening
     * dims 1..2 must give [0, 3, 0], which -1 could not pin down */
    const int64_t *sh = tj_tensor_shape(self);
    int64_t shape[TJ_MAX_DIMS], merged = 1;
    int k = 0;
    for (int d = 0; d < start; d++) shape[k++] = sh[d];
    for (int d = start; d <= end; d++) merged *= sh[d];
    shape[k++] = merged;
    for (int d = end + 1; d < nd; d++) shape[k++] = sh[d];
    return done(tj_reshape(self, shape, k), outs);
}

static tj_status contiguous(const tj_value *args, tj_value *outs)
{
    tj_tensor *self = args[0].u.t;
    /* as c10: an empty tensor counts as contiguous whatever its strides */
    if (tj_tensor_numel(self) == 0 || tj_tensor_is_contiguous(self)) return done(self, outs);
    return done(tj_clone(self), outs);
}

static tj_status stack(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(stack, args, m);
    tj_tensor *const *ts = args[0].u.ts;
    int n = args[0].n, d;
    tj_wrap_dim("aten::stack", args[1].u.i, m[0].ndim, &d); /* checked by the shape function */
    size_t nbytes = sizeof(tj_tensor *) * (size_t)n;
    tj_tensor **us = tj_alloc(nbytes);
    if (!us) return tj_oom("aten::stack inputs", nbytes);
    tj_tensor *r = NULL;
    int i = 0;
    for (; i < n; i++)
        if (!(us[i] = tj_unsqueeze(ts[i], d))) break;
    if (i == n) r = tj_cat(us, n, d);
    tj_free(us, nbytes);
    return done(r, outs);
}

/* The pieces of the last split, split_with_sizes, chunk or unbind on this
 * thread: a Tensor[] result borrows its array, which stays valid until the
 * thread's next such call. */
#define MAX_SPLIT_CHUNKS 256
static _Thread_local tj_tensor *split_chunks[MAX_SPLIT_CHUNKS];

static tj_status split(const tj_value *args, tj_value *outs)
{
    tj_tensor *self = args[0].u.t;
    int64_t split_size = args[1].u.i, n;
    int d;
    if (tj_split_plan(self, split_size, args[2].u.i, &d, &n) != TJ_OK) return tj_last_status();
    if (n > MAX_SPLIT_CHUNKS)
        return tj_error(TJ_ERR_UNSUPPORTED, "aten::split.Tensor: %" PRId64 " chunks, at most %d through the dispatcher "
                        "(tj_split takes any number)", n, MAX_SPLIT_CHUNKS);
    int64_t size = tj_tensor_size(self, d);
    for (int64_t i = 0; i < n; i++) {
        int64_t s = i * split_size, e = size - s > split_size ? s + split_size : size;
        if (!(split_chunks[i] = tj_slice(self, d, true, s, true, e, 1))) return tj_last_status();
    }
    tj_tensor_mark_multi_output(split_chunks, (int)n);
    outs[0] = tj_v_tensors(split_chunks, (int)n);
    return TJ_OK;
}

/* The public list functions (tjit/ops.h) fill split_chunks; too many
 * pieces for it give their "do not fit" error. */
static tj_status list_done(int n, tj_value *outs)
{
    outs[0] = tj_v_tensors(split_chunks, n);
    return TJ_OK;
}

static tj_status split_with_sizes(const tj_value *args, tj_value *outs)
{
    int n = 0;
    if (tj_split_with_sizes(args[0].u.t, args[1].u.ints, args[1].n, args[2].u.i, split_chunks, MAX_SPLIT_CHUNKS,
                            &n) != TJ_OK)
        return tj_last_status();
    return list_done(n, outs);
}

static tj_status chunk(const tj_value *args, tj_value *outs)
{
    int n = 0;
    if (tj_chunk(args[0].u.t, args[1].u.i, args[2].u.i, split_chunks, MAX_SPLIT_CHUNKS, &n) != TJ_OK)
        return tj_last_status();
    return list_done(n, outs);
}

static tj_status unbind(const tj_value *args, tj_value *outs)
{
    int n = 0;
    if (tj_unbind(args[0].u.t, args[1].u.i, split_chunks, MAX_SPLIT_CHUNKS, &n) != TJ_OK) return tj_last_status();
    return list_done(n, outs);
}

/* narrow, as ATen 1.13: start wraps as a dim index into a dim of the size
 * (any start but the size itself, which starts an empty piece at the end),
 * then the piece [start, start + length) must fit. */
static tj_status narrow(const tj_value *args, tj_value *outs)
{
    const char *op = "aten::narrow";
    tj_tensor *self = args[0].u.t;
    int64_t start = args[2].u.i, length = args[3].u.i;
    int d;
    if (tj_tensor_ndim(self) == 0) return tj_error(TJ_ERR_INDEX, "%s: narrow() cannot be applied to a 0-dim tensor", op);
    if (tj_wrap_dim(op, args[1].u.i, tj_tensor_ndim(self), &d) != TJ_OK) return tj_last_status();
    int64_t size = tj_tensor_size(self, d), bound = size > 0 ? size : 1;
    if (start != size) {
        if (start < -bound || start >= bound)
            return tj_error(TJ_ERR_INDEX, "%s: start out of range (expected to be in range of [%" PRId64 ", %" PRId64
                            "], but got %" PRId64 ")", op, -bound, bound - 1, start);
        if (start < 0) start += bound;
    }
    if (length < 0 || start > size - length)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: start (%" PRId64 ") + length (%" PRId64 ") exceeds dimension "
                        "size (%" PRId64 ")", op, start, length, size);
    return done(tj_slice(self, d, true, start, true, start + length, 1), outs);
}

void tj_register_views_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(reshape), reshape, "reshape");
    tj_op_set_decomposition(TJ_OPS(flatten_using_ints), flatten, "flatten");
    tj_op_set_decomposition(TJ_OPS(contiguous), contiguous, "contiguous");
    tj_op_set_decomposition(TJ_OPS(stack), stack, "stack");
    tj_op_set_decomposition(TJ_OPS(split_Tensor), split, "split");
    tj_op_set_decomposition(TJ_OPS(split_with_sizes), split_with_sizes, "split_with_sizes");
    tj_op_set_decomposition(TJ_OPS(chunk), chunk, "chunk");
    tj_op_set_decomposition(TJ_OPS(unbind_int), unbind, "unbind");
    tj_op_set_decomposition(TJ_OPS(narrow), narrow, "narrow");
}
