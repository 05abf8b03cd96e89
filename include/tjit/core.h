/* tjit core: status codes, dtypes, errors, threads, the allocator hook.
 *
 * Every public function either returns an object (NULL on failure) or a
 * tj_status (TJ_OK on success). On failure the calling thread's last error
 * holds a status code and a message naming the operator or function and the
 * offending shapes, dtypes or values; read it with tj_last_error(). */
#ifndef TJIT_CORE_H
#define TJIT_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Maximum tensor rank. */
#define TJ_MAX_DIMS 8

/** Status codes. TJ_OK is 0; every other value is an error. */
typedef enum tj_status {
    TJ_OK = 0,
    TJ_ERR_INVALID_ARGUMENT, /**< a bad value: NULL, unknown option, wrong arity */
    TJ_ERR_SHAPE,            /**< shapes that do not fit (broadcast, matmul, view) */
    TJ_ERR_DTYPE,            /**< a dtype the operator does not accept */
    TJ_ERR_INDEX,            /**< a dim or an index out of range */
    TJ_ERR_OUT_OF_MEMORY,    /**< an allocation failed */
    TJ_ERR_IO,               /**< a file could not be read or written */
    TJ_ERR_PARSE,            /**< malformed text or file contents */
    TJ_ERR_UNSUPPORTED,      /**< valid, but not implemented here */
    TJ_ERR_NOT_FOUND,        /**< an unknown operator or name */
    TJ_ERR_CYCLE,            /**< a decomposition that reaches itself */
    TJ_ERR_OVERFLOW,         /**< a size whose element count overflows */
    TJ_ERR_MODIFIED,         /**< a value autograd saved was overwritten in place */
} tj_status;

/** Element types, as PyTorch's dtypes of the same names.
 *
 * The compute dtypes (float32, float64, int64, bool) go through every
 * operator. The storage dtypes after them (int32, uint8, int8, int16,
 * float16, bfloat16; 4, 1, 1, 2, 2, 2 bytes) hold data that files, DLPack
 * and Python hand over: they go through the operators that only move or
 * convert data (views, copies, cat, stack, flip, constant_pad_nd, the
 * creation operators, _to_copy, copy_, fill_, zero_); any other operator
 * given one, as a tensor or as its dtype argument, fails with TJ_ERR_DTYPE
 * naming the operator and the argument (convert with tj_to_copy first).
 * Conversions follow PyTorch on x86: float16 and bfloat16 round to nearest
 * even (from float64 through float32, as c10 does); integers narrow by
 * wrapping; floats truncate toward zero into int64 (for int64 and uint8) or
 * int32 (for int32, int16, int8), then wrap (NaN and out-of-range values
 * give INT64_MIN, INT32_MIN); anything non-zero (NaN too) becomes true. */
typedef enum tj_dtype {
    TJ_FLOAT32 = 0,
    TJ_FLOAT64,
    TJ_INT64,
    TJ_BOOL,
    TJ_INT32,    /**< storage dtype */
    TJ_UINT8,    /**< storage dtype */
    TJ_INT8,     /**< storage dtype */
    TJ_INT16,    /**< storage dtype */
    TJ_FLOAT16,  /**< storage dtype (IEEE binary16) */
    TJ_BFLOAT16, /**< storage dtype (the upper half of a float32) */
} tj_dtype;

#define TJ_NUM_DTYPES 10
/** The first storage dtype: dtypes from it on are storage dtypes. */
#define TJ_FIRST_STORAGE_DTYPE TJ_INT32
/** "No dtype" for the optional dtype arguments of ops.h (ATen's `ScalarType?
 * dtype=None`): the operator picks the dtype, as each function says. */
#define TJ_DTYPE_NONE (-1)

/** Size of one element of `dtype` in bytes; 0 for an invalid dtype. */
size_t tj_dtype_size(tj_dtype dtype);
/** PyTorch's name of `dtype` ("float32", "float64", "int64", "bool", "int32", "uint8",
 * "int8", "int16", "float16", "bfloat16"), or "?". */
const char *tj_dtype_name(tj_dtype dtype);
/** Parses a dtype name as tj_dtype_name() writes it into *out. Returns
 * TJ_ERR_PARSE for an unknown or NULL name (*out unchanged),
 * TJ_ERR_INVALID_ARGUMENT for a NULL out. */
tj_status tj_dtype_from_name(const char *name, tj_dtype *out);

/** Message of the calling thread's last error ("" when none). The pointer stays
 * valid until the thread's next failing call. Successful calls leave the last
 * error as it is. Until it is read (by this function or tj_last_status), a
 * call given a NULL tensor, as a chain of calls passes on a failed call's
 * result, fails with that error's status and names it as the cause
 * ("aten::relu: argument 0 'self' is NULL; earlier error: aten::add.Tensor:
 * shapes [3] and [4] cannot be broadcast ..."), so that a chain can be checked
 * once at the end; so do tj_backward, tj_compile, tj_plan_run and the other
 * functions given a NULL tensor, graph or plan. Once it is read, a NULL
 * tensor argument is the call's own error: TJ_ERR_INVALID_ARGUMENT,
 * "aten::relu: argument 0 'self' expects Tensor, got NULL". The chain does
 * not cover optional tensor arguments (Tensor? in the schema: linear's bias,
 * a loss's weight), where NULL is None: a failed call's NULL passed there is
 * taken for None, so check such a result before passing it on. */
const char *tj_last_error(void);
/** Status of the calling thread's last error (TJ_OK when none); reads it as
 * tj_last_error() does. */
tj_status tj_last_status(void);
/** Forgets the calling thread's last error. */
void tj_clear_error(void);
/** Records an error for the calling thread (printf-style message) and returns
 * `status`, so that callers can write `return tj_error(TJ_ERR_SHAPE, ...)`.
 * A NULL `fmt` records an empty message. Used by the runtime, by
 * decompositions and by user-registered operators. */
tj_status tj_error(tj_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/** Name of a status code ("shape error", ...). */
const char *tj_status_name(tj_status status);

/** Sets the number of threads used by tjit's kernels and by OpenBLAS (one
 * setting, so that no call oversubscribes the cores). n < 1 is taken as 1. */
void tj_set_num_threads(int n);
/** Number of threads kernels use. */
int tj_get_num_threads(void);

/** Flushes denormal float32 and float64 numbers to zero on the calling
 * thread (on), or stops (off): x86's MXCSR FTZ (a denormal result becomes a
 * zero of its sign) and DAZ (a denormal operand is read as zero), as
 * torch.set_flush_denormal. Kernels that tjit splits over its threads run
 * with the calling thread's setting on every thread, so results do not
 * depend on the thread count; OpenBLAS's threads keep the bits they started
 * with, so a BLAS call (float64 products, a few float32 shapes) made with
 * other bits runs on the calling thread alone (kernels/blas_fp.h). Off by default, as in
 * PyTorch: with it on, results differ from IEEE arithmetic wherever a
 * denormal arises (by less than 2^-126 for float32), e.g. a softmax's
 * smallest probabilities. Why turn it on: an Intel CPU takes ~100 cycles for
 * an operation on or into a denormal; the gpt training step, whose softmax
 * and its gradient underflow into denormals, ran 3.6x slower for it on a
 * Xeon (bench/RESULTS.md, session 52). Returns true when set; false when the
 * CPU cannot (no DAZ: nothing changed). */
bool tj_set_flush_denormal(bool on);
/** Whether the calling thread flushes denormals (tj_set_flush_denormal, or
 * both MXCSR bits set by other means). */
bool tj_get_flush_denormal(void);

/** Allocator hook: the library takes all its tensor, graph and plan memory
 * through these two functions (aligned to 64 bytes). Pass NULL to restore
 * the default. Not thread-safe against concurrent allocation: set it before
 * any other call. */
typedef struct tj_allocator {
    void *(*alloc)(void *ctx, size_t nbytes);
    void (*free)(void *ctx, void *ptr, size_t nbytes);
    void *ctx;
} tj_allocator;
void tj_set_allocator(const tj_allocator *allocator);

/** Test hook (allocation-failure injection): makes the n-th allocation from
 * now fail (n >= 1); 0 disables. Returns the number of allocations performed
 * since the last call. */
uint64_t tj_debug_fail_allocation(uint64_t n);

/** Tensor storage is recycled through a caching allocator (size classes,
 * four per power of two), shared by all threads; each thread also keeps up to
 * 16 blocks of each size up to 4 KiB for itself (given back when it exits).
 * Frees every block of the shared cache and of the calling thread's back to
 * the allocator. */
void tj_storage_cache_release(void);
/** Caps the bytes kept in the shared cache (default 1 GiB); trims it when
 * above. 0 turns caching off, the threads' own blocks included. */
void tj_storage_cache_set_limit(size_t bytes);
/** Bytes currently in the shared cache. */
size_t tj_storage_cache_bytes(void);

#ifdef __cplusplus
}
#endif
#endif
