/* Runs the tests registered through the Criterion stand-in
 * (criterion/criterion.h here): each in a child process of its own, one
 * after another, suites and tests in name order as Criterion does. The
 * runner itself never calls tjit, so every child starts from the
 * library's state at load. An argument keeps only the tests whose
 * "suite::name" contains it. Exit status 1 when a test failed, crashed or
 * timed out. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "criterion/criterion.h"

#define MAX_TESTS 1024
#define MAX_SUITES 64
#define EXIT_SKIPPED 77 /* a child's status for a skipped test */

typedef struct test {
    const char *suite, *name;
    void (*fn)(void);
    const struct shim_options *o;
} test;

static test tests[MAX_TESTS];
static int n_tests;
static struct {
    const char *name;
    const struct shim_options *o;
} suites[MAX_SUITES];
static int n_suites;

/* The child's test and its suite's options (NULL: none), where a fatal
 * failure or a skip goes. */
static const test *current;
static const struct shim_options *current_suite;
static jmp_buf stop_test;
/* The running test's failed checks so far, in memory shared with the
 * runner: a test that ends its process itself with status 0 (exit(0) after
 * a failed cr_expect) still fails, as Criterion, which hears of each failed
 * check as it happens, reports it. */
static volatile int *failures;

static void full(const char *what, int max)
{
    fprintf(stderr, "criterion shim: more than %d %s\n", max, what);
    exit(2);
}

void shim_register_test(const char *suite, const char *name, void (*fn)(void), const struct shim_options *o)
{
    if (n_tests == MAX_TESTS) full("tests", MAX_TESTS);
    tests[n_tests++] = (test){suite, name, fn, o};
}

void shim_register_suite(const char *suite, const struct shim_options *o)
{
    if (n_suites == MAX_SUITES) full("suites", MAX_SUITES);
    suites[n_suites].name = suite;
    suites[n_suites++].o = o;
}

void shim_fail(bool fatal, const char *file, int line, const char *cond, const char *fmt, ...)
{
    fprintf(stderr, "[FAIL] %s::%s: %s:%d: %s", current->suite, current->name, file, line, cond);
    if (fmt[0]) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, ": ");
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    (*failures)++;
    if (fatal) longjmp(stop_test, 1);
}

void shim_skip(const char *fmt, ...)
{
    fprintf(stderr, "[SKIP] %s::%s: ", current->suite, current->name);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    longjmp(stop_test, 2);
}

static const struct shim_options *suite_options(const char *suite)
{
    for (int i = 0; i < n_suites; i++)
        if (strcmp(suites[i].name, suite) == 0) return suites[i].o;
    return NULL;
}

static int by_name(const void *pa, const void *pb)
{
    const test *a = pa, *b = pb;
    int c = strcmp(a->suite, b->suite);
    return c ? c : strcmp(a->name, b->name);
}

/* In the child: fixtures and test as Criterion runs them (the test's
 * timeout, else its suite's); its exit status says how it went. */
static _Noreturn void run_child(const test *t)
{
    current = t;
    current_suite = suite_options(t->suite);
    double timeout = t->o->timeout > 0 ? t->o->timeout : current_suite ? current_suite->timeout : 0;
    unsigned seconds = (unsigned)timeout;
    if (seconds < timeout) seconds++;
    if (seconds) alarm(seconds); /* SIGALRM ends the child: the runner reports it */
    int stop = setjmp(stop_test);
    if (!stop) {
        if (current_suite && current_suite->init) current_suite->init();
        if (current->o->init) current->o->init();
        current->fn();
    }
    if (!setjmp(stop_test)) { /* the finis run after a stop too, as Criterion's */
        if (current->o->fini) current->o->fini();
        if (current_suite && current_suite->fini) current_suite->fini();
    }
    exit(*failures ? 1 : stop == 2 ? EXIT_SKIPPED : 0); /* not _exit: LeakSanitizer checks at exit */
}

int main(int argc, char **argv)
{
    qsort(tests, (size_t)n_tests, sizeof *tests, by_name);
    failures = mmap(NULL, sizeof *failures, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (failures == MAP_FAILED) {
        perror("criterion shim: mmap");
        return 2;
    }
    int run = 0, passed = 0, skipped = 0, failed = 0;
    char full_name[256];
    for (int i = 0; i < n_tests; i++) {
        const test *t = &tests[i];
        snprintf(full_name, sizeof full_name, "%s::%s", t->suite, t->name);
        if (argc > 1 && !strstr(full_name, argv[1])) continue;
        fflush(NULL); /* nothing buffered is written twice */
        *failures = 0;
        pid_t pid = fork();
        if (pid < 0) {
            perror("criterion shim: fork");
            return 2;
        }
        if (pid == 0) run_child(t);
        int status;
        while (waitpid(pid, &status, 0) < 0)
            if (errno != EINTR) {
                perror("criterion shim: waitpid");
                return 2;
            }
        run++;
        bool clean = WIFEXITED(status) && !*failures; /* a skip after a failed check fails */
        if (clean && WEXITSTATUS(status) == 0) {
            passed++;
        } else if (clean && WEXITSTATUS(status) == EXIT_SKIPPED) {
            skipped++;
        } else {
            failed++;
            if (WIFSIGNALED(status))
                fprintf(stderr, "[FAIL] %s: %s (signal %d: %s)\n", full_name,
                        WTERMSIG(status) == SIGALRM ? "timed out" : "crashed", WTERMSIG(status),
                        strsignal(WTERMSIG(status)));
            else if (WEXITSTATUS(status) != 1 || !*failures)
                fprintf(stderr, "[FAIL] %s: exit status %d after %d failed checks\n", full_name,
                        WEXITSTATUS(status), *failures);
        }
    }
    printf("Synthesis: Tested: %d | Passing: %d | Failing: %d | Skipped: %d\n", run, passed, failed, skipped);
    return failed ? 1 : 0;
}
