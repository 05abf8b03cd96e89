/* Embedding bags (ATen's _embedding_bag on CPU, PyTorch 1.13): per bag, the
 * sum, mean or max of the weight rows its indices name, and the gradients.
 * Indices and offsets are int64 and contiguous; the callers validate them
 * (tj_k_embedding_bag_check) before any of these run. */
#ifndef TJIT_KERNELS_EMBEDDING_BAG_H
#define TJIT_KERNELS_EMBEDDING_BAG_H

#include <stdbool.h>
#include <stdint.h>

#include "tjit/core.h"

enum { TJ_EMBEDDING_BAG_SUM = 0, TJ_EMBEDDING_BAG_MEAN = 1, TJ_EMBEDDING_BAG_MAX = 2 };

/** A bag layout: bag b holds positions [offsets[b], end(b)) of the indices,
 * end(b) = offsets[b + 1] when there is one, else n. With include_last_offset
 * the last offset ends the last bag (nbags = noffsets - 1) and positions
 * from it on belong to no bag. */
typedef struct tj_k_bags {
    const int64_t *idx;     /**< the n indices */
    int64_t n;
    const int64_t *offsets; /**< noffsets >= nbags starts, sorted, offsets[0] = 0 */
    int64_t noffsets, nbags;
    int64_t padding_idx;    /**< an index that adds nothing and is not counted; -1: none */
} tj_k_bags;

/** ATen's make_offset2bag: offset2bag[i] = (number of offsets <= i) - 1,
 * the bag of position i (nbags for positions past include_last_offset's
 * last offset). */
void tj_k_embedding_bag_offset2bag(const tj_k_bags *b, int64_t *offset2bag);

/** The forward: out [nbags, dim] contiguous, of dtype (float32 / float64)
 * like w (row r at w + r*wrs elements, its elements wcs apart); psw the
 * per-sample weights (sum only; NULL for none, contiguous, w's dtype);
 * bag_size [nbags] the count of non-padding indices per bag (written for mean
 * and max, NULL otherwise); max_indices [nbags, dim] (max only) the weight
 * row of each maximum, the first one on ties, 0 in empty bags. Empty bags
 * give zeros. */
void tj_k_embedding_bag(tj_dtype dtype, const tj_k_bags *b, int mode, const void *w, int64_t wrs, int64_t wcs,
                        int64_t dim, const void *psw, void *out, int64_t *bag_size, int64_t *max_indices,
                        int nthreads);

/** ATen's _embedding_bag_dense_backward for sum and mean: gw [num, dim] = 0,
 * then for each position i whose index k is not b->padding_idx and whose bag
 * o = offset2bag[i] lies in [0, nbags): gw[k] += g[o] * psw[i] (psw NULL: 1)
 * / divisor(k) (scale_grad_by_freq) / bag_size[o] (mean, when nonzero), in
 * position order; divisor(k) is ATen 1.13's (see freq_divisors in
 * embedding_bag.c: the count of k only while every smaller index occurs
 * once). g contiguous [nbags, dim]; counts scratch of 2 * num entries. */
void tj_k_embedding_bag_backward_sum_mean(tj_dtype dtype, const tj_k_bags *b, const int64_t *offset2bag, int mode,
                                          const int64_t *bag_size, const void *psw, bool scale_grad_by_freq,
                                          int64_t *counts, const void *g, int64_t dim, int64_t num, void *gw,
                                          int nthreads);

/** The max backward: gw [num, dim] = 0, then gw[max_indices[o, j], j] +=
 * g[o, j] for each bag o with bag_size[o] > 0, in bag order. */
void tj_k_embedding_bag_backward_max(tj_dtype dtype, int64_t nbags, const int64_t *bag_size,
                                     const int64_t *max_indices, const void *g, int64_t dim, int64_t num, void *gw);

/** ATen's _embedding_bag_per_sample_weights_backward (sum): out[i] =
 * dot(g[offset2bag[i]], w[idx[i]]), 0 for padding positions and those in no
 * bag. g contiguous [nbags, dim]; w as in tj_k_embedding_bag. */
void tj_k_embedding_bag_psw_backward(tj_dtype dtype, const tj_k_bags *b, const int64_t *offset2bag, const void *g,
                                     const void *w, int64_t wrs, int64_t wcs, int64_t dim, void *out);

#endif
