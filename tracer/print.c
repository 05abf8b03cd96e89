/* The graph printer: FX-style text that tj_graph_parse reads back.
 *
 *     graph(%x : f32[2, 3], %w : f32[3]):
 *         %_tensor_constant0 : f32[3] = constant([1.0, 2.0, 3.0])
 *         %add = aten.add.Tensor(%x, %w)
 *         %getitem, %getitem_1, %getitem_2 = aten.native_layer_norm.default(%add, [3], None, None, 1e-05)
 *         return (%add, %getitem)
 *
 * A placeholder's type carries its strides where they are not row-major
 * (`f32[3, 2]{1, 3}`) and its storage offset where it is not 0
 * (`f32[2, 2]{3, 1} offset 1`). One whose geometry a gradient formula read
 * (the graph holds for that geometry only, tj_gvalue.geometry_bound) writes
 * strides and offset always and the reason in double quotes:
 *
 *     graph(%arg0_1 : f32[2, 3]{3, 1} offset 0 bound "aten::as_strided's gradient", %arg1_1 : f32[2, 3]):
 *
 * A graph whose outputs are written back into inputs (functionalised
 * mutations) ends its return line with "writeback {2: 0}" (output 2 goes
 * into input 0).
 *
 * A constant of more than PRINT_INLINE_MAX elements (a causal mask) would
 * bury the graph under its values: it is written "constant(name)" and its
 * values follow the return line, one "name = [...]" line each, as FX keeps
 * tensor constants out of the graph (get_attr) in the module's attributes.
 *
 * Trailing arguments equal to their schema default are omitted, keyword-only
 * arguments are written `name = value`, floats are written with the fewest
 * digits that read back to the same bits, those of a float32 constant to the
 * same float32 (1e-45, not 1.401298464324817e-45), and always with a '.' or
 * an exponent, so that a float Scalar never reads back as an int. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "print.h"

#define PRINT_INLINE_MAX 16 /* elements of a constant written in the graph's body */

/* f with the fewest significant digits that read back to it, as a double or,
 * when `single`, as a float32 (the parser reads a float32 constant's element
 * with strtod, then rounds it to float32: the same test here), laid out as
 * Python's repr lays them out. */
static void format_shortest(double f, bool single, char *buf, size_t n)
{
    if (isnan(f)) {
        snprintf(buf, n, "nan");
        return;
    }
    if (isinf(f)) {
        snprintf(buf, n, f > 0 ? "inf" : "-inf");
        return;
    }
    /* fixed notation for decimal exponents -4 to 15 (100.0, 0.0001,
     * 1234567890123456.0), else scientific (1e+16, 1e-05, 1.5e+300); %g
     * would write 100.0 as 1e+02. 9 digits always read back to a float32,
     * 17 to a double. */
    int digits = 1, max_digits = single ? 9 : 17;
    char sci[40];
    for (; digits < max_digits; digits++) {
        snprintf(sci, sizeof sci, "%.*e", digits - 1, f);
        double back = strtod(sci, NULL);
        if (single ? (float)back == (float)f : back == f) break;
    }
    snprintf(sci, sizeof sci, "%.*e", digits - 1, f);
    int exp10 = atoi(strchr(sci, 'e') + 1);
    if (exp10 >= -4 && exp10 < 16) snprintf(buf, n, "%.*f", digits - 1 - exp10 > 0 ? digits - 1 - exp10 : 0, f);
    else snprintf(buf, n, "%.*g", digits, f);
    if (!strpbrk(buf, ".e")) strncat(buf, ".0", n - strlen(buf) - 1);
}

void tj_format_float(double f, char *buf, size_t n) { format_shortest(f, false, buf, n); }

void tj_format_float32(float f, char *buf, size_t n) { format_shortest(f, true, buf, n); }


/* "{3, 1}" */
static void print_strides(FILE *f, int ndim, const int64_t *strides)
{
    fprintf(f, "{");
    for (int d = 0; d < ndim; d++) fprintf(f, d ? ", %" PRId64 : "%" PRId64, strides[d]);
    fprintf(f, "}");
}

void tj_print_type(FILE *f, tj_dtype dtype, int ndim, const int64_t *shape, const int64_t *strides)
{
    fprintf(f, "%s[", tj_dtype_short_name(dtype));
    for (int d = 0; d < ndim; d++) fprintf(f, d ? ", %" PRId64 : "%" PRId64, shape[d]);
    fprintf(f, "]");
    if (!strides) return;
    int64_t c[TJ_MAX_DIMS];
    tj_contiguous_strides(ndim, shape, c);
    bool contiguous = true;
    for (int d = 0; d < ndim; d++)
        if (shape[d] != 1 && strides[d] != c[d]) contiguous = false;
    if (!contiguous) print_strides(f, ndim, strides);
}

/* A placeholder's type and geometry: a bound one (tj_gvalue.geometry_bound)
 * writes the geometry it holds for in full, strides of size-1 dims and
 * offset 0 included: `f32[2, 3]{3, 1} offset 0 bound "who"`; another its
 * strides where not contiguous and its offset where not 0. */
static void print_placeholder_type(FILE *f, const tj_gvalue *v)
{
    if (!v->geometry_bound) {
        tj_print_type(f, v->dtype, v->ndim, v->shape, v->strides);
        if (v->offset) fprintf(f, " offset %" PRId64, v->offset);
        return;
    }
    tj_print_type(f, v->dtype, v->ndim, v->shape, NULL);
    print_strides(f, v->ndim, v->strides);
    fprintf(f, " offset %" PRId64 " bound \"%s\"", v->offset, v->geometry_bound);
}

static bool arg_equals_default(const tj_garg *a, const tj_arg_spec *s)
{
    if (!s->has_default) return false;
    const tj_value *d = &s->def;
    switch (a->kind) {
    case TJ_GA_NONE: return d->kind == TJ_V_NONE;
    case TJ_GA_INT: return d->kind == TJ_V_INT && d->u.i == a->u.i;
    case TJ_GA_FLOAT: return d->kind == TJ_V_FLOAT && memcmp(&d->u.f, &a->u.f, sizeof(double)) == 0;
    case TJ_GA_BOOL: return d->kind == TJ_V_BOOL && d->u.b == a->u.b;
    case TJ_GA_STR: return d->kind == TJ_V_STR && strcmp(d->u.s, a->u.s) == 0;
    case TJ_GA_INTS:
        if (d->kind != TJ_V_INTS || d->n != a->n) return false;
        for (int i = 0; i < a->n; i++)
            if (d->u.ints[i] != a->u.ints[i]) return false;
        return true;
    default: return false;
    }
}

/* A str argument in single quotes, escaped as Python's repr escapes one
 * (\\, \', \n, \r, \t, else \xNN for a control character) and so is
 * each byte that is no part of a UTF-8 character (\xNN: that byte): every
 * string reads back the same, on one line (a quote or a newline in it made
 * text that did not parse). */
static void print_str(FILE *f, const char *s)
{
    fputc('\'', f);
    for (int n; *s; s += n) {
        unsigned char c = (unsigned char)*s;
        if ((n = tj_utf8_char_len(s)) > 1) {
            fwrite(s, 1, (size_t)n, f);
            continue;
        }
        n = 1;
        if (c == '\\' || c == '\'') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\r') fputs("\\r", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c < 0x20 || c >= 0x7f) fprintf(f, "\\x%02x", c);
        else fputc(c, f);
    }
    fputc('\'', f);
}

void tj_print_garg(FILE *f, const tj_graph *g, const tj_garg *a)
{
    char buf[64];
    switch (a->kind) {
    case TJ_GA_NONE: fprintf(f, "None"); break;
    case TJ_GA_VALUE: fprintf(f, "%%%s", g->values[a->u.v].name); break;
    case TJ_GA_VALUES:
        fprintf(f, "[");
        for (int i = 0; i < a->n; i++) {
            if (i) fprintf(f, ", ");
            if (a->u.vs[i] < 0) fprintf(f, "None"); /* FX's None entry of a Tensor?[] */
            else fprintf(f, "%%%s", g->values[a->u.vs[i]].name);
        }
        fprintf(f, "]");
        break;
    case TJ_GA_INT: fprintf(f, "%" PRId64, a->u.i); break;
    case TJ_GA_FLOAT:
        tj_format_float(a->u.f, buf, sizeof buf);
        fprintf(f, "%s", buf);
        break;
    case TJ_GA_BOOL: fprintf(f, a->u.b ? "True" : "False"); break;
    case TJ_GA_INTS:
        fprintf(f, "[");
        for (int i = 0; i < a->n; i++) fprintf(f, i ? ", %" PRId64 : "%" PRId64, a->u.ints[i]);
        fprintf(f, "]");
        break;
    case TJ_GA_BOOLS:
        fprintf(f, "[");
        for (int i = 0; i < a->n; i++) fprintf(f, i ? ", %s" : "%s", a->u.bools[i] ? "True" : "False");
        fprintf(f, "]");
        break;
    case TJ_GA_FLOATS:
        fprintf(f, "[");
        for (int i = 0; i < a->n; i++) {
            tj_format_float(a->u.floats[i], buf, sizeof buf);
            fprintf(f, i ? ", %s" : "%s", buf);
        }
        fprintf(f, "]");
        break;
    case TJ_GA_STR: print_str(f, a->u.s); break;
    case TJ_GA_DTYPE: fprintf(f, "torch.%s", tj_dtype_name(a->u.dtype)); break;
    }
}

/* "aten.add.Tensor" / "mylib.scaled_add.default" as FX prints targets. */
void tj_print_target(FILE *f, const tj_op *op)
{
    fprintf(f, "%s.%s.%s", op->ns, op->base, op->overload[0] ? op->overload : "default");
}

static void print_constant_data(FILE *f, const tj_tensor *t)
{
    char buf[64];
    fprintf(f, "[");
    for (int64_t i = 0; i < t->numel; i++) {
        double v = tj_tensor_item_at(t, i);
        if (i) fprintf(f, ", ");
        if (t->dtype == TJ_BOOL) {
            fprintf(f, v != 0 ? "True" : "False");
        } else if (t->dtype == TJ_FLOAT64) {
            tj_format_float(v, buf, sizeof buf);
            fprintf(f, "%s", buf);
        } else if (!tj_k_dtype_integral(t->dtype)) { /* float32, float16, bfloat16: exact as float32 */
            tj_format_float32((float)v, buf, sizeof buf);
            fprintf(f, "%s", buf);
        } else { /* the exact integer, not through a double */
            int64_t off = 0, rem = i;
            for (int d = t->ndim - 1; d >= 0; d--) {
                off += rem % t->shape[d] * t->strides[d];
                rem /= t->shape[d];
            }
            fprintf(f, "%" PRId64, tj_load_i64(tj_tensor_ptr(t) + off * (int64_t)tj_dtype_bytes(t->dtype), t->dtype));
        }
    }
    fprintf(f, "]");
}

/* " writeback {1: 0}": output 1 is written back into input 0. */
static void print_writeback(FILE *f, const tj_gnode *n)
{
    bool first = true;
    for (int i = 0; n->writeback && i < n->nargs; i++) {
        if (n->writeback[i] < 0) continue;
        fprintf(f, "%s%d: %d", first ? " writeback {" : ", ", i, n->writeback[i]);
        first = false;
    }
    if (!first) fprintf(f, "}");
}

static void print_node(FILE *f, const tj_graph *g, const tj_gnode *n)
{
    switch (n->kind) {
    case TJ_NODE_PLACEHOLDER: return;
    case TJ_NODE_CONSTANT: {
        const tj_gvalue *v = &g->values[n->outs[0]];
        fprintf(f, "    %%%s : ", v->name);
        tj_print_type(f, v->dtype, v->ndim, v->shape, NULL);
        fprintf(f, " = constant(");
        if (n->constant->numel > PRINT_INLINE_MAX) fprintf(f, "%s", v->name);
        else print_constant_data(f, n->constant);
        fprintf(f, ")\n");
        return;
    }
    case TJ_NODE_OUTPUT:
        fprintf(f, "    return (");
        for (int i = 0; i < n->nargs; i++) fprintf(f, i ? ", %%%s" : "%%%s", g->values[n->args[i].u.v].name);
        fprintf(f, n->nargs == 1 ? ",)" : ")");
        print_writeback(f, n);
        fprintf(f, "\n");
        return;
    case TJ_NODE_CALL: break;
    }
    fprintf(f, "    ");
    for (int i = 0; i < n->nout; i++) {
        if (i) fprintf(f, ", ");
        if (n->outs[i] < 0) fprintf(f, "_");
        else fprintf(f, "%%%s", g->values[n->outs[i]].name);
    }
    fprintf(f, " = ");
    tj_print_target(f, n->op);
    fprintf(f, "(");
    int last = n->nargs;
    while (last > 0 && arg_equals_default(&n->args[last - 1], &n->op->args[last - 1])) last--;
    bool first = true;
    for (int i = 0; i < n->nargs; i++) {
        const tj_arg_spec *s = &n->op->args[i];
        if (s->kwarg_only) {
            if (arg_equals_default(&n->args[i], s)) continue;
            fprintf(f, first ? "%s = " : ", %s = ", s->name);
        } else {
            if (i >= last) continue;
            if (!first) fprintf(f, ", ");
        }
        tj_print_garg(f, g, &n->args[i]);
        first = false;
    }
    fprintf(f, ")\n");
}

tj_status tj_graph_print(const tj_graph *g, FILE *f)
{
    if (!g) return tj_error_null("tj_graph_print: NULL graph");
    if (!f) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_graph_print: NULL file");
    fprintf(f, "graph(");
    bool first = true;
    for (int i = 0; i < g->n_nodes; i++) {
        const tj_gnode *n = &g->nodes[i];
        if (n->kind != TJ_NODE_PLACEHOLDER) continue;
        const tj_gvalue *v = &g->values[n->outs[0]];
        fprintf(f, first ? "%%%s : " : ", %%%s : ", v->name);
        print_placeholder_type(f, v);
        first = false;
    }
    fprintf(f, "):\n");
    for (int i = 0; i < g->n_nodes; i++) print_node(f, g, &g->nodes[i]);
    for (int i = 0; i < g->n_nodes; i++) {
        const tj_gnode *n = &g->nodes[i];
        if (n->kind != TJ_NODE_CONSTANT || n->constant->numel <= PRINT_INLINE_MAX) continue;
        fprintf(f, "%s = ", g->values[n->outs[0]].name);
        print_constant_data(f, n->constant);
        fprintf(f, "\n");
    }
    return tj_check_written(f, "tj_graph_print", NULL);
}

static tj_status print_graph(const void *g, FILE *f) { return tj_graph_print(g, f); }

char *tj_graph_to_string(const tj_graph *g) { return tj_print_to_string(print_graph, g, "tj_graph_to_string", false); }
