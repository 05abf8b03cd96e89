/* Session 59's fixes: grid_sampler_2d at nan and infinite grid coordinates
 * (as torch 1.13's CPU kernel: zeros padding gives nan, border and
 * reflection clip to 0), ...
 *
 * Reference values: PyTorch 1.13 (/usr/bin/python3), e.g.
 *     x = torch.arange(12.).view(1, 1, 3, 4)
 *     torch.grid_sampler_2d(x, torch.tensor([[[[nan, 0.]]]]), 0, 1, True)  # 4.
 * make_cases_fixes59.py writes the conformance cases of every mode. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(fixes59, .init = test_scope_open, .fini = test_scope_close);

#define SHAPE(...) (const int64_t[]){__VA_ARGS__}

/* ---- grid_sampler_2d with non-finite coordinates ---- */

static tj_tensor *image12(void)
{
    double v[12];
    for (int i = 0; i < 12; i++) v[i] = i;
    return test_f64(4, SHAPE(1, 1, 3, 4), v);
}

/* (nan, 0), (inf, 0), (0, -inf), (1e30, 0): with align_corners, y = 0 is
 * row 1 and x = 0 column 1.5 */
static tj_tensor *nonfinite_grid(tj_dtype dt)
{
    tj_tensor *g = test_f64(4, SHAPE(1, 1, 4, 2), (const double[]){NAN, 0, INFINITY, 0, 0, -INFINITY, 1e30, 0});
    return tj_to_copy(g, dt);
}

Test(fixes59, grid_sample_zeros_padding_gives_nan_at_nonfinite_coordinates)
{
    for (int dt = 0; dt < 2; dt++) {
        tj_dtype d = dt ? TJ_FLOAT32 : TJ_FLOAT64;
        tj_tensor *x = tj_to_copy(image12(), d), *g = nonfinite_grid(d);
        /* bilinear: the weights are nan; 1e30 lies outside: 0 */
        test_expect_close(tj_grid_sampler_2d(x, g, 0, 0, true), (const double[]){NAN, NAN, NAN, 0}, 4, 0, 0);
        /* nearest samples nothing */
        test_expect_close(tj_grid_sampler_2d(x, g, 1, 0, true), (const double[]){0, 0, 0, 0}, 4, 0, 0);
    }
}

Test(fixes59, grid_sample_border_and_reflection_clip_nonfinite_coordinates)
{
    tj_tensor *x = image12(), *g = nonfinite_grid(TJ_FLOAT64);
    /* border: nan and -inf clip to 0, inf and 1e30 to the last column */
    test_expect_close(tj_grid_sampler_2d(x, g, 0, 1, true), (const double[]){4, 7, 1.5, 7}, 4, 0, 0);
    /* reflection: +-inf reflect to nan, clipped to 0; 1e30 reflects to 0 */
    test_expect_close(tj_grid_sampler_2d(x, g, 0, 2, true), (const double[]){4, 4, 1.5, 4}, 4, 0, 0);
    test_expect_close(tj_grid_sampler_2d(x, g, 1, 2, true), (const double[]){4, 4, 2, 4}, 4, 0, 0);
}

Test(fixes59, grid_sample_backward_at_nan_follows_the_clipped_forward)
{
    /* torch 1.13 crashes here; tjit's gradients are the clipped forward's:
     * the whole grad_output reaches the clipped point's corners, and the
     * clipped coordinate's gradient is 0 */
    tj_tensor *x = image12(), *g = test_f64(4, SHAPE(1, 1, 1, 2), (const double[]){NAN, 0.5});
    tj_tensor *go = test_f64(4, SHAPE(1, 1, 1, 1), (const double[]){2});
    tj_tensor *gi = NULL, *gg = NULL;
    cr_assert_eq(tj_grid_sampler_2d_backward(go, x, g, 0, 1, true, (const bool[]){true, true}, &gi, &gg), TJ_OK,
                 "%s", tj_last_error());
    /* y = 0.5 is row 1.5: half of 2 to (1, 0), half to (2, 0) */
    test_expect_close(gi, (const double[]){0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, 12, 0, 0);
    /* d/dy: (x[2, 0] - x[1, 0]) * 2 * (H - 1) / 2 = 4 * 2 = 8 */
    test_expect_close(gg, (const double[]){0, 8}, 2, 0, 0);
}

static tj_status grid_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    *n_out = 3;
    out[0] = tj_grid_sampler_2d(in[0], in[1], 0, 0, false);
    out[1] = tj_grid_sampler_2d(in[0], in[1], 0, 1, false);
    out[2] = tj_grid_sampler_2d(in[0], in[1], 1, 2, true);
    return out[0] && out[1] && out[2] ? TJ_OK : tj_last_status();
}

Test(fixes59, grid_sample_at_nonfinite_coordinates_traces_and_replays)
{
    const char *want[] = {"aten.grid_sampler_2d.default("};
    test_expect_traced(grid_step, (tj_tensor *[]){image12(), nonfinite_grid(TJ_FLOAT64)}, 2, 3, want, 1, NULL, 0);
}
