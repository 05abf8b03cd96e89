/* Runs the tests registered through the Criterion stand-in
 * (criterion/criterion.h here), in registration order, in this process. */
#include <stdarg.h>

#include "criterion/criterion.h"

#define MAX_TESTS 256

static struct {
    const char *name;
    void (*fn)(void);
} tests[MAX_TESTS];
static int n_tests, passed;
static const char *current;

void shim_register(const char *name, void (*fn)(void))
{
    if (n_tests == MAX_TESTS) {
        fprintf(stderr, "tsan shim: more than %d tests\n", MAX_TESTS);
        exit(2);
    }
    tests[n_tests].name = name;
    tests[n_tests++].fn = fn;
}

void shim_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    fprintf(stderr, "[FAIL] %s: %s:%d: %s", current, file, line, cond);
    if (fmt[0]) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, ": ");
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fprintf(stderr, "\n%d passed, 1 failed\n", passed);
    exit(1);
}

int main(int argc, char **argv)
{
    /* an argument filters by substring of "suite::name" */
    for (int i = 0; i < n_tests; i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1])) continue;
        current = tests[i].name;
        tests[i].fn();
        fprintf(stderr, "[PASS] %s\n", current);
        passed++;
    }
    printf("%d passed, 0 failed\n", passed);
    return 0;
}
