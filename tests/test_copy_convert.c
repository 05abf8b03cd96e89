/* Float -> int64 conversion (kernels/copy.c tj_k_convert, its AVX-512 loops
 * in kernels/copy_avx512.c): on every instruction set the CPU runs, each
 * element is what tj_k_float_to_i64 gives (truncation toward zero, INT64_MIN
 * for NaN, infinities and values outside int64's range, as x86 and PyTorch),
 * for every tail length, and nothing past the last element is written. The
 * decomposed max-pool's backward converts its argmax this way into gather
 * indices. And float32 <-> float64, whose AVX-512 loops give the scalar
 * casts' bits. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/copy.h"
#include "kernels/cpu_isa.h"
#include "kernels/dtype_convert.h"
#include "kernels/fp_control.h"
#include "test_util.h"

TestSuite(copy_convert, .init = test_scope_open, .fini = test_scope_close_isa);

#define TWO63 9223372036854775808.0

/* Values around every edge of the conversion, each with its expected
 * int64 (float32 and float64 alike: all are exact in float32). */
static const struct {
    double x;
    int64_t want;
} edges[] = {
    {0.0, 0},
    {-0.0, 0},
    {0.5, 0},
    {-0.5, 0},
    {0.99999994, 0},
    {-0.99999994, 0},
    {1.5, 1},
    {-1.5, -1},
    {3.0, 3},
    {-7.75, -7},
    {16777216.0, 16777216},
    {4611686018427387904.0, INT64_C(4611686018427387904)},     /* 2^62 */
    {9223371487098961920.0, INT64_C(9223371487098961920)},     /* the largest float32 below 2^63 */
    {-9223372036854775808.0, INT64_MIN},                       /* -2^63: in range, exactly */
    {TWO63, INT64_MIN},                                        /* 2^63: out of range */
    {-18446744073709551616.0, INT64_MIN},                      /* -2^64 */
    {1e30, INT64_MIN},
    {-1e30, INT64_MIN},
    {(double)FLT_MAX, INT64_MIN},
    {1e-40, 0},                                                /* a float32 subnormal */
    {INFINITY, INT64_MIN},
    {-INFINITY, INT64_MIN},
    {NAN, INT64_MIN},
    {-NAN, INT64_MIN},
};
#define N_EDGES ((int)(sizeof edges / sizeof *edges))
#define MAX_N 67
#define GUARD INT64_C(0x5a5a5a5a5a5a5a5a)

/* Converts `n` values (edges[(start + i) % N_EDGES], and small integers
 * with fractions in between) of dtype sd on the ISA in use, and checks each
 * element and the guard after them. */
static void expect_converted(tj_dtype sd, int start, int n)
{
    float f[MAX_N];
    double d[MAX_N];
    int64_t want[MAX_N], out[MAX_N + 1];
    for (int i = 0; i < n; i++) {
        int e = (start + i) % (2 * N_EDGES);
        double x = e < N_EDGES ? edges[e].x : (e - N_EDGES) * -2.25 + 1.0; /* ..., 1.0, -1.25, -3.5, ... */
        f[i] = (float)x;
        d[i] = x;
        want[i] = e < N_EDGES ? edges[e].want : (int64_t)x;
        cr_assert_eq(tj_k_float_to_i64(sd == TJ_FLOAT32 ? (double)f[i] : d[i]), want[i], "edge %d (%g)", e, x);
    }
    for (int i = 0; i <= MAX_N; i++) out[i] = GUARD;
    tj_k_convert(out, TJ_INT64, sd == TJ_FLOAT32 ? (const void *)f : (const void *)d, sd, n);
    for (int i = 0; i < n; i++)
        cr_assert_eq(out[i], want[i], "%s %s n %d element %d (%g): %lld, want %lld", tj_k_isa_name(),
                     tj_dtype_name(sd), n, i, d[i], (long long)out[i], (long long)want[i]);
    cr_assert_eq(out[n], GUARD, "%s %s n %d: element %d written", tj_k_isa_name(), tj_dtype_name(sd), n, n);
}

Test(copy_convert, float_to_int64_truncates_and_gives_int64_min_outside_its_range_on_every_isa_and_tail)
{
    for (int isa = 0; isa < TEST_NISA; isa++) {
        if (!tj_k_isa_force(test_isas[isa])) continue; /* above the CPU or TJ_ISA */
        for (int dt = 0; dt < 2; dt++)
            for (int n = 1; n <= MAX_N; n++)
                for (int start = 0; start < 2 * N_EDGES; start += 7) expect_converted(dt ? TJ_FLOAT64 : TJ_FLOAT32, start, n);
    }
}

Test(copy_convert, the_avx512_loops_give_the_scalar_conversions_bits_on_random_values)
{
    if (!test_cpu_has_avx512()) cr_skip_test("no AVX-512");
    enum { N = 4099 };
    static float f[N];
    static double d[N];
    static int64_t a[N], b[N];
    uint64_t s = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < N; i++) { /* random bit patterns: every exponent, NaNs and infinities among them */
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        uint32_t w = (uint32_t)(s >> 32);
        memcpy(&f[i], &w, sizeof w);
        memcpy(&d[i], &s, sizeof s);
    }
    tj_k_f32_to_i64_avx512(a, f, N);
    for (int i = 0; i < N; i++) b[i] = tj_k_float_to_i64(f[i]);
    cr_assert(memcmp(a, b, sizeof a) == 0, "float32");
    tj_k_f64_to_i64_avx512(a, d, N);
    for (int i = 0; i < N; i++) b[i] = tj_k_float_to_i64(d[i]);
    cr_assert(memcmp(a, b, sizeof a) == 0, "float64");
}

/* float32 <-> float64 loops (copy_avx2.c, copy_avx512.c; the float64
 * steps of decomposed layer_norm): random bit patterns (NaNs with
 * payloads, subnormals, values rounding to infinity or to zero) and the
 * special values (NaNs with payloads of either sign, +-inf, +-0, the
 * subnormals, halfway cases rounding to inf, to the smallest subnormal and
 * to 0) give the scalar casts' bits, for every length up to three vectors
 * and beyond, nothing written past the last element. */
static void check_float_conversions(void (*to_f32)(float *, const double *, int64_t),
                                    void (*to_f64)(double *, const float *, int64_t), const char *isa)
{
    enum { N = 1029 };
    static const uint64_t dspecial[] = {
        0x7ff8000000000000u, 0xfff8000000000001u, 0x7ff0000000000001u, 0x7ff4000020000000u, 0xfff00000dead0000u,
        0x7ff0000000000000u, 0xfff0000000000000u, 0x0000000000000000u, 0x8000000000000000u, 0x0000000000000001u,
        0x800fffffffffffffu, 0x47efffffe0000000u, 0x47efffffdfffffffu, 0xc7effffff0000000u, 0x36a0000000000000u,
        0x3690000000000000u, 0x3690000000000001u, 0xb6a0000000000001u, 0x3680000000000000u, 0x36affffffffffffeu,
        0x380fffffe0000000u, 0x3810000000000000u};
    static const uint32_t fspecial[] = {0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fa5a5a5u, 0xff800000u,
                                        0x7f800000u, 0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu,
                                        0x7f7fffffu, 0x00800000u};
    static float f[N], fo[N + 1], fw[N];
    static double d[N], dout[N + 1], dw[N];
    uint64_t s = 0x2545f4914f6cdd1du;
    for (int i = 0; i < N; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        uint32_t w = i % 5 == 1 ? fspecial[i / 5 % (sizeof fspecial / sizeof *fspecial)] : (uint32_t)(s >> 32);
        memcpy(&f[i], &w, sizeof w);
        uint64_t u = i % 3 ? s : (s & 0x80000fffffffffffu) | ((uint64_t)(0x380 + (s >> 40) % 0x100) << 52);
        if (i % 5 == 2) u = dspecial[i / 5 % (sizeof dspecial / sizeof *dspecial)];
        memcpy(&d[i], &u, sizeof u); /* every third near float32's range: subnormal and overflowing results */
        fw[i] = (float)d[i];
        dw[i] = (double)f[i];
    }
    for (int n = 0; n <= N; n += n < 50 ? 1 : 97) {
        memset(fo, 0x5a, sizeof fo);
        memset(dout, 0x5a, sizeof dout);
        to_f32(fo, d, n);
        to_f64(dout, f, n);
        cr_assert(memcmp(fo, fw, sizeof *fo * (size_t)n) == 0, "%s float64 -> float32, n %d", isa, n);
        cr_assert(memcmp(dout, dw, sizeof *dout * (size_t)n) == 0, "%s float32 -> float64, n %d", isa, n);
        uint32_t gf;
        uint64_t gd;
        memcpy(&gf, &fo[n], sizeof gf);
        memcpy(&gd, &dout[n], sizeof gd);
        cr_assert(gf == 0x5a5a5a5au && gd == 0x5a5a5a5a5a5a5a5au, "%s n %d: element %d written", isa, n, n);
    }
}

Test(copy_convert, the_avx512_float32_float64_loops_give_the_scalar_casts_bits_at_every_length)
{
    if (!test_cpu_has_avx512()) cr_skip_test("no AVX-512");
    check_float_conversions(tj_k_f64_to_f32_avx512, tj_k_f32_to_f64_avx512, "avx512");
}

Test(copy_convert, the_avx2_float32_float64_loops_give_the_scalar_casts_bits_at_every_length)
{
    if (!__builtin_cpu_supports("avx2")) cr_skip_test("no AVX2");
    check_float_conversions(tj_k_f64_to_f32_avx2, tj_k_f32_to_f64_avx2, "avx2");
}

/* tj_k_convert's float32 <-> float64 on every ISA (capped by
 * tj_k_isa_force), through the loops above. */
static void convert_to_f32(float *d, const double *s, int64_t n) { tj_k_convert(d, TJ_FLOAT32, s, TJ_FLOAT64, n); }
static void convert_to_f64(double *d, const float *s, int64_t n) { tj_k_convert(d, TJ_FLOAT64, s, TJ_FLOAT32, n); }

Test(copy_convert, tj_k_convert_between_float32_and_float64_gives_the_scalar_casts_bits_on_every_isa)
{
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        check_float_conversions(convert_to_f32, convert_to_f64, test_isas[k]);
    }
    tj_k_isa_force(NULL);
}

/* float16 / bfloat16 <-> float32 through tj_k_convert on every ISA, every
 * flush mode, every length up to 40 (tails) and past: every float16 and
 * bfloat16 bit pattern one way, random float32 patterns and the rounding
 * edges the other, each the bits of dtype_convert.h's scalar conversions
 * (NaN payloads, signalling NaNs, subnormals included); nothing past the
 * last element written. */
static void expect_half_conversions(const char *isa, unsigned fp_mode)
{
    enum { N = 65536 + 40 };
    static uint16_t h[N], h_out[N + 1], h_want[N];
    static float f[N], f_out[N + 1], f_want[N];
    uint64_t s = 0x2545f4914f6cdd1du;
    for (int i = 0; i < N; i++) {
        h[i] = (uint16_t)i; /* every pattern, then a few again */
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        uint32_t w = (uint32_t)(s >> 32);
        if (i % 4 == 1) w = (w & 0xffff0000u) | 0x8000u;              /* bfloat16 ties */
        if (i % 4 == 2) w = (w & 0x8fffe000u) | 0x00001000u | 0x38000000u; /* float16 ties near subnormals */
        memcpy(&f[i], &w, sizeof w);
    }
    for (int half = 0; half < 2; half++) {
        tj_dtype hd = half ? TJ_BFLOAT16 : TJ_FLOAT16;
        for (int i = 0; i < N; i++) {
            f_want[i] = half ? tj_k_bf16_to_f32(h[i]) : tj_k_f16_to_f32(h[i]);
            h_want[i] = half ? tj_k_f32_to_bf16(f[i]) : tj_k_f32_to_f16(f[i]);
        }
        unsigned saved = tj_k_fp_control();
        for (int64_t n = 1; n <= N; n = n < 40 ? n + 1 : n < N ? N : N + 1) {
            f_out[n] = -1.0f;
            h_out[n] = 0x5a5a;
            tj_k_fp_control_set(fp_mode);
            tj_k_convert(f_out, TJ_FLOAT32, h, hd, n);
            tj_k_convert(h_out, hd, f, TJ_FLOAT32, n);
            tj_k_fp_control_set(saved);
            cr_assert(memcmp(f_out, f_want, sizeof(float) * (size_t)n) == 0, "%s %s -> float32 n %lld, mode %#x",
                      isa, tj_dtype_name(hd), (long long)n, fp_mode);
            cr_assert(memcmp(h_out, h_want, sizeof(uint16_t) * (size_t)n) == 0, "%s float32 -> %s n %lld, mode %#x",
                      isa, tj_dtype_name(hd), (long long)n, fp_mode);
            cr_assert(f_out[n] == -1.0f && h_out[n] == 0x5a5a, "%s n %lld: element n written", isa, (long long)n);
        }
    }
}

Test(copy_convert, half_conversions_give_the_scalar_bits_on_every_isa_and_flush_mode)
{
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        expect_half_conversions(test_isas[k], 0x1f80u);                                 /* round to nearest */
        expect_half_conversions(test_isas[k], 0x1f80u | TJ_K_FP_FTZ | TJ_K_FP_DAZ); /* denormals flushed */
    }
    tj_k_isa_force(NULL);
}
