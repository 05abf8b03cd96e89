/* Softmax and log-softmax (forward and backward) over one dim of an array
 * seen as [outer, n, inner]: numerically stable (shifted by the maximum),
 * without transposing copies.
 *
 * Layout: element (o, d, j) of an input is at p + o*os + d*ds + j, with the
 * innermost moving dim contiguous: ds == 1 when inner == 1 (row mode, each
 * row fused in registers and L1), otherwise unit stride along j (column
 * mode, blocks of j processed together). Outputs are contiguous
 * [outer, n, inner]. float32 rows use AVX-512 or AVX2 (exp_isa.h's exp,
 * about 1 ulp), chosen at run time; float64 runs portable C.
 *
 * Semantics (ATen's): a row of all -inf gives nan (softmax and
 * log-softmax); a +inf or a nan in a row makes the whole row nan; -inf
 * entries of other rows give 0 (softmax) / -inf (log-softmax). */
#ifndef TJIT_KERNELS_SOFTMAX_H
#define TJIT_KERNELS_SOFTMAX_H

#include <stdbool.h>
#include <stdint.h>

#include "tjit/core.h"

typedef struct tj_k_strided {
    const void *p;
    int64_t os, ds; /* outer and dim strides, elements */
} tj_k_strided;

typedef struct tj_k_softmax_shape {
    tj_dtype dtype; /* float32 or float64 */
    bool log;       /* log-softmax */
    int64_t outer, n, inner;
    int nthreads;
} tj_k_softmax_shape;

/** y = softmax(x) (or log_softmax) over the n dim. */
void tj_k_softmax(const tj_k_softmax_shape *s, tj_k_strided x, void *y);

/** Backward from the forward output y and its gradient g:
 * softmax: gx = y * (g - sum(g * y)); log-softmax: gx = g - exp(y) * sum(g). */
void tj_k_softmax_backward(const tj_k_softmax_shape *s, tj_k_strided g, tj_k_strided y, void *gx);

/** x = exp(x) for n contiguous floats (SLEEF, 1 ULP, vectorised). */
void tj_k_exp_f32(float *x, int64_t n);

/* Per-ISA float32 pieces (softmax_isa.h), selected by softmax.c. The rows
 * function: `rows` rows of n floats, row r of x at x + r*xs, of y at
 * y + r*n (contiguous); each row's bytes do not depend on the rows around
 * it. */
void tj_k_softmax_rows_f32_avx512(const float *x, int64_t xs, float *y, int64_t rows, int64_t n, bool take_log);
void tj_k_softmax_rows_f32_avx2(const float *x, int64_t xs, float *y, int64_t rows, int64_t n, bool take_log);
void tj_k_exp_f32_avx512(float *x, int64_t n);
void tj_k_exp_f32_avx2(float *x, int64_t n);
/* Per-ISA float32 backward row (softmax_backward_isa.h). */
void tj_k_softmax_backward_row_f32_avx512(const float *g, const float *y, float *gx, int64_t n, bool take_log);
void tj_k_softmax_backward_row_f32_avx2(const float *g, const float *y, float *gx, int64_t n, bool take_log);

#endif
