/* Convolution (forward, transposed, backward) and pooling (max with
 * indices, its backward, average): values against PyTorch 1.13, geometry
 * edge cases (ceil_mode windows, padding, dilation, groups, empty batch,
 * strided inputs), thread-count independence and error paths.
 *
 * Reference values were printed by PyTorch 1.13 (torch.ops.aten.<op> on the
 * same inputs, float32); inputs are small integers so most references are
 * exact. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/conv.h"
#include "kernels/conv_gemm.h"
#include "kernels/cpu_isa.h"
#include "kernels/parallel.h"
#include "runtime/internal.h"
#include "test_util.h"

TestSuite(conv, .init = test_scope_open, .fini = test_scope_close);
TestSuite(pool, .init = test_scope_open, .fini = test_scope_close);

/* A float32 tensor of `shape` holding f(i) = (i * mul) % mod - off. */
static tj_tensor *pattern(int ndim, const int64_t *shape, int64_t mul, int64_t mod, double off)
{
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT32, ndim, shape);
    cr_assert_not_null(t);
    float *p = tj_tensor_data(t);
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) p[i] = (float)((double)(i * mul % mod) - off);
    return t;
}

static void expect_shape(const tj_tensor *t, int ndim, const int64_t *shape)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_ndim(t), ndim, "rank %d, want %d", tj_tensor_ndim(t), ndim);
    for (int d = 0; d < ndim; d++)
        cr_assert_eq(tj_tensor_shape(t)[d], shape[d], "dim %d: %lld, want %lld", d, (long long)tj_tensor_shape(t)[d],
                     (long long)shape[d]);
}

/* Values within rtol (relative) of want; nan matches nan. */
static void expect_values(const tj_tensor *t, const double *want, int64_t n, double rtol)
{
    test_expect_close(t, want, n, rtol, 1e-6);
}

static void expect_same(const tj_tensor *a, const tj_tensor *b)
{
    cr_assert_not_null(a, "%s", tj_last_error());
    cr_assert_not_null(b, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_numel(a), tj_tensor_numel(b));
    for (int64_t i = 0; i < tj_tensor_numel(a); i++)
        cr_assert_eq(tj_tensor_item_at(a, i), tj_tensor_item_at(b, i), "[%lld]: %.9g vs %.9g", (long long)i,
                     tj_tensor_item_at(a, i), tj_tensor_item_at(b, i));
}

static const int64_t ONE[2] = {1, 1}, ZERO[2] = {0, 0};

/* ---- convolution ---- */

/* x = arange(100) % 7 - 3 as [1,4,5,5]; w = arange(32) % 5 - 2 as [4,2,2,2]. */
static tj_tensor *grouped_x(void) { return pattern(4, (int64_t[]){1, 4, 5, 5}, 1, 7, 3); }
static tj_tensor *grouped_w(void) { return pattern(4, (int64_t[]){4, 2, 2, 2}, 1, 5, 2); }

Test(conv, groups_stride_padding_dilation_match_pytorch)
{
    tj_tensor *b = test_f32(1, (int64_t[]){4}, (float[]){1, -1, 0.5f, 2});
    tj_tensor *y = tj_convolution(grouped_x(), grouped_w(), b, (int64_t[]){2, 1}, (int64_t[]){1, 0},
                                  (int64_t[]){1, 2}, false, ZERO, 2);
    expect_shape(y, 4, (int64_t[]){1, 4, 3, 3});
    static const double want[] = {-1, -1, -1, 1,   -2,   2,   13,   10,  -7,  2,    13,  10,
                                  -10, -9, -8, -14, 1,    16,  -4.5, -0.5, 3.5, 2.5,  -4.5, 2.5,
                                  -4.5, 2.5, 2.5, 3,  -1,   9,   19,   4,   -11, -5,   -6,  -7};
    expect_values(y, want, 36, 0);
}

Test(conv, transposed_with_output_padding_matches_pytorch)
{
    /* x = arange(18) % 5 - 2 [1,2,3,3]; w = arange(36) % 3 - 1 [2,3,3,2];
     * stride 2, padding [1,0], output_padding 1 -> [1,3,6,7] */
    tj_tensor *x = pattern(4, (int64_t[]){1, 2, 3, 3}, 1, 5, 2), *w = pattern(4, (int64_t[]){2, 3, 3, 2}, 1, 3, 1);
    tj_tensor *b = test_f32(1, (int64_t[]){3}, (float[]){0.5f, -1, 1});
    tj_tensor *y = tj_convolution(x, w, b, (int64_t[]){2, 2}, (int64_t[]){1, 0}, ONE, true, ONE, 1);
    expect_shape(y, 4, (int64_t[]){1, 3, 6, 7});
    static const double want[] = {
        0.5, 0.5, -2.5, 3.5, -0.5, 1.5, 0.5, -0.5, 0.5, -2.5, -2.5, 0.5, -0.5, 0.5, 1.5, -0.5, 3.5, -2.5, 0.5, 0.5, 0.5,
        3.5, 1.5, 1.5, 3.5, -0.5, 0.5, 0.5, -2.5, 3.5, -0.5, 1.5, 1.5, -0.5, 0.5, 0.5, -2.5, 0.5, -0.5, 0.5, 1.5, 0.5,
        -1, -1, -4, 2, -2, 0, -1, -2, -1, -4, -4, -1, -2, -1, 0, -2, 2, -4, -1, -1, -1,
        2, 0, 0, 2, -2, -1, -1, -4, 2, -2, 0, 0, -2, -1, -1, -4, -1, -2, -1, 0, -1,
        1, 1, -2, 4, 0, 2, 1, 0, 1, -2, -2, 1, 0, 1, 2, 0, 4, -2, 1, 1, 1,
        4, 2, 2, 4, 0, 1, 1, -2, 4, 0, 2, 2, 0, 1, 1, -2, 1, 0, 1, 2, 1};
    expect_values(y, want, 126, 0);
}

Test(conv, backward_with_groups_matches_pytorch)
{
    tj_tensor *x = grouped_x(), *w = grouped_w();
    /* grad_output = arange(36) % 3 - 1 in the forward's output shape [1,4,3,3] */
    tj_tensor *gy = pattern(4, (int64_t[]){1, 4, 3, 3}, 1, 3, 1);
    tj_tensor *gi = NULL, *gw = NULL, *gb = NULL;
    cr_assert_eq(tj_convolution_backward(gy, x, w, (int64_t[]){4}, 1, (int64_t[]){2, 1}, (int64_t[]){1, 0},
                                         (int64_t[]){1, 2}, false, ZERO, 2, (bool[]){true, true, true}, &gi, &gw, &gb),
                 TJ_OK, "%s", tj_last_error());
    static const double want_gi[] = {
        2,  0, -2, 0, 0, 1,  0, -2, 0, 1,  2,  0, -2, 0, 0,  1,  0, -2, 0, 1,  2,  0, -2, 0, 0,
        -1, 0, 3,  0, -2, -2, 0, 3,  0, -1, -1, 0, 3,  0, -2, -2, 0, 3,  0, -1, -1, 0, 3,  0, -2,
        0,  0, -2, 0, 2,  -1, 0, 3,  0, -2, 0,  0, -2, 0, 2,  -1, 0, 3,  0, -2, 0,  0, -2, 0, 2,
        2,  0, -2, 0, 0,  1,  0, -2, 0, 1,  2,  0, -2, 0, 0,  1,  0, -2, 0, 1,  2,  0, -2, 0, 0};
    static const double want_gw[] = {-3, 4, -1, -1, -3, 4, 6,  -8, -3, 4, -1, -1, -3, 4, 6,  -8,
                                     -3, 4, 6,  -1, -3, -3, -1, -1, -3, 4, 6,  -1, -3, -3, -1, -1};
    expect_shape(gi, 4, (int64_t[]){1, 4, 5, 5});
    expect_values(gi, want_gi, 100, 0);
    expect_shape(gw, 4, (int64_t[]){4, 2, 2, 2});
    expect_values(gw, want_gw, 32, 0);
    expect_values(gb, (double[]){0, 0, 0, 0}, 4, 0);
}

Test(conv, backward_output_mask_false_leaves_outputs_undefined)
{
    tj_tensor *x = grouped_x(), *w = grouped_w(), *gy = pattern(4, (int64_t[]){1, 4, 3, 3}, 1, 3, 1);
    tj_tensor *gi = NULL, *gw = NULL, *gb = NULL;
    cr_assert_eq(tj_convolution_backward(gy, x, w, NULL, 0, (int64_t[]){2, 1}, (int64_t[]){1, 0}, (int64_t[]){1, 2},
                                         false, ZERO, 2, (bool[]){false, true, false}, &gi, &gw, &gb),
                 TJ_OK, "%s", tj_last_error());
    cr_expect_null(gi);
    cr_expect_null(gb);
    expect_shape(gw, 4, (int64_t[]){4, 2, 2, 2});
    cr_expect_eq(tj_tensor_item_at(gw, 1), 4);
}

/* Direct 6-loop convolution in double, for checking the GEMM path. */
static double direct_conv(const float *x, const float *w, int64_t ci, int64_t h, int64_t wd, int64_t k, int64_t s,
                          int64_t p, int64_t n, int64_t o, int64_t oy, int64_t ox)
{
    double acc = 0;
    for (int64_t c = 0; c < ci; c++)
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j < k; j++) {
                int64_t y = oy * s - p + i, xx = ox * s - p + j;
                if (y < 0 || y >= h || xx < 0 || xx >= wd) continue;
                acc += (double)x[((n * ci + c) * h + y) * wd + xx] * w[((o * ci + c) * k + i) * k + j];
            }
    return acc;
}

Test(conv, odd_sizes_match_a_direct_loop_at_any_thread_count)
{
    /* 13 output channels and 9x11 outputs leave partial GEMM tiles on both
     * edges; K = 7*3*3 = 63 is not a multiple of anything */
    const int64_t n = 3, ci = 7, co = 13, h = 9, wd = 11, k = 3;
    tj_tensor *x = pattern(4, (int64_t[]){n, ci, h, wd}, 37, 101, 50);
    tj_tensor *w = pattern(4, (int64_t[]){co, ci, k, k}, 13, 17, 8);
    int64_t pad[2] = {1, 1};
    tj_set_num_threads(1);
    tj_tensor *y1 = tj_convolution(x, w, NULL, ONE, pad, ONE, false, ZERO, 1);
    tj_set_num_threads(2);
    tj_tensor *y2 = tj_convolution(x, w, NULL, ONE, pad, ONE, false, ZERO, 1);
    expect_shape(y1, 4, (int64_t[]){n, co, h, wd});
    expect_same(y1, y2);
    const float *px = tj_tensor_data(x), *pw = tj_tensor_data(w);
    for (int64_t b = 0; b < n; b++)
        for (int64_t o = 0; o < co; o++)
            for (int64_t oy = 0; oy < h; oy++)
                for (int64_t ox = 0; ox < wd; ox++) {
                    double want = direct_conv(px, pw, ci, h, wd, k, 1, 1, b, o, oy, ox);
                    double got = tj_tensor_item_at(y1, ((b * co + o) * h + oy) * wd + ox);
                    cr_assert(fabs(got - want) <= 1e-5 * fabs(want) + 1e-3, "[%lld,%lld,%lld,%lld] = %g, want %g",
                              (long long)b, (long long)o, (long long)oy, (long long)ox, got, want);
                }
}

/* The generic C micro-kernels (CPUs without AVX2) against the ones this
 * CPU picks, on edge tiles (5 x 19 of 8 x 32, 7 x 13 and 6 x 11 of 8 x 16)
 * with beta and bias, and the transposition and packing helpers. */
Test(conv, generic_micro_kernels_agree_with_the_picked_ones)
{
    enum { KC = 37, ROWS = 3, COLS = 5, STRIDE = 9 };
    float ap[KC * 8], bp[KC * 32], img[64 * 64], bias[8];
    int64_t off[KC];
    for (int i = 0; i < KC * 8; i++) ap[i] = (float)(i % 7) - 3;
    for (int i = 0; i < KC * 32; i++) bp[i] = (float)(i % 11) - 5;
    for (int i = 0; i < 64 * 64; i++) img[i] = (float)(i % 13) - 6;
    for (int i = 0; i < KC; i++) off[i] = (i * 37) % 1000;
    for (int i = 0; i < 8; i++) bias[i] = (float)i;
    const float *arows[8];
    for (int r = 0; r < 8; r++) arows[r] = img + r * 50;
    for (int variant = 0; variant < 9; variant++) {
        float c1[8 * 40], c2[8 * 40];
        for (int i = 0; i < 8 * 40; i++) c1[i] = c2[i] = (float)(i % 5);
        switch (variant) {
        case 0:
            tj_k_sgemm_ukernel_generic(KC, ap, bp, c1, 40, 5, 19, 0.5f, bias);
            tj_k_sgemm_pick_ukernel()(KC, ap, bp, c2, 40, 5, 19, 0.5f, bias);
            break;
        case 1:
            tj_k_sgemm_ukernel_offsets_generic(KC, ap, img, off, c1, 40, 5, 19, 0.0f, NULL);
            tj_k_sgemm_pick_ukernel_offsets()(KC, ap, img, off, c2, 40, 5, 19, 0.0f, NULL);
            break;
        case 2:
            tj_k_sgemm_ukernel_rows_generic(ROWS, COLS, STRIDE, arows, bp, c1, 40, 5, 19, 1.0f, NULL);
            tj_k_sgemm_pick_ukernel_rows()(ROWS, COLS, STRIDE, arows, bp, c2, 40, 5, 19, 1.0f, NULL);
            break;
        case 3:
            tj_k_sgemm_ukernel_taps_generic(KC, arows, off, bp, c1, 40, 5, 19, 0.5f, bias);
            tj_k_sgemm_pick_ukernel_taps()(KC, arows, off, bp, c2, 40, 5, 19, 0.5f, bias);
            break;
        case 4:
            tj_k_sgemm_ukernel_taps16_generic(KC, arows, off, bp, c1, 40, 7, 13, 0.5f, bias);
            tj_k_sgemm_pick_ukernel_taps16()(KC, arows, off, bp, c2, 40, 7, 13, 0.5f, bias);
            break;
        case 5:
            tj_k_sgemm_ukernel_rows16_generic(ROWS, COLS, STRIDE, arows, bp, c1, 40, 6, 11, 1.0f, NULL);
            tj_k_sgemm_pick_ukernel_rows16()(ROWS, COLS, STRIDE, arows, bp, c2, 40, 6, 11, 1.0f, NULL);
            break;
        case 6: {
            /* 19 x 37 (rows x cols, leading dimension 41) into 37 x 19
             * (leading dimension 20): partial 16 x 16 blocks */
            float t1[37 * 20] = {0}, t2[37 * 20] = {0};
            tj_k_transpose_bias_generic(img, 19, 37, 41, img + 1000, t1, 20);
            tj_k_pick_transpose_bias()(img, 19, 37, 41, img + 1000, t2, 20);
            for (int i = 0; i < 37 * 20; i++) cr_assert_eq(t1[i], t2[i], "transpose [%d]: %g vs %g", i, t1[i], t2[i]);
            continue;
        }
        case 7: {
            /* 5 rows of 37 floats, strides 41 and 40: the framing copy */
            float t1[5 * 40] = {0}, t2[5 * 40] = {0};
            tj_k_copy_rows_generic(img + 3, 41, t1, 40, 5, 37);
            tj_k_pick_copy_rows()(img + 3, 41, t2, 40, 5, 37);
            cr_assert_eq(memcmp(t1, t2, sizeof t1), 0, "copy_rows");
            continue;
        }
        default:
            /* 37 x 45: full 16 x 16 blocks and both remainders, panels of 32 and of 16 */
            for (int width = 16; width <= 32; width += 16) {
                /* room for ceil(37 / width) panels of width x 45: 3 of 16, or 2 of 32
                 * (2880 floats: sized for 16 only, width 32 overflowed the stack) */
                float p1[2 * 45 * 32] = {0}, p2[2 * 45 * 32] = {0};
                tj_k_sgemm_pack_transposed_generic(img, 37, 45, width, p1);
                tj_k_sgemm_pick_pack_transposed()(img, 37, 45, width, p2);
                for (int i = 0; i < 2 * 45 * 32; i++)
                    cr_assert_eq(p1[i], p2[i], "pack %d [%d]: %g vs %g", width, i, p1[i], p2[i]);
            }
            continue;
        }
        for (int i = 0; i < 8 * 40; i++)
            cr_assert(fabsf(c1[i] - c2[i]) <= 1e-3f, "variant %d [%d]: %g vs %g", variant, i, c1[i], c2[i]);
    }
}

/* n floats in [-8, 8.8) from an LCG (values with many significant bits,
 * so that the order of a sum shows); the caller frees them. */
static float *lcg_floats(int64_t n, uint64_t *seed)
{
    float *v = malloc(sizeof(float) * (size_t)n);
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (float)(*seed >> 40) / 1e6f - 8;
    }
    return v;
}

/* The SIMD micro-kernels of one ISA. */
typedef struct isa_kernels {
    const char *name;
    tj_k_sgemm_ukernel plain;
    tj_k_sgemm_ukernel_offsets offsets;
    tj_k_sgemm_ukernel_rows rows, rows16;
    tj_k_sgemm_ukernel_taps taps, taps16;
} isa_kernels;

enum { UK_PLAIN, UK_OFFSETS, UK_ROWS, UK_ROWS16, UK_TAPS, UK_TAPS16, UK_KINDS };

/* Runs micro-kernel `kind` of `isa` on lcg values (kc steps; the rows
 * kernels 3 rows of kc / 3 columns) into an mr x nr corner of an 8 x 40 C,
 * and checks it against a C model of the arithmetic: element (r, j) is
 * fmaf(a, b, acc) over the steps in order (the 16-column taps kernel: even
 * and odd steps in two sums, then added), + bias[r], then fmaf(beta, c, .)
 * — bit for bit, and the rest of C untouched (beta 0: C full of nans). */
static void check_micro_kernel(const isa_kernels *isa, int kind, int64_t kc, int mr, int nr, float beta, bool with_bias)
{
    enum { LDC = 40, AROW = 600 };
    int width = kind == UK_ROWS16 || kind == UK_TAPS16 ? 16 : 32;
    bool split = kind == UK_TAPS16, packed_a = kind == UK_PLAIN || kind == UK_OFFSETS;
    int64_t cols = kc / 3, stride = cols + 4, off[64];
    uint64_t seed = (uint64_t)(kind * 1000 + kc * 100 + mr * 10 + nr);
    float *amem = lcg_floats(8 * AROW, &seed), *bp = lcg_floats(kc * 32, &seed), *bias = lcg_floats(8, &seed);
    float *img = lcg_floats(64 * 40, &seed), *cinit = lcg_floats(8 * LDC, &seed);
    float c[8 * LDC];
    const float *arows[8];
    for (int r = 0; r < 8; r++) arows[r] = amem + r * AROW;
    for (int64_t p = 0; p < kc; p++) off[p] = kind == UK_OFFSETS ? p * 37 % (64 * 40 - 32) : p * 13 % (AROW - 32);
    if (beta == 0.0f)
        for (int i = 0; i < 8 * LDC; i++) cinit[i] = NAN;
    float acc[8][32] = {{0}}, acc2[8][32] = {{0}};
    for (int64_t p = 0; p < kc; p++)
        for (int r = 0; r < 8; r++) {
            float a = packed_a                                    ? amem[p * 8 + r]
                      : kind == UK_ROWS || kind == UK_ROWS16       ? arows[r][p / cols * stride + p % cols]
                                                                   : arows[r][off[p]];
            for (int j = 0; j < width; j++) {
                float b = kind == UK_OFFSETS ? img[off[p] + j] : bp[p * width + j];
                if (split && p % 2) acc2[r][j] = fmaf(a, b, acc2[r][j]);
                else acc[r][j] = fmaf(a, b, acc[r][j]);
            }
        }
    memcpy(c, cinit, sizeof c);
    const float *bs = with_bias ? bias : NULL;
    switch (kind) {
    case UK_PLAIN: isa->plain(kc, amem, bp, c, LDC, mr, nr, beta, bs); break;
    case UK_OFFSETS: isa->offsets(kc, amem, img, off, c, LDC, mr, nr, beta, bs); break;
    case UK_ROWS: isa->rows(3, cols, stride, arows, bp, c, LDC, mr, nr, beta, bs); break;
    case UK_ROWS16: isa->rows16(3, cols, stride, arows, bp, c, LDC, mr, nr, beta, bs); break;
    case UK_TAPS: isa->taps(kc, arows, off, bp, c, LDC, mr, nr, beta, bs); break;
    default: isa->taps16(kc, arows, off, bp, c, LDC, mr, nr, beta, bs); break;
    }
    for (int r = 0; r < 8; r++)
        for (int j = 0; j < LDC; j++) {
            float want = cinit[r * LDC + j];
            if (r < mr && j < nr) {
                want = split ? acc[r][j] + acc2[r][j] : acc[r][j];
                if (bs) want += bs[r];
                if (beta != 0.0f) want = fmaf(beta, cinit[r * LDC + j], want);
            }
            cr_assert(memcmp(&c[r * LDC + j], &want, sizeof want) == 0,
                      "%s kernel %d, kc %lld, %d x %d, beta %g, bias %d: [%d, %d] = %.9g, want %.9g", isa->name, kind,
                      (long long)kc, mr, nr, beta, with_bias, r, j, c[r * LDC + j], want);
        }
    free(amem), free(bp), free(bias), free(img), free(cinit);
}

/* The AVX2 and AVX-512 micro-kernels (those this CPU runs) against a C
 * model of their fused multiply-adds, bit for bit: the ISAs give the same
 * results. Full and edge tiles (mr < 8, nr < 32 or 16, passes skipped),
 * beta 0 and not, with and without bias, odd and even step counts. */
Test(conv, simd_micro_kernels_follow_the_fma_order_of_the_model)
{
    const isa_kernels isas[] = {
        {"avx2", tj_k_sgemm_ukernel_avx2, tj_k_sgemm_ukernel_offsets_avx2, tj_k_sgemm_ukernel_rows_avx2,
         tj_k_sgemm_ukernel_rows16_avx2, tj_k_sgemm_ukernel_taps_avx2, tj_k_sgemm_ukernel_taps16_avx2},
        {"avx512", tj_k_sgemm_ukernel_avx512, tj_k_sgemm_ukernel_offsets_avx512, tj_k_sgemm_ukernel_rows_avx512,
         tj_k_sgemm_ukernel_rows16_avx512, tj_k_sgemm_ukernel_taps_avx512, tj_k_sgemm_ukernel_taps16_avx512},
    };
    const int mrs[] = {8, 5, 4, 3, 1}, nrs[] = {32, 31, 24, 17, 16, 13, 8, 1};
    int runs = 0;
    for (int i = 0; i < 2; i++) {
        if (!(i == 0 ? test_cpu_has_avx2() : test_cpu_has_avx512())) continue;
        for (int kind = 0; kind < UK_KINDS; kind++)
            for (int64_t kc = 36; kc <= 37; kc++)
                for (size_t m = 0; m < sizeof mrs / sizeof mrs[0]; m++)
                    for (size_t n = 0; n < sizeof nrs / sizeof nrs[0]; n++) {
                        if ((kind == UK_ROWS16 || kind == UK_TAPS16) && nrs[n] > 16) continue;
                        if ((kind == UK_ROWS || kind == UK_ROWS16) && kc % 3) continue;
                        for (int v = 0; v < 4; v++, runs++)
                            check_micro_kernel(&isas[i], kind, kc, mrs[m], nrs[n], v & 1 ? 0.75f : 0.0f, v & 2);
                    }
    }
    if (runs == 0) cr_skip_test("neither AVX2 + FMA nor AVX-512 on this CPU");
}

Test(conv, strided_input_and_weight_give_the_contiguous_result)
{
    tj_tensor *x = pattern(4, (int64_t[]){2, 3, 6, 5}, 7, 23, 11), *w = pattern(4, (int64_t[]){4, 3, 3, 2}, 5, 9, 4);
    tj_tensor *y = tj_convolution(x, w, NULL, ONE, ONE, ONE, false, ZERO, 1);
    /* the same values behind transposed strides */
    tj_tensor *xt = tj_transpose(tj_contiguous(tj_transpose(x, 2, 3)), 2, 3);
    tj_tensor *wt = tj_permute(tj_contiguous(tj_permute(w, (int64_t[]){3, 2, 1, 0}, 4)), (int64_t[]){3, 2, 1, 0}, 4);
    cr_assert(!tj_tensor_is_contiguous(xt) && !tj_tensor_is_contiguous(wt));
    expect_same(y, tj_convolution(xt, wt, NULL, ONE, ONE, ONE, false, ZERO, 1));
}

Test(conv, float64_one_dimensional_and_empty_batch)
{
    /* conv1d: [1,1,5] * [1,1,3], padding 1 */
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT64, 3, (int64_t[]){1, 1, 5}, (double[]){1, 2, 3, 4, 5});
    tj_tensor *w = tj_tensor_from_data(TJ_FLOAT64, 3, (int64_t[]){1, 1, 3}, (double[]){1, 0, -1});
    /* the typed API takes 2-d parameter lists: call the operator by name */
    int64_t one = 1, zero = 0;
    tj_value args[9] = {tj_v_tensor(x), tj_v_tensor(w), tj_v_none(), tj_v_ints(&one, 1), tj_v_ints(&one, 1),
                        tj_v_ints(&one, 1), tj_v_bool(false), tj_v_ints(&zero, 1), tj_v_int(1)}, r;
    cr_assert_eq(tj_call("aten::convolution", args, 9, &r), TJ_OK, "%s", tj_last_error());
    tj_tensor *y = r.u.t;
    expect_shape(y, 3, (int64_t[]){1, 1, 5});
    cr_expect_eq(tj_tensor_dtype(y), TJ_FLOAT64);
    expect_values(y, (double[]){-2, -2, -2, -2, 4}, 5, 0);
    tj_tensor *e = tj_convolution(tj_tensor_empty(TJ_FLOAT32, 4, (int64_t[]){0, 2, 4, 4}),
                                  pattern(4, (int64_t[]){3, 2, 3, 3}, 1, 3, 1), NULL, ONE, ZERO, ONE, false, ZERO, 1);
    expect_shape(e, 4, (int64_t[]){0, 3, 2, 2});
}

Test(conv, conv2d_accepts_an_unbatched_input)
{
    tj_tensor *x = grouped_x();
    tj_tensor *y4 = tj_conv2d(x, grouped_w(), NULL, (int64_t[]){2, 1}, (int64_t[]){1, 0}, (int64_t[]){1, 2}, 2);
    tj_tensor *y3 = tj_conv2d(tj_squeeze_dim(x, 0), grouped_w(), NULL, (int64_t[]){2, 1}, (int64_t[]){1, 0},
                              (int64_t[]){1, 2}, 2);
    expect_shape(y3, 3, (int64_t[]){4, 3, 3});
    expect_same(y3, tj_squeeze_dim(y4, 0));
}

Test(conv, every_failed_allocation_is_reported_as_out_of_memory)
{
    /* strided operands so that contiguous copies are allocated too */
    tj_tensor *x = tj_transpose(tj_contiguous(tj_transpose(grouped_x(), 2, 3)), 2, 3), *w = grouped_w();
    tj_tensor *gy = tj_transpose(tj_contiguous(tj_transpose(pattern(4, (int64_t[]){1, 4, 3, 3}, 1, 3, 1), 2, 3)), 2, 3);
    for (uint64_t n = 1;; n++) {
        cr_assert_lt(n, 50, "never succeeded");
        tj_tensor *gi = NULL, *gw = NULL, *gb = NULL;
        tj_debug_fail_allocation(n);
        tj_status st = tj_convolution_backward(gy, x, w, (int64_t[]){4}, 1, (int64_t[]){2, 1}, (int64_t[]){1, 0},
                                               (int64_t[]){1, 2}, false, ZERO, 2, (bool[]){true, true, true}, &gi,
                                               &gw, &gb);
        tj_debug_fail_allocation(0);
        if (st == TJ_OK) {
            cr_expect_eq(tj_tensor_item_at(gw, 1), 4);
            break;
        }
        cr_expect_eq(st, TJ_ERR_OUT_OF_MEMORY, "n = %d: %s", (int)n, tj_last_error());
        cr_expect(gi == NULL && gw == NULL && gb == NULL);
    }
}

Test(conv, channel_mismatch_is_a_shape_error_naming_the_op)
{
    tj_tensor *x = pattern(4, (int64_t[]){1, 3, 5, 5}, 1, 3, 1), *w = pattern(4, (int64_t[]){2, 2, 3, 3}, 1, 3, 1);
    test_expect_error(tj_convolution(x, w, NULL, ONE, ZERO, ONE, false, ZERO, 1), TJ_ERR_SHAPE, "aten::convolution",
                      "to have 2 channels, but got 3 channels");
}

Test(conv, kernel_larger_than_padded_input_is_a_shape_error)
{
    tj_tensor *x = pattern(4, (int64_t[]){1, 1, 3, 3}, 1, 3, 1), *w = pattern(4, (int64_t[]){1, 1, 5, 5}, 1, 3, 1);
    test_expect_error(tj_convolution(x, w, NULL, ONE, ZERO, ONE, false, ZERO, 1), TJ_ERR_SHAPE, "aten::convolution",
                      "Kernel size can't be greater than actual input size");
    /* padding 1 makes it fit */
    expect_shape(tj_convolution(x, w, NULL, ONE, ONE, ONE, false, ZERO, 1), 4, (int64_t[]){1, 1, 1, 1});
}

Test(conv, an_empty_kernel_is_refused_unless_the_input_has_no_channels)
{
    /* torch 1.13 (torch.convolution, CPU): "kernel size should be greater
     * than zero, but got kernel_height: 0 kernel_width: 3", for plain and
     * transposed convolutions, 1-d too (kernel_height 1); an input with no
     * channels gives an empty [1, 0, 6, 3]. Before the fix a [2, 2, 0, 3]
     * weight gave a [1, 2, 6, 3] tensor of zeros. */
    tj_tensor *x = pattern(4, (int64_t[]){1, 2, 5, 5}, 1, 3, 1);
    test_expect_error(tj_convolution(x, tj_zeros((int64_t[]){2, 2, 0, 3}, 4, TJ_DTYPE_NONE), NULL, ONE, ZERO, ONE,
                                     false, ZERO, 1),
                      TJ_ERR_SHAPE, "aten::convolution",
                      "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 3");
    test_expect_error(tj_convolution(x, tj_zeros((int64_t[]){2, 2, 3, 0}, 4, TJ_DTYPE_NONE), NULL, ONE, ZERO, ONE,
                                     true, ZERO, 1),
                      TJ_ERR_SHAPE, "aten::convolution", "kernel_height: 3 kernel_width: 0");
    test_expect_error(tj_conv1d(pattern(3, (int64_t[]){1, 2, 5}, 1, 3, 1),
                                tj_zeros((int64_t[]){2, 2, 0}, 3, TJ_DTYPE_NONE), NULL, 1, 0, 1, 1),
                      TJ_ERR_SHAPE, "aten::convolution", "kernel_height: 1 kernel_width: 0");
    expect_shape(tj_convolution(tj_zeros((int64_t[]){1, 0, 5, 5}, 4, TJ_DTYPE_NONE),
                                tj_zeros((int64_t[]){2, 0, 0, 3}, 4, TJ_DTYPE_NONE), NULL, ONE, ZERO, ONE, false, ZERO,
                                1),
                 4, (int64_t[]){1, 0, 6, 3});
}

Test(conv, bad_groups_are_rejected)
{
    tj_tensor *x = pattern(4, (int64_t[]){1, 4, 5, 5}, 1, 3, 1), *w = pattern(4, (int64_t[]){3, 2, 3, 3}, 1, 3, 1);
    test_expect_error(tj_convolution(x, w, NULL, ONE, ZERO, ONE, false, ZERO, 0), TJ_ERR_INVALID_ARGUMENT,
                      "aten::convolution", "non-positive groups");
    test_expect_error(tj_convolution(x, w, NULL, ONE, ZERO, ONE, false, ZERO, 2), TJ_ERR_SHAPE, "aten::convolution",
                      "divisible by 2");
}

Test(conv, other_argument_errors)
{
    tj_tensor *x = pattern(4, (int64_t[]){1, 2, 5, 5}, 1, 3, 1), *w = pattern(4, (int64_t[]){3, 2, 3, 3}, 1, 3, 1);
    test_expect_error(tj_convolution(x, w, pattern(1, (int64_t[]){2}, 1, 3, 1), ONE, ZERO, ONE, false, ZERO, 1),
                      TJ_ERR_SHAPE, "aten::convolution", "bias to be 1-dimensional with 3 elements");
    test_expect_error(tj_convolution(x, w, NULL, ZERO, ZERO, ONE, false, ZERO, 1), TJ_ERR_INVALID_ARGUMENT,
                      "aten::convolution", "non-positive stride");
    test_expect_error(tj_convolution(x, tj_to_copy(w, TJ_FLOAT64), NULL, ONE, ZERO, ONE, false, ZERO, 1), TJ_ERR_DTYPE,
                      "aten::convolution", "float64");
    /* 1-D to 3-D only: a 6-d weight */
    tj_tensor *x4 = tj_tensor_empty(TJ_FLOAT32, 6, (int64_t[]){1, 2, 3, 3, 3, 3});
    tj_tensor *w4 = tj_tensor_empty(TJ_FLOAT32, 6, (int64_t[]){1, 2, 1, 1, 1, 1});
    test_expect_error(tj_convolution(x4, w4, NULL, ONE, ZERO, ONE, false, ZERO, 1), TJ_ERR_SHAPE,
                      "aten::convolution", "weight should have three to five dimensions");
    /* transposed: output_padding must be smaller than stride or dilation */
    test_expect_error(tj_convolution(x, tj_permute(w, (int64_t[]){1, 0, 2, 3}, 4), NULL, ONE, ZERO, ONE, true, ONE, 1),
                      TJ_ERR_INVALID_ARGUMENT, "aten::convolution", "output padding must be smaller");
}

Test(conv, backward_rejects_a_grad_output_of_the_wrong_shape)
{
    tj_tensor *x = grouped_x(), *w = grouped_w(), *gy = pattern(4, (int64_t[]){1, 4, 3, 2}, 1, 3, 1);
    tj_tensor *gi = NULL, *gw = NULL, *gb = NULL;
    tj_status st = tj_convolution_backward(gy, x, w, NULL, 0, (int64_t[]){2, 1}, (int64_t[]){1, 0}, (int64_t[]){1, 2},
                                           false, ZERO, 2, (bool[]){true, true, false}, &gi, &gw, &gb);
    cr_assert_eq(st, TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "aten::convolution_backward"), "%s", tj_last_error());
}

/* ---- pooling ---- */

/* x = arange(25) * 7 % 11 as [1,1,5,5]:
 *   0  7  3 10  6 / 2  9  5  1  8 / 4  0  7  3 10 / 6  2  9  5  1 / 8  4  0  7  3 */
static tj_tensor *pool_x(void) { return pattern(4, (int64_t[]){1, 1, 5, 5}, 7, 11, 0); }

static void expect_max_pool(tj_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *d,
                            bool ceil_mode, const int64_t *shape, const double *values, const double *indices)
{
    tj_tensor *out = NULL, *idx = NULL;
    cr_assert_eq(tj_max_pool2d_with_indices(x, k, s, p, d, ceil_mode, &out, &idx), TJ_OK, "%s", tj_last_error());
    int nd = tj_tensor_ndim(x);
    expect_shape(out, nd, shape);
    expect_shape(idx, nd, shape);
    cr_assert_eq(tj_tensor_dtype(idx), TJ_INT64);
    int64_t n = tj_tensor_numel(out);
    expect_values(out, values, n, 0);
    expect_values(idx, indices, n, 0);
}

Test(pool, ceil_mode_keeps_partial_edge_windows)
{
    expect_max_pool(pool_x(), (int64_t[]){2, 2}, (int64_t[]){2, 2}, ZERO, ONE, true, (int64_t[]){1, 1, 3, 3},
                    (double[]){9, 10, 8, 6, 9, 10, 8, 7, 3}, (double[]){6, 3, 9, 15, 17, 14, 20, 23, 24});
    /* without ceil_mode the partial windows are dropped */
    expect_max_pool(pool_x(), (int64_t[]){2, 2}, (int64_t[]){2, 2}, ZERO, ONE, false, (int64_t[]){1, 1, 2, 2},
                    (double[]){9, 10, 6, 9}, (double[]){6, 3, 15, 17});
}

Test(pool, ceil_mode_with_padding_drops_a_window_starting_in_the_right_padding)
{
    /* 5 + 2*1 padded, k3 s2: ceil gives 3 windows, a 4th would start past
     * the input */
    expect_max_pool(pool_x(), (int64_t[]){3, 3}, (int64_t[]){2, 2}, ONE, ONE, true, (int64_t[]){1, 1, 3, 3},
                    (double[]){9, 10, 10, 9, 9, 10, 8, 9, 7}, (double[]){6, 3, 3, 6, 6, 14, 20, 17, 23});
}

Test(pool, dilation_spreads_the_window)
{
    expect_max_pool(pool_x(), (int64_t[]){2, 2}, ONE, ZERO, (int64_t[]){2, 2}, false, (int64_t[]){1, 1, 3, 3},
                    (double[]){7, 10, 10, 9, 9, 9, 8, 7, 10}, (double[]){12, 3, 14, 17, 6, 17, 20, 23, 14});
}

Test(pool, padding_never_wins_against_negative_values)
{
    tj_tensor *x = tj_full((int64_t[]){1, 1, 3, 3}, 4, tj_v_float(-5.0), -1);
    double five[16], idx[16] = {0, 0, 1, 2, 0, 0, 1, 2, 3, 3, 4, 5, 6, 6, 7, 8};
    for (int i = 0; i < 16; i++) five[i] = -5;
    expect_max_pool(x, (int64_t[]){2, 2}, ONE, ONE, ONE, false, (int64_t[]){1, 1, 4, 4}, five, idx);
}

Test(pool, ties_take_the_first_position_and_the_last_nan_wins)
{
    tj_tensor *ties = test_f32(4, (int64_t[]){1, 1, 2, 4}, (float[]){3, 1, 2, 2, 3, 3, 2, 2});
    expect_max_pool(ties, (int64_t[]){2, 2}, (int64_t[]){2, 2}, ZERO, ONE, false, (int64_t[]){1, 1, 1, 2},
                    (double[]){3, 2}, (double[]){0, 2});
    /* PyTorch 1.13: [[1, nan, 3, nan], [2, 0, nan, 1]] -> (nan, nan), indices (1, 6) */
    tj_tensor *nans = test_f32(4, (int64_t[]){1, 1, 2, 4}, (float[]){1, NAN, 3, NAN, 2, 0, NAN, 1});
    expect_max_pool(nans, (int64_t[]){2, 2}, (int64_t[]){2, 2}, ZERO, ONE, false, (int64_t[]){1, 1, 1, 2},
                    (double[]){NAN, NAN}, (double[]){1, 6});
}

Test(pool, unbatched_and_strided_inputs)
{
    tj_tensor *x = pool_x();
    tj_tensor *x3 = tj_squeeze_dim(x, 0);
    expect_max_pool(x3, (int64_t[]){2, 2}, (int64_t[]){2, 2}, ZERO, ONE, false, (int64_t[]){1, 2, 2},
                    (double[]){9, 10, 6, 9}, (double[]){6, 3, 15, 17});
    /* the transpose's windows are the transposed windows; indices count in
     * the transposed plane */
    tj_tensor *xt = tj_transpose(x, 2, 3);
    expect_max_pool(xt, (int64_t[]){2, 2}, (int64_t[]){2, 2}, ZERO, ONE, false, (int64_t[]){1, 1, 2, 2},
                    (double[]){9, 6, 10, 9}, (double[]){6, 3, 15, 13});
}

Test(pool, avg_pool_divisors_follow_count_include_pad_and_override)
{
    tj_tensor *x = pool_x();
    /* k3 s2 pad1 ceil: windows clipped to the padded input (include) or to
     * the input (exclude) */
    tj_tensor *inc = tj_avg_pool2d(x, (int64_t[]){3, 3}, (int64_t[]){2, 2}, ONE, true, true, 0);
    expect_shape(inc, 4, (int64_t[]){1, 1, 3, 3});
    expect_values(inc, (double[]){18. / 9, 35. / 9, 25. / 9, 23. / 9, 41. / 9, 28. / 9, 20. / 9, 27. / 9, 16. / 9}, 9,
                  1e-6);
    tj_tensor *exc = tj_avg_pool2d(x, (int64_t[]){3, 3}, (int64_t[]){2, 2}, ONE, true, false, 0);
    expect_values(exc, (double[]){4.5, 35. / 6, 6.25, 23. / 6, 41. / 9, 28. / 6, 5, 4.5, 4}, 9, 1e-6);
    tj_tensor *div = tj_avg_pool2d(x, (int64_t[]){2, 2}, (int64_t[]){2, 2}, ZERO, true, true, 3);
    expect_values(div, (double[]){6, 19. / 3, 14. / 3, 4, 8, 11. / 3, 4, 7. / 3, 1}, 9, 1e-6);
}

Test(pool, avg_pool_of_int64_truncates_toward_zero)
{
    int64_t v[16];
    for (int i = 0; i < 16; i++) v[i] = i - 5;
    tj_tensor *x = tj_tensor_from_data(TJ_INT64, 4, (int64_t[]){1, 1, 4, 4}, v);
    tj_tensor *a = tj_avg_pool2d(x, (int64_t[]){3, 3}, ONE, ONE, false, true, 0);
    cr_assert_eq(tj_tensor_dtype(a), TJ_INT64);
    expect_values(a, (double[]){-1, -1, 0, 0, 0, 0, 1, 1, 2, 4, 5, 3, 2, 4, 4, 3}, 16, 0);
}

Test(pool, max_pool_backward_adds_up_overlapping_windows)
{
    tj_tensor *x = pool_x(), *out = NULL, *idx = NULL;
    int64_t k[2] = {3, 3};
    cr_assert_eq(tj_max_pool2d_with_indices(x, k, ONE, ZERO, ONE, false, &out, &idx), TJ_OK);
    tj_tensor *go = test_f32(4, (int64_t[]){1, 1, 3, 3}, (float[]){1, 2, 3, 4, 5, 6, 7, 8, 9});
    tj_tensor *gi = tj_max_pool2d_with_indices_backward(go, x, k, ONE, ZERO, ONE, false, idx);
    expect_shape(gi, 4, (int64_t[]){1, 1, 5, 5});
    expect_values(gi, (double[]){0, 0, 0, 5, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 15, 0, 0, 15, 0, 0, 0, 0, 0, 0, 0}, 25, 0);
}

Test(pool, max_pool_backward_rejects_indices_outside_the_plane)
{
    tj_tensor *x = pool_x();
    int64_t k[2] = {2, 2};
    tj_tensor *go = test_f32(4, (int64_t[]){1, 1, 2, 2}, (float[]){1, 1, 1, 1});
    tj_tensor *idx = tj_tensor_from_data(TJ_INT64, 4, (int64_t[]){1, 1, 2, 2}, (int64_t[]){0, 1, 25, 3});
    test_expect_error(tj_max_pool2d_with_indices_backward(go, x, k, k, ZERO, ONE, false, idx), TJ_ERR_INDEX,
                      "aten::max_pool2d_with_indices_backward", "index 25");
}

Test(pool, bad_geometry_is_rejected_naming_the_op)
{
    tj_tensor *x = pool_x(), *out = NULL, *idx = NULL;
    cr_expect_eq(tj_max_pool2d_with_indices(x, (int64_t[]){2, 2}, NULL, (int64_t[]){2, 2}, ONE, false, &out, &idx),
                 TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "aten::max_pool2d_with_indices") && strstr(tj_last_error(), "half of kernel"),
              "%s", tj_last_error());
    tj_tensor *small = pattern(4, (int64_t[]){1, 2, 1, 1}, 1, 3, 0);
    cr_expect_eq(tj_max_pool2d_with_indices(small, (int64_t[]){2, 2}, NULL, ZERO, ONE, false, &out, &idx), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "Output size is too small"), "%s", tj_last_error());
    tj_tensor *ints = tj_tensor_from_data(TJ_INT64, 3, (int64_t[]){1, 1, 2}, (int64_t[]){1, 2});
    cr_expect_eq(tj_max_pool2d_with_indices(ints, ONE, NULL, ZERO, ONE, false, &out, &idx), TJ_ERR_DTYPE);
    cr_expect(strstr(tj_last_error(), "int64"), "%s", tj_last_error());
    /* divisor_override 0 (the typed API reads 0 as None) */
    tj_value args[7] = {tj_v_tensor(x), tj_v_ints((int64_t[]){2, 2}, 2), tj_v_ints(NULL, 0), tj_v_ints(ZERO, 2),
                        tj_v_bool(false), tj_v_bool(true), tj_v_int(0)}, r;
    cr_expect_eq(tj_call("aten::avg_pool2d", args, 7, &r), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "aten::avg_pool2d: divisor must be not zero"), "%s", tj_last_error());
}

/* Random geometries (window, stride 1-3, padding, dilation, ceil_mode,
 * widths across the 16-column chunks; every third round MaxPool2d(2);
 * every other one a column slice, rows further apart than its width) on
 * values with many ties, -inf and nan: float32 pooling, on every ISA the
 * CPU has (AVX-512's whole-plane kernel, whose 2 x 2 form packs the rows of
 * planes up to 8 windows wide; AVX2's 2 x 2 kernel; the generic taps),
 * gives the values and indices of float64 pooling (the tap-by-tap loop). */
Test(pool, float32_row_kernel_agrees_with_the_tap_loop_of_float64)
{
    uint64_t seed = 12345;
#define NEXT() (seed = seed * 6364136223846793005ull + 1442695040888963407ull, (int64_t)(seed >> 33))
    for (int round = 0; round < 300 * TEST_NISA; round++) {
        if (!tj_k_isa_force(test_isas[round / 300])) continue; /* above the CPU or TJ_ISA */
        int64_t kh = 1 + NEXT() % 4, kw = 1 + NEXT() % 4, sh = 1 + NEXT() % 3, sw = 1 + NEXT() % 3;
        int64_t dh = 1 + NEXT() % 2, dw = 1 + NEXT() % 2, ph = NEXT() % (kh / 2 + 1), pw = NEXT() % (kw / 2 + 1);
        if (round % 3 == 0) kh = kw = sh = sw = 2, dh = dw = 1, ph = pw = 0;
        int64_t h = dh * (kh - 1) + 1 + NEXT() % 9, w = dw * (kw - 1) + 1 + NEXT() % 40;
        bool ceil_mode = NEXT() % 2;
        /* odd rounds: the last w of w + 3 columns, rows w + 3 apart (the
         * last row ending at the storage's end) */
        int64_t extra = round % 2 ? 3 : 0;
        /* one declarator each: an initializer list's expressions are evaluated in no set order */
        int64_t batch = 1 + NEXT() % 2, channels = 1 + NEXT() % 3;
        int64_t shape[4] = {batch, channels, h, w + extra}, n = batch * channels * h * (w + extra);
        float *v = malloc(sizeof(float) * (size_t)n);
        for (int64_t i = 0; i < n; i++) {
            int64_t r = NEXT() % 40;
            v[i] = r == 0 ? NAN : r == 1 ? -INFINITY : (float)(r % 5) - 2;
        }
        tj_tensor *x = tj_slice(test_f32(4, shape, v), 3, true, extra, true, INT64_MAX, 1);
        tj_tensor *out = NULL, *idx = NULL, *out64 = NULL, *idx64 = NULL;
        free(v);
        int64_t k[2] = {kh, kw}, s[2] = {sh, sw}, p[2] = {ph, pw}, d[2] = {dh, dw};
        cr_assert_eq(tj_max_pool2d_with_indices(x, k, s, p, d, ceil_mode, &out, &idx), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_max_pool2d_with_indices(tj_to_copy(x, TJ_FLOAT64), k, s, p, d, ceil_mode, &out64, &idx64),
                     TJ_OK, "%s", tj_last_error());
        int64_t m = tj_tensor_numel(out);
        cr_assert_eq(m, tj_tensor_numel(out64));
        const float *o = tj_tensor_data(out);
        const double *o64 = tj_tensor_data(out64);
        const int64_t *ix = tj_tensor_data(idx), *ix64 = tj_tensor_data(idx64);
        for (int64_t i = 0; i < m; i++) {
            bool same = isnan(o[i]) ? isnan(o64[i]) : (double)o[i] == o64[i];
            cr_assert(same && ix[i] == ix64[i],
                      "%s round %d (k %lldx%lld s %lldx%lld p %lldx%lld d %lldx%lld ceil %d, %lldx%lld) output %lld: "
                      "%g at %lld, float64 %g at %lld",
                      tj_k_isa_name(), round, (long long)kh, (long long)kw, (long long)sh, (long long)sw, (long long)ph, (long long)pw,
                      (long long)dh, (long long)dw, ceil_mode, (long long)h, (long long)w, (long long)i, o[i],
                      (long long)ix[i], o64[i], (long long)ix64[i]);
        }
    }
    tj_k_isa_force(NULL);
#undef NEXT
}

/* max |a - b| / (1 + |b|) over two tensors of one shape (b float64). */
static double worst_relative(tj_tensor *a, tj_tensor *b)
{
    tj_tensor *d = tj_to_copy(a, TJ_FLOAT64);
    int64_t n = tj_tensor_numel(b);
    cr_assert_eq(tj_tensor_numel(d), n);
    const double *pa = tj_tensor_data(d), *pb = tj_tensor_data(b);
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs(pa[i] - pb[i]) / (1 + fabs(pb[i]));
        if (!(e <= worst)) worst = e;
    }
    return worst;
}

/* The float32 stride-1 paths (tiles by output channels on the wide grid,
 * by output rows or over the whole grid, by positions with 32- or
 * 16-channel tiles, 16- and 32-column weight gradients, picked by channel
 * count and width) against float64, which goes through
 * im2col and dgemm: forward, grad_input, grad_weight and grad_bias, for
 * channel counts on both sides of every tile width, with padding,
 * dilation and groups. */
Test(conv, float32_tile_orientations_agree_with_float64_im2col)
{
    const int64_t cases[][8] = {
        /* c_in, c_out, h, w, k, pad, dilation, groups */
        {1, 16, 12, 12, 5, 2, 1, 1}, {16, 32, 7, 7, 5, 2, 1, 1}, {32, 16, 7, 9, 5, 2, 1, 1},
        {3, 40, 6, 11, 3, 1, 1, 1},  {20, 17, 5, 13, 3, 0, 2, 1}, {8, 48, 4, 4, 3, 1, 1, 2},
        {5, 9, 9, 3, 3, 1, 1, 1},    {12, 33, 6, 6, 1, 0, 1, 3},  {1, 16, 6, 28, 5, 2, 1, 1},
        {2, 8, 5, 30, 3, 1, 1, 1},   {3, 8, 3, 62, 3, 1, 1, 1},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        const int64_t *c = cases[t];
        int64_t xs[4] = {2, c[0], c[2], c[3]}, ws[4] = {c[1], c[0] / c[7], c[4], c[4]};
        int64_t pad[2] = {c[5], c[5]}, dil[2] = {c[6], c[6]}, bias_shape[1] = {c[1]};
        tj_tensor *x = pattern(4, xs, 37, 101, 50), *w = pattern(4, ws, 13, 17, 8);
        tj_tensor *b = pattern(1, bias_shape, 3, 7, 3);
        tj_tensor *y = tj_convolution(x, w, b, ONE, pad, dil, false, ZERO, c[7]);
        tj_tensor *y64 = tj_convolution(tj_to_copy(x, TJ_FLOAT64), tj_to_copy(w, TJ_FLOAT64), tj_to_copy(b, TJ_FLOAT64),
                                        ONE, pad, dil, false, ZERO, c[7]);
        cr_assert(y && y64, "%s", tj_last_error());
        cr_expect(worst_relative(y, y64) < 1e-5, "case %zu forward: %g", t, worst_relative(y, y64));
        tj_tensor *gy = pattern(tj_tensor_ndim(y), tj_tensor_shape(y), 7, 23, 11);
        tj_tensor *g[3], *g64[3];
        bool mask[3] = {true, true, true};
        cr_assert_eq(tj_convolution_backward(gy, x, w, bias_shape, 1, ONE, pad, dil, false, ZERO, c[7], mask, &g[0],
                                             &g[1], &g[2]),
                     TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_convolution_backward(tj_to_copy(gy, TJ_FLOAT64), tj_to_copy(x, TJ_FLOAT64),
                                             tj_to_copy(w, TJ_FLOAT64), bias_shape, 1, ONE, pad, dil, false, ZERO,
                                             c[7], mask, &g64[0], &g64[1], &g64[2]),
                     TJ_OK, "%s", tj_last_error());
        for (int i = 0; i < 3; i++)
            cr_expect(worst_relative(g[i], g64[i]) < 1e-5, "case %zu grad %d: %g", t, i, worst_relative(g[i], g64[i]));
    }
}

/* The float32 backward of 2 x 2 pooling against float64's, bit for bit:
 * widths of 1 to 20 windows, odd and even sizes, ceil_mode edge windows,
 * then indices moved out of their windows (the scatter adds them where
 * they point) and one out of the plane (an error naming it). */
Test(pool, max_pool_2x2_backward_float32_matches_float64)
{
    static const int64_t widths[] = {2, 3, 4, 5, 7, 8, 9, 10, 14, 16, 17, 18, 21, 28, 33, 40};
    int64_t k[2] = {2, 2};
    for (int round = 0; round < 16; round++) {
        int64_t h = 9 + round % 4, w = widths[round], shape[4] = {2, 3, h, w};
        bool ceil_mode = round % 3 == 0;
        tj_tensor *x = pattern(4, shape, 7919, 1000, 500), *out = NULL, *idx = NULL;
        cr_assert_eq(tj_max_pool2d_with_indices(x, k, k, ZERO, ONE, ceil_mode, &out, &idx), TJ_OK, "%s",
                     tj_last_error());
        tj_tensor *go = pattern(4, tj_tensor_shape(out), 13, 29, 14);
        int64_t n = tj_tensor_numel(idx);
        for (int moved = 0; moved < 2; moved++) {
            if (moved) { /* three windows of plane 1 point at other windows' elements */
                int64_t *ix = tj_tensor_data(idx), plane = n / 6;
                for (int j = 0; j < 3; j++) ix[plane + j * 3] = (j * 37 + 3) % (h * w);
            }
            tj_tensor *gi = tj_max_pool2d_with_indices_backward(go, x, k, k, ZERO, ONE, ceil_mode, idx);
            tj_tensor *gi64 = tj_max_pool2d_with_indices_backward(tj_to_copy(go, TJ_FLOAT64), tj_to_copy(x, TJ_FLOAT64),
                                                                  k, k, ZERO, ONE, ceil_mode, idx);
            cr_assert(gi && gi64, "%s", tj_last_error());
            cr_assert_eq(worst_relative(gi, gi64), 0, "round %d moved %d", round, moved);
        }
        ((int64_t *)tj_tensor_data(idx))[n - 2] = h * w;
        test_expect_error(tj_max_pool2d_with_indices_backward(go, x, k, k, ZERO, ONE, ceil_mode, idx), TJ_ERR_INDEX,
                          "aten::max_pool2d_with_indices_backward", "out of range");
    }
}

/* The packed single-threaded GEMM of the convolutions, every transpose
 * combination, on sizes that leave partial tiles and panels and cross the
 * KC block (beta 0 then 1, with a bias), against a double loop; and its
 * generic and SIMD packing against each other. */
Test(conv, packed_sgemm_matches_a_double_loop_for_every_transpose)
{
    enum { M = 70, N = 45, K = 300 };
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N), *c = malloc(sizeof(float) * M * N);
    float bias[M];
    void *work = aligned_alloc(64, (tj_k_sgemm_work_bytes() + 63) / 64 * 64);
    cr_assert(a && b && c && work);
    for (int i = 0; i < M * K; i++) a[i] = (float)(i * 7 % 19) - 9;
    for (int i = 0; i < K * N; i++) b[i] = (float)(i * 5 % 13) - 6;
    for (int i = 0; i < M; i++) bias[i] = (float)i;
    for (int t = 0; t < 4; t++) {
        bool ta = t & 1, tb = t & 2;
        int64_t lda = ta ? M : K, ldb = tb ? K : N;
        for (int i = 0; i < M * N; i++) c[i] = 1;
        tj_k_sgemm(ta, tb, M, N, K, a, lda, b, ldb, 0, c, N, NULL, work);
        tj_k_sgemm(ta, tb, M, N, K, a, lda, b, ldb, 1, c, N, bias, work); /* c = 2 a b + bias */
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double want = bias[i];
                for (int p = 0; p < K; p++) want += 2.0 * a[ta ? p * M + i : i * K + p] * b[tb ? j * K + p : p * N + j];
                cr_assert_eq(c[i * N + j], (float)want, "trans %d%d [%d, %d]: %g, want %g", ta, tb, i, j, c[i * N + j],
                             want);
            }
    }
    /* packing: 13 x 37 blocks of A (panels of 8) and 37 x 45 of B (panels of 32) */
    for (int trans = 0; trans < 2; trans++) {
        float p1[2 * 8 * 37], p2[2 * 8 * 37], q1[2 * 32 * 37], q2[2 * 32 * 37];
        tj_k_sgemm_pack_a_generic(trans, a + 3, 50, 13, 37, p1);
        tj_k_sgemm_pick_pack_a()(trans, a + 3, 50, 13, 37, p2);
        cr_assert_eq(memcmp(p1, p2, sizeof p1), 0, "pack_a trans %d", trans);
        tj_k_sgemm_pack_b_generic(trans, b + 2, 60, 37, 45, q1);
        tj_k_sgemm_pick_pack_b()(trans, b + 2, 60, 37, 45, q2);
        cr_assert_eq(memcmp(q1, q2, sizeof q1), 0, "pack_b trans %d", trans);
    }
    free(a);
    free(b);
    free(c);
    free(work);
}

/* The im2col weight gradient (float32, stride 2) at 3 threads with one
 * sample per thread is bit for bit ((0 + g0) + g1) + g2 of the samples' own
 * gradients: every thread's partial sum counted once, in thread order. With
 * 2 groups each thread's block is both groups of one sample. */
Test(conv, weight_grad_adds_the_threads_partial_sums_in_thread_order)
{
    if (!tj_k_conv_own_kernels())
        cr_skip_test("no AVX2 + FMA: float32 convolution runs on OpenBLAS, one sample at a time");
    for (int64_t groups = 1; groups <= 2; groups++) {
        tj_k_conv cv = {.geom = {.channels = 5, .height = 11, .width = 9, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1,
                                 .pw = 1, .dh = 1, .dw = 1, .out_h = 6, .out_w = 5},
                        .batch = 3, .groups = groups, .mat_channels = 7, .threads = 3};
        cr_assert_eq(tj_k_conv_threads(&cv, TJ_FLOAT32), 3);
        tj_k_conv one = cv;
        one.batch = 1;
        one.threads = 1;
        int64_t img_size = groups * 5 * 11 * 9, mat_size = groups * 7 * 6 * 5, wsize = groups * 7 * 5 * 3 * 3;
        uint64_t seed = 99;
        float *img = lcg_floats(3 * img_size, &seed), *mat = lcg_floats(3 * mat_size, &seed);
        float *gw = malloc(sizeof(float) * (size_t)wsize), *g1 = malloc(sizeof(float) * (size_t)wsize);
        float *want = calloc((size_t)wsize, sizeof(float));
        void *work = aligned_alloc(64, (tj_k_conv_work_bytes(&cv, TJ_FLOAT32, TJ_K_CONV_WEIGHT_GRAD) + 63) / 64 * 64);
        cr_assert(gw && g1 && want && work);
        for (int64_t n = 0; n < 3; n++) {
            tj_k_conv_weight_grad_f32(&one, img + n * img_size, mat + n * mat_size, g1, work);
            for (int64_t i = 0; i < wsize; i++) want[i] += g1[i];
        }
        tj_k_conv_weight_grad_f32(&cv, img, mat, gw, work);
        for (int64_t i = 0; i < wsize; i++)
            cr_assert_eq(gw[i], want[i], "groups %lld [%lld]: %.9g, want %.9g", (long long)groups, (long long)i, gw[i],
                         want[i]);
        free(img);
        free(mat);
        free(gw);
        free(g1);
        free(want);
        free(work);
    }
}

/* A stride-1 tj_k_conv of batch n (the implicit float32 path): c_in, c_out,
 * h, w, k, pad, dilation, groups as in the cases below. */
static tj_k_conv implicit_case(const int64_t *c, int64_t n, int threads)
{
    int64_t ext = c[6] * (c[4] - 1);
    return (tj_k_conv){.geom = {.channels = c[0] / c[7], .height = c[2], .width = c[3], .kh = c[4], .kw = c[4],
                                .sh = 1, .sw = 1, .ph = c[5], .pw = c[5], .dh = c[6], .dw = c[6],
                                .out_h = c[2] + 2 * c[5] - ext, .out_w = c[3] + 2 * c[5] - ext},
                       .batch = n, .groups = c[7], .mat_channels = c[1] / c[7], .threads = threads};
}

static void *conv_work(const tj_k_conv *cv, tj_dtype dt, tj_k_conv_op op)
{
    void *w = aligned_alloc(64, (tj_k_conv_work_bytes(cv, dt, op) + 64) / 64 * 64);
    cr_assert_not_null(w);
    return w;
}

static double *to_f64(const float *v, int64_t n)
{
    double *d = malloc(sizeof(double) * (size_t)n);
    cr_assert_not_null(d);
    for (int64_t i = 0; i < n; i++) d[i] = v[i];
    return d;
}

/* The largest error against want relative to want's root mean square
 * (single values of a sum that cancels are far less accurate than that). */
static double worst_error(const float *got, const double *want, int64_t n)
{
    double worst = 0, ss = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs(got[i] - want[i]);
        if (!(e <= worst)) worst = e;
        ss += want[i] * want[i];
    }
    return worst / (1 + sqrt(ss / (double)n));
}

/* The implicit float32 kernels (forward, input and weight gradient; items
 * handed out with tj_k_parallel_steal, the weight gradient in chunks) at
 * 1, 2 and 3 threads against float64's im2col + dgemm kernels: odd sizes,
 * padding, dilation and groups, batches that split unevenly. Forward and
 * input gradient are the same bits at every thread count (each item is
 * computed whole by one thread). */
Test(conv, implicit_kernels_match_float64_im2col_at_one_to_three_threads)
{
    const int64_t cases[][8] = {
        /* c_in, c_out, h, w, k, pad, dilation, groups */
        {16, 32, 14, 14, 5, 2, 1, 1}, {1, 16, 13, 11, 5, 2, 1, 1}, {6, 10, 9, 7, 3, 0, 2, 2},
        {32, 16, 7, 9, 5, 2, 1, 1},   {12, 33, 6, 5, 1, 0, 1, 3},  {5, 9, 9, 3, 3, 1, 1, 1},
    };
    const int64_t n = 7;
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        tj_k_conv one = implicit_case(cases[t], n, 1);
        const tj_k_im2col_geom *g = &one.geom;
        int64_t G = one.groups, R = one.mat_channels;
        int64_t ni = n * G * g->channels * g->height * g->width, nm = n * G * R * g->out_h * g->out_w;
        int64_t nw = G * R * g->channels * g->kh * g->kw;
        uint64_t seed = 7 + t;
        float *img = lcg_floats(ni, &seed), *mat = lcg_floats(nm, &seed), *w = lcg_floats(nw, &seed);
        float *bias = lcg_floats(G * R, &seed);
        double *img64 = to_f64(img, ni), *mat64 = to_f64(mat, nm), *w64 = to_f64(w, nw), *bias64 = to_f64(bias, G * R);
        double *fwd64 = malloc(sizeof(double) * (size_t)nm), *gi64 = malloc(sizeof(double) * (size_t)ni);
        double *gw64 = malloc(sizeof(double) * (size_t)nw);
        cr_assert(fwd64 && gi64 && gw64);
        void *work = conv_work(&one, TJ_FLOAT64, TJ_K_CONV_UNFOLD_MM);
        tj_k_conv_unfold_mm_f64(&one, img64, w64, bias64, fwd64, work);
        free(work);
        work = conv_work(&one, TJ_FLOAT64, TJ_K_CONV_MM_FOLD);
        tj_k_conv_mm_fold_f64(&one, mat64, w64, NULL, gi64, work);
        free(work);
        work = conv_work(&one, TJ_FLOAT64, TJ_K_CONV_WEIGHT_GRAD);
        tj_k_conv_weight_grad_f64(&one, img64, mat64, gw64, work);
        free(work);
        float *fwd1 = malloc(sizeof(float) * (size_t)nm), *gi1 = malloc(sizeof(float) * (size_t)ni);
        float *fwd = malloc(sizeof(float) * (size_t)nm), *gi = malloc(sizeof(float) * (size_t)ni);
        float *gw = malloc(sizeof(float) * (size_t)nw);
        cr_assert(fwd1 && gi1 && fwd && gi && gw);
        for (int nt = 1; nt <= 3; nt++) {
            tj_k_conv cv = implicit_case(cases[t], n, nt);
            work = conv_work(&cv, TJ_FLOAT32, TJ_K_CONV_UNFOLD_MM);
            tj_k_conv_unfold_mm_f32(&cv, img, w, bias, fwd, work);
            free(work);
            work = conv_work(&cv, TJ_FLOAT32, TJ_K_CONV_MM_FOLD);
            tj_k_conv_mm_fold_f32(&cv, mat, w, NULL, gi, work);
            free(work);
            work = conv_work(&cv, TJ_FLOAT32, TJ_K_CONV_WEIGHT_GRAD);
            tj_k_conv_weight_grad_f32(&cv, img, mat, gw, work);
            free(work);
            cr_expect(worst_error(fwd, fwd64, nm) < 1e-5, "case %zu, %d threads, forward: %g", t, nt,
                      worst_error(fwd, fwd64, nm));
            cr_expect(worst_error(gi, gi64, ni) < 1e-5, "case %zu, %d threads, input gradient: %g", t, nt,
                      worst_error(gi, gi64, ni));
            cr_expect(worst_error(gw, gw64, nw) < 1e-5, "case %zu, %d threads, weight gradient: %g", t, nt,
                      worst_error(gw, gw64, nw));
            if (nt == 1) {
                memcpy(fwd1, fwd, sizeof(float) * (size_t)nm);
                memcpy(gi1, gi, sizeof(float) * (size_t)ni);
            }
            cr_expect(memcmp(fwd, fwd1, sizeof(float) * (size_t)nm) == 0, "case %zu: forward differs at %d threads",
                      t, nt);
            cr_expect(memcmp(gi, gi1, sizeof(float) * (size_t)ni) == 0,
                      "case %zu: input gradient differs at %d threads", t, nt);
        }
        free(img), free(mat), free(w), free(bias), free(img64), free(mat64), free(w64), free(bias64);
        free(fwd64), free(gi64), free(gw64), free(fwd1), free(gi1), free(fwd), free(gi), free(gw);
    }
}

/* The implicit weight gradient at 2 and 3 threads is bit for bit the sum,
 * in chunk order, of 4 * threads chunks' partial sums (tj_k_parallel's
 * split of the (sample, group) items), each summed in item order from the
 * items' own gradients: the same whichever thread ran a chunk. 11 samples
 * of 2 groups: 22 items in 8 chunks of 3 or 2 items, or 12 of 2 or 1. */
Test(conv, implicit_weight_grad_adds_the_chunks_partial_sums_in_chunk_order)
{
    if (!tj_k_conv_own_kernels())
        cr_skip_test("no AVX2 + FMA: float32 convolution runs on OpenBLAS, one sample at a time");
    const int64_t c[8] = {6, 10, 9, 7, 3, 1, 1, 2}, n = 11;
    tj_k_conv one = implicit_case(c, 1, 1);
    int64_t G = one.groups, img_size = G * 3 * 9 * 7, mat_size = G * 5 * 9 * 7, wsize = G * 5 * 3 * 3 * 3;
    int64_t per_group = wsize / G;
    uint64_t seed = 5;
    float *img = lcg_floats(n * img_size, &seed), *mat = lcg_floats(n * mat_size, &seed);
    float *item = malloc(sizeof(float) * (size_t)(n * wsize)), *gw = malloc(sizeof(float) * (size_t)wsize);
    float *want = malloc(sizeof(float) * (size_t)wsize), *part = malloc(sizeof(float) * (size_t)wsize);
    cr_assert(item && gw && want && part);
    void *work = conv_work(&one, TJ_FLOAT32, TJ_K_CONV_WEIGHT_GRAD);
    /* one sample on one thread: each group's slice is that item's gradient */
    for (int64_t s = 0; s < n; s++)
        tj_k_conv_weight_grad_f32(&one, img + s * img_size, mat + s * mat_size, item + s * wsize, work);
    free(work);
    for (int nt = 2; nt <= 3; nt++) {
        int64_t items = n * G, chunks = 4 * nt, q = items / chunks, r = items % chunks;
        memset(want, 0, sizeof(float) * (size_t)wsize);
        for (int64_t ch = 0; ch < chunks; ch++) {
            int64_t begin = ch * q + (ch < r ? ch : r), end = begin + q + (ch < r);
            memset(part, 0, sizeof(float) * (size_t)wsize);
            for (int64_t it = begin; it < end; it++) {
                int64_t s = it / G, g = it % G;
                for (int64_t i = g * per_group; i < (g + 1) * per_group; i++) part[i] += item[s * wsize + i];
            }
            for (int64_t i = 0; i < wsize; i++) want[i] += part[i];
        }
        tj_k_conv cv = implicit_case(c, n, nt);
        work = conv_work(&cv, TJ_FLOAT32, TJ_K_CONV_WEIGHT_GRAD);
        for (int rep = 0; rep < 3; rep++) {
            tj_k_conv_weight_grad_f32(&cv, img, mat, gw, work);
            for (int64_t i = 0; i < wsize; i++)
                cr_assert_eq(gw[i], want[i], "%d threads, run %d [%lld]: %.9g, want %.9g", nt, rep, (long long)i,
                             gw[i], want[i]);
        }
        free(work);
    }
    free(img), free(mat), free(item), free(gw), free(want), free(part);
}

/* The three implicit kernels of one call, for nested_convs: outputs
 * [forward, input gradient, weight gradient] of its own. */
typedef struct conv_call {
    const tj_k_conv *cv;
    const float *img, *mat, *w;
    float *out[3];
} conv_call;

static void run_conv_call(const conv_call *c)
{
    void *work = conv_work(c->cv, TJ_FLOAT32, TJ_K_CONV_UNFOLD_MM);
    tj_k_conv_unfold_mm_f32(c->cv, c->img, c->w, NULL, c->out[0], work);
    free(work);
    work = conv_work(c->cv, TJ_FLOAT32, TJ_K_CONV_MM_FOLD);
    tj_k_conv_mm_fold_f32(c->cv, c->mat, c->w, NULL, c->out[1], work);
    free(work);
    work = conv_work(c->cv, TJ_FLOAT32, TJ_K_CONV_WEIGHT_GRAD);
    tj_k_conv_weight_grad_f32(c->cv, c->img, c->mat, c->out[2], work);
    free(work);
}

static void nested_convs(void *ctx, int t, int64_t begin, int64_t end)
{
    (void)t;
    for (int64_t i = begin; i < end; i++) run_conv_call(&((const conv_call *)ctx)[i]);
}

/* Called inside a parallel loop (on both of its threads at once), the
 * implicit kernels run every item on the calling thread, which after its
 * own block takes the other blocks' items from the back (tj_k_parallel_steal):
 * the same bits as the call on its own at that thread count, the weight
 * gradient included (its chunks then run in another order on another
 * participant). 2 items at 4 threads: more threads than items. */
Test(conv, implicit_kernels_nested_in_a_parallel_loop_give_the_same_bits)
{
    const int64_t c[8] = {6, 10, 9, 7, 3, 1, 1, 2};
    for (int64_t n = 1; n <= 11; n += 10)
        for (int nt = 2; nt <= 4; nt++) {
            tj_k_conv cv = implicit_case(c, n, nt);
            const tj_k_im2col_geom *g = &cv.geom;
            int64_t G = cv.groups, R = cv.mat_channels;
            int64_t sizes[3] = {n * G * R * g->out_h * g->out_w, n * G * g->channels * g->height * g->width,
                                G * R * g->channels * g->kh * g->kw};
            uint64_t seed = 17;
            float *img = lcg_floats(sizes[1], &seed), *mat = lcg_floats(sizes[0], &seed), *w = lcg_floats(sizes[2], &seed);
            conv_call calls[3];
            for (int k = 0; k < 3; k++) {
                calls[k] = (conv_call){&cv, img, mat, w, {NULL}};
                for (int o = 0; o < 3; o++) {
                    calls[k].out[o] = malloc(sizeof(float) * (size_t)sizes[o]);
                    cr_assert_not_null(calls[k].out[o]);
                }
            }
            run_conv_call(&calls[0]);
            tj_k_parallel(2, 2, nested_convs, &calls[1]);
            for (int k = 1; k < 3; k++)
                for (int o = 0; o < 3; o++)
                    cr_expect(memcmp(calls[k].out[o], calls[0].out[o], sizeof(float) * (size_t)sizes[o]) == 0,
                              "batch %lld, %d threads, nested call %d: output %d differs", (long long)n, nt, k, o);
            for (int k = 0; k < 3; k++)
                for (int o = 0; o < 3; o++) free(calls[k].out[o]);
            free(img), free(mat), free(w);
        }
}

/* grad_weight of a grouped stride-2 convolution (the im2col path; enough
 * multiply-adds for the threads) at 1, 2 and 3 threads, with 14 (sample,
 * group) items split unevenly, equals a direct loop exactly: small integers
 * make every sum exact whatever its order. */
Test(conv, strided_weight_grad_matches_a_direct_loop_at_any_thread_count)
{
    const int64_t n = 7, ci = 16, co = 32, h = 17, k = 3, groups = 2, oh = 9, cg = ci / groups, og = co / groups;
    tj_tensor *x = pattern(4, (int64_t[]){n, ci, h, h}, 37, 7, 3);
    tj_tensor *w = pattern(4, (int64_t[]){co, cg, k, k}, 13, 5, 2);
    tj_tensor *gy = pattern(4, (int64_t[]){n, co, oh, oh}, 11, 7, 3);
    const float *px = tj_tensor_data(x), *pg = tj_tensor_data(gy);
    double *want = calloc((size_t)(co * cg * k * k), sizeof(double));
    cr_assert_not_null(want);
    for (int64_t o = 0; o < co; o++)
        for (int64_t c = 0; c < cg; c++)
            for (int64_t i = 0; i < k; i++)
                for (int64_t j = 0; j < k; j++) {
                    double acc = 0;
                    for (int64_t b = 0; b < n; b++)
                        for (int64_t oy = 0; oy < oh; oy++)
                            for (int64_t ox = 0; ox < oh; ox++) {
                                int64_t y = oy * 2 - 1 + i, xx = ox * 2 - 1 + j;
                                if (y < 0 || y >= h || xx < 0 || xx >= h) continue;
                                acc += (double)pg[((b * co + o) * oh + oy) * oh + ox] *
                                       px[((b * ci + o / og * cg + c) * h + y) * h + xx];
                            }
                    want[((o * cg + c) * k + i) * k + j] = acc;
                }
    for (int nt = 1; nt <= 3; nt++) {
        tj_set_num_threads(nt);
        tj_tensor *g[3];
        bool mask[3] = {false, true, false};
        cr_assert_eq(tj_convolution_backward(gy, x, w, NULL, 0, (int64_t[]){2, 2}, ONE, ONE, false, ZERO, groups, mask,
                                             &g[0], &g[1], &g[2]),
                     TJ_OK, "%s", tj_last_error());
        expect_shape(g[1], 4, (int64_t[]){co, cg, k, k});
        for (int64_t i = 0; i < co * cg * k * k; i++)
            cr_assert_eq(tj_tensor_item_at(g[1], i), want[i], "%d threads [%lld]: %g, want %g", nt, (long long)i,
                         tj_tensor_item_at(g[1], i), want[i]);
    }
    free(want);
}

/* Max pooling of window (oy, ox) of plane pl of x (any strides) by
 * PyTorch's rule, in double: the first in-bounds position to start with,
 * a larger value or a nan takes over. */
static void naive_max(tj_tensor *x, int64_t pl, const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *d,
                      int64_t oy, int64_t ox, double *value, int64_t *index)
{
    int64_t h = tj_tensor_shape(x)[2], w = tj_tensor_shape(x)[3];
    int64_t y0 = oy * s[0] - p[0], x0 = ox * s[1] - p[1];
    while (y0 < 0) y0 += d[0];
    while (x0 < 0) x0 += d[1];
    *value = -INFINITY;
    *index = y0 * w + x0;
    for (int64_t i = 0; i < k[0]; i++)
        for (int64_t j = 0; j < k[1]; j++) {
            int64_t y = oy * s[0] - p[0] + i * d[0], xx = ox * s[1] - p[1] + j * d[1];
            if (y < 0 || y >= h || xx < 0 || xx >= w) continue;
            double v = tj_tensor_item_at(x, (pl * h + y) * w + xx);
            if (v > *value || isnan(v)) *value = v, *index = y * w + xx;
        }
}

/* Average of window (oy, ox) of plane pl, PyTorch's divisor rules. */
static double naive_avg(tj_tensor *x, int64_t pl, const int64_t *k, const int64_t *s, const int64_t *p,
                        bool count_include_pad, int64_t divisor_override, int64_t oy, int64_t ox)
{
    int64_t h = tj_tensor_shape(x)[2], w = tj_tensor_shape(x)[3];
    int64_t y0 = oy * s[0] - p[0], x0 = ox * s[1] - p[1];
    int64_t y1 = y0 + k[0] < h + p[0] ? y0 + k[0] : h + p[0], x1 = x0 + k[1] < w + p[1] ? x0 + k[1] : w + p[1];
    int64_t padded = (y1 - y0) * (x1 - x0);
    if (y0 < 0) y0 = 0;
    if (x0 < 0) x0 = 0;
    if (y1 > h) y1 = h;
    if (x1 > w) x1 = w;
    if (y0 >= y1 || x0 >= x1) return 0;
    double sum = 0;
    int64_t isum = 0; /* int64 sums and divides in integers (truncating) */
    for (int64_t y = y0; y < y1; y++)
        for (int64_t xx = x0; xx < x1; xx++) {
            double v = tj_tensor_item_at(x, (pl * h + y) * w + xx);
            sum += v;
            isum += (int64_t)v;
        }
    int64_t div = divisor_override ? divisor_override : count_include_pad ? padded : (y1 - y0) * (x1 - x0);
    tj_dtype dt = tj_tensor_dtype(x);
    double mean = dt == TJ_INT64 ? (double)(isum / div) : sum / (double)div;
    return dt == TJ_FLOAT32 ? (double)(float)mean : mean;
}

/* [4, 16, h, w] of dtype dt: floats with many ties, some nan and -inf
 * (max pooling) or small integers. */
static tj_tensor *pool_input(tj_dtype dt, int64_t h, int64_t w, bool specials)
{
    tj_tensor *x = tj_to_copy(pattern(4, (int64_t[]){4, 16, h, w}, 7919, 23, 11), dt);
    cr_assert_not_null(x);
    for (int64_t i = 0; specials && i < tj_tensor_numel(x); i += 97) {
        if (dt == TJ_FLOAT32) ((float *)tj_tensor_data(x))[i] = i % 2 ? NAN : -INFINITY;
        else ((double *)tj_tensor_data(x))[i] = i % 2 ? NAN : -INFINITY;
    }
    return x;
}

/* A pooling geometry: kernel, stride, padding, dilation, ceil_mode. */
typedef struct pool_geometry {
    int64_t k[2], s[2], p[2], d[2];
    bool ceil;
} pool_geometry;

/* max_pool2d_with_indices and its backward on x against naive_max and a
 * scatter in double, exactly. */
static void expect_max_pool_loops(tj_tensor *x, const pool_geometry *g, const char *what)
{
    tj_tensor *out = NULL, *idx = NULL;
    cr_assert_eq(tj_max_pool2d_with_indices(x, g->k, g->s, g->p, g->d, g->ceil, &out, &idx), TJ_OK, "%s",
                 tj_last_error());
    int64_t planes = 64, oh = tj_tensor_shape(out)[2], ow = tj_tensor_shape(out)[3];
    int64_t h = tj_tensor_shape(x)[2], w = tj_tensor_shape(x)[3];
    tj_tensor *go = tj_to_copy(pattern(4, tj_tensor_shape(out), 13, 29, 14), tj_tensor_dtype(x));
    tj_tensor *gi = tj_max_pool2d_with_indices_backward(go, x, g->k, g->s, g->p, g->d, g->ceil, idx);
    cr_assert_not_null(gi, "%s", tj_last_error());
    double *gi_want = calloc((size_t)(planes * h * w), sizeof(double));
    cr_assert_not_null(gi_want);
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                int64_t at = (pl * oh + oy) * ow + ox, want_idx;
                double want, got = tj_tensor_item_at(out, at), got_idx = tj_tensor_item_at(idx, at);
                naive_max(x, pl, g->k, g->s, g->p, g->d, oy, ox, &want, &want_idx);
                bool same = isnan(want) ? isnan(got) : got == want;
                cr_assert(same && got_idx == (double)want_idx, "%s, output %lld: %g at %g, want %g at %lld", what,
                          (long long)at, got, got_idx, want, (long long)want_idx);
                gi_want[pl * h * w + want_idx] += tj_tensor_item_at(go, at);
            }
    for (int64_t i = 0; i < planes * h * w; i++)
        cr_assert_eq(tj_tensor_item_at(gi, i), gi_want[i], "%s, grad_input [%lld]: %g, want %g", what, (long long)i,
                     tj_tensor_item_at(gi, i), gi_want[i]);
    free(gi_want);
}

/* Max pooling with indices and its backward at 1 and 2 threads against
 * window loops, on 64 planes large enough for two threads: the 2 x 2 plane
 * kernel and its scatter-free backward, the general plane kernel, the tap
 * loop (a transposed input; float64) and the scatter. */
Test(pool, max_pool_and_backward_match_window_loops_at_one_and_two_threads)
{
    const pool_geometry cases[] = {
        {{2, 2}, {2, 2}, {0, 0}, {1, 1}, false},
        {{3, 3}, {2, 2}, {1, 1}, {1, 1}, true},
        {{3, 2}, {1, 2}, {1, 0}, {2, 1}, false},
    };
    for (int nt = 1; nt <= 2; nt++) {
        tj_set_num_threads(nt);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (int f64 = 0; f64 < 2; f64++)
                for (int transpose = 0; transpose < 2; transpose++) {
                    tj_tensor *x = pool_input(f64 ? TJ_FLOAT64 : TJ_FLOAT32, 34, 37, true);
                    if (transpose) x = tj_transpose(x, 2, 3);
                    char what[96];
                    snprintf(what, sizeof what, "%d threads, case %zu, float%d%s", nt, c, f64 ? 64 : 32,
                             transpose ? ", transposed" : "");
                    expect_max_pool_loops(x, &cases[c], what);
                }
    }
}

/* Average pooling of float32, float64 and int64 (count_include_pad on and
 * off, a divisor_override) at 1 and 2 threads against window loops. */
Test(pool, avg_pool_matches_window_loops_at_one_and_two_threads)
{
    const tj_dtype dtypes[3] = {TJ_FLOAT32, TJ_FLOAT64, TJ_INT64};
    int64_t k[2] = {3, 3}, s[2] = {2, 2}, p[2] = {1, 1};
    for (int nt = 1; nt <= 2; nt++) {
        tj_set_num_threads(nt);
        for (int t = 0; t < 3; t++)
            for (int variant = 0; variant < 3; variant++) {
                int64_t divisor = variant == 2 ? 5 : 0;
                bool include = variant != 1;
                tj_tensor *x = pool_input(dtypes[t], 34, 37, false);
                tj_tensor *a = tj_avg_pool2d(x, k, s, p, true, include, divisor);
                cr_assert_not_null(a, "%s", tj_last_error());
                int64_t oh = tj_tensor_shape(a)[2], ow = tj_tensor_shape(a)[3];
                for (int64_t pl = 0; pl < 64; pl++)
                    for (int64_t oy = 0; oy < oh; oy++)
                        for (int64_t ox = 0; ox < ow; ox++) {
                            double got = tj_tensor_item_at(a, (pl * oh + oy) * ow + ox);
                            double want = naive_avg(x, pl, k, s, p, include, divisor, oy, ox);
                            cr_assert_eq(got, want, "%d threads, %s, variant %d, output %lld: %.9g, want %.9g", nt,
                                         tj_dtype_name(dtypes[t]), variant, (long long)((pl * oh + oy) * ow + ox), got,
                                         want);
                        }
            }
    }
}
