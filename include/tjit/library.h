/* Your own operators: PyTorch's torch.library (`Library("mylib", "DEF")`,
 * `define(schema)`, `impl(...)`, the meta / fake implementation,
 * `register_autograd`), in C.
 *
 * An operator is registered once, at run time, from an ATen schema under a
 * namespace of your own, with a kernel and a shape function (the "meta"
 * implementation, which also serves fake tensors). From then on it is an
 * operator like the built-in ones: tj_op_find("mylib::scaled_add") finds it,
 * tj_dispatch / tj_call run it through the modes and autograd, make_fx
 * records it (printed as `mylib.scaled_add.default(...)`), tj_graph_parse
 * reads it back, tj_compile binds its kernel, tj_op_count / tj_op_at list it
 * (`tjit ops`). A decomposition for it is registered with
 * tj_register_decomposition (decomp.h), exactly as for a built-in operator.
 *
 * Threads: registration (tj_op_register, tj_op_set_backward,
 * tj_register_decomposition) takes a lock, and an operator is complete
 * before other threads can find it; but register an operator's backward and
 * decomposition before any thread calls or traces it: they are read without
 * a lock. Operators are never unregistered (graphs and plans point at them). */
#ifndef TJIT_LIBRARY_H
#define TJIT_LIBRARY_H

#include "dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Geometry of one operator output, as a shape function describes it. The
 * dispatcher sets the defaults before the call: dtype float32, ndim 0,
 * alias -1, same and undefined false, offset 0.
 * - A new tensor: set dtype, ndim (0..TJ_MAX_DIMS) and shape[0..ndim) (sizes
 *   >= 0), leave alias at -1; the dispatcher allocates it contiguous
 *   (strides and offset are then ignored).
 * - A view (schema return `Tensor(a)`): alias = index of the Tensor argument
 *   it views, plus strides (in elements) and offset (absolute storage offset
 *   in elements) that stay inside the elements of that argument's storage
 *   (checked eagerly, on fake tensors, and by plans on each run's inputs:
 *   TJ_ERR_INDEX). Its dtype is the argument's, whatever the shape function
 *   sets. A view has no kernel.
 * - In place (schema return `Tensor(a!)`): alias = index of the Tensor
 *   argument and same = true; the result is that argument itself.
 * - Not computed (a backward operator's output_mask entry false): undefined
 *   = true; the caller gets TJ_V_NONE and the kernel NULL for it. */
typedef struct tj_meta {
    tj_dtype dtype;
    int ndim;
    int alias;
    bool same;
    bool undefined;
    int64_t shape[TJ_MAX_DIMS];
    int64_t strides[TJ_MAX_DIMS];
    int64_t offset;
} tj_meta;

/** A shape function (PyTorch's meta / fake implementation): validates the
 * arguments and fills one tj_meta per schema return. `args` hold every schema
 * argument, already checked against the schema's types (a required Tensor is
 * non-NULL, an optional one may be TJ_V_NONE, a float may arrive as
 * TJ_V_INT). It checks everything else (dtypes, shapes, values) and returns
 * TJ_OK or an error set with tj_error naming the operator:
 * `mylib::scaled_add: self [3] and other [4] differ`. It never reads tensor
 * data: it also runs on fake tensors (make_fx's fake mode, tj_compile). */
typedef tj_status (*tj_meta_fn)(const tj_value *args, tj_meta *outs);

/** A kernel: computes into the preallocated outputs, one per return
 * (contiguous, as the shape function described them; NULL for an undefined
 * output). Input tensors may have any strides (transposed, broadcast stride
 * 0, a storage offset), may be empty or 0-dim: read them through
 * tj_tensor_data / tj_tensor_strides. A kernel fails only on data (an index
 * out of range), with tj_error, leaving nothing else changed. */
typedef tj_status (*tj_kernel_fn)(const tj_value *args, tj_tensor *const *outs);

/** A backward formula (a vector-Jacobian product, PyTorch's
 * register_autograd). Input slots number the call's Tensor arguments in
 * schema order, a Tensor[] or Tensor?[] argument taking one slot per element
 * (a None entry keeps its slot and never needs a gradient). `args` are
 * the call's arguments and `results` its outputs (one per return, NULL for an
 * undefined one), saved without autograd history; `grads` holds the gradient
 * of each return (NULL where none flowed). For every slot with needed[slot]
 * set, the formula stores the input's gradient, computed with the public
 * operator API (results belong to the scope the engine opens: no release),
 * into grad_inputs[slot], or leaves NULL for zero. A gradient may have a
 * shape that broadcasts to the input's, or another float dtype: the engine
 * sums and converts it. Returns TJ_OK or the failing call's status. It is
 * not called when a saved tensor (argument or result) was written in place
 * since the call: the backward pass fails with TJ_ERR_MODIFIED instead. */
typedef tj_status (*tj_backward_fn)(const tj_value *args, tj_tensor *const *results, tj_tensor *const *grads,
                                    const bool *needed, tj_tensor **grad_inputs);

/** Most operators tj_op_register accepts in one process. */
#define TJ_MAX_USER_OPS 1024

/** Registers an operator (torch.library's define + impl + register_fake).
 *
 * `schema` is an ATen schema under a namespace of your own:
 *     "mylib::scaled_add(Tensor self, Tensor other, float alpha=1.0) -> Tensor"
 * Names and overloads are identifiers ("mylib::foo.Tensor"; the overload
 * "default" is implied when there is none and cannot be spelled). Argument
 * types: Tensor, Tensor[], int, SymInt, float, bool, Scalar, str,
 * ScalarType, int[] / int[N], bool[N], each optional with '?'; Tensor?[]
 * (a list whose entries may be None, as aten::index's indices: boxed as a
 * TJ_V_TENSORS with NULL elements; no other type takes '?[]'); alias
 * annotations are allowed (a `Tensor(a!)` argument is one the kernel
 * writes: each successful call bumps its version, see tj_tensor_version); `*` starts keyword-only
 * arguments; defaults are literals of the argument's type (None for an
 * optional). Returns: Tensor, `(Tensor, Tensor)` (at most TJ_MAX_RETURNS,
 * names allowed), `Tensor(a)` for a view, `Tensor(a!)` for in place (name
 * ending in '_'), Tensor[] for implicit operators only. At most TJ_MAX_ARGS
 * arguments.
 *
 * `kind`:
 * - TJ_OP_PRIMITIVE: kernel and meta required (a view may have no kernel).
 *   It is never decomposed by the core table.
 * - TJ_OP_COMPOSITE: kernel and meta required; its decomposition, once
 *   registered with tj_register_decomposition, is used by the core table
 *   (tables created after it) and by tj_get_decompositions.
 * - TJ_OP_IMPLICIT: kernel and meta must be NULL; every call runs the
 *   decomposition registered with tj_register_decomposition (PyTorch's
 *   CompositeImplicitAutograd: autograd and tracing see the operators it
 *   calls). A decomposition that reaches its own operator again gives
 *   TJ_ERR_CYCLE; one that leaves a return without a tensor,
 *   TJ_ERR_INVALID_ARGUMENT.
 *
 * A shape function, kernel or decomposition that fails records its error
 * with tj_error; one that returns a status without recording one gets
 * "OP: its kernel returned STATUS without recording an error".
 *
 * User operators are taken as deterministic: graph passes may merge two calls
 * with the same arguments. Autograd: until tj_op_set_backward registers a
 * formula, a call with an input that requires grad runs and its results
 * require grad, but a backward pass reaching them fails with
 * TJ_ERR_UNSUPPORTED ("derivative not implemented", as torch.library's
 * operators without register_autograd); an operator with a `Tensor(a!)`
 * argument gives TJ_ERR_UNSUPPORTED at the call (autograd records in-place
 * calls of built-in operators only).
 *
 * Returns the operator (valid for the life of the process), or NULL with:
 * TJ_ERR_INVALID_ARGUMENT for a NULL schema, an invalid kind, a missing
 * kernel or shape function (or one given to an implicit operator), a schema
 * without a namespace or in the built-in namespace `aten`, a name already
 * registered; TJ_ERR_PARSE for a malformed schema (the message quotes it and
 * says what is wrong); TJ_ERR_UNSUPPORTED for types or returns the runtime
 * does not handle (a non-Tensor return, too many arguments);
 * TJ_ERR_OVERFLOW past TJ_MAX_USER_OPS; TJ_ERR_OUT_OF_MEMORY. Nothing is
 * registered or leaked on failure. */
const tj_op *tj_op_register(const char *schema, tj_op_kind kind, tj_kernel_fn kernel, tj_meta_fn meta);

/** Registers the backward formula of an operator from tj_op_register
 * (replacing an earlier one). NULL marks the operator not differentiable
 * (like a comparison: its results never require grad). Errors:
 * TJ_ERR_INVALID_ARGUMENT for a NULL or built-in operator, or an implicit one
 * (autograd differentiates its decomposition). */
tj_status tj_op_set_backward(const tj_op *op, tj_backward_fn fn);

/** The operator's namespace: "aten" for built-in operators, "mylib" for
 * "mylib::scaled_add"; "" for NULL. */
const char *tj_op_namespace(const tj_op *op);

#ifdef __cplusplus
}
#endif
#endif
