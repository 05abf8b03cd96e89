/* tj_allclose: aten::allclose, i.e. aten::isclose(...).all().item(), as a
 * direct loop over the broadcast elements that stops at the first pair not
 * close. It does not go through the dispatcher: every dispatched operator
 * returns tensors, and a bool read from the data is exactly what tracing
 * cannot record (torch.allclose under make_fx with fake tensors fails the same
 * way); composing eq / sub / abs / le / all would allocate five temporaries
 * for a yes/no answer. */
#include <math.h>

#include "internal.h"

typedef struct tolerance {
    double rtol, atol;
    float rtol_f, atol_f; /* as PyTorch's float32 kernels see the Scalars */
    bool equal_nan, zero; /* zero: rtol == atol == 0, closeness is equality */
} tolerance;

/* aten::isclose for one pair. The error terms are computed in the dtype
 * PyTorch computes them in: float64 for float64, float32 otherwise (rtol *
 * other of an int64 or bool tensor is a float32 tensor, and self - other
 * then promotes self to float32 too, so int64 values are rounded to float32
 * before they are subtracted). Equality comes first, in the tensors' own
 * dtype: inf is close to inf, and int64 values equal exactly. */
static bool pair_close(tj_dtype dtype, const char *pa, const char *pb, const tolerance *tol)
{
    if (dtype == TJ_FLOAT64) {
        double a = *(const double *)pa, b = *(const double *)pb;
        if (a == b || (tol->equal_nan && isnan(a) && isnan(b))) return true;
        if (tol->zero) return false;
        double actual = fabs(a - b);
        return isfinite(actual) && actual <= tol->atol + fabs(tol->rtol * b);
    }
    float a, b;
    switch (dtype) {
    case TJ_FLOAT32:
        a = *(const float *)pa;
        b = *(const float *)pb;
        if (a == b || (tol->equal_nan && isnan(a) && isnan(b))) return true;
        break;
    case TJ_FLOAT16:
    case TJ_BFLOAT16: /* as float32: exact */
        a = (float)tj_load_f64(pa, dtype);
        b = (float)tj_load_f64(pb, dtype);
        if (a == b || (tol->equal_nan && isnan(a) && isnan(b))) return true;
        break;
    default: { /* the integers and bool */
        int64_t ia = tj_load_i64(pa, dtype), ib = tj_load_i64(pb, dtype);
        if (ia == ib) return true;
        a = (float)ia; /* directly: through double could round twice */
        b = (float)ib;
        break;
    }
    }
    if (tol->zero) return false;
    float actual = fabsf(a - b);
    return isfinite(actual) && actual <= tol->atol_f + fabsf(tol->rtol_f * b);
}

tj_status tj_allclose(const tj_tensor *self, const tj_tensor *other, double rtol, double atol, bool equal_nan,
                      bool *out)
{
    static const char op[] = "aten::allclose";
    if (!self || !other) return tj_error_null("%s: NULL %s", op, !self ? "self" : "other");
    if (!out) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: NULL out", op);
    if (self->dtype != other->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: self is %s and other is %s; the dtypes must match (convert one with tj_to_copy)",
                        op, tj_dtype_name(self->dtype), tj_dtype_name(other->dtype));
    /* !(x >= 0) also refuses nan, as PyTorch's TORCH_CHECK(rtol >= 0) does. */
    if (!(rtol >= 0)) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: rtol must be >= 0, got %g", op, rtol);
    if (!(atol >= 0)) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: atol must be >= 0, got %g", op, atol);
    int ndim;
    int64_t shape[TJ_MAX_DIMS], sa[TJ_MAX_DIMS], sb[TJ_MAX_DIMS];
    tj_status st = tj_broadcast_shapes(op, self->ndim, self->shape, other->ndim, other->shape, &ndim, shape);
    if (st != TJ_OK) return st;
    if (self->fake || other->fake) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: a fake tensor has no data", op);
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++) numel *= shape[d];
    tolerance tol = {rtol, atol, (float)rtol, (float)atol, equal_nan, rtol == 0 && atol == 0};
    tj_broadcast_strides(self, ndim, shape, sa);
    tj_broadcast_strides(other, ndim, shape, sb);
    size_t es = tj_dtype_size(self->dtype);
    const char *a = tj_tensor_ptr(self), *b = tj_tensor_ptr(other);
    int64_t index[TJ_MAX_DIMS] = {0}, oa = 0, ob = 0; /* element offsets */
    bool all = true;
    /* An odometer over the broadcast shape; the offsets follow it. */
    for (int64_t i = 0; i < numel && all; i++) {
        all = pair_close(self->dtype, a + oa * (int64_t)es, b + ob * (int64_t)es, &tol);
        for (int d = ndim - 1; d >= 0; d--) {
            oa += sa[d];
            ob += sb[d];
            if (++index[d] < shape[d]) break;
            oa -= shape[d] * sa[d];
            ob -= shape[d] * sb[d];
            index[d] = 0;
        }
    }
    *out = all;
    return TJ_OK;
}
