/* Creation and random operators: sizes and dtypes (shape functions) and the
 * glue to the fills in kernels/fill.c and the generator in random.c.
 * Defaults as in PyTorch 1.13: dtype None means float32 (the default dtype),
 * except that full infers it from its fill value, arange from its
 * arguments (all integers -> int64) and the *_like and new_* operators take
 * self's. */
#include <math.h>
#include <string.h>

#include "iter.h"
#include "kernels/fill.h"
#include "op_creation.h"
#include "random.h"

/* ---- shared helpers ---- */

static tj_dtype dtype_or(const tj_value *v, tj_dtype def) { return v->kind == TJ_V_DTYPE ? v->u.dtype : def; }

/* Output geometry of a `SymInt[] size` argument. */
tj_status tj_size_meta(const char *op, const tj_value *size, tj_dtype dtype, tj_meta *m)
{
    char b[200];
    if (size->n > TJ_MAX_DIMS)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: size %s has %d dims, more than the maximum rank %d", op,
                        tj_shape_str(size->n, size->u.ints, b, sizeof b), size->n, TJ_MAX_DIMS);
    for (int d = 0; d < size->n; d++)
        if (size->u.ints[d] < 0)
            return tj_error(TJ_ERR_SHAPE, "%s: Trying to create tensor with negative dimension %lld: %s", op,
                            (long long)size->u.ints[d], tj_shape_str(size->n, size->u.ints, b, sizeof b));
    m->dtype = dtype;
    m->ndim = size->n;
    if (size->n) memcpy(m->shape, size->u.ints, sizeof(int64_t) * (size_t)size->n);
    int64_t numel;
    return tj_checked_numel(m->ndim, m->shape, &numel, op);
}

tj_status tj_scalar_to(const char *op, const tj_value *v, tj_dtype dtype, void *buf)
{
    tj_status st = tj_scalar_check(op, "value", v, dtype);
    if (st != TJ_OK) return st;
    if (v->kind == TJ_V_FLOAT) tj_k_store_f64(buf, dtype, v->u.f);
    else tj_k_store_i64(buf, dtype, v->kind == TJ_V_BOOL ? v->u.b : v->u.i);
    return TJ_OK;
}

/* Fills out with the Scalar v (already validated by the shape function). */
static tj_status fill_scalar(const char *op, tj_tensor *out, const tj_value *v)
{
    _Alignas(8) char buf[8];
    if (tj_scalar_to(op, v, out->dtype, buf) != TJ_OK) return tj_last_status();
    tj_k_fill(tj_tensor_ptr(out), tj_dtype_size(out->dtype), buf, out->numel, tj_threads_for(out->numel));
    return TJ_OK;
}

static tj_status fill_int(const char *op, tj_tensor *out, int64_t v)
{
    tj_value scalar = tj_v_int(v);
    return fill_scalar(op, out, &scalar);
}

/* ---- zeros / ones ---- */

tj_status tj_meta_zeros(const tj_value *args, tj_meta *outs)
{
    return tj_size_meta("aten::zeros", &args[0], dtype_or(&args[1], TJ_FLOAT32), &outs[0]);
}

tj_status tj_meta_ones(const tj_value *args, tj_meta *outs)
{
    return tj_size_meta("aten::ones", &args[0], dtype_or(&args[1], TJ_FLOAT32), &outs[0]);
}

tj_status tj_kernel_zeros(const tj_value *args, tj_tensor *const *outs)
{
    return fill_int("aten::zeros", outs[0], 0);
}

tj_status tj_kernel_ones(const tj_value *args, tj_tensor *const *outs)
{
    return fill_int("aten::ones", outs[0], 1);
}

/* ---- full / scalar_tensor ---- */

static const char *const FULL = "aten::full";
static const char *const SCALAR_TENSOR = "aten::scalar_tensor";

tj_status tj_meta_full(const tj_value *args, tj_meta *outs)
{
    const tj_value *fill = &args[1];
    tj_dtype inferred = fill->kind == TJ_V_INT ? TJ_INT64 : fill->kind == TJ_V_BOOL ? TJ_BOOL : TJ_FLOAT32;
    tj_dtype dtype = dtype_or(&args[2], inferred);
    char buf[8];
    if (tj_scalar_to(FULL, fill, dtype, buf) != TJ_OK) return tj_last_status();
    return tj_size_meta(FULL, &args[0], dtype, &outs[0]);
}

tj_status tj_kernel_full(const tj_value *args, tj_tensor *const *outs) { return fill_scalar(FULL, outs[0], &args[1]); }

tj_status tj_meta_scalar_tensor(const tj_value *args, tj_meta *outs)
{
    tj_dtype dtype = dtype_or(&args[1], TJ_FLOAT32);
    char buf[8];
    if (tj_scalar_to(SCALAR_TENSOR, &args[0], dtype, buf) != TJ_OK) return tj_last_status();
    outs[0].dtype = dtype;
    outs[0].ndim = 0;
    return TJ_OK;
}

tj_status tj_kernel_scalar_tensor(const tj_value *args, tj_tensor *const *outs)
{
    return fill_scalar(SCALAR_TENSOR, outs[0], &args[0]);
}

/* ---- arange ---- */

/* start, step and length of an arange, in the arithmetic of its dtype. */
typedef struct arange_plan {
    tj_dtype dtype;
    int64_t istart, istep;
    double fstart, fstep;
    int64_t n;
} arange_plan;

/* The overloads by their number of Scalar arguments: arange (end),
 * arange.start (start, end), arange.start_step (start, end, step). */
static const char *const ARANGE_OPS[4] = {NULL, "aten::arange", "aten::arange.start", "aten::arange.start_step"};

/* PyTorch's checks and length: ceil((end - start) / step) in double for
 * float dtypes; exact integer arithmetic for int64 (arguments truncated).
 * args holds n_scalars of start, end, step (a missing start is the int 0,
 * a missing step the int 1: ints, so they leave the dtype to the others),
 * then dtype. */
static tj_status arange_plan_of(int n_scalars, const tj_value *args, arange_plan *p)
{
    const char *op = ARANGE_OPS[n_scalars];
    *p = (arange_plan){0};
    const tj_value sse[3] = {n_scalars >= 2 ? args[0] : tj_v_int(0), args[n_scalars >= 2],
                             n_scalars == 3 ? args[2] : tj_v_int(1)};
    bool all_int = true;
    for (int k = 0; k < 3; k++) all_int = all_int && sse[k].kind != TJ_V_FLOAT;
    p->dtype = dtype_or(&args[n_scalars], all_int ? TJ_INT64 : TJ_FLOAT32);
    if (p->dtype == TJ_BOOL) return tj_error(TJ_ERR_DTYPE, "%s: not implemented for 'bool'", op);
    double fs = tj_value_as_double(&sse[0]), fe = tj_value_as_double(&sse[1]), fst = tj_value_as_double(&sse[2]);
    double size_d;
    if (p->dtype == TJ_INT64) {
        int64_t v[3];
        for (int k = 0; k < 3; k++)
            if (tj_scalar_to(op, &sse[k], TJ_INT64, &v[k]) != TJ_OK) return tj_last_status();
        if (v[2] == 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: step must be nonzero", op);
        if (!((v[2] > 0 && v[1] >= v[0]) || (v[2] < 0 && v[1] <= v[0])))
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: upper bound and larger bound inconsistent with step sign "
                                                     "(start %lld, end %lld, step %lld)", op,
                            (long long)v[0], (long long)v[1], (long long)v[2]);
        __int128 sgn = v[2] > 0 ? 1 : -1;
        __int128 len = ((__int128)v[1] - v[0] + v[2] - sgn) / v[2];
        p->istart = v[0];
        p->istep = v[2];
        size_d = (double)len;
    } else {
        if (!isfinite(fs) || !isfinite(fe))
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: unsupported range: %g -> %g", op, fs, fe);
        if (fst == 0 || isnan(fst)) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: step must be nonzero", op);
        if (!((fst > 0 && fe >= fs) || (fst < 0 && fe <= fs)))
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: upper bound and larger bound inconsistent with step sign "
                                                     "(start %g, end %g, step %g)", op, fs, fe, fst);
        p->fstart = fs;
        p->fstep = fst;
        size_d = ceil((fe - fs) / fst);
    }
    if (!(size_d >= 0 && size_d < 0x1p62))
        return tj_error(TJ_ERR_OVERFLOW, "%s: invalid size %g, possible overflow?", op, size_d);
    p->n = (int64_t)size_d;
    return TJ_OK;
}

static tj_status meta_arange(int n_scalars, const tj_value *args, tj_meta *outs)
{
    arange_plan p;
    if (arange_plan_of(n_scalars, args, &p) != TJ_OK) return tj_last_status();
    tj_value size = tj_v_ints(&p.n, 1);
    return tj_size_meta(ARANGE_OPS[n_scalars], &size, p.dtype, &outs[0]);
}

static tj_status kernel_arange(int n_scalars, const tj_value *args, tj_tensor *const *outs)
{
    arange_plan p;
    if (arange_plan_of(n_scalars, args, &p) != TJ_OK) return tj_last_status();
    tj_tensor *out = outs[0];
    int nt = tj_threads_for(out->numel);
    if (p.dtype == TJ_INT64) tj_k_arange_i64((int64_t *)tj_tensor_ptr(out), p.istart, p.istep, out->numel, nt);
    else tj_k_arange_f(tj_tensor_ptr(out), p.dtype, p.fstart, p.fstep, out->numel, nt);
    return TJ_OK;
}

tj_status tj_meta_arange(const tj_value *args, tj_meta *outs) { return meta_arange(3, args, outs); }
tj_status tj_meta_arange_start(const tj_value *args, tj_meta *outs) { return meta_arange(2, args, outs); }
tj_status tj_meta_arange_default(const tj_value *args, tj_meta *outs) { return meta_arange(1, args, outs); }
tj_status tj_kernel_arange(const tj_value *args, tj_tensor *const *outs) { return kernel_arange(3, args, outs); }
tj_status tj_kernel_arange_start(const tj_value *args, tj_tensor *const *outs) { return kernel_arange(2, args, outs); }
tj_status tj_kernel_arange_default(const tj_value *args, tj_tensor *const *outs) { return kernel_arange(1, args, outs); }

/* ---- empty (zero-filled: a plan may reuse memory, so zeros are what a
 * replay gives too) ---- */

tj_status tj_meta_empty_memory_format(const tj_value *args, tj_meta *outs)
{
    return tj_size_meta("aten::empty.memory_format", &args[0], dtype_or(&args[1], TJ_FLOAT32), &outs[0]);
}

/* ---- rand / randn / bernoulli ---- */

static tj_status check_random_dtype(const char *op, tj_dtype dtype)
{
    if (tj_dtype_category(dtype) != TJ_CAT_FLOAT)
        return tj_error(TJ_ERR_DTYPE, "%s: dtype %s is not supported (float32 or float64)", op, tj_dtype_name(dtype));
    return TJ_OK;
}

static tj_status meta_random(const char *op, const tj_value *args, tj_meta *outs)
{
    tj_dtype dtype = dtype_or(&args[1], TJ_FLOAT32);
    if (check_random_dtype(op, dtype) != TJ_OK) return tj_last_status();
    return tj_size_meta(op, &args[0], dtype, &outs[0]);
}

tj_status tj_meta_rand(const tj_value *args, tj_meta *outs) { return meta_random("aten::rand", args, outs); }
tj_status tj_meta_randn(const tj_value *args, tj_meta *outs) { return meta_random("aten::randn", args, outs); }

tj_status tj_kernel_rand(const tj_value *args, tj_tensor *const *outs)
{
    tj_random_fill(TJ_K_RANDOM_UNIFORM, tj_tensor_ptr(outs[0]), outs[0]->dtype, outs[0]->numel, 0);
    return TJ_OK;
}

tj_status tj_kernel_randn(const tj_value *args, tj_tensor *const *outs)
{
    tj_random_fill(TJ_K_RANDOM_NORMAL, tj_tensor_ptr(outs[0]), outs[0]->dtype, outs[0]->numel, 0);
    return TJ_OK;
}

tj_status tj_meta_bernoulli_p(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    double p = tj_value_as_double(&args[1]);
    if (!(p >= 0 && p <= 1))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "aten::bernoulli.p: expects p to be in [0, 1], but got p=%g", p);
    tj_meta_like(&outs[0], x);
    return TJ_OK;
}

/* The output is self itself for the in-place form (bernoulli_.float), which
 * may be a strided view: the draw goes through a contiguous temporary then,
 * in the same order of elements. */
tj_status tj_kernel_bernoulli_p(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *out = outs[0], *dst = out;
    if (!tj_tensor_is_contiguous(out)) {
        tj_meta m;
        tj_meta_like(&m, out);
        if (!(dst = tj_tensor_new_meta(&m, false))) return tj_last_status();
    }
    tj_random_fill(TJ_K_RANDOM_BERNOULLI, tj_tensor_ptr(dst), dst->dtype, dst->numel, tj_value_as_double(&args[1]));
    if (dst != out) {
        tj_copy_convert(out, dst);
        tj_tensor_release(dst);
    }
    return TJ_OK;
}

/* ---- the *_like family ---- */

/* self's shape; dtype args[dtype_arg], or self's when None. */
static tj_status meta_like(const tj_value *args, int dtype_arg, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    tj_meta_like(&outs[0], self);
    outs[0].dtype = dtype_or(&args[dtype_arg], self->dtype);
    return TJ_OK;
}

tj_status tj_meta_zeros_like(const tj_value *args, tj_meta *outs) { return meta_like(args, 1, outs); }
tj_status tj_meta_ones_like(const tj_value *args, tj_meta *outs) { return meta_like(args, 1, outs); }
tj_status tj_meta_empty_like(const tj_value *args, tj_meta *outs) { return meta_like(args, 1, outs); }

/* The fill value must convert to the result dtype (a float into int64
 * truncates; nan, infinities and out-of-range values are refused). */
tj_status tj_meta_full_like(const tj_value *args, tj_meta *outs)
{
    meta_like(args, 2, outs);
    char buf[8];
    return tj_scalar_to("aten::full_like", &args[1], outs[0].dtype, buf);
}

static tj_status meta_random_like(const char *op, const tj_value *args, tj_meta *outs)
{
    meta_like(args, 1, outs);
    return check_random_dtype(op, outs[0].dtype);
}

tj_status tj_meta_rand_like(const tj_value *args, tj_meta *outs) { return meta_random_like("aten::rand_like", args, outs); }
tj_status tj_meta_randn_like(const tj_value *args, tj_meta *outs) { return meta_random_like("aten::randn_like", args, outs); }

/* zeros_like, and empty_like, whose memory is zero-filled here. */
tj_status tj_kernel_zeros_like(const tj_value *args, tj_tensor *const *outs)
{
    return fill_int("aten::zeros_like", outs[0], 0);
}

tj_status tj_kernel_ones_like(const tj_value *args, tj_tensor *const *outs)
{
    return fill_int("aten::ones_like", outs[0], 1);
}

tj_status tj_kernel_full_like(const tj_value *args, tj_tensor *const *outs)
{
    return fill_scalar("aten::full_like", outs[0], &args[1]);
}

/* ---- the new_* family ---- */

/* `size`; dtype args[dtype_arg], or self's when None (new_full does not
 * infer one from its fill value). */
static tj_status meta_new(const char *op, const tj_value *args, int dtype_arg, tj_meta *outs)
{
    return tj_size_meta(op, &args[1], dtype_or(&args[dtype_arg], args[0].u.t->dtype), &outs[0]);
}

tj_status tj_meta_new_zeros(const tj_value *args, tj_meta *outs) { return meta_new("aten::new_zeros", args, 2, outs); }
tj_status tj_meta_new_ones(const tj_value *args, tj_meta *outs) { return meta_new("aten::new_ones", args, 2, outs); }
tj_status tj_meta_new_empty(const tj_value *args, tj_meta *outs) { return meta_new("aten::new_empty", args, 2, outs); }

/* The fill value must convert to the result dtype, as full_like's. */
tj_status tj_meta_new_full(const tj_value *args, tj_meta *outs)
{
    if (meta_new("aten::new_full", args, 3, outs) != TJ_OK) return tj_last_status();
    char buf[8];
    return tj_scalar_to("aten::new_full", &args[2], outs[0].dtype, buf);
}

tj_status tj_kernel_new_full(const tj_value *args, tj_tensor *const *outs)
{
    return fill_scalar("aten::new_full", outs[0], &args[2]);
}

/* ---- eye ---- */

static tj_status meta_eye(const char *op, int64_t n, int64_t m, const tj_value *dtype, tj_meta *outs)
{
    if (n < 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: n must be greater or equal to 0, got %lld", op, (long long)n);
    if (m < 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: m must be greater or equal to 0, got %lld", op, (long long)m);
    int64_t size[2] = {n, m};
    tj_value sz = tj_v_ints(size, 2);
    return tj_size_meta(op, &sz, dtype_or(dtype, TJ_FLOAT32), &outs[0]);
}

tj_status tj_meta_eye(const tj_value *args, tj_meta *outs) { return meta_eye("aten::eye", args[0].u.i, args[0].u.i, &args[1], outs); }
tj_status tj_meta_eye_m(const tj_value *args, tj_meta *outs) { return meta_eye("aten::eye.m", args[0].u.i, args[1].u.i, &args[2], outs); }

/* eye and eye.m: zeros, then ones on the main diagonal. */
tj_status tj_kernel_eye(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *out = outs[0];
    if (fill_int("aten::eye", out, 0) != TJ_OK) return tj_last_status();
    int64_t n = out->shape[0], m = out->shape[1], diag = n < m ? n : m;
    size_t esize = tj_dtype_bytes(out->dtype);
    char *p = tj_tensor_ptr(out);
    for (int64_t i = 0; i < diag; i++) tj_store_f64(p + (size_t)(i * (m + 1)) * esize, out->dtype, 1.0);
    return TJ_OK;
}

/* ---- linspace ---- */

#define LINSPACE "aten::linspace"

tj_status tj_linspace_values(const tj_value *args, tj_dtype dtype, double *start, double *end, double *step)
{
    _Alignas(8) char b[2][8];
    for (int k = 0; k < 2; k++)
        if (tj_scalar_to(LINSPACE, &args[k], dtype, b[k]) != TJ_OK) return tj_last_status();
    *start = tj_load_f64(b[0], dtype);
    *end = tj_load_f64(b[1], dtype);
    int64_t steps = args[2].u.i;
    *step = steps >= 2 ? tj_k_linspace_step(dtype, *start, *end, steps) : 0;
    return TJ_OK;
}

tj_status tj_meta_linspace(const tj_value *args, tj_meta *outs)
{
    int64_t steps = args[2].u.i;
    if (steps < 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, LINSPACE ": number of steps must be non-negative, got %lld",
                                   (long long)steps);
    tj_dtype dtype = dtype_or(&args[3], TJ_FLOAT32);
    if (dtype == TJ_BOOL) return tj_error(TJ_ERR_DTYPE, LINSPACE ": not implemented for 'bool'");
    double start, end, step;
    if (tj_linspace_values(args, dtype, &start, &end, &step) != TJ_OK) return tj_last_status();
    tj_value size = tj_v_ints(&steps, 1);
    return tj_size_meta(LINSPACE, &size, dtype, &outs[0]);
}

tj_status tj_kernel_linspace(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *out = outs[0];
    double start, end, step;
    if (tj_linspace_values(args, out->dtype, &start, &end, &step) != TJ_OK) return tj_last_status();
    tj_k_linspace(tj_tensor_ptr(out), out->dtype, start, end, out->numel, tj_threads_for(out->numel));
    return TJ_OK;
}
