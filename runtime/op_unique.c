/* _unique2, unique_consecutive and unique_dim, as ATen 1.13 (Unique.cpp):
 * shape functions with PyTorch's checks and the glue to kernels/unique.c.
 *
 * Every form groups rows: the elements of self (flattened) or, along a dim,
 * the slices self.select(dim, i), each read in row-major order of the other
 * dims (ATen's moveaxis(dim, 0) then flatten). _unique2 and unique_dim sort
 * the rows, unique_consecutive groups neighbours. _unique2 with
 * sorted=False returns them sorted too (torch 1.13's CPU kernel returns its
 * hash set's order, which PyTorch leaves unspecified; its CUDA kernel
 * always sorts). A nan equals nothing: each is a value of its own, with
 * inverse and count to match (see kernels/unique.h).
 *
 * The result sizes are counts of distinct values: the shape functions
 * group eagerly, refuse a fake self (as nonzero, runtime/op_masked.c), and
 * the kernels refuse a count other than the one their results were sized
 * for (a graph recorded with other values). The shape function and the
 * kernel each group once. */
#include <string.h>

#include "iter.h"
#include "kernels/copy.h"
#include "kernels/unique.h"
#include "op_masked.h"
#include "op_unique.h"

#define UNIQUE2 "aten::_unique2"
#define UNIQUE_CONSECUTIVE "aten::unique_consecutive"
#define UNIQUE_DIM "aten::unique_dim"

/* The rows of self grouped: a contiguous [n, k] copy and, per row, its
 * group; per group, its first row. One scratch block holds them all. */
typedef struct grouping {
    int dim;           /* -1: every element is a row */
    int64_t n, k, m;   /* rows, elements per row, groups */
    char *rows;
    int64_t *group, *first;
    void *block;
    size_t block_bytes;
} grouping;

static void grouping_free(grouping *g) { tj_free_storage_bytes(g->block, g->block_bytes); }

/* Groups self's rows (along `dim`, or its elements for dim -1). */
static tj_status group_rows(const char *op, const tj_tensor *self, int dim, bool sorted, grouping *g)
{
    *g = (grouping){.dim = dim};
    g->n = dim < 0 ? self->numel : self->shape[dim];
    g->k = g->n ? self->numel / g->n : 0;
    size_t es = tj_dtype_bytes(self->dtype), row_bytes = ((size_t)(g->n * g->k) * es + 63) / 64 * 64;
    size_t nb = row_bytes + sizeof(int64_t) * 4 * (size_t)g->n + 64, got = 0;
    if (!(g->block = tj_alloc_storage_bytes(nb, &got))) return tj_oom(op, nb);
    g->block_bytes = got;
    g->rows = g->block;
    g->group = (int64_t *)(g->rows + row_bytes);
    g->first = g->group + g->n;
    if (g->n == 0) return TJ_OK;
    /* the copy: self with `dim` moved first, in row-major order */
    int64_t shape[TJ_MAX_DIMS], strides[TJ_MAX_DIMS], cstrides[TJ_MAX_DIMS];
    int nd = self->ndim;
    if (dim < 0 || nd == 0) {
        memcpy(shape, self->shape, sizeof(int64_t) * (size_t)nd);
        memcpy(strides, self->strides, sizeof(int64_t) * (size_t)nd);
    } else {
        shape[0] = self->shape[dim];
        strides[0] = self->strides[dim];
        for (int d = 0, j = 1; d < nd; d++)
            if (d != dim) shape[j] = self->shape[d], strides[j++] = self->strides[d];
    }
    tj_contiguous_strides(nd, shape, cstrides);
    tj_k_copy_strided((tj_k_strided){g->rows, self->dtype, cstrides},
                      (tj_k_strided){tj_tensor_ptr(self), self->dtype, strides}, nd, shape,
                      tj_threads_for(self->numel));
    g->m = tj_k_unique_rows(self->dtype, g->rows, g->n, g->k, sorted, g->group, g->first, g->first + g->n,
                            g->first + 2 * g->n);
    return TJ_OK;
}

/* The dtypes ATen's unique kernels take (all of tjit's). */
static tj_status check_self(const char *op, const tj_tensor *self)
{
    if (self->dtype != TJ_FLOAT32 && self->dtype != TJ_FLOAT64 && self->dtype != TJ_INT64 && self->dtype != TJ_BOOL)
        return tj_error(TJ_ERR_DTYPE, "%s: not implemented for '%s'", op, tj_dtype_name(self->dtype));
    return TJ_OK;
}

/* The count of groups for a shape function: refused for a fake self. */
static tj_status count_groups(const char *op, const tj_tensor *self, int dim, bool sorted, int64_t *m)
{
    if (self->fake) return tj_count_nonzero(op, "self", self, m); /* the refusal */
    grouping g;
    if (group_rows(op, self, dim, sorted, &g) != TJ_OK) return tj_last_status();
    *m = g.m;
    grouping_free(&g);
    return TJ_OK;
}

/* A dim the rows are taken along: ATen's checks (a 0-dim self has none; an
 * empty self only along an empty dim). */
static tj_status rows_dim(const char *op, const tj_tensor *self, int64_t dim, int *d)
{
    char s[160];
    if (self->ndim == 0)
        return tj_error(TJ_ERR_INDEX, "%s: Dimension specified as %lld but tensor has no dimensions", op,
                        (long long)dim);
    if (tj_wrap_dim(op, dim, self->ndim, d) != TJ_OK) return tj_last_status();
    if (self->numel == 0 && self->shape[*d] != 0)
        return tj_error(TJ_ERR_SHAPE, "%s: There are 0 sized dimensions, and they aren't selected, so unique "
                        "cannot be applied (self %s, dim %d)", op,
                        tj_shape_str(self->ndim, self->shape, s, sizeof s), *d);
    return TJ_OK;
}

/* The three results for m groups: values (self's shape with dim of size m,
 * or [m] for elements), inverse (self's shape for elements, [n] along a
 * dim) and counts [m]; inverse and counts are [0] when not asked for. */
static void results_meta(const tj_tensor *self, int dim, int64_t m, bool inverse, bool counts, tj_meta *outs)
{
    if (dim < 0) {
        tj_meta_set(&outs[0], self->dtype, 1, &m);
        tj_meta_like(&outs[1], self);
    } else {
        tj_meta_like(&outs[0], self);
        outs[0].shape[dim] = m;
        tj_meta_set(&outs[1], TJ_INT64, 1, &self->shape[dim]);
    }
    outs[1].dtype = TJ_INT64;
    tj_meta_set(&outs[2], TJ_INT64, 1, &m);
    int64_t zero = 0;
    if (!inverse) tj_meta_set(&outs[1], TJ_INT64, 1, &zero);
    if (!counts) tj_meta_set(&outs[2], TJ_INT64, 1, &zero);
}

/* Groups self and writes the results sized by the shape function. */
static tj_status write_results(const char *op, const tj_tensor *self, int dim, bool sorted, tj_tensor *const *outs)
{
    grouping g;
    if (group_rows(op, self, dim, sorted, &g) != TJ_OK) return tj_last_status();
    int64_t sized = dim < 0 ? outs[0]->numel : outs[0]->shape[dim];
    if (g.m != sized) {
        grouping_free(&g);
        return tj_stale_count_error(op, "the count of distinct values", g.m, sized);
    }
    /* values[outer, j, inner] = row first[j]'s element (outer, inner) */
    size_t es = tj_dtype_bytes(self->dtype);
    int64_t inner = 1, outer = 1;
    if (dim >= 0)
        for (int d = 0; d < self->ndim; d++) {
            if (d < dim) outer *= self->shape[d];
            if (d > dim) inner *= self->shape[d];
        }
    char *v = tj_tensor_ptr(outs[0]);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < g.m; j++)
            memcpy(v + (size_t)((o * g.m + j) * inner) * es, g.rows + (size_t)(g.first[j] * g.k + o * inner) * es,
                   (size_t)inner * es);
    if (outs[1]->numel) memcpy(tj_tensor_ptr(outs[1]), g.group, sizeof(int64_t) * (size_t)g.n);
    if (outs[2]->numel) {
        int64_t *c = (int64_t *)tj_tensor_ptr(outs[2]);
        memset(c, 0, sizeof(int64_t) * (size_t)g.m);
        for (int64_t r = 0; r < g.n; r++) c[g.group[r]]++;
    }
    grouping_free(&g);
    return TJ_OK;
}

/* _unique2(self, sorted, return_inverse, return_counts) */
tj_status tj_meta__unique2(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int64_t m;
    if (check_self(UNIQUE2, self) != TJ_OK || count_groups(UNIQUE2, self, -1, true, &m) != TJ_OK)
        return tj_last_status();
    results_meta(self, -1, m, args[2].u.b, args[3].u.b, outs);
    return TJ_OK;
}

tj_status tj_kernel__unique2(const tj_value *args, tj_tensor *const *outs)
{
    return write_results(UNIQUE2, args[0].u.t, -1, true, outs);
}

/* unique_consecutive(self, return_inverse, return_counts, dim): along a
 * dim, inverse and counts are always computed (ATen's
 * unique_dim_consecutive) */
static tj_status consecutive_dim(const tj_value *args, int *d)
{
    *d = -1;
    return args[3].kind == TJ_V_NONE ? TJ_OK : rows_dim(UNIQUE_CONSECUTIVE, args[0].u.t, args[3].u.i, d);
}

tj_status tj_meta_unique_consecutive(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int d;
    int64_t m;
    if (check_self(UNIQUE_CONSECUTIVE, self) != TJ_OK || consecutive_dim(args, &d) != TJ_OK ||
        count_groups(UNIQUE_CONSECUTIVE, self, d, false, &m) != TJ_OK)
        return tj_last_status();
    results_meta(self, d, m, d >= 0 || args[1].u.b, d >= 0 || args[2].u.b, outs);
    return TJ_OK;
}

tj_status tj_kernel_unique_consecutive(const tj_value *args, tj_tensor *const *outs)
{
    int d;
    consecutive_dim(args, &d); /* checked by the shape function */
    return write_results(UNIQUE_CONSECUTIVE, args[0].u.t, d, false, outs);
}

/* unique_dim(self, dim, sorted, return_inverse, return_counts): always
 * sorted, inverse and counts always computed, as ATen's */
tj_status tj_meta_unique_dim(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int d;
    int64_t m;
    if (check_self(UNIQUE_DIM, self) != TJ_OK || rows_dim(UNIQUE_DIM, self, args[1].u.i, &d) != TJ_OK ||
        count_groups(UNIQUE_DIM, self, d, true, &m) != TJ_OK)
        return tj_last_status();
    results_meta(self, d, m, true, true, outs);
    return TJ_OK;
}

tj_status tj_kernel_unique_dim(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    int d;
    rows_dim(UNIQUE_DIM, self, args[1].u.i, &d);
    return write_results(UNIQUE_DIM, self, d, true, outs);
}
