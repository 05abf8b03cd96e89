/* 3-D convolution kernels over contiguous buffers: vol2col (im2col over a
 * volume) + one OpenBLAS GEMM per (sample, group).
 *
 * The same three operations as the 2-D kernels (conv.h), between an "image"
 * [N, G*C, D, H, W] and a "matrix side" [N, G*R, P] (P = out_d*out_h*out_w
 * positions) through a weight [G][R][K], K = C*kd*kh*kw:
 *   unfold_mm    mat = W · vol2col(img)          conv forward, transposed-conv grad_input
 *   mm_fold      img = col2vol(Wᵀ · mat)         conv grad_input, transposed-conv forward
 *   weight_grad  gW = Σ_n mat · vol2col(img)ᵀ    grad_weight of both
 * The samples run one after another on the calling thread; OpenBLAS
 * threads each product itself (3-D products are large: K runs to thousands). */
#ifndef TJIT_KERNELS_CONV3D_H
#define TJIT_KERNELS_CONV3D_H

#include <stddef.h>
#include <stdint.h>

#include "tjit/core.h"

/** One group of one volume: `channels` volumes of size[0..2] (d, h, w), a
 * kernel[0..2] kernel moved with the given stride, zero padding and
 * dilation over an out[0..2] grid of positions. */
typedef struct tj_k_vol2col_geom {
    int64_t channels;
    int64_t size[3], kernel[3], stride[3], padding[3], dilation[3], out[3];
} tj_k_vol2col_geom;

typedef struct tj_k_conv3d {
    tj_k_vol2col_geom geom;
    int64_t batch, groups;
    int64_t mat_channels; /**< R: matrix-side channels per group */
} tj_k_conv3d;

/** Scratch bytes the three operations need (one column matrix K x P). */
size_t tj_k_conv3d_work_bytes(const tj_k_conv3d *cv, tj_dtype dt);

/** Unfolds the contiguous volume img [channels, d, h, w] into col [K, P]:
 * row ((c*kd + a)*kh + i)*kw + j, column (z*out_h + y)*out_w + x holds the
 * element under tap (a, i, j) at position (z, y, x), 0 in the padding. */
void tj_k_vol2col_f32(const tj_k_vol2col_geom *g, const float *img, float *col);
void tj_k_vol2col_f64(const tj_k_vol2col_geom *g, const double *img, double *col);
/** The adjoint of vol2col: adds every entry of col into the img element it
 * was read from; entries in the padding are dropped. */
void tj_k_col2vol_f32(const tj_k_vol2col_geom *g, const float *col, float *img);
void tj_k_col2vol_f64(const tj_k_vol2col_geom *g, const double *col, double *img);

/** mat = W·vol2col(img) (+ bias[g*R + r] on matrix-side channel r of group
 * g; bias may be NULL); mat is overwritten. */
void tj_k_conv3d_unfold_mm_f32(const tj_k_conv3d *cv, const float *img, const float *w, const float *bias,
                               float *mat, void *work);
void tj_k_conv3d_unfold_mm_f64(const tj_k_conv3d *cv, const double *img, const double *w, const double *bias,
                               double *mat, void *work);
/** img = col2vol(Wᵀ·mat) (+ bias[g*C + c] on image channel c of group g;
 * bias may be NULL); img is overwritten. */
void tj_k_conv3d_mm_fold_f32(const tj_k_conv3d *cv, const float *mat, const float *w, const float *bias, float *img,
                             void *work);
void tj_k_conv3d_mm_fold_f64(const tj_k_conv3d *cv, const double *mat, const double *w, const double *bias,
                             double *img, void *work);
/** gw[g] = Σ_n mat[n, g]·vol2col(img[n, g])ᵀ; gw is overwritten. */
void tj_k_conv3d_weight_grad_f32(const tj_k_conv3d *cv, const float *img, const float *mat, float *gw, void *work);
void tj_k_conv3d_weight_grad_f64(const tj_k_conv3d *cv, const double *img, const double *mat, double *gw,
                                 void *work);

#endif
