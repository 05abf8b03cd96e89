/* Linear-algebra decompositions. Implicit composites as ATen 1.13 writes
 * them (LinearAlgebra.cpp, Linear.cpp): matmul lowers to mm / bmm plus
 * views, expand and reshape, with dot for 1-D @ 1-D and mv wherever a
 * vector meets a matrix or a folded batch (as torch 1.13's make_fx records
 * them); linear is t + addmm (or mm / matmul without bias). addmm and baddbmm (composite with a
 * kernel) as torch._decomp writes them: mm / bmm, mul and add. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "op_linalg.h"

static tj_status done(tj_tensor *r, tj_value *outs)
{
    if (!r) return tj_last_status();
    outs[0] = tj_v_tensor(r);
    return TJ_OK;
}

static int64_t prod(const int64_t *s, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= s[i];
    return p;
}

/* ATen's should_fold: a batched tensor times a vector or matrix folds its
 * batch into one mm, except a [b, n, m] tensor with its last two dims
 * transposed (permute(0, 2, 1)), which bmm reads without a copy. */
static bool should_fold(tj_tensor *t1, int dim2)
{
    int d1 = tj_tensor_ndim(t1);
    if (d1 < 3 || (dim2 != 1 && dim2 != 2)) return false;
    const int64_t *sz = tj_tensor_shape(t1), *st = tj_tensor_strides(t1);
    return !(d1 == 3 && dim2 == 2 && st[2] != 1 && st[0] == sz[1] * sz[2]);
}

/* mat [r, k] times vec [k] as mm with a [k, 1] column: [r, 1] (the mv and
 * dot decompositions: bmm / mm stay the core table's products). */
static tj_tensor *mv_as_mm(tj_tensor *mat, tj_tensor *vec) { return tj_mm(mat, tj_unsqueeze(vec, 1)); }

/* tensor1 (>= 3-D) @ tensor2 (1-D or 2-D), or tensor2 (>= 3-D) transposed
 * against tensor1 (1-D or 2-D): the batch folds into mm's rows. */
static tj_tensor *matmul_folded(tj_tensor *tensor1, tj_tensor *tensor2)
{
    int dim1 = tj_tensor_ndim(tensor1), dim2 = tj_tensor_ndim(tensor2);
    bool transpose = dim2 > dim1;
    tj_tensor *t1 = transpose ? tj_transpose(tensor2, -2, -1) : tensor1;
    tj_tensor *t2 = !transpose ? tensor2 : dim1 == 2 ? tj_t(tensor1) : tensor1;
    if (!t1 || !t2) return NULL;
    int n1 = tj_tensor_ndim(t1);
    int64_t out_shape[TJ_MAX_DIMS];
    memcpy(out_shape, tj_tensor_shape(t1), sizeof(int64_t) * (size_t)(n1 - 1));
    int nout = n1 - 1;
    int64_t folded[2] = {prod(out_shape, nout), tj_tensor_shape(t1)[n1 - 1]};
    tj_tensor *t1_folded = tj_reshape(t1, folded, 2);
    if (tj_tensor_ndim(t2) == 1) return tj_unsafe_view(tj_mv(t1_folded, t2), out_shape, nout);
    out_shape[nout++] = tj_tensor_shape(t2)[1];
    tj_tensor *output = tj_unsafe_view(tj_mm(t1_folded, t2), out_shape, nout);
    return transpose ? tj_contiguous(tj_transpose(output, -2, -1)) : output;
}

/* Broadcast batch dims: both sides expand to the common batch, flatten to
 * one batch dim and meet in bmm. */
static tj_tensor *matmul_batched(tj_tensor *tensor1, tj_tensor *tensor2)
{
    int dim1 = tj_tensor_ndim(tensor1), dim2 = tj_tensor_ndim(tensor2);
    const int64_t *s1 = tj_tensor_shape(tensor1), *s2 = tj_tensor_shape(tensor2);
    int64_t n = dim1 > 1 ? s1[dim1 - 2] : 1, m1 = s1[dim1 - 1];
    int64_t m2 = dim2 > 1 ? s2[dim2 - 2] : s2[0], p = dim2 > 1 ? s2[dim2 - 1] : 1;
    int nb1 = dim1 > 2 ? dim1 - 2 : 0, nb2 = dim2 > 2 ? dim2 - 2 : 0, nout;
    int64_t out_shape[TJ_MAX_DIMS + 2], e1[TJ_MAX_DIMS + 2], e2[TJ_MAX_DIMS + 2];
    if (tj_broadcast_shapes("aten::matmul", nb1, s1, nb2, s2, &nout, out_shape) != TJ_OK) return NULL;
    int64_t batch = prod(out_shape, nout);
    memcpy(e1, out_shape, sizeof(int64_t) * (size_t)nout);
    memcpy(e2, out_shape, sizeof(int64_t) * (size_t)nout);
    e1[nout] = n;
    e1[nout + 1] = m1;
    tj_tensor *t1 = tj_reshape(tj_expand(tensor1, e1, nout + 2), (const int64_t[]){batch, n, m1}, 3);
    bool vector_rhs = dim2 == 1;
    e2[nout] = m2;
    e2[nout + 1] = p;
    tj_tensor *t2 = tj_expand(tensor2, e2, nout + (vector_rhs ? 1 : 2));
    t2 = vector_rhs ? tj_unsqueeze(tj_reshape(t2, (const int64_t[]){batch, m2}, 2), 2)
                    : tj_reshape(t2, (const int64_t[]){batch, m2, p}, 3);
    if (dim1 > 1) out_shape[nout++] = n;
    if (dim2 > 1) out_shape[nout++] = p;
    tj_tensor *r = tj_bmm(t1, t2);
    if (vector_rhs) r = tj_squeeze_dim(r, -1);
    return tj_unsafe_view(r, out_shape, nout);
}

static tj_status matmul(const tj_value *args, tj_value *outs)
{
    tj_tensor *a = args[0].u.t, *b = args[1].u.t;
    int dim1 = tj_tensor_ndim(a), dim2 = tj_tensor_ndim(b);
    const int64_t *s1 = tj_tensor_shape(a), *s2 = tj_tensor_shape(b);
    char sa[96], sb[96];
    if (dim1 == 0 || dim2 == 0)
        return tj_error(TJ_ERR_SHAPE, "aten::matmul: both arguments need to be at least 1-D, got %d-D and %d-D", dim1,
                        dim2);
    int64_t k1 = s1[dim1 - 1], k2 = dim2 == 1 ? s2[0] : s2[dim2 - 2];
    if (k1 != k2)
        return tj_error(TJ_ERR_SHAPE, "aten::matmul: self %s and other %s cannot be multiplied (%lld != %lld)",
                        tj_shape_str(dim1, s1, sa, sizeof sa), tj_shape_str(dim2, s2, sb, sizeof sb), (long long)k1,
                        (long long)k2);
    if (dim1 == 1 && dim2 == 1) return done(tj_dot(a, b), outs);
    if (dim1 == 2 && dim2 == 1) return done(tj_mv(a, b), outs);
    /* ATen squeezes in place (squeeze_.dim), which tjit has not: squeeze.dim */
    if (dim1 == 1 && dim2 == 2) return done(tj_squeeze_dim(tj_mm(tj_unsqueeze(a, 0), b), 0), outs);
    if (dim1 == 2 && dim2 == 2) return done(tj_mm(a, b), outs);
    if (should_fold(a, dim2) || should_fold(b, dim1)) return done(matmul_folded(a, b), outs);
    return done(matmul_batched(a, b), outs);
}

/* Whether `small` broadcasts to `big`'s shape without changing it. */
static bool fits_into(const tj_tensor *small, const tj_tensor *big)
{
    int ns = tj_tensor_ndim(small), nb = tj_tensor_ndim(big);
    if (ns > nb) return false;
    for (int d = 0; d < ns; d++) {
        int64_t s = tj_tensor_shape(small)[ns - 1 - d], b = tj_tensor_shape(big)[nb - 1 - d];
        if (s != 1 && s != b) return false;
    }
    return true;
}

/* ATen's linear: addmm for 2-D input with bias; a contiguous N-D input with
 * bias is viewed as 2-D around one addmm; otherwise matmul (+ add: ATen's
 * add_ into the product, so a bias that would enlarge it is an error). */
static tj_status linear(const tj_value *args, tj_value *outs)
{
    tj_tensor *x = args[0].u.t, *w = args[1].u.t, *bias = args[2].kind == TJ_V_TENSOR ? args[2].u.t : NULL;
    tj_value one = tj_v_int(1);
    int nd = tj_tensor_ndim(x);
    const int64_t *xs = tj_tensor_shape(x);
    tj_tensor *wt = tj_t(w);
    if (!wt) return tj_last_status();
    if (bias && nd == 2) return done(tj_addmm(bias, x, wt, one, one), outs);
    if (bias && nd >= 3 && tj_tensor_is_contiguous(x)) {
        int64_t flat[2] = {prod(xs, nd - 1), xs[nd - 1]}, shape[TJ_MAX_DIMS];
        tj_tensor *r = tj_addmm(bias, tj_view(x, flat, 2), wt, one, one);
        if (!r) return tj_last_status();
        memcpy(shape, xs, sizeof(int64_t) * (size_t)(nd - 1));
        shape[nd - 1] = tj_tensor_shape(r)[1];
        return done(tj_view(r, shape, nd), outs);
    }
    tj_tensor *r = tj_matmul(x, wt);
    if (r && bias && !fits_into(bias, r)) {
        char sb[96], sr[96];
        return tj_error(TJ_ERR_SHAPE, "aten::linear: bias %s cannot be broadcast to the product's shape %s",
                        tj_shape_str(tj_tensor_ndim(bias), tj_tensor_shape(bias), sb, sizeof sb),
                        tj_shape_str(tj_tensor_ndim(r), tj_tensor_shape(r), sr, sizeof sr));
    }
    return done(bias ? tj_add(r, bias) : r, outs);
}

/* An int64 Scalar as ATen converts it (a float truncates toward zero). */
static tj_value int_scalar(const tj_value *v)
{
    if (v->kind != TJ_V_FLOAT) return tj_v_int(v->kind == TJ_V_BOOL ? (int64_t)v->u.b : v->u.i);
    return tj_v_int(isfinite(v->u.f) && fabs(v->u.f) < 9.2e18 ? (int64_t)v->u.f : 0);
}

/* torch._decomp's addmm and baddbmm: out = alpha * product(a, b) (mm or
 * bmm); beta == 0 returns out (self ignored, nan included), else beta * self
 * + out. alpha == 0 ignores the product as the kernel's GEMM does (BLAS
 * reads neither operand then: inf and nan in them do not reach the result,
 * where alpha * product would be nan): beta * self broadcast to the result,
 * or zeros when beta is 0 too. Integer tensors take the scalars as
 * integers. The kernel's shape function checks the arguments. */
static tj_status add_product(const tj_value *args, tj_meta_fn meta, tj_tensor *(*product)(tj_tensor *, tj_tensor *),
                             tj_value *outs)
{
    tj_meta m[1];
    if (meta(args, m) != TJ_OK) return tj_last_status();
    bool integral = m[0].dtype == TJ_INT64;
    tj_value beta = integral ? int_scalar(&args[3]) : args[3], alpha = integral ? int_scalar(&args[4]) : args[4];
    bool beta_zero = tj_value_as_double(&beta) == 0;
    if (tj_value_as_double(&alpha) == 0) {
        if (beta_zero) return done(tj_zeros(m[0].shape, m[0].ndim, m[0].dtype), outs);
        return done(tj_clone(tj_expand(tj_mul_scalar(args[0].u.t, beta), m[0].shape, m[0].ndim)), outs);
    }
    tj_tensor *out = tj_mul_scalar(product(args[1].u.t, args[2].u.t), alpha);
    if (beta_zero) return done(out, outs);
    return done(tj_add(tj_mul_scalar(args[0].u.t, beta), out), outs);
}

static tj_status addmm(const tj_value *args, tj_value *outs) { return add_product(args, tj_meta_addmm, tj_mm, outs); }

static tj_status baddbmm(const tj_value *args, tj_value *outs)
{
    return add_product(args, tj_meta_baddbmm, tj_bmm, outs);
}

/* mv, dot: mm of the vectors viewed as [k, 1] columns and [1, n] rows, the
 * kernels' own product (torch._decomp writes them as a mul and a sum);
 * addmv, addr: add_product over these products, as addmm */
static tj_tensor *mv_product(tj_tensor *mat, tj_tensor *vec)
{
    return tj_squeeze_dim(mv_as_mm(mat, vec), 1);
}

static tj_tensor *outer_product(tj_tensor *vec1, tj_tensor *vec2)
{
    return tj_mm(tj_unsqueeze(vec1, 1), tj_unsqueeze(vec2, 0));
}

static tj_status mv(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_meta_mv(args, m) != TJ_OK) return tj_last_status();
    return done(mv_product(args[0].u.t, args[1].u.t), outs);
}

static tj_status dot(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_meta_dot(args, m) != TJ_OK) return tj_last_status();
    return done(tj_view(mv_as_mm(tj_unsqueeze(args[0].u.t, 0), args[1].u.t), m[0].shape, 0), outs);
}

static tj_status addmv(const tj_value *args, tj_value *outs)
{
    return add_product(args, tj_meta_addmv, mv_product, outs);
}

static tj_status addr(const tj_value *args, tj_value *outs)
{
    return add_product(args, tj_meta_addr, outer_product, outs);
}

/* outer (implicit, ATen's): self.reshape([n, 1]) * vec2, both 1-D */
static tj_status outer(const tj_value *args, tj_value *outs)
{
    const char *names[2] = {"self", "vec2"};
    for (int k = 0; k < 2; k++) {
        int nd = tj_tensor_ndim(args[k].u.t);
        if (nd != 1)
            return tj_error(TJ_ERR_SHAPE, "aten::outer: Expected 1-D argument %s, but got %d-D", names[k], nd);
    }
    int64_t shape[2] = {tj_tensor_shape(args[0].u.t)[0], 1};
    return done(tj_mul(tj_reshape(args[0].u.t, shape, 2), args[1].u.t), outs);
}

void tj_register_linalg_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(mv), mv, "mv");
    tj_op_set_decomposition(TJ_OPS(dot), dot, "dot");
    tj_op_set_decomposition(TJ_OPS(addmv), addmv, "addmv");
    tj_op_set_decomposition(TJ_OPS(addr), addr, "addr");
    tj_op_set_decomposition(TJ_OPS(outer), outer, "outer");
    tj_op_set_decomposition(TJ_OPS(addmm), addmm, "addmm");
    tj_op_set_decomposition(TJ_OPS(baddbmm), baddbmm, "baddbmm");
    tj_op_set_decomposition(TJ_OPS(matmul), matmul, "matmul");
    tj_op_set_decomposition(TJ_OPS(linear), linear, "linear");
}
