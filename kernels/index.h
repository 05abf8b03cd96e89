/* gather, scatter_add and scatter along one dim of strided arrays (ATen's
 * gather, scatter_add and scatter): for every position p of the index array,
 *   gather:       out[p] = src[p with p[dim] replaced by index[p]]
 *   scatter_add:  out[p with p[dim] replaced by index[p]] += src[p]
 *   scatter:      out[p with p[dim] replaced by index[p]] = src[p]
 * Index values are int64 and must lie in [0, size of the indexed dim); the
 * callers of tj_k_scatter_add and tj_k_scatter check them first with
 * tj_k_index_find_invalid, tj_k_gather and tj_k_scatter_add_rows check
 * them themselves. */
#ifndef TJIT_KERNELS_INDEX_H
#define TJIT_KERNELS_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tjit/core.h"

/** A strided array: element [0, ..., 0] and strides in elements. */
typedef struct tj_k_index_array {
    void *data;
    const int64_t *strides;
} tj_k_index_array;

/** Flat row-major position (over `shape`) of the first index outside
 * [0, size), or -1; *value receives that index. Up to `nthreads` threads
 * (each checks a block of the positions; the answer is the same for any
 * count). */
int64_t tj_k_index_find_invalid(tj_k_index_array index, int ndim, const int64_t *shape, int64_t size, int64_t *value,
                                int nthreads);

/** gather over the index shape `shape` (ndim dims, at least 1): elements of
 * `esize` bytes; out is contiguous in `shape`; `size` is src's size along
 * `dim`. Checks the index values as it goes: returns false (out partly
 * written, src never read outside) when one lies outside [0, size), for the
 * caller to find the first with tj_k_index_find_invalid; true otherwise.
 * Up to `nthreads` threads. */
bool tj_k_gather(size_t esize, void *out, tj_k_index_array src, tj_k_index_array index, int ndim,
                 const int64_t *shape, int dim, int64_t size, int nthreads);

/** Bytes of scratch with which tj_k_scatter_add adds runs of consecutive
 * indices as vectors (float32 on AVX-512, long rows along the last dim
 * sharing one index); 0 when it would not. */
size_t tj_k_scatter_add_scratch_bytes(tj_dtype dtype, tj_k_index_array out, tj_k_index_array src,
                                      tj_k_index_array index, int ndim, const int64_t *shape, int dim);

/** scatter_add into `out` (strided, already holding self's values) of src
 * over the index shape, in row-major order of the index positions (so float
 * sums are deterministic). dtype float32, float64, int64 (wrapping) or bool
 * (or). `scratch`: NULL or tj_k_scatter_add_scratch_bytes of memory (the
 * results are the same either way). Up to `nthreads` threads when `dim` is
 * the last one (each thread then owns whole rows of out; otherwise one
 * thread). */
void tj_k_scatter_add(tj_dtype dtype, tj_k_index_array out, tj_k_index_array src, tj_k_index_array index, int ndim,
                      const int64_t *shape, int dim, void *scratch, int nthreads);

/** scatter_add along the last dim in one pass over out (ATen's
 * scatter_add, the functional form): each row of out gets self's row (a
 * memset for a zero broadcast self, a memcpy for a contiguous one), then
 * src's row added at its index values in order, while the row is in cache;
 * the same bits as copying self and tj_k_scatter_add. `shape` (ndim dims,
 * at least 1) is the index's; out and self have its outer dims and `size`
 * elements along the last, out contiguous along it (stride 1); out shares
 * no memory with self, src or index. Checks the index values as it goes:
 * returns false (out partly written) when one lies outside [0, size), for
 * the caller to find the first with tj_k_index_find_invalid; true
 * otherwise. Up to `nthreads` threads (each owns whole rows of out). */
bool tj_k_scatter_add_rows(tj_dtype dtype, tj_k_index_array out, tj_k_index_array self, tj_k_index_array src,
                           tj_k_index_array index, int ndim, const int64_t *shape, int64_t size, int nthreads);

/** scatter: out[p with p[dim] replaced by index[p]] = src[p] (elements of
 * `esize` bytes; src may have zero strides, one value for every position),
 * into `out` already holding self's values, in row-major order of the index
 * positions: of positions writing one element, the last wins (the largest
 * coordinate along dim, as PyTorch's CPU loop). Up to `nthreads` threads
 * when `dim` is the last one (each row of out then has one writer);
 * otherwise one thread. */
void tj_k_scatter(size_t esize, tj_k_index_array out, tj_k_index_array src, tj_k_index_array index, int ndim,
                  const int64_t *shape, int dim, int nthreads);

#endif
