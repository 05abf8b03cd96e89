/* Whether a block about to be touched page by page fits in the memory the
 * system can still give. Linux lets a malloc larger than what is free
 * succeed (overcommit) and then kills the process touching it (a plan's
 * arena, zeroed when its context is made: `tjit profile gpt --batch
 * 100000` asked for 21.4 GiB on a 23 GiB machine and was OOM-killed; `tjit
 * profile mlp --batch 7000000` a 21.9 GiB input, which randn fills); an
 * error naming the size is what PyTorch's allocator gives instead
 * ("DefaultCPUAllocator: not enough memory: you tried to allocate ..."). */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define CHECKED_BYTES ((size_t)64 << 20) /* smaller blocks are not worth reading a file for */

static const char *meminfo_path = "/proc/meminfo";

/* The last refusal of this thread (its size, and the message without its
 * `who`), for tj_oom: the caller of a refused allocation reports it under
 * its own name, with the reason kept. */
static _Thread_local size_t refused_bytes;
static _Thread_local char refused_reason[512];

void tj_debug_set_meminfo_path(const char *path)
{
    meminfo_path = path ? path : "/proc/meminfo";
}

/* MemAvailable + SwapFree from meminfo in bytes; false when the file or
 * MemAvailable cannot be read (another system, an old kernel). */
static bool memory_available(uint64_t *bytes)
{
    FILE *f = fopen(meminfo_path, "r");
    if (!f) return false;
    char line[256];
    unsigned long long kib, avail = 0, swap = 0;
    bool found = false;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) avail = kib, found = true;
        else if (sscanf(line, "SwapFree: %llu kB", &kib) == 1) swap = kib;
    }
    fclose(f);
    *bytes = (avail + swap) * 1024;
    return found;
}

tj_status tj_check_memory_available(const char *who, const char *what, size_t nbytes)
{
    uint64_t avail;
    refused_bytes = 0;
    if (nbytes < CHECKED_BYTES || !memory_available(&avail)) return TJ_OK;
    /* an eighth of it stays for the rest: the caller's inputs and the
     * outputs copied out, kernels' scratch, the system's page cache */
    uint64_t usable = avail - avail / 8;
    if (nbytes > usable && tj_storage_cache_bytes() > 0) {
        /* the storage cache's idle blocks (up to 1 GiB) count as used
         * there: given back they may make the room, as PyTorch's CUDA
         * caching allocator frees its cached blocks before it gives up */
        tj_storage_cache_release();
        if (!memory_available(&avail)) return TJ_OK;
        usable = avail - avail / 8;
    }
    if (nbytes <= usable) return TJ_OK;
    const double gib = 1024.0 * 1024 * 1024;
    snprintf(refused_reason, sizeof refused_reason,
             "not enough memory: %s needs %zu bytes (%.2f GiB), more than 7/8 of the %.2f GiB available "
             "(MemAvailable + SwapFree in %s)",
             what, nbytes, (double)nbytes / gib, (double)avail / gib, meminfo_path);
    refused_bytes = nbytes;
    return tj_error(TJ_ERR_OUT_OF_MEMORY, "%s: %s", who, refused_reason);
}

const char *tj_memory_refusal_reason(size_t nbytes)
{
    if (!nbytes || refused_bytes != nbytes) return NULL;
    refused_bytes = 0;
    return refused_reason;
}
