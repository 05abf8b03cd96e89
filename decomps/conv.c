/* Decompositions of convolution and its backward, N-d (1-d and 2-d here),
 * as im2col + bmm:
 *   convolution: the zero-padded input cut into windows (unfold), copied
 *     into columns [groups, N*L, C/groups * K] and multiplied with the
 *     weight [groups, C/groups * K, OC/groups] by one bmm;
 *   transposed convolution: a direct one over the input dilated by the
 *     stride (slice_scatter into zeros) and padded by dilation*(K-1) -
 *     padding (+ output_padding after), with the weight flipped (gather
 *     along each spatial dim) and its channel dims swapped per group;
 *   convolution_backward: grad_input is the transposed convolution of the
 *     gradient (the plain one for a transposed convolution), grad_weight a
 *     bmm of the gradient with the input's columns (input and gradient swap
 *     roles for a transposed convolution), grad_bias a sum.
 * Products accumulate in float64 for float32 operands, so that the result
 * is correctly rounded like the kernel's double-accumulated GEMM. The shape
 * functions check the arguments and give the output sizes. */
#include "windows.h"

#define MAX_SPATIAL 3

typedef struct conv {
    int n; /* spatial dims */
    int64_t s[MAX_SPATIAL], p[MAX_SPATIAL], d[MAX_SPATIAL], op[MAX_SPATIAL];
    int64_t groups;
} conv;

/* An int[] of 1 or n entries (one entry stands for all). */
static void read_list(const tj_value *v, int n, int64_t *out)
{
    for (int i = 0; i < n; i++) out[i] = v->n == 0 ? 0 : v->u.ints[v->n == 1 ? 0 : i];
}

/* stride, padding, dilation, (transposed), output_padding, groups from
 * args[at..]. */
static void conv_read(const tj_value *args, int at, int n, conv *c)
{
    c->n = n;
    read_list(&args[at], n, c->s);
    read_list(&args[at + 1], n, c->p);
    read_list(&args[at + 2], n, c->d);
    read_list(&args[at + 4], n, c->op);
    c->groups = args[at + 5].u.i;
}

static int64_t prod(const int64_t *v, int n)
{
    int64_t r = 1;
    for (int i = 0; i < n; i++) r *= v[i];
    return r;
}

/* Columns of a convolution of x [N, C, S..] with kernel sizes k giving
 * `out` positions per dim: [groups, N*L, C/groups * prod(k)]. */
static tj_tensor *im2col(tj_tensor *x, const conv *c, const int64_t *k, const int64_t *out)
{
    int n = c->n;
    int64_t N = tj_tensor_shape(x)[0], C = tj_tensor_shape(x)[1], L = prod(out, n), K = prod(k, n);
    tj_tensor *win = tj_dc_windows(tj_dc_pad(x, n, c->p, c->p, 0.0), n, k, c->s, c->d, out);
    int64_t perm[2 + 2 * MAX_SPATIAL];
    perm[0] = 0;
    for (int i = 0; i < n; i++) perm[1 + i] = 2 + i;
    perm[1 + n] = 1;
    for (int i = 0; i < n; i++) perm[2 + n + i] = 2 + n + i;
    int64_t cols[3] = {N * L, c->groups, C / c->groups * K}, swap[3] = {1, 0, 2};
    return tj_permute(tj_reshape(tj_permute(win, perm, 2 + 2 * n), cols, 3), swap, 3);
}

/* y [N, OC, O..] from a bmm result [groups, N*L, OC/groups]. */
static tj_tensor *from_groups(tj_tensor *y, int64_t N, int64_t OC, const int64_t *out, int n)
{
    int64_t swap[3] = {1, 0, 2}, nlc[3] = {N, prod(out, n), OC}, ncl[3] = {0, 2, 1}, shape[2 + MAX_SPATIAL];
    y = tj_reshape(tj_permute(y, swap, 3), nlc, 3);
    shape[0] = N;
    shape[1] = OC;
    for (int i = 0; i < n; i++) shape[2 + i] = out[i];
    return tj_reshape(tj_permute(y, ncl, 3), shape, 2 + n);
}

/* The accumulation dtype of a product of `dt` operands. */
static tj_dtype acc_dtype(tj_dtype dt) { return dt == TJ_FLOAT32 ? TJ_FLOAT64 : dt; }

/* A plain convolution of x with w [OC, C/groups, K..], `out` positions. */
static tj_tensor *conv_direct(tj_tensor *x, tj_tensor *w, tj_tensor *bias, const conv *c, const int64_t *out)
{
    int n = c->n;
    tj_dtype dt = tj_tensor_dtype(x), acc = acc_dtype(dt);
    const int64_t *ws = tj_tensor_shape(w);
    int64_t N = tj_tensor_shape(x)[0], OC = ws[0], CK = ws[1] * prod(ws + 2, n);
    int64_t wshape[3] = {c->groups, OC / c->groups, CK};
    tj_tensor *wt = tj_transpose(tj_reshape(tj_dc_to(w, acc), wshape, 3), 1, 2);
    tj_tensor *y = tj_bmm(tj_dc_to(im2col(x, c, ws + 2, out), acc), wt);
    y = tj_dc_to(from_groups(y, N, OC, out, n), dt);
    if (!bias || !y) return y;
    int64_t bshape[2 + MAX_SPATIAL] = {1, OC, 1, 1, 1};
    return tj_add(y, tj_view(bias, bshape, 2 + n));
}

/* w reversed along each spatial dim. */
static tj_tensor *flip_spatial(tj_tensor *w, int n)
{
    for (int i = 0; i < n && w; i++) {
        int d = 2 + i;
        int64_t K = tj_tensor_shape(w)[d], shape[2 + MAX_SPATIAL];
        for (int k = 0; k < 2 + n; k++) shape[k] = k == d ? K : 1;
        tj_tensor *rev = tj_view(tj_arange(tj_v_int(K - 1), tj_v_int(-1), tj_v_int(-1), TJ_INT64), shape, 2 + n);
        w = tj_gather(w, d, tj_expand(rev, tj_tensor_shape(w), 2 + n));
    }
    return w;
}

/* A transposed convolution: x [N, Cin, S..], w [Cin, OC/groups, K..]. */
static tj_tensor *conv_transposed(tj_tensor *x, tj_tensor *w, tj_tensor *bias, const conv *c, const int64_t *out)
{
    int n = c->n;
    const int64_t *ws = tj_tensor_shape(w);
    int64_t g = c->groups, cin = ws[0], ocg = ws[1], lo[MAX_SPATIAL], hi[MAX_SPATIAL];
    for (int i = 0; i < n && x; i++) {
        int d = 2 + i;
        int64_t size = tj_tensor_shape(x)[d], shape[2 + MAX_SPATIAL];
        if (c->s[i] > 1 && size > 0) {
            for (int k = 0; k < 2 + n; k++) shape[k] = tj_tensor_shape(x)[k];
            shape[d] = (size - 1) * c->s[i] + 1;
            tj_tensor *buf = tj_full(shape, 2 + n, tj_v_int(0), (int)tj_tensor_dtype(x));
            x = tj_slice_scatter(buf, x, d, true, 0, true, shape[d], c->s[i]);
        }
        lo[i] = c->d[i] * (ws[2 + i] - 1) - c->p[i];
        hi[i] = lo[i] + c->op[i];
    }
    int64_t split[2 + 2 + MAX_SPATIAL] = {g, cin / g, ocg}, perm[2 + 2 + MAX_SPATIAL] = {0, 2, 1},
            merged[2 + MAX_SPATIAL] = {g * ocg, cin / g};
    for (int i = 0; i < n; i++) {
        split[3 + i] = merged[2 + i] = ws[2 + i];
        perm[3 + i] = 3 + i;
    }
    tj_tensor *wf = tj_reshape(tj_permute(tj_view(flip_spatial(w, n), split, 3 + n), perm, 3 + n), merged, 2 + n);
    conv direct = *c;
    for (int i = 0; i < n; i++) direct.s[i] = 1, direct.p[i] = 0;
    return conv_direct(tj_dc_pad(x, n, lo, hi, 0.0), wf, bias, &direct, out);
}

static tj_status convolution(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_dc_check(TJ_OPS(convolution), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *x = args[0].u.t, *w = args[1].u.t, *bias = tj_dc_opt(&args[2]);
    conv c;
    conv_read(args, 3, tj_tensor_ndim(w) - 2, &c);
    const int64_t *out = m[0].shape + 2;
    tj_tensor *y = args[6].u.b ? conv_transposed(x, w, bias, &c, out) : conv_direct(x, w, bias, &c, out);
    return tj_dc_done(y, outs);
}

/* The weight gradient of a plain convolution of `input` whose output
 * gradient is `gout`: [OC, C/groups, K..]. */
static tj_tensor *weight_grad(tj_tensor *input, tj_tensor *gout, const conv *c, const int64_t *k)
{
    int n = c->n;
    tj_dtype dt = tj_tensor_dtype(input), acc = acc_dtype(dt);
    const int64_t *gs = tj_tensor_shape(gout);
    int64_t N = gs[0], OC = gs[1], g = c->groups, L = prod(gs + 2, n), C = tj_tensor_shape(input)[1];
    tj_tensor *cols = tj_dc_to(im2col(input, c, k, gs + 2), acc);
    int64_t split[4] = {N, g, OC / g, L}, perm[4] = {1, 2, 0, 3}, rows[3] = {g, OC / g, N * L};
    tj_tensor *G = tj_reshape(tj_permute(tj_reshape(tj_dc_to(gout, acc), split, 4), perm, 4), rows, 3);
    int64_t shape[2 + MAX_SPATIAL] = {OC, C / g};
    for (int i = 0; i < n; i++) shape[2 + i] = k[i];
    return tj_dc_to(tj_reshape(tj_bmm(G, cols), shape, 2 + n), dt);
}

static tj_status convolution_backward(const tj_value *args, tj_value *outs)
{
    tj_meta m[3];
    if (tj_dc_check(TJ_OPS(convolution_backward), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *go = args[0].u.t, *x = args[1].u.t, *w = args[2].u.t;
    int n = tj_tensor_ndim(w) - 2;
    conv c;
    conv_read(args, 4, n, &c);
    bool transposed = args[7].u.b;
    const bool *mask = args[10].u.bools;
    const int64_t *k = tj_tensor_shape(w) + 2;
    for (int i = 0; i < 3; i++) outs[i] = tj_v_none();
    if (mask[0]) {
        int64_t op[MAX_SPATIAL] = {0};
        for (int i = 0; i < n && !transposed; i++) {
            int64_t full = (tj_tensor_shape(go)[2 + i] - 1) * c.s[i] - 2 * c.p[i] + c.d[i] * (k[i] - 1) + 1;
            op[i] = tj_tensor_shape(x)[2 + i] - full;
        }
        tj_value cargs[9] = {tj_v_tensor(go), tj_v_tensor(w), tj_v_none(), tj_v_ints(c.s, n), tj_v_ints(c.p, n),
                             tj_v_ints(c.d, n), tj_v_bool(!transposed), tj_v_ints(op, n), tj_v_int(c.groups)};
        tj_status st = tj_dispatch(TJ_OPS(convolution), cargs, 9, &outs[0]);
        if (st != TJ_OK) return st;
    }
    if (mask[1]) {
        tj_tensor *gw = transposed ? weight_grad(go, x, &c, k) : weight_grad(x, go, &c, k);
        if (!gw) return tj_last_status();
        outs[1] = tj_v_tensor(gw);
    }
    if (mask[2]) {
        int64_t dims[1 + MAX_SPATIAL] = {0};
        for (int i = 0; i < n; i++) dims[1 + i] = 2 + i;
        tj_tensor *gb = tj_sum_dim(go, dims, 1 + n, false, -1);
        if (!gb) return tj_last_status();
        outs[2] = tj_v_tensor(gb);
    }
    return TJ_OK;
}

void tj_register_conv_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(convolution), convolution, "convolution");
    tj_op_set_decomposition(TJ_OPS(convolution_backward), convolution_backward, "convolution_backward");
}
