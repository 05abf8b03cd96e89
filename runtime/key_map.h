/* A hash map from nonzero 64-bit keys (tensor uids, addresses) to int
 * values: the lookup tables of the autograd engine and of make_fx. Open
 * addressing with linear probing; the table doubles when half full; memory
 * through tj_alloc. A zeroed tj_key_map is an empty map. */
#ifndef TJIT_RUNTIME_KEY_MAP_H
#define TJIT_RUNTIME_KEY_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "tjit/core.h"

typedef struct tj_key_map {
    uint64_t *keys; /* 0: empty slot */
    int *vals;
    size_t cap, count; /* cap: 0 or a power of two */
} tj_key_map;

/** The value stored for key (nonzero), or -1 when there is none. */
int tj_key_map_get(const tj_key_map *m, uint64_t key);

/** Stores value for key (nonzero), replacing any value it had. Errors: out of
 *  memory when the table cannot grow (the message names `who`; the map is
 *  left as it was). */
tj_status tj_key_map_put(tj_key_map *m, uint64_t key, int value, const char *who);

/** Frees the map's memory; the map is empty again. */
void tj_key_map_free(tj_key_map *m);

#endif
