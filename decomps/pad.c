/* Decompositions of reflection / replication padding and their backward
 * operators, as torch._decomp writes them from PyTorch 2.0 on (1.13 has
 * none): along each padded dim of input size n, the input positions the
 * output reads are built from arange(-before, n + after):
 *   reflect:   (n - 1) - |(n - 1) - |k||
 *   replicate: clamp(k, 0, n - 1)
 * The forward gathers them with index_select, one padded dim at a time; the
 * backward adds grad_output into zeros at them with index_add, the last
 * dim first (the kernel adds in row-major order: float32 sums may round
 * differently). */
#include "util.h"

/* The input positions read along a padded dim of size n. */
static tj_tensor *pad_positions(bool reflect, int64_t before, int64_t after, int64_t n)
{
    tj_tensor *k = tj_arange(tj_v_int(-before), tj_v_int(n + after), tj_v_int(1), TJ_INT64);
    if (!reflect) return tj_clamp(k, tj_v_int(0), tj_v_int(n - 1));
    tj_tensor *inner = tj_rsub_scalar(tj_abs(k), tj_v_int(n - 1), tj_v_int(1));
    return tj_rsub_scalar(tj_abs(inner), tj_v_int(n - 1), tj_v_int(1));
}

/* args: (self, padding); dims padded dims */
static tj_status pad_forward(const tj_op *op, bool reflect, int dims, const tj_value *args, tj_value *outs)
{
    tj_meta m[TJ_MAX_RETURNS];
    if (tj_dc_check(op, args, m) != TJ_OK) return tj_last_status();
    tj_tensor *x = args[0].u.t;
    int nd = tj_tensor_ndim(x);
    for (int k = dims - 1; k >= 0 && x; k--) { /* k = 0: the last dim */
        int d = nd - 1 - k;
        const int64_t *pad = args[1].u.ints + 2 * k;
        x = tj_index_select(x, d, pad_positions(reflect, pad[0], pad[1], tj_tensor_shape(args[0].u.t)[d]));
    }
    return tj_dc_done(x, outs);
}

/* args: (grad_output, self, padding) */
static tj_status pad_backward(const tj_op *op, bool reflect, int dims, const tj_value *args, tj_value *outs)
{
    tj_meta m[TJ_MAX_RETURNS];
    if (tj_dc_check(op, args, m) != TJ_OK) return tj_last_status();
    tj_tensor *g = args[0].u.t;
    const tj_tensor *self = args[1].u.t;
    int nd = tj_tensor_ndim(self);
    int64_t shape[TJ_MAX_DIMS];
    memcpy(shape, tj_tensor_shape(g), sizeof(int64_t) * (size_t)nd);
    for (int k = 0; k < dims && g; k++) {
        int d = nd - 1 - k;
        int64_t n = tj_tensor_shape(self)[d];
        const int64_t *pad = args[2].u.ints + 2 * k;
        shape[d] = n;
        g = tj_index_add(tj_zeros(shape, nd, (int)m[0].dtype), d, pad_positions(reflect, pad[0], pad[1], n), g,
                         tj_v_int(1));
    }
    return tj_dc_done(g, outs);
}

#define PAD_DECOMP(ident, reflect, dims)                                                               \
    static tj_status ident(const tj_value *args, tj_value *outs)                                       \
    {                                                                                                  \
        return pad_forward(TJ_OPS(ident), reflect, dims, args, outs);                                  \
    }                                                                                                  \
    static tj_status ident##_backward(const tj_value *args, tj_value *outs)                            \
    {                                                                                                  \
        return pad_backward(TJ_OPS(ident##_backward), reflect, dims, args, outs);                      \
    }
PAD_DECOMP(reflection_pad1d, true, 1)
PAD_DECOMP(reflection_pad2d, true, 2)
PAD_DECOMP(replication_pad1d, false, 1)
PAD_DECOMP(replication_pad2d, false, 2)

void tj_register_pad_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(reflection_pad1d), reflection_pad1d, "reflection_pad1d");
    tj_op_set_decomposition(TJ_OPS(reflection_pad2d), reflection_pad2d, "reflection_pad2d");
    tj_op_set_decomposition(TJ_OPS(replication_pad1d), replication_pad1d, "replication_pad1d");
    tj_op_set_decomposition(TJ_OPS(replication_pad2d), replication_pad2d, "replication_pad2d");
    tj_op_set_decomposition(TJ_OPS(reflection_pad1d_backward), reflection_pad1d_backward, "reflection_pad1d_backward");
    tj_op_set_decomposition(TJ_OPS(reflection_pad2d_backward), reflection_pad2d_backward, "reflection_pad2d_backward");
    tj_op_set_decomposition(TJ_OPS(replication_pad1d_backward), replication_pad1d_backward,
                            "replication_pad1d_backward");
    tj_op_set_decomposition(TJ_OPS(replication_pad2d_backward), replication_pad2d_backward,
                            "replication_pad2d_backward");
}
