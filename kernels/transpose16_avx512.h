/* A 16 x 16 float32 transpose in AVX-512 registers and the lane mask of a
 * partial vector, for the files built with -mavx512f (simd_rows.h's
 * vf_transpose for the GEMM templates, copy_avx512.c copies transposed
 * tiles, attention_avx512.c transposes key blocks, gemv_avx512.c masks row
 * tails). */
#ifndef TJIT_KERNELS_TRANSPOSE16_AVX512_H
#define TJIT_KERNELS_TRANSPOSE16_AVX512_H

#include <immintrin.h>

/* r[i][j] <- r[j][i]: four rounds of shuffles (pairs of floats, pairs of
 * doubles, then 128-bit lanes twice). */
static inline void tj_k_transpose16(__m512 r[16])
{
    __m512 t[16], u[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    /* u[4g + c], lane L: rows 4g..4g+3 of column 4L + c */
    for (int g = 0; g < 4; g++) {
        __m512d lo = _mm512_castps_pd(t[4 * g]), hi = _mm512_castps_pd(t[4 * g + 1]);
        __m512d lo2 = _mm512_castps_pd(t[4 * g + 2]), hi2 = _mm512_castps_pd(t[4 * g + 3]);
        u[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(lo, lo2));
        u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(lo, lo2));
        u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(hi, hi2));
        u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(hi, hi2));
    }
    for (int c = 0; c < 4; c++) {
        __m512 v = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88), w = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xdd);
        __m512 v2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88), w2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xdd);
        r[c] = _mm512_shuffle_f32x4(v, v2, 0x88);
        r[4 + c] = _mm512_shuffle_f32x4(w, w2, 0x88);
        r[8 + c] = _mm512_shuffle_f32x4(v, v2, 0xdd);
        r[12 + c] = _mm512_shuffle_f32x4(w, w2, 0xdd);
    }
}

/* Lanes [0, n) of a vector (n <= 0: none, n >= 16: all). */
static inline __mmask16 tj_k_lanes16(int64_t n)
{
    return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? 0 : (__mmask16)((1u << n) - 1);
}

#endif
