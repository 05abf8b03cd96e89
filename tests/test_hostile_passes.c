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
