/* Common-subexpression elimination: a call with the same operator and the
 * same arguments as an earlier one reuses its values. Random and in-place
 * operators are never merged, and a graph that mutates anything is left
 * alone (run functionalisation first): a read after a mutation is not the
 * same expression as the read before it. */
#include <string.h>

#include "tracer/graph_internal.h"

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

static uint64_t hash_arg(uint64_t h, const tj_garg *a)
{
    h = mix(h, (uint64_t)a->kind);
    switch (a->kind) {
    case TJ_GA_VALUE: return mix(h, (uint64_t)a->u.v);
    case TJ_GA_VALUES:
        for (int i = 0; i < a->n; i++) h = mix(h, (uint64_t)a->u.vs[i]);
        return h;
    case TJ_GA_INT: return mix(h, (uint64_t)a->u.i);
    case TJ_GA_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &a->u.f, sizeof bits);
        return mix(h, bits);
    }
    case TJ_GA_BOOL: return mix(h, a->u.b);
    case TJ_GA_INTS:
        for (int i = 0; i < a->n; i++) h = mix(h, (uint64_t)a->u.ints[i]);
        return h;
    case TJ_GA_BOOLS:
        for (int i = 0; i < a->n; i++) h = mix(h, a->u.bools[i]);
        return h;
    case TJ_GA_FLOATS:
        for (int i = 0; i < a->n; i++) {
            uint64_t bits;
            memcpy(&bits, &a->u.floats[i], sizeof bits);
            h = mix(h, bits);
        }
        return h;
    case TJ_GA_STR:
        for (const char *s = a->u.s; *s; s++) h = mix(h, (unsigned char)*s);
        return h;
    case TJ_GA_DTYPE: return mix(h, (uint64_t)a->u.dtype);
    case TJ_GA_NONE: return h;
    }
    return h;
}

bool tj_garg_equal(const tj_garg *x, const tj_garg *y)
{
    if (x->kind != y->kind || x->n != y->n) return false;
    switch (x->kind) {
    case TJ_GA_NONE: return true;
    case TJ_GA_VALUE: return x->u.v == y->u.v;
    case TJ_GA_VALUES: return memcmp(x->u.vs, y->u.vs, sizeof(int) * (size_t)x->n) == 0;
    case TJ_GA_INT: return x->u.i == y->u.i;
    case TJ_GA_FLOAT: return memcmp(&x->u.f, &y->u.f, sizeof(double)) == 0;
    case TJ_GA_BOOL: return x->u.b == y->u.b;
    case TJ_GA_INTS: return memcmp(x->u.ints, y->u.ints, sizeof(int64_t) * (size_t)x->n) == 0;
    case TJ_GA_BOOLS: return memcmp(x->u.bools, y->u.bools, (size_t)x->n) == 0;
    case TJ_GA_FLOATS: return memcmp(x->u.floats, y->u.floats, sizeof(double) * (size_t)x->n) == 0;
    case TJ_GA_STR: return strcmp(x->u.s, y->u.s) == 0;
    case TJ_GA_DTYPE: return x->u.dtype == y->u.dtype;
    }
    return false;
}

uint64_t tj_call_hash(const tj_op *op, const tj_garg *args, int nargs)
{
    uint64_t h = (uint64_t)(uintptr_t)op;
    for (int a = 0; a < nargs; a++) h = hash_arg(h, &args[a]);
    return h;
}

bool tj_garg_lists_equal(const tj_garg *x, const tj_garg *y, int n)
{
    for (int a = 0; a < n; a++)
        if (!tj_garg_equal(&x[a], &y[a])) return false;
    return true;
}

void tj_garg_remap_values(tj_garg *args, int nargs, const int *map)
{
    for (int a = 0; a < nargs; a++) {
        if (args[a].kind == TJ_GA_VALUE) args[a].u.v = map[args[a].u.v];
        else if (args[a].kind == TJ_GA_VALUES)
            for (int k = 0; k < args[a].n; k++)
                if (args[a].u.vs[k] >= 0) args[a].u.vs[k] = map[args[a].u.vs[k]];
    }
}

static bool same_call(const tj_gnode *a, const tj_gnode *b)
{
    return a->op == b->op && a->nargs == b->nargs && tj_garg_lists_equal(a->args, b->args, a->nargs);
}

int tj_pass_cse(tj_graph *g)
{
    if (!g) {
        tj_error_null("tj_pass_cse: NULL graph");
        return -1;
    }
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].kind == TJ_NODE_CALL && g->nodes[i].op->mutated_args) return 0;
    size_t cap = 64;
    while (cap < (size_t)g->n_nodes * 2) cap *= 2;
    int *slots = tj_alloc(cap * sizeof *slots);
    if (!slots) {
        tj_oom("tj_pass_cse", cap * sizeof *slots);
        return -1;
    }
    int *remap = tj_alloc(sizeof(int) * (size_t)(g->n_values + 1));
    if (!remap) {
        tj_free(slots, cap * sizeof *slots);
        tj_oom("tj_pass_cse", sizeof(int) * (size_t)g->n_values);
        return -1;
    }
    for (int v = 0; v < g->n_values; v++) remap[v] = v;
    for (size_t i = 0; i < cap; i++) slots[i] = -1;
    int removed = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        tj_gnode *n = &g->nodes[i];
        tj_garg_remap_values(n->args, n->nargs, remap); /* read merged values through their first occurrence */
        if (n->kind != TJ_NODE_CALL || n->op->is_random) continue;
        size_t s = tj_call_hash(n->op, n->args, n->nargs) & (cap - 1);
        while (slots[s] >= 0 && !same_call(&g->nodes[slots[s]], n)) s = (s + 1) & (cap - 1);
        if (slots[s] < 0) {
            slots[s] = i;
            continue;
        }
        const tj_gnode *first = &g->nodes[slots[s]];
        bool all_defined = true; /* an earlier call that left an output undefined cannot stand in */
        for (int k = 0; k < n->nout; k++)
            if (n->outs[k] >= 0 && first->outs[k] < 0) all_defined = false;
        if (!all_defined) continue;
        for (int k = 0; k < n->nout; k++)
            if (n->outs[k] >= 0) remap[n->outs[k]] = first->outs[k];
        n->dead = true;
        removed++;
    }
    tj_free(slots, cap * sizeof *slots);
    tj_free(remap, sizeof(int) * (size_t)(g->n_values + 1));
    if (removed) tj_graph_compact(g);
    return removed;
}
