/* make_fx graphs read like PyTorch 1.13's: value names (arg0_1, sum_1,
 * abs_1) and the operators torch records without a decomposition table
 * (aten.stack, aten.mse_loss, aten.mse_loss_backward), which replay, carry
 * gradients and lower through the core table.
 *
 * The expected texts are torch 1.13's `make_fx(f)(x, y).code` for the same
 * function written in Python with f(*a) (so its placeholders are arg0_1,
 * arg1_1), rewritten in tjit's text form; the values are torch 1.13's for
 * the same inputs (float32), e.g.
 *     x = torch.tensor([[1.5, -2., 0.25], [3., 0.5, -1.]])
 *     y = torch.tensor([[0.5, 1., 0.25], [-1., 2., 4.]])
 *     torch.add(torch.sum(torch.stack([x, y], 1)), F.mse_loss(x, y))  # 17.875 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

TestSuite(fx_parity, .init = test_scope_open, .fini = test_scope_close);

static const float X[6] = {1.5f, -2.f, 0.25f, 3.f, 0.5f, -1.f};
static const int64_t S23[2] = {2, 3};

/* FX never names a value after a Python builtin: torch prints %sum_1,
 * %max_1, %slice_1 for the first aten.sum, aten.max, aten.slice.Tensor.
 * Graph text with the old names (%arg0, %sum) still reads back as written. */
static tj_status builtins(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *m = tj_max(in[0]);
    tj_tensor *s = tj_sum(tj_slice(in[0], 1, true, 0, true, 2, 1), -1);
    tj_tensor *t = tj_sum(in[0], -1);
    out[0] = tj_add(tj_add(s, t), m);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(fx_parity, values_never_take_python_builtin_names)
{
    tj_tensor *x = test_f32(2, S23, X);
    tj_graph *g = tj_make_fx(builtins, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect_str_eq(text, "graph(%arg0_1 : f32[2, 3]):\n"
                           "    %max_1 = aten.max.default(%arg0_1)\n"
                           "    %slice_1 = aten.slice.Tensor(%arg0_1, 1, 0, 2)\n"
                           "    %sum_1 = aten.sum.default(%slice_1)\n"
                           "    %sum_2 = aten.sum.default(%arg0_1)\n"
                           "    %add = aten.add.Tensor(%sum_1, %sum_2)\n"
                           "    %add_1 = aten.add.Tensor(%add, %max_1)\n"
                           "    return (%add_1,)\n");
    free(text);
    tj_graph_free(g);
    test_expect_round_trip("graph(%arg0 : f32[2, 3]):\n"
                           "    %sum = aten.sum.default(%arg0)\n"
                           "    %sum_1 = aten.sum.default(%sum)\n"
                           "    return (%sum_1,)\n");
}
