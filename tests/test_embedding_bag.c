/* _embedding_bag (F.embedding_bag) and its gradients against PyTorch 1.13:
 * the expected numbers are torch's, float64, printed by
 *   w = arange(40.).view(10, 4) * 0.25 - 3; w[6] = -w[6]
 *   out = F.embedding_bag(idx, w, off, mode=..., padding_idx=2)
 *   (out * G).sum().backward(), G = arange(20.).view(5, 4) * 0.5 - 2
 * (dyadic values: every sum is exact). More cases, float32 and the backward
 * operators called directly, are conformance cases
 * (tests/conformance/make_cases_embedding_bag.py). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "test_util.h"
#include "tjit/tjit.h"

enum { SUM = 0, MEAN = 1, MAX = 2 };

static const int64_t IDX[11] = {1, 2, 4, 5, 4, 3, 7, 2, 9, 3, 3}, OFF[5] = {0, 4, 4, 6, 8};

static tj_tensor *weight(tj_dtype dt, bool requires_grad)
{
    double v[40];
    for (int i = 0; i < 40; i++) v[i] = (i / 4 == 6 ? -1 : 1) * (i * 0.25 - 3.0);
    tj_tensor *w = tj_to_copy(test_f64(2, (int64_t[]){10, 4}, v), (int)dt);
    if (requires_grad) tj_tensor_set_requires_grad(w, true);
    return w;
}

static tj_tensor *indices(void) { return test_i64(1, (int64_t[]){11}, IDX); }
static tj_tensor *offsets(void) { return test_i64(1, (int64_t[]){5}, OFF); }

static tj_tensor *grad_out(tj_dtype dt)
{
    double g[20];
    for (int i = 0; i < 20; i++) g[i] = i * 0.5 - 2.0;
    return tj_to_copy(test_f64(2, (int64_t[]){5, 4}, g), (int)dt);
}

static void expect_values(const tj_tensor *t, const double *want, int64_t n, const char *what)
{
    cr_assert_not_null(t, "%s: %s", what, tj_last_error());
    cr_assert_eq(tj_tensor_numel(t), n, "%s: %lld elements", what, (long long)tj_tensor_numel(t));
    for (int64_t i = 0; i < n; i++)
        cr_expect_eq(tj_tensor_item_at(t, i), want[i], "%s[%lld]: %.17g, torch %.17g", what, (long long)i,
                     tj_tensor_item_at(t, i), want[i]);
}

static const double SUM_OUT[20] = {1.0, 1.75, 2.5, 3.25, 0, 0, 0, 0, 1.0, 1.5, 2.0, 2.5, 4.0, 4.25, 4.5, 4.75,
                                   6.0, 6.75, 7.5, 8.25};
static const double SUM_GW[40] = {0, 0, 0, 0, -2.0, -1.5, -1.0, -0.5, 0, 0, 0, 0, 14.0, 15.5, 17.0, 18.5, 0, 1.0, 2.0, 3.0,
                                  -2.0, -1.5, -1.0, -0.5, 0, 0, 0, 0, 4.0, 4.5, 5.0, 5.5, 0, 0, 0, 0, 6.0, 6.5, 7.0, 7.5};
static const double MEAN_OUT[20] = {0.3333333333333333, 0.5833333333333334, 0.8333333333333334, 1.0833333333333333, 0,
                                    0, 0, 0, 0.5, 0.75, 1.0, 1.25, 4.0, 4.25, 4.5, 4.75, 2.0, 2.25, 2.5, 2.75};
static const double MEAN_GW[40] = {
    0, 0, 0, 0, -0.6666666666666666, -0.5, -0.3333333333333333, -0.16666666666666666, 0, 0, 0, 0,
    5.0, 5.583333333333333, 6.166666666666666, 6.75, 0.33333333333333337, 0.75, 1.1666666666666667,
    1.5833333333333333, -0.6666666666666666, -0.5, -0.3333333333333333, -0.16666666666666666, 0, 0, 0, 0,
    4.0, 4.5, 5.0, 5.5, 0, 0, 0, 0, 2.0, 2.1666666666666665, 2.333333333333333, 2.5};
static const double MAX_OUT[20] = {2.0, 2.25, 2.5, 2.75, 0, 0, 0, 0, 1.0, 1.25, 1.5, 1.75, 4.0, 4.25, 4.5, 4.75,
                                   6.0, 6.25, 6.5, 6.75};
static const double MAX_GW[40] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2.0, 2.5, 3.0, 3.5,
                                  -2.0, -1.5, -1.0, -0.5, 0, 0, 0, 0, 4.0, 4.5, 5.0, 5.5, 0, 0, 0, 0, 6.0, 6.5, 7.0, 7.5};

/* One mode with padding_idx 2: the output and, through tjit's autograd, the
 * weight's gradient. */
static void expect_mode(int64_t mode, const double *out_want, const double *gw_want)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *w = weight(TJ_FLOAT64, true);
    tj_tensor *out = tj_embedding_bag(w, indices(), offsets(), mode, NULL, false, true, 2);
    expect_values(out, out_want, 20, "out");
    expect_values(test_grad1(w, out, grad_out(TJ_FLOAT64)), gw_want, 40, "weight's gradient");
    tj_scope_end(s);
}

Test(embedding_bag, sum_skips_padding_and_gives_zeros_for_an_empty_bag) { expect_mode(SUM, SUM_OUT, SUM_GW); }
Test(embedding_bag, mean_divides_by_the_non_padding_count) { expect_mode(MEAN, MEAN_OUT, MEAN_GW); }
Test(embedding_bag, max_takes_the_first_maximum_and_routes_its_gradient) { expect_mode(MAX, MAX_OUT, MAX_GW); }

Test(embedding_bag, max_returns_offset2bag_bag_sizes_and_rows_of_the_maxima)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *out, *o2b, *bag_size, *mi;
    cr_assert_eq(tj__embedding_bag(weight(TJ_FLOAT64, false), indices(), offsets(), false, MAX, NULL, false, 2, &out,
                                   &o2b, &bag_size, &mi),
                 TJ_OK, "%s", tj_last_error());
    expect_values(o2b, (const double[]){0, 0, 0, 0, 2, 2, 3, 3, 4, 4, 4}, 11, "offset2bag");
    expect_values(bag_size, (const double[]){3, 0, 2, 1, 3}, 5, "bag_size");
    expect_values(mi, (const double[]){5, 5, 5, 5, 0, 0, 0, 0, 4, 4, 4, 4, 7, 7, 7, 7, 9, 9, 9, 9}, 20, "max_indices");
    /* mean: max_indices is a copy of bag_size */
    cr_assert_eq(tj__embedding_bag(weight(TJ_FLOAT64, false), indices(), offsets(), false, MEAN, NULL, false, 2, NULL,
                                   NULL, &bag_size, &mi),
                 TJ_OK);
    test_expect_same(mi, bag_size, "mean's max_indices");
    tj_scope_end(s);
}

Test(embedding_bag, per_sample_weights_and_their_gradient_match_torch)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *w = weight(TJ_FLOAT64, true);
    tj_tensor *p = test_f64_grad((const double[]){0.5, -1.0, 2.0, 1.5, 0.25, -0.5, 3.0, 1.0, -2.0, 0.75, 1.25}, 1,
                                 (int64_t[]){11}, true);
    tj_tensor *out = tj_embedding_bag(w, indices(), offsets(), SUM, p, false, false, 0);
    expect_values(out, (const double[]){5.0, 5.75, 6.5, 7.25, 0, 0, 0, 0, 0.25, 0.1875, 0.125, 0.0625, 11.0, 12.0,
                                        13.0, 14.0, -12.0, -12.0, -12.0, -12.0},
                  20, "out");
    expect_values(test_grad1(p, out, grad_out(TJ_FLOAT64)),
                  (const double[]){8.75, 3.75, -6.25, -11.25, 15.75, 4.75, 83.75, -11.25, 172.75, 10.75, 10.75}, 11,
                  "per_sample_weights' gradient");
    out = tj_embedding_bag(w, indices(), offsets(), SUM, p, false, false, 0); /* a second graph for the second pass */
    expect_values(test_grad1(w, out, grad_out(TJ_FLOAT64)),
                  (const double[]){0, 0, 0, 0, -1.0, -0.75, -0.5, -0.25, 6.0, 6.0, 6.0, 6.0, 11.0, 11.75, 12.5, 13.25,
                                   -3.5, -2.375, -1.25, -0.125, -3.0, -2.25, -1.5, -0.75, 0, 0, 0, 0, 12.0, 13.5, 15.0,
                                   16.5, 0, 0, 0, 0, -12.0, -13.0, -14.0, -15.0},
                  40, "weight's gradient");
    tj_scope_end(s);
}

/* float32 sum without padding_idx returns an empty offset2bag (ATen's fast
 * path); the gradient rebuilds it and equals float64's. */
Test(embedding_bag, float32_sum_has_an_empty_offset2bag_that_the_gradient_rebuilds)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *w32 = weight(TJ_FLOAT32, true), *w64 = weight(TJ_FLOAT64, true), *o2b;
    cr_assert_eq(tj__embedding_bag(w32, indices(), offsets(), false, SUM, NULL, false, -1, NULL, &o2b, NULL, NULL), TJ_OK);
    cr_expect_eq(tj_tensor_ndim(o2b), 1);
    cr_expect_eq(tj_tensor_numel(o2b), 0);
    tj_tensor *out32 = tj_embedding_bag(w32, indices(), offsets(), SUM, NULL, false, false, 0);
    tj_tensor *out64 = tj_embedding_bag(w64, indices(), offsets(), SUM, NULL, false, false, 0);
    test_expect_same(tj_to_copy(out32, TJ_FLOAT64), out64, "float32 sum");
    tj_tensor *g32 = test_grad1(w32, out32, grad_out(TJ_FLOAT32)), *g64 = test_grad1(w64, out64, grad_out(TJ_FLOAT64));
    test_expect_same(tj_to_copy(g32, TJ_FLOAT64), g64, "float32 sum's gradient");
    tj_scope_end(s);
}

Test(embedding_bag, a_2d_input_is_a_batch_of_equal_bags)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in = test_i64(2, (int64_t[]){2, 4}, IDX);
    tj_tensor *out = tj_embedding_bag(weight(TJ_FLOAT64, false), in, NULL, MAX, NULL, false, false, 0);
    expect_values(out, (const double[]){2.0, 2.25, 2.5, 2.75, 4.0, 4.25, 4.5, 4.75}, 8, "out");
    /* padding_idx -8 is row 2, as F.embedding_bag counts it from the end */
    tj_tensor *pad = tj_embedding_bag(weight(TJ_FLOAT64, false), in, NULL, MAX, NULL, false, true, -8);
    expect_values(pad, (const double[]){2.0, 2.25, 2.5, 2.75, 4.0, 4.25, 4.5, 4.75}, 8, "out, padding_idx -8");
    tj_scope_end(s);
}

Test(embedding_bag, include_last_offset_ends_the_last_bag_and_no_offsets_give_no_bags)
{
    tj_scope *s = tj_scope_begin();
    /* offsets [0, 4, 6] with include_last_offset: bags [0:4], [4:6]; 6.. in none */
    tj_tensor *out = tj_embedding_bag(weight(TJ_FLOAT64, false), indices(), test_i64(1, (int64_t[]){3}, (int64_t[]){0, 4, 6}),
                                      SUM, NULL, true, false, 0);
    expect_values(out, (const double[]){0, 1.0, 2.0, 3.0, 1.0, 1.5, 2.0, 2.5}, 8, "out");
    tj_tensor *none, *o2b;
    cr_assert_eq(tj__embedding_bag(weight(TJ_FLOAT64, false), indices(), test_i64(1, (int64_t[]){0}, NULL), false, MEAN,
                                   NULL, false, -1, &none, &o2b, NULL, NULL),
                 TJ_OK, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_shape(none)[0], 0);
    cr_expect_eq(tj_tensor_shape(none)[1], 4);
    expect_values(o2b, (const double[]){-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}, 11, "offset2bag");
    tj_scope_end(s);
}

static void expect_error(tj_tensor *r, tj_status status, const char *message)
{
    cr_expect_null(r);
    cr_expect_eq(tj_last_status(), status, "%s", tj_last_error());
    cr_expect_str_eq(tj_last_error(), message);
}

Test(embedding_bag, bad_offsets_indices_and_arguments_name_the_operator_and_values)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *w = weight(TJ_FLOAT64, false), *idx = indices();
#define OFFS(...) test_i64(1, (int64_t[]){sizeof((int64_t[]){__VA_ARGS__}) / 8}, (int64_t[]){__VA_ARGS__})
    expect_error(tj_embedding_bag(w, idx, OFFS(1, 4), SUM, NULL, false, false, 0), TJ_ERR_INDEX,
                 "aten::_embedding_bag: offsets[0] is 1, the first bag has to start at position 0");
    expect_error(tj_embedding_bag(w, idx, OFFS(0, 6, 3), MEAN, NULL, false, false, 0), TJ_ERR_INDEX,
                 "aten::_embedding_bag: offsets decrease at position 2 (3 after 6)");
    expect_error(tj_embedding_bag(w, idx, OFFS(0, 12), MAX, NULL, false, false, 0), TJ_ERR_INDEX,
                 "aten::_embedding_bag: offsets[-1] is 12, past the end of the 11 indices");
    expect_error(tj_embedding_bag(w, test_i64(1, (int64_t[]){2}, (int64_t[]){1, 10}), OFFS(0), SUM, NULL, false, false, 0),
                 TJ_ERR_INDEX, "aten::_embedding_bag: index 10 (at position 1) is out of range for 10 rows");
    expect_error(tj_embedding_bag(w, idx, OFFS(0), MEAN, test_f64(1, (int64_t[]){11}, (double[11]){0}), false, false, 0),
                 TJ_ERR_INVALID_ARGUMENT,
                 "aten::_embedding_bag: per_sample_weights only supported with mode='sum' (mode 1)");
    expect_error(tj_embedding_bag(w, test_i64(2, (int64_t[]){2, 4}, IDX), OFFS(0), SUM, NULL, false, false, 0),
                 TJ_ERR_INVALID_ARGUMENT,
                 "embedding_bag: input [2, 4] is 2-D (a batch of equal bags), so offsets [1] has to be NULL");
    expect_error(tj_embedding_bag(w, idx, tj_to_copy(OFFS(0), TJ_FLOAT32), SUM, NULL, false, false, 0), TJ_ERR_DTYPE,
                 "aten::_embedding_bag: offsets must be int64 (int32 is not supported), got float32");
    expect_error(tj_embedding_bag(w, idx, OFFS(0), 3, NULL, false, false, 0), TJ_ERR_INVALID_ARGUMENT,
                 "aten::_embedding_bag: mode 3 is not 0 (sum), 1 (mean) or 2 (max)");
    expect_error(tj_embedding_bag(w, idx, test_i64(1, (int64_t[]){0}, NULL), SUM, NULL, true, false, 0), TJ_ERR_SHAPE,
                 "aten::_embedding_bag: include_last_offset needs at least 1 offset, got 0");
    expect_error(tj_embedding_bag(w, idx, OFFS(0), SUM, NULL, false, true, 10), TJ_ERR_INDEX,
                 "embedding_bag: padding_idx 10 must be within the 10 rows of weight");
    expect_error(tj_embedding_bag(tj_to_copy(w, TJ_INT64), idx, OFFS(0), SUM, NULL, false, false, 0), TJ_ERR_DTYPE,
                 "aten::_embedding_bag: weight must be float32 or float64, got int64");
#undef OFFS
    tj_scope_end(s);
}

Test(embedding_bag, backward_operators_refuse_inconsistent_saved_tensors)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *g = grad_out(TJ_FLOAT64), *idx = indices(), *o2b = test_i64(1, (int64_t[]){0}, NULL);
    tj_tensor *sizes = test_i64(1, (int64_t[]){5}, (int64_t[]){3, 0, 2, 1, 3});
    expect_error(tj__embedding_bag_dense_backward(g, idx, o2b, sizes, sizes, 10, false, MEAN, NULL, -1), TJ_ERR_SHAPE,
                 "aten::_embedding_bag_dense_backward: offset2bag [0] must hold the bag of each of the 11 indices");
    expect_error(tj__embedding_bag_dense_backward(g, idx, o2b, sizes, sizes, 10, false, MAX, NULL, -1), TJ_ERR_SHAPE,
                 "aten::_embedding_bag_dense_backward: maximum_indices int64 [5] must be int64 of grad's shape [5, 4]");
    expect_error(tj__embedding_bag_per_sample_weights_backward(g, weight(TJ_FLOAT64, false), idx, offsets(), o2b, MAX, -1),
                 TJ_ERR_INVALID_ARGUMENT,
                 "aten::_embedding_bag_per_sample_weights_backward: per_sample_weights only supported for mode='sum' "
                 "(mode 2)");
    tj_scope_end(s);
}

/* make_fx records _embedding_bag and, for the gradient,
 * _embedding_bag_dense_backward; the replay and the core-decomposed graph
 * (the backward operators decomposed) give eager's numbers. */
static tj_status mean_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_embedding_bag(in[0], in[1], in[2], MEAN, NULL, false, true, 2);
    out[0] = y;
    out[1] = test_grad1(in[0], y, in[3]);
    *n_out = 2;
    return y && out[1] ? TJ_OK : tj_last_status();
}

Test(embedding_bag, traced_forward_and_gradient_replay_as_eager)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[4] = {weight(TJ_FLOAT64, true), indices(), offsets(), grad_out(TJ_FLOAT64)};
    const char *want[] = {"aten._embedding_bag.default", "aten._embedding_bag_dense_backward.default"};
    test_expect_traced(mean_step, in, 4, 2, want, 2, NULL, 1e-12);
    tj_scope_end(s);
}
