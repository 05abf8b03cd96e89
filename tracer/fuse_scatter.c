/* Product-scatter fusion: an aten::bmm (or aten::mm) whose result, read
 * directly or through views that keep its element order, goes only into an
 * aten::scatter_add as src, over a constant index, runs as one step that
 * computes the product a block of columns at a time into scratch in L2 and
 * scatters each block right after (runtime/op_linalg.h,
 * tj_kernel_product_scatter_add). A decomposed convolution's input
 * gradient is such a pair (decomps/conv.c: the columns W^T @ g, then
 * col2im's scatter_add into the zero-padded image): cnn's second layer's
 * 20 MB of columns no longer go to memory and back.
 *
 * The scatter's entries, in its row-major order, are the product's
 * elements in order. Its leading dims (before the scattered one) along which
 * the index does not change make scatter rows: their targets differ in
 * those coordinates, so rows never share a target and may go to different
 * threads, and every row has the same pattern of targets about its own
 * base. The index is a graph constant that graphs and plans alone hold
 * (sealed: a decomposition's col2im index, which make_fx snapshots), which
 * no step writes and the graph does not return: its values are read here
 * once, each checked against the scattered dim's size (a bad one leaves the
 * pair unfused, for scatter_add's own error at run time), and turned into
 * runs of consecutive targets per row of the product and block of columns.
 * A constant the caller holds (captured in ctx) may change between runs:
 * scatter_add reads it at each.
 *
 * scatter_add adds each target's entries in their order, and float sums
 * depend on it, so the blocks must keep that order: within a block the step
 * goes row by row, column by column (the entries' order), and the blocks
 * go first to last or last to first, whichever gives every target its
 * additions in the entries' order (checked here over every entry); when
 * neither does, the pair stays unfused. col2im needs last to first: a
 * target's later taps come from earlier columns.
 *
 * The fused step runs where the scatter_add did: the product's operands
 * must not be written between (tj_plan_writes_between), and no step may
 * write the index's storage. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "kernels/gemm.h"
#include "kernels/product_scatter.h"
#include "plan_internal.h"
#include "runtime/op_linalg.h"

/* Columns per block: the rows of a product item times the block within
 * TJ_K_PRODUCT_SCATTER_BLOCK_BYTES, in whole tiles of our GEMM kernel (64
 * columns), at least one tile. */
static int64_t block_width(int64_t m, int64_t n)
{
    int64_t w = TJ_K_PRODUCT_SCATTER_BLOCK_BYTES / ((int64_t)sizeof(float) * m) / 64 * 64;
    if (w < 64) w = 64;
    return w < n ? w : n;
}

/* The product step whose result value x is (itself, or through views each
 * read only by the next one and the last only by `reader`), all of it in
 * order; -1 when there is none. */
static int sole_product(const tj_plan *p, const tj_plan_uses *u, int x, int reader)
{
    const tj_pvalue *px = &p->values[x];
    int r = px->kind == TJ_PV_VIEW ? px->root : x;
    const tj_pvalue *pr = &p->values[r];
    if (pr->kind != TJ_PV_ARENA || pr->dtype != TJ_FLOAT32 || pr->node < 0 || !tj_plan_whole_in_order(p, x, r))
        return -1;
    if (!tj_plan_sole_view_chain(p, u, x, r, reader)) return -1;
    const tj_pnode *n = &p->nodes[pr->node];
    bool product = n->op == TJ_OPS(bmm) || n->op == TJ_OPS(mm);
    if (!n->is_step || !product || n->label || n->nout != 1 || n->outs[0] != r) return -1;
    for (int a = 0; a < 2; a++)
        if (n->args[a].kind != TJ_GA_VALUE || p->values[n->args[a].u.v].dtype != TJ_FLOAT32) return -1;
    return pr->node;
}

/* Whether a live step may write into the storage of value v (a step that
 * may write anything, reading a value of that storage). */
static bool storage_written(const tj_plan *p, int v)
{
    int root = p->values[v].root;
    for (int i = 0; i < p->n_nodes; i++) {
        const tj_pnode *n = &p->nodes[i];
        if (n->folded || !tj_plan_node_may_write(p, n)) continue;
        for (int a = 0; a < n->nargs; a++)
            for (int k = 0; k < tj_garg_n_values(&n->args[a]); k++) {
                int w = tj_garg_value_at(&n->args[a], k);
                if (w >= 0 && p->values[w].root == root) return true;
            }
    }
    return false;
}

/* Whether a graph output shares value v's storage (tj_graph_run and
 * tj_plan_context_output hand it to the caller, who may write it). */
static bool storage_returned(const tj_plan *p, int v)
{
    for (int k = 0; k < p->n_outputs; k++)
        if (p->values[p->output_values[k]].root == p->values[v].root) return true;
    return false;
}

/* The int64 elements of constant value v, laid out as v (its strides and
 * offset), or NULL: no values (a fake constant), or values that may change
 * between runs (a constant the caller holds, or one the graph returns). */
static const int64_t *constant_data(const tj_plan *p, int v)
{
    const tj_pvalue *pv = &p->values[v];
    const tj_tensor *c = p->values[pv->root].constant;
    if (p->values[pv->root].kind != TJ_PV_CONSTANT || !c || c->fake || !c->storage || !c->storage->sealed ||
        pv->dtype != TJ_INT64 || storage_returned(p, v))
        return NULL;
    return (const int64_t *)c->storage->data + pv->offset;
}

/* What the compiler knows of one candidate pair. */
typedef struct pair {
    int product, scatter;
    int64_t batch, m, n, k;
    int lead;          /* the scatter's leading dims making rows */
    int64_t rows, per_row; /* scatter rows, entries per row */
    int64_t lines, width, blocks;
    int64_t span;      /* a row's targets lie in [0, span) of out */
} pair;

/* Each entry's target in its scatter row (j in [0, per_row)), in t;
 * false when an index value is out of bounds. */
static bool row_targets(const tj_pvalue *ix, const int64_t *idx, const int64_t *ostr, int lead, int dim,
                        int64_t size, int64_t per_row, int64_t *t)
{
    int nd = ix->ndim;
    int64_t pos[TJ_MAX_DIMS] = {0}, ioff = 0, base = 0; /* base: the entry's target without its dim */
    for (int64_t j = 0; j < per_row; j++) {
        int64_t v = idx[ioff];
        if (v < 0 || v >= size) return false;
        t[j] = base + v * ostr[dim];
        for (int d = nd - 1; d >= lead; d--) { /* next position over dims [lead, nd) */
            ioff += ix->strides[d];
            if (d != dim) base += ostr[d];
            if (++pos[d] < ix->shape[d]) break;
            ioff -= ix->strides[d] * ix->shape[d];
            if (d != dim) base -= ostr[d] * ix->shape[d];
            pos[d] = 0;
        }
    }
    return true;
}

/* Whether taking the blocks in that order gives every target its additions
 * in the entries' order: each entry's place in the blocked order (block
 * rank, line, column) later than the target's previous entry's. `last`:
 * span entries of scratch. */
static bool order_kept(const pair *c, const int64_t *t, bool descending, int64_t *last)
{
    for (int64_t i = 0; i < c->span; i++) last[i] = -1;
    for (int64_t j = 0; j < c->per_row; j++) {
        int64_t line = j / c->n, col = j % c->n, blk = col / c->width;
        int64_t rank = descending ? c->blocks - 1 - blk : blk;
        int64_t key = (rank * c->lines + line) * c->n + col;
        if (key <= last[t[j]]) return false;
        last[t[j]] = key;
    }
    return true;
}

/* Runs of up to 16 consecutive targets of t[0..len) into runs; returns
 * their count. */
static int64_t make_runs(const int64_t *t, int64_t len, int64_t *runs)
{
    int64_t nr = 0;
    for (int64_t j = 0; j < len;) {
        int64_t l = 1;
        while (l < 16 && j + l < len && t[j + l] == t[j] + l) l++;
        if (runs) runs[nr] = t[j] * 16 + (l - 1);
        nr++;
        j += l;
    }
    return nr;
}

/* The step's table (TJ_PS_*), in the plan's pool, and its length in *len;
 * NULL when out of memory, or with *len -1 when it would not fit an int. */
static int64_t *make_table(tj_plan *p, const pair *c, const int64_t *t, bool descending, const int64_t *ostr,
                           const int64_t *shape, int *len)
{
    int64_t nseg = c->lines * c->blocks, nruns = 0;
    for (int64_t s = 0; s < nseg; s++) {
        int64_t line = s / c->blocks, j0 = (s % c->blocks) * c->width;
        int64_t cols = c->n - j0 < c->width ? c->n - j0 : c->width;
        nruns += make_runs(t + line * c->n + j0, cols, NULL);
    }
    int64_t total = TJ_PS_HEADER + c->rows + nseg + 1 + nruns;
    *len = -1;
    if (total > INT_MAX) return NULL;
    int64_t *tab = tj_pool_alloc(p->pool, sizeof(int64_t) * (size_t)total);
    if (!tab) return NULL;
    tab[TJ_PS_LINES] = c->lines;
    tab[TJ_PS_WIDTH] = c->width;
    tab[TJ_PS_BLOCKS] = c->blocks;
    tab[TJ_PS_DESCENDING] = descending;
    tab[TJ_PS_ROWS] = c->rows;
    int64_t *base = tab + TJ_PS_HEADER, *at = base + c->rows, *runs = at + nseg + 1;
    for (int64_t r = 0; r < c->rows; r++) { /* the row's coordinates over the lead dims */
        int64_t off = 0, q = r;
        for (int d = c->lead - 1; d >= 0; d--) {
            off += q % shape[d] * ostr[d];
            q /= shape[d];
        }
        base[r] = off;
    }
    at[0] = 0;
    for (int64_t s = 0; s < nseg; s++) {
        int64_t line = s / c->blocks, j0 = (s % c->blocks) * c->width;
        int64_t cols = c->n - j0 < c->width ? c->n - j0 : c->width;
        at[s + 1] = at[s] + make_runs(t + line * c->n + j0, cols, runs + at[s]);
    }
    *len = (int)total;
    return tab;
}

/* The product's sizes and whether our GEMM kernel computes it (as
 * compiled; the step checks again at run time). */
static bool product_fits(const tj_plan *p, pair *c)
{
    const tj_pnode *n = &p->nodes[c->product];
    const tj_pvalue *a = &p->values[n->args[0].u.v], *b = &p->values[n->args[1].u.v];
    int d = a->ndim == 3 ? 1 : 0;
    c->batch = d ? a->shape[0] : 1;
    c->m = a->shape[d];
    c->k = a->shape[d + 1];
    c->n = b->shape[d + 1];
    if (c->batch < 1 || c->m < 1 || c->k < 1 || c->n < 1) return false;
    /* as the bmm kernel reads them: in place when BLAS can, else a row-major copy */
    tj_k_mat ma = {NULL, a->strides[d], a->strides[d + 1]}, mb = {NULL, b->strides[d], b->strides[d + 1]};
    if (!tj_k_gemm_layout_ok(c->m, c->k, ma.rs, ma.cs)) ma = (tj_k_mat){NULL, c->k, 1};
    if (!tj_k_gemm_layout_ok(c->k, c->n, mb.rs, mb.cs)) mb = (tj_k_mat){NULL, c->n, 1};
    return tj_k_product_scatter_blocked(c->m, c->n, c->k, ma, mb);
}

/* Scatter rows: the src's leading dims (before dim) along which the index
 * does not change; each row's entries must be whole lines of the product
 * within one batch item. */
static bool rows_fit(const tj_pvalue *ix, int dim, pair *c)
{
    c->lead = 0;
    c->rows = 1;
    while (c->lead < dim && (ix->strides[c->lead] == 0 || ix->shape[c->lead] == 1)) c->rows *= ix->shape[c->lead++];
    c->per_row = ix->numel / c->rows;
    if (c->per_row % c->n) return false;
    c->lines = c->per_row / c->n;
    return c->m % c->lines == 0;
}

static tj_status fuse_pair(tj_plan *p, const pair *c, int64_t *table, int len)
{
    tj_pnode *s = &p->nodes[c->scatter], *b = &p->nodes[c->product];
    tj_garg *args = tj_pool_alloc(p->pool, sizeof(tj_garg) * 4);
    size_t llen = strlen(b->op->name) + strlen(s->op->name) + 4;
    char *label = tj_pool_alloc(p->pool, llen);
    if (!args || !label) return TJ_ERR_OUT_OF_MEMORY;
    snprintf(label, llen, "%s + %s", b->op->name, s->op->name);
    int src = s->args[3].u.v, r = b->outs[0];
    double src_bytes = (double)p->values[r].numel * sizeof(float);
    args[0] = b->args[0];
    args[1] = b->args[1];
    args[2] = s->args[0];
    args[3] = (tj_garg){.kind = TJ_GA_INTS, .n = len, .u.ints = table};
    s->args = args;
    s->nargs = 4;
    s->nlist = 0;
    s->kernel = tj_kernel_product_scatter_add;
    s->label = label;
    s->flops = b->flops;
    s->bytes += b->bytes - 2 * src_bytes; /* the product's result is neither written nor read */
    b->is_step = false;
    b->fused = true;
    for (int v = src; v != r; v = p->values[v].base) { /* the views between */
        p->nodes[p->values[v].node].fused = true;
        p->values[v].kind = TJ_PV_UNUSED;
    }
    p->values[r].kind = TJ_PV_UNUSED;
    p->values[r].n_views = 0;
    p->stats.n_scattered_products++;
    return TJ_OK;
}

/* Checks scatter_add node i as the end of a pair and fuses it. */
static tj_status try_pair(tj_plan *p, const tj_plan_uses *u, int i)
{
    const tj_pnode *s = &p->nodes[i];
    if (!s->is_step || s->op != TJ_OPS(scatter_add) || s->label || s->nargs != 4 || s->nout != 1) return TJ_OK;
    const tj_garg *a = s->args;
    if (a[0].kind != TJ_GA_VALUE || a[1].kind != TJ_GA_INT || a[2].kind != TJ_GA_VALUE || a[3].kind != TJ_GA_VALUE)
        return TJ_OK;
    const tj_pvalue *out = &p->values[s->outs[0]], *ix = &p->values[a[2].u.v], *src = &p->values[a[3].u.v];
    int nd = src->ndim, dim = (int)(a[1].u.i < 0 ? a[1].u.i + nd : a[1].u.i);
    if (out->kind != TJ_PV_ARENA || out->dtype != TJ_FLOAT32 || nd < 1 || dim < 0 || dim >= nd || ix->ndim != nd ||
        out->ndim != nd || memcmp(ix->shape, src->shape, sizeof(int64_t) * (size_t)nd) || ix->numel == 0)
        return TJ_OK;
    pair c = {.scatter = i, .product = sole_product(p, u, a[3].u.v, i)};
    const int64_t *idx = constant_data(p, a[2].u.v);
    if (c.product < 0 || !idx || tj_plan_writes_between(p, c.product, i) || storage_written(p, a[2].u.v) ||
        !product_fits(p, &c) || !rows_fit(ix, dim, &c))
        return TJ_OK;
    c.width = block_width(c.m, c.n);
    c.blocks = (c.n + c.width - 1) / c.width;
    int64_t ostr[TJ_MAX_DIMS];
    tj_contiguous_strides(nd, out->shape, ostr);
    c.span = c.lead > 0 ? ostr[c.lead - 1] : out->numel;
    size_t bytes = sizeof(int64_t) * (size_t)(c.per_row + c.span);
    int64_t *t = tj_alloc(bytes);
    if (!t) return tj_oom("tj_compile", bytes);
    tj_status st = TJ_OK;
    if (row_targets(ix, idx, ostr, c.lead, dim, out->shape[dim], c.per_row, t)) {
        bool descending = !order_kept(&c, t, false, t + c.per_row);
        if (!descending || order_kept(&c, t, true, t + c.per_row)) {
            int len = 0;
            int64_t *table = make_table(p, &c, t, descending, ostr, ix->shape, &len);
            if (table) st = fuse_pair(p, &c, table, len);
            else if (len >= 0) st = TJ_ERR_OUT_OF_MEMORY;
        }
    }
    tj_free(t, bytes);
    return st;
}

tj_status tj_plan_fuse_product_scatters(tj_plan *p)
{
    tj_plan_uses u;
    tj_status st = tj_plan_uses_init(p, &u);
    for (int i = 0; i < p->n_nodes && st == TJ_OK; i++) st = try_pair(p, &u, i);
    if (u.count) tj_plan_uses_free(&u);
    tj_plan_renumber_steps(p);
    return st;
}
