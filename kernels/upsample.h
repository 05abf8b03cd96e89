/* 1-, 2- and 3-D nearest and linear, 2-D bicubic resampling and their gradients, as PyTorch
 * 1.13's CPU kernels (aten/src/ATen/native/UpSample.h, cpu/UpSampleKernel.cpp):
 * the same source indices and weights, computed once per output row and
 * column, in the same precision (float for float32, double for float64). */
#ifndef TJIT_KERNELS_UPSAMPLE_H
#define TJIT_KERNELS_UPSAMPLE_H

#include <stdbool.h>
#include <stdint.h>

/** Resampling geometry. The input holds batch x channels volumes of depth
 * planes of height x width (depth 1 for the 2-d and 1-d operators, height
 * 1 too for 1-d); volume (n, c) element (z, y, x) is at
 * in[n*ns + c*cs + z*zs + y*ys + x*xs]. Outputs (and gradients of the
 * input) are contiguous [batch, channels, out_d, out_h, out_w] ([.., depth,
 * height, width]). All sizes but batch and channels are >= 1. `spatial` is
 * the operator's count of resampled dims (1, 2 or 3): the linear kernels
 * blend across rows only from 2 and across planes only at 3, as ATen's
 * loops (their results on finite inputs would be the same, but not on
 * infinities). scale_* are the scale factors given to the operator, or 0
 * when none was (the sizes' ratio is used then). */
typedef struct tj_k_upsample {
    int64_t batch, channels, depth, height, width, out_d, out_h, out_w;
    int64_t ns, cs, zs, ys, xs;
    double scale_d, scale_h, scale_w;
    int spatial;
    bool align_corners; /* linear and cubic only */
    int threads;
} tj_k_upsample;

/** Source index of each of `out` outputs of one dim for nearest
 * resampling, ATen 1.13's nearest_idx for every dtype: i itself when out ==
 * in, i / 2 when out == 2 in (whatever scale factor was given), else
 * min(floor(i * s), in - 1) with s = 1 / scale (or in / out) in float.
 * idx receives out entries. */
void tj_k_nearest_indices(int64_t in, int64_t out, double scale, int64_t *idx);

/** The same for ATen 1.13's generic (not channels-last) forward kernel
 * (HelperInterpNearest): min(floor(i * s), in - 1) for every i, with no
 * shortcut for out == in or 2 in, s = 1 / scale (or in / out) and i * s in
 * the dtype (f64: double, rounded to float before the floor), float32
 * otherwise. */
void tj_k_nearest_indices_nchw(int64_t in, int64_t out, double scale, bool f64, int64_t *idx);

/** Source indices i0 <= i1 and weights l0 + l1 = 1 of each of `out`
 * outputs of one dim for linear resampling (ATen's
 * compute_source_index_and_lambda: the scale in T, the source position in
 * double, l1 its distance from i0 rounded to T, l0 = 1 - l1). Each array
 * receives out entries. */
void tj_k_linear_indices_f32(int64_t in, int64_t out, double scale, bool align_corners, int64_t *i0, int64_t *i1,
                             float *l0, float *l1);
void tj_k_linear_indices_f64(int64_t in, int64_t out, double scale, bool align_corners, int64_t *i0, int64_t *i1,
                             double *l0, double *l1);

/** The per-dim source indices of nearest resampling (tj_k_nearest_indices):
 * z of out_d, y of out_h, x of out_w entries. */
typedef struct tj_k_nearest_tables {
    const int64_t *z, *y, *x;
} tj_k_nearest_tables;

/** out (v, z, y, x) = in (volume v, t->z[z], t->y[y], t->x[x]). Parallel
 * over output planes. */
void tj_k_upsample_nearest_f32(const tj_k_upsample *p, const tj_k_nearest_tables *t, const float *in, float *out);
void tj_k_upsample_nearest_f64(const tj_k_upsample *p, const tj_k_nearest_tables *t, const double *in,
                               double *out);
/** Gradient of nearest resampling: grad_in (zeroed here) receives the sum
 * of the grad_out (contiguous) elements that read each input element, in
 * row-major output order, accumulated in the dtype as ATen does. Parallel
 * over volumes. */
void tj_k_upsample_nearest_backward_f32(const tj_k_upsample *p, const tj_k_nearest_tables *t,
                                        const float *grad_out, float *grad_in);
void tj_k_upsample_nearest_backward_f64(const tj_k_upsample *p, const tj_k_nearest_tables *t,
                                        const double *grad_out, double *grad_in);

/** The per-dim tables of linear resampling (tj_k_linear_indices): z0, z1,
 * lz0, lz1 of out_d entries, y0, y1, ly0, ly1 of out_h, x0, x1, lx0, lx1 of
 * out_w. */
typedef struct tj_k_linear_tables_f32 {
    const int64_t *z0, *z1, *y0, *y1, *x0, *x1;
    const float *lz0, *lz1, *ly0, *ly1, *lx0, *lx1;
} tj_k_linear_tables_f32;
typedef struct tj_k_linear_tables_f64 {
    const int64_t *z0, *z1, *y0, *y1, *x0, *x1;
    const double *lz0, *lz1, *ly0, *ly1, *lx0, *lx1;
} tj_k_linear_tables_f64;

/** Linear, bilinear or trilinear resampling (p->spatial 1, 2, 3): along a
 * row r(x) = in(x0) lx0 + in(x1) lx1; bilinear blends rows
 * b = r(y0) ly0 + r(y1) ly1, trilinear planes b(z0) lz0 + b(z1) lz1, as
 * ATen orders it, each a * b + c with one rounding as ATen's FMA-contracted
 * build (float32: the same values as PyTorch 1.13 where checked, within an
 * ulp of the operands elsewhere). Each source plane's rows are interpolated
 * along x once per output plane into scratch, height * out_w elements per
 * source plane (1 for 2-d, 2 for 3-d) per thread (p->threads, at least 1;
 * unused, may be NULL, for 1-d).
 * Parallel over output planes. */
void tj_k_upsample_linear_f32(const tj_k_upsample *p, const tj_k_linear_tables_f32 *t, const float *in, float *out,
                              float *scratch);
void tj_k_upsample_linear_f64(const tj_k_upsample *p, const tj_k_linear_tables_f64 *t, const double *in,
                              double *out, double *scratch);
/** Gradient of linear resampling: grad_in (zeroed here) receives, for each
 * grad_out (contiguous) element g in row-major order, the products of g
 * with its weights (lz ly lx, formed left to right, then times g) at its
 * 2, 4 or 8 source elements (z0 before z1, y0 before y1, x0 before x1),
 * each added with one rounding (as ATen's FMA-contracted build). Parallel
 * over volumes. */
void tj_k_upsample_linear_backward_f32(const tj_k_upsample *p, const tj_k_linear_tables_f32 *t,
                                       const float *grad_out, float *grad_in);
void tj_k_upsample_linear_backward_f64(const tj_k_upsample *p, const tj_k_linear_tables_f64 *t,
                                       const double *grad_out, double *grad_in);

/** The per-dim tables of bicubic resampling (tj_k_cubic_indices): for output
 * row y the 4 source rows y[4y + j] (clamped to [0, height - 1]) and their
 * weights wy[4y + j]; likewise x / wx for columns. */
typedef struct tj_k_cubic_tables_f32 {
    const int64_t *y, *x;
    const float *wy, *wx;
} tj_k_cubic_tables_f32;
typedef struct tj_k_cubic_tables_f64 {
    const int64_t *y, *x;
    const double *wy, *wx;
} tj_k_cubic_tables_f64;

/** Source indices and weights of each of `out` outputs of one dim for
 * bicubic resampling, as ATen 1.13 computes them in T: the source position
 * s i (align_corners, s = (in - 1) / (out - 1)) or s (i + 0.5) - 0.5 (s as
 * for linear, no clamp), f its floor; taps f - 1 .. f + 2 clamped to
 * [0, in - 1], weights Keys' cubic convolution (A = -0.75) of the distance
 * t = position - f. idx and w receive 4 out entries each. */
void tj_k_cubic_indices_f32(int64_t in, int64_t out, double scale, bool align_corners, int64_t *idx, float *w);
void tj_k_cubic_indices_f64(int64_t in, int64_t out, double scale, bool align_corners, int64_t *idx, double *w);

/** Bicubic resampling: out (o, y, x) = sum_j wy_j (sum_k wx_k in(y_j, x_k)),
 * each sum in tap order, the first term a product and the others a * b + c
 * with one rounding (ATen's interpolate loop, FMA-contracted). Each input
 * row's column sums are computed once per plane into scratch, which holds
 * height * out_w elements per thread (p->threads, at least 1). Parallel over
 * planes (2-d: depth 1). */
void tj_k_upsample_bicubic2d_f32(const tj_k_upsample *p, const tj_k_cubic_tables_f32 *t, const float *in,
                                 float *out, float *scratch);
void tj_k_upsample_bicubic2d_f64(const tj_k_upsample *p, const tj_k_cubic_tables_f64 *t, const double *in,
                                 double *out, double *scratch);
/** Gradient of bicubic resampling: grad_in (zeroed here) receives, for each
 * grad_out (contiguous) element g in row-major order and its taps k (columns)
 * then j (rows), g wy_j wx_k added at (y_j, x_k), in the dtype, as ATen's
 * upsample_bicubic2d_backward_out_frame. Parallel over planes. */
void tj_k_upsample_bicubic2d_backward_f32(const tj_k_upsample *p, const tj_k_cubic_tables_f32 *t,
                                          const float *grad_out, float *grad_in);
void tj_k_upsample_bicubic2d_backward_f64(const tj_k_upsample *p, const tj_k_cubic_tables_f64 *t,
                                          const double *grad_out, double *grad_in);

#endif
