/* Memory: the allocator hook, allocation-failure injection, and a caching
 * allocator for tensor storage.
 *
 * This machine pays about 10 us per 4 KiB page on first touch, so eager mode
 * must not return freed storage to the OS and fault it in again on the next
 * operator: freed blocks are kept in size-class free lists (four classes per
 * power of two, so at most 25% slack) up to a cap, and large blocks ask for
 * transparent huge pages.
 *
 * A locked instruction costs ~30 ns here, a mutex round trip ~65 ns once a
 * second thread exists (OpenBLAS starts some), which made the shared cache's
 * lock the main cost of a small operator. So each thread keeps a few small
 * blocks (tensor and storage headers, small tensors) of its own, reached
 * without any lock; the shared, locked lists take the rest. */
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

/* Counts one allocation; true when failure injection says it must fail.
 * Unarmed, the count is a plain load and store (no locked instruction): it
 * may miss increments racing on other threads, which only the debug count
 * tj_debug_fail_allocation returns would show. */
static bool injected_failure(void)
{
    uint64_t f = atomic_load_explicit(&fail_at, memory_order_relaxed);
    if (!f) {
        uint64_t k = atomic_load_explicit(&alloc_count, memory_order_relaxed);
        atomic_store_explicit(&alloc_count, k + 1, memory_order_relaxed);
        return false;
    }
    return atomic_fetch_add(&alloc_count, 1) + 1 == f;
}

void *tj_alloc(size_t nbytes)
{
    if (injected_failure()) return NULL;
    return allocator.alloc(allocator.ctx, nbytes ? nbytes : 1);
}

void tj_free(void *p, size_t nbytes)
{
    if (p) allocator.free(allocator.ctx, p, nbytes ? nbytes : 1);
}

char *tj_strdup(const char *s, const char *who)
{
    size_t n = strlen(s) + 1;
    char *c = tj_alloc(n);
    if (!c) {
        tj_oom(who, n);
        return NULL;
    }
    return memcpy(c, s, n);
}

void tj_free_str(char *s)
{
    if (s) tj_free(s, strlen(s) + 1);
}

/* ---- caching allocator ---- */

#define N_CLASSES 224 /* classes above this would need blocks of 2^63 bytes or more */
#define SMALLEST 64
/* Per-thread lists: classes 0..24 (blocks up to 4 KiB), 16 blocks each, so
 * at most ~0.5 MiB per thread. */
#define THREAD_CLASSES 25
#define THREAD_DEPTH 16

/* A cached block's link to the next one. Not at offset 0: a freed tensor
 * header keeps its refcount, 0 there, so that a second release of it is
 * caught (runtime/tensor.c) rather than decrementing the link. */
typedef struct free_block {
    uint64_t keep; /* not written: the freed object's first bytes */
    struct free_block *next;
} free_block;
_Static_assert(sizeof(free_block) <= SMALLEST, "every cached block holds a free_block");

/* Under AddressSanitizer a cached block is poisoned past its link, so that
 * a use after release is reported although the memory stays allocated (as
 * caching allocators built for ASan do). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TJ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(TJ_ASAN)
#include <sanitizer/asan_interface.h>
#define CACHED(b, size) ASAN_POISON_MEMORY_REGION((char *)(b) + sizeof(free_block), (size) - sizeof(free_block))
#define UNCACHED(b, size) ASAN_UNPOISON_MEMORY_REGION((b), (size))
#else
#define CACHED(b, size) ((void)0)
#define UNCACHED(b, size) ((void)0)
#endif

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static free_block *cache[N_CLASSES];
static size_t cached_bytes;
static _Atomic size_t cache_cap = (size_t)1 << 30;

typedef struct thread_cache {
    free_block *head[THREAD_CLASSES];
    int n[THREAD_CLASSES];
    bool registered; /* with the key whose destructor flushes it at thread exit */
} thread_cache;

static _Thread_local thread_cache tcache;
static pthread_key_t tcache_key;
static pthread_once_t tcache_once = PTHREAD_ONCE_INIT;

/* Size class of n: 4 classes per power of two, from 64 bytes. */
static inline int size_class(size_t n, size_t *rounded)
{
    if (n <= SMALLEST) {
        *rounded = SMALLEST;
        return 0;
    }
    /* 2^lg < n <= 2^(lg+1): the classes are 2^lg + k * 2^(lg-2), k = 1..4,
     * so q = (n - 1) >> (lg - 2) in 4..7 picks k = q - 3 (shifts, not
     * divisions: this runs twice per operator call) */
    int lg = 63 - __builtin_clzll((unsigned long long)(n - 1));
    size_t q = (n - 1) >> (lg - 2);
    *rounded = (q + 1) << (lg - 2);
    int c = (lg - 6) * 4 + (int)q - 3;
    return c < N_CLASSES ? c : -1;
}

/* Block size of class c (the inverse of size_class). */
static size_t class_size(int c)
{
    if (c == 0) return SMALLEST;
    size_t base = (size_t)1 << ((c - 1) / 4 + 6);
    return base + (size_t)((c - 1) % 4 + 1) * (base / 4);
}

tj_status tj_oom(const char *what, size_t nbytes)
{
    size_t asked; /* what fresh_storage was asked for: the size class's block */
    if (size_class(nbytes, &asked) < 0) asked = nbytes;
    const char *refused = tj_memory_refusal_reason(asked);
    if (refused) return tj_error(TJ_ERR_OUT_OF_MEMORY, "%s: %s", what, refused);
    return tj_error(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory allocating %zu bytes", what, nbytes);
}

/* Puts a block on the shared list of class c, or frees it past the cap. */
static void shared_put(int c, free_block *b)
{
    size_t size = class_size(c);
    pthread_mutex_lock(&cache_lock);
    bool kept = cached_bytes + size <= atomic_load_explicit(&cache_cap, memory_order_relaxed);
    if (kept) {
        CACHED(b, size);
        b->next = cache[c];
        cache[c] = b;
        cached_bytes += size;
    }
    pthread_mutex_unlock(&cache_lock);
    if (kept) return;
    UNCACHED(b, size);
    tj_free(b, size);
}

/* Moves a thread's blocks to the shared lists. */
static void flush_thread_cache(thread_cache *tc)
{
    for (int c = 0; c < THREAD_CLASSES; c++) {
        while (tc->head[c]) {
            free_block *b = tc->head[c];
            tc->head[c] = b->next;
            shared_put(c, b);
        }
        tc->n[c] = 0;
    }
}

static void flush_at_thread_exit(void *tc) { flush_thread_cache(tc); }
static void make_tcache_key(void) { pthread_key_create(&tcache_key, flush_at_thread_exit); }

/* Gives a block of class c back to the caches (see class_alloc below). */
static inline void class_free(int c, void *p)
{
    /* a cap of 0 turns every cache off, the thread's too */
    if (c < THREAD_CLASSES && tcache.n[c] < THREAD_DEPTH && atomic_load_explicit(&cache_cap, memory_order_relaxed)) {
        if (!tcache.registered) {
            pthread_once(&tcache_once, make_tcache_key);
            pthread_setspecific(tcache_key, &tcache);
            tcache.registered = true;
        }
        free_block *b = p;
        CACHED(b, class_size(c));
        b->next = tcache.head[c];
        tcache.head[c] = b;
        tcache.n[c]++;
        return;
    }
    shared_put(c, p);
}

/* Fresh storage from the allocator, refused (NULL; the caller reports
 * out of memory) when it cannot be touched without the system running out:
 * tensors are filled as soon as they are made. Blocks from the cache are
 * not checked: they are memory the process holds already. */
static void *fresh_storage(size_t nbytes)
{
    if (tj_check_memory_available("tensor storage", "a block", nbytes) != TJ_OK) return NULL;
    return tj_alloc(nbytes);
}

/* A block of class c (`rounded` bytes): the thread's list first, then the
 * shared one, then the allocator. Inlined, so that a constant class (the
 * small tensor blocks) costs no size computation. */
static inline void *class_alloc(int c, size_t rounded)
{
    free_block *b = NULL;
    if (c < THREAD_CLASSES && tcache.head[c]) {
        b = tcache.head[c];
        tcache.head[c] = b->next;
        tcache.n[c]--;
    } else {
        pthread_mutex_lock(&cache_lock);
        b = cache[c];
        if (b) {
            cache[c] = b->next;
            cached_bytes -= rounded;
        }
        pthread_mutex_unlock(&cache_lock);
    }
    if (!b) return fresh_storage(rounded);
    UNCACHED(b, rounded);
    /* a cached block counts as an allocation, for failure injection */
    if (injected_failure()) {
        class_free(c, b);
        return NULL;
    }
    return b;
}

void *tj_alloc_storage_bytes(size_t nbytes, size_t *got)
{
    size_t rounded;
    int c = size_class(nbytes, &rounded);
    if (c < 0) {
        *got = nbytes;
        return fresh_storage(nbytes);
    }
    *got = rounded;
    return class_alloc(c, rounded);
}

void tj_free_storage_bytes(void *p, size_t nbytes)
{
    if (!p) return;
    size_t rounded;
    int c = size_class(nbytes, &rounded);
    if (c < 0 || rounded != nbytes) {
        tj_free(p, nbytes);
        return;
    }
    class_free(c, p);
}

/* TJ_SMALL_BLOCK is a class size: size_class folds to a constant here. */
void *tj_alloc_small_block(void)
{
    size_t rounded;
    return class_alloc(size_class(TJ_SMALL_BLOCK, &rounded), TJ_SMALL_BLOCK);
}

void tj_free_small_block(void *p)
{
    size_t rounded;
    class_free(size_class(TJ_SMALL_BLOCK, &rounded), p);
}

void *tj_alloc_object(size_t nbytes)
{
    size_t got;
    return tj_alloc_storage_bytes(nbytes, &got);
}

void tj_free_object(void *p, size_t nbytes)
{
    size_t rounded;
    if (size_class(nbytes, &rounded) < 0) rounded = nbytes;
    tj_free_storage_bytes(p, rounded);
}

void tj_storage_cache_release(void)
{
    flush_thread_cache(&tcache);
    pthread_mutex_lock(&cache_lock);
    for (int c = 0; c < N_CLASSES; c++) {
        size_t size = class_size(c);
        while (cache[c]) {
            free_block *b = cache[c];
            cache[c] = b->next;
            UNCACHED(b, size);
            tj_free(b, size);
        }
    }
    cached_bytes = 0;
    pthread_mutex_unlock(&cache_lock);
}

void tj_storage_cache_set_limit(size_t bytes)
{
    atomic_store(&cache_cap, bytes);
    flush_thread_cache(&tcache); /* frees them all when bytes is 0 */
    pthread_mutex_lock(&cache_lock);
    bool over = cached_bytes > bytes;
    pthread_mutex_unlock(&cache_lock);
    if (over) tj_storage_cache_release();
}

size_t tj_storage_cache_bytes(void)
{
    pthread_mutex_lock(&cache_lock);
    size_t n = cached_bytes;
    pthread_mutex_unlock(&cache_lock);
    return n;
}
