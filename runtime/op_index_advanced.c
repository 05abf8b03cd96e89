/* Advanced indexing, as ATen 1.13 (TensorAdvancedIndexing.cpp, IndexingUtils):
 * index.Tensor and index_put over a Tensor?[] of int64 index tensors and
 * bool masks, None entries standing for full slices. Shape functions with
 * PyTorch's checks and messages, and the glue to kernels/index_advanced.c.
 *
 * A bool mask of m dims covers m dims of self and stands for its true
 * positions, m int64 index tensors of [count] (ATen's expandTensors: the
 * columns of mask.nonzero()). The index tensors broadcast together to a
 * block of dims B. When the indexed dims of self are adjacent, B replaces
 * them in place in the result (x[:, i, j] -> [x0, B..., rest]); when they are
 * not (x[i, :, j]), B goes first, as in NumPy.
 *
 * A mask makes index.Tensor's result shape depend on its values: a fake
 * mask (fake-mode tracing, tj_compile) is refused there, as nonzero
 * (runtime/op_masked.c). index_put's result has self's shape whatever the
 * count: with a single mask and values that broadcast along the count (x[mask]
 * = v, v of the shape of the dims after the mask's, or fewer), its call is
 * static, and a fake mask passes; the kernel finds the positions at run time. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "iter.h"
#include "kernels/index.h"
#include "kernels/index_advanced.h"
#include "kernels/masked.h"
#include "op_index.h"
#include "op_masked.h"
#include "op_view.h"

#define INDEX "aten::index.Tensor"
#define INDEX_PUT "aten::index_put"

/* The index of one dim of self: an int64 tensor, or one column of a bool
 * mask's positions ([count] values `stride` apart in the layout's table). */
typedef struct adv_index {
    const tj_tensor *t; /* the int64 tensor; NULL for a mask's column */
    const int64_t *data; /* its values; a mask's column: set by mask_positions */
    int ndim;
    const int64_t *shape, *strides; /* t's, or the column's */
    int64_t col_shape, col_stride;
} adv_index;

/* A bool mask of the index list, covering self's dims [dim, dim + ndim). */
typedef struct adv_mask {
    const tj_tensor *t;
    int dim;
    int64_t count; /* its true elements (1 for a fake mask: shapes only) */
} adv_mask;

/* How an index call lays self's dims out in the result. */
typedef struct adv_layout {
    int n;                            /* self's dims the index list covers */
    adv_index idx[TJ_MAX_DIMS];       /* of self's dim k; data and t both NULL for None unless `indexed` */
    bool indexed[TJ_MAX_DIMS];
    int n_masks, n_int;               /* bool masks and int64 tensors in the list */
    adv_mask masks[TJ_MAX_DIMS];
    bool count_unknown;               /* a mask is fake */
    int64_t *positions;               /* the masks' positions (mask_positions), from the storage cache */
    size_t positions_bytes;
    int bndim;
    int64_t bshape[TJ_MAX_DIMS];      /* the index tensors broadcast together */
    int pre_dims[TJ_MAX_DIMS], post_dims[TJ_MAX_DIMS]; /* self's dims before / after B in the result */
    tj_k_adv_shape ks;
    int ndim;                         /* the result: pre, B, post */
    int64_t shape[TJ_MAX_DIMS];
    int64_t numel;                    /* the result's elements */
} adv_layout;

/* Entry k of the index list, a bool mask, covering self's dims from *d on. */
static tj_status add_mask(const char *op, const tj_tensor *self, const tj_tensor *mask, int k, int *d, adv_layout *a)
{
    char s1[160], s2[160];
    if (mask->ndim == 0)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: index %d is a 0-dim bool mask (x[True]): unsqueeze self instead", op, k);
    if (*d + mask->ndim > self->ndim)
        return tj_error(TJ_ERR_INDEX, "%s: too many indices for tensor of dimension %d (index %d, a bool mask %s, "
                        "reaches dim %d)", op, self->ndim, k, tj_shape_str(mask->ndim, mask->shape, s1, sizeof s1),
                        *d + mask->ndim - 1);
    for (int j = 0; j < mask->ndim; j++)
        if (mask->shape[j] != self->shape[*d + j])
            return tj_error(TJ_ERR_INDEX, "%s: The shape of the mask %s at index %d does not match the shape of the "
                            "indexed tensor %s at index %d", op, tj_shape_str(mask->ndim, mask->shape, s1, sizeof s1),
                            j, tj_shape_str(self->ndim, self->shape, s2, sizeof s2), *d + j);
    adv_mask *m = &a->masks[a->n_masks++];
    m->t = mask;
    m->dim = *d;
    m->count = 1;
    if (mask->fake) a->count_unknown = true;
    else m->count = tj_k_count_nonzero(TJ_BOOL, tj_tensor_ptr(mask), mask->ndim, mask->shape, mask->strides);
    for (int j = 0; j < mask->ndim; j++) {
        adv_index *ix = &a->idx[*d + j];
        a->indexed[*d + j] = true;
        *ix = (adv_index){.ndim = 1, .col_shape = m->count, .col_stride = mask->ndim};
        ix->shape = &ix->col_shape;
        ix->strides = &ix->col_stride;
    }
    *d += mask->ndim;
    return TJ_OK;
}

/* Reads the index list: each entry's dims of self, dtype and shape. */
static tj_status read_indices(const char *op, const tj_tensor *self, const tj_value *indices, adv_layout *a)
{
    if (indices->n > self->ndim)
        return tj_error(TJ_ERR_INDEX, "%s: too many indices for tensor of dimension %d (got %d)", op, self->ndim,
                        indices->n);
    int d = 0;
    for (int k = 0; k < indices->n; k++) {
        const tj_tensor *t = indices->u.ts[k];
        if (t && t->dtype == TJ_BOOL) {
            if (add_mask(op, self, t, k, &d, a) != TJ_OK) return tj_last_status();
            continue;
        }
        if (d >= self->ndim)
            return tj_error(TJ_ERR_INDEX, "%s: too many indices for tensor of dimension %d (index %d follows bool "
                            "masks covering its dims)", op, self->ndim, k);
        if (t && t->dtype != TJ_INT64)
            return tj_error(TJ_ERR_DTYPE, "%s: tensors used as indices must be int64 or bool, index %d is %s", op, k,
                            tj_dtype_name(t->dtype));
        if (t) {
            a->idx[d] = (adv_index){.t = t, .data = (const int64_t *)tj_tensor_ptr(t), .ndim = t->ndim,
                                    .shape = t->shape, .strides = t->strides};
            a->indexed[d] = true;
            a->n_int++;
        }
        d++;
    }
    a->n = d;
    return TJ_OK;
}

static tj_status layout_of(const char *op, const tj_tensor *self, const tj_value *indices, adv_layout *a)
{
    char s1[160], s2[160];
    /* what is read before it is written: the rest (per-dim entries, masks,
     * shapes) is filled as the list is read. Clearing all of it (about
     * 1.6 KB, twice a call) showed in small calls: bench_micro index,
     * x[idx] of f32[1000, 64] by 32 indices, +3% */
    memset(a->indexed, 0, sizeof a->indexed);
    a->n_masks = a->n_int = 0;
    a->count_unknown = false;
    a->positions = NULL;
    a->ks.pre_ndim = a->ks.post_ndim = 0;
    if (read_indices(op, self, indices, a) != TJ_OK) return tj_last_status();
    int first = -1, last = -1, defined = 0;
    for (int k = 0; k < a->n; k++) {
        if (!a->indexed[k]) continue;
        const adv_index *t = &a->idx[k];
        int64_t shape[TJ_MAX_DIMS];
        int ndim;
        if (defined++ == 0) {
            a->bndim = t->ndim;
            memcpy(a->bshape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
        } else if (tj_broadcast_shapes(op, a->bndim, a->bshape, t->ndim, t->shape, &ndim, shape) == TJ_OK) {
            a->bndim = ndim;
            memcpy(a->bshape, shape, sizeof shape);
        } else {
            return tj_error(TJ_ERR_SHAPE, "%s: shape mismatch: indexing tensors could not be broadcast together "
                            "with shapes %s (indices before dim %d) and %s (dim %d)", op,
                            tj_shape_str(a->bndim, a->bshape, s1, sizeof s1), k,
                            tj_shape_str(t->ndim, t->shape, s2, sizeof s2), k);
        }
        if (first < 0) first = k;
        last = k;
    }
    if (!defined)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: at least one index must be a tensor (got %d None)", op,
                        indices->n);
    bool adjacent = true;
    for (int k = first; k <= last; k++) adjacent &= a->indexed[k];
    /* adjacent: self's dims before `first` lead; otherwise B leads */
    tj_k_adv_shape *ks = &a->ks;
    for (int d = 0; d < self->ndim; d++) {
        if (d < a->n && a->indexed[d]) continue;
        bool pre = adjacent && d < first;
        int *slot = pre ? &a->pre_dims[ks->pre_ndim] : &a->post_dims[ks->post_ndim];
        *slot = d;
        if (pre) ks->pre[ks->pre_ndim++] = self->shape[d];
        else ks->post[ks->post_ndim++] = self->shape[d];
    }
    a->ndim = ks->pre_ndim + a->bndim + ks->post_ndim;
    if (a->ndim > TJ_MAX_DIMS)
        return tj_error(TJ_ERR_SHAPE, "%s: the result would have %d dims, more than %d", op, a->ndim, TJ_MAX_DIMS);
    /* B's positions get two int64 offset tables; the result (index_put's
     * written elements) is at most a view's count */
    char who[64];
    snprintf(who, sizeof who, "%s: the broadcast indices", op);
    if (tj_checked_numel(a->bndim, a->bshape, &ks->nb, who) != TJ_OK) return tj_last_status();
    int r = 0;
    for (int d = 0; d < ks->pre_ndim; d++) a->shape[r++] = ks->pre[d];
    for (int d = 0; d < a->bndim; d++) a->shape[r++] = a->bshape[d];
    for (int d = 0; d < ks->post_ndim; d++) a->shape[r++] = ks->post[d];
    snprintf(who, sizeof who, "%s: the indexing result", op);
    return tj_checked_view_numel(a->ndim, a->shape, &a->numel, who);
}

/* The side of a tensor laid out like the result (index's output, index_put's
 * values broadcast to it): strides over the result's dims. */
static void result_side(const adv_layout *a, void *data, const int64_t *strides, int64_t *offs, tj_k_adv_side *s)
{
    const tj_k_adv_shape *ks = &a->ks;
    s->data = data;
    memcpy(s->pre_strides, strides, sizeof(int64_t) * (size_t)ks->pre_ndim);
    memcpy(s->post_strides, strides + ks->pre_ndim + a->bndim, sizeof(int64_t) * (size_t)ks->post_ndim);
    const int64_t *bs = strides + ks->pre_ndim;
    for (int64_t b = 0; b < ks->nb; b++) {
        int64_t off = 0, i = b;
        for (int d = a->bndim - 1; d >= 0; d--) {
            off += i % a->bshape[d] * bs[d];
            i /= a->bshape[d];
        }
        offs[b] = off;
    }
    s->offs = offs;
}

/* An index's strides over B (0 on the dims it is broadcast along). */
static void broadcast_strides(const adv_index *ix, int bndim, int64_t *strides)
{
    int lead = bndim - ix->ndim;
    for (int d = 0; d < bndim; d++)
        strides[d] = d < lead || ix->shape[d - lead] == 1 ? 0 : ix->strides[d - lead];
}

/* The masks' true positions (their nonzero()), into one table from the
 * storage cache that the mask columns then read. Counts found again here
 * that differ from the layout's (a caller's mask written meanwhile) are
 * refused: the layout was sized for those. */
static tj_status mask_positions(const char *op, adv_layout *a)
{
    if (!a->n_masks) return TJ_OK;
    size_t n = 0;
    for (int i = 0; i < a->n_masks; i++) n += (size_t)(a->masks[i].count * a->masks[i].t->ndim);
    size_t bytes = sizeof(int64_t) * (n ? n : 1);
    if (!(a->positions = tj_alloc_storage_bytes(bytes, &a->positions_bytes))) return tj_oom(op, bytes);
    int64_t *at = a->positions;
    for (int i = 0; i < a->n_masks; i++) {
        const adv_mask *m = &a->masks[i];
        const tj_tensor *t = m->t;
        int64_t found = tj_k_nonzero(TJ_BOOL, tj_tensor_ptr(t), t->ndim, t->shape, t->strides, at, m->count);
        if (found != m->count) return tj_stale_count_error(op, "a bool mask's count of true elements", found, m->count);
        for (int j = 0; j < t->ndim; j++) a->idx[m->dim + j].data = at + j;
        at += m->count * t->ndim;
    }
    return TJ_OK;
}

static void layout_free(adv_layout *a)
{
    if (a->positions) tj_free_storage_bytes(a->positions, a->positions_bytes);
    a->positions = NULL;
}

/* The side of self (or of index_put's output, which has self's shape): each
 * B position's offset from the index values, wrapped when negative. Fails
 * on the first value out of range, before anything is written. */
static tj_status self_side(const char *op, const adv_layout *a, const tj_tensor *t, int64_t *offs, tj_k_adv_side *s)
{
    const tj_k_adv_shape *ks = &a->ks;
    s->data = tj_tensor_ptr(t);
    for (int d = 0; d < ks->pre_ndim; d++) s->pre_strides[d] = t->strides[a->pre_dims[d]];
    for (int d = 0; d < ks->post_ndim; d++) s->post_strides[d] = t->strides[a->post_dims[d]];
    int64_t istrides[TJ_MAX_DIMS][TJ_MAX_DIMS];
    for (int k = 0; k < a->n; k++)
        if (a->indexed[k]) broadcast_strides(&a->idx[k], a->bndim, istrides[k]);
    for (int64_t b = 0; b < ks->nb; b++) {
        int64_t coord[TJ_MAX_DIMS], i = b, off = 0;
        for (int d = a->bndim - 1; d >= 0; d--) {
            coord[d] = i % a->bshape[d];
            i /= a->bshape[d];
        }
        for (int k = 0; k < a->n; k++) {
            if (!a->indexed[k]) continue;
            int64_t at = 0;
            for (int d = 0; d < a->bndim; d++) at += coord[d] * istrides[k][d];
            int64_t v = a->idx[k].data[at], size = t->shape[k];
            if (v < -size || v >= size)
                return tj_error(TJ_ERR_INDEX, "%s: index %" PRId64 " is out of bounds for dimension %d with size %" PRId64,
                                op, v, k, size);
            off += (v < 0 ? v + size : v) * t->strides[k];
        }
        offs[b] = off;
    }
    s->offs = offs;
    return TJ_OK;
}

/* Two offset tables of nb entries from the storage cache (no heap allocation
 * when a replayed plan runs again). */
static int64_t *offsets_alloc(const char *op, int64_t nb, size_t *got)
{
    size_t bytes = sizeof(int64_t) * 2 * (size_t)(nb ? nb : 1);
    int64_t *p = tj_alloc_storage_bytes(bytes, got);
    if (!p) tj_oom(op, bytes);
    return p;
}

tj_status tj_meta_index_Tensor(const tj_value *args, tj_meta *outs)
{
    adv_layout a;
    const tj_tensor *self = args[0].u.t;
    if (layout_of(INDEX, self, &args[1], &a) != TJ_OK) return tj_last_status();
    for (int i = 0; i < a.n_masks; i++) {
        int64_t count;
        if (a.masks[i].t->fake) return tj_count_nonzero(INDEX, "a bool mask index", a.masks[i].t, &count); /* the refusal */
    }
    outs[0].dtype = self->dtype;
    outs[0].ndim = a.ndim;
    memcpy(outs[0].shape, a.shape, sizeof(int64_t) * (size_t)a.ndim);
    return TJ_OK;
}

/* index_select's kernel for one index tensor (at entry k, the others None)
 * whose values all lie in [0, size) and that reads as a vector (1-D, 0-dim
 * or contiguous): the (contiguous) result's layout [pre, B, post] is then
 * self's with dim k replaced by the index's elements. False when
 * that does not hold: negative values (which wrap) and invalid ones (an
 * error) are left to the general path. */
static bool gather_one_index(const adv_layout *a, const tj_tensor *self, tj_tensor *out)
{
    int k = -1;
    for (int i = 0; i < a->n; i++) {
        if (!a->indexed[i]) continue;
        if (k >= 0) return false;
        k = i;
    }
    const tj_tensor *ix = a->idx[k].t;
    if (!ix) return false; /* a mask's column: the general path */
    int64_t stride = ix->ndim == 1 ? ix->strides[0] : 1, bad;
    if (ix->ndim > 1 && !tj_tensor_is_contiguous(ix)) return false;
    int64_t pos[TJ_MAX_DIMS], istrides[TJ_MAX_DIMS] = {0};
    pos[0] = ix->numel;
    istrides[0] = stride;
    tj_k_index_array values = {tj_tensor_ptr(ix), istrides};
    if (tj_k_index_find_invalid(values, 1, pos, self->shape[k], &bad, tj_threads_for(ix->numel)) >= 0) return false;
    memcpy(pos, self->shape, sizeof(int64_t) * (size_t)self->ndim);
    pos[k] = ix->numel;
    istrides[0] = 0;
    istrides[k] = stride;
    tj_k_index_array src = {tj_tensor_ptr(self), self->strides}, index = {tj_tensor_ptr(ix), istrides};
    (void)tj_k_gather(tj_dtype_size(self->dtype), tj_tensor_ptr(out), src, index, self->ndim, pos, k, self->shape[k],
                      tj_threads_for(out->numel)); /* valid: checked above */
    return true;
}

tj_status tj_kernel_index_Tensor(const tj_value *args, tj_tensor *const *outs)
{
    adv_layout a;
    const tj_tensor *self = args[0].u.t;
    tj_tensor *out = outs[0];
    /* checked by the shape function, but for the masks' counts, which a
     * graph's result recorded may not match */
    if (layout_of(INDEX, self, &args[1], &a) != TJ_OK) return tj_last_status();
    if (a.ndim != out->ndim || memcmp(a.shape, out->shape, sizeof(int64_t) * (size_t)a.ndim) != 0)
        return tj_stale_count_error(INDEX, "the indexed positions", a.ks.nb, out->shape[a.ks.pre_ndim]);
    if (gather_one_index(&a, self, out)) return TJ_OK;
    size_t got;
    int64_t *offs = offsets_alloc(INDEX, a.ks.nb, &got);
    if (!offs) return tj_last_status();
    tj_k_adv_side src, dst;
    tj_status st = mask_positions(INDEX, &a);
    if (st == TJ_OK) st = self_side(INDEX, &a, self, offs, &src);
    if (st == TJ_OK && out->numel) {
        result_side(&a, tj_tensor_ptr(out), out->strides, offs + a.ks.nb, &dst);
        tj_k_adv_copy(self->dtype, dst, src, &a.ks, false, true, tj_threads_for(out->numel));
    }
    layout_free(&a);
    tj_free_storage_bytes(offs, got);
    return st;
}

/* values broadcast to the indexing result (a's shape). */
static tj_status check_values(const adv_layout *a, const tj_tensor *values)
{
    char s1[160], s2[160];
    bool fits = values->ndim <= a->ndim;
    for (int d = 1; fits && d <= values->ndim; d++)
        fits = values->shape[values->ndim - d] == 1 || values->shape[values->ndim - d] == a->shape[a->ndim - d];
    if (fits) return TJ_OK;
    return tj_error(TJ_ERR_SHAPE, "%s: shape mismatch: value tensor of shape %s cannot be broadcast to indexing "
                    "result of shape %s", INDEX_PUT, tj_shape_str(values->ndim, values->shape, s1, sizeof s1),
                    tj_shape_str(a->ndim, a->shape, s2, sizeof s2));
}

/* A fake mask (its count unknown, 1 in the layout) passes when the call
 * does not depend on the count: one mask and no int64 index (the layout
 * then has B = [count]), values of size 1 along B or not reaching it. */
static tj_status check_static_count(const adv_layout *a, const tj_tensor *values)
{
    int b_from_end = a->ndim - a->ks.pre_ndim; /* B's dim counted from the result's end */
    bool reaches = values->ndim >= b_from_end;
    if (a->n_masks == 1 && !a->n_int && (!reaches || values->shape[values->ndim - b_from_end] == 1)) return TJ_OK;
    int64_t count;
    return tj_count_nonzero(INDEX_PUT, a->n_masks > 1 || a->n_int ? "bool masks with other index tensors"
                                                                  : "values broadcast along the mask's true elements",
                            a->masks[0].t, &count);
}

tj_status tj_meta_index_put(const tj_value *args, tj_meta *outs)
{
    adv_layout a;
    const tj_tensor *self = args[0].u.t, *values = args[2].u.t;
    if (layout_of(INDEX_PUT, self, &args[1], &a) != TJ_OK) return tj_last_status();
    if (values->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: Index put requires the source and destination dtypes match, got %s for "
                        "the destination and %s for the source", INDEX_PUT, tj_dtype_name(self->dtype),
                        tj_dtype_name(values->dtype));
    if (a.count_unknown && check_static_count(&a, values) != TJ_OK) return tj_last_status();
    if (check_values(&a, values) != TJ_OK) return tj_last_status();
    tj_meta_like(&outs[0], self);
    return TJ_OK;
}

/* out: a new tensor (index_put) or self itself (index_put_, through the
 * in-place wrapper of op_inplace.c). */
tj_status tj_kernel_index_put(const tj_value *args, tj_tensor *const *outs)
{
    adv_layout a;
    const tj_tensor *self = args[0].u.t;
    tj_tensor *values = args[2].u.t, *out = outs[0];
    bool accumulate = args[3].u.b;
    /* checked by the shape function, but for the masks' counts, which
     * values (recorded for a graph's) may no longer fit */
    if (layout_of(INDEX_PUT, self, &args[1], &a) != TJ_OK || check_values(&a, values) != TJ_OK)
        return tj_last_status();
    size_t got;
    int64_t *offs = offsets_alloc(INDEX_PUT, a.ks.nb, &got);
    if (!offs) return tj_last_status();
    tj_k_adv_side dst, src;
    tj_status st = mask_positions(INDEX_PUT, &a);
    if (st == TJ_OK) st = self_side(INDEX_PUT, &a, out, offs, &dst); /* out has self's shape */
    tj_tensor *copy = NULL;
    /* values sharing memory with what is written (x.index_put_(i, x[0])) are read from a copy first */
    if (st == TJ_OK && out == self && values->numel && tj_overlap_status(out, values) != TJ_OVERLAP_NONE) {
        tj_meta m = {.dtype = values->dtype, .ndim = values->ndim, .alias = -1};
        memcpy(m.shape, values->shape, sizeof(int64_t) * (size_t)values->ndim);
        if (!(copy = tj_tensor_new_meta(&m, false))) st = tj_last_status();
        else tj_copy_tensor(copy, values);
    }
    if (st == TJ_OK) {
        const tj_tensor *v = copy ? copy : values;
        if (out != self) tj_copy_tensor(out, self);
        int64_t vstrides[TJ_MAX_DIMS];
        tj_broadcast_strides(v, a.ndim, a.shape, vstrides);
        result_side(&a, tj_tensor_ptr(v), vstrides, offs + a.ks.nb, &src);
        tj_k_adv_copy(out->dtype, dst, src, &a.ks, accumulate, false, tj_threads_for(a.numel));
    }
    tj_tensor_release(copy);
    layout_free(&a);
    tj_free_storage_bytes(offs, got);
    return st;
}
