/* A stand-in for Criterion's header, for the sanitizer builds
 * (-Dcriterion_shim=true): shim_main.c runs each test in a child forked
 * from a runner that has not touched tjit, where Criterion execs the test
 * program anew for each test. Each exec loads Criterion's ~30 libraries
 * (libgit2, mbedTLS, Kerberos...) and, under AddressSanitizer, starts its
 * runtime again: ~0.25 s of CPU per test there, most of the sanitizer
 * stage's test time. A fork keeps what the tests rely on: a process of
 * their own, with the library's state (thread counts and environment read
 * once, hooks) fresh. Under ThreadSanitizer Criterion cannot start at all
 * (its inheritable arena for the forked test processes fails to map:
 * Criterion issue 274).
 *
 * Covers what the tests use: Test and TestSuite with .init, .fini and
 * .timeout (suite's init before the test's, finis in reverse, as
 * Criterion); cr_assert* (the test stops, its finis still run), cr_expect*
 * (it goes on), cr_skip_test, cr_log_*. Messages are a format string
 * literal and its arguments. */
#ifndef TJIT_CRITERION_SHIM_CRITERION_H
#define TJIT_CRITERION_SHIM_CRITERION_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* As Criterion's own header: what its macros expand to in a test (an int
 * compared with a size_t, a check without a message passing "" as its
 * format) does not warn */
#pragma GCC system_header

struct shim_options {
    int unused_; /* the first initialiser, so that options may be empty */
    void (*init)(void);
    void (*fini)(void);
    double timeout; /* seconds, 0: none */
};

void shim_register_test(const char *suite, const char *name, void (*fn)(void), const struct shim_options *o);
void shim_register_suite(const char *suite, const struct shim_options *o);
/* A failed check at file:line: prints it; fatal: the test stops there. */
void shim_fail(bool fatal, const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void shim_skip(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#define Test(suite, name, ...)                                                                       \
    static void suite##_##name(void);                                                                \
    __attribute__((constructor)) static void suite##_##name##_register(void)                         \
    {                                                                                                \
        static const struct shim_options o = {.unused_ = 0, __VA_ARGS__};                           \
        shim_register_test(#suite, #name, suite##_##name, &o);                                       \
    }                                                                                                \
    static void suite##_##name(void)

#define TestSuite(suite, ...)                                                                        \
    __attribute__((constructor)) static void suite##_suite_register(void)                            \
    {                                                                                                \
        static const struct shim_options o = {.unused_ = 0, __VA_ARGS__};                           \
        shim_register_suite(#suite, &o);                                                             \
    }

#define SHIM_CHECK_(fatal, cond, ...)                                                                \
    do {                                                                                             \
        if (!(cond)) shim_fail(fatal, __FILE__, __LINE__, #cond, "" __VA_ARGS__);                    \
    } while (0)

#define cr_assert(cond, ...) SHIM_CHECK_(true, cond, __VA_ARGS__)
#define cr_expect(cond, ...) SHIM_CHECK_(false, cond, __VA_ARGS__)
#define cr_assert_not(cond, ...) cr_assert(!(cond), __VA_ARGS__)
#define cr_expect_not(cond, ...) cr_expect(!(cond), __VA_ARGS__)
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b), __VA_ARGS__)
#define cr_expect_eq(a, b, ...) cr_expect((a) == (b), __VA_ARGS__)
#define cr_assert_neq(a, b, ...) cr_assert((a) != (b), __VA_ARGS__)
#define cr_expect_neq(a, b, ...) cr_expect((a) != (b), __VA_ARGS__)
#define cr_assert_gt(a, b, ...) cr_assert((a) > (b), __VA_ARGS__)
#define cr_expect_gt(a, b, ...) cr_expect((a) > (b), __VA_ARGS__)
#define cr_assert_geq(a, b, ...) cr_assert((a) >= (b), __VA_ARGS__)
#define cr_expect_geq(a, b, ...) cr_expect((a) >= (b), __VA_ARGS__)
#define cr_assert_lt(a, b, ...) cr_assert((a) < (b), __VA_ARGS__)
#define cr_expect_lt(a, b, ...) cr_expect((a) < (b), __VA_ARGS__)
#define cr_assert_leq(a, b, ...) cr_assert((a) <= (b), __VA_ARGS__)
#define cr_expect_leq(a, b, ...) cr_expect((a) <= (b), __VA_ARGS__)
#define cr_assert_null(p, ...) cr_assert((p) == NULL, __VA_ARGS__)
#define cr_expect_null(p, ...) cr_expect((p) == NULL, __VA_ARGS__)
#define cr_assert_not_null(p, ...) cr_assert((p) != NULL, __VA_ARGS__)
#define cr_expect_not_null(p, ...) cr_expect((p) != NULL, __VA_ARGS__)
/* |a - b| <= eps; a nan fails, as Criterion's two comparisons do */
#define cr_expect_float_eq(a, b, eps, ...) cr_expect(fabs((double)(a) - (double)(b)) <= (eps), __VA_ARGS__)
#define cr_expect_arr_eq(a, b, size, ...) cr_expect(memcmp((a), (b), (size)) == 0, __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) cr_assert(strcmp((a), (b)) == 0, __VA_ARGS__)
#define cr_expect_str_eq(a, b, ...) cr_expect(strcmp((a), (b)) == 0, __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) cr_assert(strcmp((a), (b)) != 0, __VA_ARGS__)
#define cr_expect_str_neq(a, b, ...) cr_expect(strcmp((a), (b)) != 0, __VA_ARGS__)
#define cr_assert_fail(...) shim_fail(true, __FILE__, __LINE__, "cr_assert_fail", "" __VA_ARGS__)
#define cr_expect_fail(...) shim_fail(false, __FILE__, __LINE__, "cr_expect_fail", "" __VA_ARGS__)
#define cr_skip_test(...) shim_skip("" __VA_ARGS__)
#define cr_log_info(...) (fprintf(stderr, "[----] " __VA_ARGS__), fputc('\n', stderr))
#define cr_log_error(...) (fprintf(stderr, "[ERR ] " __VA_ARGS__), fputc('\n', stderr))

#endif
