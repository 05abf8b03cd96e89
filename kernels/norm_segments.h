/* Batch and group normalisation over contiguous [N, C, HW] data, seen as
 * N * C segments of HW elements (segment s = n * C + c). Both reduce and
 * rescale whole segments, so three passes serve them (and their backward):
 *   - moments: each segment's mean and sum of squared deviations (M2), in
 *     double, from float vector sums of x - shift around a shift taken from
 *     the segment (exact for a constant segment; the pass runs again around
 *     the mean when the shift was far from it, as the layer-norm rows do);
 *     the caller combines segments per channel or group (Chan et al.);
 *   - dots: each segment's sum of g and of g * (x - shift[s]) (double);
 *   - affine: y = (x - shift[s]) * alpha[s] + g * beta[s] + gamma[s], with x
 *     or g NULL dropping that term.
 * Segments are spread over threads; float32 runs the per-ISA loops of
 * norm_segments_isa.h (AVX-512 or AVX2, chosen at run time), float64 and
 * machines without AVX2 portable C. */
#ifndef TJIT_KERNELS_NORM_SEGMENTS_H
#define TJIT_KERNELS_NORM_SEGMENTS_H

#include <stdint.h>

#include "tjit/core.h"

typedef struct tj_k_segments {
    tj_dtype dtype; /* float32 or float64: x, g and y */
    int64_t count;  /* segments */
    int64_t len;    /* elements per segment (>= 1) */
    int nthreads;
} tj_k_segments;

/** mean[s] and m2[s] = sum over segment s of (x - mean[s])^2. */
void tj_k_segment_moments(const tj_k_segments *s, const void *x, double *mean, double *m2);

/** sum_g[s] = sum of g and sum_gx[s] = sum of g * (x - shift[s]) over
 * segment s. */
void tj_k_segment_dots(const tj_k_segments *s, const void *g, const void *x, const double *shift, double *sum_g,
                       double *sum_gx);

/** y = (x - shift[s]) * alpha[s] + g * beta[s] + gamma[s] over segment s; x
 * NULL drops the first term (shift and alpha unread), g NULL the second
 * (beta unread). y may be x or g. */
void tj_k_segment_affine(const tj_k_segments *s, const void *x, const void *g, const double *shift,
                         const double *alpha, const double *beta, const double *gamma, void *y);

/* Per-ISA float32 loops over segments [s0, s1) (norm_segments_isa.h). */
#define TJ_K_SEGMENT_DECLARE(isa)                                                                             \
    void tj_k_segment_moments_f32_##isa(const float *x, int64_t len, int64_t s0, int64_t s1, double *mean,      \
                                        double *m2);                                                          \
    void tj_k_segment_dots_f32_##isa(const float *g, const float *x, int64_t len, int64_t s0, int64_t s1,       \
                                     const double *shift, double *sum_g, double *sum_gx);                     \
    void tj_k_segment_affine_f32_##isa(const float *x, const float *g, int64_t len, int64_t s0, int64_t s1,     \
                                       const double *shift, const double *alpha, const double *beta,          \
                                       const double *gamma, float *y);
TJ_K_SEGMENT_DECLARE(avx512)
TJ_K_SEGMENT_DECLARE(avx2)
#undef TJ_K_SEGMENT_DECLARE

#endif
