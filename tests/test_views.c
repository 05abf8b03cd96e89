/* Views and data movement: the geometry (shape, strides, storage offset) of
 * every view operator, storage sharing, the error messages, cat / clone /
 * _to_copy values over any strides and dtypes, and the implicit composites
 * (reshape, flatten, contiguous, stack, split) with what they record.
 *
 * Reference strides were printed by PyTorch 1.13 (/usr/bin/python3), e.g.
 *   x = torch.arange(24.).reshape(2,3,4).permute(1,0,2); x.view(3,2,2,2).stride()
 * and are written next to each case. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

#define I64(...) ((const int64_t[]){__VA_ARGS__})
#define COUNT(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define DCOUNT(...) ((int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)))

/* ---- helpers ---- */

/* A float32 tensor of `shape` holding 0, 1, 2, ... in row-major order. */
static tj_tensor *arange(int ndim, const int64_t *shape)
{
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT32, ndim, shape);
    cr_assert_not_null(t, "%s", tj_last_error());
    float *p = tj_tensor_data(t);
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) p[i] = (float)i;
    return t;
}
#define ARANGE(...) arange(COUNT(__VA_ARGS__), I64(__VA_ARGS__))

static void expect_list(const char *what, const tj_tensor *t, const int64_t *got, int ngot, const int64_t *want, int n)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(ngot, n, "%s: rank %d, expected %d", what, ngot, n);
    for (int i = 0; i < n; i++) cr_expect_eq(got[i], want[i], "%s[%d] = %ld, expected %ld", what, i, (long)got[i], (long)want[i]);
}
#define EXPECT_SHAPE(t, ...) \
    expect_list("shape", (t), tj_tensor_shape(t), tj_tensor_ndim(t), I64(__VA_ARGS__), COUNT(__VA_ARGS__))
#define EXPECT_STRIDES(t, ...) \
    expect_list("strides", (t), tj_tensor_strides(t), tj_tensor_ndim(t), I64(__VA_ARGS__), COUNT(__VA_ARGS__))

/* Values in row-major order of the tensor's shape (any strides). */
static void expect_values(const tj_tensor *t, int n, const double *want)
{
    test_expect_close(t, want, n, 0, 0);
}
#define EXPECT_VALUES(t, ...) expect_values((t), DCOUNT(__VA_ARGS__), (const double[]){__VA_ARGS__})

static void expect_error(tj_tensor *r, tj_status st, const char *const *parts, int n)
{
    cr_expect_null(r);
    cr_expect_eq(tj_last_status(), st, "status %s, expected %s (%s)", tj_status_name(tj_last_status()),
                 tj_status_name(st), tj_last_error());
    for (int i = 0; i < n; i++)
        cr_expect(strstr(tj_last_error(), parts[i]) != NULL, "'%s' not in '%s'", parts[i], tj_last_error());
}
#define EXPECT_ERROR(r, st, ...) \
    expect_error((r), (st), (const char *const[]){__VA_ARGS__}, (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *)))

static float *fdata(tj_tensor *t) { return tj_tensor_data(t); }

/* Every test runs in one scope: results need no release by hand. */
TestSuite(view, .init = test_scope_open, .fini = test_scope_close);
TestSuite(copy, .init = test_scope_open, .fini = test_scope_close);
TestSuite(cat, .init = test_scope_open, .fini = test_scope_close);
TestSuite(composite, .init = test_scope_open, .fini = test_scope_close);

/* ================================ view ================================ */

Test(view, shares_storage_and_writes_through_to_the_base)
{
    tj_tensor *x = ARANGE(2, 3);
    tj_tensor *v = tj_view(x, I64(3, 2), 2);
    EXPECT_SHAPE(v, 3, 2);
    EXPECT_STRIDES(v, 2, 1);
    cr_expect(tj_tensor_shares_storage(x, v));
    fdata(v)[3] = 100.0f; /* v[1, 1] is x[1, 0] */
    EXPECT_VALUES(x, 0, 1, 2, 100, 4, 5);
}

Test(view, infers_one_minus_one)
{
    tj_tensor *v = tj_view(ARANGE(2, 3, 4), I64(-1, 4), 2);
    EXPECT_SHAPE(v, 6, 4);
    EXPECT_STRIDES(v, 4, 1);
}

Test(view, to_and_from_0dim)
{
    tj_tensor *x = ARANGE(1);
    tj_tensor *s = tj_view(x, NULL, 0);
    cr_assert_not_null(s, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_ndim(s), 0);
    EXPECT_VALUES(s, 0);
    tj_tensor *back = tj_view(s, I64(1, 1, 1), 3);
    EXPECT_SHAPE(back, 1, 1, 1);
    EXPECT_STRIDES(back, 1, 1, 1);
}

Test(view, keeps_the_storage_offset)
{
    tj_tensor *row = tj_select(ARANGE(3, 4), 0, 2);
    tj_tensor *v = tj_view(row, I64(2, 2), 2);
    cr_expect_eq(tj_tensor_storage_offset(v), 8);
    EXPECT_VALUES(v, 8, 9, 10, 11);
}

/* PyTorch: x = arange(24.).reshape(2,3,4).permute(1,0,2)  # [3,2,4] strides (4,12,1)
 *          x.view(3,2,2,2).stride() == (4,12,2,1); x.view(3,8) fails */
Test(view, splits_dims_of_a_permuted_tensor)
{
    tj_tensor *p = tj_permute(ARANGE(2, 3, 4), I64(1, 0, 2), 3);
    EXPECT_STRIDES(p, 4, 12, 1);
    tj_tensor *v = tj_view(p, I64(3, 2, 2, 2), 4);
    EXPECT_STRIDES(v, 4, 12, 2, 1);
    EXPECT_VALUES(tj_select(tj_select(v, 0, 1), 0, 1), 16, 17, 18, 19);
    EXPECT_ERROR(tj_view(p, I64(3, 8), 2), TJ_ERR_SHAPE, "aten::view", "[3, 8]", "Use .reshape(...) instead");
}

/* PyTorch: y = arange(24.).reshape(4,6)[:, ::2]  # [4,3] strides (6,2)
 *   y.view(2,2,3) -> (12,6,2); y.view(4,3,1) -> (6,2,2); y.view(4,1,3) -> (6,6,2);
 *   y.view(12) -> (2,) (evenly spaced after all)
 * z = arange(24.).reshape(4,6)[:, :3]  # strides (6,1): z.view(2,2,3) -> (12,6,1);
 *   z.view(12) fails */
Test(view, follows_compute_stride_on_a_strided_tensor)
{
    tj_tensor *y = tj_slice(ARANGE(4, 6), 1, false, 0, false, 0, 2);
    EXPECT_STRIDES(y, 6, 2);
    EXPECT_STRIDES(tj_view(y, I64(2, 2, 3), 3), 12, 6, 2);
    EXPECT_STRIDES(tj_view(y, I64(4, 3, 1), 3), 6, 2, 2);
    EXPECT_STRIDES(tj_view(y, I64(4, 1, 3), 3), 6, 6, 2);
    EXPECT_STRIDES(tj_view(y, I64(12), 1), 2);
    tj_tensor *z = tj_slice(ARANGE(4, 6), 1, false, 0, true, 3, 1);
    EXPECT_STRIDES(tj_view(z, I64(2, 2, 3), 3), 12, 6, 1);
    EXPECT_ERROR(tj_view(z, I64(12), 1), TJ_ERR_SHAPE, "aten::view", "size [4, 3] and stride [6, 1]");
}

/* PyTorch: empty(0,3).t().view(3,0).stride() == (1,3) (same shape keeps the
 * strides); .view(0,3) -> (3,1); empty(2,0,3).view(3,0,2) -> (2,2,1) */
Test(view, of_an_empty_tensor_keeps_or_recomputes_strides)
{
    tj_tensor *e = tj_t(tj_tensor_empty(TJ_FLOAT32, 2, I64(0, 3)));
    EXPECT_STRIDES(tj_view(e, I64(3, 0), 2), 1, 3);
    EXPECT_STRIDES(tj_view(e, I64(0, 3), 2), 3, 1);
    EXPECT_STRIDES(tj_view(tj_tensor_empty(TJ_FLOAT32, 3, I64(2, 0, 3)), I64(3, 0, 2), 3), 2, 2, 1);
}

Test(view, rejects_bad_sizes_with_pytorch_messages)
{
    tj_tensor *x = ARANGE(3, 2);
    EXPECT_ERROR(tj_view(x, I64(4, 2), 2), TJ_ERR_SHAPE, "aten::view", "shape '[4, 2]' is invalid for input of size 6");
    EXPECT_ERROR(tj_view(x, I64(-1, -1), 2), TJ_ERR_SHAPE, "only one dimension can be inferred");
    EXPECT_ERROR(tj_view(x, I64(-1, 4), 2), TJ_ERR_SHAPE, "'[-1, 4]' is invalid for input of size 6");
    EXPECT_ERROR(tj_view(x, I64(-2, 3), 2), TJ_ERR_SHAPE, "invalid shape dimension -2");
    EXPECT_ERROR(tj_view(x, I64(1LL << 62, 1LL << 62), 2), TJ_ERR_SHAPE, "is invalid for input of size 6");
    EXPECT_ERROR(tj_view(x, I64(1, 1, 1, 1, 1, 1, 1, 2, 3), 9), TJ_ERR_INVALID_ARGUMENT, "more than 8");
    EXPECT_ERROR(tj_view(tj_tensor_empty(TJ_FLOAT32, 2, I64(0, 2)), I64(-1, 0), 2), TJ_ERR_SHAPE,
                 "cannot reshape tensor of 0 elements into shape [-1, 0]", "ambiguous");
}

/* PyTorch: torch.empty(0).view(2**62, 8, 0) raises "numel: integer
 * multiplication overflow" (so does reshape). Every tjit tensor keeps the
 * product of its nonzero sizes within int64: the view used to pass and the
 * first copy of it failed elsewhere (a plan's compile, naming tj_tensor_empty). */
Test(view, of_an_empty_tensor_refuses_sizes_whose_product_overflows)
{
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 1, I64(0));
    EXPECT_ERROR(tj_view(e, I64(1LL << 62, 8, 0), 3), TJ_ERR_OVERFLOW, "aten::view",
                 "element count of shape [4611686018427387904, 8, 0] overflows");
    EXPECT_ERROR(tj_reshape(e, I64(0, 1LL << 62, 8), 3), TJ_ERR_OVERFLOW, "aten::reshape",
                 "element count of shape [0, 4611686018427387904, 8] overflows");
    EXPECT_ERROR(tj_unsafe_view(e, I64(1LL << 32, 0, 1LL << 32), 3), TJ_ERR_OVERFLOW, "aten::_unsafe_view", "overflows");
    EXPECT_SHAPE(tj_view(e, I64(1LL << 62, 0), 2), 1LL << 62, 0);
    EXPECT_SHAPE(tj_view(e, I64(1LL << 31, 0, 1LL << 31), 3), 1LL << 31, 0, 1LL << 31);
}

Test(view, unsafe_view_aliases_when_it_can_and_copies_otherwise)
{
    tj_tensor *x = ARANGE(3, 4);
    tj_tensor *a = tj_unsafe_view(x, I64(2, -1), 2);
    EXPECT_SHAPE(a, 2, 6);
    cr_expect(tj_tensor_shares_storage(x, a));
    tj_tensor *c = tj_unsafe_view(tj_t(x), I64(12), 1);
    EXPECT_SHAPE(c, 12);
    cr_expect(!tj_tensor_shares_storage(x, c));
    EXPECT_VALUES(c, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11);
    EXPECT_ERROR(tj_unsafe_view(x, I64(5), 1), TJ_ERR_SHAPE, "aten::_unsafe_view", "'[5]' is invalid for input of size 12");
}

/* ============================ permute / t ============================ */

Test(view, permute_reorders_shape_and_strides)
{
    tj_tensor *x = ARANGE(2, 3, 4);
    tj_tensor *p = tj_permute(x, I64(2, 0, -2), 3);
    EXPECT_SHAPE(p, 4, 2, 3);
    EXPECT_STRIDES(p, 1, 12, 4);
    cr_expect(tj_tensor_shares_storage(x, p));
    EXPECT_VALUES(tj_select(p, 0, 1), 1, 5, 9, 13, 17, 21);
}

Test(view, permute_rejects_repeated_and_missing_dims)
{
    tj_tensor *x = ARANGE(3, 2);
    EXPECT_ERROR(tj_permute(x, I64(0, -2), 2), TJ_ERR_SHAPE, "aten::permute", "repeated dim -2", "[0, -2]");
    EXPECT_ERROR(tj_permute(x, I64(0), 1), TJ_ERR_SHAPE, "aten::permute", "[0]", "[3, 2]");
    EXPECT_ERROR(tj_permute(x, I64(0, 2), 2), TJ_ERR_INDEX, "aten::permute", "dim 2 is out of range");
}

Test(view, transpose_swaps_two_dims)
{
    tj_tensor *x = ARANGE(2, 3, 4);
    tj_tensor *tr = tj_transpose(x, 0, -1);
    EXPECT_SHAPE(tr, 4, 3, 2);
    EXPECT_STRIDES(tr, 1, 4, 12);
    EXPECT_STRIDES(tj_transpose(x, 1, 1), 12, 4, 1);
    tj_tensor *s = tj_transpose(tj_tensor_scalar_f32(3), 0, -1);
    cr_assert_not_null(s, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_ndim(s), 0);
    EXPECT_ERROR(tj_transpose(x, 0, 3), TJ_ERR_INDEX, "aten::transpose.int", "dim 3");
}

Test(view, t_transposes_up_to_two_dims)
{
    tj_tensor *m = tj_t(ARANGE(2, 3));
    EXPECT_SHAPE(m, 3, 2);
    EXPECT_STRIDES(m, 1, 3);
    EXPECT_VALUES(m, 0, 3, 1, 4, 2, 5);
    EXPECT_STRIDES(tj_t(ARANGE(4)), 1);
    EXPECT_ERROR(tj_t(ARANGE(3, 2, 1)), TJ_ERR_SHAPE, "aten::t", "<= 2 dimensions", "3D");
}

/* ============================== expand ============================== */

/* PyTorch: arange(3.).reshape(3,1).expand(2,3,5).stride() == (0,1,0);
 *          arange(4.).expand(2,3,4).stride() == (0,0,1);
 *          tensor(1.).expand(2,1).stride() == (0,0) */
Test(view, expand_gives_zero_strides)
{
    tj_tensor *e = tj_expand(ARANGE(3, 1), I64(2, -1, 5), 3);
    EXPECT_SHAPE(e, 2, 3, 5);
    EXPECT_STRIDES(e, 0, 1, 0);
    EXPECT_VALUES(tj_select(tj_select(e, 0, 1), 0, 2), 2, 2, 2, 2, 2);
    EXPECT_STRIDES(tj_expand(ARANGE(4), I64(2, 3, 4), 3), 0, 0, 1);
    EXPECT_STRIDES(tj_expand(tj_tensor_scalar_f32(1), I64(2, 1), 2), 0, 0);
    EXPECT_SHAPE(tj_expand(ARANGE(1), I64(0), 1), 0);
}

Test(view, expand_writes_through_to_the_single_element)
{
    tj_tensor *x = ARANGE(1);
    tj_tensor *e = tj_expand(x, I64(4), 1);
    cr_expect(tj_tensor_shares_storage(x, e));
    fdata(x)[0] = 7;
    EXPECT_VALUES(e, 7, 7, 7, 7);
}

Test(view, expand_rejects_non_singleton_and_bad_sizes)
{
    tj_tensor *x = ARANGE(3, 2);
    EXPECT_ERROR(tj_expand(x, I64(3, 4), 2), TJ_ERR_SHAPE, "aten::expand",
                 "expanded size of the tensor (4) must match the existing size (2) at non-singleton dimension 1",
                 "[3, 4]", "[3, 2]");
    EXPECT_ERROR(tj_expand(x, I64(6), 1), TJ_ERR_SHAPE, "number of sizes provided (1)", "(2, shape [3, 2])");
    EXPECT_ERROR(tj_expand(x, I64(-1, 3, 2), 3), TJ_ERR_SHAPE, "leading, non-existing dimension 0");
    EXPECT_ERROR(tj_expand(ARANGE(3, 1), I64(3, -2), 2), TJ_ERR_SHAPE, "negative size -2");
    EXPECT_ERROR(tj_expand(ARANGE(1, 1), I64(1LL << 40, 1LL << 40), 2), TJ_ERR_OVERFLOW, "aten::expand", "overflows");
}

/* PyTorch: torch.ones(1).expand(2**62) is a view, as is expand(2**63 - 1);
 * only a count past INT64_MAX overflows. A copy would need the bytes. */
Test(view, expand_to_a_count_that_fits_int64_is_a_view)
{
    tj_tensor *x = ARANGE(1);
    fdata(x)[0] = 5;
    tj_tensor *e = tj_expand(x, I64(1LL << 62), 1);
    EXPECT_SHAPE(e, 1LL << 62);
    EXPECT_STRIDES(e, 0);
    cr_expect_eq(tj_tensor_numel(e), 1LL << 62);
    cr_expect_eq(tj_tensor_item_at(e, (1LL << 62) - 1), 5);
    EXPECT_SHAPE(tj_expand(x, I64(2, INT64_MAX / 2), 2), 2, INT64_MAX / 2);
    EXPECT_ERROR(tj_expand(x, I64(1LL << 32, 1LL << 31), 2), TJ_ERR_OVERFLOW, "aten::expand",
                 "element count of shape [4294967296, 2147483648] overflows");
    EXPECT_ERROR(tj_clone(e), TJ_ERR_OVERFLOW, "aten::clone", "overflows");
}

/* ========================= unsqueeze / squeeze ========================= */

/* PyTorch: arange(6.).reshape(2,3).unsqueeze(1).stride() == (3,3,1);
 *          .unsqueeze(2) -> (3,1,1); .unsqueeze(0) -> (6,3,1) */
Test(view, unsqueeze_inserts_a_size_one_dim)
{
    tj_tensor *x = ARANGE(2, 3);
    EXPECT_STRIDES(tj_unsqueeze(x, 1), 3, 3, 1);
    EXPECT_STRIDES(tj_unsqueeze(x, -1), 3, 1, 1);
    EXPECT_STRIDES(tj_unsqueeze(x, -3), 6, 3, 1);
    EXPECT_SHAPE(tj_unsqueeze(tj_tensor_scalar_f32(1), -1), 1);
    EXPECT_ERROR(tj_unsqueeze(x, 3), TJ_ERR_INDEX, "aten::unsqueeze", "dim 3");
    tj_tensor *r8 = tj_tensor_empty(TJ_FLOAT32, 8, I64(1, 1, 1, 1, 1, 1, 1, 1));
    EXPECT_ERROR(tj_unsqueeze(r8, 0), TJ_ERR_INVALID_ARGUMENT, "aten::unsqueeze", "rank 8");
}

Test(view, squeeze_dim_drops_only_a_size_one_dim)
{
    tj_tensor *x = ARANGE(2, 1, 3);
    tj_tensor *s = tj_squeeze_dim(x, 1);
    EXPECT_SHAPE(s, 2, 3);
    EXPECT_STRIDES(s, 3, 1);
    EXPECT_SHAPE(tj_squeeze_dim(x, 0), 2, 1, 3);
    EXPECT_SHAPE(tj_squeeze_dim(tj_tensor_empty(TJ_FLOAT32, 2, I64(0, 1)), -1), 0);
    cr_expect_eq(tj_tensor_ndim(tj_squeeze_dim(tj_tensor_scalar_f32(5), -1)), 0);
    EXPECT_ERROR(tj_squeeze_dim(x, -4), TJ_ERR_INDEX, "aten::squeeze.dim", "dim -4");
}

/* PyTorch: arange(6.).reshape(2,1,3,1).squeeze() -> size (2, 3), strides
 * (3, 1); ones(1,1).squeeze() is 0-dim; zeros(0,1).squeeze() -> (0,) */
Test(view, squeeze_drops_every_size_one_dim)
{
    tj_tensor *x = ARANGE(2, 1, 3, 1), *s = tj_squeeze(x);
    EXPECT_SHAPE(s, 2, 3);
    EXPECT_STRIDES(s, 3, 1);
    EXPECT_VALUES(s, 0, 1, 2, 3, 4, 5);
    cr_expect(tj_tensor_shares_storage(s, x));
    cr_expect_eq(tj_tensor_ndim(tj_squeeze(ARANGE(1, 1))), 0);
    EXPECT_SHAPE(tj_squeeze(tj_tensor_empty(TJ_FLOAT32, 2, I64(0, 1))), 0);
    EXPECT_STRIDES(tj_squeeze(tj_transpose(ARANGE(3, 1, 2), 0, 2)), 1, 2);
}

/* ============================ select / slice ============================ */

/* PyTorch: arange(24.).reshape(2,3,4)[:,1] -> strides (12,1), offset 4 */
Test(view, select_moves_the_storage_offset)
{
    tj_tensor *s = tj_select(ARANGE(2, 3, 4), 1, -2);
    EXPECT_SHAPE(s, 2, 4);
    EXPECT_STRIDES(s, 12, 1);
    cr_expect_eq(tj_tensor_storage_offset(s), 4);
    EXPECT_VALUES(s, 4, 5, 6, 7, 16, 17, 18, 19);
}

Test(view, select_rejects_out_of_range_indices)
{
    tj_tensor *x = ARANGE(3, 2);
    EXPECT_ERROR(tj_select(x, 0, 3), TJ_ERR_INDEX, "aten::select.int", "index 3 out of range for tensor of size [3, 2] at dimension 0");
    EXPECT_ERROR(tj_select(x, 0, -4), TJ_ERR_INDEX, "index -4 out of range");
    EXPECT_ERROR(tj_select(tj_tensor_scalar_f32(1), 0, 0), TJ_ERR_INDEX, "cannot be applied to a 0-dim tensor");
}

/* PyTorch: arange(10.)[2:9:3] -> shape [3], stride 3, offset 2, [2, 5, 8] */
Test(view, slice_with_step_sets_stride_and_offset)
{
    tj_tensor *s = tj_slice(ARANGE(10), 0, true, 2, true, 9, 3);
    EXPECT_SHAPE(s, 3);
    EXPECT_STRIDES(s, 3);
    cr_expect_eq(tj_tensor_storage_offset(s), 2);
    EXPECT_VALUES(s, 2, 5, 8);
}

Test(view, slice_clamps_and_wraps_bounds)
{
    tj_tensor *x = ARANGE(6);
    EXPECT_VALUES(tj_slice(x, 0, true, -100, true, -2, 1), 0, 1, 2, 3);
    EXPECT_VALUES(tj_slice(x, 0, true, 4, true, INT64_MAX, 1), 4, 5);
    EXPECT_VALUES(tj_slice(x, -1, true, INT64_MAX, false, 0, 1), 0, 1, 2, 3, 4, 5); /* INT64_MAX start = default */
    EXPECT_SHAPE(tj_slice(x, 0, true, 5, true, 2, 1), 0);
    EXPECT_SHAPE(tj_slice(x, 0, true, 12, false, 0, 1), 0);
    cr_expect_eq(tj_tensor_storage_offset(tj_slice(x, 0, true, 12, false, 0, 1)), 6);
    EXPECT_VALUES(tj_slice(x, 0, true, 1, true, 6, INT64_MAX), 1);
}

Test(view, slice_rejects_bad_step_and_0dim)
{
    EXPECT_ERROR(tj_slice(ARANGE(3), 0, false, 0, false, 0, 0), TJ_ERR_INVALID_ARGUMENT, "aten::slice.Tensor",
                 "step must be positive");
    EXPECT_ERROR(tj_slice(tj_tensor_scalar_f32(1), 0, false, 0, false, 0, 1), TJ_ERR_INDEX, "0-dim");
    EXPECT_ERROR(tj_slice(ARANGE(3), 1, false, 0, false, 0, 1), TJ_ERR_INDEX, "aten::slice.Tensor", "dim 1");
}

/* PyTorch: arange(12.).reshape(3,4).t()[1:3] -> shape [2,3], strides (1,4),
 * offset 1, [[1,5,9],[2,6,10]] */
Test(view, chained_views_compose_offsets_and_strides)
{
    tj_tensor *x = ARANGE(3, 4);
    tj_tensor *m = tj_slice(tj_t(x), 0, true, 1, true, 3, 1);
    EXPECT_SHAPE(m, 2, 3);
    EXPECT_STRIDES(m, 1, 4);
    cr_expect_eq(tj_tensor_storage_offset(m), 1);
    EXPECT_VALUES(m, 1, 5, 9, 2, 6, 10);
    fdata(m)[1 * 1 + 1 * 4] = -1; /* m[1, 1] is x[1, 2] */
    EXPECT_VALUES(tj_select(x, 0, 1), 4, 5, -1, 7);
    EXPECT_VALUES(tj_select(m, 0, 1), 2, -1, 10);
}

Test(view, fake_tensors_propagate_through_every_view)
{
    tj_tensor *f = tj_tensor_fake(TJ_FLOAT32, 3, I64(2, 3, 4));
    tj_tensor *v = tj_slice(tj_transpose(tj_view(f, I64(6, 4), 2), 0, 1), 1, true, 1, false, 0, 2);
    EXPECT_SHAPE(v, 4, 3);
    EXPECT_STRIDES(v, 1, 8);
    cr_expect_eq(tj_tensor_storage_offset(v), 4);
    cr_expect(tj_tensor_is_fake(v));
    cr_expect_null(tj_tensor_data(v));
    tj_tensor *e = tj_expand(tj_unsqueeze(tj_select(v, 0, 2), 0), I64(5, 3), 2);
    EXPECT_STRIDES(e, 0, 8);
    cr_expect(tj_tensor_is_fake(e));
    tj_tensor *c = tj_cat((tj_tensor *[]){e, tj_clone(e)}, 2, 0);
    EXPECT_SHAPE(c, 10, 3);
    cr_expect(tj_tensor_is_fake(c));
    tj_tensor *r = tj_reshape(v, I64(12), 1); /* needs a copy: still fake */
    EXPECT_SHAPE(r, 12);
    cr_expect(tj_tensor_is_fake(r));
    cr_expect(tj_tensor_is_fake(tj_to_copy(f, TJ_INT64)));
}

/* ================================ copy ================================ */

Test(copy, clone_of_a_transposed_view_is_contiguous_and_independent)
{
    tj_tensor *x = ARANGE(2, 3);
    tj_tensor *c = tj_clone(tj_t(x));
    EXPECT_SHAPE(c, 3, 2);
    EXPECT_STRIDES(c, 2, 1);
    cr_expect(!tj_tensor_shares_storage(x, c));
    EXPECT_VALUES(c, 0, 3, 1, 4, 2, 5);
    fdata(x)[0] = 9;
    EXPECT_VALUES(c, 0, 3, 1, 4, 2, 5);
}

Test(copy, clone_keeps_nonfinite_values_and_negative_zero_bits)
{
    float in[4] = {NAN, INFINITY, -INFINITY, -0.0f};
    tj_tensor *c = tj_clone(tj_tensor_from_data(TJ_FLOAT32, 1, I64(4), in));
    cr_assert_not_null(c, "%s", tj_last_error());
    cr_expect_eq(memcmp(tj_tensor_data(c), in, sizeof in), 0);
}

Test(copy, clone_handles_0dim_empty_and_broadcast_inputs)
{
    EXPECT_VALUES(tj_clone(tj_tensor_scalar_i64(-5)), -5);
    EXPECT_SHAPE(tj_clone(tj_tensor_empty(TJ_FLOAT32, 2, I64(0, 2))), 0, 2);
    tj_tensor *c = tj_clone(tj_expand(ARANGE(2, 1), I64(2, 3), 2));
    EXPECT_STRIDES(c, 3, 1);
    EXPECT_VALUES(c, 0, 0, 0, 1, 1, 1);
}

Test(copy, clone_of_large_transposed_and_sliced_tensors_is_exact)
{
    int threads = tj_get_num_threads();
    tj_set_num_threads(4);
    int64_t r = 300, k = 700;
    tj_tensor *x = ARANGE(3, 300, 700);
    tj_tensor *c = tj_clone(tj_transpose(x, 1, 2)); /* tiled transpose path */
    EXPECT_SHAPE(c, 3, 700, 300);
    const float *p = tj_tensor_data(c);
    int64_t bad = 0;
    for (int64_t b = 0; b < 3; b++)
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j < r; j++) bad += p[(b * k + i) * r + j] != (float)(b * r * k + j * k + i);
    cr_expect_eq(bad, 0, "%ld wrong elements", (long)bad);
    tj_tensor *s = tj_clone(tj_slice(x, 2, true, 1, false, 0, 3)); /* strided rows */
    EXPECT_SHAPE(s, 3, 300, 233);
    p = tj_tensor_data(s);
    bad = 0;
    for (int64_t i = 0; i < 3 * 300; i++)
        for (int64_t j = 0; j < 233; j++) bad += p[i * 233 + j] != (float)(i * 700 + 1 + 3 * j);
    cr_expect_eq(bad, 0, "%ld wrong elements", (long)bad);
    tj_set_num_threads(threads);
}

/* PyTorch on x86: tensor([nan, inf, -inf, 1e20, -1e20, 3e9]).to(int64)
 *   == [INT64_MIN] * 5 + [3000000000]; .to(bool) is all true */
Test(copy, to_copy_float_to_int64_follows_x86_pytorch)
{
    float in[7] = {NAN, INFINITY, -INFINITY, 1e20f, -1e20f, 3e9f, -2.7f};
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 1, I64(7), in);
    tj_tensor *i = tj_to_copy(x, TJ_INT64);
    cr_assert_not_null(i, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_dtype(i), TJ_INT64);
    const int64_t *p = tj_tensor_data(i);
    int64_t want[7] = {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, 3000000000LL, -2};
    for (int k = 0; k < 7; k++) cr_expect_eq(p[k], want[k], "[%d] = %ld", k, (long)p[k]);
    tj_tensor *d = tj_to_copy(tj_to_copy(x, TJ_FLOAT64), TJ_INT64);
    cr_expect_eq(memcmp(tj_tensor_data(d), want, sizeof want), 0);
}

Test(copy, to_copy_to_bool_is_nonzero)
{
    float in[5] = {NAN, 0.0f, -0.0f, 0.1f, -INFINITY};
    tj_tensor *b = tj_to_copy(tj_tensor_from_data(TJ_FLOAT32, 1, I64(5), in), TJ_BOOL);
    cr_expect_eq(tj_tensor_dtype(b), TJ_BOOL);
    EXPECT_VALUES(b, 1, 0, 0, 1, 1);
    int64_t ints[3] = {0, -2, 3};
    EXPECT_VALUES(tj_to_copy(tj_tensor_from_data(TJ_INT64, 1, I64(3), ints), TJ_BOOL), 0, 1, 1);
    tj_tensor *f = tj_to_copy(b, TJ_FLOAT64);
    cr_expect_eq(tj_tensor_dtype(f), TJ_FLOAT64);
    EXPECT_VALUES(f, 1, 0, 0, 1, 1);
}

/* int64 16777217 -> float32 16777216 (round to nearest even); float64 3.5e38
 * -> float32 inf */
Test(copy, to_copy_rounds_to_nearest)
{
    int64_t ints[2] = {16777217, -16777219};
    EXPECT_VALUES(tj_to_copy(tj_tensor_from_data(TJ_INT64, 1, I64(2), ints), TJ_FLOAT32), 16777216, -16777220);
    double ds[2] = {3.5e38, 0.1};
    tj_tensor *f = tj_to_copy(tj_tensor_from_data(TJ_FLOAT64, 1, I64(2), ds), TJ_FLOAT32);
    EXPECT_VALUES(f, INFINITY, (double)0.1f);
    EXPECT_VALUES(tj_to_copy(tj_tensor_scalar_f32(2.5f), -1), 2.5);
}

Test(copy, to_copy_converts_strided_and_broadcast_inputs)
{
    tj_tensor *x = ARANGE(40, 30);
    tj_tensor *d = tj_to_copy(tj_t(x), TJ_FLOAT64); /* strided gather + conversion */
    EXPECT_SHAPE(d, 30, 40);
    const double *p = tj_tensor_data(d);
    int64_t bad = 0;
    for (int64_t i = 0; i < 30; i++)
        for (int64_t j = 0; j < 40; j++) bad += p[i * 40 + j] != (double)(j * 30 + i);
    cr_expect_eq(bad, 0);
    tj_tensor *s = tj_to_copy(tj_slice(x, 1, false, 0, false, 0, 3), TJ_INT64); /* strided rows */
    EXPECT_SHAPE(s, 40, 10);
    const int64_t *si = tj_tensor_data(s);
    bad = 0;
    for (int64_t i = 0; i < 40; i++)
        for (int64_t j = 0; j < 10; j++) bad += si[i * 10 + j] != i * 30 + 3 * j;
    cr_expect_eq(bad, 0);
    tj_tensor *b = tj_to_copy(tj_expand(tj_tensor_scalar_f32(3), I64(600), 1), TJ_INT64);
    const int64_t *q = tj_tensor_data(b);
    bad = 0;
    for (int i = 0; i < 600; i++) bad += q[i] != 3;
    cr_expect_eq(bad, 0);
}

/* ================================ cat ================================ */

Test(cat, joins_along_a_middle_dim)
{
    tj_tensor *a = ARANGE(2, 1, 2), *b = ARANGE(2, 2, 2);
    tj_tensor *c = tj_cat((tj_tensor *[]){a, b}, 2, 1);
    EXPECT_SHAPE(c, 2, 3, 2);
    EXPECT_VALUES(c, 0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 6, 7);
}

Test(cat, accepts_negative_dim_and_non_contiguous_inputs)
{
    tj_tensor *a = tj_t(ARANGE(3, 2));            /* [2,3] strides (1,2) */
    tj_tensor *b = tj_expand(ARANGE(2, 1), I64(2, 2), 2); /* stride 0 */
    tj_tensor *c = tj_cat((tj_tensor *[]){a, b, a}, 3, -1);
    EXPECT_SHAPE(c, 2, 8);
    EXPECT_VALUES(c, 0, 2, 4, 0, 0, 0, 2, 4, 1, 3, 5, 1, 1, 1, 3, 5);
}

Test(cat, skips_1d_empty_inputs_whatever_the_rank)
{
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 1, I64(0));
    tj_tensor *c = tj_cat((tj_tensor *[]){e, ARANGE(2, 3), e}, 3, 1);
    EXPECT_SHAPE(c, 2, 3);
    EXPECT_VALUES(c, 0, 1, 2, 3, 4, 5);
    EXPECT_SHAPE(tj_cat((tj_tensor *[]){e, e}, 2, 5), 0); /* all skipped: dim is not even checked */
    tj_tensor *e2 = tj_tensor_empty(TJ_FLOAT32, 2, I64(0, 3)); /* [0,3] is not skipped */
    EXPECT_SHAPE(tj_cat((tj_tensor *[]){e2, ARANGE(2, 3)}, 2, 0), 2, 3);
    EXPECT_ERROR(tj_cat((tj_tensor *[]){ARANGE(2, 3), e2}, 2, 1), TJ_ERR_SHAPE,
                 "Expected size 2 but got size 0 for tensor number 1");
}

/* PyTorch: cat([zeros(0, dtype=float64), zeros(2,3, dtype=int64)]).dtype is
 * float64: the skipped tensor still takes part in type promotion */
Test(cat, promotes_dtypes_across_all_inputs)
{
    int64_t ints[2] = {3, 4};
    float fl[2] = {1.5f, 2.5f};
    tj_tensor *c = tj_cat((tj_tensor *[]){tj_tensor_from_data(TJ_FLOAT32, 1, I64(2), fl),
                                          tj_tensor_from_data(TJ_INT64, 1, I64(2), ints)}, 2, 0);
    cr_expect_eq(tj_tensor_dtype(c), TJ_FLOAT32);
    EXPECT_VALUES(c, 1.5, 2.5, 3, 4);
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT64, 1, I64(0));
    tj_tensor *d = tj_cat((tj_tensor *[]){e, tj_tensor_from_data(TJ_INT64, 2, I64(1, 2), ints)}, 2, 0);
    cr_expect_eq(tj_tensor_dtype(d), TJ_FLOAT64);
    EXPECT_VALUES(d, 3, 4);
    bool bs[2] = {true, false};
    tj_tensor *b = tj_tensor_from_data(TJ_BOOL, 1, I64(2), bs);
    tj_tensor *bi = tj_cat((tj_tensor *[]){b, tj_tensor_from_data(TJ_INT64, 1, I64(2), ints)}, 2, 0);
    cr_expect_eq(tj_tensor_dtype(bi), TJ_INT64);
    EXPECT_VALUES(bi, 1, 0, 3, 4);
}

Test(cat, errors_name_the_shapes)
{
    tj_tensor *a = ARANGE(2, 3);
    EXPECT_ERROR(tj_cat((tj_tensor *[]){a, ARANGE(2, 4)}, 2, 0), TJ_ERR_SHAPE, "aten::cat",
                 "must match except in dimension 0. Expected size 3 but got size 4 for tensor number 1", "[2, 4]");
    EXPECT_ERROR(tj_cat((tj_tensor *[]){a, ARANGE(2)}, 2, 0), TJ_ERR_SHAPE, "same number of dimensions: got 2 and 1");
    EXPECT_ERROR(tj_cat((tj_tensor *[]){a, tj_tensor_scalar_f32(1)}, 2, 0), TJ_ERR_SHAPE,
                 "zero-dimensional tensor (at position 1) cannot be concatenated");
    EXPECT_ERROR(tj_cat((tj_tensor *[]){a}, 0, 0), TJ_ERR_INVALID_ARGUMENT, "aten::cat", "non-empty list");
    EXPECT_ERROR(tj_cat((tj_tensor *[]){a, a}, 2, 2), TJ_ERR_INDEX, "aten::cat", "dim 2 is out of range");
    EXPECT_ERROR(tj_cat((tj_tensor *[]){a, NULL}, 2, 0), TJ_ERR_INVALID_ARGUMENT, "aten::cat");
}

Test(cat, large_inputs_are_copied_exactly_by_several_threads)
{
    int threads = tj_get_num_threads();
    tj_set_num_threads(4);
    tj_tensor *a = ARANGE(500, 300), *b = ARANGE(500, 200);
    tj_tensor *c = tj_cat((tj_tensor *[]){a, b}, 2, 1);
    EXPECT_SHAPE(c, 500, 500);
    const float *p = tj_tensor_data(c);
    int64_t bad = 0;
    for (int64_t i = 0; i < 500; i++)
        for (int64_t j = 0; j < 500; j++) bad += p[i * 500 + j] != (float)(j < 300 ? i * 300 + j : i * 200 + j - 300);
    cr_expect_eq(bad, 0);
    tj_tensor *d = tj_cat((tj_tensor *[]){a, a}, 2, 0);
    p = tj_tensor_data(d);
    bad = 0;
    for (int64_t i = 0; i < 300000; i++) bad += p[i] != (float)(i % 150000);
    cr_expect_eq(bad, 0);
    tj_set_num_threads(threads);
}

/* ============================ composites ============================ */

Test(composite, reshape_is_a_view_when_strides_allow)
{
    tj_tensor *x = ARANGE(2, 3, 4);
    tj_tensor *r = tj_reshape(x, I64(4, -1), 2);
    EXPECT_SHAPE(r, 4, 6);
    cr_expect(tj_tensor_shares_storage(x, r));
    tj_tensor *p = tj_permute(x, I64(1, 0, 2), 3);
    tj_tensor *q = tj_reshape(p, I64(3, 2, 2, 2), 4);
    cr_expect(tj_tensor_shares_storage(x, q));
    EXPECT_STRIDES(q, 4, 12, 2, 1);
}

Test(composite, reshape_copies_when_no_view_exists)
{
    tj_tensor *x = ARANGE(2, 3);
    tj_counter_mode *cm = tj_counter_mode_new();
    tj_mode_push(tj_counter_mode_base(cm));
    tj_tensor *r = tj_reshape(tj_t(x), I64(-1), 1);
    tj_tensor *v = tj_reshape(x, I64(3, 2), 2);
    tj_mode_pop(tj_counter_mode_base(cm));
    EXPECT_VALUES(r, 0, 3, 1, 4, 2, 5);
    cr_expect(!tj_tensor_shares_storage(x, r));
    cr_expect(tj_tensor_shares_storage(x, v));
    /* recorded as PyTorch does: t, clone, _unsafe_view; then a plain view */
    cr_expect_eq(tj_counter_mode_count(cm, TJ_OPS(clone)), 1);
    cr_expect_eq(tj_counter_mode_count(cm, TJ_OPS(_unsafe_view)), 1);
    cr_expect_eq(tj_counter_mode_count(cm, TJ_OPS(view)), 1);
    cr_expect_eq(tj_counter_mode_count(cm, TJ_OPS(reshape)), 0);
    tj_counter_mode_free(cm);
    EXPECT_ERROR(tj_reshape(x, I64(4), 1), TJ_ERR_SHAPE, "aten::reshape", "shape '[4]' is invalid for input of size 6");
}

Test(composite, flatten_merges_a_range_of_dims)
{
    tj_tensor *x = ARANGE(2, 3, 4, 5);
    EXPECT_SHAPE(tj_flatten(x, 1, 2), 2, 12, 5);
    EXPECT_SHAPE(tj_flatten(x, 0, -1), 120);
    EXPECT_SHAPE(tj_flatten(x, -2, -1), 2, 3, 20);
    cr_expect_eq(tj_flatten(x, 2, 2), x, "start == end returns self");
    EXPECT_SHAPE(tj_flatten(tj_tensor_scalar_f32(1), 0, -1), 1);
    EXPECT_SHAPE(tj_flatten(tj_tensor_empty(TJ_FLOAT32, 4, I64(0, 1, 3, 0)), 1, 2), 0, 3, 0);
    EXPECT_VALUES(tj_flatten(tj_t(ARANGE(2, 2)), 0, 1), 0, 2, 1, 3);
    EXPECT_ERROR(tj_flatten(x, 2, 1), TJ_ERR_INVALID_ARGUMENT, "aten::flatten.using_ints", "cannot come after");
    EXPECT_ERROR(tj_flatten(x, 0, 4), TJ_ERR_INDEX, "aten::flatten.using_ints", "dim 4");
}

Test(composite, contiguous_returns_self_or_a_clone)
{
    tj_tensor *x = ARANGE(2, 3);
    cr_expect_eq(tj_contiguous(x), x);
    tj_tensor *c = tj_contiguous(tj_t(x));
    cr_expect(!tj_tensor_shares_storage(x, c));
    EXPECT_STRIDES(c, 2, 1);
    EXPECT_VALUES(c, 0, 3, 1, 4, 2, 5);
    tj_tensor *e = tj_t(tj_tensor_empty(TJ_FLOAT32, 2, I64(0, 3)));
    cr_expect_eq(tj_contiguous(e), e, "an empty tensor counts as contiguous");
}

Test(composite, stack_adds_a_new_dim)
{
    tj_tensor *a = ARANGE(2, 3), *b = tj_t(ARANGE(3, 2));
    tj_tensor *s0 = tj_stack((tj_tensor *[]){a, b}, 2, 0);
    EXPECT_SHAPE(s0, 2, 2, 3);
    EXPECT_VALUES(s0, 0, 1, 2, 3, 4, 5, 0, 2, 4, 1, 3, 5);
    tj_tensor *s2 = tj_stack((tj_tensor *[]){a, b}, 2, -1);
    EXPECT_SHAPE(s2, 2, 3, 2);
    EXPECT_VALUES(s2, 0, 0, 1, 2, 2, 4, 3, 1, 4, 3, 5, 5);
    EXPECT_SHAPE(tj_stack((tj_tensor *[]){tj_tensor_scalar_f32(1), tj_tensor_scalar_f32(2)}, 2, 0), 2);
    EXPECT_ERROR(tj_stack((tj_tensor *[]){a, ARANGE(3, 2)}, 2, 0), TJ_ERR_SHAPE, "aten::stack",
                 "equal size, but got [2, 3] at entry 0 and [3, 2] at entry 1");
    EXPECT_ERROR(tj_stack((tj_tensor *[]){a}, 0, 0), TJ_ERR_INVALID_ARGUMENT, "non-empty TensorList");
    EXPECT_ERROR(tj_stack((tj_tensor *[]){a}, 1, 3), TJ_ERR_INDEX, "aten::stack", "dim 3");
}

Test(composite, split_gives_slices_with_a_smaller_last_chunk)
{
    tj_tensor *x = ARANGE(5, 2);
    tj_tensor *parts[4];
    int n = 0;
    cr_assert_eq(tj_split(x, 2, 0, parts, 4, &n), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(n, 3);
    EXPECT_VALUES(parts[0], 0, 1, 2, 3);
    EXPECT_VALUES(parts[2], 8, 9);
    cr_expect(tj_tensor_shares_storage(x, parts[1]));
    cr_expect_eq(tj_tensor_storage_offset(parts[1]), 4);
    cr_assert_eq(tj_split(x, 7, -1, parts, 4, &n), TJ_OK);
    cr_expect_eq(n, 1);
    EXPECT_SHAPE(parts[0], 5, 2);
    cr_assert_eq(tj_split(tj_tensor_empty(TJ_FLOAT32, 1, I64(0)), 0, 0, parts, 4, &n), TJ_OK);
    cr_expect_eq(n, 1);
    EXPECT_SHAPE(parts[0], 0);
}

Test(composite, split_through_the_dispatcher_returns_a_list)
{
    tj_value outs[TJ_MAX_RETURNS];
    tj_tensor *x = ARANGE(7);
    cr_assert_eq(tj_call("aten::split.Tensor", (tj_value[]){tj_v_tensor(x), tj_v_int(3)}, 2, outs), TJ_OK, "%s",
                 tj_last_error());
    cr_assert_eq(outs[0].kind, TJ_V_TENSORS);
    cr_assert_eq(outs[0].n, 3);
    tj_tensor *got[3] = {outs[0].u.ts[0], outs[0].u.ts[1], outs[0].u.ts[2]};
    EXPECT_VALUES(got[0], 0, 1, 2);
    EXPECT_VALUES(got[1], 3, 4, 5);
    EXPECT_VALUES(got[2], 6);
    for (int i = 0; i < 3; i++) tj_tensor_release(got[i]); /* list results belong to the caller */
}

Test(composite, split_rejects_what_pytorch_rejects)
{
    tj_tensor *parts[4];
    int n = 0;
    tj_tensor *x = ARANGE(4, 3);
    cr_expect_eq(tj_split(tj_tensor_scalar_f32(1), 1, 0, parts, 4, &n), TJ_ERR_INDEX);
    cr_expect(strstr(tj_last_error(), "at least a 1-dimensional tensor"));
    cr_expect_eq(tj_split(x, -1, 0, parts, 4, &n), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "non-negative, but got split_size=-1"));
    cr_expect_eq(tj_split(x, 0, 1, parts, 4, &n), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "dimension size of 3"));
    cr_expect_eq(tj_split(x, 1, 0, parts, 3, &n), TJ_ERR_INVALID_ARGUMENT);
    cr_expect_eq(n, 0);
}
