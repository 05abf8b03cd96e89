/* tril, triu (and tril_ / triu_) and repeat: values against PyTorch 1.13
 * for every dtype and for strided inputs, the diagonal and repeat edge
 * cases (huge diagonals, empty matrices, 0-dim self, repeats of 0 and 1,
 * ranks past what one strided copy holds), errors (each message names the
 * operator and the offending shape or values), the gradients (tril / triu
 * of the gradient; repeat's sum over the tiles), make_fx in real and fake
 * mode with and without the core table, replay through tj_compile /
 * tj_plan_run, and tril_ functionalised. Gradients are also gradchecked in
 * test_gradcheck.c, and the decompositions verified against the kernels by
 * test_decomps.c (tjit decomps --verify, samples in tools/decomp_samples.c).
 *
 * Reference values: PyTorch 1.13 on the inputs below, printed with
 * ", ".join(repr(v) for v in r.flatten().tolist()), e.g.
 *     x = torch.arange(1., 25.).reshape(2, 3, 4)
 *     torch.tril(x, -1); torch.triu(x, 1)
 *     b = (torch.arange(12) * 5 % 7 - 3).reshape(4, 3)
 *     torch.tril(b.t(), 1); b[:2].t().repeat(2, 2)
 *     torch.arange(1., 7.).reshape(2, 3).repeat(2, 1, 3)
 *     xg = torch.arange(1., 7., dtype=torch.float64).reshape(2, 3).requires_grad_()
 *     xg.repeat(2, 1, 3).backward(torch.arange(36., dtype=torch.float64).reshape(2, 2, 9)); xg.grad
 * (bool results printed as .long()). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(tri_repeat, .init = test_scope_open, .fini = test_scope_close);

#define SHAPE(...) (const int64_t[]){__VA_ARGS__}

/* i + 1 for element i, as dt (float32, float64 or int64). */
static tj_tensor *count_from_1(tj_dtype dt, int ndim, const int64_t *shape)
{
    tj_tensor *t = tj_tensor_empty(dt, ndim, shape);
    cr_assert_not_null(t, "%s", tj_last_error());
    size_t es = tj_dtype_size(dt);
    for (int64_t i = 0; i < tj_tensor_numel(t); i++)
        tj_store_f64(tj_tensor_ptr(t) + (size_t)i * es, dt, (double)(i + 1));
    return t;
}

/* t has dtype dt and shape, and holds want exactly (logical order). */
static void expect_values(const tj_tensor *t, tj_dtype dt, int ndim, const int64_t *shape, const double *want)
{
    int64_t n = test_assert_dtype_shape(t, dt, ndim, shape);
    test_expect_close(t, want, n, 0, 0);
}

/* tj_call's first result, or NULL. */
static tj_tensor *call(const char *name, const tj_value *args, int n)
{
    tj_value out[TJ_MAX_RETURNS];
    return tj_call(name, args, n, out) == TJ_OK ? out[0].u.t : NULL;
}

/* ---- tril / triu values ---- */

/* x = arange(1, 25).reshape(2, 3, 4) */
static const double tril_m1[24] = {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0, 0, 0, 0, 0, 17, 0, 0, 0, 21, 22, 0, 0};
static const double tril_0[24] = {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0, 13, 0, 0, 0, 17, 18, 0, 0, 21, 22, 23, 0};
static const double tril_2[24] = {1, 2, 3, 0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 17, 18, 19, 20, 21, 22, 23, 24};
static const double triu_0[24] = {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12, 13, 14, 15, 16, 0, 18, 19, 20, 0, 0, 23, 24};
static const double triu_1[24] = {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12, 0, 14, 15, 16, 0, 0, 19, 20, 0, 0, 0, 24};

Test(tri_repeat, tril_keeps_each_matrix_on_and_below_the_diagonal_as_pytorch)
{
    tj_tensor *x = count_from_1(TJ_FLOAT32, 3, SHAPE(2, 3, 4));
    expect_values(tj_tril(x, -1), TJ_FLOAT32, 3, SHAPE(2, 3, 4), tril_m1);
    expect_values(tj_tril(x, 0), TJ_FLOAT32, 3, SHAPE(2, 3, 4), tril_0);
    expect_values(tj_tril(x, 2), TJ_FLOAT32, 3, SHAPE(2, 3, 4), tril_2);
}

Test(tri_repeat, triu_keeps_each_matrix_on_and_above_the_diagonal_as_pytorch)
{
    tj_tensor *x = count_from_1(TJ_FLOAT32, 3, SHAPE(2, 3, 4));
    double all[24];
    for (int i = 0; i < 24; i++) all[i] = i + 1;
    expect_values(tj_triu(x, -2), TJ_FLOAT32, 3, SHAPE(2, 3, 4), all);
    expect_values(tj_triu(x, 0), TJ_FLOAT32, 3, SHAPE(2, 3, 4), triu_0);
    expect_values(tj_triu(x, 1), TJ_FLOAT32, 3, SHAPE(2, 3, 4), triu_1);
}

Test(tri_repeat, diagonal_defaults_to_the_main_diagonal_from_the_schema)
{
    tj_tensor *x = count_from_1(TJ_FLOAT32, 3, SHAPE(2, 3, 4));
    expect_values(call("aten::tril", (tj_value[]){tj_v_tensor(x)}, 1), TJ_FLOAT32, 3, SHAPE(2, 3, 4), tril_0);
    expect_values(call("aten::triu", (tj_value[]){tj_v_tensor(x)}, 1), TJ_FLOAT32, 3, SHAPE(2, 3, 4), triu_0);
}

/* b = (arange(12) * 5 % 7 - 3).reshape(4, 3) */
static const int64_t b_4x3[12] = {-3, 2, 0, -2, 3, 1, -1, -3, 2, 0, -2, 3};

Test(tri_repeat, tril_and_triu_read_a_transposed_int64_self_through_its_strides)
{
    tj_tensor *bt = tj_transpose(test_i64(2, SHAPE(4, 3), b_4x3), 0, 1);
    static const double tril_1[12] = {-3, -2, 0, 0, 2, 3, -3, 0, 0, 1, 2, 3};
    static const double triu_m1[12] = {-3, -2, -1, 0, 2, 3, -3, -2, 0, 1, 2, 3};
    expect_values(tj_tril(bt, 1), TJ_INT64, 2, SHAPE(3, 4), tril_1);
    expect_values(tj_triu(bt, -1), TJ_INT64, 2, SHAPE(3, 4), triu_m1);
}

Test(tri_repeat, tril_and_triu_keep_bool_and_float64_values)
{
    static const bool bits[9] = {1, 0, 1, 1, 1, 0, 0, 1, 1};
    tj_tensor *bb = test_tensor(TJ_BOOL, 2, SHAPE(3, 3), bits);
    static const double tril_bool_m1[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    expect_values(tj_tril(bb, -1), TJ_BOOL, 2, SHAPE(3, 3), tril_bool_m1);
    /* torch.triu(arange(1., 13., dtype=float64).reshape(3, 4) * 0.1, 1) */
    tj_tensor *d = tj_mul_scalar(count_from_1(TJ_FLOAT64, 2, SHAPE(3, 4)), tj_v_float(0.1));
    static const double triu_f64[12] = {0.0, 0.2, 0.30000000000000004, 0.4, 0.0, 0.0, 0.7000000000000001, 0.8,
                                        0.0, 0.0, 0.0, 1.2000000000000002};
    expect_values(tj_triu(d, 1), TJ_FLOAT64, 2, SHAPE(3, 4), triu_f64);
}

Test(tri_repeat, kept_nan_and_minus_zero_stay_and_the_zeroed_elements_are_plus_zero)
{
    const float nan = __builtin_nanf(""), inf = __builtin_inff();
    tj_tensor *x = test_f32(2, SHAPE(2, 3), (const float[]){nan, -0.0f, -inf, -0.0f, nan, inf});
    test_expect_f32(tj_tril(x, 0), (const float[]){nan, 0.0f, 0.0f, -0.0f, nan, 0.0f}, 6, 0);
    test_expect_f32(tj_triu(x, 0), (const float[]){nan, -0.0f, -inf, 0.0f, nan, inf}, 6, 0);
}

Test(tri_repeat, diagonals_beyond_the_matrix_keep_everything_or_nothing)
{
    tj_tensor *x = count_from_1(TJ_FLOAT32, 2, SHAPE(3, 4));
    double all[12], none[12] = {0};
    for (int i = 0; i < 12; i++) all[i] = i + 1;
    expect_values(tj_tril(x, INT64_MAX), TJ_FLOAT32, 2, SHAPE(3, 4), all);
    expect_values(tj_tril(x, 3), TJ_FLOAT32, 2, SHAPE(3, 4), all);
    expect_values(tj_tril(x, -3), TJ_FLOAT32, 2, SHAPE(3, 4), none);
    expect_values(tj_tril(x, INT64_MIN), TJ_FLOAT32, 2, SHAPE(3, 4), none);
    expect_values(tj_triu(x, INT64_MIN), TJ_FLOAT32, 2, SHAPE(3, 4), all);
    expect_values(tj_triu(x, -2), TJ_FLOAT32, 2, SHAPE(3, 4), all);
    expect_values(tj_triu(x, 4), TJ_FLOAT32, 2, SHAPE(3, 4), none);
    expect_values(tj_triu(x, INT64_MAX), TJ_FLOAT32, 2, SHAPE(3, 4), none);
}

Test(tri_repeat, empty_matrices_and_batches_give_empty_results_of_the_same_shape)
{
    static const int64_t shapes[3][3] = {{0, 3, 2}, {2, 0, 3}, {2, 3, 0}};
    for (int i = 0; i < 3; i++) {
        tj_tensor *x = tj_zeros(shapes[i], 3, TJ_FLOAT64);
        cr_expect_eq(test_assert_dtype_shape(tj_tril(x, 0), TJ_FLOAT64, 3, shapes[i]), 0);
        cr_expect_eq(test_assert_dtype_shape(tj_triu(x, 1), TJ_FLOAT64, 3, shapes[i]), 0);
    }
}

/* A batch of tall and wide matrices read every other column (split over
 * threads): each element kept exactly when j - i <= k (tril) or >= k. */
Test(tri_repeat, large_strided_batches_keep_exactly_the_triangle_on_every_thread)
{
    tj_set_num_threads(2);
    static const int64_t ks[4] = {-40, -1, 0, 70};
    tj_tensor *base = count_from_1(TJ_FLOAT32, 3, SHAPE(6, 90, 260));
    tj_tensor *x = tj_slice(base, 2, true, 0, false, 0, 2); /* [6, 90, 130], column stride 2: 2 threads */
    for (int lower = 0; lower < 2; lower++)
        for (int t = 0; t < 4; t++) {
            tj_tensor *y = lower ? tj_tril(x, ks[t]) : tj_triu(x, ks[t]);
            cr_assert_not_null(y, "%s", tj_last_error());
            int64_t bad = 0;
            for (int64_t e = 0; e < 6 * 90 * 130; e++) {
                int64_t i = e / 130 % 90, j = e % 130, d = j - i;
                bool kept = lower ? d <= ks[t] : d >= ks[t];
                double want = kept ? (double)(e / 130 * 260 + j * 2 + 1) : 0;
                bad += tj_tensor_item_at(y, e) != want;
            }
            cr_expect_eq(bad, 0, "%s k %lld: %lld wrong", lower ? "tril" : "triu", (long long)ks[t], (long long)bad);
        }
}

/* ---- tril_ / triu_ ---- */

Test(tri_repeat, tril__writes_into_a_transposed_view_and_returns_self)
{
    tj_tensor *base = count_from_1(TJ_FLOAT32, 2, SHAPE(4, 3));
    tj_tensor *view = tj_transpose(base, 0, 1); /* [3, 4], strides [1, 3] */
    uint32_t version = tj_tensor_version(base);
    cr_expect_eq(tj_tril_(view, 0), view);
    cr_expect_gt(tj_tensor_version(base), version);
    /* view[i][j] = base[j][i] = 3 j + i + 1, kept when j <= i */
    static const double view_want[12] = {1, 0, 0, 0, 2, 5, 0, 0, 3, 6, 9, 0};
    static const double base_want[12] = {1, 2, 3, 0, 5, 6, 0, 0, 9, 0, 0, 0};
    expect_values(view, TJ_FLOAT32, 2, SHAPE(3, 4), view_want);
    expect_values(base, TJ_FLOAT32, 2, SHAPE(4, 3), base_want);
}

Test(tri_repeat, triu__of_int64_in_place_matches_the_out_of_place_result)
{
    tj_tensor *bt = tj_clone(tj_transpose(test_i64(2, SHAPE(4, 3), b_4x3), 0, 1));
    tj_tensor *want = tj_triu(bt, -1);
    cr_expect_eq(tj_triu_(bt, -1), bt);
    static const double triu_m1[12] = {-3, -2, -1, 0, 2, 3, -3, -2, 0, 1, 2, 3};
    expect_values(bt, TJ_INT64, 2, SHAPE(3, 4), triu_m1);
    expect_values(want, TJ_INT64, 2, SHAPE(3, 4), triu_m1);
}

Test(tri_repeat, tril_and_triu_refuse_a_self_of_rank_below_2_naming_the_operator_and_shape)
{
    tj_tensor *v = count_from_1(TJ_FLOAT32, 1, SHAPE(5)), *s = tj_scalar_tensor(tj_v_float(1), TJ_FLOAT32);
    test_expect_error(tj_tril(v, 0), TJ_ERR_INDEX, "aten::tril", "at least 2 dimensions, got shape [5]");
    test_expect_error(tj_triu(s, 0), TJ_ERR_INDEX, "aten::triu", "at least 2 dimensions, got shape []");
    test_expect_error(tj_tril_(v, 1), TJ_ERR_INDEX, "aten::tril_", "at least 2 dimensions, got shape [5]");
    test_expect_error(tj_triu_(s, 1), TJ_ERR_INDEX, "aten::triu_", "at least 2 dimensions");
    expect_values(v, TJ_FLOAT32, 1, SHAPE(5), (const double[]){1, 2, 3, 4, 5});
}

Test(tri_repeat, tril__refuses_an_expanded_self_whose_elements_overlap)
{
    tj_tensor *col = count_from_1(TJ_FLOAT32, 2, SHAPE(3, 1));
    tj_tensor *x = tj_expand(col, SHAPE(3, 4), 2);
    test_expect_error(tj_tril_(x, 0), TJ_ERR_UNSUPPORTED, "aten::tril_", "single memory location");
    expect_values(col, TJ_FLOAT32, 2, SHAPE(3, 1), (const double[]){1, 2, 3});
}

/* ---- repeat values ---- */

Test(tri_repeat, repeat_tiles_self_and_adds_leading_dims_as_pytorch)
{
    tj_tensor *x = count_from_1(TJ_FLOAT32, 2, SHAPE(2, 3));
    static const double want[36] = {1, 2, 3, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 4, 5, 6,
                                    1, 2, 3, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 4, 5, 6};
    expect_values(tj_repeat(x, SHAPE(2, 1, 3), 3), TJ_FLOAT32, 3, SHAPE(2, 2, 9), want);
}

Test(tri_repeat, repeat_reads_a_transposed_int64_self_through_its_strides)
{
    tj_tensor *x = tj_transpose(tj_slice(test_i64(2, SHAPE(4, 3), b_4x3), 0, true, 0, true, 2, 1), 0, 1);
    static const double want[24] = {-3, -2, -3, -2, 2, 3, 2, 3, 0, 1, 0, 1, -3, -2, -3, -2, 2, 3, 2, 3, 0, 1, 0, 1};
    expect_values(tj_repeat(x, SHAPE(2, 2), 2), TJ_INT64, 2, SHAPE(6, 4), want);
}

Test(tri_repeat, repeat_of_a_0dim_self_and_of_a_bool_vector)
{
    tj_tensor *s = tj_scalar_tensor(tj_v_float(5), TJ_FLOAT64);
    expect_values(tj_repeat(s, SHAPE(2, 3), 2), TJ_FLOAT64, 2, SHAPE(2, 3), (const double[]){5, 5, 5, 5, 5, 5});
    expect_values(tj_repeat(s, NULL, 0), TJ_FLOAT64, 0, NULL, (const double[]){5});
    static const bool bits[3] = {1, 0, 1};
    tj_tensor *b = test_tensor(TJ_BOOL, 1, SHAPE(3), bits);
    static const double want[12] = {1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1};
    expect_values(tj_repeat(b, SHAPE(2, 2), 2), TJ_BOOL, 2, SHAPE(2, 6), want);
}

Test(tri_repeat, a_zero_repeat_gives_an_empty_result_and_a_negative_one_of_an_empty_dim_too)
{
    tj_tensor *x = count_from_1(TJ_FLOAT32, 2, SHAPE(2, 3));
    cr_expect_eq(test_assert_dtype_shape(tj_repeat(x, SHAPE(3, 0, 2), 3), TJ_FLOAT32, 3, SHAPE(3, 0, 6)), 0);
    tj_tensor *e = tj_zeros(SHAPE(0, 3), 2, TJ_INT64);
    cr_expect_eq(test_assert_dtype_shape(tj_repeat(e, SHAPE(-1, 2), 2), TJ_INT64, 2, SHAPE(0, 6)), 0);
}

Test(tri_repeat, repeat_by_ones_is_a_new_tensor_not_a_view)
{
    tj_tensor *x = count_from_1(TJ_FLOAT32, 2, SHAPE(2, 3));
    tj_tensor *y = tj_repeat(x, SHAPE(1, 1, 1), 3);
    cr_assert_not_null(y, "%s", tj_last_error());
    cr_expect_neq(tj_tensor_data(y), tj_tensor_data(x));
    ((float *)tj_tensor_data(y))[0] = -7;
    expect_values(x, TJ_FLOAT32, 2, SHAPE(2, 3), (const double[]){1, 2, 3, 4, 5, 6});
    expect_values(y, TJ_FLOAT32, 3, SHAPE(1, 2, 3), (const double[]){-7, 2, 3, 4, 5, 6});
}

/* Element e of a repeat of x (rank n, sizes xs, padded to the result's
 * rank) is x at the result's index modulo each size. */
static double tiled_value(const tj_tensor *x, const int64_t *out_shape, int n, int64_t e)
{
    int lead = n - tj_tensor_ndim(x);
    int64_t flat = 0, mul = 1;
    for (int d = n - 1; d >= 0; d--) {
        int64_t i = e % out_shape[d];
        e /= out_shape[d];
        if (d < lead) continue;
        int64_t size = tj_tensor_shape(x)[d - lead];
        flat += i % size * mul;
        mul *= size;
    }
    return tj_tensor_item_at(x, flat);
}

static void expect_tiles(const tj_tensor *x, const int64_t *reps, int n)
{
    tj_tensor *y = tj_repeat((tj_tensor *)x, reps, n);
    cr_assert_not_null(y, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_ndim(y), n);
    int64_t bad = 0;
    for (int64_t e = 0; e < tj_tensor_numel(y); e++)
        bad += tj_tensor_item_at(y, e) != tiled_value(x, tj_tensor_shape(y), n, e);
    cr_expect_eq(bad, 0, "%lld of %lld elements wrong", (long long)bad, (long long)tj_tensor_numel(y));
}

/* Repeat counts that are no powers of two (the kernel doubles the filled
 * tiles), every dim repeated at rank 5 and a rank-8 result (twice the
 * rank of what one strided copy takes), a long row repeated on threads. */
Test(tri_repeat, repeats_of_every_dim_at_high_rank_tile_exactly)
{
    tj_set_num_threads(2);
    expect_tiles(count_from_1(TJ_FLOAT32, 2, SHAPE(3, 1)), SHAPE(5, 37), 2);
    expect_tiles(tj_transpose(count_from_1(TJ_FLOAT64, 3, SHAPE(2, 3, 2)), 0, 2), SHAPE(3, 2, 5), 3);
    expect_tiles(count_from_1(TJ_INT64, 5, SHAPE(2, 3, 1, 2, 2)), SHAPE(3, 2, 7, 1, 3), 5);
    expect_tiles(count_from_1(TJ_FLOAT32, 4, SHAPE(2, 1, 3, 2)), SHAPE(2, 3, 2, 2, 3, 5, 2, 3), 8);
    expect_tiles(count_from_1(TJ_FLOAT32, 1, SHAPE(5000)), SHAPE(9, 3), 2);
}

Test(tri_repeat, repeat_errors_name_the_operator_and_the_offending_values)
{
    tj_tensor *x = count_from_1(TJ_FLOAT32, 2, SHAPE(2, 3));
    test_expect_error(tj_repeat(x, SHAPE(2), 1), TJ_ERR_INVALID_ARGUMENT, "aten::repeat",
                      "can not be smaller than number of dimensions of tensor: repeats [2] for self of shape [2, 3]");
    test_expect_error(tj_repeat(x, SHAPE(2, -1), 2), TJ_ERR_SHAPE, "aten::repeat",
                      "Trying to create tensor with negative dimension -3: [4, -3]");
    test_expect_error(tj_repeat(x, SHAPE(1, 1, 1, 1, 1, 1, 1, 1, 1), 9), TJ_ERR_INVALID_ARGUMENT, "aten::repeat",
                      "has 9 dims, more than the maximum rank 8");
    test_expect_error(tj_repeat(x, SHAPE(INT64_MAX / 2 + 1, 1), 2), TJ_ERR_OVERFLOW, "aten::repeat",
                      "dim 0 of size 2 repeated 4611686018427387904 times");
    test_expect_error(tj_repeat(x, SHAPE(1LL << 31, 1LL << 31), 2), TJ_ERR_OVERFLOW, "aten::repeat",
                      "element count of shape [4294967296, 6442450944] overflows");
    tj_clear_error(); /* else a NULL argument keeps reporting the error before it */
    test_expect_error(tj_repeat(NULL, SHAPE(1), 1), TJ_ERR_INVALID_ARGUMENT, "aten::repeat",
                      "'self' expects Tensor, got NULL");
}

/* ---- gradients ---- */

/* d sum(v * f(x)) / dx for x of `shape` (count_from_1, float64) and v =
 * arange(numel of f(x)) + v0. */
static tj_tensor *grad_of(tj_tensor *(*f)(tj_tensor *, const void *), const void *arg, int ndim, const int64_t *shape,
                          double v0)
{
    tj_tensor *x = count_from_1(TJ_FLOAT64, ndim, shape), *g;
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *y = f(x, arg);
    cr_assert_not_null(y, "%s", tj_last_error());
    tj_tensor *v = tj_add_scalar(tj_arange(tj_v_int(0), tj_v_int(tj_tensor_numel(y)), tj_v_int(1), TJ_FLOAT64),
                                 tj_v_float(v0));
    v = tj_reshape(v, tj_tensor_shape(y), tj_tensor_ndim(y));
    cr_assert_eq(tj_autograd_grad(&y, 1, &v, &x, 1, &g), TJ_OK, "%s", tj_last_error());
    return g;
}

static tj_tensor *tril_1(tj_tensor *x, const void *arg)
{
    (void)arg;
    return tj_tril(x, 1);
}

/* triu_ of a copy of x (x is a leaf) */
static tj_tensor *triu_m1_(tj_tensor *x, const void *arg)
{
    (void)arg;
    return tj_triu_(tj_mul_scalar(x, tj_v_int(1)), -1);
}

/* arg: the count of repeats, then the repeats */
static tj_tensor *repeat_by(tj_tensor *x, const void *arg)
{
    const int64_t *a = arg;
    return tj_repeat(x, a + 1, (int)a[0]);
}

Test(tri_repeat, tril_and_triu__backward_is_the_same_triangle_of_the_gradient_as_pytorch)
{
    static const double want[24] = {-5, -4, 0, 0, -1, 0, 1, 0, 3, 4, 5, 6, 7, 8, 0, 0, 11, 12, 13, 0, 15, 16, 17, 18};
    expect_values(grad_of(tril_1, NULL, 3, SHAPE(2, 3, 4), -5), TJ_FLOAT64, 3, SHAPE(2, 3, 4), want);
    /* triu(-1) of arange(12) over [3, 4] */
    static const double want_u[12] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11};
    expect_values(grad_of(triu_m1_, NULL, 2, SHAPE(3, 4), 0), TJ_FLOAT64, 2, SHAPE(3, 4), want_u);
}

Test(tri_repeat, repeat_backward_sums_the_gradient_over_the_tiles_as_pytorch)
{
    expect_values(grad_of(repeat_by, SHAPE(3, 2, 1, 3), 2, SHAPE(2, 3), 0), TJ_FLOAT64, 2, SHAPE(2, 3),
                  (const double[]){72, 78, 84, 126, 132, 138});
    expect_values(grad_of(repeat_by, SHAPE(2, 2, 2), 1, SHAPE(3), 0), TJ_FLOAT64, 1, SHAPE(3),
                  (const double[]){18, 22, 26});
    expect_values(grad_of(repeat_by, SHAPE(3, 2, 0, 1), 2, SHAPE(2, 3), 0), TJ_FLOAT64, 2, SHAPE(2, 3),
                  (const double[]){0, 0, 0, 0, 0, 0});
    /* a negative repeat of an empty dim: an empty result, an empty gradient */
    cr_expect_eq(test_assert_dtype_shape(grad_of(repeat_by, SHAPE(2, -2, 1), 2, SHAPE(0, 3), 0), TJ_FLOAT64, 2,
                                         SHAPE(0, 3)), 0);
}

/* Rank 5 with 4 repeated dims (9 dims in one reshape, past TJ_MAX_DIMS):
 * the gradient summed dim by dim, each element the sum of v over its tiles. */
Test(tri_repeat, repeat_backward_past_the_rank_limit_sums_dim_by_dim)
{
    static const int64_t arg[6] = {5, 2, 3, 1, 2, 2}, shape[5] = {2, 1, 2, 2, 1};
    tj_tensor *g = grad_of(repeat_by, arg, 5, shape, 0);
    test_assert_dtype_shape(g, TJ_FLOAT64, 5, shape);
    static const int64_t out_shape[5] = {4, 3, 2, 4, 2};
    double want[8] = {0};
    for (int64_t e = 0; e < 4 * 3 * 2 * 4 * 2; e++) {
        int64_t idx[5], r = e, flat = 0;
        for (int d = 4; d >= 0; d--) idx[d] = r % out_shape[d], r /= out_shape[d];
        for (int d = 0; d < 5; d++) flat = flat * shape[d] + idx[d] % shape[d];
        want[flat] += (double)e;
    }
    test_expect_close(g, want, 8, 0, 0);
}

/* ---- tracing and replay ---- */

typedef struct trace_case {
    const char *op; /* what make_fx records without a table */
    int which;      /* 0 tril, 1 triu, 2 repeat, 3 tril_ of a clone, 4 repeat at rank 5 */
} trace_case;

static tj_status traced(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    switch (((const trace_case *)ctx)->which) {
    case 0: out[0] = tj_tril(in[0], -1); break;
    case 1: out[0] = tj_triu(in[0], 1); break;
    case 2: out[0] = tj_repeat(in[0], SHAPE(2, 1, 3), 3); break;
    case 3: out[0] = tj_tril_(tj_clone(in[0]), 0); break;
    /* 5 + 4 dims to tile in one copy: the decomposition copies dim by dim */
    default: out[0] = tj_repeat(tj_reshape(in[0], SHAPE(2, 1, 3, 2, 2), 5), SHAPE(2, 3, 1, 2, 2), 5); break;
    }
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* In real and fake mode: without a table the operator is recorded once and
 * the replay gives eager's values (tril_ after functionalisation); under
 * the core table the graph holds primitives only and replays to the same
 * values (exact: masks and copies). */
static void expect_traces_and_replays(const trace_case *tc, tj_tensor *x)
{
    tj_tensor *eager[1];
    int n_out;
    cr_assert_eq(traced((void *)tc, &x, 1, eager, &n_out), TJ_OK, "%s", tj_last_error());
    tj_decomp_table *core = tj_core_decompositions();
    for (int mode = 0; mode < 2; mode++) {
        tj_tracing_mode m = mode ? TJ_TRACE_FAKE : TJ_TRACE_REAL;
        tj_graph *g = tj_make_fx(traced, (void *)tc, &x, 1, NULL, m);
        cr_assert_not_null(g, "%s", tj_last_error());
        cr_expect_eq(tj_graph_count_op(g, tj_op_find(tc->op)), 1, "%s not recorded once", tc->op);
        if (tc->which == 3) cr_expect_eq(tj_pass_functionalize(g), 1, "%s", tj_last_error());
        test_expect_same(test_replay1(g, &x, 1), eager[0], tc->op);
        tj_graph_free(g);
        tj_graph *d = tj_make_fx(traced, (void *)tc, &x, 1, core, m);
        cr_assert_not_null(d, "%s", tj_last_error());
        cr_expect(test_only_primitives(d), "%s: the decomposed graph keeps a composite", tc->op);
        if (tc->which == 2) cr_expect_eq(tj_graph_count_op(d, TJ_OPS(_to_copy)), 1, "repeat: not one copy");
        test_expect_same(test_replay1(d, &x, 1), eager[0], tc->op);
        tj_graph_free(d);
    }
    tj_decomp_table_free(core);
}

Test(tri_repeat, tril_triu_repeat_and_tril__trace_real_and_fake_and_replay_as_eager)
{
    static const trace_case cases[5] = {
        {"aten::tril", 0}, {"aten::triu", 1}, {"aten::repeat", 2}, {"aten::tril_", 3}, {"aten::repeat", 4}};
    tj_tensor *x = tj_transpose(count_from_1(TJ_FLOAT32, 3, SHAPE(2, 4, 3)), 1, 2);
    for (int i = 0; i < 5; i++) expect_traces_and_replays(&cases[i], x);
    tj_tensor *b = tj_transpose(test_i64(2, SHAPE(4, 3), b_4x3), 0, 1);
    for (int i = 0; i < 4; i++) expect_traces_and_replays(&cases[i], b);
}

/* d/dx sum(repeat(x) * w) traced: repeat_backward is recorded as PyTorch
 * records it, a sum over the new leading dim, then one reshape and one sum
 * over both repeated dims. */
static tj_status repeat_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *loss = tj_sum(tj_mul(tj_repeat(x, SHAPE(2, 2, 3), 3), in[1]), -1);
    *n_out = 1;
    return tj_autograd_grad(&loss, 1, NULL, &x, 1, out);
}

Test(tri_repeat, a_traced_repeat_backward_sums_as_pytorch_and_replays_to_the_eager_gradient)
{
    tj_tensor *in[2] = {count_from_1(TJ_FLOAT32, 2, SHAPE(2, 3)),
                        tj_add_scalar(count_from_1(TJ_FLOAT32, 3, SHAPE(2, 4, 9)), tj_v_float(-10))};
    tj_tensor *eager[1];
    int n_out;
    cr_assert_eq(repeat_grad(NULL, in, 2, eager, &n_out), TJ_OK, "%s", tj_last_error());
    tj_decomp_table *core = tj_core_decompositions();
    for (int mode = 0; mode < 2; mode++) {
        tj_graph *g = tj_make_fx(repeat_grad, NULL, in, 2, mode ? core : NULL, TJ_TRACE_FAKE);
        cr_assert_not_null(g, "%s", tj_last_error());
        if (!mode) cr_expect_eq(tj_graph_count_op(g, TJ_OPS(sum_dim_IntList)), 2);
        test_expect_same(test_replay1(g, in, 2), eager[0], mode ? "decomposed" : "as traced");
        tj_graph_free(g);
    }
    tj_decomp_table_free(core);
}
