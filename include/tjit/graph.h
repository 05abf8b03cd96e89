/* Graphs: make_fx tracing, the graph IR, its text / DOT / JSON forms, graph
 * passes and the interpreter (PyTorch's make_fx + torch.fx, in C).
 *
 * A graph is a list of nodes in execution order: one placeholder per input,
 * constants (tensors the traced function used that were neither inputs nor
 * results of recorded calls), one call node per recorded operator call (ATen
 * overload plus its arguments as references to earlier values or as literal
 * constants), and one output node. Every value carries dtype, shape and
 * strides. */
#ifndef TJIT_GRAPH_H
#define TJIT_GRAPH_H

#include <stdio.h>

#include "dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tj_graph tj_graph;
typedef struct tj_decomp_table tj_decomp_table;

/** make_fx tracing modes. */
typedef enum tj_tracing_mode {
    TJ_TRACE_REAL = 0, /**< kernels run: the traced function sees real values */
    TJ_TRACE_FAKE,     /**< only dtypes and shapes flow; no tensor data is allocated */
} tj_tracing_mode;

/** Most outputs a traced function may return. */
#define TJ_MAX_GRAPH_OUTPUTS 1024

/** A function to trace. `outputs` has room for *n_outputs tensors (at most
 * TJ_MAX_GRAPH_OUTPUTS); the function stores its results there and sets
 * *n_outputs to their count. It runs inside a scope: intermediates need no
 * release, and results must not be released. Returns TJ_OK or the failing
 * call's status. */
typedef tj_status (*tj_trace_fn)(void *ctx, tj_tensor *const *inputs, int n_inputs, tj_tensor **outputs,
                                 int *n_outputs);

/** PyTorch's make_fx: calls fn(ctx, inputs) under a trace mode and returns the
 * recorded graph (caller frees it with tj_graph_free). `table` maps operators
 * to decompositions applied while tracing (NULL: none); it is used for this
 * trace only (never a global), also when traces nest. In fake mode the inputs
 * only lend their dtype/shape/strides (they may be fake tensors): fn runs on
 * fake copies, and what it does to them leaves the inputs alone; real tensors
 * fn reaches otherwise (captured in ctx) become constants, and tj_backward
 * refuses to store a gradient into their .grad (TJ_ERR_INVALID_ARGUMENT: it
 * would be fake). In real mode
 * fn runs on the inputs themselves, as eagerly: what it does to them (in-place
 * updates, tj_tensor_set_requires_grad, .grad from tj_backward) stays after
 * the trace, and so does the .grad tj_backward gives captured tensors.
 * Tensors fn makes itself without an operator call (tj_tensor_from_data,
 * tj_tensor_empty, tj_tensor_scalar_*) are new at every call: the graph
 * keeps their value at first use as a constant, and one that fn writes in
 * place is read through a copy (`%lift_fresh_copy = aten._to_copy(...)`,
 * torch's lift_fresh_copy), so every run starts from that value. A
 * tensor fn reaches otherwise (captured in ctx) is a constant held by
 * reference, as torch's make_fx holds it (_tensor_constantN is the tensor
 * itself): when fn writes it in place (buf.add_(x)), a real-mode trace
 * writes it once, and every run of the graph or of a plan writes it again
 * (buf 0, add_(2): 2 after the trace, then 4, 6, 8 after three runs). A plan
 * writing such a constant runs on one context at a time (see
 * tj_plan_context_new). Errors:
 * whatever fn returns (the graph is discarded; when fn returned it without
 * recording an error, or after a failed call with another status,
 * tj_last_status() is fn's status and the message says so), TJ_ERR_INVALID_ARGUMENT for
 * NULL fn or inputs and for a function that left modes pushed (tj_mode_push
 * without tj_mode_pop: they are popped, the stack is as before the call), TJ_ERR_CYCLE for a decomposition that reaches the
 * operator it decomposes, TJ_ERR_UNSUPPORTED for data-dependent operators in
 * fake mode and for a function that read a fake tensor's values in fake mode
 * (tj_tensor_item_at, tj_tensor_data, tj_tensor_copy_to: nothing to read, so
 * a branch on them would be baked into the graph silently; PyTorch raises
 * DataDependentOutputException), TJ_ERR_OUT_OF_MEMORY. */
tj_graph *tj_make_fx(tj_trace_fn fn, void *ctx, tj_tensor *const *inputs, int n_inputs,
                     const tj_decomp_table *table, tj_tracing_mode mode);

void tj_graph_free(tj_graph *g);

/* ---- inspection ---- */
typedef enum tj_node_kind {
    TJ_NODE_PLACEHOLDER = 0,
    TJ_NODE_CONSTANT,
    TJ_NODE_CALL,
    TJ_NODE_OUTPUT,
} tj_node_kind;

/** Number of nodes, placeholders and graph outputs. */
int tj_graph_num_nodes(const tj_graph *g);
int tj_graph_num_inputs(const tj_graph *g);
int tj_graph_num_outputs(const tj_graph *g);
/** A node's kind; TJ_NODE_OUTPUT for a NULL graph or a node out of range
 * (nothing to look at, as past the output node). */
tj_node_kind tj_graph_node_kind(const tj_graph *g, int node);
/** The operator of a call node (NULL for other kinds). */
const tj_op *tj_graph_node_op(const tj_graph *g, int node);
/** Name of a node's first value ("addmm_1"); "" for a NULL graph or a node out of range. */
const char *tj_graph_node_name(const tj_graph *g, int node);
/** Number of call nodes whose operator is `op` (by pointer). */
int tj_graph_count_op(const tj_graph *g, const tj_op *op);
/** Number of call nodes. */
int tj_graph_num_calls(const tj_graph *g);
/** Longest value name, in characters: of tj_graph_set_input_name and of the
 * names tj_graph_parse reads, so that every graph printed parses back. */
#define TJ_GRAPH_NAME_MAX 127
/** Sets the name of placeholder `i` (letters, digits, '_'; must not start
 * with a digit; at most TJ_GRAPH_NAME_MAX characters; names must stay
 * unique). Errors: TJ_ERR_INVALID_ARGUMENT for a NULL graph or name, an
 * invalid, too long or used name; TJ_ERR_INDEX for no input i;
 * TJ_ERR_OUT_OF_MEMORY. */
tj_status tj_graph_set_input_name(tj_graph *g, int i, const char *name);

/** For graph output i: the index of the graph input it is written back into
 * after each run (a mutation that functionalisation turned into an output),
 * or -1 for an ordinary output (also for a bad index). */
int tj_graph_output_writeback(const tj_graph *g, int i);

/* ---- text, DOT, JSON ---- */
/** Writes the graph as FX-style text:
 *     graph(%arg0_1 : f32[2, 3], %arg1_1 : f32[3]):
 *         %add = aten.add.Tensor(%arg0_1, %arg1_1)
 *         return (%add,)
 * Values are named as torch 1.13's make_fx names them: placeholders arg0_1,
 * arg1_1, ... (unless tj_graph_set_input_name renamed them), a call's value
 * after its operator (add, add_1, ...), the values of a multi-output call
 * getitem, getitem_1, ... Tensor constants of up to 16 elements are
 * written inline (`%_tensor_constant0 : f32[3] = constant([1.0, 2.0, 3.0])`);
 * larger ones as `%_tensor_constant0 : b8[64, 64] = constant(_tensor_constant0)`
 * with their values after the return line, `_tensor_constant0 = [True, ...]`
 * (FX keeps such constants out of the graph, as get_attr nodes). A str
 * argument is written in single quotes with Python's escapes, `'it\'s\n'`
 * (\\, \', \n, \r, \t, \xNN for another control character), and \xNN
 * for each byte that is no part of a UTF-8 character (the byte NN). A graph with
 * outputs written back into inputs (tj_pass_functionalize) ends its return
 * line with a suffix FX does not have, `return (%add, %mul) writeback {1: 0}`
 * (output 1 is copied into input 0 after each run), which tj_graph_parse
 * reads back. A placeholder's type gives its strides in elements where they
 * are not row-major, `f32[3, 2]{1, 3}`, and its storage offset where it is
 * not 0, `f32[2, 3]{4, 1} offset 1`. An input whose traced geometry a
 * gradient formula read (aten::as_strided's: the graph holds for those
 * strides and that offset only, see tj_graph_run) writes both always,
 * strides of size-1 dims included, then why, in double quotes:
 * `%arg0_1 : f32[2, 3]{4, 1} offset 1 bound "aten::as_strided's gradient"`;
 * parsed back, its plans and tj_graph_run refuse other geometries as the
 * traced graph's do, with the same message. Errors: TJ_ERR_IO when a write or the final flush of `f` fails (the message gives errno's reason). */
tj_status tj_graph_print(const tj_graph *g, FILE *f);
/** The same text in a new string (free with free()); NULL when out of memory. */
char *tj_graph_to_string(const tj_graph *g);
/** Parses graph text as tj_graph_print writes it (after a UTF-8 byte
 * order mark, which is skipped). Errors (NULL, status
 * TJ_ERR_PARSE) name the line and column; unknown operators, undefined
 * values and wrong arities are errors too, and so are a negative `offset`
 * or stride, a placeholder geometry whose last element lies beyond
 * INT64_MAX, and a `bound` reason that is not a non-empty double-quoted string of
 * printable ASCII on one line (`offset` and `bound` come in this order,
 * after a placeholder's type only; a bound placeholder without strides or
 * offset is row-major at offset 0), and a `writeback` that writes two
 * outputs into one input, an output of another dtype or shape than its
 * input (tj_compile's rule: it is the input's new value), or an output
 * that is (a view of) an input another output is written back into
 * (tj_compile's rule: the write-backs run one after another). Output values
 * are re-inferred with the operators' shape functions. A number (int, float,
 * True / False) where the operator wants a Tensor is a wrapped number, as
 * torch 1.13's make_fx writes `aten.add.Tensor(%x_1, 1)`: the call is
 * recorded under the overload of the same operator that takes a Scalar
 * there and is otherwise the same (add.Scalar; where.ScalarOther,
 * ScalarSelf or Scalar; remainder.Scalar_Tensor for a number as self),
 * whose type promotion is ATen's for a wrapped number, so it prints back
 * as that overload; where none exists the error names the operator and
 * the argument ("aten::maximum: argument 'other' wants a Tensor; no
 * overload takes a Scalar there"). A layout, device or memory_format
 * argument is None or the value FX writes for what None means here
 * (`layout = torch.strided`, `device = device(type='cpu')` or `'cpu'`,
 * `memory_format = torch.contiguous_format` or `torch.preserve_format`),
 * read as None; another is an error naming the operator and the argument
 * ("aten::zeros: argument 'device' takes None, device(type='cpu') or
 * 'cpu'"). */
tj_graph *tj_graph_parse(const char *text);
/** Graphviz DOT: one box per node labelled with operator and output shape;
 * a placeholder's also with its geometry as the text gives it (strides
 * where not row-major, `offset N` where not 0) and, for a bound one, a line
 * `bound: reason`.
 * Errors: TJ_ERR_IO when a write or the final flush of `f` fails (the message gives errno's reason). */
tj_status tj_graph_write_dot(const tj_graph *g, FILE *f);
/** JSON (through jansson): {"inputs": [...], "nodes": [...], "outputs": [...]};
 * every value (an input, a node's output) is {"name", "dtype", "shape",
 * "strides" (in elements), "offset" (storage offset)}, an input adds
 * "geometry_bound": why the graph holds for its strides and offset only
 * (as the text's `bound "..."`), null when it holds for any; a constant node carries its elements, row-major, in "values" (floats as
 * numbers, or {"float": "inf"} / "-inf" / "nan"; int64 exactly; bools as
 * true/false; null for a fake constant, which has none); a call node its
 * "op" and "args", one per schema argument: null, {"value": name},
 * {"values": [name or null, ...]}, numbers, bools, lists of them,
 * {"dtype": name}, strings; a str argument that is not UTF-8 (JSON strings
 * must be) as {"bytes": [97, 255, ...]}, its bytes.
 * Errors: TJ_ERR_IO when a write or the final flush of `f` fails (the message gives errno's reason), TJ_ERR_OUT_OF_MEMORY. */
tj_status tj_graph_write_json(const tj_graph *g, FILE *f);

/* ---- running ---- */
/** Runs the graph through the dispatcher (so under a trace mode it is traced
 * again). inputs must match the placeholders' dtypes and shapes
 * (TJ_ERR_SHAPE / TJ_ERR_DTYPE otherwise), and an input whose traced
 * strides and offset a gradient formula read (aten::as_strided's) its
 * traced strides and offset (TJ_ERR_INVALID_ARGUMENT); traced again by
 * make_fx, such an input binds the new graph the same way. Writes tj_graph_num_outputs new
 * references into outputs (adopted by the innermost open scope). Each
 * intermediate is released after its last use. Outputs marked as written
 * back (tj_graph_output_writeback) are copied into their input with copy_
 * after the run, and returned as that input tensor (another output that is
 * such an input, or a view of one, is a copy of its value before the
 * write-back, as tj_plan_run's); an input written back
 * that shares memory with another input, or whose own elements share
 * memory (an expanded tensor, which copy_ cannot write), is refused before
 * anything runs (TJ_ERR_INVALID_ARGUMENT naming them, as tj_plan_run: see
 * tj_pass_functionalize).
 * In-place calls that are left in a graph change the caller's inputs as
 * they run. */
tj_status tj_graph_run(const tj_graph *g, tj_tensor *const *inputs, int n_inputs, tj_tensor **outputs);

/* ---- passes: each keeps the graph's semantics ---- */
/** Removes call nodes whose values are unused (random operators included:
 * an unused draw has no observable effect on the graph's outputs). Returns
 * the number of nodes removed, or -1 on error. */
int tj_pass_dead_code(tj_graph *g);
/** Merges call nodes with the same operator and arguments (never random or
 * in-place operators). Returns the number of nodes removed. */
int tj_pass_cse(tj_graph *g);
/** Removes no-ops: mul/div by 1, add/sub of 0 with alpha 1 (for float
 * results only x + (-0) and x - (+0), since x + 0 turns -0 into +0, which
 * abs's decomposition relies on), view/reshape/expand to the same
 * shape, t(t(x)), _to_copy to the same dtype and clone of a value with no
 * other use and the copy's strides (a contiguous copy of a transposed view
 * stays: the views after it need that layout). A no-op whose result is a
 * graph output stays when removing it would make that output the graph's
 * input or constant tensor, or another output (tj_graph_run hands each
 * output to the caller as a tensor of its own).
 * Returns the number of nodes removed, or -1 (TJ_ERR_INVALID_ARGUMENT) for a
 * NULL graph. */
int tj_pass_noop(tj_graph *g);

/** Functionalisation (PyTorch's functionalize): rewrites every in-place call
 * into its out-of-place operator (add_ -> add, copy_ -> copy or the source
 * itself, ...), and a built-in call writing other Tensor(a!) arguments into
 * its functional form (native_batch_norm's running statistics in training ->
 * _native_batch_norm_legit_functional, which returns their new values; in
 * evaluation the call writes nothing and stays). Later uses of a mutated
 * value, and of every view of it, read the new value (views are regenerated
 * from it); a mutation through a view writes back into its base through the
 * inverse of each view (slice_scatter, select_scatter, view, permute,
 * transpose, squeeze / unsqueeze). Through an expand, whose broadcast
 * dims name one input element many times, the write must give those
 * indices one value (fill_, zero_, index_fill_ along another dim, which
 * eager code allows on an expanded tensor; or a write through selects and
 * slices of broadcast dims, as
 * x.expand(4, 3)[1].add_(1)): the input takes it, index 0 of each broadcast
 * dim (not sum_to, with which torch 1.13's functionalize turns
 * x.expand(4, 3).fill_(2) into 8s). Each mutated graph input becomes an extra
 * output written back into that input (tj_graph_output_writeback), so
 * running the graph has the same effect as before; one whose new value is
 * another mutated input's tensor (b.copy_(a); a.add_(1)) is written as a
 * copy of it, as the write-backs run one after another. Returns the number of
 * in-place calls rewritten (0: nothing to do), or -1 on error:
 * TJ_ERR_UNSUPPORTED for another write through an expand (index_put_ into
 * an expanded tensor, index_fill_ along a broadcast dim, a write to a
 * diagonal of one), a mutation through a
 * view without an inverse, or an in-place operator without an out-of-place
 * form.
 * Mutated constants become ordinary values (not written back). Every new
 * value is computed from the inputs as passed and written back at the end,
 * so a run (tj_graph_run, tj_plan_run) on a written-back input that shares
 * memory with another input (the same tensor passed twice, overlapping
 * views) is refused: neither would see the other's writes; so is one whose
 * own elements share memory (an expanded tensor). An aten::as_strided
 * reads its input's storage: where the functional graph applies one (or
 * its as_strided_scatter) to a graph input's new value, laid out row-major,
 * the graph holds for that input's recorded strides and offset only, and
 * runs with others are refused (TJ_ERR_INVALID_ARGUMENT, as for a traced
 * gradient's as_strided; the text shows the input as `bound`). The in-place views
 * (unsqueeze_, squeeze_, squeeze_.dim, transpose_, t_) become their view
 * operators, as torch 1.13's functionalize records them; one changing the
 * shape of a graph input's own tensor is refused (TJ_ERR_UNSUPPORTED: the
 * caller's tensor would keep its shape; torch records as_strided_ on it).
 * In a graph with in-place calls, the implicit operators (reshape, flatten,
 * contiguous, split: a view of their input or a copy, as its layout decides)
 * are first replaced by the calls they make (tj_graph_decompose without a
 * table), as torch functionalizes below CompositeImplicitAutograd; that
 * replay's errors are then this pass's. */
int tj_pass_functionalize(tj_graph *g);

typedef int (*tj_graph_pass)(tj_graph *g);
/** Runs passes in order until none changes the graph (at most 8 rounds);
 * when `report` is not NULL writes one line per pass with node counts. */
tj_status tj_run_passes(tj_graph *g, const tj_graph_pass *passes, const char *const *names, int n, FILE *report);

#ifdef __cplusplus
}
#endif
#endif
