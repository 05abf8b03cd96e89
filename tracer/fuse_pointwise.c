/* Loop fusion of elementwise operators (Inductor's pointwise fusion, on a
 * replay plan): calls of elementwise operators whose results have one shape
 * run as one step that walks that shape a chunk at a time (64 to 2048
 * elements, so that a chunk of every buffer and stream fits most of L1)
 * and, for each chunk, runs each member's own loop (runtime/op_pointwise.h:
 * its kernel's tj_loop_fn and context) on it.
 * A result that only members read lives in a chunk-sized buffer on the
 * running thread's stack, never in the arena; a result read elsewhere too
 * (or a graph output) is written out as well. In a decomposed graph
 * (layer_norm, softmax, gelu, the optimiser's update down to mul, add,
 * div, sqrt, ...) one pass over memory per primitive becomes one per chain.
 *
 * Operands: a result of an earlier member (its buffer); a tensor of the
 * group's shape, read in place where contiguous (checked at run time:
 * inputs may come restrided); a tensor of one element (a folded constant,
 * a 0-dim value), converted to the loop's dtype and repeated once per
 * thread into a buffer; any other tensor broadcasting to the group's shape
 * ([N, 1] statistics, [D] weights, a transposed gradient) gathered a chunk
 * at a time through its strides. The loops compute element by element,
 * partial vectors through the same vector code (elementwise_simd.h), so the
 * bits do not depend on where chunks begin and end: results are those of
 * the unfused plan and of tj_graph_run.
 *
 * Grouping walks the nodes in order with a few groups open (one shape
 * each). A node joins the open group of its result's shape that it reads
 * from directly, or whose last member is a few steps back; a node reading a
 * group's result in any other way (a non-member, a view of a member's
 * result) first closes that group, as does any node that may write
 * existing storage (in-place and user operators) and distance. A closed
 * group of two or more members becomes one step in its last member's place:
 * every operand is ready there, and no member's result is read before it.
 * Moving the members' reads there is what the closing rules make safe.
 *
 * A comparison whose mask only a where reads runs inside that where, as
 * one loop (merge_compare_where): decompositions select on comparisons
 * everywhere, and the mask would be one more pass over the chunk, in
 * bytes, for each. Before that, a where of the masks of two comparisons
 * of the same operands, their only reader, that is one comparison (the
 * core table's le, where(lt, true, eq), and ge) becomes that comparison
 * (merge_compare_masks): a decomposed relu backward is then one loop, as
 * threshold_backward is. Likewise a mul whose product only an add reads runs
 * inside that add (merge_mul_add). An add, mul or div of a chunk and one
 * value per row (x - mean, x * rstd) reads the row values in place
 * (tj_k_rows_loop) rather than spread over a chunk buffer first: a pass
 * less each; so does one of an [N, 1] argument read in place. A constant
 * operand of an add, mul or div (tj_k_rows_loop on one row) and a merged
 * product's constant second factor (tj_k_mul_add_args.one_b) and a merged
 * comparison's and where's constants (tj_k_compare_where_args.one) are
 * read as one value, not as their splat's chunk: a stream less through L1
 * each.
 *
 * Within a chunk every read of an operand comes before any write of a
 * result (the last member writes its result in place, reading each element
 * before writing it; earlier members' results are copied out after it), so
 * a result may be placed over a dying operand and written straight into an
 * input it updates, as for single elementwise kernels (memory_plan.c,
 * compile.c): the step stands in the plan as its last member's operator. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "fuse_pointwise.h"
#include "kernels/copy.h"
#include "kernels/parallel.h"

#define PW_AREA_BYTES (96 << 10) /* the chunk buffers, on the stack of each thread running the step (the
                                     pool's workers (kernels/parallel.c) and OpenMP's threads have the
                                     default stack of at least 2 MiB) */
#define PW_CACHE_BYTES (32 << 10) /* a chunk of every buffer and every operand and result read or written in
                                     place: most of a 48 KiB L1 (Zen 5) */
#define PW_CHUNK_MIN 64
#define PW_CHUNK_MAX 2048
#define PW_ROWS_MIN 1024  /* elements per chunk at least, in steps walking whole rows */
#define PW_MAX_ARGS 32    /* tensors read from the arena, inputs or constants */
#define PW_MAX_OPEN 8     /* groups open at once */
#define PW_OP_INPUTS 3    /* an operator's loop takes three inputs at most (a merged comparison and where four) */
#define PW_NEAR 8         /* a node joins a group it does not read from when within this many steps of it */
#define PW_FAR 32         /* a group is closed this many steps after its last member */

/* ---- run time ---- */

/* A gathered argument: the group's shape and the argument's element
 * strides over it (0 along broadcast dims), dims that are contiguous in
 * both merged, so that runs along the inner dim are as long as they can be
 * (a [N, C, 1, 1] scale over [N, C, H, W]: runs of H W). */
typedef struct pw_geometry {
    int ndim;
    int64_t shape[TJ_MAX_DIMS];
    int64_t strides[TJ_MAX_DIMS];
} pw_geometry;

typedef struct pw_run {
    const pw_program *pg;
    const char *base[PW_MAX_ARGS]; /* contiguous arguments of the group's shape, else NULL */
    const char *row_base[PW_MAX_ARGS]; /* with rows: contiguous arguments of one value per row, else NULL */
    const char *col_base[PW_MAX_ARGS]; /* with rows: arguments holding one contiguous row, repeated, else NULL */
    bool segment_ready[PW_MAX_MEMBERS]; /* segment k runs its native function this run (decided once per run) */
    bool native_ready; /* every segment runs its native function this run: splats only they read stay unfilled */
    bool any_native;   /* some segment does: row values are gathered (a segment may read them in buffers) */
    const tj_tensor *args[PW_MAX_ARGS];
    pw_geometry geo[PW_MAX_ARGS];  /* the others' */
    char *out[PW_MAX_MEMBERS];
} pw_run;

/* dst[0, n) = elements [start, start + n) (row-major over the group's
 * shape) of a tensor at `base` with geometry g. */
static void gather(char *dst, const char *base, size_t es, const pw_geometry *g, int64_t start, int64_t n)
{
    int nd = g->ndim;
    const int64_t *st = g->strides;
    int64_t idx[TJ_MAX_DIMS], r = start;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = r % g->shape[d];
        r /= g->shape[d];
    }
    int64_t inner = g->shape[nd - 1], is = st[nd - 1];
    for (int64_t done = 0; done < n;) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++) off += idx[d] * st[d];
        int64_t run = inner - idx[nd - 1];
        if (run > n - done) run = n - done;
        const char *s = base + off * (int64_t)es;
        char *o = dst + done * (int64_t)es;
        if (is == 0) tj_k_splat(o, s, run, es);
        else if (is == 1) memcpy(o, s, (size_t)run * es);
        else if (es == 4)
            for (int64_t i = 0; i < run; i++) memcpy(o + 4 * i, s + 4 * i * is, 4);
        else if (es == 8)
            for (int64_t i = 0; i < run; i++) memcpy(o + 8 * i, s + 8 * i * is, 8);
        else
            for (int64_t i = 0; i < run; i++) o[i] = s[i * is];
        done += run;
        idx[nd - 1] += run;
        for (int d = nd - 1; d > 0 && idx[d] >= g->shape[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

_Static_assert(sizeof(tj_loop_fn) == sizeof(void *), "a member's loop passes as a pointer");

/* Where argument ref is read in place this run, NULL when it is not. */
static const char *arg_base(const pw_run *r, const pw_ref *ref)
{
    return (ref->rows ? r->row_base : ref->cols ? r->col_base : r->base)[ref->index];
}

/* Whether segment sg runs its native function this run: built, and every
 * argument it reads in place (inputs may come restrided). */
static bool segment_can_run(const pw_run *r, const pw_segment *sg)
{
    if (!sg->fn) return false;
    for (int k = 0; k < sg->n_refs; k++)
        if (sg->refs[k].kind == REF_ARG && !arg_base(r, &sg->refs[k])) return false;
    return true;
}

/* Segment sg's members on the chunk of n elements at s, through its
 * native function (it is ready this run). */
static void run_segment(const pw_run *r, const pw_segment *sg, char *const *bufs, int64_t s, int64_t n)
{
    void *p[PW_MAX_REFS];
    int64_t at_row = r->pg->row_len ? s / r->pg->row_len : 0;
    for (int k = 0; k < sg->n_refs; k++) {
        const pw_ref *ref = &sg->refs[k];
        int64_t at = ref->rows ? at_row : ref->cols ? 0 : s;
        switch (ref->kind) {
        case REF_BUF: p[k] = bufs[ref->index]; break;
        case REF_OUT: p[k] = r->out[ref->index] + at * (int64_t)ref->es; break;
        case REF_ARG: p[k] = (void *)(arg_base(r, ref) + at * (int64_t)ref->es); break;
        case REF_LOOP: memcpy(&p[k], &r->pg->members[ref->index].pw.fn, sizeof p[k]); break;
        case REF_CTX: p[k] = (void *)&r->pg->members[ref->index].pw.ctx; break;
        }
    }
    sg->fn(n, p);
}

/* Where a member reads its inputs and writes its result in the chunk at
 * element s: pointer + s * step (step 0: a buffer of the running thread),
 * worked out once per thread and run for the members that read only
 * buffers and arguments in place (direct), so that a chunk costs each a
 * multiply-add per pointer and its loop; the others (rows, gathers) take
 * the general path in run_lines. */
typedef struct pw_addr {
    bool direct;
    const char *in[TJ_ITER_MAX_INPUTS];
    int64_t in_step[TJ_ITER_MAX_INPUTS];
    char *out;
    int64_t out_step;
} pw_addr;

static void member_addr(const pw_run *r, const pw_member *mb, char *const *bufs, pw_addr *a)
{
    a->direct = !mb->rows_in && !mb->reduces && mb->row_k < 0;
    for (int k = 0; k < mb->pw.nin && a->direct; k++) {
        const pw_src *src = &mb->in[k];
        if (src->kind == SRC_BUF) {
            a->in[k] = bufs[src->index];
            a->in_step[k] = 0;
        } else if (src->kind == SRC_ARG && r->base[src->index]) {
            a->in[k] = r->base[src->index];
            a->in_step[k] = (int64_t)mb->in_es[k];
        } else {
            a->direct = false;
        }
    }
    a->out = mb->buf >= 0 ? bufs[mb->buf] : r->out[mb->out];
    a->out_step = mb->buf >= 0 ? 0 : (int64_t)mb->es;
}

/* The row values (from row r0 on) that member mb's row_k input reads: a
 * row member's buffer, or a row_values argument in place; NULL when that
 * argument is not contiguous this run (gathered over the chunk instead,
 * for the member's own loop). */
static const void *row_values(const pw_run *r, const pw_member *mb, char *const *bufs, int64_t r0)
{
    const pw_src *src = &mb->in[mb->row_k];
    if (src->kind == SRC_ROWS) return bufs[src->index];
    const pw_splat *sp = &r->pg->splats[src->index];
    const char *base = r->any_native ? NULL : r->row_base[sp->arg];
    return base ? base + r0 * (int64_t)mb->in_es[mb->row_k] : NULL;
}

/* Forgets the spreads of buffer buf's row values (every spread for -1):
 * buf was rewritten, or the chunk is new (run_member's spread_of). */
static void forget_spreads(int *spread_of, int buf)
{
    for (int k = 0; k < TJ_ITER_MAX_INPUTS; k++)
        if (buf < 0 || spread_of[k] == buf) spread_of[k] = -1;
}

/* Member mb on the chunk of n elements at s (rows from r0, nr of them), on
 * the general path: rows spread (or read in place by tj_k_rows_loop),
 * arguments gathered.
 * spread_of[k]: the buffer whose row values gather buffer k holds spread
 * over this chunk, -1 for none: a decomposed layer_norm subtracts its mean
 * twice (var_mean's and its own), the second time from the same spread. */
static void run_member(const pw_run *r, const pw_member *mb, char *const *bufs, char *const *gbuf, int *spread_of,
                       int64_t s, int64_t n, int64_t r0, int64_t nr)
{
    const pw_program *pg = r->pg;
    const void *in[TJ_ITER_MAX_INPUTS] = {0};
    int64_t at = mb->rows_in ? r0 : s, cnt = mb->rows_in ? nr : n;
    for (int k = 0; k < mb->pw.nin; k++) {
        const pw_src *src = &mb->in[k];
        if (src->kind == SRC_BUF || k == mb->row_k) {
            in[k] = bufs[src->index];
        } else if (src->kind == SRC_ROWS) { /* one call on the chunk: per row (short rows) costs more */
            if (spread_of[k] != src->index) tj_k_spread(gbuf[k], bufs[src->index], nr, pg->row_len, mb->in_es[k]);
            spread_of[k] = src->index;
            in[k] = gbuf[k];
        } else if (mb->rows_in) { /* an arena value of one element per row (fits) */
            assert(r->row_base[src->index]);
            in[k] = r->row_base[src->index] + at * (int64_t)mb->in_es[k];
        } else if (r->base[src->index]) {
            in[k] = r->base[src->index] + s * (int64_t)mb->in_es[k];
        } else {
            const tj_tensor *x = r->args[src->index];
            gather(gbuf[k], tj_tensor_ptr(x), mb->in_es[k], &r->geo[src->index], s, n);
            in[k] = gbuf[k];
            spread_of[k] = -1;
        }
    }
    int64_t oat = mb->rows_out ? r0 : s;
    void *o = mb->buf >= 0 ? bufs[mb->buf] : r->out[mb->out] + oat * (int64_t)mb->es;
    const void *vals = mb->row_k >= 0 ? row_values(r, mb, bufs, r0) : NULL;
    if (mb->reduces) tj_row_reduce_run(&mb->red, in[0], nr, o);
    else if (vals) tj_k_rows_loop(nr, pg->row_len, o, in[1 - mb->row_k], vals, &mb->row_arith);
    else if (mb->splat_k >= 0) tj_k_rows_loop(1, cnt, o, in[1 - mb->splat_k], in[mb->splat_k], &mb->row_arith);
    else mb->pw.fn(cnt, o, in, &mb->pw.ctx);
}

/* Elements [16 b, 16 e) of the group's shape (with rows: rows [b, e)), one
 * chunk at a time. */
static void run_lines(void *ctx, int t, int64_t b, int64_t e)
{
    (void)t;
    const pw_run *r = ctx;
    const pw_program *pg = r->pg;
    _Alignas(64) char area[PW_AREA_BYTES];
    char *bufs[PW_MAX_BUFS + TJ_ITER_MAX_INPUTS], **gbuf = bufs + pg->n_bufs;
    for (int j = 0; j < pg->n_bufs + pg->n_gather; j++) bufs[j] = area + (size_t)j * pg->buf_bytes;
    int64_t unit = pg->row_len ? pg->row_len : 16;
    int64_t start = b * unit, end = e * unit < pg->numel ? e * unit : pg->numel;
    if (start >= end) return;
    int gathered[PW_MAX_BUFS], n_gathered = 0; /* splats filled per chunk */
    for (int j = 0; j < pg->n_splats; j++) {
        const pw_splat *s = &pg->splats[j];
        if (s->gather && s->row_vector) { /* every chunk starts a row: the same chunk of rows for all */
            if (r->native_ready && s->native_only) continue;
            size_t es = tj_dtype_bytes(s->loop);
            gather(bufs[j], tj_tensor_ptr(r->args[s->arg]), es, &r->geo[s->arg], 0,
                   pg->chunk < pg->numel ? pg->chunk : pg->numel);
            continue;
        }
        if (s->gather) {
            bool in_place = s->row_values && r->row_base[s->arg] && !r->any_native;
            if (!(r->native_ready && s->native_only) && !in_place) gathered[n_gathered++] = j;
            continue;
        }
        tj_k_scalar v = s->value;
        if (s->arg >= 0) {
            const tj_tensor *x = r->args[s->arg];
            tj_k_convert(&v, s->loop, tj_tensor_ptr(x), x->dtype, 1);
        }
        tj_k_splat(bufs[j], &v, pg->chunk, tj_dtype_bytes(s->loop));
    }
    pw_addr addr[PW_MAX_MEMBERS];
    bool rows = pg->row_len != 0;
    int copied[PW_MAX_MEMBERS], n_copied = 0; /* results read elsewhere too, copied out after every read */
    for (int m = 0; m < pg->n_members; m++) {
        member_addr(r, &pg->members[m], bufs, &addr[m]);
        if (pg->members[m].out >= 0 && pg->members[m].buf >= 0) copied[n_copied++] = m;
    }
    for (int64_t s = start; s < end; s += pg->chunk) {
        int64_t n = end - s < pg->chunk ? end - s : pg->chunk;
        int64_t r0 = pg->row_len ? s / pg->row_len : 0, nr = pg->row_len ? n / pg->row_len : 0;
        for (int i = 0; i < n_gathered; i++) {
            const pw_splat *sp = &pg->splats[gathered[i]];
            size_t es = tj_dtype_bytes(sp->loop);
            if (r->base[sp->arg]) memcpy(bufs[gathered[i]], r->base[sp->arg] + s * (int64_t)es, (size_t)n * es);
            else gather(bufs[gathered[i]], tj_tensor_ptr(r->args[sp->arg]), es, &r->geo[sp->arg], s, n);
        }
        int spread_of[TJ_ITER_MAX_INPUTS]; /* see run_member; a buffer's values stay while it is read */
        forget_spreads(spread_of, -1);
        for (int m = 0, seg = 0; m < pg->n_members; m++) {
            if (seg < pg->n_segments && pg->segments[seg].first == m) {
                const pw_segment *sg = &pg->segments[seg];
                if (r->segment_ready[seg++]) { /* else its members' loops run */
                    run_segment(r, sg, bufs, s, n);
                    m += sg->n - 1;
                    forget_spreads(spread_of, -1); /* its results' buffers */
                    continue;
                }
            }
            const pw_member *mb = &pg->members[m];
            const pw_addr *a = &addr[m];
            if (a->direct) {
                const void *in[TJ_ITER_MAX_INPUTS];
                for (int k = 0; k < mb->pw.nin; k++) in[k] = a->in[k] + s * a->in_step[k];
                char *o = a->out + s * a->out_step;
                if (mb->splat_k >= 0) tj_k_rows_loop(1, n, o, in[1 - mb->splat_k], in[mb->splat_k], &mb->row_arith);
                else mb->pw.fn(n, o, in, &mb->pw.ctx);
            } else {
                run_member(r, mb, bufs, gbuf, spread_of, s, n, r0, nr);
            }
            if (rows && mb->buf >= 0) forget_spreads(spread_of, mb->buf); /* a buffer rewritten: its spread is stale */
        }
        for (int i = 0; i < n_copied; i++) {
            const pw_member *mb = &pg->members[copied[i]];
            int64_t oat = mb->rows_out ? r0 : s, cnt = mb->rows_out ? nr : n;
            memcpy(r->out[mb->out] + oat * (int64_t)mb->es, bufs[mb->buf], (size_t)cnt * mb->es);
        }
    }
}

/* args[0]: the program; args[1 ..]: the tensors it reads; outs: the
 * members' results written out, in member order. */
tj_status tj_kernel_fused_pointwise(const tj_value *args, tj_tensor *const *outs)
{
    const pw_program *pg = (const pw_program *)(intptr_t)args[0].u.i;
    pw_run r;
    r.pg = pg;
    for (int j = 0; j < pg->n_args; j++) {
        const tj_tensor *x = args[1 + j].u.t;
        r.args[j] = x;
        r.base[j] = r.row_base[j] = r.col_base[j] = NULL;
        if (x->numel == 1 && pg->numel != 1) continue; /* read through splats only */
        bool same = x->ndim == pg->ndim, same_rows = same, contiguous = true;
        int64_t want = 1, strides[TJ_MAX_DIMS];
        for (int d = pg->ndim - 1; d >= 0; d--) {
            int xd = d - (pg->ndim - x->ndim);
            int64_t size = xd >= 0 ? x->shape[xd] : 1, stride = xd >= 0 && size != 1 ? x->strides[xd] : 0;
            same = same && size == pg->shape[d];
            same_rows = same_rows && size == (d == pg->ndim - 1 ? 1 : pg->shape[d]);
            if (size != 1 && stride != want) contiguous = false;
            want *= size;
            strides[d] = stride;
        }
        if (same && contiguous) r.base[j] = tj_tensor_ptr(x);
        if (pg->row_len && same_rows && contiguous) r.row_base[j] = tj_tensor_ptr(x);
        bool one_row = pg->row_len && strides[pg->ndim - 1] == 1; /* a row of the group's length, repeated */
        for (int d = 0; one_row && d < pg->ndim - 1; d++) one_row = strides[d] == 0;
        if (one_row) r.col_base[j] = tj_tensor_ptr(x);
        pw_geometry *g = &r.geo[j]; /* merged dims, size-1 dims dropped */
        g->ndim = 0;
        for (int d = 0; d < pg->ndim; d++) {
            if (pg->shape[d] == 1) continue;
            if (g->ndim && g->strides[g->ndim - 1] == strides[d] * pg->shape[d]) {
                g->shape[g->ndim - 1] *= pg->shape[d];
                g->strides[g->ndim - 1] = strides[d];
                continue;
            }
            g->shape[g->ndim] = pg->shape[d];
            g->strides[g->ndim++] = strides[d];
        }
        if (!g->ndim) { /* a single element */
            g->shape[0] = 1;
            g->strides[0] = 0;
            g->ndim = 1;
        }
    }
    for (int k = 0; k < pg->n_outs; k++) r.out[k] = tj_tensor_ptr(outs[k]);
    r.native_ready = true;
    r.any_native = false;
    assert(pg->n_segments <= PW_MAX_MEMBERS); /* disjoint runs of members */
    for (int k = 0; k < pg->n_segments; k++) {
        r.segment_ready[k] = segment_can_run(&r, &pg->segments[k]);
        r.native_ready &= r.segment_ready[k];
        r.any_native |= r.segment_ready[k];
    }
    int64_t lines = pg->row_len ? pg->numel / pg->row_len : (pg->numel + 15) / 16;
    tj_k_parallel(tj_threads_for(pg->numel), lines, run_lines, &r);
    return TJ_OK;
}

/* ---- compile time: groups ---- */

typedef struct group {
    int id;           /* > 0 while open */
    int ndim;
    int64_t shape[TJ_MAX_DIMS];
    int n;
    int node[PW_MAX_MEMBERS];
    tj_pointwise pw[PW_MAX_MEMBERS];
    bool rows_in[PW_MAX_MEMBERS];   /* computes on one value per row (a row member) */
    bool reduces[PW_MAX_MEMBERS];   /* a row reduction, red */
    tj_row_reduce red[PW_MAX_MEMBERS];
    int n_red;        /* row reductions among the members: the step walks whole rows */
    size_t max_es;    /* bytes of the widest result or loop element */
    int last_step;    /* step index of the last member */
    int live, peak;   /* member results still to be read (estimate of buffers) */
    int n_splats;     /* splats and gathered tensors (pw_splat) */
    int splat_v[PW_MAX_BUFS];
    bool splat_gather[PW_MAX_BUFS];
    tj_dtype splat_loop[PW_MAX_BUFS];
    tj_k_scalar splat_value[PW_MAX_BUFS];
    int n_args;
    int arg_v[PW_MAX_ARGS];
} group;

typedef struct fuser {
    tj_plan *p;
    tj_plan_uses u;
    int *gid;    /* per value: the open group whose member made it, else 0 */
    int *left;   /* per value made by an open group's member: reads not yet seen */
    size_t bytes;
    group open[PW_MAX_OPEN];
    int next_id;
    int n_groups, n_members, n_red;
    int n_merged; /* comparisons merged into their wheres */
} fuser;

/* How a node would compute as a member: over the shape `shape` (the
 * group's; with rows_in, its rows' [..., 1]); reduces: a row reduction
 * (red) of an operand of the group's shape, into one value per row. */
typedef struct role {
    int ndim;
    const int64_t *shape;
    bool rows_in, reduces;
    tj_row_reduce red;
} role;

static bool same_shape(int nd, const int64_t *a, int nd2, const int64_t *b)
{
    return nd == nd2 && memcmp(a, b, sizeof(int64_t) * (size_t)nd) == 0;
}

/* Whether value v, of another group's shape or not of one, broadcasts to
 * shape and has the strides of a tensor (any; gathered if not contiguous). */
static bool broadcasts(const tj_pvalue *v, int nd, const int64_t *shape)
{
    if (v->ndim > nd) return false;
    for (int d = 0; d < v->ndim; d++) {
        int64_t s = v->shape[d], t = shape[nd - v->ndim + d];
        if (s != t && s != 1) return false;
    }
    return true;
}

/* Whether value v is contiguous (as compiled) and of the given shape: read
 * in place. */
static bool in_place(const tj_pvalue *v, int nd, const int64_t *shape)
{
    if (!same_shape(v->ndim, v->shape, nd, shape)) return false;
    int64_t want = 1;
    for (int d = nd - 1; d >= 0; d--) {
        if (shape[d] != 1 && v->strides[d] != want) return false;
        want *= shape[d];
    }
    return true;
}

static group *find_group(fuser *f, int id)
{
    for (int i = 0; i < PW_MAX_OPEN; i++)
        if (f->open[i].id == id) return &f->open[i];
    return NULL;
}

/* The label "fused pointwise (aten::mul.Tensor, aten::add.Tensor, ...)",
 * "fused rows (...)" with row reductions: the members' operators, each
 * once, in order, the first three. */
static const char *group_label(tj_plan *p, const group *g)
{
    char buf[256];
    int len = snprintf(buf, sizeof buf, g->n_red ? "fused rows (" : "fused pointwise (");
    const tj_op *seen[PW_MAX_MEMBERS];
    int n_seen = 0;
    for (int m = 0; m < g->n; m++) {
        const tj_op *op = p->nodes[g->node[m]].op;
        bool dup = false;
        for (int k = 0; k < n_seen; k++) dup |= seen[k] == op;
        if (dup) continue;
        if (n_seen == 3) {
            len += snprintf(buf + len, sizeof buf - (size_t)len, ", ...");
            break;
        }
        len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%s", n_seen ? ", " : "", op->name);
        seen[n_seen++] = op;
    }
    snprintf(buf + len, sizeof buf - (size_t)len, ")");
    char *s = tj_pool_alloc(p->pool, strlen(buf) + 1);
    if (s) strcpy(s, buf);
    return s;
}

static int arg_index(const group *g, int v)
{
    for (int j = 0; j < g->n_args; j++)
        if (g->arg_v[j] == v) return j;
    return -1;
}

/* Whether value v is read as one element repeated: one element, in a
 * group of more (or of another shape). */
static bool is_one(const tj_pvalue *v, const group *g)
{
    return v->numel == 1 && !same_shape(v->ndim, v->shape, g->ndim, g->shape);
}

/* The splat buffer holding value v (or, v = -1, the Scalar *s) in loop dtype dt. */
static int splat_index(const group *g, int v, tj_dtype dt, const tj_k_scalar *s)
{
    for (int j = 0; j < g->n_splats; j++)
        if (g->splat_loop[j] == dt && g->splat_v[j] == v && (v >= 0 || (s && !memcmp(&g->splat_value[j], s, sizeof *s))))
            return j;
    return -1;
}

/* The value member m of g reads as input k, -1 for a Scalar. */
static int input_value(const tj_plan *p, const group *g, int m, int k)
{
    int a = g->pw[m].arg[k];
    return a >= 0 ? p->nodes[g->node[m]].args[a].u.v : -1;
}

/* Member node i, merged into a later member, leaves the plan with its
 * result, value u; its flops. */
static double merged_away(tj_plan *p, int i, int u)
{
    tj_pnode *n = &p->nodes[i];
    n->is_step = false;
    n->fused = true;
    p->values[u].kind = TJ_PV_UNUSED;
    return n->flops;
}

/* Removes the members marked gone from g (and their inputs from in_v). */
static void drop_members(group *g, int in_v[][TJ_ITER_MAX_INPUTS], const bool *gone)
{
    int kept = 0;
    for (int m = 0; m < g->n; m++) {
        if (gone[m]) continue;
        g->node[kept] = g->node[m];
        g->pw[kept] = g->pw[m];
        g->rows_in[kept] = g->rows_in[m];
        g->reduces[kept] = g->reduces[m];
        g->red[kept] = g->red[m];
        memcpy(in_v[kept], in_v[m], sizeof in_v[m]);
        kept++;
    }
    g->n = kept;
}

/* The member of g before q producing value u, a comparison (EQ .. GE)
 * over the group's shape whose mask only member q reads; -1 if none. */
static int sole_compare(const fuser *f, const group *g, int q, int u)
{
    if (u < 0 || tj_plan_sole_user(&f->u, u) != g->node[q]) return -1;
    int m = q - 1;
    while (m >= 0 && f->p->nodes[g->node[m]].outs[0] != u) m--;
    if (m < 0 || g->rows_in[m] || g->reduces[m]) return -1;
    const tj_pointwise *c = &g->pw[m];
    return c->fn == tj_k_compare_loop && c->ctx.compare.op <= TJ_K_GE ? m : -1;
}

/* Merges each comparison whose mask only a where of the group reads (as
 * its condition) into that where: one loop, where(a op b, x, y)
 * (tj_k_compare_where_loop), reading the comparison's operands where the
 * where stood. Every operand is still there: arguments are not written
 * before the last member has read them, and a buffer lives until its last
 * reader. Decompositions select on comparisons everywhere (relu's and
 * max_pool's backward, masked fills, nan tests): a pass over the chunk and
 * its mask of bytes less each. in_v[m][k]: the value member m reads as
 * input k (-1: a Scalar), updated with the members; merged comparisons
 * leave g, their flops added to *flops. */
static void merge_compare_where(fuser *f, group *g, int in_v[][TJ_ITER_MAX_INPUTS], double *flops)
{
    tj_plan *p = f->p;
    bool gone[PW_MAX_MEMBERS] = {false};
    if (g->n_red) return; /* steps walking rows were placed (row_fits) for loops of PW_OP_INPUTS; without
                             row reductions no member is a row member */
    for (int q = 0; q < g->n; q++) {
        const tj_pointwise *w = &g->pw[q];
        int u = in_v[q][0], m = w->fn == tj_k_where_loop ? sole_compare(f, g, q, u) : -1;
        if (m < 0) continue;
        const tj_pointwise *c = &g->pw[m];
        tj_pointwise merged = {.fn = tj_k_compare_where_loop, .nin = 4};
        merged.ctx.compare_where = (tj_k_compare_where_args){
            .op = c->ctx.compare.op, .compare = c->ctx.compare.dtype, .dtype = w->ctx.select.dtype};
        int v[TJ_ITER_MAX_INPUTS] = {in_v[m][0], in_v[m][1], in_v[q][1], in_v[q][2]};
        const tj_pointwise *from[TJ_ITER_MAX_INPUTS] = {c, c, w, w};
        const int at[TJ_ITER_MAX_INPUTS] = {0, 1, 1, 2};
        for (int k = 0; k < 4; k++) {
            merged.arg[k] = from[k]->arg[at[k]]; /* read through in_v from here on; -1 still marks a Scalar */
            merged.loop[k] = from[k]->loop[at[k]];
            merged.scalar[k] = from[k]->scalar[at[k]];
            in_v[q][k] = v[k];
        }
        g->pw[q] = merged;
        gone[m] = true;
        f->n_merged++;
        *flops += merged_away(p, g->node[m], u);
    }
    drop_members(g, in_v, gone);
}

/* The outcomes a comparison a op b is true for, among less, equal,
 * greater and unordered (a nan on either side): or-ing two masks of the
 * same operands unites these sets, and a union that is one comparison's
 * set has that comparison's exact bits. */
enum { OUT_LESS = 1, OUT_EQUAL = 2, OUT_GREATER = 4, OUT_UNORDERED = 8 };
static const unsigned compare_outcomes[TJ_K_GE + 1] = {
    [TJ_K_EQ] = OUT_EQUAL, [TJ_K_NE] = OUT_LESS | OUT_GREATER | OUT_UNORDERED, [TJ_K_LT] = OUT_LESS,
    [TJ_K_LE] = OUT_LESS | OUT_EQUAL,   [TJ_K_GT] = OUT_GREATER, [TJ_K_GE] = OUT_GREATER | OUT_EQUAL};

/* Whether input k of loop w, value v (-1: a Scalar), is true in every
 * run: a true bool Scalar, or a folded bool constant of one element, true
 * (fold.c folds no result a node writes; a graph constant may be the
 * caller's tensor, updated between runs). */
static bool always_true(const tj_plan *p, const tj_pointwise *w, int k, int v)
{
    if (w->loop[k] != TJ_BOOL) return false;
    if (v < 0) return w->scalar[k].b != 0;
    const tj_pvalue *pv = &p->values[v];
    return pv->kind == TJ_PV_CONSTANT && pv->dtype == TJ_BOOL && pv->numel == 1 && pv->node >= 0 &&
           p->nodes[pv->node].folded && *(const uint8_t *)tj_tensor_data(pv->constant) != 0;
}

/* Whether input i of loop a (value va) and input j of loop b (value vb)
 * are the same operand in the same loop dtype. */
static bool same_input(const tj_pointwise *a, int i, int va, const tj_pointwise *b, int j, int vb)
{
    return va == vb && a->loop[i] == b->loop[j] &&
           (va >= 0 || !memcmp(&a->scalar[i], &b->scalar[j], sizeof a->scalar[i]));
}

/* The outcomes of comparison member m as a comparison of member r's
 * operands (swapped: less and greater trade places); 0 when it compares
 * others. */
static unsigned outcomes_as(const group *g, int in_v[][TJ_ITER_MAX_INPUTS], int m, int r)
{
    const tj_pointwise *c = &g->pw[m], *d = &g->pw[r];
    unsigned s = compare_outcomes[c->ctx.compare.op];
    if (c->ctx.compare.dtype != d->ctx.compare.dtype) return 0;
    if (same_input(c, 0, in_v[m][0], d, 0, in_v[r][0]) && same_input(c, 1, in_v[m][1], d, 1, in_v[r][1])) return s;
    if (same_input(c, 0, in_v[m][0], d, 1, in_v[r][1]) && same_input(c, 1, in_v[m][1], d, 0, in_v[r][0]))
        return (s & (OUT_EQUAL | OUT_UNORDERED)) | (s & OUT_LESS) << 2 | (s & OUT_GREATER) >> 2;
    return 0;
}

/* The comparison member q of g computes as where(c1, true, c2) = c1 or c2,
 * c1 and c2 comparisons of the same operands (members m[0], m[1]) that
 * only q reads, when their outcomes together are one comparison's (lt or
 * eq: le; not lt or gt, false for nan where ne is true); -1 when none. */
static int compare_of_masks(const fuser *f, const group *g, int in_v[][TJ_ITER_MAX_INPUTS], int q, int m[2])
{
    const tj_pointwise *w = &g->pw[q];
    if (w->fn != tj_k_where_loop || w->ctx.select.dtype != TJ_BOOL || g->rows_in[q] || g->reduces[q] ||
        in_v[q][0] == in_v[q][2] || !always_true(f->p, w, 1, in_v[q][1]))
        return -1;
    m[0] = sole_compare(f, g, q, in_v[q][0]);
    m[1] = sole_compare(f, g, q, in_v[q][2]);
    unsigned other = m[0] >= 0 && m[1] >= 0 ? outcomes_as(g, in_v, m[1], m[0]) : 0;
    if (!other) return -1;
    unsigned s = compare_outcomes[g->pw[m[0]].ctx.compare.op] | other;
    for (int op = TJ_K_EQ; op <= TJ_K_GE; op++)
        if (compare_outcomes[op] == s) return op;
    return -1;
}

/* Makes each where of two comparison masks that computes one comparison
 * of their operands (compare_of_masks) that comparison, in its place, the
 * two leaving the group (counted among the comparisons merged). The core
 * table writes le as where(lt, true, eq) and ge as its mirror
 * (decomps/compare.c): a decomposed relu backward, where(le(x, 0), 0, g),
 * would run as three loops, two masks of bytes written and read; as one
 * comparison, merge_compare_where then runs it inside its where, one
 * loop. Reading the comparisons' operands where the where stood is safe as
 * in merge_compare_where. */
static void merge_compare_masks(fuser *f, group *g, int in_v[][TJ_ITER_MAX_INPUTS], double *flops)
{
    bool gone[PW_MAX_MEMBERS] = {false};
    for (int q = 0; q < g->n; q++) {
        int m[2], op = compare_of_masks(f, g, in_v, q, m);
        if (op < 0) continue;
        int u[2] = {in_v[q][0], in_v[q][2]};
        g->pw[q] = g->pw[m[0]];
        g->pw[q].ctx.compare.op = (tj_k_compare_op)op;
        in_v[q][0] = in_v[m[0]][0];
        in_v[q][1] = in_v[m[0]][1];
        for (int i = 0; i < 2; i++) {
            gone[m[i]] = true;
            f->n_merged++;
            *flops += merged_away(f->p, g->node[m[i]], u[i]);
        }
    }
    drop_members(g, in_v, gone);
}

/* The float add of group g's member q (its inputs in_v[q]) reading, as
 * operand k alone, the result of a mul member m of its dtype that nothing
 * else reads, both over the group's shape: m, k set; false if none. */
static bool mul_feeding_add(const fuser *f, const group *g, int in_v[][TJ_ITER_MAX_INPUTS], int q, int *m,
                            int *k)
{
    const tj_plan *p = f->p;
    const tj_pointwise *w = &g->pw[q];
    if (w->fn != tj_k_add_loop || g->rows_in[q] || g->reduces[q]) return false;
    tj_dtype dt = w->ctx.axpby.dtype;
    if (dt != TJ_FLOAT32 && dt != TJ_FLOAT64) return false;
    for (*k = 0; *k < 2; (*k)++) {
        int u = in_v[q][*k];
        if (u < 0 || in_v[q][1 - *k] == u || tj_plan_sole_user(&f->u, u) != g->node[q]) continue;
        for (*m = q - 1; *m >= 0 && p->nodes[g->node[*m]].outs[0] != u; (*m)--) {}
        if (*m < 0) continue;
        const tj_pointwise *c = &g->pw[*m];
        if (c->fn == tj_k_binary_loop && c->ctx.binary.op == TJ_K_MUL && c->ctx.binary.dtype == dt &&
            !g->rows_in[*m] && !g->reduces[*m])
            return true;
    }
    return false;
}

/* Merges each mul whose product only an add of the group reads into that
 * add: one loop, p + alpha z or z + alpha p with p = x y
 * (tj_k_mul_add_loop), reading the mul's operands where the add stood (as
 * merge_compare_where). A decomposed gelu's x + c x^3, layer_norm's
 * y w + b, the optimisers' updates: a pass over the chunk less each. */
static void merge_mul_add(fuser *f, group *g, int in_v[][TJ_ITER_MAX_INPUTS], double *flops)
{
    bool gone[PW_MAX_MEMBERS] = {false};
    for (int q = 0; q < g->n; q++) {
        int m, k;
        if (!mul_feeding_add(f, g, in_v, q, &m, &k)) continue;
        const tj_pointwise *c = &g->pw[m], *w = &g->pw[q];
        tj_pointwise merged = {.fn = tj_k_mul_add_loop, .nin = 3};
        merged.ctx.mul_add = (tj_k_mul_add_args){
            .dtype = w->ctx.axpby.dtype, .alpha = w->ctx.axpby.alpha, .product_first = k == 0};
        int u = in_v[q][k], v[3] = {in_v[m][0], in_v[m][1], in_v[q][1 - k]};
        const tj_pointwise *from[3] = {c, c, w};
        const int at[3] = {0, 1, 1 - k};
        for (int i = 0; i < 3; i++) {
            merged.arg[i] = from[i]->arg[at[i]]; /* as in merge_compare_where */
            merged.loop[i] = from[i]->loop[at[i]];
            merged.scalar[i] = from[i]->scalar[at[i]];
            in_v[q][i] = v[i];
        }
        g->pw[q] = merged;
        gone[m] = true;
        *flops += merged_away(f->p, g->node[m], u);
    }
    drop_members(g, in_v, gone);
}

/* Whether member mb is a float add, mul or div of two operands, which
 * tj_k_rows_loop computes with input k as the row value (*a set). */
static bool row_value_arith(const pw_member *mb, int k, tj_k_rows_args *a)
{
    const tj_pointwise *pw = &mb->pw;
    if (mb->reduces || pw->nin != 2) return false;
    if (pw->fn == tj_k_add_loop && (pw->ctx.axpby.dtype == TJ_FLOAT32 || pw->ctx.axpby.dtype == TJ_FLOAT64))
        *a = (tj_k_rows_args){.op = TJ_K_ROWS_ADD, .dtype = pw->ctx.axpby.dtype, .alpha = pw->ctx.axpby.alpha};
    else if (pw->fn == tj_k_binary_loop && (pw->ctx.binary.op == TJ_K_MUL || pw->ctx.binary.op == TJ_K_DIV) &&
             (pw->ctx.binary.dtype == TJ_FLOAT32 || pw->ctx.binary.dtype == TJ_FLOAT64))
        *a = (tj_k_rows_args){.op = pw->ctx.binary.op == TJ_K_MUL ? TJ_K_ROWS_MUL : TJ_K_ROWS_DIV,
                              .dtype = pw->ctx.binary.dtype};
    else
        return false;
    a->rows_first = k == 0;
    return true;
}

/* The input of member mb (its sources set) that tj_k_rows_loop takes as
 * the row values, -1 when it runs its own loop: a float add, mul or div
 * over the group's shape with one operand a value per row (*a set). */
static int rows_operand(const pw_member *mb, const pw_splat *splats, int n_splats, tj_k_rows_args *a)
{
    if (mb->rows_in || mb->pw.nin != 2) return -1;
    bool rows[2], splat[2];
    for (int k = 0; k < 2; k++) {
        const pw_src *src = &mb->in[k];
        splat[k] = src->kind == SRC_BUF && src->index < n_splats;
        rows[k] = src->kind == SRC_ROWS || (splat[k] && splats[src->index].row_values);
    }
    if (rows[0] == rows[1]) return -1;
    int k = rows[0] ? 0 : 1;
    if (mb->in[k].kind != SRC_ROWS && splat[1 - k]) return -1; /* the other a splat or row vector: its own loop */
    return row_value_arith(mb, k, a) ? k : -1;
}

/* Whether input k of member mb is a splat (splats[0, n): a literal or a
 * one-element tensor, repeated). */
static bool reads_splat(const pw_member *mb, int k, const pw_splat *splats, int n)
{
    const pw_src *src = &mb->in[k];
    return src->kind == SRC_BUF && src->index < n && !splats[src->index].gather;
}

/* The input of member mb that tj_k_rows_loop takes as the value of one row
 * (the chunk), -1 when none: a float add, mul or div of a splat and an
 * operand that is not (*a set). The loop reads the splat's first element
 * instead of the whole buffer: the optimiser's and gelu's constants, a
 * stream each less through L1 (rewrite's chunk counts the rest). */
static int splat_operand(const pw_member *mb, const pw_splat *splats, int n, tj_k_rows_args *a)
{
    if (mb->pw.nin != 2 || reads_splat(mb, 0, splats, n) == reads_splat(mb, 1, splats, n)) return -1;
    int k = reads_splat(mb, 0, splats, n) ? 0 : 1;
    return row_value_arith(mb, k, a) ? k : -1;
}

/* Whether member mb's loop reads only the first element of its input k (a
 * splat): splat_k's, a mul_add's one_b, a compare_where's one. */
static bool reads_one(const pw_member *mb, int k)
{
    return k == mb->splat_k || (mb->pw.fn == tj_k_mul_add_loop && k == 1 && mb->pw.ctx.mul_add.one_b) ||
           (mb->pw.fn == tj_k_compare_where_loop && mb->pw.ctx.compare_where.one >> k & 1);
}

/* Group g becomes one step in its last member's place. */
static tj_status rewrite(fuser *f, group *g)
{
    tj_plan *p = f->p;
    pw_program *pg = tj_pool_alloc(p->pool, sizeof *pg);
    pw_member *mem = tj_pool_alloc(p->pool, sizeof *mem * (size_t)g->n);
    pw_splat *splats = tj_pool_alloc(p->pool, sizeof *splats * (size_t)(g->n_splats + 1));
    tj_garg *args = tj_pool_alloc(p->pool, sizeof *args * (size_t)(g->n_args + 1));
    int *outs = tj_pool_alloc(p->pool, sizeof *outs * (size_t)g->n);
    const char *label = group_label(p, g); /* the calls fused, merged comparisons too */
    if (!pg || !mem || !splats || !args || !outs || !label) return TJ_ERR_OUT_OF_MEMORY;
    int n_calls = g->n, in_v[PW_MAX_MEMBERS][TJ_ITER_MAX_INPUTS];
    for (int m = 0; m < g->n; m++)
        for (int k = 0; k < g->pw[m].nin; k++) in_v[m][k] = input_value(p, g, m, k);
    double flops = 0, bytes = 0;
    merge_compare_masks(f, g, in_v, &flops);
    merge_compare_where(f, g, in_v, &flops);
    merge_mul_add(f, g, in_v, &flops);
    pg->ndim = g->ndim;
    memcpy(pg->shape, g->shape, sizeof pg->shape);
    pg->numel = 1;
    for (int d = 0; d < g->ndim; d++) pg->numel *= g->shape[d];
    pg->row_len = g->n_red ? g->shape[g->ndim - 1] : 0;
    int64_t row_shape[TJ_MAX_DIMS]; /* one value per row */
    memcpy(row_shape, g->shape, sizeof row_shape);
    if (g->n_red) row_shape[g->ndim - 1] = 1; /* a group with row reductions has a last dim */
    pg->members = mem;
    pg->splats = splats;
    pg->n_members = g->n;
    pg->n_splats = g->n_splats;
    pg->n_args = g->n_args;
    for (int j = 0; j < g->n_splats; j++) {
        const tj_pvalue *sv = g->splat_v[j] >= 0 ? &p->values[g->splat_v[j]] : NULL;
        bool row_vector = g->splat_gather[j] && pg->row_len && sv->numel == pg->row_len &&
                          sv->shape[sv->ndim - 1] == pg->row_len;
        bool row_values = g->splat_gather[j] && pg->row_len && sv->ndim && sv->numel * pg->row_len == pg->numel &&
                          sv->shape[sv->ndim - 1] == 1; /* the run checks the rest (row_base) */
        splats[j] = (pw_splat){.arg = sv ? arg_index(g, g->splat_v[j]) : -1, .gather = g->splat_gather[j],
                               .row_vector = row_vector, .row_values = row_values, .loop = g->splat_loop[j],
                               .value = g->splat_value[j]};
    }
    args[0] = (tj_garg){.kind = TJ_GA_INT, .u.i = (int64_t)(intptr_t)pg};
    for (int j = 0; j < g->n_args; j++) args[1 + j] = (tj_garg){.kind = TJ_GA_VALUE, .u.v = g->arg_v[j]};
    /* buffers: the splats', then member results by a linear scan */
    int buf_of[PW_MAX_MEMBERS], reads_left[PW_MAX_MEMBERS];
    bool free_buf[PW_MAX_BUFS];
    for (int b = 0; b < PW_MAX_BUFS; b++) free_buf[b] = b >= g->n_splats;
    int n_bufs = g->n_splats, n_outs = 0;
    size_t max_es = 1;
    for (int m = 0; m < g->n; m++) {
        const tj_pnode *n = &p->nodes[g->node[m]];
        int v = n->outs[0];
        reads_left[m] = 0;
        for (int k = m + 1; k < g->n; k++)
            for (int i = 0; i < g->pw[k].nin; i++) reads_left[m] += in_v[k][i] == v;
        size_t es = tj_dtype_bytes(p->values[v].dtype);
        if (es > max_es) max_es = es;
    }
    for (int m = 0; m < g->n; m++) {
        tj_pnode *n = &p->nodes[g->node[m]];
        pw_member *mb = &mem[m];
        mb->pw = g->pw[m];
        mb->reduces = g->reduces[m];
        mb->red = g->red[m];
        mb->rows_in = g->rows_in[m];
        mb->rows_out = mb->rows_in || mb->reduces;
        const int64_t *walk = mb->rows_in ? row_shape : g->shape;
        int v = n->outs[0];
        tj_pvalue *pv = &p->values[v];
        mb->dtype = pv->dtype;
        mb->es = tj_dtype_bytes(pv->dtype);
        for (int k = 0; k < mb->pw.nin; k++) {
            mb->in_es[k] = tj_dtype_bytes(mb->pw.loop[k]);
            int u = in_v[m][k];
            int producer = -1;
            for (int q = 0; u >= 0 && q < m; q++)
                if (p->nodes[g->node[q]].outs[0] == u) producer = q;
            if (producer >= 0) {
                mb->in[k] = (pw_src){mem[producer].rows_out && !mb->rows_in ? SRC_ROWS : SRC_BUF, buf_of[producer]};
                reads_left[producer]--;
            } else if (u < 0 || is_one(&p->values[u], g)) {
                int splat = splat_index(g, u, mb->pw.loop[k], &mb->pw.scalar[k]);
                assert(splat >= 0);
                mb->in[k] = (pw_src){SRC_BUF, splat};
            } else if (!in_place(&p->values[u], g->ndim, walk)) {
                int gathered = splat_index(g, u, mb->pw.loop[k], NULL);
                assert(gathered >= 0 && g->splat_gather[gathered]);
                mb->in[k] = (pw_src){SRC_BUF, gathered};
            } else {
                mb->in[k] = (pw_src){SRC_ARG, arg_index(g, u)};
                assert(mb->in[k].index >= 0);
            }
        }
        mb->row_k = rows_operand(mb, splats, g->n_splats, &mb->row_arith);
        mb->splat_k = mb->row_k < 0 ? splat_operand(mb, splats, g->n_splats, &mb->row_arith) : -1;
        if (mb->pw.fn == tj_k_mul_add_loop) mb->pw.ctx.mul_add.one_b = reads_splat(mb, 1, splats, g->n_splats);
        if (mb->pw.fn == tj_k_compare_where_loop) /* x < 0, where(c op x, c, x): constants read once */
            for (int k = 0; k < 4; k++)
                mb->pw.ctx.compare_where.one |= (unsigned)reads_splat(mb, k, splats, g->n_splats) << k;
        /* results read for the last time free their buffers, before the
         * result takes one when of its element size (a loop may write over
         * its input exactly), else after; results written out keep theirs */
        int after[TJ_ITER_MAX_INPUTS], n_after = 0;
        for (int q = 0; q < m; q++) {
            if (reads_left[q] != 0 || mem[q].out >= 0 || buf_of[q] < 0) continue;
            if (mem[q].es == mb->es && !mb->reduces) free_buf[buf_of[q]] = true; /* a reduction's rows
                                                                                    are read whole first */
            else after[n_after++] = buf_of[q];
            buf_of[q] = -2; /* freed once */
        }
        /* reads outside the group: written out (the last member straight into its block) */
        int in_group = 0;
        for (int k = m + 1; k < g->n; k++)
            for (int i = 0; i < g->pw[k].nin; i++) in_group += in_v[k][i] == v;
        bool written = f->u.count[v] > in_group || (m == g->n - 1 && f->u.count[v] > 0);
        mb->out = written ? n_outs : -1;
        if (written) {
            outs[n_outs++] = v;
            bytes += (double)pv->numel * (double)mb->es;
        }
        if (written && m == g->n - 1) {
            mb->buf = buf_of[m] = -1;
        } else {
            int b = 0;
            while (b < PW_MAX_BUFS && !free_buf[b]) b++;
            assert(b < PW_MAX_BUFS);
            free_buf[b] = false;
            mb->buf = buf_of[m] = b;
            if (b + 1 > n_bufs) n_bufs = b + 1;
            if (reads_left[m] == 0 && !written) free_buf[b] = true; /* read by nothing (kept by no_dead_code) */
        }
        for (int k = 0; k < n_after; k++) free_buf[after[k]] = true;
        flops += n->flops;
        if (m < g->n - 1) {
            n->is_step = false;
            n->fused = true;
        }
        if (written) {
            pv->node = g->node[g->n - 1];
            pv->index = mb->out;
        } else {
            pv->kind = TJ_PV_UNUSED;
        }
    }
    for (int j = 0; j < g->n_args; j++) {
        const tj_pvalue *a = &p->values[g->arg_v[j]];
        bytes += (double)a->numel * (double)tj_dtype_bytes(a->dtype);
    }
    pg->n_bufs = n_bufs;
    pg->n_outs = n_outs;
    /* the chunk: the buffers (and gather buffers) fit the area, and with
     * the streamed operands and results, most of L1 */
    for (int j = 0; j < g->n_splats; j++)
        if (tj_dtype_bytes(g->splat_loop[j]) > max_es) max_es = tj_dtype_bytes(g->splat_loop[j]);
    for (int m = 0; m < g->n; m++)
        for (int k = 0; k < g->pw[m].nin; k++)
            if (tj_dtype_bytes(g->pw[m].loop[k]) > max_es) max_es = tj_dtype_bytes(g->pw[m].loop[k]);
    pg->n_gather = PW_OP_INPUTS; /* a gather buffer for each input of a member */
    for (int m = 0; m < g->n; m++)
        if (g->pw[m].nin > pg->n_gather) pg->n_gather = g->pw[m].nin;
    int n_area = n_bufs + pg->n_gather, n_streams = n_bufs + n_outs;
    if (pg->row_len) n_streams += pg->n_gather; /* spreads; without rows, gathers of arguments come restrided */
    for (int j = 0; j < g->n_splats; j++) /* row values read other than as row_k: gathered */
        for (int m = 0; m < g->n && splats[j].row_values; m++)
            for (int k = 0; k < mem[m].pw.nin; k++)
                if (mem[m].in[k].kind == SRC_BUF && mem[m].in[k].index == j && k != mem[m].row_k)
                    splats[j].row_values = false;
    for (int j = 0; j < g->n_splats; j++) { /* a splat only loops reading one value (or rows) read: an element */
        bool whole = g->splat_gather[j] && !splats[j].row_values;
        for (int m = 0; m < g->n && !whole && !g->splat_gather[j]; m++)
            for (int k = 0; k < mem[m].pw.nin; k++)
                whole |= mem[m].in[k].kind == SRC_BUF && mem[m].in[k].index == j && !reads_one(&mem[m], k);
        n_streams -= !whole;
    }
    for (int j = 0; j < g->n_args; j++) n_streams += !is_one(&p->values[g->arg_v[j]], g);
    int64_t chunk = PW_CACHE_BYTES / (int64_t)((size_t)n_streams * max_es);
    int64_t area_max = PW_AREA_BYTES / (int64_t)((size_t)n_area * max_es);
    if (chunk > area_max) chunk = area_max;
    if (pg->row_len) { /* whole rows, at least PW_ROWS_MIN elements where the area takes them */
        int64_t len = pg->row_len, rows = chunk / len, fit = area_max / len;
        if (rows < (PW_ROWS_MIN + len - 1) / len) rows = (PW_ROWS_MIN + len - 1) / len;
        if (rows > fit) rows = fit;
        assert(rows >= 1); /* place() keeps a row within the area */
        pg->chunk = rows * len;
    } else {
        chunk = chunk / PW_CHUNK_MIN * PW_CHUNK_MIN;
        pg->chunk = chunk < PW_CHUNK_MIN ? PW_CHUNK_MIN : chunk > PW_CHUNK_MAX ? PW_CHUNK_MAX : chunk;
    }
    pg->buf_bytes = (size_t)pg->chunk * max_es;
    assert((size_t)n_area * pg->buf_bytes <= PW_AREA_BYTES);
    tj_pnode *last = &p->nodes[g->node[g->n - 1]];
    last->kernel = tj_kernel_fused_pointwise;
    last->label = label;
    last->args = args;
    last->nargs = 1 + g->n_args;
    last->nlist = 0;
    last->outs = outs;
    last->nout = n_outs;
    last->flops = flops;
    last->bytes = bytes;
    f->n_groups++;
    f->n_members += n_calls;
    f->n_red += g->n_red;
    return TJ_OK;
}

/* Closes group g: rewritten when it has two members or more. */
static tj_status close_group(fuser *f, group *g)
{
    if (!g->id) return TJ_OK;
    for (int m = 0; m < g->n; m++) f->gid[f->p->nodes[g->node[m]].outs[0]] = 0;
    tj_status st = g->n >= 2 ? rewrite(f, g) : TJ_OK;
    g->id = 0;
    return st;
}

static tj_status close_all(fuser *f)
{
    tj_status st = TJ_OK;
    for (int i = 0; i < PW_MAX_OPEN && st == TJ_OK; i++) st = close_group(f, &f->open[i]);
    return st;
}

/* The open group making the storage value v reads (its root), or NULL. */
static group *producer_of(fuser *f, int v)
{
    int id = f->gid[f->p->values[v].root];
    return id ? find_group(f, id) : NULL;
}

/* Closes the groups whose results node n reads, except `keep` (which n
 * reads from directly, as a member). */
static tj_status close_producers(fuser *f, const tj_pnode *n, const group *keep)
{
    for (int a = 0; a < n->nargs; a++) {
        for (int k = 0; k < tj_garg_n_values(&n->args[a]); k++) {
            int v = tj_garg_value_at(&n->args[a], k);
            group *g = v >= 0 ? producer_of(f, v) : NULL;
            if (!g || g == keep) continue;
            tj_status st = close_group(f, g);
            if (st != TJ_OK) return st;
        }
    }
    return TJ_OK;
}

/* Whether loop pw's bits for an element depend on the others sharing its
 * vector: SLEEF's sin and cos take their slow range reduction for every
 * lane of a vector holding one huge lane, which moves the last bit of
 * others. A step walking rows starts its vectors at each row (or chunk of
 * rows), not where the kernel does, so these stay kernels of their own. */
static bool lane_dependent(const tj_pointwise *pw)
{
    return pw->fn == tj_k_unary_loop && (pw->ctx.unary.op == TJ_K_SIN || pw->ctx.unary.op == TJ_K_COS);
}

/* A candidate: its loop (pw) and result value, when node n is an
 * elementwise call computing its result element by element, or (*reduces,
 * rr) a row reduction (runtime/op_row_reduce.h), whose pw then reads its
 * operand only. */
static bool candidate(const tj_plan *p, const tj_pnode *n, tj_pointwise *pw, bool *reduces, tj_row_reduce *rr)
{
    *reduces = false;
    if (!n->is_step || n->folded || n->fused || n->label || n->identity || n->nout != 1 || n->outs[0] < 0 ||
        n->nargs > TJ_MAX_ARGS || n->kernel != n->op->kernel)
        return false;
    const tj_pvalue *o = &p->values[n->outs[0]];
    if (o->kind != TJ_PV_ARENA || o->numel == 0 || (o->dtype != TJ_FLOAT32 && o->dtype != TJ_FLOAT64 && o->dtype != TJ_BOOL))
        return false;
    tj_tensor ts[TJ_MAX_ARGS];
    tj_value args[TJ_MAX_ARGS];
    for (int a = 0; a < n->nargs; a++) {
        const tj_garg *g = &n->args[a];
        switch (g->kind) {
        case TJ_GA_NONE: args[a] = tj_v_none(); break;
        case TJ_GA_VALUE: {
            const tj_pvalue *v = &p->values[g->u.v];
            memset(&ts[a], 0, sizeof ts[a]);
            ts[a].dtype = v->dtype;
            ts[a].ndim = v->ndim;
            ts[a].numel = v->numel;
            ts[a].fake = true;
            memcpy(ts[a].shape, v->shape, sizeof v->shape);
            args[a] = tj_v_tensor(&ts[a]);
            break;
        }
        case TJ_GA_INT: args[a] = tj_v_int(g->u.i); break;
        case TJ_GA_FLOAT: args[a] = tj_v_float(g->u.f); break;
        case TJ_GA_BOOL: args[a] = tj_v_bool(g->u.b); break;
        case TJ_GA_STR: args[a] = tj_v_str(g->u.s); break;
        case TJ_GA_DTYPE: args[a] = tj_v_dtype(g->u.dtype); break;
        case TJ_GA_INTS: args[a] = tj_v_ints(g->u.ints, g->n); break; /* the dims of a reduction */
        default: return false; /* other lists: no operator here takes one */
        }
    }
    if (tj_pointwise_describe(n->op, args, o->dtype, pw)) return !lane_dependent(pw);
    if (!tj_row_reduce_describe(n->op, args, rr) || n->args[rr->arg].kind != TJ_GA_VALUE) return false;
    memset(pw, 0, sizeof *pw);
    pw->nin = 1;
    pw->arg[0] = rr->arg;
    pw->loop[0] = rr->dtype;
    *reduces = true;
    return true;
}

/* Whether shape (nd) is that of g's rows: g's shape with a last dim of 1. */
static bool rows_shape(const group *g, int nd, const int64_t *shape)
{
    return nd == g->ndim && shape[nd - 1] == 1 && g->shape[nd - 1] != 1 &&
           memcmp(shape, g->shape, sizeof(int64_t) * (size_t)(nd - 1)) == 0;
}

/* The role node n (a candidate, *reduces with rr) takes in group g (or,
 * with g NULL, in a group it opens); false if none: a reduction computes
 * over its operand's shape, an elementwise call over its result's, or over
 * g's rows when g has row reductions. */
static bool role_in(const tj_plan *p, const group *g, const tj_pnode *n, bool reduces, const tj_row_reduce *rr,
                    role *r)
{
    memset(r, 0, sizeof *r);
    const tj_pvalue *o = &p->values[n->outs[0]];
    if (reduces) {
        const tj_pvalue *u = &p->values[n->args[rr->arg].u.v];
        r->ndim = u->ndim;
        r->shape = u->shape;
        r->reduces = true;
        r->red = *rr;
        return !g || same_shape(g->ndim, g->shape, u->ndim, u->shape);
    }
    r->ndim = o->ndim;
    r->shape = o->shape;
    if (!g || same_shape(g->ndim, g->shape, o->ndim, o->shape)) return true;
    r->rows_in = g->n_red > 0 && rows_shape(g, o->ndim, o->shape);
    return r->rows_in;
}

/* Whether value v's storage is the caller's (restrided from run to run). */
static bool from_input(const tj_plan *p, const tj_pvalue *v)
{
    return p->values[v->root].kind == TJ_PV_INPUT;
}

/* How node n (loop pw, role r) would read its operands as a member of group
 * g: 1 if it can join, reading g's results directly or not (*reads_g); 0 if
 * not. Counts the buffers and arguments it adds. A row reduction and a row
 * member read no gathered operand: their operands are g's results of the
 * shape they walk, one-element values, or arena values of that shape in
 * place (fixed strides). */
static int fits(fuser *f, const group *g, const tj_pnode *n, const tj_pointwise *pw, const role *r, bool *reads_g,
                int *new_splats, int *new_args, int *frees)
{
    const tj_plan *p = f->p;
    int gnd = g ? g->ndim : r->ndim;
    const int64_t *gshape = g ? g->shape : r->shape;
    int64_t gnumel = 1;
    for (int d = 0; d < gnd; d++) gnumel *= gshape[d];
    bool strict = r->rows_in || r->reduces;
    *reads_g = false;
    *new_splats = *new_args = *frees = 0;
    int seen_v[TJ_ITER_MAX_INPUTS], n_seen = 0;
    for (int k = 0; k < pw->nin; k++) {
        if (pw->arg[k] < 0) {
            bool have = false;
            for (int j = 0; g && j < g->n_splats; j++)
                have |= g->splat_v[j] < 0 && g->splat_loop[j] == pw->loop[k] &&
                        !memcmp(&g->splat_value[j], &pw->scalar[k], sizeof(tj_k_scalar));
            *new_splats += !have;
            continue;
        }
        int v = n->args[pw->arg[k]].u.v;
        const tj_pvalue *pv = &p->values[v];
        int id = f->gid[pv->root];
        if (g && id == g->id) {
            if (v != pv->root || pv->dtype != pw->loop[k]) return 0; /* a view of a member's result */
            if (strict && !same_shape(pv->ndim, pv->shape, r->ndim, r->shape)) return 0;
            *reads_g = true;
            bool counted = false;
            for (int s = 0; s < n_seen; s++) counted |= seen_v[s] == v;
            if (!counted) {
                int uses = 0;
                for (int i = 0; i < pw->nin; i++) uses += pw->arg[i] >= 0 && n->args[pw->arg[i]].u.v == v;
                *frees += f->left[v] == uses;
                seen_v[n_seen++] = v;
            }
            continue;
        }
        if (pv->kind == TJ_PV_UNUSED) return 0;
        bool one = pv->numel == 1 && !(gnumel == 1 && same_shape(pv->ndim, pv->shape, gnd, gshape));
        if (one) {
            if (r->reduces) return 0;
            bool have = false;
            for (int j = 0; g && j < g->n_splats; j++) have |= g->splat_v[j] == v && g->splat_loop[j] == pw->loop[k];
            *new_splats += !have;
        } else if (pv->dtype != pw->loop[k] || !broadcasts(pv, r->ndim, r->shape)) {
            return 0;
        } else if (strict && (!in_place(pv, r->ndim, r->shape) || from_input(p, pv))) {
            return 0;
        } else if (!in_place(pv, r->ndim, r->shape)) {
            if (pw->fn == tj_pointwise_copy_loop) return 0; /* a layout copy (a permute made contiguous): the tiled
                                                               copy kernels do it better */
            bool have = false;
            for (int j = 0; g && j < g->n_splats; j++) have |= g->splat_v[j] == v && g->splat_gather[j];
            for (int i = 0; i < k; i++) have |= pw->arg[i] >= 0 && n->args[pw->arg[i]].u.v == v;
            *new_splats += !have;
        }
        bool have = g && arg_index(g, v) >= 0;
        for (int i = 0; i < k; i++) have |= pw->arg[i] >= 0 && n->args[pw->arg[i]].u.v == v;
        *new_args += !have;
    }
    return 1;
}

/* Bytes of the widest element node n (loop pw) writes or computes on. */
static size_t member_es(const tj_plan *p, const tj_pnode *n, const tj_pointwise *pw)
{
    size_t es = tj_dtype_bytes(p->values[n->outs[0]].dtype);
    for (int k = 0; k < pw->nin; k++)
        if (tj_dtype_bytes(pw->loop[k]) > es) es = tj_dtype_bytes(pw->loop[k]);
    return es;
}

/* Whether whole rows of a group of shape (nd, shape) with `bufs` buffers
 * (splats, gathered operands and results) of `es` bytes per element fit
 * the area, with the gather buffers. */
static bool row_fits(int nd, const int64_t *shape, int bufs, size_t es)
{
    return (int64_t)((size_t)(bufs + PW_OP_INPUTS) * es) * shape[nd - 1] <= PW_AREA_BYTES; /* rows: no merges */
}

static void add_member(fuser *f, group *g, int i, const tj_pointwise *pw, const role *r, int frees)
{
    const tj_plan *p = f->p;
    const tj_pnode *n = &p->nodes[i];
    int64_t gnumel = 1;
    for (int d = 0; d < g->ndim; d++) gnumel *= g->shape[d];
    for (int k = 0; k < pw->nin; k++) {
        if (pw->arg[k] < 0) {
            bool have = false;
            for (int j = 0; j < g->n_splats; j++)
                have |= g->splat_v[j] < 0 && g->splat_loop[j] == pw->loop[k] &&
                        !memcmp(&g->splat_value[j], &pw->scalar[k], sizeof(tj_k_scalar));
            if (!have) {
                g->splat_v[g->n_splats] = -1;
                g->splat_loop[g->n_splats] = pw->loop[k];
                g->splat_value[g->n_splats++] = pw->scalar[k];
            }
            continue;
        }
        int v = n->args[pw->arg[k]].u.v;
        const tj_pvalue *pv = &p->values[v];
        if (f->gid[pv->root] == g->id) {
            f->left[v]--;
            continue;
        }
        if (arg_index(g, v) < 0) g->arg_v[g->n_args++] = v;
        bool one = pv->numel == 1 && !(gnumel == 1 && same_shape(pv->ndim, pv->shape, g->ndim, g->shape));
        bool have = false;
        for (int j = 0; j < g->n_splats; j++) have |= g->splat_v[j] == v && g->splat_loop[j] == pw->loop[k];
        bool gathered = !one && !in_place(pv, r->ndim, r->shape);
        if ((one || gathered) && !have) {
            g->splat_v[g->n_splats] = v;
            g->splat_gather[g->n_splats] = gathered;
            g->splat_loop[g->n_splats] = pw->loop[k];
            memset(&g->splat_value[g->n_splats], 0, sizeof(tj_k_scalar));
            g->n_splats++;
        }
    }
    int v = n->outs[0];
    g->node[g->n] = i;
    g->rows_in[g->n] = r->rows_in;
    g->reduces[g->n] = r->reduces;
    g->red[g->n] = r->red;
    g->pw[g->n++] = *pw;
    g->n_red += r->reduces;
    size_t es = member_es(p, n, pw);
    if (es > g->max_es) g->max_es = es;
    g->last_step = n->step;
    f->gid[v] = g->id;
    f->left[v] = f->u.count[v];
    if (g->live + 1 > g->peak) g->peak = g->live + 1;
    g->live += 1 - frees;
}

static group *open_group(fuser *f, const role *r)
{
    group *g = NULL;
    for (int i = 0; i < PW_MAX_OPEN && !g; i++)
        if (!f->open[i].id) g = &f->open[i];
    if (!g) { /* the one whose last member is furthest back */
        g = &f->open[0];
        for (int i = 1; i < PW_MAX_OPEN; i++)
            if (f->open[i].last_step < g->last_step) g = &f->open[i];
        if (close_group(f, g) != TJ_OK) return NULL;
    }
    int64_t shape[TJ_MAX_DIMS];
    memcpy(shape, r->shape, sizeof(int64_t) * (size_t)r->ndim); /* r may point into g */
    memset(g, 0, sizeof *g);
    g->id = ++f->next_id;
    g->ndim = r->ndim;
    memcpy(g->shape, shape, sizeof(int64_t) * (size_t)r->ndim);
    return g;
}

/* Node i, a candidate with loop pw (a row reduction rr with reduces):
 * joins a group, or opens one. */
static tj_status place(fuser *f, int i, const tj_pointwise *pw, bool reduces, const tj_row_reduce *rr)
{
    tj_plan *p = f->p;
    const tj_pnode *n = &p->nodes[i];
    group *best = NULL;
    role best_role;
    int best_frees = 0;
    size_t es = member_es(p, n, pw);
    for (int k = 0; k < PW_MAX_OPEN; k++) {
        group *g = &f->open[k];
        role r;
        if (!g->id || !role_in(p, g, n, reduces, rr, &r)) continue;
        bool reads_g;
        int splats, args, frees;
        if (!fits(f, g, n, pw, &r, &reads_g, &splats, &args, &frees)) continue;
        bool near = n->step - g->last_step <= PW_NEAR && !r.rows_in;
        int live = g->live + 1; /* the result's buffer, maybe taken before its inputs' are free */
        int bufs = g->n_splats + splats + (live > g->peak ? live : g->peak);
        bool room = g->n < PW_MAX_MEMBERS && g->n_args + args <= PW_MAX_ARGS && bufs <= PW_MAX_BUFS;
        if ((g->n_red || reduces) && !row_fits(g->ndim, g->shape, bufs, es > g->max_es ? es : g->max_es))
            room = false;
        if (!room || !(reads_g || near)) continue;
        if (!best || reads_g) {
            best = g;
            best_role = r;
            best_frees = frees;
        }
        if (reads_g) break;
    }
    tj_status st = close_producers(f, n, best);
    if (st != TJ_OK) return st;
    if (best && !best->id) best = NULL; /* closed as a producer after all */
    if (!best) {
        bool reads_g;
        int splats, args, frees;
        role_in(p, NULL, n, reduces, rr, &best_role);
        if (!fits(f, NULL, n, pw, &best_role, &reads_g, &splats, &args, &frees) || args > PW_MAX_ARGS ||
            splats + 2 > PW_MAX_BUFS || (reduces && !row_fits(best_role.ndim, best_role.shape, splats + 2, es)))
            return TJ_OK;
        if (!(best = open_group(f, &best_role))) return TJ_ERR_OUT_OF_MEMORY;
        role_in(p, best, n, reduces, rr, &best_role);
        best_frees = 0;
    }
    add_member(f, best, i, pw, &best_role, best_frees);
    return TJ_OK;
}

tj_status tj_plan_fuse_pointwise(tj_plan *p)
{
    fuser f = {.p = p};
    tj_status st = tj_plan_uses_init(p, &f.u);
    if (st != TJ_OK) return st;
    f.bytes = sizeof(int) * 2 * (size_t)(p->n_values + 1);
    f.gid = tj_alloc(f.bytes);
    if (!f.gid) {
        tj_plan_uses_free(&f.u);
        return tj_oom("tj_compile", f.bytes);
    }
    memset(f.gid, 0, f.bytes);
    f.left = f.gid + p->n_values + 1;
    for (int i = 0; i < p->n_nodes && st == TJ_OK; i++) {
        const tj_pnode *n = &p->nodes[i];
        if (!n->is_step) continue; /* views: their readers close groups */
        if (tj_plan_node_may_write(p, n)) {
            st = close_all(&f);
            continue;
        }
        for (int k = 0; k < PW_MAX_OPEN && st == TJ_OK; k++)
            if (f.open[k].id && n->step - f.open[k].last_step > PW_FAR) st = close_group(&f, &f.open[k]);
        tj_pointwise pw;
        tj_row_reduce rr;
        bool reduces;
        if (st == TJ_OK && candidate(p, n, &pw, &reduces, &rr)) st = place(&f, i, &pw, reduces, &rr);
        else if (st == TJ_OK) st = close_producers(&f, n, NULL);
    }
    if (st == TJ_OK) st = close_all(&f);
    p->stats.n_fused_pointwise += f.n_groups;
    p->stats.n_fused_pointwise_nodes += f.n_members;
    p->stats.n_fused_compare_wheres += f.n_merged;
    p->stats.n_fused_row_reductions += f.n_red;
    tj_free(f.gid, f.bytes);
    tj_plan_uses_free(&f.u);
    tj_plan_renumber_steps(p);
    return st;
}
