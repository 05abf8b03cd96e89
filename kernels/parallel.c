/* The team path of tj_k_parallel (see parallel.h). */
#include "parallel.h"

void tj_k_parallel_team(int nt, int64_t n, tj_k_block_fn fn, void *ctx)
{
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; t++) {
        int64_t q = n / nt, r = n % nt;
        int64_t begin = t * q + (t < r ? t : r);
        fn(ctx, t, begin, begin + q + (t < r));
    }
}
