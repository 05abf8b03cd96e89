/* adaptive_max_pool2d and its backward, upsample_bicubic2d.vec,
 * upsample_nearest1d.vec, upsample_linear1d.vec, upsample_nearest3d.vec,
 * upsample_trilinear3d.vec, _adaptive_avg_pool3d and their backward
 * operators: values against
 * PyTorch 1.13 (nan and tie rules, overlapping
 * windows, both align_corners, float32), the errors (naming the
 * operator and the sizes), make_fx in real and fake mode with and without
 * the core table (adaptive_max_pool2d_backward decomposes to a
 * scatter_add), replay equal to eager, and the gradients through autograd.
 * Gradients are gradchecked in test_gradcheck.c; float32 / float64 values
 * and gradients of more geometries are conformance cases
 * (make_cases_resample.py).
 *
 * References (torch 1.13, float64 unless said):
 *   x = torch.sin(torch.arange(20.)).view(1, 1, 4, 5)
 *   v, i = torch.ops.aten.adaptive_max_pool2d(x, [3, 2])
 *   torch.ops.aten.adaptive_max_pool2d_backward(arange(1., 7.).view(1, 1, 3, 2), x, i)
 *   xb = torch.sin(torch.arange(12.)).view(1, 1, 3, 4)
 *   torch.ops.aten.upsample_bicubic2d.vec(xb, [5, 3], align_corners, None)
 *   torch.ops.aten.upsample_bicubic2d_backward.vec(torch.cos(torch.arange(15.)).view(1, 1, 5, 3),
 *                                                 [5, 3], [1, 1, 3, 4], align_corners, None)
 *   xf = torch.tensor([((k * 5) % 11) / 8 - 0.5 for k in range(12)]).view(1, 1, 3, 4) (float32,
 *   exact) upsampled with scale_factors [2.0, 1.5], align_corners False. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(resample, .init = test_scope_open, .fini = test_scope_close);

#define SHAPE(...) (const int64_t[]){__VA_ARGS__}
#define EXACT12 (const float[]){-0.5, 0.125, 0.75, 0.0, 0.625, -0.125, 0.5, -0.25, 0.375, -0.375, 0.25, -0.5}

/* sin(0 .. n-1) of the given shape, in dt */
static tj_tensor *sines(int ndim, const int64_t *shape, tj_dtype dt)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return tj_sin(tj_reshape(tj_arange(tj_v_int(0), tj_v_int(n), tj_v_int(1), dt), shape, ndim));
}

/* ---- adaptive_max_pool2d ---- */

Test(resample, adaptive_max_pool2d_values_and_indices_match_pytorch)
{
    tj_tensor *x = sines(4, SHAPE(1, 1, 4, 5), TJ_FLOAT64), *v, *i;
    cr_assert_eq(tj_adaptive_max_pool2d(x, SHAPE(3, 2), &v, &i), TJ_OK, "%s", tj_last_error());
    const double want[6] = {0.9092974268256817, 0.9893582466233818, 0.6569865987187891,
                            0.9906073556948704, 0.6502878401571168, 0.9906073556948704};
    test_expect_close(v, want, 6, 0, 0);
    test_expect_i64(i, 6, (const int64_t[]){2, 8, 7, 14, 15, 14});
    /* the same windows through a transposed view of a [1, 1, 5, 4] tensor */
    tj_tensor *xt = tj_transpose(tj_contiguous(tj_transpose(x, 2, 3)), 2, 3), *vt, *it;
    cr_assert_eq(tj_adaptive_max_pool2d(xt, SHAPE(3, 2), &vt, &it), TJ_OK);
    test_expect_identical(vt, v, "strided values");
    test_expect_identical(it, i, "strided indices");
}

Test(resample, adaptive_max_pool2d_last_nan_wins_and_ties_keep_the_first)
{
    const double nan = NAN;
    /* windows [0, 2) and [1, 3) of each row pair: the later nan at (1, 0) wins
     * the first, (0, 1)'s nan the second; equal 5s never replace it */
    tj_tensor *y = test_f64(4, SHAPE(1, 1, 2, 3), (const double[]){1, nan, 2, nan, 5, 5}), *v, *i;
    cr_assert_eq(tj_adaptive_max_pool2d(y, SHAPE(1, 2), &v, &i), TJ_OK);
    test_expect_i64(i, 2, (const int64_t[]){3, 1});
    tj_tensor *t = test_f64(3, SHAPE(1, 2, 3), (const double[]){4, 4, 1, 4, -INFINITY, 4});
    cr_assert_eq(tj_adaptive_max_pool2d(t, SHAPE(1, 1), &v, &i), TJ_OK);
    test_expect_close(v, (const double[]){4}, 1, 0, 0);
    test_expect_i64(i, 1, (const int64_t[]){0});
    tj_tensor *ninf = tj_full(SHAPE(1, 2, 2), 3, tj_v_float(-INFINITY), TJ_FLOAT32);
    cr_assert_eq(tj_adaptive_max_pool2d(ninf, SHAPE(1, 1), &v, &i), TJ_OK);
    test_expect_i64(i, 1, (const int64_t[]){0});
}

Test(resample, adaptive_max_pool2d_backward_adds_at_the_indices)
{
    tj_tensor *x = sines(4, SHAPE(1, 1, 4, 5), TJ_FLOAT64), *v, *i;
    cr_assert_eq(tj_adaptive_max_pool2d(x, SHAPE(3, 2), &v, &i), TJ_OK);
    tj_tensor *g = tj_reshape(tj_arange(tj_v_int(1), tj_v_int(7), tj_v_int(1), TJ_FLOAT64), SHAPE(1, 1, 3, 2), 4);
    const double want[20] = {0, 0, 1, 0, 0, 0, 0, 3, 2, 0, 0, 0, 0, 0, 10, 5, 0, 0, 0, 0};
    test_expect_close(tj_adaptive_max_pool2d_backward(g, x, i), want, 20, 0, 0);
}

Test(resample, adaptive_max_pool2d_errors_name_the_operator_and_sizes)
{
    tj_tensor *x = sines(4, SHAPE(1, 2, 4, 5), TJ_FLOAT64), *v = NULL, *i = NULL;
    cr_expect_eq(tj_adaptive_max_pool2d(tj_reshape(x, SHAPE(40), 1), SHAPE(2, 2), &v, &i), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "aten::adaptive_max_pool2d: adaptive_max_pool2d(): Expected 3D or 4D tensor, "
                                      "but got [40]"), "%s", tj_last_error());
    cr_expect_null(v);
    cr_expect_eq(tj_adaptive_max_pool2d(tj_narrow(x, 1, 0, 0), SHAPE(2, 2), &v, &i), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "sizes [1, 0, 4, 5] with dimension 1 being empty"), "%s", tj_last_error());
    cr_expect_eq(tj_adaptive_max_pool2d(tj_to_copy(x, TJ_INT64), SHAPE(2, 2), &v, &i), TJ_ERR_DTYPE);
    cr_expect(strstr(tj_last_error(), "\"adaptive_max_pool2d\" not implemented for int64"), "%s", tj_last_error());
    cr_expect_eq(tj_adaptive_max_pool2d(x, SHAPE(2, -1), &v, &i), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "output_size [2, -1] has a negative size"), "%s", tj_last_error());

    cr_assert_eq(tj_adaptive_max_pool2d(x, SHAPE(2, 3), &v, &i), TJ_OK);
    tj_tensor *g = tj_ones(SHAPE(1, 2, 2, 3), 4, TJ_FLOAT64);
    test_expect_error(tj_adaptive_max_pool2d_backward(g, x, tj_to_copy(i, TJ_FLOAT64)), TJ_ERR_DTYPE,
                      "aten::adaptive_max_pool2d_backward", "indices must be int64, got float64");
    test_expect_error(tj_adaptive_max_pool2d_backward(g, x, tj_narrow(i, 3, 0, 2)), TJ_ERR_SHAPE,
                      "aten::adaptive_max_pool2d_backward",
                      "indices of size [1, 2, 2, 2] do not match grad_output of size [1, 2, 2, 3]");
    test_expect_error(tj_adaptive_max_pool2d_backward(tj_to_copy(g, TJ_FLOAT32), x, i), TJ_ERR_DTYPE,
                      "aten::adaptive_max_pool2d_backward", "expected dtype float64 for `grad_output`");
    test_expect_error(tj_adaptive_max_pool2d_backward(tj_narrow(g, 2, 0, 0), x, i), TJ_ERR_SHAPE,
                      "aten::adaptive_max_pool2d_backward", "dimension 2 being empty");
    test_expect_error(tj_adaptive_max_pool2d_backward(g, x, tj_add_scalar(i, tj_v_int(20))),
                      TJ_ERR_INDEX, "aten::adaptive_max_pool2d_backward",
                      "out of range for input planes of 4 x 5 elements");
}

/* ---- upsample_bicubic2d ---- */

Test(resample, bicubic_values_and_gradients_match_pytorch)
{
    tj_tensor *xb = sines(4, SHAPE(1, 1, 3, 4), TJ_FLOAT64);
    tj_tensor *gg = tj_cos(tj_reshape(tj_arange(tj_v_int(0), tj_v_int(15), tj_v_int(1), TJ_FLOAT64),
                                      SHAPE(1, 1, 5, 3), 4));
    const double up[2][15] = {
        {0.20764002602191436, 1.1944994870262349, 0.22548789006763087, -0.3601751726967393, 0.29973879270929804,
         0.46886106169664266, -0.7976077410104851, -0.7259064998316188, 0.5343925844006951, 0.18943535977906656,
         -0.4551298873593471, -0.3544663721847624, 1.0883025166556626, -0.015056175773816545, -1.0937619162686563},
        {0.0, 1.0262887436518247, 0.1411200080598672, -0.5421038172100244, 0.08938617858855277, 0.554394878883343,
         -0.7568024953079282, -0.7259064998316188, 0.6569865987187891, 0.0453276417226085, -0.5658817728599242,
         -0.12313931104168324, 0.9893582466233818, -0.07732043773508393, -0.9999902065507035}};
    const double grad[2][12] = {
        {0.45229201088302434, 0.24426924199086417, 0.09480719839398366, -0.26590222458250556, -0.07152011493920654,
         -0.05752774763258327, -0.03877684341091525, 0.018581632619457986, 0.32608373921228956, 0.381823204209316,
         0.3272133003420117, 0.06367251283693033},
        {0.5630337651932859, 0.17346017420180543, 0.17346017420180543, -0.30211910156008875, -0.15620909814389966,
         -0.07861093602308011, -0.07861093602308011, 0.03796440004685801, 0.4296140518744517, 0.3260816256559606,
         0.3260816256559606, 0.06087016484268777}};
    for (int ac = 0; ac < 2; ac++) {
        test_expect_close(tj_upsample_bicubic2d_vec(xb, SHAPE(5, 3), ac, NULL), up[ac], 15, 1e-14, 1e-15);
        test_expect_close(tj_upsample_bicubic2d_backward_vec(gg, SHAPE(5, 3), SHAPE(1, 1, 3, 4), 4, ac, NULL),
                          grad[ac], 12, 1e-14, 1e-15);
    }
}

/* float32 positions, weights and sums round at other steps than PyTorch
 * 1.13's (whose float64 values the kernel matches to 1e-14): each output is
 * within 4 ulps of 1 (the inputs' scale) of PyTorch's float32 result. */
Test(resample, bicubic_float32_is_within_ulps_of_pytorch)
{
    static const uint32_t bits[36] = {
        0xbf2f7c90, 0xbe95a000, 0x3ea450cc, 0x3f43e041, 0x3eeb7ffd, 0xbd1eaa80, 0xbe86eead, 0xbe0d8000, 0x3e540cb9,
        0x3f2ed8d0, 0x3ec57ffc, 0xbde7553f, 0x3ede7ce5, 0x3df30000, 0x3cb9ad36, 0x3f0d0144, 0x3e887ffd, 0xbe6daa9f,
        0x3f43c3ac, 0x3e394000, 0xbe3b5f38, 0x3ec0f3a6, 0x3dcdfff4, 0xbecbd550, 0x3f0a5dac, 0x3c5c0000, 0xbe96639d,
        0x3e84cfa6, 0xbc98002f, 0xbf046aa8, 0x3ed3d558, 0xbdae0000, 0xbeba3d9d, 0x3e3e7b48, 0xbdbe000c, 0xbf176aa8};
    double want[36];
    for (int k = 0; k < 36; k++) want[k] = test_f32_bits(bits[k]);
    tj_tensor *xf = test_f32(4, SHAPE(1, 1, 3, 4), EXACT12);
    test_expect_close(tj_upsample_bicubic2d_vec(xf, NULL, false, (const double[]){2.0, 1.5}), want, 36, 0, 0x1p-21);
}

Test(resample, bicubic_errors_name_the_operator_and_sizes)
{
    tj_tensor *x = sines(4, SHAPE(1, 2, 3, 4), TJ_FLOAT64);
    test_expect_error(tj_upsample_bicubic2d_vec(x, SHAPE(2, 2), false, (const double[]){2, 2}),
                      TJ_ERR_INVALID_ARGUMENT, "aten::upsample_bicubic2d.vec", "exactly one of output_size");
    test_expect_error(tj_upsample_bicubic2d_vec(tj_reshape(x, SHAPE(2, 3, 4), 3), SHAPE(2, 2), false, NULL),
                      TJ_ERR_SHAPE, "aten::upsample_bicubic2d.vec",
                      "output_size [2, 2] has 2 elements for input [2, 3, 4] with 1 spatial dimensions");
    test_expect_error(tj_upsample_bicubic2d_vec(x, SHAPE(0, 2), true, NULL), TJ_ERR_SHAPE,
                      "aten::upsample_bicubic2d.vec", "output (H: 0, W: 2)");
    test_expect_error(tj_upsample_bicubic2d_vec(tj_to_copy(x, TJ_INT64), SHAPE(2, 2), false, NULL), TJ_ERR_DTYPE,
                      "aten::upsample_bicubic2d.vec", "\"compute_indices_weights_cubic\" not implemented for int64");
    test_expect_error(tj_upsample_bicubic2d_backward_vec(tj_ones(SHAPE(1, 2, 2, 3), 4, TJ_FLOAT64), SHAPE(2, 2),
                                                         SHAPE(1, 2, 3, 4), 4, false, NULL),
                      TJ_ERR_SHAPE, "aten::upsample_bicubic2d_backward.vec",
                      "output.size(3) = 2 but got grad_output.size(3) = 3");
}

/* ---- upsample_nearest1d / linear1d / nearest3d / trilinear3d ---- */

/* x1 = torch.sin(torch.arange(10.)).view(1, 2, 5), g1 = torch.cos(torch.arange(14.)).view(1, 2, 7),
 * x3 = torch.sin(torch.arange(12.)).view(1, 1, 2, 2, 3), g3 = torch.cos(torch.arange(18.)).view(1, 1, 3, 3, 2) */
Test(resample, one_and_three_dim_values_and_gradients_match_pytorch)
{
    tj_tensor *x1 = sines(3, SHAPE(1, 2, 5), TJ_FLOAT64), *x3 = sines(5, SHAPE(1, 1, 2, 2, 3), TJ_FLOAT64);
    tj_tensor *g1 = tj_cos(tj_reshape(tj_arange(tj_v_int(0), tj_v_int(14), tj_v_int(1), TJ_FLOAT64),
                                      SHAPE(1, 2, 7), 3));
    tj_tensor *g3 = tj_cos(tj_reshape(tj_arange(tj_v_int(0), tj_v_int(18), tj_v_int(1), TJ_FLOAT64),
                                      SHAPE(1, 1, 3, 3, 2), 5));
    const double s0 = 0.0, s1 = 0.8414709848078965, s2 = 0.9092974268256817, s3 = 0.1411200080598672,
                 s4 = -0.7568024953079282, s5 = -0.9589242746631385, s6 = -0.27941549819892586,
                 s7 = 0.6569865987187891, s8 = 0.9893582466233818, s9 = 0.4121184852417566,
                 s10 = -0.5440211108893698;
    test_expect_close(tj_upsample_nearest1d_vec(x1, SHAPE(7), NULL),
                      (const double[]){s0, s0, s1, s2, s2, s3, s4, s5, s5, s6, s7, s7, s8, s9}, 14, 0, 0);
    test_expect_close(tj_upsample_nearest1d_vec(x1, NULL, (const double[]){2.1}),
                      (const double[]){s0, s0, s0, s1, s1, s2, s2, s3, s3, s4,
                                       s5, s5, s5, s6, s6, s7, s7, s8, s8, s9}, 20, 0, 0);
    test_expect_close(tj_upsample_nearest1d_backward_vec(g1, SHAPE(7), SHAPE(1, 2, 5), 3, NULL),
                      (const double[]){1.5403023058681398, -0.4161468365471424, -1.6436361174640575,
                                       0.28366218546322625, 0.960170286650366, 0.6084022205346911,
                                       -0.9111302618846769, -0.8346458310884016, 0.8438539587324921,
                                       0.9074467814501962}, 10, 1e-15, 1e-15);
    const double linear[2][14] = {
        {0.0, 0.4808405627473694, 0.8608499682415495, 0.9092974268256817, 0.36059927056438557, -0.24370392195490248,
         -0.7568024953079282, -0.9589242746631385, -0.570633545255017, -0.011872041936721514, 0.6569865987187891,
         0.894394918650641, 0.741969777459828, 0.4121184852417566},
        {0.0, 0.5609806565385976, 0.8640797988138249, 0.9092974268256817, 0.3971791476484722, -0.158187493062731,
         -0.7568024953079282, -0.9589242746631385, -0.5059184236869967, 0.032718534106979044, 0.6569865987187891,
         0.8785676973218509, 0.7969449928295069, 0.4121184852417566}};
    const double linear_grad[2][10] = {
        {1.2315581310863457, 0.011496434390978147, -1.2956469130035182, -0.304795623209308, 1.0817397947060345,
         0.6915450969967559, -0.7339502063796912, -1.0981299759040601, 0.48536347498146015, 1.269098478049836},
        {1.1801007686227132, 0.08277031288066483, -1.3465893157373636, -0.24665429026692365, 1.0547243484714413,
         0.7054022430737668, -0.7044201971288604, -1.141306383708661, 0.5655197711470289, 1.1887314343610267}};
    test_expect_close(tj_upsample_nearest3d_vec(x3, SHAPE(3, 3, 2), NULL),
                      (const double[]){s0, s1, s0, s1, s3, s4, s0, s1, s0, s1, s3, s4, s6, s7, s6, s7, s9, s10}, 18,
                      0, 0);
    test_expect_close(tj_upsample_nearest3d_backward_vec(g3, SHAPE(3, 3, 2), SHAPE(1, 1, 2, 2, 3), 5, NULL),
                      (const double[]){1.3985234162946103, -0.606918198273678, 0.0, -1.4927151499400644,
                                       0.288087883451277, 0.0, 0.9805911769403257, 0.14775886859137488, 0.0,
                                       -0.9576594803233847, -0.27516333805159693, 0.0}, 12, 1e-15, 1e-15);
    const double trilinear[2][18] = {
        {0.21036774620197413, 0.8923408163212354, 0.06350356420994625, -0.00802650675155016, -0.08336061778208163,
         -0.9083938298243359, 0.0825263861162385, 0.8993030754842345, 0.06369393516484259, 0.0010535971271908515,
         0.04486148421344666, -0.8971958812298529, -0.045314973969497116, 0.9062653346472336, 0.06388430611973892,
         0.010133701005931882, 0.17308358620897496, -0.8859979326353699},
        {0.0, 0.9092974268256817, 0.0705600040299336, -0.024813423918728372, 0.1411200080598672, -0.9589242746631385,
         -0.13970774909946293, 0.9493278367245317, 0.06845574877567448, -0.015064701941194608, 0.2766192466508119,
         -0.979457240606921, -0.27941549819892586, 0.9893582466233818, 0.06635149352141537, -0.005315979963660844,
         0.4121184852417566, -0.9999902065507035}};
    const double trilinear_grad[2][12] = {
        {0.9267275374495938, 0.35752783396696464, 0.1458559644513001, -0.988220859095672, -0.43863289786042575,
         -0.32767783448560517, 1.016949527032079, 0.5081760223576769, 0.5075785400409514, -1.0089012331573854,
         -0.5564446637919997, -0.6604327582186134},
        {1.2356367165994584, 0.0, 0.19447461926840012, -1.3176278121275626, 0.0, -0.43690377931414026,
         1.3559327027094386, 0.0, 0.6767713867212686, -1.3452016442098476, 0.0, -0.8805770109581514}};
    for (int ac = 0; ac < 2; ac++) {
        test_expect_close(tj_upsample_linear1d_vec(x1, SHAPE(7), ac, NULL), linear[ac], 14, 1e-15, 1e-15);
        test_expect_close(tj_upsample_linear1d_backward_vec(g1, SHAPE(7), SHAPE(1, 2, 5), 3, ac, NULL),
                          linear_grad[ac], 10, 1e-15, 1e-15);
        test_expect_close(tj_upsample_trilinear3d_vec(x3, SHAPE(3, 3, 2), ac, NULL), trilinear[ac], 18, 1e-15,
                          1e-15);
        test_expect_close(tj_upsample_trilinear3d_backward_vec(g3, SHAPE(3, 3, 2), SHAPE(1, 1, 2, 2, 3), 5, ac, NULL),
                          trilinear_grad[ac], 12, 1e-15, 1e-15);
    }
}

/* ATen's 1-d loop blends along the row only: an infinity stays one where
 * its neighbour's weight is not 0, and a zero weight on it gives nan (as
 * torch 1.13's [nan, inf, inf, inf, inf, 3.25, 3.75, 4]); blending a
 * second, identical row with weight 0 (the 2-d kernel of an unsqueezed
 * input) would make every infinity nan. */
Test(resample, linear1d_blends_infinities_as_pytorch)
{
    tj_tensor *x = test_f64(3, SHAPE(1, 1, 4), (const double[]){1, INFINITY, 3, 4});
    tj_tensor *y = tj_upsample_linear1d_vec(x, SHAPE(8), false, NULL);
    const double *v = (const double *)(const void *)tj_tensor_ptr(y);
    cr_expect(isnan(v[0]), "%g", v[0]);
    for (int i = 1; i < 5; i++) cr_expect(isinf(v[i]) && v[i] > 0, "[%d] = %g", i, v[i]);
    test_expect_close(tj_narrow(y, 2, 5, 3), (const double[]){3.25, 3.75, 4}, 3, 0, 0);
}

/* As ATen's two nearest3d kernels: an input contiguous as ChannelsLast3d
 * maps depth row i to i / 2 when the output is twice the input (torch
 * 1.13: [0, 0, 8, 8]), the generic kernel to floor(i / 2.1) ([0, 0, 0, 8]). */
Test(resample, nearest3d_follows_atens_channels_last_kernel)
{
    tj_tensor *x = tj_reshape(tj_arange(tj_v_int(0), tj_v_int(32), tj_v_int(1), TJ_FLOAT32), SHAPE(1, 2, 2, 2, 4), 5);
    tj_tensor *cl = tj_permute(tj_contiguous(tj_permute(x, SHAPE(0, 2, 3, 4, 1), 5)), SHAPE(0, 4, 1, 2, 3), 5);
    const double scales[3] = {2.1, 1, 1};
    test_expect_close(tj_select(tj_select(tj_select(tj_upsample_nearest3d_vec(x, NULL, scales), 4, 0), 3, 0), 1, 0),
                      (const double[]){0, 0, 0, 8}, 4, 0, 0);
    test_expect_close(tj_select(tj_select(tj_select(tj_upsample_nearest3d_vec(cl, NULL, scales), 4, 0), 3, 0), 1, 0),
                      (const double[]){0, 0, 8, 8}, 4, 0, 0);
}

Test(resample, one_and_three_dim_errors_name_the_operator_and_rank)
{
    tj_tensor *x1 = sines(3, SHAPE(1, 2, 5), TJ_FLOAT64), *x3 = sines(5, SHAPE(1, 1, 2, 2, 3), TJ_FLOAT64);
    test_expect_error(tj_upsample_nearest1d_vec(x3, SHAPE(4), NULL), TJ_ERR_SHAPE, "aten::upsample_nearest1d.vec",
                      "output_size [4] has 1 elements for input [1, 1, 2, 2, 3] with 3 spatial dimensions");
    test_expect_error(tj_upsample_linear1d_vec(x1, SHAPE(0), true, NULL), TJ_ERR_SHAPE,
                      "aten::upsample_linear1d.vec",
                      "Input and output sizes should be greater than 0, but got input (W: 5) output (W: 0)");
    test_expect_error(tj_upsample_trilinear3d_vec(x3, SHAPE(2, 0, 2), false, NULL), TJ_ERR_SHAPE,
                      "aten::upsample_trilinear3d.vec", "input (D: 2, H: 2, W: 3) output (D: 2, H: 0, W: 2)");
    test_expect_error(tj_upsample_nearest3d_vec(tj_narrow(x3, 1, 0, 0), SHAPE(2, 2, 2), NULL), TJ_ERR_SHAPE,
                      "aten::upsample_nearest3d.vec", "Non-empty 5D data tensor expected");
    test_expect_error(tj_upsample_trilinear3d_vec(tj_to_copy(x3, TJ_INT64), SHAPE(2, 2, 2), false, NULL),
                      TJ_ERR_DTYPE, "aten::upsample_trilinear3d.vec",
                      "\"compute_indices_weights_linear\" not implemented for int64");
    test_expect_error(tj_upsample_nearest3d_backward_vec(tj_ones(SHAPE(1, 1, 4, 4), 4, TJ_FLOAT64), SHAPE(4, 4, 4),
                                                         SHAPE(1, 1, 2, 2), 4, NULL),
                      TJ_ERR_SHAPE, "aten::upsample_nearest3d_backward.vec",
                      "input_size [1, 1, 2, 2] has 4 elements, expected 5 (the input's [N, C, D, H, W])");
    test_expect_error(tj_upsample_linear1d_backward_vec(tj_ones(SHAPE(1, 2, 6), 3, TJ_FLOAT64), SHAPE(7),
                                                        SHAPE(1, 2, 5), 3, false, NULL),
                      TJ_ERR_SHAPE, "aten::upsample_linear1d_backward.vec",
                      "output.size(2) = 7 but got grad_output.size(2) = 6");
}

/* ---- _adaptive_avg_pool3d ---- */

/* x = torch.sin(torch.arange(24.)).view(1, 1, 2, 3, 4), pooled to [1, 2, 3];
 * its backward for arange(1., 7.).view(1, 1, 1, 2, 3) (windows of 2 x 2 x 2). */
Test(resample, adaptive_avg_pool3d_and_its_backward_match_pytorch)
{
    tj_tensor *x = sines(5, SHAPE(1, 1, 2, 3, 4), TJ_FLOAT64);
    test_expect_close(tj__adaptive_avg_pool3d(x, SHAPE(1, 2, 3)),
                      (const double[]){-0.2799953093601983, 0.026352286580224024, 0.3084717117685844,
                                       0.023256255326641675, -0.2818528509894073, -0.3278277459368135},
                      6, 1e-15, 1e-16);
    tj_tensor *g = tj_reshape(tj_arange(tj_v_int(1), tj_v_int(7), tj_v_int(1), TJ_FLOAT64), SHAPE(1, 1, 1, 2, 3), 5);
    const double plane[12] = {0.125, 0.375, 0.625, 0.375, 0.625, 1.5, 2.0, 1.125, 0.5, 1.125, 1.375, 0.75};
    double want[24];
    for (int i = 0; i < 24; i++) want[i] = plane[i % 12];
    test_expect_close(tj__adaptive_avg_pool3d_backward(g, x), want, 24, 0, 0);
    /* a strided (transposed) self pools as its contiguous copy */
    tj_tensor *xt = tj_transpose(tj_contiguous(tj_transpose(x, 3, 4)), 3, 4);
    test_expect_identical(tj__adaptive_avg_pool3d(xt, SHAPE(1, 2, 3)), tj__adaptive_avg_pool3d(x, SHAPE(1, 2, 3)),
                          "strided self");
}

Test(resample, adaptive_avg_pool3d_errors_name_the_operator_and_sizes)
{
    tj_tensor *x = sines(5, SHAPE(1, 2, 2, 3, 4), TJ_FLOAT64);
    test_expect_error(tj__adaptive_avg_pool3d(tj_reshape(x, SHAPE(2, 24), 2), SHAPE(1, 1, 1)), TJ_ERR_SHAPE,
                      "aten::_adaptive_avg_pool3d", "Expected 4D or 5D tensor, but got [2, 24]");
    test_expect_error(tj__adaptive_avg_pool3d(x, SHAPE(1, -2, 1)), TJ_ERR_INVALID_ARGUMENT,
                      "aten::_adaptive_avg_pool3d", "received {1, -2, 1}");
    test_expect_error(tj__adaptive_avg_pool3d(tj_narrow(x, 2, 0, 0), SHAPE(1, 1, 1)), TJ_ERR_SHAPE,
                      "aten::_adaptive_avg_pool3d", "sizes [1, 2, 0, 3, 4] with dimension 2 being empty");
    test_expect_error(tj__adaptive_avg_pool3d(tj_to_copy(x, TJ_INT64), SHAPE(1, 1, 1)), TJ_ERR_DTYPE,
                      "aten::_adaptive_avg_pool3d", "not implemented for int64");
    tj_tensor *g = tj_ones(SHAPE(1, 2, 1, 1, 2), 5, TJ_FLOAT64);
    test_expect_error(tj__adaptive_avg_pool3d_backward(tj_to_copy(g, TJ_FLOAT32), x), TJ_ERR_DTYPE,
                      "aten::_adaptive_avg_pool3d_backward", "expected dtype float64 for `grad_output`");
    test_expect_error(tj__adaptive_avg_pool3d_backward(tj_ones(SHAPE(1, 3, 1, 1, 2), 5, TJ_FLOAT64), x), TJ_ERR_SHAPE,
                      "aten::_adaptive_avg_pool3d_backward",
                      "grad_output of size [1, 3, 1, 1, 2] does not match self of size [1, 2, 2, 3, 4]");
    test_expect_error(tj__adaptive_avg_pool3d_backward(tj_narrow(g, 4, 0, 0), x), TJ_ERR_SHAPE,
                      "aten::_adaptive_avg_pool3d_backward", "dimension 4 being empty");
}

/* ---- tracing and replay ---- */

static tj_status fn_pool(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    *n_out = 2;
    return tj_adaptive_max_pool2d(in[0], SHAPE(3, 4), &out[0], &out[1]);
}

/* The gradient of <w, adaptive_max_pool2d(x)> for x. */
static tj_status fn_pool_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor *y[2];
    int two;
    tj_status st = fn_pool(ctx, in, n, y, &two);
    if (st != TJ_OK) return st;
    tj_tensor *s = tj_sum(tj_mul(y[0], in[1]), -1);
    *n_out = 1;
    return s ? tj_autograd_grad(&s, 1, NULL, &in[0], 1, out) : tj_last_status();
}

Test(resample, adaptive_max_pool2d_and_its_gradient_trace_and_replay)
{
    tj_tensor *x = test_random_f32(4, SHAPE(2, 3, 7, 9), 1);
    test_expect_traced(fn_pool, &x, 1, 2, (const char *[]){"aten.adaptive_max_pool2d.default"}, 1, NULL, 0);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *in[2] = {x, test_random_f32(4, SHAPE(2, 3, 3, 4), 2)};
    test_expect_traced(fn_pool_grad, in, 2, 1, (const char *[]){"aten.adaptive_max_pool2d_backward.default"}, 1,
                       NULL, 0);
}

static tj_status fn_bicubic(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_upsample_bicubic2d_vec(in[0], NULL, false, (const double[]){2.0, 1.5});
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_status fn_bicubic_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor *y[1];
    int one;
    tj_status st = fn_bicubic(ctx, in, n, y, &one);
    if (st != TJ_OK) return st;
    tj_tensor *s = tj_sum(tj_mul(y[0], in[1]), -1);
    *n_out = 1;
    return s ? tj_autograd_grad(&s, 1, NULL, &in[0], 1, out) : tj_last_status();
}

Test(resample, bicubic_and_its_gradient_trace_and_replay)
{
    tj_tensor *x = test_random_f32(4, SHAPE(2, 3, 5, 6), 3);
    test_expect_traced(fn_bicubic, &x, 1, 1, (const char *[]){"aten.upsample_bicubic2d.vec"}, 1, NULL, 0);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *in[2] = {x, test_random_f32(4, SHAPE(2, 3, 10, 9), 4)};
    test_expect_traced(fn_bicubic_grad, in, 2, 1, (const char *[]){"aten.upsample_bicubic2d_backward.vec"}, 1, NULL,
                       0);
}

static tj_status fn_linear_1d_3d(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_upsample_linear1d_vec(in[0], NULL, true, (const double[]){1.7});
    out[1] = tj_upsample_trilinear3d_vec(in[1], SHAPE(3, 5, 4), false, NULL);
    out[2] = tj_upsample_nearest1d_vec(in[0], SHAPE(9), NULL);
    out[3] = tj_upsample_nearest3d_vec(in[1], NULL, (const double[]){2.0, 1.5, 0.5});
    *n_out = 4;
    return out[0] && out[1] && out[2] && out[3] ? TJ_OK : tj_last_status();
}

/* The gradients of the four sums of squares for the 1-d and the 3-d input. */
static tj_status fn_linear_1d_3d_grads(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor *y[4];
    int four;
    tj_status st = fn_linear_1d_3d(ctx, in, n, y, &four);
    if (st != TJ_OK) return st;
    tj_tensor *s = tj_add(tj_add(tj_sum(tj_mul(y[0], y[0]), -1), tj_sum(tj_mul(y[1], y[1]), -1)),
                          tj_add(tj_sum(tj_mul(y[2], y[2]), -1), tj_sum(tj_mul(y[3], y[3]), -1)));
    *n_out = 2;
    return s ? tj_autograd_grad(&s, 1, NULL, (tj_tensor *[]){in[0], in[1]}, 2, out) : tj_last_status();
}

Test(resample, one_and_three_dim_operators_and_gradients_trace_and_replay)
{
    tj_tensor *in[2] = {test_random_f32(3, SHAPE(2, 3, 6), 5), test_random_f32(5, SHAPE(1, 2, 2, 3, 4), 6)};
    test_expect_traced(fn_linear_1d_3d, in, 2, 4,
                       (const char *[]){"aten.upsample_linear1d.vec", "aten.upsample_trilinear3d.vec",
                                        "aten.upsample_nearest1d.vec", "aten.upsample_nearest3d.vec"},
                       4, NULL, 0);
    tj_tensor_set_requires_grad(in[0], true);
    tj_tensor_set_requires_grad(in[1], true);
    test_expect_traced(fn_linear_1d_3d_grads, in, 2, 2,
                       (const char *[]){"aten.upsample_linear1d_backward.vec", "aten.upsample_trilinear3d_backward.vec",
                                        "aten.upsample_nearest1d_backward.vec",
                                        "aten.upsample_nearest3d_backward.vec"},
                       4, NULL, 0);
}

static tj_status fn_avg3d(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj__adaptive_avg_pool3d(in[0], SHAPE(3, 2, 4));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_status fn_avg3d_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor *y[1];
    int one;
    tj_status st = fn_avg3d(ctx, in, n, y, &one);
    if (st != TJ_OK) return st;
    tj_tensor *s = tj_sum(tj_mul(y[0], in[1]), -1);
    *n_out = 1;
    return s ? tj_autograd_grad(&s, 1, NULL, &in[0], 1, out) : tj_last_status();
}

Test(resample, adaptive_avg_pool3d_and_its_gradient_trace_and_replay)
{
    tj_tensor *x = test_random_f32(5, SHAPE(2, 3, 5, 4, 7), 7);
    test_expect_traced(fn_avg3d, &x, 1, 1, (const char *[]){"aten._adaptive_avg_pool3d.default"}, 1, NULL, 0);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *in[2] = {x, test_random_f32(5, SHAPE(2, 3, 3, 2, 4), 8)};
    test_expect_traced(fn_avg3d_grad, in, 2, 1, (const char *[]){"aten._adaptive_avg_pool3d_backward.default"}, 1,
                       NULL, 0);
}
