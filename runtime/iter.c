/* The elementwise engine (see iter.h). */
#include <string.h>

#include "iter.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/parallel.h"

/* Elements per loop call on the blocked path: small enough that the
 * per-thread buffers (BLOCK * 8 bytes each) stay in L1/L2, large enough to
 * amortise the call. Blocks along rows are as long as the buffers their
 * operands use allow (1024 float32), and ROW_BLOCK_MAX when none uses one:
 * 512-element calls over operands read in place cost 15% in call and index
 * overhead (eq of [4, 64, 16, 196] and [1, 64, 16, 196]). */
#define BLOCK 512
#define ROW_BLOCK_MAX 4096
/* Inner extent from which blocks follow rows of the innermost dim, so that
 * operands contiguous along it are read and written in place. */
#define ROW_MIN 64

/* Work below which one thread does it all: two threads from 2 *
 * PARALLEL_MIN elements. Measured at 2 threads in chains of six float32
 * ops, each op's inputs written by the previous one (so split the same
 * way): 1 and 2 threads tie at 65536 elements (about 8 us an op; a region
 * costs 2.5-4 us), 1 thread wins by 1.5-2 us an op at 32768-49152, 2
 * threads by 25% at 131072. Among ops split over 2 threads (the gpt
 * forward), a 65536-element add or clone on 1 thread reads the other
 * core's half of its inputs and hands its consumer the same problem: 2-3x
 * slower there, so 65536 stays on 2 threads. */
#define PARALLEL_MIN 32768

/* tj_threads_for, inlined into tj_elementwise (an exported function is not). */
static inline int threads_for(int64_t work)
{
    if (work < PARALLEL_MIN) return 1; /* before the settings call: small work is the common case */
    int nt = tj_get_num_threads();
    int64_t by_work = work / PARALLEL_MIN;
    return by_work < nt ? (int)by_work : nt;
}

int tj_threads_for(int64_t work) { return threads_for(work); }

/* Unsigned integer types by element size, for FOR_SIZE bodies. */
#define UINT_1 uint8_t
#define UINT_2 uint16_t
#define UINT_4 uint32_t
#define UINT_8 uint64_t

/* Element copies with a constant size, so that memcpy compiles to one move. */
#define FOR_SIZE(es, M)                                                         \
    switch (es) {                                                               \
    case 1: M(1); break;                                                        \
    case 2: M(2); break; /* the storage dtypes float16, bfloat16, int16 */     \
    case 4: M(4); break;                                                        \
    default: M(8); break;                                                       \
    }

/* dst[i] = src[i * stride] for n elements of es bytes. */
static void gather_strided(char *dst, const char *src, int64_t stride, int64_t n, size_t es)
{
#define G(S)                                                                    \
    for (int64_t i = 0; i < n; i++) memcpy(dst + i * S, src + i * stride * S, S)
    FOR_SIZE(es, G)
#undef G
}

/* dst[i * stride] = src[i] for n elements of es bytes. */
static void scatter_strided(char *dst, const char *src, int64_t stride, int64_t n, size_t es)
{
#define SC(S)                                                                   \
    for (int64_t i = 0; i < n; i++) memcpy(dst + i * stride * S, src + i * S, S)
    FOR_SIZE(es, SC)
#undef SC
}

/* Repeats the first element of buf n times. */
static void replicate(char *buf, int64_t n, size_t es)
{
    if (n > 1) tj_k_splat(buf + es, buf, n - 1, es);
}

/* The bits of the es-byte element at p, zero-extended (loaded at its own
 * width: a wider load of a value just stored stalls store forwarding). */
static inline uint64_t bits_of(const char *p, size_t es)
{
#define B(S)                                                                    \
    do {                                                                        \
        UINT_##S u;                                                             \
        memcpy(&u, p, S);                                                       \
        return u;                                                               \
    } while (0)
    FOR_SIZE(es, B)
#undef B
}

/* Operand geometry after merging dims that are contiguous in every operand. */
typedef struct {
    int ndim;
    int64_t shape[TJ_MAX_DIMS];
    int64_t strides[TJ_ITER_MAX_INPUTS + 1][TJ_MAX_DIMS]; /* [0] is out */
} geometry;

static void coalesce(geometry *g, int nops)
{
    int nd = 0;
    for (int d = 0; d < g->ndim; d++) {
        if (g->shape[d] == 1) continue;
        if (nd > 0) {
            bool merge = true;
            for (int k = 0; k < nops; k++)
                if (g->strides[k][nd - 1] != g->strides[k][d] * g->shape[d]) merge = false;
            if (merge) {
                g->shape[nd - 1] *= g->shape[d];
                for (int k = 0; k < nops; k++) g->strides[k][nd - 1] = g->strides[k][d];
                continue;
            }
        }
        g->shape[nd] = g->shape[d];
        for (int k = 0; k < nops; k++) g->strides[k][nd] = g->strides[k][d];
        nd++;
    }
    if (nd == 0) { /* a single element */
        g->shape[0] = 1;
        for (int k = 0; k < nops; k++) g->strides[k][0] = 0;
        nd = 1;
    }
    g->ndim = nd;
}

/* One operand of the blocked path. */
typedef struct {
    char *base;     /* element [0, ..., 0] */
    tj_dtype dtype; /* in memory */
    tj_dtype loop;  /* in the loop (out: its own dtype) */
    size_t les;     /* bytes of an element of the loop dtype */
    bool constant;  /* every stride 0: one value for the whole call */
    bool row_const; /* inner stride 0: one value along each row */
    bool in_place;  /* inner stride 1 and already the loop's dtype */
} operand;

typedef struct {
    geometry g;
    operand op[TJ_ITER_MAX_INPUTS + 1]; /* [0] is out */
    int nin;
    bool rows;        /* blocks follow rows of the inner dim */
    bool out_flat;    /* out contiguous: flat index = memory order */
    int64_t blk;      /* elements per block (at most; rows end blocks early) */
    int64_t per_row;  /* blocks per row (rows mode) */
    int64_t span;     /* whole rows per block (rows mode; > 1 only when per_row is 1) */
    int64_t nrows;    /* rows of the inner dim */
    int64_t n;
    tj_loop_fn fn;
    const void *ctx;
} plan;

/* Moves n elements starting at multi-index idx between operand k's strided
 * memory and the contiguous buffer buf (of dtype bd), converting dtypes on
 * the way in; `tmp` holds BLOCK * 8 bytes (n elements of any dtype). */
static void move_block(const plan *p, int k, const int64_t *start_idx, int64_t n, char *buf, tj_dtype bd,
                       char *tmp, bool scatter)
{
    const geometry *g = &p->g;
    const operand *o = &p->op[k];
    int nd = g->ndim;
    int64_t idx[TJ_MAX_DIMS];
    memcpy(idx, start_idx, sizeof(int64_t) * (size_t)nd);
    size_t mes = tj_dtype_size(o->dtype), bes = tj_dtype_size(bd);
    const int64_t *st = g->strides[k];
    int64_t inner = g->shape[nd - 1], is = st[nd - 1];
    int64_t done = 0;
    while (done < n) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++) off += idx[d] * st[d];
        int64_t run = inner - idx[nd - 1];
        if (run > n - done) run = n - done;
        char *m = o->base + off * (int64_t)mes;
        char *b = buf + done * (int64_t)bes;
        if (scatter) { /* the loop wrote the output's dtype */
            if (is == 1) memcpy(m, b, (size_t)run * mes);
            else scatter_strided(m, b, is, run, mes);
        } else if (is == 0) {
            tj_k_convert(b, bd, m, o->dtype, 1);
            replicate(b, run, bes);
        } else if (is == 1) {
            tj_k_convert(b, bd, m, o->dtype, run);
        } else if (o->dtype == bd) {
            gather_strided(b, m, is, run, mes);
        } else {
            gather_strided(tmp, m, is, run, mes);
            tj_k_convert(b, bd, tmp, o->dtype, run);
        }
        done += run;
        idx[nd - 1] += run;
        for (int d = nd - 1; d > 0 && idx[d] >= g->shape[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

/* The value a row-constant operand's buffer holds. */
typedef struct {
    bool set;
    uint64_t bits; /* converted to the loop dtype, zero-extended */
} held_value;

/* Fills buf with n copies of the row-constant operand k's value at idx,
 * unless buf already holds them (*held): so a bias is filled once a row and
 * a [4, 1, 1, 1] scale a few times a call. */
static void row_value(const plan *p, int k, const int64_t *idx, int64_t n, char *buf, held_value *held)
{
    const operand *o = &p->op[k];
    const geometry *g = &p->g;
    int64_t off = 0;
    for (int d = 0; d < g->ndim; d++) off += idx[d] * g->strides[k][d];
    tj_k_convert(buf, o->loop, o->base + off * (int64_t)tj_dtype_size(o->dtype), o->dtype, 1);
    uint64_t v = bits_of(buf, o->les);
    if (!held->set || v != held->bits) {
        replicate(buf, n, o->les);
        *held = (held_value){true, v};
    }
}

/* Fills buf with the values of the row-constant operand k for `rows` rows
 * of `inner` elements from idx (a row start), segment by segment, except
 * the leading rows whose value the whole buffer already holds (*held). */
static void rows_values(const plan *p, int k, const int64_t *start_idx, int64_t rows, int64_t inner, char *buf,
                        held_value *held)
{
    const operand *o = &p->op[k];
    const geometry *g = &p->g;
    int nd = g->ndim;
    int64_t idx[TJ_MAX_DIMS];
    memcpy(idx, start_idx, sizeof(int64_t) * (size_t)nd);
    bool same = held->set;
    for (int64_t r = 0; r < rows; r++) {
        int64_t off = 0;
        for (int d = 0; d < nd - 1; d++) off += idx[d] * g->strides[k][d];
        char *seg = buf + r * inner * (int64_t)o->les;
        tj_k_convert(seg, o->loop, o->base + off * (int64_t)tj_dtype_size(o->dtype), o->dtype, 1);
        same = same && bits_of(seg, o->les) == held->bits;
        if (!same) replicate(seg, inner, o->les);
        for (int d = nd - 2; d >= 0 && ++idx[d] >= g->shape[d] && d > 0; d--) idx[d] = 0;
    }
    if (same) return;
    /* the segments before the first row that differed still hold the old
     * value, which was theirs; the buffer holds one value again only when
     * every row of a whole block has it */
    uint64_t first = bits_of(buf, o->les);
    bool one_value = rows == p->span;
    for (int64_t r = 1; r < rows && one_value; r++)
        one_value = bits_of(buf + r * inner * (int64_t)o->les, o->les) == first;
    *held = (held_value){one_value, first};
}

/* Runs blocks [b0, b1) with this thread's buffers. */
static void run_blocks(const plan *p, int64_t b0, int64_t b1)
{
    _Alignas(64) char ibuf[TJ_ITER_MAX_INPUTS][BLOCK * 8];
    _Alignas(64) char obuf[BLOCK * 8];
    _Alignas(64) char tmp[BLOCK * 8];
    bool filled[TJ_ITER_MAX_INPUTS] = {false};
    held_value held[TJ_ITER_MAX_INPUTS] = {{false, 0}};
    const geometry *g = &p->g;
    int nd = g->ndim;
    int64_t inner = g->shape[nd - 1];
    size_t oes = tj_dtype_size(p->op[0].dtype);
    for (int64_t b = b0; b < b1; b++) {
        int64_t s, cnt;
        if (p->span > 1) {
            int64_t row = b * p->span;
            s = row * inner;
            cnt = (p->nrows - row < p->span ? p->nrows - row : p->span) * inner;
        } else if (p->rows) {
            int64_t c = (b % p->per_row) * p->blk;
            s = b / p->per_row * inner + c;
            cnt = inner - c < p->blk ? inner - c : p->blk;
        } else {
            s = b * p->blk;
            cnt = p->n - s < p->blk ? p->n - s : p->blk;
        }
        int64_t idx[TJ_MAX_DIMS], rem = s;
        for (int d = nd - 1; d >= 0; d--) {
            idx[d] = rem % g->shape[d];
            rem /= g->shape[d];
        }
        const void *ip[TJ_ITER_MAX_INPUTS];
        for (int k = 0; k < p->nin; k++) {
            const operand *o = &p->op[k + 1];
            if (o->constant) {
                if (!filled[k]) { /* converted once, reused by every block */
                    tj_k_convert(ibuf[k], o->loop, o->base, o->dtype, 1);
                    replicate(ibuf[k], p->blk, o->les);
                    filled[k] = true;
                }
                ip[k] = ibuf[k];
            } else if (p->rows && o->in_place) {
                int64_t off = 0;
                for (int d = 0; d < nd; d++) off += idx[d] * g->strides[k + 1][d];
                ip[k] = o->base + off * (int64_t)o->les;
            } else if (p->span > 1 && o->row_const) {
                rows_values(p, k + 1, idx, cnt / inner, inner, ibuf[k], &held[k]);
                ip[k] = ibuf[k];
            } else if (p->rows && o->row_const) {
                row_value(p, k + 1, idx, inner < p->blk ? inner : p->blk, ibuf[k], &held[k]);
                ip[k] = ibuf[k];
            } else {
                move_block(p, k + 1, idx, cnt, ibuf[k], o->loop, tmp, false);
                ip[k] = ibuf[k];
            }
        }
        if (p->rows && p->op[0].in_place) {
            int64_t off = 0;
            for (int d = 0; d < nd; d++) off += idx[d] * g->strides[0][d];
            p->fn(cnt, p->op[0].base + off * (int64_t)oes, ip, p->ctx);
        } else if (!p->rows && p->out_flat) {
            p->fn(cnt, p->op[0].base + s * (int64_t)oes, ip, p->ctx);
        } else {
            p->fn(cnt, obuf, ip, p->ctx);
            move_block(p, 0, idx, cnt, obuf, p->op[0].dtype, tmp, true);
        }
    }
}

/* Whether out and every input are contiguous, of out's shape and (the
 * inputs) of their loop dtypes: one pass over the dims, no calls, as this
 * test runs first on every elementwise call. */
static bool all_direct(const tj_tensor *out, tj_tensor *const *in, int nin, const tj_dtype *dts)
{
    for (int k = 0; k < nin; k++)
        if (in[k]->dtype != dts[k] || in[k]->ndim != out->ndim) return false;
    int64_t s = 1; /* the contiguous stride of dim d */
    for (int d = out->ndim - 1; d >= 0; d--) {
        int64_t size = out->shape[d];
        if (size != 1 && out->strides[d] != s) return false;
        for (int k = 0; k < nin; k++)
            if (in[k]->shape[d] != size || (size != 1 && in[k]->strides[d] != s)) return false;
        s *= size;
    }
    return true;
}

/* Element [0, ...] of a tensor with data (a kernel's operand) whose
 * elements have es bytes. */
static inline char *data_at(const tj_tensor *t, size_t es)
{
    return (char *)t->storage->data + t->offset * (int64_t)es;
}

/* The operands all_direct accepts, for the parallel loop over them. */
typedef struct direct_args {
    int nin;
    int64_t n;
    size_t oes, ies[TJ_ITER_MAX_INPUTS];
    char *o;
    const char *ip[TJ_ITER_MAX_INPUTS];
    tj_loop_fn fn;
    const void *ctx;
} direct_args;

/* Lines [begin, end) of 16 elements (whole cache lines per thread). */
static void direct_lines(void *ctx, int t, int64_t begin, int64_t end)
{
    const direct_args *a = ctx;
    int64_t s = begin * 16, e = end * 16 < a->n ? end * 16 : a->n;
    (void)t;
    if (s >= e) return;
    const void *p[TJ_ITER_MAX_INPUTS];
    for (int k = 0; k < a->nin; k++) p[k] = a->ip[k] + s * (int64_t)a->ies[k];
    a->fn(e - s, a->o + s * (int64_t)a->oes, p, a->ctx);
}

/* The operands all_direct accepts, split into one chunk per thread. */
static __attribute__((noinline)) void run_direct_parallel(tj_tensor *out, tj_tensor *const *in, int nin,
                                                          tj_loop_fn fn, const void *ctx, int nt)
{
    direct_args a = {.nin = nin, .n = out->numel, .oes = tj_dtype_bytes(out->dtype), .fn = fn, .ctx = ctx};
    a.o = data_at(out, a.oes);
    for (int k = 0; k < nin; k++) {
        a.ies[k] = tj_dtype_bytes(in[k]->dtype);
        a.ip[k] = data_at(in[k], a.ies[k]);
    }
    tj_k_parallel(nt, (a.n + 15) / 16, direct_lines, &a);
}

/* Block length in rows mode: BLOCK * 8 bytes over the widest element that
 * goes through a buffer (an operand not used in place, in its memory and
 * its loop dtype), at most ROW_BLOCK_MAX. */
static int64_t row_block(const plan *p)
{
    size_t widest = 0;
    for (int k = 0; k <= p->nin; k++) {
        const operand *o = &p->op[k];
        if (o->in_place) continue;
        size_t es = tj_dtype_size(o->dtype);
        if (es < o->les) es = o->les;
        if (es > widest) widest = es;
    }
    int64_t blk = widest ? BLOCK * 8 / (int64_t)widest : ROW_BLOCK_MAX;
    return blk < ROW_BLOCK_MAX ? blk : ROW_BLOCK_MAX;
}

/* Whether blocks may span several whole rows (rows mode): every operand
 * read or written in place continues each row with the next one, across
 * every outer dim (a block's rows may cross any of them), so that a
 * block's rows are one contiguous run of it. The operand that kept the
 * dims apart (a row-constant one, as x * rstd[..., None] in layer_norm
 * and softmax) is filled row by row; the others move through buffers,
 * which follow rows anyway. Rows of 64-256 elements then cost one loop
 * call per block instead of one per row. */
static bool rows_stack(const plan *p)
{
    const geometry *g = &p->g;
    int nd = g->ndim;
    if (nd < 2) return false;
    for (int k = 0; k <= p->nin; k++) {
        if (!p->op[k].in_place) continue;
        int64_t run = g->shape[nd - 1]; /* elements before dim d's next index */
        for (int d = nd - 2; d >= 0; d--) {
            if (g->strides[k][d] != run) return false;
            run *= g->shape[d];
        }
    }
    return true;
}

static void plan_blocks(void *ctx, int t, int64_t begin, int64_t end)
{
    (void)t;
    if (begin < end) run_blocks(ctx, begin, end);
}

/* The blocked path (see iter.h) for operands all_direct refuses. Out of
 * line, so that its large frame is not set up for direct calls. */
static __attribute__((noinline)) void run_general(tj_tensor *out, tj_tensor *const *in, int nin,
                                                  const tj_dtype *dts, tj_loop_fn fn, const void *ctx, int nt)
{
    int64_t n = out->numel;
    plan p = {.nin = nin, .n = n, .fn = fn, .ctx = ctx,
              .out_flat = tj_tensor_is_contiguous(out)};
    geometry *g = &p.g;
    g->ndim = out->ndim;
    memcpy(g->shape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
    memcpy(g->strides[0], out->strides, sizeof(int64_t) * (size_t)out->ndim);
    for (int k = 0; k < nin; k++) tj_broadcast_strides(in[k], out->ndim, out->shape, g->strides[k + 1]);
    coalesce(g, nin + 1);
    int nd = g->ndim;
    for (int k = 0; k <= nin; k++) {
        const tj_tensor *t = k == 0 ? out : in[k - 1];
        operand *o = &p.op[k];
        o->base = tj_tensor_ptr(t);
        o->dtype = t->dtype;
        o->loop = k == 0 ? t->dtype : dts[k - 1];
        o->les = tj_dtype_size(o->loop);
        o->constant = true;
        for (int d = 0; d < nd; d++)
            if (g->strides[k][d] != 0) o->constant = false;
        o->row_const = g->strides[k][nd - 1] == 0;
        o->in_place = g->strides[k][nd - 1] == 1 && t->dtype == o->loop;
    }
    int64_t inner = g->shape[nd - 1];
    p.rows = inner >= ROW_MIN;
    p.blk = p.rows ? row_block(&p) : BLOCK;
    p.per_row = (inner + p.blk - 1) / p.blk;
    p.nrows = n / inner;
    p.span = p.rows && 2 * inner <= p.blk && rows_stack(&p) ? p.blk / inner : 1;
    int64_t nblocks = p.span > 1 ? (p.nrows + p.span - 1) / p.span
                      : p.rows   ? p.nrows * p.per_row
                                 : (n + BLOCK - 1) / BLOCK;
    tj_k_parallel(nblocks == 1 ? 1 : nt, nblocks, plan_blocks, &p);
}

/* tj_elementwise for `nin` inputs; inlined with nin constant, so that the
 * loops over the operands unroll. */
static inline __attribute__((always_inline)) void elementwise_n(tj_tensor *out, tj_tensor *const *in, int nin,
                                                                const tj_dtype *dts, tj_loop_fn fn, const void *ctx)
{
    int64_t n = out->numel;
    if (n == 0) return;
    int nt = threads_for(n);
    if (!all_direct(out, in, nin, dts)) {
        run_general(out, in, nin, dts, fn, ctx, nt);
    } else if (nt > 1) {
        run_direct_parallel(out, in, nin, fn, ctx, nt);
    } else { /* the loop on the tensors' memory: small contiguous operands, the most frequent call */
        const void *ip[TJ_ITER_MAX_INPUTS];
        for (int k = 0; k < nin; k++) ip[k] = data_at(in[k], tj_dtype_bytes(dts[k]));
        fn(n, data_at(out, tj_dtype_bytes(out->dtype)), ip, ctx);
    }
}

void tj_elementwise(tj_tensor *out, tj_tensor *const *in, int nin, tj_dtype compute, tj_loop_fn fn,
                    const void *ctx)
{
    const tj_dtype dts[TJ_ITER_MAX_INPUTS] = {compute, compute, compute, compute};
    if (nin == 1) elementwise_n(out, in, 1, dts, fn, ctx);
    else if (nin == 2) elementwise_n(out, in, 2, dts, fn, ctx);
    else elementwise_n(out, in, nin, dts, fn, ctx);
}

void tj_elementwise_typed(tj_tensor *out, tj_tensor *const *in, int nin, const tj_dtype *dtypes, tj_loop_fn fn,
                          const void *ctx)
{
    if (nin == 2) elementwise_n(out, in, 2, dtypes, fn, ctx);
    else elementwise_n(out, in, nin, dtypes, fn, ctx);
}

static void copy_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_dtype *dt = ctx;
    memcpy(out, in[0], (size_t)n * tj_dtype_size(*dt));
}

void tj_copy_convert(tj_tensor *dst, const tj_tensor *src)
{
    /* gather src converted to dst's dtype; the loop is then a plain copy */
    tj_tensor *in[1] = {(tj_tensor *)src};
    tj_elementwise(dst, in, 1, dst->dtype, copy_loop, &dst->dtype);
}
