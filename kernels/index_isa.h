/* Vectorised loops of the index kernels (index.c), per instruction set. */
#ifndef TJIT_KERNELS_INDEX_ISA_H
#define TJIT_KERNELS_INDEX_ISA_H

#include <stdbool.h>
#include <stdint.h>

/** Position of the first of idx[0..n) outside [0, size) (negative values
 * included), or -1 (AVX-512). */
int64_t tj_k_index_first_invalid_avx512(const int64_t *idx, int64_t n, int64_t size);

/** One row of gather with a contiguous index (tj_k_gather's loop on
 * AVX-512; elements of 8 or 4 bytes): out[j] = src[idx[j] * ds + j * ss]
 * for j in [0, n), reading src only at index values in [0, size). Returns
 * false at the first vector holding a value outside it (negative ones
 * included), out then partly written. (AVX2's gathers ran 4% slower than
 * the scalar loop on [1024, 1, 196] int64 from an expanded [8, 196]: no
 * AVX2 version.) */
bool tj_k_gather_run64_avx512(uint64_t *out, const uint64_t *src, const int64_t *idx, int64_t n, int64_t ds,
                              int64_t ss, int64_t size);
bool tj_k_gather_run32_avx512(uint32_t *out, const uint32_t *src, const int64_t *idx, int64_t n, int64_t ds,
                              int64_t ss, int64_t size);

/** Rows tj_k_scatter_add_runs_f32_avx512 (and _avx2) take at most: two streams of src
 * read side by side keep more loads from memory in flight than one
 * (col2im of a decomposed convolution's input gradient: ~15% faster). */
#define TJ_K_SCATTER_ADD_ROWS_AT_ONCE 2

/** Adds src[q] into o[q] run by run for each of `nrows` rows (1 to
 * TJ_K_SCATTER_ADD_ROWS_AT_ONCE; float32; AVX-512 or AVX2, scatter_runs_isa.h):
 * runs[k] encodes a run of len = (runs[k] & 15) + 1 consecutive targets
 * from o[q][runs[k] >> 4]; the runs take src[q]'s elements in order, one
 * vector per run (AVX2: one or two), touching no element outside the runs.
 * The targets of a run are distinct and the rows disjoint, so every element
 * of o sees the same additions in the same order as in the
 * element-by-element loop. */
void tj_k_scatter_add_runs_f32_avx512(float *const *o, const float *const *src, int nrows, const int64_t *runs,
                                      int64_t nruns);
void tj_k_scatter_add_runs_f32_avx2(float *const *o, const float *const *src, int nrows, const int64_t *runs,
                                    int64_t nruns);

#endif
