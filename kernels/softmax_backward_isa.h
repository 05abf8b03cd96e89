/* float32 softmax / log-softmax backward row, written once over
 * simd_rows.h and compiled per ISA by softmax_backward_avx512.c / _avx2.c. */
#include <stdbool.h>

#include "simd_rows.h"
#include "softmax.h"

/* Two passes over a row (in L1 after the first): the sum, in double, of
 * g * y (softmax) or of g (log-softmax); then gx = y * (g - sum) or
 * gx = g - exp(y) * sum. Tail lanes load g = 0, which adds nothing. */
void TJ_ISA(tj_k_softmax_backward_row_f32)(const float *g, const float *y, float *gx, int64_t n, bool take_log)
{
    vd a0 = vd_zero(), a1 = a0;
    int64_t i = 0;
    for (; i < n; i += VF_N) {
        int part = n - i < VF_N ? (int)(n - i) : VF_N;
        vf gv = vf_load_part(g + i, part, 0.0f);
        if (take_log) {
            a0 = vd_add(a0, vd_lo(gv));
            a1 = vd_add(a1, vd_hi(gv));
        } else {
            vf yv = vf_load_part(y + i, part, 0.0f);
            a0 = vd_fmadd(vd_lo(gv), vd_lo(yv), a0);
            a1 = vd_fmadd(vd_hi(gv), vd_hi(yv), a1);
        }
    }
    vf s = vf_set1((float)vd_hsum(vd_add(a0, a1)));
    for (i = 0; i < n; i += VF_N) {
        int part = n - i < VF_N ? (int)(n - i) : VF_N;
        vf gv = vf_load_part(g + i, part, 0.0f), yv = vf_load_part(y + i, part, 0.0f);
        vf r = take_log ? vf_sub(gv, vf_mul(vf_exp(yv), s)) : vf_mul(yv, vf_sub(gv, s));
        if (part == VF_N) vf_store(gx + i, r);
        else vf_store_part(gx + i, r, part);
    }
}
