/* im2col / col2im: the unfolding of image patches into the columns of a
 * matrix, so that a 2-D convolution becomes a GEMM (Chellapilla et al.,
 * "High Performance Convolutional Neural Networks for Document Processing"). */
#ifndef TJIT_KERNELS_IM2COL_H
#define TJIT_KERNELS_IM2COL_H

#include <stdint.h>

/** Geometry of one unfolding: an image of `channels` planes of height x
 * width, a kh x kw kernel moved with the given stride, zero padding and
 * dilation over an out_h x out_w grid of positions. */
typedef struct tj_k_im2col_geom {
    int64_t channels, height, width;
    int64_t kh, kw;
    int64_t sh, sw, ph, pw, dh, dw;
    int64_t out_h, out_w;
} tj_k_im2col_geom;

/** Unfolds the image (element (c, y, x) at img[c*cs + y*ys + x*xs]) into
 * col: row (c*kh + i)*kw + j, column oy*out_w + ox holds the image element
 * under kernel tap (i, j) at position (oy, ox), 0 where it falls in the
 * padding. Rows are ldcol elements apart. */
void tj_k_im2col_f32(const tj_k_im2col_geom *g, const float *img, int64_t cs, int64_t ys, int64_t xs, float *col,
                     int64_t ldcol);
void tj_k_im2col_f64(const tj_k_im2col_geom *g, const double *img, int64_t cs, int64_t ys, int64_t xs, double *col,
                     int64_t ldcol);

/** The adjoint of im2col: adds every entry of col (layout as above) into the
 * contiguous image [channels, height, width] element it was read from;
 * entries that fall in the padding are dropped. */
void tj_k_col2im_f32(const tj_k_im2col_geom *g, const float *col, int64_t ldcol, float *img);
void tj_k_col2im_f64(const tj_k_im2col_geom *g, const double *col, int64_t ldcol, double *img);

/** True when im2col is the identity on a contiguous image (1x1 kernel,
 * stride 1, no padding): col is the image itself. */
int tj_k_im2col_is_identity(const tj_k_im2col_geom *g);

#endif
