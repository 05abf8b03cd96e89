/* Reflection, replication and zero padding of the last one or two dims
 * (ATen's reflection_pad{1,2}d, replication_pad{1,2}d and their backward
 * kernels, ReflectionPad.cpp / ReplicationPadding.cpp; zeros as
 * constant_pad_nd with value 0). Along a padded dim of input
 * size n with `before` elements added in front (negative: cropped), output
 * position j reads input position k = j - before mapped into [0, n):
 *   reflect:   n - 1 - |n - 1 - |k||   (the edge element not repeated)
 *   replicate: clamp(k, 0, n - 1)
 * Arrays are [n, c, rows, cols] (n c planes); a 1-D pad has one row and no
 * row pad. */
#ifndef TJIT_KERNELS_PAD_H
#define TJIT_KERNELS_PAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tjit/core.h"

typedef enum tj_k_pad_mode { TJ_K_PAD_REFLECT, TJ_K_PAD_REPLICATE } tj_k_pad_mode;

/** The input position output position j reads along one dim (see above);
 * for reflect, |before| < n and j - before < 2n - 1 (the callers' checks). */
static inline int64_t tj_k_pad_source(tj_k_pad_mode mode, int64_t j, int64_t before, int64_t n)
{
    int64_t k = j - before;
    if (mode == TJ_K_PAD_REPLICATE) return k < 0 ? 0 : k >= n ? n - 1 : k;
    k = k < 0 ? -k : k;
    int64_t r = n - 1 - k;
    return n - 1 - (r < 0 ? -r : r);
}

/** One padded geometry: input [n, c, ih, iw], output [n, c, oh, ow];
 * `top` and `left` are the pads before the rows and the columns. Strided
 * arrays are read with 4 strides (elements), one per dim. */
typedef struct tj_k_pad_geom {
    int64_t n, c, ih, iw, oh, ow, top, left;
} tj_k_pad_geom;

/** out (contiguous [n, c, oh, ow], elements of `esize` bytes) = the
 * padded input: per output row the input columns it covers in one block
 * (memcpy when iw's stride is 1), the edges element by element. Rows are
 * split over up to `nthreads` threads. */
void tj_k_pad_forward(tj_k_pad_mode mode, size_t esize, const void *in, const int64_t *in_strides, void *out,
                      const tj_k_pad_geom *g, int nthreads);

/** out (contiguous [n, c, oh, ow], elements of `esize` bytes whose zero
 * is all bits 0: +0.0, integers) = the input at (top, left), zeros
 * elsewhere (negative pads crop), each output element written once: per
 * output row the zeros before and after the input's columns and the
 * columns between in one block (memcpy when iw's stride is 1), rows
 * outside the input zeros whole; the same bits as a zero fill followed by
 * a copy of the input into place. Rows are split over up to `nthreads`
 * threads. */
void tj_k_pad_zeros(size_t esize, const void *in, const int64_t *in_strides, void *out, const tj_k_pad_geom *g,
                    int nthreads);

/** grad_in (contiguous [n, c, ih, iw], zeroed here) += grad_out
 * (float32 or float64, [n, c, oh, ow] read with `gout_strides`) at the
 * positions each output read, in row-major order of the output positions,
 * as ATen's CPU loop (so float32 sums round as PyTorch's). Planes are
 * split over up to `nthreads` threads. */
void tj_k_pad_backward(tj_k_pad_mode mode, tj_dtype dtype, const void *grad_out, const int64_t *gout_strides,
                       void *grad_in, const tj_k_pad_geom *g, int nthreads);

#endif
