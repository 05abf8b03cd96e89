/* Creation and random operators: zeros, ones, full, arange (its three
 * overloads), empty, scalar_tensor, the *_like and new_* families, eye,
 * linspace (dtype inference, values, empty sizes, error paths, their
 * decompositions, make_fx's records and FX text) and the Philox
 * generator behind rand, randn, bernoulli and bernoulli_ (known-answer vectors,
 * reproducibility by seed, independence from the thread count, ranges and
 * rough moments). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "runtime/internal.h"
#include "runtime/random.h"
#include "test_util.h"

TestSuite(create, .init = test_scope_open, .fini = test_scope_close);
TestSuite(random, .init = test_scope_open, .fini = test_scope_close);

static void expect(const tj_tensor *t, tj_dtype dtype, int ndim, const int64_t *shape, const double *want)
{
    int64_t n = test_assert_dtype_shape(t, dtype, ndim, shape);
    for (int64_t i = 0; i < n; i++) {
        double g = tj_tensor_item_at(t, i);
        cr_assert(g == want[i] || (isnan(g) && isnan(want[i])), "[%lld] = %.9g, want %.9g", (long long)i, g, want[i]);
    }
}

static void expect_error(const tj_tensor *t, tj_status status, const char *needle)
{
    cr_assert_null(t);
    cr_assert_eq(tj_last_status(), status, "status %s: %s", tj_status_name(tj_last_status()), tj_last_error());
    cr_assert(strstr(tj_last_error(), needle), "message '%s' lacks '%s'", tj_last_error(), needle);
}

/* ---- zeros / ones / full / scalar_tensor ---- */

Test(create, zeros_and_ones_default_to_float32)
{
    expect(tj_zeros((int64_t[]){2, 2}, 2, -1), TJ_FLOAT32, 2, (int64_t[]){2, 2}, (double[]){0, 0, 0, 0});
    expect(tj_ones((int64_t[]){3}, 1, -1), TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){1, 1, 1});
    expect(tj_ones(NULL, 0, TJ_INT64), TJ_INT64, 0, NULL, (double[]){1});
    expect(tj_ones((int64_t[]){2}, 1, TJ_BOOL), TJ_BOOL, 1, (int64_t[]){2}, (double[]){1, 1});
    expect(tj_ones((int64_t[]){1, 2}, 2, TJ_FLOAT64), TJ_FLOAT64, 2, (int64_t[]){1, 2}, (double[]){1, 1});
    expect(tj_zeros((int64_t[]){0, 4}, 2, -1), TJ_FLOAT32, 2, (int64_t[]){0, 4}, NULL);
}

Test(create, large_fill_covers_every_element)
{
    int64_t n = 300001;
    tj_tensor *t = tj_ones((int64_t[]){n}, 1, TJ_FLOAT64);
    cr_assert_not_null(t);
    const double *p = tj_tensor_data(t);
    for (int64_t i = 0; i < n; i++) cr_assert_eq(p[i], 1.0, "[%lld]", (long long)i);
}

Test(create, negative_or_too_many_dims_are_errors)
{
    expect_error(tj_zeros((int64_t[]){2, -1}, 2, -1), TJ_ERR_SHAPE, "aten::zeros: Trying to create tensor with negative dimension -1");
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    expect_error(tj_ones(nine, 9, -1), TJ_ERR_INVALID_ARGUMENT, "aten::ones");
    expect_error(tj_zeros((int64_t[]){INT64_C(1) << 40, INT64_C(1) << 40}, 2, -1), TJ_ERR_OVERFLOW, "aten::zeros");
}

Test(create, full_infers_its_dtype_from_the_fill_value)
{
    expect(tj_full((int64_t[]){2}, 1, tj_v_int(7), -1), TJ_INT64, 1, (int64_t[]){2}, (double[]){7, 7});
    expect(tj_full((int64_t[]){2}, 1, tj_v_float(1.5), -1), TJ_FLOAT32, 1, (int64_t[]){2}, (double[]){1.5, 1.5});
    expect(tj_full((int64_t[]){1}, 1, tj_v_bool(true), -1), TJ_BOOL, 1, (int64_t[]){1}, (double[]){1});
    expect(tj_full((int64_t[]){2}, 1, tj_v_float(-INFINITY), -1), TJ_FLOAT32, 1, (int64_t[]){2},
           (double[]){-INFINITY, -INFINITY});
    expect(tj_full((int64_t[]){2}, 1, tj_v_float(2.9), TJ_INT64), TJ_INT64, 1, (int64_t[]){2}, (double[]){2, 2});
    expect(tj_full((int64_t[]){0, 3}, 2, tj_v_int(1), TJ_BOOL), TJ_BOOL, 2, (int64_t[]){0, 3}, NULL);
    tj_tensor *big = tj_full((int64_t[]){1}, 1, tj_v_int(INT64_MAX), -1);
    cr_assert_eq(*(int64_t *)tj_tensor_data(big), INT64_MAX);
}

Test(create, full_rejects_values_that_overflow_the_dtype)
{
    expect_error(tj_full((int64_t[]){2}, 1, tj_v_float(NAN), TJ_INT64), TJ_ERR_INVALID_ARGUMENT,
                 "aten::full: value nan cannot be converted to type int64");
    expect_error(tj_full((int64_t[]){2}, 1, tj_v_float(1e300), TJ_FLOAT32), TJ_ERR_INVALID_ARGUMENT, "aten::full");
}

Test(create, scalar_tensor_defaults_to_float32)
{
    expect(tj_scalar_tensor(tj_v_int(3), -1), TJ_FLOAT32, 0, NULL, (double[]){3});
    expect(tj_scalar_tensor(tj_v_float(3.5), -1), TJ_FLOAT32, 0, NULL, (double[]){3.5});
    expect(tj_scalar_tensor(tj_v_int(2), TJ_BOOL), TJ_BOOL, 0, NULL, (double[]){1});
    expect(tj_scalar_tensor(tj_v_float(-2.5), TJ_INT64), TJ_INT64, 0, NULL, (double[]){-2});
}

/* ---- arange ---- */

Test(create, arange_of_integers_is_int64)
{
    expect(tj_arange(tj_v_int(0), tj_v_int(10), tj_v_int(3), -1), TJ_INT64, 1, (int64_t[]){4}, (double[]){0, 3, 6, 9});
    expect(tj_arange(tj_v_int(5), tj_v_int(-4), tj_v_int(-3), -1), TJ_INT64, 1, (int64_t[]){3}, (double[]){5, 2, -1});
    expect(tj_arange(tj_v_int(-2), tj_v_int(3), tj_v_int(1), TJ_FLOAT32), TJ_FLOAT32, 1, (int64_t[]){5},
           (double[]){-2, -1, 0, 1, 2});
    expect(tj_arange(tj_v_int(4), tj_v_int(4), tj_v_int(1), -1), TJ_INT64, 1, (int64_t[]){0}, NULL);
}

Test(create, arange_with_a_float_argument_is_float32_of_ceil_length)
{
    tj_tensor *t = tj_arange(tj_v_float(0.0), tj_v_float(1.0), tj_v_float(0.1), -1);
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(t), TJ_FLOAT32);
    cr_assert_eq(tj_tensor_numel(t), 10);
    for (int i = 0; i < 10; i++) cr_assert_eq(tj_tensor_item_at(t, i), (double)(float)(0.1 * i));
    /* ceil(0.3 / 0.1) in double is 3 (0.3/0.1 = 2.9999999999999996) */
    cr_assert_eq(tj_tensor_numel(tj_arange(tj_v_int(0), tj_v_float(0.3), tj_v_float(0.1), -1)), 3);
    expect(tj_arange(tj_v_float(1.0), tj_v_int(0), tj_v_float(-0.25), TJ_FLOAT64), TJ_FLOAT64, 1, (int64_t[]){4},
           (double[]){1, 0.75, 0.5, 0.25});
}

Test(create, arange_rejects_zero_step_wrong_sign_and_bool)
{
    expect_error(tj_arange(tj_v_int(0), tj_v_int(3), tj_v_int(0), -1), TJ_ERR_INVALID_ARGUMENT,
                 "aten::arange.start_step: step must be nonzero");
    expect_error(tj_arange(tj_v_int(0), tj_v_int(3), tj_v_int(-1), -1), TJ_ERR_INVALID_ARGUMENT,
                 "inconsistent with step sign");
    expect_error(tj_arange(tj_v_float(0), tj_v_float(-1), tj_v_float(0.5), -1), TJ_ERR_INVALID_ARGUMENT,
                 "inconsistent with step sign");
    /* int64 arithmetic truncates the step 0.5 to 0, as PyTorch does */
    expect_error(tj_arange(tj_v_int(0), tj_v_float(2.5), tj_v_float(0.5), TJ_INT64), TJ_ERR_INVALID_ARGUMENT,
                 "step must be nonzero");
    expect_error(tj_arange(tj_v_float(0), tj_v_float(INFINITY), tj_v_float(1), -1), TJ_ERR_INVALID_ARGUMENT,
                 "unsupported range");
    expect_error(tj_arange(tj_v_int(0), tj_v_int(3), tj_v_int(1), TJ_BOOL), TJ_ERR_DTYPE, "aten::arange");
}

/* torch 1.13: torch.arange(4), torch.arange(2.5), torch.arange(True) ([0]), torch.arange(4.7, dtype=torch.int64),
 * torch.arange(1, 5), torch.arange(1, 2.5), torch.arange(-3, -3), torch.arange(0.5, 2, dtype=torch.float64) */
Test(create, arange_and_arange_start_are_int64_for_integer_scalars_else_float32)
{
    expect(tj_arange_default(tj_v_int(4), -1), TJ_INT64, 1, (int64_t[]){4}, (double[]){0, 1, 2, 3});
    expect(tj_arange_default(tj_v_float(2.5), -1), TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){0, 1, 2});
    expect(tj_arange_default(tj_v_bool(true), -1), TJ_INT64, 1, (int64_t[]){1}, (double[]){0});
    expect(tj_arange_default(tj_v_float(4.7), TJ_INT64), TJ_INT64, 1, (int64_t[]){4}, (double[]){0, 1, 2, 3});
    expect(tj_arange_start(tj_v_int(1), tj_v_int(5), -1), TJ_INT64, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
    expect(tj_arange_start(tj_v_int(1), tj_v_float(2.5), -1), TJ_FLOAT32, 1, (int64_t[]){2}, (double[]){1, 2});
    expect(tj_arange_start(tj_v_int(-3), tj_v_int(-3), -1), TJ_INT64, 1, (int64_t[]){0}, NULL);
    expect(tj_arange_start(tj_v_float(0.5), tj_v_int(2), TJ_FLOAT64), TJ_FLOAT64, 1, (int64_t[]){2}, (double[]){0.5, 1.5});
}

/* torch: "upper bound and larger bound inconsistent with step sign" for arange(-3) and arange(5, 1),
 * "unsupported range: 0 -> inf", "arange_cpu" not implemented for 'Bool' */
Test(create, arange_overloads_name_themselves_in_their_errors)
{
    expect_error(tj_arange_default(tj_v_int(-3), -1), TJ_ERR_INVALID_ARGUMENT,
                 "aten::arange: upper bound and larger bound inconsistent with step sign (start 0, end -3, step 1)");
    expect_error(tj_arange_start(tj_v_int(5), tj_v_int(1), -1), TJ_ERR_INVALID_ARGUMENT,
                 "aten::arange.start: upper bound and larger bound inconsistent with step sign (start 5, end 1, step 1)");
    expect_error(tj_arange_start(tj_v_float(0), tj_v_float(INFINITY), -1), TJ_ERR_INVALID_ARGUMENT,
                 "aten::arange.start: unsupported range: 0 -> inf");
    expect_error(tj_arange_default(tj_v_int(3), TJ_BOOL), TJ_ERR_DTYPE, "aten::arange: not implemented for 'bool'");
    expect_error(tj_arange_default(tj_v_float(NAN), TJ_INT64), TJ_ERR_INVALID_ARGUMENT, "aten::arange: value nan");
    expect_error(tj_arange_default(tj_v_int(3), 99), TJ_ERR_INVALID_ARGUMENT, "aten::arange");
}

/* ---- empty ---- */

Test(create, empty_is_zero_filled_float32_unless_given_a_dtype)
{
    expect(tj_empty((int64_t[]){2, 3}, 2, -1), TJ_FLOAT32, 2, (int64_t[]){2, 3}, (double[]){0, 0, 0, 0, 0, 0});
    expect(tj_empty((int64_t[]){3}, 1, TJ_INT64), TJ_INT64, 1, (int64_t[]){3}, (double[]){0, 0, 0});
    expect(tj_empty(NULL, 0, TJ_BOOL), TJ_BOOL, 0, NULL, (double[]){0});
    expect(tj_empty((int64_t[]){0, 4}, 2, TJ_FLOAT64), TJ_FLOAT64, 2, (int64_t[]){0, 4}, NULL);
    /* torch.empty(2, -1): "Trying to create tensor with negative dimension -1: [2, -1]" */
    expect_error(tj_empty((int64_t[]){2, -1}, 2, -1), TJ_ERR_SHAPE,
                 "aten::empty.memory_format: Trying to create tensor with negative dimension -1: [2, -1]");
    expect_error(tj_empty((int64_t[]){INT64_C(1) << 40, INT64_C(1) << 40}, 2, -1), TJ_ERR_OVERFLOW,
                 "aten::empty.memory_format");
}

/* ---- Philox and the generator ---- */

Test(random, philox_matches_the_random123_known_answers)
{
    /* kat_vectors of Random123: philox4x32 10 ctr[4] key[2] -> out[4] */
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
         0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
         0x24126ea1},
    };
    for (int k = 0; k < 3; k++) {
        uint32_t out[4];
        tj_k_philox4x32_10(kat[k], kat[k] + 4, out);
        for (int i = 0; i < 4; i++) cr_assert_eq(out[i], kat[k][6 + i], "vector %d word %d: %08x", k, i, out[i]);
    }
}

static void copy_f32(tj_tensor *t, float *dst)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_copy_to(t, dst), TJ_OK);
}

Test(random, same_seed_gives_same_numbers_and_the_stream_advances)
{
    float a[64], b[64], c[64];
    tj_manual_seed(42);
    copy_f32(tj_rand((int64_t[]){8, 8}, 2, -1), a);
    copy_f32(tj_rand((int64_t[]){64}, 1, -1), c);
    tj_manual_seed(42);
    copy_f32(tj_rand((int64_t[]){64}, 1, -1), b);
    cr_assert_eq(memcmp(a, b, sizeof a), 0);
    cr_assert_neq(memcmp(a, c, sizeof a), 0, "a second call must continue the stream");
    tj_manual_seed(43);
    copy_f32(tj_rand((int64_t[]){64}, 1, -1), b);
    cr_assert_neq(memcmp(a, b, sizeof a), 0);
}

Test(random, values_do_not_depend_on_the_thread_count)
{
    enum { N = 200003 };
    static float u[2][N], g[2][N], m[2][N];
    for (int k = 0; k < 2; k++) {
        tj_set_num_threads(k ? 2 : 1);
        tj_manual_seed(1234);
        copy_f32(tj_rand((int64_t[]){N}, 1, -1), u[k]);
        copy_f32(tj_randn((int64_t[]){N}, 1, -1), g[k]);
        copy_f32(tj_bernoulli(tj_zeros((int64_t[]){N}, 1, -1), 0.5), m[k]);
    }
    cr_assert_eq(memcmp(u[0], u[1], sizeof u[0]), 0);
    cr_assert_eq(memcmp(g[0], g[1], sizeof g[0]), 0);
    cr_assert_eq(memcmp(m[0], m[1], sizeof m[0]), 0);
}

Test(random, element_values_derive_from_their_index)
{
    /* draw i of a stream is lane i % 4 of counter offset + i / 4, so a fill
     * starting 2 counters later reproduces elements 8.. of the first */
    float a[64], b[16];
    tj_manual_seed(9);
    copy_f32(tj_rand((int64_t[]){64}, 1, -1), a);
    uint64_t seed, off;
    tj_random_get_state(&seed, &off);
    cr_assert_eq(seed, 9);
    cr_assert_eq(off, 16, "64 float32 draws take 16 counters");
    tj_random_uniform_f32(9, 2, b, 16);
    cr_assert_eq(memcmp(a + 8, b, sizeof b), 0);
    uint64_t s2, first = tj_random_reserve(5, &s2);
    cr_assert_eq(first, 16);
    cr_assert_eq(s2, 9);
    tj_random_get_state(NULL, &off);
    cr_assert_eq(off, 18, "5 draws round up to 2 counters");
}

Test(random, rand_is_in_the_unit_interval)
{
    tj_manual_seed(0);
    enum { N = 100000 };
    static float f[N];
    static double d[N];
    copy_f32(tj_rand((int64_t[]){N}, 1, -1), f);
    tj_tensor *t = tj_rand((int64_t[]){N}, 1, TJ_FLOAT64);
    cr_assert_eq(tj_tensor_dtype(t), TJ_FLOAT64);
    tj_tensor_copy_to(t, d);
    double sf = 0, sd = 0;
    for (int i = 0; i < N; i++) {
        cr_assert(f[i] >= 0.0f && f[i] < 1.0f, "%g", f[i]);
        cr_assert(d[i] >= 0.0 && d[i] < 1.0, "%g", d[i]);
        sf += f[i];
        sd += d[i];
    }
    cr_assert(fabs(sf / N - 0.5) < 0.01, "mean %g", sf / N);
    cr_assert(fabs(sd / N - 0.5) < 0.01, "mean %g", sd / N);
}

static void check_moments(tj_tensor *t)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    int64_t n = tj_tensor_numel(t);
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = tj_tensor_item_at(t, i);
        cr_assert(isfinite(v));
        s += v;
        s2 += v * v;
    }
    double mean = s / n, var = s2 / n - mean * mean;
    cr_assert(fabs(mean) < 0.01, "mean %g", mean);
    cr_assert(fabs(var - 1) < 0.01, "var %g", var);
}

Test(random, randn_has_mean_0_and_variance_1)
{
    tj_manual_seed(2024);
    check_moments(tj_randn((int64_t[]){1000, 1000}, 2, -1));
    check_moments(tj_randn((int64_t[]){1000001}, 1, TJ_FLOAT64));
}

Test(random, rand_rejects_integer_dtypes)
{
    expect_error(tj_rand((int64_t[]){2}, 1, TJ_INT64), TJ_ERR_DTYPE, "aten::rand");
    expect_error(tj_randn((int64_t[]){2}, 1, TJ_BOOL), TJ_ERR_DTYPE, "aten::randn");
}

Test(random, bernoulli_p0_p1_and_frequency)
{
    tj_tensor *x = tj_zeros((int64_t[]){100, 1000}, 2, TJ_FLOAT64);
    tj_tensor *zero = tj_bernoulli(x, 0.0), *one = tj_bernoulli(x, 1.0), *some = tj_bernoulli(x, 0.3);
    cr_assert_not_null(some, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(some), TJ_FLOAT64);
    cr_assert_eq(tj_tensor_ndim(some), 2);
    double count = 0;
    for (int64_t i = 0; i < 100000; i++) {
        cr_assert_eq(tj_tensor_item_at(zero, i), 0.0);
        cr_assert_eq(tj_tensor_item_at(one, i), 1.0);
        double v = tj_tensor_item_at(some, i);
        cr_assert(v == 0.0 || v == 1.0);
        count += v;
    }
    cr_assert(fabs(count / 100000 - 0.3) < 0.01, "frequency %g", count / 100000);
    tj_tensor *b = tj_bernoulli(tj_tensor_from_data(TJ_BOOL, 1, (int64_t[]){3}, (uint8_t[]){0, 0, 0}), 1.0);
    expect(b, TJ_BOOL, 1, (int64_t[]){3}, (double[]){1, 1, 1});
}

Test(random, bernoulli_rejects_p_outside_the_unit_interval)
{
    tj_tensor *x = tj_zeros((int64_t[]){2}, 1, -1);
    expect_error(tj_bernoulli(x, 1.5), TJ_ERR_INVALID_ARGUMENT, "aten::bernoulli.p");
    expect_error(tj_bernoulli(x, NAN), TJ_ERR_INVALID_ARGUMENT, "aten::bernoulli.p");
}

Test(random, bernoulli__fills_self_keeping_its_dtype_and_layout)
{
    tj_tensor *f = tj_zeros((int64_t[]){3}, 1, -1), *d = tj_full((int64_t[]){4}, 1, tj_v_float(7), TJ_FLOAT64);
    tj_tensor *i = tj_full((int64_t[]){2}, 1, tj_v_int(5), TJ_INT64);
    tj_tensor *b = tj_tensor_from_data(TJ_BOOL, 1, (int64_t[]){3}, (uint8_t[]){1, 0, 1});
    cr_assert_eq(tj_bernoulli_(f, 1.0), f, "%s", tj_last_error());
    expect(f, TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){1, 1, 1});
    cr_assert_eq(tj_bernoulli_(d, 0.0), d, "%s", tj_last_error());
    expect(d, TJ_FLOAT64, 1, (int64_t[]){4}, (double[]){0, 0, 0, 0});
    cr_assert_eq(tj_bernoulli_(i, 1.0), i, "%s", tj_last_error());
    expect(i, TJ_INT64, 1, (int64_t[]){2}, (double[]){1, 1});
    cr_assert_eq(tj_bernoulli_(b, 0.0), b, "%s", tj_last_error());
    expect(b, TJ_BOOL, 1, (int64_t[]){3}, (double[]){0, 0, 0});
    /* a transposed view: its base sees the draw, elements outside stay */
    tj_tensor *base = tj_full((int64_t[]){2, 3}, 2, tj_v_float(5), -1);
    tj_tensor *col = tj_select(tj_transpose(base, 0, 1), 0, 1); /* base[:, 1] */
    cr_assert_eq(tj_bernoulli_(col, 1.0), col, "%s", tj_last_error());
    expect(base, TJ_FLOAT32, 2, (int64_t[]){2, 3}, (double[]){5, 1, 5, 5, 1, 5});
}

Test(random, bernoulli__draws_one_with_probability_p)
{
    enum { N = 200000 };
    tj_manual_seed(7);
    tj_tensor *x = tj_zeros((int64_t[]){N}, 1, -1);
    cr_assert_eq(tj_bernoulli_(x, 0.7), x, "%s", tj_last_error());
    double ones = 0;
    for (int64_t k = 0; k < N; k++) {
        double v = tj_tensor_item_at(x, k);
        cr_assert(v == 0.0 || v == 1.0, "[%lld] = %g", (long long)k, v);
        ones += v;
    }
    /* sigma of the mean: sqrt(0.7 * 0.3 / N) ~ 0.001; allow 5 */
    cr_expect(fabs(ones / N - 0.7) < 5e-3, "mean %g", ones / N);
}

Test(random, bernoulli__rejects_p_outside_the_unit_interval_leaving_self)
{
    tj_tensor *x = tj_full((int64_t[]){2}, 1, tj_v_float(3), -1);
    expect_error(tj_bernoulli_(x, -0.1), TJ_ERR_INVALID_ARGUMENT, "aten::bernoulli_.float");
    expect_error(tj_bernoulli_(x, NAN), TJ_ERR_INVALID_ARGUMENT, "aten::bernoulli_.float");
    expect(x, TJ_FLOAT32, 1, (int64_t[]){2}, (double[]){3, 3});
    cr_expect(tj_op_is_random(tj_op_find("aten::bernoulli_.float")), "CSE must not merge two draws");
}

/* gm.code of torch 1.13's make_fx of F.dropout(x, 0.3, training=True), in
 * graph text: what a training-mode nn.Dropout records */
static const char dropout_text[] =
    "graph(%x_1 : f32[20000]):\n"
    "    %empty_like = aten.empty_like.default(%x_1, memory_format = torch.contiguous_format)\n"
    "    %bernoulli_ = aten.bernoulli_.float(%empty_like, 0.7)\n"
    "    %div_ = aten.div_.Scalar(%bernoulli_, 0.7)\n"
    "    %mul = aten.mul.Tensor(%x_1, %div_)\n"
    "    return (%mul,)\n";

/* Each element is 0 or x / 0.7 (torch's x * (1 / 0.7) in float32), and
 * about 70% are kept. */
static void expect_dropped_out(const tj_tensor *y, const tj_tensor *x)
{
    int64_t n = tj_tensor_numel(x), kept = 0;
    float scale = 1.0f / 0.7f;
    for (int64_t k = 0; k < n; k++) {
        float v = (float)tj_tensor_item_at(y, k), want = (float)tj_tensor_item_at(x, k) * scale;
        cr_assert(v == 0.0f || v == want, "[%lld] = %g, want 0 or %g", (long long)k, v, want);
        kept += v != 0.0f;
    }
    /* sigma of the kept fraction: sqrt(0.21 / 20000) ~ 0.0032; allow 5 */
    cr_expect(fabs((double)kept / n - 0.7) < 0.017, "kept %lld of %lld", (long long)kept, (long long)n);
}

Test(random, fx_text_of_a_training_dropout_replays_and_functionalises)
{
    tj_graph *g = tj_graph_parse(dropout_text);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor *x = tj_add_scalar(tj_arange(tj_v_int(0), tj_v_int(20000), tj_v_int(1), TJ_FLOAT32), tj_v_int(1));
    tj_tensor *interpreted, *replayed, *functional;
    tj_manual_seed(11);
    cr_assert_eq(tj_graph_run(g, &x, 1, &interpreted), TJ_OK, "%s", tj_last_error());
    expect_dropped_out(interpreted, x);
    tj_manual_seed(11);
    test_replay(g, &x, 1, &replayed, 1);
    cr_assert_eq(tj_pass_functionalize(g), 2, "bernoulli_ and div_ rewritten: %s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::bernoulli.p")), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::bernoulli_.float")), 0);
    tj_manual_seed(11);
    cr_assert_eq(tj_graph_run(g, &x, 1, &functional), TJ_OK, "%s", tj_last_error());
    /* one seed, one draw: the same mask through every path */
    for (int64_t k = 0; k < 20000; k++) {
        cr_assert_eq(tj_tensor_item_at(replayed, k), tj_tensor_item_at(interpreted, k), "[%lld]", (long long)k);
        cr_assert_eq(tj_tensor_item_at(functional, k), tj_tensor_item_at(interpreted, k), "[%lld]", (long long)k);
    }
    tj_graph_free(g);
}

/* the same dropout written with tjit's calls, traced by tj_make_fx */
static tj_status dropout_by_hand(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *mask = tj_bernoulli_(tj_empty_like(in[0], -1), 0.7);
    out[0] = mask ? tj_mul(in[0], tj_div_scalar_(mask, tj_v_float(0.7))) : NULL;
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(random, make_fx_records_bernoulli__and_the_core_table_its_functional_form)
{
    tj_tensor *x = tj_ones((int64_t[]){20000}, 1, -1), *eager, *traced;
    tj_manual_seed(5);
    test_run_eager(dropout_by_hand, &x, 1, &eager, 1);
    expect_dropped_out(eager, x);
    tj_graph *g = tj_make_fx(dropout_by_hand, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::bernoulli_.float")), 1);
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *d = tj_make_fx(dropout_by_hand, NULL, &x, 1, core, TJ_TRACE_FAKE);
    cr_assert_not_null(d, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(d, tj_op_find("aten::bernoulli_.float")), 0);
    cr_expect_eq(tj_graph_count_op(d, tj_op_find("aten::bernoulli.p")), 1);
    tj_manual_seed(5);
    cr_assert_eq(tj_graph_run(d, &x, 1, &traced), TJ_OK, "%s", tj_last_error());
    for (int64_t k = 0; k < 20000; k++)
        cr_assert_eq(tj_tensor_item_at(traced, k), tj_tensor_item_at(eager, k), "[%lld]", (long long)k);
    tj_graph_free(g);
    tj_graph_free(d);
    tj_decomp_table_free(core);
}

Test(random, bernoulli_mask_helper_keeps_with_probability_p)
{
    enum { N = 50000 };
    static uint8_t mask[N];
    uint64_t seed, off = tj_random_reserve(N, &seed);
    tj_random_bernoulli_u8(seed, off, 0.75, mask, N);
    int64_t kept = 0;
    for (int i = 0; i < N; i++) kept += mask[i];
    cr_assert(fabs((double)kept / N - 0.75) < 0.01, "kept %lld", (long long)kept);
}

/* ---- the *_like family ---- */

Test(create, like_operators_take_selfs_shape_and_dtype_unless_given_one)
{
    tj_tensor *x = tj_zeros((int64_t[]){2, 3}, 2, TJ_FLOAT64), *i = tj_ones((int64_t[]){3}, 1, TJ_INT64);
    expect(tj_zeros_like(x, -1), TJ_FLOAT64, 2, (int64_t[]){2, 3}, (double[]){0, 0, 0, 0, 0, 0});
    expect(tj_ones_like(x, -1), TJ_FLOAT64, 2, (int64_t[]){2, 3}, (double[]){1, 1, 1, 1, 1, 1});
    expect(tj_ones_like(i, TJ_FLOAT32), TJ_FLOAT32, 1, (int64_t[]){3}, (double[]){1, 1, 1});
    expect(tj_empty_like(i, TJ_BOOL), TJ_BOOL, 1, (int64_t[]){3}, (double[]){0, 0, 0});
    /* torch.full_like(torch.zeros(3, dtype=torch.int64), 2.7) is [2, 2, 2]; 0.5 into bool is True */
    expect(tj_full_like(i, tj_v_float(2.7), -1), TJ_INT64, 1, (int64_t[]){3}, (double[]){2, 2, 2});
    expect(tj_full_like(i, tj_v_float(0.5), TJ_BOOL), TJ_BOOL, 1, (int64_t[]){3}, (double[]){1, 1, 1});
    expect(tj_full_like(x, tj_v_float(-INFINITY), TJ_FLOAT32), TJ_FLOAT32, 2, (int64_t[]){2, 3},
           (double[]){-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY});
    expect(tj_zeros_like(tj_ones(NULL, 0, -1), -1), TJ_FLOAT32, 0, NULL, (double[]){0});
    expect(tj_ones_like(tj_zeros((int64_t[]){0, 2}, 2, -1), -1), TJ_FLOAT32, 2, (int64_t[]){0, 2}, NULL);
}

/* torch: "value cannot be converted to type float without overflow", and
 * rand_like / randn_like "not implemented for 'Long'" / "'Bool'" */
Test(create, like_operators_refuse_fills_that_overflow_and_integer_random_draws)
{
    tj_tensor *x = tj_zeros((int64_t[]){2}, 1, -1), *i = tj_zeros((int64_t[]){2}, 1, TJ_INT64);
    expect_error(tj_full_like(x, tj_v_float(1e39), -1), TJ_ERR_INVALID_ARGUMENT, "aten::full_like: value 1e+39");
    expect_error(tj_full_like(i, tj_v_float(NAN), -1), TJ_ERR_INVALID_ARGUMENT, "aten::full_like");
    expect_error(tj_rand_like(i, -1), TJ_ERR_DTYPE, "aten::rand_like: dtype int64");
    expect_error(tj_randn_like(x, TJ_BOOL), TJ_ERR_DTYPE, "aten::randn_like: dtype bool");
    expect_error(tj_zeros_like(x, 99), TJ_ERR_INVALID_ARGUMENT, "aten::zeros_like");
    expect_error(tj_ones_like(NULL, -1), TJ_ERR_INVALID_ARGUMENT, "aten::ones_like");
}

/* ---- the new_* family ---- */

/* torch 1.13: x = torch.zeros(2, 3, dtype=torch.float64), i = torch.tensor([4, -1, 7]);
 * x.new_zeros(2, 2), i.new_ones(3), i.new_zeros(2, dtype=torch.float32), i.new_full((2,), 2.7) ([2, 2]: self's
 * int64, not inferred from the value), x.new_full((1, 2), 3) (float64), i.new_full((2,), True) ([1, 1]),
 * x.new_empty(0, 2) */
Test(create, new_operators_take_size_and_selfs_dtype_unless_given_one)
{
    tj_tensor *x = tj_zeros((int64_t[]){2, 3}, 2, TJ_FLOAT64), *i = test_i64(1, (int64_t[]){3}, (int64_t[]){4, -1, 7});
    expect(tj_new_zeros(x, (int64_t[]){2, 2}, 2, -1), TJ_FLOAT64, 2, (int64_t[]){2, 2}, (double[]){0, 0, 0, 0});
    expect(tj_new_ones(i, (int64_t[]){3}, 1, -1), TJ_INT64, 1, (int64_t[]){3}, (double[]){1, 1, 1});
    expect(tj_new_zeros(i, (int64_t[]){2}, 1, TJ_FLOAT32), TJ_FLOAT32, 1, (int64_t[]){2}, (double[]){0, 0});
    expect(tj_new_ones(x, NULL, 0, TJ_BOOL), TJ_BOOL, 0, NULL, (double[]){1});
    expect(tj_new_full(i, (int64_t[]){2}, 1, tj_v_float(2.7), -1), TJ_INT64, 1, (int64_t[]){2}, (double[]){2, 2});
    expect(tj_new_full(x, (int64_t[]){1, 2}, 2, tj_v_int(3), -1), TJ_FLOAT64, 2, (int64_t[]){1, 2}, (double[]){3, 3});
    expect(tj_new_full(i, (int64_t[]){2}, 1, tj_v_bool(true), -1), TJ_INT64, 1, (int64_t[]){2}, (double[]){1, 1});
    expect(tj_new_full(x, (int64_t[]){2}, 1, tj_v_float(-INFINITY), TJ_FLOAT32), TJ_FLOAT32, 1, (int64_t[]){2},
           (double[]){-INFINITY, -INFINITY});
    expect(tj_new_empty(x, (int64_t[]){0, 2}, 2, -1), TJ_FLOAT64, 2, (int64_t[]){0, 2}, NULL);
    expect(tj_new_empty(i, (int64_t[]){2}, 1, -1), TJ_INT64, 1, (int64_t[]){2}, (double[]){0, 0});
}

/* torch: x.new_zeros(-1, 2): "Trying to create tensor with negative dimension -1: [-1, 2]";
 * i.new_full((2,), nan): "value cannot be converted to type int64_t without overflow" */
Test(create, new_operators_refuse_negative_sizes_overflowing_fills_and_no_self)
{
    tj_tensor *x = tj_zeros((int64_t[]){2}, 1, -1), *i = tj_zeros((int64_t[]){2}, 1, TJ_INT64);
    expect_error(tj_new_zeros(x, (int64_t[]){-1, 2}, 2, -1), TJ_ERR_SHAPE,
                 "aten::new_zeros: Trying to create tensor with negative dimension -1: [-1, 2]");
    expect_error(tj_new_empty(x, (int64_t[]){3, -2}, 2, -1), TJ_ERR_SHAPE, "aten::new_empty: Trying to create");
    expect_error(tj_new_full(i, (int64_t[]){2}, 1, tj_v_float(NAN), -1), TJ_ERR_INVALID_ARGUMENT,
                 "aten::new_full: value nan cannot be converted to type int64");
    expect_error(tj_new_full(x, (int64_t[]){2}, 1, tj_v_float(1e39), -1), TJ_ERR_INVALID_ARGUMENT,
                 "aten::new_full: value 1e+39");
    expect_error(tj_new_ones(NULL, (int64_t[]){2}, 1, -1), TJ_ERR_INVALID_ARGUMENT, "aten::new_ones");
    expect_error(tj_new_ones(x, (int64_t[]){2}, 1, 99), TJ_ERR_INVALID_ARGUMENT, "aten::new_ones");
}

Test(random, rand_like_and_randn_like_draw_rand_and_randns_stream)
{
    tj_tensor *i = tj_zeros((int64_t[]){3, 5}, 2, TJ_INT64);
    const int64_t shape[2] = {3, 5};
    tj_manual_seed(7);
    tj_tensor *a = tj_rand_like(i, TJ_FLOAT64), *b = tj_randn_like(tj_zeros(shape, 2, -1), -1);
    tj_manual_seed(7);
    tj_tensor *ra = tj_rand(shape, 2, TJ_FLOAT64), *rb = tj_randn(shape, 2, -1);
    test_expect_same(a, ra, "rand_like");
    test_expect_same(b, rb, "randn_like");
    tj_tensor *again = tj_rand_like(i, TJ_FLOAT64); /* the stream advanced */
    cr_expect_neq(tj_tensor_item_at(again, 0), tj_tensor_item_at(a, 0));
}

/* ---- eye / linspace ---- */

Test(create, eye_puts_ones_on_the_main_diagonal)
{
    expect(tj_eye(3, -1), TJ_FLOAT32, 2, (int64_t[]){3, 3}, (double[]){1, 0, 0, 0, 1, 0, 0, 0, 1});
    expect(tj_eye_m(2, 3, TJ_BOOL), TJ_BOOL, 2, (int64_t[]){2, 3}, (double[]){1, 0, 0, 0, 1, 0});
    expect(tj_eye_m(3, 2, TJ_INT64), TJ_INT64, 2, (int64_t[]){3, 2}, (double[]){1, 0, 0, 1, 0, 0});
    expect(tj_eye_m(0, 4, TJ_FLOAT64), TJ_FLOAT64, 2, (int64_t[]){0, 4}, NULL);
    /* torch: "n must be greater or equal to 0, got -1", "m must be greater or equal to 0, got -3" */
    expect_error(tj_eye(-1, -1), TJ_ERR_INVALID_ARGUMENT, "aten::eye: n must be greater or equal to 0, got -1");
    expect_error(tj_eye_m(2, -3, -1), TJ_ERR_INVALID_ARGUMENT, "aten::eye.m: m must be greater or equal to 0, got -3");
}

/* torch 1.13 (its scalar loop, below one vector of values):
 * torch.linspace(-2.5, 7, 7).tolist(), torch.linspace(3, -1, 6).tolist(),
 * torch.linspace(0.1, 0.7, 7, dtype=torch.float64).tolist() */
Test(create, linspace_matches_pytorch_from_both_ends)
{
    test_expect_f32(tj_linspace(tj_v_float(-2.5), tj_v_int(7), 7, -1),
                    (const float[]){-2.5f, -0.9166666269302368f, 0.6666667461395264f, 2.25f, 3.8333332538604736f,
                                    5.416666507720947f, 7.0f}, 7, 0);
    test_expect_f32(tj_linspace(tj_v_int(3), tj_v_int(-1), 6, -1),
                    (const float[]){3.0f, 2.200000047683716f, 1.399999976158142f, 0.6000000238418579f,
                                    -0.19999998807907104f, -1.0f}, 6, 0);
    expect(tj_linspace(tj_v_float(0.1), tj_v_float(0.7), 7, TJ_FLOAT64), TJ_FLOAT64, 1, (int64_t[]){7},
           (double[]){0.1, 0.2, 0.3, 0.39999999999999997, 0.5, 0.6, 0.7});
    /* torch.linspace(0, 10, 5, dtype=torch.int64): [0, 2, 5, 7, 10]; (-7, 7, 6): [-7, -4, -1, 1, 4, 7] */
    expect(tj_linspace(tj_v_int(0), tj_v_int(10), 5, TJ_INT64), TJ_INT64, 1, (int64_t[]){5}, (double[]){0, 2, 5, 7, 10});
    expect(tj_linspace(tj_v_int(-7), tj_v_int(7), 6, TJ_INT64), TJ_INT64, 1, (int64_t[]){6},
           (double[]){-7, -4, -1, 1, 4, 7});
    /* torch.linspace(2, 1, 1): [2.]; (0, inf, 4): [nan, inf, nan, nan]; steps 0: empty */
    expect(tj_linspace(tj_v_int(2), tj_v_int(1), 1, -1), TJ_FLOAT32, 1, (int64_t[]){1}, (double[]){2});
    expect(tj_linspace(tj_v_int(0), tj_v_float(INFINITY), 4, -1), TJ_FLOAT32, 1, (int64_t[]){4},
           (double[]){NAN, INFINITY, NAN, NAN});
    expect(tj_linspace(tj_v_int(0), tj_v_int(1), 0, -1), TJ_FLOAT32, 1, (int64_t[]){0}, NULL);
}

/* float64 reference: torch.linspace(-1, 3, 1001, dtype=torch.float64) is
 * -1 + 0.004 i; the float32 result is within an ulp of it everywhere */
Test(create, long_linspace_stays_within_an_ulp_of_the_exact_values)
{
    tj_tensor *t = tj_linspace(tj_v_int(-1), tj_v_int(3), 1001, -1);
    double want[1001];
    for (int i = 0; i < 1001; i++) want[i] = i < 500 ? -1 + 0.004 * i : 3 - 0.004 * (1000 - i);
    test_expect_close(t, want, 1001, 1.2e-7, 1.2e-7);
    cr_expect_eq(tj_tensor_item_at(t, 1000), 3.0);
}

Test(create, linspace_refuses_negative_steps_bool_and_overflowing_bounds)
{
    /* torch: "number of steps must be non-negative", "linspace_cpu" not implemented for 'Bool',
     * "value cannot be converted to type float without overflow" */
    expect_error(tj_linspace(tj_v_int(0), tj_v_int(1), -1, -1), TJ_ERR_INVALID_ARGUMENT,
                 "aten::linspace: number of steps must be non-negative, got -1");
    expect_error(tj_linspace(tj_v_int(0), tj_v_int(1), 3, TJ_BOOL), TJ_ERR_DTYPE, "aten::linspace: not implemented for 'bool'");
    expect_error(tj_linspace(tj_v_float(-1e39), tj_v_int(1), 3, -1), TJ_ERR_INVALID_ARGUMENT, "aten::linspace");
}

/* zeros_like, full_like, eye.m and linspace traced with the core table:
 * primitives only, and the kernels' values */
static tj_status creations(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_add(tj_zeros_like(in[0], -1), tj_full_like(in[0], tj_v_float(1.5), -1));
    out[1] = tj_eye_m(3, 4, TJ_FLOAT64);
    out[2] = tj_linspace(tj_v_float(-2.5), tj_v_int(7), 21, -1);
    out[3] = tj_linspace(tj_v_int(-7), tj_v_int(7), 33, TJ_INT64);
    *n_out = 4;
    return out[0] && out[1] && out[2] && out[3] ? TJ_OK : tj_last_status();
}

Test(create, like_eye_and_linspace_decompose_to_primitives_with_the_kernels_values)
{
    tj_tensor *in[1] = {tj_ones((int64_t[]){2, 3}, 2, TJ_FLOAT64)}, *got[4], *want[4];
    cr_expect(test_run_core(creations, NULL, in, 1, got));
    int n;
    cr_assert_eq(creations(NULL, in, 1, want, &n), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < 4; k++) test_expect_same(got[k], want[k], "output");
}

/* torch.arange(4) + torch.arange(1, 5) + x.new_zeros(4) + x.new_ones(4) + x.new_full((4,), 3.0)
 * + x.new_empty(4) + torch.empty(4), and torch.empty(2, 4, dtype=torch.int64) */
static tj_status fx_creations(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    const int64_t four[1] = {4}, two_four[2] = {2, 4};
    tj_tensor *sum = tj_add(tj_arange_default(tj_v_int(4), -1), tj_arange_start(tj_v_int(1), tj_v_int(5), -1));
    sum = tj_add(tj_add(sum, tj_new_zeros(in[0], four, 1, -1)), tj_new_ones(in[0], four, 1, -1));
    sum = tj_add(tj_add(sum, tj_new_full(in[0], four, 1, tj_v_float(3.0), -1)), tj_new_empty(in[0], four, 1, -1));
    out[0] = tj_add(sum, tj_empty(four, 1, -1));
    out[1] = tj_empty(two_four, 2, TJ_INT64);
    *n_out = 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

Test(create, make_fx_records_arange_empty_and_new_operators_by_their_aten_names)
{
    /* torch 1.13's make_fx records these names; the core table lowers them to full and arange.start_step */
    const char *want[] = {"aten.arange.default(4)", "aten.arange.start(1, 5)", "aten.new_zeros.default(%arg0_1, [4])",
                          "aten.new_ones.default(%arg0_1, [4])", "aten.new_full.default(%arg0_1, [4], 3.0)",
                          "aten.new_empty.default(%arg0_1, [4])", "aten.empty.memory_format([4])",
                          "aten.empty.memory_format([2, 4], dtype = torch.int64)"};
    tj_tensor *x = test_f32(1, (int64_t[]){4}, (const float[]){0.5f, -1.f, 2.f, 0.f});
    test_expect_traced(fx_creations, &x, 1, 2, want, 8, NULL, 0);
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(fx_creations, NULL, &x, 1, core, TJ_TRACE_FAKE);
    tj_decomp_table_free(core);
    cr_assert_not_null(g, "%s", tj_last_error());
    test_expect_op_count(g, (const char *const[]){"aten::arange.start_step"}, 1, 2);
    test_expect_op_count(g, (const char *const[]){"aten::full"}, 1, 6);
    tj_graph_free(g);
    /* arange(4) + arange(1, 5) + 0 + 1 + 3 + 0 + 0, in float32 (x's dtype) */
    tj_tensor *got[2];
    int n;
    cr_assert_eq(fx_creations(NULL, &x, 1, got, &n), TJ_OK, "%s", tj_last_error());
    test_expect_f32(got[0], (const float[]){5, 7, 9, 11}, 4, 0);
    test_expect_i64(got[1], 8, (const int64_t[]){0, 0, 0, 0, 0, 0, 0, 0});
}

/* gm.code of torch 1.13's make_fx of fx_creations above (torch.empty(2, 4) float32 here), in graph text */
Test(create, fx_text_of_the_creation_operators_parses_and_runs)
{
    const char *text =
        "graph(%x_1 : f32[4]):\n"
        "    %arange = aten.arange.default(4, device = device(type='cpu'), pin_memory = False)\n"
        "    %arange_1 = aten.arange.start(1, 5, device = device(type='cpu'), pin_memory = False)\n"
        "    %add = aten.add.Tensor(%arange, %arange_1)\n"
        "    %new_zeros = aten.new_zeros.default(%x_1, [4], dtype = torch.float32, layout = torch.strided, "
        "device = device(type='cpu'), pin_memory = False)\n"
        "    %add_1 = aten.add.Tensor(%add, %new_zeros)\n"
        "    %new_ones = aten.new_ones.default(%x_1, [4], dtype = torch.float32, layout = torch.strided, "
        "device = device(type='cpu'), pin_memory = False)\n"
        "    %add_2 = aten.add.Tensor(%add_1, %new_ones)\n"
        "    %new_full = aten.new_full.default(%x_1, [4], 3.0, dtype = torch.float32, layout = torch.strided, "
        "device = device(type='cpu'), pin_memory = False)\n"
        "    %add_3 = aten.add.Tensor(%add_2, %new_full)\n"
        "    %new_empty = aten.new_empty.default(%x_1, [4], dtype = torch.float32, layout = torch.strided, "
        "device = device(type='cpu'), pin_memory = False)\n"
        "    %mul = aten.mul.Tensor(%new_empty, 0)\n"
        "    %add_4 = aten.add.Tensor(%add_3, %mul)\n"
        "    %empty = aten.empty.memory_format([4], device = device(type='cpu'), pin_memory = False)\n"
        "    %mul_1 = aten.mul.Tensor(%empty, 0)\n"
        "    %add_5 = aten.add.Tensor(%add_4, %mul_1)\n"
        "    %empty_1 = aten.empty.memory_format([2, 4], device = device(type='cpu'), pin_memory = False)\n"
        "    return (%add_5, %empty_1)\n";
    tj_graph *g = tj_graph_parse(text);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor *x = test_f32(1, (int64_t[]){4}, (const float[]){0.5f, -1.f, 2.f, 0.f}), *out[2];
    test_replay(g, &x, 1, out, 2);
    /* torch: [5., 7., 9., 11.] (float32: int64 + float32), and a float32 [2, 4] (zeros here) */
    test_expect_f32(out[0], (const float[]){5, 7, 9, 11}, 4, 0);
    test_expect_f32(out[1], (const float[]){0, 0, 0, 0, 0, 0, 0, 0}, 8, 0);
    tj_graph_free(g);
}
