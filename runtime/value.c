/* Boxed values: release, description and the checked Scalar conversion. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "internal.h"

void tj_value_release(tj_value *v)
{
    if (!v) return;
    if (v->kind == TJ_V_TENSOR) tj_tensor_release(v->u.t);
    *v = tj_v_none();
}

const void *tj_value_list(const tj_value *v, size_t *elem_size)
{
    size_t size = tj_value_list_elem_size(v->kind);
    if (elem_size) *elem_size = size;
    return v->kind == TJ_V_TENSORS ? (const void *)v->u.ts
           : v->kind == TJ_V_INTS  ? (const void *)v->u.ints
           : v->kind == TJ_V_BOOLS ? (const void *)v->u.bools
           : v->kind == TJ_V_FLOATS ? (const void *)v->u.floats
                                   : NULL;
}

/* Hostile values (a NULL value, a list with a NULL pointer or a negative
 * count, an unknown kind, buf NULL with n 0) are described, not followed. */
int tj_value_describe(const tj_value *v, char *buf, size_t n)
{
    size_t k = 0;
#define AT (buf ? buf + (k < n ? k : n) : NULL)
#define LEFT (buf && k < n ? n - k : 0)
#define PUT(...) (k += (size_t)snprintf(AT, LEFT, __VA_ARGS__))
    if (LEFT) buf[0] = 0;
    if (!v) {
        PUT("None");
        return (int)k;
    }
    size_t elem;
    const void *list = tj_value_list(v, &elem);
    if (elem && (v->n < 0 || (v->n && !list))) {
        PUT("<invalid list of %d>", v->n);
        return (int)k;
    }
    switch (v->kind) {
    case TJ_V_NONE: PUT("None"); break;
    case TJ_V_TENSOR: k += (size_t)tj_tensor_describe(v->u.t, AT, LEFT); break;
    case TJ_V_TENSORS:
        PUT("[");
        for (int i = 0; i < v->n; i++) {
            if (i) PUT(", ");
            if (!v->u.ts[i]) PUT("None"); /* an absent entry of a Tensor?[] */
            else k += (size_t)tj_tensor_describe(v->u.ts[i], AT, LEFT);
        }
        PUT("]");
        break;
    case TJ_V_INT: PUT("%" PRId64, v->u.i); break;
    case TJ_V_FLOAT: PUT("%.17g", v->u.f); break;
    case TJ_V_BOOL: PUT("%s", v->u.b ? "True" : "False"); break;
    case TJ_V_INTS:
        PUT("[");
        for (int i = 0; i < v->n; i++) PUT(i ? ", %" PRId64 : "%" PRId64, v->u.ints[i]);
        PUT("]");
        break;
    case TJ_V_BOOLS:
        PUT("[");
        for (int i = 0; i < v->n; i++) PUT(i ? ", %s" : "%s", v->u.bools[i] ? "True" : "False");
        PUT("]");
        break;
    case TJ_V_FLOATS:
        PUT("[");
        for (int i = 0; i < v->n; i++) PUT(i ? ", %.17g" : "%.17g", v->u.floats[i]);
        PUT("]");
        break;
    case TJ_V_STR: v->u.s ? PUT("'%s'", v->u.s) : PUT("None"); break;
    case TJ_V_DTYPE: PUT("torch.%s", tj_dtype_name(v->u.dtype)); break;
    default: PUT("<value of unknown kind %d>", (int)v->kind); break;
    }
#undef PUT
#undef LEFT
#undef AT
    return (int)k;
}

/* The range a Scalar converted into an integer dtype may take. */
static void int_range(tj_dtype dtype, double *lo, double *hi)
{
    switch (dtype) {
    case TJ_INT32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    case TJ_INT16: *lo = INT16_MIN, *hi = INT16_MAX; break;
    case TJ_INT8: *lo = INT8_MIN, *hi = INT8_MAX; break;
    default: *lo = -UINT8_MAX, *hi = UINT8_MAX; break; /* uint8 */
    }
}

static bool overflows(double f, tj_dtype dtype)
{
    switch (dtype) {
    case TJ_FLOAT64:
    case TJ_BOOL: return false;
    case TJ_FLOAT32: return isfinite(f) && fabs(f) > FLT_MAX;
    case TJ_BFLOAT16: return isfinite(f) && fabs(f) > 0x1.fep127;
    case TJ_FLOAT16: return isfinite(f) && fabs(f) > 65504.0;
    case TJ_INT64: return !(f >= -0x1p63 && f < 0x1p63);
    default: {
        double lo, hi;
        int_range(dtype, &lo, &hi);
        return !(f >= lo && f <= hi);
    }
    }
}

static __attribute__((cold)) tj_status overflow_error(const char *op, const char *what, const char *value,
                                                      tj_dtype dtype)
{
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: %s %s cannot be converted to type %s without overflow", op, what,
                    value, tj_dtype_name(dtype));
}

tj_status tj_scalar_check_float(const char *op, const char *what, double f, tj_dtype dtype)
{
    if (!overflows(f, dtype)) return TJ_OK;
    char value[32];
    snprintf(value, sizeof value, "%g", f);
    return overflow_error(op, what, value, dtype);
}

tj_status tj_scalar_check_int(const char *op, const char *what, int64_t i, tj_dtype dtype)
{
    /* every int64 within the ranges above is exact as a double */
    if (dtype == TJ_BFLOAT16 || !overflows((double)i, dtype)) return TJ_OK;
    char value[32];
    snprintf(value, sizeof value, "%" PRId64, i);
    return overflow_error(op, what, value, dtype);
}
