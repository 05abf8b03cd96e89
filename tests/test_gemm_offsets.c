/* B read through offset tables (tj_k_gemm_f32_offsets, kernels/gemm_isa.h:
 * pack_offsets and the long-sum path's micro_off) must give the bytes our
 * kernel gives for the materialised copy of B, row- or column-major, on
 * every instance this CPU runs and any number of threads; and the gathered
 * bmm steps (runtime/op_linalg.c) the bytes of aten::bmm on the copy, on
 * every instruction set. Shapes have tails in every dim: m below the
 * micro-kernel's 6 rows, n off the 64 (AVX2: 16) columns of a block, k off
 * the 128 (AVX2: 384) steps of a block and the 512 (1536) of a chunk;
 * offsets that run in rows, in columns, in short runs and not at all. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "kernels/gemm.h"
#include "runtime/op_linalg.h"
#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(gemm_offsets, .init = test_scope_open, .fini = test_scope_close_isa);

/* A group of dims of a view: sizes and strides (elements), outer first. */
typedef struct dims {
    int n;
    int64_t size[3], stride[3];
} dims;

static int64_t dims_numel(const dims *d)
{
    int64_t n = 1;
    for (int i = 0; i < d->n; i++) n *= d->size[i];
    return n;
}

/* off[i]: the offset of flat position i over d (last dim fastest). */
static void dims_offsets(const dims *d, int64_t *off)
{
    int64_t total = dims_numel(d);
    for (int64_t i = 0; i < total; i++) {
        int64_t rest = i, o = 0;
        for (int j = d->n - 1; j >= 0; j--) {
            o += rest % d->size[j] * d->stride[j];
            rest /= d->size[j];
        }
        off[i] = o;
    }
}

static int64_t dims_extent(const dims *d)
{
    int64_t e = 0;
    for (int i = 0; i < d->n; i++) e += (d->size[i] - 1) * d->stride[i];
    return e;
}

/* Values in [-1, 1) that are not small integers: another order of the sums shows. */
static void fill(float *p, int64_t n, unsigned seed)
{
    uint32_t x = 2463534242u + seed * 7919u;
    for (int64_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        p[i] = (float)((double)x / 2147483648.0 - 1.0);
    }
}

typedef void (*offsets_fn)(int64_t, int64_t, int64_t, float, const float *, int64_t, int64_t, const tj_k_offset_mat *,
                           float, float *, int64_t, int);
typedef void (*gemm_fn)(int64_t, int64_t, int64_t, float, const float *, int64_t, int64_t, const float *, int64_t,
                        int64_t, float, float *, int64_t, int, const tj_k_epilogue *);

typedef struct kcase {
    const char *what;
    int64_t m;
    dims k, n; /* B's rows over k's dims, its columns over n's */
} kcase;

static const kcase kcases[] = {
    {"im2col columns: runs of 7 along rows", 5, {3, {3, 2, 3}, {70, 10, 1}}, {3, {2, 5, 7}, {300, 10, 1}}},
    {"long runs along rows, k 133, n 135", 7, {2, {7, 19}, {40, 1}}, {2, {3, 45}, {1000, 1}}},
    {"transposed columns, runs of 14 down columns, long sum", 20, {3, {3, 10, 146}, {2000, 200, 1}},
     {3, {4, 3, 4}, {900, 30, 1}}},
    {"transposed columns, 12 rows, long sum", 12, {2, {31, 140}, {150, 1}}, {2, {5, 8}, {31, 3}}},
    {"transposed columns, short sum", 33, {2, {9, 14}, {18, 1}}, {3, {2, 5, 7}, {500, 40, 2}}},
    {"transposed columns, 70 rows (groups of rows on the long-sum path), long sum", 70, {2, {30, 140}, {150, 1}},
     {2, {5, 8}, {31, 3}}},
    {"transposed columns, 17 rows, long sum", 17, {2, {30, 140}, {150, 1}}, {2, {5, 8}, {31, 3}}},
    {"no runs", 3, {1, {9}, {3}}, {1, {37}, {2}}},
    {"one element", 1, {1, {1}, {1}}, {1, {1}, {1}}},
    {"two 14-long runs per row of 1000 columns, k 515", 6, {2, {5, 103}, {2000, 17}}, {3, {5, 10, 20}, {400, 22, 1}}},
    {"rows 280 KB apart (the view reaches past L2: the next block's rows prefetched), n 135", 5, {1, {8}, {70000}},
     {2, {3, 45}, {1000, 1}}},
};

/* The instance's product through offsets against its product on the copy,
 * alpha * A @ B + beta * C, row-major and column-major, on 1 and 2 threads
 * (beta 0: C is not read, a nan there must not show). */
static void check_kernel(const char *isa, offsets_fn off_fn, gemm_fn gemm, const kcase *c, float alpha, float beta)
{
    int64_t m = c->m, k = dims_numel(&c->k), n = dims_numel(&c->n);
    int64_t size = dims_extent(&c->k) + dims_extent(&c->n) + 1;
    float *x = malloc(sizeof(float) * (size_t)size), *a = malloc(sizeof(float) * (size_t)(m * k));
    float *rowb = malloc(sizeof(float) * (size_t)(k * n)), *colb = malloc(sizeof(float) * (size_t)(k * n));
    float *c0 = malloc(sizeof(float) * (size_t)(m * n));
    float *want = malloc(sizeof(float) * (size_t)(m * n)), *got = malloc(sizeof(float) * (size_t)(m * n));
    int64_t *ro = malloc(sizeof(int64_t) * (size_t)k), *co = malloc(sizeof(int64_t) * (size_t)n);
    fill(x, size, 1);
    fill(a, m * k, 2);
    if (beta != 0.0f) fill(c0, m * n, 3);
    else
        for (int64_t i = 0; i < m * n; i++) c0[i] = NAN;
    dims_offsets(&c->k, ro);
    dims_offsets(&c->n, co);
    for (int64_t p = 0; p < k; p++)
        for (int64_t j = 0; j < n; j++) rowb[p * n + j] = colb[j * k + p] = x[ro[p] + co[j]];
    tj_k_offset_mat ob = {x, ro, co};
    for (int threads = 1; threads <= 2; threads++)
        for (int layout = 0; layout < 2; layout++) {
            memcpy(want, c0, sizeof(float) * (size_t)(m * n));
            memcpy(got, c0, sizeof(float) * (size_t)(m * n));
            if (layout == 0) gemm(m, n, k, alpha, a, k, 1, rowb, n, 1, beta, want, n, threads, NULL);
            else gemm(m, n, k, alpha, a, k, 1, colb, 1, k, beta, want, n, threads, NULL);
            off_fn(m, n, k, alpha, a, k, 1, &ob, beta, got, n, threads);
            cr_expect(memcmp(got, want, sizeof(float) * (size_t)(m * n)) == 0,
                      "%s, %s (m %lld, k %lld, n %lld, alpha %g, beta %g), %d threads: not the bytes of the %s "
                      "copy's product",
                      isa, c->what, (long long)m, (long long)k, (long long)n, alpha, beta, threads,
                      layout ? "column-major" : "row-major");
            cr_expect(!isnan(got[0]), "%s, %s: C[0] is nan", isa, c->what);
        }
    free(x), free(a), free(rowb), free(colb), free(c0), free(want), free(got), free(ro), free(co);
}

/* Every case on every instance this CPU runs, with alpha and beta. */
static void check_all(float alpha, float beta)
{
    if (!test_cpu_has_avx2()) cr_skip_test("no AVX2 + FMA: no instance of the kernel runs on this CPU");
    for (size_t i = 0; i < sizeof kcases / sizeof *kcases; i++) {
        if (test_cpu_has_avx512())
            check_kernel("avx512", tj_k_gemm_f32_offsets_avx512, tj_k_gemm_f32_avx512, &kcases[i], alpha, beta);
        check_kernel("avx2", tj_k_gemm_f32_offsets_avx2, tj_k_gemm_f32_avx2, &kcases[i], alpha, beta);
    }
}

Test(gemm_offsets, packing_from_offset_tables_gives_the_bytes_of_the_copys_product) { check_all(1.0f, 0.0f); }

/* alpha and beta other than 1 and 0 scale as on the copy, on every path
 * (rows, long sum, groups of rows, transposed packing). */
Test(gemm_offsets, alpha_and_beta_scale_as_on_the_copy) { check_all(0.75f, -1.5f); }

/* ---- the gathered bmm steps against aten::bmm on the copy ---- */

typedef struct vcase {
    const char *what;
    int64_t b, m;
    dims batch, first, second; /* the view's dims: batch, then k (n when transposed), then n (k) */
    bool shared_a;             /* batch1 one matrix broadcast over the batch (stride 0) */
} vcase;

static const vcase vcases[] = {
    {"im2col of 2 x 3 x 9 x 8, 3 x 2 windows", 1, 5, {1, {1}, {0}}, {3, {3, 3, 2}, {72, 8, 1}},
     {3, {2, 7, 7}, {216, 8, 1}}},
    {"batch 2, 7 rows", 2, 7, {1, {2}, {500}}, {2, {5, 27}, {90, 1}}, {2, {3, 37}, {1, 40}}},
    {"cnn's second layer at batch 4", 1, 32, {1, {1}, {0}}, {3, {16, 5, 5}, {324, 18, 1}},
     {3, {4, 14, 14}, {5184, 18, 1}}},
    {"a long sum (transposed: 4 x 47 x 47 positions)", 1, 17, {1, {1}, {0}}, {3, {4, 3, 3}, {2401, 49, 1}},
     {3, {2, 47, 47}, {9604, 49, 1}}},
    /* transposed: 25 columns, on the row form (tj_k_gemm_on_row_form), in
     * 3 passes of 912 that end inside rows of 31 and planes of 29 x 31;
     * B^T's rows overlap and hold holes (a 5 x 5 window in rows of 7) */
    {"cnn's first layer's weight gradient, batch 2, 5 rows", 2, 5, {1, {2}, {3100}}, {2, {5, 5}, {7, 1}},
     {3, {3, 29, 31}, {1000, 33, 1}}},
    /* per image, the weight broadcast: the items' columns side by side,
     * 2 ranges of 1078 columns, the cut inside the sixth image */
    {"cnn's second layer per image at batch 11", 11, 32, {1, {11}, {5184}}, {3, {16, 5, 5}, {324, 18, 1}},
     {2, {14, 14}, {18, 1}}, true},
    /* Windows of frames (tj_k_window_product, kernels/conv_implicit.h) on
     * each of its tilings: the wide grid row by row, its last image's
     * tiles reaching past the view's storage (they run from a copy) */
    {"cnn's first layer per image at batch 3", 3, 16, {1, {3}, {1024}}, {2, {5, 5}, {32, 1}},
     {2, {28, 28}, {32, 1}}, true},
    /* the whole wide grid (rows of 16 in a pitch of 18), a sum of 4 blocks
     * on AVX-512, one A per image */
    {"windows, wide grid, 12 rows, k 400, batch 2", 2, 12, {1, {2}, {5184}}, {3, {16, 5, 5}, {324, 18, 1}},
     {2, {14, 14}, {18, 1}}},
    /* by positions, with tails of positions (69 = 8 x 8 + 5) and of channels (30) */
    {"windows by positions, 30 rows, batch 2", 2, 30, {1, {2}, {700}}, {3, {4, 3, 3}, {175, 25, 1}},
     {2, {3, 23}, {25, 1}}, true},
};

/* Batch2 of the gathered step: the view of x that vc describes (its two
 * groups [k, n], or [n, k] when transposed). */
static tj_tensor *view_of(tj_tensor *x, const vcase *vc)
{
    int64_t shape[9], strides[9];
    int nd = 0;
    const dims *g[3] = {&vc->batch, &vc->first, &vc->second};
    for (int i = 0; i < 3; i++)
        for (int d = 0; d < g[i]->n; d++) shape[nd] = g[i]->size[d], strides[nd++] = g[i]->stride[d];
    return tj_as_strided(x, shape, strides, nd, false, 0);
}

static void check_step(const vcase *vc, bool transposed, const char *isa, int threads)
{
    int64_t first = dims_numel(&vc->first), second = dims_numel(&vc->second);
    int64_t k = transposed ? second : first;
    int64_t size = dims_extent(&vc->batch) + dims_extent(&vc->first) + dims_extent(&vc->second) + 1;
    tj_tensor *x = test_random_f32(1, (int64_t[]){size}, 61);
    int64_t ashape[3] = {vc->b, vc->m, k}, one[3] = {1, vc->m, k};
    tj_tensor *a = vc->shared_a ? tj_expand(test_random_f32(3, one, 62), ashape, 3) : test_random_f32(3, ashape, 62);
    tj_tensor *view = view_of(x, vc);
    cr_assert_not_null(view, "%s", tj_last_error());
    tj_tensor *copy = tj_reshape(tj_contiguous(view), (int64_t[]){vc->b, first, second}, 3);
    tj_tensor *want = tj_bmm(a, transposed ? tj_transpose(copy, 1, 2) : copy);
    cr_assert_not_null(want, "%s", tj_last_error());
    tj_tensor *got = tj_clone(want);
    float *g = tj_tensor_data(got);
    for (int64_t i = 0; i < tj_tensor_numel(got); i++) g[i] = NAN;
    tj_value args[4] = {tj_v_tensor(a), tj_v_tensor(view), tj_v_int(vc->batch.n), tj_v_int(vc->batch.n + vc->first.n)};
    tj_tensor *outs[1] = {got};
    cr_assert_eq((transposed ? tj_kernel_bmm_gathered_t : tj_kernel_bmm_gathered)(args, outs), TJ_OK, "%s",
                 tj_last_error());
    cr_expect(memcmp(g, tj_tensor_data(want), sizeof(float) * (size_t)tj_tensor_numel(want)) == 0,
              "%s%s, %s, %d threads: not the bytes of aten::bmm on the copy", vc->what,
              transposed ? " (transposed)" : "", isa, threads);
}

/* The case above that must take the row form does, on each instruction
 * set with our matrix-vector kernels (else the test would not cover it). */
Test(gemm_offsets, a_few_columns_transposed_take_the_row_form)
{
    int ran = 0;
    for (int i = 0; i < TEST_NISA; i++) {
        if (!tj_k_isa_force(test_isas[i]) || tj_k_isa_active() == TJ_K_ISA_GENERIC) continue;
        tj_k_mat a = {NULL, 2697, 1}, b = {NULL, 1, 2697};
        cr_expect(tj_k_gemm_on_row_form(TJ_FLOAT32, 5, 25, 2697, a, b), "%s: 5 x 2697 by 2697 x 25 (column-major) "
                  "is not on the row form", test_isas[i]);
        cr_expect(!tj_k_gemm_on_row_form(TJ_FLOAT32, 5, 25, 2697, a, (tj_k_mat){NULL, 25, 1}),
                  "%s: a row-major B took the row form", test_isas[i]);
        ran++;
    }
    if (!ran) cr_skip_test("no instruction set with our matrix-vector kernels on this CPU");
}

Test(gemm_offsets, gathered_steps_give_the_bytes_of_bmm_on_the_copy)
{
    for (int i = 0; i < TEST_NISA; i++) {
        if (!tj_k_isa_force(test_isas[i])) continue;
        for (int threads = 1; threads <= 2; threads++) {
            tj_set_num_threads(threads);
            for (size_t c = 0; c < sizeof vcases / sizeof *vcases; c++)
                for (int t = 0; t < 2; t++) check_step(&vcases[c], t, test_isas[i], threads);
        }
    }
}
