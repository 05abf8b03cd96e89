#!/usr/bin/env bash
# Runs shim_self_test (SELF) and checks what the Criterion stand-in reports
# for each of its tests: status, order of fixtures, failures and their
# messages, skips, a crash and a timeout.
#   shim_self_test.sh SELF
set -uo pipefail
out=$("${1:?usage: shim_self_test.sh SELF}" 2>&1)
status=$?
failures=0
want() {
    grep -Fq -- "$1" <<<"$out" || { echo "missing: $1" >&2; failures=$((failures + 1)); }
}
[ "$status" -eq 1 ] || { echo "status $status, want 1" >&2; failures=$((failures + 1)); }
want 'Synthesis: Tested: 11 | Passing: 4 | Failing: 6 | Skipped: 1'
want $'<suite init>\n<test init>\n<body>\n<test fini>\n<suite fini>'
want '[FAIL] order::a_fatal_check_stops_the_body_and_the_finis_still_run: '
want '(1) == (2): one is 1'
want $'<test init>\n<test fini>\n<suite fini>'
want $'checks::a_failed_expect_goes_on: '
want '<after the expect>'
want '[FAIL] checks::a_nan_is_not_float_equal'
want '[SKIP] checks::a_skip_is_no_failure: not on this machine'
want '[FAIL] process::a_crash_fails_alone: crashed (signal 6'
want '[FAIL] process::a_test_past_its_timeout_fails: timed out'
want '[FAIL] process::a_failed_expect_then_exit_0_fails: exit status 0 after 1 failed checks'
if grep -Fq '<after the assert>' <<<"$out" || grep -Fq 'process::state_b' <<<"$out"; then
    echo "a fatal check did not stop its test, or state leaked between tests" >&2
    failures=$((failures + 1))
fi
[ "$failures" -eq 0 ] || { echo "--- output:"; echo "$out"; exit 1; }
echo "criterion shim: all checks passed"
