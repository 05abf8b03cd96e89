/* The one vector-ISA choice (kernels/cpu_isa.h): the lowest of the CPU's,
 * TJ_ISA's and tj_k_isa_force's. Its rules (unknown names set no cap,
 * forcing never lifts TJ_ISA's cap), the first call's reading of the
 * environment the suite started in (CI runs the suite again under
 * TJ_ISA=avx2), and the routes it caps, seen in the results' bytes: a
 * softmax row (row kernels: SLEEF's exp summed in 16 or 8 lanes, or libm's
 * expf one by one), a float32 product (the GEMM kernel's 6 x 64 or 6 x 16
 * instance, or OpenBLAS's sgemm) and a one-row product (the matrix-vector
 * row form's AVX-512 or AVX2 instance, or OpenBLAS's sgemv) through the
 * operators give, under each ISA
 * forced, the bytes of that ISA's own loop called directly, which differ
 * from the other ISAs' bytes. */
#include <cblas.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "kernels/gemm.h"
#include "kernels/gemv.h"
#include "kernels/softmax.h"
#include "test_util.h"

TestSuite(cpu_isa, .init = test_scope_open, .fini = test_scope_close_isa);

/* The ISA TJ_ISA = `env` (NULL: unset) leaves in use on this CPU. */
static tj_k_isa under_env(const char *env)
{
    tj_k_isa cpu = tj_k_isa_cpu();
    for (int i = 0; env && i < TEST_NISA; i++)
        if (!strcmp(env, test_isas[i])) return (tj_k_isa)i < cpu ? (tj_k_isa)i : cpu;
    return cpu;
}

Test(cpu_isa, the_first_call_reads_tj_isa_and_keeps_it)
{
    /* nothing in this process has asked yet (Criterion runs each test in
     * its own), so this is the environment's choice: the CPU's best in a
     * plain run, AVX2 in CI's TJ_ISA=avx2 run */
    tj_k_isa want = under_env(getenv("TJ_ISA"));
    cr_assert_eq(tj_k_isa_active(), want, "in use %s, want %s (TJ_ISA %s)", tj_k_isa_name(), test_isas[want],
                 getenv("TJ_ISA") ? getenv("TJ_ISA") : "unset");
    cr_assert_str_eq(tj_k_isa_name(), test_isas[want]);
    /* read once: a later change of the variable alone changes nothing */
    cr_assert_eq(setenv("TJ_ISA", want == TJ_K_ISA_GENERIC ? "avx512" : "generic", 1), 0);
    cr_assert_eq(tj_k_isa_active(), want);
}

Test(cpu_isa, force_takes_a_known_name_up_to_the_cpu_and_null_restores_the_default)
{
    cr_assert_eq(unsetenv("TJ_ISA"), 0);
    tj_k_isa cpu = tj_k_isa_cpu();
    cr_assert(tj_k_isa_force(NULL));
    cr_assert_eq(tj_k_isa_active(), cpu);
    for (int i = 0; i < TEST_NISA; i++) {
        cr_assert_eq(tj_k_isa_force(test_isas[i]), i <= (int)cpu, "%s on a CPU with %s", test_isas[i],
                     test_isas[cpu]);
        if (i <= (int)cpu) cr_assert_str_eq(tj_k_isa_name(), test_isas[i]);
    }
    cr_assert(tj_k_isa_force("generic"));
    static const char *const unknown[] = {"AVX2", "avx", "sse2", "", "avx512 "};
    for (size_t u = 0; u < sizeof unknown / sizeof *unknown; u++) {
        cr_assert_not(tj_k_isa_force(unknown[u]), "'%s' taken", unknown[u]);
        cr_assert_eq(tj_k_isa_active(), TJ_K_ISA_GENERIC, "'%s' changed the ISA", unknown[u]);
    }
    cr_assert(tj_k_isa_force(NULL));
    cr_assert_eq(tj_k_isa_active(), cpu);
}

Test(cpu_isa, tj_isa_caps_the_default_and_force_cannot_lift_it)
{
    tj_k_isa cpu = tj_k_isa_cpu();
    for (int e = 0; e < TEST_NISA; e++) {
        cr_assert_eq(setenv("TJ_ISA", test_isas[e], 1), 0);
        tj_k_isa cap = (tj_k_isa)e < cpu ? (tj_k_isa)e : cpu;
        cr_assert(tj_k_isa_force(NULL)); /* reads TJ_ISA again */
        cr_assert_eq(tj_k_isa_active(), cap, "TJ_ISA=%s: %s in use", test_isas[e], tj_k_isa_name());
        for (int i = 0; i < TEST_NISA; i++) {
            cr_assert_eq(tj_k_isa_force(test_isas[i]), i <= (int)cap, "TJ_ISA=%s, force %s", test_isas[e],
                         test_isas[i]);
            /* a refused name leaves the last one forced: cap, in this order */
            cr_assert_eq(tj_k_isa_active(), i <= (int)cap ? (tj_k_isa)i : cap);
        }
        cr_assert(tj_k_isa_force("generic"));
    }
    /* unknown, or not lower case: no cap, the CPU's best (as before TJ_ISA
     * was honoured everywhere) */
    static const char *const unknown[] = {"AVX2", "avx3", "", "none"};
    for (size_t u = 0; u < sizeof unknown / sizeof *unknown; u++) {
        cr_assert_eq(setenv("TJ_ISA", unknown[u], 1), 0);
        cr_assert(tj_k_isa_force(NULL));
        cr_assert_eq(tj_k_isa_active(), cpu, "TJ_ISA='%s': %s in use", unknown[u], tj_k_isa_name());
    }
}

/* ---- the routes the ISA caps ---- */

/* libm's expf one by one, the sum in double, then a multiply by its
 * reciprocal: kernels/softmax.c's portable row, which it keeps in step
 * with. */
static void softmax_row_c(const float *x, float *y, int64_t n)
{
    float max = -INFINITY;
    for (int64_t i = 0; i < n; i++) max = x[i] > max ? x[i] : max;
    double sum = 0;
    for (int64_t i = 0; i < n; i++) sum += y[i] = expf(x[i] - max);
    float inv = (float)(1.0 / sum);
    for (int64_t i = 0; i < n; i++) y[i] *= inv;
}

/* Whether the first n floats of a and b hold the same bytes. */
static bool same_bytes(const float *a, const float *b, int64_t n) { return !memcmp(a, b, sizeof(float) * (size_t)n); }

Test(cpu_isa, each_isa_forced_gives_its_own_softmax_row_bytes)
{
    /* 999 of these: the AVX-512 and AVX2 sums (16 and 8 lanes) round apart
     * (at 1000 they happen to meet) */
    enum { N = 999 };
    static float x[N], direct[TEST_NISA][N];
    for (int i = 0; i < N; i++) x[i] = (float)(6.0 * sin(0.37 * i) + 0.01 * (i % 17));
    bool has[TEST_NISA] = {true, test_cpu_has_avx2(), test_cpu_has_avx512()};
    softmax_row_c(x, direct[TJ_K_ISA_GENERIC], N);
    if (has[TJ_K_ISA_AVX2]) tj_k_softmax_rows_f32_avx2(x, N, direct[TJ_K_ISA_AVX2], 1, N, false);
    if (has[TJ_K_ISA_AVX512]) tj_k_softmax_rows_f32_avx512(x, N, direct[TJ_K_ISA_AVX512], 1, N, false);
    /* the loops differ in some bytes, so that the right one can be told */
    for (int i = 0; i < TEST_NISA; i++)
        for (int j = 0; j < i; j++)
            if (has[i] && has[j])
                cr_assert_not(same_bytes(direct[i], direct[j], N), "the %s and %s rows are equal", test_isas[i],
                              test_isas[j]);
    tj_set_num_threads(1);
    tj_tensor *t = test_f32(2, (int64_t[]){1, N}, x);
    int runs = 0;
    for (int i = 0; i < TEST_NISA; i++) {
        if (!tj_k_isa_force(test_isas[i])) continue;
        tj_tensor *y = tj_softmax(t, 1);
        test_assert_dtype_shape(y, TJ_FLOAT32, 2, (int64_t[]){1, N});
        cr_expect(same_bytes(tj_tensor_data(y), direct[i], N), "softmax under %s: not the %s row's bytes",
                  test_isas[i], test_isas[i]);
        runs++;
    }
    cr_assert_geq(runs, 1); /* generic at least */
}

Test(cpu_isa, each_isa_forced_routes_a_float32_product_to_its_own_kernel)
{
    /* 96 x 600 by 600 x 64: past the matrix-vector routes' vectors, sums
     * over several of the kernel's blocks (128 steps on AVX-512, 384 on
     * AVX2); A row-major, which the AVX2 instance takes at any length */
    enum { M = 96, K = 600, N = 64 };
    static float a[M * K], b[K * N], direct[TEST_NISA][M * N];
    for (int i = 0; i < M * K; i++) a[i] = (float)sin(0.013 * i) * 0.9f;
    for (int i = 0; i < K * N; i++) b[i] = (float)cos(0.029 * i + 0.5) * 1.1f;
    tj_set_num_threads(1); /* OpenBLAS's too: its split may change the bytes */
    bool has[TEST_NISA] = {true, test_cpu_has_avx2(), test_cpu_has_avx512()};
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f,
                direct[TJ_K_ISA_GENERIC], N);
    if (has[TJ_K_ISA_AVX2])
        tj_k_gemm_f32_avx2(M, N, K, 1.0f, a, K, 1, b, N, 1, 0.0f, direct[TJ_K_ISA_AVX2], N, 1, NULL);
    if (has[TJ_K_ISA_AVX512])
        tj_k_gemm_f32_avx512(M, N, K, 1.0f, a, K, 1, b, N, 1, 0.0f, direct[TJ_K_ISA_AVX512], N, 1, NULL);
    for (int i = 0; i < TEST_NISA; i++)
        for (int j = 0; j < i; j++)
            if (has[i] && has[j])
                cr_assert_not(same_bytes(direct[i], direct[j], M * N), "the %s and %s products are equal",
                              test_isas[i], test_isas[j]);
    tj_tensor *ta = test_f32(2, (int64_t[]){M, K}, a), *tb = test_f32(2, (int64_t[]){K, N}, b);
    int runs = 0;
    for (int i = 0; i < TEST_NISA; i++) {
        if (!tj_k_isa_force(test_isas[i])) continue;
        cr_assert_eq(tj_k_gemm_f32_supported(), i != TJ_K_ISA_GENERIC);
        tj_tensor *c = tj_mm(ta, tb);
        test_assert_dtype_shape(c, TJ_FLOAT32, 2, (int64_t[]){M, N});
        cr_expect(same_bytes(tj_tensor_data(c), direct[i], M * N), "mm under %s: not the %s kernel's bytes",
                  test_isas[i], test_isas[i]);
        runs++;
    }
    cr_assert_geq(runs, 1);
}

Test(cpu_isa, each_isa_forced_routes_a_one_row_product_to_its_own_matrix_vector_kernel)
{
    /* x @ W^T with one row of x (a Linear layer at batch 1, mlp_b1's fc1):
     * the row form's AVX-512 or AVX2 instance (kernels/gemv_isa.h), or
     * OpenBLAS's sgemv; 784 columns, which the 16- and 8-lane sums round
     * apart */
    enum { ROWS = 256, COLS = 784 };
    static float w[ROWS * COLS], x[COLS], direct[TEST_NISA][ROWS];
    for (int i = 0; i < ROWS * COLS; i++) w[i] = (float)sin(0.011 * i) * 0.7f;
    for (int i = 0; i < COLS; i++) x[i] = (float)cos(0.023 * i + 0.3);
    tj_set_num_threads(1);
    bool has[TEST_NISA] = {true, test_cpu_has_avx2(), test_cpu_has_avx512()};
    cblas_sgemv(CblasRowMajor, CblasNoTrans, ROWS, COLS, 1.0f, w, COLS, x, 1, 0.0f, direct[TJ_K_ISA_GENERIC], 1);
    if (has[TJ_K_ISA_AVX2])
        tj_k_gemv_n_f32_avx2(1, ROWS, COLS, 1.0f, w, COLS, x, COLS, 0.0f, direct[TJ_K_ISA_AVX2], 1, ROWS);
    if (has[TJ_K_ISA_AVX512])
        tj_k_gemv_n_f32_avx512(1, ROWS, COLS, 1.0f, w, COLS, x, COLS, 0.0f, direct[TJ_K_ISA_AVX512], 1, ROWS);
    for (int i = 0; i < TEST_NISA; i++)
        for (int j = 0; j < i; j++)
            if (has[i] && has[j])
                cr_assert_not(same_bytes(direct[i], direct[j], ROWS), "the %s and %s products are equal",
                              test_isas[i], test_isas[j]);
    tj_tensor *tx = test_f32(2, (int64_t[]){1, COLS}, x), *tw = test_f32(2, (int64_t[]){ROWS, COLS}, w);
    int runs = 0;
    for (int i = 0; i < TEST_NISA; i++) {
        if (!tj_k_isa_force(test_isas[i])) continue;
        tj_tensor *y = tj_mm(tx, tj_t(tw));
        test_assert_dtype_shape(y, TJ_FLOAT32, 2, (int64_t[]){1, ROWS});
        cr_expect(same_bytes(tj_tensor_data(y), direct[i], ROWS), "x @ W^T under %s: not the %s kernel's bytes",
                  test_isas[i], test_isas[i]);
        runs++;
    }
    cr_assert_geq(runs, 1);
}
