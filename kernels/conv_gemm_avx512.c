/* AVX-512 micro-kernels of the convolution GEMM (see conv_gemm.h): an 8 x 32
 * tile held in 16 zmm accumulators, one broadcast of A per row and two loads
 * of B per step of the reduction; edges use masked loads and stores. The
 * three variants differ only in where A and B come from. */
#include <immintrin.h>

#include "conv_gemm.h"

_Static_assert(TJ_K_GEMM_MR == 8 && TJ_K_GEMM_NR == 32, "the AVX-512 micro-kernels are written for 8 x 32 tiles");

/* One step: the tile += A column (8 values, A_AT(r)) x B row (b0, b1). */
#define TILE_STEP(A_AT, B0, B1)                                \
    do {                                                       \
        __m512 b0_ = (B0), b1_ = (B1);                         \
        _Pragma("GCC unroll 8") for (int r = 0; r < 8; r++) {  \
            __m512 a_ = _mm512_set1_ps(A_AT(r));               \
            lo[r] = _mm512_fmadd_ps(a_, b0_, lo[r]);           \
            hi[r] = _mm512_fmadd_ps(a_, b1_, hi[r]);           \
        }                                                      \
    } while (0)

#define TILE_ZERO()                                                                 \
    __m512 lo[8], hi[8];                                                            \
    _Pragma("GCC unroll 8") for (int r = 0; r < 8; r++) lo[r] = hi[r] = _mm512_setzero_ps()

static inline __attribute__((always_inline)) void store_tile(const __m512 *lo, const __m512 *hi, float *c, int64_t ldc,
                                                             int mr, int nr, float beta, const float *bias)
{
    __mmask16 m0 = nr >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nr) - 1);
    __mmask16 m1 = nr >= 32 ? (__mmask16)0xFFFF : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1) : 0;
    __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++) {
        if (r >= mr) break;
        float *row = c + r * ldc;
        __m512 v0 = lo[r], v1 = hi[r];
        if (bias) {
            __m512 add = _mm512_set1_ps(bias[r]);
            v0 = _mm512_add_ps(v0, add);
            v1 = _mm512_add_ps(v1, add);
        }
        if (beta != 0.0f) {
            v0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, row), v0);
            v1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, row + 16), v1);
        }
        _mm512_mask_storeu_ps(row, m0, v0);
        _mm512_mask_storeu_ps(row + 16, m1, v1);
    }
}

void tj_k_sgemm_ukernel_avx512(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int mr, int nr,
                               float beta, const float *bias)
{
    TILE_ZERO();
    for (int64_t p = 0; p < kc; p++, ap += 8, bp += 32) {
#define A_PACKED(r) ap[r]
        TILE_STEP(A_PACKED, _mm512_loadu_ps(bp), _mm512_loadu_ps(bp + 16));
#undef A_PACKED
    }
    store_tile(lo, hi, c, ldc, mr, nr, beta, bias);
}

void tj_k_sgemm_ukernel_offsets_avx512(int64_t kc, const float *ap, const float *b, const int64_t *off, float *c,
                                       int64_t ldc, int mr, int nr, float beta, const float *bias)
{
    TILE_ZERO();
    for (int64_t p = 0; p < kc; p++, ap += 8) {
        const float *row = b + off[p];
#define A_PACKED(r) ap[r]
        TILE_STEP(A_PACKED, _mm512_loadu_ps(row), _mm512_loadu_ps(row + 16));
#undef A_PACKED
    }
    store_tile(lo, hi, c, ldc, mr, nr, beta, bias);
}

void tj_k_sgemm_ukernel_rows_avx512(int64_t rows, int64_t cols, int64_t row_stride, const float *const *arows,
                                    const float *bp, float *c, int64_t ldc, int mr, int nr, float beta,
                                    const float *bias)
{
    TILE_ZERO();
    for (int64_t y = 0; y < rows; y++) {
        const float *a[8];
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) a[r] = arows[r] + y * row_stride;
        for (int64_t x = 0; x < cols; x++, bp += 32) {
#define A_ROWS(r) a[r][x]
            TILE_STEP(A_ROWS, _mm512_loadu_ps(bp), _mm512_loadu_ps(bp + 16));
#undef A_ROWS
        }
    }
    store_tile(lo, hi, c, ldc, mr, nr, beta, bias);
}

void tj_k_sgemm_ukernel_taps_avx512(int64_t kc, const float *const *arows, const int64_t *off, const float *bp,
                                    float *c, int64_t ldc, int mr, int nr, float beta, const float *bias)
{
    TILE_ZERO();
    const float *a[8];
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++) a[r] = arows[r];
    for (int64_t p = 0; p < kc; p++, bp += 32) {
        int64_t o = off[p];
#define A_TAPS(r) a[r][o]
        TILE_STEP(A_TAPS, _mm512_loadu_ps(bp), _mm512_loadu_ps(bp + 16));
#undef A_TAPS
    }
    store_tile(lo, hi, c, ldc, mr, nr, beta, bias);
}

/* 8 x 16 tile. Eight accumulators barely cover the FMA latency, so even and
 * odd steps of the reduction go to two sets, added at the end. */
void tj_k_sgemm_ukernel_taps16_avx512(int64_t kc, const float *const *arows, const int64_t *off, const float *bp,
                                      float *c, int64_t ldc, int mr, int nr, float beta, const float *bias)
{
    __m512 acc[8], acc2[8];
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++) acc[r] = acc2[r] = _mm512_setzero_ps();
    const float *a0 = arows[0], *a1 = arows[1], *a2 = arows[2], *a3 = arows[3];
    const float *a4 = arows[4], *a5 = arows[5], *a6 = arows[6], *a7 = arows[7];
#define TAPS16_STEP(A, O, B)                                                                                     \
    do {                                                                                                         \
        A[0] = _mm512_fmadd_ps(_mm512_set1_ps(a0[O]), B, A[0]);                                                  \
        A[1] = _mm512_fmadd_ps(_mm512_set1_ps(a1[O]), B, A[1]);                                                  \
        A[2] = _mm512_fmadd_ps(_mm512_set1_ps(a2[O]), B, A[2]);                                                  \
        A[3] = _mm512_fmadd_ps(_mm512_set1_ps(a3[O]), B, A[3]);                                                  \
        A[4] = _mm512_fmadd_ps(_mm512_set1_ps(a4[O]), B, A[4]);                                                  \
        A[5] = _mm512_fmadd_ps(_mm512_set1_ps(a5[O]), B, A[5]);                                                  \
        A[6] = _mm512_fmadd_ps(_mm512_set1_ps(a6[O]), B, A[6]);                                                  \
        A[7] = _mm512_fmadd_ps(_mm512_set1_ps(a7[O]), B, A[7]);                                                  \
    } while (0)
    int64_t p = 0;
    for (; p + 2 <= kc; p += 2, bp += 32) {
        int64_t o0 = off[p], o1 = off[p + 1];
        __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
        TAPS16_STEP(acc, o0, b0);
        TAPS16_STEP(acc2, o1, b1);
    }
    if (p < kc) {
        int64_t o0 = off[p];
        __m512 b0 = _mm512_loadu_ps(bp);
        TAPS16_STEP(acc, o0, b0);
    }
#undef TAPS16_STEP
    __mmask16 m = nr >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nr) - 1);
    for (int r = 0; r < mr; r++) {
        __m512 v = _mm512_add_ps(acc[r], acc2[r]);
        if (bias) v = _mm512_add_ps(v, _mm512_set1_ps(bias[r]));
        if (beta != 0.0f) v = _mm512_fmadd_ps(_mm512_set1_ps(beta), _mm512_maskz_loadu_ps(m, c + r * ldc), v);
        _mm512_mask_storeu_ps(c + r * ldc, m, v);
    }
}

/* 8 x 16 tile of the rows kernel (see taps16). */
void tj_k_sgemm_ukernel_rows16_avx512(int64_t rows, int64_t cols, int64_t row_stride, const float *const *arows,
                                      const float *bp, float *c, int64_t ldc, int mr, int nr, float beta,
                                      const float *bias)
{
    __m512 acc[8];
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++) acc[r] = _mm512_setzero_ps();
    for (int64_t y = 0; y < rows; y++) {
        const float *a[8];
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) a[r] = arows[r] + y * row_stride;
        for (int64_t x = 0; x < cols; x++, bp += 16) {
            __m512 b = _mm512_loadu_ps(bp);
#pragma GCC unroll 8
            for (int r = 0; r < 8; r++) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[r][x]), b, acc[r]);
        }
    }
    __mmask16 m = nr >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nr) - 1);
    for (int r = 0; r < mr; r++) {
        __m512 v = acc[r];
        if (bias) v = _mm512_add_ps(v, _mm512_set1_ps(bias[r]));
        if (beta != 0.0f) v = _mm512_fmadd_ps(_mm512_set1_ps(beta), _mm512_maskz_loadu_ps(m, c + r * ldc), v);
        _mm512_mask_storeu_ps(c + r * ldc, m, v);
    }
}

/* In-register transpose of 16 rows of 16 floats. */
static inline __attribute__((always_inline)) void transpose16(__m512 *r)
{
    __m512 t[16], u[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        u[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            t[8 * i + j] = _mm512_shuffle_f32x4(u[8 * i + j], u[8 * i + 4 + j], 0x88);
            t[8 * i + 4 + j] = _mm512_shuffle_f32x4(u[8 * i + j], u[8 * i + 4 + j], 0xdd);
        }
    for (int j = 0; j < 8; j++) {
        r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
        r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd);
    }
}

void tj_k_sgemm_pack_transposed_avx512(const float *src, int64_t rows, int64_t cols, int width, float *dst)
{
    int64_t r16 = rows / 16 * 16, c16 = cols / 16 * 16;
    for (int64_t r0 = 0; r0 < r16; r0 += 16) {
        float *panel = dst + (r0 / width) * width * cols + r0 % width;
        for (int64_t c0 = 0; c0 < c16; c0 += 16) {
            __m512 v[16];
            for (int i = 0; i < 16; i++) v[i] = _mm512_loadu_ps(src + (r0 + i) * cols + c0);
            transpose16(v);
            for (int i = 0; i < 16; i++) _mm512_storeu_ps(panel + (c0 + i) * width, v[i]);
        }
        for (int64_t c = c16; c < cols; c++)
            for (int i = 0; i < 16; i++) panel[c * width + i] = src[(r0 + i) * cols + c];
    }
    for (int64_t r = r16; r < rows; r++) {
        float *col = dst + (r / width) * width * cols + r % width;
        for (int64_t c = 0; c < cols; c++) col[c * width] = src[r * cols + c];
    }
}

void tj_k_transpose_bias_avx512(const float *src, int64_t rows, int64_t cols, int64_t lds, const float *bias,
                                float *dst, int64_t ldd)
{
    for (int64_t r0 = 0; r0 < rows; r0 += 16) {
        int64_t nr = rows - r0 < 16 ? rows - r0 : 16;
        __mmask16 mr = (__mmask16)((1u << nr) - 1);
        for (int64_t c0 = 0; c0 < cols; c0 += 16) {
            int64_t nc = cols - c0 < 16 ? cols - c0 : 16;
            __mmask16 mc = (__mmask16)((1u << nc) - 1);
            __m512 v[16];
            for (int i = 0; i < 16; i++)
                v[i] = i < nr ? _mm512_maskz_loadu_ps(mc, src + (r0 + i) * lds + c0) : _mm512_setzero_ps();
            transpose16(v);
            for (int j = 0; j < nc; j++) {
                __m512 x = bias ? _mm512_add_ps(v[j], _mm512_set1_ps(bias[c0 + j])) : v[j];
                _mm512_mask_storeu_ps(dst + (c0 + j) * ldd + r0, mr, x);
            }
        }
    }
}

static __mmask16 mask_below(int64_t n) { return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? 0 : (__mmask16)((1u << n) - 1); }

void tj_k_sgemm_pack_a_avx512(bool trans, const float *a, int64_t lda, int64_t mc, int64_t kc, float *ap)
{
    for (int64_t ir = 0; ir < mc; ir += 8) {
        float *panel = ap + ir * kc;
        int64_t rows = mc - ir < 8 ? mc - ir : 8;
        if (trans) {
            __mmask8 m = (__mmask8)mask_below(rows);
            for (int64_t p = 0; p < kc; p++)
                _mm256_storeu_ps(panel + p * 8, _mm256_maskz_loadu_ps(m, a + p * lda + ir));
            continue;
        }
        /* 8 rows x 16 columns at a time, transposed (rows 8..15 of the
         * transpose16 input are zeros) */
        for (int64_t p0 = 0; p0 < kc; p0 += 16) {
            int64_t cols = kc - p0 < 16 ? kc - p0 : 16;
            __mmask16 m = mask_below(cols);
            __m512 v[16];
            for (int i = 0; i < 16; i++)
                v[i] = i < rows ? _mm512_maskz_loadu_ps(m, a + (ir + i) * lda + p0) : _mm512_setzero_ps();
            transpose16(v);
            for (int j = 0; j < cols; j++) _mm256_storeu_ps(panel + (p0 + j) * 8, _mm512_castps512_ps256(v[j]));
        }
    }
}

void tj_k_sgemm_pack_b_avx512(bool trans, const float *b, int64_t ldb, int64_t kc, int64_t nc, float *bp)
{
    for (int64_t jr = 0; jr < nc; jr += 32) {
        float *panel = bp + jr * kc;
        int64_t cols = nc - jr < 32 ? nc - jr : 32;
        if (!trans) {
            __mmask16 m0 = mask_below(cols), m1 = mask_below(cols - 16);
            for (int64_t p = 0; p < kc; p++) {
                _mm512_storeu_ps(panel + p * 32, _mm512_maskz_loadu_ps(m0, b + p * ldb + jr));
                _mm512_storeu_ps(panel + p * 32 + 16, _mm512_maskz_loadu_ps(m1, b + p * ldb + jr + 16));
            }
            continue;
        }
        /* 16 columns x 16 steps at a time, transposed */
        for (int h = 0; h < 2; h++)
            for (int64_t p0 = 0; p0 < kc; p0 += 16) {
                int64_t steps = kc - p0 < 16 ? kc - p0 : 16;
                __mmask16 m = mask_below(steps);
                __m512 v[16];
                for (int i = 0; i < 16; i++)
                    v[i] = h * 16 + i < cols ? _mm512_maskz_loadu_ps(m, b + (jr + h * 16 + i) * ldb + p0)
                                             : _mm512_setzero_ps();
                transpose16(v);
                for (int q = 0; q < steps; q++) _mm512_storeu_ps(panel + (p0 + q) * 32 + h * 16, v[q]);
            }
    }
}

void tj_k_copy_rows_avx512(const float *src, int64_t src_stride, float *dst, int64_t dst_stride, int64_t rows,
                           int64_t n)
{
    for (int64_t y = 0; y < rows; y++, src += src_stride, dst += dst_stride)
        for (int64_t x = 0; x < n; x += 16) {
            __mmask16 m = mask_below(n - x);
            _mm512_mask_storeu_ps(dst + x, m, _mm512_maskz_loadu_ps(m, src + x));
        }
}
