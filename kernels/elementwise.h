/* Elementwise loops over contiguous arrays (see runtime/iter.h for the
 * tj_loop_fn contract). Kernels know no tensor, only pointers and counts. */
#ifndef TJIT_KERNELS_ELEMENTWISE_H
#define TJIT_KERNELS_ELEMENTWISE_H

#include <stdint.h>

#include "tjit/core.h"

typedef struct tj_k_axpby_args {
    double alpha;
    tj_dtype dtype;
} tj_k_axpby_args;

/** out = in[0] + alpha * in[1], in the dtype given by ctx (tj_k_axpby_args). */
void tj_k_add_loop(int64_t n, void *out, const void *const *in, const void *ctx);

#endif
