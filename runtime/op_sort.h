/* Sorting operators (op_sort.def): sort, sort.stable, topk. */
#ifndef TJIT_RUNTIME_OP_SORT_H
#define TJIT_RUNTIME_OP_SORT_H

#include "internal.h"

TJ_OP_DECLARE(sort)
TJ_OP_DECLARE(sort_stable)
TJ_OP_DECLARE(topk)

#endif
