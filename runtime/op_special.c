/* Shape functions and kernels of the special functions (op_special.def):
 * each operator is a function of kernels/special.c applied by one
 * tj_elementwise pass, in float32 or float64. Dtypes follow torch's
 * INT_TO_FLOAT promotion: int64 and bool operands compute in float32. */
#include <math.h>

#include "kernels/special.h"
#include "op_elementwise_util.h"
#include "op_special.h"

/* The result dtype of a float-valued operator of these operands: their
 * result_type, float32 for an integer or bool one. */
static tj_dtype float_result(const tj_value *args, int n)
{
    tj_dtype dt = tj_ew_result_type(args, n);
    return tj_dtype_is_float(dt) ? dt : TJ_FLOAT32;
}

static tj_status meta_unary(const tj_tensor *self, tj_meta *outs)
{
    tj_meta_set(outs, tj_dtype_is_float(self->dtype) ? self->dtype : TJ_FLOAT32, self->ndim, self->shape);
    return TJ_OK;
}

static tj_status run_unary(const tj_tensor *self, tj_tensor *out, tj_k_special1_fn fn, double param)
{
    tj_k_special_args k = {.dtype = out->dtype, .fn1 = fn, .param = param};
    tj_tensor *in[1] = {(tj_tensor *)self};
    tj_elementwise(out, in, 1, out->dtype, tj_k_special1_loop, &k);
    return TJ_OK;
}

static tj_status meta_binary(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *ts[2] = {args[0].u.t, args[1].u.t};
    return tj_ew_meta_broadcast(op, ts, 2, float_result(args, 2), outs);
}

static tj_status run_binary(const tj_value *args, tj_tensor *out, tj_k_special2_fn fn)
{
    tj_k_special_args k = {.dtype = out->dtype, .fn2 = fn};
    tj_tensor *in[2] = {args[0].u.t, args[1].u.t};
    tj_elementwise(out, in, 2, out->dtype, tj_k_special2_loop, &k);
    return TJ_OK;
}

/* ---- unary operators without parameters ---- */

static double f_sinc(double x, double p)
{
    (void)p;
    if (x == 0) return 1;
    double px = M_PI * x; /* ATen's order: sin(pi x) / (pi x) */
    return sin(px) / px;
}

/* -x log x for x > 0, 0 at 0, -inf below, nan for nan (ATen's kernel) */
static double f_entr(double x, double p)
{
    (void)p;
    if (isnan(x)) return x;
    if (x > 0) return -x * log(x);
    return x == 0 ? 0 : -INFINITY;
}

#define SPECIAL_FN(name, call)                                                   \
    static double f_##name(double x, double p)                                   \
    {                                                                            \
        (void)p;                                                                 \
        return call(x);                                                          \
    }
SPECIAL_FN(lgamma, tj_k_lgamma)
SPECIAL_FN(digamma, tj_k_digamma)
SPECIAL_FN(erfinv, tj_k_erfinv)
SPECIAL_FN(erfc, tj_k_erfc)
SPECIAL_FN(i0, tj_k_i0)
SPECIAL_FN(i0e, tj_k_i0e)
SPECIAL_FN(i1, tj_k_i1)
SPECIAL_FN(i1e, tj_k_i1e)
SPECIAL_FN(ndtri, tj_k_ndtri)
SPECIAL_FN(log_ndtr, tj_k_log_ndtr)
#undef SPECIAL_FN

#define UNARY_OP(ident, fn)                                                      \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs) { return meta_unary(args[0].u.t, outs); } \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs)    \
    {                                                                            \
        return run_unary(args[0].u.t, outs[0], fn, 0);                           \
    }
UNARY_OP(lgamma, f_lgamma)
UNARY_OP(digamma, f_digamma)
UNARY_OP(erfinv, f_erfinv)
UNARY_OP(erfc, f_erfc)
UNARY_OP(i0, f_i0)
UNARY_OP(special_i0e, f_i0e)
UNARY_OP(special_i1, f_i1)
UNARY_OP(special_i1e, f_i1e)
UNARY_OP(special_ndtri, f_ndtri)
UNARY_OP(special_log_ndtr, f_log_ndtr)
UNARY_OP(special_entr, f_entr)
UNARY_OP(sinc, f_sinc)
#undef UNARY_OP

/* ---- polygamma(int n, Tensor self) ---- */

static double f_polygamma(double x, double n) { return tj_k_polygamma((int64_t)n, x); }
/* float32: trigamma in float32 arithmetic, as ATen */
static double f_polygamma_f32(double x, double n)
{
    return n == 1 ? tj_k_trigamma_f32((float)x) : tj_k_polygamma((int64_t)n, x);
}

tj_status tj_meta_polygamma(const tj_value *args, tj_meta *outs)
{
    if (args[0].u.i < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "aten::polygamma: polygamma(n, x) does not support negative n (%lld)",
                        (long long)args[0].u.i);
    return meta_unary(args[1].u.t, outs);
}

tj_status tj_kernel_polygamma(const tj_value *args, tj_tensor *const *outs)
{
    return run_unary(args[1].u.t, outs[0], outs[0]->dtype == TJ_FLOAT32 ? f_polygamma_f32 : f_polygamma,
                     (double)args[0].u.i);
}

/* ---- logit(self, eps) and logit_backward(grad_output, self, eps) ---- */

/* eps (None: -1, no clamping) as ATen's kernels read it */
static double logit_eps(const tj_value *v) { return v->kind == TJ_V_NONE ? -1.0 : v->u.f; }

/* ATen's kernel: log(x / (1 - x)) of x clamped to [eps, 1 - eps] when eps
 * >= 0 (nan stays nan) */
static double f_logit(double x, double eps)
{
    if (eps >= 0) x = x < eps ? eps : x > 1 - eps ? 1 - eps : x;
    return log(x / (1 - x));
}

tj_status tj_meta_logit(const tj_value *args, tj_meta *outs) { return meta_unary(args[0].u.t, outs); }

tj_status tj_kernel_logit(const tj_value *args, tj_tensor *const *outs)
{
    return run_unary(args[0].u.t, outs[0], f_logit, logit_eps(&args[1]));
}

/* ATen's logit_backward kernel: without eps, nan outside [0, 1] and dy /
 * (x (1 - x)) inside (+-inf or nan at the ends); with eps, 0 outside [eps,
 * 1 - eps]. The loop's context carries eps, and the two inputs are (dy, x). */
typedef struct logit_backward_args {
    tj_dtype dtype;
    double eps;
} logit_backward_args;

static double logit_grad(double dy, double x, double eps)
{
    if (eps < 0) {
        if (x < 0 || x > 1) return NAN;
        return x == 0 || x == 1 ? dy * INFINITY : dy / (x * (1 - x));
    }
    return x < eps || x > 1 - eps ? 0 : dy / (x * (1 - x));
}

static void logit_backward_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const logit_backward_args *k = ctx;
    if (k->dtype == TJ_FLOAT32) {
        const float *dy = in[0], *x = in[1];
        float *o = out;
        for (int64_t i = 0; i < n; i++) o[i] = (float)logit_grad(dy[i], x[i], k->eps);
    } else {
        const double *dy = in[0], *x = in[1];
        double *o = out;
        for (int64_t i = 0; i < n; i++) o[i] = logit_grad(dy[i], x[i], k->eps);
    }
}

tj_status tj_meta_logit_backward(const tj_value *args, tj_meta *outs)
{
    return meta_binary("aten::logit_backward", args, outs);
}

tj_status tj_kernel_logit_backward(const tj_value *args, tj_tensor *const *outs)
{
    logit_backward_args k = {.dtype = outs[0]->dtype, .eps = logit_eps(&args[2])};
    tj_tensor *in[2] = {args[0].u.t, args[1].u.t};
    tj_elementwise(outs[0], in, 2, outs[0]->dtype, logit_backward_loop, &k);
    return TJ_OK;
}

/* ---- binary operators ---- */

/* nan where other is nan, else 0 where self is 0, else self * log1p(other)
 * (ATen's kernel, as xlogy's) */
static double f_xlog1py(double x, double y)
{
    if (isnan(y)) return NAN;
    return x == 0 ? 0 : x * log1p(y);
}

/* values where self is 0, else self > 0 (nan gives 0) */
static double f_heaviside(double x, double v) { return x == 0 ? v : (double)(x > 0); }

tj_status tj_meta_hypot(const tj_value *args, tj_meta *outs)
{
    tj_dtype dt = tj_ew_result_type(args, 2);
    if (!tj_dtype_is_float(dt))
        return tj_error(TJ_ERR_DTYPE, "aten::hypot: not implemented for %s (float32/float64 only)",
                        tj_dtype_name(dt));
    return meta_binary("aten::hypot", args, outs);
}
tj_status tj_kernel_hypot(const tj_value *args, tj_tensor *const *outs) { return run_binary(args, outs[0], hypot); }

tj_status tj_meta_copysign_Tensor(const tj_value *args, tj_meta *outs)
{
    return meta_binary("aten::copysign.Tensor", args, outs);
}
tj_status tj_kernel_copysign_Tensor(const tj_value *args, tj_tensor *const *outs)
{
    return run_binary(args, outs[0], copysign);
}

/* torch refuses operands of different dtypes; the result keeps theirs
 * (float32, float64, int64 or bool) */
tj_status tj_meta_heaviside(const tj_value *args, tj_meta *outs)
{
    tj_dtype a = args[0].u.t->dtype, b = args[1].u.t->dtype;
    if (a != b)
        return tj_error(TJ_ERR_DTYPE, "aten::heaviside: is not yet implemented for tensors with different dtypes (%s, %s)",
                        tj_dtype_name(a), tj_dtype_name(b));
    switch (a) {
    case TJ_FLOAT32:
    case TJ_FLOAT64:
    case TJ_INT64:
    case TJ_BOOL: break;
    default:
        return tj_error(TJ_ERR_UNSUPPORTED, "aten::heaviside: %s operands are not supported", tj_dtype_name(a));
    }
    const tj_tensor *ts[2] = {args[0].u.t, args[1].u.t};
    return tj_ew_meta_broadcast("aten::heaviside", ts, 2, a, outs);
}

/* the integer forms: values where self is 0, else self > 0 */
static void heaviside_int64(int64_t n, void *out, const void *const *in, const void *ctx)
{
    (void)ctx;
    const int64_t *x = in[0], *v = in[1];
    int64_t *o = out;
    for (int64_t i = 0; i < n; i++) o[i] = x[i] == 0 ? v[i] : x[i] > 0;
}

static void heaviside_bool(int64_t n, void *out, const void *const *in, const void *ctx)
{
    (void)ctx;
    const bool *x = in[0], *v = in[1];
    bool *o = out;
    for (int64_t i = 0; i < n; i++) o[i] = x[i] || v[i];
}

tj_status tj_kernel_heaviside(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *in[2] = {args[0].u.t, args[1].u.t};
    switch (outs[0]->dtype) {
    case TJ_INT64: tj_elementwise(outs[0], in, 2, TJ_INT64, heaviside_int64, NULL); return TJ_OK;
    case TJ_BOOL: tj_elementwise(outs[0], in, 2, TJ_BOOL, heaviside_bool, NULL); return TJ_OK;
    case TJ_FLOAT32:
    case TJ_FLOAT64: return run_binary(args, outs[0], f_heaviside);
    default:
        return tj_error(TJ_ERR_UNSUPPORTED, "aten::heaviside: %s operands are not supported",
                        tj_dtype_name(outs[0]->dtype));
    }
}

tj_status tj_meta_special_xlog1py(const tj_value *args, tj_meta *outs)
{
    return meta_binary("aten::special_xlog1py", args, outs);
}
tj_status tj_kernel_special_xlog1py(const tj_value *args, tj_tensor *const *outs)
{
    return run_binary(args, outs[0], f_xlog1py);
}
