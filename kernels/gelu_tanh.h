/* GELU's tanh approximation and its backward over contiguous float32:
 *   y = x/2 (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3),
 * computed as y = x sigmoid(2u) = x / (1 + e^(-2u)), which has no
 * cancellation for negative x (1 + tanh(u) loses more bits the closer
 * tanh(u) gets to -1: PyTorch's float32 kernel is 30% off at x = -5 and
 * gives -0 below x ~ -5.06). Only e = e^(-2|u|) in (0, 1] is evaluated:
 *   y = x / (1 + e) for x >= 0,  x e / (1 + e) for x < 0;
 * the backward, dy (s + x s (1 - s) 2u'(x)) with s = sigmoid(2u), follows
 * from 1 + tanh(u) = 2s and 1 - tanh(u)^2 = 4 s (1 - s), and
 * s (1 - s) = e / (1 + e)^2.
 *
 * The vector kernels have two paths per vector of lanes, like the exact
 * gelu (gelu.h):
 *   - every lane with |x| < 4: Q = sigmoid(-2|u|) = e / (1 + e) from
 *     piecewise polynomials in a = |x| (gelu_tanh_tables.h: 32 intervals of
 *     degree 5 with AVX-512, 16 of degree 6 with AVX2), no exp, no division;
 *     y = x Q for x < 0, x - a Q for x >= 0;
 *   - otherwise (and for nan and infinities): e = e^(-2|u|) with 2|u| =
 *     a (C1 + C3 a^2) as a float plus a correction (the roundings of a^2, of
 *     the sum and of the constants: a float32 exponent alone costs up to
 *     ~170 ulp near x = -10, 2|u| 2^-24 per rounding), a Cody-Waite
 *     reduction and the exp polynomial of the exact gelu (GELU_EXP); for
 *     x < 0 the 2^n goes on last, so a subnormal e costs no precision.
 * Errors against the formula evaluated in long double, checked over every
 * 61st float32 input on both paths by tests/test_gelu_tanh.c: forward at
 * most 3.2 ulp (1.2 with AVX-512, 1.6 with AVX2 on the polynomial path),
 * backward 5.2 ulp of its larger term (4.3 on the polynomial path); the
 * generic (double) loops 0.5 ulp.
 *
 * Special values, as PyTorch: gelu(nan) = nan, gelu(+inf) = +inf,
 * gelu(-inf) = nan (-inf * 0), gelu(-0) = -0, x < ~-10.6 gives -0; the
 * backward is nan for nan and +-inf, dy for large x and 0 for large -x. */
#ifndef TJIT_KERNELS_GELU_TANH_H
#define TJIT_KERNELS_GELU_TANH_H

#include <stdint.h>

/** y[i] = gelu_tanh(x[i]) for n contiguous float32 (out may equal in). The
 * AVX-512 and AVX2 objects need those instruction sets; the generic one
 * (double precision per element) runs anywhere. */
void tj_k_gelu_tanh_f32_avx512(int64_t n, void *out, const void *in);
void tj_k_gelu_tanh_f32_avx2(int64_t n, void *out, const void *in);
void tj_k_gelu_tanh_f32_generic(int64_t n, void *out, const void *in);

/** out[i] = dy[i] * gelu_tanh'(x[i]) for n contiguous float32. */
void tj_k_gelu_tanh_backward_f32_avx512(int64_t n, void *out, const void *dy, const void *x);
void tj_k_gelu_tanh_backward_f32_avx2(int64_t n, void *out, const void *dy, const void *x);
void tj_k_gelu_tanh_backward_f32_generic(int64_t n, void *out, const void *dy, const void *x);

#endif
