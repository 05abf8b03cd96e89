/* The dispatcher: argument checks, implicit composites, autograd recording,
 * the per-thread mode stack, then the kernel (or only the shape function
 * for fake tensors).
 *
 * Ownership: every entry point returns new references adopted by the
 * innermost open scope (or owned by the caller when none is open). Mode
 * handlers and decompositions run inside a scope of their own; their outputs
 * are borrowed from it, and the dispatcher takes a reference to each output
 * before closing that scope, so intermediates they create are released and
 * nothing has to be freed by hand. */
#include <stdio.h>
#include <string.h>

#include "autograd_internal.h"
#include "op_view.h"

#define MAX_MODES 16

static _Thread_local tj_mode *modes[MAX_MODES];
static _Thread_local int n_modes;

/* The call each mode's handler is running, as check_args passed it: a
 * handler forwarding the very argument array it was given (tj_redispatch,
 * tj_dispatch_fake) is not checked again. An entry is restored when its
 * handler returns, so entries only ever name arrays of calls in progress. */
typedef struct handed_call {
    const tj_op *op;
    const tj_value *args;
    int nargs;
    unsigned flags; /* check_args' ARGS_* */
} handed_call;
static _Thread_local handed_call handed[MAX_MODES];

static const char *arg_type_name(const tj_arg_spec *a)
{
    switch (a->type) {
    case TJ_A_TENSOR: return "Tensor";
    case TJ_A_TENSOR_LIST: return a->elem_optional ? "Tensor?[]" : "Tensor[]";
    case TJ_A_INT: return "int";
    case TJ_A_FLOAT: return "float";
    case TJ_A_BOOL: return "bool";
    case TJ_A_INT_LIST: return "int[]";
    case TJ_A_BOOL_LIST: return "bool[]";
    case TJ_A_FLOAT_LIST: return "float[]";
    case TJ_A_SCALAR: return "Scalar";
    case TJ_A_STR: return "str";
    case TJ_A_SCALAR_TYPE: return "ScalarType";
    case TJ_A_IGNORED: return "None";
    }
    return "?";
}

static const char *value_kind_name(tj_value_kind k)
{
    static const char *names[] = {"None", "Tensor", "Tensor[]", "int", "float", "bool", "int[]", "bool[]", "str", "ScalarType", "float[]"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

static bool arg_ok(const tj_arg_spec *a, const tj_value *v)
{
    if (v->kind == TJ_V_NONE) return a->optional || a->type == TJ_A_IGNORED;
    switch (a->type) {
    case TJ_A_TENSOR: return v->kind == TJ_V_TENSOR && v->u.t;
    case TJ_A_TENSOR_LIST:
        if (v->kind != TJ_V_TENSORS || v->n < 0 || (v->n > 0 && !v->u.ts)) return false;
        for (int i = 0; i < v->n && !a->elem_optional; i++)
            if (!v->u.ts[i]) return false;
        return true;
    case TJ_A_INT: return v->kind == TJ_V_INT;
    case TJ_A_FLOAT: return v->kind == TJ_V_FLOAT || v->kind == TJ_V_INT;
    case TJ_A_BOOL: return v->kind == TJ_V_BOOL;
    case TJ_A_INT_LIST:
        return v->kind == TJ_V_INTS && v->n >= 0 && v->n <= 64 && (v->n == 0 || v->u.ints);
    case TJ_A_BOOL_LIST: return v->kind == TJ_V_BOOLS && v->n >= 0 && (v->n == 0 || v->u.bools);
    case TJ_A_FLOAT_LIST:
        return v->kind == TJ_V_FLOATS && v->n >= 0 && v->n <= 64 && (v->n == 0 || v->u.floats);
    case TJ_A_SCALAR: return v->kind == TJ_V_INT || v->kind == TJ_V_FLOAT || v->kind == TJ_V_BOOL;
    case TJ_A_STR: return v->kind == TJ_V_STR && v->u.s;
    case TJ_A_SCALAR_TYPE: return v->kind == TJ_V_DTYPE && (unsigned)v->u.dtype < TJ_NUM_DTYPES;
    case TJ_A_IGNORED: return true;
    }
    return false;
}

/* The message for argument i, which arg_ok refused. */
static __attribute__((cold)) tj_status arg_error(const tj_op *op, const tj_value *args, int i)
{
    const tj_arg_spec *a = &op->args[i];
    const tj_value *v = &args[i];
    int null_at = -1; /* a NULL element of a tensor list */
    if (a->type == TJ_A_TENSOR_LIST && v->kind == TJ_V_TENSORS && v->n > 0 && v->u.ts)
        for (int k = 0; k < v->n && null_at < 0; k++)
            if (!v->u.ts[k]) null_at = k;
    bool null_tensor = a->type == TJ_A_TENSOR && v->kind == TJ_V_NONE;
    if ((null_tensor || null_at >= 0) && tj_unread_error() != TJ_OK) {
        /* a chain of calls: name the earlier failure, unread, that produced the NULL */
        char what[32] = "";
        if (null_at >= 0) snprintf(what, sizeof what, " element %d", null_at);
        return tj_error_null("%s: argument %d '%s'%s is NULL", op->name, i, a->name, what);
    }
    if (null_at >= 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: argument %d '%s' element %d is NULL", op->name, i,
                        a->name, null_at);
    if (a->type == TJ_A_SCALAR_TYPE && v->kind == TJ_V_DTYPE)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: argument %d '%s' is not a dtype (%d)", op->name, i,
                        a->name, (int)v->u.dtype);
    /* a list of the right kind: its length or its array is wrong */
    bool list = (a->type == TJ_A_INT_LIST && v->kind == TJ_V_INTS) ||
                (a->type == TJ_A_BOOL_LIST && v->kind == TJ_V_BOOLS) ||
                (a->type == TJ_A_FLOAT_LIST && v->kind == TJ_V_FLOATS) ||
                (a->type == TJ_A_TENSOR_LIST && v->kind == TJ_V_TENSORS);
    if (list && v->n < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: argument %d '%s' has a negative length (%d)", op->name, i,
                        a->name, v->n);
    const void *array = tj_value_list(v, NULL);
    if (list && v->n > 0 && !array)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: argument %d '%s' is a NULL array of length %d", op->name, i,
                        a->name, v->n);
    if (list && (a->type == TJ_A_INT_LIST || a->type == TJ_A_FLOAT_LIST))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: argument %d '%s' has %d elements, more than 64", op->name, i,
                        a->name, v->n);
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: argument %d '%s' expects %s%s, got %s", op->name, i,
                    a->name, arg_type_name(a), a->optional ? "?" : "",
                    args[i].kind == TJ_V_NONE && a->type == TJ_A_TENSOR ? "NULL" : value_kind_name(args[i].kind));
}

/* What check_args learns of the tensor arguments on its way, so that the
 * autograd and fake-tensor tests need no pass of their own. */
enum { ARGS_AUTOGRAD = 1, ARGS_REAL = 2, ARGS_FAKE = 4, ARGS_MIXED = ARGS_REAL | ARGS_FAKE };
/* The dtypes of the arguments, OR-ed in above those bits: the storage
 * dtypes (4 to 9) set bit 2 or 3 of a dtype, the compute ones (0 to 3)
 * neither, so one OR per tensor finds them. */
#define ARGS_DTYPE_SHIFT 4
#define ARGS_STORAGE (0xcu << ARGS_DTYPE_SHIFT)
_Static_assert(TJ_FIRST_STORAGE_DTYPE == 4 && TJ_NUM_DTYPES <= 16, "ARGS_STORAGE's test");

static unsigned tensor_flags(const tj_tensor *t)
{
    if (!t) return 0;
    /* ARGS_REAL or ARGS_FAKE in one lea: as cheap as the fake bit alone */
    return (t->autograd ? ARGS_AUTOGRAD : 0u) | (ARGS_REAL + ARGS_REAL * (unsigned)t->fake) |
           (unsigned)t->dtype << ARGS_DTYPE_SHIFT;
}

/* The first argument tensor that is fake (want_fake) or real, and where:
 * argument i, element k of a list (-1 for a single tensor). */
static const tj_tensor *find_tensor(const tj_value *args, int nargs, bool want_fake, int *i, int *k)
{
    for (*i = 0; *i < nargs; ++*i) {
        const tj_value *v = &args[*i];
        *k = -1;
        if (v->kind == TJ_V_TENSOR && v->u.t && v->u.t->fake == want_fake) return v->u.t;
        if (v->kind != TJ_V_TENSORS || !v->u.ts) continue;
        for (*k = 0; *k < v->n; ++*k)
            if (v->u.ts[*k] && v->u.ts[*k]->fake == want_fake) return v->u.ts[*k];
    }
    return NULL;
}

/* A call mixing fake and real tensors outside a fake-mode trace (check_args
 * saw both): a kernel would write nothing into the real ones and a shape
 * function would make fake results of real data, silently. PyTorch refuses
 * it too ("Please convert all Tensors to FakeTensors first"). */
static __attribute__((cold, noinline)) tj_status mixed_error(const tj_op *op, const tj_value *args)
{
    int fi, fk, ri, rk, nargs = op->nargs; /* check_args saw as many */
    const tj_tensor *f = find_tensor(args, nargs, true, &fi, &fk), *r = find_tensor(args, nargs, false, &ri, &rk);
    char fd[128], rd[128], fe[24] = "", re[24] = "";
    tj_tensor_describe(f, fd, sizeof fd);
    tj_tensor_describe(r, rd, sizeof rd);
    if (fk >= 0) snprintf(fe, sizeof fe, " element %d", fk);
    if (rk >= 0) snprintf(re, sizeof re, " element %d", rk);
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: argument %d '%s'%s is a fake tensor (%s) and argument %d '%s'%s a real "
                    "one (%s): fake and real tensors meet only inside a fake-mode trace (tj_make_fx with "
                    "TJ_TRACE_FAKE), where real ones are constants", op->name, fi, op->args[fi].name, fe, fd, ri,
                    op->args[ri].name, re, rd);
}

/* The value kinds an argument type takes with nothing more to check (a
 * number for a number, of the type's kinds); the rest goes to arg_ok. */
#define KIND(k) (1u << (k))
static const unsigned plain_kinds[] = {
    [TJ_A_INT] = KIND(TJ_V_INT),
    [TJ_A_FLOAT] = KIND(TJ_V_FLOAT) | KIND(TJ_V_INT),
    [TJ_A_BOOL] = KIND(TJ_V_BOOL),
    [TJ_A_SCALAR] = KIND(TJ_V_INT) | KIND(TJ_V_FLOAT) | KIND(TJ_V_BOOL),
    [TJ_A_IGNORED] = 0, /* sizes the table for every type */
};
#undef KIND

static tj_status check_args(const tj_op *op, const tj_value *args, int nargs, unsigned *flags)
{
    if (nargs != op->nargs)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: expected %d arguments, got %d", op->name, op->nargs, nargs);
    if (nargs && !args) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: NULL argument array", op->name);
    unsigned f = 0;
    for (int i = 0; i < nargs; i++) {
        const tj_value *v = &args[i];
        const tj_arg_spec *a = &op->args[i];
        if (v->kind == TJ_V_TENSOR && v->u.t && a->type == TJ_A_TENSOR) { /* the common case, first */
            f |= tensor_flags(v->u.t);
            continue;
        }
        if ((unsigned)v->kind < 32 && (plain_kinds[a->type] >> v->kind & 1)) continue; /* a number, next */
        if (!arg_ok(a, v)) return arg_error(op, args, i);
        if (v->kind == TJ_V_TENSOR) f |= tensor_flags(v->u.t);
        else if (v->kind == TJ_V_TENSORS && v->u.ts)
            for (int k = 0; k < v->n; k++) f |= tensor_flags(v->u.ts[k]);
        else if (v->kind == TJ_V_DTYPE) f |= (unsigned)v->u.dtype << ARGS_DTYPE_SHIFT;
    }
    /* the operators that take every dtype, and the implicit composites
     * (whose calls do), need no widening: run_kernel reads the bits */
    if ((f & ARGS_STORAGE) && (op->any_dtype || op->kind == TJ_OP_IMPLICIT)) f &= ~ARGS_STORAGE;
    *flags = f;
    return TJ_OK;
}

static void clear_outs(const tj_op *op, tj_value *outs)
{
    int n = op->nreturns; /* read once: the stores could alias op */
    for (int i = 0; i < n; i++) outs[i] = tj_v_none();
}

/* A call that failed with `st`: no outputs, and its error unread for the
 * caller (see tj_error_mark_unread). Out of line: nothing of it in a
 * successful call. */
static __attribute__((cold, noinline)) void fail_outs(const tj_op *op, tj_value *outs, tj_status st)
{
    clear_outs(op, outs);
    tj_error_mark_unread(st);
}

static void release_outs(const tj_op *op, tj_value *outs)
{
    for (int i = 0; i < op->nreturns; i++) tj_value_release(&outs[i]);
}

/* Number of tensors in an output value, and the k-th of them (a Tensor[]
 * result, such as split's, holds several). */
static int out_count(const tj_value *v) { return v->kind == TJ_V_TENSOR ? 1 : v->kind == TJ_V_TENSORS ? v->n : 0; }
static tj_tensor *out_at(const tj_value *v, int k) { return v->kind == TJ_V_TENSOR ? v->u.t : v->u.ts[k]; }

/* adopt_outs for several outputs, or none (out of line: the common case
 * of one tensor then needs no registers saved). */
static __attribute__((noinline)) tj_status adopt_all_outs(const tj_op *op, tj_value *outs)
{
    for (int i = 0; i < op->nreturns; i++) {
        for (int k = 0; k < out_count(&outs[i]); k++) {
            if (tj_scope_adopt(out_at(&outs[i], k)) == TJ_OK) continue;
            for (int j = 0; j < op->nreturns; j++)
                for (int m = 0; m < out_count(&outs[j]); m++) {
                    bool adopted = j < i || (j == i && m < k);
                    if (adopted) tj_scope_drop(out_at(&outs[j], m));
                    else tj_tensor_release(out_at(&outs[j], m));
                }
            return TJ_ERR_OUT_OF_MEMORY;
        }
    }
    return TJ_OK;
}

/* Hands every output tensor to the innermost scope. When it cannot grow,
 * gives back the ones already handed over, releases the rest and fails. */
static tj_status adopt_outs(const tj_op *op, tj_value *outs)
{
    if (op->nreturns != 1 || outs[0].kind != TJ_V_TENSOR) return adopt_all_outs(op, outs);
    if (tj_scope_adopt(outs[0].u.t) == TJ_OK) return TJ_OK;
    tj_tensor_release(outs[0].u.t);
    return TJ_ERR_OUT_OF_MEMORY;
}

/* Moves an output out of the closing scope (its reference passes to the
 * caller), or retains it when that scope does not own it (an input passed
 * through). A transfer costs no locked instruction, a retain does. */
static void take_or_retain(tj_tensor *t)
{
    if (!tj_scope_take(t)) tj_tensor_retain(t);
}

/* Runs fn(ctx...) inside a scope; its outputs (borrowed from that scope) are
 * taken out of it before it closes, so they come back as owned references. */
typedef tj_status (*scoped_fn)(void *ctx, const tj_op *op, const tj_value *args, int nargs, tj_value *outs);

static tj_status run_scoped(scoped_fn fn, void *ctx, const tj_op *op, const tj_value *args, int nargs,
                            tj_value *outs)
{
    tj_scope *s = tj_scope_begin();
    if (!s) return tj_last_status();
    int outer_fence = tj_scope_fence(s);
    tj_status st = fn(ctx, op, args, nargs, outs);
    tj_scope_unfence(outer_fence);
    if (st == TJ_OK) {
        for (int i = 0; i < op->nreturns; i++) {
            if (outs[i].kind == TJ_V_TENSOR) take_or_retain(outs[i].u.t);
            else if (outs[i].kind == TJ_V_TENSORS)
                for (int k = 0; k < outs[i].n; k++) take_or_retain(outs[i].u.ts[k]);
        }
    } else {
        clear_outs(op, outs);
    }
    tj_scope_end(s);
    return st;
}

static tj_status call_decomp(void *ctx, const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    (void)ctx;
    (void)nargs;
    return op->decomp(args, outs);
}

static tj_status call_mode(void *ctx, const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    tj_mode *m = ctx;
    return m->handler(m, op, args, nargs, outs);
}

/* An in-place view's self takes the shape function's geometry (its data,
 * storage and numel stay); returns self. */
static tj_tensor *set_geometry(tj_tensor *self, const tj_meta *m)
{
    self->ndim = m->ndim;
    memcpy(self->shape, m->shape, sizeof(int64_t) * (size_t)m->ndim);
    memcpy(self->strides, m->strides, sizeof(int64_t) * (size_t)m->ndim);
    self->offset = m->offset;
    return self;
}

void tj_meta_alias_types(const tj_op *op, const tj_value *args, tj_meta *m)
{
    for (int i = 0; i < op->nreturns; i++) {
        int a = m[i].alias;
        if (m[i].undefined || a < 0 || a >= op->nargs || args[a].kind != TJ_V_TENSOR || !args[a].u.t) continue;
        const tj_tensor *base = args[a].u.t;
        m[i].dtype = base->dtype;
        if (!m[i].same) continue;
        m[i].ndim = base->ndim;
        memcpy(m[i].shape, base->shape, sizeof(int64_t) * (size_t)base->ndim);
    }
}

/* Allocates the outputs the shape function describes: owned references in
 * outs, and the kernel's arguments in ot (NULL for an undefined output).
 * `computed`: whether the kernel writes any (not all views or undefined). */
static tj_status alloc_outs(const tj_op *op, const tj_value *args, const tj_meta *m, bool fake, tj_value *outs,
                            tj_tensor **ot, bool *computed)
{
    *computed = false;
    for (int i = 0; i < op->nreturns; i++) {
        tj_tensor *t;
        ot[i] = NULL;
        if (m[i].undefined) {
            outs[i] = tj_v_none();
            continue;
        }
        *computed |= m[i].alias < 0 || m[i].same;
        if (m[i].alias >= 0) {
            tj_tensor *base = args[m[i].alias].u.t;
            if (m[i].same) t = tj_tensor_retain(base);
            else if (tj_op_is_inplace_view(op)) t = tj_tensor_retain(set_geometry(base, &m[i]));
            else if ((t = tj_tensor_new_view(base, m[i].ndim, m[i].shape, m[i].strides, m[i].offset))) {
                /* detach's alias has no history to rebase: PyTorch's
                 * non-differentiable view */
                if (op == TJ_OPS(detach)) tj_tensor_mark_detached(t);
                else tj_tensor_set_view_of(t, base);
            }
        } else {
            t = tj_tensor_new_meta(&m[i], fake);
        }
        if (!t) {
            /* the allocator's message says only how much: name the operator
             * (copied first: the message is rewritten in its own buffer) */
            char why[512];
            snprintf(why, sizeof why, "%s", tj_last_error());
            tj_status st = tj_error(tj_last_status(), "%s: output %d: %s", op->name, i, why);
            release_outs(op, outs);
            return st;
        }
        outs[i] = tj_v_tensor(t);
        ot[i] = t;
    }
    return TJ_OK;
}

/* What the dispatcher reads of a tj_meta whatever the shape function does;
 * shape and strides are read up to the ndim it sets (clearing all of tj_meta
 * costs more than the rest of run_meta). */
static void meta_defaults(tj_meta *m)
{
    m->dtype = TJ_FLOAT32;
    m->ndim = 0;
    m->alias = -1;
    m->same = false;
    m->undefined = false;
    m->offset = 0;
}

/* A failed call of a user's callback (`what`: its shape function, kernel or
 * decomposition) that recorded no error of its own gets one naming it. */
static __attribute__((cold, noinline)) tj_status callback_failed(const tj_op *op, tj_status st, const char *what)
{
    return tj_op_is_builtin(op) ? st : tj_error_if_unrecorded(st, op->name, what);
}

static tj_status run_meta(const tj_op *op, const tj_value *args, tj_meta *m)
{
    if (!op->meta)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: not implemented yet (no shape function)", op->name);
    /* m[0] whatever nreturns (m has TJ_MAX_RETURNS entries): a loop for one
     * output costs more than its work */
    meta_defaults(&m[0]);
    for (int i = 1, n = op->nreturns; i < n; i++) meta_defaults(&m[i]);
    return op->meta(args, m);
}

/* What the dispatcher relies on in the shape function's view outputs, for
 * operators from tj_op_register (built-in shape functions are trusted): a
 * view or in-place result names a Tensor argument, and a view's elements
 * stay inside that tensor's storage. Unchecked, a user's shape function
 * aliasing an int argument crashed, and one stepping past the storage made
 * a tensor whose reads and writes went out of bounds (hostile tests). New
 * outputs need nothing here: tj_tensor_new_meta checks dtype, rank, sizes. */
static __attribute__((noinline)) tj_status check_user_views(const tj_op *op, const tj_value *args, const tj_meta *m)
{
    for (int i = 0; i < op->nreturns; i++) {
        const tj_meta *o = &m[i];
        if (o->undefined || o->alias < 0) continue;
        if (o->alias >= op->nargs || args[o->alias].kind != TJ_V_TENSOR)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output %d: the shape function makes it a view of argument %d, "
                            "which is not a tensor", op->name, i, o->alias);
        const tj_tensor *base = args[o->alias].u.t;
        if (o->same) continue;
        if (o->ndim < 0 || o->ndim > TJ_MAX_DIMS)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output %d: the shape function gives rank %d", op->name, i,
                            o->ndim);
        int64_t numel = 1;
        for (int d = 0; d < o->ndim; d++) {
            if (o->shape[d] < 0)
                return tj_error(TJ_ERR_SHAPE, "%s: output %d: the shape function gives size %lld in dim %d", op->name,
                                i, (long long)o->shape[d], d);
            if (o->shape[d] == 0) numel = 0;
        }
        int64_t lo, hi;
        bool over = !tj_layout_element_range(o->ndim, o->shape, o->strides, o->offset, &lo, &hi);
        /* the elements the storage holds, not its allocation's rounded-up
         * bytes (uninitialised); a fake base's root span */
        int64_t size = tj_storage_elements(base);
        if (over || (numel && (lo < 0 || hi >= size)))
            return tj_error(TJ_ERR_INDEX, "%s: output %d: the shape function's view (offset %lld) reaches storage "
                            "elements %lld..%lld, outside the %lld elements of argument %d's storage", op->name, i, (long long)o->offset,
                            (long long)lo, (long long)hi, (long long)size, o->alias);
    }
    return TJ_OK;
}

static void bump_version(tj_tensor *t, bool fake_only)
{
    if (t && (!fake_only || t->fake)) tj_tensor_bump_version(t);
}

/* The arguments the kernel wrote (`Tensor(a!)`) have a new version. A fake
 * call bumps its fake arguments only (as if written, so that autograd's
 * saved-value and stale-view checks see it as in eager mode), not the real
 * ones a fake-mode trace lends their shapes. */
static __attribute__((noinline)) void bump_versions(const tj_op *op, const tj_value *args, bool fake_only)
{
    for (int i = 0; i < op->nargs; i++) {
        if (!((op->mutated_args >> i) & 1)) continue;
        if (args[i].kind == TJ_V_TENSOR) bump_version(args[i].u.t, fake_only);
        else if (args[i].kind == TJ_V_TENSORS)
            for (int k = 0; k < args[i].n; k++) bump_version(args[i].u.ts[k], fake_only);
    }
}

/* The fake outputs of a call that mixed fake and real tensors, released. */
static __attribute__((cold, noinline)) tj_status refuse_mixed(const tj_op *op, const tj_value *args, tj_value *outs)
{
    release_outs(op, outs);
    clear_outs(op, outs);
    return mixed_error(op, args);
}

/* Below every mode, for an operator that is not an implicit composite: the
 * shape function, the outputs, then the kernel; `flags` from check_args.
 * Only the shape function when a tensor is fake (or ARGS_FAKE alone,
 * forced). Fake and real tensors together reach here only outside a
 * fake-mode trace (whose handler calls tj_dispatch_fake), and are refused
 * on the fake path, after the shape function: a test before it would cost
 * every call. */
typedef struct widen_ctx {
    tj_widen_call_fn call;
} widen_ctx;

static tj_status call_widened(void *ctx, const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    (void)nargs;
    return tj_widen_call(op, args, outs, ((widen_ctx *)ctx)->call);
}

/* A call with storage-dtype tensors (ARGS_STORAGE) of an operator that
 * computes: its pieces below the modes, fake ones for a fake call, in a
 * scope of its own that releases the conversions. */
static __attribute__((cold, noinline)) tj_status run_widened(const tj_op *op, const tj_value *args, tj_value *outs,
                                                             unsigned flags)
{
    widen_ctx ctx = {flags & ARGS_FAKE ? tj_dispatch_fake : tj_dispatch_kernel};
    return run_scoped(call_widened, &ctx, op, args, op->nargs, outs);
}

static tj_status run_kernel(const tj_op *op, const tj_value *args, tj_value *outs, unsigned flags)
{
    if (flags & ARGS_STORAGE) return run_widened(op, args, outs, flags);
    bool fake = flags & ARGS_FAKE;
    tj_meta m[TJ_MAX_RETURNS];
    tj_status st = run_meta(op, args, m);
    if (st != TJ_OK) return callback_failed(op, st, "its shape function");
    if (!tj_op_is_builtin(op) && (st = check_user_views(op, args, m)) != TJ_OK) return st;
    tj_tensor *ot[TJ_MAX_RETURNS];
    bool computed;
    st = alloc_outs(op, args, m, fake, outs, ot, &computed);
    if (st != TJ_OK) return st;
    if (fake) {
        if (flags & ARGS_REAL) return refuse_mixed(op, args, outs);
        if (op->mutated_args) bump_versions(op, args, true);
        return TJ_OK;
    }
    if (!computed) {
        if (op->mutated_args) bump_versions(op, args, false); /* an in-place view changed self */
        return st;
    }
    if (!op->kernel) {
        release_outs(op, outs);
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: not implemented yet (no kernel)", op->name);
    }
    st = op->kernel(args, ot);
    if (st != TJ_OK) {
        release_outs(op, outs);
        return callback_failed(op, st, "its kernel");
    }
    else if (op->mutated_args) bump_versions(op, args, false);
    return st;
}

/* Implicit composites being decomposed on this thread, outermost first: a
 * user operator's decomposition that reaches its own operator again is
 * reported as a cycle, not a stack overflow. */
#define MAX_IMPLICIT_DEPTH 64
static _Thread_local const tj_op *implicit_stack[MAX_IMPLICIT_DEPTH];
static _Thread_local int implicit_depth;

static __attribute__((cold)) tj_status implicit_cycle(const tj_op *op)
{
    char chain[1024];
    size_t k = 0;
    for (int i = 0; i < implicit_depth && k < sizeof chain; i++)
        k += (size_t)snprintf(chain + k, sizeof chain - k, "%s -> ", implicit_stack[i]->name);
    if (k < sizeof chain) snprintf(chain + k, sizeof chain - k, "%s", op->name);
    return tj_error(TJ_ERR_CYCLE, "%s: decomposition cycle: %s", op->name, chain);
}

/* A user's decomposition gives every return of its operator's schema: a
 * Tensor (a Tensor[] for a list return), not None, which the caller would
 * take for a tensor. Refused with the outputs it did give released. */
static __attribute__((noinline)) tj_status check_implicit_outs(const tj_op *op, tj_value *outs)
{
    tj_value_kind want = op->returns_list ? TJ_V_TENSORS : TJ_V_TENSOR;
    for (int i = 0; i < op->nreturns; i++) {
        bool ok = outs[i].kind == want;
        for (int k = 0; ok && want == TJ_V_TENSORS && k < outs[i].n; k++) ok = outs[i].u.ts[k] != NULL;
        if (ok) continue;
        release_outs(op, outs);
        clear_outs(op, outs);
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: its decomposition gave no %s for output %d of %d", op->name,
                        want == TJ_V_TENSOR ? "Tensor" : "Tensor[] without None", i, op->nreturns);
    }
    return TJ_OK;
}

static tj_status run_implicit(const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    if (!op->decomp) return tj_error(TJ_ERR_UNSUPPORTED, "%s: no decomposition registered", op->name);
    for (int i = 0; i < implicit_depth; i++)
        if (implicit_stack[i] == op) return implicit_cycle(op);
    if (implicit_depth == MAX_IMPLICIT_DEPTH) return implicit_cycle(op);
    implicit_stack[implicit_depth++] = op;
    tj_status st = run_scoped(call_decomp, NULL, op, args, nargs, outs);
    implicit_depth--;
    if (st == TJ_OK && !tj_op_is_builtin(op)) st = check_implicit_outs(op, outs);
    return st == TJ_OK ? st : tj_error_led_by(op->name, callback_failed(op, st, "its decomposition"));
}

/* Below every mode: implicit composites decompose, others run the kernel. */
static tj_status bottom(const tj_op *op, const tj_value *args, int nargs, tj_value *outs, unsigned flags)
{
    if (op->kind == TJ_OP_IMPLICIT) return run_implicit(op, args, nargs, outs);
    return run_kernel(op, args, outs, flags);
}

/* Runs the handler of the mode at `level` (>= 0). Out of line: a call
 * without modes then sets up no frame for it. */
static __attribute__((noinline)) tj_status run_mode(int level, const tj_op *op, const tj_value *args, int nargs,
                                                    tj_value *outs, unsigned flags)
{
    handed_call outer = handed[level];
    handed[level] = (handed_call){op, args, nargs, flags};
    tj_status st = run_scoped(call_mode, modes[level], op, args, nargs, outs);
    handed[level] = outer;
    return st;
}

/* Runs the mode at `level` (or, below level 0, the kernel) for an operator
 * that is not an implicit composite; `flags` from check_args. Inlined, as are
 * run_checked and entry: a call layer less costs ~30 instructions per
 * operator. */
static inline __attribute__((always_inline)) tj_status run_level(int level, const tj_op *op, const tj_value *args,
                                                                 int nargs, tj_value *outs, unsigned flags)
{
    if (level < 0) return run_kernel(op, args, outs, flags);
    return run_mode(level, op, args, nargs, outs, flags);
}

/* Whether `args` is the array the handler at `level` was given for `op`:
 * then its check_args flags. */
static bool handed_to(int level, const tj_op *op, const tj_value *args, int nargs, unsigned *flags)
{
    const handed_call *h = &handed[level];
    if (h->op != op || h->args != args || h->nargs != nargs) return false;
    *flags = h->flags;
    return true;
}

/* Autograd: the call runs below with recording off, then the outputs get
 * its backward node. */
static tj_status run_recorded(const tj_op *op, const tj_value *args, int nargs, tj_value *outs, int level,
                              unsigned flags)
{
    tj_autograd_call call;
    tj_status st = tj_autograd_check(op, args, &call);
    if (st != TJ_OK) return st;
    bool was_enabled = tj_autograd_below_begin();
    st = run_level(level, op, args, nargs, outs, flags);
    tj_autograd_below_end(was_enabled);
    if (st != TJ_OK) tj_autograd_call_end(&call);
    else if ((st = tj_autograd_record(op, args, outs, &call)) != TJ_OK) release_outs(op, outs);
    return st;
}

/* A dispatch whose arguments passed check_args (`flags`), from `level`
 * down; outs are cleared. */
static inline __attribute__((always_inline)) tj_status run_checked(const tj_op *op, const tj_value *args, int nargs,
                                                                   tj_value *outs, int level, unsigned flags)
{
    tj_status st;
    /* implicit composites decompose before any mode sees them; below every
     * mode, no fake-mode trace takes their calls (as run_kernel refuses) */
    if (op->kind == TJ_OP_IMPLICIT)
        st = level < 0 && (flags & ARGS_MIXED) == ARGS_MIXED ? mixed_error(op, args)
                                                              : bottom(op, args, nargs, outs, 0);
    else if ((flags & ARGS_AUTOGRAD) && tj_autograd_wants(op, args))
        st = run_recorded(op, args, nargs, outs, level, flags);
    else st = run_level(level, op, args, nargs, outs, flags);
    if (st == TJ_OK) st = adopt_outs(op, outs);
    if (st != TJ_OK) fail_outs(op, outs, st);
    return st;
}

static inline __attribute__((always_inline)) tj_status entry(const tj_op *op, const tj_value *args, int nargs,
                                                             tj_value *outs, int level)
{
    if (!outs) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_dispatch: NULL outputs array");
    if (!op) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_dispatch: NULL operator");
    clear_outs(op, outs);
    unsigned flags;
    tj_status st = check_args(op, args, nargs, &flags);
    if (st != TJ_OK) return st;
    return run_checked(op, args, nargs, outs, level, flags);
}

tj_status tj_dispatch(const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    return entry(op, args, nargs, outs, n_modes - 1);
}

tj_status tj_redispatch(tj_mode *mode, const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    /* a handler forwarding a NULL operator: refused before handed_to reads it */
    if (!op) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_redispatch: NULL operator");
    int level = n_modes - 1;
    while (level >= 0 && modes[level] != mode) level--;
    if (level < 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_redispatch: mode '%s' is not on this thread's stack",
                                   mode && mode->name ? mode->name : "?");
    unsigned flags;
    if (!outs || !handed_to(level, op, args, nargs, &flags)) return entry(op, args, nargs, outs, level - 1);
    clear_outs(op, outs);
    return run_checked(op, args, nargs, outs, level - 1, flags);
}

tj_status tj_dispatch_kernel(const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    return entry(op, args, nargs, outs, -1);
}

tj_status tj_dispatch_fake(const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    if (!outs) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_dispatch_fake: NULL outputs array");
    if (!op) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_dispatch_fake: NULL operator");
    clear_outs(op, outs);
    unsigned flags;
    bool checked = false; /* the arguments a mode's handler was given (make_fx's fake mode forwards them) */
    for (int level = n_modes - 1; level >= 0 && !checked; level--) checked = handed_to(level, op, args, nargs, &flags);
    tj_status st = checked ? TJ_OK : check_args(op, args, nargs, &flags);
    /* real arguments too: forced */
    if (st == TJ_OK) st = bottom(op, args, nargs, outs, ARGS_FAKE | (flags & ARGS_STORAGE));
    if (st == TJ_OK) st = adopt_outs(op, outs);
    if (st != TJ_OK) fail_outs(op, outs, st);
    return st;
}

tj_status tj_call(const char *name, const tj_value *args, int nargs, tj_value *outs)
{
    const tj_op *op = tj_op_find(name);
    if (!op) return tj_last_status();
    if (nargs > op->nargs || nargs < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: expected at most %d arguments, got %d", op->name, op->nargs, nargs);
    if (nargs && !args) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: NULL argument array", op->name);
    tj_value full[TJ_MAX_ARGS];
    for (int i = 0; i < op->nargs; i++) {
        if (i < nargs) full[i] = args[i];
        else if (op->args[i].has_default) full[i] = op->args[i].def;
        else
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: argument %d '%s' has no default and was not given",
                            op->name, i, op->args[i].name);
    }
    return tj_dispatch(op, full, op->nargs, outs);
}

tj_status tj_mode_push(tj_mode *mode)
{
    if (!mode || !mode->handler) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_mode_push: NULL mode or handler");
    if (n_modes >= MAX_MODES) return tj_error(TJ_ERR_OVERFLOW, "tj_mode_push: more than %d modes", MAX_MODES);
    modes[n_modes++] = mode;
    return TJ_OK;
}

tj_status tj_mode_pop(tj_mode *mode)
{
    if (n_modes == 0 || modes[n_modes - 1] != mode)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_mode_pop: mode '%s' is not the top of this thread's stack",
                        mode && mode->name ? mode->name : "?");
    modes[--n_modes] = NULL;
    return TJ_OK;
}

int tj_mode_depth(void) { return n_modes; }

int tj_mode_pop_above(const tj_mode *mode)
{
    int at = n_modes - 1;
    while (at >= 0 && modes[at] != mode) at--;
    if (at < 0) return -1;
    int popped = n_modes - 1 - at;
    while (n_modes > at + 1) modes[--n_modes] = NULL;
    return popped;
}

bool tj_mode_active(const char *name)
{
    for (int i = 0; i < n_modes; i++)
        if (modes[i]->name && strcmp(modes[i]->name, name) == 0) return true;
    return false;
}
