/* 3-D convolution: conv3d and conv_transpose3d (implicit composites,
 * recorded as aten::convolution) on the vol2col + GEMM kernels of
 * kernels/conv3d.h, with convolution_backward in 3-D. Values against
 * PyTorch 1.13, unbatched inputs, the errors (PyTorch's messages, naming
 * the sizes), make_fx in real and fake mode with and without the core
 * table, and replay. Gradients are gradchecked in test_gradcheck.c; the
 * conformance cases (tests/conformance/make_cases_vision.py) cover float32
 * and float64 values of convolution and convolution_backward.
 *
 * Reference values: PyTorch 1.13 on the ramp inputs below (integer ramps:
 * the sums are exact in float32), printed with repr() of each element:
 *     def ramp(shape, mul, mod, off, dtype=torch.float32):
 *         n = math.prod(shape)
 *         return torch.tensor([((i * mul) % mod - off) for i in range(n)],
 *                             dtype=torch.float64).reshape(shape).to(dtype)
 *     x = ramp([2,4,3,4,5], 3, 7, 3); w = ramp([6,2,2,3,2], 1, 5, 2)
 *     b = torch.tensor([0.5, -1, 0, 2, -0.5, 1])
 *     F.conv3d(x, w, b, stride=[1,2,2], padding=[1,0,1], dilation=[2,1,1], groups=2)
 *     wt = ramp([4,3,2,2,2], 2, 5, 2)
 *     y = F.conv_transpose3d(x[:1], wt, None, stride=[2,1,1], padding=[0,1,0], output_padding=[1,0,0],
 *                            dilation=[1,1,2]); y.abs().sum(), y.flatten()[:8] */
#include <criterion/criterion.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(conv3d, .init = test_scope_open, .fini = test_scope_close);

#define SHAPE(...) (const int64_t[]){__VA_ARGS__}

static tj_tensor *ramp(tj_dtype dt, int ndim, const int64_t *shape, int64_t mul, int64_t mod, double off)
{
    tj_tensor *t = tj_tensor_empty(dt, ndim, shape);
    cr_assert_not_null(t, "%s", tj_last_error());
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) {
        double v = (double)(i * mul % mod) - off;
        if (dt == TJ_FLOAT32) ((float *)tj_tensor_data(t))[i] = (float)v;
        else ((double *)tj_tensor_data(t))[i] = v;
    }
    return t;
}

static tj_tensor *x_of(tj_dtype dt) { return ramp(dt, 5, SHAPE(2, 4, 3, 4, 5), 3, 7, 3); }
static tj_tensor *w_of(tj_dtype dt) { return ramp(dt, 5, SHAPE(6, 2, 2, 3, 2), 1, 5, 2); }
static tj_tensor *b_of(tj_dtype dt)
{
    tj_tensor *b = test_f32(1, SHAPE(6), (const float[]){0.5f, -1, 0, 2, -0.5f, 1});
    return dt == TJ_FLOAT32 ? b : tj_to_copy(b, (int)dt);
}
static tj_tensor *wt_of(tj_dtype dt) { return ramp(dt, 5, SHAPE(4, 3, 2, 2, 2), 2, 5, 2); }

static const int64_t conv_stride[3] = {1, 2, 2}, conv_pad[3] = {1, 0, 1}, conv_dil[3] = {2, 1, 1};

/* F.conv3d(x, w, b, ...) above: [2, 6, 3, 1, 3] */
static const double conv_want[108] = {
    0.5,   -3.5, -10.5, 4.5,  -13.5, 2.5,   -5.5,  10.5,  -8.5,  -7.0,  9.0,   -10.0, 22.0,  -6.0,  -12.0, 2.0,
    3.0,   2.0,  3.0,   4.0,  3.0,   2.0,   19.0,  -9.0,  2.0,   -7.0,  15.0,  4.0,   6.0,   0.0,   6.0,   -3.0,
    17.0,  -7.0, 12.0,  -4.0, -9.5,  9.5,   -6.5,  -2.5,  -14.5, 11.5,  -5.5,  -4.5,  9.5,   -4.0,  -3.0,  11.0,
    -2.0,  -12.0, -10.0, 0.0, -2.0,  7.0,   -2.5,  -10.5, 10.5,  -9.5,  2.5,   4.5,   -2.5,  -8.5,  0.5,   -4.0,
    -10.0, -1.0, -11.0, -12.0, 3.0,  1.0,   2.0,   -6.0,  2.0,   3.0,   -5.0,  15.0,  -9.0,  -16.0, 2.0,   15.0,
    -5.0,  4.0,  0.0,   -6.0, 7.0,   17.0,  -12.0, 15.0,  -4.0,  8.0,   12.5,  -6.5,  5.5,   -4.5,  11.5,  -11.5,
    -1.5,  9.5,  9.5,   0.0,  11.0,  11.0,  -2.0,  -10.0, 13.0,  -4.0,  7.0,   -5.0};

Test(conv3d, stride_padding_dilation_groups_and_bias_match_pytorch_in_both_dtypes)
{
    for (int d = 0; d < 2; d++) {
        tj_dtype dt = d ? TJ_FLOAT64 : TJ_FLOAT32;
        tj_tensor *y = tj_conv3d(x_of(dt), w_of(dt), b_of(dt), conv_stride, conv_pad, conv_dil, 2);
        test_assert_dtype_shape(y, dt, 5, SHAPE(2, 6, 3, 1, 3));
        test_expect_close(y, conv_want, 108, 0, 0);
    }
}

Test(conv3d, an_unbatched_input_is_the_first_sample_without_its_batch_dim)
{
    tj_tensor *y = tj_conv3d(tj_select(x_of(TJ_FLOAT32), 0, 0), w_of(TJ_FLOAT32), b_of(TJ_FLOAT32), conv_stride,
                             conv_pad, conv_dil, 2);
    test_assert_dtype_shape(y, TJ_FLOAT32, 4, SHAPE(6, 3, 1, 3));
    test_expect_close(y, conv_want, 54, 0, 0);
}

Test(conv3d, conv_transpose3d_with_output_padding_and_dilation_matches_pytorch)
{
    tj_tensor *x = tj_narrow(x_of(TJ_FLOAT64), 0, 0, 1);
    tj_tensor *y = tj_conv_transpose3d(x, wt_of(TJ_FLOAT64), NULL, SHAPE(2, 1, 1), SHAPE(0, 1, 0), SHAPE(1, 0, 0), 1,
                                       SHAPE(1, 1, 2));
    test_assert_dtype_shape(y, TJ_FLOAT64, 5, SHAPE(1, 3, 7, 3, 7));
    test_expect_close(tj_narrow(tj_flatten(y, 0, -1), 0, 0, 8),
                      (const double[]){-4.0, -1.0, 16.0, -18.0, 4.0, 1.0, -8.0, -10.0}, 8, 0, 0);
    cr_expect_eq(tj_tensor_item_at(tj_sum(tj_abs(y), -1), 0), 3355.0);
}

/* The transposed convolution is the input gradient of the plain one: the
 * same kernel operation (mm_fold) on both paths. */
Test(conv3d, conv_transpose3d_is_the_input_gradient_of_conv3d)
{
    tj_tensor *x = x_of(TJ_FLOAT64), *w = w_of(TJ_FLOAT64);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *y = tj_conv3d(x, w, NULL, conv_stride, conv_pad, conv_dil, 2);
    tj_tensor *gy = ramp(TJ_FLOAT64, 5, tj_tensor_shape(y), 5, 11, 5);
    tj_tensor *gx = test_grad1(x, y, gy);
    tj_tensor *t = tj_conv_transpose3d(gy, w, NULL, conv_stride, conv_pad, SHAPE(0, 1, 1), 2, conv_dil);
    test_expect_same(t, gx, "conv_transpose3d of the gradient");
}

Test(conv3d, errors_name_the_operator_and_sizes)
{
    tj_tensor *x = x_of(TJ_FLOAT32), *w = w_of(TJ_FLOAT32);
    test_expect_error(tj_conv3d(tj_select(tj_select(x, 0, 0), 0, 0), w, NULL, conv_stride, conv_pad, conv_dil, 2),
                      TJ_ERR_SHAPE, "aten::conv3d", "Expected 4D (unbatched) or 5D (batched) input to conv3d");
    test_expect_error(tj_conv3d(x, w, NULL, conv_stride, conv_pad, conv_dil, 1), TJ_ERR_SHAPE, "aten::convolution",
                      "expected input[2, 4, 3, 4, 5] to have 2 channels, but got 4 channels");
    test_expect_error(tj_conv3d(x, ramp(TJ_FLOAT32, 5, SHAPE(6, 2, 2, 5, 2), 1, 5, 2), NULL, SHAPE(1, 1, 1),
                                SHAPE(0, 0, 0), SHAPE(1, 1, 1), 2),
                      TJ_ERR_SHAPE, "aten::convolution",
                      "calculated padded input size per channel: (3 x 4 x 5). Kernel size: (2 x 5 x 2)");
    test_expect_error(tj_conv3d(x, tj_zeros(SHAPE(6, 2, 2, 0, 2), 5, TJ_FLOAT32), NULL, conv_stride, conv_pad,
                                conv_dil, 2),
                      TJ_ERR_SHAPE, "aten::convolution", "kernel size should be greater than zero, but got kT: 2 kH: 0 kW: 2");
    test_expect_error(tj_conv3d(x, w_of(TJ_FLOAT64), NULL, conv_stride, conv_pad, conv_dil, 2), TJ_ERR_DTYPE,
                      "aten::convolution", "input type (float32), weight type (float64)");
    test_expect_error(tj_conv3d(x, w, NULL, SHAPE(1, 0, 1), conv_pad, conv_dil, 2), TJ_ERR_INVALID_ARGUMENT,
                      "aten::convolution", "non-positive stride");
    test_expect_error(tj_convolution(tj_unsqueeze(x, 0), tj_unsqueeze(w, 0), NULL, SHAPE(1, 1), SHAPE(0, 0),
                                     SHAPE(1, 1), false, NULL, 1),
                      TJ_ERR_SHAPE, "aten::convolution", "weight should have three to five dimensions");
}

static tj_status fn_conv3d(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_conv3d(in[0], in[1], in[2], conv_stride, conv_pad, conv_dil, 2);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_status fn_conv_transpose3d(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_conv_transpose3d(in[0], in[1], NULL, SHAPE(2, 1, 1), SHAPE(0, 1, 0), SHAPE(1, 0, 0), 1,
                                 SHAPE(1, 1, 2));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* The training step's gradients: convolution_backward in 3-D. */
static tj_status fn_conv3d_grads(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_sum(tj_mul(tj_conv3d(in[0], in[1], in[2], conv_stride, conv_pad, conv_dil, 2), in[3]), -1);
    tj_tensor *leaves[3] = {in[0], in[1], in[2]};
    *n_out = 3;
    return y ? tj_autograd_grad(&y, 1, NULL, leaves, 3, out) : tj_last_status();
}

Test(conv3d, traces_as_convolution_and_replays_with_and_without_the_core_table)
{
    tj_tensor *in[3] = {x_of(TJ_FLOAT32), w_of(TJ_FLOAT32), b_of(TJ_FLOAT32)};
    test_expect_traced(fn_conv3d, in, 3, 1, (const char *[]){"aten.convolution.default"}, 1, "aten.conv3d", 1e-6);
    /* x [1, 4, 3, 2, 5]: a result of 147 elements */
    tj_tensor *tin[2] = {tj_narrow(tj_narrow(x_of(TJ_FLOAT32), 0, 0, 1), 3, 0, 2), wt_of(TJ_FLOAT32)};
    test_expect_traced(fn_conv_transpose3d, tin, 2, 1, (const char *[]){"aten.convolution.default"}, 1,
                       "aten.conv_transpose3d", 1e-6);
}

Test(conv3d, gradients_trace_as_convolution_backward_and_replay)
{
    /* one sample: an input gradient of 240 elements */
    tj_tensor *gin[4] = {tj_contiguous(tj_narrow(x_of(TJ_FLOAT64), 0, 0, 1)), w_of(TJ_FLOAT64), b_of(TJ_FLOAT64),
                         ramp(TJ_FLOAT64, 5, SHAPE(1, 6, 3, 1, 3), 5, 11, 5)};
    for (int i = 0; i < 3; i++) tj_tensor_set_requires_grad(gin[i], true);
    test_expect_traced(fn_conv3d_grads, gin, 4, 3, (const char *[]){"aten.convolution_backward.default"}, 1, NULL,
                       1e-12);
}
