/* Boxed values, the operator registry and the dispatcher with its per-thread
 * mode stack: the one path every operator call takes (see DESIGN.md, "The
 * path of one call"). */
#ifndef TJIT_DISPATCH_H
#define TJIT_DISPATCH_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Kinds of boxed value: the dispatcher's calling convention. A Scalar is an
 * INT or a FLOAT value (the distinction drives type promotion). */
typedef enum tj_value_kind {
    TJ_V_NONE = 0,
    TJ_V_TENSOR,
    TJ_V_TENSORS,
    TJ_V_INT,
    TJ_V_FLOAT,
    TJ_V_BOOL,
    TJ_V_INTS,
    TJ_V_BOOLS,
    TJ_V_STR,
    TJ_V_DTYPE,
    TJ_V_FLOATS,
} tj_value_kind;

/** One boxed value. Pointers inside are borrowed: a value does not own the
 * tensors, lists or strings it points to. A TENSORS value holds NULL
 * elements only for a Tensor?[] argument, where NULL is None. */
typedef struct tj_value {
    tj_value_kind kind;
    int n; /**< element count for TENSORS, INTS, BOOLS, FLOATS */
    union {
        tj_tensor *t;
        tj_tensor *const *ts;
        int64_t i;
        double f;
        bool b;
        const int64_t *ints;
        const bool *bools;
        const double *floats;
        const char *s;
        tj_dtype dtype;
    } u;
} tj_value;

static inline tj_value tj_v_none(void) { tj_value v = {TJ_V_NONE, 0, {0}}; return v; }
static inline tj_value tj_v_tensor(tj_tensor *t) { tj_value v = {t ? TJ_V_TENSOR : TJ_V_NONE, 0, {0}}; v.u.t = t; return v; }
static inline tj_value tj_v_tensors(tj_tensor *const *ts, int n) { tj_value v = {TJ_V_TENSORS, n, {0}}; v.u.ts = ts; return v; }
static inline tj_value tj_v_int(int64_t i) { tj_value v = {TJ_V_INT, 0, {0}}; v.u.i = i; return v; }
static inline tj_value tj_v_float(double f) { tj_value v = {TJ_V_FLOAT, 0, {0}}; v.u.f = f; return v; }
static inline tj_value tj_v_bool(bool b) { tj_value v = {TJ_V_BOOL, 0, {0}}; v.u.b = b; return v; }
static inline tj_value tj_v_ints(const int64_t *ints, int n) { tj_value v = {TJ_V_INTS, n, {0}}; v.u.ints = ints; return v; }
static inline tj_value tj_v_bools(const bool *bools, int n) { tj_value v = {TJ_V_BOOLS, n, {0}}; v.u.bools = bools; return v; }
static inline tj_value tj_v_floats(const double *floats, int n) { tj_value v = {TJ_V_FLOATS, n, {0}}; v.u.floats = floats; return v; }
static inline tj_value tj_v_str(const char *s) { tj_value v = {s ? TJ_V_STR : TJ_V_NONE, 0, {0}}; v.u.s = s; return v; }
static inline tj_value tj_v_dtype(tj_dtype d) { tj_value v = {TJ_V_DTYPE, 0, {0}}; v.u.dtype = d; return v; }

/** An operator overload in the registry. */
typedef struct tj_op tj_op;

/** Operator kinds (OPS.md). */
typedef enum tj_op_kind {
    TJ_OP_PRIMITIVE = 0,  /**< a kernel, no decomposition */
    TJ_OP_COMPOSITE,      /**< a kernel and a registered decomposition */
    TJ_OP_IMPLICIT,       /**< no kernel: always decomposes before recording */
} tj_op_kind;

/** Looks an overload up by name: "aten::add.Tensor", "add.Tensor", "aten::abs"
 * or "aten::abs.default"; FX targets "aten.add.Tensor"; user operators
 * (library.h) with their namespace: "mylib::scaled_add",
 * "mylib.scaled_add.default" (a name without namespace is aten's). NULL
 * (TJ_ERR_NOT_FOUND) when unknown, and for an empty overload after the dot
 * ("aten::relu.", "aten::add."), which torch refuses too. */
const tj_op *tj_op_find(const char *name);
/** Number of registered overloads, and the i-th one (registration order). */
int tj_op_count(void);
const tj_op *tj_op_at(int i);
/** "aten::add.Tensor" (default overloads: "aten::abs"). */
const char *tj_op_name(const tj_op *op);
/** The base name without namespace and overload: "add". */
const char *tj_op_base_name(const tj_op *op);
/** The overload name: "Tensor", or "" for the default overload. */
const char *tj_op_overload(const tj_op *op);
/** Schema as in OPS.md, with namespace: "aten::add.Tensor(Tensor self, ...) -> Tensor". */
const char *tj_op_schema(const tj_op *op);
tj_op_kind tj_op_kind_of(const tj_op *op);
const char *tj_op_kind_name(tj_op_kind kind);
/** Number of schema arguments and of returns. */
int tj_op_num_args(const tj_op *op);
int tj_op_num_returns(const tj_op *op);
/** True for operators whose result aliases their first argument (views) and
 * for in-place operators (name ending in '_'). */
bool tj_op_is_view(const tj_op *op);
bool tj_op_is_inplace(const tj_op *op);
/** True for operators that draw from the random generator. */
bool tj_op_is_random(const tj_op *op);

/** A decomposition: computes an operator's outputs from its boxed arguments
 * by calling the public API (so every inner call is dispatched, traced, and
 * decomposed again when a table names it). It runs inside a scope: results it
 * writes into outs are borrowed from that scope, intermediates need no
 * release. Returns TJ_OK or the failing inner call's status. */
typedef tj_status (*tj_decomp_fn)(const tj_value *args, tj_value *outs);

/** Maximum number of schema arguments and returns of any operator. */
#define TJ_MAX_ARGS 20 /* _transformer_encoder_layer_fwd */
#define TJ_MAX_RETURNS 5 /* _native_batch_norm_legit_functional */

/** Calls `op` with all its schema arguments boxed in `args` (`nargs` must
 * equal tj_op_num_args; use tj_call to fill defaults). On success writes one
 * value per return into `outs` (tensors are new references owned by the
 * caller, or by the innermost open scope) and returns TJ_OK. On failure
 * returns the error status (see tj_last_error), writes TJ_V_NONE into outs and
 * leaks nothing. A NULL tensor argument where a Tensor is required gives
 * TJ_ERR_INVALID_ARGUMENT. Fake tensor arguments give fake results (the
 * shape function only); fake and real tensors together are
 * TJ_ERR_INVALID_ARGUMENT (naming both arguments) unless a fake-mode trace
 * takes the call, where the real ones are constants (PyTorch: "Please
 * convert all Tensors to FakeTensors first"): a kernel would write nothing
 * into the real ones. */
tj_status tj_dispatch(const tj_op *op, const tj_value *args, int nargs, tj_value *outs);

/** Like tj_dispatch, by name, with trailing arguments filled from the schema's
 * defaults when nargs is smaller than the schema's argument count. */
tj_status tj_call(const char *name, const tj_value *args, int nargs, tj_value *outs);

/* ---- Modes ----
 * A mode intercepts every call dispatched on its thread while it is pushed.
 * Its handler may record the call, replace it (compute outs itself), or
 * forward it with tj_redispatch to the modes below it and finally the kernel.
 * Calls made from inside a handler (a decomposition, say) start again from
 * the top of the stack. */
typedef struct tj_mode tj_mode;
typedef tj_status (*tj_mode_handler)(tj_mode *mode, const tj_op *op,
                                     const tj_value *args, int nargs, tj_value *outs);
struct tj_mode {
    tj_mode_handler handler;
    void *ctx;
    const char *name;
};

/** Pushes a mode on the calling thread's stack (at most 16 deep). Errors:
 * TJ_ERR_INVALID_ARGUMENT for NULL, TJ_ERR_OVERFLOW when the stack is full. */
tj_status tj_mode_push(tj_mode *mode);
/** Pops `mode`, which must be the top of the stack (TJ_ERR_INVALID_ARGUMENT
 * otherwise). */
tj_status tj_mode_pop(tj_mode *mode);
/** Number of modes pushed on the calling thread. */
int tj_mode_depth(void);
/** Forwards a call from `mode`'s handler to the modes below it, then the
 * kernel. */
tj_status tj_redispatch(tj_mode *mode, const tj_op *op, const tj_value *args,
                        int nargs, tj_value *outs);
/** Runs the operator's kernel (or, for fake inputs, only its shape function),
 * skipping every mode. For implicit composites runs the decomposition.
 * Fake and real tensors together are TJ_ERR_INVALID_ARGUMENT, as in
 * tj_dispatch outside a fake-mode trace. */
tj_status tj_dispatch_kernel(const tj_op *op, const tj_value *args, int nargs,
                             tj_value *outs);
/** Allocates outputs as fake tensors from the shape function only (real
 * arguments lend their dtype and shape: make_fx's fake mode). */
tj_status tj_dispatch_fake(const tj_op *op, const tj_value *args, int nargs,
                           tj_value *outs);

/** A mode that counts calls per operator and forwards them. */
typedef struct tj_counter_mode tj_counter_mode;
tj_counter_mode *tj_counter_mode_new(void);
tj_mode *tj_counter_mode_base(tj_counter_mode *m);
/** Calls of `op` seen so far (0 for NULL). */
int64_t tj_counter_mode_count(const tj_counter_mode *m, const tj_op *op);
int64_t tj_counter_mode_total(const tj_counter_mode *m);
void tj_counter_mode_free(tj_counter_mode *m);

/** A mode that writes one line per call to `out` ("aten::add.Tensor(f32[3], f32[3], 1)")
 * and forwards it. */
typedef struct tj_logger_mode tj_logger_mode;
tj_logger_mode *tj_logger_mode_new(void *file /* FILE* */);
tj_mode *tj_logger_mode_base(tj_logger_mode *m);
void tj_logger_mode_free(tj_logger_mode *m);

/** A census of denormal results: forwards each call, then counts, per
 * operator, its calls, the elements of its float32 and float64 results and
 * how many of those are denormal (nonzero, below the dtype's smallest normal
 * magnitude), where arithmetic underflowed. View operators' results (also
 * in-place ones' as transpose_) are not counted (their elements were counted
 * where computed); fake tensors hold
 * none. An Intel CPU takes ~100 cycles per operation on or into a denormal:
 * the operators listed here are the ones tj_set_flush_denormal speeds up, at
 * the cost of those results (`tjit profile MODEL --denormals` prints the
 * census of a model's step). */
typedef struct tj_denormal_mode tj_denormal_mode;
tj_denormal_mode *tj_denormal_mode_new(void);
tj_mode *tj_denormal_mode_base(tj_denormal_mode *m);
/** The counts of `op` so far into each non-NULL pointer (0 for an operator
 * not seen, or NULL m or op). A call that failed is not counted. */
void tj_denormal_mode_counts(const tj_denormal_mode *m, const tj_op *op, int64_t *calls, int64_t *results,
                             int64_t *denormals);
void tj_denormal_mode_free(tj_denormal_mode *m);

/** Releases every tensor held by `v` (tensor values only); sets it to none. */
void tj_value_release(tj_value *v);
/** Writes a short description of a value ("f32[3, 4]", "2", "[1, 2]", "'tanh'"). */
int tj_value_describe(const tj_value *v, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
