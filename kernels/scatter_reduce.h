/* scatter_reduce along one dim of strided arrays (ATen 1.13's
 * scatter_reduce.two, CPU): for every position p of the index array, in
 * row-major order,
 *   out[q] = reduce(out[q], src[p]),  q = p with p[dim] replaced by index[p]
 * Index values are checked by the caller (tj_k_index_find_invalid). */
#ifndef TJIT_KERNELS_SCATTER_REDUCE_H
#define TJIT_KERNELS_SCATTER_REDUCE_H

#include <stdbool.h>
#include <stdint.h>

#include "index.h"

typedef enum tj_k_scatter_reduction {
    TJ_K_SCATTER_SUM,
    TJ_K_SCATTER_PROD,
    TJ_K_SCATTER_MEAN,
    TJ_K_SCATTER_AMAX,
    TJ_K_SCATTER_AMIN,
} tj_k_scatter_reduction;

/** scatter_reduce into `out` (contiguous over `out_shape`, already holding
 * self's values) of src over the index shape `shape` (ndim >= 1 dims),
 * dtype float32, float64, int64 (sums and products wrap) or bool (sum is
 * or, prod and; no mean). Without include_self every element some position
 * writes first becomes the reduction's identity (0, 1, -inf / INT64_MIN /
 * false, inf / INT64_MAX / true). amax /
 * amin propagate nan from src (as ATen: once nan, an element stays nan).
 * mean adds, then divides each element by the number of values it
 * received (self counted with include_self; none: by 1), int64 rounding
 * down; `count` is scratch of one int64 per element of out. One thread. */
void tj_k_scatter_reduce(tj_dtype dtype, tj_k_scatter_reduction op, bool include_self, void *out,
                         const int64_t *out_shape, tj_k_index_array src, tj_k_index_array index, int ndim,
                         const int64_t *shape, int dim, int64_t *count);

#endif
