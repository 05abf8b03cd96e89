/* AVX-512 loops of the float32 reductions and the float64 sum's fold and extrema (see reduce.c), each giving the
 * generic loop's result bit for bit. The sum's row loop: the rows of a block
 * of outputs whose kept dim is contiguous, converted to double and added in
 * row order, eight outputs per vector, so that every output sees the same
 * sequence of additions as in the generic loop (the bias gradients of Linear
 * layers, sum over the batch dim, run this). Like the generic loop it reads
 * four rows at a time across the whole block: going down all rows in strips
 * of eight columns instead reads each cache line twice, rows apart, and
 * with a power-of-two row stride (f32[4096, 4096]: 16 KiB) those lines fall
 * into a few cache sets and are evicted in between (twice the generic
 * loop's time, bench/RESULTS.md "bench_reduce"). */
#include <immintrin.h>
#include <math.h>
#include <stdbool.h>

#include "reduce_isa.h"

static __m512d cvt8(const float *x) { return _mm512_cvtps_pd(_mm256_loadu_ps(x)); }

static __m512d cvt8_masked(__mmask8 k, const float *x) { return _mm512_cvtps_pd(_mm256_maskz_loadu_ps(k, x)); }

void tj_k_sum_f32_rows_avx512(const float *x, int64_t nrows, int64_t rs, int64_t m, double *o)
{
    int64_t k = 0, tail = m % 8, jt = m - tail;
    __mmask8 mask = (__mmask8)((1u << tail) - 1);
    for (; k + 4 <= nrows; k += 4) {
        const float *x0 = x + k * rs, *x1 = x0 + rs, *x2 = x1 + rs, *x3 = x2 + rs;
        for (int64_t j = 0; j < jt; j += 8) {
            __m512d acc = _mm512_loadu_pd(o + j);
            acc = _mm512_add_pd(acc, cvt8(x0 + j));
            acc = _mm512_add_pd(acc, cvt8(x1 + j));
            acc = _mm512_add_pd(acc, cvt8(x2 + j));
            acc = _mm512_add_pd(acc, cvt8(x3 + j));
            _mm512_storeu_pd(o + j, acc);
        }
        if (tail) {
            __m512d acc = _mm512_maskz_loadu_pd(mask, o + jt);
            acc = _mm512_add_pd(acc, cvt8_masked(mask, x0 + jt));
            acc = _mm512_add_pd(acc, cvt8_masked(mask, x1 + jt));
            acc = _mm512_add_pd(acc, cvt8_masked(mask, x2 + jt));
            acc = _mm512_add_pd(acc, cvt8_masked(mask, x3 + jt));
            _mm512_mask_storeu_pd(o + jt, mask, acc);
        }
    }
    for (; k < nrows; k++) {
        const float *x0 = x + k * rs;
        for (int64_t j = 0; j < jt; j += 8)
            _mm512_storeu_pd(o + j, _mm512_add_pd(_mm512_loadu_pd(o + j), cvt8(x0 + j)));
        if (tail)
            _mm512_mask_storeu_pd(o + jt, mask,
                                  _mm512_add_pd(_mm512_maskz_loadu_pd(mask, o + jt), cvt8_masked(mask, x0 + jt)));
    }
}

static __m512d load8(const double *x) { return _mm512_loadu_pd(x); }

/* The float32 sum's (product's) fold and the float64 sum's on a contiguous
 * run (reduce.c, DEF_FFOLD with LANES 8): lane k takes x[i + k] for every
 * whole group of eight, the rest goes to lane 0 in order, then the lanes
 * are combined pairwise (k + 4 into k, then k + 2, then k + 1). One vector
 * of eight doubles holds the lanes. NAME##_lanes does the part after the
 * groups. T: the element type, LOAD: eight of them as doubles; VOP: the
 * intrinsics' add or mul; COP: the C operator (+= or *=); ID: the
 * identity. The runs loop folds four runs at once where it can: four
 * independent chains hide their latency, each run's lanes see the same
 * operations as alone. */
#define DEF_FOLD_AVX512(NAME, T, LOAD, VOP, COP, ID)                                                       \
    static double NAME##_lanes(__m512d l, const T *x, int64_t i, int64_t n)                                \
    {                                                                                                      \
        if (i < n) {                                                                                       \
            double l0 = _mm512_cvtsd_f64(l);                                                               \
            for (; i < n; i++) l0 COP(double) x[i];                                                        \
            l = _mm512_mask_broadcastsd_pd(l, 1, _mm_set_sd(l0));                                          \
        }                                                                                                  \
        __m256d h = _mm256_##VOP##_pd(_mm512_castpd512_pd256(l), _mm512_extractf64x4_pd(l, 1));            \
        __m128d q = _mm_##VOP##_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));                \
        double r = _mm_cvtsd_f64(q);                                                                       \
        r COP _mm_cvtsd_f64(_mm_unpackhi_pd(q, q));                                                        \
        return r;                                                                                          \
    }                                                                                                      \
    static const T *NAME##_at(const char *x, int64_t off) { return (const T *)(const void *)(x + off); }   \
    static double NAME##_run(const T *x, int64_t n)                                                        \
    {                                                                                                      \
        __m512d l = _mm512_set1_pd(ID);                                                                    \
        int64_t i = 0;                                                                                     \
        for (; i + 8 <= n; i += 8) l = _mm512_##VOP##_pd(l, LOAD(x + i));                                  \
        return NAME##_lanes(l, x, i, n);                                                                   \
    }                                                                                                      \
    void tj_k_##NAME##_runs_avx512(const char *x, const int64_t *off, int64_t nruns, int64_t n, double *out) \
    {                                                                                                      \
        int64_t r = 0;                                                                                     \
        for (; r + 4 <= nruns; r += 4) {                                                                   \
            const T *x0 = NAME##_at(x, off[r]), *x1 = NAME##_at(x, off[r + 1]);                            \
            const T *x2 = NAME##_at(x, off[r + 2]), *x3 = NAME##_at(x, off[r + 3]);                        \
            __m512d l0 = _mm512_set1_pd(ID), l1 = l0, l2 = l0, l3 = l0;                                    \
            int64_t i = 0;                                                                                 \
            for (; i + 8 <= n; i += 8) {                                                                   \
                l0 = _mm512_##VOP##_pd(l0, LOAD(x0 + i));                                                  \
                l1 = _mm512_##VOP##_pd(l1, LOAD(x1 + i));                                                  \
                l2 = _mm512_##VOP##_pd(l2, LOAD(x2 + i));                                                  \
                l3 = _mm512_##VOP##_pd(l3, LOAD(x3 + i));                                                  \
            }                                                                                              \
            out[r] = NAME##_lanes(l0, x0, i, n);                                                           \
            out[r + 1] = NAME##_lanes(l1, x1, i, n);                                                       \
            out[r + 2] = NAME##_lanes(l2, x2, i, n);                                                       \
            out[r + 3] = NAME##_lanes(l3, x3, i, n);                                                       \
        }                                                                                                  \
        for (; r < nruns; r++) out[r] = NAME##_run(NAME##_at(x, off[r]), n);                               \
    }

DEF_FOLD_AVX512(sum_f32, float, cvt8, add, +=, 0.0)
DEF_FOLD_AVX512(prod_f32, float, cvt8, mul, *=, 1.0)
DEF_FOLD_AVX512(sum_f64, double, load8, add, +=, 0.0)

/* The extrema scans (reduce.c, DEF_SCAN with SCAN_LANES 32) on a contiguous
 * run, float32 (two vectors of 16 lanes) and float64 (four of 8): lane
 * L j + t is vector j's lane t. A value replaces the best so far only when
 * strictly better (_mm512_max_ps(v, l) is `v > l ? v : l`, so a nan element
 * never enters a lane); nans are flagged apart and win outright. Lane k
 * takes x[i + k] for every whole group of 32; the lanes are then taken in
 * lane order, and the remaining elements in order, each only when strictly
 * better. Taking in order only when strictly better keeps the first holder
 * of the extreme value; holders differ at most in the sign of a zero, so the
 * extreme is found by a fold over the vectors and the first holder's sign
 * read from the sign mask.
 *
 * T element type, SFX its intrinsics' suffix (ps, pd), L lanes per vector,
 * EPI its bits (32, 64: the sign test). NAME##_first: of the lanes of v[j]
 * selected by k[j], the first that is strictly better than best and equal
 * to their extreme, else best; a nan among them sets *nan (the result then
 * does not matter). */
#define DEF_SCAN_AVX512(NAME, T, SFX, L, EPI, VOP, OP, INIT)                                         \
    typedef __mmask##L NAME##_mask;                                                                 \
    enum { NAME##_vectors = 32 / (L) };                                                             \
    static inline __attribute__((always_inline)) T NAME##_first(scan_vec_##SFX v[NAME##_vectors], const NAME##_mask k[NAME##_vectors], \
                          T best, bool *nan)                                                        \
    {                                                                                               \
        NAME##_mask un = 0;                                                                         \
        for (int j = 0; j < NAME##_vectors; j++) v[j] = _mm512_mask_mov_##SFX(_mm512_set1_##SFX(INIT), k[j], v[j]); \
        for (int j = 0; j < NAME##_vectors; j += 2) un |= _mm512_cmp_##SFX##_mask(v[j], v[j + 1], _CMP_UNORD_Q); \
        if (un) {                                                                                   \
            *nan = true;                                                                            \
            return best;                                                                            \
        }                                                                                           \
        scan_vec_##SFX ext = v[0];                                                               \
        for (int j = 1; j < NAME##_vectors; j++) ext = _mm512_##VOP##_##SFX(ext, v[j]);             \
        T e = _mm512_reduce_##VOP##_##SFX(ext);                                                     \
        if (!(e OP best)) return best;                                                              \
        scan_vec_##SFX ev = _mm512_set1_##SFX(e);                                                \
        __m512i sign = _mm512_set1_epi##EPI(INT##EPI##_MIN);                                        \
        uint32_t eq = 0, neg = 0;                                                                   \
        for (int j = 0; j < NAME##_vectors; j++) {                                                  \
            eq |= (uint32_t)_mm512_cmp_##SFX##_mask(v[j], ev, _CMP_EQ_OQ) << (L * j);               \
            neg |= (uint32_t)_mm512_test_epi##EPI##_mask(_mm512_cast##SFX##_si512(v[j]), sign) << (L * j); \
        }                                                                                           \
        return (T)copysign(e, (neg >> __builtin_ctz(eq)) & 1 ? -1.0 : 1.0);                         \
    }                                                                                               \
    static inline T NAME##_scan(const T *x, int64_t n)                                              \
    {                                                                                               \
        T best = (INIT);                                                                            \
        bool nan = false;                                                                           \
        int64_t i = 0;                                                                              \
        scan_vec_##SFX v[NAME##_vectors];                                                        \
        NAME##_mask k[NAME##_vectors];                                                              \
        if (n >= 32) {                                                                              \
            scan_vec_##SFX l[NAME##_vectors];                                                    \
            NAME##_mask nf = 0;                                                                     \
            for (int j = 0; j < NAME##_vectors; j++) l[j] = _mm512_set1_##SFX(INIT);                \
            for (; i + 32 <= n; i += 32) {                                                          \
                for (int j = 0; j < NAME##_vectors; j++) {                                          \
                    v[j] = _mm512_loadu_##SFX(x + i + L * j);                                       \
                    l[j] = _mm512_##VOP##_##SFX(v[j], l[j]);                                        \
                }                                                                                   \
                for (int j = 0; j < NAME##_vectors; j += 2)                                         \
                    nf |= _mm512_cmp_##SFX##_mask(v[j], v[j + 1], _CMP_UNORD_Q);                    \
            }                                                                                       \
            if (nf) return NAN;                                                                     \
            for (int j = 0; j < NAME##_vectors; j++) k[j] = (NAME##_mask)~0u;                       \
            best = NAME##_first(l, k, best, &nan);                                                  \
        }                                                                                           \
        if (i < n) {                                                                                \
            int64_t m = n - i; /* < 32 */                                                           \
            for (int j = 0; j < NAME##_vectors; j++) {                                              \
                int64_t c = m - L * j < 0 ? 0 : m - L * j > L ? L : m - L * j;                      \
                k[j] = (NAME##_mask)((1u << c) - 1);                                                \
                v[j] = _mm512_maskz_loadu_##SFX(k[j], x + i + L * j);                               \
            }                                                                                       \
            best = NAME##_first(v, k, best, &nan);                                                  \
        }                                                                                           \
        return nan ? NAN : best;                                                                    \
    }                                                                                               \
    T tj_k_##NAME##_scan_avx512(const T *x, int64_t n) { return NAME##_scan(x, n); }                \
    void tj_k_##NAME##_scans_avx512(const char *x, const int64_t *off, int64_t nruns, int64_t n, T *out) \
    {                                                                                               \
        for (int64_t r = 0; r < nruns; r++) out[r] = NAME##_scan((const T *)(const void *)(x + off[r]), n); \
    }

/* The vector types by intrinsics suffix, for DEF_SCAN_AVX512. */
typedef __m512 scan_vec_ps;
typedef __m512d scan_vec_pd;

DEF_SCAN_AVX512(max_f32, float, ps, 16, 32, max, >, -INFINITY)
DEF_SCAN_AVX512(min_f32, float, ps, 16, 32, min, <, INFINITY)
DEF_SCAN_AVX512(max_f64, double, pd, 8, 64, max, >, -INFINITY)
DEF_SCAN_AVX512(min_f64, double, pd, 8, 64, min, <, INFINITY)
