/* Decompositions of the embedding-bag operators. _embedding_bag itself is a
 * primitive: its max mode returns, per bag and column, the row of the first
 * maximum (a scatter_reduce amax gives the value, not where it came from;
 * finding the row takes a second pass of comparisons and an amin over
 * positions), and its offsets are validated by value; its kernel reads each
 * weight row once, bag by bag. The others, with n indices, B bags and rows of
 * D values:
 *   _embedding_bag_forward_only: _embedding_bag, with bag_size and
 *     max_indices zeros [offsets] in sum mode (ATen's forward-only shapes);
 *   _embedding_bag_dense_backward, sum / mean: the gradient rows of each
 *     position's bag (gather over offset2bag) scaled by per_sample_weights,
 *     1 / ATen 1.13's divisor (scale_grad_by_freq) and 1 / bag_size (mean,
 *     when nonzero), zero at padding_idx and outside [0, B), added into
 *     zeros [num_weights, D] by scatter_add in position order (the kernel's);
 *     max: scatter_add of the gradient at max_indices, bags of size 0 adding
 *     zeros to row 0;
 *   _embedding_bag_per_sample_weights_backward: sum over D of the gradient row
 *     of the bag times the weight row of the index (two gathers), zero at
 *     padding_idx and outside [0, B); an empty offset2bag is rebuilt as ATen's
 *     make_offset2bag: cumsum of scatter_add(zeros [n + 1], offsets, 1) - 1. */
#include "kernels/embedding_bag.h"
#include "util.h"

/* index [n] as [n, D] (stride 0 along D). */
static tj_tensor *rows_of(tj_tensor *index, int64_t D)
{
    int64_t shape[2] = {index ? tj_tensor_shape(index)[0] : 0, D};
    return tj_expand(tj_unsqueeze(index, 1), shape, 2);
}

static tj_tensor *zero_of(tj_dtype dt) { return tj_scalar_tensor(tj_v_int(0), (int)dt); }

/* Whether each position adds: not padding_idx and its bag in [0, B). */
static tj_tensor *counted(tj_tensor *indices, tj_tensor *offset2bag, int64_t pad, int64_t bags)
{
    tj_tensor *in_bag = tj_logical_and(tj_ge_scalar(offset2bag, tj_v_int(0)), tj_lt_scalar(offset2bag, tj_v_int(bags)));
    return tj_logical_and(tj_ne_scalar(indices, tj_v_int(pad)), in_bag);
}

/* offset2bag clamped into [0, B) for gathers (the positions outside are
 * masked by `counted`). */
static tj_tensor *bag_rows(tj_tensor *offset2bag, int64_t bags)
{
    return tj_clamp(offset2bag, tj_v_int(0), tj_v_int(bags > 0 ? bags - 1 : 0));
}

static tj_status forward_only(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(_embedding_bag_forward_only, args, m);
    tj_value r[TJ_MAX_RETURNS];
    tj_status st = tj_dispatch(TJ_OPS(_embedding_bag), args, 9, r);
    if (st != TJ_OK) return st;
    for (int i = 0; i < 4; i++) outs[i] = r[i];
    if (args[4].u.i == TJ_EMBEDDING_BAG_SUM) {
        tj_scope_drop(r[2].u.t);
        tj_scope_drop(r[3].u.t);
        outs[2] = tj_v_tensor(tj_zeros(m[2].shape, m[2].ndim, TJ_INT64));
        outs[3] = tj_v_tensor(tj_zeros(m[3].shape, m[3].ndim, TJ_INT64));
        if (!outs[2].u.t || !outs[3].u.t) return tj_last_status();
    }
    return TJ_OK;
}

static tj_tensor *max_backward(tj_tensor *g, tj_tensor *bag_size, tj_tensor *max_indices, const tj_meta *m)
{
    tj_tensor *full = tj_unsqueeze(tj_gt_scalar(bag_size, tj_v_int(0)), 1);
    tj_tensor *rows = tj_where(full, max_indices, tj_scalar_tensor(tj_v_int(0), TJ_INT64));
    tj_tensor *src = tj_where(full, g, zero_of(m[0].dtype));
    return tj_scatter_add(tj_zeros(m[0].shape, 2, (int)m[0].dtype), 0, rows, src);
}

/* Per position, ATen 1.13's scale_grad_by_freq divisor (the kernel's
 * freq_divisors): counts[sorted[rank of the index among the distinct ones]]. */
static tj_tensor *freq_divisors(tj_tensor *indices, int64_t num)
{
    int64_t nshape[1] = {num};
    tj_tensor *counts = tj_scatter_add(tj_zeros(nshape, 1, TJ_INT64), 0, indices,
                                       tj_ones(tj_tensor_shape(indices), 1, TJ_INT64));
    tj_tensor *present = tj_to_copy(tj_gt_scalar(counts, tj_v_int(0)), TJ_INT64), *sorted = NULL;
    tj_tensor *rank = tj_sub_scalar(tj_cumsum(present, 0, TJ_INT64), tj_v_int(1));
    if (tj_sort(indices, 0, false, &sorted, NULL) != TJ_OK) return NULL;
    return tj_gather(counts, 0, tj_gather(sorted, 0, tj_gather(rank, 0, indices)));
}

static tj_status dense_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(_embedding_bag_dense_backward, args, m);
    tj_tensor *g = args[0].u.t, *indices = args[1].u.t, *o2b = args[2].u.t, *bag_size = args[3].u.t;
    int64_t num = args[5].u.i, mode = args[7].u.i, pad = args[9].u.i, bags = tj_tensor_shape(g)[0], D = m[0].shape[1];
    tj_dtype dt = m[0].dtype;
    if (mode == TJ_EMBEDDING_BAG_MAX) return tj_dc_done(max_backward(g, bag_size, args[4].u.t, m), outs);
    if (bags == 0) return tj_dc_done(tj_zeros(m[0].shape, 2, (int)dt), outs); /* no row to gather */
    tj_tensor *bag = bag_rows(o2b, bags), *scale = NULL;
    if (args[8].kind == TJ_V_TENSOR) scale = args[8].u.t;
    if (args[6].u.b) {
        tj_tensor *per = tj_dc_to(freq_divisors(indices, num), dt);
        scale = scale ? tj_div(scale, per) : tj_div(tj_dc_number(1, dt), per);
    }
    if (mode == TJ_EMBEDDING_BAG_MEAN) {
        tj_tensor *size = tj_gather(bag_size, 0, bag);
        tj_tensor *div = tj_dc_to(tj_where(tj_eq_scalar(size, tj_v_int(0)), tj_scalar_tensor(tj_v_int(1), TJ_INT64), size), dt);
        scale = scale ? tj_div(scale, div) : tj_div(tj_dc_number(1, dt), div);
    }
    tj_tensor *rows = tj_gather(tj_dc_to(g, dt), 0, rows_of(bag, D));
    if (scale) rows = tj_mul(rows, tj_unsqueeze(scale, 1));
    rows = tj_where(tj_unsqueeze(counted(indices, o2b, pad, bags), 1), rows, zero_of(dt));
    return tj_dc_done(tj_scatter_add(tj_zeros(m[0].shape, 2, (int)dt), 0, rows_of(indices, D), rows), outs);
}

/* ATen's make_offset2bag for n indices. */
static tj_tensor *make_offset2bag(tj_tensor *offsets, int64_t n)
{
    int64_t size[1] = {n + 1};
    tj_tensor *starts = tj_scatter_add(tj_zeros(size, 1, TJ_INT64), 0, offsets,
                                       tj_ones(tj_tensor_shape(offsets), 1, TJ_INT64));
    tj_tensor *bags = tj_sub_scalar(tj_cumsum(starts, 0, TJ_INT64), tj_v_int(1));
    return tj_slice(bags, 0, true, 0, true, n, 1);
}

static tj_status psw_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(_embedding_bag_per_sample_weights_backward, args, m);
    tj_tensor *g = args[0].u.t, *w = args[1].u.t, *indices = args[2].u.t, *o2b = args[4].u.t;
    int64_t n = tj_tensor_numel(indices), bags = tj_tensor_shape(g)[0], D = tj_tensor_shape(g)[1], last[1] = {1};
    if (bags == 0) return tj_dc_done(tj_zeros(m[0].shape, 1, (int)m[0].dtype), outs); /* no row to gather */
    if (tj_tensor_numel(o2b) == 0) o2b = make_offset2bag(args[3].u.t, n);
    tj_tensor *grows = tj_gather(g, 0, rows_of(bag_rows(o2b, bags), D));
    tj_tensor *wrows = tj_gather(w, 0, rows_of(indices, D));
    tj_tensor *dots = tj_sum_dim(tj_mul(grows, wrows), last, 1, false, (int)m[0].dtype);
    return tj_dc_done(tj_where(counted(indices, o2b, args[6].u.i, bags), dots, zero_of(m[0].dtype)), outs);
}

void tj_register_embedding_bag_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(_embedding_bag_forward_only), forward_only, "embedding_bag_forward_only");
    tj_op_set_decomposition(TJ_OPS(_embedding_bag_dense_backward), dense_backward, "embedding_bag_dense_backward");
    tj_op_set_decomposition(TJ_OPS(_embedding_bag_per_sample_weights_backward), psw_backward,
                            "embedding_bag_per_sample_weights_backward");
}
