/* The graph IR: construction, naming, arena, inspection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "runtime/op_view.h"

/* ---- arena ---- */
void *tj_graph_alloc(tj_graph *g, size_t n) { return tj_pool_alloc(g->arena, n); }

char *tj_graph_strdup(tj_graph *g, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = tj_graph_alloc(g, n);
    if (d) memcpy(d, s, n);
    return d;
}

/* ---- names: an open-addressing set of names, plus a counter per base ---- */
typedef struct name_slot {
    const char *name;
    int next_suffix; /* for a base name: the next _N to try */
} name_slot;

struct name_table {
    name_slot *slots;
    size_t cap, count;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

static name_slot *name_find(name_table *t, const char *name)
{
    size_t i = hash_str(name) & (t->cap - 1);
    while (t->slots[i].name && strcmp(t->slots[i].name, name) != 0) i = (i + 1) & (t->cap - 1);
    return &t->slots[i];
}

static bool name_grow(name_table *t)
{
    size_t cap = t->cap ? t->cap * 2 : 256;
    name_slot *old = t->slots;
    size_t oldcap = t->cap;
    t->slots = tj_alloc(cap * sizeof *t->slots);
    if (!t->slots) {
        t->slots = old;
        tj_oom("graph names", cap * sizeof *t->slots);
        return false;
    }
    memset(t->slots, 0, cap * sizeof *t->slots);
    t->cap = cap;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].name) *name_find(t, old[i].name) = old[i];
    tj_free(old, oldcap * sizeof *old);
    return true;
}

bool tj_graph_claim_name(tj_graph *g, const char *name)
{
    name_table *t = g->names;
    if ((t->count + 1) * 2 > t->cap && !name_grow(t)) return false;
    name_slot *s = name_find(t, name);
    if (s->name) return false;
    s->name = name;
    s->next_suffix = 1;
    t->count++;
    return true;
}

static bool name_used(const tj_graph *g, const char *name) { return g->names->cap && name_find(g->names, name)->name; }

char *tj_graph_unique_name(tj_graph *g, const char *base)
{
    name_table *t = g->names;
    if ((t->count + 1) * 2 > t->cap && !name_grow(t)) return NULL;
    name_slot *s = name_find(t, base);
    if (!s->name) {
        char *n = tj_graph_strdup(g, base);
        if (!n || !tj_graph_claim_name(g, n)) return NULL;
        return n;
    }
    char buf[TJ_GRAPH_NAME_MAX + 1];
    for (;;) {
        /* the base cut to leave room for the suffix: cut by the buffer, a long
         * base's candidates were all the same (a loop without end), and names
         * past TJ_GRAPH_NAME_MAX do not parse back */
        snprintf(buf, sizeof buf, "%.*s_%d", TJ_GRAPH_NAME_MAX - 12, base, s->next_suffix++);
        if (!name_find(t, buf)->name) break;
    }
    char *n = tj_graph_strdup(g, buf);
    if (!n || !tj_graph_claim_name(g, n)) return NULL;
    return n;
}

/* ---- construction ---- */
tj_graph *tj_graph_new(void)
{
    tj_graph *g = tj_alloc(sizeof *g);
    name_table *nt = tj_alloc(sizeof *nt);
    tj_pool *arena = tj_pool_new("graph");
    if (!g || !nt || !arena) {
        tj_free(g, sizeof *g);
        tj_free(nt, sizeof *nt);
        tj_pool_free(arena);
        tj_oom("tj_graph", sizeof *g);
        return NULL;
    }
    memset(g, 0, sizeof *g);
    memset(nt, 0, sizeof *nt);
    g->names = nt;
    g->arena = arena;
    g->output_node = -1;
    return g;
}

void tj_graph_free(tj_graph *g)
{
    if (!g) return;
    for (int i = 0; i < g->n_nodes; i++) tj_tensor_release(g->nodes[i].constant);
    tj_free(g->nodes, sizeof *g->nodes * (size_t)g->cap_nodes);
    tj_free(g->values, sizeof *g->values * (size_t)g->cap_values);
    tj_pool_free(g->arena);
    tj_free(g->names->slots, g->names->cap * sizeof *g->names->slots);
    tj_free(g->names, sizeof *g->names);
    tj_free(g, sizeof *g);
}

static bool grow(void **arr, int *cap, int need, size_t elem, const char *what)
{
    if (need <= *cap) return true;
    int nc = *cap ? *cap * 2 : 64;
    while (nc < need) nc *= 2;
    void *n = tj_alloc((size_t)nc * elem);
    if (!n) {
        tj_oom(what, (size_t)nc * elem);
        return false;
    }
    if (*arr) memcpy(n, *arr, (size_t)*cap * elem);
    tj_free(*arr, (size_t)*cap * elem);
    *arr = n;
    *cap = nc;
    return true;
}

static tj_gnode *new_node(tj_graph *g, tj_node_kind kind)
{
    if (!grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes, "graph nodes")) return NULL;
    tj_gnode *n = &g->nodes[g->n_nodes++];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    return n;
}

void tj_gvalue_set_meta(tj_gvalue *v, const tj_tensor *t)
{
    v->dtype = t->dtype;
    v->ndim = t->ndim;
    memcpy(v->shape, t->shape, sizeof v->shape);
    memcpy(v->strides, t->strides, sizeof v->strides);
    v->offset = t->offset;
}

/* Python's lowercase builtins and keywords, and the names FX's generated
 * code imports (inf, nan, torch, device, pytree, fx_pytree), sorted: FX
 * never names a value after one (torch.fx.graph._Namespace), so the first
 * aten.sum is %sum_1 and the first aten.slice.Tensor %slice_1. */
static const char *const PY_RESERVED[] = {
    "abs", "aiter", "all", "and", "anext", "any", "as", "ascii", "assert", "async", "await", "bin", "bool", "break",
    "breakpoint", "bytearray", "bytes", "callable", "chr", "class", "classmethod", "compile", "complex", "continue",
    "copyright", "credits", "def", "del", "delattr", "device", "dict", "dir", "divmod", "elif", "else", "enumerate",
    "eval", "except", "exec", "exit", "filter", "finally", "float", "for", "format", "from", "frozenset",
    "fx_pytree", "getattr", "global", "globals", "hasattr", "hash", "help", "hex", "id", "if", "import", "in", "inf",
    "input", "int", "is", "isinstance", "issubclass", "iter", "lambda", "len", "license", "list", "locals", "map",
    "max", "memoryview", "min", "nan", "next", "nonlocal", "not", "object", "oct", "open", "or", "ord", "pass", "pow",
    "print", "property", "pytree", "quit", "raise", "range", "repr", "return", "reversed", "round", "set", "setattr",
    "slice", "sorted", "staticmethod", "str", "sum", "super", "torch", "try", "tuple", "type", "vars", "while",
    "with", "yield", "zip",
};

static int compare_names(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* A call's value name from `base`, as FX makes it: a reserved base is
 * claimed first (as the static entry, so that no value takes it), which
 * makes the generated name base_1, base_2, ... */
static char *call_value_name(tj_graph *g, const char *base)
{
    const char *const *r = bsearch(&base, PY_RESERVED, sizeof PY_RESERVED / sizeof *PY_RESERVED, sizeof *PY_RESERVED,
                                   compare_names);
    if (r && !name_used(g, *r) && !tj_graph_claim_name(g, *r)) return NULL;
    return tj_graph_unique_name(g, base);
}

/* Adds `n` values produced by node `node` (a call's when `call`); returns
 * the first id or -1. */
static int new_values(tj_graph *g, int node, tj_tensor *const *like, int n, const char *base, bool call)
{
    if (!grow((void **)&g->values, &g->cap_values, g->n_values + n, sizeof *g->values, "graph values")) return -1;
    int first = g->n_values;
    tj_gnode *nd = &g->nodes[node];
    nd->outs = tj_graph_alloc(g, sizeof(int) * (size_t)(n ? n : 1));
    if (!nd->outs) return -1;
    nd->nout = n;
    for (int i = 0; i < n; i++) {
        if (!like[i]) {
            nd->outs[i] = -1;
            continue;
        }
        tj_gvalue *v = &g->values[g->n_values];
        memset(v, 0, sizeof *v);
        v->node = node;
        v->index = i;
        tj_gvalue_set_meta(v, like[i]);
        /* multi-output calls name their outputs getitem, getitem_1, ... as FX does */
        v->name = n > 1 ? tj_graph_unique_name(g, "getitem") : call ? call_value_name(g, base)
                                                                   : tj_graph_unique_name(g, base);
        if (!v->name) return -1;
        nd->outs[i] = g->n_values++;
    }
    return first;
}

tj_status tj_graph_bind_geometry(tj_graph *g, int v, const char *who)
{
    char *copy = who ? tj_graph_strdup(g, who) : NULL;
    if (who && !copy) return tj_last_status();
    g->values[v].geometry_bound = copy;
    return TJ_OK;
}

tj_status tj_graph_check_input_geometry(const char *who, int i, const char *name, const int64_t *strides,
                                        int64_t offset, const char *bound, const tj_tensor *t)
{
    if (!bound) return TJ_OK;
    bool same = t->offset == offset;
    for (int d = 0; same && d < t->ndim; d++) same = t->shape[d] == 1 || t->strides[d] == strides[d];
    if (same) return TJ_OK;
    char a[128], b[128];
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: input %d (%%%s) has strides %s and storage offset %lld; the graph "
                    "holds for the strides %s and offset %lld it was traced with only (%s reads them): pass it so "
                    "laid out, or trace again", who, i, name, tj_shape_str(t->ndim, t->strides, a, sizeof a),
                    (long long)t->offset, tj_shape_str(t->ndim, strides, b, sizeof b), (long long)offset, bound);
}

int tj_graph_add_placeholder(tj_graph *g, const tj_tensor *like, const char *name)
{
    char buf[32];
    if (!name) {
        /* torch's make_fx names the placeholders of a function of *args
         * arg0_1, arg1_1, ...: FX suffixes its wrapper's argument names */
        snprintf(buf, sizeof buf, "arg%d_1", g->n_inputs);
        name = buf;
    }
    tj_gnode *n = new_node(g, TJ_NODE_PLACEHOLDER);
    if (!n) return -1;
    int id = g->n_nodes - 1;
    n->input_index = g->n_inputs++;
    tj_tensor *l = (tj_tensor *)like;
    if (new_values(g, id, &l, 1, name, false) < 0) return -1;
    return id;
}

int tj_graph_add_constant(tj_graph *g, tj_tensor *t, const char *name)
{
    char buf[48];
    if (!name) {
        snprintf(buf, sizeof buf, "_tensor_constant%d", g->n_constants);
        name = buf;
    }
    tj_gnode *n = new_node(g, TJ_NODE_CONSTANT);
    if (!n) return -1;
    int id = g->n_nodes - 1;
    g->n_constants++;
    if (new_values(g, id, &t, 1, name, false) < 0) return -1;
    g->nodes[id].constant = tj_tensor_retain(t);
    return id;
}

static bool copy_arg(tj_graph *g, tj_garg *dst, const tj_garg *src)
{
    *dst = *src;
    if (src->kind == TJ_GA_STR) return (dst->u.s = tj_graph_strdup(g, src->u.s)) != NULL;
    size_t sz = tj_garg_elem_size(src->kind) * (size_t)src->n;
    if (!tj_garg_elem_size(src->kind)) return true;
    void *p = tj_graph_alloc(g, sz ? sz : 1);
    if (!p) return false;
    if (sz) memcpy(p, src->u.vs, sz); /* every list kind's pointer shares the slot */
    switch (src->kind) {
    case TJ_GA_INTS: dst->u.ints = p; break;
    case TJ_GA_BOOLS: dst->u.bools = p; break;
    case TJ_GA_FLOATS: dst->u.floats = p; break;
    default: dst->u.vs = p; break;
    }
    return true;
}

int tj_graph_add_call(tj_graph *g, const tj_op *op, const tj_garg *args, int nargs, tj_tensor *const *results,
                      const char *name_base)
{
    tj_gnode *n = new_node(g, TJ_NODE_CALL);
    if (!n) return -1;
    int id = g->n_nodes - 1;
    n->op = op;
    n->nargs = nargs;
    n->args = tj_graph_alloc(g, sizeof(tj_garg) * (size_t)(nargs ? nargs : 1));
    if (!n->args) return -1;
    for (int i = 0; i < nargs; i++)
        if (!copy_arg(g, &g->nodes[id].args[i], &args[i])) return -1;
    if (new_values(g, id, results, op->nreturns, name_base ? name_base : op->base, true) < 0) return -1;
    return id;
}

int tj_graph_add_output(tj_graph *g, const int *values, int n)
{
    tj_gnode *nd = new_node(g, TJ_NODE_OUTPUT);
    if (!nd) return -1;
    int id = g->n_nodes - 1;
    nd->nargs = n;
    nd->args = tj_graph_alloc(g, sizeof(tj_garg) * (size_t)(n ? n : 1));
    if (!nd->args) return -1;
    for (int i = 0; i < n; i++) {
        nd->args[i].kind = TJ_GA_VALUE;
        nd->args[i].u.v = values[i];
    }
    g->output_node = id;
    return id;
}

/* ---- maintenance ---- */
void tj_graph_count_uses(tj_graph *g)
{
    for (int v = 0; v < g->n_values; v++) g->values[v].uses = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        tj_gnode *n = &g->nodes[i];
        if (n->dead) continue;
        for (int a = 0; a < n->nargs; a++) {
            if (n->args[a].kind == TJ_GA_VALUE) g->values[n->args[a].u.v].uses++;
            else if (n->args[a].kind == TJ_GA_VALUES)
                for (int k = 0; k < n->args[a].n; k++)
                    if (n->args[a].u.vs[k] >= 0) g->values[n->args[a].u.vs[k]].uses++;
        }
    }
}

void tj_graph_replace_uses(tj_graph *g, int from, int to)
{
    for (int i = 0; i < g->n_nodes; i++) {
        tj_gnode *n = &g->nodes[i];
        for (int a = 0; a < n->nargs; a++) {
            if (n->args[a].kind == TJ_GA_VALUE && n->args[a].u.v == from) n->args[a].u.v = to;
            else if (n->args[a].kind == TJ_GA_VALUES)
                for (int k = 0; k < n->args[a].n; k++)
                    if (n->args[a].u.vs[k] == from) n->args[a].u.vs[k] = to;
        }
    }
}

void tj_graph_compact(tj_graph *g)
{
    int w = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        tj_gnode *n = &g->nodes[i];
        if (n->dead) {
            tj_tensor_release(n->constant);
            continue;
        }
        if (w != i) g->nodes[w] = *n;
        for (int k = 0; k < g->nodes[w].nout; k++)
            if (g->nodes[w].outs[k] >= 0) g->values[g->nodes[w].outs[k]].node = w;
        if (g->nodes[w].kind == TJ_NODE_OUTPUT) g->output_node = w;
        w++;
    }
    g->n_nodes = w;
    tj_graph_count_uses(g);
}

/* ---- inspection ---- */
int tj_graph_num_nodes(const tj_graph *g) { return g ? g->n_nodes : 0; }
int tj_graph_num_inputs(const tj_graph *g) { return g ? g->n_inputs : 0; }
int tj_graph_num_outputs(const tj_graph *g)
{
    return g && g->output_node >= 0 ? g->nodes[g->output_node].nargs : 0;
}
tj_node_kind tj_graph_node_kind(const tj_graph *g, int node)
{
    return g && node >= 0 && node < g->n_nodes ? g->nodes[node].kind : TJ_NODE_OUTPUT;
}
const tj_op *tj_graph_node_op(const tj_graph *g, int node)
{
    return g && node >= 0 && node < g->n_nodes ? g->nodes[node].op : NULL;
}
const char *tj_graph_node_name(const tj_graph *g, int node)
{
    if (!g || node < 0 || node >= g->n_nodes) return "";
    const tj_gnode *n = &g->nodes[node];
    if (n->kind == TJ_NODE_OUTPUT) return "output";
    for (int k = 0; k < n->nout; k++)
        if (n->outs[k] >= 0) return g->values[n->outs[k]].name;
    return n->op ? n->op->base : "";
}
int tj_graph_count_op(const tj_graph *g, const tj_op *op)
{
    int c = 0;
    for (int i = 0; g && i < g->n_nodes; i++)
        if (g->nodes[i].kind == TJ_NODE_CALL && g->nodes[i].op == op) c++;
    return c;
}
int tj_graph_num_calls(const tj_graph *g)
{
    int c = 0;
    for (int i = 0; g && i < g->n_nodes; i++) c += g->nodes[i].kind == TJ_NODE_CALL;
    return c;
}

int tj_graph_input_root(const tj_graph *g, int v)
{
    for (;;) {
        const tj_gnode *n = &g->nodes[g->values[v].node];
        if (n->kind == TJ_NODE_PLACEHOLDER) return n->input_index;
        if (n->kind != TJ_NODE_CALL || n->args[0].kind != TJ_GA_VALUE) return -1;
        const tj_gvalue *in = &g->values[n->args[0].u.v], *out = &g->values[v];
        int64_t strides[TJ_MAX_DIMS];
        /* _unsafe_view is a view where its input's strides allow one (as
         * reshape), a copy elsewhere */
        if (!n->op->is_view && !(n->op == TJ_OPS(_unsafe_view) &&
                                 tj_view_strides(in->ndim, in->shape, in->strides, out->ndim, out->shape, strides)))
            return -1;
        v = n->args[0].u.v;
    }
}

tj_status tj_graph_set_input_name(tj_graph *g, int i, const char *name)
{
    if (!g) return tj_error_null("tj_graph_set_input_name: NULL graph");
    if (!name) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_graph_set_input_name: NULL name");
    bool ok = (name[0] == '_' || (name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z'));
    for (const char *p = name; *p && ok; p++)
        ok = *p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9');
    if (!ok) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_graph_set_input_name: '%s' is not a valid name", name);
    if (strlen(name) > TJ_GRAPH_NAME_MAX)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_graph_set_input_name: a name of %zu characters is longer than the %d "
                        "allowed", strlen(name), TJ_GRAPH_NAME_MAX);
    for (int n = 0; n < g->n_nodes; n++) {
        if (g->nodes[n].kind != TJ_NODE_PLACEHOLDER || g->nodes[n].input_index != i) continue;
        tj_gvalue *v = &g->values[g->nodes[n].outs[0]];
        if (strcmp(v->name, name) == 0) return TJ_OK;
        char *copy = tj_graph_strdup(g, name);
        if (!copy) return TJ_ERR_OUT_OF_MEMORY;
        if (!tj_graph_claim_name(g, copy))
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_graph_set_input_name: name '%s' is already used", name);
        v->name = copy;
        return TJ_OK;
    }
    return tj_error(TJ_ERR_INDEX, "tj_graph_set_input_name: the graph has no input %d", i);
}

void tj_garg_box(const tj_garg *args, int nargs, tj_tensor *const *values, tj_value *out, tj_tensor **lists)
{
    int used = 0;
    for (int i = 0; i < nargs; i++) {
        const tj_garg *a = &args[i];
        switch (a->kind) {
        case TJ_GA_NONE: out[i] = tj_v_none(); break;
        case TJ_GA_VALUE: out[i] = tj_v_tensor(values[a->u.v]); break;
        case TJ_GA_VALUES:
            for (int k = 0; k < a->n; k++) lists[used + k] = a->u.vs[k] < 0 ? NULL : values[a->u.vs[k]];
            out[i] = tj_v_tensors(lists + used, a->n);
            used += a->n;
            break;
        case TJ_GA_INT: out[i] = tj_v_int(a->u.i); break;
        case TJ_GA_FLOAT: out[i] = tj_v_float(a->u.f); break;
        case TJ_GA_BOOL: out[i] = tj_v_bool(a->u.b); break;
        case TJ_GA_INTS: out[i] = tj_v_ints(a->u.ints, a->n); break;
        case TJ_GA_BOOLS: out[i] = tj_v_bools(a->u.bools, a->n); break;
        case TJ_GA_FLOATS: out[i] = tj_v_floats(a->u.floats, a->n); break;
        case TJ_GA_STR: out[i] = tj_v_str(a->u.s); break;
        case TJ_GA_DTYPE: out[i] = tj_v_dtype(a->u.dtype); break;
        }
    }
}

tj_tensor *tj_fake_value(tj_fake_values *f, const tj_graph *g, int v, const char *who)
{
    if (v >= f->cap) {
        int cap = f->cap ? f->cap * 2 : 256;
        while (cap <= v) cap *= 2;
        tj_tensor **n = tj_alloc(sizeof *n * (size_t)cap);
        if (!n) {
            tj_oom(who, sizeof *n * (size_t)cap);
            return NULL;
        }
        memset(n, 0, sizeof *n * (size_t)cap);
        if (f->t) memcpy(n, f->t, sizeof *n * (size_t)f->cap);
        tj_free(f->t, sizeof *f->t * (size_t)f->cap);
        f->t = n;
        f->cap = cap;
    }
    if (!f->t[v]) {
        const tj_gvalue *gv = &g->values[v];
        tj_tensor *t = tj_tensor_fake(gv->dtype, gv->ndim, gv->shape);
        if (!t) return NULL;
        memcpy(t->strides, gv->strides, sizeof t->strides);
        t->offset = gv->offset;
        f->t[v] = t;
    }
    return f->t[v];
}

void tj_fake_values_free(tj_fake_values *f)
{
    tj_free(f->t, sizeof *f->t * (size_t)f->cap);
    *f = (tj_fake_values){0};
}

bool tj_graph_node_widens(const tj_graph *g, const tj_gnode *n)
{
    if (n->kind != TJ_NODE_CALL || n->dead || n->op->any_dtype || n->op->kind == TJ_OP_IMPLICIT) return false;
    for (int a = 0; a < n->nargs; a++) {
        const tj_garg *arg = &n->args[a];
        if (arg->kind == TJ_GA_DTYPE && arg->u.dtype >= TJ_FIRST_STORAGE_DTYPE) return true;
        for (int k = 0; k < tj_garg_n_values(arg); k++) {
            int v = tj_garg_value_at(arg, k);
            if (v >= 0 && g->values[v].dtype >= TJ_FIRST_STORAGE_DTYPE) return true;
        }
    }
    return false;
}

bool tj_graph_needs_lowering(const tj_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const tj_gnode *n = &g->nodes[i];
        if (n->kind != TJ_NODE_CALL || n->dead) continue;
        if (n->op->kind == TJ_OP_IMPLICIT || tj_graph_node_widens(g, n)) return true;
    }
    return false;
}

bool tj_graph_has_implicit_call(const tj_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].kind == TJ_NODE_CALL && !g->nodes[i].dead && g->nodes[i].op->kind == TJ_OP_IMPLICIT) return true;
    return false;
}
