/* Selection by values over strided arrays: the positions of the non-zero
 * elements (ATen's nonzero), the elements where a mask is true
 * (masked_select) and the writes of consecutive source elements there
 * (masked_scatter). Positions are visited in row-major order of `shape`;
 * operands read through element strides (0 on broadcast dims). Kernels know
 * no tensor: sizes and strides are in elements, `elem` is an element's bytes. */
#ifndef TJIT_KERNELS_MASKED_H
#define TJIT_KERNELS_MASKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tjit/core.h"

/** How many elements of data (dtype float32 / float64 / int64 / bool) over
 * shape are not zero: NaN counts, -0.0 does not, as ATen's nonzero. */
int64_t tj_k_count_nonzero(tj_dtype dtype, const void *data, int ndim, const int64_t *shape, const int64_t *strides);

/** The coordinates of those elements, row-major, into out[count, ndim]; returns
 * how many it wrote, at most `max` rows (the rest are counted, not written). */
int64_t tj_k_nonzero(tj_dtype dtype, const void *data, int ndim, const int64_t *shape, const int64_t *strides,
                     int64_t *out, int64_t max);

/** out[j++] = src[i] for each position i where mask[i], at most `max`
 * elements written; returns the count of true positions. */
int64_t tj_k_masked_select(size_t elem, void *out, int64_t max, const void *src, const int64_t *src_strides,
                           const bool *mask, const int64_t *mask_strides, int ndim, const int64_t *shape);

/** dst[i] = mask[i] ? source[j++] : self[i] for each position i; dst and
 * source contiguous, source holding at least the count of true positions. */
void tj_k_masked_scatter(size_t elem, void *dst, const void *self, const int64_t *self_strides, const bool *mask,
                         const int64_t *mask_strides, int ndim, const int64_t *shape, const void *source);

#endif
