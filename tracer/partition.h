/* The split of a joint forward-backward graph into a forward graph and a
 * backward graph (AOTAutograd's default partitioner), for differentiable
 * compiled functions (tracer/jit_autograd.c). */
#ifndef TJIT_TRACER_PARTITION_H
#define TJIT_TRACER_PARTITION_H

#include "graph_internal.h"

/** The two halves of a joint graph. */
typedef struct tj_partition {
    /** inputs: the joint's primals; outputs: the joint's first n_forward
     * outputs and those it writes back into inputs (in the joint's order,
     * written back as there), then the n_saved values the backward graph
     * reads */
    tj_graph *forward;
    /** inputs: the primals it reads (primal_of[k] for input k <
     * n_primals_read), then the n_saved values, then the tangents;
     * outputs: the joint's other outputs (the gradients) */
    tj_graph *backward;
    int n_saved;
    int n_primals_read;
    int n_primals_alloc; /**< primal_of's size */
    int *primal_of; /**< n_primals_read entries (tj_alloc'd) */
} tj_partition;

/** Splits `joint`, whose inputs are n_primals primals then the tangents and
 * whose outputs are n_forward forward outputs, then gradients, and any new
 * values of primals it writes back (functionalisation's), as
 * AOTAutograd's default partitioner does: a call that reads a tangent
 * (directly or through other calls) runs in the backward graph, the others
 * in the forward graph; forward values the backward graph reads are saved
 * (forward outputs), but views, which the backward graph recomputes from
 * their base (they cost nothing in a plan), and primals, which it takes as
 * inputs. The backward must not read the value of a primal from before
 * the forward writes it back (autograd's version checks refuse such a
 * joint trace: TJ_ERR_MODIFIED). Saved values are inputs of the backward graph contiguous, as
 * plans return them. `joint` is unchanged. TJ_ERR_OUT_OF_MEMORY; nothing
 * is left allocated on failure. */
tj_status tj_graph_partition(const tj_graph *joint, int n_primals, int n_forward, tj_partition *out);

/** Frees both graphs and the table (a zeroed struct is fine). */
void tj_partition_free(tj_partition *p);

#endif
