/* Advanced indexing (ATen's index.Tensor and index_put) as a copy between
 * two strided arrays over positions [pre..., b, post...]: the index tensors
 * collapse to one dim of nb positions whose element offsets the caller has
 * computed (and checked) once, in a table per side; the other dims of self
 * split into `pre` (before the indexed block in the result) and `post`
 * (after it).
 *   index:      out[p, b, q]            = self[p + self_offs[b] + q]
 *   index_put:  self[p + self_offs[b] + q] (+)= values[p + values_offs[b] + q]
 * Kernels know no tensor: sizes and strides are in elements. */
#ifndef TJIT_KERNELS_INDEX_ADVANCED_H
#define TJIT_KERNELS_INDEX_ADVANCED_H

#include <stdbool.h>
#include <stdint.h>

#include "tjit/core.h"

/** The positions: pre dims, nb indexed positions, post dims. */
typedef struct tj_k_adv_shape {
    int pre_ndim, post_ndim;
    int64_t pre[TJ_MAX_DIMS], post[TJ_MAX_DIMS];
    int64_t nb;
} tj_k_adv_shape;

/** One side: its data at element [0...], strides over the pre and post dims,
 * and the offset of each indexed position b (offs[b], elements). */
typedef struct tj_k_adv_side {
    void *data;
    int64_t pre_strides[TJ_MAX_DIMS], post_strides[TJ_MAX_DIMS];
    const int64_t *offs;
} tj_k_adv_side;

/** dst[p, b, q] = src[p, b, q], or += with `accumulate` (float32, float64,
 * int64 wrapping; bool: or). Positions are visited in row-major order of
 * (p, b, q) for each destination element, so with duplicate offsets in
 * dst.offs the last b wins (no accumulate) or the sum runs in b order: the
 * results do not depend on `nthreads` (threads split p, or q, never b, when
 * dst positions may repeat; `dst_unique`: every dst position is distinct, as
 * for index's contiguous output, so b may be split too). Rows of post
 * elements contiguous on both sides are copied with memcpy. */
void tj_k_adv_copy(tj_dtype dtype, tj_k_adv_side dst, tj_k_adv_side src, const tj_k_adv_shape *shape, bool accumulate,
                   bool dst_unique, int nthreads);

#endif
