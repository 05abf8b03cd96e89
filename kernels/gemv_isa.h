/* float32 matrix-vector products (see gemv.h), written once over
 * simd_rows.h and compiled per ISA by gemv_avx512.c and gemv_avx2.c: the
 * row form as dot products of four rows at a time with several vectors at
 * a time (VB: 4 on AVX-512, its 16 accumulators in 32 zmm registers; 3 on
 * AVX2, 12 accumulators, the vectors' and a row's load in 16 ymm; a lone
 * vector takes eight rows at a time on AVX-512, each summed as in four), the
 * column form as chunks of sums that stay in L1, updated row by row.
 * Accumulation in float, as BLAS.
 *
 * Within one ISA each output is computed the same way wherever it falls:
 * the row form's dot product of a row with a vector depends only on the
 * size of the vector's group (a group of one gets two accumulators per
 * row) and whether the row is in a block of four (one reduction of four
 * rows at once), both fixed by the vector's and the row's index; the
 * column form's lane j depends on nothing but column j. So splitting the
 * outputs over threads at multiples of four rows (gemv.c) or at any column
 * keeps the bytes. */
#include "gemv.h"
#include "simd_rows.h"

#define ALWAYS_INLINE static inline __attribute__((always_inline))

#if VF_N == 16

#define VB 4 /* vectors per block of the row form */

/* Lanes [0, n) of the vector at p, the others 0; n <= 0: none, n >= VF_N: all. */
ALWAYS_INLINE vf lanes_load(const float *p, int64_t n) { return _mm512_maskz_loadu_ps(tj_k_lanes16(n), p); }
ALWAYS_INLINE void lanes_store(float *p, vf v, int64_t n) { _mm512_mask_storeu_ps(p, tj_k_lanes16(n), v); }

/* a's 16 lanes folded into 8: low half + high half */
ALWAYS_INLINE __m256 fold8(vf a)
{
    return _mm256_add_ps(_mm512_castps512_ps256(a), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
}

#else

#define VB 3

ALWAYS_INLINE vf lanes_load(const float *p, int64_t n)
{
    return n >= VF_N ? vf_load(p) : vf_load_part(p, n <= 0 ? 0 : (int)n, 0.0f);
}
ALWAYS_INLINE void lanes_store(float *p, vf v, int64_t n)
{
    if (n >= VF_N) vf_store(p, v);
    else if (n > 0) vf_store_part(p, v, (int)n);
}
ALWAYS_INLINE __m256 fold8(vf a) { return a; }

#endif

/* y = alpha * acc + beta * y (beta 0: y is not read) */
static inline void put(float *y, float acc, float alpha, float beta)
{
    *y = beta == 0 ? alpha * acc : alpha * acc + beta * *y;
}

/* The sums of the lanes of a[0..3], in one vector: each folded to 8 lanes,
 * then pairwise horizontal adds (13 instructions for what four separate
 * reductions do in ~32 on AVX-512; it matters for short rows). */
ALWAYS_INLINE __m128 sum4(const vf *a)
{
    __m256 f[4];
    for (int r = 0; r < 4; r++) f[r] = fold8(a[r]);
    __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(f[0], f[1]), _mm256_hadd_ps(f[2], f[3]));
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

/* Dot products of rows r < R of m (stride ld) with vectors v < V (x + v*xvs)
 * over n columns into out[v*R + r]. One vector gets two accumulators per
 * row to hide the FMA latency; several share each row's loads. */
#define DOT(V, R, U)                                                                                          \
    static void dot_##V##x##R(const float *m, int64_t ld, const float *x, int64_t xvs, int64_t n, float *out)  \
    {                                                                                                         \
        vf a[U][V][R];                                                                                        \
        for (int u = 0; u < U; u++)                                                                           \
            for (int v = 0; v < V; v++)                                                                       \
                for (int r = 0; r < R; r++) a[u][v][r] = vf_set1(0.0f);                                       \
        int64_t p = 0;                                                                                        \
        for (; p + VF_N * U <= n; p += VF_N * U)                                                              \
            for (int u = 0; u < U; u++) {                                                                     \
                vf xv[V];                                                                                     \
                for (int v = 0; v < V; v++) xv[v] = vf_load(x + v * xvs + p + VF_N * u);                     \
                for (int r = 0; r < R; r++) {                                                                 \
                    vf w = vf_load(m + r * ld + p + VF_N * u);                                                \
                    for (int v = 0; v < V; v++) a[u][v][r] = vf_fmadd(w, xv[v], a[u][v][r]);                  \
                }                                                                                             \
            }                                                                                                 \
        for (; p < n; p += VF_N) {                                                                            \
            vf xv[V];                                                                                         \
            for (int v = 0; v < V; v++) xv[v] = lanes_load(x + v * xvs + p, n - p);                           \
            for (int r = 0; r < R; r++) {                                                                     \
                vf w = lanes_load(m + r * ld + p, n - p);                                                     \
                for (int v = 0; v < V; v++) a[0][v][r] = vf_fmadd(w, xv[v], a[0][v][r]);                     \
            }                                                                                                 \
        }                                                                                                     \
        for (int v = 0; v < V; v++) {                                                                         \
            for (int u = 1; u < U; u++)                                                                       \
                for (int r = 0; r < R; r++) a[0][v][r] = vf_add(a[0][v][r], a[u][v][r]);                      \
            if (R % 4 == 0)                                                                                   \
                for (int r = 0; r < R; r += 4) _mm_storeu_ps(out + v * R + r, sum4(a[0][v] + r));             \
            else                                                                                              \
                for (int r = 0; r < R; r++) out[v * R + r] = vf_hsum(a[0][v][r]);                             \
        }                                                                                                     \
    }
DOT(1, 4, 2)
DOT(2, 4, 1)
DOT(3, 4, 1)
DOT(1, 1, 2)
DOT(2, 1, 1)
DOT(3, 1, 1)
#if VB >= 4
DOT(4, 4, 1)
DOT(4, 1, 1)
/* One vector, eight rows: its rows' sums come out as dot_1x4's (the same
 * accumulators and reductions per row), with one load of the vector per
 * eight of the matrix instead of four: 1.3-1.4x on L2-resident rows
 * (mlp_b1's layers). Its 16 accumulators need AVX-512's 32 registers. */
DOT(1, 8, 2)
#endif
#undef DOT

typedef void (*dot_fn)(const float *, int64_t, const float *, int64_t, int64_t, float *);
static const dot_fn dot4[5] = {NULL, dot_1x4, dot_2x4, dot_3x4,
#if VB >= 4
                                 dot_4x4
#endif
};
static const dot_fn dot1[5] = {NULL, dot_1x1, dot_2x1, dot_3x1,
#if VB >= 4
                                 dot_4x1
#endif
};

/* Bytes of vectors per pass: they stay in L2 (1 MiB here) while the
 * matrix streams through. */
#define PANEL_BYTES (384 * 1024)

/* Each block of four rows is loaded into L1 once per pass and multiplied
 * with every vector of a panel, VB at a time: the matrix streams through
 * once per panel (the vectors stay in L2), and each 4 x VB block of dot
 * products does 4 * VB FMAs per 4 + VB loads. Long rows are cut into
 * passes of tj_k_gemv_n_pass_cols columns (gemv.h); later passes add to y.
 * One pass: columns [0, n) of the rows, in a call whose passes are kc
 * columns (the panels of vectors depend on kc), adding to y with b. */
void TJ_ISA(tj_k_gemv_n_f32_pass)(int64_t nv, int64_t rows, int64_t n, int64_t kc, float alpha, const float *m,
                                  int64_t ld, const float *x, int64_t x_vs, float b, float *y, int64_t incy,
                                  int64_t y_vs)
{
    int64_t panel = PANEL_BYTES / (kc * (int64_t)sizeof(float)) / VB * VB;
    float d[4 * VB];
    for (int64_t w0 = 0; w0 < nv; w0 += panel) {
        int64_t w1 = nv - w0 < panel ? nv : w0 + panel;
        for (int64_t i = 0; i < rows; i += 4) {
            int nr = rows - i < 4 ? (int)(rows - i) : 4;
            const float *mi = m + i * ld;
#if VB >= 4
            if (nv == 1 && rows - i >= 8) {
                dot_1x8(mi, ld, x, x_vs, n, d);
                for (int r = 0; r < 8; r++) put(y + (i + r) * incy, d[r], alpha, b);
                i += 4;
                continue;
            }
#endif
            for (int64_t v0 = w0; v0 < w1; v0 += VB) {
                int nvec = w1 - v0 < VB ? (int)(w1 - v0) : VB;
                const float *xv = x + v0 * x_vs;
                float *yv = y + v0 * y_vs + i * incy;
                if (nr == 4) {
                    dot4[nvec](mi, ld, xv, x_vs, n, d);
                    for (int v = 0; v < nvec; v++)
                        for (int r = 0; r < 4; r++) put(yv + v * y_vs + r * incy, d[v * 4 + r], alpha, b);
                    continue;
                }
                for (int r = 0; r < nr; r++) {
                    dot1[nvec](mi + r * ld, ld, xv, x_vs, n, d);
                    for (int v = 0; v < nvec; v++) put(yv + v * y_vs + r * incy, d[v], alpha, b);
                }
            }
        }
    }
}

void TJ_ISA(tj_k_gemv_n_f32)(int64_t nv, int64_t rows, int64_t cols, float alpha, const float *m, int64_t ld,
                             const float *x, int64_t x_vs, float beta, float *y, int64_t incy, int64_t y_vs)
{
    int64_t kc = tj_k_gemv_n_pass_cols(cols);
    for (int64_t p0 = 0; p0 < cols; p0 += kc)
        TJ_ISA(tj_k_gemv_n_f32_pass)(nv, rows, cols - p0 < kc ? cols - p0 : kc, kc, alpha, m + p0, ld, x + p0, x_vs,
                                     p0 == 0 ? beta : 1.0f, y, incy, y_vs);
}

/* Column form by chunks of CHUNK columns whose sums stay in L1: eight rows
 * at a time are added into the chunk's sums, so that the matrix is read
 * row after row (sequential streams; a strip of columns down all the rows
 * would jump a whole row between loads). */
#define CHUNK 2048

/* acc[0, n) += the n columns at r of eight rows ld apart times xv[0..7]
 * (n >= VF_N: a whole vector; acc is padded to whole vectors). */
ALWAYS_INLINE void add_rows8(float *acc, const float *r, int64_t ld, const vf *xv, int64_t n)
{
    vf a = vf_load(acc), b = lanes_load(r + 4 * ld, n);
    b = vf_mul(b, xv[4]);
    a = vf_fmadd(lanes_load(r, n), xv[0], a);
    b = vf_fmadd(lanes_load(r + 5 * ld, n), xv[5], b);
    a = vf_fmadd(lanes_load(r + ld, n), xv[1], a);
    b = vf_fmadd(lanes_load(r + 6 * ld, n), xv[6], b);
    a = vf_fmadd(lanes_load(r + 2 * ld, n), xv[2], a);
    b = vf_fmadd(lanes_load(r + 7 * ld, n), xv[7], b);
    a = vf_fmadd(lanes_load(r + 3 * ld, n), xv[3], a);
    vf_store(acc, vf_add(a, b));
}

void TJ_ISA(tj_k_gemv_t_f32)(int64_t rows, int64_t cols, float alpha, const float *m, int64_t ld, const float *x,
                             float beta, float *y, int64_t incy)
{
    _Alignas(64) float acc[CHUNK];
    vf va = vf_set1(alpha), vb = vf_set1(beta);
    for (int64_t j0 = 0; j0 < cols; j0 += CHUNK) {
        int64_t w = cols - j0 < CHUNK ? cols - j0 : CHUNK;
        const float *mc = m + j0;
        int64_t p = 0;
        for (int64_t j = 0; j < w; j += VF_N) vf_store(acc + j, vf_set1(0.0f));
        for (; p + 8 <= rows; p += 8) {
            const float *r = mc + p * ld;
            vf xv[8];
            for (int q = 0; q < 8; q++) xv[q] = vf_set1(x[p + q]);
            int64_t j = 0;
            for (; j + VF_N <= w; j += VF_N) add_rows8(acc + j, r + j, ld, xv, VF_N);
            if (j < w) add_rows8(acc + j, r + j, ld, xv, w - j);
        }
        for (; p < rows; p++) {
            vf x0 = vf_set1(x[p]);
            for (int64_t j = 0; j < w; j += VF_N)
                vf_store(acc + j, vf_fmadd(lanes_load(mc + p * ld + j, w - j), x0, vf_load(acc + j)));
        }
        float *yc = y + j0 * incy;
        if (incy != 1) {
            for (int64_t j = 0; j < w; j++) put(yc + j * incy, acc[j], alpha, beta);
            continue;
        }
        for (int64_t j = 0; j < w; j += VF_N) {
            vf r = vf_mul(vf_load(acc + j), va);
            if (beta != 0) r = vf_fmadd(lanes_load(yc + j, w - j), vb, r);
            lanes_store(yc + j, r, w - j);
        }
    }
}
