/* Tensors: dtype, shape, strides (in elements), storage offset, refcounted
 * 64-byte aligned storage shared by views. A tensor may also be "fake": it
 * has a dtype, shape and strides but no storage (make_fx's fake mode). */
#ifndef TJIT_TENSOR_H
#define TJIT_TENSOR_H

#include <stdio.h>

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tj_tensor tj_tensor;

/** A new contiguous tensor of `dtype` and `shape` (ndim 0..TJ_MAX_DIMS),
 * contents uninitialised. Returns NULL with TJ_ERR_INVALID_ARGUMENT (bad rank
 * or dtype), TJ_ERR_SHAPE (negative size), TJ_ERR_OVERFLOW (element count
 * overflows) or TJ_ERR_OUT_OF_MEMORY (also for new storage of 64 MiB or
 * more that needs more than 7/8 of MemAvailable + SwapFree in /proc/meminfo:
 * malloc would succeed under overcommit and filling it get the process
 * killed). The caller owns the reference (or the enclosing scope does, see
 * tj_scope_begin). */
tj_tensor *tj_tensor_empty(tj_dtype dtype, int ndim, const int64_t *shape);
/** Like tj_tensor_empty, then copies numel * dtype-size bytes from `data`
 * (row-major). `data` may be NULL only when the tensor is empty. */
tj_tensor *tj_tensor_from_data(tj_dtype dtype, int ndim, const int64_t *shape,
                               const void *data);
/** A fake tensor: dtype, shape and contiguous strides, no storage.
 * Operators on fake tensors run only their shape function and give fake
 * results; an operator called with fake and real tensors together fails
 * (TJ_ERR_INVALID_ARGUMENT) except inside a fake-mode trace (tj_dispatch).
 * Owned as tj_tensor_empty's result (the innermost open scope, or the
 * caller): inside a scope, do not release it too. NULL with
 * tj_tensor_empty's errors (but the memory check: it has no storage). */
tj_tensor *tj_tensor_fake(tj_dtype dtype, int ndim, const int64_t *shape);
/** A new 0-dim float32 / float64 / int64 tensor holding `v`, owned as
 * tj_tensor_empty's result (the innermost open scope, or the caller). NULL
 * with TJ_ERR_OUT_OF_MEMORY. */
tj_tensor *tj_tensor_scalar_f32(float v);
tj_tensor *tj_tensor_scalar_f64(double v);
tj_tensor *tj_tensor_scalar_i64(int64_t v);

/** Adds a reference. Returns `t` (NULL passes through). */
tj_tensor *tj_tensor_retain(tj_tensor *t);
/** Drops a reference; frees the tensor (and its storage when no view shares
 * it) at zero. NULL is ignored. Releasing a tensor with no reference left (a
 * second release) is a caller's bug: it is caught while the tensor's memory
 * has not been reused (the last error is then TJ_ERR_INVALID_ARGUMENT, "no
 * reference left", and nothing is freed). Once another tensor took that
 * memory, or with the storage cache off (tj_storage_cache_set_limit(0)),
 * it cannot be caught and corrupts memory. */
void tj_tensor_release(tj_tensor *t);

/* Accessors. None of them sets an error; given NULL they return a neutral
 * value instead, noted on each (so "if (!tj_tensor_shape(t))" also catches a
 * NULL t). */
/** The dtype; TJ_FLOAT32 for NULL (indistinguishable from a float32 tensor:
 * check t first). */
tj_dtype tj_tensor_dtype(const tj_tensor *t);
/** The rank (0..TJ_MAX_DIMS); 0 for NULL. */
int tj_tensor_ndim(const tj_tensor *t);
/** Shape and strides arrays (ndim entries; strides in elements), owned by
 * the tensor; NULL for NULL. A 0-dim tensor gives a valid pointer to
 * nothing. */
const int64_t *tj_tensor_shape(const tj_tensor *t);
const int64_t *tj_tensor_strides(const tj_tensor *t);
/** Size of dim `dim` (negative counts from the end); -1 when out of range
 * or t is NULL. */
int64_t tj_tensor_size(const tj_tensor *t, int dim);
/** Number of elements (1 for 0-dim); 0 for NULL. */
int64_t tj_tensor_numel(const tj_tensor *t);
/** Storage offset in elements; 0 for NULL. */
int64_t tj_tensor_storage_offset(const tj_tensor *t);
/** Whether the strides are row-major for the shape (size-1 dims ignored; an
 * empty tensor is contiguous, as in PyTorch); false for NULL. */
bool tj_tensor_is_contiguous(const tj_tensor *t);
/** Whether t is fake (no storage); false for NULL. */
bool tj_tensor_is_fake(const tj_tensor *t);
/** True when a and b share storage (for tensors imported through DLPack,
 * tj_tensor_from_dlpack: when their storages hold some of the same bytes);
 * false when either is NULL or fake. */
bool tj_tensor_shares_storage(const tj_tensor *a, const tj_tensor *b);
/** The version counter of t's storage (PyTorch's `t._version`): 0 when the
 * storage is created, incremented by every operator that writes into it
 * in place (add_, copy_, ..., user operators' `Tensor(a!)` arguments) and by
 * plan runs writing into their inputs or outputs. Views share it. Writes
 * through tj_tensor_data are not counted. Autograd refuses a backward
 * formula reading a saved tensor whose version changed since the call
 * (TJ_ERR_MODIFIED, see tj_backward). 0 for NULL or a fake tensor. */
uint32_t tj_tensor_version(const tj_tensor *t);
/** Pointer to element [0, ..., 0] (storage offset applied); NULL for a fake
 * tensor or NULL. Elements are at data + sum(index[d] * strides[d]) *
 * element size. */
void *tj_tensor_data(const tj_tensor *t);
/** Element at a flat row-major index of the logical shape, converted to
 * double (bool gives 0/1). For tests and printing, not for loops. nan for
 * NULL, a fake tensor or an index outside [0, numel). */
double tj_tensor_item_at(const tj_tensor *t, int64_t flat_index);
/** Copies the tensor's elements in row-major order of its shape into `dst`
 * (numel * element size bytes). Works for any strides.
 * TJ_ERR_INVALID_ARGUMENT for a NULL t or dst, or a fake t. */
tj_status tj_tensor_copy_to(const tj_tensor *t, void *dst);
/** Writes a short description: "f32[3, 4]" (fake tensors get a '~';
 * NULL gives "None") into buf, as snprintf: returns the length it needed. */
int tj_tensor_describe(const tj_tensor *t, char *buf, size_t n);
/** Formats a shape as "[3, 4]" into buf; returns buf. */
char *tj_shape_str(int ndim, const int64_t *shape, char *buf, size_t n);
/** Writes PyTorch's repr of `t` and a newline, as Python's print(t) does,
 * following torch/_tensor_str.py (1.13) with the default print options:
 *     tensor([[1., 2.],
 *             [3., 4.]], dtype=torch.float64)
 * Any strides and rank (0-d: "tensor(3.5000)"). Floats share one format
 * chosen from the finite nonzero values shown: integers as "2." when all of
 * them are integral, "%.4f" otherwise, and "%.4e" when max/min > 1000, max >
 * 1e8 or (not all integral) min < 1e-4; every element is right-aligned to the
 * widest; nan, inf and -inf print as such. int64 prints in decimal, bool as
 * True/False. A row wraps after (80 - indent) / (width + 2) items. Above
 * 1000 elements the output is summarised: 3 items at each end of every dim
 * longer than 6, "..." between. Suffixes as torch: "dtype=torch.float64"
 * (float32, int64 and bool are not named), for an empty tensor "size=(0, 3)"
 * (unless 1-d) and its dtype unless float32, "requires_grad=True" for a leaf
 * that requires grad. Differences from torch: a recorded (non-leaf) result
 * gets no "grad_fn=<...>" suffix, and a fake tensor prints as torch prints a
 * meta tensor, without "device='meta'": "tensor(..., size=(2, 3))".
 * Errors: TJ_ERR_INVALID_ARGUMENT for a NULL tensor or file,
 * TJ_ERR_OUT_OF_MEMORY, TJ_ERR_IO when a write or the final flush of `f` fails (the message gives errno's reason). */
tj_status tj_tensor_print(const tj_tensor *t, FILE *f);
/** The same repr as tj_tensor_print, without the newline, in a new string
 * (free with free()); NULL with tj_tensor_print's errors. */
char *tj_tensor_to_string(const tj_tensor *t);

/* ---- Scopes ----
 * Tensors returned by operators while a scope is open belong to the scope and
 * are released when it ends; tj_scope_keep moves one to the enclosing scope
 * (or hands it to the caller when there is none). Scopes nest per thread. */
typedef struct tj_scope tj_scope;
/** Opens a scope on the calling thread. Returns NULL when out of memory. */
tj_scope *tj_scope_begin(void);
/** Releases every tensor the scope owns, except those kept; closes it and
 * every scope opened inside it that is still open. A function the runtime
 * calls back in a scope of its own (a traced function, a decomposition, a
 * derivative) cannot end a scope opened before it: the call is refused
 * (TJ_ERR_INVALID_ARGUMENT, nothing released). */
void tj_scope_end(tj_scope *scope);
/** Moves `t` out of the innermost open scope that owns it into its parent
 * scope (or to the caller). Returns `t`. */
tj_tensor *tj_scope_keep(tj_tensor *t);

/* ---- NumPy .npy files ---- */
/** Reads a .npy file (format 1.0/2.0/3.0; descr 'f4' 'f8' 'f2' 'i8' 'i4' 'i2'
 * 'i1' 'u1', 'b1' or '?'
 * with any byte order numpy accepts: '<', '=', '|', none, or big-endian '>'
 * and '!', byte-swapped here; C or Fortran order; a 1.0/2.0 shape may hold
 * Python 2 longs, (4L,), as numpy reads them). Returns a new contiguous tensor, owned as
 * tj_tensor_empty's result (the innermost open scope, or the caller), or NULL with
 * TJ_ERR_IO (cannot open/read), TJ_ERR_PARSE (malformed header: as numpy,
 * keys other than descr, fortran_order and shape, a key given twice, a shape
 * that is no tuple; truncated data), TJ_ERR_UNSUPPORTED (another dtype, such as '<u4' or '<c8'). */
tj_tensor *tj_npy_load(const char *path);
/** Same as tj_npy_load, from a buffer of `n` bytes. */
tj_tensor *tj_npy_load_buffer(const void *buf, size_t n);
/** Writes `t` (any strides) as a .npy 1.0 file in C order, through a
 * temporary file renamed over `path` at the end: a failure never leaves a
 * truncated file (an existing one stays as it was; a device or FIFO is
 * written in place, a symbolic link's target replaced). Errors: TJ_ERR_IO
 * (naming the path and the reason), TJ_ERR_INVALID_ARGUMENT for a fake
 * tensor, TJ_ERR_DTYPE for bfloat16 (numpy has none), TJ_ERR_OUT_OF_MEMORY. */
tj_status tj_npy_save(const char *path, const tj_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
