/* The float32 tanh loops (kernels/tanh.h) against C's double-precision
 * tanh (within 2^-29 of an ulp of float32 here), over every STRIDE-th
 * positive float32 bit pattern and its negative, on each instruction set
 * the CPU has, plus the special values.
 *
 * Largest errors found over every positive float32 and its negative
 * (TJ_TANH_STRIDE=1, 157 s), which the bounds below sit just above: avx512
 * and avx2 0.868 ulp at x = 0.631490588 (just past the polynomial's limit,
 * 0.625: e^(-2a)'s error there costs up to 0.63 of its ulp, see
 * kernels/tanh.h), generic (C's tanh in double, rounded) 0.5 ulp. Every
 * 61st: 0.837 ulp. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/elementwise_isa.h"
#include "kernels/tanh.h"
#include "test_util.h"

typedef void (*tanh_fn)(int64_t n, void *out, const void *in);

typedef struct isa_case {
    const char *name;
    tanh_fn fn;
    const tj_k_math_isa *table;
    double bound; /* ulp */
} isa_case;

/* the loops this CPU can run, generic first */
static int isa_cases(isa_case *c)
{
    int n = 0;
    c[n++] = (isa_case){"generic", tj_k_tanh_f32_generic, &tj_k_math_generic, 0.501};
    if (test_cpu_has_avx2()) c[n++] = (isa_case){"avx2", tj_k_tanh_f32_avx2, &tj_k_math_avx2, 0.87};
    if (test_cpu_has_avx512()) c[n++] = (isa_case){"avx512", tj_k_tanh_f32_avx512, &tj_k_math_avx512, 0.87};
    return n;
}

/* |got - want| in ulps of float32 at want (subnormals: the ulp of the
 * smallest normal binade) */
static double ulps(double got, double want)
{
    int e;
    frexp(fabs(want), &e);
    if (e < -125) e = -125;
    return fabs(got - want) / ldexp(1, e - 24);
}

/* TJ_TANH_STRIDE=S sweeps every S-th positive float32 instead (the
 * sanitizer run in .ci/run uses a coarser one) */
#define STRIDE 7
#define BLOCK (1 << 16)

typedef struct worst {
    double ulp;
    float x;
    long odd;        /* tanh(-x) not -tanh(x) bit for bit */
    long tiny;       /* |x| < 2^-12 not returned unchanged */
    long saturated;  /* |x| >= 9.1 not +-1 */
    long above_one;  /* |tanh(x)| > 1 */
    long neighbours; /* a different result with other values in the vector */
} worst;

/* every 8th lane of a copy set to this: every vector (of 8 or 16 lanes)
 * then mixes the two paths (the other lanes must not change) */
#define MIXER 5.0f

static void sweep(const isa_case *c, int n, worst *w)
{
    float *x = malloc(sizeof(float) * BLOCK), *xn = malloc(sizeof(float) * BLOCK),
          *xm = malloc(sizeof(float) * BLOCK), *y = malloc(sizeof(float) * BLOCK),
          *yn = malloc(sizeof(float) * BLOCK), *ym = malloc(sizeof(float) * BLOCK);
    double *ref = malloc(sizeof(double) * BLOCK);
    cr_assert(x && xn && xm && y && yn && ym && ref);
    memset(w, 0, sizeof *w * (size_t)n);
    uint64_t bits = 0, stride = test_env_count("TJ_TANH_STRIDE", STRIDE), end = 0x7f800000; /* +inf, left to the special values */
    while (bits < end) {
        int m = 0;
        for (; m < BLOCK && bits < end; bits += stride) x[m++] = test_f32_bits((uint32_t)bits);
        for (int i = 0; i < m; i++) {
            xn[i] = -x[i];
            xm[i] = i % 8 == 3 ? MIXER : x[i];
            ref[i] = tanh((double)x[i]);
        }
        for (int k = 0; k < n; k++) {
            c[k].fn(m, y, x);
            c[k].fn(m, yn, xn);
            c[k].fn(m, ym, xm);
            for (int i = 0; i < m; i++) {
                double e = ulps(y[i], ref[i]);
                if (!(e <= w[k].ulp)) w[k].ulp = e, w[k].x = x[i]; /* nan counts as worse */
                w[k].odd += test_bits_f32(yn[i]) != (test_bits_f32(y[i]) ^ 0x80000000u);
                w[k].tiny += x[i] < 0x1p-12f && test_bits_f32(y[i]) != test_bits_f32(x[i]);
                w[k].saturated += x[i] >= 9.1f && y[i] != 1.0f;
                w[k].above_one += y[i] > 1.0f;
                w[k].neighbours += i % 8 != 3 && test_bits_f32(ym[i]) != test_bits_f32(y[i]);
            }
        }
    }
    free(x);
    free(xn);
    free(xm);
    free(y);
    free(yn);
    free(ym);
    free(ref);
}

Test(tanh, every_7th_float32_within_the_bound_odd_and_saturating_on_each_isa, .timeout = 600)
{
    isa_case c[3];
    worst w[3];
    int n = isa_cases(c);
    sweep(c, n, w);
    for (int k = 0; k < n; k++) {
        cr_log_info("%s: max %.4g ulp at x = %.9g", c[k].name, w[k].ulp, (double)w[k].x);
        cr_expect(w[k].ulp <= c[k].bound, "%s: %.4g ulp at x = %.9g", c[k].name, w[k].ulp, (double)w[k].x);
        cr_expect_eq(w[k].odd, 0, "%s: %ld results with tanh(-x) != -tanh(x)", c[k].name, w[k].odd);
        cr_expect_eq(w[k].tiny, 0, "%s: %ld tiny x not returned unchanged", c[k].name, w[k].tiny);
        cr_expect_eq(w[k].saturated, 0, "%s: %ld x >= 9.1 not giving 1", c[k].name, w[k].saturated);
        cr_expect_eq(w[k].above_one, 0, "%s: %ld results above 1", c[k].name, w[k].above_one);
        cr_expect_eq(w[k].neighbours, 0, "%s: %ld results changed by their neighbours", c[k].name, w[k].neighbours);
    }
}

#define NSPECIAL 20
static const float special_x[NSPECIAL] = {NAN,       -NAN,     INFINITY,  -INFINITY, 0.0f,      -0.0f,     0x1p-149f,
                                          -0x1p-149f, FLT_MIN, -1e-30f,   0x1p-13f,  10.0f,     -10.0f,    9.02f,
                                          -9.5f,     30.0f,    1e20f,     -1e20f,    FLT_MAX,   -FLT_MAX};

Test(tanh, special_values_on_each_isa)
{
    /* C (and PyTorch): nan, nan, 1, -1, 0, -0, then x itself for tiny x,
     * +-1 from |x| ~ 9.01 on */
    const uint32_t want[NSPECIAL] = {0x7fc00000,         0x7fc00000,         test_bits_f32(1.0f),      test_bits_f32(-1.0f),
                                     0,                  0x80000000,         1,                  0x80000001,
                                     test_bits_f32(FLT_MIN),   test_bits_f32(-1e-30f),   test_bits_f32(0x1p-13f),  test_bits_f32(1.0f),
                                     test_bits_f32(-1.0f),     test_bits_f32(1.0f),      test_bits_f32(-1.0f),     test_bits_f32(1.0f),
                                     test_bits_f32(1.0f),      test_bits_f32(-1.0f),     test_bits_f32(1.0f),      test_bits_f32(-1.0f)};
    isa_case c[3];
    int n = isa_cases(c);
    for (int k = 0; k < n; k++) {
        float y[NSPECIAL];
        c[k].fn(NSPECIAL, y, special_x);
        for (int i = 0; i < NSPECIAL; i++) {
            if (isnan(test_f32_bits(want[i])))
                cr_expect(isnan(y[i]), "%s: tanh(%g) = %g, want nan", c[k].name, special_x[i], y[i]);
            else
                cr_expect_eq(test_bits_f32(y[i]), want[i], "%s: tanh(%g) = %g (0x%08x), want 0x%08x", c[k].name,
                             special_x[i], y[i], test_bits_f32(y[i]), want[i]);
        }
    }
}

/* PyTorch 1.13 float32 torch.tanh at these points (as in test_elementwise.c) */
#define NTYPICAL 7
static const float typ_x[NTYPICAL] = {0.5f, -0.5f, 1.0f, -1.5f, 3.0f, 1e-4f, 2.5f};
static const double typ_y[NTYPICAL] = {0.46211716532707214, -0.46211716532707214, 0.7615941762924194,
                                       -0.9051482677459717, 0.9950547814369202,  9.999999747378752e-05,
                                       0.9866142868995667};

Test(tanh, pytorch_values_and_partial_vectors_on_each_isa)
{
    isa_case c[3];
    int n = isa_cases(c);
    for (int k = 0; k < n; k++) {
        float y[NTYPICAL];
        c[k].fn(NTYPICAL, y, typ_x);
        for (int i = 0; i < NTYPICAL; i++)
            cr_expect(ulps(y[i], typ_y[i]) <= 1.0, "%s: tanh(%g) = %.9g, PyTorch %.9g", c[k].name, typ_x[i], y[i],
                      typ_y[i]);
        /* every length up to 40 (partial last vectors), in place: the bits
         * of one long call, nothing written past n */
        float x[40], whole[40];
        for (int i = 0; i < 40; i++) x[i] = -6.0f + 0.3f * (float)i;
        c[k].fn(40, whole, x);
        for (int len = 0; len <= 40; len++) {
            float buf[41];
            memcpy(buf, x, sizeof x);
            buf[len] = 7.0f;
            c[k].fn(len, buf, buf);
            cr_expect_eq(buf[len], 7.0f, "%s: n = %d wrote past the end", c[k].name, len);
            for (int i = 0; i < len; i++)
                cr_expect_eq(test_bits_f32(buf[i]), test_bits_f32(whole[i]), "%s: n = %d, tanh(%g) = %.9g, not %.9g", c[k].name,
                             len, x[i], buf[i], whole[i]);
        }
    }
}

Test(tanh, each_isa_table_serves_float32_with_these_loops)
{
    isa_case c[3];
    int n = isa_cases(c);
    for (int k = 0; k < n; k++) cr_expect(c[k].table->f32->unary[TJ_K_TANH] == c[k].fn, "%s", c[k].name);
}
