/* Hostile value names (breaker7): names a hand-edited graph text or
 * tj_graph_set_input_name gives that the graph's generated names would also
 * take ("add", "sum", "arg0_1"), and names at the length limit. Each graph
 * must parse, print back to the same text, decompose keeping its input
 * names, and run to the same values. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_counter.h"
#include "hostile.h"
#include "tracer/graph_internal.h"

TestSuite(hostile_names, .init = count_allocations);

/* text parses, and prints back to itself. */
static tj_graph *parse_round_trip(const char *text)
{
    tj_graph *g = tj_graph_parse(text);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *printed = tj_graph_to_string(g);
    cr_assert_not_null(printed, "%s", tj_last_error());
    cr_expect_str_eq(printed, text);
    free(printed);
    return g;
}

/* g run on a float32 ramp per input (first values 1, 11, ...) gives
 * `expected` as its one output's elements. */
static void expect_run(const tj_graph *g, int n_inputs, const float *expected, int n)
{
    tj_tensor *in[2], *out = NULL;
    for (int i = 0; i < n_inputs; i++) in[i] = ramp(1, I64(2), 1.0f + 10.0f * (float)i);
    cr_assert_eq(tj_graph_run(g, in, n_inputs, &out), TJ_OK, "%s", tj_last_error());
    expect_values(out, expected, n);
    tj_tensor_release(out);
    for (int i = 0; i < n_inputs; i++) tj_tensor_release(in[i]);
}

/* A constant named after a value the text renamed ("%foo = aten.add" left
 * the name "add" claimed) or after a reserved word an aten.sum claimed was
 * silently named add_1 / sum_2: its readers failed with "undefined value". */
Test(hostile_names, constant_takes_a_name_a_call_left_or_reserved)
{
    int64_t base = live_allocations();
    const char *texts[] = {
        "graph(%x : f32[2]):\n    %foo = aten.add.Tensor(%x, %x)\n    %add : f32[] = constant([3.0])\n"
        "    %y = aten.mul.Tensor(%foo, %add)\n    return (%y,)\n",
        "graph(%x : f32[2]):\n    %s = aten.sum.default(%x)\n    %sum : f32[] = constant([3.0])\n"
        "    %y = aten.mul.Tensor(%s, %sum)\n    return (%y,)\n",
    };
    const float expected[][2] = {{6, 12}, {9}};
    for (int k = 0; k < 2; k++) {
        tj_graph *g = parse_round_trip(texts[k]);
        expect_run(g, 1, expected[k], k == 0 ? 2 : 1);
        tj_graph_free(g);
    }
    /* still refused: a name a value holds */
    cr_expect_null(tj_graph_parse("graph(%x : f32[2]):\n    %add = aten.add.Tensor(%x, %x)\n"
                                  "    %add : f32[] = constant([3.0])\n    return (%add,)\n"));
    EXPECT_ERROR(TJ_ERR_PARSE, "line 3", "defined twice");
    cr_expect_eq(live_allocations(), base);
}

/* A result written "_" holds a generated name (getitem_1) that the text
 * may give a later value of its own, a call's or a constant's: that was
 * "value %getitem_1 is defined twice". The "_" result takes another name. */
Test(hostile_names, underscore_result_yields_its_generated_name)
{
    int64_t base = live_allocations();
    tj_graph *g = tj_graph_parse("graph(%x : f32[2]):\n    %a, _ = aten.max.dim(%x, 0)\n"
                                 "    %getitem_1 = aten.neg.default(%a)\n    %getitem_2 : f32[] = constant([3.0])\n"
                                 "    %y = aten.mul.Tensor(%getitem_1, %getitem_2)\n    return (%y,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    expect_run(g, 1, (const float[]){-6}, 1); /* max of the ramp [1, 2] is 2 */
    char *printed = tj_graph_to_string(g);
    cr_expect(strstr(printed, "%a, %getitem_1_1 = aten.max.dim(%x, 0)\n") != NULL, "%s", printed);
    free(printed);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

/* A call whose first result is None (convolution_backward without the
 * input's gradient) names its other results getitem_1, getitem_2 in the
 * text, while the graph had generated getitem and getitem_1 for them:
 * naming the first took the second's name ("defined twice"). torch's
 * make_fx writes such lines for every convolution over a graph input. */
Test(hostile_names, results_named_past_a_none_result_take_the_names_written)
{
    int64_t base = live_allocations();
    tj_graph *g = tj_graph_parse("graph(%g : f32[1, 1, 2, 2], %x : f32[1, 1, 2, 2], %w : f32[1, 1, 1, 1]):\n"
                                 "    %getitem, %getitem_1, %getitem_2 = aten.convolution_backward.default(%g, %x, %w, "
                                 "[1], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [False, True, True])\n"
                                 "    %y = aten.add.Tensor(%getitem_2, %getitem_1)\n    return (%y,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor *in[3] = {ramp(4, I64(1, 1, 2, 2), 1), ramp(4, I64(1, 1, 2, 2), 11), ramp(4, I64(1, 1, 1, 1), 21)};
    tj_tensor *out = NULL;
    cr_assert_eq(tj_graph_run(g, in, 3, &out), TJ_OK, "%s", tj_last_error());
    /* grad_bias 1+2+3+4 = 10 plus grad_weight 1*11 + 2*12 + 3*13 + 4*14 = 130 */
    expect_values(out, (const float[]){140}, 1);
    tj_tensor_release(out);
    for (int i = 0; i < 3; i++) tj_tensor_release(in[i]);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

/* tj_graph_decompose renamed the replayed graph's inputs after tracing it,
 * so an input named as a call of the new graph ("add", the reserved "sum")
 * or as another input's generated name (arg1_1 first, arg0_1 second) made
 * it fail: "tj_graph_set_input_name: name 'add' is already used". */
Test(hostile_names, decompose_keeps_input_names_the_calls_would_take)
{
    int64_t base = live_allocations();
    const struct {
        const char *text, *decomposed; /* with the core table */
        int n_inputs;
        float expected[2];
        int n;
    } cases[] = {
        {"graph(%add : f32[2]):\n    %add_1 = aten.add.Tensor(%add, %add)\n    return (%add_1,)\n",
         "graph(%add : f32[2]):\n    %add_1 = aten.add.Tensor(%add, %add)\n    return (%add_1,)\n", 1, {2, 4}, 2},
        {"graph(%arg1_1 : f32[2], %arg0_1 : f32[2]):\n    %sub = aten.sub.Tensor(%arg1_1, %arg0_1)\n    return (%sub,)\n",
         "graph(%arg1_1 : f32[2], %arg0_1 : f32[2]):\n    %add = aten.add.Tensor(%arg1_1, %arg0_1, alpha = -1)\n"
         "    return (%add,)\n",
         2, {-10, -10}, 2},
        {"graph(%sum : f32[2]):\n    %sum_1 = aten.sum.default(%sum)\n    return (%sum_1,)\n",
         "graph(%sum : f32[2]):\n    %sum_1 = aten.sum.dim_IntList(%sum, [])\n    return (%sum_1,)\n", 1, {3}, 1},
    };
    tj_decomp_table *core = tj_core_decompositions();
    cr_assert_not_null(core);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        tj_graph *g = parse_round_trip(cases[k].text);
        tj_graph *copy = tj_graph_decompose(g, NULL), *low = tj_graph_decompose(g, core);
        cr_assert_not_null(copy, "%s", tj_last_error());
        cr_assert_not_null(low, "%s", tj_last_error());
        char *copy_text = tj_graph_to_string(copy), *low_text = tj_graph_to_string(low);
        cr_expect_str_eq(copy_text, cases[k].text);
        cr_expect_str_eq(low_text, cases[k].decomposed);
        expect_run(low, cases[k].n_inputs, cases[k].expected, cases[k].n);
        free(copy_text);
        free(low_text);
        tj_graph_free(copy);
        tj_graph_free(low);
        tj_graph_free(g);
    }
    tj_decomp_table_free(core);
    cr_expect_eq(live_allocations(), base);
}

/* tj_graph_set_input_name took names up to 100 characters, the parser up to
 * 127: a parsed graph with a longer input name could not be decomposed
 * (decomposition set the input names again). Now both take
 * TJ_GRAPH_NAME_MAX, and a name of that length round-trips. */
Test(hostile_names, longest_name_round_trips_through_text_and_decomposition)
{
    int64_t base = live_allocations();
    char longest[TJ_GRAPH_NAME_MAX + 2];
    memset(longest, 'n', sizeof longest);
    longest[TJ_GRAPH_NAME_MAX] = 0;
    tj_graph *g = tj_graph_parse("graph(%x : f32[2]):\n    %neg = aten.neg.default(%x)\n    return (%neg,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_assert_eq(tj_graph_set_input_name(g, 0, longest), TJ_OK, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_assert_not_null(text);
    cr_expect(strstr(text, longest) != NULL);
    tj_graph *back = parse_round_trip(text);
    tj_graph *low = tj_graph_decompose(back, NULL);
    cr_assert_not_null(low, "%s", tj_last_error());
    char *low_text = tj_graph_to_string(low);
    cr_expect_str_eq(low_text, text);
    expect_run(low, 1, (const float[]){-1, -2}, 2);

    /* one character more: refused by both, saying why */
    longest[TJ_GRAPH_NAME_MAX] = 'n';
    longest[TJ_GRAPH_NAME_MAX + 1] = 0;
    cr_expect_eq(tj_graph_set_input_name(g, 0, longest), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_graph_set_input_name", "128 characters", "127 allowed");
    char too_long[400];
    snprintf(too_long, sizeof too_long, "graph(%%%s : f32[2]):\n    return (%%%s,)\n", longest, longest);
    cr_expect_null(tj_graph_parse(too_long));
    EXPECT_ERROR(TJ_ERR_PARSE, "tj_graph_parse", "128 characters", "127 allowed");
    free(low_text);
    free(text);
    tj_graph_free(low);
    tj_graph_free(back);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

/* "%_" is a name like any other (a placeholder or a constant took it), but
 * a call's target written %_ was taken for the bare "_" that leaves an
 * output unnamed: the value got a generated name and its readers failed
 * with "undefined value %_". A bare "_" cannot name a constant. */
Test(hostile_names, a_call_value_may_be_named_underscore)
{
    int64_t base = live_allocations();
    tj_graph *g = parse_round_trip("graph(%x : f32[2]):\n    %_ = aten.neg.default(%x)\n    return (%_,)\n");
    expect_run(g, 1, (const float[]){-1, -2}, 2);
    tj_graph_free(g);
    g = parse_round_trip("graph(%x : f32[2]):\n    %a, %_ = aten.max.dim(%x, 0)\n    return (%a, %_)\n");
    tj_graph_free(g);
    /* a constant cannot be left unnamed: it printed as "% : f32[]", which
     * does not parse */
    cr_expect_null(tj_graph_parse("graph(%x : f32[2]):\n    _ : f32[] = constant([1.0])\n    return (%x,)\n"));
    EXPECT_ERROR(TJ_ERR_PARSE, "line 2", "a constant is named '%name', not '_'");
    cr_expect_eq(live_allocations(), base);
}

/* Generated names from a base at the length limit: each distinct and no
 * longer than the limit (the suffixed candidates were cut back to the same
 * string by a 128-byte buffer: a loop without end). */
Test(hostile_names, unique_names_from_a_base_at_the_limit_are_distinct_and_within_it, .timeout = 20)
{
    tj_graph *g = tj_graph_new();
    cr_assert_not_null(g);
    char base[TJ_GRAPH_NAME_MAX + 1];
    memset(base, 'a', TJ_GRAPH_NAME_MAX);
    base[TJ_GRAPH_NAME_MAX] = '\0';
    char *names[3];
    for (int i = 0; i < 3; i++) {
        names[i] = tj_graph_unique_name(g, base);
        cr_assert_not_null(names[i], "%s", tj_last_error());
        cr_expect_leq(strlen(names[i]), TJ_GRAPH_NAME_MAX);
        for (int j = 0; j < i; j++) cr_expect_str_neq(names[i], names[j]);
    }
    tj_graph_free(g);
}

/* A list-returning operator (split.Tensor, split_with_sizes, chunk,
 * unbind.int) given a name: the graph holds no Tensor[] value, so the name
 * defined nothing and a later %split read failed as "undefined value"
 * (the line itself parsed, printed back as '_ = ...'). The line is refused,
 * naming the operator; '_' still leaves the list. */
Test(hostile_names, a_named_list_result_is_refused_naming_the_operator)
{
    int64_t base = live_allocations();
    const char *ops[] = {"aten.split.Tensor(%x, 2)", "aten.split_with_sizes.default(%x, [1, 3])",
                         "aten.chunk.default(%x, 2)", "aten.unbind.int(%x)"};
    for (int k = 0; k < 4; k++) {
        char text[256];
        snprintf(text, sizeof text, "graph(%%x : f32[4]):\n    %%pieces = %s\n    return (%%x,)\n", ops[k]);
        cr_expect_null(tj_graph_parse(text), "%s", ops[k]);
        EXPECT_ERROR(TJ_ERR_PARSE, "line 2", "returns a Tensor[], which no graph value holds: %pieces");
        snprintf(text, sizeof text, "graph(%%x : f32[4]):\n    _ = %s\n    return (%%x,)\n", ops[k]);
        tj_graph *g = tj_graph_parse(text);
        cr_expect_not_null(g, "%s: %s", ops[k], tj_last_error());
        tj_graph_free(g);
    }
    cr_expect_eq(live_allocations(), base);
}
