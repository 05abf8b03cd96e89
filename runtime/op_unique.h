/* Operators that group and count values (op_unique.def): _unique2,
 * unique_consecutive, unique_dim (op_unique.c); bincount, histc
 * (op_histogram.c). */
#ifndef TJIT_RUNTIME_OP_UNIQUE_H
#define TJIT_RUNTIME_OP_UNIQUE_H

#include "internal.h"

TJ_OP_DECLARE(_unique2)
TJ_OP_DECLARE(unique_consecutive)
TJ_OP_DECLARE(unique_dim)
TJ_OP_DECLARE(bincount)
TJ_OP_DECLARE(histc)

#endif
