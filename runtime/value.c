/* Boxed values: release and description. */
#include <inttypes.h>
#include <stdio.h>

#include "internal.h"

void tj_value_release(tj_value *v)
{
    if (!v) return;
    if (v->kind == TJ_V_TENSOR) tj_tensor_release(v->u.t);
    *v = tj_v_none();
}

int tj_value_describe(const tj_value *v, char *buf, size_t n)
{
    size_t k = 0;
#define PUT(...) (k += (size_t)snprintf(buf + (k < n ? k : n), k < n ? n - k : 0, __VA_ARGS__))
    switch (v->kind) {
    case TJ_V_NONE: PUT("None"); break;
    case TJ_V_TENSOR: k += (size_t)tj_tensor_describe(v->u.t, buf, n); break;
    case TJ_V_TENSORS:
        PUT("[");
        for (int i = 0; i < v->n; i++) {
            if (i) PUT(", ");
            k += (size_t)tj_tensor_describe(v->u.ts[i], buf + (k < n ? k : n), k < n ? n - k : 0);
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
    case TJ_V_STR: PUT("'%s'", v->u.s); break;
    case TJ_V_DTYPE: PUT("torch.%s", tj_dtype_name(v->u.dtype)); break;
    }
#undef PUT
    return (int)k;
}
