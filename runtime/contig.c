/* Dense operands for kernels (see contig.h). */
#include <string.h>

#include "contig.h"
#include "iter.h"

tj_status tj_contig_get(tj_contig *c, const tj_tensor *t)
{
    c->copy = NULL;
    c->data = NULL;
    if (t->numel == 0 || tj_tensor_is_contiguous(t)) {
        c->data = tj_tensor_ptr(t);
        return TJ_OK;
    }
    tj_meta m = {.dtype = t->dtype, .ndim = t->ndim, .alias = -1};
    memcpy(m.shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    c->copy = tj_tensor_new_meta(&m, false);
    if (!c->copy) return tj_last_status();
    tj_copy_convert(c->copy, t);
    c->data = tj_tensor_ptr(c->copy);
    return TJ_OK;
}

void tj_contig_release(tj_contig *c)
{
    tj_tensor_release(c->copy);
    c->copy = NULL;
    c->data = NULL;
}
