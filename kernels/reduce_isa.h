/* Vectorised loops of the reduction driver (reduce.c), per instruction set. */
#ifndef TJIT_KERNELS_REDUCE_ISA_H
#define TJIT_KERNELS_REDUCE_ISA_H

#include <stdint.h>

/** o[j] += (double)x[k*rs + j] for rows k = 0..nrows-1 in order, j < m
 * (AVX-512; o holds m doubles). */
void tj_k_sum_f32_rows_avx512(const float *x, int64_t nrows, int64_t rs, int64_t m, double *o);

#endif
