/* float32 layer-norm rows, written once over simd_rows.h and compiled per
 * ISA by layer_norm_avx512.c / layer_norm_avx2.c. */
#include <stdbool.h>

#include "layer_norm.h"
#include "simd_rows.h"

/* Running sums of d = x - shift and of d^2 over a row, four vector
 * accumulators each, in one fixed order: deviation_sums makes the whole
 * pass, and the pipelined loop below the same steps interleaved with the
 * previous row's normalisation (bit-identical sums). */
typedef struct dev_sums {
    vf shift, d[4], q[4];
} dev_sums;

static inline dev_sums dev_start(float shift)
{
    vf z = vf_set1(0.0f);
    return (dev_sums){vf_set1(shift), {z, z, z, z}, {z, z, z, z}};
}

/* Elements [i, i + 4 VF_N). */
static inline void dev_add4(dev_sums *a, const float *x, int64_t i)
{
    for (int k = 0; k < 4; k++) {
        vf e = vf_sub(vf_load(x + i + k * VF_N), a->shift);
        a->d[k] = vf_add(a->d[k], e);
        a->q[k] = vf_fmadd(e, e, a->q[k]);
    }
}

/* Elements [i, n) (fewer than 4 VF_N): masked lanes load the shift, adding
 * nothing. */
static inline void dev_add_tail(dev_sums *a, const float *x, int64_t i, int64_t n, float shift)
{
    for (; i < n; i += VF_N) {
        vf e = vf_sub(vf_load_part(x + i, n - i < VF_N ? (int)(n - i) : VF_N, shift), a->shift);
        a->d[0] = vf_add(a->d[0], e);
        a->q[0] = vf_fmadd(e, e, a->q[0]);
    }
}

static inline void dev_finish(const dev_sums *a, double *sum, double *sum_sq)
{
    *sum = vf_hsum(vf_add(vf_add(a->d[0], a->d[1]), vf_add(a->d[2], a->d[3])));
    *sum_sq = vf_hsum(vf_add(vf_add(a->q[0], a->q[1]), vf_add(a->q[2], a->q[3])));
}

/* The sums of d = x - shift over a row and of d^2. */
static inline void deviation_sums(const float *x, int64_t n, float shift, double *sum, double *sum_sq)
{
    dev_sums a = dev_start(shift);
    int64_t i = 0;
    for (; i + 4 * VF_N <= n; i += 4 * VF_N) dev_add4(&a, x, i);
    dev_add_tail(&a, x, i, n, shift);
    dev_finish(&a, sum, sum_sq);
}

/* The shift of pass 1 below: the mean of the first 2^k <= VF_N elements (a
 * tree sum divided by a power of 2: exactly the value of a constant row). */
static inline float first_shift(const float *x, int64_t n)
{
    int k = VF_N;
    while (k > n) k /= 2;
    float s = vf_hsum(vf_load_part(x, k, 0.0f)) / (float)k;
    return isfinite(s) ? s : 0.0f;
}

/* The sums of d = x - s and d^2 over a row in double, element by element,
 * around s = its mean rounded to float (0 when that is not finite: an inf
 * or nan, which the sums carry on): for rows whose float squares overflow
 * (deviations beyond 2^64), which no fast path needs to cover. Returns s. */
static inline float wide_deviation_sums(const float *x, int64_t n, double *sum, double *sum_sq)
{
    double m = 0, d1 = 0, d2 = 0;
    for (int64_t i = 0; i < n; i++) m += x[i];
    float s = (float)(m / (double)n);
    if (!isfinite(s)) s = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)x[i] - s;
        d1 += d;
        d2 += d * d;
    }
    *sum = d1;
    *sum_sq = d2;
    return s;
}

/* What pass 2 of a row needs: its shift s, r = rstd and -c r. */
typedef struct norm_params {
    float s, r, cr;
} norm_params;

/* From the sums of d = x - s and d^2 over a row: the mean s + c and the
 * variance (see below; the pass runs again around s + c when c^2 > var, in
 * double when the float sums overflowed). */
static inline norm_params finish_stats(const float *x, int64_t n, float s, double sum, double sum_sq, double eps,
                                       float *mean_out, float *rstd_out)
{
    double c = sum / (double)n, var = sum_sq / (double)n - c * c;
    if (isinf(sum_sq)) {
        s = wide_deviation_sums(x, n, &sum, &sum_sq);
        c = sum / (double)n;
        var = sum_sq / (double)n - c * c;
    } else if (c * c > var) {
        s = (float)((double)s + c);
        deviation_sums(x, n, s, &sum, &sum_sq);
        c = sum / (double)n;
        var = sum_sq / (double)n - c * c;
    }
    float r = var != var ? NAN : (float)(1.0 / sqrt((var > 0 ? var : 0) + eps));
    *mean_out = (float)((double)s + c);
    *rstd_out = r;
    return (norm_params){s, r, (float)(-c * r)};
}

/* y[i, i + part) of pass 2 below (part <= VF_N; masked loads under VF_N). */
static inline vf normalised(const float *x, const float *w, const float *b, int64_t i, int part, norm_params p)
{
    bool full = part == VF_N;
    vf t = vf_fmadd(vf_sub(full ? vf_load(x + i) : vf_load_part(x + i, part, 0.0f), vf_set1(p.s)), vf_set1(p.r),
                    vf_set1(p.cr));
    vf wv = !w ? vf_set1(1.0f) : full ? vf_load(w + i) : vf_load_part(w + i, part, 0.0f);
    vf bv = !b ? vf_set1(0.0f) : full ? vf_load(b + i) : vf_load_part(b + i, part, 0.0f);
    return vf_fmadd(t, wv, bv);
}

/* Rows of n floats, two passes over each (the second finds it in L1), in
 * float vectors:
 *   1. around a shift s (first_shift), the sum of d = x - s and of d^2: the
 *      mean is s + c with c = sum(d)/n and the variance sum(d^2)/n - c^2.
 *      That difference loses only a few bits while c^2 <= variance (s
 *      within a standard deviation of the mean, which a 16-element sample
 *      nearly always is); otherwise the pass runs again around s + c (the
 *      classic corrected two-pass formula). A constant row gets d = 0:
 *      variance exactly 0;
 *   2. y = ((x - s) rstd - c rstd) w + b (two fmas): x - s keeps the low bits
 *      of the deviations under a large common offset, and a constant row
 *      gives exactly 0 before w and b.
 * Software-pipelined: pass 1 of the next row runs in the loop of pass 2 of
 * this one (the same sums in the same order as deviation_sums), so that
 * the loads and stores of pass 2 overlap the arithmetic of pass 1 instead
 * of alternating with it; the row after next is prefetched meanwhile (no
 * fault past the end). */
void TJ_ISA(tj_k_layer_norm_rows_f32)(const float *x, float *y, int64_t rows, int64_t n, const float *w,
                                      const float *b, double eps, float *mean, float *rstd)
{
    if (rows <= 0) return;
    double sum, sum_sq;
    float s = first_shift(x, n);
    deviation_sums(x, n, s, &sum, &sum_sq);
    norm_params p = finish_stats(x, n, s, sum, sum_sq, eps, mean, rstd);
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n, *xn = xr + n;
        float *yr = y + r * n;
        const char *pf = (const char *)(xr + 2 * n);
        bool next = r + 1 < rows;
        float sn = next ? first_shift(xn, n) : 0.0f;
        dev_sums a = dev_start(sn);
        int64_t i = 0;
        for (; i + 4 * VF_N <= n; i += 4 * VF_N) {
            for (int k = 0; k < 4; k++) {
                _mm_prefetch(pf + (i + k * VF_N) * (int64_t)sizeof(float), _MM_HINT_T0);
                vf_store(yr + i + k * VF_N, normalised(xr, w, b, i + k * VF_N, VF_N, p));
            }
            if (next) dev_add4(&a, xn, i);
        }
        for (int64_t j = i; j < n; j += VF_N) {
            int part = n - j < VF_N ? (int)(n - j) : VF_N;
            _mm_prefetch(pf + j * (int64_t)sizeof(float), _MM_HINT_T0);
            vf v = normalised(xr, w, b, j, part, p);
            if (part == VF_N) vf_store(yr + j, v);
            else vf_store_part(yr + j, v, part);
        }
        if (!next) break;
        dev_add_tail(&a, xn, i, n, sn);
        dev_finish(&a, &sum, &sum_sq);
        p = finish_stats(xn, n, sn, sum, sum_sq, eps, mean + r + 1, rstd + r + 1);
    }
}
