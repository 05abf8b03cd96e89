/* _softmax / _log_softmax (+ backward), native_layer_norm (+ backward) and
 * their implicit composites. References: naive float64 formulas in this file,
 * and for layer norm (forward and backward) numbers from PyTorch 1.13 in
 * float64 (torch.native_layer_norm and torch.ops.aten.
 * native_layer_norm_backward on the inputs shown). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "test_util.h"
#include "tjit/tjit.h"

static tj_tensor *random_f32(int ndim, const int64_t *shape, unsigned seed, float lo, float hi)
{
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT32, ndim, shape);
    float *p = tj_tensor_data(t);
    srand(seed);
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) p[i] = lo + (hi - lo) * (float)rand() / (float)RAND_MAX;
    return t;
}

/* float64 softmax (take_log: log-softmax) of t, seen as contiguous
 * [outer, n, inner], at flat index i. */
static double ref_softmax(tj_tensor *t, int64_t i, int64_t n, int64_t inner, bool take_log)
{
    int64_t base = i / (n * inner) * n * inner + i % inner;
    double mx = -INFINITY, s = 0;
    for (int64_t d = 0; d < n; d++) mx = fmax(mx, tj_tensor_item_at(t, base + d * inner));
    for (int64_t d = 0; d < n; d++) s += exp(tj_tensor_item_at(t, base + d * inner) - mx);
    double x = tj_tensor_item_at(t, i);
    return take_log ? x - mx - log(s) : exp(x - mx) / s;
}

static void expect_softmax(tj_tensor *y, tj_tensor *x, int64_t n, int64_t inner, bool take_log)
{
    cr_assert_not_null(y, "%s", tj_last_error());
    for (int64_t i = 0; i < tj_tensor_numel(x); i++) {
        double r = ref_softmax(x, i, n, inner, take_log), g = tj_tensor_item_at(y, i);
        cr_assert(fabs(g - r) <= 1e-6 + 1e-5 * fabs(r), "index %ld: %.9g vs %.9g", (long)i, g, r);
    }
}

Test(softmax, all_neg_inf_row_gives_nan_and_masked_entries_give_zero)
{
    tj_scope *s = tj_scope_begin();
    float x[6] = {-INFINITY, -INFINITY, -INFINITY, 0.5f, -INFINITY, 1.0f};
    tj_tensor *t = test_f32(2, (int64_t[]){2, 3}, x);
    tj_tensor *y = tj__softmax(t, 1, false), *ly = tj__log_softmax(t, 1, false);
    cr_assert(y && ly, "%s", tj_last_error());
    for (int i = 0; i < 3; i++) cr_expect(isnan(tj_tensor_item_at(y, i)) && isnan(tj_tensor_item_at(ly, i)));
    cr_expect_eq(tj_tensor_item_at(y, 4), 0.0);
    cr_expect(isinf(tj_tensor_item_at(ly, 4)) && tj_tensor_item_at(ly, 4) < 0);
    cr_expect_float_eq(tj_tensor_item_at(y, 3), 1 / (1 + exp(0.5)), 1e-6);
    cr_expect_float_eq(tj_tensor_item_at(ly, 5), -log(1 + exp(-0.5)), 1e-6);
    tj_scope_end(s);
}

Test(softmax, pos_inf_or_nan_makes_the_row_nan)
{
    tj_scope *s = tj_scope_begin();
    float x[6] = {1, INFINITY, 2, 1, NAN, 2};
    tj_tensor *y = tj__softmax(test_f32(2, (int64_t[]){2, 3}, x), -1, false);
    cr_assert_not_null(y);
    for (int i = 0; i < 6; i++) cr_expect(isnan(tj_tensor_item_at(y, i)), "index %d", i);
    tj_scope_end(s);
}

Test(softmax, long_rows_match_float64_for_every_tail_length)
{
    tj_scope *s = tj_scope_begin();
    for (int64_t n = 1; n <= 70; n += 3) {
        tj_tensor *x = random_f32(2, (int64_t[]){3, n}, (unsigned)n, -20, 20);
        expect_softmax(tj__softmax(x, 1, false), x, n, 1, false);
        expect_softmax(tj__log_softmax(x, 1, false), x, n, 1, true);
    }
    tj_tensor *x = random_f32(2, (int64_t[]){64, 1000}, 7, -5, 5);
    expect_softmax(tj__softmax(x, 1, false), x, 1000, 1, false);
    tj_scope_end(s);
}

Test(softmax, inner_dims_are_reduced_in_place_and_strided_input_is_accepted)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = random_f32(3, (int64_t[]){3, 5, 300}, 3, -4, 4);
    expect_softmax(tj__softmax(x, 1, false), x, 5, 300, false);
    expect_softmax(tj__log_softmax(x, 0, false), x, 3, 1500, true);
    /* a transposed input: softmax over its dim 1 equals softmax over dim 0
     * of the original, transposed back */
    tj_tensor *m = random_f32(2, (int64_t[]){6, 4}, 4, -3, 3);
    tj_tensor *y = tj__softmax(tj_t(m), 1, false), *ref = tj_contiguous(tj_t(tj__softmax(m, 0, false)));
    cr_assert(y && ref);
    for (int i = 0; i < 24; i++) cr_expect_float_eq(tj_tensor_item_at(y, i), tj_tensor_item_at(ref, i), 1e-6);
    tj_scope_end(s);
}

Test(softmax, zero_dim_input_gives_one_and_empty_input_gives_empty)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *z = tj_tensor_scalar_f32(3.5f);
    cr_expect_eq(tj_tensor_item_at(tj__softmax(z, 0, false), 0), 1.0);
    cr_expect_eq(tj_tensor_item_at(tj__log_softmax(z, -1, false), 0), 0.0);
    tj_tensor *e = tj__softmax(tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){0, 4}), 1, false);
    cr_assert_not_null(e);
    cr_expect_eq(tj_tensor_numel(e), 0);
    tj_scope_end(s);
}

Test(softmax, rejects_integer_input_half_to_float_and_bad_dims)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *i = tj_tensor_empty(TJ_INT64, 2, (int64_t[]){2, 3}), *x = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){2, 3});
    cr_expect_null(tj__softmax(i, 1, false));
    cr_expect_eq(tj_last_status(), TJ_ERR_DTYPE);
    cr_expect_str_eq(tj_last_error(), "aten::_softmax: self must be float32 or float64, got int64");
    cr_expect_null(tj__softmax(x, 1, true));
    cr_expect_eq(tj_last_status(), TJ_ERR_UNSUPPORTED);
    cr_expect_null(tj__log_softmax(x, 2, false));
    cr_expect_eq(tj_last_status(), TJ_ERR_INDEX);
    tj_scope_end(s);
}

Test(softmax, softmax_int_converts_to_the_requested_dtype)
{
    tj_scope *s = tj_scope_begin();
    float x[3] = {1, 2, 3};
    tj_value out[1], args[3] = {tj_v_tensor(test_f32(1, (int64_t[]){3}, x)), tj_v_int(0), tj_v_dtype(TJ_FLOAT64)};
    cr_assert_eq(tj_call("aten::softmax.int", args, 3, out), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_dtype(out[0].u.t), TJ_FLOAT64);
    cr_expect_float_eq(tj_tensor_item_at(out[0].u.t, 2), exp(3.0) / (exp(1.0) + exp(2.0) + exp(3.0)), 1e-12);
    tj_tensor *y = tj_softmax(tj_tensor_from_data(TJ_INT64, 1, (int64_t[]){1}, (int64_t[]){1}), 0);
    cr_expect_null(y, "integer input without dtype is an error, as in PyTorch");
    tj_scope_end(s);
}

Test(softmax_backward, matches_the_formulas_over_any_dim)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = random_f32(3, (int64_t[]){2, 7, 3}, 5, -2, 2), *g = random_f32(3, (int64_t[]){2, 7, 3}, 6, -1, 1);
    for (int dim = 1; dim <= 2; dim++) {
        int64_t n = dim == 1 ? 7 : 3, inner = dim == 1 ? 3 : 1;
        for (int lg = 0; lg < 2; lg++) {
            tj_tensor *y = lg ? tj__log_softmax(x, dim, false) : tj__softmax(x, dim, false);
            tj_tensor *gx = lg ? tj__log_softmax_backward_data(g, y, dim, TJ_FLOAT32)
                               : tj__softmax_backward_data(g, y, dim, TJ_FLOAT32);
            cr_assert_not_null(gx, "%s", tj_last_error());
            for (int64_t i = 0; i < 42; i++) {
                int64_t base = i / (n * inner) * n * inner + i % inner;
                double acc = 0;
                for (int64_t d = 0; d < n; d++) {
                    double gd = tj_tensor_item_at(g, base + d * inner), yd = tj_tensor_item_at(y, base + d * inner);
                    acc += lg ? gd : gd * yd;
                }
                double gi = tj_tensor_item_at(g, i), yi = tj_tensor_item_at(y, i);
                double ref = lg ? gi - exp(yi) * acc : yi * (gi - acc);
                cr_expect_float_eq(tj_tensor_item_at(gx, i), ref, 1e-6);
            }
        }
    }
    tj_scope_end(s);
}

/* ---- layer norm ---- */

static float item(tj_tensor *t, int64_t i) { return (float)tj_tensor_item_at(t, i); }

Test(layer_norm, constant_row_normalises_to_exactly_zero)
{
    tj_scope *s = tj_scope_begin();
    for (int64_t n = 1; n <= 200; n += 7) {
        tj_tensor *x = tj_full((int64_t[]){2, n}, 2, tj_v_float(0.1), -1), *b = tj_full((int64_t[]){n}, 1, tj_v_float(0.25), -1);
        tj_tensor *out, *mean, *rstd;
        cr_assert_eq(tj_native_layer_norm(x, (int64_t[]){n}, 1, NULL, NULL, 1e-5, &out, &mean, &rstd), TJ_OK);
        for (int64_t i = 0; i < 2 * n; i++) cr_assert_eq(item(out, i), 0.0f, "n %ld index %ld", (long)n, (long)i);
        cr_expect_eq(item(mean, 0), 0.1f);
        cr_expect_eq(item(rstd, 1), (float)(1 / sqrt(1e-5)));
        tj_tensor *y = tj_layer_norm(x, (int64_t[]){n}, 1, NULL, b, 1e-5);
        for (int64_t i = 0; i < 2 * n; i++) cr_assert_eq(item(y, i), 0.25f);
    }
    tj_scope_end(s);
}

Test(layer_norm, large_common_offset_keeps_precision)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = random_f32(2, (int64_t[]){4, 777}, 9, 1000.0f - 0.05f, 1000.0f + 0.05f);
    tj_tensor *y = tj_layer_norm(x, (int64_t[]){777}, 1, NULL, NULL, 1e-5);
    cr_assert_not_null(y, "%s", tj_last_error());
    for (int64_t r = 0; r < 4; r++) {
        double mean = 0, var = 0;
        for (int64_t j = 0; j < 777; j++) mean += tj_tensor_item_at(x, r * 777 + j);
        mean /= 777;
        for (int64_t j = 0; j < 777; j++) var += pow(tj_tensor_item_at(x, r * 777 + j) - mean, 2);
        double rs = 1 / sqrt(var / 777 + 1e-5);
        for (int64_t j = 0; j < 777; j++)
            cr_assert(fabs(item(y, r * 777 + j) - (tj_tensor_item_at(x, r * 777 + j) - mean) * rs) < 1e-4, "(%ld, %ld)",
                      (long)r, (long)j);
    }
    tj_scope_end(s);
}

Test(layer_norm, matches_pytorch_with_weight_and_bias_and_keeps_normalised_dims)
{
    /* x = [[1, 2, 3, 4], [2, 0, -1, 5]], w = [1, 2, 0.5, -1], b = [0, 1, 0, 0], eps 1e-5 */
    tj_scope *s = tj_scope_begin();
    const float xv[8] = {1, 2, 3, 4, 2, 0, -1, 5}, wv[4] = {1, 2, 0.5f, -1}, bv[4] = {0, 1, 0, 0};
    const double ref[8] = {-1.34163542, 0.10557639, 0.22360590, -1.34163542, 0.21821768, -0.30930609, -0.54554421, -1.52752378};
    tj_tensor *x = test_f32(2, (int64_t[]){2, 4}, xv), *w = test_f32(1, (int64_t[]){4}, wv);
    tj_tensor *b = test_f32(1, (int64_t[]){4}, bv);
    tj_tensor *out, *mean, *rstd;
    cr_assert_eq(tj_native_layer_norm(x, (int64_t[]){4}, 1, w, b, 1e-5, &out, &mean, &rstd), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < 8; i++) cr_expect_float_eq(tj_tensor_item_at(out, i), ref[i], 1e-6);
    cr_expect_float_eq(tj_tensor_item_at(mean, 1), 1.5, 1e-7);
    cr_expect_float_eq(tj_tensor_item_at(rstd, 0), 0.89442361, 1e-6);
    tj_tensor *x4 = random_f32(4, (int64_t[]){2, 3, 4, 5}, 1, -1, 1);
    cr_assert_eq(tj_native_layer_norm(x4, (int64_t[]){4, 5}, 2, NULL, NULL, 1e-5, &out, &mean, &rstd), TJ_OK);
    const int64_t want[4] = {2, 3, 1, 1};
    cr_assert_eq(tj_tensor_ndim(mean), 4);
    for (int d = 0; d < 4; d++) cr_expect_eq(tj_tensor_shape(mean)[d], want[d]);
    tj_scope_end(s);
}

Test(layer_norm, empty_rows_give_mean_zero_and_rstd_nan)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *out, *mean, *rstd;
    cr_assert_eq(tj_native_layer_norm(tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){3, 0}), (int64_t[]){0}, 1, NULL, NULL, 1e-5,
                                      &out, &mean, &rstd), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(tj_tensor_item_at(mean, i), 0.0);
        cr_expect(isnan(tj_tensor_item_at(rstd, i)));
    }
    tj_scope_end(s);
}

Test(layer_norm, reports_shape_and_dtype_mismatches)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = tj_tensor_empty(TJ_FLOAT32, 3, (int64_t[]){2, 3, 4});
    cr_expect_null(tj_layer_norm(x, (int64_t[]){5}, 1, NULL, NULL, 1e-5));
    cr_expect_str_eq(tj_last_error(),
                     "aten::layer_norm: aten::native_layer_norm: normalized_shape [5] does not match the trailing "
                     "dims of input [2, 3, 4]");
    cr_expect_null(tj_layer_norm(x, (int64_t[]){4}, 1, tj_tensor_empty(TJ_FLOAT32, 1, (int64_t[]){3}), NULL, 1e-5));
    cr_expect_str_eq(tj_last_error(),
                     "aten::layer_norm: aten::native_layer_norm: weight [3] must have the shape of normalized_shape [4]");
    cr_expect_null(tj_layer_norm(x, (int64_t[]){4}, 1, tj_tensor_empty(TJ_FLOAT64, 1, (int64_t[]){4}), NULL, 1e-5));
    cr_expect_eq(tj_last_status(), TJ_ERR_DTYPE);
    tj_scope_end(s);
}

Test(layer_norm_backward, matches_pytorch_and_leaves_unmasked_outputs_undefined)
{
    /* inputs of the forward test; g = [[0.1, -0.2, 0.3, 0.4], [1, 0, -1, 0.5]] */
    tj_scope *s = tj_scope_begin();
    const float xv[8] = {1, 2, 3, 4, 2, 0, -1, 5}, wv[4] = {1, 2, 0.5f, -1}, bv[4] = {0, 1, 0, 0};
    const float gv[8] = {0.1f, -0.2f, 0.3f, 0.4f, 1, 0, -1, 0.5f};
    const double ref_gx[8] = {0.08497126, -0.27727098, 0.29963157, -0.10733185, 0.43643536, 0, -0.21821768, -0.21821768};
    const double ref_gw[4] = {0.08405414, 0.08944236, 1.22525195, 1.30041606}, ref_gb[4] = {1.1, -0.2, -0.7, 0.9};
    int64_t sh[2] = {2, 4}, ns[1] = {4};
    tj_tensor *x = test_f32(2, sh, xv), *w = test_f32(1, ns, wv), *b = test_f32(1, ns, bv), *g = test_f32(2, sh, gv);
    tj_tensor *out, *mean, *rstd, *gx, *gw, *gb;
    cr_assert_eq(tj_native_layer_norm(x, ns, 1, w, b, 1e-5, &out, &mean, &rstd), TJ_OK);
    const bool all[3] = {true, true, true}, params[3] = {false, true, true}, input[3] = {true, false, false};
    cr_assert_eq(tj_native_layer_norm_backward(g, x, ns, 1, mean, rstd, w, b, all, &gx, &gw, &gb), TJ_OK, "%s",
                 tj_last_error());
    for (int i = 0; i < 8; i++) cr_expect_float_eq(tj_tensor_item_at(gx, i), ref_gx[i], 1e-6);
    for (int i = 0; i < 4; i++) {
        cr_expect_float_eq(tj_tensor_item_at(gw, i), ref_gw[i], 1e-6);
        cr_expect_float_eq(tj_tensor_item_at(gb, i), ref_gb[i], 1e-6);
    }
    cr_assert_eq(tj_native_layer_norm_backward(g, x, ns, 1, mean, rstd, w, b, params, &gx, &gw, &gb), TJ_OK);
    cr_expect_null(gx, "grad_input is undefined when output_mask[0] is false");
    cr_expect_not_null(gw);
    cr_assert_eq(tj_native_layer_norm_backward(g, x, ns, 1, mean, rstd, w, b, input, &gx, &gw, &gb), TJ_OK);
    cr_expect_not_null(gx);
    cr_expect(gw == NULL && gb == NULL);
    cr_expect_eq(tj_native_layer_norm_backward(g, x, ns, 1, mean, rstd, NULL, NULL, all, &gx, &gw, &gb),
                 TJ_ERR_INVALID_ARGUMENT, "a gradient of an absent weight cannot be asked for");
    tj_scope_end(s);
}

/* ---- decompositions (the core table lowers these composites to
 * primitives; values must match the fused kernels) ---- */

enum { SOFTMAX, LOG_SOFTMAX, SOFTMAX_BWD, LOG_SOFTMAX_BWD, LAYER_NORM, LAYER_NORM_BWD, N_CASES };

/* in: x [3, 4, 5], g [3, 4, 5], w [4, 5], b [4, 5] */
static tj_status nn_case(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    int which = *(const int *)ctx;
    int64_t ns[2] = {4, 5};
    tj_tensor *mean, *rstd;
    (void)n;
    *n_out = 1;
    switch (which) {
    case SOFTMAX: out[0] = tj__softmax(in[0], 1, false); break;
    case LOG_SOFTMAX: out[0] = tj__log_softmax(in[0], -1, false); break;
    case SOFTMAX_BWD: out[0] = tj__softmax_backward_data(in[1], tj__softmax(in[0], 0, false), 0, TJ_FLOAT32); break;
    case LOG_SOFTMAX_BWD:
        out[0] = tj__log_softmax_backward_data(in[1], tj__log_softmax(in[0], 2, false), 2, TJ_FLOAT32);
        break;
    case LAYER_NORM:
        *n_out = 3;
        return tj_native_layer_norm(in[0], ns, 2, in[2], in[3], 1e-5, &out[0], &out[1], &out[2]);
    default:
        *n_out = 3;
        if (tj_native_layer_norm(in[0], ns, 2, in[2], in[3], 1e-5, &out[0], &mean, &rstd) != TJ_OK) return tj_last_status();
        return tj_native_layer_norm_backward(in[1], in[0], ns, 2, mean, rstd, in[2], in[3], (const bool[]){true, true, true},
                                             &out[0], &out[1], &out[2]);
    }
    return out[0] ? TJ_OK : tj_last_status();
}

Test(decompositions, softmax_and_layer_norm_lower_to_primitives_with_kernel_values)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[4] = {random_f32(3, (int64_t[]){3, 4, 5}, 1, -3, 3), random_f32(3, (int64_t[]){3, 4, 5}, 2, -1, 1),
                        random_f32(2, (int64_t[]){4, 5}, 3, 0.5f, 1.5f), random_f32(2, (int64_t[]){4, 5}, 4, -1, 1)};
    tj_decomp_table *core = tj_core_decompositions();
    cr_assert_not_null(core);
    for (int which = 0; which < N_CASES; which++) {
        tj_tensor *eager[3], *traced[3];
        int n_eager = 3;
        cr_assert_eq(nn_case(&which, in, 4, eager, &n_eager), TJ_OK, "case %d: %s", which, tj_last_error());
        tj_graph *g = tj_make_fx(nn_case, &which, in, 4, core, TJ_TRACE_REAL);
        cr_assert_not_null(g, "case %d: %s", which, tj_last_error());
        for (int i = 0; i < tj_graph_num_nodes(g); i++) {
            const tj_op *op = tj_graph_node_op(g, i);
            if (op) cr_expect_eq(tj_op_kind_of(op), TJ_OP_PRIMITIVE, "case %d: %s remains", which, tj_op_name(op));
        }
        cr_assert_eq(tj_graph_run(g, in, 4, traced), TJ_OK, "%s", tj_last_error());
        for (int k = 0; k < n_eager; k++)
            for (int64_t i = 0; i < tj_tensor_numel(eager[k]); i++)
                cr_expect_float_eq(tj_tensor_item_at(traced[k], i), tj_tensor_item_at(eager[k], i), 1e-5,
                                   "case %d output %d index %ld", which, k, (long)i);
        tj_graph_free(g);
    }
    tj_decomp_table_free(core);
    tj_scope_end(s);
}
