/* Stable sort along one dim (see sort.h). Each row's values become unsigned
 * keys whose integer order is PyTorch's order (nan highest, -0 as +0,
 * descending as the complement), sorted with their positions by a
 * least-significant-digit radix sort of 8-bit digits: stable, O(n) per pass,
 * and digits every key shares (the high bytes of float32 keys, of small
 * integers) are skipped. Short rows take an insertion sort instead. */
#include <string.h>

#include "parallel.h"
#include "sort.h"

typedef struct sort_item {
    uint64_t key;
    int64_t pos;
} sort_item;

/* Below this many elements an insertion sort beats the radix passes. */
enum { INSERTION_MAX = 32 };

static size_t esize_of(tj_dtype dt) { return dt == TJ_FLOAT32 ? 4 : dt == TJ_BOOL ? 1 : 8; }

/* Order-preserving keys: for floats, flip every bit of negatives and the sign
 * bit of the rest (so that the bit patterns compare as integers). */
static uint64_t key_of(tj_dtype dt, const char *p)
{
    switch (dt) {
    case TJ_FLOAT32: {
        float v;
        uint32_t b;
        memcpy(&v, p, 4);
        if (v != v) return UINT32_MAX;
        if (v == 0) v = 0; /* -0 sorts as +0 */
        memcpy(&b, &v, 4);
        return (b & 0x80000000u) ? (uint32_t)~b : (b | 0x80000000u);
    }
    case TJ_FLOAT64: {
        double v;
        uint64_t b;
        memcpy(&v, p, 8);
        if (v != v) return UINT64_MAX;
        if (v == 0) v = 0;
        memcpy(&b, &v, 8);
        return (b >> 63) ? ~b : (b | (UINT64_C(1) << 63));
    }
    case TJ_INT64: {
        int64_t v;
        memcpy(&v, p, 8);
        return (uint64_t)v ^ (UINT64_C(1) << 63);
    }
    default:
        return (uint64_t)(*(const unsigned char *)p != 0);
    }
}

/* The largest key of a dtype: descending order sorts its complement. */
static uint64_t key_max(tj_dtype dt) { return dt == TJ_FLOAT32 ? UINT32_MAX : dt == TJ_BOOL ? 1 : UINT64_MAX; }

static void insertion_sort(sort_item *a, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        sort_item x = a[i];
        int64_t j = i;
        for (; j > 0 && a[j - 1].key > x.key; j--) a[j] = a[j - 1];
        a[j] = x;
    }
}

/* Sorts a[0, n) by key, stably; tmp has room for n items. Returns the array
 * (a or tmp) holding the result. */
static sort_item *radix_sort(sort_item *a, sort_item *tmp, int64_t n)
{
    if (n <= INSERTION_MAX) {
        insertion_sort(a, n);
        return a;
    }
    int64_t count[8][256];
    memset(count, 0, sizeof count);
    for (int64_t i = 0; i < n; i++)
        for (int d = 0; d < 8; d++) count[d][(a[i].key >> (8 * d)) & 255]++;
    for (int d = 0; d < 8; d++) {
        if (count[d][(a[0].key >> (8 * d)) & 255] == n) continue; /* every key has this digit */
        int64_t start = 0;
        for (int b = 0; b < 256; b++) {
            int64_t c = count[d][b];
            count[d][b] = start;
            start += c;
        }
        for (int64_t i = 0; i < n; i++) tmp[count[d][(a[i].key >> (8 * d)) & 255]++] = a[i];
        sort_item *t = a;
        a = tmp;
        tmp = t;
    }
    return a;
}

typedef struct sort_ctx {
    const tj_k_sort *s;
    int64_t n, inner; /* row length; elements after the sorted dim */
    sort_item *scratch;
} sort_ctx;

/* Offset in x of row r: r = outer * inner + inner position, decomposed over
 * the dims other than s->dim. */
static int64_t row_offset(const tj_k_sort *s, int64_t r)
{
    int64_t off = 0;
    for (int d = s->ndim - 1; d >= 0; d--) {
        if (d == s->dim) continue;
        off += (r % s->shape[d]) * s->x_strides[d];
        r /= s->shape[d];
    }
    return off;
}

static void sort_rows(void *vctx, int t, int64_t begin, int64_t end)
{
    const sort_ctx *c = vctx;
    const tj_k_sort *s = c->s;
    int64_t n = c->n, inner = c->inner, k = s->k, xs = s->x_strides[s->dim];
    size_t es = esize_of(s->dtype);
    uint64_t flip = s->descending ? key_max(s->dtype) : 0;
    sort_item *a = c->scratch + (size_t)t * 2 * (size_t)n, *tmp = a + n;
    for (int64_t r = begin; r < end; r++) {
        const char *x = (const char *)s->x + row_offset(s, r) * (int64_t)es;
        for (int64_t i = 0; i < n; i++) a[i] = (sort_item){key_of(s->dtype, x + i * xs * (int64_t)es) ^ flip, i};
        const sort_item *sorted = radix_sort(a, tmp, n);
        /* output row r: outer block r / inner, column r % inner, stride inner */
        int64_t out0 = (r / inner) * k * inner + r % inner;
        char *v = (char *)s->values + out0 * (int64_t)es;
        int64_t *ix = s->indices + out0;
        for (int64_t j = 0; j < k; j++) {
            memcpy(v + j * inner * (int64_t)es, x + sorted[j].pos * xs * (int64_t)es, es);
            ix[j * inner] = sorted[j].pos;
        }
    }
}

size_t tj_k_sort_scratch_bytes(const tj_k_sort *s, int nthreads)
{
    return (size_t)(nthreads < 1 ? 1 : nthreads) * 2 * (size_t)s->shape[s->dim] * sizeof(sort_item);
}

void tj_k_sort_run(const tj_k_sort *s, void *scratch, int nthreads)
{
    int64_t n = s->shape[s->dim], rows = 1, inner = 1;
    for (int d = 0; d < s->ndim; d++)
        if (d != s->dim) rows *= s->shape[d];
    for (int d = s->dim + 1; d < s->ndim; d++) inner *= s->shape[d];
    if (rows == 0 || s->k == 0) return;
    sort_ctx c = {s, n, inner, scratch};
    tj_k_parallel(nthreads < rows ? nthreads : (int)rows, rows, sort_rows, &c);
}
