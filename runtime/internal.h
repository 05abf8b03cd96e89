/* Runtime internals shared by the runtime's files, the decompositions, the
 * tracer and the tests: the tensor object, the operator record, shape
 * functions and kernels as the table binds them. Not part of the public API. */
#ifndef TJIT_RUNTIME_INTERNAL_H
#define TJIT_RUNTIME_INTERNAL_H

#include <stdatomic.h>
#include <string.h>

#include "kernels/dtype_convert.h"
#include "tjit/tjit.h"

/** Memory that storages borrow instead of owning (a plan context's arena and
 * storage headers, tracer/plan.c). `free` runs when the last storage
 * referring to it goes: views and autograd's saved aliases of a context's
 * results stay valid after the context is freed. */
typedef struct tj_storage_owner {
    atomic_int refcount;
    void (*free)(struct tj_storage_owner *);
} tj_storage_owner;

static inline void tj_storage_owner_release(tj_storage_owner *o)
{
    if (atomic_fetch_sub_explicit(&o->refcount, 1, memory_order_acq_rel) == 1) o->free(o);
}

/** Refcounted storage, 64-byte aligned. */
typedef struct tj_storage {
    atomic_int refcount;
    /** Set when this header and the data live in the block of the tensor
     * created with them (small results, runtime/tensor.c): the block is freed
     * when the refcount drops to zero. False for storages made elsewhere. */
    bool in_block;
    /** Bumped by every write through an operator (in-place operators and
     * plans writing into their inputs): autograd compares it with the value
     * it saved to refuse gradients of overwritten values (PyTorch's version
     * counter, shared by views as here). */
    atomic_uint version;
    /** How many of the references are detached aliases (tj_tensor.detached:
     * autograd's saved values, tj_tensor_detach's results). The rest may be
     * views with history: a recorded in-place call on one of them is refused
     * while others share the storage. */
    atomic_int n_detached;
    /** Held by graphs and plans only, which never hand it out or write it
     * unseen: a graph constant tj_make_fx snapshotted (a tensor the traced
     * function made) or tj_graph_parse read. A compiled plan may take its
     * elements once (tracer/fuse_scatter.c); a constant the caller holds
     * (captured in ctx) is read at every run, as the caller may change it. */
    bool sealed;
    /** Memory another framework lent (tj_tensor_from_dlpack): each import
     * of it gets a storage of its own, so another storage may hold the same
     * bytes (tj_storages_overlap). */
    bool external;
    void *data;
    size_t nbytes;
    /** Set when the header and the data belong to `owner`: the last release
     * drops a reference on it instead of freeing them. */
    tj_storage_owner *owner;
} tj_storage;

/** Drops a reference on `s`, freeing it (or releasing its owner) with the last. */
void tj_storage_release(tj_storage *s);

/** Whether a and b may hold the same bytes: one storage, or memory lent
 * through DLPack that another storage covers too (two imports of one
 * array, or of tjit's own memory exported and imported back). Inline:
 * plans compare every written input with every input at each run. */
static inline bool tj_storages_overlap(const tj_storage *a, const tj_storage *b)
{
    if (a == b || !a || !b) return a == b && a;
    if (!(a->external || b->external) || !a->nbytes || !b->nbytes) return false;
    uintptr_t a0 = (uintptr_t)a->data, b0 = (uintptr_t)b->data;
    return a0 < b0 + b->nbytes && b0 < a0 + a->nbytes;
}

struct tj_autograd_meta;

struct tj_tensor {
    atomic_int refcount;
    tj_dtype dtype;
    int ndim;
    bool fake;
    /** An alias without history, counted in storage->n_detached while it lives
     * (runtime/autograd.c): an in-place call on its base needs no rebasing of it. */
    bool detached;
    /** How the view was made (tj_view_kind), TJ_VIEW_NONE when not a view:
     * what autograd accepts of an in-place call on it. */
    unsigned char view_kind;
    /** The object belongs to another one's memory, not to its references (a
     * plan context's values, tracer/plan.c): a view of it does not keep it
     * as its view_base, which it may outlive. */
    bool borrowed;
    int64_t numel;
    int64_t offset; /**< storage offset, in elements */
    int64_t shape[TJ_MAX_DIMS];
    int64_t strides[TJ_MAX_DIMS];
    /** fake tensors have one too, without data (nbytes 0), for counting
     * views and versions */
    tj_storage *storage;
    uint64_t uid;        /**< unique per process, never reused */
    struct tj_autograd_meta *autograd; /**< owned by the autograd layer */
    /** For a view an operator returned, the tensor it views, followed up to
     * the root (a view of a view names the first one's base, as PyTorch's
     * `_base`); retained. NULL for other tensors. An in-place call on the
     * view recorded by autograd rebases the root's history
     * (runtime/autograd_views.c). */
    struct tj_tensor *view_base;
};

/** How a view was made, which decides whether autograd records an in-place
 * call on it (PyTorch's CreationMeta). */
typedef enum tj_view_kind {
    TJ_VIEW_NONE = 0,     /**< not a view */
    TJ_VIEW_DEFAULT,      /**< by a view operator with grad mode on */
    TJ_VIEW_NO_GRAD,      /**< with grad mode off (tj_no_grad_begin), or a view of such a view */
    TJ_VIEW_MULTI_OUTPUT, /**< one of several views a call returned (tj_split, tj_chunk, tj_unbind) */
} tj_view_kind;

/** Marks the n views of one call returning several (split, chunk, unbind:
 * PyTorch's CreationMeta::MULTI_OUTPUT_NODE), whose in-place modification
 * autograd then refuses. Entries that are not views are left alone. */
static inline void tj_tensor_mark_multi_output(tj_tensor *const *views, int n)
{
    for (int k = 0; k < n; k++)
        if (views[k]->view_base) views[k]->view_kind = TJ_VIEW_MULTI_OUTPUT;
}


/** Records a write into t's storage. */
static inline void tj_tensor_bump_version(const tj_tensor *t)
{
    if (t->storage) atomic_fetch_add_explicit(&t->storage->version, 1, memory_order_relaxed);
}

/* tj_meta, tj_meta_fn and tj_kernel_fn are public: include/tjit/library.h. */

typedef enum tj_arg_type {
    TJ_A_TENSOR,
    TJ_A_TENSOR_LIST,
    TJ_A_INT,
    TJ_A_FLOAT,
    TJ_A_BOOL,
    TJ_A_INT_LIST,
    TJ_A_BOOL_LIST,
    TJ_A_FLOAT_LIST,
    TJ_A_SCALAR,
    TJ_A_STR,
    TJ_A_SCALAR_TYPE,
    TJ_A_IGNORED, /**< Layout?, Device?, MemoryFormat?: always None here */
} tj_arg_type;

typedef struct tj_arg_spec {
    tj_arg_type type;
    bool optional;
    /** Tensor?[] (ATen's index / index_put indices): a Tensor[] whose
     * entries may be absent, boxed as NULL elements of a TJ_V_TENSORS list
     * (-1 value ids in a graph) */
    bool elem_optional;
    bool kwarg_only;
    bool has_default;
    int fixed_len; /**< int[2] -> 2, 0 when unsized */
    const char *name;
    tj_value def;         /**< default, when has_default */
    int64_t def_ints[TJ_MAX_DIMS];
    bool def_bools[4];
} tj_arg_spec;

struct tj_derivative;

struct tj_op {
    const char *schema_src; /**< table text without namespace (built-in operators) */
    tj_op_kind kind;
    tj_kernel_fn kernel;
    tj_meta_fn meta;
    tj_decomp_fn decomp;  /**< registered decomposition, if any */
    const char *decomp_name;
    char *decomp_name_copy; /**< owned string behind decomp_name, from tj_register_decomposition */
    /** Operators from tj_op_register (runtime/library.c): their derivative
     * entry and formula. NULL for built-in operators (autograd's table). */
    const struct tj_derivative *derivative;
    tj_backward_fn backward;
    /* derived from the schema at registration */
    char ns[24];
    char name[64];
    char base[48];
    char overload[24];
    char *schema;   /**< "ns::name.overload(...) -> ...", in `strings` */
    char *strings;  /**< one block: the schema, argument names, str defaults */
    size_t strings_size;
    int nargs;
    int nreturns;
    bool returns_list; /**< returns Tensor[] (implicit composites only) */
    bool is_view, is_inplace, is_random;
    /** Takes the storage dtypes (tj_dtype) too: an operator that only moves or
     * converts data, or one from tj_op_register (its kernel decides). */
    bool any_dtype;
    /** Same-position elementwise (built-in operators): result element i
     * reads only element i of each operand, so that a kernel may write over
     * an operand (the replay's in-place reuse) */
    bool elementwise;
    /** tj_widen_class: how its results' dtypes follow a storage-dtype call */
    unsigned char widen_class;
    /** bit i: argument i is annotated `Tensor(a!)` (written by the kernel) */
    unsigned mutated_args;
    int index;
    tj_arg_spec args[TJ_MAX_ARGS];
};

/* ---- operator table ----
 * Each line of the *.def files: TJ_OP(ident, "schema", KIND, kernel, meta).
 * ident names the enum constant TJ_OPI_<ident>. */
enum {
#define TJ_OP(ident, schema, kind, kernel, meta) TJ_OPI_##ident,
#include "ops_table.def"
#undef TJ_OP
    TJ_OPI_COUNT
};
extern struct tj_op tj_builtin_ops[];
#define TJ_OPS(ident) (&tj_builtin_ops[TJ_OPI_##ident])
/** Declares the shape function tj_meta_<ident> and the kernel tj_kernel_<ident>
 * that the operator table binds for <ident> (runtime/op_<family>.h). */
#define TJ_OP_DECLARE(ident)                                                    \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs);             \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs);
/** For an in-place form of op_inplace_forms.def (floor_, pow_.Scalar, ...),
 * the out-of-place operator it writes into self (floor, pow.Tensor_Scalar);
 * NULL for any other operator. */
const tj_op *tj_op_inplace_functional(const tj_op *op);
/** True for the operators of the built-in table (namespace aten), false for
 * those from tj_op_register: passes that recognise operators by name use it. */
static inline bool tj_op_is_builtin(const tj_op *op) { return op->index < TJ_OPI_COUNT; }
/** For an in-place view (as_strided_, unsqueeze_, squeeze_.dim, squeeze_,
 * transpose_, t_: self's shape and strides change, its data does not), the view operator
 * whose geometry it gives self (unsqueeze, ...); NULL for any other
 * operator. The dispatcher writes the shape function's alias geometry into
 * self instead of making a new view; functionalisation records the view. */
static inline const tj_op *tj_op_inplace_view_functional(const tj_op *op)
{
    switch (op->index) {
    case TJ_OPI_as_strided_: return TJ_OPS(as_strided);
    case TJ_OPI_unsqueeze_: return TJ_OPS(unsqueeze);
    case TJ_OPI_squeeze__dim: return TJ_OPS(squeeze_dim);
    case TJ_OPI_squeeze_: return TJ_OPS(squeeze);
    case TJ_OPI_transpose_: return TJ_OPS(transpose_int);
    case TJ_OPI_t_: return TJ_OPS(t);
    default: return NULL;
    }
}
static inline bool tj_op_is_inplace_view(const tj_op *op) { return tj_op_inplace_view_functional(op) != NULL; }
/** The types the dispatcher gives the results a shape function `m` makes
 * views or in-place results of an argument (alias >= 0): that argument's
 * dtype, and for an in-place one (same) its rank and shape too, whatever
 * the shape function left there (a user's need not set them, library.h).
 * Callers comparing a shape function's types with a recorded graph's
 * (tj_compile, make_fx's check of a table's decomposition) apply this
 * first. Entries that name no tensor argument are left alone. */
void tj_meta_alias_types(const tj_op *op, const tj_value *args, tj_meta *m);

/* ---- arithmetic on the storage dtypes (runtime/widen.c) ---- */
/** How an operator's results take dtypes when it computes on storage-dtype
 * tensors (widened to float32 or int64): results of the compute dtype take
 * the operands' dtype, result_type of the operands for ELEMENTWISE, self's
 * for the others. For an integer self that is ambiguous (int64 is also the
 * dtype of indices), and the class decides: TO_LONG keeps int64 (sum,
 * cumsum), VALUES_FIRST narrows result 0 only (max.dim, sort), INDICES
 * keeps them all (argmax); OTHER refuses. */
typedef enum tj_widen_class {
    TJ_WIDEN_OTHER = 0,
    TJ_WIDEN_ELEMENTWISE,
    TJ_WIDEN_TO_LONG,
    TJ_WIDEN_VALUES_FIRST,
    TJ_WIDEN_INDICES,
} tj_widen_class;
/** The class of a built-in operator (its `elementwise` set first). */
tj_widen_class tj_widen_classify(const tj_op *op);
/** Whether a call of `op` with `args` widens: a storage-dtype tensor or
 * dtype among them, `op` neither any_dtype nor implicit (the dispatcher's
 * own test is check_args's flags). */
bool tj_widen_needed(const tj_op *op, const tj_value *args, int nargs);
/** Dispatches one call; results borrowed from the current scope (as
 * tj_dispatch's): tj_dispatch_kernel or tj_dispatch_fake below the modes,
 * tj_dispatch where the pieces are to be recorded. */
typedef tj_status (*tj_widen_call_fn)(const tj_op *op, const tj_value *args, int nargs, tj_value *outs);
/** Runs `op` (not any_dtype, not a view) on `args` holding storage-dtype
 * tensors or dtypes: each converted (aten::_to_copy) to float32 (float16,
 * bfloat16) or int64 (the integer ones), the operator called on those, the
 * written arguments given their values back (aten::copy_), the results
 * converted to the dtypes PyTorch gives them (tj_widen_class). Every call
 * goes through `call`; the results are borrowed from the current scope, or
 * are arguments passed through (an in-place result). Errors: the calls',
 * the operator's naming the dtypes it computed in; TJ_ERR_DTYPE for a view
 * operator and for an integer self whose results the class cannot tell
 * (TJ_WIDEN_OTHER); outs are None then. */
tj_status tj_widen_call(const tj_op *op, const tj_value *args, tj_value *outs, tj_widen_call_fn call);

/* ---- schemas and the registry (runtime/schema.c, runtime/registry.c) ---- */
/** Parses an ATen schema into op's name, arguments and returns (op->kind set
 * before). `text` may start with "ns::"; without one, `default_ns` applies
 * (NULL: a namespace is required). Allocates op->strings through tj_alloc.
 * Errors name `who` and quote the schema: TJ_ERR_PARSE,
 * TJ_ERR_UNSUPPORTED, TJ_ERR_INVALID_ARGUMENT (no namespace),
 * TJ_ERR_OUT_OF_MEMORY; nothing is left allocated then. */
tj_status tj_schema_parse(struct tj_op *op, const char *text, const char *default_ns, const char *who);
/** Frees what tj_schema_parse allocated. */
void tj_schema_free(struct tj_op *op);

/** An operator name split into its parts (see tj_op_find's spellings). */
typedef struct tj_op_name_parts {
    char ns[24];
    char base[48];
    char overload[24]; /**< "" for the default overload */
    bool has_overload; /**< an overload was spelled ("default" included) */
} tj_op_name_parts;
/** Splits "ns::base.overload", "ns.base.overload", "aten.base", "base.overload"
 * or "base" (namespace aten). False when a part does not fit. */
bool tj_op_name_split(const char *name, tj_op_name_parts *out);

/** Serialises registrations (tj_op_register, tj_op_set_backward,
 * tj_register_decomposition). Lookups take no lock. */
void tj_registry_lock(void);
void tj_registry_unlock(void);
/** Adds a parsed user operator: checks its name is new and the registry has
 * room, numbers it and publishes it to tj_op_at / tj_op_find. Takes the lock. */
tj_status tj_registry_add(struct tj_op *op, const char *who);

/** Registers a decomposition for `op` (replacing one registered before). */
void tj_op_set_decomposition(const tj_op *op, tj_decomp_fn fn, const char *fn_name);
/** The hook the registry calls once at start-up (decomps/registry.c). */
void tj_register_builtin_decompositions(void);

/** Whether s is a whole number from 1 to max written in decimal digits
 * only (no sign, space or trailing characters); its value into *out. How
 * the environment's counts are read (TJ_NUM_THREADS, TJ_CC_TIMEOUT). */
bool tj_parse_positive(const char *s, long long max, long long *out);

/* ---- memory ---- */
void *tj_alloc(size_t nbytes);              /* 64-byte aligned, through the hook */
void tj_free(void *p, size_t nbytes);
void *tj_alloc_storage_bytes(size_t nbytes, size_t *got); /* caching allocator; fresh memory as
                                                           tj_check_memory_available allows */
void tj_free_storage_bytes(void *p, size_t nbytes);
/** Small objects allocated and freed on every operator call (tensor and
 * storage headers), recycled through the caching allocator's size classes:
 * glibc's aligned_alloc costs ~150 ns per small block, the cache ~20. */
void *tj_alloc_object(size_t nbytes);
void tj_free_object(void *p, size_t nbytes);
/** One size class of the caching allocator (a class size), taken and given
 * back without computing a class: the block of a small tensor
 * (runtime/tensor.c), allocated on most operator calls. NULL when out of
 * memory (no error set). */
#define TJ_SMALL_BLOCK 512
void *tj_alloc_small_block(void);
void tj_free_small_block(void *p);
/** Reads a whole regular file (plus a terminating NUL) through tj_alloc;
 * NULL with TJ_ERR_IO / TJ_ERR_OUT_OF_MEMORY naming `who`. Free it with
 * tj_free_file(buf, size). */
void *tj_read_file(const char *path, const char *who, size_t *size);
void tj_free_file(void *buf, size_t size);
/** The most bytes a text file read by tj_read_text_file may hold where a
 *  caller has no limit of its own (graph text, conformance cases): 256 MiB,
 *  far above any real one, far below what exhausts memory. */
#define TJ_TEXT_FILE_MAX ((size_t)256 << 20)
/** Reads a whole text file of any kind that reads to an end (a regular
 *  file, a pipe, /dev/stdin), plus a terminating NUL, through tj_alloc, at
 *  most `max_bytes` (< SIZE_MAX / 2) of text: a larger regular file is
 *  refused before reading it, any other is read only up to one byte past
 *  the limit (its st_size is not trusted). *size gets the length. NULL on
 *  error, naming `who` and the path: TJ_ERR_IO when it cannot be opened or
 *  read (a directory: EISDIR) or is larger than the limit (named in the
 *  message); TJ_ERR_PARSE for a NUL byte in it, at the line, column and
 *  byte offset named (a C string would end there, silently dropping the
 *  rest); TJ_ERR_OUT_OF_MEMORY; TJ_ERR_INVALID_ARGUMENT for a NULL path.
 *  Free it with tj_free_file(text, size). */
char *tj_read_text_file(const char *path, const char *who, size_t max_bytes, size_t *size);
/** Reads exactly `n` bytes of `f` into `buf`. Errors: TJ_ERR_IO naming
 * `who`, `path` (NULL: left out) and why: errno's text for a read error,
 * "unexpected end of file after N of M bytes" for a short file (N and M
 * counted from where this read began). */
tj_status tj_read_exact(FILE *f, void *buf, size_t n, const char *who, const char *path);
/** The end of every function that writes to a FILE*: flushes `f` (a full
 * disk shows only then) and checks its error indicator. TJ_OK when all that
 * was written reached the file; otherwise TJ_ERR_IO "who: cannot write
 * 'path': reason" ("who: write failed: reason" when `path` is NULL), the
 * reason the flush's errno text, or "an earlier write to the stream failed"
 * when only an earlier write failed. */
tj_status tj_check_written(FILE *f, const char *who, const char *path);
/** Writes `path` through a temporary file next to it (path.tmpPID-N,
 * created exclusively), renamed over `path` once write(f, ctx) and the close
 * succeeded: a failure never leaves a truncated `path` (an existing one
 * stays as it was) and removes the temporary. A `path` that is a device or
 * a FIFO is written in place instead (renaming would replace it with a
 * regular file); a symbolic link's target is replaced, the link kept.
 * `write` returns TJ_OK,
 * TJ_ERR_IO for a failed write (no message: errno says why), or another
 * status with its error set. Errors: TJ_ERR_IO naming the path and the
 * reason (strerror), TJ_ERR_INVALID_ARGUMENT (NULL or too long a path),
 * write's own. */
tj_status tj_write_file_replacing(const char *path, const char *who, tj_status (*write)(FILE *f, void *ctx),
                                  void *ctx);
/** TJ_OK when `nbytes` (a block `what` that will be touched whole at once,
 * e.g. "the plan's arena") fits in 7/8 of MemAvailable + SwapFree of
 * /proc/meminfo (or when that cannot be read, or for less than 64 MiB),
 * asked again after giving the storage cache's blocks back when they are
 * what it lacks; else TJ_ERR_OUT_OF_MEMORY naming who, what and both sizes:
 * under overcommit such a malloc succeeds and touching it gets the process
 * OOM-killed (runtime/memory_available.c). */
tj_status tj_check_memory_available(const char *who, const char *what, size_t nbytes);
/** Tests: read `path` instead of /proc/meminfo (NULL: /proc/meminfo again). */
void tj_debug_set_meminfo_path(const char *path);
/** When this thread's last tj_check_memory_available refused `nbytes`: its
 * reason ("not enough memory: ... needs N bytes ..."), handed out once (a
 * thread-local buffer); else NULL. */
const char *tj_memory_refusal_reason(size_t nbytes);
/** Out-of-memory error naming `what` and the size; when the block was refused
 * by tj_check_memory_available (fresh storage of tj_alloc_storage_bytes), its
 * reason instead of a bare "out of memory". Returns TJ_ERR_OUT_OF_MEMORY. */
tj_status tj_oom(const char *what, size_t nbytes);
/** A copy of `s` through tj_alloc (so allocation-failure injection reaches
 * it); NULL with an out-of-memory error naming `who`. Free with tj_free_str. */
char *tj_strdup(const char *s, const char *who);
void tj_free_str(char *s);
/** What `print` writes of `obj`, in a new string (free with free()), one
 * trailing newline left out with strip_newline; NULL with print's error, or
 * TJ_ERR_OUT_OF_MEMORY naming `who` (the *_to_string functions). */
char *tj_print_to_string(tj_status (*print)(const void *obj, FILE *f), const void *obj, const char *who,
                         bool strip_newline);

/** The length in bytes (1 to 4) of the well-formed UTF-8 character (RFC
 * 3629: no overlong form, no surrogate, at most U+10FFFF) that s starts
 * with; 0 when s starts with none, or with its terminating NUL. */
int tj_utf8_char_len(const char *s);
/** Whether the string s is well-formed UTF-8, as JSON strings must be
 * (jansson's json_string refuses any other). */
bool tj_utf8_valid(const char *s);

/** The name of make_fx's mode on the dispatcher's stack. */
#define TJ_MAKE_FX_MODE "make_fx"

/** Whether a mode named `name` is on the calling thread's stack. */
bool tj_mode_active(const char *name);
/** Pops every mode above `mode` on the calling thread's stack (those a
 * callback pushed and left there) and returns how many; -1 when `mode` is
 * not on the stack (nothing popped). */
int tj_mode_pop_above(const tj_mode *mode);

/* ---- tensors ---- */
/** Sets the name of the first public accessor (tj_tensor_data, _item_at,
 * _copy_to) that asked a fake tensor for its values on this thread, NULL to
 * clear it; returns the previous one (make_fx in fake mode). */
const char *tj_fake_data_read_swap(const char *who);
/** What a tensor reader (make_fx, while its function runs) is told of. */
typedef enum tj_tensor_read {
    /** a gradient formula built what it computes from t's strides and
     * storage offset (as_strided's: the input's geometry), which a trace
     * then holds for that geometry only (make_fx binds such inputs) */
    TJ_READ_GEOMETRY,
    /** t's values are read or written by steps that do not go through the
     * dispatcher (a plan's), which a trace cannot record (make_fx refuses a
     * traced t) */
    TJ_READ_PAST_DISPATCH,
} tj_tensor_read;
/** A thread's tensor reader: TJ_OK, or an error (set with tj_error) that
 * the reading call returns. */
typedef tj_status (*tj_tensor_reader)(void *ctx, const tj_tensor *t, tj_tensor_read how, const char *who);
/** Installs `fn` (NULL: none) with `ctx` as this thread's tensor reader;
 * *fn and *ctx get the previous one, for the caller to put back. */
void tj_tensor_reader_swap(tj_tensor_reader *fn, void **ctx);
/** Tells this thread's tensor reader, if any, that `who` read t's geometry. */
void tj_note_geometry_read(const tj_tensor *t, const char *who);
/** Asks this thread's tensor reader, if any, whether `who` may read or
 * write the values of ts[0..n) (NULL entries skipped) past the dispatcher:
 * TJ_OK, or the reader's first error. */
tj_status tj_check_read_past_dispatch(tj_tensor *const *ts, int n, const char *who);
/** New tensor described by `m` (alias ignored): contiguous storage, or none
 * when `fake`. NULL on failure (error set). */
tj_tensor *tj_tensor_new_meta(const tj_meta *m, bool fake);
/** New view object sharing `base`'s storage with the given geometry. */
tj_tensor *tj_tensor_new_view(tj_tensor *base, int ndim, const int64_t *shape,
                              const int64_t *strides, int64_t offset);
/** New tensor over `s` (offset 0, the geometry given, checked by the
 * caller), owned as tj_tensor_empty's result; takes the caller's reference
 * on s, which is released on failure (NULL, TJ_ERR_OUT_OF_MEMORY). */
tj_tensor *tj_tensor_on_storage(tj_storage *s, tj_dtype dtype, int ndim, const int64_t *shape, const int64_t *strides);
void tj_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);
/** numel with overflow check, for a shape to allocate: TJ_ERR_OVERFLOW when
 * its element count (for an empty shape, the product of its nonzero sizes,
 * which its contiguous strides reach) times 8 bytes overflows int64,
 * TJ_ERR_SHAPE for a negative size. */
tj_status tj_checked_numel(int ndim, const int64_t *shape, int64_t *numel, const char *who);
/** The same for a view, which allocates nothing: only a count past INT64_MAX
 * overflows (expand of one element to [2^62] is a view, as in PyTorch). */
tj_status tj_checked_view_numel(int ndim, const int64_t *shape, int64_t *numel, const char *who);
/** Checks memory another framework lends (runtime/lent_memory.c) for a
 * tensor of dtype, shape and strides (elements) at *data, before a storage
 * covers it: *bytes gets the extent from the first element to the end of the
 * last (0 without elements, where a NULL *data becomes an aligned dummy
 * address). Errors name `who`: TJ_ERR_SHAPE for a negative size,
 * TJ_ERR_UNSUPPORTED for a negative stride (of a dim with several indices),
 * TJ_ERR_OVERFLOW when the extent passes int64, TJ_ERR_INVALID_ARGUMENT for
 * NULL data with elements or data not aligned to its elements. */
tj_status tj_check_lent_memory(const char *who, tj_dtype dtype, int ndim, const int64_t *shape,
                               const int64_t *strides, char **data, size_t *bytes);
/* ---- memory overlap (runtime/overlap.c) ---- */
/** Lowest and highest storage element that t's elements touch (t nonempty). */
void tj_element_range(const tj_tensor *t, int64_t *lo, int64_t *hi);
/** The same for a layout not yet known to be valid (a user's view, a view
 * bound to another run's input): from `offset`, each dim of size n adds
 * (n - 1) * stride to hi or lo; a dim of size 0 adds nothing. False when a
 * product or sum overflows int64 (lo and hi are then meaningless). */
bool tj_layout_element_range(int ndim, const int64_t *shape, const int64_t *strides, int64_t offset, int64_t *lo,
                             int64_t *hi);
/** True unless t's layout provably gives every element its own location
 * (false for an empty tensor; true for broadcast stride-0 dims). */
bool tj_may_self_overlap(const tj_tensor *t);
/** tj_may_self_overlap of a layout (ndim each); with except_broadcast, only
 * overlaps other than along broadcast (stride-0) dims count (an expanded
 * tensor's do not). */
bool tj_layout_may_self_overlap(int ndim, const int64_t *shape, const int64_t *strides, bool except_broadcast);
/** How the storage bytes two tensors touch overlap, as ATen's
 * get_overlap_status (ATen/MemoryOverlap.cpp) but conservative where it
 * answers "too hard": NONE is proven. */
typedef enum tj_overlap {
    TJ_OVERLAP_NONE,    /**< no byte in common: other storages, an empty tensor, disjoint byte ranges, interleaved
                             elements that never meet, or views with one set of strides whose elements never meet
                             (x[:, :16] and x[:, 32:]) */
    TJ_OVERLAP_PARTIAL, /**< may share bytes without being the same view */
    TJ_OVERLAP_FULL,    /**< the same view: each index names the same element in both (a == b, or one offset, shape,
                             itemsize and strides) */
} tj_overlap;
tj_overlap tj_overlap_status(const tj_tensor *a, const tj_tensor *b);
/** ATen's is_non_overlapping_and_dense: the dims of size > 1, sorted by
 * stride, have the strides of a contiguous tensor (a permutation of a
 * contiguous layout, numel elements from the offset on). */
bool tj_non_overlapping_and_dense(int ndim, const int64_t *shape, const int64_t *strides);
/** Whether ATen 1.13's assert_no_overlap(a, b) raises "unsupported
 * operation: some elements of the input tensor and the written-to tensor
 * refer to a single memory location": a and b are the same tensor, or both
 * are non-overlapping and dense (a permutation of a contiguous layout) and
 * their byte ranges in one storage intersect. Where either is not dense ATen
 * finds the question too hard and accepts: so does this (false). */
bool tj_aten_refuses_overlap(const tj_tensor *a, const tj_tensor *b);
/** Whether in-place operator op, on a self of this shape and these strides
 * (ndim each), gives one value to all the indices that name one element:
 * fill_ and zero_; index_fill_ along a dim (its `dim` argument, any sign)
 * whose stride is not 0, on a self whose elements overlap only along
 * broadcast (stride-0) dims. Eager code accepts these on an expanded self,
 * and a write-back through index 0 of each broadcast dim reproduces them. */
bool tj_inplace_writes_one_value(const tj_op *op, int64_t dim, int ndim, const int64_t *shape,
                                 const int64_t *strides);
/** tj_dtype_size of a valid dtype, without a call (for per-operator paths). */
static inline size_t tj_dtype_bytes(tj_dtype d) { return tj_k_dtype_bytes(d); }
/** Pointer to element [0,...] as char*. */
static inline char *tj_tensor_ptr(const tj_tensor *t)
{
    return t->storage && !t->fake ? (char *)t->storage->data + t->offset * (int64_t)tj_dtype_bytes(t->dtype) : NULL;
}
/** Fills a shape function's new output with dtype, ndim and shape. */
static inline void tj_meta_set(tj_meta *out, tj_dtype dtype, int ndim, const int64_t *shape)
{
    out->dtype = dtype;
    out->ndim = ndim;
    memcpy(out->shape, shape, sizeof(int64_t) * (size_t)ndim);
}
/** The same with t's dtype and shape (the gradient of an input, an
 * elementwise random draw, scatter_add's self). */
static inline void tj_meta_like(tj_meta *out, const tj_tensor *t) { tj_meta_set(out, t->dtype, t->ndim, t->shape); }
/** Registers a tensor returned by the public API with the innermost open
 * scope (nothing to do when none is open). TJ_ERR_OUT_OF_MEMORY when the
 * scope cannot grow: `t` is then not registered, and the caller must release
 * it and fail, or it would leak when the scope ends. */
tj_status tj_scope_adopt(tj_tensor *t);
/** Releases a result the caller does not want: taken out of the innermost
 * scope when it owns it, released directly when no scope does. */
void tj_scope_drop(tj_tensor *t);
/** Takes `t` out of the innermost scope without releasing it: the scope's
 * reference passes to the caller. False (nothing done) when that scope does
 * not own it. */
bool tj_scope_take(tj_tensor *t);
/** Fences `scope` (open, from tj_scope_begin) while a user callback runs in
 * it (a traced function, a decomposition, a derivative): tj_scope_end of it
 * or of any scope opened before it is refused (TJ_ERR_INVALID_ARGUMENT)
 * until tj_scope_unfence, since ending them would release what the runtime
 * still uses. Returns the previous fence, to hand to tj_scope_unfence. */
int tj_scope_fence(tj_scope *scope);
void tj_scope_unfence(int previous);
/** Whether `scope` (open) or a scope opened inside it owns `t`: a tensor
 * made since `scope` began and not handed out of it. */
bool tj_scope_owns_since(const tj_scope *scope, const tj_tensor *t);

/* ---- errors ---- */
/** The status of the calling thread's last error while it is unread (see
 * tj_last_error in core.h: recorded, or marked unread, and not read since by
 * tj_last_error or tj_last_status), else TJ_OK. A NULL tensor argument is
 * then taken for a result of that failure and names it. */
tj_status tj_unread_error(void);
/** Marks the last error unread again when it has `status`, a failed call's:
 * a failing dispatch hands its error to the caller as new, whatever read it
 * on the way (a handler or a decomposition returning tj_last_status()). An
 * error of another status is not the call's (a handler that failed without
 * recording one) and stays as it is. */
void tj_error_mark_unread(tj_status status);
/** The root cause in the last error's message: what follows its last
 * "; earlier error: ", or the whole message. Reads the error (as
 * tj_last_error). Valid until the next recorded error. */
const char *tj_error_root(void);
/** A failing decomposition's error, led by the operator the user called
 * (`name`) and giving the root cause first: "aten::mse_loss:
 * aten::sub.Tensor: shapes [8, 16] and [8] cannot be broadcast", not the
 * NULL argument of a later call that the failure left behind. A cause the
 * decomposition's own check already names after the operator is kept as it
 * is. Returns `st`. Used for implicit composites (dispatch.c) and for the
 * decompositions make_fx runs from its table (tracer/make_fx.c). */
tj_status tj_error_led_by(const char *name, tj_status st);

/** For an operator run by another's shape function or kernel: when `st`
 * failed with the last error led by "<inner>:", re-issues it as "<op>:"
 * (clamp_min.Tensor's from clamp.Tensor). Returns `st`. */
tj_status tj_error_renamed(const char *op, const char *inner, tj_status st);
/** `st`, the failure of a user's callback (a shape function, kernel or
 * decomposition from library.h / decomp.h): when no error with that status
 * was recorded, records "WHO: WHAT returned STATUS without recording an
 * error", so that a failed call never leaves tj_last_status() at TJ_OK (the
 * caller's `out ? TJ_OK : tj_last_status()` would take the NULL result for a
 * success). Returns `st`. */
tj_status tj_error_if_unrecorded(tj_status st, const char *who, const char *what);
/** Records that a required argument is NULL, described by the printf-style
 * `fmt` ("tj_backward: NULL output"). While an earlier error is unread (a
 * chain of calls passing on a failed call's NULL result, see tj_last_error
 * in core.h) the error takes that one's status and names its root cause
 * ("...; earlier error: aten::add.Tensor: shapes ..."); otherwise it is
 * TJ_ERR_INVALID_ARGUMENT. Returns the status recorded. For tensors, graphs
 * and plans, which a failed call returns as NULL; not for options or
 * files. */
tj_status tj_error_null(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** The noun (or verb) for a count in a message: `one` when n is 1, else
 * `many` ("1 input", "2 inputs", "0 copies"). */
static inline const char *tj_noun(long long n, const char *one, const char *many) { return n == 1 ? one : many; }

/* ---- promotion and broadcasting (runtime/promote.c) ---- */
typedef enum { TJ_CAT_BOOL = 0, TJ_CAT_INT = 1, TJ_CAT_FLOAT = 2 } tj_category;
tj_category tj_dtype_category(tj_dtype d);
/** True for the floating dtypes the kernels compute in, float32 and
 * float64: those that true division and the float-only operators compute
 * in, and that the float-only kernels accept. Where code picks a kernel or
 * a loop by dtype, it lists the dtypes that kernel has instead, even where
 * they are these two. */
static inline bool tj_dtype_is_float(tj_dtype d) { return d == TJ_FLOAT32 || d == TJ_FLOAT64; }
/** torch's is_floating_point: float32, float64, float16 and bfloat16, the
 * dtypes that carry gradients (the last two computed in float32,
 * runtime/widen.c). */
static inline bool tj_dtype_is_floating_point(tj_dtype d)
{
    return tj_dtype_is_float(d) || d == TJ_FLOAT16 || d == TJ_BFLOAT16;
}
/** PyTorch's result_type over tensor and Scalar arguments. `vals` may mix
 * TENSOR, INT, FLOAT and BOOL values; NONE entries are skipped. */
tj_dtype tj_result_type(const tj_value *vals, int n);
/** PyTorch's promote_types(a, b) (float16 with bfloat16 is float32). */
tj_dtype tj_promote_types(tj_dtype a, tj_dtype b);
/** Broadcast shape of a and b; TJ_ERR_SHAPE with a message naming `op`. */
tj_status tj_broadcast_shapes(const char *op, int na, const int64_t *a, int nb,
                              const int64_t *b, int *nout, int64_t *out);
/** Strides of `t` expanded to `ndim`/`shape` (0 on broadcast dims). */
void tj_broadcast_strides(const tj_tensor *t, int ndim, const int64_t *shape, int64_t *strides);
/** t's shape (and strides, when not NULL) without its size-1 dims, as
 * ATen's squeeze(); returns the rank left. */
static inline int tj_squeezed(const tj_tensor *t, int64_t *shape, int64_t *strides)
{
    int k = 0;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] != 1) {
            if (strides) strides[k] = t->strides[d];
            shape[k++] = t->shape[d];
        }
    return k;
}
/** Normalises dim (negative counts from the end) for a tensor of rank ndim
 * (rank 0 accepts -1 and 0). TJ_ERR_INDEX naming `op` when out of range. */
tj_status tj_wrap_dim(const char *op, int64_t dim, int ndim, int *out);
/** The same for a dim the result of `op` adds to a tensor of rank ndim
 * (unsqueeze, stack, diag_embed): over ndim + 1 positions, the message
 * naming the operand's rank ("a tensor of rank 1" for a 0-dim one read
 * as if it were the operand's). */
tj_status tj_wrap_new_dim(const char *op, int64_t dim, int ndim, int *out);

/* The array of a list value (TENSORS, INTS, BOOLS, FLOATS), and in
 * *elem_size (when not NULL) the bytes of one element; NULL and 0 for the
 * other kinds. */
const void *tj_value_list(const tj_value *v, size_t *elem_size);
static inline size_t tj_value_list_elem_size(tj_value_kind k)
{
    return k == TJ_V_TENSORS ? sizeof(tj_tensor *)
           : k == TJ_V_INTS  ? sizeof(int64_t)
           : k == TJ_V_BOOLS ? sizeof(bool)
           : k == TJ_V_FLOATS ? sizeof(double)
                             : 0;
}

/* ---- argument reading helpers ---- */
/** The tensor of an optional Tensor? argument, or NULL for None. */
static inline tj_tensor *tj_opt_tensor(const tj_value *v) { return v->kind == TJ_V_TENSOR ? v->u.t : NULL; }
static inline double tj_value_as_double(const tj_value *v)
{
    return v->kind == TJ_V_FLOAT ? v->u.f : v->kind == TJ_V_BOOL ? (double)v->u.b : (double)v->u.i;
}
/** PyTorch's checked Scalar conversion (c10::checked_convert, behind
 * Scalar::to<T>): TJ_ERR_INVALID_ARGUMENT "<op>: <what> <value> cannot be
 * converted to type <dtype> without overflow" for a finite value beyond the
 * largest finite value of a float dtype (float16: 65504), a nan or a value
 * outside an integer dtype's range (uint8 takes -255 .. 255, the negative
 * ones wrapping, as c10 does). tj_scalar_check_int: an int Scalar into a
 * storage dtype (into float32 / float64 / int64 / bool an int never fails).
 * Every operator that converts a Scalar argument to its compute dtype with
 * Scalar::to in ATen (alpha, beta, weight, value, min / max, fill values)
 * calls this from its shape function; Scalars that ATen wraps into a 0-dim
 * tensor instead (add.Scalar's `other`, mul.Scalar, div.Scalar, pow's
 * exponent, comparisons) are not checked and may become inf. */
tj_status tj_scalar_check_float(const char *op, const char *what, double f, tj_dtype dtype);
tj_status tj_scalar_check_int(const char *op, const char *what, int64_t i, tj_dtype dtype);
static inline tj_status tj_scalar_check(const char *op, const char *what, const tj_value *v, tj_dtype dtype)
{
    /* inline: int and bool Scalars (add's default alpha) pass on the dispatch fast path without a call */
    if (v->kind == TJ_V_FLOAT) return tj_scalar_check_float(op, what, v->u.f, dtype);
    return v->kind == TJ_V_INT && dtype >= TJ_FIRST_STORAGE_DTYPE ? tj_scalar_check_int(op, what, v->u.i, dtype)
                                                                   : TJ_OK;
}
/** Converts the Scalar v to one element of `dtype` in buf (8 bytes), as a
 * fill value: refuses values that overflow the dtype (tj_scalar_check, the
 * error naming `op` and "value"); float into int64 truncates, anything into
 * bool is v != 0 (runtime/op_creation.c: full, constant_pad_nd). */
tj_status tj_scalar_to(const char *op, const tj_value *v, tj_dtype dtype, void *buf);
/** Reads element i (flat index into storage, already offset) as double / int64. */
double tj_load_f64(const void *p, tj_dtype d);
/** torch.fx's short name of a dtype ("f32", "i64", "b8", "bf16", ...), "?" for
 * an invalid one. */
const char *tj_dtype_short_name(tj_dtype d);
/** The dtype whose short name starts s (the longest that matches) into *out;
 * returns that name's length, 0 when none matches (*out unchanged). */
int tj_dtype_parse_short_name(const char *s, tj_dtype *out);
int64_t tj_load_i64(const void *p, tj_dtype d);
void tj_store_f64(void *p, tj_dtype d, double v);

#endif
