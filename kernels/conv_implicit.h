/* Stride-1 float32 convolutions without im2col ("implicit GEMM").
 *
 * With stride 1, row k = (c, i, j) of the im2col matrix, read over a "wide"
 * grid of positions q = oy*Wp + ox (Wp the padded width, ox running over the
 * whole padded row), is the padded image itself shifted by
 * off(k) = c*Hp*Wp + i*dh*Wp + j*dw. The GEMM micro-kernel can therefore
 * load B straight from one zero-padded copy of the image (a few KB, in L1)
 * instead of an unfolded matrix K times larger: the columns ox >= out_w of
 * the wide grid are computed and dropped. For small channel counts, where
 * writing im2col costs as much as the GEMM, this halves the time or better.
 *
 * Operations as in conv.h:
 *   unfold_mm    the wide-grid GEMM on the padded image
 *   mm_fold      the same on the padded matrix side with the kernel flipped
 *                and its channel dims swapped (a stride-1 transposed
 *                convolution is a convolution with padding (k-1)*d - p)
 *   weight_grad  Σ over the valid positions of image · grad (the reduction
 *                skips the wide grid's extra columns, so a nan or inf there
 *                cannot leak into the sums) */
#ifndef TJIT_KERNELS_CONV_IMPLICIT_H
#define TJIT_KERNELS_CONV_IMPLICIT_H

#include <stdbool.h>

#include "conv.h"

/** True when `cv` has stride 1 (the implicit path applies). */
bool tj_k_conv_implicit_ok(const tj_k_conv *cv);
/** Scratch bytes for `op` on the implicit path. */
size_t tj_k_conv_implicit_work_bytes(const tj_k_conv *cv, tj_k_conv_op op);

void tj_k_conv_implicit_unfold_mm(const tj_k_conv *cv, const float *img, const float *w, const float *bias,
                                  float *mat, void *work);
void tj_k_conv_implicit_mm_fold(const tj_k_conv *cv, const float *mat, const float *w, const float *bias, float *img,
                                void *work);
void tj_k_conv_implicit_weight_grad(const tj_k_conv *cv, const float *img, const float *mat, float *gw, void *work);

#endif
