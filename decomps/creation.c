/* Decompositions of the creation operators that are not primitives: zeros,
 * ones, empty and scalar_tensor are full (with their own default dtype,
 * float32, where full would infer one from the fill value), and so are
 * zeros_like, ones_like, full_like and empty_like (self's shape and dtype)
 * and new_zeros, new_ones, new_full and new_empty (size, self's dtype);
 * arange and arange.start are arange.start_step; rand_like
 * and randn_like are rand and randn of self's shape; eye compares two
 * aranges; linspace is torch._refs' two-sided formula over an arange. */
#include "op_creation.h"
#include "util.h"

static tj_dtype dtype_or_float(const tj_value *v) { return v->kind == TJ_V_DTYPE ? v->u.dtype : TJ_FLOAT32; }

static tj_status filled(const tj_op *op, const tj_value *args, const tj_value *size, tj_value value,
                        const tj_value *dtype, tj_value *outs)
{
    tj_meta m[1];
    if (tj_dc_check(op, args, m) != TJ_OK) return tj_last_status();
    return tj_dc_done(tj_full(size ? size->u.ints : NULL, size ? size->n : 0, value, (int)dtype_or_float(dtype)), outs);
}

static tj_status zeros(const tj_value *args, tj_value *outs)
{
    return filled(TJ_OPS(zeros), args, &args[0], tj_v_int(0), &args[1], outs);
}

static tj_status ones(const tj_value *args, tj_value *outs)
{
    return filled(TJ_OPS(ones), args, &args[0], tj_v_int(1), &args[1], outs);
}

static tj_status empty_memory_format(const tj_value *args, tj_value *outs)
{
    return filled(TJ_OPS(empty_memory_format), args, &args[0], tj_v_int(0), &args[1], outs);
}

static tj_status scalar_tensor(const tj_value *args, tj_value *outs)
{
    return filled(TJ_OPS(scalar_tensor), args, NULL, args[0], &args[1], outs);
}

/* full of the shape and dtype op's shape function gives (the *_like: self's
 * shape; new_*: size; both: self's dtype, or the dtype argument) */
static tj_status filled_like(const tj_op *op, const tj_value *args, tj_value value, tj_value *outs)
{
    tj_meta m[1];
    if (tj_dc_check(op, args, m) != TJ_OK) return tj_last_status();
    return tj_dc_done(tj_full(m[0].shape, m[0].ndim, value, (int)m[0].dtype), outs);
}

static tj_status zeros_like(const tj_value *args, tj_value *outs)
{
    return filled_like(TJ_OPS(zeros_like), args, tj_v_int(0), outs);
}

static tj_status ones_like(const tj_value *args, tj_value *outs)
{
    return filled_like(TJ_OPS(ones_like), args, tj_v_int(1), outs);
}

static tj_status full_like(const tj_value *args, tj_value *outs)
{
    return filled_like(TJ_OPS(full_like), args, args[1], outs);
}

static tj_status empty_like(const tj_value *args, tj_value *outs)
{
    return filled_like(TJ_OPS(empty_like), args, tj_v_int(0), outs);
}

static tj_status new_zeros(const tj_value *args, tj_value *outs)
{
    return filled_like(TJ_OPS(new_zeros), args, tj_v_int(0), outs);
}

static tj_status new_ones(const tj_value *args, tj_value *outs)
{
    return filled_like(TJ_OPS(new_ones), args, tj_v_int(1), outs);
}

static tj_status new_full(const tj_value *args, tj_value *outs)
{
    return filled_like(TJ_OPS(new_full), args, args[2], outs);
}

static tj_status new_empty(const tj_value *args, tj_value *outs)
{
    return filled_like(TJ_OPS(new_empty), args, tj_v_int(0), outs);
}

/* arange.start_step from 0 and by 1, of the dtype the shape function
 * inferred (the Scalars converted to it as arange.start_step's kernel does) */
static tj_status arange_default(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(arange_default, args, m);
    return tj_dc_done(tj_arange(tj_v_int(0), args[0], tj_v_int(1), (int)m[0].dtype), outs);
}

static tj_status arange_start(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(arange_start, args, m);
    return tj_dc_done(tj_arange(args[0], args[1], tj_v_int(1), (int)m[0].dtype), outs);
}

static tj_status rand_like(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(rand_like, args, m);
    return tj_dc_done(tj_rand(m[0].shape, m[0].ndim, (int)m[0].dtype), outs);
}

static tj_status randn_like(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(randn_like, args, m);
    return tj_dc_done(tj_randn(m[0].shape, m[0].ndim, (int)m[0].dtype), outs);
}

/* arange(n)[:, None] == arange(m), converted to the dtype */
static tj_status eye_of(const tj_meta *m, tj_value *outs)
{
    tj_tensor *rows = tj_arange(tj_v_int(0), tj_v_int(m->shape[0]), tj_v_int(1), TJ_INT64);
    tj_tensor *cols = tj_arange(tj_v_int(0), tj_v_int(m->shape[1]), tj_v_int(1), TJ_INT64);
    return tj_dc_done(tj_dc_to(tj_eq(tj_unsqueeze(rows, -1), cols), m->dtype), outs);
}

static tj_status eye(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(eye, args, m);
    return eye_of(&m[0], outs);
}

static tj_status eye_m(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(eye_m, args, m);
    return eye_of(&m[0], outs);
}

/* where(i < steps / 2, start + step * i, end - step * (steps - 1 - i)) in the
 * result's precision (float64 for int64, truncated at the end), as the
 * kernel; one step is [start]. */
static tj_status linspace(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(linspace, args, m);
    tj_dtype dt = m[0].dtype, ct = dt == TJ_INT64 ? TJ_FLOAT64 : dt;
    int64_t steps = m[0].shape[0];
    double start, end, step;
    tj_linspace_values(args, dt, &start, &end, &step);
    if (steps <= 1) return tj_dc_done(tj_full(m[0].shape, 1, tj_v_float(start), (int)dt), outs);
    tj_tensor *i = tj_arange(tj_v_int(0), tj_v_int(steps), tj_v_int(1), TJ_INT64);
    tj_tensor *rest = tj_rsub_scalar(i, tj_v_int(steps - 1), tj_v_int(1));
    tj_tensor *lo = tj_add_scalar(tj_mul_scalar(tj_dc_to(i, ct), tj_v_float(step)), tj_v_float(start));
    tj_tensor *hi = tj_rsub_scalar(tj_mul_scalar(tj_dc_to(rest, ct), tj_v_float(step)), tj_v_float(end), tj_v_int(1));
    return tj_dc_done(tj_dc_to(tj_where(tj_lt_scalar(i, tj_v_int(steps / 2)), lo, hi), dt), outs);
}

void tj_register_creation_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(zeros), zeros, "zeros");
    tj_op_set_decomposition(TJ_OPS(ones), ones, "ones");
    tj_op_set_decomposition(TJ_OPS(empty_memory_format), empty_memory_format, "empty_memory_format");
    tj_op_set_decomposition(TJ_OPS(scalar_tensor), scalar_tensor, "scalar_tensor");
    tj_op_set_decomposition(TJ_OPS(arange_default), arange_default, "arange_default");
    tj_op_set_decomposition(TJ_OPS(arange_start), arange_start, "arange_start");
    tj_op_set_decomposition(TJ_OPS(zeros_like), zeros_like, "zeros_like");
    tj_op_set_decomposition(TJ_OPS(ones_like), ones_like, "ones_like");
    tj_op_set_decomposition(TJ_OPS(full_like), full_like, "full_like");
    tj_op_set_decomposition(TJ_OPS(empty_like), empty_like, "empty_like");
    tj_op_set_decomposition(TJ_OPS(new_zeros), new_zeros, "new_zeros");
    tj_op_set_decomposition(TJ_OPS(new_ones), new_ones, "new_ones");
    tj_op_set_decomposition(TJ_OPS(new_full), new_full, "new_full");
    tj_op_set_decomposition(TJ_OPS(new_empty), new_empty, "new_empty");
    tj_op_set_decomposition(TJ_OPS(rand_like), rand_like, "rand_like");
    tj_op_set_decomposition(TJ_OPS(randn_like), randn_like, "randn_like");
    tj_op_set_decomposition(TJ_OPS(eye), eye, "eye");
    tj_op_set_decomposition(TJ_OPS(eye_m), eye_m, "eye_m");
    tj_op_set_decomposition(TJ_OPS(linspace), linspace, "linspace");
}
