/* 2-D max and average pooling over planes of any strides, as PyTorch 1.13's
 * CPU kernels (aten/src/ATen/native/cpu/MaxPoolKernel.cpp, AvgPoolKernel.cpp):
 * the same window bounds, tie-breaking and nan rules. */
#ifndef TJIT_KERNELS_POOL_H
#define TJIT_KERNELS_POOL_H

#include <stdbool.h>
#include <stdint.h>

/** Pooling geometry. The input holds `batch` x `channels` planes of
 * height x width; plane (n, c) element (y, x) is at
 * in[n*ns + c*cs + y*ys + x*xs]. Outputs are contiguous
 * [batch, channels, out_h, out_w]. */
typedef struct tj_k_pool2d {
    int64_t batch, channels, height, width, out_h, out_w;
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    int64_t ns, cs, ys, xs;
    int threads;
} tj_k_pool2d;

/** Max over each window (padding never wins). Ties keep the first position
 * in row-major window order; a nan wins, and with several nans the last one
 * does (PyTorch 1.13). idx receives y*width + x of the chosen element. */
void tj_k_max_pool2d_f32(const tj_k_pool2d *p, const float *in, float *out, int64_t *idx);
void tj_k_max_pool2d_f64(const tj_k_pool2d *p, const double *in, double *out, int64_t *idx);

/** One tap of max pooling over output columns [lo, hi) of one output row:
 * the candidate for column ox is row[(ox*sw + off)*xs] at plane position
 * y*width + ox*sw + off; it replaces o[ox] / ix[ox] when larger or nan.
 * Generic C, and AVX-512 for float32 (chosen at run time). */
void tj_k_max_pool_tap_f32_generic(const float *row, int64_t y, int64_t width, int64_t lo, int64_t hi, int64_t sw,
                                   int64_t off, int64_t xs, float *o, int64_t *ix);
void tj_k_max_pool_tap_f32_avx512(const float *row, int64_t y, int64_t width, int64_t lo, int64_t hi, int64_t sw,
                                  int64_t off, int64_t xs, float *o, int64_t *ix);

/** Max pooling of one plane (AVX-512, float32), every tap of a window
 * with the running maxima in registers: the same results as the taps one
 * after another. tap_lo[j] / tap_hi[j] are the output columns [lo, hi)
 * whose tap j lies inside the input. Only for geometries where
 * tj_k_max_pool_plane_f32_avx512_ok holds (unit column stride, indices
 * within 32 bits). */
bool tj_k_max_pool_plane_f32_avx512_ok(const tj_k_pool2d *p);
void tj_k_max_pool_plane_f32_avx512(const tj_k_pool2d *p, const float *plane, const int64_t *tap_lo,
                                    const int64_t *tap_hi, float *out, int64_t *idx);

/** Whether p is the common MaxPool2d(2) geometry: 2 x 2 windows, stride
 * 2, no padding, no dilation. */
bool tj_k_max_pool_is_2x2(const tj_k_pool2d *p);
/** tj_k_max_pool_plane_f32_avx512 for CPUs with AVX2 only (pool_avx2.c),
 * for the 2 x 2 geometry with a unit column stride and indices within 32
 * bits (tj_k_max_pool_plane_2x2_f32_avx2_ok); tap_lo / tap_hi unused. */
bool tj_k_max_pool_plane_2x2_f32_avx2_ok(const tj_k_pool2d *p);
void tj_k_max_pool_plane_2x2_f32_avx2(const tj_k_pool2d *p, const float *plane, const int64_t *tap_lo,
                                      const int64_t *tap_hi, float *out, int64_t *idx);
/** Mean over each window; the divisor is *divisor_override when that is
 * not NULL (nor 0), else the window's size clipped to the padded input
 * (count_include_pad) or to the input. A window wholly in the padding gives
 * 0. Sums run in double (int64 for int64, which divides with truncation
 * toward zero, as C++ does). */
void tj_k_avg_pool2d_f32(const tj_k_pool2d *p, const float *in, float *out, bool count_include_pad,
                         const int64_t *divisor_override);
void tj_k_avg_pool2d_f64(const tj_k_pool2d *p, const double *in, double *out, bool count_include_pad,
                         const int64_t *divisor_override);
void tj_k_avg_pool2d_i64(const tj_k_pool2d *p, const int64_t *in, int64_t *out, bool count_include_pad,
                         const int64_t *divisor_override);

/** Adaptive average pooling (PyTorch 1.13's AdaptiveAvgPoolKernel.cpp):
 * output (oy, ox) is the mean of input rows [start(oy), end(oy)) and
 * columns [start(ox), end(ox)), with start(i) = floor(i * in / out) and
 * end(i) = ceil((i + 1) * in / out) over the dim's input and output sizes
 * (tj_k_adaptive_start / _end; out >= 1, in * (out + 1) within int64).
 * Only the sizes, strides and threads of p are read (kh .. dw are not).
 * Sums run in double in row-major window order, divided by the window's
 * height and then its width, rounded once (PyTorch sums float32 in float:
 * results within an ulp of it; float64 equal). */
void tj_k_adaptive_avg_pool2d_f32(const tj_k_pool2d *p, const float *in, float *out);
void tj_k_adaptive_avg_pool2d_f64(const tj_k_pool2d *p, const double *in, double *out);
int64_t tj_k_adaptive_start(int64_t i, int64_t out_size, int64_t in_size);
int64_t tj_k_adaptive_end(int64_t i, int64_t out_size, int64_t in_size);

/** Adaptive max pooling (PyTorch 1.13's AdaptiveMaxPoolKernel.cpp): output
 * (oy, ox) is the max over the windows of tj_k_adaptive_avg_pool2d_f32,
 * idx (contiguous, the output's layout) the chosen element's y*width + x in
 * its plane. Ties keep the first position in row-major window order; a nan
 * wins, and with several nans the last one does. Only the sizes, strides
 * and threads of p are read. Gradient: tj_k_max_pool2d_backward_f32. */
void tj_k_adaptive_max_pool2d_f32(const tj_k_pool2d *p, const float *in, float *out, int64_t *idx);
void tj_k_adaptive_max_pool2d_f64(const tj_k_pool2d *p, const double *in, double *out, int64_t *idx);

/** Gradient of adaptive average pooling: grad_in (contiguous [batch,
 * channels, height, width]) at (y, x) is the sum, over the windows holding
 * it in row-major output order, of grad_out / window height / window width
 * (grad_out contiguous [batch, channels, out_h, out_w]; the input strides of
 * p are not read). Accumulated in double and rounded once; float64 results
 * equal PyTorch's, whose loop adds the same terms in the same order. */
void tj_k_adaptive_avg_pool2d_backward_f32(const tj_k_pool2d *p, const float *grad_out, float *grad_in);
void tj_k_adaptive_avg_pool2d_backward_f64(const tj_k_pool2d *p, const double *grad_out, double *grad_in);

/** Gradient of max pooling: grad_in (contiguous [batch, channels, height,
 * width]) = 0, then grad_out (contiguous, the output's shape) is added at
 * each plane position idx (same layout); idx -1 is skipped. The input
 * strides of p are not used. Returns false, with *bad set to the offending
 * value and nothing else guaranteed, when an index lies outside the plane. */
bool tj_k_max_pool2d_backward_f32(const tj_k_pool2d *p, const float *grad_out, const int64_t *idx, float *grad_in,
                                  int64_t *bad);
bool tj_k_max_pool2d_backward_f64(const tj_k_pool2d *p, const double *grad_out, const int64_t *idx,
                                  double *grad_in, int64_t *bad);

#endif
