/* OpenBLAS calls under the caller's floating-point control bits. */
#ifndef TJIT_KERNELS_BLAS_FP_H
#define TJIT_KERNELS_BLAS_FP_H

/** Before a BLAS call: OpenBLAS's threads keep the MXCSR control bits they
 * started with (the process's when the library was loaded), so a call made
 * with other bits (tj_set_flush_denormal, a rounding mode) runs on the
 * calling thread alone, its result then the same for every thread count
 * (OpenBLAS splits the output, not the sums). Returns what
 * tj_k_blas_fp_end takes, to be called right after the BLAS call. */
int tj_k_blas_fp_begin(void);
void tj_k_blas_fp_end(int saved);

/** openblas_set_num_threads(n), any threads it starts given the control
 * bits its first ones have: they inherit the calling thread's, which may
 * flush denormals (results would then depend on the thread count). */
void tj_k_blas_set_threads(int n);

#endif
