/* The conformance runner: runs the reference cases of
 * ../shared/conformance/cases (format in ../shared/conformance/README.md)
 * through the dispatcher. Used by `tjit conform` and by the Criterion suite. */
#ifndef TJIT_TOOLS_CONFORM_H
#define TJIT_TOOLS_CONFORM_H

#include <stdio.h>

#include "tjit/tjit.h"

typedef enum tj_case_result { TJ_CASE_PASS, TJ_CASE_FAIL, TJ_CASE_SKIP } tj_case_result;

typedef struct tj_conform_summary {
    int passed, failed, skipped;
} tj_conform_summary;

#define TJ_CONFORM_MAX_LIST 64

/** One case decoded without running it: the operator, its boxed arguments
 * and the expected outputs (NULL where the case lists none). The tensors
 * belong to the scope open while decoding; the strings are freed by
 * tj_conform_case_free. */
typedef struct tj_conform_case {
    const tj_op *op;
    tj_value args[TJ_MAX_ARGS];
    tj_tensor *expected[TJ_MAX_RETURNS];
    double rtol, atol;
    /* storage the list and string arguments point into */
    int64_t ints[TJ_MAX_ARGS][TJ_CONFORM_MAX_LIST];
    bool bools[TJ_MAX_ARGS][TJ_CONFORM_MAX_LIST];
    double floats[TJ_MAX_ARGS][TJ_CONFORM_MAX_LIST];
    tj_tensor *lists[TJ_MAX_ARGS][TJ_CONFORM_MAX_LIST];
    char *strs[TJ_MAX_ARGS];
} tj_conform_case;

/** Decodes the case in folder `dir` into *c (PASS), or says why not in
 * `why` (SKIP: operator not implemented; FAIL: malformed case). Call
 * tj_conform_case_free afterwards in every case. */
tj_case_result tj_conform_decode_case(const char *dir, tj_conform_case *c, char *why, size_t why_len);
void tj_conform_case_free(tj_conform_case *c);

/** Compares `got` with `expected` as the conformance README says (exact
 * dtype and shape; int64 / bool exact; floats within atol + rtol * |e|, nan
 * and infinities matching). On a mismatch writes the reason into `why`. */
bool tj_conform_compare(const tj_tensor *got, const tj_tensor *expected, double rtol, double atol, char *why,
                        size_t why_len);

/** Runs the case in folder `dir` (case.json + .npy files). On failure or skip
 * writes a one-line reason into `why`. A malformed case is a failure. */
tj_case_result tj_conform_run_case(const char *dir, char *why, size_t why_len);

/** Runs every case folder found under each path (a case folder itself, a
 * folder of them, or a folder whose cases/ folder holds them, as
 * ../shared/conformance), sorted by name. Prints a line per failing case to
 * `out` (and per skipped case when `verbose`), then "N passed, N failed[, N
 * skipped]". A path that cannot be read or holds no case counts as one
 * failure, with a line naming it. */
tj_conform_summary tj_conform_run_paths(const char *const *paths, int n, FILE *out, bool verbose);

#endif
