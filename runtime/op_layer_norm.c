/* native_layer_norm and native_layer_norm_backward: argument checks (shape
 * functions) and the glue to kernels/layer_norm. As ATen, the kernels see
 * contiguous operands: a strided input is copied once. */
#include <math.h>
#include <string.h>

#include "contig.h"
#include "kernels/layer_norm.h"
#include "op_backward.h"
#include "op_nn.h"

static const tj_tensor *opt_tensor(const tj_value *v) { return v->kind == TJ_V_TENSOR ? v->u.t : NULL; }

/* Checks input against normalized_shape (its trailing dims) and an optional
 * parameter (weight / bias) of exactly that shape and input's dtype; gives
 * the number of rows m and the row length n. */
static tj_status check_normalized(const char *op, const tj_tensor *input, const tj_value *ns, int64_t *m, int64_t *n)
{
    char si[96], sn[96];
    const int64_t *shape = ns->u.ints;
    int k = ns->n, axis = input->ndim - k;
    if (input->dtype != TJ_FLOAT32 && input->dtype != TJ_FLOAT64)
        return tj_error(TJ_ERR_DTYPE, "%s: input must be float32 or float64, got %s", op, tj_dtype_name(input->dtype));
    if (k < 1)
        return tj_error(TJ_ERR_SHAPE, "%s: normalized_shape must have at least one element, got []", op);
    bool ok = axis >= 0;
    for (int d = 0; ok && d < k; d++) ok = input->shape[axis + d] == shape[d];
    if (!ok)
        return tj_error(TJ_ERR_SHAPE, "%s: normalized_shape %s does not match the trailing dims of input %s", op,
                        k <= TJ_MAX_DIMS ? tj_shape_str(k, shape, sn, sizeof sn) : "(too long)",
                        tj_shape_str(input->ndim, input->shape, si, sizeof si));
    *m = 1;
    *n = 1;
    for (int d = 0; d < axis; d++) *m *= input->shape[d];
    for (int d = 0; d < k; d++) *n *= shape[d];
    return TJ_OK;
}

static tj_status check_param(const char *op, const char *name, const tj_tensor *p, const tj_tensor *input,
                             const tj_value *ns)
{
    char sp[96], sn[96];
    if (!p) return TJ_OK;
    if (p->dtype != input->dtype)
        return tj_error(TJ_ERR_DTYPE, "%s: %s (%s) must have input's dtype (%s)", op, name, tj_dtype_name(p->dtype),
                        tj_dtype_name(input->dtype));
    bool ok = p->ndim == ns->n;
    for (int d = 0; ok && d < p->ndim; d++) ok = p->shape[d] == ns->u.ints[d];
    if (!ok)
        return tj_error(TJ_ERR_SHAPE, "%s: %s %s must have the shape of normalized_shape %s", op, name,
                        tj_shape_str(p->ndim, p->shape, sp, sizeof sp), tj_shape_str(ns->n, ns->u.ints, sn, sizeof sn));
    return TJ_OK;
}

static void set_meta(tj_meta *o, tj_dtype dtype, int ndim, const int64_t *shape)
{
    o->dtype = dtype;
    o->ndim = ndim;
    memcpy(o->shape, shape, sizeof(int64_t) * (size_t)ndim);
}

tj_status tj_meta_native_layer_norm(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::native_layer_norm";
    const tj_tensor *x = args[0].u.t;
    int64_t m, n;
    tj_status st = check_normalized(op, x, &args[1], &m, &n);
    if (st == TJ_OK) st = check_param(op, "weight", opt_tensor(&args[2]), x, &args[1]);
    if (st == TJ_OK) st = check_param(op, "bias", opt_tensor(&args[3]), x, &args[1]);
    if (st != TJ_OK) return st;
    set_meta(&outs[0], x->dtype, x->ndim, x->shape);
    /* mean and rstd keep the normalised dims as size 1 */
    for (int i = 1; i < 3; i++) {
        set_meta(&outs[i], x->dtype, x->ndim, x->shape);
        for (int d = x->ndim - args[1].n; d < x->ndim; d++) outs[i].shape[d] = 1;
    }
    return TJ_OK;
}

/* Dense views of up to four operands, released together. */
typedef struct dense4 {
    tj_contig c[4];
} dense4;

static tj_status dense_get(dense4 *d, const tj_tensor *const *t, int k)
{
    memset(d, 0, sizeof *d);
    for (int i = 0; i < k; i++)
        if (t[i] && tj_contig_get(&d->c[i], t[i]) != TJ_OK) return tj_last_status();
    return TJ_OK;
}

static void dense_release(dense4 *d)
{
    for (int i = 0; i < 4; i++) tj_contig_release(&d->c[i]);
}

/* ATen gives an empty row (n = 0) mean 0 and rstd nan (0/0 variance). */
static void fill_empty_rows(tj_tensor *mean, tj_tensor *rstd, int64_t m)
{
    for (int64_t r = 0; r < m; r++) {
        tj_store_f64(tj_tensor_ptr(mean) + r * (int64_t)tj_dtype_size(mean->dtype), mean->dtype, 0.0);
        tj_store_f64(tj_tensor_ptr(rstd) + r * (int64_t)tj_dtype_size(rstd->dtype), rstd->dtype, NAN);
    }
}

tj_status tj_kernel_native_layer_norm(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[0].u.t;
    int64_t m, n;
    check_normalized("aten::native_layer_norm", x, &args[1], &m, &n);
    if (n == 0) {
        fill_empty_rows(outs[1], outs[2], m);
        return TJ_OK;
    }
    if (m == 0) return TJ_OK;
    const tj_tensor *ops[3] = {x, opt_tensor(&args[2]), opt_tensor(&args[3])};
    dense4 d;
    tj_status st = dense_get(&d, ops, 3);
    if (st == TJ_OK) {
        tj_k_layer_norm_shape s = {.dtype = x->dtype, .m = m, .n = n, .nthreads = tj_get_num_threads()};
        tj_k_layer_norm(&s, d.c[0].data, d.c[1].data, d.c[2].data, tj_value_as_double(&args[4]),
                        tj_tensor_ptr(outs[0]), tj_tensor_ptr(outs[1]), tj_tensor_ptr(outs[2]));
    }
    dense_release(&d);
    return st;
}

/* ---- backward: (grad_out, input, normalized_shape, mean, rstd, weight?,
 * bias?, output_mask) -> (grad_input, grad_weight, grad_bias); an output
 * whose mask entry is false is left undefined. ---- */

tj_status tj_meta_native_layer_norm_backward(const tj_value *args, tj_meta *outs)
{
    const char *op = "aten::native_layer_norm_backward";
    const tj_tensor *g = args[0].u.t, *x = args[1].u.t, *mean = args[3].u.t, *rstd = args[4].u.t;
    const tj_tensor *w = opt_tensor(&args[5]), *b = opt_tensor(&args[6]);
    const tj_value *mask = &args[7];
    char s1[96], s2[96];
    int64_t m, n;
    tj_status st = check_normalized(op, x, &args[2], &m, &n);
    if (st == TJ_OK) st = check_param(op, "weight", w, x, &args[2]);
    if (st == TJ_OK) st = check_param(op, "bias", b, x, &args[2]);
    if (st != TJ_OK) return st;
    const tj_tensor *same_dtype[3] = {g, mean, rstd};
    for (int i = 0; i < 3; i++)
        if (same_dtype[i]->dtype != x->dtype)
            return tj_error(TJ_ERR_DTYPE, "%s: grad_out, mean and rstd must have input's dtype %s, got %s", op,
                            tj_dtype_name(x->dtype), tj_dtype_name(same_dtype[i]->dtype));
    bool same = g->ndim == x->ndim;
    for (int d = 0; same && d < g->ndim; d++) same = g->shape[d] == x->shape[d];
    if (!same)
        return tj_error(TJ_ERR_SHAPE, "%s: grad_out %s must have input's shape %s", op,
                        tj_shape_str(g->ndim, g->shape, s1, sizeof s1), tj_shape_str(x->ndim, x->shape, s2, sizeof s2));
    if (mean->numel != m || rstd->numel != m)
        return tj_error(TJ_ERR_SHAPE, "%s: mean %s and rstd %s must hold one value per row (%lld)", op,
                        tj_shape_str(mean->ndim, mean->shape, s1, sizeof s1),
                        tj_shape_str(rstd->ndim, rstd->shape, s2, sizeof s2), (long long)m);
    if (mask->n != 3) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output_mask needs 3 entries, got %d", op, mask->n);
    if ((mask->u.bools[1] && !w) || (mask->u.bools[2] && !b))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: output_mask asks for the gradient of an absent %s", op,
                        mask->u.bools[1] && !w ? "weight" : "bias");
    set_meta(&outs[0], x->dtype, x->ndim, x->shape);
    set_meta(&outs[1], x->dtype, args[2].n, args[2].u.ints);
    set_meta(&outs[2], x->dtype, args[2].n, args[2].u.ints);
    for (int i = 0; i < 3; i++) outs[i].undefined = !mask->u.bools[i];
    return TJ_OK;
}

tj_status tj_kernel_native_layer_norm_backward(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[1].u.t;
    int64_t m, n;
    check_normalized("aten::native_layer_norm_backward", x, &args[2], &m, &n);
    if (n == 0) return TJ_OK;
    const tj_tensor *ops[4] = {args[0].u.t, x, args[3].u.t, args[4].u.t};
    const tj_tensor *w = opt_tensor(&args[5]);
    tj_contig cw = {0};
    dense4 d;
    tj_status st = dense_get(&d, ops, 4);
    if (st == TJ_OK && w) st = tj_contig_get(&cw, w);
    if (st == TJ_OK) {
        tj_k_layer_norm_shape s = {.dtype = x->dtype, .m = m, .n = n, .nthreads = tj_get_num_threads()};
        tj_k_layer_norm_backward(&s, d.c[0].data, d.c[1].data, d.c[2].data, d.c[3].data, cw.data,
                                 outs[0] ? tj_tensor_ptr(outs[0]) : NULL, outs[1] ? tj_tensor_ptr(outs[1]) : NULL,
                                 outs[2] ? tj_tensor_ptr(outs[2]) : NULL);
    }
    tj_contig_release(&cw);
    dense_release(&d);
    return st;
}
