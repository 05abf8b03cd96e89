/* Losses and dropout: nll_loss_forward / backward (class weights,
 * ignore_index, reductions, 1-d input, all targets ignored, out-of-range
 * targets), the implicit nll_loss and nll_loss2d_forward,
 * cross_entropy_loss (label smoothing, soft targets, k-dimensional inputs)
 * and mse_loss, and native_dropout / dropout (train and eval, p = 0 and 1,
 * scaling, seed reproducibility across thread counts), and the core
 * table's decompositions of nll_loss_forward, nll_loss_backward and
 * native_dropout (primitives only, kernel values).
 *
 * Reference values were printed by PyTorch 1.13 (torch.ops.aten.* and
 * torch.nn.functional.* on the same float32 inputs). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(nll, .init = test_scope_open, .fini = test_scope_close);
TestSuite(cross_entropy, .init = test_scope_open, .fini = test_scope_close);
TestSuite(dropout, .init = test_scope_open, .fini = test_scope_close);
TestSuite(decompositions, .init = test_scope_open, .fini = test_scope_close);

static void expect_values(const tj_tensor *t, int ndim, const double *want, int64_t n, double rtol)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_ndim(t), ndim, "rank %d, want %d", tj_tensor_ndim(t), ndim);
    test_expect_close(t, want, n, rtol, 1e-7);
}

/* x [3, 4] of log-probabilities, targets (2, ignored, 1), weights (0.5, 2, 1, 4). */
static tj_tensor *nll_x(void)
{
    return test_f32(2, (int64_t[]){3, 4},
                    (float[]){-1.0f, -2.0f, -0.5f, -3.0f, -0.25f, -1.5f, -2.5f, -1.0f, -2.0f, -0.75f, -1.25f, -0.5f});
}
static tj_tensor *nll_t(void) { return test_i64(1, (int64_t[]){3}, (int64_t[]){2, -100, 1}); }
static tj_tensor *nll_w(void) { return test_f32(1, (int64_t[]){4}, (float[]){0.5f, 2.0f, 1.0f, 4.0f}); }

static void expect_nll(tj_tensor *x, tj_tensor *t, tj_tensor *w, int64_t reduction, int64_t ignore, int out_ndim,
                       const double *out, int64_t n, double total)
{
    tj_tensor *o = NULL, *tw = NULL;
    cr_assert_eq(tj_nll_loss_forward(x, t, w, reduction, ignore, &o, &tw), TJ_OK, "%s", tj_last_error());
    expect_values(o, out_ndim, out, n, 1e-6);
    expect_values(tw, 0, &total, 1, 1e-6);
}

Test(nll, class_weights_and_ignore_index_for_every_reduction)
{
    /* kept: row 0 (class 2, w 1, loss 0.5) and row 2 (class 1, w 2, loss 1.5) */
    expect_nll(nll_x(), nll_t(), nll_w(), 0, -100, 1, (double[]){0.5, 0.0, 1.5}, 3, 0.0);
    expect_nll(nll_x(), nll_t(), nll_w(), 1, -100, 0, (double[]){2.0 / 3.0}, 1, 3.0);
    expect_nll(nll_x(), nll_t(), nll_w(), 2, -100, 0, (double[]){2.0}, 1, 3.0);
    /* without weights the mean divides by the number of kept targets */
    expect_nll(nll_x(), nll_t(), NULL, 1, -100, 0, (double[]){(0.5 + 0.75) / 2}, 1, 2.0);
}

Test(nll, ignore_index_inside_the_class_range_skips_those_targets)
{
    expect_nll(nll_x(), test_i64(1, (int64_t[]){3}, (int64_t[]){2, 1, 1}), NULL, 0, 1, 1, (double[]){0.5, 0, 0}, 3,
               0.0);
    expect_nll(nll_x(), test_i64(1, (int64_t[]){3}, (int64_t[]){2, 1, 1}), NULL, 2, 1, 0, (double[]){0.5}, 1, 1.0);
}

Test(nll, every_target_ignored_gives_nan_mean_and_zero_total_weight)
{
    tj_tensor *t = test_i64(1, (int64_t[]){3}, (int64_t[]){-100, -100, -100});
    expect_nll(nll_x(), t, nll_w(), 1, -100, 0, (double[]){NAN}, 1, 0.0);
    expect_nll(nll_x(), t, nll_w(), 2, -100, 0, (double[]){0.0}, 1, 0.0);
    /* an empty batch too */
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){0, 4});
    expect_nll(e, tj_tensor_empty(TJ_INT64, 1, (int64_t[]){0}), NULL, 1, -100, 0, (double[]){NAN}, 1, 0.0);
}

Test(nll, one_dimensional_input_with_a_0dim_target)
{
    tj_tensor *x = test_f32(1, (int64_t[]){4}, (float[]){-1.0f, -2.0f, -0.5f, -3.0f});
    expect_nll(x, test_i64(0, NULL, (int64_t[]){3}), nll_w(), 1, -100, 0, (double[]){3.0}, 1, 4.0);
    expect_nll(x, test_i64(0, NULL, (int64_t[]){3}), nll_w(), 0, -100, 0, (double[]){12.0}, 1, 4.0);
}

/* A [0] input with an empty [0] target is a batch of none (torch 1.13's
 * "target.numel() == 0" case: 0, nan for the mean, total weight 0); the
 * kernel must read no target. The target is an empty view of a tensor
 * holding 7, so that a read of its first element shows as an error. torch:
 *   torch.ops.aten.nll_loss_forward(torch.zeros(0), torch.zeros(0, dtype=torch.long), None, r, -100)
 *   -> (0., 0.) for r = 0 and 2, (nan, 0.) for r = 1 */
Test(nll, one_dimensional_input_with_an_empty_target_reads_no_target)
{
    tj_tensor *x = tj_slice(test_f32(1, (int64_t[]){1}, (float[]){-1.0f}), 0, true, 0, true, 0, 1);
    tj_tensor *t = tj_slice(test_i64(1, (int64_t[]){1}, (int64_t[]){7}), 0, true, 0, true, 0, 1);
    cr_assert_not_null(x, "%s", tj_last_error());
    cr_assert_not_null(t, "%s", tj_last_error());
    for (int reduction = 0; reduction < 3; reduction++)
        expect_nll(x, t, NULL, reduction, -100, 0, (double[]){reduction == 1 ? NAN : 0.0}, 1, 0.0);
    tj_tensor *g = tj_nll_loss_backward(tj_tensor_scalar_f32(1), x, t, NULL, 2, -100, tj_tensor_scalar_f32(0));
    cr_assert_not_null(g, "%s", tj_last_error());
    test_assert_dtype_shape(g, TJ_FLOAT32, 1, (int64_t[]){0});
}

Test(nll, target_out_of_range_is_an_index_error_naming_op_and_value)
{
    tj_tensor *o = NULL, *tw = NULL;
    tj_tensor *t = test_i64(1, (int64_t[]){3}, (int64_t[]){2, 4, 1});
    cr_assert_eq(tj_nll_loss_forward(nll_x(), t, NULL, 1, -100, &o, &tw), TJ_ERR_INDEX);
    cr_expect(strstr(tj_last_error(), "aten::nll_loss_forward") && strstr(tj_last_error(), "target 4"), "%s",
              tj_last_error());
    cr_expect_null(o);
    /* a negative target that is not ignore_index */
    t = test_i64(1, (int64_t[]){3}, (int64_t[]){2, -1, 1});
    cr_assert_eq(tj_nll_loss_forward(nll_x(), t, NULL, 0, -100, &o, &tw), TJ_ERR_INDEX);
    cr_expect(strstr(tj_last_error(), "target -1"), "%s", tj_last_error());
    tj_tensor *g = tj_nll_loss_backward(tj_tensor_scalar_f32(1), nll_x(), t, NULL, 1, -100, tj_tensor_scalar_f32(2));
    cr_expect_null(g);
    cr_expect(strstr(tj_last_error(), "aten::nll_loss_backward") && strstr(tj_last_error(), "target -1"), "%s",
              tj_last_error());
}

Test(nll, shape_errors_name_the_op)
{
    tj_tensor *o = NULL, *tw = NULL;
    cr_assert_eq(tj_nll_loss_forward(nll_x(), test_i64(1, (int64_t[]){2}, (int64_t[]){0, 1}), NULL, 1, -100, &o, &tw),
                 TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "aten::nll_loss_forward: size mismatch"), "%s", tj_last_error());
    cr_assert_eq(
        tj_nll_loss_forward(nll_x(), nll_t(), test_f32(1, (int64_t[]){3}, (float[]){1, 1, 1}), 1, -100, &o, &tw),
        TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "weight tensor should be defined either for all 4 classes"), "%s",
              tj_last_error());
}

Test(nll, backward_scatters_minus_weight_at_the_target)
{
    /* mean: grad_output 2, total_weight 3 -> -w[t] * 2/3 */
    tj_tensor *g = tj_nll_loss_backward(tj_tensor_scalar_f32(2), nll_x(), nll_t(), nll_w(), 1, -100,
                                        tj_tensor_scalar_f32(3));
    expect_values(g, 2, (double[]){0, 0, -2.0 / 3, 0, 0, 0, 0, 0, 0, -4.0 / 3, 0, 0}, 12, 1e-6);
    /* none: per-row grad_output, the ignored row stays 0 */
    g = tj_nll_loss_backward(test_f32(1, (int64_t[]){3}, (float[]){1, 2, 3}), nll_x(), nll_t(), nll_w(), 0, -100,
                             tj_tensor_scalar_f32(0));
    expect_values(g, 2, (double[]){0, 0, -1, 0, 0, 0, 0, 0, 0, -6, 0, 0}, 12, 1e-6);
}

/* PyTorch: "The function 'nll_loss_forward' is not differentiable with
 * respect to argument 'weight'" with grad mode on; under no_grad it runs. */
Test(nll, a_weight_that_requires_grad_is_refused)
{
    tj_tensor *w = nll_w(), *o = NULL, *tw = NULL, *want = NULL;
    cr_assert_eq(tj_nll_loss_forward(nll_x(), nll_t(), w, 1, -100, &want, NULL), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_set_requires_grad(w, true), TJ_OK);
    cr_expect_eq(tj_nll_loss_forward(nll_x(), nll_t(), w, 1, -100, &o, &tw), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "aten::nll_loss_forward: not differentiable with respect to argument 'weight'"),
              "%s", tj_last_error());
    bool was = tj_no_grad_begin();
    tj_status st = tj_nll_loss_forward(nll_x(), nll_t(), w, 1, -100, &o, &tw);
    tj_no_grad_end(was);
    cr_assert_eq(st, TJ_OK, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_item_at(o, 0), tj_tensor_item_at(want, 0));
}

Test(nll, implicit_nll_loss_flattens_k_dimensional_inputs)
{
    /* [N=1, C=2, 2] with target [1, 2] is the same as rows [2, 2] */
    tj_tensor *x = test_f32(3, (int64_t[]){1, 2, 2}, (float[]){-1, -2, -3, -4});
    tj_tensor *t = test_i64(2, (int64_t[]){1, 2}, (int64_t[]){1, 0});
    /* rows: (x[0,0,0], x[0,1,0]) = (-1, -3) target 1 -> 3; (-2, -4) target 0 -> 2 */
    expect_values(tj_nll_loss(x, t, NULL, 0, -100), 2, (double[]){3, 2}, 2, 0);
    expect_values(tj_nll_loss(x, t, NULL, 1, -100), 0, (double[]){2.5}, 1, 0);
}

/* ---- cross_entropy / mse ---- */

static tj_tensor *ce_x(void) { return test_f32(2, (int64_t[]){2, 3}, (float[]){1, 2, 0.5f, 0, -1, 3}); }
static tj_tensor *ce_t(void) { return test_i64(1, (int64_t[]){2}, (int64_t[]){1, 2}); }
static tj_tensor *ce_w(void) { return test_f32(1, (int64_t[]){3}, (float[]){1, 2, 0.5f}); }

Test(cross_entropy, matches_pytorch_with_and_without_weights)
{
    expect_values(tj_cross_entropy(ce_x(), ce_t(), NULL, 0, -100, 0.0), 1,
                  (double[]){0.4643687903881073, 0.06588391214609146}, 2, 1e-6);
    expect_values(tj_cross_entropy(ce_x(), ce_t(), NULL, 1, -100, 0.0), 0, (double[]){0.2651263475418091}, 1, 1e-6);
    expect_values(tj_cross_entropy(ce_x(), ce_t(), ce_w(), 1, -100, 0.0), 0, (double[]){0.38467180728912354}, 1, 1e-6);
    expect_values(tj_cross_entropy(ce_x(), ce_t(), ce_w(), 2, -100, 0.0), 0, (double[]){0.9616795182228088}, 1, 1e-6);
}

Test(cross_entropy, label_smoothing_matches_pytorch)
{
    expect_values(tj_cross_entropy(ce_x(), ce_t(), NULL, 0, -100, 0.2), 1,
                  (double[]){0.6310354471206665, 0.5325506329536438}, 2, 1e-6);
    expect_values(tj_cross_entropy(ce_x(), ce_t(), NULL, 1, -100, 0.2), 0, (double[]){0.5817930698394775}, 1, 1e-6);
    expect_values(tj_cross_entropy(ce_x(), ce_t(), ce_w(), 1, -100, 0.2), 0, (double[]){0.6972277164459229}, 1, 1e-6);
    expect_values(tj_cross_entropy(ce_x(), ce_t(), ce_w(), 2, -100, 0.2), 0, (double[]){1.7430692911148071}, 1, 1e-6);
}

Test(cross_entropy, class_probability_targets_match_pytorch)
{
    tj_tensor *p = test_f32(2, (int64_t[]){2, 3}, (float[]){0.2f, 0.3f, 0.5f, 1, 0, 0});
    expect_values(tj_cross_entropy(ce_x(), p, NULL, 0, -100, 0.0), 1,
                  (double[]){1.4143688678741455, 3.0658838748931885}, 2, 1e-6);
    expect_values(tj_cross_entropy(ce_x(), p, NULL, 1, -100, 0.0), 0, (double[]){2.240126371383667}, 1, 1e-6);
    cr_expect_null(tj_cross_entropy(ce_x(), p, NULL, 1, 1, 0.0));
    cr_expect(strstr(tj_last_error(), "aten::cross_entropy_loss: ignore_index is not supported"), "%s",
              tj_last_error());
}

Test(cross_entropy, out_of_range_label_smoothing_is_rejected)
{
    cr_expect_null(tj_cross_entropy(ce_x(), ce_t(), NULL, 1, -100, 1.5));
    cr_expect(strstr(tj_last_error(), "aten::cross_entropy_loss: label_smoothing must be between 0.0 and 1.0"), "%s",
              tj_last_error());
}

Test(cross_entropy, mse_loss_reductions_broadcast_the_target)
{
    tj_tensor *a = test_f32(2, (int64_t[]){2, 2}, (float[]){1, 2, 3, 4});
    tj_tensor *b = test_f32(1, (int64_t[]){2}, (float[]){0.5f, -1});
    expect_values(tj_mse_loss(a, b, 0), 2, (double[]){0.25, 9, 6.25, 25}, 4, 0);
    expect_values(tj_mse_loss(a, b, 1), 0, (double[]){10.125}, 1, 0);
    expect_values(tj_mse_loss(a, b, 2), 0, (double[]){40.5}, 1, 0);
    cr_expect_null(tj_mse_loss(a, b, 3));
    cr_expect(strstr(tj_last_error(), "aten::mse_loss"), "%s", tj_last_error());
}

/* ---- dropout ---- */

static tj_tensor *ramp(int64_t n)
{
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT32, 1, &n);
    float *p = tj_tensor_data(t);
    for (int64_t i = 0; i < n; i++) p[i] = (float)(i + 1);
    return t;
}

Test(dropout, eval_copies_the_input_and_keeps_every_element)
{
    tj_tensor *x = test_f32(1, (int64_t[]){3}, (float[]){1, NAN, -INFINITY}), *out = NULL, *mask = NULL;
    cr_assert_eq(tj_native_dropout(x, 0.5, false, &out, &mask), TJ_OK, "%s", tj_last_error());
    expect_values(out, 1, (double[]){1, NAN, -INFINITY}, 3, 0);
    cr_expect(!tj_tensor_shares_storage(out, x));
    cr_assert_eq(tj_tensor_dtype(mask), TJ_BOOL);
    expect_values(mask, 1, (double[]){1, 1, 1}, 3, 0);
    /* the implicit dropout returns the input itself */
    cr_expect_eq(tj_dropout(x, 0.5, false), x);
}

Test(dropout, p0_keeps_everything_and_p1_drops_everything)
{
    tj_tensor *x = ramp(100), *out = NULL, *mask = NULL;
    cr_assert_eq(tj_native_dropout(x, 0.0, true, &out, &mask), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < 100; i++) {
        cr_assert_eq(tj_tensor_item_at(out, i), i + 1);
        cr_assert_eq(tj_tensor_item_at(mask, i), 1);
    }
    cr_assert_eq(tj_native_dropout(x, 1.0, true, &out, &mask), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < 100; i++) {
        cr_assert_eq(tj_tensor_item_at(out, i), 0);
        cr_assert_eq(tj_tensor_item_at(mask, i), 0);
    }
}

Test(dropout, kept_elements_are_scaled_by_one_over_one_minus_p)
{
    tj_manual_seed(7);
    int64_t n = 20000;
    tj_tensor *x = ramp(n), *out = NULL, *mask = NULL;
    cr_assert_eq(tj_native_dropout(x, 0.25, true, &out, &mask), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(mask), TJ_BOOL);
    int64_t kept = 0;
    for (int64_t i = 0; i < n; i++) {
        double m = tj_tensor_item_at(mask, i), o = tj_tensor_item_at(out, i);
        float want = m ? (float)(i + 1) * (float)(1.0 / 0.75) : 0.0f;
        cr_assert_eq(o, want, "[%lld] = %g, want %g (mask %g)", (long long)i, o, want, m);
        kept += m != 0;
    }
    /* 15000 expected; 5 standard deviations is about 306 */
    cr_expect(kept > 14700 && kept < 15300, "kept %lld of %lld", (long long)kept, (long long)n);
}

Test(dropout, a_seed_gives_the_same_mask_at_any_thread_count)
{
    int64_t n = 1 << 18;
    tj_tensor *x = ramp(n), *o1 = NULL, *m1 = NULL, *o2 = NULL, *m2 = NULL, *o3 = NULL, *m3 = NULL;
    tj_set_num_threads(1);
    tj_manual_seed(123);
    cr_assert_eq(tj_native_dropout(x, 0.5, true, &o1, &m1), TJ_OK);
    tj_set_num_threads(2);
    tj_manual_seed(123);
    cr_assert_eq(tj_native_dropout(x, 0.5, true, &o2, &m2), TJ_OK);
    cr_assert_eq(tj_native_dropout(x, 0.5, true, &o3, &m3), TJ_OK);
    const uint8_t *a = tj_tensor_data(m1), *b = tj_tensor_data(m2), *c = tj_tensor_data(m3);
    cr_expect_eq(memcmp(a, b, (size_t)n), 0, "masks differ between 1 and 2 threads");
    cr_expect_neq(memcmp(b, c, (size_t)n), 0, "the next call repeated the mask");
    cr_expect_eq(memcmp(tj_tensor_data(o1), tj_tensor_data(o2), sizeof(float) * (size_t)n), 0);
}

Test(dropout, strided_input_empty_input_and_bad_p)
{
    tj_tensor *x = test_f32(2, (int64_t[]){2, 2}, (float[]){1, 2, 3, 4}), *out = NULL, *mask = NULL;
    cr_assert_eq(tj_native_dropout(tj_t(x), 0.0, true, &out, &mask), TJ_OK, "%s", tj_last_error());
    expect_values(out, 2, (double[]){1, 3, 2, 4}, 4, 0);
    /* PyTorch returns an empty mask of the input's dtype for an empty input */
    cr_assert_eq(tj_native_dropout(tj_tensor_empty(TJ_FLOAT64, 2, (int64_t[]){0, 3}), 0.5, true, &out, &mask), TJ_OK);
    cr_expect_eq(tj_tensor_dtype(mask), TJ_FLOAT64);
    cr_expect_eq(tj_native_dropout(x, 1.5, true, &out, &mask), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "aten::native_dropout"), "%s", tj_last_error());
    cr_expect_null(tj_dropout(x, -0.5, false));
    cr_expect(strstr(tj_last_error(), "aten::dropout"), "%s", tj_last_error());
}

/* ---- decompositions of the composites (core table) ---- */

typedef struct nll_case {
    int64_t reduction, ignore_index;
    bool weighted;
} nll_case;

/* in: x, target, weight, grad_output (per row or one value) */
static tj_status nll_both(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const nll_case *c = ctx;
    (void)n;
    tj_tensor *w = c->weighted ? in[2] : NULL;
    *n_out = 3;
    tj_status st = tj_nll_loss_forward(in[0], in[1], w, c->reduction, c->ignore_index, &out[0], &out[1]);
    if (st != TJ_OK) return st;
    out[2] = tj_nll_loss_backward(in[3], in[0], in[1], w, c->reduction, c->ignore_index, out[1]);
    return out[2] ? TJ_OK : tj_last_status();
}

/* Traces fn with the core table (real mode), checks that only primitives
 * remain, and compares the graph's outputs with the kernels'. */
static void expect_decomposed_like_eager(tj_trace_fn fn, void *ctx, tj_tensor *const *in, int n_in)
{
    tj_tensor *eager[4], *traced[4];
    int n_out = 4;
    cr_assert_eq(fn(ctx, in, n_in, eager, &n_out), TJ_OK, "%s", tj_last_error());
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(fn, ctx, in, n_in, core, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    for (int i = 0; i < tj_graph_num_nodes(g); i++) {
        const tj_op *op = tj_graph_node_op(g, i);
        if (op) cr_expect_eq(tj_op_kind_of(op), TJ_OP_PRIMITIVE, "%s remains", tj_op_name(op));
    }
    cr_assert_eq(tj_graph_run(g, in, n_in, traced), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < n_out; k++) {
        cr_assert_eq(tj_tensor_ndim(traced[k]), tj_tensor_ndim(eager[k]), "output %d rank", k);
        cr_assert_eq(tj_tensor_dtype(traced[k]), tj_tensor_dtype(eager[k]), "output %d dtype", k);
        cr_assert_eq(tj_tensor_numel(traced[k]), tj_tensor_numel(eager[k]), "output %d numel", k);
        for (int64_t i = 0; i < tj_tensor_numel(eager[k]); i++) {
            double e = tj_tensor_item_at(eager[k], i), t = tj_tensor_item_at(traced[k], i);
            cr_expect((isnan(e) && isnan(t)) || fabs(e - t) <= 1e-6 * fabs(e) + 1e-7, "output %d [%lld]: %.9g, eager %.9g",
                      k, (long long)i, t, e);
        }
    }
    tj_graph_free(g);
    tj_decomp_table_free(core);
}

Test(decompositions, nll_loss_forward_and_backward_lower_to_primitives_with_kernel_values)
{
    tj_tensor *one = tj_tensor_scalar_f32(2.0f), *rows = test_f32(1, (int64_t[]){3}, (float[]){1, -2, 3});
    for (int red = 0; red < 3; red++)
        for (int weighted = 0; weighted < 2; weighted++) {
            nll_case c = {red, -100, weighted};
            tj_tensor *in[4] = {nll_x(), nll_t(), nll_w(), red == 0 ? rows : one};
            expect_decomposed_like_eager(nll_both, &c, in, 4);
        }
    /* ignore_index inside the class range; every target ignored (nan mean) */
    nll_case in_range = {1, 1, true}, all = {1, 2, false};
    tj_tensor *t = test_i64(1, (int64_t[]){3}, (int64_t[]){2, 1, 1});
    expect_decomposed_like_eager(nll_both, &in_range, (tj_tensor *[]){nll_x(), t, nll_w(), one}, 4);
    tj_tensor *t2 = test_i64(1, (int64_t[]){3}, (int64_t[]){2, 2, 2});
    expect_decomposed_like_eager(nll_both, &all, (tj_tensor *[]){nll_x(), t2, nll_w(), one}, 4);
    /* 1-d input, 0-dim target */
    nll_case none = {0, -100, true};
    tj_tensor *x1 = test_f32(1, (int64_t[]){4}, (float[]){-1.0f, -2.0f, -0.5f, -3.0f});
    expect_decomposed_like_eager(nll_both, &none, (tj_tensor *[]){x1, test_i64(0, NULL, (int64_t[]){3}), nll_w(), one},
                                 4);
}

static tj_status dropout_call(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    *n_out = 2;
    return tj_native_dropout(in[0], *(const double *)ctx, true, &out[0], &out[1]);
}

Test(decompositions, native_dropout_draws_the_kernels_mask)
{
    double p = 0.3;
    tj_tensor *x = ramp(1000), *eager[2], *traced[2];
    int n_out = 2;
    tj_manual_seed(99);
    cr_assert_eq(dropout_call(&p, &x, 1, eager, &n_out), TJ_OK);
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(dropout_call, &p, &x, 1, core, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::native_dropout")), 0);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::bernoulli.p")), 1);
    tj_manual_seed(99);
    cr_assert_eq(tj_graph_run(g, &x, 1, traced), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(traced[1]), TJ_BOOL);
    for (int k = 0; k < 2; k++)
        for (int64_t i = 0; i < 1000; i++)
            cr_assert_eq(tj_tensor_item_at(traced[k], i), tj_tensor_item_at(eager[k], i), "output %d [%lld]", k,
                         (long long)i);
    tj_graph_free(g);
    tj_decomp_table_free(core);
}

/* nll_loss2d_forward (torch's kernel for [N, C, H, W]; cross_entropy of [N, C, d] records it) runs as
 * nll_loss_forward over the pixels: the same values as nll_loss_forward of the permuted rows, the
 * losses in target's shape without reduction, and ranks other than 4 / 3 named in the error. */
Test(nll, nll_loss2d_forward_is_nll_loss_forward_over_the_pixels)
{
    tj_tensor *x = nll_x(), *t = nll_t(), *w = nll_w();
    int64_t img[4] = {1, 4, 3, 1}, tgt[3] = {1, 3, 1};
    tj_tensor *x4 = tj_contiguous(tj_permute(tj_reshape(x, (int64_t[]){1, 3, 1, 4}, 4), (int64_t[]){0, 3, 1, 2}, 4));
    cr_assert(x4 && tj_tensor_shape(x4)[1] == img[1] && tj_tensor_shape(x4)[2] == img[2], "%s", tj_last_error());
    tj_tensor *t3 = tj_reshape(t, tgt, 3);
    for (int64_t reduction = 0; reduction <= 2; reduction++) {
        tj_value outs[2], args[5] = {tj_v_tensor(x4), tj_v_tensor(t3), tj_v_tensor(w), tj_v_int(reduction),
                                     tj_v_int(-100)};
        cr_assert_eq(tj_dispatch(tj_op_find("aten::nll_loss2d_forward"), args, 5, outs), TJ_OK, "%s", tj_last_error());
        tj_tensor *o = NULL, *tw = NULL;
        cr_assert_eq(tj_nll_loss_forward(x, t, w, reduction, -100, &o, &tw), TJ_OK, "%s", tj_last_error());
        cr_expect_eq(tj_tensor_ndim(outs[0].u.t), reduction == 0 ? 3 : 0);
        test_expect_same_bits(tj_reshape(outs[0].u.t, (int64_t[]){-1}, 1), tj_reshape(o, (int64_t[]){-1}, 1), "output");
        test_expect_same_bits(outs[1].u.t, tw, "total_weight");
    }
    tj_value outs[2], args[5] = {tj_v_tensor(x), tj_v_tensor(t), tj_v_none(), tj_v_int(1), tj_v_int(-100)};
    cr_expect_eq(tj_dispatch(tj_op_find("aten::nll_loss2d_forward"), args, 5, outs), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "aten::nll_loss2d_forward: only batches of spatial targets supported (4D input "
                                      "[N, C, H, W] and 3D target [N, H, W]), got input [3, 4] and target [3]"),
              "%s", tj_last_error());
}
