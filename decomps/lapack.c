/* The implicit forms of the LAPACK operators (op_lapack.def), as ATen 1.13
 * writes them (BatchLinearAlgebra.cpp): the _ex operator's first result(s)
 * (det and slogdet drop the LU factors); eigh, eigvalsh, svd and svdvals
 * through _linalg_eigh and _linalg_svd; linalg_matrix_norm through
 * svdvals (orders 2, -2, "nuc") or linalg_vector_norm. ATen follows a solve, an inverse or
 * a Cholesky factor with _linalg_check_errors(info); tjit has the _ex operator check instead
 * (check_errors=True), with the same condition. */
#include <math.h>

#include "util.h"

static tj_status linalg_solve(const tj_value *args, tj_value *outs)
{
    tj_tensor *r = NULL;
    tj_status st = tj__linalg_solve_ex(args[0].u.t, args[1].u.t, args[2].u.b, true, &r, NULL, NULL, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(r);
    return st;
}

static tj_status linalg_inv(const tj_value *args, tj_value *outs)
{
    tj_tensor *r = NULL;
    tj_status st = tj_linalg_inv_ex(args[0].u.t, true, &r, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(r);
    return st;
}

static tj_status linalg_det(const tj_value *args, tj_value *outs)
{
    tj_tensor *r = NULL;
    tj_status st = tj__linalg_det(args[0].u.t, &r, NULL, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(r);
    return st;
}

static tj_status linalg_slogdet(const tj_value *args, tj_value *outs)
{
    tj_tensor *sign = NULL, *logabsdet = NULL;
    tj_status st = tj__linalg_slogdet(args[0].u.t, &sign, &logabsdet, NULL, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(sign), outs[1] = tj_v_tensor(logabsdet);
    return st;
}

static tj_status linalg_cholesky(const tj_value *args, tj_value *outs)
{
    tj_tensor *r = NULL;
    tj_status st = tj_linalg_cholesky_ex(args[0].u.t, args[1].u.b, true, &r, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(r);
    return st;
}

static tj_status linalg_lu_factor(const tj_value *args, tj_value *outs)
{
    tj_tensor *LU = NULL, *pivots = NULL;
    tj_status st = tj_linalg_lu_factor_ex(args[0].u.t, args[1].u.b, true, &LU, &pivots, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(LU), outs[1] = tj_v_tensor(pivots);
    return st;
}

static tj_status linalg_eigh(const tj_value *args, tj_value *outs)
{
    tj_tensor *w = NULL, *V = NULL;
    tj_status st = tj__linalg_eigh(args[0].u.t, args[1].u.s, true, &w, &V);
    if (st == TJ_OK) outs[0] = tj_v_tensor(w), outs[1] = tj_v_tensor(V);
    return st;
}

/* ATen's _may_require_fw_or_bw_grad: the vectors only for a gradient to come */
static bool may_require_grad(const tj_tensor *A) { return tj_grad_enabled() && tj_tensor_requires_grad(A); }

static tj_status linalg_eigvalsh(const tj_value *args, tj_value *outs)
{
    tj_tensor *w = NULL;
    tj_status st = tj__linalg_eigh(args[0].u.t, args[1].u.s, may_require_grad(args[0].u.t), &w, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(w);
    return st;
}

static const char *driver_of(const tj_value *v) { return v->kind == TJ_V_STR ? v->u.s : NULL; }

static tj_status linalg_svd(const tj_value *args, tj_value *outs)
{
    tj_tensor *U = NULL, *S = NULL, *Vh = NULL;
    tj_status st = tj__linalg_svd(args[0].u.t, args[1].u.b, true, driver_of(&args[2]), &U, &S, &Vh);
    if (st == TJ_OK) outs[0] = tj_v_tensor(U), outs[1] = tj_v_tensor(S), outs[2] = tj_v_tensor(Vh);
    return st;
}

static tj_status linalg_svdvals(const tj_value *args, tj_value *outs)
{
    tj_tensor *S = NULL;
    tj_status st = tj__linalg_svd(args[0].u.t, false, may_require_grad(args[0].u.t), driver_of(&args[1]), NULL, &S, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(S);
    return st;
}

/* ---- linalg_matrix_norm (ATen 1.13's LinearAlgebra.cpp) ---- */

#define MATRIX_NORM "aten::linalg_matrix_norm"

/* ATen's _linalg_matrix_norm_checks: A at least 2-D and float, dim two
 * distinct dims (wrapped into d), dtype None or a float at least as wide. */
static tj_status matrix_norm_checks(const tj_tensor *A, const tj_value *dim, const tj_value *dtype, int d[2])
{
    char s[96];
    tj_status st;
    if (A->ndim < 2)
        return tj_error(TJ_ERR_SHAPE, "%s: linalg.matrix_norm: The input tensor A %s must have at least 2 dimensions.",
                        MATRIX_NORM, tj_shape_str(A->ndim, A->shape, s, sizeof s));
    if (!tj_dtype_is_float(A->dtype) || (dtype->kind == TJ_V_DTYPE && !tj_dtype_is_float(dtype->u.dtype)))
        return tj_error(TJ_ERR_DTYPE, "%s: linalg.matrix_norm: expected a float32 or float64 A and dtype, got A of %s",
                        MATRIX_NORM, tj_dtype_name(A->dtype));
    if (dtype->kind == TJ_V_DTYPE && tj_dtype_size(dtype->u.dtype) < tj_dtype_size(A->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: linalg.matrix_norm: the dtype of the input (%s) should be convertible without "
                        "narrowing to the specified dtype (%s)", MATRIX_NORM, tj_dtype_name(A->dtype),
                        tj_dtype_name(dtype->u.dtype));
    if (dim->kind != TJ_V_INTS || dim->n != 2)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: linalg.matrix_norm: dim must be a 2-tuple. Got %d dims", MATRIX_NORM,
                        dim->kind == TJ_V_INTS ? dim->n : 0);
    for (int i = 0; i < 2; i++)
        if ((st = tj_wrap_dim(MATRIX_NORM, dim->u.ints[i], A->ndim, &d[i]))) return st;
    if (d[0] == d[1])
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: linalg.matrix_norm: dims must be different. Got (%d, %d)",
                        MATRIX_NORM, d[0], d[1]);
    return TJ_OK;
}

/* f of the singular values of A's matrices over dims d (moved to the end:
 * ATen's create_dim_backshift_permutation), keepdim putting the two dims
 * back as size 1 in place. */
static tj_tensor *over_singular_values(tj_tensor *A, const int d[2], bool keepdim, const tj_value *dtype,
                                       tj_tensor *(*f)(tj_tensor *S, bool keepdim, bool largest), bool largest)
{
    int nd = A->ndim, k = 0;
    int64_t perm[TJ_MAX_DIMS], back[TJ_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        if (i != d[0] && i != d[1]) perm[k++] = i;
    perm[k++] = d[0], perm[k++] = d[1];
    if (dtype->kind == TJ_V_DTYPE) A = tj_to_copy(A, dtype->u.dtype);
    tj_tensor *r = f(tj_linalg_svdvals(tj_permute(A, perm, nd), NULL), keepdim, largest);
    if (!keepdim || !r) return r;
    for (int i = 0; i < nd; i++) back[perm[i]] = i;
    return tj_permute(tj_unsqueeze(r, -1), back, nd);
}

static tj_tensor *extreme(tj_tensor *S, bool keepdim, bool largest)
{
    const int64_t last = -1;
    return largest ? tj_amax(S, &last, 1, keepdim) : tj_amin(S, &last, 1, keepdim);
}

static tj_tensor *sum_of(tj_tensor *S, bool keepdim, bool largest)
{
    (void)largest;
    const int64_t last = -1;
    return tj_sum_dim(S, &last, 1, keepdim, TJ_DTYPE_NONE);
}

static int dtype_or_none(const tj_value *dtype) { return dtype->kind == TJ_V_DTYPE ? (int)dtype->u.dtype : TJ_DTYPE_NONE; }

/* ord +-2: the largest / smallest singular value; +-1 (+-inf): the largest
 * / smallest column (row) sum of |A|. */
static tj_status linalg_matrix_norm(const tj_value *args, tj_value *outs)
{
    tj_tensor *A = args[0].u.t;
    double ord = tj_value_as_double(&args[1]), abs_ord = fabs(ord);
    bool keepdim = args[3].u.b;
    int d[2];
    if (abs_ord != 2 && abs_ord != 1 && !isinf(abs_ord))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: linalg.matrix_norm: Order %g not supported.", MATRIX_NORM, ord);
    tj_status st = matrix_norm_checks(A, &args[2], &args[4], d);
    if (st != TJ_OK) return st;
    if (abs_ord == 2) return tj_dc_done(over_singular_values(A, d, keepdim, &args[4], extreme, ord > 0), outs);
    if (isinf(abs_ord)) {
        int t = d[0];
        d[0] = d[1], d[1] = t;
    }
    if (!keepdim && d[0] < d[1]) d[1]--; /* the first reduction removed a dim before it */
    const int64_t d0 = d[0], d1 = d[1];
    tj_tensor *sums = tj_linalg_vector_norm(A, tj_v_float(1), &d0, 1, keepdim, dtype_or_none(&args[4]));
    return tj_dc_done(ord > 0 ? tj_amax(sums, &d1, 1, keepdim) : tj_amin(sums, &d1, 1, keepdim), outs);
}

/* "fro": the 2-norm of the entries; "nuc": the sum of the singular values. */
static tj_status linalg_matrix_norm_str_ord(const tj_value *args, tj_value *outs)
{
    tj_tensor *A = args[0].u.t;
    const char *ord = args[1].u.s;
    bool keepdim = args[3].u.b;
    int d[2];
    if (strcmp(ord, "fro") && strcmp(ord, "nuc"))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s.str_ord: linalg.matrix_norm: Order %s not supported.", MATRIX_NORM,
                        ord);
    tj_status st = matrix_norm_checks(A, &args[2], &args[4], d);
    if (st != TJ_OK) return st;
    if (!strcmp(ord, "nuc")) return tj_dc_done(over_singular_values(A, d, keepdim, &args[4], sum_of, true), outs);
    const int64_t dims[2] = {d[0], d[1]};
    return tj_dc_done(tj_linalg_vector_norm(A, tj_v_int(2), dims, 2, keepdim, dtype_or_none(&args[4])), outs);
}

void tj_register_lapack_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(linalg_matrix_norm), linalg_matrix_norm, "linalg_matrix_norm");
    tj_op_set_decomposition(TJ_OPS(linalg_matrix_norm_str_ord), linalg_matrix_norm_str_ord, "linalg_matrix_norm_str_ord");
    tj_op_set_decomposition(TJ_OPS(linalg_lu_factor), linalg_lu_factor, "linalg_lu_factor");
    tj_op_set_decomposition(TJ_OPS(linalg_eigh), linalg_eigh, "linalg_eigh");
    tj_op_set_decomposition(TJ_OPS(linalg_eigvalsh), linalg_eigvalsh, "linalg_eigvalsh");
    tj_op_set_decomposition(TJ_OPS(linalg_svd), linalg_svd, "linalg_svd");
    tj_op_set_decomposition(TJ_OPS(linalg_svdvals), linalg_svdvals, "linalg_svdvals");
    tj_op_set_decomposition(TJ_OPS(linalg_cholesky), linalg_cholesky, "linalg_cholesky");
    tj_op_set_decomposition(TJ_OPS(linalg_solve), linalg_solve, "linalg_solve");
    tj_op_set_decomposition(TJ_OPS(linalg_inv), linalg_inv, "linalg_inv");
    tj_op_set_decomposition(TJ_OPS(linalg_det), linalg_det, "linalg_det");
    tj_op_set_decomposition(TJ_OPS(linalg_slogdet), linalg_slogdet, "linalg_slogdet");
}
