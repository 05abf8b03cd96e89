/* Indexing operators (op_index.def): gather, scatter_add, unfold. */
#ifndef TJIT_RUNTIME_OP_INDEX_H
#define TJIT_RUNTIME_OP_INDEX_H

#include "internal.h"

tj_status tj_meta_gather(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_gather(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_scatter_add(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_scatter_add(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_unfold(const tj_value *args, tj_meta *outs);

#endif
