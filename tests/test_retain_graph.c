/* Backward passes free the values the graph saved (PyTorch's default
 * retain_graph=False), a later pass through a freed node fails, and
 * retain_graph keeps them. Expected values and behaviour from PyTorch 1.13
 * (float64): x = [1, 2, 3], w = [0.5, -1, 2], l = (exp(x) * w).sum();
 * l.backward() twice raises "Trying to backward through the graph a second
 * time", (a + b).sum() twice accumulates 2, 2, 2. */
#include <criterion/criterion.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(retain_graph, .init = test_scope_open, .fini = test_scope_close);

static const double xv[3] = {1, 2, 3}, wv[3] = {0.5, -1, 2};
static const double exp_x[3] = {2.718281828459045, 7.38905609893065, 20.085536923187668};
static const double grad_x[3] = {1.3591409142295225, -7.38905609893065, 40.171073846375336};

static tj_tensor *leaf(const double *v)
{
    tj_tensor *t = test_f64(1, (int64_t[]){3}, v);
    cr_assert_eq(tj_tensor_set_requires_grad(t, true), TJ_OK);
    return t;
}

static tj_tensor *exp_mul_sum(tj_tensor *x, tj_tensor *w) { return tj_sum(tj_mul(tj_exp(x), w), TJ_DTYPE_NONE); }

static void expect_second_time_error(tj_status st, const char *op)
{
    cr_expect_eq(st, TJ_ERR_INVALID_ARGUMENT, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), op), "expected '%s' in: %s", op, tj_last_error());
    cr_expect(strstr(tj_last_error(), "backward through the graph a second time"), "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "retain_graph"), "%s", tj_last_error());
}

Test(retain_graph, a_second_backward_through_freed_values_fails_and_adds_nothing)
{
    tj_tensor *x = leaf(xv), *w = leaf(wv), *l = exp_mul_sum(x, w);
    cr_assert_eq(tj_backward(l, NULL), TJ_OK, "%s", tj_last_error());
    test_expect_close(tj_tensor_grad(w), exp_x, 3, 1e-15, 0);
    expect_second_time_error(tj_backward(l, NULL), "aten::mul.Tensor");
    test_expect_close(tj_tensor_grad(w), exp_x, 3, 1e-15, 0);
    test_expect_close(tj_tensor_grad(x), grad_x, 3, 1e-15, 0);
}

Test(retain_graph, retain_graph_keeps_the_values_for_one_more_pass)
{
    tj_tensor *x = leaf(xv), *w = leaf(wv), *l = exp_mul_sum(x, w);
    tj_backward_options keep = {.retain_graph = true};
    cr_assert_eq(tj_backward_ex(l, NULL, &keep), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_backward_ex(l, NULL, NULL), TJ_OK, "%s", tj_last_error());
    double twice[3] = {2 * exp_x[0], 2 * exp_x[1], 2 * exp_x[2]};
    test_expect_close(tj_tensor_grad(w), twice, 3, 1e-15, 0);
    expect_second_time_error(tj_backward(l, NULL), "aten::mul.Tensor");
}

/* PyTorch reruns nodes that saved nothing: add, sub, views and sums. */
Test(retain_graph, a_graph_whose_derivatives_read_no_saved_value_runs_again)
{
    tj_tensor *a = leaf(xv), *b = leaf(wv);
    tj_tensor *l = tj_sum(tj_sub(a, tj_reshape(tj_t(tj_view(b, (int64_t[]){3, 1}, 2)), (int64_t[]){3}, 1)),
                          TJ_DTYPE_NONE);
    cr_assert_eq(tj_backward(l, NULL), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_backward(l, NULL), TJ_OK, "%s", tj_last_error());
    test_expect_close(tj_tensor_grad(a), (double[]){2, 2, 2}, 3, 0, 0);
    test_expect_close(tj_tensor_grad(b), (double[]){-2, -2, -2}, 3, 0, 0);
}

Test(retain_graph, autograd_grad_frees_the_values_unless_retained)
{
    tj_tensor *x = leaf(xv), *w = leaf(wv), *l = exp_mul_sum(x, w), *g = NULL;
    tj_backward_options keep = {.retain_graph = true};
    cr_assert_eq(tj_autograd_grad_ex(&l, 1, NULL, &w, 1, &g, &keep), TJ_OK, "%s", tj_last_error());
    test_expect_close(g, exp_x, 3, 1e-15, 0);
    cr_assert_eq(tj_autograd_grad(&l, 1, NULL, &x, 1, &g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g, grad_x, 3, 1e-15, 0);
    g = NULL;
    expect_second_time_error(tj_autograd_grad(&l, 1, NULL, &w, 1, &g), "aten::mul.Tensor");
    cr_expect_null(g);
    cr_expect_null(tj_tensor_grad(w), "autograd.grad leaves .grad alone");
}

/* h = exp(x) feeds two losses: the first pass frees exp's saved result, the
 * second reaches it through the other loss (PyTorch: the same error). */
Test(retain_graph, a_node_shared_by_two_losses_is_freed_by_the_first_pass)
{
    tj_tensor *x = leaf(xv), *h = tj_exp(x);
    tj_tensor *l1 = tj_sum(h, TJ_DTYPE_NONE), *l2 = tj_sum(tj_mul_scalar(h, tj_v_int(2)), TJ_DTYPE_NONE);
    cr_assert_eq(tj_backward(l1, NULL), TJ_OK, "%s", tj_last_error());
    expect_second_time_error(tj_backward(l2, NULL), "aten::exp");
    test_expect_close(tj_tensor_grad(x), exp_x, 3, 1e-15, 0);
}

/* Made in an inner scope, exp(x)'s result is held by the graph alone: its
 * memory goes with the pass, or stays with retain_graph. */
static void check_saved_storage_freed(bool retain)
{
    tj_tensor *x = leaf(xv), *w = leaf(wv);
    tj_scope *s = tj_scope_begin();
    tj_tensor *h = tj_exp(x);
    tj_storage *storage = h->storage;
    atomic_fetch_add(&storage->refcount, 1); /* watched, kept alive by the test */
    tj_tensor *l = tj_scope_keep(tj_sum(tj_mul(h, w), TJ_DTYPE_NONE));
    tj_scope_end(s);
    cr_expect_gt(atomic_load(&storage->refcount), 1, "the graph saved exp's result");
    tj_backward_options o = {.retain_graph = retain};
    cr_expect_eq(tj_backward_ex(l, NULL, &o), TJ_OK, "%s", tj_last_error());
    if (retain) cr_expect_gt(atomic_load(&storage->refcount), 1, "retained");
    else cr_expect_eq(atomic_load(&storage->refcount), 1, "only the test still holds it");
    test_expect_close(tj_tensor_grad(w), exp_x, 3, 1e-15, 0);
    tj_tensor_release(l);
    cr_expect_eq(atomic_load(&storage->refcount), 1);
    tj_storage_release(storage);
}

Test(retain_graph, the_pass_frees_memory_only_the_graph_held) { check_saved_storage_freed(false); }
Test(retain_graph, retain_graph_keeps_memory_only_the_graph_held) { check_saved_storage_freed(true); }
