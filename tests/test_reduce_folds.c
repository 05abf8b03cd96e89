/* The float32 reduction loops (and the float64 sum) of every instruction set the CPU has: the
 * AVX-512 folds (sum, product, max/min scans, argmax) and the AVX2 max/min
 * scans bit for bit against the generic C loops, which define the results,
 * through the reduction driver on runs of every length 0..100 plus longer ones, contiguous and strided, aligned or
 * not, on random data and on nan, infinities and signed zeros; the signed
 * zero ties of amax/amin/max.dim pinned as the generic loops resolve them;
 * and the conv bias gradient (sum over N, H, W of NCHW) against a sum in
 * long double. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "kernels/elementwise.h"
#include "kernels/reduce.h"
#include "kernels/reduce_isa.h"
#include "runtime/internal.h"
#include "test_util.h"

TestSuite(reduce_folds, .init = test_scope_open, .fini = test_scope_close_isa);

/* ---- signed zero ties, pinned: a value replaces the best so far only when
 * strictly better, within each of the scan's 32 lanes (element i goes to
 * lane i % 32 while whole groups of 32 remain), then over the lanes in lane
 * order, then over the remaining elements in order; and over runs in order.
 * So the zero kept is the first one in that order, not in memory order. ---- */

/* row of n elements equal to `fill`, with the given positions set */
static tj_tensor *row_with(int64_t n, float fill, int np, const int64_t *pos, const float *val)
{
    float *x = malloc((size_t)n * sizeof *x);
    cr_assert_not_null(x);
    for (int64_t i = 0; i < n; i++) x[i] = fill;
    for (int k = 0; k < np; k++) x[pos[k]] = val[k];
    tj_tensor *t = test_f32(1, (int64_t[]){n}, x);
    free(x);
    return t;
}

static void expect_zero(tj_tensor *t, bool negative, const char *isa, const char *what)
{
    cr_assert_not_null(t, "%s %s: %s", isa, what, tj_last_error());
    float v = *(const float *)tj_tensor_data(t);
    cr_expect(v == 0 && (signbit(v) != 0) == negative, "%s %s: got %a (bits %08x), want %s0", isa, what, (double)v,
              test_bits_f32(v), negative ? "-" : "+");
}

static void check_zero_ties(const char *isa)
{
    int64_t d0[] = {0};
    /* short rows: the first zero in memory order */
    expect_zero(tj_amax(row_with(3, -1, 2, (int64_t[]){0, 1}, (float[]){0.0f, -0.0f}), d0, 1, false), false, isa,
                "amax [+0, -0, -1]");
    expect_zero(tj_amax(row_with(3, -1, 2, (int64_t[]){0, 1}, (float[]){-0.0f, 0.0f}), d0, 1, false), true, isa,
                "amax [-0, +0, -1]");
    expect_zero(tj_amin(row_with(31, 1, 2, (int64_t[]){4, 30}, (float[]){-0.0f, 0.0f}), d0, 1, false), true, isa,
                "amin 31: -0 at 4, +0 at 30");
    /* 64 elements: lane 2 (element 34) comes before lane 5 (element 5) */
    expect_zero(tj_amax(row_with(64, -1, 2, (int64_t[]){5, 34}, (float[]){0.0f, -0.0f}), d0, 1, false), true, isa,
                "amax 64: +0 at 5, -0 at 34");
    expect_zero(tj_amax(row_with(64, -1, 2, (int64_t[]){5, 34}, (float[]){-0.0f, 0.0f}), d0, 1, false), false, isa,
                "amax 64: -0 at 5, +0 at 34");
    expect_zero(tj_amin(row_with(64, 1, 2, (int64_t[]){31, 32}, (float[]){0.0f, -0.0f}), d0, 1, false), true, isa,
                "amin 64: +0 at 31 (lane 31), -0 at 32 (lane 0)");
    /* same lane: the earlier element */
    expect_zero(tj_amax(row_with(64, -1, 2, (int64_t[]){3, 35}, (float[]){0.0f, -0.0f}), d0, 1, false), false, isa,
                "amax 64: +0 at 3, -0 at 35");
    /* same lane among lanes 16..31 (the second vector of 16 on AVX-512) */
    expect_zero(tj_amax(row_with(64, -1, 2, (int64_t[]){20, 52}, (float[]){0.0f, -0.0f}), d0, 1, false), false, isa,
                "amax 64: +0 at 20, -0 at 52");
    expect_zero(tj_amin(row_with(96, 1, 2, (int64_t[]){17, 81}, (float[]){-0.0f, 0.0f}), d0, 1, false), true, isa,
                "amin 96: -0 at 17, +0 at 81");
    /* the elements after the last group of 32 come after the lanes */
    expect_zero(tj_amax(row_with(40, -1, 2, (int64_t[]){3, 35}, (float[]){-0.0f, 0.0f}), d0, 1, false), true, isa,
                "amax 40: -0 at 3, +0 at 35 (tail)");
    expect_zero(tj_amin(row_with(100, 1, 3, (int64_t[]){70, 96, 99}, (float[]){0.0f, -0.0f, -0.0f}), d0, 1, false),
                false, isa, "amin 100: +0 at 70, -0 at 96, 99 (tail)");
    /* over runs in order: two rows of 35 of a [2, 40] slice */
    tj_tensor *m = row_with(80, -2, 2, (int64_t[]){40 + 1, 7}, (float[]){0.0f, -0.0f});
    tj_tensor *s = tj_slice(tj_view(m, (int64_t[]){2, 40}, 2), 1, true, 0, true, 35, 1);
    expect_zero(tj_amax(s, NULL, 0, false), true, isa, "amax of two runs: -0 in the first, +0 in the second");
    /* max.dim: the value as the scan keeps it, the index of the first
     * element equal to it (either zero) */
    tj_tensor *v, *i;
    tj_tensor *r = row_with(64, -1, 2, (int64_t[]){5, 34}, (float[]){0.0f, -0.0f});
    cr_assert_eq(tj_max_dim(r, 0, false, &v, &i), TJ_OK, "%s", tj_last_error());
    expect_zero(v, true, isa, "max.dim 64: +0 at 5, -0 at 34: value");
    cr_expect_eq(*(const int64_t *)tj_tensor_data(i), 5, "%s max.dim index %lld", isa,
                 (long long)*(const int64_t *)tj_tensor_data(i));
    cr_expect_eq(*(const int64_t *)tj_tensor_data(tj_argmax(r, false, 0, false)), 5, "%s argmax", isa);
}

Test(reduce_folds, signed_zero_ties_keep_the_first_zero_in_scan_order_on_every_isa)
{
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        check_zero_ties(test_isas[k]);
    }
}

/* ---- the loops through the driver, every ISA against the generic one ---- */

/* nan of both signs with distinct payloads (quiet and signalling), signed
 * zeros, infinities, denormals, extreme values */
static float special(unsigned i)
{
    static const uint32_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7fc00123u, 0xff800001u, 0x7f800abcu};
    const float vals[] = {0.0f, -0.0f, INFINITY, -INFINITY, 1.0f, -1.0f, FLT_MIN, -FLT_TRUE_MIN, FLT_MAX, -FLT_MAX};
    i %= 15;
    return i < 5 ? test_f32_bits(nans[i]) : vals[i - 5];
}

/* kind of data: 0 random, 1 random with a special value every ~8, 2 signed
 * zeros and negative values (ties for max), 3 random with infinities (no
 * nan), 4 all -inf, 5 signed zeros and positive values (ties for min) */
#define NKIND 6
static float value(int kind, unsigned *seed)
{
    unsigned r = (unsigned)rand_r(seed);
    float u = (float)(r % 20001) / 1000.0f - 10.0f;
    switch (kind) {
    case 1: return r % 8 == 0 ? special(r / 8) : u;
    case 2: return (float[]){0.0f, -0.0f, -1.0f, -2.0f}[r % 4];
    case 5: return (float[]){0.0f, -0.0f, 1.0f, 2.0f}[r % 4];
    case 3: return r % 9 == 0 ? (r % 2 ? INFINITY : -INFINITY) : u;
    case 4: return -INFINITY;
    default: return u;
    }
}

typedef struct result {
    double sum, prod;
    float max, min, amax;
    int64_t idx;
} result;

/* The driver on the n elements x[0], x[s], ... as one output. */
static result reduce_run(const float *x, int64_t n, int64_t s, int nthreads)
{
    result res;
    int64_t shape[] = {n}, strides[] = {s};
    bool red[] = {true};
    tj_k_reduce r = {.x = x, .x_dtype = TJ_FLOAT32, .divisor = 1};
    tj_k_reduce_prepare(&r, 1, shape, strides, red);
    void *scratch = malloc(tj_k_reduce_scratch_bytes(&r) + 1);
    cr_assert_not_null(scratch);
    r.kind = TJ_K_RED_SUM, r.out = &res.sum, r.out_dtype = TJ_FLOAT64;
    tj_k_reduce_run(&r, scratch, nthreads);
    r.kind = TJ_K_RED_PROD, r.out = &res.prod;
    tj_k_reduce_run(&r, scratch, nthreads);
    r.kind = TJ_K_RED_MAX, r.out = &res.max, r.out_dtype = TJ_FLOAT32;
    tj_k_reduce_run(&r, scratch, nthreads);
    r.kind = TJ_K_RED_MIN, r.out = &res.min;
    tj_k_reduce_run(&r, scratch, nthreads);
    r.kind = TJ_K_RED_ARGMAX, r.out = &res.amax, r.out_index = &res.idx;
    tj_k_reduce_run(&r, scratch, nthreads);
    free(scratch);
    return res;
}

static void expect_same(const result *g, const result *v, const char *isa, int64_t n, int64_t s, int kind, int off)
{
    /* which nan a sum of several nans (inputs, inf - inf) returns depends on
     * the operand order of each addition, which C leaves to the compiler:
     * the generic loop's own nan is not reproducible, only nan-ness is */
    cr_expect(test_bits_f64(v->sum) == test_bits_f64(g->sum) || (isnan(v->sum) && isnan(g->sum)),
              "%s sum n=%lld s=%lld data %d offset %d: %a vs generic %a", isa, (long long)n, (long long)s, kind, off,
              v->sum, g->sum);
    cr_expect(test_bits_f64(v->prod) == test_bits_f64(g->prod) || (isnan(v->prod) && isnan(g->prod)),
              "%s prod n=%lld s=%lld data %d offset %d: %a vs generic %a", isa, (long long)n, (long long)s, kind, off,
              v->prod, g->prod);
    cr_expect_eq(test_bits_f32(v->max), test_bits_f32(g->max), "%s max n=%lld s=%lld data %d offset %d: %a vs generic %a", isa,
                 (long long)n, (long long)s, kind, off, (double)v->max, (double)g->max);
    cr_expect_eq(test_bits_f32(v->min), test_bits_f32(g->min), "%s min n=%lld s=%lld data %d offset %d: %a vs generic %a", isa,
                 (long long)n, (long long)s, kind, off, (double)v->min, (double)g->min);
    cr_expect(test_bits_f32(v->amax) == test_bits_f32(g->amax) && v->idx == g->idx,
              "%s argmax n=%lld s=%lld data %d offset %d: %a at %lld vs generic %a at %lld", isa, (long long)n,
              (long long)s, kind, off, (double)v->amax, (long long)v->idx, (double)g->amax, (long long)g->idx);
}

static void check_runs(int64_t n, unsigned seed)
{
    for (int kind = 0; kind < NKIND; kind++)
        for (int64_t s = 1; s <= 3; s++)
            for (int off = 0; off < 2; off++) {
                float *x = malloc((size_t)(n * s + 2) * sizeof *x);
                cr_assert_not_null(x);
                unsigned sd = seed + (unsigned)(kind * 7 + s * 3 + off);
                for (int64_t i = 0; i < n * s + 2; i++) x[i] = value(kind, &sd);
                cr_assert(tj_k_isa_force("generic"));
                result g = reduce_run(x + off, n, s, 1);
                for (int k = 1; k < TEST_NISA; k++) {
                    if (!tj_k_isa_force(test_isas[k])) continue;
                    result v = reduce_run(x + off, n, s, 1 + k % 2);
                    expect_same(&g, &v, test_isas[k], n, s, kind, off);
                }
                free(x);
            }
}

Test(reduce_folds, every_isa_matches_the_generic_loops_bit_for_bit_on_runs_of_length_0_to_100)
{
    for (int64_t n = 0; n <= 100; n++) check_runs(n, (unsigned)n);
}

Test(reduce_folds, every_isa_matches_the_generic_loops_on_long_runs_and_chunked_ones)
{
    /* 16384 elements go to one partial result: 40000 makes three */
    const int64_t ns[] = {127, 128, 129, 196, 255, 784, 1001, 40000};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) check_runs(ns[k], 1000 + (unsigned)k);
}

/* ---- the AVX2 scans called directly, against the generic loops through
 * the driver: every length 0..70 (each tail of the 32 lanes) and long
 * ones, every start modulo eight floats (32 bytes), each data kind above
 * plus one special value (nans of either sign and several payloads, signed
 * zeros, infinities, denormals) at every position (every 37th when long). ---- */

static void check_avx2_scans(const float *x, int64_t n, const char *what, int64_t a, int64_t b)
{
    cr_assert(tj_k_isa_force("generic"));
    result g = reduce_run(x, n, 1, 1);
    float mx = tj_k_max_f32_scan_avx2(x, n), mn = tj_k_min_f32_scan_avx2(x, n);
    cr_expect_eq(test_bits_f32(mx), test_bits_f32(g.max), "avx2 max scan n=%lld %s %lld %lld: %a vs generic %a",
                 (long long)n, what, (long long)a, (long long)b, (double)mx, (double)g.max);
    cr_expect_eq(test_bits_f32(mn), test_bits_f32(g.min), "avx2 min scan n=%lld %s %lld %lld: %a vs generic %a",
                 (long long)n, what, (long long)a, (long long)b, (double)mn, (double)g.min);
}

static void check_avx2_scans_of_length(int64_t n, unsigned seed)
{
    float *buf = malloc((size_t)(n + 8) * sizeof *buf);
    cr_assert_not_null(buf);
    for (int off = 0; off < 8; off++) {
        float *x = buf + off;
        for (int kind = 0; kind < NKIND; kind++) {
            unsigned sd = seed + (unsigned)(kind * 8 + off);
            for (int64_t i = 0; i < n; i++) x[i] = value(kind, &sd);
            check_avx2_scans(x, n, "data, offset", kind, off);
        }
        /* one nan among finite values: in a lane, in the tail, first, last */
        for (int64_t p = 0; p < n; p += n > 70 ? 37 : 1) {
            unsigned sd = seed + (unsigned)p;
            for (int64_t i = 0; i < n; i++) x[i] = value(0, &sd);
            x[p] = special((unsigned)p);
            check_avx2_scans(x, n, "special at, offset", p, off);
        }
    }
    free(buf);
}

Test(reduce_folds, the_avx2_scans_match_the_generic_scan_bit_for_bit_at_every_length_and_start)
{
    if (!tj_k_isa_force("avx2")) cr_skip_test("no AVX2 on this CPU");
    for (int64_t n = 0; n <= 70; n++) check_avx2_scans_of_length(n, 77 + (unsigned)n);
    const int64_t ns[] = {95, 96, 97, 1000, 4099};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) check_avx2_scans_of_length(ns[k], 5000 + (unsigned)k);
}

/* Same dtype, numel and bytes; with any_nan, nan matches nan whatever its
 * bits (sums: see expect_same). */
static bool same_values(const tj_tensor *a, const tj_tensor *b, bool any_nan)
{
    int64_t n = tj_tensor_numel(a);
    tj_dtype dt = tj_tensor_dtype(a);
    if (dt != tj_tensor_dtype(b) || n != tj_tensor_numel(b)) return false;
    size_t es = tj_dtype_size(dt);
    const char *pa = tj_tensor_data(a), *pb = tj_tensor_data(b);
    for (int64_t i = 0; i < n; i++) {
        if (!memcmp(pa + i * (int64_t)es, pb + i * (int64_t)es, es)) continue;
        if (!any_nan || dt == TJ_INT64 || !isnan(tj_tensor_item_at(a, i)) || !isnan(tj_tensor_item_at(b, i)))
            return false;
    }
    return true;
}

/* The same tensor reduced with the generic loops and with every other ISA,
 * at 1, 2 and 3 threads: sum (float32 and float64 results), amax, amin,
 * max.dim, prod.dim_int; expects identical bytes (sums and products:
 * nan-ness, see expect_same). */
static void check_op(tj_tensor *x, const int64_t *dims, int nd, int64_t maxdim, const char *what)
{
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (int nt = 1; nt <= 3; nt++) {
            tj_set_num_threads(nt);
            tj_tensor *got[] = {tj_sum_dim(x, dims, nd, false, -1), tj_sum_dim(x, dims, nd, true, TJ_FLOAT64),
                                tj_amax(x, dims, nd, false), tj_amin(x, dims, nd, true), NULL, NULL,
                                tj_prod_dim(x, maxdim, false, -1)};
            cr_assert_eq(tj_max_dim(x, maxdim, false, &got[4], &got[5]), TJ_OK, "%s", tj_last_error());
            static tj_tensor *want[7];
            for (int j = 0; j < 7; j++) {
                cr_assert_not_null(got[j], "%s %s: %s", what, test_isas[k], tj_last_error());
                tj_tensor *c = tj_contiguous(got[j]);
                if (k == 0 && nt == 1) {
                    want[j] = c;
                    continue;
                }
                cr_expect(same_values(c, want[j], j < 2 || j == 6), "%s: result %d differs on %s at %d threads", what,
                          j, test_isas[k], nt);
            }
        }
    }
}

static tj_tensor *data(int ndim, const int64_t *shape, int kind, unsigned seed)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    float *x = malloc((size_t)n * sizeof *x);
    cr_assert_not_null(x);
    for (int64_t i = 0; i < n; i++) x[i] = value(kind, &seed);
    tj_tensor *t = test_f32(ndim, shape, x);
    free(x);
    return t;
}

Test(reduce_folds, every_isa_gives_the_same_bytes_for_nchw_sums_and_row_extrema_at_any_thread_count)
{
    for (int kind = 0; kind < NKIND; kind++) {
        /* conv bias gradients: N, H, W of NCHW (one run per output and image) */
        int64_t dims023[] = {0, 2, 3};
        check_op(data(4, (int64_t[]){5, 16, 28, 28}, kind, 1), dims023, 3, 1, "[5,16,28,28] over [0,2,3]");
        check_op(data(4, (int64_t[]){3, 7, 5, 9}, kind, 2), dims023, 3, 3, "[3,7,5,9] over [0,2,3]");
        /* partial results over the batch (16384 elements a part), split
         * between threads part by part; 7 outputs: a block of 4 and one
         * of 3 */
        check_op(data(4, (int64_t[]){41, 7, 20, 21}, kind, 10), dims023, 3, 1, "[41,7,20,21] over [0,2,3]");
        /* several runs per output and step, and over an outer dim */
        check_op(data(4, (int64_t[]){3, 4, 5, 6}, kind, 3), (int64_t[]){1, 3}, 2, 0, "[3,4,5,6] over [1,3]");
        /* softmax rows */
        check_op(data(4, (int64_t[]){2, 4, 8, 64}, kind, 4), (int64_t[]){3}, 1, 3, "[2,4,8,64] over [3]");
        check_op(data(2, (int64_t[]){64, 10}, kind, 5), (int64_t[]){1}, 1, 1, "[64,10] over [1]");
        check_op(data(3, (int64_t[]){3, 5, 77}, kind, 6), (int64_t[]){2}, 1, 2, "[3,5,77] over [2]");
        /* the row loop (kept dim contiguous): rows four at a time and the
         * rest, whole groups of eight outputs and the rest, blocks of 2048
         * outputs */
        check_op(data(2, (int64_t[]){70, 37}, kind, 8), (int64_t[]){0}, 1, 0, "[70,37] over [0]");
        check_op(data(3, (int64_t[]){6, 2, 2051}, kind, 9), (int64_t[]){0}, 1, 0, "[6,2,2051] over [0]");
        /* strided runs: a transposed input */
        check_op(tj_transpose(data(2, (int64_t[]){37, 11}, kind, 7), 0, 1), (int64_t[]){1}, 1, 1,
                 "[37,11]^T over [1]");
    }
}

Test(reduce_folds, conv_bias_gradient_sum_matches_a_long_double_reference)
{
    int64_t shape[] = {64, 16, 28, 28}, n = 64 * 16 * 28 * 28;
    tj_tensor *x = test_random_f32(4, shape, 11);
    const float *p = tj_tensor_data(x);
    long double ref[16] = {0};
    for (int64_t i = 0; i < n; i++) ref[(i / 784) % 16] += p[i];
    int saved = tj_get_num_threads();
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (int nt = 1; nt <= 3; nt++) { /* four parts of the batch per channel, split over the threads */
            tj_set_num_threads(nt);
            tj_tensor *f = tj_sum_dim(x, (int64_t[]){0, 2, 3}, 3, false, -1);
            tj_tensor *d = tj_sum_dim(x, (int64_t[]){0, 2, 3}, 3, false, TJ_FLOAT64);
            cr_assert(f && d, "%s", tj_last_error());
            const float *fp = tj_tensor_data(f);
            const double *dp = tj_tensor_data(d);
            for (int c = 0; c < 16; c++) {
                /* 50176 terms of magnitude <= 1 summed in double: the error
                 * is far below a float's rounding */
                cr_expect(fabsl(dp[c] - ref[c]) <= 1e-10L, "%s, %d threads, channel %d: %.17g vs %.17Lg",
                          test_isas[k], nt, c, dp[c], ref[c]);
                cr_expect_eq(fp[c], (float)ref[c], "%s, %d threads, channel %d: %.9g vs %.9g", test_isas[k], nt, c,
                             (double)fp[c], (double)(float)ref[c]);
            }
        }
    }
    tj_set_num_threads(saved);
}

/* Sums of floats in double are exact for most data, whatever the order; here
 * the order shows: column j holds -2^60 in row 0, and 2^60 and 1 in rows
 * 4 + p and 4 + q of the row loop's second group of four rows, p and q
 * adjacent (so that swapping any two rows of a group swaps one such pair).
 * Added in row order the sum is 1 when 2^60 comes first, else 0 (-2^60 + 1
 * rounds to -2^60). Nine rows: two groups and one more; nineteen columns:
 * two vectors of eight and three more, which again hold each pair once. */
Test(reduce_folds, the_row_loop_adds_the_rows_in_order_on_every_isa)
{
    enum { R = 9, C = 19 };
    float x[R * C] = {0};
    float want[C];
    for (int j = 0; j < C; j++) {
        int p = j % 3, q = p + 1;
        if (j % 6 >= 3) p = q, q = p - 1;
        x[j] = -0x1p60f;
        x[(4 + p) * C + j] = 0x1p60f;
        x[(4 + q) * C + j] = 1;
        want[j] = p < q ? 1.0f : 0.0f;
    }
    tj_tensor *t = test_f32(2, (int64_t[]){R, C}, x);
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        tj_tensor *s = tj_sum_dim(t, (int64_t[]){0}, 1, false, -1);
        cr_assert_not_null(s, "%s", tj_last_error());
        for (int j = 0; j < C; j++)
            cr_expect_eq(((const float *)tj_tensor_data(s))[j], want[j], "%s column %d", test_isas[k], j);
    }
}

/* The float64 sum's AVX-512 fold (four runs at once, then one at a time)
 * against the generic loop, through tj_k_reduce_rows (the row sums of
 * decomposed layer_norm) and the driver: blocks of 1 to 9 rows of every
 * length 0..100 and longer, random values with infinities, signed zeros,
 * subnormals and huge values among them (nan-ness only for nan, see
 * expect_same). */
static double f64_value(unsigned *seed)
{
    unsigned r = (unsigned)rand_r(seed);
    const double vals[] = {0.0, -0.0, INFINITY, -INFINITY, DBL_MIN, -DBL_TRUE_MIN, DBL_MAX, -DBL_MAX, NAN, 1e-300};
    return r % 11 == 0 ? vals[(r / 11) % 10] : (double)(r % 2000001) / 1e5 - 10.0 + (double)r * 1e-19;
}

static void check_f64_sums(int64_t n, int64_t nrows, unsigned seed)
{
    double *x = malloc((size_t)(n * nrows + 1) * sizeof *x), want[9], got[9], whole[2];
    cr_assert_not_null(x);
    for (int64_t i = 0; i < n * nrows + 1; i++) x[i] = f64_value(&seed);
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        double *into = k ? got : want;
        tj_k_reduce_rows(TJ_K_RED_SUM, TJ_FLOAT64, TJ_FLOAT64, x, nrows, n, into);
        int64_t shape[] = {n * nrows}, strides[] = {1};
        bool red[] = {true};
        tj_k_reduce r = {.kind = TJ_K_RED_SUM, .x = x, .x_dtype = TJ_FLOAT64, .divisor = 1, .out = &whole[k > 0],
                         .out_dtype = TJ_FLOAT64};
        tj_k_reduce_prepare(&r, 1, shape, strides, red);
        void *scratch = malloc(tj_k_reduce_scratch_bytes(&r) + 1);
        cr_assert_not_null(scratch);
        tj_k_reduce_run(&r, scratch, 1);
        free(scratch);
        if (!k) continue;
        for (int64_t j = 0; j < nrows; j++)
            cr_expect(test_bits_f64(got[j]) == test_bits_f64(want[j]) || (isnan(got[j]) && isnan(want[j])),
                      "%s float64 sum n=%lld rows %lld row %lld: %a vs generic %a", test_isas[k], (long long)n,
                      (long long)nrows, (long long)j, got[j], want[j]);
        cr_expect(test_bits_f64(whole[1]) == test_bits_f64(whole[0]) || (isnan(whole[1]) && isnan(whole[0])),
                  "%s float64 sum of %lld: %a vs generic %a", test_isas[k], (long long)(n * nrows), whole[1], whole[0]);
    }
    free(x);
}

Test(reduce_folds, the_float64_sum_matches_the_generic_loop_on_every_isa_four_runs_at_once_or_one)
{
    const int64_t longer[] = {127, 128, 129, 255, 768, 1001, 4099};
    for (int64_t nrows = 1; nrows <= 9; nrows++) {
        for (int64_t n = 0; n <= 100; n++) check_f64_sums(n, nrows, (unsigned)(n * 10 + nrows));
        for (size_t i = 0; i < sizeof longer / sizeof *longer; i++) check_f64_sums(longer[i], nrows, (unsigned)i);
    }
}

/* ---- the extrema of many rows at once (the folds a fused row step's
 * amax / amin take, tj_k_reduce_rows): each ISA's row results against the
 * generic loops' one row at a time, over more rows than one block of
 * outputs, float32 and float64, rows of every data kind and rows holding
 * one special value. ---- */

static void check_extrema_rows(tj_dtype dt, int64_t nrows, int64_t n, unsigned seed)
{
    bool f64 = dt == TJ_FLOAT64;
    size_t es = f64 ? 8 : 4;
    char *x = malloc((size_t)(nrows * n + 1) * es);
    double got[2][80], want[2][80]; /* row results in dt: compared by bytes */
    cr_assert_not_null(x);
    for (int64_t r = 0; r < nrows; r++) {
        unsigned sd = seed + (unsigned)r;
        for (int64_t i = 0; i < n; i++) {
            float v = r % 3 == 2 && i == (r * 7) % n ? special((unsigned)r) : value((int)(r % NKIND), &sd);
            if (f64) ((double *)(void *)x)[r * n + i] = v;
            else ((float *)(void *)x)[r * n + i] = v;
        }
    }
    const tj_k_red_kind kinds[2] = {TJ_K_RED_MAX, TJ_K_RED_MIN};
    cr_assert(tj_k_isa_force("generic"));
    for (int k = 0; k < 2; k++)
        for (int64_t r = 0; r < nrows; r++)
            tj_k_reduce_rows(kinds[k], dt, dt, x + (size_t)(r * n) * es, 1, n, (char *)want[k] + (size_t)r * es);
    for (int i = 1; i < TEST_NISA; i++) {
        if (!tj_k_isa_force(test_isas[i])) continue;
        for (int k = 0; k < 2; k++) {
            tj_k_reduce_rows(kinds[k], dt, dt, x, nrows, n, got[k]);
            for (int64_t r = 0; r < nrows; r++) {
                const char *g = (const char *)got[k] + (size_t)r * es, *w = (const char *)want[k] + (size_t)r * es;
                double gv = f64 ? *(const double *)(const void *)g : *(const float *)(const void *)g;
                double wv = f64 ? *(const double *)(const void *)w : *(const float *)(const void *)w;
                cr_expect(memcmp(g, w, es) == 0, "%s %s %s of row %lld of %lld (n=%lld): %a vs generic %a",
                          test_isas[i], tj_dtype_name(dt), k ? "min" : "max", (long long)r, (long long)nrows,
                          (long long)n, gv, wv);
            }
        }
    }
    free(x);
}

Test(reduce_folds, every_isa_takes_each_rows_extreme_as_the_generic_loops_on_many_rows_at_once)
{
    const int64_t ns[] = {1, 2, 5, 8, 16, 31, 32, 33, 40, 64, 100, 256};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        check_extrema_rows(TJ_FLOAT32, 80, ns[k], 300 + (unsigned)k);
        check_extrema_rows(TJ_FLOAT64, 80, ns[k], 400 + (unsigned)k);
    }
}
