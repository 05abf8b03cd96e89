/* The convolution GEMM's micro-kernels, packing and transposes (see
 * conv_gemm.h), written once over simd_rows.h and compiled per ISA by
 * conv_gemm_avx512.c / conv_gemm_avx2.c (in-register transposes:
 * simd_rows.h's vf_transpose).
 *
 * A tile is computed in passes of PASS_ROWS rows by up to PASS_VECS vectors
 * of columns, as many accumulators as the registers hold besides the B
 * vectors and a broadcast of A: the whole 8 x 32 tile at once on AVX-512
 * (16 zmm accumulators), four 4 x 16 quarters on AVX2 (8 ymm accumulators;
 * the panels of A and B stay in L1 between the passes). Every element of C
 * gets the same fused multiply-adds in the same order whichever the split,
 * so the ISAs give the same bits. Passes wholly past mr rows or nr columns
 * are skipped; edges use masked loads and stores. */
#include <stdbool.h>

#include "conv_gemm.h"
#include "simd_rows.h"

#define MR TJ_K_GEMM_MR
#define NR TJ_K_GEMM_NR

_Static_assert(MR == 8 && NR == 32, "the micro-kernels are written for 8 x 32 tiles");

#define PASS_ROWS (VF_N == 16 ? 8 : 4)
#define PASS_VECS 2
#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* The first n floats at p (all of them when n >= VF_N, none when n <= 0),
 * the other lanes 0; and the store of the first n lanes. */
ALWAYS_INLINE vf load_lanes(const float *p, int64_t n)
{
    return n >= VF_N ? vf_load(p) : n <= 0 ? vf_set1(0.0f) : vf_load_part(p, (int)n, 0.0f);
}

ALWAYS_INLINE void store_lanes(float *p, vf v, int64_t n)
{
    if (n >= VF_N) vf_store(p, v);
    else if (n > 0) vf_store_part(p, v, (int)n);
}

/* Accumulators of one pass: rows r0 .. r0 + PASS_ROWS - 1 of the tile,
 * vectors v0 .. v0 + nv - 1 of its columns (nv <= PASS_VECS). */
typedef struct pass_acc {
    vf v[PASS_ROWS][PASS_VECS];
} pass_acc;

#define PASS_ZERO(ACC)                                                          \
    pass_acc ACC;                                                               \
    _Pragma("GCC unroll 8") for (int r_ = 0; r_ < PASS_ROWS; r_++)              \
        _Pragma("GCC unroll 2") for (int v_ = 0; v_ < PASS_VECS; v_++) ACC.v[r_][v_] = vf_set1(0.0f)

/* One step of the reduction: ACC += A column (A_AT(r) for row r0 + r) x the
 * nv vectors of the B row at B (already offset to the pass's columns). */
#define PASS_STEP(ACC, NV, A_AT, B)                                                 \
    do {                                                                            \
        vf b_[PASS_VECS];                                                           \
        _Pragma("GCC unroll 2") for (int v_ = 0; v_ < (NV); v_++) b_[v_] = vf_load((B) + v_ * VF_N); \
        _Pragma("GCC unroll 8") for (int r_ = 0; r_ < PASS_ROWS; r_++) {            \
            vf a_ = vf_set1(A_AT(r_));                                              \
            _Pragma("GCC unroll 2") for (int v_ = 0; v_ < (NV); v_++)               \
                ACC.v[r_][v_] = vf_fmadd(a_, b_[v_], ACC.v[r_][v_]);                \
        }                                                                           \
    } while (0)

/* The passes over an mr x nr corner of a tile `vecs` vectors wide, nv
 * vectors at a time: columns outer, so that the passes over one part of B
 * follow each other. */
#define FOR_EACH_PASS(VECS, NV, mr, nr)                                          \
    for (int v0 = 0; v0 < (VECS) && v0 * VF_N < (nr); v0 += (NV))              \
        for (int r0 = 0; r0 < MR && r0 < (mr); r0 += PASS_ROWS)

/* Rows r0.. and vectors v0.. of a tile: + bias[row], + beta·C (beta 0: C not
 * read), into the first mr rows and nr columns of c. With several passes
 * not inlined: its constants would otherwise be hoisted out of the loop
 * over the passes, and spill the accumulators of the loop over k. */
#if VF_N == 16
ALWAYS_INLINE
#else
static __attribute__((noinline))
#endif
void store_pass(pass_acc acc, int nv, int r0, int v0, float *c, int64_t ldc, int mr, int nr, float beta,
                const float *bias)
{
    vf vb = vf_set1(beta);
#pragma GCC unroll 8
    for (int r = 0; r < PASS_ROWS; r++) {
        if (r0 + r >= mr) break;
        float *row = c + (r0 + r) * ldc;
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++) {
            int64_t col = (int64_t)(v0 + v) * VF_N, n = nr - col;
            if (n <= 0) break;
            vf x = acc.v[r][v];
            if (bias) x = vf_add(x, vf_set1(bias[r0 + r]));
            if (beta != 0.0f) x = vf_fmadd(vb, load_lanes(row + col, n), x);
            store_lanes(row + col, x, n);
        }
    }
}

void TJ_ISA(tj_k_sgemm_ukernel)(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int mr, int nr,
                                float beta, const float *bias)
{
    FOR_EACH_PASS(NR / VF_N, PASS_VECS, mr, nr) {
        PASS_ZERO(acc);
        const float *a = ap + r0, *b = bp + v0 * VF_N;
        for (int64_t p = 0; p < kc; p++, a += MR, b += NR) {
#define A_PACKED(r) a[r]
            PASS_STEP(acc, PASS_VECS, A_PACKED, b);
#undef A_PACKED
        }
        store_pass(acc, PASS_VECS, r0, v0, c, ldc, mr, nr, beta, bias);
    }
}

void TJ_ISA(tj_k_sgemm_ukernel_offsets)(int64_t kc, const float *ap, const float *b, const int64_t *off, float *c,
                                        int64_t ldc, int mr, int nr, float beta, const float *bias)
{
    FOR_EACH_PASS(NR / VF_N, PASS_VECS, mr, nr) {
        PASS_ZERO(acc);
        const float *a = ap + r0, *bc = b + v0 * VF_N;
        for (int64_t p = 0; p < kc; p++, a += MR) {
#define A_PACKED(r) a[r]
            PASS_STEP(acc, PASS_VECS, A_PACKED, bc + off[p]);
#undef A_PACKED
        }
        store_pass(acc, PASS_VECS, r0, v0, c, ldc, mr, nr, beta, bias);
    }
}

/* The rows kernels, NR or 16 columns wide (B packed in panels of that
 * width): 8 accumulators a pass at 16 columns (one vector of 8 rows on
 * AVX-512, two of 4 rows on AVX2). */
ALWAYS_INLINE void rows_kernel(int width, int64_t rows, int64_t cols, int64_t row_stride, const float *const *arows,
                               const float *bp, float *c, int64_t ldc, int mr, int nr, float beta, const float *bias)
{
    int vecs = width / VF_N, nv = vecs < PASS_VECS ? vecs : PASS_VECS;
    FOR_EACH_PASS(vecs, nv, mr, nr) {
        PASS_ZERO(acc);
        const float *b = bp + v0 * VF_N;
        for (int64_t y = 0; y < rows; y++) {
            const float *a[PASS_ROWS];
#pragma GCC unroll 8
            for (int r = 0; r < PASS_ROWS; r++) a[r] = arows[r0 + r] + y * row_stride;
            for (int64_t x = 0; x < cols; x++, b += width) {
#define A_ROWS(r) a[r][x]
                PASS_STEP(acc, nv, A_ROWS, b);
#undef A_ROWS
            }
        }
        store_pass(acc, nv, r0, v0, c, ldc, mr, nr, beta, bias);
    }
}

void TJ_ISA(tj_k_sgemm_ukernel_rows)(int64_t rows, int64_t cols, int64_t row_stride, const float *const *arows,
                                     const float *bp, float *c, int64_t ldc, int mr, int nr, float beta,
                                     const float *bias)
{
    rows_kernel(NR, rows, cols, row_stride, arows, bp, c, ldc, mr, nr, beta, bias);
}

void TJ_ISA(tj_k_sgemm_ukernel_rows16)(int64_t rows, int64_t cols, int64_t row_stride, const float *const *arows,
                                       const float *bp, float *c, int64_t ldc, int mr, int nr, float beta,
                                       const float *bias)
{
    rows_kernel(16, rows, cols, row_stride, arows, bp, c, ldc, mr, nr, beta, bias);
}

void TJ_ISA(tj_k_sgemm_ukernel_taps)(int64_t kc, const float *const *arows, const int64_t *off, const float *bp,
                                     float *c, int64_t ldc, int mr, int nr, float beta, const float *bias)
{
    FOR_EACH_PASS(NR / VF_N, PASS_VECS, mr, nr) {
        PASS_ZERO(acc);
        const float *a[PASS_ROWS];
#pragma GCC unroll 8
        for (int r = 0; r < PASS_ROWS; r++) a[r] = arows[r0 + r];
        const float *b = bp + v0 * VF_N;
        for (int64_t p = 0; p < kc; p++, b += NR) {
            int64_t o = off[p];
#define A_TAPS(r) a[r][o]
            PASS_STEP(acc, PASS_VECS, A_TAPS, b);
#undef A_TAPS
        }
        store_pass(acc, PASS_VECS, r0, v0, c, ldc, mr, nr, beta, bias);
    }
}

/* 8 x 16 tile, one vector of columns a pass. On AVX-512 eight accumulators
 * barely cover the FMA latency, so even and odd steps of the reduction go
 * to two sets, added at the end (every ISA does the same, for the same
 * bits). */
void TJ_ISA(tj_k_sgemm_ukernel_taps16)(int64_t kc, const float *const *arows, const int64_t *off, const float *bp,
                                       float *c, int64_t ldc, int mr, int nr, float beta, const float *bias)
{
    FOR_EACH_PASS(16 / VF_N, 1, mr, nr) {
        PASS_ZERO(acc);
        PASS_ZERO(acc2);
        const float *a[PASS_ROWS];
#pragma GCC unroll 8
        for (int r = 0; r < PASS_ROWS; r++) a[r] = arows[r0 + r];
        const float *b = bp + v0 * VF_N;
        int64_t p = 0;
        for (; p + 2 <= kc; p += 2, b += 32) {
            int64_t o0 = off[p], o1 = off[p + 1];
#define A_EVEN(r) a[r][o0]
#define A_ODD(r) a[r][o1]
            PASS_STEP(acc, 1, A_EVEN, b);
            PASS_STEP(acc2, 1, A_ODD, b + 16);
#undef A_ODD
        }
        if (p < kc) {
            int64_t o0 = off[p];
            PASS_STEP(acc, 1, A_EVEN, b);
        }
#undef A_EVEN
#pragma GCC unroll 8
        for (int r = 0; r < PASS_ROWS; r++) acc.v[r][0] = vf_add(acc.v[r][0], acc2.v[r][0]);
        store_pass(acc, 1, r0, v0, c, ldc, mr, nr, beta, bias);
    }
}

void TJ_ISA(tj_k_sgemm_pack_transposed)(const float *src, int64_t rows, int64_t cols, int width, float *dst)
{
    int64_t rb = rows / VF_N * VF_N, cb = cols / VF_N * VF_N;
    for (int64_t r0 = 0; r0 < rb; r0 += VF_N) {
        float *panel = dst + (r0 / width) * width * cols + r0 % width;
        for (int64_t c0 = 0; c0 < cb; c0 += VF_N) {
            vf v[VF_N];
            for (int i = 0; i < VF_N; i++) v[i] = vf_load(src + (r0 + i) * cols + c0);
            vf_transpose(v);
            for (int i = 0; i < VF_N; i++) vf_store(panel + (c0 + i) * width, v[i]);
        }
        for (int64_t c = cb; c < cols; c++)
            for (int i = 0; i < VF_N; i++) panel[c * width + i] = src[(r0 + i) * cols + c];
    }
    for (int64_t r = rb; r < rows; r++) {
        float *col = dst + (r / width) * width * cols + r % width;
        for (int64_t c = 0; c < cols; c++) col[c * width] = src[r * cols + c];
    }
}

void TJ_ISA(tj_k_transpose_bias)(const float *src, int64_t rows, int64_t cols, int64_t lds, const float *bias,
                                 float *dst, int64_t ldd)
{
    for (int64_t r0 = 0; r0 < rows; r0 += VF_N) {
        int64_t nr = rows - r0;
        for (int64_t c0 = 0; c0 < cols; c0 += VF_N) {
            int64_t nc = cols - c0 < VF_N ? cols - c0 : VF_N;
            vf v[VF_N];
            for (int i = 0; i < VF_N; i++) v[i] = i < nr ? load_lanes(src + (r0 + i) * lds + c0, nc) : vf_set1(0.0f);
            vf_transpose(v);
            for (int j = 0; j < nc; j++)
                store_lanes(dst + (c0 + j) * ldd + r0, bias ? vf_add(v[j], vf_set1(bias[c0 + j])) : v[j], nr);
        }
    }
}

void TJ_ISA(tj_k_sgemm_pack_a)(bool trans, const float *a, int64_t lda, int64_t mc, int64_t kc, float *ap)
{
    for (int64_t ir = 0; ir < mc; ir += MR) {
        float *panel = ap + ir * kc;
        int64_t rows = mc - ir < MR ? mc - ir : MR;
        if (trans) {
            for (int64_t p = 0; p < kc; p++) store_lanes(panel + p * MR, load_lanes(a + p * lda + ir, rows), MR);
            continue;
        }
        /* MR rows x VF_N columns at a time, transposed (rows past MR of the
         * transpose's input are zeros) */
        for (int64_t p0 = 0; p0 < kc; p0 += VF_N) {
            int64_t cols = kc - p0 < VF_N ? kc - p0 : VF_N;
            vf v[VF_N];
            for (int i = 0; i < VF_N; i++) v[i] = i < rows ? load_lanes(a + (ir + i) * lda + p0, cols) : vf_set1(0.0f);
            vf_transpose(v);
            for (int j = 0; j < cols; j++) store_lanes(panel + (p0 + j) * MR, v[j], MR);
        }
    }
}

void TJ_ISA(tj_k_sgemm_pack_b)(bool trans, const float *b, int64_t ldb, int64_t kc, int64_t nc, float *bp)
{
    for (int64_t jr = 0; jr < nc; jr += NR) {
        float *panel = bp + jr * kc;
        int64_t cols = nc - jr < NR ? nc - jr : NR;
        if (!trans) {
            for (int64_t p = 0; p < kc; p++)
                for (int h = 0; h < NR / VF_N; h++)
                    vf_store(panel + p * NR + h * VF_N, load_lanes(b + p * ldb + jr + h * VF_N, cols - h * VF_N));
            continue;
        }
        /* VF_N columns x VF_N steps at a time, transposed */
        for (int h = 0; h < NR / VF_N; h++)
            for (int64_t p0 = 0; p0 < kc; p0 += VF_N) {
                int64_t steps = kc - p0 < VF_N ? kc - p0 : VF_N;
                vf v[VF_N];
                for (int i = 0; i < VF_N; i++)
                    v[i] = h * VF_N + i < cols ? load_lanes(b + (jr + h * VF_N + i) * ldb + p0, steps) : vf_set1(0.0f);
                vf_transpose(v);
                for (int q = 0; q < steps; q++) vf_store(panel + (p0 + q) * NR + h * VF_N, v[q]);
            }
    }
}

void TJ_ISA(tj_k_copy_rows)(const float *src, int64_t src_stride, float *dst, int64_t dst_stride, int64_t rows,
                            int64_t n)
{
    for (int64_t y = 0; y < rows; y++, src += src_stride, dst += dst_stride)
        for (int64_t x = 0; x < n; x += VF_N) store_lanes(dst + x, load_lanes(src + x, n - x), n - x);
}
