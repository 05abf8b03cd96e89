/* Shared set-up of the libFuzzer targets (see fuzz_common.h). */
#include "fuzz_common.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static _Atomic size_t live;

static void *capped_alloc(void *ctx, size_t n)
{
    (void)ctx;
    if (n > FUZZ_MAX_LIVE || atomic_fetch_add(&live, n) + n > FUZZ_MAX_LIVE) {
        if (n <= FUZZ_MAX_LIVE) atomic_fetch_sub(&live, n);
        return NULL;
    }
    void *p = aligned_alloc(64, (n + 63) / 64 * 64);
    if (!p) atomic_fetch_sub(&live, n);
    return p;
}

static void capped_free(void *ctx, void *p, size_t n)
{
    (void)ctx;
    atomic_fetch_sub(&live, n);
    free(p);
}

void fuzz_setup(void)
{
    tj_set_allocator(&(tj_allocator){capped_alloc, capped_free, NULL}); /* first: before any block is taken */
    tj_set_num_threads(1);
    tj_storage_cache_set_limit(0);
}

void fuzz_expect_error(const char *who)
{
    if (tj_last_status() == TJ_OK || !tj_last_error()[0]) {
        fprintf(stderr, "%s failed without an error status and message (status %d, '%s')\n", who, (int)tj_last_status(),
                tj_last_error());
        abort();
    }
}

void fuzz_write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        abort();
    }
}
