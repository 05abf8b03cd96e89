/* AVX-512 float32 matrix-vector products (see gemv.h): the row form as dot
 * products of four rows at a time with four vectors at a time, the column
 * form as chunks of sums that stay in L1, updated row by row. Accumulation
 * in float, as BLAS. */
#include <immintrin.h>

#include "gemv.h"
#include "transpose16_avx512.h"


/* y = alpha * acc + beta * y (beta 0: y is not read) */
static inline void put(float *y, float acc, float alpha, float beta)
{
    *y = beta == 0 ? alpha * acc : alpha * acc + beta * *y;
}

/* The sums of the lanes of a[0..3], in one vector: halves folded, then
 * pairwise horizontal adds (13 instructions for what four separate
 * reductions do in ~32; it matters for short rows). */
static inline __m128 sum4(const __m512 *a)
{
    __m256 f[4];
    for (int r = 0; r < 4; r++)
        f[r] = _mm256_add_ps(_mm512_castps512_ps256(a[r]), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a[r]), 1)));
    __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(f[0], f[1]), _mm256_hadd_ps(f[2], f[3]));
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

/* Dot products of rows r < R of m (stride ld) with vectors v < V (x + v*xvs)
 * over n columns into out[v*R + r]. One vector gets two accumulators per
 * row to hide the FMA latency; several share each row's loads. */
#define DOT(V, R, U)                                                                                          \
    static void dot_##V##x##R(const float *m, int64_t ld, const float *x, int64_t xvs, int64_t n, float *out)  \
    {                                                                                                         \
        __m512 a[U][V][R];                                                                                    \
        for (int u = 0; u < U; u++)                                                                           \
            for (int v = 0; v < V; v++)                                                                       \
                for (int r = 0; r < R; r++) a[u][v][r] = _mm512_setzero_ps();                                 \
        int64_t p = 0;                                                                                        \
        for (; p + 16 * U <= n; p += 16 * U)                                                                  \
            for (int u = 0; u < U; u++) {                                                                     \
                __m512 xv[V];                                                                                 \
                for (int v = 0; v < V; v++) xv[v] = _mm512_loadu_ps(x + v * xvs + p + 16 * u);                \
                for (int r = 0; r < R; r++) {                                                                 \
                    __m512 w = _mm512_loadu_ps(m + r * ld + p + 16 * u);                                      \
                    for (int v = 0; v < V; v++) a[u][v][r] = _mm512_fmadd_ps(w, xv[v], a[u][v][r]);           \
                }                                                                                             \
            }                                                                                                 \
        for (; p < n; p += 16) {                                                                              \
            __mmask16 k = tj_k_lanes16(n - p);                                                                   \
            __m512 xv[V];                                                                                     \
            for (int v = 0; v < V; v++) xv[v] = _mm512_maskz_loadu_ps(k, x + v * xvs + p);                    \
            for (int r = 0; r < R; r++) {                                                                     \
                __m512 w = _mm512_maskz_loadu_ps(k, m + r * ld + p);                                          \
                for (int v = 0; v < V; v++) a[0][v][r] = _mm512_fmadd_ps(w, xv[v], a[0][v][r]);               \
            }                                                                                                 \
        }                                                                                                     \
        for (int v = 0; v < V; v++) {                                                                         \
            for (int u = 1; u < U; u++)                                                                       \
                for (int r = 0; r < R; r++) a[0][v][r] = _mm512_add_ps(a[0][v][r], a[u][v][r]);              \
            if (R == 4) _mm_storeu_ps(out + v * R, sum4(a[0][v]));                                            \
            else                                                                                              \
                for (int r = 0; r < R; r++) out[v * R + r] = _mm512_reduce_add_ps(a[0][v][r]);                \
        }                                                                                                     \
    }
DOT(1, 4, 2)
DOT(2, 4, 1)
DOT(3, 4, 1)
DOT(4, 4, 1)
DOT(1, 1, 2)
DOT(2, 1, 1)
DOT(3, 1, 1)
DOT(4, 1, 1)
#undef DOT

typedef void (*dot_fn)(const float *, int64_t, const float *, int64_t, int64_t, float *);
static const dot_fn dot4[5] = {NULL, dot_1x4, dot_2x4, dot_3x4, dot_4x4};
static const dot_fn dot1[5] = {NULL, dot_1x1, dot_2x1, dot_3x1, dot_4x1};

/* Columns per pass of the row form: four rows and four vectors of this
 * length (32 KiB) stay in L1 while the rows meet every vector. */
#define KC 1024
/* Bytes of vectors per pass: they stay in L2 (1 MiB here) while the
 * matrix streams through. */
#define PANEL_BYTES (384 * 1024)

/* Each block of four rows is loaded into L1 once per pass and multiplied
 * with every vector of a panel, four at a time: the matrix streams through
 * once per panel (the vectors stay in L2), and each 4 x 4 block of dot
 * products does 16 FMAs per 8 loads. Long rows are cut into passes over KC
 * columns at most; later passes add to y. */
void tj_k_gemv_n_f32_avx512(int64_t nv, int64_t rows, int64_t cols, float alpha, const float *m, int64_t ld,
                            const float *x, int64_t x_vs, float beta, float *y, int64_t incy, int64_t y_vs)
{
    int64_t passes = (cols + KC - 1) / KC, kc = ((cols + passes - 1) / passes + 15) / 16 * 16;
    int64_t panel = PANEL_BYTES / (kc * (int64_t)sizeof(float)) / 4 * 4;
    float d[16];
    for (int64_t p0 = 0; p0 < cols; p0 += kc) {
        int64_t n = cols - p0 < kc ? cols - p0 : kc;
        float b = p0 == 0 ? beta : 1.0f;
        for (int64_t w0 = 0; w0 < nv; w0 += panel) {
            int64_t w1 = nv - w0 < panel ? nv : w0 + panel;
            for (int64_t i = 0; i < rows; i += 4) {
                int nr = rows - i < 4 ? (int)(rows - i) : 4;
                const float *mi = m + i * ld + p0;
                for (int64_t v0 = w0; v0 < w1; v0 += 4) {
                    int nvec = w1 - v0 < 4 ? (int)(w1 - v0) : 4;
                    const float *xv = x + v0 * x_vs + p0;
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
}

/* Column form by chunks of CHUNK columns whose sums stay in L1: eight rows
 * at a time are added into the chunk's sums, so that the matrix is read
 * row after row (sequential streams; a strip of columns down all the rows
 * would jump a whole row between loads). */
#define CHUNK 2048

void tj_k_gemv_t_f32_avx512(int64_t rows, int64_t cols, float alpha, const float *m, int64_t ld, const float *x,
                            float beta, float *y, int64_t incy)
{
    _Alignas(64) float acc[CHUNK];
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    for (int64_t j0 = 0; j0 < cols; j0 += CHUNK) {
        int64_t w = cols - j0 < CHUNK ? cols - j0 : CHUNK;
        const float *mc = m + j0;
        int64_t p = 0;
        for (int64_t j = 0; j < w; j += 16) _mm512_store_ps(acc + j, _mm512_setzero_ps());
        for (; p + 8 <= rows; p += 8) {
            const float *r = mc + p * ld;
            __m512 xv[8];
            for (int q = 0; q < 8; q++) xv[q] = _mm512_set1_ps(x[p + q]);
            for (int64_t j = 0; j < w; j += 16) {
                __mmask16 k = tj_k_lanes16(w - j);
                __m512 a = _mm512_load_ps(acc + j), b = _mm512_maskz_loadu_ps(k, r + 4 * ld + j);
                b = _mm512_mul_ps(b, xv[4]);
                a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, r + j), xv[0], a);
                b = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, r + 5 * ld + j), xv[5], b);
                a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, r + ld + j), xv[1], a);
                b = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, r + 6 * ld + j), xv[6], b);
                a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, r + 2 * ld + j), xv[2], a);
                b = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, r + 7 * ld + j), xv[7], b);
                a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, r + 3 * ld + j), xv[3], a);
                _mm512_store_ps(acc + j, _mm512_add_ps(a, b));
            }
        }
        for (; p < rows; p++) {
            __m512 x0 = _mm512_set1_ps(x[p]);
            for (int64_t j = 0; j < w; j += 16) {
                __mmask16 k = tj_k_lanes16(w - j);
                _mm512_store_ps(acc + j, _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, mc + p * ld + j), x0,
                                                         _mm512_load_ps(acc + j)));
            }
        }
        float *yc = y + j0 * incy;
        if (incy != 1) {
            for (int64_t j = 0; j < w; j++) put(yc + j * incy, acc[j], alpha, beta);
            continue;
        }
        for (int64_t j = 0; j < w; j += 16) {
            __mmask16 k = tj_k_lanes16(w - j);
            __m512 r = _mm512_mul_ps(_mm512_load_ps(acc + j), va);
            if (beta != 0) r = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, yc + j), vb, r);
            _mm512_mask_storeu_ps(yc + j, k, r);
        }
    }
}
