/* Tests of the Criterion stand-in itself, most of them failing on purpose:
 * shim_self_test.sh checks what the runner reports for each. */
#include <unistd.h>

#include "criterion/criterion.h"

static void say(const char *what) { fprintf(stderr, "<%s>\n", what); }
static void suite_init(void) { say("suite init"); }
static void suite_fini(void) { say("suite fini"); }
static void test_init(void) { say("test init"); }
static void test_fini(void) { say("test fini"); }

TestSuite(order, .init = suite_init, .fini = suite_fini);

Test(order, fixtures_nest, .init = test_init, .fini = test_fini) { say("body"); }

Test(order, a_fatal_check_stops_the_body_and_the_finis_still_run, .init = test_init, .fini = test_fini)
{
    cr_assert_eq(1, 2, "one is %d", 1);
    say("after the assert");
}

Test(checks, a_failed_expect_goes_on)
{
    cr_expect(0);
    say("after the expect");
}

Test(checks, passing_checks_pass)
{
    cr_assert_eq(2, 2);
    cr_expect_float_eq(1.0, 1.0 + 1e-12, 1e-9);
    cr_expect_arr_eq("ab", "ab", 2);
    cr_expect_str_eq("x", "x");
}

Test(checks, a_nan_is_not_float_equal) { cr_expect_float_eq(NAN, NAN, 1.0); }

Test(checks, a_skip_is_no_failure) { cr_skip_test("not on %s", "this machine"); }

Test(process, a_crash_fails_alone) { abort(); } /* SIGABRT: no sanitizer report, which would fail CI */

Test(process, a_test_past_its_timeout_fails, .timeout = 1) { sleep(5); }

Test(process, a_failed_expect_then_exit_0_fails)
{
    cr_expect(0);
    exit(0);
}

static int touched; /* each test runs in a process of its own */

Test(process, state_a) { cr_expect_eq(touched++, 0); }

Test(process, state_b) { cr_expect_eq(touched++, 0); }
