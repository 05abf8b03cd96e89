/* Integer index tensors saved for a gradient are version-checked like float
 * ones: adding 1 to the indices in place after the forward call makes
 * backward fail (TJ_ERR_MODIFIED) instead of routing the gradient to the new
 * positions. PyTorch 1.13 raises "one of the variables needed for gradient
 * computation has been modified by an inplace operation" for each of these
 * (x[i], index_put, gather, embedding, ... with i.add_(1) before
 * backward). */
#include <criterion/criterion.h>
#include <string.h>

#include "test_util.h"

TestSuite(index_version, .init = test_scope_open, .fini = test_scope_close);

static tj_tensor *leaf(int ndim, const int64_t *shape, const double *v)
{
    tj_tensor *t = test_f64(ndim, shape, v);
    cr_assert_eq(tj_tensor_set_requires_grad(t, true), TJ_OK);
    return t;
}

static tj_tensor *x4(void) { return leaf(1, (int64_t[]){4}, (double[]){1, 2, 3, 4}); }
static tj_tensor *index2(void) { return test_i64(1, (int64_t[]){2}, (int64_t[]){0, 2}); }

/* Shifts the indices in place (still in range), then expects backward to
 * name the operator and the index argument (or return) it saved, and to
 * leave .grad of x unset. */
static void expect_refused(tj_tensor *loss, tj_tensor *index, tj_tensor *x, const char *op, const char *what)
{
    cr_assert_not_null(loss, "%s", tj_last_error());
    cr_assert_not_null(tj_add_scalar_(index, tj_v_int(1), tj_v_int(1)), "%s", tj_last_error());
    cr_expect_eq(tj_backward(loss, NULL), TJ_ERR_MODIFIED, "%s: %s", op, tj_last_error());
    cr_expect(strstr(tj_last_error(), op), "expected '%s' in: %s", op, tj_last_error());
    cr_expect(strstr(tj_last_error(), what), "expected '%s' in: %s", what, tj_last_error());
    cr_expect(strstr(tj_last_error(), "version 1, saved at version 0"), "%s", tj_last_error());
    cr_expect_null(tj_tensor_grad(x), "%s: no gradient from the new indices", op);
}

/* sum(x[i] * [1, 2]): the weights make the positions matter. */
Test(index_version, index_tensor_refuses_indices_modified_in_place)
{
    tj_tensor *x = x4(), *i = index2();
    tj_tensor *loss = tj_sum(tj_mul(tj_index(x, &i, 1), test_f64(1, (int64_t[]){2}, (double[]){1, 2})), -1);
    expect_refused(loss, i, x, "aten::index.Tensor", "argument 'indices'");
}

/* x[:, i] on a 2-d x: a None entry before the index keeps its slot. */
Test(index_version, index_with_a_none_entry_refuses_its_modified_index)
{
    tj_tensor *x = leaf(2, (int64_t[]){2, 4}, (double[]){1, 2, 3, 4, 5, 6, 7, 8}), *i = index2();
    tj_tensor *loss = tj_sum(tj_exp(tj_index(x, (tj_tensor *[]){NULL, i}, 2)), -1);
    expect_refused(loss, i, x, "aten::index.Tensor", "argument 'indices'");
}

/* Indices written before the call are saved at their new version and
 * accepted (reference: PyTorch, x = arange(1, 9).view(2, 4), i.add_(0)). */
Test(index_version, indices_written_before_the_call_are_accepted)
{
    tj_tensor *x = leaf(2, (int64_t[]){2, 4}, (double[]){1, 2, 3, 4, 5, 6, 7, 8}), *i = index2();
    cr_assert_not_null(tj_add_scalar_(i, tj_v_int(0), tj_v_int(1)));
    cr_assert_eq(tj_backward(tj_sum(tj_exp(tj_index(x, (tj_tensor *[]){NULL, i}, 2)), -1), NULL), TJ_OK, "%s",
                 tj_last_error());
    double want[8] = {2.718281828459045, 0, 20.085536923187668, 0, 148.4131591025766, 0, 1096.6331584284585, 0};
    test_expect_close(tj_tensor_grad(x), want, 8, 1e-15, 0);
}

Test(index_version, index_put_refuses_indices_modified_in_place)
{
    tj_tensor *x = x4(), *i = index2(), *v = leaf(1, (int64_t[]){2}, (double[]){5, 6});
    tj_tensor *loss = tj_sum(tj_exp(tj_index_put(x, &i, 1, v, false)), -1);
    expect_refused(loss, i, x, "aten::index_put", "argument 'indices'");
    cr_expect_null(tj_tensor_grad(v));
}

/* The index of the others is one saved argument (already checked). */
Test(index_version, gather_index_select_index_add_and_scatter_add_refuse_modified_indices)
{
    tj_tensor *x = x4(), *i = index2();
    expect_refused(tj_sum(tj_exp(tj_gather(x, 0, i)), -1), i, x, "aten::gather", "argument 'index'");
    x = x4(), i = index2();
    expect_refused(tj_sum(tj_exp(tj_index_select(x, 0, i)), -1), i, x, "aten::index_select", "argument 'index'");
    tj_tensor *src = leaf(1, (int64_t[]){2}, (double[]){5, 6});
    x = x4(), i = index2();
    expect_refused(tj_sum(tj_exp(tj_index_add(tj_mul_scalar(x, tj_v_int(1)), 0, i, src, tj_v_int(1))), -1), i, x,
                   "aten::index_add", "argument 'index'");
    x = x4(), i = index2();
    tj_tensor *base = test_f64(1, (int64_t[]){4}, (double[]){0, 0, 0, 0});
    expect_refused(tj_sum(tj_exp(tj_scatter_add(base, 0, i, x)), -1), i, x, "aten::scatter_add", "argument 'index'");
}

Test(index_version, embedding_and_nll_loss_refuse_modified_indices)
{
    tj_tensor *w = leaf(2, (int64_t[]){4, 1}, (double[]){1, 2, 3, 4}), *i = index2();
    expect_refused(tj_sum(tj_exp(tj_embedding(w, i, -1)), -1), i, w, "aten::embedding", "argument 'indices'");
    tj_tensor *logits = leaf(2, (int64_t[]){2, 4}, (double[]){1, 2, 3, 4, 5, 6, 7, 8});
    i = index2();
    expect_refused(tj_nll_loss(logits, i, NULL, 1, -100), i, logits, "aten::nll_loss_forward", "argument 'target'");
}

/* Indices returned by the forward (max_pool2d's, sort's) are saved results. */
Test(index_version, returned_indices_modified_in_place_are_refused)
{
    tj_tensor *x = leaf(4, (int64_t[]){1, 1, 2, 2}, (double[]){1, 4, 3, 2}), *out, *idx;
    cr_assert_eq(tj_max_pool2d_with_indices(x, (int64_t[]){1, 2}, NULL, (int64_t[]){0, 0}, (int64_t[]){1, 1}, false,
                                            &out, &idx), TJ_OK, "%s", tj_last_error());
    expect_refused(tj_sum(out, -1), idx, x, "aten::max_pool2d_with_indices", "return 1");
    x = x4();
    cr_assert_eq(tj_sort(x, 0, true, &out, &idx), TJ_OK, "%s", tj_last_error());
    expect_refused(tj_sum(tj_exp(out), -1), idx, x, "aten::sort", "return 1");
}
