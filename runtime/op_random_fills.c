/* The float random fills torch models and init code call (op_random.def):
 * uniform, normal_functional and exponential (the functional forms of
 * uniform_, normal_ and exponential_: self's shape and dtype, self's values
 * unread) and normal's Tensor_float, float_Tensor, Tensor_Tensor and
 * float_float overloads. ATen's argument checks and messages; the numbers
 * are draws of the default generator's Philox stream (rand's uniforms,
 * randn's normals, in the result's logical element order: not torch's
 * numbers) transformed in the result dtype by the arithmetic of their
 * decompositions (decomps/random.c: rand_like / randn_like / randn, then
 * pointwise operators), so that a decomposed trace draws the same values. */
#include <float.h>
#include <math.h>

#include "contig.h"
#include "iter.h"
#include "op_creation.h"
#include "op_elementwise_util.h"
#include "op_random.h"
#include "random.h"

/* ---- the fill: draws, then draw * a + b, or log(1 - draw) * a ---- */

/* a and b are numbers, or (a_in / b_in > 0) the loop's input of that
 * index, broadcast to the result */
typedef struct fill_ctx {
    bool exponential;
    int a_in, b_in;
    double a, b;
} fill_ctx;

#define FILL_LOOP(T, LOG)                                                                    \
    static void fill_##T(int64_t n, void *out, const void *const *in, const void *ctx)       \
    {                                                                                        \
        const fill_ctx *k = ctx;                                                             \
        const T *z = in[0], *ta = k->a_in ? in[k->a_in] : NULL, *tb = k->b_in ? in[k->b_in] : NULL; \
        T a = (T)k->a, b = (T)k->b, *o = out;                                                \
        for (int64_t i = 0; i < n; i++) {                                                    \
            T ai = ta ? ta[i] : a;                                                           \
            o[i] = k->exponential ? LOG(1 - z[i]) * ai : z[i] * ai + (tb ? tb[i] : b);       \
        }                                                                                    \
    }
FILL_LOOP(float, logf)
FILL_LOOP(double, log)
#undef FILL_LOOP

/* Draws uniforms (or normals) for every element of out in its logical
 * order, then applies k with the extra inputs in[0..nin) (mean / std
 * tensors; in[0] of k is the draw). */
static tj_status fill(tj_tensor *out, tj_k_random_kind kind, const fill_ctx *k, tj_tensor *const *extra, int nextra)
{
    tj_tensor *z = out;
    if (!tj_tensor_is_contiguous(out)) { /* an in-place form's strided self */
        tj_meta m;
        tj_meta_like(&m, out);
        if (!(z = tj_tensor_new_meta(&m, false))) return tj_last_status();
    }
    tj_random_fill(kind, tj_tensor_ptr(z), z->dtype, z->numel, 0);
    tj_tensor *in[3] = {z, nextra > 0 ? extra[0] : NULL, nextra > 1 ? extra[1] : NULL};
    tj_elementwise(out, in, 1 + nextra, out->dtype, out->dtype == TJ_FLOAT32 ? fill_float : fill_double, k);
    if (z != out) tj_tensor_release(z);
    return TJ_OK;
}

/* float32 / float64 only, with ATen's message for the kernel it names */
static tj_status check_float(const char *op, const char *kernel, tj_dtype dt)
{
    if (dt == TJ_FLOAT32 || dt == TJ_FLOAT64) return TJ_OK;
    return tj_error(TJ_ERR_DTYPE, "%s: \"%s\" not implemented for '%s'", op, kernel, tj_dtype_name(dt));
}

static tj_status check_std(const char *op, double std)
{
    if (std >= 0) return TJ_OK;
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: normal expects std >= 0.0, but found std %g", op, std);
}

/* ---- uniform(self, from, to) ---- */

#define UNIFORM "aten::uniform"

tj_status tj_meta_uniform(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    if (check_float(UNIFORM, "check_uniform_bounds", self->dtype) != TJ_OK) return tj_last_status();
    double from = tj_value_as_double(&args[1]), to = tj_value_as_double(&args[2]);
    double max = self->dtype == TJ_FLOAT32 ? FLT_MAX : DBL_MAX;
    const char *type = self->dtype == TJ_FLOAT32 ? "float" : "double";
    if (!(from >= -max && from <= max))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: from is out of bounds for %s", UNIFORM, type);
    if (!(to >= -max && to <= max))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: to is out of bounds for %s", UNIFORM, type);
    if (from > to)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "%s: uniform_ expects to return a [from, to) range, but found from=%g > to=%g", UNIFORM, from,
                        to);
    if (to - from > max)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "%s: uniform_ expects to-from <= std::numeric_limits<%s>::max(), but found to=%g and "
                        "from=%g which result in to-from to exceed the limit",
                        UNIFORM, type, to, from);
    tj_meta_like(&outs[0], self);
    return TJ_OK;
}

tj_status tj_kernel_uniform(const tj_value *args, tj_tensor *const *outs)
{
    double from = tj_value_as_double(&args[1]), to = tj_value_as_double(&args[2]);
    fill_ctx k = {.a = to - from, .b = from};
    return fill(outs[0], TJ_K_RANDOM_UNIFORM, &k, NULL, 0);
}

/* ---- normal_functional(self, mean, std) ---- */

#define NORMAL_F "aten::normal_functional"

tj_status tj_meta_normal_functional(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    if (check_float(NORMAL_F, "normal_kernel_cpu", self->dtype) != TJ_OK ||
        check_std(NORMAL_F, tj_value_as_double(&args[2])) != TJ_OK)
        return tj_last_status();
    tj_meta_like(&outs[0], self);
    return TJ_OK;
}

tj_status tj_kernel_normal_functional(const tj_value *args, tj_tensor *const *outs)
{
    fill_ctx k = {.a = tj_value_as_double(&args[2]), .b = tj_value_as_double(&args[1])};
    return fill(outs[0], TJ_K_RANDOM_NORMAL, &k, NULL, 0);
}

/* ---- exponential(self, lambd) ---- */

#define EXPONENTIAL "aten::exponential"

tj_status tj_meta_exponential(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    if (check_float(EXPONENTIAL, "exponential_cpu", self->dtype) != TJ_OK) return tj_last_status();
    double lambd = tj_value_as_double(&args[1]);
    if (!(lambd >= 0))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: exponential_ expects lambda >= 0.0, but found lambda=%g",
                        EXPONENTIAL, lambd);
    tj_meta_like(&outs[0], self);
    return TJ_OK;
}

tj_status tj_kernel_exponential(const tj_value *args, tj_tensor *const *outs)
{
    fill_ctx k = {.exponential = true, .a = -1 / tj_value_as_double(&args[1])};
    return fill(outs[0], TJ_K_RANDOM_UNIFORM, &k, NULL, 0);
}

/* ---- normal's overloads: randn * std + mean ---- */

#define NORMAL_TF "aten::normal.Tensor_float"
#define NORMAL_FT "aten::normal.float_Tensor"
#define NORMAL_TT "aten::normal.Tensor_Tensor"
#define NORMAL_FF "aten::normal.float_float"

/* every element of std >= 0 (nan fails, as ATen's std.min().ge(0)) */
static tj_status check_std_tensor(const char *op, const tj_tensor *std)
{
    tj_contig c = {0};
    tj_status st = tj_contig_get(&c, std);
    if (st != TJ_OK) return st;
    for (int64_t i = 0; i < std->numel && st == TJ_OK; i++) {
        double v = std->dtype == TJ_FLOAT32 ? ((const float *)(const void *)c.data)[i]
                                            : ((const double *)(const void *)c.data)[i];
        if (!(v >= 0)) st = tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: normal expects all elements of std >= 0.0", op);
    }
    tj_contig_release(&c);
    return st;
}

tj_status tj_meta_normal_Tensor_float(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *mean = args[0].u.t;
    if (check_float(NORMAL_TF, "normal_kernel_cpu", mean->dtype) != TJ_OK ||
        check_std(NORMAL_TF, tj_value_as_double(&args[1])) != TJ_OK)
        return tj_last_status();
    tj_meta_like(&outs[0], mean);
    return TJ_OK;
}

tj_status tj_kernel_normal_Tensor_float(const tj_value *args, tj_tensor *const *outs)
{
    fill_ctx k = {.a = tj_value_as_double(&args[1]), .b_in = 1};
    return fill(outs[0], TJ_K_RANDOM_NORMAL, &k, (tj_tensor *const[]){args[0].u.t}, 1);
}

tj_status tj_meta_normal_float_Tensor(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *std = args[1].u.t;
    if (check_float(NORMAL_FT, "normal_kernel_cpu", std->dtype) != TJ_OK) return tj_last_status();
    tj_meta_like(&outs[0], std);
    return TJ_OK;
}

tj_status tj_kernel_normal_float_Tensor(const tj_value *args, tj_tensor *const *outs)
{
    tj_tensor *std = args[1].u.t;
    if (check_std_tensor(NORMAL_FT, std) != TJ_OK) return tj_last_status();
    fill_ctx k = {.a_in = 1, .b = tj_value_as_double(&args[0])};
    return fill(outs[0], TJ_K_RANDOM_NORMAL, &k, &std, 1);
}

/* mean and std broadcast; the result has mean's dtype (ATen's empty(shape,
 * mean.options())), std converted to it */
tj_status tj_meta_normal_Tensor_Tensor(const tj_value *args, tj_meta *outs)
{
    tj_dtype dt = args[0].u.t->dtype;
    if (check_float(NORMAL_TT, "normal_kernel_cpu", dt) != TJ_OK) return tj_last_status();
    const tj_tensor *ts[2] = {args[0].u.t, args[1].u.t};
    return tj_ew_meta_broadcast(NORMAL_TT, ts, 2, dt, outs);
}

tj_status tj_kernel_normal_Tensor_Tensor(const tj_value *args, tj_tensor *const *outs)
{
    if (check_std_tensor(NORMAL_TT, args[1].u.t) != TJ_OK) return tj_last_status();
    fill_ctx k = {.a_in = 2, .b_in = 1};
    return fill(outs[0], TJ_K_RANDOM_NORMAL, &k, (tj_tensor *const[]){args[0].u.t, args[1].u.t}, 2);
}

/* mean, std, size, generator, dtype (None: float32), layout, device, pin_memory */
tj_status tj_meta_normal_float_float(const tj_value *args, tj_meta *outs)
{
    tj_dtype dt = args[4].kind == TJ_V_DTYPE ? args[4].u.dtype : TJ_FLOAT32;
    if (check_float(NORMAL_FF, "normal_kernel_cpu", dt) != TJ_OK ||
        check_std(NORMAL_FF, tj_value_as_double(&args[1])) != TJ_OK)
        return tj_last_status();
    return tj_size_meta(NORMAL_FF, &args[2], dt, &outs[0]);
}

tj_status tj_kernel_normal_float_float(const tj_value *args, tj_tensor *const *outs)
{
    fill_ctx k = {.a = tj_value_as_double(&args[1]), .b = tj_value_as_double(&args[0])};
    return fill(outs[0], TJ_K_RANDOM_NORMAL, &k, NULL, 0);
}
