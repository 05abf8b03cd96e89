/* Inclusive scans along one dim (ATen's cumsum, cumprod): out[.., i, ..] =
 * the sum (product) of in[.., 0..i, ..], in PyTorch 1.13's CPU order and
 * accumulator type. */
#ifndef TJIT_KERNELS_SCAN_H
#define TJIT_KERNELS_SCAN_H

#include <stdint.h>

#include "tjit/core.h"

/** cumsum of a contiguous [outer, n, inner] array along its middle dim into
 * out (same layout; out may be in itself). dtype float32 (summed in a
 * float64 accumulator, each output rounded once, as PyTorch's CPU acc_type),
 * float64 or int64 (wrapping). Each sum runs in index order whatever the
 * thread count, so results are deterministic. Up to `nthreads` threads. */
void tj_k_cumsum(tj_dtype dtype, void *out, const void *in, int64_t outer, int64_t n, int64_t inner, int nthreads);
/** cumprod, as tj_k_cumsum with products (float32 multiplied in a float64
 * accumulator, int64 wrapping). */
void tj_k_cumprod(tj_dtype dtype, void *out, const void *in, int64_t outer, int64_t n, int64_t inner, int nthreads);

#endif
