/* The convolution-family operators a user trial missed: conv1d,
 * conv_transpose1d, conv_transpose2d (implicit composites of convolution),
 * adaptive_avg_pool2d (implicit: mean or _adaptive_avg_pool2d), the
 * _adaptive_avg_pool2d kernel and its backward. Values against PyTorch
 * 1.13, unbatched inputs, errors (each message names the operator and the
 * offending sizes or values), make_fx in real and fake mode with and
 * without the core table, and replay through tj_compile / tj_plan_run.
 * Gradients are gradchecked in test_gradcheck.c; the decompositions are
 * also verified against the kernels by test_decomps.c (tjit decomps
 * --verify, with the samples of tools/decomp_samples.c).
 *
 * Reference values: PyTorch 1.13 (torch.ops.aten.<op>) on the ramp inputs
 * below, printed with repr() of each element as a Python float, by this
 * script (abridged: one call per reference array, same arguments as the
 * test):
 *     def ramp(shape, mul, mod, off, scale=1.0, dtype=torch.float32):
 *         n = math.prod(shape)
 *         return torch.tensor([((i * mul) % mod - off) * scale for i in range(n)],
 *                             dtype=torch.float64).reshape(shape).to(dtype)
 *     print(", ".join(repr(v) for v in op.conv1d(x, w, b, [2], [1], [2], 2).double().flatten().tolist()))
 * Integer ramps make the convolutions exact; PyTorch's float32 adaptive
 * pooling sums in float (tjit in float64, rounded once), so float32 pooling
 * is compared within an ulp and float64 exactly. */
#include <criterion/criterion.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(conv_ops, .init = test_scope_open, .fini = test_scope_close);

/* ((i * mul) % mod - off) * scale for element i, computed in double and
 * rounded to dt (the script's ramp). */
static tj_tensor *ramp(tj_dtype dt, int ndim, const int64_t *shape, int64_t mul, int64_t mod, double off, double scale)
{
    tj_tensor *t = tj_tensor_empty(dt, ndim, shape);
    cr_assert_not_null(t, "%s", tj_last_error());
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) {
        double v = ((double)(i * mul % mod) - off) * scale;
        if (dt == TJ_FLOAT32) ((float *)tj_tensor_data(t))[i] = (float)v;
        else ((double *)tj_tensor_data(t))[i] = v;
    }
    return t;
}

#define SHAPE(...) (const int64_t[]){__VA_ARGS__}
#define F32 0x1p-23 /* one float32 ulp, relative */

static void expect_shape(const tj_tensor *t, int ndim, const int64_t *shape)
{
    test_assert_dtype_shape(t, tj_tensor_dtype(t), ndim, shape);
}

/* Every element of a equal to b's (a and b of one shape). */
static void expect_equal(const tj_tensor *a, const tj_tensor *b, double rtol)
{
    cr_assert_not_null(a, "%s", tj_last_error());
    cr_assert_not_null(b, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_ndim(a), tj_tensor_ndim(b));
    cr_assert_eq(memcmp(tj_tensor_shape(a), tj_tensor_shape(b), sizeof(int64_t) * (size_t)tj_tensor_ndim(a)), 0);
    for (int64_t i = 0; i < tj_tensor_numel(a); i++) {
        double x = tj_tensor_item_at(a, i), y = tj_tensor_item_at(b, i);
        cr_expect(test_close(x, y, rtol, 0), "element %lld: %.17g vs %.17g", (long long)i, x, y);
    }
}

/* The call failed with `status` and a message holding every needle. */
static void expect_error(const void *result, tj_status status, const char *const *needles, int n)
{
    cr_assert_null(result, "the call succeeded");
    cr_expect_eq(tj_last_status(), status, "status %s: %s", tj_status_name(tj_last_status()), tj_last_error());
    for (int i = 0; i < n; i++)
        cr_expect(strstr(tj_last_error(), needles[i]), "message '%s' lacks '%s'", tj_last_error(), needles[i]);
}
#define EXPECT_ERROR(result, status, ...) \
    expect_error(result, status, (const char *[]){__VA_ARGS__}, sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *))

/* tj_call's first result, or NULL. */
static tj_tensor *call(const char *name, const tj_value *args, int n)
{
    tj_value out[TJ_MAX_RETURNS];
    return tj_call(name, args, n, out) == TJ_OK ? out[0].u.t : NULL;
}

/* ---- conv1d ---- */

/* x = ramp([2,4,9], 3, 7, 3), w = ramp([6,2,3], 1, 5, 2), b below. */
static tj_tensor *conv1d_x(void) { return ramp(TJ_FLOAT32, 3, SHAPE(2, 4, 9), 3, 7, 3, 1); }
static tj_tensor *conv1d_w(void) { return ramp(TJ_FLOAT32, 3, SHAPE(6, 2, 3), 1, 5, 2, 1); }
static tj_tensor *conv1d_b(void) { return test_f32(1, SHAPE(6), (const float[]){0.5f, -1, 0, 2, -0.5f, 1}); }

/* op.conv1d(x, w, b, [2], [1], [2], 2): [2, 6, 4] */
static const double conv1d_want[48] = {
    2.5,  2.5,  -9.5, 10.5, 2.0,  2.0, -4.0, -11.0, -1.0, -1.0, -1.0, 0.0,  7.0,  -7.0, -1.0, 7.0,
    9.5,  5.5,  -10.5, 2.5, -9.0, 7.0, 9.0,  -3.0,  -0.5, -3.5, -1.5, -3.5, -4.0, -1.0, 0.0,  0.0,
    5.0,  -1.0, -1.0, 1.0,  3.0,  3.0, 2.0,  -1.0,  -4.5, -2.5, -4.5, -1.5, 2.0,  1.0,  3.0,  -3.0};

Test(conv_ops, conv1d_with_stride_padding_dilation_groups_and_bias_matches_pytorch)
{
    tj_tensor *y = tj_conv1d(conv1d_x(), conv1d_w(), conv1d_b(), 2, 1, 2, 2);
    expect_shape(y, 3, SHAPE(2, 6, 4));
    test_expect_close(y, conv1d_want, 48, 0, 0);
}

Test(conv_ops, conv1d_of_an_unbatched_input_is_the_first_sample_without_its_batch_dim)
{
    tj_tensor *y = tj_conv1d(tj_select(conv1d_x(), 0, 0), conv1d_w(), conv1d_b(), 2, 1, 2, 2);
    expect_shape(y, 2, SHAPE(6, 4));
    test_expect_close(y, conv1d_want, 24, 0, 0);
}

Test(conv_ops, conv1d_defaults_from_the_schema_are_stride_1_padding_0_dilation_1_groups_1)
{
    tj_tensor *x = conv1d_x(), *w = ramp(TJ_FLOAT32, 3, SHAPE(3, 4, 2), 1, 5, 2, 1);
    tj_tensor *by_default = call("aten::conv1d", (tj_value[]){tj_v_tensor(x), tj_v_tensor(w)}, 2);
    expect_shape(by_default, 3, SHAPE(2, 3, 8));
    expect_equal(by_default, tj_conv1d(x, w, NULL, 1, 0, 1, 1), 0);
}

/* ---- conv_transpose1d / conv_transpose2d ---- */

/* x = ramp([1,4,5], 1, 7, 3), w = ramp([4,3,3], 2, 5, 2), b below;
 * op.conv_transpose1d(x, w, b, [3], [1], [2], 2, [1]): [1, 6, 15]
 * (output_padding 2 < stride 3) */
static const double conv_transpose1d_want[90] = {
    -3.0, -5.0, 8.0,  -5.0, -3.0, 0.0,  7.0,  -1.0, -1.0, 5.0,  1.0,  -2.0, 3.0,  3.0,  1.0,  -6.0, 7.0,  7.0,
    -6.0, 6.0,  -6.0, 1.0,  -2.0, -5.0, 1.0,  -3.0, -4.0, 1.0,  -4.0, -1.0, -5.5, 7.5,  -5.5, -3.5, 8.5,  6.5,
    -1.5, -4.5, 4.5,  0.5,  -3.5, 2.5,  2.5,  -2.5, 0.5,  2.0,  -2.0, -3.0, 2.0,  -3.0, -2.0, 2.0,  -4.0, -1.0,
    2.0,  -5.0, 7.0,  -5.0, 8.0,  0.0,  2.0,  -2.0, 4.0,  4.0,  -1.0, 2.0,  6.0,  0.0,  0.0,  8.0,  1.0,  -2.0,
    -4.0, 9.0,  2.0,  -4.0, 2.0,  0.0,  -5.0, 0.0,  0.0,  -6.0, -2.0, 0.0,  -7.0, -4.0, -7.0, 6.0,  -6.0, -2.0};

static tj_tensor *ct1d_x(void) { return ramp(TJ_FLOAT32, 3, SHAPE(1, 4, 5), 1, 7, 3, 1); }
static tj_tensor *ct1d_w(void) { return ramp(TJ_FLOAT32, 3, SHAPE(4, 3, 3), 2, 5, 2, 1); }
static tj_tensor *ct1d_b(void) { return test_f32(1, SHAPE(6), (const float[]){1, -1, 0.5f, 0, 2, -2}); }

Test(conv_ops, conv_transpose1d_with_output_padding_and_groups_matches_pytorch)
{
    tj_tensor *y = tj_conv_transpose1d(ct1d_x(), ct1d_w(), ct1d_b(), 3, 1, 2, 2, 1);
    expect_shape(y, 3, SHAPE(1, 6, 15));
    test_expect_close(y, conv_transpose1d_want, 90, 0, 0);
    tj_tensor *unbatched = tj_conv_transpose1d(tj_select(ct1d_x(), 0, 0), ct1d_w(), ct1d_b(), 3, 1, 2, 2, 1);
    expect_shape(unbatched, 2, SHAPE(6, 15));
    test_expect_close(unbatched, conv_transpose1d_want, 90, 0, 0);
}

/* x = ramp([1,4,3,3], 1, 7, 3), w = ramp([4,2,2,3], 3, 5, 2);
 * op.conv_transpose2d(x, w, None, [2,1], [1,0], [1,1], 2, [1,2]): [1, 4, 5, 8]
 * (output_padding 1 is below the height's stride 2 and the width's
 * dilation 2, not the width's stride 1) */
static const double conv_transpose2d_want[160] = {
    -4, -4, -5, 0,  8,  4,  1,  0, -2, -5, 3,  7,  -4, -1, -2, 0, -4, -4, 12, 3,  -5, -5, -1, 0,
    -4, 7,  3,  -5, -5, 3,  2,  0, 10, -4, -6, -1, -4, 7,  4,  0, -1, 0,  8,  4,  -4, -2, 1,  0,
    4,  7,  -4, -1, -6, -4, 10, 0, 2,  3,  -5, -5, 3,  7,  -4, 0, -1, -5, -5, 3,  12, -4, -4, 0,
    -2, -1, -4, 7,  3,  -5, -2, 0, -1, -2, -7, 10, 13, -3, -2, 0, -1, 0,  8,  4,  -4, -2, 1,  0,
    3,  2,  -3, -4, -5, 0,  1,  0, 2,  3,  -5, -5, 3,  7,  -4, 0, 0,  -1, -6, -4, 12, 3,  -3, 0,
    -4, 10, 13, -3, -7, -1, -4, 0, 7,  4,  -4, -2, 4,  2,  1,  0, -4, -4, -5, 0,  8,  4,  1,  0,
    -2, -5, 3,  7,  -4, -1, -2, 0, -4, -4, 12, 3,  -5, -5, -1, 0};

static tj_tensor *ct2d_x(void) { return ramp(TJ_FLOAT32, 4, SHAPE(1, 4, 3, 3), 1, 7, 3, 1); }
static tj_tensor *ct2d_w(void) { return ramp(TJ_FLOAT32, 4, SHAPE(4, 2, 2, 3), 3, 5, 2, 1); }

Test(conv_ops, conv_transpose2d_with_output_padding_below_stride_or_dilation_matches_pytorch)
{
    tj_tensor *y = tj_conv_transpose2d(ct2d_x(), ct2d_w(), NULL, SHAPE(2, 1), SHAPE(1, 0), SHAPE(1, 1), 2,
                                       SHAPE(1, 2));
    expect_shape(y, 4, SHAPE(1, 4, 5, 8));
    test_expect_close(y, conv_transpose2d_want, 160, 0, 0);
    tj_tensor *unbatched = tj_conv_transpose2d(tj_select(ct2d_x(), 0, 0), ct2d_w(), NULL, SHAPE(2, 1), SHAPE(1, 0),
                                               SHAPE(1, 1), 2, SHAPE(1, 2));
    expect_shape(unbatched, 3, SHAPE(4, 5, 8));
    test_expect_close(unbatched, conv_transpose2d_want, 160, 0, 0);
}

Test(conv_ops, conv_transpose2d_is_the_input_gradient_of_conv2d)
{
    /* the definition of a transposed convolution: conv_transpose2d(g, w)
     * is the grad_input of conv2d(x, w) for an output gradient g;
     * output_padding [1, 1] picks x's size [6, 7] among the sizes whose
     * convolution has g's [3, 4] */
    tj_tensor *x = ramp(TJ_FLOAT64, 4, SHAPE(2, 3, 6, 7), 5, 11, 5, 0.5);
    tj_tensor *w = ramp(TJ_FLOAT64, 4, SHAPE(4, 3, 3, 2), 3, 7, 3, 1);
    tj_tensor *g = ramp(TJ_FLOAT64, 4, SHAPE(2, 4, 3, 4), 2, 9, 4, 1);
    const int64_t stride[2] = {2, 2}, pad[2] = {1, 1}, one[2] = {1, 1}, opad[2] = {1, 1};
    tj_tensor *gi = NULL;
    cr_assert_eq(tj_convolution_backward(g, x, w, NULL, 0, stride, pad, one, false, NULL, 1,
                                         (const bool[]){true, false, false}, &gi, NULL, NULL),
                 TJ_OK, "%s", tj_last_error());
    expect_equal(tj_conv_transpose2d(g, w, NULL, stride, pad, opad, 1, one), gi, 0);
}

/* ---- adaptive average pooling ---- */

/* x = ramp([2,3,7,5], 7, 11, 5, 0.25); op._adaptive_avg_pool2d(x, [3, 2]):
 * windows of 3 rows (0-2, 2-4, 4-6) and 3 columns (0-2, 2-4) */
static const double adaptive_f32_want[36] = {
    -0.2222222238779068,   0.2222222238779068,   -0.138888880610466,   0.0,
    -0.0555555559694767,   -0.2222222238779068,  0.2222222238779068,   0.0555555559694767,
    0.0,                   0.138888880610466,    -0.2222222238779068,  0.2222222238779068,
    0.0555555559694767,    -0.1111111119389534,  0.138888880610466,    -0.02777777798473835,
    0.2222222238779068,    0.0555555559694767,   -0.1111111119389534,  0.02777777798473835,
    -0.02777777798473835,  0.1111111119389534,   0.0555555559694767,   -0.1111111119389534,
    0.02777777798473835,   -0.138888880610466,   0.1111111119389534,   -0.0555555559694767,
    -0.1111111119389534,   0.02777777798473835,  -0.138888880610466,   0.0,
    -0.0555555559694767,   -0.2222222238779068,  0.02777777798473835,  -0.138888880610466};
/* the same with scale 0.1, float64: equal to the last bit */
static const double adaptive_f64_want[36] = {
    -0.08888888888888889,  0.08888888888888889,  -0.055555555555555546, 0.0,
    -0.022222222222222223, -0.08888888888888889, 0.08888888888888889,   0.022222222222222216,
    0.0,                   0.055555555555555546, -0.08888888888888889,  0.08888888888888889,
    0.022222222222222216,  -0.044444444444444446, 0.055555555555555546, -0.011111111111111108,
    0.08888888888888889,   0.022222222222222216, -0.044444444444444446, 0.011111111111111112,
    -0.011111111111111108, 0.044444444444444446, 0.022222222222222216,  -0.044444444444444446,
    0.011111111111111112,  -0.055555555555555546, 0.044444444444444446, -0.022222222222222223,
    -0.044444444444444446, 0.011111111111111112, -0.055555555555555546, 0.0,
    -0.022222222222222223, -0.08888888888888889, 0.011111111111111112,  -0.055555555555555546};

Test(conv_ops, adaptive_avg_pool2d_with_uneven_windows_matches_pytorch)
{
    tj_tensor *x = ramp(TJ_FLOAT32, 4, SHAPE(2, 3, 7, 5), 7, 11, 5, 0.25);
    tj_tensor *y = tj_adaptive_avg_pool2d(x, SHAPE(3, 2));
    expect_shape(y, 4, SHAPE(2, 3, 3, 2));
    test_expect_close(y, adaptive_f32_want, 36, F32, 0);
    tj_tensor *xd = ramp(TJ_FLOAT64, 4, SHAPE(2, 3, 7, 5), 7, 11, 5, 0.1);
    test_expect_close(tj__adaptive_avg_pool2d(xd, SHAPE(3, 2)), adaptive_f64_want, 36, 0, 0);
}

Test(conv_ops, adaptive_avg_pool2d_reads_any_strides_and_unbatched_input)
{
    /* the input as a transposed copy (H and W swapped back by a view) and
     * as a 3-d [6, 7, 5] tensor */
    tj_tensor *x = ramp(TJ_FLOAT64, 4, SHAPE(2, 3, 7, 5), 7, 11, 5, 0.1);
    tj_tensor *strided = tj_transpose(tj_contiguous(tj_transpose(x, 2, 3)), 2, 3);
    cr_assert(!tj_tensor_is_contiguous(strided));
    test_expect_close(tj__adaptive_avg_pool2d(strided, SHAPE(3, 2)), adaptive_f64_want, 36, 0, 0);
    tj_tensor *planes = tj_reshape(x, SHAPE(6, 7, 5), 3);
    tj_tensor *y = tj__adaptive_avg_pool2d(planes, SHAPE(3, 2));
    expect_shape(y, 3, SHAPE(6, 3, 2));
    test_expect_close(y, adaptive_f64_want, 36, 0, 0);
}

Test(conv_ops, adaptive_avg_pool2d_to_a_larger_size_repeats_rows_and_columns)
{
    /* x = ramp([1,1,3,2], 5, 9, 4, 0.5); op._adaptive_avg_pool2d(x, [4, 5]) */
    static const double want[20] = {-2.0,  -2.0,  -0.75, 0.5,  0.5, -1.75, -1.75, -0.5, 0.75, 0.75,
                                     -1.25, -1.25, 0.0,   1.25, 1.25, -1.0, -1.0,  0.25, 1.5,  1.5};
    tj_tensor *y = tj_adaptive_avg_pool2d(ramp(TJ_FLOAT32, 4, SHAPE(1, 1, 3, 2), 5, 9, 4, 0.5), SHAPE(4, 5));
    expect_shape(y, 4, SHAPE(1, 1, 4, 5));
    test_expect_close(y, want, 20, 0, 0);
}

Test(conv_ops, adaptive_avg_pool2d_to_1x1_is_the_mean_over_the_last_two_dims_of_any_rank)
{
    /* as ATen: no rank check on this path, so a 2-d input pools too */
    tj_tensor *x = ramp(TJ_FLOAT32, 2, SHAPE(3, 4), 5, 7, 2, 0.5);
    tj_tensor *y = tj_adaptive_avg_pool2d(x, SHAPE(1, 1));
    expect_shape(y, 2, SHAPE(1, 1));
    test_expect_close(y, (const double[]){0.5}, 1, 0, 0); /* (36 - 2 * 12) * 0.5 / 12 */
    tj_tensor *x4 = ramp(TJ_FLOAT32, 4, SHAPE(2, 3, 4, 5), 3, 11, 5, 0.25);
    expect_equal(tj_adaptive_avg_pool2d(x4, SHAPE(1, 1)), tj_mean_dim(x4, SHAPE(-1, -2), 2, true, TJ_DTYPE_NONE), 0);
    expect_equal(tj_adaptive_avg_pool2d(x4, SHAPE(1, 1)), tj__adaptive_avg_pool2d(x4, SHAPE(1, 1)), F32);
}

Test(conv_ops, adaptive_avg_pool2d_of_empty_batches_and_to_size_zero_gives_empty_results)
{
    expect_shape(tj__adaptive_avg_pool2d(tj_zeros(SHAPE(0, 3, 4, 5), 4, TJ_DTYPE_NONE), SHAPE(2, 2)), 4,
                 SHAPE(0, 3, 2, 2));
    expect_shape(tj__adaptive_avg_pool2d(tj_zeros(SHAPE(2, 0, 4, 5), 4, TJ_DTYPE_NONE), SHAPE(2, 2)), 4,
                 SHAPE(2, 0, 2, 2));
    expect_shape(tj__adaptive_avg_pool2d(tj_zeros(SHAPE(2, 3, 4, 5), 4, TJ_DTYPE_NONE), SHAPE(0, 2)), 4,
                 SHAPE(2, 3, 0, 2));
}

/* g = ramp([1,2,3,2], 5, 13, 6, 0.1), self [1,2,7,5];
 * op._adaptive_avg_pool2d_backward(g, self) in float64 */
static const double backward_f64_want[70] = {
    -0.06666666666666668,  -0.06666666666666668,  -0.07777777777777779,  -0.011111111111111112,
    -0.011111111111111112, -0.06666666666666668,  -0.06666666666666668,  -0.07777777777777779,
    -0.011111111111111112, -0.011111111111111112, -0.022222222222222233, -0.022222222222222233,
    -0.07777777777777779,  -0.05555555555555556,  -0.05555555555555556,  0.044444444444444446,
    0.044444444444444446,  0.0,                   -0.044444444444444446, -0.044444444444444446,
    0.05555555555555556,   0.05555555555555556,   0.07777777777777779,   0.022222222222222233,
    0.022222222222222233,  0.011111111111111112,  0.011111111111111112,  0.07777777777777779,
    0.06666666666666668,   0.06666666666666668,   0.011111111111111112,  0.011111111111111112,
    0.07777777777777779,   0.06666666666666668,   0.06666666666666668,   -0.022222222222222223,
    -0.022222222222222223, 0.011111111111111117,  0.03333333333333334,   0.03333333333333334,
    -0.022222222222222223, -0.022222222222222223, 0.011111111111111117,  0.03333333333333334,
    0.03333333333333334,   -0.07777777777777778,  -0.07777777777777778,  -0.04444444444444444,
    0.03333333333333334,   0.03333333333333334,   -0.05555555555555555,  -0.05555555555555555,
    -0.05555555555555555,  0.0,                   0.0,                   0.0,
    0.0,                   -0.03333333333333334,  -0.03333333333333334,  -0.03333333333333334,
    0.05555555555555555,   0.05555555555555555,   0.022222222222222213,  -0.03333333333333334,
    -0.03333333333333334,  0.05555555555555555,   0.05555555555555555,   0.022222222222222213,
    -0.03333333333333334,  -0.03333333333333334};

Test(conv_ops, adaptive_avg_pool2d_backward_matches_pytorch)
{
    tj_tensor *g = ramp(TJ_FLOAT64, 4, SHAPE(1, 2, 3, 2), 5, 13, 6, 0.1);
    tj_tensor *gi = tj__adaptive_avg_pool2d_backward(g, tj_zeros(SHAPE(1, 2, 7, 5), 4, TJ_FLOAT64));
    expect_shape(gi, 4, SHAPE(1, 2, 7, 5));
    test_expect_close(gi, backward_f64_want, 70, 0, 0);
    /* float32: PyTorch adds float32 terms (an ulp from the float64 sum
     * rounded once, as here) */
    tj_tensor *g32 = ramp(TJ_FLOAT32, 4, SHAPE(1, 2, 3, 2), 5, 13, 6, 0.1);
    tj_tensor *gi32 = tj__adaptive_avg_pool2d_backward(g32, tj_zeros(SHAPE(1, 2, 7, 5), 4, TJ_FLOAT32));
    test_expect_close(gi32, backward_f64_want, 70, F32, 0);
}

Test(conv_ops, adaptive_avg_pool2d_gradient_through_autograd_is_the_backward_operator)
{
    tj_tensor *x = ramp(TJ_FLOAT64, 4, SHAPE(1, 2, 7, 5), 3, 7, 3, 1), *grad = NULL;
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *y = tj_adaptive_avg_pool2d(x, SHAPE(3, 2));
    tj_tensor *v = ramp(TJ_FLOAT64, 4, SHAPE(1, 2, 3, 2), 5, 13, 6, 0.1);
    cr_assert_eq(tj_autograd_grad(&y, 1, &v, &x, 1, &grad), TJ_OK, "%s", tj_last_error());
    test_expect_close(grad, backward_f64_want, 70, 0, 0);
}

/* ---- errors ---- */

Test(conv_ops, conv1d_refuses_inputs_of_other_ranks_naming_the_size)
{
    tj_tensor *w = conv1d_w();
    EXPECT_ERROR(tj_conv1d(tj_zeros(SHAPE(1, 2, 3, 7), 4, TJ_DTYPE_NONE), w, NULL, 1, 0, 1, 1), TJ_ERR_SHAPE,
                 "aten::conv1d", "Expected 2D (unbatched) or 3D (batched) input to conv1d", "[1, 2, 3, 7]");
    EXPECT_ERROR(tj_conv1d(tj_zeros(SHAPE(7), 1, TJ_DTYPE_NONE), w, NULL, 1, 0, 1, 1), TJ_ERR_SHAPE, "aten::conv1d",
                 "input of size: [7]");
}

Test(conv_ops, conv1d_refuses_a_2d_weight_a_stride_list_of_two_and_channel_mismatch)
{
    tj_tensor *x = conv1d_x();
    EXPECT_ERROR(tj_conv1d(x, tj_zeros(SHAPE(4, 3, 2, 2), 4, TJ_DTYPE_NONE), NULL, 1, 0, 1, 1), TJ_ERR_SHAPE,
                 "aten::conv1d", "4-dimensional weight [4, 3, 2, 2]", "3-dimensional input of size [2, 4, 9]");
    const int64_t two[2] = {1, 1};
    tj_value args[4] = {tj_v_tensor(x), tj_v_tensor(conv1d_w()), tj_v_none(), tj_v_ints(two, 2)};
    EXPECT_ERROR(call("aten::conv1d", args, 4), TJ_ERR_INVALID_ARGUMENT, "aten::conv1d",
                 "list of 1 values to match the convolution dimensions, but got stride=[1, 1]");
    EXPECT_ERROR(tj_conv1d(x, conv1d_w(), NULL, 1, 0, 1, 1), TJ_ERR_SHAPE, "aten::conv1d",
                 "expected input[2, 4, 9] to have 2 channels, but got 4 channels");
    EXPECT_ERROR(tj_conv1d(x, tj_zeros(SHAPE(2, 4, 12), 3, TJ_DTYPE_NONE), NULL, 1, 1, 1, 1), TJ_ERR_SHAPE,
                 "aten::conv1d", "padded input size per channel: (11). Kernel size: (12)");
}

Test(conv_ops, conv1d_refuses_integer_and_mixed_dtypes_naming_them)
{
    tj_tensor *xi = tj_zeros(SHAPE(2, 4, 9), 3, TJ_INT64), *wi = tj_zeros(SHAPE(6, 4, 3), 3, TJ_INT64);
    EXPECT_ERROR(tj_conv1d(xi, wi, NULL, 1, 0, 1, 1), TJ_ERR_DTYPE, "aten::conv1d", "int64");
    tj_tensor *b64 = tj_zeros(SHAPE(6), 1, TJ_FLOAT64);
    EXPECT_ERROR(tj_conv1d(conv1d_x(), conv1d_w(), b64, 1, 0, 1, 2), TJ_ERR_DTYPE, "aten::conv1d", "float32",
                 "float64");
}

Test(conv_ops, conv_transpose_refuses_output_padding_not_smaller_than_stride_or_dilation)
{
    /* output_padding 2 == stride 2, dilation 1 */
    EXPECT_ERROR(tj_conv_transpose1d(ct1d_x(), ct1d_w(), NULL, 2, 0, 2, 2, 1), TJ_ERR_INVALID_ARGUMENT,
                 "aten::conv_transpose1d", "output padding must be smaller than either stride or dilation",
                 "output_padding 2, stride 2, dilation 1");
    /* the width's: output_padding 2 >= stride 2 and >= dilation 1; the height's 1 < 2 passes */
    EXPECT_ERROR(tj_conv_transpose2d(ct2d_x(), ct2d_w(), NULL, SHAPE(2, 2), SHAPE(0, 0), SHAPE(1, 2), 2, SHAPE(1, 1)),
                 TJ_ERR_INVALID_ARGUMENT, "aten::conv_transpose2d.input", "output_padding 2, stride 2, dilation 1");
    EXPECT_ERROR(tj_conv_transpose2d(ct2d_x(), ct2d_w(), NULL, SHAPE(1, 1), SHAPE(0, 0), SHAPE(-1, 0), 2, SHAPE(1, 1)),
                 TJ_ERR_INVALID_ARGUMENT, "aten::conv_transpose2d.input", "negative output_padding");
}

Test(conv_ops, conv_transpose_refuses_bad_ranks_channels_sizes_and_dtypes)
{
    EXPECT_ERROR(tj_conv_transpose2d(tj_zeros(SHAPE(5, 5), 2, TJ_DTYPE_NONE), ct2d_w(), NULL, SHAPE(1, 1),
                                     SHAPE(0, 0), NULL, 1, SHAPE(1, 1)),
                 TJ_ERR_SHAPE, "aten::conv_transpose2d.input",
                 "Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of size: [5, 5]");
    EXPECT_ERROR(tj_conv_transpose1d(tj_zeros(SHAPE(1, 3, 5), 3, TJ_DTYPE_NONE), ct1d_w(), NULL, 1, 0, 0, 1, 1),
                 TJ_ERR_SHAPE, "aten::conv_transpose1d", "transposed=1, weight of size [4, 3, 3]",
                 "expected input[1, 3, 5] to have 4 channels, but got 3 channels");
    EXPECT_ERROR(tj_conv_transpose1d(tj_zeros(SHAPE(1, 4, 1), 3, TJ_DTYPE_NONE), ct1d_w(), NULL, 1, 3, 0, 1, 1),
                 TJ_ERR_SHAPE, "aten::conv_transpose1d", "calculated output size -3 is too small");
    EXPECT_ERROR(tj_conv_transpose1d(tj_zeros(SHAPE(1, 4, 5), 3, TJ_FLOAT64), ct1d_w(), NULL, 1, 0, 0, 1, 1),
                 TJ_ERR_DTYPE, "aten::conv_transpose1d", "input type (float64), weight type (float32)");
    EXPECT_ERROR(tj_conv_transpose1d(ct1d_x(), ct1d_w(), tj_zeros(SHAPE(5), 1, TJ_DTYPE_NONE), 1, 0, 0, 2, 1),
                 TJ_ERR_SHAPE, "aten::conv_transpose1d", "expected bias to be 1-dimensional with 6 elements",
                 "bias of size [5]");
}

/* PyTorch 1.13 computes an empty input only when its batch or channels
 * are empty: torch.nn.functional.conv2d(torch.zeros(1, 2, 0, 4),
 * torch.zeros(3, 2, 1, 1), padding=1) raises "Only zero batch or zero
 * channel inputs are supported, but got input shape: [1, 2, 0, 4]", as do
 * conv1d and the transposed ones; the kernel size check comes first. */
Test(conv_ops, convolution_refuses_an_empty_spatial_dim_unless_the_batch_or_channels_are_empty)
{
    const char *msg = "only zero batch or zero channel inputs are supported, but got input shape: ";
    tj_tensor *w2 = tj_zeros(SHAPE(3, 2, 1, 1), 4, TJ_DTYPE_NONE);
    EXPECT_ERROR(tj_convolution(tj_zeros(SHAPE(1, 2, 0, 4), 4, TJ_DTYPE_NONE), w2, NULL, SHAPE(1, 1), SHAPE(1, 1),
                                SHAPE(1, 1), false, SHAPE(0, 0), 1),
                 TJ_ERR_SHAPE, "aten::convolution", msg, "[1, 2, 0, 4]");
    EXPECT_ERROR(tj_convolution(tj_zeros(SHAPE(1, 2, 0, 4), 4, TJ_DTYPE_NONE), w2, NULL, SHAPE(1, 1), SHAPE(0, 0),
                                SHAPE(1, 1), false, SHAPE(0, 0), 1),
                 TJ_ERR_SHAPE, "aten::convolution", "padded input size per channel: (0 x 4). Kernel size: (1 x 1)");
    EXPECT_ERROR(tj_conv1d(tj_zeros(SHAPE(1, 2, 0), 3, TJ_DTYPE_NONE), tj_zeros(SHAPE(3, 2, 1), 3, TJ_DTYPE_NONE),
                           NULL, 1, 1, 1, 1),
                 TJ_ERR_SHAPE, "aten::conv1d", msg, "[1, 2, 0]");
    /* transposed: before the output size (here 3 x 6, and -2 x 3 below) */
    EXPECT_ERROR(tj_conv_transpose2d(tj_zeros(SHAPE(1, 2, 0, 4), 4, TJ_DTYPE_NONE),
                                     tj_zeros(SHAPE(2, 3, 3, 3), 4, TJ_DTYPE_NONE), NULL, SHAPE(1, 1), SHAPE(0, 0),
                                     NULL, 1, SHAPE(1, 1)),
                 TJ_ERR_SHAPE, "aten::conv_transpose2d.input", msg, "[1, 2, 0, 4]");
    EXPECT_ERROR(tj_conv_transpose1d(tj_zeros(SHAPE(1, 2, 0), 3, TJ_DTYPE_NONE),
                                     tj_zeros(SHAPE(2, 3, 1), 3, TJ_DTYPE_NONE), NULL, 1, 1, 0, 1, 1),
                 TJ_ERR_SHAPE, "aten::conv_transpose1d", msg, "[1, 2, 0]");
    /* an empty batch is computed: [0, 3, 2, 6] */
    tj_tensor *y = tj_convolution(tj_zeros(SHAPE(0, 2, 0, 4), 4, TJ_DTYPE_NONE), w2, NULL, SHAPE(1, 1), SHAPE(1, 1),
                                  SHAPE(1, 1), false, SHAPE(0, 0), 1);
    expect_shape(y, 4, SHAPE(0, 3, 2, 6));
}

/* PyTorch 1.13 (ConvUtils.h check_shape_forward), F.conv2d of a [1, 3, 5, 5]
 * input, groups=3: weight [0, 3, 3, 3] and [2, 1, 3, 3] give "Given groups=3,
 * expected weight to be at least 3 at dimension 0 ...", [4, 1, 3, 3]
 * "... divisible by 3 ...". tjit said "divisible by" for all three, wrong
 * for 0 output channels, which 1 divides. */
Test(conv_ops, a_weight_with_fewer_output_channels_than_groups_says_at_least)
{
    tj_tensor *x = tj_zeros(SHAPE(1, 3, 5, 5), 4, TJ_DTYPE_NONE);
    const int64_t one[2] = {1, 1}, zero[2] = {0, 0};
    EXPECT_ERROR(tj_conv2d(x, tj_zeros(SHAPE(0, 3, 3, 3), 4, TJ_DTYPE_NONE), NULL, one, zero, one, 1), TJ_ERR_SHAPE,
                 "aten::conv2d", "given groups=1, expected weight to be at least 1 at dimension 0, but got weight of size [0, 3, 3, 3]");
    EXPECT_ERROR(tj_conv2d(x, tj_zeros(SHAPE(2, 1, 3, 3), 4, TJ_DTYPE_NONE), NULL, one, zero, one, 3), TJ_ERR_SHAPE,
                 "aten::conv2d", "given groups=3, expected weight to be at least 3 at dimension 0, but got weight of size [2, 1, 3, 3]");
    EXPECT_ERROR(tj_conv2d(x, tj_zeros(SHAPE(4, 1, 3, 3), 4, TJ_DTYPE_NONE), NULL, one, zero, one, 3), TJ_ERR_SHAPE,
                 "aten::conv2d", "given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight of size [4, 1, 3, 3]");
}

Test(conv_ops, adaptive_avg_pool2d_refuses_bad_output_sizes_naming_them)
{
    tj_tensor *x = ramp(TJ_FLOAT32, 4, SHAPE(1, 2, 4, 4), 1, 5, 2, 1);
    EXPECT_ERROR(tj_adaptive_avg_pool2d(x, SHAPE(-1, 2)), TJ_ERR_INVALID_ARGUMENT, "aten::adaptive_avg_pool2d",
                 "elements of output_size must be greater than or equal to 0 but received {-1, 2}");
    tj_value three[2] = {tj_v_tensor(x), tj_v_ints(SHAPE(1, 2, 3), 3)};
    EXPECT_ERROR(call("aten::_adaptive_avg_pool2d", three, 2), TJ_ERR_INVALID_ARGUMENT, "aten::_adaptive_avg_pool2d",
                 "output_size must be 2, got [1, 2, 3]");
    tj_value one[2] = {tj_v_tensor(x), tj_v_ints(SHAPE(1), 1)};
    EXPECT_ERROR(call("aten::adaptive_avg_pool2d", one, 2), TJ_ERR_INVALID_ARGUMENT, "aten::adaptive_avg_pool2d",
                 "output_size must be 2, got [1]");
    EXPECT_ERROR(tj__adaptive_avg_pool2d(x, SHAPE(INT64_MAX / 2, 1)), TJ_ERR_OVERFLOW, "aten::_adaptive_avg_pool2d",
                 "is too large for input [1, 2, 4, 4]");
    /* the largest sizes too, without computing INT64_MAX + 1 (UBSan) */
    EXPECT_ERROR(tj__adaptive_avg_pool2d(x, SHAPE(INT64_MAX, 1)), TJ_ERR_OVERFLOW, "aten::_adaptive_avg_pool2d",
                 "output_size [9223372036854775807, 1] is too large for input [1, 2, 4, 4]");
    EXPECT_ERROR(tj_adaptive_avg_pool2d(x, SHAPE(1, INT64_MAX)), TJ_ERR_OVERFLOW, "aten::adaptive_avg_pool2d",
                 "output_size [1, 9223372036854775807] is too large for input [1, 2, 4, 4]");
}

Test(conv_ops, adaptive_avg_pool2d_refuses_bad_ranks_empty_planes_and_integers)
{
    EXPECT_ERROR(tj_adaptive_avg_pool2d(tj_zeros(SHAPE(7, 5), 2, TJ_DTYPE_NONE), SHAPE(2, 2)), TJ_ERR_SHAPE,
                 "aten::adaptive_avg_pool2d", "Expected 3D or 4D tensor, but got [7, 5]");
    EXPECT_ERROR(tj__adaptive_avg_pool2d(tj_zeros(SHAPE(1, 2, 3, 7, 5), 5, TJ_DTYPE_NONE), SHAPE(2, 2)), TJ_ERR_SHAPE,
                 "aten::_adaptive_avg_pool2d", "[1, 2, 3, 7, 5]");
    EXPECT_ERROR(tj__adaptive_avg_pool2d(tj_zeros(SHAPE(2, 3, 0, 5), 4, TJ_DTYPE_NONE), SHAPE(2, 2)), TJ_ERR_SHAPE,
                 "aten::_adaptive_avg_pool2d", "input has sizes [2, 3, 0, 5] with dimension 2 being empty");
    EXPECT_ERROR(tj__adaptive_avg_pool2d(tj_zeros(SHAPE(1, 2, 4, 4), 4, TJ_INT64), SHAPE(2, 2)), TJ_ERR_DTYPE,
                 "aten::_adaptive_avg_pool2d", "not implemented for int64");
    /* the 1 x 1 path is mean's, with mean's error */
    EXPECT_ERROR(tj_adaptive_avg_pool2d(tj_zeros(SHAPE(1, 2, 4, 4), 4, TJ_INT64), SHAPE(1, 1)), TJ_ERR_DTYPE,
                 "aten::adaptive_avg_pool2d", "aten::mean.dim");
}

Test(conv_ops, adaptive_avg_pool2d_backward_refuses_mismatched_grad_output)
{
    tj_tensor *self = tj_zeros(SHAPE(2, 3, 7, 5), 4, TJ_DTYPE_NONE);
    const char *op = "aten::_adaptive_avg_pool2d_backward";
    EXPECT_ERROR(tj__adaptive_avg_pool2d_backward(tj_zeros(SHAPE(2, 3, 3, 2), 4, TJ_FLOAT64), self), TJ_ERR_DTYPE, op,
                 "expected dtype float32 for `grad_output` but got dtype float64");
    tj_tensor *batch_1 = tj_zeros(SHAPE(1, 3, 3, 2), 4, TJ_DTYPE_NONE);
    EXPECT_ERROR(tj__adaptive_avg_pool2d_backward(batch_1, self), TJ_ERR_SHAPE, op,
                 "grad_output of size [1, 3, 3, 2] does not match self of size [2, 3, 7, 5]");
    EXPECT_ERROR(tj__adaptive_avg_pool2d_backward(tj_zeros(SHAPE(3, 3, 2), 3, TJ_DTYPE_NONE), self), TJ_ERR_SHAPE, op,
                 "[3, 3, 2]", "[2, 3, 7, 5]");
    tj_tensor *no_rows = tj_zeros(SHAPE(2, 3, 0, 2), 4, TJ_DTYPE_NONE);
    EXPECT_ERROR(tj__adaptive_avg_pool2d_backward(no_rows, self), TJ_ERR_SHAPE, op,
                 "grad_output has sizes [2, 3, 0, 2] with dimension 2 being empty");
    EXPECT_ERROR(tj__adaptive_avg_pool2d_backward(tj_zeros(SHAPE(3, 2), 2, TJ_DTYPE_NONE), self), TJ_ERR_SHAPE, op,
                 "Expected 3D or 4D grad_output, but got [3, 2]");
}

/* ---- tracing and replay ---- */

static tj_status fn_conv1d(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_conv1d(in[0], in[1], in[2], 2, 1, 2, 2);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_status fn_conv_transpose1d(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_conv_transpose1d(in[0], in[1], in[2], 3, 1, 2, 2, 1);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* unbatched input, no bias */
static tj_status fn_conv_transpose2d(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_conv_transpose2d(in[0], in[1], NULL, SHAPE(2, 1), SHAPE(1, 0), SHAPE(1, 1), 2, SHAPE(1, 2));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* ctx: the output size */
static tj_status fn_adaptive(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    out[0] = tj_adaptive_avg_pool2d(in[0], ctx);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* in[0]: grad_output, in[1]: self */
static tj_status fn_adaptive_backward(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj__adaptive_avg_pool2d_backward(in[0], in[1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* fn traced in real and fake mode: without a table it records `recorded`
 * (not the implicit operator `called`, when given) and replays to eager's
 * bits; under the core table it holds primitives only and replays within
 * rtol of eager. */
static void expect_traces_and_replays(tj_trace_fn fn, void *ctx, tj_tensor *const *in, int n, const char *recorded,
                                      const char *called, double rtol)
{
    tj_tensor *eager[1];
    int n_out = 0;
    cr_assert_eq(fn(ctx, in, n, eager, &n_out), TJ_OK, "%s", tj_last_error());
    tj_decomp_table *core = tj_core_decompositions();
    for (int mode = 0; mode < 2; mode++) {
        tj_tracing_mode m = mode ? TJ_TRACE_FAKE : TJ_TRACE_REAL;
        tj_graph *g = tj_make_fx(fn, ctx, in, n, NULL, m);
        cr_assert_not_null(g, "%s", tj_last_error());
        const char *mode_name = mode ? "fake" : "real";
        cr_expect_eq(tj_graph_count_op(g, tj_op_find(recorded)), 1, "%s mode: %s not recorded once", mode_name,
                     recorded);
        if (called) cr_expect_eq(tj_graph_count_op(g, tj_op_find(called)), 0, "%s recorded", called);
        expect_equal(test_replay1(g, in, n), eager[0], 0);
        tj_graph_free(g);
        tj_graph *d = tj_make_fx(fn, ctx, in, n, core, m);
        cr_assert_not_null(d, "%s", tj_last_error());
        cr_expect(test_only_primitives(d), "%s mode: the decomposed graph keeps a composite", mode_name);
        expect_equal(test_replay1(d, in, n), eager[0], rtol);
        tj_graph_free(d);
    }
    tj_decomp_table_free(core);
}

/* x [2, 0, 4, 4], w [3, 0, 3, 3]: the bias gradient of the convolution
 * (stride 1, no padding) with grad_output [2, 0, 2, 2]. */
static tj_status fn_conv_bias_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    const bool mask[3] = {true, true, true};
    tj_tensor *gi, *gw;
    *n_out = 1;
    return tj_convolution_backward(in[0], in[1], in[2], SHAPE(3), 1, SHAPE(1, 1), SHAPE(0, 0), SHAPE(1, 1), false,
                                   NULL, 1, mask, &gi, &gw, &out[0]);
}

/* PyTorch 1.13 gives an input without channels an output without channels
 * (calc_output_size): torch.nn.functional.conv2d(torch.zeros(2, 0, 4, 4),
 * torch.zeros(3, 0, 3, 3), torch.ones(3)).shape == [2, 0, 2, 2], and
 * autograd gives the bias a zero gradient. */
Test(conv_ops, convolution_without_input_channels_gives_no_output_channels)
{
    tj_tensor *x = tj_zeros(SHAPE(2, 0, 4, 4), 4, TJ_DTYPE_NONE), *w = tj_zeros(SHAPE(3, 0, 3, 3), 4, TJ_DTYPE_NONE);
    tj_tensor *b = tj_ones(SHAPE(3), 1, TJ_DTYPE_NONE);
    expect_shape(tj_conv2d(x, w, b, SHAPE(1, 1), SHAPE(0, 0), SHAPE(1, 1), 1), 4, SHAPE(2, 0, 2, 2));
    expect_shape(tj_conv2d(x, tj_zeros(SHAPE(4, 0, 3, 3), 4, TJ_DTYPE_NONE), NULL, SHAPE(1, 1), SHAPE(1, 1),
                           SHAPE(1, 1), 2),
                 4, SHAPE(2, 0, 4, 4));
    expect_shape(tj_conv1d(tj_zeros(SHAPE(2, 0, 9), 3, TJ_DTYPE_NONE), tj_zeros(SHAPE(6, 0, 3), 3, TJ_DTYPE_NONE),
                           NULL, 2, 1, 2, 2),
                 3, SHAPE(2, 0, 4));
    tj_tensor *in[3] = {tj_zeros(SHAPE(2, 0, 2, 2), 4, TJ_DTYPE_NONE), x, w}, *grad[1];
    int n_out;
    cr_assert_eq(fn_conv_bias_grad(NULL, in, 3, grad, &n_out), TJ_OK, "%s", tj_last_error());
    test_expect_f32(grad[0], (const float[]){0, 0, 0}, 3, 0);
    /* the decompositions agree, and so does autograd */
    expect_traces_and_replays(fn_conv_bias_grad, NULL, in, 3, "aten::convolution_backward", NULL, 0);
    tj_tensor *x1[3] = {tj_zeros(SHAPE(2, 0, 9), 3, TJ_DTYPE_NONE), tj_zeros(SHAPE(6, 0, 3), 3, TJ_DTYPE_NONE),
                        tj_ones(SHAPE(6), 1, TJ_DTYPE_NONE)};
    expect_traces_and_replays(fn_conv1d, NULL, x1, 3, "aten::convolution", "aten::conv1d", 0);
    tj_tensor_set_requires_grad(b, true);
    tj_tensor *y = tj_sum(tj_conv2d(x, w, b, SHAPE(1, 1), SHAPE(0, 0), SHAPE(1, 1), 1), -1), *gb = NULL;
    cr_assert_eq(tj_autograd_grad(&y, 1, NULL, &b, 1, &gb), TJ_OK, "%s", tj_last_error());
    test_expect_f32(gb, (const float[]){0, 0, 0}, 3, 0);
}

Test(conv_ops, conv1d_and_conv_transpose_trace_as_convolution_and_replay)
{
    tj_tensor *c1[3] = {conv1d_x(), conv1d_w(), conv1d_b()};
    expect_traces_and_replays(fn_conv1d, NULL, c1, 3, "aten::convolution", "aten::conv1d", 1e-6);
    tj_tensor *t1[3] = {ct1d_x(), ct1d_w(), ct1d_b()};
    expect_traces_and_replays(fn_conv_transpose1d, NULL, t1, 3, "aten::convolution", "aten::conv_transpose1d", 1e-6);
    tj_tensor *t2[2] = {tj_select(ct2d_x(), 0, 0), ct2d_w()};
    expect_traces_and_replays(fn_conv_transpose2d, NULL, t2, 2, "aten::convolution", "aten::conv_transpose2d.input",
                              1e-6);
}

Test(conv_ops, adaptive_avg_pool2d_traces_as_its_kernel_or_mean_and_replays)
{
    tj_tensor *x[1] = {ramp(TJ_FLOAT32, 4, SHAPE(2, 3, 7, 5), 7, 11, 5, 0.25)};
    tj_tensor *x6x4[1] = {ramp(TJ_FLOAT32, 4, SHAPE(2, 3, 6, 4), 7, 11, 5, 0.25)};
    /* uneven windows (gathered), sizes that divide (avg_pool2d, 2 x 2
     * windows), a larger output (windows repeat), 1 x 1 (mean) */
    int64_t uneven[2] = {3, 2}, divides[2] = {3, 2}, larger[2] = {9, 11}, one[2] = {1, 1};
    expect_traces_and_replays(fn_adaptive, uneven, x, 1, "aten::_adaptive_avg_pool2d", "aten::adaptive_avg_pool2d", 0);
    expect_traces_and_replays(fn_adaptive, divides, x6x4, 1, "aten::_adaptive_avg_pool2d", NULL, 0);
    expect_traces_and_replays(fn_adaptive, larger, x, 1, "aten::_adaptive_avg_pool2d", NULL, 0);
    expect_traces_and_replays(fn_adaptive, one, x, 1, "aten::mean.dim", "aten::_adaptive_avg_pool2d", 0);
    tj_tensor *gx[2] = {ramp(TJ_FLOAT32, 4, SHAPE(2, 3, 3, 2), 5, 13, 6, 0.1), x[0]};
    expect_traces_and_replays(fn_adaptive_backward, NULL, gx, 2, "aten::_adaptive_avg_pool2d_backward", NULL, 0);
}
