/* The orthogonal and spectral factorizations on OpenBLAS's LAPACK, as ATen
 * 1.13 computes them on the CPU (BatchLinearAlgebra.cpp): linalg_qr (geqrf,
 * orgqr), _linalg_eigh (syevd) and _linalg_svd (gesdd), each on a
 * column-major copy of A itself, so that the signs LAPACK picks are
 * torch's. Outputs are contiguous; the ones a mode leaves uncomputed have
 * ATen's shape [0]. */
#include <ctype.h>

#include "lapack.h"
#include "lapack_batch.h"
#include "op_lapack.h"

/* ---- LAPACK by dtype; lwork = -1 is a workspace query (its size in work[0]) ---- */

static int lapack_geqrf(tj_dtype dt, int m, int n, void *a, void *tau, void *work, int lwork)
{
    int info = 0, lda = m > 1 ? m : 1;
    if (dt == TJ_FLOAT64) dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
    else sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
    return info;
}

static int lapack_orgqr(tj_dtype dt, int m, int n, int k, void *a, const void *tau, void *work, int lwork)
{
    int info = 0, lda = m > 1 ? m : 1;
    if (dt == TJ_FLOAT64) dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
    else sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
    return info;
}

static int lapack_syevd(tj_dtype dt, char jobz, char uplo, int n, void *a, void *w, void *work, int lwork, int *iwork,
                        int liwork)
{
    int info = 0, lda = n > 1 ? n : 1;
    if (dt == TJ_FLOAT64) dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);
    else ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);
    return info;
}

static int lapack_gesdd(tj_dtype dt, char jobz, int m, int n, void *a, void *s, void *u, void *vt, int vtrows,
                        void *work, int lwork, int *iwork)
{
    int info = 0, lda = m > 1 ? m : 1, ldu = lda, ldvt = vtrows > 1 ? vtrows : 1;
    if (dt == TJ_FLOAT64) dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info, 1);
    else sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info, 1);
    return info;
}

/* A workspace query's answer (work[0], of dtype dt), at least 1. */
static int query_size(tj_dtype dt, const void *work)
{
    double v = dt == TJ_FLOAT64 ? *(const double *)work : (double)*(const float *)work;
    return v > 1 ? (int)v : 1;
}

/* `out`'s shape: A's batch dims, then r x c (or [0] when !computed). */
static void meta_batch_matrix(tj_meta *out, const tj_tensor *A, bool computed, int64_t r, int64_t c)
{
    tj_meta_like(out, A);
    if (!computed) {
        out->ndim = 1, out->shape[0] = 0;
        return;
    }
    out->shape[A->ndim - 2] = r;
    out->shape[A->ndim - 1] = c;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- linalg_qr ---- */

#define QR "aten::linalg_qr"

/* ATen's _parse_qr_mode: "reduced" (Q m x k, R k x n), "complete" (Q m x
 * m, R m x n) or "r" (R k x n only), k = min(m, n). */
static tj_status parse_qr_mode(const char *mode, bool *compute_q, bool *reduced)
{
    *compute_q = strcmp(mode, "r") != 0;
    *reduced = strcmp(mode, "complete") != 0;
    if (strcmp(mode, "reduced") && strcmp(mode, "complete") && strcmp(mode, "r"))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: qr received unrecognized mode '%s' but expected one of 'reduced' "
                        "(default), 'r', or 'complete'", QR, mode);
    return TJ_OK;
}

tj_status tj_meta_linalg_qr(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *A = args[0].u.t;
    bool compute_q, reduced;
    tj_status st;
    if ((st = check_float(QR, "A", A)) || (st = check_matrix(QR, "A", A)) ||
        (st = parse_qr_mode(args[1].u.s, &compute_q, &reduced)))
        return st;
    int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1], k = min64(m, n);
    meta_batch_matrix(&outs[0], A, compute_q, m, reduced ? k : m);
    meta_batch_matrix(&outs[1], A, true, reduced ? k : m, n);
    return TJ_OK;
}

/* As ATen: geqrf of A; R is the upper triangle of its rows (zero rows
 * below A's n for the complete R), Q orgqr of the reflectors in Q's
 * columns. */
tj_status tj_kernel_linalg_qr(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *A = args[0].u.t;
    bool compute_q, reduced;
    parse_qr_mode(args[1].u.s, &compute_q, &reduced);
    mats ma = mats_of(A, false);
    int m = (int)rows_of(&ma), n = (int)cols_of(&ma), k = m < n ? m : n, qcols = reduced ? k : m,
        rrows = reduced ? k : m, nb = A->ndim - 2;
    int64_t items = count_of(nb, A->shape);
    if (items == 0) return TJ_OK;
    tj_dtype dt = A->dtype;
    size_t es = tj_dtype_size(dt), mn = (size_t)m * (size_t)n, mq = (size_t)m * (size_t)qcols;
    double query[1];
    lapack_geqrf(dt, m, n, NULL, NULL, query, -1);
    int lwork = query_size(dt, query);
    if (compute_q) {
        lapack_orgqr(dt, m, qcols, k, NULL, NULL, query, -1);
        int lq = query_size(dt, query);
        lwork = lq > lwork ? lq : lwork;
    }
    scratch s;
    tj_status st = scratch_get(&s, QR, es * (mn + mq + (size_t)k + (size_t)lwork));
    if (st != TJ_OK) return st;
    char *a = s.p, *q = a + es * mn, *tau = q + es * mq, *work = tau + es * (size_t)k;
    char *R = tj_tensor_ptr(outs[1]);
    for (int64_t i = 0; i < items; i++) {
        load_colmajor(&ma, item_offset(&ma, 2, nb, A->shape, i), false, a);
        lapack_geqrf(dt, m, n, a, tau, work, lwork);
        for (int r = 0; r < rrows; r++)
            for (int c = 0; c < n; c++) {
                double v = r <= c ? tj_load_f64(a + es * ((size_t)r + (size_t)c * (size_t)m), dt) : 0;
                tj_store_f64(R + es * ((size_t)i * (size_t)rrows * (size_t)n + (size_t)r * (size_t)n + (size_t)c), dt, v);
            }
        if (!compute_q) continue;
        /* the reflectors of Q's first min(n, qcols) columns; orgqr reads no others */
        memcpy(q, a, es * (size_t)m * (size_t)(n < qcols ? n : qcols));
        lapack_orgqr(dt, m, qcols, k, q, tau, work, lwork);
        store_rowmajor(q, false, dt, m, qcols, tj_tensor_ptr(outs[0]), i);
    }
    scratch_release(&s);
    return TJ_OK;
}

/* ---- _linalg_eigh ---- */

#define EIGH "aten::_linalg_eigh"

/* ATen's checkUplo: one letter, 'L' or 'U' in either case. */
static tj_status parse_uplo(const char *op, const char *uplo, char *out)
{
    *out = (char)toupper((unsigned char)uplo[0]);
    if (strlen(uplo) != 1 || (*out != 'L' && *out != 'U'))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: Expected UPLO argument to be 'L' or 'U', but got %s", op, uplo);
    return TJ_OK;
}

tj_status tj_meta__linalg_eigh(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *A = args[0].u.t;
    char uplo;
    tj_status st;
    if ((st = check_square(EIGH, "A", A)) || (st = parse_uplo(EIGH, args[1].u.s, &uplo))) return st;
    tj_meta_like(&outs[0], A);
    outs[0].ndim--;
    int64_t n = A->shape[A->ndim - 1];
    meta_batch_matrix(&outs[1], A, args[2].u.b, n, n);
    return TJ_OK;
}

/* syevd of A's lower (upper) triangle: ascending eigenvalues, eigenvectors
 * as columns; an item that does not converge is an error, as ATen's
 * _linalg_check_errors after it. */
tj_status tj_kernel__linalg_eigh(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *A = args[0].u.t;
    bool compute_v = args[2].u.b;
    char uplo, jobz = compute_v ? 'V' : 'N';
    parse_uplo(EIGH, args[1].u.s, &uplo);
    mats ma = mats_of(A, false);
    int n = (int)cols_of(&ma), nb = A->ndim - 2;
    int64_t items = count_of(nb, A->shape);
    if (items == 0 || n == 0) return TJ_OK;
    tj_dtype dt = A->dtype;
    size_t es = tj_dtype_size(dt), nn = (size_t)n * (size_t)n;
    double query[1];
    int iquery = 1;
    lapack_syevd(dt, jobz, uplo, n, NULL, NULL, query, -1, &iquery, -1);
    int lwork = query_size(dt, query), liwork = iquery > 1 ? iquery : 1;
    scratch s;
    tj_status st = scratch_get(&s, EIGH, es * (nn + (size_t)lwork) + sizeof(int) * (size_t)liwork);
    if (st != TJ_OK) return st;
    char *a = s.p, *work = a + es * nn;
    int *iwork = (int *)(void *)(work + es * (size_t)lwork);
    char *w = tj_tensor_ptr(outs[0]);
    char sa[96];
    for (int64_t i = 0; i < items && st == TJ_OK; i++) {
        load_colmajor(&ma, item_offset(&ma, 2, nb, A->shape, i), false, a);
        int info = lapack_syevd(dt, jobz, uplo, n, a, w + es * (size_t)i * (size_t)n, work, lwork, iwork, liwork);
        if (info != 0)
            st = tj_error(TJ_ERR_INVALID_ARGUMENT, "%s (torch.linalg.eigh): batch element %" PRId64 " of A %s: the algorithm "
                          "failed to converge because the input matrix is ill-conditioned or has too many repeated "
                          "eigenvalues (LAPACK syevd info %d)", EIGH, i, tj_shape_str(A->ndim, A->shape, sa, sizeof sa), info);
        else if (compute_v) store_rowmajor(a, false, dt, n, n, tj_tensor_ptr(outs[1]), i);
    }
    scratch_release(&s);
    return st;
}

/* ---- _linalg_svd ---- */

#define SVD "aten::_linalg_svd"

tj_status tj_meta__linalg_svd(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *A = args[0].u.t;
    bool full = args[1].u.b, compute_uv = args[2].u.b;
    tj_status st;
    if ((st = check_float(SVD, "A", A)) || (st = check_matrix(SVD, "A", A))) return st;
    if (args[3].kind == TJ_V_STR)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: torch.linalg.svd: keyword argument `driver=` is only supported on CUDA "
                        "inputs with cuSOLVER backend (got driver='%s')", SVD, args[3].u.s);
    int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1], k = min64(m, n);
    meta_batch_matrix(&outs[0], A, compute_uv, m, full ? m : k);
    tj_meta_like(&outs[1], A);
    outs[1].ndim--;
    outs[1].shape[A->ndim - 2] = k;
    meta_batch_matrix(&outs[2], A, compute_uv, full ? n : k, n);
    return TJ_OK;
}

/* The identity into item b of contiguous `out` (r x r matrices). */
static void store_identity(tj_dtype dt, int64_t r, void *out, int64_t b)
{
    size_t es = tj_dtype_size(dt);
    char *d = (char *)out + es * (size_t)(b * r * r);
    memset(d, 0, es * (size_t)(r * r));
    for (int64_t j = 0; j < r; j++) tj_store_f64(d + es * (size_t)(j * r + j), dt, 1);
}

/* gesdd of A: descending singular values, U's columns and Vh's rows (all
 * of them with full_matrices); an item that does not converge is an error.
 * Of an empty A the full U and Vh are identities, as ATen's. */
tj_status tj_kernel__linalg_svd(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *A = args[0].u.t;
    bool full = args[1].u.b, compute_uv = args[2].u.b;
    mats ma = mats_of(A, false);
    int m = (int)rows_of(&ma), n = (int)cols_of(&ma), k = m < n ? m : n, nb = A->ndim - 2;
    int ucols = compute_uv ? (full ? m : k) : 1, vrows = compute_uv ? (full ? n : k) : 1;
    char jobz = compute_uv ? (full ? 'A' : 'S') : 'N';
    int64_t items = count_of(nb, A->shape);
    tj_dtype dt = A->dtype;
    if (items == 0) return TJ_OK;
    if (k == 0) {
        for (int64_t i = 0; i < items && compute_uv && full; i++) {
            store_identity(dt, m, tj_tensor_ptr(outs[0]), i);
            store_identity(dt, n, tj_tensor_ptr(outs[2]), i);
        }
        return TJ_OK;
    }
    size_t es = tj_dtype_size(dt), mn = (size_t)m * (size_t)n, mu = (size_t)m * (size_t)ucols,
           vn = (size_t)vrows * (size_t)n;
    double query[1];
    int iquery[1];
    lapack_gesdd(dt, jobz, m, n, NULL, NULL, NULL, NULL, vrows, query, -1, iquery);
    int lwork = query_size(dt, query);
    scratch s;
    tj_status st = scratch_get(&s, SVD, es * (mn + mu + vn + (size_t)lwork) + sizeof(int) * 8 * (size_t)k);
    if (st != TJ_OK) return st;
    char *a = s.p, *u = a + es * mn, *vt = u + es * mu, *work = vt + es * vn;
    int *iwork = (int *)(void *)(work + es * (size_t)lwork);
    char *sv = tj_tensor_ptr(outs[1]);
    char sa[96];
    for (int64_t i = 0; i < items && st == TJ_OK; i++) {
        load_colmajor(&ma, item_offset(&ma, 2, nb, A->shape, i), false, a);
        int info = lapack_gesdd(dt, jobz, m, n, a, sv + es * (size_t)i * (size_t)k, u, vt, vrows, work, lwork, iwork);
        if (info != 0)
            st = tj_error(TJ_ERR_INVALID_ARGUMENT, "%s (torch.linalg.svd): batch element %" PRId64 " of A %s: the algorithm "
                          "failed to converge because the input matrix is ill-conditioned or has too many repeated "
                          "singular values (LAPACK gesdd info %d)", SVD, i, tj_shape_str(A->ndim, A->shape, sa, sizeof sa),
                          info);
        else if (compute_uv) {
            store_rowmajor(u, false, dt, m, ucols, tj_tensor_ptr(outs[0]), i);
            store_rowmajor(vt, false, dt, vrows, n, tj_tensor_ptr(outs[2]), i);
        }
    }
    scratch_release(&s);
    return st;
}
