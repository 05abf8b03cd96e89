/* Gradient checks, as torch.autograd.gradcheck: for every differentiable
 * operator, the analytic gradient (tj_autograd_grad of sum(v * f(x)) for a
 * random v) matches central finite differences in float64 (eps 1e-6,
 * atol 1e-5, rtol 1e-3, PyTorch's defaults) on random inputs of several
 * shapes: contiguous, transposed, strided (every other row), broadcast and
 * expanded (stride 0), 0-dim where the operator allows it. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

#define EPS 1e-6
#define ATOL 1e-5
#define RTOL 1e-3
#define MAX_IN 4
#define MAX_OUT 4

typedef tj_status (*gc_fn)(tj_tensor *const *x, tj_tensor **out, int *n_out);

/* How a leaf reaches the operator: as is, transposed (last two dims), every
 * other row of a twice-as-tall leaf, or expanded from size 1 along dim 0. */
typedef enum { PLAIN, TRANSPOSED, STRIDED, EXPANDED } layout;

typedef struct in_spec {
    int ndim;
    int64_t shape[5];
    layout how;
} in_spec;

typedef struct gc_case {
    const char *name;
    gc_fn fn;
    int n_in;
    in_spec in[MAX_IN];
    double lo, hi; /* inputs are uniform in [lo, hi] */
    const double *fixed; /* when set, the first input's leaf values instead (row-major) */
} gc_case;


TestSuite(gradcheck, .init = test_scope_open, .fini = test_scope_close);

static uint64_t rng = 12345;
static double uniform(double lo, double hi)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (double)(rng >> 11) / 9007199254740992.0;
}

static tj_tensor *random_f64(int ndim, const int64_t *shape, double lo, double hi)
{
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT64, ndim, shape);
    double *p = tj_tensor_data(t);
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) p[i] = uniform(lo, hi);
    return t;
}

/* The leaf's own shape for a spec. */
static void leaf_shape(const in_spec *s, int64_t *shape)
{
    memcpy(shape, s->shape, sizeof(int64_t) * (size_t)s->ndim);
    if (s->how == TRANSPOSED) {
        shape[s->ndim - 1] = s->shape[s->ndim - 2];
        shape[s->ndim - 2] = s->shape[s->ndim - 1];
    } else if (s->how == STRIDED) {
        shape[0] *= 2;
    } else if (s->how == EXPANDED) {
        shape[0] = 1;
    }
}

static tj_tensor *arrange(tj_tensor *leaf, const in_spec *s)
{
    switch (s->how) {
    case PLAIN: return leaf;
    case TRANSPOSED: return tj_transpose(leaf, -1, -2);
    case STRIDED: return tj_slice(leaf, 0, true, 0, false, 0, 2);
    case EXPANDED: return tj_expand(leaf, s->shape, s->ndim);
    }
    return NULL;
}

/* sum over the differentiable outputs of v . f(x), grad mode off. */
static double weighted_sum(const gc_case *c, tj_tensor *const *leaves, const int *didx, int nd, tj_tensor *const *v)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x[MAX_IN], *out[MAX_OUT];
    int n_out = 0;
    for (int i = 0; i < c->n_in; i++) x[i] = arrange(leaves[i], &c->in[i]);
    cr_assert_eq(c->fn(x, out, &n_out), TJ_OK, "%s: %s", c->name, tj_last_error());
    double sum = 0;
    for (int k = 0; k < nd; k++)
        for (int64_t e = 0; e < tj_tensor_numel(out[didx[k]]); e++)
            sum += tj_tensor_item_at(v[k], e) * tj_tensor_item_at(out[didx[k]], e);
    tj_scope_end(s);
    return sum;
}

static void gradcheck(const gc_case *c)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *leaves[MAX_IN], *x[MAX_IN], *out[MAX_OUT], *dout[MAX_OUT], *v[MAX_OUT], *grads[MAX_IN];
    for (int i = 0; i < c->n_in; i++) {
        int64_t shape[5];
        leaf_shape(&c->in[i], shape);
        leaves[i] = random_f64(c->in[i].ndim, shape, c->lo, c->hi);
        if (i == 0 && c->fixed)
            memcpy(tj_tensor_data(leaves[i]), c->fixed, sizeof(double) * (size_t)tj_tensor_numel(leaves[i]));
        tj_tensor_set_requires_grad(leaves[i], true);
        x[i] = arrange(leaves[i], &c->in[i]);
    }
    int n_out = 0, nd = 0, didx[MAX_OUT];
    cr_assert_eq(c->fn(x, out, &n_out), TJ_OK, "%s: %s", c->name, tj_last_error());
    for (int k = 0; k < n_out; k++) {
        if (!out[k] || !tj_tensor_requires_grad(out[k])) continue;
        didx[nd] = k;
        dout[nd] = out[k];
        v[nd++] = random_f64(tj_tensor_ndim(out[k]), tj_tensor_shape(out[k]), -1, 1);
    }
    cr_assert_gt(nd, 0, "%s: no output requires grad", c->name);
    cr_assert_eq(tj_autograd_grad(dout, nd, v, leaves, c->n_in, grads), TJ_OK, "%s: %s", c->name, tj_last_error());
    bool prev = tj_no_grad_begin();
    for (int i = 0; i < c->n_in; i++) {
        double *p = tj_tensor_data(leaves[i]);
        for (int64_t j = 0; j < tj_tensor_numel(leaves[i]); j++) {
            double orig = p[j];
            p[j] = orig + EPS;
            double plus = weighted_sum(c, leaves, didx, nd, v);
            p[j] = orig - EPS;
            double minus = weighted_sum(c, leaves, didx, nd, v);
            p[j] = orig;
            double num = (plus - minus) / (2 * EPS), ana = grads[i] ? tj_tensor_item_at(grads[i], j) : 0;
            bool ok = fabs(ana - num) <= ATOL + RTOL * fabs(num);
            cr_expect(ok, "%s: input %d element %lld: analytic %.8g, numerical %.8g", c->name, i, (long long)j, ana,
                      num);
        }
    }
    tj_no_grad_end(prev);
    tj_scope_end(s);
}

static void check_all(const gc_case *cases, int n)
{
    for (int i = 0; i < n; i++) gradcheck(&cases[i]);
}

#define CASES(arr) check_all(arr, (int)(sizeof arr / sizeof *arr))

/* one output: o[0] = expr */
#define FN(name, expr)                                                          \
    static tj_status name(tj_tensor *const *x, tj_tensor **o, int *n)           \
    {                                                                           \
        (void)x;                                                                \
        o[0] = (expr);                                                          \
        *n = 1;                                                                 \
        return o[0] ? TJ_OK : tj_last_status();                                 \
    }

/* ---- elementwise, unary ---- */

FN(f_abs, tj_abs(x[0]))
FN(f_neg, tj_neg(x[0]))
FN(f_exp, tj_exp(x[0]))
FN(f_log, tj_log(x[0]))
FN(f_sqrt, tj_sqrt(x[0]))
FN(f_rsqrt, tj_rsqrt(x[0]))
FN(f_tanh, tj_tanh(x[0]))
FN(f_sigmoid, tj_sigmoid(x[0]))
FN(f_erf, tj_erf(x[0]))
FN(f_reciprocal, tj_reciprocal(x[0]))
FN(f_sin, tj_sin(x[0]))
FN(f_cos, tj_cos(x[0]))
FN(f_log1p, tj_log1p(x[0]))
FN(f_expm1, tj_expm1(x[0]))
FN(f_relu, tj_relu(x[0]))
FN(f_gelu, tj_gelu(x[0], "none"))
FN(f_gelu_tanh, tj_gelu(x[0], "tanh"))
FN(f_silu, tj_silu(x[0]))

typedef struct unary_op {
    const char *name;
    gc_fn fn;
    double lo, hi;
} unary_op;

Test(gradcheck, unary_operators)
{
    static const unary_op ops[] = {
        {"abs", f_abs, -1, 1}, {"neg", f_neg, -1, 1}, {"exp", f_exp, -1, 1}, {"log", f_log, 0.5, 2},
        {"sqrt", f_sqrt, 0.5, 2}, {"rsqrt", f_rsqrt, 0.5, 2}, {"tanh", f_tanh, -2, 2},
        {"sigmoid", f_sigmoid, -2, 2}, {"erf", f_erf, -1.5, 1.5}, {"reciprocal", f_reciprocal, 0.5, 2},
        {"sin", f_sin, -3, 3}, {"cos", f_cos, -3, 3}, {"log1p", f_log1p, -0.5, 1}, {"expm1", f_expm1, -1, 1},
        {"relu", f_relu, -1, 1}, {"gelu", f_gelu, -2, 2}, {"gelu(tanh)", f_gelu_tanh, -2, 2},
        {"silu", f_silu, -2, 2},
    };
    static const in_spec shapes[] = {
        {2, {3, 4}, PLAIN}, {2, {3, 4}, TRANSPOSED}, {2, {2, 3}, STRIDED}, {0, {0}, PLAIN}};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
            gc_case c = {ops[i].name, ops[i].fn, 1, {shapes[k]}, ops[i].lo, ops[i].hi};
            gradcheck(&c);
        }
}

/* ---- elementwise, binary and ternary ---- */

FN(f_add, tj_add_alpha(x[0], x[1], tj_v_float(2.5)))
FN(f_add_scalar, tj_add_scalar(x[0], tj_v_float(0.5)))
FN(f_sub, tj_sub_alpha(x[0], x[1], tj_v_float(1.5)))
FN(f_sub_scalar, tj_sub_scalar(x[0], tj_v_int(2)))
FN(f_mul, tj_mul(x[0], x[1]))
FN(f_mul_scalar, tj_mul_scalar(x[0], tj_v_float(-1.5)))
FN(f_div, tj_div(x[0], x[1]))
FN(f_div_scalar, tj_div_scalar(x[0], tj_v_float(0.3)))
FN(f_div_mode_none, tj_div_mode(x[0], x[1], NULL))
FN(f_pow, tj_pow(x[0], x[1]))
FN(f_maximum, tj_maximum(x[0], x[1]))
FN(f_minimum, tj_minimum(x[0], x[1]))
FN(f_logaddexp, tj_logaddexp(x[0], x[1]))
FN(f_clamp_tensor, tj_clamp_tensor(x[0], x[1], tj_add_scalar(x[1], tj_v_float(0.6))))
FN(f_clamp_tensor_min, tj_clamp_tensor(x[0], x[1], NULL))
FN(f_addcmul, tj_addcmul(x[0], x[1], x[0], tj_v_float(0.7)))
FN(f_addcdiv, tj_addcdiv(x[1], x[0], x[1], tj_v_float(-0.4)))
FN(f_copy, tj_mul(tj_copy(x[0], x[1]), x[0]))

typedef struct binary_op {
    const char *name;
    gc_fn fn;
    double lo, hi;
} binary_op;

Test(gradcheck, binary_operators)
{
    static const binary_op ops[] = {
        {"add.Tensor", f_add, -1, 1}, {"sub.Tensor", f_sub, -1, 1}, {"mul.Tensor", f_mul, -1, 1},
        {"div.Tensor", f_div, 0.5, 2}, {"div.Tensor_mode", f_div_mode_none, 0.5, 2},
        {"pow.Tensor_Tensor", f_pow, 0.5, 2}, {"maximum", f_maximum, -1, 1}, {"minimum", f_minimum, -1, 1},
        {"logaddexp", f_logaddexp, -2, 2}, {"clamp.Tensor", f_clamp_tensor, -1, 1},
        {"clamp.Tensor(min)", f_clamp_tensor_min, -1, 1}, {"addcmul", f_addcmul, -1, 1},
        {"addcdiv", f_addcdiv, 0.5, 2}, {"copy", f_copy, -1, 1},
    };
    /* self / other shapes: same, broadcast vector, outer broadcast, transposed,
     * expanded, 0-dim other */
    static const in_spec shapes[][2] = {
        {{2, {3, 4}, PLAIN}, {2, {3, 4}, PLAIN}},     {{2, {3, 4}, PLAIN}, {1, {4}, PLAIN}},
        {{2, {3, 1}, PLAIN}, {2, {1, 4}, PLAIN}},     {{2, {3, 4}, TRANSPOSED}, {2, {3, 4}, STRIDED}},
        {{2, {3, 4}, PLAIN}, {2, {3, 4}, EXPANDED}},  {{1, {3}, PLAIN}, {0, {0}, PLAIN}},
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
            bool is_copy = ops[i].fn == f_copy;
            if (is_copy && (k == 2)) continue; /* copy's source must broadcast to self */
            gc_case c = {ops[i].name, ops[i].fn, 2, {shapes[k][0], shapes[k][1]}, ops[i].lo, ops[i].hi};
            if (is_copy && k == 5) continue;
            gradcheck(&c);
        }
}

FN(f_pow_scalar3, tj_pow_scalar(x[0], tj_v_int(3)))
FN(f_pow_scalar_half, tj_pow_scalar(x[0], tj_v_float(2.5)))
FN(f_pow_scalar0, tj_add(tj_pow_scalar(x[0], tj_v_int(0)), x[0]))
FN(f_clamp, tj_clamp(x[0], tj_v_float(-0.5), tj_v_float(0.4)))
FN(f_clamp_max, tj_clamp(x[0], tj_v_none(), tj_v_int(0)))
FN(f_lerp_low, tj_lerp(x[0], x[1], tj_v_float(0.3)))
FN(f_lerp_high, tj_lerp(x[0], x[1], tj_v_float(0.8)))
FN(f_div_trunc, tj_add(tj_div_mode(x[0], x[1], "trunc"), x[1]))

static tj_tensor *fixed_mask(int ndim, const int64_t *shape)
{
    tj_tensor *m = tj_tensor_empty(TJ_BOOL, ndim, shape);
    uint8_t *p = tj_tensor_data(m);
    for (int64_t i = 0; i < tj_tensor_numel(m); i++) p[i] = (i * 7 + 3) % 5 < 2;
    return m;
}

static tj_status f_where(tj_tensor *const *x, tj_tensor **o, int *n)
{
    int64_t s[2] = {3, 4};
    o[0] = tj_where(fixed_mask(2, s), x[0], x[1]);
    *n = 1;
    return o[0] ? TJ_OK : tj_last_status();
}

static tj_status f_masked_fill(tj_tensor *const *x, tj_tensor **o, int *n)
{
    int64_t s[1] = {4};
    o[0] = tj_masked_fill(x[0], fixed_mask(1, s), tj_v_float(2.5));
    *n = 1;
    return o[0] ? TJ_OK : tj_last_status();
}

Test(gradcheck, scalar_overloads_and_selections)
{
    static const gc_case cases[] = {
        {"add.Scalar", f_add_scalar, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"sub.Scalar", f_sub_scalar, 1, {{2, {3, 4}, PLAIN}}, -1, 1},
        {"mul.Scalar", f_mul_scalar, 1, {{2, {2, 3}, STRIDED}}, -1, 1},
        {"div.Scalar", f_div_scalar, 1, {{0, {0}, PLAIN}}, -1, 1},
        {"pow.Tensor_Scalar(3)", f_pow_scalar3, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"pow.Tensor_Scalar(2.5)", f_pow_scalar_half, 1, {{2, {3, 4}, PLAIN}}, 0.5, 2},
        {"pow.Tensor_Scalar(0)", f_pow_scalar0, 1, {{1, {5}, PLAIN}}, -1, 1},
        {"div.Tensor_mode(trunc)", f_div_trunc, 2, {{1, {5}, PLAIN}, {1, {5}, PLAIN}}, 0.5, 2},
        {"clamp", f_clamp, 1, {{2, {3, 4}, STRIDED}}, -1, 1},
        {"clamp(max)", f_clamp_max, 1, {{2, {3, 4}, PLAIN}}, -1, 1},
        {"where.self", f_where, 2, {{2, {3, 4}, TRANSPOSED}, {1, {4}, PLAIN}}, -1, 1},
        {"where.self(0-dim)", f_where, 2, {{0, {0}, PLAIN}, {2, {3, 4}, EXPANDED}}, -1, 1},
        {"masked_fill.Scalar", f_masked_fill, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"lerp.Scalar(0.3)", f_lerp_low, 2, {{2, {3, 4}, PLAIN}, {1, {4}, PLAIN}}, -1, 1},
        {"lerp.Scalar(0.8)", f_lerp_high, 2, {{2, {3, 4}, TRANSPOSED}, {2, {3, 4}, PLAIN}}, -1, 1},
    };
    CASES(cases);
}

/* ---- reductions ---- */

static const int64_t d1[1] = {1}, d02[2] = {0, 2}, dneg[1] = {-1};

FN(f_sum_dim, tj_sum_dim(x[0], d1, 1, false, -1))
FN(f_sum_dim_keep, tj_sum_dim(x[0], d02, 2, true, -1))
FN(f_sum_all_dims, tj_sum_dim(x[0], NULL, 0, false, -1))
FN(f_sum, tj_sum(x[0], -1))
FN(f_mean_dim, tj_mean_dim(x[0], dneg, 1, false, -1))
FN(f_mean_dim_keep, tj_mean_dim(x[0], d02, 2, true, -1))
FN(f_amax, tj_amax(x[0], d1, 1, false))
FN(f_amax_all, tj_amax(x[0], NULL, 0, true))
FN(f_amin, tj_amin(x[0], d02, 2, false))
FN(f_var, tj_var(x[0], d1, 1, -1, false))
FN(f_var_c0, tj_var(x[0], d02, 2, 0, true))
FN(f_logsumexp, tj_logsumexp(x[0], d1, 1, false))
FN(f_logsumexp_keep, tj_logsumexp(x[0], d02, 2, true))
FN(f_prod, tj_prod(x[0], -1))
FN(f_prod_dim, tj_prod_dim(x[0], 1, false, -1))
FN(f_prod_dim_keep, tj_prod_dim(x[0], -1, true, -1))
FN(f_prod_dim0, tj_prod_dim(x[0], 0, false, -1))
FN(f_cumprod, tj_cumprod(x[0], 1, -1))
FN(f_cumprod_m2, tj_cumprod(x[0], -2, -1))
FN(f_cumprod0, tj_cumprod(x[0], 0, -1))

static tj_status f_max_dim(tj_tensor *const *x, tj_tensor **o, int *n)
{
    *n = 2;
    return tj_max_dim(x[0], 1, false, &o[0], &o[1]);
}

static tj_status f_max_dim_keep(tj_tensor *const *x, tj_tensor **o, int *n)
{
    *n = 2;
    return tj_max_dim(x[0], -1, true, &o[0], &o[1]);
}

static tj_status f_var_mean(tj_tensor *const *x, tj_tensor **o, int *n)
{
    *n = 2;
    return tj_var_mean(x[0], d1, 1, -1, false, &o[0], &o[1]);
}

/* finite differences are exact at a zero of a product (it is linear in
 * each element); rows with one, two and no zero */
static const double prod_zeros[12] = {1.5, -0.5, 0, 2, 0.75, 0, -1.25, 0, 1.25, -2, 0.5, 1.5};
static const double prod_one_zero[6] = {1.5, -0.5, 2, 0, 0.75, -1.25};
/* so is a cumprod's; rows with a zero first, two zeros apart, three zeros
 * at the end, a zero last, none */
static const double cumprod_zeros[25] = {0,   1.5, -0.5, 2,     0.75, 1.25, 0,    -2, 0,  0.5,  0.5, -1.5, 0,
                                         0,   0,   1.5,  -0.75, 2,    1.25, 0,    -1.25, 0.5, 1.5, -2,  0.75};

Test(gradcheck, reductions)
{
    static const gc_case cases[] = {
        {"sum.dim_IntList", f_sum_dim, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"sum.dim_IntList(keepdim)", f_sum_dim_keep, 1, {{3, {2, 3, 2}, STRIDED}}, -1, 1},
        {"sum.dim_IntList(all)", f_sum_all_dims, 1, {{2, {3, 4}, EXPANDED}}, -1, 1},
        {"sum", f_sum, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"sum(0-dim)", f_sum, 1, {{0, {0}, PLAIN}}, -1, 1},
        {"mean.dim", f_mean_dim, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"mean.dim(keepdim)", f_mean_dim_keep, 1, {{3, {2, 3, 2}, PLAIN}}, -1, 1},
        {"amax", f_amax, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"amax(all)", f_amax_all, 1, {{2, {3, 4}, STRIDED}}, -1, 1},
        {"amin", f_amin, 1, {{3, {2, 3, 2}, PLAIN}}, -1, 1},
        {"max.dim", f_max_dim, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"max.dim(keepdim)", f_max_dim_keep, 1, {{3, {2, 3, 4}, STRIDED}}, -1, 1},
        {"var.correction", f_var, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"var.correction(0, keepdim)", f_var_c0, 1, {{3, {2, 3, 2}, STRIDED}}, -1, 1},
        {"var_mean.correction", f_var_mean, 1, {{2, {3, 4}, PLAIN}}, -1, 1},
        {"logsumexp", f_logsumexp, 1, {{2, {3, 4}, TRANSPOSED}}, -2, 2},
        {"logsumexp(keepdim)", f_logsumexp_keep, 1, {{3, {2, 3, 2}, PLAIN}}, -2, 2},
        {"prod", f_prod, 1, {{2, {3, 4}, TRANSPOSED}}, 0.5, 1.5},
        {"prod(0-dim)", f_prod, 1, {{0, {0}, PLAIN}}, -1, 1},
        {"prod.dim_int", f_prod_dim, 1, {{2, {3, 4}, STRIDED}}, -1.5, 1.5},
        {"prod.dim_int(keepdim)", f_prod_dim_keep, 1, {{3, {2, 3, 2}, TRANSPOSED}}, -1.5, 1.5},
        {"prod.dim_int(expanded)", f_prod_dim0, 1, {{2, {3, 4}, EXPANDED}}, -1.5, 1.5},
        {"prod.dim_int(0-dim)", f_prod_dim_keep, 1, {{0, {0}, PLAIN}}, -1, 1},
        /* zeros: one in a row, two in a row (the safe formula); one and
         * several over every element */
        {"prod.dim_int(zeros)", f_prod_dim, 1, {{2, {3, 4}, PLAIN}}, 0, 0, prod_zeros},
        {"prod(one zero)", f_prod, 1, {{2, {2, 3}, TRANSPOSED}}, 0, 0, prod_one_zero},
        {"prod(two zeros)", f_prod, 1, {{2, {2, 3}, PLAIN}}, 0, 0, prod_zeros},
        {"cumprod", f_cumprod, 1, {{2, {3, 4}, TRANSPOSED}}, -1.5, 1.5},
        {"cumprod(inner dim)", f_cumprod_m2, 1, {{3, {2, 3, 2}, STRIDED}}, -1.5, 1.5},
        {"cumprod(expanded)", f_cumprod0, 1, {{2, {3, 4}, EXPANDED}}, -1.5, 1.5},
        {"cumprod(0-dim)", f_cumprod0, 1, {{0, {0}, PLAIN}}, -1, 1},
        {"cumprod(zeros)", f_cumprod, 1, {{2, {5, 5}, PLAIN}}, 0, 0, cumprod_zeros},
        {"cumprod(zeros, dim 0)", f_cumprod_m2, 1, {{2, {5, 5}, TRANSPOSED}}, 0, 0, cumprod_zeros},
    };
    CASES(cases);
}

/* ---- linear algebra ---- */

FN(f_mm, tj_mm(x[0], x[1]))
FN(f_bmm, tj_bmm(x[0], x[1]))
FN(f_addmm, tj_addmm(x[0], x[1], x[2], tj_v_float(0.5), tj_v_float(2)))
FN(f_addmm_default, tj_addmm(x[0], x[1], x[2], tj_v_int(1), tj_v_int(1)))
FN(f_linear, tj_linear(x[0], x[1], x[2]))
FN(f_matmul, tj_matmul(x[0], x[1]))

Test(gradcheck, linear_algebra)
{
    static const gc_case cases[] = {
        {"mm", f_mm, 2, {{2, {3, 4}, PLAIN}, {2, {4, 2}, PLAIN}}, -1, 1},
        {"mm(strided)", f_mm, 2, {{2, {3, 4}, TRANSPOSED}, {2, {4, 2}, STRIDED}}, -1, 1},
        {"bmm", f_bmm, 2, {{3, {2, 3, 4}, PLAIN}, {3, {2, 4, 2}, TRANSPOSED}}, -1, 1},
        {"addmm", f_addmm, 3, {{1, {2}, PLAIN}, {2, {3, 4}, TRANSPOSED}, {2, {4, 2}, PLAIN}}, -1, 1},
        {"addmm(full self)", f_addmm_default, 3, {{2, {3, 2}, STRIDED}, {2, {3, 4}, PLAIN}, {2, {4, 2}, PLAIN}}, -1, 1},
        {"linear", f_linear, 3, {{3, {2, 3, 4}, PLAIN}, {2, {5, 4}, PLAIN}, {1, {5}, PLAIN}}, -1, 1},
        {"matmul(broadcast batch)", f_matmul, 2, {{3, {2, 3, 4}, PLAIN}, {2, {4, 2}, TRANSPOSED}}, -1, 1},
    };
    CASES(cases);
}

/* ---- views and data movement ---- */

static const int64_t s_6x2[2] = {6, 2}, s_3x4[2] = {3, 4}, s_4x6[2] = {4, 6}, perm[3] = {2, 0, 1}, s_exp[3] = {2, 3, 4};

FN(f_view, tj_view(x[0], s_6x2, 2))
FN(f_view_rows, tj_view(x[0], s_3x4, 2))
FN(f_unsafe_view, tj_unsafe_view(x[0], s_6x2, 2))
FN(f_permute, tj_permute(x[0], perm, 3))
FN(f_transpose, tj_transpose(x[0], 0, 2))
FN(f_t, tj_t(x[0]))
FN(f_expand, tj_expand(x[0], s_exp, 3))
FN(f_unsqueeze, tj_unsqueeze(x[0], -1))
FN(f_squeeze, tj_squeeze_dim(x[0], 1))
FN(f_squeeze_noop, tj_squeeze_dim(x[0], 0))
FN(f_select, tj_select(x[0], 1, -2))
FN(f_slice, tj_slice(x[0], 1, true, 1, true, 4, 2))
FN(f_slice_open, tj_slice(x[0], 0, false, 0, false, 0, 1))
FN(f_cat, tj_cat(x, 3, 1))
FN(f_clone, tj_clone(x[0]))
FN(f_to_copy, tj_to_copy(x[0], TJ_FLOAT64))
FN(f_reshape, tj_reshape(x[0], s_4x6, 2))
FN(f_slice_scatter, tj_slice_scatter(x[0], x[1], 1, true, 0, false, 0, 2))
FN(f_select_scatter, tj_select_scatter(x[0], x[1], 0, 1))

Test(gradcheck, views_and_data_movement)
{
    static const gc_case cases[] = {
        {"view", f_view, 1, {{2, {3, 4}, PLAIN}}, -1, 1},
        {"view(strided rows)", f_view_rows, 1, {{3, {3, 2, 2}, STRIDED}}, -1, 1},
        {"_unsafe_view", f_unsafe_view, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"permute", f_permute, 1, {{3, {2, 3, 2}, TRANSPOSED}}, -1, 1},
        {"transpose.int", f_transpose, 1, {{3, {2, 3, 2}, PLAIN}}, -1, 1},
        {"t", f_t, 1, {{2, {3, 4}, STRIDED}}, -1, 1},
        {"t(1-d)", f_t, 1, {{1, {4}, PLAIN}}, -1, 1},
        {"expand", f_expand, 1, {{2, {1, 4}, PLAIN}}, -1, 1},
        {"unsqueeze", f_unsqueeze, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"squeeze.dim", f_squeeze, 1, {{3, {3, 1, 4}, PLAIN}}, -1, 1},
        {"squeeze.dim(no-op)", f_squeeze_noop, 1, {{2, {3, 4}, PLAIN}}, -1, 1},
        {"select.int", f_select, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"slice.Tensor", f_slice, 1, {{2, {3, 5}, STRIDED}}, -1, 1},
        {"slice.Tensor(open)", f_slice_open, 1, {{2, {3, 5}, PLAIN}}, -1, 1},
        {"cat", f_cat, 3, {{2, {3, 2}, PLAIN}, {2, {3, 4}, TRANSPOSED}, {2, {3, 1}, EXPANDED}}, -1, 1},
        {"clone", f_clone, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"_to_copy", f_to_copy, 1, {{2, {3, 4}, STRIDED}}, -1, 1},
        {"reshape(copies)", f_reshape, 1, {{3, {2, 3, 4}, TRANSPOSED}}, -1, 1},
        {"slice_scatter", f_slice_scatter, 2, {{2, {3, 4}, TRANSPOSED}, {2, {3, 2}, PLAIN}}, -1, 1},
        {"select_scatter", f_select_scatter, 2, {{2, {3, 4}, PLAIN}, {1, {4}, PLAIN}}, -1, 1},
    };
    CASES(cases);
}

/* ---- indexing ---- */

static tj_tensor *index_tensor(int ndim, const int64_t *shape, int64_t bound)
{
    tj_tensor *t = tj_tensor_empty(TJ_INT64, ndim, shape);
    int64_t *p = tj_tensor_data(t);
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) p[i] = (i * 5 + 2) % bound;
    return t;
}

static tj_status f_gather(tj_tensor *const *x, tj_tensor **o, int *n)
{
    int64_t s[2] = {4, 3};
    o[0] = tj_gather(x[0], 1, index_tensor(2, s, 4));
    *n = 1;
    return o[0] ? TJ_OK : tj_last_status();
}

static tj_status f_scatter_add(tj_tensor *const *x, tj_tensor **o, int *n)
{
    int64_t s[2] = {2, 4};
    o[0] = tj_scatter_add(x[0], 0, index_tensor(2, s, 3), x[1]);
    *n = 1;
    return o[0] ? TJ_OK : tj_last_status();
}

/* the in-place adds, into a copy of the first input */
static tj_status f_scatter_add_(tj_tensor *const *x, tj_tensor **o, int *n)
{
    int64_t s[2] = {2, 4};
    o[0] = tj_scatter_add_(tj_clone(x[0]), 0, index_tensor(2, s, 3), x[1]);
    *n = 1;
    return o[0] ? TJ_OK : tj_last_status();
}

static tj_status f_index_add_(tj_tensor *const *x, tj_tensor **o, int *n)
{
    int64_t s[1] = {5};
    o[0] = tj_index_add_(tj_clone(x[0]), 1, index_tensor(1, s, 4), x[1], tj_v_float(2.5));
    *n = 1;
    return o[0] ? TJ_OK : tj_last_status();
}

FN(f_unfold, tj_unfold(x[0], 1, 3, 2))
FN(f_unfold_overlap, tj_unfold(x[0], 0, 2, 1))

Test(gradcheck, indexing)
{
    static const gc_case cases[] = {
        {"gather", f_gather, 1, {{2, {4, 4}, TRANSPOSED}}, -1, 1},
        {"scatter_add", f_scatter_add, 2, {{2, {3, 4}, STRIDED}, {2, {2, 5}, PLAIN}}, -1, 1},
        {"scatter_add_", f_scatter_add_, 2, {{2, {3, 4}, TRANSPOSED}, {2, {2, 5}, STRIDED}}, -1, 1},
        {"index_add_ (repeated indices, alpha)", f_index_add_, 2, {{2, {3, 4}, STRIDED}, {2, {3, 5}, PLAIN}}, -1, 1},
        {"unfold", f_unfold, 1, {{3, {2, 7, 2}, PLAIN}}, -1, 1},
        {"unfold(overlapping, strided)", f_unfold_overlap, 1, {{2, {4, 3}, STRIDED}}, -1, 1},
    };
    CASES(cases);
}

/* ---- neural-network operators ---- */

FN(f_softmax, tj__softmax(x[0], 1, false))
FN(f_softmax0, tj__softmax(x[0], 0, false))
FN(f_log_softmax, tj__log_softmax(x[0], -1, false))
FN(f_log_softmax0, tj__log_softmax(x[0], 0, false))

static const int64_t ln_shape[1] = {4}, ln_shape2[2] = {3, 4};

static tj_status f_layer_norm(tj_tensor *const *x, tj_tensor **o, int *n)
{
    *n = 3;
    return tj_native_layer_norm(x[0], ln_shape, 1, x[1], x[2], 1e-5, &o[0], &o[1], &o[2]);
}

static tj_status f_layer_norm_plain(tj_tensor *const *x, tj_tensor **o, int *n)
{
    *n = 3;
    return tj_native_layer_norm(x[0], ln_shape2, 2, NULL, NULL, 1e-5, &o[0], &o[1], &o[2]);
}

static const int64_t one2[2] = {1, 1}, two2[2] = {2, 2}, zero2[2] = {0, 0};

FN(f_conv, tj_convolution(x[0], x[1], x[2], one2, one2, one2, false, zero2, 1))
FN(f_conv_strided, tj_convolution(x[0], x[1], NULL, two2, zero2, one2, false, zero2, 1))
FN(f_conv_groups, tj_convolution(x[0], x[1], x[2], one2, one2, two2, false, zero2, 2))

static tj_status f_max_pool(tj_tensor *const *x, tj_tensor **o, int *n)
{
    *n = 2;
    return tj_max_pool2d_with_indices(x[0], two2, NULL, zero2, one2, false, &o[0], &o[1]);
}

static tj_status f_max_pool_padded(tj_tensor *const *x, tj_tensor **o, int *n)
{
    static const int64_t k3[2] = {3, 3};
    *n = 2;
    return tj_max_pool2d_with_indices(x[0], k3, one2, one2, one2, true, &o[0], &o[1]);
}

FN(f_avg_pool, tj_avg_pool2d(x[0], two2, NULL, zero2, false, true, 0))
FN(f_avg_pool_ceil, tj_avg_pool2d(x[0], (const int64_t[]){3, 2}, two2, one2, true, false, 0))
FN(f_avg_pool_divisor, tj_avg_pool2d(x[0], two2, one2, one2, false, true, 3))

static const int64_t pooled_3x2[2] = {3, 2}, pooled_5x4[2] = {5, 4};
FN(f_adaptive_avg_pool, tj__adaptive_avg_pool2d(x[0], pooled_3x2))
FN(f_adaptive_avg_pool_larger, tj__adaptive_avg_pool2d(x[0], pooled_5x4))

/* x[0] is grad_output [1, 2, 3, 2] of a self [1, 2, 7, 5] (its values unused) */
static tj_status f_adaptive_avg_pool_backward(tj_tensor *const *x, tj_tensor **o, int *n)
{
    int64_t s[4] = {1, 2, 7, 5};
    o[0] = tj__adaptive_avg_pool2d_backward(x[0], tj_zeros(s, 4, TJ_FLOAT64));
    *n = 1;
    return o[0] ? TJ_OK : tj_last_status();
}

static tj_tensor *indices(int n, const int64_t *v)
{
    int64_t s[1] = {n};
    return tj_tensor_from_data(TJ_INT64, 1, s, v);
}

static tj_status f_embedding(tj_tensor *const *x, tj_tensor **o, int *n)
{
    static const int64_t idx[5] = {1, 3, 1, 0, 4};
    o[0] = tj_embedding(x[0], indices(5, idx), -1);
    *n = 1;
    return o[0] ? TJ_OK : tj_last_status();
}

static tj_status f_dropout(tj_tensor *const *x, tj_tensor **o, int *n)
{
    tj_manual_seed(7); /* the same mask on every evaluation */
    *n = 2;
    return tj_native_dropout(x[0], 0.4, true, &o[0], &o[1]);
}

static tj_status f_dropout_train_none(tj_tensor *const *x, tj_tensor **o, int *n)
{
    tj_value args[3] = {tj_v_tensor(x[0]), tj_v_float(0.25), tj_v_none()}, outs[2];
    tj_manual_seed(11);
    tj_status st = tj_dispatch(TJ_OPS(native_dropout), args, 3, outs);
    o[0] = outs[0].u.t;
    o[1] = outs[1].u.t;
    *n = 2;
    return st;
}

static tj_status nll(tj_tensor *const *x, tj_tensor **o, int *n, tj_tensor *weight, int64_t reduction)
{
    static const int64_t target[4] = {2, 0, 4, 1};
    *n = 2;
    return tj_nll_loss_forward(x[0], indices(4, target), weight, reduction, 0, &o[0], &o[1]);
}

static tj_status f_nll_mean(tj_tensor *const *x, tj_tensor **o, int *n) { return nll(x, o, n, NULL, 1); }
static tj_status f_nll_sum_weighted(tj_tensor *const *x, tj_tensor **o, int *n)
{
    static const double w[5] = {0.5, 1, 2, 0.1, 3};
    int64_t s[1] = {5};
    return nll(x, o, n, tj_tensor_from_data(TJ_FLOAT64, 1, s, w), 2);
}
static tj_status f_nll_none_weighted_mean(tj_tensor *const *x, tj_tensor **o, int *n)
{
    static const double w[5] = {0.5, 1, 2, 0.1, 3};
    int64_t s[1] = {5};
    tj_status st = nll(x, o, n, tj_tensor_from_data(TJ_FLOAT64, 1, s, w), 1);
    return st;
}
static tj_status f_nll_none(tj_tensor *const *x, tj_tensor **o, int *n) { return nll(x, o, n, NULL, 0); }

FN(f_cross_entropy, tj_cross_entropy(x[0], indices(4, (const int64_t[]){2, 0, 4, 1}), NULL, 1, -100, 0.0))
FN(f_mse, tj_mse_loss(x[0], x[1], 1))
FN(f_mse_sum, tj_mse_loss(x[0], x[1], 2))
FN(f_mse_backward_mean, tj_mse_loss_backward(x[0], x[1], x[2], 1))
FN(f_attention, tj_scaled_dot_product_attention(x[0], x[1], x[2], NULL, 0.0, false))
FN(f_attention_causal, tj_scaled_dot_product_attention(x[0], x[1], x[2], NULL, 0.0, true))
FN(f_attention_float_mask, tj_scaled_dot_product_attention(x[0], x[1], x[2], x[3], 0.0, false))

static tj_status f_attention_bool_mask(tj_tensor *const *x, tj_tensor **o, int *n)
{
    int64_t s[2] = {3, 4};
    o[0] = tj_scaled_dot_product_attention(x[0], x[1], x[2], fixed_mask(2, s), 0.0, false);
    *n = 1;
    return o[0] ? TJ_OK : tj_last_status();
}

Test(gradcheck, neural_network_operators)
{
    static const gc_case cases[] = {
        {"_softmax", f_softmax, 1, {{2, {3, 4}, TRANSPOSED}}, -2, 2},
        {"_softmax(dim 0)", f_softmax0, 1, {{3, {2, 3, 2}, STRIDED}}, -2, 2},
        {"_log_softmax", f_log_softmax, 1, {{2, {3, 4}, PLAIN}}, -2, 2},
        {"_log_softmax(dim 0)", f_log_softmax0, 1, {{2, {3, 4}, TRANSPOSED}}, -2, 2},
        {"native_layer_norm", f_layer_norm, 3, {{3, {2, 3, 4}, PLAIN}, {1, {4}, PLAIN}, {1, {4}, PLAIN}}, -1, 1},
        {"native_layer_norm(strided, no affine)", f_layer_norm_plain, 1, {{3, {2, 3, 4}, STRIDED}}, -1, 1},
        {"convolution", f_conv, 3, {{4, {2, 2, 4, 4}, PLAIN}, {4, {3, 2, 3, 3}, PLAIN}, {1, {3}, PLAIN}}, -1, 1},
        {"convolution(stride 2, no bias)", f_conv_strided, 2, {{4, {1, 2, 5, 5}, STRIDED}, {4, {2, 2, 2, 2}, PLAIN}},
         -1, 1},
        {"convolution(groups 2, dilation 2)", f_conv_groups, 3,
         {{4, {1, 4, 5, 5}, PLAIN}, {4, {2, 2, 2, 2}, PLAIN}, {1, {2}, PLAIN}}, -1, 1},
        {"max_pool2d_with_indices", f_max_pool, 1, {{4, {2, 2, 4, 4}, PLAIN}}, -1, 1},
        {"max_pool2d_with_indices(pad, ceil)", f_max_pool_padded, 1, {{4, {1, 2, 5, 5}, TRANSPOSED}}, -1, 1},
        {"avg_pool2d", f_avg_pool, 1, {{4, {1, 2, 4, 4}, PLAIN}}, -1, 1},
        {"avg_pool2d(ceil, no pad count)", f_avg_pool_ceil, 1, {{4, {1, 2, 6, 5}, TRANSPOSED}}, -1, 1},
        {"avg_pool2d(divisor, 3-d)", f_avg_pool_divisor, 1, {{3, {2, 4, 4}, STRIDED}}, -1, 1},
        {"_adaptive_avg_pool2d", f_adaptive_avg_pool, 1, {{4, {1, 2, 7, 5}, TRANSPOSED}}, -1, 1},
        {"_adaptive_avg_pool2d(larger, 3-d)", f_adaptive_avg_pool_larger, 1, {{3, {2, 3, 3}, STRIDED}}, -1, 1},
        {"_adaptive_avg_pool2d_backward", f_adaptive_avg_pool_backward, 1, {{4, {1, 2, 3, 2}, EXPANDED}}, -1, 1},
        {"embedding", f_embedding, 1, {{2, {5, 3}, PLAIN}}, -1, 1},
        {"native_dropout", f_dropout, 1, {{2, {4, 5}, TRANSPOSED}}, -1, 1},
        {"native_dropout(train None)", f_dropout_train_none, 1, {{2, {4, 5}, PLAIN}}, -1, 1},
        {"nll_loss_forward(mean)", f_nll_mean, 1, {{2, {4, 5}, PLAIN}}, -1, 1},
        {"nll_loss_forward(sum, weight)", f_nll_sum_weighted, 1, {{2, {4, 5}, TRANSPOSED}}, -1, 1},
        {"nll_loss_forward(mean, weight)", f_nll_none_weighted_mean, 1, {{2, {4, 5}, PLAIN}}, -1, 1},
        {"nll_loss_forward(none)", f_nll_none, 1, {{2, {4, 5}, STRIDED}}, -1, 1},
        {"cross_entropy", f_cross_entropy, 1, {{2, {4, 5}, PLAIN}}, -2, 2},
        {"mse_loss", f_mse, 2, {{2, {3, 4}, PLAIN}, {2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"mse_loss(sum, broadcast target)", f_mse_sum, 2, {{2, {3, 4}, STRIDED}, {1, {4}, PLAIN}}, -1, 1},
        {"mse_loss_backward(mean)", f_mse_backward_mean, 3,
         {{2, {3, 4}, PLAIN}, {2, {3, 4}, TRANSPOSED}, {2, {3, 4}, PLAIN}}, -1, 1},
        {"scaled_dot_product_attention", f_attention, 3,
         {{3, {2, 3, 4}, PLAIN}, {3, {2, 4, 4}, TRANSPOSED}, {3, {2, 4, 2}, PLAIN}}, -1, 1},
        {"scaled_dot_product_attention(causal)", f_attention_causal, 3,
         {{3, {2, 3, 4}, PLAIN}, {3, {2, 3, 4}, PLAIN}, {3, {2, 3, 2}, STRIDED}}, -1, 1},
        {"scaled_dot_product_attention(float mask)", f_attention_float_mask, 4,
         {{3, {2, 3, 4}, PLAIN}, {3, {2, 4, 4}, PLAIN}, {3, {2, 4, 2}, PLAIN}, {2, {3, 4}, PLAIN}}, -1, 1},
        {"scaled_dot_product_attention(bool mask)", f_attention_bool_mask, 3,
         {{3, {2, 3, 4}, PLAIN}, {3, {2, 4, 4}, PLAIN}, {3, {2, 4, 2}, PLAIN}}, -1, 1},
    };
    CASES(cases);
}

/* ---- backward operators of activations: double backward ---- */

FN(f_threshold_backward, tj_threshold_backward(x[0], x[1], tj_v_float(0.25)))
FN(f_leaky_relu_backward, tj_leaky_relu_backward(x[0], x[1], tj_v_float(0.2), false))
FN(f_hardtanh_backward, tj_hardtanh_backward(x[0], x[1], tj_v_float(-0.5), tj_v_float(0.4)))
FN(f_hardsigmoid_backward, tj_hardsigmoid_backward(x[0], x[1]))
FN(f_hardswish_backward, tj_hardswish_backward(x[0], x[1]))
FN(f_tanh_backward, tj_tanh_backward(x[0], x[1]))
FN(f_sigmoid_backward, tj_sigmoid_backward(x[0], x[1]))
FN(f_softplus_backward, tj_softplus_backward(x[0], x[1], tj_v_float(1.5), tj_v_int(2)))
FN(f_gelu_backward, tj_gelu_backward(x[0], x[1], "none"))
FN(f_gelu_backward_tanh, tj_gelu_backward(x[0], x[1], "tanh"))
FN(f_elu_backward, tj_elu_backward(x[0], tj_v_float(1.3), tj_v_float(1.05), tj_v_float(0.7), false, x[1]))
FN(f_elu_backward_result, tj_elu_backward(x[0], tj_v_float(1.3), tj_v_float(1.05), tj_v_float(0.7), true, x[1]))
/* the buffer as log_sigmoid_forward computes it from self, detached (it
 * must not require grad): the formula for self covers its dependence */
FN(f_log_sigmoid_backward, tj_log_sigmoid_backward(x[0], x[1], tj_tensor_detach(tj_exp(tj_neg(tj_abs(x[1]))))))
FN(f_glu_backward, tj_glu_backward(x[0], x[1], 1))
FN(f_glu_backward0, tj_glu_backward(x[0], x[1], -3))

Test(gradcheck, activation_backward_operators)
{
    /* grad_output and self both vary; kinks are hit with probability 0 */
    static const gc_case cases[] = {
        {"threshold_backward", f_threshold_backward, 2, {{2, {3, 4}, PLAIN}, {2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"leaky_relu_backward", f_leaky_relu_backward, 2, {{2, {3, 4}, STRIDED}, {1, {4}, PLAIN}}, -1, 1},
        {"hardtanh_backward", f_hardtanh_backward, 2, {{2, {3, 4}, PLAIN}, {2, {3, 4}, PLAIN}}, -1, 1},
        {"hardsigmoid_backward", f_hardsigmoid_backward, 2, {{2, {3, 4}, PLAIN}, {2, {3, 4}, EXPANDED}}, -5, 5},
        {"hardswish_backward", f_hardswish_backward, 2, {{2, {3, 4}, TRANSPOSED}, {2, {3, 4}, PLAIN}}, -5, 5},
        {"tanh_backward", f_tanh_backward, 2, {{2, {3, 4}, PLAIN}, {2, {3, 4}, STRIDED}}, -1, 1},
        {"sigmoid_backward", f_sigmoid_backward, 2, {{2, {3, 4}, PLAIN}, {2, {3, 4}, PLAIN}}, -1, 1},
        {"softplus_backward", f_softplus_backward, 2, {{2, {3, 4}, PLAIN}, {2, {3, 4}, TRANSPOSED}}, -2, 2},
        {"gelu_backward", f_gelu_backward, 2, {{2, {3, 4}, PLAIN}, {2, {3, 4}, PLAIN}}, -3, 3},
        {"gelu_backward(tanh)", f_gelu_backward_tanh, 2, {{2, {3, 4}, STRIDED}, {2, {3, 4}, PLAIN}}, -3, 3},
        {"elu_backward", f_elu_backward, 2, {{2, {3, 4}, PLAIN}, {2, {3, 4}, PLAIN}}, -2, 2},
        {"elu_backward(is_result)", f_elu_backward_result, 2, {{2, {3, 4}, PLAIN}, {2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"log_sigmoid_backward", f_log_sigmoid_backward, 2, {{2, {3, 4}, PLAIN}, {2, {3, 4}, PLAIN}}, -2, 2},
        {"glu_backward", f_glu_backward, 2, {{2, {3, 2}, PLAIN}, {2, {3, 4}, TRANSPOSED}}, -2, 2},
        {"glu_backward(dim 0)", f_glu_backward0, 2, {{3, {1, 3, 2}, PLAIN}, {3, {2, 3, 2}, STRIDED}}, -2, 2},
    };
    CASES(cases);
}

/* ---- backward operators of softmax and losses: double backward ---- */

FN(f_softmax_backward_data, tj__softmax_backward_data(x[0], x[1], 1, TJ_FLOAT64))
FN(f_log_softmax_backward_data, tj__log_softmax_backward_data(x[0], x[1], 0, TJ_FLOAT64))
FN(f_smooth_l1_backward_none, tj_smooth_l1_loss_backward(x[0], x[1], x[2], 0, 0.5))
FN(f_smooth_l1_backward_mean, tj_smooth_l1_loss_backward(x[0], x[1], x[2], 1, 0.7))
FN(f_huber_backward_sum, tj_huber_loss_backward(x[0], x[1], x[2], 2, 0.6))
FN(f_bce_backward_mean, tj_binary_cross_entropy_backward(x[0], x[1], x[2], NULL, 1))
FN(f_bce_backward_none_w,
   tj_binary_cross_entropy_backward(x[0], x[1], x[2], test_f64(1, (int64_t[]){4}, (double[]){1, 0.5, 2, 1.5}), 0))
FN(f_nll_backward_mean, tj_nll_loss_backward(x[0], x[1], indices(4, (const int64_t[]){2, 0, 4, 1}), NULL, 1, -100,
                                             tj_scalar_tensor(tj_v_int(4), TJ_FLOAT64)))

Test(gradcheck, softmax_and_loss_backward_operators)
{
    static const gc_case cases[] = {
        {"_softmax_backward_data", f_softmax_backward_data, 2, {{2, {3, 4}, PLAIN}, {2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"_log_softmax_backward_data", f_log_softmax_backward_data, 2, {{2, {3, 4}, STRIDED}, {2, {3, 4}, PLAIN}}, -1,
         1},
        {"smooth_l1_loss_backward(none)", f_smooth_l1_backward_none, 3,
         {{2, {3, 4}, PLAIN}, {2, {3, 4}, PLAIN}, {2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"smooth_l1_loss_backward(mean)", f_smooth_l1_backward_mean, 3,
         {{0, {0}, PLAIN}, {2, {3, 4}, STRIDED}, {2, {3, 4}, PLAIN}}, -1, 1},
        {"huber_loss_backward(sum)", f_huber_backward_sum, 3, {{0, {0}, PLAIN}, {2, {3, 4}, PLAIN}, {2, {3, 4}, PLAIN}},
         -1, 1},
        /* x and t in (0, 1) */
        {"binary_cross_entropy_backward(mean)", f_bce_backward_mean, 3,
         {{0, {0}, PLAIN}, {2, {3, 4}, PLAIN}, {2, {3, 4}, TRANSPOSED}}, 0.1, 0.9},
        {"binary_cross_entropy_backward(none, weight)", f_bce_backward_none_w, 3,
         {{2, {3, 4}, PLAIN}, {2, {3, 4}, STRIDED}, {2, {3, 4}, PLAIN}}, 0.1, 0.9},
        {"nll_loss_backward(mean)", f_nll_backward_mean, 2, {{0, {0}, PLAIN}, {2, {4, 5}, PLAIN}}, -1, 1},
    };
    CASES(cases);
}

/* ---- backward operators of normalisations, embedding and pooling: double
 * backward (the statistics from the forward on the same input, which carry
 * no gradient: the formulas differentiate through them) ---- */

/* x[0] grad_out, x[1] input [2, 3, 4], x[2] weight [4] (bias ones, not read) */
static tj_status f_layer_norm_backward(tj_tensor *const *x, tj_tensor **o, int *n)
{
    static const bool mask[3] = {true, true, true};
    tj_tensor *mean, *rstd, *bias = tj_ones(ln_shape, 1, TJ_FLOAT64);
    tj_status st = tj_native_layer_norm(x[1], ln_shape, 1, x[2], bias, 1e-5, NULL, &mean, &rstd);
    *n = 3;
    return st != TJ_OK ? st
                       : tj_native_layer_norm_backward(x[0], x[1], ln_shape, 1, mean, rstd, x[2], bias, mask, &o[0],
                                                       &o[1], &o[2]);
}

/* over the last two dims, without weight and bias */
static tj_status f_layer_norm_backward_plain(tj_tensor *const *x, tj_tensor **o, int *n)
{
    static const bool mask[3] = {true, false, false};
    tj_tensor *mean, *rstd;
    tj_status st = tj_native_layer_norm(x[1], ln_shape2, 2, NULL, NULL, 1e-5, NULL, &mean, &rstd);
    *n = 1;
    return st != TJ_OK ? st
                       : tj_native_layer_norm_backward(x[0], x[1], ln_shape2, 2, mean, rstd, NULL, NULL, mask, &o[0],
                                                       NULL, NULL);
}

/* x[0] grad_output [2, 3, 2] for indices [2, 3] into 4 rows, 1 the padding */
static const int64_t emb_idx[6] = {1, 3, 1, 0, 2, 3};
FN(f_embedding_backward,
   tj_embedding_dense_backward(x[0], test_i64(2, (int64_t[]){2, 3}, emb_idx), 4, 1, false))
FN(f_embedding_backward_freq,
   tj_embedding_dense_backward(x[0], test_i64(2, (int64_t[]){2, 3}, emb_idx), 4, -1, true))

/* x[0] grad_output, x[1] self; overlapping windows (kernel 3, stride 2,
 * padding 1) */
static tj_status f_max_pool_backward(tj_tensor *const *x, tj_tensor **o, int *n)
{
    static const int64_t k3[2] = {3, 3};
    tj_tensor *idx;
    tj_status st = tj_max_pool2d_with_indices(x[1], k3, two2, one2, one2, false, NULL, &idx);
    o[0] = st == TJ_OK ? tj_max_pool2d_with_indices_backward(x[0], x[1], k3, two2, one2, one2, false, idx) : NULL;
    *n = 1;
    return o[0] ? TJ_OK : tj_last_status();
}

/* x[0] grad_out, x[1] input [3, 2, 2], x[2] weight [2]: training, with the
 * forward's saved statistics, and evaluation, with running ones */
static tj_status f_batch_norm_backward(tj_tensor *const *x, tj_tensor **o, int *n)
{
    static const bool mask[3] = {true, true, true};
    tj_tensor *mean, *invstd;
    tj_status st = tj_native_batch_norm(x[1], x[2], NULL, NULL, NULL, true, 0.1, 1e-5, NULL, &mean, &invstd);
    *n = 3;
    return st != TJ_OK ? st
                       : tj_native_batch_norm_backward(x[0], x[1], x[2], NULL, NULL, mean, invstd, true, 1e-5, mask,
                                                       &o[0], &o[1], &o[2]);
}

static tj_status f_batch_norm_backward_eval(tj_tensor *const *x, tj_tensor **o, int *n)
{
    static const bool mask[3] = {true, true, true};
    tj_tensor *rm = test_f64(1, (int64_t[]){2}, (double[]){0.25, -0.5});
    tj_tensor *rv = test_f64(1, (int64_t[]){2}, (double[]){0.5, 2});
    *n = 3;
    return tj_native_batch_norm_backward(x[0], x[1], x[2], rm, rv, NULL, NULL, false, 1e-5, mask, &o[0], &o[1], &o[2]);
}

/* x[0] grad_out, x[1] input [2, 4, 3] in 2 groups, x[2] weight [4] */
static tj_status f_group_norm_backward(tj_tensor *const *x, tj_tensor **o, int *n)
{
    static const bool mask[3] = {true, true, true};
    tj_tensor *mean, *rstd;
    tj_status st = tj_native_group_norm(x[1], x[2], NULL, 2, 4, 3, 2, 1e-5, NULL, &mean, &rstd);
    *n = 3;
    return st != TJ_OK ? st
                       : tj_native_group_norm_backward(x[0], x[1], mean, rstd, x[2], 2, 4, 3, 2, mask, &o[0], &o[1],
                                                       &o[2]);
}

/* x[0] grad_output, x[1] input, x[2] weight: padded, then strided with two
 * groups, then transposed (stride 2, output_padding 1) */
static tj_status conv_backward_of(tj_tensor *const *x, tj_tensor **o, int *n, const int64_t *stride,
                                  const int64_t *padding, bool transposed, const int64_t *output_padding,
                                  int64_t groups)
{
    static const bool mask[3] = {true, true, true};
    int64_t bias_sizes[1] = {tj_tensor_shape(x[0])[1]};
    *n = 3;
    return tj_convolution_backward(x[0], x[1], x[2], bias_sizes, 1, stride, padding, one2, transposed, output_padding,
                                   groups, mask, &o[0], &o[1], &o[2]);
}
static tj_status f_conv_backward(tj_tensor *const *x, tj_tensor **o, int *n)
{
    return conv_backward_of(x, o, n, one2, one2, false, zero2, 1);
}
static tj_status f_conv_backward_groups(tj_tensor *const *x, tj_tensor **o, int *n)
{
    return conv_backward_of(x, o, n, two2, zero2, false, zero2, 2);
}
static tj_status f_conv_backward_transposed(tj_tensor *const *x, tj_tensor **o, int *n)
{
    return conv_backward_of(x, o, n, two2, one2, true, one2, 1);
}

Test(gradcheck, normalisation_and_pooling_backward_operators)
{
    static const gc_case cases[] = {
        {"convolution_backward", f_conv_backward, 3,
         {{4, {1, 2, 4, 4}, PLAIN}, {4, {1, 3, 3, 3}, TRANSPOSED}, {4, {2, 3, 2, 2}, PLAIN}}, -1, 1},
        {"convolution_backward(stride, groups)", f_conv_backward_groups, 3,
         {{4, {2, 4, 2, 2}, PLAIN}, {4, {2, 2, 5, 5}, PLAIN}, {4, {4, 1, 2, 2}, STRIDED}}, -1, 1},
        {"convolution_backward(transposed)", f_conv_backward_transposed, 3,
         {{4, {1, 2, 6, 6}, PLAIN}, {4, {1, 3, 3, 3}, PLAIN}, {4, {3, 2, 3, 3}, PLAIN}}, -1, 1},
        {"native_batch_norm_backward(train)", f_batch_norm_backward, 3,
         {{3, {3, 2, 2}, PLAIN}, {3, {3, 2, 2}, TRANSPOSED}, {1, {2}, PLAIN}}, -1, 1},
        {"native_batch_norm_backward(eval)", f_batch_norm_backward_eval, 3,
         {{3, {3, 2, 2}, STRIDED}, {3, {3, 2, 2}, PLAIN}, {1, {2}, PLAIN}}, -1, 1},
        {"native_group_norm_backward", f_group_norm_backward, 3,
         {{3, {2, 4, 3}, PLAIN}, {3, {2, 4, 3}, STRIDED}, {1, {4}, PLAIN}}, -1, 1},
        {"embedding_dense_backward(padding_idx)", f_embedding_backward, 1, {{3, {2, 3, 2}, PLAIN}}, -1, 1},
        {"embedding_dense_backward(scale_grad_by_freq)", f_embedding_backward_freq, 1, {{3, {2, 3, 2}, TRANSPOSED}},
         -1, 1},
        {"max_pool2d_with_indices_backward", f_max_pool_backward, 2,
         {{4, {1, 2, 3, 3}, PLAIN}, {4, {1, 2, 5, 5}, TRANSPOSED}}, -1, 1},
        {"native_layer_norm_backward", f_layer_norm_backward, 3,
         {{3, {2, 3, 4}, PLAIN}, {3, {2, 3, 4}, TRANSPOSED}, {1, {4}, PLAIN}}, -1, 1},
        {"native_layer_norm_backward(2 dims, no affine)", f_layer_norm_backward_plain, 2,
         {{3, {2, 3, 4}, STRIDED}, {3, {2, 3, 4}, PLAIN}}, -1, 1},
    };
    CASES(cases);
}

/* ---- hard activations and regression losses (session 16) ---- */

FN(f_hardtanh, tj_hardtanh(x[0], tj_v_float(-0.5), tj_v_float(0.4)))
FN(f_hardsigmoid, tj_hardsigmoid(x[0]))
FN(f_hardswish, tj_hardswish(x[0]))
FN(f_smooth_l1_mean, tj_smooth_l1_loss(x[0], x[1], 1, 0.5))
FN(f_smooth_l1_none_beta0, tj_smooth_l1_loss(x[0], x[1], 0, 0.0))
FN(f_huber_sum, tj_huber_loss(x[0], x[1], 2, 0.3))
FN(f_huber_mean, tj_huber_loss(x[0], x[1], 1, 1.5))

Test(gradcheck, hard_activations_and_regression_losses)
{
    /* inputs land on a kink with probability 0; the mean of a broadcast loss
     * divides by the loss's element count (see d_pointwise_loss) */
    static const gc_case cases[] = {
        {"hardtanh", f_hardtanh, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"hardsigmoid", f_hardsigmoid, 1, {{2, {3, 4}, STRIDED}}, -5, 5},
        {"hardswish", f_hardswish, 1, {{2, {3, 4}, PLAIN}}, -5, 5},
        {"hardswish(0-dim)", f_hardswish, 1, {{0, {0}, PLAIN}}, -5, 5},
        {"smooth_l1_loss(mean, broadcast)", f_smooth_l1_mean, 2, {{2, {3, 1}, PLAIN}, {2, {1, 4}, PLAIN}}, -1, 1},
        {"smooth_l1_loss(none, beta 0)", f_smooth_l1_none_beta0, 2, {{2, {3, 4}, TRANSPOSED}, {1, {4}, PLAIN}}, -1, 1},
        {"huber_loss(sum)", f_huber_sum, 2, {{2, {3, 4}, STRIDED}, {2, {3, 4}, EXPANDED}}, -1, 1},
        {"huber_loss(mean, broadcast self)", f_huber_mean, 2, {{1, {4}, PLAIN}, {2, {3, 4}, PLAIN}}, -2, 2},
    };
    CASES(cases);
}

/* ---- implicit composites: checked through what they decompose into ---- */

FN(f_stack, tj_stack(x, 2, 1))
FN(f_flatten, tj_flatten(x[0], 1, 2))
FN(f_softmax_int, tj_softmax(x[0], -1))
FN(f_log_softmax_int, tj_log_softmax(x[0], 0))
FN(f_layer_norm_implicit, tj_layer_norm(x[0], ln_shape, 1, x[1], NULL, 1e-5))
FN(f_conv2d, tj_conv2d(x[0], x[1], NULL, one2, one2, one2, 1))
FN(f_max_pool2d, tj_max_pool2d(x[0], two2, one2, zero2, one2, false))
FN(f_conv1d, tj_conv1d(x[0], x[1], x[2], 2, 1, 2, 2))
FN(f_conv_transpose1d, tj_conv_transpose1d(x[0], x[1], NULL, 3, 1, 2, 1, 1))
FN(f_conv_transpose2d, tj_conv_transpose2d(x[0], x[1], x[2], two2, one2, one2, 2, one2))
static const int64_t stride3[3] = {2, 1, 2}, pad3[3] = {1, 0, 1}, dil3[3] = {1, 2, 1}, one3[3] = {1, 1, 1};
FN(f_conv3d, tj_conv3d(x[0], x[1], x[2], stride3, pad3, dil3, 2))
FN(f_max_pool3d, tj_max_pool3d(x[0], (const int64_t[]){2, 3, 2}, stride3, pad3, dil3, true))
FN(f_avg_pool3d, tj_avg_pool3d(x[0], (const int64_t[]){3, 2, 3}, stride3, pad3, true, false, 0))
FN(f_avg_pool3d_divisor, tj_avg_pool3d(x[0], (const int64_t[]){2, 2, 2}, NULL, (const int64_t[]){1, 0, 1}, false, true, 3))
FN(f_grid_zeros, tj_grid_sampler_2d(x[0], x[1], 0, 0, false))
FN(f_grid_border_align, tj_grid_sampler_2d(x[0], x[1], 0, 1, true))
FN(f_grid_reflection, tj_grid_sampler_2d(x[0], x[1], 0, 2, false))
FN(f_conv_transpose3d, tj_conv_transpose3d(x[0], x[1], x[2], stride3, pad3, (const int64_t[]){1, 0, 0}, 1, one3))
FN(f_adaptive_avg_pool2d, tj_adaptive_avg_pool2d(x[0], pooled_3x2))
FN(f_adaptive_avg_pool2d_1x1, tj_adaptive_avg_pool2d(x[0], one2))

/* adaptive_max_pool2d's values (its indices are not differentiable) */
static tj_status f_adaptive_max_pool2d(tj_tensor *const *x, tj_tensor **o, int *n)
{
    tj_tensor *idx;
    *n = 1;
    return tj_adaptive_max_pool2d(x[0], pooled_3x2, &o[0], &idx);
}

/* x[0] is grad_output [1, 2, 3, 2] of a self [1, 2, 7, 5], with the
 * forward's indices of a fixed self */
static tj_status f_adaptive_max_pool2d_backward(tj_tensor *const *x, tj_tensor **o, int *n)
{
    tj_tensor *self = tj_sin(tj_reshape(tj_arange(tj_v_int(0), tj_v_int(70), tj_v_int(1), TJ_FLOAT64),
                                        (const int64_t[]){1, 2, 7, 5}, 4));
    tj_tensor *pooled, *idx;
    tj_status st = tj_adaptive_max_pool2d(self, pooled_3x2, &pooled, &idx);
    if (st != TJ_OK) return st;
    o[0] = tj_adaptive_max_pool2d_backward(x[0], self, idx);
    *n = 1;
    return o[0] ? TJ_OK : tj_last_status();
}

FN(f_bicubic, tj_upsample_bicubic2d_vec(x[0], (const int64_t[]){5, 3}, false, NULL))
FN(f_bicubic_scales_align, tj_upsample_bicubic2d_vec(x[0], NULL, true, (const double[]){1.5, 2.0}))
/* x[0] is grad_output [1, 2, 5, 3] of an input [1, 2, 3, 4] */
FN(f_bicubic_backward, tj_upsample_bicubic2d_backward_vec(x[0], (const int64_t[]){5, 3},
                                                          (const int64_t[]){1, 2, 3, 4}, 4, false, NULL))
FN(f_nll_loss, tj_nll_loss(x[0], indices(4, (const int64_t[]){2, 0, 4, 1}), NULL, 2, -100))
FN(f_zero_fill, tj_add(tj_mul(tj_zero(x[0]), x[0]), tj_fill(x[0], tj_v_float(2))))
FN(f_relu6, tj_relu6(x[0]))
FN(f_l1_loss, tj_l1_loss(x[0], x[1], 1))
FN(f_adaptive_avg_pool3d, tj__adaptive_avg_pool3d(x[0], (const int64_t[]){2, 3, 2}))
/* x[0] is grad_output [1, 2, 2, 3, 2] of a self [1, 2, 3, 4, 5] */
FN(f_adaptive_avg_pool3d_backward, tj__adaptive_avg_pool3d_backward(x[0], tj_zeros((const int64_t[]){1, 2, 3, 4, 5}, 5,
                                                                                   TJ_FLOAT64)))
FN(f_linear1d, tj_upsample_linear1d_vec(x[0], NULL, true, (const double[]){1.7}))
FN(f_trilinear3d, tj_upsample_trilinear3d_vec(x[0], (const int64_t[]){3, 4, 2}, false, NULL))
FN(f_nearest3d, tj_upsample_nearest3d_vec(x[0], (const int64_t[]){3, 4, 2}, NULL))
/* x[0] is grad_output [1, 2, 3, 4, 2] of an input [1, 2, 2, 3, 3] */
FN(f_trilinear3d_backward, tj_upsample_trilinear3d_backward_vec(x[0], (const int64_t[]){3, 4, 2},
                                                                (const int64_t[]){1, 2, 2, 3, 3}, 5, true, NULL))

static tj_status f_split(tj_tensor *const *x, tj_tensor **o, int *n)
{
    return tj_split(x[0], 2, 1, o, MAX_OUT, n);
}
static tj_status f_unbind(tj_tensor *const *x, tj_tensor **o, int *n) { return tj_unbind(x[0], 1, o, MAX_OUT, n); }
static tj_status f_chunk(tj_tensor *const *x, tj_tensor **o, int *n) { return tj_chunk(x[0], 3, 1, o, MAX_OUT, n); }
static tj_status f_split_with_sizes(tj_tensor *const *x, tj_tensor **o, int *n)
{
    return tj_split_with_sizes(x[0], (const int64_t[]){1, 0, 2}, 3, 0, o, MAX_OUT, n);
}
FN(f_narrow, tj_narrow(x[0], 1, -3, 2))

Test(gradcheck, implicit_composites)
{
    static const gc_case cases[] = {
        {"stack", f_stack, 2, {{2, {3, 4}, TRANSPOSED}, {2, {3, 4}, PLAIN}}, -1, 1},
        {"split.Tensor", f_split, 1, {{2, {3, 5}, STRIDED}}, -1, 1},
        {"unbind.int", f_unbind, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"chunk", f_chunk, 1, {{2, {3, 5}, STRIDED}}, -1, 1},
        {"split_with_sizes", f_split_with_sizes, 1, {{2, {3, 4}, PLAIN}}, -1, 1},
        {"narrow", f_narrow, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"flatten.using_ints", f_flatten, 1, {{3, {2, 3, 2}, TRANSPOSED}}, -1, 1},
        {"softmax.int", f_softmax_int, 1, {{2, {3, 4}, STRIDED}}, -2, 2},
        {"log_softmax.int", f_log_softmax_int, 1, {{2, {3, 4}, PLAIN}}, -2, 2},
        {"layer_norm", f_layer_norm_implicit, 2, {{2, {3, 4}, TRANSPOSED}, {1, {4}, PLAIN}}, -1, 1},
        {"conv2d", f_conv2d, 2, {{4, {1, 2, 4, 4}, PLAIN}, {4, {2, 2, 3, 3}, PLAIN}}, -1, 1},
        {"max_pool2d", f_max_pool2d, 1, {{4, {1, 2, 4, 4}, STRIDED}}, -1, 1},
        {"conv1d", f_conv1d, 3, {{3, {2, 4, 7}, STRIDED}, {3, {4, 2, 3}, PLAIN}, {1, {4}, PLAIN}}, -1, 1},
        {"conv_transpose1d(unbatched)", f_conv_transpose1d, 2, {{2, {2, 4}, TRANSPOSED}, {3, {2, 3, 3}, PLAIN}}, -1, 1},
        {"conv_transpose2d", f_conv_transpose2d, 3,
         {{4, {1, 4, 3, 3}, PLAIN}, {4, {4, 1, 2, 3}, PLAIN}, {1, {2}, PLAIN}}, -1, 1},
        {"conv3d(stride, padding, dilation, groups)", f_conv3d, 3,
         {{5, {2, 4, 3, 4, 3}, STRIDED}, {5, {2, 2, 2, 2, 2}, PLAIN}, {1, {2}, PLAIN}}, -1, 1},
        {"conv_transpose3d(unbatched)", f_conv_transpose3d, 3,
         {{4, {2, 2, 3, 2}, TRANSPOSED}, {5, {2, 3, 2, 2, 2}, PLAIN}, {1, {3}, PLAIN}}, -1, 1},
        {"max_pool3d(dilation, ceil_mode)", f_max_pool3d, 1, {{5, {1, 2, 4, 5, 6}, STRIDED}}, -1, 1},
        {"avg_pool3d(exclude padding, ceil_mode)", f_avg_pool3d, 1, {{5, {2, 1, 4, 5, 6}, TRANSPOSED}}, -1, 1},
        {"avg_pool3d(unbatched, divisor)", f_avg_pool3d_divisor, 1, {{4, {2, 3, 4, 4}, PLAIN}}, -1, 1},
        {"grid_sampler_2d(bilinear, zeros)", f_grid_zeros, 2, {{4, {2, 2, 3, 4}, STRIDED}, {4, {2, 3, 2, 2}, PLAIN}},
         -1.2, 1.2},
        {"grid_sampler_2d(bilinear, border, align_corners)", f_grid_border_align, 2,
         {{4, {1, 2, 3, 4}, TRANSPOSED}, {4, {1, 2, 3, 2}, PLAIN}}, -1.2, 1.2},
        {"grid_sampler_2d(bilinear, reflection)", f_grid_reflection, 2,
         {{4, {1, 2, 3, 4}, PLAIN}, {4, {1, 2, 3, 2}, PLAIN}}, -1.5, 1.5},
        {"adaptive_avg_pool2d", f_adaptive_avg_pool2d, 1, {{4, {1, 2, 5, 4}, PLAIN}}, -1, 1},
        {"adaptive_avg_pool2d(1x1: mean)", f_adaptive_avg_pool2d_1x1, 1, {{3, {2, 3, 4}, TRANSPOSED}}, -1, 1},
        {"adaptive_max_pool2d", f_adaptive_max_pool2d, 1, {{4, {1, 2, 7, 5}, STRIDED}}, -1, 1},
        {"adaptive_max_pool2d_backward", f_adaptive_max_pool2d_backward, 1, {{4, {1, 2, 3, 2}, TRANSPOSED}}, -1, 1},
        {"upsample_bicubic2d(size)", f_bicubic, 1, {{4, {1, 2, 3, 4}, TRANSPOSED}}, -1, 1},
        {"upsample_bicubic2d(scale factors, align_corners)", f_bicubic_scales_align, 1, {{4, {1, 2, 3, 4}, PLAIN}},
         -1, 1},
        {"upsample_bicubic2d_backward", f_bicubic_backward, 1, {{4, {1, 2, 5, 3}, STRIDED}}, -1, 1},
        {"_adaptive_avg_pool3d", f_adaptive_avg_pool3d, 1, {{5, {1, 2, 3, 4, 5}, STRIDED}}, -1, 1},
        {"_adaptive_avg_pool3d_backward", f_adaptive_avg_pool3d_backward, 1, {{5, {1, 2, 2, 3, 2}, TRANSPOSED}}, -1, 1},
        {"upsample_linear1d(scale factor, align_corners)", f_linear1d, 1, {{3, {2, 2, 4}, TRANSPOSED}}, -1, 1},
        {"upsample_trilinear3d", f_trilinear3d, 1, {{5, {1, 2, 2, 3, 3}, STRIDED}}, -1, 1},
        {"upsample_nearest3d", f_nearest3d, 1, {{5, {1, 2, 2, 3, 3}, PLAIN}}, -1, 1},
        {"upsample_trilinear3d_backward", f_trilinear3d_backward, 1, {{5, {1, 2, 3, 4, 2}, PLAIN}}, -1, 1},
        {"nll_loss", f_nll_loss, 1, {{2, {4, 5}, PLAIN}}, -1, 1},
        {"zero and fill", f_zero_fill, 1, {{2, {3, 4}, PLAIN}}, -1, 1},
        {"relu6", f_relu6, 1, {{2, {3, 4}, TRANSPOSED}}, -2, 8},
        {"l1_loss(mean, broadcast)", f_l1_loss, 2, {{2, {3, 4}, PLAIN}, {2, {3, 1}, PLAIN}}, -1, 1},
    };
    CASES(cases);
}

/* As in PyTorch, the padding_idx row is used by the forward but gets no
 * gradient (so it cannot be gradchecked). */
Test(gradcheck, embedding_padding_row_gets_no_gradient)
{
    static const int64_t idx[5] = {1, 3, 1, 0, 3};
    int64_t s[2] = {5, 3};
    tj_tensor *w = random_f64(2, s, -1, 1), *g;
    tj_tensor_set_requires_grad(w, true);
    tj_tensor *y = tj_sum(tj_embedding(w, indices(5, idx), 3), -1);
    cr_assert_eq(tj_autograd_grad(&y, 1, NULL, &w, 1, &g), TJ_OK, "%s", tj_last_error());
    double want[5] = {1, 2, 0, 0, 0};
    for (int r = 0; r < 5; r++)
        for (int k = 0; k < 3; k++) cr_expect_eq(tj_tensor_item_at(g, r * 3 + k), want[r], "row %d", r);
}

Test(gradcheck, a_wrong_formula_would_be_caught)
{
    /* the harness itself: a deliberately wrong "gradient" fails the comparison */
    int64_t s[1] = {3};
    tj_tensor *x = random_f64(1, s, 0.5, 1);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *y = tj_mul(x, x), *v = random_f64(1, s, -1, 1), *g;
    cr_assert_eq(tj_autograd_grad(&y, 1, &v, &x, 1, &g), TJ_OK);
    for (int i = 0; i < 3; i++) {
        double want = 2 * tj_tensor_item_at(x, i) * tj_tensor_item_at(v, i);
        cr_expect(fabs(tj_tensor_item_at(g, i) - want) < 1e-14);
        cr_expect(fabs(tj_tensor_item_at(g, i) - 0.5 * want) > ATOL + RTOL * fabs(want));
    }
}

/* ---- tril, triu and repeat (session 17) ---- */

static const int64_t r_lead[3] = {2, 1, 3}, r_2x3[2] = {2, 3}, r_zero[2] = {0, 2}, s_5d[5] = {2, 1, 2, 2, 1},
                     r_5d[5] = {2, 3, 1, 2, 2};
FN(f_tril, tj_tril(x[0], -1))
FN(f_triu, tj_triu(x[0], 1))
FN(f_tril_, tj_tril_(tj_mul_scalar(x[0], tj_v_int(2)), 0))
FN(f_triu_, tj_triu_(tj_mul_scalar(x[0], tj_v_int(2)), -1))
FN(f_repeat, tj_repeat(x[0], r_lead, 3))
FN(f_repeat_2x3, tj_repeat(x[0], r_2x3, 2))
FN(f_repeat_zero, tj_repeat(x[0], r_zero, 2))
/* 5 dims and 4 repeated: the backward sums dim by dim (9 dims in one reshape) */
FN(f_repeat_5d, tj_repeat(tj_reshape(x[0], s_5d, 5), r_5d, 5))

Test(gradcheck, tril_triu_and_repeat)
{
    static const gc_case cases[] = {
        {"tril", f_tril, 1, {{3, {2, 3, 4}, TRANSPOSED}}, -1, 1},
        {"triu", f_triu, 1, {{2, {3, 4}, STRIDED}}, -1, 1},
        {"tril_", f_tril_, 1, {{2, {4, 3}, PLAIN}}, -1, 1},
        {"triu_", f_triu_, 1, {{3, {2, 3, 4}, EXPANDED}}, -1, 1},
        {"repeat(leading dims)", f_repeat, 1, {{2, {2, 3}, TRANSPOSED}}, -1, 1},
        {"repeat(expanded)", f_repeat, 1, {{2, {2, 3}, EXPANDED}}, -1, 1},
        {"repeat(0-dim)", f_repeat_2x3, 1, {{0, {0}, PLAIN}}, -1, 1},
        {"repeat(a zero repeat)", f_repeat_zero, 1, {{2, {2, 3}, PLAIN}}, -1, 1},
        {"repeat(rank 5)", f_repeat_5d, 1, {{2, {2, 4}, STRIDED}}, -1, 1},
    };
    CASES(cases);
}

/* ---- roll (session 19) ---- */

static const int64_t roll_shifts[3] = {2, -1, 5}, roll_dims[3] = {1, 0, 1}, roll_min[1] = {INT64_MIN};
FN(f_roll, tj_roll(x[0], roll_shifts, 3, roll_dims, 3))
FN(f_roll_flat, tj_roll(x[0], roll_shifts + 2, 1, NULL, 0))
FN(f_roll_min, tj_roll(x[0], roll_min, 1, roll_dims + 1, 1))

Test(gradcheck, roll)
{
    static const gc_case cases[] = {
        {"roll(a dim twice)", f_roll, 1, {{2, {3, 4}, TRANSPOSED}}, -1, 1},
        {"roll(no dims)", f_roll_flat, 1, {{3, {2, 3, 2}, STRIDED}}, -1, 1},
        {"roll(INT64_MIN)", f_roll_min, 1, {{2, {3, 5}, EXPANDED}}, -1, 1},
    };
    CASES(cases);
}
