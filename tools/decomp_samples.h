/* Extra samples for the decomposition verifier: calls of operators that have
 * no conformance case (in-place and optimiser operators, clamp.Tensor, ...)
 * and of the semantic traps every decomposition must get right (addmm with
 * beta = 0 and nan in self, var with correction >= N, nll_loss with every
 * target ignored, ...).
 *
 * A sample is an operator name and its arguments in schema order, separated
 * by spaces, each read as the schema's type says:
 *   tensors   f32[2,3] (uniform in [-3, 3)), f64[] (0-dim), i64[4]<5 (ints
 *             in [0, 5)), b[3] (random bools), or explicit values in row-major
 *             order: f32[3]{1,nan,-inf}, i64[2]{-100,1}, b[2]{1,0}
 *   lists     (f32[2,3];f32[1,3]) for Tensor[], (None;i64[2]<3) for Tensor?[],
 *             [1,2] for int[], [true,false]
 *   scalars   2 (int), 2.0 / 1e-5 / inf / -inf / nan (float), true, 'tanh',
 *             float32 (a dtype), None */
#ifndef TJIT_TOOLS_DECOMP_SAMPLES_H
#define TJIT_TOOLS_DECOMP_SAMPLES_H

#include <stdint.h>

#include "conform.h"

typedef struct tj_decomp_sample {
    const char *op;   /**< "aten::clamp.Tensor" */
    const char *args; /**< "f32[3,4] None f32[1,4]" */
    const char *note; /**< what it exercises */
} tj_decomp_sample;

int tj_decomp_sample_count(void);
const tj_decomp_sample *tj_decomp_sample_at(int i);

/** Decodes sample s into *c (random values drawn from *rng); tensors belong
 * to the open scope. TJ_OK, or TJ_ERR_PARSE with the reason in `why`. Call
 * tj_conform_case_free(c) afterwards. */
tj_status tj_decomp_sample_decode(const tj_decomp_sample *s, tj_conform_case *c, uint64_t *rng, char *why,
                                  size_t why_len);

#endif
