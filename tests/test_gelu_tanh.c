/* The tanh-approximation GELU loops (kernels/gelu_tanh.h and the float64
 * loops of kernels/elementwise_simd.h) against the formula evaluated in
 * long double:
 *   y = x/2 (1 + tanh(u)) = x / (1 + e^(-2u)),  u = sqrt(2/pi) (x + 0.044715 x^3),
 *   dy/dx = s + x s (1 - s) 2u'(x),  s = 1 / (1 + e^(-2u)),
 * over every 61st float32 bit pattern (70 million inputs) on each
 * instruction set the CPU has, plus the special values PyTorch defines.
 *
 * Largest errors found (stride 61), which the bounds below sit just above,
 * on the polynomial path (vectors with |x| < 4 in every lane) and with the
 * general (exp) path forced:
 *   forward, ulp of y:           avx512 1.12 polynomial, 3.11 general;
 *                                avx2   1.57 polynomial, 3.11 general;
 *                                generic 0.50
 *   backward, ulp of |s| + |x s (1-s) 2u'|:
 *                                avx512 and avx2 4.27 polynomial, 5.13 general;
 *                                generic 0.50
 * (Dropping the tables' C0LO term gives 1.5 / 2.24 ulp forward on the
 * polynomial path; dropping C1_LO in the general path 33 ulp.)
 * The backward's scale is the larger of its two terms, not the result: they
 * cancel where the derivative crosses 0 (x ~ -0.7518), and there every
 * float32 evaluation has an error of an ulp of the terms. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/elementwise_isa.h"
#include "kernels/gelu.h"
#include "kernels/gelu_tanh.h"
#include "test_util.h"

typedef void (*fwd_fn)(int64_t n, void *out, const void *in);
typedef void (*bwd_fn)(int64_t n, void *out, const void *dy, const void *x);

typedef struct isa_case {
    const char *name;
    int lanes; /* of a vector: the polynomial path serves a vector whose lanes all have |x| < 4 */
    fwd_fn fwd;
    bwd_fn bwd;
    const tj_k_math_isa *table;
} isa_case;

/* the loops this CPU can run, generic first */
static int isa_cases(isa_case *c)
{
    int n = 0;
    c[n++] = (isa_case){"generic", 1, tj_k_gelu_tanh_f32_generic, tj_k_gelu_tanh_backward_f32_generic,
                        &tj_k_math_generic};
    if (test_cpu_has_avx2())
        c[n++] = (isa_case){"avx2", 8, tj_k_gelu_tanh_f32_avx2, tj_k_gelu_tanh_backward_f32_avx2, &tj_k_math_avx2};
    if (test_cpu_has_avx512())
        c[n++] = (isa_case){"avx512", 16, tj_k_gelu_tanh_f32_avx512, tj_k_gelu_tanh_backward_f32_avx512,
                            &tj_k_math_avx512};
    return n;
}

#define BETA 0.797884560802865355879892119868763737L /* sqrt(2/pi) */
#define KAPPA 0.044715L

/* e^(-2|u|), s = sigmoid(2u) and the two terms of the derivative, in long
 * double */
typedef struct reference {
    long double y, dydx, scale;
} reference;

static reference reference_of(long double x)
{
    long double a = fabsl(x), e = expl(-2 * BETA * (a + KAPPA * a * a * a)), r = 1 / (1 + e);
    long double s = x < 0 ? e * r : r;
    long double right = x * (e * r * r) * 2 * BETA * (1 + 3 * KAPPA * x * x);
    return (reference){.y = x * s, .dydx = s + right, .scale = fabsl(s) + fabsl(right)};
}

/* |got - want| in ulps of `of` in the format with `mant` bits (min_exp:
 * the smallest normal binade's exponent, subnormals counted in its ulp) */
static double ulps(long double got, long double want, long double of, int mant, int min_exp)
{
    int e;
    frexpl(fabsl(of), &e);
    if (e < min_exp) e = min_exp;
    return (double)(fabsl(got - want) / ldexpl(1, e - mant));
}

static double ulps_f32(long double got, long double want, long double of) { return ulps(got, want, of, 24, -125); }

/* TJ_GELU_TANH_STRIDE=S sweeps every S-th float32 instead (the sanitizer
 * run in .ci/run: the whole sweep takes ~30 s plain, minutes there) */
#define STRIDE 61
#define BLOCK (1 << 16)

typedef struct worst {
    double fwd, bwd;
    float fwd_x, bwd_x;
    long wrong; /* nan where the reference is a number */
} worst;

/* path_lanes > 0: only the lanes of vectors (of path_lanes) on the
 * polynomial path; otherwise every lane but every 8th (FORCE_GENERAL) */
static void check(const float *x, const float *y, const float *d, const reference *ref, int m, int path_lanes,
                  worst *w)
{
    for (int i = 0; i < m; i++) {
        if (path_lanes > 0) {
            bool fast = true;
            for (int j = i - i % path_lanes; j < i - i % path_lanes + path_lanes && j < m; j++)
                fast = fast && fabsf(x[j]) < 4.0f;
            if (!fast) continue;
        } else if (i % 8 == 0) {
            continue;
        }
        double ef = ulps_f32(y[i], ref[i].y, ref[i].y), eb = ulps_f32(d[i], ref[i].dydx, ref[i].scale);
        w->wrong += isnan(y[i]) || isnan(d[i]);
        if (ef > w->fwd) w->fwd = ef, w->fwd_x = x[i];
        if (eb > w->bwd) w->bwd = eb, w->bwd_x = x[i];
    }
}

/* every 8th lane of a block set to this forces the general (exp) path of
 * every vector (of 8 or 16 lanes) */
#define FORCE_GENERAL 100.0f

/* Every STRIDE-th float32 (nan and infinities left to the special-value
 * test), through every loop of `c`: w[2 k] the polynomial path (the lanes
 * of vectors with |x| < 4 in every lane), w[2 k + 1] the general path
 * forced by FORCE_GENERAL in every vector (those lanes not checked). For
 * the generic loops both are the same (double precision everywhere). */
static void sweep(const isa_case *c, int n, worst *w)
{
    float *x = malloc(sizeof(float) * BLOCK), *xf = malloc(sizeof(float) * BLOCK),
          *one = malloc(sizeof(float) * BLOCK), *y = malloc(sizeof(float) * BLOCK),
          *d = malloc(sizeof(float) * BLOCK);
    reference *ref = malloc(sizeof(reference) * BLOCK);
    cr_assert(x && xf && one && y && d && ref);
    for (int i = 0; i < BLOCK; i++) one[i] = 1.0f;
    memset(w, 0, sizeof *w * 2 * (size_t)n);
    uint64_t bits = 0, stride = test_env_count("TJ_GELU_TANH_STRIDE", STRIDE);
    while (bits < ((uint64_t)1 << 32)) {
        int m = 0;
        for (; m < BLOCK && bits < ((uint64_t)1 << 32); bits += stride) {
            float v = test_f32_bits((uint32_t)bits);
            if (isfinite(v)) x[m++] = v;
        }
        memcpy(xf, x, sizeof(float) * (size_t)m);
        for (int i = 0; i < m; i += 8) xf[i] = FORCE_GENERAL;
        for (int i = 0; i < m; i++) ref[i] = reference_of(x[i]);
        for (int k = 0; k < n; k++) {
            c[k].fwd(m, y, x);
            c[k].bwd(m, d, one, x);
            check(x, y, d, ref, m, c[k].lanes, &w[2 * k]);
            c[k].fwd(m, y, xf);
            c[k].bwd(m, d, one, xf);
            check(x, y, d, ref, m, 0, &w[2 * k + 1]);
        }
    }
    free(x);
    free(xf);
    free(one);
    free(y);
    free(d);
    free(ref);
}

/* just above the largest errors found (see the top of the file); path 0
 * polynomial, 1 general */
static double fwd_bound(const char *isa, int path)
{
    if (!strcmp(isa, "generic")) return 0.51;
    return path ? 3.15 : !strcmp(isa, "avx512") ? 1.15 : 1.6;
}

static double bwd_bound(const char *isa, int path)
{
    if (!strcmp(isa, "generic")) return 0.51;
    return path ? 5.15 : 4.3;
}

Test(gelu_tanh, every_61st_float32_within_the_bounds_forward_and_backward_on_each_isa_and_path, .timeout = 600)
{
    isa_case c[3];
    worst w[6];
    int n = isa_cases(c);
    sweep(c, n, w);
    for (int k = 0; k < 2 * n; k++) {
        const char *isa = c[k / 2].name, *path = k % 2 ? "general" : "polynomial";
        cr_log_info("%s %s: forward %.3g ulp at x = %.9g, backward %.3g ulp (of the larger term) at x = %.9g", isa,
                    path, w[k].fwd, (double)w[k].fwd_x, w[k].bwd, (double)w[k].bwd_x);
        cr_expect_eq(w[k].wrong, 0, "%s %s: %ld nan results for finite x", isa, path, w[k].wrong);
        cr_expect(w[k].fwd <= fwd_bound(isa, k % 2), "%s %s: forward error %.3g ulp at x = %.9g", isa, path, w[k].fwd,
                  (double)w[k].fwd_x);
        cr_expect(w[k].bwd <= bwd_bound(isa, k % 2), "%s %s: backward error %.3g ulp at x = %.9g", isa, path,
                  w[k].bwd, (double)w[k].bwd_x);
    }
}

#define NSPECIAL 14
static const float special_x[NSPECIAL] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0x1p-149f, -0x1p-149f,
                                          -11.0f, -30.0f, -1e20f, -FLT_MAX, 30.0f, 1e20f, FLT_MAX};

Test(gelu_tanh, special_values_as_pytorch_on_each_isa)
{
    /* PyTorch 1.13, float32: gelu(x, approximate='tanh') for the inputs
     * above is nan, inf, nan, 0, -0, 0 (rounded x/2), -0, -0 ... (x below
     * ~-10.6 underflows to -0), x for large x. The backward (dy = 3) is nan
     * for nan and +-inf, dy/2 at 0, 0 for large -x and dy for large x
     * (float64 PyTorch; float32 PyTorch's x^2 overflows to nan from 1.8e19). */
    const uint32_t want_y[NSPECIAL] = {0x7fc00000, 0x7f800000, 0x7fc00000, 0,          0x80000000, 0,
                                       0x80000000, 0x80000000, 0x80000000, 0x80000000, 0x80000000,
                                       test_bits_f32(30.0f), test_bits_f32(1e20f), test_bits_f32(FLT_MAX)};
    const float want_d[NSPECIAL] = {NAN, NAN, NAN, 1.5f, 1.5f, 1.5f, 1.5f, 0, 0, 0, 0, 3, 3, 3};
    isa_case c[3];
    int n = isa_cases(c);
    float dy[NSPECIAL], y[NSPECIAL], d[NSPECIAL];
    for (int i = 0; i < NSPECIAL; i++) dy[i] = 3.0f;
    for (int k = 0; k < n; k++) {
        c[k].fwd(NSPECIAL, y, special_x);
        c[k].bwd(NSPECIAL, d, dy, special_x);
        for (int i = 0; i < NSPECIAL; i++) {
            if (isnan(test_f32_bits(want_y[i])))
                cr_expect(isnan(y[i]), "%s: gelu(%g) = %g, want nan", c[k].name, special_x[i], y[i]);
            else
                cr_expect_eq(test_bits_f32(y[i]), want_y[i], "%s: gelu(%g) = %g (0x%08x), want 0x%08x", c[k].name,
                             special_x[i], y[i], test_bits_f32(y[i]), want_y[i]);
            if (isnan(want_d[i]))
                cr_expect(isnan(d[i]), "%s: gelu'(%g) dy = %g, want nan", c[k].name, special_x[i], d[i]);
            else /* 0 and tiny x on the polynomial path: within an ulp of dy/2 (AVX2's tables) */
                cr_expect(d[i] == want_d[i] || d[i] == nextafterf(want_d[i], 0.0f) ||
                              d[i] == nextafterf(want_d[i], INFINITY),
                          "%s: gelu'(%g) dy = %.9g, want %.9g", c[k].name, special_x[i], d[i], want_d[i]);
        }
    }
}

Test(gelu_tanh, signs_of_tiny_results_on_the_polynomial_path_on_each_isa)
{
    /* |x| < 4 in every lane: x/2 rounds to +-0 or +-2^-149 with x's sign */
    const float x[4] = {-0x1p-149f, 0x1p-149f, -0x1p-148f, -1e-30f};
    const uint32_t want[4] = {0x80000000, 0, 0x80000001, test_bits_f32(-5e-31f)};
    isa_case c[3];
    int n = isa_cases(c);
    for (int k = 0; k < n; k++) {
        float y[4];
        c[k].fwd(4, y, x);
        for (int i = 0; i < 4; i++)
            cr_expect_eq(test_bits_f32(y[i]), want[i], "%s: gelu(%g) = %g (0x%08x)", c[k].name, x[i], y[i], test_bits_f32(y[i]));
    }
}

/* PyTorch 1.13 float64 values (torch.nn.functional.gelu(x, approximate=
 * 'tanh') and aten::gelu_backward(ones, x, approximate='tanh') on
 * float64, rounded to float32 here) */
#define NTYPICAL 6
static const float typ_x[NTYPICAL] = {-5.0f, -3.0f, -0.5f, 0.5f, 1.0f, 3.0f};
static const double typ_y[NTYPICAL] = {-2.2917961972623857e-07, -0.0036373920817729943, -0.15428599017485606,
                                       0.34571400982514394, 0.8411919906082768, 2.996362607918227};
static const double typ_d[NTYPICAL] = {-1.5463619879596227e-06, -0.011584166630969648, 0.13263009646535764,
                                       0.8673699035346424, 1.0829640838457826, 1.0115841666309695};

Test(gelu_tanh, pytorch_float64_values_and_partial_vectors_on_each_isa)
{
    isa_case c[3];
    int n = isa_cases(c);
    for (int k = 0; k < n; k++) {
        float y[NTYPICAL], d[NTYPICAL], one[NTYPICAL] = {1, 1, 1, 1, 1, 1};
        c[k].fwd(NTYPICAL, y, typ_x);
        c[k].bwd(NTYPICAL, d, one, typ_x);
        for (int i = 0; i < NTYPICAL; i++) {
            cr_expect(ulps_f32(y[i], typ_y[i], typ_y[i]) <= fwd_bound(c[k].name, 0),
                      "%s: gelu(%g) = %.9g, PyTorch %.9g", c[k].name, typ_x[i], y[i], typ_y[i]);
            cr_expect(ulps_f32(d[i], typ_d[i], typ_d[i]) <= bwd_bound(c[k].name, 0),
                      "%s: gelu'(%g) = %.9g, PyTorch %.9g", c[k].name, typ_x[i], d[i], typ_d[i]);
        }
        /* every length up to 40 (partial last vectors), in place: within
         * the bounds (a vector's path depends on its other lanes, so the
         * bits may differ from one long call's), nothing written past n */
        float x[40], dy[40];
        for (int i = 0; i < 40; i++) x[i] = -6.0f + 0.3f * (float)i, dy[i] = 0.25f * (float)(i - 20);
        for (int len = 0; len <= 40; len++) {
            float buf[41], bd[41];
            memcpy(buf, x, sizeof x);
            buf[len] = bd[len] = 7.0f;
            c[k].fwd(len, buf, buf);
            c[k].bwd(len, bd, dy, x);
            cr_expect_eq(buf[len], 7.0f, "%s: n = %d wrote past the end", c[k].name, len);
            cr_expect_eq(bd[len], 7.0f, "%s: n = %d (backward) wrote past the end", c[k].name, len);
            for (int i = 0; i < len; i++) {
                reference r = reference_of(x[i]);
                cr_expect(ulps_f32(buf[i], r.y, r.y) <= fwd_bound(c[k].name, 1), "%s: n = %d, gelu(%g) = %.9g",
                          c[k].name, len, x[i], buf[i]);
                cr_expect(ulps_f32(bd[i], dy[i] * r.dydx, dy[i] * r.scale) <= bwd_bound(c[k].name, 1),
                          "%s: n = %d, %g gelu'(%g) = %.9g", c[k].name, len, dy[i], x[i], bd[i]);
            }
        }
    }
}

Test(gelu_tanh, each_isa_table_serves_float32_with_these_loops)
{
    isa_case c[3];
    int n = isa_cases(c);
    for (int k = 0; k < n; k++) {
        cr_expect(c[k].table->f32->unary[TJ_K_GELU_TANH] == c[k].fwd, "%s", c[k].name);
        cr_expect(c[k].table->f32->binary[TJ_K_GELU_TANH_BACKWARD] == c[k].bwd, "%s", c[k].name);
    }
}

/* float64 (SLEEF's exp in the same sigmoid form, u rounded to double):
 * 2^20 inputs spread over [-20.5, 40] and the special values, against long
 * double. For x < 0 the result's relative error is that of 2|u|, about
 * 2|u| 2^-53 per rounding, so the error is measured in units of
 * (1 + 2|u|) ulp; largest found 3.13 forward, 3.37 backward (each of
 * generic, avx2, avx512). Below x ~ -20.8 e^(-2|u|) is subnormal (results below
 * ~1e-305) and loses more; not checked. */
Test(gelu_tanh, float64_loops_within_3_5_ulp_per_unit_of_2u_on_each_isa)
{
    isa_case c[3];
    int n = isa_cases(c);
    enum { N = 1 << 20 };
    double *x = malloc(sizeof(double) * N), *y = malloc(sizeof(double) * N), *d = malloc(sizeof(double) * N),
           *one = malloc(sizeof(double) * N);
    cr_assert(x && y && d && one);
    for (int i = 0; i < N; i++) x[i] = -20.5 + 60.5 * ((double)i + 0.37) / N, one[i] = 1.0;
    for (int k = 0; k < n; k++) {
        c[k].table->f64->unary[TJ_K_GELU_TANH](N, y, x);
        c[k].table->f64->binary[TJ_K_GELU_TANH_BACKWARD](N, d, one, x);
        double wf = 0, wb = 0, xf = 0, xb = 0;
        for (int i = 0; i < N; i++) {
            reference r = reference_of(x[i]);
            double cond = 1 + 2 * (double)(BETA * fabsl(x[i] + KAPPA * x[i] * x[i] * x[i]));
            double ef = ulps(y[i], r.y, r.y, 53, -1021) / cond, eb = ulps(d[i], r.dydx, r.scale, 53, -1021) / cond;
            if (!(ef <= wf)) wf = ef, xf = x[i];
            if (!(eb <= wb)) wb = eb, xb = x[i];
        }
        cr_log_info("%s float64: forward %.3g, backward %.3g (1 + 2|u|) ulp at x = %.17g, %.17g", c[k].name, wf, wb,
                    xf, xb);
        cr_expect(wf <= 3.5, "%s float64: forward error %.3g (1 + 2|u|) ulp at x = %.17g", c[k].name, wf, xf);
        cr_expect(wb <= 3.5, "%s float64: backward error %.3g (1 + 2|u|) ulp at x = %.17g", c[k].name, wb, xb);
        double sx[5] = {NAN, INFINITY, -INFINITY, -0.0, -1e3}, sy[5], sd[5];
        c[k].table->f64->unary[TJ_K_GELU_TANH](5, sy, sx);
        c[k].table->f64->binary[TJ_K_GELU_TANH_BACKWARD](5, sd, one, sx);
        cr_expect(isnan(sy[0]) && sy[1] == INFINITY && isnan(sy[2]) && sy[3] == 0 && signbit(sy[3]) && sy[4] == 0 &&
                      signbit(sy[4]),
                  "%s float64 specials: %g %g %g %g %g", c[k].name, sy[0], sy[1], sy[2], sy[3], sy[4]);
        cr_expect(isnan(sd[0]) && isnan(sd[1]) && isnan(sd[2]) && sd[3] == 0.5 && sd[4] == 0,
                  "%s float64 backward specials: %g %g %g %g %g", c[k].name, sd[0], sd[1], sd[2], sd[3], sd[4]);
    }
    free(x);
    free(y);
    free(d);
    free(one);
}

/* A result must not depend on the values next to it: a vector holding one
 * |x| >= 4 takes the exp path for that lane only (the layout and the
 * thread split decide which values share a vector). Both gelus. */
typedef void (*gelu_fn)(int64_t, void *, const void *);

static void expect_neighbour_free(const char *what, gelu_fn fwd, bwd_fn bwd)
{
    const float xs[] = {-1.13333893f, -3.99f, -0.75f, 0.3f, 2.5f, 3.999f, -2e-3f, 1.0f};
    const float others[] = {10.0f, -10.0f, 4.0f, INFINITY, NAN, -50.0f};
    float alone[16], mixed[16], ya[16], ym[16], one[16];
    for (int i = 0; i < 16; i++) one[i] = 1.0f;
    for (size_t k = 0; k < sizeof xs / sizeof *xs; k++)
        for (size_t o = 0; o < sizeof others / sizeof *others; o++)
            for (int pass = 0; pass < 2; pass++) {
                for (int i = 0; i < 16; i++) alone[i] = mixed[i] = xs[k];
                mixed[5] = others[o];
                if (pass == 0) {
                    fwd(16, ya, alone);
                    fwd(16, ym, mixed);
                } else {
                    if (!bwd) continue;
                    bwd(16, ya, one, alone);
                    bwd(16, ym, one, mixed);
                }
                for (int i = 0; i < 16; i++) {
                    if (i == 5) continue;
                    cr_expect(memcmp(&ya[i], &ym[i], sizeof(float)) == 0,
                              "%s %s(%.9g): %.9g alone, %.9g next to %g", what, pass ? "backward" : "forward",
                              (double)xs[k], (double)ya[i], (double)ym[i], (double)others[o]);
                }
            }
}

Test(gelu_tanh, a_result_does_not_depend_on_its_neighbours_on_any_isa)
{
    isa_case c[3];
    int n = isa_cases(c);
    for (int k = 0; k < n; k++) expect_neighbour_free(c[k].name, c[k].fwd, c[k].bwd);
    if (test_cpu_has_avx2()) expect_neighbour_free("exact gelu avx2", tj_k_gelu_f32_avx2, NULL);
    if (test_cpu_has_avx512()) expect_neighbour_free("exact gelu avx512", tj_k_gelu_f32_avx512, NULL);
}
