/* Epilogue fusion in replay (tracer/fuse.c): relu, gelu, the residual
 * add and a bias add run inside the product step before them (addmm; mm and
 * one-item bmm: a core-decomposed linear's bias add). Fused plans must give the same
 * bits as the same plan compiled with no_fusion and as the interpreter, on
 * every route of tj_k_gemm (matrix-vector, OpenBLAS, our kernel split by
 * rows or by columns) and at 1, 2 and 3 threads; the kernel-level epilogue
 * must equal the product followed by the loop over C. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/elementwise.h"
#include "kernels/gemm.h"
#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(fusion, .init = test_scope_open, .fini = test_scope_close);

typedef enum { ACT_RELU, ACT_GELU, ACT_GELU_TANH, ADD_RIGHT, ADD_LEFT, BIAS_RIGHT, BIAS_LEFT } epilogue;

/* in: x [.., k], w [n, k], b [n], r (the add's other operand, of y's shape);
 * the bias adds add b again, broadcast over y's rows */
static tj_status fn_linear_epilogue(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_tensor *y = tj_linear(in[0], in[1], in[2]);
    switch (*(const epilogue *)ctx) {
    case ACT_RELU: out[0] = tj_relu(y); break;
    case ACT_GELU: out[0] = tj_gelu(y, "none"); break;
    case ACT_GELU_TANH: out[0] = tj_gelu(y, "tanh"); break;
    case ADD_RIGHT: out[0] = tj_add(in[3], y); break;
    case ADD_LEFT: out[0] = tj_add(y, in[3]); break;
    case BIAS_RIGHT: out[0] = tj_add(in[2], y); break;
    case BIAS_LEFT: out[0] = tj_add(y, in[2]); break;
    }
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_graph *trace(tj_trace_fn fn, void *ctx, tj_tensor *const *in, int n)
{
    tj_graph *g = tj_make_fx(fn, ctx, in, n, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "make_fx: %s", tj_last_error());
    return g;
}

static tj_plan *compile_ok(const tj_graph *g, bool no_fusion)
{
    tj_compile_options o = {.no_fusion = no_fusion};
    tj_plan *p = tj_compile(g, &o);
    cr_assert_not_null(p, "tj_compile: %s", tj_last_error());
    return p;
}

static int n_fused(const tj_plan *p)
{
    tj_plan_statistics s;
    cr_assert_eq(tj_plan_stats(p, &s), TJ_OK);
    return s.n_fused;
}

/* A plan's count of one kind of fusion. */
typedef int (*fusion_count)(const tj_plan *p);

/* Compiles g's fused plan and its no_fusion plan at one thread, runs them
 * and the interpreter on `in` at `threads` threads; expects `count` to be
 * `fused` in the first plan and 0 in the second, and the same bits from
 * all three (test_expect_plans_match_interpreter). */
static void expect_plans_match(const tj_graph *g, tj_tensor *const *in, int n_in, fusion_count count, int fused,
                               int threads, const char *what)
{
    tj_set_num_threads(1);
    tj_plan *pf = compile_ok(g, false), *pu = compile_ok(g, true);
    tj_set_num_threads(threads);
    cr_expect_eq(count(pf), fused, "%s: fused steps", what);
    cr_expect_eq(count(pu), 0, "%s", what);
    test_expect_plans_match_interpreter(g, in, n_in, pf, pu, what);
    tj_plan_free(pf);
    tj_plan_free(pu);
}

/* expect_plans_match for epilogues fused into addmm. */
static void expect_fused_matches(const tj_graph *g, tj_tensor *const *in, int n_in, int fused, int threads,
                                 const char *what)
{
    expect_plans_match(g, in, n_in, n_fused, fused, threads, what);
}

typedef struct shape_case {
    const char *route;
    int ndim;            /* of x: 2, or 3 (a reshape stands between addmm and the epilogue) */
    int64_t lead, m, k, n; /* x [lead, m, k] when ndim is 3 */
} shape_case;

static const shape_case shapes[] = {
    {"matrix-vector (one row)", 2, 1, 1, 40, 96},
    {"OpenBLAS (10 columns)", 2, 1, 8, 16, 10},
    {"our kernel, small: rows at 2+ threads", 2, 1, 64, 200, 256},
    {"our kernel, small, two row tiles", 2, 1, 17, 16, 48},
    {"our kernel, columns, per thread, in groups", 2, 1, 128, 256, 320},
    {"our kernel, rows", 2, 1, 300, 64, 96},
    {"odd sizes", 2, 1, 7, 33, 37},
    {"through a reshape", 3, 2, 45, 24, 70},
    {"one column block, long rows", 2, 1, 130, 48, 33},
};

static void check_shape(const shape_case *c, epilogue e, int threads)
{
    int64_t xs[3] = {c->lead, c->m, c->k}, ys[3] = {c->lead, c->m, c->n};
    int off = c->ndim == 3 ? 0 : 1;
    tj_tensor *in[4] = {
        test_random_f32(c->ndim, xs + off, 11),
        test_random_f32(2, (int64_t[]){c->n, c->k}, 12),
        test_random_f32(1, (int64_t[]){c->n}, 13),
        test_random_f32(c->ndim, ys + off, 14),
    };
    /* values around gelu's and relu's interesting points, and past |x| = 4 */
    float *x = tj_tensor_data(in[0]);
    for (int64_t i = 0; i < tj_tensor_numel(in[0]); i++) x[i] *= 3.0f;
    tj_graph *g = trace(fn_linear_epilogue, &e, in, 4);
    char what[160];
    snprintf(what, sizeof what, "%s, epilogue %d, %d threads", c->route, (int)e, threads);
    expect_fused_matches(g, in, 4, 1, threads, what);
    tj_graph_free(g);
}

Test(fusion, every_epilogue_on_every_gemm_route_equals_separate_kernels_bit_for_bit)
{
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int e = ACT_RELU; e <= BIAS_LEFT; e++)
            for (int t = 1; t <= 3; t++) check_shape(&shapes[s], (epilogue)e, t);
}

Test(fusion, fused_step_replaces_two_kernels_and_is_named_after_both)
{
    epilogue e = ACT_RELU;
    tj_tensor *in[4] = {test_random_f32(2, (int64_t[]){4, 8}, 1), test_random_f32(2, (int64_t[]){6, 8}, 2),
                        test_random_f32(1, (int64_t[]){6}, 3), test_random_f32(2, (int64_t[]){4, 6}, 4)};
    tj_graph *g = trace(fn_linear_epilogue, &e, in, 4);
    tj_set_num_threads(1);
    tj_plan *pf = compile_ok(g, false), *pu = compile_ok(g, true);
    tj_plan_statistics sf, su;
    tj_plan_stats(pf, &sf);
    tj_plan_stats(pu, &su);
    cr_expect_eq(sf.n_kernels, su.n_kernels - 1);
    cr_expect_lt(sf.naive_bytes, su.naive_bytes, "addmm's own result is never stored");
    tj_plan_set_profiling(pf, true);
    cr_assert_eq(tj_plan_run_into(pf, in, 4, NULL), TJ_OK, "%s", tj_last_error());
    char *buf = test_profile_table(pf);
    cr_expect(strstr(buf, "aten::addmm + aten::relu"), "%s", buf);
    cr_expect(!strstr(buf, "\naten::relu"), "%s", buf);
    free(buf);
    tj_plan_free(pf);
    tj_plan_free(pu);
    tj_graph_free(g);
}

/* in: x [.., k], w [n, k], b [n]; out: linear(x, w, b), or with *ctx
 * (x 2-D) mm(x, w^T) + b */
static tj_status fn_bias_product(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    out[0] = *(const bool *)ctx ? tj_add(tj_mm(in[0], tj_t(in[1])), in[2]) : tj_linear(in[0], in[1], in[2]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* The core table's linear (a one-item bmm, then alias(bias) +
 * alias(product) after simplify.c), and mm then a bias add as traced: the
 * add runs inside the product's step on every route, with the add
 * kernel's bits. */
Test(fusion, bias_add_after_mm_or_decomposed_linear_runs_in_the_product_bit_for_bit)
{
    tj_decomp_table *core = tj_core_decompositions();
    cr_assert_not_null(core, "%s", tj_last_error());
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int v = 0; v < 2; v++) {
            const shape_case *c = &shapes[s];
            bool mm = v == 1;
            if (mm && c->ndim != 2) continue;
            int64_t xs[3] = {c->lead, c->m, c->k};
            int off = c->ndim == 3 ? 0 : 1;
            tj_tensor *in[3] = {test_random_f32(c->ndim, xs + off, 41),
                                test_random_f32(2, (int64_t[]){c->n, c->k}, 42),
                                test_random_f32(1, (int64_t[]){c->n}, 43)};
            tj_graph *g = tj_make_fx(fn_bias_product, &mm, in, 3, mm ? NULL : core, TJ_TRACE_REAL);
            cr_assert_not_null(g, "make_fx: %s", tj_last_error());
            for (int t = 1; t <= 3; t++) {
                char what[160];
                snprintf(what, sizeof what, "%s, %s, %d threads", mm ? "mm + bias" : "decomposed linear", c->route, t);
                expect_fused_matches(g, in, 3, 1, t, what);
            }
            tj_set_num_threads(1);
            tj_plan *p = compile_ok(g, false);
            tj_plan_set_profiling(p, true);
            cr_assert_eq(tj_plan_run_into(p, in, 3, NULL), TJ_OK, "%s", tj_last_error());
            char *buf = test_profile_table(p);
            cr_expect(strstr(buf, mm ? "aten::mm + aten::add.Tensor" : "aten::bmm + aten::add.Tensor"), "%s: %s",
                      c->route, buf);
            cr_expect(!strstr(buf, "\naten::add.Tensor"), "%s", buf);
            free(buf);
            tj_plan_free(p);
            tj_graph_free(g);
        }
    tj_decomp_table_free(core);
}

/* ---- what is not fused ---- */

Test(fusion, plans_compiled_for_two_threads_fuse_small_and_large_products)
{
    epilogue e = ACT_RELU;
    for (int big = 0; big < 2; big++) {
        int64_t m = big ? 256 : 64, k = 32, n = 256; /* 65536 and 16384 elements */
        tj_tensor *in[4] = {test_random_f32(2, (int64_t[]){m, k}, 1), test_random_f32(2, (int64_t[]){n, k}, 2),
                            test_random_f32(1, (int64_t[]){n}, 3), test_random_f32(2, (int64_t[]){m, n}, 4)};
        tj_graph *g = trace(fn_linear_epilogue, &e, in, 4);
        tj_set_num_threads(2);
        tj_plan *p = compile_ok(g, false);
        cr_expect_eq(n_fused(p), 1, "%ld x %ld", (long)m, (long)n);
        tj_tensor *ref, *got;
        cr_assert_eq(tj_graph_run(g, in, 4, &ref), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_plan_run(p, in, 4, &got), TJ_OK, "%s", tj_last_error());
        test_expect_same_bits(got, ref, "compiled and run at 2 threads");
        tj_plan_free(p);
        tj_graph_free(g);
    }
}

typedef enum {
    KEEP_RESULT_TOO,  /* addmm's result is also a graph output */
    COLUMN_ADD,       /* the add's other operand is [4, 1], broadcast over columns */
    F64_ROW_ADD,      /* a float64 row [6]: the add's result is float64 */
    ADD_ALPHA_2,      /* self + 2 * other */
    ADD_INPLACE,      /* add_ into addmm's result */
    TWO_READERS,      /* relu and gelu both read addmm's result */
    MM_READ_TOO,      /* a bias add after an mm whose result relu reads too */
} unfused;

/* in: x [4, 8], w [6, 8], b [6], r [4, 6], c [4, 1], b64 [6] float64 */
static tj_status fn_unfused(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_tensor *y = tj_linear(in[0], in[1], in[2]);
    *n_out = 1;
    switch (*(const unfused *)ctx) {
    case KEEP_RESULT_TOO:
        out[0] = tj_relu(y);
        out[1] = y;
        *n_out = 2;
        break;
    case COLUMN_ADD: out[0] = tj_add(y, in[4]); break;
    case F64_ROW_ADD: out[0] = tj_add(y, in[5]); break;
    case ADD_ALPHA_2: out[0] = tj_add_alpha(in[3], y, tj_v_int(2)); break;
    case ADD_INPLACE: out[0] = tj_add_(y, in[3], tj_v_int(1)); break;
    case TWO_READERS: out[0] = tj_add(tj_relu(y), tj_gelu(y, "tanh")); break;
    case MM_READ_TOO: {
        tj_tensor *p = tj_mm(in[0], tj_t(in[1]));
        out[0] = tj_add(p, in[2]);
        out[1] = tj_relu(p);
        *n_out = 2;
        break;
    }
    }
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fusion, results_with_other_readers_broadcasts_alpha_or_in_place_adds_are_not_fused)
{
    tj_tensor *in[6] = {test_random_f32(2, (int64_t[]){4, 8}, 1), test_random_f32(2, (int64_t[]){6, 8}, 2),
                        test_random_f32(1, (int64_t[]){6}, 3),    test_random_f32(2, (int64_t[]){4, 6}, 4),
                        test_random_f32(2, (int64_t[]){4, 1}, 5), tj_to_copy(test_random_f32(1, (int64_t[]){6}, 6), TJ_FLOAT64)};
    for (int c = KEEP_RESULT_TOO; c <= MM_READ_TOO; c++) {
        unfused u = (unfused)c;
        tj_graph *g = trace(fn_unfused, &u, in, 6);
        tj_plan *p = compile_ok(g, false);
        cr_expect_eq(n_fused(p), 0, "case %d", c);
        tj_scope *s = tj_scope_begin();
        tj_tensor *ref[2], *got[2];
        cr_assert_eq(tj_graph_run(g, in, 6, ref), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_plan_run(p, in, 6, got), TJ_OK, "case %d: %s", c, tj_last_error());
        for (int k = 0; k < tj_graph_num_outputs(g); k++) {
            if (tj_tensor_dtype(ref[k]) == TJ_FLOAT32) {
                test_expect_same_bits(got[k], ref[k], "unfused");
                continue;
            }
            bool equal = false;
            cr_assert_eq(tj_allclose(got[k], ref[k], 0, 0, false, &equal), TJ_OK, "%s", tj_last_error());
            cr_expect(equal, "case %d: the float64 result", c);
        }
        tj_scope_end(s);
        tj_plan_free(p);
        tj_graph_free(g);
    }
}

/* in: x [4, 8], w [6, 8], b [6] in float64 */
static tj_status fn_relu_linear(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_relu(tj_linear(in[0], in[1], in[2]));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fusion, float64_products_are_not_fused)
{
    double x[32], w[48], b[6];
    for (int i = 0; i < 48; i++) w[i] = sin(i + 1.0);
    for (int i = 0; i < 32; i++) x[i] = cos(i * 0.7);
    for (int i = 0; i < 6; i++) b[i] = 0.1 * i - 0.3;
    tj_tensor *in[3] = {test_f64(2, (int64_t[]){4, 8}, x), test_f64(2, (int64_t[]){6, 8}, w),
                        test_f64(1, (int64_t[]){6}, b)};
    tj_graph *g = trace(fn_relu_linear, NULL, in, 3);
    tj_set_num_threads(1);
    tj_plan *p = compile_ok(g, false);
    cr_expect_eq(n_fused(p), 0);
    tj_plan_free(p);
    tj_graph_free(g);
}

/* ---- run time: an add operand with other strides than compiled for ---- */

Test(fusion, residual_with_other_strides_at_run_time_is_added_after_the_product)
{
    epilogue e = ADD_LEFT;
    tj_tensor *in[4] = {test_random_f32(2, (int64_t[]){64, 40}, 1), test_random_f32(2, (int64_t[]){96, 40}, 2),
                        test_random_f32(1, (int64_t[]){96}, 3), test_random_f32(2, (int64_t[]){64, 96}, 4)};
    tj_graph *g = trace(fn_linear_epilogue, &e, in, 4);
    tj_set_num_threads(1);
    tj_plan *p = compile_ok(g, false);
    cr_assert_eq(n_fused(p), 1);
    /* the same shape, transposed in memory */
    tj_tensor *rt = test_random_f32(2, (int64_t[]){96, 64}, 9);
    tj_tensor *run_in[4] = {in[0], in[1], in[2], tj_t(rt)};
    cr_assert(!tj_tensor_is_contiguous(run_in[3]));
    tj_tensor *ref, *got;
    cr_assert_eq(tj_graph_run(g, run_in, 4, &ref), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, run_in, 4, &got), TJ_OK, "%s", tj_last_error());
    test_expect_same_bits(got, ref, "transposed residual");
    cr_assert_eq(tj_plan_run(p, in, 4, &got), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_graph_run(g, in, 4, &ref), TJ_OK, "%s", tj_last_error());
    test_expect_same_bits(got, ref, "contiguous residual again");
    tj_plan_free(p);
    tj_graph_free(g);
}

/* ---- the kernel: tj_k_gemm with an epilogue ---- */

/* C (ldc > n, so the epilogue runs row by row) = A @ B + epilogue, against
 * the product followed by the add loop over each row: the add's operand
 * has its own row stride (either side of the sum), or is one row added to
 * every row of C (a bias: inside the micro-kernel on our kernel, after the
 * last block of the sum). Every route (B column-major with a long sum: the
 * long-sum path), sums of one or several blocks, 1-3 threads. */
Test(fusion, gemm_epilogue_on_strided_c_equals_product_then_loop)
{
    static const int64_t mnk[][4] = {{1, 96, 40, 0},   {8, 10, 16, 0},    {64, 256, 200, 0}, {128, 320, 256, 0},
                                     {300, 96, 64, 0}, {7, 37, 33, 0},    {45, 70, 1100, 0}, {32, 48, 4096, 1}};
    for (size_t s = 0; s < sizeof mnk / sizeof *mnk; s++) {
        int64_t m = mnk[s][0], n = mnk[s][1], k = mnk[s][2], ldc = n + 5, ldr = n + 3;
        tj_k_mat bm = mnk[s][3] ? (tj_k_mat){NULL, 1, k} : (tj_k_mat){NULL, n, 1};
        float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
        float *r = malloc(sizeof(float) * (size_t)(m * ldr));
        float *c1 = malloc(sizeof(float) * (size_t)(m * ldc)), *c2 = malloc(sizeof(float) * (size_t)(m * ldc));
        cr_assert(a && b && r && c1 && c2);
        bm.p = b;
        for (int64_t i = 0; i < m * k; i++) a[i] = sinf((float)i * 0.37f);
        for (int64_t i = 0; i < k * n; i++) b[i] = cosf((float)i * 0.11f);
        for (int64_t i = 0; i < m * ldr; i++) r[i] = sinf((float)i * 0.05f) * 4.0f;
        tj_k_axpby_args add = {.alpha = 1, .ialpha = 1, .dtype = TJ_FLOAT32};
        for (int mode = 0; mode < 3; mode++) /* the add's self 0 or 1, or a bias row */
            for (int t = 1; t <= 3; t++) {
                int self = mode == 1;
                bool bias = mode == 2;
                for (int64_t i = 0; i < m * ldc; i++) c1[i] = c2[i] = -7.0f; /* the gaps must stay */
                tj_k_epilogue epi = bias ? (tj_k_epilogue){.bias = r} : (tj_k_epilogue){tj_k_add_loop, &add, 2, self, r, ldr};
                tj_k_gemm(TJ_FLOAT32, 1, m, n, k, 1.0, (tj_k_mat){a, k, 1}, 0, bm, 0, 0.0, c1, 0, ldc, t, &epi);
                tj_k_gemm(TJ_FLOAT32, 1, m, n, k, 1.0, (tj_k_mat){a, k, 1}, 0, bm, 0, 0.0, c2, 0, ldc, t, NULL);
                for (int64_t i = 0; i < m; i++) {
                    const void *ins[2];
                    ins[self] = c2 + i * ldc;
                    ins[1 - self] = r + (bias ? 0 : i * ldr);
                    tj_k_add_loop(n, c2 + i * ldc, ins, &add);
                }
                cr_assert(memcmp(c1, c2, sizeof(float) * (size_t)(m * ldc)) == 0,
                          "%ldx%ldx%ld, mode %d, %d threads", (long)m, (long)n, (long)k, mode, t);
            }
        free(a);
        free(b);
        free(r);
        free(c1);
        free(c2);
    }
}

/* ---- attention written with matmul ---- */

typedef enum { MASK_CAUSAL, MASK_RANDOM, MASK_EMPTY_ROW } mask_kind;

typedef struct attention_case {
    bool heads_last;  /* q, k, v given as [B, L, H, E] and transposed: make_fx clones them */
    bool keep_scores; /* the softmax result is a graph output too: nothing to fuse */
    double scale;
    double divisor;   /* nonzero: scores / divisor (div.Scalar, PyTorch code's / math.sqrt(E)), not * scale */
    double fill;      /* masked_fill's value: only -inf fuses */
} attention_case;

/* in: q, k, v ([B, H, L, E] or [B, L, H, E]), mask bool [L, S] */
static tj_status fn_attention(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    const attention_case *c = ctx;
    tj_tensor *q = in[0], *k = in[1], *v = in[2];
    if (c->heads_last) q = tj_transpose(q, 1, 2), k = tj_transpose(k, 1, 2), v = tj_transpose(v, 1, 2);
    tj_tensor *scores = tj_matmul(q, tj_transpose(k, -2, -1));
    tj_tensor *s = c->divisor ? tj_div_scalar(scores, tj_v_float(c->divisor)) : tj_mul_scalar(scores, tj_v_float(c->scale));
    tj_tensor *p = tj_softmax(tj_masked_fill(s, in[3], tj_v_float(c->fill)), -1);
    out[0] = tj_matmul(p, v);
    out[1] = p;
    *n_out = c->keep_scores ? 2 : 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_tensor *attention_mask(mask_kind kind, int64_t L)
{
    tj_tensor *m = tj_tensor_empty(TJ_BOOL, 2, (int64_t[]){L, L});
    unsigned char *b = tj_tensor_data(m);
    srand(7);
    for (int64_t i = 0; i < L; i++)
        for (int64_t j = 0; j < L; j++)
            b[i * L + j] = kind == MASK_CAUSAL ? j > i : kind == MASK_EMPTY_ROW && i == 3 ? 1 : rand() % 3 == 0;
    return m;
}

/* Fused plan within rounding of the interpreter (nan where it has nan),
 * the plan without attention fusion bit-equal to it. */
static void check_attention(const attention_case *c, mask_kind mk, tj_dtype dt, int threads, int want_fused)
{
    int64_t B = 2, H = 3, L = 37, E = 16;
    int64_t shape[4] = {B, c->heads_last ? L : H, c->heads_last ? H : L, E};
    tj_tensor *in[4];
    for (int i = 0; i < 3; i++) {
        tj_tensor *r = test_random_f32(4, shape, 21 + (unsigned)i);
        in[i] = dt == TJ_FLOAT32 ? r : tj_to_copy(r, dt);
    }
    in[3] = attention_mask(mk, L);
    tj_set_num_threads(threads);
    tj_graph *g = trace(fn_attention, (void *)c, in, 4);
    tj_compile_options exact_opts = {.no_attention_fusion = true};
    tj_plan *fused = compile_ok(g, false), *exact = tj_compile(g, &exact_opts);
    cr_assert_not_null(exact, "%s", tj_last_error());
    tj_plan_statistics s;
    tj_plan_stats(fused, &s);
    char what[128];
    snprintf(what, sizeof what, "heads_last %d, mask %d, %s, %d threads", c->heads_last, (int)mk, tj_dtype_name(dt),
             threads);
    cr_expect_eq(s.n_fused_attention, want_fused, "%s", what);
    tj_tensor *ref[2], *got[2], *ex[2];
    cr_assert_eq(tj_graph_run(g, in, 4, ref), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(fused, in, 4, got), TJ_OK, "%s: %s", what, tj_last_error());
    cr_assert_eq(tj_plan_run(exact, in, 4, ex), TJ_OK, "%s: %s", what, tj_last_error());
    tj_tensor *r64 = tj_to_copy(ref[0], TJ_FLOAT64), *g64 = tj_to_copy(got[0], TJ_FLOAT64),
              *e64 = tj_to_copy(ex[0], TJ_FLOAT64);
    const double *rv = tj_tensor_data(r64), *gv = tj_tensor_data(g64), *ev = tj_tensor_data(e64);
    double tol = dt == TJ_FLOAT32 ? 2e-6 : 1e-13;
    int64_t nans = 0;
    for (int64_t i = 0; i < tj_tensor_numel(r64); i++) {
        nans += isnan(rv[i]);
        cr_assert(isnan(rv[i]) ? isnan(gv[i]) : fabs(gv[i] - rv[i]) <= tol * (1 + fabs(rv[i])),
                  "%s: element %ld: %.9g vs %.9g", what, (long)i, gv[i], rv[i]);
        cr_assert(memcmp(&ev[i], &rv[i], sizeof(double)) == 0 || (isnan(ev[i]) && isnan(rv[i])), "%s: exact", what);
    }
    cr_expect_eq(nans, mk == MASK_EMPTY_ROW ? B * H * E : 0, "%s: a query with every key masked is nan", what);
    tj_plan_free(fused);
    tj_plan_free(exact);
    tj_graph_free(g);
}

Test(fusion, attention_written_with_matmul_runs_fused_within_rounding)
{
    for (int heads_last = 0; heads_last < 2; heads_last++)
        for (int mk = MASK_CAUSAL; mk <= MASK_EMPTY_ROW; mk++)
            for (int t = 1; t <= 2; t++) {
                attention_case c = {.heads_last = heads_last, .scale = 0.25, .fill = -INFINITY};
                check_attention(&c, (mask_kind)mk, TJ_FLOAT32, t, 1);
            }
    attention_case c = {.heads_last = true, .scale = 0.7, .fill = -INFINITY};
    check_attention(&c, MASK_RANDOM, TJ_FLOAT64, 1, 1);
    attention_case zero = {.heads_last = false, .scale = 0.0, .fill = -INFINITY}; /* not the default 1/sqrt(E) */
    check_attention(&zero, MASK_CAUSAL, TJ_FLOAT32, 1, 1);
}

/* The fused kernel multiplies by 1 / divisor: one rounding more, well
 * within the online softmax's own (the tolerance of the test above). */
Test(fusion, attention_scaled_by_a_division_runs_fused_within_rounding)
{
    for (int mk = MASK_CAUSAL; mk <= MASK_EMPTY_ROW; mk++)
        for (int t = 1; t <= 2; t++) {
            attention_case c = {.heads_last = mk == MASK_RANDOM, .divisor = 4, .fill = -INFINITY};
            check_attention(&c, (mask_kind)mk, TJ_FLOAT32, t, 1);
        }
    attention_case odd = {.heads_last = true, .divisor = sqrt(8.0), .fill = -INFINITY}; /* 1 / divisor inexact */
    check_attention(&odd, MASK_CAUSAL, TJ_FLOAT32, 1, 1);
    check_attention(&odd, MASK_RANDOM, TJ_FLOAT64, 1, 1);
    attention_case kept = {.keep_scores = true, .divisor = 4, .fill = -INFINITY};
    check_attention(&kept, MASK_CAUSAL, TJ_FLOAT32, 1, 0);
}

Test(fusion, attention_with_scores_read_elsewhere_or_a_finite_fill_is_not_fused)
{
    attention_case kept = {.heads_last = true, .keep_scores = true, .scale = 0.25, .fill = -INFINITY};
    check_attention(&kept, MASK_CAUSAL, TJ_FLOAT32, 1, 0);
    attention_case finite = {.heads_last = false, .scale = 0.25, .fill = -1e9};
    check_attention(&finite, MASK_RANDOM, TJ_FLOAT32, 1, 0);
}

/* ---- in-place writes between the fused nodes ---- */

/* in: x [4, 8], w [6, 8], b [6], d [4, 8]: x changes after the product,
 * before the relu that would take the product's place */
static tj_status fn_update_after_linear(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_linear(in[0], in[1], in[2]);
    tj_add_(in[0], in[3], tj_v_int(1));
    out[0] = tj_relu(y);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* in: q, k, v [2, 3, 8, 4], mask [8, 8], d [2, 3, 8, 4]: q changes after
 * the scores, before the second product that the fused step would be */
static tj_status fn_update_inside_attention(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *q = tj_transpose(in[0], 1, 2), *s = tj_matmul(q, tj_transpose(tj_transpose(in[1], 1, 2), -2, -1));
    tj_add_(in[0], in[4], tj_v_int(1));
    tj_tensor *p = tj_softmax(tj_masked_fill(tj_mul_scalar(s, tj_v_float(0.5)), in[3], tj_v_float(-INFINITY)), -1);
    out[0] = tj_matmul(p, tj_transpose(in[2], 1, 2));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* Runs g's plan and the interpreter on fresh copies of `in` (the graph
 * updates an input); expects `fused` fusions of either kind and equal bits. */
static void expect_inplace_kept_apart(tj_trace_fn fn, tj_tensor *const *in, int n_in)
{
    tj_tensor *a[5], *b[5], *c[5];
    for (int i = 0; i < n_in; i++) a[i] = tj_clone(in[i]), b[i] = tj_clone(in[i]), c[i] = tj_clone(in[i]);
    tj_graph *g = trace(fn, NULL, a, n_in);
    tj_set_num_threads(1);
    tj_plan *p = compile_ok(g, false);
    tj_plan_statistics s;
    tj_plan_stats(p, &s);
    cr_expect_eq(s.n_fused + s.n_fused_attention, 0);
    tj_tensor *ref, *got;
    cr_assert_eq(tj_graph_run(g, b, n_in, &ref), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, c, n_in, &got), TJ_OK, "%s", tj_last_error());
    test_expect_same_bits(got, ref, "an input updated in place between the nodes");
    tj_plan_free(p);
    tj_graph_free(g);
}

Test(fusion, nodes_with_an_in_place_update_between_them_are_not_fused)
{
    tj_tensor *lin[4] = {test_random_f32(2, (int64_t[]){4, 8}, 1), test_random_f32(2, (int64_t[]){6, 8}, 2),
                         test_random_f32(1, (int64_t[]){6}, 3), test_random_f32(2, (int64_t[]){4, 8}, 4)};
    expect_inplace_kept_apart(fn_update_after_linear, lin, 4);
    int64_t qs[4] = {2, 8, 3, 4};
    tj_tensor *att[5] = {test_random_f32(4, qs, 5), test_random_f32(4, qs, 6), test_random_f32(4, qs, 7),
                         attention_mask(MASK_CAUSAL, 8), test_random_f32(4, qs, 8)};
    expect_inplace_kept_apart(fn_update_inside_attention, att, 5);
}

/* ---- copies read in place by products (tracer/fuse_gather.c) ---- */

typedef struct conv_case {
    const char *what;
    int64_t n, c, h, w, oc, kh, kw;
    int64_t stride, pad, groups;
} conv_case;

static tj_status fn_conv(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const conv_case *c = ctx;
    (void)n;
    int64_t st[2] = {c->stride, c->stride}, pad[2] = {c->pad, c->pad}, dil[2] = {1, 1};
    out[0] = tj_conv2d(in[0], in[1], in[2], st, pad, dil, c->groups);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static int n_gathered(const tj_plan *p)
{
    tj_plan_statistics s;
    cr_assert_eq(tj_plan_stats(p, &s), TJ_OK);
    return s.n_gathered;
}

static const conv_case convs[] = {
    {"cnn's second layer (k 400)", 4, 16, 14, 14, 32, 5, 5, 1, 2, 1},
    {"cnn's first layer (k 25)", 6, 1, 28, 28, 16, 5, 5, 1, 2, 1},
    {"odd sizes", 5, 3, 9, 7, 7, 3, 2, 1, 1, 1},
    {"stride 2 (strided windows)", 3, 3, 11, 11, 5, 3, 3, 2, 0, 1},
    {"two groups (bmm batch 2)", 3, 4, 8, 8, 6, 3, 3, 1, 1, 2},
    {"two output channels (matrix-vector route)", 5, 3, 12, 12, 2, 3, 3, 1, 1, 1},
};

Test(fusion, decomposed_convolution_reads_im2col_columns_in_place_bit_for_bit)
{
    tj_decomp_table *core = tj_core_decompositions();
    cr_assert_not_null(core, "%s", tj_last_error());
    for (size_t i = 0; i < sizeof convs / sizeof *convs; i++) {
        const conv_case *c = &convs[i];
        tj_tensor *in[3] = {
            test_random_f32(4, (int64_t[]){c->n, c->c, c->h, c->w}, 21),
            test_random_f32(4, (int64_t[]){c->oc, c->c / c->groups, c->kh, c->kw}, 22),
            test_random_f32(1, (int64_t[]){c->oc}, 23),
        };
        tj_graph *g = tj_make_fx(fn_conv, (void *)c, in, 3, core, TJ_TRACE_REAL);
        cr_assert_not_null(g, "make_fx: %s", tj_last_error());
        for (int threads = 1; threads <= 3; threads++) {
            char what[160];
            snprintf(what, sizeof what, "%s, %d threads", c->what, threads);
            expect_plans_match(g, in, 3, n_gathered, 1, threads, what);
        }
        tj_graph_free(g);
    }
    tj_decomp_table_free(core);
}

/* in: a [2, 6, 10], x [10, 2, 40]; out: a @ c, c = x.permute(1, 0, 2).contiguous(),
 * plus (-a) @ c when *ctx (a second reader of the copy) */
static tj_status fn_copy_bmm(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_tensor *copy = tj_contiguous(tj_permute(in[1], (int64_t[]){1, 0, 2}, 3));
    tj_tensor *y = tj_bmm(in[0], copy);
    if (*(const bool *)ctx) y = tj_add(y, tj_bmm(tj_neg(in[0]), copy));
    out[0] = y;
    *n_out = 1;
    return y ? TJ_OK : tj_last_status();
}

Test(fusion, a_copy_read_elsewhere_is_made_and_a_sole_one_is_not)
{
    tj_tensor *in[2] = {test_random_f32(3, (int64_t[]){2, 6, 10}, 31), test_random_f32(3, (int64_t[]){10, 2, 40}, 32)};
    for (int both = 0; both < 2; both++) {
        bool two_readers = both;
        tj_graph *g = trace(fn_copy_bmm, &two_readers, in, 2);
        /* 40 columns of 10 rows: one chunk per batch item */
        expect_plans_match(g, in, 2, n_gathered, two_readers ? 0 : 1, 2, two_readers ? "two readers" : "sole reader");
        tj_graph_free(g);
    }
}

/* in: x, w, b as fn_conv's, gy (the convolution's result's gradient); out:
 * d(sum(conv(x, w, b) * gy)) / dw, whose decomposition multiplies gy by the
 * transpose of im2col's columns */
static tj_status fn_conv_weight_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const conv_case *c = ctx;
    (void)n;
    int64_t st[2] = {c->stride, c->stride}, pad[2] = {c->pad, c->pad}, dil[2] = {1, 1};
    tj_tensor *w = tj_tensor_detach(in[1]);
    tj_tensor_set_requires_grad(w, true);
    tj_tensor *y = tj_conv2d(in[0], w, in[2], st, pad, dil, c->groups);
    *n_out = 1;
    return y ? tj_autograd_grad(&y, 1, &in[3], &w, 1, out) : tj_last_status();
}

/* Weight gradients whose sum (N * oh * ow) is long enough for our kernel's
 * long-sum path (4096 steps and more), its blocks of the sum not lined up
 * with the samples' or the rows' boundaries; the shapes of `convs` take
 * the panels or the other routes, which gather all the columns first. */
static const conv_case weight_grads[] = {
    {"long sum, 36 rows of columns, sum 4418", 2, 4, 47, 47, 17, 3, 3, 1, 1, 1},
    {"cnn's second layer at batch 24 (400 rows, sum 4704)", 24, 16, 14, 14, 32, 5, 5, 1, 2, 1},
    {"long sum, two groups", 2, 8, 47, 47, 32, 3, 3, 1, 1, 2},
};

static void check_weight_grad(const conv_case *c)
{
    int64_t oh = (c->h + 2 * c->pad - c->kh) / c->stride + 1, ow = (c->w + 2 * c->pad - c->kw) / c->stride + 1;
    tj_tensor *in[4] = {
        test_random_f32(4, (int64_t[]){c->n, c->c, c->h, c->w}, 41),
        test_random_f32(4, (int64_t[]){c->oc, c->c / c->groups, c->kh, c->kw}, 42),
        test_random_f32(1, (int64_t[]){c->oc}, 43),
        test_random_f32(4, (int64_t[]){c->n, c->oc, oh, ow}, 44),
    };
    tj_decomp_table *core = tj_core_decompositions();
    cr_assert_not_null(core, "%s", tj_last_error());
    tj_graph *g = tj_make_fx(fn_conv_weight_grad, (void *)c, in, 4, core, TJ_TRACE_REAL);
    cr_assert_not_null(g, "make_fx: %s", tj_last_error());
    for (int threads = 1; threads <= 3; threads++) {
        char what[160];
        snprintf(what, sizeof what, "weight gradient, %s, %d threads", c->what, threads);
        expect_plans_match(g, in, 4, n_gathered, 1, threads, what);
    }
    tj_graph_free(g);
    tj_decomp_table_free(core);
}

Test(fusion, decomposed_weight_gradient_reads_transposed_columns_in_place_bit_for_bit)
{
    for (size_t i = 0; i < sizeof weight_grads / sizeof *weight_grads; i++) check_weight_grad(&weight_grads[i]);
    for (size_t i = 0; i < sizeof convs / sizeof *convs; i++) check_weight_grad(&convs[i]);
}

/* in: a [b, k, m] (read transposed: rows of batch1 m apart), x [k, b, n];
 * out: a^T @ x.permute(1, 0, 2).contiguous() */
static tj_status fn_transposed_a_copy_bmm(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *copy = tj_contiguous(tj_permute(in[1], (int64_t[]){1, 0, 2}, 3));
    out[0] = tj_bmm(tj_transpose(in[0], 1, 2), copy);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* Two or three rows of a batch1 whose rows are not unit-stride go to BLAS's
 * matrix-vector product, whose sum for an output depends on where the
 * output falls in the call: the gathered step multiplies each batch item
 * whole, as the copy's product does (in chunks of columns, 351 of 12000
 * outputs differed in the last bit for m 2). */
Test(fusion, few_rows_of_a_transposed_batch1_give_the_bits_of_the_copys_product)
{
    static const int64_t cases[][4] = {{2, 2, 400, 3000}, {3, 3, 33, 8000}}; /* b, m, k, n: 12 and 2 chunks per item */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const int64_t *c = cases[i];
        tj_tensor *in[2] = {test_random_f32(3, (int64_t[]){c[0], c[2], c[1]}, 41),
                            test_random_f32(3, (int64_t[]){c[2], c[0], c[3]}, 42)};
        tj_graph *g = trace(fn_transposed_a_copy_bmm, NULL, in, 2);
        for (int threads = 1; threads <= 3; threads++) {
            char what[160];
            snprintf(what, sizeof what, "b %lld, m %lld, k %lld, n %lld, %d threads", (long long)c[0],
                     (long long)c[1], (long long)c[2], (long long)c[3], threads);
            expect_plans_match(g, in, 2, n_gathered, 1, threads, what);
        }
        tj_graph_free(g);
    }
}
