/* Session 15 (opsD) operators: binary_cross_entropy (+ backward),
 * linalg_vector_norm, constant_pad_nd, and the list-returning views
 * tj_chunk / tj_split_with_sizes / tj_unbind. Reference values come from
 * PyTorch 1.13 (the expression is named next to each table), so the tests
 * run without it. Each operator is also checked through make_fx (the aten
 * name is recorded), the core decompositions and a compiled plan. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "test_util.h"

TestSuite(opsd, .init = test_scope_open, .fini = test_scope_close);

static tj_tensor *f32(int ndim, const int64_t *shape, const float *v) { return test_tensor(TJ_FLOAT32, ndim, shape, v); }
static tj_tensor *vec(int64_t n, const float *v) { return test_tensor(TJ_FLOAT32, 1, (int64_t[]){n}, v); }

/* ---- binary_cross_entropy ---- */

Test(opsd, bce_gives_pytorchs_values_with_the_log_clamped)
{
    /* A.binary_cross_entropy(x, t, None, 0): -0 where x = t = 1, 100 at the clamp */
    tj_tensor *x = vec(6, (float[]){0, 1, 0.5f, 1e-30f, 0.999f, 1}), *t = vec(6, (float[]){0, 1, 0.3f, 1, 0, 0});
    test_expect_f32(tj_binary_cross_entropy(x, t, NULL, 0), (float[]){0, -0.0f, 0.693147182f, 69.0775528f,
                    6.90776825f, 100},
                    6, 0);
    /* weighted mean, target [3] and weight [2,1] broadcast: 0.8847745060920715 */
    tj_tensor *x2 = f32(2, (int64_t[]){2, 3}, (float[]){0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
    tj_tensor *w = f32(2, (int64_t[]){2, 1}, (float[]){2, 0.5f});
    test_expect_f32(tj_binary_cross_entropy(x2, vec(3, (float[]){0, 0.5f, 1}), w, 1), (float[]){0.884774506f}, 1, 1e-6);
    /* empty: mean nan, sum 0; non-contiguous self (a transpose) */
    tj_tensor *e = vec(0, NULL);
    test_expect_f32(tj_binary_cross_entropy(e, e, NULL, 1), (float[]){NAN}, 1, 0);
    test_expect_f32(tj_binary_cross_entropy(e, e, NULL, 2), (float[]){0}, 1, 0);
    tj_tensor *xt = tj_transpose(x2, 0, 1), *tt = tj_contiguous(tj_transpose(x2, 0, 1));
    test_expect_identical(tj_binary_cross_entropy(xt, tt, NULL, 0), tj_binary_cross_entropy(tt, tt, NULL, 0),
                          "transposed");
}

Test(opsd, bce_refuses_inputs_outside_0_1_and_bad_arguments)
{
    tj_tensor *t = vec(2, (float[]){0.5f, 0.5f});
    test_expect_error(tj_binary_cross_entropy(vec(2, (float[]){0.5f, 1.5f}), t, NULL, 1), TJ_ERR_INVALID_ARGUMENT,
                      "aten::binary_cross_entropy", "between 0 and 1 (self [2] holds 1.5)");
    test_expect_error(tj_binary_cross_entropy(vec(2, (float[]){NAN, 0}), t, NULL, 1), TJ_ERR_INVALID_ARGUMENT,
                      "aten::binary_cross_entropy", "holds nan");
    test_expect_error(tj_binary_cross_entropy(vec(2, (float[]){0, 0}), vec(3, (float[]){0, 0, 0}), NULL, 1),
                      TJ_ERR_SHAPE,
                      "aten::binary_cross_entropy", "target of shape [3]");
    test_expect_error(tj_binary_cross_entropy(t, t, NULL, 3), TJ_ERR_INVALID_ARGUMENT, "aten::binary_cross_entropy",
                      "got 3");
    tj_tensor *d = test_tensor(TJ_FLOAT64, 1, (int64_t[]){2}, (double[]){0.5, 0.5});
    test_expect_error(tj_binary_cross_entropy(t, d, NULL, 1), TJ_ERR_DTYPE, "aten::binary_cross_entropy", "float64");
    /* targets outside [0, 1] are not checked (PyTorch: -0.2350019) */
    test_expect_f32(tj_binary_cross_entropy(vec(2, (float[]){0.5f, 0.2f}), vec(2, (float[]){2, -1}), NULL, 1),
                    (float[]){-0.235001862f}, 1, 1e-6);
}

Test(opsd, bce_gradients_match_pytorch)
{
    /* torch.autograd.grad(A.binary_cross_entropy(x, t, None, 1), (x, t)) */
    tj_tensor *x = vec(3, (float[]){0.3f, 0.6f, 0.9f}), *t = vec(3, (float[]){0.2f, 0.9f, 0.5f});
    tj_tensor_set_requires_grad(x, true);
    tj_tensor_set_requires_grad(t, true);
    tj_tensor *l = tj_binary_cross_entropy(x, t, NULL, 1), *g[2];
    cr_assert_eq(tj_autograd_grad(&l, 1, NULL, (tj_tensor *[]){x, t}, 2, g), TJ_OK, "%s", tj_last_error());
    test_expect_f32(g[0], (float[]){0.158730164f, -0.416666627f, 1.48148108f}, 3, 1e-6);
    test_expect_f32(g[1], (float[]){0.282432616f, -0.135155082f, -0.732408106f}, 3, 1e-5);
    /* A.binary_cross_entropy_backward(tensor(1.), x, t, None, 1), x unchecked */
    tj_tensor *b = tj_binary_cross_entropy_backward(test_tensor(TJ_FLOAT32, 0, NULL, (float[]){1}),
                                                    vec(4, (float[]){0.2f, 0.5f, 1e-9f, 0.999f}),
                                                    vec(4, (float[]){0, 1, 0.5f, 1}), NULL, 1);
    test_expect_f32(b, (float[]){0.31249997f, -0.5f, -125000000.0f, -0.25025025f}, 4, 1e-6);
}

/* in: grad_output, self, target, weight; outs: bce_backward with reductions
 * 0 and 1, and with the weight (reduction 0). */
static tj_status bce_backward_calls(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n;
    *n_out = 3;
    out[0] = tj_binary_cross_entropy_backward(in[0], in[1], in[2], NULL, 0);
    out[1] = tj_binary_cross_entropy_backward(in[0], in[1], in[2], NULL, 1);
    out[2] = tj_binary_cross_entropy_backward(in[0], in[1], in[2], in[3], 0);
    return out[0] && out[1] && out[2] ? TJ_OK : tj_last_status();
}

/* ATen's backward kernel iterates over grad_output, self and target
 * squeeze()d: grad_output [2, 1] against self [2, 2] pairs grad[j] with
 * column j (not row j, as plain broadcasting would), in the kernel and in
 * the decomposition. PyTorch 1.13: s = [[0.2, 0.7], [0.9, 0.4]], t = [[0,
 * 1], [1, 0]], A.binary_cross_entropy_backward([[2], [3]], s, t, None, 0 /
 * 1), with weight [1, 2]; ([[2, 3], [4, 5]], s[2, 1, 2], t[2, 1, 2]). A
 * grad_output that would grow the result (PyTorch resizes it, deprecated)
 * is refused. */
Test(opsd, bce_backward_pairs_grad_output_as_aten_without_size_1_dims)
{
    const float want[3][4] = {{2.49999976f, -4.28571415f, -2.22222233f, 5},
                              {0.624999940f, -1.07142854f, -0.555555582f, 1.25f},
                              {2.49999976f, -8.5714283f, -2.22222233f, 10}};
    int64_t s2[2] = {2, 2};
    tj_tensor *in[4] = {f32(2, (int64_t[]){2, 1}, (float[]){2, 3}), f32(2, s2, (float[]){0.2f, 0.7f, 0.9f, 0.4f}),
                        f32(2, s2, (float[]){0, 1, 1, 0}), vec(2, (float[]){1, 2})};
    tj_tensor *r[3];
    int n_out;
    cr_assert_eq(bce_backward_calls(NULL, in, 4, r, &n_out), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < 3; k++) test_expect_f32(r[k], want[k], 4, 1e-6);
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(bce_backward_calls, NULL, in, 4, core, TJ_TRACE_FAKE);
    tj_decomp_table_free(core);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect(test_only_primitives(g));
    cr_assert_eq(tj_graph_run(g, in, 4, r), TJ_OK, "%s", tj_last_error());
    tj_graph_free(g);
    for (int k = 0; k < 3; k++) test_expect_f32(r[k], want[k], 4, 1e-6);

    tj_tensor *s3 = tj_reshape(in[1], (int64_t[]){2, 1, 2}, 3), *t3 = tj_reshape(in[2], (int64_t[]){2, 1, 2}, 3);
    tj_tensor *b = tj_binary_cross_entropy_backward(f32(2, s2, (float[]){2, 3, 4, 5}), s3, t3, NULL, 0);
    test_assert_dtype_shape(b, TJ_FLOAT32, 3, (int64_t[]){2, 1, 2});
    test_expect_f32(b, (float[]){2.49999976f, -4.28571415f, -4.44444466f, 8.33333302f}, 4, 1e-6);
    test_expect_error(tj_binary_cross_entropy_backward(tj_ones((int64_t[]){3, 2, 2}, 3, TJ_FLOAT32), in[1], in[2],
                      NULL, 0),
                      TJ_ERR_SHAPE, "aten::binary_cross_entropy_backward",
                      "grad_output of shape [3, 2, 2] does not broadcast to self's shape [2, 2] once both drop");
}

/* ATen has no derivative for the weight: with grad mode on, PyTorch refuses a
 * weight that requires grad ("not differentiable with respect to argument
 * 'weight'") even when nothing else does; under no_grad it runs
 * (A.binary_cross_entropy(x, t, w, 1) = 0.417525053024292). */
Test(opsd, bce_refuses_a_weight_that_requires_grad)
{
    tj_tensor *x = vec(3, (float[]){0.2f, 0.7f, 0.9f}), *t = vec(3, (float[]){0, 1, 1}), *w = vec(3, (float[]){1, 2, 3});
    cr_assert_eq(tj_tensor_set_requires_grad(w, true), TJ_OK);
    test_expect_error(tj_binary_cross_entropy(x, t, w, 1), TJ_ERR_UNSUPPORTED, "aten::binary_cross_entropy",
                      "not differentiable with respect to argument 'weight'");
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    test_expect_error(tj_binary_cross_entropy(x, t, w, 1), TJ_ERR_UNSUPPORTED, "aten::binary_cross_entropy",
                      "'weight'");
    bool was = tj_no_grad_begin();
    tj_tensor *l = tj_binary_cross_entropy(x, t, w, 1);
    tj_no_grad_end(was);
    test_expect_f32(l, (float[]){0.417525053f}, 1, 1e-6);
}

/* ---- linalg_vector_norm ---- */

static const float vs[6] = {3, -4, 0, NAN, 1, -2};

Test(opsd, vector_norm_orders_give_pytorchs_values)
{
    /* torch.linalg.vector_norm(v, ord, [1]), v = [[3, -4, 0], [nan, 1, -2]] */
    tj_tensor *v = f32(2, (int64_t[]){2, 3}, vs);
    struct { double ord; float want[2]; } cases[] = {
        {2, {5, NAN}}, {1, {7, NAN}}, {INFINITY, {4, NAN}}, {-INFINITY, {0, NAN}}, {0, {2, 3}},
        {3.5, {4.37221575f, NAN}}, {-1.5, {0, NAN}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        test_expect_f32(tj_linalg_vector_norm(v, tj_v_float(cases[k].ord), (int64_t[]){1}, 1, false, -1),
                        cases[k].want, 2,
                        1e-6);
    /* negative dim, keepdim, 0-dim input, dtype float64, all dims on a transpose */
    tj_tensor *r = tj_linalg_vector_norm(tj_slice(v, 0, true, 0, true, 1, 1), tj_v_int(2), (int64_t[]){-1}, 1, true, -1);
    cr_assert_eq(tj_tensor_ndim(r), 2);
    test_expect_f32(r, (float[]){5}, 1, 0);
    test_expect_f32(tj_linalg_vector_norm(test_tensor(TJ_FLOAT32, 0, NULL, (float[]){-3}), tj_v_int(1), NULL, 0,
                    false, -1),
                    (float[]){3}, 1, 0);
    tj_tensor *d = tj_linalg_vector_norm(vec(2, (float[]){1, 2}), tj_v_int(2), NULL, 0, false, TJ_FLOAT64);
    cr_assert_eq(tj_tensor_dtype(d), TJ_FLOAT64);
    cr_assert_eq(tj_tensor_item_at(d, 0), sqrt(5.0));
    test_expect_f32(tj_linalg_vector_norm(tj_transpose(f32(2, (int64_t[]){2, 2}, (float[]){3, 0, -4, 0}), 0, 1),
                    tj_v_int(2),
                                          NULL, 0, false, -1),
                    (float[]){5}, 1, 0);
    /* empty: the 2-norm is 0 */
    test_expect_f32(tj_linalg_vector_norm(f32(2, (int64_t[]){0, 3}, NULL), tj_v_int(2), (int64_t[]){0}, 1, false, -1),
                    (float[]){0, 0, 0}, 3, 0);
}

Test(opsd, vector_norm_errors_name_the_operator)
{
    tj_tensor *e = f32(2, (int64_t[]){0, 3}, NULL);
    test_expect_error(tj_linalg_vector_norm(e, tj_v_float(INFINITY), NULL, 0, false, -1), TJ_ERR_SHAPE,
                      "aten::linalg_vector_norm", "cannot compute the inf norm on an empty tensor");
    test_expect_error(tj_linalg_vector_norm(e, tj_v_int(-1), (int64_t[]){0}, 1, false, -1), TJ_ERR_SHAPE,
                      "aten::linalg_vector_norm", "the dimension 0 because this dimension is empty");
    cr_assert_not_null(tj_linalg_vector_norm(e, tj_v_float(INFINITY), (int64_t[]){1}, 1, false, -1));
    tj_tensor *i = test_tensor(TJ_INT64, 1, (int64_t[]){2}, (int64_t[]){1, 2});
    test_expect_error(tj_linalg_vector_norm(i, tj_v_int(2), NULL, 0, false, -1), TJ_ERR_DTYPE,
                      "aten::linalg_vector_norm",
                      "Got int64");
    tj_tensor *d = test_tensor(TJ_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 2});
    test_expect_error(tj_linalg_vector_norm(d, tj_v_int(2), NULL, 0, false, TJ_FLOAT32), TJ_ERR_DTYPE,
                      "aten::linalg_vector_norm", "without narrowing");
    test_expect_error(tj_linalg_vector_norm(d, tj_v_int(2), (int64_t[]){0, 0}, 2, false, -1), TJ_ERR_INVALID_ARGUMENT,
                      "aten::linalg_vector_norm", "multiple times");
    test_expect_error(tj_linalg_vector_norm(d, tj_v_int(2), (int64_t[]){1}, 1, false, -1), TJ_ERR_INDEX,
                      "aten::linalg_vector_norm", "");
}

static tj_tensor *norm_grad(const float *xv, double ord)
{
    tj_tensor *x = f32(2, (int64_t[]){2, 3}, xv);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *n = tj_linalg_vector_norm(x, tj_v_float(ord), (int64_t[]){1}, 1, false, -1), *g;
    cr_assert_not_null(n, "%s", tj_last_error());
    cr_assert_eq(tj_autograd_grad(&n, 1, (tj_tensor *[]){vec(2, (float[]){1, 2})}, &x, 1, &g), TJ_OK, "%s",
                 tj_last_error());
    return g;
}

Test(opsd, vector_norm_gradients_match_pytorch)
{
    /* the 2-norm of zeros gives a zero gradient, not nan */
    test_expect_f32(norm_grad((float[]){0, 0, 0, 3, -4, 0}, 2), (float[]){0, 0, 0, 1.20000005f, -1.60000002f, 0}, 6,
                    1e-6);
    /* torch.autograd.grad((vector_norm(z, ord, [1]) * [1, 2]).sum(), z), z = [[1,-2,2],[0,3,-3]] */
    static const float z[6] = {1, -2, 2, 0, 3, -3};
    test_expect_f32(norm_grad(z, 1), (float[]){1, -1, 1, 0, 2, -2}, 6, 0);
    test_expect_f32(norm_grad(z, INFINITY), (float[]){0, -0.5f, 0.5f, 0, 1, -1}, 6, 0);
    test_expect_f32(norm_grad(z, 3), (float[]){0.151251853f, -0.60500741f, 0.60500741f, 0, 1.25992107f, -1.25992107f},
                    6, 1e-5);
    test_expect_f32(norm_grad(z, 0.5), (float[]){3.82842731f, -2.70710683f, 2.70710683f, 0, 3.99999976f,
                    -3.99999976f}, 6,
                    1e-5);
    /* ord 0: none at all (torch.autograd.grad(..., allow_unused=True) gives (None,)) */
    cr_expect_null(norm_grad(z, 0));
}

/* ---- constant_pad_nd ---- */

Test(opsd, pad_crops_with_negative_pads_on_noncontiguous_input)
{
    /* A.constant_pad_nd(arange(6.).reshape(2, 3).t(), [-1, 2, 1, 0], 7.5) */
    tj_tensor *p = tj_transpose(f32(2, (int64_t[]){2, 3}, (float[]){0, 1, 2, 3, 4, 5}), 0, 1);
    tj_tensor *r = tj_constant_pad_nd(p, (int64_t[]){-1, 2, 1, 0}, 4, tj_v_float(7.5));
    cr_assert_not_null(r, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_shape(r)[0], 4);
    cr_assert_eq(tj_tensor_shape(r)[1], 3);
    test_expect_f32(r, (float[]){7.5f, 7.5f, 7.5f, 3, 7.5f, 7.5f, 4, 7.5f, 7.5f, 5, 7.5f, 7.5f}, 12, 0);
    /* only crops: a copy; -0 and nan values kept; int64 truncates a float value */
    tj_tensor *c = tj_constant_pad_nd(vec(3, (float[]){-0.0f, NAN, 1}), (int64_t[]){0, -1}, 2, tj_v_int(0));
    test_expect_f32(c, (float[]){-0.0f, NAN}, 2, 0);
    tj_tensor *i = tj_constant_pad_nd(test_tensor(TJ_INT64, 1, (int64_t[]){2}, (int64_t[]){1, 2}), (int64_t[]){1, 1},
                                      2, tj_v_float(1.7));
    cr_assert_eq(tj_tensor_item_at(i, 0), 1);
    cr_assert_eq(tj_tensor_item_at(i, 3), 1);
    /* empty input, 0-dim with no pads */
    tj_tensor *e = tj_constant_pad_nd(f32(2, (int64_t[]){0, 2}, NULL), (int64_t[]){1, 1}, 2, tj_v_int(5));
    cr_assert_eq(tj_tensor_shape(e)[0], 0);
    cr_assert_eq(tj_tensor_shape(e)[1], 4);
    test_expect_f32(tj_constant_pad_nd(test_tensor(TJ_FLOAT32, 0, NULL, (float[]){3}), NULL, 0, tj_v_int(1)),
                    (float[]){3}, 1, 0);
}

Test(opsd, pad_errors_follow_pytorch)
{
    tj_tensor *x = f32(2, (int64_t[]){2, 3}, (float[]){0, 1, 2, 3, 4, 5});
    test_expect_error(tj_constant_pad_nd(x, (int64_t[]){1, 2, 3}, 3, tj_v_int(0)), TJ_ERR_INVALID_ARGUMENT,
                      "aten::constant_pad_nd", "must be even but instead it equals 3");
    test_expect_error(tj_constant_pad_nd(x, (int64_t[]){1, 1, 1, 1, 1, 1}, 6, tj_v_int(0)), TJ_ERR_INVALID_ARGUMENT,
                      "aten::constant_pad_nd", "Pad length is 6 while the input has 2 dimensions");
    test_expect_error(tj_constant_pad_nd(x, (int64_t[]){-2, -2}, 2, tj_v_int(0)), TJ_ERR_SHAPE, "aten::constant_pad_nd",
                      "The input size 3, plus negative padding -2 and -2");
    test_expect_error(tj_constant_pad_nd(f32(2, (int64_t[]){0, 2}, NULL), (int64_t[]){1, 1, 0, 0}, 4, tj_v_int(0)),
                      TJ_ERR_SHAPE, "aten::constant_pad_nd", "Check dimension 0");
    /* not "negative padding": the sum overflows */
    test_expect_error(tj_constant_pad_nd(x, (int64_t[]){INT64_MAX, 1}, 2, tj_v_int(0)), TJ_ERR_OVERFLOW,
                      "aten::constant_pad_nd", "The input size 3, plus padding 9223372036854775807 and 1 overflows");
    /* -INT64_MIN, the crop it asks for, does not exist (UBSan flagged its negation) */
    test_expect_error(tj_constant_pad_nd(x, (int64_t[]){0, INT64_MIN}, 2, tj_v_int(0)), TJ_ERR_OVERFLOW,
                      "aten::constant_pad_nd", "plus padding 0 and -9223372036854775808 overflows");
    test_expect_error(tj_constant_pad_nd(x, (int64_t[]){1, 1}, 2, tj_v_float(1e300)), TJ_ERR_INVALID_ARGUMENT,
                      "aten::constant_pad_nd", "overflow");
}

Test(opsd, pad_gradient_is_the_negated_pad)
{
    /* grad of (constant_pad_nd(q, [1, -1, 0, 1], 2) * arange(1, 10).reshape(3, 3)).sum() */
    tj_tensor *q = f32(2, (int64_t[]){2, 3}, (float[]){0, 1, 2, 3, 4, 5});
    tj_tensor_set_requires_grad(q, true);
    tj_tensor *r = tj_constant_pad_nd(q, (int64_t[]){1, -1, 0, 1}, 4, tj_v_int(2)), *g;
    cr_assert_not_null(r, "%s", tj_last_error());
    tj_tensor *go = f32(2, (int64_t[]){3, 3}, (float[]){1, 2, 3, 4, 5, 6, 7, 8, 9});
    cr_assert_eq(tj_autograd_grad(&r, 1, &go, &q, 1, &g), TJ_OK, "%s", tj_last_error());
    test_expect_f32(g, (float[]){2, 3, 0, 5, 6, 0}, 6, 0);
}

/* ---- chunk / split_with_sizes / unbind ---- */

Test(opsd, list_views_share_storage_and_check_arguments)
{
    tj_tensor *x = f32(2, (int64_t[]){2, 5}, (float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), *o[8];
    int n;
    /* torch.chunk(x, 4, 1): split_size 2, three pieces of 2, 2, 1 */
    cr_assert_eq(tj_chunk(x, 4, -1, o, 8, &n), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(n, 3);
    cr_assert_eq(tj_tensor_shape(o[2])[1], 1);
    test_expect_f32(tj_contiguous(o[1]), (float[]){2, 3, 7, 8}, 4, 0);
    cr_assert_eq(tj_tensor_data(o[1]), (char *)tj_tensor_data(x) + 2 * sizeof(float));
    /* an empty dim gives `chunks` empty pieces */
    cr_assert_eq(tj_chunk(f32(2, (int64_t[]){2, 0}, NULL), 3, 1, o, 8, &n), TJ_OK);
    cr_assert_eq(n, 3);
    cr_assert_eq(tj_split_with_sizes(x, (int64_t[]){1, 0, 4}, 3, 1, o, 8, &n), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(n, 3);
    cr_assert_eq(tj_tensor_numel(o[1]), 0);
    test_expect_f32(tj_contiguous(o[2]), (float[]){1, 2, 3, 4, 6, 7, 8, 9}, 8, 0);
    cr_assert_eq(tj_unbind(x, 1, o, 8, &n), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(n, 5);
    cr_assert_eq(tj_tensor_ndim(o[4]), 1);
    test_expect_f32(tj_contiguous(o[4]), (float[]){4, 9}, 2, 0);
    /* errors */
    cr_assert_eq(tj_split_with_sizes(x, (int64_t[]){1, 3}, 2, 1, o, 8, &n), TJ_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(tj_last_error(), "aten::split_with_sizes: split_with_sizes expects split_sizes to sum exactly to 5"),
              "%s", tj_last_error());
    cr_assert_eq(n, 0);
    cr_assert_eq(tj_split_with_sizes(x, (int64_t[]){-1, 6}, 2, 1, o, 8, &n), TJ_ERR_INVALID_ARGUMENT);
    cr_assert_eq(tj_chunk(x, 0, 1, o, 8, &n), TJ_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(tj_last_error(), "aten::chunk: chunk expects `chunks` to be greater than 0, got: 0"));
    cr_assert_eq(tj_unbind(x, 1, o, 4, &n), TJ_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(tj_last_error(), "aten::unbind.int: 5 pieces do not fit in 4 outputs"), "%s", tj_last_error());
    cr_assert_eq(tj_unbind(test_tensor(TJ_FLOAT32, 0, NULL, (float[]){1}), 0, o, 4, &n), TJ_ERR_INDEX);
    cr_assert_eq(tj_unbind(x, 2, o, 8, &n), TJ_ERR_INDEX);
}

/* ---- tracing, decomposition, replay ---- */

static tj_status all_ops(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n;
    int k = 0;
    out[k++] = tj_binary_cross_entropy(in[0], in[1], in[2], 1);
    out[k++] = tj_binary_cross_entropy_backward(in[1], in[0], in[1], NULL, 0);
    out[k++] = tj_linalg_vector_norm(in[0], tj_v_float(INFINITY), (int64_t[]){1}, 1, true, -1);
    out[k++] = tj_linalg_vector_norm(in[0], tj_v_int(0), NULL, 0, false, -1);
    out[k++] = tj_constant_pad_nd(in[0], (int64_t[]){2, -1, -1, 1}, 4, tj_v_float(-0.5));
    *n_out = k;
    for (int i = 0; i < k; i++)
        if (!out[i]) return tj_last_status();
    return TJ_OK;
}

#define NOPS 5
static const char *const op_names[NOPS] = {"aten::binary_cross_entropy", "aten::binary_cross_entropy_backward",
                                           "aten::linalg_vector_norm", "aten::linalg_vector_norm",
                                           "aten::constant_pad_nd"};

static void inputs(tj_tensor **in)
{
    in[0] = f32(2, (int64_t[]){2, 3}, (float[]){0.1f, 0, 1, 0.75f, 0.5f, 1e-20f});
    in[1] = f32(2, (int64_t[]){2, 3}, (float[]){0, 1, 0.5f, 0.25f, 1, 0});
    in[2] = vec(3, (float[]){1, 2, 0.5f});
}

Test(opsd, make_fx_records_aten_names_and_replay_matches_eager)
{
    tj_tensor *in[3], *eager[NOPS], *got[NOPS];
    inputs(in);
    test_run_eager(all_ops, in, 3, eager, NOPS);
    tj_graph *g = tj_make_fx(all_ops, NULL, in, 3, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find(op_names[0])), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find(op_names[1])), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find(op_names[2])), 2);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find(op_names[4])), 1);
    test_replay(g, in, 3, got, NOPS);
    for (int k = 0; k < NOPS; k++) test_expect_identical(got[k], eager[k], op_names[k]);
    tj_graph_free(g);
}

Test(opsd, decomposed_graph_matches_eager)
{
    tj_tensor *in[3], *eager[NOPS], *got[NOPS];
    inputs(in);
    test_run_eager(all_ops, in, 3, eager, NOPS);
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(all_ops, NULL, in, 3, core, TJ_TRACE_FAKE);
    tj_decomp_table_free(core);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect(test_only_primitives(g));
    cr_assert_eq(tj_graph_run(g, in, 3, got), TJ_OK, "%s", tj_last_error());
    tj_graph_free(g);
    /* same kernels (amax of abs, a count, copies and fills, the backward's
     * elementwise chain): the same bits; the loss through log / mean: close */
    for (int k = 1; k < NOPS; k++) test_expect_identical(got[k], eager[k], op_names[k]);
    test_expect_f32(got[0], (const float *)tj_tensor_data(eager[0]), 1, 1e-6);
}
