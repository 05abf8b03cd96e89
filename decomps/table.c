/* Decomposition tables: an array indexed by operator registry index, so that
 * the trace mode's look-up on every recorded call is one load. Entries may be
 * graphs (traced counterparts), handled through the tracer's public graph API
 * only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

struct tj_decomp_table {
    tj_decomp_entry *entries;
    int cap;
    int count;
};

tj_decomp_table *tj_decomp_table_new(void)
{
    tj_decomp_table *t = tj_alloc(sizeof *t);
    if (!t) {
        tj_oom("tj_decomp_table_new", sizeof *t);
        return NULL;
    }
    memset(t, 0, sizeof *t);
    return t;
}

static void entry_clear(tj_decomp_entry *e)
{
    tj_graph_free(e->graph);
    tj_free_str(e->name);
    memset(e, 0, sizeof *e);
}

void tj_decomp_table_free(tj_decomp_table *t)
{
    if (!t) return;
    for (int i = 0; i < t->cap; i++) entry_clear(&t->entries[i]);
    tj_free(t->entries, sizeof *t->entries * (size_t)t->cap);
    tj_free(t, sizeof *t);
}

static tj_status reserve(tj_decomp_table *t, int index)
{
    if (index < t->cap) return TJ_OK;
    int cap = tj_op_count() > index ? tj_op_count() : index + 1;
    tj_decomp_entry *e = tj_alloc(sizeof *e * (size_t)cap);
    if (!e) return tj_oom("decomposition table", sizeof *e * (size_t)cap);
    memset(e, 0, sizeof *e * (size_t)cap);
    if (t->entries) memcpy(e, t->entries, sizeof *e * (size_t)t->cap);
    tj_free(t->entries, sizeof *t->entries * (size_t)t->cap);
    t->entries = e;
    t->cap = cap;
    return TJ_OK;
}

const tj_decomp_entry *tj_decomp_table_lookup(const tj_decomp_table *t, const tj_op *op)
{
    if (!t || op->index >= t->cap) return NULL;
    const tj_decomp_entry *e = &t->entries[op->index];
    return e->fn || e->graph ? e : NULL;
}

static tj_status set_entry(tj_decomp_table *t, const tj_op *op, tj_decomp_fn fn, tj_graph *graph, const char *name)
{
    tj_status st = reserve(t, op->index);
    char *copy = st == TJ_OK && name ? tj_strdup(name, "decomposition table") : NULL;
    if (st != TJ_OK || (name && !copy)) {
        tj_graph_free(graph);
        return tj_last_status();
    }
    tj_decomp_entry *e = &t->entries[op->index];
    if (!e->fn && !e->graph) t->count++;
    entry_clear(e);
    e->fn = fn;
    e->graph = graph;
    e->name = copy;
    return TJ_OK;
}

tj_status tj_decomp_table_add_fn(tj_decomp_table *t, const tj_op *op, tj_decomp_fn fn, const char *name)
{
    if (!t || !op || !fn) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_decomp_table_add_fn: NULL table, operator or function");
    return set_entry(t, op, fn, NULL, name ? name : "<function>");
}

/* A private copy of a graph, through its text form (which round-trips). */
static tj_graph *graph_copy(const tj_graph *g)
{
    char *text = tj_graph_to_string(g);
    if (!text) return NULL;
    tj_graph *c = tj_graph_parse(text);
    free(text);
    return c;
}

tj_status tj_decomp_table_add_graph(tj_decomp_table *t, const tj_op *op, const tj_graph *g)
{
    if (!t || !op || !g) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_decomp_table_add_graph: NULL table, operator or graph");
    if (tj_graph_num_outputs(g) != op->nreturns)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_decomp_table_add_graph: %s returns %d value%s, the graph %d",
                        op->name, op->nreturns, op->nreturns == 1 ? "" : "s", tj_graph_num_outputs(g));
    int n_tensor_args = 0;
    for (int i = 0; i < op->nargs; i++) n_tensor_args += op->args[i].type == TJ_A_TENSOR;
    if (tj_graph_num_inputs(g) > n_tensor_args)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_decomp_table_add_graph: the graph has %d inputs, %s only %d tensor argument%s",
                        tj_graph_num_inputs(g), op->name, n_tensor_args, n_tensor_args == 1 ? "" : "s");
    tj_graph *copy = graph_copy(g);
    if (!copy) return tj_last_status();
    return set_entry(t, op, NULL, copy, NULL);
}

void tj_decomp_table_remove(tj_decomp_table *t, const tj_op *op)
{
    if (!t || !op || op->index >= t->cap) return;
    tj_decomp_entry *e = &t->entries[op->index];
    if (e->fn || e->graph) t->count--;
    entry_clear(e);
}

tj_status tj_decomp_table_merge(tj_decomp_table *dst, const tj_decomp_table *src)
{
    if (!dst || !src) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_decomp_table_merge: NULL table");
    for (int i = 0; i < src->cap; i++) {
        const tj_decomp_entry *e = &src->entries[i];
        if (!e->fn && !e->graph) continue;
        tj_graph *copy = NULL;
        if (e->graph && !(copy = graph_copy(e->graph))) return tj_last_status();
        tj_status st = set_entry(dst, tj_op_at(i), e->fn, copy, e->name);
        if (st != TJ_OK) return st;
    }
    return TJ_OK;
}

int tj_decomp_table_size(const tj_decomp_table *t) { return t ? t->count : 0; }
bool tj_decomp_table_contains(const tj_decomp_table *t, const tj_op *op) { return op && tj_decomp_table_lookup(t, op); }

tj_status tj_decomp_table_print(const tj_decomp_table *t, FILE *f)
{
    if (!t || !f) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_decomp_table_print: NULL argument");
    for (int i = 0; i < t->cap; i++) {
        const tj_decomp_entry *e = &t->entries[i];
        const tj_op *op = tj_op_at(i);
        const char *name = op->overload[0] ? op->name : NULL;
        char buf[96];
        if (!name) {
            snprintf(buf, sizeof buf, "%s.default", op->name);
            name = buf;
        }
        errno = 0;
        int w = 0;
        if (e->fn) w = fprintf(f, "%s -> %s\n", name, e->name);
        else if (e->graph)
            w = fprintf(f, "%s -> graph(%d inputs, %d calls, %d outputs)\n", name, tj_graph_num_inputs(e->graph),
                        tj_graph_num_calls(e->graph), tj_graph_num_outputs(e->graph));
        /* a table longer than the stream's buffer meets a full disk here:
         * its errno is the reason, which the final check could not tell */
        if (w < 0)
            return tj_error(TJ_ERR_IO, "tj_decomp_table_print: write failed: %s", strerror(errno ? errno : EIO));
    }
    return tj_check_written(f, "tj_decomp_table_print", NULL);
}

/* ---- the registry's decompositions ---- */

tj_status tj_register_decomposition(const tj_op *op, tj_decomp_fn fn, const char *name)
{
    if (!op || !fn) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_register_decomposition: NULL operator or function");
    char *copy = strdup(name ? name : "<function>");
    if (!copy) return tj_oom("tj_register_decomposition", 64);
    struct tj_op *o = (struct tj_op *)op;
    tj_registry_lock();
    char *old = o->decomp_name_copy;
    tj_op_set_decomposition(op, fn, copy);
    o->decomp_name_copy = copy;
    tj_registry_unlock();
    free(old);
    return TJ_OK;
}

/* Writes to out the operators that `name` selects (see tj_get_decompositions)
 * and that have a registered decomposition; returns their count. */
static int select_ops(const char *name, const tj_op **out, int max)
{
    tj_op_name_parts parts;
    int k = 0;
    if (!tj_op_name_split(name, &parts)) return 0;
    if (parts.has_overload) {
        const tj_op *op = tj_op_find(name);
        if (op && op->decomp && k < max) out[k++] = op;
        return k;
    }
    for (int i = 0; i < tj_op_count() && k < max; i++) {
        const tj_op *op = tj_op_at(i);
        if (strcmp(op->base, parts.base) == 0 && strcmp(op->ns, parts.ns) == 0 && op->decomp) out[k++] = op;
    }
    return k;
}

/* A NULL list (n > 0) or a NULL entry is the caller's bug, not a name
 * without a decomposition: both functions refuse it the same way. */
static tj_status check_names(const char *fn, const char *const *ops, int n)
{
    if (n > 0 && !ops) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: NULL operator list (n = %d)", fn, n);
    for (int i = 0; i < n; i++)
        if (!ops[i]) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: operator name %d of %d is NULL", fn, i, n);
    return TJ_OK;
}

tj_decomp_table *tj_get_decompositions(const char *const *ops, int n)
{
    if (check_names("tj_get_decompositions", ops, n) != TJ_OK) return NULL;
    tj_decomp_table *t = tj_decomp_table_new();
    if (!t) return NULL;
    for (int i = 0; i < n; i++) {
        const tj_op *sel[64];
        int k = select_ops(ops[i], sel, 64);
        for (int j = 0; j < k; j++)
            if (set_entry(t, sel[j], sel[j]->decomp, NULL, sel[j]->decomp_name) != TJ_OK) {
                tj_decomp_table_free(t);
                return NULL;
            }
    }
    tj_clear_error();
    return t;
}

int tj_decompositions_missing(const char *const *ops, int n, FILE *f)
{
    if (check_names("tj_decompositions_missing", ops, n) != TJ_OK) return -1;
    int missing = 0;
    for (int i = 0; i < n; i++) {
        const tj_op *sel[1];
        if (select_ops(ops[i], sel, 1) > 0) continue;
        missing++;
        if (f) fprintf(f, "%s\n", ops[i]);
    }
    tj_clear_error();
    return missing;
}

tj_decomp_table *tj_core_decompositions(void)
{
    tj_decomp_table *t = tj_decomp_table_new();
    if (!t) return NULL;
    for (int i = 0; i < tj_op_count(); i++) {
        const tj_op *op = tj_op_at(i);
        if (op->kind != TJ_OP_COMPOSITE || !op->decomp) continue;
        if (set_entry(t, op, op->decomp, NULL, op->decomp_name) != TJ_OK) {
            tj_decomp_table_free(t);
            return NULL;
        }
    }
    return t;
}
