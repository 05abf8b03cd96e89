/* Runs every reference case of ../shared/conformance (PyTorch 1.13, float64
 * references) through the same runner as `tjit conform`, and the project's
 * own cases for the operators the shared set lacks (tests/conformance). */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "tools/conform.h"

static const char *cases_dir(void)
{
    static char path[4096];
    const char *shared = getenv("TJ_SHARED_DIR");
    snprintf(path, sizeof path, "%s/conformance/cases", shared ? shared : "../shared");
    return path;
}

Test(conformance, every_implemented_case_matches_pytorch)
{
    const char *paths[1] = {cases_dir()};
    tj_conform_summary s = tj_conform_run_paths(paths, 1, stderr, false);
    cr_expect_gt(s.passed + s.failed + s.skipped, 400, "found only %d cases under %s",
                 s.passed + s.failed + s.skipped, paths[0]);
    cr_expect_eq(s.failed, 0, "%d conformance cases failed (listed above)", s.failed);
}

/* Operators added after the shared set was written (roll, the elementwise
 * math functions, advanced indexing, resampling, pixel_shuffle):
 * tests/conformance/README.md says how the cases were made. */
Test(conformance, every_local_case_matches_pytorch)
{
    const char *dir = getenv("TJ_LOCAL_CASES");
    const char *paths[1] = {dir ? dir : "tests/conformance/cases"};
    tj_conform_summary s = tj_conform_run_paths(paths, 1, stderr, false);
    cr_expect_geq(s.passed, 438, "found only %d passing cases under %s", s.passed, paths[0]);
    cr_expect_eq(s.failed + s.skipped, 0, "%d local cases failed, %d skipped (listed above)", s.failed, s.skipped);
}

Test(conformance, malformed_case_is_a_failure_not_a_crash)
{
    char why[512];
    cr_expect_eq(tj_conform_run_case("/nonexistent/case", why, sizeof why), TJ_CASE_FAIL);
    cr_expect(strstr(why, "case.json") != NULL, "reason: %s", why);
}
