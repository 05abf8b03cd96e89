/* gather, scatter_add and unfold (the indexing primitives). Reference values
 * from PyTorch 1.13.1 (python3-torch):
 *   x = torch.arange(12.).reshape(3, 4); i = torch.tensor([[2,0,1,1],[0,0,2,1]])
 *   torch.gather(x, 0, i)  -> [[8,1,6,7],[0,1,10,7]]
 *   torch.gather(x, 1, torch.tensor([[3,0],[1,1],[2,0]])) -> [[3,0],[5,5],[10,8]]
 *   torch.scatter_add(torch.zeros(3,4), 0, i, torch.ones(2,4) * torch.tensor([1.,2,3,4]))
 *       -> [[1,4,0,0],[0,0,3,8],[1,0,3,0]]
 *   torch.arange(7.).unfold(0, 3, 2) -> [[0,1,2],[2,3,4],[4,5,6]] */
#include <criterion/criterion.h>
#include <string.h>

#include "test_util.h"
#include "tjit/tjit.h"

static tj_tensor *arange_f32(int64_t n, int ndim, const int64_t *shape)
{
    tj_tensor *a = tj_arange(tj_v_int(0), tj_v_int(n), tj_v_int(1), TJ_FLOAT32);
    return tj_view(a, shape, ndim);
}

static void expect_values(const tj_tensor *t, const double *want, int64_t n)
{
    test_expect_close(t, want, n, 0, 0);
}

TestSuite(index, .init = test_scope_open, .fini = test_scope_close);

static const int64_t S34[2] = {3, 4}, S24[2] = {2, 4};
static const int64_t I24[8] = {2, 0, 1, 1, 0, 0, 2, 1};

Test(index, gather_dim0_matches_pytorch)
{
    tj_tensor *r = tj_gather(arange_f32(12, 2, S34), 0, test_i64(2, S24, I24));
    const double want[8] = {8, 1, 6, 7, 0, 1, 10, 7};
    expect_values(r, want, 8);
    cr_expect_eq(tj_tensor_dtype(r), TJ_FLOAT32);
}

Test(index, gather_last_dim_with_transposed_self_and_index)
{
    /* self given as the transpose of a [4, 3] contiguous tensor; index as the
     * transpose of [[3,1,2],[0,1,0]] */
    tj_tensor *self = tj_transpose(tj_clone(tj_transpose(arange_f32(12, 2, S34), 0, 1)), 0, 1);
    const int64_t s23[2] = {2, 3}, it[6] = {3, 1, 2, 0, 1, 0};
    tj_tensor *index = tj_transpose(test_i64(2, s23, it), 0, 1);
    const double want[6] = {3, 0, 5, 5, 10, 8};
    expect_values(tj_gather(self, 1, index), want, 6);
}

Test(index, gather_out_of_range_index_is_an_index_error)
{
    const int64_t bad[8] = {2, 0, 1, 3, 0, 0, 2, 1};
    cr_expect_null(tj_gather(arange_f32(12, 2, S34), 0, test_i64(2, S24, bad)));
    cr_expect_eq(tj_last_status(), TJ_ERR_INDEX);
    cr_expect(strstr(tj_last_error(), "index 3 is out of bounds for dimension 0 with size 3"), "%s", tj_last_error());
    const int64_t neg[8] = {-1, 0, 1, 1, 0, 0, 2, 1};
    cr_expect_null(tj_gather(arange_f32(12, 2, S34), 0, test_i64(2, S24, neg)));
}

Test(index, gather_checks_dtype_rank_and_sizes)
{
    tj_tensor *x = arange_f32(12, 2, S34);
    cr_expect_null(tj_gather(x, 0, tj_zeros(S24, 2, TJ_FLOAT32)));
    cr_expect_eq(tj_last_status(), TJ_ERR_DTYPE);
    const int64_t one[1] = {2}, v[2] = {0, 1};
    cr_expect_null(tj_gather(x, 0, test_i64(1, one, v)));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    const int64_t s35[2] = {3, 5};
    cr_expect_null(tj_gather(x, 0, tj_zeros(s35, 2, TJ_INT64)));
    cr_expect(strstr(tj_last_error(), "size does not match at dimension 1"), "%s", tj_last_error());
    cr_expect_null(tj_gather(x, 2, test_i64(2, S24, I24)));
    cr_expect_eq(tj_last_status(), TJ_ERR_INDEX);
}

Test(index, gather_empty_index_and_0dim)
{
    const int64_t s04[2] = {0, 4};
    tj_tensor *r = tj_gather(arange_f32(12, 2, S34), 0, tj_zeros(s04, 2, TJ_INT64));
    cr_assert_not_null(r);
    cr_expect_eq(tj_tensor_shape(r)[0], 0);
    tj_tensor *s = tj_tensor_scalar_f32(7.5f), *z = tj_tensor_scalar_i64(0);
    tj_tensor *r0 = tj_gather(s, 0, z);
    cr_assert_not_null(r0, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_ndim(r0), 0);
    cr_expect_eq(tj_tensor_item_at(r0, 0), 7.5);
    tj_tensor_release(s);
    tj_tensor_release(z);
}

Test(index, scatter_add_accumulates_in_index_order)
{
    const double w[4] = {1, 2, 3, 4};
    tj_tensor *src = tj_mul(tj_ones(S24, 2, TJ_FLOAT32), tj_tensor_from_data(TJ_FLOAT64, 1, (const int64_t[]){4}, w));
    tj_tensor *r = tj_scatter_add(tj_zeros(S34, 2, TJ_FLOAT32), 0, test_i64(2, S24, I24), tj_to_copy(src, TJ_FLOAT32));
    const double want[12] = {1, 4, 0, 0, 0, 0, 3, 8, 1, 0, 3, 0};
    expect_values(r, want, 12);
}

Test(index, scatter_add_keeps_self_and_handles_broadcast_src)
{
    /* self = arange; src a stride-0 expand of [5]; duplicate indices add up */
    const int64_t s1[1] = {1}, s4[1] = {4}, idx[4] = {1, 1, 0, 1};
    tj_tensor *self = tj_arange(tj_v_int(0), tj_v_int(3), tj_v_int(1), TJ_INT64);
    tj_tensor *src = tj_expand(tj_full(s1, 1, tj_v_int(5), TJ_INT64), s4, 1);
    tj_tensor *r = tj_scatter_add(self, 0, test_i64(1, s4, idx), src);
    const double want[3] = {5, 16, 2};
    expect_values(r, want, 3);
    cr_expect_eq(tj_tensor_item_at(self, 1), 1); /* self is not modified */
}

Test(index, scatter_add_errors)
{
    tj_tensor *self = tj_zeros(S34, 2, TJ_FLOAT32);
    cr_expect_null(tj_scatter_add(self, 0, test_i64(2, S24, I24), tj_ones(S24, 2, TJ_FLOAT64)));
    cr_expect_eq(tj_last_status(), TJ_ERR_DTYPE);
    const int64_t s21[2] = {2, 1};
    cr_expect_null(tj_scatter_add(self, 0, test_i64(2, S24, I24), tj_ones(s21, 2, TJ_FLOAT32)));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    const int64_t bad[8] = {2, 0, 1, 1, 0, 0, 2, 9};
    cr_expect_null(tj_scatter_add(self, 0, test_i64(2, S24, bad), tj_ones(S24, 2, TJ_FLOAT32)));
    cr_expect_eq(tj_last_status(), TJ_ERR_INDEX);
}

Test(index, unfold_is_a_window_view)
{
    const int64_t s7[1] = {7};
    tj_tensor *x = arange_f32(7, 1, s7);
    tj_tensor *u = tj_unfold(x, 0, 3, 2);
    const double want[9] = {0, 1, 2, 2, 3, 4, 4, 5, 6};
    expect_values(u, want, 9);
    cr_expect(tj_tensor_shares_storage(u, x));
    cr_expect_eq(tj_tensor_strides(u)[0], 2);
    cr_expect_eq(tj_tensor_strides(u)[1], 1);
}

Test(index, unfold_of_a_transposed_tensor_and_errors)
{
    /* x.t() is [4, 3] with strides [1, 4]; unfold dim 0, size 2, step 1 */
    tj_tensor *xt = tj_t(arange_f32(12, 2, S34));
    tj_tensor *u = tj_unfold(xt, 0, 2, 1);
    cr_assert_not_null(u);
    cr_expect_eq(tj_tensor_ndim(u), 3);
    cr_expect_eq(tj_tensor_shape(u)[0], 3);
    cr_expect_eq(tj_tensor_shape(u)[2], 2);
    /* u[1, 2, :] = xt[1:3, 2] = x[2, 1:3] = {9, 10} */
    cr_expect_eq(tj_tensor_item_at(u, 1 * 6 + 2 * 2 + 0), 9);
    cr_expect_eq(tj_tensor_item_at(u, 1 * 6 + 2 * 2 + 1), 10);
    cr_expect_null(tj_unfold(xt, 0, 5, 1));
    cr_expect(strstr(tj_last_error(), "maximum size for tensor at dimension 0 is 4 but size is 5"), "%s",
              tj_last_error());
    cr_expect_null(tj_unfold(xt, 0, 2, 0));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    tj_tensor *s = tj_tensor_scalar_f32(3.0f);
    tj_tensor *u0 = tj_unfold(s, 0, 1, 1);
    cr_assert_not_null(u0, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_ndim(u0), 1);
    tj_tensor_release(s);
}
