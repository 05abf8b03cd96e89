/* The functions a model traces: its forward pass, or a whole training step
 * (forward, loss, backward, optimiser update), with every parameter and every
 * piece of optimiser state a graph input, as AOTAutograd lays them out. */
#ifndef TJIT_MODELS_STEP_H
#define TJIT_MODELS_STEP_H

#include "models.h"

typedef enum step_kind {
    STEP_FORWARD, /**< inputs: params..., x; output: logits */
    STEP_TRAIN,   /**< inputs: params..., optimiser state..., x, y; output: loss */
} step_kind;

/** make_fx of the model's forward pass or training step on a batch of the
 * model's WORKLOADS.md shape, with `table` (may be NULL). NULL on error. */
tj_graph *step_trace(model *m, step_kind kind, const tj_decomp_table *table, tj_tracing_mode mode);

#endif
