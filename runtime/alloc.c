/* Memory: the allocator hook, allocation-failure injection, and a caching
 * allocator for tensor storage.
 *
 * This machine pays about 10 us per 4 KiB page on first touch, so eager mode
 * must not return freed storage to the OS and fault it in again on the next
 * operator: freed blocks are kept in size-class free lists (four classes per
 * power of two, so at most 25% slack) up to a cap, and large blocks ask for
 * transparent huge pages. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

static void *default_alloc(void *ctx, size_t n)
{
    (void)ctx;
    size_t align = n >= (2u << 20) ? (2u << 20) : 64;
    void *p = aligned_alloc(align, (n + align - 1) / align * align);
#ifdef MADV_HUGEPAGE
    if (p && align > 64) madvise(p, n, MADV_HUGEPAGE);
#endif
    return p;
}

static void default_free(void *ctx, void *p, size_t n)
{
    (void)ctx;
    (void)n;
    free(p);
}

static tj_allocator allocator = {default_alloc, default_free, NULL};
static _Atomic uint64_t alloc_count;
static _Atomic uint64_t fail_at; /* 0: never */

void tj_set_allocator(const tj_allocator *a)
{
    tj_allocator def = {default_alloc, default_free, NULL};
    allocator = a ? *a : def;
}

uint64_t tj_debug_fail_allocation(uint64_t n)
{
    uint64_t count = atomic_exchange(&alloc_count, 0);
    atomic_store(&fail_at, n);
    return count;
}

void *tj_alloc(size_t nbytes)
{
    uint64_t k = atomic_fetch_add(&alloc_count, 1) + 1;
    uint64_t f = atomic_load(&fail_at);
    if (f && k == f) return NULL;
    return allocator.alloc(allocator.ctx, nbytes ? nbytes : 1);
}

void tj_free(void *p, size_t nbytes)
{
    if (p) allocator.free(allocator.ctx, p, nbytes ? nbytes : 1);
}

tj_status tj_oom(const char *what, size_t nbytes)
{
    return tj_error(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory allocating %zu bytes", what, nbytes);
}

/* ---- caching allocator ---- */

#define N_CLASSES 256
#define SMALLEST 64

typedef struct free_block {
    struct free_block *next;
} free_block;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static free_block *cache[N_CLASSES];
static size_t cached_bytes;
static size_t cache_cap = (size_t)1 << 30;

/* Size class of n: 4 classes per power of two, from 64 bytes. */
static int size_class(size_t n, size_t *rounded)
{
    if (n <= SMALLEST) {
        *rounded = SMALLEST;
        return 0;
    }
    int lg = 63 - __builtin_clzll((unsigned long long)(n - 1)); /* 2^lg < n <= 2^(lg+1) */
    size_t base = (size_t)1 << lg;
    size_t step = base / 4;
    size_t k = (n - base + step - 1) / step; /* 1..4 */
    *rounded = base + k * step;
    int c = (lg - 6) * 4 + (int)k;
    return c < N_CLASSES ? c : -1;
}

void *tj_alloc_storage_bytes(size_t nbytes, size_t *got)
{
    size_t rounded;
    int c = size_class(nbytes, &rounded);
    if (c >= 0) {
        pthread_mutex_lock(&cache_lock);
        free_block *b = cache[c];
        if (b) {
            cache[c] = b->next;
            cached_bytes -= rounded;
        }
        pthread_mutex_unlock(&cache_lock);
        if (b) {
            /* count it as an allocation, for failure injection */
            uint64_t k = atomic_fetch_add(&alloc_count, 1) + 1;
            uint64_t f = atomic_load(&fail_at);
            if (f && k == f) {
                tj_free_storage_bytes(b, rounded);
                return NULL;
            }
            *got = rounded;
            return b;
        }
    } else {
        rounded = nbytes;
    }
    *got = rounded;
    return tj_alloc(rounded);
}

void tj_free_storage_bytes(void *p, size_t nbytes)
{
    if (!p) return;
    size_t rounded;
    int c = size_class(nbytes, &rounded);
    if (c >= 0 && rounded == nbytes) {
        pthread_mutex_lock(&cache_lock);
        if (cached_bytes + rounded <= cache_cap) {
            free_block *b = p;
            b->next = cache[c];
            cache[c] = b;
            cached_bytes += rounded;
            p = NULL;
        }
        pthread_mutex_unlock(&cache_lock);
    }
    if (p) tj_free(p, nbytes);
}

void tj_storage_cache_release(void)
{
    pthread_mutex_lock(&cache_lock);
    for (int c = 0; c < N_CLASSES; c++) {
        free_block *b = cache[c];
        size_t rounded;
        /* recompute the class's block size */
        size_t lo = c == 0 ? SMALLEST : 0;
        if (c > 0) {
            int lg = (c - 1) / 4 + 6;
            int k = (c - 1) % 4 + 1;
            size_t base = (size_t)1 << lg;
            lo = base + (size_t)k * (base / 4);
        }
        (void)size_class(lo, &rounded);
        while (b) {
            free_block *n = b->next;
            tj_free(b, rounded);
            b = n;
        }
        cache[c] = NULL;
    }
    cached_bytes = 0;
    pthread_mutex_unlock(&cache_lock);
}

void tj_storage_cache_set_limit(size_t bytes)
{
    pthread_mutex_lock(&cache_lock);
    cache_cap = bytes;
    pthread_mutex_unlock(&cache_lock);
    if (cached_bytes > bytes) tj_storage_cache_release();
}

size_t tj_storage_cache_bytes(void)
{
    pthread_mutex_lock(&cache_lock);
    size_t n = cached_bytes;
    pthread_mutex_unlock(&cache_lock);
    return n;
}
