/* Advanced indexing: aten::index.Tensor, index_put, index_put_ and their
 * Tensor?[] argument through dispatch, autograd, make_fx, the printer /
 * parser and replay. Reference values from PyTorch 1.13.1
 * (/usr/bin/python3, python3-torch), with
 *   x = torch.arange(12.).reshape(3, 4); x3 = torch.arange(24.).reshape(2, 3, 4)
 *   A  x[torch.tensor([2, -1, 0])]                 -> [[8..11], [8..11], [0..3]]
 *   B  x[:, torch.tensor([[0, 3], [1, 1]])]       -> [0,3,1,1, 4,7,5,5, 8,11,9,9], shape [3, 2, 2]
 *   C  x3[torch.tensor([1, 0]), :, torch.tensor([3, 2])]   -> [15,19,23, 2,6,10], shape [2, 3]
 *   D  x3[:, torch.tensor([[0], [2]]), torch.tensor([1, 3])] -> [1,3,9,11, 13,15,21,23], shape [2, 2, 2]
 *   C2 torch.arange(36.).reshape(2, 3, 2, 3)[:, torch.tensor([2, 0]), :, torch.tensor([1, -1])]
 *        -> [13,16,31,34, 2,5,20,23], shape [2, 2, 2]
 *   E  torch.zeros(5).index_put((torch.tensor([0,2,0,4,0]),), torch.tensor([1.,2,3,4,5]), accumulate=acc)
 *        acc=True -> [9,0,2,0,4]; acc=False -> [5,0,2,0,4]
 *   F  aten.index_put(torch.zeros(3, 4), [None, torch.tensor([1, 3])], torch.tensor(7.)) -> columns 1, 3 = 7
 *   G  x.requires_grad_(); w = torch.arange(1., 13.).reshape(3, 4)
 *      (x[torch.tensor([2, 0, 2])] * w).sum().backward(); x.grad -> [5,6,7,8, 0,0,0,0, 10,12,14,16]
 *   H  s = torch.arange(6.).reshape(2, 3); v = torch.tensor([10., 20.]) (both requiring grad)
 *      out = aten.index_put(s, [None, torch.tensor([1, 1])], v.reshape(1, 2), acc)
 *      (out * torch.arange(1., 7.).reshape(2, 3)).sum().backward()
 *        acc=False: out [0,20,2, 3,20,5], s.grad [1,0,3, 4,0,6], v.grad [7,7]
 *        acc=True:  out [0,31,2, 3,34,5], s.grad [1,2,3, 4,5,6], v.grad [7,7]
 * and make_fx(lambda x, i: aten.index.Tensor(x, [None, i])) printing
 *   index = torch.ops.aten.index.Tensor(x_1, [None, i_1]) */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(advanced_index, .init = test_scope_open, .fini = test_scope_close);

static tj_tensor *arange_f32(int64_t n, int ndim, const int64_t *shape)
{
    return tj_view(tj_arange(tj_v_int(0), tj_v_int(n), tj_v_int(1), TJ_FLOAT32), shape, ndim);
}

static tj_tensor *vec_i64(int n, const int64_t *v)
{
    const int64_t shape[1] = {n};
    return test_i64(1, shape, v);
}

static const int64_t S34[2] = {3, 4}, S234[3] = {2, 3, 4};

Test(advanced_index, rows_with_a_negative_index_match_pytorch)
{
    tj_tensor *idx[1] = {vec_i64(3, (const int64_t[]){2, -1, 0})};
    tj_tensor *r = tj_index(arange_f32(12, 2, S34), idx, 1);
    test_assert_dtype_shape(r, TJ_FLOAT32, 2, S34);
    const double want[12] = {8, 9, 10, 11, 8, 9, 10, 11, 0, 1, 2, 3};
    test_expect_close(r, want, 12, 0, 0);
}

Test(advanced_index, none_entry_is_a_full_slice)
{
    const int64_t s22[2] = {2, 2};
    tj_tensor *idx[2] = {NULL, test_i64(2, s22, (const int64_t[]){0, 3, 1, 1})};
    tj_tensor *r = tj_index(arange_f32(12, 2, S34), idx, 2);
    test_assert_dtype_shape(r, TJ_FLOAT32, 3, (const int64_t[]){3, 2, 2});
    const double want[12] = {0, 3, 1, 1, 4, 7, 5, 5, 8, 11, 9, 9};
    test_expect_close(r, want, 12, 0, 0);
}

Test(advanced_index, non_adjacent_indexed_dims_go_first)
{
    tj_tensor *idx[3] = {vec_i64(2, (const int64_t[]){1, 0}), NULL, vec_i64(2, (const int64_t[]){3, 2})};
    tj_tensor *r = tj_index(arange_f32(24, 3, S234), idx, 3);
    test_assert_dtype_shape(r, TJ_FLOAT32, 2, (const int64_t[]){2, 3});
    const double want[6] = {15, 19, 23, 2, 6, 10};
    test_expect_close(r, want, 6, 0, 0);
    /* C2: behind a leading full slice too (x4[:, i, :, j]: [B, s0, s2], not [s0, B, s2]) */
    tj_tensor *idx4[4] = {NULL, vec_i64(2, (const int64_t[]){2, 0}), NULL, vec_i64(2, (const int64_t[]){1, -1})};
    tj_tensor *r4 = tj_index(arange_f32(36, 4, (const int64_t[]){2, 3, 2, 3}), idx4, 4);
    test_assert_dtype_shape(r4, TJ_FLOAT32, 3, (const int64_t[]){2, 2, 2});
    const double want4[8] = {13, 16, 31, 34, 2, 5, 20, 23};
    test_expect_close(r4, want4, 8, 0, 0);
}

Test(advanced_index, adjacent_broadcast_indices_stay_in_place)
{
    const int64_t s21[2] = {2, 1};
    tj_tensor *idx[3] = {NULL, test_i64(2, s21, (const int64_t[]){0, 2}), vec_i64(2, (const int64_t[]){1, 3})};
    tj_tensor *r = tj_index(arange_f32(24, 3, S234), idx, 3);
    test_assert_dtype_shape(r, TJ_FLOAT32, 3, (const int64_t[]){2, 2, 2});
    const double want[8] = {1, 3, 9, 11, 13, 15, 21, 23};
    test_expect_close(r, want, 8, 0, 0);
}

Test(advanced_index, strided_self_and_0dim_index)
{
    /* x.t() is [[0,4,8],[1,5,9],[2,6,10],[3,7,11]]: rows 3 and 0 */
    tj_tensor *xt = tj_transpose(arange_f32(12, 2, S34), 0, 1);
    tj_tensor *idx[1] = {vec_i64(2, (const int64_t[]){3, 0})};
    const double rows[6] = {3, 7, 11, 0, 4, 8};
    test_expect_close(tj_index(xt, idx, 1), rows, 6, 0, 0);
    /* x[:, tensor(-1)]: a 0-dim index removes the dim */
    const int64_t minus1 = -1;
    tj_tensor *col[2] = {NULL, test_i64(0, NULL, &minus1)};
    tj_tensor *r = tj_index(arange_f32(12, 2, S34), col, 2);
    test_assert_dtype_shape(r, TJ_FLOAT32, 1, (const int64_t[]){3});
    const double last[3] = {3, 7, 11};
    test_expect_close(r, last, 3, 0, 0);
}

/* x[..., idx, ...] (idx at entry k, the others None) against index_select
 * of idx's elements in row-major order along dim k, reshaped to the result. */
static void expect_as_index_select(tj_tensor *x, int k, tj_tensor *idx, const char *what)
{
    tj_tensor *list[TJ_MAX_DIMS] = {NULL};
    list[k] = idx;
    tj_tensor *r = tj_index(x, list, k + 1);
    cr_assert_not_null(r, "%s: %s", what, tj_last_error());
    const int64_t flat[1] = {-1};
    tj_tensor *want = tj_index_select(x, k, tj_reshape(tj_contiguous(idx), flat, 1));
    cr_assert_not_null(want, "%s: %s", what, tj_last_error());
    test_expect_same(r, tj_reshape(want, tj_tensor_shape(r), tj_tensor_ndim(r)), what);
}

Test(advanced_index, one_index_tensor_gathers_rows_as_index_select)
{
    /* one index tensor (in range) runs index_select's row copies: any
     * position, strided self and index, several dims, every element size */
    const int64_t s3[3] = {40, 6, 5};
    tj_tensor *x = test_random_f32(3, s3, 3);
    const int64_t iv[6] = {5, 0, 5, 3, 1, 2};
    tj_tensor *i6 = vec_i64(6, iv);
    expect_as_index_select(x, 0, i6, "dim 0");
    expect_as_index_select(x, 1, i6, "dim 1");
    expect_as_index_select(x, 2, vec_i64(4, (const int64_t[]){4, 4, 0, 1}), "last dim");
    expect_as_index_select(tj_transpose(x, 0, 2), 1, i6, "transposed self");
    tj_tensor *every_other = tj_slice(i6, 0, false, 0, false, 0, 2); /* 5, 5, 1: stride 2 */
    expect_as_index_select(x, 1, every_other, "strided index");
    const int64_t s23[2] = {2, 3}, s32[2] = {3, 2};
    tj_tensor *i23 = test_i64(2, s23, iv);
    expect_as_index_select(x, 1, i23, "2-d index");
    expect_as_index_select(x, 1, tj_transpose(test_i64(2, s32, iv), 0, 1), "transposed 2-d index");
    const int64_t four = 4;
    tj_tensor *r = tj_index(x, (tj_tensor *[]){NULL, NULL, test_i64(0, NULL, &four)}, 3);
    test_assert_dtype_shape(r, TJ_FLOAT32, 2, (const int64_t[]){40, 6});
    expect_as_index_select(x, 2, test_i64(0, NULL, &four), "0-dim index");
    expect_as_index_select(x, 0, vec_i64(0, iv), "empty index");
    tj_tensor *ints = tj_arange(tj_v_int(0), tj_v_int(1200), tj_v_int(1), TJ_INT64);
    expect_as_index_select(tj_view(ints, s3, 3), 1, i6, "int64 self");
    expect_as_index_select(tj_gt_scalar(x, tj_v_float(0.5)), 1, i6, "bool self");
}

Test(advanced_index, one_index_tensor_splits_rows_over_two_threads)
{
    int threads = tj_get_num_threads();
    tj_set_num_threads(2);
    const int64_t s2[2] = {3000, 64};
    tj_tensor *x = test_random_f32(2, s2, 4);
    int64_t iv[5000];
    for (int i = 0; i < 5000; i++) iv[i] = (int64_t)(i * 7919 % 3000);
    expect_as_index_select(x, 0, vec_i64(5000, iv), "5000 rows, 2 threads");
    tj_set_num_threads(threads);
}

static const int64_t E_IDX[5] = {0, 2, 0, 4, 0};
static const float E_VALS[5] = {1, 2, 3, 4, 5};

Test(advanced_index, index_put_accumulates_duplicates_or_keeps_the_last)
{
    const int64_t s5[1] = {5};
    tj_tensor *z = tj_zeros(s5, 1, TJ_FLOAT32), *idx[1] = {vec_i64(5, E_IDX)}, *v = test_f32(1, s5, E_VALS);
    const float sum[5] = {9, 0, 2, 0, 4}, last[5] = {5, 0, 2, 0, 4}, zeros[5] = {0};
    test_expect_f32(tj_index_put(z, idx, 1, v, true), sum, 5, 0);
    test_expect_f32(tj_index_put(z, idx, 1, v, false), last, 5, 0);
    test_expect_f32(z, zeros, 5, 0); /* out of place: self unchanged */
}

Test(advanced_index, index_put_broadcasts_a_0dim_value_over_a_none_slice)
{
    tj_tensor *idx[2] = {NULL, vec_i64(2, (const int64_t[]){1, 3})};
    const float seven = 7;
    tj_tensor *r = tj_index_put(tj_zeros(S34, 2, TJ_FLOAT32), idx, 2, test_f32(0, NULL, &seven), false);
    const float want[12] = {0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7};
    test_expect_f32(r, want, 12, 0);
}

Test(advanced_index, index_put_in_place_writes_self_and_bumps_its_version)
{
    const int64_t s5[1] = {5};
    tj_tensor *z = tj_zeros(s5, 1, TJ_FLOAT32), *idx[1] = {vec_i64(5, E_IDX)};
    uint32_t before = tj_tensor_version(z);
    tj_tensor *r = tj_index_put_(z, idx, 1, test_f32(1, s5, E_VALS), true);
    cr_assert_eq(r, z, "%s", tj_last_error());
    const float sum[5] = {9, 0, 2, 0, 4};
    test_expect_f32(z, sum, 5, 0);
    cr_expect_gt(tj_tensor_version(z), before);
}

/* ---- overlap: index_put_ and index_fill_ refuse what ATen 1.13 refuses ----
 * torch 1.13 (/usr/bin/python3), x = torch.tensor([1., 2., 3., 4.]),
 * n = torch.tensor([0, 1, 2, 3]):
 *   x.index_put_((i,), x[:2]), x.index_put_((i,), x[0]) (either accumulate),
 *   n.index_put_((n[:2],), torch.tensor(9)), n.index_fill_(0, n[:2], 7),
 *   n.index_fill_(0, n, 7): RuntimeError "unsupported operation: some
 *     elements of the input tensor and the written-to tensor refer to a
 *     single memory location" (assert_no_overlap);
 *   torch.zeros(1, 3).expand(2, 3).index_put_((tensor([0]), tensor([1])), tensor(5.), accumulate=True)
 *     -> [[0, 5, 0], [0, 5, 0]]; torch.zeros(2, 1).expand(2, 3).index_fill_(1, tensor([2]), 5.)
 *     -> all 5 (only a deprecation warning for an expanded self);
 *   x.index_fill_(0, tensor([1, 2]), x[0]) -> [1, 1, 1, 4] (value.item());
 *   y = torch.arange(16.).view(4, 4); y.index_put_((tensor([0]),), y[:, 1]); y[0] -> [1, 5, 9, 13]
 *   z = torch.tensor([0, 1, 0, 3]); z.index_fill_(0, z[::2], 7) -> [7, 1, 0, 3]
 *     (an operand not dense: "too hard" for ATen, accepted). */

static const char OVERLAP[] = "refer to a single memory location";

Test(advanced_index, index_put_refuses_values_or_indices_sharing_memory_with_self_as_aten)
{
    tj_tensor *x = test_f32(1, (const int64_t[]){4}, (const float[]){1, 2, 3, 4});
    tj_tensor *i12[1] = {vec_i64(2, (const int64_t[]){1, 2})}, *i1[1] = {vec_i64(1, (const int64_t[]){1})};
    test_expect_error(tj_index_put_(x, i12, 1, tj_slice(x, 0, true, 0, true, 2, 1), false), TJ_ERR_UNSUPPORTED,
                      "aten::index_put_", "some elements of values [2] and of the written-to tensor (self) [4] refer");
    for (int acc = 0; acc < 2; acc++)
        test_expect_error(tj_index_put_(x, i1, 1, tj_select(x, 0, 0), acc), TJ_ERR_UNSUPPORTED, "aten::index_put_",
                          OVERLAP);
    tj_tensor *n = vec_i64(4, (const int64_t[]){0, 1, 2, 3});
    tj_tensor *in[1] = {tj_slice(n, 0, true, 0, true, 2, 1)};
    test_expect_error(tj_index_put_(n, in, 1, tj_scalar_tensor(tj_v_int(9), TJ_INT64), false), TJ_ERR_UNSUPPORTED,
                      "aten::index_put_", "some elements of indices[0] [2] and of the written-to tensor (self) [4]");
    test_expect_f32(x, (const float[]){1, 2, 3, 4}, 4, 0);
    const double n_was[4] = {0, 1, 2, 3};
    test_expect_close(n, n_was, 4, 0, 0);
}

Test(advanced_index, index_put_accepts_what_aten_accepts_despite_shared_memory)
{
    /* an expanded self */
    tj_tensor *e = tj_expand(tj_zeros((const int64_t[]){1, 3}, 2, TJ_FLOAT32), (const int64_t[]){2, 3}, 2);
    tj_tensor *ij[2] = {vec_i64(1, (const int64_t[]){0}), vec_i64(1, (const int64_t[]){1})};
    cr_assert_not_null(tj_index_put_(e, ij, 2, tj_scalar_tensor(tj_v_float(5), TJ_FLOAT32), true), "%s",
                       tj_last_error());
    const double e_want[6] = {0, 5, 0, 0, 5, 0};
    test_expect_close(e, e_want, 6, 0, 0);
    /* values not dense (a column): too hard for ATen, read from a copy here */
    tj_tensor *y = tj_clone(arange_f32(16, 2, (const int64_t[]){4, 4}));
    tj_tensor *row0[1] = {vec_i64(1, (const int64_t[]){0})};
    cr_assert_not_null(tj_index_put_(y, row0, 1, tj_select(y, 1, 1), false), "%s", tj_last_error());
    test_expect_f32(tj_select(y, 0, 0), (const float[]){1, 5, 9, 13}, 4, 0);
}

Test(advanced_index, index_fill_checks_overlap_as_aten)
{
    tj_tensor *n = vec_i64(4, (const int64_t[]){0, 1, 2, 3});
    test_expect_error(tj_index_fill_(n, 0, tj_slice(n, 0, true, 0, true, 2, 1), tj_v_int(7)), TJ_ERR_UNSUPPORTED,
                      "aten::index_fill_.int_Scalar", "some elements of index [2] and of the written-to tensor (self) [4]");
    test_expect_error(tj_index_fill_(n, 0, n, tj_v_int(7)), TJ_ERR_UNSUPPORTED, "aten::index_fill_.int_Scalar",
                      OVERLAP);
    const double n_was[4] = {0, 1, 2, 3};
    test_expect_close(n, n_was, 4, 0, 0);
    /* accepted: an expanded self, a value tensor in self, an index not dense */
    tj_tensor *e = tj_expand(tj_zeros((const int64_t[]){2, 1}, 2, TJ_FLOAT32), (const int64_t[]){2, 3}, 2);
    cr_assert_not_null(tj_index_fill_(e, 1, vec_i64(1, (const int64_t[]){2}), tj_v_float(5)), "%s", tj_last_error());
    const double fives[6] = {5, 5, 5, 5, 5, 5};
    test_expect_close(e, fives, 6, 0, 0);
    tj_tensor *x = test_f32(1, (const int64_t[]){4}, (const float[]){1, 2, 3, 4});
    cr_assert_not_null(tj_index_fill_tensor_(x, 0, vec_i64(2, (const int64_t[]){1, 2}), tj_select(x, 0, 0)), "%s",
                       tj_last_error());
    test_expect_f32(x, (const float[]){1, 1, 1, 4}, 4, 0);
    tj_tensor *z = vec_i64(4, (const int64_t[]){0, 1, 0, 3});
    cr_assert_not_null(tj_index_fill_(z, 0, tj_slice(z, 0, true, 0, true, 4, 2), tj_v_int(7)), "%s", tj_last_error());
    const double z_want[4] = {7, 1, 0, 3};
    test_expect_close(z, z_want, 4, 0, 0);
}

Test(advanced_index, index_gradient_sums_repeated_rows)
{
    tj_tensor *x = tj_clone(arange_f32(12, 2, S34));
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *w = tj_view(tj_arange(tj_v_int(1), tj_v_int(13), tj_v_int(1), TJ_FLOAT32), S34, 2);
    tj_tensor *idx[1] = {vec_i64(3, (const int64_t[]){2, 0, 2})};
    tj_tensor *g = test_grad1(x, tj_index(x, idx, 1), w);
    const double want[12] = {5, 6, 7, 8, 0, 0, 0, 0, 10, 12, 14, 16};
    test_expect_close(g, want, 12, 0, 0);
}

/* H above: out and the gradients of self and of the broadcast values. */
static void index_put_grads(bool accumulate, const double *want_out, const double *want_gs)
{
    const int64_t s23[2] = {2, 3}, s2[1] = {2}, s12[2] = {1, 2};
    tj_tensor *s = tj_clone(arange_f32(6, 2, s23)), *v = test_f32(1, s2, (const float[]){10, 20});
    tj_tensor_set_requires_grad(s, true);
    tj_tensor_set_requires_grad(v, true);
    tj_tensor *idx[2] = {NULL, vec_i64(2, (const int64_t[]){1, 1})};
    tj_tensor *out = tj_index_put(s, idx, 2, tj_view(v, s12, 2), accumulate);
    tj_tensor *w = tj_view(tj_arange(tj_v_int(1), tj_v_int(7), tj_v_int(1), TJ_FLOAT32), s23, 2);
    test_expect_close(out, want_out, 6, 0, 0);
    tj_tensor *in[2] = {s, v}, *g[2] = {NULL, NULL};
    cr_assert_eq(tj_autograd_grad(&out, 1, &w, in, 2, g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g[0], want_gs, 6, 0, 0);
    const double gv[2] = {7, 7};
    test_expect_close(g[1], gv, 2, 0, 0);
}

Test(advanced_index, index_put_gradients_match_pytorch)
{
    index_put_grads(false, (const double[]){0, 20, 2, 3, 20, 5}, (const double[]){1, 0, 3, 4, 0, 6});
    index_put_grads(true, (const double[]){0, 31, 2, 3, 34, 5}, (const double[]){1, 2, 3, 4, 5, 6});
}

Test(advanced_index, bad_indices_are_errors_naming_the_operator)
{
    tj_tensor *x = arange_f32(12, 2, S34);
    tj_tensor *over[1] = {vec_i64(1, (const int64_t[]){3})};
    test_expect_error(tj_index(x, over, 1), TJ_ERR_INDEX, "aten::index.Tensor",
                      "index 3 is out of bounds for dimension 0 with size 3");
    tj_tensor *under[2] = {NULL, vec_i64(2, (const int64_t[]){0, -5})};
    test_expect_error(tj_index(x, under, 2), TJ_ERR_INDEX, "aten::index.Tensor",
                      "index -5 is out of bounds for dimension 1 with size 4");
    tj_tensor *three[3] = {NULL, NULL, vec_i64(1, (const int64_t[]){0})};
    test_expect_error(tj_index(x, three, 3), TJ_ERR_INDEX, "aten::index.Tensor",
                      "too many indices for tensor of dimension 2 (got 3)");
    tj_tensor *mismatch[2] = {vec_i64(2, (const int64_t[]){0, 1}), vec_i64(3, (const int64_t[]){0, 1, 2})};
    test_expect_error(tj_index(x, mismatch, 2), TJ_ERR_SHAPE, "aten::index.Tensor", "could not be broadcast");
    tj_tensor *flt[1] = {tj_zeros((const int64_t[]){1}, 1, TJ_FLOAT32)};
    test_expect_error(tj_index(x, flt, 1), TJ_ERR_DTYPE, "aten::index.Tensor", "must be int64 or bool, index 0 is float32");
    tj_tensor *mask[1] = {tj_zeros((const int64_t[]){4}, 1, TJ_BOOL)};
    test_expect_error(tj_index(x, mask, 1), TJ_ERR_INDEX, "aten::index.Tensor",
                      "The shape of the mask [4] at index 0 does not match the shape of the indexed tensor [3, 4] at index 0");
    tj_tensor *none[1] = {NULL};
    test_expect_error(tj_index(x, none, 1), TJ_ERR_INVALID_ARGUMENT, "aten::index.Tensor", "at least one index");
}

Test(advanced_index, bad_index_put_calls_leave_self_unchanged)
{
    tj_tensor *x = arange_f32(12, 2, S34), *idx[1] = {vec_i64(2, (const int64_t[]){0, 3})};
    tj_tensor *row = tj_zeros((const int64_t[]){4}, 1, TJ_FLOAT32);
    test_expect_error(tj_index_put_(x, idx, 1, row, false), TJ_ERR_INDEX, "aten::index_put_",
                      "index 3 is out of bounds for dimension 0 with size 3");
    const double orig[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    test_expect_close(x, orig, 12, 0, 0);
    tj_tensor *ok[1] = {vec_i64(2, (const int64_t[]){0, 1})};
    test_expect_error(tj_index_put(x, ok, 1, tj_zeros((const int64_t[]){3}, 1, TJ_FLOAT32), false), TJ_ERR_SHAPE,
                      "aten::index_put", "value tensor of shape [3] cannot be broadcast to indexing result of shape [2, 4]");
    test_expect_error(tj_index_put(x, ok, 1, tj_zeros((const int64_t[]){4}, 1, TJ_FLOAT64), false), TJ_ERR_DTYPE,
                      "aten::index_put", "got float32 for the destination and float64 for the source");
}

/* Two expanded (0-stride) index tensors broadcasting to 274177 x
 * 67280421310721 = 2^64 + 1 positions: an int64 product would wrap to 1 and
 * accumulate would add once. (PyTorch has no check to compare with: it
 * would try to allocate them.) */
Test(advanced_index, indices_broadcasting_past_int64_are_an_overflow_error)
{
    tj_tensor *zero = tj_zeros((const int64_t[]){1, 1}, 2, TJ_INT64);
    tj_tensor *idx[2] = {tj_expand(zero, (const int64_t[]){274177, 1}, 2),
                         tj_expand(zero, (const int64_t[]){1, 67280421310721LL}, 2)};
    tj_tensor *x = tj_zeros((const int64_t[]){2, 2}, 2, TJ_FLOAT64), *five = tj_tensor_scalar_f64(5);
    for (int acc = 0; acc < 2; acc++) {
        test_expect_error(tj_index_put(x, idx, 2, five, acc), TJ_ERR_OVERFLOW, "aten::index_put",
                          "[274177, 67280421310721]");
        test_expect_error(tj_index_put_(x, idx, 2, five, acc), TJ_ERR_OVERFLOW, "aten::index_put",
                          "[274177, 67280421310721]");
    }
    test_expect_close(x, (const double[]){0, 0, 0, 0}, 4, 0, 0);
    test_expect_error(tj_index(x, idx, 2), TJ_ERR_OVERFLOW, "aten::index.Tensor", "[274177, 67280421310721]");
    tj_tensor *f = tj_tensor_fake(TJ_FLOAT64, 2, (const int64_t[]){2, 2});
    tj_tensor *fidx[2] = {tj_tensor_fake(TJ_INT64, 2, (const int64_t[]){274177, 1}),
                          tj_tensor_fake(TJ_INT64, 2, (const int64_t[]){1, 67280421310721LL})};
    test_expect_error(tj_index_put(f, fidx, 2, tj_tensor_fake(TJ_FLOAT64, 0, NULL), true), TJ_ERR_OVERFLOW,
                      "aten::index_put", "[274177, 67280421310721]");
    /* B fits (2^7 positions) but with self's other dims the indexing
     * result has 2^29 * 2^7 * 2^29 = 2^65 elements */
    tj_tensor *big = tj_tensor_fake(TJ_FLOAT32, 3, (const int64_t[]){1LL << 29, 2, 1LL << 29});
    tj_tensor *cols[2] = {NULL, tj_tensor_fake(TJ_INT64, 2, (const int64_t[]){1, 128})};
    test_expect_error(tj_index_put(big, cols, 2, tj_tensor_fake(TJ_FLOAT32, 0, NULL), true), TJ_ERR_OVERFLOW,
                      "aten::index_put", "[536870912, 1, 128, 536870912]");
}

/* ---- tracing, printing, replay ---- */

static tj_status index_cols(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n;
    tj_tensor *idx[2] = {NULL, in[1]};
    out[0] = tj_index(in[0], idx, 2);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(advanced_index, traced_graph_prints_none_entries_parses_back_and_replays)
{
    tj_tensor *in[2] = {arange_f32(12, 2, S34), vec_i64(2, (const int64_t[]){1, -4})};
    for (int mode = 0; mode < 2; mode++) {
        tj_graph *g = tj_make_fx(index_cols, NULL, in, 2, NULL, mode ? TJ_TRACE_FAKE : TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s", tj_last_error());
        char *text = tj_graph_to_string(g);
        cr_expect(strstr(text, "aten.index.Tensor(%arg0_1, [None, %arg1_1])"), "%s", text);
        test_expect_round_trip(text);
        free(text);
        const double want[6] = {1, 0, 5, 4, 9, 8};
        test_expect_close(test_replay1(g, in, 2), want, 6, 0, 0);
        tj_graph_free(g);
    }
}

static tj_status put_rows_(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n;
    tj_tensor *idx[1] = {in[1]};
    out[0] = tj_mul_scalar(tj_index_put_(in[0], idx, 1, in[2], true), tj_v_int(2));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(advanced_index, traced_index_put_is_functionalised_and_replays_as_eager)
{
    const int64_t s5[1] = {5};
    tj_tensor *idx = vec_i64(5, E_IDX), *v = test_f32(1, s5, E_VALS);
    tj_tensor *in[3] = {tj_zeros(s5, 1, TJ_FLOAT32), idx, v};
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(put_rows_, NULL, in, 3, core, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect(test_only_primitives(g));
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::index_put")), 1);
    cr_assert_geq(tj_pass_functionalize(g), 0, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::index_put_")), 0);
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_assert_eq(tj_plan_num_outputs(p), 2); /* the result, then self's new value written back */
    tj_tensor *self = tj_zeros(s5, 1, TJ_FLOAT32), *run_in[3] = {self, idx, v}, *out[2];
    cr_assert_eq(tj_plan_run(p, run_in, 3, out), TJ_OK, "%s", tj_last_error());
    const float doubled[5] = {18, 0, 4, 0, 8}, sum[5] = {9, 0, 2, 0, 4};
    test_expect_f32(out[0], doubled, 5, 0);
    test_expect_f32(self, sum, 5, 0); /* the mutation written back into the input */
    tj_plan_free(p);
    tj_graph_free(g);
    tj_decomp_table_free(core);
}

/* ---- accumulate does not depend on the thread count ---- */

/* self [rows, cols] zero, `n` float32 values accumulated at `idx` (on dim 0,
 * or on dim 1 with a None first), against a sequential sum in index order. */
static void expect_thread_independent(int64_t rows, int64_t cols, bool on_dim1)
{
    enum { N = 64 };
    int64_t idx[N];
    for (int b = 0; b < N; b++) idx[b] = (b * 7) % 3; /* positions 0, 1, 2 repeated */
    int64_t other = on_dim1 ? rows : cols;
    const int64_t vshape[2] = {on_dim1 ? rows : N, on_dim1 ? N : cols};
    tj_tensor *v = test_random_f32(2, vshape, 19);
    const float *vd = tj_tensor_data(v);
    float *want = calloc((size_t)(rows * cols), sizeof *want);
    cr_assert_not_null(want);
    for (int b = 0; b < N; b++)
        for (int64_t q = 0; q < other; q++) {
            if (on_dim1) want[q * cols + idx[b]] += vd[q * N + b];
            else want[idx[b] * cols + q] += vd[b * cols + q];
        }
    tj_tensor *ix[2] = {NULL, NULL};
    ix[on_dim1 ? 1 : 0] = vec_i64(N, idx);
    const int64_t s[2] = {rows, cols};
    for (int threads = 1; threads <= 2; threads++) {
        tj_set_num_threads(threads);
        tj_tensor *r = tj_index_put(tj_zeros(s, 2, TJ_FLOAT32), ix, 2, v, true);
        test_expect_f32(r, want, rows * cols, 0);
    }
    free(want);
}

Test(advanced_index, accumulate_is_the_same_on_one_and_two_threads)
{
    expect_thread_independent(3, 32768, false); /* threads split the rows' columns */
    expect_thread_independent(32768, 3, true);  /* threads split the leading dim */
}

Test(advanced_index, graph_interpreter_and_json_carry_none_entries)
{
    tj_tensor *in[2] = {arange_f32(12, 2, S34), vec_i64(2, (const int64_t[]){3, 0})};
    tj_graph *g = tj_make_fx(index_cols, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor *out[1];
    cr_assert_eq(tj_graph_run(g, in, 2, out), TJ_OK, "%s", tj_last_error());
    const double want[6] = {3, 0, 7, 4, 11, 8};
    test_expect_close(out[0], want, 6, 0, 0);
    char *json = test_graph_json(g);
    const char *list = strstr(json, "\"values\": [");
    cr_assert_not_null(list, "%s", json);
    list += strlen("\"values\": [");
    list += strspn(list, " \n");
    cr_expect(strncmp(list, "null", 4) == 0, "%s", json); /* the None entry, then arg1 */
    cr_expect(strstr(list, "\"arg1_1\""), "%s", json);
    free(json);
    tj_graph_free(g);
}

/* A user operator with a Tensor?[]: self times the number of present entries. */
static tj_status count_present_meta(const tj_value *args, tj_meta *outs)
{
    outs[0].dtype = tj_tensor_dtype(args[0].u.t);
    outs[0].ndim = tj_tensor_ndim(args[0].u.t);
    memcpy(outs[0].shape, tj_tensor_shape(args[0].u.t), sizeof(int64_t) * (size_t)outs[0].ndim);
    return TJ_OK;
}

static tj_status count_present_kernel(const tj_value *args, tj_tensor *const *outs)
{
    int present = 0;
    for (int k = 0; k < args[1].n; k++) present += args[1].u.ts[k] != NULL;
    const float *x = tj_tensor_data(args[0].u.t);
    float *y = tj_tensor_data(outs[0]);
    for (int64_t i = 0; i < tj_tensor_numel(outs[0]); i++) y[i] = x[i] * (float)present;
    return TJ_OK;
}

Test(advanced_index, user_schemas_take_optional_tensor_lists)
{
    const tj_op *op = tj_op_register("idxtest::count_present(Tensor self, Tensor?[] indices) -> Tensor",
                                     TJ_OP_PRIMITIVE, count_present_kernel, count_present_meta);
    cr_assert_not_null(op, "%s", tj_last_error());
    cr_expect(strstr(tj_op_schema(op), "Tensor?[] indices"), "%s", tj_op_schema(op));
    const int64_t s2[1] = {2};
    tj_tensor *x = test_f32(1, s2, (const float[]){1, 2});
    tj_tensor *list[3] = {NULL, x, x};
    tj_value args[2] = {tj_v_tensor(x), tj_v_tensors(list, 3)}, outs[1];
    cr_assert_eq(tj_dispatch(op, args, 2, outs), TJ_OK, "%s", tj_last_error());
    const float want[2] = {2, 4};
    test_expect_f32(outs[0].u.t, want, 2, 0);
    test_expect_error(tj_op_register("idxtest::bad(Tensor self, int?[] sizes) -> Tensor", TJ_OP_PRIMITIVE,
                                     count_present_kernel, count_present_meta),
                      TJ_ERR_UNSUPPORTED, "idxtest::bad", "int?[]");
    test_expect_error(tj_op_register("idxtest::bad2(Tensor self) -> Tensor?[]", TJ_OP_IMPLICIT, NULL, NULL),
                      TJ_ERR_UNSUPPORTED, "idxtest::bad2", "only Tensor returns");
    /* a plain Tensor[] still refuses a NULL entry */
    tj_tensor *cat_list[2] = {x, NULL};
    tj_value cat_args[2] = {tj_v_tensors(cat_list, 2), tj_v_int(0)};
    tj_clear_error();
    cr_expect_neq(tj_dispatch(tj_op_find("aten::cat"), cat_args, 2, outs), TJ_OK);
    cr_expect(strstr(tj_last_error(), "element 1 is NULL"), "%s", tj_last_error());
}
