/* The LAPACK operators (runtime/op_lapack.c): values and gradients against
 * PyTorch 1.13's float64 numbers (tests/lapack_ref.h, written by
 * tests/make_lapack_refs.py), float32 within its rounding, broadcast
 * batches against per-item solves, singular matrices (info, the
 * check_errors error, det's finite gradient), the inverse and determinants
 * with their gradients, Cholesky factors and solves, the bad-input errors, and make_fx recording with
 * the replayed plan giving eager's bits. */
#include <criterion/criterion.h>
#include <string.h>

#include "lapack_ref.h"
#include "runtime/internal.h"
#include "test_util.h"

TestSuite(lapack, .init = test_scope_open, .fini = test_scope_close);

static tj_tensor *f64(const double *v, int ndim, const int64_t *shape, bool requires_grad)
{
    return test_f64_grad(v, ndim, shape, requires_grad);
}

/* The gradients of sum(y * gy) in inputs[0..n) into g. */
static void grads(tj_tensor *y, tj_tensor *gy, tj_tensor *const *inputs, int n, tj_tensor **g)
{
    cr_assert_not_null(y, "%s", tj_last_error());
    cr_assert_eq(tj_autograd_grad(&y, 1, &gy, inputs, n, g), TJ_OK, "%s", tj_last_error());
}

static void expect_values(const tj_tensor *t, int ndim, const int64_t *shape, const double *want, double rtol)
{
    int64_t n = test_assert_dtype_shape(t, tj_tensor_dtype(t), ndim, shape);
    test_expect_close(t, want, n, rtol, rtol);
}

static const int64_t A233[3] = {2, 3, 3}, B232[3] = {2, 3, 2}, B223[3] = {2, 2, 3};

/* ---- linalg_solve ---- */

Test(lapack, solve_gives_torchs_values_and_gradients)
{
    tj_tensor *A = f64(SOLVE_A, 3, A233, true), *B = f64(SOLVE_B, 3, B232, true), *g[2];
    tj_tensor *X = tj_linalg_solve(A, B, true);
    expect_values(X, 3, B232, SOLVE_X, 1e-12);
    grads(X, f64(SOLVE_GY, 3, B232, false), (tj_tensor *[]){A, B}, 2, g);
    expect_values(g[0], 3, A233, SOLVE_GA, 1e-12);
    expect_values(g[1], 3, B232, SOLVE_GB, 1e-12);
}

Test(lapack, solve_from_the_right_gives_torchs_values_and_gradients)
{
    tj_tensor *A = f64(SOLVE_A, 3, A233, true), *B = f64(SOLVE_BR, 3, B223, true), *g[2];
    tj_tensor *X = tj_linalg_solve(A, B, false);
    expect_values(X, 3, B223, SOLVE_RIGHT_X, 1e-12);
    grads(X, f64(SOLVE_RIGHT_GY, 3, B223, false), (tj_tensor *[]){A, B}, 2, g);
    expect_values(g[0], 3, A233, SOLVE_RIGHT_GA, 1e-12);
    expect_values(g[1], 3, B223, SOLVE_RIGHT_GB, 1e-12);
}

Test(lapack, solve_of_a_vector_gives_a_vector_and_torchs_gradients)
{
    tj_tensor *A = f64(SOLVE_A, 2, (int64_t[]){3, 3}, true), *v = f64(SOLVE_V, 1, (int64_t[]){3}, true), *g[2];
    tj_tensor *x = tj_linalg_solve(A, v, true);
    expect_values(x, 1, (int64_t[]){3}, SOLVE_VEC_X, 1e-12);
    grads(x, f64(SOLVE_VEC_GY, 1, (int64_t[]){3}, false), (tj_tensor *[]){A, v}, 2, g);
    expect_values(g[0], 2, (int64_t[]){3, 3}, SOLVE_VEC_GA, 1e-12);
    expect_values(g[1], 1, (int64_t[]){3}, SOLVE_VEC_GV, 1e-12);
}

/* a contiguous A is factored as A^T, as ATen 1.13: torch's backward graphs
 * pass these LU and pivots to linalg_lu_solve with adjoint=False */
Test(lapack, solve_ex_returns_torchs_lu_pivots_and_info_as_int64)
{
    tj_tensor *A = f64(SOLVE_A, 3, A233, false), *B = f64(SOLVE_B, 3, B232, false), *X, *LU, *piv, *info;
    cr_assert_eq(tj__linalg_solve_ex(A, B, true, false, &X, &LU, &piv, &info), TJ_OK, "%s", tj_last_error());
    expect_values(LU, 3, A233, SOLVE_LU, 1e-12);
    test_assert_dtype_shape(piv, TJ_INT64, 2, (int64_t[]){2, 3});
    test_expect_i64(piv, 6, SOLVE_PIVOTS);
    test_assert_dtype_shape(info, TJ_INT64, 1, (int64_t[]){2});
    test_expect_i64(info, 2, SOLVE_INFO);
    /* the backward's route: linalg_lu_solve(LU, pivots, B) solves A^T X = B */
    tj_tensor *Y = tj_linalg_lu_solve(LU, piv, B, true, false);
    tj_tensor *want = tj_linalg_solve(tj_transpose(A, -2, -1), B, true);
    expect_values(Y, 3, B232, tj_tensor_data(tj_contiguous(want)), 1e-12);
}

Test(lapack, solve_in_float32_is_within_its_rounding_of_the_float64_reference)
{
    tj_tensor *A = tj_to_copy(f64(SOLVE_A, 3, A233, false), TJ_FLOAT32);
    tj_tensor *B = tj_to_copy(f64(SOLVE_B, 3, B232, false), TJ_FLOAT32);
    tj_tensor *X = tj_linalg_solve(A, B, true);
    test_assert_dtype_shape(X, TJ_FLOAT32, 3, B232);
    test_expect_close(X, SOLVE_X, 12, 1e-5, 1e-6);
}

/* B [4, 1, 3, 2] against A [2, 3, 3], and a transposed (strided) A: each
 * result item solves its own system (A X - B is rounding) */
Test(lapack, solve_broadcasts_batches_and_reads_strided_operands)
{
    tj_tensor *A = f64(SOLVE_A, 3, A233, false);
    tj_tensor *B = test_random_tensor(TJ_FLOAT64, 4, (int64_t[]){4, 1, 3, 2}, 7, -1, 1);
    for (int strided = 0; strided < 2; strided++) {
        tj_tensor *a = strided ? tj_transpose(A, -2, -1) : A;
        tj_tensor *X = tj_linalg_solve(a, B, true);
        test_assert_dtype_shape(X, TJ_FLOAT64, 4, (int64_t[]){4, 2, 3, 2});
        tj_tensor *residual = tj_sub(tj_matmul(a, X), B);
        tj_tensor *worst = tj_amax(tj_abs(residual), NULL, 0, false);
        cr_expect_lt(tj_tensor_item_at(worst, 0), 1e-14, "strided %d: |A X - B| up to %g", strided,
                     tj_tensor_item_at(worst, 0));
    }
}

/* ---- singular matrices ---- */

static const double SINGULAR[18] = {2, 0, 0, 0, 1, 0, 0, 0, 1, /* fine */
                                    1, 2, 3, 2, 4, 6, 1, 0, 1}; /* row 2 = 2 row 1 */

Test(lapack, singular_matrix_gives_info_or_an_error_naming_the_batch_element)
{
    tj_tensor *A = f64(SINGULAR, 3, A233, false), *B = f64(SOLVE_B, 3, B232, false), *info;
    cr_assert_eq(tj__linalg_solve_ex(A, B, true, false, NULL, NULL, NULL, &info), TJ_OK, "%s", tj_last_error());
    const int64_t *v = tj_tensor_data(info);
    cr_expect_eq(v[0], 0);
    cr_expect_gt(v[1], 0, "getrf's info of a rank-2 matrix: %lld", (long long)v[1]);
    test_expect_error(tj_linalg_solve(A, B, true), TJ_ERR_INVALID_ARGUMENT, "aten::_linalg_solve_ex",
                      "batch element 1 of A [2, 3, 3]: the solver failed because the input matrix is singular");
    cr_expect(strstr(tj_last_error(), "LAPACK getrf info") != NULL, "%s", tj_last_error());
}

/* ---- bad input ---- */

Test(lapack, bad_shapes_and_dtypes_are_refused_naming_the_operator_and_shapes)
{
    tj_tensor *A = f64(SOLVE_A, 3, A233, false), *B = f64(SOLVE_B, 3, B232, false);
    tj_tensor *rect = test_random_tensor(TJ_FLOAT64, 2, (int64_t[]){3, 2}, 1, -1, 1);
    test_expect_error(tj_linalg_solve(rect, B, true), TJ_ERR_SHAPE, "aten::_linalg_solve_ex",
                      "A must be batches of square matrices, but they are 3 by 2 matrices ([3, 2])");
    test_expect_error(tj_linalg_solve(A, tj_transpose(B, -2, -1), true), TJ_ERR_SHAPE, "aten::_linalg_solve_ex",
                      "incompatible shapes of A [2, 3, 3] and B [2, 2, 3] for the equation AX = B (3x3 and 2x3)");
    test_expect_error(tj_linalg_solve(A, tj_to_copy(B, TJ_FLOAT32), true), TJ_ERR_DTYPE, "aten::_linalg_solve_ex",
                      "found A of type float64 and B of type float32");
    tj_tensor *ints = test_i64(2, (int64_t[]){2, 2}, (int64_t[]){1, 0, 0, 1});
    test_expect_error(tj_linalg_solve(ints, ints, true), TJ_ERR_DTYPE, "aten::_linalg_solve_ex",
                      "A [2, 2] of dtype int64: expected float32 or float64");
    test_expect_error(tj_linalg_solve(f64(SOLVE_V, 1, (int64_t[]){3}, false), B, true), TJ_ERR_SHAPE,
                      "aten::_linalg_solve_ex", "A [3] must have at least 2 dimensions");
    test_expect_error(tj_linalg_solve(A, f64(SOLVE_V, 1, (int64_t[]){3}, false), false), TJ_ERR_SHAPE,
                      "aten::_linalg_solve_ex", "vector broadcasting of the left hand side is not supported");
    tj_tensor *B3 = test_random_tensor(TJ_FLOAT64, 3, (int64_t[]){3, 3, 2}, 2, -1, 1);
    test_expect_error(tj_linalg_solve(A, B3, true), TJ_ERR_SHAPE, "aten::_linalg_solve_ex", "");
    test_expect_error(tj_linalg_solve_triangular(rect, B, true, true, false), TJ_ERR_SHAPE,
                      "aten::linalg_solve_triangular", "square matrices");
    test_expect_error(tj_linalg_solve_triangular(A, f64(SOLVE_V, 1, (int64_t[]){3}, false), true, true, false),
                      TJ_ERR_SHAPE, "aten::linalg_solve_triangular", "B [3] must have at least 2 dimensions");
}

Test(lapack, lu_solve_refuses_pivots_of_another_shape_dtype_or_range)
{
    tj_tensor *A = f64(SOLVE_A, 3, A233, false), *B = f64(SOLVE_B, 3, B232, false);
    tj_tensor *piv = test_i64(2, (int64_t[]){2, 3}, (int64_t[]){1, 2, 3, 3, 4, 3});
    test_expect_error(tj_linalg_lu_solve(A, piv, B, true, false), TJ_ERR_INVALID_ARGUMENT, "aten::linalg_lu_solve",
                      "batch element 1: pivot 1 is 4, outside [1, 3]");
    test_expect_error(tj_linalg_lu_solve(A, tj_to_copy(piv, TJ_FLOAT64), B, true, false), TJ_ERR_DTYPE,
                      "aten::linalg_lu_solve", "pivots should be a tensor of dtype int64");
    test_expect_error(tj_linalg_lu_solve(A, test_i64(1, (int64_t[]){3}, (int64_t[]){1, 2, 3}), B, true, false),
                      TJ_ERR_SHAPE, "aten::linalg_lu_solve", "LU [2, 3, 3] and pivots [3]");
}

/* ---- linalg_solve_triangular ---- */

Test(lapack, solve_triangular_gives_torchs_values_and_gradients)
{
    tj_tensor *A = f64(TRI_A, 3, A233, true), *g[2];
    tj_tensor *B = f64(SOLVE_B, 3, B232, true);
    tj_tensor *X = tj_linalg_solve_triangular(A, B, true, true, false);
    expect_values(X, 3, B232, TRI_UPPER_LEFT_X, 1e-12);
    grads(X, f64(TRI_UPPER_LEFT_GY, 3, B232, false), (tj_tensor *[]){A, B}, 2, g);
    expect_values(g[0], 3, A233, TRI_UPPER_LEFT_GA, 1e-12);
    expect_values(g[1], 3, B232, TRI_UPPER_LEFT_GB, 1e-12);

    tj_tensor *BR = f64(SOLVE_BR, 3, B223, true);
    X = tj_linalg_solve_triangular(A, BR, false, false, true);
    expect_values(X, 3, B223, TRI_LOWER_RIGHT_UNIT_X, 1e-12);
    grads(X, f64(TRI_LOWER_RIGHT_UNIT_GY, 3, B223, false), (tj_tensor *[]){A, BR}, 2, g);
    expect_values(g[0], 3, A233, TRI_LOWER_RIGHT_UNIT_GA, 1e-12);
    expect_values(g[1], 3, B223, TRI_LOWER_RIGHT_UNIT_GB, 1e-12);
}

/* ---- linalg_inv, linalg_det, linalg_slogdet ---- */

Test(lapack, inv_det_and_slogdet_give_torchs_values_and_gradients)
{
    tj_tensor *A = f64(SOLVE_A, 3, A233, true), *g;
    tj_tensor *inv = tj_linalg_inv(A);
    expect_values(inv, 3, A233, INV_X, 1e-12);
    grads(inv, f64(INV_GY, 3, A233, false), &A, 1, &g);
    expect_values(g, 3, A233, INV_GA, 1e-12);

    tj_tensor *det = tj_linalg_det(A);
    expect_values(det, 1, (int64_t[]){2}, DET_X, 1e-12);
    grads(det, f64(DET_GY, 1, (int64_t[]){2}, false), &A, 1, &g);
    expect_values(g, 3, A233, DET_GA, 1e-12);

    tj_tensor *sign, *logabs;
    cr_assert_eq(tj_linalg_slogdet(A, &sign, &logabs), TJ_OK, "%s", tj_last_error());
    expect_values(sign, 1, (int64_t[]){2}, SLOGDET_SIGN, 0);
    expect_values(logabs, 1, (int64_t[]){2}, SLOGDET_LOGABS, 1e-12);
    grads(logabs, f64(SLOGDET_GY, 1, (int64_t[]){2}, false), &A, 1, &g);
    expect_values(g, 3, A233, SLOGDET_GA, 1e-12);
}

Test(lapack, singular_matrix_det_is_zero_with_a_finite_gradient_and_inv_refuses_it)
{
    tj_tensor *S = f64(SINGULAR + 9, 2, (int64_t[]){3, 3}, true), *g, *sign, *logabs, *inv, *info;
    tj_tensor *det = tj_linalg_det(S);
    expect_values(det, 0, NULL, (double[]){0}, 0);
    grads(det, tj_scalar_tensor(tj_v_float(1), TJ_FLOAT64), &S, 1, &g);
    expect_values(g, 2, (int64_t[]){3, 3}, DET_SINGULAR_GA, 0);
    cr_assert_eq(tj_linalg_slogdet(S, &sign, &logabs), TJ_OK, "%s", tj_last_error());
    expect_values(sign, 0, NULL, (double[]){0}, 0);
    expect_values(logabs, 0, NULL, (double[]){-INFINITY}, 0);
    cr_assert_eq(tj_linalg_inv_ex(S, false, &inv, &info), TJ_OK, "%s", tj_last_error());
    cr_expect_gt(*(const int64_t *)tj_tensor_data(info), 0);
    test_expect_error(tj_linalg_inv(S), TJ_ERR_INVALID_ARGUMENT, "aten::linalg_inv_ex",
                      "batch element 0 of A [3, 3]: the input matrix is singular (LAPACK getrf info");
}

Test(lapack, det_of_empty_matrices_is_one_and_float32_is_close)
{
    tj_tensor *E = tj_zeros((int64_t[]){2, 0, 0}, 3, TJ_FLOAT32);
    expect_values(tj_linalg_det(E), 1, (int64_t[]){2}, (double[]){1, 1}, 0);
    tj_tensor *A32 = tj_to_copy(f64(SOLVE_A, 3, A233, false), TJ_FLOAT32);
    test_expect_close(tj_linalg_det(A32), DET_X, 2, 1e-5, 1e-6);
    test_expect_close(tj_linalg_inv(A32), INV_X, 18, 1e-5, 1e-6);
    test_expect_error(tj_linalg_det(test_random_tensor(TJ_FLOAT64, 3, (int64_t[]){2, 3, 4}, 3, -1, 1)), TJ_ERR_SHAPE,
                      "aten::_linalg_det", "A must be batches of square matrices, but they are 3 by 4 matrices");
}

/* ---- linalg_cholesky, cholesky_solve ---- */

Test(lapack, cholesky_and_cholesky_solve_give_torchs_values_and_gradients)
{
    tj_tensor *P = f64(CHOL_A, 3, A233, true), *g[2];
    const double *want_L[2] = {CHOL_LOWER_L, CHOL_UPPER_L}, *want_gy[2] = {CHOL_LOWER_GY, CHOL_UPPER_GY},
                 *want_ga[2] = {CHOL_LOWER_GA, CHOL_UPPER_GA};
    for (int upper = 0; upper < 2; upper++) {
        tj_tensor *L = tj_linalg_cholesky(P, upper);
        expect_values(L, 3, A233, want_L[upper], 1e-12);
        grads(L, f64(want_gy[upper], 3, A233, false), &P, 1, g);
        expect_values(g[0], 3, A233, want_ga[upper], 1e-12);
    }
    tj_tensor *L = f64(CHOL_LOWER_L, 3, A233, true), *B = f64(SOLVE_B, 3, B232, true);
    tj_tensor *X = tj_cholesky_solve(B, L, false);
    expect_values(X, 3, B232, CHOLSOLVE_X, 1e-12);
    grads(X, f64(CHOLSOLVE_GY, 3, B232, false), (tj_tensor *[]){B, L}, 2, g);
    expect_values(g[0], 3, B232, CHOLSOLVE_GB, 1e-12);
    expect_values(g[1], 3, A233, CHOLSOLVE_GL, 1e-12);
    /* the upper factor's transpose reads the same triangle's values */
    test_expect_close(tj_cholesky_solve(B, tj_transpose(L, -2, -1), true), CHOLSOLVE_X, 12, 1e-12, 1e-12);
}

Test(lapack, cholesky_of_an_indefinite_matrix_gives_info_or_an_error)
{
    tj_tensor *S = f64(SINGULAR, 3, A233, false), *L, *info;
    cr_assert_eq(tj_linalg_cholesky_ex(S, false, false, &L, &info), TJ_OK, "%s", tj_last_error());
    test_expect_i64(info, 2, (int64_t[]){0, 2}); /* 1 * 4 - 2 * 2 = 0: the minor of order 2 */
    test_expect_error(tj_linalg_cholesky(S, false), TJ_ERR_INVALID_ARGUMENT, "aten::linalg_cholesky_ex",
                      "batch element 1 of A [2, 3, 3]: the factorization could not be completed because the input is "
                      "not positive-definite (LAPACK potrf info 2)");
    test_expect_error(tj_cholesky_solve(f64(SOLVE_BR, 3, B223, false), S, false), TJ_ERR_SHAPE,
                      "aten::cholesky_solve", "each input2 matrix is 3 by 3 but each self matrix is 2 by 3");
}

/* ---- tracing and plans ---- */

static tj_status solve_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *A = tj_tensor_detach(in[0]), *B = tj_tensor_detach(in[1]);
    if (!A || !B || tj_tensor_set_requires_grad(A, true) != TJ_OK || tj_tensor_set_requires_grad(B, true) != TJ_OK)
        return tj_last_status();
    tj_tensor *X = tj_linalg_solve(A, B, true);
    tj_tensor *Y = tj_linalg_solve_triangular(tj_triu(A, 0), X, true, true, false);
    tj_tensor *sign, *logabs;
    if (tj_linalg_slogdet(A, &sign, &logabs) != TJ_OK) return tj_last_status();
    tj_tensor *L = tj_linalg_cholesky(tj_matmul(A, tj_transpose(A, -2, -1)), false);
    tj_tensor *loss = tj_add(tj_add(tj_sum(tj_mul(Y, Y), TJ_DTYPE_NONE), tj_sum(tj_linalg_det(A), TJ_DTYPE_NONE)),
                             tj_add(tj_sum(logabs, TJ_DTYPE_NONE), tj_sum(tj_linalg_inv(A), TJ_DTYPE_NONE)));
    loss = tj_add(loss, tj_sum(tj_cholesky_solve(B, L, false), TJ_DTYPE_NONE));
    *n_out = 3;
    out[0] = Y;
    return loss ? tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){A, B}, 2, &out[1]) : tj_last_status();
}

Test(lapack, make_fx_records_the_operators_as_torch_and_the_plan_gives_eagers_bits)
{
    tj_tensor *A = f64(SOLVE_A, 3, A233, false), *B = f64(SOLVE_B, 3, B232, false);
    const char *want[] = {"aten._linalg_solve_ex.default(", "aten.linalg_lu_solve.default(",
                          "aten.linalg_solve_triangular.default(", "aten._linalg_det.default(",
                          "aten._linalg_slogdet.default(", "aten.linalg_inv_ex.default(",
                          "aten.linalg_cholesky_ex.default(", "aten.cholesky_solve.default("};
    test_expect_traced(solve_step, (tj_tensor *[]){A, B}, 2, 3, want, 8, "aten.linalg_solve.default", 0);
}
