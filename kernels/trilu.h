/* The triangular masks of aten::tril / aten::triu on raw strided buffers:
 * a batch of [M, N] matrices copied with the elements outside the kept
 * triangle set to zero (all bytes 0: +0.0, 0, false). */
#ifndef TJIT_KERNELS_TRILU_H
#define TJIT_KERNELS_TRILU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** One tril / triu call: element (..., i, j) of src is kept when
 * j - i <= diagonal (lower) or j - i >= diagonal (upper), else the result
 * holds zero there. shape has nbatch + 2 sizes (the batch dims, then M and
 * N); dst_strides / src_strides (in elements) one per size, any values: dst
 * may be src itself (same pointer and strides: in place, kept elements are
 * then not copied), otherwise dst must not overlap src. */
typedef struct tj_k_trilu_args {
    size_t elem_size; /**< 1, 4 or 8 bytes */
    bool lower;
    int64_t diagonal; /**< any value: clamped to [-M, N], which keeps the same elements */
    int nbatch;
    const int64_t *shape;
    const int64_t *dst_strides, *src_strides;
} tj_k_trilu_args;

/** Runs a over every row of every matrix, up to `nthreads` threads (rows
 * split in blocks). Contiguous rows are one memcpy and one memset each. */
void tj_k_trilu(const tj_k_trilu_args *a, void *dst, const void *src, int nthreads);

#endif
