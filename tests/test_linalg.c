/* mm, bmm, addmm (BLAS-backed kernels) and the matmul / linear composites.
 *
 * Inputs hold small integers, so every product is exact in float32 and the
 * reference is a naive triple loop in this file; the int64 addmm reference
 * and the graph structures were checked against PyTorch 1.13 (make_fx). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tjit/tjit.h"

/* A contiguous float32 tensor with small integer values. */
static tj_tensor *ints_f32(int ndim, const int64_t *shape, int seed)
{
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT32, ndim, shape);
    float *p = tj_tensor_data(t);
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) p[i] = (float)((i * 7 + seed * 13) % 9 - 4);
    return t;
}

/* Element (b, i, j) of a [B, R, C] (or [R, C], b = 0) tensor of any strides. */
static double at3(tj_tensor *t, int64_t b, int64_t i, int64_t j)
{
    int nd = tj_tensor_ndim(t);
    const int64_t *s = tj_tensor_strides(t);
    int64_t off = (nd == 3 ? b * s[0] : 0) + i * s[nd - 2] + j * s[nd - 1];
    return ((const float *)tj_tensor_data(t))[off];
}

/* Checks c == a @ b exactly, batched when c is 3-D. */
static void expect_product(tj_tensor *c, tj_tensor *a, tj_tensor *b)
{
    cr_assert_not_null(c, "%s", tj_last_error());
    int nd = tj_tensor_ndim(c);
    const int64_t *sc = tj_tensor_shape(c);
    int64_t batch = nd == 3 ? sc[0] : 1, m = sc[nd - 2], n = sc[nd - 1], k = tj_tensor_shape(a)[nd - 1];
    for (int64_t bi = 0; bi < batch; bi++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double ref = 0;
                for (int64_t p = 0; p < k; p++) ref += at3(a, bi, i, p) * at3(b, bi, p, j);
                cr_assert_eq(at3(c, bi, i, j), ref, "(%ld, %ld, %ld): %g != %g", (long)bi, (long)i, (long)j,
                             at3(c, bi, i, j), ref);
            }
}

/* Allocations made by one mm call (the counter counts cached blocks too);
 * the result stays with the caller's scope. */
static uint64_t allocations_of_mm(tj_tensor *a, tj_tensor *b)
{
    tj_debug_fail_allocation(0);
    tj_tensor *c = tj_mm(a, b);
    uint64_t n = tj_debug_fail_allocation(0);
    cr_assert_not_null(c, "%s", tj_last_error());
    return n;
}

Test(mm, multiplies_contiguous_matrices)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *a = ints_f32(2, (int64_t[]){3, 4}, 1), *b = ints_f32(2, (int64_t[]){4, 5}, 2);
    expect_product(tj_mm(a, b), a, b);
    tj_scope_end(s);
}

Test(mm, reads_transposed_and_sliced_operands_without_a_copy)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *a = ints_f32(2, (int64_t[]){30, 40}, 1), *b = ints_f32(2, (int64_t[]){40, 50}, 2);
    tj_tensor *at_src = ints_f32(2, (int64_t[]){40, 30}, 3), *bt_src = ints_f32(2, (int64_t[]){50, 40}, 4);
    tj_tensor *at = tj_t(at_src), *bt = tj_t(bt_src); /* column-major views */
    tj_tensor *wide = ints_f32(2, (int64_t[]){30, 64}, 5);
    tj_tensor *cols = tj_slice(wide, 1, true, 10, true, 50, 1); /* [30, 40], row stride 64 */
    uint64_t base = allocations_of_mm(a, b);
    cr_expect_eq(allocations_of_mm(at, b), base);
    cr_expect_eq(allocations_of_mm(a, bt), base);
    cr_expect_eq(allocations_of_mm(at, bt), base);
    cr_expect_eq(allocations_of_mm(cols, b), base);
    expect_product(tj_mm(at, bt), at, bt);
    expect_product(tj_mm(cols, bt), cols, bt);
    tj_scope_end(s);
}

Test(mm, copies_an_operand_blas_cannot_read_once)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *big = ints_f32(2, (int64_t[]){12, 16}, 1), *b = ints_f32(2, (int64_t[]){8, 5}, 2);
    tj_tensor *a = tj_slice(tj_slice(big, 0, true, 0, true, 12, 2), 1, true, 0, true, 16, 2); /* [6, 8], strides 32, 2 */
    tj_tensor *dense = tj_contiguous(a);
    cr_expect_eq(allocations_of_mm(a, b), allocations_of_mm(dense, b) + 1);
    expect_product(tj_mm(a, b), a, b);
    tj_scope_end(s);
}

Test(mm, reads_a_broadcast_row_operand_through_one_copy)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *row = ints_f32(2, (int64_t[]){1, 6}, 1), *b = ints_f32(2, (int64_t[]){6, 3}, 2);
    tj_tensor *a = tj_expand(row, (int64_t[]){4, 6}, 2); /* row stride 0 */
    expect_product(tj_mm(a, b), a, b);
    tj_scope_end(s);
}

Test(mm, empty_inner_dim_gives_zeros_and_nonfinite_values_propagate)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *a = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){2, 0}), *b = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){0, 3});
    tj_tensor *c = tj_mm(a, b);
    cr_assert_not_null(c);
    for (int i = 0; i < 6; i++) cr_expect_eq(tj_tensor_item_at(c, i), 0.0);
    float x[4] = {INFINITY, 1, NAN, 2}, y[4] = {0, 1, 1, 1};
    tj_tensor *d = tj_mm(tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){2, 2}, x),
                         tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){2, 2}, y));
    cr_expect(isnan(tj_tensor_item_at(d, 0)), "inf * 0 is nan");
    cr_expect(isinf(tj_tensor_item_at(d, 1)));
    cr_expect(isnan(tj_tensor_item_at(d, 2)) && isnan(tj_tensor_item_at(d, 3)), "nan propagates");
    tj_scope_end(s);
}

Test(mm, reports_mismatched_shapes_with_both_shapes)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *a = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){3, 4}), *b = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){5, 6});
    cr_expect_null(tj_mm(a, b));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    cr_expect_str_eq(tj_last_error(), "aten::mm: mat1 [3, 4] and mat2 [5, 6] cannot be multiplied (4 != 5)");
    cr_expect_null(tj_mm(tj_tensor_empty(TJ_FLOAT32, 3, (int64_t[]){2, 3, 4}), b));
    cr_expect_str_eq(tj_last_error(), "aten::mm: mat1 [2, 3, 4] must be 2-D");
    tj_scope_end(s);
}

Test(mm, rejects_mixed_and_bool_dtypes)
{
    tj_scope *s = tj_scope_begin();
    int64_t sh[2] = {2, 2};
    cr_expect_null(tj_mm(tj_tensor_empty(TJ_FLOAT32, 2, sh), tj_tensor_empty(TJ_FLOAT64, 2, sh)));
    cr_expect_eq(tj_last_status(), TJ_ERR_DTYPE);
    cr_expect_str_eq(tj_last_error(), "aten::mm: mat1 (float32) and mat2 (float64) must have the same dtype");
    cr_expect_null(tj_mm(tj_tensor_empty(TJ_BOOL, 2, sh), tj_tensor_empty(TJ_BOOL, 2, sh)));
    cr_expect_eq(tj_last_status(), TJ_ERR_DTYPE);
    tj_scope_end(s);
}

Test(bmm, multiplies_a_broadcast_batch_in_place_and_many_small_items)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *one = ints_f32(3, (int64_t[]){1, 5, 6}, 1), *b = ints_f32(3, (int64_t[]){4, 6, 3}, 2);
    tj_tensor *a = tj_expand(one, (int64_t[]){4, 5, 6}, 3); /* batch stride 0 */
    expect_product(tj_bmm(a, b), a, b);
    /* 600 products of 16 x 32 x 16: spread over threads, OpenBLAS serial in each */
    tj_tensor *x = ints_f32(3, (int64_t[]){600, 16, 32}, 3), *y = ints_f32(3, (int64_t[]){600, 32, 16}, 4);
    expect_product(tj_bmm(x, tj_transpose(tj_contiguous(tj_transpose(y, 1, 2)), 1, 2)), x, y);
    tj_scope_end(s);
}

/* Products on every kernel (matrix-vector forms for few rows or columns or
 * long rows, our GEMM kernel, BLAS): sizes that leave tails in every block
 * of the kernels (rows by 4 and 6, columns by 16, 32, 64 and chunks of
 * 2048, sums by 128, vectors by 4), operands contiguous, transposed and
 * with a row stride, on 1 and 2 threads. */
Test(mm, products_of_every_kernel_take_every_operand_layout)
{
    tj_scope *s = tj_scope_begin();
    int saved = tj_get_num_threads();
    const int64_t shapes[][3] = {{1, 37, 70}, {70, 37, 1}, {1, 37, 1}, {1, 784, 259}, {259, 784, 1}, {1, 5, 2100},
                                 {2100, 5, 1}, {1, 1, 33}, {33, 1, 1}, {2, 37, 70}, {3, 300, 70}, {4, 784, 259},
                                 {70, 37, 2}, {259, 300, 3}, {70, 784, 4}, {3, 2, 4}, {4, 5, 2100},
                                 /* many rows, long rows: x @ W^T on the row form (passes of at most
                                  * 1024 columns, panels of 96 vectors for 1024) */
                                 {37, 300, 45}, {45, 300, 37}, {100, 1024, 8}, {9, 2100, 70},
                                 /* the GEMM kernel: rows by 6, columns by 64, sums by 128 */
                                 {13, 300, 130}, {64, 33, 70}, {7, 129, 257}, {300, 40, 33}};
    for (int threads = 1; threads <= 2; threads++) {
        tj_set_num_threads(threads);
        for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
            int64_t m = shapes[c][0], k = shapes[c][1], n = shapes[c][2];
            tj_tensor *a = ints_f32(2, (int64_t[]){m, k}, 1), *b = ints_f32(2, (int64_t[]){k, n}, 2);
            tj_tensor *at = tj_t(ints_f32(2, (int64_t[]){k, m}, 3)), *bt = tj_t(ints_f32(2, (int64_t[]){n, k}, 4));
            tj_tensor *a_wide = tj_slice(ints_f32(2, (int64_t[]){m, k + 9}, 5), 1, true, 3, true, k + 3, 1);
            tj_tensor *b_wide = tj_slice(ints_f32(2, (int64_t[]){k, n + 7}, 6), 1, true, 7, true, n + 7, 1);
            tj_tensor *as[3] = {a, at, a_wide}, *bs[3] = {b, bt, b_wide};
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) expect_product(tj_mm(as[i], bs[j]), as[i], bs[j]);
        }
    }
    tj_set_num_threads(saved);
    tj_scope_end(s);
}

Test(mm, one_row_float64_product_matches_float32)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *a = ints_f32(2, (int64_t[]){1, 300}, 1), *b = ints_f32(2, (int64_t[]){300, 45}, 2);
    tj_tensor *bt = tj_t(ints_f32(2, (int64_t[]){45, 300}, 3));
    tj_tensor *r32[2] = {tj_mm(a, b), tj_mm(tj_t(b), tj_t(a))}, *r64[2];
    r64[0] = tj_mm(tj_to_copy(a, TJ_FLOAT64), tj_to_copy(b, TJ_FLOAT64));
    r64[1] = tj_mm(tj_t(tj_to_copy(b, TJ_FLOAT64)), tj_t(tj_to_copy(a, TJ_FLOAT64))); /* one column */
    tj_tensor *c32 = tj_mm(a, bt), *c64 = tj_mm(tj_to_copy(a, TJ_FLOAT64), tj_t(tj_to_copy(tj_t(bt), TJ_FLOAT64)));
    for (int r = 0; r < 2; r++) {
        cr_assert(r32[r] && r64[r], "%s", tj_last_error());
        cr_expect_eq(tj_tensor_dtype(r64[r]), TJ_FLOAT64);
        for (int64_t i = 0; i < 45; i++) cr_expect_eq(tj_tensor_item_at(r64[r], i), tj_tensor_item_at(r32[r], i));
    }
    for (int64_t i = 0; i < 45; i++) cr_expect_eq(tj_tensor_item_at(c64, i), tj_tensor_item_at(c32, i));
    expect_product(r32[0], a, b);
    tj_scope_end(s);
}

Test(mm, one_row_product_propagates_nan_and_inf_of_its_operands)
{
    tj_scope *s = tj_scope_begin();
    float x[3] = {1, NAN, 2}, w[6] = {1, 2, 3, 4, 5, 6}, v[3] = {INFINITY, 0, 0};
    tj_tensor *xt = tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){1, 3}, x);
    tj_tensor *wt = tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){3, 2}, w);
    tj_tensor *vt = tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){1, 3}, v);
    tj_tensor *c = tj_mm(xt, wt), *d = tj_mm(vt, wt), *e = tj_mm(tj_t(wt), tj_t(vt));
    cr_assert(c && d && e, "%s", tj_last_error());
    cr_expect(isnan(tj_tensor_item_at(c, 0)) && isnan(tj_tensor_item_at(c, 1)));
    cr_expect(isinf(tj_tensor_item_at(d, 0)) && isinf(tj_tensor_item_at(d, 1)));
    cr_expect(isinf(tj_tensor_item_at(e, 0)) && isinf(tj_tensor_item_at(e, 1)));
    tj_scope_end(s);
}

Test(bmm, skinny_items_over_broadcast_and_strided_batches)
{
    tj_scope *s = tj_scope_begin();
    int saved = tj_get_num_threads();
    for (int threads = 1; threads <= 2; threads++) {
        tj_set_num_threads(threads);
        /* few large items (threads inside each product), many small ones (threads over the batch) */
        const int64_t shapes[][4] = {{3, 1, 700, 130}, {3, 130, 700, 1}, {400, 1, 24, 40}, {400, 40, 24, 1},
                                     {3, 3, 700, 130}, {5, 130, 70, 4}};
        for (int c = 0; c < 6; c++) {
            int64_t B = shapes[c][0], m = shapes[c][1], k = shapes[c][2], n = shapes[c][3];
            tj_tensor *a = ints_f32(3, (int64_t[]){B, m, k}, 1), *b = ints_f32(3, (int64_t[]){B, k, n}, 2);
            tj_tensor *a0 = tj_expand(ints_f32(3, (int64_t[]){1, m, k}, 3), (int64_t[]){B, m, k}, 3);
            tj_tensor *bt = tj_transpose(ints_f32(3, (int64_t[]){B, n, k}, 4), 1, 2);
            expect_product(tj_bmm(a, b), a, b);
            expect_product(tj_bmm(a0, bt), a0, bt);
            expect_product(tj_bmm(tj_transpose(tj_transpose(a, 1, 2), 1, 2), bt), a, bt);
        }
    }
    tj_set_num_threads(saved);
    tj_scope_end(s);
}

Test(bmm, reports_different_batch_sizes)
{
    tj_scope *s = tj_scope_begin();
    cr_expect_null(tj_bmm(tj_tensor_empty(TJ_FLOAT32, 3, (int64_t[]){2, 2, 3}),
                          tj_tensor_empty(TJ_FLOAT32, 3, (int64_t[]){3, 3, 2})));
    cr_expect_str_eq(tj_last_error(), "aten::bmm: batch1 [2, 2, 3] and batch2 [3, 3, 2] have different batch sizes (2 != 3)");
    tj_scope_end(s);
}

Test(addmm, beta_zero_ignores_nan_in_self)
{
    tj_scope *s = tj_scope_begin();
    float nan4[4] = {NAN, NAN, NAN, NAN};
    tj_tensor *self = tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){2, 2}, nan4);
    tj_tensor *a = ints_f32(2, (int64_t[]){2, 3}, 1), *b = ints_f32(2, (int64_t[]){3, 2}, 2);
    tj_tensor *c = tj_addmm(self, a, b, tj_v_int(0), tj_v_int(1)), *ref = tj_mm(a, b);
    cr_assert_not_null(c, "%s", tj_last_error());
    for (int i = 0; i < 4; i++) cr_expect_eq(tj_tensor_item_at(c, i), tj_tensor_item_at(ref, i));
    tj_scope_end(s);
}

Test(addmm, one_row_and_one_column_ignore_nan_self_with_beta_zero_and_add_the_bias_otherwise)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = ints_f32(2, (int64_t[]){1, 50}, 1), *w = ints_f32(2, (int64_t[]){20, 50}, 2);
    tj_tensor *bias = ints_f32(1, (int64_t[]){20}, 3), *col_bias = ints_f32(2, (int64_t[]){20, 1}, 4);
    tj_tensor *nan_row = tj_full((int64_t[]){1, 20}, 2, tj_v_float(NAN), TJ_FLOAT32);
    tj_tensor *nan_col = tj_full((int64_t[]){20, 1}, 2, tj_v_float(NAN), TJ_FLOAT32);
    tj_tensor *row = tj_mm(x, tj_t(w)); /* [1, 20] */
    tj_tensor *r0 = tj_addmm(nan_row, x, tj_t(w), tj_v_int(0), tj_v_int(1));
    tj_tensor *c0 = tj_addmm(nan_col, w, tj_t(x), tj_v_float(0.0), tj_v_int(1));
    tj_tensor *r1 = tj_addmm(bias, x, tj_t(w), tj_v_float(0.5), tj_v_float(2.0));
    tj_tensor *c1 = tj_addmm(col_bias, w, tj_t(x), tj_v_float(0.5), tj_v_float(2.0));
    cr_assert(r0 && c0 && r1 && c1, "%s", tj_last_error());
    expect_product(row, x, tj_t(w));
    for (int64_t j = 0; j < 20; j++) {
        double p = tj_tensor_item_at(row, j);
        cr_expect_eq(tj_tensor_item_at(r0, j), p);
        cr_expect_eq(tj_tensor_item_at(c0, j), p);
        cr_expect_eq(tj_tensor_item_at(r1, j), 0.5 * tj_tensor_item_at(bias, j) + 2.0 * p);
        cr_expect_eq(tj_tensor_item_at(c1, j), 0.5 * tj_tensor_item_at(col_bias, j) + 2.0 * p);
    }
    tj_scope_end(s);
}

/* PyTorch 1.13: addmm([[nan, 1]], [[1.5, -2]], [[1.5, -2], [0, -0]], beta=nan)
 * is [[nan, nan]], and beta=inf gives [[nan, inf]] (beta * self: nan * 1 is
 * nan). A one-row product whose mat1 is strided went to OpenBLAS's
 * transposed sgemv, which takes a nan beta for 0: it returned the product
 * [[2.25, -3]], dropping self, where a contiguous mat1 gave nan. */
Test(addmm, nan_and_inf_beta_reach_self_whatever_the_operand_layout)
{
    tj_scope *s = tj_scope_begin();
    const float self_v[2] = {NAN, 1}, m1[2] = {1.5f, -2}, m2[4] = {1.5f, -2, 0, -0.0f};
    tj_tensor *self = tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){1, 2}, self_v);
    tj_tensor *mat1 = tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){1, 2}, m1);
    tj_tensor *mat2 = tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){2, 2}, m2);
    /* mat1 with stride 2 along its row: the same values */
    tj_tensor *wide = tj_zeros((int64_t[]){1, 4}, 2, TJ_FLOAT32);
    tj_tensor *mat1_strided = tj_slice(wide, 1, true, 0, true, INT64_MAX, 2);
    cr_assert_not_null(tj_copy_(mat1_strided, mat1), "%s", tj_last_error());
    tj_tensor *m1s[2] = {mat1, mat1_strided};
    for (int layout = 0; layout < 2; layout++) {
        tj_tensor *r_nan = tj_addmm(self, m1s[layout], mat2, tj_v_float(NAN), tj_v_int(1));
        tj_tensor *r_inf = tj_addmm(self, m1s[layout], mat2, tj_v_float(INFINITY), tj_v_int(1));
        cr_assert(r_nan && r_inf, "%s", tj_last_error());
        cr_expect(isnan(tj_tensor_item_at(r_nan, 0)) && isnan(tj_tensor_item_at(r_nan, 1)),
                  "beta nan, mat1 layout %d: [%g, %g]", layout, tj_tensor_item_at(r_nan, 0), tj_tensor_item_at(r_nan, 1));
        cr_expect(isnan(tj_tensor_item_at(r_inf, 0)), "beta inf, layout %d", layout);
        cr_expect_eq(tj_tensor_item_at(r_inf, 1), INFINITY, "beta inf, layout %d", layout);
    }
    tj_scope_end(s);
}

Test(addmm, gemm_kernel_sums_in_blocks_with_beta_and_alpha_and_ignores_nan_self_with_beta_zero)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *a = ints_f32(2, (int64_t[]){20, 300}, 1), *b = ints_f32(2, (int64_t[]){300, 70}, 2), *ab = tj_mm(a, b);
    tj_tensor *bias = ints_f32(1, (int64_t[]){70}, 3);
    tj_tensor *nan_self = tj_full((int64_t[]){20, 70}, 2, tj_v_float(NAN), TJ_FLOAT32);
    tj_tensor *c = tj_addmm(bias, a, b, tj_v_float(0.5), tj_v_float(2.0));
    tj_tensor *d = tj_addmm(nan_self, a, b, tj_v_int(0), tj_v_int(1));
    cr_assert(c && d, "%s", tj_last_error());
    expect_product(ab, a, b);
    for (int64_t i = 0; i < 20; i++)
        for (int64_t j = 0; j < 70; j++) {
            double p = tj_tensor_item_at(ab, i * 70 + j);
            cr_expect_eq(tj_tensor_item_at(c, i * 70 + j), 0.5 * tj_tensor_item_at(bias, j) + 2.0 * p);
            cr_expect_eq(tj_tensor_item_at(d, i * 70 + j), p);
        }
    tj_scope_end(s);
}

Test(addmm, alpha_zero_ignores_nan_and_inf_in_the_matrices_on_every_kernel)
{
    /* PyTorch (BLAS): alpha = 0 gives beta * self without reading mat1 and
     * mat2; shapes for the matrix-vector kernels (one row), our GEMM kernel,
     * BLAS (narrow, and float64), at 1 and 2 threads */
    const int64_t shapes[][3] = {{1, 5, 64}, {2, 300, 384}, {100, 64, 100}, {64, 5, 2}, {512, 128, 384}};
    for (int nt = 1; nt <= 2; nt++)
        for (int d = 0; d < 2; d++)
            for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
                tj_scope *s = tj_scope_begin();
                tj_set_num_threads(nt);
                tj_dtype dt = d ? TJ_FLOAT64 : TJ_FLOAT32;
                int64_t m = shapes[c][0], k = shapes[c][1], n = shapes[c][2];
                tj_tensor *a = tj_full((int64_t[]){m, k}, 2, tj_v_float(NAN), dt);
                tj_tensor *b = tj_full((int64_t[]){n, k}, 2, tj_v_float(INFINITY), dt);
                tj_tensor *self = tj_full((int64_t[]){n}, 1, tj_v_float(2.0), dt);
                tj_tensor *r = tj_addmm(self, a, tj_t(b), tj_v_float(0.5), tj_v_int(0));
                tj_tensor *z = tj_addmm(self, a, tj_t(b), tj_v_int(0), tj_v_int(0));
                cr_assert(r && z, "%s", tj_last_error());
                for (int64_t i = 0; i < m * n; i++) {
                    cr_assert_eq(tj_tensor_item_at(r, i), 1.0, "%s [%lld, %lld, %lld], %d threads: element %lld is %g",
                                 d ? "f64" : "f32", (long long)m, (long long)k, (long long)n, nt, (long long)i,
                                 tj_tensor_item_at(r, i));
                    cr_assert_eq(tj_tensor_item_at(z, i), 0.0);
                }
                tj_scope_end(s);
            }
}

Test(addmm, broadcasts_row_column_and_scalar_bias_with_beta_and_alpha)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *a = ints_f32(2, (int64_t[]){3, 4}, 1), *b = ints_f32(2, (int64_t[]){4, 5}, 2), *ab = tj_mm(a, b);
    tj_tensor *biases[3] = {ints_f32(1, (int64_t[]){5}, 3), ints_f32(2, (int64_t[]){3, 1}, 4), tj_tensor_scalar_f32(2.5f)};
    for (int k = 0; k < 3; k++) {
        tj_tensor *c = tj_addmm(biases[k], a, b, tj_v_float(0.5), tj_v_float(2.0));
        cr_assert_not_null(c, "%s", tj_last_error());
        for (int64_t i = 0; i < 3; i++)
            for (int64_t j = 0; j < 5; j++) {
                double bias = k == 0 ? tj_tensor_item_at(biases[0], j) : k == 1 ? tj_tensor_item_at(biases[1], i) : 2.5;
                cr_expect_eq(tj_tensor_item_at(c, i * 5 + j), 0.5 * bias + 2.0 * tj_tensor_item_at(ab, i * 5 + j));
            }
    }
    cr_expect_null(tj_addmm(ints_f32(1, (int64_t[]){3}, 1), a, b, tj_v_int(1), tj_v_int(1)));
    cr_expect_str_eq(tj_last_error(), "aten::addmm: self [3] cannot be broadcast to [3, 5]");
    tj_scope_end(s);
}

Test(addmm, int64_truncates_float_scalars_like_pytorch)
{
    /* torch.addmm(ones(2, long), arange(6).view(2, 3), arange(6).view(3, 2),
     * beta=0.5, alpha=1.5) -> [[10, 13], [28, 40]] (beta 0, alpha 1);
     * beta=2, alpha=3 with self [1, 1] -> [[32, 41], [86, 122]] */
    tj_scope *s = tj_scope_begin();
    int64_t av[6] = {0, 1, 2, 3, 4, 5}, one[2] = {1, 1};
    tj_tensor *a = tj_tensor_from_data(TJ_INT64, 2, (int64_t[]){2, 3}, av);
    tj_tensor *b = tj_tensor_from_data(TJ_INT64, 2, (int64_t[]){3, 2}, av);
    tj_tensor *self = tj_tensor_from_data(TJ_INT64, 1, (int64_t[]){2}, one);
    tj_tensor *c = tj_addmm(self, a, b, tj_v_float(0.5), tj_v_float(1.5));
    tj_tensor *d = tj_addmm(self, a, b, tj_v_int(2), tj_v_int(3));
    cr_assert_not_null(c, "%s", tj_last_error());
    cr_assert_not_null(d, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_dtype(c), TJ_INT64);
    const int64_t ref_c[4] = {10, 13, 28, 40}, ref_d[4] = {32, 41, 86, 122};
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(((int64_t *)tj_tensor_data(c))[i], ref_c[i]);
        cr_expect_eq(((int64_t *)tj_tensor_data(d))[i], ref_d[i]);
    }
    tj_scope_end(s);
}

/* ---- matmul ---- */

static tj_tensor *ints_nd(int ndim, const int64_t *shape, int seed) { return ints_f32(ndim, shape, seed); }

Test(matmul, vector_cases_give_pytorch_shapes_and_values)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *v = ints_nd(1, (int64_t[]){3}, 1), *w = ints_nd(1, (int64_t[]){3}, 2);
    tj_tensor *m = ints_nd(2, (int64_t[]){3, 4}, 3), *n = ints_nd(2, (int64_t[]){2, 3}, 4);
    tj_tensor *dot = tj_matmul(v, w), *mv = tj_matmul(n, v), *vm = tj_matmul(v, m);
    cr_assert(dot && mv && vm, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_ndim(dot), 0);
    double ref = 0;
    for (int i = 0; i < 3; i++) ref += tj_tensor_item_at(v, i) * tj_tensor_item_at(w, i);
    cr_expect_eq(tj_tensor_item_at(dot, 0), ref);
    cr_expect_eq(tj_tensor_ndim(mv), 1);
    cr_expect_eq(tj_tensor_shape(mv)[0], 2);
    cr_expect_eq(tj_tensor_ndim(vm), 1);
    cr_expect_eq(tj_tensor_shape(vm)[0], 4);
    for (int j = 0; j < 4; j++) {
        double r = 0;
        for (int i = 0; i < 3; i++) r += tj_tensor_item_at(v, i) * tj_tensor_item_at(m, i * 4 + j);
        cr_expect_eq(tj_tensor_item_at(vm, j), r);
    }
    tj_scope_end(s);
}

Test(matmul, broadcasts_batch_dims)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *a = ints_nd(4, (int64_t[]){7, 1, 2, 3}, 1), *b = ints_nd(3, (int64_t[]){5, 3, 4}, 2);
    tj_tensor *c = tj_matmul(a, b);
    cr_assert_not_null(c, "%s", tj_last_error());
    const int64_t want[4] = {7, 5, 2, 4};
    cr_assert_eq(tj_tensor_ndim(c), 4);
    for (int d = 0; d < 4; d++) cr_expect_eq(tj_tensor_shape(c)[d], want[d]);
    for (int64_t i = 0; i < 7; i++)
        for (int64_t j = 0; j < 5; j++)
            for (int64_t r = 0; r < 2; r++)
                for (int64_t q = 0; q < 4; q++) {
                    double ref = 0;
                    for (int64_t p = 0; p < 3; p++)
                        ref += tj_tensor_item_at(a, i * 6 + r * 3 + p) * tj_tensor_item_at(b, j * 12 + p * 4 + q);
                    cr_expect_eq(tj_tensor_item_at(c, ((i * 5 + j) * 2 + r) * 4 + q), ref);
                }
    tj_scope_end(s);
}

Test(matmul, folds_a_batched_lhs_and_transposes_a_batched_rhs)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *a = ints_nd(3, (int64_t[]){5, 2, 3}, 1), *b = ints_nd(2, (int64_t[]){3, 4}, 2);
    tj_tensor *m = ints_nd(2, (int64_t[]){2, 3}, 3), *bb = ints_nd(3, (int64_t[]){5, 3, 4}, 4);
    tj_tensor *c = tj_matmul(a, b), *d = tj_matmul(m, bb);
    cr_assert(c && d, "%s", tj_last_error());
    cr_expect(tj_tensor_is_contiguous(d));
    for (int64_t k = 0; k < 5; k++)
        for (int64_t i = 0; i < 2; i++)
            for (int64_t j = 0; j < 4; j++) {
                double rc = 0, rd = 0;
                for (int64_t p = 0; p < 3; p++) {
                    rc += tj_tensor_item_at(a, k * 6 + i * 3 + p) * tj_tensor_item_at(b, p * 4 + j);
                    rd += tj_tensor_item_at(m, i * 3 + p) * tj_tensor_item_at(bb, k * 12 + p * 4 + j);
                }
                cr_expect_eq(tj_tensor_item_at(c, (k * 2 + i) * 4 + j), rc);
                cr_expect_eq(tj_tensor_item_at(d, (k * 2 + i) * 4 + j), rd);
            }
    tj_scope_end(s);
}

Test(matmul, rejects_0d_and_mismatched_operands)
{
    tj_scope *s = tj_scope_begin();
    cr_expect_null(tj_matmul(tj_tensor_scalar_f32(1), ints_nd(1, (int64_t[]){3}, 1)));
    cr_expect_str_eq(tj_last_error(), "aten::matmul: both arguments need to be at least 1-D, got 0-D and 1-D");
    cr_expect_null(tj_matmul(ints_nd(3, (int64_t[]){2, 2, 3}, 1), ints_nd(2, (int64_t[]){4, 3}, 2)));
    cr_expect_str_eq(tj_last_error(), "aten::matmul: self [2, 2, 3] and other [4, 3] cannot be multiplied (3 != 4)");
    tj_scope_end(s);
}

/* ---- recorded structure (PyTorch 1.13's make_fx records the same calls,
 * with dot/mv spelled as mm and _reshape_alias as view) ---- */

typedef tj_tensor *(*binary_fn)(tj_tensor *, tj_tensor *);

static tj_status trace_binary(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    out[0] = ((binary_fn)ctx)(in[0], in[1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_status trace_linear(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    out[0] = tj_linear(in[0], in[1], n > 2 ? in[2] : NULL);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static void expect_graph(tj_trace_fn fn, void *ctx, int n, tj_tensor **in, const char *want)
{
    tj_graph *g = tj_make_fx(fn, ctx, in, n, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect_str_eq(text, want);
    free(text);
    tj_graph_free(g);
}

Test(matmul, records_fold_into_mm_as_pytorch)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[2] = {tj_tensor_fake(TJ_FLOAT32, 3, (int64_t[]){5, 2, 3}), tj_tensor_fake(TJ_FLOAT32, 2, (int64_t[]){3, 4})};
    expect_graph(trace_binary, (void *)tj_matmul, 2, in,
                 "graph(%arg0_1 : f32[5, 2, 3], %arg1_1 : f32[3, 4]):\n"
                 "    %view = aten.view.default(%arg0_1, [10, 3])\n"
                 "    %mm = aten.mm.default(%view, %arg1_1)\n"
                 "    %_unsafe_view = aten._unsafe_view.default(%mm, [5, 2, 4])\n"
                 "    return (%_unsafe_view,)\n");
    tj_scope_end(s);
}

Test(matmul, records_broadcast_batches_as_expand_reshape_bmm)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[2] = {tj_tensor_fake(TJ_FLOAT32, 4, (int64_t[]){7, 1, 2, 3}),
                        tj_tensor_fake(TJ_FLOAT32, 3, (int64_t[]){5, 3, 4})};
    expect_graph(trace_binary, (void *)tj_matmul, 2, in,
                 "graph(%arg0_1 : f32[7, 1, 2, 3], %arg1_1 : f32[5, 3, 4]):\n"
                 "    %expand = aten.expand.default(%arg0_1, [7, 5, 2, 3])\n"
                 "    %clone = aten.clone.default(%expand)\n"
                 "    %_unsafe_view = aten._unsafe_view.default(%clone, [35, 2, 3])\n"
                 "    %expand_1 = aten.expand.default(%arg1_1, [7, 5, 3, 4])\n"
                 "    %clone_1 = aten.clone.default(%expand_1)\n"
                 "    %_unsafe_view_1 = aten._unsafe_view.default(%clone_1, [35, 3, 4])\n"
                 "    %bmm = aten.bmm.default(%_unsafe_view, %_unsafe_view_1)\n"
                 "    %_unsafe_view_2 = aten._unsafe_view.default(%bmm, [7, 5, 2, 4])\n"
                 "    return (%_unsafe_view_2,)\n");
    tj_scope_end(s);
}

Test(linear, records_t_and_addmm_for_2d_input_with_bias)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[3] = {tj_tensor_fake(TJ_FLOAT32, 2, (int64_t[]){2, 3}), tj_tensor_fake(TJ_FLOAT32, 2, (int64_t[]){4, 3}),
                        tj_tensor_fake(TJ_FLOAT32, 1, (int64_t[]){4})};
    expect_graph(trace_linear, NULL, 3, in,
                 "graph(%arg0_1 : f32[2, 3], %arg1_1 : f32[4, 3], %arg2_1 : f32[4]):\n"
                 "    %t = aten.t.default(%arg1_1)\n"
                 "    %addmm = aten.addmm.default(%arg2_1, %arg0_1, %t)\n"
                 "    return (%addmm,)\n");
    tj_scope_end(s);
}

Test(linear, views_nd_input_as_2d_around_addmm)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[3] = {tj_tensor_fake(TJ_FLOAT32, 3, (int64_t[]){5, 2, 3}), tj_tensor_fake(TJ_FLOAT32, 2, (int64_t[]){4, 3}),
                        tj_tensor_fake(TJ_FLOAT32, 1, (int64_t[]){4})};
    expect_graph(trace_linear, NULL, 3, in,
                 "graph(%arg0_1 : f32[5, 2, 3], %arg1_1 : f32[4, 3], %arg2_1 : f32[4]):\n"
                 "    %t = aten.t.default(%arg1_1)\n"
                 "    %view = aten.view.default(%arg0_1, [10, 3])\n"
                 "    %addmm = aten.addmm.default(%arg2_1, %view, %t)\n"
                 "    %view_1 = aten.view.default(%addmm, [5, 2, 4])\n"
                 "    return (%view_1,)\n");
    expect_graph(trace_linear, NULL, 2, in,
                 "graph(%arg0_1 : f32[5, 2, 3], %arg1_1 : f32[4, 3]):\n"
                 "    %t = aten.t.default(%arg1_1)\n"
                 "    %view = aten.view.default(%arg0_1, [10, 3])\n"
                 "    %mm = aten.mm.default(%view, %t)\n"
                 "    %_unsafe_view = aten._unsafe_view.default(%mm, [5, 2, 4])\n"
                 "    return (%_unsafe_view,)\n");
    tj_scope_end(s);
}

Test(linear, computes_x_wt_plus_bias)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = ints_nd(3, (int64_t[]){2, 2, 3}, 1), *w = ints_nd(2, (int64_t[]){4, 3}, 2), *b = ints_nd(1, (int64_t[]){4}, 3);
    tj_tensor *y = tj_linear(x, w, b), *y_strided = tj_linear(tj_transpose(tj_contiguous(tj_transpose(x, 0, 1)), 0, 1), w, b);
    cr_assert(y && y_strided, "%s", tj_last_error());
    for (int64_t r = 0; r < 4; r++)
        for (int64_t o = 0; o < 4; o++) {
            double ref = tj_tensor_item_at(b, o);
            for (int64_t i = 0; i < 3; i++) ref += tj_tensor_item_at(x, r * 3 + i) * tj_tensor_item_at(w, o * 3 + i);
            cr_expect_eq(tj_tensor_item_at(y, r * 4 + o), ref);
            cr_expect_eq(tj_tensor_item_at(y_strided, r * 4 + o), ref);
        }
    tj_scope_end(s);
}

/* ATen adds the bias in place into the product (output.add_(bias)): a bias
 * that broadcasts to a larger shape is an error, not a larger result. */
Test(linear, refuses_a_bias_that_would_enlarge_the_result)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *w = ints_nd(2, (int64_t[]){1, 4}, 2), *b = ints_nd(3, (int64_t[]){2, 3, 1}, 3);
    tj_tensor *x1 = ints_nd(1, (int64_t[]){4}, 1), *xt = tj_t(ints_nd(2, (int64_t[]){4, 3}, 1));
    cr_expect_null(tj_linear(x1, w, b));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    cr_expect_str_eq(tj_last_error(), "aten::linear: bias [2, 3, 1] cannot be broadcast to the product's shape [1]");
    /* a 3-D input that is not contiguous takes the same path */
    tj_tensor *x3 = tj_transpose(ints_nd(3, (int64_t[]){3, 2, 4}, 1), 0, 1);
    cr_expect_null(tj_linear(x3, w, tj_unsqueeze(b, 0)));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    /* a bias that fits still broadcasts: [1] over [3, 1] */
    tj_tensor *y = tj_linear(xt, w, ints_nd(1, (int64_t[]){1}, 3));
    cr_assert_not_null(y, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_ndim(y), 2);
    cr_expect_eq(tj_tensor_shape(y)[0], 3);
    tj_scope_end(s);
}

/* ---- addmm's decomposition (torch._decomp: alpha * mm + beta * self) ---- */

static tj_status trace_addmm(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const tj_value *scalars = ctx; /* beta, alpha */
    (void)n;
    out[0] = tj_addmm(in[0], in[1], in[2], scalars[0], scalars[1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(addmm, decomposes_into_mm_mul_and_add_with_kernel_values)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[3] = {ints_f32(1, (int64_t[]){3}, 1), ints_f32(2, (int64_t[]){2, 4}, 2), ints_f32(2, (int64_t[]){4, 3}, 3)};
    tj_decomp_table *t = tj_get_decompositions((const char *const[]){"aten::addmm"}, 1);
    tj_value scalars[2] = {tj_v_int(2), tj_v_int(3)}, beta0[2] = {tj_v_int(0), tj_v_int(1)};
    tj_graph *g = tj_make_fx(trace_addmm, scalars, in, 3, t, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect_str_eq(text, "graph(%arg0_1 : f32[3], %arg1_1 : f32[2, 4], %arg2_1 : f32[4, 3]):\n"
                           "    %mm = aten.mm.default(%arg1_1, %arg2_1)\n"
                           "    %mul = aten.mul.Scalar(%mm, 3)\n"
                           "    %mul_1 = aten.mul.Scalar(%arg0_1, 2)\n"
                           "    %add = aten.add.Tensor(%mul_1, %mul)\n"
                           "    return (%add,)\n");
    free(text);
    tj_tensor *out[1], *ref = tj_addmm(in[0], in[1], in[2], scalars[0], scalars[1]);
    cr_assert_eq(tj_graph_run(g, in, 3, out), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < 6; i++) cr_expect_eq(tj_tensor_item_at(out[0], i), tj_tensor_item_at(ref, i));
    tj_graph_free(g);
    g = tj_make_fx(trace_addmm, beta0, in, 3, t, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::add.Tensor")), 0, "beta = 0 drops self");
    tj_graph_free(g);
    tj_decomp_table_free(t);
    tj_scope_end(s);
}
