/* 3-D max and average pooling and their backward passes over contiguous
 * volumes, as PyTorch 1.13's CPU kernels (DilatedMaxPool3d.cpp,
 * AveragePool3d.cpp): the same window bounds, divisors, tie-breaking and
 * nan rules. */
#ifndef TJIT_KERNELS_POOL3D_H
#define TJIT_KERNELS_POOL3D_H

#include <stdbool.h>
#include <stdint.h>

/** Geometry: `planes` contiguous volumes size[0..2] (d, h, w) pooled to
 * contiguous volumes out[0..2]; kernel, stride, padding, dilation per dim. */
typedef struct tj_k_pool3d {
    int64_t planes;
    int64_t size[3], out[3], kernel[3], stride[3], padding[3], dilation[3];
    int threads;
} tj_k_pool3d;

/** Max over each window (padding never wins). Ties keep the first position
 * in window order; a nan wins, and with several nans the last one does.
 * idx receives (z*h + y)*w + x of the chosen element in its volume. */
void tj_k_max_pool3d_f32(const tj_k_pool3d *p, const float *in, float *out, int64_t *idx);
void tj_k_max_pool3d_f64(const tj_k_pool3d *p, const double *in, double *out, int64_t *idx);

/** grad_in (overwritten) = the sum of grad_out at each output's index.
 * Returns false, with *bad the index, when an index lies outside the volume. */
bool tj_k_max_pool3d_backward_f32(const tj_k_pool3d *p, const float *grad_out, const int64_t *idx, float *grad_in,
                                  int64_t *bad);
bool tj_k_max_pool3d_backward_f64(const tj_k_pool3d *p, const double *grad_out, const int64_t *idx,
                                  double *grad_in, int64_t *bad);

/** Mean over each window: the sum divided by *divisor when not NULL, else
 * by the window's size inside the padded input (count_include_pad) or
 * inside the input itself. */
void tj_k_avg_pool3d_f32(const tj_k_pool3d *p, const float *in, float *out, bool count_include_pad,
                         const int64_t *divisor);
void tj_k_avg_pool3d_f64(const tj_k_pool3d *p, const double *in, double *out, bool count_include_pad,
                         const int64_t *divisor);
/** The adjoint: grad_in (overwritten) gets grad_out / divisor at every
 * input element of each window. */
void tj_k_avg_pool3d_backward_f32(const tj_k_pool3d *p, const float *grad_out, float *grad_in,
                                  bool count_include_pad, const int64_t *divisor);
void tj_k_avg_pool3d_backward_f64(const tj_k_pool3d *p, const double *grad_out, double *grad_in,
                                  bool count_include_pad, const int64_t *divisor);

/** Adaptive average pooling of each volume into p->out (PyTorch 1.13's
 * AdaptiveAveragePooling3d.cpp): output (t, i, j) is the mean of the window
 * [start, end) of each dim, start(o) = floor(o * in / out) and end(o) =
 * ceil((o + 1) * in / out) (tj_k_adaptive_start / _end; out >= 1,
 * in * (out + 1) within int64). Sums in double, in row-major window order,
 * divided by the window's depth, height and width in turn, rounded once
 * (PyTorch sums float32 in float: within an ulp of it; float64 equal).
 * Only planes, size, out and threads of p are read. */
void tj_k_adaptive_avg_pool3d_f32(const tj_k_pool3d *p, const float *in, float *out);
void tj_k_adaptive_avg_pool3d_f64(const tj_k_pool3d *p, const double *in, double *out);
/** The adjoint: grad_in (overwritten) gets, for each grad_out element in
 * row-major order, grad_out / depth / height / width of its window added
 * at every element of the window, in the dtype (ATen's loop). */
void tj_k_adaptive_avg_pool3d_backward_f32(const tj_k_pool3d *p, const float *grad_out, float *grad_in);
void tj_k_adaptive_avg_pool3d_backward_f64(const tj_k_pool3d *p, const double *grad_out, double *grad_in);

#endif
