/* Fills of contiguous buffers: a constant, an arithmetic progression. */
#ifndef TJIT_KERNELS_FILL_H
#define TJIT_KERNELS_FILL_H

#include <stddef.h>
#include <stdint.h>

#include "tjit/core.h"

/** Copies the `elem_size`-byte value at `value` (1, 2, 4 or 8 bytes) into
 * out[0..n), with up to `nthreads` threads. */
void tj_k_fill(void *out, size_t elem_size, const void *value, int64_t n, int nthreads);

/** out[i] = start + i * step for i in [0, n), computed in double and rounded
 * to `dtype` (float32 or float64), as PyTorch's CPU arange does. */
void tj_k_arange_f(void *out, tj_dtype dtype, double start, double step, int64_t n, int nthreads);
/** out[i] = start + i * step in int64 arithmetic. */
void tj_k_arange_i64(int64_t *out, int64_t start, int64_t step, int64_t n, int nthreads);

/** n values from start to end (n >= 1) as PyTorch 1.13's scalar CPU loop:
 * step = (end - start) / (n - 1); out[i] = start + step * i for i < n / 2,
 * end - step * (n - 1 - i) after, so that both ends are exact; n = 1 gives
 * start. float32 / float64 compute in their own precision; int64 (start and
 * end already truncated) in double, each value truncated toward zero. */
void tj_k_linspace(void *out, tj_dtype dtype, double start, double end, int64_t n, int nthreads);
/** The step tj_k_linspace uses (n >= 2), in dtype's precision. */
double tj_k_linspace_step(tj_dtype dtype, double start, double end, int64_t n);

#endif
