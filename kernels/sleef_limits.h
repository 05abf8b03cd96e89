/* Where SLEEF's 1.0-ULP exp gives +0: below -104 in float32 (checked for
 * every float32 there, on each of its ISAs' functions and the scalar one)
 * and below -1000 in float64 (its source's limit). It computes every lane,
 * then selects +0 there; a lane below the limit may as well go in as 0 and
 * come out as +0, the same bits, because scaling such an argument
 * underflows, which an Intel CPU that does not flush denormals runs as a
 * microcode assist of ~100 cycles per instruction: at every masked -inf of a
 * causal softmax, every underflowing probability, sigmoid or silu of a large
 * argument. */
#ifndef TJIT_KERNELS_SLEEF_LIMITS_H
#define TJIT_KERNELS_SLEEF_LIMITS_H

#define TJ_SLEEF_EXPF_ZERO_BELOW -104.0f
#define TJ_SLEEF_EXP_ZERO_BELOW -1000.0

#endif
