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

void tj_k_sgemm_pack_transposed_avx512(const float *src, int64_t rows, int64_t cols, float *dst)
{
    int64_t r16 = rows / 16 * 16, c16 = cols / 16 * 16;
    for (int64_t r0 = 0; r0 < r16; r0 += 16) {
        float *panel = dst + (r0 / 32) * 32 * cols + r0 % 32;
        for (int64_t c0 = 0; c0 < c16; c0 += 16) {
            __m512 v[16];
            for (int i = 0; i < 16; i++) v[i] = _mm512_loadu_ps(src + (r0 + i) * cols + c0);
            transpose16(v);
            for (int i = 0; i < 16; i++) _mm512_storeu_ps(panel + (c0 + i) * 32, v[i]);
        }
        for (int64_t c = c16; c < cols; c++)
            for (int i = 0; i < 16; i++) panel[c * 32 + i] = src[(r0 + i) * cols + c];
    }
    for (int64_t r = r16; r < rows; r++) {
        float *col = dst + (r / 32) * 32 * cols + r % 32;
        for (int64_t c = 0; c < cols; c++) col[c * 32] = src[r * cols + c];
    }
}
