/* aten::_fused_sgd_step: the fused kernel against PyTorch 1.13's
 * operator-by-operator SGD update it replaces (bit for bit, every option,
 * dtype, layout and instruction set), its checks, SGD's use of it, and the
 * traced update with and without the core decompositions. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "runtime/internal.h"
#include "test_util.h"

TestSuite(fused_sgd, .init = test_scope_open, .fini = test_scope_close_isa);

#define F(x) tj_v_float(x)

/* Deterministic values in [lo, lo + span), the first N_SPECIAL of them in
 * storage order replaced by `special` when it is not NULL. */
#define N_SPECIAL 8
static tj_tensor *filled(tj_dtype dt, int ndim, const int64_t *shape, int seed, double lo, double span,
                         const double *special)
{
    tj_tensor *t = tj_tensor_empty(dt, ndim, shape);
    cr_assert_not_null(t);
    int64_t n = tj_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v = special && i < N_SPECIAL ? special[i] : lo + span * (0.5 + 0.5 * sin(0.37 * (double)i + 1.7 * seed));
        if (dt == TJ_FLOAT32) ((float *)tj_tensor_data(t))[i] = (float)v;
        else ((double *)tj_tensor_data(t))[i] = v;
    }
    return t;
}

/* Edge values of param, grad and buffer, lined up: an infinite parameter
 * (0 * inf is nan: weight decay 0 must add no term); a +0 gradient over a
 * -0 buffer (maximize must flip the zero's sign, not compute 0 - 0); a -0
 * gradient and buffer with a positive parameter (-0 + 0 * p would be +0);
 * nans, infinities and a subnormal. */
static const double specials[3][N_SPECIAL] = {
    {INFINITY, 0.5, 0.5, -0.0, 1e-40, 0.25, NAN, -INFINITY},
    {0.1, 0.0, -0.0, 0.0, -INFINITY, NAN, 0.3, -0.2},
    {0.2, -0.0, -0.0, -0.0, 0.5, -0.3, INFINITY, 1e-40},
};

/* Same bits element by element, in logical order (any nan matches any nan:
 * the hardware picks which operand's nan an operation returns). */
static void expect_identical(const tj_tensor *a, const tj_tensor *b, const char *what)
{
    cr_assert_not_null(a, "%s: %s", what, tj_last_error());
    cr_assert_not_null(b, "%s: %s", what, tj_last_error());
    cr_assert_eq(tj_tensor_numel(a), tj_tensor_numel(b), "%s", what);
    cr_assert_eq(tj_tensor_dtype(a), tj_tensor_dtype(b), "%s", what);
    for (int64_t i = 0; i < tj_tensor_numel(a); i++) {
        double x = tj_tensor_item_at(a, i), y = tj_tensor_item_at(b, i);
        bool same = tj_tensor_dtype(a) == TJ_FLOAT32 ? test_bits_f32((float)x) == test_bits_f32((float)y)
                                                     : test_bits_f64(x) == test_bits_f64(y);
        if (!same && !(isnan(x) && isnan(y))) {
            cr_expect(false, "%s element %lld: %a != %a", what, (long long)i, x, y);
            return;
        }
    }
}

/* PyTorch 1.13's _single_tensor_sgd with an existing momentum buffer,
 * operator by operator, in place (the reference the fused step must match). */
static void sgd_reference(const tj_sgd_options *o, tj_tensor *param, tj_tensor *grad, tj_tensor *buf)
{
    tj_tensor *d_p = grad;
    if (o->maximize) d_p = tj_neg(d_p);
    if (o->weight_decay != 0) d_p = tj_add_alpha(d_p, param, F(o->weight_decay));
    cr_assert_not_null(tj_add_(tj_mul_scalar_(buf, F(o->momentum)), d_p, F(1 - o->dampening)), "%s",
                       tj_last_error());
    d_p = o->nesterov ? tj_add_alpha(d_p, buf, F(o->momentum)) : buf;
    cr_assert_not_null(tj_add_(param, d_p, F(-o->lr)), "%s", tj_last_error());
}

typedef struct sgd_state {
    tj_tensor *param, *grad, *buf;
} sgd_state;

/* Parameter, gradient and buffer of `shape`, each in its own layout: the
 * transpose of a contiguous tensor of the reversed shape when the bit of
 * `transposed` (1 param, 2 grad, 4 buf) is set (2-d shapes only). */
static sgd_state make_state(tj_dtype dt, int ndim, const int64_t *shape, unsigned transposed, bool special)
{
    const double lo[3] = {-1, -0.1, -0.05}, span[3] = {2, 0.2, 0.1};
    tj_tensor *t[3];
    for (int k = 0; k < 3; k++) {
        bool tr = transposed & (1u << k);
        int64_t rev[2] = {ndim == 2 ? shape[1] : 0, shape[0]};
        t[k] = filled(dt, ndim, tr ? rev : shape, k + 1, lo[k], span[k], special ? specials[k] : NULL);
        if (tr) t[k] = tj_t(t[k]);
    }
    return (sgd_state){t[0], t[1], t[2]};
}

/* A copy in the same layout (a transposed tensor stays transposed). */
static tj_tensor *same_layout_clone(tj_tensor *x)
{
    bool tr = tj_tensor_ndim(x) == 2 && !tj_tensor_is_contiguous(x);
    return tr ? tj_t(tj_clone(tj_t(x))) : tj_clone(x);
}

static sgd_state clone_state(const sgd_state *s)
{
    return (sgd_state){same_layout_clone(s->param), s->grad, same_layout_clone(s->buf)};
}

static const char *describe(const tj_sgd_options *o, char *buf, size_t n)
{
    snprintf(buf, n, "momentum %g dampening %g weight_decay %g nesterov %d maximize %d", o->momentum, o->dampening,
             o->weight_decay, o->nesterov, o->maximize);
    return buf;
}

/* Every combination of the options (nesterov only with zero dampening, as
 * tj_sgd_update requires): the op's results and tj_sgd_update's in-place
 * update both match the reference bit for bit. */
static void check_all_options(tj_dtype dt, int ndim, const int64_t *shape, unsigned transposed)
{
    const double momenta[2] = {0.9, 0.25}, dampenings[2] = {0, 0.3}, decays[2] = {0, 0.01};
    for (int m = 0; m < 2; m++)
        for (int d = 0; d < 2; d++)
            for (int w = 0; w < 2; w++)
                for (int nv = 0; nv < 2; nv++)
                    for (int mx = 0; mx < 2; mx++) {
                        if (nv && d) continue;
                        tj_sgd_options o = tj_sgd_defaults(0.03);
                        o.momentum = momenta[m];
                        o.dampening = dampenings[d];
                        o.weight_decay = decays[w];
                        o.nesterov = nv;
                        o.maximize = mx;
                        char what[160];
                        describe(&o, what, sizeof what);
                        sgd_state ref = make_state(dt, ndim, shape, transposed, true);
                        sgd_state upd = clone_state(&ref);
                        tj_tensor *r[2];
                        cr_assert_eq(tj__fused_sgd_step(ref.param, ref.grad, ref.buf, o.lr, o.momentum, o.dampening,
                                                        o.weight_decay, o.nesterov, o.maximize, r),
                                     TJ_OK, "%s: %s", what, tj_last_error());
                        cr_assert_eq(tj_sgd_update(&o, &upd.param, &upd.grad, &upd.buf, 1), TJ_OK, "%s: %s", what,
                                     tj_last_error());
                        sgd_reference(&o, ref.param, ref.grad, ref.buf);
                        expect_identical(r[0], ref.param, what);
                        expect_identical(r[1], ref.buf, what);
                        expect_identical(upd.param, ref.param, what);
                        expect_identical(upd.buf, ref.buf, what);
                    }
}

/* On every instruction set the CPU has. */
static void check_every_isa(tj_dtype dt, int ndim, const int64_t *shape, unsigned transposed)
{
    int tried = 0;
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        tried++;
        check_all_options(dt, ndim, shape, transposed);
    }
    cr_expect_geq(tried, 1);
}

Test(fused_sgd, float32_matches_the_operator_path_bit_for_bit_on_every_isa)
{
    int64_t s[1] = {1003}; /* a partial last vector for AVX-512 and AVX2 */
    check_every_isa(TJ_FLOAT32, 1, s, 0);
}

Test(fused_sgd, float64_matches_the_operator_path_bit_for_bit_on_every_isa)
{
    int64_t s[1] = {37};
    check_every_isa(TJ_FLOAT64, 1, s, 0);
}

Test(fused_sgd, transposed_inputs_match_the_operator_path_bit_for_bit)
{
    int64_t s[2] = {19, 7};
    for (unsigned tr = 1; tr < 8; tr++) {
        check_every_isa(TJ_FLOAT32, 2, s, tr);
        check_every_isa(TJ_FLOAT64, 2, s, tr);
    }
}

Test(fused_sgd, two_threads_split_a_large_parameter_bit_for_bit)
{
    tj_set_num_threads(2);
    int64_t s[1] = {70001}; /* two chunks, the second starting mid-vector */
    check_all_options(TJ_FLOAT32, 1, s, 0);
}

Test(fused_sgd, results_are_new_contiguous_tensors_and_inputs_are_untouched)
{
    int64_t s[2] = {4, 3};
    sgd_state a = make_state(TJ_FLOAT32, 2, s, 7, false), keep = clone_state(&a);
    tj_tensor *r[2];
    cr_assert_eq(tj__fused_sgd_step(a.param, a.grad, a.buf, 0.1, 0.9, 0, 0, false, false, r), TJ_OK, "%s",
                 tj_last_error());
    for (int k = 0; k < 2; k++) {
        cr_expect(tj_tensor_is_contiguous(r[k]));
        cr_expect_eq(tj_tensor_ndim(r[k]), 2);
        cr_expect_eq(tj_tensor_shape(r[k])[0], 4);
        cr_expect_eq(tj_tensor_shape(r[k])[1], 3);
    }
    expect_identical(a.param, keep.param, "param");
    expect_identical(a.buf, keep.buf, "momentum_buffer");
    /* element [1, 2] by hand: buf * 0.9 + grad, then param - 0.1 * buf */
    float p = (float)tj_tensor_item_at(a.param, 5), g = (float)tj_tensor_item_at(a.grad, 5);
    float b = (float)tj_tensor_item_at(a.buf, 5);
    float nb = b * 0.9f + g;
    cr_expect_eq((float)tj_tensor_item_at(r[1], 5), nb);
    cr_expect_eq((float)tj_tensor_item_at(r[0], 5), p + -0.1f * nb);
}

Test(fused_sgd, empty_parameter_gives_empty_results)
{
    int64_t s[2] = {0, 3};
    tj_tensor *e = tj_zeros(s, 2, TJ_FLOAT32), *r[2];
    cr_assert_eq(tj__fused_sgd_step(e, e, e, 0.1, 0.9, 0, 0, false, false, r), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < 2; k++) cr_expect_eq(tj_tensor_numel(r[k]), 0);
}

Test(fused_sgd, rejects_a_gradient_or_buffer_of_another_shape)
{
    int64_t s[1] = {4}, s3[1] = {3}, s22[2] = {2, 2};
    tj_tensor *p = tj_zeros(s, 1, TJ_FLOAT32), *bad = tj_zeros(s3, 1, TJ_FLOAT32), *r[2];
    cr_expect_eq(tj__fused_sgd_step(p, p, bad, 0.1, 0.9, 0, 0, false, false, r), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "aten::_fused_sgd_step: momentum_buffer [3] must have self's shape [4]"), "%s",
              tj_last_error());
    cr_expect_null(r[0]);
    cr_expect_eq(tj__fused_sgd_step(p, tj_zeros(s22, 2, TJ_FLOAT32), p, 0.1, 0.9, 0, 0, false, false, r),
                 TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "aten::_fused_sgd_step: grad [2, 2] must have self's shape [4]"), "%s",
              tj_last_error());
}

Test(fused_sgd, rejects_mixed_and_integer_dtypes)
{
    int64_t s[1] = {2};
    tj_tensor *f = tj_zeros(s, 1, TJ_FLOAT32), *d = tj_zeros(s, 1, TJ_FLOAT64), *i = tj_zeros(s, 1, TJ_INT64);
    tj_tensor *r[2];
    cr_expect_eq(tj__fused_sgd_step(f, d, f, 0.1, 0.9, 0, 0, false, false, r), TJ_ERR_DTYPE);
    cr_expect(strstr(tj_last_error(), "aten::_fused_sgd_step: grad must have self's dtype float32, got float64"), "%s",
              tj_last_error());
    cr_expect_eq(tj__fused_sgd_step(d, d, f, 0.1, 0.9, 0, 0, false, false, r), TJ_ERR_DTYPE);
    cr_expect(strstr(tj_last_error(), "momentum_buffer must have self's dtype float64, got float32"), "%s",
              tj_last_error());
    cr_expect_eq(tj__fused_sgd_step(i, i, i, 0.1, 0.9, 0, 0, false, false, r), TJ_ERR_DTYPE);
    cr_expect(strstr(tj_last_error(), "aten::_fused_sgd_step: self must be float32 or float64, got int64"), "%s",
              tj_last_error());
}

Test(fused_sgd, rejects_null_tensors_and_null_outs)
{
    int64_t s[1] = {2};
    tj_tensor *f = tj_zeros(s, 1, TJ_FLOAT32), *r[2];
    cr_expect_eq(tj__fused_sgd_step(f, NULL, f, 0.1, 0.9, 0, 0, false, false, r), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "aten::_fused_sgd_step"), "%s", tj_last_error());
    cr_expect_null(r[0]);
    cr_expect_eq(tj__fused_sgd_step(f, f, f, 0.1, 0.9, 0, 0, false, false, NULL), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "aten::_fused_sgd_step: NULL outs"), "%s", tj_last_error());
}

/* A float32 parameter with a float64 gradient (promoted by the operators)
 * keeps the operator path: the update still works, as before the fused op. */
Test(fused_sgd, mixed_dtype_update_keeps_the_operator_path)
{
    int64_t s[1] = {9};
    sgd_state ref = make_state(TJ_FLOAT32, 1, s, 0, false);
    ref.grad = tj_to_copy(ref.grad, TJ_FLOAT64);
    sgd_state upd = clone_state(&ref);
    tj_sgd_options o = tj_sgd_defaults(0.1);
    o.momentum = 0.9;
    cr_assert_eq(tj_sgd_update(&o, &upd.param, &upd.grad, &upd.buf, 1), TJ_OK, "%s", tj_last_error());
    sgd_reference(&o, ref.param, ref.grad, ref.buf);
    expect_identical(upd.param, ref.param, "param");
    expect_identical(upd.buf, ref.buf, "momentum_buffer");
}

/* A momentum buffer that is its gradient or its parameter: the operator
 * path, whose buf.mul_ changes what the later operators read, as PyTorch
 * 1.13 does (the fused step read the old values: p 0.905 for 0.91 below).
 * Reference: torch.optim._functional.sgd(params=[p], d_p_list=[g],
 * momentum_buffer_list=[b], lr=0.1, momentum=0.9, dampening=0,
 * weight_decay=0, nesterov, maximize=False) with b = g or b = p, p = [1, 2,
 * 3], g = [0.5, -0.25, 1] (float32; PyTorch 1.13.0a0). A parameter that is
 * its own gradient (no buffer shared) keeps the fused step and matches too. */
Test(fused_sgd, buffer_aliasing_its_gradient_or_parameter_updates_as_pytorch)
{
    static const float p0[3] = {1, 2, 3}, g0[3] = {0.5f, -0.25f, 1}, b0[3] = {0.1f, 0.2f, -0.3f};
    static const double want[2][4][3] = {
        {{0.9100000262260437, 2.0450000762939453, 2.819999933242798}, /* b = g: param */
         {0.8999999761581421, -0.44999998807907104, 1.7999999523162842}, /* b = g: buffer */
         {1.2599999904632568, 1.3949999809265137, 3.3299999237060547}, /* b = p: param */
         {0.890999972820282, 1.781999945640564, 2.7269999980926514}},  /* g = p: param */
        {{0.8289999961853027, 2.0855000019073486, 2.6579999923706055},
         {0.8999999761581421, -0.44999998807907104, 1.7999999523162842},
         {1.2239999771118164, 1.435499906539917, 3.2669997215270996},
         {0.8019000291824341, 1.6038000583648682, 2.4542999267578125}},
    };
    int64_t s[1] = {3};
    for (int nesterov = 0; nesterov < 2; nesterov++) {
        tj_sgd_options o = tj_sgd_defaults(0.1);
        o.momentum = 0.9;
        o.nesterov = nesterov;
        tj_tensor *p = test_f32(1, s, p0), *g = test_f32(1, s, g0), *b = g;
        cr_assert_eq(tj_sgd_update(&o, &p, &g, &b, 1), TJ_OK, "%s", tj_last_error());
        test_expect_close(p, want[nesterov][0], 3, 1e-6, 0);
        test_expect_close(g, want[nesterov][1], 3, 1e-6, 0);
        p = test_f32(1, s, p0), g = test_f32(1, s, g0), b = p;
        cr_assert_eq(tj_sgd_update(&o, &p, &g, &b, 1), TJ_OK, "%s", tj_last_error());
        test_expect_close(p, want[nesterov][2], 3, 1e-6, 0);
        p = test_f32(1, s, p0), b = test_f32(1, s, b0), g = p;
        cr_assert_eq(tj_sgd_update(&o, &p, &g, &b, 1), TJ_OK, "%s", tj_last_error());
        test_expect_close(p, want[nesterov][3], 3, 1e-6, 0);
    }
}

/* tj_sgd_update on n parameters; *fused: its _fused_sgd_step calls. */
static tj_status update_counting_fused_steps(const tj_sgd_options *o, tj_tensor **p, tj_tensor **g, tj_tensor **b,
                                             int n, int64_t *fused)
{
    tj_counter_mode *cm = tj_counter_mode_new();
    cr_assert_not_null(cm);
    cr_assert_eq(tj_mode_push(tj_counter_mode_base(cm)), TJ_OK);
    tj_status st = tj_sgd_update(o, p, g, b, n);
    cr_assert_eq(tj_mode_pop(tj_counter_mode_base(cm)), TJ_OK);
    *fused = tj_counter_mode_count(cm, TJ_OPS(_fused_sgd_step));
    tj_counter_mode_free(cm);
    return st;
}

/* Elements [off, off + numel) of a flat tensor as a 2-d `shape` view, or as
 * the transpose of a view of the reversed shape. */
static tj_tensor *carve(tj_tensor *flat, int64_t off, const int64_t *shape, bool transposed)
{
    int64_t rev[2] = {shape[1], shape[0]};
    tj_tensor *v = tj_view(tj_slice(flat, 0, true, off, true, off + shape[0] * shape[1], 1), transposed ? rev : shape, 2);
    cr_assert_not_null(v, "%s", tj_last_error());
    return transposed ? tj_t(v) : v;
}

/* Momentum buffers and parameters carved from one flat storage, as
 * optimizers with flat buffers keep them (one of them transposed), and a
 * parameter and buffer that are the two interleaved columns of a [9, 2]
 * tensor: no buffer shares a byte with its parameter or gradient, so each
 * update is one fused step (sharing the storage used to send them all to
 * the operators), bit for bit the operator path's. */
Test(fused_sgd, buffers_carved_from_one_flat_storage_take_the_fused_step_bit_for_bit)
{
    enum { N = 4, FLAT = 2 * (15 + 28 + 36) };
    static const int64_t shapes[N - 1][2] = {{3, 5}, {7, 4}, {6, 6}};
    tj_sgd_options opts[2] = {tj_sgd_defaults(0.05), tj_sgd_defaults(0.05)};
    opts[0].momentum = 0.9, opts[0].weight_decay = 0.01, opts[0].nesterov = true;
    opts[1].momentum = 0.8, opts[1].dampening = 0.3, opts[1].maximize = true;
    for (int k = 0; k < 2; k++) {
        tj_tensor *flat = tj_zeros((int64_t[]){FLAT}, 1, TJ_FLOAT32), *pairs = tj_zeros((int64_t[]){9, 2}, 2, TJ_FLOAT32);
        tj_tensor *p[N], *g[N], *b[N];
        sgd_state ref[N];
        int64_t off = 0;
        for (int i = 0; i < N - 1; i++) {
            bool tr = i == 1;
            ref[i] = make_state(TJ_FLOAT32, 2, shapes[i], tr ? 6 : 0, i == 0);
            b[i] = carve(flat, off, shapes[i], tr);
            p[i] = carve(flat, FLAT / 2 + off, shapes[i], tr);
            g[i] = ref[i].grad;
            off += shapes[i][0] * shapes[i][1];
        }
        ref[N - 1] = make_state(TJ_FLOAT32, 1, (int64_t[]){9}, 0, false);
        p[N - 1] = tj_select(pairs, 1, 0), b[N - 1] = tj_select(pairs, 1, 1), g[N - 1] = ref[N - 1].grad;
        for (int i = 0; i < N; i++) {
            cr_assert_not_null(tj_copy_(p[i], ref[i].param), "%s", tj_last_error());
            cr_assert_not_null(tj_copy_(b[i], ref[i].buf), "%s", tj_last_error());
        }
        int64_t fused;
        cr_assert_eq(update_counting_fused_steps(&opts[k], p, g, b, N, &fused), TJ_OK, "%s", tj_last_error());
        cr_expect_eq(fused, N, "options %d: every update fused", k);
        char what[160];
        describe(&opts[k], what, sizeof what);
        for (int i = 0; i < N; i++) {
            sgd_reference(&opts[k], ref[i].param, ref[i].grad, ref[i].buf);
            expect_identical(p[i], ref[i].param, what);
            expect_identical(b[i], ref[i].buf, what);
        }
    }
}

/* Buffers that may share bytes with their gradient or parameter keep the
 * operator path: another view object of the same elements gives PyTorch
 * 1.13's values (those of buffer_aliasing_its_gradient_or_parameter_updates_as_pytorch:
 * momentum 0.9, lr 0.1), and a buffer one element along its gradient's
 * storage is refused as PyTorch's buf.add_(d_p) refuses it, where the
 * fused step would return made-up values. */
Test(fused_sgd, buffers_overlapping_their_gradient_or_parameter_keep_the_operator_path)
{
    static const float p0[3] = {1, 2, 3}, g0[3] = {0.5f, -0.25f, 1}, flat0[4] = {0.5f, -0.25f, 1, 0.1f};
    static const double want_p[3] = {0.9100000262260437, 2.0450000762939453, 2.819999933242798};
    static const double want_b[3] = {0.8999999761581421, -0.44999998807907104, 1.7999999523162842};
    static const double want_bp[3] = {1.2599999904632568, 1.3949999809265137, 3.3299999237060547};
    int64_t s[1] = {3}, fused;
    tj_sgd_options o = tj_sgd_defaults(0.1);
    o.momentum = 0.9;
    tj_tensor *p = test_f32(1, s, p0), *g = test_f32(1, s, g0), *b = tj_view(g, s, 1);
    cr_assert_neq(b, g);
    cr_assert_eq(update_counting_fused_steps(&o, &p, &g, &b, 1, &fused), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(fused, 0);
    test_expect_close(p, want_p, 3, 1e-6, 0);
    test_expect_close(b, want_b, 3, 1e-6, 0);
    p = test_f32(1, s, p0), g = test_f32(1, s, g0), b = tj_view(p, s, 1);
    cr_assert_eq(update_counting_fused_steps(&o, &p, &g, &b, 1, &fused), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(fused, 0);
    test_expect_close(p, want_bp, 3, 1e-6, 0);
    tj_tensor *flat = test_f32(1, (int64_t[]){4}, flat0);
    p = test_f32(1, s, p0), g = tj_slice(flat, 0, true, 0, true, 3, 1), b = tj_slice(flat, 0, true, 1, true, 4, 1);
    cr_expect_eq(update_counting_fused_steps(&o, &p, &g, &b, 1, &fused), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "aten::add_.Tensor: unsupported operation"), "%s", tj_last_error());
    cr_expect_eq(fused, 0);
    test_expect_close(p, (const double[]){1, 2, 3}, 3, 0, 0);
}

/* A broadcast momentum buffer (one element for all three) is refused by
 * buf.mul_, as PyTorch refuses it, before the parameter changes (the fused
 * step used to update the parameter, then refuse to copy into the buffer). */
Test(fused_sgd, broadcast_buffer_is_refused_before_the_parameter_changes)
{
    static const float p0[3] = {1, 2, 3}, g0[3] = {0.5f, -0.25f, 1}, b0[1] = {0.1f};
    int64_t s[1] = {3}, fused;
    tj_sgd_options o = tj_sgd_defaults(0.1);
    o.momentum = 0.9;
    tj_tensor *p = test_f32(1, s, p0), *g = test_f32(1, s, g0), *b = tj_expand(test_f32(1, (int64_t[]){1}, b0), s, 1);
    cr_expect_eq(update_counting_fused_steps(&o, &p, &g, &b, 1, &fused), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "aten::mul_.Scalar: unsupported operation: more than one element"), "%s",
              tj_last_error());
    cr_expect_eq(fused, 0);
    test_expect_close(p, (const double[]){1, 2, 3}, 3, 0, 0);
    test_expect_close(b, (const double[]){0.1f, 0.1f, 0.1f}, 3, 0, 0);
}

/* ---- traced SGD ---- */

enum { N_PARAMS = 2 };

static tj_status sgd_fn(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const tj_sgd_options *o = ctx;
    bool prev = tj_no_grad_begin();
    tj_tensor *bufs[N_PARAMS] = {in[2 * N_PARAMS], in[2 * N_PARAMS + 1]};
    tj_status st = tj_sgd_update(o, in, in + N_PARAMS, bufs, N_PARAMS);
    tj_no_grad_end(prev);
    out[0] = tj_sum(in[0], -1);
    *n_out = 1;
    return st == TJ_OK && out[0] ? TJ_OK : tj_last_status();
}

/* Inputs: params, grads, momentum buffers (the second parameter's gradient
 * transposed, as a Linear weight's is). */
static void make_inputs(tj_tensor **in, bool fake)
{
    int64_t shapes[N_PARAMS][2] = {{3, 5}, {7, 4}};
    for (int i = 0; i < N_PARAMS; i++) {
        sgd_state s = make_state(TJ_FLOAT32, 2, shapes[i], i ? 2 : 0, true);
        tj_tensor *t[3] = {s.param, s.grad, s.buf};
        for (int k = 0; k < 3; k++) in[k * N_PARAMS + i] = fake ? tj_tensor_fake(TJ_FLOAT32, 2, shapes[i]) : t[k];
    }
}

/* Two replayed steps against two eager reference steps, bit for bit. */
static void check_traced_with(const tj_decomp_table *table, int want_fused, const tj_sgd_options *o)
{
    tj_tensor *fin[3 * N_PARAMS], *in[3 * N_PARAMS], *ref[3 * N_PARAMS];
    make_inputs(fin, true);
    make_inputs(in, false);
    make_inputs(ref, false);
    tj_graph *g = tj_make_fx(sgd_fn, (void *)o, fin, 3 * N_PARAMS, table, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_assert_geq(tj_pass_functionalize(g), 0, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::_fused_sgd_step")), want_fused);
    if (table) cr_expect(test_only_primitives(g));
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    for (int s = 0; s < 2; s++) {
        cr_assert_eq(tj_plan_run_into(p, in, 3 * N_PARAMS, NULL), TJ_OK, "%s", tj_last_error());
        for (int i = 0; i < N_PARAMS; i++) sgd_reference(o, ref[i], ref[N_PARAMS + i], ref[2 * N_PARAMS + i]);
    }
    char what[160];
    describe(o, what, sizeof what);
    for (int i = 0; i < N_PARAMS; i++) {
        expect_identical(in[i], ref[i], what);
        expect_identical(in[2 * N_PARAMS + i], ref[2 * N_PARAMS + i], what);
    }
    tj_plan_free(p);
    tj_graph_free(g);
}

/* Nesterov with weight decay; then maximize, dampening and no weight decay. */
static void check_traced(const tj_decomp_table *table, int want_fused)
{
    tj_sgd_options o = tj_sgd_defaults(0.05);
    o.momentum = 0.9;
    o.weight_decay = 0.01;
    o.nesterov = true;
    check_traced_with(table, want_fused, &o);
    o = tj_sgd_defaults(0.05);
    o.momentum = 0.8;
    o.dampening = 0.3;
    o.maximize = true;
    check_traced_with(table, want_fused, &o);
}

Test(fused_sgd, momentum_update_traces_to_one_call_per_parameter)
{
    check_traced(NULL, N_PARAMS);
}

Test(fused_sgd, core_table_decomposes_it_into_primitives_that_round_the_same)
{
    tj_decomp_table *core = tj_core_decompositions();
    check_traced(core, 0);
    tj_decomp_table_free(core);
}
