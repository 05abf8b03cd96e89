/* The in-place forms of the elementwise operators (runtime/op_inplace_forms.def)
 * and the overloads remainder.Scalar_Tensor, clamp_min.Tensor,
 * clamp_max.Tensor, round.decimals, lerp.Tensor, masked_fill.Tensor,
 * div.Scalar_mode: values and gradients against PyTorch (table in
 * inplace_forms_ref.h, written by make_inplace_forms.py with PyTorch 1.13),
 * the public functions, the errors, autograd against the out-of-place path,
 * and make_fx + functionalisation + replay against eager. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "alloc_counter.h"
#include "runtime/internal.h"
#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(inplace_forms, .init = test_scope_open, .fini = test_scope_close);

/* An argument after self: 't' tensor (n values: [2, 3], [3] or 0-dim), 'f' float,
 * 'i' int, 's' str, 'n' None. */
typedef struct form_arg {
    char kind;
    int n;
    tj_dtype dtype;
    double v[6];
    double x;
    const char *s;
} form_arg;

/* op(self [2, 3], args...): self afterwards (in place) or the result. */
typedef struct form_case {
    const char *op;
    tj_dtype dtype;
    double self[6];
    int nargs;
    form_arg args[5];
    tj_dtype out_dtype;
    double want[6];
} form_case;

/* remainder.Scalar_Tensor(self, other [6]) */
typedef struct scalar_self_case {
    form_arg self;
    tj_dtype dtype;
    double other[6];
    tj_dtype out_dtype;
    double want[6];
} scalar_self_case;

/* The gradients of sum(W * op(self * 1, args)) (W below) by self and by
 * each float tensor argument in order, on the operator's first case. */
typedef struct grad_case {
    const char *op;
    int n;
    int numel[3];
    double want[3][6];
} grad_case;

#include "inplace_forms_ref.h"

#define NCASES ((int)(sizeof form_cases / sizeof *form_cases))

static tj_tensor *make(tj_dtype dt, int n, const double *v)
{
    int64_t shape[2] = {2, 3}, one[1] = {3};
    float f[6];
    int64_t i[6];
    bool b[6];
    /* only dt's own conversion: a float case's nan has no int64 value (undefined behaviour, clang's UBSan) */
    for (int k = 0; k < n; k++) {
        if (dt == TJ_FLOAT32) f[k] = (float)v[k];
        else if (dt == TJ_INT64) i[k] = (int64_t)v[k];
        else b[k] = v[k] != 0;
    }
    const void *data = dt == TJ_FLOAT32 ? (const void *)f : dt == TJ_FLOAT64 ? (const void *)v
                     : dt == TJ_INT64 ? (const void *)i : (const void *)b;
    return test_tensor(dt, n == 6 ? 2 : n == 3 ? 1 : 0, n == 6 ? shape : one, data);
}

static tj_value box(const form_arg *a)
{
    switch (a->kind) {
    case 't': return tj_v_tensor(make(a->dtype, a->n, a->v));
    case 'f': return tj_v_float(a->x);
    case 'i': return tj_v_int((int64_t)a->x);
    case 's': return tj_v_str(a->s);
    case 'b': return tj_v_bool(a->x != 0);
    default: return tj_v_none();
    }
}

/* args[0] = a fresh self; the rest boxed. */
static void build(const form_case *c, tj_value *args)
{
    args[0] = tj_v_tensor(make(c->dtype, 6, c->self));
    for (int k = 0; k < c->nargs; k++) args[k + 1] = box(&c->args[k]);
}

static const form_case *find_case(const char *op)
{
    for (int k = 0; k < NCASES; k++)
        if (strcmp(form_cases[k].op, op) == 0) return &form_cases[k];
    cr_assert_fail("no reference case for %s", op);
    return NULL;
}

static void expect_want(const form_case *c, const tj_tensor *t)
{
    cr_assert_not_null(t, "%s: %s", c->op, tj_last_error());
    cr_expect_eq(tj_tensor_dtype(t), c->out_dtype, "%s: dtype", c->op);
    double rtol = c->out_dtype == TJ_FLOAT64 ? 1e-13 : 4e-6;
    test_expect_close(t, c->want, 6, rtol, 1e-6);
}

Test(inplace_forms, every_case_matches_pytorch_through_the_dispatcher)
{
    for (int k = 0; k < NCASES; k++) {
        const form_case *c = &form_cases[k];
        const tj_op *op = tj_op_find(c->op);
        cr_assert_not_null(op, "%s is registered", c->op);
        tj_value args[6], outs[TJ_MAX_RETURNS];
        build(c, args);
        tj_tensor *self = args[0].u.t;
        uint32_t version = tj_tensor_version(self);
        cr_assert_eq(tj_dispatch(op, args, c->nargs + 1, outs), TJ_OK, "%s: %s", c->op, tj_last_error());
        if (tj_op_is_inplace(op)) {
            cr_expect_eq(outs[0].u.t, self, "%s returns self", c->op);
            cr_expect_eq(tj_tensor_version(self), version + 1, "%s bumps self's version", c->op);
        }
        expect_want(c, outs[0].u.t);
    }
}

/* ---- the public functions, each on its operator's first reference case ---- */

typedef tj_tensor *(*public_fn)(tj_tensor *self, const tj_value *a);

#define UN(f) static tj_tensor *call_##f(tj_tensor *s, const tj_value *a) { (void)a; return tj_##f(s); }
#define TT(f) static tj_tensor *call_##f(tj_tensor *s, const tj_value *a) { return tj_##f(s, a[0].u.t); }
#define SC(f) static tj_tensor *call_##f(tj_tensor *s, const tj_value *a) { return tj_##f(s, a[0]); }
UN(abs_) UN(neg_) UN(exp_) UN(log_) UN(rsqrt_) UN(tanh_) UN(sigmoid_) UN(erf_) UN(reciprocal_) UN(sin_) UN(cos_)
UN(log1p_) UN(expm1_) UN(relu_) UN(silu_) UN(sign_) UN(square_) UN(hardsigmoid_) UN(hardswish_) UN(floor_)
UN(ceil_) UN(round_) UN(trunc_) UN(frac_) UN(asin_) UN(acos_) UN(atan_) UN(sinh_) UN(cosh_) UN(log2_) UN(log10_)
UN(exp2_) UN(logical_not_) UN(lgamma_) UN(digamma_) UN(erfinv_) UN(erfc_) UN(i0_) UN(sinc_)
TT(hypot_) TT(copysign_) SC(logit_) SC(copysign_scalar_) TT(xlogy_) SC(xlogy_scalar_other_)
TT(pow_) TT(remainder_) TT(fmod_) TT(atan2_) TT(clamp_min_tensor_) TT(clamp_max_tensor_) TT(eq_) TT(ne_) TT(lt_)
TT(le_) TT(gt_) TT(ge_) TT(logical_and_) TT(logical_or_) TT(logical_xor_) TT(clamp_min_tensor) TT(clamp_max_tensor)
SC(pow_scalar_) SC(remainder_scalar_) SC(fmod_scalar_) SC(clamp_min_) SC(clamp_max_) SC(leaky_relu_) SC(eq_scalar_)
SC(ne_scalar_) SC(lt_scalar_) SC(le_scalar_) SC(gt_scalar_) SC(ge_scalar_)
static tj_tensor *call_gelu_(tj_tensor *s, const tj_value *a) { return tj_gelu_(s, a[0].u.s); }
static tj_tensor *call_elu_(tj_tensor *s, const tj_value *a) { return tj_elu_(s, a[0], a[1], a[2]); }
static tj_tensor *call_hardtanh_(tj_tensor *s, const tj_value *a) { return tj_hardtanh_(s, a[0], a[1]); }
static tj_tensor *call_round_decimals_(tj_tensor *s, const tj_value *a) { return tj_round_decimals_(s, a[0].u.i); }
static tj_tensor *call_round_decimals(tj_tensor *s, const tj_value *a) { return tj_round_decimals(s, a[0].u.i); }
static tj_tensor *call_nan_to_num_(tj_tensor *s, const tj_value *a) { return tj_nan_to_num_(s, a[0], a[1], a[2]); }
static tj_tensor *call_sub_scalar_(tj_tensor *s, const tj_value *a) { return tj_sub_scalar_(s, a[0], a[1]); }
static tj_tensor *call_div_mode_(tj_tensor *s, const tj_value *a) { return tj_div_mode_(s, a[0].u.t, a[1].u.s); }
static tj_tensor *call_clamp_(tj_tensor *s, const tj_value *a) { return tj_clamp_(s, a[0], a[1]); }
static tj_tensor *call_masked_fill_(tj_tensor *s, const tj_value *a) { return tj_masked_fill_(s, a[0].u.t, a[1]); }
static tj_tensor *call_masked_fill_tensor_(tj_tensor *s, const tj_value *a)
{
    return tj_masked_fill_tensor_(s, a[0].u.t, a[1].u.t);
}
static tj_tensor *call_masked_fill_tensor(tj_tensor *s, const tj_value *a)
{
    return tj_masked_fill_tensor(s, a[0].u.t, a[1].u.t);
}
static tj_tensor *call_lerp_tensor_(tj_tensor *s, const tj_value *a) { return tj_lerp_tensor_(s, a[0].u.t, a[1].u.t); }
static tj_tensor *call_lerp_tensor(tj_tensor *s, const tj_value *a) { return tj_lerp_tensor(s, a[0].u.t, a[1].u.t); }
static tj_tensor *call_div_scalar_mode_(tj_tensor *s, const tj_value *a)
{
    return tj_div_scalar_mode_(s, a[0], a[1].kind == TJ_V_STR ? a[1].u.s : NULL);
}
static tj_tensor *call_div_scalar_mode(tj_tensor *s, const tj_value *a)
{
    return tj_div_scalar_mode(s, a[0], a[1].kind == TJ_V_STR ? a[1].u.s : NULL);
}
static tj_tensor *call_clamp_tensor_(tj_tensor *s, const tj_value *a)
{
    return tj_clamp_tensor_(s, a[0].kind == TJ_V_TENSOR ? a[0].u.t : NULL, a[1].kind == TJ_V_TENSOR ? a[1].u.t : NULL);
}

#define P(name, f) {name, call_##f}
static const struct {
    const char *op;
    public_fn fn;
} publics[] = {
    P("aten::abs_", abs_), P("aten::neg_", neg_), P("aten::exp_", exp_), P("aten::log_", log_),
    P("aten::rsqrt_", rsqrt_), P("aten::tanh_", tanh_), P("aten::sigmoid_", sigmoid_), P("aten::erf_", erf_),
    P("aten::reciprocal_", reciprocal_), P("aten::sin_", sin_), P("aten::cos_", cos_), P("aten::log1p_", log1p_),
    P("aten::expm1_", expm1_), P("aten::relu_", relu_), P("aten::silu_", silu_), P("aten::sign_", sign_),
    P("aten::square_", square_), P("aten::hardsigmoid_", hardsigmoid_), P("aten::hardswish_", hardswish_),
    P("aten::floor_", floor_), P("aten::ceil_", ceil_), P("aten::round_", round_), P("aten::trunc_", trunc_),
    P("aten::frac_", frac_), P("aten::asin_", asin_), P("aten::acos_", acos_), P("aten::atan_", atan_),
    P("aten::sinh_", sinh_), P("aten::cosh_", cosh_), P("aten::log2_", log2_), P("aten::log10_", log10_),
    P("aten::exp2_", exp2_), P("aten::logical_not_", logical_not_), P("aten::pow_.Tensor", pow_),
    P("aten::remainder_.Tensor", remainder_), P("aten::fmod_.Tensor", fmod_), P("aten::atan2_", atan2_),
    P("aten::clamp_min_.Tensor", clamp_min_tensor_), P("aten::clamp_max_.Tensor", clamp_max_tensor_),
    P("aten::eq_.Tensor", eq_), P("aten::ne_.Tensor", ne_), P("aten::lt_.Tensor", lt_), P("aten::le_.Tensor", le_),
    P("aten::gt_.Tensor", gt_), P("aten::ge_.Tensor", ge_), P("aten::logical_and_", logical_and_),
    P("aten::logical_or_", logical_or_), P("aten::logical_xor_", logical_xor_),
    P("aten::pow_.Scalar", pow_scalar_), P("aten::remainder_.Scalar", remainder_scalar_),
    P("aten::fmod_.Scalar", fmod_scalar_), P("aten::clamp_min_", clamp_min_), P("aten::clamp_max_", clamp_max_),
    P("aten::leaky_relu_", leaky_relu_), P("aten::eq_.Scalar", eq_scalar_), P("aten::ne_.Scalar", ne_scalar_),
    P("aten::lt_.Scalar", lt_scalar_), P("aten::le_.Scalar", le_scalar_), P("aten::gt_.Scalar", gt_scalar_),
    P("aten::ge_.Scalar", ge_scalar_), P("aten::gelu_", gelu_), P("aten::elu_", elu_),
    P("aten::hardtanh_", hardtanh_), P("aten::round_.decimals", round_decimals_),
    P("aten::nan_to_num_", nan_to_num_), P("aten::sub_.Scalar", sub_scalar_),
    P("aten::div_.Tensor_mode", div_mode_), P("aten::clamp_", clamp_), P("aten::clamp_.Tensor", clamp_tensor_),
    P("aten::masked_fill_.Scalar", masked_fill_), P("aten::clamp_min.Tensor", clamp_min_tensor),
    P("aten::clamp_max.Tensor", clamp_max_tensor), P("aten::round.decimals", round_decimals),
    P("aten::masked_fill_.Tensor", masked_fill_tensor_), P("aten::masked_fill.Tensor", masked_fill_tensor),
    P("aten::lerp_.Tensor", lerp_tensor_), P("aten::lerp.Tensor", lerp_tensor),
    P("aten::div_.Scalar_mode", div_scalar_mode_), P("aten::div.Scalar_mode", div_scalar_mode),
    P("aten::lgamma_", lgamma_), P("aten::digamma_", digamma_), P("aten::erfinv_", erfinv_), P("aten::erfc_", erfc_),
    P("aten::i0_", i0_), P("aten::sinc_", sinc_), P("aten::logit_", logit_), P("aten::hypot_", hypot_),
    P("aten::copysign_.Tensor", copysign_), P("aten::copysign_.Scalar", copysign_scalar_),
    P("aten::xlogy_.Tensor", xlogy_), P("aten::xlogy_.Scalar_Other", xlogy_scalar_other_),
};

Test(inplace_forms, every_public_function_matches_pytorch)
{
    for (size_t k = 0; k < sizeof publics / sizeof *publics; k++) {
        const form_case *c = find_case(publics[k].op);
        tj_value args[6];
        build(c, args);
        tj_tensor *r = publics[k].fn(args[0].u.t, args + 1);
        if (tj_op_is_inplace(tj_op_find(c->op))) cr_expect_eq(r, args[0].u.t, "%s returns self", c->op);
        expect_want(c, r);
    }
}

Test(inplace_forms, every_form_of_the_table_has_a_reference_case)
{
    /* the forms are the operators paired with a functional one */
    int forms = 0;
    for (int i = 0; i < tj_op_count(); i++) {
        const tj_op *op = tj_op_at(i);
        if (!tj_op_inplace_functional(op)) continue;
        forms++;
        bool found = false;
        for (int k = 0; k < NCASES && !found; k++) found = strcmp(form_cases[k].op, tj_op_name(op)) == 0;
        cr_expect(found, "%s has a reference case", tj_op_name(op));
    }
    /* square_ has a reference case but is no form: it is implicit (pow_.Scalar) */
    cr_expect_eq(forms, 114, "the 114 lines of op_inplace_forms.def");
}

Test(inplace_forms, remainder_scalar_tensor_promotes_the_scalar_as_a_wrapped_number)
{
    for (size_t k = 0; k < sizeof scalar_self_cases / sizeof *scalar_self_cases; k++) {
        const scalar_self_case *c = &scalar_self_cases[k];
        tj_tensor *r = tj_remainder_scalar_tensor(box(&c->self), make(c->dtype, 6, c->other));
        cr_assert_not_null(r, "%s", tj_last_error());
        cr_expect_eq(tj_tensor_dtype(r), c->out_dtype, "case %zu", k);
        test_expect_close(r, c->want, 6, 1e-6, 1e-7);
    }
}

/* ---- errors ---- */

static void expect_error(tj_tensor *r, tj_status st, const char *a, const char *b)
{
    cr_expect_null(r);
    cr_expect_eq(tj_last_status(), st, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), a), "'%s' in: %s", a, tj_last_error());
    if (b) cr_expect(strstr(tj_last_error(), b), "'%s' in: %s", b, tj_last_error());
}

static const double XI[6] = {-7, -2, 0, 3, 5, 9};
/* the gradient cases' loss weights (make_inplace_forms.py's W) */
static const double W[6] = {0.5, -1, 2, 0.25, 1.5, -3};

Test(inplace_forms, a_float_result_into_an_int64_self_is_a_dtype_error_and_self_is_unchanged)
{
    tj_tensor *x = make(TJ_INT64, 6, XI);
    expect_error(tj_exp_(x), TJ_ERR_DTYPE, "aten::exp_: result type float32 can't be cast to the desired output "
                                           "type int64", NULL);
    expect_error(tj_clamp_min_(x, tj_v_float(0.5)), TJ_ERR_DTYPE, "aten::clamp_min_:", "can't be cast");
    expect_error(tj_atan2_(x, x), TJ_ERR_DTYPE, "aten::atan2_:", "can't be cast");
    expect_error(tj_pow_scalar_(x, tj_v_float(0.5)), TJ_ERR_DTYPE, "aten::pow_.Scalar:", "can't be cast");
    test_expect_close(x, XI, 6, 0, 0);
    cr_expect_eq(tj_tensor_version(x), 0u);
}

/* PyTorch 1.13: torch.tensor([1, 2, 3]).clamp_(1e300) fails with "result type
 * Float can't be cast to the desired output type Long" (TensorIterator's
 * check comes before the bound's conversion); torch.clamp(that, 1e300) and
 * a float32 self's clamp_ with "value cannot be converted to type float
 * without overflow"; fill_ of an int64 with "... to type int64_t without
 * overflow". */
Test(inplace_forms, a_float_bound_overflowing_float32_into_int64_self_is_the_dtype_error)
{
    tj_tensor *x = make(TJ_INT64, 6, XI);
    const char *cast = "can't be cast to the desired output type int64";
    expect_error(tj_clamp_(x, tj_v_float(1e300), tj_v_none()), TJ_ERR_DTYPE, "aten::clamp_: result type float32", cast);
    expect_error(tj_clamp_(x, tj_v_float(-1e300), tj_v_float(1e300)), TJ_ERR_DTYPE, "aten::clamp_:", cast);
    expect_error(tj_clamp_min_(x, tj_v_float(1e300)), TJ_ERR_DTYPE, "aten::clamp_min_:", cast);
    expect_error(tj_clamp_max_(x, tj_v_float(-1e300)), TJ_ERR_DTYPE, "aten::clamp_max_:", cast);
    test_expect_close(x, XI, 6, 0, 0);
    cr_expect_eq(tj_tensor_version(x), 0u);
    /* where the result fits self, the bound's overflow stays the error */
    expect_error(tj_clamp(x, tj_v_float(1e300), tj_v_none()), TJ_ERR_INVALID_ARGUMENT, "aten::clamp:", "overflow");
    expect_error(tj_clamp_(make(TJ_FLOAT32, 6, W), tj_v_float(1e300), tj_v_none()), TJ_ERR_INVALID_ARGUMENT,
                 "aten::clamp_:", "overflow");
    expect_error(tj_fill_(x, tj_v_float(1e300)), TJ_ERR_INVALID_ARGUMENT, "aten::fill_.Scalar:", "overflow");
}

/* torch 1.13 runs masked_fill_ with an int64 mask by reading each element's
 * first byte (torch.tensor([1., 2., 3.]).masked_fill_(torch.tensor([256, 1,
 * 0]), 5.) gives [1., 5., 3.]; a float mask of ones fills nothing); its
 * documentation and torch 2 want bool, as tjit does. */
Test(inplace_forms, masked_fill_refuses_a_mask_that_is_not_bool)
{
    tj_tensor *x = make(TJ_FLOAT32, 6, W);
    const double ones[6] = {1, 1, 1, 1, 1, 1};
    tj_tensor *value = tj_scalar_tensor(tj_v_int(5), TJ_FLOAT32);
    expect_error(tj_masked_fill_(x, make(TJ_INT64, 6, ones), tj_v_int(5)), TJ_ERR_DTYPE, "aten::masked_fill_.Scalar: "
                 "mask must be a bool tensor, got int64", NULL);
    expect_error(tj_masked_fill_tensor_(x, make(TJ_FLOAT32, 6, ones), value), TJ_ERR_DTYPE,
                 "aten::masked_fill_.Tensor: mask must be a bool tensor, got float32", NULL);
    expect_error(tj_masked_fill_tensor(x, make(TJ_INT64, 3, ones), value), TJ_ERR_DTYPE,
                 "aten::masked_fill.Tensor: mask must be a bool tensor, got int64", NULL);
    test_expect_close(x, W, 6, 0, 0);
}

Test(inplace_forms, operands_broadcasting_beyond_self_are_a_shape_error)
{
    int64_t s31[2] = {3, 1}, s34[2] = {3, 4};
    tj_tensor *x = tj_zeros(s31, 2, TJ_FLOAT32), *y = tj_ones(s34, 2, TJ_FLOAT32);
    expect_error(tj_atan2_(x, y), TJ_ERR_SHAPE, "aten::atan2_: output with shape [3, 1] doesn't match the broadcast "
                                                "shape [3, 4]", NULL);
    expect_error(tj_clamp_min_tensor_(x, y), TJ_ERR_SHAPE, "aten::clamp_min_.Tensor:", NULL);
    expect_error(tj_remainder_(x, y), TJ_ERR_SHAPE, "aten::remainder_.Tensor:", NULL);
}

Test(inplace_forms, errors_of_the_out_of_place_operator_name_the_in_place_one)
{
    tj_tensor *x = make(TJ_INT64, 6, XI);
    /* a kernel error (int64 division by zero), and a shape function's */
    expect_error(tj_remainder_scalar_(x, tj_v_int(0)), TJ_ERR_INVALID_ARGUMENT, "aten::remainder_.Scalar: integer "
                                                                                 "division by zero", NULL);
    expect_error(tj_gelu_(make(TJ_FLOAT32, 6, XI), "exact"), TJ_ERR_INVALID_ARGUMENT, "aten::gelu_:", NULL);
    int64_t s[1] = {2};
    tj_tensor *b = tj_ones(s, 1, TJ_BOOL);
    expect_error(tj_neg_(b), TJ_ERR_DTYPE, "aten::neg_:", NULL);
    expect_error(tj_round_decimals(x, 1), TJ_ERR_DTYPE, "aten::round.decimals: not supported for int64", NULL);
    expect_error(tj_remainder_scalar_tensor(tj_v_bool(true), b), TJ_ERR_DTYPE, "aten::remainder.Scalar_Tensor:",
                 NULL);
    expect_error(tj_clamp_max_tensor(x, tj_ones(s, 1, TJ_FLOAT32)), TJ_ERR_SHAPE, "aten::clamp_max.Tensor:", NULL);
}

Test(inplace_forms, lerp_tensor_wants_one_float_dtype_for_all_three)
{
    int64_t s[1] = {3};
    tj_tensor *a = tj_ones(s, 1, TJ_FLOAT32), *w64 = tj_ones(s, 1, TJ_FLOAT64), *i = tj_ones(s, 1, TJ_INT64);
    expect_error(tj_lerp_tensor(a, a, w64), TJ_ERR_DTYPE, "aten::lerp.Tensor: expected dtype float32 for `weight` "
                                                          "but got dtype float64", NULL);
    expect_error(tj_lerp_tensor_(a, w64, a), TJ_ERR_DTYPE, "aten::lerp_.Tensor: expected dtype float32 for `end`",
                 NULL);
    expect_error(tj_lerp_tensor(i, i, i), TJ_ERR_DTYPE, "aten::lerp.Tensor: not supported for int64", NULL);
}

Test(inplace_forms, masked_fill_tensor_wants_a_0_dim_value_that_fits_self)
{
    tj_tensor *x = make(TJ_FLOAT32, 6, W), *m = make(TJ_BOOL, 6, (double[]){1, 0, 0, 1, 0, 1});
    int64_t one[1] = {1};
    expect_error(tj_masked_fill_tensor(x, m, tj_ones(one, 1, TJ_FLOAT32)), TJ_ERR_SHAPE, "aten::masked_fill.Tensor: "
                 "only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s)", NULL);
    /* PyTorch 1.13 checks the value's range when the kernel reads it */
    tj_tensor *big = tj_scalar_tensor(tj_v_float(1e300), TJ_FLOAT64);
    expect_error(tj_masked_fill_tensor_(x, m, big), TJ_ERR_INVALID_ARGUMENT, "aten::masked_fill_.Tensor: value",
                 "overflow");
    test_expect_close(x, W, 6, 0, 0);
    tj_tensor *nan = tj_scalar_tensor(tj_v_float(NAN), TJ_FLOAT32);
    expect_error(tj_masked_fill_tensor(make(TJ_INT64, 6, XI), m, nan), TJ_ERR_INVALID_ARGUMENT,
                 "aten::masked_fill.Tensor: value", "overflow");
    /* a bool value into float self is 0 / 1 */
    tj_tensor *r = tj_masked_fill_tensor(x, m, tj_scalar_tensor(tj_v_bool(true), TJ_BOOL));
    cr_assert_not_null(r, "%s", tj_last_error());
    test_expect_close(r, (double[]){1, -1, 2, 1, 1.5, 1}, 6, 0, 0);
}

Test(inplace_forms, div_scalar_mode_errors_name_the_overload)
{
    tj_tensor *x = make(TJ_INT64, 6, XI);
    expect_error(tj_div_scalar_mode(x, tj_v_int(0), "floor"), TJ_ERR_INVALID_ARGUMENT, "aten::div.Scalar_mode: "
                 "integer division by zero", NULL);
    expect_error(tj_div_scalar_mode(x, tj_v_int(2), "round"), TJ_ERR_INVALID_ARGUMENT, "aten::div.Scalar_mode: "
                 "rounding_mode must be None, 'trunc' or 'floor', got 'round'", NULL);
    expect_error(tj_div_scalar_mode_(x, tj_v_int(2), NULL), TJ_ERR_DTYPE, "aten::div_.Scalar_mode: result type "
                 "float32 can't be cast to the desired output type int64", NULL);
    test_expect_close(x, XI, 6, 0, 0);
}

Test(inplace_forms, a_self_overlapping_an_operand_is_refused)
{
    /* a = base[1:], b = base[:4]: a.atan2_(b) would read overwritten elements */
    tj_tensor *base = tj_arange(tj_v_int(0), tj_v_int(5), tj_v_int(1), TJ_FLOAT32);
    tj_tensor *a = tj_slice(base, 0, true, 1, true, 5, 1), *b = tj_slice(base, 0, true, 0, true, 4, 1);
    expect_error(tj_atan2_(a, b), TJ_ERR_UNSUPPORTED, "aten::atan2_: unsupported operation", NULL);
    cr_expect_not_null(tj_atan2_(a, a), "%s", tj_last_error());
}

/* masked_fill_.Tensor reads its 0-dim value before writing, as ATen's
 * value.item(): an element of self is a valid value (torch 1.13:
 * x.masked_fill_(tensor([False, True, True]), x[0, 0]) for x = arange(1., 7.)
 * .view(2, 3) gives [[1, 1, 1], [4, 1, 1]]); the same element as lerp_'s
 * weight, read per element, is still refused, as in PyTorch. */
Test(inplace_forms, masked_fill_tensor_takes_an_element_of_self_as_its_value)
{
    tj_tensor *x = tj_view(tj_arange(tj_v_int(1), tj_v_int(7), tj_v_int(1), TJ_FLOAT32), (int64_t[]){2, 3}, 2);
    tj_tensor *mask = make(TJ_BOOL, 3, (double[]){0, 1, 1});
    tj_tensor *x00 = tj_select(tj_select(x, 0, 0), 0, 0);
    cr_assert_eq(tj_masked_fill_tensor_(x, mask, x00), x, "%s", tj_last_error());
    test_expect_f32(x, (float[]){1, 1, 1, 4, 1, 1}, 6, 0);
    expect_error(tj_lerp_tensor_(x, tj_zeros_like(x, TJ_DTYPE_NONE), x00), TJ_ERR_UNSUPPORTED,
                 "aten::lerp_.Tensor: unsupported operation", NULL);
}

/* ---- autograd ---- */


/* d/d(leaves) of sum(w * op(x * 1, args)), x and the float tensor arguments
 * leaves requiring grad; `inplace` calls the in-place operator on the
 * non-leaf x * 1. grads[0] is x's, then one per tensor argument. */
static tj_status grads_of(const form_case *c, const tj_op *op, tj_tensor **grads, int *n)
{
    tj_value args[6], outs[TJ_MAX_RETURNS];
    build(c, args);
    tj_tensor *leaves[6];
    *n = 0;
    for (int k = 0; k < c->nargs + 1; k++) {
        if (args[k].kind != TJ_V_TENSOR || (tj_tensor_dtype(args[k].u.t) != TJ_FLOAT32 && tj_tensor_dtype(args[k].u.t) != TJ_FLOAT64)) continue;
        cr_assert_eq(tj_tensor_set_requires_grad(args[k].u.t, true), TJ_OK);
        leaves[(*n)++] = args[k].u.t;
    }
    args[0] = tj_v_tensor(tj_mul_scalar(args[0].u.t, tj_v_int(1)));
    tj_status st = tj_dispatch(op, args, c->nargs + 1, outs);
    if (st != TJ_OK) return st;
    tj_tensor *w = tj_to_copy(make(TJ_FLOAT64, 6, W), (int)tj_tensor_dtype(outs[0].u.t));
    tj_tensor *loss = tj_sum(tj_mul(outs[0].u.t, w), -1);
    return tj_autograd_grad(&loss, 1, NULL, leaves, *n, grads);
}

static bool differentiable_form(const form_case *c)
{
    const tj_op *op = tj_op_find(c->op);
    const char *b = op->base;
    if (!tj_op_inplace_functional(op) || c->dtype != TJ_FLOAT32) return false;
    /* comparisons, logical operators and bernoulli_ (its partner has no
     * gradient, as PyTorch's): checked on their own below */
    return strncmp(b, "logical_", 8) != 0 && !(strlen(b) == 3 && strchr("enlg", b[0])) && strcmp(b, "bernoulli_") != 0;
}

Test(inplace_forms, gradients_of_every_float_form_equal_the_out_of_place_path)
{
    int checked = 0;
    for (int k = 0; k < NCASES; k++) {
        const form_case *c = &form_cases[k];
        if (!differentiable_form(c)) continue;
        const tj_op *op = tj_op_find(c->op);
        tj_tensor *gi[4] = {0}, *go[4] = {0};
        int ni, no;
        cr_assert_eq(grads_of(c, op, gi, &ni), TJ_OK, "%s: %s", c->op, tj_last_error());
        cr_assert_eq(grads_of(c, tj_op_inplace_functional(op), go, &no), TJ_OK, "%s: %s", c->op, tj_last_error());
        cr_assert_eq(ni, no);
        for (int i = 0; i < ni; i++) {
            cr_assert_not_null(go[i], "%s: gradient %d", c->op, i);
            int64_t numel = tj_tensor_numel(go[i]);
            double want[6];
            cr_assert_eq(tj_tensor_copy_to(tj_to_copy(go[i], TJ_FLOAT64), want), TJ_OK);
            test_expect_close(gi[i], want, numel, 1e-6, 1e-7);
        }
        checked++;
    }
    cr_expect_geq(checked, 50, "checked %d forms", checked);
}

Test(inplace_forms, a_comparison_in_place_passes_a_zero_gradient)
{
    const form_case *c = find_case("aten::lt_.Tensor");
    tj_tensor *g[2] = {0};
    int n;
    cr_assert_eq(grads_of(c, tj_op_find(c->op), g, &n), TJ_OK, "%s", tj_last_error());
    double zeros[6] = {0};
    cr_assert_eq(n, 2);
    for (int i = 0; i < 2; i++)
        if (g[i]) test_expect_close(g[i], zeros, 6, 0, 0);
}

/* torch 1.13: (x * 1).bernoulli_(p) keeps a history (BernoulliBackward2)
 * and passes x a zero gradient; bernoulli.p's result has none */
Test(inplace_forms, bernoulli__passes_a_zero_gradient)
{
    tj_tensor *x = tj_ones((int64_t[]){2, 3}, 2, -1), *g;
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    tj_tensor *y = tj_bernoulli_(tj_mul_scalar(x, tj_v_int(1)), 0.5);
    cr_assert_not_null(y, "%s", tj_last_error());
    cr_expect(tj_tensor_requires_grad(y));
    tj_tensor *loss = tj_sum(y, TJ_DTYPE_NONE);
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, &x, 1, &g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g, (double[]){0, 0, 0, 0, 0, 0}, 6, 0, 0);
    cr_expect(!tj_tensor_requires_grad(tj_bernoulli(tj_mul_scalar(x, tj_v_int(1)), 0.5)));
}

Test(inplace_forms, gradients_of_lerp_masked_fill_and_div_scalar_mode_match_pytorch)
{
    for (size_t k = 0; k < sizeof grad_cases / sizeof *grad_cases; k++) {
        const grad_case *gc = &grad_cases[k];
        const form_case *c = find_case(gc->op);
        tj_tensor *g[4] = {0};
        int n;
        cr_assert_eq(grads_of(c, tj_op_find(c->op), g, &n), TJ_OK, "%s: %s", c->op, tj_last_error());
        cr_assert_eq(n, gc->n, "%s: gradients", c->op);
        for (int i = 0; i < n; i++) {
            cr_assert_not_null(g[i], "%s: gradient %d", c->op, i);
            cr_expect_eq(tj_tensor_numel(g[i]), gc->numel[i], "%s: gradient %d", c->op, i);
            test_expect_close(g[i], gc->want[i], gc->numel[i], 1e-6, 1e-7);
        }
    }
}

Test(inplace_forms, clamp_min_tensor_gradients_reach_self_and_the_bound)
{
    /* PyTorch 1.13: x = tensor(X).view(2, 3).requires_grad_(); m = tensor([0.5, -1., 2.]).requires_grad_();
     * torch.clamp_min(x, m).sum().backward() */
    const form_case *c = find_case("aten::clamp_min.Tensor");
    tj_tensor *x = make(TJ_FLOAT32, 6, c->self), *m = make(TJ_FLOAT32, 3, c->args[0].v);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor_set_requires_grad(m, true);
    tj_tensor *loss = tj_sum(tj_clamp_min_tensor(x, m), -1), *g[2];
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){x, m}, 2, g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g[0], (double[]){0, 1, 0, 0, 1, 1}, 6, 0, 0);
    test_expect_close(g[1], (double[]){2, 0, 1}, 3, 0, 0);
}

Test(inplace_forms, remainder_scalar_tensor_has_no_derivative_as_in_pytorch)
{
    tj_tensor *o = make(TJ_FLOAT32, 6, form_cases[0].self);
    tj_tensor_set_requires_grad(o, true);
    /* as torch: the call succeeds, the backward pass that reaches it fails */
    tj_tensor *r = tj_sum(tj_remainder_scalar_tensor(tj_v_int(5), o), -1);
    cr_assert_not_null(r, "%s", tj_last_error());
    cr_expect(tj_tensor_requires_grad(r));
    tj_tensor *g;
    cr_expect_eq(tj_autograd_grad(&r, 1, NULL, &o, 1, &g), TJ_ERR_UNSUPPORTED, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "aten::remainder"), "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "not implemented"), "%s", tj_last_error());
}

Test(inplace_forms, in_place_on_a_leaf_requiring_grad_is_refused)
{
    tj_tensor *x = make(TJ_FLOAT32, 6, form_cases[0].self);
    tj_tensor_set_requires_grad(x, true);
    expect_error(tj_floor_(x), TJ_ERR_INVALID_ARGUMENT, "aten::floor_: self", "leaf that requires grad");
    expect_error(tj_clamp_(x, tj_v_float(0), tj_v_none()), TJ_ERR_INVALID_ARGUMENT, "aten::clamp_:", "leaf");
}

Test(inplace_forms, a_value_saved_before_an_in_place_call_fails_the_backward_pass)
{
    tj_tensor *x = make(TJ_FLOAT32, 6, find_case("aten::log_")->self);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *y = tj_mul_scalar(x, tj_v_int(1)), *z = tj_sum(tj_mul(y, y), -1); /* mul saves y */
    cr_assert_not_null(tj_log_(y), "%s", tj_last_error());
    tj_tensor *g;
    cr_expect_eq(tj_autograd_grad(&z, 1, NULL, &x, 1, &g), TJ_ERR_MODIFIED, "%s", tj_last_error());
}

/* ---- the copy of self's old value that recording makes ---- */

/* The differentiable forms whose formula reads no old value of self, as
 * PyTorch saves `result` (exp_: grad * result, sqrt_) or nothing of self
 * (neg_, floor_, masked_fill_, add_, the random fills uniform_ / normal_ /
 * exponential_; leaky_relu_ / elu_ / celu_ differentiate
 * their result, self_is_result), or reads it only for another
 * operand's gradient (mul_, div_, div_.Tensor_mode, remainder_ / fmod_
 * .Tensor, lerp_.Tensor), which does not require grad below. The forms of
 * comparisons and logical operators have no formula to read it. Every other
 * form copies self. */
static const char *const NO_COPY[] = {
    "aten::neg_", "aten::exp_", "aten::rsqrt_", "aten::tanh_", "aten::sigmoid_", "aten::reciprocal_",
    "aten::expm1_", "aten::relu_", "aten::sign_", "aten::floor_", "aten::ceil_", "aten::round_", "aten::trunc_",
    "aten::frac_", "aten::exp2_", "aten::round_.decimals", "aten::sub_.Scalar", "aten::div_.Tensor_mode",
    "aten::div_.Scalar_mode", "aten::remainder_.Tensor", "aten::remainder_.Scalar", "aten::fmod_.Tensor",
    "aten::fmod_.Scalar", "aten::masked_fill_.Scalar", "aten::masked_fill_.Tensor", "aten::lerp_.Tensor",
    "aten::add_.Tensor", "aten::add_.Scalar", "aten::sub_.Tensor", "aten::mul_.Tensor", "aten::mul_.Scalar",
    "aten::div_.Tensor", "aten::div_.Scalar", "aten::sqrt_", "aten::addcmul_", "aten::addcdiv_", "aten::lerp_.Scalar",
    "aten::tril_", "aten::triu_", "aten::index_copy_", "aten::index_fill_.int_Scalar",
    "aten::index_fill_.int_Tensor", "aten::leaky_relu_", "aten::elu_", "aten::celu_", "aten::scatter_.src",
    "aten::scatter_.value", "aten::uniform_", "aten::normal_", "aten::exponential_",
};

static bool copies_self(const form_case *c)
{
    if (!differentiable_form(c)) return false;
    for (size_t k = 0; k < sizeof NO_COPY / sizeof *NO_COPY; k++)
        if (strcmp(NO_COPY[k], c->op) == 0) return false;
    return true;
}

/* The first case of each form with a float32 self. */
static bool first_float_form_case(int k)
{
    const form_case *c = &form_cases[k];
    if (c->dtype != TJ_FLOAT32 || !tj_op_inplace_functional(tj_op_find(c->op))) return false;
    for (int j = 0; j < k; j++)
        if (form_cases[j].dtype == TJ_FLOAT32 && strcmp(form_cases[j].op, c->op) == 0) return false;
    return true;
}

/* self [ROWS, 2, 3]: 2.4 MB of float32; blocks above CAP are refused: a copy
 * of self, but not the 0.6 MB bool result a comparison writes self from */
#define ROWS 100000
#define CAP ((size_t)1 << 20)

/* Each form on a self [ROWS, 2, 3] (the case's self repeated; its other
 * arguments broadcast) that requires grad, with allocations above CAP
 * refused: the forms that copy self fail for want of memory, the others
 * record their call; their gradient is then the out-of-place path's. */
Test(inplace_forms, recording_copies_self_only_when_the_formula_reads_its_old_value, .init = count_allocations)
{
    tj_scope *outer = tj_scope_begin();
    int64_t shape[3] = {ROWS, 2, 3};
    int checked = 0, copied = 0;
    for (int k = 0; k < NCASES; k++) {
        if (!first_float_form_case(k)) continue;
        const form_case *c = &form_cases[k];
        const tj_op *op = tj_op_find(c->op), *f = tj_op_inplace_functional(op);
        tj_scope *s = tj_scope_begin();
        tj_value args[6], outs[TJ_MAX_RETURNS];
        build(c, args);
        tj_tensor *x = tj_clone(tj_expand(args[0].u.t, shape, 3)), *y = tj_mul_scalar(x, tj_v_int(1));
        cr_assert_not_null(y, "%s", tj_last_error());
        /* the kernel itself needs no large block */
        args[0] = tj_v_tensor(tj_clone(y));
        refuse_allocations_over(CAP);
        cr_assert_eq(tj_dispatch(op, args, c->nargs + 1, outs), TJ_OK, "%s: %s", c->op, tj_last_error());
        refuse_allocations_over(0);
        cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
        args[0] = tj_v_tensor(tj_mul_scalar(x, tj_v_int(1)));
        uint32_t version = tj_tensor_version(args[0].u.t);
        refuse_allocations_over(CAP);
        tj_status st = tj_dispatch(op, args, c->nargs + 1, outs);
        refuse_allocations_over(0);
        if (copies_self(c)) {
            cr_expect_eq(st, TJ_ERR_OUT_OF_MEMORY, "%s copies self: %s", c->op, tj_last_error());
            cr_expect_eq(tj_tensor_version(args[0].u.t), version, "%s: self is unchanged", c->op);
            copied++;
        } else {
            cr_assert_eq(st, TJ_OK, "%s copies nothing: %s", c->op, tj_last_error());
        }
        if (st == TJ_OK && differentiable_form(c)) {
            tj_tensor *loss = tj_sum(outs[0].u.t, TJ_DTYPE_NONE), *g, *want;
            cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, &x, 1, &g), TJ_OK, "%s: %s", c->op, tj_last_error());
            args[0] = tj_v_tensor(tj_mul_scalar(x, tj_v_int(1)));
            cr_assert_eq(tj_dispatch(f, args, c->nargs + 1, outs), TJ_OK, "%s: %s", f->name, tj_last_error());
            loss = tj_sum(outs[0].u.t, TJ_DTYPE_NONE);
            cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, &x, 1, &want), TJ_OK, "%s: %s", f->name, tj_last_error());
            /* elu_'s and celu_'s from their result, grad * (result + alpha), round otherwise */
            double rtol = strcmp(c->op, "aten::elu_") == 0 || strcmp(c->op, "aten::celu_") == 0 ? 1e-6 : 0;
            bool same;
            cr_assert_eq(tj_allclose(g, want, rtol, 0, true, &same), TJ_OK, "%s", tj_last_error());
            cr_expect(same, "%s: the gradient is the out-of-place path's", c->op);
        }
        tj_scope_end(s);
        checked++;
    }
    tj_scope_end(outer);
    cr_expect_eq(checked, 112 - 8, "every form has a float32 case (but masked_fill_.Tensor's second, and "
                                  "scatter_reduce_.two, index_copy_, scatter_.src, scatter_.value, scatter_.reduce "
                                  "and scatter_.value_reduce, whose [2, 3] operands cannot take a [ROWS, 2, 3] self, "
                                  "and bitwise_not_, bool and int64 only)");
    cr_expect_geq(copied, 29, "%d forms copy self", copied);
}

/* lerp_.Tensor reads self's old value for weight's gradient only (grad *
 * (end - self)), div_.Tensor_mode for other's: the copy is made when that
 * operand requires grad, and then the gradients are PyTorch's. */
Test(inplace_forms, a_form_reading_self_for_another_gradient_copies_it_when_that_one_requires_grad,
     .init = count_allocations)
{
    tj_scope *s = tj_scope_begin();
    int64_t shape[1] = {ROWS * 6};
    tj_tensor *x = tj_full(shape, 1, tj_v_float(0.5), TJ_FLOAT32), *w = tj_full(shape, 1, tj_v_float(0.25), TJ_FLOAT32);
    tj_tensor *e = tj_full(shape, 1, tj_v_float(2), TJ_FLOAT32);
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    cr_assert_eq(tj_tensor_set_requires_grad(w, true), TJ_OK);
    tj_tensor *y = tj_mul_scalar(x, tj_v_int(1)), *z = tj_mul_scalar(x, tj_v_int(1));
    refuse_allocations_over(CAP);
    expect_error(tj_lerp_tensor_(y, e, w), TJ_ERR_OUT_OF_MEMORY, "out of memory", NULL);
    expect_error(tj_div_mode_(z, w, NULL), TJ_ERR_OUT_OF_MEMORY, "out of memory", NULL);
    refuse_allocations_over(0);
    cr_assert_eq(tj_lerp_tensor_(y, e, w), y, "%s", tj_last_error());
    tj_tensor *loss = tj_sum(y, TJ_DTYPE_NONE), *g[2];
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){x, w}, 2, g), TJ_OK, "%s", tj_last_error());
    /* d/dx: 1 - 0.25; d/dw: end - self = 2 - 0.5 */
    cr_expect_eq(tj_tensor_item_at(g[0], 0), 0.75);
    cr_expect_eq(tj_tensor_item_at(g[1], ROWS), 1.5);
    tj_scope_end(s);
}

/* ---- make_fx, functionalisation, replay ---- */

/* y = x.clone(); y.pow_(2); y.clamp_min_(0.5); y.atan2_(o); y.round_(decimals=1);
 * y.lerp_(o, o); y.masked_fill_(o > 0, o.sum()); x.remainder_(0.75); x.clamp_max_(o);
 * x.div_(0.7, rounding_mode="floor"): returns y (x is written back). */
static tj_status chain(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_clone(in[0]);
    if (!tj_pow_scalar_(y, tj_v_int(2)) || !tj_clamp_min_(y, tj_v_float(0.5)) || !tj_atan2_(y, in[1]) ||
        !tj_round_decimals_(y, 1) || !tj_lerp_tensor_(y, in[1], in[1]) ||
        !tj_masked_fill_tensor_(y, tj_gt_scalar(in[1], tj_v_int(0)), tj_sum(in[1], TJ_DTYPE_NONE)) ||
        !tj_remainder_scalar_(in[0], tj_v_float(0.75)) || !tj_clamp_max_tensor_(in[0], in[1]) ||
        !tj_div_scalar_mode_(in[0], tj_v_float(0.7), "floor"))
        return tj_last_status();
    out[0] = y;
    *n_out = 1;
    return TJ_OK;
}

static const double CX[6] = {-2.5, -0.75, 0.0, 0.3, 1.5, 3.0}, CO[6] = {1.5, -2.0, 0.7, -0.3, 2.0, 0.5};

/* Compiles g, runs it on fresh copies of CX, CO and expects the bits of an
 * eager run: the result and the input x, which chain writes. */
static void expect_plan_is_eager(const tj_graph *g, const char *what)
{
    tj_tensor *xe = make(TJ_FLOAT32, 6, CX), *oe = make(TJ_FLOAT32, 6, CO), *ye;
    int n;
    cr_assert_eq(chain(NULL, (tj_tensor *[]){xe, oe}, 2, &ye, &n), TJ_OK, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s: %s", what, tj_last_error());
    tj_tensor *x = make(TJ_FLOAT32, 6, CX), *outs[2];
    cr_assert_eq(tj_plan_run(p, (tj_tensor *[]){x, oe}, 2, outs), TJ_OK, "%s: %s", what, tj_last_error());
    float got[6], want_y[6], gx[6], wx[6];
    cr_assert_eq(tj_tensor_copy_to(outs[0], got), TJ_OK);
    cr_assert_eq(tj_tensor_copy_to(ye, want_y), TJ_OK);
    cr_assert_eq(tj_tensor_copy_to(x, gx), TJ_OK);
    cr_assert_eq(tj_tensor_copy_to(xe, wx), TJ_OK);
    cr_expect_eq(memcmp(got, want_y, sizeof got), 0, "%s: the result's bits are eager's", what);
    cr_expect_eq(memcmp(gx, wx, sizeof gx), 0, "%s: the input written in place has eager's bits", what);
    tj_plan_free(p);
}

Test(inplace_forms, make_fx_records_the_forms_and_functionalisation_gives_the_functional_ops)
{
    tj_tensor *ex[2] = {make(TJ_FLOAT32, 6, CX), make(TJ_FLOAT32, 6, CO)};
    tj_graph *g = tj_make_fx(chain, NULL, ex, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect(strstr(text, "aten.pow_.Scalar(") && strstr(text, "aten.round_.decimals("), "%s", text);
    free(text);
    expect_plan_is_eager(g, "the in-place graph");
    cr_expect_eq(tj_pass_functionalize(g), 9, "%s", tj_last_error());
    text = tj_graph_to_string(g);
    const char *want[] = {"aten.pow.Tensor_Scalar(", "aten.clamp_min.default(", "aten.atan2.default(",
                          "aten.round.decimals(", "aten.lerp.Tensor(", "aten.masked_fill.Tensor(",
                          "aten.remainder.Scalar(", "aten.clamp_max.Tensor(", "aten.div.Scalar_mode("};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) cr_expect(strstr(text, want[k]), "%s in\n%s", want[k], text);
    cr_expect_null(strstr(text, "_."), "no in-place call is left:\n%s", text);
    cr_expect_null(strstr(text, "_("), "no in-place call is left:\n%s", text);
    free(text);
    expect_plan_is_eager(g, "the functional graph");
    tj_graph_free(g);
}

/* y = x * 2; y.floor_(); y.nan_to_num_(): returns y */
static tj_status floor_nan(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_mul_scalar(in[0], tj_v_int(2));
    out[0] = tj_nan_to_num_(tj_floor_(y), tj_v_none(), tj_v_none(), tj_v_none());
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(inplace_forms, a_decomposition_table_naming_a_form_gives_the_functional_op_and_copy)
{
    const char *names[] = {"aten::floor_", "aten::nan_to_num_"};
    tj_decomp_table *t = tj_get_decompositions(names, 2);
    cr_assert_not_null(t);
    tj_tensor *x = make(TJ_FLOAT32, 6, (double[]){NAN, INFINITY, -1.25, 0.3, 1.5, -3.7});
    tj_graph *g = tj_make_fx(floor_nan, NULL, &x, 1, t, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::floor")), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::nan_to_num")), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::copy_")), 2);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::floor_")), 0);
    tj_tensor *out;
    cr_assert_eq(tj_graph_run(g, &x, 1, &out), TJ_OK, "%s", tj_last_error());
    /* PyTorch: torch.nan_to_num(torch.floor(x * 2)) in float32 */
    test_expect_close(out, (double[]){0, 3.4028234663852886e38, -3, 0, 3, -8}, 6, 0, 0);
    tj_graph_free(g);
    tj_decomp_table_free(t);
}
