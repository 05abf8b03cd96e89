/* 2-D grid sampling (spatial transformer networks, Jaderberg et al. 2015),
 * as PyTorch 1.13's CPU grid_sampler_2d and its backward
 * (aten/src/ATen/native/GridSampler.h): the same unnormalisation, border
 * clipping and reflection, bilinear weights and round-half-even nearest
 * neighbour. */
#ifndef TJIT_KERNELS_GRID_SAMPLE_H
#define TJIT_KERNELS_GRID_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

typedef enum { TJ_K_GRID_BILINEAR = 0, TJ_K_GRID_NEAREST = 1 } tj_k_grid_mode;
typedef enum { TJ_K_GRID_ZEROS = 0, TJ_K_GRID_BORDER = 1, TJ_K_GRID_REFLECTION = 2 } tj_k_grid_padding;

/** Contiguous input [n, c, in_h, in_w], grid [n, out_h, out_w, 2] (x, y in
 * [-1, 1]), output / grad_output [n, c, out_h, out_w]. */
typedef struct tj_k_grid_sample {
    int64_t n, c, in_h, in_w, out_h, out_w;
    tj_k_grid_mode mode;
    tj_k_grid_padding padding;
    bool align_corners;
    int threads;
} tj_k_grid_sample;

void tj_k_grid_sample_f32(const tj_k_grid_sample *g, const float *in, const float *grid, float *out);
void tj_k_grid_sample_f64(const tj_k_grid_sample *g, const double *in, const double *grid, double *out);

/** grad_in [n, c, in_h, in_w] and grad_grid [n, out_h, out_w, 2] (either
 * may be NULL: not computed), both overwritten. */
void tj_k_grid_sample_backward_f32(const tj_k_grid_sample *g, const float *grad_out, const float *in,
                                   const float *grid, float *grad_in, float *grad_grid);
void tj_k_grid_sample_backward_f64(const tj_k_grid_sample *g, const double *grad_out, const double *in,
                                   const double *grid, double *grad_in, double *grad_grid);

#endif
