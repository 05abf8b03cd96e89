/* Hostile graphs for tensor objects (breaker9): in graph text, a value
 * names a tensor object, and an in-place call's result names its self's
 * object too. An in-place view (t_, transpose_, unsqueeze_) gives that
 * object a new shape and strides, so a later read of self, or of any
 * earlier in-place result of it, reads the new geometry, as tj_graph_run
 * (eager semantics, and torch's FX interpreter) does. The parser's types,
 * tj_pass_functionalize and tj_compile read the geometry the name had when
 * it was made. */
#include <criterion/criterion.h>

#include "alloc_counter.h"
#include "hostile.h"

TestSuite(hostile_objects, .init = count_allocations);

/* Runs `text` on x = 1..6 of shape [2, 3] as written, compiled,
 * functionalised and functionalised then compiled; each output k must be
 * `want` of shape `shape`. */
static void expect_every_run(const char *text, int n_out, const int64_t *shape, int ndim, const float *want)
{
    for (int mode = 0; mode < 4; mode++) {
        tj_graph *g = tj_graph_parse(text);
        cr_assert_not_null(g, "%s", tj_last_error());
        if (mode >= 2) cr_assert_gt(tj_pass_functionalize(g), 0, "%s", tj_last_error());
        tj_tensor *x = ramp(2, I64(2, 3), 1), *out[4] = {NULL};
        tj_plan *p = mode & 1 ? tj_compile(g, NULL) : NULL;
        if (mode & 1) cr_assert_not_null(p, "mode %d: %s", mode, tj_last_error());
        cr_assert_eq(p ? tj_plan_run(p, &x, 1, out) : tj_graph_run(g, &x, 1, out), TJ_OK, "mode %d: %s", mode,
                     tj_last_error());
        for (int k = 0; k < n_out; k++) {
            cr_assert_eq(tj_tensor_ndim(out[k]), ndim, "mode %d, output %d", mode, k);
            for (int d = 0; d < ndim; d++)
                cr_expect_eq(tj_tensor_size(out[k], d), shape[d], "mode %d, output %d: size %d is %lld, not %lld",
                             mode, k, d, (long long)tj_tensor_size(out[k], d), (long long)shape[d]);
            expect_values(out[k], want, 6);
        }
        for (int k = 0; k < 4; k++) tj_tensor_release(out[k]);
        tj_tensor_release(x);
        tj_plan_free(p);
        tj_graph_free(g);
    }
}

/* p = x.permute(1, 0); p.t_(); return p: p is x's [2, 3] again. Functionalised
 * and compiled, the output was the permute as made, [3, 2]
 * (1, 4, 2, 5, 3, 6). */
Test(hostile_objects, a_value_read_after_an_in_place_view_of_it_has_the_new_shape)
{
    int64_t base = live_allocations();
    const float x[] = {1, 2, 3, 4, 5, 6};
    expect_every_run("graph(%x : f32[2, 3]):\n    %p = aten.permute.default(%x, [1, 0])\n"
                     "    %t = aten.t_.default(%p)\n    %y = aten.mul.Scalar(%p, 1)\n    return (%p, %y)\n",
                     2, I64(2, 3), 2, x);
    cr_expect_eq(live_allocations(), base);
}

/* c = x.clone(); m = c.mul_(2); c.t_(); s = m.add_(1): m is c's object, so
 * after t_ it is [3, 2] too. The parser typed s [2, 3], which tj_compile
 * refused ("the shape function gives float32[3, 2], the graph records
 * float32[2, 3]"), and functionalised s kept c's old shape. */
Test(hostile_objects, an_in_place_result_follows_an_in_place_view_of_its_self)
{
    int64_t base = live_allocations();
    const float want[] = {3, 9, 5, 11, 7, 13}; /* torch 1.13: (x.clone() * 2).t() + 1 */
    const char *text = "graph(%x : f32[2, 3]):\n    %c = aten.clone.default(%x)\n"
                       "    %m = aten.mul_.Scalar(%c, 2)\n    %t = aten.t_.default(%c)\n"
                       "    %s = aten.add_.Scalar(%m, 1)\n    return (%s, %m, %c)\n";
    expect_every_run(text, 3, I64(3, 2), 2, want);
    cr_expect_eq(live_allocations(), base);
}
