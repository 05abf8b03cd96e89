/* Indexing operators (op_index.def): gather, scatter_add, index_select,
 * index_add, unfold (op_index.c), index.Tensor and index_put
 * (op_index_advanced.c). */
#ifndef TJIT_RUNTIME_OP_INDEX_H
#define TJIT_RUNTIME_OP_INDEX_H

#include "internal.h"

TJ_OP_DECLARE(gather)
TJ_OP_DECLARE(scatter_add)
TJ_OP_DECLARE(scatter_src)
TJ_OP_DECLARE(scatter_value)
TJ_OP_DECLARE(scatter_reduce_two)
TJ_OP_DECLARE(scatter_reduce)
TJ_OP_DECLARE(scatter_value_reduce)
TJ_OP_DECLARE(index_copy)
TJ_OP_DECLARE(index_fill_int_Scalar)
TJ_OP_DECLARE(index_fill_int_Tensor)
TJ_OP_DECLARE(index_select)
TJ_OP_DECLARE(index_add)
TJ_OP_DECLARE(index_Tensor)
TJ_OP_DECLARE(index_put)
tj_status tj_meta_unfold(const tj_value *args, tj_meta *outs);

#endif
