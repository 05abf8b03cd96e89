/* See blas_fp.h. */
#include <cblas.h>
#include <pthread.h>

#include "blas_fp.h"
#include "fp_control.h"

/* OpenBLAS's constructor starts its threads before this library's runs */
static unsigned blas_threads_control;
__attribute__((constructor)) static void note_blas_threads_control(void)
{
    blas_threads_control = tj_k_fp_control();
}

/* held from a serial call's begin to its end: two such calls would
 * otherwise restore each other's thread counts out of order */
static pthread_mutex_t serial_lock = PTHREAD_MUTEX_INITIALIZER;

int tj_k_blas_fp_begin(void)
{
    if (tj_k_fp_control() == blas_threads_control) return 0;
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
    unsigned caller = tj_k_fp_control();
    tj_k_fp_control_set(blas_threads_control);
    openblas_set_num_threads(n);
    tj_k_fp_control_set(caller);
}
