/* Compile-time simplifications. Dead-code elimination (tracer/prune.c):
 * calls of pure operators whose results no output needs leave the plan;
 * random, in-place and user operators stay. Identity elimination
 * (tracer/simplify.c): multiplications and divisions by one become aliases,
 * where layout cannot matter: results read through views, outputs that are
 * views, inputs that arrive with other strides or offsets at run time
 * (several contexts), readers whose sum order depends on layout (mm), a
 * written-back input.
 * Results equal the interpreter's and those of the plan compiled without
 * the pass, bit for bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(passes, .init = test_scope_open, .fini = test_scope_close);

static tj_graph *trace(tj_trace_fn fn, tj_tensor *const *in, int n, const tj_decomp_table *table)
{
    tj_graph *g = tj_make_fx(fn, NULL, in, n, table, TJ_TRACE_REAL);
    cr_assert_not_null(g, "make_fx: %s", tj_last_error());
    return g;
}

static tj_plan_statistics compile_with(const tj_graph *g, tj_compile_options o, tj_plan **out)
{
    tj_plan *p = tj_compile(g, &o);
    cr_assert_not_null(p, "tj_compile: %s", tj_last_error());
    tj_plan_statistics s;
    cr_assert_eq(tj_plan_stats(p, &s), TJ_OK);
    *out = p;
    return s;
}


static void expect_same(tj_tensor *a, tj_tensor *b, const char *what)
{
    cr_assert_not_null(a, "%s: %s", what, tj_last_error());
    cr_assert_not_null(b, "%s: %s", what, tj_last_error());
    tj_tensor *ca = tj_contiguous(a), *cb = tj_contiguous(b);
    cr_assert_eq(tj_tensor_numel(ca), tj_tensor_numel(cb), "%s", what);
    cr_assert(memcmp(tj_tensor_data(ca), tj_tensor_data(cb), (size_t)tj_tensor_numel(ca) * sizeof(float)) == 0,
              "%s: results differ", what);
}

/* Runs both plans and the interpreter on `in` (after the same seed) and
 * expects one result from all three. */
static void expect_all_equal(const tj_graph *g, tj_plan *pruned, tj_plan *kept, tj_tensor *const *in, int n)
{
    tj_tensor *want, *a, *b;
    tj_manual_seed(7);
    cr_assert_eq(tj_graph_run(g, in, n, &want), TJ_OK, "%s", tj_last_error());
    tj_manual_seed(7);
    cr_assert_eq(tj_plan_run(pruned, in, n, &a), TJ_OK, "%s", tj_last_error());
    tj_manual_seed(7);
    cr_assert_eq(tj_plan_run(kept, in, n, &b), TJ_OK, "%s", tj_last_error());
    expect_same(a, want, "pruned plan vs interpreter");
    expect_same(b, want, "no_dead_code plan vs interpreter");
}

/* Traces fn on `in`, compiles it with the default options and with `off`,
 * expects one result from both plans and the interpreter, and returns both
 * plans' statistics. */
static void check_pass(tj_trace_fn fn, tj_tensor *const *in, int n, const tj_decomp_table *table,
                       tj_compile_options off, tj_plan_statistics *with, tj_plan_statistics *without)
{
    tj_graph *g = trace(fn, in, n, table);
    tj_plan *p, *q;
    *with = compile_with(g, (tj_compile_options){0}, &p);
    *without = compile_with(g, off, &q);
    expect_all_equal(g, p, q, in, n);
    tj_plan_free(p);
    tj_plan_free(q);
    tj_graph_free(g);
}

static const tj_compile_options keep_dead = {.no_dead_code = true};

/* exp(x) and a view of it are never read; log reads exp's result but is
 * itself never read: all three go, neg stays */
static tj_status fn_dead_chain(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t flat[1] = {12};
    tj_tensor *e = tj_exp(in[0]);
    tj_log(tj_view(e, flat, 1));
    out[0] = tj_neg(in[0]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(passes, drops_calls_and_views_no_output_needs)
{
    int64_t s[2] = {3, 4};
    tj_tensor *x = test_random_f32(2, s, 1);
    tj_plan_statistics sp, sq;
    check_pass(fn_dead_chain, &x, 1, NULL, keep_dead, &sp, &sq);
    cr_expect_eq(sp.n_dead, 3, "exp, view and log are dead, got %d", sp.n_dead);
    cr_expect_eq(sp.n_kernels, 1);
    cr_expect_eq(sp.n_views, 0);
    cr_expect_eq(sq.n_dead, 0);
    cr_expect_eq(sq.n_kernels, 3);
    cr_expect_eq(sq.n_views, 1);
    cr_expect_lt(sp.naive_bytes, sq.naive_bytes, "dead results take no memory");
}

/* a live result read by a dead node stays */
static tj_status fn_live_read_by_dead(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *e = tj_exp(in[0]);
    tj_log(e);
    out[0] = e;
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(passes, keeps_a_result_that_an_output_needs)
{
    int64_t s[1] = {5};
    tj_tensor *x = test_random_f32(1, s, 2);
    tj_plan_statistics sp, sq;
    check_pass(fn_live_read_by_dead, &x, 1, NULL, keep_dead, &sp, &sq);
    cr_expect_eq(sp.n_dead, 1);
    cr_expect_eq(sp.n_kernels, 1);
}

/* An unread draw still advances the generator: the later draw (the
 * output) must see the same state as in eager mode. */
static tj_status fn_unread_draw(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t s[1] = {6};
    tj_rand(s, 1, TJ_FLOAT32);
    out[0] = tj_add(in[0], tj_rand(s, 1, TJ_FLOAT32));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(passes, keeps_random_calls_whose_results_are_unread)
{
    int64_t s[1] = {6};
    tj_tensor *x = test_random_f32(1, s, 3);
    tj_plan_statistics sp, sq;
    check_pass(fn_unread_draw, &x, 1, NULL, keep_dead, &sp, &sq);
    cr_expect_eq(sp.n_dead, 0);
    cr_expect_eq(sp.n_kernels, 3);
}

/* An in-place update of an input is the graph's effect even when its
 * result is unread (an unfunctionalised graph). */
static tj_status fn_inplace_on_input(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_add_(in[1], tj_exp(in[0]), tj_v_int(1));
    out[0] = tj_neg(in[0]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(passes, keeps_in_place_calls_and_what_they_read)
{
    int64_t s[1] = {4};
    tj_tensor *in[2] = {test_random_f32(1, s, 4), test_random_f32(1, s, 5)};
    tj_graph *g = trace(fn_inplace_on_input, in, 2, NULL);
    tj_plan *p;
    tj_plan_statistics sp = compile_with(g, (tj_compile_options){0}, &p);
    cr_expect_eq(sp.n_dead, 0);
    cr_expect_eq(sp.n_kernels, 3);
    float before[4], after[4];
    memcpy(before, tj_tensor_data(in[1]), sizeof before);
    tj_tensor *y;
    cr_assert_eq(tj_plan_run(p, in, 2, &y), TJ_OK, "%s", tj_last_error());
    memcpy(after, tj_tensor_data(in[1]), sizeof after);
    const float *x = tj_tensor_data(in[0]);
    for (int i = 0; i < 4; i++) cr_expect_float_eq(after[i], before[i] + expf(x[i]), 1e-6, "element %d", i);
    tj_plan_free(p);
    tj_graph_free(g);
}

/* max_pool2d through the core table: the decomposed indices (eq, where,
 * gather, ...) feed nothing in a forward pass and are never computed. */
static tj_status fn_pool(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t k[2] = {2, 2}, st[2] = {2, 2}, pad[2] = {0, 0}, dil[2] = {1, 1};
    out[0] = tj_max_pool2d(in[0], k, st, pad, dil, false);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(passes, decomposed_max_pool_forward_skips_the_indices)
{
    int64_t s[4] = {2, 3, 6, 6};
    tj_tensor *x = test_random_f32(4, s, 6);
    tj_decomp_table *core = tj_core_decompositions();
    cr_assert_not_null(core);
    tj_plan_statistics sp, sq;
    check_pass(fn_pool, &x, 1, core, keep_dead, &sp, &sq);
    tj_decomp_table_free(core);
    cr_expect_gt(sp.n_dead, 5, "the index chain is dead, got %d dead nodes", sp.n_dead);
    cr_expect_lt(sp.n_kernels, sq.n_kernels);
}

/* ---- identity elimination ---- */

/* x * full([], 1), x * 1 (Scalar), x / ones[1, 4]: three aliases of x */
static tj_status fn_identities(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t none[1] = {0}, row[2] = {1, 4};
    tj_tensor *a = tj_mul(in[0], tj_full(none, 0, tj_v_float(1.0), TJ_FLOAT32));
    tj_tensor *b = tj_mul_scalar(a, tj_v_int(1));
    tj_tensor *c = tj_div(b, tj_full(row, 2, tj_v_float(1.0), TJ_FLOAT32));
    out[0] = tj_neg(c);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_tensor *special_values(void)
{
    int64_t s[2] = {3, 4};
    const float v[12] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-45f, -3.5f, 1e38f, 2.0f, -1.0f, 0.25f};
    return test_f32(2, s, v);
}

Test(passes, multiplications_and_divisions_by_one_become_aliases)
{
    tj_tensor *x = special_values();
    tj_plan_statistics sp, sq;
    /* without: each call its own kernel (no loop fusion either) */
    check_pass(fn_identities, &x, 1, NULL,
               (tj_compile_options){.no_identity_elimination = true, .no_pointwise_fusion = true}, &sp, &sq);
    cr_expect_eq(sp.n_identities, 3);
    cr_expect_eq(sp.n_kernels, 1, "only neg runs, got %d kernels", sp.n_kernels);
    cr_expect_eq(sq.n_identities, 0);
    cr_expect_eq(sq.n_kernels, 4);
}

/* Multiplications that are not the identity on x's type and shape, and one
 * whose result is an output. */
static tj_status fn_not_identities(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t grid[2] = {2, 4};
    tj_tensor *wider = tj_mul(in[1], tj_full(grid, 2, tj_v_float(1.0), TJ_FLOAT32)); /* [4] -> [2, 4] */
    tj_tensor *twice = tj_mul_scalar(in[0], tj_v_float(2.0));
    tj_tensor *as_float = tj_mul_scalar(in[2], tj_v_float(1.0)); /* int64 -> float32 */
    out[0] = tj_add(tj_add(wider, twice), as_float);
    out[1] = tj_mul_scalar(in[0], tj_v_int(1)); /* an output keeps its own tensor */
    *n_out = 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

Test(passes, keeps_products_that_change_type_shape_or_value_and_outputs)
{
    int64_t s2[2] = {2, 4}, s1[1] = {4};
    const int64_t iv[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    tj_tensor *in[3] = {test_random_f32(2, s2, 7), test_random_f32(1, s1, 8), test_i64(2, s2, iv)};
    tj_graph *g = trace(fn_not_identities, in, 3, NULL);
    tj_plan *p;
    tj_plan_statistics sp = compile_with(g, (tj_compile_options){0}, &p);
    cr_expect_eq(sp.n_identities, 0);
    tj_tensor *got[2], *want[2];
    cr_assert_eq(tj_graph_run(g, in, 3, want), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, in, 3, got), TJ_OK, "%s", tj_last_error());
    expect_same(got[0], want[0], "sum");
    expect_same(got[1], want[1], "output x * 1");
    cr_expect_neq(tj_tensor_data(got[1]), tj_tensor_data(in[0]), "the output is a tensor of its own");
    tj_plan_free(p);
    tj_graph_free(g);
}

/* with an in-place call in the plan, an alias could be written through */
static tj_status fn_identity_and_inplace(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *a = tj_mul_scalar(in[0], tj_v_int(1));
    tj_add_(in[0], in[0], tj_v_int(1));
    out[0] = tj_neg(a);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(passes, no_aliases_in_a_plan_that_writes_in_place)
{
    int64_t s[1] = {4};
    const float v[4] = {1, 2, 3, 4};
    tj_tensor *x = test_f32(1, s, v);
    tj_graph *g = trace(fn_identity_and_inplace, &x, 1, NULL);
    tj_plan *p;
    tj_plan_statistics sp = compile_with(g, (tj_compile_options){0}, &p);
    cr_expect_eq(sp.n_identities, 0);
    memcpy(tj_tensor_data(x), v, sizeof v); /* tracing ran add_ on it */
    tj_tensor *y;
    cr_assert_eq(tj_plan_run(p, &x, 1, &y), TJ_OK, "%s", tj_last_error());
    const double want[4] = {-1, -2, -3, -4}; /* a was taken before x doubled */
    test_expect_close(y, want, 4, 0, 0);
    tj_plan_free(p);
    tj_graph_free(g);
}

/* an alias of an input follows the strides the input has at run time */
static tj_status fn_input_identity(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_neg(tj_mul_scalar(in[0], tj_v_float(1.0)));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(passes, an_alias_of_an_input_follows_its_run_time_strides)
{
    int64_t s[2] = {3, 4}, st[2] = {4, 3};
    tj_tensor *x = test_random_f32(2, s, 9);
    tj_graph *g = trace(fn_input_identity, &x, 1, NULL);
    tj_plan *p;
    tj_plan_statistics sp = compile_with(g, (tj_compile_options){0}, &p);
    cr_expect_eq(sp.n_identities, 1);
    tj_tensor *xt = tj_t(test_random_f32(2, st, 10)); /* [3, 4], strides (1, 3) */
    for (int run = 0; run < 2; run++) {                /* restrided, then compiled strides again */
        tj_tensor *in = run == 0 ? xt : x, *got, *want;
        cr_assert_eq(tj_graph_run(g, &in, 1, &want), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_plan_run(p, &in, 1, &got), TJ_OK, "%s", tj_last_error());
        expect_same(got, want, run == 0 ? "transposed input" : "contiguous input");
    }
    tj_plan_free(p);
    tj_graph_free(g);
}

/* ---- identity elimination where layout matters ---- */

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

/* Traces fn on trace_in; runs the interpreter, the plan compiled without
 * the passes and the default plan on run_in. */
static void run_both(tj_trace_fn fn, tj_tensor *trace_in, tj_tensor *run_in, tj_tensor **want, tj_tensor **got,
                     tj_tensor **got_off)
{
    tj_graph *g = trace(fn, &trace_in, 1, NULL);
    tj_plan *p, *q;
    compile_with(g, (tj_compile_options){0}, &p);
    compile_with(g, (tj_compile_options){.no_identity_elimination = true, .no_dead_code = true}, &q);
    cr_assert_eq(tj_graph_run(g, &run_in, 1, want), TJ_OK, "interpreter: %s", tj_last_error());
    cr_assert_eq(tj_plan_run(q, &run_in, 1, got_off), TJ_OK, "plan without the pass: %s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, &run_in, 1, got), TJ_OK, "plan with identity elimination: %s", tj_last_error());
    tj_plan_free(p);
    tj_plan_free(q);
    tj_graph_free(g);
}

Test(passes, identity_of_a_restrided_input_read_by_a_view_runs_like_the_interpreter)
{
    int64_t s[2] = {3, 4}, st[2] = {4, 3};
    tj_tensor *x = test_random_f32(2, s, 1);
    tj_tensor *xt = tj_t(test_random_f32(2, st, 2)); /* [3, 4] with strides [1, 3] */
    tj_tensor *want, *got, *got_off;
    run_both(fn_mul_one_view, x, xt, &want, &got, &got_off);
    expect_same(got_off, want, "without the pass");
    expect_same(got, want, "with the pass");
}

Test(passes, output_view_of_an_identity_does_not_share_the_input_storage)
{
    int64_t s[2] = {3, 4};
    tj_tensor *x = test_random_f32(2, s, 1);
    tj_tensor *want, *got, *got_off;
    run_both(fn_mul_one_t, x, x, &want, &got, &got_off);
    expect_same(got, want, "with the pass");
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

Test(passes, identity_of_a_written_back_input_reads_the_old_value)
{
    int64_t s[1] = {6};
    tj_tensor *in[2] = {test_random_f32(1, s, 1), test_random_f32(1, s, 2)};
    tj_graph *g = trace(fn_read_after_update, in, 2, NULL);
    tj_pass_functionalize(g);
    tj_plan *p, *q;
    tj_plan_statistics sp = compile_with(g, (tj_compile_options){0}, &p);
    compile_with(g, (tj_compile_options){.no_identity_elimination = true}, &q);
    cr_expect_eq(sp.n_identities, 1, "p * 1, read by exp, elementwise");
    tj_tensor *results[3][2];
    for (int r = 0; r < 3; r++) {
        tj_tensor *x[2] = {tj_contiguous(tj_mul_scalar(in[0], tj_v_int(1))), in[1]};
        tj_status st = r == 0 ? tj_graph_run(g, x, 2, results[r]) : tj_plan_run(r == 1 ? q : p, x, 2, results[r]);
        cr_assert_eq(st, TJ_OK, "%s", tj_last_error());
        results[r][1] = x[0];
    }
    for (int r = 1; r < 3; r++) {
        expect_same(results[r][0], results[0][0], "exp(p * 1)");
        expect_same(results[r][1], results[0][1], "written-back p");
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

Test(passes, identities_of_inputs_follow_run_time_strides_and_offsets_across_runs_and_contexts)
{
    int64_t s[2] = {3, 4}, st[2] = {4, 3}, sw[2] = {4, 2}, big[1] = {40};
    tj_tensor *in[2] = {test_random_f32(2, s, 1), test_random_f32(2, sw, 2)};
    tj_graph *g = trace(fn_mm_of_identity, in, 2, NULL);
    tj_plan *p;
    tj_plan_statistics sp = compile_with(g, (tj_compile_options){0}, &p);
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
        expect_same(got[0], want[0], "(x * ones) @ w");
        expect_same(got[1], want[1], "exp(x.t() * 1)");
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

Test(passes, mm_of_an_identity_of_a_transposed_view_matches_the_interpreter_bit_for_bit)
{
    int64_t s[2] = {4, 3}, sw[2] = {4, 2};
    tj_tensor *in[2] = {test_random_f32(2, s, 5), test_random_f32(2, sw, 6)};
    tj_plan_statistics sp, sq;
    check_pass(fn_mm_of_transposed_identity, in, 2, NULL, (tj_compile_options){.no_identity_elimination = true},
               &sp, &sq);
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

Test(passes, an_intermediate_read_through_a_view_stays_a_tensor)
{
    int64_t s[2] = {3, 4};
    tj_tensor *x = test_random_f32(2, s, 7);
    tj_plan_statistics sp, sq;
    check_pass(fn_view_of_intermediate_identity, &x, 1, NULL,
               (tj_compile_options){.no_identity_elimination = true, .no_dead_code = true}, &sp, &sq);
}

/* ---- common subexpressions (tracer/common.c) ---- */

static const tj_compile_options keep_common = {.no_common_subexpressions = true};

/* x @ x^T twice, each read through its own view (the views merge too,
 * link by link), and a product of the second with itself: one mm */
static tj_status fn_twice(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t flat[1] = {9};
    tj_tensor *xt = tj_t(in[0]);
    tj_tensor *a = tj_view(tj_mm(in[0], xt), flat, 1), *b = tj_mm(in[0], xt);
    tj_tensor *s = tj_add(a, tj_view(b, flat, 1));
    out[0] = tj_sub(s, tj_view(tj_mul(b, b), flat, 1));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(passes, identical_calls_and_their_views_merge)
{
    int64_t s[2] = {3, 4};
    tj_tensor *x = test_random_f32(2, s, 8);
    tj_plan_statistics sp, sq;
    check_pass(fn_twice, &x, 1, NULL, keep_common, &sp, &sq);
    cr_expect_eq(sp.n_common, 2, "the second mm and its view, got %d", sp.n_common);
    cr_expect_eq(sq.n_common, 0);
    cr_expect_lt(sp.n_kernels, sq.n_kernels, "one mm fewer: %d vs %d kernels", sp.n_kernels, sq.n_kernels);
}

/* Two draws of the same shape are two draws; two copies of one view stay
 * two copies (a product may read each from its source, fuse_gather.c) and
 * two negations twenty calls apart two negations (recomputed inside a fused
 * step rather than kept alive in between); a product computed twice as two
 * outputs is still computed as the second output. */
static tj_status fn_not_merged(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t s[2] = {3, 4};
    int64_t swap[2] = {1, 0};
    tj_tensor *xt = tj_permute(in[0], swap, 2);
    tj_tensor *r = tj_add(tj_rand(s, 2, TJ_FLOAT32), tj_rand(s, 2, TJ_FLOAT32));
    tj_tensor *c = tj_add(tj_clone(xt), tj_clone(xt));
    tj_tensor *e = tj_neg(in[0]);
    for (int k = 0; k < 20; k++) e = tj_sin(e);
    e = tj_add(e, tj_neg(in[0]));
    out[0] = tj_add(tj_add(r, tj_permute(c, swap, 2)), e);
    out[1] = tj_mm(in[0], xt);
    out[2] = tj_mm(in[0], xt);
    *n_out = 3;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(passes, draws_and_copies_do_not_merge_and_a_merged_output_stays)
{
    int64_t s[2] = {3, 4};
    tj_tensor *x = test_random_f32(2, s, 9);
    tj_graph *g = trace(fn_not_merged, &x, 1, NULL);
    tj_plan *p, *q;
    tj_plan_statistics sp = compile_with(g, (tj_compile_options){0}, &p);
    tj_plan_statistics sq = compile_with(g, keep_common, &q);
    cr_expect_eq(sp.n_common, 1, "the second mm only, got %d", sp.n_common);
    cr_expect_eq(sp.n_kernels, sq.n_kernels, "the second mm is an output: still computed");
    for (int k = 0; k < 3; k++) {
        tj_tensor *want[3], *got[3];
        tj_manual_seed(11);
        cr_assert_eq(tj_graph_run(g, &x, 1, want), TJ_OK, "%s", tj_last_error());
        tj_manual_seed(11);
        cr_assert_eq(tj_plan_run(p, &x, 1, got), TJ_OK, "%s", tj_last_error());
        test_expect_same_bits(got[k], want[k], "output vs interpreter");
    }
    tj_plan_free(p);
    tj_plan_free(q);
    tj_graph_free(g);
}

/* neg(x) twice, side by side: merged (one pass fewer in their fused step) */
static tj_status fn_near_negations(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_mul(tj_neg(in[0]), tj_exp(tj_neg(in[0])));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(passes, identical_elementwise_calls_a_few_nodes_apart_merge)
{
    int64_t s[2] = {3, 4};
    tj_tensor *x = test_random_f32(2, s, 12);
    tj_plan_statistics sp, sq;
    check_pass(fn_near_negations, &x, 1, NULL, keep_common, &sp, &sq);
    cr_expect_eq(sp.n_common, 1, "the second neg, got %d", sp.n_common);
    cr_expect_eq(sq.n_common, 0);
    cr_expect_eq(sp.n_fused_pointwise_nodes, 3, "neg, exp, mul in one step, got %d", sp.n_fused_pointwise_nodes);
}

/* exp(x) twice around an update of another input: the exps are the same
 * value here, but nothing merges in a plan that writes in place (a read
 * after a write is not the read before it; the check is per plan) */
static tj_status fn_exp_around_update(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *a = tj_exp(in[0]);
    tj_add_scalar_(in[1], tj_v_int(1), tj_v_int(1));
    out[0] = tj_sub(tj_exp(in[0]), a);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(passes, nothing_merges_in_a_plan_that_writes_in_place)
{
    int64_t s[1] = {4};
    tj_tensor *in[2] = {test_random_f32(1, s, 10), test_random_f32(1, s, 11)};
    tj_tensor *traced[2] = {tj_clone(in[0]), tj_clone(in[1])};
    tj_graph *g = trace(fn_exp_around_update, traced, 2, NULL);
    tj_plan *p;
    tj_plan_statistics sp = compile_with(g, (tj_compile_options){0}, &p);
    cr_expect_eq(sp.n_common, 0);
    float before[4];
    memcpy(before, tj_tensor_data(in[1]), sizeof before);
    tj_tensor *y;
    cr_assert_eq(tj_plan_run(p, in, 2, &y), TJ_OK, "%s", tj_last_error());
    const float *yv = tj_tensor_data(tj_contiguous(y)), *after = tj_tensor_data(in[1]);
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(yv[i], 0.0f, "element %d", i);
        cr_expect_eq(after[i], before[i] + 1.0f, "element %d", i);
    }
    tj_plan_free(p);
    tj_graph_free(g);
}
