#include "key_map.h"

#include <string.h>

#include "internal.h"

#define FIRST_CAP 256

/* The slot holding key, or the empty slot where it would go. Fibonacci
 * hashing keeps the product's high bits: addresses' zero low bits do not
 * cluster the slots. */
static size_t slot_of(const uint64_t *keys, size_t cap, uint64_t key)
{
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - __builtin_ctzll(cap)));
    while (keys[i] && keys[i] != key) i = (i + 1) & (cap - 1);
    return i;
}

int tj_key_map_get(const tj_key_map *m, uint64_t key)
{
    if (!m->cap) return -1;
    size_t s = slot_of(m->keys, m->cap, key);
    return m->keys[s] ? m->vals[s] : -1;
}

static tj_status grow(tj_key_map *m, const char *who)
{
    size_t cap = m->cap ? m->cap * 2 : FIRST_CAP;
    uint64_t *keys = tj_alloc(cap * sizeof *keys);
    int *vals = tj_alloc(cap * sizeof *vals);
    if (!keys || !vals) {
        tj_free(keys, cap * sizeof *keys);
        tj_free(vals, cap * sizeof *vals);
        return tj_oom(who, cap * sizeof *keys);
    }
    memset(keys, 0, cap * sizeof *keys);
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) {
            size_t s = slot_of(keys, cap, m->keys[i]);
            keys[s] = m->keys[i];
            vals[s] = m->vals[i];
        }
    tj_free(m->keys, m->cap * sizeof *m->keys);
    tj_free(m->vals, m->cap * sizeof *m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return TJ_OK;
}

tj_status tj_key_map_put(tj_key_map *m, uint64_t key, int value, const char *who)
{
    if ((m->count + 1) * 2 > m->cap && grow(m, who) != TJ_OK) return tj_last_status();
    size_t s = slot_of(m->keys, m->cap, key);
    if (!m->keys[s]) m->count++;
    m->keys[s] = key;
    m->vals[s] = value;
    return TJ_OK;
}

void tj_key_map_free(tj_key_map *m)
{
    tj_free(m->keys, m->cap * sizeof *m->keys);
    tj_free(m->vals, m->cap * sizeof *m->vals);
    *m = (tj_key_map){0};
}
