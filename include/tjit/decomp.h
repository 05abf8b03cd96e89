/* Decomposition tables: PyTorch's `decomposition_table` for make_fx and
 * torch._decomp's `get_decompositions`, in C.
 *
 * A table maps operators to decompositions. An entry is either a C function
 * (tj_decomp_fn) or a graph captured earlier (a "traced counterpart"), which
 * is inlined where the operator is called, its placeholders bound to the
 * call's tensor arguments in order. Tables are explicit values passed to each
 * trace, never a global. */
#ifndef TJIT_DECOMP_H
#define TJIT_DECOMP_H

#include <stdio.h>

#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A new empty table; NULL when out of memory. */
tj_decomp_table *tj_decomp_table_new(void);
void tj_decomp_table_free(tj_decomp_table *t);
/** Maps `op` to a C function (replacing an earlier entry). `name` is shown
 * when the table is printed (it is copied). Errors: TJ_ERR_INVALID_ARGUMENT
 * for NULL op or fn, TJ_ERR_OUT_OF_MEMORY. */
tj_status tj_decomp_table_add_fn(tj_decomp_table *t, const tj_op *op, tj_decomp_fn fn, const char *name);
/** Maps `op` to a graph; the table keeps its own copy. The graph's
 * placeholders are bound to the call's tensor arguments in schema order, and
 * its outputs become the call's results (their count must match the
 * operator's returns: TJ_ERR_INVALID_ARGUMENT otherwise). An entry of
 * either kind must give the dtypes and shapes the operator's shape function
 * gives: tj_make_fx and tj_graph_decompose refuse a call whose entry gives
 * others (TJ_ERR_INVALID_ARGUMENT naming the operator and both types), and
 * for an in-place operator (add_) must return the argument it writes, not a
 * new tensor (TJ_ERR_INVALID_ARGUMENT: the write would be lost). */
tj_status tj_decomp_table_add_graph(tj_decomp_table *t, const tj_op *op, const tj_graph *g);
/** Removes the entry for `op` (no-op when absent). */
void tj_decomp_table_remove(tj_decomp_table *t, const tj_op *op);
/** Adds every entry of src to dst (src's entries win). */
tj_status tj_decomp_table_merge(tj_decomp_table *dst, const tj_decomp_table *src);
/** Number of entries; whether `op` has one. */
int tj_decomp_table_size(const tj_decomp_table *t);
bool tj_decomp_table_contains(const tj_decomp_table *t, const tj_op *op);
/** Writes one line per entry, in operator-registry order:
 *     aten::gelu.default -> gelu
 *     aten::native_layer_norm.default -> graph(3 inputs, 15 calls, 3 outputs)
 * (a C function by the name it was added with, a graph by its counts).
 * Errors: TJ_ERR_IO when a write or the final flush of `f` fails (the message gives errno's reason). */
tj_status tj_decomp_table_print(const tj_decomp_table *t, FILE *f);

/** torch._decomp.get_decompositions: a new table with the registered
 * decompositions of the named operators. A name without overload
 * ("aten::gelu", "mylib::scaled_add") takes every overload that has one; a full name
 * ("aten::add.Tensor") just that one. Names without a registered
 * decomposition (unknown or malformed ones included) are skipped, as torch
 * skips them (see tj_decompositions_missing). NULL with
 * TJ_ERR_INVALID_ARGUMENT for a NULL `ops` with n > 0 or a NULL entry (a
 * caller's bug, not a name), or TJ_ERR_OUT_OF_MEMORY. A new table. */
tj_decomp_table *tj_get_decompositions(const char *const *ops, int n);
/** Writes to `f` (may be NULL), one per line, the names among `ops` that
 * tj_get_decompositions would skip; returns their count. -1 with
 * TJ_ERR_INVALID_ARGUMENT where tj_get_decompositions refuses the list (a
 * NULL `ops` with n > 0 or a NULL entry), so the two always agree. */
int tj_decompositions_missing(const char *const *ops, int n, FILE *f);
/** The core table: every registered decomposition of a composite operator,
 * which lowers every operator to primitives (`tjit ops --kind primitive`).
 * User operators (library.h) are included when their decomposition was
 * registered before this call; add later ones with tj_decomp_table_add_fn.
 * A new table. */
tj_decomp_table *tj_core_decompositions(void);
/** Registers (or replaces) the registered decomposition of `op`, a built-in
 * operator or one from tj_op_register (register_decomposition), used by
 * tj_get_decompositions and core tables created from now on; for an implicit
 * operator, the decomposition every call runs. `name` is copied (shown when
 * tables are printed). Register before other threads call or trace `op`.
 * Errors: TJ_ERR_INVALID_ARGUMENT for NULL op or fn, TJ_ERR_OUT_OF_MEMORY. */
tj_status tj_register_decomposition(const tj_op *op, tj_decomp_fn fn, const char *name);

/** Graph-level decomposition: a new graph (free with tj_graph_free) that
 * computes what g computes, with every call that `table` names replaced by
 * its decomposition, applied transitively, as if g's code had been traced by
 * make_fx with that table. g is replayed in fake mode (no data), on inputs
 * with its placeholders' dtypes, shapes and strides; its constants stay
 * constants; placeholder names and write-back outputs carry over. A NULL
 * table copies the graph. Errors (NULL): TJ_ERR_INVALID_ARGUMENT for a NULL
 * graph or one without outputs, TJ_ERR_CYCLE for a decomposition that
 * reaches the operator it decomposes, a decomposition's own error,
 * TJ_ERR_OUT_OF_MEMORY. */
tj_graph *tj_graph_decompose(const tj_graph *g, const tj_decomp_table *table);

#ifdef __cplusplus
}
#endif
#endif
