/* Decomposition tables (include/tjit/decomp.h): the entry type the tracer
 * looks up while tracing. */
#ifndef TJIT_DECOMPS_TABLE_H
#define TJIT_DECOMPS_TABLE_H

#include "runtime/internal.h"
#include "tjit/decomp.h"

typedef struct tj_decomp_entry {
    tj_decomp_fn fn;  /**< a C decomposition, or NULL */
    tj_graph *graph;  /**< a traced counterpart, or NULL */
    char *name;       /**< function name shown by tj_decomp_table_print */
} tj_decomp_entry;

/** The entry for `op`, or NULL. O(1): tables are indexed by operator. */
const tj_decomp_entry *tj_decomp_table_lookup(const tj_decomp_table *t, const tj_op *op);

#endif
