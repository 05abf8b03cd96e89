/* Decompositions of the composite reductions, after torch._refs /
 * torch._decomp in PyTorch 1.13: mean.dim is a sum divided by the element
 * count; var.correction is the sum of squared deviations from the mean
 * (two-pass) divided by max(0, N - correction), as the ATen kernel does (1.13's
 * Python decomposition omits the clamp); var_mean pairs it with mean;
 * logsumexp shifts by the finite part of amax before exp, sum and log (an
 * integer input converted to float32 first, as the kernel does). Like
 * the kernels, these accumulate in float64 and round once to the result
 * dtype (a float32 two-pass sum would be up to a few ulps off).
 * The reductions that are not primitives lower to sum.dim_IntList and amax:
 * sum is sum.dim over every dim, mean (.default) is mean.dim over every dim,
 * max / min (.default) are amax / amin over every dim, amin is -amax(-x)
 * (~amax(~x) for int64),
 * argmax (argmin) is the smallest index where x equals its amax (amin) or is
 * nan, max.dim is (amax, argmax), min.dim (amin, argmin); std.correction is
 * the square root of var.correction taken in float64. sort.stable is sort
 * (whose kernel is stable) and topk the first k of sort. */
#include <math.h>

#include "util.h"

static tj_status done(tj_tensor *r, tj_value *outs)
{
    if (!r) return tj_last_status();
    outs[0] = tj_v_tensor(r);
    return TJ_OK;
}

/* The reduced dims of an `int[1]?` dim list (None or [] = all) and the
 * number of elements folded into each output. Errors as the kernels report
 * them: dims out of range, repeated dims. */
static tj_status reduced_dims(const char *op, const tj_tensor *x, const tj_value *dim, bool mask[TJ_MAX_DIMS],
                              int64_t *count)
{
    int nd = tj_tensor_ndim(x);
    bool all = dim->kind == TJ_V_NONE || dim->n == 0;
    for (int d = 0; d < TJ_MAX_DIMS; d++) mask[d] = all;
    for (int k = 0; !all && k < dim->n; k++) {
        int w;
        if (tj_wrap_dim(op, dim->u.ints[k], nd, &w) != TJ_OK) return tj_last_status();
        if (mask[w]) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: dim %d appears multiple times in the list of dims", op, w);
        mask[w] = true;
    }
    *count = 1;
    for (int d = 0; d < nd; d++)
        if (mask[d]) *count *= tj_tensor_shape(x)[d];
    return TJ_OK;
}

static const int64_t *dims_of(const tj_value *dim) { return dim->kind == TJ_V_INTS ? dim->u.ints : NULL; }
static int ndims_of(const tj_value *dim) { return dim->kind == TJ_V_INTS ? dim->n : 0; }

/* mean.dim(self, dim, keepdim, dtype) = sum.dim_IntList(self, dim, keepdim, dtype) / N */
static tj_tensor *mean_of(const char *op, tj_tensor *self, const tj_value *dim, bool keepdim, const tj_value *dtype)
{
    tj_dtype od = dtype->kind == TJ_V_DTYPE ? dtype->u.dtype : tj_tensor_dtype(self);
    if (tj_dtype_category(od) != TJ_CAT_FLOAT) {
        tj_error(TJ_ERR_DTYPE, "%s: could not infer output dtype. %s dtype must be either a floating point or "
                               "complex dtype. Got: %s", op, dtype->kind == TJ_V_DTYPE ? "Optional" : "Input",
                 tj_dtype_name(od));
        return NULL;
    }
    bool mask[TJ_MAX_DIMS];
    int64_t n;
    if (reduced_dims(op, self, dim, mask, &n) != TJ_OK) return NULL;
    /* accumulated and divided in float64, rounded once, as the kernel */
    tj_tensor *sum = tj_sum_dim(self, dims_of(dim), ndims_of(dim), keepdim, TJ_FLOAT64);
    return tj_dc_to(tj_div_scalar(sum, tj_v_int(n)), od);
}

static tj_status mean_dim(const tj_value *args, tj_value *outs)
{
    return done(mean_of("aten::mean.dim", args[0].u.t, &args[1], args[2].u.b, &args[3]), outs);
}

/* var and, when mean_out is given, the mean (keepdim as asked). */
static tj_status var_impl(const char *op, const tj_value *args, tj_value *outs, bool with_mean)
{
    tj_tensor *x = args[0].u.t;
    const tj_value *dim = &args[1];
    bool keepdim = args[3].u.b;
    if (tj_dtype_category(tj_tensor_dtype(x)) != TJ_CAT_FLOAT)
        return tj_error(TJ_ERR_DTYPE, "%s: std and var only support floating point dtypes, got %s", op,
                        tj_dtype_name(tj_tensor_dtype(x)));
    bool mask[TJ_MAX_DIMS];
    int64_t n;
    if (reduced_dims(op, x, dim, mask, &n) != TJ_OK) return tj_last_status();
    int64_t correction = args[2].kind == TJ_V_NONE ? 1 : args[2].u.i;
    /* two passes in float64 (the kernel's precision), rounded once */
    tj_dtype dt = tj_tensor_dtype(x);
    tj_value f64 = tj_v_dtype(TJ_FLOAT64);
    tj_tensor *x64 = tj_dc_to(x, TJ_FLOAT64), *mean = mean_of(op, x64, dim, true, &f64);
    tj_tensor *dev = tj_sub(x64, mean);
    tj_tensor *sq = tj_sum_dim(tj_mul(dev, dev), dims_of(dim), ndims_of(dim), keepdim, -1);
    int64_t divisor = n > 0 && n - correction > 0 ? n - correction : 0; /* empty: 0 / 0, as the kernel */
    tj_tensor *var = tj_dc_to(tj_div_scalar(sq, tj_v_int(divisor)), dt);
    if (!var) return tj_last_status();
    outs[0] = tj_v_tensor(var);
    if (!with_mean) return TJ_OK;
    tj_tensor *m = keepdim ? tj_dc_to(mean, dt) : mean_of(op, x, dim, false, &f64);
    if (!m || !(m = tj_dc_to(m, dt))) return tj_last_status();
    outs[1] = tj_v_tensor(m);
    return TJ_OK;
}

static tj_status var_correction(const tj_value *args, tj_value *outs)
{
    return var_impl("aten::var.correction", args, outs, false);
}

static tj_status var_mean_correction(const tj_value *args, tj_value *outs)
{
    return var_impl("aten::var_mean.correction", args, outs, true);
}

/* log(sum(exp(x - m))) + m with m = amax(x) where finite, 0 where infinite
 * (so an all -inf slice gives -inf and +inf gives +inf); integer and bool
 * inputs, and empty reductions (amax has no identity), skip the shift. */
static tj_status logsumexp(const tj_value *args, tj_value *outs)
{
    static const char *op = "aten::logsumexp";
    tj_tensor *x = args[0].u.t;
    const tj_value *dim = &args[1];
    bool keepdim = args[2].u.b;
    bool mask[TJ_MAX_DIMS];
    int64_t n;
    if (reduced_dims(op, x, dim, mask, &n) != TJ_OK) return tj_last_status();
    const int64_t *dl = dims_of(dim);
    int nd = ndims_of(dim);
    /* integers and bools as float32 first, as the kernel: unshifted, exp(100)
     * overflows float32 */
    if (tj_dtype_category(tj_tensor_dtype(x)) != TJ_CAT_FLOAT && !(x = tj_dc_to(x, TJ_FLOAT32)))
        return tj_last_status();
    if (n == 0) return done(tj_log(tj_sum_dim(tj_exp(x), dl, nd, keepdim, -1)), outs);
    /* in float64, rounded once, as the kernel */
    tj_dtype dt = tj_tensor_dtype(x);
    x = tj_dc_to(x, TJ_FLOAT64);
    tj_tensor *m = tj_amax(x, dl, nd, true);
    m = tj_masked_fill(m, tj_eq_scalar(tj_abs(m), tj_v_float(INFINITY)), tj_v_int(0));
    tj_tensor *shift = m;
    if (!keepdim && m) {
        int64_t shape[TJ_MAX_DIMS];
        int k = 0;
        for (int d = 0; d < tj_tensor_ndim(x); d++)
            if (!mask[d]) shape[k++] = tj_tensor_shape(x)[d];
        shift = tj_view(m, shape, k);
    }
    tj_tensor *s = tj_sum_dim(tj_exp(tj_sub(x, m)), dl, nd, keepdim, -1);
    return done(tj_dc_to(tj_add(tj_log(s), shift), dt), outs);
}

/* ---- reductions that are not primitives: sum, amin, argmax, max.dim ---- */

static tj_status sum_all(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_dc_check(TJ_OPS(sum), args, m) != TJ_OK) return tj_last_status();
    int dtype = args[1].kind == TJ_V_DTYPE ? (int)args[1].u.dtype : -1;
    return done(tj_sum_dim(args[0].u.t, NULL, 0, false, dtype), outs);
}

/* amin(x) = -amax(-x) for floats; for int64 ~amax(~x), ~x being -x - 1 in
 * wrapping arithmetic: -x would map INT64_MIN to itself; for bool, "all" =
 * not any(not x). */
static tj_status amin(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_dc_check(TJ_OPS(amin), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *x = args[0].u.t;
    const int64_t *dl = dims_of(&args[1]);
    int nd = ndims_of(&args[1]);
    bool keepdim = args[2].u.b;
    if (tj_tensor_dtype(x) == TJ_BOOL) {
        tj_tensor *f = tj_scalar_tensor(tj_v_bool(false), TJ_BOOL);
        return done(tj_eq(tj_amax(tj_eq(x, f), dl, nd, keepdim), f), outs);
    }
    if (tj_tensor_dtype(x) == TJ_INT64) {
        tj_value one = tj_v_int(1);
        tj_tensor *m = tj_amax(tj_sub_scalar(tj_neg(x), one), dl, nd, keepdim);
        return done(tj_sub_scalar(tj_neg(m), one), outs);
    }
    return done(tj_neg(tj_amax(tj_neg(x), dl, nd, keepdim)), outs);
}

/* The first index along `dim` of the largest (with `min`: smallest) value,
 * of the first nan when there is one: the smallest index where x equals its
 * amax (amin) or is nan. */
static tj_tensor *first_arg(tj_tensor *x, int dim, bool keepdim, bool min)
{
    int64_t d = dim, n = tj_tensor_size(x, dim);
    tj_tensor *hit = tj_eq(x, min ? tj_amin(x, &d, 1, true) : tj_amax(x, &d, 1, true));
    tj_tensor *is_nan = tj_eq(tj_eq(x, x), tj_scalar_tensor(tj_v_bool(false), TJ_BOOL));
    hit = tj_where(hit, tj_scalar_tensor(tj_v_bool(true), TJ_BOOL), is_nan);
    int64_t shape[TJ_MAX_DIMS];
    for (int i = 0; i < tj_tensor_ndim(x); i++) shape[i] = i == dim ? n : 1;
    tj_tensor *index = tj_view(tj_arange(tj_v_int(0), tj_v_int(n), tj_v_int(1), TJ_INT64), shape, tj_tensor_ndim(x));
    tj_tensor *cand = tj_where(hit, index, tj_scalar_tensor(tj_v_int(n), TJ_INT64));
    return tj_amin(cand, &d, 1, keepdim);
}

/* argmax / argmin: first_arg along dim, or over the flattened tensor. */
static tj_status arg_extremum(const tj_op *op, const tj_value *args, tj_value *outs, bool min)
{
    tj_meta m[1];
    if (tj_dc_check(op, args, m) != TJ_OK) return tj_last_status();
    tj_tensor *x = args[0].u.t;
    int dim = 0;
    if (args[1].kind == TJ_V_NONE) {
        int64_t flat = -1;
        x = tj_reshape(x, &flat, 1);
    } else {
        tj_wrap_dim(tj_op_name(op), args[1].u.i, tj_tensor_ndim(x), &dim);
        if (tj_tensor_ndim(x) == 0) x = tj_unsqueeze(x, 0);
    }
    tj_tensor *r = first_arg(x, dim, true, min);
    return done(tj_view(r, m[0].shape, m[0].ndim), outs);
}

static tj_status argmax(const tj_value *args, tj_value *outs) { return arg_extremum(TJ_OPS(argmax), args, outs, false); }
static tj_status argmin(const tj_value *args, tj_value *outs) { return arg_extremum(TJ_OPS(argmin), args, outs, true); }

/* max.dim = (amax, argmax), min.dim = (amin, argmin); argmax / argmin take
 * bool input as int64. */
static tj_status extremum_dim(const tj_op *op, const tj_value *args, tj_value *outs, bool min)
{
    tj_meta m[2];
    if (tj_dc_check(op, args, m) != TJ_OK) return tj_last_status();
    tj_tensor *x = args[0].u.t;
    int64_t dim = args[1].u.i;
    bool keepdim = args[2].u.b;
    tj_tensor *values = min ? tj_amin(x, &dim, 1, keepdim) : tj_amax(x, &dim, 1, keepdim);
    if (tj_tensor_dtype(x) == TJ_BOOL) x = tj_to_copy(x, TJ_INT64);
    tj_tensor *indices = min ? tj_argmin(x, true, dim, keepdim) : tj_argmax(x, true, dim, keepdim);
    if (!values || !indices) return tj_last_status();
    outs[0] = tj_v_tensor(values);
    outs[1] = tj_v_tensor(indices);
    return TJ_OK;
}

static tj_status max_dim(const tj_value *args, tj_value *outs) { return extremum_dim(TJ_OPS(max_dim), args, outs, false); }
static tj_status min_dim(const tj_value *args, tj_value *outs) { return extremum_dim(TJ_OPS(min_dim), args, outs, true); }

/* mean.default = mean.dim over every dim */
static tj_status mean_all(const tj_value *args, tj_value *outs)
{
    tj_value all = tj_v_none();
    return done(mean_of("aten::mean", args[0].u.t, &all, false, &args[1]), outs);
}

/* max / min .default = amax / amin over every dim (after the check that
 * names max / min for an empty input) */
static tj_status extremum_all(const tj_op *op, const tj_value *args, tj_value *outs, bool min)
{
    tj_meta m[1];
    if (tj_dc_check(op, args, m) != TJ_OK) return tj_last_status();
    tj_tensor *x = args[0].u.t;
    return done(min ? tj_amin(x, NULL, 0, false) : tj_amax(x, NULL, 0, false), outs);
}

static tj_status max_all(const tj_value *args, tj_value *outs) { return extremum_all(TJ_OPS(max), args, outs, false); }
static tj_status min_all(const tj_value *args, tj_value *outs) { return extremum_all(TJ_OPS(min), args, outs, true); }

/* std.correction = sqrt(var.correction) in float64, rounded once (as the kernel) */
static tj_status std_correction(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_dc_check(TJ_OPS(std_correction), args, m) != TJ_OK) return tj_last_status();
    /* the arguments as they are: tj_var would take a negative correction
     * (valid: N + 1 for -1) for None */
    tj_value var_args[4] = {tj_v_tensor(tj_dc_to(args[0].u.t, TJ_FLOAT64)), args[1], args[2], args[3]}, var;
    if (!var_args[0].u.t || tj_call("aten::var.correction", var_args, 4, &var) != TJ_OK) return tj_last_status();
    return done(tj_dc_to(tj_sqrt(var.u.t), m[0].dtype), outs);
}

/* sort.stable = sort (the kernel is stable); topk = the first k of sort,
 * descending for the largest, so that topk's ties and nans follow sort's. */
static tj_status sort_stable(const tj_value *args, tj_value *outs)
{
    tj_meta m[2];
    if (tj_dc_check(TJ_OPS(sort_stable), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *v, *i;
    if (tj_sort(args[0].u.t, args[2].u.i, args[3].u.b, &v, &i) != TJ_OK) return tj_last_status();
    outs[0] = tj_v_tensor(v);
    outs[1] = tj_v_tensor(i);
    return TJ_OK;
}

/* argsort(self, dim, descending) and argsort.stable(self, stable, dim,
 * descending): sort's indices */
static tj_status argsort_at(const tj_value *args, int dim_arg, tj_value *outs)
{
    tj_tensor *i;
    if (tj_sort(args[0].u.t, args[dim_arg].u.i, args[dim_arg + 1].u.b, NULL, &i) != TJ_OK) return tj_last_status();
    outs[0] = tj_v_tensor(i);
    return TJ_OK;
}
static tj_status argsort(const tj_value *args, tj_value *outs) { return argsort_at(args, 1, outs); }
static tj_status argsort_stable(const tj_value *args, tj_value *outs) { return argsort_at(args, 2, outs); }

static tj_status topk(const tj_value *args, tj_value *outs)
{
    tj_meta m[2];
    if (tj_dc_check(TJ_OPS(topk), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *x = args[0].u.t, *v, *i;
    int64_t k = args[1].u.i, dim = args[2].u.i;
    if (tj_sort(x, dim, args[3].u.b, &v, &i) != TJ_OK) return tj_last_status();
    if (tj_tensor_ndim(x) > 0) { /* a 0-dim self is its own top 1 (and top 0, as PyTorch) */
        v = tj_slice(v, dim, true, 0, true, k, 1);
        i = tj_slice(i, dim, true, 0, true, k, 1);
        if (!v || !i) return tj_last_status();
    }
    outs[0] = tj_v_tensor(v);
    outs[1] = tj_v_tensor(i);
    return TJ_OK;
}

/* linalg_vector_norm, as torch._refs.linalg.vector_norm: ord 0 sums x != 0
 * in the result dtype; +-inf is amax / amin of |x|; any other ord is
 * sum(|x|^ord)^(1 / ord) (|x| skipped for even orders) in float64, rounded
 * once to the result dtype, as the kernel computes (in float32 the rounding
 * of |x|^ord is raised to the power 1 / ord: 1e-4 relative for ord 0.001).
 * The shape function refuses what the refs' checks refuse. */
static tj_status linalg_vector_norm(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(linalg_vector_norm, args, m);
    tj_tensor *x = args[0].u.t;
    double ord = tj_value_as_double(&args[1]);
    const int64_t *dims = dims_of(&args[2]);
    int nd = ndims_of(&args[2]);
    bool keepdim = args[3].u.b;
    int rdt = (int)m[0].dtype;
    if (ord == 0) return done(tj_sum_dim(tj_ne_scalar(x, tj_v_int(0)), dims, nd, keepdim, rdt), outs);
    if (isinf(ord)) {
        tj_tensor *a = tj_abs(x);
        return done(tj_dc_to(ord > 0 ? tj_amax(a, dims, nd, keepdim) : tj_amin(a, dims, nd, keepdim), m[0].dtype), outs);
    }
    x = tj_dc_to(x, TJ_FLOAT64);
    if (fmod(ord, 2.0) != 0) x = tj_abs(x);
    tj_tensor *s = tj_sum_dim(tj_pow_scalar(x, tj_v_float(ord)), dims, nd, keepdim, -1);
    return done(tj_dc_to(tj_pow_scalar(s, tj_v_float(1.0 / ord)), m[0].dtype), outs);
}

/* torch._decomp's norm: linalg.vector_norm(self, 2 if p is None else p,
 * dim, keepdim) */
static tj_status norm_scalaropt_dim(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(norm_ScalarOpt_dim, args, m);
    tj_value p = args[1].kind == TJ_V_NONE ? tj_v_int(2) : args[1];
    return done(tj_linalg_vector_norm(args[0].u.t, p, dims_of(&args[2]), ndims_of(&args[2]), args[3].u.b,
                                      TJ_DTYPE_NONE),
                outs);
}

void tj_register_reductions_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(sort_stable), sort_stable, "sort_stable");
    tj_op_set_decomposition(TJ_OPS(argsort), argsort, "argsort");
    tj_op_set_decomposition(TJ_OPS(argsort_stable), argsort_stable, "argsort_stable");
    tj_op_set_decomposition(TJ_OPS(topk), topk, "topk");
    tj_op_set_decomposition(TJ_OPS(mean_dim), mean_dim, "mean_dim");
    tj_op_set_decomposition(TJ_OPS(var_correction), var_correction, "var_correction");
    tj_op_set_decomposition(TJ_OPS(var_mean_correction), var_mean_correction, "var_mean_correction");
    tj_op_set_decomposition(TJ_OPS(logsumexp), logsumexp, "logsumexp");
    tj_op_set_decomposition(TJ_OPS(sum), sum_all, "sum_all");
    tj_op_set_decomposition(TJ_OPS(amin), amin, "amin");
    tj_op_set_decomposition(TJ_OPS(argmax), argmax, "argmax");
    tj_op_set_decomposition(TJ_OPS(max_dim), max_dim, "max_dim");
    tj_op_set_decomposition(TJ_OPS(mean), mean_all, "mean_all");
    tj_op_set_decomposition(TJ_OPS(max), max_all, "max_all");
    tj_op_set_decomposition(TJ_OPS(min), min_all, "min_all");
    tj_op_set_decomposition(TJ_OPS(min_dim), min_dim, "min_dim");
    tj_op_set_decomposition(TJ_OPS(argmin), argmin, "argmin");
    tj_op_set_decomposition(TJ_OPS(std_correction), std_correction, "std_correction");
    tj_op_set_decomposition(TJ_OPS(linalg_vector_norm), linalg_vector_norm, "linalg_vector_norm");
    tj_op_set_decomposition(TJ_OPS(norm_ScalarOpt_dim), norm_scalaropt_dim, "norm_scalaropt_dim");
}
