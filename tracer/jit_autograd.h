/* Differentiable compiled functions (AOTAutograd for tj_jit): a signature
 * whose outputs require grad is traced as a joint forward-backward graph,
 * split into a forward plan and a backward plan, and each call's outputs
 * get a history whose backward runs the backward plan
 * (tj_autograd_function_apply). */
#ifndef TJIT_TRACER_JIT_AUTOGRAD_H
#define TJIT_TRACER_JIT_AUTOGRAD_H

#include "graph_internal.h"
#include "tjit/autograd.h"
#include "tjit/jit.h"

/** The backward half of one signature's compiled function, shared by the
 * jit's cache entry and the histories of the outputs it made (which may
 * outlive the entry). */
typedef struct tj_jit_backward tj_jit_backward;

/** What tj_jit_differentiate needs to know of fn's outputs (from a trace). */
typedef struct tj_jit_outputs {
    int n;                      /**< fn's outputs */
    const bool *requires_grad;  /**< per output, in the trace */
    const tj_graph *graph;      /**< the trace: its first n outputs are fn's */
} tj_jit_outputs;

/** Traces `fn` (inputs: n real or fake tensors) with the gradients of its
 * outputs that require grad, weighted by tangents, with respect to its
 * inputs that require grad: the joint graph, functionalised and split
 * (tj_graph_partition). Shows the forward graph, then the backward graph,
 * to opts->on_graph (*refused when it fails: no graph break), compiles the
 * backward one into *backward (one reference) and gives the forward graph
 * (outputs: fn's, then the values saved for backward) in *forward.
 * TJ_ERR_UNSUPPORTED for a function updating an input in place; the
 * errors of tracing, functionalising, on_graph and tj_compile. */
tj_status tj_jit_differentiate(tj_trace_fn fn, void *fn_ctx, tj_tensor *const *inputs, int n,
                               const tj_jit_options *opts, const tj_jit_outputs *outputs, tj_graph **forward,
                               tj_jit_backward **backward, bool *refused);

/** Gives those of fn's outputs (as many as the trace's, owned as operator
 * results) that required grad in the trace a history whose backward runs
 * b's plan on the inputs it reads, `saved` (the forward plan's outputs
 * after fn's and its write-backs: owned references, taken in every case)
 * and their gradients; each may be
 * replaced in place by an alias carrying the history, where
 * tj_autograd_function_apply replaces it. The other outputs get none (as
 * AOTAutograd marks them non-differentiable). Errors of
 * tj_autograd_function_apply. */
tj_status tj_jit_backward_attach(tj_jit_backward *b, tj_tensor *const *inputs, int n, tj_tensor **outputs,
                                 tj_tensor **saved);

/** Drops a reference (NULL is ignored). */
void tj_jit_backward_release(tj_jit_backward *b);

#endif
