/* Memory overlap between tensors (issue 9): which storage elements a tensor
 * touches, whether two of its elements may share one, whether two tensors
 * may. Used to refuse in-place operators whose operands overlap the result
 * in another layout (runtime/op_inplace.c) and plan outputs that overlap
 * each other (tracer/plan.c), instead of computing wrong values. */
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

bool tj_may_overlap(const tj_tensor *a, const tj_tensor *b)
{
    if (!tj_tensor_shares_storage(a, b) || a->numel == 0 || b->numel == 0) return false;
    int64_t alo, ahi, blo, bhi;
    tj_element_range(a, &alo, &ahi);
    tj_element_range(b, &blo, &bhi);
    return alo <= bhi && blo <= ahi;
}
