/* The operator registry: built once, at load time, from the declarative table
 * (ops_table.def). Each schema string is parsed into argument descriptors
 * (type, optional, keyword-only, default) that the dispatcher uses to check
 * and complete calls. */
#include <ctype.h>
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

/* User-registered operators, after the built-in ones. */
static struct tj_op **extra_ops;
static int n_extra_ops;

static void schema_fail(const char *schema, const char *why)
{
    /* A malformed built-in schema is our bug, found by the first test run. */
    fprintf(stderr, "tjit: bad operator schema \"%s\": %s\n", schema, why);
    abort();
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ') p++;
    return p;
}

/* Parses a default value for an argument of type `a->type`. */
static int parse_default(tj_arg_spec *a, const char *text, size_t len)
{
    char buf[64];
    if (len >= sizeof buf) return -1;
    memcpy(buf, text, len);
    buf[len] = 0;
    a->has_default = true;
    if (strcmp(buf, "None") == 0) {
        a->def = tj_v_none();
        return 0;
    }
    switch (a->type) {
    case TJ_A_BOOL:
        a->def = tj_v_bool(strcmp(buf, "True") == 0);
        return 0;
    case TJ_A_INT:
        if (strcmp(buf, "Mean") == 0) { a->def = tj_v_int(1); return 0; }
        a->def = tj_v_int(strtoll(buf, NULL, 10));
        return 0;
    case TJ_A_FLOAT:
        a->def = tj_v_float(strtod(buf, NULL));
        return 0;
    case TJ_A_SCALAR:
        if (strpbrk(buf, ".eE")) a->def = tj_v_float(strtod(buf, NULL));
        else a->def = tj_v_int(strtoll(buf, NULL, 10));
        return 0;
    case TJ_A_STR: {
        /* "none" in quotes: keep a static copy of the literal */
        if (len < 2 || buf[0] != '"') return -1;
        a->def = tj_v_str(strcmp(buf, "\"none\"") == 0 ? "none" : strdup(buf + 1));
        if (buf[len - 1] == '"' && strcmp(buf, "\"none\"") != 0) ((char *)a->def.u.s)[len - 2] = 0;
        return 0;
    }
    case TJ_A_INT_LIST: {
        int n = 0;
        if (buf[0] == '[') {
            const char *p = buf + 1;
            while (*p && *p != ']') {
                if (n >= TJ_MAX_DIMS) return -1;
                a->def_ints[n++] = strtoll(p, (char **)&p, 10);
                p = skip_ws(p);
                if (*p == ',') p++;
                p = skip_ws(p);
            }
        } else { /* a single int repeated fixed_len times: int[2] padding=0 */
            int64_t v = strtoll(buf, NULL, 10);
            n = a->fixed_len > 0 ? a->fixed_len : 1;
            for (int i = 0; i < n; i++) a->def_ints[i] = v;
        }
        a->def = tj_v_ints(a->def_ints, n);
        return 0;
    }
    case TJ_A_IGNORED:
        a->def = tj_v_none();
        return 0;
    default:
        return -1;
    }
}

static int parse_type(tj_arg_spec *a, const char *t, size_t len)
{
    char buf[48];
    if (len >= sizeof buf) return -1;
    memcpy(buf, t, len);
    buf[len] = 0;
    /* drop alias annotations: Tensor(a), Tensor(a!), Tensor(a -> *) */
    char *paren = strchr(buf, '(');
    if (paren) {
        char *close = strchr(paren, ')');
        if (!close) return -1;
        memmove(paren, close + 1, strlen(close + 1) + 1);
    }
    size_t l = strlen(buf);
    if (l && buf[l - 1] == '?') {
        a->optional = true;
        buf[--l] = 0;
    }
    int fixed = 0;
    char *br = strchr(buf, '[');
    if (br) {
        fixed = atoi(br + 1);
        *br = 0;
        if (strcmp(buf, "int") == 0 || strcmp(buf, "SymInt") == 0) a->type = TJ_A_INT_LIST;
        else if (strcmp(buf, "bool") == 0) a->type = TJ_A_BOOL_LIST;
        else if (strcmp(buf, "Tensor") == 0) a->type = TJ_A_TENSOR_LIST;
        else return -1;
        a->fixed_len = fixed;
        return 0;
    }
    if (strcmp(buf, "Tensor") == 0) a->type = TJ_A_TENSOR;
    else if (strcmp(buf, "int") == 0 || strcmp(buf, "SymInt") == 0) a->type = TJ_A_INT;
    else if (strcmp(buf, "float") == 0) a->type = TJ_A_FLOAT;
    else if (strcmp(buf, "bool") == 0) a->type = TJ_A_BOOL;
    else if (strcmp(buf, "Scalar") == 0) a->type = TJ_A_SCALAR;
    else if (strcmp(buf, "str") == 0) a->type = TJ_A_STR;
    else if (strcmp(buf, "ScalarType") == 0) a->type = TJ_A_SCALAR_TYPE;
    else if (strcmp(buf, "Layout") == 0 || strcmp(buf, "Device") == 0 ||
             strcmp(buf, "MemoryFormat") == 0 || strcmp(buf, "Generator") == 0)
        a->type = TJ_A_IGNORED;
    else return -1;
    return 0;
}

/* Parses op->schema_src ("name.overload(args) -> returns") into op. */
static void parse_schema(struct tj_op *op)
{
    const char *s = op->schema_src;
    const char *open = strchr(s, '(');
    if (!open) schema_fail(s, "no argument list");
    size_t nlen = (size_t)(open - s);
    const char *dot = memchr(s, '.', nlen);
    size_t blen = dot ? (size_t)(dot - s) : nlen;
    if (blen >= sizeof op->base) schema_fail(s, "name too long");
    memcpy(op->base, s, blen);
    op->base[blen] = 0;
    if (dot) {
        size_t olen = nlen - blen - 1;
        if (olen >= sizeof op->overload) schema_fail(s, "overload too long");
        memcpy(op->overload, dot + 1, olen);
        op->overload[olen] = 0;
    }
    snprintf(op->name, sizeof op->name, "aten::%.*s", (int)nlen, s);
    size_t sl = strlen(s) + 7;
    op->schema = malloc(sl);
    if (!op->schema) schema_fail(s, "out of memory");
    snprintf(op->schema, sl, "aten::%s", s);

    /* arguments: split on commas at nesting depth 0 */
    const char *p = open + 1;
    bool kwonly = false;
    int depth = 0;
    const char *start = p;
    for (;; p++) {
        if (*p == '(' || *p == '[') depth++;
        else if ((*p == ')' || *p == ']') && depth > 0) depth--;
        else if ((*p == ',' || *p == ')') && depth == 0) {
            const char *a = skip_ws(start);
            const char *e = p;
            while (e > a && e[-1] == ' ') e--;
            if (e > a) {
                if (e - a == 1 && *a == '*') {
                    kwonly = true;
                } else {
                    if (op->nargs >= TJ_MAX_ARGS) schema_fail(s, "too many arguments");
                    tj_arg_spec *spec = &op->args[op->nargs++];
                    spec->kwarg_only = kwonly;
                    /* "<type> <name>[=<default>]"; type may contain spaces inside () */
                    const char *q = a;
                    int d = 0;
                    while (q < e && !(*q == ' ' && d == 0)) {
                        if (*q == '(') d++;
                        if (*q == ')') d--;
                        q++;
                    }
                    if (parse_type(spec, a, (size_t)(q - a)) != 0) schema_fail(s, "unknown argument type");
                    q = skip_ws(q);
                    const char *eq = memchr(q, '=', (size_t)(e - q));
                    size_t namelen = (size_t)((eq ? eq : e) - q);
                    spec->name = strndup(q, namelen);
                    if (eq && parse_default(spec, eq + 1, (size_t)(e - eq - 1)) != 0)
                        schema_fail(s, "bad default");
                }
            }
            if (*p == ')') break;
            start = p + 1;
        }
        if (!*p) schema_fail(s, "unterminated argument list");
    }
    /* returns */
    const char *arrow = strstr(p, "->");
    if (!arrow) schema_fail(s, "no returns");
    const char *r = skip_ws(arrow + 2);
    if (*r == '(') {
        int n = 1;
        for (const char *c = r; *c; c++)
            if (*c == ',') n++;
        op->nreturns = n;
    } else {
        op->nreturns = 1;
        op->returns_list = strstr(r, "[]") != NULL;
    }
    if (op->nreturns > TJ_MAX_RETURNS) schema_fail(s, "too many returns");
    op->is_view = strstr(r, "Tensor(a)") != NULL && !op->returns_list && op->kind != TJ_OP_IMPLICIT;
    op->is_inplace = op->base[strlen(op->base) - 1] == '_';
    op->is_random = strcmp(op->base, "rand") == 0 || strcmp(op->base, "randn") == 0 ||
                    strcmp(op->base, "bernoulli") == 0 || strcmp(op->base, "native_dropout") == 0;
}

__attribute__((constructor)) static void registry_init(void)
{
    for (int i = 0; i < TJ_OPI_COUNT; i++) {
        tj_builtin_ops[i].index = i;
        parse_schema(&tj_builtin_ops[i]);
    }
    tj_register_builtin_decompositions();
}

int tj_op_count(void) { return TJ_OPI_COUNT + n_extra_ops; }

const tj_op *tj_op_at(int i)
{
    if (i < 0 || i >= tj_op_count()) return NULL;
    return i < TJ_OPI_COUNT ? &tj_builtin_ops[i] : extra_ops[i - TJ_OPI_COUNT];
}

const tj_op *tj_op_find(const char *name)
{
    if (!name) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_op_find: NULL name");
        return NULL;
    }
    const char *n = strncmp(name, "aten::", 6) == 0 ? name + 6 : strncmp(name, "aten.", 5) == 0 ? name + 5 : name;
    char base[64];
    const char *dot = strchr(n, '.');
    size_t blen = dot ? (size_t)(dot - n) : strlen(n);
    if (blen >= sizeof base) goto missing;
    memcpy(base, n, blen);
    base[blen] = 0;
    const char *ov = dot ? dot + 1 : "";
    if (strcmp(ov, "default") == 0) ov = "";
    for (int i = 0; i < tj_op_count(); i++) {
        const tj_op *op = tj_op_at(i);
        if (strcmp(op->base, base) == 0 && strcmp(op->overload, ov) == 0) return op;
    }
missing:
    tj_error(TJ_ERR_NOT_FOUND, "unknown operator '%s'", name);
    return NULL;
}

const char *tj_op_name(const tj_op *op) { return op ? op->name : ""; }
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
