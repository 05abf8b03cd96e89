/* The float32 matrix-vector kernels of each ISA (kernels/gemv_isa.h: the
 * AVX-512 and AVX2 instances of the row and column forms), called directly
 * on every ISA this CPU runs, against a float64 sum: odd shapes (rows not a
 * multiple of the row form's four, columns not a multiple of a vector,
 * leading dimensions past the row, rows longer than one pass of the row
 * form and wider than one chunk of the column form, any number of vectors
 * and their groups), strided y, beta 0 with nan in y (never read), and the
 * elements between the strided outputs left alone. Then tj_k_gemv itself
 * on the ISA in use (CI runs the suite again under TJ_ISA=avx2): which
 * products it takes, and the same bytes on one thread and split over two. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "kernels/gemv.h"
#include "test_util.h"

TestSuite(gemv, .init = test_scope_open, .fini = test_scope_close_isa);

typedef void (*row_fn)(int64_t, int64_t, int64_t, float, const float *, int64_t, const float *, int64_t, float,
                       float *, int64_t, int64_t);
typedef void (*col_fn)(int64_t, int64_t, float, const float *, int64_t, const float *, float, float *, int64_t);

/* The instances this CPU runs: [0] AVX2, [1] AVX-512 (NULL when not). */
typedef struct isa_fns {
    const char *name;
    row_fn row;
    col_fn col;
} isa_fns;

static int cpu_instances(isa_fns out[2])
{
    int n = 0;
    if (test_cpu_has_avx2()) out[n++] = (isa_fns){"avx2", tj_k_gemv_n_f32_avx2, tj_k_gemv_t_f32_avx2};
    if (test_cpu_has_avx512()) out[n++] = (isa_fns){"avx512", tj_k_gemv_n_f32_avx512, tj_k_gemv_t_f32_avx512};
    return n;
}

/* Deterministic values in about [-1, 1], not all of one sign. */
static void fill(float *p, int64_t n, unsigned seed)
{
    for (int64_t i = 0; i < n; i++) p[i] = (float)sin(0.7 * (double)i + 1.3 * seed) * (1.0f + 0.1f * (float)(i % 5));
}

/* |got - want| within what float sums of `terms` terms of magnitude `mag`
 * (the sum of |products|) may round to; nan where y was nan with beta 0
 * is wrong. */
static bool near(float got, double want, int64_t terms, double mag)
{
    if (isnan(got)) return false;
    return fabs((double)got - want) <= ((double)terms / 8 + 8) * FLT_EPSILON * mag + 1e-30;
}

#define SENTINEL 12345.0f

Test(gemv, row_form_of_each_isa_matches_a_double_sum_on_odd_shapes)
{
    isa_fns fns[2];
    int nisa = cpu_instances(fns);
    if (!nisa) cr_skip_test("this CPU runs neither the AVX2 nor the AVX-512 kernels");
    /* 1030 columns: two passes of the row form (1024 at most each) */
    static const int64_t rows_[] = {1, 3, 4, 5, 7, 13}, cols_[] = {1, 7, 8, 9, 15, 17, 33, 100, 1030};
    static const int64_t nvs[] = {1, 2, 3, 4, 5, 7, 9};
    const float alpha = 0.75f;
    int checked = 0;
    for (int f = 0; f < nisa; f++)
        for (size_t a = 0; a < sizeof rows_ / sizeof *rows_; a++)
            for (size_t b = 0; b < sizeof cols_ / sizeof *cols_; b++)
                for (size_t c = 0; c < sizeof nvs / sizeof *nvs; c++)
                    for (int variant = 0; variant < 2; variant++) {
                        /* variant 0: beta 0 over nan, y contiguous, ld = cols;
                         * 1: beta 1.5, y strided 3, ld and x's stride past the row */
                        int64_t rows = rows_[a], cols = cols_[b], nv = nvs[c];
                        int64_t ld = cols + 3 * variant, x_vs = cols + 5 * variant, incy = 1 + 2 * variant;
                        int64_t y_vs = rows * incy + 2;
                        float beta = variant ? 1.5f : 0.0f;
                        float *m = malloc(sizeof(float) * (size_t)(rows * ld));
                        float *x = malloc(sizeof(float) * (size_t)(nv * x_vs));
                        float *y = malloc(sizeof(float) * (size_t)(nv * y_vs)), *y0 = malloc(sizeof(float) * (size_t)(nv * y_vs));
                        cr_assert(m && x && y && y0);
                        fill(m, rows * ld, 1 + (unsigned)a), fill(x, nv * x_vs, 2 + (unsigned)b);
                        for (int64_t i = 0; i < nv * y_vs; i++) y0[i] = SENTINEL;
                        for (int64_t v = 0; v < nv; v++)
                            for (int64_t i = 0; i < rows; i++)
                                y0[v * y_vs + i * incy] = variant ? (float)cos((double)(i + v)) : NAN;
                        memcpy(y, y0, sizeof(float) * (size_t)(nv * y_vs));
                        fns[f].row(nv, rows, cols, alpha, m, ld, x, x_vs, beta, y, incy, y_vs);
                        int bad = 0;
                        for (int64_t v = 0; v < nv; v++)
                            for (int64_t i = 0; i < rows; i++) {
                                double s = 0, mag = 0;
                                for (int64_t p = 0; p < cols; p++) {
                                    double t = (double)m[i * ld + p] * x[v * x_vs + p];
                                    s += t, mag += fabs(t);
                                }
                                double yi = variant ? y0[v * y_vs + i * incy] : 0;
                                double want = alpha * s + beta * yi;
                                bad += !near(y[v * y_vs + i * incy], want, cols, alpha * mag + fabs(beta * yi));
                            }
                        for (int64_t i = 0; i < nv * y_vs; i++) /* between the outputs: untouched */
                            if (y0[i] == SENTINEL) bad += y[i] != SENTINEL;
                        cr_expect_eq(bad, 0, "%s row form: rows %lld cols %lld nv %lld variant %d: %d wrong", fns[f].name,
                                     (long long)rows, (long long)cols, (long long)nv, variant, bad);
                        checked++;
                        free(m), free(x), free(y), free(y0);
                    }
    cr_assert_gt(checked, 0);
}

Test(gemv, column_form_of_each_isa_matches_a_double_sum_on_odd_shapes)
{
    isa_fns fns[2];
    int nisa = cpu_instances(fns);
    if (!nisa) cr_skip_test("this CPU runs neither the AVX2 nor the AVX-512 kernels");
    /* 2100 columns: two chunks of 2048 sums; rows past a multiple of eight */
    static const int64_t rows_[] = {1, 7, 8, 9, 17, 70}, cols_[] = {1, 7, 8, 9, 31, 100, 2100};
    const float alpha = -1.25f;
    int checked = 0;
    for (int f = 0; f < nisa; f++)
        for (size_t a = 0; a < sizeof rows_ / sizeof *rows_; a++)
            for (size_t b = 0; b < sizeof cols_ / sizeof *cols_; b++)
                for (int variant = 0; variant < 2; variant++) {
                    int64_t rows = rows_[a], cols = cols_[b], ld = cols + 5 * variant, incy = 1 + variant;
                    float beta = variant ? 0.5f : 0.0f;
                    float *m = malloc(sizeof(float) * (size_t)(rows * ld)), *x = malloc(sizeof(float) * (size_t)rows);
                    float *y = malloc(sizeof(float) * (size_t)(cols * incy)), *y0 = malloc(sizeof(float) * (size_t)(cols * incy));
                    cr_assert(m && x && y && y0);
                    fill(m, rows * ld, 3 + (unsigned)a), fill(x, rows, 4 + (unsigned)b);
                    for (int64_t j = 0; j < cols * incy; j++) y0[j] = SENTINEL;
                    for (int64_t j = 0; j < cols; j++) y0[j * incy] = variant ? (float)sin((double)j) : NAN;
                    memcpy(y, y0, sizeof(float) * (size_t)(cols * incy));
                    fns[f].col(rows, cols, alpha, m, ld, x, beta, y, incy);
                    int bad = 0;
                    for (int64_t j = 0; j < cols; j++) {
                        double s = 0, mag = 0;
                        for (int64_t p = 0; p < rows; p++) {
                            double t = (double)m[p * ld + j] * x[p];
                            s += t, mag += fabs(t);
                        }
                        double yj = variant ? y0[j * incy] : 0;
                        bad += !near(y[j * incy], alpha * s + beta * yj, rows, fabs(alpha) * mag + fabs(beta * yj));
                    }
                    for (int64_t j = 0; j < cols * incy; j++)
                        if (y0[j] == SENTINEL) bad += y[j] != SENTINEL;
                    cr_expect_eq(bad, 0, "%s column form: rows %lld cols %lld variant %d: %d wrong", fns[f].name,
                                 (long long)rows, (long long)cols, variant, bad);
                    checked++;
                    free(m), free(x), free(y), free(y0);
                }
    cr_assert_gt(checked, 0);
}

/* The AVX2 instance is not the AVX-512 one under another name: on a CPU
 * with both, their sums (8 and 16 lanes) round apart somewhere, while
 * agreeing within rounding (the test above) with the same semantics. */
Test(gemv, avx2_and_avx512_instances_round_apart_and_agree_within_rounding)
{
    if (!test_cpu_has_avx512() || !test_cpu_has_avx2()) cr_skip_test("needs a CPU with AVX-512 and AVX2");
    enum { ROWS = 37, COLS = 999, NV = 5 };
    static float m[ROWS * COLS], x[NV * COLS], y2[NV * ROWS], y5[NV * ROWS], c2[COLS], c5[COLS];
    fill(m, ROWS * COLS, 7), fill(x, NV * COLS, 8);
    tj_k_gemv_n_f32_avx2(NV, ROWS, COLS, 1.0f, m, COLS, x, COLS, 0.0f, y2, 1, ROWS);
    tj_k_gemv_n_f32_avx512(NV, ROWS, COLS, 1.0f, m, COLS, x, COLS, 0.0f, y5, 1, ROWS);
    cr_expect(memcmp(y2, y5, sizeof y2) != 0, "the row forms gave the same bytes");
    for (int i = 0; i < NV * ROWS; i++) cr_expect(fabsf(y2[i] - y5[i]) <= 1e-4f * (1 + fabsf(y5[i])), "%d", i);
    tj_k_gemv_t_f32_avx2(ROWS, COLS, 1.0f, m, COLS, x, 0.0f, c2, 1);
    tj_k_gemv_t_f32_avx512(ROWS, COLS, 1.0f, m, COLS, x, 0.0f, c5, 1);
    /* the column form adds each column's rows in one order on both: the
     * same bytes (one FMA per row into the column's lane) */
    cr_expect(memcmp(c2, c5, sizeof c2) == 0, "the column forms differ");
}

/* ---- tj_k_gemv on the ISA in use ---- */

Test(gemv, own_kernels_take_float32_unit_stride_products_on_avx2_and_avx512)
{
    bool has[TEST_NISA] = {true, test_cpu_has_avx2(), test_cpu_has_avx512()};
    tj_k_gemv_args g = {.dtype = TJ_FLOAT32, .rows = 256, .cols = 784, .ld = 784, .incx = 1, .nv = 1};
    int runs = 0;
    for (int i = 0; i < TEST_NISA; i++) {
        if (!has[i] || !tj_k_isa_force(test_isas[i])) continue;
        bool own = i != TJ_K_ISA_GENERIC;
        cr_expect_eq(tj_k_gemv_on_own_kernel(TJ_FLOAT32, 1), own, "%s", test_isas[i]);
        cr_expect_not(tj_k_gemv_on_own_kernel(TJ_FLOAT32, 2), "%s: strided x", test_isas[i]);
        cr_expect_not(tj_k_gemv_on_own_kernel(TJ_FLOAT64, 1), "%s: float64", test_isas[i]);
        /* the row form takes more vectors than BLAS's one-by-one gemv (3),
         * and long rows more than short ones */
        g.cols = 784, g.trans = false;
        int64_t long_rows = tj_k_gemv_max_vectors(&g);
        g.cols = 128;
        int64_t short_rows = tj_k_gemv_max_vectors(&g);
        cr_expect(own ? long_rows > short_rows && short_rows > 3 : long_rows == 3 && short_rows == 3,
                  "%s: %lld and %lld vectors", test_isas[i], (long long)long_rows, (long long)short_rows);
        g.trans = true;
        cr_expect_eq(tj_k_gemv_max_vectors(&g), 3, "%s: column form", test_isas[i]);
        runs++;
    }
    cr_assert_geq(runs, 1);
}

/* The row form with one vector takes eight rows at a time on AVX-512 (four
 * on AVX2): each row's sum must come out as when the rows are taken four
 * at a time (a thread's share of rows starts at any multiple of four). */
Test(gemv, one_vector_row_form_gives_the_bytes_of_blocks_of_four_rows)
{
    isa_fns fns[2];
    int nisa = cpu_instances(fns);
    if (!nisa) cr_skip_test("this CPU runs neither the AVX2 nor the AVX-512 kernels");
    enum { ROWS = 29 };
    static const int64_t cols_[] = {5, 40, 777, 1030};
    for (int f = 0; f < nisa; f++)
        for (size_t c = 0; c < sizeof cols_ / sizeof *cols_; c++) {
            int64_t cols = cols_[c];
            float *m = malloc(sizeof(float) * (size_t)(ROWS * cols)), *x = malloc(sizeof(float) * (size_t)cols);
            float whole[ROWS], fours[ROWS];
            cr_assert(m && x);
            fill(m, ROWS * cols, 11), fill(x, cols, 12);
            fns[f].row(1, ROWS, cols, 0.5f, m, cols, x, cols, 0.0f, whole, 1, ROWS);
            for (int64_t i = 0; i < ROWS; i += 4)
                fns[f].row(1, ROWS - i < 4 ? ROWS - i : 4, cols, 0.5f, m + i * cols, cols, x, cols, 0.0f, fours + i, 1,
                           ROWS);
            cr_expect(memcmp(whole, fours, sizeof whole) == 0, "%s, %lld columns: rows differ from blocks of four",
                      fns[f].name, (long long)cols);
            free(m), free(x);
        }
}

/* A product large enough to be split over threads (gemv.c: from 192 Ki
 * matrix elements) gives the bytes of one thread, row form (split at
 * multiples of four rows, with a row block left over) and column form. */
Test(gemv, products_split_over_two_threads_give_the_bytes_of_one)
{
    if (!tj_k_gemv_on_own_kernel(TJ_FLOAT32, 1)) cr_skip_test("the ISA in use (%s) has no own kernels", tj_k_isa_name());
    enum { ROWS = 403, COLS = 777, NV = 3 };
    float *m = malloc(sizeof(float) * ROWS * COLS), *x = malloc(sizeof(float) * NV * COLS);
    float *y1 = malloc(sizeof(float) * NV * COLS), *y2 = malloc(sizeof(float) * NV * COLS);
    cr_assert(m && x && y1 && y2);
    fill(m, ROWS * COLS, 9), fill(x, NV * COLS, 10);
    for (int trans = 0; trans < 2; trans++) {
        int64_t nout = trans ? COLS : ROWS;
        tj_k_gemv_args g = {.dtype = TJ_FLOAT32, .trans = trans, .rows = ROWS, .cols = COLS, .ld = COLS, .m = m,
                            .x = x, .incx = 1, .incy = 1, .alpha = 1.0, .beta = 0.0, .nv = trans ? 1 : NV,
                            .x_vs = COLS, .y_vs = nout, .batch = 1};
        g.y = y1;
        tj_k_gemv(&g, 1);
        g.y = y2;
        tj_k_gemv(&g, 2);
        cr_expect(memcmp(y1, y2, sizeof(float) * (size_t)(nout * g.nv)) == 0, "%s form: 2 threads differ",
                  trans ? "column" : "row");
    }
    free(m), free(x), free(y1), free(y2);
}
