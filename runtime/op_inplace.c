/* In-place operators and their out-of-place counterparts.
 *
 * An in-place operator runs its out-of-place operator's shape function (for
 * the argument checks and the result dtype), requires that result to fit
 * self (self's shape, a dtype self can hold: PyTorch's canCast), and then
 * computes straight into self with the out-of-place kernel (the elementwise
 * engine allows the output to alias an input exactly). When the result dtype
 * differs from self's (float64 into float32), it computes in the result
 * dtype and converts, as ATen's TensorIterator does. */
#include <stdio.h>
#include <string.h>

#include "kernels/copy.h"
#include "kernels/fill.h"
#include "kernels/pointwise3.h"
#include "op_elementwise.h"
#include "op_elementwise_util.h"
#include "op_index.h"
#include "op_inplace.h"
#include "op_tri_repeat.h"
#include "op_view.h"

#define SHAPE_BUF 160

static bool same_shape(int ndim, const int64_t *shape, const tj_tensor *t)
{
    return ndim == t->ndim && memcmp(shape, t->shape, sizeof(int64_t) * (size_t)ndim) == 0;
}

/* ---- the in-place wrapper ---- */

static tj_status meta_oop(tj_meta_fn oop, const tj_value *args, tj_meta *m)
{
    memset(m, 0, sizeof *m);
    m->alias = -1;
    return oop(args, m);
}

/* Re-issues the out-of-place operator's error under the in-place name:
 * "aten::add.Tensor: ..." becomes "aten::add_.Tensor: ...". functional: the
 * out-of-place operator's name, or NULL for op's name less its '_'. */
static tj_status renamed_error(const char *op, const char *functional, tj_status st)
{
    char oop[80], msg[512];
    const char *dot = strchr(op, '.');
    size_t base = dot ? (size_t)(dot - op) : strlen(op);
    if (functional) snprintf(oop, sizeof oop, "%s:", functional);
    else snprintf(oop, sizeof oop, "%.*s%s:", (int)(base - 1), op, dot ? dot : "");
    size_t n = strlen(oop);
    if (strncmp(tj_last_error(), oop, n) != 0) return st;
    snprintf(msg, sizeof msg, "%s", tj_last_error() + n);
    return tj_error(st, "%s:%s", op, msg);
}

/* ---- overlap between self and the operands (issue 9) ----
 * The elementwise engine reads element i of each operand and writes element
 * i of self, in any order and in blocks: it is correct when an operand is
 * self exactly (same elements at the same places), and when it shares no
 * memory with self. Anything in between (x.add_(x.t()), y[1:].copy_(y[:-1]),
 * self expanded with stride 0, overlapping unfold windows) would read
 * elements already overwritten, so it is refused as PyTorch refuses it
 * ("unsupported operation: ... refer to a single memory location"). */

/* The address of t's first element, as an integer (a fake tensor's data
 * is NULL, to which no offset may be added). */
static uintptr_t first_element(const tj_tensor *t)
{
    return (uintptr_t)t->storage->data + (uintptr_t)t->offset * tj_dtype_size(t->dtype);
}

/* operand, broadcast to self's shape, is self element for element. By
 * address, not storage offset: two DLPack imports of one array have
 * storages of their own, both at offset 0 whatever bytes they start at. */
static bool same_elements(const tj_tensor *self, const tj_tensor *operand)
{
    int64_t strides[TJ_MAX_DIMS];
    if (first_element(operand) != first_element(self)) return false;
    tj_broadcast_strides(operand, self->ndim, self->shape, strides);
    for (int d = 0; d < self->ndim; d++)
        if (self->shape[d] > 1 && strides[d] != self->strides[d]) return false;
    return true;
}

/* masked_fill_.Tensor's value is read once, as a Scalar, before anything is
 * written (ATen's masked_fill_ takes value.item()): it may be an element of
 * self, as in x.masked_fill_(m, x[0, 0]), which PyTorch allows. */
static bool read_before_writing(const tj_op *op, int i)
{
    return op == TJ_OPS(masked_fill__Tensor) && i == 2;
}

static tj_status overlap_error(const char *op, const char *what, const tj_tensor *t, const tj_tensor *self)
{
    char a[SHAPE_BUF], b[SHAPE_BUF];
    return tj_error(TJ_ERR_UNSUPPORTED, "%s: unsupported operation: some elements of %s %s and of the written-to "
                    "tensor (self) %s refer to a single memory location; clone() it first", op, what,
                    tj_shape_str(t->ndim, t->shape, a, sizeof a), tj_shape_str(self->ndim, self->shape, b, sizeof b));
}

/* The in-place indexed writers refuse the operand overlaps ATen 1.13
 * refuses (tj_aten_refuses_overlap, its assert_no_overlap), one row each:
 * the argument slots ATen checks against self. An operand that
 * is self itself, or shares memory with it where both are dense, is
 * refused, even one that ATen reads before writing (scatter_'s src with no
 * index: torch refuses x.scatter_(0, empty, x)). Overlaps ATen finds too
 * hard to tell (an operand or self not dense: a column, x[::2]) pass as
 * there: the kernels read such an index or src from a copy before writing
 * (ATen reads them as it writes: where that order matters, as in
 * x[:, :2].index_copy_(0, i, x[:, 1:]), the values differ from ATen's).
 * Not checked: index_fill_'s value tensor, read first as a Scalar (ATen's
 * value.item()), so it may be an element of self; scatter_.value's Scalar.
 * self_checked: self must not overlap itself (ATen's
 * assert_no_internal_overlap on the scatters and index_copy_, refusing an
 * expanded self; here also overlapping windows, where ATen's values would
 * depend on its loop order); index_fill_ and index_put_ accept an expanded
 * self (ATen only warns that this is deprecated: each location gets a
 * whole value). (ATen 1.13 also runs index_put_ with a boolean mask and
 * one value as masked_fill_, values unchecked: here such a mask is an
 * index like the others, checked as such.) Where two things are wrong, the
 * error is ATen's: index_copy_ checks overlap right after dim (a 2-D index
 * equal to source and self is the overlap), the others after their
 * arguments. */
typedef struct aten_overlap_rule {
    int op;                  /* TJ_OPI_<ident> */
    bool self_checked;
    bool before_arguments;   /* checked once dim (args[1]) is valid, before the other arguments (index_copy_) */
    signed char operand[2];  /* argument slots checked against self (0: none); a Tensor?[] checks each entry */
    const char *name[2];     /* how the error names them */
} aten_overlap_rule;

static const aten_overlap_rule aten_overlap_rules[] = {
    {TJ_OPI_index_put_, false, false, {2, 1}, {"values", "indices"}},
    {TJ_OPI_index_fill__int_Scalar, false, false, {2}, {"index"}},
    {TJ_OPI_index_fill__int_Tensor, false, false, {2}, {"index"}},
    {TJ_OPI_index_copy_, true, true, {2, 3}, {"index", "source"}},
    {TJ_OPI_scatter__src, true, false, {2, 3}, {"index", "src"}},
    {TJ_OPI_scatter__value, true, false, {2}, {"index"}},
    {TJ_OPI_scatter__reduce, true, false, {2, 3}, {"index", "src"}},
    {TJ_OPI_scatter__value_reduce, true, false, {2}, {"index"}},
    {TJ_OPI_scatter_reduce__two, true, false, {2, 3}, {"index", "src"}},
    {TJ_OPI_scatter_add_, true, false, {2, 3}, {"index", "src"}},
    {TJ_OPI_index_add_, true, false, {2, 3}, {"index", "source"}},
};

static const aten_overlap_rule *overlap_as_aten(const tj_op *opr)
{
    for (size_t k = 0; k < sizeof aten_overlap_rules / sizeof *aten_overlap_rules; k++)
        if (opr == &tj_builtin_ops[aten_overlap_rules[k].op]) return &aten_overlap_rules[k];
    return NULL;
}

static tj_status check_overlap_as_aten(const tj_op *opr, const aten_overlap_rule *rule, const tj_value *args)
{
    const tj_tensor *self = args[0].u.t;
    for (int j = 0; j < 2 && rule->operand[j]; j++) {
        const tj_value *v = &args[rule->operand[j]];
        bool list = v->kind == TJ_V_TENSORS;
        for (int k = 0; k < (list ? v->n : 1); k++) {
            const tj_tensor *t = list ? v->u.ts[k] : v->u.t;
            if (!t || !tj_aten_refuses_overlap(self, t)) continue;
            char what[32];
            if (list) snprintf(what, sizeof what, "%s[%d]", rule->name[j], k);
            else snprintf(what, sizeof what, "%s", rule->name[j]);
            return overlap_error(opr->name, what, t, self);
        }
    }
    return TJ_OK;
}

/* Refuses self with overlapping elements (unless the operator only writes a
 * constant: fill_, zero_), and tensor operands among args[1..ntensors) that
 * overlap self without being self exactly (other arguments are skipped);
 * the indexed writers (rule: their row of aten_overlap_rules, else NULL)
 * check their operands as ATen. */
static tj_status check_overlap(const tj_op *opr, const aten_overlap_rule *rule, const tj_value *args, int ntensors,
                               bool writes_constant)
{
    const char *op = opr->name;
    const tj_tensor *self = args[0].u.t;
    if (self->numel != 0 && !writes_constant && (!rule || rule->self_checked) && tj_may_self_overlap(self))
        return tj_error(TJ_ERR_UNSUPPORTED,
                        "%s: unsupported operation: more than one element of the written-to tensor (self) refers "
                        "to a single memory location; clone() it first", op);
    if (rule) return check_overlap_as_aten(opr, rule, args);
    if (self->numel == 0) return TJ_OK;
    for (int i = 1; i < ntensors; i++) {
        if (args[i].kind != TJ_V_TENSOR || read_before_writing(opr, i)) continue;
        const tj_tensor *t = args[i].u.t;
        if (tj_overlap_status(self, t) == TJ_OVERLAP_NONE || same_elements(self, t)) continue;
        return tj_error(TJ_ERR_UNSUPPORTED,
                        "%s: unsupported operation: some elements of argument %d and of the written-to tensor "
                        "(self) refer to a single memory location; clone() it first", op, i);
    }
    return TJ_OK;
}

/* A result of dtype `result` fits self unless it is of a higher kind (float
 * into int64, int64 into bool): PyTorch's canCast. */
static tj_status check_result_dtype(const char *op, tj_dtype result, tj_dtype self)
{
    if (tj_dtype_category(result) <= tj_dtype_category(self)) return TJ_OK;
    return tj_error(TJ_ERR_DTYPE, "%s: result type %s can't be cast to the desired output type %s", op,
                    tj_dtype_name(result), tj_dtype_name(self));
}

/* PyTorch checks that the result dtype fits self (TensorIterator, in the
 * meta function) before it converts the Scalar arguments (in the kernel),
 * so clamp_(int64 self, 1e300) is the dtype error, not an overflow. The
 * out-of-place shape functions check their Scalars on the way: after one
 * failed with `st`, this runs it again with each Scalar argument a zero of
 * the same kind (the kind alone decides the result dtype). A result self
 * cannot hold then gives the dtype error; otherwise st and its message
 * stand. */
static tj_status dtype_error_first(const tj_op *op, tj_meta_fn oop, const tj_value *args, tj_status st)
{
    tj_value zeroed[TJ_MAX_ARGS];
    bool any = false;
    for (int i = 0; i < op->nargs; i++) {
        bool number = op->args[i].type == TJ_A_SCALAR && (args[i].kind == TJ_V_FLOAT || args[i].kind == TJ_V_INT);
        zeroed[i] = !number ? args[i] : args[i].kind == TJ_V_FLOAT ? tj_v_float(0) : tj_v_int(0);
        any |= number;
    }
    if (!any) return st;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", tj_last_error());
    tj_meta m;
    if (meta_oop(oop, zeroed, &m) == TJ_OK && check_result_dtype(op->name, m.dtype, args[0].u.t->dtype) != TJ_OK)
        return TJ_ERR_DTYPE;
    return tj_error(st, "%s", msg);
}

static tj_status meta_inplace(const tj_op *op, const char *functional, tj_meta_fn oop, int ntensors,
                              bool writes_constant, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    const aten_overlap_rule *rule = overlap_as_aten(op);
    int dim;
    bool early = rule && rule->before_arguments && tj_wrap_dim(op->name, args[1].u.i, self->ndim, &dim) == TJ_OK;
    tj_status st = early ? check_overlap(op, rule, args, ntensors, writes_constant) : TJ_OK;
    if (st != TJ_OK) return st;
    tj_meta m;
    st = meta_oop(oop, args, &m);
    if (st != TJ_OK) return dtype_error_first(op, oop, args, renamed_error(op->name, functional, st));
    char a[SHAPE_BUF], b[SHAPE_BUF];
    if (!same_shape(m.ndim, m.shape, self))
        return tj_error(TJ_ERR_SHAPE, "%s: output with shape %s doesn't match the broadcast shape %s", op->name,
                        tj_shape_str(self->ndim, self->shape, a, sizeof a), tj_shape_str(m.ndim, m.shape, b, sizeof b));
    st = check_result_dtype(op->name, m.dtype, self->dtype);
    if (st == TJ_OK && !early) st = check_overlap(op, rule, args, ntensors, writes_constant);
    if (st != TJ_OK) return st;
    tj_meta *o = &outs[0];
    o->dtype = self->dtype;
    o->ndim = self->ndim;
    memcpy(o->shape, self->shape, sizeof o->shape);
    memcpy(o->strides, self->strides, sizeof o->strides);
    o->offset = self->offset;
    o->alias = 0;
    o->same = true;
    return TJ_OK;
}

/* A kernel fails only on data (index_put's index out of range): its message
 * names the in-place operator the user called. */
static tj_status kernel_inplace(const tj_op *op, const char *functional, tj_meta_fn oop_meta,
                                tj_kernel_fn oop_kernel, const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *self = outs[0];
    tj_meta m;
    meta_oop(oop_meta, args, &m); /* validated by meta_inplace */
    tj_status st;
    if (m.dtype == self->dtype) {
        st = oop_kernel(args, outs);
    } else {
        tj_tensor *tmp = tj_tensor_new_meta(&m, false);
        if (!tmp) return tj_last_status();
        st = oop_kernel(args, &tmp);
        if (st == TJ_OK) tj_copy_convert(self, tmp);
        tj_tensor_release(tmp);
    }
    return st == TJ_OK ? st : renamed_error(op->name, functional, st);
}

tj_status tj_inplace_meta(const tj_op *op, const tj_op *functional, const tj_value *args, tj_meta *outs)
{
    return meta_inplace(op, functional->name, functional->meta, op->nargs, false, args, outs);
}

tj_status tj_inplace_kernel(const tj_op *op, const tj_op *functional, const tj_value *args, tj_tensor *const *outs)
{
    return kernel_inplace(op, functional->name, functional->meta, functional->kernel, args, outs);
}

/* ntensors: how many leading arguments are tensors (self first);
 * writes_constant: the result does not depend on self's elements. */
#define INPLACE_OP(ident, oop, ntensors, writes_constant)                                               \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs)                                     \
    {                                                                                                  \
        return meta_inplace(TJ_OPS(ident), NULL, tj_meta_##oop, ntensors, writes_constant, args, outs); \
    }                                                                                                  \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs)                          \
    {                                                                                                  \
        return kernel_inplace(TJ_OPS(ident), NULL, tj_meta_##oop, tj_kernel_##oop, args, outs);       \
    }

INPLACE_OP(copy_, copy_oop, 2, false)
INPLACE_OP(zero_, zero, 1, true)
INPLACE_OP(fill__Scalar, fill_Scalar, 1, true)
INPLACE_OP(fill__Tensor, fill_Tensor, 1, true)
/* overlap checked as ATen does (check_overlap_as_aten); values that overlap
 * self are copied by index_put's kernel itself */
INPLACE_OP(index_put_, index_put, 1, false)

/* ---- addcmul / addcdiv: self + value * tensor1 (* or /) tensor2 ---- */

static tj_status meta_addc(const char *op, bool is_div, const tj_value *args, tj_meta *out)
{
    tj_dtype dt = tj_result_type(args, 3), d1 = args[1].u.t->dtype, d2 = args[2].u.t->dtype;
    /* ATen looks at the divided tensors alone: a float self does not make
     * int64 / int64 a true division */
    if (is_div && !tj_dtype_is_float(d1) && !tj_dtype_is_float(d2))
        return tj_error(TJ_ERR_DTYPE, "%s: integer division with addcdiv is not supported (tensor1 %s, tensor2 %s)", op,
                        tj_dtype_name(d1), tj_dtype_name(d2));
    if (dt == TJ_BOOL) return tj_error(TJ_ERR_DTYPE, "%s: not supported for bool operands", op);
    if (dt == TJ_INT64 && args[3].kind == TJ_V_FLOAT)
        return tj_error(TJ_ERR_DTYPE, "%s: for integral input tensors, value %g must not be a floating point number",
                        op, args[3].u.f);
    tj_status st = tj_scalar_check(op, "value", &args[3], dt);
    if (st != TJ_OK) return st;
    const tj_tensor *ts[3] = {args[0].u.t, args[1].u.t, args[2].u.t};
    return tj_ew_meta_broadcast(op, ts, 3, dt, out);
}

static tj_status kernel_addc(const tj_value *args, tj_tensor *const *outs, tj_loop_fn loop)
{
    tj_dtype dt = outs[0]->dtype;
    tj_k_pointwise3_args k = {.dtype = dt, .value = tj_ew_scalar(&args[3], dt)};
    tj_tensor *in[3] = {args[0].u.t, args[1].u.t, args[2].u.t};
    tj_elementwise(outs[0], in, 3, dt, loop, &k);
    return TJ_OK;
}

tj_status tj_meta_addcmul(const tj_value *args, tj_meta *outs) { return meta_addc("aten::addcmul", false, args, outs); }
tj_status tj_kernel_addcmul(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_addc(args, outs, tj_k_addcmul_loop);
}
tj_status tj_meta_addcdiv(const tj_value *args, tj_meta *outs) { return meta_addc("aten::addcdiv", true, args, outs); }
tj_status tj_kernel_addcdiv(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_addc(args, outs, tj_k_addcdiv_loop);
}

/* ---- lerp: self + weight * (end - self), weight a Scalar (lerp.Scalar) or
 * a tensor broadcasting with self and end (lerp.Tensor); every tensor of
 * self's dtype, float only ---- */

static tj_status meta_lerp(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *end = args[1].u.t, *weight = tj_opt_tensor(&args[2]);
    const tj_tensor *ts[3] = {self, end, weight};
    for (int i = 1; i <= 2; i++)
        if (ts[i] && ts[i]->dtype != self->dtype)
            return tj_error(TJ_ERR_DTYPE, "%s: expected dtype %s for `%s` but got dtype %s", op,
                            tj_dtype_name(self->dtype), i == 1 ? "end" : "weight", tj_dtype_name(ts[i]->dtype));
    tj_status st = tj_ew_require_float(op, self->dtype);
    if (st == TJ_OK && !weight) st = tj_scalar_check(op, "weight", &args[2], self->dtype);
    return st != TJ_OK ? st : tj_ew_meta_broadcast(op, ts, 3, self->dtype, outs);
}

static tj_status kernel_lerp(const tj_value *args, tj_tensor *const *outs)
{
    tj_dtype dt = outs[0]->dtype;
    tj_tensor *in[3] = {args[0].u.t, args[1].u.t, tj_opt_tensor(&args[2])};
    tj_k_pointwise3_args k = {.dtype = dt};
    if (in[2]) {
        tj_elementwise(outs[0], in, 3, dt, tj_k_lerp_tensor_loop, &k);
    } else {
        k.value = tj_ew_scalar(&args[2], dt);
        tj_elementwise(outs[0], in, 2, dt, tj_k_lerp_loop, &k);
    }
    return TJ_OK;
}

tj_status tj_meta_lerp_Scalar(const tj_value *args, tj_meta *outs) { return meta_lerp("aten::lerp.Scalar", args, outs); }
tj_status tj_kernel_lerp_Scalar(const tj_value *args, tj_tensor *const *outs) { return kernel_lerp(args, outs); }
tj_status tj_meta_lerp_Tensor(const tj_value *args, tj_meta *outs) { return meta_lerp("aten::lerp.Tensor", args, outs); }
tj_status tj_kernel_lerp_Tensor(const tj_value *args, tj_tensor *const *outs) { return kernel_lerp(args, outs); }

/* ---- copy, zero, fill: results of self's dtype and shape ---- */

static void meta_like(const tj_tensor *self, tj_meta *out)
{
    out->dtype = self->dtype;
    out->ndim = self->ndim;
    memcpy(out->shape, self->shape, sizeof out->shape);
}

/* src must broadcast to self's shape (without changing it). */
static tj_status check_broadcasts_to(const char *op, const tj_tensor *src, const tj_tensor *self)
{
    int nd;
    int64_t shape[TJ_MAX_DIMS];
    char a[SHAPE_BUF], b[SHAPE_BUF];
    if (tj_broadcast_shapes(op, src->ndim, src->shape, self->ndim, self->shape, &nd, shape) != TJ_OK ||
        !same_shape(nd, shape, self))
        return tj_error(TJ_ERR_SHAPE, "%s: src of shape %s is not broadcastable to self of shape %s", op,
                        tj_shape_str(src->ndim, src->shape, a, sizeof a),
                        tj_shape_str(self->ndim, self->shape, b, sizeof b));
    return TJ_OK;
}

tj_status tj_meta_copy_oop(const tj_value *args, tj_meta *outs)
{
    tj_status st = check_broadcasts_to("aten::copy", args[1].u.t, args[0].u.t);
    if (st == TJ_OK) meta_like(args[0].u.t, outs);
    return st;
}

tj_status tj_kernel_copy_oop(const tj_value *args, tj_tensor *const *outs)
{
    tj_copy_convert(outs[0], args[1].u.t);
    return TJ_OK;
}

static void fill(tj_tensor *out, const tj_value *value)
{
    if (out->dtype >= TJ_FIRST_STORAGE_DTYPE) { /* no compute loop: a copy of the value broadcast (a fill) */
        _Alignas(8) char v[8];
        static const int64_t broadcast[TJ_MAX_DIMS];
        tj_scalar_to("aten::fill", value, out->dtype, v); /* checked by the shape function */
        tj_k_copy_strided((tj_k_strided){tj_tensor_ptr(out), out->dtype, out->strides},
                          (tj_k_strided){v, out->dtype, broadcast}, out->ndim, out->shape, tj_threads_for(out->numel));
        return;
    }
    tj_k_select_args f = {.dtype = out->dtype, .value = tj_ew_scalar(value, out->dtype)};
    tj_elementwise(out, NULL, 0, out->dtype, tj_k_fill_loop, &f);
}

tj_status tj_meta_zero(const tj_value *args, tj_meta *outs)
{
    meta_like(args[0].u.t, outs);
    return TJ_OK;
}

tj_status tj_kernel_zero(const tj_value *args, tj_tensor *const *outs)
{
    tj_value z = tj_v_int(0);
    fill(outs[0], &z);
    return TJ_OK;
}

tj_status tj_meta_fill_Scalar(const tj_value *args, tj_meta *outs)
{
    tj_status st = tj_scalar_check("aten::fill.Scalar", "value", &args[1], args[0].u.t->dtype);
    if (st == TJ_OK) meta_like(args[0].u.t, outs);
    return st;
}

tj_status tj_kernel_fill_Scalar(const tj_value *args, tj_tensor *const *outs)
{
    fill(outs[0], &args[1]);
    return TJ_OK;
}

/* fill.Tensor: the 0-dim value converted to self's dtype, everywhere (a
 * broadcast copy). */
tj_status tj_meta_fill_Tensor(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *value = args[1].u.t;
    if (value->ndim != 0)
        return tj_error(TJ_ERR_SHAPE, "aten::fill.Tensor: fill_ only supports 0-dimension value tensor but got tensor "
                        "with %d dimensions", value->ndim);
    meta_like(args[0].u.t, outs);
    return TJ_OK;
}

tj_status tj_kernel_fill_Tensor(const tj_value *args, tj_tensor *const *outs)
{
    tj_copy_convert(outs[0], args[1].u.t);
    return TJ_OK;
}

/* ---- slice_scatter, select_scatter, diagonal_scatter: a copy of self
 * with src written into the view (slice, select, diagonal) of it ---- */

typedef enum scatter_kind { SCATTER_SLICE, SCATTER_SELECT, SCATTER_DIAGONAL, SCATTER_AS_STRIDED } scatter_kind;

static const char *const scatter_names[] = {"slice", "select", "diagonal", "as_strided view"};

/* The view's geometry within `base`: the view operator's shape function on
 * base and self's arguments from arg 2 on (slice.Tensor's dim, start, end,
 * step; select's dim, index; diagonal's offset, dim1, dim2, its errors
 * naming op; as_strided's size, stride, offset over base's elements in
 * row-major order, base's first at offset 0, as in a row-major clone). */
static tj_status scatter_view(const char *op, scatter_kind kind, tj_tensor *base, const tj_value *args, tj_meta *m)
{
    tj_value va[5] = {tj_v_tensor(base), args[2], args[3]};
    memset(m, 0, sizeof *m);
    switch (kind) {
    case SCATTER_SELECT: return tj_meta_select(va, m);
    case SCATTER_DIAGONAL: va[3] = args[4]; return tj_diagonal_geometry(op, va, m);
    case SCATTER_AS_STRIDED: {
        tj_status st = tj_as_strided_geometry(op ? op : "aten::as_strided_scatter", base, base->numel, args + 2, 0, m);
        m->offset += base->offset;
        return st;
    }
    default:
        va[3] = args[4];
        va[4] = args[5];
        return tj_meta_slice(va, m);
    }
}

static tj_status meta_scatter(const char *op, scatter_kind kind, const tj_value *args, tj_meta *outs)
{
    tj_tensor *self = args[0].u.t, *src = args[1].u.t;
    tj_meta m;
    tj_status st = scatter_view(op, kind, self, args, &m);
    if (st != TJ_OK) return st;
    char a[SHAPE_BUF], b[SHAPE_BUF];
    if (!same_shape(m.ndim, m.shape, src))
        return tj_error(TJ_ERR_SHAPE,
                        "%s: expected src to have a size equal to the %s of self: src size %s, %s size %s",
                        op, scatter_names[kind], tj_shape_str(src->ndim, src->shape, a, sizeof a), scatter_names[kind],
                        tj_shape_str(m.ndim, m.shape, b, sizeof b));
    meta_like(self, outs);
    return TJ_OK;
}

/* The elements [*lo, *hi) along *dim that the view of slice_scatter
 * (step 1) or select_scatter covers, whole in every other dim: false for
 * other views. */
static bool view_band(scatter_kind kind, const tj_tensor *self, const tj_value *args, int *dim, int64_t *lo,
                      int64_t *hi)
{
    if ((kind != SCATTER_SLICE || args[5].u.i != 1) && kind != SCATTER_SELECT) return false;
    tj_wrap_dim(NULL, args[2].u.i, self->ndim, dim); /* checked by the shape function */
    int64_t size = self->shape[*dim];
    if (kind == SCATTER_SLICE) {
        tj_slice_range(size, &args[3], &args[4], lo, hi);
        return true;
    }
    *lo = args[3].u.i < 0 ? args[3].u.i + size : args[3].u.i;
    *hi = *lo + 1;
    return true;
}

/* Elements a band's blocks (its width times the dims after it) hold at
 * least for the band copy to pay: two bands of two columns of [64, 16, 18,
 * 18] (a slice of the last dim) copied in runs of 2 took 85 us, all of
 * self in one run and the slice over it 55 us; bands of two rows of [64,
 * 16, 18, 14] (runs of 28) 30 us against 42 us. */
#define BAND_MIN_BLOCK 16

static bool bands_pay(const tj_tensor *self, int dim, int64_t lo, int64_t hi)
{
    int64_t inner = 1, size = self->shape[dim];
    for (int d = dim + 1; d < self->ndim; d++) inner *= self->shape[d];
    return (lo == 0 || lo * inner >= BAND_MIN_BLOCK) && (hi == size || (size - hi) * inner >= BAND_MIN_BLOCK);
}

/* out[lo:hi] = self[lo:hi] along dim. */
static tj_status copy_band(tj_tensor *out, tj_tensor *self, int dim, int64_t lo, int64_t hi)
{
    if (lo == hi) return TJ_OK;
    int64_t shape[TJ_MAX_DIMS];
    memcpy(shape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
    shape[dim] = hi - lo;
    tj_tensor *o = tj_tensor_new_view(out, out->ndim, shape, out->strides, out->offset + lo * out->strides[dim]);
    tj_tensor *s = o ? tj_tensor_new_view(self, self->ndim, shape, self->strides,
                                          self->offset + lo * self->strides[dim])
                     : NULL;
    if (s) tj_copy_tensor(o, s);
    if (o) tj_tensor_release(o);
    if (s) tj_tensor_release(s);
    return s ? TJ_OK : tj_last_status();
}

/* out = self, then src copied into out's view. A slice (step 1) or select
 * view is a band along one dim: only self's elements outside it are copied
 * (the band is written once, from src; the padding of a decomposed
 * convolution, a slice_scatter into a tensor of zeros, then reads and
 * writes the border only), when the bands' blocks are long enough. */
static tj_status kernel_scatter(scatter_kind kind, const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *out = outs[0], *self = args[0].u.t;
    tj_meta m;
    int dim;
    int64_t lo, hi;
    if (view_band(kind, self, args, &dim, &lo, &hi) && bands_pay(self, dim, lo, hi)) {
        tj_status st = copy_band(out, self, dim, 0, lo);
        if (st == TJ_OK) st = copy_band(out, self, dim, hi, self->shape[dim]);
        if (st != TJ_OK) return st;
    } else {
        tj_copy_tensor(out, self);
    }
    scatter_view(NULL, kind, out, args, &m); /* checked by the shape function */
    tj_tensor *view = tj_tensor_new_view(out, m.ndim, m.shape, m.strides, m.offset);
    if (!view) return tj_last_status();
    tj_copy_tensor(view, args[1].u.t);
    tj_tensor_release(view);
    return TJ_OK;
}

tj_status tj_meta_slice_scatter(const tj_value *args, tj_meta *outs)
{
    return meta_scatter("aten::slice_scatter", SCATTER_SLICE, args, outs);
}
tj_status tj_kernel_slice_scatter(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_scatter(SCATTER_SLICE, args, outs);
}
tj_status tj_meta_select_scatter(const tj_value *args, tj_meta *outs)
{
    return meta_scatter("aten::select_scatter", SCATTER_SELECT, args, outs);
}
tj_status tj_kernel_select_scatter(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_scatter(SCATTER_SELECT, args, outs);
}
tj_status tj_meta_as_strided_scatter(const tj_value *args, tj_meta *outs)
{
    return meta_scatter("aten::as_strided_scatter", SCATTER_AS_STRIDED, args, outs);
}
bool tj_storage_order(const tj_tensor *t, int *perm)
{
    int n = 0;
    for (int d = 0; d < t->ndim; d++) /* size-1 dims outermost: never stepped over */
        if (t->shape[d] == 1) perm[n++] = d;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] == 1) continue;
        int k = n++;
        for (; k > 0 && t->shape[perm[k - 1]] != 1 && t->strides[perm[k - 1]] < t->strides[d]; k--)
            perm[k] = perm[k - 1];
        perm[k] = d;
    }
    int64_t expected = 1;
    for (int k = t->ndim - 1; k >= 0; k--) {
        int d = perm[k];
        if (t->shape[d] == 1) continue;
        if (t->strides[d] != expected) break;
        expected *= t->shape[d];
    }
    if (t->numel > 0 && expected == t->numel) return true;
    for (int d = 0; d < t->ndim; d++) perm[d] = d;
    return false;
}

/* The geometry addresses the storage of PyTorch's self.clone(), which
 * keeps a dense self's strides: for one not row-major (transposed), it is
 * written into a block laid out as self, copied into out (row-major). */
tj_status tj_kernel_as_strided_scatter(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *self = args[0].u.t;
    int perm[TJ_MAX_DIMS];
    if (!tj_storage_order(self, perm) || tj_tensor_is_contiguous(self))
        return kernel_scatter(SCATTER_AS_STRIDED, args, outs);
    tj_meta bm = {.dtype = self->dtype, .ndim = self->ndim, .alias = -1};
    for (int k = 0; k < self->ndim; k++) bm.shape[k] = self->shape[perm[k]];
    tj_tensor *block = tj_tensor_new_meta(&bm, false);
    if (!block) return tj_last_status();
    int64_t strides[TJ_MAX_DIMS];
    for (int k = 0; k < self->ndim; k++) strides[perm[k]] = block->strides[k];
    tj_meta m;
    scatter_view(NULL, SCATTER_AS_STRIDED, block, args, &m); /* checked by the shape function */
    tj_tensor *lay = tj_tensor_new_view(block, self->ndim, self->shape, strides, 0);
    tj_tensor *view = lay ? tj_tensor_new_view(block, m.ndim, m.shape, m.strides, m.offset) : NULL;
    tj_status st = view ? TJ_OK : tj_last_status();
    if (view) {
        tj_copy_tensor(lay, self);
        tj_copy_tensor(view, args[1].u.t);
        tj_copy_tensor(outs[0], lay);
    }
    tj_tensor_release(view);
    tj_tensor_release(lay);
    tj_tensor_release(block);
    return st;
}
tj_status tj_meta_diagonal_scatter(const tj_value *args, tj_meta *outs)
{
    return meta_scatter("aten::diagonal_scatter", SCATTER_DIAGONAL, args, outs);
}
tj_status tj_kernel_diagonal_scatter(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_scatter(SCATTER_DIAGONAL, args, outs);
}

/* ---- diagonal_backward, select_backward, slice_backward: zeros of
 * input_sizes with grad_output written into the view (derivatives.yaml's
 * gradients of the views; torch._decomp's new_zeros + *_scatter) ---- */

/* The geometry of a contiguous tensor of input_sizes (args[1]) and
 * grad_output's dtype, in *like (only what shape functions read),
 * checked; errors name op. */
static tj_status view_backward_like(const char *op, const tj_value *args, tj_tensor *like)
{
    const int64_t *sizes = args[1].u.ints;
    int n = args[1].n;
    char b[SHAPE_BUF];
    if (n > TJ_MAX_DIMS)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: input_sizes %s has more than %d dims", op,
                        tj_shape_str(n, sizes, b, sizeof b), TJ_MAX_DIMS);
    for (int d = 0; d < n; d++)
        if (sizes[d] < 0)
            return tj_error(TJ_ERR_SHAPE, "%s: input_sizes %s has a negative size", op,
                            tj_shape_str(n, sizes, b, sizeof b));
    memset(like, 0, sizeof *like);
    if (tj_checked_numel(n, sizes, &like->numel, op) != TJ_OK) return tj_last_status();
    like->dtype = args[0].u.t->dtype;
    like->ndim = n;
    memcpy(like->shape, sizes, sizeof(int64_t) * (size_t)n);
    tj_contiguous_strides(n, sizes, like->strides);
    return TJ_OK;
}

/* The shape function: the scatter's on (zeros of input_sizes, grad_output,
 * the view's arguments args[2 .. nargs - 1]). */
static tj_status meta_view_backward(const char *op, scatter_kind kind, const tj_value *args, int nargs,
                                    tj_meta *outs)
{
    tj_tensor like;
    if (view_backward_like(op, args, &like) != TJ_OK) return tj_last_status();
    tj_value sa[6] = {tj_v_tensor(&like), args[0]};
    for (int k = 2; k < nargs; k++) sa[k] = args[k];
    return meta_scatter(op, kind, sa, outs);
}

/* out (contiguous) zeroed, then src copied into its view; va: the view's
 * arguments as a scatter's from va[2] on (va[0], va[1] unread). */
static tj_status zeros_with_view(scatter_kind kind, tj_tensor *out, const tj_tensor *src, const tj_value *va)
{
    static const char zero[8];
    tj_k_fill(tj_tensor_ptr(out), tj_dtype_size(out->dtype), zero, out->numel, tj_threads_for(out->numel));
    tj_meta m;
    scatter_view(NULL, kind, out, va, &m); /* checked by the caller's shape function */
    tj_tensor *view = tj_tensor_new_view(out, m.ndim, m.shape, m.strides, m.offset);
    if (!view) return tj_last_status();
    tj_copy_tensor(view, src);
    tj_tensor_release(view);
    return TJ_OK;
}

tj_status tj_zeros_with_diagonal(tj_tensor *out, const tj_tensor *src, int64_t offset, int64_t dim1, int64_t dim2)
{
    tj_value va[5] = {tj_v_none(), tj_v_none(), tj_v_int(offset), tj_v_int(dim1), tj_v_int(dim2)};
    return zeros_with_view(SCATTER_DIAGONAL, out, src, va);
}

tj_status tj_meta_diagonal_backward(const tj_value *args, tj_meta *outs)
{
    return meta_view_backward("aten::diagonal_backward", SCATTER_DIAGONAL, args, 5, outs);
}
tj_status tj_kernel_diagonal_backward(const tj_value *args, tj_tensor *const *outs)
{
    return tj_zeros_with_diagonal(outs[0], args[0].u.t, args[2].u.i, args[3].u.i, args[4].u.i);
}
tj_status tj_meta_select_backward(const tj_value *args, tj_meta *outs)
{
    return meta_view_backward("aten::select_backward", SCATTER_SELECT, args, 4, outs);
}
tj_status tj_kernel_select_backward(const tj_value *args, tj_tensor *const *outs)
{
    return zeros_with_view(SCATTER_SELECT, outs[0], args[0].u.t, args);
}
tj_status tj_meta_slice_backward(const tj_value *args, tj_meta *outs)
{
    return meta_view_backward("aten::slice_backward", SCATTER_SLICE, args, 6, outs);
}
tj_status tj_kernel_slice_backward(const tj_value *args, tj_tensor *const *outs)
{
    return zeros_with_view(SCATTER_SLICE, outs[0], args[0].u.t, args);
}
