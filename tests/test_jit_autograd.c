/* Compiled functions with gradients (tj_jit's AOTAutograd): outputs of a
 * call whose inputs require grad carry a history whose backward runs the
 * compiled backward plan. Gradients are checked against the same function
 * run eagerly; values are small integers, so both are exact and must be
 * equal bit for bit. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "alloc_counter.h"
#include "models/models.h"
#include "test_util.h"

TestSuite(jit_autograd, .init = test_scope_open, .fini = test_scope_close);

enum { X, W1, B1, W2, B2, N_PARAMS };
static const int64_t SHAPES[N_PARAMS][2] = {{4, 3}, {5, 3}, {5, 0}, {2, 5}, {2, 0}};

/* linear(relu(linear(x, w1, b1)), w2, b2), and the hidden layer when ctx is set */
static tj_status two_layers(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_tensor *h = tj_relu(tj_linear(in[X], in[W1], in[B1]));
    out[0] = tj_linear(h, in[W2], in[B2]);
    out[1] = h;
    *n_out = ctx ? 2 : 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* Integers in [-3, 3], different per tensor and call. */
static tj_tensor *ints(int which, int seed)
{
    const int64_t *s = SHAPES[which];
    int ndim = s[1] ? 2 : 1;
    float v[15];
    for (int i = 0; i < s[0] * (s[1] ? s[1] : 1); i++) v[i] = (float)((i * 7 + which * 5 + seed * 3) % 7 - 3);
    return test_f32(ndim, s, v);
}

/* Fresh inputs; those in `grad` (bit per input) require grad. */
static void make_inputs(tj_tensor **in, unsigned grad, int seed)
{
    for (int i = 0; i < N_PARAMS; i++) {
        in[i] = ints(i, seed);
        if (grad >> i & 1) cr_assert_eq(tj_tensor_set_requires_grad(in[i], true), TJ_OK);
    }
}

/* sum(out * c), c = 1, 2, 3, ...: a gradient that differs per element */
static tj_tensor *weighted_sum(tj_tensor *out)
{
    float c[8];
    for (int i = 0; i < 8; i++) c[i] = (float)(i + 1);
    return tj_sum(tj_mul(out, test_f32(2, (int64_t[]){4, 2}, c)), TJ_DTYPE_NONE);
}

static void expect_same(const tj_tensor *got, const tj_tensor *want, const char *what)
{
    cr_assert((got == NULL) == (want == NULL), "%s: %s", what, got ? "unexpected gradient" : "no gradient");
    if (!got) return;
    cr_assert_eq(tj_tensor_numel(got), tj_tensor_numel(want), "%s", what);
    for (int64_t i = 0; i < tj_tensor_numel(got); i++)
        cr_assert_eq(tj_tensor_item_at(got, i), tj_tensor_item_at(want, i), "%s[%ld]: %g, eagerly %g", what, (long)i,
                     tj_tensor_item_at(got, i), tj_tensor_item_at(want, i));
}

static tj_tensor *jit_call(tj_jit *j, tj_tensor *const *in, int n, int want_outputs)
{
    tj_tensor *out[2] = {NULL, NULL};
    int n_out = -1;
    cr_assert_eq(tj_jit_run(j, in, n, out, 2, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(n_out, want_outputs);
    return out[0];
}

/* Two steps through the jit and two eagerly: .grad accumulates alike; also
 * with the core decompositions (mm as bmm, relu as maximum, ...). */
static void gradients_equal_eager(const tj_decomp_table *table)
{
    unsigned grad = 1u << W1 | 1u << B1 | 1u << W2 | 1u << B2;
    tj_tensor *jin[N_PARAMS], *ein[N_PARAMS];
    make_inputs(jin, grad, 0);
    make_inputs(ein, grad, 0);
    tj_jit *j = tj_jit_new(two_layers, NULL, &(tj_jit_options){.decompositions = table});
    for (int step = 0; step < 2; step++) {
        if (step) jin[X] = ein[X] = ints(X, 1);
        tj_clear_error();
        tj_tensor *out = jit_call(j, jin, N_PARAMS, 1);
        /* tracing and splitting left no error behind (a tensor released twice reports one) */
        cr_assert_eq(tj_last_status(), TJ_OK, "%s", tj_last_error());
        cr_assert(tj_tensor_requires_grad(out) && !tj_tensor_is_leaf(out), "the output has no history");
        cr_assert_eq(tj_backward(weighted_sum(out), NULL), TJ_OK, "%s", tj_last_error());
        tj_tensor *eout[2];
        int n_out = 2;
        cr_assert_eq(two_layers(NULL, ein, N_PARAMS, eout, &n_out), TJ_OK);
        expect_same(out, eout[0], "output");
        cr_assert_eq(tj_backward(weighted_sum(eout[0]), NULL), TJ_OK, "%s", tj_last_error());
    }
    static const char *const names[N_PARAMS] = {"x", "w1", "b1", "w2", "b2"};
    for (int i = 0; i < N_PARAMS; i++) expect_same(tj_tensor_grad(jin[i]), tj_tensor_grad(ein[i]), names[i]);
    tj_jit_statistics s;
    tj_jit_stats(j, &s);
    cr_assert_eq(s.compiles, 1);
    cr_assert_eq(s.calls, 2);
    tj_jit_free(j);
}

Test(jit_autograd, gradients_equal_the_eager_ones_and_accumulate) { gradients_equal_eager(NULL); }

Test(jit_autograd, gradients_equal_the_eager_ones_with_the_core_decompositions)
{
    tj_decomp_table *core = tj_core_decompositions();
    gradients_equal_eager(core);
    tj_decomp_table_free(core);
}

static int graphs_seen;
static int graph_outputs[2], graph_inputs[2];
static char backward_text[8192];

static tj_status remember_graph(void *ctx, tj_graph *g)
{
    (void)ctx;
    if (graphs_seen < 2) {
        graph_outputs[graphs_seen] = tj_graph_num_outputs(g);
        graph_inputs[graphs_seen] = tj_graph_num_inputs(g);
        if (graphs_seen == 1) {
            char *text = tj_graph_to_string(g);
            snprintf(backward_text, sizeof backward_text, "%s", text);
            free(text);
        }
    }
    graphs_seen++;
    return TJ_OK;
}

/* The forward graph saves what the backward reads and nothing else: the
 * hidden layer for relu's gradient; x and w2 are inputs the backward takes
 * as they are, and w2^T (a view) it makes again. */
Test(jit_autograd, on_graph_sees_the_forward_then_the_backward_graph)
{
    graphs_seen = 0;
    tj_tensor *in[N_PARAMS];
    make_inputs(in, 1u << W1 | 1u << W2, 0);
    tj_jit *j = tj_jit_new(two_layers, NULL, &(tj_jit_options){.on_graph = remember_graph});
    tj_tensor *out = jit_call(j, in, N_PARAMS, 1);
    cr_assert_eq(graphs_seen, 2);
    cr_assert_eq(graph_inputs[0], N_PARAMS);
    cr_assert_eq(graph_outputs[0], 2, "forward outputs: the output and the saved hidden layer");
    cr_assert_eq(graph_outputs[1], 2, "backward outputs: the gradients of w1 and w2");
    cr_assert_eq(graph_inputs[1], 4, "backward inputs: x, w2, the hidden layer, tangents_1\n%s", backward_text);
    cr_assert(strstr(backward_text, "tangents_1"), "%s", backward_text);
    cr_assert_eq(tj_plan_num_outputs(tj_jit_plan(j, in, N_PARAMS)), 2, "tj_jit_plan gives the forward plan");
    cr_assert_eq(tj_backward(weighted_sum(out), NULL), TJ_OK, "%s", tj_last_error());
    cr_assert_null(tj_tensor_grad(in[X]));
    cr_assert_null(tj_tensor_grad(in[B1]));
    cr_assert_not_null(tj_tensor_grad(in[W1]));
    tj_jit_free(j);
}

/* An output no gradient reaches gets zeros; gradients flow on into the
 * history of an input computed eagerly. */
Test(jit_autograd, unused_outputs_and_inputs_with_history)
{
    tj_tensor *jin[N_PARAMS], *ein[N_PARAMS];
    make_inputs(jin, 1u << W2, 0);
    make_inputs(ein, 1u << W2, 0);
    tj_tensor *jx = ints(X, 2), *ex = ints(X, 2);
    tj_tensor_set_requires_grad(jx, true);
    tj_tensor_set_requires_grad(ex, true);
    jin[X] = tj_mul_scalar(jx, tj_v_int(2));
    ein[X] = tj_mul_scalar(ex, tj_v_int(2));
    tj_jit *j = tj_jit_new(two_layers, (void *)1, NULL);
    jit_call(j, jin, N_PARAMS, 2);
    tj_tensor *out[2];
    int n_out = 2;
    cr_assert_eq(tj_jit_run(j, jin, N_PARAMS, out, 2, &n_out), TJ_OK, "%s", tj_last_error());
    tj_tensor *eout[2];
    cr_assert_eq(two_layers((void *)1, ein, N_PARAMS, eout, &n_out), TJ_OK);
    /* only the hidden layer's gradient flows: the output's is zeros */
    tj_tensor *hsum = tj_sum(out[1], TJ_DTYPE_NONE), *ehsum = tj_sum(eout[1], TJ_DTYPE_NONE);
    cr_assert_eq(tj_backward(hsum, NULL), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_backward(ehsum, NULL), TJ_OK, "%s", tj_last_error());
    expect_same(tj_tensor_grad(jx), tj_tensor_grad(ex), "x (through x * 2)");
    /* w2 only reaches the output, whose gradient counts as zeros: a zero
     * gradient, where eagerly none (as torch.compile) */
    cr_assert_null(tj_tensor_grad(ein[W2]));
    static const float zeros[10] = {0};
    test_expect_f32(tj_tensor_grad(jin[W2]), zeros, 10, 0);
    tj_jit_free(j);
}

/* As any node's saved values: freed by a pass, kept with retain_graph;
 * an input the backward reads, written in place since the call, refused.
 * (sum's node saves nothing: the compiled function's is the one that fails.) */
Test(jit_autograd, retain_graph_and_inputs_modified_after_the_call)
{
    tj_tensor *in[N_PARAMS];
    make_inputs(in, 1u << W1, 0);
    tj_jit *j = tj_jit_new(two_layers, NULL, NULL);
    tj_tensor *loss = tj_sum(jit_call(j, in, N_PARAMS, 1), TJ_DTYPE_NONE);
    cr_assert_eq(tj_backward_ex(loss, NULL, &(tj_backward_options){.retain_graph = true}), TJ_OK, "%s", tj_last_error());
    tj_tensor *once = tj_clone(tj_tensor_grad(in[W1]));
    cr_assert_eq(tj_backward(loss, NULL), TJ_OK, "%s", tj_last_error());
    expect_same(tj_tensor_grad(in[W1]), tj_mul_scalar(once, tj_v_int(2)), "w1 after two passes");
    cr_assert_eq(tj_backward(loss, NULL), TJ_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(tj_last_error(), "CompiledFunctionBackward"), "%s", tj_last_error());

    loss = tj_sum(jit_call(j, in, N_PARAMS, 1), TJ_DTYPE_NONE);
    cr_assert_not_null(tj_add_scalar_(in[X], tj_v_int(1), tj_v_int(1)));
    cr_assert_eq(tj_backward(loss, NULL), TJ_ERR_MODIFIED);
    cr_assert(strstr(tj_last_error(), "input 0"), "%s", tj_last_error());
    tj_jit_free(j);
}

/* The outputs' history holds the backward plan: its plans leaving the
 * cache, or freeing the jit, does not take it away. */
Test(jit_autograd, the_backward_outlives_the_jit)
{
    tj_tensor *jin[N_PARAMS], *ein[N_PARAMS];
    make_inputs(jin, 1u << B1, 0);
    make_inputs(ein, 1u << B1, 0);
    tj_jit *j = tj_jit_new(two_layers, NULL, &(tj_jit_options){.cache_limit = 1});
    tj_tensor *loss = weighted_sum(jit_call(j, jin, N_PARAMS, 1));
    tj_tensor *other[N_PARAMS];
    make_inputs(other, 1u << W1, 0);
    jit_call(j, other, N_PARAMS, 1); /* another signature: the first plans are evicted */
    tj_jit_statistics st;
    tj_jit_stats(j, &st);
    cr_assert_eq(st.evictions, 1);
    tj_jit_free(j);
    cr_assert_eq(tj_backward(loss, NULL), TJ_OK, "%s", tj_last_error());
    tj_tensor *eout[2];
    int n_out = 2;
    cr_assert_eq(two_layers(NULL, ein, N_PARAMS, eout, &n_out), TJ_OK);
    cr_assert_eq(tj_backward(weighted_sum(eout[0]), NULL), TJ_OK);
    expect_same(tj_tensor_grad(jin[B1]), tj_tensor_grad(ein[B1]), "b1");
}

/* out = w * x, and the running sum s += x (s without gradients) */
static tj_status accumulate_input(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_mul(in[0], in[1]);
    *n_out = 1;
    return out[0] && tj_add_(in[2], in[1], tj_v_int(1)) ? TJ_OK : tj_last_status();
}

/* An input without gradients updated in place (a buffer, running
 * statistics) is written back by the forward plan, as AOTAutograd copies
 * such mutations back after its forward graph. */
Test(jit_autograd, inputs_without_gradients_updated_in_place_are_written_back)
{
    static const float v[3] = {1, 2, 3}, zeros[3] = {0};
    tj_tensor *w = test_f32(1, (int64_t[]){3}, v), *x = test_f32(1, (int64_t[]){3}, v);
    tj_tensor *s = test_f32(1, (int64_t[]){3}, zeros), *out[1];
    tj_tensor_set_requires_grad(w, true);
    tj_tensor *in[3] = {w, x, s};
    graphs_seen = 0;
    tj_jit *j = tj_jit_new(accumulate_input, NULL, &(tj_jit_options){.on_graph = remember_graph});
    int n_out;
    for (int call = 0; call < 2; call++) {
        cr_assert_eq(tj_jit_run(j, in, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(n_out, 1);
        cr_assert_eq(tj_tensor_item_at(s, 2), 3.0 * (call + 1), "s written back");
        static const float squares[3] = {1, 4, 9};
        test_expect_f32(out[0], squares, 3, 0);
        cr_assert_eq(tj_backward(tj_sum(out[0], TJ_DTYPE_NONE), NULL), TJ_OK, "%s", tj_last_error());
    }
    static const float want_grad[3] = {2, 4, 6}; /* x, twice */
    test_expect_f32(tj_tensor_grad(w), want_grad, 3, 0);
    cr_assert_eq(graph_outputs[0], 2, "forward outputs: w * x, s's new value (written back)");
    cr_assert_eq(graph_inputs[1], 2, "backward inputs: x, tangents_1\n%s", backward_text);
    tj_jit_free(j);
}

/* out = w * x after w *= 2 under no_grad (an optimiser's update) */
static tj_status update_then_use(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    bool prev = tj_no_grad_begin();
    tj_tensor *w = tj_mul_scalar_(in[0], tj_v_int(2));
    tj_no_grad_end(prev);
    out[0] = w ? tj_mul(in[0], in[1]) : NULL;
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* A function updating an input that requires grad (a training step with its
 * optimiser) compiles without gradients: its outputs get no history, as
 * before such signatures had gradients, and the input is written back. */
Test(jit_autograd, updating_an_input_that_requires_grad_gives_no_history)
{
    static const float v[3] = {1, 2, 3}, want_w[3] = {2, 4, 6}, want_out[3] = {2, 8, 18};
    tj_tensor *w = test_f32(1, (int64_t[]){3}, v), *x = test_f32(1, (int64_t[]){3}, v), *out[1];
    tj_tensor_set_requires_grad(w, true);
    tj_tensor *in[2] = {w, x};
    tj_jit *j = tj_jit_new(update_then_use, NULL, NULL);
    int n_out;
    cr_assert_eq(tj_jit_run(j, in, 2, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert(!tj_tensor_requires_grad(out[0]));
    test_expect_f32(w, want_w, 3, 0);
    test_expect_f32(out[0], want_out, 3, 0);
    tj_jit_free(j);
}

/* out and argmax(out): an integer output gets no history and no tangent. */
static tj_status with_argmax(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_status st = two_layers(ctx, in, n, out, n_out);
    if (st != TJ_OK) return st;
    out[1] = tj_argmax(out[0], true, 1, false);
    *n_out = 2;
    return out[1] ? TJ_OK : tj_last_status();
}

Test(jit_autograd, integer_outputs_get_no_history)
{
    tj_tensor *jin[N_PARAMS], *ein[N_PARAMS];
    make_inputs(jin, 1u << W2, 0);
    make_inputs(ein, 1u << W2, 0);
    graphs_seen = 0;
    tj_jit *j = tj_jit_new(with_argmax, NULL, &(tj_jit_options){.on_graph = remember_graph});
    tj_tensor *out[2];
    int n_out;
    cr_assert_eq(tj_jit_run(j, jin, N_PARAMS, out, 2, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(n_out, 2);
    cr_assert(!tj_tensor_requires_grad(out[1]) && tj_tensor_dtype(out[1]) == TJ_INT64);
    cr_assert(strstr(backward_text, "tangents_1") && !strstr(backward_text, "tangents_2"), "%s", backward_text);
    tj_tensor *eout[2];
    cr_assert_eq(with_argmax(NULL, ein, N_PARAMS, eout, &n_out), TJ_OK);
    expect_same(out[1], eout[1], "argmax");
    cr_assert_eq(tj_backward(weighted_sum(out[0]), NULL), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_backward(weighted_sum(eout[0]), NULL), TJ_OK, "%s", tj_last_error());
    expect_same(tj_tensor_grad(jin[W2]), tj_tensor_grad(ein[W2]), "w2");
    tj_jit_free(j);
}

/* h = x * w1 (rows of 3), layer_norm(h) with its mean and rstd, and
 * h * 2 detached: only the first output requires grad eagerly. */
static tj_status norm_and_stats(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *h = tj_mul(in[X], tj_slice(in[W1], 0, true, 0, true, 4, 1));
    tj_status st = tj_native_layer_norm(h, (int64_t[]){3}, 1, NULL, NULL, 1e-5, &out[0], &out[1], &out[2]);
    out[3] = tj_tensor_detach(tj_mul_scalar(h, tj_v_int(2)));
    out[4] = tj_mul_scalar(in[B1], tj_v_int(3)); /* from an input that does not require grad */
    *n_out = 5;
    return st != TJ_OK ? st : out[3] && out[4] ? TJ_OK : tj_last_status();
}

/* As AOTAutograd marks them non-differentiable: outputs that do not
 * require grad in the trace (layer_norm's mean and rstd, a detached value,
 * one from inputs that do not require grad) get no history. */
Test(jit_autograd, outputs_without_grad_in_the_trace_get_no_history)
{
    tj_tensor *jin[N_PARAMS], *ein[N_PARAMS], *jout[5], *eout[5];
    make_inputs(jin, 1u << W1, 0);
    make_inputs(ein, 1u << W1, 0);
    tj_jit *j = tj_jit_new(norm_and_stats, NULL, NULL);
    int n_out;
    cr_assert_eq(tj_jit_run(j, jin, N_PARAMS, jout, 5, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(norm_and_stats(NULL, ein, N_PARAMS, eout, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(n_out, 5);
    for (int k = 0; k < 5; k++) {
        cr_assert_eq(tj_tensor_requires_grad(jout[k]), k == 0, "output %d", k);
        cr_assert_eq(tj_tensor_requires_grad(eout[k]), k == 0, "output %d (eagerly)", k);
        expect_same(jout[k], eout[k], "output");
    }
    cr_assert_eq(tj_backward(tj_sum(tj_mul(jout[0], jin[X]), TJ_DTYPE_NONE), NULL), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_backward(tj_sum(tj_mul(eout[0], ein[X]), TJ_DTYPE_NONE), NULL), TJ_OK, "%s", tj_last_error());
    expect_same(tj_tensor_grad(jin[W1]), tj_tensor_grad(ein[W1]), "w1");
    tj_jit_free(j);
}

/* relu_'s result, saved for its gradient, then written in place: the
 * backward of the joint trace fails, and its error is the call's. */
static tj_status relu_then_scale(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *h = tj_mul(in[X], in[X]);
    if (!tj_relu_(h) || !tj_mul_scalar_(h, tj_v_int(2))) return tj_last_status();
    out[0] = h;
    *n_out = 1;
    return TJ_OK;
}

/* sgd's fused step has no derivative: the joint trace fails with
 * TJ_ERR_UNSUPPORTED, a graph break for eager_fallback. */
static tj_status sgd_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    *n_out = 2;
    return tj__fused_sgd_step(in[W1], in[W1], in[W1], 0.5, 0.5, 0, 0, false, false, out);
}

Test(jit_autograd, a_failing_joint_trace_reports_its_own_error)
{
    tj_tensor *in[N_PARAMS], *out[2];
    make_inputs(in, 1u << X | 1u << W1, 0);
    int n_out;
    tj_jit *j = tj_jit_new(relu_then_scale, NULL, NULL);
    cr_assert_eq(tj_jit_run(j, in, N_PARAMS, out, 2, &n_out), TJ_ERR_MODIFIED, "%s", tj_last_error());
    cr_assert(strstr(tj_last_error(), "aten::relu_"), "%s", tj_last_error());
    tj_jit_free(j);
    for (int eager = 0; eager < 2; eager++) {
        j = tj_jit_new(sgd_step, NULL, &(tj_jit_options){.eager_fallback = eager});
        tj_status st = tj_jit_run(j, in, N_PARAMS, out, 2, &n_out);
        cr_assert_eq(st, eager ? TJ_OK : TJ_ERR_UNSUPPORTED, "%s", tj_last_error());
        if (!eager) cr_assert(strstr(tj_last_error(), "_fused_sgd_step"), "%s", tj_last_error());
        tj_jit_statistics s;
        tj_jit_stats(j, &s);
        cr_assert_eq(s.eager_signatures, eager);
        tj_jit_free(j);
    }
}

static tj_status tanh_mm(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_tanh(tj_mm(in[0], in[1]));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static pthread_barrier_t both_ready;

typedef struct pass_on_thread {
    tj_tensor *loss;
    tj_status status;
    char error[256];
} pass_on_thread;

static void *backward_on_thread(void *arg)
{
    pass_on_thread *p = arg;
    pthread_barrier_wait(&both_ready);
    p->status = tj_backward(p->loss, NULL);
    snprintf(p->error, sizeof p->error, "%s", tj_last_error());
    return NULL;
}

/* Two calls of one signature share its backward plan: backward passes
 * through their outputs on two threads at once both run (as eager passes
 * over separate graphs do) and give the one-thread gradients. Each pass
 * takes milliseconds, so most rounds overlap. */
Test(jit_autograd, backward_passes_on_two_threads_at_once)
{
    tj_set_num_threads(1); /* each pass on its own core, for as long as possible */
    int64_t shape[2] = {400, 400};
    tj_jit *j = tj_jit_new(tanh_mm, NULL, NULL);
    tj_tensor *in[3][2];
    for (int t = 0; t < 3; t++) {
        in[t][0] = test_random_f32(2, shape, 1);
        in[t][1] = test_random_f32(2, shape, 2);
        cr_assert_eq(tj_tensor_set_requires_grad(in[t][0], true), TJ_OK);
    }
    tj_tensor *out[1];
    int n_out;
    cr_assert_eq(tj_jit_run(j, in[2], 2, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_backward(tj_sum(out[0], TJ_DTYPE_NONE), NULL), TJ_OK, "%s", tj_last_error());
    tj_tensor *want = tj_tensor_grad(in[2][0]);
    pthread_barrier_init(&both_ready, NULL, 2);
    for (int round = 0; round < 30; round++) {
        pass_on_thread passes[2];
        pthread_t threads[2];
        for (int t = 0; t < 2; t++) {
            cr_assert_eq(tj_jit_run(j, in[t], 2, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
            passes[t].loss = tj_sum(out[0], TJ_DTYPE_NONE);
            cr_assert_eq(tj_tensor_set_grad(in[t][0], NULL), TJ_OK);
        }
        for (int t = 0; t < 2; t++) cr_assert_eq(pthread_create(&threads[t], NULL, backward_on_thread, &passes[t]), 0);
        for (int t = 0; t < 2; t++) pthread_join(threads[t], NULL);
        for (int t = 0; t < 2; t++) {
            cr_assert_eq(passes[t].status, TJ_OK, "round %d, thread %d: %s", round, t, passes[t].error);
            expect_same(tj_tensor_grad(in[t][0]), want, "x.grad");
        }
    }
    pthread_barrier_destroy(&both_ready);
    tj_jit_free(j);
}

/* One life of a compiled function with saved values (the hidden layer): a
 * pass, a call whose outputs go unused, a pass with retain_graph then one
 * refused (an input written in place), a failing joint trace. */
static void compiled_function_life(void)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[N_PARAMS], *out[2];
    make_inputs(in, 1u << W1 | 1u << W2, 0);
    tj_jit *j = tj_jit_new(two_layers, NULL, NULL);
    cr_assert_eq(tj_backward(weighted_sum(jit_call(j, in, N_PARAMS, 1)), NULL), TJ_OK, "%s", tj_last_error());
    jit_call(j, in, N_PARAMS, 1);
    tj_tensor *loss = weighted_sum(jit_call(j, in, N_PARAMS, 1));
    cr_assert_eq(tj_backward_ex(loss, NULL, &(tj_backward_options){.retain_graph = true}), TJ_OK, "%s", tj_last_error());
    cr_assert_not_null(tj_mul_scalar_(in[X], tj_v_int(2)));
    cr_assert_eq(tj_backward(loss, NULL), TJ_ERR_MODIFIED);
    tj_jit_free(j);
    j = tj_jit_new(relu_then_scale, NULL, NULL);
    make_inputs(in, 1u << X, 0);
    int n_out;
    cr_assert_eq(tj_jit_run(j, in, N_PARAMS, out, 2, &n_out), TJ_ERR_MODIFIED, "%s", tj_last_error());
    tj_jit_free(j);
    tj_scope_end(s);
}

/* Tracing, splitting and compiling a signature with saved values release
 * every tensor once: no error on the way. */
Test(jit_autograd, a_successful_first_call_records_no_error)
{
    tj_tensor *in[N_PARAMS];
    make_inputs(in, 1u << W1 | 1u << W2, 0);
    tj_jit *j = tj_jit_new(two_layers, NULL, NULL);
    tj_clear_error();
    jit_call(j, in, N_PARAMS, 1);
    cr_assert_eq(tj_last_status(), TJ_OK, "%s", tj_last_error());
    tj_jit_free(j);
}

/* The saved values, the histories and the contexts go with the tensors
 * that hold them, and the split's placeholders with the split (the
 * counting allocator returns memory at once: a fake released twice reads
 * freed memory). */
Test(jit_autograd, a_compiled_function_leaves_nothing_behind, .init = count_allocations)
{
    compiled_function_life(); /* lazily made tables and pools stay */
    int64_t live = live_allocations();
    compiled_function_life();
    cr_expect_eq(live_allocations(), live, "%ld blocks left", (long)(live_allocations() - live));
}

/* The WORKLOADS.md models' losses (mlp, cnn, gpt), parameters as inputs */
static tj_status model_loss(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const model *m = ctx;
    out[0] = m->def->loss(m, m->def->forward(m, in, in[n - 2]), in[n - 1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* A batch of the model's input shape: (i * 7919) % 256 tokens, or pixels in
 * [-0.5, 0.5); targets (i * 7) % 10. */
static void model_batch(const model_def *d, tj_tensor **x, tj_tensor **y)
{
    *x = tj_tensor_empty(d->x_dtype, d->x_ndim, d->x_shape);
    *y = tj_tensor_empty(TJ_INT64, d->y_ndim, d->y_shape);
    cr_assert(*x && *y);
    for (int64_t i = 0; i < tj_tensor_numel(*x); i++) {
        if (d->x_dtype == TJ_INT64) ((int64_t *)tj_tensor_data(*x))[i] = (i * 7919) % 256;
        else ((float *)tj_tensor_data(*x))[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
    }
    for (int64_t i = 0; i < tj_tensor_numel(*y); i++) ((int64_t *)tj_tensor_data(*y))[i] = (i * 7) % 10;
}

/* torch.compile(model) then loss.backward(): every parameter's gradient as
 * eagerly, bit for bit (the same kernels run, split over two plans). */
Test(jit_autograd, the_models_gradients_equal_the_eager_ones)
{
    static const char *const ids[] = {"mlp", "cnn", "gpt"};
    for (size_t k = 0; k < sizeof ids / sizeof *ids; k++) {
        model m;
        cr_assert_eq(model_create(model_find(ids[k]), 0, &m), TJ_OK, "%s", tj_last_error());
        tj_tensor *in[MODEL_MAX_PARAMS + 2], *eager[MODEL_MAX_PARAMS], *loss[2];
        for (int i = 0; i < m.n_params; i++) {
            cr_assert_eq(tj_tensor_set_requires_grad(m.params[i], true), TJ_OK);
            in[i] = m.params[i];
        }
        int n = m.n_params + 2, n_out;
        model_batch(m.def, &in[n - 2], &in[n - 1]);
        cr_assert_eq(model_loss(&m, in, n, &loss[0], &n_out), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_backward(loss[0], NULL), TJ_OK, "%s", tj_last_error());
        for (int i = 0; i < m.n_params; i++) {
            eager[i] = tj_clone(tj_tensor_grad(m.params[i]));
            tj_tensor_set_grad(m.params[i], NULL);
        }
        tj_jit *j = tj_jit_new(model_loss, &m, NULL);
        cr_assert_eq(tj_jit_run(j, in, n, &loss[1], 1, &n_out), TJ_OK, "%s: %s", ids[k], tj_last_error());
        expect_same(loss[1], loss[0], ids[k]);
        cr_assert_eq(tj_backward(loss[1], NULL), TJ_OK, "%s: %s", ids[k], tj_last_error());
        for (int i = 0; i < m.n_params; i++) expect_same(tj_tensor_grad(m.params[i]), eager[i], m.names[i]);
        tj_jit_free(j);
        model_free(&m);
    }
}
