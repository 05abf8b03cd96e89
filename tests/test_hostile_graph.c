/* Hostile inputs to the public API (issue 9), continued (see test_hostile.c):
 * graph.h, decomp.h and plan.h, one suite each (autograd.h, optim.h and
 * library.h: test_hostile_train.c). Cases other tests cover are not
 * repeated (test_tracer.c: parse errors for unknown operators, undefined
 * values and arities, the cycle of two C decompositions; test_replay.c:
 * plans run with wrong input shapes, dtypes and counts, NULL plans). Each
 * call must fail with the status and a message naming the function and
 * what was wrong, change nothing else and leak nothing. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alloc_counter.h"
#include "hostile.h"

TestSuite(hostile_graph, .init = count_allocations);
TestSuite(hostile_decomp, .init = count_allocations);
TestSuite(hostile_plan, .init = count_allocations);

static const char *NEG_TEXT = "graph(%x : f32[3]):\n    %neg = aten.neg.default(%x)\n    return (%neg,)\n";

/* ================================ graph.h ================================ */

static tj_status fn_neg(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_neg(in[0]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* ctx: the count to report; the outputs are left NULL. */
static tj_status fn_bad_count(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)in, (void)n;
    *n_out = *(int *)ctx;
    if (*n_out > 0) out[0] = NULL;
    return TJ_OK;
}

static tj_status fn_fails(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n, (void)n_out;
    out[0] = tj_mm(in[0], in[0]); /* 1-d: refused */
    return tj_last_status();
}

Test(hostile_graph, make_fx_refuses_bad_inputs_and_bad_results_of_the_traced_function)
{
    int64_t base = live_allocations();
    tj_tensor *x = ramp(1, I64(3), 0);
    cr_expect_null(tj_make_fx(NULL, NULL, &x, 1, NULL, TJ_TRACE_REAL));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_make_fx");
    cr_expect_null(tj_make_fx(fn_neg, NULL, NULL, 1, NULL, TJ_TRACE_REAL));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_make_fx");
    cr_expect_null(tj_make_fx(fn_neg, NULL, &x, -1, NULL, TJ_TRACE_REAL));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_make_fx");
    cr_expect_null(tj_make_fx(fn_neg, NULL, (tj_tensor *[]){NULL}, 1, NULL, TJ_TRACE_REAL));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_make_fx", "input 0 is NULL");
    int counts[] = {-1, TJ_MAX_GRAPH_OUTPUTS + 1, 1};
    const char *needles[] = {"returned -1 outputs", "returned 1025 outputs", "output 0 of the traced function is NULL"};
    for (int i = 0; i < 3; i++) {
        cr_expect_null(tj_make_fx(fn_bad_count, &counts[i], &x, 1, NULL, TJ_TRACE_FAKE));
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_make_fx", needles[i]);
    }
    cr_expect_null(tj_make_fx(fn_fails, NULL, &x, 1, NULL, TJ_TRACE_REAL));
    EXPECT_ERROR(TJ_ERR_SHAPE, "aten::mm");
    cr_expect_eq(tj_mode_depth(), 0, "a failed trace left its mode pushed");
    expect_values(x, (const float[]){0, 1, 2}, 3);
    tj_tensor_release(x);
    cr_expect_eq(live_allocations(), base);
}

/* ctx: a counter mode that the traced function pushes and leaves pushed. */
static tj_status fn_leaves_mode_pushed(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_status st = tj_mode_push(tj_counter_mode_base(ctx));
    if (st != TJ_OK) return st;
    out[0] = tj_neg(in[0]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(hostile_graph, make_fx_refuses_a_function_that_leaves_a_mode_pushed_and_restores_the_stack)
{
    int64_t base = live_allocations();
    tj_tensor *x = ramp(1, I64(3), 0);
    for (int mode = TJ_TRACE_REAL; mode <= TJ_TRACE_FAKE; mode++) {
        tj_counter_mode *c = tj_counter_mode_new();
        cr_assert_not_null(c);
        cr_expect_null(tj_make_fx(fn_leaves_mode_pushed, c, &x, 1, NULL, (tj_tracing_mode)mode));
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_make_fx", "left 1 mode");
        /* before the fix the tracer's mode (on make_fx's stack frame) stayed
         * pushed under the counter: the next call ran a dangling handler */
        cr_expect_eq(tj_mode_depth(), 0, "the trace left %d modes pushed", tj_mode_depth());
        tj_tensor *y = tj_neg(x);
        cr_expect_not_null(y, "%s", tj_last_error());
        if (y) expect_values(y, (const float[]){-0.0f, -1, -2}, 3);
        tj_tensor_release(y);
        tj_counter_mode_free(c);
    }
    expect_values(x, (const float[]){0, 1, 2}, 3);
    tj_tensor_release(x);
    cr_expect_eq(live_allocations(), base);
}

/* ctx: the caller's scope, which the traced function wrongly ends. */
static tj_status fn_ends_outer_scope(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_scope_end(ctx);
    tj_status refused = tj_last_status();
    out[0] = tj_neg(in[0]);
    *n_out = 1;
    return out[0] ? refused : tj_last_status();
}

Test(hostile_graph, a_traced_function_cannot_end_a_scope_opened_outside_it)
{
    int64_t base = live_allocations();
    for (int mode = TJ_TRACE_REAL; mode <= TJ_TRACE_FAKE; mode++) {
        tj_scope *outer = tj_scope_begin();
        tj_tensor *x = ramp(1, I64(3), 0); /* owned by outer */
        /* before the fix, ending `outer` also ended make_fx's own scope:
         * in fake mode the trace then read its released fake inputs */
        cr_expect_null(tj_make_fx(fn_ends_outer_scope, outer, &x, 1, NULL, (tj_tracing_mode)mode));
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_scope_end", "opened outside");
        expect_values(x, (const float[]){0, 1, 2}, 3); /* outer still owns it */
        tj_scope_end(outer);
    }
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_graph, inspection_with_null_graphs_or_indices_out_of_range_is_harmless)
{
    int64_t base = live_allocations();
    cr_expect_eq(tj_graph_num_nodes(NULL), 0);
    cr_expect_eq(tj_graph_num_inputs(NULL), 0);
    cr_expect_eq(tj_graph_num_outputs(NULL), 0);
    cr_expect_eq(tj_graph_num_calls(NULL), 0);
    cr_expect_eq(tj_graph_count_op(NULL, tj_op_find("aten::neg")), 0);
    cr_expect_eq(tj_graph_output_writeback(NULL, 0), -1);
    tj_graph_free(NULL);
    tj_graph *g = tj_graph_parse(NEG_TEXT);
    cr_assert_not_null(g, "%s", tj_last_error());
    int bad[] = {-1, tj_graph_num_nodes(g), INT32_MAX};
    for (int i = 0; i < 3; i++) {
        cr_expect_null(tj_graph_node_op(g, bad[i]));
        cr_expect_str_eq(tj_graph_node_name(g, bad[i]), "");
        cr_expect_eq(tj_graph_node_kind(g, bad[i]), TJ_NODE_OUTPUT);
    }
    cr_expect_eq(tj_graph_node_kind(NULL, 0), TJ_NODE_OUTPUT);
    cr_expect_null(tj_graph_node_op(NULL, 0));
    cr_expect_str_eq(tj_graph_node_name(NULL, 0), "");
    cr_expect_eq(tj_graph_output_writeback(g, -1), -1);
    cr_expect_eq(tj_graph_output_writeback(g, 1), -1);
    cr_expect_eq(tj_graph_count_op(g, NULL), 0);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_graph, input_names_must_be_identifiers_unique_and_in_range)
{
    int64_t base = live_allocations();
    tj_graph *g = tj_graph_parse("graph(%x : f32[3], %y : f32[3]):\n    %add = aten.add.Tensor(%x, %y)\n"
                                 "    return (%add,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    char *before = tj_graph_to_string(g);
    const char *names[] = {"", "1x", "a-b", "a b", "%y", "add", "y"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        cr_expect_neq(tj_graph_set_input_name(g, 0, names[i]), TJ_OK, "'%s' accepted", names[i]);
        cr_expect(strstr(tj_last_error(), "tj_graph_set_input_name"), "%s", tj_last_error());
        tj_clear_error();
    }
    cr_expect_neq(tj_graph_set_input_name(g, 2, "z"), TJ_OK);
    EXPECT_ERROR(TJ_ERR_INDEX, "tj_graph_set_input_name");
    cr_expect_neq(tj_graph_set_input_name(g, -1, "z"), TJ_OK);
    EXPECT_ERROR(TJ_ERR_INDEX, "tj_graph_set_input_name");
    cr_expect_eq(tj_graph_set_input_name(NULL, 0, "z"), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_graph_set_input_name");
    cr_expect_eq(tj_graph_set_input_name(g, 0, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_graph_set_input_name");
    char *after = tj_graph_to_string(g);
    cr_expect_str_eq(after, before, "a refused name changed the graph");
    free(before);
    free(after);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_graph, text_with_wrong_types_or_impossible_shapes_is_a_parse_error)
{
    int64_t base = live_allocations();
    static const struct {
        const char *text, *needle;
    } bad[] = {
        /* a tensor where an int list goes, a string where a tensor goes */
        {"graph(%x : f32[2, 3]):\n    %s = aten.sum.dim_IntList(%x, %x)\n    return (%s,)\n", "dim"},
        {"graph(%x : f32[2, 3]):\n    %n = aten.neg.default('x')\n    return (%n,)\n", "self"},
        /* shapes the operator's shape function refuses */
        {"graph(%x : f32[2, 3]):\n    %m = aten.mm.default(%x, %x)\n    return (%m,)\n", "aten::mm"},
        {"graph(%x : f32[2, 3], %y : f32[4]):\n    %a = aten.add.Tensor(%x, %y)\n    return (%a,)\n", "broadcast"},
        {"graph(%x : f32[2, 3]):\n    %s = aten.sum.dim_IntList(%x, [5])\n    return (%s,)\n", "out of range"},
        /* types that cannot exist */
        {"graph(%x : f32[4294967296, 4294967296]):\n    return (%x,)\n",
         "line 1, column 39: this type: element count of shape [4294967296, 4294967296] overflows"},
        {"graph(%x : f32[1, 1, 1, 1, 1, 1, 1, 1, 1]):\n    return (%x,)\n", "line 1"},
        /* outputs and write-backs naming nothing */
        {"graph(%x : f32[3]):\n    return (%nope,)\n", "nope"},
        {"graph(%x : f32[3]):\n    %n = aten.neg.default(%x)\n    return (%n,) writeback {0: 5}\n", "line 3"},
        /* write-backs tj_compile refuses (tj_graph_run copy_'d a broadcast sum into %x, or both outputs) */
        {"graph(%x : f32[3]):\n    %n = aten.sum.default(%x)\n    return (%n,) writeback {0: 0}\n",
         "line 3, column 34: writeback: output 0 (%n, float32[]) cannot be written back to input 0 (%x, float32[3])"},
        {"graph(%x : f32[3]):\n    %n = aten._to_copy.default(%x, dtype=torch.float64)\n    return (%n,) writeback {0: 0}\n",
         "output 0 (%n, float64[3]) cannot be written back to input 0 (%x, float32[3])"},
        {"graph(%x : f32[3]):\n    %n = aten.neg.default(%x)\n    return (%n, %n) writeback {0: 0, 1: 0}\n",
         "writeback: input 0 is written back by two outputs (0 and 1)"},
        {"graph(%x : f32[3]):\n    %n = aten.neg.default(%x)\n    %n = aten.neg.default(%x)\n    return (%n,)\n",
         "defined twice"},
        {"graph(%x : f32[3]):\n    %n = aten.neg.default(%x)\n    return (%n,)\n    %m = aten.neg.default(%x)\n", "line 4"},
        /* Python's "positional argument follows keyword argument": %x went to 'other' */
        {"graph(%x : f32[3]):\n    %a = aten.add.Tensor(%x, alpha=2, %x)\n    return (%a,)\n",
         "line 2, column 39: a positional argument after a keyword argument"},
        /* read as the values of a constant %return, "which is not defined" */
        {"graph(%x : f32[3]):\n    return (%x,)\n    return (%x,)\n", "line 3, column 5: a second 'return' (a graph has one)"},
        /* constants with too few or too many values, inline or after 'return' */
        {"graph():\n    %c : f32[2, 2] = constant([1.0, 2.0, 3.0])\n    return (%c,)\n",
         "line 2, column 45: a constant of shape [2, 2] takes 4 values, the list ends after 3"},
        {"graph():\n    %c : i64[2] = constant([])\n    return (%c,)\n",
         "a constant of shape [2] takes 2 values, the list ends after 0"},
        {"graph():\n    %c : b8[1] = constant([True, False])\n    return (%c,)\n",
         "a constant of shape [1] takes 1 value, the list goes on after it"},
        {"graph(%x : f32[3]):\n    %a, %b = aten.neg.default(%x)\n    return (%a,)\n",
         "line 2, column 34: aten::neg returns 1 value, 2 names given"},
        {"graph():\n    %c : f32[20] = constant(c)\n    return (%c,)\nc = [1.0, 2.0]\n",
         "line 4, column 14: a constant of shape [20] takes 20 values, the list ends after 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tj_graph *g = tj_graph_parse(bad[i].text);
        cr_expect_null(g, "case %zu parsed", i);
        tj_graph_free(g);
        cr_expect_neq(tj_last_status(), TJ_OK, "case %zu", i);
        cr_expect(strstr(tj_last_error(), "tj_graph_parse"), "case %zu: %s", i, tj_last_error());
        cr_expect(strstr(tj_last_error(), bad[i].needle), "case %zu: '%s' lacks '%s'", i, tj_last_error(), bad[i].needle);
        tj_clear_error();
    }
    cr_expect_null(tj_graph_parse(NULL));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_graph_parse");
    cr_expect_eq(live_allocations(), base);
}

/* A placeholder's geometry suffix (" offset N bound \"reason\"", as
 * tj_graph_print writes a bound input) malformed: a parse error at its
 * column, naming what was wrong, and nothing leaked. */
Test(hostile_graph, a_malformed_offset_or_bound_is_a_parse_error_at_its_column)
{
    int64_t base = live_allocations();
    static const struct {
        const char *text, *needle;
    } bad[] = {
        {"graph(%x : f32[2] offset -1):\n    return (%x,)\n", "line 1, column 28: offset: a negative storage offset"},
        {"graph(%x : f32[2] offset one):\n    return (%x,)\n", "line 1, column 26: offset: expected the storage offset"},
        {"graph(%x : f32[2] offset 99999999999999999999):\n    return (%x,)\n", "offset: expected the storage offset"},
        {"graph(%x : f32[2] bound as_strided):\n    return (%x,)\n",
         "line 1, column 25: bound: expected its reason in double quotes"},
        {"graph(%x : f32[2] bound \"as_strided):\n    return (%x,)\n", "line 1, column 38: bound: unterminated reason"},
        {"graph(%x : f32[2] bound \"as_strided", "bound: unterminated reason"},
        {"graph(%x : f32[2] bound \"\"):\n    return (%x,)\n", "line 1, column 26: bound: an empty reason"},
        {"graph(%x : f32[2] bound \"as\tstrided\"):\n    return (%x,)\n", "column 28: bound: the reason holds printable ASCII"},
        {"graph(%x : f32[2] bound \"as\xc3\xa9\"):\n    return (%x,)\n", "bound: the reason holds printable ASCII"},
        /* in this order only, and on placeholders only */
        {"graph(%x : f32[2] bound \"r\" offset 1):\n    return (%x,)\n", "line 1, column 29: expected ',' or ')'"},
        {"graph(%x : f32[2]):\n    %c : f32[2] offset 1 = constant([1.0, 2.0])\n    return (%c,)\n",
         "line 2, column 17: expected '='"},
        /* no tensor has them (eager as_strided refuses them): a negative
         * stride, or a last element past INT64_MAX (the spans computed from
         * it overflowed; the plan ran x.view(6) of a transposed input read
         * through strides {-2, -1}) */
        {"graph(%x : f32[3, 2]{-2, -1} offset 5):\n    return (%x,)\n", "line 1, column 24: negative stride"},
        {"graph(%x : f32[3, 2]{9223372036854775807, 1}):\n    return (%x,)\n",
         "line 1, column 45: the placeholder's strides and offset reach an element beyond INT64_MAX"},
        {"graph(%x : f32[3, 2] offset 9223372036854775802):\n    return (%x,)\n", "beyond INT64_MAX"},
        {"graph(%x : f32[1] offset 9223372036854775807):\n    return (%x,)\n", "beyond INT64_MAX"},
        {"graph(%x : f32[] offset 9223372036854775807):\n    return (%x,)\n", "beyond INT64_MAX"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tj_graph *g = tj_graph_parse(bad[i].text);
        cr_expect_null(g, "case %zu parsed", i);
        tj_graph_free(g);
        cr_expect_eq(tj_last_status(), TJ_ERR_PARSE, "case %zu: %s", i, tj_last_error());
        cr_expect(strstr(tj_last_error(), bad[i].needle), "case %zu: '%s' lacks '%s'", i, tj_last_error(), bad[i].needle);
        tj_clear_error();
    }
    /* the largest reachable element, and an empty tensor at any offset, are fine */
    static const char *good[] = {"graph(%x : f32[3, 2] offset 9223372036854775801):\n    return (%x,)\n",
                                 "graph(%x : f32[0, 2]{9223372036854775807, 1} offset 9223372036854775807):\n"
                                 "    return (%x,)\n"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        tj_graph *g = tj_graph_parse(good[i]);
        cr_expect_not_null(g, "good case %zu: %s", i, tj_last_error());
        tj_graph_free(g);
    }
    cr_expect_eq(live_allocations(), base);
}

/* Parses a bound graph and compiles it: TJ_OK, or the status of the step
 * that failed. */
static tj_status parse_and_compile_bound(void)
{
    tj_graph *g = tj_graph_parse("graph(%w : f32[2, 3]{4, 1} offset 1 bound \"aten::as_strided's gradient\"):\n"
                                 "    %neg = aten.neg.default(%w)\n    return (%neg,)\n");
    if (!g) return tj_last_status();
    tj_plan *p = tj_compile(g, NULL);
    tj_graph_free(g);
    if (!p) return tj_last_status();
    tj_plan_free(p);
    return TJ_OK;
}

/* Every allocation of parsing a bound placeholder and compiling it (its
 * reason copied into the graph, then the plan) failed in turn: out of
 * memory reported or recovered from, nothing leaked. */
Test(hostile_graph, allocation_failures_parsing_and_compiling_a_bound_graph_fail_cleanly)
{
    /* once first: what is made once per process is not counted */
    cr_assert_eq(parse_and_compile_bound(), TJ_OK, "%s", tj_last_error());
    int64_t base = live_allocations();
    tj_debug_fail_allocation(0);
    cr_assert_eq(parse_and_compile_bound(), TJ_OK, "%s", tj_last_error());
    uint64_t total = tj_debug_fail_allocation(0);
    cr_assert_gt(total, 0);
    uint64_t failed = 0;
    for (uint64_t n = 1; n <= total; n++) {
        tj_debug_fail_allocation(n);
        tj_status st = parse_and_compile_bound();
        tj_debug_fail_allocation(0);
        failed += st != TJ_OK;
        cr_expect(st == TJ_OK || st == TJ_ERR_OUT_OF_MEMORY, "allocation %llu: %s", (unsigned long long)n, tj_last_error());
        cr_expect_eq(live_allocations(), base, "allocation %llu leaked", (unsigned long long)n);
    }
    /* one is recovered from, bound or not: the memory planner's map of
     * which thread wrote a block (memory_plan.c, place) falls back to plain
     * best fit */
    cr_expect_geq(failed + 1, total, "%llu of %llu allocation failures reported", (unsigned long long)failed,
                 (unsigned long long)total);
}

Test(hostile_graph, printing_running_and_passes_refuse_null_arguments)
{
    int64_t base = live_allocations();
    tj_graph *g = tj_graph_parse(NEG_TEXT);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_print(NULL, stdout), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_graph_print");
    cr_expect_eq(tj_graph_print(g, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_graph_print");
    cr_expect_null(tj_graph_to_string(NULL));
    tj_clear_error();
    cr_expect_eq(tj_graph_write_dot(g, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_graph_write_dot");
    cr_expect_eq(tj_graph_write_json(NULL, stdout), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_graph_write_json");
    tj_tensor *x = ramp(1, I64(3), 1), *out[1] = {NULL};
    cr_expect_eq(tj_graph_run(g, &x, 1, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_graph_run");
    cr_expect_eq(tj_graph_run(g, NULL, 1, out), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_graph_run");
    cr_expect_eq(tj_graph_run(g, (tj_tensor *[]){NULL}, 1, out), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_graph_run", "input 0");
    cr_expect_eq(tj_graph_run(g, &x, -1, out), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_graph_run", "got -1");
    tj_graph_pass passes[2] = {tj_pass_dead_code, NULL};
    cr_expect_eq(tj_run_passes(g, passes, NULL, 2, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_run_passes", "pass 1");
    cr_expect_eq(tj_run_passes(NULL, passes, NULL, 1, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_run_passes");
    cr_expect_eq(tj_run_passes(g, NULL, NULL, 3, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_run_passes");
    tj_graph_pass each[] = {tj_pass_dead_code, tj_pass_cse, tj_pass_noop, tj_pass_functionalize};
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(each[i](NULL), -1);
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "NULL graph");
    }
    cr_expect_eq(tj_graph_num_calls(g), 1, "a refused call changed the graph");
    expect_values(x, (const float[]){1, 2, 3}, 3);
    tj_tensor_release(x);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

/* =============================== decomp.h =============================== */

Test(hostile_decomp, tables_refuse_null_arguments_and_graphs_that_do_not_fit)
{
    int64_t base = live_allocations();
    const tj_op *neg = tj_op_find("aten::neg"), *add = tj_op_find("aten::add.Tensor");
    tj_decomp_table *t = tj_decomp_table_new();
    cr_assert_not_null(t);
    tj_graph *g = tj_graph_parse(NEG_TEXT);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_decomp_table_add_fn(NULL, neg, (tj_decomp_fn)1, "x"), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_decomp_table_add_fn");
    cr_expect_eq(tj_decomp_table_add_fn(t, NULL, (tj_decomp_fn)1, "x"), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_decomp_table_add_fn");
    cr_expect_eq(tj_decomp_table_add_fn(t, neg, NULL, "x"), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_decomp_table_add_fn");
    cr_expect_eq(tj_decomp_table_add_graph(t, neg, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_decomp_table_add_graph");
    /* add takes two tensors and returns one; max.dim returns two */
    tj_graph *two_in = tj_graph_parse("graph(%a : f32[3], %b : f32[3], %c : f32[3]):\n"
                                      "    %s = aten.add.Tensor(%a, %b)\n    return (%s,)\n");
    cr_assert_not_null(two_in, "%s", tj_last_error());
    cr_expect_eq(tj_decomp_table_add_graph(t, add, two_in), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_decomp_table_add_graph", "3 inputs");
    cr_expect_eq(tj_decomp_table_add_graph(t, tj_op_find("aten::max.dim"), g), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_decomp_table_add_graph", "aten::max.dim returns 2 values");
    tj_graph *two_out = tj_graph_parse("graph(%a : f32[3]):\n    %n = aten.neg.default(%a)\n    return (%n, %n)\n");
    cr_assert_not_null(two_out, "%s", tj_last_error());
    cr_expect_eq(tj_decomp_table_add_graph(t, neg, two_out), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::neg returns 1 value, the graph 2"); /* not "1 values" */
    tj_graph_free(two_out);
    cr_expect_eq(tj_decomp_table_size(t), 0, "a refused entry was added");
    cr_expect_eq(tj_decomp_table_merge(t, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_decomp_table_merge");
    cr_expect_eq(tj_decomp_table_print(t, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_decomp_table_print");
    tj_decomp_table_remove(NULL, neg);
    tj_decomp_table_remove(t, NULL);
    cr_expect(!tj_decomp_table_contains(NULL, neg));
    cr_expect_eq(tj_decomp_table_size(NULL), 0);
    cr_expect_eq(tj_register_decomposition(NULL, (tj_decomp_fn)1, "x"), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_register_decomposition");
    cr_expect_eq(tj_register_decomposition(neg, NULL, "x"), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_register_decomposition");
    tj_decomp_table_free(NULL);
    tj_decomp_table_free(t);
    tj_graph_free(two_in);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_decomp, get_decompositions_skips_unknown_names_and_refuses_null_ones)
{
    int64_t base = live_allocations();
    cr_expect_null(tj_get_decompositions(NULL, 2));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_get_decompositions");
    const char *names[] = {NULL, "", "aten::no_such_op", "aten::gelu", "gibberish::::"};
    cr_expect_null(tj_get_decompositions(names, 5));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_get_decompositions");
    tj_decomp_table *t = tj_get_decompositions(names + 1, 4);
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_expect_eq(tj_decomp_table_size(t), 1);
    cr_expect(tj_decomp_table_contains(t, tj_op_find("aten::gelu")));
    tj_decomp_table_free(t);
    t = tj_get_decompositions(names, -4);
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_expect_eq(tj_decomp_table_size(t), 0);
    tj_decomp_table_free(t);
    FILE *devnull = fopen("/dev/null", "w");
    cr_expect_eq(tj_decompositions_missing(names + 1, 4, devnull), 3);
    cr_expect_eq(tj_decompositions_missing(names, 5, devnull), -1);
    cr_expect_eq(tj_decompositions_missing(NULL, 5, devnull), -1);
    fclose(devnull);
    cr_expect_eq(live_allocations(), base);
}

/* A graph entry for neg whose graph calls neg: inlining it reaches neg
 * again. Both make_fx and tj_graph_decompose report the cycle. */
Test(hostile_decomp, a_graph_entry_that_calls_its_own_operator_is_a_cycle)
{
    int64_t base = live_allocations();
    tj_graph *g = tj_graph_parse(NEG_TEXT);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_decomp_table *t = tj_decomp_table_new();
    cr_assert_eq(tj_decomp_table_add_graph(t, tj_op_find("aten::neg"), g), TJ_OK, "%s", tj_last_error());
    tj_tensor *x = ramp(1, I64(3), 1);
    cr_expect_null(tj_make_fx(fn_neg, NULL, &x, 1, t, TJ_TRACE_REAL));
    /* the nested trace's "make_fx: " prefix is not repeated */
    cr_expect_str_eq(tj_last_error(),
                     "make_fx: the decomposition graph of aten::neg: decomposition cycle: aten::neg -> aten::neg");
    EXPECT_ERROR(TJ_ERR_CYCLE, "aten::neg");
    cr_expect_null(tj_graph_decompose(g, t));
    EXPECT_ERROR(TJ_ERR_CYCLE, "aten::neg");
    cr_expect_eq(tj_mode_depth(), 0);
    cr_expect_null(tj_graph_decompose(NULL, t));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_graph_decompose");
    expect_values(x, (const float[]){1, 2, 3}, 3);
    tj_tensor_release(x);
    tj_decomp_table_free(t);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

/* A table entry stands for its operator: a graph traced for other shapes
 * or dtypes fails naming the operator it decomposes (the message named only
 * tj_graph_run's %x), and one whose results have another shape than the
 * operator's (neg of f32[3] as a full([5])) is refused: it was recorded as
 * neg's value, and the graph went on with a [5] tensor. */
Test(hostile_decomp, a_table_entry_of_other_types_than_its_operator_is_refused_naming_it)
{
    int64_t base = live_allocations();
    static const char *texts[] = {
        "graph(%x : f32[2]):\n    %m = aten.mul.Scalar(%x, -1)\n    return (%m,)\n",
        "graph(%x : i64[3]):\n    %m = aten.mul.Scalar(%x, -1)\n    return (%m,)\n",
        "graph():\n    %f = aten.full.default([5], 1.0)\n    return (%f,)\n",
        "graph(%x : f32[3]):\n    %f = aten.sum.default(%x)\n    return (%f,)\n",
    };
    static const struct {
        tj_status status;
        const char *needle;
    } want[] = {
        {TJ_ERR_SHAPE, "make_fx: the decomposition graph of aten::neg: tj_graph_run: input 0 (%x) has shape [3], the "
                       "graph expects [2]"},
        {TJ_ERR_DTYPE, "make_fx: the decomposition graph of aten::neg: tj_graph_run: input 0 (%x) is float32"},
        {TJ_ERR_INVALID_ARGUMENT, "make_fx: the decomposition of aten::neg gave output 0 as float32[5], the operator "
                                  "gives float32[3]"},
        {TJ_ERR_INVALID_ARGUMENT, "make_fx: the decomposition of aten::neg gave output 0 as float32[], the operator "
                                  "gives float32[3]"},
    };
    tj_tensor *x = ramp(1, I64(3), 1);
    tj_graph *plain = tj_make_fx(fn_neg, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(plain, "%s", tj_last_error());
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        tj_graph *g = tj_graph_parse(texts[i]);
        cr_assert_not_null(g, "%s", tj_last_error());
        tj_decomp_table *t = tj_decomp_table_new();
        cr_assert_eq(tj_decomp_table_add_graph(t, tj_op_find("aten::neg"), g), TJ_OK, "%s", tj_last_error());
        for (int fake = 0; fake < 2; fake++) {
            cr_expect_null(tj_make_fx(fn_neg, NULL, &x, 1, t, fake ? TJ_TRACE_FAKE : TJ_TRACE_REAL), "case %zu", i);
            EXPECT_ERROR(want[i].status, want[i].needle);
        }
        cr_expect_null(tj_graph_decompose(plain, t));
        EXPECT_ERROR(want[i].status, want[i].needle);
        tj_decomp_table_free(t);
        tj_graph_free(g);
    }
    expect_values(x, (const float[]){1, 2, 3}, 3);
    tj_graph_free(plain);
    tj_tensor_release(x);
    cr_expect_eq(live_allocations(), base);
}

/* ================================ plan.h ================================ */

/* x += 1 written back into x: a plan with an updated input. */
static const char *BUMP_TEXT = "graph(%x : f32[3]):\n    %add = aten.add.Scalar(%x, 1)\n    return (%add,) writeback {0: 0}\n";

Test(hostile_plan, a_refused_run_leaves_written_back_inputs_and_outputs_alone)
{
    int64_t base = live_allocations();
    tj_graph *g = tj_graph_parse(BUMP_TEXT);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *x = ramp(1, I64(3), 0), *wrong = ramp(1, I64(4), 0), *out[1] = {NULL};
    cr_expect_eq(tj_plan_run(p, &wrong, 1, out), TJ_ERR_SHAPE);
    EXPECT_ERROR(TJ_ERR_SHAPE, "tj_plan_run", "input 0");
    expect_values(wrong, (const float[]){0, 1, 2, 3}, 4);
    /* outputs of the wrong type, or one tensor given for two outputs */
    tj_tensor *o64 = tj_tensor_empty(TJ_FLOAT64, 1, I64(3));
    cr_expect_eq(tj_plan_run_into(p, &x, 1, &o64), TJ_ERR_DTYPE);
    EXPECT_ERROR(TJ_ERR_DTYPE, "tj_plan_run_into", "output 0");
    expect_values(x, (const float[]){0, 1, 2}, 3);
    cr_expect_eq(tj_plan_run_ctx(NULL, &x, 1, out), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "NULL");
    cr_expect_eq(tj_plan_run_ctx_into(NULL, &x, 1, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "NULL");
    cr_expect_eq(tj_plan_run(p, &x, 1, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_run", "NULL outputs for a plan with 1 output");
    expect_values(x, (const float[]){0, 1, 2}, 3);
    tj_tensor_release(o64);
    tj_tensor_release(x);
    tj_tensor_release(wrong);
    tj_plan_free(p);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

/* A kernel that runs the plan it is part of on the same context, as a
 * second thread calling tj_plan_run while the first is inside the plan
 * would: two runs at once on one arena (4 threads calling tj_plan_run on
 * one plan gave wrong values in about 2% of the runs). */
static tj_plan *reentered_plan;
static tj_status reenter_status;
static char reenter_error[512];

static tj_status reenter_kernel(const tj_value *args, tj_tensor *const *outs)
{
    static int depth; /* without the refusal the inner run would enter again */
    tj_tensor *x = args[0].u.t, *out[1] = {NULL};
    if (depth++ == 0) reenter_status = tj_plan_run(reentered_plan, &x, 1, out);
    depth--;
    snprintf(reenter_error, sizeof reenter_error, "%s", tj_last_error());
    tj_clear_error();
    tj_tensor_release(out[0]);
    return tj_tensor_copy_to(x, tj_tensor_data(outs[0]));
}

static tj_status reenter_meta(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    outs[0].dtype = tj_tensor_dtype(x);
    outs[0].ndim = tj_tensor_ndim(x);
    memcpy(outs[0].shape, tj_tensor_shape(x), sizeof(int64_t) * (size_t)outs[0].ndim);
    return TJ_OK;
}

Test(hostile_plan, a_second_run_of_a_context_in_progress_is_refused)
{
    const tj_op *op = tj_op_register("hostile::reenter(Tensor self) -> Tensor", TJ_OP_PRIMITIVE, reenter_kernel, reenter_meta);
    cr_assert_not_null(op, "%s", tj_last_error());
    tj_graph *g = tj_graph_parse("graph(%x : f32[3]):\n    %r = hostile.reenter.default(%x)\n"
                                 "    %n = aten.neg.default(%r)\n    return (%n,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    reentered_plan = tj_compile(g, NULL);
    cr_assert_not_null(reentered_plan, "%s", tj_last_error());
    tj_tensor *x = ramp(1, I64(3), 1), *out[1] = {NULL};
    cr_assert_eq(tj_plan_run(reentered_plan, &x, 1, out), TJ_OK, "%s", tj_last_error());
    expect_values(out[0], (const float[]){-1, -2, -3}, 3);
    cr_expect_eq(reenter_status, TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(reenter_error, "tj_plan_run: another run of this context is in progress"), "%s", reenter_error);
    /* the refusal leaves the context free for the next run */
    tj_tensor_release(out[0]);
    cr_assert_eq(tj_plan_run(reentered_plan, &x, 1, out), TJ_OK, "%s", tj_last_error());
    expect_values(out[0], (const float[]){-1, -2, -3}, 3);
    tj_tensor_release(out[0]);
    tj_tensor_release(x);
    tj_plan_free(reentered_plan);
    tj_graph_free(g);
}

/* Counts of one are singular ("takes 1 inputs" read wrong). */
Test(hostile_plan, a_wrong_input_count_names_the_count_taken)
{
    int64_t base = live_allocations();
    tj_graph *g = tj_graph_parse(NEG_TEXT);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *x = ramp(1, I64(3), 1), *out[1] = {NULL};
    cr_expect_eq(tj_plan_run(p, (tj_tensor *[]){x, x}, 2, out), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_run: the plan takes 1 input, got 2");
    cr_expect_eq(tj_graph_run(g, (tj_tensor *[]){x, x}, 2, out), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_graph_run: the graph takes 1 input, got 2");
    cr_expect_null(out[0]);
    tj_tensor_release(x);
    tj_plan_free(p);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_plan, a_plan_without_outputs_runs_with_null_outputs)
{
    int64_t base = live_allocations();
    tj_graph *g = tj_graph_parse("graph(%x : f32[3]):\n    %a = aten.add_.Scalar(%x, 1)\n    return ()\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_expect_eq(tj_plan_num_outputs(p), 0);
    tj_tensor *x = ramp(1, I64(3), 0);
    cr_expect_eq(tj_plan_run(p, &x, 1, NULL), TJ_OK, "%s", tj_last_error());
    expect_values(x, (const float[]){1, 2, 3}, 3);
    tj_tensor_release(x);
    tj_plan_free(p);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_plan, two_outputs_that_share_memory_are_refused)
{
    int64_t base = live_allocations();
    tj_graph *g = tj_graph_parse("graph(%x : f32[3]):\n    %a = aten.neg.default(%x)\n    %b = aten.abs.default(%x)\n"
                                 "    return (%a, %b)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *x = ramp(1, I64(3), -1), *o = ramp(1, I64(3), 7);
    cr_expect_eq(tj_plan_run_into(p, &x, 1, (tj_tensor *[]){o, o}), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "outputs 0 and 1 overlap in memory");
    expect_values(o, (const float[]){7, 8, 9}, 3);
    tj_tensor_release(x);
    tj_tensor_release(o);
    tj_plan_free(p);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

/* An output tensor that is an input, or a view of one, whose value is a view
 * of that input in another layout (x <- x^T, x[1:] <- x[:-1]): copied element
 * by element after the run, it overwrote values before reading them (x <- x^T
 * on [64, 64] left 1536 elements wrong). Eagerly copy_ refuses such a
 * partial overlap; the run refuses it before writing anything. The same
 * layout (x <- x) stays allowed. */
Test(hostile_plan, an_output_over_its_own_value_in_another_layout_is_refused)
{
    int64_t base = live_allocations();
    tj_graph *g = tj_graph_parse("graph(%x : f32[64, 64]):\n    %t = aten.t.default(%x)\n"
                                 "    %s = aten.slice.Tensor(%x, 0, 0, 63, 1)\n    return (%t, %s, %x)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *flat = tj_arange(tj_v_int(0), tj_v_int(64 * 64), tj_v_int(1), TJ_FLOAT32);
    tj_tensor *x = tj_view(flat, I64(64, 64), 2);
    cr_assert_not_null(x, "%s", tj_last_error());
    tj_tensor *want = tj_clone(x);
    tj_tensor *rows = tj_slice(x, 0, true, 1, true, 64, 1);
    cr_expect_eq(tj_plan_run_into(p, &x, 1, (tj_tensor *[]){x, NULL, NULL}), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_run_into", "output 0 (%t)", "its own value");
    cr_expect_eq(tj_plan_run_into(p, &x, 1, (tj_tensor *[]){NULL, rows, NULL}), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_run_into", "output 1 (%s)", "its own value");
    for (int64_t i = 0; i < 64 * 64; i++)
        if (tj_tensor_item_at(x, i) != tj_tensor_item_at(want, i)) {
            cr_expect_fail("element %lld changed by a refused run", (long long)i);
            break;
        }
    cr_expect_eq(tj_plan_run_into(p, &x, 1, (tj_tensor *[]){NULL, NULL, x}), TJ_OK, "%s", tj_last_error());
    tj_tensor_release(rows);
    tj_tensor_release(want);
    tj_tensor_release(flat);
    tj_tensor_release(x);
    tj_plan_free(p);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

/* Output 0 (-a) into b, while output 1, b itself, is written back into a
 * after the output copies: a took -a, not b's old values (tj_graph_run: a =
 * [10, 20, 30]). Refused before anything is written. */
Test(hostile_plan, an_output_over_a_written_back_value_read_after_it_is_refused)
{
    int64_t base = live_allocations();
    tj_graph *g = tj_graph_parse("graph(%a : f32[3], %b : f32[3]):\n    %neg = aten.neg.default(%a)\n"
                                 "    return (%neg, %b) writeback {1: 0}\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *a = ramp(1, I64(3), 1), *b = ramp(1, I64(3), 10);
    cr_expect_eq(tj_plan_run_into(p, (tj_tensor *[]){a, b}, 2, (tj_tensor *[]){b, NULL}), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_run_into", "output 0 (%neg)", "output 1 (%b)", "writes back");
    expect_values(a, (const float[]){1, 2, 3}, 3);
    expect_values(b, (const float[]){10, 11, 12}, 3);
    tj_tensor *other = ramp(1, I64(3), 0);
    cr_expect_eq(tj_plan_run_into(p, (tj_tensor *[]){a, b}, 2, (tj_tensor *[]){other, NULL}), TJ_OK, "%s",
                 tj_last_error());
    expect_values(a, (const float[]){10, 11, 12}, 3);
    expect_values(other, (const float[]){-1, -2, -3}, 3);
    tj_tensor_release(other);
    tj_tensor_release(a);
    tj_tensor_release(b);
    tj_plan_free(p);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

/* x.add_(y) then x * y, unfunctionalised: the plan writes into input 0. */
static const char *ADD_INPLACE_TEXT = "graph(%x : f32[2, 2], %y : f32[2, 2]):\n"
                                      "    %add_ = aten.add_.Tensor(%x, %y, alpha = 1)\n"
                                      "    %mul = aten.mul.Tensor(%add_, %y)\n"
                                      "    return (%mul,)\n";

Test(hostile_plan, an_in_place_operator_refuses_inputs_it_would_overwrite_while_reading)
{
    int64_t base = live_allocations();
    tj_graph *g = tj_graph_parse(ADD_INPLACE_TEXT);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    /* x expanded from one row (stride 0): eagerly add_ refuses it */
    tj_tensor *row = ramp(2, I64(1, 2), 1), *y = ramp(2, I64(2, 2), 10), *out[1] = {NULL};
    tj_tensor *ex = tj_expand(row, I64(2, 2), 2);
    cr_assert_not_null(ex, "%s", tj_last_error());
    cr_expect_eq(tj_plan_run(p, (tj_tensor *[]){ex, y}, 2, out), TJ_ERR_UNSUPPORTED);
    EXPECT_ERROR(TJ_ERR_UNSUPPORTED, "tj_plan_run", "%add_", "aten::add_.Tensor", "single memory location");
    expect_values(row, (const float[]){1, 2}, 2);
    cr_expect_null(out[0]);
    /* y = x^T: partly the elements add_ writes (as x.add_(x.t()) eagerly) */
    tj_tensor *x = ramp(2, I64(2, 2), 0), *xt = tj_t(x);
    cr_assert_not_null(xt, "%s", tj_last_error());
    cr_expect_eq(tj_plan_run(p, (tj_tensor *[]){x, xt}, 2, out), TJ_ERR_UNSUPPORTED);
    EXPECT_ERROR(TJ_ERR_UNSUPPORTED, "tj_plan_run", "%add_", "argument 1");
    expect_values(x, (const float[]){0, 1, 2, 3}, 4);
    /* y = x itself is allowed, as eagerly: x becomes 2x, the result 4x^2 */
    cr_expect_eq(tj_plan_run(p, (tj_tensor *[]){x, x}, 2, out), TJ_OK, "%s", tj_last_error());
    expect_values(x, (const float[]){0, 2, 4, 6}, 4);
    expect_values(out[0], (const float[]){0, 4, 16, 36}, 4);
    tj_tensor_release(out[0]);
    tj_tensor_release(xt);
    tj_tensor_release(x);
    tj_tensor_release(ex);
    tj_tensor_release(y);
    tj_tensor_release(row);
    tj_plan_free(p);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_plan, a_written_back_input_with_elements_sharing_memory_is_refused)
{
    int64_t base = live_allocations();
    tj_graph *g = tj_graph_parse(BUMP_TEXT);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *one = ramp(1, I64(1), 5), *out[1] = {NULL};
    tj_tensor *ex = tj_expand(one, I64(3), 1);
    cr_assert_not_null(ex, "%s", tj_last_error());
    cr_expect_eq(tj_plan_run(p, &ex, 1, out), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_run", "input 0", "written back", "share memory");
    expect_values(one, (const float[]){5}, 1);
    cr_expect_null(out[0]);
    tj_tensor_release(ex);
    tj_tensor_release(one);
    tj_plan_free(p);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

/* A result kept in the context (run_into with NULL outputs) passed back to a
 * run of that context: the steps overwrite its block (here add writes %a's
 * block, which mul then reads as x), and tj_plan_run even points the block
 * at its new output tensor before the first step, so the run read
 * uninitialised memory and returned status 0. */
Test(hostile_plan, a_result_of_the_context_passed_back_to_it_is_refused)
{
    int64_t base = live_allocations();
    tj_graph *g = tj_graph_parse("graph(%x : f32[3]):\n    %a = aten.add.Scalar(%x, 1)\n"
                                 "    %b = aten.mul.Scalar(%x, 2)\n    return (%a, %b)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_plan_context *c = tj_plan_default_context(p);
    cr_assert_not_null(c, "%s", tj_last_error());
    tj_tensor *x = ramp(1, I64(3), 0), *out[2] = {NULL, NULL};
    cr_assert_eq(tj_plan_run_into(p, &x, 1, NULL), TJ_OK, "%s", tj_last_error());
    tj_tensor *a = tj_plan_context_output(c, 0), *b = tj_plan_context_output(c, 1);
    expect_values(a, (const float[]){1, 2, 3}, 3);
    /* as an input: itself, or a view of it, through either run function */
    cr_expect_eq(tj_plan_run(p, &a, 1, out), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_run:", "input 0 (%x)", "this context's last run", "clone()");
    cr_expect_null(out[0]);
    cr_expect_null(out[1]);
    tj_tensor *va = tj_view(a, I64(3), 1);
    cr_assert_not_null(va, "%s", tj_last_error());
    cr_expect_eq(tj_plan_run_into(p, &va, 1, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_run_into:", "input 0 (%x)", "this context's last run");
    /* as an output of run_into */
    cr_expect_eq(tj_plan_run_into(p, &x, 1, (tj_tensor *[]){b, NULL}), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_run_into:", "output 0 (%a)", "this context's last run");
    expect_values(a, (const float[]){1, 2, 3}, 3);
    expect_values(b, (const float[]){0, 2, 4}, 3);
    /* another context, or a clone, computes from it */
    tj_plan_context *c2 = tj_plan_context_new(p);
    cr_assert_not_null(c2, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run_ctx(c2, &va, 1, out), TJ_OK, "%s", tj_last_error());
    expect_values(out[0], (const float[]){2, 3, 4}, 3);
    expect_values(out[1], (const float[]){2, 4, 6}, 3);
    tj_tensor_release(out[0]);
    tj_tensor_release(out[1]);
    tj_tensor *ca = tj_clone(a);
    cr_assert_not_null(ca, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, &ca, 1, out), TJ_OK, "%s", tj_last_error());
    expect_values(out[0], (const float[]){2, 3, 4}, 3);
    expect_values(out[1], (const float[]){2, 4, 6}, 3);
    tj_tensor_release(out[0]);
    tj_tensor_release(out[1]);
    tj_tensor_release(ca);
    tj_tensor_release(va);
    tj_tensor_release(x);
    tj_plan_free(p);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_plan, contexts_statistics_and_profiles_refuse_bad_arguments)
{
    int64_t base = live_allocations();
    tj_graph *g = tj_graph_parse(NEG_TEXT);
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_expect_null(tj_compile(NULL, NULL));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_compile");
    cr_expect_null(tj_plan_context_new(NULL));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_context_new");
    cr_expect_null(tj_plan_default_context(NULL));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_default_context", "NULL plan");
    tj_plan_context *c = tj_plan_context_new(p);
    cr_assert_not_null(c, "%s", tj_last_error());
    cr_expect_null(tj_plan_context_output(c, -1));
    EXPECT_ERROR(TJ_ERR_INDEX, "tj_plan_context_output");
    cr_expect_null(tj_plan_context_output(c, 1));
    EXPECT_ERROR(TJ_ERR_INDEX, "tj_plan_context_output", "output 1 out of range (the plan has 1)");
    cr_expect_null(tj_plan_context_output(NULL, 0));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_context_output", "NULL context");
    tj_plan_context_free(NULL);
    tj_plan_context_free(c);
    tj_plan_statistics st;
    cr_expect_eq(tj_plan_stats(NULL, &st), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_stats");
    cr_expect_eq(tj_plan_stats(p, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_stats");
    cr_expect_eq(tj_plan_print_memory(p, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_print_memory");
    cr_expect_eq(tj_plan_profile_write_trace(p, "/tmp/tjit_hostile_trace.json"), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_profile_write_trace", "no profiled run");
    tj_plan_set_profiling(p, true);
    tj_tensor *x = ramp(1, I64(3), 0), *out[1];
    cr_assert_eq(tj_plan_run(p, &x, 1, out), TJ_OK, "%s", tj_last_error());
    tj_tensor_release(out[0]);
    cr_expect_eq(tj_plan_profile_write_trace(p, "/nonexistent-dir/trace.json"), TJ_ERR_IO);
    EXPECT_ERROR(TJ_ERR_IO, "tj_plan_profile_write_trace", "/nonexistent-dir/trace.json");
    cr_expect_eq(tj_plan_profile_print(p, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_plan_profile_print");
    tj_plan_set_profiling(NULL, true);
    tj_plan_profile_reset(NULL);
    cr_expect_eq(tj_plan_num_inputs(NULL), 0);
    cr_expect_eq(tj_plan_num_outputs(NULL), 0);
    tj_plan_free(NULL);
    tj_tensor_release(x);
    tj_plan_free(p);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}
