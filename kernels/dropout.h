/* The elementwise part of dropout (the mask comes from the random
 * generator, runtime/random.h). */
#ifndef TJIT_KERNELS_DROPOUT_H
#define TJIT_KERNELS_DROPOUT_H

#include <stdint.h>

#include "tjit/core.h"

typedef struct tj_k_dropout_args {
    double scale; /**< 1/(1-p), or 0 when p = 1 */
    tj_dtype dtype;
} tj_k_dropout_args;

/** tj_loop_fn (runtime/iter.h): out = (in[0] * in[1]) * scale in the dtype
 * of ctx (tj_k_dropout_args), float32 or float64; in[1] is the 0/1 mask
 * converted to that dtype. As PyTorch's input.mul(mask).mul_(scale), a nan
 * or inf input stays nan where it is dropped. */
void tj_k_dropout_loop(int64_t n, void *out, const void *const *in, const void *ctx);

#endif
