/* Two ready-made modes: an operator counter and a call logger. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

struct tj_counter_mode {
    tj_mode base;
    int64_t total;
    int64_t *counts; /* indexed by operator index; grows with the registry */
    int n_counts;
};

static tj_status counter_handler(tj_mode *mode, const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    tj_counter_mode *m = (tj_counter_mode *)mode;
    if (op->index >= m->n_counts) {
        int n = tj_op_count();
        int64_t *c = tj_alloc(sizeof(int64_t) * (size_t)n);
        if (!c) return tj_oom("counter mode", sizeof(int64_t) * (size_t)n);
        memset(c, 0, sizeof(int64_t) * (size_t)n);
        if (m->counts) memcpy(c, m->counts, sizeof(int64_t) * (size_t)m->n_counts);
        tj_free(m->counts, sizeof(int64_t) * (size_t)m->n_counts);
        m->counts = c;
        m->n_counts = n;
    }
    m->counts[op->index]++;
    m->total++;
    return tj_redispatch(mode, op, args, nargs, outs);
}

tj_counter_mode *tj_counter_mode_new(void)
{
    tj_counter_mode *m = tj_alloc(sizeof *m);
    if (!m) {
        tj_oom("tj_counter_mode_new", sizeof *m);
        return NULL;
    }
    memset(m, 0, sizeof *m);
    m->base.handler = counter_handler;
    m->base.ctx = m;
    m->base.name = "counter";
    return m;
}

tj_mode *tj_counter_mode_base(tj_counter_mode *m) { return m ? &m->base : NULL; }

int64_t tj_counter_mode_count(const tj_counter_mode *m, const tj_op *op)
{
    return m && op && op->index < m->n_counts ? m->counts[op->index] : 0;
}

int64_t tj_counter_mode_total(const tj_counter_mode *m) { return m ? m->total : 0; }

void tj_counter_mode_free(tj_counter_mode *m)
{
    if (!m) return;
    tj_free(m->counts, sizeof(int64_t) * (size_t)m->n_counts);
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
