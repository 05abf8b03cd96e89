/* scaled_dot_product_attention on the layouts and sizes the fused float32
 * kernel treats apart (kernels/attention_avx512.c on AVX-512 machines):
 * strided and transposed operands, head sizes that are not multiples of
 * 16 or exceed one 64-wide tile, strided masks, several key blocks, one
 * and two threads. The reference is the naive formula softmax(q k^T /
 * sqrt(E) + mask) v in float64, in this file. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "test_util.h"
#include "tjit/tjit.h"


/* Contiguous float64 copy of t's values. */
static const double *values(tj_tensor *t) { return tj_tensor_data(tj_contiguous(tj_to_copy(t, TJ_FLOAT64))); }

/* Checks out [B, L, Ev] (any batch dims flattened) against the reference
 * for q [B, L, E], k [B, S, E], v [B, S, Ev] of any layout; mask [L, S]
 * (bool or float, any layout, shared by the batch) or NULL. A query with
 * no key kept gives zeros. */
static void expect_attention(tj_tensor *out, tj_tensor *q, tj_tensor *k, tj_tensor *v, tj_tensor *mask, bool causal)
{
    cr_assert_not_null(out, "%s", tj_last_error());
    int nd = tj_tensor_ndim(q);
    int64_t L = tj_tensor_shape(q)[nd - 2], E = tj_tensor_shape(q)[nd - 1], S = tj_tensor_shape(k)[nd - 2];
    int64_t Ev = tj_tensor_shape(v)[nd - 1], B = tj_tensor_numel(q) / (L * E);
    const double *qd = values(q), *kd = values(k), *vd = values(v), *od = values(out);
    const double *md = mask ? values(mask) : NULL;
    double *w = malloc(sizeof(double) * (size_t)(S > 0 ? S : 1));
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < L; i++) {
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < S; j++) {
                double d = 0;
                for (int64_t c = 0; c < E; c++) d += qd[(b * L + i) * E + c] * kd[(b * S + j) * E + c];
                d /= sqrt((double)E);
                if (md) d = tj_tensor_dtype(mask) == TJ_BOOL ? (md[i * S + j] != 0 ? d : -INFINITY) : d + md[i * S + j];
                w[j] = causal && j > i ? -INFINITY : d;
                mx = fmax(mx, w[j]);
            }
            for (int64_t j = 0; j < S; j++) sum += w[j] = mx == -INFINITY ? 0 : exp(w[j] - mx);
            for (int64_t e = 0; e < Ev; e++) {
                double acc = 0;
                for (int64_t j = 0; j < S; j++) acc += w[j] * vd[(b * S + j) * Ev + e];
                double ref = sum > 0 ? acc / sum : 0, got = od[(b * L + i) * Ev + e];
                cr_assert(fabs(got - ref) <= 1e-5 + 1e-4 * fabs(ref), "(%ld, %ld, %ld): %.8g vs %.8g", (long)b, (long)i,
                          (long)e, got, ref);
            }
        }
    free(w);
}

Test(attention_layouts, transposed_heads_and_column_major_keys_and_values)
{
    tj_scope *s = tj_scope_begin();
    /* q as the gpt model makes it: [B, T, H, E] viewed as [B, H, T, E];
     * k and v column-major (transposes of [B, H, E, S] and [B, H, Ev, S]) */
    tj_tensor *q = tj_transpose(test_random_f32(4, (int64_t[]){2, 100, 3, 32}, 1), 1, 2);
    tj_tensor *k = tj_transpose(test_random_f32(4, (int64_t[]){2, 3, 32, 90}, 2), 2, 3);
    tj_tensor *v = tj_transpose(test_random_f32(4, (int64_t[]){2, 3, 48, 90}, 3), 2, 3);
    for (int causal = 0; causal < 2; causal++)
        expect_attention(tj_scaled_dot_product_attention(q, k, v, NULL, 0.0, causal), q, k, v, NULL, causal);
    tj_scope_end(s);
}

Test(attention_layouts, head_sizes_off_the_16_lane_grid_and_wider_than_64)
{
    tj_scope *s = tj_scope_begin();
    const int64_t sizes[][2] = {{20, 80}, {7, 100}, {130, 3}, {1, 1}};
    for (int c = 0; c < 4; c++) {
        int64_t E = sizes[c][0], Ev = sizes[c][1];
        tj_tensor *q = test_random_f32(3, (int64_t[]){2, 70, E}, 4), *k = test_random_f32(3, (int64_t[]){2, 75, E}, 5);
        tj_tensor *v = test_random_f32(3, (int64_t[]){2, 75, Ev}, 6);
        for (int causal = 0; causal < 2; causal++)
            expect_attention(tj_scaled_dot_product_attention(q, k, v, NULL, 0.0, causal), q, k, v, NULL, causal);
    }
    tj_scope_end(s);
}

Test(attention_layouts, strided_masks_with_fully_masked_rows)
{
    tj_scope *s = tj_scope_begin();
    enum { L = 67, S = 81 };
    tj_tensor *q = test_random_f32(3, (int64_t[]){1, L, 16}, 7), *k = test_random_f32(3, (int64_t[]){1, S, 16}, 8);
    tj_tensor *v = test_random_f32(3, (int64_t[]){1, S, 16}, 9);
    /* stored as [S, L] and transposed: the mask's key stride is L */
    bool keep[S * L];
    float add[S * L];
    for (int j = 0; j < S; j++)
        for (int i = 0; i < L; i++) {
            keep[j * L + i] = (i * 7 + j * 3) % 5 != 0 && i != 20 && i != 66; /* queries 20 and 66 see nothing */
            add[j * L + i] = keep[j * L + i] ? 0.25f * (float)((i + j) % 9) - 1.0f : -INFINITY;
        }
    tj_tensor *bm = tj_transpose(tj_tensor_from_data(TJ_BOOL, 2, (int64_t[]){S, L}, keep), 0, 1);
    tj_tensor *fm = tj_transpose(tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){S, L}, add), 0, 1);
    tj_tensor *masks[2] = {bm, fm};
    for (int m = 0; m < 2; m++) {
        tj_tensor *out = tj_scaled_dot_product_attention(q, k, v, masks[m], 0.0, false);
        expect_attention(out, q, k, v, masks[m], false);
        for (int e = 0; e < 16; e++) {
            cr_expect_eq(tj_tensor_item_at(out, 20 * 16 + e), 0.0);
            cr_expect_eq(tj_tensor_item_at(out, 66 * 16 + e), 0.0);
        }
    }
    tj_scope_end(s);
}

Test(attention_layouts, two_threads_give_the_values_of_one)
{
    tj_scope *s = tj_scope_begin();
    int saved = tj_get_num_threads();
    /* 1 x 2 heads share out query blocks; 8 x 2 heads share out heads */
    const int64_t batch[2] = {1, 8};
    for (int c = 0; c < 2; c++) {
        int64_t shape[4] = {batch[c], 2, 200, 64};
        tj_tensor *q = test_random_f32(4, shape, 10), *k = test_random_f32(4, shape, 11), *v = test_random_f32(4, shape, 12), *out[2];
        for (int t = 0; t < 2; t++) {
            tj_set_num_threads(t + 1);
            out[t] = tj_scaled_dot_product_attention(q, k, v, NULL, 0.0, true);
            cr_assert_not_null(out[t], "%s", tj_last_error());
        }
        const float *a = tj_tensor_data(out[0]), *b = tj_tensor_data(out[1]);
        for (int64_t i = 0; i < tj_tensor_numel(out[0]); i++) cr_assert_eq(a[i], b[i], "batch %ld, index %ld", (long)batch[c], (long)i);
    }
    tj_set_num_threads(saved);
    tj_scope_end(s);
}

Test(attention_layouts, a_nan_key_makes_nan_only_the_rows_that_see_it)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *q = test_random_f32(3, (int64_t[]){1, 80, 16}, 13), *k = test_random_f32(3, (int64_t[]){1, 80, 16}, 14);
    tj_tensor *v = test_random_f32(3, (int64_t[]){1, 80, 16}, 15);
    ((float *)tj_tensor_data(k))[70 * 16 + 5] = NAN;
    tj_tensor *out = tj_scaled_dot_product_attention(q, k, v, NULL, 0.0, true);
    cr_assert_not_null(out, "%s", tj_last_error());
    for (int64_t i = 0; i < 80; i++) cr_expect_eq(isnan(tj_tensor_item_at(out, i * 16)), i >= 70, "query %ld", (long)i);
    tj_scope_end(s);
}

/* Many batch items go to the threads in contiguous runs; each item is
 * computed the same way on any thread, so any thread count (past the
 * pool's 64 participants too) gives the same bits. */
Test(attention_layouts, many_batch_items_give_the_same_bits_at_any_thread_count)
{
    tj_scope *s = tj_scope_begin();
    int64_t shape[4] = {10, 30, 40, 16};
    tj_tensor *q = test_random_f32(4, shape, 1), *k = test_random_f32(4, shape, 2), *v = test_random_f32(4, shape, 3);
    tj_set_num_threads(1);
    tj_tensor *ref = tj_scaled_dot_product_attention(q, k, v, NULL, 0.0, true);
    cr_assert_not_null(ref, "%s", tj_last_error());
    const float *want = tj_tensor_data(ref);
    static const int threads[] = {2, 3, 7, 70};
    for (size_t i = 0; i < sizeof threads / sizeof *threads; i++) {
        tj_set_num_threads(threads[i]);
        tj_tensor *out = tj_scaled_dot_product_attention(q, k, v, NULL, 0.0, true);
        cr_assert_not_null(out, "%s", tj_last_error());
        const float *got = tj_tensor_data(out);
        for (int64_t e = 0; e < tj_tensor_numel(out); e++)
            cr_assert(got[e] == want[e], "%d threads, element %ld: %.9g vs %.9g", threads[i], (long)e, got[e], want[e]);
    }
    tj_set_num_threads(1);
    tj_scope_end(s);
}
