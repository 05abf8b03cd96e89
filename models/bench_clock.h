/* Clocks and counters for timing, shared by models/bench_measure.c (`tjit
 * bench`) and the bench/ programs; header-only, so that a benchmark program
 * needs no library for them. */
#ifndef TJIT_MODELS_BENCH_CLOCK_H
#define TJIT_MODELS_BENCH_CLOCK_H

#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

/** The clock `id` in ns: CLOCK_MONOTONIC for wall time,
 *  CLOCK_THREAD_CPUTIME_ID for the calling thread's CPU time (time spent
 *  descheduled does not count). */
static inline double bench_clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/** Minor page faults of the process so far (getrusage). */
static inline long bench_minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/** qsort comparison of doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/** The median of v[0..n) (n >= 1; the mean of the middle two for even n),
 *  sorting v. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
