/* searchsorted's binary searches (see searchsorted.h). */
#include "searchsorted.h"

#include "parallel.h"

/* ATen's cus_lower_bound / cus_upper_bound: the negated comparisons move
 * past a nan (in the boundaries or the value) as past a smaller element. */
#define SEARCH_FN(T, SUF)                                                                              \
    static void search_##SUF(void *ctx, int t, int64_t begin, int64_t end)                           \
    {                                                                                                \
        const tj_k_searchsorted *s = ctx;                                                            \
        const T *v = s->values, *bd = s->boundaries;                                                 \
        (void)t;                                                                                     \
        for (int64_t i = begin; i < end; i++) {                                                      \
            int64_t r = s->shared || s->row == 0 ? 0 : i / s->row;                                   \
            const T *b = bd + r * s->m;                                                              \
            const int64_t *order = s->sorter ? s->sorter + r * s->m : NULL;                          \
            T x = v[i];                                                                              \
            int64_t lo = 0, hi = s->m;                                                               \
            while (lo < hi) {                                                                        \
                int64_t mid = lo + ((hi - lo) >> 1);                                                 \
                T at = order ? b[order[mid]] : b[mid];                                               \
                bool past = s->right ? !(at > x) : !(at >= x);                                       \
                if (past) lo = mid + 1;                                                              \
                else hi = mid;                                                                       \
            }                                                                                        \
            s->out[i] = lo;                                                                          \
        }                                                                                            \
    }
SEARCH_FN(float, f32)
SEARCH_FN(double, f64)
SEARCH_FN(int64_t, i64)
#undef SEARCH_FN

void tj_k_searchsorted_run(const tj_k_searchsorted *s, int nthreads)
{
    if (s->numel == 0) return;
    if (s->numel < nthreads) nthreads = (int)s->numel;
    tj_k_block_fn fn = s->dtype == TJ_FLOAT32 ? search_f32 : s->dtype == TJ_FLOAT64 ? search_f64 : search_i64;
    tj_k_parallel(nthreads, s->numel, fn, (void *)s);
}
