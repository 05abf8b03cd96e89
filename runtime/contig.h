/* Row-major access to any tensor's elements for kernels that need dense
 * operands: the tensor's own memory when it is contiguous, else a temporary
 * contiguous copy (one copy, released by tj_contig_release). */
#ifndef TJIT_RUNTIME_CONTIG_H
#define TJIT_RUNTIME_CONTIG_H

#include "internal.h"

typedef struct tj_contig {
    const char *data; /**< element [0, ..., 0], row-major, t's dtype */
    tj_tensor *copy;  /**< the temporary, or NULL */
} tj_contig;

/** Points c->data at t's elements in row-major order. Fails only when the
 * copy cannot be allocated (TJ_ERR_OUT_OF_MEMORY, c left empty). */
tj_status tj_contig_get(tj_contig *c, const tj_tensor *t);
/** Releases the temporary, if any. Safe on a zeroed or released tj_contig. */
void tj_contig_release(tj_contig *c);

#endif
