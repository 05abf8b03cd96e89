/* The per-ISA float32 softmax / log-softmax over a block of rows is
 * software-pipelined (pass 1 of the next row and pass 3 of the previous
 * one run inside pass 2 of this one, kernels/softmax_isa.h): a block gives
 * what the rows give one at a time (a block of one row has nothing to
 * pipeline), for every tail length of both vector widths, with rows
 * further apart in x than n, rows whose exps underflow, an all -inf row,
 * and +inf and nan entries; nothing is written past the block. Equal
 * means the same bytes, except that a nan may differ from another nan in
 * its sign and payload (those follow the compiler's operand order in
 * commutative instructions, not the numerics). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/softmax.h"
#include "test_util.h"

typedef void (*rows_fn)(const float *, int64_t, float *, int64_t, int64_t, bool);

enum { ROWS = 6, KINDS = 5, GAP = 5, GUARD = 64 };

/* Row r of kind k (rows xs apart): 0 plain, 1 spread over +-300 (many
 * exps underflow to 0), 2 an all -inf row, 3 a +inf in one row, 4 a nan
 * in one row. */
static void fill(float *x, int64_t n, int64_t xs, int kind)
{
    for (int r = 0; r < ROWS; r++) {
        float *xr = x + r * xs;
        for (int64_t i = 0; i < xs; i++)
            xr[i] = 3.0f * sinf(0.37f * (float)(i + 11 * r)) + 0.1f * (float)(i % 7) - (float)r;
        if (kind == 1)
            for (int64_t i = 0; i < n; i++) xr[i] *= 100.0f;
        if (kind == 2 && r == 1)
            for (int64_t i = 0; i < n; i++) xr[i] = -INFINITY;
        if (kind == 3 && r == ROWS / 2) xr[n / 2] = INFINITY;
        if (kind == 4 && r == ROWS / 2) xr[n - 1] = NAN;
    }
}

/* The first k floats of a and b are equal, nan matching any nan. */
static bool same(const float *a, const float *b, int64_t k)
{
    for (int64_t i = 0; i < k; i++)
        if (memcmp(a + i, b + i, sizeof(float)) && !(isnan(a[i]) && isnan(b[i]))) return false;
    return true;
}

static void check(const char *isa, rows_fn rows)
{
    static const int64_t lengths[] = {1,  2,  3,  5,  7,  8,  9,   15,  16,  17,  31,  32,  33,
                                      47, 48, 63, 64, 65, 95, 127, 128, 129, 200, 768, 1029};
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++) {
        int64_t n = lengths[li];
        float *x = malloc((size_t)(ROWS * (n + GAP)) * sizeof(float));
        float *y1 = malloc((size_t)(ROWS * n + GUARD) * sizeof(float));
        float *y2 = malloc((size_t)(ROWS * n) * sizeof(float));
        cr_assert(x && y1 && y2);
        for (int kind = 0; kind < KINDS; kind++)
            for (int v = 0; v < 4; v++) {
                bool take_log = v & 1;
                int64_t xs = v & 2 ? n + GAP : n;
                fill(x, n, xs, kind);
                for (int i = 0; i < GUARD; i++) y1[ROWS * n + i] = 7.0f;
                rows(x, xs, y1, ROWS, n, take_log);
                for (int r = 0; r < ROWS; r++) rows(x + r * xs, xs, y2 + r * n, 1, n, take_log);
                cr_expect(same(y1, y2, ROWS * n),
                          "%s: n=%lld kind %d %s, x stride %lld: a block differs from single rows", isa,
                          (long long)n, kind, take_log ? "log_softmax" : "softmax", (long long)xs);
                for (int i = 0; i < GUARD; i++)
                    cr_expect_eq(y1[ROWS * n + i], 7.0f, "%s: n=%lld: written past the block", isa, (long long)n);
                /* the values themselves: the kind-0 rows against float64 */
                if (kind == 0)
                    for (int r = 0; r < ROWS; r++) {
                        const float *xr = x + r * xs;
                        double max = -INFINITY, sum = 0;
                        for (int64_t i = 0; i < n; i++) max = xr[i] > max ? xr[i] : max;
                        for (int64_t i = 0; i < n; i++) sum += exp((double)xr[i] - max);
                        for (int64_t i = 0; i < n; i++) {
                            double want = take_log ? (double)xr[i] - max - log(sum) : exp((double)xr[i] - max) / sum;
                            double got = y1[r * n + i];
                            cr_assert(fabs(got - want) <= 1e-6 * fabs(want) + 1e-6,
                                      "%s: n=%lld row %d [%lld]: %g, want %g", isa, (long long)n, r, (long long)i,
                                      got, want);
                        }
                    }
            }
        free(x), free(y1), free(y2);
    }
}

Test(softmax_rows, block_equals_single_rows_avx512)
{
    if (test_cpu_has_avx512()) check("avx512", tj_k_softmax_rows_f32_avx512);
}

Test(softmax_rows, block_equals_single_rows_avx2)
{
    if (test_cpu_has_avx2()) check("avx2", tj_k_softmax_rows_f32_avx2);
}
