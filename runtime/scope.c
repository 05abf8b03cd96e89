/* Scopes: tensors returned by operators while a scope is open belong to it
 * and are released when it ends.
 *
 * One thread-local vector holds the owned tensors of every open scope; each
 * scope is a start mark into it. Keeping a tensor swaps it to the first slot
 * of its scope and advances that scope's mark, which hands it to the parent
 * scope (or to the caller for the outermost one) without any copy. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

#define MAX_SCOPE_DEPTH 256

static _Thread_local tj_tensor **entries;
static _Thread_local size_t n_entries, cap_entries;
static _Thread_local size_t marks[MAX_SCOPE_DEPTH];
static _Thread_local int depth;
/* scopes at this level and below were opened outside the running callback */
static _Thread_local int fence;

tj_scope *tj_scope_begin(void)
{
    if (depth >= MAX_SCOPE_DEPTH) {
        tj_error(TJ_ERR_OVERFLOW, "tj_scope_begin: more than %d nested scopes", MAX_SCOPE_DEPTH);
        return NULL;
    }
    marks[depth++] = n_entries;
    return (tj_scope *)(uintptr_t)depth;
}

void tj_scope_end(tj_scope *scope)
{
    int level = (int)(uintptr_t)scope;
    if (level < 1 || level > depth) return;
    if (level <= fence) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_scope_end: scope %d was opened outside the function running now (a "
                 "traced function, a decomposition or a derivative, which runs in scope %d): not ended", level, fence);
        return;
    }
    size_t mark = marks[level - 1];
    /* release in reverse creation order; a release never adopts */
    for (size_t i = n_entries; i > mark; i--) tj_tensor_release(entries[i - 1]);
    depth = level - 1;
    /* below the outermost mark lie only tensors kept out to the caller */
    n_entries = depth ? mark : 0;
    if (depth == 0 && cap_entries > 4096) {
        tj_free(entries, cap_entries * sizeof *entries);
        entries = NULL;
        cap_entries = 0;
    }
}

int tj_scope_fence(tj_scope *scope)
{
    int previous = fence;
    int level = (int)(uintptr_t)scope;
    if (level > fence && level <= depth) fence = level;
    return previous;
}

void tj_scope_unfence(int previous) { fence = previous; }

bool tj_scope_owns_since(const tj_scope *scope, const tj_tensor *t)
{
    int level = (int)(uintptr_t)scope;
    if (!t || level < 1 || level > depth) return false;
    for (size_t i = n_entries; i > marks[level - 1]; i--)
        if (entries[i - 1] == t) return true;
    return false;
}

/* A thread's vector is freed when the thread exits. */
static pthread_key_t entries_key;
static pthread_once_t entries_once = PTHREAD_ONCE_INIT;

static void free_entries(void *unused)
{
    (void)unused;
    tj_free(entries, cap_entries * sizeof *entries);
    entries = NULL;
    n_entries = cap_entries = 0;
}

static void make_entries_key(void) { pthread_key_create(&entries_key, free_entries); }

/* Doubles the vector (out of line: the common adopt saves no registers). */
static __attribute__((noinline)) tj_status grow_entries(void)
{
    if (!cap_entries) {
        pthread_once(&entries_once, make_entries_key);
        pthread_setspecific(entries_key, &entries_key); /* any non-NULL value: run free_entries at exit */
    }
    size_t cap = cap_entries ? cap_entries * 2 : 256;
    tj_tensor **e = tj_alloc(cap * sizeof *e);
    if (!e) return tj_oom("scope", cap * sizeof *e);
    if (n_entries) memcpy(e, entries, n_entries * sizeof *e);
    tj_free(entries, cap_entries * sizeof *entries);
    entries = e;
    cap_entries = cap;
    return TJ_OK;
}

tj_status tj_scope_adopt(tj_tensor *t)
{
    if (!depth || !t) return TJ_OK;
    if (n_entries == cap_entries && grow_entries() != TJ_OK) return TJ_ERR_OUT_OF_MEMORY;
    entries[n_entries++] = t;
    return TJ_OK;
}

tj_tensor *tj_scope_keep(tj_tensor *t)
{
    if (!t || !depth) return t;
    for (size_t i = n_entries; i > 0; i--) {
        if (entries[i - 1] != t) continue;
        size_t idx = i - 1;
        int level = depth - 1;
        while (level > 0 && marks[level] > idx) level--;
        size_t first = marks[level];
        entries[idx] = entries[first];
        entries[first] = t;
        marks[level]++;
        return t;
    }
    return t;
}

bool tj_scope_take(tj_tensor *t)
{
    if (!depth || !t) return false;
    for (size_t i = n_entries; i > marks[depth - 1]; i--) {
        if (entries[i - 1] == t) {
            entries[i - 1] = entries[--n_entries];
            return true;
        }
    }
    return false;
}

void tj_scope_drop(tj_tensor *t)
{
    if (!t) return;
    size_t first = depth ? marks[depth - 1] : n_entries;
    for (size_t i = n_entries; i > first; i--) {
        if (entries[i - 1] == t) {
            entries[i - 1] = entries[--n_entries];
            tj_tensor_release(t);
            return;
        }
    }
    for (size_t i = first; i > 0; i--)
        if (entries[i - 1] == t) return; /* an outer scope owns it */
    tj_tensor_release(t);
}
