/* Sliding windows for the convolution and pooling decompositions: constant
 * padding (full + slice_scatter, or a slice where the padding is negative)
 * and the im2col view made of unfold and strided slices. */
#ifndef TJIT_DECOMPS_WINDOWS_H
#define TJIT_DECOMPS_WINDOWS_H

#include "util.h"

/** x [N, C, S_1..S_n] with lo[i] / hi[i] elements of `fill` added before /
 * after spatial dim i (negative amounts crop). */
tj_tensor *tj_dc_pad(tj_tensor *x, int n, const int64_t *lo, const int64_t *hi, double fill);

/** The windows of x [N, C, S_1..S_n] (already padded): window o_i starts at
 * o_i * stride[i] and takes k[i] elements dilation[i] apart; the first
 * out[i] windows of each dim. A view [N, C, O_1..O_n, K_1..K_n]. */
tj_tensor *tj_dc_windows(tj_tensor *x, int n, const int64_t *k, const int64_t *stride, const int64_t *dilation,
                         const int64_t *out);

#endif
