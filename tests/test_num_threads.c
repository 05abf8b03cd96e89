/* TJ_NUM_THREADS, the thread count kernels and OpenBLAS start with
 * (runtime/threads.c), read once per process: each test here runs in a
 * process of its own. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "tjit/tjit.h"

/* The count is read once, at the first kernel call of the process (each
 * Criterion test runs in its own): atoi took "1000003x" as 1000003 and
 * wrapped 4295967299 to 1000003 as well. No machine has 1000003 CPUs. */
Test(num_threads, a_malformed_or_out_of_range_TJ_NUM_THREADS_is_ignored)
{
    setenv("TJ_NUM_THREADS", "1000003x", 1);
    cr_expect_neq(tj_get_num_threads(), 1000003);
}

Test(num_threads, an_out_of_range_TJ_NUM_THREADS_is_ignored)
{
    setenv("TJ_NUM_THREADS", "4295967299", 1); /* 2^32 + 1000003 */
    cr_expect_neq(tj_get_num_threads(), 1000003);
}

Test(num_threads, a_whole_TJ_NUM_THREADS_is_taken)
{
    setenv("TJ_NUM_THREADS", "3", 1);
    cr_expect_eq(tj_get_num_threads(), 3);
}
