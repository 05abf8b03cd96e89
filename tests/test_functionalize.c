/* Functionalisation: in-place calls become out-of-place ones, mutated inputs
 * become outputs written back into the inputs, views follow mutations. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracer/graph_internal.h"
#include "test_util.h"


TestSuite(functionalize, .init = test_scope_open, .fini = test_scope_close);

static tj_tensor *vec(int n, const float *v)
{
    int64_t s[1] = {n};
    return tj_tensor_from_data(TJ_FLOAT32, 1, s, v);
}

static void expect_values(const tj_tensor *t, const double *want, int n)
{
    test_expect_close(t, want, n, 0, 1e-6);
}

static int count_inplace(const tj_graph *g)
{
    int n = 0;
    for (int i = 0; i < tj_graph_num_nodes(g); i++)
        n += tj_graph_node_kind(g, i) == TJ_NODE_CALL && tj_op_is_inplace(tj_graph_node_op(g, i));
    return n;
}

/* Traces fn in fake mode on inputs shaped like `like` and functionalises. */
static tj_graph *trace_functional(tj_trace_fn fn, tj_tensor *const *like, int n, int *rewritten)
{
    tj_graph *g = tj_make_fx(fn, NULL, like, n, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    *rewritten = tj_pass_functionalize(g);
    cr_assert_geq(*rewritten, 0, "%s", tj_last_error());
    cr_expect_eq(count_inplace(g), 0, "no in-place call is left");
    return g;
}

/* base[0::2].add_(1) */
static tj_status add_to_every_other(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor *a = tj_slice(in[0], 0, true, 0, false, 0, 2);
    out[0] = tj_add_scalar_(a, tj_v_int(1), tj_v_int(1));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(functionalize, mutation_through_a_slice_of_an_input_updates_the_base)
{
    float ones[4] = {1, 1, 1, 1};
    tj_tensor *example = vec(4, ones);
    int rewritten;
    tj_graph *g = trace_functional(add_to_every_other, &example, 1, &rewritten);
    cr_expect_eq(rewritten, 1);
    cr_expect_eq(tj_graph_count_op(g, TJ_OPS(slice_scatter)), 1);
    cr_assert_eq(tj_graph_num_outputs(g), 2);
    cr_expect_eq(tj_graph_output_writeback(g, 0), -1);
    cr_expect_eq(tj_graph_output_writeback(g, 1), 0, "the base is written back into input 0");

    tj_tensor *base = vec(4, ones), *outs[2];
    cr_assert_eq(tj_graph_run(g, &base, 1, outs), TJ_OK, "%s", tj_last_error());
    double want[4] = {2, 1, 2, 1}, slice[2] = {2, 2};
    expect_values(base, want, 4);
    expect_values(outs[0], slice, 2);
    cr_expect_eq(outs[1], base, "a written-back output is the input itself");
    tj_graph_free(g);
}

/* x.add_(1) where the caller's x is a strided view of a larger base */
static tj_status add_one(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    *n_out = 0;
    return tj_add_scalar_(in[0], tj_v_int(1), tj_v_int(1)) ? TJ_OK : tj_last_status();
}

Test(functionalize, an_input_that_is_a_view_is_written_back_through_its_strides)
{
    float ones[4] = {1, 1, 1, 1};
    tj_tensor *base = vec(4, ones), *a = tj_slice(base, 0, true, 0, false, 0, 2);
    int rewritten;
    tj_graph *g = trace_functional(add_one, &a, 1, &rewritten);
    cr_assert_eq(tj_graph_num_outputs(g), 1);
    cr_expect_eq(tj_graph_output_writeback(g, 0), 0);
    tj_tensor *out;
    cr_assert_eq(tj_graph_run(g, &a, 1, &out), TJ_OK, "%s", tj_last_error());
    double want[4] = {2, 1, 2, 1};
    expect_values(base, want, 4);
    tj_graph_free(g);
}

/* v = x.view(2, 2); x.mul_(2); return v + 0: the view sees the mutation */
static tj_status view_then_mutate_base(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    int64_t s[2] = {2, 2};
    tj_tensor *v = tj_view(in[0], s, 2);
    if (!tj_mul_scalar_(in[0], tj_v_int(2))) return tj_last_status();
    out[0] = tj_add_scalar(v, tj_v_int(0));
    out[1] = v;
    *n_out = 2;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(functionalize, views_taken_before_a_mutation_are_regenerated_from_the_new_value)
{
    float x0[4] = {1, 2, 3, 4};
    tj_tensor *example = vec(4, x0);
    int rewritten;
    tj_graph *g = trace_functional(view_then_mutate_base, &example, 1, &rewritten);
    tj_tensor *x = vec(4, x0), *outs[3];
    cr_assert_eq(tj_graph_num_outputs(g), 3);
    cr_assert_eq(tj_graph_run(g, &x, 1, outs), TJ_OK, "%s", tj_last_error());
    double want[4] = {2, 4, 6, 8};
    expect_values(outs[0], want, 4);
    expect_values(outs[1], want, 4);
    expect_values(x, want, 4);
    tj_graph_free(g);
}

/* x.t().select(0, 1).zero_() on x [2, 3]: a chain of two views */
static tj_status zero_column(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor *col = tj_select(tj_t(in[0]), 0, 1);
    if (!tj_zero_(col)) return tj_last_status();
    out[0] = tj_sum(in[0], -1);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(functionalize, mutation_through_a_chain_of_views_reaches_the_input)
{
    float x0[6] = {1, 2, 3, 4, 5, 6};
    int64_t s[2] = {2, 3};
    tj_tensor *example = tj_tensor_from_data(TJ_FLOAT32, 2, s, x0);
    int rewritten;
    tj_graph *g = trace_functional(zero_column, &example, 1, &rewritten);
    cr_expect_eq(tj_graph_count_op(g, TJ_OPS(select_scatter)), 1);
    cr_expect_eq(tj_graph_count_op(g, TJ_OPS(zero)), 1);
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 2, s, x0), *outs[2];
    cr_assert_eq(tj_graph_run(g, &x, 1, outs), TJ_OK, "%s", tj_last_error());
    double want[6] = {1, 0, 3, 4, 0, 6}, sum[1] = {14};
    expect_values(x, want, 6);
    expect_values(outs[0], sum, 1);
    tj_graph_free(g);
}

/* x.t().select(0, 1).zero_(); v = x.view(6) (x's new value is a transposed
 * view now); x.add_(1); return v.sum() */
static tj_status mutate_then_view(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    int64_t s[1] = {6};
    if (!tj_zero_(tj_select(tj_t(in[0]), 0, 1))) return tj_last_status();
    tj_tensor *v = tj_view(in[0], s, 1);
    if (!tj_add_scalar_(in[0], tj_v_int(1), tj_v_int(1))) return tj_last_status();
    out[0] = tj_sum(v, -1);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(functionalize, a_view_of_a_value_whose_layout_changed_still_follows_later_mutations)
{
    float x0[6] = {1, 2, 3, 4, 5, 6};
    int64_t s[2] = {2, 3};
    tj_tensor *example = tj_tensor_from_data(TJ_FLOAT32, 2, s, x0);
    int rewritten;
    tj_graph *g = trace_functional(mutate_then_view, &example, 1, &rewritten);
    cr_expect_eq(rewritten, 2);
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 2, s, x0), *outs[2];
    cr_assert_eq(tj_graph_run(g, &x, 1, outs), TJ_OK, "%s", tj_last_error());
    double want[6] = {2, 1, 4, 5, 1, 7}, sum[1] = {20};
    expect_values(x, want, 6);
    expect_values(outs[0], sum, 1);
    tj_graph_free(g);
}

/* c = x.unsqueeze(0).permute(0, 2, 1).squeeze(0); c.mul_(2);
 * x.view(3, 2).transpose(0, 1).add_(1); return c */
static tj_status mutate_through_reshaping_views(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    int64_t perm[3] = {0, 2, 1}, s[2] = {3, 2};
    tj_tensor *c = tj_squeeze_dim(tj_permute(tj_unsqueeze(in[0], 0), perm, 3), 0);
    if (!tj_mul_scalar_(c, tj_v_int(2))) return tj_last_status();
    if (!tj_add_scalar_(tj_transpose(tj_view(in[0], s, 2), 0, 1), tj_v_int(1), tj_v_int(1))) return tj_last_status();
    out[0] = c;
    *n_out = 1;
    return TJ_OK;
}

Test(functionalize, mutations_through_permute_squeeze_unsqueeze_view_and_transpose_reach_the_base)
{
    float x0[6] = {1, 2, 3, 4, 5, 6};
    int64_t s[2] = {2, 3};
    tj_tensor *example = tj_tensor_from_data(TJ_FLOAT32, 2, s, x0);
    int rewritten;
    tj_graph *g = trace_functional(mutate_through_reshaping_views, &example, 1, &rewritten);
    cr_expect_eq(rewritten, 2);
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 2, s, x0), *outs[2];
    cr_assert_eq(tj_graph_run(g, &x, 1, outs), TJ_OK, "%s", tj_last_error());
    double want[6] = {3, 5, 7, 9, 11, 13}, c[6] = {3, 9, 5, 11, 7, 13};
    expect_values(x, want, 6);
    expect_values(outs[0], c, 6);
    tj_graph_free(g);
}

/* x.copy_(y): the copied value itself, no copy node */
static tj_status copy_into_first(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    *n_out = 0;
    return tj_copy_(in[0], tj_mul_scalar(in[1], tj_v_int(3))) ? TJ_OK : tj_last_status();
}

Test(functionalize, copy_of_a_same_typed_value_writes_that_value_back)
{
    float a0[2] = {0, 0}, b0[2] = {1, 2};
    tj_tensor *ex[2] = {vec(2, a0), vec(2, b0)};
    int rewritten;
    tj_graph *g = trace_functional(copy_into_first, ex, 2, &rewritten);
    cr_expect_eq(tj_graph_count_op(g, TJ_OPS(copy)), 0);
    cr_expect_eq(tj_graph_num_calls(g), 1, "only the mul is left");
    tj_tensor *in[2] = {vec(2, a0), vec(2, b0)}, *out;
    cr_assert_eq(tj_graph_run(g, in, 2, &out), TJ_OK, "%s", tj_last_error());
    double want[2] = {3, 6};
    expect_values(in[0], want, 2);
    tj_graph_free(g);
}

Test(functionalize, the_writeback_survives_a_print_parse_round_trip)
{
    float ones[4] = {1, 1, 1, 1};
    tj_tensor *example = vec(4, ones);
    int rewritten;
    tj_graph *g = trace_functional(add_to_every_other, &example, 1, &rewritten);
    char *text = tj_graph_to_string(g);
    cr_assert_not_null(text);
    cr_expect(strstr(text, "writeback {1: 0}"), "%s", text);
    tj_graph *h = tj_graph_parse(text);
    cr_assert_not_null(h, "%s\n%s", tj_last_error(), text);
    cr_expect_eq(tj_graph_output_writeback(h, 1), 0);
    char *again = tj_graph_to_string(h);
    cr_expect_str_eq(again, text);
    tj_tensor *base = vec(4, ones), *outs[2];
    cr_assert_eq(tj_graph_run(h, &base, 1, outs), TJ_OK, "%s", tj_last_error());
    double want[4] = {2, 1, 2, 1};
    expect_values(base, want, 4);
    free(text);
    free(again);
    tj_graph_free(g);
    tj_graph_free(h);
}

/* A graph returning an input it also writes back (or a view of it) returns
 * the input's value as the graph computed with it, from before the
 * write-back: tj_graph_run gave the input itself, whose values the
 * write-back then changed, where tj_plan_run gives a copy taken before. */
Test(functionalize, an_input_returned_beside_its_write_back_keeps_its_old_value)
{
    tj_graph *g = tj_graph_parse("graph(%x : f32[3]):\n"
                                 "    %neg = aten.neg.default(%x)\n"
                                 "    %slice_1 = aten.slice.Tensor(%x, 0, 1, 3)\n"
                                 "    return (%neg, %x, %slice_1) writeback {0: 0}\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    const float v[3] = {1, 2, 3}, neg[3] = {-1, -2, -3};
    for (int planned = 0; planned < 2; planned++) {
        tj_tensor *x = test_f32(1, (int64_t[]){3}, v), *outs[3];
        tj_status st = planned ? tj_plan_run(p, &x, 1, outs) : tj_graph_run(g, &x, 1, outs);
        cr_assert_eq(st, TJ_OK, "%s", tj_last_error());
        test_expect_f32(x, neg, 3, 0);
        cr_expect_eq(outs[0], x, "the written-back output is the input tensor");
        test_expect_f32(outs[1], v, 3, 0);
        test_expect_f32(outs[2], v + 1, 2, 0);
    }
    tj_plan_free(p);
    tj_graph_free(g);
}

Test(functionalize, bad_writeback_text_is_a_parse_error)
{
    const char *text = "graph(%x : f32[2]):\n    %add = aten.add.Scalar(%x, 1)\n    return (%add,) writeback {0: 3}\n";
    cr_expect_null(tj_graph_parse(text));
    cr_expect_eq(tj_last_status(), TJ_ERR_PARSE);
    cr_expect(strstr(tj_last_error(), "writeback"), "%s", tj_last_error());
}

Test(functionalize, the_interpreted_in_place_graph_and_the_functional_one_agree)
{
    float x0[6] = {1, 2, 3, 4, 5, 6};
    int64_t s[2] = {2, 3};
    tj_tensor *example = tj_tensor_from_data(TJ_FLOAT32, 2, s, x0);
    tj_graph *g = tj_make_fx(zero_column, NULL, &example, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g);
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 2, s, x0), *out;
    cr_assert_eq(tj_graph_run(g, &x, 1, &out), TJ_OK, "%s", tj_last_error());
    double want[6] = {1, 0, 3, 4, 0, 6};
    expect_values(x, want, 6);
    cr_expect_eq(tj_pass_functionalize(g), 1);
    cr_expect_eq(tj_pass_functionalize(g), 0, "a functional graph is left alone");
    tj_graph_free(g);
}

/* x.expand(2, 2).add_(1): many elements share one memory location */
static tj_status add_through_expand(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    int64_t s[2] = {2, 2};
    *n_out = 0;
    return tj_add_scalar_(tj_expand(in[0], s, 2), tj_v_int(1), tj_v_int(1)) ? TJ_OK : tj_last_status();
}

Test(functionalize, mutation_through_an_expand_is_refused_while_tracing)
{
    /* in-place operators refuse a self whose elements share memory (as
     * PyTorch does), so such a mutation never reaches the pass */
    float x0[2] = {1, 2};
    tj_tensor *example = vec(2, x0);
    cr_expect_null(tj_make_fx(add_through_expand, NULL, &example, 1, NULL, TJ_TRACE_FAKE));
    cr_expect_eq(tj_last_status(), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "aten::add_.Scalar: unsupported operation: more than one element"), "%s",
              tj_last_error());
}

/* y = x.clone(); y.mul_(d); y.div_(d); x.mul_(d): a float32 self with a
 * float64 operand computes in float64 and rounds into self's float32 at each
 * call (PyTorch's in-place type promotion). */
static tj_status promote_in_place(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_clone(in[0]);
    if (!tj_mul_(y, in[1]) || !tj_div_(y, in[1]) || !tj_mul_(in[0], in[1])) return tj_last_status();
    out[0] = y;
    *n_out = 1;
    return TJ_OK;
}

Test(functionalize, an_in_place_call_keeps_self_dtype_after_promotion)
{
    const float x0[3] = {0.1f, 0.7f, 1.3f};
    int64_t s[1] = {3};
    tj_tensor *d = test_f64(1, s, (double[]){3, 0.3, 7.1});
    tj_tensor *xe = vec(3, x0), *eager = NULL;
    int n;
    cr_assert_eq(promote_in_place(NULL, (tj_tensor *[]){xe, d}, 2, &eager, &n), TJ_OK, "%s", tj_last_error());
    int rewritten;
    tj_graph *g = trace_functional(promote_in_place, (tj_tensor *[]){vec(3, x0), d}, 2, &rewritten);
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    /* y, then x's new value, written back */
    cr_assert_eq(tj_graph_num_outputs(g), 2);
    tj_tensor *x = vec(3, x0), *out[2];
    cr_assert_eq(tj_plan_run(p, (tj_tensor *[]){x, d}, 2, out), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_dtype(out[0]), TJ_FLOAT32);
    float got[3], want[3], gx[3], wx[3];
    cr_assert_eq(tj_tensor_copy_to(out[0], got), TJ_OK);
    cr_assert_eq(tj_tensor_copy_to(eager, want), TJ_OK);
    cr_assert_eq(tj_tensor_copy_to(x, gx), TJ_OK);
    cr_assert_eq(tj_tensor_copy_to(xe, wx), TJ_OK);
    cr_expect_eq(memcmp(got, want, sizeof got), 0, "the result's bits are eager's");
    cr_expect_eq(memcmp(gx, wx, sizeof gx), 0, "the written-back input's bits are eager's");
    tj_plan_free(p);
    tj_graph_free(g);
}

/* in[0].add_(1); in[1].mul_(2); return in[0] + in[1] */
static tj_status add_then_mul(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    if (!tj_add_scalar_(in[0], tj_v_int(1), tj_v_int(1)) || !tj_mul_scalar_(in[1], tj_v_int(2)))
        return tj_last_status();
    out[0] = tj_add(in[0], in[1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static void expect_alias_refused(tj_status st, const char *who, int written, int other)
{
    char want[96];
    snprintf(want, sizeof want, "input %d (%%arg%d_1) is written back to but shares memory with input %d", written,
             written, other);
    cr_expect_eq(st, TJ_ERR_INVALID_ARGUMENT, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), who) && strstr(tj_last_error(), want), "%s", tj_last_error());
}

/* A functional graph computes every new value from the inputs as they were
 * and writes them back at the end, so inputs sharing memory would see none
 * of each other's writes: the same tensor passed twice (tied weights) ends
 * as 2 4 6 (in[1]'s write-back wins) where eager, and the graph before the
 * pass, give (x + 1) * 2 = 4 6 8 and 8 12 16. Such a run is refused,
 * nothing written, as is one on two overlapping views. */
Test(functionalize, a_written_back_input_sharing_memory_with_another_input_is_refused)
{
    const float x0[4] = {1, 2, 3, 4};
    tj_tensor *fake[2] = {tj_tensor_fake(TJ_FLOAT32, 1, (int64_t[]){3}), tj_tensor_fake(TJ_FLOAT32, 1, (int64_t[]){3})};
    tj_graph *g = tj_make_fx(add_then_mul, NULL, fake, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor *x = vec(3, x0), *out[3] = {0};
    cr_assert_eq(tj_graph_run(g, (tj_tensor *[]){x, x}, 2, out), TJ_OK, "%s", tj_last_error());
    expect_values(x, (double[]){4, 6, 8}, 3);
    expect_values(out[0], (double[]){8, 12, 16}, 3);
    cr_assert_eq(tj_pass_functionalize(g), 2, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    x = vec(3, x0);
    expect_alias_refused(tj_graph_run(g, (tj_tensor *[]){x, x}, 2, out), "tj_graph_run", 0, 1);
    expect_alias_refused(tj_plan_run(p, (tj_tensor *[]){x, x}, 2, out), "tj_plan_run", 0, 1);
    expect_values(x, (double[]){1, 2, 3}, 3);
    /* overlapping views of one buffer: [1, 2, 3] and [2, 3, 4] */
    tj_tensor *base = vec(4, x0);
    tj_tensor *in[2] = {tj_slice(base, 0, true, 0, true, 3, 1), tj_slice(base, 0, true, 1, true, 4, 1)};
    expect_alias_refused(tj_plan_run_into(p, in, 2, NULL), "tj_plan_run_into", 0, 1);
    expect_alias_refused(tj_graph_run(g, in, 2, out), "tj_graph_run", 0, 1);
    expect_values(base, (double[]){1, 2, 3, 4}, 4);
    /* disjoint views of one buffer are separate tensors: [1, 2] and [3, 4] */
    tj_tensor *fake2[2] = {tj_tensor_fake(TJ_FLOAT32, 1, (int64_t[]){2}), tj_tensor_fake(TJ_FLOAT32, 1, (int64_t[]){2})};
    tj_graph *g2 = tj_make_fx(add_then_mul, NULL, fake2, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g2, "%s", tj_last_error());
    cr_assert_eq(tj_pass_functionalize(g2), 2, "%s", tj_last_error());
    tj_plan *p2 = tj_compile(g2, NULL);
    cr_assert_not_null(p2, "%s", tj_last_error());
    tj_tensor *halves[2] = {tj_slice(base, 0, true, 0, true, 2, 1), tj_slice(base, 0, true, 2, true, 4, 1)};
    cr_assert_eq(tj_plan_run(p2, halves, 2, out), TJ_OK, "%s", tj_last_error());
    expect_values(base, (double[]){2, 3, 6, 8}, 4);
    expect_values(out[0], (double[]){8, 11}, 2);
    tj_plan_free(p2);
    tj_graph_free(g2);
    tj_plan_free(p);
    tj_graph_free(g);
}

/* A bound placeholder (as tj_graph_print writes an as_strided gradient's
 * input) keeps its geometry and bind through the rebuilt graph, whose
 * arena replaces the one the parser copied the reason into: printed the
 * same, and a run with other strides refused naming the reason. */
Test(functionalize, a_bound_input_stays_bound_in_the_rebuilt_graph)
{
    tj_graph *g = tj_graph_parse("graph(%x : f32[2, 2]{1, 2} offset 1 bound \"aten::as_strided's gradient\"):\n"
                                 "    %add = aten.add_.Scalar(%x, 1)\n"
                                 "    return (%add,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_assert_eq(tj_pass_functionalize(g), 1, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect(strstr(text, "graph(%x : f32[2, 2]{1, 2} offset 1 bound \"aten::as_strided's gradient\"):\n"), "%s", text);
    free(text);
    tj_tensor *x = vec(4, (float[]){1, 2, 3, 4}), *in[1] = {tj_view(x, (int64_t[]){2, 2}, 2)}, *out[1];
    cr_expect_eq(tj_graph_run(g, in, 1, out), TJ_ERR_INVALID_ARGUMENT, "other strides accepted");
    cr_expect(strstr(tj_last_error(), "has strides [2, 1] and storage offset 0") &&
                  strstr(tj_last_error(), "(aten::as_strided's gradient reads them)"),
              "%s", tj_last_error());
    tj_tensor_release(in[0]);
    tj_tensor_release(x);
    tj_graph_free(g);
}

/* ---- writes through expand ----
 * (fill_, zero_ and x.expand(4, 3)[1].add_(10) in every mode:
 * test_inplace_views.c.) The pass writes back through an expand only a
 * write giving every index of a broadcast dim one value; any other is
 * refused, never replayed into wrong values. Eager values from PyTorch 1.13
 * (/usr/bin/python3). */

static tj_tensor *vec3(void) { return vec(3, (float[]){1.5f, -2, 4}); }

/* x.expand(4, 3)[:, :2][1].add_(1): eagerly x[:2] + 1 = [2.5, -1, 4]; the
 * slice along the other dim keeps the broadcast rows of one element each,
 * and the write reaches row 1 alone */
static tj_status add_to_a_row_of_a_slice_of_an_expand(void *ctx, tj_tensor *const *in, int n, tj_tensor **out,
                                                     int *n_out)
{
    tj_tensor *cols = tj_slice(tj_expand(in[0], (int64_t[]){4, 3}, 2), 1, true, 0, true, 2, 1);
    *n_out = 0;
    return tj_add_scalar_(tj_select(cols, 0, 1), tj_v_int(1), tj_v_int(1)) ? TJ_OK : tj_last_status();
}

/* x.expand(4, 3).index_put_((tensor([1]),), tensor(9.)): eagerly (PyTorch
 * warns that this is deprecated) row 1 is x's one row: [9, 9, 9] */
static tj_status index_put_into_an_expand(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor *index = tj_tensor_from_data(TJ_INT64, 1, (int64_t[]){1}, (int64_t[]){1});
    tj_tensor *e = tj_expand(in[0], (int64_t[]){4, 3}, 2);
    *n_out = 0;
    return tj_index_put_(e, &index, 1, tj_scalar_tensor(tj_v_float(9), TJ_FLOAT32), false) ? TJ_OK
                                                                                            : tj_last_status();
}

/* x.expand(4, 3).index_fill_(0, tensor([1]), 9): eagerly row 1 is x's one
 * row: [9, 9, 9] */
static tj_status index_fill_a_row_of_an_expand(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor *index = tj_tensor_from_data(TJ_INT64, 1, (int64_t[]){1}, (int64_t[]){1});
    *n_out = 0;
    return tj_index_fill_(tj_expand(in[0], (int64_t[]){4, 3}, 2), 0, index, tj_v_int(9)) ? TJ_OK : tj_last_status();
}

/* x.expand(3, 3).diagonal().add_(1): the diagonal is one element each of x */
static tj_status add_to_the_diagonal_of_an_expand(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor *d = tj_diagonal(tj_expand(in[0], (int64_t[]){3, 3}, 2), 0, 0, 1);
    *n_out = 0;
    return tj_add_scalar_(d, tj_v_int(1), tj_v_int(1)) ? TJ_OK : tj_last_status();
}

Test(functionalize, a_write_of_several_values_through_an_expand_runs_unfunctionalised_and_is_refused_by_the_pass)
{
    const struct {
        tj_trace_fn fn;
        double want[3];
    } cases[] = {
        {add_to_a_row_of_a_slice_of_an_expand, {2.5, -1, 4}},
        {index_put_into_an_expand, {9, 9, 9}},
        {index_fill_a_row_of_an_expand, {9, 9, 9}},
        {add_to_the_diagonal_of_an_expand, {2.5, -1, 5}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        tj_tensor *x = vec3(), *out;
        int n_out;
        cr_assert_eq(cases[c].fn(NULL, &x, 1, &out, &n_out), TJ_OK, "case %zu eagerly: %s", c, tj_last_error());
        expect_values(x, cases[c].want, 3);
        tj_graph *g = tj_make_fx(cases[c].fn, NULL, (tj_tensor *[]){vec3()}, 1, NULL, TJ_TRACE_FAKE);
        cr_assert_not_null(g, "case %zu: %s", c, tj_last_error());
        x = vec3();
        cr_assert_eq(tj_graph_run(g, &x, 1, &out), TJ_OK, "case %zu: %s", c, tj_last_error());
        expect_values(x, cases[c].want, 3);
        cr_expect_eq(tj_pass_functionalize(g), -1, "case %zu", c);
        cr_expect_eq(tj_last_status(), TJ_ERR_UNSUPPORTED);
        cr_expect(strstr(tj_last_error(), "tj_pass_functionalize: a mutation writes different values to elements of "
                         "aten::expand's result %expand that are one element of its input"),
                  "case %zu: %s", c, tj_last_error());
        tj_graph_free(g);
    }
}

/* The core table writes index_put_ and index_fill_ back with copy_, which
 * cannot give an expanded self the values the kernels leave along a
 * broadcast dim: refused, naming the operator */
Test(functionalize, the_core_table_refuses_index_put_and_index_fill_of_rows_of_an_expand)
{
    const struct {
        tj_trace_fn fn;
        const char *op;
    } cases[] = {{index_put_into_an_expand, "aten::index_put_"},
                 {index_fill_a_row_of_an_expand, "aten::index_fill_.int_Scalar"}};
    tj_decomp_table *core = tj_core_decompositions();
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        tj_clear_error();
        cr_expect_null(tj_make_fx(cases[c].fn, NULL, (tj_tensor *[]){vec3()}, 1, core, TJ_TRACE_FAKE));
        cr_expect_eq(tj_last_status(), TJ_ERR_UNSUPPORTED);
        char want[256];
        snprintf(want, sizeof want, "%s: the decomposition cannot write a self of shape [4, 3] and strides [0, 1] "
                 "whose elements share memory with values that differ along its broadcast (stride-0) dims",
                 cases[c].op);
        cr_expect(strstr(tj_last_error(), want), "%s", tj_last_error());
    }
    tj_decomp_table_free(core);
}

/* x = arange(5.); x.unfold(0, 2, 1).fill_(7) -> x all 7 (PyTorch 1.13):
 * overlapping windows, not a broadcast, which the core table's fill_ has
 * no narrowing for */
static tj_status fill_unfold_windows(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    *n_out = 0;
    return tj_fill_(tj_unfold(in[0], 0, 2, 1), tj_v_float(7)) ? TJ_OK : tj_last_status();
}

Test(functionalize, the_core_table_refuses_fill_of_overlapping_windows_which_eager_allows)
{
    tj_tensor *x = vec(5, (float[]){0, 1, 2, 3, 4}), *out;
    int n_out;
    cr_assert_eq(fill_unfold_windows(NULL, &x, 1, &out, &n_out), TJ_OK, "%s", tj_last_error());
    expect_values(x, (double[]){7, 7, 7, 7, 7}, 5);
    tj_decomp_table *core = tj_core_decompositions();
    cr_expect_null(tj_make_fx(fill_unfold_windows, NULL, &x, 1, core, TJ_TRACE_FAKE));
    cr_expect_eq(tj_last_status(), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "aten::fill_.Scalar: the decomposition cannot write a self of shape [4, 2] "
                     "and strides [1, 1] whose elements share memory other than along broadcast (stride-0) dims"),
              "%s", tj_last_error());
    tj_decomp_table_free(core);
}

/* zero_ on an input that is itself expanded: eager and the graph with the
 * in-place call write it; a functional graph would write it back with
 * copy_, which no expanded destination takes: refused before the run,
 * alike by the interpreter and a plan, the base unchanged */
static tj_status zero_the_input(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    *n_out = 0;
    return tj_zero_(in[0]) ? TJ_OK : tj_last_status();
}

Test(functionalize, a_written_back_input_whose_elements_share_memory_is_refused_alike_by_run_and_plan)
{
    tj_tensor *base = vec3(), *x = tj_expand(base, (int64_t[]){4, 3}, 2), *out;
    tj_graph *g = tj_make_fx(zero_the_input, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_assert_eq(tj_graph_run(g, &x, 1, &out), TJ_OK, "%s", tj_last_error());
    expect_values(base, (double[]){0, 0, 0}, 3);
    cr_assert_eq(tj_pass_functionalize(g), 1, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    base = vec3();
    x = tj_expand(base, (int64_t[]){4, 3}, 2);
    tj_tensor *outs[1];
    const char *who[2] = {"tj_graph_run", "tj_plan_run"};
    tj_status st[2] = {tj_graph_run(g, &x, 1, outs), TJ_OK};
    char first[512];
    snprintf(first, sizeof first, "%s", tj_last_error());
    st[1] = tj_plan_run(p, &x, 1, outs);
    for (int k = 0; k < 2; k++) {
        const char *msg = k ? tj_last_error() : first;
        cr_expect_eq(st[k], TJ_ERR_INVALID_ARGUMENT, "%s: %s", who[k], msg);
        cr_expect(strstr(msg, who[k]) && strstr(msg, "input 0 (%arg0_1) is written back to but has elements that "
                  "share memory"), "%s", msg);
    }
    expect_values(base, (double[]){1.5, -2, 4}, 3);
    tj_plan_free(p);
    tj_graph_free(g);
}
