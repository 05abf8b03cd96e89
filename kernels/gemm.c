/* Matrix products: each float product routed to the fastest of our
 * matrix-vector kernels (gemv.c), our GEMM kernel (gemm_isa.h: AVX-512
 * or AVX2) and OpenBLAS, strided operands read as they are, batches
 * threaded by shape (see gemm.h); int64 by loops. */
#include <cblas.h>
#include <limits.h>
#include <string.h>

#include "blas_fp.h"
#include "cpu_isa.h"
#include "gemm.h"
#include "gemv.h"
#include "parallel.h"

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

/* Batch item `off` elements into a matrix. */
static tj_k_mat item(tj_k_mat x, int64_t off, size_t es)
{
    x.p = (const char *)x.p + off * (int64_t)es;
    return x;
}

/* Our GEMM kernel's AVX-512 instance (gemm_isa.h) computes float32
 * products 1.3-2x faster than OpenBLAS's Haswell sgemm (which
 * OPENBLAS_CORETYPE selects here) on the models' shapes, up to 215 GFLOP/s
 * against 95-110 at 1 thread (bench/bench_gemm.c): g @ W, g^T @ x, and
 * x @ W^T where the matrix-vector kernels do not take it. It computes 64
 * columns at a time, so narrower products stay on BLAS. */
#define OWN_MIN_COLS 32

/* Its AVX2 instance (6 x 16 tiles), on a 2-vCPU AMD EPYC (Zen 3) without
 * AVX-512, against the same sgemm (bench_gemm 1: medians of 3 runs, each
 * the median thread CPU time of alternated calls): with A row-major
 * (x @ W^T, g @ W) 1.06-1.17x on mlp's and cnn's linear layers and gpt's
 * attention products, level (0.91-1.04x) on gpt's 512-row ones, 1.02-1.17x
 * on block768's, 0.93-1.22x on decomposed cnn's few rows against many
 * columns (W @ cols, g @ cols^T); with A column-major (g^T @ x) 0.77-0.90x once the sum is 64
 * steps or longer (its tiles read a line of A per step, the lines m apart:
 * L1 conflicts against B's block), so those stay on BLAS, except short
 * sums (decomposed cnn's W^T @ g, k 32: 1.23-1.37x). Where it is level,
 * the kernel still fuses the epilogue and splits threads deterministically. */
#define OWN_AVX2_MAX_K_A_COLUMNS 32

/* The instances run where the ISA in use (cpu_isa.h) allows their objects' flags. */
static bool own_kernel(tj_dtype dtype, int64_t n, int64_t k, tj_k_mat a)
{
    if (dtype != TJ_FLOAT32 || n < OWN_MIN_COLS) return false;
    tj_k_isa isa = tj_k_isa_active();
    return isa == TJ_K_ISA_AVX512 || (isa == TJ_K_ISA_AVX2 && (a.cs == 1 || k <= OWN_AVX2_MAX_K_A_COLUMNS));
}

bool tj_k_gemm_f32_supported(void) { return tj_k_isa_active() != TJ_K_ISA_GENERIC; }

void tj_k_gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                   const float *b, int64_t brs, int64_t bcs, float beta, float *c, int64_t ldc, int nthreads,
                   const tj_k_epilogue *epi)
{
    (tj_k_isa_active() == TJ_K_ISA_AVX512 ? tj_k_gemm_f32_avx512 : tj_k_gemm_f32_avx2)(
        m, n, k, alpha, a, ars, acs, b, brs, bcs, beta, c, ldc, nthreads, epi);
}

int64_t tj_k_gemm_f32_block(void)
{
    return tj_k_isa_active() == TJ_K_ISA_AVX512 ? tj_k_gemm_f32_block_avx512() : tj_k_gemm_f32_block_avx2();
}

void tj_k_gemm_f32_offsets(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                           const tj_k_offset_mat *b, float beta, float *c, int64_t ldc, int nthreads)
{
    (tj_k_isa_active() == TJ_K_ISA_AVX512 ? tj_k_gemm_f32_offsets_avx512 : tj_k_gemm_f32_offsets_avx2)(
        m, n, k, alpha, a, ars, acs, b, beta, c, ldc, nthreads);
}

/* From this length of the sum and this many vectors on, our GEMM kernel
 * beats the matrix-vector row form, which reads every vector again from L2
 * for each block of four rows of the matrix: decomposed cnn's conv2 weight
 * gradient (g @ columns^T, 32 x 400 by k 12544) took 1.4x as long on the
 * row form as on the kernel's long-sum path (gemm_isa.h), AVX-512, 1 thread,
 * thread CPU time; 16 x 400 by k 12544 and 16 x 256 by k 50176 (regular
 * panels) 1.3x. */
#define OWN_LONG_SUM 4096
#define OWN_LONG_SUM_MIN_VECTORS 16

/* One product; `nthreads` is used by our kernel only (BLAS sizes its pool
 * itself), and so is `epi`. */
static void gemm_one(tj_dtype dtype, bool own, int m, int n, int k, double alpha, tj_k_mat a, blas_view va,
                     tj_k_mat b, blas_view vb, double beta, void *c, int ldc, int nthreads, const tj_k_epilogue *epi)
{
    if (own) {
        bool rowb = vb.trans == CblasNoTrans;
        tj_k_gemm_f32(m, n, k, (float)alpha, a.p, a.rs, a.cs, b.p, rowb ? vb.ld : 1, rowb ? 1 : vb.ld,
                             (float)beta, c, ldc, nthreads, epi);
    } else {
        int blas_threads = tj_k_blas_fp_begin();
        if (dtype == TJ_FLOAT32)
            cblas_sgemm(CblasRowMajor, va.trans, vb.trans, m, n, k, (float)alpha, a.p, va.ld, b.p, vb.ld, (float)beta,
                        c, ldc);
        else
            cblas_dgemm(CblasRowMajor, va.trans, vb.trans, m, n, k, alpha, a.p, va.ld, b.p, vb.ld, beta, c, ldc);
        tj_k_blas_fp_end(blas_threads);
    }
}

/* A product as matrix-vector products over the rows of A (each row of C is
 * B^T times a row of A: the column form over B, or the row form over B^T)
 * or the columns of B (each column of C is A times a column of B), the
 * fewer of the two, when tj_k_gemv_max_vectors says that beats the GEMM
 * kernels (sgemm packs all of the large operand even for one row) and the
 * sum is not so long that our GEMM kernel wins (OWN_LONG_SUM): true, with
 * their arguments in *gv; false: not taken. */
static bool gemv_route(tj_dtype dtype, int64_t batch, int64_t m, int64_t n, int64_t k, double alpha, tj_k_mat a,
                       int64_t a_bs, blas_view va, tj_k_mat b, int64_t b_bs, blas_view vb, double beta, void *c,
                       int64_t c_bs, int64_t ldc, tj_k_gemv_args *gv)
{
    tj_k_gemv_args g = {.dtype = dtype, .alpha = alpha, .beta = beta, .y = c, .y_bs = c_bs, .batch = batch};
    if (m <= n) { /* vectors: the rows of A */
        g.trans = vb.trans == CblasNoTrans;
        g.rows = g.trans ? k : n;
        g.cols = g.trans ? n : k;
        g.m = b.p, g.ld = vb.ld, g.m_bs = b_bs;
        g.x = a.p, g.incx = k > 1 ? a.cs : 1, g.x_vs = a.rs, g.x_bs = a_bs;
        g.nv = m, g.incy = 1, g.y_vs = ldc;
    } else { /* vectors: the columns of B */
        g.trans = va.trans == CblasTrans;
        g.rows = g.trans ? k : m;
        g.cols = g.trans ? m : k;
        g.m = a.p, g.ld = va.ld, g.m_bs = a_bs;
        g.x = b.p, g.incx = k > 1 ? b.rs : 1, g.x_vs = b.cs, g.x_bs = b_bs;
        g.nv = n, g.incy = ldc, g.y_vs = 1;
    }
    *gv = g;
    if (g.nv > tj_k_gemv_max_vectors(&g)) return false;
    return !(own_kernel(dtype, n, k, a) && k >= OWN_LONG_SUM && g.nv >= OWN_LONG_SUM_MIN_VECTORS);
}

/* The kernel tj_k_gemm computes a float product on (batch 1, alpha and k
 * nonzero), in tj_k_gemm's order of decisions. */
typedef enum gemm_route {
    ROUTE_NONE,        /* an empty product, or a layout BLAS cannot read */
    ROUTE_OWN,         /* tj_k_gemm_f32 */
    ROUTE_OWN_COLUMNS, /* the rows of A as vectors on gemv's own column form: C's row i is B^T times A's row i */
    ROUTE_OWN_ROWS,    /* the rows of A as vectors on gemv's own row form over B^T's rows */
    ROUTE_GEMV,        /* any other matrix-vector route (BLAS's, the row form, B's columns as the vectors) */
    ROUTE_BLAS,        /* sgemm, dgemm */
} gemm_route;

static gemm_route route(tj_dtype dtype, int64_t m, int64_t n, int64_t k, tj_k_mat a, tj_k_mat b)
{
    blas_view va, vb;
    tj_k_gemv_args g;
    if (m <= 0 || n <= 0 || k <= 0 || !layout(m, k, a.rs, a.cs, &va) || !layout(k, n, b.rs, b.cs, &vb))
        return ROUTE_NONE;
    if (gemv_route(dtype, 1, m, n, k, 1.0, a, 0, va, b, 0, vb, 0.0, NULL, 0, n, &g)) {
        if (!tj_k_gemv_on_own_kernel(dtype, g.incx) || m > n) return ROUTE_GEMV;
        return g.trans ? ROUTE_OWN_COLUMNS : ROUTE_OWN_ROWS;
    }
    return own_kernel(dtype, n, k, a) ? ROUTE_OWN : ROUTE_BLAS;
}

bool tj_k_gemm_on_own_kernel(tj_dtype dtype, int64_t m, int64_t n, int64_t k, tj_k_mat a, tj_k_mat b)
{
    return route(dtype, m, n, k, a, b) == ROUTE_OWN;
}

bool tj_k_gemm_on_row_form(tj_dtype dtype, int64_t m, int64_t n, int64_t k, tj_k_mat a, tj_k_mat b)
{
    return route(dtype, m, n, k, a, b) == ROUTE_OWN_ROWS;
}

/* Our kernels compute each column of C with the same operations wherever
 * it falls in the call: the GEMM kernel sums each element of C block by
 * block in one order however C is split (gemm_isa.h; its long-sum path
 * gives the same bytes), and the column form adds the rows into every
 * column alike, a vector of columns at a time (gemv_isa.h). BLAS does
 * not: OpenBLAS computes the last few columns in other loops (sgemm's m 4,
 * n 3000, k 400 in 2 chunks changed 27 of 12000 outputs; sgemv's b 2, m 2,
 * k 400, n 3000 351), and its matrix-vector products inside a parallel loop
 * become plain loops (gemv.c). The route depends on the number of columns
 * w only through thresholds: own_kernel's w >= OWN_MIN_COLS; which
 * operand gives the vectors (A's rows while m <= w, else B's columns);
 * with B's columns as vectors, w against the largest count of vectors,
 * which does not depend on w; with A's rows, that count against m, where
 * the count may grow with the row length w (tj_k_gemv_max_vectors). Each
 * route then holds over an interval of w on either side of m, so the
 * route is one over [min_cols, n] when it is one at min_cols, m - 1, m
 * and n (those in range). */
bool tj_k_gemm_columns_independent(tj_dtype dtype, int64_t m, int64_t n, int64_t k, tj_k_mat a, tj_k_mat b,
                                   int64_t min_cols)
{
    gemm_route r = route(dtype, m, n, k, a, b);
    if (r != ROUTE_OWN && r != ROUTE_OWN_COLUMNS) return false;
    if (min_cols < 1) min_cols = 1;
    const int64_t widths[3] = {min_cols, m - 1, m};
    for (int i = 0; i < 3; i++)
        if (widths[i] >= min_cols && widths[i] < n && route(dtype, m, widths[i], k, a, b) != r) return false;
    return true;
}

/* A batch of products, for batch_items; `inner` threads for each product
 * (1 when the batch is split over the threads). */
typedef struct batch_args {
    tj_dtype dtype;
    bool own;
    int64_t m, n, k;
    double alpha, beta;
    tj_k_mat a, b;
    blas_view va, vb;
    int64_t a_bs, b_bs;
    void *c;
    int64_t c_bs, ldc;
    int inner;
    const tj_k_epilogue *epi; /* our kernel's, batch 1 */
} batch_args;

/* Products [i0, i1) of the batch. */
static void batch_items(void *ctx, int t, int64_t i0, int64_t i1)
{
    const batch_args *g = ctx;
    size_t es = g->dtype == TJ_FLOAT32 ? sizeof(float) : sizeof(double);
    (void)t;
    for (int64_t i = i0; i < i1; i++)
        gemm_one(g->dtype, g->own, (int)g->m, (int)g->n, (int)g->k, g->alpha, item(g->a, i * g->a_bs, es), g->va,
                 item(g->b, i * g->b_bs, es), g->vb, g->beta, (char *)g->c + i * g->c_bs * (int64_t)es, (int)g->ldc,
                 g->inner, g->epi);
}

/* An epilogue over all of C after the product, for epilogue_rows. */
typedef struct epilogue_args {
    const tj_k_epilogue *epi;
    size_t es;
    void *c;
    int64_t n, ldc;
} epilogue_args;

static void epilogue_rows(void *ctx, int t, int64_t r0, int64_t r1)
{
    const epilogue_args *e = ctx;
    (void)t;
    tj_k_epilogue_apply(e->epi, e->es, e->c, e->ldc, r0, r1 - r0, 0, e->n);
}

static void epilogue_after(const tj_k_epilogue *epi, size_t es, int64_t m, int64_t n, void *c, int64_t ldc,
                           int nthreads)
{
    epilogue_args e = {epi, es, c, n, ldc};
    tj_k_parallel(m * n >= TJ_K_EPILOGUE_PARALLEL_MIN ? nthreads : 1, m, epilogue_rows, &e);
}

void tj_k_gemm(tj_dtype dtype, int64_t batch, int64_t m, int64_t n, int64_t k, double alpha, tj_k_mat a,
               int64_t a_bs, tj_k_mat b, int64_t b_bs, double beta, void *c, int64_t c_bs, int64_t ldc,
               int nthreads, const tj_k_epilogue *epi)
{
    size_t es = dtype == TJ_FLOAT32 ? sizeof(float) : sizeof(double);
    if (batch <= 0 || m <= 0 || n <= 0) return;
    if (k == 0 || alpha == 0) { /* as BLAS: A and B unread, so nan and inf there do not reach C */
        for (int64_t i = 0; i < batch; i++) scale_c(dtype, m, n, beta, (char *)c + i * c_bs * es, ldc);
        if (epi) epilogue_after(epi, es, m, n, c, ldc, nthreads);
        return;
    }
    blas_view va, vb;
    layout(m, k, a.rs, a.cs, &va);
    layout(k, n, b.rs, b.cs, &vb);
    tj_k_gemv_args gv;
    if (gemv_route(dtype, batch, m, n, k, alpha, a, a_bs, va, b, b_bs, vb, beta, c, c_bs, ldc, &gv)) {
        tj_k_gemv(&gv, nthreads);
        if (epi) epilogue_after(epi, es, m, n, c, ldc, nthreads);
        return;
    }
    bool own = own_kernel(dtype, n, k, a), fused = own && batch == 1;
    double work = (double)m * (double)n * (double)k;
    /* Small products run on one thread each (OpenBLAS does so by itself),
     * so they can share the threads over the batch; large ones each get
     * every thread. */
    int nt = nthreads;
    if (nt > batch) nt = (int)batch;
    if (work > TJ_K_GEMM_SERIAL_WORK || work * (double)batch < 4 * TJ_K_GEMM_SERIAL_WORK) nt = 1;
    batch_args ba = {dtype, own, m, n, k, alpha, beta, a, b, va, vb, a_bs, b_bs, c, c_bs, ldc,
                     nt <= 1 && work > TJ_K_GEMM_SERIAL_WORK ? nthreads : 1, fused ? epi : NULL};
    tj_k_parallel(nt, batch, batch_items, &ba);
    if (epi && !fused) epilogue_after(epi, es, m, n, c, ldc, nthreads);
}

/* The operands of an int64 product, for i64_rows. */
typedef struct i64_args {
    int64_t m, n, k, alpha, beta, a_bs, b_bs, c_bs, ldc;
    tj_k_mat a, b;
    int64_t *c;
} i64_args;

/* Rows [r0, r1) of the batch's stacked rows, in wrapping (unsigned) arithmetic. */
static void i64_rows(void *ctx, int t, int64_t r0, int64_t r1)
{
    const i64_args *g = ctx;
    const int64_t *ap = g->a.p, *bp = g->b.p;
    (void)t;
    for (int64_t r = r0; r < r1; r++) {
        int64_t bi = r / g->m, i = r % g->m;
        uint64_t *cr = (uint64_t *)(g->c + bi * g->c_bs + i * g->ldc);
        const int64_t *ar = ap + bi * g->a_bs + i * g->a.rs, *bb = bp + bi * g->b_bs;
        for (int64_t j = 0; j < g->n; j++) cr[j] = g->beta == 0 ? 0 : cr[j] * (uint64_t)g->beta;
        for (int64_t p = 0; p < g->k; p++) {
            uint64_t av = (uint64_t)ar[p * g->a.cs] * (uint64_t)g->alpha;
            const int64_t *br = bb + p * g->b.rs;
            for (int64_t j = 0; j < g->n; j++) cr[j] += av * (uint64_t)br[j * g->b.cs];
        }
    }
}

void tj_k_gemm_i64(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t alpha, tj_k_mat a, int64_t a_bs,
                   tj_k_mat b, int64_t b_bs, int64_t beta, int64_t *c, int64_t c_bs, int64_t ldc, int nthreads)
{
    int64_t rows = batch * m;
    i64_args g = {m, n, k, alpha, beta, a_bs, b_bs, c_bs, ldc, a, b, c};
    tj_k_parallel((double)rows * (double)n * (double)k > TJ_K_GEMM_SERIAL_WORK ? nthreads : 1, rows, i64_rows, &g);
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
