/* The typed API of the transformer fast-path operators (include/tjit/ops.h). */
#include "internal.h"

#define T(x) tj_v_tensor(x)
#define I(x) tj_v_int(x)
#define B(x) tj_v_bool(x)
#define MASK_TYPE(has, v) ((has) ? I(v) : tj_v_none())

tj_status tj__native_multi_head_attention(tj_tensor *query, tj_tensor *key, tj_tensor *value, int64_t embed_dim,
                                          int64_t num_head, tj_tensor *qkv_weight, tj_tensor *qkv_bias,
                                          tj_tensor *proj_weight, tj_tensor *proj_bias, tj_tensor *mask,
                                          bool need_weights, bool average_attn_weights, bool has_mask_type,
                                          int64_t mask_type, tj_tensor **out, tj_tensor **weights)
{
    const tj_op *op = TJ_OPS(_native_multi_head_attention);
    const tj_value args[] = {T(query),      T(key),  T(value),         I(embed_dim),
                             I(num_head),   T(qkv_weight), T(qkv_bias), T(proj_weight),
                             T(proj_bias),  T(mask), B(need_weights),  B(average_attn_weights),
                             MASK_TYPE(has_mask_type, mask_type)};
    tj_value outs[TJ_MAX_RETURNS];
    if (out) *out = NULL;
    if (weights) *weights = NULL;
    tj_status st = tj_dispatch(op, args, op->nargs, outs);
    if (st != TJ_OK) return st;
    if (out) *out = outs[0].u.t;
    else tj_scope_drop(outs[0].u.t);
    if (outs[1].kind != TJ_V_TENSOR) return TJ_OK;
    if (weights) *weights = outs[1].u.t;
    else tj_scope_drop(outs[1].u.t);
    return TJ_OK;
}

tj_tensor *tj__transformer_encoder_layer_fwd(tj_tensor *src, int64_t embed_dim, int64_t num_heads,
                                             tj_tensor *qkv_weight, tj_tensor *qkv_bias, tj_tensor *proj_weight,
                                             tj_tensor *proj_bias, bool use_gelu, bool norm_first, double eps,
                                             tj_tensor *norm_weight_1, tj_tensor *norm_bias_1,
                                             tj_tensor *norm_weight_2, tj_tensor *norm_bias_2,
                                             tj_tensor *ffn_weight_1, tj_tensor *ffn_bias_1, tj_tensor *ffn_weight_2,
                                             tj_tensor *ffn_bias_2, tj_tensor *mask, bool has_mask_type,
                                             int64_t mask_type)
{
    const tj_op *op = TJ_OPS(_transformer_encoder_layer_fwd);
    const tj_value args[] = {T(src),          I(embed_dim),    I(num_heads),    T(qkv_weight),   T(qkv_bias),
                             T(proj_weight),  T(proj_bias),    B(use_gelu),     B(norm_first),   tj_v_float(eps),
                             T(norm_weight_1), T(norm_bias_1), T(norm_weight_2), T(norm_bias_2), T(ffn_weight_1),
                             T(ffn_bias_1),   T(ffn_weight_2), T(ffn_bias_2),   T(mask),
                             MASK_TYPE(has_mask_type, mask_type)};
    tj_value outs[TJ_MAX_RETURNS];
    return tj_dispatch(op, args, op->nargs, outs) == TJ_OK ? outs[0].u.t : NULL;
}
