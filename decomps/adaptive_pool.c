/* Decompositions of adaptive average pooling into primitives, after
 * torch._decomp's _adaptive_avg_pool2d (1.13). Output i of a dim of `in`
 * elements pooled to `out` averages the window [start(i), end(i)),
 * start(i) = floor(i * in / out), end(i) = ceil((i + 1) * in / out):
 *   _adaptive_avg_pool2d: when both output sizes divide the input's, the
 *     windows are regular: avg_pool2d with kernel = stride = in / out.
 *     Otherwise the windows are gathered (index_select along H, then W)
 *     into [.., OH, KH, OW, KW], KH / KW the longest window, taps past the
 *     end of a shorter window zeroed (where), summed in float64 and divided
 *     by the window's height, then its width, as the kernel does, and
 *     rounded once. The sum runs in another order than the kernel's
 *     (float64 results may differ in the last bit; float32 ones are
 *     rounded from float64 sums alike);
 *   _adaptive_avg_pool2d_backward: grad / height / width of each window
 *     (float64), spread over the window's taps and added into the input
 *     plane by one scatter_add, whose order for each input element is the
 *     kernel's (windows in row-major output order); rounded once.
 * Index, mask and size tables are constants made once when tracing. */
#include <string.h>

#include "op_nn.h"
#include "util.h"

/* The windows of one dim: `out` of them over `in` elements, the longest
 * `taps` long; uneven when some are shorter (their extra taps repeat the
 * window's last element and are masked). */
typedef struct axis {
    int64_t in, out, taps;
    bool uneven;
} axis;

static axis axis_of(int64_t in, int64_t out)
{
    axis a = {in, out, 0, false};
    int64_t shortest = INT64_MAX, s, e;
    for (int64_t i = 0; i < out; i++) {
        tj_adaptive_window(i, out, in, &s, &e);
        if (e - s > a.taps) a.taps = e - s;
        if (e - s < shortest) shortest = e - s;
    }
    a.uneven = out > 0 && shortest != a.taps;
    return a;
}

/* Input position of tap k of window i (the window's last for a tap past
 * its end), and whether the tap is inside the window. */
static int64_t tap_position(const axis *a, int64_t i, int64_t k, bool *inside)
{
    int64_t s, e;
    tj_adaptive_window(i, a->out, a->in, &s, &e);
    *inside = s + k < e;
    return *inside ? s + k : e - 1;
}

/* [out * taps] int64: the input position of every tap, window-major. */
static tj_tensor *tap_index(const axis *a)
{
    int64_t n = a->out * a->taps;
    tj_tensor *t = tj_tensor_empty(TJ_INT64, 1, &n);
    if (!t) return NULL;
    int64_t *e = tj_tensor_data(t);
    bool inside;
    for (int64_t i = 0; i < a->out; i++)
        for (int64_t k = 0; k < a->taps; k++) *e++ = tap_position(a, i, k, &inside);
    return t;
}

/* x with the taps past a shorter window's end zeroed: `shape` views the
 * [out, taps] mask so that it lines up with x's window and tap dims. */
static tj_tensor *mask_taps(tj_tensor *x, const axis *a, int ndim, const int64_t *shape)
{
    if (!a->uneven || !x) return x;
    tj_tensor *m = tj_tensor_empty(TJ_BOOL, ndim, shape);
    if (!m) return NULL;
    uint8_t *e = tj_tensor_data(m);
    bool inside;
    for (int64_t i = 0; i < a->out; i++)
        for (int64_t k = 0; k < a->taps; k++, e++) {
            tap_position(a, i, k, &inside);
            *e = inside;
        }
    return tj_where(m, x, tj_dc_number(0.0, tj_tensor_dtype(x)));
}

/* x [.., OH, OW] divided by each window's height, then by its width (as
 * float64 constants [OH, 1] and [OW]). */
static tj_tensor *divide_by_sizes(tj_tensor *x, const axis *h, const axis *w)
{
    const axis *ax[2] = {h, w};
    for (int d = 0; d < 2 && x; d++) {
        int64_t shape[2] = {ax[d]->out, 1};
        tj_tensor *len = tj_tensor_empty(TJ_FLOAT64, 2 - d, shape);
        if (!len) return NULL;
        double *e = tj_tensor_data(len);
        int64_t s, end;
        for (int64_t i = 0; i < ax[d]->out; i++, e++) {
            tj_adaptive_window(i, ax[d]->out, ax[d]->in, &s, &end);
            *e = (double)(end - s);
        }
        x = tj_div(x, len);
    }
    return x;
}

/* A tensor's leading dims (all but the last two) followed by `tail`. */
static int with_lead(const tj_tensor *t, const int64_t *tail, int n_tail, int64_t *shape)
{
    int lead = tj_tensor_ndim(t) - 2;
    memcpy(shape, tj_tensor_shape(t), sizeof(int64_t) * (size_t)lead);
    memcpy(shape + lead, tail, sizeof(int64_t) * (size_t)n_tail);
    return lead + n_tail;
}

static tj_status adaptive_avg_pool2d(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(_adaptive_avg_pool2d, args, m);
    tj_tensor *x = args[0].u.t;
    int nd = tj_tensor_ndim(x);
    const int64_t *in = tj_tensor_shape(x) + nd - 2, *out = m[0].shape + nd - 2;
    /* avg_pool2d refuses empty channels */
    if (tj_tensor_numel(x) > 0 && out[0] > 0 && out[1] > 0 && in[0] % out[0] == 0 && in[1] % out[1] == 0) {
        int64_t k[2] = {in[0] / out[0], in[1] / out[1]}, pad[2] = {0, 0};
        return tj_dc_done(tj_avg_pool2d(x, k, k, pad, false, true, 0), outs);
    }
    axis h = axis_of(in[0], out[0]), w = axis_of(in[1], out[1]);
    int64_t windows[4] = {h.out, h.taps, w.out, w.taps}, shape[TJ_MAX_DIMS], taps[2] = {-3, -1};
    int wd = with_lead(x, windows, 4, shape);
    tj_tensor *win = tj_index_select(tj_index_select(x, nd - 2, tap_index(&h)), nd - 1, tap_index(&w));
    win = tj_view(win, shape, wd);
    win = mask_taps(win, &h, 4, (int64_t[]){h.out, h.taps, 1, 1});
    win = mask_taps(win, &w, 2, (int64_t[]){w.out, w.taps});
    tj_tensor *mean = divide_by_sizes(tj_sum_dim(win, taps, 2, false, TJ_FLOAT64), &h, &w);
    return tj_dc_done(tj_dc_to(mean, tj_tensor_dtype(x)), outs);
}

/* [OH * KH * OW * KW] int64: the flat input position y * W + x of every
 * tap (h tap-major over w). */
static tj_tensor *plane_index(const axis *h, const axis *w)
{
    int64_t n = h->out * h->taps * w->out * w->taps;
    tj_tensor *t = tj_tensor_empty(TJ_INT64, 1, &n);
    if (!t) return NULL;
    int64_t *e = tj_tensor_data(t);
    bool inside;
    for (int64_t i = 0; i < h->out; i++)
        for (int64_t k = 0; k < h->taps; k++) {
            int64_t y = tap_position(h, i, k, &inside);
            for (int64_t j = 0; j < w->out; j++)
                for (int64_t l = 0; l < w->taps; l++) *e++ = y * w->in + tap_position(w, j, l, &inside);
        }
    return t;
}

static tj_status adaptive_avg_pool2d_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(_adaptive_avg_pool2d_backward, args, m);
    tj_tensor *g = args[0].u.t, *self = args[1].u.t;
    int nd = tj_tensor_ndim(self);
    const int64_t *in = tj_tensor_shape(self) + nd - 2, *out = tj_tensor_shape(g) + nd - 2;
    axis h = axis_of(in[0], out[0]), w = axis_of(in[1], out[1]);
    int64_t one_tap[4] = {h.out, 1, w.out, 1}, windows[4] = {h.out, h.taps, w.out, w.taps};
    int64_t n_taps = h.out * h.taps * w.out * w.taps, plane = in[0] * in[1];
    int64_t s1[TJ_MAX_DIMS], s4[TJ_MAX_DIMS], flat[TJ_MAX_DIMS], planes[TJ_MAX_DIMS];
    int wd = with_lead(self, one_tap, 4, s1);
    with_lead(self, windows, 4, s4);
    int fd = with_lead(self, &n_taps, 1, flat);
    with_lead(self, &plane, 1, planes);
    tj_tensor *share = divide_by_sizes(tj_dc_to(g, TJ_FLOAT64), &h, &w);
    tj_tensor *spread = tj_expand(tj_view(share, s1, wd), s4, wd);
    spread = mask_taps(spread, &h, 4, (int64_t[]){h.out, h.taps, 1, 1});
    spread = mask_taps(spread, &w, 2, (int64_t[]){w.out, w.taps});
    int64_t index_shape[TJ_MAX_DIMS];
    for (int d = 0; d < fd; d++) index_shape[d] = d == fd - 1 ? n_taps : 1;
    tj_tensor *index = tj_expand(tj_view(plane_index(&h, &w), index_shape, fd), flat, fd);
    tj_tensor *zeros = tj_expand(tj_full(NULL, 0, tj_v_int(0), TJ_FLOAT64), planes, fd);
    tj_tensor *r = tj_scatter_add(zeros, fd - 1, index, tj_reshape(spread, flat, fd));
    return tj_dc_done(tj_dc_to(tj_view(r, tj_tensor_shape(self), nd), tj_tensor_dtype(self)), outs);
}

void tj_register_adaptive_pool_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(_adaptive_avg_pool2d), adaptive_avg_pool2d, "_adaptive_avg_pool2d");
    tj_op_set_decomposition(TJ_OPS(_adaptive_avg_pool2d_backward), adaptive_avg_pool2d_backward,
                            "_adaptive_avg_pool2d_backward");
}
