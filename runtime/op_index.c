/* gather, scatter_add, scatter (.src, .value, .reduce, .value_reduce), scatter_reduce, index_select,
 * index_add and unfold, as ATen 1.13
 * (ScatterGatherChecks.h, TensorShape.cpp, TensorAdvancedIndexing.cpp):
 * shape functions with PyTorch's checks and messages, and
 * the glue to kernels/index.c. A 0-dim tensor takes part as if it had one
 * dim of size 1. */
#include <inttypes.h>
#include <string.h>

#include "iter.h"
#include "op_elementwise_util.h"
#include "kernels/index.h"
#include "kernels/scatter_reduce.h"
#include "op_index.h"
#include "op_view.h"

#define GATHER "aten::gather"
#define SCATTER_ADD "aten::scatter_add"
#define SCATTER_SRC "aten::scatter.src"
#define SCATTER_VALUE "aten::scatter.value"
#define UNFOLD "aten::unfold"
#define INDEX_SELECT "aten::index_select"
#define INDEX_ADD "aten::index_add"

/* Rank, shape and strides of t with a 0-dim tensor seen as [1]. */
typedef struct geom {
    int ndim;
    int64_t shape[TJ_MAX_DIMS], strides[TJ_MAX_DIMS];
} geom;

static geom geom_of(const tj_tensor *t)
{
    geom g = {.ndim = t->ndim ? t->ndim : 1, .shape = {1}, .strides = {1}};
    if (t->ndim) {
        memcpy(g.shape, t->shape, sizeof g.shape);
        memcpy(g.strides, t->strides, sizeof g.strides);
    }
    return g;
}

/* index: int64, rank of self, and not larger than `bound` (self, or src for
 * scatter_add) in every dim except `dim` (or any dim when all_dims). */
static tj_status check_index(const char *op, const tj_tensor *self, const tj_tensor *index, int dim,
                             const tj_tensor *bound, bool all_dims)
{
    char a[160], b[160];
    if (index->dtype != TJ_INT64)
        return tj_error(TJ_ERR_DTYPE, "%s: expected dtype int64 for index, got %s", op, tj_dtype_name(index->dtype));
    geom s = geom_of(self), i = geom_of(index), r = geom_of(bound);
    if (i.ndim != s.ndim)
        return tj_error(TJ_ERR_SHAPE, "%s: index tensor must have the same number of dimensions as the input tensor "
                                      "(%d != %d)", op, index->ndim, self->ndim);
    if (index->numel == 0) return TJ_OK;
    for (int d = 0; d < i.ndim; d++) {
        if ((all_dims || d != dim) && i.shape[d] > r.shape[d])
            return tj_error(TJ_ERR_SHAPE, "%s: size does not match at dimension %d: expected index %s to be smaller "
                                          "than %s %s%s", op, d, tj_shape_str(index->ndim, index->shape, a, sizeof a),
                            bound == self ? "self" : "src", tj_shape_str(bound->ndim, bound->shape, b, sizeof b),
                            all_dims ? "" : " apart from the indexed dimension");
        if (bound != self && d != dim && i.shape[d] > s.shape[d])
            return tj_error(TJ_ERR_SHAPE, "%s: size does not match at dimension %d: expected index %s to be smaller "
                                          "than self %s apart from dimension %d", op, d,
                            tj_shape_str(index->ndim, index->shape, a, sizeof a),
                            tj_shape_str(self->ndim, self->shape, b, sizeof b), dim);
    }
    return TJ_OK;
}

/* Every index value within the indexed dim of self. */
static tj_status check_values(const char *op, const tj_tensor *self, const tj_tensor *index, int dim)
{
    geom s = geom_of(self), i = geom_of(index);
    int64_t bad;
    tj_k_index_array ix = {tj_tensor_ptr(index), i.strides};
    if (index->numel == 0 ||
        tj_k_index_find_invalid(ix, i.ndim, i.shape, s.shape[dim], &bad, tj_threads_for(index->numel)) < 0)
        return TJ_OK;
    return tj_error(TJ_ERR_INDEX, "%s: index %" PRId64 " is out of bounds for dimension %d with size %" PRId64, op, bad,
                    dim, s.shape[dim]);
}

tj_status tj_meta_gather(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *index = args[2].u.t;
    int dim;
    if (tj_wrap_dim(GATHER, args[1].u.i, self->ndim, &dim) != TJ_OK) return tj_last_status();
    if (check_index(GATHER, self, index, dim, self, false) != TJ_OK) return tj_last_status();
    outs[0].dtype = self->dtype;
    outs[0].ndim = index->ndim;
    memcpy(outs[0].shape, index->shape, sizeof(int64_t) * (size_t)index->ndim);
    return TJ_OK;
}

tj_status tj_kernel_gather(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *self = args[0].u.t, *index = args[2].u.t;
    int dim;
    tj_wrap_dim(GATHER, args[1].u.i, self->ndim, &dim);
    if (index->numel == 0) return TJ_OK;
    geom s = geom_of(self), i = geom_of(index);
    tj_k_index_array src = {tj_tensor_ptr(self), s.strides}, ix = {tj_tensor_ptr(index), i.strides};
    if (!tj_k_gather(tj_dtype_size(self->dtype), tj_tensor_ptr(outs[0]), src, ix, i.ndim, i.shape, dim,
                     s.shape[dim], tj_threads_for(index->numel)))
        return check_values(GATHER, self, index, dim); /* the first invalid value, for the message */
    return TJ_OK;
}

/* scatter_add and scatter.src: src of self's dtype and rank, index within
 * src in every dim and within self apart from dim. */
static tj_status meta_scatter_src(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *index = args[2].u.t, *src = args[3].u.t;
    int dim;
    if (tj_wrap_dim(op, args[1].u.i, self->ndim, &dim) != TJ_OK) return tj_last_status();
    if (src->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: expected self.dtype to be equal to src.dtype (%s != %s)", op,
                        tj_dtype_name(self->dtype), tj_dtype_name(src->dtype));
    if (geom_of(src).ndim != geom_of(self).ndim)
        return tj_error(TJ_ERR_SHAPE, "%s: src must have the same number of dimensions as self (%d != %d)", op,
                        src->ndim, self->ndim);
    if (check_index(op, self, index, dim, src, true) != TJ_OK) return tj_last_status();
    tj_meta_like(&outs[0], self);
    return TJ_OK;
}

tj_status tj_meta_scatter_add(const tj_value *args, tj_meta *outs) { return meta_scatter_src(SCATTER_ADD, args, outs); }

/* scatter_add in one pass over out (tj_k_scatter_add_rows): along the last
 * dim (each row of out written by its own row of index and src only), the
 * index covering every row of self, out contiguous along the last dim and
 * sharing no memory with the operands. Otherwise (an in-place form writing
 * into self among them) the index values are checked before anything is
 * written, so a bad one loses no data. */
static bool one_pass_scatter_add(const tj_tensor *self, const tj_tensor *index, const tj_tensor *src,
                                 const tj_tensor *out, int dim)
{
    geom g = geom_of(self), i = geom_of(index), o = geom_of(out);
    int last = i.ndim - 1;
    if (dim != last || (o.strides[last] != 1 && o.shape[last] > 1)) return false;
    for (int d = 0; d < last; d++)
        if (i.shape[d] != g.shape[d]) return false;
    return tj_overlap_status(out, self) == TJ_OVERLAP_NONE && tj_overlap_status(out, src) == TJ_OVERLAP_NONE &&
           tj_overlap_status(out, index) == TJ_OVERLAP_NONE;
}

tj_status tj_kernel_scatter_add(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *self = args[0].u.t, *index = args[2].u.t, *src = args[3].u.t, *out = outs[0];
    int dim;
    tj_wrap_dim(SCATTER_ADD, args[1].u.i, self->ndim, &dim);
    geom o = geom_of(out), s = geom_of(src), i = geom_of(index), g = geom_of(self);
    tj_k_index_array oa = {tj_tensor_ptr(out), o.strides}, sa = {tj_tensor_ptr(src), s.strides},
                     ia = {tj_tensor_ptr(index), i.strides}, selfa = {tj_tensor_ptr(self), g.strides};
    size_t nb = index->numel ? tj_k_scatter_add_scratch_bytes(out->dtype, oa, sa, ia, i.ndim, i.shape, dim) : 0;
    if (index->numel && !nb && one_pass_scatter_add(self, index, src, out, dim)) {
        if (!tj_k_scatter_add_rows(out->dtype, oa, selfa, sa, ia, i.ndim, i.shape, g.shape[dim],
                                   tj_threads_for(index->numel > out->numel ? index->numel : out->numel)))
            return check_values(SCATTER_ADD, self, index, dim); /* the first invalid value, for the message */
        return TJ_OK;
    }
    if (index->numel && check_values(SCATTER_ADD, self, index, dim) != TJ_OK) return tj_last_status();
    tj_copy_tensor(out, self);
    if (index->numel == 0) return TJ_OK;
    /* the run list through the storage cache: no heap allocation when a
     * replayed plan calls this again */
    size_t got = 0;
    void *runs = NULL;
    if (nb && !(runs = tj_alloc_storage_bytes(nb, &got))) return tj_oom(SCATTER_ADD, nb);
    tj_k_scatter_add(out->dtype, oa, sa, ia, i.ndim, i.shape, dim, runs, tj_threads_for(index->numel));
    tj_free_storage_bytes(runs, got);
    return TJ_OK;
}

/* ---- scatter.src / scatter.value ---- */

tj_status tj_meta_scatter_src(const tj_value *args, tj_meta *outs) { return meta_scatter_src(SCATTER_SRC, args, outs); }

/* scatter.value and scatter.value_reduce: index within self apart from
 * dim; the value converts to self's dtype */
static tj_status meta_scatter_value(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *index = args[2].u.t;
    int dim;
    if (tj_wrap_dim(op, args[1].u.i, self->ndim, &dim) != TJ_OK) return tj_last_status();
    if (check_index(op, self, index, dim, self, false) != TJ_OK) return tj_last_status();
    if (tj_scalar_check(op, "value", &args[3], self->dtype) != TJ_OK) return tj_last_status();
    tj_meta_like(&outs[0], self);
    return TJ_OK;
}

tj_status tj_meta_scatter_value(const tj_value *args, tj_meta *outs)
{
    return meta_scatter_value(SCATTER_VALUE, args, outs);
}

/* A copy of t when it shares memory with out (the in-place form reading
 * self, or a view of it): read before out is written. NULL: none needed
 * (or out of memory, with *st set). */
static tj_tensor *copy_if_overlapping(const tj_tensor *t, const tj_tensor *out, tj_status *st)
{
    *st = TJ_OK;
    if (tj_overlap_status(out, t) == TJ_OVERLAP_NONE) return NULL;
    tj_meta m = {.alias = -1};
    tj_meta_like(&m, t);
    tj_tensor *c = tj_tensor_new_meta(&m, false);
    if (!c) *st = tj_last_status();
    else tj_copy_tensor(c, t);
    return c;
}

/* A copy of self with src's elements (src_strides: src's, or zeros for one
 * value) written at the indexed positions. An index sharing memory with
 * out (scatter_'s self) is read before out is written. */
static tj_status scatter(const char *op, const tj_value *args, const void *src, const int64_t *src_strides,
                         tj_tensor *out)
{
    tj_tensor *self = args[0].u.t, *index = args[2].u.t;
    int dim;
    tj_wrap_dim(op, args[1].u.i, self->ndim, &dim);
    if (index->numel && check_values(op, self, index, dim) != TJ_OK) return tj_last_status();
    tj_status st;
    tj_tensor *ix_copy = copy_if_overlapping(index, out, &st);
    if (st != TJ_OK) return st;
    const tj_tensor *ix = ix_copy ? ix_copy : index;
    tj_copy_tensor(out, self);
    if (ix->numel) {
        geom o = geom_of(out), i = geom_of(ix);
        tj_k_index_array oa = {tj_tensor_ptr(out), o.strides}, sa = {(void *)src, src_strides},
                         ia = {tj_tensor_ptr(ix), i.strides};
        tj_k_scatter(tj_dtype_bytes(out->dtype), oa, sa, ia, i.ndim, i.shape, dim, tj_threads_for(ix->numel));
    }
    if (ix_copy) tj_tensor_release(ix_copy);
    return TJ_OK;
}

/* src sharing memory with out (scatter_'s self) is read before out is
 * written, as index_copy_'s source */
tj_status tj_kernel_scatter_src(const tj_value *args, tj_tensor *const *outs)
{
    tj_status st;
    tj_tensor *copy = copy_if_overlapping(args[3].u.t, outs[0], &st);
    if (st != TJ_OK) return st;
    const tj_tensor *src = copy ? copy : args[3].u.t;
    geom s = geom_of(src);
    st = scatter(SCATTER_SRC, args, tj_tensor_ptr(src), s.strides, outs[0]);
    if (copy) tj_tensor_release(copy);
    return st;
}

tj_status tj_kernel_scatter_value(const tj_value *args, tj_tensor *const *outs)
{
    static const int64_t zero_strides[TJ_MAX_DIMS];
    _Alignas(8) char value[8];
    if (tj_scalar_to(SCATTER_VALUE, &args[3], outs[0]->dtype, value) != TJ_OK) return tj_last_status();
    return scatter(SCATTER_VALUE, args, value, zero_strides, outs[0]);
}

/* ---- index_select / index_add: a 1-D (or 0-dim) index along one dim ----
 * Both run on the gather / scatter_add kernels over the positions P = self's
 * geometry with P[dim] = the number of indices, the index broadcast (stride
 * 0) along every other dim. */

/* index: int64 of rank 0 or 1 (PyTorch also takes int32, which tjit lacks). */
static tj_status check_vector_index(const char *op, const tj_tensor *index)
{
    char a[160];
    if (index->dtype != TJ_INT64)
        return tj_error(TJ_ERR_DTYPE, "%s: expected dtype int64 for index, got %s", op, tj_dtype_name(index->dtype));
    if (index->ndim > 1)
        return tj_error(TJ_ERR_SHAPE, "%s: index must be 1-D or 0-dim, got shape %s", op,
                        tj_shape_str(index->ndim, index->shape, a, sizeof a));
    return TJ_OK;
}

/* The positions P (self's geometry, P[dim] = index->numel) and the index's
 * strides over them. */
static void vector_index_geometry(const tj_tensor *self, const tj_tensor *index, int dim, geom *p, int64_t *istrides)
{
    *p = geom_of(self);
    p->shape[dim] = index->numel;
    for (int d = 0; d < p->ndim; d++) istrides[d] = 0;
    istrides[dim] = index->ndim ? index->strides[0] : 1;
}

tj_status tj_meta_index_select(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *index = args[2].u.t;
    int dim;
    if (tj_wrap_dim(INDEX_SELECT, args[1].u.i, self->ndim, &dim) != TJ_OK) return tj_last_status();
    if (check_vector_index(INDEX_SELECT, index) != TJ_OK) return tj_last_status();
    if (self->ndim == 0 && index->numel == 0)
        return tj_error(TJ_ERR_SHAPE, INDEX_SELECT ": an empty index cannot select from a 0-dim self");
    tj_meta_like(&outs[0], self);
    if (self->ndim) outs[0].shape[dim] = index->numel; /* a 0-dim self gives its one element */
    return TJ_OK;
}

tj_status tj_kernel_index_select(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *self = args[0].u.t, *index = args[2].u.t;
    int dim;
    tj_wrap_dim(INDEX_SELECT, args[1].u.i, self->ndim, &dim);
    /* the 1-D index checked once here, not per row of out by the gather */
    if (index->numel && check_values(INDEX_SELECT, self, index, dim) != TJ_OK) return tj_last_status();
    if (outs[0]->numel == 0) return TJ_OK;
    geom p, s = geom_of(self);
    int64_t istrides[TJ_MAX_DIMS];
    vector_index_geometry(self, index, dim, &p, istrides);
    if (self->ndim == 0) p.shape[0] = 1; /* every index is 0: one copy of the element */
    tj_k_index_array src = {tj_tensor_ptr(self), s.strides}, ix = {tj_tensor_ptr(index), istrides};
    (void)tj_k_gather(tj_dtype_size(self->dtype), tj_tensor_ptr(outs[0]), src, ix, p.ndim, p.shape, dim,
                      s.shape[dim], tj_threads_for(outs[0]->numel)); /* valid: checked above */
    return TJ_OK;
}

/* source's strides over the positions P of index_add: its dim `dim` walks
 * the indices; each other dim is self's size or 1 (broadcast, stride 0).
 * Unlike PyTorch, source must have self's rank (a 0-dim tensor counting as
 * one dim): TJ_ERR_SHAPE otherwise, or when a size does not fit. */
static tj_status index_add_source_strides(const tj_tensor *self, const tj_tensor *source, int dim, int64_t *out)
{
    char a[160], b[160];
    geom s = geom_of(self), src = geom_of(source);
    for (int d = 0; d < s.ndim && src.ndim == s.ndim; d++) {
        if (d != dim && src.shape[d] != s.shape[d] && src.shape[d] != 1) break;
        out[d] = d != dim && src.shape[d] == 1 ? 0 : src.strides[d];
        if (d == s.ndim - 1) return TJ_OK;
    }
    return tj_error(TJ_ERR_SHAPE, INDEX_ADD ": source %s does not match self %s apart from dimension %d (same rank; "
                                  "sizes equal or 1)", tj_shape_str(source->ndim, source->shape, a, sizeof a),
                    tj_shape_str(self->ndim, self->shape, b, sizeof b), dim);
}

tj_status tj_meta_index_add(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *index = args[2].u.t, *source = args[3].u.t;
    int dim;
    if (tj_wrap_dim(INDEX_ADD, args[1].u.i, self->ndim, &dim) != TJ_OK) return tj_last_status();
    if (check_vector_index(INDEX_ADD, index) != TJ_OK) return tj_last_status();
    if (source->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, INDEX_ADD ": self (%s) and source (%s) must have the same dtype",
                        tj_dtype_name(self->dtype), tj_dtype_name(source->dtype));
    if (dim > 0 && dim >= source->ndim)
        return tj_error(TJ_ERR_INDEX, INDEX_ADD ": indexing dim %d is out of bounds of the source tensor with %d dims",
                        dim, source->ndim);
    int64_t along = source->ndim ? source->shape[dim] : 1, strides[TJ_MAX_DIMS];
    if (index->numel != along)
        return tj_error(TJ_ERR_SHAPE, INDEX_ADD ": number of indices (%" PRId64 ") should be equal to source.size(%d) "
                                      "(%" PRId64 ")", index->numel, dim, along);
    if (index_add_source_strides(self, source, dim, strides) != TJ_OK) return tj_last_status();
    tj_meta_like(&outs[0], self);
    return tj_scalar_check(INDEX_ADD, "alpha", &args[4], self->dtype);
}

/* A copy of self, then source * alpha (alpha converted to self's dtype, a
 * product rounded before the sum; none when alpha is 1) added at the
 * indexed positions with scatter_add's loop, in index order. */
tj_status tj_kernel_index_add(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *self = args[0].u.t, *index = args[2].u.t, *source = args[3].u.t, *out = outs[0];
    int dim;
    tj_wrap_dim(INDEX_ADD, args[1].u.i, self->ndim, &dim);
    if (index->numel && check_values(INDEX_ADD, self, index, dim) != TJ_OK) return tj_last_status();
    tj_copy_tensor(out, self);
    if (index->numel == 0 || out->numel == 0) return TJ_OK;
    tj_k_scalar one = tj_ew_scalar(&(tj_value){.kind = TJ_V_INT, .u.i = 1}, out->dtype);
    tj_k_scalar alpha = tj_ew_scalar(&args[4], out->dtype);
    tj_tensor *scaled = NULL;
    if (memcmp(&alpha, &one, sizeof alpha) != 0) {
        tj_meta m = {.alias = -1};
        tj_meta_like(&m, source);
        if (!(scaled = tj_tensor_new_meta(&m, false))) return tj_last_status();
        tj_ew_scalar_box box;
        tj_ew_run_binary(scaled, source, tj_ew_box(&box, &args[4], out->dtype), out->dtype, TJ_K_MUL);
    }
    const tj_tensor *src_t = scaled ? scaled : source;
    geom p, o = geom_of(out);
    int64_t istrides[TJ_MAX_DIMS], sstrides[TJ_MAX_DIMS];
    vector_index_geometry(self, index, dim, &p, istrides);
    index_add_source_strides(self, src_t, dim, sstrides);
    tj_k_index_array oa = {tj_tensor_ptr(out), o.strides}, sa = {tj_tensor_ptr(src_t), sstrides},
                     ia = {tj_tensor_ptr(index), istrides};
    tj_k_scatter_add(out->dtype, oa, sa, ia, p.ndim, p.shape, dim, NULL, tj_threads_for(out->numel));
    if (scaled) tj_tensor_release(scaled);
    return TJ_OK;
}

/* unfold(self, dimension, size, step): a view with dim `dimension` cut into
 * windows of `size` elements `step` apart, the window as a new last dim. */
tj_status tj_meta_unfold(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t size = args[2].u.i, step = args[3].u.i;
    int d;
    if (tj_wrap_dim(UNFOLD, args[1].u.i, self->ndim, &d) != TJ_OK) return tj_last_status();
    if (self->ndim >= TJ_MAX_DIMS)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: a tensor of rank %d cannot gain a dim (at most %d)", UNFOLD,
                        self->ndim, TJ_MAX_DIMS);
    int64_t extent = self->ndim ? self->shape[d] : 1, stride = self->ndim ? self->strides[d] : 1;
    if (size < 0 || size > extent)
        return tj_error(TJ_ERR_SHAPE, "%s: maximum size for tensor at dimension %d is %" PRId64 " but size is %" PRId64,
                        UNFOLD, d, extent, size);
    if (step <= 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: step is %" PRId64 " but must be > 0", UNFOLD, step);
    tj_meta *o = outs;
    o->dtype = self->dtype;
    o->alias = 0;
    o->offset = self->offset;
    o->ndim = self->ndim + 1;
    memcpy(o->shape, self->shape, sizeof(int64_t) * (size_t)self->ndim);
    memcpy(o->strides, self->strides, sizeof(int64_t) * (size_t)self->ndim);
    if (self->ndim) {
        o->shape[d] = (extent - size) / step + 1;
        if (__builtin_mul_overflow(stride, step, &o->strides[d]))
            o->strides[d] = stride; /* step > extent: one window, its stride is irrelevant (as slice) */
    }
    o->shape[o->ndim - 1] = size;
    o->strides[o->ndim - 1] = stride;
    return TJ_OK;
}

/* ---- scatter_reduce.two, scatter.reduce, scatter.value_reduce ---- */

#define SCATTER_REDUCE "aten::scatter_reduce.two"
#define SCATTER_SRC_REDUCE "aten::scatter.reduce"
#define SCATTER_VALUE_REDUCE "aten::scatter.value_reduce"

static const char *const reductions[] = {"sum", "prod", "mean", "amax", "amin"};

/* The reduction named by scatter_reduce.two's `reduce` into *r. */
static tj_status scatter_reduction(const char *reduce, tj_k_scatter_reduction *r)
{
    for (int k = 0; k < 5; k++)
        if (strcmp(reduce, reductions[k]) == 0) {
            *r = (tj_k_scatter_reduction)k;
            return TJ_OK;
        }
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: reduce argument must be either sum, prod, mean, amax or amin, got "
                    "\"%s\"", SCATTER_REDUCE, reduce);
}

/* The reduction named by scatter.reduce's / scatter.value_reduce's `reduce`
 * into *r: "add" is sum, "multiply" prod (both with self's value). */
static tj_status add_or_multiply(const char *op, const char *reduce, tj_k_scatter_reduction *r)
{
    if (strcmp(reduce, "add") == 0) *r = TJ_K_SCATTER_SUM;
    else if (strcmp(reduce, "multiply") == 0) *r = TJ_K_SCATTER_PROD;
    else return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: reduce argument must be either add or multiply, got \"%s\"", op,
                         reduce);
    return TJ_OK;
}

/* Every dtype reduces (bool: or / and, as ATen's bool arithmetic) except
 * bool's mean, which ATen does not implement either. */
static tj_status check_reduce_dtype(const char *op, tj_dtype dt, tj_k_scatter_reduction r)
{
    if (dt == TJ_BOOL && r == TJ_K_SCATTER_MEAN)
        return tj_error(TJ_ERR_DTYPE, "%s: reduce \"mean\" not implemented for bool", op);
    return TJ_OK;
}

/* scatter.src's checks, a known reduction, and no bool mean */
tj_status tj_meta_scatter_reduce_two(const tj_value *args, tj_meta *outs)
{
    tj_k_scatter_reduction r;
    if (meta_scatter_src(SCATTER_REDUCE, args, outs) != TJ_OK) return tj_last_status();
    if (scatter_reduction(args[4].u.s, &r) != TJ_OK) return tj_last_status();
    return check_reduce_dtype(SCATTER_REDUCE, args[0].u.t->dtype, r);
}

tj_status tj_meta_scatter_reduce(const tj_value *args, tj_meta *outs)
{
    tj_k_scatter_reduction r;
    if (meta_scatter_src(SCATTER_SRC_REDUCE, args, outs) != TJ_OK) return tj_last_status();
    if (add_or_multiply(SCATTER_SRC_REDUCE, args[4].u.s, &r) != TJ_OK) return tj_last_status();
    return check_reduce_dtype(SCATTER_SRC_REDUCE, args[0].u.t->dtype, r);
}

tj_status tj_meta_scatter_value_reduce(const tj_value *args, tj_meta *outs)
{
    tj_k_scatter_reduction r;
    if (meta_scatter_value(SCATTER_VALUE_REDUCE, args, outs) != TJ_OK) return tj_last_status();
    if (add_or_multiply(SCATTER_VALUE_REDUCE, args[4].u.s, &r) != TJ_OK) return tj_last_status();
    return check_reduce_dtype(SCATTER_VALUE_REDUCE, args[0].u.t->dtype, r);
}

/* The reduction r of src's elements (src_strides: src's, or zeros for one
 * value; `src` the tensor holding them, or NULL) into a copy of self, in a
 * contiguous result: out itself, or (for the in-place form on a strided
 * self, or a src / index sharing self's memory) a new tensor copied into
 * out afterwards. */
static tj_status scatter_reduce_into(const char *op, const tj_value *args, tj_k_scatter_reduction r,
                                     bool include_self, const tj_tensor *src, const void *src_data,
                                     const int64_t *src_strides, tj_tensor *out)
{
    tj_tensor *self = args[0].u.t, *index = args[2].u.t, *dst = out;
    int dim;
    tj_wrap_dim(op, args[1].u.i, self->ndim, &dim);
    if (index->numel && check_values(op, self, index, dim) != TJ_OK) return tj_last_status();
    if (index->numel == 0 || out->numel == 0) {
        if (out != self) tj_copy_tensor(out, self);
        return TJ_OK;
    }
    if (!tj_tensor_is_contiguous(out) || (src && tj_overlap_status(out, src) != TJ_OVERLAP_NONE) ||
        tj_overlap_status(out, index) != TJ_OVERLAP_NONE) {
        tj_meta m = {.alias = -1};
        tj_meta_like(&m, out);
        if (!(dst = tj_tensor_new_meta(&m, false))) return tj_last_status();
    }
    if (dst != self) tj_copy_tensor(dst, self);
    size_t nb = r == TJ_K_SCATTER_MEAN ? sizeof(int64_t) * (size_t)out->numel : 0, got = 0;
    int64_t *count = NULL;
    if (nb && !(count = tj_alloc_storage_bytes(nb, &got))) {
        if (dst != out) tj_tensor_release(dst);
        return tj_oom(op, nb);
    }
    geom o = geom_of(dst), i = geom_of(index);
    tj_k_index_array sa = {(void *)src_data, src_strides}, ia = {tj_tensor_ptr(index), i.strides};
    tj_k_scatter_reduce(dst->dtype, r, include_self, tj_tensor_ptr(dst), o.shape, sa, ia, i.ndim, i.shape, dim, count);
    if (count) tj_free_storage_bytes(count, got);
    if (dst != out) {
        tj_copy_tensor(out, dst);
        tj_tensor_release(dst);
    }
    return TJ_OK;
}

tj_status tj_kernel_scatter_reduce_two(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *src = args[3].u.t;
    tj_k_scatter_reduction r = TJ_K_SCATTER_SUM;
    scatter_reduction(args[4].u.s, &r);
    geom s = geom_of(src);
    return scatter_reduce_into(SCATTER_REDUCE, args, r, args[5].u.b, src, tj_tensor_ptr(src), s.strides, outs[0]);
}

tj_status tj_kernel_scatter_reduce(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *src = args[3].u.t;
    tj_k_scatter_reduction r = TJ_K_SCATTER_SUM;
    add_or_multiply(SCATTER_SRC_REDUCE, args[4].u.s, &r);
    geom s = geom_of(src);
    return scatter_reduce_into(SCATTER_SRC_REDUCE, args, r, true, src, tj_tensor_ptr(src), s.strides, outs[0]);
}

tj_status tj_kernel_scatter_value_reduce(const tj_value *args, tj_tensor *const *outs)
{
    static const int64_t zero_strides[TJ_MAX_DIMS];
    _Alignas(8) char value[8];
    tj_k_scatter_reduction r = TJ_K_SCATTER_SUM;
    add_or_multiply(SCATTER_VALUE_REDUCE, args[4].u.s, &r);
    if (tj_scalar_to(SCATTER_VALUE_REDUCE, &args[3], outs[0]->dtype, value) != TJ_OK) return tj_last_status();
    return scatter_reduce_into(SCATTER_VALUE_REDUCE, args, r, true, NULL, value, zero_strides, outs[0]);
}

/* ---- index_copy / index_fill.int_Scalar: overwriting writes along one dim ----
 * Both run on the scatter kernel over the positions P of index_select (the
 * last of duplicate indices wins, as PyTorch's CPU loop). */

#define INDEX_COPY "aten::index_copy"
#define INDEX_FILL "aten::index_fill.int_Scalar"

/* source: self's dtype and rank (0-dim counting as one dim) and self's
 * shape with dim resized to the number of indices, as ATen's index_copy_ */
tj_status tj_meta_index_copy(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *index = args[2].u.t, *source = args[3].u.t;
    char a[160], b[160];
    int dim;
    if (tj_wrap_dim(INDEX_COPY, args[1].u.i, self->ndim, &dim) != TJ_OK) return tj_last_status();
    if (check_vector_index(INDEX_COPY, index) != TJ_OK) return tj_last_status();
    if (source->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, INDEX_COPY ": self and source expected to have the same dtype, but got (self) %s "
                        "and (source) %s", tj_dtype_name(self->dtype), tj_dtype_name(source->dtype));
    geom s = geom_of(self), src = geom_of(source);
    bool ok = src.ndim == s.ndim && src.shape[dim] == index->numel;
    for (int d = 0; ok && d < s.ndim; d++) ok = d == dim || src.shape[d] == s.shape[d];
    if (!ok)
        return tj_error(TJ_ERR_SHAPE, INDEX_COPY ": source %s must have the shape of self %s with dimension %d of "
                        "size %" PRId64 " (the number of indices)",
                        tj_shape_str(source->ndim, source->shape, a, sizeof a),
                        tj_shape_str(self->ndim, self->shape, b, sizeof b), dim, index->numel);
    tj_meta_like(&outs[0], self);
    return TJ_OK;
}

/* A copy of self (none when writing into self itself) with src's elements
 * (src_strides over the positions P; zeros for one value) written at the
 * indexed positions; index: valid values, int64 of rank <= 1 */
static void index_write(const tj_tensor *self, const int64_t *index, int64_t index_stride, int64_t nindex, int dim,
                        const void *src, const int64_t *src_strides, tj_tensor *out)
{
    if (out != self) tj_copy_tensor(out, self);
    if (nindex == 0 || out->numel == 0) return;
    geom p = geom_of(self), o = geom_of(out);
    p.shape[dim] = nindex;
    int64_t istrides[TJ_MAX_DIMS] = {0};
    istrides[dim] = index_stride;
    tj_k_index_array oa = {tj_tensor_ptr(out), o.strides}, sa = {(void *)src, src_strides},
                     ia = {(void *)index, istrides};
    tj_k_scatter(tj_dtype_bytes(out->dtype), oa, sa, ia, p.ndim, p.shape, dim, tj_threads_for(out->numel));
}

tj_status tj_kernel_index_copy(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *self = args[0].u.t, *index = args[2].u.t, *source = args[3].u.t;
    int dim;
    tj_wrap_dim(INDEX_COPY, args[1].u.i, self->ndim, &dim);
    if (index->numel && check_values(INDEX_COPY, self, index, dim) != TJ_OK) return tj_last_status();
    tj_status st_s, st_i;
    tj_tensor *src_copy = copy_if_overlapping(source, outs[0], &st_s);
    tj_tensor *ix_copy = copy_if_overlapping(index, outs[0], &st_i);
    if (st_s == TJ_OK && st_i == TJ_OK) {
        const tj_tensor *src = src_copy ? src_copy : source, *ix = ix_copy ? ix_copy : index;
        geom sg = geom_of(src);
        index_write(self, (const int64_t *)tj_tensor_ptr(ix), ix->ndim ? ix->strides[0] : 1, ix->numel, dim,
                    tj_tensor_ptr(src), sg.strides, outs[0]);
    }
    if (src_copy) tj_tensor_release(src_copy);
    if (ix_copy) tj_tensor_release(ix_copy);
    return st_s != TJ_OK ? st_s : st_i;
}

/* index_fill's two overloads: index int64 of rank <= 1 (negative values
 * count from the end, as ATen's index_fill); value a Scalar self's dtype
 * holds, or a 0-dim tensor holding one (checked by the kernel: a fake
 * tensor's value is not known) */
#define INDEX_FILL_TENSOR "aten::index_fill.int_Tensor"

static tj_status meta_index_fill(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *index = args[2].u.t;
    int dim;
    if (tj_wrap_dim(op, args[1].u.i, self->ndim, &dim) != TJ_OK) return tj_last_status();
    if (check_vector_index(op, index) != TJ_OK) return tj_last_status();
    if (args[3].kind == TJ_V_TENSOR) {
        if (args[3].u.t->ndim != 0)
            return tj_error(TJ_ERR_SHAPE, "%s: index_fill_ only supports a 0-dimensional value tensor, but got tensor "
                            "with %d dimension(s)", op, args[3].u.t->ndim);
    } else if (tj_scalar_check(op, "value", &args[3], self->dtype) != TJ_OK) {
        return tj_last_status();
    }
    tj_meta_like(&outs[0], self);
    return TJ_OK;
}

tj_status tj_meta_index_fill_int_Scalar(const tj_value *args, tj_meta *outs)
{
    return meta_index_fill(INDEX_FILL, args, outs);
}

tj_status tj_meta_index_fill_int_Tensor(const tj_value *args, tj_meta *outs)
{
    return meta_index_fill(INDEX_FILL_TENSOR, args, outs);
}

/* The element of a 0-dim tensor as a Scalar of its kind. */
static tj_value scalar_of(const tj_tensor *t)
{
    const char *p = tj_tensor_ptr(t);
    switch (t->dtype) {
    case TJ_FLOAT32: return tj_v_float(*(const float *)p);
    case TJ_FLOAT64: return tj_v_float(*(const double *)p);
    case TJ_BOOL: return tj_v_bool(*(const uint8_t *)p != 0);
    default: return tj_v_int(tj_load_i64(p, t->dtype));
    }
}

static tj_status kernel_index_fill(const char *op, const tj_value *args, tj_tensor *const *outs)
{
    static const int64_t zero_strides[TJ_MAX_DIMS];
    tj_tensor *self = args[0].u.t, *index = args[2].u.t;
    /* the value is read before self is written: it may be one of self's elements */
    tj_value v = args[3].kind == TJ_V_TENSOR ? scalar_of(args[3].u.t) : args[3];
    if (args[3].kind == TJ_V_TENSOR && tj_scalar_check(op, "value", &v, self->dtype) != TJ_OK) return tj_last_status();
    int dim;
    tj_wrap_dim(op, args[1].u.i, self->ndim, &dim);
    int64_t size = self->ndim ? self->shape[dim] : 1, n = index->numel, step = index->ndim ? index->strides[0] : 1;
    const int64_t *ix = (const int64_t *)tj_tensor_ptr(index);
    size_t nb = sizeof(int64_t) * (size_t)n, got = 0;
    int64_t *wrapped = n ? tj_alloc_storage_bytes(nb, &got) : NULL;
    if (n && !wrapped) return tj_oom(op, nb);
    for (int64_t k = 0; k < n; k++) {
        int64_t i = ix[k * step];
        if (i < -size || i >= size) {
            tj_free_storage_bytes(wrapped, got);
            return tj_error(TJ_ERR_INDEX, "%s: index %" PRId64 " is out of bounds for dimension %d with size %" PRId64,
                            op, i, dim, size);
        }
        wrapped[k] = i < 0 ? i + size : i;
    }
    _Alignas(8) char value[8];
    tj_scalar_to(op, &v, outs[0]->dtype, value);
    index_write(self, wrapped, 1, n, dim, value, zero_strides, outs[0]);
    if (wrapped) tj_free_storage_bytes(wrapped, got);
    return TJ_OK;
}

tj_status tj_kernel_index_fill_int_Scalar(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_index_fill(INDEX_FILL, args, outs);
}

tj_status tj_kernel_index_fill_int_Tensor(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_index_fill(INDEX_FILL_TENSOR, args, outs);
}
