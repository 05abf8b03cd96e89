#include "alloc_counter.h"

#include <stdatomic.h>
#include <stdlib.h>

#include <tjit/tjit.h>

static atomic_llong live, made;
static _Atomic size_t cap; /* 0: none */

static void *counting_alloc(void *ctx, size_t n)
{
    (void)ctx;
    size_t limit = atomic_load(&cap);
    if (limit && n > limit) return NULL;
    void *p = aligned_alloc(64, (n + 63) / 64 * 64);
    if (p) atomic_fetch_add(&live, 1), atomic_fetch_add(&made, 1);
    return p;
}

static void counting_free(void *ctx, void *p, size_t n)
{
    (void)ctx, (void)n;
    atomic_fetch_sub(&live, 1);
    free(p);
}

void count_allocations(void)
{
    static const tj_allocator a = {counting_alloc, counting_free, NULL};
    tj_set_allocator(&a);
    tj_storage_cache_set_limit(0);
    tj_scope *s = tj_scope_begin();
    tj_tensor_empty(TJ_FLOAT32, 1, (int64_t[]){4});
    tj_scope_end(s);
}

int64_t live_allocations(void) { return atomic_load(&live); }

int64_t allocations_made(void) { return atomic_load(&made); }

void refuse_allocations_over(size_t bytes) { atomic_store(&cap, bytes); }
