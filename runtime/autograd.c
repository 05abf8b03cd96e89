/* Autograd: per-tensor metadata, the backward nodes the dispatcher records
 * (the tape), and the engine behind tj_backward / tj_autograd_grad.
 *
 * A recorded call becomes a node holding its operator, a copy of its
 * arguments and its results, and one edge per tensor input that requires
 * grad: to the node that produced that input, or to the input itself when it
 * is a leaf. Saved tensors are aliases without history (same storage,
 * geometry and uid, so a tracer sees the original value), which keeps the
 * graph acyclic: results own their node, nodes own their inputs' nodes.
 *
 * The engine finds the nodes between the outputs and the requested inputs,
 * counts for each how many gradients it will receive, and runs them latest
 * first (by creation order) once all have arrived, accumulating gradients
 * per node return and per leaf. Each node's formula runs in a scope of its
 * own, so intermediates are freed as the pass goes, and unless the caller
 * retains the graph a node's saved values are freed once its formula has
 * run (PyTorch's release_variables): a later pass through the node may run
 * it again only if its formula reads no saved value.
 *
 * An in-place call on a view gives its node to the view's root base
 * (PyTorch's CopySlices: the formula runs on the view's region of the
 * base's gradient), and the view a node taking its gradient to that region
 * (AsStridedBackward). Other views of the base with history take such a
 * node when next used after their storage's version changed (view_refresh),
 * as PyTorch regenerates a view's grad_fn; autograd_views.c computes the
 * regions.
 *
 * A custom function (tj_autograd_function_apply, autograd_function.c) is a
 * node of a third kind: no operator, a user callback and its context in
 * place of the formula and the saved values, and as many gradient buffers
 * as it has outputs (up to TJ_MAX_GRAPH_OUTPUTS: a task keeps
 * TJ_MAX_RETURNS inline, more only for such a node). */
#include <stdatomic.h>
#include <string.h>

#include "autograd_internal.h"
#include "key_map.h"

/* ---- grad mode ---- */

static _Thread_local bool grad_disabled;

bool tj_grad_enabled(void) { return !grad_disabled; }

bool tj_set_grad_enabled(bool enabled)
{
    bool previous = !grad_disabled;
    grad_disabled = !enabled;
    return previous;
}

bool tj_no_grad_begin(void) { return tj_set_grad_enabled(false); }
void tj_no_grad_end(bool previous) { tj_set_grad_enabled(previous); }

/* ---- nodes and metadata ---- */

typedef struct grad_node grad_node;

typedef struct grad_edge {
    grad_node *node;  /**< producer of the input (retained), or NULL */
    int output_nr;    /**< which of the producer's returns the input is */
    tj_tensor *leaf;  /**< the input itself when it is a leaf requiring grad (retained) */
    tj_tensor *input; /**< the saved input (borrowed from the node's args) */
} grad_edge;

struct grad_node {
    atomic_int refcount;
    uint64_t seq; /**< creation order */
    const tj_op *op;
    const tj_derivative *d;
    tj_value args[TJ_MAX_ARGS]; /**< saved arguments; lists live after the edges */
    tj_tensor *results[TJ_MAX_RETURNS];
    int nslots;
    grad_edge *edges;
    /** versions of the saved tensors at the call: one per input slot, then
     * one per return */
    uint32_t *versions;
    size_t bytes;
    /** a pass without retain_graph ran the formula: the saved values are
     * fake twins (geometry only) */
    bool freed;
    /** An in-place call on a view (PyTorch's CopySlices: op set, its formula
     * wrapped) or a view's history after one (AsStridedBackward: op NULL,
     * one input, the base): fake twins of the base and of the view, owned,
     * giving the view's region of the base. NULL for other nodes. */
    tj_tensor *region_base, *region_view;
    /** A custom function's node (tj_autograd_function_apply; op NULL): its
     * callbacks, its context (released once: by the first pass without
     * retain_graph that runs it, which sets `freed`, or when the node dies),
     * its number of outputs and its name, "<name>Backward". The edges'
     * inputs are owned fake twins (geometry only). Zero for other nodes. */
    tj_function_backward_fn fn_backward; /**< set for these nodes only */
    void (*fn_release)(void *ctx);
    void *fn_ctx;
    int n_outputs;
    const char *fn_name;
    grad_node *next_dead; /**< release worklist */
};

struct tj_autograd_meta {
    bool requires_grad;
    /** a view's: its storage's version when grad_fn was set; another means
     * the base may have a newer history to follow (view_refresh) */
    uint32_t view_version;
    int output_nr;
    grad_node *grad_fn; /**< retained; NULL for leaves */
    tj_tensor *grad;    /**< retained accumulated gradient (leaves) */
};

static atomic_uint_least64_t next_seq;
static _Thread_local grad_node *dying;
static _Thread_local bool releasing;

static void node_destroy(grad_node *n);

/* Drops a reference; a chain of nodes dying together is freed iteratively
 * (a deep graph must not recurse once per node). */
static void node_release(grad_node *n)
{
    if (!n || atomic_fetch_sub_explicit(&n->refcount, 1, memory_order_acq_rel) != 1) return;
    n->next_dead = dying;
    dying = n;
    if (releasing) return;
    releasing = true;
    while (dying) {
        grad_node *d = dying;
        dying = d->next_dead;
        node_destroy(d);
    }
    releasing = false;
}

/* A tensor object sharing t's storage, geometry and uid, without history. */
static tj_tensor *shallow_alias(tj_tensor *t)
{
    tj_tensor *a = tj_tensor_new_view(t, t->ndim, t->shape, t->strides, t->offset);
    if (a) a->uid = t->uid;
    return a;
}

void tj_tensor_mark_detached(tj_tensor *t)
{
    if (!t->storage) return;
    t->detached = true;
    atomic_fetch_add_explicit(&t->storage->n_detached, 1, memory_order_relaxed);
}

/* shallow_alias without history (a value a node saves) */
static tj_tensor *detached_alias(tj_tensor *t)
{
    tj_tensor *a = shallow_alias(t);
    if (a) tj_tensor_mark_detached(a);
    return a;
}

static bool is_function(const grad_node *n) { return n->fn_backward != NULL; }

/* Gives a custom function's context back (once: `freed` says it was). */
static void release_ctx(grad_node *n)
{
    if (n->fn_release && !n->freed) n->fn_release(n->fn_ctx);
    n->freed = true;
}

static void node_destroy(grad_node *n)
{
    if (is_function(n)) release_ctx(n);
    for (int i = 0; i < TJ_MAX_ARGS; i++) {
        tj_value *a = &n->args[i];
        if (a->kind == TJ_V_TENSOR) tj_tensor_release(a->u.t);
        else if (a->kind == TJ_V_TENSORS)
            for (int k = 0; k < a->n; k++) tj_tensor_release(a->u.ts[k]);
    }
    for (int i = 0; i < TJ_MAX_RETURNS; i++) tj_tensor_release(n->results[i]);
    for (int k = 0; k < n->nslots; k++) {
        node_release(n->edges[k].node);
        tj_tensor_release(n->edges[k].leaf);
        if (is_function(n)) tj_tensor_release(n->edges[k].input);
    }
    tj_tensor_release(n->region_base);
    tj_tensor_release(n->region_view);
    tj_free(n, n->bytes);
}

void tj_autograd_meta_free(struct tj_autograd_meta *m)
{
    if (!m) return;
    tj_tensor_release(m->grad);
    node_release(m->grad_fn);
    tj_free(m, sizeof *m);
}

static bool requires_grad(const tj_tensor *t) { return t && t->autograd && t->autograd->requires_grad; }

static struct tj_autograd_meta *meta_get(tj_tensor *t)
{
    if (t->autograd) return t->autograd;
    struct tj_autograd_meta *m = tj_alloc(sizeof *m);
    if (!m) {
        tj_oom("autograd metadata", sizeof *m);
        return NULL;
    }
    memset(m, 0, sizeof *m);
    t->autograd = m;
    return m;
}

static void edge_init(grad_edge *e, tj_tensor *t, tj_tensor *saved)
{
    e->input = saved;
    if (!requires_grad(t)) return;
    if (t->autograd->grad_fn) {
        e->node = t->autograd->grad_fn;
        atomic_fetch_add_explicit(&e->node->refcount, 1, memory_order_relaxed);
        e->output_nr = t->autograd->output_nr;
    } else {
        e->leaf = tj_tensor_retain(t);
    }
}

/* Bytes of list storage (pointer-aligned part, byte part) and input slots. */
static void node_sizes(const tj_op *op, const tj_value *args, int *nslots, size_t *words, size_t *bytes)
{
    *nslots = 0;
    *words = *bytes = 0;
    for (int i = 0; i < op->nargs; i++) {
        const tj_value *a = &args[i];
        if (op->args[i].type == TJ_A_TENSOR) (*nslots)++;
        switch (a->kind) {
        case TJ_V_TENSORS:
            *nslots += a->n;
            *words += sizeof(tj_tensor *) * (size_t)a->n;
            break;
        case TJ_V_INTS:
        case TJ_V_FLOATS: *words += tj_value_list_elem_size(a->kind) * (size_t)a->n; break;
        case TJ_V_BOOLS: *bytes += (size_t)a->n; break;
        case TJ_V_STR: *bytes += strlen(a->u.s) + 1; break;
        default: break;
        }
    }
}

/* The edges of a node without a formula, which saves nothing: one per
 * input slot, numbered as node_sizes counts them; slot 0's follows
 * self0's history (see node_new). */
static void edges_only(grad_node *n, const tj_op *op, const tj_value *args, tj_tensor *self0)
{
    for (int i = 0, slot = 0; i < op->nargs; i++) {
        const tj_value *a = &args[i];
        if (a->kind == TJ_V_TENSOR) edge_init(&n->edges[slot], i == 0 ? self0 : a->u.t, NULL);
        for (int k = 0; a->kind == TJ_V_TENSORS && k < a->n; k++)
            if (a->u.ts[k]) edge_init(&n->edges[slot + k], a->u.ts[k], NULL);
        slot += (op->args[i].type == TJ_A_TENSOR) + (a->kind == TJ_V_TENSORS ? a->n : 0);
    }
}

/* A zeroed node of `size` bytes (edges right after it), one reference. */
static grad_node *node_alloc(size_t size, int nslots)
{
    grad_node *n = tj_alloc(size);
    if (!n) {
        tj_oom("autograd node", size);
        return NULL;
    }
    memset(n, 0, size);
    atomic_init(&n->refcount, 1);
    n->bytes = size;
    n->nslots = nslots;
    n->edges = (grad_edge *)(n + 1);
    return n;
}

/* A node for a finished call: saved arguments and results, edges. An
 * in-place call's self is saved as `old_self` when given (its value before
 * the call), its edge following self0's history: self's, or for an in-place
 * call on a view its base's (CopySlices). A node without a
 * formula (PyTorch's NotImplemented node) keeps its edges only: it fails
 * when a backward pass reaches it, so its saved values would never be read
 * and would only live as long as its outputs. */
static grad_node *node_new(const tj_op *op, const tj_derivative *d, const tj_value *args, const tj_value *outs,
                           tj_tensor *old_self, tj_tensor *self0)
{
    int nslots;
    size_t words, bytes;
    node_sizes(op, args, &nslots, &words, &bytes);
    size_t nversions = (size_t)nslots + TJ_MAX_RETURNS;
    size_t size = sizeof(grad_node) + sizeof(grad_edge) * (size_t)nslots + words + sizeof(uint32_t) * nversions + bytes;
    grad_node *n = node_alloc(size, nslots);
    if (!n) return NULL;
    n->op = op;
    n->d = d;
    char *words_at = (char *)(n->edges + nslots);
    n->versions = (uint32_t *)(words_at + words);
    char *bytes_at = (char *)(n->versions + nversions);
    int slot = 0;
    if (!d->fn) edges_only(n, op, args, self0);
    for (int i = 0; d->fn && i < op->nargs; i++) {
        const tj_value *a = &args[i];
        tj_value *s = &n->args[i];
        switch (a->kind) {
        case TJ_V_TENSOR: {
            tj_tensor *saved = detached_alias(i == 0 && old_self ? old_self : a->u.t);
            if (!saved) goto fail;
            *s = tj_v_tensor(saved);
            n->versions[slot] = tj_tensor_version(saved);
            edge_init(&n->edges[slot++], i == 0 ? self0 : a->u.t, saved);
            break;
        }
        case TJ_V_TENSORS: {
            tj_tensor **list = (tj_tensor **)words_at;
            words_at += sizeof(tj_tensor *) * (size_t)a->n;
            *s = tj_v_tensors(list, 0);
            for (int k = 0; k < a->n; k++, s->n++) {
                if (!a->u.ts[k]) { /* an absent Tensor?[] entry keeps its slot, without an edge */
                    list[k] = NULL;
                    slot++;
                    continue;
                }
                if (!(list[k] = detached_alias(a->u.ts[k]))) goto fail;
                n->versions[slot] = tj_tensor_version(list[k]);
                edge_init(&n->edges[slot++], a->u.ts[k], list[k]);
            }
            break;
        }
        case TJ_V_INTS:
        case TJ_V_FLOATS: { /* 8-byte elements: ints or floats */
            size_t sz = tj_value_list_elem_size(a->kind) * (size_t)a->n;
            if (a->n) memcpy(words_at, tj_value_list(a, NULL), sz);
            *s = a->kind == TJ_V_INTS ? tj_v_ints((const int64_t *)words_at, a->n)
                                      : tj_v_floats((const double *)words_at, a->n);
            words_at += sz;
            break;
        }
        case TJ_V_BOOLS: {
            bool *bools = (bool *)bytes_at;
            bytes_at += a->n;
            if (a->n) memcpy(bools, a->u.bools, (size_t)a->n);
            *s = tj_v_bools(bools, a->n);
            break;
        }
        case TJ_V_STR: {
            size_t len = strlen(a->u.s) + 1;
            memcpy(bytes_at, a->u.s, len);
            *s = tj_v_str(bytes_at);
            bytes_at += len;
            break;
        }
        case TJ_V_NONE:
            if (op->args[i].type == TJ_A_TENSOR) slot++;
            break;
        default: *s = *a; break;
        }
    }
    for (int i = 0; d->fn && i < op->nreturns; i++) {
        if (outs[i].kind != TJ_V_TENSOR) continue;
        if (!(n->results[i] = detached_alias(outs[i].u.t))) goto fail;
        n->versions[nslots + i] = tj_tensor_version(n->results[i]);
    }
    n->seq = atomic_fetch_add_explicit(&next_seq, 1, memory_order_relaxed);
    return n;
fail:
    node_release(n);
    return NULL;
}

/* A fake tensor with t's geometry, dtype and uid, holding no data (nor a
 * reference to t's storage). */
static tj_tensor *fake_twin(const tj_tensor *t)
{
    tj_meta m = {.dtype = t->dtype, .ndim = t->ndim};
    memcpy(m.shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    tj_tensor *f = tj_tensor_new_meta(&m, true);
    if (!f) return NULL;
    memcpy(f->strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    f->offset = t->offset;
    f->uid = t->uid;
    return f;
}

/* Replaces the saved value *slot by its fake twin, releasing the storage (the
 * alias object itself may live on elsewhere: a formula may have handed it
 * out as a gradient). Edges borrowing it follow. Out of memory keeps it. */
static void drop_saved(grad_node *n, tj_tensor **slot)
{
    tj_tensor *t = *slot, *f = t ? fake_twin(t) : NULL;
    if (!f) return;
    for (int k = 0; k < n->nslots; k++)
        if (n->edges[k].input == t) n->edges[k].input = f;
    *slot = f;
    tj_tensor_release(t);
}

/* Frees what a node saved for its formula, keeping shapes for those that
 * read only shapes (PyTorch frees saved variables as it goes unless
 * retain_graph). */
static void free_saved(grad_node *n)
{
    if (is_function(n)) {
        release_ctx(n);
        return;
    }
    for (int i = 0; n->op && i < n->op->nargs; i++) {
        tj_value *a = &n->args[i];
        if (a->kind == TJ_V_TENSOR) drop_saved(n, &a->u.t);
        for (int k = 0; a->kind == TJ_V_TENSORS && k < a->n; k++) drop_saved(n, (tj_tensor **)&a->u.ts[k]);
    }
    for (int i = 0; n->op && i < n->op->nreturns; i++) drop_saved(n, &n->results[i]);
    n->freed = true;
}

/* ---- views' history (PyTorch's view + in-place handling) ---- */

/* The name of a node's call, for messages. */
static const char *node_name(const grad_node *n)
{
    if (is_function(n)) return n->fn_name;
    return n->op ? n->op->name : "AsStridedBackward (a view's history after an in-place call on its base)";
}

/* Gives node n the view's region of its base: fake twins of both. */
static tj_status node_set_region(grad_node *n, const tj_tensor *base, const tj_tensor *view)
{
    if (!(n->region_base = fake_twin(base)) || !(n->region_view = fake_twin(view))) return tj_last_status();
    return TJ_OK;
}

/* Sets t's history: return output_nr of node n (retained). */
static tj_status set_history(tj_tensor *t, grad_node *n, int output_nr)
{
    struct tj_autograd_meta *m = meta_get(t);
    if (!m) return tj_last_status();
    node_release(m->grad_fn); /* an in-place call's self: its old history, kept by the node's edge */
    m->requires_grad = true;
    m->grad_fn = n;
    m->output_nr = output_nr;
    m->view_version = tj_tensor_version(t);
    atomic_fetch_add_explicit(&n->refcount, 1, memory_order_relaxed);
    return TJ_OK;
}

/* Makes view v's history follow its base's current one: a node taking the
 * gradient of v to the base's region (PyTorch's AsStridedBackward, which
 * its views' grad_fn regenerates after the base's version changed). */
static tj_status view_history(tj_tensor *v)
{
    tj_tensor *base = v->view_base;
    size_t size = sizeof(grad_node) + sizeof(grad_edge) + sizeof(uint32_t) * (1 + TJ_MAX_RETURNS);
    grad_node *n = tj_alloc(size);
    if (!n) return tj_oom("autograd node", size);
    memset(n, 0, size);
    atomic_init(&n->refcount, 1);
    n->bytes = size;
    n->nslots = 1;
    n->edges = (grad_edge *)(n + 1);
    n->versions = (uint32_t *)(n->edges + 1);
    tj_status st = node_set_region(n, base, v);
    if (st == TJ_OK) {
        edge_init(&n->edges[0], base, n->region_base);
        n->seq = atomic_fetch_add_explicit(&next_seq, 1, memory_order_relaxed);
        st = set_history(v, n, 0);
    }
    node_release(n);
    return st;
}

/* A view whose storage was written since its history was set, while its
 * base requires grad, takes its history from the base anew (the base or
 * another view of it may have been modified in place: PyTorch's check of a
 * view's version when its grad_fn is read). */
static tj_status view_refresh(tj_tensor *t)
{
    struct tj_autograd_meta *m = t ? t->autograd : NULL;
    if (!m || !t->view_base || !m->grad_fn || tj_tensor_version(t) == m->view_version || !requires_grad(t->view_base))
        return TJ_OK;
    return view_history(t);
}

/* view_refresh for every tensor argument of a call. */
static tj_status refresh_args(const tj_op *op, const tj_value *args)
{
    tj_status st = TJ_OK;
    for (int i = 0; i < op->nargs && st == TJ_OK; i++) {
        if (args[i].kind == TJ_V_TENSOR) st = view_refresh(args[i].u.t);
        for (int k = 0; args[i].kind == TJ_V_TENSORS && k < args[i].n && st == TJ_OK; k++)
            st = view_refresh(args[i].u.ts[k]);
    }
    return st;
}

/* ---- custom functions' nodes (autograd_function.c) ---- */

tj_grad_node *tj_autograd_function_node(const tj_autograd_function *fn, void *ctx, tj_tensor *const *inputs,
                                        int n_inputs, int n_outputs)
{
    size_t name_len = strlen(fn->name) + sizeof "Backward";
    size_t size = sizeof(grad_node) + sizeof(grad_edge) * (size_t)n_inputs + name_len;
    grad_node *n = node_alloc(size, n_inputs);
    if (!n) return NULL;
    char *name = (char *)(n->edges + n_inputs);
    snprintf(name, name_len, "%sBackward", fn->name);
    n->fn_name = name;
    n->fn_backward = fn->backward;
    n->fn_release = fn->release;
    n->n_outputs = n_outputs;
    n->freed = true; /* ctx stays the caller's until the node is made */
    for (int k = 0; k < n_inputs; k++) {
        if (!requires_grad(inputs[k])) continue;
        tj_tensor *twin = fake_twin(inputs[k]); /* what the engine sums gradients to */
        if (!twin) {
            node_release(n);
            return NULL;
        }
        edge_init(&n->edges[k], inputs[k], twin);
    }
    n->fn_ctx = ctx;
    n->freed = false;
    n->seq = atomic_fetch_add_explicit(&next_seq, 1, memory_order_relaxed);
    return n;
}

tj_status tj_grad_node_set_history(tj_tensor *t, tj_grad_node *n, int output_nr)
{
    return set_history(t, n, output_nr);
}

void tj_grad_node_release(tj_grad_node *n) { node_release(n); }

tj_status tj_autograd_view_refresh(tj_tensor *t) { return view_refresh(t); }

tj_tensor *tj_autograd_fresh_alias(tj_tensor *t)
{
    tj_tensor *a = shallow_alias(t);
    if (a && t->view_base) tj_tensor_set_view_of(a, t->view_base);
    return a;
}

/* ---- the dispatcher's hooks ---- */

static bool any_requires_grad(const tj_op *op, const tj_value *args)
{
    for (int i = 0; i < op->nargs; i++) {
        if (args[i].kind == TJ_V_TENSOR && requires_grad(args[i].u.t)) return true;
        if (args[i].kind == TJ_V_TENSORS)
            for (int k = 0; k < args[i].n; k++)
                if (requires_grad(args[i].u.ts[k])) return true;
    }
    return false;
}

bool tj_autograd_wants(const tj_op *op, const tj_value *args)
{
    return !grad_disabled && any_requires_grad(op, args) && !tj_derivative_of(op)->nondiff;
}

/* An in-place call to record: self's history becomes the call's node, as
 * in PyTorch; on a view, its base's history does (CopySlices) and the
 * view's follows the base's. Views of self's base that have no history
 * (taken while nothing required grad) cannot be reached to give them
 * history, as PyTorch does: the call is refused while there are any. */
static tj_status check_inplace(const tj_op *op, const tj_value *args, tj_autograd_call *call)
{
    tj_tensor *self = args[0].u.t, *base = self->view_base ? self->view_base : self;
    tj_status st = self->view_base ? tj_autograd_check_view_inplace(op, self) : TJ_OK;
    if (st != TJ_OK) return st;
    bool leaf = requires_grad(self) && !self->autograd->grad_fn;
    /* an in-place view writes no data: no history goes to the base, and
     * other views of it are not concerned (PyTorch's set_history) */
    bool view_op = tj_op_is_inplace_view(op);
    int others = view_op ? 0 : atomic_load_explicit(&self->storage->refcount, memory_order_relaxed) - 1 - (self != base) -
                 atomic_load_explicit(&self->storage->n_detached, memory_order_relaxed);
    if (leaf || (others > 0 && !requires_grad(base))) { /* described for the message only */
        char what[64], bwhat[64];
        tj_tensor_describe(self, what, sizeof what);
        tj_tensor_describe(base, bwhat, sizeof bwhat);
        if (leaf)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: self (%s) is a leaf that requires grad, used in an in-place "
                            "operation (PyTorch refuses it too): update it under tj_no_grad_begin, or work on a "
                            "clone", op->name, what);
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: an in-place operation recorded by autograd on self (%s) gives "
                        "history to %s, which has none yet and shares its storage with %d other view%s taken "
                        "before this call: PyTorch gives them history too, tjit cannot reach them; take those views "
                        "after this call, or clone() first", op->name, what, self == base ? "it" : bwhat, others,
                        others == 1 ? "" : "s");
    }
    for (int i = 0; i < op->nargs; i++)
        call->versions[i] = args[i].kind == TJ_V_TENSOR ? tj_tensor_version(args[i].u.t) : 0;
    bool other_grad = false;
    for (int i = 1; i < op->nargs; i++) other_grad |= args[i].kind == TJ_V_TENSOR && requires_grad(args[i].u.t);
    tj_self_read r = tj_derivative_of(op)->self_read;
    if (view_op) {
        /* the formula reads self's geometry before the call (squeeze_'s
         * size-1 dims), and the engine sums the gradient to it: an alias of
         * self as it is now, its data untouched by the call */
        if (!(call->old_self = detached_alias(self))) return tj_last_status();
    } else if (r == TJ_SELF_READ || (r == TJ_SELF_READ_FOR_OTHERS && other_grad)) {
        bool was = tj_set_grad_enabled(false);
        call->old_self = tj_clone(self);
        tj_set_grad_enabled(was);
        if (!call->old_self) return tj_last_status();
    }
    call->inplace = true;
    return TJ_OK;
}

tj_status tj_autograd_check(const tj_op *op, const tj_value *args, tj_autograd_call *call)
{
    call->inplace = false;
    call->old_self = NULL;
    tj_status st = refresh_args(op, args);
    if (st != TJ_OK) return st;
    const tj_derivative *d = tj_derivative_of(op);
    for (int i = 0; i < op->nargs; i++)
        if ((d->nondiff_args >> i & 1u) && args[i].kind == TJ_V_TENSOR && requires_grad(args[i].u.t))
            return tj_error(TJ_ERR_UNSUPPORTED, "%s: not differentiable with respect to argument '%s', which "
                            "requires grad (PyTorch refuses it too): detach it, or call under tj_no_grad_begin",
                            op->name, op->args[i].name);
    /* a user operator may write any Tensor(a!) argument, named with '_' or
     * not: rebasing that argument's history is not done for them */
    if (op->mutated_args && !tj_op_is_builtin(op))
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: writes its Tensor(a!) arguments, and autograd records in-place "
                        "calls of built-in operators only (an input requires grad): call it under tj_no_grad_begin, "
                        "or register an out-of-place form", op->name);
    return op->is_inplace ? check_inplace(op, args, call) : TJ_OK;
}

void tj_autograd_call_end(tj_autograd_call *call)
{
    tj_scope_drop(call->old_self);
    call->old_self = NULL;
}

/* An in-place call's saved arguments are checked against their versions
 * before the call: a formula reading self (not its copy), or another
 * argument sharing self's storage, then fails instead of reading the new
 * values. */
static void set_inplace_versions(grad_node *n, const tj_op *op, const tj_value *args, const tj_autograd_call *call)
{
    for (int i = 0, slot = 0; i < op->nargs; i++) {
        if (op->args[i].type == TJ_A_TENSOR) {
            if (args[i].kind == TJ_V_TENSOR && !(i == 0 && call->old_self)) n->versions[slot] = call->versions[i];
            slot++;
        } else if (args[i].kind == TJ_V_TENSORS) {
            slot += args[i].n;
        }
    }
}

static tj_status record(const tj_op *op, const tj_value *args, tj_value *outs, const tj_autograd_call *call);

static bool is_argument(const tj_tensor *t, const tj_op *op, const tj_value *args)
{
    for (int i = 0; i < op->nargs; i++) {
        if (args[i].kind == TJ_V_TENSOR && args[i].u.t == t) return true;
        if (args[i].kind == TJ_V_TENSORS)
            for (int k = 0; k < args[i].n; k++)
                if (args[i].u.ts[k] == t) return true;
    }
    return false;
}

tj_status tj_autograd_record(const tj_op *op, const tj_value *args, tj_value *outs, tj_autograd_call *call)
{
    tj_status st = record(op, args, outs, call);
    tj_autograd_call_end(call);
    return st;
}

static tj_status record(const tj_op *op, const tj_value *args, tj_value *outs, const tj_autograd_call *call)
{
    const tj_derivative *d = tj_derivative_of(op);
    bool diff[TJ_MAX_RETURNS] = {false}, any = false;
    for (int i = 0; i < op->nreturns; i++) {
        diff[i] = outs[i].kind == TJ_V_TENSOR && tj_dtype_is_floating_point(outs[i].u.t->dtype) && !((d->nondiff_outputs >> i) & 1);
        any |= diff[i];
    }
    if (!any) return TJ_OK;
    /* each differentiable result must be a fresh object to carry its history,
     * but an in-place call's self, which takes the new history */
    for (int i = 0; i < op->nreturns; i++) {
        tj_tensor *t = outs[i].u.t;
        if (call->inplace && i == 0) continue;
        bool taken = diff[i] && (t->autograd || is_argument(t, op, args));
        for (int k = 0; k < i && diff[i] && !taken; k++) taken = outs[k].u.t == t;
        if (!taken) continue;
        tj_tensor *a = tj_autograd_fresh_alias(t);
        if (!a) return tj_last_status();
        tj_tensor_release(t);
        outs[i].u.t = a;
    }
    /* an in-place call on a view: the node takes the base's history */
    /* (an in-place view leaves its base alone: self's history alone changes) */
    tj_tensor *self = call->inplace ? args[0].u.t : NULL;
    tj_tensor *base = self && !tj_op_is_inplace_view(op) ? self->view_base : NULL;
    grad_node *n = node_new(op, d, args, outs, call->old_self, base ? base : args[0].u.t);
    if (!n) return tj_last_status();
    if (call->inplace) set_inplace_versions(n, op, args, call);
    tj_status st = base ? node_set_region(n, base, self) : TJ_OK;
    if (st == TJ_OK && base && n->nslots) n->edges[0].input = n->region_base;
    for (int i = 0; i < op->nreturns && st == TJ_OK; i++)
        if (diff[i]) st = base && i == 0 ? set_history(base, n, 0) : set_history(outs[i].u.t, n, i);
    if (st == TJ_OK && base) st = view_history(self);
    node_release(n);
    return st;
}

/* ---- tensor API ---- */

tj_status tj_tensor_set_requires_grad(tj_tensor *t, bool on)
{
    if (!t) return tj_error_null("tj_tensor_set_requires_grad: NULL tensor");
    if (t->autograd && t->autograd->grad_fn) {
        if (on) return TJ_OK;
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_set_requires_grad: you can only change requires_grad "
                                                 "flags of leaf tensors (this one is the result of %s)",
                        node_name(t->autograd->grad_fn));
    }
    if (on && !tj_dtype_is_floating_point(t->dtype))
        return tj_error(TJ_ERR_DTYPE, "tj_tensor_set_requires_grad: only floating-point tensors (float32, float64, "
                                      "float16, bfloat16) can require gradients, not %s", tj_dtype_name(t->dtype));
    if (!on && !t->autograd) return TJ_OK;
    struct tj_autograd_meta *m = meta_get(t);
    if (!m) return tj_last_status();
    m->requires_grad = on;
    return TJ_OK;
}

bool tj_tensor_requires_grad(const tj_tensor *t) { return requires_grad(t); }
bool tj_tensor_is_leaf(const tj_tensor *t) { return !t || !t->autograd || !t->autograd->grad_fn; }
tj_tensor *tj_tensor_grad(const tj_tensor *t) { return t && t->autograd ? t->autograd->grad : NULL; }

tj_status tj_tensor_set_grad(tj_tensor *t, tj_tensor *grad)
{
    char a[128], b[128];
    if (!t) return tj_error_null("tj_tensor_set_grad: NULL tensor");
    if (grad == t) /* backward would add into t's own values */
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_set_grad: a tensor cannot be its own grad "
                        "(PyTorch: \"can't assign Variable as its own grad\"); pass a clone");
    if (grad && (grad->ndim != t->ndim || memcmp(grad->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim)))
        return tj_error(TJ_ERR_SHAPE, "tj_tensor_set_grad: grad of shape %s for a tensor of shape %s",
                        tj_shape_str(grad->ndim, grad->shape, a, sizeof a),
                        tj_shape_str(t->ndim, t->shape, b, sizeof b));
    if (grad && grad->dtype != t->dtype)
        return tj_error(TJ_ERR_DTYPE, "tj_tensor_set_grad: grad of dtype %s for a tensor of dtype %s",
                        tj_dtype_name(grad->dtype), tj_dtype_name(t->dtype));
    if (grad && grad->fake != t->fake)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_set_grad: a %s grad for a %s tensor",
                        grad->fake ? "fake" : "real", t->fake ? "fake" : "real");
    if (!grad && !t->autograd) return TJ_OK;
    struct tj_autograd_meta *m = meta_get(t);
    if (!m) return tj_last_status();
    tj_tensor_retain(grad);
    tj_tensor_release(m->grad);
    m->grad = grad;
    return TJ_OK;
}

tj_tensor *tj_tensor_detach(tj_tensor *t)
{
    if (!t) {
        tj_error_null("tj_tensor_detach: NULL tensor");
        return NULL;
    }
    tj_value arg = tj_v_tensor(t), outs[TJ_MAX_RETURNS];
    return tj_dispatch(TJ_OPS(detach), &arg, 1, outs) == TJ_OK ? outs[0].u.t : NULL;
}

bool tj_op_has_derivative(const tj_op *op) { return op && tj_derivative_of(op)->fn; }
bool tj_op_is_differentiable(const tj_op *op) { return op && !tj_derivative_of(op)->nondiff; }

tj_tensor *tj_autograd_sum_to(tj_tensor *g, const tj_tensor *like, const char *name)
{
    int lead = g->ndim - like->ndim;
    int64_t dims[TJ_MAX_DIMS];
    int nd = 0;
    bool ok = lead >= 0;
    for (int d = 0; ok && d < lead; d++) dims[nd++] = d;
    for (int i = 0; ok && i < like->ndim; i++) {
        int64_t gs = g->shape[lead + i], ls = like->shape[i];
        if (gs == ls) continue;
        if (ls == 1) dims[nd++] = lead + i;
        else ok = false;
    }
    if (!ok) {
        char a[128], b[128];
        tj_error(TJ_ERR_SHAPE, "autograd: the derivative of %s gave a gradient of shape %s for an input of shape %s",
                 name, tj_shape_str(g->ndim, g->shape, a, sizeof a),
                 tj_shape_str(like->ndim, like->shape, b, sizeof b));
        return NULL;
    }
    /* as ATen's sum_to: sum() to a 0-dim shape, else a sum that keeps the
     * dims, viewed only when leading dims go */
    tj_tensor *r = g;
    if (nd && like->ndim == 0) {
        r = tj_sum(g, -1);
    } else if (nd) {
        r = tj_sum_dim(g, dims, nd, true, -1);
        if (lead) r = tj_view(r, like->shape, like->ndim);
    }
    if (r && r->dtype != like->dtype) r = tj_to_copy(r, like->dtype);
    return r;
}

/* ---- the engine ---- */

/* A node of the pass (grad_node) or a leaf that collects a gradient. */
typedef struct task {
    grad_node *node;     /**< NULL for a leaf */
    tj_tensor *leaf;
    int deps;            /**< gradients still to arrive */
    bool relevant;       /**< its gradients are wanted (it runs, or it is a requested input) */
    bool needed;         /**< it runs its formula: an edge leads to a relevant task */
    tj_tensor *buf[TJ_MAX_RETURNS]; /**< accumulated gradients per return (owned) */
    /** instead of buf for a custom function's node with more outputs: one
     * per output (owned array; see task_bufs) */
    tj_tensor **more;
} task;

/* A task's gradient buffers: one per node return (a leaf uses the first). */
static int task_nbufs(const task *t)
{
    return t->node && t->node->n_outputs > TJ_MAX_RETURNS ? t->node->n_outputs : TJ_MAX_RETURNS;
}

static tj_tensor **task_bufs(task *t) { return t->more ? t->more : t->buf; }

/* Releases a task's gradients (the buffers stay). */
static void task_clear(task *t)
{
    tj_tensor **bufs = task_bufs(t);
    for (int k = 0, n = task_nbufs(t); k < n; k++) {
        tj_tensor_release(bufs[k]);
        bufs[k] = NULL;
    }
}

typedef struct engine {
    task *tasks;
    int n, cap;
    tj_key_map task_of; /* node or leaf address -> task index */
    int *heap;
    int nheap, heap_cap;
    bool accumulate; /* tj_backward: every leaf is a target, into .grad */
    bool retain_graph; /* keep the nodes' saved values for another pass */
    tj_tensor *const *inputs;
    int n_inputs;
} engine;

static int task_find(const engine *e, const void *key) { return tj_key_map_get(&e->task_of, (uintptr_t)key); }

static bool grow(void **arr, int *cap, int need, size_t elem)
{
    if (need <= *cap) return true;
    int nc = *cap ? *cap * 2 : 64;
    void *p = tj_alloc((size_t)nc * elem);
    if (!p) {
        tj_oom("autograd engine", (size_t)nc * elem);
        return false;
    }
    if (*arr) memcpy(p, *arr, (size_t)*cap * elem);
    tj_free(*arr, (size_t)*cap * elem);
    *arr = p;
    *cap = nc;
    return true;
}

/* The task for a node or leaf, created on first use; -1 when out of memory. */
static int task_get(engine *e, grad_node *node, tj_tensor *leaf, bool *created)
{
    const void *key = node ? (const void *)node : (const void *)leaf;
    *created = false;
    int i = task_find(e, key);
    if (i >= 0) return i;
    size_t more_size = node && node->n_outputs > TJ_MAX_RETURNS ? sizeof(tj_tensor *) * (size_t)node->n_outputs : 0;
    tj_tensor **more = more_size ? tj_alloc(more_size) : NULL;
    if (more_size && !more) {
        tj_oom("autograd engine", more_size);
        return -1;
    }
    if (!grow((void **)&e->tasks, &e->cap, e->n + 1, sizeof *e->tasks) ||
        tj_key_map_put(&e->task_of, (uintptr_t)key, e->n, "autograd engine") != TJ_OK) {
        tj_free(more, more_size);
        return -1;
    }
    task *t = &e->tasks[e->n];
    memset(t, 0, sizeof *t);
    if (more) memset(more, 0, more_size);
    t->node = node;
    t->leaf = leaf;
    t->more = more;
    *created = true;
    return e->n++;
}

static void engine_free(engine *e)
{
    for (int i = 0; i < e->n; i++) {
        task *t = &e->tasks[i];
        task_clear(t);
        if (t->more) tj_free(t->more, sizeof *t->more * (size_t)t->node->n_outputs);
    }
    tj_free(e->tasks, sizeof *e->tasks * (size_t)e->cap);
    tj_key_map_free(&e->task_of);
    tj_free(e->heap, sizeof *e->heap * (size_t)e->heap_cap);
}

/* tj_backward stores into every leaf that still requires grad: one turned
 * off since the forward pass gets nothing, as PyTorch's AccumulateGrad. */
static bool leaf_is_target(const engine *e, const tj_tensor *leaf)
{
    if (e->accumulate) return requires_grad(leaf);
    for (int i = 0; i < e->n_inputs; i++)
        if (e->inputs[i] == leaf) return true;
    return false;
}

static bool captures(const engine *e, const grad_node *n)
{
    for (int i = 0; i < e->n_inputs; i++)
        if (e->inputs[i]->autograd->grad_fn == n) return true;
    return false;
}

static bool edge_relevant(const engine *e, const grad_edge *edge)
{
    if (edge->leaf) return leaf_is_target(e, edge->leaf);
    return edge->node && e->tasks[task_find(e, edge->node)].relevant;
}

/* Depth-first from the root nodes; marks, children first, which tasks run
 * (an edge leads to something relevant) and which are relevant. */
static tj_status discover(engine *e, grad_node *const *roots, int n_roots)
{
    typedef struct frame { int task, edge; } frame;
    frame *stack = NULL;
    int depth = 0, cap = 0;
    tj_status st = TJ_OK;
    for (int r = 0; r < n_roots && st == TJ_OK; r++) {
        bool created;
        int t = task_get(e, roots[r], NULL, &created);
        if (t < 0) {
            st = tj_last_status();
            break;
        }
        if (!created) continue;
        if (!grow((void **)&stack, &cap, depth + 1, sizeof *stack)) {
            st = tj_last_status();
            break;
        }
        stack[depth++] = (frame){t, 0};
        while (depth > 0 && st == TJ_OK) {
            frame *f = &stack[depth - 1];
            grad_node *n = e->tasks[f->task].node;
            if (f->edge < n->nslots) {
                grad_edge *edge = &n->edges[f->edge++];
                if (!edge->node) continue;
                int c = task_get(e, edge->node, NULL, &created);
                if (c < 0 || (created && !grow((void **)&stack, &cap, depth + 1, sizeof *stack))) {
                    st = tj_last_status();
                    break;
                }
                if (created) stack[depth++] = (frame){c, 0};
                continue;
            }
            bool needed = false;
            for (int k = 0; k < n->nslots && !needed; k++) needed = edge_relevant(e, &n->edges[k]);
            e->tasks[f->task].needed = needed;
            e->tasks[f->task].relevant = needed || captures(e, n);
            depth--;
        }
    }
    tj_free(stack, sizeof *stack * (size_t)cap);
    return st;
}

/* Adds g into a task's buffer k (retained). */
static tj_status accumulate(tj_tensor **buf, tj_tensor *g)
{
    if (!*buf) {
        *buf = tj_tensor_retain(g);
        return TJ_OK;
    }
    tj_tensor *sum = tj_add(*buf, g);
    if (!sum) return tj_last_status();
    tj_tensor_release(*buf);
    *buf = tj_tensor_retain(sum);
    return TJ_OK;
}

/* Gradient of a leaf edge goes to the leaf's task (created on demand). */
static tj_status deliver_leaf(engine *e, tj_tensor *leaf, tj_tensor *g)
{
    bool created;
    int t = task_get(e, NULL, leaf, &created);
    if (t < 0) return tj_last_status();
    return accumulate(&e->tasks[t].buf[0], g);
}

static bool heap_less(const engine *e, int a, int b) { return e->tasks[a].node->seq < e->tasks[b].node->seq; }

static void heap_push(engine *e, int t)
{
    int i = e->nheap++;
    e->heap[i] = t;
    while (i > 0 && heap_less(e, e->heap[(i - 1) / 2], e->heap[i])) {
        int p = (i - 1) / 2, x = e->heap[p];
        e->heap[p] = e->heap[i];
        e->heap[i] = x;
        i = p;
    }
}

static int heap_pop(engine *e)
{
    int top = e->heap[0];
    e->heap[0] = e->heap[--e->nheap];
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < e->nheap && heap_less(e, e->heap[m], e->heap[l])) m = l;
        if (r < e->nheap && heap_less(e, e->heap[m], e->heap[r])) m = r;
        if (m == i) break;
        int x = e->heap[m];
        e->heap[m] = e->heap[i];
        e->heap[i] = x;
        i = m;
    }
    return top;
}

/* ---- saved tensors written in place (version checks) ---- */

/* The input slot of tensor argument i (lists take one slot per element). */
static int slot_of(const tj_grad_ctx *c, int i)
{
    int slot = 0;
    for (int j = 0; j < i; j++) {
        if (c->op->args[j].type == TJ_A_TENSOR) slot++;
        else if (c->args[j].kind == TJ_V_TENSORS) slot += c->args[j].n;
    }
    return slot;
}

/* t as saved at version `saved`; a stale one is noted (the first only). */
static tj_tensor *checked(const tj_grad_ctx *c, tj_tensor *t, uint32_t saved, int arg, int result)
{
    uint32_t current = tj_tensor_version(t);
    if (t && (c->freed || current != saved) && !c->stale->t)
        *c->stale = (tj_grad_stale){t, arg, result, saved, current, c->freed};
    return t;
}

tj_tensor *tj_grad_arg(const tj_grad_ctx *c, int i)
{
    return checked(c, c->args[i].u.t, c->arg_versions[slot_of(c, i)], i, -1);
}

tj_tensor *tj_grad_result(const tj_grad_ctx *c, int i)
{
    return checked(c, c->results[i], c->result_versions[i], -1, i);
}

tj_value tj_grad_value(const tj_grad_ctx *c, int i)
{
    const tj_value *a = &c->args[i];
    if (a->kind == TJ_V_TENSOR) tj_grad_arg(c, i);
    for (int k = 0, slot = slot_of(c, i); a->kind == TJ_V_TENSORS && k < a->n; k++)
        checked(c, a->u.ts[k], c->arg_versions[slot + k], i, -1);
    return *a;
}

bool tj_grad_saved_unmodified(const tj_grad_ctx *c)
{
    for (int i = 0, slot = 0; i < c->op->nargs; i++) {
        const tj_value *a = &c->args[i];
        if (a->kind == TJ_V_TENSOR) checked(c, a->u.t, c->arg_versions[slot], i, -1);
        for (int k = 0; a->kind == TJ_V_TENSORS && k < a->n; k++)
            checked(c, a->u.ts[k], c->arg_versions[slot + k], i, -1);
        slot += c->op->args[i].type == TJ_A_TENSOR ? 1 : a->kind == TJ_V_TENSORS ? a->n : 0;
    }
    for (int i = 0; i < c->op->nreturns; i++) checked(c, c->results[i], c->result_versions[i], -1, i);
    return !c->stale->t;
}

/* PyTorch's "one of the variables needed for gradient computation has been
 * modified by an inplace operation", naming the call and the value. */
static tj_status stale_error(const tj_op *op, const tj_grad_stale *s)
{
    char what[96], shape[64];
    if (s->arg >= 0) snprintf(what, sizeof what, "argument '%s'", op->args[s->arg].name);
    else snprintf(what, sizeof what, "return %d", s->result);
    tj_tensor_describe(s->t, shape, sizeof shape);
    if (s->freed)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: backward: trying to backward through the graph a second time: "
                        "%s (%s), saved for the gradient, was freed when the graph was first run backward; pass "
                        "retain_graph (tj_backward_ex, tj_autograd_grad_ex) to the first pass to run it again",
                        op->name, what, shape + (shape[0] == '~'));
    return tj_error(TJ_ERR_MODIFIED, "%s: backward: %s (%s), saved for the gradient, was modified by an in-place "
                    "operation after the call (version %u, saved at version %u); clone it before modifying it, or "
                    "modify it after backward", op->name, what, shape, (unsigned)s->current, (unsigned)s->saved);
}

/* PyTorch's NotImplemented node: a call of an operator without a derivative
 * formula had an input requiring grad, and this pass needs gradients
 * through it (whether or not any reached its outputs, as PyTorch). The
 * message says only that tjit lacks the formula: PyTorch has one for most
 * built-in operators tjit has none for (the double backward of the backward
 * operators). */
static tj_status not_implemented_error(const tj_op *op)
{
    if (!tj_op_is_builtin(op))
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: derivative not implemented: a backward pass reached a call of it "
                        "whose inputs require grad, and no backward was registered for it; register one with "
                        "tj_op_set_backward", op->name);
    return tj_error(TJ_ERR_UNSUPPORTED, "%s: derivative not implemented: a backward pass reached a call of it "
                    "whose inputs require grad, and tjit has no derivative formula for %s", op->name, op->name);
}

/* Runs node n's formula on the gradients of its returns into gi; for an
 * in-place call on a view (CopySlices), on the region of the base's
 * gradient that the view covers, whose gradient for the base's old value
 * is then the base's with that region replaced by the formula's for self.
 * A view's history after an in-place call (op NULL) takes its gradient to
 * its region of the base. */
static tj_status run_formula(grad_node *n, tj_tensor **grads, const bool *need, tj_tensor **gi)
{
    tj_clear_error();
    if (!n->op) {
        gi[0] = need[0] ? tj_view_region_grad(grads[0], n->region_base, n->region_view) : NULL;
        return need[0] && !gi[0] ? tj_last_status() : TJ_OK;
    }
    tj_tensor *grad_base = grads[0];
    if (n->region_view && grad_base && !(grads[0] = tj_view_region(grad_base, n->region_base, n->region_view)))
        return tj_last_status();
    tj_grad_stale stale = {NULL, -1, -1, 0, 0, false};
    tj_grad_ctx c = {.op = n->op, .args = n->args, .results = n->results, .needed = need,
                     .arg_versions = n->versions, .result_versions = n->versions + n->nslots, .stale = &stale,
                     .freed = n->freed};
    tj_status st = n->d->fn(&c, grads, gi);
    if (st == TJ_OK && tj_last_status() != TJ_OK) st = tj_last_status();
    if (stale.t) return stale_error(n->op, &stale);
    if (st != TJ_OK || !n->region_view || !need[0] || !grad_base) return st;
    tj_tensor *src = gi[0] ? tj_autograd_sum_to(gi[0], n->region_view, node_name(n)) : NULL;
    if (gi[0] && !src) return tj_last_status();
    gi[0] = tj_view_region_replace(grad_base, n->region_base, n->region_view, src);
    return gi[0] ? TJ_OK : tj_last_status();
}

/* Runs a custom function's backward: refused once its context was released
 * (a pass without retain_graph ran it, as PyTorch frees saved variables). */
static tj_status run_function(grad_node *n, tj_tensor *const *grads, const bool *need, tj_tensor **gi)
{
    if (n->freed)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: backward: trying to backward through the graph a second time: "
                        "its context (saved values) was released when the graph was first run backward; pass "
                        "retain_graph (tj_backward_ex, tj_autograd_grad_ex) to the first pass to run it again",
                        n->fn_name);
    tj_clear_error();
    tj_status st = n->fn_backward(n->fn_ctx, grads, n->n_outputs, need, gi, n->nslots);
    if (st != TJ_OK && tj_last_status() == TJ_OK)
        return tj_error(st, "%s: backward returned %s without recording an error", n->fn_name, tj_status_name(st));
    return st;
}

/* Runs one task's formula and routes its input gradients. */
static tj_status run_node(engine *e, int ti)
{
    task *t = &e->tasks[ti];
    grad_node *n = t->node;
    if (n->op && !n->d->fn) return not_implemented_error(n->op);
    tj_tensor **bufs = task_bufs(t);
    bool any = false;
    for (int k = 0, nbufs = task_nbufs(t); k < nbufs; k++) any |= bufs[k] != NULL;
    /* a formula gets a copy (run_formula replaces a CopySlices node's first
     * gradient by its region); a custom function the buffers themselves */
    tj_tensor *grads[TJ_MAX_RETURNS];
    if (!is_function(n)) memcpy(grads, bufs, sizeof grads);
    tj_tensor *gi_stack[16], **gi = n->nslots <= 16 ? gi_stack : tj_alloc(sizeof *gi * (size_t)n->nslots);
    bool need_stack[16], *need = n->nslots <= 16 ? need_stack : tj_alloc(sizeof *need * (size_t)n->nslots);
    tj_status st = TJ_OK;
    if (!gi || !need) st = tj_oom("autograd engine", sizeof *gi * (size_t)n->nslots);
    for (int k = 0; st == TJ_OK && k < n->nslots; k++) {
        gi[k] = NULL;
        need[k] = edge_relevant(e, &n->edges[k]);
    }
    if (st == TJ_OK && any) st = is_function(n) ? run_function(n, bufs, need, gi) : run_formula(n, grads, need, gi);
    for (int k = 0; st == TJ_OK && k < n->nslots; k++) {
        grad_edge *edge = &n->edges[k];
        tj_tensor *g = need[k] ? gi[k] : NULL;
        if (g && !(g = tj_autograd_sum_to(g, edge->input, node_name(n)))) st = tj_last_status();
        else if (edge->leaf && need[k]) st = g ? deliver_leaf(e, edge->leaf, g) : TJ_OK;
        else if (edge->node && need[k]) {
            task *to = &e->tasks[task_find(e, edge->node)];
            if (g) st = accumulate(&task_bufs(to)[edge->output_nr], g);
            if (--to->deps == 0) heap_push(e, (int)(to - e->tasks));
        }
    }
    if (gi != gi_stack) tj_free(gi, sizeof *gi * (size_t)n->nslots);
    if (need != need_stack) tj_free(need, sizeof *need * (size_t)n->nslots);
    return st;
}

/* The gradient for a requested input that is an intermediate result. */
static void capture(engine *e, int ti, tj_tensor **results)
{
    for (int i = 0; i < e->n_inputs; i++) {
        struct tj_autograd_meta *m = e->inputs[i]->autograd;
        if (m->grad_fn == e->tasks[ti].node && !results[i])
            results[i] = tj_tensor_retain(task_bufs(&e->tasks[ti])[m->output_nr]);
    }
}

/* Runs every relevant task in order once its gradients are in. */
static tj_status execute(engine *e, tj_tensor **results)
{
    int n_nodes = e->n;
    e->heap_cap = n_nodes ? n_nodes : 1;
    e->heap = tj_alloc(sizeof *e->heap * (size_t)e->heap_cap);
    if (!e->heap) return tj_oom("autograd engine", sizeof *e->heap * (size_t)e->heap_cap);
    for (int i = 0; i < n_nodes; i++) {
        task *t = &e->tasks[i];
        if (!t->node || !t->needed) continue;
        for (int k = 0; k < t->node->nslots; k++) {
            grad_edge *edge = &t->node->edges[k];
            if (edge->node && edge_relevant(e, edge)) e->tasks[task_find(e, edge->node)].deps++;
        }
    }
    for (int i = 0; i < n_nodes; i++)
        if (e->tasks[i].node && e->tasks[i].relevant && e->tasks[i].deps == 0) heap_push(e, i);
    tj_status st = TJ_OK;
    while (e->nheap > 0 && st == TJ_OK) {
        int ti = heap_pop(e);
        if (results) capture(e, ti, results);
        if (e->tasks[ti].needed) {
            tj_scope *s = tj_scope_begin();
            int outer_fence = tj_scope_fence(s);
            st = s ? run_node(e, ti) : tj_last_status();
            tj_scope_unfence(outer_fence);
            if (s) tj_scope_end(s);
            if (st == TJ_OK && !e->retain_graph) free_saved(e->tasks[ti].node);
        }
        task_clear(&e->tasks[ti]);
    }
    return st;
}

/* Stores a leaf's gradient into its .grad: the first one as is when nothing
 * else shares it (else a copy), later ones added in place. */
static tj_status store_grad(tj_tensor *leaf, tj_tensor *g)
{
    struct tj_autograd_meta *m = leaf->autograd;
    if (m->grad) return tj_add_(m->grad, g, tj_v_int(1)) ? TJ_OK : tj_last_status();
    bool shared = atomic_load(&g->refcount) != 1 || (g->storage && atomic_load(&g->storage->refcount) != 1) ||
                  !tj_tensor_is_contiguous(g);
    tj_tensor *keep = shared ? tj_clone(g) : g;
    if (!keep) return tj_last_status();
    m->grad = tj_tensor_retain(keep);
    return TJ_OK;
}

/* Before tj_backward stores anything: a fake gradient for a real leaf
 * comes from a fake-mode trace whose function reached a real tensor it was
 * not given as an input (a parameter captured in its ctx). Stored, the
 * fake .grad would make later eager training do nothing (and leaving .grad
 * alone would let the function read a stale or missing one silently). */
static tj_status check_fake_grads(const engine *e)
{
    for (int i = 0; i < e->n; i++) {
        const task *t = &e->tasks[i];
        if (t->node || !t->buf[0] || !t->buf[0]->fake || t->leaf->fake) continue;
        char d[128];
        tj_tensor_describe(t->leaf, d, sizeof d);
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_backward: the gradient of a real tensor (%s) is fake: a fake-mode "
                        "trace reached a tensor that requires grad and is not one of its inputs, and its .grad is "
                        "not set; pass the tensor to tj_make_fx as an input (its fake copy takes the gradient), or "
                        "trace in real mode", d);
    }
    return TJ_OK;
}

/* The gradient flowing into output i: grad_outputs[i] (checked, converted)
 * or ones_like(output) for a one-element output. */
static tj_tensor *root_grad(tj_tensor *out, tj_tensor *go, int i)
{
    char a[128], b[128];
    if (!go) {
        if (out->numel != 1) {
            tj_error(TJ_ERR_SHAPE, "autograd: grad can be implicitly created only for one-element outputs "
                                   "(output %d has shape %s)", i, tj_shape_str(out->ndim, out->shape, a, sizeof a));
            return NULL;
        }
        return tj_ones_like(out, out->dtype); /* as torch.autograd's _make_grads: a traced seed reads ones_like */
    }
    if (go->ndim != out->ndim || memcmp(go->shape, out->shape, sizeof(int64_t) * (size_t)out->ndim)) {
        tj_error(TJ_ERR_SHAPE, "autograd: grad_output %d has shape %s but output %d has shape %s", i,
                 tj_shape_str(go->ndim, go->shape, a, sizeof a), i, tj_shape_str(out->ndim, out->shape, b, sizeof b));
        return NULL;
    }
    return go->dtype == out->dtype ? go : tj_to_copy(go, out->dtype);
}

/* The whole pass: roots, discovery, execution, then leaf gradients go to
 * .grad (accumulate) or to results. Runs with grad mode off in a scope. */
static tj_status run_backward(engine *e, tj_tensor *const *outputs, int n_outputs, tj_tensor *const *grad_outputs,
                              tj_tensor **results)
{
    grad_node *roots_stack[16];
    grad_node **roots = n_outputs <= 16 ? roots_stack : tj_alloc(sizeof *roots * (size_t)n_outputs);
    if (!roots) return tj_oom("autograd engine", sizeof *roots * (size_t)n_outputs);
    tj_status st = TJ_OK;
    int n_roots = 0;
    for (int i = 0; i < e->n_inputs && st == TJ_OK; i++) st = view_refresh(e->inputs[i]);
    for (int i = 0; i < n_outputs && st == TJ_OK; i++) {
        if (!outputs[i]) st = tj_error_null("autograd: output %d is NULL", i);
        else if (!requires_grad(outputs[i]))
            st = tj_error(TJ_ERR_INVALID_ARGUMENT, "autograd: output %d does not require grad and has no grad_fn", i);
        else if ((st = view_refresh(outputs[i])) == TJ_OK && outputs[i]->autograd->grad_fn)
            roots[n_roots++] = outputs[i]->autograd->grad_fn;
    }
    if (st == TJ_OK) st = discover(e, roots, n_roots);
    for (int i = 0; i < n_outputs && st == TJ_OK; i++) {
        tj_tensor *g = root_grad(outputs[i], grad_outputs ? grad_outputs[i] : NULL, i);
        struct tj_autograd_meta *m = outputs[i]->autograd;
        if (!g) st = tj_last_status();
        else if (!m->grad_fn) st = leaf_is_target(e, outputs[i]) ? deliver_leaf(e, outputs[i], g) : TJ_OK;
        else {
            task *t = &e->tasks[task_find(e, m->grad_fn)];
            if (t->relevant) st = accumulate(&task_bufs(t)[m->output_nr], g);
        }
    }
    if (roots != roots_stack) tj_free(roots, sizeof *roots * (size_t)n_outputs);
    if (st == TJ_OK) st = execute(e, results);
    if (st == TJ_OK && e->accumulate) st = check_fake_grads(e);
    for (int i = 0; i < e->n && st == TJ_OK; i++) {
        task *t = &e->tasks[i];
        if (t->node || !t->buf[0]) continue;
        if (e->accumulate) {
            tj_tensor *g = t->buf[0];
            t->buf[0] = NULL; /* hand our reference over: store_grad may keep g itself */
            st = store_grad(t->leaf, g);
            tj_tensor_release(g);
            continue;
        }
        for (int k = 0; k < e->n_inputs; k++)
            if (e->inputs[k] == t->leaf && !results[k]) results[k] = tj_tensor_retain(t->buf[0]);
    }
    return st;
}

static tj_status engine_run(engine *e, tj_tensor *const *outputs, int n_outputs, tj_tensor *const *grad_outputs,
                            tj_tensor **results)
{
    bool prev = tj_set_grad_enabled(false);
    tj_scope *s = tj_scope_begin();
    tj_status st = s ? run_backward(e, outputs, n_outputs, grad_outputs, results) : tj_last_status();
    if (s) tj_scope_end(s);
    tj_set_grad_enabled(prev);
    engine_free(e);
    return st;
}

static bool retains(const tj_backward_options *o) { return o && o->retain_graph; }

tj_status tj_backward_ex(tj_tensor *output, tj_tensor *grad_output, const tj_backward_options *options)
{
    if (!output) return tj_error_null("tj_backward: NULL output");
    engine e = {.accumulate = true, .retain_graph = retains(options)};
    return engine_run(&e, &output, 1, &grad_output, NULL);
}

tj_status tj_backward(tj_tensor *output, tj_tensor *grad_output) { return tj_backward_ex(output, grad_output, NULL); }

tj_status tj_autograd_grad_ex(tj_tensor *const *outputs, int n_outputs, tj_tensor *const *grad_outputs,
                              tj_tensor *const *inputs, int n_inputs, tj_tensor **results,
                              const tj_backward_options *options)
{
    if (n_outputs < 0 || n_inputs < 0 || (n_outputs && !outputs) || (n_inputs && (!inputs || !results)))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_autograd_grad: NULL outputs, inputs or results");
    for (int i = 0; i < n_inputs; i++) {
        results[i] = NULL;
        if (!inputs[i]) return tj_error_null("tj_autograd_grad: input %d is NULL", i);
        if (!requires_grad(inputs[i]))
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_autograd_grad: input %d does not require grad", i);
    }
    engine e = {.inputs = inputs, .n_inputs = n_inputs, .retain_graph = retains(options)};
    tj_status st = engine_run(&e, outputs, n_outputs, grad_outputs, results);
    for (int i = 0; i < n_inputs; i++) {
        if (st == TJ_OK && results[i] && tj_scope_adopt(results[i]) != TJ_OK) st = tj_last_status();
        if (st != TJ_OK) {
            for (int k = i; k < n_inputs; k++) tj_tensor_release(results[k]);
            for (int k = 0; k < i; k++) tj_scope_drop(results[k]);
            for (int k = 0; k < n_inputs; k++) results[k] = NULL;
            break;
        }
    }
    return st;
}

tj_status tj_autograd_grad(tj_tensor *const *outputs, int n_outputs, tj_tensor *const *grad_outputs,
                           tj_tensor *const *inputs, int n_inputs, tj_tensor **results)
{
    return tj_autograd_grad_ex(outputs, n_outputs, grad_outputs, inputs, n_inputs, results, NULL);
}
