/* The graph IR (see include/tjit/graph.h), shared by make_fx, the printer and
 * parser, passes, the interpreter and the replay compiler.
 *
 * Values are SSA: each node output is one value with its own id, dtype, shape
 * and strides; arguments reference value ids. Nodes are kept in execution
 * order. Argument arrays, lists and names live in the graph's arena. */
#ifndef TJIT_TRACER_GRAPH_INTERNAL_H
#define TJIT_TRACER_GRAPH_INTERNAL_H

#include "pool.h"
#include "runtime/internal.h"
#include "tjit/graph.h"

typedef enum tj_garg_kind {
    TJ_GA_NONE = 0,
    TJ_GA_VALUE,  /**< a tensor: value id */
    TJ_GA_VALUES, /**< Tensor[] and Tensor?[]: value ids, -1 for an absent
                       (None) entry of a Tensor?[] */
    TJ_GA_INT,
    TJ_GA_FLOAT,
    TJ_GA_BOOL,
    TJ_GA_INTS,
    TJ_GA_BOOLS,
    TJ_GA_STR,
    TJ_GA_DTYPE,
    TJ_GA_FLOATS,
} tj_garg_kind;

typedef struct tj_garg {
    tj_garg_kind kind;
    int n;
    union {
        int v;
        int *vs;
        int64_t i;
        double f;
        bool b;
        int64_t *ints;
        bool *bools;
        double *floats;
        char *s;
        tj_dtype dtype;
    } u;
} tj_garg;

/** Bytes of one element of a list argument (VALUES, INTS, BOOLS, FLOATS);
 * 0 for the other kinds. */
static inline size_t tj_garg_elem_size(tj_garg_kind k)
{
    return k == TJ_GA_VALUES ? sizeof(int)
           : k == TJ_GA_INTS ? sizeof(int64_t)
           : k == TJ_GA_BOOLS ? sizeof(bool)
           : k == TJ_GA_FLOATS ? sizeof(double)
                              : 0;
}

/** Tensors an argument references (1 for a value, n for a list, 0 else)
 * and the value id of the k-th: -1 for an absent entry of a Tensor?[], which
 * every walk over an argument's values skips. */
static inline int tj_garg_n_values(const tj_garg *a)
{
    return a->kind == TJ_GA_VALUE ? 1 : a->kind == TJ_GA_VALUES ? a->n : 0;
}
static inline int tj_garg_value_at(const tj_garg *a, int k) { return a->kind == TJ_GA_VALUE ? a->u.v : a->u.vs[k]; }

typedef struct tj_gvalue {
    int node;  /**< producing node */
    int index; /**< output index within it */
    tj_dtype dtype;
    int ndim;
    int64_t shape[TJ_MAX_DIMS];
    int64_t strides[TJ_MAX_DIMS];
    int64_t offset;
    char *name;
    int uses; /**< references from arguments (the output node included) */
    /** PLACEHOLDER: what made the graph hold for this input's strides and
     * offset only (a gradient built from them), NULL when it holds for any.
     * A static string (make_fx's, from the gradient formula) or one in the
     * graph's arena (tj_graph_bind_geometry); printable ASCII but '"', as
     * the text form quotes it and the JSON export writes it. */
    const char *geometry_bound;
} tj_gvalue;

typedef struct tj_gnode {
    tj_node_kind kind;
    const tj_op *op;  /**< CALL */
    int nargs;
    tj_garg *args;    /**< CALL: every schema argument; OUTPUT: the outputs */
    int nout;
    int *outs;        /**< value ids; -1 for an undefined output */
    int input_index;  /**< PLACEHOLDER */
    tj_tensor *constant; /**< CONSTANT: owned reference */
    int *writeback;   /**< OUTPUT: per output, the input it is written back
                           into after a run (functionalised mutations), -1
                           for none; NULL when no output is (arena memory) */
    bool dead;        /**< removed by a pass, dropped by tj_graph_compact */
} tj_gnode;

typedef struct name_table name_table;

struct tj_graph {
    tj_gnode *nodes;
    int n_nodes, cap_nodes;
    tj_gvalue *values;
    int n_values, cap_values;
    int n_inputs;
    int output_node; /**< -1 until set */
    int n_constants;
    tj_pool *arena; /**< argument arrays, lists, names */
    name_table *names;
};

tj_graph *tj_graph_new(void);
/** Arena memory living as long as the graph (zeroed); NULL when out of memory. */
void *tj_graph_alloc(tj_graph *g, size_t n);
char *tj_graph_strdup(tj_graph *g, const char *s);
/** Reserves `name` (arena string) so that generated names avoid it; false
 * when it is taken or out of memory. */
bool tj_graph_claim_name(tj_graph *g, const char *name);
/** A unique value name derived from `base` ("add", "add_1", ...). */
char *tj_graph_unique_name(tj_graph *g, const char *base);

/** Whether a live call of g is an implicit operator (reshape, flatten,
 * contiguous, split: a view of its input or a copy, as the input's layout
 * decides; no kernel of its own). */
bool tj_graph_has_implicit_call(const tj_graph *g);
/** Whether call node n computes on a storage dtype (a tensor argument or a
 * dtype argument of one, its operator neither any_dtype nor implicit): the
 * dispatcher widens it (runtime/widen.c), a plan's kernels cannot. */
bool tj_graph_node_widens(const tj_graph *g, const tj_gnode *n);
/** Whether g has calls a plan cannot bind a kernel to as they are: an
 * implicit operator's, or one that widens (tj_graph_lower). */
bool tj_graph_needs_lowering(const tj_graph *g);
/** g with its implicit operators replaced by the calls they make (as
 * tj_graph_decompose without a table) and each call that widens replaced by
 * its pieces (runtime/widen.c: conversions to float32 or int64, the call,
 * conversions of the results back, copy_ into written arguments), for
 * tj_compile. NULL with tj_graph_decompose's errors. */
tj_graph *tj_graph_lower(const tj_graph *g);

/** A tj_trace_fn's outputs as it returned them: a count from 0 to
 * TJ_MAX_GRAPH_OUTPUTS, none NULL (TJ_ERR_INVALID_ARGUMENT naming `caller`
 * otherwise). */
tj_status tj_trace_fn_check_outputs(const char *caller, tj_tensor *const *outputs, int n_outputs);

/** tj_make_fx whose placeholder i is named input_names[i] (NULL: arg0_1,
 * arg1_1, ... as tj_make_fx names them). The names are claimed before fn
 * runs, so that the calls' generated names avoid them: renaming the inputs
 * afterwards (tj_graph_set_input_name) fails where a call took the name
 * ("add", "sum") or another input holds it (two swapped names). The names
 * must be distinct (a repeated one is suffixed). */
tj_graph *tj_make_fx_named(tj_trace_fn fn, void *ctx, tj_tensor *const *inputs, int n_inputs,
                           const tj_decomp_table *table, tj_tracing_mode mode, const char *const *input_names);

/** Adds nodes; return the new node index, or -1 when out of memory (error set).
 * Output values get metadata from `t` (placeholder, constant) or `metas`. */
int tj_graph_add_placeholder(tj_graph *g, const tj_tensor *like, const char *name);
/** Binds placeholder value v of g to its strides and offset because of
 * `who` (copied into g's arena: graphs are freed in any order; NULL
 * unbinds). TJ_ERR_OUT_OF_MEMORY. */
tj_status tj_graph_bind_geometry(tj_graph *g, int v, const char *who);
/** TJ_OK when input i (named %name), tensor t, has the strides and storage
 * offset it was traced with or `bound` (what made the graph hold for those
 * only) is NULL; else TJ_ERR_INVALID_ARGUMENT from `who` naming both
 * geometries and `bound`. */
tj_status tj_graph_check_input_geometry(const char *who, int i, const char *name, const int64_t *strides,
                                        int64_t offset, const char *bound, const tj_tensor *t);
int tj_graph_add_constant(tj_graph *g, tj_tensor *t, const char *name);
/** A call node; `args` are copied (lists and strings into the arena). Output
 * metadata from `results` (NULL entries: undefined outputs). */
int tj_graph_add_call(tj_graph *g, const tj_op *op, const tj_garg *args, int nargs, tj_tensor *const *results,
                      const char *name_base);
int tj_graph_add_output(tj_graph *g, const int *values, int n);

/** The graph input whose placeholder value v is, or is a view of (through
 * view calls, and _unsafe_view where it is one), or -1. */
int tj_graph_input_root(const tj_graph *g, int v);

/** Recounts tj_gvalue.uses from the live nodes. */
void tj_graph_count_uses(tj_graph *g);
/** Drops dead nodes, renumbering nodes (value ids stay). */
void tj_graph_compact(tj_graph *g);
/** Replaces every use of value `from` by `to`. */
void tj_graph_replace_uses(tj_graph *g, int from, int to);
/** Boxes graph arguments for a dispatcher call: value ids read `values`,
 * tensor lists are laid out in `lists` (room for every list entry). */
void tj_garg_box(const tj_garg *args, int nargs, tj_tensor *const *values, tj_value *out, tj_tensor **lists);
/** Whether two arguments are the same (floats bit for bit, value ids equal). */
bool tj_garg_equal(const tj_garg *x, const tj_garg *y);
/** Whether argument lists x and y of n arguments are the same (tj_garg_equal). */
bool tj_garg_lists_equal(const tj_garg *x, const tj_garg *y, int n);
/** A call's hash: its operator and arguments (argument lists that are
 * tj_garg_lists_equal hash alike). */
uint64_t tj_call_hash(const tj_op *op, const tj_garg *args, int nargs);
/** Rewrites each value id v among args (single or in lists; -1 list
 * entries stay) to map[v]: readers of merged values read the kept one. */
void tj_garg_remap_values(tj_garg *args, int nargs, const int *map);
/** Fake tensors standing for a graph's values (their geometry, no data),
 * for re-running shape functions over a graph; zero-initialise. */
typedef struct tj_fake_values {
    tj_tensor **t; /* by value id; NULL until asked for */
    int cap;
} tj_fake_values;
/** The fake tensor of value v of g, made on first use and adopted by the
 * innermost open scope (which must outlive `f`'s use). NULL with an error
 * (TJ_ERR_OUT_OF_MEMORY names `who`) on failure. */
tj_tensor *tj_fake_value(tj_fake_values *f, const tj_graph *g, int v, const char *who);
/** Frees the table (not the tensors: their scope owns them). */
void tj_fake_values_free(tj_fake_values *f);
/** Refuses a run that writes outputs back into inputs (writeback[k]: the
 * input output k is written back into, or -1; NULL: none is) when an input
 * written back shares memory with another input: a functional graph
 * computes every new value from the inputs as passed and writes them back
 * at the end, so neither tensor would see the other's writes, as eager code
 * (and the graph before tj_pass_functionalize) does; and when an input
 * written back has elements that share memory (an expanded tensor), which
 * copy_ cannot write. TJ_ERR_INVALID_ARGUMENT
 * naming `who` and both inputs (or the one) (input_name(owner, i): input i's value
 * name); NULL inputs are left to the caller's checks. */
tj_status tj_check_writeback_aliases(tj_tensor *const *inputs, int n_inputs, const int *writeback, int n_outputs,
                                     const char *who, const char *(*input_name)(const void *owner, int i),
                                     const void *owner);
/** Copies a tensor's metadata into a value. */
void tj_gvalue_set_meta(tj_gvalue *v, const tj_tensor *t);

#endif
