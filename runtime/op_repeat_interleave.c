/* aten::repeat_interleave.Tensor: index i written repeats[i] times, as
 * ATen 1.13's repeat_interleave_cpu. Its output size is the sum of repeats:
 * the shape function reads the values of a real repeats, and refuses a fake
 * one without output_size (PyTorch's fake mode raises
 * DynamicOutputShapeException there). The self_int / self_Tensor overloads
 * are implicit: decomps/repeat_interleave.c. */
#include <inttypes.h>

#include "contig.h"
#include "op_view.h"

#define OP "aten::repeat_interleave.Tensor"

/* The sum of the values of a real repeats; TJ_ERR_INVALID_ARGUMENT for a
 * negative one (ATen: "repeats can not be negative"), TJ_ERR_OVERFLOW past
 * INT64_MAX. */
static tj_status repeats_sum(const tj_tensor *repeats, int64_t *sum)
{
    tj_contig c = {0};
    tj_status st = tj_contig_get(&c, repeats);
    if (st != TJ_OK) return st;
    const int64_t *r = (const int64_t *)c.data;
    *sum = 0;
    for (int64_t i = 0; i < repeats->numel && st == TJ_OK; i++)
        if (r[i] < 0)
            st = tj_error(TJ_ERR_INVALID_ARGUMENT, OP ": repeats can not be negative (repeats[%" PRId64 "] = %" PRId64
                          ")", i, r[i]);
        else if (__builtin_add_overflow(*sum, r[i], sum))
            st = tj_error(TJ_ERR_OVERFLOW, OP ": the sum of repeats [%" PRId64 "] exceeds INT64_MAX", repeats->numel);
    tj_contig_release(&c);
    return st;
}

tj_status tj_meta_repeat_interleave_Tensor(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *repeats = args[0].u.t;
    char b[128];
    if (repeats->ndim != 1)
        return tj_error(TJ_ERR_SHAPE, OP ": repeat_interleave only accept 1D vector as repeat, got repeats %s",
                        tj_shape_str(repeats->ndim, repeats->shape, b, sizeof b));
    if (repeats->dtype != TJ_INT64)
        return tj_error(TJ_ERR_DTYPE, OP ": repeats has to be Long or Int tensor, got %s",
                        tj_dtype_name(repeats->dtype));
    int64_t total;
    if (args[1].kind == TJ_V_INT) {
        total = args[1].u.i;
        if (total < 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, OP ": output_size %" PRId64 " is negative", total);
    } else if (repeats->numel == 0) {
        total = 0;
    } else if (repeats->fake) {
        return tj_error(TJ_ERR_UNSUPPORTED, OP ": the output size is the sum of the values of repeats %s, which a "
                        "trace or compiled graph does not have (data-dependent output shape: PyTorch's "
                        "DynamicOutputShapeException); pass output_size",
                        tj_shape_str(repeats->ndim, repeats->shape, b, sizeof b));
    } else {
        tj_status st = repeats_sum(repeats, &total);
        if (st != TJ_OK) return st;
    }
    outs[0].dtype = TJ_INT64;
    outs[0].ndim = 1;
    outs[0].shape[0] = total;
    return TJ_OK;
}

/* Index i repeated repeats[i] times. A given output_size must be the sum
 * (ATen leaves the rest of a larger output unwritten, and writes past a
 * smaller one's check): the values are checked here, where they are known. */
tj_status tj_kernel_repeat_interleave_Tensor(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *repeats = args[0].u.t;
    tj_tensor *out = outs[0];
    int64_t total;
    tj_status st = repeats_sum(repeats, &total);
    if (st != TJ_OK) return st;
    if (total != out->numel)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, OP ": output_size %" PRId64 " is not the sum of repeats, %" PRId64,
                        out->numel, total);
    tj_contig c = {0};
    if ((st = tj_contig_get(&c, repeats)) != TJ_OK) return st;
    const int64_t *r = (const int64_t *)c.data;
    int64_t *o = (int64_t *)tj_tensor_ptr(out);
    for (int64_t i = 0; i < repeats->numel; i++)
        for (int64_t k = 0; k < r[i]; k++) *o++ = i;
    tj_contig_release(&c);
    return TJ_OK;
}
