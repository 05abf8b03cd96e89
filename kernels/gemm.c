/* Matrix products: strided operands handed to OpenBLAS as they are, batches
 * threaded by shape (see gemm.h), int64 by loops. */
#include <cblas.h>
#include <limits.h>
#include <string.h>

#include "gemm.h"

/* How BLAS sees a strided matrix: transposed or not, and its leading dim. */
typedef struct blas_view {
    CBLAS_TRANSPOSE trans;
    int ld;
} blas_view;

static bool layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, blas_view *v)
{
    int64_t row_len = cols > 1 ? cols : 1, col_len = rows > 1 ? rows : 1, ld;
    if ((cs == 1 || cols <= 1) && (rows <= 1 || rs >= row_len)) {
        v->trans = CblasNoTrans;
        ld = rows <= 1 ? row_len : rs;
    } else if ((rs == 1 || rows <= 1) && (cols <= 1 || cs >= col_len)) {
        v->trans = CblasTrans;
        ld = cols <= 1 ? col_len : cs;
    } else {
        return false;
    }
    v->ld = (int)ld;
    return ld <= INT_MAX;
}

bool tj_k_gemm_layout_ok(int64_t rows, int64_t cols, int64_t rs, int64_t cs)
{
    blas_view v;
    return layout(rows, cols, rs, cs, &v);
}

/* C (m x n, ldc) = beta * C, where beta == 0 writes zeros. */
static void scale_c(tj_dtype dtype, int64_t m, int64_t n, double beta, void *c, int64_t ldc)
{
    for (int64_t i = 0; i < m; i++) {
        if (dtype == TJ_FLOAT32) {
            float *r = (float *)c + i * ldc;
            for (int64_t j = 0; j < n; j++) r[j] = beta == 0 ? 0.0f : (float)beta * r[j];
        } else {
            double *r = (double *)c + i * ldc;
            for (int64_t j = 0; j < n; j++) r[j] = beta == 0 ? 0.0 : beta * r[j];
        }
    }
}

static void gemm_one(tj_dtype dtype, int m, int n, int k, double alpha, const void *a, blas_view va,
                     const void *b, blas_view vb, double beta, void *c, int ldc)
{
    if (dtype == TJ_FLOAT32)
        cblas_sgemm(CblasRowMajor, va.trans, vb.trans, m, n, k, (float)alpha, a, va.ld, b, vb.ld, (float)beta, c, ldc);
    else
        cblas_dgemm(CblasRowMajor, va.trans, vb.trans, m, n, k, alpha, a, va.ld, b, vb.ld, beta, c, ldc);
}

void tj_k_gemm(tj_dtype dtype, int64_t batch, int64_t m, int64_t n, int64_t k, double alpha, tj_k_mat a,
               int64_t a_bs, tj_k_mat b, int64_t b_bs, double beta, void *c, int64_t c_bs, int64_t ldc,
               int nthreads)
{
    size_t es = dtype == TJ_FLOAT32 ? sizeof(float) : sizeof(double);
    if (batch <= 0 || m <= 0 || n <= 0) return;
    if (k == 0) {
        for (int64_t i = 0; i < batch; i++) scale_c(dtype, m, n, beta, (char *)c + i * c_bs * es, ldc);
        return;
    }
    blas_view va, vb;
    layout(m, k, a.rs, a.cs, &va);
    layout(k, n, b.rs, b.cs, &vb);
    const char *ap = a.p, *bp = b.p;
    char *cp = c;
    double work = (double)m * (double)n * (double)k;
    /* Small products run serially inside OpenBLAS, so they can share the
     * threads over the batch; large ones each get OpenBLAS's whole pool. */
    int nt = nthreads;
    if (nt > batch) nt = (int)batch;
    if (work > TJ_K_GEMM_SERIAL_WORK || work * (double)batch < 4 * TJ_K_GEMM_SERIAL_WORK) nt = 1;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t i = 0; i < batch; i++)
        gemm_one(dtype, (int)m, (int)n, (int)k, alpha, ap + i * a_bs * (int64_t)es, va, bp + i * b_bs * (int64_t)es, vb,
                 beta, cp + i * c_bs * (int64_t)es, (int)ldc);
}

void tj_k_gemm_i64(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t alpha, tj_k_mat a, int64_t a_bs,
                   tj_k_mat b, int64_t b_bs, int64_t beta, int64_t *c, int64_t c_bs, int64_t ldc, int nthreads)
{
    const int64_t *ap = a.p, *bp = b.p;
    int64_t rows = batch * m;
    int nt = (double)rows * (double)n * (double)k > TJ_K_GEMM_SERIAL_WORK ? nthreads : 1;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t r = 0; r < rows; r++) {
        int64_t bi = r / m, i = r % m;
        uint64_t *cr = (uint64_t *)(c + bi * c_bs + i * ldc);
        const int64_t *ar = ap + bi * a_bs + i * a.rs, *bb = bp + bi * b_bs;
        for (int64_t j = 0; j < n; j++) cr[j] = beta == 0 ? 0 : cr[j] * (uint64_t)beta;
        for (int64_t p = 0; p < k; p++) {
            uint64_t av = (uint64_t)ar[p * a.cs] * (uint64_t)alpha;
            const int64_t *br = bb + p * b.rs;
            for (int64_t j = 0; j < n; j++) cr[j] += av * (uint64_t)br[j * b.cs];
        }
    }
}

void tj_k_pack_matrices(size_t esize, int64_t batch, int64_t rows, int64_t cols, const void *src, int64_t bs,
                        int64_t rs, int64_t cs, void *dst)
{
    const char *s = src;
    char *d = dst;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < rows; i++) {
            const char *row = s + (b * bs + i * rs) * (int64_t)esize;
            char *out = d + ((b * rows + i) * cols) * (int64_t)esize;
            if (cs == 1) {
                memcpy(out, row, (size_t)cols * esize);
                continue;
            }
#define PACK_ROW(T)                                                                  \
    for (int64_t j = 0; j < cols; j++) ((T *)(void *)out)[j] = ((const T *)(const void *)row)[j * cs];
            if (esize == sizeof(uint32_t)) {
                PACK_ROW(uint32_t)
            } else if (esize == sizeof(uint64_t)) {
                PACK_ROW(uint64_t)
            } else {
                for (int64_t j = 0; j < cols; j++) memcpy(out + j * (int64_t)esize, row + j * cs * (int64_t)esize, esize);
            }
#undef PACK_ROW
        }
}
