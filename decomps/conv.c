/* Decompositions of convolution and its backward, N-d (1-d to 3-d),
 * as im2col / col2im around one bmm per call:
 *   columns of x [N, C, S..]: the zero-padded input cut into windows
 *     (unfold), copied into [groups, C/groups * K, N*L] (K taps, L output
 *     positions), or per image [N*groups, C/groups * K, L] (a replayed
 *     plan reads either in place: tracer/fuse_gather.c);
 *   rows of t [N, C, S..]: t as [groups, C/groups, N*S] (a permuted copy);
 *   convolution: the weight [groups, OC/groups, C/groups * K] broadcast
 *     over the images @ each image's columns: [N, OC, O..] as computed,
 *     with no permuted copy of an [OC, N*L] product;
 *   transposed convolution (also the input gradient of a plain one):
 *     weight^T [groups, OC/groups * K, C/groups] @ rows of the input gives
 *     the contribution of every (output channel, tap, position); col2im
 *     adds them into the zero-padded output with one scatter_add over a
 *     constant index (the same for every channel), then the padding is cut;
 *   convolution_backward: grad_weight = rows of the gradient @ columns^T
 *     (or per image, then summed: weight_grad), grad_input the transposed
 *     convolution of the gradient (the plain one for a transposed
 *     convolution), grad_bias a sum.
 * Products and col2im sums run in the input dtype, as the kernel's: each
 * output is the same sum of products as the kernel's, in another order
 * (the decomposition verifier allows for that, see
 * tools/decomp_verify.h), and the bias is added after the products as the
 * kernel adds it. The shape functions check the arguments and give the
 * output sizes. */
#include <assert.h>

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

/* t [N, C, S..] as [groups, C/groups, N * prod(S)] (one copy). */
static tj_tensor *channel_rows(tj_tensor *t, int64_t groups)
{
    if (!t) return NULL;
    const int64_t *sh = tj_tensor_shape(t);
    int nd = tj_tensor_ndim(t);
    int64_t N = sh[0], C = sh[1], S = prod(sh + 2, nd - 2);
    int64_t split[4] = {N, groups, C / groups, S}, perm[4] = {1, 2, 0, 3}, rows[3] = {groups, C / groups, N * S};
    return tj_reshape(tj_permute(tj_reshape(t, split, 4), perm, 4), rows, 3);
}

/* Columns of a convolution of x [N, C, S..] with kernel sizes k giving
 * `out` positions per dim, row (c, k_1..k_n): per image [N*groups,
 * C/groups * prod(k), L], column (o_1..o_n), when per_image, else
 * [groups, C/groups * prod(k), N*L], column (n, o_1..o_n). The windows
 * are split [N, groups, C/groups, O.., K..]; for 3-D, one dim past the rank
 * limit, per image only, as [N*groups, C/groups, O.., K..] (a view of the
 * contiguous padded input). */
static tj_tensor *im2col(tj_tensor *x, const conv *c, const int64_t *k, const int64_t *out, bool per_image)
{
    int n = c->n, merged = 3 + 2 * n > TJ_MAX_DIMS, lead = 3 - merged, nd = lead + 2 * n;
    assert(per_image || !merged);
    int64_t N = tj_tensor_shape(x)[0], C = tj_tensor_shape(x)[1], g = c->groups;
    tj_tensor *win = tj_dc_windows(tj_dc_pad(x, n, c->p, c->p, 0.0), n, k, c->s, c->d, out);
    int64_t split[3 + 2 * MAX_SPATIAL] = {N, g, C / g}, perm[3 + 2 * MAX_SPATIAL] = {0, 1, 2};
    if (merged) split[0] = N * g, split[1] = C / g;
    int b = per_image ? lead : 2; /* where the taps go: after the channel */
    if (!per_image) perm[0] = 1, perm[1] = 2;
    for (int i = 0; i < n; i++) {
        split[lead + i] = out[i];
        split[lead + n + i] = k[i];
        perm[b + i] = lead + n + i;
        perm[b + n + i + (per_image ? 0 : 1)] = lead + i; /* positions last (after the batch when not per image) */
    }
    if (!per_image) perm[2 + n] = 0;
    int64_t CK = C / g * prod(k, n), L = prod(out, n);
    int64_t cols[3] = {per_image ? N * g : g, CK, per_image ? L : N * L};
    /* one copy lays the columns out */
    return tj_reshape(tj_permute(tj_reshape(win, split, nd), perm, nd), cols, 3);
}

/* y [C, N, S..] (any layout) as contiguous images [N, C, S..]. */
static tj_tensor *to_images(tj_tensor *y)
{
    if (!y) return NULL;
    int64_t perm[2 + MAX_SPATIAL] = {1, 0, 2, 3, 4};
    return tj_contiguous(tj_permute(y, perm, tj_tensor_ndim(y)));
}

/* y [N, C, S..] plus the bias [C] when there is one. */
static tj_tensor *add_bias(tj_tensor *y, tj_tensor *bias)
{
    int64_t bshape[2 + MAX_SPATIAL] = {1, bias ? tj_tensor_shape(bias)[0] : 1, 1, 1, 1};
    return bias && y ? tj_add(y, tj_view(bias, bshape, tj_tensor_ndim(y))) : y;
}

/* A plain convolution with weight w [OC, C/groups, K..] of x [N, C, S..]:
 * [N, OC, out..]. One product per image and group, the weight broadcast
 * over the images (a view: its copy when groups > 1), so that the
 * products' results lie in the images' layout. */
static tj_tensor *conv_images(tj_tensor *x, tj_tensor *w, tj_tensor *bias, const conv *c, const int64_t *out)
{
    const int64_t *ws = tj_tensor_shape(w);
    int64_t N = tj_tensor_shape(x)[0], OC = ws[0], g = c->groups, CK = ws[1] * prod(ws + 2, c->n);
    int64_t wshape[4] = {1, g, OC / g, CK}, wbatch[4] = {N, g, OC / g, CK}, wmats[3] = {N * g, OC / g, CK};
    int64_t shape[2 + MAX_SPATIAL] = {N, OC};
    for (int i = 0; i < c->n; i++) shape[2 + i] = out[i];
    tj_tensor *wb = tj_reshape(tj_expand(tj_reshape(w, wshape, 4), wbatch, 4), wmats, 3);
    tj_tensor *cols = im2col(x, c, ws + 2, out, true);
    return add_bias(tj_view(tj_bmm(wb, cols), shape, 2 + c->n), bias);
}

/* The col2im index: for column entry (k_1..k_n, n, i_1..i_n) of a
 * transposed convolution's product, its flat position in the zero-padded
 * output [N, full..]: n * prod(full) + sum_j (i_j * s_j + k_j * d_j) *
 * (row-major stride of dim j). [1, K*N*L] int64, made once when tracing. */
static tj_tensor *col2im_index(const conv *c, const int64_t *k, int64_t N, const int64_t *in, const int64_t *full)
{
    int n = c->n;
    int64_t K = prod(k, n), L = prod(in, n), plane = prod(full, n), stride[MAX_SPATIAL], shape[2] = {1, K * N * L};
    for (int i = n - 1; i >= 0; i--) stride[i] = i == n - 1 ? 1 : stride[i + 1] * full[i + 1];
    tj_tensor *index = tj_tensor_empty(TJ_INT64, 2, shape);
    if (!index) return NULL;
    int64_t *e = tj_tensor_data(index);
    for (int64_t t = 0; t < K; t++) {
        int64_t tap = 0, r = t; /* the tap's offset */
        for (int i = n - 1; i >= 0; r /= k[i], i--) tap += r % k[i] * c->d[i] * stride[i];
        for (int64_t b = 0; b < N; b++)
            for (int64_t l = 0; l < L; l++) {
                int64_t pos = b * plane + tap, q = l;
                for (int i = n - 1; i >= 0; q /= in[i], i--) pos += q % in[i] * c->s[i] * stride[i];
                *e++ = pos;
            }
    }
    return index;
}

/* col2im: the sums of the column entries cols [groups, C/groups * K, N*L]
 * of a transposed convolution over `in` input positions, as [C, N, out..]
 * (a view). The zero-padded output reaches every tap ((in - 1) * s +
 * d * (k - 1) + 1 per dim) and p + out; it is cut to [p, p + out). */
static tj_tensor *col2im(tj_tensor *cols, const conv *c, const int64_t *k, int64_t N, int64_t C, const int64_t *in,
                         const int64_t *out)
{
    if (!cols) return NULL;
    int n = c->n;
    int64_t full[MAX_SPATIAL];
    for (int i = 0; i < n; i++) {
        full[i] = (in[i] - 1) * c->s[i] + c->d[i] * (k[i] - 1) + 1;
        if (full[i] < c->p[i] + out[i]) full[i] = c->p[i] + out[i];
    }
    int64_t entries[2] = {C, prod(k, n) * N * prod(in, n)}, zeros[2] = {C, N * prod(full, n)};
    tj_tensor *zero = tj_full(NULL, 0, tj_v_int(0), (int)tj_tensor_dtype(cols));
    tj_tensor *index = col2im_index(c, k, N, in, full);
    tj_tensor *sum = tj_scatter_add(tj_expand(zero, zeros, 2), 1, tj_expand(index, entries, 2),
                                    tj_view(cols, entries, 2));
    int64_t shape[2 + MAX_SPATIAL] = {C, N};
    for (int i = 0; i < n; i++) shape[2 + i] = full[i];
    tj_tensor *y = tj_view(sum, shape, 2 + n);
    for (int i = 0; i < n && y; i++)
        if (c->p[i] > 0 || out[i] < full[i]) y = tj_slice(y, 2 + i, true, c->p[i], true, c->p[i] + out[i], 1);
    return y;
}

/* A transposed convolution with weight w [Cin, OC/groups, K..] of the
 * input whose rows (channel_rows) are `rows`, `in` positions per dim:
 * [N, OC, out..]. */
static tj_tensor *conv_transposed_rows(tj_tensor *rows, tj_tensor *w, tj_tensor *bias, const conv *c, int64_t N,
                                       const int64_t *in, const int64_t *out)
{
    if (!rows) return NULL;
    const int64_t *ws = tj_tensor_shape(w);
    int64_t g = c->groups, ocg = ws[1], wshape[3] = {g, ws[0] / g, ocg * prod(ws + 2, c->n)};
    tj_tensor *wt = tj_transpose(tj_reshape(w, wshape, 3), 1, 2);
    return add_bias(to_images(col2im(tj_bmm(wt, rows), c, ws + 2, N, g * ocg, in, out)), bias);
}

static tj_status convolution(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_dc_check(TJ_OPS(convolution), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *x = args[0].u.t, *w = args[1].u.t, *bias = tj_opt_tensor(&args[2]);
    conv c;
    conv_read(args, 3, tj_tensor_ndim(w) - 2, &c);
    const int64_t *out = m[0].shape + 2, *in = tj_tensor_shape(x) + 2;
    int64_t N = tj_tensor_shape(x)[0];
    if (tj_tensor_shape(x)[1] == 0) /* no channels in, none out (see the shape function) */
        return tj_dc_done(tj_zeros(m[0].shape, m[0].ndim, (int)m[0].dtype), outs);
    tj_tensor *y = args[6].u.b ? conv_transposed_rows(channel_rows(x, c.groups), w, bias, &c, N, in, out)
                               : conv_images(x, w, bias, &c, out);
    return tj_dc_done(y, outs);
}

/* The weight gradient [OC, C/groups, K..] of a plain convolution of x
 * whose output gradient is go [N, OC, out..]: the rows of go (`grows`
 * when made already, else channel_rows) times the columns of x
 * transposed, one product for the batch; or, when the per-image products
 * are smaller than go (C/groups * K < L: cnn's first layer), go[n] @
 * columns[n]^T per image and their sum over the images: no permuted copy
 * of go, the columns read in place either way. */
static tj_tensor *weight_grad(tj_tensor *x, tj_tensor *go, tj_tensor *grows, const conv *c, const int64_t *k,
                              const int64_t *out)
{
    int64_t N = tj_tensor_shape(x)[0], C = tj_tensor_shape(x)[1], OC = tj_tensor_shape(go)[1], g = c->groups;
    int64_t CK = C / g * prod(k, c->n), L = prod(out, c->n);
    int64_t shape[2 + MAX_SPATIAL] = {OC, C / g};
    for (int i = 0; i < c->n; i++) shape[2 + i] = k[i];
    if (CK < L || 3 + 2 * c->n > TJ_MAX_DIMS) { /* 3-D: per image (see im2col) */
        int64_t rows[3] = {N * g, OC / g, L}, parts[3] = {N, OC, CK}, images[1] = {0};
        tj_tensor *cols = im2col(x, c, k, out, true);
        tj_tensor *part = tj_bmm(tj_reshape(go, rows, 3), tj_transpose(cols, 1, 2));
        return tj_reshape(tj_sum_dim(tj_reshape(part, parts, 3), images, 1, false, -1), shape, 2 + c->n);
    }
    if (!grows) grows = channel_rows(go, g);
    return tj_reshape(tj_bmm(grows, tj_transpose(im2col(x, c, k, out, false), 1, 2)), shape, 2 + c->n);
}

static tj_status convolution_backward(const tj_value *args, tj_value *outs)
{
    tj_meta m[3];
    if (tj_dc_check(TJ_OPS(convolution_backward), args, m) != TJ_OK) return tj_last_status();
    tj_tensor *go = args[0].u.t, *x = args[1].u.t, *w = args[2].u.t;
    int n = tj_tensor_ndim(w) - 2;
    conv c;
    conv_read(args, 4, n, &c);
    const bool *mask = args[10].u.bools;
    const int64_t *k = tj_tensor_shape(w) + 2, *xs = tj_tensor_shape(x) + 2, *gs = tj_tensor_shape(go) + 2;
    int64_t N = tj_tensor_shape(x)[0];
    tj_tensor *gi = NULL, *gw = NULL;
    if (tj_tensor_shape(x)[1] == 0) { /* an output without channels: every gradient is zero */
        for (int i = 0; i < 3; i++) {
            outs[i] = tj_v_none();
            if (mask[i] && !(outs[i] = tj_v_tensor(tj_zeros(m[i].shape, m[i].ndim, (int)m[i].dtype))).u.t)
                return tj_last_status();
        }
        return TJ_OK;
    }
    if (!args[7].u.b) { /* plain: the gradient's rows feed the input gradient's product (and the weight's) */
        tj_tensor *grows = mask[0] ? channel_rows(go, c.groups) : NULL;
        if (mask[0]) gi = conv_transposed_rows(grows, w, NULL, &c, N, gs, xs);
        if (mask[1]) gw = weight_grad(x, go, grows, &c, k, gs);
    } else { /* transposed: a plain convolution of the gradient, x's rows */
        if (mask[0]) gi = conv_images(go, w, NULL, &c, xs);
        if (mask[1]) gw = weight_grad(go, x, NULL, &c, k, xs);
    }
    if ((mask[0] && !gi) || (mask[1] && !gw)) return tj_last_status();
    outs[0] = mask[0] ? tj_v_tensor(gi) : tj_v_none();
    outs[1] = mask[1] ? tj_v_tensor(gw) : tj_v_none();
    outs[2] = tj_v_none();
    if (mask[2]) {
        int64_t dims[1 + MAX_SPATIAL] = {0};
        for (int i = 0; i < n; i++) dims[1 + i] = 2 + i;
        tj_tensor *gb = tj_sum_dim(go, dims, 1 + n, false, -1);
        if (!gb) return tj_last_status();
        outs[2] = tj_v_tensor(gb);
    }
    return TJ_OK;
}

/* im2col and col2im (F.unfold, F.fold) as the convolution's columns and
 * their sums: args (self, [output_size,] kernel_size, dilation, padding,
 * stride) read as one group of 2 spatial dims; an unbatched self gets a
 * batch of one. torch._decomp 1.13 decomposes both, as gathers and an
 * index_put. */
static void fold_read(const tj_value *args, int at, conv *c, int64_t *k)
{
    *c = (conv){.n = 2, .groups = 1};
    for (int i = 0; i < 2; i++) {
        k[i] = args[at].u.ints[i];
        c->d[i] = args[at + 1].u.ints[i];
        c->p[i] = args[at + 2].u.ints[i];
        c->s[i] = args[at + 3].u.ints[i];
    }
}

static tj_status im2col_op(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(im2col, args, m);
    tj_tensor *x = args[0].u.t;
    conv c;
    int64_t k[2], out[2];
    fold_read(args, 1, &c, k);
    bool batched = tj_tensor_ndim(x) == 4;
    const int64_t *in = tj_tensor_shape(x) + tj_tensor_ndim(x) - 2;
    for (int i = 0; i < 2; i++) out[i] = (in[i] + 2 * c.p[i] - c.d[i] * (k[i] - 1) - 1) / c.s[i] + 1;
    tj_tensor *xb = batched ? x : tj_unsqueeze(x, 0);
    if (!xb) return tj_last_status();
    tj_tensor *cols = im2col(xb, &c, k, out, true);
    return tj_dc_done(batched ? cols : tj_view(cols, m[0].shape, m[0].ndim), outs);
}

static tj_status col2im_op(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(col2im, args, m);
    tj_tensor *x = args[0].u.t;
    conv c;
    int64_t k[2], blocks[2];
    const int64_t *out = args[1].u.ints;
    fold_read(args, 2, &c, k);
    for (int i = 0; i < 2; i++) blocks[i] = (out[i] + 2 * c.p[i] - c.d[i] * (k[i] - 1) - 1) / c.s[i] + 1;
    if (tj_tensor_ndim(x) == 2) x = tj_unsqueeze(x, 0);
    if (!x) return tj_last_status();
    const int64_t *xs = tj_tensor_shape(x);
    int64_t N = xs[0], C = xs[1] / (k[0] * k[1]), rows[3] = {1, xs[1], N * xs[2]}, perm[3] = {1, 0, 2};
    /* col2im views its columns flat: a copy unless they are laid out so */
    tj_tensor *cols = tj_contiguous(tj_reshape(tj_permute(x, perm, 3), rows, 3));
    tj_tensor *y = to_images(col2im(cols, &c, k, N, C, blocks, out));
    return tj_dc_done(tj_tensor_ndim(args[0].u.t) == 2 ? tj_view(y, m[0].shape, m[0].ndim) : y, outs);
}

void tj_register_conv_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(im2col), im2col_op, "im2col");
    tj_op_set_decomposition(TJ_OPS(col2im), col2im_op, "col2im");
    tj_op_set_decomposition(TJ_OPS(convolution), convolution, "convolution");
    tj_op_set_decomposition(TJ_OPS(convolution_backward), convolution_backward, "convolution_backward");
}
