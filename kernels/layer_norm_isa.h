/* float32 layer-norm row, written once over simd_rows.h and compiled per ISA
 * by layer_norm_avx512.c / layer_norm_avx2.c. */
#include "layer_norm.h"
#include "simd_rows.h"

/* Sums of d = x - shift over a row and of d^2 (four accumulators each; tail
 * lanes load shift, adding nothing). */
static inline void deviation_sums(const float *x, int64_t n, float shift, double *sum, double *sum_sq)
{
    vf vs = vf_set1(shift);
    vf d0 = vf_set1(0.0f), d1 = d0, d2 = d0, d3 = d0, q0 = d0, q1 = d0, q2 = d0, q3 = d0;
    int64_t i = 0;
    for (; i + 4 * VF_N <= n; i += 4 * VF_N) {
        vf e0 = vf_sub(vf_load(x + i), vs), e1 = vf_sub(vf_load(x + i + VF_N), vs);
        vf e2 = vf_sub(vf_load(x + i + 2 * VF_N), vs), e3 = vf_sub(vf_load(x + i + 3 * VF_N), vs);
        d0 = vf_add(d0, e0);
        d1 = vf_add(d1, e1);
        d2 = vf_add(d2, e2);
        d3 = vf_add(d3, e3);
        q0 = vf_fmadd(e0, e0, q0);
        q1 = vf_fmadd(e1, e1, q1);
        q2 = vf_fmadd(e2, e2, q2);
        q3 = vf_fmadd(e3, e3, q3);
    }
    for (; i < n; i += VF_N) {
        vf e = vf_sub(vf_load_part(x + i, n - i < VF_N ? (int)(n - i) : VF_N, shift), vs);
        d0 = vf_add(d0, e);
        q0 = vf_fmadd(e, e, q0);
    }
    *sum = vf_hsum(vf_add(vf_add(d0, d1), vf_add(d2, d3)));
    *sum_sq = vf_hsum(vf_add(vf_add(q0, q1), vf_add(q2, q3)));
}

/* Two passes over a row (the second finds it in L1), in float vectors:
 *   1. around a shift s, the mean of the first 2^k <= VF_N elements (a tree
 *      sum divided by a power of 2: exactly the value of a constant row),
 *      the sum of d = x - s and of d^2: the mean is s + c with c = sum(d)/n
 *      and the variance sum(d^2)/n - c^2. That difference loses only a few
 *      bits while c^2 <= variance (s within a standard deviation of the
 *      mean, which a 16-element sample nearly always is); otherwise the pass
 *      runs again around s + c (the classic corrected two-pass formula).
 *      A constant row gets d = 0: variance exactly 0;
 *   2. y = ((x - s) rstd - c rstd) w + b (two fmas): x - s keeps the low bits
 *      of the deviations under a large common offset, and a constant row
 *      gives exactly 0 before w and b. */
void TJ_ISA(tj_k_layer_norm_row_f32)(const float *x, float *y, int64_t n, const float *w, const float *b, double eps,
                                     float *mean_out, float *rstd_out)
{
    int k = VF_N;
    while (k > n) k /= 2;
    float s = vf_hsum(vf_load_part(x, k, 0.0f)) / (float)k;
    if (!isfinite(s)) s = 0.0f;
    double sum, sum_sq;
    deviation_sums(x, n, s, &sum, &sum_sq);
    double c = sum / (double)n, var = sum_sq / (double)n - c * c;
    if (c * c > var) {
        s = (float)((double)s + c);
        deviation_sums(x, n, s, &sum, &sum_sq);
        c = sum / (double)n;
        var = sum_sq / (double)n - c * c;
    }
    float r = var != var ? NAN : (float)(1.0 / sqrt((var > 0 ? var : 0) + eps));

    vf vs = vf_set1(s), vr = vf_set1(r), vcr = vf_set1((float)(-c * r)), one = vf_set1(1.0f), zero = vf_set1(0.0f);
    int64_t i = 0;
    for (; i + VF_N <= n; i += VF_N) {
        _mm_prefetch((const char *)(x + n + i), _MM_HINT_T0); /* the next row (no fault past the end) */
        vf t = vf_fmadd(vf_sub(vf_load(x + i), vs), vr, vcr);
        vf_store(y + i, vf_fmadd(t, w ? vf_load(w + i) : one, b ? vf_load(b + i) : zero));
    }
    if (i < n) {
        int part = (int)(n - i);
        vf t = vf_fmadd(vf_sub(vf_load_part(x + i, part, 0.0f), vs), vr, vcr);
        vf_store_part(y + i, vf_fmadd(t, w ? vf_load_part(w + i, part, 0.0f) : one, b ? vf_load_part(b + i, part, 0.0f) : zero), part);
    }
    *mean_out = (float)((double)s + c);
    *rstd_out = r;
}
