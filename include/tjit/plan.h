/* Replay: a graph compiled, for fixed input shapes and dtypes, into a plan
 * that runs with no dispatch, no boxing and no allocation.
 *
 * tj_compile binds every call node's kernel with its arguments boxed once,
 * resolves view operators (t, view, permute, slice, expand, ...) into strided
 * aliases of their base (they cost nothing at run time), keeps constants,
 * leaves out calls whose results no output needs (see no_dead_code),
 * computes once the nodes that read no input (constant folding: full, zeros,
 * arange, ... and deterministic operators over their results; random and
 * in-place operators never, see no_constant_folding), and
 * places every intermediate in one 64-byte-aligned arena by a static memory
 * plan: liveness over the schedule (a base stays alive while a view of it
 * is), best-fit placement in freed blocks, and in-place reuse for elementwise
 * operators whose input dies there (ggml-alloc's scheme); compiled at one
 * thread (or with no_thread_placement), the blocks are also placed largest
 * first over the whole schedule ("greedy by size", Pisarchyk and Lee 2020),
 * and the smaller arena kept.
 *
 * A plan is run through an execution context, which owns one arena and the
 * tensor objects that point into it. Several threads may run one plan at
 * once, each with its own context; tj_plan_run uses the plan's default
 * context (one thread at a time: a run that starts on a context while
 * another run of it is in progress, on another thread or from inside a
 * kernel of that run, fails with TJ_ERR_UNSUPPORTED, "another run of this
 * context is in progress", instead of sharing its arena). Except a plan that writes a graph
 * constant (a captured tensor the traced function updates in place, which
 * every run updates, see tj_make_fx): it runs on one context at a time, and
 * a run that starts while another is in progress is refused
 * (TJ_ERR_UNSUPPORTED naming the node and the constant), never raced.
 * Kernels use threads inside as in eager mode (tj_set_num_threads).
 *
 * Outputs, three ways:
 *   - tj_plan_run: new tensors owned by the caller (adopted by the innermost
 *     open scope). Allocates the outputs only: the last kernel writing an
 *     output writes into the new tensor directly.
 *   - tj_plan_run_into: into caller-provided tensors of the output shapes and
 *     dtypes. No heap allocation. A contiguous output tensor that shares no
 *     storage with an input is written by its last kernel directly; others
 *     get a copy at the end of the run.
 *   - tj_plan_run_into with outputs NULL: results stay in the context; read
 *     them with tj_plan_context_output (borrowed, valid until the context's
 *     next run). No heap allocation, no copy.
 * After the first run (which may fault the arena's pages in: the arena is
 * touched when the context is created), runs perform no heap allocation
 * through tj_set_allocator's hook: kernels that need scratch memory
 * (reductions' partial sums, packed matrix operands, convolution and
 * attention buffers) take it from the runtime's storage cache, which hands
 * the blocks freed by the previous run back (tests/test_replay.c checks the
 * mlp, cnn and gpt training steps). With the cache limited or off
 * (tj_storage_cache_set_limit) such kernels allocate.
 *
 * Inputs that the graph updates (outputs written back, as functionalisation
 * marks them) hold their new values after each run; the kernel making the
 * new value writes it straight into the input's buffer where that is safe,
 * and such values take no room in the arena. When a run's input cannot take
 * its value (not contiguous, or sharing storage with another input), the
 * value goes to a fallback block and is copied in at the end: the context
 * allocates that fallback once, in the first run that needs it. A run bumps
 * the version (tj_tensor_version) of every input it writes and of every
 * tensor tj_plan_run_into writes, as the in-place operators it stands for
 * would.
 *
 * Profiler: tj_plan_set_profiling times every kernel; tj_plan_profile_print
 * writes a table by operator like torch.profiler's key_averages().table(),
 * tj_plan_profile_write_trace a Chrome trace-event JSON file that Perfetto
 * (ui.perfetto.dev) and chrome://tracing open (`tjit profile MODEL`). */
#ifndef TJIT_PLAN_H
#define TJIT_PLAN_H

#include <stdio.h>

#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tj_plan tj_plan;
typedef struct tj_plan_context tj_plan_context;

/** Compile options; a zeroed struct (or NULL) gives the defaults. */
typedef struct tj_compile_options {
    bool no_memory_reuse;  /**< every intermediate gets its own block (arena = naive sum) */
    bool no_inplace_reuse; /**< never place an elementwise result over its dying input */
    bool profile;          /**< start with profiling on (see tj_plan_set_profiling) */
    /** Keep every call node in the run: no constant folding. By default
     * nodes whose value depends on no input (deterministic operators over
     * creation operators' results: full, zeros, arange, ...) are computed
     * once by tj_compile and shared by every context as constants. */
    bool no_constant_folding;
    /** Keep every call node in the run, even those whose results no output
     * needs. By default such calls leave the plan (dead-code elimination,
     * as Inductor does on make_fx graphs), unless their operator is in
     * place, random or a user operator: max_pool2d's indices in a forward
     * pass, or in a decomposed graph the whole chain that computes them, are
     * then never computed. */
    bool no_dead_code;
    /** Run multiplications and divisions by one. By default a mul.Tensor or
     * div.Tensor by a constant whose every element is 1 (after constant
     * folding: the core table's addmm multiplies by alpha and beta), or a
     * mul.Scalar or div.Scalar by 1, whose result has its operand's dtype
     * and shape, is no kernel but an alias of that operand (bit for bit the
     * same values), unless the plan has in-place or user operators or the
     * result is a graph output. */
    bool no_identity_elimination;
    /** Compute every call node, even one with the same operator and the
     * same arguments as an earlier one. By default the readers of such a
     * duplicate read the earlier node's results and the duplicate leaves the
     * plan with the dead code (common-subexpression elimination; the same
     * values, bit for bit): a decomposed training step's convolution
     * backward pads the layer's input again. Only deterministic built-in
     * operators (not random, not in place) merge, but no elementwise ones
     * or copies (_to_copy, clone), which cost little to recompute (inside a
     * fused step) and much to keep; none in a plan with
     * in-place or user operators. The earlier result lives until its last
     * reader, which may take more arena than the recomputation did. */
    bool no_common_subexpressions;
    /** Write-back of updated inputs (parameters, optimiser state): one
     * entry per graph output, the index of the input that output k is the
     * new value of, or -1; NULL takes the graph's own (the outputs
     * tj_pass_functionalize adds for mutated inputs, see
     * tj_graph_output_writeback). At the end of each run that input holds
     * the output's value: the output's kernel writes straight into the
     * input's buffer when every read of the input's old value comes before
     * that kernel (or in it, for an elementwise kernel reading the input
     * where it writes) and the input is contiguous and shares no storage
     * with another input at run time; otherwise the value is copied in after
     * the last kernel. */
    const int *writeback;
    /** Plain placement at any thread count (the smaller arena of best fit
     * in schedule order and greedy by size). By default, compiled
     * with 2 or more threads (tj_set_num_threads), a result goes where the
     * parts its threads write (contiguous parts, one per thread up to the
     * 64 a kernel runs on; results under 256 KiB: all by the calling
     * thread) fall on bytes the same
     * threads wrote last: on machines whose cores share no cache, writing
     * over another core's lines runs at DRAM speed (gpt forward replay 3-33%
     * faster at 2 threads here; the arena may grow a little). */
    bool no_thread_placement;
    /** Run every operator as its own kernel. By default an aten::relu,
     * aten::gelu or aten::add.Tensor (alpha 1, an operand of the result's
     * shape or a row broadcast over it, as a bias) that is the only reader
     * of a float32 aten::addmm's, aten::mm's or one-item aten::bmm's result
     * (directly or through reshapes and aliases: a decomposed linear's bias
     * add) runs inside the product's step, on each
     * part of the product as the GEMM finishes it, as Inductor fuses
     * pointwise epilogues into GEMMs: one pass over memory fewer, and at 2+
     * threads no reading of parts another core wrote. Results are the same,
     * bit for bit; the profiler shows such a step as "aten::addmm +
     * aten::relu". No fusion moves a read past an in-place or user
     * operator (unfunctionalised graphs), which could write what is read.
     * Also by default, an aten::bmm whose batch2 is an aten::_to_copy of a
     * strided view that nothing else reads (a decomposed convolution's
     * im2col columns) gathers that view a chunk of columns at a time into
     * a buffer that stays in cache and multiplies from there: the copy is
     * never written to memory, and the results are the same bits
     * (profiler: "aten::_to_copy + aten::bmm"). And by default, chains of
     * elementwise calls (float32, float64 or bool results of one shape;
     * operands of that shape, of one element, or broadcasting to it) run as
     * one step that applies each call's loop to a chunk of the shape at a
     * time, results only the chain reads staying in a buffer in cache
     * rather than the arena: a decomposed layer_norm, softmax or optimiser
     * update makes one pass over memory instead of one per primitive, with
     * the same bits (profiler: "fused pointwise (aten::mul.Tensor, ...)").
     * no_fusion turns all of this off, and attention fusion (below). */
    bool no_fusion;
    /** Keep elementwise calls apart: no loop fusion (above), the other
     * fusions as set. */
    bool no_pointwise_fusion;
    /** Keep a product and the scatter_add after it apart. By default, an
     * aten::bmm or aten::mm (float32, on our GEMM kernel) whose result only
     * an aten::scatter_add over a constant index reads as src, through
     * views keeping its order (a decomposed convolution's input gradient:
     * col2im; the index one the graph holds alone, such as a tensor the
     * traced function made, not one captured in ctx, whose values the
     * caller may change between runs), runs as one step that computes the product a block of
     * columns at a time into a buffer in cache and scatters each block
     * right after: the product is never written to memory. Only where the
     * blocks, first to last or last to first, give every target its
     * additions in the order of the entries: the same bits (profiler:
     * "aten::bmm + aten::scatter_add"). The other fusions as set. */
    bool no_product_scatter_fusion;
    /** Keep attention written with matmul as its operators. By default,
     * q @ k^T * scale, masked_fill(mask, -inf), softmax over the last dim,
     * @ v (clone, bmm, mul.Scalar, masked_fill.Scalar, _softmax, bmm in
     * the graph), whose intermediates nothing else reads, runs as one step
     * of the fused attention kernel, as Inductor's fuse_attention pattern
     * does: no score tensor, no copies of q, k and v, causal masks skip
     * the keys they hide (about 2x faster attention in gpt and block768).
     * Its online softmax rounds differently: those results are within
     * float rounding of the operators', not bit-equal. */
    bool no_attention_fusion;
    /** Compile the fused elementwise steps (loop fusion, above) to machine
     * code, as Inductor's C++ backend does: each run of two or more of a
     * step's calls whose arithmetic is exactly rounded (add, sub, mul, div,
     * sqrt, rsqrt, reciprocal, pow by 0, +-0.5, +-1, 2, 3 or -2, abs, neg,
     * relu, sign, floor, ceil, trunc, frac, maximum and minimum, comparisons, logical
     * operators, where, dtype conversions between float32, float64 and
     * bool) runs as one loop keeping every intermediate in registers; the
     * other calls (exp, tanh, erf, ...) run their loops between those. In
     * steps walking whole rows (a decomposed layer_norm, softmax, their
     * backward) the run takes the row sums (accumulated in the reduction
     * kernel's order), the calls on one value per row, and calls exp, log,
     * ... on each row: a layer_norm step is one function, a softmax two
     * around its amax (its kernel). Same bits as without. tj_compile writes the loops of
     * the whole plan as one C file and builds it with the system C compiler
     * ($TJ_CC, else cc; the flags of the instruction set in use, see
     * TJ_ISA) into a per-user cache ($TJ_CACHE_DIR, else
     * $XDG_CACHE_HOME/tjit, else ~/.cache/tjit; mode 0700, refused when
     * others may write it) where the object and its source stay: compiling
     * the same graph again loads the object without building (a build takes
     * ~0.1-2 s). Without a compiler, or when the build fails, the plan runs
     * the loops as without this option; tj_plan_native_code_error says why.
     * Off by default: it runs a program. */
    bool native_code;
} tj_compile_options;

/** Compiles `g` for the dtypes, shapes and strides of its placeholders. The
 * plan keeps its own copy of everything it needs (constants are retained):
 * the graph may be freed afterwards. Implicit operators (reshape, flatten,
 * contiguous, split, which make_fx never records but graph text may hold)
 * are first replaced by the calls they make for those layouts, a view or a
 * copy (tj_graph_decompose without a table; its errors are then this
 * function's). So are calls computing on storage dtypes (float16,
 * bfloat16, int8 to int32, uint8), which the kernels do not take: by
 * conversions to float32 or int64 (aten::_to_copy), the call, and
 * conversions of its results back, as the dispatcher runs them eagerly. Free the plan with tj_plan_free.
 * Errors (NULL): TJ_ERR_INVALID_ARGUMENT for a NULL graph or one without an
 * output node, or a write-back entry out of range, naming an input twice,
 * or whose output and input types differ; TJ_ERR_UNSUPPORTED for a call
 * whose operator has no kernel ("tj_compile: node %name: aten::x has no
 * kernel"), for an output written back to the input it is a view of, or
 * to another input while it is (a view of) an input that an output is
 * written back into (the write-backs run one after another), or
 * for an in-place view (unsqueeze_, t_, ...: compiled as a strided view)
 * changing the shape of a graph input's or constant's own tensor, which a
 * plan leaves alone (run such a graph with tj_graph_run); the
 * shape function's error (prefixed with the node) when a node's arguments do
 * not fit, TJ_ERR_SHAPE when its result differs from the type the graph
 * records; the kernel's error of a node folded at compile time
 * ("tj_compile: folding node %name: ..."); TJ_ERR_OUT_OF_MEMORY. */
tj_plan *tj_compile(const tj_graph *g, const tj_compile_options *opts);

/** Frees the plan, its default context and every context still open on it
 * (NULL is ignored). Tensors returned by tj_plan_context_output become
 * invalid (views made of them stay valid). */
void tj_plan_free(tj_plan *p);

/** Number of inputs and outputs of the compiled graph. */
int tj_plan_num_inputs(const tj_plan *p);
int tj_plan_num_outputs(const tj_plan *p);
/** The dtype and shape that input `i` / output `k` was compiled for: the
 * rank in *ndim, the sizes in shape[0..*ndim) (room for TJ_MAX_DIMS), what
 * a caller allocates for tj_plan_run_into. TJ_ERR_INVALID_ARGUMENT for a
 * NULL argument, TJ_ERR_INDEX when i or k is out of range. */
tj_status tj_plan_input_type(const tj_plan *p, int i, tj_dtype *dtype, int *ndim, int64_t *shape);
tj_status tj_plan_output_type(const tj_plan *p, int k, tj_dtype *dtype, int *ndim, int64_t *shape);
/** Whether a run writes into input `i`'s memory: an output written back
 * into it (functionalisation's write-back) or an in-place step on it. A
 * binding copying inputs it cannot share (tjit.py) refuses to copy these.
 * False for a NULL plan or i out of range. */
bool tj_plan_writes_input(const tj_plan *p, int i);

/** Runs the plan on its default context. `inputs` (n of them, the graph's
 * placeholder count) must have the dtypes and shapes compiled for; any
 * strides and storage offsets are accepted, but for an input whose traced
 * geometry a gradient formula built the graph from (aten::as_strided's,
 * from the input's strides and offset, as PyTorch's): it must come with
 * the strides (size-1 dims aside) and storage offset it was traced with
 * (TJ_ERR_INVALID_ARGUMENT naming both otherwise; tj_graph_run too). The views the graph takes of an
 * input are made again for the run's strides. Where they do not allow an
 * aten::view or aten::_unsafe_view that was a view as compiled (as make_fx
 * records it, reshape, flatten, linear or matmul of an input traced
 * contiguous is such a view; a transposed input does not allow it), the run
 * copies the input into a staging block of the context's arena
 * (tj_plan_statistics.staging_bytes; no allocation), laid out as compiled
 * (contiguous for an input traced with overlapping or gapped strides), and reads it from
 * there, as eager reshape would copy; such an aten::view is therefore
 * accepted where eager aten::view fails. Except for an input that a step of
 * the plan writes in place (an in-place operator left in the graph), or
 * that shares memory with an input a step writes in place: the copy would
 * take, or miss, the writes, so the run fails (the latter TJ_ERR_UNSUPPORTED), with TJ_ERR_SHAPE for
 * aten::view (as eagerly), TJ_ERR_UNSUPPORTED for aten::_unsafe_view (pass
 * the traced strides, or trace with them). Inputs written back
 * (functionalised graphs) are written into the caller's tensor. Writes tj_plan_num_outputs new
 * references into `outputs` (owned by the caller, or by the innermost open
 * scope): new tensors, one per output even for a value the graph returns
 * twice (`return (%x, %x)`: two tensors, where tj_graph_run, like torch.fx,
 * returns one object twice), except that an output written back into an
 * input is returned as that input tensor, as tj_graph_run does. Inputs must not be
 * tensors of this context (tj_plan_context_output of its previous run, or a
 * view of one: the run overwrites them): such an input is refused
 * (clone() it, or run on another context). The outputs of tj_plan_run are
 * never in the arena. One default context: a second thread running the plan
 * while a run is in progress fails with TJ_ERR_UNSUPPORTED (give each thread
 * its own tj_plan_context_new).
 * A plan whose steps write a graph constant (a tensor captured by the traced
 * function and written in place: every run updates it, as torch's
 * GraphModule updates its _tensor_constant) runs on one context at a time:
 * a run while another context (or another thread on this one) is running
 * the plan fails with TJ_ERR_UNSUPPORTED, naming the node and the constant.
 * `outputs` may be NULL for a plan without outputs.
 * Errors: TJ_ERR_INVALID_ARGUMENT (NULL or fake tensors, wrong count, NULL
 * outputs for a plan with outputs, an input that is a tensor of this context),
 * TJ_ERR_DTYPE / TJ_ERR_SHAPE for an input that differs from the compiled
 * one (the message names the input and both types), TJ_ERR_UNSUPPORTED when
 * an in-place operator of the plan would write into an input whose elements
 * share memory, or that overlaps another of its operands without being it
 * (as eagerly: the message names the node) and for a run of a plan writing
 * a graph constant while another run of it is in progress, or while the
 * default context is running (see above), or
 * for a run inside tj_make_fx on a tensor the trace follows (the steps
 * bypass the dispatcher, so the trace would record their results as
 * constants: trace tj_graph_run of the graph instead), TJ_ERR_INVALID_ARGUMENT
 * for a written-back input whose elements share memory or that
 * shares memory with another input (see tj_pass_functionalize), a kernel's error (the
 * outputs are then NULL; written-back inputs may be partly updated),
 * TJ_ERR_OUT_OF_MEMORY. */
tj_status tj_plan_run(tj_plan *p, tj_tensor *const *inputs, int n, tj_tensor **outputs);

/** Like tj_plan_run, writing the results into the caller's `outputs`, which
 * must have the output dtypes and shapes (any strides) and must not overlap
 * each other, nor be tensors of this context (as inputs: see tj_plan_run).
 * An output tensor sharing storage with an input is written after the last
 * kernel (a copy), after every other output's value is read; it must not
 * overlap another such output's value (an input, or a view of one, that the
 * graph returns), nor its own value in another layout (x given for a
 * returned x^T, x[1:] for x[:-1]: the copy would overwrite elements before
 * reading them, as eager copy_ refuses), nor an input the run writes back
 * (but as that input's own output), nor a written-back value that is an
 * input (the write-back, after the copy, would read it):
 * TJ_ERR_INVALID_ARGUMENT. With `outputs` NULL, or a NULL entry, the result
 * stays in the context (tj_plan_context_output).
 * Performs no heap allocation (but the write-back fallback's, once per
 * context: see above). Errors as tj_plan_run, plus TJ_ERR_DTYPE /
 * TJ_ERR_SHAPE for an output tensor of the wrong type, TJ_ERR_OUT_OF_MEMORY
 * when that fallback cannot be allocated. */
tj_status tj_plan_run_into(tj_plan *p, tj_tensor *const *inputs, int n, tj_tensor *const *outputs);

/* ---- execution contexts ---- */
/** A new context for `p`: its own arena (allocated and touched now) and
 * tensor objects. One thread may use a context at a time (a second run
 * while one is in progress is refused, see above); different
 * contexts of one plan may run at once, unless the plan writes a graph
 * constant (a captured tensor written in place, see tj_make_fx): all its
 * contexts share that tensor, so they run one at a time, and a run that
 * starts while another is in progress fails with TJ_ERR_UNSUPPORTED
 * naming the node and the constant (tj_plan_run). Free it with
 * tj_plan_context_free (or let tj_plan_free do it). NULL when out of
 * memory (TJ_ERR_OUT_OF_MEMORY), also when the arena, 64 MiB or more, needs
 * more than 7/8 of MemAvailable + SwapFree in /proc/meminfo: malloc would
 * succeed under overcommit and zeroing the arena get the process killed. */
tj_plan_context *tj_plan_context_new(tj_plan *p);
void tj_plan_context_free(tj_plan_context *c);
/** The plan's default context, used by tj_plan_run (created on first use;
 * NULL when out of memory). */
tj_plan_context *tj_plan_default_context(tj_plan *p);
/** tj_plan_run and tj_plan_run_into on context `c`. */
tj_status tj_plan_run_ctx(tj_plan_context *c, tj_tensor *const *inputs, int n, tj_tensor **outputs);
tj_status tj_plan_run_ctx_into(tj_plan_context *c, tj_tensor *const *inputs, int n, tj_tensor *const *outputs);
/** tj_plan_run_ctx_into on memory the caller lends, with no tensor objects
 * to make: a binding's call on its arrays (python/tjit.py runs NumPy arrays
 * and torch tensors this way). data: tj_plan_num_inputs + tj_plan_num_outputs
 * addresses, inputs first, each the first element of an array of that input's
 * or output's dtype and shape (tj_plan_input_type, tj_plan_output_type); an
 * output's NULL leaves its result in the context (tj_plan_context_output).
 * strides: NULL when every array is contiguous, else TJ_MAX_DIMS entries per
 * array in the same order, its strides in elements (none negative) first.
 * An address given twice with one layout is one tensor to the plan (an output
 * that is an input, or an input given twice), as in tj_plan_run_into; other
 * overlaps are found by address as between DLPack imports. The memory must
 * hold those types and stay valid for the call: nothing here can check that.
 * Performs no heap allocation. Errors as tj_plan_run_ctx_into (the messages
 * name tj_plan_run_memory), and TJ_ERR_INVALID_ARGUMENT for a NULL context,
 * NULL data, NULL for an input with elements or an address not aligned to its
 * elements, TJ_ERR_UNSUPPORTED for a negative stride, TJ_ERR_OVERFLOW for
 * strides reaching past int64 bytes: each names the input or output. */
tj_status tj_plan_run_ctx_memory(tj_plan_context *c, void *const *data, const int64_t *strides);
/** Output `k` of the context's last run, as the plan left it: a tensor
 * object of the context (a view into its arena, or an input or constant the
 * graph returns). Borrowed: do not release it; its contents are valid until
 * the context's next run, the object until the context is freed (a
 * reference taken with tj_tensor_retain does not keep the object past that:
 * take a view, or clone it). Each run
 * bumps its version (tj_tensor_version), so a backward needing a value
 * autograd saved from an earlier run fails with TJ_ERR_MODIFIED. Views of it
 * and autograd's saved aliases hold their own reference: they keep the
 * memory (with the last run's values) after the context is freed. NULL with
 * TJ_ERR_INDEX when k is out of range, TJ_ERR_INVALID_ARGUMENT when c is NULL. */
tj_tensor *tj_plan_context_output(tj_plan_context *c, int k);

/* ---- memory plan ---- */
typedef struct tj_plan_statistics {
    size_t arena_bytes;       /**< size of one context's arena */
    size_t naive_bytes;       /**< sum of every intermediate's size (no reuse) */
    size_t lower_bound_bytes; /**< most bytes of intermediates live at once in the arena */
    int n_kernels;            /**< kernel calls per run */
    int n_views;              /**< view nodes resolved at compile time */
    int n_inplace;            /**< results placed over their dying input */
    int n_constants;
    int n_folded;             /**< call nodes computed once at compile time (constant folding) */
    int n_folded_shared;      /**< of those, identical to an earlier one: its tensors are shared */
    int n_writeback;          /**< outputs written back to inputs */
    int n_writeback_direct;   /**< of those, written by their kernel into the input's buffer */
    int n_fused;              /**< elementwise nodes run inside the preceding product's step */
    int n_fused_attention;    /**< attentions written as operators run as one fused step */
    int n_gathered;           /**< copies a bmm reads from their strided source (no copy made) */
    int n_dead;               /**< call nodes left out: no output needs their results */
    int n_common;             /**< call nodes identical to an earlier one, whose readers read
                                   the earlier one's results (see no_common_subexpressions);
                                   left out unless an output (not counted in n_dead) */
    int n_identities;         /**< multiplications and divisions by one run as aliases */
    int n_fused_pointwise;    /**< steps running a chain of elementwise calls (loop fusion) */
    int n_fused_pointwise_nodes; /**< the calls those steps run */
    int n_fused_row_reductions; /**< of those calls, row reductions (sum, amax, amin over the last dim
                                     with keepdim) run in steps walking whole rows */
    int n_fused_compare_wheres; /**< of those calls, comparisons run inside the where reading their
                                     mask (its only reader): one loop, where(a op b, x, y), no mask
                                     in memory; a where of two comparisons' masks computing one
                                     comparison (le as where(lt, true, eq)) counts them both, and
                                     itself when it runs inside a where */
    size_t writeback_fallback_bytes; /**< blocks of the n_writeback_direct results, which are
                                          not in the arena: a context allocates them (once)
                                          only when a run's written-back input cannot take
                                          its result (not contiguous, or sharing storage
                                          with another input) */
    int n_native_segments;    /**< runs of fused calls in native code (tj_compile_options.native_code) */
    int n_native_calls;       /**< the calls those runs make */
    size_t staging_bytes;     /**< of arena_bytes, the staging blocks of inputs read through a
                                   view or _unsafe_view that merges dims: a run copies such an
                                   input there when its strides do not allow the view */
    int n_scattered_products; /**< bmm or mm results scattered (scatter_add over a constant
                                   index) block by block of columns as they are computed */
} tj_plan_statistics;

/** Fills `out` with the plan's figures. Sizes are rounded up to 64 bytes per
 * intermediate; lower_bound_bytes <= arena_bytes <= naive_bytes. The lower
 * bound counts a result placed in place over its input as one buffer. A
 * result written straight into its written-back input (an optimiser's new
 * parameter) has no arena block: naive_bytes counts it, the arena and the
 * lower bound do not. */
tj_status tj_plan_stats(const tj_plan *p, tj_plan_statistics *out);
/** Why the plan's native code (tj_compile_options.native_code) was not
 * built: the compiler's or the cache's error message, or NULL when it was
 * built, not asked for, or had nothing to compile. */
const char *tj_plan_native_code_error(const tj_plan *p);
/** Writes the memory plan: one line per intermediate with its node, type,
 * arena offset, size and live range (in kernel steps). Errors:
 * TJ_ERR_INVALID_ARGUMENT (NULL argument), TJ_ERR_IO when a write or the final flush of `f` fails (the message gives errno's reason). */
tj_status tj_plan_print_memory(const tj_plan *p, FILE *f);

/* ---- profiler ----
 * Timings are kept per context; the functions below read every context of
 * the plan and must not overlap a run. */
/** Turns per-kernel timing on or off for later runs (every context; may be
 * called while other threads run the plan). When on, each run also records
 * a timeline for the trace export. */
void tj_plan_set_profiling(tj_plan *p, bool on);
/** Forgets the timings recorded so far. */
void tj_plan_profile_reset(tj_plan *p);
/** Writes the table of timings by operator, summed over the plan's contexts
 * and sorted by total time: calls, total ms, % of the runs' time, average us
 * per call, and the throughput where the operator has a cost formula
 * (GFLOP/s for mm, bmm, addmm, convolution; GB/s of tensor bytes read and
 * written for the others). Errors: TJ_ERR_IO when a write or the final flush of `f` fails (the message gives errno's reason). */
tj_status tj_plan_profile_print(const tj_plan *p, FILE *f);
/** Writes the last profiled run of every context as Chrome trace-event JSON
 * ({"traceEvents": [...]}: one complete event "ph":"X" per kernel, in
 * microseconds, one thread per context), through a temporary file renamed
 * over `path` at the end: a failure never leaves a truncated file (an
 * existing one stays as it was; a device or FIFO is written in place, a
 * symbolic link's target replaced). Errors: TJ_ERR_IO when the file cannot be
 * written (the message names the path and the reason), TJ_ERR_INVALID_ARGUMENT
 * when nothing was profiled. */
tj_status tj_plan_profile_write_trace(const tj_plan *p, const char *path);

#ifdef __cplusplus
}
#endif
#endif
