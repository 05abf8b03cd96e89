/* The float32 exact-GELU kernels (kernels/gelu.h) against a double-precision
 * reference over every float32 input: at most 2 ulp on each instruction set
 * the CPU has, on both the polynomial path (|x| < 4 in every lane) and the
 * general exp path (forced by one large lane per vector), plus the special
 * values and partial vectors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gelu.h"
#include "test_util.h"

typedef void (*gelu_fn)(int64_t n, void *out, const void *in);

#define BLOCK (1 << 16)
/* every 8th lane of a block set to this forces the general path of every
 * vector (of 8 or 16 lanes) */
#define FORCE_GENERAL 100.0f

/* gelu(x) in double, to ~1e-15 relative: x - x Phi(-x) from erfc ... */
static double reference_erfc(double x) { return 0.5 * x * erfc(-x * M_SQRT1_2); }

/* ... or, for |x| < 1/16 where erfc's argument would lose the low bits, a
 * Taylor series: x/2 + phi(0) x (x - x^3/6 + x^5/40 - x^7/336 + x^9/3456) */
static double reference_taylor(double x)
{
    double x2 = x * x;
    double odd = x * (1 - x2 / 6 * (1 - x2 * 6 / 40 * (1 - x2 * 40 / 336 * (1 - x2 * 336 / 3456))));
    return 0.5 * x + x * 0.3989422804014326779 * odd;
}

/* 1 / ulp of the float32 binade of y (2^149 for subnormal y), from the
 * exponent bits of (float)|y| */
static double inverse_ulp(double y)
{
    float f = (float)fabs(y);
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    uint64_t e = bits >> 23, d = (uint64_t)(1023 + 150 - (e > 1 ? e : 1)) << 52;
    double r;
    memcpy(&r, &d, sizeof r);
    return r;
}

/* false when y is not what gelu gives for a special x (nan, +-inf, +-0) */
static bool special_ok(float x, float y)
{
    if (isnan(x) || x == -INFINITY) return isnan(y);
    if (x == INFINITY) return y == INFINITY;
    return y == 0 && !signbit(x) == !signbit(y);
}

/* What a block of consecutive bit patterns (one sign and exponent, so its
 * first element has the smallest magnitude) is checked against. */
typedef enum region {
    R_SPECIAL,  /* nan or infinities */
    R_IDENTITY, /* x >= 6: x Phi(-x) < 2^-26 x, so gelu(x) rounds to x */
    R_MINUS_0,  /* x <= -15: |x Phi(x)| < 2^-160, so gelu(x) rounds to -0 */
    R_TAYLOR,   /* |x| < 1/16 */
    R_ERFC,
} region;

static region block_region(uint32_t first)
{
    float lo = test_f32_bits(first), hi = test_f32_bits(first + BLOCK - 1);
    if (((first >> 23) & 0xff) == 0xff) return R_SPECIAL;
    if (lo >= 6) return R_IDENTITY;
    if (lo <= -15) return R_MINUS_0;
    return fabsf(hi) < 0.0625f ? R_TAYLOR : R_ERFC;
}

typedef struct isa_case {
    const char *name;
    gelu_fn fn;
} isa_case;

/* Worst error and wrong results of one kernel on one path. */
typedef struct report {
    double worst;
    float worst_x;
    long wrong; /* wrong special values, nan results, wrong signs */
} report;

/* The results y of a block against the reference ref (1 / ulp: inv). */
static void check_block(region reg, const float *x, const float *y, const double *ref, const double *inv, report *r)
{
    long wrong = 0;
    switch (reg) {
    case R_SPECIAL:
        for (int i = 0; i < BLOCK; i++) wrong += !special_ok(x[i], y[i]);
        break;
    case R_IDENTITY:
        for (int i = 0; i < BLOCK; i++) wrong += test_bits_f32(y[i]) != test_bits_f32(x[i]);
        break;
    case R_MINUS_0:
        for (int i = 0; i < BLOCK; i++) wrong += test_bits_f32(y[i]) != 0x80000000u;
        break;
    default: {
        double worst = 0;
        for (int i = 0; i < BLOCK; i++) {
            double err = fabs((double)y[i] - ref[i]) * inv[i];
            /* a result of the other sign (-0 for +0 too), or nan (err nan) */
            wrong += ((test_bits_f32(x[i]) ^ test_bits_f32(y[i])) >> 31) | (err != err);
            worst = err > worst ? err : worst;
        }
        if (worst > r->worst) {
            for (int i = 0; i < BLOCK; i++)
                if (fabs((double)y[i] - ref[i]) * inv[i] == worst) r->worst_x = x[i];
            r->worst = worst;
        }
    }
    }
    r->wrong += wrong;
}

/* Runs every kernel of `isas` over all 2^32 inputs, both ways: reps[2 k]
 * the natural paths of kernel k, reps[2 k + 1] the general path forced (by
 * FORCE_GENERAL in every 8th lane; those lanes then take the natural
 * result, checked already) where the natural path is the polynomial one.
 * TJ_GELU_EXACT_STRIDE=S checks every S-th block of 2^16 inputs only: for
 * the sanitizer builds in CI, where the whole range costs ~7 minutes. */
static void check_all(const isa_case *isas, int n, report *reps)
{
    int64_t stride = (int64_t)test_env_count("TJ_GELU_EXACT_STRIDE", 1);
    memset(reps, 0, sizeof *reps * 2 * (size_t)n);
#pragma omp parallel
    {
        float *x = malloc(sizeof(float) * BLOCK), *xf = malloc(sizeof(float) * BLOCK),
              *y = malloc(sizeof(float) * BLOCK), *yf = malloc(sizeof(float) * BLOCK);
        double *ref = malloc(sizeof(double) * BLOCK), *inv = malloc(sizeof(double) * BLOCK);
        report mine[4];
        memset(mine, 0, sizeof mine);
        cr_assert(x && xf && y && yf && ref && inv && n <= 2);
#pragma omp for schedule(dynamic)
        for (int64_t b = 0; b < ((int64_t)1 << 32) / BLOCK; b += stride) {
            uint32_t first = (uint32_t)(b * BLOCK);
            region reg = block_region(first);
            /* |x| >= 4 (or nan) in every lane: the natural path is the general one */
            bool natural_is_general = !(fabsf(test_f32_bits(first + BLOCK - 1)) < 4.0f);
            for (int i = 0; i < BLOCK; i++) x[i] = xf[i] = test_f32_bits(first + (uint32_t)i);
            for (int i = 0; i < BLOCK; i += 8) xf[i] = FORCE_GENERAL;
            if (reg == R_TAYLOR)
                for (int i = 0; i < BLOCK; i++) ref[i] = reference_taylor(x[i]);
            else if (reg == R_ERFC)
                for (int i = 0; i < BLOCK; i++) ref[i] = reference_erfc(x[i]);
            if (reg == R_TAYLOR || reg == R_ERFC)
                for (int i = 0; i < BLOCK; i++) inv[i] = inverse_ulp(ref[i]);
            for (int k = 0; k < n; k++) {
                isas[k].fn(BLOCK, y, x);
                check_block(reg, x, y, ref, inv, &mine[2 * k]);
                if (!natural_is_general) {
                    isas[k].fn(BLOCK, yf, xf);
                    for (int i = 0; i < BLOCK; i += 8) yf[i] = y[i];
                    check_block(reg, x, yf, ref, inv, &mine[2 * k + 1]);
                }
            }
        }
#pragma omp critical
        for (int k = 0; k < 2 * n; k++) {
            if (mine[k].worst > reps[k].worst) reps[k].worst = mine[k].worst, reps[k].worst_x = mine[k].worst_x;
            reps[k].wrong += mine[k].wrong;
        }
        free(x);
        free(xf);
        free(y);
        free(yf);
        free(ref);
        free(inv);
    }
}

Test(gelu_exact, every_float32_within_2_ulp_on_each_isa_and_path_with_pytorch_special_values, .timeout = 1800)
{
    isa_case isas[2];
    int n = 0;
    if (test_cpu_has_avx512()) isas[n++] = (isa_case){"avx512", tj_k_gelu_f32_avx512};
    if (test_cpu_has_avx2()) isas[n++] = (isa_case){"avx2", tj_k_gelu_f32_avx2};
    if (!n) cr_skip_test("no AVX2 on this CPU");
    report reps[4];
    check_all(isas, n, reps);
    const char *path[2] = {"natural paths", "general path forced"};
    for (int k = 0; k < 2 * n; k++) {
        const report *r = &reps[k];
        cr_log_info("gelu %s, %s: worst %.3f ulp at x = %a", isas[k / 2].name, path[k % 2], r->worst,
                    (double)r->worst_x);
        cr_expect_leq(r->worst, 2.0, "gelu %s, %s: %.3f ulp at x = %a (%.9g)", isas[k / 2].name, path[k % 2],
                      r->worst, (double)r->worst_x, (double)r->worst_x);
        cr_expect_eq(r->wrong, 0, "gelu %s, %s: %ld results with a wrong sign or special value", isas[k / 2].name,
                     path[k % 2], r->wrong);
    }
}

/* nan, +-inf, +-0, the tails, and lanes of both paths in one vector */
static void expect_specials(gelu_fn fn, const char *isa)
{
    const float x[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 20.0f, -20.0f, 1e30f, -1e30f, 0x1p-149f, -0x1p-149f,
                       3.0f, -3.0f, 6.0f, -14.0f, -13.0f, 0.5f};
    enum { N = sizeof x / sizeof x[0] };
    float y[N];
    fn(N, y, x);
    cr_expect(isnan(y[0]), "%s: gelu(nan) = %g", isa, (double)y[0]);
    cr_expect_eq(y[1], INFINITY, "%s: gelu(inf) = %g", isa, (double)y[1]);
    cr_expect(isnan(y[2]), "%s: gelu(-inf) = %g (PyTorch: nan)", isa, (double)y[2]);
    cr_expect(y[3] == 0 && !signbit(y[3]), "%s: gelu(0) = %g", isa, (double)y[3]);
    cr_expect(y[4] == 0 && signbit(y[4]), "%s: gelu(-0) = %g, want -0", isa, (double)y[4]);
    cr_expect_eq(y[5], 20.0f);
    cr_expect(y[6] == 0 && signbit(y[6]), "%s: gelu(-20) = %g, want -0", isa, (double)y[6]);
    cr_expect_eq(y[7], 1e30f);
    cr_expect(y[8] == 0 && signbit(y[8]), "%s: gelu(-1e30) = %g, want -0", isa, (double)y[8]);
    /* 2^-150 (1 + 2^-148 sqrt(2/pi)): just above the midpoint of 0 and 2^-149 */
    cr_expect(y[9] == 0x1p-149f || (y[9] == 0 && !signbit(y[9])), "%s: gelu(2^-149) = %a", isa, (double)y[9]);
    cr_expect(y[10] == 0 && signbit(y[10]), "%s: gelu(-2^-149) = %a, want -0", isa, (double)y[10]);
    /* x Phi(x) from mpmath (30 digits): gelu(3) = 2.99595030590510972,
     * gelu(-3) = -0.00404969409489028358, gelu(-13) = -7.95231371941484359e-38,
     * gelu(-14) = -1.09109515468699204e-43 (subnormal: 2 ulp = 2.8e-45),
     * gelu(0.5) = 0.345731230637006552 */
    cr_expect_float_eq(y[11], 2.9959503059f, 4.8e-7);
    cr_expect_float_eq(y[12], -0.0040496940949f, 9.4e-10);
    cr_expect_eq(y[13], 6.0f);
    cr_expect(fabs(y[14] + 1.091095154687e-43) <= 2.9e-45, "%s: gelu(-14) = %a", isa, (double)y[14]);
    cr_expect(fabs(y[15] / -7.952313719415e-38 - 1) < 2.4e-7, "%s: gelu(-13) = %g", isa, (double)y[15]);
    cr_expect_float_eq(y[16], 0.3457312306f, 6e-8);
}

Test(gelu_exact, special_values_on_every_isa)
{
    expect_specials(tj_k_gelu_f32_generic, "generic");
    if (test_cpu_has_avx2()) expect_specials(tj_k_gelu_f32_avx2, "avx2");
    if (test_cpu_has_avx512()) expect_specials(tj_k_gelu_f32_avx512, "avx512");
}

/* Every length 0..40 (partial last vectors, in place) gives the values of a
 * long call, on both paths: inputs all below 4 in magnitude, then all above. */
static void expect_partial_vectors(gelu_fn fn, const char *isa)
{
    for (int large = 0; large < 2; large++) {
        float x[40], want[40], y[41];
        for (int i = 0; i < 40; i++)
            x[i] = large ? (i % 2 ? -1.0f : 1.0f) * (4.0f + (float)abs(i - 20) * 0.3f) : (float)(i - 20) * 0.19f;
        fn(40, want, x);
        for (int n = 0; n <= 40; n++) {
            y[n] = 12345.0f;
            memcpy(y, x, sizeof(float) * (size_t)n);
            fn(n, y, y);
            for (int i = 0; i < n; i++) cr_expect_eq(y[i], want[i], "%s: n %d, element %d", isa, n, i);
            cr_expect_eq(y[n], 12345.0f, "%s: n %d wrote past the end", isa, n);
        }
    }
}

Test(gelu_exact, partial_vectors_and_in_place_calls)
{
    expect_partial_vectors(tj_k_gelu_f32_generic, "generic");
    if (test_cpu_has_avx2()) expect_partial_vectors(tj_k_gelu_f32_avx2, "avx2");
    if (test_cpu_has_avx512()) expect_partial_vectors(tj_k_gelu_f32_avx512, "avx512");
}

/* The generic loop (double erfc per element) over a stride of all inputs. */
Test(gelu_exact, generic_within_1_ulp_on_a_sample)
{
    double worst = 0;
    for (uint64_t b = 0; b < ((uint64_t)1 << 32); b += 65521) {
        float x = test_f32_bits((uint32_t)b), y;
        tj_k_gelu_f32_generic(1, &y, &x);
        region reg = block_region(b & ~(uint64_t)(BLOCK - 1));
        if (!isfinite(x) || x == 0) {
            cr_assert(special_ok(x, y), "generic: gelu(%a) = %a", (double)x, (double)y);
        } else if (reg == R_TAYLOR || reg == R_ERFC) {
            double ref = reg == R_TAYLOR ? reference_taylor(x) : reference_erfc(x);
            double err = fabs((double)y - ref) * inverse_ulp(ref);
            worst = err > worst ? err : worst;
        } else {
            cr_assert_eq(y, reg == R_IDENTITY ? x : -0.0f, "generic: gelu(%a) = %a", (double)x, (double)y);
        }
    }
    cr_expect_leq(worst, 1.0, "generic: %.3f ulp", worst);
}
