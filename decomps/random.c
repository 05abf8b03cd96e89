/* randint and the randint_like forms as randint.low (ATen's randint is
 * random_(0, high) as randint.low's is random_(low, high); the _like forms
 * take self's shape and, for dtype None, its dtype); the float fills
 * (uniform, normal_functional, exponential, normal's overloads) as rand /
 * randn draws and pointwise operators. */
#include "util.h"

static tj_status randint(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(randint, args, m);
    return tj_dc_done(tj_randint_low(0, args[0].u.i, m[0].shape, m[0].ndim, (int)m[0].dtype), outs);
}

static tj_status randint_like(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(randint_like, args, m);
    return tj_dc_done(tj_randint_low(0, args[1].u.i, m[0].shape, m[0].ndim, (int)m[0].dtype), outs);
}

static tj_status randint_like_low_dtype(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(randint_like_low_dtype, args, m);
    return tj_dc_done(tj_randint_low(args[1].u.i, args[2].u.i, m[0].shape, m[0].ndim, (int)m[0].dtype), outs);
}

void tj_register_random_decompositions(void);
/* the float fills (runtime/op_random_fills.c): rand / randn draws, then
 * draw * a + b (mul.Scalar or mul.Tensor, add.Scalar or add.Tensor) or
 * log(1 - draw) * a, the kernels' arithmetic */
static tj_status affine(tj_tensor *z, const tj_value *a, const tj_value *b, tj_value *outs)
{
    tj_dtype dt = tj_tensor_dtype(z);
    tj_tensor *za = a->kind == TJ_V_TENSOR ? tj_mul(z, tj_dc_to(a->u.t, dt)) : tj_mul_scalar(z, *a);
    return tj_dc_done(b->kind == TJ_V_TENSOR ? tj_add(za, tj_dc_to(b->u.t, dt)) : tj_add_scalar(za, *b), outs);
}

static tj_status uniform(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(uniform, args, m);
    double from = tj_value_as_double(&args[1]), to = tj_value_as_double(&args[2]);
    tj_value span = tj_v_float(to - from), low = tj_v_float(from);
    return affine(tj_rand_like(args[0].u.t, TJ_DTYPE_NONE), &span, &low, outs);
}

static tj_status normal_functional(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(normal_functional, args, m);
    return affine(tj_randn_like(args[0].u.t, TJ_DTYPE_NONE), &args[2], &args[1], outs);
}

static tj_status exponential(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(exponential, args, m);
    tj_tensor *u = tj_rand_like(args[0].u.t, TJ_DTYPE_NONE);
    tj_value scale = tj_v_float(-1 / tj_value_as_double(&args[1]));
    return tj_dc_done(tj_mul_scalar(tj_log(tj_rsub_scalar(u, tj_v_int(1), tj_v_int(1))), scale), outs);
}

/* The kernels' check of a tensor std's values, when it has values (a
 * fake-mode trace cannot read them: its decomposed graph does not check) */
static tj_status check_std_values(const tj_op *op, const tj_value *std)
{
    if (std->kind != TJ_V_TENSOR || tj_tensor_is_fake(std->u.t)) return TJ_OK;
    tj_tensor *s = tj_to_copy(std->u.t, TJ_FLOAT64);
    if (!s) return tj_last_status();
    const double *v = tj_tensor_data(s);
    for (int64_t i = 0; i < tj_tensor_numel(s); i++)
        if (!(v[i] >= 0))
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: normal expects all elements of std >= 0.0",
                            tj_op_name(op));
    return TJ_OK;
}

/* randn of the result's shape and dtype, times std, plus mean */
#define NORMAL_DECOMP(ident, mean_arg, std_arg)                                       \
    static tj_status ident(const tj_value *args, tj_value *outs)                      \
    {                                                                                 \
        TJ_DC_CHECK(ident, args, m);                                                  \
        if (check_std_values(TJ_OPS(ident), &args[std_arg]) != TJ_OK) return tj_last_status(); \
        tj_tensor *z = tj_randn(m[0].shape, m[0].ndim, (int)m[0].dtype);              \
        return affine(z, &args[std_arg], &args[mean_arg], outs);                      \
    }
NORMAL_DECOMP(normal_Tensor_float, 0, 1)
NORMAL_DECOMP(normal_float_Tensor, 0, 1)
NORMAL_DECOMP(normal_Tensor_Tensor, 0, 1)
NORMAL_DECOMP(normal_float_float, 0, 1)
#undef NORMAL_DECOMP

void tj_register_random_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(uniform), uniform, "uniform");
    tj_op_set_decomposition(TJ_OPS(normal_functional), normal_functional, "normal_functional");
    tj_op_set_decomposition(TJ_OPS(exponential), exponential, "exponential");
    tj_op_set_decomposition(TJ_OPS(normal_Tensor_float), normal_Tensor_float, "normal_Tensor_float");
    tj_op_set_decomposition(TJ_OPS(normal_float_Tensor), normal_float_Tensor, "normal_float_Tensor");
    tj_op_set_decomposition(TJ_OPS(normal_Tensor_Tensor), normal_Tensor_Tensor, "normal_Tensor_Tensor");
    tj_op_set_decomposition(TJ_OPS(normal_float_float), normal_float_float, "normal_float_float");
    tj_op_set_decomposition(TJ_OPS(randint), randint, "randint");
    tj_op_set_decomposition(TJ_OPS(randint_like), randint_like, "randint_like");
    tj_op_set_decomposition(TJ_OPS(randint_like_low_dtype), randint_like_low_dtype, "randint_like_low_dtype");
}
