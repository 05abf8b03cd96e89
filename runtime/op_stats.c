/* aten::std_mean.correction and aten::count_nonzero(.dim_IntList), as ATen
 * 1.13 (ReduceOps.cpp, TensorAdvancedIndexing.cpp): composites over the
 * reduction kernels of op_reduction.c, so that their numbers are those of
 * std.correction, var_mean.correction and sum.dim_IntList (checks too:
 * their messages are given this operator's name). */
#include <stdio.h>
#include <string.h>

#include "contig.h"
#include "op_search_select.h"
#include "op_reduction.h"

#define STD_MEAN "aten::std_mean.correction"
#define COUNT_NONZERO_DIMS "aten::count_nonzero.dim_IntList"
#define COUNT_NONZERO "aten::count_nonzero"

/* The last error, raised by the operator `inner`, said again under `op`'s
 * name (its message from the first ": " on). */
static tj_status renamed(const char *op, const char *inner)
{
    const char *msg = tj_last_error();
    size_t n = strlen(inner);
    if (strncmp(msg, inner, n) == 0 && strncmp(msg + n, ": ", 2) == 0) msg += n + 2;
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", msg);
    return tj_error(tj_last_status(), "%s: %s", op, copy);
}

/* std_mean.correction(self, dim?, *, correction?, keepdim): (std, mean),
 * each with self's float dtype and the reduced shape */
tj_status tj_meta_std_mean(const tj_value *args, tj_meta *outs)
{
    if (tj_meta_var_mean(args, outs) != TJ_OK) return renamed(STD_MEAN, "aten::var_mean.correction");
    return TJ_OK;
}

/* std as std.correction's kernel computes it (the root of the float64
 * variance, rounded once), the mean as var_mean.correction's */
tj_status tj_kernel_std_mean(const tj_value *args, tj_tensor *const *outs)
{
    tj_meta m[2] = {{.alias = -1}, {.alias = -1}};
    tj_meta_var_mean(args, m);
    tj_tensor *var = tj_tensor_new_meta(&m[0], false);
    if (!var) return tj_last_status();
    tj_status st = tj_kernel_var_mean(args, (tj_tensor *const[]){var, outs[1]});
    tj_tensor_release(var);
    return st == TJ_OK ? tj_kernel_std(args, &outs[0]) : st;
}

/* self != 0 as a new bool tensor of self's shape (fake: no data, for a
 * shape function); NULL on failure. Computed here, not dispatched: a
 * kernel's inner steps are no operator calls a trace could record. */
static tj_tensor *nonzero_mask(const tj_tensor *self, bool fake)
{
    tj_meta m = {.alias = -1};
    tj_meta_like(&m, self);
    m.dtype = TJ_BOOL;
    tj_tensor *mask = tj_tensor_new_meta(&m, fake);
    if (!mask || fake || self->numel == 0) return mask;
    tj_contig c;
    if (tj_contig_get(&c, self) != TJ_OK) {
        tj_tensor_release(mask);
        return NULL;
    }
    uint8_t *o = (uint8_t *)tj_tensor_ptr(mask);
    int64_t n = self->numel;
    switch (self->dtype) {
    case TJ_FLOAT32: for (int64_t i = 0; i < n; i++) o[i] = ((const float *)c.data)[i] != 0; break;
    case TJ_FLOAT64: for (int64_t i = 0; i < n; i++) o[i] = ((const double *)c.data)[i] != 0; break;
    case TJ_INT64: for (int64_t i = 0; i < n; i++) o[i] = ((const int64_t *)c.data)[i] != 0; break;
    default: for (int64_t i = 0; i < n; i++) o[i] = ((const uint8_t *)c.data)[i] != 0; break;
    }
    tj_contig_release(&c);
    return mask;
}

/* count_nonzero.dim_IntList(self, int[] dim): the sum of self != 0 over
 * dim (int64; [] counts everything), as ATen's (self != 0).sum(dims) */
static tj_status meta_count(const char *op, const tj_tensor *self, tj_value dims, tj_meta *outs)
{
    tj_tensor *mask = nonzero_mask(self, true);
    if (!mask) return tj_last_status();
    tj_value a[4] = {tj_v_tensor(mask), dims, tj_v_bool(false), tj_v_none()};
    tj_status st = tj_meta_sum_dim(a, outs);
    tj_tensor_release(mask);
    return st == TJ_OK ? TJ_OK : renamed(op, "aten::sum.dim_IntList");
}

static tj_status kernel_count(const tj_tensor *self, tj_value dims, tj_tensor *out)
{
    tj_tensor *mask = nonzero_mask(self, false);
    if (!mask) return tj_last_status();
    tj_status st = tj_kernel_sum_dim((const tj_value[]){tj_v_tensor(mask), dims, tj_v_bool(false), tj_v_none()},
                                     &out);
    tj_tensor_release(mask);
    return st;
}

tj_status tj_meta_count_nonzero_dim_IntList(const tj_value *args, tj_meta *outs)
{
    return meta_count(COUNT_NONZERO_DIMS, args[0].u.t, args[1], outs);
}
tj_status tj_kernel_count_nonzero_dim_IntList(const tj_value *args, tj_tensor *const *outs)
{
    return kernel_count(args[0].u.t, args[1], outs[0]);
}

/* count_nonzero(self, int? dim=None): one dim, or every dim */
static tj_value one_dim(const tj_value *dim, int64_t *storage)
{
    if (dim->kind != TJ_V_INT) return tj_v_ints(storage, 0);
    *storage = dim->u.i;
    return tj_v_ints(storage, 1);
}
tj_status tj_meta_count_nonzero(const tj_value *args, tj_meta *outs)
{
    int64_t d;
    return meta_count(COUNT_NONZERO, args[0].u.t, one_dim(&args[1], &d), outs);
}
tj_status tj_kernel_count_nonzero(const tj_value *args, tj_tensor *const *outs)
{
    int64_t d;
    return kernel_count(args[0].u.t, one_dim(&args[1], &d), outs[0]);
}
