/* The LAPACK factorizations (runtime/op_lapack_factor.c, linalg_lu_factor_ex
 * and linalg_lu in runtime/op_lapack.c) and the implicit matrix norms over
 * them: QR, symmetric eigendecomposition, SVD and LU factors with their
 * gradients against PyTorch 1.13's float64 numbers
 * (tests/lapack_factor_ref.h, written by tests/make_lapack_factor_refs.py;
 * the vectors' signs are compared as they come: torch calls the same
 * OpenBLAS routines), float32 within its rounding, the modes' shapes, the
 * bad-input and non-differentiable-case errors, and make_fx recording with
 * the replayed plan giving eager's bits. */
#include <criterion/criterion.h>
#include <string.h>

#include "lapack_factor_ref.h"
#include "test_util.h"

TestSuite(factor, .init = test_scope_open, .fini = test_scope_close);

static tj_tensor *f64(const double *v, int ndim, const int64_t *shape, bool requires_grad)
{
    return test_f64_grad(v, ndim, shape, requires_grad);
}

/* The gradient in x of sum_i sum(ys[i] * gys[i]) (ys[i] NULL: left out). */
static tj_tensor *grad_of(tj_tensor *const *ys, tj_tensor *const *gys, int n, tj_tensor *x)
{
    tj_tensor *loss = NULL, *g = NULL;
    for (int i = 0; i < n; i++) {
        if (!ys[i]) continue;
        tj_tensor *term = tj_sum(tj_mul(ys[i], gys[i]), TJ_DTYPE_NONE);
        loss = loss ? tj_add(loss, term) : term;
    }
    cr_assert_not_null(loss, "%s", tj_last_error());
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, &x, 1, &g), TJ_OK, "%s", tj_last_error());
    return g;
}

static void expect_values(const tj_tensor *t, int ndim, const int64_t *shape, const double *want, double tol)
{
    int64_t n = test_assert_dtype_shape(t, tj_tensor_dtype(t), ndim, shape);
    test_expect_close(t, want, n, tol, tol);
}

/* A call that returned status st failed with `status`, its message naming
 * op and holding needle. */
static void expect_failed(tj_status st, tj_status status, const char *op, const char *needle)
{
    cr_assert_eq(st, status, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), op) && strstr(tj_last_error(), needle), "%s", tj_last_error());
}

static const int64_t A243[3] = {2, 4, 3}, A233[3] = {2, 3, 3}, A244[3] = {2, 4, 4}, A24[2] = {2, 4};

/* ---- linalg_qr ---- */

Test(factor, qr_gives_torchs_factors_and_gradients)
{
    tj_tensor *A = f64(QR_A, 3, A243, true), *Q, *R;
    cr_assert_eq(tj_linalg_qr(A, "reduced", &Q, &R), TJ_OK, "%s", tj_last_error());
    expect_values(Q, 3, A243, QR_Q, 1e-12);
    expect_values(R, 3, A233, QR_R, 1e-12);
    tj_tensor *g = grad_of((tj_tensor *[]){Q, R}, (tj_tensor *[]){f64(QR_GQ, 3, A243, false), f64(QR_GR, 3, A233, false)},
                           2, A);
    expect_values(g, 3, A243, QR_GA, 1e-11);
    cr_assert_eq(tj_linalg_qr(A, "reduced", NULL, &R), TJ_OK, "%s", tj_last_error());
    expect_values(grad_of(&R, (tj_tensor *[]){f64(QR_R_ONLY_GR, 3, A233, false)}, 1, A), 3, A243, QR_R_ONLY_GA, 1e-11);
}

Test(factor, qr_modes_give_torchs_shapes_and_values)
{
    tj_tensor *A = f64(QR_A, 3, A243, false), *Q, *R;
    cr_assert_eq(tj_linalg_qr(A, "complete", &Q, &R), TJ_OK, "%s", tj_last_error());
    expect_values(Q, 3, A244, QR_COMPLETE_Q, 1e-12);
    expect_values(R, 3, A243, QR_COMPLETE_R, 1e-12);
    cr_assert_eq(tj_linalg_qr(A, "r", &Q, &R), TJ_OK, "%s", tj_last_error());
    test_assert_dtype_shape(Q, TJ_FLOAT64, 1, (int64_t[]){0});
    expect_values(R, 3, A233, QR_R, 1e-12);
    cr_assert_eq(tj_linalg_qr(f64(QR_WIDE_A, 2, (int64_t[]){3, 5}, false), "reduced", &Q, &R), TJ_OK, "%s",
                 tj_last_error());
    expect_values(Q, 2, (int64_t[]){3, 3}, QR_WIDE_Q, 1e-12);
    expect_values(R, 2, (int64_t[]){3, 5}, QR_WIDE_R, 1e-12);
    /* float32: LAPACK's sgeqrf, within float32 rounding of the float64 factors */
    cr_assert_eq(tj_linalg_qr(tj_to_copy(A, TJ_FLOAT32), "reduced", &Q, &R), TJ_OK, "%s", tj_last_error());
    test_expect_close(Q, QR_Q, 24, 1e-5, 1e-5);
    test_expect_close(R, QR_R, 18, 1e-5, 1e-5);
}

Test(factor, qr_refuses_bad_modes_and_gradients_torch_does_not_define)
{
    tj_tensor *A = f64(QR_A, 3, A243, true), *Q, *R;
    expect_failed(tj_linalg_qr(A, "full", &Q, &R), TJ_ERR_INVALID_ARGUMENT, "aten::linalg_qr",
                  "unrecognized mode 'full'");
    expect_failed(tj_linalg_qr(f64(QR_A, 1, (int64_t[]){4}, false), "reduced", &Q, &R), TJ_ERR_SHAPE, "aten::linalg_qr",
                  "must have at least 2 dimensions");
    tj_tensor *g = NULL, *loss;
    cr_assert_eq(tj_linalg_qr(A, "r", NULL, &R), TJ_OK, "%s", tj_last_error());
    loss = tj_sum(R, TJ_DTYPE_NONE);
    expect_failed(tj_autograd_grad(&loss, 1, NULL, &A, 1, &g), TJ_ERR_INVALID_ARGUMENT, "aten::linalg_qr",
                  "not computed when mode='r'");
    cr_assert_eq(tj_linalg_qr(A, "complete", &Q, NULL), TJ_OK, "%s", tj_last_error());
    loss = tj_sum(Q, TJ_DTYPE_NONE);
    expect_failed(tj_autograd_grad(&loss, 1, NULL, &A, 1, &g), TJ_ERR_INVALID_ARGUMENT, "aten::linalg_qr",
                  "not differentiable when mode='complete' and nrows > ncols");
    tj_tensor *W = f64(QR_WIDE_A, 2, (int64_t[]){3, 5}, true);
    cr_assert_eq(tj_linalg_qr(W, "reduced", NULL, &R), TJ_OK, "%s", tj_last_error());
    loss = tj_sum(R, TJ_DTYPE_NONE);
    expect_failed(tj_autograd_grad(&loss, 1, NULL, &W, 1, &g), TJ_ERR_UNSUPPORTED, "aten::linalg_qr",
                  "fewer rows than columns");
}

/* ---- linalg_eigh ---- */

Test(factor, eigh_gives_torchs_eigenpairs_and_gradients)
{
    tj_tensor *S = f64(EIGH_A, 3, A244, true), *L, *V;
    cr_assert_eq(tj_linalg_eigh(S, "L", &L, &V), TJ_OK, "%s", tj_last_error());
    expect_values(L, 2, A24, EIGH_L, 1e-12);
    expect_values(V, 3, A244, EIGH_V, 1e-12);
    tj_tensor *g = grad_of((tj_tensor *[]){L, V}, (tj_tensor *[]){f64(EIGH_GL, 2, A24, false), f64(EIGH_GV, 3, A244, false)},
                           2, S);
    expect_values(g, 3, A244, EIGH_GA, 1e-11);
    cr_assert_eq(tj_linalg_eigh(S, "L", NULL, &V), TJ_OK, "%s", tj_last_error());
    expect_values(grad_of(&V, (tj_tensor *[]){f64(EIGH_V_ONLY_GV, 3, A244, false)}, 1, S), 3, A244, EIGH_V_ONLY_GA, 1e-11);
    tj_tensor *w = tj_linalg_eigvalsh(S, "L");
    expect_values(w, 2, A24, EIGH_L, 1e-12);
    expect_values(grad_of(&w, (tj_tensor *[]){f64(EIGVALSH_GL, 2, A24, false)}, 1, S), 3, A244, EIGVALSH_GA, 1e-11);
}

Test(factor, eigh_reads_one_triangle_and_float32_is_close)
{
    /* A's lower triangle with the upper one overwritten by 7s, read with "L";
     * its transpose read with "u" (either case) */
    tj_tensor *S = f64(EIGH_A, 3, A244, false), *L, *V;
    tj_tensor *lower = tj_add(tj_tril(S, 0), tj_triu(tj_full_like(S, tj_v_float(7), TJ_DTYPE_NONE), 1));
    cr_assert_eq(tj_linalg_eigh(lower, "L", &L, &V), TJ_OK, "%s", tj_last_error());
    expect_values(L, 2, A24, EIGH_L, 1e-12);
    expect_values(V, 3, A244, EIGH_V, 1e-12);
    cr_assert_eq(tj_linalg_eigh(tj_transpose(lower, -2, -1), "u", &L, NULL), TJ_OK, "%s", tj_last_error());
    expect_values(L, 2, A24, EIGH_L, 1e-12);
    cr_assert_eq(tj__linalg_eigh(S, "L", false, &L, &V), TJ_OK, "%s", tj_last_error());
    test_assert_dtype_shape(V, TJ_FLOAT64, 1, (int64_t[]){0});
    expect_values(L, 2, A24, EIGH_L, 1e-12);
    test_expect_close(tj_linalg_eigvalsh(tj_to_copy(S, TJ_FLOAT32), "L"), EIGH_L, 8, 1e-5, 1e-5);
}

Test(factor, eigh_refuses_non_square_and_bad_uplo_and_reports_no_convergence)
{
    tj_tensor *L, *V;
    expect_failed(tj_linalg_eigh(f64(QR_A, 3, A243, false), "L", &L, &V), TJ_ERR_SHAPE, "aten::_linalg_eigh",
                  "A must be batches of square matrices, but they are 4 by 3 matrices");
    expect_failed(tj_linalg_eigh(f64(EIGH_A, 3, A244, false), "X", &L, &V), TJ_ERR_INVALID_ARGUMENT,
                  "aten::_linalg_eigh", "Expected UPLO argument to be 'L' or 'U', but got X");
    tj_tensor *nan = tj_full((int64_t[]){3, 3}, 2, tj_v_float(NAN), TJ_FLOAT64);
    expect_failed(tj_linalg_eigh(nan, "L", &L, &V), TJ_ERR_INVALID_ARGUMENT, "aten::_linalg_eigh",
                  "batch element 0 of A [3, 3]: the algorithm failed to converge");
    tj_tensor *S = f64(EIGH_A, 3, A244, true), *g = NULL;
    cr_assert_eq(tj__linalg_eigh(S, "L", false, &L, NULL), TJ_OK, "%s", tj_last_error());
    tj_tensor *loss = tj_sum(L, TJ_DTYPE_NONE);
    expect_failed(tj_autograd_grad(&loss, 1, NULL, &S, 1, &g), TJ_ERR_INVALID_ARGUMENT, "aten::_linalg_eigh",
                  "compute_v=False");
}

/* ---- linalg_svd ---- */

static const int64_t T254[3] = {2, 5, 4}, T244[3] = {2, 4, 4}, T24[2] = {2, 4};

Test(factor, svd_gives_torchs_factors_and_gradients)
{
    tj_tensor *A = f64(SVD_TALL_A, 3, T254, true), *U, *S, *Vh;
    cr_assert_eq(tj_linalg_svd(A, false, NULL, &U, &S, &Vh), TJ_OK, "%s", tj_last_error());
    expect_values(U, 3, T254, SVD_TALL_U, 1e-12);
    expect_values(S, 2, T24, SVD_TALL_S, 1e-12);
    expect_values(Vh, 3, T244, SVD_TALL_VH, 1e-12);
    tj_tensor *g = grad_of((tj_tensor *[]){U, S, Vh},
                           (tj_tensor *[]){f64(SVD_TALL_GU, 3, T254, false), f64(SVD_TALL_GS, 2, T24, false),
                                           f64(SVD_TALL_GVH, 3, T244, false)},
                           3, A);
    expect_values(g, 3, T254, SVD_TALL_GA, 1e-11);
    tj_tensor *s = tj_linalg_svdvals(A, NULL);
    expect_values(s, 2, T24, SVD_TALL_S, 1e-12);
    expect_values(grad_of(&s, (tj_tensor *[]){f64(SVDVALS_GS, 2, T24, false)}, 1, A), 3, T254, SVDVALS_GA, 1e-11);
}

Test(factor, svd_of_a_wide_matrix_with_full_matrices_gives_torchs_factors_and_gradients)
{
    const int64_t W[3] = {2, 3, 5}, U3[3] = {2, 3, 3}, V5[3] = {2, 5, 5}, V35[3] = {2, 3, 5}, S2[2] = {2, 3};
    tj_tensor *A = f64(SVD_WIDE_A, 3, W, true), *U, *S, *Vh;
    cr_assert_eq(tj_linalg_svd(A, true, NULL, &U, &S, &Vh), TJ_OK, "%s", tj_last_error());
    expect_values(U, 3, U3, SVD_WIDE_U, 1e-12);
    expect_values(S, 2, S2, SVD_WIDE_S, 1e-12);
    expect_values(Vh, 3, V5, SVD_WIDE_VH, 1e-12);
    tj_tensor *g = grad_of((tj_tensor *[]){U, S, Vh},
                           (tj_tensor *[]){f64(SVD_WIDE_GU, 3, U3, false), f64(SVD_WIDE_GS, 2, S2, false),
                                           f64(SVD_WIDE_GVH, 3, V5, false)},
                           3, A);
    expect_values(g, 3, W, SVD_WIDE_GA, 1e-11);
    cr_assert_eq(tj_linalg_svd(A, false, NULL, NULL, NULL, &Vh), TJ_OK, "%s", tj_last_error());
    expect_values(grad_of(&Vh, (tj_tensor *[]){f64(SVD_WIDE_VH_ONLY_GVH, 3, V35, false)}, 1, A), 3, W,
                  SVD_WIDE_VH_ONLY_GA, 1e-11);
}

Test(factor, svd_modes_empty_matrices_float32_and_errors)
{
    tj_tensor *A = f64(SVD_TALL_A, 3, T254, false), *U, *S, *Vh;
    cr_assert_eq(tj__linalg_svd(A, false, false, NULL, &U, &S, &Vh), TJ_OK, "%s", tj_last_error());
    test_assert_dtype_shape(U, TJ_FLOAT64, 1, (int64_t[]){0});
    test_assert_dtype_shape(Vh, TJ_FLOAT64, 1, (int64_t[]){0});
    expect_values(S, 2, T24, SVD_TALL_S, 1e-12);
    test_expect_close(tj_linalg_svdvals(tj_to_copy(A, TJ_FLOAT32), NULL), SVD_TALL_S, 8, 1e-5, 1e-5);
    cr_assert_eq(tj_linalg_svd(tj_zeros((int64_t[]){2, 0}, 2, TJ_FLOAT64), true, NULL, &U, &S, &Vh), TJ_OK, "%s",
                 tj_last_error());
    expect_values(U, 2, (int64_t[]){2, 2}, (double[]){1, 0, 0, 1}, 0);
    test_assert_dtype_shape(S, TJ_FLOAT64, 1, (int64_t[]){0});
    test_assert_dtype_shape(Vh, TJ_FLOAT64, 2, (int64_t[]){0, 0});
    expect_failed(tj_linalg_svd(A, false, "gesvd", &U, &S, &Vh), TJ_ERR_UNSUPPORTED, "aten::_linalg_svd",
                  "keyword argument `driver=` is only supported on CUDA");
    tj_tensor *nan = tj_full((int64_t[]){3, 2}, 2, tj_v_float(NAN), TJ_FLOAT64);
    expect_failed(tj_linalg_svd(nan, false, NULL, &U, &S, &Vh), TJ_ERR_INVALID_ARGUMENT, "aten::_linalg_svd",
                  "the algorithm failed to converge");
}

/* ---- linalg_lu_factor ---- */

Test(factor, lu_factor_gives_torchs_factors_which_lu_solve_reads)
{
    tj_tensor *A = f64(LU_A, 3, A244, false), *LU, *piv;
    cr_assert_eq(tj_linalg_lu_factor(A, true, &LU, &piv), TJ_OK, "%s", tj_last_error());
    expect_values(LU, 3, A244, LU_LU, 1e-12);
    test_expect_i64(piv, 8, LU_PIVOTS);
    tj_tensor *X = tj_linalg_lu_solve(LU, piv, f64(LU_B, 3, (int64_t[]){2, 4, 2}, false), true, false);
    expect_values(X, 3, (int64_t[]){2, 4, 2}, LU_X, 1e-12);
    cr_assert_eq(tj_linalg_lu_factor(f64(QR_A, 3, A243, false), true, &LU, &piv), TJ_OK, "%s", tj_last_error());
    expect_values(LU, 3, A243, LU_TALL_LU, 1e-12);
    test_expect_i64(piv, 6, LU_TALL_PIVOTS);
}

Test(factor, lu_factor_reports_singular_matrices_and_refuses_no_pivoting)
{
    tj_tensor *S = f64((double[]){1, 2, 3, 2, 4, 6, 1, 0, 1}, 2, (int64_t[]){3, 3}, false), *LU, *piv, *info;
    cr_assert_eq(tj_linalg_lu_factor_ex(S, true, false, &LU, &piv, &info), TJ_OK, "%s", tj_last_error());
    test_expect_i64(info, 1, (int64_t[]){3});
    expect_failed(tj_linalg_lu_factor(S, true, &LU, &piv), TJ_ERR_INVALID_ARGUMENT, "aten::linalg_lu_factor_ex",
                  "batch element 0 of A [3, 3]: U is singular");
    expect_failed(tj_linalg_lu_factor(S, false, &LU, &piv), TJ_ERR_UNSUPPORTED, "aten::linalg_lu_factor_ex",
                  "LU without pivoting is not implemented on the CPU");
}

Test(factor, lu_gives_torchs_permutation_and_factors_and_gradients)
{
    tj_tensor *A = f64(LU_A, 3, A244, true), *P, *L, *U;
    cr_assert_eq(tj_linalg_lu(A, true, &P, &L, &U), TJ_OK, "%s", tj_last_error());
    expect_values(P, 3, A244, LU_P, 0);
    expect_values(L, 3, A244, LU_L, 1e-12);
    expect_values(U, 3, A244, LU_U, 1e-12);
    tj_tensor *g = grad_of((tj_tensor *[]){L, U}, (tj_tensor *[]){f64(LU_GL, 3, A244, false), f64(LU_GU, 3, A244, false)},
                           2, A);
    expect_values(g, 3, A244, LU_GA, 1e-11);
    tj_tensor *W = f64(QR_WIDE_A, 2, (int64_t[]){3, 5}, true);
    cr_assert_eq(tj_linalg_lu(W, true, &P, &L, &U), TJ_OK, "%s", tj_last_error());
    expect_values(P, 2, (int64_t[]){3, 3}, LU_WIDE_P, 0);
    expect_values(L, 2, (int64_t[]){3, 3}, LU_WIDE_L, 1e-12);
    expect_values(U, 2, (int64_t[]){3, 5}, LU_WIDE_U, 1e-12);
    tj_tensor *loss = tj_sum(U, TJ_DTYPE_NONE);
    expect_failed(tj_autograd_grad(&loss, 1, NULL, &W, 1, &g), TJ_ERR_UNSUPPORTED, "aten::linalg_lu",
                  "non-square A [3, 5]");
    expect_failed(tj_linalg_lu(W, false, &P, &L, &U), TJ_ERR_UNSUPPORTED, "aten::linalg_lu",
                  "LU without pivoting is not implemented on the CPU");
}

/* ---- linalg_matrix_norm ---- */

Test(factor, matrix_norm_gives_torchs_values_and_gradients)
{
    tj_tensor *A = f64(SVD_TALL_A, 3, T254, true);
    tj_tensor *nuc = tj_linalg_matrix_norm_str_ord(A, "nuc", NULL, 0, false, TJ_DTYPE_NONE);
    tj_tensor *two = tj_linalg_matrix_norm(A, tj_v_int(2), NULL, 0, false, TJ_DTYPE_NONE);
    expect_values(nuc, 1, (int64_t[]){2}, NORM_NUC, 1e-12);
    expect_values(two, 1, (int64_t[]){2}, NORM_TWO, 1e-12);
    tj_tensor *loss = tj_add(tj_sum(nuc, TJ_DTYPE_NONE), tj_sum(two, TJ_DTYPE_NONE)), *g = NULL;
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, &A, 1, &g), TJ_OK, "%s", tj_last_error());
    expect_values(g, 3, T254, NORM_GA, 1e-11);
    tj_tensor *kept = tj_linalg_matrix_norm(A, tj_v_int(-1), (int64_t[]){0, 2}, 2, true, TJ_DTYPE_NONE);
    expect_values(kept, 3, (int64_t[]){1, 5, 1}, NORM_MINUS_ONE_KEPT, 1e-12);
}

Test(factor, matrix_norm_refuses_torchs_bad_arguments)
{
    tj_tensor *A = f64(SVD_TALL_A, 3, T254, false);
    test_expect_error(tj_linalg_matrix_norm(A, tj_v_int(3), NULL, 0, false, TJ_DTYPE_NONE), TJ_ERR_INVALID_ARGUMENT,
                      "aten::linalg_matrix_norm", "Order 3 not supported");
    test_expect_error(tj_linalg_matrix_norm_str_ord(A, "max", NULL, 0, false, TJ_DTYPE_NONE), TJ_ERR_INVALID_ARGUMENT,
                      "aten::linalg_matrix_norm", "Order max not supported");
    test_expect_error(tj_linalg_matrix_norm(A, tj_v_int(2), (int64_t[]){1, -2}, 2, false, TJ_DTYPE_NONE),
                      TJ_ERR_INVALID_ARGUMENT, "aten::linalg_matrix_norm", "dims must be different. Got (1, 1)");
    test_expect_error(tj_linalg_matrix_norm(A, tj_v_int(1), (int64_t[]){1}, 1, false, TJ_DTYPE_NONE),
                      TJ_ERR_INVALID_ARGUMENT, "aten::linalg_matrix_norm", "dim must be a 2-tuple");
    test_expect_error(tj_linalg_matrix_norm_str_ord(f64(SVD_TALL_S, 1, (int64_t[]){4}, false), "fro", NULL, 0, false,
                                                    TJ_DTYPE_NONE),
                      TJ_ERR_SHAPE, "aten::linalg_matrix_norm", "must have at least 2 dimensions");
    test_expect_error(tj_linalg_matrix_norm(A, tj_v_int(2), NULL, 0, false, TJ_FLOAT32), TJ_ERR_DTYPE,
                      "aten::linalg_matrix_norm", "should be convertible without narrowing");
}

/* ---- tracing and plans ---- */

static tj_status factor_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *A = tj_tensor_detach(in[0]), *Q, *R, *L, *V, *U, *S, *Vh, *LU, *piv, *Lf, *Uf;
    if (!A || tj_tensor_set_requires_grad(A, true) != TJ_OK || tj_linalg_qr(A, "reduced", &Q, &R) != TJ_OK ||
        tj_linalg_eigh(tj_matmul(tj_transpose(A, -2, -1), A), "L", &L, &V) != TJ_OK ||
        tj_linalg_svd(A, false, NULL, &U, &S, &Vh) != TJ_OK || tj_linalg_lu_factor(tj_tensor_detach(A), true, &LU, &piv) != TJ_OK ||
        tj_linalg_lu(tj_narrow(A, -2, 0, 3), true, NULL, &Lf, &Uf) != TJ_OK)
        return tj_last_status();
    tj_tensor *loss = tj_add(tj_sum(tj_mul(Q, Q), TJ_DTYPE_NONE), tj_sum(R, TJ_DTYPE_NONE));
    loss = tj_add(loss, tj_add(tj_sum(L, TJ_DTYPE_NONE), tj_sum(tj_mul(V, V), TJ_DTYPE_NONE)));
    loss = tj_add(loss, tj_add(tj_sum(tj_mul(U, U), TJ_DTYPE_NONE), tj_sum(S, TJ_DTYPE_NONE)));
    loss = tj_add(loss, tj_sum(tj_linalg_svdvals(A, NULL), TJ_DTYPE_NONE));
    loss = tj_add(loss, tj_add(tj_sum(tj_mul(Lf, Lf), TJ_DTYPE_NONE), tj_sum(Uf, TJ_DTYPE_NONE)));
    *n_out = 3;
    out[0] = tj_add(tj_sum(Vh, TJ_DTYPE_NONE), tj_sum(LU, TJ_DTYPE_NONE));
    out[1] = Q;
    return loss ? tj_autograd_grad(&loss, 1, NULL, &A, 1, &out[2]) : tj_last_status();
}

Test(factor, make_fx_records_the_operators_as_torch_and_the_plan_gives_eagers_bits)
{
    tj_tensor *A = f64(QR_A, 3, A243, false);
    const char *want[] = {"aten.linalg_qr.default(", "aten._linalg_eigh.default(", "aten._linalg_svd.default(",
                          "aten.linalg_lu_factor_ex.default(", "aten.linalg_solve_triangular.default(",
                          "aten.linalg_lu.default("};
    test_expect_traced(factor_step, &A, 1, 3, want, 6, "aten.linalg_svd.default", 1e-12);
}
