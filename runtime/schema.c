/* ATen schema parser: "ns::name.overload(Tensor self, *, int dim=0) -> Tensor"
 * into an operator record's name, argument descriptors (type, optional,
 * keyword-only, default) and returns. The built-in table and
 * tj_op_register share it, so it reports every malformed part as an error
 * instead of trusting its input. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct parser {
    struct tj_op *op;
    const char *text; /* the whole schema, for messages */
    const char *who;
    const char *p;
    const char *after_ns; /* where the name starts, past "ns::" */
    char *bump, *bump_end; /* unused part of op->strings */
} parser;

static __attribute__((format(printf, 3, 4))) tj_status fail(parser *ps, tj_status st, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return tj_error(st, "%s: %sschema \"%s\": %s", ps->who, st == TJ_ERR_PARSE ? "malformed " : "", ps->text, why);
}

static void skip_ws(parser *ps)
{
    while (isspace((unsigned char)*ps->p)) ps->p++;
}

static bool accept(parser *ps, const char *tok)
{
    skip_ws(ps);
    size_t n = strlen(tok);
    if (strncmp(ps->p, tok, n) != 0) return false;
    ps->p += n;
    return true;
}

/* An identifier [A-Za-z_][A-Za-z0-9_]* of at most n-1 characters into buf;
 * false (nothing consumed) when there is none, -1 when it is too long. */
static int ident(parser *ps, char *buf, size_t n)
{
    skip_ws(ps);
    const char *s = ps->p;
    if (!(isalpha((unsigned char)*s) || *s == '_')) return 0;
    const char *e = s;
    while (isalnum((unsigned char)*e) || *e == '_') e++;
    if ((size_t)(e - s) >= n) return -1;
    memcpy(buf, s, (size_t)(e - s));
    buf[e - s] = 0;
    ps->p = e;
    return 1;
}

/* A copy of s[0..n) in op->strings (sized for the schema's text twice). */
static const char *keep(parser *ps, const char *s, size_t n)
{
    char *c = ps->bump;
    if ((size_t)(ps->bump_end - c) < n + 1) return NULL; /* cannot happen: names fit in the text */
    memcpy(c, s, n);
    c[n] = 0;
    ps->bump += n + 1;
    return c;
}

/* ---- names ---- */

static tj_status parse_name(parser *ps, const char *default_ns)
{
    struct tj_op *op = ps->op;
    char first[48];
    skip_ws(ps);
    ps->after_ns = ps->p;
    int r = ident(ps, first, sizeof first);
    if (r == 0) return fail(ps, TJ_ERR_PARSE, "expected an operator name");
    if (r < 0) return fail(ps, TJ_ERR_PARSE, "the name is longer than %zu characters", sizeof first - 1);
    if (strncmp(ps->p, "::", 2) == 0) {
        if (strlen(first) >= sizeof op->ns)
            return fail(ps, TJ_ERR_PARSE, "the namespace '%s' is longer than %zu characters", first,
                        sizeof op->ns - 1);
        strcpy(op->ns, first);
        ps->p += 2;
        ps->after_ns = ps->p;
        if ((r = ident(ps, op->base, sizeof op->base)) == 0)
            return fail(ps, TJ_ERR_PARSE, "expected a name after '::'");
        if (r < 0) return fail(ps, TJ_ERR_PARSE, "the name is longer than %zu characters", sizeof op->base - 1);
    } else {
        if (!default_ns)
            return fail(ps, TJ_ERR_INVALID_ARGUMENT, "needs a namespace of your own, as in 'mylib::%s'", first);
        strcpy(op->ns, default_ns);
        strcpy(op->base, first);
    }
    if (*ps->p == '.') {
        ps->p++;
        if ((r = ident(ps, op->overload, sizeof op->overload)) == 0)
            return fail(ps, TJ_ERR_PARSE, "expected an overload name after '.'");
        if (r < 0)
            return fail(ps, TJ_ERR_PARSE, "the overload name is longer than %zu characters", sizeof op->overload - 1);
        if (strcmp(op->overload, "default") == 0)
            return fail(ps, TJ_ERR_PARSE, "'default' names the overload without a name: leave it out");
    }
    int n = snprintf(op->name, sizeof op->name, "%s::%s%s%s", op->ns, op->base, op->overload[0] ? "." : "",
                     op->overload);
    if (n >= (int)sizeof op->name)
        return fail(ps, TJ_ERR_PARSE, "the full name is longer than %zu characters", sizeof op->name - 1);
    return TJ_OK;
}

/* ---- types ---- */

static const struct {
    const char *name;
    tj_arg_type type, list_type; /* list_type TJ_A_IGNORED: no list form */
} type_names[] = {
    {"Tensor", TJ_A_TENSOR, TJ_A_TENSOR_LIST}, {"int", TJ_A_INT, TJ_A_INT_LIST},
    {"SymInt", TJ_A_INT, TJ_A_INT_LIST},       {"bool", TJ_A_BOOL, TJ_A_BOOL_LIST},
    {"float", TJ_A_FLOAT, TJ_A_FLOAT_LIST},       {"Scalar", TJ_A_SCALAR, TJ_A_IGNORED},
    {"str", TJ_A_STR, TJ_A_IGNORED},           {"ScalarType", TJ_A_SCALAR_TYPE, TJ_A_IGNORED},
    /* always None here; accepted so that ATen's creation schemas read as is */
    {"Layout", TJ_A_IGNORED, TJ_A_IGNORED},    {"Device", TJ_A_IGNORED, TJ_A_IGNORED},
    {"MemoryFormat", TJ_A_IGNORED, TJ_A_IGNORED}, {"Generator", TJ_A_IGNORED, TJ_A_IGNORED},
};

/* A parsed type: "Tensor(a!)[]?" */
typedef struct type_info {
    char name[24];
    tj_arg_type type;
    bool list, optional, elem_optional, has_alias, alias_mutable;
    int fixed_len;
} type_info;

static tj_status parse_type(parser *ps, type_info *t, const char *what)
{
    memset(t, 0, sizeof *t);
    int r = ident(ps, t->name, sizeof t->name);
    if (r <= 0) return fail(ps, TJ_ERR_PARSE, "expected the type of %s", what);
    if (*ps->p == '(') { /* alias annotation: (a), (a!), (a -> *) */
        const char *close = strchr(ps->p, ')');
        if (!close) return fail(ps, TJ_ERR_PARSE, "unterminated alias annotation in %s", what);
        if (strcmp(t->name, "Tensor") != 0)
            return fail(ps, TJ_ERR_PARSE, "an alias annotation on %s, which is not a Tensor", what);
        t->has_alias = true;
        t->alias_mutable = memchr(ps->p, '!', (size_t)(close - ps->p)) != NULL;
        ps->p = close + 1;
    }
    if (ps->p[0] == '?' && ps->p[1] == '[') {
        if (strcmp(t->name, "Tensor") != 0)
            return fail(ps, TJ_ERR_UNSUPPORTED, "lists of optional elements (%s?[]) are not supported", t->name);
        t->elem_optional = true;
        ps->p++;
        if (ps->p[1] != ']') return fail(ps, TJ_ERR_UNSUPPORTED, "a sized list of optional elements in %s", what);
    }
    if (*ps->p == '[') {
        char *end;
        t->list = true;
        ps->p++;
        if (isdigit((unsigned char)*ps->p)) {
            long n = strtol(ps->p, &end, 10);
            if (n < 1 || n > TJ_MAX_DIMS) return fail(ps, TJ_ERR_UNSUPPORTED, "a list size of %ld in %s", n, what);
            t->fixed_len = (int)n;
            ps->p = end;
        }
        if (*ps->p != ']') return fail(ps, TJ_ERR_PARSE, "expected ']' in the type of %s", what);
        ps->p++;
    }
    if (*ps->p == '?') {
        t->optional = true;
        ps->p++;
    }
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++) {
        if (strcmp(t->name, type_names[i].name) != 0) continue;
        t->type = t->list ? type_names[i].list_type : type_names[i].type;
        if (t->list && t->type == TJ_A_IGNORED)
            return fail(ps, TJ_ERR_UNSUPPORTED, "lists of %s (in %s) are not supported", t->name, what);
        return TJ_OK;
    }
    return fail(ps, TJ_ERR_PARSE, "unknown type '%s' of %s", t->name, what);
}

/* ---- defaults ---- */

static bool read_int(const char *s, int64_t *v, const char **end)
{
    char *e;
    errno = 0;
    long long x = strtoll(s, &e, 10);
    if (e == s || errno) return false;
    *v = x;
    *end = e;
    return true;
}

static bool whole_int(const char *s, int64_t *v)
{
    const char *e;
    return read_int(s, v, &e) && *e == 0;
}

static bool whole_float(const char *s, double *v)
{
    char *e;
    *v = strtod(s, &e);
    return e != s && *e == 0;
}

/* "[1, 2]" or a single int repeated fixed_len times (int[2] padding=0). */
static bool int_list(tj_arg_spec *a, const char *s)
{
    int n = 0;
    if (*s != '[') {
        int64_t v;
        if (!whole_int(s, &v)) return false;
        n = a->fixed_len > 0 ? a->fixed_len : 1;
        for (int i = 0; i < n; i++) a->def_ints[i] = v;
    } else {
        const char *p = s + 1;
        while (isspace((unsigned char)*p)) p++;
        while (*p != ']') {
            if (n == TJ_MAX_DIMS || !read_int(p, &a->def_ints[n++], &p)) return false;
            while (isspace((unsigned char)*p)) p++;
            if (*p == ',') p++;
            else if (*p != ']') return false;
            while (isspace((unsigned char)*p)) p++;
        }
        if (p[1] != 0) return false;
    }
    a->def = tj_v_ints(a->def_ints, n);
    return true;
}

/* Sets a->def from the default's text (trimmed, NUL-terminated). */
static tj_status parse_default(parser *ps, tj_arg_spec *a, const char *s)
{
    a->has_default = true;
    if (strcmp(s, "None") == 0) {
        if (!a->optional) return fail(ps, TJ_ERR_PARSE, "argument '%s': default None for a type without '?'", a->name);
        a->def = tj_v_none();
        return TJ_OK;
    }
    bool ok = false;
    int64_t i;
    double f;
    switch (a->type) {
    case TJ_A_BOOL:
        if ((ok = !strcmp(s, "True") || !strcmp(s, "False"))) a->def = tj_v_bool(s[0] == 'T');
        break;
    case TJ_A_INT:
        if (strcmp(s, "Mean") == 0) i = 1, ok = true; /* ATen's Reduction::Mean */
        else ok = whole_int(s, &i);
        if (ok) a->def = tj_v_int(i);
        break;
    case TJ_A_FLOAT:
        if ((ok = whole_float(s, &f))) a->def = tj_v_float(f);
        break;
    case TJ_A_SCALAR:
        if (whole_int(s, &i)) a->def = tj_v_int(i), ok = true;
        else if (whole_float(s, &f)) a->def = tj_v_float(f), ok = true;
        break;
    case TJ_A_STR: {
        size_t n = strlen(s);
        if ((ok = n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]))
            a->def = tj_v_str(keep(ps, s + 1, n - 2));
        break;
    }
    case TJ_A_INT_LIST: ok = int_list(a, s); break;
    default:
        return fail(ps, TJ_ERR_UNSUPPORTED, "argument '%s': only None can be its default", a->name);
    }
    return ok ? TJ_OK : fail(ps, TJ_ERR_PARSE, "argument '%s': bad default '%s'", a->name, s);
}

/* ---- arguments and returns ---- */

static tj_status parse_arg(parser *ps, bool kwonly)
{
    struct tj_op *op = ps->op;
    char what[48];
    snprintf(what, sizeof what, "argument %d", op->nargs);
    if (op->nargs == TJ_MAX_ARGS) return fail(ps, TJ_ERR_UNSUPPORTED, "more than %d arguments", TJ_MAX_ARGS);
    type_info t;
    tj_status st = parse_type(ps, &t, what);
    if (st != TJ_OK) return st;
    tj_arg_spec *a = &op->args[op->nargs];
    a->type = t.type;
    a->optional = t.optional;
    a->elem_optional = t.elem_optional;
    a->kwarg_only = kwonly;
    a->fixed_len = t.fixed_len;
    if (t.alias_mutable) op->mutated_args |= 1u << op->nargs;
    char name[64];
    int r = ident(ps, name, sizeof name);
    if (r == 0) return fail(ps, TJ_ERR_PARSE, "%s has no name", what);
    if (r < 0) return fail(ps, TJ_ERR_PARSE, "the name of %s is too long", what);
    for (int i = 0; i < op->nargs; i++)
        if (strcmp(op->args[i].name, name) == 0) return fail(ps, TJ_ERR_PARSE, "two arguments named '%s'", name);
    a->name = keep(ps, name, strlen(name));
    op->nargs++;
    if (!accept(ps, "=")) return TJ_OK;
    /* the default runs to the next ',' or ')' outside brackets and quotes */
    skip_ws(ps);
    const char *s = ps->p;
    char quote = 0;
    int depth = 0;
    for (; *ps->p; ps->p++) {
        char c = *ps->p;
        if (quote) quote = c == quote ? 0 : quote;
        else if (c == '"' || c == '\'') quote = c;
        else if (c == '[') depth++;
        else if (c == ']') depth--;
        else if ((c == ',' || c == ')') && depth == 0) break;
    }
    const char *e = ps->p;
    while (e > s && isspace((unsigned char)e[-1])) e--;
    char text[64];
    if (e == s) return fail(ps, TJ_ERR_PARSE, "argument '%s': '=' without a default", a->name);
    if ((size_t)(e - s) >= sizeof text)
        return fail(ps, TJ_ERR_PARSE, "argument '%s': the default is too long", a->name);
    memcpy(text, s, (size_t)(e - s));
    text[e - s] = 0;
    return parse_default(ps, a, text);
}

static tj_status parse_args(parser *ps)
{
    if (!accept(ps, "(")) return fail(ps, TJ_ERR_PARSE, "expected '(' after the name");
    if (accept(ps, ")")) return TJ_OK;
    bool kwonly = false;
    for (;;) {
        skip_ws(ps);
        if (!*ps->p) return fail(ps, TJ_ERR_PARSE, "unterminated argument list");
        if (accept(ps, "*")) {
            if (kwonly) return fail(ps, TJ_ERR_PARSE, "a second '*'");
            kwonly = true;
        } else {
            tj_status st = parse_arg(ps, kwonly);
            if (st != TJ_OK) return st;
        }
        if (accept(ps, ")")) return TJ_OK;
        if (!*ps->p) return fail(ps, TJ_ERR_PARSE, "unterminated argument list");
        if (!accept(ps, ",")) return fail(ps, TJ_ERR_PARSE, "expected ',' or ')' at '%.12s'", ps->p);
    }
}

static tj_status parse_return(parser *ps, bool *view)
{
    struct tj_op *op = ps->op;
    char what[48], name[64];
    snprintf(what, sizeof what, "return %d", op->nreturns);
    if (op->nreturns == TJ_MAX_RETURNS) return fail(ps, TJ_ERR_UNSUPPORTED, "more than %d returns", TJ_MAX_RETURNS);
    type_info t;
    tj_status st = parse_type(ps, &t, what);
    if (st != TJ_OK) return st;
    if ((t.type != TJ_A_TENSOR && t.type != TJ_A_TENSOR_LIST) || t.optional || t.elem_optional)
        return fail(ps, TJ_ERR_UNSUPPORTED, "%s is '%s%s%s%s': only Tensor returns are supported", what, t.name,
                    t.elem_optional ? "?" : "", t.list ? "[]" : "", t.optional ? "?" : "");
    if (t.list) op->returns_list = true;
    if (t.has_alias && !t.alias_mutable && !t.list) *view = true;
    op->nreturns++;
    if (ident(ps, name, sizeof name) < 0) return fail(ps, TJ_ERR_PARSE, "the name of %s is too long", what);
    return TJ_OK;
}

static tj_status parse_returns(parser *ps)
{
    struct tj_op *op = ps->op;
    if (!accept(ps, "->")) return fail(ps, TJ_ERR_PARSE, "expected '->' after the arguments");
    bool view = false;
    tj_status st;
    if (accept(ps, "(")) {
        if (accept(ps, ")")) return fail(ps, TJ_ERR_UNSUPPORTED, "operators without returns are not supported");
        do {
            if ((st = parse_return(ps, &view)) != TJ_OK) return st;
        } while (accept(ps, ","));
        if (!accept(ps, ")")) return fail(ps, TJ_ERR_PARSE, "expected ',' or ')' in the returns");
    } else if ((st = parse_return(ps, &view)) != TJ_OK) {
        return st;
    }
    if (op->returns_list && (op->nreturns > 1 || op->kind != TJ_OP_IMPLICIT))
        return fail(ps, TJ_ERR_UNSUPPORTED, "a Tensor[] return needs an implicit operator, and no other return");
    op->is_view = view && op->kind != TJ_OP_IMPLICIT;
    return TJ_OK;
}

void tj_schema_free(struct tj_op *op)
{
    tj_free(op->strings, op->strings_size);
    op->strings = NULL;
    op->strings_size = 0;
}

tj_status tj_schema_parse(struct tj_op *op, const char *text, const char *default_ns, const char *who)
{
    parser ps = {.op = op, .text = text, .who = who, .p = text};
    /* the full schema with its namespace, then argument names and str
     * defaults (together shorter than the text) */
    size_t len = strlen(text);
    op->strings_size = 2 * (len + 1) + sizeof op->ns + 16;
    op->strings = tj_alloc(op->strings_size);
    if (!op->strings) return tj_oom(who, op->strings_size);
    ps.bump = op->strings;
    ps.bump_end = op->strings + op->strings_size;
    op->nargs = op->nreturns = 0;
    op->mutated_args = 0;
    op->returns_list = false;
    tj_status st = parse_name(&ps, default_ns);
    if (st == TJ_OK) {
        /* the schema as tj_op_schema shows it: with its namespace, trimmed */
        size_t n = strlen(ps.after_ns);
        while (n > 0 && isspace((unsigned char)ps.after_ns[n - 1])) n--;
        op->schema = ps.bump;
        ps.bump += snprintf(ps.bump, (size_t)(ps.bump_end - ps.bump), "%s::%.*s", op->ns, (int)n, ps.after_ns) + 1;
        st = parse_args(&ps);
    }
    if (st == TJ_OK) st = parse_returns(&ps);
    if (st == TJ_OK) {
        skip_ws(&ps);
        if (*ps.p) st = fail(&ps, TJ_ERR_PARSE, "unexpected '%.12s' after the returns", ps.p);
    }
    if (st != TJ_OK) {
        tj_schema_free(op);
        return st;
    }
    op->is_inplace = op->base[strlen(op->base) - 1] == '_';
    return TJ_OK;
}
