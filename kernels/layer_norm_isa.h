/* float32 layer-norm row, written once over simd_rows.h and compiled per ISA
 * by layer_norm_avx512.c / layer_norm_avx2.c. */
#include "layer_norm.h"
#include "simd_rows.h"

/* Running sums of deviations from the mean and of their squares. */
typedef struct dev_sums {
    vd s0, s1, q0, q1;
} dev_sums;

static inline void add_deviation(dev_sums *a, vf d)
{
    vd dl = vd_lo(d), dh = vd_hi(d);
    a->s0 = vd_add(a->s0, dl);
    a->s1 = vd_add(a->s1, dh);
    a->q0 = vd_fmadd(dl, dl, a->q0);
    a->q1 = vd_fmadd(dh, dh, a->q1);
}

/* Three passes over a row that stays in L1 after the first: the sum in
 * double (exact for a constant row, so its mean is exact and its deviations
 * exactly 0); sums of the deviations and their squares in double; the
 * normalised (by deviations from the mean split in two floats), scaled and
 * shifted output. Tail lanes load values that add
 * nothing (0, then the mean). */
void TJ_ISA(tj_k_layer_norm_row_f32)(const float *x, float *y, int64_t n, const float *w, const float *b, double eps,
                                     float *mean_out, float *rstd_out)
{
    int64_t i = 0;
    vd a0 = vd_zero(), a1 = a0, a2 = a0, a3 = a0;
    for (; i + 2 * VF_N <= n; i += 2 * VF_N) {
        vf v0 = vf_load(x + i), v1 = vf_load(x + i + VF_N);
        a0 = vd_add(a0, vd_lo(v0));
        a1 = vd_add(a1, vd_hi(v0));
        a2 = vd_add(a2, vd_lo(v1));
        a3 = vd_add(a3, vd_hi(v1));
    }
    for (; i < n; i += VF_N) {
        vf v = vf_load_part(x + i, n - i < VF_N ? (int)(n - i) : VF_N, 0.0f);
        a0 = vd_add(a0, vd_lo(v));
        a1 = vd_add(a1, vd_hi(v));
    }
    double mean = vd_hsum(vd_add(vd_add(a0, a1), vd_add(a2, a3))) / (double)n;
    float m = (float)mean, m_lo = (float)(mean - m); /* m + m_lo: the mean to ~48 bits */

    vf vm = vf_set1(m);
    dev_sums ds = {vd_zero(), vd_zero(), vd_zero(), vd_zero()};
    for (i = 0; i + VF_N <= n; i += VF_N) add_deviation(&ds, vf_sub(vf_load(x + i), vm));
    if (i < n) add_deviation(&ds, vf_sub(vf_load_part(x + i, (int)(n - i), m), vm));
    double sd = vd_hsum(vd_add(ds.s0, ds.s1)), sq = vd_hsum(vd_add(ds.q0, ds.q1));
    double var = (sq - sd * sd / (double)n) / (double)n;
    float r = var != var ? NAN : (float)(1.0 / sqrt((var > 0 ? var : 0) + eps));

    /* x - m is exact near the mean, so the deviations keep their low bits
     * even under a large common offset */
    vf vr = vf_set1(r), vlo = vf_set1(m_lo);
    for (i = 0; i + VF_N <= n; i += VF_N) {
        vf t = vf_mul(vf_sub(vf_sub(vf_load(x + i), vm), vlo), vr);
        if (w) t = vf_mul(t, vf_load(w + i));
        if (b) t = vf_add(t, vf_load(b + i));
        vf_store(y + i, t);
    }
    if (i < n) {
        int part = (int)(n - i);
        vf t = vf_mul(vf_sub(vf_sub(vf_load_part(x + i, part, 0.0f), vm), vlo), vr);
        if (w) t = vf_mul(t, vf_load_part(w + i, part, 0.0f));
        if (b) t = vf_add(t, vf_load_part(b + i, part, 0.0f));
        vf_store_part(y + i, t, part);
    }
    *mean_out = m;
    *rstd_out = r;
}
