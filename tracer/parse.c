/* The graph parser: reads the text tj_graph_print writes. Errors name the
 * line and column. Each call's outputs are re-inferred by running its
 * operator's shape function on fake tensors, so the text carries types only
 * on placeholders and constants. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "runtime/key_map.h"

typedef struct parser {
    const char *text, *p, *end; /* end: the text's terminating NUL */
    int line;
    const char *line_start;
    tj_graph *g;
    tj_fake_values fakes; /* for shape inference */
    struct deferred {     /* constants whose values come after 'return' (tj_graph_print's data blocks) */
        int node;
        bool filled;
    } *deferred;
    int n_deferred;
    bool *generated; /* by value: named by the graph (a result written "_", or not yet named by the text); such a
                        name yields to the text's */
    int n_generated;
    tj_key_map by_name; /* value index by a hash of its name (find_value) */
    size_t long_name;   /* length of the name the last ident() refused as too long, else 0 */
    size_t name_cap;    /* the longest name that ident() took there */
} parser;

static tj_status perr_status(parser *ps, tj_status status, const char *what)
{
    int column = (int)(ps->p - ps->line_start) + 1;
    /* the caller's "expected a name" would hide why the name was refused */
    if (ps->long_name)
        return tj_error(status, "tj_graph_parse: line %d, column %d: a name of %zu characters is longer than the %zu allowed",
                        ps->line, column, ps->long_name, ps->name_cap);
    return tj_error(status, "tj_graph_parse: line %d, column %d: %s", ps->line, column, what);
}

static tj_status perr(parser *ps, const char *what) { return perr_status(ps, TJ_ERR_PARSE, what); }

static void skip_spaces(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r') ps->p++;
}

static bool accept(parser *ps, const char *tok)
{
    skip_spaces(ps);
    ps->long_name = 0; /* parsing went on past a refused name */
    size_t n = strlen(tok);
    if (strncmp(ps->p, tok, n) != 0) return false;
    ps->p += n;
    return true;
}

static tj_status expect(parser *ps, const char *tok)
{
    if (accept(ps, tok)) return TJ_OK;
    char msg[64];
    snprintf(msg, sizeof msg, "expected '%s'", tok);
    return perr(ps, msg);
}

static bool end_of_line(parser *ps)
{
    skip_spaces(ps);
    if (*ps->p == '\n') {
        ps->p++;
        ps->line++;
        ps->line_start = ps->p;
        return true;
    }
    return *ps->p == 0;
}

static void skip_blank_lines(parser *ps)
{
    for (;;) {
        const char *save = ps->p;
        skip_spaces(ps);
        if (*ps->p == '\n') {
            ps->p++;
            ps->line++;
            ps->line_start = ps->p;
            continue;
        }
        ps->p = save;
        return;
    }
}

/* An identifier into buf. */
static bool ident(parser *ps, char *buf, size_t n)
{
    skip_spaces(ps);
    ps->long_name = 0;
    const char *s = ps->p;
    if (!(isalpha((unsigned char)*s) || *s == '_')) return false;
    while (isalnum((unsigned char)*ps->p) || *ps->p == '_') ps->p++;
    size_t len = (size_t)(ps->p - s);
    if (len >= n) {
        ps->long_name = len;
        ps->name_cap = n - 1;
        return false;
    }
    memcpy(buf, s, len);
    buf[len] = 0;
    return true;
}

/* FNV-1a of a name, never 0 (tj_key_map's empty key). */
static uint64_t name_key(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    while (*s) h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
    return h ? h : 1;
}

/* Indexes value v under its name, as find_value reads it: every value, once
 * made and again when renamed. */
static tj_status index_value(parser *ps, int v)
{
    return tj_key_map_put(&ps->by_name, name_key(ps->g->values[v].name), v, "tj_graph_parse");
}

static tj_status index_node(parser *ps, int node)
{
    const tj_gnode *n = &ps->g->nodes[node];
    tj_status st = TJ_OK;
    for (int k = 0; k < n->nout && st == TJ_OK; k++)
        if (n->outs[k] >= 0) st = index_value(ps, n->outs[k]);
    return st;
}

/* The value named `name`, or -1: through the index (a scan per reference
 * made parsing quadratic: 50,000 nodes took 4 s), by a scan only where two
 * names share a hash or a renamed value left its old name's entry. */
static int find_value(parser *ps, const char *name)
{
    int v = tj_key_map_get(&ps->by_name, name_key(name));
    if (v < 0 || (ps->g->values[v].name && strcmp(ps->g->values[v].name, name) == 0)) return v;
    for (v = ps->g->n_values - 1; v >= 0; v--)
        if (ps->g->values[v].name && strcmp(ps->g->values[v].name, name) == 0) return v;
    return -1;
}

/* %name of a defined value. */
static tj_status value_ref(parser *ps, int *out)
{
    char name[TJ_GRAPH_NAME_MAX + 1], msg[200];
    if (!accept(ps, "%") || !ident(ps, name, sizeof name)) return perr(ps, "expected a value name '%name'");
    if ((*out = find_value(ps, name)) < 0) {
        snprintf(msg, sizeof msg, "undefined value %%%s", name);
        return perr(ps, msg);
    }
    return TJ_OK;
}

static tj_status parse_int(parser *ps, int64_t *out)
{
    skip_spaces(ps);
    errno = 0;
    char *end;
    long long v = strtoll(ps->p, &end, 10);
    if (end == ps->p) return perr(ps, "expected an integer");
    if (errno == ERANGE) return perr(ps, "integer out of the int64 range");
    ps->p = end;
    *out = v;
    return TJ_OK;
}

/* f32[2, 3] or f32[3, 2]{1, 3} */
static tj_status parse_type(parser *ps, tj_dtype *dt, int *ndim, int64_t *shape, int64_t *strides, bool *has_strides)
{
    skip_spaces(ps);
    int len = tj_dtype_parse_short_name(ps->p, dt);
    if (!len) return perr(ps, "expected a type (f32, f64, i64, b8, i32, u8, i8, i16, f16, bf16)");
    ps->p += len;
    if (expect(ps, "[") != TJ_OK) return TJ_ERR_PARSE;
    *ndim = 0;
    while (!accept(ps, "]")) {
        if (*ndim == TJ_MAX_DIMS) return perr(ps, "more than 8 dims");
        if (parse_int(ps, &shape[*ndim]) != TJ_OK) return TJ_ERR_PARSE;
        if (shape[*ndim] < 0) return perr(ps, "negative size");
        (*ndim)++;
        if (!accept(ps, ",") && (skip_spaces(ps), *ps->p != ']')) return perr(ps, "expected ',' or ']'");
    }
    *has_strides = false;
    if (accept(ps, "{")) {
        for (int d = 0; d < *ndim; d++) {
            if (parse_int(ps, &strides[d]) != TJ_OK) return TJ_ERR_PARSE;
            if (strides[d] < 0) return perr(ps, "negative stride (strides are never negative, as for as_strided)");
            if (d + 1 < *ndim && expect(ps, ",") != TJ_OK) return TJ_ERR_PARSE;
        }
        if (expect(ps, "}") != TJ_OK) return TJ_ERR_PARSE;
        *has_strides = true;
    }
    int64_t numel;
    if (tj_checked_numel(*ndim, shape, &numel, "this type") != TJ_OK) {
        char msg[300]; /* with the line and column every other parse error gives */
        snprintf(msg, sizeof msg, "%s", tj_last_error());
        return perr(ps, msg);
    }
    return TJ_OK;
}

/* After a placeholder's type, each optional, in this order: " offset N"
 * (its storage offset, 0 without) and " bound \"reason\"" (the graph holds
 * for its strides and offset only: tj_gvalue.geometry_bound, NULL without;
 * an arena string). */
static tj_status parse_geometry_suffix(parser *ps, int64_t *offset, char **bound)
{
    *offset = 0;
    *bound = NULL;
    if (accept(ps, "offset")) {
        if (parse_int(ps, offset) != TJ_OK) return perr(ps, "offset: expected the storage offset, an integer");
        if (*offset < 0) return perr(ps, "offset: a negative storage offset");
    }
    if (!accept(ps, "bound")) return TJ_OK;
    skip_spaces(ps);
    if (*ps->p != '"') return perr(ps, "bound: expected its reason in double quotes (bound \"aten::as_strided's gradient\")");
    const char *s = ++ps->p;
    /* printable ASCII: the JSON export writes it as a string */
    while (*ps->p >= ' ' && *ps->p <= '~' && *ps->p != '"') ps->p++;
    if (*ps->p != '"')
        return perr(ps, *ps->p && *ps->p != '\n' ? "bound: the reason holds printable ASCII characters only"
                                                  : "bound: unterminated reason (a '\"' on the same line ends it)");
    if (ps->p == s) return perr(ps, "bound: an empty reason");
    size_t n = (size_t)(ps->p - s);
    ps->p++;
    if (!(*bound = tj_graph_alloc(ps->g, n + 1))) return tj_last_status();
    memcpy(*bound, s, n);
    return TJ_OK;
}

static tj_status parse_float_token(parser *ps, double *out, bool *is_float)
{
    skip_spaces(ps);
    if (accept(ps, "nan")) { *out = NAN; *is_float = true; return TJ_OK; }
    if (accept(ps, "inf")) { *out = INFINITY; *is_float = true; return TJ_OK; }
    if (accept(ps, "-inf")) { *out = -INFINITY; *is_float = true; return TJ_OK; }
    const char *s = ps->p;
    const char *e = s;
    if (*e == '-' || *e == '+') e++;
    while (isdigit((unsigned char)*e) || *e == '.' || *e == 'e' || *e == 'E' ||
           ((*e == '-' || *e == '+') && (e[-1] == 'e' || e[-1] == 'E')))
        e++;
    if (e == s) return perr(ps, "expected a number");
    *is_float = memchr(s, '.', (size_t)(e - s)) || memchr(s, 'e', (size_t)(e - s)) || memchr(s, 'E', (size_t)(e - s));
    char *end;
    *out = strtod(s, &end);
    if (end != e) return perr(ps, "malformed number");
    ps->p = e;
    return TJ_OK;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A str argument in single quotes with the escapes tj_graph_print writes
 * (print.c, print_str): \\, \', \n, \r, \t and \xNN (the byte NN, not
 * 00); or in double quotes, as Python also reads it, with \" too; an arena
 * string into a. */
static tj_status parse_str(parser *ps, tj_garg *a)
{
    char quote = *ps->p;
    const char *s = ++ps->p;
    while (*ps->p && *ps->p != quote && *ps->p != '\n') ps->p += *ps->p == '\\' && ps->p[1] && ps->p[1] != '\n' ? 2 : 1;
    if (*ps->p != quote) return perr(ps, "unterminated string");
    const char *end = ps->p;
    char *str = tj_graph_alloc(ps->g, (size_t)(end - s) + 1), *w = str;
    if (!str) return tj_last_status();
    for (const char *r = s; r < end; r++) {
        if (*r != '\\') {
            *w++ = *r;
            continue;
        }
        int hi, lo;
        switch (*++r) {
        case '\\': case '\'': case '"': *w++ = *r; break;
        case 'n': *w++ = '\n'; break;
        case 'r': *w++ = '\r'; break;
        case 't': *w++ = '\t'; break;
        case 'x':
            if (r + 2 < end && (hi = hex_digit(r[1])) >= 0 && (lo = hex_digit(r[2])) >= 0 && (hi || lo)) {
                *w++ = (char)(hi * 16 + lo);
                r += 2;
                break;
            }
            ps->p = r - 1;
            return perr(ps, "string: \\x takes two hex digits, not 00 (\\xff: the byte 0xff)");
        default:
            ps->p = r - 1;
            return perr(ps, "string: unknown escape (the escapes are \\\\, \\', \\\", \\n, \\r, \\t and \\xNN)");
        }
    }
    ps->p = end + 1;
    a->kind = TJ_GA_STR;
    a->u.s = str;
    return TJ_OK;
}

/* One argument value, into a garg whose lists point into the graph arena. */
static tj_status parse_value(parser *ps, tj_garg *a)
{
    skip_spaces(ps);
    memset(a, 0, sizeof *a);
    if (*ps->p == '%') {
        a->kind = TJ_GA_VALUE;
        return value_ref(ps, &a->u.v);
    }
    if (accept(ps, "None")) return TJ_OK;
    if (accept(ps, "True")) { a->kind = TJ_GA_BOOL; a->u.b = true; return TJ_OK; }
    if (accept(ps, "False")) { a->kind = TJ_GA_BOOL; a->u.b = false; return TJ_OK; }
    skip_spaces(ps);
    const char *dtype_at = ps->p;
    if (accept(ps, "torch.")) {
        char name[32], msg[200];
        if (!ident(ps, name, sizeof name)) return perr(ps, "unknown dtype");
        if (tj_dtype_from_name(name, &a->u.dtype) != TJ_OK) {
            ps->p = dtype_at; /* the error's column: where the dtype starts */
            snprintf(msg, sizeof msg, "unknown dtype torch.%s (tjit has torch.float32, float64, int64, bool, int32, uint8, "
                     "int8, int16, float16 and bfloat16)", name);
            return perr(ps, msg);
        }
        a->kind = TJ_GA_DTYPE;
        return TJ_OK;
    }
    if (*ps->p == '\'' || *ps->p == '"') return parse_str(ps, a);
    if (accept(ps, "[")) {
        /* a list: of values, of bools, of ints or of floats (ints among
         * floats read as floats), decided by its elements */
        tj_garg items[256];
        tj_garg_kind kind = TJ_GA_INT; /* of the elements; an empty list is one of ints */
        int n = 0;
        bool any_float = false;
        while (!accept(ps, "]")) {
            if (n == 256) return perr(ps, "list longer than 256");
            /* refused before recursing: each level holds items[] on the stack,
             * and "[[[[..." a few thousand deep overflowed it (fuzzing) */
            if ((skip_spaces(ps), *ps->p == '[')) return perr(ps, "nested lists are not supported");
            if (parse_value(ps, &items[n]) != TJ_OK) return TJ_ERR_PARSE;
            /* None entries belong to lists of values (Tensor?[]), -1 there;
             * ints and floats are both numbers (any float: a list of floats) */
            tj_garg_kind kn = items[n].kind == TJ_GA_NONE ? TJ_GA_VALUE : items[n].kind;
            if (items[n].kind == TJ_GA_NONE) items[n].u.v = -1;
            if (kn == TJ_GA_FLOAT) {
                any_float = true;
                kn = TJ_GA_INT;
            }
            if (n && kn != kind) return perr(ps, "mixed list");
            if (kn != TJ_GA_VALUE && kn != TJ_GA_BOOL && kn != TJ_GA_INT)
                return perr(ps, "lists hold values, ints, floats or bools");
            kind = kn;
            n++;
            if (!accept(ps, ",") && (skip_spaces(ps), *ps->p != ']')) return perr(ps, "expected ',' or ']'");
        }
        a->n = n;
        if (kind == TJ_GA_VALUE) {
            a->kind = TJ_GA_VALUES;
            if (!(a->u.vs = tj_graph_alloc(ps->g, sizeof(int) * (size_t)(n + 1)))) return tj_last_status();
            for (int i = 0; i < n; i++) a->u.vs[i] = items[i].u.v;
        } else if (kind == TJ_GA_BOOL) {
            a->kind = TJ_GA_BOOLS;
            if (!(a->u.bools = tj_graph_alloc(ps->g, (size_t)(n + 1)))) return tj_last_status();
            for (int i = 0; i < n; i++) a->u.bools[i] = items[i].u.b;
        } else if (any_float) {
            a->kind = TJ_GA_FLOATS;
            if (!(a->u.floats = tj_graph_alloc(ps->g, sizeof(double) * (size_t)(n + 1)))) return tj_last_status();
            for (int i = 0; i < n; i++)
                a->u.floats[i] = items[i].kind == TJ_GA_FLOAT ? items[i].u.f : (double)items[i].u.i;
        } else {
            a->kind = TJ_GA_INTS;
            if (!(a->u.ints = tj_graph_alloc(ps->g, sizeof(int64_t) * (size_t)(n + 1)))) return tj_last_status();
            for (int i = 0; i < n; i++) a->u.ints[i] = items[i].u.i;
        }
        return TJ_OK;
    }
    double f = 0;
    bool is_float = false;
    const char *start = ps->p;
    if (parse_float_token(ps, &f, &is_float) != TJ_OK) return TJ_ERR_PARSE;
    if (is_float) {
        a->kind = TJ_GA_FLOAT;
        a->u.f = f;
        return TJ_OK;
    }
    ps->p = start;
    a->kind = TJ_GA_INT;
    return parse_int(ps, &a->u.i);
}

/* A value holds a name the graph generated (getitem_1: a result written
 * "_", or a result of the call being named, whose slots the text names in
 * another order, e.g. `%getitem_3, %getitem_4 = ...` where the first result
 * is None) that the text gives a value of its own now: it takes another. */
static tj_status free_generated_name(parser *ps, const char *name)
{
    int holder = find_value(ps, name);
    if (holder < 0 || holder >= ps->n_generated || !ps->generated[holder]) return TJ_OK;
    char *other = tj_graph_unique_name(ps->g, name);
    if (!other) return tj_last_status();
    ps->g->values[holder].name = other;
    return index_value(ps, holder);
}

/* Gives value v the name the text writes: the graph named it from its
 * operator (or the name, suffixed where a generated name or a reserved word
 * had claimed it already: "add" after "%foo = aten.add.Tensor", "sum"
 * after an aten.sum). */
static tj_status name_value(parser *ps, int v, const char *name)
{
    tj_status st = free_generated_name(ps, name);
    if (st != TJ_OK) return st;
    int holder = find_value(ps, name);
    if (holder >= 0 && holder != v) {
        char msg[200];
        snprintf(msg, sizeof msg, "value %%%s is defined twice", name);
        return perr(ps, msg);
    }
    if (strcmp(ps->g->values[v].name, name) == 0) return TJ_OK;
    char *copy = tj_graph_strdup(ps->g, name);
    if (!copy) return tj_last_status();
    tj_graph_claim_name(ps->g, copy); /* false where the name was claimed but left: still unique among values */
    ps->g->values[v].name = copy;
    return index_value(ps, v);
}

/* Adds a call node: fills defaults, infers outputs with the shape function. */
static tj_status add_call(parser *ps, const tj_op *op, tj_garg *args, const bool *given, char names[][TJ_GRAPH_NAME_MAX + 1], int n_targets)
{
    for (int i = 0; i < op->nargs; i++) {
        if (given[i]) continue;
        const tj_arg_spec *s = &op->args[i];
        char msg[200];
        if (!s->has_default) {
            snprintf(msg, sizeof msg, "%s: argument '%s' is missing", op->name, s->name);
            return perr(ps, msg);
        }
        const tj_value *d = &s->def;
        memset(&args[i], 0, sizeof args[i]);
        switch (d->kind) {
        case TJ_V_INT: args[i].kind = TJ_GA_INT; args[i].u.i = d->u.i; break;
        case TJ_V_FLOAT: args[i].kind = TJ_GA_FLOAT; args[i].u.f = d->u.f; break;
        case TJ_V_BOOL: args[i].kind = TJ_GA_BOOL; args[i].u.b = d->u.b; break;
        case TJ_V_STR: args[i].kind = TJ_GA_STR; args[i].u.s = (char *)d->u.s; break;
        case TJ_V_INTS: args[i].kind = TJ_GA_INTS; args[i].n = d->n; args[i].u.ints = (int64_t *)d->u.ints; break;
        default: args[i].kind = TJ_GA_NONE; break;
        }
    }
    if (n_targets != op->nreturns) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s returns %d %s, %d %s given", op->name, op->nreturns,
                 tj_noun(op->nreturns, "value", "values"), n_targets, tj_noun(n_targets, "name", "names"));
        return perr(ps, msg);
    }
    /* box on fake tensors and infer */
    tj_value vals[TJ_MAX_ARGS], outs[TJ_MAX_RETURNS];
    tj_tensor *lists[TJ_MAX_ARGS * 256];
    for (int i = 0; i < op->nargs; i++) {
        for (int k = 0; k < tj_garg_n_values(&args[i]); k++) {
            int v = tj_garg_value_at(&args[i], k);
            if (v >= 0 && !tj_fake_value(&ps->fakes, ps->g, v, "tj_graph_parse")) return tj_last_status();
        }
    }
    tj_garg_box(args, op->nargs, ps->fakes.t, vals, lists);
    if (tj_dispatch_fake(op, vals, op->nargs, outs) != TJ_OK) {
        char msg[700];
        snprintf(msg, sizeof msg, "%s", tj_last_error());
        /* running out of memory is no fault of the text */
        return perr_status(ps, tj_last_status() == TJ_ERR_OUT_OF_MEMORY ? TJ_ERR_OUT_OF_MEMORY : TJ_ERR_PARSE, msg);
    }
    for (int i = 0; i < op->nreturns; i++)
        if (names[i][0] && outs[i].kind == TJ_V_TENSORS) {
            /* a graph value holds one tensor: the name would silently define nothing */
            char msg[400];
            snprintf(msg, sizeof msg, "%s returns a Tensor[], which no graph value holds: %%%s takes one piece per "
                     "call (aten.slice.Tensor or aten.select.int, as make_fx records the pieces here); write '_' to "
                     "leave it", op->name, names[i]);
            return perr(ps, msg);
        }
    tj_tensor *results[TJ_MAX_RETURNS];
    /* every computed result gets a value, also one written "_" (the kernel
     * writes it); "_" (an empty name here, as %_ is a name) only leaves its
     * name to the graph */
    for (int i = 0; i < op->nreturns; i++) results[i] = outs[i].kind == TJ_V_TENSOR ? outs[i].u.t : NULL;
    int node = tj_graph_add_call(ps->g, op, args, op->nargs, results, NULL);
    if (node < 0 || index_node(ps, node) != TJ_OK) return tj_last_status();
    /* an in-place result is self's tensor object: an in-place view of
     * either later (t_, unsqueeze_) changes what both read as */
    int same = ps->g->nodes[node].nout > 0 ? ps->g->nodes[node].outs[0] : -1;
    if (op->is_inplace && same >= 0 && args[0].kind == TJ_GA_VALUE) {
        if (!tj_fake_value(&ps->fakes, ps->g, same, "tj_graph_parse")) return tj_last_status();
        ps->fakes.t[same] = ps->fakes.t[args[0].u.v];
    }
    /* the printed names win over generated ones */
    if (ps->n_generated < ps->g->n_values) {
        bool *grown = realloc(ps->generated, sizeof *grown * (size_t)ps->g->n_values);
        if (!grown) return tj_oom("tj_graph_parse", sizeof *grown * (size_t)ps->g->n_values);
        memset(grown + ps->n_generated, 0, sizeof *grown * (size_t)(ps->g->n_values - ps->n_generated));
        ps->generated = grown;
        ps->n_generated = ps->g->n_values;
    }
    const tj_gnode *n = &ps->g->nodes[node];
    for (int i = 0; i < n->nout; i++)
        if (n->outs[i] >= 0) ps->generated[n->outs[i]] = true;
    for (int i = 0; i < op->nreturns; i++) {
        int v = ps->g->nodes[node].outs[i];
        if (v < 0 || !names[i][0]) continue;
        tj_status st = name_value(ps, v, names[i]);
        if (st != TJ_OK) return st;
        ps->generated[v] = false;
    }
    return TJ_OK;
}

static bool is_number(const tj_garg *a)
{
    return a->kind == TJ_GA_INT || a->kind == TJ_GA_FLOAT || a->kind == TJ_GA_BOOL;
}

/* Whether cand is op's Scalar overload for the numbers given at the Tensor
 * arguments in `numbers` (bit i: argument i): the same operator, argument
 * names, returns and mutations, a Scalar at each of those arguments and
 * elsewhere the same types, except that an optional Tensor left None may be
 * an optional Scalar (clamp.Tensor(%x, 0) is clamp(%x, 0)). */
static bool is_scalar_overload(const tj_op *cand, const tj_op *op, unsigned numbers, const tj_garg *args,
                               const bool *given)
{
    if (cand == op || strcmp(cand->ns, op->ns) != 0 || strcmp(cand->base, op->base) != 0 || cand->nargs != op->nargs ||
        cand->nreturns != op->nreturns || cand->mutated_args != op->mutated_args)
        return false;
    for (int i = 0; i < op->nargs; i++) {
        const tj_arg_spec *a = &op->args[i], *b = &cand->args[i];
        bool left_none = a->optional && (given[i] ? args[i].kind == TJ_GA_NONE : a->def.kind == TJ_V_NONE);
        if (strcmp(a->name, b->name) != 0) return false;
        if (numbers >> i & 1) {
            if (b->type != TJ_A_SCALAR) return false;
        } else if (a->type == TJ_A_TENSOR && left_none) {
            if (!b->optional || (b->type != TJ_A_TENSOR && b->type != TJ_A_SCALAR)) return false;
        } else if (b->type != a->type || b->optional != a->optional) {
            return false;
        }
    }
    return true;
}

/* A number written where *op wants a Tensor is a wrapped number, which ATen
 * treats as a Scalar (type promotion included): torch 1.13's make_fx
 * records `x + 1` as aten.add.Tensor(%x, 1), tjit's tracer as
 * aten.add.Scalar(%x, 1). Switches *op to its overload that takes Scalars
 * there (is_scalar_overload), or names the arguments none takes as Scalars.
 * at[i]: where argument i starts in the text. */
static tj_status use_scalar_overload(parser *ps, const tj_op **op, const tj_garg *args, const bool *given,
                                     const char *const *at)
{
    unsigned numbers = 0;
    char names[160] = "";
    int first = -1, n = 0;
    for (int i = 0; i < (*op)->nargs; i++)
        if (given[i] && (*op)->args[i].type == TJ_A_TENSOR && is_number(&args[i])) {
            numbers |= 1u << i;
            if (first < 0) first = i;
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s'%s'", n++ ? ", " : "", (*op)->args[i].name);
        }
    if (!numbers) return TJ_OK;
    for (int k = 0; k < tj_op_count(); k++) {
        const tj_op *cand = tj_op_at(k);
        if (is_scalar_overload(cand, *op, numbers, args, given)) {
            *op = cand;
            return TJ_OK;
        }
    }
    char msg[300];
    if (n == 1)
        snprintf(msg, sizeof msg, "%s: argument %s wants a Tensor; no overload takes a Scalar there", (*op)->name, names);
    else snprintf(msg, sizeof msg, "%s: arguments %s want Tensors; no overload takes Scalars there", (*op)->name, names);
    ps->p = at[first];
    return perr(ps, msg);
}

/* A Layout?, Device?, MemoryFormat? or Generator? argument (TJ_A_IGNORED):
 * None, or the value FX writes for what None means here, as torch 1.13's
 * make_fx records `zeros([2], layout = torch.strided, device =
 * device(type='cpu'))`; any other (a CUDA device, a sparse layout) is
 * refused by name rather than run as if it were None. */
static tj_status parse_ignored(parser *ps, const tj_op *op, int slot, tj_garg *a)
{
    static const struct {
        const char *arg, *values[2];
    } meaning_none[] = {
        {"layout", {"torch.strided"}},
        {"device", {"device(type='cpu')", "'cpu'"}},
        {"memory_format", {"torch.contiguous_format", "torch.preserve_format"}},
    };
    memset(a, 0, sizeof *a); /* None */
    if (accept(ps, "None")) return TJ_OK;
    const char *name = op->args[slot].name;
    char msg[256];
    for (size_t i = 0; i < sizeof meaning_none / sizeof *meaning_none; i++) {
        if (strcmp(meaning_none[i].arg, name) != 0) continue;
        for (int k = 0; k < 2 && meaning_none[i].values[k]; k++)
            if (accept(ps, meaning_none[i].values[k])) return TJ_OK;
        const char *const *v = meaning_none[i].values;
        snprintf(msg, sizeof msg, "%s: argument '%s' takes None%s%s or %s (tjit's tensors are strided, on the CPU)",
                 op->name, name, v[1] ? ", " : "", v[1] ? v[0] : "", v[1] ? v[1] : v[0]);
        return perr(ps, msg);
    }
    snprintf(msg, sizeof msg, "%s: argument '%s' takes None", op->name, name);
    return perr(ps, msg);
}

static tj_status parse_call(parser *ps, char names[][TJ_GRAPH_NAME_MAX + 1], int n_targets)
{
    char ns[32], base[64], overload[32], full[160], msg[256];
    if (!ident(ps, ns, sizeof ns) || !accept(ps, ".") || !ident(ps, base, sizeof base) || !accept(ps, ".") ||
        !ident(ps, overload, sizeof overload))
        return perr(ps, "expected an operator '<namespace>.<name>.<overload>' or 'constant'");
    snprintf(full, sizeof full, "%s::%s.%s", ns, base, overload);
    const tj_op *op = tj_op_find(full);
    if (!op) {
        snprintf(msg, sizeof msg, "unknown operator %s", full);
        return perr(ps, msg);
    }
    if (expect(ps, "(") != TJ_OK) return TJ_ERR_PARSE;
    tj_garg args[TJ_MAX_ARGS];
    bool given[TJ_MAX_ARGS] = {false};
    const char *at[TJ_MAX_ARGS];
    int pos = 0;
    bool keyword_seen = false;
    while (!accept(ps, ")")) {
        const char *save = ps->p;
        char kw[64];
        int slot = -1;
        if (ident(ps, kw, sizeof kw) && accept(ps, "=")) {
            keyword_seen = true;
            for (int i = 0; i < op->nargs; i++)
                if (strcmp(op->args[i].name, kw) == 0) slot = i;
            if (slot < 0) {
                snprintf(msg, sizeof msg, "%s has no argument '%s'", op->name, kw);
                return perr(ps, msg);
            }
        } else {
            ps->p = save;
            /* as Python: "positional argument follows keyword argument" */
            if (keyword_seen) return perr(ps, "a positional argument after a keyword argument");
            while (pos < op->nargs && op->args[pos].kwarg_only) pos++;
            if (pos >= op->nargs) {
                snprintf(msg, sizeof msg, "too many arguments for %s (%d)", op->name, op->nargs);
                return perr(ps, msg);
            }
            slot = pos++;
        }
        if (given[slot]) {
            snprintf(msg, sizeof msg, "argument '%s' given twice", op->args[slot].name);
            return perr(ps, msg);
        }
        skip_spaces(ps);
        at[slot] = ps->p;
        tj_status st = op->args[slot].type == TJ_A_IGNORED ? parse_ignored(ps, op, slot, &args[slot])
                                                          : parse_value(ps, &args[slot]);
        if (st != TJ_OK) return st;
        given[slot] = true;
        if (!accept(ps, ",") && (skip_spaces(ps), *ps->p != ')')) return perr(ps, "expected ',' or ')'");
    }
    if (use_scalar_overload(ps, &op, args, given, at) != TJ_OK) return TJ_ERR_PARSE;
    return add_call(ps, op, args, given, names, n_targets);
}

/* A list of values that is not t's element count: "expected ','" (or
 * "']'") said nothing of what was wrong. */
static tj_status element_count_error(parser *ps, const tj_tensor *t, int64_t given)
{
    char shape[160], msg[256];
    tj_shape_str(t->ndim, t->shape, shape, sizeof shape);
    const char *values = tj_noun(t->numel, "value", "values");
    if (given < t->numel)
        snprintf(msg, sizeof msg, "a constant of shape %s takes %" PRId64 " %s, the list ends after %" PRId64, shape,
                 t->numel, values, given);
    else
        snprintf(msg, sizeof msg, "a constant of shape %s takes %" PRId64 " %s, the list goes on after %s", shape,
                 t->numel, values, tj_noun(t->numel, "it", "them"));
    return perr(ps, msg);
}

/* "[v0, v1, ...]": every element of t, row-major. */
static tj_status parse_constant_data(parser *ps, tj_tensor *t)
{
    if (expect(ps, "[") != TJ_OK) return TJ_ERR_PARSE;
    tj_dtype dt = t->dtype;
    char *data = tj_tensor_ptr(t);
    for (int64_t i = 0; i < t->numel; i++) {
        skip_spaces(ps);
        if (*ps->p == ']') return element_count_error(ps, t, i);
        if (i && expect(ps, ",") != TJ_OK) return TJ_ERR_PARSE;
        tj_garg a;
        if (parse_value(ps, &a) != TJ_OK) return TJ_ERR_PARSE;
        /* checked before the element is read: a.u.b of an int element is
         * not a valid bool (undefined behaviour) */
        bool integral = tj_k_dtype_integral(dt) && dt != TJ_BOOL;
        if ((dt == TJ_BOOL) != (a.kind == TJ_GA_BOOL) || (integral && a.kind != TJ_GA_INT) ||
            (a.kind != TJ_GA_FLOAT && a.kind != TJ_GA_INT && a.kind != TJ_GA_BOOL))
            return perr(ps, "constant element does not match its dtype");
        char *at = data + i * (int64_t)tj_dtype_bytes(dt);
        if (a.kind == TJ_GA_BOOL) *at = a.u.b;
        else if (a.kind == TJ_GA_INT && integral) {
            tj_value v = tj_v_int(a.u.i);
            if (tj_scalar_check("constant", "element", &v, dt) != TJ_OK) {
                char msg[256]; /* perr's own message replaces the one it quotes */
                snprintf(msg, sizeof msg, "%s", tj_last_error());
                return perr(ps, msg);
            }
            tj_k_store_i64(at, dt, a.u.i);
        } else {
            tj_k_store_f64(at, dt, a.kind == TJ_GA_FLOAT ? a.u.f : (double)a.u.i);
        }
    }
    skip_spaces(ps);
    if (*ps->p == ',') return element_count_error(ps, t, t->numel + 1);
    return expect(ps, "]");
}

/* "%name : type = constant([values])", or "constant(name)" with the values
 * in the block "name = [values]" after 'return'. */
static tj_status parse_constant(parser *ps, const char *name)
{
    tj_dtype dt;
    int ndim;
    int64_t shape[TJ_MAX_DIMS], strides[TJ_MAX_DIMS];
    bool hs;
    if (parse_type(ps, &dt, &ndim, shape, strides, &hs) != TJ_OK) return TJ_ERR_PARSE;
    if (expect(ps, "=") != TJ_OK || expect(ps, "constant") != TJ_OK || expect(ps, "(") != TJ_OK) return TJ_ERR_PARSE;
    /* every element is written somewhere after this point, in at least one
     * character: a short text cannot make the parser allocate gigabytes.
     * The count saturates at INT64_MAX (f32[64, 3] in 30 characters of text
     * multiplied past it), and a dim of 0 empties the constant. */
    int64_t numel = 1;
    for (int d = 0; d < ndim && numel; d++)
        if (shape[d] == 0 || __builtin_mul_overflow(numel, shape[d], &numel)) numel = shape[d] == 0 ? 0 : INT64_MAX;
    if (numel > (int64_t)(ps->end - ps->p)) return perr(ps, "the constant has more elements than the rest of the text");
    tj_tensor *t = tj_tensor_empty(dt, ndim, shape);
    if (!t) return tj_last_status();
    t->storage->sealed = true; /* the graph's alone */
    char block[TJ_GRAPH_NAME_MAX + 1];
    bool deferred = ident(ps, block, sizeof block);
    if (deferred && strcmp(block, name) != 0) {
        char msg[400];
        snprintf(msg, sizeof msg, "constant(%s): the values of %%%s are written constant([...]) or constant(%s)", block,
                 name, name);
        return perr(ps, msg);
    }
    if (!deferred && parse_constant_data(ps, t) != TJ_OK) return TJ_ERR_PARSE;
    if (expect(ps, ")") != TJ_OK) return TJ_ERR_PARSE;
    if (free_generated_name(ps, name) != TJ_OK) return tj_last_status();
    if (find_value(ps, name) >= 0) return perr(ps, "value defined twice");
    int node = tj_graph_add_constant(ps->g, t, name);
    if (node < 0 || index_node(ps, node) != TJ_OK) return tj_last_status();
    tj_status st = name_value(ps, ps->g->nodes[node].outs[0], name);
    if (st != TJ_OK) return st;
    if (!deferred) return TJ_OK;
    struct deferred *grown = realloc(ps->deferred, sizeof *grown * (size_t)(ps->n_deferred + 1));
    if (!grown) return tj_error(TJ_ERR_OUT_OF_MEMORY, "tj_graph_parse: out of memory");
    ps->deferred = grown;
    ps->deferred[ps->n_deferred++] = (struct deferred){node, false};
    return TJ_OK;
}

/* After 'return': one "name = [values]" line per constant written
 * "constant(name)", each once; the first constant left without values is
 * named. */
static tj_status parse_constant_blocks(parser *ps)
{
    for (skip_blank_lines(ps); *ps->p; skip_blank_lines(ps)) {
        char name[TJ_GRAPH_NAME_MAX + 1], msg[320];
        skip_spaces(ps);
        const char *start = ps->p;
        if (!ident(ps, name, sizeof name)) return perr(ps, "expected a constant's values 'name = [...]' after 'return'");
        int v = find_value(ps, name), k = 0;
        int node = v >= 0 ? ps->g->values[v].node : -1;
        while (k < ps->n_deferred && ps->deferred[k].node != node) k++;
        if (k == ps->n_deferred || ps->deferred[k].filled) {
            ps->p = start;
            if (k < ps->n_deferred) snprintf(msg, sizeof msg, "the values of constant %%%s are given twice", name);
            else if (v < 0 && strcmp(name, "return") == 0) snprintf(msg, sizeof msg, "a second 'return' (a graph has one)");
            else if (v < 0) snprintf(msg, sizeof msg, "values for %%%s, which is not defined", name);
            else snprintf(msg, sizeof msg, "values for %%%s, which is no constant written 'constant(%s)'", name, name);
            return perr(ps, msg);
        }
        ps->deferred[k].filled = true;
        if (expect(ps, "=") != TJ_OK || parse_constant_data(ps, ps->g->nodes[node].constant) != TJ_OK)
            return TJ_ERR_PARSE;
        if (!end_of_line(ps)) return perr(ps, "expected the end of the line");
    }
    for (int k = 0; k < ps->n_deferred; k++) {
        if (ps->deferred[k].filled) continue;
        char msg[192];
        const tj_gnode *n = &ps->g->nodes[ps->deferred[k].node];
        snprintf(msg, sizeof msg, "missing the values of constant %%%s after 'return'", ps->g->values[n->outs[0]].name);
        return perr(ps, msg);
    }
    return TJ_OK;
}

/* The value of input j of the graph being parsed. */
static const tj_gvalue *input_value(const parser *ps, int j)
{
    for (int i = 0; i < ps->g->n_nodes; i++) {
        const tj_gnode *n = &ps->g->nodes[i];
        if (n->kind == TJ_NODE_PLACEHOLDER && n->input_index == j) return &ps->g->values[n->outs[0]];
    }
    return NULL;
}

/* Output k, written back into input wb[k], is that input's new value: one
 * output per input, of the input's dtype and shape, as tj_compile requires
 * (tj_graph_run would otherwise copy_ a broadcast or converted value, or
 * two values, into the input that a plan of the same text refuses). */
static tj_status check_writeback(parser *ps, const int *wb, int k)
{
    char msg[400], a[128], b[128];
    for (int e = 0; e < k; e++)
        if (wb[e] == wb[k]) {
            snprintf(msg, sizeof msg, "writeback: input %d is written back by two outputs (%d and %d)", wb[k], e, k);
            return perr(ps, msg);
        }
    const tj_gnode *out = &ps->g->nodes[ps->g->output_node];
    int ov = tj_garg_value_at(&out->args[k], 0), root = tj_graph_input_root(ps->g, ov);
    for (int m = 0; root >= 0 && m < out->nargs; m++)
        if (m != k && wb[m] == root) { /* as tj_compile refuses it */
            snprintf(msg, sizeof msg, "writeback: output %d (%%%s) is input %d or a view of it, which output %d is "
                     "written back into: the write-backs run one after another, so it would take that new value "
                     "(write a copy, aten.clone)", k, ps->g->values[ov].name, root, m);
            return perr(ps, msg);
        }
    const tj_gvalue *o = &ps->g->values[ov], *x = input_value(ps, wb[k]);
    bool same = o->dtype == x->dtype && o->ndim == x->ndim;
    for (int d = 0; same && d < o->ndim; d++) same = o->shape[d] == x->shape[d];
    if (same) return TJ_OK;
    snprintf(msg, sizeof msg, "writeback: output %d (%%%s, %s%s) cannot be written back to input %d (%%%s, %s%s)", k,
             o->name, tj_dtype_name(o->dtype), tj_shape_str(o->ndim, o->shape, a, sizeof a), wb[k], x->name,
             tj_dtype_name(x->dtype), tj_shape_str(x->ndim, x->shape, b, sizeof b));
    return perr(ps, msg);
}

/* "{1: 0, 2: 3}" after a return: output index -> input index. */
static tj_status parse_writeback(parser *ps, int n_outputs)
{
    int *wb = tj_graph_alloc(ps->g, sizeof(int) * (size_t)(n_outputs ? n_outputs : 1));
    if (!wb) return tj_last_status();
    for (int i = 0; i < n_outputs; i++) wb[i] = -1;
    if (expect(ps, "{") != TJ_OK) return TJ_ERR_PARSE;
    while (!accept(ps, "}")) {
        int64_t out = 0, in = 0; /* set by parse_int, which GCC does not see through */
        if (parse_int(ps, &out) != TJ_OK || expect(ps, ":") != TJ_OK || parse_int(ps, &in) != TJ_OK) return TJ_ERR_PARSE;
        if (out < 0 || out >= n_outputs || in < 0 || in >= ps->g->n_inputs || wb[out] >= 0)
            return perr(ps, "writeback: an output index, ':', and an input index, each output once");
        wb[out] = (int)in;
        if (!accept(ps, ",") && (skip_spaces(ps), *ps->p != '}')) return perr(ps, "expected ',' or '}'");
    }
    for (int k = 0; k < n_outputs; k++)
        if (wb[k] >= 0 && check_writeback(ps, wb, k) != TJ_OK) return TJ_ERR_PARSE;
    ps->g->nodes[ps->g->output_node].writeback = wb;
    return TJ_OK;
}

/* Whether a placeholder's last element, offset + sum (size - 1) * stride,
 * lies beyond INT64_MAX: every span computed from it would overflow. */
static bool geometry_overflows(int ndim, const int64_t *shape, const int64_t *strides, int64_t offset)
{
    int64_t last = offset, step;
    for (int d = 0; d < ndim; d++)
        if (shape[d] == 0) return false;
    for (int d = 0; d < ndim; d++)
        if (__builtin_mul_overflow(shape[d] - 1, strides[d], &step) || __builtin_add_overflow(last, step, &last) ||
            last == INT64_MAX)
            return true;
    return offset == INT64_MAX;
}

static tj_status parse_body(parser *ps)
{
    /* a UTF-8 byte order mark, as some editors save text, before anything else */
    if (!strncmp(ps->p, "\xEF\xBB\xBF", 3)) ps->p += 3, ps->line_start = ps->p;
    if (expect(ps, "graph") != TJ_OK || expect(ps, "(") != TJ_OK) return TJ_ERR_PARSE;
    while (!accept(ps, ")")) {
        char name[TJ_GRAPH_NAME_MAX + 1];
        if (!accept(ps, "%") || !ident(ps, name, sizeof name)) return perr(ps, "expected a placeholder '%name : type'");
        if (expect(ps, ":") != TJ_OK) return TJ_ERR_PARSE;
        tj_meta m = {.alias = -1};
        int64_t strides[TJ_MAX_DIMS];
        bool hs;
        int64_t offset;
        char *bound;
        if (parse_type(ps, &m.dtype, &m.ndim, m.shape, strides, &hs) != TJ_OK) return TJ_ERR_PARSE;
        tj_status st = parse_geometry_suffix(ps, &offset, &bound);
        if (st != TJ_OK) return st;
        if (find_value(ps, name) >= 0) return perr(ps, "placeholder defined twice");
        if (!hs) tj_contiguous_strides(m.ndim, m.shape, strides);
        if (geometry_overflows(m.ndim, m.shape, strides, offset))
            return perr(ps, "the placeholder's strides and offset reach an element beyond INT64_MAX");
        tj_tensor *like = tj_tensor_new_meta(&m, true);
        if (!like) return tj_last_status();
        memcpy(like->strides, strides, sizeof strides);
        like->offset = offset;
        int node = tj_graph_add_placeholder(ps->g, like, name);
        tj_tensor_release(like);
        if (node < 0 || index_node(ps, node) != TJ_OK) return tj_last_status();
        ps->g->values[ps->g->nodes[node].outs[0]].geometry_bound = bound;
        if (!accept(ps, ",") && (skip_spaces(ps), *ps->p != ')')) return perr(ps, "expected ',' or ')'");
    }
    if (expect(ps, ":") != TJ_OK) return TJ_ERR_PARSE;
    if (!end_of_line(ps)) return perr(ps, "expected the end of the line");
    for (;;) {
        skip_blank_lines(ps);
        if (!*ps->p) return perr(ps, "missing 'return'");
        if (accept(ps, "return")) {
            int vals[TJ_MAX_GRAPH_OUTPUTS], n = 0;
            if (expect(ps, "(") != TJ_OK) return TJ_ERR_PARSE;
            while (!accept(ps, ")")) {
                if (n == TJ_MAX_GRAPH_OUTPUTS) return perr(ps, "too many outputs");
                if (value_ref(ps, &vals[n++]) != TJ_OK) return TJ_ERR_PARSE;
                if (!accept(ps, ",") && (skip_spaces(ps), *ps->p != ')')) return perr(ps, "expected ',' or ')'");
            }
            if (tj_graph_add_output(ps->g, vals, n) < 0) return tj_last_status();
            if (accept(ps, "writeback") && parse_writeback(ps, n) != TJ_OK) return TJ_ERR_PARSE;
            if (!end_of_line(ps)) return perr(ps, "expected the end of the line after 'return'");
            return parse_constant_blocks(ps);
        }
        char names[TJ_MAX_RETURNS][TJ_GRAPH_NAME_MAX + 1];
        int nt = 0;
        do {
            if (nt == TJ_MAX_RETURNS) return perr(ps, "too many names on the left");
            if (accept(ps, "_")) {
                names[nt++][0] = 0;
                continue;
            }
            if (!accept(ps, "%") || !ident(ps, names[nt], sizeof names[nt])) return perr(ps, "expected '%name'");
            nt++;
        } while (accept(ps, ","));
        tj_status st;
        if (nt == 1 && accept(ps, ":"))
            st = names[0][0] ? parse_constant(ps, names[0]) : perr(ps, "a constant is named '%name', not '_'");
        else st = expect(ps, "=") == TJ_OK ? parse_call(ps, names, nt) : TJ_ERR_PARSE;
        if (st != TJ_OK) return st;
        if (!end_of_line(ps)) return perr(ps, "expected the end of the line");
    }
}

tj_graph *tj_graph_parse(const char *text)
{
    if (!text) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_graph_parse: NULL text");
        return NULL;
    }
    parser ps = {.text = text, .p = text, .end = text + strlen(text), .line = 1, .line_start = text};
    ps.g = tj_graph_new();
    if (!ps.g) return NULL;
    tj_scope *scope = tj_scope_begin();
    tj_status st = scope ? parse_body(&ps) : tj_last_status();
    if (scope) tj_scope_end(scope);
    tj_fake_values_free(&ps.fakes);
    tj_key_map_free(&ps.by_name);
    free(ps.deferred);
    free(ps.generated);
    if (st != TJ_OK) {
        tj_graph_free(ps.g);
        return NULL;
    }
    tj_graph_count_uses(ps.g);
    return ps.g;
}
