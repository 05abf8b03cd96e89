/* Zero padding in one pass: the core table pads a convolution's input as
 * zeros + one slice_scatter per padded dim (decomps/windows.c, tj_dc_pad),
 * and each slice_scatter step copies its zeros and then its source into
 * place, so a 2-d padding writes the buffer four times and reads it twice
 * more. When the buffer is not absorbed into its only reader's product
 * (tracer/fuse_gather.c, absorb_padding: this pass runs after it), as in a
 * training step where the weight gradient's product reads it too, the
 * chain runs as one step writing each element of the buffer once, zeros at
 * the borders and the source copied in between (tj_kernel_zero_padded).
 *
 * The chain: on [N, C, H, W] or [N, C, L], a zero padding slice_scatter
 * (tj_plan_zero_pad: step 1 into +0.0 zeros; non-zero fills and other
 * steps stay as they are) of x, and for a 4-d buffer possibly a second one
 * along the other of the last two dims whose source is the first's result,
 * which nothing else reads. The step takes the last slice_scatter's place,
 * so x's read moves there: no write may come between. The bits are the
 * slice_scatters' (a copy). */
#include "plan_internal.h"
#include "runtime/op_nn.h"

/* Node i's source x, when it is the result of another zero padding along
 * another dim that only i reads (whose node goes in *first, where x's pad
 * in *dim2, *lo2); else -1 in *first. */
static int chain_start(const tj_plan *p, const tj_plan_uses *u, int i, int src, int dim, int *dim2, int64_t *lo2,
                       int *first)
{
    const tj_pvalue *px = &p->values[src];
    int inner;
    *first = -1;
    if (px->kind != TJ_PV_ARENA || px->node < 0 || px->n_views != 0 || tj_plan_sole_user(u, src) != i ||
        !tj_plan_zero_pad(p, px->node, &inner, dim2, lo2) || *dim2 == dim || tj_plan_writes_between(p, px->node, i))
        return src;
    *first = px->node;
    return inner;
}

/* Zero padding node i (into a buffer of rank 3 or 4) and the one before it
 * in its chain, if any, become one step. */
static tj_status fuse_chain(tj_plan *p, const tj_plan_uses *u, int i, int x, int dim, int64_t lo)
{
    tj_pnode *n = &p->nodes[i];
    const tj_pvalue *o = &p->values[n->outs[0]];
    int dim2 = -1, first;
    int64_t lo2 = 0;
    x = chain_start(p, u, i, x, dim, &dim2, &lo2, &first);
    int64_t *at = tj_pool_alloc(p->pool, sizeof(int64_t) * 2);
    tj_garg *args = tj_pool_alloc(p->pool, sizeof(tj_garg) * 2);
    if (!at || !args) return TJ_ERR_OUT_OF_MEMORY;
    at[0] = at[1] = 0; /* {top, left} */
    at[dim == o->ndim - 1] = lo;
    if (first >= 0) at[dim2 == o->ndim - 1] = lo2;
    args[0] = (tj_garg){.kind = TJ_GA_VALUE, .u.v = x};
    args[1] = (tj_garg){.kind = TJ_GA_INTS, .n = 2, .u.ints = at};
    n->label = "aten::slice_scatter (padded)";
    n->kernel = tj_kernel_zero_padded;
    n->args = args;
    n->nargs = 2;
    n->nlist = 0;
    n->bytes = (double)(p->values[x].numel + o->numel) * sizeof(float); /* x read, the buffer written once */
    if (first >= 0) {
        p->nodes[first].is_step = false;
        p->nodes[first].fused = true;
        p->values[p->nodes[first].outs[0]].kind = TJ_PV_UNUSED;
        p->stats.n_fused++;
    }
    return TJ_OK;
}

tj_status tj_plan_fuse_zero_padding(tj_plan *p)
{
    tj_plan_uses u;
    tj_status st = tj_plan_uses_init(p, &u);
    /* from the end: a chain's last node comes first and takes the one before */
    for (int i = p->n_nodes - 1; i >= 0 && st == TJ_OK; i--) {
        int x, dim;
        int64_t lo;
        if (!tj_plan_zero_pad(p, i, &x, &dim, &lo)) continue;
        int nd = p->values[p->nodes[i].outs[0]].ndim;
        if (nd == 3 || nd == 4) st = fuse_chain(p, &u, i, x, dim, lo);
    }
    if (u.count) tj_plan_uses_free(&u);
    tj_plan_renumber_steps(p);
    return st;
}
