/* aten::searchsorted.Tensor / .Scalar and aten::bucketize.Tensor / .Scalar,
 * as ATen 1.13 (Bucketization.cpp, BucketizationUtils.h): its checks in
 * its order and messages, values and boundaries promoted to their
 * result_type (a Scalar self as a wrapped number), the searches of
 * kernels/searchsorted.h. out_int32 is refused: tjit has no int32 dtype.
 * A sorter entry outside its row is refused too (ATen reads out of
 * bounds). */
#include <inttypes.h>
#include <string.h>

#include "contig.h"
#include "iter.h"
#include "kernels/searchsorted.h"
#include "op_search_select.h"
#include "op_view.h"

#define SEARCHSORTED "aten::searchsorted.Tensor"
#define SEARCHSORTED_SCALAR "aten::searchsorted.Scalar"
#define BUCKETIZE "aten::bucketize.Tensor"
#define BUCKETIZE_SCALAR "aten::bucketize.Scalar"

/* One call's arguments, whichever form it came from. */
typedef struct search_args {
    const char *op;
    const tj_tensor *boundaries, *values, *sorter; /* sorter: NULL for None */
    bool out_int32, right;
    const char *side; /* NULL for None */
} search_args;

/* The common dtype of boundaries and values (result_type: a Scalar's 0-dim
 * tensor counts as a wrapped number, made of that dtype already). */
static tj_dtype common_dtype(const search_args *a)
{
    tj_value v[2] = {tj_v_tensor((tj_tensor *)a->boundaries), tj_v_tensor((tj_tensor *)a->values)};
    return tj_result_type(v, 2);
}

/* ATen's searchsorted_pre_check, then the dtype dispatch's refusal of bool */
static tj_status check(const search_args *a, bool *right)
{
    const tj_tensor *b = a->boundaries, *v = a->values, *s = a->sorter;
    char bs[160], vs[160];
    tj_shape_str(b->ndim, b->shape, bs, sizeof bs);
    tj_shape_str(v->ndim, v->shape, vs, sizeof vs);
    *right = a->right;
    if (a->side) {
        if (strcmp(a->side, "left") != 0 && strcmp(a->side, "right") != 0)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: side can only be 'left' or 'right' but got %s", a->op, a->side);
        bool side_right = a->side[0] == 'r';
        if (a->right && !side_right)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: side and right can't be set to opposites, got side of left "
                            "while right was True", a->op);
        *right = side_right;
    }
    if (s) {
        char ss[160];
        if (s->ndim != b->ndim || memcmp(s->shape, b->shape, sizeof(int64_t) * (size_t)b->ndim) != 0)
            return tj_error(TJ_ERR_SHAPE, "%s: boundary and sorter must have the same size, but got boundary tensor "
                            "%s and got sorter tensor %s", a->op, bs, tj_shape_str(s->ndim, s->shape, ss, sizeof ss));
        if (s->dtype != TJ_INT64)
            return tj_error(TJ_ERR_DTYPE, "%s: sorter must be a tensor of long dtype but got dtype %s", a->op,
                            tj_dtype_name(s->dtype));
    }
    if (v->ndim == 0 && b->ndim != 1)
        return tj_error(TJ_ERR_SHAPE, "%s: input value can be a scalar only when boundaries tensor dimension is 1, "
                        "but we got boundaries tensor dim(%d) and input value's dim(0) numel(1)", a->op, b->ndim);
    if (b->ndim == 0)
        return tj_error(TJ_ERR_SHAPE, "%s: boundaries tensor should have positive dimension, but got 0 dimension",
                        a->op);
    bool matched = b->ndim == v->ndim && memcmp(b->shape, v->shape, sizeof(int64_t) * (size_t)(b->ndim - 1)) == 0;
    if (b->ndim != 1 && !matched)
        return tj_error(TJ_ERR_SHAPE, "%s: boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                        "boundaries tensor and input value tensor must match, but we got boundaries tensor %s and "
                        "input value tensor %s", a->op, bs, vs);
    if (a->out_int32)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: out_int32=True is not supported (tjit has no int32 dtype; the "
                        "int64 result holds the same positions)", a->op);
    tj_dtype dt = common_dtype(a);
    if (dt == TJ_BOOL)
        return tj_error(TJ_ERR_DTYPE, "%s: \"searchsorted_out_cpu\" not implemented for 'Bool' (boundaries %s %s, "
                        "self %s %s)", a->op, tj_dtype_name(b->dtype), bs, tj_dtype_name(v->dtype), vs);
    return TJ_OK;
}

static tj_status meta(const search_args *a, tj_meta *outs)
{
    bool right;
    if (check(a, &right) != TJ_OK) return tj_last_status();
    tj_meta_like(&outs[0], a->values);
    outs[0].dtype = TJ_INT64;
    return TJ_OK;
}

/* t's elements row-major in dtype dt: t itself, or a new converted copy
 * (NULL on failure); release with tj_tensor_release. */
static tj_tensor *dense_as(const tj_tensor *t, tj_dtype dt)
{
    if (t->dtype == dt && tj_tensor_is_contiguous(t)) return tj_tensor_retain((tj_tensor *)t);
    tj_meta m = {.alias = -1};
    tj_meta_like(&m, t);
    m.dtype = dt;
    tj_tensor *c = tj_tensor_new_meta(&m, false);
    if (c) tj_copy_tensor(c, t);
    return c;
}

/* every sorter entry indexes its row: ATen reads past the row otherwise */
static tj_status check_sorter_values(const char *op, const int64_t *s, int64_t n, int64_t m)
{
    for (int64_t i = 0; i < n; i++)
        if (s[i] < 0 || s[i] >= m)
            return tj_error(TJ_ERR_INDEX, "%s: sorter holds %" PRId64 " at flat position %" PRId64 ", out of range "
                            "for boundaries rows of %" PRId64 " elements", op, s[i], i, m);
    return TJ_OK;
}

static tj_status run(const search_args *a, tj_tensor *out)
{
    bool right;
    check(a, &right);
    const tj_tensor *b = a->boundaries, *v = a->values;
    if (v->numel == 0) return TJ_OK;
    tj_dtype dt = common_dtype(a);
    tj_tensor *bd = dense_as(b, dt), *vd = dense_as(v, dt);
    tj_contig sc = {0};
    tj_status st = bd && vd ? TJ_OK : tj_last_status();
    if (st == TJ_OK && a->sorter) st = tj_contig_get(&sc, a->sorter);
    int64_t m = b->shape[b->ndim - 1];
    if (st == TJ_OK && a->sorter) st = check_sorter_values(a->op, (const int64_t *)sc.data, b->numel, m);
    if (st == TJ_OK) {
        tj_k_searchsorted s = {.dtype = dt, .values = tj_tensor_ptr(vd), .boundaries = tj_tensor_ptr(bd),
                               .sorter = a->sorter ? (const int64_t *)sc.data : NULL, .numel = v->numel,
                               .row = v->ndim ? v->shape[v->ndim - 1] : 1, .m = m, .shared = b->ndim == 1,
                               .right = right, .out = (int64_t *)tj_tensor_ptr(out)};
        tj_k_searchsorted_run(&s, tj_threads_for(v->numel * (m > 1 ? 4 : 1)));
    }
    tj_contig_release(&sc);
    if (bd) tj_tensor_release(bd);
    if (vd) tj_tensor_release(vd);
    return st;
}

/* searchsorted.Tensor(sorted_sequence, self, *, out_int32, right, side, sorter) */
static search_args searchsorted_args(const char *op, const tj_value *args, const tj_tensor *values)
{
    return (search_args){.op = op, .boundaries = args[0].u.t, .values = values, .out_int32 = args[2].u.b,
                         .right = args[3].u.b, .side = args[4].kind == TJ_V_STR ? args[4].u.s : NULL,
                         .sorter = args[5].kind == TJ_V_TENSOR ? args[5].u.t : NULL};
}

/* bucketize.Tensor(self, boundaries, *, out_int32, right): searchsorted of
 * a 1-D boundaries */
static tj_status bucketize_args(const char *op, const tj_value *args, const tj_tensor *values,
                                const tj_tensor *boundaries, search_args *a)
{
    if (boundaries->ndim != 1)
        return tj_error(TJ_ERR_SHAPE, "%s: boundaries tensor must be 1 dimension, but got dim(%d)", op,
                        boundaries->ndim);
    *a = (search_args){.op = op, .boundaries = boundaries, .values = values, .out_int32 = args[2].u.b,
                       .right = args[3].u.b};
    return TJ_OK;
}

/* A Scalar self as ATen's searchsorted_scalar_tensor: a 0-dim wrapped
 * number (int64 or float64), made here directly of the dtype it promotes
 * to with the boundaries (one conversion, as ATen's .to()); fake (no
 * storage) for a shape function. NULL on failure. */
static tj_tensor *scalar_values(const tj_value *s, const tj_tensor *boundaries, bool fake)
{
    tj_value v[2] = {tj_v_tensor((tj_tensor *)boundaries), *s};
    tj_dtype dt = tj_result_type(v, 2);
    tj_meta m = {.alias = -1, .dtype = dt, .ndim = 0};
    tj_tensor *t = tj_tensor_new_meta(&m, fake);
    if (!t || fake) return t;
    bool is_f = s->kind == TJ_V_FLOAT;
    int64_t i = s->kind == TJ_V_BOOL ? (int64_t)s->u.b : is_f ? 0 : s->u.i;
    char *p = tj_tensor_ptr(t);
    if (dt == TJ_FLOAT32) *(float *)p = is_f ? (float)s->u.f : (float)i;
    else if (dt == TJ_FLOAT64) *(double *)p = is_f ? s->u.f : (double)i;
    else *(int64_t *)p = i; /* int64 (a float Scalar promotes to a float) or bool, refused later */
    return t;
}

tj_status tj_meta_searchsorted_Tensor(const tj_value *args, tj_meta *outs)
{
    search_args a = searchsorted_args(SEARCHSORTED, args, args[1].u.t);
    return meta(&a, outs);
}
tj_status tj_kernel_searchsorted_Tensor(const tj_value *args, tj_tensor *const *outs)
{
    search_args a = searchsorted_args(SEARCHSORTED, args, args[1].u.t);
    return run(&a, outs[0]);
}

tj_status tj_meta_bucketize_Tensor(const tj_value *args, tj_meta *outs)
{
    search_args a;
    if (bucketize_args(BUCKETIZE, args, args[0].u.t, args[1].u.t, &a) != TJ_OK) return tj_last_status();
    return meta(&a, outs);
}
tj_status tj_kernel_bucketize_Tensor(const tj_value *args, tj_tensor *const *outs)
{
    search_args a;
    bucketize_args(BUCKETIZE, args, args[0].u.t, args[1].u.t, &a);
    return run(&a, outs[0]);
}

/* The Scalar forms: the same with a 0-dim self made from the Scalar. */
static tj_status scalar_form(bool bucketize, const tj_value *args, tj_meta *metas, tj_tensor *const *outs)
{
    const char *op = bucketize ? BUCKETIZE_SCALAR : SEARCHSORTED_SCALAR;
    const tj_tensor *b = bucketize ? args[1].u.t : args[0].u.t;
    const tj_value *s = bucketize ? &args[0] : &args[1];
    tj_tensor *v = scalar_values(s, b, metas != NULL);
    if (!v) return tj_last_status();
    search_args a;
    tj_status st = bucketize ? bucketize_args(op, args, v, b, &a) : TJ_OK;
    if (!bucketize) a = searchsorted_args(op, args, v);
    if (st == TJ_OK) st = metas ? meta(&a, metas) : run(&a, outs[0]);
    tj_tensor_release(v);
    return st;
}

tj_status tj_meta_searchsorted_Scalar(const tj_value *args, tj_meta *outs) { return scalar_form(false, args, outs, NULL); }
tj_status tj_kernel_searchsorted_Scalar(const tj_value *args, tj_tensor *const *outs)
{
    return scalar_form(false, args, NULL, outs);
}
tj_status tj_meta_bucketize_Scalar(const tj_value *args, tj_meta *outs) { return scalar_form(true, args, outs, NULL); }
tj_status tj_kernel_bucketize_Scalar(const tj_value *args, tj_tensor *const *outs)
{
    return scalar_form(true, args, NULL, outs);
}
