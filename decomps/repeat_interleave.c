/* repeat_interleave.self_int and .self_Tensor, implicit as in ATen 1.13
 * (Repeat.cpp): self (flattened when dim is None) index_select-ed along dim
 * with repeat_interleave.Tensor of the per-slice counts, which is what
 * torch's make_fx records. self_int's counts are a constant [size] tensor
 * (ATen: empty({1}).fill_(repeats).expand({size})) and its output size is
 * known, so it is passed on as output_size: unlike PyTorch's, a fake-mode
 * trace holds it. */
#include <inttypes.h>

#include "util.h"

#define SELF_INT "aten::repeat_interleave.self_int"
#define SELF_TENSOR "aten::repeat_interleave.self_Tensor"

/* self, or self flattened when dim is None; *d the dim to repeat along (a
 * 0-dim self has none: ATen's size(dim) refuses it). */
static tj_tensor *input_and_dim(const char *op, tj_tensor *self, const tj_value *dim, int *d)
{
    *d = 0;
    if (dim->kind == TJ_V_NONE) return tj_reshape(self, (const int64_t[]){-1}, 1);
    if (tj_tensor_ndim(self) == 0) {
        tj_error(TJ_ERR_INDEX, "%s: Dimension specified as %" PRId64 " but tensor has no dimensions", op, dim->u.i);
        return NULL;
    }
    return tj_wrap_dim(op, dim->u.i, tj_tensor_ndim(self), d) == TJ_OK ? self : NULL;
}

static tj_status self_int(const tj_value *args, tj_value *outs)
{
    int64_t repeats = args[1].u.i, total;
    int d;
    tj_tensor *x = input_and_dim(SELF_INT, args[0].u.t, &args[2], &d);
    if (!x) return tj_last_status();
    int64_t size = tj_tensor_shape(x)[d];
    if (repeats < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, SELF_INT ": repeats can not be negative, got %" PRId64, repeats);
    if (__builtin_mul_overflow(repeats, size, &total))
        return tj_error(TJ_ERR_OVERFLOW, SELF_INT ": repeats %" PRId64 " times size %" PRId64 " exceeds INT64_MAX",
                        repeats, size);
    if (args[3].kind == TJ_V_INT && args[3].u.i != total)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, SELF_INT ": output_size %" PRId64 " is not repeats %" PRId64
                        " times the size %" PRId64 " of dim %d", args[3].u.i, repeats, size, d);
    tj_tensor *counts = tj_expand(tj_full((const int64_t[]){1}, 1, tj_v_int(repeats), TJ_INT64), &size, 1);
    return tj_dc_done(tj_index_select(x, d, tj_repeat_interleave(counts, true, total)), outs);
}

static tj_status self_tensor(const tj_value *args, tj_value *outs)
{
    tj_tensor *repeats = args[1].u.t;
    int d;
    tj_tensor *x = input_and_dim(SELF_TENSOR, args[0].u.t, &args[2], &d);
    if (!x) return tj_last_status();
    int64_t size = tj_tensor_shape(x)[d];
    int rn = tj_tensor_ndim(repeats);
    char b[128];
    if (rn > 1)
        return tj_error(TJ_ERR_SHAPE, SELF_TENSOR ": repeats must be 0-dim or 1-dim tensor, got repeats %s",
                        tj_shape_str(rn, tj_tensor_shape(repeats), b, sizeof b));
    if (rn == 0 || tj_tensor_shape(repeats)[0] == 1)
        repeats = tj_expand(tj_reshape(repeats, (const int64_t[]){1}, 1), &size, 1);
    else if (tj_tensor_shape(repeats)[0] != size)
        return tj_error(TJ_ERR_SHAPE, SELF_TENSOR ": repeats must have the same size as input along dim (repeats "
                        "[%" PRId64 "], size %" PRId64 " of dim %d)", tj_tensor_shape(repeats)[0], size, d);
    bool has = args[3].kind == TJ_V_INT;
    return tj_dc_done(tj_index_select(x, d, tj_repeat_interleave(repeats, has, has ? args[3].u.i : 0)), outs);
}

void tj_register_repeat_interleave_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(repeat_interleave_self_int), self_int, "repeat_interleave_self_int");
    tj_op_set_decomposition(TJ_OPS(repeat_interleave_self_Tensor), self_tensor, "repeat_interleave_self_tensor");
}
