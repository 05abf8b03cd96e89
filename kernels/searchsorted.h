/* searchsorted's binary searches (ATen 1.13's Bucketization.cpp): for each
 * value, the first position in its row of boundaries whose element is >= it
 * (left) or > it (right), with ATen's exact loop so that nan and unsorted
 * boundaries give ATen's answers. */
#ifndef TJIT_KERNELS_SEARCHSORTED_H
#define TJIT_KERNELS_SEARCHSORTED_H

#include <stdbool.h>
#include <stdint.h>

#include "tjit/core.h"

/** One call: `numel` contiguous values in rows of `row` elements; the
 * boundaries, contiguous rows of `m` elements, one row for all values
 * (shared) or one per value row; `sorter` (NULL: none) holds, per boundary
 * row, the order in which to read it (each entry in [0, m), checked by the
 * caller). values and boundaries share `dtype` (float32, float64, int64). */
typedef struct tj_k_searchsorted {
    tj_dtype dtype;
    const void *values, *boundaries;
    const int64_t *sorter;
    int64_t numel, row, m;
    bool shared, right;
    int64_t *out; /**< numel positions in [0, m] */
} tj_k_searchsorted;

/** Runs the searches on up to nthreads threads. */
void tj_k_searchsorted_run(const tj_k_searchsorted *s, int nthreads);

#endif
