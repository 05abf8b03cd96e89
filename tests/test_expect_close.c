/* test_util's comparison (test_expect_close): infinities match only
 * themselves and nan only nan, whatever the tolerances. */
#include <criterion/criterion.h>
#include <math.h>

#include "test_util.h"

Test(expect_close, an_infinity_matches_only_the_same_infinity)
{
    cr_expect(test_close(INFINITY, INFINITY, 1e-6, 1e-6));
    cr_expect(test_close(-INFINITY, -INFINITY, 1e-6, 0));
    cr_expect(!test_close(5.0, INFINITY, 1e-6, 0), "a finite value matched +inf");
    cr_expect(!test_close(-INFINITY, INFINITY, 1e-6, 0), "-inf matched +inf");
    cr_expect(!test_close(INFINITY, 1e300, 1e-6, 0), "+inf matched a finite value");
    cr_expect(!test_close(5.0, INFINITY, 0, 1e-6));
}

Test(expect_close, nan_matches_only_nan_and_finite_values_within_the_tolerance)
{
    cr_expect(test_close(NAN, NAN, 0, 0));
    cr_expect(!test_close(1.0, NAN, 1, 1));
    cr_expect(!test_close(NAN, 1.0, 1, 1));
    cr_expect(test_close(1.0 + 1e-7, 1.0, 1e-6, 0));
    cr_expect(!test_close(1.0 + 1e-5, 1.0, 1e-6, 0));
    cr_expect(test_close(1e-9, 0.0, 0, 1e-6));
}
