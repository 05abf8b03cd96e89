/* Session 22 (opsbatch) operators: binary_cross_entropy_with_logits,
 * baddbmm, scatter.src / scatter.value, mish, log_sigmoid, softsign, glu
 * (values and gradients against PyTorch 1.13 in float64, float32 within
 * rounding, errors, the graphs make_fx records). Reference values: tests/opsbatch_ref.h, written
 * by tests/make_opsbatch_refs.py, so the tests run without PyTorch. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "opsbatch_ref.h"
#include "test_util.h"

TestSuite(opsbatch, .init = test_scope_open, .fini = test_scope_close);

#define LEN(a) ((int64_t)(sizeof(a) / sizeof *(a)))

/* v rounded to float32, of `shape`. */
static tj_tensor *f32(const double *v, int ndim, const int64_t *shape)
{
    return tj_to_copy(test_f64(ndim, shape, v), TJ_FLOAT32);
}

/* The gradients of sum(out * gy) with respect to ins[0..n), each expected
 * close to want[i] (float64: 1e-12 relative); gy NULL is the scalar 1.5
 * (a reduced loss's). */
static void expect_grads(tj_tensor *out, const double *gy, tj_tensor *const *ins, int n, const double *const *want)
{
    cr_assert_not_null(out, "%s", tj_last_error());
    double s = 1.5;
    tj_tensor *g = gy ? test_f64(tj_tensor_ndim(out), tj_tensor_shape(out), gy) : test_f64(0, NULL, &s);
    tj_tensor *got[4];
    cr_assert_eq(tj_autograd_grad(&out, 1, &g, ins, n, got), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < n; i++) test_expect_close(got[i], want[i], tj_tensor_numel(ins[i]), 1e-12, 1e-14);
}

/* ---- binary_cross_entropy_with_logits ---- */

static const int64_t S34[2] = {3, 4}, S4[1] = {4};

/* F.binary_cross_entropy_with_logits(x, t, w, pos_weight=p, reduction) and
 * its gradients in x and t, in float64; the float32 forward within 2e-6 */
static void check_bce_logits(const double *w, const double *p, int64_t reduction, const double *out,
                             const double *gx, const double *gt)
{
    tj_tensor *x = test_f64_grad(BCEL_X, 2, S34, true), *t = test_f64_grad(BCEL_T, 2, S34, true);
    tj_tensor *wt = w ? test_f64_grad(w, 1, S4, false) : NULL, *pt = p ? test_f64_grad(p, 1, S4, false) : NULL;
    tj_tensor *loss = tj_binary_cross_entropy_with_logits(x, t, wt, pt, reduction);
    int64_t n = reduction == 0 ? 12 : 1;
    test_expect_close(loss, out, n, 1e-12, 1e-14);
    expect_grads(loss, reduction == 0 ? BCEL_GY : NULL, (tj_tensor *[]){x, t}, 2, (const double *const[]){gx, gt});
    tj_tensor *l32 = tj_binary_cross_entropy_with_logits(f32(BCEL_X, 2, S34), f32(BCEL_T, 2, S34),
                                                         w ? f32(w, 1, S4) : NULL, p ? f32(p, 1, S4) : NULL, reduction);
    test_expect_close(l32, out, n, 2e-6, 1e-7);
}

Test(opsbatch, bce_with_logits_matches_pytorch_without_weights)
{
    check_bce_logits(NULL, NULL, 0, BCEL_NONE_OUT, BCEL_NONE_GX, BCEL_NONE_GT);
}

Test(opsbatch, bce_with_logits_matches_pytorch_with_weight_and_pos_weight)
{
    check_bce_logits(BCEL_W, BCEL_P, 1, BCEL_MEAN_WP_OUT, BCEL_MEAN_WP_GX, BCEL_MEAN_WP_GT);
    check_bce_logits(NULL, BCEL_P, 2, BCEL_SUM_P_OUT, BCEL_SUM_P_GX, BCEL_SUM_P_GT);
    check_bce_logits(BCEL_W, NULL, 1, BCEL_MEAN_W_OUT, BCEL_MEAN_W_GX, BCEL_MEAN_W_GT);
}

/* the stable form: no overflow at large logits (torch: 100 -> 0 and 100 for
 * targets 1 and 0; -100 the other way round), nan propagates */
Test(opsbatch, bce_with_logits_is_stable_for_large_logits)
{
    tj_tensor *x = test_f32(1, (int64_t[]){5}, (float[]){100, 100, -100, -100, NAN});
    tj_tensor *t = test_f32(1, (int64_t[]){5}, (float[]){1, 0, 1, 0, 1});
    test_expect_f32(tj_binary_cross_entropy_with_logits(x, t, NULL, NULL, 0), (float[]){0, 100, 100, 0, NAN}, 5, 0);
}

Test(opsbatch, bce_with_logits_refuses_bad_shapes_dtypes_reductions_and_weight_gradients)
{
    tj_tensor *x = test_random_f32(2, S34, 1), *t = test_random_f32(2, S34, 2);
    /* F.binary_cross_entropy_with_logits: "Target size (torch.Size([4])) must be the same as input size" */
    test_expect_error(tj_binary_cross_entropy_with_logits(x, test_random_f32(1, S4, 3), NULL, NULL, 1), TJ_ERR_SHAPE,
                      "aten::binary_cross_entropy_with_logits", "target size [4] must be the same as input size [3, 4]");
    test_expect_error(tj_binary_cross_entropy_with_logits(x, t, test_random_f32(1, (int64_t[]){3}, 4), NULL, 1),
                      TJ_ERR_SHAPE, "aten::binary_cross_entropy_with_logits", "weight of shape [3]");
    test_expect_error(tj_binary_cross_entropy_with_logits(x, t, NULL, test_random_f32(1, (int64_t[]){2}, 4), 1),
                      TJ_ERR_SHAPE, "aten::binary_cross_entropy_with_logits", "pos_weight of shape [2]");
    test_expect_error(tj_binary_cross_entropy_with_logits(x, tj_to_copy(t, TJ_FLOAT64), NULL, NULL, 1), TJ_ERR_DTYPE,
                      "aten::binary_cross_entropy_with_logits", "float64");
    test_expect_error(tj_binary_cross_entropy_with_logits(tj_to_copy(x, TJ_INT64), tj_to_copy(t, TJ_INT64), NULL,
                                                          NULL, 1),
                      TJ_ERR_DTYPE, "aten::binary_cross_entropy_with_logits", "int64");
    test_expect_error(tj_binary_cross_entropy_with_logits(x, t, NULL, NULL, 3), TJ_ERR_INVALID_ARGUMENT,
                      "aten::binary_cross_entropy_with_logits", "reduction");
    /* torch: "the function 'binary_cross_entropy_with_logits' is not differentiable with respect to argument 'weight'" */
    tj_tensor *w = test_random_f32(1, S4, 5);
    cr_assert_eq(tj_tensor_set_requires_grad(w, true), TJ_OK);
    test_expect_error(tj_binary_cross_entropy_with_logits(x, t, w, NULL, 1), TJ_ERR_UNSUPPORTED,
                      "aten::binary_cross_entropy_with_logits", "");
}

/* ---- baddbmm ---- */

Test(opsbatch, baddbmm_matches_pytorch_with_beta_and_alpha)
{
    tj_tensor *self = test_f64_grad(BADDBMM_SELF, 3, (int64_t[]){2, 3, 4}, true), *b1 = test_f64_grad(BADDBMM_B1, 3, (int64_t[]){2, 3, 5}, true),
              *b2 = test_f64_grad(BADDBMM_B2, 3, (int64_t[]){2, 5, 4}, true);
    tj_tensor *out = tj_baddbmm(self, b1, b2, tj_v_float(0.5), tj_v_int(2));
    test_expect_close(out, BADDBMM_OUT, 24, 1e-12, 1e-14);
    expect_grads(out, BADDBMM_GY, (tj_tensor *[]){self, b1, b2}, 3,
                 (const double *const[]){BADDBMM_GSELF, BADDBMM_GB1, BADDBMM_GB2});
    tj_tensor *o32 = tj_baddbmm(f32(BADDBMM_SELF, 3, (int64_t[]){2, 3, 4}), f32(BADDBMM_B1, 3, (int64_t[]){2, 3, 5}),
                                f32(BADDBMM_B2, 3, (int64_t[]){2, 5, 4}), tj_v_float(0.5), tj_v_int(2));
    test_expect_close(o32, BADDBMM_OUT, 24, 1e-6, 1e-6);
}

/* self [4] broadcast to [2, 3, 4]: its gradient is summed back to [4] */
Test(opsbatch, baddbmm_broadcasts_self_and_sums_its_gradient)
{
    tj_tensor *self = test_f64_grad(BADDBMM_SELF, 1, S4, true), *b1 = test_f64_grad(BADDBMM_B1, 3, (int64_t[]){2, 3, 5}, false),
              *b2 = test_f64_grad(BADDBMM_B2, 3, (int64_t[]){2, 5, 4}, false);
    tj_tensor *out = tj_baddbmm(self, b1, b2, tj_v_float(-1.5), tj_v_int(1));
    test_expect_close(out, BADDBMM_BCAST_OUT, 24, 1e-12, 1e-14);
    expect_grads(out, BADDBMM_GY, &self, 1, (const double *const[]){BADDBMM_BCAST_GSELF});
}

/* beta = 0 ignores self, nan included (torch.baddbmm(full(nan), a, b, beta=0) has no nan) */
Test(opsbatch, baddbmm_with_beta_zero_ignores_nan_in_self)
{
    tj_tensor *nan = tj_full((int64_t[]){1, 1, 2}, 3, tj_v_float(NAN), TJ_FLOAT32);
    tj_tensor *a = test_f32(3, (int64_t[]){1, 1, 2}, (float[]){1, 2}), *b = test_f32(3, (int64_t[]){1, 2, 2}, (float[]){1, 2, 3, 4});
    test_expect_f32(tj_baddbmm(nan, a, b, tj_v_int(0), tj_v_int(1)), (float[]){7, 10}, 2, 0);
}

/* alpha = 0 ignores the product, inf and nan in the batches included (the
 * kernel's GEMM, as BLAS, reads neither then; torch.addmm(x, inf, b,
 * alpha=0) has no nan): the core decomposition must too, not compute nan =
 * inf * 0. Eager, and traced with the core table and replayed. */
static tj_status alpha_zero_products(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_value zero = tj_v_int(0);
    out[0] = tj_baddbmm(in[0], in[1], in[2], tj_v_float(2), zero);
    out[1] = tj_baddbmm(in[0], in[1], in[2], zero, zero);
    out[2] = tj_addmm(in[0], tj_select(in[1], 0, 0), tj_select(in[2], 0, 0), tj_v_int(1), tj_v_float(0.0));
    *n_out = 3;
    return out[0] && out[1] && out[2] ? TJ_OK : tj_last_status();
}

Test(opsbatch, baddbmm_and_addmm_with_alpha_zero_ignore_inf_in_the_product_when_decomposed)
{
    tj_tensor *in[3] = {test_f32(1, (int64_t[]){2}, (float[]){-0.0f, 1.5f}),
                        test_f32(3, (int64_t[]){1, 2, 2}, (float[]){INFINITY, 1, NAN, 2}),
                        test_f32(3, (int64_t[]){1, 2, 2}, (float[]){1, 2, 3, -INFINITY})};
    const float want[3][4] = {{-0.0f, 3, -0.0f, 3}, {0, 0, 0, 0}, {-0.0f, 1.5f, -0.0f, 1.5f}};
    tj_tensor *eager[3];
    int n = 0;
    cr_assert_eq(alpha_zero_products(NULL, in, 3, eager, &n), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < 3; i++) test_expect_f32(eager[i], want[i], 4, 0);
    tj_decomp_table *core = tj_core_decompositions();
    for (int mode = 0; mode < 2; mode++) { /* real, fake */
        tj_graph *g = tj_make_fx(alpha_zero_products, NULL, in, 3, core, (tj_tracing_mode)mode);
        cr_assert_not_null(g, "%s", tj_last_error());
        tj_tensor *out[3];
        cr_assert_eq(tj_graph_run(g, in, 3, out), TJ_OK, "%s", tj_last_error());
        for (int i = 0; i < 3; i++) test_expect_f32(out[i], want[i], 4, 0); /* -0.0 told from +0 */
        tj_graph_free(g);
    }
    tj_decomp_table_free(core);
}

Test(opsbatch, baddbmm_refuses_bad_ranks_batches_inner_sizes_self_and_dtypes)
{
    tj_tensor *self = test_random_f32(3, (int64_t[]){2, 3, 4}, 1), *a = test_random_f32(3, (int64_t[]){2, 3, 5}, 2),
              *b = test_random_f32(3, (int64_t[]){2, 5, 4}, 3);
    tj_value one = tj_v_int(1);
    test_expect_error(tj_baddbmm(self, test_random_f32(2, (int64_t[]){3, 5}, 4), b, one, one), TJ_ERR_SHAPE,
                      "aten::baddbmm", "batch1 [3, 5] must be 3-D");
    test_expect_error(tj_baddbmm(self, a, test_random_f32(3, (int64_t[]){3, 5, 4}, 5), one, one), TJ_ERR_SHAPE,
                      "aten::baddbmm", "different batch sizes (2 != 3)");
    test_expect_error(tj_baddbmm(self, a, test_random_f32(3, (int64_t[]){2, 4, 4}, 5), one, one), TJ_ERR_SHAPE,
                      "aten::baddbmm", "cannot be multiplied (5 != 4)");
    test_expect_error(tj_baddbmm(test_random_f32(1, (int64_t[]){3}, 6), a, b, one, one), TJ_ERR_SHAPE,
                      "aten::baddbmm", "self [3] cannot be broadcast to [2, 3, 4]");
    test_expect_error(tj_baddbmm(self, a, tj_to_copy(b, TJ_FLOAT64), one, one), TJ_ERR_DTYPE, "aten::baddbmm", "float64");
    test_expect_error(tj_baddbmm(self, a, b, tj_v_float(1e39), one), TJ_ERR_INVALID_ARGUMENT, "aten::baddbmm", "beta");
}

/* ---- scatter.src / scatter.value ---- */

/* torch.scatter(self [3, 4], 0, index [2, 4] with duplicates in columns 0
 * and 2, src [2, 4]): the last duplicate wins; self's gradient is zero where
 * written, src's is grad.gather (duplicates included) */
Test(opsbatch, scatter_src_matches_pytorch_with_duplicate_indices)
{
    tj_tensor *self = test_f64_grad(SCATTER_SELF, 2, S34, true), *src = test_f64_grad(SCATTER_SRC0, 2, (int64_t[]){2, 4}, true);
    tj_tensor *index = test_i64(2, (int64_t[]){2, 4}, SCATTER_I0);
    tj_tensor *out = tj_scatter(self, 0, index, src);
    test_expect_close(out, SCATTER_DIM0_OUT, 12, 0, 0);
    expect_grads(out, SCATTER_GY, (tj_tensor *[]){self, src}, 2,
                 (const double *const[]){SCATTER_DIM0_GSELF, SCATTER_DIM0_GSRC});
    /* int64 and bool scatter too */
    tj_tensor *si = tj_scatter(tj_zeros(S34, 2, TJ_INT64), 0, index, tj_ones((int64_t[]){2, 4}, 2, TJ_INT64));
    test_expect_close(si, (double[]){1, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 0}, 12, 0, 0);
}

Test(opsbatch, scatter_along_the_last_dim_matches_pytorch)
{
    tj_tensor *self = test_f64_grad(SCATTER_SELF, 2, (int64_t[]){2, 5}, true), *src = test_f64_grad(SCATTER_SRC1, 2, (int64_t[]){2, 3}, true);
    tj_tensor *index = test_i64(2, (int64_t[]){2, 3}, SCATTER_I1);
    tj_tensor *out = tj_scatter(self, -1, index, src);
    test_expect_close(out, SCATTER_DIM1_OUT, 10, 0, 0);
    expect_grads(out, SCATTER_GY, (tj_tensor *[]){self, src}, 2,
                 (const double *const[]){SCATTER_DIM1_GSELF, SCATTER_DIM1_GSRC});
}

/* src [2, 4] larger than index [2, 3]: torch 1.13's backward fails on it
 * (an invalid gradient shape); tjit pads grad.gather with zeros, as
 * scatter_add's gradient does */
Test(opsbatch, scatter_gradient_of_a_larger_src_is_zero_where_unread)
{
    double src_v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    tj_tensor *self = test_f64_grad(SCATTER_SELF, 2, (int64_t[]){2, 5}, false), *src = test_f64_grad(src_v, 2, (int64_t[]){2, 4}, true);
    tj_tensor *out = tj_scatter(self, 1, test_i64(2, (int64_t[]){2, 3}, SCATTER_I1), src);
    test_expect_close(out, (double[]){2, 1, -1, 0.5, 3, 0, 6, -0.5, 7, -1}, 10, 0, 0);
    expect_grads(out, SCATTER_GY, &src, 1, (const double *const[]){SCATTER_PADDED_GSRC});
}

Test(opsbatch, scatter_value_matches_pytorch)
{
    tj_tensor *self = test_f64_grad(SCATTER_SELF, 2, S34, true);
    tj_tensor *out = tj_scatter_value(self, 0, test_i64(2, (int64_t[]){2, 4}, SCATTER_I0), tj_v_float(-2.5));
    test_expect_close(out, SCATTER_VALUE_OUT, 12, 0, 0);
    expect_grads(out, SCATTER_GY, &self, 1, (const double *const[]){SCATTER_VALUE_GSELF});
    /* torch.zeros(2, dtype=torch.int64).scatter(0, tensor([1]), 2.7): [0, 2] */
    tj_tensor *i = tj_scatter_value(tj_zeros((int64_t[]){2}, 1, TJ_INT64), 0, test_i64(1, (int64_t[]){1}, (int64_t[]){1}),
                                    tj_v_float(2.7));
    test_expect_close(i, (double[]){0, 2}, 2, 0, 0);
}

Test(opsbatch, scatter_refuses_bad_indices_shapes_and_dtypes)
{
    tj_tensor *self = test_random_f32(2, S34, 1), *src = test_random_f32(2, (int64_t[]){2, 4}, 2);
    tj_tensor *index = test_i64(2, (int64_t[]){2, 4}, SCATTER_I0);
    /* torch: "index 3 is out of bounds for dimension 0 with size 3" */
    test_expect_error(tj_scatter(self, 0, test_i64(2, (int64_t[]){1, 2}, (int64_t[]){0, 3}), src), TJ_ERR_INDEX,
                      "aten::scatter.src", "index 3 is out of bounds for dimension 0 with size 3");
    test_expect_error(tj_scatter_value(self, 0, test_i64(2, (int64_t[]){1, 1}, (int64_t[]){-1}), tj_v_int(1)),
                      TJ_ERR_INDEX, "aten::scatter.value", "index -1 is out of bounds");
    test_expect_error(tj_scatter(self, 2, index, src), TJ_ERR_INDEX, "aten::scatter.src", "");
    test_expect_error(tj_scatter(self, 0, tj_to_copy(index, TJ_FLOAT32), src), TJ_ERR_DTYPE, "aten::scatter.src",
                      "expected dtype int64 for index");
    test_expect_error(tj_scatter(self, 0, index, tj_to_copy(src, TJ_FLOAT64)), TJ_ERR_DTYPE, "aten::scatter.src",
                      "expected self.dtype to be equal to src.dtype");
    test_expect_error(tj_scatter(self, 0, index, test_random_f32(2, (int64_t[]){2, 3}, 3)), TJ_ERR_SHAPE,
                      "aten::scatter.src", "size does not match at dimension 1");
    test_expect_error(tj_scatter_value(self, 0, test_i64(1, (int64_t[]){2}, (int64_t[]){0, 1}), tj_v_int(1)),
                      TJ_ERR_SHAPE, "aten::scatter.value", "same number of dimensions");
    test_expect_error(tj_scatter_value(self, 0, index, tj_v_float(1e39)), TJ_ERR_INVALID_ARGUMENT,
                      "aten::scatter.value", "value");
}

/* ---- mish, log_sigmoid, softsign, glu ---- */

/* f(x) for x = ACT_X [3, 4] (from -30 to 25) and its gradient, in float64;
 * the float32 forward within 2e-6 */
static void check_act(tj_tensor *(*f)(tj_tensor *), const double *out, const double *gx)
{
    tj_tensor *x = test_f64_grad(ACT_X, 2, S34, true), *y = f(x);
    test_expect_close(y, out, 12, 1e-12, 1e-14);
    expect_grads(y, ACT_GY, &x, 1, (const double *const[]){gx});
    test_expect_close(f(f32(ACT_X, 2, S34)), out, 12, 2e-6, 1e-7);
}

Test(opsbatch, mish_matches_pytorch) { check_act(tj_mish, MISH_OUT, MISH_GX); }
Test(opsbatch, log_sigmoid_matches_pytorch) { check_act(tj_log_sigmoid, LOG_SIGMOID_OUT, LOG_SIGMOID_GX); }
Test(opsbatch, softsign_matches_pytorch) { check_act(tj_softsign, SOFTSIGN_OUT, SOFTSIGN_GX); }

/* torch.ops.aten.log_sigmoid_forward(x)[1] is exp(-|x|) on CPU */
Test(opsbatch, log_sigmoid_forward_returns_its_buffer_and_the_backward_reads_it)
{
    tj_tensor *x = test_f64_grad(ACT_X, 2, S34, false), *out, *buffer;
    cr_assert_eq(tj_log_sigmoid_forward(x, &out, &buffer), TJ_OK, "%s", tj_last_error());
    test_expect_close(out, LOG_SIGMOID_OUT, 12, 1e-12, 1e-14);
    test_expect_close(buffer, LOG_SIGMOID_BUFFER, 12, 1e-12, 1e-14);
    tj_tensor *g = test_f64(2, S34, ACT_GY);
    test_expect_close(tj_log_sigmoid_backward(g, x, buffer), LOG_SIGMOID_GX, 12, 1e-12, 1e-14);
    /* stable at the extremes: log_sigmoid(-100) = -100, log_sigmoid(100) = -0 (torch: -3.7835e-44 in float32) */
    test_expect_close(tj_log_sigmoid(test_f32(1, (int64_t[]){3}, (float[]){-100, 100, NAN})), (double[]){-100, 0, NAN}, 3,
                      0, 1e-40);
}

Test(opsbatch, glu_matches_pytorch_along_either_dim)
{
    tj_tensor *x = test_f64_grad(ACT_X, 2, S34, true), *y = tj_glu(x, -1);
    test_expect_close(y, GLU_LAST_OUT, 6, 1e-12, 1e-14);
    expect_grads(y, ACT_GY, &x, 1, (const double *const[]){GLU_LAST_GX});
    tj_tensor *x0 = test_f64_grad(ACT_X, 2, (int64_t[]){4, 3}, true), *y0 = tj_glu(x0, 0);
    test_expect_close(y0, GLU_FIRST_OUT, 6, 1e-12, 1e-14);
    expect_grads(y0, ACT_GY, &x0, 1, (const double *const[]){GLU_FIRST_GX});
    test_expect_close(tj_glu(f32(ACT_X, 2, (int64_t[]){4, 3}), 0), GLU_FIRST_OUT, 6, 2e-6, 1e-6);
}

Test(opsbatch, activations_refuse_integers_and_glu_odd_sizes)
{
    tj_tensor *i = tj_zeros(S34, 2, TJ_INT64), *x = test_random_f32(2, (int64_t[]){3, 5}, 1);
    test_expect_error(tj_mish(i), TJ_ERR_DTYPE, "aten::mish", "int64");
    test_expect_error(tj_log_sigmoid(i), TJ_ERR_DTYPE, "aten::log_sigmoid_forward", "int64");
    test_expect_error(tj_glu(i, 1), TJ_ERR_DTYPE, "aten::glu", "int64");
    /* torch: "Halving dimension must be even, but dimension 1 is size 5" */
    test_expect_error(tj_glu(x, -1), TJ_ERR_SHAPE, "aten::glu", "Halving dimension must be even, but dimension 1 is size 5");
    test_expect_error(tj_glu(tj_ones(NULL, 0, -1), 0), TJ_ERR_SHAPE, "aten::glu", "scalars");
    test_expect_error(tj_glu(x, 2), TJ_ERR_INDEX, "aten::glu", "");
    test_expect_error(tj_glu_backward(x, test_random_f32(2, S34, 2), 1), TJ_ERR_SHAPE, "aten::glu_backward",
                      "grad_output [3, 5] must have glu's result shape [3, 2]");
    test_expect_error(tj_log_sigmoid_backward(x, x, i), TJ_ERR_SHAPE, "aten::log_sigmoid_backward", "");
}

/* The gradients record what PyTorch 1.13's make_fx records for them:
 * log_sigmoid_forward + log_sigmoid_backward, glu + glu_backward, mish's
 * formula through softplus, tanh and sigmoid */
static tj_status act_grads(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]);
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK) return tj_last_status();
    tj_tensor *loss = tj_sum(tj_add(tj_add(tj_log_sigmoid(x), tj_mish(x)), tj_sum_dim(tj_glu(x, -1), (int64_t[]){1}, 1, true, -1)), -1);
    *n_out = 1;
    return loss ? tj_autograd_grad(&loss, 1, NULL, &x, 1, &out[0]) : tj_last_status();
}

Test(opsbatch, activation_gradients_trace_as_pytorch_records_them)
{
    tj_tensor *in[1] = {test_random_f32(2, S34, 7)};
    tj_graph *g = tj_make_fx(act_grads, NULL, in, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    const char *want[] = {"aten.log_sigmoid_forward.default(%detach)", "aten.log_sigmoid_backward.default(",
                          "aten.glu.default(%detach)", "aten.glu_backward.default(", "aten.mish.default(%detach)",
                          "aten.softplus.default(%detach", "aten.ones_like.default("};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) cr_expect(strstr(text, want[k]), "%s lacks %s", text, want[k]);
    cr_expect(!strstr(text, "aten.log_sigmoid.default"), "log_sigmoid is implicit: %s", text);
    free(text);
    tj_graph_free(g);
}
