/* Reduction operators: dim lists, result shapes and dtypes (shape functions)
 * and the glue from boxed arguments to the reduction driver in
 * kernels/reduce.c. Semantics follow PyTorch 1.13: a dim list that is None or
 * [] reduces every dim, keepdim keeps size-1 dims, sums and products of
 * bool/int64 give int64, all/any give bool, mean of an empty reduction is
 * nan, its product 1, its all true and its any false,
 * amax/amin/argmax/argmin/max/min of an empty reduction are errors. */
#include <math.h>
#include <string.h>

#include "contig.h"
#include "iter.h"
#include "kernels/copy.h"
#include "kernels/reduce.h"
#include "kernels/scan.h"
#include "op_reduction.h"
#include "op_view.h"

/* ---- shared argument handling ---- */

/* Marks the reduced dims of `x` from an `int[1]?` dim list: None or [] means
 * every dim. Errors: out-of-range dims, repeated dims. */
static tj_status parse_dims(const char *op, const tj_tensor *x, const tj_value *dim, bool mask[TJ_MAX_DIMS])
{
    bool all = dim->kind == TJ_V_NONE || dim->n == 0;
    for (int d = 0; d < TJ_MAX_DIMS; d++) mask[d] = all;
    if (all) return TJ_OK;
    bool seen[TJ_MAX_DIMS] = {false};
    for (int k = 0; k < dim->n; k++) {
        int w;
        if (tj_wrap_dim(op, dim->u.ints[k], x->ndim, &w) != TJ_OK) return tj_last_status();
        if (seen[w])
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: dim %d appears multiple times in the list of dims", op, w);
        seen[w] = true;
        mask[w] = true;
    }
    return TJ_OK;
}

/* Marks every dim (the .default overloads). */
static void mask_all(bool mask[TJ_MAX_DIMS])
{
    for (int d = 0; d < TJ_MAX_DIMS; d++) mask[d] = true;
}

/* Marks a single dim (an `int` or `int?` dim; None marks every dim). */
static tj_status parse_one_dim(const char *op, const tj_tensor *x, const tj_value *dim, bool mask[TJ_MAX_DIMS])
{
    for (int d = 0; d < TJ_MAX_DIMS; d++) mask[d] = dim->kind == TJ_V_NONE;
    if (dim->kind == TJ_V_NONE) return TJ_OK;
    int w;
    if (tj_wrap_dim(op, dim->u.i, x->ndim, &w) != TJ_OK) return tj_last_status();
    mask[w] = true;
    return TJ_OK;
}

/* Output geometry: reduced dims dropped, or kept as size 1 with keepdim. */
static void reduced_meta(const tj_tensor *x, const bool *mask, bool keepdim, tj_dtype dtype, tj_meta *m)
{
    m->dtype = dtype;
    m->ndim = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (!mask[d]) m->shape[m->ndim++] = x->shape[d];
        else if (keepdim) m->shape[m->ndim++] = 1;
    }
}

/* amax/amin/argmax/max.dim have no identity: an empty reduction is an error. */
static tj_status check_nonempty(const char *op, const tj_tensor *x, const bool *mask, bool dim_given)
{
    if (x->numel != 0 || x->ndim == 0) return TJ_OK;
    if (!dim_given)
        return tj_error(TJ_ERR_SHAPE, "%s: Expected reduction dim to be specified for input.numel() == 0. "
                                      "Specify the reduction dim with the 'dim' argument.", op);
    for (int d = 0; d < x->ndim; d++)
        if (mask[d] && x->shape[d] == 0) {
            char b[160];
            return tj_error(TJ_ERR_SHAPE, "%s: Expected reduction dim %d to have non-zero size (input shape %s).", op,
                            d, tj_shape_str(x->ndim, x->shape, b, sizeof b));
        }
    return TJ_OK;
}

/* Number of elements folded into each output. */
static int64_t reduced_count(const tj_tensor *x, const bool *mask)
{
    int64_t n = 1;
    for (int d = 0; d < x->ndim; d++)
        if (mask[d]) n *= x->shape[d];
    return n;
}

/* A contiguous copy of x converted to `dtype` (not owned by any scope);
 * NULL with the error set when out of memory. */
static tj_tensor *converted(const tj_tensor *x, tj_dtype dtype)
{
    tj_meta m = {.dtype = dtype, .ndim = x->ndim, .alias = -1};
    memcpy(m.shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    tj_tensor *t = tj_tensor_new_meta(&m, false);
    if (t) tj_copy_convert(t, x);
    return t;
}

/* Runs one reduction of x over mask with the options already in k. */
static tj_status reduce(const char *op, tj_k_reduce *k, const tj_tensor *x, const bool *mask)
{
    k->x = tj_tensor_ptr(x);
    k->x_dtype = x->dtype;
    tj_k_reduce_prepare(k, x->ndim, x->shape, x->strides, mask);
    /* scratch through the storage cache: a replayed plan calling this again
     * and again gets the same block back, with no heap allocation */
    size_t nb = tj_k_reduce_scratch_bytes(k), got = 0;
    void *scratch = NULL;
    if (nb && !(scratch = tj_alloc_storage_bytes(nb, &got))) return tj_oom(op, nb);
    tj_k_reduce_run(k, scratch, tj_threads_for(x->numel));
    tj_free_storage_bytes(scratch, got);
    return TJ_OK;
}

/* Reduces x into a new array of one double per output (mean or maximum, the
 * first pass of var and logsumexp), from the storage cache. The caller frees
 * it with tj_free_storage_bytes(buf, *nbytes). */
static double *reduce_to_f64(const char *op, tj_k_red_kind kind, double divisor, const tj_tensor *x,
                             const bool *mask, size_t *nbytes)
{
    int64_t nout = 1;
    for (int d = 0; d < x->ndim; d++)
        if (!mask[d]) nout *= x->shape[d];
    size_t want = (size_t)(nout ? nout : 1) * sizeof(double);
    double *buf = tj_alloc_storage_bytes(want, nbytes);
    if (!buf) {
        tj_oom(op, want);
        return NULL;
    }
    tj_k_reduce k = {.kind = kind, .divisor = divisor, .out = buf, .out_dtype = TJ_FLOAT64};
    if (reduce(op, &k, x, mask) != TJ_OK) {
        tj_free_storage_bytes(buf, *nbytes);
        return NULL;
    }
    return buf;
}

/* ---- sum ---- */

static const char *const SUM_DIM = "aten::sum.dim_IntList";
static const char *const SUM = "aten::sum";

static tj_dtype sum_dtype(const tj_tensor *x, const tj_value *dtype)
{
    if (dtype->kind == TJ_V_DTYPE) return dtype->u.dtype;
    return tj_dtype_is_float(x->dtype) ? x->dtype : TJ_INT64;
}

tj_status tj_meta_sum_dim(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    bool mask[TJ_MAX_DIMS];
    if (parse_dims(SUM_DIM, x, &args[1], mask) != TJ_OK) return tj_last_status();
    reduced_meta(x, mask, args[2].u.b, sum_dtype(x, &args[3]), &outs[0]);
    return TJ_OK;
}

tj_status tj_meta_sum(const tj_value *args, tj_meta *outs)
{
    outs[0].dtype = sum_dtype(args[0].u.t, &args[1]);
    outs[0].ndim = 0;
    return TJ_OK;
}

/* Sums (kind TJ_K_RED_SUM) or multiplies (TJ_K_RED_PROD) x over mask into
 * out (dtype already decided). Inputs are converted first where PyTorch
 * converts before reducing: to bool (a sum is then "any", a product "all")
 * and from float to an integer dtype (truncating each element). */
static tj_status fold_into(const char *op, tj_k_red_kind kind, const tj_tensor *x, const bool *mask, tj_tensor *out)
{
    tj_dtype od = out->dtype;
    bool convert = (od == TJ_BOOL && x->dtype != TJ_BOOL) || (!tj_dtype_is_float(od) && tj_dtype_is_float(x->dtype));
    tj_tensor *tmp = NULL;
    if (convert && !(tmp = converted(x, od))) return tj_last_status();
    tj_k_reduce k = {.kind = kind, .int_acc = !tj_dtype_is_float(od), .divisor = 1, .out = tj_tensor_ptr(out),
                     .out_dtype = od};
    tj_status st = reduce(op, &k, tmp ? tmp : x, mask);
    tj_tensor_release(tmp);
    return st;
}

tj_status tj_kernel_sum_dim(const tj_value *args, tj_tensor *const *outs)
{
    bool mask[TJ_MAX_DIMS];
    parse_dims(SUM_DIM, args[0].u.t, &args[1], mask);
    return fold_into(SUM_DIM, TJ_K_RED_SUM, args[0].u.t, mask, outs[0]);
}

tj_status tj_kernel_sum(const tj_value *args, tj_tensor *const *outs)
{
    bool mask[TJ_MAX_DIMS];
    mask_all(mask);
    return fold_into(SUM, TJ_K_RED_SUM, args[0].u.t, mask, outs[0]);
}

/* ---- cumsum / cumprod ---- */

#define CUMSUM "aten::cumsum"
#define CUMPROD "aten::cumprod"

/* The result dtype of cumsum / cumprod: `dtype` if given, else self's float
 * dtype, int64 for int64 and bool (PyTorch's meta_func_cum_ops); bool
 * results are not implemented (as PyTorch's cumsum_out_cpu, cumprod_out_cpu). */
static tj_status meta_cum(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    int d;
    if (tj_wrap_dim(op, args[1].u.i, x->ndim, &d) != TJ_OK) return tj_last_status();
    tj_dtype dt = sum_dtype(x, &args[2]);
    if (dt == TJ_BOOL) return tj_error(TJ_ERR_DTYPE, "%s: not implemented for a bool result (dtype bool)", op);
    tj_meta_like(&outs[0], x);
    outs[0].dtype = dt;
    return TJ_OK;
}

tj_status tj_meta_cumsum(const tj_value *args, tj_meta *outs) { return meta_cum(CUMSUM, args, outs); }
tj_status tj_meta_cumprod(const tj_value *args, tj_meta *outs) { return meta_cum(CUMPROD, args, outs); }

/* self is converted to the result dtype first (PyTorch: self.to(dtype),
 * then the scan), in out itself when it needs converting or a row-major
 * copy: the scan then runs in place. */
static tj_status kernel_cum(const char *op, bool product, const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *x = args[0].u.t, *out = outs[0];
    if (x->numel == 0) return TJ_OK;
    int d;
    tj_wrap_dim(op, args[1].u.i, x->ndim, &d);
    int64_t outer = 1, n = x->ndim ? x->shape[d] : 1, inner = 1;
    for (int k = 0; k < x->ndim; k++) {
        if (k < d) outer *= x->shape[k];
        if (k > d) inner *= x->shape[k];
    }
    const void *in = tj_tensor_ptr(x);
    if (x->dtype != out->dtype || !tj_tensor_is_contiguous(x)) {
        tj_copy_tensor(out, x);
        in = tj_tensor_ptr(out);
    }
    (product ? tj_k_cumprod : tj_k_cumsum)(out->dtype, tj_tensor_ptr(out), in, outer, n, inner,
                                           tj_threads_for(x->numel));
    return TJ_OK;
}

tj_status tj_kernel_cumsum(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_cum(CUMSUM, false, args, outs);
}
tj_status tj_kernel_cumprod(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_cum(CUMPROD, true, args, outs);
}

/* ---- mean ---- */

static const char *const MEAN = "aten::mean.dim";

/* mean's result dtype: `dtype` if given, else self's; either must be float. */
static tj_status mean_dtype(const char *op, const tj_tensor *x, const tj_value *dtype, tj_dtype *od)
{
    *od = dtype->kind == TJ_V_DTYPE ? dtype->u.dtype : x->dtype;
    if (tj_dtype_is_float(*od)) return TJ_OK;
    return tj_error(TJ_ERR_DTYPE, "%s: could not infer output dtype. %s dtype must be either a floating point or "
                                  "complex dtype. Got: %s", op, dtype->kind == TJ_V_DTYPE ? "Optional" : "Input",
                    tj_dtype_name(*od));
}

tj_status tj_meta_mean_dim(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    tj_dtype od;
    if (mean_dtype(MEAN, x, &args[3], &od) != TJ_OK) return tj_last_status();
    bool mask[TJ_MAX_DIMS];
    if (parse_dims(MEAN, x, &args[1], mask) != TJ_OK) return tj_last_status();
    reduced_meta(x, mask, args[2].u.b, od, &outs[0]);
    return TJ_OK;
}

/* The mean of x over mask into out; an empty reduction divides 0 by 0:
 * nan, as in PyTorch. */
static tj_status mean_into(const char *op, const tj_tensor *x, const bool *mask, tj_tensor *out)
{
    tj_k_reduce k = {.kind = TJ_K_RED_SUM, .divisor = (double)reduced_count(x, mask), .out = tj_tensor_ptr(out),
                     .out_dtype = out->dtype};
    return reduce(op, &k, x, mask);
}

tj_status tj_kernel_mean_dim(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[0].u.t;
    bool mask[TJ_MAX_DIMS];
    parse_dims(MEAN, x, &args[1], mask);
    return mean_into(MEAN, x, mask, outs[0]);
}

static const char *const MEAN_ALL = "aten::mean";

tj_status tj_meta_mean(const tj_value *args, tj_meta *outs)
{
    outs[0].ndim = 0;
    return mean_dtype(MEAN_ALL, args[0].u.t, &args[1], &outs[0].dtype);
}

tj_status tj_kernel_mean(const tj_value *args, tj_tensor *const *outs)
{
    bool mask[TJ_MAX_DIMS];
    mask_all(mask);
    return mean_into(MEAN_ALL, args[0].u.t, mask, outs[0]);
}

/* ---- amax / amin ---- */

static tj_status meta_extremum(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    bool mask[TJ_MAX_DIMS];
    if (parse_dims(op, x, &args[1], mask) != TJ_OK) return tj_last_status();
    if (check_nonempty(op, x, mask, args[1].n > 0) != TJ_OK) return tj_last_status();
    reduced_meta(x, mask, args[2].u.b, x->dtype, &outs[0]);
    return TJ_OK;
}

static tj_status kernel_extremum(const char *op, tj_k_red_kind kind, const tj_value *args, tj_tensor *const *outs)
{
    bool mask[TJ_MAX_DIMS];
    parse_dims(op, args[0].u.t, &args[1], mask);
    tj_k_reduce k = {.kind = kind, .out = tj_tensor_ptr(outs[0]), .out_dtype = outs[0]->dtype};
    return reduce(op, &k, args[0].u.t, mask);
}

tj_status tj_meta_amax(const tj_value *args, tj_meta *outs) { return meta_extremum("aten::amax", args, outs); }
tj_status tj_meta_amin(const tj_value *args, tj_meta *outs) { return meta_extremum("aten::amin", args, outs); }
tj_status tj_kernel_amax(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_extremum("aten::amax", TJ_K_RED_MAX, args, outs);
}
tj_status tj_kernel_amin(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_extremum("aten::amin", TJ_K_RED_MIN, args, outs);
}

/* max / min (the .default overloads): every dim; an empty input is an error. */
static tj_status meta_extremum_all(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    bool mask[TJ_MAX_DIMS];
    mask_all(mask);
    if (check_nonempty(op, x, mask, false) != TJ_OK) return tj_last_status();
    outs[0].dtype = x->dtype;
    outs[0].ndim = 0;
    return TJ_OK;
}

static tj_status kernel_extremum_all(const char *op, tj_k_red_kind kind, const tj_value *args,
                                     tj_tensor *const *outs)
{
    bool mask[TJ_MAX_DIMS];
    mask_all(mask);
    tj_k_reduce k = {.kind = kind, .out = tj_tensor_ptr(outs[0]), .out_dtype = outs[0]->dtype};
    return reduce(op, &k, args[0].u.t, mask);
}

tj_status tj_meta_max(const tj_value *args, tj_meta *outs) { return meta_extremum_all("aten::max", args, outs); }
tj_status tj_meta_min(const tj_value *args, tj_meta *outs) { return meta_extremum_all("aten::min", args, outs); }
tj_status tj_kernel_max(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_extremum_all("aten::max", TJ_K_RED_MAX, args, outs);
}
tj_status tj_kernel_min(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_extremum_all("aten::min", TJ_K_RED_MIN, args, outs);
}

/* ---- argmax / argmin / max.dim / min.dim ---- */

static const char *const ARGMAX = "aten::argmax";
static const char *const ARGMIN = "aten::argmin";
static const char *const MAX_DIM = "aten::max.dim";
static const char *const MIN_DIM = "aten::min.dim";

static tj_status meta_arg(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    if (x->dtype == TJ_BOOL) return tj_error(TJ_ERR_DTYPE, "%s: not implemented for 'bool' input", op);
    bool mask[TJ_MAX_DIMS];
    if (parse_one_dim(op, x, &args[1], mask) != TJ_OK) return tj_last_status();
    if (check_nonempty(op, x, mask, args[1].kind != TJ_V_NONE) != TJ_OK) return tj_last_status();
    reduced_meta(x, mask, args[2].u.b, TJ_INT64, &outs[0]);
    return TJ_OK;
}

/* kind: TJ_K_RED_ARGMAX or TJ_K_RED_ARGMIN */
static tj_status kernel_arg(const char *op, tj_k_red_kind kind, const tj_value *args, tj_tensor *const *outs)
{
    bool mask[TJ_MAX_DIMS];
    parse_one_dim(op, args[0].u.t, &args[1], mask);
    tj_k_reduce k = {.kind = kind, .out_index = (int64_t *)tj_tensor_ptr(outs[0])};
    return reduce(op, &k, args[0].u.t, mask);
}

tj_status tj_meta_argmax(const tj_value *args, tj_meta *outs) { return meta_arg(ARGMAX, args, outs); }
tj_status tj_meta_argmin(const tj_value *args, tj_meta *outs) { return meta_arg(ARGMIN, args, outs); }
tj_status tj_kernel_argmax(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_arg(ARGMAX, TJ_K_RED_ARGMAX, args, outs);
}
tj_status tj_kernel_argmin(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_arg(ARGMIN, TJ_K_RED_ARGMIN, args, outs);
}

static tj_status meta_extremum_dim(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    bool mask[TJ_MAX_DIMS];
    if (parse_one_dim(op, x, &args[1], mask) != TJ_OK) return tj_last_status();
    if (check_nonempty(op, x, mask, true) != TJ_OK) return tj_last_status();
    reduced_meta(x, mask, args[2].u.b, x->dtype, &outs[0]);
    reduced_meta(x, mask, args[2].u.b, TJ_INT64, &outs[1]);
    return TJ_OK;
}

static tj_status kernel_extremum_dim(const char *op, tj_k_red_kind kind, const tj_value *args,
                                     tj_tensor *const *outs)
{
    bool mask[TJ_MAX_DIMS];
    parse_one_dim(op, args[0].u.t, &args[1], mask);
    tj_k_reduce k = {.kind = kind, .out = tj_tensor_ptr(outs[0]), .out_dtype = outs[0]->dtype,
                     .out_index = (int64_t *)tj_tensor_ptr(outs[1])};
    return reduce(op, &k, args[0].u.t, mask);
}

tj_status tj_meta_max_dim(const tj_value *args, tj_meta *outs) { return meta_extremum_dim(MAX_DIM, args, outs); }
tj_status tj_meta_min_dim(const tj_value *args, tj_meta *outs) { return meta_extremum_dim(MIN_DIM, args, outs); }
tj_status tj_kernel_max_dim(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_extremum_dim(MAX_DIM, TJ_K_RED_ARGMAX, args, outs);
}
tj_status tj_kernel_min_dim(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_extremum_dim(MIN_DIM, TJ_K_RED_ARGMIN, args, outs);
}

/* ---- var / var_mean / std: two passes (mean, then squared deviations from
 * it), accumulated in double, accurate for rows with a large common offset;
 * std takes the square root in double and rounds once ---- */

static const char *const VAR = "aten::var.correction";
static const char *const VAR_MEAN = "aten::var_mean.correction";
static const char *const STD = "aten::std.correction";

static tj_status meta_var(const char *op, const tj_value *args, tj_meta *outs, int nouts)
{
    const tj_tensor *x = args[0].u.t;
    if (!tj_dtype_is_float(x->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: std and var only support floating point dtypes, got %s", op,
                        tj_dtype_name(x->dtype));
    bool mask[TJ_MAX_DIMS];
    if (parse_dims(op, x, &args[1], mask) != TJ_OK) return tj_last_status();
    for (int i = 0; i < nouts; i++) reduced_meta(x, mask, args[3].u.b, x->dtype, &outs[i]);
    return TJ_OK;
}

/* var (its square root with `root`) into var_out and, when mean_out is set,
 * the mean into it. */
static tj_status kernel_var(const char *op, const tj_value *args, bool root, tj_tensor *var_out, tj_tensor *mean_out)
{
    const tj_tensor *x = args[0].u.t;
    bool mask[TJ_MAX_DIMS];
    parse_dims(op, x, &args[1], mask);
    int64_t n = reduced_count(x, mask);
    int64_t correction = args[2].kind == TJ_V_NONE ? 1 : args[2].u.i;
    size_t nb;
    double *mean = reduce_to_f64(op, TJ_K_RED_SUM, (double)n, x, mask, &nb);
    if (!mean) return tj_last_status();
    /* PyTorch: max(0, N - correction); an empty slice is nan (0 / 0) whatever
     * the correction, a negative one included */
    double divisor = n > 0 ? (double)n - (double)correction : 0;
    tj_k_reduce k = {.kind = TJ_K_RED_SUMSQDEV, .param = mean, .divisor = divisor > 0 ? divisor : 0, .root = root,
                     .out = tj_tensor_ptr(var_out), .out_dtype = var_out->dtype};
    tj_status st = reduce(op, &k, x, mask);
    if (st == TJ_OK && mean_out) tj_k_convert(tj_tensor_ptr(mean_out), mean_out->dtype, mean, TJ_FLOAT64, mean_out->numel);
    tj_free_storage_bytes(mean, nb);
    return st;
}

tj_status tj_meta_var(const tj_value *args, tj_meta *outs) { return meta_var(VAR, args, outs, 1); }
tj_status tj_meta_var_mean(const tj_value *args, tj_meta *outs) { return meta_var(VAR_MEAN, args, outs, 2); }
tj_status tj_meta_std(const tj_value *args, tj_meta *outs) { return meta_var(STD, args, outs, 1); }
tj_status tj_kernel_var(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_var(VAR, args, false, outs[0], NULL);
}
tj_status tj_kernel_var_mean(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_var(VAR_MEAN, args, false, outs[0], outs[1]);
}
tj_status tj_kernel_std(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_var(STD, args, true, outs[0], NULL);
}

/* ---- linalg_vector_norm(self, ord, dim?, keepdim, dtype?): ord 2 is the
 * root of the sum of squares (one pass, SUMSQDEV around 0); other orders
 * reduce a float64 copy of f(|x|) (x != 0 for 0, |x| for 1 and +-inf, |x|^p
 * otherwise) by a sum, max or min, then take the 1/p-th power. Everything is
 * in float64, rounded once to the result dtype (PyTorch 1.13 accumulates
 * float32 in float32, so its float32 2-norm overflows above ~1.8e19 where
 * this one does not). ---- */

static const char *const VECTOR_NORM = "aten::linalg_vector_norm";

tj_status tj_meta_linalg_vector_norm(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    const char *op = VECTOR_NORM;
    if (!tj_dtype_is_float(x->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: Expected a floating point or complex tensor as input. Got %s", op,
                        tj_dtype_name(x->dtype));
    tj_dtype out = x->dtype;
    if (args[4].kind == TJ_V_DTYPE) {
        out = args[4].u.dtype;
        if (!tj_dtype_is_float(out))
            return tj_error(TJ_ERR_DTYPE, "%s: dtype should be floating point or complex, but got %s", op,
                            tj_dtype_name(out));
        if (x->dtype == TJ_FLOAT64 && out == TJ_FLOAT32)
            return tj_error(TJ_ERR_DTYPE, "%s: the dtype of the input (%s) should be convertible without narrowing "
                                          "to the specified dtype (%s)", op, tj_dtype_name(x->dtype), tj_dtype_name(out));
    }
    bool mask[TJ_MAX_DIMS];
    if (parse_dims(op, x, &args[2], mask) != TJ_OK) return tj_last_status();
    double ord = tj_value_as_double(&args[1]);
    if (x->numel == 0 && (ord < 0 || ord == INFINITY)) {
        /* no identity: every reduced dim must be non-empty */
        if (args[2].kind == TJ_V_NONE || args[2].n == 0)
            return tj_error(TJ_ERR_SHAPE, "%s: linalg.vector_norm cannot compute the %g norm on an empty tensor "
                                          "because the operation does not have an identity", op, ord);
        for (int d = 0; d < x->ndim; d++)
            if (mask[d] && x->shape[d] == 0)
                return tj_error(TJ_ERR_SHAPE, "%s: linalg.vector_norm cannot compute the %g norm on the dimension %d "
                                              "because this dimension is empty and the operation does not have an "
                                              "identity", op, ord, d);
    }
    reduced_meta(x, mask, args[3].u.b, out, &outs[0]);
    return TJ_OK;
}

/* f(|x|) of the orders other than 2, into a new float64 tensor of x's shape
 * (not owned by any scope). */
static tj_tensor *norm_terms(const tj_tensor *x, double ord)
{
    tj_meta m = {.dtype = TJ_FLOAT64, .ndim = x->ndim, .alias = -1};
    memcpy(m.shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    tj_tensor *t = tj_tensor_new_meta(&m, false);
    if (!t) return NULL;
    tj_contig c = {0};
    if (tj_contig_get(&c, x) != TJ_OK) {
        tj_tensor_release(t);
        return NULL;
    }
    double *o = (double *)(void *)tj_tensor_ptr(t);
    for (int64_t i = 0; i < x->numel; i++) {
        double v = x->dtype == TJ_FLOAT32 ? (double)((const float *)(const void *)c.data)[i]
                                          : ((const double *)(const void *)c.data)[i];
        o[i] = ord == 0 ? (double)(v != 0) : ord == 1 || isinf(ord) ? fabs(v) : pow(fabs(v), ord);
    }
    tj_contig_release(&c);
    return t;
}

tj_status tj_kernel_linalg_vector_norm(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[0].u.t;
    tj_tensor *out = outs[0];
    double ord = tj_value_as_double(&args[1]);
    bool mask[TJ_MAX_DIMS];
    parse_dims(VECTOR_NORM, x, &args[2], mask);
    size_t nb;
    if (ord == 2) {
        size_t want = (size_t)(out->numel ? out->numel : 1) * sizeof(double);
        double *zero = tj_alloc_storage_bytes(want, &nb);
        if (!zero) return tj_oom(VECTOR_NORM, want);
        memset(zero, 0, want); /* the deviations are taken from 0 */
        tj_k_reduce k = {.kind = TJ_K_RED_SUMSQDEV, .param = zero, .divisor = 1, .root = true,
                         .out = tj_tensor_ptr(out), .out_dtype = out->dtype};
        tj_status st = reduce(VECTOR_NORM, &k, x, mask);
        tj_free_storage_bytes(zero, nb);
        return st;
    }
    tj_tensor *terms = norm_terms(x, ord);
    if (!terms) return tj_last_status();
    tj_k_red_kind kind = ord == INFINITY ? TJ_K_RED_MAX : ord == -INFINITY ? TJ_K_RED_MIN : TJ_K_RED_SUM;
    double *r = reduce_to_f64(VECTOR_NORM, kind, 1, terms, mask, &nb);
    tj_tensor_release(terms);
    if (!r) return tj_last_status();
    if (ord != 0 && ord != 1 && !isinf(ord))
        for (int64_t o = 0; o < out->numel; o++) r[o] = pow(r[o], 1.0 / ord);
    tj_k_convert(tj_tensor_ptr(out), out->dtype, r, TJ_FLOAT64, out->numel);
    tj_free_storage_bytes(r, nb);
    return TJ_OK;
}

/* ---- norm.ScalarOpt_dim (F.normalize, x.norm(dim=1)): linalg_vector_norm
 * with p None read as 2 and no dtype, as torch._decomp's norm ---- */

#define NORM_DIM "aten::norm.ScalarOpt_dim"

void tj_norm_vector_norm_args(const tj_value *args, tj_value *out)
{
    out[0] = args[0];
    out[1] = args[1].kind == TJ_V_NONE ? tj_v_int(2) : args[1];
    out[2] = args[2];
    out[3] = args[3];
    out[4] = tj_v_none();
}

tj_status tj_meta_norm_ScalarOpt_dim(const tj_value *args, tj_meta *outs)
{
    tj_value a[5];
    tj_norm_vector_norm_args(args, a);
    return tj_error_renamed(NORM_DIM, VECTOR_NORM, tj_meta_linalg_vector_norm(a, outs));
}

tj_status tj_kernel_norm_ScalarOpt_dim(const tj_value *args, tj_tensor *const *outs)
{
    tj_value a[5];
    tj_norm_vector_norm_args(args, a);
    return tj_error_renamed(NORM_DIM, VECTOR_NORM, tj_kernel_linalg_vector_norm(a, outs));
}

/* ---- logsumexp: m = max (0 where it is infinite, as PyTorch does), then
 * log(sum(exp(x - m))) + m. An all -inf slice gives -inf, a +inf gives +inf,
 * an empty slice -inf. Integer input gives float32. ---- */

static const char *const LOGSUMEXP = "aten::logsumexp";

tj_status tj_meta_logsumexp(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    bool mask[TJ_MAX_DIMS];
    if (parse_dims(LOGSUMEXP, x, &args[1], mask) != TJ_OK) return tj_last_status();
    reduced_meta(x, mask, args[2].u.b, tj_dtype_is_float(x->dtype) ? x->dtype : TJ_FLOAT32, &outs[0]);
    return TJ_OK;
}

tj_status tj_kernel_logsumexp(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[0].u.t;
    bool mask[TJ_MAX_DIMS];
    parse_dims(LOGSUMEXP, x, &args[1], mask);
    tj_tensor *tmp = NULL;
    if (!tj_dtype_is_float(x->dtype) && !(x = tmp = converted(x, TJ_FLOAT32))) return tj_last_status();
    size_t nb;
    double *m = reduce_to_f64(LOGSUMEXP, TJ_K_RED_MAX, 1, x, mask, &nb);
    tj_status st = m ? TJ_OK : tj_last_status();
    if (m) {
        for (int64_t o = 0; o < outs[0]->numel; o++)
            if (isinf(m[o])) m[o] = 0;
        tj_k_reduce k = {.kind = TJ_K_RED_SUMEXP, .param = m, .out = tj_tensor_ptr(outs[0]),
                         .out_dtype = outs[0]->dtype};
        st = reduce(LOGSUMEXP, &k, x, mask);
        tj_free_storage_bytes(m, nb);
    }
    tj_tensor_release(tmp);
    return st;
}

/* ---- prod / prod.dim_int (products in float64 for float results, rounded
 * once: PyTorch 1.13 multiplies float32 in float32, so its float32 product
 * can overflow or underflow on the way where this one does not; int64
 * wraps), all / all.dim / any / any.dim (bool results, any input dtype, nan
 * counting as true) ---- */

static const char *const PROD = "aten::prod";
static const char *const PROD_DIM = "aten::prod.dim_int";

tj_status tj_meta_prod(const tj_value *args, tj_meta *outs)
{
    outs[0].dtype = sum_dtype(args[0].u.t, &args[1]);
    outs[0].ndim = 0;
    return TJ_OK;
}

tj_status tj_meta_prod_dim(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    bool mask[TJ_MAX_DIMS];
    if (parse_one_dim(PROD_DIM, x, &args[1], mask) != TJ_OK) return tj_last_status();
    reduced_meta(x, mask, args[2].u.b, sum_dtype(x, &args[3]), &outs[0]);
    return TJ_OK;
}

tj_status tj_kernel_prod(const tj_value *args, tj_tensor *const *outs)
{
    bool mask[TJ_MAX_DIMS];
    mask_all(mask);
    return fold_into(PROD, TJ_K_RED_PROD, args[0].u.t, mask, outs[0]);
}

tj_status tj_kernel_prod_dim(const tj_value *args, tj_tensor *const *outs)
{
    bool mask[TJ_MAX_DIMS];
    parse_one_dim(PROD_DIM, args[0].u.t, &args[1], mask);
    return fold_into(PROD_DIM, TJ_K_RED_PROD, args[0].u.t, mask, outs[0]);
}

static const char *const ALL = "aten::all";
static const char *const ALL_DIM = "aten::all.dim";
static const char *const ANY = "aten::any";
static const char *const ANY_DIM = "aten::any.dim";

/* all / any over every dim: a 0-dim bool */
static tj_status meta_flag(const tj_value *args, tj_meta *outs)
{
    (void)args;
    outs[0].dtype = TJ_BOOL;
    outs[0].ndim = 0;
    return TJ_OK;
}

static tj_status meta_flag_dim(const char *op, const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    bool mask[TJ_MAX_DIMS];
    if (parse_one_dim(op, x, &args[1], mask) != TJ_OK) return tj_last_status();
    reduced_meta(x, mask, args[2].u.b, TJ_BOOL, &outs[0]);
    return TJ_OK;
}

/* kind: TJ_K_RED_ALL or TJ_K_RED_ANY; `dim`: the dim argument, or NULL
 * for every dim */
static tj_status kernel_flag(const char *op, tj_k_red_kind kind, const tj_tensor *x, const tj_value *dim,
                             tj_tensor *const *outs)
{
    bool mask[TJ_MAX_DIMS];
    if (dim) parse_one_dim(op, x, dim, mask);
    else mask_all(mask);
    tj_k_reduce k = {.kind = kind, .out = tj_tensor_ptr(outs[0]), .out_dtype = TJ_BOOL};
    return reduce(op, &k, x, mask);
}

tj_status tj_meta_all(const tj_value *args, tj_meta *outs) { return meta_flag(args, outs); }
tj_status tj_meta_any(const tj_value *args, tj_meta *outs) { return meta_flag(args, outs); }
tj_status tj_meta_all_dim(const tj_value *args, tj_meta *outs) { return meta_flag_dim(ALL_DIM, args, outs); }
tj_status tj_meta_any_dim(const tj_value *args, tj_meta *outs) { return meta_flag_dim(ANY_DIM, args, outs); }
tj_status tj_kernel_all(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_flag(ALL, TJ_K_RED_ALL, args[0].u.t, NULL, outs);
}
tj_status tj_kernel_any(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_flag(ANY, TJ_K_RED_ANY, args[0].u.t, NULL, outs);
}
tj_status tj_kernel_all_dim(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_flag(ALL_DIM, TJ_K_RED_ALL, args[0].u.t, &args[1], outs);
}
tj_status tj_kernel_any_dim(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_flag(ANY_DIM, TJ_K_RED_ANY, args[0].u.t, &args[1], outs);
}
