/* im2col / col2im (F.unfold, F.fold), _cdist_forward / _cdist_backward /
 * _euclidean_dist (torch.cdist) and repeat_interleave: values, gradients and
 * errors against PyTorch 1.13 (/usr/bin/python3; the expressions are noted
 * at each test), fake-mode traces, and the decompositions against the
 * kernels. The float64 conformance cases (make_cases_fold_cdist.py) cover
 * more shapes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "test_util.h"

TestSuite(fold_cdist, .init = test_scope_open, .fini = test_scope_close);

static const int64_t one2[2] = {1, 1}, zero2[2] = {0, 0};

static tj_tensor *arange_f32(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return tj_reshape(tj_arange(tj_v_int(0), tj_v_int(n), tj_v_int(1), TJ_FLOAT32), shape, ndim);
}

/* ---- im2col / col2im ---- */

/* F.unfold(torch.arange(24.).reshape(1, 2, 3, 4), (2, 2), padding=(1, 0), stride=(1, 2)) */
static const double unfold_want[64] = {
    0, 0, 0, 2, 4, 6, 8, 10, 0, 0, 1, 3, 5, 7, 9, 11, 0, 2, 4, 6, 8, 10, 0, 0, 1, 3, 5, 7, 9, 11, 0, 0,
    0, 0, 12, 14, 16, 18, 20, 22, 0, 0, 13, 15, 17, 19, 21, 23, 12, 14, 16, 18, 20, 22, 0, 0, 13, 15, 17, 19, 21, 23, 0, 0};

Test(fold_cdist, im2col_matches_torch_batched_unbatched_and_strided)
{
    const int64_t k[2] = {2, 2}, pad[2] = {1, 0}, stride[2] = {1, 2};
    tj_tensor *x = arange_f32(4, (int64_t[]){1, 2, 3, 4});
    tj_tensor *cols = tj_im2col(x, k, one2, pad, stride);
    test_assert_dtype_shape(cols, TJ_FLOAT32, 3, (int64_t[]){1, 8, 8});
    test_expect_close(cols, unfold_want, 64, 0, 0);
    /* unbatched [C, H, W]: [C kh kw, L] */
    tj_tensor *flat = tj_im2col(tj_select(x, 0, 0), k, one2, pad, stride);
    test_assert_dtype_shape(flat, TJ_FLOAT32, 2, (int64_t[]){8, 8});
    test_expect_close(flat, unfold_want, 64, 0, 0);
    /* any strides: a transposed copy transposed back reads the same image */
    tj_tensor *t = tj_transpose(tj_contiguous(tj_transpose(x, 2, 3)), 2, 3);
    cr_assert(!tj_tensor_is_contiguous(t));
    test_expect_same(tj_im2col(t, k, one2, pad, stride), cols, "strided image");
    /* float64, an empty batch */
    test_expect_close(tj_im2col(tj_to_copy(x, TJ_FLOAT64), k, one2, pad, stride), unfold_want, 64, 0, 0);
    test_assert_dtype_shape(tj_im2col(tj_zeros((int64_t[]){0, 2, 3, 4}, 4, TJ_FLOAT32), k, one2, pad, stride),
                            TJ_FLOAT32, 3, (int64_t[]){0, 8, 8});
}

/* F.fold(torch.ones(1, 4, 4), (3, 3), 2): how many 2x2 blocks cover each pixel */
Test(fold_cdist, col2im_sums_overlapping_blocks_as_torch)
{
    const int64_t k[2] = {2, 2}, out[2] = {3, 3};
    const double counts[9] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
    tj_tensor *ones = tj_ones((int64_t[]){1, 4, 4}, 3, TJ_FLOAT64);
    tj_tensor *img = tj_col2im(ones, out, k, one2, zero2, one2);
    test_assert_dtype_shape(img, TJ_FLOAT64, 4, (int64_t[]){1, 1, 3, 3});
    test_expect_close(img, counts, 9, 0, 0);
    /* unbatched [C kh kw, L]: [C, H, W] */
    tj_tensor *flat = tj_col2im(tj_select(ones, 0, 0), out, k, one2, zero2, one2);
    test_assert_dtype_shape(flat, TJ_FLOAT64, 3, (int64_t[]){1, 3, 3});
    test_expect_close(flat, counts, 9, 0, 0);
    /* stride 3 past a 2x2 kernel leaves gaps at 0; padding drops entries */
    tj_tensor *gaps = tj_col2im(tj_ones((int64_t[]){4, 4}, 2, TJ_FLOAT32), (int64_t[]){5, 5}, k, one2, zero2,
                                (int64_t[]){3, 3});
    test_expect_close(gaps, (double[]){1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1},
                      25, 0, 0);
    /* F.fold(torch.ones(1, 4, 9), (2, 2), 2, padding=1): 3 x 3 blocks, each pixel under 4 */
    test_expect_close(tj_col2im(tj_ones((int64_t[]){1, 4, 9}, 3, TJ_FLOAT64), (int64_t[]){2, 2}, k, one2, one2, one2),
                      (double[]){4, 4, 4, 4}, 4, 0, 0);
}

/* derivatives.yaml: each is the other's gradient; the decompositions give
 * the kernels' values (im2col bit for bit: copies) */
Test(fold_cdist, im2col_and_col2im_are_each_others_gradient)
{
    const int64_t k[2] = {2, 3}, pad[2] = {1, 0}, stride[2] = {1, 2}, dil[2] = {2, 1}, size[2] = {5, 6};
    tj_tensor *x = test_random_f32(4, (int64_t[]){2, 3, 5, 6}, 1);
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    tj_tensor *cols = tj_im2col(x, k, dil, pad, stride);
    cr_assert_not_null(cols, "%s", tj_last_error());
    tj_tensor *gy = test_random_f32(3, tj_tensor_shape(cols), 2);
    test_expect_same(test_grad1(x, tj_im2col(x, k, dil, pad, stride), gy), tj_col2im(gy, size, k, dil, pad, stride),
                     "im2col's gradient");
    tj_tensor *c = test_random_f32(3, tj_tensor_shape(cols), 3);
    cr_assert_eq(tj_tensor_set_requires_grad(c, true), TJ_OK);
    tj_tensor *gi = test_random_f32(4, (int64_t[]){2, 3, 5, 6}, 4);
    test_expect_same(test_grad1(c, tj_col2im(c, size, k, dil, pad, stride), gi), tj_im2col(gi, k, dil, pad, stride),
                     "col2im's gradient");
}

/* torch 1.13's messages (im2col_shape_check, col2im_shape_check) */
Test(fold_cdist, im2col_and_col2im_errors_name_the_operator_and_values)
{
    tj_tensor *x = tj_zeros((int64_t[]){1, 2, 4, 4}, 4, TJ_FLOAT32);
    const int64_t k[2] = {2, 2};
    test_expect_error(tj_im2col(x, (int64_t[]){0, 2}, one2, zero2, one2), TJ_ERR_INVALID_ARGUMENT, "aten::im2col",
                      "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 2");
    test_expect_error(tj_im2col(x, k, (int64_t[]){1, 0}, zero2, one2), TJ_ERR_INVALID_ARGUMENT, "aten::im2col",
                      "dilation_width: 0");
    test_expect_error(tj_im2col(x, k, one2, (int64_t[]){-1, 0}, one2), TJ_ERR_INVALID_ARGUMENT, "aten::im2col",
                      "pad_height: -1");
    test_expect_error(tj_im2col(x, k, one2, zero2, (int64_t[]){1, 0}), TJ_ERR_INVALID_ARGUMENT, "aten::im2col",
                      "stride_width: 0");
    test_expect_error(tj_im2col(x, (int64_t[]){5, 2}, one2, zero2, one2), TJ_ERR_SHAPE, "aten::im2col",
                      "calculated shape of the array of sliding blocks as (0, 3)");
    test_expect_error(tj_im2col(tj_zeros((int64_t[]){1, 0, 4, 4}, 4, TJ_FLOAT32), k, one2, zero2, one2), TJ_ERR_SHAPE,
                      "aten::im2col", "[1, 0, 4, 4]");
    test_expect_error(tj_im2col(tj_zeros((int64_t[]){4, 4}, 2, TJ_FLOAT32), k, one2, zero2, one2), TJ_ERR_SHAPE,
                      "aten::im2col", "Expected 3D or 4D");
    test_expect_error(tj_im2col(tj_zeros((int64_t[]){1, 2, 4, 4}, 4, TJ_INT64), k, one2, zero2, one2), TJ_ERR_DTYPE,
                      "aten::im2col", "int64");
    /* a huge padding: the sizes overflow, refused, not wrapped */
    test_expect_error(tj_im2col(x, k, one2, (int64_t[]){INT64_MAX / 2, 0}, one2), TJ_ERR_SHAPE, "aten::im2col",
                      "sliding blocks");
    tj_tensor *c = tj_zeros((int64_t[]){1, 8, 9}, 3, TJ_FLOAT32);
    test_expect_error(tj_col2im(c, (int64_t[]){5, 5}, k, one2, zero2, one2), TJ_ERR_SHAPE, "aten::col2im",
                      "sliding blocks 4 * 4 = 16");
    test_expect_error(tj_col2im(c, (int64_t[]){4, 5}, k, one2, zero2, one2), TJ_ERR_SHAPE, "aten::col2im",
                      "but got input.size(2)=9");
    test_expect_error(tj_col2im(tj_zeros((int64_t[]){1, 6, 9}, 3, TJ_FLOAT32), (int64_t[]){4, 4}, k, one2, zero2,
                                one2), TJ_ERR_SHAPE, "aten::col2im", "input.size(1)=6 and kernel_size=(2, 2)");
    test_expect_error(tj_col2im(tj_zeros((int64_t[]){8}, 1, TJ_FLOAT32), (int64_t[]){4, 4}, k, one2, zero2, one2),
                      TJ_ERR_SHAPE, "aten::col2im", "Expected 2D or 3D");
    test_expect_error(tj_col2im(c, (int64_t[]){0, 4}, k, one2, zero2, one2), TJ_ERR_SHAPE, "aten::col2im",
                      "output_size=(0, 4)");
    test_expect_error(tj_col2im(c, (int64_t[]){4, 4}, k, one2, zero2, (int64_t[]){0, 1}), TJ_ERR_INVALID_ARGUMENT,
                      "aten::col2im", "stride_height: 0");
}

/* ---- cdist ---- */

/* a = [[0, 1, 2], [1, -1, 0.5], [3, 0, -2]], b = [[0, 1, 2], [2, 2, 2]]
 * (float64); torch.cdist(a, b, p) */
static tj_tensor *cd_a(void)
{
    return test_f64(2, (int64_t[]){3, 3}, (double[]){0, 1, 2, 1, -1, 0.5, 3, 0, -2});
}
static tj_tensor *cd_b(void) { return test_f64(2, (int64_t[]){2, 3}, (double[]){0, 1, 2, 2, 2, 2}); }

Test(fold_cdist, cdist_matches_torch_for_each_p)
{
    static const struct {
        double p, want[6];
    } cases[] = {
        {0, {0, 2, 3, 3, 3, 3}},
        {1, {0, 3, 4.5, 5.5, 8, 7}},
        {2, {0, 2.23606797749979, 2.692582403567252, 3.5, 5.0990195135927845, 4.58257569495584}},
        {INFINITY, {0, 2, 2, 3, 4, 4}},
        {3, {0, 2.080083823051904, 2.3130325045913707, 3.1539967743316337, 4.514357435474001, 4.179339196381232}},
        {0.5, {0, 5.82842712474619, 13.24201848266712, 15.656232045040216, 22.392304845413257, 19.485281374238568}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tj_tensor *d = tj__cdist_forward(cd_a(), cd_b(), cases[i].p, false, 0);
        test_assert_dtype_shape(d, TJ_FLOAT64, 2, (int64_t[]){3, 2});
        test_expect_close(d, cases[i].want, 6, 1e-15, 0);
    }
    /* batch [2, 1] with [3]: [2, 3, 3, 2], each item the unbatched distances */
    tj_tensor *a4 = tj_expand(cd_a(), (int64_t[]){2, 1, 3, 3}, 4), *b3 = tj_expand(cd_b(), (int64_t[]){3, 2, 3}, 3);
    tj_tensor *d = tj__cdist_forward(a4, b3, 2, false, 0);
    test_assert_dtype_shape(d, TJ_FLOAT64, 4, (int64_t[]){2, 3, 3, 2});
    test_expect_same(tj_select(tj_select(d, 0, 1), 0, 2), tj__cdist_forward(cd_a(), cd_b(), 2, false, 0), "batch");
    /* no columns: zeros; no rows: empty */
    test_expect_close(tj__cdist_forward(tj_zeros((int64_t[]){2, 0}, 2, TJ_FLOAT32),
                                        tj_zeros((int64_t[]){1, 0}, 2, TJ_FLOAT32), 1, false, 0),
                      (double[]){0, 0}, 2, 0, 0);
}

/* x1 = a, x2 = b requiring grad; torch.autograd.grad((torch.cdist(x1, x2, p)
 * * w).sum(), [x1, x2]), w = [[1, -2], [0.5, 3], [-1, 2]]; a[0] == b[0]:
 * a zero distance (and zero differences) */
Test(fold_cdist, cdist_gradients_match_torch)
{
    static const struct {
        double p, g1[9], g2[6];
    } cases[] = {
        {2, {1.7888543819998317, 0.8944271909999159, 0, -0.6714475189658052, -2.9428192477826753, -1.5642572929798635,
             -0.15191262494256735, -0.6767554258057855, -0.9612785813352029},
         {0.4026530672375003, 0.17527454121591968, -0.5059215332871584, -1.3681473053289595, 2.5498729413726253,
          3.031457407602225}},
        {1.5, {1.808026806906243, 1.2784680157304649, 0, -1.2174544250922716, -2.991131864700427, -2.1780842602481094,
               0.16245844612519766, -0.8283806406744969, -0.9295812019941722},
         {0.4348535956213765, -0.016346149732272663, -0.4824802093901043, -1.1878844235605457, 2.557390639376732,
          3.590145671632386}},
        {INFINITY, {2, 0, 0, 0, -3.5, 0, 0, 0, -1}, {0, 0.5, -1, -2, 3, 2}},
        {1, {2, 2, 0, -2.5, -3.5, -3.5, 1, -1, -1}, {0.5, -0.5, -0.5, -1, 3, 5}},
        {0.5, {3.414213562373095, 4.82842712474619, 0, -10.050907819999058, -8.139937243614012, -11.177728989555952,
               6.096376317177313, -1.510589879550408, -2.048188158588657},
         {0.9125715906865348, -3.445484715083383, -0.8804268441309493, -0.3722536502378855, 8.267584713501613,
          14.106343992275558}},
        {3, {1.848963398268359, 0.4622408495670898, 0, -0.20812152204121798, -3.0880198623987525, -0.8888247890638988,
             -0.327119479299028, -0.40894067238638837, -1.0469334588315533},
         {0.3481660642641316, 0.32475433252597413, -0.5748299587164211, -1.6618884611922446, 2.709965352692077,
          2.510588206611873}},
    };
    tj_tensor *w = test_f64(2, (int64_t[]){3, 2}, (double[]){1, -2, 0.5, 3, -1, 2});
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tj_tensor *x1 = cd_a(), *x2 = cd_b(), *g[2];
        cr_assert_eq(tj_tensor_set_requires_grad(x1, true), TJ_OK);
        cr_assert_eq(tj_tensor_set_requires_grad(x2, true), TJ_OK);
        tj_tensor *loss = tj_sum(tj_mul(tj__cdist_forward(x1, x2, cases[i].p, false, 0), w), TJ_DTYPE_NONE);
        cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){x1, x2}, 2, g), TJ_OK, "%s", tj_last_error());
        test_expect_close(g[0], cases[i].g1, 9, 1e-14, 1e-15);
        test_expect_close(g[1], cases[i].g2, 6, 1e-14, 1e-15);
    }
    /* a broadcast batch: the gradient is summed back to x1's shape */
    tj_tensor *x1 = cd_a(), *x2 = tj_expand(cd_b(), (int64_t[]){2, 2, 3}, 3), *g;
    cr_assert_eq(tj_tensor_set_requires_grad(x1, true), TJ_OK);
    tj_tensor *loss = tj_sum(tj_mul(tj__cdist_forward(x1, x2, 2, false, 0), w), TJ_DTYPE_NONE);
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, &x1, 1, &g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g, (double[]){2 * 1.7888543819998317, 2 * 0.8944271909999159, 0, 2 * -0.6714475189658052,
                                    2 * -2.9428192477826753, 2 * -1.5642572929798635, 2 * -0.15191262494256735,
                                    2 * -0.6767554258057855, 2 * -0.9612785813352029}, 9, 1e-14, 1e-15);
    /* _cdist_backward has no gradient of its own (torch: not_implemented) */
    cr_assert_eq(tj_tensor_set_requires_grad(x2 = cd_b(), true), TJ_OK);
    tj_tensor *d = tj__cdist_forward(cd_a(), cd_b(), 2, false, 0);
    tj_tensor *gb = tj__cdist_backward(tj_ones_like(d, -1), cd_a(), x2, 2, d);
    cr_expect_neq(tj_autograd_grad(&(tj_tensor *){tj_sum(gb, TJ_DTYPE_NONE)}, 1, NULL, &x2, 1, &g), TJ_OK);
    cr_expect(strstr(tj_last_error(), "_cdist_backward"), "%s", tj_last_error());
}

/* a = torch.arange(90.).reshape(30, 3) * 0.1 - 4, b = [[0.5, -1, 2],
 * [-3.7, -3.6, -3.5]] (float32; b[1] == a[1] as rounded): torch.cdist(a, b)
 * takes the matrix-product path (30 rows > 25): d[0, 1] is 0.519619345...
 * there and 0.5196152925... by the differences (compute_mode 2) */
Test(fold_cdist, cdist_takes_torchs_matrix_product_path_past_25_rows)
{
    tj_tensor *a = tj_sub_scalar(tj_mul_scalar(arange_f32(2, (int64_t[]){30, 3}), tj_v_float(0.1)), tj_v_int(4));
    tj_tensor *b = test_f32(2, (int64_t[]){2, 3}, (float[]){0.5f, -1, 2, -3.7f, -3.6f, -3.5f});
    test_expect_close(tj_slice(tj__cdist_forward(a, b, 2, false, 0), 0, true, 0, true, 2, 1),
                      (double[]){7.893034934997559, 0.519619345664978, 7.392563819885254, 0}, 4, 1e-7, 0);
    test_expect_close(tj_slice(tj__cdist_forward(a, b, 2, true, 2), 0, true, 0, true, 2, 1),
                      (double[]){7.893034934997559, 0.5196152925491333, 7.392563819885254, 0}, 4, 1e-7, 0);
    test_expect_same(tj__euclidean_dist(a, b), tj__cdist_forward(a, b, 2, true, 1), "_euclidean_dist");
    test_expect_close(tj_select(tj__euclidean_dist(a, b), 0, 29), (double[]){7.725930213928223, 14.549226760864258},
                      2, 1e-7, 0);
    /* few rows: the differences, unless compute_mode 1 */
    tj_tensor *a2 = tj_slice(a, 0, true, 0, true, 2, 1);
    test_expect_close(tj_select(tj__cdist_forward(a2, b, 2, false, 0), 0, 0),
                      (double[]){7.893034934997559, 0.5196152925491333}, 2, 1e-7, 0);
    test_expect_close(tj_select(tj__cdist_forward(a2, b, 2, true, 1), 0, 0),
                      (double[]){7.893034934997559, 0.519619345664978}, 2, 1e-7, 0);
}

Test(fold_cdist, cdist_errors_name_the_operator_and_shapes)
{
    tj_tensor *a = cd_a(), *b = cd_b();
    test_expect_error(tj__cdist_forward(tj_select(a, 0, 0), b, 2, false, 0), TJ_ERR_SHAPE, "aten::_cdist_forward",
                      "at least 2D tensors, X1 got: 1D");
    test_expect_error(tj__cdist_forward(a, tj_slice(b, 1, true, 0, true, 2, 1), 2, false, 0), TJ_ERR_SHAPE,
                      "aten::_cdist_forward", "same number of columns. X1: 3 X2: 2");
    test_expect_error(tj__cdist_forward(a, tj_to_copy(b, TJ_INT64), 2, false, 0), TJ_ERR_DTYPE,
                      "aten::_cdist_forward", "X2 got: int64");
    test_expect_error(tj__cdist_forward(a, tj_to_copy(b, TJ_FLOAT32), 2, false, 0), TJ_ERR_DTYPE,
                      "aten::_cdist_forward", "float32");
    test_expect_error(tj__cdist_forward(a, b, -1, false, 0), TJ_ERR_INVALID_ARGUMENT, "aten::_cdist_forward",
                      "non-negative p");
    test_expect_error(tj__cdist_forward(a, b, NAN, false, 0), TJ_ERR_INVALID_ARGUMENT, "aten::_cdist_forward",
                      "non-negative p");
    test_expect_error(tj__cdist_forward(a, b, 2, true, 3), TJ_ERR_INVALID_ARGUMENT, "aten::_cdist_forward",
                      "possible modes: 0, 1, 2, but was: 3");
    test_expect_error(tj__cdist_forward(tj_expand(a, (int64_t[]){2, 3, 3}, 3), tj_expand(b, (int64_t[]){3, 2, 3}, 3),
                                        2, false, 0), TJ_ERR_SHAPE, "aten::_cdist_forward", "[2] and [3]");
    tj_tensor *d = tj__cdist_forward(a, b, 2, false, 0);
    test_expect_error(tj__cdist_backward(tj_transpose(d, 0, 1), a, b, 2, d), TJ_ERR_SHAPE, "aten::_cdist_backward",
                      "grad [2, 3] is not the shape of the distances, [3, 2]");
    test_expect_error(tj__euclidean_dist(a, tj_select(b, 0, 0)), TJ_ERR_SHAPE, "aten::_euclidean_dist", "X2 got: 1D");
}

/* ---- repeat_interleave ---- */

static tj_tensor *i64v(int64_t n, const int64_t *v) { return test_i64(1, (int64_t[]){n}, v); }

/* torch.repeat_interleave(torch.tensor([1, 0, 3, 2])); x = [[1, 2, 3], [4, 5, 6]]:
 * x.repeat_interleave(2), x.repeat_interleave(2, dim=1),
 * x.repeat_interleave(torch.tensor([1, 2]), dim=0) */
Test(fold_cdist, repeat_interleave_matches_torch)
{
    test_expect_i64(tj_repeat_interleave(i64v(4, (int64_t[]){1, 0, 3, 2}), false, 0), 6, (int64_t[]){0, 2, 2, 2, 3, 3});
    test_expect_i64(tj_repeat_interleave(i64v(2, (int64_t[]){2, 1}), true, 3), 3, (int64_t[]){0, 0, 1});
    test_assert_dtype_shape(tj_repeat_interleave(i64v(0, NULL), false, 0), TJ_INT64, 1, (int64_t[]){0});
    tj_tensor *x = test_f32(2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
    tj_tensor *flat = tj_repeat_interleave_self_int(x, 2, false, 0, false, 0);
    test_assert_dtype_shape(flat, TJ_FLOAT32, 1, (int64_t[]){12});
    test_expect_close(flat, (double[]){1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}, 12, 0, 0);
    tj_tensor *cols = tj_repeat_interleave_self_int(x, 2, true, -1, true, 6);
    test_assert_dtype_shape(cols, TJ_FLOAT32, 2, (int64_t[]){2, 6});
    test_expect_close(cols, (double[]){1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}, 12, 0, 0);
    tj_tensor *rows = tj_repeat_interleave_self_tensor(x, i64v(2, (int64_t[]){1, 2}), true, 0, false, 0);
    test_expect_close(rows, (double[]){1, 2, 3, 4, 5, 6, 4, 5, 6}, 9, 0, 0);
    /* a 0-dim count serves every slice */
    tj_tensor *two = tj_scalar_tensor(tj_v_int(2), TJ_INT64);
    test_expect_same(tj_repeat_interleave_self_tensor(x, two, false, 0, false, 0), flat, "0-dim count");
    test_assert_dtype_shape(tj_repeat_interleave_self_int(x, 0, true, 0, false, 0), TJ_FLOAT32, 2, (int64_t[]){0, 3});
}

/* x.repeat_interleave(torch.tensor([1, 2]), dim=0), (y * arange(9).view(3, 3)).sum():
 * x.grad [[0, 1, 2], [9, 11, 13]] (index_select's gradient) */
Test(fold_cdist, repeat_interleave_gradient_flows_through_self)
{
    tj_tensor *x = test_f32(2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6}), *g;
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    tj_tensor *w = arange_f32(2, (int64_t[]){3, 3});
    tj_tensor *y = tj_repeat_interleave_self_tensor(x, i64v(2, (int64_t[]){1, 2}), true, 0, false, 0);
    tj_tensor *loss = tj_sum(tj_mul(y, w), TJ_DTYPE_NONE);
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, &x, 1, &g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g, (double[]){0, 1, 2, 9, 11, 13}, 6, 0, 0);
    /* self_int: each element's gradient is the sum of its two copies' */
    loss = tj_sum(tj_mul(tj_repeat_interleave_self_int(x, 2, true, 1, false, 0), tj_reshape(arange_f32(1, (int64_t[]){12}), (int64_t[]){2, 6}, 2)), TJ_DTYPE_NONE);
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, &x, 1, &g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g, (double[]){1, 5, 9, 13, 17, 21}, 6, 0, 0);
}

Test(fold_cdist, repeat_interleave_errors_name_the_operator)
{
    test_expect_error(tj_repeat_interleave(i64v(3, (int64_t[]){1, -1, 2}), false, 0), TJ_ERR_INVALID_ARGUMENT,
                      "aten::repeat_interleave.Tensor", "repeats can not be negative (repeats[1] = -1)");
    test_expect_error(tj_repeat_interleave(i64v(2, (int64_t[]){1, -1}), true, 0), TJ_ERR_INVALID_ARGUMENT,
                      "aten::repeat_interleave.Tensor", "negative");
    test_expect_error(tj_repeat_interleave(i64v(2, (int64_t[]){2, 1}), true, 4), TJ_ERR_INVALID_ARGUMENT,
                      "aten::repeat_interleave.Tensor", "output_size 4 is not the sum of repeats, 3");
    test_expect_error(tj_repeat_interleave(i64v(2, (int64_t[]){INT64_MAX, 1}), false, 0), TJ_ERR_OVERFLOW,
                      "aten::repeat_interleave.Tensor", "INT64_MAX");
    test_expect_error(tj_repeat_interleave(test_i64(2, (int64_t[]){1, 2}, (int64_t[]){1, 2}), false, 0), TJ_ERR_SHAPE,
                      "aten::repeat_interleave.Tensor", "only accept 1D vector");
    test_expect_error(tj_repeat_interleave(test_f32(1, (int64_t[]){2}, (float[]){1, 2}), false, 0), TJ_ERR_DTYPE,
                      "aten::repeat_interleave.Tensor", "Long or Int");
    tj_tensor *x = tj_zeros((int64_t[]){2, 3}, 2, TJ_FLOAT32);
    test_expect_error(tj_repeat_interleave_self_int(x, -1, true, 0, false, 0), TJ_ERR_INVALID_ARGUMENT,
                      "aten::repeat_interleave.self_int", "repeats can not be negative, got -1");
    test_expect_error(tj_repeat_interleave_self_int(x, 2, true, 2, false, 0), TJ_ERR_INDEX,
                      "aten::repeat_interleave.self_int", "out of range");
    /* torch: "Dimension specified as 0 but tensor has no dimensions"; without a dim it flattens */
    tj_tensor *s = tj_scalar_tensor(tj_v_float(3), TJ_FLOAT32);
    test_expect_error(tj_repeat_interleave_self_int(s, 2, true, 0, false, 0), TJ_ERR_INDEX,
                      "aten::repeat_interleave.self_int", "Dimension specified as 0 but tensor has no dimensions");
    test_expect_close(tj_repeat_interleave_self_int(s, 2, false, 0, false, 0), (double[]){3, 3}, 2, 0, 0);
    test_expect_error(tj_repeat_interleave_self_int(x, 2, true, 0, true, 5), TJ_ERR_INVALID_ARGUMENT,
                      "aten::repeat_interleave.self_int", "output_size 5");
    test_expect_error(tj_repeat_interleave_self_int(x, INT64_MAX / 2, true, 1, false, 0), TJ_ERR_OVERFLOW,
                      "aten::repeat_interleave.self_int", "exceeds INT64_MAX");
    test_expect_error(tj_repeat_interleave_self_tensor(x, i64v(3, (int64_t[]){1, 1, 1}), true, 0, false, 0),
                      TJ_ERR_SHAPE, "aten::repeat_interleave.self_Tensor",
                      "repeats must have the same size as input along dim");
    test_expect_error(tj_repeat_interleave_self_tensor(x, test_i64(2, (int64_t[]){1, 2}, (int64_t[]){1, 2}), true, 0,
                                                       false, 0),
                      TJ_ERR_SHAPE, "aten::repeat_interleave.self_Tensor", "0-dim or 1-dim");
}

/* ---- traces ---- */

typedef struct {
    bool tensor_counts, give_size;
} ri_case;

/* x.repeat_interleave(2 or counts, dim=0), with output_size when asked */
static tj_status fn_repeat_rows(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    const ri_case *c = ctx;
    out[0] = c->tensor_counts ? tj_repeat_interleave_self_tensor(in[0], in[1], true, 0, c->give_size, 3)
                 : tj_repeat_interleave_self_int(in[0], 2, true, 0, false, 0);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* PyTorch's fake mode raises DynamicOutputShapeException for every
 * repeat_interleave; here only counts whose sum is unknown are refused */
Test(fold_cdist, fake_mode_refuses_counts_whose_sum_is_data)
{
    tj_tensor *in[2] = {test_f32(2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6}), i64v(2, (int64_t[]){1, 2})};
    tj_graph *g = tj_make_fx(fn_repeat_rows, &(ri_case){true, false}, in, 2, NULL, TJ_TRACE_FAKE);
    cr_expect_null(g);
    cr_expect_eq(tj_last_status(), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "aten::repeat_interleave.Tensor") && strstr(tj_last_error(), "output_size"),
              "%s", tj_last_error());
    tj_graph_free(g);
    /* a real-mode trace records it (as torch's make_fx does), which no plan holds */
    g = tj_make_fx(fn_repeat_rows, &(ri_case){true, false}, in, 2, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *plan = tj_compile(g, NULL);
    cr_expect_null(plan);
    cr_expect(strstr(tj_last_error(), "aten::repeat_interleave.Tensor") && strstr(tj_last_error(), "output_size"),
              "%s", tj_last_error());
    tj_plan_free(plan);
    tj_graph_free(g);
    /* output_size, and self_int (whose size is static), trace in fake mode and replay */
    g = tj_make_fx(fn_repeat_rows, &(ri_case){true, true}, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    test_expect_close(test_replay1(g, in, 2), (double[]){1, 2, 3, 4, 5, 6, 4, 5, 6}, 9, 0, 0);
    /* a run whose counts sum otherwise is refused by the kernel */
    tj_tensor *other[2] = {in[0], i64v(2, (int64_t[]){2, 2})}, *y;
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_expect_neq(tj_plan_run(p, other, 2, &y), TJ_OK);
    cr_expect(strstr(tj_last_error(), "output_size 3 is not the sum of repeats, 4"), "%s", tj_last_error());
    tj_plan_free(p);
    tj_graph_free(g);
    g = tj_make_fx(fn_repeat_rows, &(ri_case){false, false}, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    test_expect_close(test_replay1(g, in, 2), (double[]){1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}, 12, 0, 0);
    tj_graph_free(g);
}

/* F.fold(F.unfold(x) * 0.5), torch.cdist at p 2 and 1.5 and their
 * gradients, traced in fake mode and lowered by the core table: the same
 * values as eagerly (col2im and the sums in another order) */
static tj_status fn_fold_cdist(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    const int64_t k[2] = {3, 3}, size[2] = {6, 7}, two[2] = {2, 2};
    tj_tensor *img = tj_col2im(tj_mul_scalar(tj_im2col(in[0], k, one2, one2, two), tj_v_float(0.5)), size, k, one2,
                               one2, two);
    tj_tensor *rep = tj_repeat_interleave_self_int(in[1], 2, true, 0, false, 0);
    tj_tensor *d = tj__cdist_forward(rep, in[2], 2, false, 0), *d1 = tj__cdist_forward(rep, in[2], 1.5, false, 0);
    tj_tensor *loss = tj_add(tj_sum(tj_mul(img, img), TJ_DTYPE_NONE), tj_sum(tj_mul(d, d1), TJ_DTYPE_NONE));
    out[0] = loss;
    *n_out = 1;
    if (!loss) return tj_last_status();
    tj_status st = tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){in[0], in[1], in[2]}, 3, out + 1);
    *n_out = 4;
    return st;
}

Test(fold_cdist, traced_and_lowered_graph_matches_eager)
{
    tj_tensor *in[3] = {test_random_f32(4, (int64_t[]){2, 3, 6, 7}, 5), test_random_f32(2, (int64_t[]){3, 4}, 6),
                        test_random_f32(2, (int64_t[]){5, 4}, 7)};
    for (int i = 0; i < 3; i++) cr_assert_eq(tj_tensor_set_requires_grad(in[i], true), TJ_OK);
    tj_tensor *eager[4], *core[4];
    test_run_eager(fn_fold_cdist, in, 3, eager, 4);
    test_run_core(fn_fold_cdist, NULL, in, 3, core);
    const char *what[4] = {"loss", "x.grad", "pts.grad", "ref.grad"};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(tj_tensor_numel(core[i]), tj_tensor_numel(eager[i]));
        for (int64_t j = 0; j < tj_tensor_numel(eager[i]); j++)
            cr_expect(test_close(tj_tensor_item_at(core[i], j), tj_tensor_item_at(eager[i], j), 1e-5, 1e-6),
                      "%s[%lld]: %g vs %g", what[i], (long long)j, tj_tensor_item_at(core[i], j),
                      tj_tensor_item_at(eager[i], j));
    }
}
