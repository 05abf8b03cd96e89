/* Implicit softmax and normalisation composites, as ATen 1.13 writes them
 * (SoftMax.cpp, layer_norm.cpp): softmax.int / log_softmax.int convert to
 * the requested dtype, then call _softmax / _log_softmax; layer_norm is
 * native_layer_norm's first output. */
#include "internal.h"

static tj_status done(tj_tensor *r, tj_value *outs)
{
    if (!r) return tj_last_status();
    outs[0] = tj_v_tensor(r);
    return TJ_OK;
}

/* self converted to the optional dtype argument (self itself when absent or
 * already of that dtype, as Tensor::to does). */
static tj_tensor *to_dtype(tj_tensor *self, const tj_value *dtype)
{
    if (dtype->kind != TJ_V_DTYPE || dtype->u.dtype == tj_tensor_dtype(self)) return self;
    return tj_to_copy(self, (int)dtype->u.dtype);
}

static tj_status softmax(const tj_value *args, tj_value *outs)
{
    return done(tj__softmax(to_dtype(args[0].u.t, &args[2]), args[1].u.i, false), outs);
}

static tj_status log_softmax(const tj_value *args, tj_value *outs)
{
    return done(tj__log_softmax(to_dtype(args[0].u.t, &args[2]), args[1].u.i, false), outs);
}

static tj_status layer_norm(const tj_value *args, tj_value *outs)
{
    tj_tensor *w = args[2].kind == TJ_V_TENSOR ? args[2].u.t : NULL, *b = args[3].kind == TJ_V_TENSOR ? args[3].u.t : NULL;
    tj_tensor *out = NULL;
    tj_status st = tj_native_layer_norm(args[0].u.t, args[1].u.ints, args[1].n, w, b, tj_value_as_double(&args[4]),
                                        &out, NULL, NULL);
    return st != TJ_OK ? st : done(out, outs);
}

void tj_register_nn_norm_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(softmax_int), softmax, "softmax");
    tj_op_set_decomposition(TJ_OPS(log_softmax_int), log_softmax, "log_softmax");
    tj_op_set_decomposition(TJ_OPS(layer_norm), layer_norm, "layer_norm");
}
