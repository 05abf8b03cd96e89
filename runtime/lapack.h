/* The LAPACK routines tjit calls, as OpenBLAS exports them (Fortran symbols,
 * no lapacke.h on the build machine). Fortran conventions: every argument by
 * pointer, matrices column-major with a leading dimension, and after the
 * declared arguments one hidden length per CHARACTER argument (gfortran's ABI
 * since GCC 8: size_t), passed as 1 for our one-letter options. */
#ifndef TJIT_RUNTIME_LAPACK_H
#define TJIT_RUNTIME_LAPACK_H

#include <stddef.h>

/* LU with partial pivoting: A = P L U, m x n (ipiv 1-based; info > 0: U[info-1][info-1] is 0). */
void sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv, int *info);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
/* op(A) X = B from getrf's factors, trans 'N' or 'T'. */
void sgetrs_(const char *trans, const int *n, const int *nrhs, const float *a, const int *lda, const int *ipiv,
             float *b, const int *ldb, int *info, size_t trans_len);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda, const int *ipiv,
             double *b, const int *ldb, int *info, size_t trans_len);
/* Cholesky: A = L L^T (uplo 'L') or U^T U ('U'); info > 0: the leading minor of order info is not positive. */
void spotrf_(const char *uplo, const int *n, float *a, const int *lda, int *info, size_t uplo_len);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t uplo_len);
/* A X = B from potrf's factor. */
void spotrs_(const char *uplo, const int *n, const int *nrhs, const float *a, const int *lda, float *b,
             const int *ldb, int *info, size_t uplo_len);
void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *lda, double *b,
             const int *ldb, int *info, size_t uplo_len);
/* Householder QR: A = Q R, R in the upper triangle, Q as min(m, n) reflectors below it and tau. */
void sgeqrf_(const int *m, const int *n, float *a, const int *lda, float *tau, float *work, const int *lwork, int *info);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work, const int *lwork,
             int *info);
/* The first n columns of the product of geqrf's k reflectors (m x n, in place). */
void sorgqr_(const int *m, const int *n, const int *k, float *a, const int *lda, const float *tau, float *work,
             const int *lwork, int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda, const double *tau, double *work,
             const int *lwork, int *info);
/* Symmetric eigendecomposition by divide and conquer: ascending eigenvalues w, the eigenvectors in a
 * (jobz 'V'); info > 0: no convergence. */
void ssyevd_(const char *jobz, const char *uplo, const int *n, float *a, const int *lda, float *w, float *work,
             const int *lwork, int *iwork, const int *liwork, int *info, size_t jobz_len, size_t uplo_len);
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w, double *work,
             const int *lwork, int *iwork, const int *liwork, int *info, size_t jobz_len, size_t uplo_len);
/* SVD by divide and conquer: A = U diag(s) VT, s descending (jobz 'A', 'S' or 'N'; iwork of 8 min(m, n));
 * info > 0: no convergence. */
void sgesdd_(const char *jobz, const int *m, const int *n, float *a, const int *lda, float *s, float *u,
             const int *ldu, float *vt, const int *ldvt, float *work, const int *lwork, int *iwork, int *info,
             size_t jobz_len);
void dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda, double *s, double *u,
             const int *ldu, double *vt, const int *ldvt, double *work, const int *lwork, int *iwork, int *info,
             size_t jobz_len);

#endif
