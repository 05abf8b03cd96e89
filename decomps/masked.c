/* Decompositions of masked_select and masked_scatter into index.Tensor,
 * cumsum and where, and of where(condition) into nonzero and its columns
 * (nonzero, whose result is its input's positions, stays a primitive). */
#include "util.h"

/* self and mask broadcast together (a 0-dim pair as [1]: a bool mask index
 * needs a dim), into (nd, shape). */
static int broadcast_of(const tj_tensor *self, const tj_tensor *mask, int64_t *shape)
{
    int nd;
    tj_broadcast_shapes("masked", self->ndim, self->shape, mask->ndim, mask->shape, &nd, shape); /* checked */
    if (nd == 0) shape[nd++] = 1;
    return nd;
}

/* masked_select(self, mask) = self[mask], both expanded to their broadcast
 * shape: the true positions in row-major order. */
static tj_status masked_select(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(masked_select, args, m);
    tj_tensor *self = args[0].u.t, *mask = args[1].u.t;
    int64_t shape[TJ_MAX_DIMS];
    int nd = broadcast_of(self, mask, shape);
    tj_tensor *ix[1] = {tj_expand(mask, shape, nd)};
    return tj_dc_done(tj_index(tj_expand(self, shape, nd), ix, 1), outs);
}

/* masked_scatter(self, mask, source): the k-th true position (in row-major
 * order) reads source's k-th element, as torch._decomp (2.x) through
 * cumsum, but from source behind one leading pad element: the k-th true
 * position reads index k + 1 (the inclusive cumsum), false ones the pad
 * (0), then where(mask, read, self). A source with too few elements makes
 * the read out of range, an error (naming index.Tensor), as the kernel's. */
static tj_status masked_scatter(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(masked_scatter, args, m);
    tj_tensor *self = args[0].u.t, *mask = args[1].u.t, *source = args[2].u.t;
    int64_t flat = -1, one = 1;
    tj_tensor *mask_b = tj_expand(mask, m[0].shape, m[0].ndim), *mask_flat = tj_reshape(mask_b, &flat, 1);
    tj_tensor *pos = tj_cumsum(mask_flat, 0, TJ_INT64);
    tj_tensor *ix[1] = {tj_where(mask_flat, pos, tj_scalar_tensor(tj_v_int(0), TJ_INT64))};
    tj_tensor *padded = tj_cat((tj_tensor *[]){tj_zeros(&one, 1, (int)source->dtype), tj_reshape(source, &flat, 1)}, 2, 0);
    tj_tensor *read = tj_view(tj_index(padded, ix, 1), m[0].shape, m[0].ndim);
    return tj_dc_done(tj_where(mask_b, read, self), outs);
}

/* where(condition): tj_where_condition's views; a Tensor[] result borrows
 * this array, valid until the thread's next call. */
static _Thread_local tj_tensor *where_pieces[TJ_MAX_DIMS];

static tj_status where_condition(const tj_value *args, tj_value *outs)
{
    int n = 0;
    if (tj_where_condition(args[0].u.t, where_pieces, TJ_MAX_DIMS, &n) != TJ_OK) return tj_last_status();
    outs[0] = tj_v_tensors(where_pieces, n);
    return TJ_OK;
}

void tj_register_masked_decompositions(void);
void tj_register_masked_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(masked_select), masked_select, "masked_select");
    tj_op_set_decomposition(TJ_OPS(masked_scatter), masked_scatter, "masked_scatter");
    tj_op_set_decomposition(TJ_OPS(where), where_condition, "where_condition");
}
