/* Compiled functions: a traced function's plans cached by the signature of
 * its inputs, as torch.compile keeps one graph per set of guards and
 * recompiles when a call fails them (a new batch size, dtype or layout).
 *
 *     tj_jit *step = tj_jit_new(train_step, &model, NULL);
 *     for (...) {                                       // traced and compiled once
 *         tj_scope *s = tj_scope_begin();               // per signature, then replayed
 *         tj_jit_run(step, inputs, n, &loss, 1, &n_out);
 *         tj_scope_end(s);                              // releases loss
 *     }
 *     tj_jit_free(step);
 *
 * A call traces the function in fake mode (tj_make_fx, with the options'
 * decomposition table), functionalises the graph (tj_pass_functionalize: an
 * input the function updates in place, a parameter or optimiser state, is
 * written back into the caller's tensor after each run), compiles it
 * (tj_compile) and keeps the plan for later calls with the same signature.
 * When gradients are recorded and an input requires grad, the outputs get a
 * history whose backward is compiled too, as torch.compile's AOTAutograd
 * compiles a forward and a backward graph (see tj_jit_run). */
#ifndef TJIT_JIT_H
#define TJIT_JIT_H

#include "graph.h"
#include "plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tj_jit tj_jit;

/** Called with each graph a tj_jit traces, after functionalisation and
 * before compiling (where torch.compile hands a backend its FX graph):
 * print it, rename its inputs, run passes over it (a signature with
 * gradients has two: the forward graph, then the backward graph, as
 * aot_autograd's fw_compiler and bw_compiler see them; see tj_jit_run).
 * Returning an error status fails the call that traced it (nothing is
 * cached), eager_fallback or not: it is no graph break. */
typedef tj_status (*tj_jit_graph_fn)(void *ctx, tj_graph *g);

/** Options of tj_jit_new; NULL or a zeroed struct gives the defaults. */
typedef struct tj_jit_options {
    /** Applied while tracing, as tj_make_fx's table: NULL records the
     * operators as fn calls them, tj_core_decompositions() the core ATen
     * operators they decompose into. Borrowed: it must outlive the tj_jit
     * (free it after tj_jit_free). */
    const tj_decomp_table *decompositions;
    /** Passed to tj_compile, but `writeback`, which must be NULL: each graph
     * has its own (those of functionalisation). */
    tj_compile_options compile;
    /** Most plans kept; a new signature beyond it replaces the least recently
     * used plan (tj_jit_statistics.evictions counts them). 0: 8, as
     * torch._dynamo's cache_size_limit. */
    int cache_limit;
    /** Names of the placeholders, input_names[i] for input i (NULL: arg0_1,
     * arg1_1, ... as tj_make_fx names them); borrowed: the array and strings
     * must outlive the tj_jit, and hold as many names as any call passes
     * inputs. Rules as tj_graph_set_input_name: a NULL, invalid, too long or
     * repeated name fails the call that traces (TJ_ERR_INVALID_ARGUMENT
     * naming input_names[i]). */
    const char *const *input_names;
    tj_jit_graph_fn on_graph; /**< see tj_jit_graph_fn; NULL: none */
    void *on_graph_ctx;
    /** When tracing, functionalising or compiling fails with
     * TJ_ERR_UNSUPPORTED (fn reads a value, tj_tensor_item_at, to decide
     * what to compute; a data-dependent operator; a mutation
     * functionalisation cannot express; a change to an input's autograd
     * state, which a plan cannot make: a .grad stored by tj_backward, or
     * requires_grad changed by tj_tensor_set_requires_grad or by an
     * in-place update with a value that requires grad), call fn eagerly for that signature
     * from then on instead of failing, as torch.compile falls back to eager
     * at a graph break (tj_jit_statistics.eager_signatures counts them).
     * fn then gets room for TJ_MAX_GRAPH_OUTPUTS outputs, as when traced,
     * and its count and outputs are checked as tj_make_fx checks them.
     * Off (the default, in a zeroed struct: as torch.compile's
     * fullgraph=True): the call fails with that error. */
    bool eager_fallback;
    /** When set, one line per trace: its outcome, time, and cause, "first
     * call" or the first guard failed by the cached plan the inputs are
     * closest to (the fewest inputs failing a guard; of those, the most
     * recently used), as TORCH_LOGS=recompiles says it ("tj_jit: traced and
     * compiled in 12.34 ms (input 7: shape [32, 784], was [64, 784])"); after
     * a failed trace, the error on the next line, and after a graph break
     * (eager_fallback), its cause. Borrowed: it must outlive the tj_jit. NULL: quiet. */
    FILE *log;
} tj_jit_options;

/** A compiled function of `fn` (with `ctx`, borrowed: it must outlive the
 * tj_jit). Tensors fn reaches through ctx rather than its inputs are
 * constants of each graph (tj_make_fx): pass as inputs whatever changes
 * between calls (parameters, batches). Nothing is traced until the first
 * call. Free with tj_jit_free. NULL on error: TJ_ERR_INVALID_ARGUMENT for a
 * NULL fn, a negative cache_limit or a non-NULL compile.writeback;
 * TJ_ERR_OUT_OF_MEMORY. */
tj_jit *tj_jit_new(tj_trace_fn fn, void *ctx, const tj_jit_options *opts);

/** Frees the jit and every plan it holds (NULL is ignored). Plans returned by
 * tj_jit_plan become invalid; outputs of tj_jit_run stay valid. */
void tj_jit_free(tj_jit *j);

/** Calls the compiled function on `inputs` (n of them, real tensors): runs
 * the plan cached for their signature, after tracing and compiling one when
 * there is none (or calls fn eagerly: see eager_fallback; its outputs are
 * then new references to the tensors fn returned). Called while traced
 * (tj_make_fx of a function calling it, or the fn of another jit), it calls
 * fn as it is, so that the trace records fn's operators, as make_fx traces
 * through a torch.compile'd function: nothing is compiled or cached, and
 * the inputs may be the trace's fake tensors. The signature is the input count, whether gradients are
 * recorded (tj_grad_enabled), and for each input its dtype, shape, strides
 * (of dims longer than 1), whether it requires grad, and its storage offset
 * where the graph holds for that offset only (a gradient of as_strided
 * built from it, see tj_plan_run). Writes fn's outputs, new tensors (owned
 * by the caller, or by the innermost open scope, as tj_plan_run's), into
 * `outputs` (room for max_outputs) and their count into *n_outputs; inputs
 * fn updated in place hold their new values (the written-back outputs of
 * functionalisation are not among `outputs`). An output that is an input
 * of fn (or a view of one) is a new tensor holding its values, not that
 * input, as tj_plan_run gives it.
 *
 * Gradients, as torch.compile's AOTAutograd: when gradients are recorded and
 * an input requires grad, the outputs that require grad in the trace carry a
 * history (node "CompiledFunctionBackward") whose backward is compiled too.
 * The signature's first call traces the joint graph (calling fn twice: alone,
 * to learn which outputs require grad, then with the gradients
 * of those outputs, weighted by placeholders tangents_1, tangents_2, ...,
 * with respect to the inputs that require grad), splits it as AOTAutograd's
 * default partitioner (the forward graph returns fn's outputs and the values
 * the backward reads, but views, which the backward makes again from their
 * base, and inputs, which it reads as they are), shows on_graph the forward
 * then the backward graph, and compiles both (tj_jit_plan gives the forward
 * plan). tj_backward / tj_autograd_grad through an output runs the backward
 * plan; its gradients go into the inputs' .grad or on into their own
 * history; an output no gradient reaches counts as zeros (an input that only
 * it depends on gets a zero gradient, where eagerly it gets none, as with
 * torch.compile). The backward plan
 * belongs to the outputs' history: it outlives the jit. As any node's, the
 * saved values go after a pass without retain_graph (a second pass fails),
 * and a pass fails with TJ_ERR_MODIFIED when an input the backward reads was
 * written in place since the call. Inputs that do not require grad and that
 * fn updates in place (buffers, running statistics) are written back by the
 * forward plan, as AOTAutograd copies such mutations back; a signature in
 * which fn updates an input that requires grad (an optimiser's step, in a
 * training step) is compiled without gradients: its outputs get no history,
 * as the parameters' old values they would need are gone after the call.
 * Gradients reach fn's inputs only: a tensor fn reaches through ctx is a constant of the
 * graph, whatever its requires_grad, and gets no .grad, without an error
 * (pass parameters as inputs). A custom function in fn
 * (tj_autograd_function_apply) has its backward callback run once, on fake
 * tensors, while the joint graph is traced; later passes run the compiled
 * backward plan, so side effects in the callback do not repeat, and one that
 * reads values (tj_tensor_item_at) fails the trace as fn reading them does.
 * Outputs that no gradient will flow through are best returned detached
 * (tj_tensor_detach): a signature with no output requiring grad saves
 * nothing.
 *
 * Gradients computed inside fn (tj_autograd_grad, as models/step.c) compile
 * the backward pass with the step: what they differentiate with respect to must
 * require grad: mark the parameters with tj_tensor_set_requires_grad before
 * the call (it is part of the signature), or inside fn on aliases from
 * tj_tensor_detach, as models/step.c does; marking fn's inputs themselves,
 * or tj_backward storing their .grad, is a change a plan cannot make
 * (TJ_ERR_UNSUPPORTED, see eager_fallback). A step that updates the
 * parameters it takes as inputs returns outputs without history (above); one
 * that does not, with parameters marked before the call, gets gradients for
 * its outputs that require grad (the loss): return it detached when none will
 * flow, or its forward saves values for nothing. A jit runs one call at a time:
 * it is not for several threads at once; backward passes through its
 * outputs may run on several threads at once, as eagerly (a pass that finds
 * the backward plan running takes a context of its own). Errors: TJ_ERR_INVALID_ARGUMENT
 * for a NULL jit, inputs or n_outputs, NULL outputs with max_outputs > 0,
 * fewer than fn's outputs (max_outputs; the message gives the count; the
 * call did not run), a fake input, bad input_names, and an input that fn
 * updates in place sharing memory with another input (the same tensor
 * twice: functionalisation computes both from their values before the run;
 * tj_plan_run's error); TJ_ERR_UNSUPPORTED for a call while
 * another of this jit is in progress (another thread, or fn calling its own
 * jit while traced); the errors of tracing (tj_make_fx: fn's own status,
 * data-dependent operators in fake mode, ...), of tj_pass_functionalize, of
 * on_graph, of tj_compile and of tj_plan_run (a kernel's error: outputs are
 * then NULL and written-back inputs may be partly updated);
 * TJ_ERR_OUT_OF_MEMORY. */
tj_status tj_jit_run(tj_jit *j, tj_tensor *const *inputs, int n, tj_tensor **outputs, int max_outputs,
                     int *n_outputs);

/** The plan tj_jit_run would run for `inputs` (traced and compiled now when
 * the jit has none for their signature; not run; NULL with TJ_ERR_UNSUPPORTED
 * for a signature that fell back to eager): for tj_plan_stats, the
 * profiler (tj_plan_set_profiling) or tj_plan_print_memory, or to compile
 * ahead of the first call. The inputs may be fake tensors (tj_tensor_fake:
 * only their signature counts). Borrowed: valid
 * until the jit evicts it (a later call with another signature, beyond
 * cache_limit) or is freed; do not free it. Its outputs include those
 * functionalisation added (tj_plan_num_outputs), or for a signature with
 * gradients (see tj_jit_run), the forward plan's: fn's outputs, then the
 * values saved for the backward. NULL on error, as
 * tj_jit_run's. */
tj_plan *tj_jit_plan(tj_jit *j, tj_tensor *const *inputs, int n);

typedef struct tj_jit_statistics {
    int64_t calls;     /**< tj_jit_run calls that succeeded */
    int64_t compiles;  /**< graphs traced and compiled (calls that missed the cache, and tj_jit_plan's) */
    int64_t evictions; /**< plans dropped for cache_limit */
    int64_t eager_calls; /**< of calls, those that called fn eagerly (eager_fallback, or while traced) */
    int64_t eager_signatures; /**< of compiles, those that failed and fell back to eager */
    int plans;         /**< plans held now (eager signatures among them) */
} tj_jit_statistics;

/** Fills `out` with the jit's counts. Errors: TJ_ERR_INVALID_ARGUMENT for a
 * NULL argument. */
tj_status tj_jit_stats(const tj_jit *j, tj_jit_statistics *out);

#ifdef __cplusplus
}
#endif

#endif
