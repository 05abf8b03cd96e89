/* Operators whose result shape depends on their input's values: nonzero,
 * where(condition), masked_select, index.Tensor / index_put with bool masks
 * (mixed with int64 and None entries), and masked_scatter; their gradients;
 * their errors; and what tracing makes of them (fake mode refuses, real
 * mode records the count and tj_graph_run / tj_compile refuse other counts;
 * x[mask] = v traces statically). Reference values from PyTorch 1.13.1 (/usr/bin/python3), with
 * nan = float('nan'), x = torch.arange(12.).reshape(3, 4),
 * m = torch.tensor([True, False, True]), cm = torch.tensor([False, True, True, False]):
 *   torch.nonzero(torch.tensor([[0., -0., nan, 1e-40], [2, 0, 0, -3]])) -> [[0,2],[0,3],[1,0],[1,3]]
 *   torch.nonzero(torch.tensor([[[1,0],[0,1]],[[1,1],[0,0]]]).bool()) -> [[0,0,0],[0,1,1],[1,0,0],[1,0,1]]
 *   torch.nonzero(torch.tensor([[0,5],[7,0],[0,-2]]).t()) -> [[0,1],[1,0],[1,2]]
 *   x[m] -> rows 0 and 2; x[:, cm] -> [1,2,5,6,9,10] [3, 2]; x[x % 3 == 1] -> [1,4,7,10]
 *   x3 = torch.arange(24.).reshape(2, 3, 4)
 *   aten.index.Tensor(x3, [tensor([[1,0,1],[0,1,0]]).bool(), tensor([3,0,-1])]) -> [3, 8, 19]
 *   aten.index.Tensor(x3, [tensor([1,0]), None, cm.roll(1)...]) with [False,True,False,True] -> [[13,17,21],[3,7,11]]
 *   aten.index_put(x, [m], tensor(-1.)) -> rows 0, 2 = -1
 *   aten.index_put(x, [m], tensor([10.,20,30,40]), True) -> [10,21,32,43, 4,5,6,7, 18,29,40,51]
 *   torch.masked_select(tensor([1.,2]), tensor([[True],[False],[True]])) -> [1,2,1,2]
 *   torch.masked_scatter(tensor([[1.,2,3],[4,5,6]]), tensor([[1,0,1],[0,1,0]]).bool(),
 *                        tensor([[10.,20],[30,40],[50,60]])) -> [10,2,20, 4,30,6]
 * Gradients (float64, of sum(w * out)):
 *   masked_select(xs [2,3], [[True,False,True]]), w = [1,2,3,4] -> xs.grad [1,0,2, 3,0,4]
 *   masked_select(sv [2], [[True],[False],[True]]), w = [1,2,3,4] -> sv.grad [4, 6]
 *   the masked_scatter above, w = arange(1, 7).reshape(2, 3) -> self [0,2,0, 4,0,6], source [1,3,5, 0,0,0]
 *   x[:, cm], w = arange(1, 7).reshape(3, 2) -> [0,1,2,0, 0,3,4,0, 0,5,6,0]
 *   aten.index_put(x, [m], v = [10.,20,30,40]), w = arange(1, 13).reshape(3, 4)
 *     -> x.grad [0,0,0,0, 5,6,7,8, 0,0,0,0], v.grad [10,12,14,16] */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "alloc_counter.h"
#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(masked, .init = test_scope_open, .fini = test_scope_close);

static const int64_t S34[2] = {3, 4}, S23[2] = {2, 3};

static tj_tensor *arange_2d(const int64_t *shape, tj_dtype dtype)
{
    return tj_view(tj_arange(tj_v_int(0), tj_v_int(shape[0] * shape[1]), tj_v_int(1), dtype), shape, 2);
}

static tj_tensor *mask_of(int ndim, const int64_t *shape, const bool *v) { return test_tensor(TJ_BOOL, ndim, shape, v); }

static const bool M3[3] = {true, false, true}, CM4[4] = {false, true, true, false};

/* ---- nonzero ---- */

Test(masked, nonzero_counts_nan_and_denormals_not_negative_zero)
{
    const float v[8] = {0.f, -0.f, NAN, 1e-40f, 2, 0, 0, -3};
    tj_tensor *r = tj_nonzero(test_f32(2, (const int64_t[]){2, 4}, v));
    test_assert_dtype_shape(r, TJ_INT64, 2, (const int64_t[]){4, 2});
    test_expect_i64(r, 8, (const int64_t[]){0, 2, 0, 3, 1, 0, 1, 3});
    const double d[8] = {0., -0., NAN, 1e-310, 2, 0, 0, -3};
    test_expect_i64(tj_nonzero(test_f64(2, (const int64_t[]){2, 4}, d)), 8, (const int64_t[]){0, 2, 0, 3, 1, 0, 1, 3});
}

Test(masked, nonzero_of_bool_and_transposed_int64_is_row_major)
{
    const bool b[8] = {true, false, false, true, true, true, false, false};
    tj_tensor *r = tj_nonzero(mask_of(3, (const int64_t[]){2, 2, 2}, b));
    test_assert_dtype_shape(r, TJ_INT64, 2, (const int64_t[]){4, 3});
    test_expect_i64(r, 12, (const int64_t[]){0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1});
    tj_tensor *i = test_i64(2, (const int64_t[]){3, 2}, (const int64_t[]){0, 5, 7, 0, 0, -2});
    test_expect_i64(tj_nonzero(tj_t(i)), 6, (const int64_t[]){0, 1, 1, 0, 1, 2});
}

Test(masked, nonzero_of_0d_and_empty_tensors)
{
    test_assert_dtype_shape(tj_nonzero(tj_scalar_tensor(tj_v_float(3), TJ_FLOAT32)), TJ_INT64, 2, (const int64_t[]){1, 0});
    test_assert_dtype_shape(tj_nonzero(tj_scalar_tensor(tj_v_float(0), TJ_FLOAT32)), TJ_INT64, 2, (const int64_t[]){0, 0});
    test_assert_dtype_shape(tj_nonzero(tj_zeros((const int64_t[]){0, 3}, 2, TJ_FLOAT32)), TJ_INT64, 2,
                            (const int64_t[]){0, 2});
}

/* torch.where(torch.tensor([[0., 1, 2], [3, 0, 0]])) -> ([0, 0, 1], [1, 2, 0]);
 * torch.where(torch.tensor(True)) -> ([0],) */
Test(masked, where_condition_gives_one_index_per_dim)
{
    tj_tensor *c = test_f32(2, S23, (const float[]){0, 1, 2, 3, 0, 0}), *outs[2];
    int n = -1;
    cr_assert_eq(tj_where_condition(c, outs, 2, &n), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(n, 2);
    test_expect_i64(outs[0], 3, (const int64_t[]){0, 0, 1});
    test_expect_i64(outs[1], 3, (const int64_t[]){1, 2, 0});
    cr_assert_eq(tj_where_condition(tj_scalar_tensor(tj_v_bool(true), TJ_BOOL), outs, 2, &n), TJ_OK);
    cr_assert_eq(n, 1);
    test_assert_dtype_shape(outs[0], TJ_INT64, 1, (const int64_t[]){1});
    /* through the dispatcher: a Tensor[] of the same views */
    tj_value args[1] = {tj_v_tensor(c)}, res[1];
    cr_assert_eq(tj_call("aten::where", args, 1, res), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(res[0].kind, TJ_V_TENSORS);
    cr_assert_eq(res[0].n, 2);
    test_expect_i64(res[0].u.ts[1], 3, (const int64_t[]){1, 2, 0});
    cr_expect_eq(tj_where_condition(c, outs, 1, &n), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "aten::unbind.int: 2 pieces do not fit in 1 outputs"), "%s", tj_last_error());
    cr_expect_eq(n, 0);
    cr_expect_eq(tj_where_condition(tj_tensor_fake(TJ_BOOL, 1, (const int64_t[]){3}), outs, 2, &n), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "aten::nonzero: output shape depends on the input's values"), "%s", tj_last_error());
}

/* ---- masked_select / masked_scatter ---- */

Test(masked, masked_select_broadcasts_self_and_mask)
{
    tj_tensor *s = test_f32(1, (const int64_t[]){2}, (const float[]){1, 2});
    tj_tensor *r = tj_masked_select(s, mask_of(2, (const int64_t[]){3, 1}, M3));
    test_assert_dtype_shape(r, TJ_FLOAT32, 1, (const int64_t[]){4});
    test_expect_close(r, (const double[]){1, 2, 1, 2}, 4, 0, 0);
    tj_tensor *x = arange_2d(S34, TJ_INT64);
    test_expect_i64(tj_masked_select(tj_t(x), mask_of(1, (const int64_t[]){3}, M3)), 8,
                    (const int64_t[]){0, 8, 1, 9, 2, 10, 3, 11});
}

Test(masked, masked_scatter_fills_true_positions_in_order)
{
    tj_tensor *self = arange_2d(S23, TJ_FLOAT64);
    tj_tensor *src = tj_add_scalar(arange_2d((const int64_t[]){3, 2}, TJ_FLOAT64), tj_v_int(1));
    const bool mk[6] = {true, false, true, false, true, false};
    tj_tensor *r =
        tj_masked_scatter(tj_add_scalar(self, tj_v_int(1)), mask_of(2, S23, mk), tj_mul_scalar(src, tj_v_int(10)));
    test_assert_dtype_shape(r, TJ_FLOAT64, 2, S23);
    test_expect_close(r, (const double[]){10, 2, 20, 4, 30, 6}, 6, 0, 0);
    /* a transposed source is read in its own row-major order */
    tj_tensor *rt = tj_masked_scatter(tj_zeros(S23, 2, TJ_FLOAT64), mask_of(2, S23, mk), tj_t(src));
    test_expect_close(rt, (const double[]){1, 0, 3, 0, 5, 0}, 6, 0, 0);
}

/* ---- bool masks in index.Tensor / index_put ---- */

Test(masked, index_with_bool_masks_matches_pytorch)
{
    tj_tensor *x = arange_2d(S34, TJ_FLOAT32);
    tj_tensor *rows[1] = {mask_of(1, (const int64_t[]){3}, M3)};
    tj_tensor *r = tj_index(x, rows, 1);
    test_assert_dtype_shape(r, TJ_FLOAT32, 2, (const int64_t[]){2, 4});
    test_expect_close(r, (const double[]){0, 1, 2, 3, 8, 9, 10, 11}, 8, 0, 0);
    tj_tensor *cols[2] = {NULL, mask_of(1, (const int64_t[]){4}, CM4)};
    r = tj_index(x, cols, 2);
    test_assert_dtype_shape(r, TJ_FLOAT32, 2, (const int64_t[]){3, 2});
    test_expect_close(r, (const double[]){1, 2, 5, 6, 9, 10}, 6, 0, 0);
    tj_tensor *whole[1] = {tj_eq_scalar(tj_remainder_scalar(x, tj_v_int(3)), tj_v_int(1))};
    test_expect_close(tj_index(x, whole, 1), (const double[]){1, 4, 7, 10}, 4, 0, 0);
}

Test(masked, index_mixes_masks_with_int64_and_none_entries)
{
    tj_tensor *x3 = tj_view(tj_arange(tj_v_int(0), tj_v_int(24), tj_v_int(1), TJ_FLOAT32), (const int64_t[]){2, 3, 4}, 3);
    const bool mm[6] = {true, false, true, false, true, false};
    tj_tensor *a[2] = {mask_of(2, S23, mm), test_i64(1, (const int64_t[]){3}, (const int64_t[]){3, 0, -1})};
    test_expect_close(tj_index(x3, a, 2), (const double[]){3, 8, 19}, 3, 0, 0);
    const bool m4[4] = {false, true, false, true};
    tj_tensor *b[3] = {test_i64(1, (const int64_t[]){2}, (const int64_t[]){1, 0}), NULL,
                       mask_of(1, (const int64_t[]){4}, m4)};
    tj_tensor *r = tj_index(x3, b, 3);
    test_assert_dtype_shape(r, TJ_FLOAT32, 2, S23);
    test_expect_close(r, (const double[]){13, 17, 21, 3, 7, 11}, 6, 0, 0);
}

Test(masked, index_put_with_a_mask_writes_rows)
{
    tj_tensor *x = arange_2d(S34, TJ_FLOAT32), *m[1] = {mask_of(1, (const int64_t[]){3}, M3)};
    test_expect_close(tj_index_put(x, m, 1, tj_scalar_tensor(tj_v_float(-1), TJ_FLOAT32), false),
                      (const double[]){-1, -1, -1, -1, 4, 5, 6, 7, -1, -1, -1, -1}, 12, 0, 0);
    tj_tensor *row = test_f32(1, (const int64_t[]){4}, (const float[]){10, 20, 30, 40});
    test_expect_close(tj_index_put(x, m, 1, row, true), (const double[]){10, 21, 32, 43, 4, 5, 6, 7, 18, 29, 40, 51},
                      12, 0, 0);
    tj_tensor *y = tj_clone(x), *cols[2] = {NULL, mask_of(1, (const int64_t[]){4}, CM4)};
    cr_assert_not_null(tj_index_put_(y, cols, 2, tj_mul_scalar(tj_index(x, cols, 2), tj_v_int(-1)), false));
    test_expect_close(y, (const double[]){0, -1, -2, 3, 4, -5, -6, 7, 8, -9, -10, 11}, 12, 0, 0);
}

/* ---- gradients ---- */

Test(masked, masked_select_gradients_match_pytorch)
{
    tj_tensor *xs = test_f64_grad((const double[]){1, -2, 3, 4, 5, -6}, 2, S23, true);
    tj_tensor *w = test_f64(1, (const int64_t[]){4}, (const double[]){1, 2, 3, 4});
    tj_tensor *mk = mask_of(2, (const int64_t[]){1, 3}, M3);
    test_expect_close(test_grad1(xs, tj_masked_select(xs, mk), w), (const double[]){1, 0, 2, 3, 0, 4}, 6, 0, 0);
    tj_tensor *sv = test_f64_grad((const double[]){1, 2}, 1, (const int64_t[]){2}, true);
    tj_tensor *g = test_grad1(sv, tj_masked_select(sv, mask_of(2, (const int64_t[]){3, 1}, M3)), w);
    test_assert_dtype_shape(g, TJ_FLOAT64, 1, (const int64_t[]){2});
    test_expect_close(g, (const double[]){4, 6}, 2, 0, 0);
}

Test(masked, masked_scatter_gradients_match_pytorch)
{
    tj_tensor *self = test_f64_grad((const double[]){1, 2, 3, 4, 5, 6}, 2, S23, true);
    tj_tensor *src = test_f64_grad((const double[]){10, 20, 30, 40, 50, 60}, 2, (const int64_t[]){3, 2}, true);
    const bool mk[6] = {true, false, true, false, true, false};
    tj_tensor *out = tj_masked_scatter(self, mask_of(2, S23, mk), src);
    tj_tensor *w = tj_add_scalar(arange_2d(S23, TJ_FLOAT64), tj_v_int(1)), *in[2] = {self, src}, *g[2] = {NULL, NULL};
    cr_assert_eq(tj_autograd_grad(&out, 1, &w, in, 2, g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g[0], (const double[]){0, 2, 0, 4, 0, 6}, 6, 0, 0);
    test_assert_dtype_shape(g[1], TJ_FLOAT64, 2, (const int64_t[]){3, 2});
    test_expect_close(g[1], (const double[]){1, 3, 5, 0, 0, 0}, 6, 0, 0);
}

Test(masked, bool_index_gradients_match_pytorch)
{
    tj_tensor *x = tj_clone(arange_2d(S34, TJ_FLOAT64));
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *cols[2] = {NULL, mask_of(1, (const int64_t[]){4}, CM4)};
    tj_tensor *w = tj_add_scalar(arange_2d((const int64_t[]){3, 2}, TJ_FLOAT64), tj_v_int(1));
    test_expect_close(test_grad1(x, tj_index(x, cols, 2), w), (const double[]){0, 1, 2, 0, 0, 3, 4, 0, 0, 5, 6, 0}, 12,
                      0, 0);
    tj_tensor *v = test_f64_grad((const double[]){10, 20, 30, 40}, 1, (const int64_t[]){4}, true);
    tj_tensor *rows[1] = {mask_of(1, (const int64_t[]){3}, M3)};
    tj_tensor *out = tj_index_put(x, rows, 1, v, false), *in[2] = {x, v}, *g[2] = {NULL, NULL};
    test_expect_close(out, (const double[]){10, 20, 30, 40, 4, 5, 6, 7, 10, 20, 30, 40}, 12, 0, 0);
    tj_tensor *w12 = tj_add_scalar(arange_2d(S34, TJ_FLOAT64), tj_v_int(1));
    cr_assert_eq(tj_autograd_grad(&out, 1, &w12, in, 2, g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g[0], (const double[]){0, 0, 0, 0, 5, 6, 7, 8, 0, 0, 0, 0}, 12, 0, 0);
    test_expect_close(g[1], (const double[]){10, 12, 14, 16}, 4, 0, 0);
}

/* ---- errors ---- */

Test(masked, bad_calls_are_errors_naming_the_operator_and_shapes)
{
    tj_tensor *x = arange_2d(S34, TJ_FLOAT32);
    tj_tensor *m4[1] = {mask_of(1, (const int64_t[]){4}, CM4)};
    test_expect_error(tj_index(x, m4, 1), TJ_ERR_INDEX, "aten::index.Tensor",
                      "The shape of the mask [4] at index 0 does not match the shape of the indexed tensor [3, 4] "
                      "at index 0");
    test_expect_error(tj_index_put(x, m4, 1, tj_zeros(NULL, 0, TJ_FLOAT32), false), TJ_ERR_INDEX, "aten::index_put",
                      "The shape of the mask [4]");
    tj_tensor *zero_d[1] = {tj_scalar_tensor(tj_v_bool(true), TJ_BOOL)};
    test_expect_error(tj_index(x, zero_d, 1), TJ_ERR_UNSUPPORTED, "aten::index.Tensor", "0-dim bool mask");
    tj_tensor *too_many[2] = {mask_of(2, S34, (const bool[12]){true}),
                              test_i64(1, (const int64_t[]){1}, (const int64_t[]){0})};
    test_expect_error(tj_index(x, too_many, 2), TJ_ERR_INDEX, "aten::index.Tensor",
                      "too many indices for tensor of dimension 2");
    /* [2] true rows against an int64 index of 3: not broadcastable */
    tj_tensor *mixed[2] = {mask_of(1, (const int64_t[]){3}, M3),
                           test_i64(1, (const int64_t[]){3}, (const int64_t[]){0, 1, 2})};
    test_expect_error(tj_index(x, mixed, 2), TJ_ERR_SHAPE, "aten::index.Tensor", "could not be broadcast");
    tj_tensor *rows[1] = {mask_of(1, (const int64_t[]){3}, M3)};
    test_expect_error(tj_index_put(x, rows, 1, tj_zeros((const int64_t[]){3, 4}, 2, TJ_FLOAT32), false), TJ_ERR_SHAPE,
                      "aten::index_put",
                      "value tensor of shape [3, 4] cannot be broadcast to indexing result of shape [2, 4]");
    tj_tensor *fmask = tj_zeros((const int64_t[]){3, 4}, 2, TJ_FLOAT32);
    test_expect_error(tj_masked_select(x, fmask), TJ_ERR_DTYPE, "aten::masked_select",
                      "expected a bool mask, got float32[3, 4]");
    test_expect_error(tj_masked_select(x, mask_of(1, (const int64_t[]){3}, M3)), TJ_ERR_SHAPE, "aten::masked_select",
                      "shapes [3, 4] and [3] cannot be broadcast");
    const bool mk[6] = {true, false, true, false, true, false};
    tj_tensor *z23 = tj_zeros(S23, 2, TJ_FLOAT64);
    test_expect_error(tj_masked_scatter(z23, mask_of(2, S23, mk), tj_zeros((const int64_t[]){2}, 1, TJ_FLOAT64)),
                      TJ_ERR_SHAPE, "aten::masked_scatter", "source [2] has 2, mask [2, 3] 3 true");
    test_expect_error(tj_masked_scatter(tj_zeros(S23, 2, TJ_FLOAT64), mask_of(2, S23, mk), tj_zeros(S23, 2, TJ_FLOAT32)),
                      TJ_ERR_DTYPE, "aten::masked_scatter", "same dtypes but got float64 and float32");
    test_expect_error(tj_masked_scatter(x, fmask, x), TJ_ERR_DTYPE, "aten::masked_scatter", "bool mask");
}

Test(masked, calls_leak_nothing, .init = count_allocations)
{
    tj_tensor *x = tj_zeros(S34, 2, TJ_FLOAT32), *m = tj_zeros((const int64_t[]){4}, 1, TJ_BOOL);
    tj_tensor *m3 = tj_zeros((const int64_t[]){3}, 1, TJ_BOOL), *fake = tj_tensor_fake(TJ_FLOAT32, 1, (const int64_t[]){3});
    tj_tensor *src = tj_zeros((const int64_t[]){1}, 1, TJ_FLOAT32), *all = tj_ones(S34, 2, TJ_BOOL);
    int64_t before = live_allocations();
    for (int k = 0; k < 3; k++) {
        tj_scope *s = tj_scope_begin(); /* the suite's scope owns x ... all */
        tj_tensor *bad[1] = {m};
        cr_expect_null(tj_index(x, bad, 1));
        cr_expect_null(tj_masked_scatter(x, all, src));
        cr_expect_null(tj_masked_select(x, m3));
        cr_expect_null(tj_nonzero(fake));
        /* and successful ones give their positions table back */
        tj_tensor *rows[1] = {m3}, *sel = tj_index(x, rows, 1), *put = tj_index_put(x, rows, 1, src, true);
        cr_expect(sel && put, "%s", tj_last_error());
        tj_scope_end(s);
    }
    cr_expect_eq(live_allocations(), before);
}

/* ---- tracing ---- */

static tj_status nonzero_then_sum(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_sum(tj_nonzero(in[0]), TJ_DTYPE_NONE);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_status select_mask(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *m[1] = {in[1]};
    out[0] = tj_index(in[0], m, 1);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(masked, fake_mode_tracing_refuses_data_dependent_shapes)
{
    tj_tensor *x = arange_2d(S34, TJ_FLOAT32), *in[2] = {x, mask_of(1, (const int64_t[]){3}, M3)};
    test_expect_error(tj_make_fx(nonzero_then_sum, NULL, in, 1, NULL, TJ_TRACE_FAKE), TJ_ERR_UNSUPPORTED,
                      "aten::nonzero", "output shape depends on the input's values");
    test_expect_error(tj_make_fx(select_mask, NULL, in, 2, NULL, TJ_TRACE_FAKE), TJ_ERR_UNSUPPORTED,
                      "aten::index.Tensor", "output shape depends on the input's values");
}

/* A real-mode trace records the count of its inputs: the graph runs with
 * masks of that count, and refuses others (tj_graph_run) or any
 * (tj_compile, which has no values to count). */
Test(masked, real_mode_graphs_hold_the_traced_count_only)
{
    tj_tensor *x = arange_2d(S34, TJ_FLOAT32), *in[2] = {x, mask_of(1, (const int64_t[]){3}, M3)};
    tj_graph *g = tj_make_fx(select_mask, NULL, in, 2, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    const bool other_two[3] = {false, true, true}, three[3] = {true, true, true};
    tj_tensor *same_count[2] = {x, mask_of(1, (const int64_t[]){3}, other_two)}, *out[1];
    cr_assert_eq(tj_graph_run(g, same_count, 2, out), TJ_OK, "%s", tj_last_error());
    test_expect_close(out[0], (const double[]){4, 5, 6, 7, 8, 9, 10, 11}, 8, 0, 0);
    tj_tensor *more[2] = {x, mask_of(1, (const int64_t[]){3}, three)};
    cr_expect_eq(tj_graph_run(g, more, 2, out), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "has shape [3, 4] here, the graph records [2, 4]"), "%s", tj_last_error());
    cr_expect_null(tj_compile(g, NULL));
    cr_expect(strstr(tj_last_error(), "output shape depends on the input's values"), "%s", tj_last_error());
    tj_graph_free(g);
    tj_graph *gn = tj_make_fx(nonzero_then_sum, NULL, in, 1, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(gn, "%s", tj_last_error());
    cr_expect_eq(tj_graph_run(gn, (tj_tensor *[]){tj_ones(S34, 2, TJ_FLOAT32)}, 1, out), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "aten::nonzero"), "%s", tj_last_error());
    tj_graph_free(gn);
}

static tj_status fill_masked_rows_(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_clone(in[0]), *m[1] = {in[1]};
    out[0] = tj_index_put_(y, m, 1, in[2], false);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* x[mask] = row has a static shape: it traces in fake mode, compiles, and
 * its plan writes each run's own mask, whatever its count. */
Test(masked, masked_assignment_traces_statically_and_runs_any_count)
{
    tj_tensor *x = arange_2d(S34, TJ_FLOAT32), *row = test_f32(1, (const int64_t[]){4}, (const float[]){-1, -2, -3, -4});
    tj_tensor *in[3] = {x, mask_of(1, (const int64_t[]){3}, M3), row};
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(fill_masked_rows_, NULL, in, 3, core, TJ_TRACE_FAKE);
    tj_decomp_table_free(core);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::index_put")), 1);
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    const bool masks[3][3] = {{true, false, true}, {false, false, false}, {true, true, true}};
    for (int k = 0; k < 3; k++) {
        tj_tensor *run_in[3] = {x, mask_of(1, (const int64_t[]){3}, masks[k]), row}, *out[1];
        cr_assert_eq(tj_plan_run(p, run_in, 3, out), TJ_OK, "%s", tj_last_error());
        tj_tensor *m[1] = {run_in[1]};
        test_expect_same(out[0], tj_index_put(x, m, 1, row, false), "plan vs eager");
    }
    tj_plan_free(p);
    tj_graph_free(g);
    /* values spanning the count are data-dependent: refused in fake mode */
    tj_tensor *vals = tj_zeros((const int64_t[]){2, 4}, 2, TJ_FLOAT32), *in2[3] = {x, in[1], vals};
    test_expect_error(tj_make_fx(fill_masked_rows_, NULL, in2, 3, NULL, TJ_TRACE_FAKE), TJ_ERR_UNSUPPORTED,
                      "aten::index_put", "output shape depends on the input's values");
}
