/* float32 segment loops of norm_segments.h, written once over simd_rows.h
 * and compiled per ISA by norm_segments_avx512.c / norm_segments_avx2.c. */
#include <math.h>
#include <stdbool.h>

#include "norm_segments.h"
#include "simd_rows.h"

/* The sums of d = x - shift and of d^2 over n elements, four float vector
 * accumulators each; tail lanes load the shift and add nothing. */
static void deviation_sums(const float *x, int64_t n, float shift, double *sum, double *sum_sq)
{
    vf z = vf_set1(0.0f), sv = vf_set1(shift), d[4] = {z, z, z, z}, q[4] = {z, z, z, z};
    int64_t i = 0;
    for (; i + 4 * VF_N <= n; i += 4 * VF_N)
        for (int k = 0; k < 4; k++) {
            vf e = vf_sub(vf_load(x + i + k * VF_N), sv);
            d[k] = vf_add(d[k], e);
            q[k] = vf_fmadd(e, e, q[k]);
        }
    for (; i < n; i += VF_N) {
        vf e = vf_sub(vf_load_part(x + i, n - i < VF_N ? (int)(n - i) : VF_N, shift), sv);
        d[0] = vf_add(d[0], e);
        q[0] = vf_fmadd(e, e, q[0]);
    }
    *sum = vf_hsum(vf_add(vf_add(d[0], d[1]), vf_add(d[2], d[3])));
    *sum_sq = vf_hsum(vf_add(vf_add(q[0], q[1]), vf_add(q[2], q[3])));
}

/* Around the mean of the first 2^k <= VF_N elements (a tree sum over a
 * power of 2: exactly the value of a constant segment), and again around
 * the mean found when the shift was more than a standard deviation off. */
void TJ_ISA(tj_k_segment_moments_f32)(const float *x, int64_t len, int64_t s0, int64_t s1, double *mean, double *m2)
{
    for (int64_t s = s0; s < s1; s++) {
        const float *xs = x + s * len;
        int k = VF_N;
        while (k > len) k /= 2;
        float shift = vf_hsum(vf_load_part(xs, k, 0.0f)) / (float)k;
        if (!isfinite(shift)) shift = 0.0f;
        double sum, sum_sq;
        deviation_sums(xs, len, shift, &sum, &sum_sq);
        double c = sum / (double)len;
        if (c * c * (double)len > sum_sq - sum * c) {
            shift = (float)((double)shift + c);
            deviation_sums(xs, len, shift, &sum, &sum_sq);
            c = sum / (double)len;
        }
        double q = sum_sq - sum * c;
        mean[s] = (double)shift + c;
        m2[s] = q > 0 || q != q ? q : 0.0;
    }
}

void TJ_ISA(tj_k_segment_dots_f32)(const float *g, const float *x, int64_t len, int64_t s0, int64_t s1,
                                   const double *shift, double *sum_g, double *sum_gx)
{
    for (int64_t s = s0; s < s1; s++) {
        const float *gs = g + s * len, *xs = x + s * len;
        float sh = (float)shift[s];
        vf sv = vf_set1(sh);
        vd a0 = vd_zero(), a1 = a0, b0 = a0, b1 = a0;
        for (int64_t i = 0; i < len; i += VF_N) {
            int part = len - i < VF_N ? (int)(len - i) : VF_N;
            vf gv = part == VF_N ? vf_load(gs + i) : vf_load_part(gs + i, part, 0.0f);
            vf dv = vf_sub(part == VF_N ? vf_load(xs + i) : vf_load_part(xs + i, part, sh), sv);
            vd gl = vd_lo(gv), gh = vd_hi(gv);
            a0 = vd_add(a0, gl);
            a1 = vd_add(a1, gh);
            b0 = vd_fmadd(gl, vd_lo(dv), b0);
            b1 = vd_fmadd(gh, vd_hi(dv), b1);
        }
        sum_g[s] = vd_hsum(vd_add(a0, a1));
        sum_gx[s] = vd_hsum(vd_add(b0, b1));
    }
}

/* One vector of the affine map at i (part lanes). */
static inline vf affine(const float *x, const float *g, int64_t i, int part, vf sh, vf al, vf be, vf ga)
{
    bool full = part == VF_N;
    vf r = ga;
    if (x) r = vf_fmadd(vf_sub(full ? vf_load(x + i) : vf_load_part(x + i, part, 0.0f), sh), al, r);
    if (g) r = vf_fmadd(full ? vf_load(g + i) : vf_load_part(g + i, part, 0.0f), be, r);
    return r;
}

void TJ_ISA(tj_k_segment_affine_f32)(const float *x, const float *g, int64_t len, int64_t s0, int64_t s1,
                                     const double *shift, const double *alpha, const double *beta,
                                     const double *gamma, float *y)
{
    for (int64_t s = s0; s < s1; s++) {
        const float *xs = x ? x + s * len : NULL, *gs = g ? g + s * len : NULL;
        float *ys = y + s * len;
        vf sh = vf_set1(x ? (float)shift[s] : 0.0f), al = vf_set1(x ? (float)alpha[s] : 0.0f);
        vf be = vf_set1(g ? (float)beta[s] : 0.0f), ga = vf_set1((float)gamma[s]);
        int64_t i = 0;
        for (; i + 2 * VF_N <= len; i += 2 * VF_N) {
            vf v0 = affine(xs, gs, i, VF_N, sh, al, be, ga), v1 = affine(xs, gs, i + VF_N, VF_N, sh, al, be, ga);
            vf_store(ys + i, v0);
            vf_store(ys + i + VF_N, v1);
        }
        for (; i < len; i += VF_N) {
            int part = len - i < VF_N ? (int)(len - i) : VF_N;
            vf v = affine(xs, gs, i, part, sh, al, be, ga);
            if (part == VF_N) vf_store(ys + i, v);
            else vf_store_part(ys + i, v, part);
        }
    }
}
