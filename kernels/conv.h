/* 2-D convolution kernels over contiguous buffers: im2col + GEMM, split over
 * (sample, group) pairs (tj_k_parallel).
 *
 * A convolution relates an "image" tensor [N, G*C, H, W] (C = geom.channels
 * per group) and a "matrix-side" tensor [N, G*R, P] (P = out_h*out_w
 * positions of the kernel) through a weight [G][R][K], K = C*kh*kw:
 *     mat[n, g] = W[g] · im2col(img[n, g])
 * For a convolution the image is the input and the matrix side the output
 * (R = C_out/G); for a transposed convolution the image is the output and
 * the matrix side the input (R = C_in/G), which is why the three operations
 * below cover the forward and backward passes of both:
 *   unfold_mm    mat = W · im2col(img)           conv forward, transposed-conv grad_input
 *   mm_fold      img = col2im(Wᵀ · mat)          conv grad_input, transposed-conv forward
 *   weight_grad  gW = Σ_n mat · im2col(img)ᵀ     grad_weight of both
 * float32 uses the packed GEMM of conv_gemm.h inside each thread, and for
 * stride 1 skips im2col altogether (conv_implicit.h); float64 runs the
 * samples one after another through OpenBLAS's dgemm. */
#ifndef TJIT_KERNELS_CONV_H
#define TJIT_KERNELS_CONV_H

#include <stddef.h>

#include "im2col.h"
#include "tjit/core.h"

typedef struct tj_k_conv {
    tj_k_im2col_geom geom; /**< one group of one image */
    int64_t batch, groups;
    int64_t mat_channels; /**< R: matrix-side channels per group */
    int threads;          /**< threads for float32 (float64 uses 1) */
} tj_k_conv;

typedef enum tj_k_conv_op { TJ_K_CONV_UNFOLD_MM, TJ_K_CONV_MM_FOLD, TJ_K_CONV_WEIGHT_GRAD } tj_k_conv_op;

/** Threads the kernels use for `cv` in dtype `dt` (at most one per item). */
int tj_k_conv_threads(const tj_k_conv *cv, tj_dtype dt);

/** Scratch bytes that `op` needs for `cv` in dtype `dt` (float32/float64). */
size_t tj_k_conv_work_bytes(const tj_k_conv *cv, tj_dtype dt, tj_k_conv_op op);

/** mat = W·im2col(img) (+ bias[g*R + r] on matrix-side channel r of group g;
 * bias may be NULL). */
void tj_k_conv_unfold_mm_f32(const tj_k_conv *cv, const float *img, const float *w, const float *bias, float *mat,
                             void *work);
void tj_k_conv_unfold_mm_f64(const tj_k_conv *cv, const double *img, const double *w, const double *bias,
                             double *mat, void *work);
/** img = col2im(Wᵀ·mat) (+ bias[g*C + c] on image channel c of group g;
 * bias may be NULL). img is overwritten. */
void tj_k_conv_mm_fold_f32(const tj_k_conv *cv, const float *mat, const float *w, const float *bias, float *img,
                           void *work);
void tj_k_conv_mm_fold_f64(const tj_k_conv *cv, const double *mat, const double *w, const double *bias,
                           double *img, void *work);
/** gw[g] = Σ_n mat[n, g]·im2col(img[n, g])ᵀ; gw is overwritten. */
void tj_k_conv_weight_grad_f32(const tj_k_conv *cv, const float *img, const float *mat, float *gw, void *work);
void tj_k_conv_weight_grad_f64(const tj_k_conv *cv, const double *img, const double *mat, double *gw, void *work);

/** gb[c] = Σ_{n, s} g[n, c, s] over a contiguous [n, c, s] buffer. */
void tj_k_conv_bias_grad_f32(int64_t n, int64_t c, int64_t s, const float *g, float *gb, int threads);
void tj_k_conv_bias_grad_f64(int64_t n, int64_t c, int64_t s, const double *g, double *gb, int threads);

#endif
