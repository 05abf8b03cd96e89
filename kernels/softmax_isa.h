/* float32 softmax pieces, written once over simd_rows.h and compiled per
 * ISA by softmax_avx512.c / softmax_avx2.c. */
#include <stdbool.h>

#include "exp_isa.h"
#include "simd_rows.h"
#include "softmax.h"

/* One row, three passes (it sits in L1 after the first): maximum; exp of
 * the shifted row and its sum; scaling (softmax) or the log-sum shift. The
 * second pass prefetches the next row (rows are contiguous in row mode; a
 * prefetch past the end of the data does not fault). */
void TJ_ISA(tj_k_softmax_row_f32)(const float *x, float *y, int64_t n, bool take_log)
{
    int64_t i = 0;
    vf m0 = vf_set1(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
    for (; i + 4 * VF_N <= n; i += 4 * VF_N) {
        m0 = vf_max(m0, vf_load(x + i));
        m1 = vf_max(m1, vf_load(x + i + VF_N));
        m2 = vf_max(m2, vf_load(x + i + 2 * VF_N));
        m3 = vf_max(m3, vf_load(x + i + 3 * VF_N));
    }
    for (; i + VF_N <= n; i += VF_N) m0 = vf_max(m0, vf_load(x + i));
    if (i < n) m1 = vf_max(m1, vf_load_part(x + i, (int)(n - i), -INFINITY));
    float max = vf_hmax(vf_max(vf_max(m0, m1), vf_max(m2, m3)));

    vf vmax = vf_set1(max), s0 = vf_set1(0.0f), s1 = s0;
    for (i = 0; i + 2 * VF_N <= n; i += 2 * VF_N) {
        /* the next row, while this one computes: its first pass then finds it in cache */
        _mm_prefetch((const char *)(x + n + i), _MM_HINT_T0);
        _mm_prefetch((const char *)(x + n + i + 16), _MM_HINT_T0);
        vf e0 = exp_nonpositive(vf_sub(vf_load(x + i), vmax));
        vf e1 = exp_nonpositive(vf_sub(vf_load(x + i + VF_N), vmax));
        if (!take_log) {
            vf_store(y + i, e0);
            vf_store(y + i + VF_N, e1);
        }
        s0 = vf_add(s0, e0);
        s1 = vf_add(s1, e1);
    }
    for (; i < n; i += VF_N) {
        int part = n - i < VF_N ? (int)(n - i) : VF_N;
        /* masked lanes load -inf and contribute exp(-inf) = 0 */
        vf e = exp_nonpositive(vf_sub(vf_load_part(x + i, part, -INFINITY), vmax));
        if (!take_log) vf_store_part(y + i, e, part);
        s0 = vf_add(s0, e);
    }
    float sum = vf_hsum(vf_add(s0, s1));

    if (!take_log) {
        vf inv = vf_set1(1.0f / sum);
        for (i = 0; i + VF_N <= n; i += VF_N) vf_store(y + i, vf_mul(vf_load(y + i), inv));
        if (i < n) vf_store_part(y + i, vf_mul(vf_load_part(y + i, (int)(n - i), 0.0f), inv), (int)(n - i));
    } else {
        /* (x - max) - log(sum): exact first step, so entries near the
         * maximum keep their precision */
        vf lsum = vf_set1(logf(sum));
        for (i = 0; i + VF_N <= n; i += VF_N) vf_store(y + i, vf_sub(vf_sub(vf_load(x + i), vmax), lsum));
        if (i < n)
            vf_store_part(y + i, vf_sub(vf_sub(vf_load_part(x + i, (int)(n - i), 0.0f), vmax), lsum), (int)(n - i));
    }
}

void TJ_ISA(tj_k_exp_f32)(float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + VF_N <= n; i += VF_N) vf_store(x + i, vf_exp(vf_load(x + i)));
    if (i < n) vf_store_part(x + i, vf_exp(vf_load_part(x + i, (int)(n - i), 0.0f)), (int)(n - i));
}
