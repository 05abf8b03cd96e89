/* Static memory planning (after ggml-alloc): liveness of every arena block
 * over the kernel schedule, best-fit placement in the blocks freed so far,
 * and in-place reuse for elementwise operators; with 2+ threads, placement
 * that keeps each part of a block on the core that wrote it last.
 *
 * A block holds one kernel result (an ARENA root) for as long as any value
 * reading its storage is used: the root itself, views of it and in-place
 * results that are it. Graph outputs live to the end. Results of one step
 * are placed before the blocks dying at that step are freed, so a result
 * never overlaps its own inputs, except by design: an elementwise result of
 * the shape and dtype of an input that dies at that step, and that no view
 * reads, takes over that input's block (the kernel reads each element before
 * writing it: tj_elementwise allows an output to alias an input exactly).
 * A result its kernel writes straight into the buffer of the input it is
 * written back to (compile.c) takes no arena block: an optimiser's new
 * parameters and state are not a second copy of them. Its block lies in a
 * fallback region that a context allocates only when an input cannot take
 * its result (tracer/plan.c bind_writebacks). An input with a staging block
 * (compile.c plan_staging) has it from before the first step to its last
 * read.
 *
 * Where placement does not follow the core that wrote each byte last (one
 * thread, or no_thread_placement) the blocks are placed a second time,
 * knowing every lifetime beforehand (greedy by size), and that placement is
 * kept when its arena is the smaller. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/parallel.h"
#include "plan_internal.h"

#define ALIGN 64

/* Operators computed element by element in one pass (runtime/registry.c's
 * list), safe to run with their result over an input of the same shape.
 * Comparisons and the logical operators are there too: a bool result may
 * take a bool input's block. */
bool tj_plan_is_elementwise(const tj_op *op)
{
    return op->elementwise && op->nreturns == 1 && !op->is_inplace && !op->is_view && tj_op_is_builtin(op);
}

bool tj_plan_reads_before_writes(const tj_op *op)
{
    return tj_plan_is_elementwise(op) || (tj_op_is_builtin(op) && (strcmp(op->base, "_fused_adamw_step") == 0 ||
                                                                   strcmp(op->base, "_fused_sgd_step") == 0));
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

/* Takes [off, off + size) out of free block i, which holds it. */
static void fl_take(free_list *f, int i, size_t off, size_t size)
{
    block b = f->b[i];
    size_t tail = b.off + b.size - (off + size);
    if (off == b.off) {
        f->b[i].off += size;
        f->b[i].size -= size;
        if (f->b[i].size == 0) fl_remove(f, i);
        return;
    }
    f->b[i].size = off - b.off;
    if (tail == 0) return;
    memmove(&f->b[i + 2], &f->b[i + 1], sizeof(block) * (size_t)(f->n - i - 1));
    f->b[i + 1] = (block){off + size, tail};
    f->n++;
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

/* ---- which core last wrote each byte (placement with 2+ threads) ----
 * Kernels split their result into contiguous parts, part t written by
 * thread t (small results by the calling thread alone), and on machines
 * whose cores share no cache a thread writing over lines another core
 * wrote last pays a transfer at DRAM speed. Placement therefore prefers
 * the offset where a result's parts fall on bytes their own thread wrote
 * last: a bookkeeping of segments [start, end) and their last writer. */
#define OWNER_NONE (-1)
/* results at least this large are written by every thread (the
 * elementwise engine splits from 2 x 32768 float32 elements) */
#define SPLIT_MIN_BYTES (256u << 10)

typedef struct segment {
    size_t start, end;
    int owner;
} segment;

typedef struct owner_map {
    segment *s;
    int n, cap;
    int nt; /* threads the plan is compiled for; < 2: no bookkeeping */
} owner_map;

/* The first segment ending after x. */
static int first_after(const owner_map *m, size_t x)
{
    int lo = 0, hi = m->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (m->s[mid].end <= x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Bytes of [off, off + size) whose last writer is another thread than the
 * one that will write them. */
static size_t mismatch(const owner_map *m, size_t off, size_t size)
{
    size_t cost = 0, end = off + size;
    int parts = size < SPLIT_MIN_BYTES ? 1 : m->nt;
    for (int i = first_after(m, off); i < m->n && m->s[i].start < end; i++) {
        const segment *g = &m->s[i];
        if (g->owner == OWNER_NONE) continue;
        for (int t = 0; t < parts; t++) {
            size_t a = off + (size_t)t * size / (size_t)parts, b = off + (size_t)(t + 1) * size / (size_t)parts;
            if (g->start > a) a = g->start;
            if (g->end < b) b = g->end;
            if (a < b && g->owner != (parts == 1 ? 0 : t)) cost += b - a;
        }
    }
    return cost;
}

/* Records [off, off + size) as written by its result's threads. */
static bool mark_written(owner_map *m, size_t off, size_t size)
{
    int parts = size < SPLIT_MIN_BYTES ? 1 : m->nt, cap = m->n + parts + 2;
    segment *out = tj_alloc(sizeof(segment) * (size_t)cap);
    if (!out) return false;
    size_t end = off + size;
    int n = 0;
    for (int i = 0; i < m->n && m->s[i].start < off; i++)
        out[n++] = (segment){m->s[i].start, m->s[i].end < off ? m->s[i].end : off, m->s[i].owner};
    for (int t = 0; t < parts; t++)
        out[n++] = (segment){off + (size_t)t * size / (size_t)parts, off + (size_t)(t + 1) * size / (size_t)parts,
                             parts == 1 ? 0 : t};
    for (int i = 0; i < m->n; i++)
        if (m->s[i].end > end) out[n++] = (segment){m->s[i].start > end ? m->s[i].start : end, m->s[i].end, m->s[i].owner};
    tj_free(m->s, sizeof(segment) * (size_t)m->cap);
    m->s = out;
    m->n = n;
    m->cap = cap;
    return true;
}

/* The offset for a result of `size` bytes: among free blocks that hold it,
 * and within each at its start, its end, or where its parts line up with
 * the boundaries between last writers, the least mismatch, then the
 * smallest block (best fit), then the lowest offset. Without a fitting
 * block, fl_alloc's answer. Marks the bytes written. */
static size_t place(free_list *f, owner_map *m, size_t size)
{
    if (m->nt < 2) return fl_alloc(f, size);
    int best = -1;
    size_t best_off = 0, best_cost = 0;
    size_t lead = size < SPLIT_MIN_BYTES ? 0 : size / (size_t)m->nt; /* where part 1 begins */
    for (int i = 0; i < f->n; i++) {
        block b = f->b[i];
        if (b.size < size) continue;
        size_t last = b.off + b.size - size;
        int first = first_after(m, b.off);
        for (int c = first - 2; c < m->n && (c < first || m->s[c].start < b.off + b.size); c++) {
            size_t off;
            if (c == first - 2) off = b.off;
            else if (c == first - 1) off = last;
            else {
                size_t bound = m->s[c].start;
                if (bound < b.off + lead || bound - lead > last) continue;
                off = (bound - lead) / ALIGN * ALIGN;
                if (off < b.off) continue;
            }
            size_t cost = mismatch(m, off, size);
            if (best < 0 || cost < best_cost || (cost == best_cost && b.size < f->b[best].size)) {
                best = i;
                best_off = off;
                best_cost = cost;
            }
        }
    }
    size_t off;
    if (best >= 0) {
        off = best_off;
        fl_take(f, best, off, size);
    } else {
        off = fl_alloc(f, size);
    }
    if (!mark_written(m, off, size)) m->nt = 1; /* out of memory: plain best fit from here */
    return off;
}

/* ---- offline placement: greedy by size ----
 * Best fit in schedule order places each block knowing only the blocks
 * before it: a small block can take the gap a later, larger one needed.
 * With every block's lifetime known, blocks are placed largest first, each
 * in the smallest gap between the placed blocks whose lifetimes overlap its
 * own, else above them: "Greedy by Size for Offset Calculation" (Pisarchyk
 * and Lee, Efficient Memory Management for Deep Neural Net Inference, 2020;
 * TFLite's arena planner). */
typedef struct lifetime_block {
    size_t size, off;
    int first, last; /* steps, inclusive: blocks sharing a step overlap */
} lifetime_block;

static int larger_first(const void *a, const void *b)
{
    const lifetime_block *x = *(lifetime_block *const *)a, *y = *(lifetime_block *const *)b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return x < y ? -1 : x > y; /* the order they were made: a deterministic plan */
}

/* Sets every block's off; returns the arena size. by_size and by_off:
 * room for n pointers each. */
static size_t place_by_size(lifetime_block *blocks, int n, lifetime_block **by_size, lifetime_block **by_off)
{
    for (int i = 0; i < n; i++) by_size[i] = &blocks[i];
    qsort(by_size, (size_t)n, sizeof *by_size, larger_first);
    size_t top = 0;
    int placed = 0; /* by_off[0 .. placed) in offset order */
    for (int k = 0; k < n; k++) {
        lifetime_block *x = by_size[k];
        size_t end = 0, best = SIZE_MAX, best_gap = SIZE_MAX;
        for (int j = 0; j < placed; j++) {
            const lifetime_block *y = by_off[j];
            if (y->last < x->first || x->last < y->first) continue;
            if (y->off >= end + x->size && y->off - end < best_gap) {
                best = end;
                best_gap = y->off - end;
            }
            if (y->off + y->size > end) end = y->off + y->size;
        }
        x->off = best != SIZE_MAX ? best : end;
        int at = placed++;
        while (at > 0 && by_off[at - 1]->off > x->off) {
            by_off[at] = by_off[at - 1];
            at--;
        }
        by_off[at] = x;
        if (x->off + x->size > top) top = x->off + x->size;
    }
    return top;
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
            for (int k = 0; k < a->n; k++)
                if (a->u.vs[k] >= 0) touch(p, a->u.vs[k], step);
    }
}

void tj_plan_liveness(tj_plan *p)
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
static int inplace_donor(const tj_plan *p, const tj_pnode *n, const tj_pvalue *out, const bool *donated)
{
    if (out->nbytes < INPLACE_MIN_BYTES || !tj_plan_is_elementwise(n->op)) return -1;
    for (int i = 0; i < n->nargs; i++) {
        if (n->args[i].kind != TJ_GA_VALUE) continue;
        int v = n->args[i].u.v;
        int obj = tj_plan_object_value(p, v);
        const tj_pvalue *r = &p->values[obj];
        if (donated[obj]) continue; /* to another result of the step (a fused step has several) */
        if (r->kind != TJ_PV_ARENA || r->last != n->step || r->n_views > 0 || r->nbytes != out->nbytes ||
            r->dtype != out->dtype || r->ndim != out->ndim || memcmp(r->shape, out->shape, sizeof(int64_t) * (size_t)r->ndim))
            continue;
        return obj;
    }
    return -1;
}

/* The online placement's blocks, recorded for place_by_size: each staged
 * input or placed result opens one; an in-place result joins its donor's. */
typedef struct block_record {
    lifetime_block *blocks;
    int *block_of; /* per value: its block, or -1 */
    int n;
} block_record;

static void record_block(block_record *r, int v, size_t size, int first, int last)
{
    r->blocks[r->n] = (lifetime_block){.size = size, .first = first, .last = last};
    r->block_of[v] = r->n++;
}

/* The offline placement when its arena is the smaller (else the online one
 * stays). n_arena: room for that many pointers per array. */
static tj_status place_offline(tj_plan *p, block_record *r, size_t *arena, int n_arena)
{
    size_t bytes = sizeof(lifetime_block *) * (size_t)(n_arena + 1);
    lifetime_block **by_size = tj_alloc(bytes), **by_off = tj_alloc(bytes);
    if (!by_size || !by_off) {
        tj_free(by_size, bytes);
        tj_free(by_off, bytes);
        return tj_oom("tj_compile: memory plan", 2 * bytes);
    }
    size_t top = place_by_size(r->blocks, r->n, by_size, by_off);
    if (top < *arena) {
        *arena = top;
        for (int v = 0; v < p->n_values; v++)
            if (r->block_of[v] >= 0) p->values[v].arena_offset = r->blocks[r->block_of[v]].off;
    }
    tj_free(by_size, bytes);
    tj_free(by_off, bytes);
    return TJ_OK;
}

tj_status tj_plan_memory(tj_plan *p, const tj_compile_options *opts)
{
    size_t naive = 0, fallback = 0;
    int n_arena = 0;
    for (int v = 0; v < p->n_values; v++) {
        tj_pvalue *pv = &p->values[v];
        if (pv->kind != TJ_PV_ARENA && !(pv->kind == TJ_PV_INPUT && pv->staged)) continue;
        size_t raw = (size_t)pv->numel * tj_dtype_size(pv->dtype);
        pv->nbytes = (raw + ALIGN - 1) / ALIGN * ALIGN;
        naive += pv->nbytes;
        n_arena++;
    }
    /* dying[s]: ARENA roots whose last step is s, as a linked list */
    size_t head_bytes = sizeof(int) * (size_t)(p->n_steps + 1), next_bytes = sizeof(int) * (size_t)(p->n_values + 1);
    size_t block_bytes = sizeof(block) * (size_t)(n_arena + 1);
    size_t gone_bytes = (size_t)p->n_values + 1;
    size_t rec_bytes = sizeof(lifetime_block) * (size_t)(n_arena + 1);
    int *head = tj_alloc(head_bytes), *next = tj_alloc(next_bytes);
    bool *donated = tj_alloc(gone_bytes); /* blocks handed on to an in-place result */
    free_list fl = {.b = tj_alloc(block_bytes)};
    block_record rec = {.blocks = tj_alloc(rec_bytes), .block_of = tj_alloc(next_bytes)};
    tj_status st = TJ_OK;
    if (!head || !next || !donated || !fl.b || !rec.blocks || !rec.block_of) {
        st = tj_oom("tj_compile: memory plan", head_bytes + 2 * next_bytes + gone_bytes + block_bytes + rec_bytes);
        goto done;
    }
    memset(donated, 0, gone_bytes);
    for (int v = 0; v < p->n_values; v++) rec.block_of[v] = -1;
    /* no more parts than threads a kernel runs on: a larger setting would
     * only cut each result into more segments (compile time grows with
     * their square) modelling threads that never run */
    int nt = tj_get_num_threads();
    if (nt > TJ_K_MAX_PARTICIPANTS) nt = TJ_K_MAX_PARTICIPANTS;
    owner_map own = {.nt = opts->no_memory_reuse || opts->no_thread_placement ? 1 : nt};
    bool offline = own.nt < 2 && !opts->no_memory_reuse;
    for (int s = 0; s <= p->n_steps; s++) head[s] = -1;
    for (int v = p->n_values - 1; v >= 0; v--)
        if (p->values[v].kind == TJ_PV_ARENA || p->values[v].staged) {
            next[v] = head[p->values[v].last];
            head[p->values[v].last] = v;
        }
    size_t live = 0, peak = 0;
    /* staging blocks: written before the first step, live until the input's last read */
    for (int v = 0; v < p->n_values; v++) {
        tj_pvalue *pv = &p->values[v];
        if (!pv->staged) continue;
        pv->arena_offset = place(&fl, &own, pv->nbytes);
        record_block(&rec, v, pv->nbytes, -1, pv->last);
        live += pv->nbytes;
        p->stats.staging_bytes += pv->nbytes;
    }
    peak = live;
    for (int s = 0; s < p->n_steps; s++) {
        const tj_pnode *n = &p->nodes[p->step_nodes[s]];
        for (int k = 0; k < n->nout; k++) {
            int v = n->outs[k];
            if (v < 0 || p->values[v].kind != TJ_PV_ARENA) continue;
            tj_pvalue *o = &p->values[v];
            if (o->in_input) { /* lives in its input; a block of its own in the fallback */
                o->arena_offset = fallback;
                fallback += o->nbytes;
                continue;
            }
            int donor = opts->no_inplace_reuse || opts->no_memory_reuse ? -1 : inplace_donor(p, n, o, donated);
            if (donor >= 0) {
                o->arena_offset = p->values[donor].arena_offset;
                o->inplace = true;
                o->donor = donor;
                donated[donor] = true;
                p->stats.n_inplace++;
                rec.block_of[v] = rec.block_of[donor]; /* the block lives on to this result's last read */
                lifetime_block *b = &rec.blocks[rec.block_of[v]];
                if (o->last > b->last) b->last = o->last;
            } else {
                o->arena_offset = place(&fl, &own, o->nbytes);
                record_block(&rec, v, o->nbytes, s, o->last);
                live += o->nbytes;
            }
        }
        if (live > peak) peak = live;
        if (opts->no_memory_reuse) continue;
        for (int v = head[s]; v >= 0; v = next[v]) {
            tj_pvalue *d = &p->values[v];
            if (d->nbytes == 0 || donated[v] || d->in_input) continue;
            fl_free(&fl, d->arena_offset, d->nbytes);
            live -= d->nbytes;
        }
    }
    size_t arena = fl.end;
    if (offline) st = place_offline(p, &rec, &arena, n_arena);
    p->stats.arena_bytes = arena;
    p->stats.naive_bytes = naive;
    p->stats.lower_bound_bytes = peak;
    p->stats.writeback_fallback_bytes = fallback;
    tj_free(own.s, sizeof(segment) * (size_t)own.cap);
done:
    tj_free(head, head_bytes);
    tj_free(next, next_bytes);
    tj_free(donated, gone_bytes);
    tj_free(fl.b, block_bytes);
    tj_free(rec.blocks, rec_bytes);
    tj_free(rec.block_of, next_bytes);
    return st;
}
