/* mm, bmm, addmm, baddbmm: argument checks (shape functions) and the glue to the
 * GEMM kernels. Operands that BLAS can read as they are (row- or
 * column-major with a leading dimension: transposes, slices, broadcast
 * batches) are passed without a copy; any other layout is packed once. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "iter.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/gemm.h"
#include "kernels/parallel.h"
#include "op_elementwise.h"
#include "op_linalg.h"

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
        int64_t off = u0 * s->strides[g->s2], rest = b;
        for (int d = g->s1 - 1; d >= 0; d--) {
            off += rest % s->shape[d] * s->strides[d];
            rest /= s->shape[d];
        }
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

tj_status tj_kernel_bmm_gathered(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *s = args[1].u.t;
    tj_tensor *out = outs[0];
    if (out->numel == 0) return TJ_OK;
    gathered g = {.src = s, .s1 = (int)args[2].u.i, .s2 = (int)args[3].u.i, .m = out->shape[1],
                  .k = args[0].u.t->shape[2], .n = out->shape[2], .out = (float *)(void *)tj_tensor_ptr(out)};
    g.units = s->shape[g.s2];
    g.inner = g.n / g.units;
    operand oa;
    tj_status st = operand_get(&oa, args[0].u.t, true);
    if (st != TJ_OK) return st;
    g.a = oa.mat;
    g.a_bs = oa.bs;
    int64_t per_chunk = GATHER_CHUNK_BYTES / ((int64_t)sizeof(float) * (g.k * g.inner > 0 ? g.k * g.inner : 1));
    int64_t min_units = (GATHER_MIN_COLS + g.inner - 1) / g.inner;
    if (per_chunk < min_units) per_chunk = min_units;
    g.chunks = per_chunk < g.units ? g.units / per_chunk : 1; /* chunks of per_chunk units or more */
    /* Chunks keep the bits only where gemm.c says each column of C comes
     * out the same whatever the call's columns (our kernels; not BLAS, whose
     * sum for an output depends on where it falls in the call). Otherwise
     * one chunk per batch item: the whole product's call. Each chunk is
     * [k, cols] row-major. */
    tj_k_mat b = {NULL, g.n, 1};
    bool independent = tj_k_gemm_columns_independent(TJ_FLOAT32, g.m, g.n, g.k, g.a, b, GATHER_MIN_COLS);
    if (!independent) g.chunks = 1;
    int64_t items = out->shape[0] * g.chunks, widest = (g.units + g.chunks - 1) / g.chunks;
    /* Threads take whole chunks, each gathering and multiplying its own on
     * its core, when our kernel computes every chunk (it may run on several
     * threads at once; OpenBLAS and matrix-vector routes run one product
     * at a time with every thread). Either way each element of C is the same
     * sum as in the whole product. */
    int nt = tj_get_num_threads();
    bool split = nt > 1 && items > 1 && independent && tj_k_gemm_on_own_kernel(TJ_FLOAT32, g.m, g.n, g.k, g.a, b);
    int team = split ? (items < nt ? (int)items : nt) : 1;
    g.inner_threads = split ? 1 : nt;
    g.slice = ((size_t)(g.k * widest * g.inner) * sizeof(float) + 63) / 64 * 64;
    size_t want = g.slice * (size_t)team, got = 0;
    g.scratch = tj_alloc_storage_bytes(want, &got);
    if (!g.scratch) st = tj_oom("aten::bmm (gathered batch2)", want);
    else tj_k_parallel(team, items, gathered_items, &g);
    tj_free_storage_bytes(g.scratch, got);
    operand_release(&oa);
    return st;
}

/* ---- bmm reading batch2 as the transpose of a strided view ---- */

/* One box of a run of flat positions over some dims: an index range per
 * dim (one index in the dims outside the box's own, all of the inner ones). */
typedef struct box {
    int64_t start[TJ_MAX_DIMS], size[TJ_MAX_DIMS];
} box;

/* Flat positions [lo, hi) of dims d..nd of `shape`, with `at` fixing the
 * dims before d, as boxes appended to out[*n]: at most 2 * (nd - d) - 1. */
static void flat_boxes(const int64_t *shape, int nd, int d, int64_t lo, int64_t hi, box at, box *out, int *n)
{
    if (lo >= hi) return;
    int64_t inner = 1;
    for (int e = d + 1; e < nd; e++) inner *= shape[e];
    int64_t i0 = lo / inner, i1 = hi / inner;
    if (i0 == (hi - 1) / inner && (lo % inner || hi % inner)) { /* within one index of dim d */
        at.start[d] = i0, at.size[d] = 1;
        flat_boxes(shape, nd, d + 1, lo - i0 * inner, hi - i0 * inner, at, out, n);
        return;
    }
    int64_t first = lo % inner ? i0 + 1 : i0;
    if (lo % inner) {
        at.start[d] = i0, at.size[d] = 1;
        flat_boxes(shape, nd, d + 1, lo - i0 * inner, inner, at, out, n);
    }
    if (i1 > first) {
        box b = at;
        b.start[d] = first, b.size[d] = i1 - first;
        for (int e = d + 1; e < nd; e++) b.start[e] = 0, b.size[e] = shape[e];
        out[(*n)++] = b;
    }
    if (hi % inner) {
        at.start[d] = i1, at.size[d] = 1;
        flat_boxes(shape, nd, d + 1, 0, hi - i1 * inner, at, out, n);
    }
}

typedef struct gathered_t {
    const tj_tensor *src;
    int s1, s2;                    /* src dims [0, s1): batch, [s1, s2): n, [s2, ndim): k */
    int64_t m, k, n, rows, kc;     /* rows of the view per item, steps of the sum per chunk */
    int64_t groups;                /* items per batch item */
    tj_k_mat a;
    int64_t a_bs;
    float *out;
    char *scratch;
    size_t slice;
} gathered_t;

/* Rows [r0, r1) and columns [k0, k1) of batch item b of the view, as the
 * [n, k] matrix it flattens to, into buf (row-major, r1 - r0 rows of
 * k1 - k0). */
static void gather_block(const gathered_t *g, int64_t b, int64_t r0, int64_t r1, int64_t k0, int64_t k1, float *buf)
{
    const tj_tensor *s = g->src;
    int nn = g->s2 - g->s1, nk = s->ndim - g->s2;
    const int64_t *nshape = s->shape + g->s1, *kshape = s->shape + g->s2;
    int64_t base = 0, rest = b, kc = k1 - k0;
    for (int d = g->s1 - 1; d >= 0; d--) {
        base += rest % s->shape[d] * s->strides[d];
        rest /= s->shape[d];
    }
    box nb[2 * TJ_MAX_DIMS], kb[2 * TJ_MAX_DIMS], none = {{0}, {0}};
    int n_nb = 0, n_kb = 0;
    flat_boxes(nshape, nn, 0, r0, r1, none, nb, &n_nb);
    flat_boxes(kshape, nk, 0, k0, k1, none, kb, &n_kb);
    for (int i = 0; i < n_nb; i++)
        for (int j = 0; j < n_kb; j++) {
            int64_t shape[TJ_MAX_DIMS], dst_strides[TJ_MAX_DIMS], off = base, row = 0, col = 0, inner = 1;
            for (int d = nk - 1; d >= 0; d--) {
                shape[nn + d] = kb[j].size[d];
                dst_strides[nn + d] = inner;
                off += kb[j].start[d] * s->strides[g->s2 + d];
                col += kb[j].start[d] * inner;
                inner *= kshape[d];
            }
            inner = 1;
            for (int d = nn - 1; d >= 0; d--) {
                shape[d] = nb[i].size[d];
                dst_strides[d] = inner * kc;
                off += nb[i].start[d] * s->strides[g->s1 + d];
                row += nb[i].start[d] * inner;
                inner *= nshape[d];
            }
            tj_k_copy_strided((tj_k_strided){buf + (row - r0) * kc + (col - k0), TJ_FLOAT32, dst_strides},
                              (tj_k_strided){(float *)(void *)tj_tensor_ptr(s) + off, TJ_FLOAT32, s->strides + g->s1},
                              nn + nk, shape, 1);
        }
}

/* Items [i0, i1) (batch item * groups + group of rows of the view): the
 * group's part of the view gathered a chunk of the sum at a time into
 * thread t's slice and multiplied into its columns of C, each chunk a run
 * of whole blocks of our kernel's sum added into C. */
static void gathered_t_items(void *ctx, int t, int64_t i0, int64_t i1)
{
    const gathered_t *g = ctx;
    float *buf = (float *)(void *)(g->scratch + (size_t)t * g->slice);
    for (int64_t it = i0; it < i1; it++) {
        int64_t b = it / g->groups, r0 = it % g->groups * g->rows, r1 = r0 + g->rows < g->n ? r0 + g->rows : g->n;
        for (int64_t k0 = 0; k0 < g->k; k0 += g->kc) {
            int64_t kc = g->k - k0 < g->kc ? g->k - k0 : g->kc;
            gather_block(g, b, r0, r1, k0, k0 + kc, buf);
            tj_k_gemm_f32(g->m, r1 - r0, kc, 1.0f, (const float *)g->a.p + b * g->a_bs + k0 * g->a.cs, g->a.rs,
                          g->a.cs, buf, 1, kc, k0 == 0 ? 0.0f : 1.0f, g->out + b * g->m * g->n + r0, g->n, 1, NULL);
        }
    }
}

/* The whole view copied into scratch, [b, n, k] contiguous, and multiplied
 * as the transposed copy would be: for the routes other than our kernel,
 * whose sums cannot be split. */
static tj_status gathered_t_whole(const gathered_t *g, int64_t batch, int nt)
{
    const tj_tensor *s = g->src;
    size_t want = (size_t)s->numel * sizeof(float), got = 0;
    float *buf = tj_alloc_storage_bytes(want, &got);
    if (!buf) return tj_oom("aten::bmm (gathered batch2)", want);
    int64_t strides[TJ_MAX_DIMS];
    tj_contiguous_strides(s->ndim, s->shape, strides);
    tj_k_copy_strided((tj_k_strided){buf, TJ_FLOAT32, strides}, (tj_k_strided){tj_tensor_ptr(s), TJ_FLOAT32, s->strides},
                      s->ndim, s->shape, nt);
    tj_k_gemm(TJ_FLOAT32, batch, g->m, g->n, g->k, 1.0, g->a, g->a_bs, (tj_k_mat){buf, 1, g->k}, g->n * g->k, 0.0,
              g->out, g->m * g->n, g->n, nt, NULL);
    tj_free_storage_bytes(buf, got);
    return TJ_OK;
}

tj_status tj_kernel_bmm_gathered_t(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *s = args[1].u.t;
    tj_tensor *out = outs[0];
    if (out->numel == 0) return TJ_OK;
    int64_t batch = out->shape[0];
    gathered_t g = {.src = s, .s1 = (int)args[2].u.i, .s2 = (int)args[3].u.i, .m = out->shape[1],
                    .k = args[0].u.t->shape[2], .n = out->shape[2], .out = (float *)(void *)tj_tensor_ptr(out)};
    if (g.k == 0) {
        memset(g.out, 0, (size_t)out->numel * sizeof(float));
        return TJ_OK;
    }
    operand oa;
    tj_status st = operand_get(&oa, args[0].u.t, true);
    if (st != TJ_OK) return st;
    g.a = oa.mat;
    g.a_bs = oa.bs;
    int nt = tj_get_num_threads();
    if (!tj_k_gemm_on_own_kernel(TJ_FLOAT32, g.m, g.n, g.k, g.a, (tj_k_mat){NULL, 1, g.k})) {
        st = gathered_t_whole(&g, batch, nt);
        operand_release(&oa);
        return st;
    }
    /* Each thread takes groups of rows of the view, at most what fits the
     * chunk budget one block of the sum long, and runs them through the
     * whole sum in chunks of blocks that fit the budget. */
    int64_t block = tj_k_gemm_sum_block(), row_bytes = block * (int64_t)sizeof(float);
    int64_t max_rows = GATHER_CHUNK_BYTES / row_bytes, per_item = (g.n + nt - 1) / nt;
    if (per_item > max_rows) per_item = max_rows;
    g.groups = (g.n + per_item - 1) / per_item;
    g.rows = (g.n + g.groups - 1) / g.groups;
    g.kc = GATHER_CHUNK_BYTES / (g.rows * row_bytes) * block;
    if (g.kc > g.k) g.kc = g.k;
    int64_t items = batch * g.groups;
    int team = items < nt ? (int)items : nt;
    g.slice = ((size_t)(g.rows * g.kc) * sizeof(float) + 63) / 64 * 64;
    size_t want = g.slice * (size_t)team, got = 0;
    g.scratch = tj_alloc_storage_bytes(want, &got);
    if (!g.scratch) st = tj_oom("aten::bmm (gathered batch2)", want);
    else tj_k_parallel(team, items, gathered_t_items, &g);
    tj_free_storage_bytes(g.scratch, got);
    operand_release(&oa);
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
    int64_t m = args[1].u.t->shape[0], n = args[2].u.t->shape[1];
    /* addmm's [m, n] result as the operator's result holds it */
    tj_tensor mat = *out;
    mat.ndim = 2;
    mat.shape[0] = m;
    mat.shape[1] = n;
    mat.strides[0] = n;
    mat.strides[1] = 1;
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
            tj_status st = add_product(args, &mat, false, NULL);
            return st != TJ_OK ? st : tj_kernel_add_Tensor(add_args, outs);
        }
        epi = (tj_k_epilogue){.loop = tj_k_add_loop, .ctx = &axpby, .nin = 2, .self = slot,
                              .other = tj_tensor_ptr(other), .other_rs = n};
        break;
    }
    }
    return add_product(args, &mat, false, &epi);
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
