/* aten::grid_sampler_2d and aten::grid_sampler_2d_backward: argument
 * checks as PyTorch 1.13's GridSampler.cpp (check_grid_sampler_common,
 * check_grid_sampler_2d), glue to kernels/grid_sample.h. Bilinear and
 * nearest modes; bicubic is refused. */
#include <string.h>

#include "contig.h"
#include "iter.h"
#include "kernels/grid_sample.h"
#include "op_backward.h"
#include "op_nn.h"

/* Checks input [N, C, H, W] and grid [N, OH, OW, 2] and the modes
 * (args[at], args[at + 1], args[at + 2]) and fills g. */
static tj_status grid_parse(const char *op, const tj_tensor *in, const tj_tensor *grid, const tj_value *modes,
                            tj_k_grid_sample *g)
{
    char a[96], b[96];
    tj_shape_str(in->ndim, in->shape, a, sizeof a);
    tj_shape_str(grid->ndim, grid->shape, b, sizeof b);
    if (in->dtype != grid->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: expected input and grid to have same dtype, but input has %s and grid has %s",
                        op, tj_dtype_name(in->dtype), tj_dtype_name(grid->dtype));
    if (!tj_dtype_is_float(in->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: expected float32 or float64 input, got %s", op, tj_dtype_name(in->dtype));
    if (in->ndim != 4 || grid->ndim != 4)
        return tj_error(TJ_ERR_SHAPE,
                        "%s: expected 4D input and grid with same number of dimensions, but got input with sizes %s "
                        "and grid with sizes %s",
                        op, a, b);
    if (in->shape[0] != grid->shape[0])
        return tj_error(TJ_ERR_SHAPE,
                        "%s: expected grid and input to have same batch size, but got input with sizes %s and grid "
                        "with sizes %s",
                        op, a, b);
    if (grid->shape[3] != 2)
        return tj_error(TJ_ERR_SHAPE, "%s: expected grid to have size 2 in last dimension, but got grid with sizes %s",
                        op, b);
    for (int i = 2; i < 4; i++)
        if (in->shape[i] == 0)
            return tj_error(TJ_ERR_SHAPE,
                            "%s: expected input to have non-empty spatial dimensions, but input has sizes %s with "
                            "dimension %d being empty",
                            op, a, i);
    int64_t mode = modes[0].u.i, padding = modes[1].u.i;
    if (mode == 2)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: bicubic interpolation (interpolation_mode 2) is not supported", op);
    if (mode < 0 || mode > 1)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: interpolation_mode must be 0 (bilinear) or 1 (nearest), got %lld",
                        op, (long long)mode);
    if (padding < 0 || padding > 2)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "%s: padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), got %lld", op,
                        (long long)padding);
    *g = (tj_k_grid_sample){.n = in->shape[0], .c = in->shape[1], .in_h = in->shape[2], .in_w = in->shape[3],
                            .out_h = grid->shape[1], .out_w = grid->shape[2], .mode = (tj_k_grid_mode)mode,
                            .padding = (tj_k_grid_padding)padding, .align_corners = modes[2].u.b};
    g->threads = tj_threads_for(g->n * g->c * g->out_h * g->out_w * 8);
    return TJ_OK;
}

tj_status tj_meta_grid_sampler_2d(const tj_value *args, tj_meta *outs)
{
    tj_k_grid_sample g = {0};
    tj_status st = grid_parse("aten::grid_sampler_2d", args[0].u.t, args[1].u.t, &args[2], &g);
    if (st != TJ_OK) return st;
    tj_meta_set(&outs[0], args[0].u.t->dtype, 4, (const int64_t[]){g.n, g.c, g.out_h, g.out_w});
    return TJ_OK;
}

tj_status tj_kernel_grid_sampler_2d(const tj_value *args, tj_tensor *const *outs)
{
    tj_k_grid_sample g = {0};
    tj_status st = grid_parse("aten::grid_sampler_2d", args[0].u.t, args[1].u.t, &args[2], &g);
    if (st != TJ_OK) return st;
    tj_contig in = {0}, grid = {0};
    if ((st = tj_contig_get(&in, args[0].u.t)) == TJ_OK && (st = tj_contig_get(&grid, args[1].u.t)) == TJ_OK) {
        if (outs[0]->dtype == TJ_FLOAT32)
            tj_k_grid_sample_f32(&g, (const float *)(const void *)in.data, (const float *)(const void *)grid.data,
                                 (float *)(void *)tj_tensor_ptr(outs[0]));
        else
            tj_k_grid_sample_f64(&g, (const double *)(const void *)in.data, (const double *)(const void *)grid.data,
                                 (double *)(void *)tj_tensor_ptr(outs[0]));
    }
    tj_contig_release(&in);
    tj_contig_release(&grid);
    return st;
}

/* grad_output, input, grid, interpolation_mode, padding_mode,
 * align_corners, output_mask */
static tj_status grid_backward_parse(const tj_value *args, tj_k_grid_sample *g)
{
    const char *op = "aten::grid_sampler_2d_backward";
    const tj_tensor *go = args[0].u.t;
    tj_status st = grid_parse(op, args[1].u.t, args[2].u.t, &args[3], g);
    if (st != TJ_OK) return st;
    int64_t want[4] = {g->n, g->c, g->out_h, g->out_w};
    if (go->dtype != args[1].u.t->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: grad_output (%s) and input (%s) must have the same dtype", op,
                        tj_dtype_name(go->dtype), tj_dtype_name(args[1].u.t->dtype));
    if (go->ndim != 4 || memcmp(go->shape, want, sizeof want) != 0) {
        char a[96], b[96];
        return tj_error(TJ_ERR_SHAPE, "%s: grad_output of size %s does not match the output size %s", op,
                        tj_shape_str(go->ndim, go->shape, a, sizeof a), tj_shape_str(4, want, b, sizeof b));
    }
    if (args[6].n != 2)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output_mask must have 2 entries, got %d", op, args[6].n);
    return TJ_OK;
}

tj_status tj_meta_grid_sampler_2d_backward(const tj_value *args, tj_meta *outs)
{
    tj_k_grid_sample g = {0};
    tj_status st = grid_backward_parse(args, &g);
    if (st != TJ_OK) return st;
    /* grad_grid is always defined, as ATen 1.13's CPU kernel gives it
     * whatever output_mask[1] says */
    for (int i = 0; i < 2; i++) tj_meta_like(&outs[i], args[1 + i].u.t);
    outs[0].undefined = !args[6].u.bools[0];
    return TJ_OK;
}

tj_status tj_kernel_grid_sampler_2d_backward(const tj_value *args, tj_tensor *const *outs)
{
    tj_k_grid_sample g = {0};
    tj_status st = grid_backward_parse(args, &g);
    if (st != TJ_OK) return st;
    tj_contig go = {0}, in = {0}, grid = {0};
    if ((st = tj_contig_get(&go, args[0].u.t)) == TJ_OK && (st = tj_contig_get(&in, args[1].u.t)) == TJ_OK &&
        (st = tj_contig_get(&grid, args[2].u.t)) == TJ_OK) {
        void *gi = outs[0] ? tj_tensor_ptr(outs[0]) : NULL, *gg = outs[1] ? tj_tensor_ptr(outs[1]) : NULL;
        if (args[1].u.t->dtype == TJ_FLOAT32)
            tj_k_grid_sample_backward_f32(&g, (const float *)(const void *)go.data, (const float *)(const void *)in.data,
                                          (const float *)(const void *)grid.data, gi, gg);
        else
            tj_k_grid_sample_backward_f64(&g, (const double *)(const void *)go.data,
                                          (const double *)(const void *)in.data,
                                          (const double *)(const void *)grid.data, gi, gg);
    }
    tj_contig_release(&go);
    tj_contig_release(&in);
    tj_contig_release(&grid);
    return st;
}
