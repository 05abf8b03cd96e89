/* Row reductions in loop fusion (tracer/fuse_pointwise.c): sums, amax and
 * amin over the last dim with keepdim, in decomposed layer_norm, softmax,
 * log_softmax and layer_norm's backward, run inside fused steps walking
 * whole rows. Fused plans must give the bits of the interpreter
 * (tj_graph_run) and of the plan without loop fusion, for rows that do and
 * do not fill a chunk, one row, no rows, operands strided when traced or
 * restrided at run time, float32 and float64, one and two threads, under
 * every ISA the CPU has; reductions over another dim, without keepdim or of
 * the caller's inputs stay kernels of their own. And tj_k_reduce_rows, on
 * any block of rows, gives tj_k_reduce_run's values bit for bit; tj_k_spread
 * copies each row value's bits. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "kernels/elementwise.h"
#include "kernels/reduce.h"
#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(fuse_rows, .init = test_scope_open, .fini = test_scope_close_isa);

static tj_graph *trace_core(tj_trace_fn fn, void *ctx, tj_tensor *const *in, int n)
{
    tj_decomp_table *table = tj_core_decompositions();
    cr_assert_not_null(table, "%s", tj_last_error());
    tj_graph *g = tj_make_fx(fn, ctx, in, n, table, TJ_TRACE_REAL);
    cr_assert_not_null(g, "make_fx: %s", tj_last_error());
    tj_decomp_table_free(table);
    return g;
}

/* ---- decomposed normalisations ---- */

typedef enum { F_LAYER_NORM, F_SOFTMAX, F_LOG_SOFTMAX, F_LAYER_NORM_BACKWARD, F_SOFTMAX_OF_INPUT, F_COUNT } family;

static const char *const family_names[F_COUNT] = {"layer_norm", "softmax", "log_softmax", "layer_norm backward",
                                                  "softmax of an input"};
/* row reductions fused, at least (an input's are not) */
static const int family_reductions[F_COUNT] = {2, 2, 2, 2, 1};
/* of those, amax (native code leaves it to its kernel) */
static const int family_extrema[F_COUNT] = {0, 1, 1, 0, 0};

/* in: x, y [N, D], w, b [D]; ctx: the family. h = x * y + 0.25 is computed
 * in the plan (an arena value), so that its reductions may be fused. */
static tj_status fn_family(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_tensor *x = in[0], *y = in[1], *w = in[2], *b = in[3];
    int64_t D = tj_tensor_shape(x)[tj_tensor_ndim(x) - 1];
    tj_tensor *h = tj_add_scalar(tj_mul(x, y), tj_v_float(0.25));
    *n_out = 1;
    switch (*(const family *)ctx) {
    case F_LAYER_NORM: out[0] = tj_layer_norm(h, &D, 1, w, b, 1e-5); break;
    case F_SOFTMAX: out[0] = tj_mul(tj_softmax(h, -1), w); break;
    case F_LOG_SOFTMAX: out[0] = tj_log_softmax(tj_mul_scalar(h, tj_v_float(3)), -1); break;
    case F_LAYER_NORM_BACKWARD: {
        tj_tensor *o, *mean, *rstd, *gi, *gw, *gb;
        tj_status st = tj_native_layer_norm(h, &D, 1, w, b, 1e-5, &o, &mean, &rstd);
        if (st != TJ_OK) return st;
        const bool mask[3] = {true, true, true};
        st = tj_native_layer_norm_backward(tj_mul(y, o), h, &D, 1, mean, rstd, w, b, mask, &gi, &gw, &gb);
        if (st != TJ_OK) return st;
        out[0] = gi;
        out[1] = gw;
        out[2] = gb;
        *n_out = 3;
        break;
    }
    case F_SOFTMAX_OF_INPUT: out[0] = tj_softmax(x, -1); break;
    default: out[0] = NULL;
    }
    return out[0] ? TJ_OK : tj_last_status();
}

static void check_family(family f, tj_dtype dt, int64_t N, int64_t D, int threads, bool transposed)
{
    tj_set_num_threads(threads);
    int64_t sx[2] = {N, D}, st[2] = {D, N}, sw[1] = {D};
    tj_tensor *x = transposed ? tj_t(test_random_tensor(dt, 2, st, 1, -2, 2)) : test_random_tensor(dt, 2, sx, 1, -2, 2);
    tj_tensor *in[4] = {x, test_random_tensor(dt, 2, sx, 2, -1.5, 1.5), test_random_tensor(dt, 1, sw, 3, 0.5, 1.5),
                        test_random_tensor(dt, 1, sw, 4, -0.5, 0.5)};
    tj_graph *g = trace_core(fn_family, &f, in, 4);
    char what[160];
    snprintf(what, sizeof what, "%s %s [%ld, %ld]%s at %d threads", family_names[f], tj_dtype_name(dt), (long)N,
             (long)D, transposed ? " (x transposed)" : "", threads);
    tj_plan_statistics s = test_expect_fused_plans_match(g, in, 4, what, NULL);
    if (N > 0 && D <= 1024) {
        cr_expect_geq(s.n_fused_row_reductions, family_reductions[f], "%s: %d row reductions fused", what,
                      s.n_fused_row_reductions);
        if (test_native_code()) /* each fused step one function (two around an amax), sums, exp, log included */
            cr_expect(s.n_native_segments <= s.n_fused_pointwise + family_extrema[f] &&
                          s.n_native_calls == s.n_fused_pointwise_nodes - family_extrema[f],
                      "%s: %d segments in %d steps, %d of %d calls native", what, s.n_native_segments,
                      s.n_fused_pointwise, s.n_native_calls, s.n_fused_pointwise_nodes);
    }
    /* the inputs restrided at run time: x transposed the other way; then
     * the weight [D] every other element of a [2 D] tensor, which native
     * code, reading a contiguous weight in place, must gather as the loops do */
    tj_tensor *x2 = transposed ? test_random_tensor(dt, 2, sx, 5, -2, 2) : tj_t(test_random_tensor(dt, 2, st, 5, -2, 2));
    tj_tensor *in2[4] = {x2, in[1], in[2], in[3]};
    snprintf(what, sizeof what, "%s %s [%ld, %ld] restrided at %d threads", family_names[f], tj_dtype_name(dt),
             (long)N, (long)D, threads);
    test_expect_fused_plans_match(g, in2, 4, what, NULL);
    int64_t s2w[1] = {2 * D};
    tj_tensor *in3[4] = {in[0], in[1], tj_slice(test_random_tensor(dt, 1, s2w, 6, 0.5, 1.5), 0, true, 1, false, 0, 2),
                         in[3]};
    snprintf(what, sizeof what, "%s %s [%ld, %ld], weight strided, at %d threads", family_names[f], tj_dtype_name(dt),
             (long)N, (long)D, threads);
    test_expect_fused_plans_match(g, in3, 4, what, NULL);
    tj_graph_free(g);
}

Test(fuse_rows, decomposed_normalisations_give_the_unfused_bits)
{
    /* rows of a chunk and not, one row, rows longer than 1024 elements, an
     * odd vector tail, rows too long for the chunk area (not fused) */
    static const int64_t dims[][2] = {{1, 2}, {3, 5}, {1, 768}, {7, 768}, {37, 100}, {64, 257},
                                      {200, 48}, {5, 1500}, {3, 9000}};
    for (int f = 0; f < F_COUNT; f++)
        for (int dt = 0; dt < 2; dt++)
            for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
                for (int threads = 1; threads <= 2; threads++)
                    check_family((family)f, dt ? TJ_FLOAT64 : TJ_FLOAT32, dims[i][0], dims[i][1], threads, false);
}

/* in: x [N, D], m [N, 1]: (h - m) * m / sum(h) per row, h = x x + 0.25
 * computed in the plan (its row sum fused): m, one value per row, read in
 * place by the row loop (tj_k_rows_loop), or gathered when it comes
 * restrided at run time. */
static tj_status fn_row_values(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0], *m = in[1], *h = tj_add_scalar(tj_mul(x, x), tj_v_float(0.25));
    int64_t last = -1;
    out[0] = tj_div(tj_mul(tj_sub(h, m), m), tj_sum_dim(h, &last, 1, true, -1));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fuse_rows, row_values_of_an_argument_give_the_unfused_bits_in_place_or_restrided)
{
    static const int64_t dims[][2] = {{1, 5}, {7, 33}, {37, 128}};
    for (int dt = 0; dt < 2; dt++)
        for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
            for (int threads = 1; threads <= 2; threads++) {
                tj_set_num_threads(threads);
                tj_dtype dtype = dt ? TJ_FLOAT64 : TJ_FLOAT32;
                int64_t N = dims[i][0], sx[2] = {N, dims[i][1]}, sm[2] = {N, 1}, s2m[2] = {2 * N, 1};
                tj_tensor *in[2] = {test_random_tensor(dtype, 2, sx, 1, -2, 2),
                                    test_random_tensor(dtype, 2, sm, 2, -1, 1)};
                tj_graph *g = trace_core(fn_row_values, NULL, in, 2);
                char what[128];
                snprintf(what, sizeof what, "%s [%ld, %ld] at %d threads", tj_dtype_name(dtype), (long)N,
                         (long)dims[i][1], threads);
                tj_plan_statistics s = test_expect_fused_plans_match(g, in, 2, what, NULL);
                cr_expect_eq(s.n_fused_row_reductions, 1, "%s: %d row reductions fused", what,
                             s.n_fused_row_reductions);
                tj_tensor *in2[2] = {in[0], tj_slice(test_random_tensor(dtype, 2, s2m, 3, -1, 1), 0, true, 1, false,
                                                     0, 2)};
                snprintf(what, sizeof what, "%s [%ld, %ld] at %d threads, m restrided", tj_dtype_name(dtype),
                         (long)N, (long)dims[i][1], threads);
                test_expect_fused_plans_match(g, in2, 2, what, NULL);
                tj_graph_free(g);
            }
}

Test(fuse_rows, rows_walked_in_groups_smaller_than_the_chunk)
{
    /* native code walks a chunk's rows phase by phase in groups whose row
     * arrays fit its scratch: rows of 2 elements make chunks of hundreds of
     * rows and groups of fewer, so that a chunk has whole groups and a
     * partial one, and the last chunk is partial too */
    for (int f = 0; f < F_COUNT; f++)
        for (int dt = 0; dt < 2; dt++) check_family((family)f, dt ? TJ_FLOAT64 : TJ_FLOAT32, 1001, 2, 1, false);
}

Test(fuse_rows, operands_transposed_when_traced)
{
    for (int f = 0; f < F_COUNT; f++)
        for (int threads = 1; threads <= 2; threads++) check_family((family)f, TJ_FLOAT32, 33, 70, threads, true);
}

Test(fuse_rows, no_rows)
{
    for (int f = 0; f < F_COUNT; f++)
        if (f != F_LAYER_NORM_BACKWARD) check_family((family)f, TJ_FLOAT32, 0, 16, 1, false);
}

Test(fuse_rows, every_isa_gives_the_unfused_bits)
{
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (int f = 0; f < F_COUNT; f++) {
            check_family((family)f, TJ_FLOAT32, 19, 333, 1, false);
            check_family((family)f, TJ_FLOAT64, 4, 64, 2, false);
        }
    }
}

Test(fuse_rows, the_profiler_names_steps_walking_rows)
{
    int64_t sx[2] = {8, 100}, sw[1] = {100};
    tj_tensor *in[4] = {test_random_tensor(TJ_FLOAT32, 2, sx, 1, -1, 1), test_random_tensor(TJ_FLOAT32, 2, sx, 2, -1, 1),
                        test_random_tensor(TJ_FLOAT32, 1, sw, 3, -1, 1), test_random_tensor(TJ_FLOAT32, 1, sw, 4, -1, 1)};
    family f = F_SOFTMAX;
    tj_graph *g = trace_core(fn_family, &f, in, 4);
    tj_compile_options o = {.profile = true, .native_code = test_native_code()};
    tj_plan *p = tj_compile(g, &o);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *out;
    cr_assert_eq(tj_plan_run(p, in, 4, &out), TJ_OK, "%s", tj_last_error());
    char *buf = test_profile_table(p);
    cr_expect(strstr(buf, "fused rows (aten::mul.Tensor, aten::add.Tensor, aten::amax, ...)") != NULL, "%s", buf);
    /* the whole softmax (amax, exp, the float64 sum, the reciprocal) and the scale: one step */
    cr_expect_eq(test_plan_stats(p).n_kernels, 1, "%s", buf);
    cr_expect_eq(test_plan_stats(p).n_fused_row_reductions, 2);
    free(buf);
    tj_plan_free(p);
    tj_graph_free(g);
}

/* ---- what is not fused ---- */

typedef enum { R_NO_KEEPDIM, R_FIRST_DIM, R_OF_INPUT, R_COUNT } red_case;

/* in: x [N, D]; h = x * 2 is an arena value */
static tj_status fn_other_reductions(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_tensor *h = tj_mul_scalar(in[0], tj_v_float(2));
    int64_t last = -1, first = 0;
    switch (*(const red_case *)ctx) {
    case R_NO_KEEPDIM: out[0] = tj_mul_scalar(tj_sum_dim(h, &last, 1, false, -1), tj_v_float(3)); break;
    case R_FIRST_DIM: out[0] = tj_sub(h, tj_sum_dim(h, &first, 1, true, -1)); break;
    case R_OF_INPUT: out[0] = tj_sub(h, tj_amax(in[0], &last, 1, true)); break;
    default: out[0] = NULL;
    }
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fuse_rows, other_reductions_stay_kernels)
{
    int64_t sx[2] = {16, 40};
    for (int c = 0; c < R_COUNT; c++) {
        for (int dt = 0; dt < 2; dt++) {
            tj_tensor *in[1] = {test_random_tensor(dt ? TJ_FLOAT64 : TJ_FLOAT32, 2, sx, 1 + (unsigned)c, -1, 1)};
            red_case rc = (red_case)c;
            tj_graph *g = trace_core(fn_other_reductions, &rc, in, 1);
            char what[64];
            snprintf(what, sizeof what, "case %d, %s", c, dt ? "float64" : "float32");
            tj_plan_statistics s = test_expect_fused_plans_match(g, in, 1, what, NULL);
            cr_expect_eq(s.n_fused_row_reductions, 0, "%s", what);
            tj_graph_free(g);
        }
    }
}

/* ---- the kernel entry ---- */

/* tj_k_reduce_rows on blocks of rows [r0, r0 + nr) of x [N, D] (nr from 1
 * to `block`, varying) against tj_k_reduce_run over all of x's last dim. */
static void check_reduce_rows_of(tj_k_red_kind kind, const tj_tensor *x, tj_dtype od, int64_t block, const char *isa)
{
    tj_dtype dt = tj_tensor_dtype(x);
    int64_t N = tj_tensor_shape(x)[0], D = tj_tensor_shape(x)[1], shape[2] = {N, D}, strides[2] = {D, 1};
    size_t es = tj_dtype_size(dt), os = tj_dtype_size(od);
    char *want = calloc((size_t)N + 1, os), *got = calloc((size_t)N + 1, os);
    cr_assert(want && got);
    tj_k_reduce r = {.kind = kind, .x = tj_tensor_data(x), .x_dtype = dt, .divisor = 1, .out = want, .out_dtype = od};
    bool reduced[2] = {false, true};
    tj_k_reduce_prepare(&r, 2, shape, strides, reduced);
    cr_assert_eq(tj_k_reduce_scratch_bytes(&r), 0);
    tj_k_reduce_run(&r, NULL, 2);
    for (int64_t r0 = 0; r0 < N;) {
        int64_t nr = block - r0 % block < N - r0 ? block - r0 % block : N - r0;
        tj_k_reduce_rows(kind, dt, od, (const char *)tj_tensor_data(x) + r0 * D * (int64_t)es, nr, D,
                         got + r0 * (int64_t)os);
        r0 += nr;
    }
    cr_expect(memcmp(want, got, (size_t)N * os) == 0, "%s: kind %d %s [%ld, %ld] into %s, blocks of up to %ld rows",
              isa, (int)kind, tj_dtype_name(dt), (long)N, (long)D, tj_dtype_name(od), (long)block);
    free(want);
    free(got);
}

static void check_reduce_rows(tj_k_red_kind kind, tj_dtype dt, tj_dtype od, int64_t N, int64_t D, const char *isa)
{
    int64_t shape[2] = {N, D};
    tj_tensor *x = test_random_tensor(dt, 2, shape, (unsigned)(N * 31 + D), -3, 3);
    check_reduce_rows_of(kind, x, od, 3, isa);
}

Test(fuse_rows, reduce_rows_gives_the_reduction_driver_bits)
{
    static const int64_t lens[] = {2, 7, 8, 9, 31, 64, 100, 257, 1024, 4099, TJ_K_REDUCE_ROW_MAX};
    const tj_k_red_kind kinds[3] = {TJ_K_RED_SUM, TJ_K_RED_MAX, TJ_K_RED_MIN};
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (int kd = 0; kd < 3; kd++)
            for (int dt = 0; dt < 2; dt++)
                for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
                    tj_dtype d = dt ? TJ_FLOAT64 : TJ_FLOAT32;
                    int64_t N = lens[i] > 1024 ? 5 : 70;
                    check_reduce_rows(kinds[kd], d, d, N, lens[i], test_isas[k]);
                    if (kinds[kd] == TJ_K_RED_SUM) /* summed in float64 (the softmax decompositions) */
                        check_reduce_rows(kinds[kd], d, dt ? TJ_FLOAT32 : TJ_FLOAT64, N, lens[i], test_isas[k]);
                }
    }
}

/* tj_k_reduce_rows where the accumulator's start and the final rounding
 * show: rows of -0.0 only (a sum from +0.0 gives +0.0), nan, infinities of
 * both signs (a nan sum), sums that round differently into float32, a
 * float32 extremum of float64 inputs' neighbours; in calls of up to 150
 * rows (more than one block of outputs), for every kind, dtype and
 * ISA. */
Test(fuse_rows, reduce_rows_keeps_the_drivers_signed_zeros_nans_and_roundings)
{
    enum { N = 150, D = 67 };
    int64_t shape[2] = {N, D};
    const tj_k_red_kind kinds[3] = {TJ_K_RED_SUM, TJ_K_RED_MAX, TJ_K_RED_MIN};
    for (int dt = 0; dt < 2; dt++) {
        tj_tensor *x = test_random_tensor(dt ? TJ_FLOAT64 : TJ_FLOAT32, 2, shape, 77u + (unsigned)dt, -3, 3);
        for (int64_t i = 0; i < N; i++)
            for (int64_t j = 0; j < D; j++) {
                double v = NAN;
                switch (i % 7) {
                case 0: v = -0.0; break;
                case 1: v = j == i % D ? NAN : 0.5; break;
                case 2: v = j == 3 ? INFINITY : j == 60 ? -INFINITY : -1.25; break;
                case 3: v = 1.0 + (double)j * 0x1p-20 + (dt ? 0x1p-40 : 0.0); break;
                case 4: v = i % 2 ? INFINITY : -INFINITY; break;
                default: continue; /* random */
                }
                if (dt) ((double *)tj_tensor_data(x))[i * D + j] = v;
                else ((float *)tj_tensor_data(x))[i * D + j] = (float)v;
            }
        for (int k = 0; k < TEST_NISA; k++) {
            if (!tj_k_isa_force(test_isas[k])) continue;
            for (int kd = 0; kd < 3; kd++)
                for (int64_t block = 7; block <= N; block += N - 7) {
                    check_reduce_rows_of(kinds[kd], x, tj_tensor_dtype(x), block, test_isas[k]);
                    if (kinds[kd] == TJ_K_RED_SUM)
                        check_reduce_rows_of(kinds[kd], x, dt ? TJ_FLOAT32 : TJ_FLOAT64, block, test_isas[k]);
                }
        }
    }
}

/* tj_k_spread (a row step's row values over its chunk): row i holds value
 * i's bits, nan payloads (signalling ones too) and signed zeros kept, for
 * every element size, ISA, row count and length, nothing past the rows
 * written. */
Test(fuse_rows, spread_repeats_each_rows_bits_on_every_isa)
{
    enum { NR = 9, LEN = 133, GUARD = 0xa5 };
    static const uint64_t bits[NR] = {0x7ff4000000000123u, 0xfff8000000000000u, 0x8000000000000000u,
                                      0x7f800001ffc00001u, 0x3ff0000000000000u, 0x0000000000000001u,
                                      0xbfe5555555555555u, 0x7ff0000000000000u, 0x123456789abcdef0u};
    static const int64_t lens[] = {1, 2, 7, 16, 33, 64, 128, LEN};
    static unsigned char out[NR * LEN * 8 + 64];
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (size_t es = 1; es <= 8; es *= 2) {
            if (es == 2) continue;
            unsigned char vals[NR * 8];
            for (int i = 0; i < NR; i++) /* the low bytes: a float32 nan with a payload from the first */
                memcpy(vals + i * es, (const unsigned char *)&bits[i] + (es == 4 ? 4 * (i % 2) : 0), es);
            for (int nr = 0; nr <= NR; nr++)
                for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
                    int64_t len = lens[l];
                    memset(out, GUARD, sizeof out);
                    tj_k_spread(out, vals, nr, len, es);
                    for (int i = 0; i < nr; i++)
                        for (int64_t j = 0; j < len; j++)
                            cr_assert(memcmp(out + (i * len + j) * (int64_t)es, vals + i * es, es) == 0,
                                      "%s es %zu rows %d len %lld: row %d element %lld", test_isas[k], es, nr,
                                      (long long)len, i, (long long)j);
                    cr_assert_eq(out[nr * len * (int64_t)es], GUARD, "%s es %zu rows %d len %lld: written past",
                                 test_isas[k], es, nr, (long long)len);
                }
        }
    }
}

/* Element i of tj_k_rows_loop's row r, from its definition on scalars:
 * x op v[r] (v[r] op x with rows_first), add as tj_k_add_loop does it (x +
 * alpha y, alpha rounded to the dtype, left out when 1). */
static double rows_reference(const tj_k_rows_args *k, double x, double v)
{
    double a = k->rows_first ? v : x, b = k->rows_first ? x : v;
    if (k->dtype == TJ_FLOAT32) {
        float fa = (float)a, fb = (float)b, al = (float)k->alpha;
        switch (k->op) {
        case TJ_K_ROWS_ADD: return al == 1.0f ? fa + fb : fa + al * fb;
        case TJ_K_ROWS_MUL: return fa * fb;
        case TJ_K_ROWS_DIV: return fa / fb;
        }
    }
    switch (k->op) {
    case TJ_K_ROWS_ADD: return k->alpha == 1.0 ? a + b : a + k->alpha * b;
    case TJ_K_ROWS_MUL: return a * b;
    case TJ_K_ROWS_DIV: return a / b;
    }
    return NAN;
}

/* The loop tj_k_rows_loop stands for, on the row values spread over the
 * rows: tj_k_add_loop or tj_k_binary_loop's. */
static void spread_then_loop(const tj_k_rows_args *k, int64_t nr, int64_t len, void *out, const void *x,
                             const void *vals)
{
    size_t es = k->dtype == TJ_FLOAT32 ? 4 : 8;
    _Alignas(64) char spread[8 * 40 * 8];
    tj_k_spread(spread, vals, nr, len, es);
    const void *in[2] = {k->rows_first ? (const void *)spread : x, k->rows_first ? x : (const void *)spread};
    if (k->op == TJ_K_ROWS_ADD) {
        tj_k_axpby_args a = {.alpha = k->alpha, .dtype = k->dtype};
        tj_k_add_loop(nr * len, out, in, &a);
    } else {
        tj_k_binary_args a = {.op = k->op == TJ_K_ROWS_MUL ? TJ_K_MUL : TJ_K_DIV, .dtype = k->dtype};
        tj_k_binary_loop(nr * len, out, in, &a);
    }
}

/* Runs tj_k_rows_loop on nr rows of len (x at x, out at out: the caller
 * places them, maybe over x or vals) and checks every element: the bits of
 * spread_then_loop and of rows_reference, nans as any nan (which operand's
 * nan an operation on two keeps is the compiler's choice, as for
 * test_expect_same_bits), and nothing past the rows written. */
static void check_rows_loop(const tj_k_rows_args *k, int64_t nr, int64_t len, char *out, const char *x,
                            const char *vals, const char *what)
{
    size_t es = k->dtype == TJ_FLOAT32 ? 4 : 8;
    double want[8 * 40], xs[8 * 40], vs[8];
    _Alignas(64) char bits[8 * 40 * 8];
    for (int64_t r = 0; r < nr; r++) {
        vs[r] = es == 4 ? ((const float *)vals)[r] : ((const double *)vals)[r];
        for (int64_t j = 0; j < len; j++)
            xs[r * len + j] = es == 4 ? ((const float *)x)[r * len + j] : ((const double *)x)[r * len + j];
    }
    for (int64_t i = 0; i < nr * len; i++) want[i] = rows_reference(k, xs[i], vs[i / len]);
    spread_then_loop(k, nr, len, bits, x, vals);
    unsigned char past = (unsigned char)out[nr * len * (int64_t)es];
    tj_k_rows_loop(nr, len, out, x, vals, k);
    for (int64_t i = 0; i < nr * len; i++) {
        double got = es == 4 ? ((const float *)out)[i] : ((const double *)out)[i],
               loop = es == 4 ? ((const float *)bits)[i] : ((const double *)bits)[i];
        cr_assert(memcmp(out + i * (int64_t)es, bits + i * (int64_t)es, es) == 0 || (isnan(got) && isnan(loop)),
                  "%s: element %lld of %lld x %lld: %g, the spread loop's %g", what, (long long)i, (long long)nr,
                  (long long)len, got, loop);
        float w32 = (float)want[i];
        bool same = isnan(want[i]) ? isnan(got)
                    : es == 4      ? memcmp(&w32, out + i * 4, 4) == 0
                                   : memcmp(&want[i], out + i * 8, 8) == 0;
        cr_assert(same, "%s: element %lld of %lld x %lld: %g, want %g", what, (long long)i, (long long)nr,
                  (long long)len, got, want[i]);
    }
    cr_assert_eq((unsigned char)out[nr * len * (int64_t)es], past, "%s: written past the rows", what);
}

/* tj_k_rows_loop (a row step's x - mean, x * rstd, e / sum without
 * spreading the row values): the scalar definition's bits for add (alpha 1,
 * -1 and one that rounds), mul and div, the row value first or second,
 * float32 and float64, lengths with and without a vector tail, special
 * values, on every ISA; out over x, and out over the row values. */
Test(fuse_rows, rows_loop_computes_the_spread_operands_bits_on_every_isa)
{
    enum { NR = 8, MAXLEN = 40 };
    static const int64_t lens[] = {1, 2, 7, 8, 16, 17, 33, 40};
    static const double alphas[] = {1, -1, 0.1};
    static const double specials[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1e-310, 3e38, -1};
    static const double row_specials[] = {NAN, INFINITY, -0.0};
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (int dt = 0; dt < 2; dt++)
            for (int op = TJ_K_ROWS_ADD; op <= TJ_K_ROWS_DIV; op++)
                for (int first = 0; first < 2; first++)
                    for (size_t a = 0; a < (op == TJ_K_ROWS_ADD ? 3 : 1); a++)
                        for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
                            tj_k_rows_args args = {.op = (tj_k_rows_op)op, .dtype = dt ? TJ_FLOAT64 : TJ_FLOAT32,
                                                   .alpha = alphas[a], .rows_first = first};
                            size_t es = dt ? 8 : 4;
                            int64_t len = lens[l];
                            _Alignas(64) char x[(NR * MAXLEN + 1) * 8], vals[NR * 8], out[(NR * MAXLEN + 1) * 8];
                            unsigned seed = (unsigned)(l * 7 + (size_t)op);
                            for (int64_t i = 0; i < NR * len; i++) {
                                seed = seed * 1103515245u + 12345u;
                                double u = (double)(seed >> 8 & 0xffff) / 4096.0 - 8,
                                       v = i % 11 == 3 ? specials[(i / 11) % 8] : u;
                                if (dt) memcpy(x + i * 8, &v, 8);
                                else ((float *)x)[i] = (float)v;
                            }
                            for (int r = 0; r < NR; r++) {
                                double v = r % 3 == 1 ? row_specials[r / 3] : 0.37 * r - 1.3;
                                if (dt) memcpy(vals + r * 8, &v, 8);
                                else ((float *)vals)[r] = (float)v;
                            }
                            char what[128];
                            snprintf(what, sizeof what, "%s %s op %d%s alpha %g", test_isas[k],
                                     dt ? "float64" : "float32", op, first ? " rows first" : "", alphas[a]);
                            memset(out, 0xa5, sizeof out);
                            check_rows_loop(&args, NR, len, out, x, vals, what);
                            /* out over x, then out over the row values (a buffer taken back) */
                            char x2[sizeof x], big[(NR * MAXLEN + 1) * 8];
                            memcpy(x2, x, sizeof x2);
                            x2[NR * len * (int64_t)es] = 0x5a;
                            check_rows_loop(&args, NR, len, x2, x2, vals, what);
                            memset(big, 0x3c, sizeof big);
                            memcpy(big, vals, NR * es);
                            check_rows_loop(&args, NR, len, big, x, big, what);
                        }
    }
}

/* ---- values whose bits depend on the order of a row's operations ---- */

/* in: x, y [N, D] (y ones, so that h = x * y keeps -0, nan payloads and the
 * infinities and is an arena value); sums over the rows in x's dtype and in
 * float64, amax, amin, and elements reading them. */
static tj_status fn_row_order(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t last = -1;
    tj_tensor *h = tj_mul(in[0], in[1]);
    tj_tensor *s = tj_sum_dim(h, &last, 1, true, -1), *s64 = tj_sum_dim(h, &last, 1, true, TJ_FLOAT64);
    tj_tensor *mx = tj_amax(h, &last, 1, true), *mn = tj_amin(h, &last, 1, true);
    out[0] = tj_mul(tj_sub(h, mx), s);
    out[1] = s64;
    out[2] = tj_add(mn, mx);
    out[3] = tj_sub(h, mn);
    /* row values first and dividing: (s - h) / mx, s / h */
    out[4] = tj_div(tj_sub(s, h), mx);
    out[5] = tj_div(s, h);
    *n_out = 6;
    return out[0] && out[1] && out[2] && out[3] && out[4] && out[5] ? TJ_OK : tj_last_status();
}

/* Row r of x by kind r % 8: large values of both signs with small ones
 * (sums that cancel: another order of the additions rounds otherwise),
 * -0 only, -0 and +0 among -1 or 1 (which zero an extremum keeps: the
 * first in the kernel's order), a nan, +inf and
 * -inf (a nan sum), one infinity, -inf only, small values. */
static double row_value(int64_t r, int64_t j, unsigned *seed, bool f64)
{
    *seed = *seed * 1103515245u + 12345u;
    double u = (double)(*seed >> 8 & 0xffff) / 65536.0, big = f64 ? 1e16 : 1e8;
    switch (r % 8) {
    case 0: return j % 3 == 0 ? (u - 0.5) * big : (u - 0.5) * (j % 5);
    case 1: return -0.0;
    case 2: /* -1 (1) but zeros of either sign in lanes 8 and 16 of 32: amax (amin) keeps the first */
        if (j % 32 == 8 || j % 32 == 16) return (j % 32 == 8) == (r / 8 % 4 < 2) ? -0.0 : 0.0;
        return r / 8 % 2 ? 1.0 : -1.0;
    case 3: return j == (r * 7) % 13 ? NAN : u - 0.5;
    case 4: return j == 1 ? INFINITY : j == 0 ? -INFINITY : u;
    case 5: return j == (r % 11) ? -INFINITY : (u - 0.5) * big;
    case 6: return -INFINITY;
    default: return u * 3 - 1;
    }
}

static void check_row_order(tj_dtype dt, int64_t N, int64_t D, const char *isa)
{
    int64_t shape[2] = {N, D};
    tj_tensor *x = tj_tensor_empty(dt, 2, shape), *y = tj_tensor_empty(dt, 2, shape);
    cr_assert(x && y, "%s", tj_last_error());
    unsigned seed = (unsigned)(N * 131 + D);
    for (int64_t r = 0; r < N; r++)
        for (int64_t j = 0; j < D; j++) {
            double v = row_value(r, j, &seed, dt == TJ_FLOAT64);
            if (dt == TJ_FLOAT64) {
                ((double *)tj_tensor_data(x))[r * D + j] = v;
                ((double *)tj_tensor_data(y))[r * D + j] = 1;
            } else {
                ((float *)tj_tensor_data(x))[r * D + j] = (float)v;
                ((float *)tj_tensor_data(y))[r * D + j] = 1;
            }
        }
    tj_tensor *in[2] = {x, y};
    tj_graph *g = trace_core(fn_row_order, NULL, in, 2);
    char what[128];
    snprintf(what, sizeof what, "row order %s [%ld, %ld] (%s)", tj_dtype_name(dt), (long)N, (long)D, isa);
    tj_plan_statistics s = test_expect_fused_plans_match(g, in, 2, what, NULL);
    cr_expect_eq(s.n_fused_row_reductions, 4, "%s: %d row reductions fused", what, s.n_fused_row_reductions);
    if (test_native_code()) /* every member of the step but amax, amin and h - amax between them: the sums'
                               function, then the rest's */
        cr_expect(s.n_native_segments == 2 && s.n_native_calls == s.n_fused_pointwise_nodes - 3,
                  "%s: %d segments, %d of %d calls native", what, s.n_native_segments, s.n_native_calls,
                  s.n_fused_pointwise_nodes);
    tj_graph_free(g);
}

Test(fuse_rows, sums_and_extrema_keep_the_kernels_order_on_every_isa)
{
    /* short rows, tails of the 8 and 32 lanes, whole blocks */
    static const int64_t lens[] = {2, 3, 7, 8, 9, 15, 31, 32, 33, 40, 47, 64, 71, 100};
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
            check_row_order(TJ_FLOAT32, 24, lens[i], test_isas[k]);
            check_row_order(TJ_FLOAT64, 16, lens[i], test_isas[k]);
        }
    }
}

/* in: x, y [N, D] float32. h = x * y + 0.25 and d = h as float64; out:
 * sum(float32((d - sum(d)) * d)) and sum(h) over the rows: two sums in one
 * pass, one of float32 roundings of float64 values, one of a float32 row
 * array kept from the first pass. */
static tj_status fn_rounded_sums(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t dim = -1;
    tj_tensor *h = tj_add_scalar(tj_mul(in[0], in[1]), tj_v_float(0.25)), *d = tj_to_copy(h, TJ_FLOAT64);
    tj_tensor *m = tj_mul(tj_sub(d, tj_sum_dim(d, &dim, 1, true, -1)), d);
    out[0] = tj_sum_dim(tj_to_copy(m, TJ_FLOAT32), &dim, 1, true, -1);
    out[1] = tj_sum_dim(h, &dim, 1, true, -1);
    *n_out = 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

Test(fuse_rows, sums_of_rounded_values)
{
    /* the native code of these sums, vectorised across the lanes of both
     * by GCC 12's SLP pass, summed the float64 values unrounded (it folded
     * the pair of conversions away: tracer/fuse_native.c, rounding) */
    int64_t sx[2] = {193, 64};
    tj_tensor *in[2] = {test_random_tensor(TJ_FLOAT32, 2, sx, 1, -2, 2), test_random_tensor(TJ_FLOAT32, 2, sx, 2, -2, 2)};
    tj_graph *g = trace_core(fn_rounded_sums, NULL, in, 2);
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        char what[80];
        snprintf(what, sizeof what, "sums of rounded values under %s", test_isas[k]);
        tj_plan_statistics s = test_expect_fused_plans_match(g, in, 2, what, NULL);
        cr_expect_eq(s.n_fused_row_reductions, 3, "%s", what);
        if (test_native_code()) cr_expect_eq(s.n_native_segments, 1, "%s", what);
    }
    tj_graph_free(g);
}

/* in: x, y [N, D] float32. d = x * y + 0.25 in float64 and e = d as
 * float32; out: e read back as float64 by an element member (e * d), by a
 * row member (its float32 row sums, two of them, read as float64 next to
 * sum(d)) and by an element member again through the row sums (e - sum(e)
 * in float64): float32 roundings of float64 values read as float64 in
 * each place a segment reads a value. */
static tj_status fn_rounded_reads(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t dim = -1;
    tj_tensor *d = tj_add_scalar(tj_mul(tj_to_copy(in[0], TJ_FLOAT64), tj_to_copy(in[1], TJ_FLOAT64)), tj_v_float(0.25));
    tj_tensor *e = tj_to_copy(d, TJ_FLOAT32), *ed = tj_to_copy(e, TJ_FLOAT64);
    tj_tensor *m1 = tj_to_copy(tj_sum_dim(e, &dim, 1, true, -1), TJ_FLOAT64);
    tj_tensor *m2 = tj_to_copy(tj_sum_dim(tj_mul(e, e), &dim, 1, true, -1), TJ_FLOAT64);
    out[0] = tj_mul(ed, d);
    out[1] = tj_mul(tj_add(m1, m2), tj_sum_dim(d, &dim, 1, true, -1));
    out[2] = tj_sub(ed, m1);
    *n_out = 3;
    return out[0] && out[1] && out[2] ? TJ_OK : tj_last_status();
}

Test(fuse_rows, rounded_values_read_as_float64)
{
    /* GCC 12 folds a float64 -> float32 -> float64 pair of vector
     * conversions of as many lanes into nothing; native code reads every
     * rounding times a 1 it cannot know (tracer/fuse_native.c, rounding).
     * Rows short enough to unroll, and longer ones with tails. */
    static const int64_t lens[] = {4, 8, 12, 20, 64, 100};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
        int64_t sx[2] = {37, lens[i]};
        tj_tensor *in[2] = {test_random_tensor(TJ_FLOAT32, 2, sx, 3, -2, 2),
                            test_random_tensor(TJ_FLOAT32, 2, sx, 4, -2, 2)};
        tj_graph *g = trace_core(fn_rounded_reads, NULL, in, 2);
        for (int k = 0; k < TEST_NISA; k++) {
            if (!tj_k_isa_force(test_isas[k])) continue;
            char what[80];
            snprintf(what, sizeof what, "roundings read as float64, rows of %lld, under %s", (long long)lens[i],
                     test_isas[k]);
            tj_plan_statistics s = test_expect_fused_plans_match(g, in, 2, what, NULL);
            cr_expect_eq(s.n_fused_row_reductions, 3, "%s", what);
            if (test_native_code()) cr_expect_geq(s.n_native_segments, 1, "%s", what);
        }
        tj_k_isa_force(NULL);
        tj_graph_free(g);
    }
}

/* in: x, y [N, D] float32; out: s = sin(x * y) and its row sums in
 * float64 (a step walking rows of D elements). */
static tj_status fn_sin_rows(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t dim = -1;
    out[0] = tj_sin(tj_mul(in[0], in[1]));
    out[1] = tj_sum_dim(out[0], &dim, 1, true, TJ_FLOAT64);
    *n_out = 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

Test(fuse_rows, sin_keeps_the_kernels_vectors)
{
    /* SLEEF's vector sin takes its slow range reduction for every lane of
     * a vector with one huge lane, which changes the other lanes' last bit:
     * its bits depend on which elements share a vector, so sin must not run
     * on chunks of whole rows of 127 (vectors from each row's start) */
    int64_t sx[2] = {23, 127};
    tj_tensor *in[2] = {tj_full(sx, 2, tj_v_float(0x1.15841ap+1), TJ_FLOAT32), tj_ones(sx, 2, TJ_FLOAT32)};
    float *x = tj_tensor_data(in[0]);
    for (int64_t r = 1; r < 23; r++) x[r * 127] = 1e8f; /* in the kernel's vector of the row before's tail */
    tj_graph *g = trace_core(fn_sin_rows, NULL, in, 2);
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        char what[80];
        snprintf(what, sizeof what, "sin over rows with huge elements under %s", test_isas[k]);
        tj_plan_statistics s = test_expect_fused_plans_match(g, in, 2, what, NULL);
        cr_expect_eq(s.n_fused_pointwise_nodes, 0, "%s: sin is no member of a fused step", what);
    }
    tj_graph_free(g);
}

/* in: x, y [N, D] float32; ctx: the number of elementwise members k
 * before the row sum. A bool mask x < y first, then k - 1 arithmetic
 * members, then the row sum of the last, divided per row: the sum is
 * member k of the step (the sum of y alone runs apart). */
static tj_status fn_chain_then_sum(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    int k = *(const int *)ctx;
    int64_t dim = -1;
    tj_tensor *h = tj_where(tj_lt(in[0], in[1]), in[0], in[1]);
    for (int j = 2; j < k; j++) h = j % 2 ? tj_mul(h, in[1]) : tj_add(h, in[0]);
    out[0] = tj_div(tj_sum_dim(h, &dim, 1, true, -1), tj_sum_dim(in[1], &dim, 1, true, -1));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fuse_rows, a_row_sum_at_any_member_index)
{
    /* native code names a row sum's array after its member (u<m>) and
     * typed bools as u8: the sum of member 8, in rows walked in groups,
     * hid the type and the generated C did not compile */
    int64_t sx[2] = {300, 5};
    tj_tensor *in[2] = {test_random_tensor(TJ_FLOAT32, 2, sx, 5, -2, 2), test_random_tensor(TJ_FLOAT32, 2, sx, 6, 1, 2)};
    for (int k = 6; k <= 10; k++) {
        tj_graph *g = trace_core(fn_chain_then_sum, &k, in, 2);
        char what[80];
        snprintf(what, sizeof what, "a row sum after %d elementwise members", k);
        tj_plan_statistics s = test_expect_fused_plans_match(g, in, 2, what, NULL);
        cr_expect_eq(s.n_fused_row_reductions, 1, "%s: %d row reductions fused", what, s.n_fused_row_reductions);
        if (test_native_code()) cr_expect_geq(s.n_native_segments, 1, "%s", what);
        tj_graph_free(g);
    }
}
