/* Counting kernels: bincount (a weighted count per integer value) and
 * histc (equal-width bins over a range), as ATen 1.13's CPU kernels. */
#ifndef TJIT_KERNELS_HISTOGRAM_H
#define TJIT_KERNELS_HISTOGRAM_H

#include <stdint.h>

#include "tjit/core.h"

/** out[x[i]] += w[i] (1 without weights) for i in [0, n), in order of i:
 * x int64 in [0, nbins) (checked by the caller), w of `wdtype` (any, read
 * as double; NULL: none) with stride wstride; out (nbins, zeroed here) int64
 * without weights, else float32 or float64 (ATen's accumulation type: float
 * for float32 weights, double otherwise). */
void tj_k_bincount(const int64_t *x, int64_t xstride, int64_t n, const void *w, tj_dtype wdtype, int64_t wstride,
                   void *out, tj_dtype odtype, int64_t nbins);

/** The histogram of the n contiguous values x (float32 / float64, dtype)
 * over `bins` equal bins between lo and hi (finite, lo < hi; the bin edges
 * linspace(lo, hi, bins + 1) in dtype, in `edges`, bins + 1 entries of
 * scratch): ATen's linear interpolation with a local search against the
 * edges; the last bin includes hi; values outside [lo, hi] are not
 * counted, nan is, in the first bin (ATen 1.13 skips only values that
 * compare outside). out: bins counts in dtype. */
void tj_k_histc(const void *x, tj_dtype dtype, int64_t n, int64_t bins, double lo, double hi, void *edges, void *out);

#endif
