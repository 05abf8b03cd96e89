/* The replay plan (see include/tjit/plan.h), shared by the compiler, the
 * memory planner, the runner and the profiler.
 *
 * A plan holds, for every graph value, where its data lives (a placeholder,
 * a constant, a block of the arena, or a strided alias of one of those), and
 * the call nodes in order, kernel nodes ("steps") apart from views resolved
 * at compile time. A context instantiates it: tensor objects for the values,
 * arguments boxed once per node, and the arena. */
#ifndef TJIT_TRACER_PLAN_INTERNAL_H
#define TJIT_TRACER_PLAN_INTERNAL_H

#include <pthread.h>

#include "graph_internal.h"
#include "pool.h"
#include "tjit/plan.h"

typedef enum tj_pvalue_kind {
    TJ_PV_UNUSED = 0, /**< undefined output, or a value no live node produces */
    TJ_PV_INPUT,      /**< a placeholder: the caller's tensor, bound per run */
    TJ_PV_CONSTANT,   /**< a graph constant or a folded result, shared by every context */
    TJ_PV_ARENA,      /**< a kernel's result: a block of the arena */
    TJ_PV_VIEW,       /**< a strided alias of `base` (own geometry, root's storage) */
    TJ_PV_SAME,       /**< an in-place operator's result: the tensor of `base` itself */
} tj_pvalue_kind;

typedef struct tj_pvalue {
    tj_pvalue_kind kind;
    tj_dtype dtype;
    int ndim;
    int64_t numel;
    int64_t shape[TJ_MAX_DIMS];
    int64_t strides[TJ_MAX_DIMS]; /**< as compiled (ARENA: contiguous) */
    int64_t offset;               /**< as compiled, absolute (ARENA: 0) */
    int64_t rel_offset;           /**< VIEW: offset - the root's compiled offset */
    bool abs_offset;              /**< VIEW: offset counts from the storage's start whatever
                                       the root's offset (as_strided with a storage_offset
                                       argument, or a view of such a view) */
    int base;                     /**< VIEW, SAME: the aliased argument's value */
    int root;                     /**< the INPUT, CONSTANT or ARENA value owning the storage */
    int node;                     /**< producing plan node (-1 for inputs, constants) */
    int index;                    /**< output index within that node */
    int input_index;              /**< INPUT */
    const char *geometry_bound;   /**< INPUT: the graph holds for the compiled strides and
                                       offset only (tj_gvalue's), NULL for any */
    tj_tensor *constant;          /**< CONSTANT: a reference the plan owns */
    const char *name;
    /* memory plan (ARENA roots) */
    size_t nbytes;                /**< rounded up to 64 */
    size_t arena_offset;          /**< in the arena; with in_input, in the write-back fallback */
    bool in_input;                /**< written by its kernel straight into the buffer of the
                                       input it is written back to (tj_plan_statistics:
                                       writeback_fallback_bytes): no arena block */
    bool staged;                  /**< INPUT: has a staging block (nbytes at arena_offset)
                                       that a run copies it into when its strides do not
                                       allow one of its reshape views (tracer/plan.c) */
    int def, last;                /**< first and last step touching the storage */
    int n_views;                  /**< VIEW values rooted here */
    bool inplace;                 /**< placed over its dying input's block... */
    int donor;                    /**< ...the one of this value */
    int object;                   /**< ARENA: the value whose tensor object it runs
                                       as (itself, or its donor's when neither needs
                                       its own: one object along an in-place chain) */
} tj_pvalue;

typedef struct tj_pnode {
    const tj_op *op;
    tj_kernel_fn kernel; /**< what its step runs: op's kernel, or a fused one */
    const char *label;   /**< a fused step's name in the profiler, else NULL */
    bool is_step;     /**< false: every output is a view, resolved at compile time, folded or fused */
    bool folded;      /**< computed at compile time: its results are plan constants */
    bool fused;       /**< merged into a later step (fuse.c) */
    bool identity;    /**< its result is an alias of an operand (simplify.c) */
    bool merged;      /**< the same call as an earlier node, whose results are read instead (common.c) */
    int step;         /**< index among steps (is_step) */
    int nargs;
    tj_garg *args;    /**< plan-owned copies */
    int nlist;        /**< total entries of Tensor[] arguments */
    int nout;
    int *outs;        /**< value ids, -1 for undefined outputs */
    const char *name;
    double flops;     /**< cost formula, 0 when none */
    double bytes;     /**< tensor bytes read and written */
} tj_pnode;

/* per-context profile: per step totals and the last run's timeline */
typedef struct tj_profile {
    int64_t *total_ns;
    int64_t *last_start_ns; /**< since the plan's epoch */
    int64_t *last_dur_ns;
    int64_t run_ns, runs;
    int64_t last_run_start_ns, last_run_ns;
} tj_profile;

/** One kernel call of a context: the tight loop's element. */
typedef struct tj_step {
    tj_kernel_fn fn;
    const tj_value *args;
    tj_tensor *const *outs;
} tj_step;

struct tj_plan_context {
    tj_plan *plan;
    tj_plan_context *next; /**< the plan's list of contexts */
    int id;
    char *arena;
    size_t arena_alloc;
    char *fallback; /**< blocks of in_input results, allocated when first needed */
    tj_tensor *tensors;    /**< one object per value (INPUT, ARENA, VIEW) */
    tj_storage *storages;  /**< one per ARENA root */
    struct ctx_memory *memory; /**< takes arena, fallback and storages at release (plan.c) */
    tj_tensor **vt;        /**< the tensor each value reads as */
    tj_value *args;        /**< every node's boxed arguments */
    tj_value **node_args;  /**< per node, into args */
    tj_tensor **lists;     /**< Tensor[] arguments */
    tj_tensor **outs;      /**< every node's output tensors */
    tj_step *steps;
    bool *copy_out;        /**< per output, this run: copy at the end */
    bool *wb_copy;         /**< per output, this run: copy into its write-back input */
    bool views_restrided;  /**< the last run re-resolved views of restrided inputs */
    atomic_bool running;   /**< a run is in progress: a second one at once is refused */
    tj_profile prof;
};

struct tj_plan {
    tj_pool *pool;
    tj_pnode *nodes;
    int n_nodes;
    int n_steps;
    int *step_nodes; /**< node of each step */
    tj_pvalue *values;
    int n_values;
    int n_inputs;
    int *input_values;
    int n_outputs;
    int *output_values;
    bool *direct_out;  /**< per output: its kernel may write into the caller's tensor */
    int *writeback;    /**< per output: the input it is written back to, or -1 */
    bool *wb_direct;   /**< per output: its kernel may write into that input's buffer */
    int *input_views;  /**< VIEW values rooted at inputs, in node order */
    int n_input_views;
    int *input_writers; /**< steps writing in place into an input's storage, in node order */
    int n_input_writers;
    int constant_writer;  /**< the first step writing into a graph constant's storage, or -1 */
    int written_constant; /**< the constant it writes (with constant_writer) */
    atomic_bool constant_busy; /**< with constant_writer: a context is running the plan */
    size_t n_args, n_lists, n_outs; /**< totals over the nodes */
    tj_plan_statistics stats;
    void *native_handle;    /**< the fused steps' native code (tracer/fuse_native.c), or NULL */
    char native_error[256]; /**< why native code was asked for and not built, else "" */
    atomic_bool profiling; /**< read once per run; may change between runs */
    int64_t epoch_ns;
    pthread_mutex_t lock; /**< guards the context list */
    tj_plan_context *contexts;
    tj_plan_context *default_ctx;
    int next_ctx_id;
};

/** The value whose tensor object `v` reads as (follows SAME aliases). */
static inline int tj_plan_object_value(const tj_plan *p, int v)
{
    while (p->values[v].kind == TJ_PV_SAME) v = p->values[v].base;
    return v;
}

/** Numbers the steps in node order after nodes left the run (folding,
 * fusion; tracer/compile.c). */
void tj_plan_renumber_steps(tj_plan *p);

/** Whether calls of `op` compute results that are a function of their
 * arguments alone: a built-in operator, not random (no dropout), not in
 * place (tracer/fold.c). Only such calls are folded or pruned. */
bool tj_plan_op_is_pure(const tj_op *op);

/** Common subexpressions (tracer/common.c), merged as tj_compile walks the
 * graph: per value, the value its readers read (canon), and the call nodes
 * compiled so far by operator and arguments. Zeroed (slots NULL) when off. */
typedef struct tj_plan_common {
    int *slots; /* open addressing over plan node indices, -1 empty */
    int *canon;
    size_t cap, bytes;
} tj_plan_common;
/** Starts merging for graph g: off unless `enabled` and g has no in-place,
 * in-place view or user operator. TJ_ERR_OUT_OF_MEMORY. */
tj_status tj_plan_common_begin(tj_plan_common *cs, const tj_graph *g, bool enabled);
/** Rewrites node n's tensor arguments to their canonical values (before
 * its shape function runs). */
void tj_plan_common_canonical_args(const tj_plan_common *cs, tj_pnode *n);
/** After node i compiled: if an earlier node of a pure operator had the
 * same operator and arguments, the values of i read as that node's from now
 * on (tj_plan_statistics.n_common); otherwise i is remembered. */
void tj_plan_common_add(tj_plan_common *cs, tj_plan *p, int i);
void tj_plan_common_end(tj_plan_common *cs);

/** Dead-code elimination (tracer/prune.c): call nodes of pure operators
 * whose results no graph output needs leave the plan; the remaining nodes
 * are renumbered. */
tj_status tj_plan_prune_dead(tj_plan *p);

/** Identity elimination (tracer/simplify.c): mul or div by a constant of
 * ones becomes a strided alias of its other operand. */
tj_status tj_plan_simplify_identities(tj_plan *p);

/** Constant folding (tracer/fold.c): runs the call nodes that read no
 * graph input (deterministic built-in operators over creation operators'
 * results) now, makes their results plan constants, merges identical ones,
 * and renumbers the remaining steps. */
tj_status tj_plan_fold_constants(tj_plan *p);

/* ---- fusion (tracer/fuse.c, fuse_attention.c, fuse_gather.c, fuse_pad.c, fuse_scatter.c) ---- */
/** Per value: references from live (not folded) nodes and graph outputs,
 * and the node making the last one (-1: a graph output). */
typedef struct tj_plan_uses {
    int *count;
    int *user;
    size_t bytes;
} tj_plan_uses;
tj_status tj_plan_uses_init(const tj_plan *p, tj_plan_uses *u);
void tj_plan_uses_free(tj_plan_uses *u);
/** The node reading value v, when that is v's only use; else -1. */
static inline int tj_plan_sole_user(const tj_plan_uses *u, int v) { return u->count[v] == 1 ? u->user[v] : -1; }
/** Whether value x is ARENA value r itself, or a view of all of r in r's
 * element order (a reshape). */
bool tj_plan_whole_in_order(const tj_plan *p, int x, int r);
/** Whether value x, root value r itself or a view of it, is read only by
 * node `reader`, and every view between them only by the next one (views
 * resolved at compile time: no step of their own), with r having no other
 * views: a step fusing r's producer into `reader` leaves no other reader. */
bool tj_plan_sole_view_chain(const tj_plan *p, const tj_plan_uses *u, int x, int r, int reader);
/** Whether node n may write into storage that exists before it: an
 * in-place operator, or a user operator, which may write any argument. */
bool tj_plan_node_may_write(const tj_plan *p, const tj_pnode *n);

/** Whether node q is a slice_scatter step (step 1, no fused label) of a
 * float32 value into float32 zeros (+0.0, a constant) of its result's
 * shape along a dim from 2 on (tj_dc_pad's padding, decomps/windows.c):
 * the value in *src, the padded dim and where the value starts along it
 * in *dim, *lo. */
bool tj_plan_zero_pad(const tj_plan *p, int q, int *src, int *dim, int64_t *lo);

/** Whether argument a is the number one (an add's or addmm's alpha of 1). */
bool tj_plan_garg_is_one(const tj_garg *a);

/** Whether a node strictly between nodes `from` and `to` may write into
 * existing storage (an in-place operator, or a user operator, which may
 * write any argument): a fusion that moves reads from `from` to `to` would
 * then read other values. */
bool tj_plan_writes_between(const tj_plan *p, int from, int to);

/** Epilogue fusion: relu, gelu or add.Tensor run inside the addmm step
 * whose result only they read. */
tj_status tj_plan_fuse_epilogues(tj_plan *p);
/** Attention written out as operators (bmm, mul.Scalar, masked_fill,
 * _softmax, bmm, as make_fx records matmul-based attention) runs as one
 * fused attention step. */
tj_status tj_plan_fuse_attention(tj_plan *p);
/** Copy elision (tracer/fuse_gather.c): a bmm whose batch2 is a contiguous
 * copy of a strided view, or that copy transposed, that only it reads
 * gathers the view itself. */
tj_status tj_plan_fuse_gathered_operands(tj_plan *p);
/** Zero padding in one pass (tracer/fuse_pad.c): zeros + slice_scatter
 * per padded dim of [N, C, H, W] or [N, C, L] runs as one step writing the
 * padded buffer once. */
tj_status tj_plan_fuse_zero_padding(tj_plan *p);

/** Product-scatter fusion (tracer/fuse_scatter.c): a bmm or mm whose
 * result only a scatter_add reads as src (through views keeping its order),
 * over a constant index whose additions a blocked order keeps in order,
 * runs as one step scattering blocks of the product's columns as they are
 * computed. */
tj_status tj_plan_fuse_product_scatters(tj_plan *p);

/** Loop fusion (tracer/fuse_pointwise.c): chains of elementwise calls of
 * one result shape run as one step over chunks that stay in cache, results
 * that only the chain reads never leaving it. */
tj_status tj_plan_fuse_pointwise(tj_plan *p);
/** Native code for the fused steps' runs of exactly rounded members
 * (tracer/fuse_native.c, tj_compile_options.native_code). A compiler that
 * is missing or fails leaves the steps as they were and the reason in
 * p->native_error: only running out of memory is an error. */
tj_status tj_plan_native_code(tj_plan *p);

/** The name a step shows in the profiler: its operator's, or the label a
 * fusion gave it ("aten::addmm + aten::relu"). */
static inline const char *tj_plan_node_label(const tj_pnode *n) { return n->label ? n->label : n->op->name; }

/** Liveness of every ARENA root: def/last, the first and last step touching
 * its storage (graph outputs: the end of the run). */
void tj_plan_liveness(tj_plan *p);

/** Placement of every ARENA root after tj_plan_liveness: fills nbytes,
 * arena_offset, inplace/donor and the plan's memory statistics. Roots
 * marked in_input get their blocks in the write-back fallback instead. */
tj_status tj_plan_memory(tj_plan *p, const tj_compile_options *opts);

/** view and _unsafe_view: views whose existence depends on the operand's
 * strides (reshape, flatten, linear and matmul record them), the others
 * being views for any strides. */
bool tj_plan_is_reshape_view(const tj_op *op);

/** Operators computed element by element in one pass through
 * tj_elementwise: safe with their result over an input of the same shape. */
bool tj_plan_is_elementwise(const tj_op *op);
/** Operators with several results of their inputs' shape whose kernel reads
 * every input element before it writes the results at that position
 * (_fused_adamw_step, _fused_sgd_step): a result may be written straight into an input it
 * reads (write-back), though not placed over a dying input. */
bool tj_plan_reads_before_writes(const tj_op *op);

/** The node's cost formula from its argument and result geometries. */
void tj_plan_node_cost(tj_pnode *n, const tj_value *args, tj_tensor *const *outs);

/** Monotonic clock in nanoseconds. */
int64_t tj_plan_now_ns(void);

/** A uid no tensor has, for a context's tensor objects; false with the
 * error set when out of memory. */
bool tj_plan_fresh_uid(uint64_t *uid);

/** Takes context c for one run (the one thread running it), or fails with
 * TJ_ERR_UNSUPPORTED while another run holds it; messages name `who`. */
tj_status tj_plan_context_claim(tj_plan_context *c, const char *who);
void tj_plan_context_unclaim(tj_plan_context *c);
/** tj_plan_run_ctx_into's run on a context the caller claimed, its messages
 * naming `who`. */
tj_status tj_plan_run_claimed(tj_plan_context *c, tj_tensor *const *inputs, int n, tj_tensor *const *outputs,
                              const char *who);

/* ---- runs on caller memory (plan_memory.c) ---- */
/** How many caller-memory wrappers a context has: one per input and output,
 * after the values' tensor objects, storages and vt entries (inputs first). */
static inline int tj_plan_caller_slots(const tj_plan *p) { return p->n_inputs + p->n_outputs; }
/** Sets up context c's wrappers (tensor objects over external storages,
 * pointed at the caller's arrays at each tj_plan_run_ctx_memory); false
 * with the error set when out of memory. */
bool tj_plan_caller_init(tj_plan_context *c);


#endif
