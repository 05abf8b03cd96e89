/* Grouping of equal rows (ATen's unique family): the n rows of a
 * contiguous [n, k] array are ordered (or left in place) and runs of equal
 * rows become groups. Equality is element-wise ==: -0 equals +0, a nan
 * equals nothing, so every row holding a nan is a group of its own (as
 * torch's sort-based unique; torch 1.13's hash set gives such values the
 * inverse 0 and count 0). The order is PyTorch's sort order, applied to the
 * rows lexicographically: nan above +inf, equal rows in input order. */
#ifndef TJIT_KERNELS_UNIQUE_H
#define TJIT_KERNELS_UNIQUE_H

#include <stdbool.h>
#include <stdint.h>

#include "tjit/core.h"

/** Groups the n rows of `rows` (contiguous [n, k], k >= 1; float32,
 * float64, int64 or bool). With `sorted`, rows are put in ascending order
 * first (stable); otherwise only neighbouring rows group
 * (unique_consecutive). Writes group[r] (the group of row r, groups
 * numbered in order) for every row, and first[g] (the first row of group g
 * in input order) for every group; `order` and `scratch` are n entries of
 * working memory. Returns the number of groups (0 for n == 0). */
int64_t tj_k_unique_rows(tj_dtype dtype, const void *rows, int64_t n, int64_t k, bool sorted, int64_t *group,
                         int64_t *first, int64_t *order, int64_t *scratch);

#endif
