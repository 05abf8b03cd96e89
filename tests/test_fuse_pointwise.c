/* Loop fusion of elementwise calls in replay (tracer/fuse_pointwise.c):
 * chains run as one step over chunks of their shape. Fused plans must give
 * the bits of the interpreter (tj_graph_run) and of the plan compiled
 * without loop fusion, for every operator the pass takes, for sizes around
 * the chunk boundaries (multiples of 64 elements up to 2048), the vector
 * tails and the thread split, with operands broadcast, strided or
 * restrided at run time; and
 * fusion must stop where it would read a value before it is written or
 * after it is overwritten. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_counter.h"
#include "kernels/cpu_isa.h"
#include "kernels/elementwise.h"
#include "models.h"
#include "step.h"
#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(fuse_pointwise, .init = test_scope_open, .fini = test_scope_close);

static tj_plan *compile_opts(const tj_graph *g, bool fuse)
{
    tj_compile_options o = {.no_pointwise_fusion = !fuse, .native_code = fuse && test_native_code()};
    tj_plan *p = tj_compile(g, &o);
    cr_assert_not_null(p, "tj_compile: %s", tj_last_error());
    return p;
}

/* compile_opts without product-scatter fusion, which frees cnn's largest
 * block (30.4 -> 15.1 MiB at one thread): best-fit placement then
 * fragments the rest differently with and without loop fusion (15.8 vs
 * 14.2 MiB, the live bytes still lower), which is not loop fusion's doing.
 * Nor common subexpressions merged, for the same reason (cnn's forward
 * padding then lives into the backward: 33.98 vs 32.50 MB at one thread,
 * while the default plan's arena shrinks, 15.10 -> 13.27 MiB). */
static tj_plan *compile_no_scatter(const tj_graph *g, bool fuse)
{
    tj_compile_options o = {.no_pointwise_fusion = !fuse, .no_product_scatter_fusion = true,
                            .no_common_subexpressions = true, .native_code = fuse && test_native_code()};
    tj_plan *p = tj_compile(g, &o);
    cr_assert_not_null(p, "tj_compile: %s", tj_last_error());
    return p;
}

/* test_expect_fused_plans_match, and the fused plan's arena no larger than
 * the unfused one's. */
static tj_plan_statistics expect_plans_match(const tj_graph *g, tj_tensor *const *in, int n_in, const char *what)
{
    tj_plan_statistics u, s = test_expect_fused_plans_match(g, in, n_in, what, &u);
    cr_expect_leq(s.arena_bytes, u.arena_bytes, "%s: arena %zu vs %zu unfused", what, s.arena_bytes, u.arena_bytes);
    return s;
}

/* At 1 and 2 threads: the fused plan matches the unfused one and is one
 * step of `calls` calls, `merged` of them comparisons inside their where. */
static void expect_one_step(const tj_graph *g, tj_tensor *const *in, int n_in, const char *what, int calls,
                            int merged)
{
    for (int threads = 1; threads <= 2; threads++) {
        tj_set_num_threads(threads);
        tj_plan_statistics s = expect_plans_match(g, in, n_in, what);
        cr_expect_eq(s.n_kernels, 1, "%s: %d kernels", what, s.n_kernels);
        cr_expect_eq(s.n_fused_pointwise_nodes, calls, "%s: %d calls fused", what, s.n_fused_pointwise_nodes);
        cr_expect_eq(s.n_fused_compare_wheres, merged, "%s: %d comparisons merged", what, s.n_fused_compare_wheres);
    }
}

static tj_graph *trace(tj_trace_fn fn, void *ctx, tj_tensor *const *in, int n)
{
    tj_graph *g = tj_make_fx(fn, ctx, in, n, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "make_fx: %s", tj_last_error());
    return g;
}

/* ---- a chain: every step of it in one kernel ---- */

/* in: x, a (x's shape): exp(x * a + 0.5) / (1 + a * a) - tanh(x) */
static tj_status fn_chain(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0], *a = in[1];
    tj_tensor *e = tj_exp(tj_add_scalar(tj_mul(x, a), tj_v_float(0.5)));
    tj_tensor *d = tj_add_scalar(tj_mul(a, a), tj_v_int(1));
    out[0] = tj_sub(tj_div(e, d), tj_tanh(x));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static const int64_t sizes[] = {1, 2, 15, 16, 17, 63, 65, 255, 257, 511, 513, 1023, 1025, 1531, 2047, 2049, 4099, 70001};

Test(fuse_pointwise, a_chain_runs_as_one_step_with_the_same_bits_at_every_chunk_boundary)
{
    for (int dt = 0; dt < 2; dt++) {
        tj_dtype dtype = dt ? TJ_FLOAT64 : TJ_FLOAT32;
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            for (int threads = 1; threads <= 2; threads++) {
                tj_set_num_threads(threads);
                int64_t shape[1] = {sizes[i]};
                tj_tensor *in[2] = {test_random_tensor(dtype, 1, shape, 1 + (unsigned)i, -3, 3),
                                    test_random_tensor(dtype, 1, shape, 100 + (unsigned)i, -2, 2)};
                tj_graph *g = trace(fn_chain, NULL, in, 2);
                char what[96];
                snprintf(what, sizeof what, "%s [%ld] at %d threads", tj_dtype_name(dtype), (long)sizes[i], threads);
                tj_plan_statistics s = expect_plans_match(g, in, 2, what);
                cr_expect_eq(s.n_kernels, 1, "%s: %d kernels", what, s.n_kernels);
                cr_expect_eq(s.n_fused_pointwise, 1, "%s", what);
                cr_expect_eq(s.n_fused_pointwise_nodes, 8, "%s: %d calls fused", what, s.n_fused_pointwise_nodes);
                tj_graph_free(g);
            }
        }
    }
}

Test(fuse_pointwise, the_profiler_names_the_fused_step_after_its_operators)
{
    int64_t shape[2] = {8, 100};
    tj_tensor *in[2] = {test_random_tensor(TJ_FLOAT32, 2, shape, 1, -1, 1), test_random_tensor(TJ_FLOAT32, 2, shape, 2, -1, 1)};
    tj_graph *g = trace(fn_chain, NULL, in, 2);
    tj_compile_options o = {.profile = true, .native_code = test_native_code()};
    tj_plan *p = tj_compile(g, &o);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *out;
    cr_assert_eq(tj_plan_run(p, in, 2, &out), TJ_OK, "%s", tj_last_error());
    char *buf = test_profile_table(p);
    cr_expect(strstr(buf, "fused pointwise (aten::mul.Tensor, aten::add.Scalar, aten::exp, ...)") != NULL, "%s", buf);
    /* the name column fits that label (69 characters): every line up to the
     * totals is as long as the first rule, columns aligned */
    size_t width = strcspn(buf, "\n");
    int lines = 0;
    for (const char *line = buf; strncmp(line, "Runs:", 5) != 0; line += strcspn(line, "\n") + 1, lines++)
        cr_expect_eq(strcspn(line, "\n"), width, "line %d: %s", lines, buf);
    cr_expect_geq(lines, 5, "%s", buf);
    free(buf);
    tj_plan_free(p);
    /* no_fusion turns it off */
    tj_compile_options off = {.no_fusion = true};
    p = tj_compile(g, &off);
    cr_assert_not_null(p);
    cr_expect_eq(test_plan_stats(p).n_fused_pointwise, 0);
    cr_expect_eq(test_plan_stats(p).n_kernels, 8);
    tj_plan_free(p);
    tj_graph_free(g);
}

/* ---- every operator the pass takes ---- */

typedef enum {
    OP_UNARY, OP_BINARY, OP_POW_SCALAR, OP_COMPARE_WHERE, OP_CONVERT, OP_GELU, OP_ADD_ALPHA, OP_COUNT
} op_family;

/* in: x, y of one shape and dtype; ctx: the op_family. Each result is one
 * chain: x -> f(x) -> f(f(x), y) ... */
static tj_status fn_ops(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_tensor *x = in[0], *y = in[1], *r = NULL;
    switch (*(const op_family *)ctx) {
    case OP_UNARY: {
        tj_tensor *p = tj_add_scalar(tj_abs(x), tj_v_float(0.25));
        r = tj_add(tj_log(p), tj_sqrt(p));
        r = tj_add(r, tj_mul(tj_rsqrt(p), tj_reciprocal(p)));
        r = tj_add(r, tj_mul(tj_sigmoid(x), tj_erf(y)));
        r = tj_add(r, tj_mul(tj_log1p(p), tj_expm1(tj_neg(p))));
        r = tj_add(r, tj_mul(tj_relu(x), tj_silu(y)));
        r = tj_add(r, tj_mul(tj_sign(x), tj_tanh(y)));
        r = tj_add(r, tj_exp(tj_neg(p)));
        break;
    }
    case OP_BINARY: {
        tj_tensor *p = tj_add_scalar(tj_abs(y), tj_v_float(0.5));
        r = tj_div(x, p);
        r = tj_pow(p, tj_maximum(r, tj_minimum(x, y)));
        r = tj_rsub(r, x, tj_v_float(0.75));
        r = tj_mul_scalar(tj_sub_alpha(r, tj_mul_scalar(x, tj_v_float(1.5)), tj_v_int(2)), tj_v_float(0.3));
        r = tj_div_scalar(tj_atan2(r, x), tj_v_float(3));
        break;
    }
    case OP_POW_SCALAR: {
        tj_tensor *p = tj_add_scalar(tj_abs(x), tj_v_float(0.1));
        r = tj_add(tj_pow_scalar(x, tj_v_int(2)), tj_pow_scalar(p, tj_v_float(0.5)));
        r = tj_add(r, tj_pow_scalar(p, tj_v_int(-1)));
        r = tj_add(r, tj_pow_scalar(p, tj_v_float(3.7)));
        r = tj_add(r, tj_pow_scalar(y, tj_v_int(3)));
        break;
    }
    case OP_COMPARE_WHERE: {
        tj_tensor *m = tj_lt(x, y), *e = tj_eq_scalar(tj_round(x), tj_v_int(0));
        r = tj_where(m, tj_mul(x, y), tj_add(x, y));
        r = tj_where(tj_where(e, tj_lt(y, x), m), y, r); /* a where of masks: bool */
        r = tj_where(tj_ge_scalar(r, tj_v_float(0.1)), r, tj_neg(r));
        out[1] = tj_where(tj_logical_not(tj_gt(x, r)), x, y); /* logical_not is not fused: ends the group's input */
        break;
    }
    case OP_CONVERT: {
        tj_dtype other = tj_tensor_dtype(x) == TJ_FLOAT32 ? TJ_FLOAT64 : TJ_FLOAT32;
        tj_tensor *w = tj_to_copy(tj_mul(x, y), other);
        w = tj_add(w, tj_to_copy(y, other));
        w = tj_mul(w, w);
        r = tj_to_copy(tj_sqrt(w), tj_tensor_dtype(x));
        r = tj_add(r, tj_clone(x));
        break;
    }
    case OP_GELU:
        r = tj_add(tj_gelu(tj_mul(x, y), "none"), tj_gelu(tj_add(x, y), "tanh"));
        r = tj_mul(r, tj_exp2(tj_floor(y)));
        break;
    case OP_ADD_ALPHA:
        r = tj_add_alpha(x, tj_mul(x, y), tj_v_float(0.1));
        r = tj_sub_alpha(r, y, tj_v_float(-2.5));
        r = tj_add_alpha(r, tj_rsub_scalar(r, tj_v_float(1e-3), tj_v_float(0.5)), tj_v_int(3));
        break;
    default: break;
    }
    out[0] = r;
    *n_out = *(const op_family *)ctx == OP_COMPARE_WHERE ? 2 : 1;
    return r ? TJ_OK : tj_last_status();
}

Test(fuse_pointwise, every_operator_it_takes_gives_its_kernels_bits)
{
    static const int64_t op_sizes[] = {7, 257, 513, 3001};
    for (int fam = 0; fam < OP_COUNT; fam++) {
        for (int dt = 0; dt < 2; dt++) {
            for (size_t i = 0; i < sizeof op_sizes / sizeof *op_sizes; i++) {
                tj_dtype dtype = dt ? TJ_FLOAT64 : TJ_FLOAT32;
                int64_t shape[2] = {1, op_sizes[i]};
                tj_tensor *in[2] = {test_random_tensor(dtype, 2, shape, 3 + (unsigned)i, -2, 2),
                                    test_random_tensor(dtype, 2, shape, 30 + (unsigned)i, -2, 2)};
                op_family f = (op_family)fam;
                tj_graph *g = trace(fn_ops, &f, in, 2);
                char what[96];
                snprintf(what, sizeof what, "family %d, %s [%ld]", fam, tj_dtype_name(dtype), (long)op_sizes[i]);
                tj_plan_statistics s = expect_plans_match(g, in, 2, what);
                cr_expect_geq(s.n_fused_pointwise, 1, "%s", what);
                cr_expect_leq(s.n_kernels, fam == OP_COMPARE_WHERE ? 4 : 2, "%s: %d kernels", what, s.n_kernels);
                tj_graph_free(g);
            }
        }
    }
}

/* in: x, y float64 of one shape; out: float32 roundings of float64 values
 * read back as float64: (x * y as float32) + x, the product of two
 * roundings as float64, and a where choosing a rounding. */
static tj_status fn_rounded(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0], *y = in[1];
    tj_tensor *r = tj_to_copy(tj_to_copy(tj_mul(x, y), TJ_FLOAT32), TJ_FLOAT64);
    out[0] = tj_add(r, x);
    out[1] = tj_to_copy(tj_mul(tj_to_copy(tj_add(x, y), TJ_FLOAT32), tj_to_copy(tj_sub(x, y), TJ_FLOAT32)), TJ_FLOAT64);
    out[2] = tj_mul(tj_where(tj_lt(x, y), r, y), x);
    *n_out = 3;
    return out[0] && out[1] && out[2] ? TJ_OK : tj_last_status();
}

Test(fuse_pointwise, float32_roundings_read_as_float64_keep_their_bits_on_every_isa)
{
    /* native code reads a rounding times a 1 the compiler cannot know:
     * GCC 12 folds float64 -> float32 -> float64 vector conversions of as
     * many lanes into nothing (tracer/fuse_native.c, rounding) */
    static const int64_t lens[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 17, 63, 257};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
        int64_t shape[1] = {lens[i]};
        tj_tensor *in[2] = {test_random_tensor(TJ_FLOAT64, 1, shape, 5 + (unsigned)i, -2, 2),
                            test_random_tensor(TJ_FLOAT64, 1, shape, 50 + (unsigned)i, -2, 2)};
        tj_graph *g = trace(fn_rounded, NULL, in, 2);
        for (int k = 0; k < TEST_NISA; k++) {
            if (!tj_k_isa_force(test_isas[k])) continue;
            char what[96];
            snprintf(what, sizeof what, "roundings read as float64 [%ld] under %s", (long)lens[i], test_isas[k]);
            tj_plan_statistics s = expect_plans_match(g, in, 2, what);
            cr_expect_eq(s.n_fused_pointwise, 1, "%s", what);
            if (test_native_code()) cr_expect_eq(s.n_native_segments, 1, "%s", what);
        }
        tj_k_isa_force(NULL);
        tj_graph_free(g);
    }
}

/* ---- every one-loop operator (runtime/op_elementwise_list.h) ---- */

/* in: x, y of one shape and dtype (values in [-2, 2]): a chain through the
 * operators of the list that have no other chain above (rounding, inverse
 * trigonometric and hyperbolic functions, log10, mish, sgn, remainder and
 * fmod with Tensor and Scalar divisors, the logical operators), 48 calls. */
static tj_status fn_list_ops(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0], *y = in[1];
    tj_tensor *u = tj_mul_scalar(tj_tanh(x), tj_v_float(0.9)); /* asin / acos domain */
    tj_tensor *p = tj_add_scalar(tj_abs(y), tj_v_float(0.5));
    tj_tensor *r = tj_add(tj_asin(u), tj_acos(u));
    r = tj_add(r, tj_mul(tj_atan(y), tj_sinh(u)));
    r = tj_add(r, tj_mul(tj_cosh(y), tj_log10(p)));
    r = tj_add(r, tj_mul(tj_mish(x), tj_sgn(y)));
    r = tj_add(r, tj_sub(tj_frac(tj_mul_scalar(x, tj_v_float(3))), tj_ceil(y)));
    r = tj_add(r, tj_trunc(tj_mul_scalar(x, tj_v_float(2.5))));
    r = tj_add(r, tj_sub(tj_remainder(tj_mul_scalar(x, tj_v_int(5)), p), tj_fmod(tj_mul_scalar(y, tj_v_int(5)), p)));
    r = tj_add(r, tj_sub(tj_remainder_scalar(x, tj_v_float(0.7)), tj_fmod_scalar(y, tj_v_float(-0.6))));
    /* float operands: logical ops of bool operands compute in bool, which the pass leaves to the kernel */
    r = tj_where(tj_logical_and(x, tj_sub_scalar(y, tj_v_float(0.5))), r, tj_neg(r));
    r = tj_where(tj_logical_or(tj_trunc(x), tj_trunc(y)), r, y);
    out[0] = tj_where(tj_logical_xor(tj_ceil(x), r), r, x);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fuse_pointwise, the_listed_operators_fuse_into_one_step_with_the_interpreters_bits)
{
    static const int64_t list_sizes[] = {7, 257, 2049, 3001};
    for (int dt = 0; dt < 2; dt++) {
        for (size_t i = 0; i < sizeof list_sizes / sizeof *list_sizes; i++) {
            tj_dtype dtype = dt ? TJ_FLOAT64 : TJ_FLOAT32;
            int64_t shape[2] = {3, list_sizes[i]};
            tj_tensor *in[2] = {test_random_tensor(dtype, 2, shape, 5 + (unsigned)i, -2, 2),
                                test_random_tensor(dtype, 2, shape, 50 + (unsigned)i, -2, 2)};
            tj_graph *g = trace(fn_list_ops, NULL, in, 2);
            char what[96];
            snprintf(what, sizeof what, "%s [3, %ld]", tj_dtype_name(dtype), (long)list_sizes[i]);
            tj_plan_statistics s = expect_plans_match(g, in, 2, what);
            cr_expect_eq(s.n_kernels, 1, "%s: %d kernels", what, s.n_kernels);
            cr_expect_eq(s.n_fused_pointwise, 1, "%s", what);
            cr_expect_eq(s.n_fused_pointwise_nodes, 48, "%s: %d calls fused", what, s.n_fused_pointwise_nodes);
            tj_graph_free(g);
        }
    }
}

/* ---- broadcasting operands ---- */

/* in: x [N, D], col [N, 1], row [D], s [] (0-dim), t [D, N] (read transposed) */
static tj_status fn_broadcast(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0], *col = in[1], *row = in[2], *s = in[3], *t = tj_t(in[4]);
    tj_tensor *c = tj_sub(x, col);          /* x - mean */
    tj_tensor *v = tj_mul(tj_mul(c, c), s);
    tj_tensor *r = tj_add(tj_mul(tj_div(c, tj_add_scalar(v, tj_v_int(1))), row), t);
    out[0] = tj_add(tj_mul(r, tj_exp(col)), tj_mul(row, t)); /* row and t read twice: gathered once a chunk */
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fuse_pointwise, rows_columns_scalars_and_transposed_operands_are_read_in_place)
{
    static const int64_t dims[][2] = {{1, 1}, {3, 5}, {8, 64}, {33, 31}, {64, 257}, {300, 300}};
    for (size_t i = 0; i < sizeof dims / sizeof *dims; i++) {
        for (int threads = 1; threads <= 2; threads++) {
            tj_set_num_threads(threads);
            int64_t N = dims[i][0], D = dims[i][1];
            int64_t sx[2] = {N, D}, sc[2] = {N, 1}, sr[1] = {D}, st[2] = {D, N};
            tj_tensor *in[5] = {test_random_tensor(TJ_FLOAT32, 2, sx, 1, -2, 2), test_random_tensor(TJ_FLOAT32, 2, sc, 2, -1, 1),
                                test_random_tensor(TJ_FLOAT32, 1, sr, 3, -1, 1), test_random_tensor(TJ_FLOAT32, 0, NULL, 4, 0.5, 1),
                                test_random_tensor(TJ_FLOAT32, 2, st, 5, -1, 1)};
            tj_graph *g = trace(fn_broadcast, NULL, in, 5);
            char what[64];
            snprintf(what, sizeof what, "[%ld, %ld] at %d threads", (long)N, (long)D, threads);
            tj_plan_statistics s = expect_plans_match(g, in, 5, what);
            cr_expect_eq(s.n_kernels, N * D == 1 ? s.n_kernels : 2, "%s: %d kernels", what, s.n_kernels); /* exp(col) apart */
            tj_graph_free(g);
        }
    }
}

/* ---- decomposed max pooling: window maxima and tap keys in one pass ---- */

typedef struct pool_case {
    int64_t k[2], s[2], p[2];
} pool_case;

/* in: x [N, C, H, W]: max_pool2d_with_indices's values and indices. */
static tj_status fn_max_pool(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    const pool_case *c = ctx;
    *n_out = 2;
    return tj_max_pool2d_with_indices(in[0], c->k, c->s, c->p, (int64_t[]){1, 1}, false, &out[0], &out[1]);
}

/* x of `shape` in dt: few levels (ties in most windows), some nans (two in
 * a window now and then) and -infs. */
static tj_tensor *pool_input(tj_dtype dt, const int64_t *shape, unsigned seed)
{
    tj_tensor *x = test_random_tensor(dt, 4, shape, seed, -4, 4);
    int64_t n = tj_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        double v = i % 37 == 5 || i % 41 == 6 ? NAN : i % 53 == 7 ? -INFINITY : floor(tj_tensor_item_at(x, i));
        if (dt == TJ_FLOAT32) ((float *)tj_tensor_data(x))[i] = (float)v;
        else ((double *)tj_tensor_data(x))[i] = v;
    }
    return x;
}

Test(fuse_pointwise, decomposed_max_pool_finds_values_and_keys_in_one_step_with_the_kernels_bits)
{
    const pool_case cases[] = {
        {{2, 2}, {2, 2}, {0, 0}}, /* cnn's pooling: every tap inside */
        {{3, 3}, {2, 2}, {1, 1}}, /* padding: taps outside the input never win */
        {{2, 3}, {1, 2}, {0, 1}},
        {{5, 5}, {3, 3}, {2, 2}}, /* more members than a step takes: several steps */
    };
    const int64_t shapes[][4] = {{3, 5, 7, 9}, {2, 9, 33, 35}}; /* odd sizes; several chunks */
    tj_decomp_table *table = tj_core_decompositions();
    cr_assert_not_null(table, "%s", tj_last_error());
    for (int dt = 0; dt < 2; dt++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (int sh = 0; sh < 2; sh++) {
                tj_tensor *x = pool_input(dt ? TJ_FLOAT64 : TJ_FLOAT32, shapes[sh], 3 + (unsigned)sh);
                tj_graph *g = tj_make_fx(fn_max_pool, (void *)&cases[c], &x, 1, table, TJ_TRACE_REAL);
                cr_assert_not_null(g, "make_fx: %s", tj_last_error());
                char what[64];
                snprintf(what, sizeof what, "max pool case %zu, shape %d, %s", c, sh, dt ? "float64" : "float32");
                tj_plan_statistics s = expect_plans_match(g, &x, 1, what);
                /* the maxima chain, and per tap two compares and two wheres
                 * (three with padding) and the keys' maximum */
                int64_t T = cases[c].k[0] * cases[c].k[1], per_tap = cases[c].p[0] ? 5 : 4;
                cr_expect_geq(s.n_fused_pointwise_nodes, 2 * (T - 1) + per_tap * T, "%s: %d calls fused", what,
                              s.n_fused_pointwise_nodes);
                tj_tensor *values, *indices, *out[2];
                cr_assert_eq(tj_max_pool2d_with_indices(x, cases[c].k, cases[c].s, cases[c].p, (int64_t[]){1, 1},
                                                        false, &values, &indices),
                             TJ_OK, "%s", tj_last_error());
                tj_plan *p = compile_opts(g, true);
                cr_assert_eq(tj_plan_run(p, &x, 1, out), TJ_OK, "%s", tj_last_error());
                test_expect_same_bits(out[0], values, what);
                test_expect_same_bits(out[1], indices, what);
                tj_plan_free(p);
                tj_graph_free(g);
            }
    tj_decomp_table_free(table);
}

/* ---- comparisons merged into the wheres reading their masks ---- */

/* in: x, y [N, D], s [N, 1] (broadcast), z 0-dim. out[0]: a where on a
 * comparison of two tensors; out[1]: threshold_backward's decomposition
 * (a comparison with a broadcast column, selecting a one-element zero);
 * out[2], out[3]: a mask read by a where and written out (stays a
 * comparison of its own); out[4]: a comparison selecting masks (bool). */
static tj_status fn_select_on_compare(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0], *y = in[1], *s = in[2], *z = in[3];
    out[0] = tj_where(tj_lt(x, y), tj_mul(x, y), x);
    out[1] = tj_where(tj_le(x, s), z, tj_add(y, out[0]));
    out[3] = tj_gt(y, x);
    out[2] = tj_where(out[3], out[1], y);
    out[4] = tj_where(tj_ge(x, y), tj_eq(x, s), tj_ne(y, x));
    *n_out = 5;
    return out[4] ? TJ_OK : tj_last_status();
}

/* n values of dtype dt, uniform in [-2, 2) with nan (both signs), +-0 and
 * infinities every few elements and ties between x and y (seed 0 and 1
 * draw alike there) */
static tj_tensor *specials_tensor(tj_dtype dt, int ndim, const int64_t *shape, unsigned seed)
{
    tj_tensor *r = test_random_tensor(TJ_FLOAT64, ndim, shape, seed, -2, 2);
    int64_t n = tj_tensor_numel(r);
    double *v = malloc(sizeof(double) * (size_t)n);
    cr_assert_not_null(v);
    memcpy(v, tj_tensor_data(r), sizeof(double) * (size_t)n);
    const double special[] = {NAN, -NAN, 0.0, -0.0, INFINITY, -INFINITY, 1.0};
    for (int64_t i = 0; i < n; i++)
        if (i % 5 == 0) v[i] = special[(i / 5 + (seed & 1)) % 7];
    tj_tensor *t = tj_to_copy(test_f64(ndim, shape, v), dt);
    free(v);
    cr_assert_not_null(t, "%s", tj_last_error());
    return t;
}

Test(fuse_pointwise, a_comparison_read_only_by_a_where_runs_inside_it_with_the_same_bits)
{
    static const int64_t dims[][2] = {{1, 7}, {3, 65}, {37, 41}, {5, 2049}};
    for (int dt = 0; dt < 2; dt++) {
        tj_dtype dtype = dt ? TJ_FLOAT64 : TJ_FLOAT32;
        for (size_t i = 0; i < sizeof dims / sizeof *dims; i++) {
            int64_t col[2] = {dims[i][0], 1};
            tj_tensor *in[4] = {specials_tensor(dtype, 2, dims[i], 0), specials_tensor(dtype, 2, dims[i], 1),
                                specials_tensor(dtype, 2, col, 2), tj_zeros(NULL, 0, dtype)};
            tj_graph *g = trace(fn_select_on_compare, NULL, in, 4);
            char what[96];
            snprintf(what, sizeof what, "%s [%ld, %ld]", tj_dtype_name(dtype), (long)dims[i][0], (long)dims[i][1]);
            expect_one_step(g, in, 4, what, 12, 3);
            /* x transposed and y broadcast from a row at run time: gathered for the merged loops */
            int64_t tshape[2] = {dims[i][1], dims[i][0]}, row[1] = {dims[i][1]};
            tj_tensor *strided[4] = {tj_t(specials_tensor(dtype, 2, tshape, 3)),
                                     tj_expand(specials_tensor(dtype, 1, row, 4), dims[i], 2), in[2], in[3]};
            tj_plan *p = compile_opts(g, true);
            tj_tensor *ref[5], *got[5];
            cr_assert_eq(tj_graph_run(g, strided, 4, ref), TJ_OK, "%s", tj_last_error());
            cr_assert_eq(tj_plan_run(p, strided, 4, got), TJ_OK, "%s", tj_last_error());
            for (int k = 0; k < 5; k++) {
                char w[128];
                snprintf(w, sizeof w, "%s restrided, output %d", what, k);
                test_expect_same_bits(got[k], ref[k], w);
            }
            tj_plan_free(p);
            tj_graph_free(g);
        }
    }
}

/* ---- wheres of comparison masks merged into one comparison ---- */

/* The core table's forms of le and ge (decomps/compare.c) written out,
 * and forms that must stay as they are. */
typedef enum {
    MASKS_LT_OR_EQ,          /* where(lt(x, y), true, eq(x, y)): le */
    MASKS_EQ_OR_LT,          /* where(eq(x, y), true, lt(x, y)): le */
    MASKS_GT_OR_EQ_SWAPPED,  /* where(gt(x, y), true, eq(y, x)): ge */
    MASKS_LT_OR_GT,          /* no comparison: nan makes ne true, lt or gt false */
    MASKS_EQ_READ_ELSEWHERE, /* the eq mask is an output too */
    MASKS_OTHER_OPERANDS,    /* where(lt(x, y), true, eq(x, g)) */
    MASKS_RELU_BACKWARD,     /* threshold_backward(g, x, 0) through the core table */
    MASKS_DECOMPOSED,        /* le and ge through the core table, each selecting */
    MASKS_COUNT
} masks_case;

/* in: x, y, g of one shape; ctx: the masks_case. out[0]: a where selecting
 * g or y on the masks' result (more for MASKS_EQ_READ_ELSEWHERE and
 * MASKS_DECOMPOSED). */
static tj_status fn_masks(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_tensor *x = in[0], *y = in[1], *g = in[2], *t = tj_full(NULL, 0, tj_v_bool(true), TJ_BOOL), *c = NULL;
    *n_out = 1;
    switch (*(const masks_case *)ctx) {
    case MASKS_LT_OR_EQ: c = tj_where(tj_lt(x, y), t, tj_eq(x, y)); break;
    case MASKS_EQ_OR_LT: c = tj_where(tj_eq(x, y), t, tj_lt(x, y)); break;
    case MASKS_GT_OR_EQ_SWAPPED: c = tj_where(tj_gt(x, y), t, tj_eq(y, x)); break;
    case MASKS_LT_OR_GT: c = tj_where(tj_lt(x, y), t, tj_gt(x, y)); break;
    case MASKS_EQ_READ_ELSEWHERE:
        out[1] = tj_eq(x, y);
        c = tj_where(tj_lt(x, y), t, out[1]);
        *n_out = 2;
        break;
    case MASKS_OTHER_OPERANDS: c = tj_where(tj_lt(x, y), t, tj_eq(x, g)); break;
    case MASKS_RELU_BACKWARD:
        out[0] = tj_threshold_backward(g, x, tj_v_float(0));
        return out[0] ? TJ_OK : tj_last_status();
    case MASKS_DECOMPOSED:
        out[1] = tj_where(tj_ge(y, g), x, g);
        c = tj_le(x, y);
        *n_out = 2;
        break;
    default: break;
    }
    out[0] = tj_where(c, g, y);
    return out[0] ? TJ_OK : tj_last_status();
}

/* y for the masks tests: specials_tensor's, equal to x every third element
 * (the comparisons' ties). */
static tj_tensor *tied_to(const tj_tensor *x, unsigned seed)
{
    tj_tensor *y = specials_tensor(tj_tensor_dtype(x), tj_tensor_ndim(x), tj_tensor_shape(x), seed);
    size_t es = tj_dtype_size(tj_tensor_dtype(x));
    for (int64_t i = 0; i < tj_tensor_numel(x); i += 3)
        memcpy((char *)tj_tensor_data(y) + i * (int64_t)es, (const char *)tj_tensor_data(x) + i * (int64_t)es, es);
    return y;
}

Test(fuse_pointwise, a_where_of_comparisons_of_the_same_operands_runs_as_one_comparison_inside_its_where)
{
    /* per case: the calls fused, the comparisons merged (the where made a
     * comparison counts too when it runs inside its where) */
    static const int calls[MASKS_COUNT] = {4, 4, 4, 4, 4, 4, 4, 8};
    static const int merged[MASKS_COUNT] = {3, 3, 3, 1, 1, 1, 3, 6};
    static const int64_t dims[][2] = {{1, 7}, {3, 65}, {37, 41}, {5, 2049}};
    tj_decomp_table *table = tj_core_decompositions();
    for (masks_case mc = 0; mc < MASKS_COUNT; mc++) {
        for (int dt = 0; dt < 2; dt++) {
            tj_dtype dtype = dt ? TJ_FLOAT64 : TJ_FLOAT32;
            for (size_t i = 0; i < sizeof dims / sizeof *dims; i++) {
                tj_tensor *x = specials_tensor(dtype, 2, dims[i], 0);
                tj_tensor *in[3] = {x, tied_to(x, 1), specials_tensor(dtype, 2, dims[i], 2)};
                bool decomposed = mc == MASKS_RELU_BACKWARD || mc == MASKS_DECOMPOSED;
                tj_graph *g = tj_make_fx(fn_masks, &mc, in, 3, decomposed ? table : NULL, TJ_TRACE_REAL);
                cr_assert_not_null(g, "%s", tj_last_error());
                char what[96];
                snprintf(what, sizeof what, "case %d, %s [%ld, %ld]", (int)mc, tj_dtype_name(dtype), (long)dims[i][0],
                         (long)dims[i][1]);
                expect_one_step(g, in, 3, what, calls[mc], merged[mc]);
                tj_graph_free(g);
            }
        }
    }
    tj_decomp_table_free(table);
}

/* in: grad, x: aten::gelu_backward(grad, x, approximate='tanh'). */
static tj_status fn_gelu_tanh_backward(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_gelu_backward(in[0], in[1], "tanh");
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* x for the gelu tests: uniform in [-6, 6), then every fourth element one
 * of +-0, +-1, the infinities, nan, and large finite values (x^2 overflows
 * float32 past 1.9e19; e underflows to 0 past |x| ~ 10). */
static tj_tensor *gelu_inputs(tj_dtype dt, int64_t n, unsigned seed)
{
    static const double edge[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 10.0, -10.0, 100.0, -100.0,
                                  1e4, -1e4, 1e20, -1e20, 3e38, -3e38};
    const int n_edge = (int)(sizeof edge / sizeof *edge);
    tj_tensor *r = test_random_tensor(TJ_FLOAT64, 1, &n, seed, -6, 6);
    double *v = tj_tensor_data(r);
    for (int64_t i = 0; i < n; i += 4) v[i] = edge[(i / 4) % n_edge];
    tj_tensor *t = tj_to_copy(r, dt);
    cr_assert_not_null(t, "%s", tj_last_error());
    return t;
}

/* tanh-gelu's backward decomposed (decomps/elementwise.c) is one fused step
 * of 24 calls (its 25, one of them identical to a call a few nodes before,
 * merged: tracer/common.c), three sign tests run inside their wheres: the
 * bits of the unfused plan and of the interpreter at the chunk boundaries and thread
 * split, and the kernel's values on the edges (0, large |x|: grad or 0,
 * not 0 * inf; +-inf and nan: nan). Each call more is one more pass over
 * the chunk (abs or clamp would be three). */
Test(fuse_pointwise, decomposed_tanh_gelu_backward_is_one_step_with_the_unfused_bits_and_the_kernels_values)
{
    static const int64_t lengths[] = {1, 17, 2049, 70001};
    tj_decomp_table *table = tj_core_decompositions();
    for (int dt = 0; dt < 2; dt++) {
        tj_dtype dtype = dt ? TJ_FLOAT64 : TJ_FLOAT32;
        for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
            int64_t n = lengths[i];
            tj_tensor *in[2] = {test_random_tensor(dtype, 1, &n, 5 + (unsigned)i, -2, 2), gelu_inputs(dtype, n, 1)};
            tj_graph *g = tj_make_fx(fn_gelu_tanh_backward, NULL, in, 2, table, TJ_TRACE_REAL);
            cr_assert_not_null(g, "%s", tj_last_error());
            char what[96];
            snprintf(what, sizeof what, "%s [%ld]", tj_dtype_name(dtype), (long)n);
            expect_one_step(g, in, 2, what, 24, 3);
            tj_plan *p = compile_opts(g, true);
            tj_tensor *got, *want = tj_gelu_backward(in[0], in[1], "tanh");
            cr_assert_eq(tj_plan_run(p, in, 2, &got), TJ_OK, "%s", tj_last_error());
            cr_assert_not_null(want, "%s", tj_last_error());
            for (int64_t k = 0; k < n; k++) {
                double x = tj_tensor_item_at(in[1], k), gk = tj_tensor_item_at(got, k), w = tj_tensor_item_at(want, k);
                cr_expect(test_close(gk, w, dt ? 1e-12 : 2e-6, dt ? 1e-15 : 1e-7), "%s: x = %g: %.9g, kernel %.9g",
                          what, x, gk, w);
                if (isnan(x) || isinf(x)) cr_expect(isnan(gk), "%s: x = %g gives %g, not nan", what, x, gk);
                else if (fabs(x) >= 100) cr_expect_eq(gk, x > 0 ? tj_tensor_item_at(in[0], k) : 0, "%s: x = %g", what, x);
            }
            tj_plan_free(p);
            tj_graph_free(g);
        }
    }
    tj_decomp_table_free(table);
}

#define N_CONSTANTS 20

/* in: x, then N_CONSTANTS one-element tensors (a decomposed graph's
 * literals: tanh-gelu's backward has ten): r = r c_k + x over them all. */
static tj_status fn_constants(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *r = in[0];
    for (int k = 1; k <= N_CONSTANTS; k++) r = tj_add(tj_mul(r, in[k]), in[0]);
    out[0] = r;
    *n_out = 1;
    return r ? TJ_OK : tj_last_status();
}

Test(fuse_pointwise, a_chain_through_many_one_element_constants_is_one_step)
{
    int64_t shape[1] = {1000};
    tj_tensor *in[1 + N_CONSTANTS] = {test_random_tensor(TJ_FLOAT32, 1, shape, 1, -2, 2)};
    for (int k = 1; k <= N_CONSTANTS; k++) in[k] = test_random_tensor(TJ_FLOAT32, 0, NULL, 10 + (unsigned)k, -1, 1);
    tj_graph *g = trace(fn_constants, NULL, in, 1 + N_CONSTANTS);
    tj_plan_statistics s = expect_plans_match(g, in, 1 + N_CONSTANTS, "many constants");
    cr_expect_eq(s.n_kernels, 1, "%d kernels", s.n_kernels);
    cr_expect_eq(s.n_fused_pointwise_nodes, 2 * N_CONSTANTS, "%d calls fused", s.n_fused_pointwise_nodes);
    tj_graph_free(g);
}

Test(fuse_pointwise, inputs_restrided_at_run_time_are_gathered)
{
    int64_t shape[2] = {37, 41}, tshape[2] = {41, 37};
    tj_tensor *in[2] = {test_random_tensor(TJ_FLOAT32, 2, shape, 1, -1, 1), test_random_tensor(TJ_FLOAT32, 2, shape, 2, -1, 1)};
    tj_graph *g = trace(fn_chain, NULL, in, 2);
    tj_plan *p = compile_opts(g, true);
    cr_expect_eq(test_plan_stats(p).n_kernels, 1);
    tj_tensor *strided[2] = {tj_t(test_random_tensor(TJ_FLOAT32, 2, tshape, 3, -1, 1)), in[1]};
    tj_tensor *ref, *got;
    cr_assert_eq(tj_graph_run(g, strided, 2, &ref), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, strided, 2, &got), TJ_OK, "%s", tj_last_error());
    test_expect_same_bits(got, ref, "transposed x");
    tj_tensor *expanded[2] = {in[0], tj_expand(test_random_tensor(TJ_FLOAT32, 1, &shape[1], 4, -1, 1), shape, 2)};
    cr_assert_eq(tj_graph_run(g, expanded, 2, &ref), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, expanded, 2, &got), TJ_OK, "%s", tj_last_error());
    test_expect_same_bits(got, ref, "broadcast a");
    tj_plan_free(p);
    tj_graph_free(g);
}

/* in: x, y [N, D] float32, m, m2 [N, D] bool: wheres of masks (bool
 * results) read by a where of floats; outputs the float, a mask and a
 * where.Scalar of masks */
static tj_status fn_mask_chain(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0], *y = in[1], *m = in[2], *m2 = in[3];
    tj_tensor *r = tj_where(m, tj_lt(x, y), m2);
    tj_tensor *q = tj_where(m2, r, tj_where(r, m, tj_ge_scalar(y, tj_v_float(0.2))));
    out[0] = tj_where(q, tj_mul(x, y), tj_add(x, y));
    out[1] = r;
    out[2] = tj_where_scalar(q, tj_v_bool(false), tj_v_bool(true));
    *n_out = 3;
    return out[2] ? TJ_OK : tj_last_status();
}

static tj_tensor *random_mask(int ndim, const int64_t *shape, unsigned seed)
{
    tj_tensor *m = tj_gt_scalar(test_random_tensor(TJ_FLOAT32, ndim, shape, seed, -1, 1), tj_v_float(0));
    cr_assert_not_null(m, "%s", tj_last_error());
    return m;
}

Test(fuse_pointwise, bool_operands_of_wheres_of_masks_restrided_at_run_time_are_gathered)
{
    int64_t shape[2] = {37, 301}, tshape[2] = {301, 37}, col[2] = {37, 1};
    tj_tensor *in[4] = {test_random_tensor(TJ_FLOAT32, 2, shape, 1, -1, 1), test_random_tensor(TJ_FLOAT32, 2, shape, 2, -1, 1),
                        random_mask(2, shape, 3), random_mask(2, shape, 4)};
    tj_graph *g = trace(fn_mask_chain, NULL, in, 4);
    tj_plan_statistics s = expect_plans_match(g, in, 4, "mask chain");
    cr_expect_eq(s.n_kernels, 1, "%d kernels", s.n_kernels);
    cr_expect_eq(s.n_fused_pointwise_nodes, 9, "%d calls fused", s.n_fused_pointwise_nodes);
    tj_plan *p = compile_opts(g, true);
    /* a transposed mask, an expanded column, an expanded 0-dim mask with x transposed */
    tj_tensor *variants[3][4] = {
        {in[0], in[1], tj_t(random_mask(2, tshape, 5)), in[3]},
        {in[0], in[1], in[2], tj_expand(random_mask(2, col, 6), shape, 2)},
        {tj_t(test_random_tensor(TJ_FLOAT32, 2, tshape, 7, -1, 1)), in[1], tj_expand(random_mask(0, NULL, 8), shape, 2),
         tj_t(random_mask(2, tshape, 9))}};
    for (int v = 0; v < 3; v++) {
        for (int threads = 1; threads <= 2; threads++) {
            tj_set_num_threads(threads);
            tj_tensor *ref[3], *got[3];
            cr_assert_eq(tj_graph_run(g, variants[v], 4, ref), TJ_OK, "%s", tj_last_error());
            cr_assert_eq(tj_plan_run(p, variants[v], 4, got), TJ_OK, "%s", tj_last_error());
            for (int k = 0; k < 3; k++) {
                char what[64];
                snprintf(what, sizeof what, "variant %d at %d threads, output %d", v, threads, k);
                test_expect_same_bits(got[k], ref[k], what);
            }
        }
    }
    tj_plan_free(p);
    tj_graph_free(g);
}

/* a permute made contiguous, then used: the copy stays a kernel of its own
 * (the tiled copy kernels beat a gather a chunk at a time), what follows
 * is fused */
static tj_status fn_layout_copy(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *c = tj_clone(tj_t(in[0]));
    out[0] = tj_relu(tj_add(tj_mul_scalar(c, tj_v_float(0.5)), in[1]));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fuse_pointwise, a_layout_copy_stays_a_copy_kernel)
{
    int64_t shape[2] = {70, 90}, tshape[2] = {90, 70};
    tj_tensor *in[2] = {test_random_tensor(TJ_FLOAT32, 2, shape, 1, -1, 1), test_random_tensor(TJ_FLOAT32, 2, tshape, 2, -1, 1)};
    tj_graph *g = trace(fn_layout_copy, NULL, in, 2);
    tj_plan_statistics s = expect_plans_match(g, in, 2, "layout copy");
    cr_expect_eq(s.n_fused_pointwise, 1);
    cr_expect_eq(s.n_fused_pointwise_nodes, 3, "mul, add, relu");
    cr_expect_eq(s.n_kernels, 2);
    tj_graph_free(g);
}

/* ---- where fusion must stop ---- */

/* a = x * 2 is read by sum (not a member): written out, b = a + 1 fused with it */
static tj_status fn_read_elsewhere(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *a = tj_mul_scalar(in[0], tj_v_int(2));
    tj_tensor *b = tj_exp(tj_add_scalar(a, tj_v_int(1)));
    tj_tensor *s = tj_sum(a, TJ_DTYPE_NONE);
    out[0] = tj_mul(b, s); /* reads the sum: a new group after it */
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fuse_pointwise, a_result_read_by_another_kernel_is_written_out)
{
    int64_t shape[1] = {1000};
    tj_tensor *in[1] = {test_random_tensor(TJ_FLOAT32, 1, shape, 1, -1, 1)};
    tj_graph *g = trace(fn_read_elsewhere, NULL, in, 1);
    tj_plan_statistics s = expect_plans_match(g, in, 1, "read elsewhere");
    cr_expect_eq(s.n_fused_pointwise, 1);
    cr_expect_eq(s.n_fused_pointwise_nodes, 3);
    cr_expect_eq(s.n_kernels, 3, "%d kernels", s.n_kernels); /* mul+add+exp, sum, mul */
    tj_graph_free(g);
}

/* in-place: a = x * 2; x.add_(1); b = a + x: the add_ writes x, which the
 * multiplication reads, between them */
static tj_status fn_inplace_between(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_clone(in[0]);
    tj_tensor *a = tj_mul_scalar(x, tj_v_int(2));
    if (!tj_add_(x, in[1], tj_v_int(1))) return tj_last_status();
    out[0] = tj_add(tj_exp(a), x);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fuse_pointwise, no_read_moves_past_an_in_place_update)
{
    int64_t shape[1] = {600};
    tj_tensor *in[2] = {test_random_tensor(TJ_FLOAT32, 1, shape, 1, -1, 1), test_random_tensor(TJ_FLOAT32, 1, shape, 2, -1, 1)};
    tj_graph *g = trace(fn_inplace_between, NULL, in, 2);
    tj_plan_statistics s = expect_plans_match(g, in, 2, "in place between");
    cr_expect_eq(s.n_fused_pointwise, 2, "clone and mul before the add_, exp and add after it");
    cr_expect_eq(s.n_fused_pointwise_nodes, 4);
    cr_expect_eq(s.n_kernels, 3);
    tj_graph_free(g);
}

/* results of different shapes: x [4, 8] * 2 and y [8] * 3 + 1 */
static tj_status fn_shapes(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_mul_scalar(in[0], tj_v_int(2));
    out[1] = tj_add_scalar(tj_mul_scalar(in[1], tj_v_int(3)), tj_v_int(1));
    out[2] = tj_mul(out[0], out[1]); /* [4, 8]: reads both */
    *n_out = 3;
    return out[2] ? TJ_OK : tj_last_status();
}

Test(fuse_pointwise, results_of_other_shapes_are_other_steps)
{
    int64_t sx[2] = {4, 8}, sy[1] = {8};
    tj_tensor *in[2] = {test_random_tensor(TJ_FLOAT32, 2, sx, 1, -1, 1), test_random_tensor(TJ_FLOAT32, 1, sy, 2, -1, 1)};
    tj_graph *g = trace(fn_shapes, NULL, in, 2);
    tj_plan_statistics s = expect_plans_match(g, in, 2, "shapes");
    cr_expect_eq(s.n_fused_pointwise, 2, "x*2 with the product, y*3+1 apart");
    cr_expect_eq(s.n_kernels, 2, "%d kernels", s.n_kernels);
    tj_graph_free(g);
}

/* a view of an intermediate: a = x * 2; b = a.t() + 1 (reads a through a view) */
static tj_status fn_view_between(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *a = tj_exp(tj_mul_scalar(in[0], tj_v_int(2)));
    out[0] = tj_add_scalar(tj_t(a), tj_v_int(1));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fuse_pointwise, a_view_of_a_members_result_is_read_after_the_step)
{
    int64_t shape[2] = {40, 30};
    tj_tensor *in[1] = {test_random_tensor(TJ_FLOAT32, 2, shape, 1, -1, 1)};
    tj_graph *g = trace(fn_view_between, NULL, in, 1);
    tj_plan_statistics s = expect_plans_match(g, in, 1, "view");
    cr_expect_eq(s.n_fused_pointwise, 1, "mul + exp; the add reads the transpose after them");
    cr_expect_eq(s.n_fused_pointwise_nodes, 2);
    cr_expect_eq(s.n_kernels, 2);
    tj_graph_free(g);
}

/* ---- no allocation at run time ---- */

Test(fuse_pointwise, fused_steps_allocate_nothing_at_run_time)
{
    count_allocations();
    tj_scope *sc = tj_scope_begin();
    int64_t N = 300, D = 257, sx[2] = {N, D}, sc1[2] = {N, 1}, sr[1] = {D}, st[2] = {D, N};
    tj_tensor *in[5] = {test_random_tensor(TJ_FLOAT32, 2, sx, 1, -2, 2), test_random_tensor(TJ_FLOAT32, 2, sc1, 2, -1, 1),
                        test_random_tensor(TJ_FLOAT32, 1, sr, 3, -1, 1), test_random_tensor(TJ_FLOAT32, 0, NULL, 4, 0.5, 1),
                        test_random_tensor(TJ_FLOAT32, 2, st, 5, -1, 1)};
    tj_graph *g = trace(fn_broadcast, NULL, in, 5);
    tj_plan *p = compile_opts(g, true);
    cr_expect_gt(test_plan_stats(p).n_fused_pointwise, 0);
    tj_tensor *out = tj_tensor_empty(TJ_FLOAT32, 2, sx), *outs[1] = {out};
    for (int threads = 1; threads <= 2; threads++) {
        tj_set_num_threads(threads);
        cr_assert_eq(tj_plan_run_into(p, in, 5, outs), TJ_OK, "%s", tj_last_error()); /* warm-up */
        int64_t before = allocations_made();
        for (int r = 0; r < 20; r++) cr_assert_eq(tj_plan_run_into(p, in, 5, outs), TJ_OK, "%s", tj_last_error());
        cr_expect_eq(allocations_made() - before, 0, "%lld allocations at %d threads",
                     (long long)(allocations_made() - before), threads);
    }
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(sc);
    tj_set_allocator(NULL);
}

/* ---- several contexts on several threads ---- */

typedef struct ctx_job {
    tj_plan *p;
    tj_tensor *in[2];
    tj_tensor *ref;
    int bad;
} ctx_job;

static void *run_job(void *arg)
{
    ctx_job *j = arg;
    tj_plan_context *c = tj_plan_context_new(j->p);
    tj_tensor *out = tj_tensor_empty(TJ_FLOAT32, tj_tensor_ndim(j->ref), tj_tensor_shape(j->ref));
    for (int r = 0; r < 30; r++) {
        tj_tensor *outs[1] = {out};
        if (!c || tj_plan_run_ctx_into(c, j->in, 2, outs) != TJ_OK ||
            memcmp(tj_tensor_data(out), tj_tensor_data(j->ref), sizeof(float) * (size_t)tj_tensor_numel(out)))
            j->bad++;
    }
    tj_tensor_release(out);
    tj_plan_context_free(c);
    return NULL;
}

Test(fuse_pointwise, contexts_on_several_threads_match_the_interpreter)
{
    tj_set_num_threads(2);
    int64_t shape[1] = {100003};
    tj_tensor *in[2] = {test_random_tensor(TJ_FLOAT32, 1, shape, 1, -3, 3), test_random_tensor(TJ_FLOAT32, 1, shape, 2, -2, 2)};
    tj_graph *g = trace(fn_chain, NULL, in, 2);
    tj_plan *p = compile_opts(g, true);
    cr_expect_eq(test_plan_stats(p).n_kernels, 1);
    tj_tensor *ref;
    cr_assert_eq(tj_graph_run(g, in, 2, &ref), TJ_OK);
    ctx_job jobs[3];
    pthread_t th[3];
    for (int k = 0; k < 3; k++) {
        jobs[k] = (ctx_job){.p = p, .in = {in[0], in[1]}, .ref = ref};
        pthread_create(&th[k], NULL, run_job, &jobs[k]);
    }
    for (int k = 0; k < 3; k++) {
        pthread_join(th[k], NULL);
        cr_expect_eq(jobs[k].bad, 0, "thread %d: %d bad runs", k, jobs[k].bad);
    }
    tj_plan_free(p);
    tj_graph_free(g);
}

/* ---- decomposed training steps: written-back parameters, in-place placement ---- */

/* The fused plan with and without common-subexpression elimination
 * (tracer/common.c), which merges the decomposed convolution backward's
 * padding of the layer input into the forward pass's. */
static tj_plan *compile_common(const tj_graph *g, bool merge)
{
    tj_compile_options o = {.no_common_subexpressions = !merge, .native_code = test_native_code()};
    tj_plan *p = tj_compile(g, &o);
    cr_assert_not_null(p, "tj_compile: %s", tj_last_error());
    return p;
}

/* Model `id`'s decomposed training step, 3 steps written back, on two
 * plans: loop fusion on and off, or (`merge_only`) common subexpressions
 * merged and not. The same bits from both. */
static void check_model(const char *id, int64_t batch, bool merge_only)
{
    model m;
    train_state state;
    cr_assert_eq(model_create(model_find(id), 0, &m), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(train_state_init(&m, &state), TJ_OK);
    tj_decomp_table *table = tj_core_decompositions();
    tj_graph *g = step_trace(&m, STEP_TRAIN, batch, table, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    const model_def *d = m.def;
    int64_t xs[4], ys[4];
    memcpy(xs, d->x_shape, sizeof xs);
    memcpy(ys, d->y_shape, sizeof ys);
    xs[0] = ys[0] = batch;
    tj_tensor *x = d->x_dtype == TJ_INT64 ? tj_tensor_empty(TJ_INT64, d->x_ndim, xs)
                                          : test_random_tensor(TJ_FLOAT32, d->x_ndim, xs, 7, -1, 1);
    tj_tensor *y = tj_tensor_empty(TJ_INT64, d->y_ndim, ys);
    for (int64_t i = 0; i < tj_tensor_numel(y); i++) ((int64_t *)tj_tensor_data(y))[i] = i * 7 % 10;
    if (d->x_dtype == TJ_INT64)
        for (int64_t i = 0; i < tj_tensor_numel(x); i++) ((int64_t *)tj_tensor_data(x))[i] = i * 13 % 256;
    tj_tensor *in[3 * MODEL_MAX_PARAMS + 2], *a[3 * MODEL_MAX_PARAMS + 2], *b[3 * MODEL_MAX_PARAMS + 2];
    int n = step_inputs(&m, &state, x, y, in);
    for (int k = 0; k < n; k++) {
        a[k] = tj_clone(in[k]);
        b[k] = tj_clone(in[k]);
    }
    tj_plan *pf = merge_only ? compile_common(g, true) : compile_opts(g, true);
    tj_plan *pu = merge_only ? compile_common(g, false) : compile_opts(g, false);
    tj_plan_statistics sf = test_plan_stats(pf), su = test_plan_stats(pu);
    cr_expect_gt(merge_only ? sf.n_common : sf.n_fused_pointwise, 0, "%s", id);
    /* merged, cnn's padding for the weight gradient is the forward pass's
     * buffer, which then stays; unmerged, the forward's runs in its product
     * (tracer/fuse_gather.c) and the gradient's apart: as many kernels */
    if (merge_only) cr_expect_leq(sf.n_kernels, su.n_kernels, "%s: %d against %d", id, sf.n_kernels, su.n_kernels);
    else cr_expect_lt(sf.n_kernels, su.n_kernels, "%s: %d against %d", id, sf.n_kernels, su.n_kernels);
    /* tj_contiguous hands back the context's own output tensor (contiguous
     * already) with a reference in the innermost scope: that scope must end
     * before the plans, which own those tensors, are freed */
    tj_scope *sc = tj_scope_begin();
    for (int step = 0; step < 3; step++) { /* the parameters and state are written back */
        cr_assert_eq(tj_plan_run_into(pf, a, n, NULL), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_plan_run_into(pu, b, n, NULL), TJ_OK, "%s", tj_last_error());
        test_expect_same_bits(tj_plan_context_output(tj_plan_default_context(pf), 0),
                         tj_plan_context_output(tj_plan_default_context(pu), 0), id);
        for (int k = 0; k < n; k++) test_expect_same_bits(a[k], b[k], id);
    }
    tj_scope_end(sc);
    tj_plan_free(pf);
    tj_plan_free(pu);
    tj_graph_free(g);
    tj_decomp_table_free(table);
    train_state_free(&state);
    model_free(&m);
}

/* The arena of model `id`'s decomposed training step at its benchmark
 * batch: the results loop fusion keeps out of it make it no larger. */
static void expect_smaller_arena(const char *id)
{
    model m;
    cr_assert_eq(model_create(model_find(id), 0, &m), TJ_OK, "%s", tj_last_error());
    tj_decomp_table *table = tj_core_decompositions();
    tj_graph *g = step_trace(&m, STEP_TRAIN, 0, table, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    for (int threads = 1; threads <= 2; threads++) {
        tj_set_num_threads(threads);
        tj_plan *pf = compile_no_scatter(g, true), *pu = compile_no_scatter(g, false);
        tj_plan_statistics sf = test_plan_stats(pf), su = test_plan_stats(pu);
        /* the bytes live at once never grow; the arena within 1%
         * (placement by last writer fragments a little differently: cnn's
         * relu backward, lt | eq and its where fused, 0.6% at one thread) */
        cr_expect_leq(sf.lower_bound_bytes, su.lower_bound_bytes, "%s: %zu bytes live fused vs %zu", id,
                      sf.lower_bound_bytes, su.lower_bound_bytes);
        cr_expect_leq((double)sf.arena_bytes, (double)su.arena_bytes * 1.01,
                      "%s at %d threads: arena %zu fused vs %zu", id, threads, sf.arena_bytes, su.arena_bytes);
        tj_plan_free(pf);
        tj_plan_free(pu);
    }
    tj_graph_free(g);
    tj_decomp_table_free(table);
    model_free(&m);
}

Test(fuse_pointwise, decomposed_training_steps_need_no_larger_arena_at_benchmark_batches)
{
    expect_smaller_arena("gpt");
    expect_smaller_arena("cnn");
    expect_smaller_arena("mlp");
}

Test(fuse_pointwise, decomposed_gpt_training_steps_match_unfused_bit_for_bit)
{
    check_model("gpt", 2, false);
}

Test(fuse_pointwise, decomposed_cnn_and_mlp_training_steps_match_unfused_bit_for_bit)
{
    check_model("cnn", 3, false);
    check_model("mlp", 5, false);
}

Test(fuse_pointwise, decomposed_training_steps_with_merged_calls_match_bit_for_bit)
{
    check_model("cnn", 3, true); /* the convolutions' padding */
    check_model("gpt", 2, true); /* views and creation calls; the optimiser's steps fuse otherwise */
}

/* ---- merged comparisons on unusual graphs (breaker43: all held) ---- */

/* in: x, y [N, D] float, s, t [N, 1] float, i [N, D] int64, m [N, D] bool.
 * out[0]: the mask also the where's own operand (where(c, c, m));
 * out[1]: a comparison of columns selecting full rows (the mask broadcast
 * by the where); out[2]: an int64 against a float comparison selecting
 * between float64 and float32 (promoted); out[3]: the comparison's operand
 * selected; out[4]: both branches the mask */
static tj_status fn_unusual_compare_where(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0], *y = in[1], *s = in[2], *t = in[3], *i = in[4], *m = in[5];
    tj_tensor *c = tj_lt(x, y);
    out[0] = tj_where(c, c, m);
    out[1] = tj_where(tj_le(s, t), tj_add(x, y), y);
    out[2] = tj_where(tj_gt(i, x), tj_to_copy(x, TJ_FLOAT64), tj_mul(y, x));
    out[3] = tj_where(tj_ge(x, s), x, s);
    tj_tensor *e = tj_eq(y, t);
    out[4] = tj_where(e, e, e);
    *n_out = 5;
    return out[4] ? TJ_OK : tj_last_status();
}

Test(fuse_pointwise, comparisons_on_unusual_where_graphs_keep_the_unfused_bits)
{
    static const int64_t dims[][2] = {{1, 1}, {3, 65}, {37, 41}};
    for (size_t k = 0; k < sizeof dims / sizeof *dims; k++) {
        int64_t col[2] = {dims[k][0], 1};
        tj_tensor *fi = specials_tensor(TJ_FLOAT32, 2, dims[k], 5);
        tj_tensor *in[6] = {specials_tensor(TJ_FLOAT32, 2, dims[k], 0), specials_tensor(TJ_FLOAT32, 2, dims[k], 1),
                            specials_tensor(TJ_FLOAT32, 2, col, 2),     specials_tensor(TJ_FLOAT32, 2, col, 3),
                            tj_to_copy(tj_nan_to_num(fi, tj_v_float(0), tj_v_float(1e6), tj_v_float(-1e6)), TJ_INT64),
                            tj_lt(specials_tensor(TJ_FLOAT32, 2, dims[k], 4), tj_zeros(NULL, 0, TJ_FLOAT32))};
        for (int j = 0; j < 6; j++) cr_assert_not_null(in[j], "%s", tj_last_error());
        tj_graph *g = trace(fn_unusual_compare_where, NULL, in, 6);
        char what[96];
        snprintf(what, sizeof what, "unusual [%ld, %ld]", (long)dims[k][0], (long)dims[k][1]);
        test_expect_fused_plans_match(g, in, 6, what, NULL);
        tj_graph_free(g);
    }
}

/* in: x, y [N, D] float32. The comparison's operand x is written in place
 * (mul_, then add_ through a view) between the comparison and its where:
 * the mask must hold x's values from before. ctx selects the writer. */
static tj_status fn_compare_then_write(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    int how = *(int *)ctx;
    tj_tensor *x = tj_exp(in[0]), *y = in[1];
    tj_tensor *c = tj_lt(x, y);
    if (how == 0) tj_mul_scalar_(x, tj_v_float(-2));
    else if (how == 1) tj_add_scalar_(tj_view(x, (int64_t[]){-1}, 1), tj_v_float(-3), tj_v_int(1));
    else tj_copy_(x, tj_neg(y));
    out[0] = tj_where(c, tj_add(x, y), y);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fuse_pointwise, a_comparison_operand_written_before_its_where_keeps_the_mask_of_before)
{
    int64_t shape[2] = {3, 65};
    tj_tensor *in[2] = {test_random_tensor(TJ_FLOAT32, 2, shape, 1, -1, 1), test_random_tensor(TJ_FLOAT32, 2, shape, 2, 0, 3)};
    for (int how = 0; how < 3; how++) {
        tj_graph *g = trace(fn_compare_then_write, &how, in, 2);
        char what[64];
        snprintf(what, sizeof what, "writer %d", how);
        test_expect_fused_plans_match(g, in, 2, what, NULL);
        tj_graph_free(g);
    }
}

/* in: p, g [N, D] float32 (p updated in place, as a parameter) */
static tj_status fn_compare_updated_input(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    int how = *(int *)ctx;
    tj_tensor *p = in[0], *g = in[1];
    tj_tensor *c = how ? tj_lt(g, p) : tj_lt(p, g);
    tj_sub_(p, tj_mul_scalar(g, tj_v_float(0.5)), tj_v_int(1));
    out[0] = tj_where(c, how ? g : p, tj_mul(p, g));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fuse_pointwise, a_compare_on_an_input_written_back_reads_the_value_before)
{
    int64_t shape[2] = {5, 300};
    for (int how = 0; how < 2; how++) {
        tj_tensor *in[2] = {test_random_tensor(TJ_FLOAT32, 2, shape, 1, -1, 1), test_random_tensor(TJ_FLOAT32, 2, shape, 2, -1, 1)};
        tj_tensor *in2[2] = {tj_clone(in[0]), in[1]}, *in3[2] = {tj_clone(in[0]), in[1]};
        tj_graph *g = trace(fn_compare_updated_input, &how, (tj_tensor *[]){tj_clone(in[0]), in[1]}, 2);
        tj_pass_functionalize(g);
        tj_compile_options fo = {0}, uo = {.no_fusion = true};
        tj_plan *pf = tj_compile(g, &fo), *pu = tj_compile(g, &uo);
        cr_assert(pf && pu, "%s", tj_last_error());
        tj_tensor *a[2], *b[2], *r[2];
        cr_assert_eq(tj_plan_run(pf, in2, 2, a), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_plan_run(pu, in3, 2, b), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_graph_run(g, in, 2, r), TJ_OK, "%s", tj_last_error());
        test_expect_same_bits(a[0], b[0], "fused vs unfused");
        test_expect_same_bits(a[0], r[0], "fused vs interpreter");
        test_expect_same_bits(in2[0], in3[0], "written back");
        cr_expect_eq(test_plan_stats(pf).n_fused_compare_wheres, 1, "the comparison runs inside its where");
        tj_plan_free(pf);
        tj_plan_free(pu);
        tj_graph_free(g);
    }
}

/* ---- a mul merged into the add that alone reads it ---- */

/* tj_k_mul_add_loop on n elements against its definition: tj_k_binary_loop's
 * MUL, then tj_k_add_loop on the product (bits, a nan as any nan: which
 * operand's nan an operation on two keeps is the compiler's choice), and
 * the scalar formula, each operation rounded once. With k->one_b, in[1] is
 * the one value `one` repeated for the definition, a single element
 * followed by other values for the loop. */
static void check_mul_add(const tj_k_mul_add_args *k, int64_t n, double one, const char *what)
{
    enum { N = 67 };
    size_t es = k->dtype == TJ_FLOAT32 ? 4 : 8;
    static const double special[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-310, 3e38};
    _Alignas(64) char in[3][N * 8], prod[N * 8], want[N * 8], got[N * 8 + 8], b1[N * 8];
    double v[3][N];
    unsigned seed = (unsigned)n * 31u + (unsigned)k->product_first;
    for (int j = 0; j < 3; j++)
        for (int64_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            double u = (double)(seed >> 8 & 0xffff) / 8192.0 - 4;
            v[j][i] = (i + j) % 9 == 4 ? special[(i / 9 + (int64_t)j) % 8] : u;
            if (j == 1 && k->one_b) v[j][i] = one;
            if (es == 4) ((float *)in[j])[i] = (float)v[j][i];
            else ((double *)in[j])[i] = v[j][i];
        }
    memset(b1, 0x7f, sizeof b1); /* past the one value: nan, or a large number */
    memcpy(b1, in[1], es);
    const void *ab[2] = {in[0], in[1]};
    tj_k_binary_args mul = {.op = TJ_K_MUL, .dtype = k->dtype};
    tj_k_binary_loop(n, prod, ab, &mul);
    const void *sum[2] = {k->product_first ? prod : in[2], k->product_first ? in[2] : prod};
    tj_k_axpby_args add = {.alpha = k->alpha, .dtype = k->dtype};
    tj_k_add_loop(n, want, sum, &add);
    const void *abc[3] = {in[0], k->one_b ? b1 : in[1], in[2]};
    memset(got, 0x5a, sizeof got);
    tj_k_mul_add_loop(n, got, abc, k);
    for (int64_t i = 0; i < n; i++) {
        double g = es == 4 ? ((float *)got)[i] : ((double *)got)[i], w = es == 4 ? ((float *)want)[i] : ((double *)want)[i];
        cr_assert(memcmp(got + i * (int64_t)es, want + i * (int64_t)es, es) == 0 || (isnan(g) && isnan(w)),
                  "%s n %lld: element %lld %g, mul then add %g", what, (long long)n, (long long)i, g, w);
        double f; /* the formula on scalars */
        if (es == 4) {
            float x = ((float *)in[0])[i], y = ((float *)in[1])[i], z = ((float *)in[2])[i], al = (float)k->alpha;
            float p = x * y, a = k->product_first ? p : z, b = k->product_first ? z : p;
            f = al == 1.0f ? a + b : a + al * b;
        } else {
            double x = v[0][i], y = v[1][i], z = v[2][i], p = x * y, a = k->product_first ? p : z,
                   b = k->product_first ? z : p;
            f = k->alpha == 1.0 ? a + b : a + k->alpha * b;
        }
        cr_assert(isnan(f) ? isnan(g) : (es == 4 ? (float)f == (float)g && signbit(f) == signbit(g) : memcmp(&f, &g, 8) == 0),
                  "%s n %lld: element %lld %g, the formula's %g", what, (long long)n, (long long)i, g, f);
    }
    cr_assert_eq((unsigned char)got[n * (int64_t)es], 0x5a, "%s n %lld: written past", what, (long long)n);
}

/* ... and with in[1] one value (a splat of a fused step): the bits of that
 * value repeated, for special values too. */
Test(fuse_pointwise, the_mul_add_loop_gives_the_mul_then_the_adds_bits_on_every_isa)
{
    static const int64_t lens[] = {0, 1, 3, 8, 15, 16, 17, 33, 67};
    static const double alphas[] = {1, -1, 0.1};
    static const double ones[] = {0.7, -3, NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-310, 3e38};
    for (int s = 0; s < TEST_NISA; s++) {
        if (!tj_k_isa_force(test_isas[s])) continue;
        for (int dt = 0; dt < 2; dt++)
            for (int first = 0; first < 2; first++)
                for (int a = 0; a < 3; a++)
                    for (int o = -1; o < (int)(sizeof ones / sizeof *ones); o++) {
                        tj_k_mul_add_args k = {.dtype = dt ? TJ_FLOAT64 : TJ_FLOAT32, .alpha = alphas[a],
                                               .product_first = first, .one_b = o >= 0};
                        char what[128];
                        snprintf(what, sizeof what, "%s %s%s alpha %g, b %s%g", test_isas[s],
                                 dt ? "float64" : "float32", first ? " product first" : "", alphas[a],
                                 o >= 0 ? "one value " : "an array", o >= 0 ? ones[o] : 0.0);
                        for (size_t l = 0; l < sizeof lens / sizeof *lens; l++)
                            check_mul_add(&k, lens[l], o >= 0 ? ones[o] : 0, what);
                    }
    }
    tj_k_isa_force(NULL);
}

/* in: x, y, z [N, D]; products added with the product first and second,
 * alpha 1, -1 (sub) and 2.5, a product of a product, a product read twice
 * (not merged), a product read by another step too (written out). */
static tj_status fn_mul_add(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0], *y = in[1], *z = in[2], *xy = tj_mul(x, y);
    out[0] = tj_add(xy, z);
    out[1] = tj_sub(z, tj_mul(y, z));
    out[2] = tj_add_alpha(tj_mul(tj_mul(x, z), y), tj_mul(z, x), tj_v_float(2.5));
    tj_tensor *twice = tj_mul(x, x);
    out[3] = tj_add(twice, twice);
    out[4] = tj_mul(tj_sub(tj_mul(z, y), x), out[0]);
    *n_out = 5;
    return out[4] ? TJ_OK : tj_last_status();
}

Test(fuse_pointwise, a_mul_read_only_by_an_add_runs_inside_it_with_the_unfused_bits_on_every_isa)
{
    static const int64_t dims[][2] = {{1, 7}, {3, 65}, {37, 41}, {5, 2049}};
    for (int s = 0; s < TEST_NISA; s++) {
        if (!tj_k_isa_force(test_isas[s])) continue;
        for (int dt = 0; dt < 2; dt++)
            for (size_t i = 0; i < sizeof dims / sizeof *dims; i++) {
                tj_dtype dtype = dt ? TJ_FLOAT64 : TJ_FLOAT32;
                tj_tensor *in[3] = {specials_tensor(dtype, 2, dims[i], 0), specials_tensor(dtype, 2, dims[i], 1),
                                    specials_tensor(dtype, 2, dims[i], 2)};
                tj_graph *g = trace(fn_mul_add, NULL, in, 3);
                char what[96];
                snprintf(what, sizeof what, "%s %s [%ld, %ld]", test_isas[s], tj_dtype_name(dtype),
                         (long)dims[i][0], (long)dims[i][1]);
                expect_one_step(g, in, 3, what, 13, 0);
                tj_graph_free(g);
            }
    }
    tj_k_isa_force(NULL);
}

/* in: x, y [N, D], s (0-dim): constants (s, literals) as the first or the
 * second operand of an add, sub, mul and div (read as one value by the
 * row loop, tj_k_rows_loop) and as a merged product's second factor (the
 * mul_add loop's one_b) or first (read whole). */
static tj_status fn_splat_operands(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0], *y = in[1], *s = in[2];
    out[0] = tj_add(tj_mul(x, s), y);
    out[1] = tj_add(y, tj_mul(s, x));
    out[2] = tj_div(s, x);
    out[3] = tj_mul_scalar(tj_sub(x, s), tj_v_float(2.5));
    out[4] = tj_sub(tj_add(tj_mul_scalar(x, tj_v_float(0.5)), s), tj_div_scalar(y, tj_v_float(3)));
    *n_out = 5;
    return out[4] ? TJ_OK : tj_last_status();
}

/* Traces fn on x, y [N, D] (specials_tensor), s (a 0-dim tensor holding
 * each of values) and, with bool_operand, t (a 0-dim bool alternating
 * false and true), on every ISA, float32 and float64, and expects one fused
 * step of `calls` calls (`merged` comparisons inside their where) with the
 * unfused plan's bits. */
static void expect_constants_fused(tj_trace_fn fn, bool bool_operand, const double *values, size_t n_values, int calls,
                                   int merged)
{
    static const int64_t dims[][2] = {{1, 7}, {3, 65}, {5, 2049}};
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (int dt = 0; dt < 2; dt++)
            for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
                for (size_t v = 0; v < n_values; v++) {
                    tj_dtype dtype = dt ? TJ_FLOAT64 : TJ_FLOAT32;
                    int n = bool_operand ? 4 : 3;
                    tj_tensor *in[4] = {specials_tensor(dtype, 2, dims[i], 0), specials_tensor(dtype, 2, dims[i], 1),
                                        tj_scalar_tensor(tj_v_float(values[v]), dtype),
                                        bool_operand ? tj_scalar_tensor(tj_v_bool(v % 2), TJ_BOOL) : NULL};
                    for (int j = 2; j < n; j++) cr_assert_not_null(in[j], "%s", tj_last_error());
                    tj_graph *g = trace(fn, NULL, in, n);
                    char what[96];
                    snprintf(what, sizeof what, "%s %s [%ld, %ld] s %g", test_isas[k], tj_dtype_name(dtype),
                             (long)dims[i][0], (long)dims[i][1], values[v]);
                    expect_one_step(g, in, n, what, calls, merged);
                    tj_graph_free(g);
                }
    }
    tj_k_isa_force(NULL);
}

Test(fuse_pointwise, constant_operands_read_as_one_value_give_the_unfused_bits_on_every_isa)
{
    static const double values[] = {0.37, NAN, -0.0, INFINITY};
    expect_constants_fused(fn_splat_operands, false, values, sizeof values / sizeof *values, 11, 0);
}

/* tj_k_compare_where_loop with operands marked one value (bits of
 * tj_k_compare_where_args.one) against the loop on those values repeated:
 * the same bits, nothing written past n, each operand marked holding its
 * value at [0] and other values after it. */
static void check_compare_where_one(const tj_k_compare_where_args *k, int64_t n, const char *what)
{
    enum { N = 67 };
    size_t ces = k->compare == TJ_FLOAT32 ? 4 : 8, ses = k->dtype == TJ_BOOL ? 1 : k->dtype == TJ_FLOAT32 ? 4 : 8;
    static const double special[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-310, 1.0};
    _Alignas(64) char full[4][N * 8], one[4][N * 8], want[N * 8 + 8], got[N * 8 + 8];
    unsigned seed = (unsigned)n * 17u + k->one;
    for (int j = 0; j < 4; j++) {
        size_t es = j < 2 ? ces : ses;
        tj_dtype dt = j < 2 ? k->compare : k->dtype;
        for (int64_t i = 0; i < N; i++) {
            seed = seed * 1103515245u + 12345u;
            double u = (double)(seed >> 8 & 0xffff) / 16384.0 - 2, v = k->one >> j & 1 ? special[(j + n) % 8] : u;
            if (i % 7 == j) v = special[(i / 7 + j) % 8];
            if (k->one >> j & 1 && i > 0) memcpy(full[j] + i * (int64_t)es, full[j], es);
            else if (dt == TJ_BOOL) full[j][i] = (char)(v < 0);
            else if (dt == TJ_FLOAT32) ((float *)full[j])[i] = (float)v;
            else ((double *)full[j])[i] = v;
        }
        memset(one[j], 0x7f, sizeof one[j]); /* past the one value: nan, or a large number, or true */
        memcpy(one[j], full[j], k->one >> j & 1 ? es : sizeof one[j]);
    }
    tj_k_compare_where_args all = *k;
    all.one = 0;
    const void *fin[4] = {full[0], full[1], full[2], full[3]}, *oin[4] = {one[0], one[1], one[2], one[3]};
    memset(want, 0x5a, sizeof want);
    memset(got, 0x5a, sizeof got);
    tj_k_compare_where_loop(n, want, fin, &all);
    tj_k_compare_where_loop(n, got, oin, k);
    cr_assert(!memcmp(got, want, (size_t)n * ses), "%s n %lld: bits differ from the values repeated", what,
              (long long)n);
    cr_assert_eq((unsigned char)got[n * (int64_t)ses], 0x5a, "%s n %lld: written past", what, (long long)n);
}

Test(fuse_pointwise, the_compare_where_loop_reads_one_value_operands_as_repeated_on_every_isa)
{
    static const int64_t lens[] = {0, 1, 3, 8, 15, 16, 17, 33, 67};
    static const tj_dtype selects[] = {TJ_FLOAT32, TJ_FLOAT64, TJ_BOOL};
    for (int s = 0; s < TEST_NISA; s++) {
        if (!tj_k_isa_force(test_isas[s])) continue;
        for (int dt = 0; dt < 2; dt++)
            for (int sel = 0; sel < 3; sel++)
                for (int op = TJ_K_EQ; op <= TJ_K_GE; op++)
                    for (unsigned one = 0; one < 16; one++) {
                        tj_k_compare_where_args k = {.op = (tj_k_compare_op)op,
                                                     .compare = dt ? TJ_FLOAT64 : TJ_FLOAT32,
                                                     .dtype = selects[sel], .one = one};
                        char what[96];
                        snprintf(what, sizeof what, "%s compare %s op %d select %s one %#x", test_isas[s],
                                 tj_dtype_name(k.compare), op, tj_dtype_name(k.dtype), one);
                        for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) check_compare_where_one(&k, lens[l], what);
                    }
    }
    tj_k_isa_force(NULL);
}

/* in: x, y [N, D], s 0-dim, t 0-dim bool: constants compared with and
 * selected by merged comparisons and wheres (read as one value:
 * tj_k_compare_where_args.one), gelu backward's x < 0 and clamp's
 * where(x < c, c, x) among them. */
static tj_status fn_compare_constants(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0], *y = in[1], *s = in[2], *t = in[3];
    out[0] = tj_where(tj_lt(x, s), s, x);
    out[1] = tj_where(tj_le(s, x), y, s);
    out[2] = tj_where(tj_gt(x, s), x, y);
    out[3] = tj_where(tj_ge(x, y), s, tj_mul(x, y));
    out[4] = tj_where(tj_eq(x, s), t, tj_ne(y, x));
    out[5] = tj_where(tj_ne(s, y), s, s);
    *n_out = 6;
    return out[5] ? TJ_OK : tj_last_status();
}

Test(fuse_pointwise, constants_of_merged_comparisons_and_wheres_give_the_unfused_bits_on_every_isa)
{
    static const double values[] = {0.0, -0.0, 1.0, NAN, -INFINITY};
    expect_constants_fused(fn_compare_constants, true, values, sizeof values / sizeof *values, 14, 6);
}
