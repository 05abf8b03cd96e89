/* SGD and AdamW (include/tjit/optim.h), written as PyTorch 1.13's
 * single-tensor code paths, operator for operator, so that float32 results
 * round the same way. Every update runs in a scope with grad mode off. */
#include <math.h>
#include <string.h>

#include "internal.h"

/* ---- options ---- */

tj_sgd_options tj_sgd_defaults(double lr) { return (tj_sgd_options){.lr = lr}; }

tj_adamw_options tj_adamw_defaults(void)
{
    return (tj_adamw_options){.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 1e-2};
}

static tj_status check_sgd(const tj_sgd_options *o)
{
    if (!o) return tj_error(TJ_ERR_INVALID_ARGUMENT, "sgd: NULL options");
    if (!(o->lr >= 0)) return tj_error(TJ_ERR_INVALID_ARGUMENT, "sgd: invalid learning rate %g", o->lr);
    if (!(o->momentum >= 0)) return tj_error(TJ_ERR_INVALID_ARGUMENT, "sgd: invalid momentum value %g", o->momentum);
    if (!(o->weight_decay >= 0))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "sgd: invalid weight_decay value %g", o->weight_decay);
    if (o->nesterov && (o->momentum <= 0 || o->dampening != 0))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "sgd: Nesterov momentum requires a momentum and zero dampening");
    return TJ_OK;
}

static tj_status check_adamw(const tj_adamw_options *o)
{
    if (!o) return tj_error(TJ_ERR_INVALID_ARGUMENT, "adamw: NULL options");
    if (!(o->lr >= 0)) return tj_error(TJ_ERR_INVALID_ARGUMENT, "adamw: invalid learning rate %g", o->lr);
    if (!(o->eps >= 0)) return tj_error(TJ_ERR_INVALID_ARGUMENT, "adamw: invalid epsilon value %g", o->eps);
    if (!(o->beta1 >= 0 && o->beta1 < 1))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "adamw: invalid beta parameter at index 0: %g", o->beta1);
    if (!(o->beta2 >= 0 && o->beta2 < 1))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "adamw: invalid beta parameter at index 1: %g", o->beta2);
    if (!(o->weight_decay >= 0))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "adamw: invalid weight_decay value %g", o->weight_decay);
    return TJ_OK;
}

/* ---- argument checks before any update ----
 * Every parameter's gradient and state is checked before the first
 * parameter is touched: updating parameters one by one, a mismatch at
 * parameter i used to leave parameters 0..i-1 (and their step counts and
 * new momentum buffers) updated behind the error (hostile tests). */

static bool same_shape(const tj_tensor *a, const tj_tensor *b)
{
    return a->ndim == b->ndim && !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim);
}

/* t (named `what` of parameter i) is a float tensor of param's shape. */
static tj_status check_like_param(const char *who, const char *what, int i, const tj_tensor *t, const tj_tensor *param)
{
    char a[128], b[128];
    if (!t) return tj_error_null("%s: %s %d is NULL", who, what, i);
    if (!tj_dtype_is_float(t->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: %s %d is %s; parameters, gradients and state must be float32 or float64",
                        who, what, i, tj_dtype_name(t->dtype));
    if (!same_shape(t, param))
        return tj_error(TJ_ERR_SHAPE, "%s: %s %d has shape %s, its parameter %s", who, what, i,
                        tj_shape_str(t->ndim, t->shape, a, sizeof a), tj_shape_str(param->ndim, param->shape, b, sizeof b));
    return TJ_OK;
}

/* Parameter i and its gradient (when it has one). */
static tj_status check_param(const char *who, int i, const tj_tensor *param, const tj_tensor *grad)
{
    if (!grad) return TJ_OK;
    if (!param) return tj_error_null("%s: parameter %d is NULL", who, i);
    tj_status st = check_like_param(who, "parameter", i, param, param);
    return st != TJ_OK ? st : check_like_param(who, "gradient", i, grad, param);
}

/* Runs an update body in a scope with grad mode off. */
typedef tj_status (*update_fn)(const void *o, void *lists, int i);

static tj_status run_update(update_fn fn, const void *o, void *lists, int n)
{
    bool prev = tj_no_grad_begin();
    tj_scope *s = tj_scope_begin();
    tj_status st = s ? TJ_OK : tj_last_status();
    for (int i = 0; i < n && st == TJ_OK; i++) st = fn(o, lists, i);
    if (s) tj_scope_end(s);
    tj_no_grad_end(prev);
    return st;
}

#define F(x) tj_v_float(x)

/* ---- SGD ---- */

typedef struct sgd_lists {
    tj_tensor *const *params, *const *grads;
    tj_tensor **bufs;
} sgd_lists;

/* With a momentum buffer of one dtype with its parameter and gradient: the
 * whole update as one _fused_sgd_step (one pass instead of three or more,
 * rounded as the operators below), its results copied back in place. Not
 * for a buffer whose bytes may overlap its parameter's or gradient's (the
 * same tensor included): the operators below then read what buf.mul_
 * wrote, as PyTorch's do, where the fused step reads every input first.
 * Buffers carved from one flat storage next to each other (or next to the
 * parameters) share no byte with them and keep the fused step. Nor for a
 * buffer or parameter whose elements may share bytes (a broadcast view):
 * buf.mul_ refuses it before anything is written, where the fused step's
 * copies back would have updated the parameter before refusing the buffer. */
static tj_status sgd_fused(const tj_sgd_options *o, tj_tensor *param, tj_tensor *grad, tj_tensor *buf)
{
    tj_tensor *r[2];
    if (tj__fused_sgd_step(param, grad, buf, o->lr, o->momentum, o->dampening, o->weight_decay, o->nesterov,
                           o->maximize, r) != TJ_OK ||
        !tj_copy_(param, r[0]) || !tj_copy_(buf, r[1]))
        return tj_last_status();
    return TJ_OK;
}

static tj_status sgd_one(const void *opts, void *lists, int i)
{
    const tj_sgd_options *o = opts;
    sgd_lists *l = lists;
    tj_tensor *param = l->params[i], *d_p = l->grads[i];
    if (!d_p) return TJ_OK;
    tj_tensor *old_buf = o->momentum != 0 ? l->bufs[i] : NULL;
    if (old_buf && d_p->dtype == param->dtype && old_buf->dtype == param->dtype &&
        tj_overlap_status(old_buf, param) == TJ_OVERLAP_NONE && tj_overlap_status(old_buf, d_p) == TJ_OVERLAP_NONE &&
        !tj_may_self_overlap(old_buf) && !tj_may_self_overlap(param))
        return sgd_fused(o, param, d_p, old_buf);
    if (o->maximize) d_p = tj_neg(d_p);
    if (o->weight_decay != 0) d_p = tj_add_alpha(d_p, param, F(o->weight_decay));
    if (o->momentum != 0) {
        tj_tensor *buf = l->bufs[i];
        if (!buf) {
            buf = tj_clone(d_p);
            if (!buf) return tj_last_status();
            /* the new state outlives this update's scope */
            l->bufs[i] = tj_scope_keep(buf);
        } else if (!tj_add_(tj_mul_scalar_(buf, F(o->momentum)), d_p, F(1 - o->dampening))) {
            return tj_last_status();
        }
        d_p = o->nesterov ? tj_add_alpha(d_p, buf, F(o->momentum)) : buf;
    }
    return tj_add_(param, d_p, F(-o->lr)) ? TJ_OK : tj_last_status();
}

tj_status tj_sgd_update(const tj_sgd_options *o, tj_tensor *const *params, tj_tensor *const *grads,
                        tj_tensor **momentum_buffers, int n)
{
    tj_status st = check_sgd(o);
    if (st != TJ_OK) return st;
    if (n < 0 || (n && (!params || !grads || (o->momentum != 0 && !momentum_buffers))))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_sgd_update: NULL params, grads or momentum buffers");
    for (int i = 0; i < n; i++) {
        if ((st = check_param("tj_sgd_update", i, params[i], grads[i])) != TJ_OK) return st;
        if (grads[i] && o->momentum != 0 && momentum_buffers[i] &&
            (st = check_like_param("tj_sgd_update", "momentum buffer", i, momentum_buffers[i], params[i])) != TJ_OK)
            return st;
    }
    sgd_lists l = {params, grads, momentum_buffers};
    return run_update(sgd_one, o, &l, n);
}

/* ---- AdamW ---- */

typedef struct adamw_lists {
    tj_tensor *const *params, *const *grads, *const *exp_avgs, *const *exp_avg_sqs, *const *max_sqs, *const *steps;
} adamw_lists;

/* capturable: the whole update as one _fused_adamw_step (which reads the
 * incremented count from its tensor), its results copied back in place. */
static tj_status adamw_fused(const tj_adamw_options *o, const adamw_lists *l, int i, tj_tensor *grad)
{
    tj_tensor *max_sq = o->amsgrad ? l->max_sqs[i] : NULL, *r[4];
    if (tj__fused_adamw_step(l->params[i], grad, l->exp_avgs[i], l->exp_avg_sqs[i], max_sq, l->steps[i], o->lr,
                             o->beta1, o->beta2, o->weight_decay, o->eps, r) != TJ_OK ||
        !tj_copy_(l->params[i], r[0]) || !tj_copy_(l->exp_avgs[i], r[1]) || !tj_copy_(l->exp_avg_sqs[i], r[2]) ||
        (max_sq && !tj_copy_(max_sq, r[3])))
        return tj_last_status();
    return TJ_OK;
}

static tj_status adamw_one(const void *opts, void *lists, int i)
{
    const tj_adamw_options *o = opts;
    adamw_lists *l = lists;
    tj_tensor *param = l->params[i], *grad = l->grads[i], *exp_avg = l->exp_avgs[i], *exp_avg_sq = l->exp_avg_sqs[i];
    tj_tensor *step_t = l->steps[i];
    if (!grad) return TJ_OK;
    if (o->maximize) grad = tj_neg(grad);
    if (!tj_add_scalar_(step_t, tj_v_int(1), tj_v_int(1))) return tj_last_status();
    if (o->capturable) return adamw_fused(o, l, i, grad);
    if (step_t->fake)
        return tj_error(TJ_ERR_UNSUPPORTED, "tj_adamw_update: the step count of a fake tensor is unknown (use "
                                            "capturable to trace the update in fake mode)");
    if (!tj_mul_scalar_(param, F(1 - o->lr * o->weight_decay)) ||
        !tj_add_(tj_mul_scalar_(exp_avg, F(o->beta1)), grad, F(1 - o->beta1)) ||
        !tj_addcmul_(tj_mul_scalar_(exp_avg_sq, F(o->beta2)), grad, grad, F(1 - o->beta2)))
        return tj_last_status();
    tj_tensor *sq = exp_avg_sq;
    if (o->amsgrad) {
        sq = l->max_sqs[i];
        if (!tj_copy_(sq, tj_maximum(sq, exp_avg_sq))) return tj_last_status();
    }
    double step = tj_tensor_item_at(step_t, 0);
    double step_size = o->lr / (1 - pow(o->beta1, step));
    double bc2_sqrt = sqrt(1 - pow(o->beta2, step));
    tj_tensor *denom = tj_add_scalar_(tj_div_scalar(tj_sqrt(sq), F(bc2_sqrt)), F(o->eps), tj_v_int(1));
    return tj_addcdiv_(param, exp_avg, denom, F(-step_size)) ? TJ_OK : tj_last_status();
}

tj_status tj_adamw_update(const tj_adamw_options *o, tj_tensor *const *params, tj_tensor *const *grads,
                          tj_tensor *const *exp_avgs, tj_tensor *const *exp_avg_sqs,
                          tj_tensor *const *max_exp_avg_sqs, tj_tensor *const *steps, int n)
{
    tj_status st = check_adamw(o);
    if (st != TJ_OK) return st;
    /* the operator path reads the count as a number, which a trace would
     * bake into the graph: every replay would use the traced step's bias
     * corrections (torch's make_fx refuses such reads, .item(), likewise) */
    if (!o->capturable && tj_mode_active(TJ_MAKE_FX_MODE))
        return tj_error(TJ_ERR_UNSUPPORTED, "tj_adamw_update: called inside tj_make_fx without capturable: the step "
                                            "count would be baked into the graph as a constant; set capturable to "
                                            "trace the update with the count as a graph value");
    if (n < 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_adamw_update: negative parameter count %d", n);
    const char *null_list = !n                                 ? NULL
                            : !params                          ? "params"
                            : !grads                           ? "grads"
                            : !exp_avgs                        ? "exp_avgs"
                            : !exp_avg_sqs                     ? "exp_avg_sqs"
                            : !steps                           ? "steps"
                            : o->amsgrad && !max_exp_avg_sqs   ? "max_exp_avg_sqs (amsgrad)"
                                                               : NULL;
    if (null_list) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_adamw_update: the %s list is NULL", null_list);
    for (int i = 0; i < n; i++) {
        if (grads[i] && (!exp_avgs[i] || !exp_avg_sqs[i] || !steps[i] || (o->amsgrad && !max_exp_avg_sqs[i])))
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_adamw_update: missing state for parameter %d", i);
        if (!grads[i]) continue;
        const char *who = "tj_adamw_update";
        if ((st = check_param(who, i, params[i], grads[i])) != TJ_OK ||
            (st = check_like_param(who, "exp_avg", i, exp_avgs[i], params[i])) != TJ_OK ||
            (st = check_like_param(who, "exp_avg_sq", i, exp_avg_sqs[i], params[i])) != TJ_OK ||
            (o->amsgrad && (st = check_like_param(who, "max_exp_avg_sq", i, max_exp_avg_sqs[i], params[i])) != TJ_OK))
            return st;
        if (!tj_dtype_is_float(steps[i]->dtype))
            return tj_error(TJ_ERR_DTYPE, "tj_adamw_update: step %d must be a float32 or float64 count, got %s", i,
                            tj_dtype_name(steps[i]->dtype));
        if (steps[i]->numel != 1) {
            char s1[64];
            return tj_error(TJ_ERR_SHAPE, "tj_adamw_update: step %d must hold one count, got shape %s", i,
                            tj_shape_str(steps[i]->ndim, steps[i]->shape, s1, sizeof s1));
        }
    }
    adamw_lists l = {params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps};
    return run_update(adamw_one, o, &l, n);
}

/* ---- optimiser objects ---- */

enum { KIND_SGD, KIND_ADAMW };
enum { S_MOMENTUM = 0, S_STEP = 0, S_EXP_AVG, S_EXP_AVG_SQ, S_MAX_EXP_AVG_SQ, N_STATE };

struct tj_optimizer {
    int kind;
    int n;
    tj_tensor **params; /* retained */
    tj_tensor **state;  /* n * N_STATE, retained, NULL until created */
    tj_sgd_options sgd;
    tj_adamw_options adamw;
};

static size_t optimizer_bytes(int n) { return sizeof(tj_optimizer) + sizeof(tj_tensor *) * (size_t)n * (1 + N_STATE); }

static tj_optimizer *optimizer_new(int kind, tj_tensor *const *params, int n)
{
    if (n < 0 || (n && !params)) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "optimizer: NULL parameter list");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (!params[i]) {
            tj_error_null("optimizer: parameter %d is NULL", i);
            return NULL;
        }
        for (int j = 0; j < i; j++)
            if (params[j] == params[i]) {
                tj_error(TJ_ERR_INVALID_ARGUMENT, "optimizer: parameter %d is parameter %d again (torch.optim warns that "
                         "a repeated parameter will be an error: each step would update it twice)", i, j);
                return NULL;
            }
    }
    tj_optimizer *opt = tj_alloc(optimizer_bytes(n));
    if (!opt) {
        tj_oom("optimizer", optimizer_bytes(n));
        return NULL;
    }
    memset(opt, 0, optimizer_bytes(n));
    opt->kind = kind;
    opt->n = n;
    opt->params = (tj_tensor **)(opt + 1);
    opt->state = opt->params + n;
    for (int i = 0; i < n; i++) opt->params[i] = tj_tensor_retain(params[i]);
    return opt;
}

tj_optimizer *tj_sgd_new(tj_tensor *const *params, int n, const tj_sgd_options *o)
{
    if (check_sgd(o) != TJ_OK) return NULL;
    tj_optimizer *opt = optimizer_new(KIND_SGD, params, n);
    if (opt) opt->sgd = *o;
    return opt;
}

tj_optimizer *tj_adamw_new(tj_tensor *const *params, int n, const tj_adamw_options *o)
{
    if (check_adamw(o) != TJ_OK) return NULL;
    tj_optimizer *opt = optimizer_new(KIND_ADAMW, params, n);
    if (opt) opt->adamw = *o;
    return opt;
}

void tj_optimizer_free(tj_optimizer *opt)
{
    if (!opt) return;
    for (int i = 0; i < opt->n * (1 + N_STATE); i++) tj_tensor_release(opt->params[i]);
    tj_free(opt, optimizer_bytes(opt->n));
}

static tj_tensor **state_of(tj_optimizer *opt, int i) { return &opt->state[i * N_STATE]; }

/* AdamW's lazy state: step 0, zero moments (PyTorch's `if len(state) == 0`). */
static tj_status adamw_init_state(tj_optimizer *opt, int i)
{
    tj_tensor **s = state_of(opt, i), *p = opt->params[i];
    if (s[S_STEP]) return TJ_OK;
    s[S_STEP] = tj_tensor_retain(tj_zeros(NULL, 0, TJ_FLOAT32));
    s[S_EXP_AVG] = tj_tensor_retain(tj_zeros(p->shape, p->ndim, p->dtype));
    s[S_EXP_AVG_SQ] = tj_tensor_retain(tj_zeros(p->shape, p->ndim, p->dtype));
    if (opt->adamw.amsgrad) s[S_MAX_EXP_AVG_SQ] = tj_tensor_retain(tj_zeros(p->shape, p->ndim, p->dtype));
    bool ok = s[S_STEP] && s[S_EXP_AVG] && s[S_EXP_AVG_SQ] && (!opt->adamw.amsgrad || s[S_MAX_EXP_AVG_SQ]);
    return ok ? TJ_OK : tj_last_status();
}

tj_status tj_optimizer_step(tj_optimizer *opt)
{
    if (!opt) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_optimizer_step: NULL optimizer");
    /* its parameters and state are its own tensors, not the trace's values:
     * a fake trace would record no update, a real one freeze its state */
    if (tj_mode_active(TJ_MAKE_FX_MODE))
        return tj_error(TJ_ERR_UNSUPPORTED, "tj_optimizer_step: called inside tj_make_fx: the optimiser updates its "
                        "own parameters and state, not the traced function's inputs (a fake trace would record no "
                        "update, a real one would bake its state into the graph); call tj_sgd_update or "
                        "tj_adamw_update on the traced inputs");
    int n = opt->n;
    size_t bytes = sizeof(tj_tensor *) * (size_t)(n ? n : 1) * (1 + N_STATE);
    tj_tensor **grads = tj_alloc(bytes);
    if (!grads) return tj_oom("tj_optimizer_step", bytes);
    tj_tensor **cols = grads + n; /* state, column-major: cols[k * n + i] */
    tj_scope *s = tj_scope_begin();
    tj_status st = s ? TJ_OK : tj_last_status();
    for (int i = 0; i < n && st == TJ_OK; i++) {
        grads[i] = tj_tensor_grad(opt->params[i]);
        if (grads[i] && opt->kind == KIND_ADAMW) st = adamw_init_state(opt, i);
        for (int k = 0; k < N_STATE; k++) cols[k * n + i] = state_of(opt, i)[k];
    }
    if (st == TJ_OK && opt->kind == KIND_SGD) {
        st = tj_sgd_update(&opt->sgd, opt->params, grads, cols + S_MOMENTUM * n, n);
        /* buffers created by this first step join the state */
        for (int i = 0; i < n && st == TJ_OK; i++)
            if (!state_of(opt, i)[S_MOMENTUM])
                state_of(opt, i)[S_MOMENTUM] = tj_tensor_retain(cols[S_MOMENTUM * n + i]);
    } else if (st == TJ_OK) {
        st = tj_adamw_update(&opt->adamw, opt->params, grads, cols + S_EXP_AVG * n, cols + S_EXP_AVG_SQ * n,
                             cols + S_MAX_EXP_AVG_SQ * n, cols + S_STEP * n, n);
    }
    if (s) tj_scope_end(s);
    tj_free(grads, bytes);
    return st;
}

tj_status tj_optimizer_zero_grad(tj_optimizer *opt, bool set_to_none)
{
    if (!opt) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_optimizer_zero_grad: NULL optimizer");
    bool prev = tj_no_grad_begin();
    tj_status st = TJ_OK;
    for (int i = 0; i < opt->n && st == TJ_OK; i++) {
        tj_tensor *g = tj_tensor_grad(opt->params[i]);
        if (!g) continue;
        if (set_to_none) st = tj_tensor_set_grad(opt->params[i], NULL);
        else if (!tj_zero_(g)) st = tj_last_status();
    }
    tj_no_grad_end(prev);
    return st;
}

void tj_optimizer_set_lr(tj_optimizer *opt, double lr)
{
    if (!opt) return;
    if (opt->kind == KIND_SGD) opt->sgd.lr = lr;
    else opt->adamw.lr = lr;
}

tj_tensor *tj_optimizer_state(const tj_optimizer *opt, int i, const char *name)
{
    if (!opt || !name || i < 0 || i >= opt->n) return NULL;
    tj_tensor *const *s = &opt->state[i * N_STATE];
    if (opt->kind == KIND_SGD) return strcmp(name, "momentum_buffer") ? NULL : s[S_MOMENTUM];
    static const char *names[N_STATE] = {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
    for (int k = 0; k < N_STATE; k++)
        if (!strcmp(name, names[k])) return s[k];
    return NULL;
}
