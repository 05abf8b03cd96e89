/* tanh over contiguous float32, tjit's own vector kernels in place of
 * SLEEF's (at the same accuracy):
 *   - |x| < 0.625: tanh(a) = a + a^3 P(a^2), a = |x|, P of degree 5 in a^2
 *     (tanh_tables.h), evaluated with one final fused multiply-add;
 *   - otherwise: tanh(a) = (1 - e) / (1 + e), e = e^(-2a) in (0, 0.29] by
 *     the Cody-Waite reduction and exp polynomial of the gelu kernels
 *     (exp_isa.h); the rounded quotient is corrected by its residual
 *     against the exact e (tanh_isa.h), so that e's own error (scaled by
 *     2e / (1 - e^2) <= 0.63) and the final rounding are the only ones
 *     left. a is clamped to 9.5, where the result rounds to 1.
 * The sign of x is put back last, so tanh(-x) = -tanh(x) bit for bit; each
 * lane's result depends on its own input only (a vector whose lanes are all
 * below 0.625 just skips the exp path).
 *
 * Errors against double-precision tanh over every float32 (checked over
 * every 7th positive one and its negative by tests/test_tanh.c): at most
 * 0.868 ulp with AVX-512 and AVX2 (SLEEF's u10 tanh: 1 ulp); the two may
 * differ by 1 ulp on a few inputs (their approximate reciprocals differ),
 * so results depend on the CPU's instruction set as with SLEEF's; the generic loop rounds C's double tanh, 0.5 ulp.
 *
 * Special values: tanh(+-0) = +-0, tanh(+-inf) = +-1, tanh(nan) = nan,
 * |x| > 9.011 (ln(2^26) / 2) gives +-1 and |x| < 2^-12 gives x itself (bit
 * for bit, subnormals included). */
#ifndef TJIT_KERNELS_TANH_H
#define TJIT_KERNELS_TANH_H

#include <stdint.h>

/** y[i] = tanh(x[i]) for n contiguous float32 (out may equal in). The
 * AVX-512 and AVX2 objects need those instruction sets; the generic one
 * (double precision per element) runs anywhere. */
void tj_k_tanh_f32_avx512(int64_t n, void *out, const void *in);
void tj_k_tanh_f32_avx2(int64_t n, void *out, const void *in);
void tj_k_tanh_f32_generic(int64_t n, void *out, const void *in);

#endif
