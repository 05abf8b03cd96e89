/* _fused_adamw_step and _fused_sgd_step: argument checks and the glue to
 * kernels/adamw and kernels/sgd. */
#include "contig.h"
#include "kernels/adamw.h"
#include "kernels/parallel.h"
#include "kernels/sgd.h"
#include "op_optim.h"

#define FUSED_ADAMW "aten::_fused_adamw_step"
#define FUSED_SGD "aten::_fused_sgd_step"

/* self must be float32 or float64. */
static tj_status check_self(const char *op, const tj_tensor *self)
{
    if (!tj_dtype_is_float(self->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: self must be float32 or float64, got %s", op, tj_dtype_name(self->dtype));
    return TJ_OK;
}

/* A gradient or state tensor of operator `op` must match self's dtype and shape. */
static tj_status check_like(const char *op, const char *name, const tj_tensor *t, const tj_tensor *self)
{
    char s1[96], s2[96];
    if (t->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: %s must have self's dtype %s, got %s", op, name,
                        tj_dtype_name(self->dtype), tj_dtype_name(t->dtype));
    bool same = t->ndim == self->ndim;
    for (int d = 0; same && d < t->ndim; d++) same = t->shape[d] == self->shape[d];
    if (!same)
        return tj_error(TJ_ERR_SHAPE, "%s: %s %s must have self's shape %s", op, name,
                        tj_shape_str(t->ndim, t->shape, s1, sizeof s1),
                        tj_shape_str(self->ndim, self->shape, s2, sizeof s2));
    return TJ_OK;
}

/* outs[0..n): self's dtype and shape. */
static void like_self(const tj_tensor *self, tj_meta *outs, int n)
{
    for (int k = 0; k < n; k++) {
        outs[k].dtype = self->dtype;
        outs[k].ndim = self->ndim;
        for (int d = 0; d < self->ndim; d++) outs[k].shape[d] = self->shape[d];
    }
}

/* Elements per thread before a second thread pays off. */
#define PER_THREAD 32768

/* Threads for n elements: one per PER_THREAD, at most the pool's. */
static int chunks_for(int64_t n)
{
    int nt = tj_get_num_threads();
    int64_t c = n / PER_THREAD;
    return (int)(c > nt ? nt : c > 1 ? c : 1);
}

/* Row-major views of the n tensors src[k] (NULL ones left empty). */
static tj_status contig_all(tj_contig *in, const tj_tensor *const *src, int n)
{
    tj_status st = TJ_OK;
    for (int i = 0; i < n && st == TJ_OK; i++)
        if (src[i]) st = tj_contig_get(&in[i], src[i]);
    return st;
}

/* ---- _fused_adamw_step ---- */

tj_status tj_meta__fused_adamw_step(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *max_sq = tj_opt_tensor(&args[4]), *step = args[5].u.t;
    char s1[96];
    tj_status st = check_self(FUSED_ADAMW, self);
    if (st == TJ_OK) st = check_like(FUSED_ADAMW, "grad", args[1].u.t, self);
    if (st == TJ_OK) st = check_like(FUSED_ADAMW, "exp_avg", args[2].u.t, self);
    if (st == TJ_OK) st = check_like(FUSED_ADAMW, "exp_avg_sq", args[3].u.t, self);
    if (st == TJ_OK && max_sq) st = check_like(FUSED_ADAMW, "max_exp_avg_sq", max_sq, self);
    if (st != TJ_OK) return st;
    if (!tj_dtype_is_float(step->dtype) || step->numel != 1)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, FUSED_ADAMW ": step must be one float32 or float64 count, got %s %s",
                        tj_dtype_name(step->dtype), tj_shape_str(step->ndim, step->shape, s1, sizeof s1));
    like_self(self, outs, 4);
    outs[3].undefined = !max_sq;
    return TJ_OK;
}

/* The operands of one fused AdamW step, for its parallel loop. */
typedef struct adamw_args {
    tj_dtype dtype;
    const tj_contig *in; /* self, grad, exp_avg, exp_avg_sq, max_exp_avg_sq (data NULL when absent) */
    tj_tensor *const *outs;
    bool amsgrad;
    const tj_k_adamw_scalars *s;
} adamw_args;

/* Elements [lo, hi). */
static void adamw_range(void *ctx, int t, int64_t lo, int64_t hi)
{
    const adamw_args *a = ctx;
    const tj_contig *in = a->in;
    size_t off = (size_t)lo * tj_dtype_size(a->dtype);
    (void)t;
    tj_k_adamw_buffers b = {
        in[0].data + off, in[1].data + off, in[2].data + off, in[3].data + off,
        a->amsgrad ? in[4].data + off : NULL,
        tj_tensor_ptr(a->outs[0]) + off, tj_tensor_ptr(a->outs[1]) + off, tj_tensor_ptr(a->outs[2]) + off,
        a->amsgrad ? tj_tensor_ptr(a->outs[3]) + off : NULL,
    };
    tj_k_adamw(a->dtype, hi - lo, &b, a->s);
}

tj_status tj_kernel__fused_adamw_step(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t, *max_sq = tj_opt_tensor(&args[4]);
    int64_t n = self->numel;
    if (n == 0) return TJ_OK;
    tj_k_adamw_scalars s;
    tj_k_adamw_scalars_init(&s, tj_value_as_double(&args[6]), tj_value_as_double(&args[7]),
                            tj_value_as_double(&args[8]), tj_value_as_double(&args[9]),
                            tj_value_as_double(&args[10]), tj_tensor_item_at(args[5].u.t, 0));
    tj_contig in[5] = {{0}};
    const tj_tensor *src[5] = {self, args[1].u.t, args[2].u.t, args[3].u.t, max_sq};
    tj_status st = contig_all(in, src, 5);
    if (st == TJ_OK) {
        adamw_args a = {self->dtype, in, outs, max_sq != NULL, &s};
        tj_k_parallel(chunks_for(n), n, adamw_range, &a);
    }
    for (int i = 0; i < 5; i++) tj_contig_release(&in[i]);
    return st;
}

/* ---- _fused_sgd_step ---- */

tj_status tj_meta__fused_sgd_step(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    tj_status st = check_self(FUSED_SGD, self);
    if (st == TJ_OK) st = check_like(FUSED_SGD, "grad", args[1].u.t, self);
    if (st == TJ_OK) st = check_like(FUSED_SGD, "momentum_buffer", args[2].u.t, self);
    if (st != TJ_OK) return st;
    like_self(self, outs, 2);
    return TJ_OK;
}

/* The operands of one fused SGD step, for its parallel loop. */
typedef struct sgd_args {
    tj_dtype dtype;
    const tj_contig *in; /* self, grad, momentum_buffer */
    tj_tensor *const *outs;
    const tj_k_sgd_scalars *s;
} sgd_args;

/* Elements [lo, hi). */
static void sgd_range(void *ctx, int t, int64_t lo, int64_t hi)
{
    const sgd_args *a = ctx;
    size_t off = (size_t)lo * tj_dtype_size(a->dtype);
    (void)t;
    tj_k_sgd_buffers b = {a->in[0].data + off, a->in[1].data + off, a->in[2].data + off,
                          tj_tensor_ptr(a->outs[0]) + off, tj_tensor_ptr(a->outs[1]) + off};
    tj_k_sgd(a->dtype, hi - lo, &b, a->s);
}

tj_status tj_kernel__fused_sgd_step(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t n = self->numel;
    if (n == 0) return TJ_OK;
    tj_k_sgd_scalars s;
    tj_k_sgd_scalars_init(&s, tj_value_as_double(&args[3]), tj_value_as_double(&args[4]),
                          tj_value_as_double(&args[5]), tj_value_as_double(&args[6]), args[7].u.b, args[8].u.b);
    tj_contig in[3] = {{0}};
    const tj_tensor *src[3] = {self, args[1].u.t, args[2].u.t};
    tj_status st = contig_all(in, src, 3);
    if (st == TJ_OK) {
        sgd_args a = {self->dtype, in, outs, &s};
        tj_k_parallel(chunks_for(n), n, sgd_range, &a);
    }
    for (int i = 0; i < 3; i++) tj_contig_release(&in[i]);
    return st;
}
