/* aten::native_dropout(input, p, train?) -> (out, mask), as PyTorch 1.13's
 * native_dropout_cpu: in training (train true or None) mask ~ Bernoulli(1-p)
 * from the default generator and out = input * mask / (1-p) (0 when p = 1);
 * otherwise out = a copy of input and mask all true. An empty input gives
 * an empty out and an empty mask of the input's dtype, as PyTorch does. */
#include <string.h>

#include "iter.h"
#include "kernels/dropout.h"
#include "op_nn.h"
#include "random.h"

static bool training(const tj_value *train) { return train->kind == TJ_V_NONE || train->u.b; }

tj_status tj_meta_native_dropout(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *in = args[0].u.t;
    double p = tj_value_as_double(&args[1]);
    if (!(p >= 0.0 && p <= 1.0))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "aten::native_dropout: dropout probability has to be between 0 and 1, but got %g", p);
    if (!tj_dtype_is_float(in->dtype))
        return tj_error(TJ_ERR_DTYPE, "aten::native_dropout: expected a float32 or float64 input, got %s",
                        tj_dtype_name(in->dtype));
    for (int i = 0; i < 2; i++) {
        outs[i].ndim = in->ndim;
        memcpy(outs[i].shape, in->shape, sizeof(int64_t) * (size_t)in->ndim);
    }
    outs[0].dtype = in->dtype;
    outs[1].dtype = in->numel == 0 ? in->dtype : TJ_BOOL;
    return TJ_OK;
}

tj_status tj_kernel_native_dropout(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *in = args[0].u.t;
    int64_t n = in->numel;
    if (n == 0) return TJ_OK;
    uint8_t *mask = (uint8_t *)tj_tensor_ptr(outs[1]);
    if (!training(&args[2])) {
        tj_copy_convert(outs[0], in);
        memset(mask, 1, (size_t)n);
        return TJ_OK;
    }
    double p = tj_value_as_double(&args[1]);
    uint64_t seed, offset = tj_random_reserve((uint64_t)n, &seed);
    tj_random_bernoulli_u8(seed, offset, 1.0 - p, mask, n);
    tj_k_dropout_args k = {.scale = p == 1.0 ? 0.0 : 1.0 / (1.0 - p), .dtype = in->dtype};
    tj_tensor *ins[2] = {in, outs[1]};
    tj_elementwise(outs[0], ins, 2, in->dtype, tj_k_dropout_loop, &k);
    return TJ_OK;
}
