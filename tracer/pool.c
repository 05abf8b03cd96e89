/* Bump allocation for graphs and plans (pool.h). */
#include "pool.h"

#include <string.h>

#include "runtime/internal.h"

#define POOL_CHUNK_BYTES 65536

typedef struct pool_chunk {
    struct pool_chunk *next;
    size_t size, used;
    _Alignas(64) char data[];
} pool_chunk;

struct tj_pool {
    pool_chunk *chunks;
    const char *who;
};

tj_pool *tj_pool_new(const char *who)
{
    tj_pool *p = tj_alloc(sizeof *p);
    if (!p) {
        tj_oom(who, sizeof *p);
        return NULL;
    }
    *p = (tj_pool){.chunks = NULL, .who = who};
    return p;
}

void *tj_pool_alloc(tj_pool *p, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    pool_chunk *c = p->chunks;
    if (!c || c->used + n > c->size) {
        size_t size = n > POOL_CHUNK_BYTES ? n : POOL_CHUNK_BYTES;
        c = tj_alloc(sizeof *c + size);
        if (!c) {
            tj_oom(p->who, sizeof *c + size);
            return NULL;
        }
        *c = (pool_chunk){.next = p->chunks, .size = size, .used = 0};
        p->chunks = c;
    }
    void *r = c->data + c->used;
    c->used += n;
    memset(r, 0, n);
    return r;
}

void tj_pool_free(tj_pool *p)
{
    if (!p) return;
    for (pool_chunk *c = p->chunks, *n; c; c = n) {
        n = c->next;
        tj_free(c, sizeof *c + c->size);
    }
    tj_free(p, sizeof *p);
}
