/* Static memory planning (after ggml-alloc): liveness of every arena block
 * over the kernel schedule, best-fit placement in the blocks freed so far,
 * and in-place reuse for elementwise operators.
 *
 * A block holds one kernel result (an ARENA root) for as long as any value
 * reading its storage is used: the root itself, views of it and in-place
 * results that are it. Graph outputs live to the end. Results of one step
 * are placed before the blocks dying at that step are freed, so a result
 * never overlaps its own inputs, except by design: an elementwise result of
 * the shape and dtype of an input that dies at that step, and that no view
 * reads, takes over that input's block (the kernel reads each element before
 * writing it: tj_elementwise allows an output to alias an input exactly). */
#include <string.h>

#include "plan_internal.h"

#define ALIGN 64

/* Operators computed element by element in one pass, safe to run with their
 * result over an input of the same shape: the ones ATen has in-place
 * variants of, whose kernels go through tj_elementwise. */
static const char *const elementwise_ops[] = {
    "abs", "neg", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "reciprocal", "sin", "cos",
    "log1p", "expm1", "relu", "silu", "add", "sub", "mul", "div", "pow", "maximum", "minimum", "clamp",
    "masked_fill", "where",
};

bool tj_plan_is_elementwise(const tj_op *op)
{
    if (op->nreturns != 1 || op->is_inplace || op->is_view || !tj_op_is_builtin(op)) return false;
    for (size_t i = 0; i < sizeof elementwise_ops / sizeof *elementwise_ops; i++)
        if (strcmp(op->base, elementwise_ops[i]) == 0) return true;
    return false;
}

bool tj_plan_reads_before_writes(const tj_op *op)
{
    return tj_plan_is_elementwise(op) || (tj_op_is_builtin(op) && strcmp(op->base, "_fused_adamw_step") == 0);
}

/* ---- free list: blocks sorted by offset, coalesced ---- */
typedef struct block {
    size_t off, size;
} block;

typedef struct free_list {
    block *b;
    int n;
    size_t end; /* high-water mark: the arena size */
} free_list;

static void fl_remove(free_list *f, int i)
{
    memmove(&f->b[i], &f->b[i + 1], sizeof(block) * (size_t)(f->n - i - 1));
    f->n--;
}

/* Best fit: the smallest free block that holds `size`; else the free block
 * ending the arena, extended; else new space at the end. */
static size_t fl_alloc(free_list *f, size_t size)
{
    int best = -1;
    for (int i = 0; i < f->n; i++)
        if (f->b[i].size >= size && (best < 0 || f->b[i].size < f->b[best].size)) best = i;
    if (best >= 0) {
        size_t off = f->b[best].off;
        f->b[best].off += size;
        f->b[best].size -= size;
        if (f->b[best].size == 0) fl_remove(f, best);
        return off;
    }
    if (f->n && f->b[f->n - 1].off + f->b[f->n - 1].size == f->end) {
        size_t off = f->b[f->n - 1].off;
        f->n--;
        f->end = off + size;
        return off;
    }
    size_t off = f->end;
    f->end += size;
    return off;
}

static void fl_free(free_list *f, size_t off, size_t size)
{
    int i = 0;
    while (i < f->n && f->b[i].off < off) i++;
    bool join_prev = i > 0 && f->b[i - 1].off + f->b[i - 1].size == off;
    bool join_next = i < f->n && off + size == f->b[i].off;
    if (join_prev && join_next) {
        f->b[i - 1].size += size + f->b[i].size;
        fl_remove(f, i);
    } else if (join_prev) {
        f->b[i - 1].size += size;
    } else if (join_next) {
        f->b[i].off = off;
        f->b[i].size += size;
    } else {
        memmove(&f->b[i + 1], &f->b[i], sizeof(block) * (size_t)(f->n - i));
        f->b[i] = (block){off, size};
        f->n++;
    }
}

/* ---- liveness ---- */
static void touch(tj_plan *p, int v, int step)
{
    tj_pvalue *r = &p->values[p->values[v].root];
    if (step > r->last) r->last = step;
}

static void touch_args(tj_plan *p, const tj_pnode *n, int step)
{
    for (int i = 0; i < n->nargs; i++) {
        const tj_garg *a = &n->args[i];
        if (a->kind == TJ_GA_VALUE) touch(p, a->u.v, step);
        else if (a->kind == TJ_GA_VALUES)
            for (int k = 0; k < a->n; k++) touch(p, a->u.vs[k], step);
    }
}

static void liveness(tj_plan *p)
{
    for (int v = 0; v < p->n_values; v++) p->values[v].def = p->values[v].last = -1;
    for (int i = 0; i < p->n_nodes; i++) {
        const tj_pnode *n = &p->nodes[i];
        if (!n->is_step) continue;
        for (int k = 0; k < n->nout; k++) {
            int v = n->outs[k];
            if (v < 0 || p->values[v].kind != TJ_PV_ARENA) continue;
            p->values[v].def = n->step;
            p->values[v].last = n->step; /* an unused result dies where it is made */
        }
        touch_args(p, n, n->step);
    }
    for (int k = 0; k < p->n_outputs; k++) touch(p, p->output_values[k], p->n_steps);
}

/* Smallest result placed over its dying input. In-place reuse pays by the
 * cache it saves; a block smaller than this saves too little to see, and
 * the elementwise kernel runs on one thread below this size (tj_threads_for:
 * 32768 elements of float32), so that at two threads and more it makes that
 * one core write the lines the threaded producer left in the other cores'
 * caches, which the next threaded kernel then reads from that same block:
 * mlp's forward pass (ReLU over the 64 KiB addmm result, read by the next
 * addmm) ran 2.5-4% slower than eager mode at 2 threads with it, 2-3%
 * faster without it, and the same at 1 thread either way (eager and both
 * placements interleaved, runs with an involuntary context switch dropped). */
#define INPLACE_MIN_BYTES (128u << 10)

/* The input of step node n whose block its result may take over, or -1. */
static int inplace_donor(const tj_plan *p, const tj_pnode *n, const tj_pvalue *out)
{
    if (out->nbytes < INPLACE_MIN_BYTES || !tj_plan_is_elementwise(n->op)) return -1;
    for (int i = 0; i < n->nargs; i++) {
        if (n->args[i].kind != TJ_GA_VALUE) continue;
        int v = n->args[i].u.v;
        int obj = tj_plan_object_value(p, v);
        const tj_pvalue *r = &p->values[obj];
        if (r->kind != TJ_PV_ARENA || r->last != n->step || r->n_views > 0 || r->nbytes != out->nbytes ||
            r->dtype != out->dtype || r->ndim != out->ndim || memcmp(r->shape, out->shape, sizeof(int64_t) * (size_t)r->ndim))
            continue;
        return obj;
    }
    return -1;
}

tj_status tj_plan_memory(tj_plan *p, const tj_compile_options *opts)
{
    liveness(p);
    size_t naive = 0;
    int n_arena = 0;
    for (int v = 0; v < p->n_values; v++) {
        tj_pvalue *pv = &p->values[v];
        if (pv->kind != TJ_PV_ARENA) continue;
        size_t raw = (size_t)pv->numel * tj_dtype_size(pv->dtype);
        pv->nbytes = (raw + ALIGN - 1) / ALIGN * ALIGN;
        naive += pv->nbytes;
        n_arena++;
    }
    /* dying[s]: ARENA roots whose last step is s, as a linked list */
    size_t head_bytes = sizeof(int) * (size_t)(p->n_steps + 1), next_bytes = sizeof(int) * (size_t)(p->n_values + 1);
    size_t block_bytes = sizeof(block) * (size_t)(n_arena + 1);
    size_t gone_bytes = (size_t)p->n_values + 1;
    int *head = tj_alloc(head_bytes), *next = tj_alloc(next_bytes);
    bool *donated = tj_alloc(gone_bytes); /* blocks handed on to an in-place result */
    free_list fl = {.b = tj_alloc(block_bytes)};
    if (!head || !next || !donated || !fl.b) {
        tj_free(head, head_bytes);
        tj_free(next, next_bytes);
        tj_free(donated, gone_bytes);
        tj_free(fl.b, block_bytes);
        return tj_oom("tj_compile: memory plan", head_bytes + next_bytes + gone_bytes + block_bytes);
    }
    memset(donated, 0, gone_bytes);
    for (int s = 0; s <= p->n_steps; s++) head[s] = -1;
    for (int v = p->n_values - 1; v >= 0; v--)
        if (p->values[v].kind == TJ_PV_ARENA) {
            next[v] = head[p->values[v].last];
            head[p->values[v].last] = v;
        }
    size_t live = 0, peak = 0;
    for (int s = 0; s < p->n_steps; s++) {
        const tj_pnode *n = &p->nodes[p->step_nodes[s]];
        for (int k = 0; k < n->nout; k++) {
            int v = n->outs[k];
            if (v < 0 || p->values[v].kind != TJ_PV_ARENA) continue;
            tj_pvalue *o = &p->values[v];
            int donor = opts->no_inplace_reuse || opts->no_memory_reuse ? -1 : inplace_donor(p, n, o);
            if (donor >= 0) {
                o->arena_offset = p->values[donor].arena_offset;
                o->inplace = true;
                o->donor = donor;
                donated[donor] = true;
                p->stats.n_inplace++;
            } else {
                o->arena_offset = fl_alloc(&fl, o->nbytes);
                live += o->nbytes;
            }
        }
        if (live > peak) peak = live;
        if (opts->no_memory_reuse) continue;
        for (int v = head[s]; v >= 0; v = next[v]) {
            tj_pvalue *d = &p->values[v];
            if (d->nbytes == 0 || donated[v]) continue;
            fl_free(&fl, d->arena_offset, d->nbytes);
            live -= d->nbytes;
        }
    }
    p->stats.arena_bytes = fl.end;
    p->stats.naive_bytes = naive;
    p->stats.lower_bound_bytes = peak;
    tj_free(head, head_bytes);
    tj_free(next, next_bytes);
    tj_free(donated, gone_bytes);
    tj_free(fl.b, block_bytes);
    return TJ_OK;
}
