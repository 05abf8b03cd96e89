/* Functionalisation: a graph with in-place calls becomes a functional one
 * (PyTorch's functionalize / AOTAutograd's treatment of mutations).
 *
 * The pass rebuilds the graph node by node. Every value of the old graph is
 * tracked as an alias of a root (a placeholder, a constant or a non-view
 * result) through a chain of view calls. Each root has a version, bumped
 * when it or a view of it is mutated; a view whose value was computed at an
 * older version is regenerated from the root's current value by replaying
 * its view chain when it is next used. An in-place call becomes its
 * out-of-place operator; its result becomes the mutated value's current
 * value, and is pushed up the view chain into the root through the inverse
 * of each view (slice_scatter, select_scatter, diagonal_scatter, view back, inverse permute,
 * ...). Mutated placeholders end up as extra outputs marked "written back
 * into input k". Output shapes of the new nodes come from the operators'
 * shape functions on fake tensors. */
#include <string.h>

#include "tjit/decomp.h"
#include "tracer/graph_internal.h"

typedef struct fz {
    const tj_graph *old;
    tj_graph *g;     /* the new graph */
    /* per old value */
    int *canon;      /* the value it is the same tensor as (in-place results) */
    int *parent;     /* the value it is a view of, or -1 for a root */
    int *vnode;      /* the view call producing it (old node index) */
    int *root;
    int *cur;        /* its current value in the new graph, -1 when none */
    int *ver;        /* root version cur was computed at */
    int *version;    /* per root */
    int *input;      /* the graph input whose tensor object it is (placeholders, in-place results), or -1 */
    bool *mutated;   /* per root */
    /* per new value: a fake tensor for shape inference */
    tj_fake_values fakes;
} fz;

/* ---- the new graph ---- */

/* Adds a call to the new graph (arguments as new value ids); returns the
 * node index, its outputs' metadata inferred on fake tensors. */
static int emit(fz *z, const tj_op *op, const tj_garg *args)
{
    tj_value vals[TJ_MAX_ARGS], outs[TJ_MAX_RETURNS];
    int n_list = 0;
    for (int i = 0; i < op->nargs; i++) {
        for (int k = 0; k < tj_garg_n_values(&args[i]); k++) {
            int v = tj_garg_value_at(&args[i], k);
            if (v >= 0 && !tj_fake_value(&z->fakes, z->g, v, "tj_pass_functionalize")) return -1;
        }
        if (args[i].kind == TJ_GA_VALUES) n_list += args[i].n;
    }
    tj_tensor *stack_lists[64], **lists = n_list <= 64 ? stack_lists : tj_alloc(sizeof *lists * (size_t)n_list);
    if (!lists) {
        tj_oom("tj_pass_functionalize", sizeof *lists * (size_t)n_list);
        return -1;
    }
    tj_garg_box(args, op->nargs, z->fakes.t, vals, lists);
    tj_status st = tj_dispatch_fake(op, vals, op->nargs, outs);
    if (lists != stack_lists) tj_free(lists, sizeof *lists * (size_t)n_list);
    if (st != TJ_OK) return -1;
    tj_tensor *results[TJ_MAX_RETURNS];
    for (int i = 0; i < op->nreturns; i++) results[i] = outs[i].kind == TJ_V_TENSOR ? outs[i].u.t : NULL;
    return tj_graph_add_call(z->g, op, args, op->nargs, results, op->base);
}

/* A one-output call: its value id, or -1. */
static int emit1(fz *z, const tj_op *op, const tj_garg *args)
{
    int node = emit(z, op, args);
    return node < 0 ? -1 : z->g->nodes[node].outs[0];
}

static tj_garg gv(int v) { return (tj_garg){.kind = TJ_GA_VALUE, .u.v = v}; }
static tj_garg gi(int64_t i) { return (tj_garg){.kind = TJ_GA_INT, .u.i = i}; }

/* ---- aliases ---- */

/* Emits a call; a view whose input is no longer laid out for it (the new
 * value of a mutated tensor has other strides than the old one) becomes
 * _unsafe_view, which copies when it must (reshape). */
static int emit_call(fz *z, const tj_op *op, const tj_garg *args)
{
    int node = emit(z, op, args);
    if (node >= 0 || op != TJ_OPS(view) || tj_last_status() != TJ_ERR_SHAPE) return node;
    tj_clear_error();
    return emit(z, TJ_OPS(_unsafe_view), args);
}

/* as_strided reads its input's storage: its geometry holds over a new value
 * of the input (a row-major tensor) only when the input was one too, at
 * storage offset 0. */
static bool as_strided_replays(fz *z, int node)
{
    const tj_gnode *n = &z->old->nodes[node];
    if (n->op != TJ_OPS(as_strided) && n->op != TJ_OPS(as_strided_)) return true;
    const tj_gvalue *in = &z->old->values[n->args[0].u.v];
    int64_t strides[TJ_MAX_DIMS];
    tj_contiguous_strides(in->ndim, in->shape, strides);
    bool row_major = in->offset == 0;
    for (int d = 0; d < in->ndim; d++) row_major &= in->shape[d] == 1 || in->strides[d] == strides[d];
    if (row_major) return true;
    tj_error(TJ_ERR_UNSUPPORTED, "tj_pass_functionalize: aten::as_strided of a tensor that is not row-major at storage "
             "offset 0 reads a mutated tensor's storage: its geometry cannot be replayed on the new value");
    return false;
}

/* as_strided reads its input's storage. Emitted over a new value of a
 * graph input (x mutated before), it reads that value laid out row-major,
 * where the graph run as written reads the caller's storage: the two agree
 * only while the caller's tensor has the row-major geometry the graph
 * records (a transposed x gave other elements). Binds the input's geometry
 * then, as make_fx binds one a gradient's as_strided read: runs with other
 * strides are refused. (Over the input itself, and written back through
 * as_strided_scatter of it, the storage order holds for any layout.) */
static tj_status bind_input_under_as_strided(fz *z, const tj_op *op, int old_root, int base)
{
    if ((op != TJ_OPS(as_strided) && op != TJ_OPS(as_strided_)) || z->input[old_root] < 0) return TJ_OK;
    const tj_gnode *made = &z->g->nodes[z->g->values[base].node];
    if (made->kind == TJ_NODE_PLACEHOLDER) return TJ_OK;
    for (int k = 0; k < z->g->n_nodes; k++) {
        const tj_gnode *p = &z->g->nodes[k];
        if (p->kind == TJ_NODE_PLACEHOLDER && p->input_index == z->input[old_root])
            return tj_graph_bind_geometry(z->g, p->outs[0], "aten::as_strided of a mutated input, functionalised");
    }
    return TJ_OK;
}

/* Replays old view call `node` on the new value `base`. */
static int replay_view(fz *z, int node, int base)
{
    const tj_gnode *n = &z->old->nodes[node];
    if (!as_strided_replays(z, node) || bind_input_under_as_strided(z, n->op, z->root[n->outs[0]], base) != TJ_OK)
        return -1;
    tj_garg args[TJ_MAX_ARGS];
    memcpy(args, n->args, sizeof(tj_garg) * (size_t)n->nargs);
    args[0] = gv(base);
    const tj_op *view = tj_op_inplace_view_functional(n->op); /* unsqueeze_ replays as unsqueeze */
    int call = emit_call(z, view ? view : n->op, args);
    return call < 0 ? -1 : z->g->nodes[call].outs[0];
}

/* The new value holding old value v's content now (v canonical). */
static int current(fz *z, int v)
{
    int r = z->root[v];
    if (v == r || (z->cur[v] >= 0 && z->ver[v] == z->version[r])) return z->cur[v];
    int p = current(z, z->parent[v]);
    if (p < 0) return -1;
    int nv = replay_view(z, z->vnode[v], p);
    if (nv < 0) return -1;
    z->cur[v] = nv;
    z->ver[v] = z->version[r];
    return nv;
}

/* ---- writes through aten::expand ----
 * Every element along a broadcast dim of an expand's result is one element
 * of its input: a write reaches that input only when it gives them all one
 * value ("consistent"), as fill_ and zero_ do (tj_inplace_writes_one_value;
 * the in-place operators refuse most other writes into a self whose
 * elements overlap). The input's new value
 * is then the written value at index 0 of each broadcast dim. */

/* Old value v's traced layout may give two indices one element; with
 * broadcast_only, counting only overlaps other than along stride-0 dims. */
static bool traced_overlap(const fz *z, int v, bool broadcast_only)
{
    const tj_gvalue *g = &z->old->values[v];
    return tj_layout_may_self_overlap(g->ndim, g->shape, g->strides, broadcast_only);
}

/* Whether dim d of old expand call `node`'s result is a broadcast dim: new
 * in front, or of size 1 in the input and expanded. */
static bool expand_broadcasts(const fz *z, int node, int d)
{
    const tj_gnode *n = &z->old->nodes[node];
    const tj_gvalue *in = &z->old->values[n->args[0].u.v], *out = &z->old->values[n->outs[0]];
    int lead = out->ndim - in->ndim;
    return d < lead || (in->shape[d - lead] == 1 && out->shape[d] != 1);
}

/* The expand input's new value (pv before) from nv, a value of the
 * expand's rank holding one value along each broadcast dim (there of its
 * expanded size, or 1): index 0 of each. An empty nv wrote nothing. */
static int unexpand(fz *z, int expand_node, int pv, int nv, bool consistent)
{
    const tj_gnode *n = &z->old->nodes[expand_node];
    if (!consistent) {
        tj_error(TJ_ERR_UNSUPPORTED, "tj_pass_functionalize: a mutation writes different values to elements of "
                 "aten::expand's result %%%s that are one element of its input: only a write of one value along "
                 "the broadcast dims (fill_, zero_, index_fill_ along another dim) can be written back; clone() the "
                 "expanded tensor first",
                 z->old->values[n->outs[0]].name);
        return -1;
    }
    const tj_gvalue *v = &z->g->values[nv];
    int64_t numel = 1;
    for (int d = 0; d < v->ndim; d++) numel *= v->shape[d];
    if (numel == 0) return pv;
    int parent_ndim = z->g->values[pv].ndim, lead = v->ndim - parent_ndim;
    int64_t parent_shape[TJ_MAX_DIMS];
    memcpy(parent_shape, z->g->values[pv].shape, sizeof parent_shape);
    for (int i = 0; i < lead && nv >= 0; i++) {
        tj_garg args[3] = {gv(nv), gi(0), gi(0)};
        nv = emit1(z, TJ_OPS(select_int), args);
    }
    for (int d = 0; d < parent_ndim && nv >= 0; d++) {
        if (parent_shape[d] != 1 || z->g->values[nv].shape[d] == 1) continue;
        tj_garg args[5] = {gv(nv), gi(d), gi(0), gi(1), gi(1)};
        nv = emit1(z, TJ_OPS(slice_Tensor), args);
    }
    return nv;
}

/* Old value v's view call as a select or slice along a dim where its
 * input's traced stride is 0 (every index there names the same elements):
 * that dim, or -1. */
static int narrows_broadcast_dim(const fz *z, int v)
{
    if (z->vnode[v] < 0) return -1;
    const tj_gnode *n = &z->old->nodes[z->vnode[v]];
    if (n->op != TJ_OPS(select_int) && n->op != TJ_OPS(slice_Tensor)) return -1;
    const tj_gvalue *in = &z->old->values[n->args[0].u.v];
    int64_t d = n->args[1].u.i < 0 ? n->args[1].u.i + in->ndim : n->args[1].u.i;
    return d >= 0 && d < in->ndim && in->strides[d] == 0 ? (int)d : -1;
}

/* When old value m is reached from an expand's result by selects and slices
 * along broadcast dims (as the core table's fill_ narrows an expanded self),
 * nv (m's new value) widened to the expand's rank, each of those dims of
 * size 1 or a slice's length, and *top the expand's result; else -1 with no
 * error. Written back through those views, the other indices of each dim
 * would keep their old values; the expand's input takes nv whole. */
static int through_broadcast(fz *z, int m, int nv, int *top)
{
    int v = m, dims[64], nd = 0;
    int64_t shape[TJ_MAX_DIMS];
    const tj_gvalue *g = &z->old->values[m];
    int ndim = g->ndim;
    memcpy(shape, g->shape, sizeof shape);
    for (int d; (d = narrows_broadcast_dim(z, v)) >= 0 && nd < 64; v = z->parent[v]) {
        bool select = z->old->nodes[z->vnode[v]].op == TJ_OPS(select_int);
        if (select) {
            memmove(shape + d + 1, shape + d, sizeof(int64_t) * (size_t)(ndim++ - d));
            shape[d] = 1;
        }
        dims[nd++] = select ? d : -1;
    }
    if (nd == 0 || z->vnode[v] < 0 || z->old->nodes[z->vnode[v]].op != TJ_OPS(expand)) return -1;
    const tj_gvalue *e = &z->old->values[v];
    for (int d = 0; d < ndim; d++)
        if (shape[d] != e->shape[d] && !expand_broadcasts(z, z->vnode[v], d)) return -1;
    for (int k = 0; k < nd && nv >= 0; k++) {
        if (dims[k] < 0) continue;
        tj_garg args[2] = {gv(nv), gi(dims[k])};
        nv = emit1(z, TJ_OPS(unsqueeze), args);
    }
    *top = v;
    return nv;
}

/* Whether parent p's new value, its view m having taken a consistent
 * value, is consistent: p's elements overlap only along broadcast dims,
 * and the view keeps each of those whole (a reshaping view, or a select or
 * slice along another dim). */
static bool stays_consistent(const fz *z, int m, int p)
{
    if (!traced_overlap(z, p, false)) return true;
    if (traced_overlap(z, p, true)) return false;
    const tj_op *op = z->old->nodes[z->vnode[m]].op;
    op = tj_op_inplace_view_functional(op) ? tj_op_inplace_view_functional(op) : op;
    if (op == TJ_OPS(select_int) || op == TJ_OPS(slice_Tensor)) return narrows_broadcast_dim(z, m) < 0;
    return op == TJ_OPS(view) || op == TJ_OPS(permute) || op == TJ_OPS(transpose_int) || op == TJ_OPS(t) ||
           op == TJ_OPS(detach) || op == TJ_OPS(unsqueeze) || op == TJ_OPS(squeeze_dim) || op == TJ_OPS(squeeze) ||
           op == TJ_OPS(expand);
}

/* The new parent value after its view `view_node` (old) took value nv; pv is
 * the parent's value before. The inverse of each view operator. */
static int unview(fz *z, int view_node, int pv, int nv, bool consistent)
{
    const tj_gnode *n = &z->old->nodes[view_node];
    const tj_op *op = tj_op_inplace_view_functional(n->op) ? tj_op_inplace_view_functional(n->op) : n->op;
    const tj_garg *a = n->args;
    /* copies: emitting may move the value array */
    int parent_ndim = z->g->values[pv].ndim, child_ndim = z->g->values[nv].ndim;
    int64_t parent_shape[TJ_MAX_DIMS];
    memcpy(parent_shape, z->g->values[pv].shape, sizeof parent_shape);
    if (op == TJ_OPS(slice_Tensor)) {
        tj_garg args[6] = {gv(pv), gv(nv), a[1], a[2], a[3], a[4]};
        return emit1(z, TJ_OPS(slice_scatter), args);
    }
    if (op == TJ_OPS(select_int)) {
        tj_garg args[4] = {gv(pv), gv(nv), a[1], a[2]};
        return emit1(z, TJ_OPS(select_scatter), args);
    }
    if (op == TJ_OPS(diagonal)) {
        tj_garg args[5] = {gv(pv), gv(nv), a[1], a[2], a[3]};
        return emit1(z, TJ_OPS(diagonal_scatter), args);
    }
    if (op == TJ_OPS(as_strided)) {
        if (!as_strided_replays(z, view_node) ||
            bind_input_under_as_strided(z, op, z->root[n->outs[0]], pv) != TJ_OK)
            return -1;
        tj_garg args[5] = {gv(pv), gv(nv), a[1], a[2], a[3]};
        return emit1(z, TJ_OPS(as_strided_scatter), args);
    }
    if (op == TJ_OPS(view)) {
        tj_garg args[2] = {gv(nv), {.kind = TJ_GA_INTS, .n = parent_ndim, .u.ints = parent_shape}};
        return emit1(z, TJ_OPS(_unsafe_view), args);
    }
    if (op == TJ_OPS(permute)) {
        int64_t inv[TJ_MAX_DIMS];
        int nd = a[1].n;
        for (int i = 0; i < nd; i++) inv[(a[1].u.ints[i] % nd + nd) % nd] = i;
        tj_garg args[2] = {gv(nv), {.kind = TJ_GA_INTS, .n = nd, .u.ints = inv}};
        return emit1(z, TJ_OPS(permute), args);
    }
    if (op == TJ_OPS(transpose_int)) {
        tj_garg args[3] = {gv(nv), a[1], a[2]};
        return emit1(z, TJ_OPS(transpose_int), args);
    }
    if (op == TJ_OPS(t)) {
        tj_garg args[1] = {gv(nv)};
        return emit1(z, TJ_OPS(t), args);
    }
    if (op == TJ_OPS(detach)) return nv; /* same geometry */
    if (op == TJ_OPS(expand)) return unexpand(z, view_node, pv, nv, consistent);
    if (op == TJ_OPS(unsqueeze)) {
        tj_garg args[2] = {gv(nv), a[1]};
        return emit1(z, TJ_OPS(squeeze_dim), args);
    }
    if (op == TJ_OPS(squeeze_dim)) {
        if (parent_ndim == child_ndim) return nv;
        int d;
        if (tj_wrap_dim(op->name, a[1].u.i, parent_ndim, &d) != TJ_OK) return -1;
        tj_garg args[2] = {gv(nv), gi(d)};
        return emit1(z, TJ_OPS(unsqueeze), args);
    }
    if (op == TJ_OPS(squeeze)) { /* unsqueeze_to: back at each size-1 dim of the parent */
        for (int d = 0; d < parent_ndim && nv >= 0; d++) {
            if (parent_shape[d] != 1) continue;
            tj_garg args[2] = {gv(nv), gi(d)};
            nv = emit1(z, TJ_OPS(unsqueeze), args);
        }
        return nv;
    }
    tj_error(TJ_ERR_UNSUPPORTED, "tj_pass_functionalize: a mutation through a view made by %s cannot be written back "
                                 "into its base", op->name);
    return -1;
}

/* Old value m (canonical) now holds new value nv: the change goes up the
 * view chain into the root, whose version moves on. consistent: nv holds
 * one value at the indices of m that are one element (see unexpand). A
 * select or slice along a broadcast dim of an expand goes straight into the
 * expand's input; the expand's result is then replayed when next used. */
static tj_status assign(fz *z, int m, int nv, bool consistent)
{
    int chain[64], depth = 0;
    while (z->parent[m] >= 0) {
        if (depth == 64) return tj_error(TJ_ERR_UNSUPPORTED, "tj_pass_functionalize: a view chain deeper than 64");
        int p = z->parent[m], view = z->vnode[m], np, top;
        int wide = through_broadcast(z, m, nv, &top);
        if (wide >= 0) {
            view = z->vnode[top];
            p = z->parent[top];
            int pv = current(z, p);
            np = pv < 0 ? -1 : unexpand(z, view, pv, wide, consistent);
        } else {
            int pv = current(z, p);
            np = pv < 0 ? -1 : unview(z, view, pv, nv, consistent);
            consistent = consistent && stays_consistent(z, m, p);
        }
        if (np < 0) return tj_last_status();
        z->cur[m] = nv;
        chain[depth++] = m;
        m = p;
        nv = np;
    }
    z->cur[m] = nv;
    z->version[m]++;
    z->mutated[m] = true;
    for (int i = 0; i < depth; i++) z->ver[chain[i]] = z->version[m];
    return TJ_OK;
}

/* ---- the rewrite ---- */

/* The old call's arguments with values mapped to their current new values. */
static tj_status map_args(fz *z, const tj_gnode *n, tj_garg *args, int (*lists)[64])
{
    for (int i = 0; i < n->nargs; i++) {
        args[i] = n->args[i];
        if (args[i].kind == TJ_GA_VALUE) {
            if ((args[i].u.v = current(z, z->canon[n->args[i].u.v])) < 0) return tj_last_status();
        } else if (args[i].kind == TJ_GA_VALUES) {
            if (args[i].n > 64) return tj_error(TJ_ERR_UNSUPPORTED, "tj_pass_functionalize: a list of more than 64");
            for (int k = 0; k < args[i].n; k++)
                if (n->args[i].u.vs[k] < 0) lists[i][k] = -1;
                else if ((lists[i][k] = current(z, z->canon[n->args[i].u.vs[k]])) < 0) return tj_last_status();
            args[i].u.vs = lists[i];
        }
    }
    return TJ_OK;
}

/* The out-of-place form of an in-place operator: add_.Tensor -> add.Tensor,
 * pow_.Scalar -> pow.Tensor_Scalar (the paired forms of
 * op_inplace_forms.def). */
static const tj_op *functional_op(const tj_op *op)
{
    const tj_op *paired = tj_op_inplace_functional(op);
    if (paired) return paired;
    char name[96];
    snprintf(name, sizeof name, "%s::%.*s%s%s", op->ns, (int)strlen(op->base) - 1, op->base,
             op->overload[0] ? "." : "", op->overload);
    const tj_op *f = tj_op_find(name);
    if (!f) tj_error(TJ_ERR_UNSUPPORTED, "tj_pass_functionalize: %s has no out-of-place form %s", op->name, name);
    return f;
}

static bool same_type(const tj_gvalue *a, const tj_gvalue *b)
{
    return a->dtype == b->dtype && a->ndim == b->ndim && !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim);
}

static tj_status rewrite_inplace(fz *z, const tj_gnode *n, const tj_garg *args)
{
    int m = z->canon[n->args[0].u.v];
    int nv;
    /* copy_ of a value of the same type is that value */
    if (n->op == TJ_OPS(copy_) && same_type(&z->g->values[args[0].u.v], &z->g->values[args[1].u.v])) {
        nv = args[1].u.v;
    } else {
        const tj_op *f = functional_op(n->op);
        if (!f || (nv = emit1(z, f, args)) < 0) return tj_last_status();
        /* the in-place call casts its promoted result to self's dtype
         * (f32.mul_(f64)), as PyTorch's functionalization does */
        tj_dtype want = z->g->values[args[0].u.v].dtype;
        if (z->g->values[nv].dtype != want) {
            tj_garg none = {.kind = TJ_GA_NONE};
            tj_garg cast[7] = {gv(nv), {.kind = TJ_GA_DTYPE, .u.dtype = want}, none, none, none,
                               {.kind = TJ_GA_BOOL, .u.b = false}, none};
            if ((nv = emit1(z, TJ_OPS(_to_copy), cast)) < 0) return tj_last_status();
        }
    }
    z->canon[n->outs[0]] = m;
    /* other in-place operators refuse a self whose elements overlap
     * (index_put_ and index_fill_ along a broadcast dim aside) */
    const tj_gvalue *self = &z->old->values[m];
    int64_t dim = n->nargs > 1 && n->args[1].kind == TJ_GA_INT ? n->args[1].u.i : 0;
    bool one_value = tj_inplace_writes_one_value(n->op, dim, self->ndim, self->shape, self->strides);
    return assign(z, m, nv, one_value || !traced_overlap(z, m, false));
}

/* Operators that write Tensor(a!) arguments other than self, and their
 * functional forms, which return those arguments' new values after the
 * operator's own results, in argument order (PyTorch 2 functionalises
 * _native_batch_norm_legit the same way). `only_if` is the bool argument
 * without which the operator writes nothing (-1: none): batch norm in
 * evaluation reads its running statistics and stays as it is, with no
 * write-back (PyTorch 2.1 calls _native_batch_norm_legit_no_training). */
static const struct {
    const char *op, *functional;
    int only_if;
} mutating_forms[] = {
    {"aten::native_batch_norm", "aten::_native_batch_norm_legit_functional", 5},
};

/* A call writing some of its arguments: its functional form, then each
 * written argument takes its new value. With every such argument None, or
 * its only_if argument false, nothing is written: the call stays. */
static tj_status rewrite_mutating(fz *z, const tj_gnode *n, const tj_garg *args)
{
    const tj_op *op = n->op, *f = NULL;
    bool writes = false;
    for (int i = 0; i < n->nargs; i++) writes |= ((op->mutated_args >> i) & 1) && args[i].kind == TJ_GA_VALUE;
    for (size_t k = 0; writes && !f && k < sizeof mutating_forms / sizeof *mutating_forms; k++) {
        if (strcmp(op->name, mutating_forms[k].op) != 0) continue;
        int c = mutating_forms[k].only_if;
        if (c >= 0 && args[c].kind == TJ_GA_BOOL && !args[c].u.b) writes = false;
        else f = tj_op_find(mutating_forms[k].functional);
    }
    if (writes && !f)
        return tj_error(TJ_ERR_UNSUPPORTED, "tj_pass_functionalize: %s writes its arguments and has no functional form",
                        op->name);
    int node = emit_call(z, writes ? f : op, args);
    if (node < 0) return tj_last_status();
    for (int k = 0; k < n->nout; k++)
        if (n->outs[k] >= 0) z->cur[n->outs[k]] = z->g->nodes[node].outs[k];
    if (!writes) return TJ_OK;
    int extra = op->nreturns;
    for (int i = 0; i < n->nargs; i++) {
        if (!((op->mutated_args >> i) & 1)) continue;
        int nv = z->g->nodes[node].outs[extra++];
        int m = z->canon[n->args[i].u.v];
        tj_status st = assign(z, m, nv, !traced_overlap(z, m, false));
        if (st != TJ_OK) return st;
    }
    return TJ_OK;
}

/* An in-place view (unsqueeze_, ...): its view operator, whose result is
 * a view of self's value, as PyTorch's functionalisation records it; no
 * data changes. Refused on a graph input's own tensor object, whose shape
 * the caller would see change (PyTorch's functionalize records as_strided_
 * on the input, an in-place view tjit has not). */
static tj_status rewrite_inplace_view(fz *z, const tj_gnode *n, const tj_garg *args, int node_index)
{
    int m = z->canon[n->args[0].u.v];
    if (z->input[m] >= 0)
        return tj_error(TJ_ERR_UNSUPPORTED, "tj_pass_functionalize: %s changes the shape and strides of graph input %d "
                        "(%%%s) in place, which a functional graph cannot do to its caller's tensor (torch 1.13's "
                        "functionalize records as_strided_ on the input): clone the input first, or run the graph "
                        "unfunctionalised", n->op->name, z->input[m], z->old->values[n->args[0].u.v].name);
    int nv = emit1(z, tj_op_inplace_view_functional(n->op), args);
    if (nv < 0) return tj_last_status();
    int o = n->outs[0];
    z->cur[o] = nv;
    z->parent[o] = m;
    z->vnode[o] = node_index;
    z->root[o] = z->root[m];
    z->ver[o] = z->version[z->root[m]];
    /* self's tensor object now has the view's geometry: later reads of self
     * (or of an earlier in-place result that is that object) read the view,
     * as the graph run eagerly does */
    for (int v = 0; v < z->old->n_values; v++)
        if (z->canon[v] == m) z->canon[v] = o;
    return TJ_OK;
}

static tj_status rewrite_call(fz *z, const tj_gnode *n, int node_index)
{
    tj_garg args[TJ_MAX_ARGS];
    int lists[TJ_MAX_ARGS][64];
    tj_status st = map_args(z, n, args, lists);
    if (st != TJ_OK) return st;
    if (tj_op_is_inplace_view(n->op)) return rewrite_inplace_view(z, n, args, node_index);
    if (n->op->is_inplace) return rewrite_inplace(z, n, args);
    if (n->op->mutated_args && tj_op_is_builtin(n->op)) return rewrite_mutating(z, n, args);
    if (n->op->is_view && n->args[0].kind == TJ_GA_VALUE &&
        (st = bind_input_under_as_strided(z, n->op, z->root[z->canon[n->args[0].u.v]], args[0].u.v)) != TJ_OK)
        return st;
    int node = emit_call(z, n->op, args);
    if (node < 0) return tj_last_status();
    for (int k = 0; k < n->nout; k++) {
        int o = n->outs[k];
        if (o < 0) continue;
        z->cur[o] = z->g->nodes[node].outs[k];
        if (n->op->is_view && n->args[0].kind == TJ_GA_VALUE) {
            int p = z->canon[n->args[0].u.v];
            z->parent[o] = p;
            z->vnode[o] = node_index;
            z->root[o] = z->root[p];
            z->ver[o] = z->version[z->root[p]];
        }
    }
    return TJ_OK;
}

/* Written-back values that are a graph input written back too, or a view of
 * one (b.copy_(a); a.add_(1): b's new value is a itself), become copies:
 * the write-backs run one after another, so b would take a's new value (a
 * plan refuses a view of its own target). Returns the first error. */
static tj_status copy_written_back_inputs(fz *z, int *vals, const int *wb, int count)
{
    for (int k = 0; k < count; k++) {
        int i = wb[k] >= 0 ? tj_graph_input_root(z->g, vals[k]) : -1;
        bool itself = z->g->nodes[z->g->values[vals[k]].node].kind == TJ_NODE_PLACEHOLDER;
        bool overwritten = false;
        for (int m = 0; i >= 0 && m < count; m++) overwritten |= wb[m] == i && !(m == k && itself);
        if (!overwritten) continue;
        tj_garg args[2] = {gv(vals[k]), {.kind = TJ_GA_NONE}};
        if ((vals[k] = emit1(z, TJ_OPS(clone), args)) < 0) return tj_last_status();
    }
    return TJ_OK;
}

/* The output node: old outputs, then one per mutated placeholder not
 * already written back. */
static tj_status rewrite_output(fz *z, const tj_gnode *n)
{
    const tj_graph *old = z->old;
    int cap = n->nargs + old->n_inputs;
    int *vals = tj_alloc(sizeof(int) * (size_t)(cap ? cap : 1) * 2);
    if (!vals) return tj_oom("tj_pass_functionalize", sizeof(int) * (size_t)cap * 2);
    int *wb = vals + cap, count = 0;
    tj_status st = TJ_OK;
    for (int i = 0; i < n->nargs && st == TJ_OK; i++) {
        if ((vals[count] = current(z, z->canon[n->args[i].u.v])) < 0) st = tj_last_status();
        wb[count++] = n->writeback ? n->writeback[i] : -1;
    }
    for (int i = 0; i < old->n_nodes && st == TJ_OK; i++) {
        const tj_gnode *p = &old->nodes[i];
        if (p->kind != TJ_NODE_PLACEHOLDER || !z->mutated[p->outs[0]]) continue;
        bool covered = false;
        for (int k = 0; k < count; k++) covered |= wb[k] == p->input_index;
        if (covered) continue;
        vals[count] = z->cur[p->outs[0]];
        wb[count++] = p->input_index;
    }
    if (st == TJ_OK) st = copy_written_back_inputs(z, vals, wb, count);
    if (count > TJ_MAX_GRAPH_OUTPUTS) st = tj_error(TJ_ERR_OVERFLOW, "tj_pass_functionalize: more than %d outputs",
                                                    TJ_MAX_GRAPH_OUTPUTS);
    int node = st == TJ_OK ? tj_graph_add_output(z->g, vals, count) : -1;
    if (st == TJ_OK && node < 0) st = tj_last_status();
    bool any = false;
    for (int k = 0; k < count; k++) any |= wb[k] >= 0;
    if (st == TJ_OK && any) {
        int *w = tj_graph_alloc(z->g, sizeof(int) * (size_t)count);
        if (!w) st = tj_last_status();
        else memcpy(w, wb, sizeof(int) * (size_t)count);
        z->g->nodes[node].writeback = w;
    }
    tj_free(vals, sizeof(int) * (size_t)(cap ? cap : 1) * 2);
    return st;
}

static tj_status rewrite(fz *z)
{
    const tj_graph *old = z->old;
    for (int i = 0; i < old->n_nodes; i++) {
        const tj_gnode *n = &old->nodes[i];
        int node = -1;
        switch (n->kind) {
        case TJ_NODE_PLACEHOLDER: {
            const tj_gvalue *v = &old->values[n->outs[0]];
            tj_tensor *like = tj_tensor_fake(v->dtype, v->ndim, v->shape);
            if (!like) return tj_last_status();
            memcpy(like->strides, v->strides, sizeof like->strides);
            like->offset = v->offset;
            node = tj_graph_add_placeholder(z->g, like, v->name);
            if (node >= 0 && tj_graph_bind_geometry(z->g, z->g->nodes[node].outs[0], v->geometry_bound) != TJ_OK)
                node = -1;
            z->input[n->outs[0]] = n->input_index;
            break;
        }
        case TJ_NODE_CONSTANT: node = tj_graph_add_constant(z->g, n->constant, old->values[n->outs[0]].name); break;
        case TJ_NODE_CALL: {
            tj_status st = rewrite_call(z, n, i);
            if (st != TJ_OK) return st;
            continue;
        }
        case TJ_NODE_OUTPUT: {
            tj_status st = rewrite_output(z, n);
            if (st != TJ_OK) return st;
            continue;
        }
        }
        if (node < 0) return tj_last_status();
        z->cur[n->outs[0]] = z->g->nodes[node].outs[0];
    }
    return TJ_OK;
}

static int count_inplace(const tj_graph *g)
{
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) n += g->nodes[i].kind == TJ_NODE_CALL && (g->nodes[i].op->is_inplace ||
                                                   (g->nodes[i].op->mutated_args && tj_op_is_builtin(g->nodes[i].op)));
    return n;
}

int tj_pass_functionalize(tj_graph *g)
{
    if (!g) {
        tj_error_null("tj_pass_functionalize: NULL graph");
        return -1;
    }
    int rewritten = count_inplace(g);
    if (!rewritten) return 0;
    /* An implicit operator (reshape, flatten, contiguous, split) returns a
     * view of its input or a copy, as the input's layout decides, and the
     * rewrite follows aliases through view operators only: a mutation
     * through reshape(x), or of x read through it, was lost. They are first
     * replaced by the calls they make (a replay without a table records
     * them), as torch functionalizes below CompositeImplicitAutograd. */
    tj_graph *lowered = NULL;
    if (tj_graph_has_implicit_call(g) && !(lowered = tj_graph_decompose(g, NULL))) return -1;
    const tj_graph *old = lowered ? lowered : g;
    size_t nv = (size_t)(old->n_values ? old->n_values : 1);
    size_t ints = sizeof(int) * nv * 8, bytes = ints + sizeof(bool) * nv;
    int *mem = tj_alloc(bytes);
    fz z = {.old = old, .g = tj_graph_new()};
    tj_scope *scope = tj_scope_begin();
    tj_status st = !mem ? tj_oom("tj_pass_functionalize", bytes) : !z.g || !scope ? tj_last_status() : TJ_OK;
    if (st == TJ_OK) {
        memset(mem, 0, bytes);
        z.canon = mem;
        z.parent = mem + nv;
        z.vnode = mem + 2 * nv;
        z.root = mem + 3 * nv;
        z.cur = mem + 4 * nv;
        z.ver = mem + 5 * nv;
        z.version = mem + 6 * nv;
        z.input = mem + 7 * nv;
        z.mutated = (bool *)(mem + 8 * nv);
        for (size_t v = 0; v < nv; v++) {
            z.canon[v] = z.root[v] = (int)v;
            z.parent[v] = z.vnode[v] = z.cur[v] = z.input[v] = -1;
        }
        st = rewrite(&z);
    }
    if (scope) tj_scope_end(scope);
    tj_fake_values_free(&z.fakes);
    tj_free(mem, bytes);
    tj_graph_free(lowered);
    if (st != TJ_OK) {
        tj_graph_free(z.g);
        return -1;
    }
    /* the rebuilt graph takes the caller's handle */
    tj_graph tmp = *g;
    *g = *z.g;
    *z.g = tmp;
    tj_graph_free(z.g);
    tj_graph_count_uses(g);
    if (tj_pass_dead_code(g) < 0) return -1;
    return rewritten;
}

int tj_graph_output_writeback(const tj_graph *g, int i)
{
    if (!g || g->output_node < 0) return -1;
    const tj_gnode *n = &g->nodes[g->output_node];
    return n->writeback && i >= 0 && i < n->nargs ? n->writeback[i] : -1;
}

tj_status tj_check_writeback_aliases(tj_tensor *const *inputs, int n_inputs, const int *writeback, int n_outputs,
                                     const char *who, const char *(*input_name)(const void *owner, int i),
                                     const void *owner)
{
    for (int k = 0; writeback && k < n_outputs; k++) {
        int i = writeback[k];
        if (i < 0 || !inputs[i]) continue;
        /* copy_ refuses such a destination; a functional graph's value for
         * it need not hold one value where its elements are one */
        if (tj_may_self_overlap(inputs[i]))
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: input %d (%%%s) is written back to but has elements "
                            "that share memory (a broadcast view?); clone() it first", who, i, input_name(owner, i));
        /* storages compared here first: every run of a training step checks
         * each written-back input against every input (gpt's: 112 x 114),
         * and almost none share one (a call for each pair took 94 us a run
         * here, this 10 us; gpt's step takes about 20 ms) */
        for (int j = 0; j < n_inputs; j++)
            if (j != i && inputs[j] && tj_storages_overlap(inputs[j]->storage, inputs[i]->storage) &&
                tj_overlap_status(inputs[i], inputs[j]) != TJ_OVERLAP_NONE)
                return tj_error(TJ_ERR_INVALID_ARGUMENT,
                                "%s: input %d (%%%s) is written back to but shares memory with input %d (%%%s): "
                                "the functional graph computes both from their values before the run and "
                                "neither would see the other's writes; pass tensors that do not overlap "
                                "(clone() one)", who, i, input_name(owner, i), j, input_name(owner, j));
    }
    return TJ_OK;
}
