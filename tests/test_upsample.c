/* upsample_nearest2d.vec, upsample_bilinear2d.vec, their backward
 * operators, pixel_shuffle and pixel_unshuffle: values and gradients
 * against PyTorch 1.13 (output sizes given and scale factors given,
 * align_corners true and false, non-integer scales, downsampling, size-1
 * inputs and outputs), strided inputs, errors (each message names the
 * operator and the offending sizes), make_fx with and without the core
 * table, replay of a traced training step, float lists in graph text.
 *
 * Reference values: PyTorch 1.13 (/usr/bin/python3), float64 unless said,
 * on x = val(shape) (element i in row-major order ((i * 7) % 19) / 4 - 2)
 * with the upstream gradient gy = gval(y.shape) (((i * 5) % 13) / 2 - 3):
 *     x = val(shape).requires_grad_()
 *     y = torch.ops.aten.upsample_bilinear2d.vec(x, size, align, scales)  # or upsample_nearest2d.vec(x, size, scales)
 *     gx, = torch.autograd.grad(y, x, gval(y.shape))
 *     y = torch.ops.aten.pixel_shuffle(val([1, 8, 2, 3]), 2)
 * printed with ", ".join(repr(v) for v in t.flatten().tolist()); the
 * float32 ones with x = val(shape).float(). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(upsample, .init = test_scope_open, .fini = test_scope_close);

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define SCALES(...) ((const double[]){__VA_ARGS__})

/* near_scale2: nearest of [1, 2, 3, 4], output_size None, scale_factors [2.0, 2.0], align_corners None -> [1, 2, 6, 8] */
static const double near_scale2_y[96] = {-2.0, -2.0, -0.25, -0.25, 1.5, 1.5, -1.5, -1.5, -2.0, -2.0, -0.25, -0.25, 1.5, 1.5, -1.5, -1.5, 0.25, 0.25, 2.0, 2.0, -1.0, -1.0, 0.75, 0.75, 0.25, 0.25, 2.0, 2.0, -1.0, -1.0, 0.75, 0.75, 2.5, 2.5, -0.5, -0.5, 1.25, 1.25, -1.75, -1.75, 2.5, 2.5, -0.5, -0.5, 1.25, 1.25, -1.75, -1.75, 0.0, 0.0, 1.75, 1.75, -1.25, -1.25, 0.5, 0.5, 0.0, 0.0, 1.75, 1.75, -1.25, -1.25, 0.5, 0.5, 2.25, 2.25, -0.75, -0.75, 1.0, 1.0, -2.0, -2.0, 2.25, 2.25, -0.75, -0.75, 1.0, 1.0, -2.0, -2.0, -0.25, -0.25, 1.5, 1.5, -1.5, -1.5, 0.25, 0.25, -0.25, -0.25, 1.5, 1.5, -1.5, -1.5, 0.25, 0.25};
static const double near_scale2_gx[24] = {-6.0, 1.0, 1.5, 2.0, -2.0, -1.5, -1.0, 6.0, 2.0, -4.0, 3.0, -3.0, 6.0, 0.0, -6.0, 1.0, -3.0, 4.0, -2.0, -1.5, 1.0, 1.5, 2.0, -4.0};
/* near_size57: nearest of [1, 1, 3, 4], output_size [5, 7], scale_factors None, align_corners None -> [1, 1, 5, 7] */
static const double near_size57_y[35] = {-2.0, -2.0, -0.25, -0.25, 1.5, 1.5, -1.5, -2.0, -2.0, -0.25, -0.25, 1.5, 1.5, -1.5, 0.25, 0.25, 2.0, 2.0, -1.0, -1.0, 0.75, 0.25, 0.25, 2.0, 2.0, -1.0, -1.0, 0.75, 2.5, 2.5, -0.5, -0.5, 1.25, 1.25, -1.75};
static const double near_size57_gx[12] = {-4.5, 2.5, 3.0, -4.0, -1.0, -0.5, 0.0, 1.0, 0.0, 3.5, 0.5, -2.5};
/* near_down: nearest of [1, 1, 4, 4], output_size None, scale_factors [1.5, 0.5], align_corners None -> [1, 1, 6, 2] */
static const double near_down_y[12] = {-2.0, 1.5, -2.0, 1.5, 0.25, -1.0, 2.5, 1.25, 2.5, 1.25, 0.0, -1.25};
static const double near_down_gx[16] = {-1.0, 0.0, -2.5, 0.0, 0.5, 0.0, 3.0, 0.0, -3.5, 0.0, 1.5, 0.0, 2.5, 0.0, -1.5, 0.0};
/* near_size1: nearest of [1, 1, 1, 3], output_size [2, 5], scale_factors None, align_corners None -> [1, 1, 2, 5] */
static const double near_size1_y[10] = {-2.0, -2.0, -0.25, -0.25, 1.5, -2.0, -2.0, -0.25, -0.25, 1.5};
static const double near_size1_gx[3] = {-1.5, -1.0, 0.5};
/* near_shortcut: nearest of [1, 1, 3, 3], scale_factors [2.2, 1.2] -> [1, 1, 6, 3]: rows i / 2 and columns i, the output being twice and once the input's size (ATen's nearest_idx), not floor(i / 2.2) and floor(i / 1.2) */
static const double near_shortcut_y[18] = {-2.0, -0.25, 1.5, -2.0, -0.25, 1.5, -1.5, 0.25, 2.0, -1.5, 0.25, 2.0, -1.0, 0.75, 2.5, -1.0, 0.75, 2.5};
static const double near_shortcut_gx[9] = {-5.0, 0.0, 5.0, -1.0, 4.0, -4.0, 3.0, -5.0, 0.0};
/* bil_scale2: bilinear of [1, 1, 3, 3], output_size None, scale_factors [2.0, 2.0], align_corners False -> [1, 1, 6, 6] */
static const double bil_scale2_y[36] = {-2.0, -1.5625, -0.6875, 0.1875, 1.0625, 1.5, -1.875, -1.4375, -0.5625, 0.3125, 1.1875, 1.625, -1.625, -1.1875, -0.3125, 0.5625, 1.4375, 1.875, -1.375, -0.9375, -0.0625, 0.8125, 1.6875, 2.125, -1.125, -0.6875, 0.1875, 1.0625, 1.9375, 2.375, -1.0, -0.5625, 0.3125, 1.1875, 2.0625, 2.5};
static const double bil_scale2_gx[9] = {-3.59375, -0.6875, 3.03125, 0.4375, -1.53125, 0.96875, 2.03125, -1.15625, -1.5};
/* bil_align: bilinear of [1, 1, 3, 3], output_size [5, 4], scale_factors None, align_corners True -> [1, 1, 5, 4] */
static const double bil_align_y[20] = {-2.0, -0.8333333333333334, 0.3333333333333332, 1.5, -1.75, -0.5833333333333334, 0.5833333333333333, 1.75, -1.5, -0.33333333333333337, 0.8333333333333333, 2.0, -1.25, -0.08333333333333338, 1.0833333333333333, 2.25, -1.0, 0.16666666666666663, 1.3333333333333333, 2.5};
static const double bil_align_gx[9] = {-2.4166666666666665, 1.6666666666666665, -0.75, -1.75, 1.1666666666666667, 0.8333333333333333, -1.8333333333333333, 1.1666666666666667, 0.9166666666666665};
/* bil_frac: bilinear of [1, 2, 4, 5], output_size None, scale_factors [1.7, 0.6], align_corners False -> [1, 2, 6, 3] */
static const double bil_frac_y[36] = {-1.4166666666666665, 1.5, -0.3333333333333328, -0.4926470588235294, 1.2132352941176472, -0.014705882352941183, 0.9289215686274511, 0.7720588235294117, 0.47549019607843057, 0.5808823529411764, 0.33088235294117646, 0.08088235294117557, 0.37254901960784303, -0.11029411764705876, -0.36029411764705965, 0.8627450980392158, -0.5514705882352942, -0.801470588235295, 0.33333333333333337, -1.5, 1.4166666666666672, 0.046568627450980435, 0.02941176470588236, 1.1299019607843144, -0.39460784313725494, 2.382352941176471, 0.6887254901960789, -0.8357843137254901, 2.0808823529411766, 0.24754901960784365, -0.8112745098039217, 1.6397058823529411, -0.19362745098039158, 0.610294117647059, 1.1985294117647058, -0.634803921568627};
static const double bil_frac_gx[40] = {-2.8431372549019605, -1.4215686274509804, -0.1470588235294119, 1.2598039215686265, 2.519607843137256, -1.156862745098039, -0.5784313725490198, 2.75, -0.6470588235294111, -1.2941176470588243, 0.9215686274509802, 0.4607843137254902, -1.6911764705882355, -0.3774509803921566, -0.754901960784314, 1.0784313725490196, 0.5392156862745099, -1.9117647058823528, 0.09803921568627444, 0.19607843137254916, 0.9411764705882355, 0.47058823529411764, -0.9705882352941178, 0.985294117647058, 1.9705882352941186, -1.7549019607843137, -0.877450980392157, 1.8529411764705883, -0.9460784313725482, -1.8921568627450989, 0.3627450980392156, 0.18137254901960784, 3.0147058823529416, -0.6568627450980387, -1.313725490196079, 0.7843137254901961, 0.3921568627450981, -1.3970588235294121, -0.049019607843137185, -0.0980392156862745};
/* bil_size1_in: bilinear of [1, 1, 1, 1], output_size [3, 2], scale_factors None, align_corners False -> [1, 1, 3, 2] */
static const double bil_size1_in_y[6] = {-2.0, -2.0, -2.0, -2.0, -2.0, -2.0};
static const double bil_size1_in_gx[1] = {-2.220446049250313e-16};
/* bil_out1_align: bilinear of [1, 1, 3, 4], output_size [1, 1], scale_factors None, align_corners True -> [1, 1, 1, 1] */
static const double bil_out1_align_y[1] = {-2.0};
static const double bil_out1_align_gx[12] = {-3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
/* bil_size_noalign: bilinear of [2, 1, 3, 2], output_size [4, 5], scale_factors None, align_corners False -> [2, 1, 4, 5] */
static const double bil_size_noalign_y[40] = {-2.0, -1.8249999999999997, -1.125, -0.42499999999999977, -0.25, 0.1875, 0.065625, -0.421875, -0.9093750000000002, -1.03125, 1.03125, 0.909375, 0.421875, -0.06562500000000027, -0.18750000000000006, 0.25, 0.42500000000000004, 1.125, 1.8250000000000002, 2.0, -1.0, -0.8249999999999998, -0.125, 0.5750000000000002, 0.75, 1.1875, 1.065625, 0.578125, 0.09062499999999984, -0.031250000000000014, 2.03125, 1.73125, 0.53125, -0.6687500000000004, -0.9687499999999999, 1.25, 0.9499999999999998, -0.25, -1.4500000000000006, -1.75};
static const double bil_size_noalign_gx[12] = {-1.6749999999999996, -0.9500000000000004, 2.4687500000000004, -2.7812500000000004, 1.2562499999999999, 0.6812500000000005, -1.15625, 0.21875000000000006, 0.6874999999999997, -1.3124999999999998, 2.6687499999999997, -3.1062499999999997};
/* f32_bil: float32 bilinear of [1, 2, 3, 5], scale_factors [1.3, 2.5], align_corners False -> [1, 2, 3, 12] (float32 values) */
static const float f32_bil_y[72] = {-2.0, -1.8249999284744263, -1.125, -0.4249999523162842, 0.27500003576278687, 0.9750000834465027, 1.1999999284744263, -2.086162567138672e-07, -1.2000000476837158, -0.9749999046325684, -0.2749999165534973, 0.25, 2.0, 1.6999999284744263, 0.5, -0.7000001072883606, -0.47499996423721313, 0.22500008344650269, 0.9250000715255737, 1.6250001192092896, 2.325000047683716, 1.5999997854232788, 0.39999985694885254, -0.5, 1.25, 0.9499999284744263, -0.25, -1.4500000476837158, -1.225000023841858, -0.5249999165534973, 0.17500007152557373, 0.8750001192092896, 1.5750000476837158, 0.8499997854232788, -0.35000014305114746, -1.25, 0.5, 0.675000011920929, 1.375, 2.075000047683716, 1.3499999046325684, 0.14999985694885254, -0.5749999284744263, 0.12500010430812836, 0.8250000476837158, 0.09999978542327881, -1.1000001430511475, -2.0, -0.25, -0.07499998807907104, 0.625, 1.3250000476837158, 0.5999999642372131, -0.6000001430511475, -1.3249999284744263, -0.6249998807907104, 0.07500006258487701, 0.7750000953674316, 1.4750001430511475, 2.0, -1.0, -0.824999988079071, -0.125, 0.5750000476837158, 1.274999976158142, 1.9750001430511475, 2.1999998092651367, 0.9999998211860657, -0.2000001072883606, 0.02500012516975403, 0.7250000834465027, 1.25};
/* f32_near: float32 nearest of [1, 2, 3, 5], output_size [7, 3] -> [1, 2, 7, 3] */
static const float f32_near_y[42] = {-2.0, -0.25, -1.5, -2.0, -0.25, -1.5, -2.0, -0.25, -1.5, 2.0, -1.0, 2.5, 2.0, -1.0, 2.5, 1.25, -1.75, 1.75, 1.25, -1.75, 1.75, 0.5, 2.25, 1.0, 0.5, 2.25, 1.0, 0.5, 2.25, 1.0, -0.25, 1.5, 0.25, -0.25, 1.5, 0.25, -1.0, 0.75, -0.5, -1.0, 0.75, -0.5};
/* f32_bil_down: float32 bilinear of [1, 1, 4, 5] to output_size [3, 7], align_corners False: y (within an ulp of the operands, see kernels/upsample.h) and gx (same bits) */
static const float f32_bil_down_y[21] = {-1.3333332538604736, -0.7857142686843872, 0.12500005960464478, 1.3749998807907104, -0.20238107442855835, -0.42261892557144165, 0.1249999925494194, 1.625, -0.08928583562374115, -0.8749999403953552, 0.3750000596046448, 1.6250001192092896, 0.8392853736877441, -0.8750000596046448, 0.6249999403953552, 1.172619342803955, 0.9523811936378479, -0.6249999403953552, 0.6250000596046448, -0.16071465611457825, -1.8750001192092896};
static const float f32_bil_down_gx[20] = {-2.6785714626312256, 0.9523808360099792, -1.0714282989501953, 1.7261900901794434, 0.2380954623222351, -0.3214285969734192, -0.5238094925880432, 0.8214284181594849, 0.09523805975914001, -1.2380949258804321, 0.273809552192688, -0.7619048357009888, 1.1666666269302368, 0.011904597282409668, -1.1071430444717407, 0.2976190149784088, -0.23809516429901123, 0.6547617316246033, 1.3095241785049438, 0.8928571939468384};
/* pixel_shuffle of [1, 8, 2, 3] by 2 -> [1, 2, 4, 6] */
static const double ps_y[48] = {-2.0, -1.0, -0.25, 0.75, 1.5, 2.5, 0.0, 1.0, 1.75, -2.0, -1.25, -0.25, -1.5, -0.5, 0.25, 1.25, 2.0, -1.75, 0.5, 1.5, 2.25, -1.5, -0.75, 0.25, 2.0, -1.75, -1.0, 0.0, 0.75, 1.75, -0.75, 0.25, 1.0, 2.0, -2.0, -1.0, 2.5, -1.25, -0.5, 0.5, 1.25, 2.25, -0.25, 0.75, 1.5, 2.5, -1.5, -0.5};

/* val / gval of the header: a tensor of dtype dt and shape. */
static tj_tensor *pattern(tj_dtype dt, int nd, const int64_t *shape, int step, int mod, double div, double off)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= shape[d];
    double *v = calloc((size_t)(n ? n : 1), sizeof(double));
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++) v[i] = (double)((i * step) % mod) / div + off;
    tj_tensor *t = tj_to_copy(test_f64(nd, shape, v), dt);
    free(v);
    cr_assert_not_null(t, "%s", tj_last_error());
    return t;
}
static tj_tensor *val(tj_dtype dt, int nd, const int64_t *shape) { return pattern(dt, nd, shape, 7, 19, 4, -2); }
static tj_tensor *gval(tj_dtype dt, int nd, const int64_t *shape) { return pattern(dt, nd, shape, 5, 13, 2, -3); }

/* One reference case: the call, its output and input gradient. */
typedef struct ref_case {
    const char *name;
    bool bilinear, align_corners;
    int64_t in[4];
    const int64_t *size;  /* output_size or NULL */
    const double *scales; /* scale_factors or NULL */
    int64_t out[4];
    const double *y, *gx;
} ref_case;

static tj_tensor *call(const ref_case *c, tj_tensor *x)
{
    return c->bilinear ? tj_upsample_bilinear2d_vec(x, c->size, c->align_corners, c->scales)
                       : tj_upsample_nearest2d_vec(x, c->size, c->scales);
}

static const ref_case cases[] = {
    {"near_scale2", false, false, {1, 2, 3, 4}, NULL, SCALES(2, 2), {1, 2, 6, 8}, near_scale2_y, near_scale2_gx},
    {"near_size57", false, false, {1, 1, 3, 4}, SHAPE(5, 7), NULL, {1, 1, 5, 7}, near_size57_y, near_size57_gx},
    {"near_down", false, false, {1, 1, 4, 4}, NULL, SCALES(1.5, 0.5), {1, 1, 6, 2}, near_down_y, near_down_gx},
    {"near_size1", false, false, {1, 1, 1, 3}, SHAPE(2, 5), NULL, {1, 1, 2, 5}, near_size1_y, near_size1_gx},
    {"near_shortcut", false, false, {1, 1, 3, 3}, NULL, SCALES(2.2, 1.2), {1, 1, 6, 3}, near_shortcut_y,
     near_shortcut_gx},
    {"bil_scale2", true, false, {1, 1, 3, 3}, NULL, SCALES(2, 2), {1, 1, 6, 6}, bil_scale2_y, bil_scale2_gx},
    {"bil_align", true, true, {1, 1, 3, 3}, SHAPE(5, 4), NULL, {1, 1, 5, 4}, bil_align_y, bil_align_gx},
    {"bil_frac", true, false, {1, 2, 4, 5}, NULL, SCALES(1.7, 0.6), {1, 2, 6, 3}, bil_frac_y, bil_frac_gx},
    {"bil_size1_in", true, false, {1, 1, 1, 1}, SHAPE(3, 2), NULL, {1, 1, 3, 2}, bil_size1_in_y, bil_size1_in_gx},
    {"bil_out1_align", true, true, {1, 1, 3, 4}, SHAPE(1, 1), NULL, {1, 1, 1, 1}, bil_out1_align_y,
     bil_out1_align_gx},
    {"bil_size_noalign", true, false, {2, 1, 3, 2}, SHAPE(4, 5), NULL, {2, 1, 4, 5}, bil_size_noalign_y,
     bil_size_noalign_gx},
};
#define NCASES (int)(sizeof cases / sizeof *cases)
#define BIL_FRAC (&cases[7])

static int64_t numel4(const int64_t *s) { return s[0] * s[1] * s[2] * s[3]; }

Test(upsample, float64_values_and_gradients_match_pytorch)
{
    for (int i = 0; i < NCASES; i++) {
        const ref_case *c = &cases[i];
        cr_log_info("%s", c->name);
        tj_tensor *x = val(TJ_FLOAT64, 4, c->in);
        tj_tensor *y = call(c, x);
        test_assert_dtype_shape(y, TJ_FLOAT64, 4, c->out);
        test_expect_close(y, c->y, numel4(c->out), 0, 1e-12);
        tj_tensor_set_requires_grad(x, true);
        tj_tensor *gx = test_grad1(x, call(c, x), gval(TJ_FLOAT64, 4, c->out));
        test_assert_dtype_shape(gx, TJ_FLOAT64, 4, c->in);
        test_expect_close(gx, c->gx, numel4(c->in), 0, 1e-12);
    }
}

/* float32 computes in float as ATen's kernels do (weights, FMA-contracted
 * sums): the same bits here. */
Test(upsample, float32_values_match_pytorch_float32)
{
    tj_tensor *x = val(TJ_FLOAT32, 4, SHAPE(1, 2, 3, 5));
    tj_tensor *y = tj_upsample_bilinear2d_vec(x, NULL, false, SCALES(1.3, 2.5));
    test_assert_dtype_shape(y, TJ_FLOAT32, 4, SHAPE(1, 2, 3, 12));
    test_expect_f32(y, f32_bil_y, 72, 0);
    y = tj_upsample_nearest2d_vec(x, SHAPE(7, 3), NULL);
    test_assert_dtype_shape(y, TJ_FLOAT32, 4, SHAPE(1, 2, 7, 3));
    test_expect_f32(y, f32_near_y, 42, 0);
    /* downsampling rows: the gradient has PyTorch's bits, the output is
     * within 1e-7 of its (see kernels/upsample.h) */
    x = val(TJ_FLOAT32, 4, SHAPE(1, 1, 4, 5));
    tj_tensor_set_requires_grad(x, true);
    y = tj_upsample_bilinear2d_vec(x, SHAPE(3, 7), false, NULL);
    test_expect_f32(y, f32_bil_down_y, 21, 1e-7);
    test_expect_f32(test_grad1(x, y, gval(TJ_FLOAT32, 4, SHAPE(1, 1, 3, 7))), f32_bil_down_gx, 20, 0);
}

/* Transposed planes, channels last and a broadcast channel give the
 * values of the contiguous copy (and the transposed one PyTorch's). */
Test(upsample, strided_inputs_give_the_values_of_their_contiguous_copy)
{
    tj_tensor *xt = tj_transpose(tj_contiguous(tj_transpose(val(TJ_FLOAT64, 4, BIL_FRAC->in), 2, 3)), 2, 3);
    cr_assert(!tj_tensor_is_contiguous(xt));
    test_expect_close(call(BIL_FRAC, xt), BIL_FRAC->y, numel4(BIL_FRAC->out), 0, 1e-12);
    tj_tensor *cl = tj_permute(tj_contiguous(tj_permute(val(TJ_FLOAT32, 4, SHAPE(2, 3, 4, 5)), SHAPE(0, 2, 3, 1), 4)),
                               SHAPE(0, 3, 1, 2), 4);
    for (int k = 0; k < NCASES; k++) {
        /* near_shortcut's scales give 2 H rows here: channels last takes
         * nearest_idx's shortcut, a contiguous input not (as ATen; see
         * nearest_forward_follows_aten_per_memory_format) */
        if (!strcmp(cases[k].name, "near_shortcut")) continue;
        test_expect_same(call(&cases[k], cl), call(&cases[k], tj_contiguous(cl)), cases[k].name);
    }
    tj_tensor *bc = tj_expand(val(TJ_FLOAT64, 4, SHAPE(2, 1, 3, 3)), SHAPE(2, 4, 3, 3), 4);
    test_expect_same(tj_upsample_nearest2d_vec(bc, SHAPE(5, 7), NULL),
                tj_upsample_nearest2d_vec(tj_contiguous(bc), SHAPE(5, 7), NULL), "broadcast channels");
}

/* Scale factors [1.1, 2.1] on x = torch.arange(24.).view(1, 2, 3, 4) give
 * OH = H and OW = 2 W. PyTorch 1.13's forward takes nearest_idx's shortcut
 * (rows i, columns i / 2) only in its channels-last kernel, which also
 * serves a contiguous input with C = 1; its generic kernel reads
 * min(floor(i / scale), size - 1). Its backward always uses nearest_idx.
 * Reference (/usr/bin/python3, float32 and float64 alike):
 *     up = lambda t: torch.ops.aten.upsample_nearest2d.vec(t, None, [1.1, 2.1])
 *     up(x), up(x.contiguous(memory_format=torch.channels_last)),
 *     up(torch.arange(12.).view(1, 1, 3, 4)),
 *     torch.autograd.grad(up(x), x, torch.arange(48.).view(1, 2, 3, 8)) */
static const double near_nchw_y[48] = {0, 0, 0, 1, 1, 2, 2, 3, 0, 0, 0, 1, 1, 2, 2, 3, 4, 4, 4, 5, 5, 6, 6, 7,
                                       12, 12, 12, 13, 13, 14, 14, 15, 12, 12, 12, 13, 13, 14, 14, 15, 16, 16, 16, 17, 17, 18, 18, 19};
static const double near_nchw_gx[24] = {1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45,
                                        49, 53, 57, 61, 65, 69, 73, 77, 81, 85, 89, 93};

static tj_tensor *arange4(tj_dtype dt, const int64_t *shape)
{
    tj_tensor *t = tj_view(tj_arange(tj_v_int(0), tj_v_int(numel4(shape)), tj_v_int(1), dt), shape, 4);
    cr_assert_not_null(t, "%s", tj_last_error());
    return t;
}

Test(upsample, nearest_forward_follows_aten_per_memory_format)
{
    double cl_y[48], c1_y[24];
    for (int i = 0; i < 48; i++) cl_y[i] = i / 2; /* rows i, columns i / 2 */
    for (int i = 0; i < 24; i++) c1_y[i] = i / 2;
    const tj_dtype dts[2] = {TJ_FLOAT32, TJ_FLOAT64};
    for (int k = 0; k < 2; k++) {
        tj_tensor *x = arange4(dts[k], SHAPE(1, 2, 3, 4));
        test_expect_close(tj_upsample_nearest2d_vec(x, NULL, SCALES(1.1, 2.1)), near_nchw_y, 48, 0, 0);
        tj_tensor *cl = tj_permute(tj_contiguous(tj_permute(x, SHAPE(0, 2, 3, 1), 4)), SHAPE(0, 3, 1, 2), 4);
        test_expect_close(tj_upsample_nearest2d_vec(cl, NULL, SCALES(1.1, 2.1)), cl_y, 48, 0, 0);
        tj_tensor *c1 = arange4(dts[k], SHAPE(1, 1, 3, 4));
        test_expect_close(tj_upsample_nearest2d_vec(c1, NULL, SCALES(1.1, 2.1)), c1_y, 24, 0, 0);
        tj_tensor_set_requires_grad(x, true);
        tj_tensor *gx = test_grad1(x, tj_upsample_nearest2d_vec(x, NULL, SCALES(1.1, 2.1)),
                                   arange4(dts[k], SHAPE(1, 2, 3, 8)));
        test_expect_close(gx, near_nchw_gx, 24, 0, 0);
    }
}

Test(upsample, an_empty_batch_gives_an_empty_output_and_gradient)
{
    tj_tensor *x = val(TJ_FLOAT32, 4, SHAPE(0, 2, 3, 4));
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *y = tj_upsample_bilinear2d_vec(x, NULL, false, SCALES(2, 2));
    test_assert_dtype_shape(y, TJ_FLOAT32, 4, SHAPE(0, 2, 6, 8));
    test_assert_dtype_shape(test_grad1(x, y, tj_zeros(SHAPE(0, 2, 6, 8), 4, TJ_FLOAT32)), TJ_FLOAT32, 4,
                            SHAPE(0, 2, 3, 4));
}

/* The backward operators are linear in grad_output: called on gy they
 * give PyTorch's gradient, and their own gradient is the forward. */
Test(upsample, the_backward_operators_give_the_gradient_and_differentiate_to_the_forward)
{
    tj_tensor *g = gval(TJ_FLOAT64, 4, BIL_FRAC->out);
    tj_tensor_set_requires_grad(g, true);
    tj_tensor *gi = tj_upsample_bilinear2d_backward_vec(g, NULL, BIL_FRAC->in, 4, false, BIL_FRAC->scales);
    test_expect_close(gi, BIL_FRAC->gx, 40, 0, 1e-12);
    test_expect_close(test_grad1(g, gi, val(TJ_FLOAT64, 4, BIL_FRAC->in)), BIL_FRAC->y, 36, 0, 1e-12);
    const ref_case *n = &cases[1]; /* near_size57 */
    g = gval(TJ_FLOAT64, 4, n->out);
    tj_tensor_set_requires_grad(g, true);
    gi = tj_upsample_nearest2d_backward_vec(g, n->size, n->in, 4, NULL);
    test_expect_close(gi, n->gx, 12, 0, 1e-12);
    test_expect_close(test_grad1(g, gi, val(TJ_FLOAT64, 4, n->in)), n->y, 35, 0, 1e-12);
}

/* ---- errors ---- */

Test(upsample, bad_arguments_fail_with_messages_naming_the_operator_and_sizes)
{
    const char *near = "aten::upsample_nearest2d.vec", *bil = "aten::upsample_bilinear2d.vec";
    tj_tensor *x = val(TJ_FLOAT32, 4, SHAPE(1, 2, 3, 4));
    test_expect_error(tj_upsample_nearest2d_vec(val(TJ_FLOAT32, 3, SHAPE(2, 3, 4)), SHAPE(4, 4), NULL), TJ_ERR_SHAPE,
                      near, "output_size [4, 4] has 2 elements for input [2, 3, 4] with 1 spatial dimensions");
    test_expect_error(tj_upsample_bilinear2d_vec(val(TJ_FLOAT32, 5, SHAPE(1, 1, 2, 3, 4)), NULL, false,
                                                 SCALES(2, 2)),
                      TJ_ERR_SHAPE, bil, "scale_factors [2, 2] has 2 elements for input [1, 1, 2, 3, 4]");
    test_expect_error(tj_upsample_nearest2d_vec(x, SHAPE(4, 4), SCALES(2, 2)), TJ_ERR_INVALID_ARGUMENT, near,
                      "Must specify exactly one of output_size and scale_factors (got both)");
    test_expect_error(tj_upsample_bilinear2d_vec(x, NULL, true, NULL), TJ_ERR_INVALID_ARGUMENT, bil,
                      "Must specify exactly one of output_size and scale_factors (got neither)");
    test_expect_error(tj_upsample_nearest2d_vec(x, SHAPE(0, 4), NULL), TJ_ERR_SHAPE, near,
                      "Input and output sizes should be greater than 0, but got input (H: 3, W: 4) output (H: 0, W: 4)");
    test_expect_error(tj_upsample_bilinear2d_vec(x, SHAPE(-1, 4), true, NULL), TJ_ERR_SHAPE, bil,
                      "output (H: -1, W: 4)");
    test_expect_error(tj_upsample_bilinear2d_vec(x, NULL, false, SCALES(-1, 2)), TJ_ERR_SHAPE, bil,
                      "output (H: -3, W: 8)");
    test_expect_error(tj_upsample_nearest2d_vec(x, NULL, SCALES(0.2, 2)), TJ_ERR_SHAPE, near,
                      "output (H: 0, W: 8)");
    test_expect_error(tj_upsample_nearest2d_vec(x, NULL, SCALES(NAN, 2)), TJ_ERR_INVALID_ARGUMENT, near,
                      "scale_factors [nan, 2] give no output size for input [1, 2, 3, 4]");
    test_expect_error(tj_upsample_nearest2d_vec(val(TJ_FLOAT32, 4, SHAPE(1, 2, 0, 4)), SHAPE(2, 2), NULL),
                      TJ_ERR_SHAPE, near, "input (H: 0, W: 4)");
    test_expect_error(tj_upsample_nearest2d_vec(val(TJ_FLOAT32, 4, SHAPE(1, 0, 3, 4)), SHAPE(2, 2), NULL),
                      TJ_ERR_SHAPE, near, "Non-empty 4D data tensor expected but got a tensor with sizes [1, 0, 3, 4]");
    test_expect_error(tj_upsample_bilinear2d_vec(val(TJ_INT64, 4, SHAPE(1, 2, 3, 4)), SHAPE(2, 2), false, NULL),
                      TJ_ERR_DTYPE, bil, "\"compute_indices_weights_linear\" not implemented for int64");
    /* the boxed call: a list of 1 element */
    tj_value args[3] = {tj_v_tensor(x), tj_v_ints(SHAPE(4), 1), tj_v_none()}, out;
    cr_expect_eq(tj_dispatch(TJ_OPS(upsample_nearest2d_vec), args, 3, &out), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "output_size [4] has 1 elements for input [1, 2, 3, 4] with 2 spatial"),
              "%s", tj_last_error());
}

Test(upsample, backward_operators_check_grad_output_against_the_output_size)
{
    const char *near = "aten::upsample_nearest2d_backward.vec", *bil = "aten::upsample_bilinear2d_backward.vec";
    test_expect_error(tj_upsample_nearest2d_backward_vec(val(TJ_FLOAT32, 4, SHAPE(1, 2, 5, 5)), SHAPE(4, 4),
                                                         SHAPE(1, 2, 3, 4), 4, NULL),
                      TJ_ERR_SHAPE, near,
                      "Expected grad_output to have the same shape as output; output.size(2) = 4 but got "
                      "grad_output.size(2) = 5 (grad_output [1, 2, 5, 5], input_size [1, 2, 3, 4])");
    test_expect_error(tj_upsample_bilinear2d_backward_vec(val(TJ_FLOAT32, 3, SHAPE(2, 5, 5)), SHAPE(5, 5),
                                                          SHAPE(1, 2, 3, 4), 4, false, NULL),
                      TJ_ERR_SHAPE, bil, "Expected grad_output to be a tensor of dimension 4 but got: dimension 3");
    test_expect_error(tj_upsample_bilinear2d_backward_vec(val(TJ_FLOAT32, 4, SHAPE(1, 2, 6, 8)), NULL,
                                                          SHAPE(1, 2, 3, 4), 4, false, NULL),
                      TJ_ERR_INVALID_ARGUMENT, bil, "Must specify exactly one of output_size and scale_factors");
    test_expect_error(tj_upsample_nearest2d_backward_vec(val(TJ_FLOAT32, 4, SHAPE(1, 2, 6, 8)), NULL,
                                                         SHAPE(-1, 2, 3, 4), 4, SCALES(2, 2)),
                      TJ_ERR_SHAPE, near, "input_size [-1, 2, 3, 4] has a negative size");
}

/* input_size is [N, C, H, W] of the forward's input: its length is given
 * and checked, and its batch and channels must be grad_output's. */
Test(upsample, backward_operators_check_input_size_against_grad_output)
{
    const char *near = "aten::upsample_nearest2d_backward.vec", *bil = "aten::upsample_bilinear2d_backward.vec";
    tj_tensor *g = val(TJ_FLOAT32, 4, SHAPE(1, 2, 6, 8));
    test_expect_error(tj_upsample_nearest2d_backward_vec(g, SHAPE(6, 8), SHAPE(1, 2, 3), 3, NULL), TJ_ERR_SHAPE,
                      near, "input_size [1, 2, 3] has 3 elements, expected 4 (the input's [N, C, H, W]) for "
                            "grad_output [1, 2, 6, 8]");
    test_expect_error(tj_upsample_bilinear2d_backward_vec(g, NULL, SHAPE(1, 2, 3, 4, 5), 5, false, SCALES(2, 2)),
                      TJ_ERR_SHAPE, bil, "input_size [1, 2, 3, 4, 5] has 5 elements, expected 4");
    test_expect_error(tj_upsample_nearest2d_backward_vec(g, SHAPE(6, 8), NULL, 0, NULL), TJ_ERR_SHAPE, near,
                      "input_size [] has 0 elements, expected 4");
    test_expect_error(tj_upsample_nearest2d_backward_vec(g, SHAPE(6, 8), NULL, 4, NULL), TJ_ERR_INVALID_ARGUMENT,
                      near, "argument 2 'input_size' is a NULL array of length 4");
    test_expect_error(tj_upsample_bilinear2d_backward_vec(g, SHAPE(6, 8), SHAPE(1, 2, 3, 4), -1, true, NULL),
                      TJ_ERR_INVALID_ARGUMENT, bil, "argument 2 'input_size' has a negative length (-1)");
    /* batch and channels other than grad_output's, as PyTorch's message */
    test_expect_error(tj_upsample_bilinear2d_backward_vec(g, NULL, SHAPE(2, 2, 3, 4), 4, false, SCALES(2, 2)),
                      TJ_ERR_SHAPE, bil, "output.size(0) = 2 but got grad_output.size(0) = 1 (grad_output [1, 2, 6, 8], "
                                         "input_size [2, 2, 3, 4])");
    test_expect_error(tj_upsample_nearest2d_backward_vec(g, SHAPE(6, 8), SHAPE(1, 3, 3, 4), 4, NULL), TJ_ERR_SHAPE,
                      near, "output.size(1) = 3 but got grad_output.size(1) = 2");
    /* H and W give the output size with scale factors: [1, 2, 3, 5] gives width 10, not 8 */
    test_expect_error(tj_upsample_nearest2d_backward_vec(g, NULL, SHAPE(1, 2, 3, 5), 4, SCALES(2, 2)), TJ_ERR_SHAPE,
                      near, "output.size(3) = 10 but got grad_output.size(3) = 8");
    test_expect_error(tj_upsample_nearest2d_backward_vec(g, SHAPE(6, 8), SHAPE(1, 2, 0, 4), 4, NULL), TJ_ERR_SHAPE,
                      near, "Input and output sizes should be greater than 0, but got input (H: 0, W: 4)");
    /* the right length computes: each input element of [1, 2, 3, 4] gathers 2 x 2 ones */
    tj_tensor *gi = tj_upsample_nearest2d_backward_vec(tj_ones(SHAPE(1, 2, 6, 8), 4, TJ_FLOAT32), SHAPE(6, 8),
                                                       SHAPE(1, 2, 3, 4), 4, NULL);
    test_assert_dtype_shape(gi, TJ_FLOAT32, 4, SHAPE(1, 2, 3, 4));
    double fours[24];
    for (int i = 0; i < 24; i++) fours[i] = 4;
    test_expect_close(gi, fours, 24, 0, 0);
}

/* ---- tracing and replay ---- */

typedef struct trace_case {
    bool train;  /* the gradient as well */
    int which;   /* 0 bilinear, scale factors; 1 nearest, output size; 2 pixel_shuffle then unshuffle */
} trace_case;

static tj_status traced(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    const trace_case *tc = ctx;
    tj_tensor *x = in[0];
    if (tc->train) {
        x = tj_tensor_detach(in[0]);
        tj_tensor_set_requires_grad(x, true);
    }
    tj_tensor *y;
    switch (tc->which) {
    case 0: y = tj_upsample_bilinear2d_vec(x, NULL, false, SCALES(1.7, 0.6)); break;
    case 1: y = tj_upsample_nearest2d_vec(x, SHAPE(7, 3), NULL); break;
    default: y = tj_pixel_unshuffle(tj_mul(tj_pixel_shuffle(x, 2), tj_pixel_shuffle(x, 2)), 2); break;
    }
    *n_out = 1;
    if (!tc->train) {
        out[0] = y;
        return y ? TJ_OK : tj_last_status();
    }
    tj_tensor *loss = tj_sum(tj_mul(y, in[1]), -1);
    return tj_autograd_grad(&loss, 1, NULL, &x, 1, out);
}

/* Recorded under their ATen names (the primitives also under the core
 * table), replayed to eager's values; with float lists printed as FX does
 * and parsed back. */
static void expect_traces_and_replays(const trace_case *tc, tj_tensor *const *in, const char *op, const char *text)
{
    tj_tensor *eager[1];
    int n_out;
    cr_assert_eq(traced((void *)tc, in, 2, eager, &n_out), TJ_OK, "%s", tj_last_error());
    tj_decomp_table *core = tj_core_decompositions();
    for (int mode = 0; mode < 4; mode++) {
        tj_graph *g = tj_make_fx(traced, (void *)tc, in, 2, mode & 2 ? core : NULL,
                                 mode & 1 ? TJ_TRACE_FAKE : TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s", tj_last_error());
        char *s = tj_graph_to_string(g);
        cr_assert_not_null(s);
        bool composite = tc->which == 2 && (mode & 2);
        cr_expect_eq(strstr(s, op) != NULL, !composite, "%s in mode %d:\n%s", op, mode, s);
        if (text) cr_expect(strstr(s, text), "%s missing in\n%s", text, s);
        if (mode & 2) cr_expect(test_only_primitives(g), "a composite left in\n%s", s);
        test_expect_round_trip(s);
        free(s);
        test_expect_same(test_replay1(g, in, 2), eager[0], op);
        tj_graph_free(g);
    }
    tj_decomp_table_free(core);
}

Test(upsample, forward_and_training_step_trace_and_replay_as_eager)
{
    tj_tensor *x = val(TJ_FLOAT32, 4, SHAPE(1, 2, 4, 5));
    tj_tensor *in0[2] = {x, gval(TJ_FLOAT32, 4, SHAPE(1, 2, 6, 3))}, *in1[2] = {x, gval(TJ_FLOAT32, 4, SHAPE(1, 2, 7, 3))};
    expect_traces_and_replays(&(trace_case){false, 0}, in0, "aten.upsample_bilinear2d.vec(",
                              ", None, False, [1.7, 0.6])");
    expect_traces_and_replays(&(trace_case){true, 0}, in0, "aten.upsample_bilinear2d_backward.vec(",
                              ", None, [1, 2, 4, 5], False, [1.7, 0.6])");
    expect_traces_and_replays(&(trace_case){false, 1}, in1, "aten.upsample_nearest2d.vec(", ", [7, 3], None)");
    expect_traces_and_replays(&(trace_case){true, 1}, in1, "aten.upsample_nearest2d_backward.vec(",
                              ", [7, 3], [1, 2, 4, 5], None)");
}

/* ---- pixel_shuffle / pixel_unshuffle ---- */

Test(upsample, pixel_shuffle_matches_pytorch_and_pixel_unshuffle_undoes_it)
{
    tj_tensor *x = val(TJ_FLOAT64, 4, SHAPE(1, 8, 2, 3));
    tj_tensor *y = tj_pixel_shuffle(x, 2);
    test_assert_dtype_shape(y, TJ_FLOAT64, 4, SHAPE(1, 2, 4, 6));
    test_expect_close(y, ps_y, 48, 0, 0);
    test_expect_same(tj_pixel_unshuffle(y, 2), x, "round trip");
    tj_tensor *b = tj_transpose(val(TJ_INT64, 5, SHAPE(2, 3, 9, 6, 4)), 3, 4); /* batch dims, strided, int64 */
    test_expect_same(tj_pixel_shuffle(tj_pixel_unshuffle(b, 2), 2), b, "strided round trip");
    test_expect_same(tj_pixel_unshuffle(tj_pixel_shuffle(b, 3), 3), b, "strided round trip by 3");
}

Test(upsample, pixel_shuffle_gradients_and_decompositions_match_the_kernels)
{
    tj_tensor *x = val(TJ_FLOAT32, 4, SHAPE(2, 4, 3, 2));
    tj_tensor *in[2] = {x, gval(TJ_FLOAT32, 4, SHAPE(2, 4, 3, 2))};
    expect_traces_and_replays(&(trace_case){false, 2}, in, "aten.pixel_shuffle.default(", NULL);
    expect_traces_and_replays(&(trace_case){true, 2}, in, "aten.pixel_unshuffle.default(", NULL);
    /* d/dx sum(pixel_shuffle(x) * gy) = pixel_unshuffle(gy) */
    tj_tensor *gy = gval(TJ_FLOAT32, 4, SHAPE(2, 1, 6, 4));
    tj_tensor_set_requires_grad(x, true);
    test_expect_same(test_grad1(x, tj_pixel_shuffle(x, 2), gy), tj_pixel_unshuffle(gy, 2), "gradient");
}

Test(upsample, pixel_shuffle_errors_name_the_operator_and_sizes)
{
    test_expect_error(tj_pixel_shuffle(val(TJ_FLOAT32, 4, SHAPE(1, 5, 3, 4)), 2), TJ_ERR_SHAPE, "aten::pixel_shuffle",
                      "input.size(-3)=5 is not divisible by 4 (input [1, 5, 3, 4])");
    test_expect_error(tj_pixel_shuffle(val(TJ_FLOAT32, 2, SHAPE(5, 3)), 2), TJ_ERR_SHAPE, "aten::pixel_shuffle",
                      "expects input to have at least 3 dimensions, but got input with 2 dimension(s) (input [5, 3])");
    test_expect_error(tj_pixel_shuffle(val(TJ_FLOAT32, 4, SHAPE(1, 4, 3, 4)), 0), TJ_ERR_INVALID_ARGUMENT,
                      "aten::pixel_shuffle", "expects a positive upscale_factor, but got 0");
    test_expect_error(tj_pixel_unshuffle(val(TJ_FLOAT32, 4, SHAPE(1, 4, 3, 4)), 2), TJ_ERR_SHAPE,
                      "aten::pixel_unshuffle", "expects height to be divisible by downscale_factor, but "
                      "input.size(-2)=3 is not divisible by 2");
    test_expect_error(tj_pixel_unshuffle(val(TJ_FLOAT32, 4, SHAPE(1, 4, 4, 3)), 2), TJ_ERR_SHAPE,
                      "aten::pixel_unshuffle", "expects width to be divisible by downscale_factor, but "
                      "input.size(-1)=3 is not divisible by 2");
    test_expect_error(tj_pixel_unshuffle(val(TJ_FLOAT32, 4, SHAPE(1, 4, 4, 4)), -1), TJ_ERR_INVALID_ARGUMENT,
                      "aten::pixel_unshuffle", "expects a positive downscale_factor, but got -1");
}
