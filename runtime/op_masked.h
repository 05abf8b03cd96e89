/* Operators whose result shape depends on their input's values
 * (op_masked.def, runtime/op_masked.c), and what index.Tensor / index_put
 * share with them to read a bool mask. */
#ifndef TJIT_RUNTIME_OP_MASKED_H
#define TJIT_RUNTIME_OP_MASKED_H

#include "internal.h"

TJ_OP_DECLARE(nonzero)
TJ_OP_DECLARE(masked_select)
TJ_OP_DECLARE(masked_scatter)

/** The count of t's non-zero elements (true ones of a bool mask) for a
 * shape function sizing its result `op` by it: TJ_ERR_UNSUPPORTED naming
 * `op` when t is fake (no values: make_fx's fake mode, tj_compile's shape
 * pass), as PyTorch's DataDependentOutputException. `what` names t in the
 * message ("self", "index 0 (a bool mask)"). */
tj_status tj_count_nonzero(const char *op, const char *what, const tj_tensor *t, int64_t *count);

/** The error of a kernel whose result was sized for `sized` elements (a
 * graph's recorded shape) when its input's values now give `now`. */
tj_status tj_stale_count_error(const char *op, const char *what, int64_t now, int64_t sized);

/** Whether op's shape function may read its arguments' values (nonzero,
 * masked_select; index.Tensor, index_put and index_put_ with a bool mask;
 * the unique family and bincount, op_unique.def),
 * and refuse fake ones: tj_graph_run checks such a node's results against
 * the shapes the graph recorded. */
bool tj_op_shape_reads_values(const tj_op *op);

#endif
