/* Embedding lookup (a row gather) and its dense gradient, over int64
 * indices in contiguous order. */
#ifndef TJIT_KERNELS_EMBEDDING_H
#define TJIT_KERNELS_EMBEDDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tjit/core.h"

/** Position of the first index outside [0, num) in idx[0..n), skipping
 * entries equal to *skip when skip is not NULL; -1 when all are valid. */
int64_t tj_k_embedding_find_invalid(const int64_t *idx, int64_t n, int64_t num, const int64_t *skip);

/** out[i, :] = weight[idx[i], :] for i < n: rows of `dim` elements of
 * `esize` bytes; weight row r starts at w + r*wrs elements, its elements
 * wcs apart; out is contiguous. Indices must be valid. */
void tj_k_embedding(size_t esize, const int64_t *idx, int64_t n, const void *w, int64_t wrs, int64_t wcs,
                    int64_t dim, void *out, int nthreads);

/** ATen's embedding_dense_backward: gw [num, dim] = 0, then for each i with
 * idx[i] != padding_idx, gw[idx[i]] += g[i] * (scale_grad_by_freq ?
 * 1 / count(idx[i]) : 1), in index order (deterministic). g is contiguous
 * [n, dim]; dtype float32 or float64; counts is scratch for num entries
 * (used only with scale_grad_by_freq). Indices must be valid. */
void tj_k_embedding_backward(tj_dtype dtype, const int64_t *idx, int64_t n, const void *g, int64_t dim, int64_t num,
                             int64_t padding_idx, bool scale_grad_by_freq, int64_t *counts, void *gw, int nthreads);

#endif
