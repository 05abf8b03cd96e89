/* aten::_cdist_forward, aten::_cdist_backward and aten::_euclidean_dist
 * (torch.cdist; the last is what it records for p = 2 past 25 rows): checks as
 * PyTorch 1.13's Distance.cpp, numerics as its CPU kernels
 * (DistanceOpsKernel.cpp): each distance accumulated in the input dtype
 * over the columns in order; p = 2 with compute_mode 1, or with mode None /
 * 0 and more than 25 rows on a side, takes ATen's matrix-product path
 * (_euclidean_dist: sqrt(clamp_min(|a|^2 + |b|^2 - 2 a.b, 0)), faster in
 * torch and less exact: identical rows may get a distance of a few ulps of
 * the norms). The gradient of a distance is computed as ATen's backward
 * kernel does, from the forward's result. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "contig.h"
#include "op_nn.h"

#define FORWARD "aten::_cdist_forward"
#define BACKWARD "aten::_cdist_backward"
#define EUCLIDEAN "aten::_euclidean_dist"

/* Where the rows of x1 [*B1, r1, c] and x2 [*B2, r2, c] meet: the broadcast
 * batch shape and the strides of each over it. */
typedef struct pair_geom {
    int nb;
    int64_t batch[TJ_MAX_DIMS], s1[TJ_MAX_DIMS], s2[TJ_MAX_DIMS];
    int64_t nbatch, r1, r2, c;
} pair_geom;

static tj_status pair_check(const char *op, const tj_tensor *x1, const tj_tensor *x2, pair_geom *g)
{
    char a[128], b[128];
    if (x1->ndim < 2 || x2->ndim < 2)
        return tj_error(TJ_ERR_SHAPE, "%s: cdist only supports at least 2D tensors, X%d got: %dD (x1 %s, x2 %s)", op,
                        x1->ndim < 2 ? 1 : 2, x1->ndim < 2 ? x1->ndim : x2->ndim,
                        tj_shape_str(x1->ndim, x1->shape, a, sizeof a), tj_shape_str(x2->ndim, x2->shape, b, sizeof b));
    if (x1->shape[x1->ndim - 1] != x2->shape[x2->ndim - 1])
        return tj_error(TJ_ERR_SHAPE, "%s: X1 and X2 must have the same number of columns. X1: %" PRId64 " X2: %" PRId64
                        " (x1 %s, x2 %s)", op, x1->shape[x1->ndim - 1], x2->shape[x2->ndim - 1],
                        tj_shape_str(x1->ndim, x1->shape, a, sizeof a), tj_shape_str(x2->ndim, x2->shape, b, sizeof b));
    if (!tj_dtype_is_float(x1->dtype) || !tj_dtype_is_float(x2->dtype))
        return tj_error(TJ_ERR_DTYPE, "%s: cdist only supports floating-point dtypes, X%d got: %s", op,
                        tj_dtype_is_float(x1->dtype) ? 2 : 1,
                        tj_dtype_name(tj_dtype_is_float(x1->dtype) ? x2->dtype : x1->dtype));
    if (x1->dtype != x2->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: X1 (%s) and X2 (%s) must have the same dtype", op, tj_dtype_name(x1->dtype),
                        tj_dtype_name(x2->dtype));
    tj_status st = tj_broadcast_shapes(op, x1->ndim - 2, x1->shape, x2->ndim - 2, x2->shape, &g->nb, g->batch);
    if (st != TJ_OK) return st;
    if (g->nb > TJ_MAX_DIMS - 2)
        return tj_error(TJ_ERR_SHAPE, "%s: batch dims of x1 %s and x2 %s broadcast to more than %d dims", op,
                        tj_shape_str(x1->ndim, x1->shape, a, sizeof a), tj_shape_str(x2->ndim, x2->shape, b, sizeof b),
                        TJ_MAX_DIMS - 2);
    g->nbatch = 1;
    for (int d = 0; d < g->nb; d++) g->nbatch *= g->batch[d]; /* within the output's element count */
    /* the batch strides of each over the broadcast batch (0 where broadcast) */
    for (int d = 0; d < g->nb; d++) {
        int d1 = d - (g->nb - (x1->ndim - 2)), d2 = d - (g->nb - (x2->ndim - 2));
        g->s1[d] = d1 >= 0 && x1->shape[d1] != 1 ? x1->strides[d1] : 0;
        g->s2[d] = d2 >= 0 && x2->shape[d2] != 1 ? x2->strides[d2] : 0;
    }
    g->r1 = x1->shape[x1->ndim - 2], g->r2 = x2->shape[x2->ndim - 2], g->c = x1->shape[x1->ndim - 1];
    return TJ_OK;
}

/* The element offsets of batch item b in x1 and x2. */
static void batch_offsets(const pair_geom *g, int64_t b, int64_t *o1, int64_t *o2)
{
    *o1 = *o2 = 0;
    for (int d = g->nb - 1; d >= 0; d--) {
        int64_t i = b % g->batch[d];
        b /= g->batch[d];
        *o1 += i * g->s1[d];
        *o2 += i * g->s2[d];
    }
}

static void pair_meta(const pair_geom *g, tj_dtype dt, int64_t cols, tj_meta *out)
{
    out->dtype = dt;
    out->ndim = g->nb + 2;
    memcpy(out->shape, g->batch, sizeof(int64_t) * (size_t)g->nb);
    out->shape[g->nb] = g->r1;
    out->shape[g->nb + 1] = cols;
}

static tj_status check_p(const char *op, double p)
{
    if (p >= 0) return TJ_OK; /* +inf included */
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: cdist only supports non-negative p values, got p = %g", op, p);
}

tj_status tj_meta__cdist_forward(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x1 = args[0].u.t, *x2 = args[1].u.t;
    pair_geom g;
    tj_status st = pair_check(FORWARD, x1, x2, &g);
    if (st != TJ_OK) return st;
    if ((st = check_p(FORWARD, tj_value_as_double(&args[2]))) != TJ_OK) return st;
    if (args[3].kind == TJ_V_INT && (args[3].u.i < 0 || args[3].u.i > 2))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, FORWARD ": possible modes: 0, 1, 2, but was: %" PRId64, args[3].u.i);
    pair_meta(&g, x1->dtype, g.r2, &outs[0]);
    return TJ_OK;
}

/* One distance per (batch, i, j), as ATen's run_parallel_cdist: the map of
 * each |a_k - b_k| reduced over k in order, then finished (general p in
 * double, as ATen's std::pow(agg, 1.0 / p)); or, on the
 * matrix-product path, ATen's _euclidean_dist in the same order (the
 * -2 a_k b_k products, then |a|^2, then |b|^2, each norm a sum of squares). */
#define CDIST_LOOP(T, POW, SQRT, FABS)                                                                               \
    static void cdist_##T(const pair_geom *g, const T *x1, const int64_t *st1, const T *x2, const int64_t *st2,     \
                          double pd, bool mm, T *out)                                                               \
    {                                                                                                               \
        T p = (T)pd;                                                                                                \
        for (int64_t b = 0; b < g->nbatch; b++) {                                                                   \
            int64_t o1, o2;                                                                                         \
            batch_offsets(g, b, &o1, &o2);                                                                          \
            for (int64_t i = 0; i < g->r1; i++) {                                                                   \
                const T *a = x1 + o1 + i * st1[0];                                                                  \
                T na = 0;                                                                                           \
                for (int64_t k = 0; mm && k < g->c; k++) na += a[k * st1[1]] * a[k * st1[1]];                       \
                for (int64_t j = 0; j < g->r2; j++, out++) {                                                        \
                    const T *bb = x2 + o2 + j * st2[0];                                                             \
                    T agg = 0;                                                                                      \
                    if (mm) {                                                                                       \
                        T nb = 0;                                                                                   \
                        for (int64_t k = 0; k < g->c; k++) {                                                        \
                            T v = bb[k * st2[1]];                                                                   \
                            agg += (a[k * st1[1]] * (T)-2) * v;                                                     \
                            nb += v * v;                                                                            \
                        }                                                                                           \
                        agg = agg + na + nb;                                                                        \
                        *out = SQRT(agg > 0 ? agg : 0);                                                             \
                        continue;                                                                                   \
                    }                                                                                               \
                    for (int64_t k = 0; k < g->c; k++) {                                                            \
                        T d = FABS(a[k * st1[1]] - bb[k * st2[1]]);                                                 \
                        if (p == 0) agg += d != 0 ? (T)1 : (T)0;                                                    \
                        else if (p == 1) agg += d;                                                                  \
                        else if (p == 2) agg += d * d;                                                              \
                        else if (isinf(p)) agg = agg < d ? d : agg;                                                 \
                        else agg += POW(d, p);                                                                      \
                    }                                                                                               \
                    *out = p == 2 ? SQRT(agg) : (p == 0 || p == 1 || isinf(p)) ? agg : (T)pow(agg, 1.0 / p);        \
                }                                                                                               \
            }                                                                                                       \
        }                                                                                                           \
    }
CDIST_LOOP(float, powf, sqrtf, fabsf)
CDIST_LOOP(double, pow, sqrt, fabs)

tj_status tj_kernel__cdist_forward(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x1 = args[0].u.t, *x2 = args[1].u.t;
    pair_geom g;
    tj_status st = pair_check(FORWARD, x1, x2, &g);
    if (st != TJ_OK) return st;
    double p = tj_value_as_double(&args[2]);
    int64_t mode = args[3].kind == TJ_V_INT ? args[3].u.i : 0;
    bool mm = p == 2 && (mode == 1 || (mode == 0 && (g.r1 > 25 || g.r2 > 25)));
    tj_tensor *out = outs[0];
    if (out->numel == 0) return TJ_OK;
    const int64_t *st1 = x1->strides + x1->ndim - 2, *st2 = x2->strides + x2->ndim - 2;
    if (x1->dtype == TJ_FLOAT32)
        cdist_float(&g, (const float *)tj_tensor_ptr(x1), st1, (const float *)tj_tensor_ptr(x2), st2, p, mm,
                    (float *)tj_tensor_ptr(out));
    else
        cdist_double(&g, (const double *)tj_tensor_ptr(x1), st1, (const double *)tj_tensor_ptr(x2), st2, p, mm,
                     (double *)tj_tensor_ptr(out));
    return TJ_OK;
}

/* _euclidean_dist: ATen's matrix-product formula of p = 2, the path
 * _cdist_forward takes past 25 rows (torch.cdist calls it directly there) */
tj_status tj_meta__euclidean_dist(const tj_value *args, tj_meta *outs)
{
    pair_geom g;
    tj_status st = pair_check(EUCLIDEAN, args[0].u.t, args[1].u.t, &g);
    if (st != TJ_OK) return st;
    pair_meta(&g, args[0].u.t->dtype, g.r2, &outs[0]);
    return TJ_OK;
}

tj_status tj_kernel__euclidean_dist(const tj_value *args, tj_tensor *const *outs)
{
    const tj_value a[4] = {args[0], args[1], tj_v_float(2), tj_v_int(1)};
    return tj_error_renamed(EUCLIDEAN, FORWARD, tj_kernel__cdist_forward(a, outs));
}

/* grad and cdist must be the forward's result shape, [*B, r1, r2]. */
static tj_status check_result_shaped(const char *what, const tj_tensor *t, const pair_geom *g, tj_dtype dt)
{
    tj_meta want = {0};
    pair_meta(g, dt, g->r2, &want);
    char a[128], b[128];
    if (t->ndim != want.ndim || memcmp(t->shape, want.shape, sizeof(int64_t) * (size_t)want.ndim))
        return tj_error(TJ_ERR_SHAPE, BACKWARD ": %s %s is not the shape of the distances, %s", what,
                        tj_shape_str(t->ndim, t->shape, a, sizeof a), tj_shape_str(want.ndim, want.shape, b, sizeof b));
    if (t->dtype != dt)
        return tj_error(TJ_ERR_DTYPE, BACKWARD ": %s is %s, x1 %s", what, tj_dtype_name(t->dtype), tj_dtype_name(dt));
    return TJ_OK;
}

tj_status tj_meta__cdist_backward(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *grad = args[0].u.t, *x1 = args[1].u.t, *x2 = args[2].u.t, *dist = args[4].u.t;
    pair_geom g;
    tj_status st = pair_check(BACKWARD, x1, x2, &g);
    if (st != TJ_OK || (st = check_p(BACKWARD, tj_value_as_double(&args[3]))) != TJ_OK ||
        (st = check_result_shaped("grad", grad, &g, x1->dtype)) != TJ_OK ||
        (st = check_result_shaped("cdist", dist, &g, x1->dtype)) != TJ_OK)
        return st;
    pair_meta(&g, x1->dtype, g.c, &outs[0]);
    return TJ_OK;
}

/* d/da_k of one distance times its gradient, as ATen's backward kernels
 * (p 1: odist, p < 2: lttdist, 2: tdist, inf: idist, else pdist), each
 * written in ATen's order of operations; p 0 gives 0. */
#define CDIST_GRAD(T, POW, FABS, CEIL)                                                                          \
    static inline T term_##T(T diff, T grad, T dist, T p)                                                      \
    {                                                                                                          \
        T sign = (T)((0 < diff) - (diff < 0));                                                                 \
        if (p == 0) return 0;                                                                                  \
        if (p == 1) return grad * sign;                                                                        \
        if (p < 2) {                                                                                           \
            if (diff == 0 && p < 1) return 0;                                                                  \
            return dist == 0 ? (T)0 : sign * POW(FABS(diff), p - 1) * grad / POW(dist, p - 1);                 \
        }                                                                                                      \
        if (p == 2) return dist == 0 ? (T)0 : grad * diff / dist;                                              \
        if (isinf(p)) {                                                                                        \
            T c = CEIL(FABS(FABS(diff) - dist));                                                               \
            return grad * sign * ((T)1 - (c < (T)1 ? c : (T)1));                                               \
        }                                                                                                      \
        return dist == 0 ? (T)0 : diff * POW(FABS(diff), p - 2) * grad / POW(dist, p - 1);                    \
    }                                                                                                          \
    static void cdist_grad_##T(const pair_geom *g, const T *x1, const int64_t *st1, const T *x2,               \
                               const int64_t *st2, const T *grad, const T *dist, double pd, T *out)            \
    {                                                                                                          \
        T p = (T)pd;                                                                                           \
        for (int64_t b = 0; b < g->nbatch; b++) {                                                              \
            int64_t o1, o2;                                                                                    \
            batch_offsets(g, b, &o1, &o2);                                                                     \
            for (int64_t i = 0; i < g->r1; i++, out += g->c) {                                                 \
                const T *a = x1 + o1 + i * st1[0];                                                             \
                const T *gr = grad + (b * g->r1 + i) * g->r2, *dr = dist + (b * g->r1 + i) * g->r2;            \
                for (int64_t k = 0; k < g->c; k++) {                                                           \
                    T s = 0, ak = a[k * st1[1]];                                                               \
                    for (int64_t j = 0; j < g->r2; j++)                                                        \
                        s = s + term_##T(ak - x2[o2 + j * st2[0] + k * st2[1]], gr[j], dr[j], p);              \
                    out[k] = s;                                                                                \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    }
CDIST_GRAD(float, powf, fabsf, ceilf)
CDIST_GRAD(double, pow, fabs, ceil)

tj_status tj_kernel__cdist_backward(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x1 = args[1].u.t, *x2 = args[2].u.t;
    pair_geom g;
    tj_status st = pair_check(BACKWARD, x1, x2, &g);
    if (st != TJ_OK) return st;
    tj_tensor *out = outs[0];
    if (out->numel == 0) return TJ_OK;
    tj_contig grad = {0}, dist = {0};
    if ((st = tj_contig_get(&grad, args[0].u.t)) != TJ_OK || (st = tj_contig_get(&dist, args[4].u.t)) != TJ_OK) {
        tj_contig_release(&grad);
        return st;
    }
    double p = tj_value_as_double(&args[3]);
    const int64_t *st1 = x1->strides + x1->ndim - 2, *st2 = x2->strides + x2->ndim - 2;
    if (x1->dtype == TJ_FLOAT32)
        cdist_grad_float(&g, (const float *)tj_tensor_ptr(x1), st1, (const float *)tj_tensor_ptr(x2), st2,
                         (const float *)grad.data, (const float *)dist.data, p, (float *)tj_tensor_ptr(out));
    else
        cdist_grad_double(&g, (const double *)tj_tensor_ptr(x1), st1, (const double *)tj_tensor_ptr(x2), st2,
                          (const double *)grad.data, (const double *)dist.data, p, (double *)tj_tensor_ptr(out));
    tj_contig_release(&grad);
    tj_contig_release(&dist);
    return TJ_OK;
}
