/* A bump allocator for memory that lives as long as its owner and is freed
 * all at once: a graph's argument arrays, lists and names; a plan's nodes,
 * tables and the plan itself. */
#ifndef TJIT_TRACER_POOL_H
#define TJIT_TRACER_POOL_H

#include <stddef.h>

typedef struct tj_pool tj_pool;

/** An empty pool; `who` (a string literal) names the owner in out-of-memory
 * errors ("graph", "plan"). NULL, error set, when out of memory. */
tj_pool *tj_pool_new(const char *who);

/** n bytes, zeroed, 16-byte aligned, valid until tj_pool_free; carved from
 * chunks of 64 KiB (or n, when larger). NULL, error set (naming `who` and
 * the size), when out of memory. */
void *tj_pool_alloc(tj_pool *p, size_t n);

/** Frees the pool and everything allocated from it; NULL is a no-op. */
void tj_pool_free(tj_pool *p);

#endif
