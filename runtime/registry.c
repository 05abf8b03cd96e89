/* The operator registry: the built-in table (ops_table.def), parsed once at
 * load time, then the operators users register at run time
 * (runtime/library.c). Each schema is parsed (runtime/schema.c) into argument
 * descriptors (type, optional, keyword-only, default) that the dispatcher
 * uses to check and complete calls.
 *
 * Threads: user operators live in a fixed array of pointers that never moves;
 * one is stored before the count that publishes it (release / acquire), so
 * tj_op_count, tj_op_at and tj_op_find take no lock. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "op_kernels.h"

struct tj_op tj_builtin_ops[TJ_OPI_COUNT + 1] = {
#define TJ_OP(ident, schema, kind, kernel, meta) {schema, TJ_OP_##kind, kernel, meta},
#include "ops_table.def"
#undef TJ_OP
};

/* Operators from tj_op_register, after the built-in ones. */
static struct tj_op *user_ops[TJ_MAX_USER_OPS];
static atomic_int n_user_ops;
static pthread_mutex_t registry_mutex = PTHREAD_MUTEX_INITIALIZER;

void tj_registry_lock(void) { pthread_mutex_lock(&registry_mutex); }
void tj_registry_unlock(void) { pthread_mutex_unlock(&registry_mutex); }

/* dropout (implicit: a call runs native_dropout's draw) counts too, as in
 * torch.fx's CSE list of random operators: tj_pass_cse merged two dropouts
 * of one input into one mask. */
static bool is_random(const char *base)
{
    static const char *const names[] = {
        "rand", "randn", "rand_like", "randn_like", "bernoulli", "bernoulli_", "native_dropout", "dropout",
        "randint", "randint_like", "randperm", "multinomial", "uniform", "uniform_", "normal", "normal_",
        "normal_functional", "exponential", "exponential_"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(base, names[i]) == 0) return true;
    return false;
}

/* The operators computed element by element in one pass (tj_op.elementwise;
 * every overload of each base name): their kernels go through tj_elementwise,
 * which allows the output to alias an input exactly. The replay's in-place
 * reuse reads it (tracer/memory_plan.c), and the storage dtypes' result
 * types (runtime/widen.c). */
static bool is_elementwise(const char *base)
{
    static const char *const names[] = {
        "abs", "neg", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "reciprocal", "sin", "cos",
        "log1p", "expm1", "relu", "silu", "gelu", "add", "sub", "rsub", "mul", "div", "pow", "square",
        "maximum", "minimum", "clamp", "clamp_min", "clamp_max", "hardtanh", "masked_fill", "where",
        "logaddexp", "sign", "leaky_relu", "softplus", "elu", "hardsigmoid", "hardswish",
        "floor", "ceil", "round", "trunc", "frac", "remainder", "fmod", "nan_to_num",
        "atan2", "asin", "acos", "atan", "sinh", "cosh", "log2", "log10", "exp2",
        "eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and", "logical_or", "logical_xor",
        "isnan", "isinf", "addcmul", "addcdiv", "lerp",
        "threshold_backward", "gelu_backward", "sigmoid_backward", "tanh_backward", "leaky_relu_backward",
        "softplus_backward", "elu_backward", "hardtanh_backward", "hardsigmoid_backward", "hardswish_backward",
        /* not through tj_elementwise, but element by element at the same
         * positions: kept elements are left where they are when the result is
         * the input (kernels/trilu.c), the others zeroed */
        "tril", "triu",
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(base, names[i]) == 0) return true;
    return false;
}

/* The operators that take the storage dtypes (tjit/core.h): views, copies,
 * concatenations, creation and fills move or convert data without
 * arithmetic; their kernels and shape functions work on any element size. */
static bool takes_any_dtype(const char *name)
{
    static const char *const names[] = {
        "view", "_unsafe_view", "permute", "transpose.int", "t", "detach", "expand", "unsqueeze", "squeeze.dim",
        "squeeze", "as_strided_", "unsqueeze_", "squeeze_.dim", "squeeze_", "transpose_", "t_", "select.int",
        "slice.Tensor", "diagonal", "as_strided", "unfold", "cat", "stack", "flip", "constant_pad_nd", "clone", "_to_copy",
        "copy_", "copy", "empty.memory_format", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full",
        "full_like", "new_zeros", "new_ones", "new_full", "new_empty", "scalar_tensor", "zero_", "zero",
        "fill_.Scalar", "fill.Scalar", "fill_.Tensor", "fill.Tensor"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0) return true;
    return false;
}

__attribute__((constructor)) static void registry_init(void)
{
    for (int i = 0; i < TJ_OPI_COUNT; i++) {
        struct tj_op *op = &tj_builtin_ops[i];
        op->index = i;
        if (tj_schema_parse(op, op->schema_src, "aten", "operator table") != TJ_OK) {
            /* a malformed built-in schema is our bug, found by the first test run */
            fprintf(stderr, "tjit: %s\n", tj_last_error());
            abort();
        }
        op->is_random = is_random(op->base);
        op->any_dtype = takes_any_dtype(op->name + strlen(op->ns) + 2);
        op->elementwise = is_elementwise(op->base);
        op->widen_class = (unsigned char)tj_widen_classify(op);
    }
    tj_register_builtin_decompositions();
}

int tj_op_count(void) { return TJ_OPI_COUNT + atomic_load_explicit(&n_user_ops, memory_order_acquire); }

const tj_op *tj_op_at(int i)
{
    if (i < 0 || i >= tj_op_count()) return NULL;
    return i < TJ_OPI_COUNT ? &tj_builtin_ops[i] : user_ops[i - TJ_OPI_COUNT];
}

static bool copy_part(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap) return false;
    memcpy(dst, s, n);
    dst[n] = 0;
    return true;
}

bool tj_op_name_split(const char *name, tj_op_name_parts *out)
{
    memset(out, 0, sizeof *out);
    const char *n = name, *sep = strstr(name, "::");
    const char *dot = strchr(name, '.'), *dot2 = dot ? strchr(dot + 1, '.') : NULL;
    if (sep) { /* mylib::scaled_add.default */
        if (!copy_part(out->ns, sizeof out->ns, name, (size_t)(sep - name))) return false;
        n = sep + 2;
    } else if (dot2 || strncmp(name, "aten.", 5) == 0) { /* FX targets: mylib.scaled_add.default, aten.abs */
        if (!copy_part(out->ns, sizeof out->ns, name, (size_t)(dot - name))) return false;
        n = dot + 1;
    } else {
        strcpy(out->ns, "aten");
    }
    const char *ov = strchr(n, '.');
    /* "aten::relu." names no overload: torch spells the default one
     * "relu" or "relu.default" and refuses an empty name after the dot. */
    if (ov && ov[1] == 0) return false;
    if (!copy_part(out->base, sizeof out->base, n, ov ? (size_t)(ov - n) : strlen(n))) return false;
    out->has_overload = ov != NULL;
    if (ov && strcmp(ov + 1, "default") != 0)
        return copy_part(out->overload, sizeof out->overload, ov + 1, strlen(ov + 1));
    return true;
}

/* The operator named by parts, or NULL. */
static const tj_op *find_parts(const tj_op_name_parts *p)
{
    int n = tj_op_count();
    for (int i = 0; i < n; i++) {
        const tj_op *op = tj_op_at(i);
        if (strcmp(op->base, p->base) == 0 && strcmp(op->overload, p->overload) == 0 && strcmp(op->ns, p->ns) == 0)
            return op;
    }
    return NULL;
}

const tj_op *tj_op_find(const char *name)
{
    if (!name) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_op_find: NULL name");
        return NULL;
    }
    tj_op_name_parts parts;
    const tj_op *op = tj_op_name_split(name, &parts) ? find_parts(&parts) : NULL;
    if (!op) tj_error(TJ_ERR_NOT_FOUND, "unknown operator '%s'", name);
    return op;
}

tj_status tj_registry_add(struct tj_op *op, const char *who)
{
    tj_op_name_parts parts;
    memcpy(parts.ns, op->ns, sizeof parts.ns);
    memcpy(parts.base, op->base, sizeof parts.base);
    memcpy(parts.overload, op->overload, sizeof parts.overload);
    tj_status st = TJ_OK;
    tj_registry_lock();
    int n = atomic_load_explicit(&n_user_ops, memory_order_relaxed);
    if (find_parts(&parts))
        st = tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: \"%s\": %s is already registered", who, op->schema, op->name);
    else if (n == TJ_MAX_USER_OPS)
        st = tj_error(TJ_ERR_OVERFLOW, "%s: \"%s\": the registry is full (%d user operators)", who, op->schema,
                      TJ_MAX_USER_OPS);
    if (st == TJ_OK) {
        op->index = TJ_OPI_COUNT + n;
        user_ops[n] = op;
        atomic_store_explicit(&n_user_ops, n + 1, memory_order_release);
    }
    tj_registry_unlock();
    return st;
}

const char *tj_op_name(const tj_op *op) { return op ? op->name : ""; }
const char *tj_op_namespace(const tj_op *op) { return op ? op->ns : ""; }
const char *tj_op_base_name(const tj_op *op) { return op ? op->base : ""; }
const char *tj_op_overload(const tj_op *op) { return op ? op->overload : ""; }
const char *tj_op_schema(const tj_op *op) { return op ? op->schema : ""; }
tj_op_kind tj_op_kind_of(const tj_op *op) { return op ? op->kind : TJ_OP_PRIMITIVE; }
int tj_op_num_args(const tj_op *op) { return op ? op->nargs : 0; }
int tj_op_num_returns(const tj_op *op) { return op ? op->nreturns : 0; }
bool tj_op_is_view(const tj_op *op) { return op && op->is_view; }
bool tj_op_is_inplace(const tj_op *op) { return op && op->is_inplace; }
bool tj_op_is_random(const tj_op *op) { return op && op->is_random; }

const char *tj_op_kind_name(tj_op_kind kind)
{
    switch (kind) {
    case TJ_OP_PRIMITIVE: return "primitive";
    case TJ_OP_COMPOSITE: return "composite";
    case TJ_OP_IMPLICIT: return "implicit";
    }
    return "?";
}

void tj_op_set_decomposition(const tj_op *op, tj_decomp_fn fn, const char *fn_name)
{
    struct tj_op *o = (struct tj_op *)op;
    o->decomp = fn;
    o->decomp_name = fn_name;
}
