/* The MXCSR bits that set how float arithmetic rounds and treats denormals
 * (flush to zero, denormals are zero, rounding, exception masks), without
 * the sticky exception flags: what tj_set_flush_denormal sets, what the
 * thread pool hands to its workers (parallel.c) and what BLAS calls are
 * checked against (blas_fp.c). */
#ifndef TJIT_KERNELS_FP_CONTROL_H
#define TJIT_KERNELS_FP_CONTROL_H

#include <immintrin.h>

#define TJ_K_FP_CONTROL 0xffc0u
#define TJ_K_FP_DAZ 0x0040u /* denormals are zero: denormal operands read as 0 */
#define TJ_K_FP_FTZ 0x8000u /* flush to zero: denormal results become 0 */

/** The calling thread's control bits. */
static inline unsigned tj_k_fp_control(void) { return _mm_getcsr() & TJ_K_FP_CONTROL; }

/** Makes `control` the calling thread's control bits (a read of MXCSR when
 * they already are). */
static inline void tj_k_fp_control_set(unsigned control)
{
    unsigned csr = _mm_getcsr();
    if ((csr & TJ_K_FP_CONTROL) != control) _mm_setcsr((csr & ~TJ_K_FP_CONTROL) | control);
}

#endif
