/* Copy elision into a product's operand: a bmm whose batch2 is a
 * contiguous _to_copy (or clone: contiguous() records one) of a strided
 * view, read directly or through views, that nothing else reads runs
 * as one step that multiplies from the view itself: the implicit
 * convolution's tiles read B in place where the view reads stride-1
 * windows, or our GEMM kernel packs its blocks of B straight from the view
 * through offset tables (runtime/op_linalg.h, tj_kernel_bmm_gathered;
 * other routes gather the view into scratch). The copied matrix is never written to memory:
 * in a decomposed convolution it is im2col's columns, [C*kh*kw, N*oh*ow]
 * (20 MB for cnn's second layer at batch 64), which otherwise goes to DRAM
 * and comes back for the product. The same holds when batch2 is the copy's
 * transpose (a weight gradient's g @ columns^T, the columns [b, n, k] as
 * copied; tj_kernel_bmm_gathered_t).
 *
 * The view's dims must split into bmm's three: leading dims whose sizes
 * multiply to the batch, then to k, then to n (to n, then to k for the
 * transpose), which is how a reshape of a permuted view lines them up.
 * The copy's read moves to the bmm's step, so no write may come between
 * (tj_plan_writes_between); the view's storage then lives until that step,
 * which the memory planner sees in the step's arguments.
 *
 * A decomposed convolution then adds its bias, broadcast over the images
 * and positions (one value per row of the product), and a relu may follow,
 * which the core table writes as maximum(0, x): when the add is the only
 * reader of the product (through reshapes) and the maximum the only reader
 * of the add, they run in the product's step, on each image's result as
 * its thread finishes it (tj_kernel_bmm_gathered_epilogue), instead of two
 * more passes over memory. The step takes the last operator's place, as
 * tracer/fuse.c's epilogues do; when something else reads the add's result
 * (a training step's relu gradient may), only the add joins.
 *
 * The columns' view is over the convolution's zero-padded input, zeros +
 * slice_scatter of the input per padded dim (decomps/windows.c), one more
 * pass over memory per padded dim for a buffer only the product reads:
 * when nothing else reads it, the step reads the input and pads each
 * item's frames into its thread's scratch (absorb_padding). Where the
 * compiler foresees another route than the window products (a strided
 * convolution), the buffer stays in the arena as the step's second result
 * and is made there at each run; otherwise it leaves the arena (a run
 * with A restrided or the ISA lowered since makes it for the step). */
#include <string.h>

#include "plan_internal.h"
#include "runtime/op_linalg.h"

/* First dim index after the dims of `shape` from `from` whose sizes
 * multiply to `want` (size-1 dims at the end go with the next group); -1
 * when no prefix does. */
static int group_end(const int64_t *shape, int ndim, int from, int64_t want)
{
    int64_t prod = 1;
    int d = from;
    while (d < ndim && prod < want) prod *= shape[d++];
    return prod == want ? d : -1;
}

/* Whether value x, a view of ARENA value r, is all of r as [b, n, k]
 * transposed to [b, k, n] (the strides such a permute gives). */
static bool transposed_whole(const tj_plan *p, int x, int r)
{
    const tj_pvalue *v = &p->values[x];
    if (v->kind != TJ_PV_VIEW || v->root != r || v->rel_offset != 0 || v->numel != p->values[r].numel || v->ndim != 3)
        return false;
    int64_t k = v->shape[1], n = v->shape[2];
    return v->strides[0] == k * n && v->strides[1] == 1 && v->strides[2] == k;
}

/* The _to_copy or clone node whose result bmm node `i` reads as batch2,
 * directly or through views (each value on the way read only by the next
 * view), and nothing else reads; -1 when there is none. *transposed: batch2
 * is the copy's transpose (transposed_whole) rather than the copy in its
 * order. */
static int sole_copy(const tj_plan *p, const tj_plan_uses *u, int i, bool *transposed)
{
    int b = p->nodes[i].args[1].u.v;
    const tj_pvalue *pb = &p->values[b];
    int r = pb->kind == TJ_PV_VIEW ? pb->root : b;
    const tj_pvalue *pr = &p->values[r];
    if (pr->kind != TJ_PV_ARENA || pr->dtype != TJ_FLOAT32 || pr->node < 0) return -1; /* ARENA: contiguous */
    *transposed = !tj_plan_whole_in_order(p, b, r);
    if (*transposed && !transposed_whole(p, b, r)) return -1;
    if (!tj_plan_sole_view_chain(p, u, b, r, i)) return -1;
    const tj_pnode *c = &p->nodes[pr->node];
    if (!c->is_step || (c->op != TJ_OPS(_to_copy) && c->op != TJ_OPS(clone)) || c->nout != 1 || c->label) return -1;
    const tj_garg *src = &c->args[0];
    if (src->kind != TJ_GA_VALUE || p->values[src->u.v].dtype != TJ_FLOAT32) return -1;
    return pr->node;
}

/* Whether value r, broadcast to value o's shape as add broadcasts it, has
 * one value per row of o's elements read as [b, m, n] in order: r's dims of
 * size above 1 all fall among o's dims that multiply to m. */
static bool one_per_row(const tj_pvalue *r, const tj_pvalue *o, int64_t b, int64_t m)
{
    int d1 = group_end(o->shape, o->ndim, 0, b);
    int d2 = d1 < 0 ? -1 : group_end(o->shape, o->ndim, d1, m);
    if (d2 < 0 || r->ndim > o->ndim) return false;
    for (int d = 0, lead = o->ndim - r->ndim; d < r->ndim; d++) {
        int od = lead + d;
        if (r->shape[d] != 1 && (r->shape[d] != o->shape[od] || od < d1 || od >= d2)) return false;
    }
    return true;
}

/* Whether step e makes one float32 result of x's shape, for an epilogue to
 * take its place. */
static bool takes_place_of(const tj_plan *p, const tj_pnode *e, int x)
{
    if (!e->is_step || e->label || e->nout != 1 || e->outs[0] < 0) return false;
    const tj_pvalue *o = &p->values[e->outs[0]], *px = &p->values[x];
    return o->kind == TJ_PV_ARENA && o->dtype == TJ_FLOAT32 && o->ndim == px->ndim &&
           memcmp(o->shape, px->shape, sizeof(int64_t) * (size_t)o->ndim) == 0;
}

/* The bias node e adds to value x (alpha 1), one value per row of the
 * product [b, m, n] that x reshapes: its value, or -1. */
static int bias_added(const tj_plan *p, const tj_pnode *e, int x, int64_t b, int64_t m)
{
    if (e->op != TJ_OPS(add_Tensor) || !takes_place_of(p, e, x) || !tj_plan_garg_is_one(&e->args[2])) return -1;
    int slot = e->args[0].kind == TJ_GA_VALUE && e->args[0].u.v == x ? 0 : 1;
    const tj_garg *other = &e->args[1 - slot];
    if (e->args[slot].kind != TJ_GA_VALUE || e->args[slot].u.v != x || other->kind != TJ_GA_VALUE) return -1;
    const tj_pvalue *r = &p->values[other->u.v];
    return r->dtype == TJ_FLOAT32 && one_per_row(r, &p->values[e->outs[0]], b, m) ? other->u.v : -1;
}

/* Whether node f is relu as the core table writes it: aten::maximum of a
 * float32 constant +0.0 (first: equal operands give the second, x) and x. */
static bool relu_of(const tj_plan *p, const tj_pnode *f, int x)
{
    if (f->op != TJ_OPS(maximum) || !takes_place_of(p, f, x) || f->args[0].kind != TJ_GA_VALUE ||
        f->args[1].kind != TJ_GA_VALUE || f->args[1].u.v != x)
        return false;
    const tj_pvalue *z = &p->values[f->args[0].u.v];
    if (z->kind != TJ_PV_CONSTANT || z->dtype != TJ_FLOAT32 || z->numel != 1 || z->ndim > p->values[x].ndim)
        return false;
    uint32_t bits;
    memcpy(&bits, tj_tensor_ptr(z->constant), sizeof bits);
    return bits == 0;
}

/* Gathered bmm step i (result [b, m, n]) takes the bias add that is the
 * only reader of its result (through reshapes) and the relu that is the
 * only reader of the add's, if any; nothing when there is no such add. */
static tj_status absorb_bias(tj_plan *p, const tj_plan_uses *u, int i, int *step)
{
    *step = i;
    tj_pnode *n = &p->nodes[i];
    int v = n->outs[0], x = v, e = tj_plan_sole_user(u, v);
    const tj_pvalue *pv = &p->values[v];
    while (e >= 0 && !p->nodes[e].is_step && !p->nodes[e].folded && p->nodes[e].nout == 1 && p->nodes[e].outs[0] >= 0) {
        x = p->nodes[e].outs[0];
        e = tj_plan_sole_user(u, x);
    }
    if (e < 0 || !tj_plan_whole_in_order(p, x, v) || !tj_plan_sole_view_chain(p, u, x, v, e)) return TJ_OK;
    int bias = bias_added(p, &p->nodes[e], x, pv->shape[0], pv->shape[1]);
    if (bias < 0) return TJ_OK;
    int sum = p->nodes[e].outs[0], f = tj_plan_sole_user(u, sum);
    bool relu = f >= 0 && p->values[sum].n_views == 0 && relu_of(p, &p->nodes[f], sum) && !tj_plan_writes_between(p, e, f);
    int last = relu ? f : e;
    if (tj_plan_writes_between(p, i, last)) return TJ_OK; /* the product's reads move to the last step */
    tj_garg *args = tj_pool_alloc(p->pool, sizeof(tj_garg) * 6);
    if (!args) return TJ_ERR_OUT_OF_MEMORY;
    memcpy(args, n->args, sizeof(tj_garg) * 4);
    args[4] = (tj_garg){.kind = TJ_GA_VALUE, .u.v = bias};
    args[5] = (tj_garg){.kind = TJ_GA_INT, .u.i = relu};
    tj_pnode *l = &p->nodes[last];
    l->label = relu ? "aten::_to_copy + aten::bmm + aten::add.Tensor + aten::maximum"
                    : "aten::_to_copy + aten::bmm + aten::add.Tensor";
    l->op = n->op; /* a product to the memory planner: its result never goes over a dying input */
    l->kernel = tj_kernel_bmm_gathered_epilogue;
    l->args = args;
    l->nargs = 6;
    l->nlist = 0;
    l->flops = n->flops;
    l->bytes += n->bytes + (relu ? p->nodes[e].bytes : 0);
    for (int w = x; w != v; w = p->values[w].base) {
        p->nodes[p->values[w].node].fused = true;
        p->values[w].kind = TJ_PV_UNUSED;
    }
    p->values[v].kind = TJ_PV_UNUSED;
    p->values[v].n_views = 0;
    n->is_step = false;
    n->fused = true;
    if (relu) {
        p->nodes[e].is_step = false;
        p->nodes[e].fused = true;
        p->values[sum].kind = TJ_PV_UNUSED;
    }
    p->stats.n_fused += relu ? 2 : 1;
    *step = last;
    return TJ_OK;
}

/* Gathered step `step` (not transposed) whose view, read by copy node c
 * before the fusion, is over a zero-padded buffer, zeros + slice_scatter
 * of an input x [N, C, H, W] (one per padded dim; [N, C, L]), that nothing
 * else reads: the step reads x and pads each item's frames itself
 * (tj_kernel_bmm_gathered_padded), and the padding's steps leave the
 * plan (the buffer stays as the step's scratch result unless the window
 * route is foreseen). Nothing otherwise (a training step's weight gradient
 * reads the buffer too). */
static tj_status absorb_padding(tj_plan *p, const tj_plan_uses *u, int step, int c)
{
    tj_pnode *n = &p->nodes[step];
    int sv = n->args[1].u.v;
    const tj_pvalue *ps = &p->values[sv];
    int r = ps->kind == TJ_PV_VIEW ? ps->root : sv, src, dim, src2, dim2 = -1;
    const tj_pvalue *pr = &p->values[r];
    if (pr->kind != TJ_PV_ARENA || (ps->kind == TJ_PV_VIEW && ps->abs_offset) || pr->node < 0 ||
        (pr->ndim != 3 && pr->ndim != 4) || !tj_plan_sole_view_chain(p, u, sv, r, c))
        return TJ_OK;
    int64_t lo, lo2 = 0;
    int first = pr->node, second = -1;
    if (!tj_plan_zero_pad(p, first, &src, &dim, &lo)) return TJ_OK;
    const tj_pvalue *py = &p->values[src];
    if (py->kind == TJ_PV_ARENA && py->node >= 0 && py->n_views == 0 && tj_plan_sole_user(u, src) == first &&
        tj_plan_zero_pad(p, py->node, &src2, &dim2, &lo2) && dim2 != dim) {
        second = first;
        first = py->node;
        src = src2;
    }
    const tj_pvalue *x = &p->values[src];
    for (int d = 0; d < pr->ndim; d++)
        if (d != dim && d != dim2 && x->shape[d] != pr->shape[d]) return TJ_OK;
    if (tj_plan_writes_between(p, first, step)) return TJ_OK; /* x is read at the step */
    /* {Hp, Wp, top, left} over the last two dims ([N, C, L]: one row each) */
    int64_t *geo = tj_pool_alloc(p->pool, sizeof(int64_t) * (size_t)(2 + 2 * ps->ndim));
    int64_t *pad = tj_pool_alloc(p->pool, sizeof(int64_t) * 4);
    tj_garg *args = tj_pool_alloc(p->pool, sizeof(tj_garg) * 8);
    if (!geo || !pad || !args) return TJ_ERR_OUT_OF_MEMORY;
    bool two = pr->ndim == 4;
    pad[0] = two ? pr->shape[2] : 1;
    pad[1] = pr->shape[pr->ndim - 1];
    pad[2] = pad[3] = 0;
    pad[dim == pr->ndim - 1 ? 3 : 2] = lo;
    if (second >= 0) pad[dim2 == pr->ndim - 1 ? 3 : 2] = lo2;
    geo[0] = ps->ndim;
    for (int d = 0; d < ps->ndim; d++) geo[1 + d] = ps->shape[d], geo[1 + ps->ndim + d] = ps->strides[d];
    geo[1 + 2 * ps->ndim] = ps->kind == TJ_PV_VIEW ? ps->rel_offset : 0;
    bool epilogue = n->kernel == tj_kernel_bmm_gathered_epilogue;
    memcpy(args, n->args, sizeof(tj_garg) * 4);
    args[1] = (tj_garg){.kind = TJ_GA_VALUE, .u.v = src};
    args[4] = epilogue ? n->args[4] : (tj_garg){.kind = TJ_GA_NONE};
    args[5] = epilogue ? n->args[5] : (tj_garg){.kind = TJ_GA_INT, .u.i = 0};
    args[6] = (tj_garg){.kind = TJ_GA_INTS, .n = 2 + 2 * ps->ndim, .u.ints = geo};
    args[7] = (tj_garg){.kind = TJ_GA_INTS, .n = 4, .u.ints = pad};
    n->label = !epilogue ? "aten::slice_scatter + aten::_to_copy + aten::bmm"
               : n->args[5].u.i ? "aten::slice_scatter + aten::_to_copy + aten::bmm + aten::add.Tensor + aten::maximum"
                                : "aten::slice_scatter + aten::_to_copy + aten::bmm + aten::add.Tensor";
    int *outs = tj_pool_alloc(p->pool, sizeof(int) * 2);
    if (!outs) return TJ_ERR_OUT_OF_MEMORY;
    outs[0] = n->outs[0];
    const tj_pvalue *pa = &p->values[n->args[0].u.v];
    bool window = tj_bmm_gathered_on_window_route(pa->ndim, pa->shape, pa->strides, ps->ndim, ps->shape, ps->strides,
                                                  (int)n->args[3].u.i);
    outs[1] = window ? -1 : r; /* the buffer: the step's scratch where the kernel makes it */
    n->kernel = tj_kernel_bmm_gathered_padded;
    n->args = args;
    n->nargs = 8;
    n->outs = outs;
    n->nout = 2;
    for (int v = sv; v != r; v = p->values[v].base) { /* the views of the buffer */
        p->nodes[p->values[v].node].fused = true;
        p->values[v].kind = TJ_PV_UNUSED;
    }
    for (int q = first; q >= 0; q = q == first ? second : -1) {
        p->nodes[q].is_step = false;
        p->nodes[q].fused = true;
        if (window || p->nodes[q].outs[0] != r) p->values[p->nodes[q].outs[0]].kind = TJ_PV_UNUSED;
    }
    p->values[r].node = step;
    p->values[r].n_views = 0;
    return TJ_OK;
}

tj_status tj_plan_fuse_gathered_operands(tj_plan *p)
{
    tj_plan_uses u;
    tj_status st = tj_plan_uses_init(p, &u);
    for (int i = 0; i < p->n_nodes && st == TJ_OK; i++) {
        tj_pnode *n = &p->nodes[i];
        if (!n->is_step || n->op != TJ_OPS(bmm) || n->label || n->args[1].kind != TJ_GA_VALUE) continue;
        bool transposed;
        int c = sole_copy(p, &u, i, &transposed);
        if (c < 0 || tj_plan_writes_between(p, c, i)) continue;
        int s = p->nodes[c].args[0].u.v, b = n->args[1].u.v;
        const tj_pvalue *ps = &p->values[s], *pb = &p->values[b];
        int s1 = group_end(ps->shape, ps->ndim, 0, pb->shape[0]);
        int s2 = s1 < 0 ? -1 : group_end(ps->shape, ps->ndim, s1, pb->shape[transposed ? 2 : 1]);
        if (s2 < 0 || s2 >= ps->ndim) continue; /* the view's last group needs a dim of its own */
        tj_garg *args = tj_pool_alloc(p->pool, sizeof(tj_garg) * 4);
        if (!args) {
            st = TJ_ERR_OUT_OF_MEMORY;
            break;
        }
        args[0] = n->args[0];
        args[1] = (tj_garg){.kind = TJ_GA_VALUE, .u.v = s};
        args[2] = (tj_garg){.kind = TJ_GA_INT, .u.i = s1};
        args[3] = (tj_garg){.kind = TJ_GA_INT, .u.i = s2};
        n->args = args;
        n->nargs = 4;
        n->kernel = transposed ? tj_kernel_bmm_gathered_t : tj_kernel_bmm_gathered;
        n->label = "aten::_to_copy + aten::bmm"; /* bytes: the view's instead of the copy's, as many */
        p->nodes[c].is_step = false;
        p->nodes[c].fused = true;
        int r = p->nodes[c].outs[0];
        for (int v = b; v != r; v = p->values[v].base) { /* the views between */
            p->nodes[p->values[v].node].fused = true;
            p->values[v].kind = TJ_PV_UNUSED;
        }
        p->values[r].kind = TJ_PV_UNUSED;
        p->values[r].n_views = 0;
        p->stats.n_gathered++;
        int step = i;
        if (!transposed) st = absorb_bias(p, &u, i, &step);
        if (!transposed && st == TJ_OK) st = absorb_padding(p, &u, step, c);
    }
    if (u.count) tj_plan_uses_free(&u);
    tj_plan_renumber_steps(p);
    return st;
}
