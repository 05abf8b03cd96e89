/* tj_tensor_print / tj_tensor_to_string against PyTorch's repr. Every
 * expected string is repr(t) from PyTorch 1.13 (/usr/bin/python3) for the
 * same values, pasted as a literal, e.g.
 *     repr(torch.tensor([[1., 2.], [3., 4.]], dtype=torch.float64))
 *     repr((torch.arange(1120, dtype=torch.float32) / 3 - 200).reshape(8, 2, 70))
 * (the expression is in each test's name or comment); float32 data are the
 * float32 values printed with 9 significant digits. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_counter.h"
#include "tjit/tjit.h"

#define I64(...) ((const int64_t[]){__VA_ARGS__})

TestSuite(print, .init = count_allocations);

static tj_tensor *make(tj_dtype dtype, int ndim, const int64_t *shape, const void *data)
{
    tj_tensor *t = tj_tensor_from_data(dtype, ndim, shape, data);
    cr_assert_not_null(t, "%s", tj_last_error());
    return t;
}

/* Checks the repr of t and releases t; nothing may stay allocated. */
static void expect_repr(tj_tensor *t, const char *expected)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    int64_t live = live_allocations();
    char *s = tj_tensor_to_string(t);
    cr_assert_not_null(s, "%s", tj_last_error());
    cr_expect_str_eq(s, expected);
    free(s);
    cr_expect_eq(live_allocations(), live, "printing allocated through the hook and kept it");
    tj_tensor_release(t);
}

/* A contiguous tensor of n elements, element i being f(i), of `shape`. */
static tj_tensor *filled(tj_dtype dtype, int ndim, const int64_t *shape, double (*f)(int64_t))
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    tj_tensor *t = tj_tensor_empty(dtype, ndim, shape);
    cr_assert_not_null(t, "%s", tj_last_error());
    for (int64_t i = 0; i < n; i++) {
        void *p = (char *)tj_tensor_data(t) + i * (int64_t)tj_dtype_size(dtype);
        switch (dtype) {
        case TJ_FLOAT32: *(float *)p = (float)f(i); break;
        case TJ_FLOAT64: *(double *)p = f(i); break;
        case TJ_INT64: *(int64_t *)p = (int64_t)f(i); break;
        case TJ_BOOL: *(bool *)p = f(i) != 0; break;
        default: cr_assert(false, "no values for dtype %s", tj_dtype_name(dtype)); break;
        }
    }
    return t;
}

/* ============================ values and formats ============================ */

Test(print, float32_matrix_of_integers)
{
    static const float data[] = {1.0f, 2.0f, 3.0f, 4.0f};
    expect_repr(make(TJ_FLOAT32, 2, I64(2, 2), data),
        "tensor([[1., 2.],\n"
        "        [3., 4.]])");
}

Test(print, float64_gets_dtype_suffix)
{
    static const double data[] = {1.0, 2.0, 3.0, 4.0};
    expect_repr(make(TJ_FLOAT64, 2, I64(2, 2), data),
        "tensor([[1., 2.],\n"
        "        [3., 4.]], dtype=torch.float64)");
}

Test(print, float32_fixed_point_four_digits)
{
    static const float data[] = {0.100000001f, -2.5f, 3.14159012f, 0.333333343f};
    expect_repr(make(TJ_FLOAT32, 1, I64(4), data),
        "tensor([ 0.1000, -2.5000,  3.1416,  0.3333])");
}

Test(print, float64_fixed_point_four_digits)
{
    static const double data[] = {0.10000000000000001, -2.5, 3.1415899999999999, 0.33333333333333331};
    expect_repr(make(TJ_FLOAT64, 1, I64(4), data),
        "tensor([ 0.1000, -2.5000,  3.1416,  0.3333], dtype=torch.float64)");
}

Test(print, int64_right_aligned)
{
    static const int64_t data[] = {-1, 20, 300, 4000};
    expect_repr(make(TJ_INT64, 1, I64(4), data),
        "tensor([  -1,   20,  300, 4000])");
}

/* torch.tensor([-2**63, 2**63 - 1]) */
Test(print, int64_extremes)
{
    static const int64_t data[] = {INT64_MIN, 9223372036854775807};
    expect_repr(make(TJ_INT64, 1, I64(2), data),
        "tensor([-9223372036854775808,  9223372036854775807])");
}

Test(print, bool_true_false)
{
    static const bool data[] = {true, false, true};
    expect_repr(make(TJ_BOOL, 1, I64(3), data),
        "tensor([ True, False,  True])");
}

Test(print, small_min_switches_to_scientific)
{
    static const float data[] = {9.99999975e-06f, 1.0f, 2.5f};
    expect_repr(make(TJ_FLOAT32, 1, I64(3), data),
        "tensor([1.0000e-05, 1.0000e+00, 2.5000e+00])");
}

Test(print, large_ratio_integers_switch_to_scientific)
{
    static const float data[] = {1.0f, 2000.0f};
    expect_repr(make(TJ_FLOAT32, 1, I64(2), data),
        "tensor([1.0000e+00, 2.0000e+03])");
}

Test(print, above_1e8_switches_to_scientific)
{
    static const float data[] = {1.5f, 300000000.0f};
    expect_repr(make(TJ_FLOAT32, 1, I64(2), data),
        "tensor([1.5000e+00, 3.0000e+08])");
}

Test(print, integers_above_1e8_scientific)
{
    static const float data[] = {1.0f, 1e+09f, 2e+09f};
    expect_repr(make(TJ_FLOAT32, 1, I64(3), data),
        "tensor([1.0000e+00, 1.0000e+09, 2.0000e+09])");
}

Test(print, nan_inf_fixed_point)
{
    static const float data[] = {NAN, INFINITY, -INFINITY, 1.5f};
    expect_repr(make(TJ_FLOAT32, 1, I64(4), data),
        "tensor([   nan,    inf,   -inf, 1.5000])");
}

Test(print, nan_inf_integer_mode)
{
    static const float data[] = {NAN, INFINITY, -INFINITY, 2.0f};
    expect_repr(make(TJ_FLOAT32, 1, I64(4), data),
        "tensor([nan, inf, -inf, 2.])");
}

Test(print, nan_inf_scientific)
{
    static const float data[] = {NAN, -INFINITY, 1.00000001e-07f, 1.0f};
    expect_repr(make(TJ_FLOAT32, 1, I64(4), data),
        "tensor([       nan,       -inf, 1.0000e-07, 1.0000e+00])");
}

Test(print, negative_nan_prints_nan)
{
    static const float data[] = {-NAN, 1.25f};
    expect_repr(make(TJ_FLOAT32, 1, I64(2), data),
        "tensor([   nan, 1.2500])");
}

Test(print, all_nan)
{
    static const float data[] = {NAN, NAN};
    expect_repr(make(TJ_FLOAT32, 1, I64(2), data),
        "tensor([nan, nan])");
}

Test(print, zeros_only)
{
    static const float data[] = {0.0f, -0.0f, 0.0f};
    expect_repr(make(TJ_FLOAT32, 1, I64(3), data),
        "tensor([0., -0., 0.])");
}

Test(print, zeros_do_not_widen)
{
    static const float data[] = {0.0f, 100.0f, 0.5f};
    expect_repr(make(TJ_FLOAT32, 1, I64(3), data),
        "tensor([  0.0000, 100.0000,   0.5000])");
}

Test(print, scalar_float32)
{
    static const float data[] = {3.5f};
    expect_repr(make(TJ_FLOAT32, 0, I64(0), data),
        "tensor(3.5000)");
}

Test(print, scalar_float64)
{
    static const double data[] = {-0.125};
    expect_repr(make(TJ_FLOAT64, 0, I64(0), data),
        "tensor(-0.1250, dtype=torch.float64)");
}

Test(print, scalar_int64)
{
    static const int64_t data[] = {-7};
    expect_repr(make(TJ_INT64, 0, I64(0), data),
        "tensor(-7)");
}

Test(print, scalar_bool)
{
    static const bool data[] = {false};
    expect_repr(make(TJ_BOOL, 0, I64(0), data),
        "tensor(False)");
}

Test(print, scalar_integral_float)
{
    static const float data[] = {2.0f};
    expect_repr(make(TJ_FLOAT32, 0, I64(0), data),
        "tensor(2.)");
}

Test(print, scalar_nan)
{
    static const float data[] = {NAN};
    expect_repr(make(TJ_FLOAT32, 0, I64(0), data),
        "tensor(nan)");
}

Test(print, rank3_blank_line_between_matrices)
{
    static const float data[] = {-5.5f, -4.5f, -3.5f, -2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
    expect_repr(make(TJ_FLOAT32, 3, I64(2, 2, 3), data),
        "tensor([[[-5.5000, -4.5000, -3.5000],\n"
        "         [-2.5000, -1.5000, -0.5000]],\n"
        "\n"
        "        [[ 0.5000,  1.5000,  2.5000],\n"
        "         [ 3.5000,  4.5000,  5.5000]]])");
}

Test(print, rank4_two_blank_lines)
{
    static const int64_t data[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    expect_repr(make(TJ_INT64, 4, I64(2, 2, 2, 2), data),
        "tensor([[[[ 0,  1],\n"
        "          [ 2,  3]],\n"
        "\n"
        "         [[ 4,  5],\n"
        "          [ 6,  7]]],\n"
        "\n"
        "\n"
        "        [[[ 8,  9],\n"
        "          [10, 11]],\n"
        "\n"
        "         [[12, 13],\n"
        "          [14, 15]]]])");
}

Test(print, long_float_row_wraps)
{
    static const float data[] = {-3.0f, -1.75f, -0.5f, 0.75f, 2.0f, 3.25f, 4.5f, 5.75f, 7.0f, 8.25f, 9.5f, 10.75f, 12.0f, 13.25f, 14.5f, 15.75f, 17.0f, 18.25f, 19.5f, 20.75f, 22.0f, 23.25f, 24.5f, 25.75f, 27.0f, 28.25f, 29.5f, 30.75f, 32.0f, 33.25f};
    expect_repr(make(TJ_FLOAT32, 1, I64(30), data),
        "tensor([-3.0000, -1.7500, -0.5000,  0.7500,  2.0000,  3.2500,  4.5000,  5.7500,\n"
        "         7.0000,  8.2500,  9.5000, 10.7500, 12.0000, 13.2500, 14.5000, 15.7500,\n"
        "        17.0000, 18.2500, 19.5000, 20.7500, 22.0000, 23.2500, 24.5000, 25.7500,\n"
        "        27.0000, 28.2500, 29.5000, 30.7500, 32.0000, 33.2500])");
}

Test(print, long_int64_row_wraps)
{
    static const int64_t data[] = {-100, -93, -86, -79, -72, -65, -58, -51, -44, -37, -30, -23, -16, -9, -2, 5, 12, 19, 26, 33, 40, 47, 54, 61, 68, 75, 82, 89, 96, 103, 110, 117, 124, 131, 138, 145, 152, 159, 166, 173};
    expect_repr(make(TJ_INT64, 1, I64(40), data),
        "tensor([-100,  -93,  -86,  -79,  -72,  -65,  -58,  -51,  -44,  -37,  -30,  -23,\n"
        "         -16,   -9,   -2,    5,   12,   19,   26,   33,   40,   47,   54,   61,\n"
        "          68,   75,   82,   89,   96,  103,  110,  117,  124,  131,  138,  145,\n"
        "         152,  159,  166,  173])");
}

Test(print, wrapped_rows_inside_matrix)
{
    static const double data[] = {0.0, 0.33333333333333331, 0.66666666666666663, 1.0, 1.3333333333333333, 1.6666666666666667, 2.0, 2.3333333333333335, 2.6666666666666665, 3.0, 3.3333333333333335, 3.6666666666666665, 4.0, 4.333333333333333, 4.666666666666667, 5.0, 5.333333333333333, 5.666666666666667, 6.0, 6.333333333333333, 6.666666666666667, 7.0, 7.333333333333333, 7.666666666666667, 8.0, 8.3333333333333339, 8.6666666666666661, 9.0, 9.3333333333333339, 9.6666666666666661, 10.0, 10.333333333333334, 10.666666666666666, 11.0, 11.333333333333334, 11.666666666666666, 12.0, 12.333333333333334, 12.666666666666666, 13.0};
    expect_repr(make(TJ_FLOAT64, 2, I64(2, 20), data),
        "tensor([[ 0.0000,  0.3333,  0.6667,  1.0000,  1.3333,  1.6667,  2.0000,  2.3333,\n"
        "          2.6667,  3.0000,  3.3333,  3.6667,  4.0000,  4.3333,  4.6667,  5.0000,\n"
        "          5.3333,  5.6667,  6.0000,  6.3333],\n"
        "        [ 6.6667,  7.0000,  7.3333,  7.6667,  8.0000,  8.3333,  8.6667,  9.0000,\n"
        "          9.3333,  9.6667, 10.0000, 10.3333, 10.6667, 11.0000, 11.3333, 11.6667,\n"
        "         12.0000, 12.3333, 12.6667, 13.0000]], dtype=torch.float64)");
}

Test(print, dtype_suffix_moves_to_next_line)
{
    static const double data[] = {0.0, 1111.25, 2222.5, 3333.75, 4445.0, 5556.25, 6667.5, 7778.75, 8890.0, 10001.25, 11112.5, 12223.75};
    expect_repr(make(TJ_FLOAT64, 1, I64(12), data),
        "tensor([    0.0000,  1111.2500,  2222.5000,  3333.7500,  4445.0000,  5556.2500,\n"
        "         6667.5000,  7778.7500,  8890.0000, 10001.2500, 11112.5000, 12223.7500],\n"
        "       dtype=torch.float64)");
}

Test(print, int_width_counts_sign)
{
    static const int64_t data[] = {-10, 5, 3, 100};
    expect_repr(make(TJ_INT64, 2, I64(2, 2), data),
        "tensor([[-10,   5],\n"
        "        [  3, 100]])");
}

/* torch.arange(100, 105, dtype=torch.float64) * 1.25: with the suffix the line
 * is exactly 80 characters, which still fits. */
Test(print, dtype_suffix_fills_line_to_80)
{
    expect_repr(make(TJ_FLOAT64, 1, I64(5), (const double[]){125, 126.25, 127.5, 128.75, 130}),
        "tensor([125.0000, 126.2500, 127.5000, 128.7500, 130.0000], dtype=torch.float64)");
}

static double identity(int64_t i) { return (double)i; }
static double plus_1000(int64_t i) { return (double)i + 1000; }

/* torch.arange(1000, 1014, dtype=torch.float64).reshape(2, 7): one character
 * more on the last line than fits; the measure is the last line, not the first. */
Test(print, dtype_suffix_after_multiline_goes_to_next_line)
{
    expect_repr(filled(TJ_FLOAT64, 2, I64(2, 7), plus_1000),
        "tensor([[1000., 1001., 1002., 1003., 1004., 1005., 1006.],\n"
        "        [1007., 1008., 1009., 1010., 1011., 1012., 1013.]],\n"
        "       dtype=torch.float64)");
}

/* ============================ summarised (> 1000 elements) ============================ */

static double seventh_f32(int64_t i) { return (float)i / 7.0f; } /* arange(n, float32) / 7, in float32 */
static double third_minus_200_f32(int64_t i) { return (float)i / 3.0f - 200.0f; }
static double times_1e5(int64_t i) { return (double)i * 1e5; }
static double every_third(int64_t i) { return i % 3 == 0; }
static double plus_1000_but_half_at_1000(int64_t i) { return i == 1000 ? 0.5 : (double)i + 1000; }

/* torch.arange(2000).reshape(40, 50) */
Test(print, summarised_int64_matrix)
{
    expect_repr(filled(TJ_INT64, 2, I64(40, 50), identity),
        "tensor([[   0,    1,    2,  ...,   47,   48,   49],\n"
        "        [  50,   51,   52,  ...,   97,   98,   99],\n"
        "        [ 100,  101,  102,  ...,  147,  148,  149],\n"
        "        ...,\n"
        "        [1850, 1851, 1852,  ..., 1897, 1898, 1899],\n"
        "        [1900, 1901, 1902,  ..., 1947, 1948, 1949],\n"
        "        [1950, 1951, 1952,  ..., 1997, 1998, 1999]])");
}

/* torch.arange(1200, dtype=torch.float32) / 7: the " ..." item counts as one
 * item of the wrapped line. */
Test(print, summarised_vector_wraps_counting_the_ellipsis)
{
    expect_repr(filled(TJ_FLOAT32, 1, I64(1200), seventh_f32),
        "tensor([0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 1.7100e+02, 1.7114e+02,\n"
        "        1.7129e+02])");
}

/* (torch.arange(1120, dtype=torch.float32) / 3 - 200).reshape(8, 2, 70):
 * dims 0 and 2 are summarised, dim 1 (2 long) is not. */
Test(print, summarised_rank3_only_long_dims)
{
    expect_repr(filled(TJ_FLOAT32, 3, I64(8, 2, 70), third_minus_200_f32),
        "tensor([[[-200.0000, -199.6667, -199.3333,  ..., -177.6667, -177.3333,\n"
        "          -177.0000],\n"
        "         [-176.6667, -176.3333, -176.0000,  ..., -154.3333, -154.0000,\n"
        "          -153.6667]],\n"
        "\n"
        "        [[-153.3333, -153.0000, -152.6667,  ..., -131.0000, -130.6667,\n"
        "          -130.3333],\n"
        "         [-130.0000, -129.6667, -129.3333,  ..., -107.6667, -107.3333,\n"
        "          -107.0000]],\n"
        "\n"
        "        [[-106.6667, -106.3333, -106.0000,  ...,  -84.3333,  -84.0000,\n"
        "           -83.6667],\n"
        "         [ -83.3333,  -83.0000,  -82.6667,  ...,  -61.0000,  -60.6667,\n"
        "           -60.3333]],\n"
        "\n"
        "        ...,\n"
        "\n"
        "        [[  33.3333,   33.6667,   34.0000,  ...,   55.6667,   56.0000,\n"
        "            56.3333],\n"
        "         [  56.6667,   57.0000,   57.3333,  ...,   79.0000,   79.3333,\n"
        "            79.6667]],\n"
        "\n"
        "        [[  80.0000,   80.3333,   80.6667,  ...,  102.3333,  102.6667,\n"
        "           103.0000],\n"
        "         [ 103.3333,  103.6667,  104.0000,  ...,  125.6667,  126.0000,\n"
        "           126.3333]],\n"
        "\n"
        "        [[ 126.6667,  127.0000,  127.3333,  ...,  149.0000,  149.3333,\n"
        "           149.6667],\n"
        "         [ 150.0000,  150.3333,  150.6667,  ...,  172.3333,  172.6667,\n"
        "           173.0000]]])");
}

/* t = torch.arange(2000.) + 1000; t[1000] = 0.5: the format is chosen from
 * the elements shown only, so the hidden 0.5 does not turn on fixed point. */
Test(print, summarised_format_ignores_hidden_values)
{
    expect_repr(filled(TJ_FLOAT32, 1, I64(2000), plus_1000_but_half_at_1000),
        "tensor([1000., 1001., 1002.,  ..., 2997., 2998., 2999.])");
}

/* torch.arange(1001, dtype=torch.float64) * 1e5: max 1e8 and max/min 1000 are
 * both at the limit, not above it: integer mode, not scientific. */
Test(print, summarised_float64_integers_at_the_scientific_limits)
{
    expect_repr(filled(TJ_FLOAT64, 1, I64(1001), times_1e5),
        "tensor([        0.,    100000.,    200000.,  ...,  99800000.,  99900000.,\n"
        "        100000000.], dtype=torch.float64)");
}

/* torch.arange(1001) % 3 == 0 */
Test(print, summarised_bool)
{
    expect_repr(filled(TJ_BOOL, 1, I64(1001), every_third),
        "tensor([ True, False, False,  ..., False,  True, False])");
}

/* ============================ views ============================ */

/* torch.tensor([[1., 2, 3], [4, 5, 6]]).t() */
Test(print, transposed_view)
{
    tj_tensor *a = make(TJ_FLOAT32, 2, I64(2, 3), (const float[]){1, 2, 3, 4, 5, 6});
    expect_repr(tj_t(a),
        "tensor([[1., 4.],\n"
        "        [2., 5.],\n"
        "        [3., 6.]])");
    tj_tensor_release(a);
}

/* torch.arange(6.).as_strided([2, 1], [1, 2**63 - 1], 1): a size-1 dim's
 * stride is never stepped over, whatever it is (under the sanitizers, no
 * overflow scaling it to bytes) */
Test(print, a_size_one_dim_of_huge_stride)
{
    tj_tensor *a = make(TJ_FLOAT32, 1, I64(6), (const float[]){0, 1, 2, 3, 4, 5});
    expect_repr(tj_as_strided(a, I64(2, 1), I64(1, INT64_MAX), 2, true, 1), "tensor([[1.],\n        [2.]])");
    expect_repr(tj_as_strided(a, I64(1), I64(INT64_MAX), 1, true, 5), "tensor([5.])");
    /* a leading one, as unfold(1, 2, 2**63 - 1) of a [2, 3] gives */
    expect_repr(tj_as_strided(a, I64(1, 2), I64(INT64_MAX, 1), 2, true, 1), "tensor([[1., 2.]])");
    tj_tensor_release(a);
}

/* torch.arange(10)[::2] */
Test(print, stepped_slice)
{
    tj_tensor *a = filled(TJ_INT64, 1, I64(10), identity);
    expect_repr(tj_slice(a, 0, false, 0, false, 0, 2), "tensor([0, 2, 4, 6, 8])");
    tj_tensor_release(a);
}

/* torch.arange(6).reshape(2, 3)[1]: a storage offset */
Test(print, selected_row_with_storage_offset)
{
    tj_tensor *a = filled(TJ_INT64, 2, I64(2, 3), identity);
    expect_repr(tj_select(a, 0, 1), "tensor([3, 4, 5])");
    tj_tensor_release(a);
}

/* torch.tensor([1.5, -2, 3]).expand(2, 3): stride 0 */
Test(print, expanded_view)
{
    tj_tensor *a = make(TJ_FLOAT32, 1, I64(3), (const float[]){1.5f, -2, 3});
    expect_repr(tj_expand(a, I64(2, 3), 2),
        "tensor([[ 1.5000, -2.0000,  3.0000],\n"
        "        [ 1.5000, -2.0000,  3.0000]])");
    tj_tensor_release(a);
}

/* ============================ empty, fake, autograd ============================ */

Test(print, empty_tensors_show_size_unless_1d_and_dtype_unless_float32)
{
    expect_repr(tj_tensor_empty(TJ_FLOAT32, 2, I64(0, 3)), "tensor([], size=(0, 3))");
    expect_repr(tj_tensor_empty(TJ_FLOAT32, 1, I64(0)), "tensor([])");
    expect_repr(tj_tensor_empty(TJ_INT64, 1, I64(0)), "tensor([], dtype=torch.int64)");
    expect_repr(tj_tensor_empty(TJ_BOOL, 1, I64(0)), "tensor([], dtype=torch.bool)");
    expect_repr(tj_tensor_empty(TJ_FLOAT64, 2, I64(2, 0)), "tensor([], size=(2, 0), dtype=torch.float64)");
}

/* torch prints torch.empty(2, 3, device='meta') as
 * "tensor(..., device='meta', size=(2, 3))"; a fake tensor has no device. */
Test(print, fake_tensor_prints_like_a_meta_tensor)
{
    expect_repr(tj_tensor_fake(TJ_FLOAT32, 2, I64(2, 3)), "tensor(..., size=(2, 3))");
    expect_repr(tj_tensor_fake(TJ_FLOAT64, 1, I64(4)), "tensor(..., size=(4,), dtype=torch.float64)");
}

/* torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True); a result
 * of a recorded call (torch: grad_fn=<MulBackward0>) gets no suffix. */
Test(print, leaf_requiring_grad_gets_suffix)
{
    tj_tensor *a = make(TJ_FLOAT64, 1, I64(2), (const double[]){1, 2});
    cr_assert_eq(tj_tensor_set_requires_grad(a, true), TJ_OK, "%s", tj_last_error());
    char *s = tj_tensor_to_string(a);
    cr_expect_str_eq(s, "tensor([1., 2.], dtype=torch.float64, requires_grad=True)");
    free(s);
    expect_repr(tj_mul_scalar(a, tj_v_float(2)), "tensor([2., 4.], dtype=torch.float64)");
    tj_tensor_release(a);
}

/* ============================ tj_tensor_print ============================ */

Test(print, print_writes_repr_and_newline)
{
    tj_tensor *a = make(TJ_INT64, 0, NULL, (const int64_t[]){42});
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    cr_expect_eq(tj_tensor_print(a, f), TJ_OK, "%s", tj_last_error());
    fclose(f);
    cr_expect_str_eq(buf, "tensor(42)\n");
    free(buf);
    tj_tensor_release(a);
}

Test(print, null_arguments_are_invalid)
{
    cr_expect_eq(tj_tensor_print(NULL, stdout), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "tj_tensor_print: NULL tensor") != NULL, "%s", tj_last_error());
    tj_tensor *a = make(TJ_FLOAT32, 1, I64(1), (const float[]){1});
    cr_expect_eq(tj_tensor_print(a, NULL), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "NULL file") != NULL, "%s", tj_last_error());
    tj_clear_error();
    cr_expect_null(tj_tensor_to_string(NULL));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    tj_tensor_release(a);
}

Test(print, write_error_is_io)
{
    FILE *f = fopen("/dev/full", "w");
    cr_assert_not_null(f);
    setvbuf(f, NULL, _IONBF, 0);
    tj_tensor *a = make(TJ_FLOAT32, 1, I64(1), (const float[]){1});
    cr_expect_eq(tj_tensor_print(a, f), TJ_ERR_IO);
    fclose(f);
    tj_tensor_release(a);
}
