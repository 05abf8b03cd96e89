/* Vectorised loops of scatter_add (index.c), per instruction set. */
#ifndef TJIT_KERNELS_INDEX_ISA_H
#define TJIT_KERNELS_INDEX_ISA_H

#include <stdint.h>

/** Adds src into o run by run (float32, AVX-512): runs[k] encodes a run of
 * len = (runs[k] & 15) + 1 consecutive targets from o[runs[k] >> 4]; the
 * runs take src's elements in order, one vector per run. The targets of a
 * run are distinct, so every element of o sees the same additions in the
 * same order as in the element-by-element loop. */
void tj_k_scatter_add_runs_f32_avx512(float *o, const float *src, const int64_t *runs, int64_t nruns);

#endif
