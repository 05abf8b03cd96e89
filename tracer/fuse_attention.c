/* Attention fusion: attention written with matmul, as nn.Module code and
 * WORKLOADS.md's models write it,
 *
 *     s = q @ k^T * scale;  s = s.masked_fill(mask, -inf);  p = softmax(s, -1);  o = p @ v
 *
 * reaches the plan as make_fx records it for [..., L, E] operands: clone
 * (materialise q, k^T, v), bmm, mul.Scalar (or div.Scalar), masked_fill.Scalar,
 * _softmax, bmm, with views in between. When every intermediate is read only by the
 * next step, the sequence runs as one step of the fused attention kernel
 * (runtime/op_nn.h, tj_kernel_fused_attention): no [.., L, S] score tensor,
 * no copies of q, k and v, and causal masks skip the keys they hide, as
 * Inductor's fuse_attention pattern turns such code into
 * scaled_dot_product_attention. Its online softmax rounds differently: the
 * results are within float rounding of the operators', not bit-equal. */
#include <math.h>
#include <string.h>

#include "plan_internal.h"
#include "runtime/op_nn.h"

#define MAX_CHAIN 8

/* Nodes a match removes from the run. */
typedef struct match {
    int nodes[8 * (MAX_CHAIN + 1)];
    int n;
} match;

static bool live_view_node(const tj_pnode *n) { return !n->is_step && !n->folded && !n->fused && n->nout == 1; }

/* From ARENA value r, follows the views that are each the only reader of
 * the value before, to the step node reading the last one; that step must
 * read it as all of r in r's element order. Records the view nodes in m.
 * Returns the step node, or -1. */
static int sole_reader(const tj_plan *p, const tj_plan_uses *u, int r, int read_as, match *m)
{
    int x = r;
    for (int hops = 0; hops < MAX_CHAIN; hops++) {
        int n = tj_plan_sole_user(u, x);
        if (n < 0) return -1;
        const tj_pnode *node = &p->nodes[n];
        if (node->is_step) return x == read_as && tj_plan_whole_in_order(p, x, r) ? n : -1;
        if (!live_view_node(node) || node->outs[0] < 0 || p->values[node->outs[0]].root != r) return -1;
        m->nodes[m->n++] = n;
        x = node->outs[0];
    }
    return -1;
}

/* The step node making value v when it is a block of its own and op is
 * that node's operator; else -1. */
static int made_by(const tj_plan *p, int v, const tj_op *op)
{
    const tj_pvalue *pv = &p->values[v];
    if (pv->kind != TJ_PV_ARENA || pv->node < 0) return -1;
    const tj_pnode *n = &p->nodes[pv->node];
    return n->is_step && !n->label && n->op == op && n->outs[0] == v ? pv->node : -1;
}

/* The operand to pass for value x, which step `reader` reads: the input of
 * the clone whose result x is all of (through views; the clone then leaves
 * the run), or x itself. */
static int operand(const tj_plan *p, const tj_plan_uses *u, int x, int reader, match *m)
{
    int c = p->values[x].root, cn = made_by(p, c, TJ_OPS(clone));
    if (cn < 0 || p->nodes[cn].args[0].kind != TJ_GA_VALUE) return x;
    match tried = *m;
    if (sole_reader(p, u, c, x, &tried) != reader) return x;
    int src = p->nodes[cn].args[0].u.v;
    const tj_pvalue *sv = &p->values[src], *cv = &p->values[c];
    if (sv->ndim != cv->ndim || memcmp(sv->shape, cv->shape, sizeof(int64_t) * (size_t)sv->ndim)) return x;
    *m = tried;
    m->nodes[m->n++] = cn;
    return src;
}

/* The value a step node reads as its argument `a` (a tensor), or -1. */
static int arg_value(const tj_pnode *n, int a)
{
    return a < n->nargs && n->args[a].kind == TJ_GA_VALUE ? n->args[a].u.v : -1;
}

static bool is_minus_inf(const tj_garg *a) { return a->kind == TJ_GA_FLOAT && isinf(a->u.f) && a->u.f < 0; }

static int64_t batch_numel(const tj_pvalue *v)
{
    int64_t n = 1;
    for (int d = 0; d < v->ndim - 2; d++) n *= v->shape[d];
    return n;
}

/* q [.., L, E], k^T [.., E, S], v [.., S, Ev] with one batch shape, the
 * scores s [..., L, S] with as many items, and a mask that broadcasts to
 * the operands' batch shape as it does to the scores'. */
static bool shapes_fit(const tj_pvalue *q, const tj_pvalue *kt, const tj_pvalue *v, const tj_pvalue *s,
                       const tj_pvalue *mask)
{
    int nd = q->ndim;
    size_t bytes = sizeof(int64_t) * (size_t)(nd - 2);
    if (nd < 3 || kt->ndim != nd || v->ndim != nd || memcmp(q->shape, kt->shape, bytes) ||
        memcmp(q->shape, v->shape, bytes) || q->shape[nd - 1] != kt->shape[nd - 2] ||
        kt->shape[nd - 1] != v->shape[nd - 2] || batch_numel(q) != batch_numel(s) ||
        s->shape[s->ndim - 2] != q->shape[nd - 2] || s->shape[s->ndim - 1] != kt->shape[nd - 1])
        return false;
    bool same = s->ndim == nd && memcmp(q->shape, s->shape, bytes) == 0;
    for (int d = 0; !same && d < mask->ndim - 2; d++)
        if (mask->shape[d] != 1) return false;
    return true;
}

/* Matches the sequence ending at bmm step `b2`; fills the operands. */
static bool match_attention(const tj_plan *p, const tj_plan_uses *u, int b2, int vals[5], tj_garg *scale, match *m)
{
    const tj_pnode *second = &p->nodes[b2];
    int p3 = arg_value(second, 0), v3 = arg_value(second, 1);
    if (p3 < 0 || v3 < 0) return false;
    /* p = _softmax(f, -1, false), read by the second product */
    int sm = made_by(p, p->values[p3].root, TJ_OPS(_softmax));
    if (sm < 0 || sole_reader(p, u, p->nodes[sm].outs[0], p3, m) != b2) return false;
    const tj_pnode *softmax = &p->nodes[sm];
    int f = arg_value(softmax, 0);
    if (f < 0 || softmax->args[1].kind != TJ_GA_INT || softmax->args[2].kind != TJ_GA_BOOL || softmax->args[2].u.b)
        return false;
    int64_t dim = softmax->args[1].u.i;
    if (dim != -1 && dim != p->values[f].ndim - 1) return false;
    /* f = masked_fill(s, mask, -inf) */
    int mf = made_by(p, f, TJ_OPS(masked_fill_Scalar));
    if (mf < 0 || sole_reader(p, u, f, f, m) != sm || !is_minus_inf(&p->nodes[mf].args[2])) return false;
    int mask = arg_value(&p->nodes[mf], 1), ms = arg_value(&p->nodes[mf], 0);
    /* s = scores * scale, or scores / divisor (PyTorch code's q @ k^T / sqrt(E)) */
    int mu = ms >= 0 ? made_by(p, ms, TJ_OPS(mul_Scalar)) : -1;
    bool divide = mu < 0 && ms >= 0 && (mu = made_by(p, ms, TJ_OPS(div_Scalar))) >= 0;
    if (mu < 0 || mask < 0 || p->values[mask].dtype != TJ_BOOL || sole_reader(p, u, ms, ms, m) != mf) return false;
    const tj_garg *sc = &p->nodes[mu].args[1];
    if (sc->kind != TJ_GA_FLOAT && sc->kind != TJ_GA_INT) return false;
    /* scores = bmm(q, k^T), read as [..., L, S] */
    int s4 = arg_value(&p->nodes[mu], 0);
    int b1 = s4 >= 0 ? made_by(p, p->values[s4].root, TJ_OPS(bmm)) : -1;
    if (b1 < 0 || sole_reader(p, u, p->nodes[b1].outs[0], s4, m) != mu) return false;
    int q = operand(p, u, arg_value(&p->nodes[b1], 0), b1, m);
    int kt = operand(p, u, arg_value(&p->nodes[b1], 1), b1, m);
    int v = operand(p, u, v3, b2, m);
    tj_dtype dt = p->values[q].dtype;
    if (q < 0 || kt < 0 || (dt != TJ_FLOAT32 && dt != TJ_FLOAT64) || p->values[kt].dtype != dt ||
        p->values[v].dtype != dt || !shapes_fit(&p->values[q], &p->values[kt], &p->values[v], &p->values[s4], &p->values[mask]))
        return false;
    m->nodes[m->n++] = b1;
    m->nodes[m->n++] = mu;
    m->nodes[m->n++] = mf;
    m->nodes[m->n++] = sm;
    vals[0] = q, vals[1] = kt, vals[2] = v, vals[3] = mask;
    double by = sc->kind == TJ_GA_FLOAT ? sc->u.f : (double)sc->u.i;
    /* 1 / divisor is rounded once more than the division: within the
     * rounding the online softmax already differs by */
    *scale = (tj_garg){.kind = TJ_GA_FLOAT, .u.f = divide ? 1.0 / by : by};
    return true;
}

/* Whether storage may be written between the first matched node and the
 * second product, where the fused step reads q, k, v and the mask. */
static bool writes_before(const tj_plan *p, const match *m, int b2)
{
    int first = b2;
    for (int i = 0; i < m->n; i++)
        if (m->nodes[i] < first) first = m->nodes[i];
    return tj_plan_writes_between(p, first, b2);
}

/* The second product's step becomes the fused attention; the matched nodes
 * and the values only they made leave the run. */
static tj_status rewrite(tj_plan *p, int b2, const int vals[5], tj_garg scale, const match *m)
{
    tj_pnode *n = &p->nodes[b2];
    tj_garg *args = tj_pool_alloc(p->pool, sizeof(tj_garg) * 5);
    if (!args) return TJ_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < 4; i++) args[i] = (tj_garg){.kind = TJ_GA_VALUE, .u.v = vals[i]};
    args[4] = scale;
    double flops = n->flops;
    for (int i = 0; i < m->n; i++) {
        tj_pnode *x = &p->nodes[m->nodes[i]];
        if (x->op == TJ_OPS(bmm)) flops += x->flops;
        x->is_step = false;
        x->fused = true;
        for (int k = 0; k < x->nout; k++)
            if (x->outs[k] >= 0) p->values[x->outs[k]].kind = TJ_PV_UNUSED;
    }
    n->op = TJ_OPS(scaled_dot_product_attention);
    n->kernel = tj_kernel_fused_attention;
    n->label = "fused attention (bmm .. _softmax .. bmm)";
    n->args = args;
    n->nargs = 5;
    n->nlist = 0;
    n->flops = flops;
    p->stats.n_fused_attention++;
    return TJ_OK;
}

tj_status tj_plan_fuse_attention(tj_plan *p)
{
    tj_plan_uses u;
    tj_status st = tj_plan_uses_init(p, &u);
    for (int i = 0; i < p->n_nodes && st == TJ_OK; i++) {
        const tj_pnode *n = &p->nodes[i];
        if (!n->is_step || n->label || n->op != TJ_OPS(bmm) || p->values[n->outs[0]].kind != TJ_PV_ARENA) continue;
        match m = {.n = 0};
        int vals[5];
        tj_garg scale;
        if (match_attention(p, &u, i, vals, &scale, &m) && !writes_before(p, &m, i)) st = rewrite(p, i, vals, scale, &m);
    }
    if (u.count) tj_plan_uses_free(&u);
    tj_plan_renumber_steps(p);
    return st;
}
