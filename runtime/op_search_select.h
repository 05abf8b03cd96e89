/* Searches, running and order selections and their neighbours (op_search_select.def): searchsorted and
 * bucketize (op_search.c); cummax, cummin, logcumsumexp (op_cumulative.c); kthvalue, median and
 * nanmedian (op_select.c); std_mean, count_nonzero (op_stats.c); hardshrink,
 * softshrink and their backward operators (op_shrink.c). */
#ifndef TJIT_RUNTIME_OP_SEARCH_SELECT_H
#define TJIT_RUNTIME_OP_SEARCH_SELECT_H

#include "internal.h"

TJ_OP_DECLARE(searchsorted_Tensor)
TJ_OP_DECLARE(searchsorted_Scalar)
TJ_OP_DECLARE(bucketize_Tensor)
TJ_OP_DECLARE(bucketize_Scalar)
TJ_OP_DECLARE(cummax)
TJ_OP_DECLARE(cummin)
TJ_OP_DECLARE(logcumsumexp)
/* op_select.c */
TJ_OP_DECLARE(kthvalue)
TJ_OP_DECLARE(median_dim)
TJ_OP_DECLARE(nanmedian_dim)
TJ_OP_DECLARE(median)
TJ_OP_DECLARE(nanmedian)
/* op_stats.c */
TJ_OP_DECLARE(std_mean)
TJ_OP_DECLARE(count_nonzero_dim_IntList)
TJ_OP_DECLARE(count_nonzero)
/* op_shrink.c */
TJ_OP_DECLARE(hardshrink)
TJ_OP_DECLARE(softshrink)
TJ_OP_DECLARE(hardshrink_backward)
TJ_OP_DECLARE(softshrink_backward)

#endif
