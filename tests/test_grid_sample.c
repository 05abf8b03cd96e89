/* grid_sampler_2d and grid_sampler_2d_backward (F.grid_sample): values
 * against PyTorch 1.13 for a hand-checkable grid, the errors (PyTorch's
 * messages, naming the sizes), make_fx in real and fake mode with and
 * without the core table (primitives), replay, and the gradients through
 * autograd. Gradients are gradchecked in test_gradcheck.c; every mode's
 * float32 / float64 values and gradients are conformance cases
 * (make_cases_vision.py).
 *
 * Reference: x = torch.arange(12.).view(1, 1, 3, 4); grid below;
 *     F.grid_sample(x, grid, mode, padding_mode, align_corners)
 * with align_corners=True, grid x = -1 + 2 * col / 3, y = -1 + 2 * row / 2
 * lands on element (row, col) exactly; (0, 0) is the centre (1.5, 1) ->
 * 5.5 bilinear, and nearest rounds x = 1.5 to 2 (halves to even): 6. */
#include <criterion/criterion.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(grid_sample, .init = test_scope_open, .fini = test_scope_close);

#define SHAPE(...) (const int64_t[]){__VA_ARGS__}

static tj_tensor *image(void)
{
    double v[12];
    for (int i = 0; i < 12; i++) v[i] = i;
    return test_f64(4, SHAPE(1, 1, 3, 4), v);
}

/* four points: element (2, 3), the centre, element (0, 1), and one past
 * the right edge (x = 2: zeros padding gives 0, border the last column) */
static tj_tensor *grid4(void)
{
    return test_f64(4, SHAPE(1, 1, 4, 2), (const double[]){1, 1, 0, 0, -1.0 / 3, -1, 2, 0});
}

Test(grid_sample, bilinear_and_nearest_sample_the_expected_elements)
{
    test_expect_close(tj_grid_sampler_2d(image(), grid4(), 0, 0, true), (const double[]){11, 5.5, 1, 0}, 4, 1e-15,
                      1e-15);
    test_expect_close(tj_grid_sampler_2d(image(), grid4(), 0, 1, true), (const double[]){11, 5.5, 1, 7}, 4, 1e-15,
                      1e-15);
    test_expect_close(tj_grid_sampler_2d(image(), grid4(), 1, 0, true), (const double[]){11, 6, 1, 0}, 4, 0, 0);
    /* reflection: x = 2 reflects to 3 - (4.5 - 3) = 1.5 */
    test_expect_close(tj_grid_sampler_2d(image(), grid4(), 0, 2, true), (const double[]){11, 5.5, 1, 5.5}, 4, 1e-15,
                      1e-15);
}

Test(grid_sample, errors_name_the_operator_and_sizes)
{
    tj_tensor *x = image(), *g = grid4();
    test_expect_error(tj_grid_sampler_2d(x, tj_to_copy(g, TJ_FLOAT32), 0, 0, false), TJ_ERR_DTYPE,
                      "aten::grid_sampler_2d", "input has float64 and grid has float32");
    test_expect_error(tj_grid_sampler_2d(x, tj_narrow(g, 3, 0, 1), 0, 0, false), TJ_ERR_SHAPE,
                      "aten::grid_sampler_2d", "size 2 in last dimension, but got grid with sizes [1, 1, 4, 1]");
    test_expect_error(tj_grid_sampler_2d(x, tj_cat((tj_tensor *[]){g, g}, 2, 0), 0, 0, false), TJ_ERR_SHAPE,
                      "aten::grid_sampler_2d", "same batch size");
    test_expect_error(tj_grid_sampler_2d(tj_narrow(x, 3, 0, 0), g, 0, 0, false), TJ_ERR_SHAPE,
                      "aten::grid_sampler_2d", "dimension 3 being empty");
    test_expect_error(tj_grid_sampler_2d(x, g, 2, 0, false), TJ_ERR_UNSUPPORTED, "aten::grid_sampler_2d", "bicubic");
    test_expect_error(tj_grid_sampler_2d(x, g, 0, 3, false), TJ_ERR_INVALID_ARGUMENT, "aten::grid_sampler_2d",
                      "padding_mode");
    tj_tensor *gi, *gg;
    cr_expect_eq(tj_grid_sampler_2d_backward(tj_zeros(SHAPE(1, 1, 4, 2), 4, TJ_FLOAT64), x, g, 0, 0, false,
                                             (const bool[]){true, true}, &gi, &gg),
                 TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "grad_output of size [1, 1, 4, 2]"), "%s", tj_last_error());
}

static tj_status fn_sample(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_grid_sampler_2d(in[0], in[1], 0, 2, false);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* The gradients of <w, grid_sample(x, grid)> for x and grid. */
static tj_status fn_sample_grads(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor *y[1];
    int one;
    tj_status st = fn_sample(ctx, in, n, y, &one);
    if (st != TJ_OK) return st;
    tj_tensor *s = tj_sum(tj_mul(y[0], in[2]), -1);
    *n_out = 2;
    return s ? tj_autograd_grad(&s, 1, NULL, (tj_tensor *[]){in[0], in[1]}, 2, out) : tj_last_status();
}

Test(grid_sample, samples_and_gradients_trace_and_replay)
{
    tj_tensor *x = test_random_f32(4, SHAPE(2, 3, 5, 6), 1), *g = test_random_f32(4, SHAPE(2, 4, 3, 2), 2);
    tj_tensor *in[2] = {x, tj_mul_scalar(g, tj_v_float(1.3))};
    test_expect_traced(fn_sample, in, 2, 1, (const char *[]){"aten.grid_sampler_2d.default"}, 1, NULL, 0);
    tj_tensor_set_requires_grad(in[0], true);
    tj_tensor_set_requires_grad(in[1], true);
    tj_tensor *gin[3] = {in[0], in[1], test_random_f32(4, SHAPE(2, 3, 4, 3), 3)};
    test_expect_traced(fn_sample_grads, gin, 3, 2, (const char *[]){"aten.grid_sampler_2d_backward.default"}, 1,
                       NULL, 0);
}
