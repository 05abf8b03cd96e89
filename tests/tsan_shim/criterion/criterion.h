/* A stand-in for Criterion's header, for ThreadSanitizer builds only:
 * Criterion cannot start under TSan (its inheritable arena for the forked
 * test processes fails to map: Criterion issue 274). Test(...) bodies
 * register themselves and shim_main.c runs them one after another in one
 * process; a failed assertion (cr_expect included) prints where and why and
 * exits with status 1. Covers the macros the concurrency tests use. */
#ifndef TJIT_TSAN_SHIM_CRITERION_H
#define TJIT_TSAN_SHIM_CRITERION_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void shim_register(const char *name, void (*fn)(void));
void shim_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

#define Test(suite, name, ...)                                                                       \
    static void suite##_##name(void);                                                                \
    __attribute__((constructor)) static void suite##_##name##_register(void)                         \
    {                                                                                                \
        shim_register(#suite "::" #name, suite##_##name);                                            \
    }                                                                                                \
    static void suite##_##name(void)

/* the optional message is a format string literal and its arguments */
#define cr_assert(cond, ...)                                                                         \
    do {                                                                                             \
        if (!(cond)) shim_fail(__FILE__, __LINE__, #cond, "" __VA_ARGS__);                           \
    } while (0)
#define cr_expect(cond, ...) cr_assert(cond, __VA_ARGS__)
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b), __VA_ARGS__)
#define cr_expect_eq(a, b, ...) cr_assert((a) == (b), __VA_ARGS__)
#define cr_assert_neq(a, b, ...) cr_assert((a) != (b), __VA_ARGS__)
#define cr_assert_gt(a, b, ...) cr_assert((a) > (b), __VA_ARGS__)
#define cr_expect_gt(a, b, ...) cr_assert((a) > (b), __VA_ARGS__)
#define cr_expect_neq(a, b, ...) cr_assert((a) != (b), __VA_ARGS__)
#define cr_assert_lt(a, b, ...) cr_assert((a) < (b), __VA_ARGS__)
#define cr_expect_lt(a, b, ...) cr_assert((a) < (b), __VA_ARGS__)
#define cr_assert_leq(a, b, ...) cr_assert((a) <= (b), __VA_ARGS__)
#define cr_assert_geq(a, b, ...) cr_assert((a) >= (b), __VA_ARGS__)
#define cr_expect_geq(a, b, ...) cr_assert((a) >= (b), __VA_ARGS__)
#define cr_expect_leq(a, b, ...) cr_assert((a) <= (b), __VA_ARGS__)
#define cr_assert_null(p, ...) cr_assert((p) == NULL, __VA_ARGS__)
#define cr_expect_null(p, ...) cr_assert((p) == NULL, __VA_ARGS__)
#define cr_assert_not_null(p, ...) cr_assert((p) != NULL, __VA_ARGS__)
#define cr_expect_not_null(p, ...) cr_assert((p) != NULL, __VA_ARGS__)
#define cr_expect_float_eq(a, b, eps, ...) cr_assert(fabs((double)(a) - (double)(b)) <= (eps), __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) cr_assert(strcmp((a), (b)) == 0, __VA_ARGS__)
#define cr_expect_str_eq(a, b, ...) cr_assert(strcmp((a), (b)) == 0, __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) cr_assert(strcmp((a), (b)) != 0, __VA_ARGS__)
#define cr_expect_str_neq(a, b, ...) cr_assert(strcmp((a), (b)) != 0, __VA_ARGS__)
#define cr_log_info(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr))

#endif
