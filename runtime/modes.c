/* Three ready-made modes: an operator counter, a call logger and a census
 * of denormal results. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Per-operator counters, `cols` per operator, indexed by operator index and
 * grown with the registry (user operators register at any time). */
typedef struct op_counts {
    int64_t *v;
    int n_ops, cols;
} op_counts;

/* op's row of c (cols counters), or NULL (out of memory, recorded for `who`). */
static int64_t *op_row(op_counts *c, const tj_op *op, const char *who)
{
    if (op->index >= c->n_ops) {
        int n = tj_op_count();
        size_t bytes = sizeof(int64_t) * (size_t)n * (size_t)c->cols,
               old = sizeof(int64_t) * (size_t)c->n_ops * (size_t)c->cols;
        int64_t *v = tj_alloc(bytes);
        if (!v) {
            tj_oom(who, bytes);
            return NULL;
        }
        memset(v, 0, bytes);
        if (c->v) memcpy(v, c->v, old);
        tj_free(c->v, old);
        c->v = v;
        c->n_ops = n;
    }
    return c->v + (size_t)op->index * (size_t)c->cols;
}

/* Counter `col` of op's row (0 for NULL or an operator not seen). */
static int64_t op_count(const op_counts *c, const tj_op *op, int col)
{
    return op && op->index < c->n_ops ? c->v[(size_t)op->index * (size_t)c->cols + (size_t)col] : 0;
}

static void op_counts_free(op_counts *c) { tj_free(c->v, sizeof(int64_t) * (size_t)c->n_ops * (size_t)c->cols); }

/* A zeroed mode object of `size` bytes: its tj_mode first, its op_counts of
 * `cols` columns at `counts_at`; NULL when out of memory (named for `who`). */
static void *counting_mode_new(size_t size, size_t counts_at, int cols, tj_mode_handler handler, const char *name,
                               const char *who)
{
    tj_mode *m = tj_alloc(size);
    if (!m) {
        tj_oom(who, size);
        return NULL;
    }
    memset(m, 0, size);
    m->handler = handler;
    m->ctx = m;
    m->name = name;
    ((op_counts *)((char *)m + counts_at))->cols = cols;
    return m;
}

struct tj_counter_mode {
    tj_mode base;
    int64_t total;
    op_counts counts; /* 1 column: calls */
};

static tj_status counter_handler(tj_mode *mode, const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    tj_counter_mode *m = (tj_counter_mode *)mode;
    int64_t *row = op_row(&m->counts, op, "counter mode");
    if (!row) return tj_last_status();
    row[0]++;
    m->total++;
    return tj_redispatch(mode, op, args, nargs, outs);
}

tj_counter_mode *tj_counter_mode_new(void)
{
    return counting_mode_new(sizeof(tj_counter_mode), offsetof(tj_counter_mode, counts), 1, counter_handler, "counter",
                             "tj_counter_mode_new");
}

tj_mode *tj_counter_mode_base(tj_counter_mode *m) { return m ? &m->base : NULL; }

int64_t tj_counter_mode_count(const tj_counter_mode *m, const tj_op *op) { return m ? op_count(&m->counts, op, 0) : 0; }

int64_t tj_counter_mode_total(const tj_counter_mode *m) { return m ? m->total : 0; }

void tj_counter_mode_free(tj_counter_mode *m)
{
    if (!m) return;
    op_counts_free(&m->counts);
    tj_free(m, sizeof *m);
}

struct tj_logger_mode {
    tj_mode base;
    FILE *out;
};

static tj_status logger_handler(tj_mode *mode, const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    tj_logger_mode *m = (tj_logger_mode *)mode;
    char buf[256];
    fprintf(m->out, "%s(", op->name);
    for (int i = 0; i < nargs; i++) {
        tj_value_describe(&args[i], buf, sizeof buf);
        fprintf(m->out, i ? ", %s" : "%s", buf);
    }
    fprintf(m->out, ")\n");
    return tj_redispatch(mode, op, args, nargs, outs);
}

tj_logger_mode *tj_logger_mode_new(void *file)
{
    if (!file) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_logger_mode_new: NULL file");
        return NULL;
    }
    tj_logger_mode *m = tj_alloc(sizeof *m);
    if (!m) {
        tj_oom("tj_logger_mode_new", sizeof *m);
        return NULL;
    }
    m->base.handler = logger_handler;
    m->base.ctx = m;
    m->base.name = "logger";
    m->out = file;
    return m;
}

tj_mode *tj_logger_mode_base(tj_logger_mode *m) { return m ? &m->base : NULL; }
void tj_logger_mode_free(tj_logger_mode *m) { tj_free(m, sizeof *m); }

/* ---- denormal census ---- */

struct tj_denormal_mode {
    tj_mode base;
    op_counts counts; /* 3 columns: calls, float result elements, denormal ones */
};

enum { CALLS, RESULTS, DENORMALS };

/* Denormal elements of the float tensor t (any strides): exponent bits 0 and
 * a nonzero fraction, read as bits, so that a thread that flushes denormals
 * (DAZ: they compare equal to 0) still sees them. */
static int64_t denormals_in(const tj_tensor *t)
{
    int64_t idx[TJ_MAX_DIMS] = {0}, n = 0, inner = t->ndim ? t->shape[t->ndim - 1] : 1,
            step = t->ndim ? t->strides[t->ndim - 1] : 0;
    const char *base = tj_tensor_ptr(t);
    size_t es = tj_dtype_size(t->dtype);
    for (int64_t done = 0; done < t->numel; done += inner) {
        int64_t off = 0;
        for (int d = 0; d < t->ndim - 1; d++) off += idx[d] * t->strides[d];
        const char *p = base + (size_t)off * es;
        for (int64_t i = 0; i < inner; i++, p += step * (int64_t)es) {
            if (t->dtype == TJ_FLOAT32) {
                uint32_t b;
                memcpy(&b, p, sizeof b);
                n += (b & 0x7f800000u) == 0 && (b & 0x007fffffu) != 0;
            } else {
                uint64_t b;
                memcpy(&b, p, sizeof b);
                n += (b & 0x7ff0000000000000u) == 0 && (b & 0x000fffffffffffffu) != 0;
            }
        }
        for (int d = t->ndim - 2; d >= 0 && ++idx[d] == t->shape[d]; d--) idx[d] = 0;
    }
    return n;
}

static void count_result(int64_t *row, const tj_tensor *t)
{
    if (!t || t->fake || (t->dtype != TJ_FLOAT32 && t->dtype != TJ_FLOAT64) || !t->numel) return;
    row[RESULTS] += t->numel;
    row[DENORMALS] += denormals_in(t);
}

static tj_status denormal_handler(tj_mode *mode, const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    tj_denormal_mode *m = (tj_denormal_mode *)mode;
    tj_status st = tj_redispatch(mode, op, args, nargs, outs);
    /* the row after the call: calls inside it (a decomposition's) may grow the table */
    int64_t *row = st == TJ_OK ? op_row(&m->counts, op, "denormal mode") : NULL;
    if (!row) return st == TJ_OK ? tj_last_status() : st;
    row[CALLS]++;
    /* the base's elements, counted where they were computed (transpose_ too: self's) */
    if (op->is_view || tj_op_is_inplace_view(op)) return st;
    for (int k = 0; k < op->nreturns; k++) {
        if (outs[k].kind == TJ_V_TENSOR) count_result(row, outs[k].u.t);
        else if (outs[k].kind == TJ_V_TENSORS)
            for (int i = 0; i < outs[k].n; i++) count_result(row, outs[k].u.ts[i]);
    }
    return st;
}

tj_denormal_mode *tj_denormal_mode_new(void)
{
    return counting_mode_new(sizeof(tj_denormal_mode), offsetof(tj_denormal_mode, counts), 3, denormal_handler,
                             "denormal census", "tj_denormal_mode_new");
}

tj_mode *tj_denormal_mode_base(tj_denormal_mode *m) { return m ? &m->base : NULL; }

void tj_denormal_mode_counts(const tj_denormal_mode *m, const tj_op *op, int64_t *calls, int64_t *results,
                             int64_t *denormals)
{
    if (calls) *calls = m ? op_count(&m->counts, op, CALLS) : 0;
    if (results) *results = m ? op_count(&m->counts, op, RESULTS) : 0;
    if (denormals) *denormals = m ? op_count(&m->counts, op, DENORMALS) : 0;
}

void tj_denormal_mode_free(tj_denormal_mode *m)
{
    if (!m) return;
    op_counts_free(&m->counts);
    tj_free(m, sizeof *m);
}
