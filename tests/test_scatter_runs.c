/* tj_k_scatter_add_runs_f32 (kernels/product_scatter.c; the per-ISA loop of
 * kernels/scatter_runs_isa.h, one masked vector per run on AVX-512, one or
 * two on AVX2), the col2im of a fused product-scatter: on every ISA the
 * bytes of the element-by-element loop, for runs of every length 1..16 at
 * every alignment, targets shared between runs (a run's additions in
 * order), and no element outside the runs written (the lanes past a run may
 * be another thread's). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "kernels/product_scatter.h"
#include "test_util.h"

TestSuite(scatter_runs, .init = test_scope_open, .fini = test_scope_close_isa);

enum { OUT = 160, GUARD = 32, MAX_RUNS = 64 };

/* Deterministic values in [-1, 1) that are not small integers. */
static float value(unsigned i)
{
    uint32_t x = 2463534242u ^ (i * 2654435761u);
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    return (float)((double)(x >> 8) / 8388608.0 - 1.0);
}

/* Runs of length len (1..16) starting at `first` and every `step` after,
 * until the targets pass OUT; returns how many, their elements in *total. */
static int64_t make_runs(int64_t *runs, int len, int first, int step, int64_t *total)
{
    int64_t n = 0;
    *total = 0;
    for (int start = first; start + len <= OUT && n < MAX_RUNS; start += step) {
        runs[n++] = (int64_t)start * 16 + (len - 1);
        *total += len;
    }
    return n;
}

Test(scatter_runs, every_isa_adds_each_run_as_the_element_loop_and_writes_nothing_else)
{
    int64_t runs[MAX_RUNS];
    float src[MAX_RUNS * 16], want[OUT + 2 * GUARD], got[OUT + 2 * GUARD];
    for (int i = 0; i < MAX_RUNS * 16; i++) src[i] = value((unsigned)i + 1000u);
    int tried = 0;
    for (int isa = 0; isa < TEST_NISA; isa++) {
        if (!tj_k_isa_force(test_isas[isa])) continue;
        tried++;
        for (int len = 1; len <= 16; len++)
            for (int first = 0; first < 17; first++)
                for (int step = 1; step <= 24; step += 7) { /* 1, 8, 15: runs overlapping each other; 22: apart */
                    int64_t total, n = make_runs(runs, len, first, step, &total);
                    for (int i = 0; i < OUT + 2 * GUARD; i++) want[i] = value((unsigned)i);
                    for (int64_t r = 0, e = 0; r < n; r++)
                        for (int64_t i = 0; i <= (runs[r] & 15); i++, e++)
                            want[GUARD + (runs[r] >> 4) + i] = want[GUARD + (runs[r] >> 4) + i] + src[e];
                    for (int i = 0; i < OUT + 2 * GUARD; i++) got[i] = value((unsigned)i);
                    tj_k_scatter_add_runs_f32(got + GUARD, src, runs, n);
                    for (int i = 0; i < OUT + 2 * GUARD; i++)
                        cr_assert(memcmp(&got[i], &want[i], sizeof(float)) == 0,
                                  "%s, runs of %d from %d every %d (%lld elements): element %d is %.9g, want %.9g",
                                  test_isas[isa], len, first, step, (long long)total, i - GUARD, got[i], want[i]);
                }
    }
    cr_assert(tried >= 1, "no instruction set could be forced");
}
