/* The decomposition verifier (PyTorch's test_decomp, in C): runs every
 * registered decomposition against its operator's kernel on the operator's
 * conformance cases and on random variants of them (new values, transposed
 * strides, broadcast stride-0 views, empty batches), and compares both with
 * a float64 reference (the kernel run on float64 copies of the inputs,
 * rounded to the output dtype). A decomposition passes a sample when
 *   - it fails exactly when the kernel fails (same status), and otherwise
 *   - its outputs have the kernel's dtypes, shapes and defined-ness,
 *   - its int64 / bool outputs equal the kernel's,
 *   - its worst absolute float error is at most the kernel's + 1e-7 +
 *     2^-23 |ref| (|ref| where that error is: about one float32 ulp, for
 *     kernels rounded nearly correctly, as the float32 gelu), and
 *     within the case's tolerance wherever the kernel's is,
 *   - (operators whose decomposition reorders a sum of products, listed in
 *     decomp_verify.c: convolution, convolution_backward) the above with
 *     each element's error first reduced by the bound any summation order
 *     obeys (Higham, Accuracy and Stability of Numerical Algorithms, 3.1):
 *       |fl(sum of n products) - exact| <= gamma_n * sum |a*b|,
 *       gamma_n = n u / (1 - n u), u the output dtype's unit roundoff
 *     (2^-24 for float32), with n and sum |a*b| of each output element
 *     read from the float64 kernel run on all-ones and on absolute inputs,
 *     as PyTorch's test_decomp loosens its tolerance per (operator, dtype)
 *     in tol_table;
 *   - its traced graph (make_fx of the single call under
 *     tj_core_decompositions(), real and fake mode) holds primitives only.
 * Random operators are compared under the same generator seed. */
#ifndef TJIT_TOOLS_DECOMP_VERIFY_H
#define TJIT_TOOLS_DECOMP_VERIFY_H

#include <stdio.h>

#include "tjit/tjit.h"

/** Slack of the decomposition's error over the kernel's: absolute, plus
 * relative to the reference value where the decomposition's error is: one
 * to two float32 ulps of it, since a chain of primitives rounds at every
 * step where a fused kernel rounds once (gelu_backward's decomposition is
 * 2 ulps off at |x| near 3 where the portable kernel is exact). */
#define TJ_VERIFY_SLACK 1e-7
#define TJ_VERIFY_REL_SLACK 0x1p-22

/** What the verifier found for one operator. Errors are the worst absolute
 * differences from the float64 reference over all float outputs of all
 * samples (0 when the operator has none). */
typedef struct tj_verify_row {
    const tj_op *op;
    int cases;            /**< conformance cases run */
    int samples;          /**< samples run (cases and their variants) */
    double kernel_err;
    double decomp_err;
    int violations;       /**< samples that failed a rule above */
    int reordered;        /**< samples that passed only thanks to the
                               reordering bound (0 for other operators) */
    char first_violation[320]; /**< sample name and reason of the first one */
} tj_verify_row;

/** Verifies the decompositions of `ops` (n operators; NULL with n = 0 means
 * every operator with a registered decomposition that has a kernel) with the
 * conformance cases found under the n_dirs folders `case_dirs` together (a
 * folder named twice is read once). Writes one row per operator into rows
 * (room for max_rows) and returns their count, or -1 when a case folder
 * cannot be read (TJ_ERR_IO, tj_last_error() naming it) or listed
 * (TJ_ERR_OUT_OF_MEMORY). `log`, when not NULL, gets a line per violation. */
int tj_decomp_verify(const char *const *case_dirs, int n_dirs, const tj_op *const *ops, int n, tj_verify_row *rows,
                     int max_rows, FILE *log);

/** Prints rows as a table (operator, cases, samples, worst kernel and
 * decomposition errors, verdict, and for a passing operator the samples
 * that needed the reordering bound) followed by "N passed, N failed". */
void tj_verify_report(const tj_verify_row *rows, int n, FILE *f);

#endif
