/* mm, bmm, addmm, baddbmm: argument checks (shape functions) and the glue to the
 * GEMM kernels. Operands that BLAS can read as they are (row- or
 * column-major with a leading dimension: transposes, slices, broadcast
 * batches) are passed without a copy; any other layout is packed once. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "iter.h"
#include "kernels/conv_implicit.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/gemm.h"
#include "kernels/gemv.h"
#include "kernels/parallel.h"
#include "kernels/product_scatter.h"
#include "op_elementwise.h"
#include "op_linalg.h"
#include "op_view.h"

/* ---- shape functions ---- */

static tj_status check_dtypes(const char *op, const char *na, const tj_tensor *a, const char *nb, const tj_tensor *b)
{
    if (a->dtype != b->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: %s (%s) and %s (%s) must have the same dtype", op, na,
                        tj_dtype_name(a->dtype), nb, tj_dtype_name(b->dtype));
    if (a->dtype == TJ_BOOL)
        return tj_error(TJ_ERR_DTYPE, "%s: bool tensors are not supported (float32, float64 or int64)", op);
    return TJ_OK;
}

static tj_status check_rank(const char *op, const char *name, const tj_tensor *t, int ndim)
{
    char s[96];
    if (t->ndim != ndim)
        return tj_error(TJ_ERR_SHAPE, "%s: %s %s must be %d-D", op, name, tj_shape_str(t->ndim, t->shape, s, sizeof s),
                        ndim);
    return TJ_OK;
}

/* a [.., m, k] and b [.., k2, n]: k must equal k2; sizes must fit BLAS's int. */
static tj_status check_inner(const char *op, const char *na, const tj_tensor *a, const char *nb, const tj_tensor *b)
{
    char sa[96], sb[96];
    int64_t k = a->shape[a->ndim - 1], k2 = b->shape[b->ndim - 2];
    if (k != k2)
        return tj_error(TJ_ERR_SHAPE, "%s: %s %s and %s %s cannot be multiplied (%lld != %lld)", op, na,
                        tj_shape_str(a->ndim, a->shape, sa, sizeof sa), nb, tj_shape_str(b->ndim, b->shape, sb, sizeof sb),
                        (long long)k, (long long)k2);
    if (a->shape[a->ndim - 2] > INT_MAX || k > INT_MAX || b->shape[b->ndim - 1] > INT_MAX)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: %s %s x %s %s: a matrix dimension exceeds BLAS's int range", op, na,
                        tj_shape_str(a->ndim, a->shape, sa, sizeof sa), nb, tj_shape_str(b->ndim, b->shape, sb, sizeof sb));
    return TJ_OK;
}

tj_status tj_meta_mm(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *a = args[0].u.t, *b = args[1].u.t;
    tj_status st;
    if ((st = check_rank("aten::mm", "mat1", a, 2)) || (st = check_rank("aten::mm", "mat2", b, 2)) ||
        (st = check_dtypes("aten::mm", "mat1", a, "mat2", b)) || (st = check_inner("aten::mm", "mat1", a, "mat2", b)))
        return st;
    outs[0].dtype = a->dtype;
    outs[0].ndim = 2;
    outs[0].shape[0] = a->shape[0];
    outs[0].shape[1] = b->shape[1];
    return TJ_OK;
}

tj_status tj_meta_bmm(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *a = args[0].u.t, *b = args[1].u.t;
    char sa[96], sb[96];
    tj_status st;
    if ((st = check_rank("aten::bmm", "batch1", a, 3)) || (st = check_rank("aten::bmm", "batch2", b, 3)) ||
        (st = check_dtypes("aten::bmm", "batch1", a, "batch2", b)))
        return st;
    if (a->shape[0] != b->shape[0])
        return tj_error(TJ_ERR_SHAPE, "aten::bmm: batch1 %s and batch2 %s have different batch sizes (%lld != %lld)",
                        tj_shape_str(3, a->shape, sa, sizeof sa), tj_shape_str(3, b->shape, sb, sizeof sb),
                        (long long)a->shape[0], (long long)b->shape[0]);
    if ((st = check_inner("aten::bmm", "batch1", a, "batch2", b))) return st;
    outs[0].dtype = a->dtype;
    outs[0].ndim = 3;
    outs[0].shape[0] = a->shape[0];
    outs[0].shape[1] = a->shape[1];
    outs[0].shape[2] = b->shape[2];
    return TJ_OK;
}

/* addmm / baddbmm: beta * self + alpha * a @ b, a and b [batch,] matrices,
 * self broadcasting to the product's shape, beta and alpha converting to
 * its dtype. */
static tj_status meta_add_product(const char *op, const char *na, const char *nb, bool batched, const tj_value *args,
                                  tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *a = args[1].u.t, *b = args[2].u.t;
    int nd = batched ? 3 : 2;
    char sa[96], sb[96];
    tj_status st;
    if ((st = check_rank(op, na, a, nd)) || (st = check_rank(op, nb, b, nd)) || (st = check_dtypes(op, na, a, nb, b)) ||
        (st = check_dtypes(op, "self", self, nb, b)))
        return st;
    if (batched && a->shape[0] != b->shape[0])
        return tj_error(TJ_ERR_SHAPE, "%s: %s %s and %s %s have different batch sizes (%lld != %lld)", op, na,
                        tj_shape_str(3, a->shape, sa, sizeof sa), nb, tj_shape_str(3, b->shape, sb, sizeof sb),
                        (long long)a->shape[0], (long long)b->shape[0]);
    if ((st = check_inner(op, na, a, nb, b)) || (st = tj_scalar_check(op, "beta", &args[3], a->dtype)) ||
        (st = tj_scalar_check(op, "alpha", &args[4], a->dtype)))
        return st;
    int64_t out[3] = {a->shape[0], a->shape[nd - 2], b->shape[nd - 1]};
    if (!batched) out[0] = a->shape[0], out[1] = b->shape[1];
    bool fits = self->ndim <= nd;
    for (int d = 0; fits && d < self->ndim; d++) {
        int64_t s = self->shape[self->ndim - 1 - d];
        fits = s == 1 || s == out[nd - 1 - d];
    }
    if (!fits)
        return tj_error(TJ_ERR_SHAPE, "%s: self %s cannot be broadcast to %s", op,
                        tj_shape_str(self->ndim, self->shape, sa, sizeof sa), tj_shape_str(nd, out, sb, sizeof sb));
    outs[0].dtype = a->dtype;
    outs[0].ndim = nd;
    memcpy(outs[0].shape, out, sizeof(int64_t) * (size_t)nd);
    return TJ_OK;
}

tj_status tj_meta_addmm(const tj_value *args, tj_meta *outs)
{
    return meta_add_product("aten::addmm", "mat1", "mat2", false, args, outs);
}

tj_status tj_meta_baddbmm(const tj_value *args, tj_meta *outs)
{
    return meta_add_product("aten::baddbmm", "batch1", "batch2", true, args, outs);
}

/* ---- kernels ---- */

/* A BLAS operand: the tensor's memory when BLAS can read it, else a packed
 * contiguous copy of its matrices. */
typedef struct operand {
    tj_k_mat mat;
    int64_t bs; /* batch stride, elements */
    void *packed;
    size_t packed_bytes;
} operand;

static tj_status operand_get(operand *o, const tj_tensor *t, bool batched)
{
    int d = batched ? 1 : 0;
    int64_t batch = batched ? t->shape[0] : 1, rows = t->shape[d], cols = t->shape[d + 1];
    o->mat = (tj_k_mat){tj_tensor_ptr(t), t->strides[d], t->strides[d + 1]};
    o->bs = batched ? t->strides[0] : 0;
    o->packed = NULL;
    o->packed_bytes = 0;
    if (t->numel == 0 || tj_k_gemm_layout_ok(rows, cols, o->mat.rs, o->mat.cs)) return TJ_OK;
    size_t es = tj_dtype_size(t->dtype), nbytes = (size_t)t->numel * es;
    o->packed = tj_alloc_storage_bytes(nbytes, &o->packed_bytes);
    if (!o->packed) return tj_oom("matrix operand copy", nbytes);
    tj_k_pack_matrices(es, batch, rows, cols, o->mat.p, o->bs, o->mat.rs, o->mat.cs, o->packed);
    o->mat = (tj_k_mat){o->packed, cols, 1};
    o->bs = rows * cols;
    return TJ_OK;
}

static void operand_release(operand *o) { tj_free_storage_bytes(o->packed, o->packed_bytes); }

/* An int64 Scalar as ATen converts it (a float truncates toward zero). */
static int64_t scalar_i64(const tj_value *v)
{
    if (v->kind != TJ_V_FLOAT) return v->kind == TJ_V_BOOL ? (int64_t)v->u.b : v->u.i;
    double f = v->u.f;
    return isfinite(f) && fabs(f) < 9.2e18 ? (int64_t)f : 0;
}

/* out ([batch,] m, n, contiguous) = alpha * a @ b + beta * out, then epi
 * (NULL: none; float only) over out. */
static tj_status gemm_tensors(const tj_tensor *a, const tj_tensor *b, tj_tensor *out, bool batched,
                              const tj_value *alpha, const tj_value *beta, const tj_k_epilogue *epi)
{
    int d = batched ? 1 : 0;
    int64_t batch = batched ? out->shape[0] : 1, m = a->shape[d], k = a->shape[d + 1], n = b->shape[d + 1];
    if (out->numel == 0) return TJ_OK;
    int nt = tj_get_num_threads();
    if (out->dtype == TJ_INT64) {
        tj_k_gemm_i64(batch, m, n, k, scalar_i64(alpha), (tj_k_mat){tj_tensor_ptr(a), a->strides[d], a->strides[d + 1]},
                      batched ? a->strides[0] : 0, (tj_k_mat){tj_tensor_ptr(b), b->strides[d], b->strides[d + 1]},
                      batched ? b->strides[0] : 0, scalar_i64(beta), (int64_t *)(void *)tj_tensor_ptr(out), m * n, n,
                      nt);
        return TJ_OK;
    }
    operand oa, ob = {0};
    tj_status st = operand_get(&oa, a, batched);
    if (st == TJ_OK) st = operand_get(&ob, b, batched);
    if (st == TJ_OK)
        tj_k_gemm(out->dtype, batch, m, n, k, tj_value_as_double(alpha), oa.mat, oa.bs, ob.mat, ob.bs,
                  tj_value_as_double(beta), tj_tensor_ptr(out), m * n, n, nt, epi);
    operand_release(&oa);
    operand_release(&ob);
    return st;
}

tj_status tj_kernel_mm(const tj_value *args, tj_tensor *const *outs)
{
    tj_value one = tj_v_int(1), zero = tj_v_int(0);
    return gemm_tensors(args[0].u.t, args[1].u.t, outs[0], false, &one, &zero, NULL);
}

tj_status tj_kernel_bmm(const tj_value *args, tj_tensor *const *outs)
{
    tj_value one = tj_v_int(1), zero = tj_v_int(0);
    return gemm_tensors(args[0].u.t, args[1].u.t, outs[0], true, &one, &zero, NULL);
}

/* ---- bmm reading batch2 from a strided view (tracer/fuse_gather.c) ---- */

/* Bytes of batch2 gathered per chunk: the chunk, A and the chunk's part of
 * C stay within a 1 MiB L2. */
#define GATHER_CHUNK_BYTES (384 * 1024)
/* Columns of the narrowest chunk: our GEMM kernel takes 32 columns or
 * more (narrower ones go to BLAS, so tj_k_gemm_columns_independent would
 * refuse narrower chunks). */
#define GATHER_MIN_COLS 32

/* The shortest sum read through offset tables: shorter, the per-block
 * work of packing from the view (finding its runs) outweighs copying the
 * chunk and packing that (cnn's first layer, k 25, 16-24 rows: 66-75
 * GFLOP/s through the tables, 82-117 from the copies; its second, k 400:
 * 110-157 against 91-110 at 16-64 rows; 1 thread, AVX-512). */
#define GATHER_OFFSETS_MIN_K 64

/* Element offset of batch item b of view s, whose dims [0, s1) are the batch. */
static int64_t batch_offset(const tj_tensor *s, int s1, int64_t b)
{
    int64_t off = 0;
    for (int d = s1 - 1; d >= 0; d--) {
        off += b % s->shape[d] * s->strides[d];
        b /= s->shape[d];
    }
    return off;
}

/* off[i] for each flat position i over dims [d0, d1) of s, in order: the
 * element offset of that position from the group's first element. */
static void dim_offsets(const tj_tensor *s, int d0, int d1, int64_t *off)
{
    int64_t n = 1;
    off[0] = 0;
    for (int d = d0; d < d1; d++) { /* each position so far spreads over dim d, last first (in place) */
        int64_t size = s->shape[d];
        for (int64_t i = n - 1; i >= 0; i--)
            for (int64_t x = size - 1; x >= 0; x--) off[i * size + x] = off[i] + x * s->strides[d];
        n *= size;
    }
}

/* Bytes of C per thread when batch items that share A are multiplied side
 * by side into scratch: in L2 with B's blocks. */
#define SIDE_BY_SIDE_C_BYTES (256 * 1024)

/* A bmm whose batch2 is read through offset tables over the view, for
 * offset_items: per batch item, groups of its columns; or, with scratch,
 * ranges of the flat columns of all the items (a shared A), side by side. */
typedef struct offset_products {
    const float *src; /* the view's first element */
    const tj_tensor *view;
    int s1;
    const int64_t *row_off, *col_off; /* over the view's dims of k, of n (with scratch: of the batch and n) */
    int64_t batch, m, n, k, groups;
    tj_k_mat a;
    int64_t a_bs;
    float *out;
    float *scratch; /* NULL: per batch item; else `width` columns of C per thread */
    int64_t width, items;
} offset_products;

/* Flat columns [f0, f1) of all the batch items (A shared), multiplied
 * into thread t's scratch, then each item's part copied to its rows. */
static void side_by_side(const offset_products *g, int t, int64_t f0, int64_t f1)
{
    int64_t w = f1 - f0;
    float *cs = g->scratch + (size_t)t * (size_t)(g->m * g->width);
    tj_k_offset_mat ob = {g->src, g->row_off, g->col_off + f0};
    tj_k_gemm_f32_offsets(g->m, w, g->k, 1.0f, g->a.p, g->a.rs, g->a.cs, &ob, 0.0f, cs, w, 1);
    for (int64_t f = f0, e; f < f1; f = e) {
        int64_t b = f / g->n, l = f % g->n;
        e = (b + 1) * g->n < f1 ? (b + 1) * g->n : f1;
        for (int64_t i = 0; i < g->m; i++)
            memcpy(g->out + (b * g->m + i) * g->n + l, cs + i * w + (f - f0), sizeof(float) * (size_t)(e - f));
    }
}

/* Items [i0, i1), each a product of our kernel on one thread, its B packed
 * straight from the view: batch item * groups + group of columns, or
 * (with scratch) a range of the flat columns. */
static void offset_items(void *ctx, int t, int64_t i0, int64_t i1)
{
    const offset_products *g = ctx;
    for (int64_t it = i0; it < i1; it++) {
        if (g->scratch) {
            int64_t all = g->batch * g->n;
            side_by_side(g, t, it * all / g->items, (it + 1) * all / g->items);
            continue;
        }
        int64_t b = it / g->groups, c = it % g->groups, j0 = c * g->n / g->groups, j1 = (c + 1) * g->n / g->groups;
        tj_k_offset_mat ob = {g->src + batch_offset(g->view, g->s1, b), g->row_off, g->col_off + j0};
        tj_k_gemm_f32_offsets(g->m, j1 - j0, g->k, 1.0f, (const float *)g->a.p + b * g->a_bs, g->a.rs, g->a.cs, &ob,
                              0.0f, g->out + b * g->m * g->n + j0, g->n, 1);
    }
}

/* out [b, m, n] = A @ B per batch item, B element (p, j) the view's
 * element at flat position p of its dims [k0, k1) and j of [n0, n1) (the
 * rest before s1 the batch), on our kernel, which gives each column the
 * bytes it gives for the copy wherever the column falls: each thread takes
 * a group of columns of each item. Items narrower than what fits in L2
 * that share A (a convolution's weight broadcast over its images) are
 * multiplied side by side instead, as one product's columns in ranges of
 * up to SIDE_BY_SIDE_C_BYTES of C, each copied to its items from L2: one
 * call per image reached the last, partial block of columns and the
 * fetching of a new part of the view once per image (cnn's second layer,
 * 196 columns an image: 10% slower). */
static tj_status offset_bmm(const tj_tensor *s, int s1, int k0, int k1, int n0, int n1, const operand *oa,
                            tj_tensor *out)
{
    offset_products g = {.src = (const float *)(void *)tj_tensor_ptr(s), .view = s, .s1 = s1,
                         .batch = out->shape[0], .m = out->shape[1], .n = out->shape[2], .a = oa->mat, .a_bs = oa->bs,
                         .out = (float *)(void *)tj_tensor_ptr(out)};
    g.k = 1;
    for (int d = k0; d < k1; d++) g.k *= s->shape[d];
    int nt = tj_get_num_threads();
    int64_t batch = g.batch, width = SIDE_BY_SIDE_C_BYTES / ((int64_t)sizeof(float) * g.m);
    if (width < GATHER_MIN_COLS) width = GATHER_MIN_COLS;
    bool sides = batch > 1 && oa->bs == 0 && g.n < width;
    int64_t cols = sides ? batch * g.n : g.n;
    size_t want = (size_t)(g.k + cols) * sizeof(int64_t), got = 0, sgot = 0;
    int64_t *off = tj_alloc_storage_bytes(want, &got);
    if (!off) return tj_oom("aten::bmm (gathered batch2)", want);
    dim_offsets(s, k0, k1, off);
    dim_offsets(s, n0, n1, off + g.k);
    g.row_off = off;
    g.col_off = off + g.k;
    if (sides) { /* the items' column tables side by side, each from its item's first element */
        for (int64_t b = batch - 1; b >= 0; b--)
            for (int64_t j = 0; j < g.n; j++) off[g.k + b * g.n + j] = batch_offset(s, s1, b) + off[g.k + j];
        /* ranges of at most width columns, as many as a multiple of the threads */
        g.items = (cols + width - 1) / width;
        g.items = (g.items + nt - 1) / nt * nt;
        if (g.items > cols / GATHER_MIN_COLS) g.items = cols / GATHER_MIN_COLS > 0 ? cols / GATHER_MIN_COLS : 1;
        g.width = (cols + g.items - 1) / g.items;
        size_t swant = (size_t)(g.m * g.width * (nt < g.items ? nt : g.items)) * sizeof(float);
        g.scratch = tj_alloc_storage_bytes(swant, &sgot);
        if (!g.scratch) {
            tj_free_storage_bytes(off, got);
            return tj_oom("aten::bmm (gathered batch2)", swant);
        }
        tj_k_parallel(g.items < nt ? (int)g.items : nt, g.items, offset_items, &g);
        tj_free_storage_bytes(g.scratch, sgot);
        tj_free_storage_bytes(off, got);
        return TJ_OK;
    }
    /* Groups of at least GATHER_MIN_COLS columns (as the whole product,
     * on our kernel), one per thread. */
    int64_t most = g.n / GATHER_MIN_COLS > 0 ? g.n / GATHER_MIN_COLS : 1;
    g.groups = nt < most ? nt : most;
    int64_t items = batch * g.groups;
    tj_k_parallel(items < nt ? (int)items : nt, items, offset_items, &g);
    tj_free_storage_bytes(off, got);
    return TJ_OK;
}

/* The view's dims [n0, ndim) as the output positions of stride-1 windows:
 * out_h rows of out_w consecutive elements, rows *row_stride apart
 * (row_stride >= out_w), after dropping size-1 dims and merging dims that
 * run on from each other; false when they are not (a single run, or more
 * than two dims left). */
static bool window_positions(const tj_tensor *s, int n0, int64_t *out_h, int64_t *out_w, int64_t *row_stride)
{
    int64_t shape[2], stride[2];
    int nd = 0;
    for (int d = n0; d < s->ndim; d++) {
        if (s->shape[d] == 1) continue;
        if (nd > 0 && stride[nd - 1] == s->strides[d] * s->shape[d]) {
            shape[nd - 1] *= s->shape[d];
            stride[nd - 1] = s->strides[d];
            continue;
        }
        if (nd == 2) return false;
        shape[nd] = s->shape[d];
        stride[nd++] = s->strides[d];
    }
    if (nd != 2 || stride[1] != 1 || stride[0] < shape[1]) return false;
    *out_h = shape[0], *out_w = shape[1], *row_stride = stride[0];
    return true;
}

/* A gathered bmm whose view reads stride-1 windows (a decomposed
 * convolution's columns over its padded input: the k dims the taps, the n
 * dims the output positions) on the implicit convolution's tiles
 * (tj_k_window_product), which read B where it lies, with no packing, and
 * give the bytes of our GEMM on the copy; `epi` runs on each item as its
 * thread finishes it. *done: false when the view is not such a view
 * (nothing computed). */
static tj_status window_bmm(const tj_tensor *s, int s1, int s2, const operand *oa, tj_tensor *out,
                            const tj_k_row_epilogue *epi, const tj_k_window_pad *pad, bool *done)
{
    *done = false;
    tj_k_window_product w = {.batch = out->shape[0], .m = out->shape[1], .k = 1, .a = oa->mat.p,
                             .ars = oa->mat.rs, .acs = oa->mat.cs, .a_bs = oa->bs,
                             .c = (float *)(void *)tj_tensor_ptr(out), .epi = *epi, .pad = *pad};
    for (int d = 0; d < s->ndim; d++)
        if (s->strides[d] < 0) return TJ_OK;
    if ((!pad->src && !s->storage) || !window_positions(s, s2, &w.out_h, &w.out_w, &w.row_stride)) return TJ_OK;
    for (int d = s1; d < s2; d++) w.k *= s->shape[d];
    if (!pad->src) {
        w.frames = (const float *)(void *)tj_tensor_ptr(s);
        w.readable = (int64_t)(s->storage->nbytes / sizeof(float)) - s->offset;
    } else if (s->offset < 0) {
        return TJ_OK;
    }
    int nt = tj_get_num_threads();
    w.nthreads = w.batch < nt ? (int)w.batch : nt;
    size_t tables = (size_t)(w.k + w.batch) * sizeof(int64_t), got = 0, wgot = 0;
    int64_t *off = tj_alloc_storage_bytes(tables, &got);
    if (!off) return tj_oom("aten::bmm (gathered batch2)", tables);
    dim_offsets(s, s1, s2, off);
    for (int64_t b = 0; b < w.batch; b++) off[w.k + b] = batch_offset(s, s1, b);
    w.taps = off;
    w.item_off = off + w.k;
    size_t want = tj_k_window_product_work_bytes(&w);
    void *work = tj_alloc_storage_bytes(want, &wgot);
    if (!work) {
        tj_free_storage_bytes(off, got);
        return tj_oom("aten::bmm (gathered batch2)", want);
    }
    tj_k_window_product_run(&w, work);
    tj_free_storage_bytes(work, wgot);
    tj_free_storage_bytes(off, got);
    *done = true;
    return TJ_OK;
}

/* The epilogue after a product that did not run it: on each item's rows. */
static tj_status rows_epilogue(const tj_k_row_epilogue *epi, tj_tensor *out)
{
    if (!epi->bias && !epi->relu) return TJ_OK;
    int64_t m = out->shape[1], n = out->shape[2];
    float *c = (float *)(void *)tj_tensor_ptr(out);
    for (int64_t b = 0; b < out->shape[0]; b++) tj_k_row_epilogue_apply(epi, c + b * m * n, m, n);
    return TJ_OK;
}

/* rows[i]: the element of `bias`, broadcast to the shape of `out` (whose
 * elements are [b, m, n] in order), that row i of every item adds (the
 * compiler checked it is one per row: tracer/fuse_gather.c). */
static void row_bias(const tj_tensor *bias, const tj_tensor *out, int64_t n, int64_t m, float *rows)
{
    const float *src = (const float *)(void *)tj_tensor_ptr(bias);
    int lead = out->ndim - bias->ndim; /* bias dims align with out's last ones */
    for (int64_t i = 0; i < m; i++) {
        int64_t f = i * n, off = 0; /* row i's first element in item 0 */
        for (int d = out->ndim - 1; d >= 0; d--) {
            int64_t x = f % out->shape[d];
            f /= out->shape[d];
            if (d >= lead && bias->shape[d - lead] != 1) off += x * bias->strides[d - lead];
        }
        rows[i] = src[off];
    }
}

typedef struct gathered {
    const tj_tensor *src;
    int s1, s2;                    /* src dims [0, s1): batch, [s1, s2): k, [s2, ndim): n */
    int64_t m, k, n, inner, units; /* n = units (src dim s2) * inner */
    int64_t chunks;                /* per batch item, over src dim s2 */
    tj_k_mat a;
    int64_t a_bs;
    float *out;
    char *scratch;
    size_t slice; /* bytes of scratch per thread */
    int inner_threads;
} gathered;

/* Items [i0, i1) (batch item * chunks + chunk): each chunk of the view
 * copied into thread t's slice, [k, cols] row-major, and multiplied into
 * its columns of C. */
static void gathered_items(void *ctx, int t, int64_t i0, int64_t i1)
{
    const gathered *g = ctx;
    const tj_tensor *s = g->src;
    int cd = s->ndim - g->s1, us = g->s2 - g->s1; /* dims of a chunk; its dim of units */
    float *buf = (float *)(void *)(g->scratch + (size_t)t * g->slice);
    for (int64_t it = i0; it < i1; it++) {
        int64_t b = it / g->chunks, c = it % g->chunks;
        int64_t u0 = c * g->units / g->chunks, u1 = (c + 1) * g->units / g->chunks, cols = (u1 - u0) * g->inner;
        int64_t off = u0 * s->strides[g->s2] + batch_offset(s, g->s1, b);
        int64_t shape[TJ_MAX_DIMS], strides[TJ_MAX_DIMS];
        memcpy(shape, s->shape + g->s1, sizeof(int64_t) * (size_t)cd);
        shape[us] = u1 - u0;
        tj_contiguous_strides(cd, shape, strides);
        tj_k_copy_strided((tj_k_strided){buf, TJ_FLOAT32, strides},
                          (tj_k_strided){(float *)(void *)tj_tensor_ptr(s) + off, TJ_FLOAT32, s->strides + g->s1}, cd,
                          shape, g->inner_threads);
        tj_k_mat a = {(const float *)g->a.p + b * g->a_bs, g->a.rs, g->a.cs};
        tj_k_gemm(TJ_FLOAT32, 1, g->m, cols, g->k, 1.0, a, 0, (tj_k_mat){buf, cols, 1}, 0, 0.0,
                  g->out + b * g->m * g->n + u0 * g->inner, 0, g->n, g->inner_threads, NULL);
    }
}

/* The zero-padded buffer `pad` stands for, made for the routes other than
 * the window products in `buf`, the step's scratch in the arena (NULL when
 * the compiler foresaw the window route: then in *mem, of the caching
 * allocator, for the caller to free): a view of it with s's geometry into
 * *view, over storage *st. */
static tj_status make_padded(const tj_tensor *s, const tj_k_window_pad *pad, const tj_tensor *buf, tj_tensor *view,
                             tj_storage *st, void **mem, size_t *mem_bytes)
{
    int64_t numel = pad->n * pad->c * pad->hp * pad->wp;
    size_t want = sizeof(float) * (size_t)numel;
    *mem = NULL;
    *mem_bytes = 0;
    if (!buf && !(*mem = tj_alloc_storage_bytes(want, mem_bytes))) return tj_oom("aten::bmm (padded batch2)", want);
    *view = buf ? *buf : (tj_tensor){.dtype = TJ_FLOAT32};
    if (!buf) {
        *st = (tj_storage){.data = *mem, .nbytes = want};
        view->storage = st;
    }
    tj_k_window_pad_fill(pad, 0, numel, true, (float *)(void *)tj_tensor_ptr(view));
    view->ndim = s->ndim;
    view->numel = s->numel;
    view->offset += s->offset;
    memcpy(view->shape, s->shape, sizeof(int64_t) * (size_t)s->ndim);
    memcpy(view->strides, s->strides, sizeof(int64_t) * (size_t)s->ndim);
    return TJ_OK;
}

/* Whether gathered_product takes the window route for A `a` [b, m, k]
 * with its strides and view s (its geometry: n positions from dim s2 on). */
static bool on_window_route(const tj_tensor *a, const tj_tensor *s, int s2, int64_t n)
{
    tj_k_mat mat = {NULL, a->strides[1], a->strides[2]}, b = {NULL, n, 1};
    if (!tj_k_gemm_layout_ok(a->shape[1], a->shape[2], mat.rs, mat.cs)) mat = (tj_k_mat){NULL, a->shape[2], 1};
    int64_t out_h, out_w, row_stride;
    for (int d = 0; d < s->ndim; d++)
        if (s->strides[d] < 0) return false;
    return tj_k_gemm_on_own_kernel(TJ_FLOAT32, a->shape[1], n, a->shape[2], mat, b) &&
           window_positions(s, s2, &out_h, &out_w, &row_stride);
}

bool tj_bmm_gathered_on_window_route(int ndim_a, const int64_t *shape_a, const int64_t *strides_a, int ndim_s,
                                     const int64_t *shape_s, const int64_t *strides_s, int s2)
{
    tj_tensor a = {.ndim = ndim_a}, s = {.ndim = ndim_s};
    int64_t n = 1;
    if (ndim_a != 3 || ndim_s > TJ_MAX_DIMS || s2 < 0 || s2 > ndim_s) return false;
    memcpy(a.shape, shape_a, sizeof(int64_t) * 3);
    memcpy(a.strides, strides_a, sizeof(int64_t) * 3);
    memcpy(s.shape, shape_s, sizeof(int64_t) * (size_t)ndim_s);
    memcpy(s.strides, strides_s, sizeof(int64_t) * (size_t)ndim_s);
    for (int d = s2; d < ndim_s; d++) n *= shape_s[d];
    return on_window_route(&a, &s, s2, n);
}

/* tj_kernel_bmm_gathered into out [b, m, n], then `epi` on each item's rows
 * (on the window route, inside the product as each item is done); with
 * pad->src, s is the geometry of a view of the padded buffer pad stands for
 * (no storage), made in `padded` for the other routes. */
static tj_status gathered_product(const tj_value *args, const tj_tensor *s, const tj_k_window_pad *pad,
                                  const tj_tensor *padded, tj_tensor *out, const tj_k_row_epilogue *epi)
{
    if (out->numel == 0) return TJ_OK;
    gathered g = {.src = s, .s1 = (int)args[2].u.i, .s2 = (int)args[3].u.i, .m = out->shape[1],
                  .k = args[0].u.t->shape[2], .n = out->shape[2], .out = (float *)(void *)tj_tensor_ptr(out)};
    operand oa;
    tj_status st = operand_get(&oa, args[0].u.t, true);
    if (st != TJ_OK) return st;
    g.a = oa.mat;
    g.a_bs = oa.bs;
    tj_k_mat b = {NULL, g.n, 1};
    bool own = tj_k_gemm_on_own_kernel(TJ_FLOAT32, g.m, g.n, g.k, g.a, b), done = false;
    if (own) st = window_bmm(s, g.s1, g.s2, &oa, out, epi, pad, &done);
    if (st != TJ_OK || done || pad->src) {
        operand_release(&oa);
        if (st != TJ_OK || done) return st;
        tj_tensor view; /* another route: from the padded buffer, made */
        tj_storage mem_storage;
        void *mem;
        size_t mem_bytes;
        st = make_padded(s, pad, padded, &view, &mem_storage, &mem, &mem_bytes);
        tj_k_window_pad none = {0};
        if (st == TJ_OK) st = gathered_product(args, &view, &none, NULL, out, epi);
        tj_free_storage_bytes(mem, mem_bytes);
        return st;
    }
    if (own && g.k >= GATHER_OFFSETS_MIN_K) {
        st = offset_bmm(s, g.s1, g.s1, g.s2, g.s2, s->ndim, &oa, out);
        operand_release(&oa);
        return st == TJ_OK ? rows_epilogue(epi, out) : st;
    }
    /* Short sums and other routes: chunks of the view copied into scratch
     * that stays in L2 and multiplied from there. Chunks keep the bits only
     * where gemm.c says each column of C comes out the same whatever the
     * call's columns (our kernels; not BLAS, whose sum for an output
     * depends on where it falls in the call). Otherwise one chunk per
     * batch item: the whole product's call. Each chunk is [k, cols]
     * row-major. */
    g.units = s->shape[g.s2];
    g.inner = g.n / g.units;
    int64_t per_chunk = GATHER_CHUNK_BYTES / ((int64_t)sizeof(float) * (g.k * g.inner > 0 ? g.k * g.inner : 1));
    int64_t min_units = (GATHER_MIN_COLS + g.inner - 1) / g.inner;
    if (per_chunk < min_units) per_chunk = min_units;
    g.chunks = per_chunk < g.units ? g.units / per_chunk : 1; /* chunks of per_chunk units or more */
    bool independent = tj_k_gemm_columns_independent(TJ_FLOAT32, g.m, g.n, g.k, g.a, b, GATHER_MIN_COLS);
    if (!independent) g.chunks = 1;
    int64_t items = out->shape[0] * g.chunks, widest = (g.units + g.chunks - 1) / g.chunks;
    /* Threads take whole chunks, each gathering and multiplying its own on
     * its core, when our kernel computes every chunk (it may run on several
     * threads at once; OpenBLAS and matrix-vector routes run one product
     * at a time with every thread). Either way each element of C is the same
     * sum as in the whole product. */
    int nt = tj_get_num_threads();
    bool split = nt > 1 && items > 1 && independent && own;
    int team = split ? (items < nt ? (int)items : nt) : 1;
    g.inner_threads = split ? 1 : nt;
    g.slice = ((size_t)(g.k * widest * g.inner) * sizeof(float) + 63) / 64 * 64;
    size_t want = g.slice * (size_t)team, got = 0;
    g.scratch = tj_alloc_storage_bytes(want, &got);
    if (!g.scratch) st = tj_oom("aten::bmm (gathered batch2)", want);
    else tj_k_parallel(team, items, gathered_items, &g);
    tj_free_storage_bytes(g.scratch, got);
    operand_release(&oa);
    return st == TJ_OK ? rows_epilogue(epi, out) : st;
}

tj_status tj_kernel_bmm_gathered(const tj_value *args, tj_tensor *const *outs)
{
    tj_k_row_epilogue none = {0};
    tj_k_window_pad unpadded = {0};
    return gathered_product(args, args[1].u.t, &unpadded, NULL, outs[0], &none);
}

/* The gathered product of view s (pad and outs[1] as gathered_product's pad
 * and padded) into outs[0], then + bias (NULL: none) and the relu. */
static tj_status product_epilogue(const tj_value *args, const tj_tensor *s, const tj_k_window_pad *pad,
                                  const tj_tensor *bias, bool relu, tj_tensor *const *outs)
{
    const tj_tensor *a = args[0].u.t;
    tj_tensor out = *outs[0]; /* as [b, m, n] (contiguous) */
    int64_t m = a->shape[1];
    out.ndim = 3;
    out.shape[0] = a->shape[0];
    out.shape[1] = m;
    out.shape[2] = m && a->shape[0] ? outs[0]->numel / (a->shape[0] * m) : 0;
    tj_contiguous_strides(3, out.shape, out.strides);
    size_t want = sizeof(float) * (size_t)(m > 0 ? m : 1), got = 0;
    float *rows = bias ? tj_alloc_storage_bytes(want, &got) : NULL;
    if (bias && !rows) return tj_oom("aten::bmm + aten::add.Tensor (gathered batch2)", want);
    if (bias) row_bias(bias, outs[0], out.shape[2], m, rows);
    tj_k_row_epilogue epi = {.bias = rows, .relu = relu};
    tj_status st = gathered_product(args, s, pad, pad->src ? outs[1] : NULL, &out, &epi);
    if (rows) tj_free_storage_bytes(rows, got);
    return st;
}

tj_status tj_kernel_bmm_gathered_epilogue(const tj_value *args, tj_tensor *const *outs)
{
    tj_k_window_pad unpadded = {0};
    return product_epilogue(args, args[1].u.t, &unpadded, args[4].u.t, args[5].u.i != 0, outs);
}

tj_status tj_kernel_bmm_gathered_padded(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[1].u.t;
    const int64_t *geo = args[6].u.ints, *pd = args[7].u.ints;
    tj_tensor s = {.dtype = TJ_FLOAT32, .ndim = (int)geo[0], .numel = 1, .offset = geo[1 + 2 * geo[0]]};
    for (int d = 0; d < s.ndim; d++) {
        s.shape[d] = geo[1 + d];
        s.strides[d] = geo[1 + s.ndim + d];
        s.numel *= s.shape[d];
    }
    bool two = x->ndim == 4; /* else [N, C, L]: one row a frame */
    tj_k_window_pad pad = {.src = (const float *)(void *)tj_tensor_ptr(x), .n = x->shape[0], .c = x->shape[1],
                           .h = two ? x->shape[2] : 1, .w = x->shape[x->ndim - 1], .sn = x->strides[0],
                           .sc = x->strides[1], .sh = two ? x->strides[2] : 0, .sw = x->strides[x->ndim - 1],
                           .hp = pd[0], .wp = pd[1], .pt = pd[2], .pl = pd[3]};
    return product_epilogue(args, &s, &pad, args[4].kind == TJ_V_TENSOR ? args[4].u.t : NULL, args[5].u.i != 0, outs);
}

/* ---- bmm reading batch2 as the transpose of a strided view ---- */

/* Element offset in view s of flat position f over its dims [d0, d1). */
static int64_t flat_offset(const tj_tensor *s, int d0, int d1, int64_t f)
{
    int64_t off = 0;
    for (int d = d1 - 1; d >= d0; d--) {
        off += f % s->shape[d] * s->strides[d];
        f /= s->shape[d];
    }
    return off;
}

/* A box of flat positions over dims [d0, d1) of a view: `count` steps of
 * dim d from flat position f, each step every position of the dims after d. */
typedef struct flat_box {
    int d;
    int64_t f, count, inner; /* inner: positions per step */
} flat_box;

/* The first box of flat positions [f, f1) over s's dims [d0, d1): the
 * widest whole blocks of trailing dims that start at f, as many as fit. */
static flat_box first_box(const tj_tensor *s, int d0, int d1, int64_t f, int64_t f1)
{
    int d = d1 - 1;
    int64_t inner = 1;
    while (d > d0 && f % (inner * s->shape[d]) == 0 && f + inner * s->shape[d] <= f1) inner *= s->shape[d--];
    int64_t along = f / inner % s->shape[d], count = (f1 - f) / inner;
    if (count > s->shape[d] - along) count = s->shape[d] - along;
    return (flat_box){d, f, count, inner};
}

/* Box x's dims ([x.d, d1) of s) from index `at` on: its sizes into shape,
 * s's strides into ss, and into ds the strides of its positions laid out
 * flat, `scale` elements per position. Returns the index after them. */
static int box_dims(const tj_tensor *s, flat_box x, int d1, int64_t scale, int64_t *shape, int64_t *ss, int64_t *ds,
                    int at)
{
    int64_t flat = scale;
    for (int d = d1 - 1; d >= x.d; d--) {
        int i = at + d - x.d;
        shape[i] = d == x.d ? x.count : s->shape[d];
        ss[i] = s->strides[d];
        ds[i] = flat;
        flat *= s->shape[d];
    }
    return at + d1 - x.d;
}

/* Rows [r0, r1) and columns [p0, p1) of B^T, the view s of the transposed
 * gathered bmm (rows: flat positions over its dims [s1, s2), columns over
 * [s2, ndim); base: the batch item's first element), copied into dst, row
 * r at dst + (r - r0) * ld: each range cut into boxes of whole trailing
 * dims, one strided copy per pair of boxes (im2col's rows of 28 floats go
 * as tj_k_copy_strided's short runs). */
static void gather_block(const tj_tensor *s, const float *base, int s1, int s2, int64_t r0, int64_t r1, int64_t p0,
                         int64_t p1, float *dst, int64_t ld)
{
    for (int64_t r = r0; r < r1;) {
        flat_box rb = first_box(s, s1, s2, r, r1);
        for (int64_t p = p0; p < p1;) {
            flat_box pb = first_box(s, s2, s->ndim, p, p1);
            int64_t shape[TJ_MAX_DIMS], ss[TJ_MAX_DIMS], ds[TJ_MAX_DIMS];
            int nd = box_dims(s, pb, s->ndim, 1, shape, ss, ds, box_dims(s, rb, s2, ld, shape, ss, ds, 0));
            const float *from = base + flat_offset(s, s1, s2, r) + flat_offset(s, s2, s->ndim, p);
            tj_k_copy_strided((tj_k_strided){dst + (r - r0) * ld + (p - p0), TJ_FLOAT32, ds},
                              (tj_k_strided){(void *)(uintptr_t)from, TJ_FLOAT32, ss}, nd, shape, 1);
            p += pb.count * pb.inner;
        }
        r += rb.count * rb.inner;
    }
}

/* A transposed gathered bmm on gemv's row form (tj_k_gemm_on_row_form):
 * for row_form_items. */
typedef struct row_form_products {
    const tj_tensor *view;
    const float *src;
    int s1, s2;
    int64_t m, n, k, kc, groups; /* kc: the row form's pass; groups of B^T's rows per batch item */
    tj_k_mat a;
    int64_t a_bs;
    float *out;
    char *scratch;
    size_t slice; /* bytes of scratch per thread */
} row_form_products;

/* Items [i0, i1) (batch item * groups + group of B^T's rows, whole
 * blocks of four as tj_k_gemv splits them): pass by pass of the row form,
 * the group's rows of the pass copied into thread t's slice (in L2) and
 * multiplied there, each pass added to C as the whole product's passes. */
static void row_form_items(void *ctx, int t, int64_t i0, int64_t i1)
{
    const row_form_products *g = ctx;
    float *buf = (float *)(void *)(g->scratch + (size_t)t * g->slice);
    int64_t quads = (g->n + 3) / 4;
    for (int64_t it = i0; it < i1; it++) {
        int64_t b = it / g->groups, c = it % g->groups;
        int64_t r0 = c * quads / g->groups * 4, r1 = (c + 1) * quads / g->groups * 4;
        if (r1 > g->n) r1 = g->n;
        const float *base = g->src + batch_offset(g->view, g->s1, b), *a = (const float *)g->a.p + b * g->a_bs;
        for (int64_t p0 = 0; p0 < g->k; p0 += g->kc) {
            int64_t np = g->k - p0 < g->kc ? g->k - p0 : g->kc;
            gather_block(g->view, base, g->s1, g->s2, r0, r1, p0, p0 + np, buf, g->kc);
            tj_k_gemv_n_f32_pass(g->m, r1 - r0, np, g->kc, 1.0f, buf, g->kc, a + p0, g->a.rs, p0 == 0 ? 0.0f : 1.0f,
                                 g->out + b * g->m * g->n + r0, 1, g->n);
        }
    }
}

static tj_status gathered_t_row_form(const tj_tensor *s, int s1, int s2, const operand *oa, tj_tensor *out)
{
    row_form_products g = {.view = s, .src = (const float *)(void *)tj_tensor_ptr(s), .s1 = s1, .s2 = s2,
                           .m = out->shape[1], .n = out->shape[2], .a = oa->mat, .a_bs = oa->bs,
                           .out = (float *)(void *)tj_tensor_ptr(out)};
    g.k = 1;
    for (int d = s2; d < s->ndim; d++) g.k *= s->shape[d];
    g.kc = tj_k_gemv_n_pass_cols(g.k);
    int nt = tj_get_num_threads();
    int64_t batch = out->shape[0], quads = (g.n + 3) / 4;
    g.groups = nt < quads ? nt : quads;
    int64_t items = batch * g.groups, team = items < nt ? items : nt;
    int64_t rows = (quads + g.groups - 1) / g.groups * 4;
    g.slice = ((size_t)(rows * g.kc) * sizeof(float) + 63) / 64 * 64;
    size_t want = g.slice * (size_t)team, got = 0;
    g.scratch = tj_alloc_storage_bytes(want, &got);
    if (!g.scratch) return tj_oom("aten::bmm (gathered batch2)", want);
    tj_k_parallel((int)team, items, row_form_items, &g);
    tj_free_storage_bytes(g.scratch, got);
    return TJ_OK;
}

/* The whole view s copied into scratch, [b, n, k] contiguous, and
 * multiplied as the transposed copy would be: for the routes other than
 * our kernel. */
static tj_status gathered_t_whole(const tj_tensor *s, const operand *oa, tj_tensor *out, int64_t k)
{
    int64_t batch = out->shape[0], m = out->shape[1], n = out->shape[2];
    int nt = tj_get_num_threads();
    size_t want = (size_t)s->numel * sizeof(float), got = 0;
    float *buf = tj_alloc_storage_bytes(want, &got);
    if (!buf) return tj_oom("aten::bmm (gathered batch2)", want);
    int64_t strides[TJ_MAX_DIMS];
    tj_contiguous_strides(s->ndim, s->shape, strides);
    tj_k_copy_strided((tj_k_strided){buf, TJ_FLOAT32, strides}, (tj_k_strided){tj_tensor_ptr(s), TJ_FLOAT32, s->strides},
                      s->ndim, s->shape, nt);
    tj_k_gemm(TJ_FLOAT32, batch, m, n, k, 1.0, oa->mat, oa->bs, (tj_k_mat){buf, 1, k}, n * k, 0.0,
              tj_tensor_ptr(out), m * n, n, nt, NULL);
    tj_free_storage_bytes(buf, got);
    return TJ_OK;
}

tj_status tj_kernel_bmm_gathered_t(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *s = args[1].u.t;
    tj_tensor *out = outs[0];
    if (out->numel == 0) return TJ_OK;
    int s1 = (int)args[2].u.i, s2 = (int)args[3].u.i;
    int64_t m = out->shape[1], n = out->shape[2], k = args[0].u.t->shape[2];
    if (k == 0) {
        memset(tj_tensor_ptr(out), 0, (size_t)out->numel * sizeof(float));
        return TJ_OK;
    }
    operand oa;
    tj_status st = operand_get(&oa, args[0].u.t, true);
    if (st != TJ_OK) return st;
    /* The view's dims give [n, k]: its k dims the rows of B. */
    tj_k_mat b = {NULL, 1, k};
    if (tj_k_gemm_on_own_kernel(TJ_FLOAT32, m, n, k, oa.mat, b))
        st = offset_bmm(s, s1, s2, s->ndim, s1, s2, &oa, out);
    else if (tj_k_gemm_on_row_form(TJ_FLOAT32, m, n, k, oa.mat, b))
        st = gathered_t_row_form(s, s1, s2, &oa, out);
    else
        st = gathered_t_whole(s, &oa, out, k);
    operand_release(&oa);
    return st;
}

/* ---- a product scattered as it is computed (tracer/fuse_scatter.c) ---- */

tj_status tj_kernel_product_scatter_add(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *a = args[0].u.t, *b = args[1].u.t;
    tj_tensor *out = outs[0];
    const int64_t *t = args[3].u.ints;
    int64_t rows = t[TJ_PS_ROWS], lines = t[TJ_PS_LINES], blocks = t[TJ_PS_BLOCKS];
    tj_k_scatter_pattern pat = {.lines = lines, .width = t[TJ_PS_WIDTH], .blocks = blocks,
                                .descending = t[TJ_PS_DESCENDING] != 0, .rows = rows,
                                .row_base = t + TJ_PS_HEADER, .at = t + TJ_PS_HEADER + rows,
                                .runs = t + TJ_PS_HEADER + rows + lines * blocks + 1};
    tj_copy_tensor(out, args[2].u.t);
    bool batched = a->ndim == 3;
    int d = batched ? 1 : 0;
    int64_t batch = batched ? a->shape[0] : 1, m = a->shape[d], k = a->shape[d + 1], n = b->shape[d + 1];
    operand oa, ob = {0};
    tj_status st = operand_get(&oa, a, batched);
    if (st == TJ_OK) st = operand_get(&ob, b, batched);
    bool blocked = st == TJ_OK && tj_k_product_scatter_blocked(m, n, k, oa.mat, ob.mat);
    size_t want = tj_k_product_scatter_scratch_bytes(&pat, batch, m, n, blocked, tj_get_num_threads()), got = 0;
    float *scratch = st == TJ_OK ? tj_alloc_storage_bytes(want, &got) : NULL;
    if (st == TJ_OK && !scratch) st = tj_oom("aten::bmm + aten::scatter_add", want);
    if (st == TJ_OK)
        tj_k_product_scatter_add(&pat, batch, m, n, k, oa.mat, oa.bs, ob.mat, ob.bs, (float *)(void *)tj_tensor_ptr(out),
                                 scratch, blocked, tj_get_num_threads());
    tj_free_storage_bytes(scratch, got);
    operand_release(&oa);
    operand_release(&ob);
    return st;
}

/* addmm / baddbmm: the bias is broadcast into the output first, then one
 * GEMM adds alpha * a @ b with beta; beta = 0 skips the bias entirely. */
static tj_status add_product(const tj_value *args, tj_tensor *out, bool batched, const tj_k_epilogue *epi)
{
    const tj_value *beta = &args[3];
    bool beta_zero = out->dtype == TJ_INT64 ? scalar_i64(beta) == 0 : tj_value_as_double(beta) == 0;
    if (!beta_zero) tj_copy_convert(out, args[0].u.t);
    return gemm_tensors(args[1].u.t, args[2].u.t, out, batched, &args[4], beta, epi);
}

tj_status tj_kernel_addmm(const tj_value *args, tj_tensor *const *outs)
{
    return add_product(args, outs[0], false, NULL);
}

tj_status tj_kernel_baddbmm(const tj_value *args, tj_tensor *const *outs)
{
    return add_product(args, outs[0], true, NULL);
}

tj_status tj_kernel_addmm_epilogue(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *out = outs[0];
    const tj_tensor *a = args[1].u.t, *b = args[2].u.t;
    bool batched = a->ndim == 3; /* a bmm of one batch item */
    int64_t m = a->shape[a->ndim - 2], n = b->shape[b->ndim - 1];
    /* the product's [[1,] m, n] result as the operator's result holds it */
    tj_tensor mat = *out;
    mat.ndim = batched ? 3 : 2;
    int64_t shape[3] = {1, m, n}, strides[3] = {m * n, n, 1};
    memcpy(mat.shape, shape + !batched, sizeof(int64_t) * (size_t)mat.ndim);
    memcpy(mat.strides, strides + !batched, sizeof(int64_t) * (size_t)mat.ndim);
    int slot = (int)args[6].u.i;
    const tj_value *op_args = &args[7];
    tj_k_unary_args unary = {.dtype = out->dtype};
    tj_k_axpby_args axpby = {.alpha = 1, .ialpha = 1, .dtype = out->dtype};
    tj_k_epilogue epi = {.loop = tj_k_unary_loop, .ctx = &unary, .nin = 1};
    switch ((tj_addmm_epilogue)args[5].u.i) {
    case TJ_ADDMM_RELU: unary.op = TJ_K_RELU; break;
    case TJ_ADDMM_GELU: unary.op = op_args[1].u.s[0] == 't' ? TJ_K_GELU_TANH : TJ_K_GELU; break;
    case TJ_ADDMM_ADD: {
        const tj_tensor *other = op_args[1 - slot].u.t;
        if (!tj_tensor_is_contiguous(other)) { /* the add kernel after the product */
            tj_value add_args[3] = {op_args[0], op_args[1], op_args[2]};
            add_args[slot] = tj_v_tensor(out);
            tj_status st = add_product(args, &mat, batched, NULL);
            return st != TJ_OK ? st : tj_kernel_add_Tensor(add_args, outs);
        }
        if (other->numel != out->numel) { /* one row broadcast over the result: a bias */
            epi = (tj_k_epilogue){.bias = tj_tensor_ptr(other)};
            break;
        }
        epi = (tj_k_epilogue){.loop = tj_k_add_loop, .ctx = &axpby, .nin = 2, .self = slot,
                              .other = tj_tensor_ptr(other), .other_rs = n};
        break;
    }
    }
    return add_product(args, &mat, batched, &epi);
}

/* ---- mv, dot, addmv, addr: matrix-vector products as one-column GEMMs ----
 * The vectors are viewed as [k, 1] or [1, n] matrices (stack copies of the
 * tensor with another geometry, as addmm_epilogue's result), so that
 * tj_k_gemm routes them to its matrix-vector kernels (kernels/gemv.h). */

/* t (rank <= 2, or a vector) seen as a rows x cols matrix with strides
 * (rs, cs) */
static tj_tensor as_matrix(const tj_tensor *t, int64_t rows, int64_t cols, int64_t rs, int64_t cs)
{
    tj_tensor m = *t;
    m.ndim = 2;
    m.shape[0] = rows, m.shape[1] = cols;
    m.strides[0] = rs, m.strides[1] = cs;
    m.numel = rows * cols;
    return m;
}

/* v (1-D) as a column [k, 1] or a row [1, k] */
static tj_tensor column(const tj_tensor *v) { return as_matrix(v, v->shape[0], 1, v->strides[0], 1); }
static tj_tensor row(const tj_tensor *v)
{
    return as_matrix(v, 1, v->shape[0], v->shape[0] * v->strides[0], v->strides[0]);
}

static tj_status check_vector(const char *op, const char *name, const tj_tensor *t)
{
    char s[96];
    if (t->ndim != 1)
        return tj_error(TJ_ERR_SHAPE, "%s: Expected 1-D argument %s, but got %d-D (%s)", op, name, t->ndim,
                        tj_shape_str(t->ndim, t->shape, s, sizeof s));
    return TJ_OK;
}

/* mat [m, k] @ vec [k]: the checks of mv and addmv */
static tj_status check_mv(const char *op, const tj_tensor *mat, const tj_tensor *vec)
{
    char sa[96], sb[96];
    tj_status st;
    if (mat->ndim != 2 || vec->ndim != 1)
        return tj_error(TJ_ERR_SHAPE, "%s: vector + matrix @ vector expected, got mat %s and vec %s", op,
                        tj_shape_str(mat->ndim, mat->shape, sa, sizeof sa),
                        tj_shape_str(vec->ndim, vec->shape, sb, sizeof sb));
    if ((st = check_dtypes(op, "mat", mat, "vec", vec))) return st;
    if (mat->shape[1] != vec->shape[0])
        return tj_error(TJ_ERR_SHAPE, "%s: mat %s and vec %s cannot be multiplied (%lld != %lld)", op,
                        tj_shape_str(2, mat->shape, sa, sizeof sa), tj_shape_str(1, vec->shape, sb, sizeof sb),
                        (long long)mat->shape[1], (long long)vec->shape[0]);
    tj_tensor v = column(vec);
    return check_inner(op, "mat", mat, "vec", &v);
}

tj_status tj_meta_mv(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *mat = args[0].u.t;
    if (check_mv("aten::mv", mat, args[1].u.t) != TJ_OK) return tj_last_status();
    outs[0].dtype = mat->dtype;
    outs[0].ndim = 1;
    outs[0].shape[0] = mat->shape[0];
    return TJ_OK;
}

tj_status tj_kernel_mv(const tj_value *args, tj_tensor *const *outs)
{
    tj_value one = tj_v_int(1), zero = tj_v_int(0);
    tj_tensor v = column(args[1].u.t), o = as_matrix(outs[0], outs[0]->shape[0], 1, 1, 1);
    return gemm_tensors(args[0].u.t, &v, &o, false, &one, &zero, NULL);
}

tj_status tj_meta_dot(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *a = args[0].u.t, *b = args[1].u.t;
    char sa[96], sb[96];
    tj_status st;
    if (a->ndim != 1 || b->ndim != 1)
        return tj_error(TJ_ERR_SHAPE, "aten::dot: 1D tensors expected, but got %dD and %dD tensors", a->ndim, b->ndim);
    if ((st = check_dtypes("aten::dot", "self", a, "tensor", b))) return st;
    if (a->shape[0] != b->shape[0])
        return tj_error(TJ_ERR_SHAPE, "aten::dot: inconsistent tensor size, expected tensor %s and src %s to have the "
                        "same number of elements", tj_shape_str(1, a->shape, sa, sizeof sa),
                        tj_shape_str(1, b->shape, sb, sizeof sb));
    tj_tensor r = row(a), c = column(b);
    if ((st = check_inner("aten::dot", "self", &r, "tensor", &c))) return st;
    outs[0].dtype = a->dtype;
    outs[0].ndim = 0;
    return TJ_OK;
}

tj_status tj_kernel_dot(const tj_value *args, tj_tensor *const *outs)
{
    tj_value one = tj_v_int(1), zero = tj_v_int(0);
    tj_tensor r = row(args[0].u.t), c = column(args[1].u.t), o = as_matrix(outs[0], 1, 1, 1, 1);
    return gemm_tensors(&r, &c, &o, false, &one, &zero, NULL);
}

/* self broadcasts to [m] (rank <= 1) */
tj_status tj_meta_addmv(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *mat = args[1].u.t;
    char sa[96];
    tj_status st;
    if ((st = check_mv("aten::addmv", mat, args[2].u.t)) ||
        (st = check_dtypes("aten::addmv", "self", self, "mat", mat)) ||
        (st = tj_scalar_check("aten::addmv", "beta", &args[3], mat->dtype)) ||
        (st = tj_scalar_check("aten::addmv", "alpha", &args[4], mat->dtype)))
        return st;
    if (self->ndim > 1 || (self->ndim == 1 && self->shape[0] != 1 && self->shape[0] != mat->shape[0]))
        return tj_error(TJ_ERR_SHAPE, "aten::addmv: self %s cannot be broadcast to [%lld]",
                        tj_shape_str(self->ndim, self->shape, sa, sizeof sa), (long long)mat->shape[0]);
    outs[0].dtype = mat->dtype;
    outs[0].ndim = 1;
    outs[0].shape[0] = mat->shape[0];
    return TJ_OK;
}

tj_status tj_kernel_addmv(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    tj_tensor s = self->ndim ? column(self) : *self, v = column(args[2].u.t);
    tj_tensor o = as_matrix(outs[0], outs[0]->shape[0], 1, 1, 1);
    tj_value mm_args[5] = {tj_v_tensor(&s), args[1], tj_v_tensor(&v), args[3], args[4]};
    return add_product(mm_args, &o, false, NULL);
}

/* self broadcasts to [m, n] (rank <= 2) */
tj_status tj_meta_addr(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *v1 = args[1].u.t, *v2 = args[2].u.t;
    tj_status st;
    if ((st = check_vector("aten::addr", "vec1", v1)) || (st = check_vector("aten::addr", "vec2", v2)))
        return st;
    tj_tensor c = column(v1), r = row(v2);
    tj_value mm_args[5] = {args[0], tj_v_tensor(&c), tj_v_tensor(&r), args[3], args[4]};
    return meta_add_product("aten::addr", "vec1", "vec2", false, mm_args, outs);
}

tj_status tj_kernel_addr(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor c = column(args[1].u.t), r = row(args[2].u.t);
    tj_value mm_args[5] = {args[0], tj_v_tensor(&c), tj_v_tensor(&r), args[3], args[4]};
    return add_product(mm_args, outs[0], false, NULL);
}
