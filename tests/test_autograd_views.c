/* In-place calls on views under autograd (PyTorch's CopySlices): the base's
 * history takes the call, the view's follows the base, views taken before
 * follow too; the calls PyTorch refuses are refused with self unchanged;
 * fake tensors are accepted and refused alike; a traced step replays to the
 * same gradients. Reference values: tests/autograd_views_ref.h (PyTorch
 * 1.13, float64, the same programs; tests/make_autograd_views_ref.py). */
#include <criterion/criterion.h>
#include <string.h>

#include "alloc_counter.h"
#include "autograd_views_ref.h"
#include "test_util.h"

TestSuite(autograd_views, .init = test_scope_open, .fini = test_scope_close);

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define NDIM(...) ((int)(sizeof SHAPE(__VA_ARGS__) / sizeof(int64_t)))
#define F64(data, ...) test_f64(NDIM(__VA_ARGS__), SHAPE(__VA_ARGS__), data)

static tj_tensor *leaf(tj_tensor *t)
{
    cr_assert_eq(tj_tensor_set_requires_grad(t, true), TJ_OK, "%s", tj_last_error());
    return t;
}

static void expect_grad(tj_tensor *t, const double *want, int64_t n)
{
    cr_assert_not_null(tj_tensor_grad(t), "no gradient");
    test_expect_close(tj_tensor_grad(t), want, n, 1e-12, 1e-12);
}

static tj_tensor *sum(tj_tensor *t) { return tj_sum(t, TJ_DTYPE_NONE); }

/* ---- the programs of make_autograd_views_ref.py ---- */

enum { B = 2, T = 3, H = 2 };

/* zeros, or an eager fake tensor of that shape (inside a fake-mode trace,
 * tj_zeros itself gives a fake one) */
static tj_tensor *zeros(bool fake, const int64_t *shape, int ndim)
{
    return fake ? tj_tensor_fake(TJ_FLOAT64, ndim, shape) : tj_zeros(shape, ndim, TJ_FLOAT64);
}

/* out = zeros(B, T, H); h = zeros(B, H); for t: h = tanh(x[:, t] * w + h * u);
 * out[:, t].copy_(h); returns out (*loss = (out * c).sum()) */
static tj_tensor *rnn(tj_tensor *x, tj_tensor *w, tj_tensor *u, tj_tensor *c, bool fake, tj_tensor **loss)
{
    tj_tensor *out = zeros(fake, SHAPE(B, T, H), 3), *h = zeros(fake, SHAPE(B, H), 2);
    for (int t = 0; t < T; t++) {
        h = tj_tanh(tj_add(tj_mul(tj_select(x, 1, t), w), tj_mul(h, u)));
        if (!tj_copy_(tj_select(out, 1, t), h)) return NULL;
    }
    *loss = sum(tj_mul(out, c));
    return out;
}

Test(autograd_views, copy_into_selected_views_of_zeros_gives_the_base_history)
{
    tj_tensor *x = F64(RNN_X, B, T, H), *c = F64(RNN_C, B, T, H);
    tj_tensor *w = leaf(F64(RNN_W, H)), *u = leaf(F64(RNN_U, H)), *loss;
    tj_tensor *out = rnn(x, w, u, c, false, &loss);
    cr_assert_not_null(out, "%s", tj_last_error());
    cr_expect(tj_tensor_requires_grad(out), "out takes history from what was copied into it");
    cr_expect_not(tj_tensor_is_leaf(out));
    test_expect_close(out, RNN_OUT, 12, 1e-15, 1e-15);
    cr_assert_eq(tj_backward(loss, NULL), TJ_OK, "%s", tj_last_error());
    expect_grad(w, RNN_GW, 2);
    expect_grad(u, RNN_GU, 2);
}

/* y = linear(inp, W, b); y[:, :2].mul_(2); loss = (y * y).sum() */
Test(autograd_views, mul_on_a_slice_of_a_linear_result_matches_pytorch)
{
    tj_tensor *inp = F64(LIN_IN, 3, 2), *w = leaf(F64(LIN_W, 4, 2)), *b = leaf(F64(LIN_B, 4));
    tj_tensor *y = tj_linear(inp, w, b);
    tj_tensor *v = tj_slice(y, 1, true, 0, true, 2, 1);
    cr_assert_eq(tj_mul_scalar_(v, tj_v_int(2)), v, "%s", tj_last_error());
    test_expect_close(y, LIN_Y, 12, 1e-15, 1e-15);
    cr_assert_eq(tj_backward(sum(tj_mul(y, y)), NULL), TJ_OK, "%s", tj_last_error());
    expect_grad(w, LIN_GW, 8);
    expect_grad(b, LIN_GB, 4);
}

/* h = w * k; v = h.narrow(1, 0, 2); v.relu_(); loss = (h * c).sum() + (v * v).sum():
 * the view itself is read after the call */
Test(autograd_views, relu_on_a_narrowed_view_read_afterwards_matches_pytorch)
{
    tj_tensor *w = leaf(F64(NAR_W, 2, 3)), *k = F64(NAR_K, 2, 3), *c = F64(NAR_C, 2, 3);
    tj_tensor *h = tj_mul(w, k), *v = tj_slice(h, 1, true, 0, true, 2, 1);
    cr_assert_eq(tj_relu_(v), v, "%s", tj_last_error());
    test_expect_close(h, NAR_H, 6, 1e-15, 1e-15);
    tj_tensor *loss = tj_add(sum(tj_mul(h, c)), sum(tj_mul(v, v)));
    cr_assert_eq(tj_backward(loss, NULL), TJ_OK, "%s", tj_last_error());
    expect_grad(w, NAR_GW, 6);
}

/* h = w * 2; v = h.view(6); p = h.t(); e = h[0].unsqueeze(0).expand(2, 3); h.mul_(b);
 * loss = (v * c6).sum() + (p * cp).sum() + (e * ce).sum(): the views taken
 * before the call read h's new value through its new history */
Test(autograd_views, views_taken_before_their_base_is_written_follow_its_new_history)
{
    tj_tensor *w = leaf(F64(BASE_W, 2, 3)), *b = leaf(F64(BASE_B, 2, 3));
    tj_tensor *h = tj_mul_scalar(w, tj_v_int(2));
    tj_tensor *v = tj_view(h, SHAPE(6), 1), *p = tj_t(h);
    tj_tensor *e = tj_expand(tj_unsqueeze(tj_select(h, 0, 0), 0), SHAPE(2, 3), 2);
    cr_assert_not_null(e, "%s", tj_last_error());
    cr_assert_eq(tj_mul_(h, b), h, "%s", tj_last_error());
    tj_tensor *loss = tj_add(tj_add(sum(tj_mul(v, F64(BASE_C6, 6))), sum(tj_mul(p, F64(BASE_CP, 3, 2)))),
                             sum(tj_mul(e, F64(BASE_CE, 2, 3))));
    cr_assert_eq(tj_backward(loss, NULL), TJ_OK, "%s", tj_last_error());
    expect_grad(w, BASE_GW, 6);
    expect_grad(b, BASE_GB, 6);
}

/* h = w * 1; r = h[1]; s = r[:, 1:3]; s.mul_(m); s.add_(q);
 * loss = (h * h).sum() + (r * c).sum(): a view of a view rebases the root */
Test(autograd_views, a_view_of_a_view_rebases_the_root)
{
    tj_tensor *w = leaf(F64(CHAIN_W, 2, 3, 4)), *m = leaf(F64(CHAIN_M, 3, 2)), *q = leaf(F64(CHAIN_Q, 2));
    tj_tensor *h = tj_mul_scalar(w, tj_v_int(1)), *r = tj_select(h, 0, 1), *s = tj_slice(r, 1, true, 1, true, 3, 1);
    cr_assert_eq(tj_mul_(s, m), s, "%s", tj_last_error());
    cr_assert_eq(tj_add_(s, q, tj_v_int(1)), s, "%s", tj_last_error());
    tj_tensor *loss = tj_add(sum(tj_mul(h, h)), sum(tj_mul(r, F64(CHAIN_C, 3, 4))));
    cr_assert_eq(tj_backward(loss, NULL), TJ_OK, "%s", tj_last_error());
    expect_grad(w, CHAIN_GW, 24);
    expect_grad(m, CHAIN_GM, 6);
    expect_grad(q, CHAIN_GQ, 2);
}

/* ---- traced ---- */

/* One step of rnn: inputs x, c, w, u; outputs the gradients of w and u. */
static tj_status rnn_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *loss;
    if (!rnn(in[0], in[2], in[3], in[1], false, &loss)) return tj_last_status();
    *n_out = 2;
    return tj_autograd_grad(&loss, 1, NULL, in + 2, 2, out);
}

/* The step traced (real mode as it is, fake mode to the core primitives),
 * functionalised and compiled: the plan gives PyTorch's gradients. */
static void expect_replayed_step(tj_tracing_mode mode, tj_decomp_table *table)
{
    tj_tensor *in[4] = {F64(RNN_X, B, T, H), F64(RNN_C, B, T, H), leaf(F64(RNN_W, H)), leaf(F64(RNN_U, H))};
    tj_graph *g = tj_make_fx(rnn_step, NULL, in, 4, table, mode);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::copy_")), T, "one copy_ into a view per step");
    cr_expect_geq(tj_pass_functionalize(g), 1, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::copy_")), 0, "functionalised");
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *out[2];
    tj_tensor *run_in[4] = {F64(RNN_X, B, T, H), F64(RNN_C, B, T, H), F64(RNN_W, H), F64(RNN_U, H)};
    cr_assert_eq(tj_plan_run(p, run_in, 4, out), TJ_OK, "%s", tj_last_error());
    test_expect_close(out[0], RNN_GW, 2, 1e-12, 1e-12);
    test_expect_close(out[1], RNN_GU, 2, 1e-12, 1e-12);
    tj_plan_free(p);
    tj_graph_free(g);
}

Test(autograd_views, traced_step_writing_views_replays_to_pytorchs_gradients)
{
    expect_replayed_step(TJ_TRACE_REAL, NULL);
    tj_decomp_table *core = tj_core_decompositions();
    expect_replayed_step(TJ_TRACE_FAKE, core);
    tj_decomp_table_free(core);
}

/* ---- refused as PyTorch refuses ---- */

/* op(self) must fail with `status` and a message holding `needle`, leaving
 * self's values and version alone and nothing allocated. */
static void expect_refused(tj_tensor *(*op)(tj_tensor *self, tj_tensor *other), tj_tensor *self, tj_tensor *other,
                           tj_status status, const char *needle)
{
    uint32_t version = tj_tensor_version(self);
    tj_tensor *before = tj_tensor_is_fake(self) ? NULL : tj_clone(self);
    int64_t live = live_allocations();
    tj_scope *s = tj_scope_begin();
    cr_expect_null(op(self, other));
    cr_expect_eq(tj_last_status(), status, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), needle), "%s", tj_last_error());
    tj_scope_end(s);
    cr_expect_eq(live_allocations(), live, "nothing leaked");
    cr_expect_eq(tj_tensor_version(self), version, "self unchanged");
    if (before) test_expect_same(self, before, "self's values");
}

/* The refusals, on real or fake tensors ("~" marks fake ones in messages). */
static void check_refusals(bool fake)
{
    const int64_t shape[2] = {2, 3};
    tj_tensor *w = leaf(fake ? tj_tensor_fake(TJ_FLOAT64, 2, shape) : tj_full(shape, 2, tj_v_float(0.5), TJ_FLOAT64));
    tj_tensor *o = leaf(fake ? tj_tensor_fake(TJ_FLOAT64, 1, SHAPE(3)) : tj_full(SHAPE(3), 1, tj_v_float(2), TJ_FLOAT64));
    char want[160];
    /* a view of a leaf that requires grad */
    snprintf(want, sizeof want, "aten::mul_.Tensor: self (%sf64[3]) is a view of a leaf that requires grad (%sf64[2, 3])",
             fake ? "~" : "", fake ? "~" : "");
    expect_refused(tj_mul_, tj_select(w, 0, 1), o, TJ_ERR_INVALID_ARGUMENT, want);
    expect_refused(tj_mul_, tj_select(tj_t(tj_t(w)), 0, 0), o, TJ_ERR_INVALID_ARGUMENT, "is a view of a leaf");
    /* one of several views of one call: split, unbind, chunk */
    tj_tensor *h = tj_mul_scalar(w, tj_v_int(2)), *pieces[3];
    int n;
    cr_assert_eq(tj_unbind(h, 0, pieces, 3, &n), TJ_OK, "%s", tj_last_error());
    expect_refused(tj_mul_, pieces[1], o, TJ_ERR_INVALID_ARGUMENT, "is one of several views returned by one call");
    cr_assert_eq(tj_split(h, 1, 1, pieces, 3, &n), TJ_OK, "%s", tj_last_error());
    expect_refused(tj_copy_, pieces[0], tj_view(o, SHAPE(3, 1), 2), TJ_ERR_INVALID_ARGUMENT, "several views");
    cr_assert_eq(tj_chunk(h, 2, 0, pieces, 3, &n), TJ_OK, "%s", tj_last_error());
    expect_refused(tj_mul_, tj_select(pieces[0], 0, 0), o, TJ_ERR_INVALID_ARGUMENT, "several views");
    /* a view made in no_grad mode, of a base requiring grad or not */
    tj_tensor *plain = fake ? tj_tensor_fake(TJ_FLOAT64, 2, shape) : tj_zeros(shape, 2, TJ_FLOAT64);
    bool was = tj_no_grad_begin();
    tj_tensor *nv = tj_select(h, 0, 0), *pv = tj_select(plain, 0, 1);
    tj_no_grad_end(was);
    expect_refused(tj_mul_, nv, o, TJ_ERR_INVALID_ARGUMENT, "created in no_grad mode");
    expect_refused(tj_copy_, pv, o, TJ_ERR_INVALID_ARGUMENT, "created in no_grad mode");
    /* tjit's own: a base without history whose other views would not follow */
    tj_tensor *row0 = tj_select(plain, 0, 0);
    snprintf(want, sizeof want, "on self (%sf64[3]) gives history to %sf64[2, 3], which has none yet and shares its "
             "storage with 2 other views", fake ? "~" : "", fake ? "~" : "");
    expect_refused(tj_copy_, tj_select(plain, 0, 1), o, TJ_ERR_UNSUPPORTED, want);
    (void)row0;
}

Test(autograd_views, in_place_calls_pytorch_refuses_are_refused_with_self_unchanged, .init = count_allocations)
{
    tj_scope *s = tj_scope_begin();
    check_refusals(false);
    tj_scope_end(s);
}

Test(autograd_views, fake_tensors_are_refused_as_real_ones, .init = count_allocations)
{
    tj_scope *s = tj_scope_begin();
    check_refusals(true);
    tj_scope_end(s);
}

/* b = x * 1; v = b[0]; u = b[:, 1]; u.mul_(w); loss = (v * v).sum():
 * v, taken before the call, reads b[0, 1] = x[0, 1] * w[0] through b's new
 * history: d/dx = [[2, 400], [0, 0]], d/dw = [80, 0] for x = [[1, 2], [3, 4]],
 * w = [10, 100]. */
static tj_status view_before_write(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *b = tj_mul_scalar(in[0], tj_v_int(1));
    tj_tensor *v = tj_select(b, 0, 0), *u = tj_select(b, 1, 1);
    if (!tj_mul_(u, in[1])) return tj_last_status();
    tj_tensor *loss = sum(tj_mul(v, v));
    *n_out = 2;
    return loss ? tj_autograd_grad(&loss, 1, NULL, in, 2, out) : tj_last_status();
}

/* A fake-mode trace sees the base's in-place call through the views taken
 * before it, as a real-mode one: fake in-place calls bump the version too. */
Test(autograd_views, fake_and_real_traces_of_a_view_taken_before_the_write_replay_alike)
{
    static const double x[4] = {1, 2, 3, 4}, w[2] = {10, 100};
    for (int fake = 0; fake < 2; fake++) {
        tj_tensor *in[2] = {leaf(F64(x, 2, 2)), leaf(F64(w, 2))}, *out[2];
        tj_graph *g = tj_make_fx(view_before_write, NULL, in, 2, NULL, fake ? TJ_TRACE_FAKE : TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s", tj_last_error());
        cr_assert_eq(tj_graph_run(g, (tj_tensor *[]){F64(x, 2, 2), F64(w, 2)}, 2, out), TJ_OK, "%s", tj_last_error());
        test_expect_close(out[0], (const double[]){2, 400, 0, 0}, 4, 0, 0);
        test_expect_close(out[1], (const double[]){80, 0}, 2, 0, 0);
        tj_graph_free(g);
    }
}

/* The accepted calls of the programs above on fake tensors: the same
 * histories, shapes and requires-grad flags as real ones. */
Test(autograd_views, fake_tensors_are_accepted_as_real_ones)
{
    tj_tensor *x = tj_tensor_fake(TJ_FLOAT64, 3, SHAPE(B, T, H)), *c = tj_tensor_fake(TJ_FLOAT64, 3, SHAPE(B, T, H));
    tj_tensor *w = leaf(tj_tensor_fake(TJ_FLOAT64, 1, SHAPE(H))), *u = leaf(tj_tensor_fake(TJ_FLOAT64, 1, SHAPE(H)));
    tj_tensor *loss, *out = rnn(x, w, u, c, true, &loss);
    cr_assert_not_null(out, "%s", tj_last_error());
    cr_expect(tj_tensor_is_fake(out) && tj_tensor_requires_grad(out) && !tj_tensor_is_leaf(out));
    tj_tensor *h = tj_mul_scalar(w, tj_v_int(2)), *v = tj_slice(h, 0, true, 0, true, 1, 1);
    cr_expect_eq(tj_relu_(v), v, "%s", tj_last_error());
    cr_expect_eq(tj_add_(h, u, tj_v_int(1)), h, "%s", tj_last_error());
    cr_expect(tj_tensor_requires_grad(v) && tj_tensor_requires_grad(h));
}
