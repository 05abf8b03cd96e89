/* Random integers, permutations and samples (op_random.def, op_random.c). */
#ifndef TJIT_RUNTIME_OP_RANDOM_H
#define TJIT_RUNTIME_OP_RANDOM_H

#include "internal.h"

TJ_OP_DECLARE(randint_low)
TJ_OP_DECLARE(randint)
TJ_OP_DECLARE(randint_like)
TJ_OP_DECLARE(randint_like_low_dtype)
TJ_OP_DECLARE(randperm)
TJ_OP_DECLARE(multinomial)
/* op_random_fills.c */
TJ_OP_DECLARE(uniform)
TJ_OP_DECLARE(normal_functional)
TJ_OP_DECLARE(exponential)
TJ_OP_DECLARE(normal_Tensor_float)
TJ_OP_DECLARE(normal_float_Tensor)
TJ_OP_DECLARE(normal_Tensor_Tensor)
TJ_OP_DECLARE(normal_float_float)

#endif
