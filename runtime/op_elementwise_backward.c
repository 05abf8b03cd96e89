/* Backward operators of the elementwise activations (threshold_backward,
 * gelu_backward, sigmoid_backward, tanh_backward): shape functions and
 * kernels. The two operands broadcast and promote as a binary operator's. */
#include "op_elementwise.h"
#include "op_elementwise_util.h"
#include "kernels/activation_backward.h"

/* Broadcast shape of the two tensor operands, result_type dtype, which must
 * be a float one when `float_only` (else it must not be bool). */
static tj_status meta_backward(const char *op, const tj_value *args, bool float_only, tj_meta *out)
{
    tj_dtype dt = tj_result_type(args, 2);
    if (float_only) {
        tj_status st = tj_ew_require_float(op, dt);
        if (st != TJ_OK) return st;
    } else if (dt == TJ_BOOL) {
        return tj_error(TJ_ERR_DTYPE, "%s: not supported for bool operands", op);
    }
    const tj_tensor *ts[2] = {args[0].u.t, args[1].u.t};
    return tj_ew_meta_broadcast(op, ts, 2, dt, out);
}

#define THRESHOLD_BACKWARD "aten::threshold_backward"

tj_status tj_meta_threshold_backward(const tj_value *args, tj_meta *outs)
{
    tj_status st = meta_backward(THRESHOLD_BACKWARD, args, false, outs);
    tj_k_scalar unused;
    return st != TJ_OK ? st : tj_ew_scalar_checked(THRESHOLD_BACKWARD, "threshold", &args[2], outs[0].dtype, &unused);
}

tj_status tj_kernel_threshold_backward(const tj_value *args, tj_tensor *const *outs)
{
    tj_dtype dt = outs[0]->dtype;
    tj_k_select_args k = {.dtype = dt, .value = tj_ew_scalar(&args[2], dt)};
    tj_tensor *in[2] = {args[0].u.t, args[1].u.t};
    tj_loop_fn loop = dt == TJ_FLOAT32 ? tj_k_threshold_backward_f32_loop : tj_k_threshold_backward_loop;
    tj_elementwise(outs[0], in, 2, dt, loop, &k);
    return TJ_OK;
}

#define GELU_BACKWARD "aten::gelu_backward"

tj_status tj_meta_gelu_backward(const tj_value *args, tj_meta *outs)
{
    bool is_tanh;
    tj_status st = tj_ew_approximate(GELU_BACKWARD, &args[2], &is_tanh);
    return st != TJ_OK ? st : meta_backward(GELU_BACKWARD, args, true, outs);
}

tj_status tj_kernel_gelu_backward(const tj_value *args, tj_tensor *const *outs)
{
    tj_k_binary_op op = args[2].u.s[0] == 't' ? TJ_K_GELU_TANH_BACKWARD : TJ_K_GELU_BACKWARD;
    return tj_ew_run_binary(outs[0], args[0].u.t, args[1].u.t, outs[0]->dtype, op);
}

tj_status tj_meta_sigmoid_backward(const tj_value *args, tj_meta *outs)
{
    return meta_backward("aten::sigmoid_backward", args, true, outs);
}

tj_status tj_kernel_sigmoid_backward(const tj_value *args, tj_tensor *const *outs)
{
    return tj_ew_run_binary(outs[0], args[0].u.t, args[1].u.t, outs[0]->dtype, TJ_K_SIGMOID_BACKWARD);
}

tj_status tj_meta_tanh_backward(const tj_value *args, tj_meta *outs)
{
    return meta_backward("aten::tanh_backward", args, true, outs);
}

tj_status tj_kernel_tanh_backward(const tj_value *args, tj_tensor *const *outs)
{
    return tj_ew_run_binary(outs[0], args[0].u.t, args[1].u.t, outs[0]->dtype, TJ_K_TANH_BACKWARD);
}
