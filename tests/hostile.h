/* Helpers shared by the hostile-input tests (tests/test_hostile*.c). */
#ifndef TJIT_TESTS_HOSTILE_H
#define TJIT_TESTS_HOSTILE_H

#include <criterion/criterion.h>
#include <string.h>

#include "tjit/tjit.h"

/* The last error has `status` and contains each of the strings; then it is
 * cleared, so that the next check starts clean. */
#define EXPECT_ERROR(status, ...)                                                                                \
    do {                                                                                                         \
        cr_expect_eq(tj_last_status(), (status), "status %s, expected %s: %s", tj_status_name(tj_last_status()), \
                     tj_status_name(status), tj_last_error());                                                   \
        const char *parts_[] = {__VA_ARGS__};                                                                    \
        for (size_t i_ = 0; i_ < sizeof parts_ / sizeof *parts_; i_++)                                           \
            cr_expect(strstr(tj_last_error(), parts_[i_]) != NULL, "'%s' lacks '%s'", tj_last_error(),           \
                      parts_[i_]);                                                                               \
        tj_clear_error();                                                                                        \
    } while (0)

#define I64(...) ((const int64_t[]){__VA_ARGS__})

/* A float32 tensor of `shape` (at most 64 elements) holding first,
 * first + 1, ... in row-major order. */
static inline tj_tensor *ramp(int ndim, const int64_t *shape, float first)
{
    float v[64];
    for (int i = 0; i < 64; i++) v[i] = first + (float)i;
    tj_tensor *t = tj_tensor_from_data(TJ_FLOAT32, ndim, shape, v);
    cr_assert_not_null(t, "%s", tj_last_error());
    return t;
}

/* t's elements (row-major) are exactly v[0..n). */
static inline void expect_values(const tj_tensor *t, const float *v, int n)
{
    cr_assert_not_null(t);
    cr_assert_eq(tj_tensor_numel(t), n);
    for (int i = 0; i < n; i++)
        cr_expect_eq(tj_tensor_item_at(t, i), v[i], "element %d: %g, expected %g", i, tj_tensor_item_at(t, i), v[i]);
}

#endif
