/* aten::_native_multi_head_attention and aten::_transformer_encoder_layer_fwd
 * (op_transformer.c): the shape functions and kernels the table binds, and
 * the computation the kernels and the decompositions (decomps/transformer.c)
 * share. */
#ifndef TJIT_RUNTIME_OP_TRANSFORMER_H
#define TJIT_RUNTIME_OP_TRANSFORMER_H

#include "internal.h"

TJ_OP_DECLARE(_native_multi_head_attention)
TJ_OP_DECLARE(_transformer_encoder_layer_fwd)

/** Computes the operator's results from its checked arguments (the shape
 * function has accepted them) in the innermost open scope, into outs (one
 * value per schema return; TJ_V_NONE for the attention weights when
 * need_weights is false), attention written out as bmm, masked_fill,
 * _softmax, bmm. `kernel` false: every step goes through tj_dispatch (the
 * decomposition); true: through tj_dispatch_kernel (the kernel, below the
 * modes). Returns the first failing step's status. */
tj_status tj_native_multi_head_attention_compute(const tj_value *args, bool kernel, tj_value *outs);
tj_status tj_transformer_encoder_layer_fwd_compute(const tj_value *args, bool kernel, tj_value *outs);

#endif
