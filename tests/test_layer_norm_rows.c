/* The per-ISA float32 layer-norm forward over a block of rows is
 * software-pipelined (pass 1 of the next row runs inside pass 2 of this
 * one, kernels/layer_norm_isa.h): a block gives, bit for bit, what the rows
 * give one at a time (a block of one row has nothing to pipeline), for
 * every tail length of both vector widths, with and without weight and
 * bias, rows with a large common offset, constant rows, rows whose first
 * elements sit far from the mean (the statistics pass runs again), and nan
 * and inf entries. Rows of finite values whose deviations from the mean
 * pass 2^64 (their squares overflow float32) normalise as the float64
 * formula does, as the decomposition (float64 throughout) and PyTorch's
 * own float64 layer_norm give, not to 0 by an infinite variance. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/layer_norm.h"
#include "test_util.h"

typedef void (*rows_fn)(const float *, float *, int64_t, int64_t, const float *, const float *, double, float *,
                        float *);

enum { ROWS = 5, KINDS = 5 };

/* Row r of kind k: 0 plain, 1 offset 1e4, 2 constant (odd rows), 3 the
 * first 16 elements 50 above the rest, 4 a nan or inf in the middle row. */
static void fill(float *x, int64_t n, int kind)
{
    for (int r = 0; r < ROWS; r++) {
        float *xr = x + r * n;
        for (int64_t i = 0; i < n; i++) xr[i] = 2.0f * sinf(0.37f * (float)(i + 11 * r)) + 0.1f * (float)(i % 7);
        if (kind == 1)
            for (int64_t i = 0; i < n; i++) xr[i] += 1e4f;
        if (kind == 2 && r % 2)
            for (int64_t i = 0; i < n; i++) xr[i] = 3.25f;
        if (kind == 3)
            for (int64_t i = 0; i < n && i < 16; i++) xr[i] += 50.0f;
        if (kind == 4 && r == ROWS / 2) xr[n / 2] = n % 2 ? NAN : INFINITY;
    }
}

static void check(const char *isa, rows_fn rows)
{
    static const int64_t lengths[] = {1,  2,  3,  5,  8,  9,  15,  16,  17,  31,  32, 33,
                                      47, 48, 63, 64, 65, 70, 127, 128, 129, 768, 1029};
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++) {
        int64_t n = lengths[li];
        float *x = malloc((size_t)(ROWS * n) * sizeof(float)), *w = malloc((size_t)n * sizeof(float));
        float *b = malloc((size_t)n * sizeof(float)), *y1 = malloc((size_t)(ROWS * n) * sizeof(float));
        float *y2 = malloc((size_t)(ROWS * n) * sizeof(float));
        cr_assert(x && w && b && y1 && y2);
        for (int64_t i = 0; i < n; i++) w[i] = 1.0f + 0.01f * (float)i, b[i] = 0.5f - 0.02f * (float)i;
        for (int kind = 0; kind < KINDS; kind++)
            for (int wb = 0; wb < 4; wb++) {
                fill(x, n, kind);
                const float *wp = wb & 1 ? w : NULL, *bp = wb & 2 ? b : NULL;
                float m1[ROWS], r1[ROWS], m2[ROWS], r2[ROWS];
                rows(x, y1, ROWS, n, wp, bp, 1e-5, m1, r1);
                for (int r = 0; r < ROWS; r++) rows(x + r * n, y2 + r * n, 1, n, wp, bp, 1e-5, m2 + r, r2 + r);
                cr_expect(!memcmp(y1, y2, (size_t)(ROWS * n) * sizeof(float)) && !memcmp(m1, m2, sizeof m1) &&
                              !memcmp(r1, r2, sizeof r1),
                          "%s: n=%lld kind %d weight %d bias %d: a block differs from single rows", isa,
                          (long long)n, kind, wb & 1, wb >> 1);
            }
        free(x), free(w), free(b), free(y1), free(y2);
    }
}

Test(layer_norm_rows, block_equals_single_rows_avx512)
{
    if (test_cpu_has_avx512()) check("avx512", tj_k_layer_norm_rows_f32_avx512);
}

Test(layer_norm_rows, block_equals_single_rows_avx2)
{
    if (test_cpu_has_avx2()) check("avx2", tj_k_layer_norm_rows_f32_avx2);
}

/* Finite rows with deviations of 1e20 to 3e38 (squares beyond float32's
 * range): y and rstd within a few ulp of the formula in double. */
static void check_huge(const char *isa, rows_fn rows)
{
    static const int64_t lengths[] = {2, 3, 7, 16, 17, 33, 64, 65, 129};
    static const float scales[] = {1e20f, 1e30f, 1e37f};
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++)
        for (size_t si = 0; si < sizeof scales / sizeof *scales; si++) {
            int64_t n = lengths[li];
            float *x = malloc((size_t)(ROWS * n) * sizeof(float)), *y = malloc((size_t)(ROWS * n) * sizeof(float));
            cr_assert(x && y);
            for (int64_t i = 0; i < ROWS * n; i++) x[i] = scales[si] * sinf(0.37f * (float)i + 0.1f);
            x[0] = 3e38f, x[1] = -3e38f; /* deviations near float32's largest */
            float mean[ROWS], rstd[ROWS];
            rows(x, y, ROWS, n, NULL, NULL, 1e-5, mean, rstd);
            for (int r = 0; r < ROWS; r++) {
                const float *xr = x + r * n;
                double m = 0, v = 0;
                for (int64_t i = 0; i < n; i++) m += xr[i];
                m /= (double)n;
                for (int64_t i = 0; i < n; i++) v += ((double)xr[i] - m) * ((double)xr[i] - m);
                double rs = 1.0 / sqrt(v / (double)n + 1e-5);
                cr_expect(fabs(rstd[r] - rs) <= 1e-6 * rs, "%s: n=%lld scale %g row %d: rstd %g, want %g", isa,
                          (long long)n, (double)scales[si], r, (double)rstd[r], rs);
                for (int64_t i = 0; i < n; i++) {
                    double want = ((double)xr[i] - m) * rs;
                    cr_expect(fabs(y[r * n + i] - want) <= 1e-5 * (1 + fabs(want)),
                              "%s: n=%lld scale %g row %d: y[%lld] = %g, want %g", isa, (long long)n,
                              (double)scales[si], r, (long long)i, (double)y[r * n + i], want);
                }
            }
            free(x), free(y);
        }
}

Test(layer_norm_rows, huge_deviations_avx512)
{
    if (test_cpu_has_avx512()) check_huge("avx512", tj_k_layer_norm_rows_f32_avx512);
}

Test(layer_norm_rows, huge_deviations_avx2)
{
    if (test_cpu_has_avx2()) check_huge("avx2", tj_k_layer_norm_rows_f32_avx2);
}
