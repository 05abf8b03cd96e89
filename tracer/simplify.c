/* Identity elimination at compile time: a multiplication by one or a
 * division by one (aten::mul.Tensor with a plan constant whose every
 * element is 1, aten::mul.Scalar by 1, aten::div.Tensor by such a
 * constant, div.Scalar by 1) whose result has its operand's dtype and
 * shape becomes a strided alias of that operand, as Inductor simplifies
 * these calls away. The core table's addmm (torch._decomp's: alpha * mm +
 * beta * self) leaves two of them per linear layer. x * 1 and x / 1 equal
 * x bit for bit in IEEE arithmetic (signed zeros and infinities included;
 * a signalling nan would come out quiet).
 *
 * Not done in a plan with in-place or user operators, which could write
 * through the alias into the operand; for a graph output, which must stay a
 * tensor of its own (write-back targets, direct outputs); for a result read
 * through views (they would need re-rooting); nor where a reader would see
 * another layout than the contiguous result it had: the operand must be
 * contiguous as compiled, and when it lives in an input (whose strides may
 * change at run time), every reader must be elementwise, whose values do
 * not depend on layout (a GEMM's sum order does). */
#include <string.h>

#include "plan_internal.h"

/* Whether argument a is a plan constant (folded or a graph constant) or a
 * Scalar whose every element is one. */
static bool is_one(const tj_plan *p, const tj_garg *a)
{
    if (a->kind == TJ_GA_INT) return a->u.i == 1;
    if (a->kind == TJ_GA_FLOAT) return a->u.f == 1.0;
    if (a->kind != TJ_GA_VALUE || p->values[a->u.v].kind != TJ_PV_CONSTANT) return false;
    const tj_tensor *t = p->values[a->u.v].constant;
    if (t->fake || !t->storage) return false; /* a fake constant: no values to look at */
    int64_t idx[TJ_MAX_DIMS] = {0};
    for (int64_t i = 0; i < t->numel; i++) {
        int64_t off = t->offset;
        for (int d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
        const char *e = (const char *)t->storage->data + off * (int64_t)tj_dtype_bytes(t->dtype);
        bool one = t->dtype == TJ_FLOAT32 ? *(const float *)(const void *)e == 1.0f
                   : t->dtype == TJ_FLOAT64 ? *(const double *)(const void *)e == 1.0
                   : t->dtype == TJ_INT64   ? *(const int64_t *)(const void *)e == 1
                                            : *(const uint8_t *)e != 0;
        if (!one) return false;
        for (int d = t->ndim - 1; d >= 0 && ++idx[d] == t->shape[d]; d--) idx[d] = 0;
    }
    return true;
}

/* The operand node n passes through unchanged, or -1. */
static int identity_operand(const tj_plan *p, const tj_pnode *n)
{
    const tj_op *op = n->op;
    bool mul = op == TJ_OPS(mul_Tensor) || op == TJ_OPS(mul_Scalar);
    bool div = op == TJ_OPS(div_Tensor) || op == TJ_OPS(div_Scalar);
    if ((!mul && !div) || n->nargs != 2 || n->nout != 1 || n->outs[0] < 0) return -1;
    int keep = -1;
    if (n->args[0].kind == TJ_GA_VALUE && is_one(p, &n->args[1])) keep = n->args[0].u.v;
    else if (mul && n->args[1].kind == TJ_GA_VALUE && is_one(p, &n->args[0])) keep = n->args[1].u.v;
    if (keep < 0) return -1;
    const tj_pvalue *x = &p->values[keep], *r = &p->values[n->outs[0]];
    bool same = x->kind != TJ_PV_SAME && x->kind != TJ_PV_UNUSED && x->dtype == r->dtype && x->ndim == r->ndim &&
                memcmp(x->shape, r->shape, sizeof(int64_t) * (size_t)r->ndim) == 0;
    return same ? keep : -1;
}

/* Whether value x is laid out as a contiguous tensor of its shape. */
static bool contiguous(const tj_pvalue *x)
{
    int64_t want[TJ_MAX_DIMS];
    tj_contiguous_strides(x->ndim, x->shape, want);
    for (int d = 0; d < x->ndim; d++)
        if (x->shape[d] != 1 && x->strides[d] != want[d]) return false;
    return true;
}

/* Whether every node reading value v is elementwise. */
static bool read_elementwise(const tj_plan *p, int v)
{
    for (int i = 0; i < p->n_nodes; i++) {
        const tj_pnode *n = &p->nodes[i];
        if (n->folded) continue;
        for (int a = 0; a < n->nargs; a++)
            for (int k = 0; k < tj_garg_n_values(&n->args[a]); k++)
                if (tj_garg_value_at(&n->args[a], k) == v && !tj_plan_is_elementwise(n->op)) return false;
    }
    return true;
}

/* Whether readers of result r may read operand x in its place. */
static bool layout_safe(const tj_plan *p, int r, int x)
{
    const tj_pvalue *o = &p->values[x];
    if (p->values[r].n_views > 0 || !contiguous(o)) return false;
    return p->values[o->root].kind != TJ_PV_INPUT || read_elementwise(p, r);
}

/* Result value v becomes an alias of x, with x's geometry. */
static void alias(tj_plan *p, int v, int x)
{
    tj_pvalue *r = &p->values[v];
    const tj_pvalue *b = &p->values[x];
    r->kind = TJ_PV_VIEW;
    r->base = x;
    r->root = b->root;
    memcpy(r->strides, b->strides, sizeof r->strides);
    r->offset = b->offset;
    r->rel_offset = b->offset - p->values[b->root].offset;
    r->abs_offset = b->abs_offset;
    p->values[b->root].n_views++;
}

tj_status tj_plan_simplify_identities(tj_plan *p)
{
    if (tj_plan_writes_between(p, -1, p->n_nodes)) return TJ_OK;
    bool *is_output = tj_alloc((size_t)p->n_values + 1);
    if (!is_output) return tj_oom("tj_compile", (size_t)p->n_values + 1);
    memset(is_output, 0, (size_t)p->n_values + 1);
    for (int k = 0; k < p->n_outputs; k++) is_output[p->output_values[k]] = true;
    for (int i = 0; i < p->n_nodes; i++) {
        tj_pnode *n = &p->nodes[i];
        if (!n->is_step) continue;
        int x = identity_operand(p, n);
        if (x < 0 || is_output[n->outs[0]] || !layout_safe(p, n->outs[0], x)) continue;
        alias(p, n->outs[0], x);
        n->is_step = false;
        n->identity = true;
        p->stats.n_views++;
        p->stats.n_identities++;
    }
    tj_free(is_output, (size_t)p->n_values + 1);
    tj_plan_renumber_steps(p);
    return TJ_OK;
}
