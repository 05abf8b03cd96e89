/* aten::smooth_l1_loss, aten::huber_loss, aten::mse_loss (Loss.cpp) and
 * their backward operators: checks, result dtype and shape as PyTorch 1.13, glue to the
 * pointwise loops of kernels/loss.h. The elementwise losses broadcast self
 * and target; mean and sum run the reduction kernels (aten::mean, aten::sum)
 * over them, as ATen's apply_loss_reduction does. */
#include "kernels/loss.h"
#include "op_backward.h"
#include "op_elementwise_util.h"
#include "op_nn.h"
#include "op_reduction.h"

/* What differs between the two losses. */
typedef struct pointwise_loss {
    const char *name, *backward_name;
    tj_k_pointwise_loss_op op;
    const char *param;  /* "beta", "delta"; NULL: none (mse) */
    double norm_scale;  /* the backward's factor: 2 for mse's d(x^2), else 1 */
    bool param_nonzero; /* delta must be > 0; beta >= 0 (0 makes smooth_l1 the l1 loss) */
    /* ATen writes huber_loss into empty_like(self): the result keeps self's
     * dtype (computed in the promoted one), and its backward kernel takes no
     * mixed dtypes. smooth_l1_loss's result has the promoted dtype. */
    bool self_dtype;
} pointwise_loss;

static const pointwise_loss SMOOTH_L1 = {"aten::smooth_l1_loss", "aten::smooth_l1_loss_backward", TJ_K_SMOOTH_L1,
                                         "beta", 1, false, false};
static const pointwise_loss HUBER = {"aten::huber_loss", "aten::huber_loss_backward", TJ_K_HUBER, "delta", 1, true,
                                     true};
static const pointwise_loss MSE = {"aten::mse_loss", "aten::mse_loss_backward", TJ_K_MSE, NULL, 2, false, false};

/* The loss's parameter, argument `at` of the call (0 for mse, which has none). */
static double param_of(const pointwise_loss *L, const tj_value *args, int at)
{
    return L->param ? tj_value_as_double(&args[at]) : 0;
}

/* Geometry of a call: the broadcast shape of its tensors, the dtype the loop
 * computes in and the dtype of the (unreduced) result. */
typedef struct loss_geometry {
    tj_meta m; /* broadcast shape, result dtype */
    tj_dtype compute;
} loss_geometry;

/* Checks the tensors ts[0..n) (self is ts[self_at]) and fills g. The
 * forward (n = 2: self, target) checks its parameter; the backward (n = 3:
 * grad_output, self, target) returns self's dtype, as ATen's
 * zeros_like(self) gradient. */
static tj_status loss_geometry_of(const pointwise_loss *L, bool backward, const tj_value *args, int n, int self_at,
                                  double param, int64_t reduction, loss_geometry *g)
{
    const char *op = backward ? L->backward_name : L->name;
    if (!backward && L->param && (L->param_nonzero ? !(param > 0) : !(param >= 0)))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: does not support %s values for %s (got %g)", op,
                        L->param_nonzero ? "non-positive" : "negative", L->param, param);
    const tj_tensor *self = args[self_at].u.t, *ts[3];
    g->m = (tj_meta){.alias = -1};
    g->compute = tj_result_type(args, n);
    tj_status st = tj_ew_require_float(op, g->compute);
    if (st != TJ_OK) return st;
    tj_dtype out = backward || L->self_dtype ? self->dtype : g->compute;
    if (out != g->compute && !tj_dtype_is_float(out))
        return tj_error(TJ_ERR_DTYPE, "%s: result type %s can't be cast to self's dtype %s", op,
                        tj_dtype_name(g->compute), tj_dtype_name(out));
    for (int i = 0; i < n; i++) {
        ts[i] = args[i].u.t;
        if (backward && L->self_dtype && ts[i]->dtype != self->dtype)
            return tj_error(TJ_ERR_DTYPE, "%s: every operand must have self's dtype %s, got %s", op,
                            tj_dtype_name(self->dtype), tj_dtype_name(ts[i]->dtype));
    }
    st = tj_ew_meta_broadcast(op, ts, n, out, &g->m);
    return st != TJ_OK ? st : tj_check_reduction(op, reduction);
}

static tj_status forward_geometry(const pointwise_loss *L, const tj_value *args, loss_geometry *g)
{
    return loss_geometry_of(L, false, args, 2, 0, param_of(L, args, 3), args[2].u.i, g);
}

static tj_status backward_geometry(const pointwise_loss *L, const tj_value *args, loss_geometry *g)
{
    return loss_geometry_of(L, true, args, 3, 1, param_of(L, args, 4), args[3].u.i, g);
}

/* A shape function's output of g's shape and dtype (0-dim when `scalar`). */
static void set_output(tj_meta *out, const loss_geometry *g, bool scalar)
{
    out->dtype = g->m.dtype;
    out->ndim = scalar ? 0 : g->m.ndim;
    memcpy(out->shape, g->m.shape, sizeof(int64_t) * (size_t)out->ndim);
}

static tj_tensor *new_like_meta(const tj_meta *m, tj_dtype dt)
{
    tj_meta t = *m;
    t.dtype = dt;
    t.alias = -1;
    return tj_tensor_new_meta(&t, false);
}

/* Runs `loop` over `in` into out, through a temporary of the compute dtype
 * when out has another (huber_loss's self dtype, a backward's). */
static tj_status run_loop(tj_tensor *out, tj_tensor *const *in, int nin, const loss_geometry *g, tj_loop_fn loop,
                          const tj_k_pointwise_loss_args *k)
{
    if (out->dtype == g->compute) {
        tj_elementwise(out, in, nin, g->compute, loop, k);
        return TJ_OK;
    }
    tj_tensor *tmp = new_like_meta(&g->m, g->compute);
    if (!tmp) return tj_last_status();
    tj_elementwise(tmp, in, nin, g->compute, loop, k);
    tj_copy_convert(out, tmp);
    tj_tensor_release(tmp);
    return TJ_OK;
}

static tj_status meta_forward(const pointwise_loss *L, const tj_value *args, tj_meta *outs)
{
    loss_geometry g;
    tj_status st = forward_geometry(L, args, &g);
    if (st == TJ_OK) set_output(&outs[0], &g, args[2].u.i != 0);
    return st;
}

/* The elementwise losses into outs[0] (reduction none), or into a
 * temporary that aten::mean / aten::sum's kernel reduces into outs[0]. */
static tj_status kernel_forward(const pointwise_loss *L, const tj_value *args, tj_tensor *const *outs)
{
    loss_geometry g;
    tj_status st = forward_geometry(L, args, &g);
    if (st != TJ_OK) return st;
    int64_t reduction = args[2].u.i;
    tj_k_pointwise_loss_args k = {.op = L->op, .dtype = g.compute, .param = param_of(L, args, 3), .norm = 1};
    tj_tensor *in[2] = {args[0].u.t, args[1].u.t};
    tj_tensor *loss = reduction == 0 ? outs[0] : new_like_meta(&g.m, g.m.dtype);
    if (!loss) return tj_last_status();
    st = run_loop(loss, in, 2, &g, tj_k_pointwise_loss_loop, &k);
    if (st == TJ_OK && reduction != 0) {
        const tj_value reduce_args[2] = {tj_v_tensor(loss), tj_v_none()};
        st = reduction == 1 ? tj_kernel_mean(reduce_args, outs) : tj_kernel_sum(reduce_args, outs);
    }
    if (loss != outs[0]) tj_tensor_release(loss);
    return st;
}

static tj_status meta_backward(const pointwise_loss *L, const tj_value *args, tj_meta *outs)
{
    loss_geometry g;
    tj_status st = backward_geometry(L, args, &g);
    if (st == TJ_OK) set_output(&outs[0], &g, false);
    return st;
}

/* norm = 1 / self's element count for the mean, as ATen's (the autograd
 * formula hands self in at the loss's shape: see d_pointwise_loss), times
 * norm_scale (mse: 2. / numel, computed as ATen does). */
static tj_status kernel_backward(const pointwise_loss *L, const tj_value *args, tj_tensor *const *outs)
{
    loss_geometry g;
    tj_status st = backward_geometry(L, args, &g);
    if (st != TJ_OK) return st;
    const tj_tensor *self = args[1].u.t;
    double norm = args[3].u.i == 1 ? L->norm_scale / (double)self->numel : L->norm_scale;
    tj_k_pointwise_loss_args k = {.op = L->op, .dtype = g.compute, .param = param_of(L, args, 4), .norm = norm};
    tj_tensor *in[3] = {args[1].u.t, args[2].u.t, args[0].u.t};
    return run_loop(outs[0], in, 3, &g, tj_k_pointwise_loss_backward_loop, &k);
}

tj_status tj_meta_smooth_l1_loss(const tj_value *args, tj_meta *outs) { return meta_forward(&SMOOTH_L1, args, outs); }
tj_status tj_kernel_smooth_l1_loss(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_forward(&SMOOTH_L1, args, outs);
}
tj_status tj_meta_huber_loss(const tj_value *args, tj_meta *outs) { return meta_forward(&HUBER, args, outs); }
tj_status tj_kernel_huber_loss(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_forward(&HUBER, args, outs);
}

tj_status tj_meta_smooth_l1_loss_backward(const tj_value *args, tj_meta *outs)
{
    return meta_backward(&SMOOTH_L1, args, outs);
}
tj_status tj_kernel_smooth_l1_loss_backward(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_backward(&SMOOTH_L1, args, outs);
}
tj_status tj_meta_huber_loss_backward(const tj_value *args, tj_meta *outs) { return meta_backward(&HUBER, args, outs); }
tj_status tj_kernel_huber_loss_backward(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_backward(&HUBER, args, outs);
}

tj_status tj_meta_mse_loss(const tj_value *args, tj_meta *outs) { return meta_forward(&MSE, args, outs); }
tj_status tj_kernel_mse_loss(const tj_value *args, tj_tensor *const *outs) { return kernel_forward(&MSE, args, outs); }
tj_status tj_meta_mse_loss_backward(const tj_value *args, tj_meta *outs) { return meta_backward(&MSE, args, outs); }
tj_status tj_kernel_mse_loss_backward(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_backward(&MSE, args, outs);
}
