/* In-place operators recorded by autograd (x.mul_(w) on a non-leaf, a plain
 * tensor taking history from an operand that requires grad), the cases
 * refused with a clear error, and a traced step with in-place operators
 * replayed. Reference values: PyTorch 1.13, float64, the same programs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

TestSuite(autograd_inplace, .init = test_scope_open, .fini = test_scope_close);

static tj_tensor *vec(const double *v)
{
    return test_f64(1, (int64_t[]){3}, v);
}

static tj_tensor *leaf(const double *v)
{
    tj_tensor *t = vec(v);
    cr_assert_eq(tj_tensor_set_requires_grad(t, true), TJ_OK);
    return t;
}

static const double W[3] = {0.5, -1.0, 2.0}, B[3] = {1.0, 2.0, 3.0};

static void expect_grad(tj_tensor *leaf_t, const double *want)
{
    cr_assert_not_null(tj_tensor_grad(leaf_t), "no gradient");
    test_expect_close(tj_tensor_grad(leaf_t), want, 3, 1e-15, 1e-15);
}

/* h = w * 3; h.mul_(b); h.add_(w, alpha=2); loss = (h * h).sum() */
Test(autograd_inplace, chain_on_a_non_leaf_matches_pytorch)
{
    tj_tensor *w = leaf(W), *b = leaf(B);
    tj_tensor *h = tj_mul_scalar(w, tj_v_int(3));
    cr_assert_eq(tj_mul_(h, b), h, "%s", tj_last_error());
    cr_assert_eq(tj_add_(h, w, tj_v_int(2)), h, "%s", tj_last_error());
    cr_expect(tj_tensor_requires_grad(h));
    cr_expect_not(tj_tensor_is_leaf(h));
    cr_assert_eq(tj_backward(tj_sum(tj_mul(h, h), -1), NULL), TJ_OK, "%s", tj_last_error());
    expect_grad(w, (double[]){25, -128, 484});
    expect_grad(b, (double[]){7.5, 48, 264});
}

/* x plain: x.mul_(w); x.div_(b) makes x require grad (the old x and the
 * value before div_ are what the formulas read); loss = (x * x).sum() */
Test(autograd_inplace, plain_tensor_takes_history_from_its_operands)
{
    tj_tensor *w = leaf(W), *b = leaf(B), *x = vec((double[]){1, 2, 3});
    cr_assert_eq(tj_mul_(x, w), x, "%s", tj_last_error());
    cr_assert_eq(tj_div_(x, b), x, "%s", tj_last_error());
    cr_expect(tj_tensor_requires_grad(x));
    cr_assert_eq(tj_backward(tj_sum(tj_mul(x, x), -1), NULL), TJ_OK, "%s", tj_last_error());
    expect_grad(w, (double[]){1, -2, 4});
    expect_grad(b, (double[]){-0.5, -1, -2.6666666666666665});
}

/* h = w * 1; h.addcmul_(b, b, value=0.5); h.copy_(b * 2); loss = (h * w).sum(),
 * and h = w * 2; h.fill_(3); h.addcdiv_(w, b, value=2); h.zero_(); h.add_(b) */
Test(autograd_inplace, overwriting_operators_cut_the_old_history)
{
    tj_tensor *w = leaf(W), *b = leaf(B);
    tj_tensor *h = tj_mul_scalar(w, tj_v_int(1));
    cr_assert_not_null(tj_addcmul_(h, b, b, tj_v_float(0.5)), "%s", tj_last_error());
    cr_assert_not_null(tj_copy_(h, tj_mul_scalar(b, tj_v_int(2))), "%s", tj_last_error());
    cr_assert_eq(tj_backward(tj_sum(tj_mul(h, w), -1), NULL), TJ_OK, "%s", tj_last_error());
    expect_grad(w, (double[]){2, 4, 6});
    expect_grad(b, (double[]){1, -2, 4});
    tj_tensor *w2 = leaf(W), *b2 = leaf(B);
    tj_tensor *k = tj_mul_scalar(w2, tj_v_int(2));
    cr_assert_not_null(tj_fill_(k, tj_v_float(3)), "%s", tj_last_error());
    cr_assert_not_null(tj_addcdiv_(k, w2, b2, tj_v_float(2)), "%s", tj_last_error());
    cr_assert_not_null(tj_zero_(k), "%s", tj_last_error());
    cr_assert_not_null(tj_add_(k, b2, tj_v_int(1)), "%s", tj_last_error());
    cr_assert_eq(tj_backward(tj_sum(tj_mul(k, k), -1), NULL), TJ_OK, "%s", tj_last_error());
    expect_grad(w2, (double[]){0, 0, 0});
    expect_grad(b2, (double[]){2, 4, 6});
}

/* Values saved for an earlier call and overwritten by a recorded in-place
 * call: PyTorch's version error at backward, for each of
 * exp(w).sqrt_() (exp saved its result), h.sqrt_().sub_(w) (sqrt_ saved its
 * result) and h.mul_(h) (other is self). */
Test(autograd_inplace, overwritten_saved_values_fail_at_backward_as_in_pytorch)
{
    tj_tensor *w = leaf(W), *b = leaf(B);
    tj_tensor *e = tj_exp(w);
    cr_assert_not_null(tj_sqrt_(e), "%s", tj_last_error());
    cr_expect_eq(tj_backward(tj_sum(tj_mul(e, b), -1), NULL), TJ_ERR_MODIFIED);
    cr_expect(strstr(tj_last_error(), "aten::exp: backward: return 0"), "%s", tj_last_error());
    tj_tensor *s = tj_exp(w);
    cr_assert_not_null(tj_sqrt_(s));
    cr_assert_not_null(tj_sub_(s, w, tj_v_int(1)));
    cr_expect_eq(tj_backward(tj_sum(s, -1), NULL), TJ_ERR_MODIFIED);
    cr_expect(strstr(tj_last_error(), "aten::sqrt_: backward: return 0"), "%s", tj_last_error());
    tj_tensor *h = tj_mul_scalar(w, tj_v_int(1));
    cr_assert_not_null(tj_mul_(h, h));
    cr_expect_eq(tj_backward(tj_sum(h, -1), NULL), TJ_ERR_MODIFIED);
    cr_expect(strstr(tj_last_error(), "aten::mul_.Tensor: backward: argument 'other'"), "%s", tj_last_error());
}

/* Refused at the call, self unchanged: a leaf that requires grad (as
 * PyTorch). A view of a recorded result and a result with a live view are
 * recorded, real or fake: PyTorch rebases the views' history
 * (tests/test_autograd_views.c has more). The aliases autograd saved of the
 * same storage do not count. */
/* h = w * 3; d = h.detach(); h.mul_(b): a detached alias has no history to
 * rebase, so PyTorch records the call; d shares the new values and version. */
Test(autograd_inplace, a_detached_alias_does_not_block_an_in_place_call)
{
    tj_tensor *w = leaf(W), *b = leaf(B);
    tj_tensor *h = tj_mul_scalar(w, tj_v_int(3));
    tj_tensor *d = tj_tensor_detach(h);
    cr_assert_eq(tj_mul_(h, b), h, "%s", tj_last_error());
    test_expect_close(d, (double[]){1.5, -6, 18}, 3, 0, 0);
    cr_expect_eq(tj_tensor_version(d), 1);
    cr_assert_eq(tj_backward(tj_sum(tj_mul(h, h), -1), NULL), TJ_OK, "%s", tj_last_error());
    expect_grad(w, (double[]){9, -72, 324});
    expect_grad(b, (double[]){4.5, 36, 216});
}

/* z = zeros(3); dv = z.detach()[:2]; z.copy_(y * 2): dv is a view of the
 * detached alias's family, not of z's, so PyTorch records the call and dv
 * keeps no history. */
Test(autograd_inplace, a_view_of_a_detached_alias_does_not_block_an_in_place_call)
{
    tj_tensor *y = leaf(W), *z = tj_zeros((int64_t[]){3}, 1, TJ_FLOAT64);
    tj_tensor *dv = tj_slice(tj_tensor_detach(z), 0, true, 0, true, 2, 1);
    cr_assert_eq(tj_copy_(z, tj_mul_scalar(y, tj_v_int(2))), z, "%s", tj_last_error());
    test_expect_close(dv, (double[]){1, -2}, 2, 0, 0);
    cr_expect(!tj_tensor_requires_grad(dv));
    cr_assert_eq(tj_backward(tj_sum(z, -1), NULL), TJ_OK, "%s", tj_last_error());
    expect_grad(y, (double[]){2, 2, 2});
}

/* h = w * 1; h.leaky_relu_(0.2) / h.elu_() / celu_(h, 2): PyTorch
 * differentiates the result (self_is_result), keeping no copy of h, so
 * writing h again is caught; a negative slope or alpha fails in the
 * backward operator. */
Test(autograd_inplace, leaky_relu_elu_and_celu_in_place_differentiate_their_result)
{
    tj_tensor *c = test_f64(1, (int64_t[]){3}, B);
    tj_tensor *w = leaf(W), *h = tj_mul_scalar(w, tj_v_int(1));
    cr_assert_eq(tj_leaky_relu_(h, tj_v_float(0.2)), h, "%s", tj_last_error());
    cr_assert_eq(tj_backward(tj_sum(tj_mul(h, c), -1), NULL), TJ_OK, "%s", tj_last_error());
    expect_grad(w, (double[]){1, 0.4, 3});
    tj_tensor *v = leaf(W), *e = tj_mul_scalar(v, tj_v_int(1));
    cr_assert_eq(tj_elu_(e, tj_v_int(1), tj_v_int(1), tj_v_int(1)), e, "%s", tj_last_error());
    cr_assert_eq(tj_backward(tj_sum(tj_mul(e, c), -1), NULL), TJ_OK, "%s", tj_last_error());
    expect_grad(v, (double[]){1, 0.7357588823428847, 3}); /* 2 * exp(-1) */
    tj_tensor *u = leaf(W), *f = tj_mul_scalar(u, tj_v_int(1));
    cr_assert_eq(tj_celu_(f, tj_v_int(2)), f, "%s", tj_last_error());
    cr_assert_eq(tj_backward(tj_sum(tj_mul(f, c), -1), NULL), TJ_OK, "%s", tj_last_error());
    expect_grad(u, (double[]){1, 1.2130613194252668, 3}); /* 2 * exp(-1 / 2), PyTorch's */

    tj_tensor *h2 = tj_mul_scalar(leaf(W), tj_v_int(1));
    cr_assert_eq(tj_leaky_relu_(h2, tj_v_float(0.2)), h2, "%s", tj_last_error());
    bool prev = tj_no_grad_begin();
    cr_assert_not_null(tj_mul_scalar_(h2, tj_v_int(2)));
    tj_no_grad_end(prev);
    cr_expect_eq(tj_backward(tj_sum(h2, -1), NULL), TJ_ERR_MODIFIED, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "aten::leaky_relu_"), "%s", tj_last_error());
    tj_tensor *f2 = tj_mul_scalar(leaf(W), tj_v_int(1));
    cr_assert_eq(tj_celu_(f2, tj_v_int(2)), f2, "%s", tj_last_error());
    cr_assert_not_null(tj_mul_scalar_(f2, tj_v_int(2)));
    cr_expect_eq(tj_backward(tj_sum(f2, -1), NULL), TJ_ERR_MODIFIED, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "aten::celu_"), "%s", tj_last_error());

    tj_tensor *h3 = tj_mul_scalar(leaf(W), tj_v_int(1));
    cr_assert_eq(tj_leaky_relu_(h3, tj_v_float(-0.2)), h3, "%s", tj_last_error());
    cr_expect_eq(tj_backward(tj_sum(h3, -1), NULL), TJ_ERR_INVALID_ARGUMENT, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "aten::leaky_relu_backward: self_is_result with a negative slope"), "%s",
              tj_last_error());
}

/* h (f64[3], real or fake) with a live view v = h[:2]: v.add_(1) then
 * h.add_(other) are recorded, v's history following h's. Returns v. */
static tj_tensor *expect_recorded_while_viewed(tj_tensor *h, tj_tensor *other)
{
    tj_tensor *v = tj_slice(h, 0, true, 0, true, 2, 1);
    cr_expect_eq(tj_add_scalar_(v, tj_v_int(1), tj_v_int(1)), v, "%s", tj_last_error());
    cr_expect_eq(tj_add_(h, other, tj_v_int(1)), h, "%s", tj_last_error());
    cr_expect(tj_tensor_requires_grad(v) && !tj_tensor_is_leaf(v));
    cr_expect(tj_tensor_requires_grad(h) && !tj_tensor_is_leaf(h));
    return v;
}

/* h = w * 2; v = h[:2]; v.add_(1); h.add_(b); loss = (h * h).sum() + (v * v * v).sum() */
Test(autograd_inplace, leaves_are_refused_and_views_rebased_at_the_call)
{
    tj_tensor *w = leaf(W), *b = leaf(B);
    cr_expect_null(tj_mul_(w, b));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "aten::mul_.Tensor: self (f64[3]) is a leaf that requires grad"), "%s",
              tj_last_error());
    test_expect_close(w, W, 3, 0, 0);
    tj_tensor *h = tj_mul_scalar(w, tj_v_int(2));
    tj_tensor *v = expect_recorded_while_viewed(h, b);
    test_expect_close(h, (double[]){3, 1, 7}, 3, 0, 0);
    tj_tensor *loss = tj_add(tj_sum(tj_mul(h, h), -1), tj_sum(tj_mul(tj_mul(v, v), v), -1));
    cr_assert_eq(tj_backward(loss, NULL), TJ_OK, "%s", tj_last_error());
    expect_grad(w, (double[]){66, 10, 28});
    expect_grad(b, (double[]){33, 5, 14});
}

/* Fake tensors count their views as real ones: the same calls are recorded. */
Test(autograd_inplace, fake_tensors_take_in_place_calls_on_views_as_real_ones)
{
    tj_tensor *f = tj_tensor_fake(TJ_FLOAT64, 1, (int64_t[]){3}), *fb = tj_tensor_fake(TJ_FLOAT64, 1, (int64_t[]){3});
    cr_assert_eq(tj_tensor_set_requires_grad(fb, true), TJ_OK);
    cr_expect_eq(tj_mul_(f, fb), f, "a fresh fake tensor: %s", tj_last_error());
    cr_expect(tj_tensor_requires_grad(f));
    tj_tensor *h = tj_mul_scalar(fb, tj_v_int(2));
    cr_expect(tj_tensor_is_fake(expect_recorded_while_viewed(h, fb)));
}

/* A training step with in-place operators in its forward, traced with make_fx,
 * functionalised and compiled: the plan's gradients equal eager's. */
static tj_status fn_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *w = in[0], *b = in[1];
    tj_tensor *h = tj_mul_scalar(w, tj_v_int(3));
    if (!tj_mul_(h, b) || !tj_add_(h, w, tj_v_int(2))) return tj_last_status();
    tj_tensor *grads[2];
    tj_status st = tj_autograd_grad((tj_tensor *[]){tj_sum(tj_mul(h, h), -1)}, 1, NULL, in, 2, grads);
    out[0] = grads[0];
    out[1] = grads[1];
    *n_out = 2;
    return st;
}

Test(autograd_inplace, traced_step_with_in_place_operators_replays_like_eager)
{
    tj_tensor *w = leaf(W), *b = leaf(B);
    tj_graph *g = tj_make_fx(fn_step, NULL, (tj_tensor *[]){w, b}, 2, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::mul_.Tensor")), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::clone")), 1, "mul_ saved self's old value");
    cr_expect_geq(tj_pass_functionalize(g), 1, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *out[2];
    cr_assert_eq(tj_plan_run(p, (tj_tensor *[]){vec(W), vec(B)}, 2, out), TJ_OK, "%s", tj_last_error());
    test_expect_close(out[0], (double[]){25, -128, 484}, 3, 1e-15, 1e-15);
    test_expect_close(out[1], (double[]){7.5, 48, 264}, 3, 1e-15, 1e-15);
    tj_plan_free(p);
    tj_graph_free(g);
}

/* The same step traced in fake mode: h is a fresh result without views, so
 * its in-place calls are recorded as in real mode, giving the same graph. */
Test(autograd_inplace, fake_trace_of_a_step_with_in_place_operators_equals_the_real_one)
{
    tj_tensor *w = leaf(W), *b = leaf(B);
    tj_graph *real = tj_make_fx(fn_step, NULL, (tj_tensor *[]){w, b}, 2, NULL, TJ_TRACE_REAL);
    tj_graph *fake = tj_make_fx(fn_step, NULL, (tj_tensor *[]){w, b}, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(real, "%s", tj_last_error());
    cr_assert_not_null(fake, "%s", tj_last_error());
    char *rt = tj_graph_to_string(real), *ft = tj_graph_to_string(fake);
    cr_assert(rt && ft);
    cr_expect_str_eq(ft, rt);
    free(rt);
    free(ft);
    cr_expect_geq(tj_pass_functionalize(fake), 1, "%s", tj_last_error());
    tj_tensor *out[2];
    tj_plan *p = tj_compile(fake, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, (tj_tensor *[]){vec(W), vec(B)}, 2, out), TJ_OK, "%s", tj_last_error());
    test_expect_close(out[0], (double[]){25, -128, 484}, 3, 1e-15, 1e-15);
    test_expect_close(out[1], (double[]){7.5, 48, 264}, 3, 1e-15, 1e-15);
    tj_plan_free(p);
    tj_graph_free(fake);
    tj_graph_free(real);
}
