/* Decompositions of 2-d pooling over windows made of unfold views
 * (windows.c):
 *   max_pool2d_with_indices: the input padded with -inf; values are the
 *     window amax; the index is the kernel's: the last nan of the window if
 *     there is one, else its first largest in-bounds element, as a flat
 *     position h * W + w in the input plane. Each tap gets a key (T taps):
 *     T - 1 - t when it is largest, T + t when it is nan, else -1; the
 *     window's amax key names the tap, and a gather from a constant table
 *     turns it into the position. Every step runs tap by tap on the
 *     output's shape (as Inductor's lowering loops over the taps), so that
 *     the replay fuses values and key into one pass over the windows
 *     instead of materialising a key per tap;
 *   avg_pool2d: window sums (accumulated in float64 for float32, as the
 *     kernel does) divided by the kernel's divisor table;
 *   max_pool2d_with_indices_backward, adaptive_max_pool2d_backward:
 *     scatter_add of the gradient into the input plane at the saved indices.
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

/* The result back to the input's rank (drops the batch of a 3-d input). */
static tj_tensor *unbatched(tj_tensor *r, const pool2d *p) { return p->batched ? r : tj_squeeze_dim(r, 0); }

static tj_tensor *bool_const(bool b) { return tj_scalar_tensor(tj_v_bool(b), TJ_BOOL); }

/* Input row (i = 0) or column (i = 1) of tap j of window o. */
static int64_t tap_coord(const pool2d *p, int i, int64_t o, int64_t j) { return o * p->s[i] - p->p[i] + j * p->d[i]; }

/* Whether every tap of every window lies inside the input (no padding,
 * no ceil-mode window past the end). */
static bool all_in_bounds(const pool2d *p)
{
    int64_t size[2] = {p->h, p->w}, out[2] = {p->oh, p->ow};
    for (int i = 0; i < 2; i++)
        if (p->p[i] > 0 || tap_coord(p, i, out[i] - 1, p->k[i] - 1) >= size[i]) return false;
    return true;
}

/* A constant tensor (made once when tracing) of `shape`: the element at
 * index `at` is fill(p, at). */
static tj_tensor *constant(tj_dtype dt, int ndim, const int64_t *shape, const pool2d *p,
                           double (*fill)(const pool2d *p, const int64_t *at))
{
    tj_tensor *t = tj_tensor_empty(dt, ndim, shape);
    if (!t) return NULL;
    int64_t n = tj_tensor_numel(t), at[4] = {0};
    for (int64_t e = 0; e < n; e++) {
        double v = fill(p, at);
        if (dt == TJ_BOOL) ((uint8_t *)tj_tensor_data(t))[e] = v != 0;
        else if (dt == TJ_INT64) ((int64_t *)tj_tensor_data(t))[e] = (int64_t)v;
        else if (dt == TJ_FLOAT32) ((float *)tj_tensor_data(t))[e] = (float)v;
        else ((double *)tj_tensor_data(t))[e] = v;
        for (int d = ndim - 1; d >= 0 && ++at[d] == shape[d]; d--) at[d] = 0;
    }
    return t;
}

/* Input row and column of tap t of output position l (row-major over
 * [kH, kW] and [OH, OW]). */
static int64_t tap_row(const pool2d *p, int64_t t, int64_t l) { return tap_coord(p, 0, l / p->ow, t / p->k[1]); }
static int64_t tap_col(const pool2d *p, int64_t t, int64_t l) { return tap_coord(p, 1, l % p->ow, t % p->k[1]); }

/* [T, 1, 1, L]: whether tap t of output l lies inside the input. */
static double tap_inside(const pool2d *p, const int64_t *at)
{
    int64_t y = tap_row(p, at[0], at[3]), x = tap_col(p, at[0], at[3]);
    return y >= 0 && y < p->h && x >= 0 && x < p->w;
}

/* Tap keys: T - 1 - t for a largest tap (the first one wins the max),
 * T + t for a nan tap (the last one wins, over any largest). */
static double first_key(const pool2d *p, int64_t t) { return (double)(p->k[0] * p->k[1] - 1 - t); }
static double nan_key(const pool2d *p, int64_t t) { return (double)(p->k[0] * p->k[1] + t); }

/* [2T, L]: the flat input position h * W + w of the tap that key k
 * selects at output l. */
static double key_position(const pool2d *p, const int64_t *at)
{
    int64_t T = p->k[0] * p->k[1], t = at[0] < T ? T - 1 - at[0] : at[0] - T;
    return (double)(tap_row(p, t, at[1]) * p->w + tap_col(p, t, at[1]));
}

/* Tap t of x [T, ...]: its contiguous slice [1, ...]. */
static tj_tensor *tap(tj_tensor *x, int64_t t) { return tj_slice(x, 0, true, t, true, t + 1, 1); }

/* The elementwise maximum over dim 0 of x [T, ...] (nan propagates, as in
 * amax): a chain of maximum over contiguous slices. [1, ...]. */
static tj_tensor *max_over_taps(tj_tensor *x)
{
    int64_t T = x ? tj_tensor_shape(x)[0] : 0;
    tj_tensor *m = tap(x, 0);
    for (int64_t t = 1; t < T && m; t++) m = tj_maximum(m, tap(x, t));
    return m;
}

/* The key of tap t of win [T, N, C, L] against the window maxima values
 * [1, N, C, L] (inside: [T, 1, 1, L] whether each tap lies in the input,
 * NULL when all do; none: the 0-dim key -1 in the keys' dtype kd).
 * [1, N, C, L]. */
static tj_tensor *tap_key(tj_tensor *win, tj_tensor *values, tj_tensor *inside, tj_tensor *none, const pool2d *p,
                          int64_t t, tj_dtype kd)
{
    tj_tensor *w = tap(win, t), *hit = tj_eq(w, values);
    if (inside) hit = tj_where(tap(inside, t), hit, bool_const(false));
    /* not largest: a nan tap gets its key, others -1 */
    tj_tensor *other = tj_where(tj_eq(w, w), none, tj_dc_number(nan_key(p, t), kd));
    return tj_where(hit, tj_dc_number(first_key(p, t), kd), other);
}

static tj_status max_pool2d_with_indices(const tj_value *args, tj_value *outs)
{
    tj_meta m[2];
    if (tj_dc_check(TJ_OPS(max_pool2d_with_indices), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *x = args[0].u.t;
    pool2d p;
    pool_read(x, args, true, &m[0], &p);
    int64_t T = p.k[0] * p.k[1], L = p.oh * p.ow, NC = p.n * p.c;
    int64_t perm[6] = {4, 5, 0, 1, 2, 3}, flat[4] = {T, p.n, p.c, L}, bounds[4] = {T, 1, 1, L};
    int64_t table[2] = {2 * T, L}, each[3] = {NC, 2 * T, L}, one[3] = {NC, 1, L}, plane[4] = {p.n, p.c, p.oh, p.ow};
    /* keys are small integers, exact in float32 below 2^24 */
    tj_dtype kd = 2 * T <= (int64_t)1 << 24 ? TJ_FLOAT32 : TJ_FLOAT64;
    /* the windows tap-major, [T, N, C, L]: every operation below runs on
     * contiguous slices (one per tap) */
    tj_tensor *win = tj_reshape(tj_permute(pool_windows(x, &p, -INFINITY), perm, 6), flat, 4);
    tj_tensor *values = max_over_taps(win);
    tj_tensor *inside = all_in_bounds(&p) ? NULL : constant(TJ_BOOL, 4, bounds, &p, tap_inside);
    tj_tensor *none = tj_dc_number(-1.0, kd), *key = tap_key(win, values, inside, none, &p, 0, kd);
    for (int64_t t = 1; t < T && key; t++) key = tj_maximum(key, tap_key(win, values, inside, none, &p, t, kd));
    tj_tensor *positions = tj_expand(constant(TJ_INT64, 2, table, &p, key_position), each, 3);
    tj_tensor *index = tj_gather(positions, 1, tj_reshape(tj_dc_to(key, TJ_INT64), one, 3));
    tj_tensor *out = unbatched(tj_reshape(values, plane, 4), &p);
    index = unbatched(tj_view(index, plane, 4), &p);
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

/* grad_input[plane][index] += grad_output, over [N, C, OH*OW] -> [N, C, H*W]
 * (m: the backward's output geometry). */
static tj_status scatter_into_planes(tj_tensor *g, tj_tensor *self, tj_tensor *idx, const tj_meta *m, tj_value *outs)
{
    int nd = tj_tensor_ndim(self), lead = nd - 2;
    int64_t flat[TJ_MAX_DIMS], plane[TJ_MAX_DIMS];
    for (int i = 0; i < lead; i++) flat[i] = plane[i] = tj_tensor_shape(self)[i];
    flat[lead] = tj_tensor_shape(g)[nd - 2] * tj_tensor_shape(g)[nd - 1];
    plane[lead] = tj_tensor_shape(self)[nd - 2] * tj_tensor_shape(self)[nd - 1];
    tj_tensor *zeros = tj_expand(tj_full(NULL, 0, tj_v_int(0), (int)m->dtype), plane, lead + 1);
    tj_tensor *r = tj_scatter_add(zeros, lead, tj_reshape(idx, flat, lead + 1), tj_reshape(g, flat, lead + 1));
    return tj_dc_done(tj_view(r, m->shape, m->ndim), outs);
}

static tj_status max_pool2d_with_indices_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(max_pool2d_with_indices_backward, args, m);
    return scatter_into_planes(args[0].u.t, args[1].u.t, args[7].u.t, &m[0], outs);
}

/* adaptive_max_pool2d_backward(grad_output, self, indices): the same scatter
 * (torch._decomp 1.13 has none; the forward stays a primitive). */
static tj_status adaptive_max_pool2d_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(adaptive_max_pool2d_backward, args, m);
    return scatter_into_planes(args[0].u.t, args[1].u.t, args[2].u.t, &m[0], outs);
}

void tj_register_pool_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(max_pool2d_with_indices), max_pool2d_with_indices, "max_pool2d_with_indices");
    tj_op_set_decomposition(TJ_OPS(avg_pool2d), avg_pool2d, "avg_pool2d");
    tj_op_set_decomposition(TJ_OPS(max_pool2d_with_indices_backward), max_pool2d_with_indices_backward,
                            "max_pool2d_with_indices_backward");
    tj_op_set_decomposition(TJ_OPS(adaptive_max_pool2d_backward), adaptive_max_pool2d_backward,
                            "adaptive_max_pool2d_backward");
}
