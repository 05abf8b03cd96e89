/* The running selections and log-sum-exp along one dim (ATen 1.13's
 * cummax, cummin, logcumsumexp CPU kernels, ReduceOps.cpp), over a
 * contiguous [outer, n, inner] array, its results in the same layout. */
#ifndef TJIT_KERNELS_CUMULATIVE_H
#define TJIT_KERNELS_CUMULATIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "tjit/core.h"

/** cummax (want_max) or cummin: values[.., i, ..] = the running maximum
 * (minimum) of in[.., 0..i, ..] and indices its position, as ATen's
 * cummax_cummin_helper: an element equal to the running value takes its
 * place (the last of equal elements wins), a nan takes it and then holds it
 * (a later nan moves the index on). dtype float32, float64, int64 or bool.
 * Up to nthreads threads. */
void tj_k_cummax_cummin(tj_dtype dtype, bool want_max, const void *in, void *values, int64_t *indices, int64_t outer,
                        int64_t n, int64_t inner, int nthreads);

/** logcumsumexp: out[.., i, ..] = log(sum of exp(in[.., 0..i, ..])), as
 * ATen's _log_add_exp_helper chain from -inf: log1p(exp(min - max)) + max
 * in the input's own precision, nan propagating, equal infinities kept.
 * dtype float32 or float64; out may be in itself. Up to nthreads threads. */
void tj_k_logcumsumexp(tj_dtype dtype, const void *in, void *out, int64_t outer, int64_t n, int64_t inner,
                       int nthreads);

#endif
