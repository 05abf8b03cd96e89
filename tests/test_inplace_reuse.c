/* In-place reuse in the memory plan (tracer/memory_plan.c): the result of an
 * elementwise operator, or of tril / triu, takes the arena block of an input
 * of its shape and dtype that dies at its step. For each operator below the
 * graph t = x - y; r = op(t, y...) on float32[256, 128] (128 KiB, the
 * smallest block reused) places r over t: one in-place result, an arena of
 * one block (two without reuse), and the same result as the plan compiled
 * without reuse and the graph interpreter (bit for bit, nan for nan). The
 * plans run each call as its own kernel (no loop fusion, which would keep t
 * out of the arena altogether). */
#include <criterion/criterion.h>

#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(inplace_reuse, .init = test_scope_open, .fini = test_scope_close);

typedef tj_tensor *(*apply_fn)(tj_tensor *t, tj_tensor *y);

typedef struct reuse_case {
    const char *name;
    apply_fn apply;
} reuse_case;

/* in: x, y; out: apply(x - y, y) */
static tj_status fn_case(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    const reuse_case *c = ctx;
    out[0] = c->apply(tj_sub(in[0], in[1]), in[1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* Traces the case on x, y and checks the plans with and without reuse. */
static void expect_reused(const reuse_case *c, tj_tensor *x, tj_tensor *y, size_t block)
{
    tj_tensor *in[2] = {x, y};
    tj_graph *g = tj_make_fx(fn_case, (void *)c, in, 2, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s: make_fx: %s", c->name, tj_last_error());
    tj_compile_options on = {.no_pointwise_fusion = true}, off = {.no_inplace_reuse = true, .no_pointwise_fusion = true};
    tj_plan *p = tj_compile(g, &on), *q = tj_compile(g, &off);
    cr_assert(p && q, "%s: tj_compile: %s", c->name, tj_last_error());
    tj_plan_statistics with, without;
    tj_plan_stats(p, &with);
    tj_plan_stats(q, &without);
    cr_expect_eq(with.n_inplace, 1, "%s: %d results in place", c->name, with.n_inplace);
    cr_expect_eq(with.arena_bytes, block, "%s: arena %zu bytes", c->name, with.arena_bytes);
    cr_expect_eq(without.arena_bytes, 2 * block, "%s: arena without reuse %zu", c->name, without.arena_bytes);
    tj_tensor *want, *got, *apart;
    cr_assert_eq(tj_graph_run(g, in, 2, &want), TJ_OK, "%s: %s", c->name, tj_last_error());
    for (int run = 0; run < 2; run++) { /* the second run finds the arena as the first left it */
        cr_assert_eq(tj_plan_run(p, in, 2, &got), TJ_OK, "%s: %s", c->name, tj_last_error());
        test_expect_same(got, want, c->name);
    }
    cr_assert_eq(tj_plan_run(q, in, 2, &apart), TJ_OK, "%s: %s", c->name, tj_last_error());
    test_expect_same(apart, want, c->name);
    tj_plan_free(p);
    tj_plan_free(q);
    tj_graph_free(g);
}

#define UNARY(fn) \
    static tj_tensor *u_##fn(tj_tensor *t, tj_tensor *y) { (void)y; return tj_##fn(t); }
UNARY(floor)
UNARY(ceil)
UNARY(round)
UNARY(trunc)
UNARY(frac)
UNARY(asin)
UNARY(acos)
UNARY(atan)
UNARY(sinh)
UNARY(cosh)
UNARY(log2)
UNARY(log10)
UNARY(exp2)
UNARY(sign)
UNARY(square)
UNARY(hardsigmoid)
UNARY(hardswish)

static tj_tensor *c_remainder_scalar(tj_tensor *t, tj_tensor *y) { (void)y; return tj_remainder_scalar(t, tj_v_float(0.3)); }
static tj_tensor *c_fmod_scalar(tj_tensor *t, tj_tensor *y) { (void)y; return tj_fmod_scalar(t, tj_v_float(-0.3)); }
static tj_tensor *c_nan_to_num(tj_tensor *t, tj_tensor *y)
{
    (void)y;
    return tj_nan_to_num(t, tj_v_float(7), tj_v_none(), tj_v_float(-9));
}
static tj_tensor *c_clamp_min(tj_tensor *t, tj_tensor *y) { (void)y; return tj_clamp_min(t, tj_v_float(-0.25)); }
static tj_tensor *c_clamp_max(tj_tensor *t, tj_tensor *y) { (void)y; return tj_clamp_max(t, tj_v_float(0.25)); }
static tj_tensor *c_tril(tj_tensor *t, tj_tensor *y) { (void)y; return tj_tril(t, 3); }
static tj_tensor *c_triu(tj_tensor *t, tj_tensor *y) { (void)y; return tj_triu(t, -2); }
static tj_tensor *c_gelu(tj_tensor *t, tj_tensor *y) { (void)y; return tj_gelu(t, "tanh"); }
static tj_tensor *c_leaky_relu(tj_tensor *t, tj_tensor *y) { (void)y; return tj_leaky_relu(t, tj_v_float(0.1)); }
static tj_tensor *c_softplus(tj_tensor *t, tj_tensor *y) { (void)y; return tj_softplus(t, tj_v_float(2), tj_v_float(1)); }
static tj_tensor *c_elu(tj_tensor *t, tj_tensor *y) { (void)y; return tj_elu(t, tj_v_float(1), tj_v_float(1), tj_v_float(1)); }
static tj_tensor *c_hardtanh(tj_tensor *t, tj_tensor *y) { (void)y; return tj_hardtanh(t, tj_v_float(-0.5), tj_v_float(0.5)); }
static tj_tensor *c_rsub(tj_tensor *t, tj_tensor *y) { return tj_rsub(t, y, tj_v_int(2)); }
static tj_tensor *c_remainder(tj_tensor *t, tj_tensor *y) { return tj_remainder(t, y); }
static tj_tensor *c_fmod(tj_tensor *t, tj_tensor *y) { return tj_fmod(y, t); } /* t the divisor */
static tj_tensor *c_atan2(tj_tensor *t, tj_tensor *y) { return tj_atan2(y, t); }
static tj_tensor *c_logaddexp(tj_tensor *t, tj_tensor *y) { return tj_logaddexp(t, y); }
static tj_tensor *c_addcmul(tj_tensor *t, tj_tensor *y) { return tj_addcmul(y, t, y, tj_v_float(0.5)); }
static tj_tensor *c_addcdiv(tj_tensor *t, tj_tensor *y) { return tj_addcdiv(t, y, y, tj_v_float(0.5)); }
static tj_tensor *c_lerp(tj_tensor *t, tj_tensor *y) { return tj_lerp(y, t, tj_v_float(0.3)); }
static tj_tensor *c_sigmoid_backward(tj_tensor *t, tj_tensor *y) { return tj_sigmoid_backward(t, y); }
static tj_tensor *c_tanh_backward(tj_tensor *t, tj_tensor *y) { return tj_tanh_backward(y, t); }
static tj_tensor *c_threshold_backward(tj_tensor *t, tj_tensor *y) { return tj_threshold_backward(t, y, tj_v_float(0.5)); }
static tj_tensor *c_gelu_backward(tj_tensor *t, tj_tensor *y) { return tj_gelu_backward(t, y, "none"); }
static tj_tensor *c_leaky_relu_backward(tj_tensor *t, tj_tensor *y)
{
    return tj_leaky_relu_backward(y, t, tj_v_float(0.2), false);
}
static tj_tensor *c_softplus_backward(tj_tensor *t, tj_tensor *y)
{
    return tj_softplus_backward(t, y, tj_v_float(1), tj_v_float(20));
}
static tj_tensor *c_elu_backward(tj_tensor *t, tj_tensor *y)
{
    return tj_elu_backward(y, tj_v_float(1), tj_v_float(1), tj_v_float(1), false, t);
}
static tj_tensor *c_hardtanh_backward(tj_tensor *t, tj_tensor *y)
{
    return tj_hardtanh_backward(t, y, tj_v_float(0.2), tj_v_float(0.7));
}
static tj_tensor *c_hardsigmoid_backward(tj_tensor *t, tj_tensor *y) { return tj_hardsigmoid_backward(y, t); }
static tj_tensor *c_hardswish_backward(tj_tensor *t, tj_tensor *y) { return tj_hardswish_backward(t, y); }

static const reuse_case FLOAT_CASES[] = {
    {"floor", u_floor}, {"ceil", u_ceil}, {"round", u_round}, {"trunc", u_trunc}, {"frac", u_frac},
    {"remainder.Tensor", c_remainder}, {"remainder.Scalar", c_remainder_scalar}, {"fmod.Tensor", c_fmod},
    {"fmod.Scalar", c_fmod_scalar}, {"nan_to_num", c_nan_to_num}, {"clamp_min", c_clamp_min},
    {"clamp_max", c_clamp_max}, {"atan2", c_atan2}, {"asin", u_asin}, {"acos", u_acos}, {"atan", u_atan},
    {"sinh", u_sinh}, {"cosh", u_cosh}, {"log2", u_log2}, {"log10", u_log10}, {"exp2", u_exp2},
    {"tril", c_tril}, {"triu", c_triu}, {"gelu", c_gelu}, {"sign", u_sign}, {"square", u_square},
    {"rsub", c_rsub}, {"leaky_relu", c_leaky_relu}, {"softplus", c_softplus}, {"elu", c_elu},
    {"hardtanh", c_hardtanh}, {"hardsigmoid", u_hardsigmoid}, {"hardswish", u_hardswish},
    {"logaddexp", c_logaddexp}, {"addcmul", c_addcmul}, {"addcdiv", c_addcdiv}, {"lerp", c_lerp},
    {"sigmoid_backward", c_sigmoid_backward}, {"tanh_backward", c_tanh_backward},
    {"threshold_backward", c_threshold_backward}, {"gelu_backward", c_gelu_backward},
    {"leaky_relu_backward", c_leaky_relu_backward}, {"softplus_backward", c_softplus_backward},
    {"elu_backward", c_elu_backward}, {"hardtanh_backward", c_hardtanh_backward},
    {"hardsigmoid_backward", c_hardsigmoid_backward}, {"hardswish_backward", c_hardswish_backward},
};

Test(inplace_reuse, float_results_take_their_dying_input_block)
{
    const int64_t shape[2] = {256, 128};
    tj_tensor *x = test_random_f32(2, shape, 1), *y = test_random_f32(2, shape, 2);
    for (size_t i = 0; i < sizeof FLOAT_CASES / sizeof *FLOAT_CASES; i++)
        expect_reused(&FLOAT_CASES[i], x, y, 256 * 128 * sizeof(float));
}

/* nan_to_num of an int64 t is t itself: over t, nothing to copy */
static tj_tensor *c_nan_to_num_i64(tj_tensor *t, tj_tensor *y)
{
    (void)y;
    return tj_nan_to_num(t, tj_v_none(), tj_v_none(), tj_v_none());
}
static tj_tensor *c_floor_i64(tj_tensor *t, tj_tensor *y) { (void)y; return tj_floor(t); }
static tj_tensor *c_remainder_i64(tj_tensor *t, tj_tensor *y) { return tj_remainder(t, y); }

Test(inplace_reuse, int64_results_take_their_dying_input_block)
{
    const int64_t shape[2] = {128, 128};
    int64_t xv[128 * 128], yv[128 * 128];
    for (int i = 0; i < 128 * 128; i++) {
        xv[i] = (int64_t)(i * 7919 % 1000) - 500;
        yv[i] = (int64_t)(i * 104729 % 13 + 1) * (i % 2 ? 1 : -1); /* no zero divisor */
    }
    tj_tensor *x = test_i64(2, shape, xv), *y = test_i64(2, shape, yv);
    const reuse_case cases[] = {
        {"nan_to_num int64", c_nan_to_num_i64}, {"floor int64", c_floor_i64}, {"remainder int64", c_remainder_i64}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_reused(&cases[i], x, y, 128 * 128 * sizeof(int64_t));
}

/* t = x - y as a bool mask, then a logical operator over it */
static tj_tensor *c_logical_not(tj_tensor *t, tj_tensor *y) { (void)y; return tj_logical_not(tj_gt_scalar(t, tj_v_int(0))); }
static tj_tensor *c_logical_xor(tj_tensor *t, tj_tensor *y)
{
    return tj_logical_xor(tj_gt_scalar(y, tj_v_float(0.5)), tj_gt_scalar(t, tj_v_int(0)));
}
static tj_tensor *c_eq(tj_tensor *t, tj_tensor *y) { (void)y; return tj_eq_scalar(tj_lt_scalar(t, tj_v_int(0)), tj_v_bool(false)); }

Test(inplace_reuse, bool_results_take_their_dying_mask_block)
{
    /* 131072 elements: a bool mask of 128 KiB. t (float, 512 KiB) dies
     * into the mask, which the logical result takes over. */
    const int64_t shape[2] = {512, 256};
    tj_tensor *x = test_random_f32(2, shape, 3), *y = test_random_f32(2, shape, 4);
    const reuse_case cases[] = {{"logical_not", c_logical_not}, {"logical_xor", c_logical_xor}, {"eq.Scalar", c_eq}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tj_tensor *in[2] = {x, y};
        tj_graph *g = tj_make_fx(fn_case, (void *)&cases[i], in, 2, NULL, TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s", tj_last_error());
        tj_plan *p = tj_compile(g, &(tj_compile_options){.no_pointwise_fusion = true});
        cr_assert_not_null(p, "%s", tj_last_error());
        tj_plan_statistics st;
        tj_plan_stats(p, &st);
        cr_expect_eq(st.n_inplace, 1, "%s: %d results in place", cases[i].name, st.n_inplace);
        tj_tensor *want, *got;
        cr_assert_eq(tj_graph_run(g, in, 2, &want), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_plan_run(p, in, 2, &got), TJ_OK, "%s", tj_last_error());
        test_expect_same(got, want, cases[i].name);
        tj_plan_free(p);
        tj_graph_free(g);
    }
}
