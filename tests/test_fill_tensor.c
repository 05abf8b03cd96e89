/* aten::fill.Tensor / fill_.Tensor, what `y[:, 1] = 7` records in PyTorch
 * 1.13 (the 7 a 0-dim tensor): values converted to self's dtype through a
 * strided view, the rank error, the gradient (value gets the sum), and a
 * trace functionalised, decomposed and replayed equal to eager. */
#include <criterion/criterion.h>
#include <string.h>

#include "test_util.h"
#include "tjit/autograd.h"
#include "tjit/decomp.h"
#include "tjit/graph.h"
#include "tjit/inplace.h"
#include "tjit/plan.h"

TestSuite(fill_tensor, .init = test_scope_open, .fini = test_scope_close);

Test(fill_tensor, a_column_of_a_float32_and_a_float16_tensor)
{
    tj_tensor *y = tj_zeros((int64_t[]){3, 4}, 2, TJ_FLOAT32);
    tj_tensor *seven = tj_scalar_tensor(tj_v_int(7), TJ_INT64);
    cr_assert_not_null(tj_fill_tensor_(tj_select(y, 1, 1), seven), "%s", tj_last_error());
    test_expect_close(y, (double[]){0, 7, 0, 0, 0, 7, 0, 0, 0, 7, 0, 0}, 12, 0, 0);
    tj_tensor *h = tj_fill_tensor(tj_zeros((int64_t[]){2}, 1, TJ_FLOAT16), tj_scalar_tensor(tj_v_float(0.1), TJ_FLOAT64));
    cr_assert_not_null(h, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_dtype(h), TJ_FLOAT16);
    cr_expect_eq(((uint16_t *)tj_tensor_data(h))[1], 0x2e66); /* torch: 0.1 as float16 */
    cr_expect_null(tj_fill_tensor_(y, test_f32(1, (int64_t[]){1}, (float[]){1.0f})));
    cr_expect(strstr(tj_last_error(), "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions"),
              "%s", tj_last_error());
}

/* torch: FillBackward1 gives value grad.sum() */
Test(fill_tensor, the_value_gets_the_gradients_sum)
{
    tj_tensor *v = tj_scalar_tensor(tj_v_float(2.0), TJ_FLOAT32);
    cr_assert_eq(tj_tensor_set_requires_grad(v, true), TJ_OK);
    tj_tensor *x = test_f32(1, (int64_t[]){3}, (float[]){1, 2, 3});
    tj_tensor *y = tj_mul(tj_fill_tensor(x, v), test_f32(1, (int64_t[]){3}, (float[]){0.5f, 1.5f, -4.0f}));
    tj_tensor *g = NULL;
    cr_assert_eq(tj_autograd_grad(&(tj_tensor *){tj_sum(y, TJ_DTYPE_NONE)}, 1, NULL, &v, 1, &g), TJ_OK, "%s",
                 tj_last_error());
    test_expect_close(g, (double[]){-2.0}, 1, 0, 0);
}

static tj_status assign_column(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_clone(in[0]);
    tj_fill_tensor_(tj_select(y, 1, 1), tj_scalar_tensor(tj_v_float(7.5), TJ_FLOAT64));
    out[0] = tj_mul(y, in[0]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fill_tensor, traced_functionalised_decomposed_and_replayed)
{
    tj_tensor *x = test_random_f32(2, (int64_t[]){3, 4}, 3);
    tj_tensor *want;
    int nw;
    cr_assert_eq(assign_column(NULL, &x, 1, &want, &nw), TJ_OK, "%s", tj_last_error());
    tj_decomp_table *core = tj_core_decompositions();
    for (int decompose = 0; decompose < 2; decompose++) {
        tj_graph *g = tj_make_fx(assign_column, NULL, &x, 1, decompose ? core : NULL, TJ_TRACE_FAKE);
        cr_assert_not_null(g, "%s", tj_last_error());
        cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::fill_.Tensor")), decompose ? 0 : 1);
        tj_pass_functionalize(g);
        tj_plan *p = tj_compile(g, NULL);
        cr_assert_not_null(p, "%s", tj_last_error());
        tj_tensor *got = NULL;
        cr_assert_eq(tj_plan_run(p, &x, 1, &got), TJ_OK, "%s", tj_last_error());
        cr_expect_arr_eq(tj_tensor_data(got), tj_tensor_data(want), 12 * sizeof(float));
        tj_tensor_release(got);
        tj_plan_free(p);
        tj_graph_free(g);
    }
    tj_decomp_table_free(core);
}
