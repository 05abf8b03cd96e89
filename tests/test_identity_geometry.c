/* Identity elimination (tracer/simplify.c) where layout matters: results
 * read through views, outputs that are views, inputs that arrive with other
 * strides or offsets at run time (several contexts), readers whose sum
 * order depends on their operand's layout (mm), a written-back input. Each
 * must give the interpreter's bits. */
#include <criterion/criterion.h>
#include <string.h>

#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(identity_geometry, .init = test_scope_open, .fini = test_scope_close);

/* y = x * ones (a folded constant); out = y.view(12) */
static tj_status fn_mul_one_view(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t s[2] = {3, 4}, flat[1] = {12};
    tj_tensor *y = tj_mul(in[0], tj_ones(s, 2, TJ_FLOAT32));
    out[0] = tj_exp(tj_view(y, flat, 1));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* y = x * 1; out = y.t() */
static tj_status fn_mul_one_t(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_t(tj_mul_scalar(in[0], tj_v_int(1)));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static void run_both(tj_trace_fn fn, tj_tensor *trace_in, tj_tensor *run_in, tj_tensor **want, tj_tensor **got,
                     tj_tensor **got_off)
{
    tj_graph *g = tj_make_fx(fn, NULL, &trace_in, 1, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_compile_options on = {0}, off = {.no_identity_elimination = true, .no_dead_code = true};
    tj_plan *p = tj_compile(g, &on), *q = tj_compile(g, &off);
    cr_assert(p && q, "%s", tj_last_error());
    cr_assert_eq(tj_graph_run(g, &run_in, 1, want), TJ_OK, "interpreter: %s", tj_last_error());
    cr_assert_eq(tj_plan_run(q, &run_in, 1, got_off), TJ_OK, "plan without the pass: %s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, &run_in, 1, got), TJ_OK, "plan with identity elimination: %s", tj_last_error());
    tj_plan_free(p);
    tj_plan_free(q);
    tj_graph_free(g);
}

static void expect_equal(tj_tensor *a, tj_tensor *b)
{
    tj_tensor *ca = tj_contiguous(a), *cb = tj_contiguous(b);
    cr_assert_eq(tj_tensor_numel(ca), tj_tensor_numel(cb));
    cr_assert(memcmp(tj_tensor_data(ca), tj_tensor_data(cb), (size_t)tj_tensor_numel(ca) * 4) == 0, "results differ");
}

Test(identity_geometry, identity_of_a_restrided_input_read_by_a_view_runs_like_the_interpreter)
{
    int64_t s[2] = {3, 4}, st[2] = {4, 3};
    tj_tensor *x = test_random_f32(2, s, 1);
    tj_tensor *xt = tj_t(test_random_f32(2, st, 2)); /* [3, 4] with strides [1, 3] */
    tj_tensor *want, *got, *got_off;
    run_both(fn_mul_one_view, x, xt, &want, &got, &got_off);
    expect_equal(got_off, want);
    expect_equal(got, want);
}

Test(identity_geometry, output_view_of_an_identity_does_not_share_the_input_storage)
{
    int64_t s[2] = {3, 4};
    tj_tensor *x = test_random_f32(2, s, 1);
    tj_tensor *want, *got, *got_off;
    run_both(fn_mul_one_t, x, x, &want, &got, &got_off);
    expect_equal(got, want);
    cr_expect_neq(tj_tensor_data(want), tj_tensor_data(x), "interpreter: a tensor of its own");
    cr_expect_neq(tj_tensor_data(got_off), tj_tensor_data(x), "plan without the pass: a tensor of its own");
    cr_expect_neq(tj_tensor_data(got), tj_tensor_data(x), "x * 1 is a new tensor: its view must not alias input x");
}

/* a = p * 1; p -= g; out = exp(a): after functionalisation the update is
 * written back into p, and a must still read p's old value */
static tj_status fn_read_after_update(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *a = tj_mul_scalar(in[0], tj_v_int(1));
    tj_sub_(in[0], in[1], tj_v_int(1));
    out[0] = tj_exp(a);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(identity_geometry, identity_of_a_written_back_input_reads_the_old_value)
{
    int64_t s[1] = {6};
    tj_tensor *in[2] = {test_random_f32(1, s, 1), test_random_f32(1, s, 2)};
    tj_graph *g = tj_make_fx(fn_read_after_update, NULL, in, 2, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_pass_functionalize(g);
    tj_compile_options on = {0}, off = {.no_identity_elimination = true};
    tj_plan *p = tj_compile(g, &on), *q = tj_compile(g, &off);
    cr_assert(p && q, "%s", tj_last_error());
    tj_plan_statistics sp;
    tj_plan_stats(p, &sp);
    cr_expect_eq(sp.n_identities, 1, "p * 1, read by exp, elementwise");
    tj_tensor *results[3][2];
    for (int r = 0; r < 3; r++) {
        tj_tensor *x[2] = {tj_contiguous(tj_mul_scalar(in[0], tj_v_int(1))), in[1]};
        tj_status st = r == 0 ? tj_graph_run(g, x, 2, results[r]) : tj_plan_run(r == 1 ? q : p, x, 2, results[r]);
        cr_assert_eq(st, TJ_OK, "%s", tj_last_error());
        results[r][1] = x[0];
    }
    for (int r = 1; r < 3; r++) {
        expect_equal(results[r][0], results[0][0]);
        expect_equal(results[r][1], results[0][1]);
    }
    tj_plan_free(p);
    tj_plan_free(q);
    tj_graph_free(g);
}

/* out0 = (x * ones) @ w, out1 = exp(x.t() * 1.0): identity elimination
 * hands mm (and exp) the input's own run-time geometry; the interpreter
 * computes on the contiguous x * 1. With a transposed x the GEMM would sum
 * in another order and out0 differ from the interpreter's in the last bit
 * (0x1.4083ecp-1 vs 0x1.4083eap-1 with these inputs), so neither is an
 * alias. */
static tj_status fn_mm_of_identity(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t s[2] = {3, 4};
    tj_tensor *a = tj_mul(in[0], tj_ones(s, 2, TJ_FLOAT32));
    tj_tensor *b = tj_mul_scalar(tj_t(in[0]), tj_v_float(1.0));
    out[0] = tj_mm(a, in[1]);
    out[1] = tj_exp(b);
    *n_out = 2;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(identity_geometry, identities_of_inputs_follow_run_time_strides_and_offsets_across_runs_and_contexts)
{
    int64_t s[2] = {3, 4}, st[2] = {4, 3}, sw[2] = {4, 2}, big[1] = {40};
    tj_tensor *in[2] = {test_random_f32(2, s, 1), test_random_f32(2, sw, 2)};
    tj_graph *g = tj_make_fx(fn_mm_of_identity, NULL, in, 2, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_compile_options on = {0};
    tj_plan *p = tj_compile(g, &on);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_plan_statistics sp;
    tj_plan_stats(p, &sp);
    cr_expect_eq(sp.n_identities, 0, "mm's operand keeps its layout, t(x) is no contiguous buffer");
    tj_plan_context *c2 = tj_plan_context_new(p);
    cr_assert_not_null(c2, "%s", tj_last_error());
    tj_tensor *flat = test_random_f32(1, big, 3);
    tj_tensor *xs[4] = {in[0], tj_t(test_random_f32(2, st, 4)), tj_view(tj_slice(flat, 0, true, 7, true, 19, 1), s, 2), in[0]};
    for (int r = 0; r < 8; r++) {
        tj_tensor *x[2] = {xs[r % 4], in[1]}, *want[2], *got[2];
        cr_assert_eq(tj_graph_run(g, x, 2, want), TJ_OK, "%s", tj_last_error());
        tj_status st2 = r & 1 ? tj_plan_run_ctx(c2, x, 2, got) : tj_plan_run(p, x, 2, got);
        cr_assert_eq(st2, TJ_OK, "%s", tj_last_error());
        expect_equal(got[0], want[0]);
        expect_equal(got[1], want[1]);
    }
    tj_plan_context_free(c2);
    tj_plan_free(p);
    tj_graph_free(g);
}

/* out = (x.t() * 1) @ w with x contiguous [4, 3]: the alias hands mm a
 * transposed operand where the interpreter multiplies the contiguous x.t() * 1;
 * the small-matrix GEMM path would then sum in another order */
static tj_status fn_mm_of_transposed_identity(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_mm(tj_mul_scalar(tj_t(in[0]), tj_v_int(1)), in[1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(identity_geometry, mm_of_an_identity_of_a_transposed_view_matches_the_interpreter_bit_for_bit)
{
    int64_t s[2] = {4, 3}, sw[2] = {4, 2};
    tj_tensor *in[2] = {test_random_f32(2, s, 5), test_random_f32(2, sw, 6)};
    tj_graph *g = tj_make_fx(fn_mm_of_transposed_identity, NULL, in, 2, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_compile_options on = {0};
    tj_plan *p = tj_compile(g, &on);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *want, *got;
    cr_assert_eq(tj_graph_run(g, in, 2, &want), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, in, 2, &got), TJ_OK, "%s", tj_last_error());
    expect_equal(got, want);
    tj_plan_free(p);
    tj_graph_free(g);
}

/* y = exp(x) * 1 (an intermediate, contiguous); out = exp(y.view(12)): a
 * view of an eliminated result would point at a block that is not there */
static tj_status fn_view_of_intermediate_identity(void *ctx, tj_tensor *const *in, int n, tj_tensor **out,
                                                  int *n_out)
{
    (void)ctx, (void)n;
    int64_t flat[1] = {12};
    tj_tensor *y = tj_mul_scalar(tj_exp(in[0]), tj_v_int(1));
    out[0] = tj_exp(tj_view(y, flat, 1));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(identity_geometry, an_intermediate_read_through_a_view_stays_a_tensor)
{
    int64_t s[2] = {3, 4};
    tj_tensor *x = test_random_f32(2, s, 7);
    tj_tensor *want, *got, *got_off;
    run_both(fn_view_of_intermediate_identity, x, x, &want, &got, &got_off);
    expect_equal(got_off, want);
    expect_equal(got, want);
}
