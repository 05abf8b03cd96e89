/* scaled_dot_product_attention (fused, online softmax), embedding and
 * embedding_dense_backward. The attention reference is the naive formula
 * softmax(q k^T / sqrt(E) + mask) v in float64, in this file; the
 * embedding-backward numbers come from PyTorch 1.13
 * (torch.ops.aten.embedding_dense_backward in float64, inputs shown). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "test_util.h"
#include "tjit/tjit.h"


/* Naive attention of one batch item b of contiguous q [B, L, E], k [B, S, E],
 * v [B, S, Ev]; keep(i, j) decides masking (NULL: none); causal keeps j <= i.
 * A row with no key kept is zero. */
static double ref_attention(tj_tensor *q, tj_tensor *k, tj_tensor *v, int64_t b, int64_t i, int64_t e, bool causal,
                            const bool *keep)
{
    int64_t L = tj_tensor_shape(q)[1], E = tj_tensor_shape(q)[2], S = tj_tensor_shape(k)[1], Ev = tj_tensor_shape(v)[2];
    double mx = -INFINITY, sum = 0, acc = 0, *sc = malloc(sizeof(double) * (size_t)S);
    for (int64_t j = 0; j < S; j++) {
        double d = 0;
        for (int64_t c = 0; c < E; c++)
            d += tj_tensor_item_at(q, (b * L + i) * E + c) * tj_tensor_item_at(k, (b * S + j) * E + c);
        bool kept = !(causal && j > i) && (!keep || keep[i * S + j]);
        sc[j] = kept ? d / sqrt((double)E) : -INFINITY;
        mx = fmax(mx, sc[j]);
    }
    for (int64_t j = 0; mx > -INFINITY && j < S; j++) {
        double p = exp(sc[j] - mx);
        sum += p;
        acc += p * tj_tensor_item_at(v, (b * S + j) * Ev + e);
    }
    free(sc);
    return sum > 0 ? acc / sum : 0;
}

static void expect_attention(tj_tensor *out, tj_tensor *q, tj_tensor *k, tj_tensor *v, bool causal, const bool *keep)
{
    cr_assert_not_null(out, "%s", tj_last_error());
    int64_t B = tj_tensor_shape(q)[0], L = tj_tensor_shape(q)[1], Ev = tj_tensor_shape(v)[2];
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < L; i++)
            for (int64_t e = 0; e < Ev; e++) {
                double r = ref_attention(q, k, v, b, i, e, causal, keep), g = tj_tensor_item_at(out, (b * L + i) * Ev + e);
                cr_assert(fabs(g - r) < 2e-5, "(%ld, %ld, %ld): %g vs %g", (long)b, (long)i, (long)e, g, r);
            }
}

Test(attention, causal_matches_naive_reference_across_key_and_query_blocks)
{
    tj_scope *s = tj_scope_begin();
    /* L = 150, S = 290 span several 32-query / 128-key blocks; L != S is
     * top-left aligned: query i sees keys 0..i */
    tj_tensor *q = test_random_f32(3, (int64_t[]){2, 150, 64}, 1), *k = test_random_f32(3, (int64_t[]){2, 290, 64}, 2);
    tj_tensor *v = test_random_f32(3, (int64_t[]){2, 290, 24}, 3);
    expect_attention(tj_scaled_dot_product_attention(q, k, v, NULL, 0.0, true), q, k, v, true, NULL);
    expect_attention(tj_scaled_dot_product_attention(q, k, v, NULL, 0.0, false), q, k, v, false, NULL);
    tj_scope_end(s);
}

Test(attention, fully_masked_rows_give_zeros_instead_of_nan)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *q = test_random_f32(3, (int64_t[]){1, 4, 8}, 4), *k = test_random_f32(3, (int64_t[]){1, 6, 8}, 5);
    tj_tensor *v = test_random_f32(3, (int64_t[]){1, 6, 5}, 6);
    bool keep[24];
    for (int i = 0; i < 24; i++) keep[i] = (i * 5) % 3 != 0;
    for (int j = 0; j < 6; j++) keep[2 * 6 + j] = false; /* row 2: every key masked */
    tj_tensor *m = tj_tensor_from_data(TJ_BOOL, 2, (int64_t[]){4, 6}, keep);
    tj_tensor *out = tj_scaled_dot_product_attention(q, k, v, m, 0.0, false);
    expect_attention(out, q, k, v, false, keep);
    for (int e = 0; e < 5; e++) cr_expect_eq(tj_tensor_item_at(out, 2 * 5 + e), 0.0);
    /* the same with a float mask of -inf */
    float fm[24];
    for (int i = 0; i < 24; i++) fm[i] = keep[i] ? 0.0f : -INFINITY;
    out = tj_scaled_dot_product_attention(q, k, v, tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){4, 6}, fm), 0.0, false);
    expect_attention(out, q, k, v, false, keep);
    tj_scope_end(s);
}

Test(attention, float_mask_is_added_and_broadcast_over_batch)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *q = test_random_f32(3, (int64_t[]){2, 3, 4}, 7), *k = test_random_f32(3, (int64_t[]){2, 5, 4}, 8);
    tj_tensor *v = test_random_f32(3, (int64_t[]){2, 5, 2}, 9);
    float bias[5] = {0.5f, -1, 0, 2, -0.25f};
    tj_tensor *m = tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){5}, bias); /* broadcasts to [2, 3, 5] */
    tj_tensor *out = tj_scaled_dot_product_attention(q, k, v, m, 0.0, false);
    cr_assert_not_null(out, "%s", tj_last_error());
    /* adding bias[j] to the scores = scaling the reference's exp by e^bias[j] */
    for (int64_t b = 0; b < 2; b++)
        for (int64_t i = 0; i < 3; i++)
            for (int64_t e = 0; e < 2; e++) {
                double w[5], sum = 0, acc = 0;
                for (int64_t j = 0; j < 5; j++) {
                    double d = 0;
                    for (int c = 0; c < 4; c++)
                        d += tj_tensor_item_at(q, (b * 3 + i) * 4 + c) * tj_tensor_item_at(k, (b * 5 + j) * 4 + c);
                    w[j] = exp(d / 2 + bias[j]);
                    sum += w[j];
                    acc += w[j] * tj_tensor_item_at(v, (b * 5 + j) * 2 + e);
                }
                cr_expect_float_eq(tj_tensor_item_at(out, (b * 3 + i) * 2 + e), acc / sum, 1e-5);
            }
    tj_scope_end(s);
}

Test(attention, rejects_dropout_and_mask_with_is_causal)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *q = test_random_f32(2, (int64_t[]){3, 4}, 1);
    cr_expect_null(tj_scaled_dot_product_attention(q, q, q, NULL, 0.1, false));
    cr_expect_eq(tj_last_status(), TJ_ERR_UNSUPPORTED);
    cr_expect_str_eq(tj_last_error(), "aten::scaled_dot_product_attention: dropout_p 0.1 is not supported (only 0.0)");
    cr_expect_null(tj_scaled_dot_product_attention(q, q, q, tj_tensor_empty(TJ_BOOL, 2, (int64_t[]){3, 3}), 0.0, true));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    cr_expect_null(tj_scaled_dot_product_attention(q, test_random_f32(2, (int64_t[]){3, 5}, 2), q, NULL, 0.0, false));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    tj_scope_end(s);
}

/* ---- embedding ---- */

Test(embedding, gathers_rows_for_any_index_shape)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *w = test_random_f32(2, (int64_t[]){10, 3}, 1);
    int64_t idx[4] = {9, 0, 9, 4};
    tj_tensor *out = tj_embedding(w, tj_tensor_from_data(TJ_INT64, 2, (int64_t[]){2, 2}, idx), -1);
    cr_assert_not_null(out, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_ndim(out), 3);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) cr_expect_eq(tj_tensor_item_at(out, i * 3 + j), tj_tensor_item_at(w, idx[i] * 3 + j));
    tj_tensor *wt = tj_t(test_random_f32(2, (int64_t[]){3, 10}, 2)); /* strided weight rows */
    out = tj_embedding(wt, tj_tensor_from_data(TJ_INT64, 1, (int64_t[]){4}, idx), -1);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) cr_expect_eq(tj_tensor_item_at(out, i * 3 + j), tj_tensor_item_at(wt, idx[i] * 3 + j));
    tj_scope_end(s);
}

Test(embedding, index_out_of_range_names_the_op_and_the_index)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *w = test_random_f32(2, (int64_t[]){5, 3}, 1);
    int64_t idx[3] = {1, 7, 2}, neg[1] = {-1};
    cr_expect_null(tj_embedding(w, tj_tensor_from_data(TJ_INT64, 1, (int64_t[]){3}, idx), -1));
    cr_expect_eq(tj_last_status(), TJ_ERR_INDEX);
    cr_expect_str_eq(tj_last_error(), "aten::embedding: index 7 (at position 1) is out of range for 5 rows");
    cr_expect_null(tj_embedding(w, tj_tensor_from_data(TJ_INT64, 1, (int64_t[]){1}, neg), -1));
    cr_expect_str_eq(tj_last_error(), "aten::embedding: index -1 (at position 0) is out of range for 5 rows");
    cr_expect_null(tj_embedding(w, tj_tensor_from_data(TJ_INT64, 1, (int64_t[]){1}, idx), 5));
    cr_expect_str_eq(tj_last_error(), "aten::embedding: padding_idx 5 is out of range for 5 rows (-1 for none)");
    cr_expect_null(tj_embedding(w, test_random_f32(1, (int64_t[]){2}, 3), -1));
    cr_expect_eq(tj_last_status(), TJ_ERR_DTYPE);
    tj_scope_end(s);
}

Test(embedding_backward, scales_by_frequency_and_zeroes_the_padding_row)
{
    /* indices [[0, 2, 0], [3, 2, 0]], grad arange(12).view(2, 3, 2),
     * num_weights 4, padding_idx 2, scale_grad_by_freq -> PyTorch gives
     * [[4.6666667, 5.6666667], [0, 0], [0, 0], [6, 7]] */
    tj_scope *s = tj_scope_begin();
    int64_t idx[6] = {0, 2, 0, 3, 2, 0};
    float g[12];
    for (int i = 0; i < 12; i++) g[i] = (float)i;
    const double ref[8] = {14.0 / 3, 17.0 / 3, 0, 0, 0, 0, 6, 7};
    tj_tensor *gw = tj_embedding_dense_backward(tj_tensor_from_data(TJ_FLOAT32, 3, (int64_t[]){2, 3, 2}, g),
                                                tj_tensor_from_data(TJ_INT64, 2, (int64_t[]){2, 3}, idx), 4, 2, true);
    cr_assert_not_null(gw, "%s", tj_last_error());
    for (int i = 0; i < 8; i++) cr_expect_float_eq(tj_tensor_item_at(gw, i), ref[i], 1e-6);
    idx[1] = 4;
    cr_expect_null(tj_embedding_dense_backward(tj_tensor_from_data(TJ_FLOAT32, 3, (int64_t[]){2, 3, 2}, g),
                                               tj_tensor_from_data(TJ_INT64, 2, (int64_t[]){2, 3}, idx), 4, 2, true));
    cr_expect_str_eq(tj_last_error(), "aten::embedding_dense_backward: index 4 (at position 1) is out of range for 4 rows");
    tj_scope_end(s);
}

/* ---- the decomposition (math form) agrees with the fused kernel ---- */

typedef struct attn_case {
    tj_tensor *mask;
    bool causal;
} attn_case;

static tj_status trace_attention(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const attn_case *c = ctx;
    (void)n;
    out[0] = tj_scaled_dot_product_attention(in[0], in[1], in[2], c->mask, 0.0, c->causal);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(attention, decomposition_matches_the_fused_kernel_including_masked_rows)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[3] = {test_random_f32(4, (int64_t[]){2, 2, 6, 8}, 1), test_random_f32(4, (int64_t[]){2, 2, 9, 8}, 2),
                        test_random_f32(4, (int64_t[]){2, 2, 9, 3}, 3)};
    bool keep[54];
    for (int i = 0; i < 54; i++) keep[i] = i % 4 != 1 && i / 9 != 4; /* query 4 sees no key */
    attn_case cases[3] = {{NULL, true}, {tj_tensor_from_data(TJ_BOOL, 2, (int64_t[]){6, 9}, keep), false}, {NULL, false}};
    tj_decomp_table *t = tj_get_decompositions((const char *const[]){"aten::scaled_dot_product_attention"}, 1);
    for (int c = 0; c < 3; c++) {
        tj_tensor *ref = tj_scaled_dot_product_attention(in[0], in[1], in[2], cases[c].mask, 0.0, cases[c].causal), *out[1];
        tj_graph *g = tj_make_fx(trace_attention, &cases[c], in, 3, t, TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s", tj_last_error());
        cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::scaled_dot_product_attention")), 0);
        cr_assert_eq(tj_graph_run(g, in, 3, out), TJ_OK, "%s", tj_last_error());
        for (int64_t i = 0; i < tj_tensor_numel(ref); i++)
            cr_expect_float_eq(tj_tensor_item_at(out[0], i), tj_tensor_item_at(ref, i), 1e-5, "case %d index %ld", c,
                               (long)i);
        tj_graph_free(g);
    }
    tj_decomp_table_free(t);
    tj_scope_end(s);
}
