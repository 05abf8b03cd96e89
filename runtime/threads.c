/* One thread-count setting for tjit's parallel loops (kernels/parallel.h)
 * and OpenBLAS. */
#include <cblas.h>
#include <omp.h>
#include <stdlib.h>

#include "internal.h"

static int num_threads;

static int default_threads(void)
{
    const char *e = getenv("TJ_NUM_THREADS");
    int n = e ? atoi(e) : 0;
    return n > 0 ? n : omp_get_num_procs();
}

void tj_set_num_threads(int n)
{
    if (n < 1) n = 1;
    num_threads = n;
    openblas_set_num_threads(n);
}

int tj_get_num_threads(void)
{
    if (!num_threads) tj_set_num_threads(default_threads());
    return num_threads;
}
