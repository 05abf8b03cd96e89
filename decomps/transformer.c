/* _native_multi_head_attention and _transformer_encoder_layer_fwd
 * decomposed: the computation runtime/op_transformer.c shares with the
 * kernels, every step dispatched (addmm / t / view / permute / clone /
 * slice, native_layer_norm, gelu or relu, add, and attention as bmm,
 * masked_fill(-inf), _softmax, bmm), after the shape function's checks. */
#include "internal.h"
#include "op_transformer.h"

static tj_status native_multi_head_attention(const tj_value *args, tj_value *outs)
{
    tj_meta m[2] = {{0}};
    if (tj_meta__native_multi_head_attention(args, m) != TJ_OK) return tj_last_status();
    return tj_native_multi_head_attention_compute(args, false, outs);
}

static tj_status transformer_encoder_layer_fwd(const tj_value *args, tj_value *outs)
{
    tj_meta m[1] = {{0}};
    if (tj_meta__transformer_encoder_layer_fwd(args, m) != TJ_OK) return tj_last_status();
    return tj_transformer_encoder_layer_fwd_compute(args, false, outs);
}

void tj_register_transformer_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(_native_multi_head_attention), native_multi_head_attention,
                            "_native_multi_head_attention");
    tj_op_set_decomposition(TJ_OPS(_transformer_encoder_layer_fwd), transformer_encoder_layer_fwd,
                            "_transformer_encoder_layer_fwd");
}
