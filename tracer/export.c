/* Graph exports for tools: Graphviz DOT (`dot -Tsvg` draws it) and JSON. */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>

#include "graph_internal.h"
#include "print.h"

/* Text inside a DOT label: its quote and backslash escaped (DOT reads
 * "\\n", "\\l", ... as line breaks). */
static void dot_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        fputc(*s, f);
    }
}

/* A placeholder's geometry beyond its shape and strides, as its text form
 * gives it: the storage offset where not 0, and why the graph holds for
 * its strides and offset only (tj_gvalue.geometry_bound), on a line of its
 * own. */
static void dot_geometry(FILE *f, const tj_gvalue *v)
{
    if (v->offset) fprintf(f, " offset %" PRId64, v->offset);
    if (!v->geometry_bound) return;
    fprintf(f, "\\nbound: ");
    dot_text(f, v->geometry_bound);
}

static void dot_label(FILE *f, const tj_graph *g, const tj_gnode *n)
{
    const char *kind = n->kind == TJ_NODE_PLACEHOLDER ? "placeholder" : n->kind == TJ_NODE_CONSTANT ? "constant" : NULL;
    fprintf(f, "\"%s\\n", tj_graph_node_name(g, (int)(n - g->nodes)));
    if (kind) fprintf(f, "%s", kind);
    else tj_print_target(f, n->op);
    for (int k = 0; k < n->nout; k++) {
        if (n->outs[k] < 0) continue;
        const tj_gvalue *v = &g->values[n->outs[k]];
        fprintf(f, "\\n");
        bool placeholder = n->kind == TJ_NODE_PLACEHOLDER; /* strides where not row-major */
        tj_print_type(f, v->dtype, v->ndim, v->shape, placeholder ? v->strides : NULL);
        if (placeholder) dot_geometry(f, v);
    }
    fprintf(f, "\"");
}

tj_status tj_graph_write_dot(const tj_graph *g, FILE *f)
{
    if (!g) return tj_error_null("tj_graph_write_dot: NULL graph");
    if (!f) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_graph_write_dot: NULL file");
    fprintf(f, "digraph graph_module {\n    rankdir=TB;\n    node [shape=box, fontname=\"monospace\"];\n");
    for (int i = 0; i < g->n_nodes; i++) {
        const tj_gnode *n = &g->nodes[i];
        fprintf(f, "    n%d [label=", i);
        if (n->kind == TJ_NODE_OUTPUT) fprintf(f, "\"output\"");
        else dot_label(f, g, n);
        if (n->kind == TJ_NODE_PLACEHOLDER || n->kind == TJ_NODE_OUTPUT) fprintf(f, ", style=rounded");
        fprintf(f, "];\n");
        for (int a = 0; a < n->nargs; a++) {
            const tj_garg *arg = &n->args[a];
            for (int k = 0; k < tj_garg_n_values(arg); k++) {
                int v = tj_garg_value_at(arg, k);
                if (v >= 0) fprintf(f, "    n%d -> n%d;\n", g->values[v].node, i);
            }
        }
    }
    fprintf(f, "}\n");
    return tj_check_written(f, "tj_graph_write_dot", NULL);
}

/* Appends v to *arr; out of memory (v NULL or the append failing) drops
 * the array and leaves *arr NULL, which later appends (they drop their
 * value) and json_pack's "o" (it fails) carry up to the caller. */
static void append(json_t **arr, json_t *v)
{
    if (json_array_append_new(*arr, v) != 0) {
        json_decref(*arr);
        *arr = NULL;
    }
}

/* Sets obj[key] = v, with append's rule for out of memory. */
static void set(json_t **obj, const char *key, json_t *v)
{
    if (json_object_set_new(*obj, key, v) != 0) {
        json_decref(*obj);
        *obj = NULL;
    }
}

static json_t *ints_json(const int64_t *v, int n)
{
    json_t *arr = json_array();
    for (int i = 0; i < n; i++) append(&arr, json_integer((json_int_t)v[i]));
    return arr;
}

/* A value as JSON; NULL when out of memory. */
static json_t *value_json(const tj_gvalue *v)
{
    return json_pack("{s:s, s:s, s:o, s:o, s:I}", "name", v->name, "dtype", tj_dtype_name(v->dtype), "shape",
                     ints_json(v->shape, v->ndim), "strides", ints_json(v->strides, v->ndim), "offset",
                     (json_int_t)v->offset);
}

/* An input: its value, and "geometry_bound": what made the graph hold for
 * its strides and offset only, null when it holds for any. */
static json_t *input_json(const tj_gvalue *v)
{
    json_t *in = value_json(v);
    set(&in, "geometry_bound", v->geometry_bound ? json_string(v->geometry_bound) : json_null());
    return in;
}

/* A float as a JSON number, or {"float": "inf"} where JSON has none. */
static json_t *json_float(double f)
{
    char buf[64];
    tj_format_float(f, buf, sizeof buf);
    return isfinite(f) ? json_real(f) : json_pack("{s:s}", "float", buf);
}

/* A constant's elements in row-major order of its shape (floats as
 * json_float, integers exactly, bools as true/false), or null for a fake
 * tensor, which has none; NULL when out of memory. */
static json_t *constant_values(const tj_tensor *t)
{
    if (tj_tensor_is_fake(t)) return json_null();
    int64_t n = tj_tensor_numel(t);
    size_t es = tj_dtype_size(tj_tensor_dtype(t)), bytes = (size_t)n * es;
    char *buf = tj_alloc(bytes ? bytes : 1);
    json_t *arr = buf ? json_array() : NULL;
    if (arr && tj_tensor_copy_to(t, buf) != TJ_OK) {
        json_decref(arr);
        arr = NULL;
    }
    for (int64_t i = 0; arr && i < n; i++) {
        const char *e = buf + (size_t)i * es;
        tj_dtype dt = tj_tensor_dtype(t);
        json_t *v = dt == TJ_BOOL                ? json_boolean(*(const uint8_t *)e)
                    : tj_k_dtype_integral(dt) ? json_integer((json_int_t)tj_load_i64(e, dt))
                                              : json_float(tj_load_f64(e, dt));
        append(&arr, v);
    }
    if (buf) tj_free(buf, bytes ? bytes : 1);
    return arr;
}

/* A str argument: a JSON string, or {"bytes": [116, 255, ...]}, its bytes,
 * where it is not UTF-8, which JSON strings must be (json_string refuses
 * it, and the argument went missing from "args"). */
static json_t *json_str(const char *s)
{
    if (tj_utf8_valid(s)) return json_string(s);
    json_t *bytes = json_array();
    for (const unsigned char *b = (const unsigned char *)s; bytes && *b; b++) append(&bytes, json_integer(*b));
    return json_pack("{s:o}", "bytes", bytes);
}

/* An argument as JSON; NULL when out of memory. */
static json_t *json_arg(const tj_graph *g, const tj_garg *a)
{
    json_t *arr;
    switch (a->kind) {
    case TJ_GA_NONE: return json_null();
    case TJ_GA_VALUE: return json_pack("{s:s}", "value", g->values[a->u.v].name);
    case TJ_GA_VALUES:
        arr = json_array();
        for (int i = 0; i < a->n; i++)
            append(&arr, a->u.vs[i] < 0 ? json_null() : json_string(g->values[a->u.vs[i]].name));
        return json_pack("{s:o}", "values", arr);
    case TJ_GA_INT: return json_integer(a->u.i);
    case TJ_GA_FLOAT: return json_float(a->u.f);
    case TJ_GA_BOOL: return json_boolean(a->u.b);
    case TJ_GA_INTS: return ints_json(a->u.ints, a->n);
    case TJ_GA_BOOLS:
        arr = json_array();
        for (int i = 0; i < a->n; i++) append(&arr, json_boolean(a->u.bools[i]));
        return arr;
    case TJ_GA_FLOATS:
        arr = json_array();
        for (int i = 0; i < a->n; i++) append(&arr, json_float(a->u.floats[i]));
        return arr;
    case TJ_GA_STR: return json_str(a->u.s);
    case TJ_GA_DTYPE: return json_pack("{s:s}", "dtype", tj_dtype_name(a->u.dtype));
    }
    return json_null();
}

tj_status tj_graph_write_json(const tj_graph *g, FILE *f)
{
    if (!g) return tj_error_null("tj_graph_write_json: NULL graph");
    if (!f) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_graph_write_json: NULL file");
    json_t *inputs = json_array(), *nodes = json_array(), *outputs = json_array();
    for (int i = 0; i < g->n_nodes; i++) {
        const tj_gnode *n = &g->nodes[i];
        if (n->kind == TJ_NODE_PLACEHOLDER) {
            append(&inputs, input_json(&g->values[n->outs[0]]));
        } else if (n->kind == TJ_NODE_OUTPUT) {
            for (int k = 0; k < n->nargs; k++) append(&outputs, json_string(g->values[n->args[k].u.v].name));
        } else {
            json_t *outs = json_array();
            for (int k = 0; k < n->nout; k++) append(&outs, n->outs[k] < 0 ? json_null() : value_json(&g->values[n->outs[k]]));
            json_t *node = json_pack("{s:s, s:o}", "kind", n->kind == TJ_NODE_CALL ? "call" : "constant", "outputs", outs);
            if (n->kind == TJ_NODE_CALL) {
                json_t *args = json_array();
                for (int a = 0; a < n->nargs; a++) append(&args, json_arg(g, &n->args[a]));
                set(&node, "op", json_string(n->op->name));
                set(&node, "args", args);
            } else {
                set(&node, "values", constant_values(n->constant));
            }
            append(&nodes, node);
        }
    }
    /* json_pack fails on a NULL part (and releases the others) */
    json_t *root = json_pack("{s:o, s:o, s:o}", "inputs", inputs, "nodes", nodes, "outputs", outputs);
    if (!root) return tj_oom("tj_graph_write_json", 0);
    int rc = json_dumpf(root, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(root);
    fputc('\n', f);
    tj_status st = tj_check_written(f, "tj_graph_write_json", NULL);
    /* a dump that failed with the stream intact ran out of memory */
    if (st == TJ_OK && rc != 0) st = tj_oom("tj_graph_write_json", 0);
    return st;
}
