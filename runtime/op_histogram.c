/* bincount and histc, as ATen 1.13 (SummaryOps.cpp, Histogram.cpp): shape
 * functions with PyTorch's checks and messages, and the glue to
 * kernels/histogram.c.
 *
 * bincount's result size is max(self) + 1 (at least minlength): its shape
 * function reads self's values, refuses a fake self (as nonzero,
 * runtime/op_masked.c), and the kernel refuses values that need another
 * size (a graph recorded with other values). histc's size is `bins`; with
 * min == max its range is the values' own, read by the kernel. */
#include <math.h>

#include "iter.h"
#include "kernels/copy.h"
#include "kernels/histogram.h"
#include "op_masked.h"
#include "op_unique.h"

#define BINCOUNT "aten::bincount"
#define HISTC "aten::histc"

/* The smallest and largest of the 1-D int64 self (n > 0). */
static void int_range(const tj_tensor *self, int64_t *lo, int64_t *hi)
{
    const int64_t *x = (const int64_t *)tj_tensor_ptr(self);
    int64_t s = self->strides[0];
    *lo = *hi = x[0];
    for (int64_t i = 1; i < self->numel; i++) {
        int64_t v = x[i * s];
        if (v < *lo) *lo = v;
        if (v > *hi) *hi = v;
    }
}

/* Checks self, weights and minlength in ATen's order; with `nbins`, the
 * result size from self's values (negative ones refused). */
static tj_status bincount_check(const tj_value *args, int64_t *nbins)
{
    const tj_tensor *self = args[0].u.t, *w = args[1].kind == TJ_V_TENSOR ? args[1].u.t : NULL;
    int64_t minlength = args[2].u.i, lo, hi;
    char s[160], s2[160];
    if (self->dtype != TJ_INT64)
        return tj_error(TJ_ERR_DTYPE, "%s: \"bincount_cpu\" not implemented for '%s'", BINCOUNT,
                        tj_dtype_name(self->dtype));
    if (minlength < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: minlength should be >= 0, got %lld", BINCOUNT,
                        (long long)minlength);
    if (self->ndim != 1)
        return tj_error(TJ_ERR_SHAPE, "%s: bincount only supports 1-d non-negative integral inputs (self %s)",
                        BINCOUNT, tj_shape_str(self->ndim, self->shape, s, sizeof s));
    if (w && (w->ndim != 1 || w->shape[0] != self->shape[0]))
        return tj_error(TJ_ERR_SHAPE, "%s: weights should be 1-d and have the same length as input (weights %s, "
                        "self %s)", BINCOUNT, tj_shape_str(w->ndim, w->shape, s, sizeof s),
                        tj_shape_str(self->ndim, self->shape, s2, sizeof s2));
    if (!nbins) return TJ_OK;
    *nbins = minlength;
    if (self->numel == 0) return TJ_OK;
    int_range(self, &lo, &hi);
    if (lo < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: bincount only supports 1-d non-negative integral inputs "
                        "(self holds %lld)", BINCOUNT, (long long)lo);
    if (hi >= *nbins) *nbins = hi + 1;
    return TJ_OK;
}

/* int64 counts, or the weights' sums: float32 for float32 weights, else
 * float64 */
static tj_dtype bincount_dtype(const tj_value *args)
{
    if (args[1].kind != TJ_V_TENSOR) return TJ_INT64;
    return args[1].u.t->dtype == TJ_FLOAT32 ? TJ_FLOAT32 : TJ_FLOAT64;
}

tj_status tj_meta_bincount(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t n;
    if (bincount_check(args, NULL) != TJ_OK) return tj_last_status();
    if (self->fake) return tj_count_nonzero(BINCOUNT, "self", self, &n); /* the refusal */
    if (bincount_check(args, &n) != TJ_OK) return tj_last_status();
    tj_meta_set(&outs[0], bincount_dtype(args), 1, &n);
    return TJ_OK;
}

tj_status tj_kernel_bincount(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t, *w = args[1].kind == TJ_V_TENSOR ? args[1].u.t : NULL;
    tj_tensor *out = outs[0];
    int64_t n;
    if (bincount_check(args, &n) != TJ_OK) return tj_last_status();
    if (n != out->numel) return tj_stale_count_error(BINCOUNT, "max(self) + 1 (or minlength)", n, out->numel);
    tj_k_bincount((const int64_t *)tj_tensor_ptr(self), self->ndim ? self->strides[0] : 1, self->numel,
                  w ? tj_tensor_ptr(w) : NULL, w ? w->dtype : TJ_FLOAT64, w ? w->strides[0] : 0, tj_tensor_ptr(out),
                  out->dtype, n);
    return TJ_OK;
}

/* histc(self, bins, min, max) */
tj_status tj_meta_histc(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t bins = args[1].u.i;
    double lo = tj_value_as_double(&args[2]), hi = tj_value_as_double(&args[3]);
    if (self->dtype != TJ_FLOAT32 && self->dtype != TJ_FLOAT64)
        return tj_error(TJ_ERR_DTYPE, "%s: \"histogram_cpu\" not implemented for '%s'", HISTC,
                        tj_dtype_name(self->dtype));
    if (bins <= 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: bins must be > 0, but got %lld", HISTC, (long long)bins);
    if (lo > hi) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: max must be larger than min (min %g, max %g)", HISTC, lo, hi);
    if (!isfinite(lo) || !isfinite(hi))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: range of [%g, %g] is not finite", HISTC, lo, hi);
    tj_meta_set(&outs[0], self->dtype, 1, &bins);
    return TJ_OK;
}

/* min == max: the values' range instead (nan or an infinity there is
 * refused), widened by 1 each way when it is one value, as ATen. */
tj_status tj_kernel_histc(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    tj_tensor *out = outs[0];
    int64_t bins = args[1].u.i, n = self->numel;
    double lo = tj_value_as_double(&args[2]), hi = tj_value_as_double(&args[3]);
    size_t es = tj_dtype_bytes(self->dtype), xb = ((size_t)n * es + 63) / 64 * 64, nb = xb + (size_t)(bins + 1) * es;
    size_t got = 0;
    char *block = tj_alloc_storage_bytes(nb, &got);
    if (!block) return tj_oom(HISTC, nb);
    int64_t cstrides[TJ_MAX_DIMS];
    tj_contiguous_strides(self->ndim, self->shape, cstrides);
    tj_k_copy_strided((tj_k_strided){block, self->dtype, cstrides},
                      (tj_k_strided){tj_tensor_ptr(self), self->dtype, self->strides}, self->ndim, self->shape,
                      tj_threads_for(n));
    if (lo == hi && n > 0) {
        lo = INFINITY, hi = -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            double v = tj_load_f64(block + (size_t)i * es, self->dtype);
            if (isnan(v)) lo = hi = NAN;
            if (isnan(lo)) break;
            lo = fmin(lo, v), hi = fmax(hi, v);
        }
    }
    if (lo == hi) lo -= 1, hi += 1;
    if (!isfinite(lo) || !isfinite(hi)) {
        tj_free_storage_bytes(block, got);
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: range of [%g, %g] is not finite", HISTC, lo, hi);
    }
    tj_k_histc(block, self->dtype, n, bins, lo, hi, block + xb, tj_tensor_ptr(out));
    tj_free_storage_bytes(block, got);
    return TJ_OK;
}
