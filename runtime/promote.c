/* Type promotion (PyTorch's result_type) and broadcasting. */
#include <inttypes.h>
#include <stdio.h>

#include "internal.h"

tj_category tj_dtype_category(tj_dtype d)
{
    return d == TJ_BOOL ? TJ_CAT_BOOL : tj_k_dtype_integral(d) ? TJ_CAT_INT : TJ_CAT_FLOAT;
}

#define UNDEF (-1)

/* PyTorch's promoteTypes: within a category the wider type, except uint8
 * with int8 (int16) and float16 with bfloat16 (float32); across categories
 * the higher one's type. */
static int promote(int a, int b)
{
    if (a == UNDEF || a == b) return b;
    if (b == UNDEF) return a;
    tj_dtype x = (tj_dtype)a, y = (tj_dtype)b;
    tj_category cx = tj_dtype_category(x), cy = tj_dtype_category(y);
    if (cx != cy) return cx > cy ? a : b;
    if (cx == TJ_CAT_INT) {
        if ((x == TJ_UINT8 && y == TJ_INT8) || (x == TJ_INT8 && y == TJ_UINT8)) return TJ_INT16;
        return tj_k_dtype_bytes(x) >= tj_k_dtype_bytes(y) ? a : b;
    }
    if (tj_k_dtype_bytes(x) == 2 && tj_k_dtype_bytes(y) == 2) return TJ_FLOAT32; /* float16 with bfloat16 */
    return tj_k_dtype_bytes(x) >= tj_k_dtype_bytes(y) ? a : b;
}

tj_dtype tj_promote_types(tj_dtype a, tj_dtype b) { return (tj_dtype)promote(a, b); }

/* PyTorch's combine_categories(higher, lower). */
static int combine(int higher, int lower)
{
    bool higher_float = higher != UNDEF && tj_dtype_category((tj_dtype)higher) == TJ_CAT_FLOAT;
    bool lower_float = lower != UNDEF && tj_dtype_category((tj_dtype)lower) == TJ_CAT_FLOAT;
    if (higher_float) return higher;
    if (higher == TJ_BOOL || lower_float) return promote(higher, lower);
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
