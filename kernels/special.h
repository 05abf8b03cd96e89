/* Special functions of torch.special and torch.distributions (lgamma,
 * digamma, polygamma, erfinv, erfc, the modified Bessel functions, ndtri,
 * ...), scalar float64, and the elementwise loops that apply them to
 * float32 or float64 arrays. float32 values are computed in float64 and
 * rounded once: the float64 results are accurate to a few ulps, so the
 * float32 ones are the correctly rounded values nearly always.
 *
 * Methods: lgamma and erfc are libm's, as torch's (glibc's scalar ones are
 * ~10x faster than SLEEF's scalar lgamma and erfc, and give torch's bits); digamma,
 * trigamma and the Hurwitz zeta behind polygamma follow Cephes as
 * PyTorch 1.13's CPU kernels do (recurrence up to x >= 10, the asymptotic
 * series, reflection for x < 0), so that their values at the poles and for
 * negative x are torch's; erfinv and ndtri take Giles' approximation as a
 * first guess and refine it by Halley steps on erf / erfc; i0, i1 and their
 * exponentially scaled forms sum their power series up to |x| = 30 and the
 * asymptotic expansion beyond. */
#ifndef TJIT_KERNELS_SPECIAL_H
#define TJIT_KERNELS_SPECIAL_H

#include <stdint.h>

#include "tjit/core.h"

double tj_k_lgamma(double x);
/** psi(x) = d/dx lgamma(x): -inf at +0, +inf at -0, nan at the negative
 * integers and -inf, as torch. */
double tj_k_digamma(double x);
/** The n-th derivative of digamma (n >= 0): digamma for 0, trigamma for 1,
 * (-1)^(n+1) n! zeta(n + 1, x) beyond. */
double tj_k_polygamma(int64_t n, double x);
/** trigamma in float32 arithmetic, as ATen's float kernel (polygamma(1, x)
 * of float32 x: its values at the poles -1, -2, ... differ from float64's). */
float tj_k_trigamma_f32(float x);
/** The inverse of erf on [-1, 1]: +-inf at +-1, nan outside. */
double tj_k_erfinv(double y);
double tj_k_erfc(double x);
/** The inverse of the standard normal CDF on [0, 1]: -inf at 0, inf at 1,
 * nan outside. */
double tj_k_ndtri(double p);
/** log of the standard normal CDF, accurate far into the lower tail
 * (ATen's calc_log_ndtr: log1p(-erfc(x / sqrt 2) / 2) from -1 up, the
 * scaled erfc below): -inf at -inf, -0 at inf, nan for nan. */
double tj_k_log_ndtr(double x);
/** Modified Bessel functions of the first kind, orders 0 and 1, and their
 * exponentially scaled forms (times exp(-|x|)). */
double tj_k_i0(double x);
double tj_k_i0e(double x);
double tj_k_i1(double x);
double tj_k_i1e(double x);

/** A function of one value and the operator's parameter (polygamma's n,
 * logit's eps). */
typedef double (*tj_k_special1_fn)(double x, double param);
/** A function of two values. */
typedef double (*tj_k_special2_fn)(double a, double b);

typedef struct tj_k_special_args {
    tj_dtype dtype; /**< float32 or float64: inputs and output */
    tj_k_special1_fn fn1;
    tj_k_special2_fn fn2;
    double param;
} tj_k_special_args;

/** out = fn1(in[0], param) (tj_loop_fn; ctx is tj_k_special_args). */
void tj_k_special1_loop(int64_t n, void *out, const void *const *in, const void *ctx);
/** out = fn2(in[0], in[1]) (tj_loop_fn; ctx is tj_k_special_args). */
void tj_k_special2_loop(int64_t n, void *out, const void *const *in, const void *ctx);

#endif
