/* Memory overlap between tensors (issue 9): which storage elements a tensor
 * touches, whether two of its elements may share one, whether two tensors
 * may. Used to refuse in-place operators whose operands overlap the result
 * in another layout (runtime/op_inplace.c) and plan outputs that overlap
 * each other (tracer/plan.c), instead of computing wrong values, and to
 * keep SGD's fused step to momentum buffers apart from their parameter and
 * gradient (runtime/optim.c); and ATen's own rule, for the operators that
 * refuse exactly what ATen refuses (the in-place indexed writers:
 * runtime/op_inplace.c's aten_overlap_rules). */
#include <string.h>

#include "internal.h"

void tj_element_range(const tj_tensor *t, int64_t *lo, int64_t *hi)
{
    *lo = *hi = t->offset;
    for (int d = 0; d < t->ndim; d++) {
        int64_t span = (t->shape[d] - 1) * t->strides[d];
        if (span < 0) *lo += span;
        else *hi += span;
    }
}

bool tj_layout_element_range(int ndim, const int64_t *shape, const int64_t *strides, int64_t offset, int64_t *lo,
                             int64_t *hi)
{
    *lo = *hi = offset;
    for (int d = 0; d < ndim; d++) {
        int64_t span;
        if (__builtin_mul_overflow(shape[d] ? shape[d] - 1 : 0, strides[d], &span) ||
            __builtin_add_overflow(span < 0 ? *lo : *hi, span, span < 0 ? lo : hi))
            return false;
    }
    return true;
}

/* The dims of size > 1, sorted by stride, must each step over everything
 * the smaller ones span: the usual sufficient test for a non-overlapping
 * layout. A layout it cannot prove is reported as overlapping. */
bool tj_may_self_overlap(const tj_tensor *t)
{
    int64_t stride[TJ_MAX_DIMS], size[TJ_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] == 0) return false;
        if (t->shape[d] == 1) continue;
        int64_t s = t->strides[d] < 0 ? -t->strides[d] : t->strides[d];
        int k = n++;
        for (; k > 0 && stride[k - 1] > s; k--) stride[k] = stride[k - 1], size[k] = size[k - 1];
        stride[k] = s, size[k] = t->shape[d];
    }
    int64_t span = 0; /* elements the smaller dims reach past the first */
    for (int k = 0; k < n; k++) {
        if (stride[k] <= span) return true;
        span += (size[k] - 1) * stride[k];
    }
    return false;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t r = a % b;
        a = b, b = r;
    }
    return a;
}

/* The gcd of t's strides over its dims of size > 1, folded into g. */
static int64_t strides_gcd(const tj_tensor *t, int64_t g)
{
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] > 1) g = gcd64(g, t->strides[d] < 0 ? -t->strides[d] : t->strides[d]);
    return g;
}

/* Whether a and b have the same element at every index: one storage
 * offset, shape and itemsize, and equal strides wherever a dim has more
 * than one index (a stride there is never used). */
static bool same_view(const tj_tensor *a, const tj_tensor *b)
{
    if (a == b) return true;
    if (a->offset != b->offset || a->ndim != b->ndim || tj_dtype_bytes(a->dtype) != tj_dtype_bytes(b->dtype))
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d] || (a->shape[d] > 1 && a->strides[d] != b->strides[d])) return false;
    return true;
}

/* Dims of two views with one set of strides, largest stride first: the
 * differences i - j of an index of a and one of b, and how far the smaller
 * dims' differences reach. */
typedef struct stride_walk {
    int n;
    int64_t stride[TJ_MAX_DIMS], lo[TJ_MAX_DIMS], hi[TJ_MAX_DIMS], reach[TJ_MAX_DIMS];
    int budget; /* steps left before the answer is "maybe" */
} stride_walk;

/* Whether sum over dims k..n of diff_k * stride_k can be `rest` with each
 * diff_k in [lo_k, hi_k]: 1 yes, 0 no, -1 out of steps. */
static int walk_meets(stride_walk *w, int k, int64_t rest)
{
    if (k == w->n) return rest == 0;
    if (--w->budget < 0) return -1;
    int64_t s = w->stride[k], r = w->reach[k];
    /* diff * s must land within r of rest: at most a few diffs when the
     * smaller dims fit under s (a view without self-overlap) */
    int64_t first = rest - r >= 0 ? (rest - r + s - 1) / s : -((r - rest) / s);
    int64_t last = rest + r >= 0 ? (rest + r) / s : -((-(rest + r) + s - 1) / s);
    if (first < w->lo[k]) first = w->lo[k];
    if (last > w->hi[k]) last = w->hi[k];
    int answer = 0;
    for (int64_t diff = first; diff <= last; diff++) {
        int m = walk_meets(w, k + 1, rest - diff * s);
        if (m == 1) return 1;
        if (m < 0) answer = -1;
    }
    return answer;
}

/* For views of one itemsize whose dims have the same positive strides
 * (where both have more than one index) (slices of one base: x[:, :16] and x[:, 32:], a GRU's gates):
 * whether an element of a is one of b (1), none is (0), or -1 when the
 * strides differ or the walk is too long to tell. */
static int same_strides_meet(const tj_tensor *a, const tj_tensor *b)
{
    if (a->ndim != b->ndim) return -1;
    stride_walk w = {.budget = 256};
    for (int d = 0; d < a->ndim; d++) {
        if (a->shape[d] == 1 && b->shape[d] == 1) continue;
        /* a dim of size 1 has one index: its stride is never used */
        int64_t s = a->shape[d] > 1 ? a->strides[d] : b->strides[d];
        if (s <= 0 || (a->shape[d] > 1 && b->shape[d] > 1 && s != b->strides[d])) return -1;
        int k = w.n++;
        for (; k > 0 && w.stride[k - 1] < s; k--)
            w.stride[k] = w.stride[k - 1], w.lo[k] = w.lo[k - 1], w.hi[k] = w.hi[k - 1];
        w.stride[k] = s, w.lo[k] = -(b->shape[d] - 1), w.hi[k] = a->shape[d] - 1;
    }
    int64_t reach = 0;
    for (int k = w.n - 1; k >= 0; k--) {
        w.reach[k] = reach;
        reach += (w.hi[k] > -w.lo[k] ? w.hi[k] : -w.lo[k]) * w.stride[k];
    }
    return walk_meets(&w, 0, b->offset - a->offset);
}

/* b's geometry over a's storage when b's storage is another one holding
 * some of the same bytes (two DLPack imports of one array: runtime/dlpack.c),
 * in *scratch, its offset counted in a's elements from a's storage; false
 * when no whole number of elements separates the two storages. */
static bool rebased(const tj_tensor *a, const tj_tensor *b, tj_tensor *scratch)
{
    int64_t eb = (int64_t)tj_dtype_bytes(b->dtype);
    int64_t bytes = (int64_t)((uintptr_t)b->storage->data - (uintptr_t)a->storage->data); /* two objects */
    if (eb != (int64_t)tj_dtype_bytes(a->dtype) || bytes % eb) return false;
    memcpy(scratch, b, sizeof *scratch);
    scratch->storage = a->storage;
    scratch->offset += bytes / eb;
    return true;
}

tj_overlap tj_overlap_status(const tj_tensor *a, const tj_tensor *b)
{
    if (!tj_tensor_shares_storage(a, b) || a->numel == 0 || b->numel == 0) return TJ_OVERLAP_NONE;
    tj_tensor other;
    if (a->storage != b->storage) {
        if (!rebased(a, b, &other)) return TJ_OVERLAP_PARTIAL; /* an element boundary apart: too odd to tell */
        b = &other;
    }
    if (same_view(a, b)) return TJ_OVERLAP_FULL;
    /* bytes [first, last] each touches: disjoint intervals share nothing */
    int64_t alo, ahi, blo, bhi, ea = (int64_t)tj_dtype_bytes(a->dtype), eb = (int64_t)tj_dtype_bytes(b->dtype);
    tj_element_range(a, &alo, &ahi);
    tj_element_range(b, &blo, &bhi);
    if (alo * ea > bhi * eb + eb - 1 || blo * eb > ahi * ea + ea - 1) return TJ_OVERLAP_NONE;
    /* Interleaved views of one itemsize (the columns of a flat [n, 2]
     * buffer): every element of a lies at a->offset plus a multiple of g,
     * the gcd of both views' strides, and so does every element of b at
     * b->offset; offsets that differ modulo g never meet. (g 0: one element
     * each, which the byte ranges above already told apart.) */
    if (ea == eb) {
        int64_t g = strides_gcd(b, strides_gcd(a, 0));
        if (g != 0 && (a->offset - b->offset) % g != 0) return TJ_OVERLAP_NONE;
        if (same_strides_meet(a, b) == 0) return TJ_OVERLAP_NONE;
    }
    return TJ_OVERLAP_PARTIAL;
}

bool tj_non_overlapping_and_dense(int ndim, const int64_t *shape, const int64_t *strides)
{
    int64_t stride[TJ_MAX_DIMS], size[TJ_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 2) continue;
        int k = n++;
        for (; k > 0 && stride[k - 1] > strides[d]; k--) stride[k] = stride[k - 1], size[k] = size[k - 1];
        stride[k] = strides[d], size[k] = shape[d];
    }
    int64_t expected = 1;
    for (int k = 0; k < n; k++) {
        if (stride[k] != expected) return false;
        expected *= size[k];
    }
    return true;
}

/* get_overlap_status (ATen/MemoryOverlap.cpp) answering FULL or PARTIAL. */
bool tj_aten_refuses_overlap(const tj_tensor *a, const tj_tensor *b)
{
    if (a == b) return true;
    if (a->numel == 0 || b->numel == 0 || !tj_non_overlapping_and_dense(a->ndim, a->shape, a->strides) ||
        !tj_non_overlapping_and_dense(b->ndim, b->shape, b->strides) ||
        !tj_tensor_shares_storage(a, b))
        return false;
    tj_tensor other;
    if (a->storage != b->storage) {
        if (!rebased(a, b, &other)) return true;
        b = &other;
    }
    int64_t ea = (int64_t)tj_dtype_bytes(a->dtype), eb = (int64_t)tj_dtype_bytes(b->dtype);
    int64_t a_begin = a->offset * ea, a_end = a_begin + a->numel * ea;
    int64_t b_begin = b->offset * eb, b_end = b_begin + b->numel * eb;
    return a_begin < b_end && b_begin < a_end;
}

bool tj_layout_may_self_overlap(int ndim, const int64_t *shape, const int64_t *strides, bool except_broadcast)
{
    tj_tensor t = {.ndim = ndim};
    for (int d = 0; d < ndim; d++) {
        t.shape[d] = except_broadcast && strides[d] == 0 ? 1 : shape[d];
        t.strides[d] = strides[d];
    }
    return tj_may_self_overlap(&t);
}

bool tj_inplace_writes_one_value(const tj_op *op, int64_t dim, int ndim, const int64_t *shape,
                                 const int64_t *strides)
{
    if (op == TJ_OPS(fill__Scalar) || op == TJ_OPS(zero_)) return true;
    if (op != TJ_OPS(index_fill__int_Scalar) && op != TJ_OPS(index_fill__int_Tensor)) return false;
    int64_t d = dim < 0 ? dim + ndim : dim;
    return !tj_layout_may_self_overlap(ndim, shape, strides, true) &&
           (ndim == 0 || (d >= 0 && d < ndim && strides[d] != 0));
}
