/* Data movement on raw strided buffers: dtype conversion and the strided
 * copy behind clone, _to_copy, contiguous and cat. Kernels know no tensor,
 * only pointers, shapes and strides (in elements). */
#ifndef TJIT_KERNELS_COPY_H
#define TJIT_KERNELS_COPY_H

#include <stdint.h>

#include "dtype_convert.h"
#include "tjit/core.h"

/** Converts n contiguous elements of dtype `sd` at src into dtype `dd` at dst
 * (same dtype: memcpy). Follows PyTorch on x86: float -> int64 truncates toward
 * zero, and NaN, +-inf or a value outside int64's range gives INT64_MIN;
 * anything -> bool is x != 0 (NaN is true); float64 -> float32 rounds to
 * nearest (overflow gives +-inf); int64 -> float rounds to nearest. */
void tj_k_convert(void *dst, tj_dtype dd, const void *src, tj_dtype sd, int64_t n);


/** A strided array: base pointer (element [0, ..., 0]), dtype and strides in
 * elements, one per dim of the shape the copy iterates. */
typedef struct tj_k_strided {
    void *data;
    tj_dtype dtype;
    const int64_t *strides;
} tj_k_strided;

/** Copies every element of the `ndim`-dim array of `shape` from src to dst,
 * converting src's dtype to dst's. Any strides on either side (src may
 * broadcast with stride 0; dst must not overlap itself or src). Dims are
 * merged where both sides allow; then each run along the last dim is one
 * typed loop chosen once per copy (memcpy for long contiguous runs, a
 * gather for a strided source, float32 <-> float64 converted in the same
 * pass); short contiguous runs of one dtype (under 256 bytes) go a block
 * at a time through tj_k_copy_runs_* (staged and written with streaming
 * stores when the destination is 8 MiB or more), 4-byte runs gathered with
 * a small stride through tj_k_gather_runs32_*; a copy whose outer dims
 * re-read the same source lines (pooling windows) walks its source in
 * cache-sized blocks; a value broadcast everywhere is a fill, and a
 * transposed source is copied in cache-sized tiles. Uses up to `nthreads` threads.
 * ndim 0 copies one element; a zero size copies nothing. */
void tj_k_copy_strided(tj_k_strided dst, tj_k_strided src, int ndim, const int64_t *shape, int nthreads);

/** d[r*drow + c] = s[r + c*scol] for r < rows, c < cols (float32, rows of
 * d from columns of s; copy_avx512.c): the tiles of tj_k_copy_strided's
 * transposed copies on AVX-512 machines. */
void tj_k_transpose_tile_f32_avx512(float *d, int64_t drow, const float *s, int64_t scol, int64_t rows,
                                    int64_t cols);

/** Copies `count` runs of `nbytes` bytes, run j from s + j*sstep to
 * d + j*dstep (steps in bytes; runs do not overlap each other or the
 * source): the short contiguous runs (under 256 bytes) of
 * tj_k_copy_strided, such as im2col's rows of 14-28 floats, as 16-byte
 * moves, the last one ending at the run's end (overlapping the one before),
 * no per-element loop. */
void tj_k_copy_runs_generic(char *d, int64_t dstep, const char *s, int64_t sstep, int64_t count, int64_t nbytes);

/** tj_k_copy_runs_generic with 64-, 32- or 16-byte vector moves
 * (copy_avx512.c), for AVX-512 machines. */
void tj_k_copy_runs_avx512(char *d, int64_t dstep, const char *s, int64_t sstep, int64_t count, int64_t nbytes);

/** Largest source stride (in elements) tj_k_gather_runs32_* take. */
#define TJ_K_GATHER_MAX_STRIDE 16

/** Copies `count` runs of `len` 4-byte elements, element i of run j from
 * s[j*sstep + i*ss] to d[j*dstep + i] (steps and ss in elements, 2 <= ss
 * <= TJ_K_GATHER_MAX_STRIDE; runs do not overlap each other or the
 * source), bits unchanged: the strided float32 / int32-sized runs of
 * tj_k_copy_strided into a contiguous destination, such as pooling's
 * windows (ss 2), a block of runs per call. Reads no element outside the
 * runs. */
void tj_k_gather_runs32_generic(uint32_t *d, int64_t dstep, const uint32_t *s, int64_t sstep, int64_t count,
                                int64_t len, int64_t ss);

/** tj_k_gather_runs32_generic on AVX-512 machines (copy_avx512.c): ss 2 as
 * two loads merged by one two-source permute per 16 elements, larger ss as
 * one masked gather per 16 elements. */
void tj_k_gather_runs32_avx512(uint32_t *d, int64_t dstep, const uint32_t *s, int64_t sstep, int64_t count,
                               int64_t len, int64_t ss);

/** d[i] = tj_k_float_to_i64(s[i]) for i < n, bits unchanged: tj_k_convert's
 * float32 / float64 -> int64 on AVX-512 machines (copy_avx512.c: the
 * truncating conversions, whose result for NaN and out-of-range values is
 * INT64_MIN), such as max-pool's argmax turned into gather indices. */
void tj_k_f32_to_i64_avx512(int64_t *d, const float *s, int64_t n);
void tj_k_f64_to_i64_avx512(int64_t *d, const double *s, int64_t n);

/** d[i] = (double)s[i], d[i] = (float)s[i] for i < n: tj_k_convert's
 * float32 <-> float64 on AVX-512 machines (copy_avx512.c), the bits of the
 * scalar conversions (exact one way, rounded under the current rounding
 * mode the other), eight to sixteen elements per step instead of two: the
 * float64 steps of decomposed layer_norm and softmax convert every
 * element in and out. */
void tj_k_f32_to_f64_avx512(double *d, const float *s, int64_t n);
void tj_k_f64_to_f32_avx512(float *d, const double *s, int64_t n);
/** The same on AVX2 machines (copy_avx2.c), eight elements per step. */
void tj_k_f32_to_f64_avx2(double *d, const float *s, int64_t n);
void tj_k_f64_to_f32_avx2(float *d, const double *s, int64_t n);
/** tj_k_convert's float16 / bfloat16 <-> float32 (s and d as raw bits on
 * the half side), bit for bit dtype_convert.h's scalar conversions: the
 * conversions every float16 / bfloat16 operator makes in and out
 * (runtime/widen.c), 0.1 to 0.3 ns per element instead of 1 to 5. */
void tj_k_f16_to_f32_avx512(float *d, const uint16_t *s, int64_t n);
void tj_k_f32_to_f16_avx512(uint16_t *d, const float *s, int64_t n);
void tj_k_bf16_to_f32_avx512(float *d, const uint16_t *s, int64_t n);
void tj_k_f32_to_bf16_avx512(uint16_t *d, const float *s, int64_t n);
void tj_k_f16_to_f32_avx2(float *d, const uint16_t *s, int64_t n);
void tj_k_f32_to_f16_avx2(uint16_t *d, const float *s, int64_t n);
void tj_k_bf16_to_f32_avx2(float *d, const uint16_t *s, int64_t n);
void tj_k_f32_to_bf16_avx2(uint16_t *d, const float *s, int64_t n);

#endif
