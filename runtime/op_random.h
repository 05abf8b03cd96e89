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

#endif
