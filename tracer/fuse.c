/* Epilogue fusion: an elementwise operator that is the only reader of a
 * product's result (relu and gelu after a Linear layer, the residual add
 * after a projection, the bias add after the mm or bmm of a decomposed
 * linear) runs inside the product's step, on each part of the product as
 * the GEMM finishes it (runtime/op_linalg.h, tj_kernel_addmm_epilogue), as
 * Inductor fuses pointwise epilogues into its GEMM templates and oneDNN
 * applies post-ops. The operator's own pass over memory goes away, and at
 * 2+ threads so does its reading of parts another core wrote (the two vCPUs
 * here share no cache). The products: addmm, mm, and bmm of one batch item
 * (the core table's linear: a [1, m, k] @ [1, k, n] bmm, then alpha * it +
 * beta * bias with alpha and beta 1, the two multiplications by one made
 * aliases by simplify.c); an mm or bmm runs as an addmm with beta 0, which
 * computes the same product. The add's other operand has the result's
 * shape or is one row of n broadcast over it (the bias); its dtype is the
 * product's, so the step computes what the add kernel would, bit for bit.
 *
 * The fused step takes the operator's place in the schedule, so every value
 * it reads is ready; the product's reads move there, so no in-place or user
 * operator may come between (tj_plan_writes_between). It is a product to the
 * memory planner (its result never goes over a dying input: the GEMM writes
 * all of it before the epilogue reads the add's other operand).
 *
 * Also here: the use counts, the reshape test and the zero padding test
 * the fusion passes match on. */
#include <stdio.h>
#include <string.h>

#include "plan_internal.h"
#include "runtime/op_linalg.h"

tj_status tj_plan_uses_init(const tj_plan *p, tj_plan_uses *u)
{
    u->bytes = sizeof(int) * 2 * (size_t)(p->n_values + 1);
    u->count = tj_alloc(u->bytes);
    if (!u->count) return tj_oom("tj_compile", u->bytes);
    memset(u->count, 0, u->bytes);
    u->user = u->count + p->n_values + 1;
    for (int i = 0; i < p->n_nodes; i++) {
        const tj_pnode *n = &p->nodes[i];
        if (n->folded) continue;
        for (int a = 0; a < n->nargs; a++) {
            for (int k = 0; k < tj_garg_n_values(&n->args[a]); k++) {
                int v = tj_garg_value_at(&n->args[a], k);
                if (v < 0) continue;
                u->count[v]++;
                u->user[v] = i;
            }
        }
    }
    for (int k = 0; k < p->n_outputs; k++) {
        u->count[p->output_values[k]]++;
        u->user[p->output_values[k]] = -1;
    }
    return TJ_OK;
}

void tj_plan_uses_free(tj_plan_uses *u) { tj_free(u->count, u->bytes); }

bool tj_plan_node_may_write(const tj_plan *p, const tj_pnode *n)
{
    if (!tj_op_is_builtin(n->op) || n->op->is_inplace) return true;
    for (int k = 0; k < n->nout; k++)
        if (n->outs[k] >= 0 && p->values[n->outs[k]].kind == TJ_PV_SAME) return true;
    return false;
}

bool tj_plan_writes_between(const tj_plan *p, int from, int to)
{
    for (int i = from + 1; i < to; i++)
        if (!p->nodes[i].folded && tj_plan_node_may_write(p, &p->nodes[i])) return true;
    return false;
}

bool tj_plan_sole_view_chain(const tj_plan *p, const tj_plan_uses *u, int x, int r, int reader)
{
    int links = 0;
    for (int v = x;; v = p->values[v].base) {
        if (tj_plan_sole_user(u, v) != reader) return false;
        if (v == r) break;
        reader = p->values[v].node;
        if (reader < 0 || p->nodes[reader].is_step || p->nodes[reader].nout != 1) return false;
        links++;
    }
    return p->values[r].n_views == links;
}

static bool same_shape(const tj_pvalue *a, const tj_pvalue *b)
{
    return a->ndim == b->ndim && memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) == 0;
}

bool tj_plan_whole_in_order(const tj_plan *p, int x, int r)
{
    if (x == r) return true;
    const tj_pvalue *v = &p->values[x];
    if (v->kind != TJ_PV_VIEW || v->root != r || v->rel_offset != 0 || v->numel != p->values[r].numel) return false;
    int64_t stride = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        if (v->shape[d] != 1 && v->strides[d] != stride) return false;
        stride *= v->shape[d];
    }
    return true;
}

/* Value w, a view of v, holds all of v in order, in rows of n. */
static bool reshapes(const tj_plan *p, int w, int v, int64_t n)
{
    const tj_pvalue *pw = &p->values[w];
    return w != v && pw->ndim >= 1 && pw->shape[pw->ndim - 1] == n && tj_plan_whole_in_order(p, w, v);
}

bool tj_plan_garg_is_one(const tj_garg *a)
{
    return (a->kind == TJ_GA_INT && a->u.i == 1) || (a->kind == TJ_GA_FLOAT && a->u.f == 1.0);
}

/* Whether value r is one row of o's last dim broadcast over o (every
 * other dim of r 1). */
static bool broadcast_row(const tj_pvalue *r, const tj_pvalue *o)
{
    if (r->ndim < 1 || r->ndim > o->ndim || r->shape[r->ndim - 1] != o->shape[o->ndim - 1]) return false;
    for (int d = 0; d < r->ndim - 1; d++)
        if (r->shape[d] != 1) return false;
    return true;
}

/* Which epilogue node e makes of value x (the product's result as e
 * reads it), and at which argument; -1 when it cannot be fused. */
static int epilogue_kind(const tj_plan *p, const tj_pnode *e, int x, int *slot)
{
    if (!e->is_step || e->nout != 1 || e->outs[0] < 0 || !tj_op_is_builtin(e->op)) return -1;
    const tj_pvalue *o = &p->values[e->outs[0]];
    if (o->kind != TJ_PV_ARENA || o->dtype != TJ_FLOAT32 || o->numel != p->values[x].numel) return -1;
    *slot = 0;
    if (e->op == TJ_OPS(relu) && e->args[0].u.v == x) return TJ_ADDMM_RELU;
    if (e->op == TJ_OPS(gelu) && e->args[0].u.v == x) return TJ_ADDMM_GELU;
    if (e->op != TJ_OPS(add_Tensor) || !tj_plan_garg_is_one(&e->args[2])) return -1;
    *slot = e->args[0].u.v == x ? 0 : 1;
    const tj_garg *other = &e->args[1 - *slot];
    if (e->args[*slot].u.v != x || other->kind != TJ_GA_VALUE) return -1;
    const tj_pvalue *r = &p->values[other->u.v];
    return r->dtype == TJ_FLOAT32 && (same_shape(r, o) || broadcast_row(r, o)) ? TJ_ADDMM_ADD : -1;
}

/* The product's arguments as addmm's: an mm or bmm's as self None, beta 0
 * (self never read) and alpha 1. */
static int product_args(const tj_pnode *a, tj_garg *args)
{
    if (a->op == TJ_OPS(addmm)) {
        if (args) memcpy(args, a->args, sizeof(tj_garg) * (size_t)a->nargs);
        return a->nargs;
    }
    if (args) {
        args[0] = (tj_garg){.kind = TJ_GA_NONE};
        args[1] = a->args[0];
        args[2] = a->args[1];
        args[3] = (tj_garg){.kind = TJ_GA_INT, .u.i = 0};
        args[4] = (tj_garg){.kind = TJ_GA_INT, .u.i = 1};
    }
    return 5;
}

/* Step `e` becomes product node `mm` followed by its own operator. */
static tj_status fuse(tj_plan *p, int mm, int e, int kind, int slot)
{
    tj_pnode *a = &p->nodes[mm], *n = &p->nodes[e];
    int np = product_args(a, NULL), nargs = np + 2 + n->nargs;
    tj_garg *args = tj_pool_alloc(p->pool, sizeof(tj_garg) * (size_t)nargs);
    if (!args) return TJ_ERR_OUT_OF_MEMORY;
    product_args(a, args);
    args[np] = (tj_garg){.kind = TJ_GA_INT, .u.i = kind};
    args[np + 1] = (tj_garg){.kind = TJ_GA_INT, .u.i = slot};
    memcpy(args + np + 2, n->args, sizeof(tj_garg) * (size_t)n->nargs);
    args[np + 2 + slot] = (tj_garg){.kind = TJ_GA_NONE};
    size_t len = strlen(a->op->name) + strlen(n->op->name) + 4;
    char *label = tj_pool_alloc(p->pool, len);
    if (!label) return TJ_ERR_OUT_OF_MEMORY;
    snprintf(label, len, "%s + %s", a->op->name, n->op->name);
    n->label = label;
    n->op = a->op;
    n->kernel = tj_kernel_addmm_epilogue;
    n->args = args;
    n->nargs = nargs;
    n->flops = a->flops;
    n->bytes += a->bytes;
    a->is_step = false;
    a->fused = true;
    p->values[a->outs[0]].kind = TJ_PV_UNUSED;
    p->stats.n_fused++;
    return TJ_OK;
}

/* Whether node a is a float32 product whose result an epilogue may take:
 * addmm, mm, or bmm of one batch item (our GEMM takes an epilogue on one
 * matrix). */
static bool takes_epilogue(const tj_plan *p, const tj_pnode *a)
{
    if (!a->is_step || a->label || a->nout != 1 || a->outs[0] < 0) return false;
    const tj_pvalue *pv = &p->values[a->outs[0]];
    if (pv->kind != TJ_PV_ARENA || pv->dtype != TJ_FLOAT32) return false;
    return a->op == TJ_OPS(addmm) || a->op == TJ_OPS(mm) || (a->op == TJ_OPS(bmm) && pv->shape[0] == 1);
}

tj_status tj_plan_fuse_epilogues(tj_plan *p)
{
    tj_plan_uses u;
    tj_status st = tj_plan_uses_init(p, &u);
    for (int i = 0; i < p->n_nodes && st == TJ_OK; i++) {
        const tj_pnode *a = &p->nodes[i];
        if (!takes_epilogue(p, a)) continue;
        int v = a->outs[0], x = v, e = tj_plan_sole_user(&u, v);
        const tj_pvalue *pv = &p->values[v];
        /* views between them: a reshape (linear on [.., k]; bmm's [1, m, n]
         * as [m, n]), an alias (a multiplication by one, simplify.c) */
        while (e >= 0 && !p->nodes[e].is_step && !p->nodes[e].folded && p->nodes[e].nout == 1 &&
               p->nodes[e].outs[0] >= 0) {
            x = p->nodes[e].outs[0];
            e = tj_plan_sole_user(&u, x);
        }
        if (e < 0 || (x != v && (!reshapes(p, x, v, pv->shape[pv->ndim - 1]) || !tj_plan_sole_view_chain(p, &u, x, v, e))))
            continue;
        int slot, kind = epilogue_kind(p, &p->nodes[e], x, &slot);
        if (kind < 0 || tj_plan_writes_between(p, i, e)) continue; /* the product's reads move to e */
        for (int w = x; w != v; w = p->values[w].base) {
            p->nodes[p->values[w].node].fused = true;
            p->values[w].kind = TJ_PV_UNUSED;
        }
        p->values[v].n_views = 0;
        st = fuse(p, i, e, kind, slot);
    }
    if (u.count) tj_plan_uses_free(&u);
    tj_plan_renumber_steps(p);
    return st;
}

bool tj_plan_zero_pad(const tj_plan *p, int q, int *src, int *dim, int64_t *lo)
{
    const tj_pnode *n = &p->nodes[q];
    if (!n->is_step || n->label || n->op != TJ_OPS(slice_scatter) || n->nout != 1 || n->outs[0] < 0) return false;
    const tj_garg *a = n->args;
    if (a[0].kind != TJ_GA_VALUE || a[1].kind != TJ_GA_VALUE || a[2].kind != TJ_GA_INT || a[3].kind != TJ_GA_INT ||
        a[5].kind != TJ_GA_INT || a[5].u.i != 1)
        return false;
    const tj_pvalue *z = &p->values[a[0].u.v], *o = &p->values[n->outs[0]], *x = &p->values[a[1].u.v];
    int d = (int)a[2].u.i;
    if (z->kind != TJ_PV_CONSTANT || z->dtype != TJ_FLOAT32 || x->dtype != TJ_FLOAT32 || z->numel != o->numel ||
        z->ndim != o->ndim || x->ndim != o->ndim || d < 2 || d >= o->ndim || a[3].u.i < 0 ||
        a[3].u.i + x->shape[d] > o->shape[d] || !tj_tensor_is_contiguous(z->constant))
        return false;
    const uint32_t *bits = (const uint32_t *)(const void *)tj_tensor_ptr(z->constant);
    for (int64_t e = 0; e < z->numel; e++)
        if (bits[e]) return false;
    *src = a[1].u.v, *dim = d, *lo = a[3].u.i;
    return true;
}
