/* Decompositions of tril, triu and repeat, after torch._refs (PyTorch 1.13):
 *   tril, triu -> where(mask, self, 0), the mask comparing
 *                 arange(N)[None, :] - arange(M)[:, None] with diagonal
 *                 (torch._refs uses logical_and for bool self; where with a
 *                 bool 0 is the same and already a primitive)
 *   repeat     -> view with a size-1 dim before each repeated dim, expand,
 *                 clone, view as the result (torch._refs expands and clones
 *                 the same tiles, then permutes and reshapes)
 * (tril_ / triu_ are in decomps/inplace_ops.c). The operators' shape
 * functions check the arguments first. */
#include "util.h"

static tj_status trilu(const tj_value *args, const tj_meta *m, bool lower, tj_value *outs)
{
    int64_t h = m[0].shape[m[0].ndim - 2], w = m[0].shape[m[0].ndim - 1];
    tj_tensor *cols = tj_unsqueeze(tj_arange(tj_v_int(0), tj_v_int(w), tj_v_int(1), TJ_INT64), -2);
    tj_tensor *rows = tj_unsqueeze(tj_arange(tj_v_int(0), tj_v_int(h), tj_v_int(1), TJ_INT64), -1);
    tj_tensor *diff = tj_sub(cols, rows);
    tj_tensor *mask = lower ? tj_le_scalar(diff, args[1]) : tj_ge_scalar(diff, args[1]);
    return tj_dc_done(tj_where(mask, args[0].u.t, tj_scalar_tensor(tj_v_int(0), (int)m[0].dtype)), outs);
}

static tj_status tril(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(tril, args, m);
    return trilu(args, m, true, outs);
}

static tj_status triu(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(triu, args, m);
    return trilu(args, m, false, outs);
}

/* x viewed as `view` (nv dims), expanded to `expand`, copied, and viewed
 * as `shape` (n dims). */
static tj_tensor *tile(tj_tensor *x, int nv, const int64_t *view, const int64_t *expand, int n, const int64_t *shape)
{
    return tj_reshape(tj_clone(tj_expand(tj_reshape(x, view, nv), expand, nv)), shape, n);
}

/* Every repeated dim gets a size-1 dim before it, expanded to the repeat
 * count: one copy. Past TJ_MAX_DIMS dims that way, one copy per repeated
 * dim d instead, through the view [before d, 1, size d, after d]. */
static tj_status repeat(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(repeat, args, m);
    tj_tensor *x = args[0].u.t;
    const int64_t *reps = args[1].u.ints;
    int n = m[0].ndim, lead = n - tj_tensor_ndim(x), k = 0;
    int64_t numel = 1, size[TJ_MAX_DIMS], view[TJ_MAX_DIMS], expand[TJ_MAX_DIMS];
    for (int d = 0; d < n; d++) {
        size[d] = d < lead ? 1 : tj_tensor_shape(x)[d - lead];
        numel *= m[0].shape[d];
        k += reps[d] != 1;
    }
    /* a repeat of 0 (or a negative one of a size-0 dim): no tile to copy */
    if (numel == 0) return tj_dc_done(tj_full(m[0].shape, n, tj_v_int(0), (int)m[0].dtype), outs);
    if (n + k <= TJ_MAX_DIMS) {
        int nv = 0;
        for (int d = 0; d < n; d++) {
            if (reps[d] != 1) {
                view[nv] = 1;
                expand[nv++] = reps[d];
            }
            view[nv] = expand[nv] = size[d];
            nv++;
        }
        return tj_dc_done(tile(x, nv, view, expand, n, m[0].shape), outs);
    }
    for (int d = 0; d < n && x; d++) {
        if (reps[d] == 1) continue;
        int64_t before = 1, s = size[d], after = 1;
        for (int j = 0; j < d; j++) before *= size[j];
        for (int j = d + 1; j < n; j++) after *= size[j];
        size[d] *= reps[d];
        x = tile(x, 4, (int64_t[]){before, 1, s, after}, (int64_t[]){before, reps[d], s, after}, n, size);
    }
    return tj_dc_done(x, outs);
}

void tj_register_tri_repeat_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(tril), tril, "tril");
    tj_op_set_decomposition(TJ_OPS(triu), triu, "triu");
    tj_op_set_decomposition(TJ_OPS(repeat), repeat, "repeat");
}
