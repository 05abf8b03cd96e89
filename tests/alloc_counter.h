/* A counting allocator for tests: routes every allocation of the runtime
 * through tj_set_allocator and counts the blocks alive, so that a test can
 * assert that a call leaked nothing (live count back to its baseline). */
#ifndef TJIT_TESTS_ALLOC_COUNTER_H
#define TJIT_TESTS_ALLOC_COUNTER_H

#include <stdint.h>

/** Installs the counting allocator and turns the storage cache off (a
 *  released tensor returns its memory at once), then opens and closes one
 *  scope: the scope stack's vector stays allocated and joins the baseline.
 *  Use as a Criterion .init. */
void count_allocations(void);

/** Blocks allocated through the hook and not yet freed. */
int64_t live_allocations(void);

#endif
