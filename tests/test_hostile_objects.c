/* Hostile graphs for tensor objects (breaker9): in graph text, a value
 * names a tensor object, and an in-place call's result names its self's
 * object too. An in-place view (t_, transpose_, unsqueeze_) gives that
 * object a new shape and strides, so a later read of self, or of any
 * earlier in-place result of it, reads the new geometry, as tj_graph_run
 * (eager semantics, and torch's FX interpreter) does. The parser's types,
 * tj_pass_functionalize and tj_compile read the geometry the name had when
 * it was made. And as_strided reads its input's storage, so a functional
 * graph replaying it over an input's new value holds for the input's
 * recorded layout only. */
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

/* x.neg_(); a = x.as_strided([2, 2], [1, 2], 1): as written, a reads the
 * caller's storage; functionalised, it read the new value of x laid out
 * row-major, so a transposed x gave [-3, -2, -5, -4] where eager gives
 * [-2, -4, -3, -5]. The functional graph now holds for x's recorded
 * geometry only, as a traced gradient's as_strided does. */
Test(hostile_objects, as_strided_of_a_mutated_input_binds_its_layout_when_functionalised)
{
    int64_t base = live_allocations();
    const char *text = "graph(%x : f32[2, 3]):\n    %n = aten.neg_.default(%x)\n"
                       "    %a = aten.as_strided.default(%x, [2, 2], [1, 2], 1)\n    return (%a,)\n";
    tj_graph *g = tj_graph_parse(text), *f = tj_graph_parse(text);
    cr_assert(g && f, "%s", tj_last_error());
    cr_assert_gt(tj_pass_functionalize(f), 0, "%s", tj_last_error());
    tj_plan *p = tj_compile(f, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    /* x = [[1, 2, 3], [4, 5, 6]] in row-major storage, or the same storage
     * seen transposed ([[1, 3, 5], [2, 4, 6]], strides [1, 2]); either way
     * eager negates the storage and reads its elements 1, 3, 2, 4 */
    const float want[] = {-2, -4, -3, -5};
    for (int transposed = 0; transposed < 2; transposed++)
        for (int run = 0; run < 3; run++) { /* as written, functionalised, its plan */
            tj_tensor *storage = ramp(2, transposed ? I64(3, 2) : I64(2, 3), 1);
            tj_tensor *x = transposed ? tj_t(storage) : tj_tensor_retain(storage);
            tj_tensor *out[2] = {NULL}; /* functionalised: a, and x's new value written back */
            tj_status st = run == 0 ? tj_graph_run(g, &x, 1, out) : run == 1 ? tj_graph_run(f, &x, 1, out)
                                                                             : tj_plan_run(p, &x, 1, out);
            if (run == 0 || !transposed) {
                cr_assert_eq(st, TJ_OK, "run %d: %s", run, tj_last_error());
                expect_values(out[0], want, 4);
            } else {
                cr_expect_null(out[0]);
                EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "input 0 (%x) has strides [1, 2]", "aten::as_strided");
            }
            tj_tensor_release(out[0]);
            tj_tensor_release(out[1]);
            tj_tensor_release(x);
            tj_tensor_release(storage);
        }
    tj_plan_free(p);
    tj_graph_free(f);
    tj_graph_free(g);
    /* two writes through as_strided: the second scatters into x's new value,
     * laid out row-major (transposed x: other elements than eager's) */
    f = tj_graph_parse("graph(%x : f32[2, 3]):\n    %a = aten.as_strided.default(%x, [2, 2], [1, 2], 1)\n"
                       "    %m = aten.mul_.Scalar(%a, 2)\n    %b = aten.add_.Scalar(%a, 1)\n    return (%b,)\n");
    cr_assert_not_null(f, "%s", tj_last_error());
    cr_assert_gt(tj_pass_functionalize(f), 0, "%s", tj_last_error());
    tj_tensor *storage = ramp(2, I64(3, 2), 1), *x = tj_t(storage), *out[2] = {NULL};
    cr_expect_neq(tj_graph_run(f, &x, 1, out), TJ_OK);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "input 0 (%x) has strides [1, 2]", "aten::as_strided");
    expect_values(storage, (const float[]){1, 2, 3, 4, 5, 6}, 6); /* untouched */
    tj_tensor_release(out[0]);
    tj_tensor_release(out[1]);
    tj_tensor_release(x);
    tj_tensor_release(storage);
    tj_graph_free(f);
    cr_expect_eq(live_allocations(), base);
}
