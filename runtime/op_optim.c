/* _fused_adamw_step: argument checks and the glue to kernels/adamw. */
#include "contig.h"
#include "kernels/adamw.h"
#include "kernels/parallel.h"
#include "op_optim.h"

#define FUSED_ADAMW "aten::_fused_adamw_step"

static const tj_tensor *opt_tensor(const tj_value *v) { return v->kind == TJ_V_TENSOR ? v->u.t : NULL; }

/* A state tensor must match self's dtype and shape. */
static tj_status check_like(const char *name, const tj_tensor *t, const tj_tensor *self)
{
    char s1[96], s2[96];
    if (t->dtype != self->dtype)
        return tj_error(TJ_ERR_DTYPE, FUSED_ADAMW ": %s must have self's dtype %s, got %s", name,
                        tj_dtype_name(self->dtype), tj_dtype_name(t->dtype));
    bool same = t->ndim == self->ndim;
    for (int d = 0; same && d < t->ndim; d++) same = t->shape[d] == self->shape[d];
    if (!same)
        return tj_error(TJ_ERR_SHAPE, FUSED_ADAMW ": %s %s must have self's shape %s", name,
                        tj_shape_str(t->ndim, t->shape, s1, sizeof s1),
                        tj_shape_str(self->ndim, self->shape, s2, sizeof s2));
    return TJ_OK;
}

tj_status tj_meta__fused_adamw_step(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t, *max_sq = opt_tensor(&args[4]), *step = args[5].u.t;
    char s1[96];
    if (self->dtype != TJ_FLOAT32 && self->dtype != TJ_FLOAT64)
        return tj_error(TJ_ERR_DTYPE, FUSED_ADAMW ": self must be float32 or float64, got %s",
                        tj_dtype_name(self->dtype));
    tj_status st = check_like("grad", args[1].u.t, self);
    if (st == TJ_OK) st = check_like("exp_avg", args[2].u.t, self);
    if (st == TJ_OK) st = check_like("exp_avg_sq", args[3].u.t, self);
    if (st == TJ_OK && max_sq) st = check_like("max_exp_avg_sq", max_sq, self);
    if (st != TJ_OK) return st;
    if ((step->dtype != TJ_FLOAT32 && step->dtype != TJ_FLOAT64) || step->numel != 1)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, FUSED_ADAMW ": step must be one float32 or float64 count, got %s %s",
                        tj_dtype_name(step->dtype), tj_shape_str(step->ndim, step->shape, s1, sizeof s1));
    for (int k = 0; k < 4; k++) {
        outs[k].dtype = self->dtype;
        outs[k].ndim = self->ndim;
        for (int d = 0; d < self->ndim; d++) outs[k].shape[d] = self->shape[d];
    }
    outs[3].undefined = !max_sq;
    return TJ_OK;
}

/* Elements per thread before a second thread pays off. */
#define PER_THREAD 32768

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
    const tj_tensor *self = args[0].u.t, *max_sq = opt_tensor(&args[4]);
    int64_t n = self->numel;
    if (n == 0) return TJ_OK;
    tj_k_adamw_scalars s;
    tj_k_adamw_scalars_init(&s, tj_value_as_double(&args[6]), tj_value_as_double(&args[7]),
                            tj_value_as_double(&args[8]), tj_value_as_double(&args[9]),
                            tj_value_as_double(&args[10]), tj_tensor_item_at(args[5].u.t, 0));
    tj_contig in[5] = {{0}};
    const tj_tensor *src[5] = {self, args[1].u.t, args[2].u.t, args[3].u.t, max_sq};
    tj_status st = TJ_OK;
    for (int i = 0; i < 5 && st == TJ_OK; i++)
        if (src[i]) st = tj_contig_get(&in[i], src[i]);
    if (st == TJ_OK) {
        int nt = tj_get_num_threads();
        int64_t chunks = n / PER_THREAD > nt ? nt : n / PER_THREAD > 1 ? n / PER_THREAD : 1;
        adamw_args a = {self->dtype, in, outs, max_sq != NULL, &s};
        tj_k_parallel((int)chunks, n, adamw_range, &a);
    }
    for (int i = 0; i < 5; i++) tj_contig_release(&in[i]);
    return st;
}
