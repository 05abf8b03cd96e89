/* Vectorised loops of the reduction driver (reduce.c), per instruction set. */
#ifndef TJIT_KERNELS_REDUCE_ISA_H
#define TJIT_KERNELS_REDUCE_ISA_H

#include <stdint.h>

/** o[j] += (double)x[k*rs + j] for rows k = 0..nrows-1 in order, j < m
 * (AVX-512; o holds m doubles). */
void tj_k_sum_f32_rows_avx512(const float *x, int64_t nrows, int64_t rs, int64_t m, double *o);
/** The float32 sum's fold (reduce.c) of each run of n contiguous floats at
 * x + off[r] bytes, r < nruns: out[r] = its eight double lanes combined, bit
 * for bit as the generic loop (AVX-512). */
void tj_k_sum_f32_runs_avx512(const char *x, const int64_t *off, int64_t nruns, int64_t n, double *out);
/** tj_k_sum_f32_runs_avx512 with products: the float32 product's fold
 * (reduce.c) of each run, bit for bit (AVX-512). */
void tj_k_prod_f32_runs_avx512(const char *x, const int64_t *off, int64_t nruns, int64_t n, double *out);
/** tj_k_sum_f32_runs_avx512 on float64 runs: the float64 sum's fold, bit
 * for bit (AVX-512; the sums of decomposed layer_norm). */
void tj_k_sum_f64_runs_avx512(const char *x, const int64_t *off, int64_t nruns, int64_t n, double *out);
/** The float32 max / min scans of the n contiguous floats at x (reduce.c):
 * nan if any, else the extreme, resolving signed zero ties as the generic
 * scan (AVX-512). */
float tj_k_max_f32_scan_avx512(const float *x, int64_t n);
float tj_k_min_f32_scan_avx512(const float *x, int64_t n);
/** tj_k_max_f32_scan_avx512 / tj_k_min_f32_scan_avx512 on AVX2: the same
 * results bit for bit. */
float tj_k_max_f32_scan_avx2(const float *x, int64_t n);
float tj_k_min_f32_scan_avx2(const float *x, int64_t n);
/** The scans of each run of n contiguous floats at x + off[r] bytes, r <
 * nruns, into out[r]: the rows of a fused row step's amax / amin in one
 * call, not three per row (fold, scan, lanes) (AVX-512, AVX2). */
void tj_k_max_f32_scans_avx512(const char *x, const int64_t *off, int64_t nruns, int64_t n, float *out);
void tj_k_min_f32_scans_avx512(const char *x, const int64_t *off, int64_t nruns, int64_t n, float *out);
void tj_k_max_f32_scans_avx2(const char *x, const int64_t *off, int64_t nruns, int64_t n, float *out);
void tj_k_min_f32_scans_avx2(const char *x, const int64_t *off, int64_t nruns, int64_t n, float *out);
/** The float64 max / min scans (reduce.c) on AVX-512, as the float32 ones:
 * of the n contiguous doubles at x, and of each run at x + off[r] bytes
 * into out[r] (a fused log_softmax's amax in float64). */
double tj_k_max_f64_scan_avx512(const double *x, int64_t n);
double tj_k_min_f64_scan_avx512(const double *x, int64_t n);
void tj_k_max_f64_scans_avx512(const char *x, const int64_t *off, int64_t nruns, int64_t n, double *out);
void tj_k_min_f64_scans_avx512(const char *x, const int64_t *off, int64_t nruns, int64_t n, double *out);

#endif
