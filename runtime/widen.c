/* Arithmetic on the storage dtypes (include/tjit/core.h). The kernels
 * compute in float32, float64, int64 and bool; an operator called with
 * float16 or bfloat16 tensors runs in float32, with int8, int16, int32 or
 * uint8 ones in int64, and its results are rounded back to the dtype
 * PyTorch gives them. For float16 and bfloat16 that is what PyTorch's CPU
 * kernels do element by element (c10::Half and c10::BFloat16 arithmetic
 * converts to float, computes, rounds; reductions accumulate in float);
 * for the integer types, int64's wrap-around arithmetic truncated is the
 * narrow type's own.
 *
 * The call is rewritten into calls of the operator table, made through a
 * function the caller gives: below the modes for an eager call (nothing
 * recorded), through them when a graph is lowered for replay, where the
 * conversions become nodes of their own (tracer/decompose.c). */
#include <string.h>

#include "internal.h"

static bool in_list(const char *base, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(base, names[i]) == 0) return true;
    return false;
}
#define IN(base, names) in_list((base), (names), sizeof(names) / sizeof *(names))

tj_widen_class tj_widen_classify(const tj_op *op)
{
    /* beyond the planner's same-position list, the elementwise operators
     * whose result type is result_type(operands) */
    static const char *const elementwise[] = {
        "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "floor_divide", "sgn", "heaviside",
        "copysign", "hypot", "xlogy", "special_xlog1py", "celu", "mish"};
    /* integer inputs sum to int64, as PyTorch's sum / prod / cumsum do */
    static const char *const to_long[] = {"sum", "prod", "cumsum", "cumprod", "trace"};
    /* result 0 has self's dtype, the others are int64 indices or counts */
    static const char *const values_first[] = {
        "max", "min", "amax", "amin", "sort", "topk", "kthvalue", "median", "nanmedian", "cummax", "cummin",
        "_unique2", "unique_consecutive", "unique_dim", "gather", "scatter", "scatter_add", "scatter_reduce",
        "index_select", "index_add", "index", "index_put", "index_copy", "index_fill", "masked_select",
        "masked_scatter", "roll", "repeat", "repeat_interleave", "diag", "diag_embed", "slice_scatter", "select_scatter",
        "diagonal_scatter", "as_strided_scatter"};
    /* every int64 result is an index or a count */
    static const char *const indices[] = {"argmax", "argmin", "nonzero", "searchsorted", "bucketize",
                                          "count_nonzero", "bincount"};
    if (op->elementwise || IN(op->base, elementwise)) return TJ_WIDEN_ELEMENTWISE;
    if (IN(op->base, to_long)) return TJ_WIDEN_TO_LONG;
    if (IN(op->base, values_first)) return TJ_WIDEN_VALUES_FIRST;
    if (IN(op->base, indices)) return TJ_WIDEN_INDICES;
    return TJ_WIDEN_OTHER;
}

static bool is_storage(tj_dtype d) { return d >= TJ_FIRST_STORAGE_DTYPE; }

/* The dtype the kernels compute a storage dtype in. */
static tj_dtype compute_dtype(tj_dtype d)
{
    if (!is_storage(d)) return d;
    return d == TJ_FLOAT16 || d == TJ_BFLOAT16 ? TJ_FLOAT32 : TJ_INT64;
}

/* What decides the results' dtypes, read from the call as made. */
typedef struct result_rule {
    bool explicit_dtype; /* a dtype argument was given: results of its compute dtype take it */
    tj_dtype dtype;      /* that dtype, or the operands' (result_type or self's) */
    tj_widen_class cls;
} result_rule;

static tj_tensor *first_tensor(const tj_value *args, int nargs)
{
    for (int i = 0; i < nargs; i++) {
        if (args[i].kind == TJ_V_TENSOR && args[i].u.t) return args[i].u.t;
        if (args[i].kind == TJ_V_TENSORS)
            for (int k = 0; k < args[i].n; k++)
                if (args[i].u.ts[k]) return args[i].u.ts[k];
    }
    return NULL;
}

static result_rule read_rule(const tj_op *op, const tj_value *args)
{
    result_rule r = {.cls = (tj_widen_class)op->widen_class};
    for (int i = 0; i < op->nargs; i++)
        if (args[i].kind == TJ_V_DTYPE) return (result_rule){true, args[i].u.dtype, r.cls};
    if (r.cls == TJ_WIDEN_ELEMENTWISE) {
        r.dtype = tj_result_type(args, op->nargs);
    } else {
        const tj_tensor *self = first_tensor(args, op->nargs);
        r.dtype = self ? self->dtype : TJ_FLOAT32;
    }
    return r;
}

/* Result i, computed in `computed`: the dtype it is given, or
 * TJ_NUM_DTYPES when the operator's results cannot be told apart (an int64
 * result of an integer self that could be a value or an index). */
static tj_dtype result_dtype(const result_rule *r, int i, tj_dtype computed)
{
    if (!is_storage(r->dtype) || computed != compute_dtype(r->dtype)) return computed;
    if (r->explicit_dtype || r->dtype == TJ_FLOAT16 || r->dtype == TJ_BFLOAT16) return r->dtype;
    switch (r->cls) {
    case TJ_WIDEN_ELEMENTWISE: return r->dtype;
    case TJ_WIDEN_VALUES_FIRST: return i == 0 ? r->dtype : computed;
    case TJ_WIDEN_TO_LONG:
    case TJ_WIDEN_INDICES: return computed;
    default: return TJ_NUM_DTYPES;
    }
}

bool tj_widen_needed(const tj_op *op, const tj_value *args, int nargs)
{
    if (op->any_dtype || op->kind == TJ_OP_IMPLICIT) return false;
    for (int i = 0; i < nargs; i++) {
        const tj_value *v = &args[i];
        if (v->kind == TJ_V_DTYPE && is_storage(v->u.dtype)) return true;
        if (v->kind == TJ_V_TENSOR && v->u.t && is_storage(v->u.t->dtype)) return true;
        for (int k = 0; v->kind == TJ_V_TENSORS && k < v->n; k++)
            if (v->u.ts[k] && is_storage(v->u.ts[k]->dtype)) return true;
    }
    return false;
}

/* One call of `op`'s rewriting: `call` dispatches it; its results are
 * borrowed from the current scope. */
static tj_status call_op(tj_widen_call_fn call, const tj_op *op, const tj_value *args, tj_value *outs)
{
    return call(op, args, op->nargs, outs);
}

/* t converted to `dtype` (aten::_to_copy, its layout kept), into *out. */
static tj_status convert(tj_widen_call_fn call, tj_tensor *t, tj_dtype dtype, tj_tensor **out)
{
    const tj_value args[] = {tj_v_tensor(t), tj_v_dtype(dtype), tj_v_none(), tj_v_none(), tj_v_none(),
                             tj_v_bool(false), tj_v_none()};
    tj_value outs[TJ_MAX_RETURNS];
    tj_status st = call_op(call, TJ_OPS(_to_copy), args, outs);
    *out = st == TJ_OK ? outs[0].u.t : NULL;
    return st;
}

/* The widened call's arguments: storage-dtype tensors converted, storage
 * dtypes replaced by their compute dtype. List elements go to `lists`. */
typedef struct widened {
    tj_value args[TJ_MAX_ARGS];
    tj_tensor **lists;
    size_t lists_bytes;
} widened;

static tj_status widen_args(tj_widen_call_fn call, const tj_op *op, const tj_value *args, widened *w)
{
    int n_listed = 0;
    for (int i = 0; i < op->nargs; i++) n_listed += args[i].kind == TJ_V_TENSORS ? args[i].n : 0;
    w->lists_bytes = sizeof(tj_tensor *) * (size_t)n_listed;
    w->lists = n_listed ? tj_alloc(w->lists_bytes) : NULL;
    if (n_listed && !w->lists) return tj_oom(op->name, w->lists_bytes);
    tj_tensor **next = w->lists;
    for (int i = 0; i < op->nargs; i++) {
        const tj_value *v = &args[i];
        w->args[i] = *v;
        tj_status st = TJ_OK;
        if (v->kind == TJ_V_DTYPE) {
            w->args[i].u.dtype = compute_dtype(v->u.dtype);
        } else if (v->kind == TJ_V_TENSOR && v->u.t && is_storage(v->u.t->dtype)) {
            st = convert(call, v->u.t, compute_dtype(v->u.t->dtype), &w->args[i].u.t);
        } else if (v->kind == TJ_V_TENSORS) {
            w->args[i].u.ts = next;
            for (int k = 0; k < v->n && st == TJ_OK; k++, next++) {
                tj_tensor *t = v->u.ts[k];
                *next = t;
                if (!t || !is_storage(t->dtype)) continue;
                /* a uint8 entry of an index list (Tensor?[]) is a mask, as in torch 1.13 */
                bool mask = op->args[i].elem_optional && t->dtype == TJ_UINT8;
                st = convert(call, t, mask ? TJ_BOOL : compute_dtype(t->dtype), next);
            }
        }
        if (st != TJ_OK) return st;
    }
    return TJ_OK;
}

/* A Python number as the storage dtype d holds it: rounded to float16 /
 * bfloat16 (through float32, as c10 converts), wrapped to an integer
 * type's width. */
static tj_value narrowed_scalar(const tj_value *v, tj_dtype d)
{
    if (d == TJ_FLOAT16 || d == TJ_BFLOAT16) {
        float f = (float)tj_value_as_double(v);
        f = d == TJ_FLOAT16 ? tj_k_f16_to_f32(tj_k_f32_to_f16(f)) : tj_k_bf16_to_f32(tj_k_f32_to_bf16(f));
        return tj_v_float(f);
    }
    if (v->kind != TJ_V_INT) return *v;
    int64_t i = v->u.i;
    switch (d) {
    case TJ_INT32: return tj_v_int((int32_t)(uint32_t)i);
    case TJ_INT16: return tj_v_int((int16_t)(uint16_t)i);
    case TJ_INT8: return tj_v_int((int8_t)(uint8_t)i);
    case TJ_UINT8: return tj_v_int((uint8_t)i);
    default: return *v;
    }
}

/* An elementwise operator computing in a storage dtype R takes its other
 * operands in R first, as PyTorch's TensorIterator casts every operand to
 * the common dtype: a Python number (`other`, `value`, `min`, ...) and a
 * 0-dim tensor of another dtype are rounded or wrapped into R before the
 * widening (u8 == -1 compares 255 with 255; bf16 * 1.1 multiplies by
 * bfloat16's 1.1). Parameters such as alpha stay as given (ATen reads them
 * in float for float16 / bfloat16) but must fit R, as must fill values and
 * clamp bounds; nan_to_num's default replacements are R's largest finite
 * values. */
static tj_status narrow_operands(tj_widen_call_fn call, const tj_op *op, const result_rule *r, const tj_value *args,
                                 widened *w)
{
    static const char *const operands[] = {"other", "self", "value", "min", "max"};
    static const char *const checked[] = {"value", "min", "max", "alpha"};
    static const char *const infinities[] = {"posinf", "neginf"};
    if (r->explicit_dtype || r->cls != TJ_WIDEN_ELEMENTWISE || !is_storage(r->dtype)) return TJ_OK;
    for (int i = 0; i < op->nargs; i++) {
        const tj_value *v = &args[i];
        if (v->kind == TJ_V_TENSOR && v->u.t && v->u.t->ndim == 0 && v->u.t->dtype != r->dtype) {
            tj_tensor *narrow;
            tj_status st = convert(call, v->u.t, r->dtype, &narrow);
            if (st == TJ_OK) st = convert(call, narrow, compute_dtype(r->dtype), &w->args[i].u.t);
            if (st != TJ_OK) return st;
        } else if ((v->kind == TJ_V_INT || v->kind == TJ_V_FLOAT) && op->args[i].type == TJ_A_SCALAR &&
                   (IN(op->args[i].name, operands) || IN(op->args[i].name, checked))) {
            /* what ATen converts with Scalar::to<R> must fit R (wrapped numbers need not) */
            tj_status st = IN(op->args[i].name, checked) ? tj_scalar_check(op->name, op->args[i].name, v, r->dtype)
                                                         : TJ_OK;
            if (st != TJ_OK) return st;
            if (IN(op->args[i].name, operands)) w->args[i] = narrowed_scalar(v, r->dtype);
        } else if (v->kind == TJ_V_NONE && (r->dtype == TJ_FLOAT16 || r->dtype == TJ_BFLOAT16) &&
                   IN(op->args[i].name, infinities)) { /* nan_to_num's default: R's largest finite value */
            double big = r->dtype == TJ_FLOAT16 ? 65504.0 : 0x1.fep127;
            w->args[i] = tj_v_float(strcmp(op->args[i].name, "posinf") == 0 ? big : -big);
        }
    }
    return TJ_OK;
}

/* The written arguments (`Tensor(a!)`) that were converted get the widened
 * call's values back (aten::copy_, rounding to their dtype). */
static tj_status write_back(tj_widen_call_fn call, const tj_op *op, const tj_value *args, const widened *w)
{
    for (int i = 0; i < op->nargs; i++) {
        if (!(op->mutated_args >> i & 1)) continue;
        int n = args[i].kind == TJ_V_TENSOR ? 1 : args[i].kind == TJ_V_TENSORS ? args[i].n : 0;
        for (int k = 0; k < n; k++) {
            tj_tensor *orig = args[i].kind == TJ_V_TENSOR ? args[i].u.t : args[i].u.ts[k];
            tj_tensor *wide = args[i].kind == TJ_V_TENSOR ? w->args[i].u.t : w->args[i].u.ts[k];
            if (orig == wide) continue;
            const tj_value cargs[] = {tj_v_tensor(orig), tj_v_tensor(wide), tj_v_bool(false)};
            tj_value outs[TJ_MAX_RETURNS];
            tj_status st = call_op(call, TJ_OPS(copy_), cargs, outs);
            if (st != TJ_OK) return st;
        }
    }
    return TJ_OK;
}

/* The tensor argument `wide` (of the widened call) stands for, or NULL. */
static tj_tensor *original_of(const tj_op *op, const tj_value *args, const widened *w, const tj_tensor *wide)
{
    for (int i = 0; i < op->nargs; i++) {
        if (args[i].kind == TJ_V_TENSOR && w->args[i].u.t == wide) return args[i].u.t;
        if (args[i].kind == TJ_V_TENSORS)
            for (int k = 0; k < args[i].n; k++)
                if (w->args[i].u.ts[k] == wide) return args[i].u.ts[k];
    }
    return NULL;
}

static __attribute__((cold)) tj_status ambiguous(const tj_op *op, const tj_value *args, int i)
{
    char d[128];
    const tj_tensor *self = first_tensor(args, op->nargs);
    tj_tensor_describe(self, d, sizeof d);
    return tj_error(TJ_ERR_DTYPE, "%s: result %d of an %s input (%s): tjit computes %s in elementwise operators, "
                    "reductions, sorting and indexing only (convert with aten::_to_copy first)", op->name, i,
                    tj_dtype_name(self->dtype), d, tj_dtype_name(self->dtype));
}

/* The widened call's results given the dtypes PyTorch gives them. */
static tj_status narrow_results(tj_widen_call_fn call, const tj_op *op, const tj_value *args, const widened *w,
                                const result_rule *rule, tj_value *wouts, tj_value *outs)
{
    for (int i = 0; i < op->nreturns; i++) {
        if (wouts[i].kind != TJ_V_TENSOR) continue; /* None: an undefined result */
        tj_tensor *t = wouts[i].u.t, *orig = original_of(op, args, w, t);
        if (orig) { /* an in-place result, or an input passed through */
            outs[i] = tj_v_tensor(orig);
            continue;
        }
        tj_dtype d = result_dtype(rule, i, t->dtype);
        if (d == TJ_NUM_DTYPES) return ambiguous(op, args, i);
        if (d != t->dtype) {
            tj_status st = convert(call, t, d, &t);
            if (st != TJ_OK) return st;
        }
        outs[i] = tj_v_tensor(t);
    }
    return TJ_OK;
}

/* A failure of the widened operator itself names the dtypes it computed
 * in, which the caller never passed. */
static __attribute__((cold)) tj_status explain(const tj_op *op, const tj_value *args, tj_status st)
{
    const tj_tensor *t = NULL;
    for (int i = 0; i < op->nargs && !t; i++)
        if (args[i].kind == TJ_V_TENSOR && args[i].u.t && is_storage(args[i].u.t->dtype)) t = args[i].u.t;
    char why[768];
    snprintf(why, sizeof why, "%s", tj_last_error());
    if (!t) return tj_error(st, "%s (storage dtypes computed in float32 or int64)", why);
    return tj_error(st, "%s (the %s arguments computed in %s)", why, tj_dtype_name(t->dtype),
                    tj_dtype_name(compute_dtype(t->dtype)));
}

/* A written argument sharing some of its elements with another argument:
 * the widened copies would lose that aliasing (each computed from the
 * values before the call), so it is refused as ATen refuses it for its
 * elementwise kernels. The same view (x.add_(x)) reads and writes each
 * element at one place and stays allowed. */
static tj_status check_written_overlap(const tj_op *op, const tj_value *args)
{
    for (int j = 0; j < op->nargs; j++) {
        if (!(op->mutated_args >> j & 1) || args[j].kind != TJ_V_TENSOR) continue;
        for (int i = 0; i < op->nargs; i++) {
            if (i == j || args[i].kind != TJ_V_TENSOR || !args[i].u.t) continue;
            if (tj_overlap_status(args[j].u.t, args[i].u.t) == TJ_OVERLAP_PARTIAL)
                return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: unsupported operation: some elements of the input "
                                "tensor (%s) and the written-to tensor (%s) refer to a single memory location; "
                                "clone() it first", op->name, op->args[i].name, op->args[j].name);
        }
    }
    return TJ_OK;
}

tj_status tj_widen_call(const tj_op *op, const tj_value *args, tj_value *outs, tj_widen_call_fn call)
{
    for (int i = 0; i < op->nreturns; i++) outs[i] = tj_v_none();
    if (op->is_view)
        return tj_error(TJ_ERR_DTYPE, "%s: a view of a storage-dtype tensor (float16, bfloat16, int32, int16, "
                        "int8, uint8) through this operator is not supported", op->name);
    if (op->mutated_args) {
        tj_status st = check_written_overlap(op, args);
        if (st != TJ_OK) return st;
    }
    result_rule rule = read_rule(op, args);
    widened w;
    tj_status st = widen_args(call, op, args, &w);
    if (st == TJ_OK) st = narrow_operands(call, op, &rule, args, &w);
    if (st != TJ_OK) st = tj_error_led_by(op->name, st); /* a conversion failed: the user's operator leads */
    tj_value wouts[TJ_MAX_RETURNS];
    if (st == TJ_OK && (st = call_op(call, op, w.args, wouts)) != TJ_OK) st = explain(op, args, st);
    if (st == TJ_OK) st = write_back(call, op, args, &w);
    if (st == TJ_OK) st = narrow_results(call, op, args, &w, &rule, wouts, outs);
    if (w.lists) tj_free(w.lists, w.lists_bytes);
    if (st != TJ_OK)
        for (int i = 0; i < op->nreturns; i++) outs[i] = tj_v_none();
    return st;
}
