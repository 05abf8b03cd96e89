/* Plans at run time: execution contexts (arena, tensor objects, arguments
 * boxed once), binding inputs and outputs, the kernel loop. */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "native_build.h"
#include "plan_internal.h"
#include "runtime/iter.h"
#include "runtime/op_view.h"

int64_t tj_plan_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- contexts ---- */

/* A process-unique tensor id (the runtime hands them out only with new
 * tensor objects; context tensors live in one array). */
bool tj_plan_fresh_uid(uint64_t *uid)
{
    tj_tensor *t = tj_tensor_fake(TJ_FLOAT32, 0, NULL);
    if (!t) return false;
    *uid = t->uid;
    tj_scope_drop(t);
    return true;
}

static void set_geometry(tj_tensor *t, const tj_pvalue *v, tj_storage *s, int64_t offset)
{
    atomic_init(&t->refcount, 1);
    t->borrowed = true; /* the context's: views made of it must not keep it */
    t->dtype = v->dtype;
    t->ndim = v->ndim;
    t->numel = v->numel;
    t->offset = offset;
    memcpy(t->shape, v->shape, sizeof t->shape);
    memcpy(t->strides, v->strides, sizeof t->strides);
    t->storage = s;
}

/* Sizes of a context's arrays, in one place for allocation and release. */
typedef struct ctx_sizes {
    size_t tensors, storages, vt, args, node_args, lists, outs, steps, copy_out, wb_copy, prof;
} ctx_sizes;

static ctx_sizes sizes_of(const tj_plan *p)
{
    /* values, then one caller-memory wrapper per input and output (plan_memory.c) */
    size_t nv = (size_t)p->n_values + 1, ns = (size_t)p->n_steps + 1, nw = nv + (size_t)tj_plan_caller_slots(p);
    return (ctx_sizes){
        .tensors = sizeof(tj_tensor) * nw,
        .storages = sizeof(tj_storage) * nw,
        .vt = sizeof(tj_tensor *) * nw,
        .args = sizeof(tj_value) * (p->n_args + 1),
        .node_args = sizeof(tj_value *) * ((size_t)p->n_nodes + 1),
        .lists = sizeof(tj_tensor *) * (p->n_lists + 1),
        .outs = sizeof(tj_tensor *) * (p->n_outs + 1),
        .steps = sizeof(tj_step) * ns,
        .copy_out = (size_t)p->n_outputs + 1,
        .wb_copy = (size_t)p->n_outputs + 1,
        .prof = sizeof(int64_t) * ns,
    };
}

/* The write-back fallback's allocation (never 0 bytes: empty results may use it) */
static size_t fallback_size(const tj_plan *p)
{
    return p->stats.writeback_fallback_bytes ? p->stats.writeback_fallback_bytes : 64;
}

/* The memory a context's storages live in: the arena, the write-back
 * fallback and the storage headers. A view or an autograd saved alias of a
 * result (tj_plan_context_output) holds a reference on its storage, which may
 * outlive the context: at release the memory passes to this owner, freed with
 * the last such storage. */
typedef struct ctx_memory {
    tj_storage_owner owner;
    char *arena, *fallback;
    tj_storage *storages;
    size_t arena_bytes, fallback_bytes, storages_bytes;
} ctx_memory;

static void memory_free(tj_storage_owner *o)
{
    ctx_memory *m = (ctx_memory *)o;
    tj_free(m->arena, m->arena_bytes);
    tj_free(m->fallback, m->fallback_bytes);
    tj_free(m->storages, m->storages_bytes);
    tj_free(m, sizeof *m);
}

/* Drops the context's reference on each of its storages, which now release
 * c->memory instead of freeing themselves, then the context's own reference
 * on the memory. */
static void memory_release(tj_plan_context *c, size_t storages_bytes)
{
    const tj_plan *p = c->plan;
    ctx_memory *m = c->memory;
    *m = (ctx_memory){.owner.free = memory_free, .arena = c->arena, .fallback = c->fallback, .storages = c->storages,
                      .arena_bytes = c->arena_alloc, .fallback_bytes = fallback_size(p), .storages_bytes = storages_bytes};
    atomic_init(&m->owner.refcount, 1);
    for (int v = 0; c->storages && v < p->n_values + tj_plan_caller_slots(p); v++) {
        tj_storage *s = &c->storages[v];
        if (!atomic_load_explicit(&s->refcount, memory_order_relaxed)) continue; /* not bound */
        s->owner = &m->owner;
        atomic_fetch_add_explicit(&m->owner.refcount, 1, memory_order_relaxed);
        tj_storage_release(s);
    }
    tj_storage_owner_release(&m->owner);
}

static void context_release(tj_plan_context *c)
{
    if (!c) return;
    const tj_plan *p = c->plan;
    ctx_sizes z = sizes_of(p);
    if (c->memory) {
        memory_release(c, z.storages);
    } else {
        tj_free(c->arena, c->arena_alloc);
        tj_free(c->fallback, fallback_size(p));
        tj_free(c->storages, z.storages);
    }
    tj_free(c->tensors, z.tensors);
    tj_free(c->vt, z.vt);
    tj_free(c->args, z.args);
    tj_free(c->node_args, z.node_args);
    tj_free(c->lists, z.lists);
    tj_free(c->outs, z.outs);
    tj_free(c->steps, z.steps);
    tj_free(c->copy_out, z.copy_out);
    tj_free(c->wb_copy, z.wb_copy);
    tj_free(c->prof.total_ns, z.prof);
    tj_free(c->prof.last_start_ns, z.prof);
    tj_free(c->prof.last_dur_ns, z.prof);
    tj_free(c, sizeof *c);
}

static void bind_storage(tj_storage *s, char *data, size_t nbytes)
{
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    atomic_init(&s->n_detached, 0);
    s->sealed = false;
    s->external = false;
    s->data = data;
    s->nbytes = nbytes;
}

/* Whether value v's tensor object is bound in the first pass of
 * context_bind_values: the others take an object bound before them. */
static bool binds_first(const tj_pvalue *pv, int v)
{
    return pv->kind == TJ_PV_INPUT || pv->kind == TJ_PV_CONSTANT || (pv->kind == TJ_PV_ARENA && pv->object == v);
}

/* Tensor objects of every value: arena blocks, views with their compiled
 * geometry, inputs filled in per run (a staged input's storage is its
 * staging block, used when a run needs it). Blocks of their own, inputs and
 * constants first: a result in place over its donor's block runs as the
 * donor's object, which may come later in the graph (compile.c). */
static bool context_bind_values(tj_plan_context *c)
{
    const tj_plan *p = c->plan;
    for (int pass = 0; pass < 2; pass++) {
        for (int v = 0; v < p->n_values; v++) {
            const tj_pvalue *pv = &p->values[v];
            tj_tensor *t = &c->tensors[v];
            if (binds_first(pv, v) != (pass == 0)) continue;
            switch (pv->kind) {
            case TJ_PV_UNUSED: break;
            case TJ_PV_CONSTANT: c->vt[v] = pv->constant; break;
            case TJ_PV_SAME: c->vt[v] = c->vt[pv->base]; break;
            case TJ_PV_INPUT:
                set_geometry(t, pv, NULL, pv->offset);
                if (pv->staged) bind_storage(&c->storages[v], c->arena + pv->arena_offset, pv->nbytes);
                break;
            case TJ_PV_ARENA: {
                if (pv->object != v) { /* shares its donor's object */
                    c->vt[v] = c->vt[pv->object];
                    continue;
                }
                tj_storage *s = &c->storages[v];
                bind_storage(s, pv->in_input ? NULL : c->arena + pv->arena_offset, pv->nbytes); /* in_input: bound per run */
                set_geometry(t, pv, s, 0);
                break;
            }
            case TJ_PV_VIEW: {
                const tj_pvalue *r = &p->values[pv->root];
                if (r->kind == TJ_PV_ARENA) set_geometry(t, pv, c->vt[pv->root]->storage, pv->rel_offset);
                else if (r->kind == TJ_PV_CONSTANT) set_geometry(t, pv, r->constant->storage, r->constant->offset + pv->rel_offset);
                else set_geometry(t, pv, NULL, pv->offset);
                break;
            }
            }
            if (pv->kind == TJ_PV_INPUT || pv->kind == TJ_PV_ARENA || pv->kind == TJ_PV_VIEW) {
                if (!tj_plan_fresh_uid(&t->uid)) return false;
                c->vt[v] = t;
            }
        }
    }
    return true;
}

/* Arguments and outputs boxed once per node; the step table. */
static void context_bind_nodes(tj_plan_context *c)
{
    const tj_plan *p = c->plan;
    size_t a = 0, l = 0, o = 0;
    for (int i = 0; i < p->n_nodes; i++) {
        const tj_pnode *n = &p->nodes[i];
        c->node_args[i] = c->args + a;
        tj_garg_box(n->args, n->nargs, c->vt, c->args + a, c->lists + l);
        tj_tensor **outs = c->outs + o;
        for (int k = 0; k < n->nout; k++) outs[k] = n->outs[k] >= 0 ? c->vt[n->outs[k]] : NULL;
        if (n->is_step) c->steps[n->step] = (tj_step){n->kernel, c->args + a, outs};
        a += (size_t)n->nargs;
        l += (size_t)n->nlist;
        o += (size_t)n->nout;
    }
}

static tj_plan_context *context_create(tj_plan *p)
{
    tj_plan_context *c = tj_alloc(sizeof *c);
    if (!c) {
        tj_oom("tj_plan_context_new", sizeof *c);
        return NULL;
    }
    memset(c, 0, sizeof *c);
    c->plan = p;
    ctx_sizes z = sizes_of(p);
    c->arena_alloc = p->stats.arena_bytes ? p->stats.arena_bytes : 64;
    if (tj_check_memory_available("tj_plan_context_new", "the plan's arena", c->arena_alloc) != TJ_OK) {
        tj_free(c, sizeof *c);
        return NULL;
    }
    c->arena = tj_alloc(c->arena_alloc);
    c->tensors = tj_alloc(z.tensors);
    c->memory = tj_alloc(sizeof(ctx_memory));
    c->storages = tj_alloc(z.storages);
    c->vt = tj_alloc(z.vt);
    c->args = tj_alloc(z.args);
    c->node_args = tj_alloc(z.node_args);
    c->lists = tj_alloc(z.lists);
    c->outs = tj_alloc(z.outs);
    c->steps = tj_alloc(z.steps);
    c->copy_out = tj_alloc(z.copy_out);
    c->wb_copy = tj_alloc(z.wb_copy);
    c->prof.total_ns = tj_alloc(z.prof);
    c->prof.last_start_ns = tj_alloc(z.prof);
    c->prof.last_dur_ns = tj_alloc(z.prof);
    if (!c->arena || !c->tensors || !c->memory || !c->storages || !c->vt || !c->args || !c->node_args || !c->lists || !c->outs ||
        !c->steps || !c->copy_out || !c->wb_copy || !c->prof.total_ns || !c->prof.last_start_ns || !c->prof.last_dur_ns) {
        size_t arena = c->arena_alloc;
        tj_free(c->memory, sizeof(ctx_memory)); /* nothing is bound yet: free directly */
        c->memory = NULL;
        context_release(c);
        tj_oom("tj_plan_context_new", arena);
        return NULL;
    }
    /* touch every page now, so that runs take no page faults */
    memset(c->arena, 0, c->arena_alloc);
    memset(c->tensors, 0, z.tensors);
    memset(c->storages, 0, z.storages);
    memset(c->vt, 0, z.vt);
    memset(c->copy_out, 0, z.copy_out);
    memset(c->wb_copy, 0, z.wb_copy);
    memset(c->prof.total_ns, 0, z.prof);
    memset(c->prof.last_start_ns, 0, z.prof);
    memset(c->prof.last_dur_ns, 0, z.prof);
    if (!context_bind_values(c) || !tj_plan_caller_init(c)) {
        context_release(c);
        return NULL;
    }
    context_bind_nodes(c);
    return c;
}

tj_plan_context *tj_plan_context_new(tj_plan *p)
{
    if (!p) {
        tj_error_null("tj_plan_context_new: NULL plan");
        return NULL;
    }
    tj_plan_context *c = context_create(p);
    if (!c) return NULL;
    pthread_mutex_lock(&p->lock);
    c->id = p->next_ctx_id++;
    c->next = p->contexts;
    p->contexts = c;
    pthread_mutex_unlock(&p->lock);
    return c;
}

void tj_plan_context_free(tj_plan_context *c)
{
    if (!c) return;
    tj_plan *p = c->plan;
    pthread_mutex_lock(&p->lock);
    for (tj_plan_context **l = &p->contexts; *l; l = &(*l)->next)
        if (*l == c) {
            *l = c->next;
            break;
        }
    if (p->default_ctx == c) p->default_ctx = NULL;
    pthread_mutex_unlock(&p->lock);
    context_release(c);
}

tj_plan_context *tj_plan_default_context(tj_plan *p)
{
    if (!p) {
        tj_error_null("tj_plan_default_context: NULL plan");
        return NULL;
    }
    pthread_mutex_lock(&p->lock);
    tj_plan_context *c = p->default_ctx;
    pthread_mutex_unlock(&p->lock);
    if (c) return c;
    c = tj_plan_context_new(p);
    if (!c) return NULL;
    pthread_mutex_lock(&p->lock);
    if (!p->default_ctx) p->default_ctx = c;
    tj_plan_context *won = p->default_ctx;
    pthread_mutex_unlock(&p->lock);
    if (won != c) tj_plan_context_free(c);
    return won;
}

void tj_plan_free(tj_plan *p)
{
    if (!p) return;
    while (p->contexts) tj_plan_context_free(p->contexts);
    for (int v = 0; v < p->n_values; v++)
        if (p->values[v].kind == TJ_PV_CONSTANT) tj_tensor_release(p->values[v].constant);
    pthread_mutex_destroy(&p->lock);
    tj_native_unload(p->native_handle);
    tj_pool_free(p->pool);
}

const char *tj_plan_native_code_error(const tj_plan *p) { return p && p->native_error[0] ? p->native_error : NULL; }

int tj_plan_num_inputs(const tj_plan *p) { return p ? p->n_inputs : 0; }
int tj_plan_num_outputs(const tj_plan *p) { return p ? p->n_outputs : 0; }

static tj_status value_type(const tj_plan *p, const char *who, const char *what, int i, int n, const int *values,
                            tj_dtype *dtype, int *ndim, int64_t *shape)
{
    if (!p || !dtype || !ndim || !shape) return tj_error_null("%s: NULL argument", who);
    if (i < 0 || i >= n) return tj_error(TJ_ERR_INDEX, "%s: %s %d of %d", who, what, i, n);
    const tj_pvalue *v = &p->values[values[i]];
    *dtype = v->dtype;
    *ndim = v->ndim;
    memcpy(shape, v->shape, sizeof(int64_t) * (size_t)v->ndim);
    return TJ_OK;
}

tj_status tj_plan_input_type(const tj_plan *p, int i, tj_dtype *dtype, int *ndim, int64_t *shape)
{
    return value_type(p, "tj_plan_input_type", "input", i, p ? p->n_inputs : 0, p ? p->input_values : NULL, dtype,
                      ndim, shape);
}

tj_status tj_plan_output_type(const tj_plan *p, int k, tj_dtype *dtype, int *ndim, int64_t *shape)
{
    return value_type(p, "tj_plan_output_type", "output", k, p ? p->n_outputs : 0, p ? p->output_values : NULL,
                      dtype, ndim, shape);
}

bool tj_plan_writes_input(const tj_plan *p, int i)
{
    if (!p || i < 0 || i >= p->n_inputs) return false;
    for (int k = 0; k < p->n_outputs; k++)
        if (p->writeback[k] == i) return true;
    for (int k = 0; k < p->n_input_writers; k++) {
        const tj_pnode *n = &p->nodes[p->input_writers[k]];
        for (int o = 0; o < n->nout; o++) {
            const tj_pvalue *w = n->outs[o] >= 0 ? &p->values[p->values[n->outs[o]].root] : NULL;
            if (w && w->kind == TJ_PV_INPUT && w->input_index == i) return true;
        }
    }
    return false;
}

/* ---- one run ---- */

static tj_status type_error(const char *who, const char *what, int i, const tj_pvalue *v, const tj_tensor *t)
{
    char a[128], b[128];
    if (t->dtype != v->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: %s %d (%%%s) is %s%s, the plan was compiled for %s%s", who, what, i, v->name,
                        tj_dtype_name(t->dtype), tj_shape_str(t->ndim, t->shape, a, sizeof a), tj_dtype_name(v->dtype),
                        tj_shape_str(v->ndim, v->shape, b, sizeof b));
    return tj_error(TJ_ERR_SHAPE, "%s: %s %d (%%%s) has shape %s, the plan was compiled for %s", who, what, i, v->name,
                    tj_shape_str(t->ndim, t->shape, a, sizeof a), tj_shape_str(v->ndim, v->shape, b, sizeof b));
}

static bool same_type(const tj_pvalue *v, const tj_tensor *t)
{
    if (t->dtype != v->dtype || t->ndim != v->ndim) return false;
    for (int d = 0; d < v->ndim; d++)
        if (t->shape[d] != v->shape[d]) return false;
    return true;
}

static bool same_strides(const tj_pvalue *v, const tj_tensor *t)
{
    for (int d = 0; d < v->ndim; d++)
        if (t->strides[d] != v->strides[d] && v->shape[d] != 1) return false;
    return true;
}

/* Re-runs the shape function of the view producing value v, for an input
 * whose strides differ from the compiled ones (an identity's alias takes
 * its operand's geometry). A reshape view (view, _unsafe_view) the strides
 * do not allow of an input with a staging block sets *stage: the caller
 * copies the input there. Without one, a view the strides do not allow
 * fails as eagerly (aten::view); one whose operator would copy instead
 * (_unsafe_view: its shape function then names no alias) cannot stay a
 * view: the plan has no block for a copy, so the run is refused rather
 * than reading the input through strides that do not fit it. */
static tj_status reresolve_view(tj_plan_context *c, int v, const char *who, bool *stage)
{
    const tj_plan *p = c->plan;
    const tj_pvalue *pv = &p->values[v];
    const tj_pnode *n = &p->nodes[pv->node];
    tj_tensor *t = &c->tensors[v];
    const tj_tensor *b = c->vt[pv->base];
    if (n->identity) { /* an alias of its operand (simplify.c): the operand's geometry */
        memcpy(t->strides, b->strides, sizeof t->strides);
        t->offset = b->offset;
        t->storage = b->storage;
        return TJ_OK;
    }
    int64_t strides[TJ_MAX_DIMS];
    if (p->values[pv->root].staged && tj_plan_is_reshape_view(n->op) &&
        !tj_view_strides(b->ndim, b->shape, b->strides, pv->ndim, pv->shape, strides)) {
        *stage = true;
        return TJ_OK;
    }
    tj_meta m[TJ_MAX_RETURNS];
    memset(m, 0, sizeof m);
    for (int i = 0; i < TJ_MAX_RETURNS; i++) m[i].alias = -1;
    tj_status st = n->op->meta(c->node_args[pv->node], m);
    if (st != TJ_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", tj_last_error());
        return tj_error(st, "%s: node %%%s: %s", who, n->name, msg);
    }
    if (m[pv->index].alias < 0)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: node %%%s: %s was compiled as a view of its operand, which this "
                        "run's input strides do not allow (it would copy); pass the input with the compiled strides "
                        "(contiguous) or compile for these", who, n->name, tj_op_name(n->op));
    memcpy(t->strides, m[pv->index].strides, sizeof t->strides);
    t->offset = m[pv->index].offset;
    t->storage = c->tensors[pv->root].storage;
    return TJ_OK;
}

/* as_strided reaches any element of its input's storage: a view it makes of
 * an input (at the traced geometry, shifted by the input's storage offset
 * unless as_strided was given its own: tj_pvalue.abs_offset) must lie
 * inside the storage of this run's input, which may hold fewer elements
 * than the traced one's (a plain tensor where a slice of a larger storage
 * was traced, a broadcast input), or start it at a lower offset. So may a
 * view from a user's shape function (library.h), which says where it
 * steps: checked as the dispatcher checks it eagerly, in the storage this
 * run binds (a staging copy's block holds exactly its elements).
 * Refused as eager as_strided refuses it, rather than read out of bounds. */
static tj_status check_strided_views(const tj_plan_context *c, tj_tensor *const *inputs, const char *who)
{
    const tj_plan *p = c->plan;
    for (int k = 0; k < p->n_input_views; k++) {
        int v = p->input_views[k];
        const tj_pvalue *pv = &p->values[v];
        const tj_pnode *n = &p->nodes[pv->node];
        bool user = !tj_op_is_builtin(n->op);
        if ((n->op->meta != tj_meta_as_strided && !user) || n->identity) continue;
        const tj_tensor *t = &c->tensors[v];
        int i = p->values[pv->root].input_index;
        int64_t have = t->storage == inputs[i]->storage ? tj_storage_elements(inputs[i])
                                                         : (int64_t)(t->storage->nbytes / tj_dtype_size(t->dtype));
        bool empty = false;
        for (int d = 0; d < t->ndim; d++) empty |= t->shape[d] == 0;
        int64_t lo, hi;
        bool over = !tj_layout_element_range(t->ndim, t->shape, t->strides, t->offset, &lo, &hi);
        if (!over && lo >= 0 && (empty ? t->offset <= have : hi < have)) continue;
        char b1[192], b2[192];
        return tj_error(user ? TJ_ERR_INDEX : TJ_ERR_SHAPE, "%s: node %%%s: %s: size %s, stride %s and storage offset %" PRId64
                        " reach element %" PRId64 ", out of bounds for the storage of %" PRId64 " elements of this "
                        "run's input %d (%%%s)", who, n->name, tj_op_name(n->op), tj_shape_str(t->ndim, t->shape, b1, sizeof b1),
                        tj_shape_str(t->ndim, t->strides, b2, sizeof b2), t->offset, lo < 0 ? lo : hi,
                        have, i, p->values[pv->root].name);
    }
    return TJ_OK;
}

/* The compile-time checks of the in-place operators writing into inputs
 * (their meta functions) again on this run's inputs: an input expanded with
 * stride 0, or overlapping another operand of the operator without being it,
 * is refused as eagerly, not computed over elements already written. */
static tj_status check_input_writers(tj_plan_context *c, const char *who)
{
    const tj_plan *p = c->plan;
    for (int k = 0; k < p->n_input_writers; k++) {
        const tj_pnode *n = &p->nodes[p->input_writers[k]];
        tj_meta m[TJ_MAX_RETURNS];
        tj_status st = n->op->meta(c->node_args[p->input_writers[k]], m);
        if (st != TJ_OK) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", tj_last_error());
            return tj_error(st, "%s: node %%%s: %s", who, n->name, msg);
        }
    }
    return TJ_OK;
}

/* Copies input value v (the caller's tensor x) into its staging block and
 * makes the copy what the run reads as v. Laid out with the compiled strides
 * when they are dense, since the graph's views were resolved for them (a
 * view merging the dims of an input traced transposed holds for its
 * transposed strides, not for contiguous ones, which bind_inputs would then
 * stage again without end); otherwise contiguous, which every reshape view
 * allows. */
static void stage_input(tj_plan_context *c, int v, const tj_tensor *x)
{
    const tj_pvalue *pv = &c->plan->values[v];
    tj_tensor *d = &c->tensors[v];
    d->storage = &c->storages[v];
    d->offset = 0;
    if (tj_non_overlapping_and_dense(pv->ndim, pv->shape, pv->strides))
        memcpy(d->strides, pv->strides, sizeof(int64_t) * (size_t)pv->ndim);
    else
        tj_contiguous_strides(d->ndim, d->shape, d->strides);
    tj_copy_tensor(d, x);
}

/* A staged input's copy is taken before the first step: refused when a step
 * writes in place into another input sharing its memory, whose write the
 * copy would miss (the staged input itself is never written: compile.c). */
static tj_status check_staged_alias(tj_plan_context *c, tj_tensor *const *inputs, int v, const char *who)
{
    const tj_plan *p = c->plan;
    int i = p->values[v].input_index;
    for (int k = 0; k < p->n_input_writers; k++) {
        const tj_pnode *n = &p->nodes[p->input_writers[k]];
        for (int o = 0; o < n->nout; o++) {
            if (n->outs[o] < 0) continue;
            const tj_pvalue *w = &p->values[p->values[n->outs[o]].root];
            if (w->kind == TJ_PV_INPUT && tj_storages_overlap(inputs[w->input_index]->storage, inputs[i]->storage))
                return tj_error(TJ_ERR_UNSUPPORTED, "%s: input %d (%%%s) must be copied for this run's strides, but "
                                "shares memory with input %d (%%%s), which node %%%s writes in place: the copy "
                                "would miss the write; pass separate tensors or the compiled strides",
                                who, i, p->values[v].name, w->input_index, w->name, n->name);
        }
    }
    return TJ_OK;
}

/* Whether storage s is one of the context's own (an arena or fallback block,
 * a staging block): the storage of tj_plan_context_output's tensors and of
 * views of them. Compared as integers: s may point into any object. */
static bool context_owns(const tj_plan_context *c, const tj_storage *s)
{
    uintptr_t a = (uintptr_t)s, lo = (uintptr_t)c->storages;
    return a >= lo && a - lo < sizeof(tj_storage) * (size_t)c->plan->n_values;
}

/* A tensor of the context read or written by its own run would see its
 * memory rewritten by the steps, or rebound to another buffer by the
 * bindings (an output written straight into the caller's tensor): refused
 * rather than computed from garbage. */
static tj_status context_tensor_error(const tj_plan_context *c, const char *who, const char *what, int i, int v)
{
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: %s %d (%%%s) is a result of this context's last run "
                    "(tj_plan_context_output or a view of it), which this run overwrites; clone() it first, or "
                    "run on another context (tj_plan_context_new)", who, what, i, c->plan->values[v].name);
}

/* Whether view v of an input is, or views, what as_strided made of the
 * input's storage: an as_strided with no reshape view between it and the
 * input (one that may copy, as the staging block does, whose storage a
 * later as_strided then addresses). */
static bool strided_from_storage(const tj_plan *p, int v)
{
    bool strided = false;
    for (; p->values[v].kind == TJ_PV_VIEW; v = p->values[v].base) {
        const tj_pnode *n = &p->nodes[p->values[v].node];
        if (n->identity) continue;
        if (n->op->meta == tj_meta_as_strided) strided = true;
        else if (tj_plan_is_reshape_view(n->op)) strided = false;
    }
    return strided;
}

static const char *plan_input_name(const void *plan, int i)
{
    const tj_plan *p = plan;
    return p->values[p->input_values[i]].name;
}

static tj_status bind_inputs(tj_plan_context *c, tj_tensor *const *inputs, int n, const char *who)
{
    const tj_plan *p = c->plan;
    if (n != p->n_inputs)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: the plan takes %d input%s, got %d", who, p->n_inputs,
                        p->n_inputs == 1 ? "" : "s", n);
    if (n && !inputs) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: NULL inputs", who);
    bool restrided = false;
    for (int i = 0; i < n; i++) {
        const tj_tensor *t = inputs[i];
        int v = p->input_values[i];
        const tj_pvalue *pv = &p->values[v];
        if (!t || t->fake)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: input %d (%%%s) is %s", who, i, pv->name, t ? "a fake tensor" : "NULL");
        if (!same_type(pv, t)) return type_error(who, "input", i, pv, t);
        if (context_owns(c, t->storage)) return context_tensor_error(c, who, "input", i, v);
        tj_status st = tj_graph_check_input_geometry(who, i, pv->name, pv->strides, pv->offset, pv->geometry_bound, t);
        if (st != TJ_OK) return st;
        tj_tensor *d = &c->tensors[v];
        d->storage = t->storage;
        d->offset = t->offset;
        memcpy(d->strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
        restrided |= pv->n_views > 0 && !same_strides(pv, t);
    }
    tj_status st = tj_check_writeback_aliases(inputs, n, p->writeback, p->n_outputs, who, plan_input_name, p);
    if (st != TJ_OK) return st;
    /* set before the views: a run failing among them leaves some
     * re-resolved, which the next run must undo */
    bool undo = c->views_restrided;
    c->views_restrided = restrided;
    for (int k = 0; k < p->n_input_views; k++) {
        int v = p->input_views[k];
        const tj_pvalue *pv = &p->values[v];
        const tj_tensor *root = &c->tensors[pv->root];
        /* as_strided's geometry does not follow its input's strides: it is
         * bound below to the caller's storage, never re-resolved against a
         * staging copy (which made it read the copy's elements) */
        if (restrided && !same_strides(&p->values[pv->root], root) && !strided_from_storage(p, v)) {
            bool stage = false;
            st = reresolve_view(c, v, who, &stage);
            if (st != TJ_OK) return st;
            if (stage) { /* then every view of every input again: the staged one's from the copy */
                st = check_staged_alias(c, inputs, pv->root, who);
                if (st != TJ_OK) return st;
                stage_input(c, pv->root, inputs[p->values[pv->root].input_index]);
                undo = true; /* views re-resolved before it read the input at this run's strides */
                k = -1;
            }
            continue;
        }
        tj_tensor *t = &c->tensors[v];
        /* as_strided reads the caller's storage, not a staging copy of its elements */
        if (root->storage == &c->storages[pv->root] && strided_from_storage(p, v))
            root = inputs[p->values[pv->root].input_index];
        t->storage = root->storage;
        /* as_strided's storage_offset argument is absolute, eager's too */
        t->offset = pv->abs_offset ? pv->offset : root->offset + pv->rel_offset;
        if (undo) memcpy(t->strides, pv->strides, sizeof t->strides); /* undo an earlier run's */
    }
    st = check_strided_views(c, inputs, who);
    return st != TJ_OK ? st : check_input_writers(c, who);
}

static bool shares_input(const tj_plan *p, tj_tensor *const *inputs, const tj_tensor *t)
{
    for (int i = 0; i < p->n_inputs; i++)
        if (tj_storages_overlap(inputs[i]->storage, t->storage)) return true;
    return false;
}

/* Output tensors sharing an input's storage are copied into last (see
 * run_bound), so that the other outputs' values are read before any input
 * changes. Refuses what that order cannot make right: such a tensor
 * overlapping the value of another of them (an input or a view of one that
 * the graph returns), or overlapping an input the run writes back (but as
 * that very input's own output): either copy would change what the other
 * writes or reads. */
static tj_status check_late_copies(const tj_plan_context *c, tj_tensor *const *inputs, tj_tensor *const *outputs,
                                   const char *who)
{
    const tj_plan *p = c->plan;
    for (int k = 0; k < p->n_outputs; k++) {
        const tj_tensor *o = outputs ? outputs[k] : NULL;
        if (!c->copy_out[k] || !shares_input(p, inputs, o)) continue;
        /* its own value in another layout (x <- x^T, x[1:] <- x[:-1]): the
         * copy would overwrite elements before reading them, as copy_ refuses */
        if (tj_overlap_status(o, c->vt[p->output_values[k]]) == TJ_OVERLAP_PARTIAL)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output %d (%%%s) shares memory with its own value (an input "
                            "or a view of one) in another layout: copied after the run, it would overwrite elements "
                            "before reading them; pass an output tensor that does not overlap the inputs", who, k,
                            p->values[p->output_values[k]].name);
        for (int j = 0; j < p->n_outputs; j++)
            if (j != k && c->copy_out[j] && shares_input(p, inputs, outputs[j]) &&
                tj_overlap_status(o, c->vt[p->output_values[j]]) != TJ_OVERLAP_NONE)
                return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output %d (%%%s) shares memory with output %d's value "
                                "(%%%s, an input or a view of one): copied after the run, either would change the "
                                "other; pass output tensors that do not overlap the inputs", who, k,
                                p->values[p->output_values[k]].name, j, p->values[p->output_values[j]].name);
        for (int m = 0; m < p->n_outputs; m++) {
            int i = p->writeback[m];
            /* a written-back value that is an input (or a view of one) is
             * read after this copy: it would take the copy's values */
            if (i >= 0 && m != k && tj_overlap_status(o, c->vt[p->output_values[m]]) != TJ_OVERLAP_NONE)
                return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output %d (%%%s) shares memory with the value of "
                                "output %d (%%%s), which the run writes back into input %d after copying output %d: "
                                "the write-back would read the copy; pass an output tensor that does not overlap it",
                                who, k, p->values[p->output_values[k]].name, m, p->values[p->output_values[m]].name, i,
                                k);
            tj_overlap ov = i >= 0 ? tj_overlap_status(o, inputs[i]) : TJ_OVERLAP_NONE;
            if (ov != TJ_OVERLAP_NONE && !(m == k && ov == TJ_OVERLAP_FULL))
                return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output %d (%%%s) shares memory with input %d (%%%s), "
                                "which the run writes back (output %d): two results would land on the same memory; "
                                "pass an output tensor that does not overlap it", who, k,
                                p->values[p->output_values[k]].name, i, plan_input_name(p, i), m);
        }
    }
    return TJ_OK;
}

/* Points each output's block at the caller's tensor where its kernel can
 * write there directly; the others are copied after the run. */
static tj_status bind_outputs(tj_plan_context *c, tj_tensor *const *inputs, tj_tensor *const *outputs, const char *who)
{
    const tj_plan *p = c->plan;
    for (int k = 0; k < p->n_outputs; k++) {
        int v = p->output_values[k];
        const tj_tensor *o = outputs ? outputs[k] : NULL;
        if (o && (o->fake || !o->storage))
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output %d (%%%s) is a fake tensor", who, k, p->values[v].name);
        if (o && !same_type(&p->values[v], o)) return type_error(who, "output", k, &p->values[v], o);
        if (o && context_owns(c, o->storage)) return context_tensor_error(c, who, "output", k, v);
        /* refused before anything is written: results copied into a tensor
         * with repeated elements, or into two overlapping tensors, would
         * overwrite one another (hostile tests) */
        if (o && tj_may_self_overlap(o))
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output %d (%%%s) has elements that share memory (a "
                            "broadcast view?)", who, k, p->values[v].name);
        for (int j = 0; o && j < k; j++)
            if (outputs[j] && tj_overlap_status(outputs[j], o) != TJ_OVERLAP_NONE)
                return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: outputs %d and %d overlap in memory", who, j, k);
        bool direct = o && p->direct_out[k] && tj_tensor_is_contiguous(o) && !shares_input(p, inputs, o);
        for (int j = 0; direct && j < k; j++) direct = !outputs[j] || !tj_storages_overlap(outputs[j]->storage, o->storage);
        /* an output that is its write-back input gets the value from the write-back */
        c->copy_out[k] = o && !direct && !(p->writeback[k] >= 0 && o == inputs[p->writeback[k]]);
        if (!p->direct_out[k]) continue;
        int obj = tj_plan_object_value(p, v);
        c->storages[obj].data = direct ? tj_tensor_ptr(o) : c->arena + p->values[obj].arena_offset;
    }
    return check_late_copies(c, inputs, outputs, who);
}

/* Points each written-back output's block at its input's buffer where the
 * plan allows it and the input is contiguous and shares no storage with
 * another input. Otherwise the block is in the context's fallback region,
 * allocated (and touched) the first time a run needs it, and the value is
 * copied in after the run. */
static tj_status bind_writebacks(tj_plan_context *c, tj_tensor *const *inputs, const char *who)
{
    const tj_plan *p = c->plan;
    for (int k = 0; k < p->n_outputs; k++) {
        int j = p->writeback[k];
        c->wb_copy[k] = j >= 0;
        if (j < 0 || !p->wb_direct[k]) continue;
        const tj_tensor *x = inputs[j];
        bool direct = tj_tensor_is_contiguous(x);
        for (int i = 0; direct && i < p->n_inputs; i++) direct = i == j || !tj_storages_overlap(inputs[i]->storage, x->storage);
        if (!direct && !c->fallback) {
            size_t bytes = fallback_size(p);
            if (!(c->fallback = tj_alloc(bytes))) return tj_oom(who, bytes);
            memset(c->fallback, 0, bytes);
        }
        int obj = tj_plan_object_value(p, p->output_values[k]);
        c->storages[obj].data = direct ? tj_tensor_ptr(x) : c->fallback + p->values[obj].arena_offset;
        c->wb_copy[k] = !direct;
    }
    return TJ_OK;
}

static tj_status run_steps(tj_plan_context *c)
{
    const tj_step *s = c->steps;
    int n = c->plan->n_steps;
    for (int i = 0; i < n; i++) {
        tj_status st = s[i].fn(s[i].args, s[i].outs);
        if (st != TJ_OK) return st;
    }
    return TJ_OK;
}

static tj_status run_steps_profiled(tj_plan_context *c)
{
    const tj_plan *p = c->plan;
    const tj_step *s = c->steps;
    tj_profile *pr = &c->prof;
    int64_t start = tj_plan_now_ns(), t0 = start;
    tj_status st = TJ_OK;
    for (int i = 0; i < p->n_steps && st == TJ_OK; i++) {
        st = s[i].fn(s[i].args, s[i].outs);
        int64_t t1 = tj_plan_now_ns();
        pr->total_ns[i] += t1 - t0;
        pr->last_start_ns[i] = t0 - p->epoch_ns;
        pr->last_dur_ns[i] = t1 - t0;
        t0 = t1;
    }
    if (st != TJ_OK) return st;
    pr->runs++;
    pr->last_run_start_ns = start - p->epoch_ns;
    pr->last_run_ns = t0 - start;
    pr->run_ns += pr->last_run_ns;
    return TJ_OK;
}

/* The inputs this run wrote have a new version, as after the in-place
 * operators the plan stands for: written-back inputs and inputs that steps
 * write in place. */
static void bump_input_versions(const tj_plan_context *c, tj_tensor *const *inputs)
{
    const tj_plan *p = c->plan;
    for (int k = 0; k < p->n_outputs; k++)
        if (p->writeback[k] >= 0) tj_tensor_bump_version(inputs[p->writeback[k]]);
    for (int k = 0; k < p->n_input_writers; k++)
        tj_tensor_bump_version(c->node_args[p->input_writers[k]][0].u.t);
}

/* The context's own result tensors (tj_plan_context_output) hold new values
 * after a run: a new version lets autograd catch one it saved from an earlier
 * run. Outputs that are inputs or constants are not written by the run. */
static void bump_context_outputs(const tj_plan_context *c)
{
    const tj_plan *p = c->plan;
    for (int k = 0; k < p->n_outputs; k++) {
        int v = p->output_values[k];
        if (p->values[p->values[v].root].kind == TJ_PV_ARENA) tj_tensor_bump_version(c->vt[v]);
    }
}

/* Binds this run's tensors and runs the steps (run_into). */
static tj_status run_bound(tj_plan_context *c, tj_tensor *const *inputs, int n, tj_tensor *const *outputs,
                           const char *who)
{
    const tj_plan *p = c->plan;
    tj_status st = bind_inputs(c, inputs, n, who);
    if (st == TJ_OK) st = bind_outputs(c, inputs, outputs, who);
    if (st == TJ_OK) st = bind_writebacks(c, inputs, who);
    if (st != TJ_OK) return st;
    st = atomic_load_explicit(&p->profiling, memory_order_relaxed) ? run_steps_profiled(c) : run_steps(c);
    if (st != TJ_OK) return tj_error_if_unrecorded(st, who, "a step's kernel"); /* a user's kernel */
    /* tensors sharing an input's storage last: every value is read first (check_late_copies) */
    for (int late = 0; late < 2; late++)
        for (int k = 0; k < p->n_outputs; k++)
            if (c->copy_out[k] && shares_input(p, inputs, outputs[k]) == late)
                tj_copy_convert(outputs[k], c->vt[p->output_values[k]]);
    for (int k = 0; k < p->n_outputs; k++)
        if (c->wb_copy[k]) tj_copy_convert(inputs[p->writeback[k]], c->vt[p->output_values[k]]);
    bump_input_versions(c, inputs);
    bump_context_outputs(c);
    return TJ_OK;
}

/* A plan whose steps write a graph constant (a captured tensor written in
 * place, updated by every run as torch's GraphModule updates its
 * _tensor_constant) runs on one context at a time: two at once would race
 * on the constant. The second is refused, not serialised: which of two
 * concurrent runs sees the other's update would be left to chance. */
static tj_status enter_constant_writer(tj_plan *p, const char *who)
{
    bool idle = false;
    if (p->constant_writer < 0 ||
        atomic_compare_exchange_strong_explicit(&p->constant_busy, &idle, true, memory_order_acquire,
                                                memory_order_relaxed))
        return TJ_OK;
    const tj_pnode *n = &p->nodes[p->constant_writer];
    return tj_error(TJ_ERR_UNSUPPORTED, "%s: node %%%s (%s) writes graph constant %%%s in place, and another run of "
                    "this plan is in progress: a plan that updates a constant runs on one context at a time",
                    who, n->name, n->op->name, p->values[p->written_constant].name);
}

static void leave_constant_writer(tj_plan *p)
{
    if (p->constant_writer >= 0) atomic_store_explicit(&p->constant_busy, false, memory_order_release);
}

/* Two runs on one context's arena and tensors at once gave wrong values (4
 * threads calling tj_plan_run): the second is refused, as a second writer of
 * a graph constant is. */
tj_status tj_plan_context_claim(tj_plan_context *c, const char *who)
{
    bool idle = false;
    if (atomic_compare_exchange_strong_explicit(&c->running, &idle, true, memory_order_acquire, memory_order_relaxed))
        return TJ_OK;
    return tj_error(TJ_ERR_UNSUPPORTED, "%s: another run of this context is in progress: a context (tj_plan_run's: "
                    "the plan's default one) runs one thread at a time; give each thread its own "
                    "(tj_plan_context_new)", who);
}

void tj_plan_context_unclaim(tj_plan_context *c) { atomic_store_explicit(&c->running, false, memory_order_release); }

tj_status tj_plan_run_claimed(tj_plan_context *c, tj_tensor *const *inputs, int n, tj_tensor *const *outputs,
                              const char *who)
{
    tj_status st = enter_constant_writer(c->plan, who);
    if (st != TJ_OK) return st;
    st = run_bound(c, inputs, n, outputs, who);
    leave_constant_writer(c->plan);
    return st;
}

/* who: the public function, for messages (tj_plan_run runs through here). */
static tj_status run_into(tj_plan_context *c, tj_tensor *const *inputs, int n, tj_tensor *const *outputs,
                          const char *who)
{
    if (!c) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: NULL plan or context", who);
    /* inside make_fx, the steps below would be invisible to the trace */
    tj_status st = tj_check_read_past_dispatch(inputs, n, who);
    if (st == TJ_OK) st = tj_check_read_past_dispatch(outputs, c->plan->n_outputs, who);
    if (st == TJ_OK) st = tj_plan_context_claim(c, who);
    if (st != TJ_OK) return st;
    st = tj_plan_run_claimed(c, inputs, n, outputs, who);
    tj_plan_context_unclaim(c);
    return st;
}

tj_status tj_plan_run_ctx_into(tj_plan_context *c, tj_tensor *const *inputs, int n, tj_tensor *const *outputs)
{
    tj_status st = run_into(c, inputs, n, outputs, "tj_plan_run_into");
    for (int k = 0; st == TJ_OK && outputs && k < c->plan->n_outputs; k++)
        if (outputs[k]) tj_tensor_bump_version(outputs[k]);
    return st;
}

tj_status tj_plan_run_ctx(tj_plan_context *c, tj_tensor *const *inputs, int n, tj_tensor **outputs)
{
    if (!c) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_plan_run: NULL plan or context");
    const tj_plan *p = c->plan;
    if (!outputs && p->n_outputs > 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_plan_run: NULL outputs for a plan with %d output%s", p->n_outputs,
                        p->n_outputs == 1 ? "" : "s");
    tj_status st = TJ_OK;
    for (int k = 0; k < p->n_outputs; k++) outputs[k] = NULL;
    /* written-back outputs come back as their input (after the run) */
    for (int k = 0; k < p->n_outputs && st == TJ_OK; k++) {
        const tj_pvalue *v = &p->values[p->output_values[k]];
        if (p->writeback[k] < 0 && !(outputs[k] = tj_tensor_empty(v->dtype, v->ndim, v->shape))) st = tj_last_status();
    }
    if (st == TJ_OK) st = run_into(c, inputs, n, outputs, "tj_plan_run");
    for (int k = 0; k < p->n_outputs && st == TJ_OK; k++) {
        if (p->writeback[k] < 0) continue;
        outputs[k] = tj_tensor_retain(inputs[p->writeback[k]]);
        if ((st = tj_scope_adopt(outputs[k])) != TJ_OK) {
            tj_tensor_release(outputs[k]);
            outputs[k] = NULL;
        }
    }
    if (st != TJ_OK)
        for (int k = 0; k < p->n_outputs; k++) {
            tj_scope_drop(outputs[k]);
            outputs[k] = NULL;
        }
    return st;
}

tj_status tj_plan_run(tj_plan *p, tj_tensor *const *inputs, int n, tj_tensor **outputs)
{
    if (!p) return tj_error_null("tj_plan_run: NULL plan");
    tj_plan_context *c = tj_plan_default_context(p);
    return c ? tj_plan_run_ctx(c, inputs, n, outputs) : tj_last_status();
}

tj_status tj_plan_run_into(tj_plan *p, tj_tensor *const *inputs, int n, tj_tensor *const *outputs)
{
    if (!p) return tj_error_null("tj_plan_run_into: NULL plan");
    tj_plan_context *c = tj_plan_default_context(p);
    return c ? tj_plan_run_ctx_into(c, inputs, n, outputs) : tj_last_status();
}

tj_tensor *tj_plan_context_output(tj_plan_context *c, int k)
{
    if (!c) {
        tj_error_null("tj_plan_context_output: NULL context");
        return NULL;
    }
    if (k < 0 || k >= c->plan->n_outputs) {
        tj_error(TJ_ERR_INDEX, "tj_plan_context_output: output %d out of range (the plan has %d)", k,
                 c->plan->n_outputs);
        return NULL;
    }
    return c->vt[c->plan->output_values[k]];
}

/* ---- statistics ---- */
tj_status tj_plan_stats(const tj_plan *p, tj_plan_statistics *out)
{
    if (!p || !out) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_plan_stats: NULL argument");
    *out = p->stats;
    return TJ_OK;
}

tj_status tj_plan_print_memory(const tj_plan *p, FILE *f)
{
    if (!p || !f) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_plan_print_memory: NULL argument");
    const tj_plan_statistics *s = &p->stats;
    fprintf(f, "arena %zu bytes (naive %zu, lower bound %zu), %d %s, %d %s, %d in place, %d written into their input (fallback %zu bytes)\n",
            s->arena_bytes, s->naive_bytes, s->lower_bound_bytes, s->n_kernels,
            tj_noun(s->n_kernels, "kernel", "kernels"), s->n_views, tj_noun(s->n_views, "view", "views"), s->n_inplace, s->n_writeback_direct,
            s->writeback_fallback_bytes);
    for (int v = 0; v < p->n_values; v++) {
        const tj_pvalue *pv = &p->values[v];
        if (pv->kind != TJ_PV_ARENA) continue;
        char shape[128];
        fprintf(f, "  %%%-20s %s%-16s %s %10zu  size %10zu  steps %d..%d%s\n", pv->name, tj_dtype_name(pv->dtype),
                tj_shape_str(pv->ndim, pv->shape, shape, sizeof shape), pv->in_input ? "fallback" : "offset  ",
                pv->arena_offset, pv->nbytes, pv->def, pv->last,
                pv->inplace ? "  (in place)" : pv->in_input ? "  (written into its input)" : "");
    }
    return tj_check_written(f, "tj_plan_print_memory", NULL);
}
