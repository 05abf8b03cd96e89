/* Dense linear algebra on OpenBLAS's LAPACK and BLAS (trsm), as ATen 1.13
 * (BatchLinearAlgebra.cpp, LinearAlgebraUtils.h): the shape checks and
 * messages, broadcast batch dims, the outputs' shapes. Each batch item is
 * copied into column-major scratch (LAPACK's layout), computed there in the
 * input's dtype, and copied into the contiguous row-major result. */
#include <cblas.h>
#include <math.h>

#include "lapack.h"
#include "lapack_batch.h"
#include "op_lapack.h"

/* ---- LAPACK by dtype ---- */

static int lapack_getrf(tj_dtype dt, int m, int n, void *a, int *ipiv)
{
    int info = 0, lda = m > 1 ? m : 1;
    if (dt == TJ_FLOAT64) dgetrf_(&m, &n, a, &lda, ipiv, &info);
    else sgetrf_(&m, &n, a, &lda, ipiv, &info);
    return info;
}

static void lapack_getrs(tj_dtype dt, char trans, int n, int nrhs, const void *a, const int *ipiv, void *b)
{
    int info = 0, ldb = n > 1 ? n : 1, lda = ldb;
    if (dt == TJ_FLOAT64) dgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
    else sgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
}

static int lapack_potrf(tj_dtype dt, char uplo, int n, void *a)
{
    int info = 0;
    if (dt == TJ_FLOAT64) dpotrf_(&uplo, &n, a, &n, &info, 1);
    else spotrf_(&uplo, &n, a, &n, &info, 1);
    return info;
}

static void lapack_potrs(tj_dtype dt, char uplo, int n, int nrhs, const void *a, void *b)
{
    int info = 0, ld = n > 1 ? n : 1;
    if (dt == TJ_FLOAT64) dpotrs_(&uplo, &n, &nrhs, a, &ld, b, &ld, &info, 1);
    else spotrs_(&uplo, &n, &nrhs, a, &ld, b, &ld, &info, 1);
}

/* ATen's checkInputsSolver for A (square, checked) and B (a matrix), then
 * the result's shape: the broadcast batch dims and B's matrix dims. */
static tj_status meta_solver(const char *op, const char *na, const tj_tensor *A, const mats *B, bool left,
                             tj_meta *out)
{
    char sa[96], sb[96];
    int64_t n = A->shape[A->ndim - 1], br = rows_of(B), bc = cols_of(B);
    if (left ? n != br : n != bc)
        return tj_error(TJ_ERR_SHAPE, "%s: incompatible shapes of %s %s and B %s for the equation %s (%" PRId64 "x%" PRId64
                        " and %" PRId64 "x%" PRId64 ")", op, na, tj_shape_str(A->ndim, A->shape, sa, sizeof sa),
                        tj_shape_str(B->ndim, B->shape, sb, sizeof sb), left ? "AX = B" : "XA = B", n, n, br, bc);
    int nb;
    tj_status st = tj_broadcast_shapes(op, A->ndim - 2, A->shape, B->ndim - 2, B->shape, &nb, out->shape);
    if (st != TJ_OK) return st;
    if (nb + 2 > TJ_MAX_DIMS)
        return tj_error(TJ_ERR_SHAPE, "%s: the result of A %s and B %s would have more than %d dims", op,
                        tj_shape_str(A->ndim, A->shape, sa, sizeof sa), tj_shape_str(B->ndim, B->shape, sb, sizeof sb),
                        TJ_MAX_DIMS);
    out->dtype = A->dtype;
    out->ndim = nb + 2;
    out->shape[nb] = br;
    out->shape[nb + 1] = bc;
    return TJ_OK;
}

/* ---- linalg_solve_triangular ---- */

#define SOLVE_TRIANGULAR "aten::linalg_solve_triangular"

tj_status tj_meta_linalg_solve_triangular(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *A = args[0].u.t, *B = args[1].u.t;
    tj_status st;
    if ((st = check_square(SOLVE_TRIANGULAR, "A", A)) || (st = check_float(SOLVE_TRIANGULAR, "B", B)) ||
        (st = check_same_dtype(SOLVE_TRIANGULAR, "A", A, "B", B)) || (st = check_matrix(SOLVE_TRIANGULAR, "B", B)))
        return st;
    mats mb = mats_of(B, false);
    return meta_solver(SOLVE_TRIANGULAR, "A", A, &mb, args[3].u.b, &outs[0]);
}

/* Each item: B copied column-major, trsm in place with A's triangle. */
tj_status tj_kernel_linalg_solve_triangular(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *X = outs[0];
    if (X->numel == 0) return TJ_OK;
    mats A = mats_of(args[0].u.t, false), B = mats_of(args[1].u.t, false);
    bool upper = args[2].u.b, left = args[3].u.b, unit = args[4].u.b;
    int n = (int)cols_of(&A), r = (int)rows_of(&B), c = (int)cols_of(&B), nb = X->ndim - 2;
    size_t es = tj_dtype_size(X->dtype);
    scratch s;
    tj_status st = scratch_get(&s, SOLVE_TRIANGULAR, es * ((size_t)n * (size_t)n + (size_t)r * (size_t)c));
    if (st != TJ_OK) return st;
    char *a = s.p, *b = a + es * (size_t)n * (size_t)n;
    enum CBLAS_SIDE side = left ? CblasLeft : CblasRight;
    enum CBLAS_UPLO uplo = upper ? CblasUpper : CblasLower;
    enum CBLAS_DIAG diag = unit ? CblasUnit : CblasNonUnit;
    int ldb = r > 1 ? r : 1;
    for (int64_t i = 0, items = count_of(nb, X->shape); i < items; i++) {
        load_colmajor(&A, item_offset(&A, 2, nb, X->shape, i), false, a);
        load_colmajor(&B, item_offset(&B, 2, nb, X->shape, i), false, b);
        if (X->dtype == TJ_FLOAT64)
            cblas_dtrsm(CblasColMajor, side, uplo, CblasNoTrans, diag, r, c, 1.0, (double *)(void *)a, n,
                        (double *)(void *)b, ldb);
        else
            cblas_strsm(CblasColMajor, side, uplo, CblasNoTrans, diag, r, c, 1.0f, (float *)(void *)a, n,
                        (float *)(void *)b, ldb);
        store_rowmajor(b, false, X->dtype, r, c, tj_tensor_ptr(X), i);
    }
    scratch_release(&s);
    return TJ_OK;
}

/* ---- LU factorization and solve ---- */

/* getrf of each item of A (m x n, or of its transpose) into LU (contiguous,
 * m x n matrices), pivots (int64, 1-based, min(m, n) per item) and info
 * (one per item). */
static tj_status lu_factor(const char *op, const mats *A, bool transpose, tj_tensor *LU, tj_tensor *pivots,
                           int64_t *info)
{
    int m = (int)(transpose ? cols_of(A) : rows_of(A)), n = (int)(transpose ? rows_of(A) : cols_of(A));
    int k = m < n ? m : n, nb = A->ndim - 2;
    int64_t items = count_of(nb, A->shape);
    size_t es = tj_dtype_size(A->dtype), mn = (size_t)m * (size_t)n;
    scratch s;
    tj_status st = scratch_get(&s, op, es * mn + sizeof(int) * (size_t)k);
    if (st != TJ_OK) return st;
    int *ipiv = (int *)(void *)((char *)s.p + es * mn);
    int64_t *piv_out = (int64_t *)(void *)tj_tensor_ptr(pivots);
    for (int64_t i = 0; i < items; i++) {
        load_colmajor(A, item_offset(A, 2, nb, A->shape, i), transpose, s.p);
        info[i] = k ? lapack_getrf(A->dtype, m, n, s.p, ipiv) : 0;
        store_rowmajor(s.p, false, A->dtype, m, n, tj_tensor_ptr(LU), i);
        for (int j = 0; j < k; j++) piv_out[i * k + j] = ipiv[j];
    }
    scratch_release(&s);
    return TJ_OK;
}

/* X (contiguous, the broadcast batch) from getrf's factors LU and pivots
 * (LAPACK's 1-based row swaps, each checked against n: getrs would read
 * out of bounds) and B: op(A) X = B (left) or X op(A) = B, op the transpose
 * with adjoint. */
static tj_status lu_solve(const char *op, const mats *LU, const mats *piv, const mats *B, bool left, bool adjoint,
                          const mats *X)
{
    int n = (int)cols_of(LU), r = (int)rows_of(B), c = (int)cols_of(B), nb = X->ndim - 2;
    int64_t items = count_of(nb, X->shape);
    if (items == 0 || r == 0 || c == 0) return TJ_OK;
    size_t es = tj_dtype_size(LU->dtype);
    scratch s;
    tj_status st = scratch_get(&s, op, es * ((size_t)n * (size_t)n + (size_t)r * (size_t)c) + sizeof(int) * (size_t)n);
    if (st != TJ_OK) return st;
    char *a = s.p, *b = a + es * (size_t)n * (size_t)n;
    int *ipiv = (int *)(void *)(b + es * (size_t)r * (size_t)c);
    /* X A = B is A^T X^T = B^T: B's transpose as the right-hand side */
    char trans = adjoint != !left ? 'T' : 'N';
    for (int64_t i = 0; i < items && st == TJ_OK; i++) {
        load_colmajor(LU, item_offset(LU, 2, nb, X->shape, i), false, a);
        const int64_t *p = (const int64_t *)(void *)piv->p, off = item_offset(piv, 1, nb, X->shape, i);
        for (int k = 0; k < n && st == TJ_OK; k++) {
            int64_t v = p[off + k * piv->strides[piv->ndim - 1]];
            if (v < 1 || v > n)
                st = tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: batch element %" PRId64 ": pivot %d is %" PRId64
                              ", outside [1, %d] (pivots must come from an LU factorization)", op, i, k, v, n);
            ipiv[k] = (int)v;
        }
        if (st != TJ_OK) break;
        load_colmajor(B, item_offset(B, 2, nb, X->shape, i), !left, b);
        lapack_getrs(LU->dtype, trans, n, left ? c : r, a, ipiv, b);
        store_rowmajor(b, !left, LU->dtype, r, c, X->p, i);
    }
    scratch_release(&s);
    return st;
}

#define LU_SOLVE "aten::linalg_lu_solve"

tj_status tj_meta_linalg_lu_solve(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *LU = args[0].u.t, *piv = args[1].u.t, *B = args[2].u.t;
    char sl[96], sp[96];
    tj_status st;
    if ((st = check_square(LU_SOLVE, "LU", LU)) || (st = check_float(LU_SOLVE, "B", B)) ||
        (st = check_same_dtype(LU_SOLVE, "LU", LU, "B", B)) || (st = check_matrix(LU_SOLVE, "B", B)))
        return st;
    if (piv->dtype != TJ_INT64)
        return tj_error(TJ_ERR_DTYPE, "%s: pivots should be a tensor of dtype int64 (torch's int32), got %s", LU_SOLVE,
                        tj_dtype_name(piv->dtype));
    if (piv->ndim != LU->ndim - 1 || memcmp(piv->shape, LU->shape, sizeof(int64_t) * (size_t)piv->ndim))
        return tj_error(TJ_ERR_SHAPE, "%s: expected LU.shape[:-1] and pivots.shape to be the same, but got LU %s and pivots %s",
                        LU_SOLVE, tj_shape_str(LU->ndim, LU->shape, sl, sizeof sl),
                        tj_shape_str(piv->ndim, piv->shape, sp, sizeof sp));
    mats mb = mats_of(B, false);
    return meta_solver(LU_SOLVE, "LU", LU, &mb, args[3].u.b, &outs[0]);
}

tj_status tj_kernel_linalg_lu_solve(const tj_value *args, tj_tensor *const *outs)
{
    mats LU = mats_of(args[0].u.t, false), piv = mats_of(args[1].u.t, false), B = mats_of(args[2].u.t, false);
    mats X = mats_of(outs[0], false);
    return lu_solve(LU_SOLVE, &LU, &piv, &B, args[3].u.b, args[4].u.b, &X);
}

/* ---- linalg_lu_factor_ex ---- */

#define LU_FACTOR_EX "aten::linalg_lu_factor_ex"

/* LU [*, m, n], pivots [*, min(m, n)] and info [*] (int64). */
tj_status tj_meta_linalg_lu_factor_ex(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *A = args[0].u.t;
    tj_status st;
    if ((st = check_float(LU_FACTOR_EX, "A", A)) || (st = check_matrix(LU_FACTOR_EX, "A", A))) return st;
    if (!args[1].u.b)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: linalg.lu_factor: LU without pivoting is not implemented on the CPU",
                        LU_FACTOR_EX);
    int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1];
    tj_meta_like(&outs[0], A);
    tj_meta_like(&outs[1], A);
    outs[1].ndim--;
    outs[1].shape[A->ndim - 2] = m < n ? m : n;
    outs[1].dtype = TJ_INT64;
    tj_meta_like(&outs[2], A);
    outs[2].ndim -= 2;
    outs[2].dtype = TJ_INT64;
    return TJ_OK;
}

/* As ATen 1.13: getrf of A itself (not of A^T: ATen's LU is
 * column-major), so that linalg_lu_solve(LU, pivots, B) solves A X = B. */
tj_status tj_kernel_linalg_lu_factor_ex(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *A = args[0].u.t;
    mats ma = mats_of(A, false);
    tj_status st = lu_factor(LU_FACTOR_EX, &ma, false, outs[0], outs[1], (int64_t *)(void *)tj_tensor_ptr(outs[2]));
    if (st == TJ_OK && args[2].u.b)
        st = check_info(LU_FACTOR_EX, "torch.linalg.lu_factor", "getrf", A, outs[2],
                        "U is singular (a zero on its diagonal) and using it on lu_solve would result in a division by zero");
    return st;
}

/* ---- linalg_lu ---- */

#define LU_PLU "aten::linalg_lu"

/* P [*, m, m], L [*, m, k], U [*, k, n], k = min(m, n). */
tj_status tj_meta_linalg_lu(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *A = args[0].u.t;
    tj_status st;
    if ((st = check_float(LU_PLU, "A", A)) || (st = check_matrix(LU_PLU, "A", A))) return st;
    if (!args[1].u.b)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: linalg.lu: LU without pivoting is not implemented on the CPU", LU_PLU);
    int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1], k = m < n ? m : n;
    const int64_t rows[3] = {m, m, k}, cols[3] = {m, k, n};
    for (int i = 0; i < 3; i++) {
        tj_meta_like(&outs[i], A);
        outs[i].shape[A->ndim - 2] = rows[i];
        outs[i].shape[A->ndim - 1] = cols[i];
    }
    return TJ_OK;
}

/* As ATen 1.13 (lu_factor_ex, then lu_unpack): getrf of A, L its unit
 * lower trapezoid, U its upper one, P the permutation of getrf's row swaps
 * (A = P L U). A singular A is no error (a zero on U's diagonal). */
tj_status tj_kernel_linalg_lu(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *A = args[0].u.t;
    mats ma = mats_of(A, false);
    int m = (int)rows_of(&ma), n = (int)cols_of(&ma), k = m < n ? m : n, nb = A->ndim - 2;
    int64_t items = count_of(nb, A->shape);
    tj_dtype dt = A->dtype;
    size_t es = tj_dtype_size(dt), mn = (size_t)m * (size_t)n;
    scratch s;
    tj_status st = scratch_get(&s, LU_PLU, es * mn + sizeof(int) * ((size_t)k + (size_t)m));
    if (st != TJ_OK) return st;
    char *a = s.p, *P = tj_tensor_ptr(outs[0]), *L = tj_tensor_ptr(outs[1]), *U = tj_tensor_ptr(outs[2]);
    int *ipiv = (int *)(void *)(a + es * mn), *perm = ipiv + k;
    memset(P, 0, es * (size_t)(items * m * m));
    for (int64_t b = 0; b < items; b++) {
        load_colmajor(&ma, item_offset(&ma, 2, nb, A->shape, b), false, a);
        if (k) lapack_getrf(dt, m, n, a, ipiv);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < k; j++) /* L: m x k */
                tj_store_f64(L + es * (size_t)((b * m + i) * k + j), dt,
                             i > j ? tj_load_f64(a + es * ((size_t)i + (size_t)j * (size_t)m), dt) : i == j);
        for (int i = 0; i < k; i++)
            for (int j = 0; j < n; j++) /* U: k x n */
                tj_store_f64(U + es * (size_t)((b * k + i) * n + j), dt,
                             i <= j ? tj_load_f64(a + es * ((size_t)i + (size_t)j * (size_t)m), dt) : 0);
        /* row j of L U is row perm[j] of A */
        for (int i = 0; i < m; i++) perm[i] = i;
        for (int j = 0; j < k; j++) {
            int t = perm[j];
            perm[j] = perm[ipiv[j] - 1], perm[ipiv[j] - 1] = t;
        }
        for (int j = 0; j < m; j++) tj_store_f64(P + es * (size_t)((b * m + perm[j]) * m + j), dt, 1);
    }
    scratch_release(&s);
    return TJ_OK;
}

/* ---- _linalg_solve_ex ---- */

#define SOLVE_EX "aten::_linalg_solve_ex"

/* ATen's linalg_solve_is_vector_rhs: B [n] or B of A's shape without its
 * last dim, read as one column. */
static bool is_vector_rhs(const tj_tensor *A, const tj_tensor *B)
{
    return B->ndim == 1 || (B->ndim == A->ndim - 1 && !memcmp(B->shape, A->shape, sizeof(int64_t) * (size_t)B->ndim));
}

tj_status tj_meta__linalg_solve_ex(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *A = args[0].u.t, *B = args[1].u.t;
    bool left = args[2].u.b;
    char sa[96], sb[96];
    tj_status st;
    if ((st = check_square(SOLVE_EX, "A", A)) || (st = check_float(SOLVE_EX, "B", B)) ||
        (st = check_same_dtype(SOLVE_EX, "A", A, "B", B)))
        return st;
    bool vector = is_vector_rhs(A, B);
    if (!vector && (st = check_matrix(SOLVE_EX, "B", B))) return st;
    if (vector && !left)
        return tj_error(TJ_ERR_SHAPE, "%s: A %s, B %s: vector broadcasting of the left hand side is not supported for left=False "
                        "(linalg.solve is then B / A.squeeze(-1))", SOLVE_EX, tj_shape_str(A->ndim, A->shape, sa, sizeof sa),
                        tj_shape_str(B->ndim, B->shape, sb, sizeof sb));
    mats mb = mats_of(B, vector);
    if ((st = meta_solver(SOLVE_EX, "A", A, &mb, left, &outs[0]))) return st;
    if (vector) outs[0].ndim--;
    tj_meta_like(&outs[1], A);
    tj_meta_like(&outs[2], A);
    outs[2].ndim--;
    outs[2].dtype = TJ_INT64;
    tj_meta_like(&outs[3], A);
    outs[3].ndim -= 2;
    outs[3].dtype = TJ_INT64;
    return TJ_OK;
}

/* As ATen 1.13: a contiguous A is factored as A^T (its memory read
 * column-major, no copy there) and solved with the adjoint; LU and pivots
 * are then A^T's, which the derivative (and torch's recorded backward
 * graphs: linalg_lu_solve with adjoint=False) rely on. */
tj_status tj_kernel__linalg_solve_ex(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *A = args[0].u.t, *B = args[1].u.t;
    bool left = args[2].u.b, use_A_T = tj_tensor_is_contiguous(A);
    mats ma = mats_of(A, false);
    tj_status st = lu_factor(SOLVE_EX, &ma, use_A_T, outs[1], outs[2], (int64_t *)(void *)tj_tensor_ptr(outs[3]));
    if (st == TJ_OK && args[3].u.b)
        st = check_info(SOLVE_EX, "torch.linalg.solve", "getrf", A, outs[3], "the solver failed because the input matrix is singular");
    if (st != TJ_OK) return st;
    bool vector = is_vector_rhs(A, B);
    mats LU = mats_of(outs[1], false), piv = mats_of(outs[2], false), mb = mats_of(B, vector);
    mats X = mats_of(outs[0], vector);
    return lu_solve(SOLVE_EX, &LU, &piv, &mb, left, use_A_T, &X);
}

/* ---- linalg_inv_ex ---- */

#define INV_EX "aten::linalg_inv_ex"

/* A's shape and an int64 info of its batch shape. */
static tj_status meta_square_with_info(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *A = args[0].u.t;
    tj_status st = check_square(op, "A", A);
    if (st != TJ_OK) return st;
    tj_meta_like(&outs[0], A);
    tj_meta_like(&outs[1], A);
    outs[1].ndim -= 2;
    outs[1].dtype = TJ_INT64;
    return TJ_OK;
}

tj_status tj_meta_linalg_inv_ex(const tj_value *args, tj_meta *outs)
{
    return meta_square_with_info(INV_EX, args, outs);
}

/* As ATen 1.13 (linalg_solve_ex of A and the identity): getrf of A (A^T
 * when contiguous), getrs on the identity's columns. */
tj_status tj_kernel_linalg_inv_ex(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *A = args[0].u.t;
    mats ma = mats_of(A, false);
    bool use_A_T = tj_tensor_is_contiguous(A);
    int n = (int)cols_of(&ma), nb = A->ndim - 2;
    size_t es = tj_dtype_size(A->dtype), nn = (size_t)n * (size_t)n;
    int64_t *info = (int64_t *)(void *)tj_tensor_ptr(outs[1]);
    scratch s;
    tj_status st = scratch_get(&s, INV_EX, 2 * es * nn + sizeof(int) * (size_t)n);
    if (st != TJ_OK) return st;
    char *a = s.p, *b = a + es * nn;
    int *ipiv = (int *)(void *)(b + es * nn);
    for (int64_t i = 0, items = count_of(nb, A->shape); i < items && n; i++) {
        load_colmajor(&ma, item_offset(&ma, 2, nb, A->shape, i), use_A_T, a);
        info[i] = lapack_getrf(A->dtype, n, n, a, ipiv);
        memset(b, 0, es * nn);
        for (int k = 0; k < n; k++) {
            if (A->dtype == TJ_FLOAT64) ((double *)(void *)b)[k * (n + 1)] = 1;
            else ((float *)(void *)b)[k * (n + 1)] = 1;
        }
        lapack_getrs(A->dtype, use_A_T ? 'T' : 'N', n, n, a, ipiv, b);
        store_rowmajor(b, false, A->dtype, n, n, tj_tensor_ptr(outs[0]), i);
    }
    scratch_release(&s);
    if (args[1].u.b) return check_info(INV_EX, "torch.linalg.inv", "getrf", A, outs[1], "the input matrix is singular");
    return TJ_OK;
}

/* ---- _linalg_det, _linalg_slogdet ---- */

#define DET "aten::_linalg_det"
#define SLOGDET "aten::_linalg_slogdet"

/* `nvalues` results of A's batch shape and dtype, then LU (A's shape) and
 * pivots (int64, A's shape without its last dim). */
static tj_status meta_det(const char *op, const tj_value *args, int nvalues, tj_meta *outs)
{
    const tj_tensor *A = args[0].u.t;
    tj_status st = check_square(op, "A", A);
    if (st != TJ_OK) return st;
    for (int k = 0; k < nvalues; k++) {
        tj_meta_like(&outs[k], A);
        outs[k].ndim -= 2;
    }
    tj_meta_like(&outs[nvalues], A);
    tj_meta_like(&outs[nvalues + 1], A);
    outs[nvalues + 1].ndim--;
    outs[nvalues + 1].dtype = TJ_INT64;
    return TJ_OK;
}

tj_status tj_meta__linalg_det(const tj_value *args, tj_meta *outs) { return meta_det(DET, args, 1, outs); }
tj_status tj_meta__linalg_slogdet(const tj_value *args, tj_meta *outs) { return meta_det(SLOGDET, args, 2, outs); }

/* The determinant of each item from its LU factors (contiguous LU,
 * pivots): the sign of the row swaps times the product of U's diagonal, or
 * (logabs) that sign times the signs of the diagonal into sign[] and the
 * sum of log |u_kk| into value[]; accumulated in float64. As ATen 1.13,
 * a contiguous A is factored as A^T (the same determinant). */
static tj_status det_from_lu(const char *op, const tj_value *args, tj_tensor *const *outs, bool logabs)
{
    const tj_tensor *A = args[0].u.t;
    tj_tensor *LU = outs[logabs ? 2 : 1], *piv = outs[logabs ? 3 : 2];
    mats ma = mats_of(A, false);
    int64_t n = cols_of(&ma), items = count_of(A->ndim - 2, A->shape);
    scratch info;
    tj_status st = scratch_get(&info, op, sizeof(int64_t) * (size_t)items);
    if (st != TJ_OK) return st;
    st = lu_factor(op, &ma, tj_tensor_is_contiguous(A), LU, piv, info.p);
    scratch_release(&info); /* a singular item shows as a zero on U's diagonal */
    if (st != TJ_OK) return st;
    const int64_t *p = (const int64_t *)(void *)tj_tensor_ptr(piv);
    const char *lu = tj_tensor_ptr(LU);
    for (int64_t i = 0; i < items; i++) {
        double sign = 1, value = logabs ? 0 : 1;
        for (int64_t k = 0; k < n; k++) {
            double u = tj_load_f64(lu + tj_dtype_size(A->dtype) * (size_t)((i * n + k) * n + k), A->dtype);
            if (p[i * n + k] != k + 1) sign = -sign;
            if (!logabs) value *= u;
            else sign *= u > 0 ? 1 : u < 0 ? -1 : 0, value += log(fabs(u));
        }
        tj_store_f64(tj_tensor_ptr(outs[0]) + tj_dtype_size(A->dtype) * (size_t)i, A->dtype, logabs ? sign : sign * value);
        if (logabs) tj_store_f64(tj_tensor_ptr(outs[1]) + tj_dtype_size(A->dtype) * (size_t)i, A->dtype, value);
    }
    return TJ_OK;
}

tj_status tj_kernel__linalg_det(const tj_value *args, tj_tensor *const *outs) { return det_from_lu(DET, args, outs, false); }
tj_status tj_kernel__linalg_slogdet(const tj_value *args, tj_tensor *const *outs)
{
    return det_from_lu(SLOGDET, args, outs, true);
}

/* ---- linalg_cholesky_ex, cholesky_solve ---- */

#define CHOLESKY_EX "aten::linalg_cholesky_ex"
#define CHOLESKY_SOLVE "aten::cholesky_solve"

tj_status tj_meta_linalg_cholesky_ex(const tj_value *args, tj_meta *outs)
{
    return meta_square_with_info(CHOLESKY_EX, args, outs);
}

/* As ATen 1.13: potrf of A's lower (upper) triangle, the other one zeroed;
 * where potrf stops (info k > 0: the minor of order k is not positive
 * definite) its partial factor is returned. */
tj_status tj_kernel_linalg_cholesky_ex(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *A = args[0].u.t;
    bool upper = args[1].u.b;
    mats ma = mats_of(A, false);
    int n = (int)cols_of(&ma), nb = A->ndim - 2;
    size_t es = tj_dtype_size(A->dtype);
    int64_t *info = (int64_t *)(void *)tj_tensor_ptr(outs[1]);
    scratch s;
    tj_status st = scratch_get(&s, CHOLESKY_EX, es * (size_t)n * (size_t)n);
    if (st != TJ_OK) return st;
    for (int64_t i = 0, items = count_of(nb, A->shape); i < items && n; i++) {
        load_colmajor(&ma, item_offset(&ma, 2, nb, A->shape, i), false, s.p);
        info[i] = lapack_potrf(A->dtype, upper ? 'U' : 'L', n, s.p);
        for (int j = 0; j < n; j++) /* column j's entries outside the triangle */
            for (int r = upper ? j + 1 : 0; r < (upper ? n : j); r++) {
                if (A->dtype == TJ_FLOAT64) ((double *)s.p)[r + j * n] = 0;
                else ((float *)s.p)[r + j * n] = 0;
            }
        store_rowmajor(s.p, false, A->dtype, n, n, tj_tensor_ptr(outs[0]), i);
    }
    scratch_release(&s);
    if (args[2].u.b)
        return check_info(CHOLESKY_EX, "torch.linalg.cholesky", "potrf", A, outs[1],
                          "the factorization could not be completed because the input is not positive-definite");
    return TJ_OK;
}

/* self B [*, n, k] and input2 L [*, n, n] broadcast against each other
 * (their batch dims), as ATen's _linalg_broadcast_batch_dims. */
tj_status tj_meta_cholesky_solve(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *B = args[0].u.t, *L = args[1].u.t;
    char sb[96], sl[96];
    tj_status st;
    if ((st = check_float(CHOLESKY_SOLVE, "self", B)) || (st = check_matrix(CHOLESKY_SOLVE, "self", B)) ||
        (st = check_square(CHOLESKY_SOLVE, "input2", L)) || (st = check_same_dtype(CHOLESKY_SOLVE, "self", B, "input2", L)))
        return st;
    if (L->shape[L->ndim - 1] != B->shape[B->ndim - 2])
        return tj_error(TJ_ERR_SHAPE, "%s: incompatible matrix sizes: each input2 matrix is %" PRId64 " by %" PRId64
                        " but each self matrix is %" PRId64 " by %" PRId64 " (input2 %s, self %s)", CHOLESKY_SOLVE,
                        L->shape[L->ndim - 1], L->shape[L->ndim - 1], B->shape[B->ndim - 2], B->shape[B->ndim - 1],
                        tj_shape_str(L->ndim, L->shape, sl, sizeof sl), tj_shape_str(B->ndim, B->shape, sb, sizeof sb));
    mats mb = mats_of(B, false);
    return meta_solver(CHOLESKY_SOLVE, "input2", L, &mb, true, &outs[0]);
}

/* potrs with the factor's lower (upper) triangle: (L L^T) X = B. */
tj_status tj_kernel_cholesky_solve(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *X = outs[0];
    if (X->numel == 0) return TJ_OK;
    mats B = mats_of(args[0].u.t, false), L = mats_of(args[1].u.t, false);
    char uplo = args[2].u.b ? 'U' : 'L';
    int n = (int)cols_of(&L), k = (int)cols_of(&B), nb = X->ndim - 2;
    size_t es = tj_dtype_size(X->dtype), nn = (size_t)n * (size_t)n;
    scratch s;
    tj_status st = scratch_get(&s, CHOLESKY_SOLVE, es * (nn + (size_t)n * (size_t)k));
    if (st != TJ_OK) return st;
    char *a = s.p, *b = a + es * nn;
    for (int64_t i = 0, items = count_of(nb, X->shape); i < items; i++) {
        load_colmajor(&L, item_offset(&L, 2, nb, X->shape, i), false, a);
        load_colmajor(&B, item_offset(&B, 2, nb, X->shape, i), false, b);
        lapack_potrs(X->dtype, uplo, n, k, a, b);
        store_rowmajor(b, false, X->dtype, n, k, tj_tensor_ptr(X), i);
    }
    scratch_release(&s);
    return TJ_OK;
}
