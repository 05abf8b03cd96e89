/* Operators that torch 1.13's make_fx records of ordinary PyTorch code:
 * bitwise_not (`~mask`), floor_divide and floor_divide.Scalar (`//`), xlogy.Tensor
 * (F.kl_div) and norm.ScalarOpt_dim (F.normalize, x.norm(dim=1)); the
 * dropout's bernoulli_.float is tested with the random operators
 * (test_creation.c). Values, gradients and errors against PyTorch 1.13
 * (/usr/bin/python3, the literals noted at each test), and torch's own
 * graph text parsed, replayed from a plan and lowered by the core table. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "test_util.h"

TestSuite(recorded, .init = test_scope_open, .fini = test_scope_close);

static tj_tensor *f32(int64_t n, const float *v) { return test_f32(1, (int64_t[]){n}, v); }
static tj_tensor *i64(int64_t n, const int64_t *v) { return test_i64(1, (int64_t[]){n}, v); }
static tj_tensor *b8(int64_t n, const uint8_t *v) { return test_tensor(TJ_BOOL, 1, (int64_t[]){n}, v); }

/* ~torch.tensor([True, False, True]); ~torch.tensor([0, 5, -3, -2**63, 2**63 - 1]) */
Test(recorded, bitwise_not_of_bool_and_int64_matches_torch)
{
    test_expect_bool(tj_bitwise_not(b8(3, (uint8_t[]){1, 0, 1})), 3, (uint8_t[]){0, 1, 0});
    test_expect_i64(tj_bitwise_not(i64(5, (int64_t[]){0, 5, -3, INT64_MIN, INT64_MAX})), 5,
                    (int64_t[]){-1, -6, 2, INT64_MAX, INT64_MIN});
    tj_tensor *m = b8(2, (uint8_t[]){0, 1});
    cr_assert_eq(tj_bitwise_not_(m), m, "%s", tj_last_error());
    test_expect_bool(m, 2, (uint8_t[]){1, 0});
    /* torch: "~ (operator.invert) is only implemented on integer and Boolean-type tensors" */
    test_expect_error(tj_bitwise_not(f32(1, (float[]){1})), TJ_ERR_DTYPE, "aten::bitwise_not", "float32");
}

/* torch.floor_divide(a, b), float32 (1e20 // 3 rounds to 3.3333333e19; 0.3 // 0.1 is 3 in float32) */
Test(recorded, floor_divide_floors_as_torch)
{
    enum { N = 16 };
    const float a[N] = {7, -7, 7, -7, 5.5f, -5.5f, 0.0f, -0.0f, 3, 1, INFINITY, -INFINITY, NAN, 2, 1e20f, 0.3f};
    const float b[N] = {2, 2, -2, -2, 2, -2, 3, 3, 0, -0.0f, 2, 2, 2, INFINITY, 3, 0.1f};
    const double want[N] = {3, -4, -4, 3, 2, 2, 0, -0.0, INFINITY, -INFINITY, NAN, NAN, NAN, 0,
                            3.3333333268354826e+19, 3};
    tj_tensor *q = tj_floor_divide(f32(N, a), f32(N, b));
    test_expect_close(q, want, N, 0, 0);
    cr_expect(signbit(tj_tensor_item_at(q, 7)), "-0.0 // 3 is -0.0");
    /* [7, -7, 7, -7, 0, -2**63 + 1, 5] // [2, 2, -2, -2, 3, -1, 7] */
    test_expect_i64(tj_floor_divide(i64(7, (int64_t[]){7, -7, 7, -7, 0, INT64_MIN + 1, 5}),
                                    i64(7, (int64_t[]){2, 2, -2, -2, 3, -1, 7})),
                    7, (int64_t[]){3, -4, -4, 3, 0, INT64_MAX, 0});
    /* int64 // float32: float32 [3., -4.] */
    tj_tensor *mixed = tj_floor_divide(i64(2, (int64_t[]){7, -7}), f32(1, (float[]){2}));
    cr_assert_eq(tj_tensor_dtype(mixed), TJ_FLOAT32);
    test_expect_close(mixed, (double[]){3, -4}, 2, 0, 0);
}

Test(recorded, floor_divide_errors_name_it)
{
    test_expect_error(tj_floor_divide(i64(2, (int64_t[]){1, 2}), i64(2, (int64_t[]){1, 0})), TJ_ERR_INVALID_ARGUMENT,
                      "aten::floor_divide", "ZeroDivisionError");
    test_expect_error(tj_floor_divide(f32(3, (float[]){1, 2, 3}), f32(2, (float[]){1, 2})), TJ_ERR_SHAPE,
                      "aten::floor_divide", "[3] and [2]");
    test_expect_error(tj_floor_divide(b8(1, (uint8_t[]){1}), b8(1, (uint8_t[]){1})), TJ_ERR_DTYPE,
                      "aten::floor_divide", "bool");
}

/* gm.code of torch 1.13's make_fx of f(y, x) = (y // 2, x // 2.5, y // 2.5):
 * floor_divide with a Scalar other, read as floor_divide.Scalar; torch gives
 * [3, -4, 4] (int64), [[-1, 0, 0], [0, -1, 0]], [2., -3., 3.] (float32) */
Test(recorded, floor_divide_by_a_python_number_parses_as_the_scalar_overload)
{
    tj_graph *g = tj_graph_parse("graph(%y_1 : i64[3], %x_1 : f32[2, 3]):\n"
                                 "    %floor_divide = aten.floor_divide.default(%y_1, 2)\n"
                                 "    %floor_divide_1 = aten.floor_divide.default(%x_1, 2.5)\n"
                                 "    %floor_divide_2 = aten.floor_divide.default(%y_1, 2.5)\n"
                                 "    return (%floor_divide, %floor_divide_1, %floor_divide_2)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::floor_divide.Scalar")), 3);
    tj_tensor *in[2] = {i64(3, (int64_t[]){7, -7, 9}),
                        test_f32(2, (int64_t[]){2, 3}, (float[]){-1.2f, 0.5f, 2.0f, 0.3f, -0.7f, 1.5f})};
    tj_tensor *out[3];
    test_replay(g, in, 2, out, 3);
    test_expect_i64(out[0], 3, (int64_t[]){3, -4, 4});
    test_expect_close(out[1], (double[]){-1, 0, 0, 0, -1, 0}, 6, 0, 0);
    cr_assert_eq(tj_tensor_dtype(out[2]), TJ_FLOAT32);
    test_expect_close(out[2], (double[]){2, -3, 3}, 3, 0, 0);
    test_expect_error(tj_floor_divide_scalar(in[0], tj_v_int(0)), TJ_ERR_INVALID_ARGUMENT,
                      "aten::floor_divide.Scalar", "ZeroDivisionError");
    tj_graph_free(g);
}

/* torch: "derivative for aten::floor_divide is not implemented" */
Test(recorded, floor_divide_has_no_gradient_as_in_torch)
{
    tj_tensor *x = f32(2, (float[]){1.5f, -2}), *g;
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    tj_tensor *loss = tj_sum(tj_floor_divide(x, f32(1, (float[]){0.5f})), TJ_DTYPE_NONE);
    cr_assert_not_null(loss, "%s", tj_last_error());
    cr_expect_neq(tj_autograd_grad(&loss, 1, NULL, &x, 1, &g), TJ_OK);
    cr_expect(strstr(tj_last_error(), "floor_divide"), "%s", tj_last_error());
}

/* torch.xlogy(x, y): 0 where x == 0 unless y is nan, nan where y is nan */
Test(recorded, xlogy_matches_torch_at_zeros_and_nans)
{
    enum { N = 10 };
    const float x[N] = {0, 0, 0, NAN, 1, 2, 0.5f, 3, -1.5f, 1e-3f};
    const float y[N] = {0, NAN, -1, 1, NAN, -1, 0.25f, INFINITY, 2, 0};
    const double want32[N] = {0, NAN, 0, NAN, NAN, NAN, -0.6931471824645996, INFINITY, -1.0397207736968994, -INFINITY};
    const double want64[N] = {0, NAN, 0, NAN, NAN, NAN, -0.6931471805599453, INFINITY, -1.0397207708399179, -INFINITY};
    test_expect_close(tj_xlogy(f32(N, x), f32(N, y)), want32, N, 1e-7, 0);
    tj_tensor *r64 = tj_xlogy(tj_to_copy(f32(N, x), TJ_FLOAT64), tj_to_copy(f32(N, y), TJ_FLOAT64));
    cr_assert_eq(tj_tensor_dtype(r64), TJ_FLOAT64);
    test_expect_close(r64, want64, N, 1e-15, 0);
    /* int64 operands: float32 [0., 2.7725887298583984, 0.] */
    tj_tensor *ri = tj_xlogy(i64(3, (int64_t[]){0, 2, 3}), i64(3, (int64_t[]){5, 4, 1}));
    cr_assert_eq(tj_tensor_dtype(ri), TJ_FLOAT32);
    test_expect_close(ri, (double[]){0, 2.7725887298583984, 0}, 3, 1e-7, 0);
    test_expect_error(tj_xlogy(f32(3, x), f32(2, y)), TJ_ERR_SHAPE, "aten::xlogy.Tensor", "[3] and [2]");
}

/* x, y leaves; torch.autograd.grad((torch.xlogy(x, y) * w).sum(), [x, y]) */
Test(recorded, xlogy_gradients_match_torch)
{
    tj_tensor *x = f32(6, (float[]){0, 0, 1.5f, 2, -0.5f, 0}), *y = f32(6, (float[]){0, -1, 2, 0.5f, 3, 2});
    tj_tensor *w = f32(6, (float[]){1, -2, 0.5f, 3, -1.5f, 2});
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    cr_assert_eq(tj_tensor_set_requires_grad(y, true), TJ_OK);
    tj_tensor *loss = tj_sum(tj_mul(tj_xlogy(x, y), w), TJ_DTYPE_NONE), *g[2];
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){x, y}, 2, g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g[0], (double[]){0, 0, 0.3465735912322998, -2.079441547393799, -1.647918462753296,
                                       1.3862943649291992}, 6, 1e-6, 1e-7);
    test_expect_close(g[1], (double[]){NAN, 0, 0.375, 12, 0.25, 0}, 6, 1e-6, 1e-7);
}

/* x = [[3, -4, 0.5], [0, 0, 0], [1, 2, -2]]; torch.norm(x, dim=1) and
 * aten.norm.ScalarOpt_dim(x, 1, [0], True), with x.grad of (n * w).sum(),
 * w = [1, -2, 0.5] (the zero row's gradient is -0.0 in torch) */
Test(recorded, norm_scalaropt_dim_values_and_gradients_match_torch)
{
    const float xv[9] = {3, -4, 0.5f, 0, 0, 0, 1, 2, -2};
    tj_tensor *x = test_f32(2, (int64_t[]){3, 3}, xv), *w = f32(3, (float[]){1, -2, 0.5f}), *g;
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    tj_tensor *n = tj_norm_dim(x, tj_v_none(), (int64_t[]){1}, 1, false);
    test_expect_close(n, (double[]){5.024937629699707, 0, 3}, 3, 1e-6, 0);
    tj_tensor *loss = tj_sum(tj_mul(n, w), TJ_DTYPE_NONE);
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, &x, 1, &g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g, (double[]){0.5970223546028137, -0.796029806137085, 0.09950372576713562, 0, 0, 0,
                                    0.1666666716337204, 0.3333333432674408, -0.3333333432674408}, 9, 1e-6, 1e-7);
    tj_tensor *n1 = tj_norm_dim(x, tj_v_int(1), (int64_t[]){0}, 1, true);
    test_assert_dtype_shape(n1, TJ_FLOAT32, 2, (int64_t[]){1, 3});
    test_expect_close(n1, (double[]){4, 6, 2.5}, 3, 0, 0);
    loss = tj_sum(tj_mul(n1, w), TJ_DTYPE_NONE);
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, &x, 1, &g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g, (double[]){1, 2, 0.5, 0, 0, 0, 1, -2, -0.5}, 9, 0, 0);
    test_expect_error(tj_norm_dim(x, tj_v_int(2), (int64_t[]){2}, 1, false), TJ_ERR_INDEX, "aten::norm.ScalarOpt_dim",
                      "dim 2 is out of range");
    test_expect_error(tj_norm_dim(i64(2, (int64_t[]){1, 2}), tj_v_int(2), (int64_t[]){0}, 1, false), TJ_ERR_DTYPE,
                      "aten::norm.ScalarOpt_dim", "int64");
}

/* gm.code of torch 1.13's make_fx of
 *   f(x, m, y, t, u) = (~m, y // t, x // u, F.kl_div(x, u, reduction='sum'),
 *                       F.normalize(x, dim=1), x.norm(dim=1))
 * in graph text, and torch's outputs on the inputs below. */
static const char recorded_text[] =
    "graph(%x_1 : f32[2, 3], %m_1 : b8[3], %y_1 : i64[3], %t_1 : i64[3], %u_1 : f32[2, 3]):\n"
    "    %bitwise_not = aten.bitwise_not.default(%m_1)\n"
    "    %floor_divide = aten.floor_divide.default(%y_1, %t_1)\n"
    "    %floor_divide_1 = aten.floor_divide.default(%x_1, %u_1)\n"
    "    %mul = aten.mul.Tensor(%u_1, %x_1)\n"
    "    %xlogy = aten.xlogy.Tensor(%u_1, %u_1)\n"
    "    %sub = aten.sub.Tensor(%xlogy, %mul)\n"
    "    %sum_1 = aten.sum.default(%sub)\n"
    "    %norm = aten.norm.ScalarOpt_dim(%x_1, 2.0, [1], True)\n"
    "    %clamp_min = aten.clamp_min.default(%norm, 1e-12)\n"
    "    %expand = aten.expand.default(%clamp_min, [2, 3])\n"
    "    %div = aten.div.Tensor(%x_1, %expand)\n"
    "    %norm_1 = aten.norm.ScalarOpt_dim(%x_1, 2, [1])\n"
    "    return (%bitwise_not, %floor_divide, %floor_divide_1, %sum_1, %div, %norm_1)\n";

static void recorded_inputs(tj_tensor **in)
{
    in[0] = test_f32(2, (int64_t[]){2, 3}, (float[]){-1.2f, 0.5f, 2.0f, 0.3f, -0.7f, 1.5f});
    in[1] = b8(3, (uint8_t[]){1, 0, 1});
    in[2] = i64(3, (int64_t[]){7, -7, 9});
    in[3] = i64(3, (int64_t[]){2, 2, -4});
    in[4] = test_f32(2, (int64_t[]){2, 3}, (float[]){0.25f, 0.0f, 0.75f, 0.5f, 0.5f, 0.0f});
}

static void expect_recorded_outputs(tj_tensor **out)
{
    test_expect_bool(out[0], 3, (uint8_t[]){0, 1, 0});
    test_expect_i64(out[1], 3, (int64_t[]){3, -4, -3});
    test_expect_close(out[2], (double[]){-5, INFINITY, 2, 0, -2, INFINITY}, 6, 0, 0);
    test_expect_close(out[3], (double[]){-2.2554824352264404}, 1, 1e-6, 0);
    test_expect_close(out[4], (double[]){-0.5030661821365356, 0.20961089432239532, 0.8384435772895813,
                                         0.17833149433135986, -0.41610679030418396, 0.8916574716567993}, 6, 1e-6, 0);
    test_expect_close(out[5], (double[]){2.3853721618652344, 1.6822603940963745}, 2, 1e-6, 0);
}

Test(recorded, torchs_graph_text_parses_replays_and_lowers_to_torchs_values)
{
    tj_graph *g = tj_graph_parse(recorded_text);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor *in[5], *out[6];
    recorded_inputs(in);
    cr_assert_eq(tj_graph_run(g, in, 5, out), TJ_OK, "%s", tj_last_error());
    expect_recorded_outputs(out);
    test_replay(g, in, 5, out, 6);
    expect_recorded_outputs(out);
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *d = tj_graph_decompose(g, core);
    cr_assert_not_null(d, "%s", tj_last_error());
    const char *gone[] = {"aten::bitwise_not", "aten::floor_divide", "aten::xlogy.Tensor", "aten::norm.ScalarOpt_dim"};
    test_expect_op_count(d, gone, 4, 0);
    cr_assert_eq(tj_graph_run(d, in, 5, out), TJ_OK, "%s", tj_last_error());
    expect_recorded_outputs(out);
    tj_graph_free(d);
    tj_graph_free(g);
    tj_decomp_table_free(core);
}
