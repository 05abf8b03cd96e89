/* make_fx graphs read like PyTorch 1.13's: value names (arg0_1, sum_1,
 * abs_1) and the operators torch records without a decomposition table
 * (aten.stack, aten.mse_loss, aten.mse_loss_backward), which replay, carry
 * gradients and lower through the core table.
 *
 * The expected texts are torch 1.13's `make_fx(f)(x, y).code` for the same
 * function written in Python with f(*a) (so its placeholders are arg0_1,
 * arg1_1), rewritten in tjit's text form; the values are torch 1.13's for
 * the same inputs (float32), e.g.
 *     x = torch.tensor([[1.5, -2., 0.25], [3., 0.5, -1.]])
 *     y = torch.tensor([[0.5, 1., 0.25], [-1., 2., 4.]])
 *     torch.add(torch.sum(torch.stack([x, y], 1)), F.mse_loss(x, y))  # 17.875 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

TestSuite(fx_parity, .init = test_scope_open, .fini = test_scope_close);

static const float X[6] = {1.5f, -2.f, 0.25f, 3.f, 0.5f, -1.f};
static const float Y[6] = {0.5f, 1.f, 0.25f, -1.f, 2.f, 4.f};
static const int64_t S23[2] = {2, 3};

/* FX never names a value after a Python builtin: torch prints %sum_1,
 * %max_1, %slice_1 for the first aten.sum, aten.max, aten.slice.Tensor.
 * Graph text with the old names (%arg0, %sum) still reads back as written. */
static tj_status builtins(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *m = tj_max(in[0]);
    tj_tensor *s = tj_sum(tj_slice(in[0], 1, true, 0, true, 2, 1), -1);
    tj_tensor *t = tj_sum(in[0], -1);
    out[0] = tj_add(tj_add(s, t), m);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fx_parity, values_never_take_python_builtin_names)
{
    tj_tensor *x = test_f32(2, S23, X);
    tj_graph *g = tj_make_fx(builtins, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect_str_eq(text, "graph(%arg0_1 : f32[2, 3]):\n"
                           "    %max_1 = aten.max.default(%arg0_1)\n"
                           "    %slice_1 = aten.slice.Tensor(%arg0_1, 1, 0, 2)\n"
                           "    %sum_1 = aten.sum.default(%slice_1)\n"
                           "    %sum_2 = aten.sum.default(%arg0_1)\n"
                           "    %add = aten.add.Tensor(%sum_1, %sum_2)\n"
                           "    %add_1 = aten.add.Tensor(%add, %max_1)\n"
                           "    return (%add_1,)\n");
    free(text);
    tj_graph_free(g);
    test_expect_round_trip("graph(%arg0 : f32[2, 3]):\n"
                           "    %sum = aten.sum.default(%arg0)\n"
                           "    %sum_1 = aten.sum.default(%sum)\n"
                           "    return (%sum_1,)\n");
}

/* torch: l = F.mse_loss(x, y, reduction='sum'); gx, = torch.autograd.grad(l, [x]); return l, gx */
static tj_status mse_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]);
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK) return tj_last_status();
    out[0] = tj_mse_loss(x, in[1], 2);
    tj_status st = tj_autograd_grad(out, 1, NULL, &x, 1, &out[1]);
    *n_out = 2;
    return st;
}

Test(fx_parity, mse_loss_gradient_is_recorded_as_mse_loss_backward)
{
    tj_tensor *in[2] = {test_f32(2, S23, X), test_f32(2, S23, Y)};
    tj_graph *g = tj_make_fx(mse_grad, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    /* torch 1.13 records x.detach() as two detach nodes (the Python call and
     * the autograd kernel's own); tjit records the one call it makes */
    cr_expect(strstr(text, "%detach = aten.detach.default(%arg0_1)\n"), "%s", text);
    cr_expect(strstr(text, "%mse_loss = aten.mse_loss.default(%detach, %arg1_1, 2)\n"), "%s", text);
    /* torch 1.13 records the seed as ones_like(sum_1, dtype = torch.float32, layout = torch.strided, device =
     * device(type='cpu'), pin_memory = False, memory_format = torch.preserve_format): the layout, device,
     * pin_memory and memory_format arguments are always None here */
    cr_expect(strstr(text, "%ones_like = aten.ones_like.default(%mse_loss, dtype = torch.float32)\n"), "%s", text);
    cr_expect(strstr(text, "%mse_loss_backward = aten.mse_loss_backward.default(%ones_like, %detach, %arg1_1, 2)\n"),
              "%s", text);
    cr_expect_eq(tj_graph_num_calls(g), 4, "%s", text); /* detach, mse_loss, ones_like, mse_loss_backward */
    free(text);
    tj_tensor *out[2];
    cr_assert_eq(tj_graph_run(g, in, 2, out), TJ_OK, "%s", tj_last_error());
    test_expect_f32(out[0], (const float[]){53.25f}, 1, 0);
    test_expect_f32(out[1], (const float[]){2, -6, 0, 8, -3, -10}, 6, 0);
    tj_graph_free(g);
}

Test(fx_parity, mse_loss_and_its_gradient_match_torch)
{
    tj_tensor *x = test_f32(2, S23, X), *y = test_f32(2, S23, Y);
    test_expect_f32(tj_mse_loss(x, y, 0), (const float[]){1, 9, 0, 16, 2.25f, 25}, 6, 0);
    test_expect_f32(tj_mse_loss(x, y, 2), (const float[]){53.25f}, 1, 0);
    /* torch: F.mse_loss(x, y) = 8.875; aten.mse_loss_backward(ones(()), x, y, 1), (2 / 6) (x - y) in float32 */
    test_expect_f32(tj_mse_loss(x, y, 1), (const float[]){8.875f}, 1, 0);
    tj_tensor *g = tj_ones(NULL, 0, TJ_FLOAT32);
    test_expect_f32(tj_mse_loss_backward(g, x, y, 1),
                    (const float[]){0.3333333432674408f, -1.f, 0.f, 1.3333333730697632f, -0.5f, -1.6666667461395264f}, 6, 0);
    test_expect_f32(tj_mse_loss_backward(g, y, x, 2), (const float[]){-2, 6, 0, -8, 3, 10}, 6, 0);
    test_expect_error(tj_mse_loss(tj_ones((int64_t[]){2}, 1, TJ_INT64), tj_ones((int64_t[]){2}, 1, TJ_INT64), 1),
                      TJ_ERR_DTYPE, "aten::mse_loss", "int64");
    test_expect_error(tj_mse_loss(x, tj_ones((int64_t[]){2}, 1, TJ_FLOAT32), 1), TJ_ERR_SHAPE, "aten::mse_loss",
                      "[2, 3]");
    test_expect_error(tj_mse_loss_backward(g, x, y, 5), TJ_ERR_INVALID_ARGUMENT, "aten::mse_loss_backward", "5");
}

/* torch: torch.stack([x, y.double()], -1): float64, [2, 3, 2] */
Test(fx_parity, stack_kernel_promotes_and_checks_shapes)
{
    tj_tensor *x = test_f32(2, S23, X);
    tj_tensor *y = test_f64(2, S23, (const double[]){0.5, 1, 0.25, -1, 2, 4});
    tj_tensor *s = tj_stack((tj_tensor *[]){x, y}, 2, -1);
    test_assert_dtype_shape(s, TJ_FLOAT64, 3, (int64_t[]){2, 3, 2});
    test_expect_close(s, (const double[]){1.5, 0.5, -2, 1, 0.25, 0.25, 3, -1, 0.5, 2, -1, 4}, 12, 0, 0);
    tj_tensor *a = tj_scalar_tensor(tj_v_float(2), TJ_FLOAT32), *b = tj_scalar_tensor(tj_v_float(-3), TJ_FLOAT32);
    tj_tensor *ab = tj_stack((tj_tensor *[]){a, b}, 2, 0);
    test_assert_dtype_shape(ab, TJ_FLOAT32, 1, (int64_t[]){2});
    test_expect_f32(ab, (const float[]){2, -3}, 2, 0);
    test_expect_error(tj_stack((tj_tensor *[]){x, tj_t(x)}, 2, 0), TJ_ERR_SHAPE, "aten::stack",
                      "expects each tensor to be equal size, but got [2, 3] at entry 0 and [3, 2] at entry 1");
    test_expect_error(tj_stack((tj_tensor *[]){x, x}, 2, 3), TJ_ERR_INDEX, "aten::stack", "3");
    test_expect_error(tj_stack(NULL, 0, 0), TJ_ERR_INVALID_ARGUMENT, "aten::stack", "non-empty");
    /* the gradient of each input is its slice of the gradient */
    tj_tensor *xr = tj_tensor_detach(x);
    tj_tensor_set_requires_grad(xr, true);
    tj_tensor *w = test_f32(3, (int64_t[]){2, 2, 3}, (const float[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    tj_tensor *gx = test_grad1(xr, tj_stack((tj_tensor *[]){x, xr}, 2, 1), w);
    test_expect_f32(gx, (const float[]){4, 5, 6, 10, 11, 12}, 6, 0);
}

/* torch: return torch.add(torch.sum(torch.stack([x, y], 1)), F.mse_loss(x, y)), torch.abs(x) */
static tj_status stack_mse(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *s = tj_stack(in, 2, 1);
    tj_tensor *l = tj_mse_loss(in[0], in[1], 1);
    out[0] = tj_add(tj_sum(s, -1), l);
    out[1] = tj_abs(in[0]);
    *n_out = 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

Test(fx_parity, stack_and_mse_loss_graph_prints_as_torch_make_fx)
{
    tj_tensor *in[2] = {test_f32(2, S23, X), test_f32(2, S23, Y)};
    for (int mode = 0; mode < 2; mode++) {
        tj_graph *g = tj_make_fx(stack_mse, NULL, in, 2, NULL, mode ? TJ_TRACE_FAKE : TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s", tj_last_error());
        char *text = tj_graph_to_string(g);
        cr_expect_str_eq(text, "graph(%arg0_1 : f32[2, 3], %arg1_1 : f32[2, 3]):\n"
                               "    %stack = aten.stack.default([%arg0_1, %arg1_1], 1)\n"
                               "    %mse_loss = aten.mse_loss.default(%arg0_1, %arg1_1)\n"
                               "    %sum_1 = aten.sum.default(%stack)\n"
                               "    %add = aten.add.Tensor(%sum_1, %mse_loss)\n"
                               "    %abs_1 = aten.abs.default(%arg0_1)\n"
                               "    return (%add, %abs_1)\n");
        test_expect_round_trip(text);
        free(text);
        tj_graph_free(g);
    }
}

/* Eager, the graph and the compiled plan agree bit for bit; the core table
 * lowers both composites (and mse_loss_backward) to primitives whose values
 * are within rounding of the kernels'. */
static tj_status stack_mse_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]);
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK) return tj_last_status();
    tj_tensor *pair[2] = {x, in[1]};
    tj_tensor *s = tj_stack(pair, 2, -1);
    tj_tensor *l = tj_mse_loss(tj_mul(s, s), tj_stack(pair, 2, 2), 1);
    tj_status st = tj_autograd_grad(&l, 1, NULL, &x, 1, &out[0]);
    out[1] = l;
    *n_out = 2;
    return st;
}

Test(fx_parity, stack_and_mse_loss_replay_bit_identically_and_lower_to_primitives)
{
    tj_tensor *in[2] = {test_random_f32(2, (int64_t[]){4, 5}, 1), test_random_f32(2, (int64_t[]){4, 5}, 2)};
    tj_tensor *eager[2];
    int n_eager;
    cr_assert_eq(stack_mse_grad(NULL, in, 2, eager, &n_eager), TJ_OK, "%s", tj_last_error());
    tj_graph *g = tj_make_fx(stack_mse_grad, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::stack")), 2);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::mse_loss")), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::mse_loss_backward")), 2); /* x is in self and target */
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::cat")), 0);
    tj_tensor *run[2];
    cr_assert_eq(tj_graph_run(g, in, 2, run), TJ_OK, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *planned[2];
    cr_assert_eq(tj_plan_run(p, in, 2, planned), TJ_OK, "%s", tj_last_error());
    tj_tensor *core[2];
    cr_expect(test_run_core(stack_mse_grad, NULL, in, 2, core));
    for (int i = 0; i < 2; i++) {
        test_expect_same(run[i], eager[i], "tj_graph_run");
        test_expect_same(planned[i], eager[i], "tj_plan_run");
        int64_t n = tj_tensor_numel(eager[i]);
        double want[20];
        for (int64_t k = 0; k < n; k++) want[k] = tj_tensor_item_at(eager[i], k);
        test_expect_close(core[i], want, n, 1e-5, 1e-7);
    }
    tj_plan_free(p);
    tj_graph_free(g);
}

/* torch: y = torch.scatter_reduce(x, 1, index, src, reduce, include_self=inc);
 * return torch.autograd.grad(y, [x, src], go), x and src leaves that require
 * grad. scatter_reduce_backward (FunctionsManual.cpp) compares self and src
 * with the result anew for the masks it multiplies by, bool by float. */
typedef struct scatter_reduce_case {
    const char *reduce;
    bool include_self;
    float gself[6], gsrc[8];
} scatter_reduce_case;

static tj_status scatter_reduce_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    const scatter_reduce_case *c = ctx;
    tj_tensor *x = tj_tensor_detach(in[0]), *src = tj_tensor_detach(in[1]);
    if (!x || !src || tj_tensor_set_requires_grad(x, true) != TJ_OK || tj_tensor_set_requires_grad(src, true) != TJ_OK)
        return tj_last_status();
    tj_tensor *y = tj_scatter_reduce(x, 1, in[2], src, c->reduce, c->include_self);
    *n_out = 2;
    return y ? tj_autograd_grad(&y, 1, &in[3], (tj_tensor *[]){x, src}, 2, out) : tj_last_status();
}

/* The ties share the gradient: torch 1.13's gradients on these inputs. */
Test(fx_parity, scatter_reduce_amax_and_amin_gradients_split_ties_as_torch)
{
    const scatter_reduce_case cases[] = {
        {"amax", true, {0.25f, 0, 0.125f, -0.5f, 0, 2}, {0.25f, 1, 0, 0.125f, 0, 2, 2, -0.5f}},
        {"amax", false, {0, 0, 0, 0, 0, 0}, {0.25f, 1, 0, 0.125f, 0, 2, 2, -0.5f}},
        {"amin", true, {0, 1, 0.125f, -0.5f, 0, 2}, {0, 0, 0.5f, 0.125f, 2, 0, 2, -0.5f}},
        {"amin", false, {0, 0, 0, 0, 0, 0}, {0, 1, 0.5f, 0.125f, 2, 0, 2, -0.5f}},
    };
    const int64_t s24[2] = {2, 4};
    tj_tensor *in[4] = {test_f32(2, S23, X), test_f32(2, s24, (const float[]){1.5f, 0.5f, -3, 0.25f, -1, 2, -1, 3}),
                        test_i64(2, s24, (const int64_t[]){0, 1, 0, 2, 1, 1, 2, 0}), test_f32(2, S23, Y)};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        tj_tensor *eager[2], *run[2];
        int n_out;
        cr_assert_eq(scatter_reduce_grad((void *)&cases[k], in, 4, eager, &n_out), TJ_OK, "%s", tj_last_error());
        test_expect_f32(eager[0], cases[k].gself, 6, 0);
        test_expect_f32(eager[1], cases[k].gsrc, 8, 0);
        tj_graph *g = tj_make_fx(scatter_reduce_grad, (void *)&cases[k], in, 4, NULL, TJ_TRACE_FAKE);
        cr_assert_not_null(g, "%s", tj_last_error());
        cr_assert_eq(tj_graph_run(g, in, 4, run), TJ_OK, "%s", tj_last_error());
        test_expect_same(run[0], eager[0], cases[k].reduce);
        test_expect_same(run[1], eager[1], cases[k].reduce);
        tj_graph_free(g);
    }
}

/* torch 1.13's graph for amax without self, but for the two detach nodes
 * of the saved result and aten.is_same_size(scatter_reduce, go) that torch
 * records and tjit does not (for any operator); tjit's x and src are the
 * detached inputs. */
Test(fx_parity, scatter_reduce_amax_gradient_records_torchs_masks)
{
    const scatter_reduce_case c = {"amax", false, {0}, {0}};
    const int64_t s24[2] = {2, 4};
    tj_tensor *in[4] = {tj_tensor_fake(TJ_FLOAT32, 2, S23), tj_tensor_fake(TJ_FLOAT32, 2, s24),
                        tj_tensor_fake(TJ_INT64, 2, s24), tj_tensor_fake(TJ_FLOAT32, 2, S23)};
    tj_graph *g = tj_make_fx(scatter_reduce_grad, (void *)&c, in, 4, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect_str_eq(
        text,
        "graph(%arg0_1 : f32[2, 3], %arg1_1 : f32[2, 4], %arg2_1 : i64[2, 4], %arg3_1 : f32[2, 3]):\n"
        "    %detach = aten.detach.default(%arg0_1)\n"
        "    %detach_1 = aten.detach.default(%arg1_1)\n"
        "    %scatter_reduce = aten.scatter_reduce.two(%detach, 1, %arg2_1, %detach_1, 'amax', include_self = False)\n"
        "    %gather = aten.gather.default(%scatter_reduce, 1, %arg2_1)\n"
        "    %eq = aten.eq.Tensor(%detach, %scatter_reduce)\n"
        "    %_to_copy = aten._to_copy.default(%eq, dtype = torch.float32)\n"
        "    %eq_1 = aten.eq.Tensor(%detach_1, %gather)\n"
        "    %_to_copy_1 = aten._to_copy.default(%eq_1, dtype = torch.float32)\n"
        "    %scatter_add = aten.scatter_add.default(%_to_copy, 1, %arg2_1, %_to_copy_1)\n"
        "    %div = aten.div.Tensor(%arg3_1, %scatter_add)\n"
        "    %eq_2 = aten.eq.Tensor(%detach, %scatter_reduce)\n"
        "    %mul = aten.mul.Tensor(%eq_2, %div)\n"
        "    %gather_1 = aten.gather.default(%div, 1, %arg2_1)\n"
        "    %eq_3 = aten.eq.Tensor(%detach_1, %gather)\n"
        "    %mul_1 = aten.mul.Tensor(%eq_3, %gather_1)\n"
        "    %scatter = aten.scatter.value(%mul, 1, %arg2_1, 0)\n"
        "    return (%scatter, %mul_1)\n");
    free(text);
    tj_graph_free(g);
}

/* torch: return torch.autograd.grad(op(x, y), [x, y], go), x and y leaves
 * that require grad; ctx points to op. Besides the nodes tjit records, torch
 * 1.13 records aten.is_same_size(z, go) (torch.autograd's _make_grads checks
 * go's shape in Python; tjit checks it while tracing, and a bool nothing
 * reads is no tensor operation), two detach nodes for each x.detach() where
 * tjit records the one call, and two for each saved result (SavedVariable
 * keeps an output as a shallow copy without its grad_fn, which make_fx's
 * tensor subclass turns into aten.detach; tjit reads the result itself). */
typedef tj_tensor *(*binary_op)(tj_tensor *self, tj_tensor *other);

static tj_status binary_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]), *y = tj_tensor_detach(in[1]);
    if (!x || !y || tj_tensor_set_requires_grad(x, true) != TJ_OK || tj_tensor_set_requires_grad(y, true) != TJ_OK)
        return tj_last_status();
    tj_tensor *z = (*(const binary_op *)ctx)(x, y);
    *n_out = 2;
    return z ? tj_autograd_grad(&z, 1, &in[2], (tj_tensor *[]){x, y}, 2, out) : tj_last_status();
}

/* Runs fn on in (n inputs, the last one go) eager and as the graph make_fx
 * records: each of the n - 1 gradients holds torch 1.13's values want[k]
 * (within rtol), eager and replayed, and the graph after its placeholders and
 * detach lines reads `body`. */
static void expect_grad_graph(tj_trace_fn fn, void *ctx, tj_tensor **in, int n, const float *const *want, double rtol,
                              const char *body)
{
    tj_tensor *eager[2], *run[2];
    int n_out;
    cr_assert_eq(fn(ctx, in, n, eager, &n_out), TJ_OK, "%s", tj_last_error());
    tj_graph *g = tj_make_fx(fn, ctx, in, n, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g), *after = text;
    for (char *d; (d = strstr(after, " = aten.detach.default(%arg"));) after = strchr(d, '\n') + 1;
    cr_expect(after != text, "%s", text);
    cr_expect_str_eq(after, body);
    free(text);
    cr_assert_eq(tj_graph_run(g, in, n, run), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < n - 1; k++) {
        test_expect_f32(eager[k], want[k], tj_tensor_numel(in[k]), rtol);
        test_expect_same(run[k], eager[k], "gradient replayed");
    }
    tj_graph_free(g);
}

/* The gradients of op(x, y) for x [2, 1] and y [1, 3] from xv and yv, and go
 * Y, against torch's gx and gy and make_fx text (expect_grad_graph). */
static void expect_binary_grad(binary_op op, const float *xv, const float *yv, const float *gx, const float *gy,
                               double rtol, const char *body)
{
    tj_tensor *in[3] = {test_f32(2, (int64_t[]){2, 1}, xv), test_f32(2, (int64_t[]){1, 3}, yv), test_f32(2, S23, Y)};
    expect_grad_graph(binary_grad, &op, in, 3, (const float *const[]){gx, gy}, rtol, body);
}

/* MulBackward0 computes other's gradient (go * x) before self's; the engine
 * then sums each to its input's shape (ATen's sum_to): a sum that keeps the
 * dims, viewed only when leading dims go, and sum() to a 0-dim input. */
Test(fx_parity, broadcasting_mul_gradient_prints_as_torch_make_fx)
{
    const struct {
        int nx, ny, nz;
        int64_t x[3], y[2], z[3]; /* z: the product's shape, go's */
        const char *want;
    } cases[] = {
        {2, 2, 2, {2, 1}, {1, 3}, {2, 3},
         "graph(%arg0_1 : f32[2, 1], %arg1_1 : f32[1, 3], %arg2_1 : f32[2, 3]):\n"
         "    %detach = aten.detach.default(%arg0_1)\n"
         "    %detach_1 = aten.detach.default(%arg1_1)\n"
         "    %mul = aten.mul.Tensor(%detach, %detach_1)\n"
         "    %mul_1 = aten.mul.Tensor(%arg2_1, %detach)\n"
         "    %mul_2 = aten.mul.Tensor(%arg2_1, %detach_1)\n"
         "    %sum_1 = aten.sum.dim_IntList(%mul_2, [1], True)\n"
         "    %sum_2 = aten.sum.dim_IntList(%mul_1, [0], True)\n"
         "    return (%sum_1, %sum_2)\n"},
        {3, 2, 3, {4, 2, 3}, {2, 1}, {4, 2, 3},
         "graph(%arg0_1 : f32[4, 2, 3], %arg1_1 : f32[2, 1], %arg2_1 : f32[4, 2, 3]):\n"
         "    %detach = aten.detach.default(%arg0_1)\n"
         "    %detach_1 = aten.detach.default(%arg1_1)\n"
         "    %mul = aten.mul.Tensor(%detach, %detach_1)\n"
         "    %mul_1 = aten.mul.Tensor(%arg2_1, %detach)\n"
         "    %mul_2 = aten.mul.Tensor(%arg2_1, %detach_1)\n"
         "    %sum_1 = aten.sum.dim_IntList(%mul_1, [0, 2], True)\n"
         "    %view = aten.view.default(%sum_1, [2, 1])\n"
         "    return (%mul_2, %view)\n"},
        {2, 0, 2, {2, 3}, {0}, {2, 3},
         "graph(%arg0_1 : f32[2, 3], %arg1_1 : f32[], %arg2_1 : f32[2, 3]):\n"
         "    %detach = aten.detach.default(%arg0_1)\n"
         "    %detach_1 = aten.detach.default(%arg1_1)\n"
         "    %mul = aten.mul.Tensor(%detach, %detach_1)\n"
         "    %mul_1 = aten.mul.Tensor(%arg2_1, %detach)\n"
         "    %mul_2 = aten.mul.Tensor(%arg2_1, %detach_1)\n"
         "    %sum_1 = aten.sum.default(%mul_1)\n"
         "    return (%mul_2, %sum_1)\n"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        tj_tensor *in[3] = {tj_tensor_fake(TJ_FLOAT32, cases[k].nx, cases[k].x),
                            tj_tensor_fake(TJ_FLOAT32, cases[k].ny, cases[k].y),
                            tj_tensor_fake(TJ_FLOAT32, cases[k].nz, cases[k].z)};
        tj_graph *g = tj_make_fx(binary_grad, &(binary_op){tj_mul}, in, 3, NULL, TJ_TRACE_FAKE);
        cr_assert_not_null(g, "%s", tj_last_error());
        char *text = tj_graph_to_string(g);
        cr_expect_str_eq(text, cases[k].want);
        free(text);
        tj_graph_free(g);
    }
}

/* torch 1.13's gradients of the same function: [2, 1] * [1, 3], and [2, 3]
 * by a 0-dim tensor, eager and replayed. */
Test(fx_parity, broadcasting_mul_gradient_matches_torch)
{
    const struct {
        int nx, ny;
        int64_t x[2], y[2];
        float xv[6], yv[3], gx[6], gy[3];
    } cases[] = {
        {2, 2, {2, 1}, {1, 3}, {1.5f, -2}, {0.5f, 1, 0.25f}, {1.3125f, 2.5f}, {2.75f, -2.5f, -7.625f}},
        {2, 0, {2, 3}, {0}, {1.5f, -2, 0.25f, 3, 0.5f, -1}, {-0.5f}, {-0.25f, -0.5f, -0.125f, 0.5f, -1, -2},
         {-7.1875f}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        tj_tensor *in[3] = {test_f32(cases[k].nx, cases[k].x, cases[k].xv),
                            test_f32(cases[k].ny, cases[k].y, cases[k].yv), test_f32(2, S23, Y)};
        tj_tensor *eager[2], *run[2];
        int n_out;
        cr_assert_eq(binary_grad(&(binary_op){tj_mul}, in, 3, eager, &n_out), TJ_OK, "%s", tj_last_error());
        test_expect_f32(eager[0], cases[k].gx, tj_tensor_numel(in[0]), 0);
        test_expect_f32(eager[1], cases[k].gy, tj_tensor_numel(in[1]), 0);
        tj_graph *g = tj_make_fx(binary_grad, &(binary_op){tj_mul}, in, 3, NULL, TJ_TRACE_FAKE);
        cr_assert_not_null(g, "%s", tj_last_error());
        cr_assert_eq(tj_graph_run(g, in, 3, run), TJ_OK, "%s", tj_last_error());
        test_expect_same(run[0], eager[0], "x's gradient replayed");
        test_expect_same(run[1], eager[1], "y's gradient replayed");
        tj_graph_free(g);
    }
}

/* DivBackward0 also computes other's gradient, -go * ((x / y) / y), before
 * self's, go / y (the same graph for div.Tensor_mode without a rounding
 * mode). */
Test(fx_parity, broadcasting_div_gradient_prints_as_torch_make_fx)
{
    expect_binary_grad(tj_div, (const float[]){1.5f, -2}, (const float[]){0.5f, 1, 0.25f}, (const float[]){3, 16},
                       (const float[]){-11, 2.5f, 122}, 0,
                       "    %div = aten.div.Tensor(%detach, %detach_1)\n"
                       "    %div_1 = aten.div.Tensor(%detach, %detach_1)\n"
                       "    %div_2 = aten.div.Tensor(%div_1, %detach_1)\n"
                       "    %neg = aten.neg.default(%arg2_1)\n"
                       "    %mul = aten.mul.Tensor(%neg, %div_2)\n"
                       "    %div_3 = aten.div.Tensor(%arg2_1, %detach_1)\n"
                       "    %sum_1 = aten.sum.dim_IntList(%div_3, [1], True)\n"
                       "    %sum_2 = aten.sum.dim_IntList(%mul, [0], True)\n"
                       "    return (%sum_1, %sum_2)\n");
}

/* derivatives.yaml 1.13: maximum's self gets where(x == y, go / 2,
 * go).masked_fill_(x < y, 0), other the same with x > y (minimum's the other
 * way round); MaximumBackward0 computes other's first, each with its own
 * where, and masks it in place. x [0.5, -2], y [0.5, 1, -3]: the tie at
 * [0, 0] halves go there. */
Test(fx_parity, maximum_and_minimum_gradients_print_as_torch_make_fx)
{
    const float xv[2] = {0.5f, -2}, yv[3] = {0.5f, 1, -3};
    expect_binary_grad(tj_maximum, xv, yv, (const float[]){0.5f, 4}, (const float[]){-0.75f, 3, 0}, 0,
                       "    %maximum = aten.maximum.default(%detach, %detach_1)\n"
                       "    %div = aten.div.Scalar(%arg2_1, 2)\n"
                       "    %eq = aten.eq.Tensor(%detach, %detach_1)\n"
                       "    %where = aten.where.self(%eq, %div, %arg2_1)\n"
                       "    %gt = aten.gt.Tensor(%detach, %detach_1)\n"
                       "    %masked_fill_ = aten.masked_fill_.Scalar(%where, %gt, 0)\n"
                       "    %div_1 = aten.div.Scalar(%arg2_1, 2)\n"
                       "    %eq_1 = aten.eq.Tensor(%detach, %detach_1)\n"
                       "    %where_1 = aten.where.self(%eq_1, %div_1, %arg2_1)\n"
                       "    %lt = aten.lt.Tensor(%detach, %detach_1)\n"
                       "    %masked_fill__1 = aten.masked_fill_.Scalar(%where_1, %lt, 0)\n"
                       "    %sum_1 = aten.sum.dim_IntList(%masked_fill__1, [1], True)\n"
                       "    %sum_2 = aten.sum.dim_IntList(%masked_fill_, [0], True)\n"
                       "    return (%sum_1, %sum_2)\n");
    expect_binary_grad(tj_minimum, xv, yv, (const float[]){1.25f, 1}, (const float[]){0.25f, 0, 4.25f}, 0,
                       "    %minimum = aten.minimum.default(%detach, %detach_1)\n"
                       "    %div = aten.div.Scalar(%arg2_1, 2)\n"
                       "    %eq = aten.eq.Tensor(%detach, %detach_1)\n"
                       "    %where = aten.where.self(%eq, %div, %arg2_1)\n"
                       "    %lt = aten.lt.Tensor(%detach, %detach_1)\n"
                       "    %masked_fill_ = aten.masked_fill_.Scalar(%where, %lt, 0)\n"
                       "    %div_1 = aten.div.Scalar(%arg2_1, 2)\n"
                       "    %eq_1 = aten.eq.Tensor(%detach, %detach_1)\n"
                       "    %where_1 = aten.where.self(%eq_1, %div_1, %arg2_1)\n"
                       "    %gt = aten.gt.Tensor(%detach, %detach_1)\n"
                       "    %masked_fill__1 = aten.masked_fill_.Scalar(%where_1, %gt, 0)\n"
                       "    %sum_1 = aten.sum.dim_IntList(%masked_fill__1, [1], True)\n"
                       "    %sum_2 = aten.sum.dim_IntList(%masked_fill_, [0], True)\n"
                       "    return (%sum_1, %sum_2)\n");
}

/* pow.Tensor_Tensor: PowBackward1 computes pow_backward_exponent, go *
 * where(x == 0 & y >= 0, zeros([]), result * log(x)), before
 * pow_backward_self, where(y == 0.0, zeros([]), go * (y * x^(y - 1))), each
 * argument list evaluated last to first. x [0, 1.5], y [0, 2, 3]: the zero
 * base and the zero exponent take both masks. */
Test(fx_parity, pow_tensor_tensor_gradient_prints_as_torch_make_fx)
{
    expect_binary_grad(tj_pow, (const float[]){0, 1.5f}, (const float[]){0, 2, 3}, (const float[]){0, 33},
                       (const float[]){-0.40546509623527527f, 1.8245929479599f, 5.47377872467041f}, 1e-6,
                       "    %pow_1 = aten.pow.Tensor_Tensor(%detach, %detach_1)\n"
                       "    %ge = aten.ge.Scalar(%detach_1, 0)\n"
                       "    %eq = aten.eq.Scalar(%detach, 0)\n"
                       "    %logical_and = aten.logical_and.default(%eq, %ge)\n"
                       "    %log = aten.log.default(%detach)\n"
                       "    %mul = aten.mul.Tensor(%pow_1, %log)\n"
                       "    %zeros = aten.zeros.default([], dtype = torch.float32)\n"
                       "    %where = aten.where.self(%logical_and, %zeros, %mul)\n"
                       "    %mul_1 = aten.mul.Tensor(%arg2_1, %where)\n"
                       "    %sub = aten.sub.Scalar(%detach_1, 1)\n"
                       "    %pow_2 = aten.pow.Tensor_Tensor(%detach, %sub)\n"
                       "    %mul_2 = aten.mul.Tensor(%detach_1, %pow_2)\n"
                       "    %mul_3 = aten.mul.Tensor(%arg2_1, %mul_2)\n"
                       "    %zeros_1 = aten.zeros.default([], dtype = torch.float32)\n"
                       "    %eq_1 = aten.eq.Scalar(%detach_1, 0.0)\n"
                       "    %where_1 = aten.where.self(%eq_1, %zeros_1, %mul_3)\n"
                       "    %sum_1 = aten.sum.dim_IntList(%where_1, [1], True)\n"
                       "    %sum_2 = aten.sum.dim_IntList(%mul_1, [0], True)\n"
                       "    return (%sum_1, %sum_2)\n");
}

static tj_tensor *sub_alpha2(tj_tensor *self, tj_tensor *other) { return tj_sub_alpha(self, other, tj_v_int(2)); }
static tj_tensor *rsub_alpha2(tj_tensor *self, tj_tensor *other) { return tj_rsub(self, other, tj_v_int(2)); }

/* derivatives.yaml 1.13: sub's other and rsub's self get
 * maybe_multiply(-grad, alpha), a neg then a mul.Scalar by alpha (the neg
 * alone for alpha 1); x [0.5, -2], y [0.5, 1, -3], alpha 2. */
Test(fx_parity, sub_and_rsub_gradients_negate_then_scale_as_torch)
{
    const float xv[2] = {0.5f, -2}, yv[3] = {0.5f, 1, -3};
    expect_binary_grad(sub_alpha2, xv, yv, (const float[]){1.75f, 5}, (const float[]){1, -6, -8.5f}, 0,
                       "    %sub = aten.sub.Tensor(%detach, %detach_1, alpha = 2)\n"
                       "    %neg = aten.neg.default(%arg2_1)\n"
                       "    %mul = aten.mul.Scalar(%neg, 2)\n"
                       "    %sum_1 = aten.sum.dim_IntList(%arg2_1, [1], True)\n"
                       "    %sum_2 = aten.sum.dim_IntList(%mul, [0], True)\n"
                       "    return (%sum_1, %sum_2)\n");
    expect_binary_grad(rsub_alpha2, xv, yv, (const float[]){-3.5f, -10}, (const float[]){-0.5f, 3, 4.25f}, 0,
                       "    %rsub = aten.rsub.Tensor(%detach, %detach_1, alpha = 2)\n"
                       "    %neg = aten.neg.default(%arg2_1)\n"
                       "    %mul = aten.mul.Scalar(%neg, 2)\n"
                       "    %sum_1 = aten.sum.dim_IntList(%mul, [1], True)\n"
                       "    %sum_2 = aten.sum.dim_IntList(%arg2_1, [0], True)\n"
                       "    return (%sum_1, %sum_2)\n");
    expect_binary_grad(tj_sub, xv, yv, (const float[]){1.75f, 5}, (const float[]){0.5f, -3, -4.25f}, 0,
                       "    %sub = aten.sub.Tensor(%detach, %detach_1)\n"
                       "    %neg = aten.neg.default(%arg2_1)\n"
                       "    %sum_1 = aten.sum.dim_IntList(%arg2_1, [1], True)\n"
                       "    %sum_2 = aten.sum.dim_IntList(%neg, [0], True)\n"
                       "    return (%sum_1, %sum_2)\n");
}

/* torch: return torch.autograd.grad(op(x), [x], go), x a leaf that requires
 * grad; ctx points to op. */
typedef tj_tensor *(*unary_op)(tj_tensor *self);

static tj_status unary_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]);
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK) return tj_last_status();
    tj_tensor *z = (*(const unary_op *)ctx)(x);
    *n_out = 1;
    return z ? tj_autograd_grad(&z, 1, &in[1], &x, 1, out) : tj_last_status();
}

/* op's gradient for x [2, 3] from xv (X when NULL) and go from gov, of shape
 * [2, 3], [2] or [] for go_ndim 2, 1, 0, against torch's gx and make_fx text
 * (expect_grad_graph). */
static const float G2[2] = {0.5f, -1};

static void expect_unary_grad(unary_op op, const float *xv, int go_ndim, const float *gov, const float *gx,
                              double rtol, const char *body)
{
    tj_tensor *in[2] = {test_f32(2, S23, xv ? xv : X), test_f32(go_ndim, (int64_t[]){2, 3}, gov)};
    expect_grad_graph(unary_grad, &op, in, 2, (const float *const[]){gx}, rtol, body);
}

static tj_tensor *pow3(tj_tensor *x) { return tj_pow_scalar(x, tj_v_int(3)); }

/* torch: y = x.clone(); y.square_(); return y */
static tj_status clone_square_(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_square_(tj_clone(in[0]));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}
static tj_tensor *clamp_both(tj_tensor *x) { return tj_clamp(x, tj_v_float(-0.5), tj_v_float(1.5)); }
static tj_tensor *clamp_min_quarter(tj_tensor *x) { return tj_clamp_min(x, tj_v_float(0.25)); }
static tj_tensor *logsumexp_rows(tj_tensor *x) { return tj_logsumexp(x, (int64_t[]){1}, 1, false); }
static tj_tensor *std_rows(tj_tensor *x) { return tj_std(x, (int64_t[]){1}, 1, 1, false); }
static tj_tensor *lerp_03(tj_tensor *x, tj_tensor *y)
{
    tj_value a[3] = {tj_v_tensor(x), tj_v_tensor(y), tj_v_float(0.3)}, o;
    return tj_call("aten::lerp.Scalar", a, 3, &o) == TJ_OK ? o.u.t : NULL;
}

/* ATen 1.13's pow_backward takes the exponent as a double: pow(x, 2.0) and
 * mul.Scalar by 3.0 for x ** 3. */
Test(fx_parity, pow_scalar_gradient_prints_as_torch_make_fx)
{
    expect_unary_grad(pow3, NULL, 2, Y, (const float[]){3.375f, 12, 0.046875f, -27, 1.5f, 12}, 0,
                      "    %pow_1 = aten.pow.Tensor_Scalar(%detach, 3)\n"
                      "    %pow_2 = aten.pow.Tensor_Scalar(%detach, 2.0)\n"
                      "    %mul = aten.mul.Scalar(%pow_2, 3.0)\n"
                      "    %mul_1 = aten.mul.Tensor(%arg1_1, %mul)\n"
                      "    return (%mul_1,)\n");
}

/* square is implicit in ATen 1.13 (CompositeImplicitAutograd, pow(self,
 * 2)): torch records pow.Tensor_Scalar and pow_backward's pow(x, 1.0) and
 * mul.Scalar by 2.0; square_ is pow_.Scalar(self, 2). */
Test(fx_parity, square_is_recorded_as_pow_as_torch_make_fx)
{
    expect_unary_grad(tj_square, NULL, 2, Y, (const float[]){1.5f, -4, 0.125f, -6, 2, -8}, 0,
                      "    %pow_1 = aten.pow.Tensor_Scalar(%detach, 2)\n"
                      "    %pow_2 = aten.pow.Tensor_Scalar(%detach, 1.0)\n"
                      "    %mul = aten.mul.Scalar(%pow_2, 2.0)\n"
                      "    %mul_1 = aten.mul.Tensor(%arg1_1, %mul)\n"
                      "    return (%mul_1,)\n");
    tj_tensor *x = test_f32(2, S23, X);
    tj_graph *g = tj_make_fx(clone_square_, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect_str_eq(text, "graph(%arg0_1 : f32[2, 3]):\n"
                           "    %clone = aten.clone.default(%arg0_1)\n"
                           "    %pow_ = aten.pow_.Scalar(%clone, 2)\n"
                           "    return (%pow_,)\n");
    free(text);
    tj_tensor *out;
    cr_assert_eq(tj_graph_run(g, &x, 1, &out), TJ_OK, "%s", tj_last_error());
    test_expect_f32(out, (const float[]){2.25f, 4, 0.0625f, 9, 0.25f, 1}, 6, 0);
    tj_graph_free(g);
    /* torch: torch.tensor([True]).square_() raises (the int64 square does not fit a bool self) */
    tj_tensor *b = tj_ones((int64_t[]){2}, 1, TJ_BOOL);
    test_expect_error(tj_square_(b), TJ_ERR_DTYPE, "aten::square_", "aten::pow_.Scalar");
}

/* clamp_backward: the zero scalar_tensor(0.) first, the bounds compared as
 * Scalars, both conditions joined by logical_and_; clamp_min's formula the
 * same with one bound. */
Test(fx_parity, clamp_gradients_print_as_torch_make_fx)
{
    expect_unary_grad(clamp_both, NULL, 2, Y, (const float[]){0.5f, 0, 0.25f, 0, 2, 0}, 0,
                      "    %clamp = aten.clamp.default(%detach, -0.5, 1.5)\n"
                      "    %scalar_tensor = aten.scalar_tensor.default(0.0, dtype = torch.float32)\n"
                      "    %ge = aten.ge.Scalar(%detach, -0.5)\n"
                      "    %le = aten.le.Scalar(%detach, 1.5)\n"
                      "    %logical_and_ = aten.logical_and_.default(%ge, %le)\n"
                      "    %where = aten.where.self(%logical_and_, %arg1_1, %scalar_tensor)\n"
                      "    return (%where,)\n");
    expect_unary_grad(clamp_min_quarter, NULL, 2, Y, (const float[]){0.5f, 0, 0.25f, -1, 2, 0}, 0,
                      "    %clamp_min = aten.clamp_min.default(%detach, 0.25)\n"
                      "    %scalar_tensor = aten.scalar_tensor.default(0.0, dtype = torch.float32)\n"
                      "    %ge = aten.ge.Scalar(%detach, 0.25)\n"
                      "    %where = aten.where.self(%ge, %arg1_1, %scalar_tensor)\n"
                      "    return (%where,)\n");
}

/* floor, ceil, round, trunc, sign: derivatives.yaml's zeros_like(grad). */
Test(fx_parity, piecewise_constant_gradient_is_zeros_like_grad)
{
    expect_unary_grad(tj_floor, NULL, 2, Y, (const float[]){0, 0, 0, 0, 0, 0}, 0,
                      "    %floor = aten.floor.default(%detach)\n"
                      "    %zeros_like = aten.zeros_like.default(%arg1_1)\n"
                      "    return (%zeros_like,)\n");
}

/* derivatives.yaml 1.13's abs: grad * self.sgn(). */
Test(fx_parity, abs_gradient_multiplies_by_sgn_as_torch)
{
    expect_unary_grad(tj_abs, NULL, 2, Y, (const float[]){0.5f, -1, 0.25f, -1, 2, -4}, 0,
                      "    %abs_1 = aten.abs.default(%detach)\n"
                      "    %sgn = aten.sgn.default(%detach)\n"
                      "    %mul = aten.mul.Tensor(%arg1_1, %sgn)\n"
                      "    return (%mul,)\n");
}

static tj_tensor *l1_mean(tj_tensor *x, tj_tensor *t) { return tj_l1_loss(x, t, 1); }
static tj_tensor *l1_sum(tj_tensor *x, tj_tensor *t) { return tj_l1_loss(x, t, 2); }

/* l1_loss is implicit (sub, abs, mean / sum); abs's gradient reads the
 * difference's sgn, and the target gets its negation. torch: for F.l1_loss(x,
 * y) and F.l1_loss(x, y, reduction='sum'), go = 2. */
Test(fx_parity, l1_loss_gradient_multiplies_by_sgn_as_torch)
{
    const float third = 0.3333333432674408f;
    tj_tensor *in[3] = {test_f32(2, S23, X), test_f32(2, S23, Y), test_f32(0, NULL, (const float[]){2})};
    expect_grad_graph(binary_grad, &(binary_op){l1_mean}, in, 3,
                      (const float *const[]){(const float[]){third, -third, 0, third, -third, -third},
                                             (const float[]){-third, third, -0.0f, -third, third, third}},
                      0,
                      "    %sub = aten.sub.Tensor(%detach, %detach_1)\n"
                      "    %abs_1 = aten.abs.default(%sub)\n"
                      "    %mean = aten.mean.default(%abs_1)\n"
                      "    %expand = aten.expand.default(%arg2_1, [2, 3])\n"
                      "    %div = aten.div.Scalar(%expand, 6)\n"
                      "    %sgn = aten.sgn.default(%sub)\n"
                      "    %mul = aten.mul.Tensor(%div, %sgn)\n"
                      "    %neg = aten.neg.default(%mul)\n"
                      "    return (%mul, %neg)\n");
    expect_grad_graph(binary_grad, &(binary_op){l1_sum}, in, 3,
                      (const float *const[]){(const float[]){2, -2, 0, 2, -2, -2},
                                             (const float[]){-2, 2, -0.0f, -2, 2, 2}},
                      0,
                      "    %sub = aten.sub.Tensor(%detach, %detach_1)\n"
                      "    %abs_1 = aten.abs.default(%sub)\n"
                      "    %sum_1 = aten.sum.default(%abs_1)\n"
                      "    %expand = aten.expand.default(%arg2_1, [2, 3])\n"
                      "    %sgn = aten.sgn.default(%sub)\n"
                      "    %mul = aten.mul.Tensor(%expand, %sgn)\n"
                      "    %neg = aten.neg.default(%mul)\n"
                      "    return (%mul, %neg)\n");
}

/* logsumexp_backward restores grad's reduced dim before result's; std's
 * masks grad / (2 std) in place where std is 0. */
Test(fx_parity, logsumexp_and_std_gradients_print_as_torch_make_fx)
{
    expect_unary_grad(logsumexp_rows, NULL, 1, G2,
                      (const float[]){0.37973660230636597f, 0.011467051692306995f, 0.10879635810852051f,
                                      -0.9087599515914917f, -0.07459556311368942f, -0.016644515097141266f},
                      1e-6,
                      "    %logsumexp = aten.logsumexp.default(%detach, [1])\n"
                      "    %unsqueeze = aten.unsqueeze.default(%arg1_1, 1)\n"
                      "    %unsqueeze_1 = aten.unsqueeze.default(%logsumexp, 1)\n"
                      "    %sub = aten.sub.Tensor(%detach, %unsqueeze_1)\n"
                      "    %exp = aten.exp.default(%sub)\n"
                      "    %mul = aten.mul.Tensor(%unsqueeze, %exp)\n"
                      "    return (%mul,)\n");
    expect_unary_grad(std_rows, NULL, 1, G2,
                      (const float[]){0.22317448258399963f, -0.270158588886261f, 0.046984102576971054f,
                                      -0.5361109972000122f, 0.0824786052107811f, 0.45363232493400574f},
                      1e-6,
                      "    %std = aten.std.correction(%detach, [1], correction = 1)\n"
                      "    %mul = aten.mul.Scalar(%std, 2)\n"
                      "    %div = aten.div.Tensor(%arg1_1, %mul)\n"
                      "    %eq = aten.eq.Scalar(%std, 0)\n"
                      "    %masked_fill_ = aten.masked_fill_.Scalar(%div, %eq, 0)\n"
                      "    %unsqueeze = aten.unsqueeze.default(%masked_fill_, 1)\n"
                      "    %mean = aten.mean.dim(%detach, [1], True)\n"
                      "    %sub = aten.sub.Tensor(%detach, %mean)\n"
                      "    %mul_1 = aten.mul.Scalar(%unsqueeze, 1.0)\n"
                      "    %mul_2 = aten.mul.Tensor(%mul_1, %sub)\n"
                      "    return (%mul_2,)\n");
}

/* LerpBackward0 computes end's gradient, go * weight, before self's. */
Test(fx_parity, lerp_scalar_gradient_prints_as_torch_make_fx)
{
    expect_binary_grad(lerp_03, (const float[]){0.5f, -2}, (const float[]){0.5f, 1, -3},
                       (const float[]){1.2249999046325684f, 3.5f},
                       (const float[]){-0.15000000596046448f, 0.9000000357627869f, 1.2750000953674316f}, 1e-6,
                       "    %lerp = aten.lerp.Scalar(%detach, %detach_1, 0.3)\n"
                       "    %mul = aten.mul.Scalar(%arg2_1, 0.3)\n"
                       "    %mul_1 = aten.mul.Scalar(%arg2_1, 0.7)\n"
                       "    %sum_1 = aten.sum.dim_IntList(%mul_1, [1], True)\n"
                       "    %sum_2 = aten.sum.dim_IntList(%mul, [0], True)\n"
                       "    return (%sum_1, %sum_2)\n");
}

static tj_tensor *bce_logits_mean(tj_tensor *x, tj_tensor *t)
{
    return tj_binary_cross_entropy_with_logits(x, t, NULL, NULL, 1);
}

/* binary_cross_entropy_with_logits_backward and its target formula divide
 * by the element count in place (div_), for x = X, targets in [0, 1] and go 2. */
Test(fx_parity, bce_with_logits_mean_gradient_divides_in_place_as_torch)
{
    tj_tensor *in[3] = {test_f32(2, S23, X), test_f32(2, S23, (const float[]){0.5f, 1, 0.25f, 0, 0.75f, 1}),
                        test_f32(0, NULL, (const float[]){2})};
    const float gx[6] = {0.10585814714431763f, -0.29359903931617737f, 0.10405883938074112f,
                         0.3175247013568878f,  -0.04251354932785034f, -0.24368619918823242f};
    const float gt[6] = {-0.5f, 0.6666666865348816f, -0.0833333358168602f, -1, -0.1666666716337204f,
                         0.3333333432674408f};
    expect_grad_graph(binary_grad, &(binary_op){bce_logits_mean}, in, 3, (const float *const[]){gx, gt}, 1e-6,
                      "    %binary_cross_entropy_with_logits = "
                      "aten.binary_cross_entropy_with_logits.default(%detach, %detach_1)\n"
                      "    %sigmoid = aten.sigmoid.default(%detach)\n"
                      "    %sub = aten.sub.Tensor(%sigmoid, %detach_1)\n"
                      "    %mul = aten.mul.Tensor(%sub, %arg2_1)\n"
                      "    %div_ = aten.div_.Scalar(%mul, 6)\n"
                      "    %neg = aten.neg.default(%detach)\n"
                      "    %mul_1 = aten.mul.Tensor(%neg, %arg2_1)\n"
                      "    %div__1 = aten.div_.Scalar(%mul_1, 6)\n"
                      "    return (%div_, %div__1)\n");
}

/* derivatives.yaml 1.13's erf (self.pow(2)), asin (-self * self + 1), log10
 * (its constant 2.3025850929940456, below M_LN10) and exp2 ((grad * result)
 * * ln 2). */
Test(fx_parity, erf_asin_log10_exp2_gradients_print_as_torch_make_fx)
{
    expect_unary_grad(tj_erf, NULL, 2, Y,
                      (const float[]){0.05946514755487442f, 0.02066698670387268f, 0.2650035619735718f,
                                      -0.00013925305393058807f, 1.7575652599334717f, 1.6604300737380981f},
                      1e-6,
                      "    %erf = aten.erf.default(%detach)\n"
                      "    %pow_1 = aten.pow.Tensor_Scalar(%detach, 2)\n"
                      "    %neg = aten.neg.default(%pow_1)\n"
                      "    %exp = aten.exp.default(%neg)\n"
                      "    %mul = aten.mul.Scalar(%exp, 1.1283791670955126)\n"
                      "    %mul_1 = aten.mul.Tensor(%mul, %arg1_1)\n"
                      "    return (%mul_1,)\n");
    expect_unary_grad(tj_asin, (const float[]){0.5f, -0.25f, 0.125f, 0.75f, -0.5f, 0.9f}, 2, Y,
                      (const float[]){0.5773502588272095f, 1.0327955484390259f, 0.2519763112068176f,
                                      -1.5118579864501953f, 2.309401035308838f, 9.176628112792969f},
                      1e-6,
                      "    %asin = aten.asin.default(%detach)\n"
                      "    %neg = aten.neg.default(%detach)\n"
                      "    %mul = aten.mul.Tensor(%neg, %detach)\n"
                      "    %add = aten.add.Scalar(%mul, 1)\n"
                      "    %rsqrt = aten.rsqrt.default(%add)\n"
                      "    %mul_1 = aten.mul.Tensor(%arg1_1, %rsqrt)\n"
                      "    return (%mul_1,)\n");
    expect_unary_grad(tj_log10, NULL, 2, Y,
                      (const float[]){0.14476482570171356f, -0.21714723110198975f, 0.4342944622039795f,
                                      -0.14476482570171356f, 1.737177848815918f, -1.737177848815918f},
                      1e-6,
                      "    %log10 = aten.log10.default(%detach)\n"
                      "    %mul = aten.mul.Scalar(%detach, 2.3025850929940455)\n"
                      "    %div = aten.div.Tensor(%arg1_1, %mul)\n"
                      "    return (%div,)\n");
    expect_unary_grad(tj_exp2, NULL, 2, Y,
                      (const float[]){0.9802581071853638f, 0.1732867956161499f, 0.20607388019561768f,
                                      -5.545177459716797f, 1.9605162143707275f, 1.3862943649291992f},
                      1e-6,
                      "    %exp2 = aten.exp2.default(%detach)\n"
                      "    %mul = aten.mul.Tensor(%arg1_1, %exp2)\n"
                      "    %mul_1 = aten.mul.Scalar(%mul, 0.6931471805599453)\n"
                      "    return (%mul_1,)\n");
}

static tj_tensor *amax_rows(tj_tensor *x) { return tj_amax(x, (int64_t[]){1}, 1, false); }

/* amax restores the result's reduced dim and compares it with self before
 * restoring grad's (torch's _reshape_alias, spelled view); max (.default)
 * splits the gradient over ties, or over the nans when the result is nan,
 * with evenly_distribute_backward's make_fx branch: isnan masks,
 * logical_or_, mask * (grad / mask.sum()). Zeros keep the sign torch gives
 * them (-0 in the row whose go is negative). */
Test(fx_parity, amax_and_max_gradients_split_ties_as_torch_make_fx)
{
    const float ties[6] = {3, -2, 0.25f, 3, 0.5f, -1}, nans[6] = {3, NAN, 0.25f, NAN, 0.5f, -1};
    expect_unary_grad(amax_rows, ties, 1, G2, (const float[]){0.5f, 0, 0, -1, -0.0f, -0.0f}, 0,
                      "    %amax = aten.amax.default(%detach, [1])\n"
                      "    %view = aten.view.default(%amax, [2, 1])\n"
                      "    %eq = aten.eq.Tensor(%view, %detach)\n"
                      "    %view_1 = aten.view.default(%arg1_1, [2, 1])\n"
                      "    %sum_1 = aten.sum.dim_IntList(%eq, [1], True)\n"
                      "    %div = aten.div.Tensor(%view_1, %sum_1)\n"
                      "    %mul = aten.mul.Tensor(%div, %eq)\n"
                      "    return (%mul,)\n");
    const char *max_graph = "    %max_1 = aten.max.default(%detach)\n"
                            "    %isnan = aten.isnan.default(%detach)\n"
                            "    %isnan_1 = aten.isnan.default(%max_1)\n"
                            "    %logical_and = aten.logical_and.default(%isnan, %isnan_1)\n"
                            "    %eq = aten.eq.Tensor(%detach, %max_1)\n"
                            "    %logical_or_ = aten.logical_or_.default(%eq, %logical_and)\n"
                            "    %sum_1 = aten.sum.default(%logical_or_)\n"
                            "    %div = aten.div.Tensor(%arg1_1, %sum_1)\n"
                            "    %mul = aten.mul.Tensor(%logical_or_, %div)\n"
                            "    return (%mul,)\n";
    expect_unary_grad(tj_max, ties, 0, (const float[]){2}, (const float[]){1, 0, 0, 1, 0, 0}, 0, max_graph);
    expect_unary_grad(tj_max, nans, 0, (const float[]){2}, (const float[]){0, 1, 0, 1, 0, 0}, 0, max_graph);
}

static tj_tensor *where_positive(tj_tensor *x, tj_tensor *y) { return tj_where(tj_gt_scalar(x, tj_v_int(0)), x, y); }

/* torch 1.13's generated backward functions compute the inputs' gradients in
 * the alphabetical order of their names: mm's and bmm's mat2 before self,
 * where's other before self (each with its own zero). */
Test(fx_parity, mm_bmm_and_where_gradients_take_inputs_in_torchs_order)
{
    const float xv[2] = {0.5f, -2}, yv[3] = {0.5f, 1, -3};
    expect_binary_grad(tj_mm, xv, yv, (const float[]){0.5f, -10.5f}, (const float[]){2.25f, -3.5f, -7.875f}, 0,
                       "    %mm = aten.mm.default(%detach, %detach_1)\n"
                       "    %t = aten.t.default(%detach)\n"
                       "    %mm_1 = aten.mm.default(%t, %arg2_1)\n"
                       "    %t_1 = aten.t.default(%detach_1)\n"
                       "    %mm_2 = aten.mm.default(%arg2_1, %t_1)\n"
                       "    return (%mm_2, %mm_1)\n");
    expect_binary_grad(where_positive, xv, yv, (const float[]){1.75f, 0}, (const float[]){-1, 2, 4}, 0,
                       "    %gt = aten.gt.Scalar(%detach, 0)\n"
                       "    %where = aten.where.self(%gt, %detach, %detach_1)\n"
                       "    %scalar_tensor = aten.scalar_tensor.default(0, dtype = torch.float32)\n"
                       "    %where_1 = aten.where.self(%gt, %scalar_tensor, %arg2_1)\n"
                       "    %scalar_tensor_1 = aten.scalar_tensor.default(0, dtype = torch.float32)\n"
                       "    %where_2 = aten.where.self(%gt, %arg2_1, %scalar_tensor_1)\n"
                       "    %sum_1 = aten.sum.dim_IntList(%where_2, [1], True)\n"
                       "    %sum_2 = aten.sum.dim_IntList(%where_1, [0], True)\n"
                       "    return (%sum_1, %sum_2)\n");
    /* a = arange(12).view(1, 3, 4) / 4 - 1, b = arange(8).view(1, 4, 2) / 2 - 1 */
    float av[12], bv[8];
    for (int i = 0; i < 12; i++) av[i] = (float)i / 4 - 1;
    for (int i = 0; i < 8; i++) bv[i] = (float)i / 2 - 1;
    tj_tensor *in[3] = {test_f32(3, (int64_t[]){1, 3, 4}, av), test_f32(3, (int64_t[]){1, 4, 2}, bv),
                        test_f32(3, (int64_t[]){1, 3, 2}, (const float[]){1, -1, 0.5f, 2, -2, 0.25f})};
    const float ga[12] = {-0.5f, -0.5f, -0.5f, -0.5f, -1.5f, 1, 3.5f, 6, 1.875f, 0.125f, -1.625f, -3.375f};
    const float gb[8] = {-3, 1.25f, -3.125f, 1.5625f, -3.25f, 1.875f, -3.375f, 2.1875f};
    expect_grad_graph(binary_grad, &(binary_op){tj_bmm}, in, 3, (const float *const[]){ga, gb}, 0,
                      "    %bmm = aten.bmm.default(%detach, %detach_1)\n"
                      "    %transpose = aten.transpose.int(%detach, 1, 2)\n"
                      "    %bmm_1 = aten.bmm.default(%transpose, %arg2_1)\n"
                      "    %transpose_1 = aten.transpose.int(%detach_1, 1, 2)\n"
                      "    %bmm_2 = aten.bmm.default(%arg2_1, %transpose_1)\n"
                      "    return (%bmm_2, %bmm_1)\n");
}

/* The same order for logaddexp (other's grad / (exp(self - other) + 1)
 * first), clamp_min.Tensor and clamp_max.Tensor (min's / max's first, each
 * with its scalar_tensor(0.) made before its condition). */
Test(fx_parity, logaddexp_and_clamp_tensor_gradients_print_as_torch_make_fx)
{
    const float xv[2] = {0.5f, -2}, yv[3] = {0.5f, 1, -3};
    expect_binary_grad(tj_logaddexp, xv, yv, (const float[]){0.8702126741409302f, 2.943228006362915f},
                       (const float[]){-0.6741418242454529f, 2.5276076793670654f, 1.0830937623977661f}, 1e-6,
                       "    %logaddexp = aten.logaddexp.default(%detach, %detach_1)\n"
                       "    %sub = aten.sub.Tensor(%detach, %detach_1)\n"
                       "    %exp = aten.exp.default(%sub)\n"
                       "    %add = aten.add.Scalar(%exp, 1)\n"
                       "    %div = aten.div.Tensor(%arg2_1, %add)\n"
                       "    %sub_1 = aten.sub.Tensor(%detach_1, %detach)\n"
                       "    %exp_1 = aten.exp.default(%sub_1)\n"
                       "    %add_1 = aten.add.Scalar(%exp_1, 1)\n"
                       "    %div_1 = aten.div.Tensor(%arg2_1, %add_1)\n"
                       "    %sum_1 = aten.sum.dim_IntList(%div_1, [1], True)\n"
                       "    %sum_2 = aten.sum.dim_IntList(%div, [0], True)\n"
                       "    return (%sum_1, %sum_2)\n");
    expect_binary_grad(tj_clamp_min_tensor, xv, yv, (const float[]){0.75f, 4}, (const float[]){-1, 3, 0}, 0,
                       "    %clamp_min = aten.clamp_min.Tensor(%detach, %detach_1)\n"
                       "    %scalar_tensor = aten.scalar_tensor.default(0.0, dtype = torch.float32)\n"
                       "    %lt = aten.lt.Tensor(%detach, %detach_1)\n"
                       "    %where = aten.where.self(%lt, %arg2_1, %scalar_tensor)\n"
                       "    %scalar_tensor_1 = aten.scalar_tensor.default(0.0, dtype = torch.float32)\n"
                       "    %ge = aten.ge.Tensor(%detach, %detach_1)\n"
                       "    %where_1 = aten.where.self(%ge, %arg2_1, %scalar_tensor_1)\n"
                       "    %sum_1 = aten.sum.dim_IntList(%where_1, [1], True)\n"
                       "    %sum_2 = aten.sum.dim_IntList(%where, [0], True)\n"
                       "    return (%sum_1, %sum_2)\n");
    expect_binary_grad(tj_clamp_max_tensor, xv, yv, (const float[]){1.5f, 1}, (const float[]){0, 0, 4.25f}, 0,
                       "    %clamp_max = aten.clamp_max.Tensor(%detach, %detach_1)\n"
                       "    %scalar_tensor = aten.scalar_tensor.default(0.0, dtype = torch.float32)\n"
                       "    %gt = aten.gt.Tensor(%detach, %detach_1)\n"
                       "    %where = aten.where.self(%gt, %arg2_1, %scalar_tensor)\n"
                       "    %scalar_tensor_1 = aten.scalar_tensor.default(0.0, dtype = torch.float32)\n"
                       "    %le = aten.le.Tensor(%detach, %detach_1)\n"
                       "    %where_1 = aten.where.self(%le, %arg2_1, %scalar_tensor_1)\n"
                       "    %sum_1 = aten.sum.dim_IntList(%where_1, [1], True)\n"
                       "    %sum_2 = aten.sum.dim_IntList(%where, [0], True)\n"
                       "    return (%sum_1, %sum_2)\n");
}

/* torch (x [3, 5], gy [3, 2]):
 *     x = x.detach().requires_grad_(True)
 *     y = (aten.slice(x, 1, 1, 5, 2) * gy).sum() + aten.select(x, 0, -1).sum()
 *     g, = torch.autograd.grad(y, x) */
static const float X35[15] = {1.5f, -2, 0.25f, 4, 1, 3, 0.5f, -1, 2, -3, 0.5f, 1, 0.25f, -1, 2};
static const float GY32[6] = {2, -1, 0.5f, 3, -4, 1.5f};
static const int64_t S35[2] = {3, 5}, S32[2] = {3, 2};

static tj_status view_grads(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]);
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK) return tj_last_status();
    tj_tensor *sliced = tj_sum(tj_mul(tj_slice(x, 1, true, 1, true, 5, 2), in[1]), TJ_DTYPE_NONE);
    tj_tensor *y = tj_add(sliced, tj_sum(tj_select(x, 0, -1), TJ_DTYPE_NONE));
    *n_out = 1;
    return tj_autograd_grad(&y, 1, NULL, &x, 1, out);
}

/* torch 1.13's derivatives: select_backward and slice_backward (which the
 * core table lowers to zeros + select_scatter / slice_scatter). */
Test(fx_parity, select_and_slice_gradients_are_recorded_as_their_backward_ops)
{
    tj_tensor *in[2] = {test_f32(2, S35, X35), test_f32(2, S32, GY32)};
    tj_graph *g = tj_make_fx(view_grads, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    /* torch's backward, line for line (its ones_like spells out the defaults) */
    cr_expect(strstr(text, "    %expand = aten.expand.default(%ones_like, [5])\n"
                           "    %select_backward = aten.select_backward.default(%expand, [3, 5], 0, -1)\n"
                           "    %expand_1 = aten.expand.default(%ones_like, [3, 2])\n"
                           "    %mul_1 = aten.mul.Tensor(%expand_1, %arg1_1)\n"
                           "    %slice_backward = aten.slice_backward.default(%mul_1, [3, 5], 1, 1, 5, 2)\n"
                           "    %add_1 = aten.add.Tensor(%select_backward, %slice_backward)\n"
                           "    return (%add_1,)\n"),
              "%s", text);
    free(text);
    const float want[15] = {0, 2, 0, -1, 0, 0, 0.5f, 0, 3, 0, 1, -3, 1, 2.5f, 1};
    tj_tensor *out[1];
    cr_assert_eq(tj_graph_run(g, in, 2, out), TJ_OK, "%s", tj_last_error());
    test_expect_f32(out[0], want, 15, 0);
    tj_graph_free(g);
    tj_decomp_table *core = tj_core_decompositions();
    g = tj_make_fx(view_grads, NULL, in, 2, core, TJ_TRACE_FAKE);
    tj_decomp_table_free(core);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::slice_backward")), 0);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::select_backward")), 0);
    cr_expect(test_only_primitives(g));
    cr_assert_eq(tj_graph_run(g, in, 2, out), TJ_OK, "%s", tj_last_error());
    test_expect_f32(out[0], want, 15, 0);
    tj_graph_free(g);
}

/* Their own gradients are the views of the gradient. torch:
 *     gy = gy.detach().requires_grad_(True)
 *     b = aten.slice_backward(gy, [3, 5], 1, 1, 5, 2)
 *     s = aten.select_backward(gy[0], [4, 2], 0, 1)
 *     r, = torch.autograd.grad((b * x).sum() + s.sum(), gy) */
static tj_status backward_op_grads(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *gy = tj_tensor_detach(in[1]);
    if (!gy || tj_tensor_set_requires_grad(gy, true) != TJ_OK) return tj_last_status();
    tj_tensor *b = tj_slice_backward(gy, S35, 2, 1, 1, 5, 2);
    tj_tensor *s = tj_select_backward(tj_select(gy, 0, 0), (const int64_t[]){4, 2}, 2, 0, 1);
    tj_tensor *sb = tj_sum(tj_mul(b, in[0]), TJ_DTYPE_NONE);
    tj_tensor *l = tj_add(sb, tj_sum(s, TJ_DTYPE_NONE));
    *n_out = 1;
    return tj_autograd_grad(&l, 1, NULL, &gy, 1, out);
}

Test(fx_parity, select_and_slice_backward_gradients_are_views_as_torch)
{
    tj_tensor *in[2] = {test_f32(2, S35, X35), test_f32(2, S32, GY32)};
    tj_graph *g = tj_make_fx(backward_op_grads, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect(strstr(text, "    %select_1 = aten.select.int(%expand, 0, 1)\n"
                           "    %select_backward_1 = aten.select_backward.default(%select_1, [3, 2], 0, 0)\n"
                           "    %slice_1 = aten.slice.Tensor(%mul_1, 1, 1, 5, 2)\n"
                           "    %add_1 = aten.add.Tensor(%select_backward_1, %slice_1)\n"),
              "%s", text);
    free(text);
    tj_tensor *out[1];
    cr_assert_eq(tj_graph_run(g, in, 2, out), TJ_OK, "%s", tj_last_error());
    test_expect_f32(out[0], (const float[]){-1, 5, 0.5f, 2, 1, -1}, 6, 0);
    tj_graph_free(g);
}

/* torch: "The size of tensor a (5) must match the size of tensor b (4)",
 * "Trying to create tensor with negative dimension -5: [3, -5]",
 * "select(): index 3 out of range for tensor of size [3, 5] at dimension 0" */
Test(fx_parity, select_and_slice_backward_refuse_what_torch_refuses)
{
    tj_tensor *g4 = tj_ones((const int64_t[]){4}, 1, TJ_FLOAT32), *g5 = tj_ones((const int64_t[]){5}, 1, TJ_FLOAT32);
    test_expect_error(tj_select_backward(g4, S35, 2, 0, 1), TJ_ERR_SHAPE, "aten::select_backward", "[4]");
    test_expect_error(tj_select_backward(g5, S35, 2, 0, 3), TJ_ERR_INDEX, "aten::select", "3");
    test_expect_error(tj_slice_backward(tj_ones(S32, 2, TJ_FLOAT32), (const int64_t[]){3, -5}, 2, 1, 1, 5, 2),
                      TJ_ERR_SHAPE, "aten::slice_backward", "negative size");
    test_expect_error(tj_slice_backward(tj_ones(S32, 2, TJ_FLOAT32), S35, 2, 1, 1, 5, 1), TJ_ERR_SHAPE,
                      "aten::slice_backward", "[3, 4]");
    test_expect_error(tj_slice_backward(tj_ones(S32, 2, TJ_FLOAT32), S35, 2, 2, 1, 5, 1), TJ_ERR_INDEX,
                      "aten::slice", "2");
}
