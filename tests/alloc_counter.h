/* A counting allocator for tests: routes every allocation of the runtime
 * through tj_set_allocator and counts the blocks alive, so that a test can
 * assert that a call leaked nothing (live count back to its baseline). */
#ifndef TJIT_TESTS_ALLOC_COUNTER_H
#define TJIT_TESTS_ALLOC_COUNTER_H

#include <stddef.h>
#include <stdint.h>

/** Installs the counting allocator and turns the storage cache off (a
 *  released tensor returns its memory at once), then opens and closes one
 *  scope: the scope stack's vector stays allocated and joins the baseline.
 *  Use as a Criterion .init. */
void count_allocations(void);

/** Blocks allocated through the hook and not yet freed. */
int64_t live_allocations(void);

/** Blocks allocated through the hook since it was installed (freed or not):
 *  a difference of two readings counts the allocations in between. */
int64_t allocations_made(void);

/** From now on the counting allocator refuses (returns NULL for) any block
 *  larger than `bytes` (0: no limit), so that a test can ask for a huge
 *  tensor and get an out-of-memory error instead of the machine's memory
 *  (or, under AddressSanitizer, an abort). */
void refuse_allocations_over(size_t bytes);

#endif
