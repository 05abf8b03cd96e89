/* float32 layer-norm backward pieces, written once over simd_rows.h and
 * compiled per ISA by layer_norm_backward_avx512.c / _avx2.c. Sums are kept
 * in double, as in the portable code of layer_norm.c. */
#include "layer_norm.h"
#include "simd_rows.h"

/* Two passes over a row (in L1 after the first): the sums of wg = g * w and
 * of wg * xhat, then gx = r * (wg - mean(wg) - xhat * mean(wg * xhat)).
 * Tail lanes load g = 0 and x = m, which add nothing. */
void TJ_ISA(tj_k_layer_norm_grad_input_f32)(const float *g, const float *x, float m, float r, const float *w,
                                            float *gx, int64_t n)
{
    vf vm = vf_set1(m), vr = vf_set1(r);
    vd a0 = vd_zero(), a1 = a0, b0 = a0, b1 = a0;
    int64_t i = 0;
    for (; i < n; i += VF_N) {
        int part = n - i < VF_N ? (int)(n - i) : VF_N;
        vf gv = vf_load_part(g + i, part, 0.0f), xv = vf_load_part(x + i, part, m);
        vf wg = w ? vf_mul(gv, vf_load_part(w + i, part, 0.0f)) : gv;
        vf xhat = vf_mul(vf_sub(xv, vm), vr);
        vd wl = vd_lo(wg), wh = vd_hi(wg);
        a0 = vd_add(a0, wl);
        a1 = vd_add(a1, wh);
        b0 = vd_fmadd(wl, vd_lo(xhat), b0);
        b1 = vd_fmadd(wh, vd_hi(xhat), b1);
    }
    vf ca = vf_set1((float)(vd_hsum(vd_add(a0, a1)) / (double)n));
    vf cb = vf_set1((float)(vd_hsum(vd_add(b0, b1)) / (double)n));
    for (i = 0; i + VF_N <= n; i += VF_N) {
        vf gv = vf_load(g + i), wg = w ? vf_mul(gv, vf_load(w + i)) : gv;
        vf xhat = vf_mul(vf_sub(vf_load(x + i), vm), vr);
        vf_store(gx + i, vf_mul(vr, vf_sub(vf_sub(wg, ca), vf_mul(xhat, cb))));
    }
    if (i < n) {
        int part = (int)(n - i);
        vf gv = vf_load_part(g + i, part, 0.0f), wg = w ? vf_mul(gv, vf_load_part(w + i, part, 0.0f)) : gv;
        vf xhat = vf_mul(vf_sub(vf_load_part(x + i, part, m), vm), vr);
        vf_store_part(gx + i, vf_mul(vr, vf_sub(vf_sub(wg, ca), vf_mul(xhat, cb))), part);
    }
}

/* Columns [j0, j0 + c) of gw = sum over rows of g * xhat and gb = sum of g,
 * VF_N columns at a time with the sums in registers (either output may be
 * NULL). */
void TJ_ISA(tj_k_layer_norm_grad_params_f32)(const float *g, const float *x, const float *mean, const float *rstd,
                                             int64_t rows, int64_t n, int64_t j0, int64_t c, float *gw, float *gb)
{
    for (int64_t j = j0; j < j0 + c; j += VF_N) {
        int part = j0 + c - j < VF_N ? (int)(j0 + c - j) : VF_N;
        vd w0 = vd_zero(), w1 = w0, b0 = w0, b1 = w0;
        for (int64_t r = 0; r < rows; r++) {
            vf gv = vf_load_part(g + r * n + j, part, 0.0f);
            vf xhat = vf_mul(vf_sub(vf_load_part(x + r * n + j, part, 0.0f), vf_set1(mean[r])), vf_set1(rstd[r]));
            vd gl = vd_lo(gv), gh = vd_hi(gv);
            w0 = vd_fmadd(gl, vd_lo(xhat), w0);
            w1 = vd_fmadd(gh, vd_hi(xhat), w1);
            b0 = vd_add(b0, gl);
            b1 = vd_add(b1, gh);
        }
        double tw[VF_N], tb[VF_N];
        vd_store(tw, w0);
        vd_store(tw + VF_N / 2, w1);
        vd_store(tb, b0);
        vd_store(tb + VF_N / 2, b1);
        for (int k = 0; k < part; k++) {
            if (gw) gw[j + k] = (float)tw[k];
            if (gb) gb[j + k] = (float)tb[k];
        }
    }
}
