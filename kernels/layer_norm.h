/* Layer normalisation over the last n elements of each of m contiguous rows
 * (ATen's native_layer_norm on a contiguous input), forward and backward.
 *
 * Forward: mean, then the biased variance from the deviations (two passes,
 * corrected by the deviations' own sum, accumulated in double), so rows with
 * a large common offset stay accurate and a constant row normalises to
 * exactly 0 before weight and bias. rstd = 1 / sqrt(var + eps).
 * float32 rows use AVX-512 or AVX2, chosen at run time. */
#ifndef TJIT_KERNELS_LAYER_NORM_H
#define TJIT_KERNELS_LAYER_NORM_H

#include <stdint.h>

#include "tjit/core.h"

typedef struct tj_k_layer_norm_shape {
    tj_dtype dtype; /* float32 or float64; every buffer of this dtype */
    int64_t m, n;   /* rows, row length (n >= 1) */
    int nthreads;
} tj_k_layer_norm_shape;

/** y = (x - mean) * rstd * w + b per row; w and b ([n]) may be NULL; mean
 * and rstd receive one value per row. */
void tj_k_layer_norm(const tj_k_layer_norm_shape *s, const void *x, const void *w, const void *b, double eps,
                     void *y, void *mean, void *rstd);

/** Gradients from grad_out g, the input x and the forward's mean and rstd:
 * gx (NULL: not wanted) = rstd * (g*w - mean_n(g*w) - xhat * mean_n(g*w*xhat))
 * with xhat = (x - mean) * rstd and w NULL meaning 1; gw = sum over rows of
 * g * xhat and gb = sum over rows of g (each may be NULL). */
void tj_k_layer_norm_backward(const tj_k_layer_norm_shape *s, const void *g, const void *x, const void *mean,
                              const void *rstd, const void *w, void *gx, void *gw, void *gb);

/* Per-ISA float32 forward over `rows` consecutive rows (layer_norm_isa.h),
 * selected by layer_norm.c; mean and rstd get one value per row. */
void tj_k_layer_norm_rows_f32_avx512(const float *x, float *y, int64_t rows, int64_t n, const float *w,
                                     const float *b, double eps, float *mean, float *rstd);
void tj_k_layer_norm_rows_f32_avx2(const float *x, float *y, int64_t rows, int64_t n, const float *w, const float *b,
                                   double eps, float *mean, float *rstd);

/* Per-ISA float32 backward pieces (layer_norm_backward_isa.h): one row's
 * input gradient, and columns [j0, j0 + c) of the parameter gradients. */
void tj_k_layer_norm_grad_input_f32_avx512(const float *g, const float *x, float m, float r, const float *w,
                                           float *gx, int64_t n);
void tj_k_layer_norm_grad_input_f32_avx2(const float *g, const float *x, float m, float r, const float *w,
                                         float *gx, int64_t n);
void tj_k_layer_norm_grad_params_f32_avx512(const float *g, const float *x, const float *mean, const float *rstd,
                                            int64_t rows, int64_t n, int64_t j0, int64_t c, float *gw, float *gb);
void tj_k_layer_norm_grad_params_f32_avx2(const float *g, const float *x, const float *mean, const float *rstd,
                                          int64_t rows, int64_t n, int64_t j0, int64_t c, float *gw, float *gb);

#endif
