/* Order statistics along one dim (ATen 1.13's kthvalue, median.dim,
 * nanmedian.dim, median, nanmedian CPU kernels, Sorting.cpp), over a
 * contiguous [outer, n, inner] array: each of the outer * inner rows of n
 * elements gives one value and its position, written at o * inner + c. */
#ifndef TJIT_KERNELS_SELECT_H
#define TJIT_KERNELS_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tjit/core.h"

typedef enum tj_k_select_kind {
    TJ_K_SELECT_KTH,       /**< the k-th smallest (nan largest), by ATen's quick_select_template */
    TJ_K_SELECT_MEDIAN,    /**< the first nan, else the lower median of (value, position) */
    TJ_K_SELECT_NANMEDIAN, /**< the lower median of the non-nan (value, position)s, nans last */
} tj_k_select_kind;

typedef struct tj_k_select {
    tj_k_select_kind kind;
    tj_dtype dtype; /**< float32, float64 or int64 */
    const void *in;
    int64_t outer, n, inner;
    int64_t k;       /**< TJ_K_SELECT_KTH: 1-based rank in [1, n] */
    void *values;    /**< outer * inner values of dtype */
    int64_t *indices; /**< outer * inner positions in [0, n) */
} tj_k_select;

/** Bytes of scratch tj_k_select_run needs for nthreads threads. */
size_t tj_k_select_scratch_bytes(const tj_k_select *s, int nthreads);

/** Runs the selection of every row on up to nthreads threads, with
 * `scratch` of tj_k_select_scratch_bytes(s, nthreads) bytes. Ties resolve
 * as ATen's: kthvalue's position is where quick_select_template leaves it,
 * median's the lower median in the order (value, position), nanmedian of
 * an all-nan row the position libstdc++'s std::nth_element leaves there. */
void tj_k_select_run(const tj_k_select *s, void *scratch, int nthreads);

#endif
