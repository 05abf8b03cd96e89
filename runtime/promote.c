/* Type promotion (PyTorch's result_type) and broadcasting. */
#include <inttypes.h>
#include <stdio.h>

#include "internal.h"

tj_category tj_dtype_category(tj_dtype d)
{
    return d == TJ_BOOL ? TJ_CAT_BOOL : d == TJ_INT64 ? TJ_CAT_INT : TJ_CAT_FLOAT;
}

/* Rank in the promotion lattice of our four dtypes: bool < int64 < f32 < f64. */
static int rank_of(tj_dtype d)
{
    static const int r[] = {[TJ_BOOL] = 0, [TJ_INT64] = 1, [TJ_FLOAT32] = 2, [TJ_FLOAT64] = 3};
    return r[d];
}

#define UNDEF (-1)

static int promote(int a, int b)
{
    if (a == UNDEF) return b;
    if (b == UNDEF) return a;
    return rank_of((tj_dtype)a) >= rank_of((tj_dtype)b) ? a : b;
}

/* PyTorch's combine_categories(higher, lower). */
static int combine(int higher, int lower)
{
    if (tj_dtype_is_float(higher)) return higher;
    if (higher == TJ_BOOL || tj_dtype_is_float(lower)) return promote(higher, lower);
    if (higher != UNDEF) return higher;
    return lower;
}

tj_dtype tj_result_type(const tj_value *vals, int n)
{
    int dim = UNDEF, zero = UNDEF, wrapped = UNDEF;
    for (int i = 0; i < n; i++) {
        const tj_value *v = &vals[i];
        switch (v->kind) {
        case TJ_V_TENSOR:
            if (!v->u.t) break;
            if (v->u.t->ndim > 0) dim = promote(dim, v->u.t->dtype);
            else zero = promote(zero, v->u.t->dtype);
            break;
        case TJ_V_INT: wrapped = promote(wrapped, TJ_INT64); break;
        case TJ_V_FLOAT: wrapped = promote(wrapped, TJ_FLOAT32); break;
        case TJ_V_BOOL: wrapped = promote(wrapped, TJ_BOOL); break;
        default: break;
        }
    }
    int r = combine(dim, combine(zero, wrapped));
    return r == UNDEF ? TJ_FLOAT32 : (tj_dtype)r;
}

tj_status tj_broadcast_shapes(const char *op, int na, const int64_t *a, int nb, const int64_t *b,
                              int *nout, int64_t *out)
{
    int n = na > nb ? na : nb;
    int64_t res[TJ_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        int ia = na - n + i, ib = nb - n + i;
        int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
        if (sa == sb || sb == 1) res[i] = sa;
        else if (sa == 1) res[i] = sb;
        else {
            char s1[128], s2[128];
            return tj_error(TJ_ERR_SHAPE,
                            "%s: shapes %s and %s cannot be broadcast (dim %d: %" PRId64 " vs %" PRId64 ")", op,
                            tj_shape_str(na, a, s1, sizeof s1), tj_shape_str(nb, b, s2, sizeof s2), i, sa, sb);
        }
    }
    for (int i = 0; i < n; i++) out[i] = res[i];
    *nout = n;
    return TJ_OK;
}

void tj_broadcast_strides(const tj_tensor *t, int ndim, const int64_t *shape, int64_t *strides)
{
    for (int i = 0; i < ndim; i++) {
        int it = t->ndim - ndim + i;
        strides[i] = it >= 0 && t->shape[it] == shape[i] && shape[i] != 1 ? t->strides[it] : 0;
    }
}

/* dim wrapped over n positions; `what` and rank say what they are for */
static tj_status wrap_over(const char *op, int64_t dim, int n, const char *what, int rank, int *out)
{
    if (dim < -n || dim >= n)
        return tj_error(TJ_ERR_INDEX, "%s: dim %" PRId64 " is out of range for %s of rank %d (expected %d..%d)", op,
                        dim, what, rank, -n, n - 1);
    *out = (int)(dim < 0 ? dim + n : dim);
    return TJ_OK;
}

tj_status tj_wrap_dim(const char *op, int64_t dim, int ndim, int *out)
{
    return wrap_over(op, dim, ndim > 0 ? ndim : 1, "a tensor", ndim, out);
}

tj_status tj_wrap_new_dim(const char *op, int64_t dim, int ndim, int *out)
{
    return wrap_over(op, dim, ndim + 1, "a new dim of a tensor", ndim, out);
}
