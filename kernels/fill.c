/* Constant and progression fills (see fill.h). */
#include <string.h>

#include "fill.h"

#define BLOCK 65536 /* elements per work item */

#define FOR_BLOCKS(n, nthreads, BODY)                                                   \
    do {                                                                                \
        int64_t nb_ = ((n) + BLOCK - 1) / BLOCK;                                        \
        int nt_ = (nthreads) < 1 ? 1 : (nthreads);                                      \
        _Pragma("omp parallel for if (nt_ > 1) num_threads(nt_) schedule(static)")      \
        for (int64_t b_ = 0; b_ < nb_; b_++) {                                          \
            int64_t s = b_ * BLOCK, e = s + BLOCK < (n) ? s + BLOCK : (n);              \
            BODY;                                                                       \
        }                                                                               \
    } while (0)

void tj_k_fill(void *out, size_t elem_size, const void *value, int64_t n, int nthreads)
{
    switch (elem_size) {
    case 1: {
        uint8_t v = *(const uint8_t *)value;
        FOR_BLOCKS(n, nthreads, memset((uint8_t *)out + s, v, (size_t)(e - s)));
        break;
    }
    case 4: {
        uint32_t v, *o = out;
        memcpy(&v, value, 4);
        FOR_BLOCKS(n, nthreads, for (int64_t i = s; i < e; i++) o[i] = v);
        break;
    }
    case 8: {
        uint64_t v, *o = out;
        memcpy(&v, value, 8);
        FOR_BLOCKS(n, nthreads, for (int64_t i = s; i < e; i++) o[i] = v);
        break;
    }
    }
}

void tj_k_arange_f(void *out, tj_dtype dtype, double start, double step, int64_t n, int nthreads)
{
    if (dtype == TJ_FLOAT32) {
        float *o = out;
        FOR_BLOCKS(n, nthreads, for (int64_t i = s; i < e; i++) o[i] = (float)(start + step * (double)i));
    } else {
        double *o = out;
        FOR_BLOCKS(n, nthreads, for (int64_t i = s; i < e; i++) o[i] = start + step * (double)i);
    }
}

void tj_k_arange_i64(int64_t *out, int64_t start, int64_t step, int64_t n, int nthreads)
{
    FOR_BLOCKS(n, nthreads, for (int64_t i = s; i < e; i++) out[i] = (int64_t)((uint64_t)start + (uint64_t)step * (uint64_t)i));
}
