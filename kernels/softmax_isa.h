/* float32 softmax pieces, written once over simd_rows.h and compiled per
 * ISA by softmax_avx512.c / softmax_avx2.c. */
#include <stdbool.h>

#include "gelu_tables.h"
#include "simd_rows.h"
#include "softmax.h"

#define EXP_LOG2E 1.44269504088896341f
#define EXP_LN2_HI 0.693359375f /* 9 significant bits: n EXP_LN2_HI is exact */
#define EXP_LN2_LO -2.12194440e-4f

/* e^t for t <= 0 (or nan, kept), about 1 ulp, cheaper than SLEEF's general
 * expf: t = n ln2 + r with |r| <= ln2/2, e^r = 1 + r P(r) by GELU_EXP (the
 * exp polynomial of the gelu kernel, relative error 4e-9), times 2^n
 * (results below FLT_MIN rounded once; t < -110 gives 0). */
static inline vf exp_nonpositive(vf t)
{
    t = vf_max(vf_set1(-110.0f), t); /* maxps keeps its second operand's nan */
#if defined(__AVX512F__)
    vf n = _mm512_roundscale_ps(vf_mul(t, vf_set1(EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    vf r = _mm512_fnmadd_ps(n, vf_set1(EXP_LN2_LO), _mm512_fnmadd_ps(n, vf_set1(EXP_LN2_HI), t));
#else
    vf n = _mm256_round_ps(vf_mul(t, vf_set1(EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    vf r = _mm256_fnmadd_ps(n, vf_set1(EXP_LN2_LO), _mm256_fnmadd_ps(n, vf_set1(EXP_LN2_HI), t));
#endif
    vf p = vf_set1(GELU_EXP[5]);
    for (int j = 4; j >= 0; j--) p = vf_fmadd(p, r, vf_set1(GELU_EXP[j]));
    p = vf_fmadd(r, p, vf_set1(1.0f));
#if defined(__AVX512F__)
    return _mm512_scalef_ps(p, n);
#else
    /* 2^n in two normal factors (n >= -159): exact, then rounded once */
    __m256i k = _mm256_cvtps_epi32(n), k1 = _mm256_srai_epi32(k, 1), bias = _mm256_set1_epi32(127);
    vf f1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
    vf f2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(k, k1), bias), 23));
    return vf_mul(vf_mul(p, f1), f2);
#endif
}

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
