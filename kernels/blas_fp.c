/* See blas_fp.h. */
#include <cblas.h>
#include <immintrin.h>
#include <pthread.h>

#include "blas_fp.h"

#define FP_CONTROL 0xffc0u /* as parallel.c: MXCSR without the sticky exception flags */

/* OpenBLAS's constructor starts its threads before this library's runs */
static unsigned blas_threads_control;
__attribute__((constructor)) static void note_blas_threads_control(void)
{
    blas_threads_control = _mm_getcsr() & FP_CONTROL;
}

/* held from a serial call's begin to its end: two such calls would
 * otherwise restore each other's thread counts out of order */
static pthread_mutex_t serial_lock = PTHREAD_MUTEX_INITIALIZER;

int tj_k_blas_fp_begin(void)
{
    if ((_mm_getcsr() & FP_CONTROL) == blas_threads_control) return 0;
    pthread_mutex_lock(&serial_lock);
    int saved = openblas_get_num_threads();
    openblas_set_num_threads(1);
    return saved;
}

void tj_k_blas_fp_end(int saved)
{
    if (!saved) return;
    tj_k_blas_set_threads(saved);
    pthread_mutex_unlock(&serial_lock);
}

void tj_k_blas_set_threads(int n)
{
    unsigned csr = _mm_getcsr();
    _mm_setcsr((csr & ~FP_CONTROL) | blas_threads_control);
    openblas_set_num_threads(n);
    _mm_setcsr(csr);
}
