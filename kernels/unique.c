/* Grouping of equal rows (see unique.h). */
#include <string.h>

#include "unique.h"

/* Row comparison in PyTorch's sort order (nan above everything, nan == nan
 * for the order, -0 == +0) and the grouping equality (==, nan never
 * equal), one pair per dtype. */
#define FLOAT_LESS(a, b) ((a) < (b) || ((b) != (b) && (a) == (a)))
#define PLAIN_LESS(a, b) ((a) < (b))

#define ROW_FUNCS(T, SUF, LESS)                                                    \
    static int cmp_##SUF(const T *a, const T *b, int64_t k)                       \
    {                                                                             \
        for (int64_t j = 0; j < k; j++) {                                         \
            if (LESS(a[j], b[j])) return -1;                                      \
            if (LESS(b[j], a[j])) return 1;                                       \
        }                                                                         \
        return 0;                                                                 \
    }                                                                             \
    static bool eq_##SUF(const T *a, const T *b, int64_t k)                       \
    {                                                                             \
        for (int64_t j = 0; j < k; j++)                                           \
            if (!(a[j] == b[j])) return false;                                    \
        return true;                                                              \
    }                                                                             \
    /* stable merge sort of idx[0..n) by row, tmp as large: returns the one   \
     * of the two buffers that holds the result */                            \
    static const int64_t *sort_##SUF(const T *rows, int64_t k, int64_t *idx, int64_t *tmp, int64_t n) \
    {                                                                             \
        for (int64_t w = 1; w < n; w *= 2) {                                      \
            for (int64_t lo = 0; lo < n; lo += 2 * w) {                           \
                int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n; \
                int64_t i = lo, j = mid, o = lo;                                  \
                if (mid == hi || cmp_##SUF(rows + idx[mid - 1] * k, rows + idx[mid] * k, k) <= 0) { \
                    memcpy(tmp + lo, idx + lo, sizeof(int64_t) * (size_t)(hi - lo)); \
                    continue;                                                     \
                }                                                                 \
                while (i < mid && j < hi)                                         \
                    tmp[o++] = cmp_##SUF(rows + idx[j] * k, rows + idx[i] * k, k) < 0 ? idx[j++] : idx[i++]; \
                while (i < mid) tmp[o++] = idx[i++];                              \
                while (j < hi) tmp[o++] = idx[j++];                               \
            }                                                                     \
            int64_t *t = idx;                                                     \
            idx = tmp;                                                            \
            tmp = t;                                                              \
        }                                                                         \
        return idx;                                                               \
    }                                                                             \
    static int64_t group_##SUF(const T *rows, int64_t n, int64_t k, bool sorted, int64_t *group, int64_t *first, \
                               int64_t *order, int64_t *scratch)                  \
    {                                                                             \
        for (int64_t i = 0; i < n; i++) order[i] = i;                             \
        const int64_t *o = order;                                                 \
        if (sorted) o = sort_##SUF(rows, k, order, scratch, n);                  \
        int64_t m = 0;                                                            \
        for (int64_t i = 0; i < n; i++) {                                         \
            int64_t r = o[i];                                                     \
            if (i == 0 || !eq_##SUF(rows + o[i - 1] * k, rows + r * k, k)) first[m++] = r; \
            group[r] = m - 1;                                                     \
        }                                                                         \
        return m;                                                                 \
    }

ROW_FUNCS(float, f32, FLOAT_LESS)
ROW_FUNCS(double, f64, FLOAT_LESS)
ROW_FUNCS(int64_t, i64, PLAIN_LESS)
ROW_FUNCS(uint8_t, u8, PLAIN_LESS)

int64_t tj_k_unique_rows(tj_dtype dtype, const void *rows, int64_t n, int64_t k, bool sorted, int64_t *group,
                         int64_t *first, int64_t *order, int64_t *scratch)
{
    switch (dtype) {
    case TJ_FLOAT32: return group_f32(rows, n, k, sorted, group, first, order, scratch);
    case TJ_FLOAT64: return group_f64(rows, n, k, sorted, group, first, order, scratch);
    case TJ_INT64: return group_i64(rows, n, k, sorted, group, first, order, scratch);
    case TJ_BOOL: return group_u8(rows, n, k, sorted, group, first, order, scratch);
    default: return 0; /* storage dtypes: the dispatcher keeps them from compute kernels */
    }
}
