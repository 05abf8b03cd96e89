/* creation operators: shape functions and kernels bound in op_creation.def. */
#ifndef TJIT_RUNTIME_OP_CREATION_H
#define TJIT_RUNTIME_OP_CREATION_H

#include "internal.h"

/** The geometry of a `SymInt[] size` argument of `op` in `dtype` into m:
 * TJ_ERR_SHAPE for a negative size, TJ_ERR_INVALID_ARGUMENT for more than
 * TJ_MAX_DIMS dims, TJ_ERR_OVERFLOW for an element count past int64. */
tj_status tj_size_meta(const char *op, const tj_value *size, tj_dtype dtype, tj_meta *m);

TJ_OP_DECLARE(zeros)
TJ_OP_DECLARE(ones)
TJ_OP_DECLARE(full)
TJ_OP_DECLARE(arange)
TJ_OP_DECLARE(arange_default)
TJ_OP_DECLARE(arange_start)
tj_status tj_meta_empty_memory_format(const tj_value *args, tj_meta *outs);
TJ_OP_DECLARE(scalar_tensor)
TJ_OP_DECLARE(rand)
TJ_OP_DECLARE(randn)
TJ_OP_DECLARE(bernoulli_p)
TJ_OP_DECLARE(zeros_like)
TJ_OP_DECLARE(ones_like)
TJ_OP_DECLARE(full_like)
tj_status tj_meta_empty_like(const tj_value *args, tj_meta *outs);
tj_status tj_meta_new_zeros(const tj_value *args, tj_meta *outs);
tj_status tj_meta_new_ones(const tj_value *args, tj_meta *outs);
TJ_OP_DECLARE(new_full)
tj_status tj_meta_new_empty(const tj_value *args, tj_meta *outs);
tj_status tj_meta_rand_like(const tj_value *args, tj_meta *outs);
tj_status tj_meta_randn_like(const tj_value *args, tj_meta *outs);
TJ_OP_DECLARE(eye)
tj_status tj_meta_eye_m(const tj_value *args, tj_meta *outs);
TJ_OP_DECLARE(linspace)
/* op_trilu_indices.c */
TJ_OP_DECLARE(tril_indices)
TJ_OP_DECLARE(triu_indices)
/** linspace's start and end converted to `dtype` as its kernel converts them
 * (checked: an overflow is TJ_ERR_INVALID_ARGUMENT naming aten::linspace),
 * and for steps >= 2 the step it uses (0 otherwise). */
tj_status tj_linspace_values(const tj_value *args, tj_dtype dtype, double *start, double *end, double *step);

#endif
