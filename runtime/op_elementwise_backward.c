/* Backward operators of the elementwise activations (threshold_backward,
 * gelu_backward, sigmoid_backward, tanh_backward, leaky_relu_backward,
 * softplus_backward, elu_backward, hardtanh_backward, hardsigmoid_backward,
 * hardswish_backward, log_sigmoid_backward): shape functions and
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
    return st != TJ_OK ? st : tj_scalar_check(THRESHOLD_BACKWARD, "threshold", &args[2], outs[0].dtype);
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

#define LOG_SIGMOID_BACKWARD "aten::log_sigmoid_backward"

/* grad_output, self and buffer of one float dtype, broadcast together */
tj_status tj_meta_log_sigmoid_backward(const tj_value *args, tj_meta *outs)
{
    tj_dtype dt = tj_result_type(args, 3);
    tj_status st = tj_ew_require_float(LOG_SIGMOID_BACKWARD, dt);
    if (st != TJ_OK) return st;
    const tj_tensor *ts[3] = {args[0].u.t, args[1].u.t, args[2].u.t};
    return tj_ew_meta_broadcast(LOG_SIGMOID_BACKWARD, ts, 3, dt, outs);
}

tj_status tj_kernel_log_sigmoid_backward(const tj_value *args, tj_tensor *const *outs)
{
    tj_dtype dt = outs[0]->dtype;
    tj_tensor *in[3] = {args[0].u.t, args[1].u.t, args[2].u.t};
    tj_elementwise(outs[0], in, 3, dt, tj_k_log_sigmoid_backward_loop, &dt);
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

/* leaky_relu_backward, softplus_backward (and elu_backward, its arguments
 * reordered): float operands args[0..1]; the Scalars args[2..2+np) are the
 * forward's parameters (a trailing bool reads as 0 / 1). */
static tj_status meta_act_backward(const char *op, const tj_value *args, int np, const char *const *names,
                                   tj_meta *outs)
{
    tj_status st = meta_backward(op, args, true, outs);
    for (int i = 0; i < np && st == TJ_OK; i++)
        st = tj_scalar_check(op, names[i], &args[2 + i], outs[0].dtype);
    return st;
}

static tj_status kernel_act_backward(const tj_value *args, tj_tensor *const *outs, tj_k_act_op op, int np)
{
    tj_k_act_args k = {.op = op, .dtype = outs[0]->dtype};
    for (int i = 0; i < np; i++) k.p[i] = tj_value_as_double(&args[2 + i]);
    tj_tensor *in[2] = {args[0].u.t, args[1].u.t};
    tj_elementwise(outs[0], in, 2, k.dtype, tj_k_act_backward_loop, &k);
    return TJ_OK;
}

#define LEAKY_RELU_BACKWARD "aten::leaky_relu_backward"

/* self_is_result (an in-place leaky_relu_'s output saved as self) is only
 * invertible for a non-negative slope, as PyTorch checks. */
tj_status tj_meta_leaky_relu_backward(const tj_value *args, tj_meta *outs)
{
    if (args[3].u.b && tj_value_as_double(&args[2]) < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, LEAKY_RELU_BACKWARD ": self_is_result with a negative slope (%g) is "
                                                 "not supported (in-place leaky_relu_ backward)",
                        tj_value_as_double(&args[2]));
    return meta_act_backward(LEAKY_RELU_BACKWARD, args, 1, (const char *const[]){"negative_slope"}, outs);
}

tj_status tj_kernel_leaky_relu_backward(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_act_backward(args, outs, TJ_K_LEAKY_RELU, 1);
}

#define ELU_BACKWARD "aten::elu_backward"

/* elu_backward(grad_output, alpha, scale, input_scale, is_result,
 * self_or_result) as the act arguments (grad_output, self_or_result,
 * alpha, scale, input_scale, is_result). */
static void elu_backward_args(const tj_value *args, tj_value *out)
{
    out[0] = args[0];
    out[1] = args[5];
    memcpy(out + 2, args + 1, 4 * sizeof *args);
}

/* is_result (an in-place elu_'s output saved) needs alpha >= 0, as PyTorch
 * checks. */
tj_status tj_meta_elu_backward(const tj_value *args, tj_meta *outs)
{
    if (args[4].u.b && tj_value_as_double(&args[1]) < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, ELU_BACKWARD ": is_result with a negative alpha (%g) is not "
                                                 "supported (in-place elu_ backward)",
                        tj_value_as_double(&args[1]));
    tj_value a[6];
    elu_backward_args(args, a);
    return meta_act_backward(ELU_BACKWARD, a, 3, (const char *const[]){"alpha", "scale", "input_scale"}, outs);
}

tj_status tj_kernel_elu_backward(const tj_value *args, tj_tensor *const *outs)
{
    tj_value a[6];
    elu_backward_args(args, a);
    return kernel_act_backward(a, outs, TJ_K_ELU, 4);
}

tj_status tj_meta_softplus_backward(const tj_value *args, tj_meta *outs)
{
    return meta_act_backward("aten::softplus_backward", args, 2, (const char *const[]){"beta", "threshold"}, outs);
}

tj_status tj_kernel_softplus_backward(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_act_backward(args, outs, TJ_K_SOFTPLUS, 2);
}

/* Backward operators of the hard activations: the rules at the kinks and at
 * nan are those of ATen's scalar loops (see tj_hardswish_backward). */
tj_status tj_meta_hardtanh_backward(const tj_value *args, tj_meta *outs)
{
    return meta_act_backward("aten::hardtanh_backward", args, 2, (const char *const[]){"min_val", "max_val"}, outs);
}

tj_status tj_kernel_hardtanh_backward(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_act_backward(args, outs, TJ_K_HARDTANH, 2);
}

tj_status tj_meta_hardsigmoid_backward(const tj_value *args, tj_meta *outs)
{
    return meta_backward("aten::hardsigmoid_backward", args, true, outs);
}

tj_status tj_kernel_hardsigmoid_backward(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_act_backward(args, outs, TJ_K_HARDSIGMOID, 0);
}

tj_status tj_meta_hardswish_backward(const tj_value *args, tj_meta *outs)
{
    return meta_backward("aten::hardswish_backward", args, true, outs);
}

tj_status tj_kernel_hardswish_backward(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_act_backward(args, outs, TJ_K_HARDSWISH, 0);
}
