/* Custom differentiable functions (tj_autograd_function_apply, PyTorch's
 * torch.autograd.Function): outputs computed with grad mode off take a
 * history whose backward is a callback. Reference values are exact in
 * float64 (x = [1, -2, 0.5]: d sum(x^3)/dx = 3x^2 = [3, 12, 0.75]) and are
 * checked against the operator path's (pow) bit for bit. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_counter.h"
#include "test_util.h"

TestSuite(autograd_function, .init = test_scope_open, .fini = test_scope_close);

static const int64_t shape3[1] = {3};
static const double x_values[3] = {1, -2, 0.5};

/* contexts released (each test runs in a process of its own) */
static int releases;
static int backward_calls;

typedef struct saved_ctx {
    tj_tensor *x;    /**< retained saved input (NULL: none) */
    double factors[8]; /**< a scale function's, per output */
    bool fail;       /**< the backward refuses */
    bool seen[8];    /**< which grad_outputs were non-NULL at the last call */
} saved_ctx;

static saved_ctx *ctx_new(tj_tensor *x)
{
    saved_ctx *c = calloc(1, sizeof *c);
    cr_assert_not_null(c);
    c->x = tj_tensor_retain(x);
    return c;
}

static void ctx_release(void *vctx)
{
    saved_ctx *c = vctx;
    tj_tensor_release(c->x);
    free(c);
    releases++;
}

static tj_tensor *leaf(void)
{
    tj_tensor *x = test_f64(1, shape3, x_values);
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    return x;
}

/* ---- cube: x^3 forward, 3 x^2 g backward ---- */

static tj_status cube_backward(void *vctx, tj_tensor *const *go, int n_out, const bool *needed, tj_tensor **gi,
                               int n_in)
{
    saved_ctx *c = vctx;
    backward_calls++;
    cr_assert_eq(n_out, 1);
    cr_assert_eq(n_in, 1);
    cr_assert_not_null(go[0], "called only with a gradient");
    if (c->fail) return tj_error(TJ_ERR_UNSUPPORTED, "CubeBackward: refused on purpose");
    if (!needed[0]) return TJ_OK;
    /* as pow's formula: g * (3 * x^2) */
    gi[0] = tj_mul(go[0], tj_mul_scalar(tj_pow_scalar(c->x, tj_v_float(2)), tj_v_float(3)));
    return gi[0] ? TJ_OK : tj_last_status();
}

static const tj_autograd_function cube_fn = {"Cube", cube_backward, ctx_release};

/* cube(x) through apply: the forward under no_grad, saving x; the result is
 * owned as an operator's (by the open scope). */
static tj_tensor *cube_ctx(tj_tensor *x, saved_ctx **ctx_out)
{
    bool was = tj_no_grad_begin();
    tj_tensor *y = tj_pow_scalar(x, tj_v_float(3));
    tj_no_grad_end(was);
    cr_assert_not_null(y, "%s", tj_last_error());
    cr_assert(!tj_tensor_requires_grad(y));
    saved_ctx *c = ctx_new(x);
    if (ctx_out) *ctx_out = c;
    cr_assert_eq(tj_autograd_function_apply(&cube_fn, c, &x, 1, &y, 1), TJ_OK, "%s", tj_last_error());
    return y;
}

static tj_tensor *cube(tj_tensor *x) { return cube_ctx(x, NULL); }

Test(autograd_function, cube_gradients_match_pow_bit_for_bit)
{
    tj_tensor *x = leaf(), *y = cube(x);
    cr_expect(tj_tensor_requires_grad(y));
    cr_expect(!tj_tensor_is_leaf(y));
    cr_assert_eq(releases, 0, "the node holds the context");
    cr_assert_eq(tj_backward(tj_sum(y, -1), NULL), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(backward_calls, 1);
    cr_expect_eq(releases, 1, "a pass without retain_graph released the context");
    const double want[3] = {3, 12, 0.75};
    test_expect_close(tj_tensor_grad(x), want, 3, 0, 0);

    tj_tensor *x2 = leaf();
    cr_assert_eq(tj_backward(tj_sum(tj_pow_scalar(x2, tj_v_float(3)), -1), NULL), TJ_OK, "%s", tj_last_error());
    test_expect_same_bits(tj_tensor_grad(x), tj_tensor_grad(x2), "cube's and pow's gradients");
}

Test(autograd_function, a_second_pass_without_retain_graph_is_refused_naming_the_node)
{
    tj_tensor *x = leaf(), *l = tj_sum(cube(x), -1);
    cr_assert_eq(tj_backward(l, NULL), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_backward(l, NULL), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "CubeBackward: backward: trying to backward through the graph a second time"),
              "%s", tj_last_error());
    cr_expect_eq(backward_calls, 1);
    cr_expect_eq(releases, 1, "released once");
    const double want[3] = {3, 12, 0.75};
    test_expect_close(tj_tensor_grad(x), want, 3, 0, 0);
}

Test(autograd_function, retain_graph_keeps_the_context_and_leaf_gradients_accumulate)
{
    tj_tensor *x = leaf();
    tj_scope *s = tj_scope_begin();
    tj_tensor *l = tj_sum(cube(x), -1);
    tj_backward_options keep = {.retain_graph = true};
    cr_assert_eq(tj_backward_ex(l, NULL, &keep), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_backward_ex(l, NULL, &keep), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(releases, 0);
    cr_expect_eq(backward_calls, 2);
    tj_scope_end(s); /* the graph dies with l */
    cr_expect_eq(releases, 1, "the node's death released the context");
    const double want[3] = {6, 24, 1.5};
    test_expect_close(tj_tensor_grad(x), want, 3, 0, 0);
}

Test(autograd_function, no_node_when_grad_mode_is_off_or_no_input_requires_grad)
{
    tj_tensor *x = leaf(), *y = tj_tensor_scalar_f64(2);
    saved_ctx *c = ctx_new(x);
    bool was = tj_no_grad_begin();
    cr_assert_eq(tj_autograd_function_apply(&cube_fn, c, &x, 1, &y, 1), TJ_OK);
    tj_no_grad_end(was);
    cr_expect_eq(releases, 1, "released at once");
    tj_tensor *before = y, *plain = test_f64(1, shape3, x_values);
    cr_assert_eq(tj_autograd_function_apply(&cube_fn, ctx_new(plain), &plain, 1, &y, 1), TJ_OK);
    cr_expect_eq(releases, 2, "released at once");
    cr_expect_eq(y, before, "outputs untouched");
    cr_expect(!tj_tensor_requires_grad(y));
    cr_expect(tj_tensor_is_leaf(y));
}

Test(autograd_function, the_node_dying_without_backward_releases_the_context)
{
    tj_tensor *x = leaf();
    tj_scope *s = tj_scope_begin();
    tj_tensor *l = tj_sum(cube(x), -1);
    cr_expect(tj_tensor_requires_grad(l));
    cr_expect_eq(releases, 0);
    tj_scope_end(s);
    cr_expect_eq(releases, 1);
    cr_expect_eq(backward_calls, 0);
}

Test(autograd_function, gradients_flow_through_the_node_into_earlier_operators)
{
    /* y = cube(2x) (a non-leaf input): dy/dx = 3 (2x)^2 * 2 = 24 x^2 */
    tj_tensor *x = leaf(), *h = tj_mul_scalar(x, tj_v_float(2));
    cr_assert(!tj_tensor_is_leaf(h));
    cr_assert_eq(tj_backward(tj_sum(cube(h), -1), NULL), TJ_OK, "%s", tj_last_error());
    const double want[3] = {24, 96, 6};
    test_expect_close(tj_tensor_grad(x), want, 3, 0, 0);
    cr_expect_null(tj_tensor_grad(h), "not a leaf");
}

/* exp: saves its output, detached (the output object itself would hold the
 * node holding the context: a cycle) */
static tj_status exp_backward(void *vctx, tj_tensor *const *go, int n_out, const bool *needed, tj_tensor **gi,
                              int n_in)
{
    saved_ctx *c = vctx;
    (void)n_out, (void)n_in;
    if (needed[0]) gi[0] = tj_mul(go[0], c->x);
    return gi[0] ? TJ_OK : tj_last_status();
}

Test(autograd_function, a_context_saving_its_output_detached_is_freed_with_the_graph)
{
    tj_tensor *x = leaf();
    tj_scope *s = tj_scope_begin();
    bool was = tj_no_grad_begin();
    tj_tensor *y = tj_exp(x);
    tj_no_grad_end(was);
    const tj_autograd_function exp_fn = {"Exp", exp_backward, ctx_release};
    cr_assert_eq(tj_autograd_function_apply(&exp_fn, ctx_new(tj_tensor_detach(y)), &x, 1, &y, 1), TJ_OK);
    tj_backward_options keep = {.retain_graph = true};
    cr_assert_eq(tj_backward_ex(tj_sum(y, -1), NULL, &keep), TJ_OK, "%s", tj_last_error());
    test_expect_same_bits(tj_tensor_grad(x), y, "d exp(x) / dx");
    cr_expect_eq(releases, 0);
    tj_scope_end(s);
    cr_expect_eq(releases, 1, "no cycle: the context went with the graph");
}

/* ---- several inputs and outputs ---- */

/* outputs[i] = x * factors[i] for one input x, or a * b for two */
static tj_status scale_backward(void *vctx, tj_tensor *const *go, int n_out, const bool *needed, tj_tensor **gi,
                                int n_in)
{
    saved_ctx *c = vctx;
    backward_calls++;
    cr_assert_eq(n_in, 1);
    tj_tensor *sum = NULL;
    for (int i = 0; i < n_out; i++) {
        c->seen[i] = go[i] != NULL;
        if (!go[i]) continue;
        tj_tensor *term = tj_mul_scalar(go[i], tj_v_float(c->factors[i]));
        sum = sum ? tj_add(sum, term) : term;
    }
    if (needed[0]) gi[0] = sum;
    return TJ_OK;
}

static const tj_autograd_function scale_fn = {"Scale", scale_backward, ctx_release};

/* n outputs x * (i + 1) through apply */
static void scale(tj_tensor *x, tj_tensor **y, int n)
{
    saved_ctx *c = ctx_new(NULL);
    bool was = tj_no_grad_begin();
    for (int i = 0; i < n; i++) {
        c->factors[i] = i + 1;
        y[i] = tj_mul_scalar(x, tj_v_float(i + 1));
    }
    tj_no_grad_end(was);
    cr_assert_eq(tj_autograd_function_apply(&scale_fn, c, &x, 1, y, n), TJ_OK, "%s", tj_last_error());
}

Test(autograd_function, an_unused_output_gets_a_null_gradient)
{
    tj_tensor *x = leaf(), *y[2];
    scale(x, y, 2);
    cr_expect(tj_tensor_requires_grad(y[1]));
    cr_assert_eq(tj_backward(tj_sum(y[0], -1), NULL), TJ_OK, "%s", tj_last_error());
    const double want[3] = {1, 1, 1};
    test_expect_close(tj_tensor_grad(x), want, 3, 0, 0);
    cr_expect_eq(backward_calls, 1);
}

Test(autograd_function, eight_outputs_each_take_their_gradient)
{
    tj_tensor *x = leaf(), *y[8], *go[8];
    scale(x, y, 8);
    /* every output but y[5], weighted by (i + 1): sum of (i + 1)^2 but 36 */
    tj_tensor *outs[7], *gos[7];
    for (int i = 0, k = 0; i < 8; i++) {
        go[i] = tj_full(shape3, 1, tj_v_float(i + 1), TJ_FLOAT64);
        if (i != 5) outs[k] = y[i], gos[k++] = go[i];
    }
    tj_tensor *g;
    cr_assert_eq(tj_autograd_grad_ex(outs, 7, gos, &x, 1, &g, &(tj_backward_options){.retain_graph = true}), TJ_OK,
                 "%s", tj_last_error());
    const double want[3] = {168, 168, 168};
    test_expect_close(g, want, 3, 0, 0);
    cr_expect_null(tj_tensor_grad(x), "tj_autograd_grad leaves .grad alone");
    /* the gradient of an output past TJ_MAX_RETURNS, requested itself */
    tj_tensor *g7;
    cr_assert_eq(tj_autograd_grad(&y[7], 1, &go[2], &y[7], 1, &g7), TJ_OK, "%s", tj_last_error());
    const double three[3] = {3, 3, 3};
    test_expect_close(g7, three, 3, 0, 0);
    cr_expect_eq(backward_calls, 1, "the node did not run for its own output's gradient");
    /* a gradient past TJ_MAX_RETURNS alone reaches the callback */
    cr_assert_eq(tj_backward(tj_sum(y[6], -1), NULL), TJ_OK, "%s", tj_last_error());
    const double seven[3] = {7, 7, 7};
    test_expect_close(tj_tensor_grad(x), seven, 3, 0, 0);
    cr_expect_eq(backward_calls, 2);
}

Test(autograd_function, integer_outputs_get_no_history)
{
    tj_tensor *x = leaf(), *y[2];
    saved_ctx *c = ctx_new(NULL);
    c->factors[0] = 1;
    bool was = tj_no_grad_begin();
    y[0] = tj_mul_scalar(x, tj_v_float(1));
    y[1] = tj_argmax(x, false, 0, false);
    tj_no_grad_end(was);
    cr_assert_eq(tj_autograd_function_apply(&scale_fn, c, &x, 1, y, 2), TJ_OK, "%s", tj_last_error());
    cr_expect(tj_tensor_requires_grad(y[0]));
    cr_expect(!tj_tensor_requires_grad(y[1]));
    cr_expect(tj_tensor_is_leaf(y[1]));
    tj_backward_options keep = {.retain_graph = true}; /* c lives on */
    cr_assert_eq(tj_backward_ex(tj_sum(y[0], -1), NULL, &keep), TJ_OK, "%s", tj_last_error());
    cr_expect(c->seen[0]);
    cr_expect(!c->seen[1], "an integer output's gradient is NULL");
}

/* identity: returns its input itself */
static tj_status identity_backward(void *ctx, tj_tensor *const *go, int n_out, const bool *needed, tj_tensor **gi,
                                   int n_in)
{
    (void)ctx;
    for (int i = 0; i < n_in; i++)
        if (needed[i]) gi[i] = go[i % n_out];
    return TJ_OK;
}

Test(autograd_function, an_output_that_is_an_input_becomes_a_fresh_alias)
{
    tj_tensor *x = leaf(), *y = x;
    const tj_autograd_function identity = {"Identity", identity_backward, NULL};
    tj_scope *s = tj_scope_begin();
    cr_assert_eq(tj_autograd_function_apply(&identity, NULL, &x, 1, &y, 1), TJ_OK, "%s", tj_last_error());
    cr_expect_neq(y, x, "a fresh object carries the history");
    cr_expect_eq(tj_tensor_data(y), tj_tensor_data(x), "sharing x's storage");
    cr_expect(!tj_tensor_is_leaf(y));
    cr_expect(tj_tensor_is_leaf(x), "x keeps being a leaf");
    cr_assert_eq(tj_backward(tj_sum(tj_mul(y, y), -1), NULL), TJ_OK, "%s", tj_last_error());
    tj_scope_end(s); /* the alias is the scope's, as operator results */
    const double want[3] = {2, -4, 1};
    test_expect_close(tj_tensor_grad(x), want, 3, 0, 0);
}

Test(autograd_function, fake_tensors_take_history_as_real_ones)
{
    tj_tensor *x = tj_tensor_fake(TJ_FLOAT64, 1, shape3), *y = x;
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    const tj_autograd_function identity = {"Identity", identity_backward, NULL};
    tj_scope *s = tj_scope_begin(); /* x stays the outer scope's */
    cr_assert_eq(tj_autograd_function_apply(&identity, NULL, &x, 1, &y, 1), TJ_OK, "%s", tj_last_error());
    cr_expect_neq(y, x);
    cr_expect(tj_tensor_is_fake(y));
    cr_assert_eq(tj_backward(tj_sum(tj_mul(y, y), -1), NULL), TJ_OK, "%s", tj_last_error());
    tj_scope_end(s);
    tj_tensor *g = tj_tensor_grad(x);
    test_assert_dtype_shape(g, TJ_FLOAT64, 1, shape3);
    cr_expect(tj_tensor_is_fake(g));
}

Test(autograd_function, the_most_inputs_and_outputs_each_take_their_gradient)
{
    enum { N = TJ_MAX_GRAPH_OUTPUTS };
    static tj_tensor *in[N], *out[N];
    tj_tensor *x = tj_tensor_scalar_f64(0.5);
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    bool was = tj_no_grad_begin();
    for (int i = 0; i < N; i++) {
        in[i] = x;
        out[i] = tj_mul_scalar(x, tj_v_float(i));
    }
    tj_no_grad_end(was);
    const tj_autograd_function identity = {"Identity", identity_backward, NULL};
    cr_assert_eq(tj_autograd_function_apply(&identity, NULL, in, N, out, N), TJ_OK, "%s", tj_last_error());
    /* d sum_i i * out_i / dx through gi_i = g_i: sum_i i = N (N - 1) / 2 */
    tj_tensor *weights = tj_arange(tj_v_int(0), tj_v_int(N), tj_v_int(1), TJ_FLOAT64);
    tj_tensor *l = tj_sum(tj_mul(tj_stack(out, N, 0), weights), -1);
    cr_assert_eq(tj_backward(l, NULL), TJ_OK, "%s", tj_last_error());
    test_expect_close(tj_tensor_grad(x), (const double[]){N * (N - 1) / 2.0}, 1, 0, 0);
}

/* a * b */
static tj_status mul_backward(void *vctx, tj_tensor *const *go, int n_out, const bool *needed, tj_tensor **gi,
                              int n_in)
{
    saved_ctx *c = vctx;
    (void)n_out;
    cr_assert_eq(n_in, 2);
    if (needed[0]) gi[0] = tj_mul(go[0], c->x);
    if (needed[1]) gi[1] = tj_mul(go[0], c->x);
    return TJ_OK;
}

Test(autograd_function, the_same_tensor_twice_gets_both_gradients)
{
    tj_tensor *x = leaf(), *in[2] = {x, x};
    const tj_autograd_function mul = {"Mul", mul_backward, ctx_release};
    bool was = tj_no_grad_begin();
    tj_tensor *y = tj_mul(x, x);
    tj_no_grad_end(was);
    cr_assert_eq(tj_autograd_function_apply(&mul, ctx_new(x), in, 2, &y, 1), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_backward(tj_sum(y, -1), NULL), TJ_OK, "%s", tj_last_error());
    const double want[3] = {2, -4, 1};
    test_expect_close(tj_tensor_grad(x), want, 3, 0, 0);
}

Test(autograd_function, a_failing_backward_fails_the_pass_and_stores_nothing)
{
    tj_tensor *x = leaf(), *y = tj_mul_scalar(x, tj_v_float(1));
    saved_ctx *c;
    tj_tensor *l = tj_add(tj_sum(cube_ctx(x, &c), -1), tj_sum(y, -1));
    c->fail = true;
    cr_assert_eq(tj_backward(l, NULL), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "CubeBackward: refused on purpose"), "%s", tj_last_error());
    cr_expect_null(tj_tensor_grad(x), "nothing stored");
    cr_expect_eq(releases, 0, "a failed pass keeps the context");
    c->fail = false;
    cr_assert_eq(tj_backward(l, NULL), TJ_OK, "%s", tj_last_error());
    const double want[3] = {4, 13, 1.75};
    test_expect_close(tj_tensor_grad(x), want, 3, 0, 0);
    cr_expect_eq(releases, 1);
}

/* a backward returning an error status without recording one */
static tj_status silent_backward(void *ctx, tj_tensor *const *go, int n_out, const bool *needed, tj_tensor **gi,
                                 int n_in)
{
    (void)ctx, (void)go, (void)n_out, (void)needed, (void)gi, (void)n_in;
    return TJ_ERR_SHAPE;
}

Test(autograd_function, a_status_without_an_error_is_reported_naming_the_node)
{
    tj_tensor *x = leaf(), *y = tj_tensor_scalar_f64(1);
    const tj_autograd_function silent = {"Silent", silent_backward, NULL};
    cr_assert_eq(tj_autograd_function_apply(&silent, NULL, &x, 1, &y, 1), TJ_OK);
    cr_assert_eq(tj_backward(y, NULL), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "SilentBackward: backward returned"), "%s", tj_last_error());
}

/* a float64 gradient of shape [2] for a float32 scalar input */
static tj_status broadcast_backward(void *ctx, tj_tensor *const *go, int n_out, const bool *needed, tj_tensor **gi,
                                    int n_in)
{
    (void)ctx, (void)go, (void)n_out, (void)n_in;
    if (needed[0]) gi[0] = tj_full((const int64_t[]){2}, 1, tj_v_float(2.5), TJ_FLOAT64);
    return TJ_OK;
}

/* a gradient of the wrong shape: refused, naming the node */
static tj_status wrong_shape_backward(void *ctx, tj_tensor *const *go, int n_out, const bool *needed, tj_tensor **gi,
                                      int n_in)
{
    (void)ctx, (void)go, (void)n_out, (void)n_in;
    if (needed[0]) gi[0] = tj_full((const int64_t[]){4}, 1, tj_v_float(1), TJ_FLOAT64);
    return TJ_OK;
}

Test(autograd_function, gradients_are_summed_to_shape_converted_or_refused)
{
    /* a float32 scalar input: the float64 gradient [2.5, 2.5] is summed, converted */
    tj_tensor *x = tj_tensor_scalar_f32(2), *y = tj_tensor_scalar_f32(4);
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    const tj_autograd_function broadcast = {"Broadcast", broadcast_backward, NULL};
    cr_assert_eq(tj_autograd_function_apply(&broadcast, NULL, &x, 1, &y, 1), TJ_OK);
    cr_assert_eq(tj_backward(y, NULL), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_dtype(tj_tensor_grad(x)), TJ_FLOAT32);
    test_expect_close(tj_tensor_grad(x), (const double[]){5}, 1, 0, 0);

    tj_tensor *z = leaf(), *w = tj_tensor_scalar_f64(1);
    const tj_autograd_function wrong = {"Wrong", wrong_shape_backward, NULL};
    cr_assert_eq(tj_autograd_function_apply(&wrong, NULL, &z, 1, &w, 1), TJ_OK);
    cr_assert_eq(tj_backward(w, NULL), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "WrongBackward gave a gradient of shape [4] for an input of shape [3]"), "%s",
              tj_last_error());
    cr_expect_null(tj_tensor_grad(z));
}

Test(autograd_function, bad_arguments_are_refused_releasing_the_context_and_leaking_nothing,
     .init = count_allocations)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = leaf(), *y = tj_tensor_scalar_f64(1), *none = NULL, *outs[1025];
    for (int i = 0; i < 1025; i++) outs[i] = y;
    int64_t live = live_allocations();
    const tj_autograd_function no_backward = {"NoBackward", NULL, ctx_release};
    const tj_autograd_function no_name = {NULL, cube_backward, ctx_release};
    struct {
        const tj_autograd_function *fn;
        tj_tensor **in, **out;
        int n_in, n_out;
        const char *needle;
    } cases[] = {
        {&no_backward, &x, &y, 1, 1, "the function has no backward"},
        {&no_name, &x, &y, 1, 1, "the function has no name"},
        {&cube_fn, &none, &y, 1, 1, "Cube: input 0 is NULL"},
        {&cube_fn, NULL, &y, 1, 1, "Cube: input 0 is NULL"},
        {&cube_fn, &x, &none, 1, 1, "Cube: output 0 is NULL"},
        {&cube_fn, &x, NULL, 1, 1, "Cube: output 0 is NULL"},
        {&cube_fn, &x, &y, -1, 1, "Cube: -1 inputs and 1 outputs"},
        {&cube_fn, &x, &y, 1, -2, "Cube: 1 inputs and -2 outputs"},
        {&cube_fn, &x, outs, 1, 1025, "Cube: 1 inputs and 1025 outputs (from 0 to 1024 each)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cr_expect_eq(tj_autograd_function_apply(cases[i].fn, ctx_new(x), cases[i].in, cases[i].n_in, cases[i].out,
                                                cases[i].n_out),
                     TJ_ERR_INVALID_ARGUMENT, "case %zu", i);
        cr_expect(strstr(tj_last_error(), cases[i].needle), "case %zu: %s", i, tj_last_error());
        cr_expect_eq(releases, (int)i + 1, "case %zu: released once", i);
        cr_expect_eq(live_allocations(), live, "case %zu: nothing leaked", i);
        cr_expect(!tj_tensor_requires_grad(y), "case %zu: outputs untouched", i);
    }
    cr_expect_eq(tj_autograd_function_apply(NULL, NULL, &x, 1, &y, 1), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "NULL function"), "%s", tj_last_error());
    tj_scope_end(s);
}

Test(autograd_function, a_whole_cycle_leaks_nothing, .init = count_allocations)
{
    tj_tensor *x = leaf();
    int64_t live = live_allocations();
    for (int retain = 0; retain < 2; retain++) {
        tj_scope *s = tj_scope_begin();
        tj_tensor *y[8];
        scale(x, y, 8);
        tj_tensor *l = tj_sum(tj_add(y[0], y[7]), -1);
        cr_assert_eq(tj_backward_ex(l, NULL, &(tj_backward_options){.retain_graph = retain}), TJ_OK, "%s",
                     tj_last_error());
        cr_assert_eq(tj_tensor_set_grad(x, NULL), TJ_OK);
        tj_scope_end(s);
        cr_expect_eq(releases, retain + 1);
        cr_expect_eq(live_allocations(), live, "retain_graph %d: nothing leaked", retain);
    }
}

/* ---- under make_fx ---- */

/* d sum(cube(x)) / dx, cube's backward calling operators */
static tj_status grad_of_cube(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *l = tj_sum(cube(x), -1);
    *n_out = 1;
    return tj_autograd_grad(&l, 1, NULL, &x, 1, out);
}

Test(autograd_function, a_traced_backward_records_the_callbacks_operators)
{
    tj_tensor *fake = tj_tensor_fake(TJ_FLOAT64, 1, shape3);
    tj_graph *g = tj_make_fx(grad_of_cube, NULL, &fake, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(releases, 1, "the traced pass released its context");
    /* forward pow(x, 3); backward pow(x, 2), * 3, * g */
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::pow.Tensor_Scalar")), 2);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::mul.Scalar")), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::mul.Tensor")), 1);
    tj_tensor *x = test_f64(1, shape3, x_values), *gx;
    cr_assert_eq(tj_graph_run(g, &x, 1, &gx), TJ_OK, "%s", tj_last_error());
    const double want[3] = {3, 12, 0.75};
    test_expect_close(gx, want, 3, 0, 0);
    tj_graph_free(g);
}
