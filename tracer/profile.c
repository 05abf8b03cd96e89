/* The plan profiler: per-kernel cost formulas, the table by operator
 * (torch.profiler's key_averages().table()) and the Chrome trace-event
 * export (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

static double tensor_bytes(const tj_tensor *t)
{
    return t ? (double)t->numel * (double)tj_dtype_size(t->dtype) : 0;
}

static double numel_from(const tj_tensor *t, int first_dim)
{
    double n = 1;
    for (int d = first_dim; d < t->ndim; d++) n *= (double)t->shape[d];
    return n;
}

void tj_plan_node_cost(tj_pnode *n, const tj_value *args, tj_tensor *const *outs)
{
    const tj_op *op = n->op;
    const char *b = op->base;
    const tj_tensor *out = tj_op_is_builtin(op) ? outs[0] : NULL; /* flops of built-in operators only */
    n->flops = 0;
    if (out && (!strcmp(b, "mm") || !strcmp(b, "bmm") || !strcmp(b, "addmm"))) {
        /* out [.., m, n] from [.., m, k] x [k, n]: 2mnk */
        const tj_tensor *a = args[!strcmp(b, "addmm") ? 1 : 0].u.t;
        n->flops = 2.0 * (double)out->numel * (double)a->shape[a->ndim - 1];
    } else if (out && !strcmp(b, "convolution")) {
        /* each output element is a dot product over weight[1:] (transposed:
         * each input element scatters one) */
        const tj_tensor *in = args[0].u.t, *w = args[1].u.t;
        bool transposed = args[6].kind == TJ_V_BOOL && args[6].u.b;
        n->flops = 2.0 * (transposed ? (double)in->numel : (double)out->numel) * numel_from(w, 1);
    }
    double bytes = 0;
    for (int i = 0; i < n->nargs; i++) {
        if (args[i].kind == TJ_V_TENSOR) bytes += tensor_bytes(args[i].u.t);
        else if (args[i].kind == TJ_V_TENSORS)
            for (int k = 0; k < args[i].n; k++) bytes += tensor_bytes(args[i].u.ts[k]);
    }
    for (int k = 0; k < n->nout; k++) bytes += tensor_bytes(outs[k]);
    n->bytes = bytes;
}

void tj_plan_set_profiling(tj_plan *p, bool on)
{
    if (p) atomic_store_explicit(&p->profiling, on, memory_order_relaxed);
}

void tj_plan_profile_reset(tj_plan *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    for (tj_plan_context *c = p->contexts; c; c = c->next) {
        tj_profile *pr = &c->prof;
        memset(pr->total_ns, 0, sizeof(int64_t) * (size_t)(p->n_steps + 1));
        pr->run_ns = pr->runs = pr->last_run_ns = 0;
    }
    pthread_mutex_unlock(&p->lock);
}

/* One row of the table: an operator's (or fused step's) totals. */
typedef struct op_row {
    const char *label;
    int64_t calls, ns;
    double flops, bytes;
} op_row;

/* The table's rule, its first column name_width wide. */
static void print_rule(FILE *f, int name_width)
{
    for (int i = 0; i < name_width; i++) fputc('-', f);
    fputs("  --------  ------------  -------  ------------  -----------------\n", f);
}

static int by_time(const void *a, const void *b)
{
    const op_row *x = a, *y = b;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : strcmp(x->label, y->label);
}

tj_status tj_plan_profile_print(const tj_plan *p, FILE *f)
{
    if (!p || !f) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_plan_profile_print: NULL argument");
    size_t rows_bytes = sizeof(op_row) * (size_t)(p->n_steps + 1);
    op_row *rows = tj_alloc(rows_bytes);
    if (!rows) return tj_oom("tj_plan_profile_print", rows_bytes);
    int n_rows = 0;
    int64_t run_ns = 0, runs = 0;
    pthread_mutex_lock((pthread_mutex_t *)&p->lock);
    for (const tj_plan_context *c = p->contexts; c; c = c->next) {
        run_ns += c->prof.run_ns;
        runs += c->prof.runs;
        for (int s = 0; s < p->n_steps && c->prof.runs; s++) {
            const tj_pnode *n = &p->nodes[p->step_nodes[s]];
            int r = 0;
            const char *label = tj_plan_node_label(n);
            while (r < n_rows && strcmp(rows[r].label, label) != 0) r++;
            if (r == n_rows) rows[n_rows++] = (op_row){.label = label};
            rows[r].calls += c->prof.runs;
            rows[r].ns += c->prof.total_ns[s];
            rows[r].flops += n->flops * (double)c->prof.runs;
            rows[r].bytes += n->bytes * (double)c->prof.runs;
        }
    }
    pthread_mutex_unlock((pthread_mutex_t *)&p->lock);
    qsort(rows, (size_t)n_rows, sizeof *rows, by_time);
    /* the name column fits the longest label: a fused step's names the first operators it runs */
    int name_width = 44;
    for (int r = 0; r < n_rows; r++)
        if ((int)strlen(rows[r].label) > name_width) name_width = (int)strlen(rows[r].label);
    print_rule(f, name_width);
    fprintf(f, "%-*s  %8s  %12s  %7s  %12s  %17s\n", name_width, "Name", "Calls", "Total ms", "% run", "Avg us",
            "Throughput");
    print_rule(f, name_width);
    int64_t kernels_ns = 0;
    for (int r = 0; r < n_rows; r++) {
        const op_row *w = &rows[r];
        double sec = (double)w->ns * 1e-9;
        char thr[32] = "";
        if (w->flops > 0 && sec > 0) snprintf(thr, sizeof thr, "%.2f GFLOP/s", w->flops / sec * 1e-9);
        else if (w->bytes > 0 && sec > 0) snprintf(thr, sizeof thr, "%.2f GB/s", w->bytes / sec * 1e-9);
        fprintf(f, "%-*s  %8lld  %12.3f  %6.1f%%  %12.3f  %17s\n", name_width, w->label, (long long)w->calls, (double)w->ns * 1e-6,
                run_ns ? 100.0 * (double)w->ns / (double)run_ns : 0.0, w->calls ? (double)w->ns * 1e-3 / (double)w->calls : 0.0,
                thr);
        kernels_ns += w->ns;
    }
    print_rule(f, name_width);
    fprintf(f, "Runs: %lld, run time total %.3f ms (kernels %.3f ms, %.1f%%), %.3f ms per run\n", (long long)runs,
            (double)run_ns * 1e-6, (double)kernels_ns * 1e-6, run_ns ? 100.0 * (double)kernels_ns / (double)run_ns : 0.0,
            runs ? (double)run_ns * 1e-6 / (double)runs : 0.0);
    tj_free(rows, rows_bytes);
    return tj_check_written(f, "tj_plan_profile_print", NULL);
}

/* Shapes of a node's tensor arguments: "f32[2, 3], f32[3]". */
static void describe_inputs(const tj_pnode *n, const tj_plan *p, char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < n->nargs && k < size; i++) {
        const tj_garg *a = &n->args[i];
        for (int j = 0; j < tj_garg_n_values(a) && k < size; j++) {
            if (tj_garg_value_at(a, j) < 0) {
                k += (size_t)snprintf(buf + k, size - k, "%sNone", k ? ", " : "");
                continue;
            }
            const tj_pvalue *v = &p->values[tj_garg_value_at(a, j)];
            char shape[128];
            k += (size_t)snprintf(buf + k, size - k, "%s%s%s", k ? ", " : "", tj_dtype_short_name(v->dtype),
                                  tj_shape_str(v->ndim, v->shape, shape, sizeof shape));
        }
    }
}

static json_t *complete_event(const char *name, const char *cat, int64_t start_ns, int64_t dur_ns, int tid)
{
    return json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i}", "name", name, "cat", cat, "ph", "X", "ts",
                     (double)start_ns * 1e-3, "dur", (double)dur_ns * 1e-3, "pid", 1, "tid", tid);
}

/* Appends `ev` to `events`, or records the failure in *ok. */
static void append(json_t *events, json_t *ev, bool *ok)
{
    if (!ev || json_array_append_new(events, ev) != 0) *ok = false;
}

static void context_events(const tj_plan *p, const tj_plan_context *c, json_t *events, bool *ok)
{
    char tname[64];
    snprintf(tname, sizeof tname, "plan context %d", c->id);
    append(events, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "thread_name", "ph", "M", "pid", 1, "tid", c->id,
                             "args", "name", tname), ok);
    append(events, complete_event("tj_plan_run", "run", c->prof.last_run_start_ns, c->prof.last_run_ns, c->id), ok);
    for (int s = 0; s < p->n_steps && *ok; s++) {
        const tj_pnode *n = &p->nodes[p->step_nodes[s]];
        json_t *ev = complete_event(tj_plan_node_label(n), "kernel", c->prof.last_start_ns[s], c->prof.last_dur_ns[s], c->id);
        char shapes[512];
        describe_inputs(n, p, shapes, sizeof shapes);
        json_t *args = json_pack("{s:s, s:i, s:s}", "node", n->name, "step", s, "input shapes", shapes);
        if (ev && args && n->flops > 0) json_object_set_new(args, "GFLOP", json_real(n->flops * 1e-9));
        if (ev && args) json_object_set_new(ev, "args", args);
        else json_decref(args);
        append(events, ev, ok);
    }
}

static tj_status dump_json(FILE *f, void *root)
{
    return json_dumpf(root, f, JSON_INDENT(1)) == 0 && fflush(f) == 0 && !ferror(f) ? TJ_OK : TJ_ERR_IO;
}

tj_status tj_plan_profile_write_trace(const tj_plan *p, const char *path)
{
    if (!p || !path) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_plan_profile_write_trace: NULL argument");
    json_t *root = json_object(), *events = json_array();
    bool ok = root && events, any = false;
    pthread_mutex_lock((pthread_mutex_t *)&p->lock);
    for (const tj_plan_context *c = p->contexts; c && ok; c = c->next) {
        if (!c->prof.runs) continue;
        any = true;
        context_events(p, c, events, &ok);
    }
    pthread_mutex_unlock((pthread_mutex_t *)&p->lock);
    tj_status st = TJ_OK;
    if (!ok) st = tj_oom("tj_plan_profile_write_trace", 0);
    else if (!any) st = tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_plan_profile_write_trace: no profiled run (see tj_plan_set_profiling)");
    if (st == TJ_OK) {
        json_object_set_new(root, "traceEvents", events);
        events = NULL;
        json_object_set_new(root, "displayTimeUnit", json_string("ms"));
        st = tj_write_file_replacing(path, "tj_plan_profile_write_trace", dump_json, root);
    }
    json_decref(events);
    json_decref(root);
    return st;
}
