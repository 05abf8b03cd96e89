/* Decompositions of 2-d pooling over windows made of unfold views
 * (windows.c):
 *   max_pool2d_with_indices: the input padded with -inf; values are the
 *     window amax; the index is the kernel's: the last nan of the window if
 *     there is one, else its first largest in-bounds element, as a flat
 *     position h * W + w in the input plane;
 *   avg_pool2d: window sums (accumulated in float64 for float32, as the
 *     kernel does) divided by the kernel's divisor table;
 *   max_pool2d_with_indices_backward: scatter_add of the gradient into the
 *     input plane at the saved indices.
 * The shape functions check the arguments and give the output sizes. */
#include "windows.h"

typedef struct pool2d {
    int64_t k[2], s[2], p[2], d[2];
    int64_t n, c, h, w, oh, ow;
    bool batched;
} pool2d;

/* An int[2] given as 1 or 2 entries, or 0 entries meaning `dflt`. */
static void pair(const tj_value *v, const int64_t *dflt, int64_t *out)
{
    out[0] = v->n ? v->u.ints[0] : dflt[0];
    out[1] = v->n ? v->u.ints[v->n - 1] : dflt[1];
}

/* The pooling parameters (already checked by the shape function, so every
 * list has 1 or 2 entries, the stride possibly none) and sizes. */
static void pool_read(const tj_tensor *x, const tj_value *args, bool has_dilation, const tj_meta *m, pool2d *p)
{
    static const int64_t ones[2] = {1, 1};
    pair(&args[1], ones, p->k);
    pair(&args[2], p->k, p->s);
    pair(&args[3], ones, p->p);
    pair(has_dilation ? &args[4] : &(tj_value){.kind = TJ_V_INTS}, ones, p->d);
    int nd = tj_tensor_ndim(x);
    const int64_t *sh = tj_tensor_shape(x);
    p->batched = nd == 4;
    p->n = nd == 4 ? sh[0] : 1;
    p->c = sh[nd - 3];
    p->h = sh[nd - 2];
    p->w = sh[nd - 1];
    p->oh = m->shape[m->ndim - 2];
    p->ow = m->shape[m->ndim - 1];
}

/* x as [N, C, H, W], padded for pooling (the right side also covers the
 * last window of ceil mode), cut into windows [N, C, OH, OW, kH, kW]. */
static tj_tensor *pool_windows(tj_tensor *x, const pool2d *p, double fill)
{
    if (!p->batched) x = tj_unsqueeze(x, 0);
    int64_t out[2] = {p->oh, p->ow}, size[2] = {p->h, p->w}, hi[2];
    for (int i = 0; i < 2; i++) {
        int64_t need = (out[i] - 1) * p->s[i] + p->d[i] * (p->k[i] - 1) + 1;
        hi[i] = need - size[i] - p->p[i];
        if (hi[i] < p->p[i]) hi[i] = p->p[i];
    }
    return tj_dc_windows(tj_dc_pad(x, 2, p->p, hi, fill), 2, p->k, p->s, p->d, out);
}

/* [..., kH, kW] -> [..., kH * kW] (a copy: the windows overlap). */
static tj_tensor *flat_windows(tj_tensor *win, const pool2d *p)
{
    int64_t shape[5] = {p->n, p->c, p->oh, p->ow, p->k[0] * p->k[1]};
    return tj_reshape(win, shape, 5);
}

/* The result back to the input's rank (drops the batch of a 3-d input). */
static tj_tensor *unbatched(tj_tensor *r, const pool2d *p) { return p->batched ? r : tj_squeeze_dim(r, 0); }

static tj_tensor *bool_const(bool b) { return tj_scalar_tensor(tj_v_bool(b), TJ_BOOL); }

/* For each window position t = i * kW + j of output (oh, ow): whether it
 * lies inside the input, [OH, OW, kH*kW] (the same windows over a plane of
 * ones padded with zeros). */
static tj_tensor *in_bounds(const pool2d *p)
{
    int64_t plane[4] = {1, 1, p->h, p->w};
    pool2d q = *p;
    q.n = q.c = 1;
    q.batched = true;
    tj_tensor *win = flat_windows(pool_windows(tj_ones(plane, 4, TJ_FLOAT32), &q, 0.0), &q);
    return tj_eq(win, tj_scalar_tensor(tj_v_float(1.0), TJ_FLOAT32));
}

/* Flat input positions of window tap t at output (oh, ow): [OH, OW, taps]
 * int64, from arange arithmetic. */
static tj_tensor *tap_positions(const pool2d *p, tj_tensor *t)
{
    tj_tensor *kw = tj_scalar_tensor(tj_v_int(p->k[1]), TJ_INT64);
    tj_tensor *ti = tj_div_mode(t, kw, "floor"), *tj = tj_sub(t, tj_mul(ti, kw));
    int64_t col[3] = {p->oh, 1, 1}, row[3] = {1, p->ow, 1};
    tj_tensor *oy = tj_view(tj_arange(tj_v_int(-p->p[0]), tj_v_int(p->oh * p->s[0] - p->p[0]), tj_v_int(p->s[0]),
                                      TJ_INT64), col, 3);
    tj_tensor *ox = tj_view(tj_arange(tj_v_int(-p->p[1]), tj_v_int(p->ow * p->s[1] - p->p[1]), tj_v_int(p->s[1]),
                                      TJ_INT64), row, 3);
    tj_tensor *y = tj_add(oy, tj_mul(ti, tj_scalar_tensor(tj_v_int(p->d[0]), TJ_INT64)));
    tj_tensor *x = tj_add(ox, tj_mul(tj, tj_scalar_tensor(tj_v_int(p->d[1]), TJ_INT64)));
    return tj_add(tj_mul(y, tj_scalar_tensor(tj_v_int(p->w), TJ_INT64)), x);
}

static tj_status max_pool2d_with_indices(const tj_value *args, tj_value *outs)
{
    tj_meta m[2];
    if (tj_dc_check(TJ_OPS(max_pool2d_with_indices), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *x = args[0].u.t;
    pool2d p;
    pool_read(x, args, true, &m[0], &p);
    int64_t last = -1, taps = p.k[0] * p.k[1];
    tj_tensor *win = flat_windows(pool_windows(x, &p, -INFINITY), &p);
    tj_tensor *values = tj_amax(win, &last, 1, true);
    /* first largest in-bounds tap, or the last nan tap */
    tj_tensor *t = tj_arange(tj_v_int(0), tj_v_int(taps), tj_v_int(1), TJ_INT64);
    tj_tensor *hit = tj_where(in_bounds(&p), tj_eq(win, values), bool_const(false));
    tj_tensor *first = tj_amin(tj_where(hit, t, tj_scalar_tensor(tj_v_int(taps), TJ_INT64)), &last, 1, false);
    tj_tensor *is_nan = tj_eq(tj_eq(win, win), bool_const(false));
    tj_tensor *last_nan = tj_amax(tj_where(is_nan, t, tj_scalar_tensor(tj_v_int(-1), TJ_INT64)), &last, 1, false);
    tj_tensor *any_nan = tj_eq(tj_eq(values, values), bool_const(false));
    tj_tensor *tap = tj_where(tj_squeeze_dim(any_nan, -1), last_nan, first);
    /* the tap's flat position in the input plane */
    tj_tensor *pos = tap_positions(&p, tj_unsqueeze(tap, -1));
    tj_tensor *index = tj_squeeze_dim(pos, -1);
    tj_tensor *out = unbatched(tj_squeeze_dim(values, -1), &p);
    index = unbatched(index, &p);
    if (!out || !index) return tj_last_status();
    outs[0] = tj_v_tensor(out);
    outs[1] = tj_v_tensor(index);
    return TJ_OK;
}

/* The kernel's divisor of each output (PyTorch's avg_pool2d): windows
 * clipped to the padded input count_include_pad, else to the input; a
 * window wholly in the padding gets 1 (its sum is 0, the kernel's 0). */
static tj_tensor *avg_divisors(const pool2d *p, bool count_include_pad, tj_dtype dt)
{
    int64_t shape[2] = {p->oh, p->ow};
    tj_tensor *d = tj_tensor_empty(dt, 2, shape);
    if (!d) return NULL;
    for (int64_t oy = 0; oy < p->oh; oy++)
        for (int64_t ox = 0; ox < p->ow; ox++) {
            int64_t y0 = oy * p->s[0] - p->p[0], x0 = ox * p->s[1] - p->p[1];
            int64_t y1 = y0 + p->k[0] < p->h + p->p[0] ? y0 + p->k[0] : p->h + p->p[0];
            int64_t x1 = x0 + p->k[1] < p->w + p->p[1] ? x0 + p->k[1] : p->w + p->p[1];
            int64_t pool_size = (y1 - y0) * (x1 - x0);
            y0 = y0 > 0 ? y0 : 0, x0 = x0 > 0 ? x0 : 0;
            y1 = y1 < p->h ? y1 : p->h, x1 = x1 < p->w ? x1 : p->w;
            int64_t div = y0 >= y1 || x0 >= x1 ? 1 : count_include_pad ? pool_size : (y1 - y0) * (x1 - x0);
            char *e = (char *)tj_tensor_data(d) + (oy * p->ow + ox) * (int64_t)tj_dtype_size(dt);
            if (dt == TJ_INT64) *(int64_t *)e = div;
            else *(double *)e = (double)div;
        }
    return d;
}

static tj_status avg_pool2d(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_dc_check(TJ_OPS(avg_pool2d), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *x = args[0].u.t;
    pool2d p;
    pool_read(x, args, false, &m[0], &p);
    bool is_int = tj_tensor_dtype(x) == TJ_INT64;
    tj_dtype acc = is_int ? TJ_INT64 : TJ_FLOAT64;
    int64_t taps[2] = {-2, -1};
    tj_tensor *sum = tj_sum_dim(pool_windows(x, &p, 0.0), taps, 2, false, (int)acc);
    tj_tensor *div;
    if (args[6].kind == TJ_V_INT) {
        tj_value o = args[6];
        div = tj_dc_scalar(&o, acc);
    } else {
        div = avg_divisors(&p, args[5].u.b, acc);
    }
    tj_tensor *r = is_int ? tj_div_mode(sum, div, "trunc") : tj_to_copy(tj_div(sum, div), (int)tj_tensor_dtype(x));
    return tj_dc_done(unbatched(r, &p), outs);
}

/* grad_input[plane][index] += grad_output, over [N, C, OH*OW] -> [N, C, H*W]. */
static tj_status max_pool2d_with_indices_backward(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_dc_check(TJ_OPS(max_pool2d_with_indices_backward), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *g = args[0].u.t, *self = args[1].u.t, *idx = args[7].u.t;
    int nd = tj_tensor_ndim(self), lead = nd - 2;
    int64_t flat[TJ_MAX_DIMS], plane[TJ_MAX_DIMS];
    for (int i = 0; i < lead; i++) flat[i] = plane[i] = tj_tensor_shape(self)[i];
    flat[lead] = tj_tensor_shape(g)[nd - 2] * tj_tensor_shape(g)[nd - 1];
    plane[lead] = tj_tensor_shape(self)[nd - 2] * tj_tensor_shape(self)[nd - 1];
    tj_tensor *zeros = tj_full(plane, lead + 1, tj_v_int(0), (int)m[0].dtype);
    tj_tensor *r = tj_scatter_add(zeros, lead, tj_reshape(idx, flat, lead + 1), tj_reshape(g, flat, lead + 1));
    return tj_dc_done(tj_view(r, m[0].shape, m[0].ndim), outs);
}

void tj_register_pool_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(max_pool2d_with_indices), max_pool2d_with_indices, "max_pool2d_with_indices");
    tj_op_set_decomposition(TJ_OPS(avg_pool2d), avg_pool2d, "avg_pool2d");
    tj_op_set_decomposition(TJ_OPS(max_pool2d_with_indices_backward), max_pool2d_with_indices_backward,
                            "max_pool2d_with_indices_backward");
}
