/* aten::bitwise_and / bitwise_or / bitwise_xor (.Tensor and .Scalar):
 * values against PyTorch 1.13's (broadcast int64 with all 64 bits, bool,
 * a bool with an int Scalar promoting to int64), the float refusal, and a
 * traced, decomposed and replayed call equal to eager. */
#include <criterion/criterion.h>
#include <string.h>

#include "test_util.h"
#include "tjit/decomp.h"
#include "tjit/graph.h"
#include "tjit/plan.h"

TestSuite(bitwise, .init = test_scope_open, .fini = test_scope_close);

#define BIG (((int64_t)1 << 62) + 7)

static void expect_i64(tj_tensor *t, const int64_t *want, int n)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(t), TJ_INT64);
    cr_assert_eq(tj_tensor_numel(t), n);
    cr_expect_arr_eq(tj_tensor_data(tj_contiguous(t)), want, sizeof(int64_t) * (size_t)n);
}

/* a = [[5, -3, 0, 2**62 + 7]], b = [[3], [-1]]: a & b, a | b, a ^ b */
Test(bitwise, int64_broadcast_as_torch)
{
    tj_tensor *a = test_i64(2, (int64_t[]){1, 4}, (int64_t[]){5, -3, 0, BIG});
    tj_tensor *b = test_i64(2, (int64_t[]){2, 1}, (int64_t[]){3, -1});
    expect_i64(tj_bitwise_and(a, b), (int64_t[]){1, 1, 0, 3, 5, -3, 0, BIG}, 8);
    expect_i64(tj_bitwise_or(a, b), (int64_t[]){7, -1, 3, BIG, -1, -1, -1, -1}, 8);
    expect_i64(tj_bitwise_xor(a, b), (int64_t[]){6, -2, 3, BIG - 3, -6, 2, -1, -BIG - 1}, 8);
    expect_i64(tj_bitwise_and_scalar(a, tj_v_int(6)), (int64_t[]){4, 4, 0, 6}, 4);
    expect_i64(tj_bitwise_or_scalar(a, tj_v_bool(true)), (int64_t[]){5, -3, 1, BIG}, 4);
    expect_i64(tj_bitwise_xor_scalar(a, tj_v_int(-1)), (int64_t[]){-6, 2, -1, -BIG - 1}, 4);
}

Test(bitwise, bool_is_logical_and_an_int_scalar_promotes)
{
    tj_tensor *x = test_tensor(TJ_BOOL, 1, (int64_t[]){3}, (bool[]){true, false, true});
    tj_tensor *y = test_tensor(TJ_BOOL, 1, (int64_t[]){3}, (bool[]){true, true, false});
    const struct {
        tj_tensor *got;
        bool want[3];
    } cases[] = {{tj_bitwise_and(x, y), {true, false, false}},
                 {tj_bitwise_or(x, y), {true, true, true}},
                 {tj_bitwise_xor(x, y), {false, true, true}},
                 {tj_bitwise_xor_scalar(x, tj_v_bool(true)), {false, true, false}}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cr_assert_not_null(cases[i].got, "%s", tj_last_error());
        cr_assert_eq(tj_tensor_dtype(cases[i].got), TJ_BOOL);
        cr_expect_arr_eq(tj_tensor_data(cases[i].got), cases[i].want, sizeof cases[i].want, "case %zu", i);
    }
    expect_i64(tj_bitwise_and_scalar(x, tj_v_int(2)), (int64_t[]){0, 0, 0}, 3); /* torch: int64 */
}

Test(bitwise, floats_are_refused_by_name)
{
    tj_tensor *f = test_f32(1, (int64_t[]){2}, (float[]){1.0f, 2.0f});
    tj_tensor *i = test_i64(1, (int64_t[]){2}, (int64_t[]){1, 2});
    cr_expect_null(tj_bitwise_and(f, f));
    cr_expect_eq(tj_last_status(), TJ_ERR_DTYPE);
    cr_expect(strstr(tj_last_error(), "aten::bitwise_and.Tensor: not implemented for float32 operands"), "%s",
              tj_last_error());
    cr_expect_null(tj_bitwise_or_scalar(i, tj_v_float(1.5)));
    cr_expect(strstr(tj_last_error(), "aten::bitwise_or"), "%s", tj_last_error());
    cr_expect_null(tj_bitwise_xor(i, test_i64(1, (int64_t[]){3}, (int64_t[]){1, 2, 3})));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
}

static tj_status masks(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_bitwise_xor(tj_bitwise_and_scalar(in[0], tj_v_int(12)), tj_bitwise_or(in[0], in[1]));
    out[1] = tj_bitwise_and(tj_gt_scalar(in[0], tj_v_int(0)), tj_bitwise_xor_scalar(tj_lt_scalar(in[1], tj_v_int(5)), tj_v_bool(true)));
    *n_out = 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

/* Traced with and without the core table (the Scalar overloads lower to
 * the Tensor ones), replayed: the eager values, bit for bit. */
Test(bitwise, traced_decomposed_and_replayed)
{
    tj_tensor *in[2] = {test_i64(1, (int64_t[]){5}, (int64_t[]){-7, 0, 13, 255, BIG}),
                        test_i64(1, (int64_t[]){5}, (int64_t[]){3, 9, -1, 4, 6})};
    tj_tensor *want[2];
    int nw;
    cr_assert_eq(masks(NULL, in, 2, want, &nw), TJ_OK, "%s", tj_last_error());
    tj_decomp_table *core = tj_core_decompositions();
    for (int decompose = 0; decompose < 2; decompose++) {
        tj_graph *g = tj_make_fx(masks, NULL, in, 2, decompose ? core : NULL, TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s", tj_last_error());
        if (decompose) cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::bitwise_and.Scalar")), 0);
        tj_plan *p = tj_compile(g, NULL);
        cr_assert_not_null(p, "%s", tj_last_error());
        tj_tensor *got[2] = {NULL, NULL};
        cr_assert_eq(tj_plan_run(p, in, 2, got), TJ_OK, "%s", tj_last_error());
        cr_expect_arr_eq(tj_tensor_data(got[0]), tj_tensor_data(want[0]), 5 * sizeof(int64_t));
        cr_expect_arr_eq(tj_tensor_data(got[1]), tj_tensor_data(want[1]), 5);
        tj_tensor_release(got[0]);
        tj_tensor_release(got[1]);
        tj_plan_free(p);
        tj_graph_free(g);
    }
    tj_decomp_table_free(core);
}
