/* Plans run on memory the caller lends (tj_plan_run_ctx_memory). Per input
 * and output the context keeps a tensor object over an external storage
 * and points it at the caller's array at each run, so a binding's call
 * (python/tjit.py, on NumPy and torch arrays) makes no tensor objects: the
 * addresses, and the strides when an array is not contiguous, are all it
 * passes. The wrappers follow the values' tensor objects, storages and vt
 * entries (tj_plan_caller_slots), so the storages pass to the context's
 * memory owner at release as the arena's do. */
#include <stdio.h>
#include <string.h>

#include "plan_internal.h"

static const tj_pvalue *slot_value(const tj_plan *p, int j)
{
    return &p->values[j < p->n_inputs ? p->input_values[j] : p->output_values[j - p->n_inputs]];
}

bool tj_plan_caller_init(tj_plan_context *c)
{
    const tj_plan *p = c->plan;
    for (int j = 0; j < tj_plan_caller_slots(p); j++) {
        const tj_pvalue *pv = slot_value(p, j);
        tj_storage *s = &c->storages[p->n_values + j];
        tj_tensor *t = &c->tensors[p->n_values + j];
        atomic_init(&s->refcount, 1);
        atomic_init(&s->version, 0);
        atomic_init(&s->n_detached, 0);
        s->external = true; /* the caller's memory: another slot may cover the same bytes */
        atomic_init(&t->refcount, 1);
        t->dtype = pv->dtype;
        t->ndim = pv->ndim;
        t->numel = pv->numel;
        t->borrowed = true;
        t->storage = s;
        memcpy(t->shape, pv->shape, sizeof t->shape);
        if (!tj_plan_fresh_uid(&t->uid)) return false;
    }
    return true;
}

/* Points slot j's wrapper at `data` with `strides` (NULL: contiguous), or
 * at an earlier slot's wrapper with the same memory and layout: an array
 * passed twice is one tensor to the plan, as it is eagerly (an output that
 * is an input). */
static tj_status bind_slot(tj_plan_context *c, int j, char *data, const int64_t *strides, const char *who)
{
    const tj_plan *p = c->plan;
    tj_tensor *t = &c->tensors[p->n_values + j];
    if (strides) memcpy(t->strides, strides, sizeof(int64_t) * (size_t)t->ndim);
    else tj_contiguous_strides(t->ndim, t->shape, t->strides);
    char what[64]; /* for messages: "tj_plan_run_memory: output 1" */
    snprintf(what, sizeof what, "%s: %s %d", who, j < p->n_inputs ? "input" : "output",
             j < p->n_inputs ? j : j - p->n_inputs);
    size_t nbytes;
    tj_status st = tj_check_lent_memory(what, t->dtype, t->ndim, t->shape, t->strides, &data, &nbytes);
    if (st != TJ_OK) return st;
    t->storage->data = data;
    t->storage->nbytes = nbytes;
    c->vt[p->n_values + j] = t;
    for (int i = 0; i < j; i++) {
        const tj_tensor *u = c->vt[p->n_values + i];
        if (u && u->storage->data == data && u->dtype == t->dtype && u->ndim == t->ndim &&
            !memcmp(u->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim) &&
            !memcmp(u->strides, t->strides, sizeof(int64_t) * (size_t)t->ndim)) {
            c->vt[p->n_values + j] = c->vt[p->n_values + i];
            break;
        }
    }
    return TJ_OK;
}

tj_status tj_plan_run_ctx_memory(tj_plan_context *c, void *const *data, const int64_t *strides)
{
    static const char *who = "tj_plan_run_memory";
    if (!c) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: NULL context", who);
    const tj_plan *p = c->plan;
    int slots = tj_plan_caller_slots(p);
    if (slots && !data) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: NULL data for %d arrays", who, slots);
    tj_status st = tj_plan_context_claim(c, who);
    if (st != TJ_OK) return st;
    for (int j = 0; j < slots && st == TJ_OK; j++) {
        if (j >= p->n_inputs && !data[j]) { /* the output stays in the context */
            c->vt[p->n_values + j] = NULL;
            continue;
        }
        st = bind_slot(c, j, data[j], strides ? strides + (size_t)j * TJ_MAX_DIMS : NULL, who);
    }
    tj_tensor *const *bound = c->vt + p->n_values;
    if (st == TJ_OK) st = tj_plan_run_claimed(c, bound, p->n_inputs, bound + p->n_inputs, who);
    tj_plan_context_unclaim(c);
    return st;
}
