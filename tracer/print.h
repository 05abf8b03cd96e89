/* Pieces of the graph printer shared with the DOT and JSON writers. */
#ifndef TJIT_TRACER_PRINT_H
#define TJIT_TRACER_PRINT_H

#include <stdio.h>

#include "graph_internal.h"

/** Fewest digits that read back to the same double, laid out as Python's
 * repr (100.0, 0.0001, 1e+16, 1e-05); always has '.' or 'e' (or is nan /
 * inf / -inf). */
void tj_format_float(double f, char *buf, size_t n);
/** tj_format_float with the fewest digits that read back to the same
 * float32 (strtod, then rounded to float32, as tj_graph_parse reads a
 * float32 constant): 0.1, 1e-45, 3.4028235e+38. */
void tj_format_float32(float f, char *buf, size_t n);
/** "f32[2, 3]", plus "{1, 2}" strides when `strides` is given and not contiguous. */
void tj_print_type(FILE *f, tj_dtype dtype, int ndim, const int64_t *shape, const int64_t *strides);
void tj_print_garg(FILE *f, const tj_graph *g, const tj_garg *a);
/** "aten.add.Tensor", "aten.abs.default", "mylib.scaled_add.default". */
void tj_print_target(FILE *f, const tj_op *op);

#endif
