/* Blocked, packed single-threaded float32 GEMM (see conv_gemm.h). */
#include <string.h>

#include "conv_gemm.h"
#include "cpu_isa.h"

#define MR TJ_K_GEMM_MR
#define NR TJ_K_GEMM_NR
#define KC TJ_K_GEMM_KC
#define MC TJ_K_GEMM_MC
#define NC TJ_K_GEMM_NC

_Static_assert(MC % MR == 0 && NC % NR == 0, "block sizes must be multiples of the micro-tile");

size_t tj_k_sgemm_work_bytes(void) { return sizeof(float) * (size_t)KC * (MC + NC); }

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Packs an mc x kc block of A into panels of MR rows: panel q holds element
 * (row r, column p) at q*MR*kc + p*MR + r; missing rows are 0. `a` points at
 * the block's first element; element (r, p) is a[r*lda + p], or a[p*lda + r]
 * when trans. */
void tj_k_sgemm_pack_a_generic(bool trans, const float *a, int64_t lda, int64_t mc, int64_t kc, float *ap)
{
    for (int64_t ir = 0; ir < mc; ir += MR) {
        float *panel = ap + ir * kc;
        int64_t rows = min64(MR, mc - ir);
        if (rows < MR) memset(panel, 0, sizeof(float) * (size_t)(MR * kc));
        if (trans) {
            for (int64_t p = 0; p < kc; p++)
                for (int64_t r = 0; r < rows; r++) panel[p * MR + r] = a[p * lda + ir + r];
        } else {
            for (int64_t r = 0; r < rows; r++) {
                const float *src = a + (ir + r) * lda;
                for (int64_t p = 0; p < kc; p++) panel[p * MR + r] = src[p];
            }
        }
    }
}

/* Packs a kc x nc block of B into panels of NR columns: panel q holds
 * element (p, column j) at q*NR*kc + p*NR + j; missing columns are 0.
 * Element (p, j) is b[p*ldb + j], or b[j*ldb + p] when trans. */
void tj_k_sgemm_pack_b_generic(bool trans, const float *b, int64_t ldb, int64_t kc, int64_t nc, float *bp)
{
    for (int64_t jr = 0; jr < nc; jr += NR) {
        float *panel = bp + jr * kc;
        int64_t cols = min64(NR, nc - jr);
        if (cols < NR) memset(panel, 0, sizeof(float) * (size_t)(NR * kc));
        if (trans) {
            for (int64_t j = 0; j < cols; j++) {
                const float *src = b + (jr + j) * ldb;
                for (int64_t p = 0; p < kc; p++) panel[p * NR + j] = src[p];
            }
        } else {
            for (int64_t p = 0; p < kc; p++)
                for (int64_t j = 0; j < cols; j++) panel[p * NR + j] = b[p * ldb + jr + j];
        }
    }
}

/* Generic micro-kernels: the same tiles in plain C (vectorised by the
 * compiler as far as it can), for CPUs without AVX2. */
static void store_tile(const float acc[MR][NR], float *c, int64_t ldc, int mr, int nr, float beta, const float *bias)
{
    for (int r = 0; r < mr; r++) {
        float *row = c + r * ldc;
        float add = bias ? bias[r] : 0.0f;
        for (int j = 0; j < nr; j++) row[j] = acc[r][j] + add + (beta != 0.0f ? beta * row[j] : 0.0f);
    }
}

static void tile_step(float acc[MR][NR], const float *a, const float *b)
{
    for (int r = 0; r < MR; r++)
        for (int j = 0; j < NR; j++) acc[r][j] += a[r] * b[j];
}

void tj_k_sgemm_ukernel_generic(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int mr, int nr,
                                float beta, const float *bias)
{
    float acc[MR][NR] = {{0}};
    for (int64_t p = 0; p < kc; p++) tile_step(acc, ap + p * MR, bp + p * NR);
    store_tile(acc, c, ldc, mr, nr, beta, bias);
}

void tj_k_sgemm_ukernel_offsets_generic(int64_t kc, const float *ap, const float *b, const int64_t *off, float *c,
                                        int64_t ldc, int mr, int nr, float beta, const float *bias)
{
    float acc[MR][NR] = {{0}};
    for (int64_t p = 0; p < kc; p++) tile_step(acc, ap + p * MR, b + off[p]);
    store_tile(acc, c, ldc, mr, nr, beta, bias);
}

void tj_k_sgemm_ukernel_rows_generic(int64_t rows, int64_t cols, int64_t row_stride, const float *const *arows,
                                     const float *bp, float *c, int64_t ldc, int mr, int nr, float beta,
                                     const float *bias)
{
    float acc[MR][NR] = {{0}};
    for (int64_t y = 0; y < rows; y++)
        for (int64_t x = 0; x < cols; x++, bp += NR) {
            float a[MR];
            for (int r = 0; r < MR; r++) a[r] = arows[r][y * row_stride + x];
            tile_step(acc, a, bp);
        }
    store_tile(acc, c, ldc, mr, nr, beta, bias);
}

void tj_k_sgemm_ukernel_taps_generic(int64_t kc, const float *const *arows, const int64_t *off, const float *bp,
                                     float *c, int64_t ldc, int mr, int nr, float beta, const float *bias)
{
    float acc[MR][NR] = {{0}};
    for (int64_t p = 0; p < kc; p++, bp += NR) {
        float a[MR];
        for (int r = 0; r < MR; r++) a[r] = arows[r][off[p]];
        tile_step(acc, a, bp);
    }
    store_tile(acc, c, ldc, mr, nr, beta, bias);
}

void tj_k_sgemm_ukernel_taps16_generic(int64_t kc, const float *const *arows, const int64_t *off, const float *bp,
                                       float *c, int64_t ldc, int mr, int nr, float beta, const float *bias)
{
    float acc[MR][16] = {{0}};
    for (int64_t p = 0; p < kc; p++, bp += 16)
        for (int r = 0; r < MR; r++) {
            float a = arows[r][off[p]];
            for (int j = 0; j < 16; j++) acc[r][j] += a * bp[j];
        }
    for (int r = 0; r < mr; r++) {
        float *row = c + r * ldc, add = bias ? bias[r] : 0.0f;
        for (int j = 0; j < nr; j++) row[j] = acc[r][j] + add + (beta != 0.0f ? beta * row[j] : 0.0f);
    }
}

void tj_k_copy_rows_generic(const float *src, int64_t src_stride, float *dst, int64_t dst_stride, int64_t rows,
                            int64_t n)
{
    for (int64_t y = 0; y < rows; y++)
        for (int64_t x = 0; x < n; x++) dst[y * dst_stride + x] = src[y * src_stride + x];
}

void tj_k_transpose_bias_generic(const float *src, int64_t rows, int64_t cols, int64_t lds, const float *bias,
                                 float *dst, int64_t ldd)
{
    for (int64_t c = 0; c < cols; c++)
        for (int64_t r = 0; r < rows; r++) dst[c * ldd + r] = src[r * lds + c] + (bias ? bias[c] : 0.0f);
}

void tj_k_sgemm_ukernel_rows16_generic(int64_t rows, int64_t cols, int64_t row_stride, const float *const *arows,
                                       const float *bp, float *c, int64_t ldc, int mr, int nr, float beta,
                                       const float *bias)
{
    float acc[MR][16] = {{0}};
    for (int64_t y = 0; y < rows; y++)
        for (int64_t x = 0; x < cols; x++, bp += 16)
            for (int r = 0; r < MR; r++) {
                float a = arows[r][y * row_stride + x];
                for (int j = 0; j < 16; j++) acc[r][j] += a * bp[j];
            }
    for (int r = 0; r < mr; r++) {
        float *row = c + r * ldc, add = bias ? bias[r] : 0.0f;
        for (int j = 0; j < nr; j++) row[j] = acc[r][j] + add + (beta != 0.0f ? beta * row[j] : 0.0f);
    }
}

void tj_k_sgemm_pack_transposed_generic(const float *src, int64_t rows, int64_t cols, int width, float *dst)
{
    for (int64_t r = 0; r < rows; r++) {
        float *col = dst + (r / width) * width * cols + r % width;
        for (int64_t c = 0; c < cols; c++) col[c * width] = src[r * cols + c];
    }
}

bool tj_k_conv_own_kernels(void) { return tj_k_isa_active() != TJ_K_ISA_GENERIC; }

/* The AVX-512, AVX2 or generic version of a kernel, as the ISA in use says. */
#define PICK(NAME)                                                      \
    (tj_k_isa_active() == TJ_K_ISA_AVX512 ? NAME##_avx512               \
     : tj_k_isa_active() == TJ_K_ISA_AVX2 ? NAME##_avx2                 \
                                          : NAME##_generic)

tj_k_sgemm_ukernel tj_k_sgemm_pick_ukernel(void) { return PICK(tj_k_sgemm_ukernel); }
tj_k_sgemm_ukernel_offsets tj_k_sgemm_pick_ukernel_offsets(void) { return PICK(tj_k_sgemm_ukernel_offsets); }
tj_k_sgemm_ukernel_rows tj_k_sgemm_pick_ukernel_rows(void) { return PICK(tj_k_sgemm_ukernel_rows); }
tj_k_sgemm_ukernel_rows tj_k_sgemm_pick_ukernel_rows16(void) { return PICK(tj_k_sgemm_ukernel_rows16); }
tj_k_sgemm_pack_transposed tj_k_sgemm_pick_pack_transposed(void) { return PICK(tj_k_sgemm_pack_transposed); }
tj_k_sgemm_ukernel_taps tj_k_sgemm_pick_ukernel_taps(void) { return PICK(tj_k_sgemm_ukernel_taps); }
tj_k_sgemm_ukernel_taps tj_k_sgemm_pick_ukernel_taps16(void) { return PICK(tj_k_sgemm_ukernel_taps16); }
tj_k_sgemm_pack tj_k_sgemm_pick_pack_a(void) { return PICK(tj_k_sgemm_pack_a); }
tj_k_sgemm_pack tj_k_sgemm_pick_pack_b(void) { return PICK(tj_k_sgemm_pack_b); }
tj_k_copy_rows tj_k_pick_copy_rows(void) { return PICK(tj_k_copy_rows); }
tj_k_transpose_bias tj_k_pick_transpose_bias(void) { return PICK(tj_k_transpose_bias); }

/* k == 0: C = beta·C + bias. */
static void scale_rows(int64_t m, int64_t n, float beta, float *c, int64_t ldc, const float *bias)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            c[i * ldc + j] = (beta != 0.0f ? beta * c[i * ldc + j] : 0.0f) + (bias ? bias[i] : 0.0f);
}

void tj_k_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                const float *b, int64_t ldb, float beta, float *c, int64_t ldc, const float *bias, void *work)
{
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        scale_rows(m, n, beta, c, ldc, bias);
        return;
    }
    tj_k_sgemm_ukernel uk = tj_k_sgemm_pick_ukernel();
    tj_k_sgemm_pack pack_a = tj_k_sgemm_pick_pack_a(), pack_b = tj_k_sgemm_pick_pack_b();
    float *ap = work, *bp = ap + (size_t)KC * MC;
    for (int64_t jc = 0; jc < n; jc += NC) {
        int64_t nc = min64(NC, n - jc);
        for (int64_t pc = 0; pc < k; pc += KC) {
            int64_t kc = min64(KC, k - pc);
            /* beta and bias apply once, with the first block of k */
            float bt = pc == 0 ? beta : 1.0f;
            pack_b(trans_b, trans_b ? b + jc * ldb + pc : b + pc * ldb + jc, ldb, kc, nc, bp);
            for (int64_t ic = 0; ic < m; ic += MC) {
                int64_t mc = min64(MC, m - ic);
                pack_a(trans_a, trans_a ? a + pc * lda + ic : a + ic * lda + pc, lda, mc, kc, ap);
                for (int64_t jr = 0; jr < nc; jr += NR)
                    for (int64_t ir = 0; ir < mc; ir += MR)
                        uk(kc, ap + ir * kc, bp + jr * kc, c + (ic + ir) * ldc + jc + jr, ldc,
                           (int)min64(MR, mc - ir), (int)min64(NR, nc - jr), bt,
                           pc == 0 && bias ? bias + ic + ir : NULL);
            }
        }
    }
}