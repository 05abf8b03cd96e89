/* aten::_native_multi_head_attention and aten::_transformer_encoder_layer_fwd
 * (PyTorch 1.13's eval fast paths): values against torch; traced graphs
 * holding the operator, replayed exactly, and their core decompositions
 * (primitives only: addmm, _softmax, layer norm and gelu lowered too, so
 * within float32 rounding); the errors. More reference values (float64, masks,
 * need_weights=False, a fully masked batch item) are conformance cases
 * (tests/conformance/make_cases_transformer.py).
 * Reference values from PyTorch 1.13 (/usr/bin/python3), float64, with
 *   x = [[[1, -1], [0.5, 2]]], W = (arange(12).reshape(6, 2) - 5) / 10,
 *   b = arange(6) / 10 - 0.2, Wo = [[1, 0.5], [-0.5, 1]], bo = [0.1, -0.1]:
 *   aten._native_multi_head_attention(x, x, x, 2, 2, W, b, Wo, bo)
 *     -> out [1.1872715379594039, 0.5218866413526478, 1.127561870391914, 0.43362601955674396]
 *        weights [0.5156111170168378, 0.4843888829831621, 0.5520275179253269, 0.447972482074673]
 *   the same with mask [[False, True]], need_weights, average False, mask_type 1
 *     -> out [0.3, 0.05, 0.3, 0.05], weights [1, 0, 1, 0, 1, 0, 1, 0]
 *   aten._transformer_encoder_layer_fwd(x, 2, 2, W, b, Wo, bo, use_gelu, norm_first, 1e-5,
 *       [1, 2], [0, 1], [0.5, 1], [0.25, 0], [[1, 0], [0, 1], [1, -1]], [0, -0.5, 0.25],
 *       [[1, 0.5, -1], [0, 1, 2]], [0, 0.5])
 *     relu, norm after -> [-0.24999944636403432, 0.9999988927280686, -0.24999969752985468, 0.9999993950597089]
 *     gelu, norm first -> [0.6894557651441187, 3.774326638099227, 1.794514692569861, 2.967231993622017] */
#include <criterion/criterion.h>
#include <math.h>

#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(transformer_fastpath, .init = test_scope_open, .fini = test_scope_close);

#define OP_MHA "aten::_native_multi_head_attention"
#define OP_LAYER "aten::_transformer_encoder_layer_fwd"

static const int64_t S122[3] = {1, 2, 2}, S62[2] = {6, 2}, S6[1] = {6}, S22[2] = {2, 2}, S2[1] = {2};

/* The attention weights of the header's example: W, b, Wo, bo. */
static void example_weights(tj_tensor **w)
{
    double wv[12], bv[6];
    for (int i = 0; i < 12; i++) wv[i] = (i - 5) / 10.0;
    for (int i = 0; i < 6; i++) bv[i] = i / 10.0 - 0.2;
    w[0] = test_f64(2, S62, wv);
    w[1] = test_f64(1, S6, bv);
    w[2] = test_f64(2, S22, (const double[]){1, 0.5, -0.5, 1});
    w[3] = test_f64(1, S2, (const double[]){0.1, -0.1});
}

static tj_tensor *example_x(void) { return test_f64(3, S122, (const double[]){1, -1, 0.5, 2}); }

Test(transformer_fastpath, mha_matches_torch_with_averaged_weights)
{
    tj_tensor *x = example_x(), *w[4], *out, *weights;
    example_weights(w);
    cr_assert_eq(tj__native_multi_head_attention(x, x, x, 2, 2, w[0], w[1], w[2], w[3], NULL, true, true, false, 0,
                                                 &out, &weights),
                 TJ_OK, "%s", tj_last_error());
    test_assert_dtype_shape(out, TJ_FLOAT64, 3, S122);
    test_expect_close(out, (const double[]){1.1872715379594039, 0.5218866413526478, 1.127561870391914, 0.43362601955674396},
                      4, 1e-13, 1e-14);
    test_assert_dtype_shape(weights, TJ_FLOAT64, 3, S122);
    test_expect_close(weights, (const double[]){0.5156111170168378, 0.4843888829831621, 0.5520275179253269, 0.447972482074673},
                      4, 1e-13, 1e-14);
}

Test(transformer_fastpath, mha_key_padding_masks_keys_and_keeps_heads_apart)
{
    tj_tensor *x = example_x(), *w[4], *out, *weights;
    example_weights(w);
    tj_tensor *mask = test_tensor(TJ_BOOL, 2, (const int64_t[]){1, 2}, (const bool[]){false, true});
    cr_assert_eq(tj__native_multi_head_attention(x, x, x, 2, 2, w[0], w[1], w[2], w[3], mask, true, false, true, 1,
                                                 &out, &weights),
                 TJ_OK, "%s", tj_last_error());
    test_expect_close(out, (const double[]){0.3, 0.05, 0.3, 0.05}, 4, 1e-13, 1e-14);
    test_assert_dtype_shape(weights, TJ_FLOAT64, 4, (const int64_t[]){1, 2, 2, 2});
    test_expect_close(weights, (const double[]){1, 0, 1, 0, 1, 0, 1, 0}, 8, 0, 0);
}

Test(transformer_fastpath, mha_without_weights_leaves_them_undefined)
{
    tj_tensor *x = example_x(), *w[4], *out, *weights = x;
    example_weights(w);
    cr_assert_eq(tj__native_multi_head_attention(x, x, x, 2, 2, w[0], w[1], w[2], w[3], NULL, false, true, false, 0,
                                                 &out, &weights),
                 TJ_OK, "%s", tj_last_error());
    cr_expect_null(weights);
    test_expect_close(out, (const double[]){1.1872715379594039, 0.5218866413526478, 1.127561870391914, 0.43362601955674396},
                      4, 1e-13, 1e-14);
}

/* The layer's example weights after the attention's (header). */
static void example_layer(tj_tensor **l)
{
    l[0] = test_f64(1, S2, (const double[]){1, 2});
    l[1] = test_f64(1, S2, (const double[]){0, 1});
    l[2] = test_f64(1, S2, (const double[]){0.5, 1});
    l[3] = test_f64(1, S2, (const double[]){0.25, 0});
    l[4] = test_f64(2, (const int64_t[]){3, 2}, (const double[]){1, 0, 0, 1, 1, -1});
    l[5] = test_f64(1, (const int64_t[]){3}, (const double[]){0, -0.5, 0.25});
    l[6] = test_f64(2, (const int64_t[]){2, 3}, (const double[]){1, 0.5, -1, 0, 1, 2});
    l[7] = test_f64(1, S2, (const double[]){0, 0.5});
}

static tj_tensor *example_layer_call(tj_tensor *x, bool gelu, bool norm_first, int64_t heads)
{
    tj_tensor *w[4], *l[8];
    example_weights(w);
    example_layer(l);
    return tj__transformer_encoder_layer_fwd(x, 2, heads, w[0], w[1], w[2], w[3], gelu, norm_first, 1e-5, l[0], l[1],
                                             l[2], l[3], l[4], l[5], l[6], l[7], NULL, false, 0);
}

Test(transformer_fastpath, layer_matches_torch_relu_post_norm_and_gelu_pre_norm)
{
    tj_tensor *post = example_layer_call(example_x(), false, false, 2);
    test_assert_dtype_shape(post, TJ_FLOAT64, 3, S122);
    test_expect_close(post, (const double[]){-0.24999944636403432, 0.9999988927280686, -0.24999969752985468, 0.9999993950597089},
                      4, 1e-12, 1e-13);
    tj_tensor *pre = example_layer_call(example_x(), true, true, 2);
    test_expect_close(pre, (const double[]){0.6894557651441187, 3.774326638099227, 1.794514692569861, 2.967231993622017},
                      4, 1e-12, 1e-13);
}

/* torch 1.13 returns the empty output and None weights here; tjit's
 * weights keep their shape, as with tokens. */
Test(transformer_fastpath, mha_of_no_batch_or_no_tokens_gives_empty_results)
{
    tj_tensor *w[4];
    example_weights(w);
    const int64_t shapes[2][3] = {{0, 3, 2}, {2, 0, 2}};
    for (int k = 0; k < 2; k++) {
        tj_tensor *x = tj_zeros(shapes[k], 3, TJ_FLOAT64), *out, *weights;
        cr_assert_eq(tj__native_multi_head_attention(x, x, x, 2, 2, w[0], w[1], w[2], w[3], NULL, true, true, false,
                                                     0, &out, &weights),
                     TJ_OK, "%s", tj_last_error());
        test_assert_dtype_shape(out, TJ_FLOAT64, 3, shapes[k]);
        test_assert_dtype_shape(weights, TJ_FLOAT64, 3, (const int64_t[]){shapes[k][0], shapes[k][1], shapes[k][1]});
    }
}

/* ---- traced, replayed and decomposed: random float32 [2, 3, 4], 2 heads ---- */

static const int64_t BTE[3] = {2, 3, 4};

static tj_tensor *rnd(int ndim, const int64_t *shape, unsigned seed) { return test_random_f32(ndim, shape, seed); }

/* in: x, W, b, Wo, bo, key padding mask (bool [2, 3]) */
static tj_status mha_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    *n_out = 2;
    return tj__native_multi_head_attention(in[0], in[0], in[0], 4, 2, in[1], in[2], in[3], in[4], in[5], true, false,
                                           true, 1, &out[0], &out[1]);
}

/* in: q, k, v, W, b, Wo, bo: three projections, weights averaged */
static tj_status mha_distinct_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    *n_out = 2;
    return tj__native_multi_head_attention(in[0], in[1], in[2], 4, 2, in[3], in[4], in[5], in[6], NULL, true, true,
                                           false, 0, &out[0], &out[1]);
}

static void attention_inputs(tj_tensor **in)
{
    in[1] = rnd(2, (const int64_t[]){12, 4}, 11);
    in[2] = rnd(1, (const int64_t[]){12}, 12);
    in[3] = rnd(2, (const int64_t[]){4, 4}, 13);
    in[4] = rnd(1, (const int64_t[]){4}, 14);
}

static const char *const MHA_WANT[1] = {"aten._native_multi_head_attention.default"};

Test(transformer_fastpath, mha_replays_exactly_and_decomposes_to_primitives)
{
    tj_tensor *in[6];
    in[0] = rnd(3, BTE, 10);
    attention_inputs(in);
    in[5] = test_tensor(TJ_BOOL, 2, (const int64_t[]){2, 3}, (const bool[]){false, false, true, false, true, false});
    test_expect_traced(mha_step, in, 6, 2, MHA_WANT, 1, NULL, 1e-5);
}

Test(transformer_fastpath, mha_distinct_inputs_decompose_and_match_self_attention)
{
    tj_tensor *in[7], *x = rnd(3, BTE, 20);
    in[0] = x, in[1] = rnd(3, BTE, 21), in[2] = rnd(3, BTE, 22); /* distinct tensors: three products */
    attention_inputs(in + 2); /* W, b, Wo, bo at in[3..6] */
    test_expect_traced(mha_distinct_step, in, 7, 2, MHA_WANT, 1, NULL, 1e-5);
    /* one product for q, k, v or three: within float32 rounding */
    tj_tensor *self_out, *self_w, *split_out, *split_w, *copy = tj_clone(x);
    cr_assert_eq(tj__native_multi_head_attention(x, x, x, 4, 2, in[3], in[4], in[5], in[6], NULL, true, true, false, 0,
                                                 &self_out, &self_w),
                 TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj__native_multi_head_attention(x, copy, x, 4, 2, in[3], in[4], in[5], in[6], NULL, true, true, false,
                                                 0, &split_out, &split_w),
                 TJ_OK, "%s", tj_last_error());
    double want[24];
    cr_assert_eq(tj_tensor_copy_to(tj_to_copy(split_out, TJ_FLOAT64), want), TJ_OK);
    test_expect_close(self_out, want, 24, 1e-5, 1e-6);
}

/* in: src, W, b, Wo, bo, norm_w1, norm_b1, norm_w2, norm_b2, ffn_w1, ffn_b1, ffn_w2, ffn_b2, mask */
static tj_status layer_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const bool *flags = ctx ? ctx : (const bool[]){true, true};
    (void)n;
    *n_out = 1;
    out[0] = tj__transformer_encoder_layer_fwd(in[0], 4, 2, in[1], in[2], in[3], in[4], flags[0], flags[1], 1e-5, in[5],
                                               in[6], in[7], in[8], in[9], in[10], in[11], in[12], in[13], true, 1);
    return out[0] ? TJ_OK : tj_last_status();
}

static void layer_inputs(tj_tensor **in)
{
    in[0] = rnd(3, BTE, 30);
    attention_inputs(in);
    for (int i = 5; i < 9; i++) in[i] = rnd(1, (const int64_t[]){4}, 30 + (unsigned)i);
    in[9] = rnd(2, (const int64_t[]){6, 4}, 40);
    in[10] = rnd(1, (const int64_t[]){6}, 41);
    in[11] = rnd(2, (const int64_t[]){4, 6}, 42);
    in[12] = rnd(1, (const int64_t[]){4}, 43);
    in[13] = test_tensor(TJ_BOOL, 2, (const int64_t[]){2, 3}, (const bool[]){false, true, false, false, false, true});
}

Test(transformer_fastpath, layer_replays_exactly_and_decomposes_to_primitives)
{
    tj_tensor *in[14];
    layer_inputs(in);
    static const char *const layer_op[1] = {"aten._transformer_encoder_layer_fwd.default"};
    test_expect_traced(layer_step, in, 14, 1, layer_op, 1, NULL, 1e-5); /* gelu, norm first (ctx NULL) */
    tj_tensor *eager[1], *core[1];
    int n_out;
    const bool relu_post[2] = {false, false};
    cr_assert_eq(layer_step((void *)relu_post, in, 14, eager, &n_out), TJ_OK, "%s", tj_last_error());
    cr_expect(test_run_core(layer_step, (void *)relu_post, in, 14, core));
    double want[24];
    cr_assert_eq(tj_tensor_copy_to(tj_to_copy(eager[0], TJ_FLOAT64), want), TJ_OK, "%s", tj_last_error());
    test_expect_close(core[0], want, 24, 1e-5, 1e-5);
}

/* ---- errors ---- */

Test(transformer_fastpath, mha_refuses_heads_not_dividing_embed_dim)
{
    tj_tensor *x = example_x(), *w[4], *out;
    example_weights(w);
    tj_status st = tj__native_multi_head_attention(x, x, x, 2, 3, w[0], w[1], w[2], w[3], NULL, true, true, false, 0,
                                                   &out, NULL);
    cr_expect_eq(st, TJ_ERR_INVALID_ARGUMENT);
    test_expect_error(NULL, TJ_ERR_INVALID_ARGUMENT, OP_MHA, "embed_dim 2 must be divisible by num_heads 3");
}

Test(transformer_fastpath, mha_refuses_wrong_weight_input_and_mask_shapes)
{
    tj_tensor *x = example_x(), *w[4], *out;
    example_weights(w);
    tj_tensor *narrow = tj_slice(w[0], 0, true, 0, true, 4, 1);
    cr_expect_eq(tj__native_multi_head_attention(x, x, x, 2, 2, narrow, w[1], w[2], w[3], NULL, true, true, false, 0,
                                                 &out, NULL),
                 TJ_ERR_SHAPE);
    test_expect_error(NULL, TJ_ERR_SHAPE, OP_MHA, "qkv_weight must be [6, 2], got [4, 2]");
    tj_tensor *flat = tj_view(x, (const int64_t[]){2, 2}, 2);
    cr_expect_eq(tj__native_multi_head_attention(flat, flat, flat, 2, 2, w[0], w[1], w[2], w[3], NULL, true, true,
                                                 false, 0, &out, NULL),
                 TJ_ERR_SHAPE);
    test_expect_error(NULL, TJ_ERR_SHAPE, OP_MHA, "query must be 3-D [batch, tokens, embed_dim], got [2, 2]");
    tj_tensor *mask = test_tensor(TJ_BOOL, 2, S22, (const bool[]){false, true, false, false});
    cr_expect_eq(tj__native_multi_head_attention(x, x, x, 2, 2, w[0], w[1], w[2], w[3], mask, true, true, true, 1,
                                                 &out, NULL),
                 TJ_ERR_SHAPE);
    test_expect_error(NULL, TJ_ERR_SHAPE, OP_MHA, "mask [2, 2] must be [1, 2] (key padding) or [1, 2, 2, 2]");
    cr_expect_eq(tj__native_multi_head_attention(x, x, x, 3, 2, w[0], w[1], w[2], w[3], NULL, true, true, false, 0,
                                                 &out, NULL),
                 TJ_ERR_SHAPE);
    test_expect_error(NULL, TJ_ERR_SHAPE, OP_MHA, "embed_dim 3 does not match the input's last dim ([1, 2, 2])");
}

Test(transformer_fastpath, mha_mask_needs_a_supported_mask_type)
{
    tj_tensor *x = example_x(), *w[4], *out;
    example_weights(w);
    tj_tensor *mask = test_tensor(TJ_BOOL, 2, (const int64_t[]){1, 2}, (const bool[]){false, true});
    cr_expect_eq(tj__native_multi_head_attention(x, x, x, 2, 2, w[0], w[1], w[2], w[3], mask, true, true, false, 0,
                                                 &out, NULL),
                 TJ_ERR_INVALID_ARGUMENT);
    test_expect_error(NULL, TJ_ERR_INVALID_ARGUMENT, OP_MHA, "a mask needs a mask_type");
    cr_expect_eq(tj__native_multi_head_attention(x, x, x, 2, 2, w[0], w[1], w[2], w[3], mask, true, true, true, 0,
                                                 &out, NULL),
                 TJ_ERR_UNSUPPORTED);
    test_expect_error(NULL, TJ_ERR_UNSUPPORTED, OP_MHA, "mask_type 0 (src_mask) is not supported");
    cr_expect_eq(tj__native_multi_head_attention(x, x, x, 2, 2, w[0], w[1], w[2], w[3], mask, true, true, true, 3,
                                                 &out, NULL),
                 TJ_ERR_INVALID_ARGUMENT);
    test_expect_error(NULL, TJ_ERR_INVALID_ARGUMENT, OP_MHA, "mask_type must be 0, 1 or 2, got 3");
}

Test(transformer_fastpath, layer_refuses_ffn_weights_and_heads_of_other_shapes)
{
    test_expect_error(example_layer_call(example_x(), false, false, 3), TJ_ERR_INVALID_ARGUMENT, OP_LAYER,
                      "embed_dim 2 must be divisible by num_heads 3");
    tj_tensor *w[4], *l[8], *x = example_x();
    example_weights(w);
    example_layer(l);
    tj_tensor *r = tj__transformer_encoder_layer_fwd(x, 2, 2, w[0], w[1], w[2], w[3], false, false, 1e-5, l[0], l[1],
                                                     l[2], l[3], l[4], l[5], l[4], l[7], NULL, false, 0);
    test_expect_error(r, TJ_ERR_SHAPE, OP_LAYER, "ffn_weight_2 must be [2, 3], got [3, 2]");
    tj_tensor *ints = tj_to_copy(x, TJ_INT64);
    test_expect_error(tj__transformer_encoder_layer_fwd(ints, 2, 2, w[0], w[1], w[2], w[3], false, false, 1e-5, l[0],
                                                        l[1], l[2], l[3], l[4], l[5], l[6], l[7], NULL, false, 0),
                      TJ_ERR_DTYPE, OP_LAYER, "src must be float32 or float64, got int64");
}
