/* The conformance runner: runs the reference cases of
 * ../shared/conformance (format in its README) through the dispatcher. Used by
 * `tjit conform` and by the Criterion suite. */
#ifndef TJIT_TOOLS_CONFORM_H
#define TJIT_TOOLS_CONFORM_H

#include <stdio.h>

#include "tjit/tjit.h"

typedef enum tj_case_result { TJ_CASE_PASS, TJ_CASE_FAIL, TJ_CASE_SKIP } tj_case_result;

typedef struct tj_conform_summary {
    int passed, failed, skipped;
} tj_conform_summary;

/** Runs the case in folder `dir` (case.json + .npy files). On failure or skip
 * writes a one-line reason into `why`. A malformed case is a failure. */
tj_case_result tj_conform_run_case(const char *dir, char *why, size_t why_len);

/** Runs every case folder found under each path (a case folder itself or a
 * folder of them), sorted by name. Prints a line per failing case to `out`
 * (and per skipped case when `verbose`), then "N passed, N failed[, N skipped]". */
tj_conform_summary tj_conform_run_paths(const char *const *paths, int n, FILE *out, bool verbose);

#endif
