/* The float32 GEMM kernel's thread splits (kernels/gemm_isa.h, on each
 * instance this CPU runs, AVX-512 and AVX2, whatever TJ_ISA says): by rows of C when m is large against
 * B, by 64-column (AVX2: 16-column) blocks otherwise. Every
 * element is computed the same way whatever the split, so results on 2 and
 * 3 threads must equal the 1-thread result byte for byte; the 1-thread
 * result is checked against a double-precision sum. Operands hold
 * non-integer values, so that a different order of the sums would show.
 * Then tj_k_gemm's products split into calls over ranges of columns, where
 * tj_k_gemm_columns_independent says that keeps the bytes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "kernels/gemm.h"
#include "kernels/parallel.h"
#include "test_util.h"
#include "tjit/tjit.h"

/* The kernel's instances. The tests of the kernel itself run each one
 * this CPU has, whatever TJ_ISA says (so an AVX-512 machine checks the AVX2
 * one too); the tests of the routes to it (tj_k_gemm) follow the ISA in
 * use (kernels/cpu_isa.h). */
typedef void (*gemm_fn)(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                        const float *b, int64_t brs, int64_t bcs, float beta, float *c, int64_t ldc, int nthreads,
                        const tj_k_epilogue *epi);
typedef struct instance {
    const char *name;
    gemm_fn fn;
    bool (*cpu_has)(void);
    int64_t vf; /* floats per vector: C's rows up to this take the regular path, up to 4 vf (AVX-512: 64) or 2 vf
                   (AVX2: 16) with a long sum the long-sum one */
} instance;
enum { NINST = 2 };
static const instance instances[NINST] = {{"avx512", tj_k_gemm_f32_avx512, test_cpu_has_avx512, 16},
                                          {"avx2", tj_k_gemm_f32_avx2, test_cpu_has_avx2, 8}};

/* The instance under test (FOR_EACH_INSTANCE sets it). */
static const instance *inst;

/* Index of the first instance this CPU runs from i on, NINST after the
 * last; skips the test when the CPU runs none. */
static int next_instance(int i)
{
    if (i == 0 && !test_cpu_has_avx2()) cr_skip_test("no AVX2 + FMA: no instance of the kernel runs on this CPU");
    while (i < NINST && !instances[i].cpu_has()) i++;
    inst = i < NINST ? &instances[i] : NULL;
    return i;
}

/* Runs the statement after it once per instance this CPU runs, inst set. */
#define FOR_EACH_INSTANCE for (int inst_i = next_instance(0); inst_i < NINST; inst_i = next_instance(inst_i + 1))

/* Deterministic values in [-1, 1) that are not small integers. */
static void fill(float *p, int64_t n, unsigned seed)
{
    uint32_t x = 2463534242u + seed * 7919u;
    for (int64_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        p[i] = (float)((double)(x >> 8) / 8388608.0 - 1.0);
    }
}

typedef struct product {
    int64_t m, n, k;
    bool b_colmajor; /* B stored as [n, k] (x @ W^T, a Linear layer) */
    float alpha, beta;
} product;

/* C = alpha * A @ B + beta * C0 on `threads` threads, into a fresh buffer. */
static float *run(const product *pr, const float *a, const float *b, const float *c0, int threads)
{
    float *c = malloc(sizeof(float) * (size_t)(pr->m * pr->n));
    cr_assert_not_null(c);
    memcpy(c, c0, sizeof(float) * (size_t)(pr->m * pr->n));
    inst->fn(pr->m, pr->n, pr->k, pr->alpha, a, pr->k, 1, b, pr->b_colmajor ? 1 : pr->n, pr->b_colmajor ? pr->k : 1,
             pr->beta, c, pr->n, threads, NULL);
    return c;
}

/* Runs pr on inst on 1, 2 and 3 threads: equal bytes, and close to a
 * double sum. */
static void check_product_on(const product *pr)
{
    int64_t m = pr->m, n = pr->n, k = pr->k;
    float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
    float *c0 = malloc(sizeof(float) * (size_t)(m * n));
    cr_assert(a && b && c0);
    fill(a, m * k, 1);
    fill(b, k * n, 2);
    fill(c0, m * n, 3);
    float *one = run(pr, a, b, c0, 1);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double ref = pr->beta * (double)c0[i * n + j];
            for (int64_t p = 0; p < k; p++)
                ref += pr->alpha * (double)a[i * k + p] * (double)(pr->b_colmajor ? b[j * k + p] : b[p * n + j]);
            cr_assert(fabs(one[i * n + j] - ref) <= 1e-5 * (double)k, "%s %ldx%ldx%ld (%ld, %ld): %.9g != %.9g",
                      inst->name, (long)m, (long)n, (long)k, (long)i, (long)j, one[i * n + j], ref);
        }
    for (int threads = 2; threads <= 3; threads++) {
        float *c = run(pr, a, b, c0, threads);
        for (int64_t i = 0; i < m * n; i++)
            cr_assert(memcmp(&c[i], &one[i], sizeof(float)) == 0,
                      "%s %ldx%ldx%ld on %d threads, element (%ld, %ld): %.9g, on 1 thread %.9g", inst->name, (long)m,
                      (long)n, (long)k, threads, (long)(i / n), (long)(i % n), c[i], one[i]);
        free(c);
    }
    free(one);
    free(a);
    free(b);
    free(c0);
}

/* check_product_on each instance this CPU runs. */
static void check_product(const product *pr)
{
    FOR_EACH_INSTANCE check_product_on(pr);
}

Test(gemm_split, row_split_equals_one_thread_byte_for_byte)
{
    /* m * (k + n) >= 2 * k * n: rows; gpt's q, k, v product and m a multiple of 6 */
    const product p[] = {{512, 384, 128, true, 1.0f, 0.0f}, {192, 384, 128, true, 1.0f, 0.0f},
                         {256, 130, 300, false, 0.5f, 2.0f}};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) check_product(&p[i]);
}

Test(gemm_split, row_split_with_a_partial_last_row_tile_equals_one_thread)
{
    /* 301 and 97 rows: 50 and 16 tiles of 6 plus one of 1; the sum in three blocks of 128 */
    const product p[] = {{301, 70, 300, true, 1.0f, 1.0f}, {97, 33, 257, false, -1.5f, 0.25f}};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) check_product(&p[i]);
}

Test(gemm_split, column_split_equals_one_thread_byte_for_byte)
{
    /* few rows against a large B: column blocks of 64 (the last one partial) */
    const product p[] = {{20, 200, 300, true, 1.0f, 0.0f}, {64, 256, 784, true, 1.0f, 1.0f},
                         {25, 150, 260, false, 2.0f, -1.0f}};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) check_product(&p[i]);
}

Test(gemm_split, one_column_block_splits_rows_and_equals_one_thread)
{
    /* n <= 64: one column block, fewer than the threads */
    const product p[] = {{13, 64, 300, true, 1.0f, 0.0f}, {40, 40, 129, false, 1.0f, 0.5f}};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) check_product(&p[i]);
}

Test(gemm_split, large_b_prefetched_ahead_equals_one_thread_byte_for_byte)
{
    /* B over 1 MiB: its next block is prefetched while one is swept and
     * C's next tiles are prefetched for writing (neither changes a value);
     * tails in m, n (a last block narrower than 64 columns) and k */
    const product p[] = {{16, 4100, 70, false, 1.0f, 0.0f}, {20, 130, 2100, true, 1.0f, 0.5f},
                         {9, 1100, 300, false, -0.5f, 1.0f}, {700, 600, 450, true, 1.0f, 0.0f}};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) check_product(&p[i]);
}

Test(gemm_split, column_major_b_gives_the_bytes_of_its_row_major_copy)
{
    /* the packing of a column-major B (16 x 16 transposes, tails in k and
     * n) must produce the panel a row-major copy produces */
    FOR_EACH_INSTANCE {
        const int64_t shapes[][3] = {{7, 70, 131}, {30, 200, 17}, {6, 16, 16}, {5, 1, 3}};
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
            float *a = malloc(sizeof(float) * (size_t)(m * k)), *bt = malloc(sizeof(float) * (size_t)(n * k));
            float *b = malloc(sizeof(float) * (size_t)(k * n)), *c1 = malloc(sizeof(float) * (size_t)(m * n));
            float *c2 = malloc(sizeof(float) * (size_t)(m * n));
            cr_assert(a && bt && b && c1 && c2);
            fill(a, m * k, 4);
            fill(bt, n * k, 5);
            for (int64_t p = 0; p < k; p++)
                for (int64_t j = 0; j < n; j++) b[p * n + j] = bt[j * k + p];
            inst->fn(m, n, k, 1.0f, a, k, 1, bt, 1, k, 0.0f, c1, n, 1, NULL);
            inst->fn(m, n, k, 1.0f, a, k, 1, b, n, 1, 0.0f, c2, n, 1, NULL);
            cr_assert(memcmp(c1, c2, sizeof(float) * (size_t)(m * n)) == 0, "%s %ldx%ldx%ld", inst->name, (long)m,
                      (long)n, (long)k);
            free(a);
            free(bt);
            free(b);
            free(c1);
            free(c2);
        }
    }
}

Test(gemm_split, linear_layers_give_the_same_bytes_on_1_and_2_threads)
{
    /* (the same bytes where our GEMM kernel takes the product; on the
     * other routes, the same values to rounding) through the operator: addmm with a bias (x @ W^T + b, the transposed
     * weight read in place), gpt's q, k, v and MLP products (row split)
     * and mlp's first layer at batch 64 (matrix-vector kernels) */
    tj_scope *s = tj_scope_begin();
    int saved = tj_get_num_threads();
    const int64_t shapes[][3] = {{512, 128, 384}, {512, 512, 128}, {64, 784, 256}};
    for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
        int64_t m = shapes[c][0], k = shapes[c][1], n = shapes[c][2];
        tj_tensor *x = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){m, k});
        tj_tensor *w = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){n, k});
        tj_tensor *bias = tj_tensor_empty(TJ_FLOAT32, 1, (int64_t[]){n});
        fill(tj_tensor_data(x), m * k, 6);
        fill(tj_tensor_data(w), n * k, 7);
        fill(tj_tensor_data(bias), n, 8);
        tj_tensor *out[2];
        for (int threads = 1; threads <= 2; threads++) {
            tj_set_num_threads(threads);
            out[threads - 1] = tj_addmm(bias, x, tj_t(w), tj_v_int(1), tj_v_int(1));
            cr_assert_not_null(out[threads - 1], "%s", tj_last_error());
        }
        const float *one = tj_tensor_data(out[0]), *two = tj_tensor_data(out[1]);
        tj_k_mat xm = {NULL, k, 1}, wt = {NULL, 1, k};
        if (tj_k_gemm_on_own_kernel(TJ_FLOAT32, m, n, k, xm, wt)) {
            cr_assert(memcmp(one, two, sizeof(float) * (size_t)(m * n)) == 0, "addmm %ldx%ldx%ld", (long)m, (long)k,
                      (long)n);
        } else { /* OpenBLAS's sgemm: its edge loops depend on the split (see tj_k_gemm_columns_independent) */
            for (int64_t i = 0; i < m * n; i++)
                cr_assert(fabsf(one[i] - two[i]) <= 1e-5f * (1 + fabsf(one[i])), "addmm %ldx%ldx%ld: element %ld %g vs %g",
                          (long)m, (long)k, (long)n, (long)i, one[i], two[i]);
        }
    }
    tj_set_num_threads(saved);
    tj_scope_end(s);
}

/* C = alpha * A @ B + beta * C0 with A row-major (a_t false: [m, k]) or
 * column-major ([k, m] as stored), B column-major ([n, k] as stored), rows
 * [i0, i0 + rows) only, on `threads` threads, into c (leading dimension n). */
static void run_rows(const float *a, bool a_t, const float *bt, int64_t m, int64_t n, int64_t k, float alpha,
                     float beta, float *c, int64_t i0, int64_t rows, int threads)
{
    const float *ai = a_t ? a + i0 : a + i0 * k;
    inst->fn(rows, n, k, alpha, ai, a_t ? 1 : k, a_t ? m : 1, bt, 1, k, beta, c + i0 * n, n, threads, NULL);
}

Test(gemm_split, long_sums_into_a_small_c_give_the_bytes_of_the_regular_path)
{
    /* 17-64 rows (AVX2: 9-16) by a sum of 4096 steps or more with a
     * column-major B (g @ columns^T) take the long-sum path (C^T = B^T @
     * A^T); each element's sum is that of the regular path, which 16 rows
     * (AVX2: 8) or fewer take: compared row block by row block, on 1-3
     * threads, and against a double sum. Tails: a last chunk and block of
     * the sum shorter than the others, a partial last vector of C^T's rows
     * (m 20, 40; AVX2: 12), a last row tile of C^T of 4 rows (n 70); A row-
     * and column-major, beta 0 and not. */
    const struct {
        int64_t m, n, k;
        bool a_t;
        float alpha, beta;
    } cases[] = {{32, 400, 4096, false, 1.0f, 0.0f},
                 {20, 70, 4100, false, 1.0f, 0.0f},
                 {40, 70, 4500, true, -0.5f, 1.5f},
                 {64, 256, 4200, false, 2.0f, 1.0f},
                 {17, 33, 5000, true, 1.0f, 0.0f},
                 {12, 70, 4100, false, 1.0f, 0.0f},
                 {16, 33, 4500, true, -0.5f, 1.5f}};
    FOR_EACH_INSTANCE {
        for (size_t s = 0; s < sizeof cases / sizeof *cases; s++) {
            int64_t m = cases[s].m, n = cases[s].n, k = cases[s].k;
            float alpha = cases[s].alpha, beta = cases[s].beta;
            bool a_t = cases[s].a_t;
            float *a = malloc(sizeof(float) * (size_t)(m * k)), *bt = malloc(sizeof(float) * (size_t)(n * k));
            float *c0 = malloc(sizeof(float) * (size_t)(m * n)), *reg = malloc(sizeof(float) * (size_t)(m * n));
            float *got = malloc(sizeof(float) * (size_t)(m * n));
            cr_assert(a && bt && c0 && reg && got);
            fill(a, m * k, 9);
            fill(bt, n * k, 10);
            fill(c0, m * n, 11);
            memcpy(reg, c0, sizeof(float) * (size_t)(m * n));
            for (int64_t i0 = 0; i0 < m; i0 += inst->vf) /* the regular path, vf rows at a time */
                run_rows(a, a_t, bt, m, n, k, alpha, beta, reg, i0, m - i0 < inst->vf ? m - i0 : inst->vf, 1);
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    double ref = beta * (double)c0[i * n + j];
                    for (int64_t p = 0; p < k; p++)
                        ref += alpha * (double)(a_t ? a[p * m + i] : a[i * k + p]) * (double)bt[j * k + p];
                    cr_assert(fabs(reg[i * n + j] - ref) <= 1e-5 * (double)k,
                              "%s %ldx%ldx%ld (%ld, %ld): %.9g != %.9g", inst->name, (long)m, (long)n, (long)k,
                              (long)i, (long)j, reg[i * n + j], ref);
                }
            for (int threads = 1; threads <= 3; threads++) {
                memcpy(got, c0, sizeof(float) * (size_t)(m * n));
                run_rows(a, a_t, bt, m, n, k, alpha, beta, got, 0, m, threads);
                for (int64_t i = 0; i < m * n; i++)
                    cr_assert(memcmp(&got[i], &reg[i], sizeof(float)) == 0,
                              "%s %ldx%ldx%ld on %d threads, element (%ld, %ld): %.9g, regular path %.9g",
                              inst->name, (long)m, (long)n, (long)k, threads, (long)(i / n), (long)(i % n), got[i],
                              reg[i]);
            }
            free(a);
            free(bt);
            free(c0);
            free(reg);
            free(got);
        }
    }
}

Test(gemm_split, long_sums_route_x_at_w_transposed_to_the_gemm_kernel)
{
    /* x @ W^T with 16 or more rows and a sum of 4096 steps or more goes to
     * the GEMM kernel (kernels/gemm.c, OWN_LONG_SUM), not the matrix-vector
     * row form that takes shorter sums: tj_k_gemm gives the kernel's bytes,
     * on 1 and 2 threads; x's rows (m 16) or W's (m 40 > n 33) are the
     * vectors. The route of the ISA in use: none to the kernel under
     * TJ_ISA=generic (nor on a CPU without AVX2). */
    if (!tj_k_gemm_f32_supported())
        cr_skip_test("the ISA in use (%s) routes no product to the kernel", tj_k_isa_name());
    const int64_t shapes[][3] = {{16, 200, 4096}, {24, 64, 4100}, {40, 33, 4500}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        float *a = malloc(sizeof(float) * (size_t)(m * k)), *bt = malloc(sizeof(float) * (size_t)(n * k));
        float *want = malloc(sizeof(float) * (size_t)(m * n)), *got = malloc(sizeof(float) * (size_t)(m * n));
        cr_assert(a && bt && want && got);
        fill(a, m * k, 12);
        fill(bt, n * k, 13);
        tj_k_gemm_f32(m, n, k, 1.0f, a, k, 1, bt, 1, k, 0.0f, want, n, 1, NULL);
        for (int threads = 1; threads <= 2; threads++) {
            tj_k_gemm(TJ_FLOAT32, 1, m, n, k, 1.0, (tj_k_mat){a, k, 1}, 0, (tj_k_mat){bt, 1, k}, 0, 0.0, got, 0, n,
                      threads, NULL);
            cr_assert(memcmp(got, want, sizeof(float) * (size_t)(m * n)) == 0, "%ldx%ldx%ld on %d threads", (long)m,
                      (long)n, (long)k, threads);
        }
        free(a);
        free(bt);
        free(want);
        free(got);
    }
}

/* An epilogue for the test below: out = 2 * in + 1. */
static void twice_plus_one(int64_t n, void *out, const void *const *in, const void *ctx)
{
    (void)ctx;
    for (int64_t i = 0; i < n; i++) ((float *)out)[i] = 2.0f * ((const float *)in[0])[i] + 1.0f;
}

Test(gemm_split, long_sum_path_writes_a_wider_c_and_runs_the_epilogue_over_all_of_it)
{
    /* C's leading dimension wider than its rows: the long-sum path (m 24;
     * AVX2: 16) writes (beta 0.5) the regular path's bytes (vf rows at a
     * time) and leaves the rest of each row alone; the epilogue runs once
     * over C after the transposition; on 1 and 2 threads */
    FOR_EACH_INSTANCE {
        int64_t m = inst->vf + 8, n = 50, k = 4200, ldc = 53;
        float *a = malloc(sizeof(float) * (size_t)(m * k)), *bt = malloc(sizeof(float) * (size_t)(n * k));
        float *plain = malloc(sizeof(float) * (size_t)(m * ldc)), *fused = malloc(sizeof(float) * (size_t)(m * ldc));
        float *reg = malloc(sizeof(float) * (size_t)(m * ldc));
        cr_assert(a && bt && plain && fused && reg);
        fill(a, m * k, 14);
        fill(bt, n * k, 15);
        fill(reg, m * ldc, 16);
        for (int64_t i0 = 0; i0 < m; i0 += inst->vf)
            inst->fn(m - i0 < inst->vf ? m - i0 : inst->vf, n, k, 1.0f, a + i0 * k, k, 1, bt, 1, k, 0.5f,
                     reg + i0 * ldc, ldc, 1, NULL);
        tj_k_epilogue epi = {.loop = twice_plus_one, .nin = 1};
        for (int threads = 1; threads <= 2; threads++) {
            fill(plain, m * ldc, 16);
            memcpy(fused, plain, sizeof(float) * (size_t)(m * ldc));
            inst->fn(m, n, k, 1.0f, a, k, 1, bt, 1, k, 0.5f, plain, ldc, threads, NULL);
            cr_assert(memcmp(plain, reg, sizeof(float) * (size_t)(m * ldc)) == 0, "%s, %d threads", inst->name,
                      threads);
            inst->fn(m, n, k, 1.0f, a, k, 1, bt, 1, k, 0.5f, fused, ldc, threads, &epi);
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < ldc; j++) {
                    float want = j < n ? 2.0f * plain[i * ldc + j] + 1.0f : plain[i * ldc + j];
                    cr_assert(memcmp(&fused[i * ldc + j], &want, sizeof(float)) == 0,
                              "%s, %d threads, (%ld, %ld): %.9g, want %.9g", inst->name, threads, (long)i, (long)j,
                              fused[i * ldc + j], want);
                }
        }
        free(a);
        free(bt);
        free(plain);
        free(fused);
        free(reg);
    }
}

/* A product with any strides of A, B's leading dimension and ldc, for
 * sums_over_several_chunks_match_a_double_sum_in_any_layout. */
typedef struct strided {
    int64_t m, n, k;
    int64_t ars, acs, brs, bcs, ldc;
    float alpha, beta;
} strided;

/* Sums longer than a chunk of B (512 steps on AVX-512, gemm_isa.h), on each
 * instance: the C tile runs
 * through each chunk's blocks, then again for the next chunk; partial last
 * chunks and blocks, A row- and column-major with padded leading
 * dimensions, B either way, C wider than n (its padding left alone), on 1,
 * 2 and 3 threads with the same bytes. */
Test(gemm_split, sums_over_several_chunks_match_a_double_sum_in_any_layout)
{
    const strided s[] = {
        {13, 97, 1100, 1103, 1, 97, 1, 101, 1.0f, 0.0f},     /* A row-major, padded */
        {50, 130, 513, 1, 55, 1, 520, 130, 0.5f, 0.75f},     /* A, B column-major */
        {7, 64, 1537, 1540, 1, 80, 1, 64, 1.0f, 1.0f},       /* B row-major, padded */
        {200, 200, 1024, 1024, 1, 200, 1, 203, -1.0f, 0.0f}, /* rows split on 2-3 threads */
    };
    FOR_EACH_INSTANCE {
        for (size_t t = 0; t < sizeof s / sizeof *s; t++) {
            const strided *p = &s[t];
            int64_t asz = p->ars == 1 ? p->acs * p->k : p->ars * p->m;
            int64_t bsz = p->brs == 1 ? p->bcs * p->n : p->brs * p->k;
            float *a = malloc(sizeof(float) * (size_t)asz), *b = malloc(sizeof(float) * (size_t)bsz);
            float *c0 = malloc(sizeof(float) * (size_t)(p->m * p->ldc));
            float *one = malloc(sizeof(float) * (size_t)(p->m * p->ldc));
            float *c = malloc(sizeof(float) * (size_t)(p->m * p->ldc));
            cr_assert(a && b && c0 && one && c);
            fill(a, asz, 4);
            fill(b, bsz, 5);
            fill(c0, p->m * p->ldc, 6);
            for (int threads = 1; threads <= 3; threads++) {
                float *out = threads == 1 ? one : c;
                memcpy(out, c0, sizeof(float) * (size_t)(p->m * p->ldc));
                inst->fn(p->m, p->n, p->k, p->alpha, a, p->ars, p->acs, b, p->brs, p->bcs, p->beta, out, p->ldc,
                         threads, NULL);
                if (threads > 1)
                    cr_assert(memcmp(c, one, sizeof(float) * (size_t)(p->m * p->ldc)) == 0,
                              "%s case %zu on %d threads differs from 1 thread", inst->name, t, threads);
            }
            for (int64_t i = 0; i < p->m; i++)
                for (int64_t j = 0; j < p->ldc; j++) {
                    double ref = c0[i * p->ldc + j];
                    if (j < p->n) {
                        ref *= p->beta;
                        for (int64_t q = 0; q < p->k; q++)
                            ref += p->alpha * (double)a[i * p->ars + q * p->acs] * (double)b[q * p->brs + j * p->bcs];
                    }
                    cr_assert(fabs(one[i * p->ldc + j] - ref) <= 1e-5 * (double)p->k,
                              "%s case %zu (%ld, %ld): %.9g != %.9g", inst->name, t, (long)i, (long)j,
                              one[i * p->ldc + j], ref);
                }
            free(a), free(b), free(c0), free(one), free(c);
        }
    }
}

/* Edge shapes on each instance: m and n around the tile (6 rows; 8,
 * 16 and 64 columns: a vector, the AVX2 tile, the AVX-512 tile), sums of 1
 * to more than one block (128 steps on AVX-512, 384 on AVX2), A
 * row-major, column-major and strided both ways (every other element), B
 * row- or column-major with a padded leading dimension, C padded, beta 0
 * (C holds nan there: never read) and not; against a double sum, the
 * padding of C left alone, and the fused epilogue equal to the epilogue
 * run after the product, byte for byte. */
Test(gemm_split, edge_shapes_and_layouts_match_a_double_sum_and_fuse_the_epilogue)
{
    static const int64_t ms[] = {1, 5, 6, 7, 13}, ns[] = {1, 7, 9, 16, 17, 33, 65}, ks[] = {1, 8, 17, 390};
    tj_k_epilogue epi = {.loop = twice_plus_one, .nin = 1};
    enum { NM = sizeof ms / sizeof *ms, NN = sizeof ns / sizeof *ns, NK = sizeof ks / sizeof *ks };
    FOR_EACH_INSTANCE {
        for (int c = 0; c < NM * NN * NK * 3 * 2; c++) {
            int64_t m = ms[c % NM], n = ns[c / NM % NN], k = ks[c / (NM * NN) % NK];
            int alay = c / (NM * NN * NK) % 3, bcm = c / (NM * NN * NK * 3) % 2;
            float beta = c % 2 ? 0.0f : 0.5f, alpha = c % 3 ? 1.0f : -0.75f;
            /* A: row-major [m, k + 3], column-major [k, m + 2], or every other element of [m, 2k] */
            int64_t ars = alay == 0 ? k + 3 : alay == 1 ? 1 : 4 * k, acs = alay == 0 ? 1 : alay == 1 ? m + 2 : 2;
            int64_t brs = bcm ? 1 : n + 5, bcs = bcm ? k + 1 : 1, ldc = n + 2;
            int64_t asz = alay == 1 ? acs * k : ars * m, bsz = bcm ? bcs * n : brs * k;
            float *a = malloc(sizeof(float) * (size_t)asz), *b = malloc(sizeof(float) * (size_t)bsz);
            float *c0 = malloc(sizeof(float) * (size_t)(m * ldc)), *plain = malloc(sizeof(float) * (size_t)(m * ldc));
            float *fused = malloc(sizeof(float) * (size_t)(m * ldc));
            cr_assert(a && b && c0 && plain && fused);
            fill(a, asz, 17);
            fill(b, bsz, 18);
            fill(c0, m * ldc, 19);
            for (int64_t i = 0; i < m && beta == 0; i++)
                for (int64_t j = 0; j < n; j++) c0[i * ldc + j] = NAN;
            memcpy(plain, c0, sizeof(float) * (size_t)(m * ldc));
            memcpy(fused, c0, sizeof(float) * (size_t)(m * ldc));
            inst->fn(m, n, k, alpha, a, ars, acs, b, brs, bcs, beta, plain, ldc, 1, NULL);
            inst->fn(m, n, k, alpha, a, ars, acs, b, brs, bcs, beta, fused, ldc, 2, &epi);
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < ldc; j++) {
                    float got = plain[i * ldc + j], want = 2.0f * got + 1.0f;
                    double ref = c0[i * ldc + j];
                    if (j < n) {
                        ref = beta == 0 ? 0.0 : beta * ref;
                        for (int64_t q = 0; q < k; q++)
                            ref += alpha * (double)a[i * ars + q * acs] * (double)b[q * brs + j * bcs];
                    } else {
                        want = got;
                    }
                    cr_assert(fabs(got - ref) <= 1e-5 * (double)(k + 1),
                              "%s m %ld n %ld k %ld A %d B %s beta %g (%ld, %ld): %.9g != %.9g", inst->name, (long)m,
                              (long)n, (long)k, alay, bcm ? "col" : "row", beta, (long)i, (long)j, got, ref);
                    cr_assert(memcmp(&fused[i * ldc + j], &want, sizeof(float)) == 0,
                              "%s m %ld n %ld k %ld, fused epilogue (%ld, %ld): %.9g, want %.9g", inst->name, (long)m,
                              (long)n, (long)k, (long)i, (long)j, fused[i * ldc + j], want);
                }
            free(a), free(b), free(c0), free(plain), free(fused);
        }
    }
}

/* ---- products computed in column chunks (tj_k_gemm_columns_independent) ---- */

enum { SPLIT_MIN_COLS = 32 };

/* One product of the sweep: A [m, k] row-major or stored transposed, B
 * [k, n] row- or column-major, C [m, n] row-major. */
typedef struct col_product {
    tj_dtype dt;
    int64_t m, n, k;
    bool a_t, b_colmajor;
    size_t es;
    void *a, *b;
    tj_k_mat am, bm;
} col_product;

/* Columns [j0, j1) of B: a view with B's strides, or (packed) a row-major
 * copy [k, j1 - j0] as the gathered bmm makes (runtime/op_linalg.c). */
static tj_k_mat b_columns(const col_product *p, int64_t j0, int64_t j1, bool packed, void *buf)
{
    if (!packed) return (tj_k_mat){(const char *)p->b + (size_t)(j0 * p->bm.cs) * p->es, p->bm.rs, p->bm.cs};
    for (int64_t q = 0; q < p->k; q++)
        for (int64_t j = j0; j < j1; j++)
            memcpy((char *)buf + (size_t)(q * (j1 - j0) + j - j0) * p->es,
                   (const char *)p->b + (size_t)(q * p->bm.rs + j * p->bm.cs) * p->es, p->es);
    return (tj_k_mat){buf, j1 - j0, 1};
}

/* Chunk boundaries: [bounds[i], bounds[i + 1]) for i < n_chunks. */
typedef struct chunking {
    int64_t bounds[128];
    int n_chunks;
} chunking;

typedef struct chunk_run {
    const col_product *p;
    const chunking *ch;
    bool packed;
    void *c;
    int inner; /* threads per call */
} chunk_run;

static void run_chunks(void *ctx, int t, int64_t i0, int64_t i1)
{
    const chunk_run *r = ctx;
    const col_product *p = r->p;
    (void)t;
    for (int64_t i = i0; i < i1; i++) {
        int64_t j0 = r->ch->bounds[i], j1 = r->ch->bounds[i + 1];
        void *buf = r->packed ? malloc((size_t)(p->k * (j1 - j0)) * p->es) : NULL;
        cr_assert(!r->packed || buf);
        tj_k_gemm(p->dt, 1, p->m, j1 - j0, p->k, 1.0, p->am, 0, b_columns(p, j0, j1, r->packed, buf), 0, 0.0,
                  (char *)r->c + (size_t)j0 * p->es, 0, p->n, r->inner, NULL);
        free(buf);
    }
}

/* Chunks of SPLIT_MIN_COLS columns, or two uneven ones (at least
 * SPLIT_MIN_COLS each): the remainder joins the last chunk. */
static chunking make_chunking(int64_t n, bool narrow)
{
    chunking ch = {{0}, 0};
    int64_t width = narrow || n / 2 - 1 < SPLIT_MIN_COLS ? SPLIT_MIN_COLS : n / 2 - 1;
    if (n / width > 127) width = (n + 126) / 127;
    for (int64_t j = 0; j + width <= n; j += width) ch.bounds[++ch.n_chunks] = j + width;
    ch.bounds[ch.n_chunks] = n; /* the remainder joins the last chunk */
    return ch;
}

/* The product whole and in every chunking, the chunks one after another on
 * 2 threads each, then (when `in_parallel`) shared over 2 threads, one each:
 * the same bytes. */
static void expect_chunks_match_whole(const col_product *p, bool in_parallel, const char *what)
{
    size_t bytes = (size_t)(p->m * p->n) * p->es;
    void *whole = calloc(1, bytes), *c = calloc(1, bytes);
    cr_assert(whole && c);
    tj_k_gemm(p->dt, 1, p->m, p->n, p->k, 1.0, p->am, 0, p->bm, 0, 0.0, whole, 0, p->n, 2, NULL);
    for (int variant = 0; variant < 8; variant++) {
        bool narrow = variant & 1, packed = variant & 2, parallel = variant & 4;
        if ((packed && p->b_colmajor) || (parallel && !in_parallel)) continue;
        chunking ch = make_chunking(p->n, narrow);
        chunk_run r = {p, &ch, packed, c, parallel ? 1 : 2};
        memset(c, 0, bytes);
        tj_k_parallel(parallel ? 2 : 1, ch.n_chunks, run_chunks, &r);
        for (int64_t i = 0; i < p->m * p->n; i++)
            cr_assert(memcmp((char *)c + (size_t)i * p->es, (char *)whole + (size_t)i * p->es, p->es) == 0,
                      "%s, %d chunks%s%s: element (%lld, %lld) differs from the whole product's", what, ch.n_chunks,
                      packed ? " (packed)" : "", parallel ? " (in a parallel loop)" : "", (long long)(i / p->n),
                      (long long)(i % p->n));
    }
    free(whole);
    free(c);
}

static col_product make_col_product(tj_dtype dt, int64_t m, int64_t n, int64_t k, bool a_t, bool b_colmajor)
{
    col_product p = {dt, m, n, k, a_t, b_colmajor, dt == TJ_FLOAT32 ? sizeof(float) : sizeof(double), NULL, NULL,
                     {NULL, 0, 0}, {NULL, 0, 0}};
    p.a = malloc((size_t)(m * k) * p.es);
    p.b = malloc((size_t)(k * n) * p.es);
    cr_assert(p.a && p.b);
    float *tmp = malloc(sizeof(float) * (size_t)(m * k > k * n ? m * k : k * n));
    cr_assert_not_null(tmp);
    for (int w = 0; w < 2; w++) {
        int64_t cnt = w ? k * n : m * k;
        fill(tmp, cnt, 11 + (unsigned)w);
        for (int64_t i = 0; i < cnt; i++) {
            if (dt == TJ_FLOAT32) ((float *)(w ? p.b : p.a))[i] = tmp[i];
            else ((double *)(w ? p.b : p.a))[i] = tmp[i] * (1 + 1e-9 * (double)i); /* not float values */
        }
    }
    free(tmp);
    p.am = (tj_k_mat){p.a, a_t ? 1 : k, a_t ? m : 1};
    p.bm = (tj_k_mat){p.b, b_colmajor ? 1 : n, b_colmajor ? k : 1};
    return p;
}

/* Wherever tj_k_gemm_columns_independent says a product's columns may be
 * computed in chunks of SPLIT_MIN_COLS or more, chunked calls give the
 * whole call's bytes, over a sweep of shapes: few rows (the matrix-vector
 * routes, A's rows unit-stride or not), A transposed, B column-major (chunks
 * then narrower than A is tall take B's columns as vectors, m 300), long
 * sums, float64 (BLAS only). The sweep includes products that BLAS computes
 * differently in chunks (sgemv m 2, k 400, n 3000 with A transposed; dgemm
 * m 4, k 400, n 3000), so a predicate that claimed them would fail here;
 * and the predicate must claim our kernels' products (the gathered bmm's
 * chunks: test_fusion). float64 stands for the BLAS-only route; the
 * float32 routes known to keep the bytes are those of the ISA in use
 * (cpu_isa.h: TJ_ISA=avx2 on an AVX-512 machine takes an AVX2 CPU's). */
Test(gemm_split, column_chunks_give_the_whole_products_bytes_where_the_predicate_says_so)
{
    static const int64_t ms[] = {1, 2, 3, 4, 6, 40}, ks[] = {1, 33, 400}, ns[] = {64, 300, 3000};
    /* long sums (col-major B: the whole product of 20 x 1000 on the regular
     * path, its chunks on the long-sum one); chunks narrower than A is tall */
    static const int64_t extra[][3] = {{20, 300, 4100}, {20, 1000, 4100}, {300, 600, 600}, {2, 3000, 4100}};
    bool avx512 = tj_k_isa_active() == TJ_K_ISA_AVX512;
    int claimed = 0, refused = 0;
    enum { NM = sizeof ms / sizeof *ms, NK = sizeof ks / sizeof *ks, NN = sizeof ns / sizeof *ns };
    const size_t grid = NM * NK * NN, n_extra = sizeof extra / sizeof *extra;
    for (int dti = 0; dti < 2; dti++)
        for (size_t c = 0; c < grid + n_extra; c++)
            for (int lay = 0; lay < 4; lay++) {
                tj_dtype dt = dti ? TJ_FLOAT64 : TJ_FLOAT32;
                bool a_t = lay & 1, b_cm = lay & 2;
                int64_t m, n, k;
                if (c < grid) {
                    m = ms[c % NM], k = ks[c / NM % NK], n = ns[c / (NM * NK)];
                } else {
                    m = extra[c - grid][0], n = extra[c - grid][1], k = extra[c - grid][2];
                }
                col_product p = make_col_product(dt, m, n, k, a_t, b_cm);
                bool ind = tj_k_gemm_columns_independent(dt, m, n, k, p.am, p.bm, SPLIT_MIN_COLS);
                char what[160];
                snprintf(what, sizeof what, "%s m %lld n %lld k %lld%s%s", dt == TJ_FLOAT32 ? "float32" : "float64",
                         (long long)m, (long long)n, (long long)k, a_t ? ", A transposed" : "",
                         b_cm ? ", B column-major" : "");
                /* the routes known to keep each column's bytes */
                if (avx512 && dt == TJ_FLOAT32 && !b_cm && (m > 3 || !a_t || k == 1))
                    cr_expect(ind, "%s: our kernels' product not claimed", what);
                if (dt == TJ_FLOAT64) cr_expect(!ind, "%s: BLAS claimed", what);
                if (ind) {
                    claimed++;
                    expect_chunks_match_whole(&p, true, what);
                } else {
                    refused++;
                }
                free(p.a);
                free(p.b);
            }
    cr_expect_gt(refused, 0);
    if (avx512) cr_expect_gt(claimed, 0);
}

/* Products BLAS computes differently in chunks, so that the sweep above
 * can tell a wrong claim: the chunks must differ from the whole product
 * somewhere (as the predicate's comment says they do). */
Test(gemm_split, blas_products_in_column_chunks_differ_from_the_whole_product)
{
    static const struct {
        tj_dtype dt;
        int64_t m, n, k;
        bool a_t;
    } cases[] = {{TJ_FLOAT32, 2, 3000, 400, true}, {TJ_FLOAT64, 4, 3000, 400, false}};
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        col_product p = make_col_product(cases[t].dt, cases[t].m, cases[t].n, cases[t].k, cases[t].a_t, false);
        cr_expect(!tj_k_gemm_columns_independent(p.dt, p.m, p.n, p.k, p.am, p.bm, SPLIT_MIN_COLS), "case %zu", t);
        size_t bytes = (size_t)(p.m * p.n) * p.es;
        void *whole = calloc(1, bytes), *c = calloc(1, bytes);
        cr_assert(whole && c);
        tj_k_gemm(p.dt, 1, p.m, p.n, p.k, 1.0, p.am, 0, p.bm, 0, 0.0, whole, 0, p.n, 1, NULL);
        chunking ch = make_chunking(p.n, true);
        chunk_run r = {&p, &ch, false, c, 1};
        tj_k_parallel(1, ch.n_chunks, run_chunks, &r);
        cr_expect(memcmp(c, whole, bytes) != 0, "case %zu: chunks gave the whole product's bytes", t);
        free(whole), free(c), free(p.a), free(p.b);
    }
}
