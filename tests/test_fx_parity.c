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

/* torch: return torch.autograd.grad(x * y, [x, y], go), x and y leaves that
 * require grad. MulBackward0 computes other's gradient (go * x) before
 * self's; the engine then sums each to its input's shape (ATen's sum_to):
 * a sum that keeps the dims, viewed only when leading dims go, and sum() to
 * a 0-dim input. torch also records aten.is_same_size(mul, go), which tjit
 * does not, and tjit's x and y are the detached inputs. */
static tj_status mul_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]), *y = tj_tensor_detach(in[1]);
    if (!x || !y || tj_tensor_set_requires_grad(x, true) != TJ_OK || tj_tensor_set_requires_grad(y, true) != TJ_OK)
        return tj_last_status();
    tj_tensor *z = tj_mul(x, y);
    *n_out = 2;
    return z ? tj_autograd_grad(&z, 1, &in[2], (tj_tensor *[]){x, y}, 2, out) : tj_last_status();
}

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
        tj_graph *g = tj_make_fx(mul_grad, NULL, in, 3, NULL, TJ_TRACE_FAKE);
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
        cr_assert_eq(mul_grad(NULL, in, 3, eager, &n_out), TJ_OK, "%s", tj_last_error());
        test_expect_f32(eager[0], cases[k].gx, tj_tensor_numel(in[0]), 0);
        test_expect_f32(eager[1], cases[k].gy, tj_tensor_numel(in[1]), 0);
        tj_graph *g = tj_make_fx(mul_grad, NULL, in, 3, NULL, TJ_TRACE_FAKE);
        cr_assert_not_null(g, "%s", tj_last_error());
        cr_assert_eq(tj_graph_run(g, in, 3, run), TJ_OK, "%s", tj_last_error());
        test_expect_same(run[0], eager[0], "x's gradient replayed");
        test_expect_same(run[1], eager[1], "y's gradient replayed");
        tj_graph_free(g);
    }
}

/* torch: return torch.autograd.grad(x / y, [x, y], go) for x [2, 1], y [1, 3]:
 * DivBackward0 also computes other's gradient, -go * ((x / y) / y), before
 * self's, go / y (the same graph for div.Tensor_mode without a rounding
 * mode). torch's gradients: x [3, 16], y [-11, 2.5, 122]. */
static tj_status div_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]), *y = tj_tensor_detach(in[1]);
    if (!x || !y || tj_tensor_set_requires_grad(x, true) != TJ_OK || tj_tensor_set_requires_grad(y, true) != TJ_OK)
        return tj_last_status();
    tj_tensor *z = tj_div(x, y);
    *n_out = 2;
    return z ? tj_autograd_grad(&z, 1, &in[2], (tj_tensor *[]){x, y}, 2, out) : tj_last_status();
}

Test(fx_parity, broadcasting_div_gradient_prints_as_torch_make_fx)
{
    tj_tensor *in[3] = {test_f32(2, (int64_t[]){2, 1}, (const float[]){1.5f, -2}),
                        test_f32(2, (int64_t[]){1, 3}, (const float[]){0.5f, 1, 0.25f}), test_f32(2, S23, Y)};
    tj_tensor *eager[2], *run[2];
    int n_out;
    cr_assert_eq(div_grad(NULL, in, 3, eager, &n_out), TJ_OK, "%s", tj_last_error());
    test_expect_f32(eager[0], (const float[]){3, 16}, 2, 0);
    test_expect_f32(eager[1], (const float[]){-11, 2.5f, 122}, 3, 0);
    tj_graph *g = tj_make_fx(div_grad, NULL, in, 3, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect_str_eq(text, "graph(%arg0_1 : f32[2, 1], %arg1_1 : f32[1, 3], %arg2_1 : f32[2, 3]):\n"
                           "    %detach = aten.detach.default(%arg0_1)\n"
                           "    %detach_1 = aten.detach.default(%arg1_1)\n"
                           "    %div = aten.div.Tensor(%detach, %detach_1)\n"
                           "    %div_1 = aten.div.Tensor(%detach, %detach_1)\n"
                           "    %div_2 = aten.div.Tensor(%div_1, %detach_1)\n"
                           "    %neg = aten.neg.default(%arg2_1)\n"
                           "    %mul = aten.mul.Tensor(%neg, %div_2)\n"
                           "    %div_3 = aten.div.Tensor(%arg2_1, %detach_1)\n"
                           "    %sum_1 = aten.sum.dim_IntList(%div_3, [1], True)\n"
                           "    %sum_2 = aten.sum.dim_IntList(%mul, [0], True)\n"
                           "    return (%sum_1, %sum_2)\n");
    free(text);
    cr_assert_eq(tj_graph_run(g, in, 3, run), TJ_OK, "%s", tj_last_error());
    test_expect_same(run[0], eager[0], "x's gradient replayed");
    test_expect_same(run[1], eager[1], "y's gradient replayed");
    tj_graph_free(g);
}
