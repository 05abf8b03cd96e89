/* randint (.low, .default, _like, _like.low_dtype), randperm and
 * multinomial, as ATen 1.13: shape functions with PyTorch's checks and
 * messages; the numbers come from the default generator (random.c), the
 * Philox stream rand / randn / bernoulli read, not torch's mt19937: a seed
 * reproduces tjit's own run, not torch's numbers.
 *
 * Each value is a 64-bit draw (tj_random_u64): randint's low + u mod
 * (high - low); randperm's swaps, ATen's loop (position i with i + u mod
 * (n - i)); multinomial's uniforms (u >> 11 scaled by 2^-53) and, without
 * replacement, exponentials -log(1 - uniform), ATen's top-k of p / q. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_creation.h"
#include "op_random.h"
#include "random.h"

#define RANDINT_LOW "aten::randint.low"
#define RANDPERM "aten::randperm"
#define MULTINOMIAL "aten::multinomial"

/* dtype `v`, int64 for None (the schemas' dtype=long) */
static tj_dtype dtype_or_long(const tj_value *v) { return v->kind == TJ_V_DTYPE ? v->u.dtype : TJ_INT64; }

/* ATen's check_from_to: low < high, and both ends within a bool's range */
static tj_status check_range(const char *op, int64_t low, int64_t high, tj_dtype dtype)
{
    if (low >= high)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: random_ expects 'from' to be less than 'to', but got from=%lld "
                        ">= to=%lld", op, (long long)low, (long long)high);
    if (dtype == TJ_BOOL && (low < 0 || low > 1))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: from is out of bounds for bool (from=%lld)", op, (long long)low);
    if (dtype == TJ_BOOL && high - 1 > 1)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: to - 1 is out of bounds for bool (to=%lld)", op, (long long)high);
    return TJ_OK;
}

/* out (contiguous) = low + u mod (high - low), one 64-bit draw each */
static tj_status randint_fill(const char *op, tj_tensor *out, int64_t low, int64_t high)
{
    int64_t n = out->numel;
    size_t nb = sizeof(uint64_t) * (size_t)n, got = 0;
    uint64_t *u = nb ? tj_alloc_storage_bytes(nb, &got) : NULL;
    if (nb && !u) return tj_oom(op, nb);
    tj_random_u64(u, n);
    uint64_t range = (uint64_t)high - (uint64_t)low;
    char *o = tj_tensor_ptr(out);
    int64_t es = (int64_t)tj_dtype_bytes(out->dtype);
    for (int64_t i = 0; i < n; i++) tj_k_store_i64(o + i * es, out->dtype, (int64_t)((uint64_t)low + u[i] % range));
    tj_free_storage_bytes(u, got);
    return TJ_OK;
}

/* randint.low(low, high, size, *, dtype=long, ...) */
tj_status tj_meta_randint_low(const tj_value *args, tj_meta *outs)
{
    tj_dtype dtype = dtype_or_long(&args[3]);
    if (check_range(RANDINT_LOW, args[0].u.i, args[1].u.i, dtype) != TJ_OK) return tj_last_status();
    return tj_size_meta(RANDINT_LOW, &args[2], dtype, &outs[0]);
}

tj_status tj_kernel_randint_low(const tj_value *args, tj_tensor *const *outs)
{
    return randint_fill(RANDINT_LOW, outs[0], args[0].u.i, args[1].u.i);
}

/* randint(high, size, *, dtype=long, ...): randint.low from 0 */
tj_status tj_meta_randint(const tj_value *args, tj_meta *outs)
{
    tj_dtype dtype = dtype_or_long(&args[2]);
    if (check_range("aten::randint", 0, args[0].u.i, dtype) != TJ_OK) return tj_last_status();
    return tj_size_meta("aten::randint", &args[1], dtype, &outs[0]);
}

tj_status tj_kernel_randint(const tj_value *args, tj_tensor *const *outs)
{
    return randint_fill("aten::randint", outs[0], 0, args[0].u.i);
}

/* randint_like(self, high, *, dtype=None, ...) and .low_dtype(self, low,
 * high, ...): self's shape, self's dtype unless dtype names another */
static tj_status meta_randint_like(const char *op, const tj_value *args, int64_t low, int64_t high,
                                   const tj_value *dtype, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    tj_meta_like(&outs[0], self);
    if (dtype->kind == TJ_V_DTYPE) outs[0].dtype = dtype->u.dtype;
    return check_range(op, low, high, outs[0].dtype);
}

tj_status tj_meta_randint_like(const tj_value *args, tj_meta *outs)
{
    return meta_randint_like("aten::randint_like", args, 0, args[1].u.i, &args[2], outs);
}

tj_status tj_kernel_randint_like(const tj_value *args, tj_tensor *const *outs)
{
    return randint_fill("aten::randint_like", outs[0], 0, args[1].u.i);
}

tj_status tj_meta_randint_like_low_dtype(const tj_value *args, tj_meta *outs)
{
    return meta_randint_like("aten::randint_like.low_dtype", args, args[1].u.i, args[2].u.i, &args[3], outs);
}

tj_status tj_kernel_randint_like_low_dtype(const tj_value *args, tj_tensor *const *outs)
{
    return randint_fill("aten::randint_like.low_dtype", outs[0], args[1].u.i, args[2].u.i);
}

/* randperm(n, *, dtype=long, ...): every n exactly representable */
tj_status tj_meta_randperm(const tj_value *args, tj_meta *outs)
{
    int64_t n = args[0].u.i;
    tj_dtype dtype = dtype_or_long(&args[1]);
    if (dtype == TJ_BOOL) return tj_error(TJ_ERR_DTYPE, "%s: \"randperm\" not implemented for 'Bool'", RANDPERM);
    if (dtype == TJ_FLOAT32 && n > (1 << 24) + 1)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: n cannot be greater than 2^24+1 for Float type (n=%lld)", RANDPERM,
                        (long long)n);
    if (dtype == TJ_FLOAT64 && n > (1ll << 53) + 1)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: n cannot be greater than 2^53+1 for Double type (n=%lld)",
                        RANDPERM, (long long)n);
    tj_value size = tj_v_ints(&n, 1);
    return tj_size_meta(RANDPERM, &size, dtype, &outs[0]);
}

tj_status tj_kernel_randperm(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *out = outs[0];
    int64_t n = out->numel;
    (void)args;
    if (n == 0) return TJ_OK;
    size_t nb = sizeof(uint64_t) * 2 * (size_t)n, got = 0;
    uint64_t *u = tj_alloc_storage_bytes(nb, &got);
    if (!u) return tj_oom(RANDPERM, nb);
    int64_t *perm = (int64_t *)(u + n);
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    tj_random_u64(u, n - 1);
    for (int64_t i = 0; i < n - 1; i++) {
        int64_t z = i + (int64_t)(u[i] % (uint64_t)(n - i)), t = perm[i];
        perm[i] = perm[z];
        perm[z] = t;
    }
    char *o = tj_tensor_ptr(out);
    int64_t es = (int64_t)tj_dtype_bytes(out->dtype);
    for (int64_t i = 0; i < n; i++) tj_k_store_i64(o + i * es, out->dtype, perm[i]);
    tj_free_storage_bytes(u, got);
    return TJ_OK;
}

/* multinomial(self, num_samples, replacement, *, generator): the checks of
 * ATen's multinomial_out, in its order */
tj_status tj_meta_multinomial(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t ns = args[1].u.i, nc = self->ndim ? self->shape[self->ndim - 1] : 0;
    char s[160];
    if (self->ndim < 1 || self->ndim > 2)
        return tj_error(TJ_ERR_SHAPE, "%s: prob_dist must be 1 or 2 dim (self %s)", MULTINOMIAL,
                        tj_shape_str(self->ndim, self->shape, s, sizeof s));
    if (!tj_dtype_is_float(self->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: multinomial only supports floating-point dtypes for input, got: %s",
                        MULTINOMIAL, tj_dtype_name(self->dtype));
    if (ns <= 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: cannot sample n_sample <= 0 samples (n_sample %lld)", MULTINOMIAL,
                        (long long)ns);
    if (!args[2].u.b && ns > nc)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: cannot sample n_sample > prob_dist.size(-1) samples without "
                        "replacement (n_sample %lld, self %s)", MULTINOMIAL, (long long)ns,
                        tj_shape_str(self->ndim, self->shape, s, sizeof s));
    if (nc > (1 << 24))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: number of categories cannot exceed 2^24 (self %s)", MULTINOMIAL,
                        tj_shape_str(self->ndim, self->shape, s, sizeof s));
    int64_t shape[2] = {self->shape[0], ns};
    tj_meta_set(&outs[0], TJ_INT64, self->ndim, self->ndim == 2 ? shape : &ns);
    return TJ_OK;
}

/* A category's key without replacement, ordered by key (largest first),
 * then position. */
typedef struct keyed {
    double key;
    int64_t pos;
} keyed;

static int by_key_desc(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

static double unit(uint64_t u) { return (double)(u >> 11) * 0x1p-53; } /* [0, 1) */

/* One row: p (nc probabilities, stride ps) into out[ns]; u its draws;
 * work nc entries of scratch (the cumulative sums, or the keys). */
static void sample_row(const tj_tensor *self, const char *p, int64_t ps, int64_t nc, int64_t ns, bool replacement,
                       const uint64_t *u, keyed *work, int64_t *out)
{
    if (replacement) {
        double total = 0, *cdf = (double *)work;
        int64_t last = 0;
        for (int64_t c = 0; c < nc; c++) {
            double v = tj_load_f64(p + (size_t)(c * ps) * tj_dtype_bytes(self->dtype), self->dtype);
            cdf[c] = total += v;
            if (v > 0) last = c;
        }
        for (int64_t k = 0; k < ns; k++) {
            double target = unit(u[k]) * total;
            int64_t a = 0, b = nc; /* the first category whose cumulative sum exceeds target */
            while (a < b) {
                int64_t mid = a + (b - a) / 2;
                if (cdf[mid] > target) b = mid;
                else a = mid + 1;
            }
            out[k] = a < nc ? a : last;
        }
        return;
    }
    for (int64_t c = 0; c < nc; c++) {
        double v = tj_load_f64(p + (size_t)(c * ps) * tj_dtype_bytes(self->dtype), self->dtype);
        work[c] = (keyed){v > 0 ? v / -log1p(-unit(u[c])) : 0, c};
    }
    qsort(work, (size_t)nc, sizeof *work, by_key_desc);
    for (int64_t k = 0; k < ns; k++) out[k] = work[k].pos;
}

tj_status tj_kernel_multinomial(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t ns = args[1].u.i, nc = self->shape[self->ndim - 1], rows = self->ndim == 2 ? self->shape[0] : 1;
    int64_t rs = self->ndim == 2 ? self->strides[0] : 0, cs = self->strides[self->ndim - 1];
    bool replacement = args[2].u.b;
    size_t es = tj_dtype_bytes(self->dtype);
    const char *x = tj_tensor_ptr(self);
    /* ATen's checks of the values, before anything is drawn */
    for (int64_t r = 0; r < rows; r++) {
        double sum = 0;
        for (int64_t c = 0; c < nc; c++) {
            double v = tj_load_f64(x + (size_t)(r * rs + c * cs) * es, self->dtype);
            if (!(v >= 0) || isinf(v))
                return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: probability tensor contains either `inf`, `nan` or "
                                "element < 0 (row %lld, category %lld: %g)", MULTINOMIAL, (long long)r, (long long)c, v);
            sum += v;
        }
        if (!(sum > 0))
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: invalid multinomial distribution (sum of probabilities <= "
                            "0) (row %lld)", MULTINOMIAL, (long long)r);
    }
    if (rows == 0) return TJ_OK;
    int64_t per_row = replacement ? ns : nc;
    size_t nb = sizeof(uint64_t) * (size_t)(rows * per_row) + sizeof(keyed) * (size_t)nc, got = 0;
    uint64_t *u = tj_alloc_storage_bytes(nb, &got);
    if (!u) return tj_oom(MULTINOMIAL, nb);
    tj_random_u64(u, rows * per_row);
    keyed *work = (keyed *)(u + rows * per_row);
    int64_t *o = (int64_t *)tj_tensor_ptr(outs[0]);
    for (int64_t r = 0; r < rows; r++)
        sample_row(self, x + (size_t)(r * rs) * es, cs, nc, ns, replacement, u + r * per_row, work, o + r * ns);
    tj_free_storage_bytes(u, got);
    return TJ_OK;
}
