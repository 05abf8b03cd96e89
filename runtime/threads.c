/* One thread-count setting for tjit's parallel loops (kernels/parallel.h)
 * and OpenBLAS. */
#include <errno.h>
#include <limits.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"
#include "kernels/blas_fp.h"

/* read by every kernel call, set by any thread: atomic (relaxed: a kernel
 * needs some recent value, not an order with other memory) */
static atomic_int num_threads;

bool tj_parse_positive(const char *s, long long max, long long *out)
{
    if (*s < '0' || *s > '9') return false; /* strtoll would pass over a sign or a space */
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno || v < 1 || v > max) return false;
    *out = v;
    return true;
}

/* TJ_NUM_THREADS when it is a whole positive number up to INT_MAX, else
 * the CPU count, as libgomp ignores an invalid OMP_NUM_THREADS (atoi read
 * "4x" as 4, "abc" as 0 and overflowed on 99999999999). */
static int default_threads(void)
{
    const char *e = getenv("TJ_NUM_THREADS");
    long long n;
    return e && tj_parse_positive(e, INT_MAX, &n) ? (int)n : omp_get_num_procs();
}

void tj_set_num_threads(int n)
{
    if (n < 1) n = 1;
    atomic_store_explicit(&num_threads, n, memory_order_relaxed);
    tj_k_blas_set_threads(n);
}

int tj_get_num_threads(void)
{
    int n = atomic_load_explicit(&num_threads, memory_order_relaxed);
    if (!n) {
        n = default_threads();
        tj_set_num_threads(n);
    }
    return n;
}
