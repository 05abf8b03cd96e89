/* aten::_fused_adamw_step: the fused kernel against the operator-by-operator
 * AdamW update it replaces, its checks, and the capturable AdamW that
 * traces to one call per parameter. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"


TestSuite(fused_adamw, .init = test_scope_open, .fini = test_scope_close);

/* Deterministic values in [lo, lo + span): a different sequence per seed. */
static tj_tensor *filled(tj_dtype dt, int ndim, const int64_t *shape, int seed, double lo, double span)
{
    tj_tensor *t = tj_tensor_empty(dt, ndim, shape);
    cr_assert_not_null(t);
    int64_t n = tj_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v = lo + span * (0.5 + 0.5 * sin(0.37 * (double)i + 1.7 * seed));
        if (dt == TJ_FLOAT32) ((float *)tj_tensor_data(t))[i] = (float)v;
        else ((double *)tj_tensor_data(t))[i] = v;
    }
    return t;
}

static void expect_identical(const tj_tensor *a, const tj_tensor *b, const char *what)
{
    cr_assert_not_null(a, "%s", what);
    cr_assert_not_null(b, "%s", what);
    cr_assert_eq(tj_tensor_numel(a), tj_tensor_numel(b), "%s", what);
    for (int64_t i = 0; i < tj_tensor_numel(a); i++) {
        double x = tj_tensor_item_at(a, i), y = tj_tensor_item_at(b, i);
        cr_expect(x == y || (isnan(x) && isnan(y)), "%s element %lld: %.9g != %.9g", what, (long long)i, x, y);
    }
}

typedef struct adamw_state {
    tj_tensor *param, *grad, *exp_avg, *exp_avg_sq, *max_sq, *step;
} adamw_state;

/* A parameter of n elements with state after some steps (step count 4). */
static adamw_state make_state(tj_dtype dt, int64_t n, bool amsgrad)
{
    int64_t s[1] = {n};
    adamw_state a = {
        filled(dt, 1, s, 1, -1, 2),      filled(dt, 1, s, 2, -0.1, 0.2), filled(dt, 1, s, 3, -0.05, 0.1),
        filled(dt, 1, s, 4, 0, 1e-3),    amsgrad ? filled(dt, 1, s, 5, 0, 1.2e-3) : NULL,
        tj_full(NULL, 0, tj_v_float(4), TJ_FLOAT32),
    };
    return a;
}

static adamw_state clone_state(const adamw_state *a)
{
    adamw_state c = {tj_clone(a->param),      a->grad, tj_clone(a->exp_avg), tj_clone(a->exp_avg_sq),
                     a->max_sq ? tj_clone(a->max_sq) : NULL, tj_clone(a->step)};
    return c;
}

static tj_adamw_options options(bool amsgrad)
{
    tj_adamw_options o = tj_adamw_defaults();
    o.lr = 3e-3;
    o.weight_decay = 0.05;
    o.amsgrad = amsgrad;
    return o;
}

/* One update through tj_adamw_update (capturable selects the fused op). */
static void update(adamw_state *a, const tj_adamw_options *o)
{
    cr_assert_eq(tj_adamw_update(o, &a->param, &a->grad, &a->exp_avg, &a->exp_avg_sq, &a->max_sq, &a->step, 1), TJ_OK,
                 "%s", tj_last_error());
}

/* The fused kernel rounds every element as the operator-by-operator path. */
static void check_same_as_operator_path(tj_dtype dt, int64_t n, bool amsgrad)
{
    adamw_state ops = make_state(dt, n, amsgrad), fused = clone_state(&ops);
    tj_adamw_options o = options(amsgrad);
    update(&ops, &o);
    o.capturable = true;
    update(&fused, &o);
    expect_identical(fused.param, ops.param, "param");
    expect_identical(fused.exp_avg, ops.exp_avg, "exp_avg");
    expect_identical(fused.exp_avg_sq, ops.exp_avg_sq, "exp_avg_sq");
    if (amsgrad) expect_identical(fused.max_sq, ops.max_sq, "max_exp_avg_sq");
    expect_identical(fused.step, ops.step, "step");
}

Test(fused_adamw, float32_matches_the_operator_path_bit_for_bit)
{
    check_same_as_operator_path(TJ_FLOAT32, 1000, false); /* a partial last vector */
}

Test(fused_adamw, amsgrad_matches_the_operator_path_bit_for_bit)
{
    check_same_as_operator_path(TJ_FLOAT32, 37, true);
}

Test(fused_adamw, float64_matches_the_operator_path_bit_for_bit)
{
    check_same_as_operator_path(TJ_FLOAT64, 21, true);
}

Test(fused_adamw, reads_strided_inputs)
{
    int64_t s[2] = {6, 5};
    adamw_state a = {
        filled(TJ_FLOAT32, 2, s, 1, -1, 2),   filled(TJ_FLOAT32, 2, s, 2, -0.1, 0.2),
        filled(TJ_FLOAT32, 2, s, 3, -0.05, 0.1), filled(TJ_FLOAT32, 2, s, 4, 0, 1e-3), NULL,
        tj_full(NULL, 0, tj_v_float(2), TJ_FLOAT32),
    };
    tj_tensor *dense[4], *strided[4];
    tj_tensor *src[4] = {a.param, a.grad, a.exp_avg, a.exp_avg_sq};
    for (int k = 0; k < 4; k++) {
        strided[k] = tj_t(src[k]);                /* [5, 6], column-major */
        dense[k] = tj_contiguous(strided[k]);
    }
    tj_tensor *r1[4], *r2[4];
    cr_assert_eq(tj__fused_adamw_step(strided[0], strided[1], strided[2], strided[3], NULL, a.step, 1e-3, 0.9, 0.999,
                                      0.01, 1e-8, r1),
                 TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj__fused_adamw_step(dense[0], dense[1], dense[2], dense[3], NULL, a.step, 1e-3, 0.9, 0.999, 0.01,
                                      1e-8, r2),
                 TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < 3; k++) expect_identical(r1[k], r2[k], "output");
    cr_expect_null(r1[3], "no max_exp_avg_sq without amsgrad");
}

Test(fused_adamw, empty_parameter_gives_empty_results)
{
    int64_t s[2] = {0, 3};
    tj_tensor *e = tj_zeros(s, 2, TJ_FLOAT32), *step = tj_full(NULL, 0, tj_v_float(1), TJ_FLOAT32), *r[4];
    cr_assert_eq(tj__fused_adamw_step(e, e, e, e, NULL, step, 1e-3, 0.9, 0.999, 0.01, 1e-8, r), TJ_OK, "%s",
                 tj_last_error());
    for (int k = 0; k < 3; k++) cr_expect_eq(tj_tensor_numel(r[k]), 0);
}

Test(fused_adamw, nan_gradient_poisons_its_element_only)
{
    int64_t s[1] = {3};
    float g[3] = {0.1f, NAN, -0.2f};
    tj_tensor *p = tj_zeros(s, 1, TJ_FLOAT32), *grad = tj_tensor_from_data(TJ_FLOAT32, 1, s, g);
    tj_tensor *step = tj_full(NULL, 0, tj_v_float(1), TJ_FLOAT32), *r[4];
    cr_assert_eq(tj__fused_adamw_step(p, grad, p, p, NULL, step, 1e-3, 0.9, 0.999, 0.0, 1e-8, r), TJ_OK);
    cr_expect(isnan(tj_tensor_item_at(r[0], 1)));
    /* first step: the update is -lr * sign(grad) up to eps */
    cr_expect_float_eq(tj_tensor_item_at(r[0], 0), -1e-3, 1e-7);
    cr_expect_float_eq(tj_tensor_item_at(r[0], 2), 1e-3, 1e-7);
}

Test(fused_adamw, rejects_state_of_another_shape)
{
    int64_t s[1] = {4}, s3[1] = {3};
    tj_tensor *p = tj_zeros(s, 1, TJ_FLOAT32), *bad = tj_zeros(s3, 1, TJ_FLOAT32);
    tj_tensor *step = tj_full(NULL, 0, tj_v_float(1), TJ_FLOAT32), *r[4];
    cr_expect_eq(tj__fused_adamw_step(p, p, bad, p, NULL, step, 1e-3, 0.9, 0.999, 0.01, 1e-8, r), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "aten::_fused_adamw_step: exp_avg [3]"), "%s", tj_last_error());
    cr_expect_null(r[0]);
}

Test(fused_adamw, rejects_integer_parameters_and_a_step_of_two_elements)
{
    int64_t s[1] = {2};
    tj_tensor *i = tj_zeros(s, 1, TJ_INT64), *p = tj_zeros(s, 1, TJ_FLOAT32), *r[4];
    tj_tensor *step = tj_full(NULL, 0, tj_v_float(1), TJ_FLOAT32);
    cr_expect_eq(tj__fused_adamw_step(i, i, i, i, NULL, step, 1e-3, 0.9, 0.999, 0.01, 1e-8, r), TJ_ERR_DTYPE);
    cr_expect(strstr(tj_last_error(), "int64"), "%s", tj_last_error());
    cr_expect_eq(tj__fused_adamw_step(p, p, p, p, NULL, p, 1e-3, 0.9, 0.999, 0.01, 1e-8, r), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "step"), "%s", tj_last_error());
}

/* ---- traced capturable AdamW ---- */

static int n_params = 2;

static tj_status adamw_fn(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const tj_adamw_options *o = ctx;
    bool prev = tj_no_grad_begin();
    tj_status st =
        tj_adamw_update(o, in, in + n_params, in + 2 * n_params, in + 3 * n_params, NULL, in + 4 * n_params, n_params);
    tj_no_grad_end(prev);
    out[0] = tj_sum(in[0], -1);
    *n_out = 1;
    return st == TJ_OK && out[0] ? TJ_OK : tj_last_status();
}

/* Inputs: params, grads, exp_avgs, exp_avg_sqs (all of dtype dt), steps
 * (float32, as PyTorch keeps them). */
static void make_inputs(tj_tensor **in, tj_dtype dt, bool fake)
{
    int64_t shapes[2][2] = {{3, 5}, {7, 1}};
    for (int k = 0; k < 5; k++)
        for (int i = 0; i < n_params; i++) {
            int nd = k < 4 ? 2 : 0;
            tj_tensor *t = k == 4 ? tj_full(NULL, 0, tj_v_float(0), TJ_FLOAT32)
                                  : filled(dt, nd, shapes[i], 10 * k + i, k == 3 ? 0 : -1, k == 3 ? 1e-3 : 2);
            in[k * n_params + i] = fake ? tj_tensor_fake(k == 4 ? TJ_FLOAT32 : dt, nd, shapes[i]) : t;
        }
}

/* Two replayed steps against two eager operator-path steps (within atol:
 * the count is read from its input, not baked into the graph). */
static void check_traced(const tj_decomp_table *table, int want_fused, tj_dtype dt, double atol)
{
    tj_adamw_options o = options(false);
    o.capturable = true;
    tj_tensor *fin[10], *in[10], *ref[10];
    make_inputs(fin, dt, true);
    make_inputs(in, dt, false);
    make_inputs(ref, dt, false);
    tj_graph *g = tj_make_fx(adamw_fn, &o, fin, 10, table, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_assert_geq(tj_pass_functionalize(g), 0, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::_fused_adamw_step")), want_fused);
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    o.capturable = false;
    for (int s = 0; s < 2; s++) {
        cr_assert_eq(tj_plan_run_into(p, in, 10, NULL), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_adamw_update(&o, ref, ref + 2, ref + 4, ref + 6, NULL, ref + 8, 2), TJ_OK);
    }
    for (int i = 0; i < 10; i++) {
        if (i >= 2 && i < 4) continue; /* grads */
        for (int64_t e = 0; e < tj_tensor_numel(ref[i]); e++) {
            double got = tj_tensor_item_at(in[i], e), want = tj_tensor_item_at(ref[i], e);
            cr_expect(fabs(got - want) <= atol, "input %d element %lld: %.9g vs %.9g", i, (long long)e, got, want);
        }
    }
    tj_plan_free(p);
    tj_graph_free(g);
}

Test(fused_adamw, capturable_update_traces_to_one_call_per_parameter)
{
    check_traced(NULL, 2, TJ_FLOAT32, 0); /* the same kernel: identical */
}

/* The decomposition computes the bias corrections from the float32 count in
 * float64 as the kernel does, and rounds as it does: identical results for
 * float32 and float64 parameters. (Corrections in the count's float32, as
 * torch's capturable branch, put float64 parameters 1e-8 to 4.5e-6 off
 * after two steps of a small model.) */
Test(fused_adamw, core_table_decomposes_it_into_the_kernels_operations)
{
    tj_decomp_table *core = tj_core_decompositions();
    check_traced(core, 0, TJ_FLOAT32, 0);
    check_traced(core, 0, TJ_FLOAT64, 0);
    tj_decomp_table_free(core);
}

/* Without capturable the update reads the count as a number: a trace would
 * replay the traced step's bias corrections forever, so make_fx refuses it
 * in both modes, before any input changes. */
static void check_refused_in_trace(tj_tracing_mode mode)
{
    tj_adamw_options o = options(false);
    tj_tensor *in[10], *before[10];
    make_inputs(in, TJ_FLOAT32, mode == TJ_TRACE_FAKE);
    for (int i = 0; i < 10; i++) before[i] = mode == TJ_TRACE_FAKE ? NULL : tj_clone(in[i]);
    tj_graph *g = tj_make_fx(adamw_fn, &o, in, 10, NULL, mode);
    test_expect_error(g, TJ_ERR_UNSUPPORTED, "tj_adamw_update", "capturable");
    tj_graph_free(g);
    for (int i = 0; mode == TJ_TRACE_REAL && i < 10; i++) expect_identical(in[i], before[i], "input");
}

Test(fused_adamw, make_fx_refuses_the_non_capturable_update_in_real_and_fake_mode)
{
    check_refused_in_trace(TJ_TRACE_REAL);
    check_refused_in_trace(TJ_TRACE_FAKE);
}
