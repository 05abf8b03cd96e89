/* Stable sort of the rows of a strided array along one dim (ATen's sort
 * and, keeping the first k of each row, topk): values and their int64
 * positions along the dim, ascending or descending. The order is PyTorch's:
 * nan above +inf, -0 equal to +0, equal values in input order (stable) in
 * both directions. */
#ifndef TJIT_KERNELS_SORT_H
#define TJIT_KERNELS_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tjit/core.h"

typedef struct tj_k_sort {
    tj_dtype dtype;           /* float32, float64, int64 or bool */
    bool descending;
    int ndim;                 /* at least 1 */
    int dim;                  /* the sorted dim */
    const int64_t *shape;     /* of x */
    const void *x;            /* element [0, ..., 0] */
    const int64_t *x_strides; /* in elements */
    int64_t k;                /* elements kept per row: shape[dim] for sort, k for topk */
    void *values;             /* contiguous, shape with shape[dim] replaced by k */
    int64_t *indices;         /* the same shape */
} tj_k_sort;

/** Bytes of scratch tj_k_sort_run needs with up to nthreads threads. */
size_t tj_k_sort_scratch_bytes(const tj_k_sort *s, int nthreads);

/** Sorts every row; rows are split across up to nthreads threads. */
void tj_k_sort_run(const tj_k_sort *s, void *scratch, int nthreads);

#endif
