/* Elementwise operators as their kernel's loop (op_pointwise.h): the
 * one-loop operators of op_elementwise_list.h, gelu, pow.Tensor_Scalar,
 * where and the copies. Each case builds the context exactly as the
 * operator's kernel in op_elementwise.c does (kernel_unary, kernel_binary,
 * kernel_add_sub and kernel_compare through the same helpers of
 * op_elementwise_util.h, kernel_where, tj_kernel_pow_Tensor_Scalar) and
 * op_view.c's tj_kernel_copy (a conversion of contiguous data is
 * tj_k_convert, element by element);
 * tests/test_fuse_pointwise.c checks the fused results against the kernels
 * bit for bit. Keyed by the operator's kernel, so that an operator bound to
 * another kernel is never described with these loops. */
#include <string.h>

#include "kernels/copy.h"
#include "op_elementwise.h"
#include "op_elementwise_util.h"
#include "op_pointwise.h"
#include "op_view.h"

/* _to_copy / clone of contiguous data: tj_k_convert (tj_k_copy_strided's
 * contiguous case), one element at a time. */
void tj_pointwise_copy_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_dtype *dt = ctx;
    tj_k_convert(out, dt[0], in[0], dt[1], n);
}

typedef enum { F_UNARY, F_BINARY, F_ADD, F_COMPARE } family;

typedef struct entry {
    tj_kernel_fn kernel;
    family fam;
    int kop;     /* tj_k_unary_op, tj_k_binary_op or tj_k_compare_op */
    bool is_sub; /* F_ADD */
    bool swap;   /* F_ADD: rsub */
} entry;

/* Every one-loop operator of op_elementwise_list.h, with its family's loop. */
#define UNARY_ENTRY(ident, kop, rule) {tj_kernel_##ident, F_UNARY, kop, false, false},
#define BINARY_ENTRY(ident, name, kop, rules) {tj_kernel_##ident, F_BINARY, kop, false, false},
#define COMPARE_ENTRY(ident, name, cop) {tj_kernel_##ident, F_COMPARE, cop, false, false},
#define ADD_SUB_ENTRY(ident, name, is_sub, swap) {tj_kernel_##ident, F_ADD, 0, is_sub, swap},
static const entry table[] = {TJ_EW_LOOP_OPS(UNARY_ENTRY, BINARY_ENTRY, COMPARE_ENTRY, ADD_SUB_ENTRY)};
#undef UNARY_ENTRY
#undef BINARY_ENTRY
#undef COMPARE_ENTRY
#undef ADD_SUB_ENTRY

/* Loop input k is argument a (a tensor or a Scalar) in loop dtype dt; a
 * Scalar is converted as the kernels' tj_ew_box converts it. */
static bool operand(tj_pointwise *pw, int k, const tj_value *args, int a, tj_dtype dt)
{
    const tj_value *v = &args[a];
    pw->loop[k] = dt;
    if (v->kind == TJ_V_TENSOR && v->u.t) {
        tj_dtype t = v->u.t->dtype;
        pw->arg[k] = a;
        return tj_dtype_is_float(t) || t == TJ_BOOL;
    }
    if (v->kind != TJ_V_INT && v->kind != TJ_V_FLOAT && v->kind != TJ_V_BOOL) return false;
    pw->arg[k] = -1;
    pw->scalar[k] = tj_ew_scalar(v, dt);
    return true;
}

static bool describe_entry(const entry *e, const tj_value *args, tj_dtype out, tj_pointwise *pw)
{
    switch (e->fam) {
    case F_UNARY: /* kernel_unary: computed in the result dtype */
        pw->fn = tj_k_unary_loop;
        pw->ctx.unary = (tj_k_unary_args){.op = (tj_k_unary_op)e->kop, .dtype = out};
        pw->nin = 1;
        return tj_dtype_is_float(out) && operand(pw, 0, args, 0, out);
    case F_BINARY: /* kernel_binary: result_type, which for a float result is the result's dtype */
        pw->fn = tj_k_binary_loop;
        pw->ctx.binary = (tj_k_binary_args){.op = (tj_k_binary_op)e->kop, .dtype = out};
        pw->nin = 2;
        return tj_dtype_is_float(out) && operand(pw, 0, args, 0, out) && operand(pw, 1, args, 1, out);
    case F_ADD: { /* kernel_add_sub */
        if (!tj_dtype_is_float(out) || (args[2].kind != TJ_V_INT && args[2].kind != TJ_V_FLOAT)) return false;
        pw->fn = tj_k_add_loop;
        tj_ew_axpby_args(&pw->ctx.axpby, &args[2], out, e->is_sub);
        pw->nin = 2;
        return operand(pw, 0, args, e->swap ? 1 : 0, out) && operand(pw, 1, args, e->swap ? 0 : 1, out);
    }
    case F_COMPARE: { /* kernel_compare: computed in result_type(self, other) */
        tj_dtype dt = tj_ew_compare_dtype(args);
        pw->fn = tj_k_compare_loop;
        pw->ctx.compare = (tj_k_compare_args){.op = (tj_k_compare_op)e->kop, .dtype = dt};
        pw->nin = 2;
        return out == TJ_BOOL && tj_dtype_is_float(dt) && operand(pw, 0, args, 0, dt) && operand(pw, 1, args, 1, dt);
    }
    }
    return false;
}

bool tj_pointwise_describe(const tj_op *op, const tj_value *args, tj_dtype out, tj_pointwise *pw)
{
    memset(pw, 0, sizeof *pw);
    if (!tj_op_is_builtin(op) || op->is_inplace || op->nreturns != 1 || !op->kernel) return false;
    tj_kernel_fn k = op->kernel;
    if (k == tj_kernel_gelu) { /* kernel_unary, gelu's approximation */
        if (args[1].kind != TJ_V_STR) return false;
        entry e = {tj_kernel_gelu, F_UNARY, args[1].u.s[0] == 't' ? TJ_K_GELU_TANH : TJ_K_GELU, 0, 0};
        return describe_entry(&e, args, out, pw);
    }
    if (k == tj_kernel_pow_Tensor_Scalar) {
        pw->fn = tj_k_pow_scalar_loop;
        pw->nin = 1;
        if (!tj_dtype_is_float(out) || !operand(pw, 0, args, 0, out)) return false;
        if (args[1].kind != TJ_V_INT && args[1].kind != TJ_V_FLOAT) return false;
        pw->ctx.pow = (tj_k_pow_scalar_args){.dtype = out, .exponent = tj_ew_scalar(&args[1], out)};
        return true;
    }
    if (k == tj_kernel_where_self || k == tj_kernel_where_ScalarOther || k == tj_kernel_where_ScalarSelf ||
        k == tj_kernel_where_Scalar) { /* kernel_where */
        pw->fn = tj_k_where_loop;
        pw->ctx.select = (tj_k_select_args){.dtype = out};
        pw->nin = 3;
        /* bool too: a where of masks (decomposed tanh-gelu backward's), which would otherwise end the chain
           with every value the rest of it reads written out */
        return (tj_dtype_is_float(out) || out == TJ_BOOL) && args[0].kind == TJ_V_TENSOR && args[0].u.t->dtype == TJ_BOOL &&
               operand(pw, 0, args, 0, TJ_BOOL) && operand(pw, 1, args, 1, out) && operand(pw, 2, args, 2, out);
    }
    if (k == tj_kernel_copy && (op == TJ_OPS(_to_copy) || op == TJ_OPS(clone))) {
        tj_dtype from = args[0].kind == TJ_V_TENSOR ? args[0].u.t->dtype : out;
        if (!(tj_dtype_is_float(out) || out == TJ_BOOL) || !(tj_dtype_is_float(from) || from == TJ_BOOL)) return false;
        pw->fn = tj_pointwise_copy_loop;
        pw->ctx.convert[0] = out;
        pw->ctx.convert[1] = from;
        pw->nin = 1;
        return operand(pw, 0, args, 0, from);
    }
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (table[i].kernel == k) return describe_entry(&table[i], args, out, pw);
    return false;
}
