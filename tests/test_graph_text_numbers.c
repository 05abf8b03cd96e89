/* Numbers in graph text: a number written where an operator wants a Tensor
 * (torch 1.13's make_fx records `x + 1` as aten.add.Tensor(x_1, 1), a
 * wrapped number) reads as the operator's Scalar overload.
 *
 * The values are torch 1.13's, from /usr/bin/python3 with
 *     a = torch.ops.aten
 *     x = torch.tensor([-1.5, 0.25, 2.0]); xi = torch.tensor([1, -2, 3]); c = x > 0
 *     ((x + 1) * 2.5 - torch.where(x > 0, x, 0.) + torch.pow(x, 2)).tolist()  # [1.0, 2.9375, 9.5]
 *     a.add.Tensor(xi, 2.5)              # float32 [3.5, 0.5, 5.5]
 *     a.add.Tensor(xi, 2)                # int64 [3, 0, 5]
 *     a.mul.Tensor(xi, True)             # int64 [1, -2, 3]
 *     a.eq.Scalar(xi, 3)                 # bool [False, False, True]
 *     a.div.Tensor(xi, 2)                # float32 [0.5, -1.0, 1.5]
 *     a.sub.Tensor(xi, 1, alpha=2)       # int64 [-1, -4, 1]
 *     a.where.ScalarOther(c, xi, 0.5)    # float32 [0.5, -2.0, 3.0]
 *     a.remainder.Scalar_Tensor(5, x)    # float32 [-1.0, 0.0, 1.0]
 *     a.where.ScalarSelf(c, 1, x)        # float32 [-1.5, 1.0, 1.0]
 *     a.where.Scalar(c, 1, 0.5)          # float32 [0.5, 1.0, 1.0]
 *     a.clamp.default(x, 0)              # float32 [0.0, 0.25, 2.0]
 * (torch.ops refuses a number for eq.Tensor's or where.self's Tensor, which
 * make_fx's text still holds; the Scalar overloads give ATen's meaning of a
 * wrapped number.) */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

TestSuite(graph_text_numbers, .init = test_scope_open, .fini = test_scope_close);

static const int64_t S3[1] = {3};
static const float X[3] = {-1.5f, 0.25f, 2.f};
static const int64_t XI[3] = {1, -2, 3};
static const bool C[3] = {false, true, true}; /* x > 0 */

static tj_graph *parse(const char *text)
{
    tj_graph *g = tj_graph_parse(text);
    cr_assert_not_null(g, "%s", tj_last_error());
    return g;
}

static void expect_prints(const tj_graph *g, const char *want)
{
    char *text = tj_graph_to_string(g);
    cr_assert_not_null(text);
    cr_expect_str_eq(text, want);
    free(text);
}

/* t is int64 or bool with n elements equal to want's. */
static void expect_exact(const tj_tensor *t, tj_dtype dtype, const int64_t *want, int n)
{
    test_assert_dtype_shape(t, dtype, 1, (const int64_t[]){n});
    for (int i = 0; i < n; i++)
        cr_expect_eq(tj_tensor_item_at(t, i), (double)want[i], "element %d: %g, torch %lld", i,
                     tj_tensor_item_at(t, i), (long long)want[i]);
}

Test(graph_text_numbers, make_fx_text_with_wrapped_numbers_runs_as_torch)
{
    /* make_fx's code for the function above, with its scalar_tensor for
     * where's 0. written as the number */
    tj_graph *g = parse("graph(%x_1 : f32[3]):\n"
                        "    %add = aten.add.Tensor(%x_1, 1)\n"
                        "    %mul = aten.mul.Tensor(%add, 2.5)\n"
                        "    %gt = aten.gt.Scalar(%x_1, 0)\n"
                        "    %where = aten.where.self(%gt, %x_1, 0.)\n"
                        "    %sub = aten.sub.Tensor(%mul, %where)\n"
                        "    %pow_1 = aten.pow.Tensor_Scalar(%x_1, 2)\n"
                        "    %add_1 = aten.add.Tensor(%sub, %pow_1)\n"
                        "    return (%add_1,)\n");
    expect_prints(g, "graph(%x_1 : f32[3]):\n"
                     "    %add = aten.add.Scalar(%x_1, 1)\n"
                     "    %mul = aten.mul.Scalar(%add, 2.5)\n"
                     "    %gt = aten.gt.Scalar(%x_1, 0)\n"
                     "    %where = aten.where.ScalarOther(%gt, %x_1, 0.0)\n"
                     "    %sub = aten.sub.Tensor(%mul, %where)\n"
                     "    %pow_1 = aten.pow.Tensor_Scalar(%x_1, 2)\n"
                     "    %add_1 = aten.add.Tensor(%sub, %pow_1)\n"
                     "    return (%add_1,)\n");
    tj_tensor *x = test_f32(1, S3, X), *out;
    cr_assert_eq(tj_graph_run(g, &x, 1, &out), TJ_OK, "%s", tj_last_error());
    test_expect_f32(out, (const float[]){1.f, 2.9375f, 9.5f}, 3, 0);
    tj_graph_free(g);
}

Test(graph_text_numbers, wrapped_numbers_promote_as_scalars)
{
    tj_graph *g = parse("graph(%x : i64[3], %c : b8[3]):\n"
                        "    %a = aten.add.Tensor(%x, 2.5)\n"
                        "    %b = aten.add.Tensor(%x, 2)\n"
                        "    %m = aten.mul.Tensor(%x, True)\n"
                        "    %e = aten.eq.Tensor(%x, 3)\n"
                        "    %d = aten.div.Tensor(%x, 2)\n"
                        "    %s = aten.sub.Tensor(%x, 1, alpha = 2)\n"
                        "    %w = aten.where.self(%c, %x, 0.5)\n"
                        "    return (%a, %b, %m, %e, %d, %s, %w)\n");
    expect_prints(g, "graph(%x : i64[3], %c : b8[3]):\n"
                     "    %a = aten.add.Scalar(%x, 2.5)\n"
                     "    %b = aten.add.Scalar(%x, 2)\n"
                     "    %m = aten.mul.Scalar(%x, True)\n"
                     "    %e = aten.eq.Scalar(%x, 3)\n"
                     "    %d = aten.div.Scalar(%x, 2)\n"
                     "    %s = aten.sub.Scalar(%x, 1, 2)\n"
                     "    %w = aten.where.ScalarOther(%c, %x, 0.5)\n"
                     "    return (%a, %b, %m, %e, %d, %s, %w)\n");
    tj_tensor *in[2] = {test_i64(1, S3, XI), test_tensor(TJ_BOOL, 1, S3, C)}, *out[7];
    cr_assert_eq(tj_graph_run(g, in, 2, out), TJ_OK, "%s", tj_last_error());
    test_expect_f32(out[0], (const float[]){3.5f, 0.5f, 5.5f}, 3, 0);
    expect_exact(out[1], TJ_INT64, (const int64_t[]){3, 0, 5}, 3);
    expect_exact(out[2], TJ_INT64, (const int64_t[]){1, -2, 3}, 3);
    expect_exact(out[3], TJ_BOOL, (const int64_t[]){0, 0, 1}, 3);
    test_expect_f32(out[4], (const float[]){0.5f, -1.f, 1.5f}, 3, 0);
    expect_exact(out[5], TJ_INT64, (const int64_t[]){-1, -4, 1}, 3);
    test_expect_f32(out[6], (const float[]){0.5f, -2.f, 3.f}, 3, 0);
    tj_graph_free(g);
}

/* also: clamp.Tensor with a number and a bound left None is clamp, and an
 * in-place add_.Tensor is add_.Scalar */
Test(graph_text_numbers, a_number_as_self_takes_the_overload_with_a_scalar_self)
{
    tj_graph *g = parse("graph(%x : f32[3], %c : b8[3]):\n"
                        "    %r = aten.remainder.Tensor(5, %x)\n"
                        "    %s = aten.where.self(%c, 1, %x)\n"
                        "    %b = aten.where.self(%c, 1, 0.5)\n"
                        "    %m = aten.clamp.Tensor(%x, 0)\n"
                        "    %y = aten.add_.Tensor(%x, 1)\n"
                        "    return (%r, %s, %b, %m)\n");
    expect_prints(g, "graph(%x : f32[3], %c : b8[3]):\n"
                     "    %r = aten.remainder.Scalar_Tensor(5, %x)\n"
                     "    %s = aten.where.ScalarSelf(%c, 1, %x)\n"
                     "    %b = aten.where.Scalar(%c, 1, 0.5)\n"
                     "    %m = aten.clamp.default(%x, 0)\n"
                     "    %y = aten.add_.Scalar(%x, 1)\n"
                     "    return (%r, %s, %b, %m)\n");
    /* the add_ runs after the others: they read x as given */
    tj_tensor *in[2] = {test_f32(1, S3, X), test_tensor(TJ_BOOL, 1, S3, C)}, *out[4];
    cr_assert_eq(tj_graph_run(g, in, 2, out), TJ_OK, "%s", tj_last_error());
    test_expect_f32(out[0], (const float[]){-1.f, 0.f, 1.f}, 3, 0);
    test_expect_f32(out[1], (const float[]){-1.5f, 1.f, 1.f}, 3, 0);
    test_expect_f32(out[2], (const float[]){0.5f, 1.f, 1.f}, 3, 0);
    test_expect_f32(out[3], (const float[]){0.f, 0.25f, 2.f}, 3, 0);
    test_expect_f32(in[0], (const float[]){-0.5f, 1.25f, 3.f}, 3, 0);
    tj_graph_free(g);
}

Test(graph_text_numbers, a_number_no_overload_takes_is_an_error_naming_operator_and_argument)
{
    test_expect_error(tj_graph_parse("graph(%x : f32[3]):\n"
                                     "    %m = aten.maximum.default(%x, 1)\n"
                                     "    return (%m,)\n"),
                      TJ_ERR_PARSE, "tj_graph_parse",
                      "line 2, column 35: aten::maximum: argument 'other' wants a Tensor; no overload takes a "
                      "Scalar there");
    /* ATen's pow.Scalar (a number as self) is no tjit operator */
    test_expect_error(tj_graph_parse("graph(%x : f32[3]):\n"
                                     "    %p = aten.pow.Tensor_Tensor(2, %x)\n"
                                     "    return (%p,)\n"),
                      TJ_ERR_PARSE, "tj_graph_parse",
                      "line 2, column 33: aten::pow.Tensor_Tensor: argument 'self' wants a Tensor; no overload takes "
                      "a Scalar there");
    test_expect_error(tj_graph_parse("graph(%x : f32[3]):\n"
                                     "    %r = aten.remainder.Tensor(2, 1.5)\n"
                                     "    return (%r,)\n"),
                      TJ_ERR_PARSE, "tj_graph_parse",
                      "line 2, column 32: aten::remainder.Tensor: arguments 'self', 'other' want Tensors; no "
                      "overload takes Scalars there");
}

/* Float constants print with the fewest digits that read back to the same
 * float32 (float64) bits, laid out as Python's repr (as numpy's repr of a
 * np.float32 writes these digits): printed, parsed and printed again, each
 * element keeps its bits. */
static const uint32_t F32_BITS[] = {
    0x00000001, /* the least denormal */
    0x007fffff, /* the greatest denormal */
    0x00800000, /* FLT_MIN */
    0x7f7fffff, /* FLT_MAX */
    0x3dcccccd, /* 0.1f */
    0x80000000, /* -0.0 */
    0x3eaaaaab, /* 1/3 */
    0x3f800001, /* 1 + ulp */
    0x4b800000, /* 2^24 */
    0x7fc00000, /* nan */
    0x7f800000, /* inf */
    0xff800000, /* -inf */
};
static const uint64_t F64_BITS[] = {
    0x0000000000000001, /* the least denormal */
    0x7fefffffffffffff, /* DBL_MAX */
    0x3fb999999999999a, /* 0.1 */
    0x8000000000000000, /* -0.0 */
    0x3fd5555555555555, /* 1/3 */
    0x4341c37937e08000, /* 1e16 */
    0x7ff8000000000000, /* nan */
    0xfff0000000000000, /* -inf */
};
#define N32 (int)(sizeof F32_BITS / sizeof F32_BITS[0])
#define N64 (int)(sizeof F64_BITS / sizeof F64_BITS[0])

Test(graph_text_numbers, float_constants_print_shortest_and_read_back_bit_exact)
{
    /* the values in 17 digits, which read back exactly */
    char text[2048], num[48];
    snprintf(text, sizeof text, "graph():\n    %%c : f32[%d] = constant([", N32);
    for (int i = 0; i < N32; i++) {
        snprintf(num, sizeof num, "%s%.17e", i ? ", " : "", test_f32_bits(F32_BITS[i]));
        strcat(text, num);
    }
    snprintf(num, sizeof num, "])\n    %%d : f64[%d] = constant([", N64);
    strcat(text, num);
    for (int i = 0; i < N64; i++) {
        snprintf(num, sizeof num, "%s%.17e", i ? ", " : "", test_f64_bits(F64_BITS[i]));
        strcat(text, num);
    }
    strcat(text, "])\n    return (%c, %d)\n");
    tj_graph *g = parse(text);
    const char *shortest = "graph():\n"
                           "    %c : f32[12] = constant([1e-45, 1.1754942e-38, 1.1754944e-38, 3.4028235e+38, 0.1, "
                           "-0.0, 0.33333334, 1.0000001, 16777216.0, nan, inf, -inf])\n"
                           "    %d : f64[8] = constant([5e-324, 1.7976931348623157e+308, 0.1, -0.0, "
                           "0.3333333333333333, 1e+16, nan, -inf])\n"
                           "    return (%c, %d)\n";
    expect_prints(g, shortest);
    tj_graph_free(g);
    g = parse(shortest);
    expect_prints(g, shortest);
    tj_tensor *out[2];
    cr_assert_eq(tj_graph_run(g, NULL, 0, out), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < N32; i++) {
        uint32_t got = test_bits_f32((float)tj_tensor_item_at(out[0], i));
        cr_expect_eq(got, F32_BITS[i], "f32 element %d: bits %08x, printed from %08x", i, got, F32_BITS[i]);
    }
    for (int i = 0; i < N64; i++) {
        uint64_t got = test_bits_f64(tj_tensor_item_at(out[1], i));
        cr_expect_eq(got, F64_BITS[i], "f64 element %d: bits %016llx, printed from %016llx", i,
                     (unsigned long long)got, (unsigned long long)F64_BITS[i]);
    }
    tj_graph_free(g);
}
