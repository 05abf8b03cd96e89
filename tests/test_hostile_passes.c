/* Hostile graphs for the passes (breaker7): valid hand-written graphs whose
 * functionalised form must compute what tj_graph_run computes on the graph
 * as written (eager semantics: in-place calls write through views and into
 * the inputs). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_counter.h"
#include "hostile.h"

TestSuite(hostile_passes, .init = count_allocations);

/* Runs `text` as written and functionalised on x = 1..6 of `shape`
 * (strides `strides`: a transposed layout where not NULL); both give
 * `want` (its first output) and leave x holding `x_after`. */
static void expect_functionalized_like_eager(const char *text, const int64_t *shape, const int64_t *strides,
                                             const float *want, int n_want, const float *x_after)
{
    tj_graph *g = tj_graph_parse(text), *f = tj_graph_parse(text);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_assert_not_null(f, "%s", tj_last_error());
    cr_assert_gt(tj_pass_functionalize(f), 0, "%s", tj_last_error());
    for (int functional = 0; functional < 2; functional++) {
        tj_tensor *base = ramp(2, shape, 1), *x = base, *out[4] = {NULL};
        if (strides) { /* the same elements seen through the transposed strides */
            x = tj_as_strided(base, shape, strides, 2, false, 0);
            cr_assert_not_null(x, "%s", tj_last_error());
        }
        cr_assert_eq(tj_graph_run(functional ? f : g, &x, 1, out), TJ_OK, "%s", tj_last_error());
        expect_values(out[0], want, n_want);
        for (int i = 0; i < 6; i++)
            cr_expect_eq(tj_tensor_item_at(x, i), x_after[i], "%s: x element %d: %g, expected %g",
                         functional ? "functionalised" : "as written", i, tj_tensor_item_at(x, i), x_after[i]);
        for (int k = 0; k < 4; k++) tj_tensor_release(out[k]);
        if (x != base) tj_tensor_release(x);
        tj_tensor_release(base);
    }
    tj_graph_free(f);
    tj_graph_free(g);
}

/* reshape, flatten and contiguous are implicit operators: a view of their
 * input where its layout allows, a copy otherwise. Functionalisation
 * followed aliases through view operators only, so it took their results
 * for new tensors: add_ through reshape(x) was dropped (x not written back,
 * %a not updated), and so was x's mutation read through an earlier
 * reshape. */
Test(hostile_passes, functionalize_follows_aliases_through_implicit_operators)
{
    int64_t base = live_allocations();
    const float plus10[] = {11, 12, 13, 14, 15, 16}, same[] = {1, 2, 3, 4, 5, 6};
    /* a write through one reshape of x, read through another */
    expect_functionalized_like_eager("graph(%x : f32[2, 3]):\n    %a = aten.reshape.default(%x, [-1])\n"
                                     "    %b = aten.reshape.default(%x, [-1])\n    %c = aten.add_.Scalar(%b, 10)\n"
                                     "    return (%a,)\n",
                                     I64(2, 3), NULL, plus10, 6, plus10);
    /* x written, read through a flatten taken before */
    expect_functionalized_like_eager("graph(%x : f32[2, 3]):\n    %a = aten.flatten.using_ints(%x)\n"
                                     "    %c = aten.add_.Scalar(%x, 10)\n    return (%a,)\n",
                                     I64(2, 3), NULL, plus10, 6, plus10);
    /* an intermediate written through contiguous (a view of it) */
    expect_functionalized_like_eager("graph(%x : f32[2, 3]):\n    %e = aten.mul.Scalar(%x, 1)\n"
                                     "    %a = aten.contiguous.default(%e)\n    %c = aten.add_.Scalar(%a, 10)\n"
                                     "    return (%e,)\n",
                                     I64(2, 3), NULL, plus10, 6, same);
    /* of a transposed x, reshape is a copy: the write stays in it */
    expect_functionalized_like_eager("graph(%x : f32[2, 3]{1, 2}):\n    %a = aten.reshape.default(%x, [-1])\n"
                                     "    %c = aten.add_.Scalar(%a, 10)\n    return (%a,)\n",
                                     I64(2, 3), I64(1, 2), (const float[]){11, 13, 15, 12, 14, 16}, 6,
                                     (const float[]){1, 3, 5, 2, 4, 6});
    cr_expect_eq(live_allocations(), base);
}

/* Runs g (plan: compiled) on a = 1, 2, 3 and b = 7, 8, 9; a and b then hold
 * a_after and b_after. */
static void expect_inputs_after(const tj_graph *g, bool plan, const float *a_after, const float *b_after)
{
    tj_tensor *in[2] = {ramp(1, I64(3), 1), ramp(1, I64(3), 7)}, *out[4] = {NULL};
    tj_plan *p = plan ? tj_compile(g, NULL) : NULL;
    if (plan) cr_assert_not_null(p, "%s", tj_last_error());
    cr_assert_eq(plan ? tj_plan_run(p, in, 2, out) : tj_graph_run(g, in, 2, out), TJ_OK, "%s", tj_last_error());
    expect_values(in[0], a_after, 3);
    expect_values(in[1], b_after, 3);
    for (int k = 0; k < 4; k++) tj_tensor_release(out[k]);
    tj_plan_free(p);
    tj_tensor_release(in[0]);
    tj_tensor_release(in[1]);
}

/* b.copy_(a); a.add_(10) functionalised wrote a itself back into b and
 * add back into a, one after the other: b took a's new value (11, 12, 13)
 * where eager gives a's old one. The written-back value is now a copy. */
Test(hostile_passes, an_input_written_back_into_another_written_back_input_keeps_its_old_value)
{
    int64_t base = live_allocations();
    const char *text = "graph(%a : f32[3], %b : f32[3]):\n    %c = aten.copy_.default(%b, %a)\n"
                       "    %d = aten.add_.Scalar(%a, 10)\n    return (%d,)\n";
    const float a_after[] = {11, 12, 13}, b_after[] = {1, 2, 3};
    tj_graph *g = tj_graph_parse(text);
    cr_assert_not_null(g, "%s", tj_last_error());
    expect_inputs_after(g, false, a_after, b_after); /* eager semantics */
    cr_assert_gt(tj_pass_functionalize(g), 0, "%s", tj_last_error());
    expect_inputs_after(g, false, a_after, b_after);
    expect_inputs_after(g, true, a_after, b_after);
    tj_graph_free(g);
    /* the same through reshapes: b's new value is an _unsafe_view of a,
     * which is a view where a's strides allow one */
    g = tj_graph_parse("graph(%a : f32[3], %b : f32[3]):\n    %rb = aten.reshape.default(%b, [1, 3])\n"
                       "    %ra = aten.reshape.default(%a, [1, 3])\n    %c = aten.copy_.default(%rb, %ra)\n"
                       "    %d = aten.add_.Scalar(%ra, 10)\n    return (%d,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    expect_inputs_after(g, false, a_after, b_after);
    cr_assert_gt(tj_pass_functionalize(g), 0, "%s", tj_last_error());
    expect_inputs_after(g, false, a_after, b_after);
    expect_inputs_after(g, true, a_after, b_after);
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}

/* Two inputs swapped by write-backs (or one written back into the other
 * while that one takes a new value) ran the copies in order: both ended
 * with the same values. The text and tj_compile refuse it, naming both. */
Test(hostile_passes, write_backs_that_read_an_input_another_one_overwrites_are_refused)
{
    int64_t base = live_allocations();
    const char *swaps[] = {
        "graph(%a : f32[3], %b : f32[3]):\n    return (%b, %a) writeback {0: 0, 1: 1}\n",
        "graph(%a : f32[3], %b : f32[3]):\n    %v = aten.view.default(%a, [3])\n    %d = aten.add.Scalar(%a, 10)\n"
        "    return (%d, %v) writeback {0: 0, 1: 1}\n",
    };
    for (int i = 0; i < 2; i++) {
        cr_expect_null(tj_graph_parse(swaps[i]));
        EXPECT_ERROR(TJ_ERR_PARSE, "writeback: output", "is input", "or a view of it, which output",
                     "written back into");
    }
    tj_graph *g = tj_graph_parse("graph(%a : f32[3], %b : f32[3]):\n    return (%b, %a)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_compile_options opts = {.writeback = (const int[]){0, 1}};
    cr_expect_null(tj_compile(g, &opts));
    EXPECT_ERROR(TJ_ERR_UNSUPPORTED, "tj_compile: output 0 (%b), written back into input 0, is input 1 (%b)",
                 "which output 1 is written back into");
    tj_graph_free(g);
    cr_expect_eq(live_allocations(), base);
}
