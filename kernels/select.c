/* Order statistics along one dim (see select.h). Each row is copied into a
 * thread's scratch (values, then positions); kthvalue runs ATen's
 * quick_select_template (Sedgewick 1978, median of three) on the copy,
 * median / nanmedian partition the positions as libstdc++'s
 * std::nth_element (introselect: median-of-three pivot into the first
 * slot, unguarded Hoare partition, insertion sort below four elements)
 * with ATen's comparators. Under median's total order any selection gives
 * the same answer; the port matters only for nanmedian of an all-nan row,
 * whose nans are all equivalent, and there every partition splits evenly,
 * so introselect's depth limit (a heap-select fallback) is never reached:
 * it is not ported, partitioning simply continues. */
#include "select.h"

#include <string.h>

#include "parallel.h"

typedef struct select_args {
    const tj_k_select *s;
    char *scratch;
    size_t per_thread;
} select_args;

size_t tj_k_select_scratch_bytes(const tj_k_select *s, int nthreads)
{
    return (size_t)nthreads * (size_t)s->n * (8 + 8);
}

#define SELECT_FNS(T, SUF)                                                                               \
    /* ATen's kthvalue comparator: x > y, nan above everything */                                     \
    static inline bool gt_or_nan_##SUF(T x, T y) { return (x != x && y == y) || x > y; }              \
    static inline void swap_##SUF(T *v, int64_t *ix, int64_t p, int64_t q)                            \
    {                                                                                                  \
        T tv = v[p];                                                                                   \
        int64_t ti = ix[p];                                                                            \
        v[p] = v[q], v[q] = tv, ix[p] = ix[q], ix[q] = ti;                                             \
    }                                                                                                  \
    static void quick_select_##SUF(T *v, int64_t *ix, int64_t n, int64_t k)                           \
    {                                                                                                  \
        int64_t L = 0, R = n - 1, i, j;                                                                \
        T piv;                                                                                         \
        for (;;) {                                                                                     \
            if (R <= L) return;                                                                        \
            if (R == L + 1) {                                                                          \
                if (gt_or_nan_##SUF(v[L], v[R])) swap_##SUF(v, ix, L, R);                                          \
                return;                                                                                \
            }                                                                                          \
            int64_t P = (L + R) >> 1;                                                                  \
            swap_##SUF(v, ix, P, L + 1);                                                                           \
            if (gt_or_nan_##SUF(v[L + 1], v[R])) swap_##SUF(v, ix, L + 1, R);                                      \
            if (gt_or_nan_##SUF(v[L], v[R])) swap_##SUF(v, ix, L, R);                                              \
            if (gt_or_nan_##SUF(v[L + 1], v[L])) swap_##SUF(v, ix, L + 1, L);                                      \
            i = L + 1, j = R, piv = v[L];                                                              \
            for (;;) {                                                                                 \
                do i++;                                                                                \
                while (gt_or_nan_##SUF(piv, v[i]));                                                    \
                do j--;                                                                                \
                while (gt_or_nan_##SUF(v[j], piv));                                                    \
                if (j < i) break;                                                                      \
                swap_##SUF(v, ix, i, j);                                                                           \
            }                                                                                          \
            swap_##SUF(v, ix, L, j);                                                                               \
            if (j <= k) L = i;                                                                         \
            if (j >= k) R = j - 1;                                                                     \
        }                                                                                              \
    }                                                                                                  \
    /* ATen's median comparators over positions a, b of row v */                                     \
    static inline bool less_##SUF(const T *v, bool nan_last, int64_t a, int64_t b)                    \
    {                                                                                                  \
        return v[a] < v[b] || (v[a] == v[b] && a < b) || (nan_last && v[b] != v[b] && v[a] == v[a]);  \
    }                                                                                                  \
    static void nth_element_##SUF(const T *v, bool nan_last, int64_t *first, int64_t *nth, int64_t *last) \
    {                                                                                                  \
        if (first == last || nth == last) return;                                                      \
        while (last - first > 3) {                                                                     \
            /* __move_median_to_first(first, first + 1, mid, last - 1) */                              \
            int64_t *a = first + 1, *b = first + (last - first) / 2, *c = last - 1, *m;                \
            if (less_##SUF(v, nan_last, *a, *b)) {                                                     \
                if (less_##SUF(v, nan_last, *b, *c)) m = b;                                            \
                else if (less_##SUF(v, nan_last, *a, *c)) m = c;                                       \
                else m = a;                                                                            \
            } else if (less_##SUF(v, nan_last, *a, *c)) m = a;                                         \
            else if (less_##SUF(v, nan_last, *b, *c)) m = c;                                           \
            else m = b;                                                                                \
            int64_t t = *first;                                                                        \
            *first = *m, *m = t;                                                                       \
            /* __unguarded_partition(first + 1, last, first) */                                        \
            int64_t *lo = first + 1, *hi = last;                                                       \
            for (;;) {                                                                                 \
                while (less_##SUF(v, nan_last, *lo, *first)) ++lo;                                     \
                --hi;                                                                                  \
                while (less_##SUF(v, nan_last, *first, *hi)) --hi;                                     \
                if (!(lo < hi)) break;                                                                 \
                t = *lo, *lo = *hi, *hi = t;                                                           \
                ++lo;                                                                                  \
            }                                                                                          \
            if (lo <= nth) first = lo;                                                                 \
            else last = lo;                                                                            \
        }                                                                                              \
        /* __insertion_sort(first, last) */                                                            \
        for (int64_t *i = first + 1; i < last; ++i) {                                                  \
            int64_t val = *i;                                                                          \
            if (less_##SUF(v, nan_last, val, *first)) {                                                \
                memmove(first + 1, first, (size_t)(i - first) * sizeof *first);                        \
                *first = val;                                                                          \
            } else {                                                                                   \
                int64_t *p = i;                                                                        \
                while (less_##SUF(v, nan_last, val, p[-1])) *p = p[-1], --p;                           \
                *p = val;                                                                              \
            }                                                                                          \
        }                                                                                              \
    }                                                                                                  \
    static void rows_##SUF(void *ctx, int t, int64_t begin, int64_t end)                              \
    {                                                                                                  \
        const select_args *a = ctx;                                                                    \
        const tj_k_select *s = a->s;                                                                   \
        int64_t n = s->n;                                                                              \
        T *v = (T *)(a->scratch + (size_t)t * a->per_thread);                                          \
        int64_t *ix = (int64_t *)(a->scratch + (size_t)t * a->per_thread + (size_t)n * 8);             \
        for (int64_t r = begin; r < end; r++) {                                                        \
            int64_t o = r / s->inner, c = r % s->inner;                                                \
            const T *x = (const T *)s->in + o * n * s->inner + c;                                      \
            for (int64_t i = 0; i < n; i++) v[i] = x[i * s->inner], ix[i] = i;                         \
            int64_t pos;                                                                               \
            if (s->kind == TJ_K_SELECT_KTH) {                                                          \
                quick_select_##SUF(v, ix, n, s->k - 1);                                                \
                ((T *)s->values)[r] = v[s->k - 1];                                                     \
                s->indices[r] = ix[s->k - 1];                                                          \
                continue;                                                                              \
            }                                                                                          \
            int64_t nans = 0, first_nan = -1;                                                          \
            for (int64_t i = 0; i < n; i++)                                                            \
                if (v[i] != v[i]) nans++, first_nan = first_nan < 0 ? i : first_nan;                   \
            bool nan_last = s->kind == TJ_K_SELECT_NANMEDIAN;                                          \
            if (!nan_last && nans) {                                                                   \
                pos = first_nan;                                                                       \
            } else {                                                                                   \
                /* C++'s (size - num_nan - 1) / 2 truncates -1 / 2 to 0 */                             \
                int64_t mid = (n - (nan_last ? nans : 0) - 1) / 2;                                     \
                nth_element_##SUF(v, nan_last, ix, ix + mid, ix + n);                                  \
                pos = ix[mid];                                                                         \
            }                                                                                          \
            ((T *)s->values)[r] = v[pos];                                                              \
            s->indices[r] = pos;                                                                       \
        }                                                                                              \
    }
SELECT_FNS(float, f32)
SELECT_FNS(double, f64)
SELECT_FNS(int64_t, i64)
#undef SELECT_FNS

void tj_k_select_run(const tj_k_select *s, void *scratch, int nthreads)
{
    int64_t rows = s->outer * s->inner;
    if (rows == 0 || s->n == 0) return;
    if (rows < nthreads) nthreads = (int)rows;
    select_args a = {s, scratch, (size_t)s->n * 16};
    tj_k_block_fn fn = s->dtype == TJ_FLOAT32 ? rows_f32 : s->dtype == TJ_FLOAT64 ? rows_f64 : rows_i64;
    tj_k_parallel(nthreads, rows, fn, &a);
}
