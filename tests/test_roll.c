/* roll: values against PyTorch 1.13 (several dims, a dim listed twice, no
 * dims on a contiguous and on a transposed self, strided int64 and bool
 * input, the extreme int64 shifts), the empty and 0-dim cases, errors
 * (each naming the operator and the offending values), the gradient (the
 * gradient rolled back), make_fx in real and fake mode with and without the
 * core table, replay, and large strided inputs on two threads against the
 * definition. The decomposition is verified against the kernel by
 * test_decomps.c (samples in tools/decomp_samples.c).
 *
 * Reference values: PyTorch 1.13, printed with
 * ", ".join(repr(v) for v in r.flatten().tolist()), for
 *     x = torch.arange(1., 25.).reshape(2, 3, 4)
 *     torch.roll(x, [1, -2], [0, 2]); torch.roll(x, 5); torch.roll(x.transpose(0, 2), -7)
 *     torch.roll(x.transpose(1, 2), [1], [1]); torch.roll(x, [1, 2], [2, 2])
 *     b = (torch.arange(12) * 5 % 7 - 3).reshape(4, 3); torch.roll(b.t(), [-1, 5], [1, 0])
 *     torch.roll(torch.tensor([True, False, False, True, False]), [2])
 *     torch.roll(x, [-2**63], [2]); torch.roll(x, [2**63 - 1])
 *     xg = torch.arange(1., 25., dtype=torch.float64).reshape(2, 3, 4).requires_grad_()
 *     g = torch.arange(24., dtype=torch.float64).reshape(2, 3, 4) ** 2
 *     torch.roll(xg, [1, -1], [2, 0]).backward(g)          (then xg.grad, reset)
 *     torch.roll(xg, [-2**63, 7], [1, 1]).backward(g); torch.roll(xg, [-5]).backward(g) */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(roll, .init = test_scope_open, .fini = test_scope_close);

#define SHAPE(...) (const int64_t[]){__VA_ARGS__}
#define VALUES(...) (const double[]){__VA_ARGS__}

/* x = 1..24 as dt, shape [2, 3, 4]. */
static tj_tensor *x234(tj_dtype dt)
{
    tj_tensor *t = tj_tensor_empty(dt, 3, SHAPE(2, 3, 4));
    cr_assert_not_null(t, "%s", tj_last_error());
    for (int64_t i = 0; i < 24; i++) tj_store_f64(tj_tensor_ptr(t) + (size_t)i * tj_dtype_size(dt), dt, (double)(i + 1));
    return t;
}

static void expect_values(const tj_tensor *t, tj_dtype dt, int ndim, const int64_t *shape, const double *want)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_expect(tj_tensor_is_contiguous(t), "the result is not contiguous");
    int64_t n = test_assert_dtype_shape(t, dt, ndim, shape);
    test_expect_close(t, want, n, 0, 0);
}

Test(roll, rolls_along_each_listed_dim_as_pytorch)
{
    tj_tensor *x = x234(TJ_FLOAT32);
    expect_values(tj_roll(x, SHAPE(1, -2), 2, SHAPE(0, 2), 2), TJ_FLOAT32, 3, SHAPE(2, 3, 4),
                  VALUES(15, 16, 13, 14, 19, 20, 17, 18, 23, 24, 21, 22, 3, 4, 1, 2, 7, 8, 5, 6, 11, 12, 9, 10));
    /* a dim listed twice rolls by the sum */
    expect_values(tj_roll(x, SHAPE(1, 2), 2, SHAPE(2, 2), 2), TJ_FLOAT32, 3, SHAPE(2, 3, 4),
                  VALUES(2, 3, 4, 1, 6, 7, 8, 5, 10, 11, 12, 9, 14, 15, 16, 13, 18, 19, 20, 17, 22, 23, 24, 21));
    expect_values(tj_roll(tj_transpose(x, 1, 2), SHAPE(1), 1, SHAPE(1), 1), TJ_FLOAT32, 3, SHAPE(2, 4, 3),
                  VALUES(4, 8, 12, 1, 5, 9, 2, 6, 10, 3, 7, 11, 16, 20, 24, 13, 17, 21, 14, 18, 22, 15, 19, 23));
}

Test(roll, without_dims_rolls_the_flattened_self_as_pytorch)
{
    tj_tensor *x = x234(TJ_FLOAT32);
    expect_values(tj_roll(x, SHAPE(5), 1, NULL, 0), TJ_FLOAT32, 3, SHAPE(2, 3, 4),
                  VALUES(20, 21, 22, 23, 24, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19));
    /* a transposed self is read in its logical order, box by box */
    expect_values(tj_roll(tj_transpose(x, 0, 2), SHAPE(-7), 1, NULL, 0), TJ_FLOAT32, 3, SHAPE(4, 3, 2),
                  VALUES(14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23, 4, 16, 8, 20, 12, 24, 1, 13, 5, 17, 9, 21, 2));
}

Test(roll, reads_strided_int64_and_bool_selves_and_takes_extreme_shifts)
{
    static const int64_t b[12] = {-3, 2, 0, -2, 3, 1, -1, -3, 2, 0, -2, 3}; /* (arange(12) * 5 % 7 - 3) */
    tj_tensor *bt = tj_transpose(test_i64(2, SHAPE(4, 3), b), 0, 1);
    expect_values(tj_roll(bt, SHAPE(-1, 5), 2, SHAPE(1, 0), 2), TJ_INT64, 2, SHAPE(3, 4),
                  VALUES(3, -3, -2, 2, 1, 2, 3, 0, -2, -1, 0, -3));
    tj_tensor *m = tj_ne_scalar(test_f32(1, SHAPE(5), (const float[]){1, 0, 0, 1, 0}), tj_v_int(0));
    expect_values(tj_roll(m, SHAPE(2), 1, NULL, 0), TJ_BOOL, 1, SHAPE(5), VALUES(1, 0, 1, 0, 0));
    tj_tensor *x = x234(TJ_FLOAT64);
    double count[24];
    for (int i = 0; i < 24; i++) count[i] = i + 1;
    expect_values(tj_roll(x, SHAPE(INT64_MIN), 1, SHAPE(2), 1), TJ_FLOAT64, 3, SHAPE(2, 3, 4), count);
    expect_values(tj_roll(x, SHAPE(INT64_MAX), 1, NULL, 0), TJ_FLOAT64, 3, SHAPE(2, 3, 4),
                  VALUES(18, 19, 20, 21, 22, 23, 24, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17));
}

Test(roll, an_empty_self_gives_an_empty_copy_and_a_0dim_self_rolls_to_itself)
{
    tj_tensor *e = tj_zeros(SHAPE(0, 3), 2, TJ_FLOAT32);
    tj_tensor *r = tj_roll(e, SHAPE(1), 1, SHAPE(5), 1); /* ATen checks no dim of an empty self */
    cr_assert_not_null(r, "%s", tj_last_error());
    test_assert_dtype_shape(r, TJ_FLOAT32, 2, SHAPE(0, 3));
    tj_tensor *s = test_f64(0, NULL, (const double[]){2.5});
    expect_values(tj_roll(s, SHAPE(3), 1, NULL, 0), TJ_FLOAT64, 0, NULL, VALUES(2.5));
}

Test(roll, errors_name_the_operator_and_the_offending_values)
{
    tj_tensor *x = x234(TJ_FLOAT32);
    test_expect_error(tj_roll(x, NULL, 0, NULL, 0), TJ_ERR_INVALID_ARGUMENT, "aten::roll", "`shifts` required");
    test_expect_error(tj_roll(x, SHAPE(1, 2), 2, NULL, 0), TJ_ERR_INVALID_ARGUMENT, "aten::roll",
                      "shifts and dimensions must align. shifts: 2, dims: 0");
    test_expect_error(tj_roll(x, SHAPE(1, 2), 2, SHAPE(0), 1), TJ_ERR_INVALID_ARGUMENT, "aten::roll",
                      "shifts: 2, dims: 1");
    test_expect_error(tj_roll(x, SHAPE(1, 1, 1, 1, 1, 1, 1, 1, 1), 9, SHAPE(0, 0, 0, 0, 0, 0, 0, 0, 0), 9),
                      TJ_ERR_INVALID_ARGUMENT, "aten::roll", "9 shifts, more than the maximum rank 8");
    test_expect_error(tj_roll(x, SHAPE(1, 1), 2, SHAPE(0, 3), 2), TJ_ERR_INDEX, "aten::roll",
                      "dim 3 is out of range for a tensor of rank 3");
    test_expect_error(tj_roll(x, SHAPE(1), 1, SHAPE(-4), 1), TJ_ERR_INDEX, "aten::roll", "dim -4 is out of range");
    test_expect_error(tj_roll(test_f32(0, NULL, (const float[]){1}), SHAPE(1), 1, SHAPE(0), 1), TJ_ERR_INDEX,
                      "aten::roll", "dim 0 given for a 0-dim tensor");
}

/* out[i] = self[(i - shift) mod size] along each rolled dim, element by
 * element from the definition. */
static void expect_rolled(const tj_tensor *self, int64_t shift0, int64_t shift1)
{
    tj_tensor *y = tj_roll((tj_tensor *)self, (const int64_t[]){shift0, shift1}, 2, SHAPE(0, 1), 2);
    cr_assert_not_null(y, "%s", tj_last_error());
    int64_t rows = tj_tensor_shape(self)[0], cols = tj_tensor_shape(self)[1], bad = 0;
    int64_t r0 = ((shift0 % rows) + rows) % rows, r1 = ((shift1 % cols) + cols) % cols;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            int64_t si = (i - r0 + rows) % rows, sj = (j - r1 + cols) % cols;
            bad += tj_tensor_item_at(y, i * cols + j) != tj_tensor_item_at(self, si * cols + sj);
        }
    cr_expect_eq(bad, 0, "%lld of %lld elements wrong (shifts %lld, %lld)", (long long)bad,
                 (long long)(rows * cols), (long long)shift0, (long long)shift1);
}

/* Large enough for the copies to split over threads; the transposed self
 * takes the strided copy's tiled path. */
Test(roll, large_strided_selves_roll_exactly_on_two_threads)
{
    tj_set_num_threads(2);
    tj_tensor *x = tj_transpose(test_random_f32(2, SHAPE(700, 900), 7), 0, 1);
    expect_rolled(x, 301, -650);
    expect_rolled(x, -1, 1);
    expect_rolled(tj_contiguous(x), 899, 699);
}

Test(roll, backward_rolls_the_gradient_back_as_pytorch)
{
    double g[24];
    for (int i = 0; i < 24; i++) g[i] = (double)i * i;
    tj_tensor *gy = test_f64(3, SHAPE(2, 3, 4), g);
    tj_tensor *x = x234(TJ_FLOAT64);
    tj_tensor_set_requires_grad(x, true);
    expect_values(test_grad1(x, tj_roll(x, SHAPE(1, -1), 2, SHAPE(2, 0), 2), gy), TJ_FLOAT64, 3, SHAPE(2, 3, 4),
                  VALUES(169, 196, 225, 144, 289, 324, 361, 256, 441, 484, 529, 400, 1, 4, 9, 0, 25, 36, 49, 16, 81,
                         100, 121, 64));
    /* INT64_MIN has no negation: reduced modulo the dim first */
    expect_values(test_grad1(x, tj_roll(x, SHAPE(INT64_MIN, 7), 2, SHAPE(1, 1), 2), gy), TJ_FLOAT64, 3,
                  SHAPE(2, 3, 4),
                  VALUES(64, 81, 100, 121, 0, 1, 4, 9, 16, 25, 36, 49, 400, 441, 484, 529, 144, 169, 196, 225, 256,
                         289, 324, 361));
    expect_values(test_grad1(x, tj_roll(x, SHAPE(-5), 1, NULL, 0), gy), TJ_FLOAT64, 3, SHAPE(2, 3, 4),
                  VALUES(361, 400, 441, 484, 529, 0, 1, 4, 9, 16, 25, 36, 49, 64, 81, 100, 121, 144, 169, 196, 225,
                         256, 289, 324));
}

/* ---- tracing and replay ---- */

static tj_status rolled(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    out[0] = ctx ? tj_roll(in[0], SHAPE(7), 1, NULL, 0) : tj_roll(in[0], SHAPE(1, -2), 2, SHAPE(0, 2), 2);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* Without a table roll is recorded once, printed as make_fx prints it; under
 * the core table the graph holds slices and cats (primitives only); both
 * replay to eager's values, in real and in fake mode. */
Test(roll, traces_real_and_fake_prints_as_make_fx_and_replays_as_eager)
{
    tj_tensor *x = tj_transpose(x234(TJ_FLOAT32), 1, 2);
    tj_decomp_table *core = tj_core_decompositions();
    for (int flat = 0; flat < 2; flat++) {
        void *ctx = flat ? x : NULL;
        tj_tensor *eager[1];
        int n_out;
        cr_assert_eq(rolled(ctx, &x, 1, eager, &n_out), TJ_OK, "%s", tj_last_error());
        for (int mode = 0; mode < 2; mode++) {
            tj_graph *g = tj_make_fx(rolled, ctx, &x, 1, NULL, mode ? TJ_TRACE_FAKE : TJ_TRACE_REAL);
            cr_assert_not_null(g, "%s", tj_last_error());
            cr_expect_eq(tj_graph_count_op(g, TJ_OPS(roll)), 1);
            char *text = tj_graph_to_string(g);
            /* dims=[] is left out as the default, as make_fx prints it */
            const char *want = flat ? "aten.roll.default(%arg0_1, [7])" : "aten.roll.default(%arg0_1, [1, -2], [0, 2])";
            cr_expect(strstr(text, want), "no '%s' in\n%s", want, text);
            free(text);
            test_expect_same(test_replay1(g, &x, 1), eager[0], "roll");
            tj_graph_free(g);
            tj_graph *d = tj_make_fx(rolled, ctx, &x, 1, core, mode ? TJ_TRACE_FAKE : TJ_TRACE_REAL);
            cr_assert_not_null(d, "%s", tj_last_error());
            cr_expect(test_only_primitives(d), "the decomposed graph keeps a composite");
            cr_expect_eq(tj_graph_count_op(d, TJ_OPS(roll)), 0);
            test_expect_same(test_replay1(d, &x, 1), eager[0], "roll");
            tj_graph_free(d);
        }
    }
    tj_decomp_table_free(core);
}
