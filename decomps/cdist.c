/* Decompositions of torch.cdist's operators. _euclidean_dist is
 * torch._decomp 1.13's; _cdist_forward and _cdist_backward (which 1.13 does
 * not decompose) are ATen's CPU kernels written with pointwise operators
 * over the differences x1[..., i, None, :] - x2[..., None, j, :] ([*B, r1,
 * r2, c]) and a reduction: the same values, summed in another order (sum
 * accumulates in float64). p = 2 on the matrix-product path (ATen's choice,
 * see runtime/op_cdist.c) is _euclidean_dist. The shape functions check the
 * arguments first. */
#include <math.h>

#include "util.h"

/* [-2 x1, |x1|^2, 1] @ [x2, 1, |x2|^2]^T, clamped at 0, square-rooted */
static tj_status euclidean_dist(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(_euclidean_dist, args, m);
    tj_tensor *x1 = args[0].u.t, *x2 = args[1].u.t;
    const int64_t last = -1;
    tj_tensor *n1 = tj_sum_dim(tj_pow_scalar(x1, tj_v_int(2)), &last, 1, true, -1);
    tj_tensor *n2 = tj_sum_dim(tj_pow_scalar(x2, tj_v_int(2)), &last, 1, true, -1);
    tj_tensor *a[3] = {tj_mul_scalar(x1, tj_v_int(-2)), n1, n1 ? tj_ones_like(n1, -1) : NULL};
    tj_tensor *b[3] = {x2, n2 ? tj_ones_like(n2, -1) : NULL, n2};
    tj_tensor *r = tj_matmul(tj_cat(a, 3, -1), tj_transpose(tj_cat(b, 3, -1), -2, -1));
    return tj_dc_done(tj_sqrt(tj_clamp_min(r, tj_v_int(0))), outs);
}

/* x1[..., :, None, :] - x2[..., None, :, :] */
static tj_tensor *differences(tj_tensor *x1, tj_tensor *x2)
{
    return tj_sub(tj_unsqueeze(x1, -2), tj_unsqueeze(x2, -3));
}

static tj_status cdist_forward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(_cdist_forward, args, m);
    tj_tensor *x1 = args[0].u.t, *x2 = args[1].u.t;
    double p = tj_value_as_double(&args[2]);
    int64_t mode = args[3].kind == TJ_V_INT ? args[3].u.i : 0, r1 = m[0].shape[m[0].ndim - 2],
            r2 = m[0].shape[m[0].ndim - 1], c = tj_tensor_shape(x1)[tj_tensor_ndim(x1) - 1];
    int64_t numel = 1;
    for (int d = 0; d < m[0].ndim; d++) numel *= m[0].shape[d];
    if (numel == 0 || c == 0) return tj_dc_done(tj_zeros(m[0].shape, m[0].ndim, (int)m[0].dtype), outs);
    if (p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)))) return tj_dc_done(tj__euclidean_dist(x1, x2), outs);
    const int64_t last = -1;
    tj_tensor *a = tj_abs(differences(x1, x2)), *r;
    if (p == 0) r = tj_sum_dim(tj_ne_scalar(a, tj_v_int(0)), &last, 1, false, (int)m[0].dtype);
    else if (p == 1) r = tj_sum_dim(a, &last, 1, false, -1);
    else if (p == 2) r = tj_sqrt(tj_sum_dim(tj_mul(a, a), &last, 1, false, -1));
    else if (isinf(p)) r = tj_amax(a, &last, 1, false);
    else r = tj_pow_scalar(tj_sum_dim(tj_pow_scalar(a, tj_v_float(p)), &last, 1, false, -1), tj_v_float(1.0 / p));
    return tj_dc_done(r, outs);
}

/* t, or 0 where cond holds */
static tj_tensor *zero_where(tj_tensor *cond, tj_tensor *t, tj_dtype dt)
{
    return tj_where(cond, tj_dc_number(0, dt), t);
}

/* The terms of ATen's backward kernels (see tj__cdist_backward), one per
 * (i, j, k), summed over j. */
static tj_status cdist_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(_cdist_backward, args, m);
    tj_tensor *x1 = args[1].u.t, *x2 = args[2].u.t;
    double p = tj_value_as_double(&args[3]);
    tj_dtype dt = m[0].dtype;
    int64_t numel = 1;
    for (int d = 0; d < m[0].ndim; d++) numel *= m[0].shape[d];
    if (numel == 0 || p == 0) return tj_dc_done(tj_zeros(m[0].shape, m[0].ndim, (int)dt), outs);
    tj_tensor *diff = differences(x1, x2), *g = tj_unsqueeze(args[0].u.t, -1), *dist = tj_unsqueeze(args[4].u.t, -1);
    tj_tensor *at_zero = tj_eq_scalar(dist, tj_v_int(0)), *t;
    if (p == 1) {
        t = tj_mul(g, tj_sign(diff));
    } else if (p < 2) {
        tj_value e = tj_v_float(p - 1);
        t = tj_div(tj_mul(tj_mul(tj_sign(diff), tj_pow_scalar(tj_abs(diff), e)), g), tj_pow_scalar(dist, e));
        t = zero_where(at_zero, t, dt);
        if (p < 1) t = zero_where(tj_eq_scalar(diff, tj_v_int(0)), t, dt);
    } else if (p == 2) {
        t = zero_where(at_zero, tj_div(tj_mul(g, diff), dist), dt);
    } else if (isinf(p)) {
        tj_tensor *off = tj_ceil(tj_abs(tj_sub(tj_abs(diff), dist)));
        tj_tensor *one = tj_dc_number(1, dt);
        t = tj_mul(tj_mul(g, tj_sign(diff)), tj_sub(one, tj_minimum(one, off)));
    } else {
        tj_tensor *num = tj_mul(tj_mul(diff, tj_pow_scalar(tj_abs(diff), tj_v_float(p - 2))), g);
        t = zero_where(at_zero, tj_div(num, tj_pow_scalar(dist, tj_v_float(p - 1))), dt);
    }
    const int64_t pairs = -2;
    return tj_dc_done(tj_sum_dim(t, &pairs, 1, false, -1), outs);
}

void tj_register_cdist_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(_euclidean_dist), euclidean_dist, "euclidean_dist");
    tj_op_set_decomposition(TJ_OPS(_cdist_forward), cdist_forward, "cdist_forward");
    tj_op_set_decomposition(TJ_OPS(_cdist_backward), cdist_backward, "cdist_backward");
}
