/* Memory overlap between tensors (issue 9): which storage elements a tensor
 * touches, whether two of its elements may share one, whether two tensors
 * may. Used to refuse in-place operators whose operands overlap the result
 * in another layout (runtime/op_inplace.c) and plan outputs that overlap
 * each other (tracer/plan.c), instead of computing wrong values, and to
 * keep SGD's fused step to momentum buffers apart from their parameter and
 * gradient (runtime/optim.c); and ATen's own rule, for the operators that
 * refuse exactly what ATen refuses (the in-place indexed writers:
 * runtime/op_inplace.c's aten_overlap_rules). */
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

tj_overlap tj_overlap_status(const tj_tensor *a, const tj_tensor *b)
{
    if (!tj_tensor_shares_storage(a, b) || a->numel == 0 || b->numel == 0) return TJ_OVERLAP_NONE;
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
