/* The in-place operators and the optimisers (SGD, AdamW) against PyTorch. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

static void expect_values(const tj_tensor *t, const double *want, int n, double rtol)
{
    test_expect_close(t, want, n, rtol, 1e-12);
}

TestSuite(inplace, .init = test_scope_open, .fini = test_scope_close);
TestSuite(optim, .init = test_scope_open, .fini = test_scope_close);

/* ---- in-place operators ---- */

Test(inplace, add_through_a_strided_view_changes_the_base)
{
    int64_t s4[1] = {4};
    float ones[4] = {1, 1, 1, 1};
    tj_tensor *base = test_f32(1, s4, ones);
    tj_tensor *every_other = tj_slice(base, 0, true, 0, false, 0, 2);
    tj_tensor *r = tj_add_scalar_(every_other, tj_v_int(1), tj_v_int(1));
    cr_assert_eq(r, every_other, "an in-place operator returns self");
    double want[4] = {2, 1, 2, 1};
    expect_values(base, want, 4, 0);
}

Test(inplace, add_with_alpha_broadcasts_other_into_self)
{
    int64_t s[2] = {2, 3}, s1[1] = {3};
    float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30};
    tj_tensor *x = test_f32(2, s, a), *y = test_f32(1, s1, b);
    cr_assert_not_null(tj_add_(x, y, tj_v_float(0.5)));
    double want[6] = {6, 12, 18, 9, 15, 21};
    expect_values(x, want, 6, 0);
}

Test(inplace, a_broadcast_that_would_grow_self_is_a_shape_error)
{
    int64_t s1[1] = {3}, s[2] = {2, 3};
    float a[3] = {1, 2, 3}, b[6] = {0};
    tj_tensor *x = test_f32(1, s1, a), *y = test_f32(2, s, b);
    cr_assert_null(tj_add_(x, y, tj_v_int(1)));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "aten::add_.Tensor") && strstr(tj_last_error(), "[2, 3]"), "%s", tj_last_error());
    double want[3] = {1, 2, 3};
    expect_values(x, want, 3, 0);
}

Test(inplace, a_float_result_cannot_be_stored_into_int64)
{
    int64_t s[1] = {2}, v[2] = {1, 2};
    tj_tensor *x = tj_tensor_from_data(TJ_INT64, 1, s, v);
    cr_assert_null(tj_mul_scalar_(x, tj_v_float(0.5)));
    cr_expect_eq(tj_last_status(), TJ_ERR_DTYPE);
    cr_expect(strstr(tj_last_error(), "can't be cast to the desired output type int64"), "%s", tj_last_error());
    cr_assert_not_null(tj_mul_scalar_(x, tj_v_int(3)));
    double want[2] = {3, 6};
    expect_values(x, want, 2, 0);
}

Test(inplace, float64_operand_is_computed_in_float64_then_stored_as_float32)
{
    int64_t s[1] = {1};
    float a[1] = {1.0f};
    double b[1] = {1e-9};
    tj_tensor *x = test_f32(1, s, a), *y = test_f64(1, s, b);
    /* 1 + 1e-9 * 1e9 computed in float64 is exactly 2 */
    cr_assert_not_null(tj_add_(x, y, tj_v_float(1e9)));
    double want[1] = {2};
    expect_values(x, want, 1, 0);
}

/* Reference: torch.tensor(a).addcmul_(t1, t2, value=0.5), .addcdiv_(...),
 * .lerp_(end, 0.25) and .lerp_(end, 0.75), float32. */
Test(inplace, addcmul_addcdiv_and_lerp_match_pytorch)
{
    int64_t s[1] = {3};
    float a[3] = {1, -2, 0.5f}, t1[3] = {0.3f, 1.5f, -4}, t2[3] = {2, -0.7f, 3};
    tj_tensor *x = test_f32(1, s, a), *u = test_f32(1, s, t1), *v = test_f32(1, s, t2);
    double m[3] = {1.29999995, -2.5250001, -5.5};
    expect_values(tj_addcmul_(tj_clone(x), u, v, tj_v_float(0.5)), m, 3, 1e-7);
    double d[3] = {1.07500005, -3.07142854, -0.166666687};
    expect_values(tj_addcdiv_(tj_clone(x), u, v, tj_v_float(0.5)), d, 3, 1e-7);
    double l1[3] = {0.824999988, -1.125, -0.625};
    expect_values(tj_lerp_(tj_clone(x), u, tj_v_float(0.25)), l1, 3, 1e-7);
    double l3[3] = {0.475000024, 0.625, -2.875};
    expect_values(tj_lerp_(tj_clone(x), u, tj_v_float(0.75)), l3, 3, 1e-7);
    double o[3] = {1.29999995, -2.5250001, -5.5};
    expect_values(tj_addcmul(x, u, v, tj_v_float(0.5)), o, 3, 1e-7);
    double orig[3] = {1, -2, 0.5};
    expect_values(x, orig, 3, 0);
}

Test(inplace, copy_zero_fill_and_sqrt)
{
    int64_t s[2] = {2, 2}, s1[1] = {2};
    float a[4] = {4, 9, 16, 25}, b[2] = {7, 8};
    tj_tensor *x = test_f32(2, s, a), *src = test_f32(1, s1, b);
    double r[4] = {2, 3, 4, 5};
    expect_values(tj_sqrt_(x), r, 4, 0);
    double c[4] = {7, 8, 7, 8};
    expect_values(tj_copy_(x, src), c, 4, 0);
    double f[4] = {-1.5, -1.5, -1.5, -1.5};
    expect_values(tj_fill_(x, tj_v_float(-1.5)), f, 4, 0);
    double z[4] = {0};
    expect_values(tj_zero_(x), z, 4, 0);
}

Test(inplace, copy_of_a_non_broadcastable_source_is_a_shape_error)
{
    int64_t s[1] = {2}, s3[1] = {3};
    float a[2] = {0}, b[3] = {0};
    cr_assert_null(tj_copy_(test_f32(1, s, a), test_f32(1, s3, b)));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "aten::copy_"), "%s", tj_last_error());
}

Test(inplace, slice_and_select_scatter_write_src_into_a_copy)
{
    int64_t s[2] = {2, 4}, s1[2] = {2, 2}, s2[1] = {4};
    float a[8] = {0}, b[4] = {1, 2, 3, 4}, c[4] = {5, 6, 7, 8};
    tj_tensor *x = test_f32(2, s, a);
    tj_tensor *y = tj_slice_scatter(x, test_f32(2, s1, b), 1, true, 1, false, 0, 2);
    double want[8] = {0, 1, 0, 2, 0, 3, 0, 4};
    expect_values(y, want, 8, 0);
    tj_tensor *z = tj_select_scatter(x, test_f32(1, s2, c), 0, -1);
    double want2[8] = {0, 0, 0, 0, 5, 6, 7, 8};
    expect_values(z, want2, 8, 0);
    double zeros[8] = {0};
    expect_values(x, zeros, 8, 0);
    cr_assert_null(tj_slice_scatter(x, test_f32(1, s2, c), 1, true, 1, false, 0, 2));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
}

Test(inplace, in_place_on_a_leaf_requiring_grad_is_refused_with_grad_mode_on)
{
    int64_t s[1] = {2};
    float a[2] = {1, 2};
    tj_tensor *x = test_f32(1, s, a);
    tj_tensor_set_requires_grad(x, true);
    cr_assert_null(tj_mul_scalar_(x, tj_v_int(2)));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "aten::mul_.Scalar: self (f32[2]) is a leaf that requires grad"), "%s",
              tj_last_error());
    bool prev = tj_no_grad_begin();
    cr_assert_not_null(tj_mul_scalar_(x, tj_v_int(2)));
    tj_no_grad_end(prev);
    double want[2] = {2, 4};
    expect_values(x, want, 2, 0);
}

/* ---- optimisers ----
 * Reference numbers: /usr/bin/python3 (PyTorch 1.13, CPU, float32) running
 * torch.optim.SGD / AdamW for 3 steps on p0[i] = float32(0.5 * sin(i + 1)),
 * shape [2, 3], with p.grad = float32(0.1 * (k + 1) * cos(0.7 * i + k)) at
 * step k, printing the parameter and state with "%.9g". The capturable
 * AdamW numbers come from adamw.py's capturable branch replayed with the
 * same tensor operators on the CPU (PyTorch asserts CUDA for it). */

static tj_tensor *init_param(void)
{
    float v[6];
    for (int i = 0; i < 6; i++) v[i] = (float)(0.5 * sin(i + 1));
    int64_t s[2] = {2, 3};
    return test_f32(2, s, v);
}

static tj_tensor *grad_at(int k)
{
    float v[6];
    for (int i = 0; i < 6; i++) v[i] = (float)(0.1 * (k + 1) * cos(0.7 * i + k));
    int64_t s[2] = {2, 3};
    return test_f32(2, s, v);
}

/* Three steps of an optimiser object on one parameter. */
static tj_tensor *run_object(tj_optimizer *opt, tj_tensor *p)
{
    cr_assert_not_null(opt, "%s", tj_last_error());
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(tj_tensor_set_grad(p, grad_at(k)), TJ_OK);
        cr_assert_eq(tj_optimizer_step(opt), TJ_OK, "%s", tj_last_error());
    }
    return p;
}

Test(optim, sgd_with_momentum_dampening_and_weight_decay_matches_pytorch)
{
    tj_tensor *p = init_param();
    tj_sgd_options o = tj_sgd_defaults(0.1);
    o.momentum = 0.9;
    o.dampening = 0.1;
    o.weight_decay = 0.01;
    tj_optimizer *opt = tj_sgd_new(&p, 1, &o);
    run_object(opt, p);
    double want[6] = {0.38419953, 0.460345179, 0.116895095, -0.313051194, -0.42673561, -0.125547409};
    double buf[6] = {0.0664184093, -0.191749856, -0.364873528, -0.36718896, -0.192533031, 0.0780930072};
    expect_values(p, want, 6, 1e-6);
    expect_values(tj_optimizer_state(opt, 0, "momentum_buffer"), buf, 6, 1e-6);
    tj_optimizer_free(opt);
}

Test(optim, sgd_nesterov_matches_pytorch)
{
    tj_tensor *p = init_param();
    tj_sgd_options o = tj_sgd_defaults(0.05);
    o.momentum = 0.8;
    o.weight_decay = 0.001;
    o.nesterov = true;
    tj_optimizer *opt = tj_sgd_new(&p, 1, &o);
    run_object(opt, p);
    double want[6] = {0.403879851, 0.470751375, 0.112121046, -0.330917239, -0.448448747, -0.139828473};
    double buf[6] = {0.0266016796, -0.241790161, -0.396962434, -0.365514368, -0.161744609, 0.118621491};
    expect_values(p, want, 6, 1e-6);
    expect_values(tj_optimizer_state(opt, 0, "momentum_buffer"), buf, 6, 1e-6);
    tj_optimizer_free(opt);
}

Test(optim, sgd_maximize_climbs_the_gradient)
{
    tj_tensor *p = init_param();
    tj_sgd_options o = tj_sgd_defaults(0.1);
    o.maximize = true;
    tj_optimizer *opt = tj_sgd_new(&p, 1, &o);
    run_object(opt, p);
    double want[6] = {0.429057121, 0.432598054, 0.0285078529, -0.420677125, -0.502078712, -0.132028118};
    expect_values(p, want, 6, 1e-6);
    cr_expect_null(tj_optimizer_state(opt, 0, "momentum_buffer"), "no buffer without momentum");
    tj_optimizer_free(opt);
}

Test(optim, sgd_rejects_nesterov_without_momentum)
{
    tj_tensor *p = init_param();
    tj_sgd_options o = tj_sgd_defaults(0.1);
    o.nesterov = true;
    cr_expect_null(tj_sgd_new(&p, 1, &o));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "Nesterov"), "%s", tj_last_error());
}

Test(optim, adamw_defaults_match_pytorch)
{
    tj_tensor *p = init_param();
    tj_adamw_options o = tj_adamw_defaults();
    cr_expect_eq(o.lr, 1e-3);
    cr_expect_eq(o.beta2, 0.999);
    cr_expect_eq(o.weight_decay, 1e-2);
    tj_optimizer *opt = tj_adamw_new(&p, 1, &o);
    run_object(opt, p);
    double want[6] = {0.418544799, 0.45376265, 0.0710224509, -0.375569433, -0.476804227, -0.138054386};
    double m[6] = {0.00534103811, -0.023246143, -0.0409002975, -0.0393184051, -0.0192444492, 0.00988047104};
    double v[6] = {3.72314353e-05, 8.00626949e-05, 0.000106139429, 7.21725519e-05, 3.45493027e-05, 5.57267558e-05};
    double step[1] = {3};
    expect_values(p, want, 6, 1e-6);
    expect_values(tj_optimizer_state(opt, 0, "exp_avg"), m, 6, 1e-6);
    expect_values(tj_optimizer_state(opt, 0, "exp_avg_sq"), v, 6, 1e-6);
    expect_values(tj_optimizer_state(opt, 0, "step"), step, 1, 0);
    tj_optimizer_free(opt);
}

Test(optim, adamw_amsgrad_matches_pytorch)
{
    tj_tensor *p = init_param();
    tj_adamw_options o = tj_adamw_defaults();
    o.lr = 0.01;
    o.weight_decay = 0.1;
    o.beta1 = 0.8;
    o.beta2 = 0.9;
    o.amsgrad = true;
    tj_optimizer *opt = tj_adamw_new(&p, 1, &o);
    run_object(opt, p);
    double want[6] = {0.398555249, 0.445621222, 0.0755835101, -0.348892391, -0.452247649, -0.123657376};
    double mx[6] = {0.00341953966, 0.00788971782, 0.0103931865, 0.00677402318, 0.00330152432, 0.00539021147};
    expect_values(p, want, 6, 1e-6);
    expect_values(tj_optimizer_state(opt, 0, "max_exp_avg_sq"), mx, 6, 1e-6);
    tj_optimizer_free(opt);
}

Test(optim, functional_adamw_capturable_matches_pytorchs_capturable_branch)
{
    tj_tensor *p = init_param();
    int64_t s[2] = {2, 3};
    tj_tensor *m = tj_zeros(s, 2, TJ_FLOAT32), *v = tj_zeros(s, 2, TJ_FLOAT32), *step = tj_zeros(NULL, 0, TJ_FLOAT32);
    tj_adamw_options o = tj_adamw_defaults();
    o.capturable = true;
    for (int k = 0; k < 3; k++) {
        tj_tensor *g = grad_at(k);
        cr_assert_eq(tj_adamw_update(&o, &p, &g, &m, &v, NULL, &step, 1), TJ_OK, "%s", tj_last_error());
    }
    double want[6] = {0.418544799, 0.45376265, 0.0710224435, -0.375569463, -0.476804227, -0.138054416};
    expect_values(p, want, 6, 1e-6);
}

Test(optim, functional_sgd_creates_the_momentum_buffer_on_the_first_step)
{
    tj_tensor *p = init_param(), *buf = NULL, *g = grad_at(0);
    tj_sgd_options o = tj_sgd_defaults(0.1);
    o.momentum = 0.9;
    cr_assert_eq(tj_sgd_update(&o, &p, &g, &buf, 1), TJ_OK, "%s", tj_last_error());
    cr_assert_not_null(buf);
    cr_expect(!tj_tensor_shares_storage(buf, g), "the buffer is a copy of the gradient");
    double gv[6];
    for (int i = 0; i < 6; i++) gv[i] = tj_tensor_item_at(g, i);
    expect_values(buf, gv, 6, 0);
}

Test(optim, zero_grad_zeroes_in_place_or_drops_the_gradient)
{
    tj_tensor *p = init_param();
    tj_tensor_set_requires_grad(p, true);
    tj_sgd_options o = tj_sgd_defaults(0.1);
    tj_optimizer *opt = tj_sgd_new(&p, 1, &o);
    tj_tensor *g = grad_at(1);
    tj_tensor_set_grad(p, g);
    cr_assert_eq(tj_optimizer_zero_grad(opt, false), TJ_OK);
    cr_expect_eq(tj_tensor_grad(p), g);
    double z[6] = {0};
    expect_values(g, z, 6, 0);
    cr_assert_eq(tj_optimizer_zero_grad(opt, true), TJ_OK);
    cr_expect_null(tj_tensor_grad(p));
    tj_optimizer_free(opt);
}

/* An optimiser object's step inside make_fx: its parameter is not the traced
 * input (fake mode), or its state would be frozen into the graph (real mode),
 * so the step is refused and the trace fails with its error. */
static tj_status fn_object_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_tensor *loss = tj_sum(tj_mul(in[0], in[0]), -1);
    if (!loss || tj_backward(loss, NULL) != TJ_OK) return tj_last_status();
    tj_status st = tj_optimizer_step(ctx);
    out[0] = loss;
    *n_out = 1;
    return st;
}

Test(optim, an_optimiser_object_step_inside_make_fx_is_refused)
{
    tj_tensor *p = init_param();
    cr_assert_eq(tj_tensor_set_requires_grad(p, true), TJ_OK);
    tj_sgd_options o = tj_sgd_defaults(0.1);
    o.momentum = 0.9;
    tj_optimizer *opt = tj_sgd_new(&p, 1, &o);
    cr_assert_not_null(opt, "%s", tj_last_error());
    tj_tensor *before = tj_clone(p);
    tj_tracing_mode modes[2] = {TJ_TRACE_FAKE, TJ_TRACE_REAL};
    for (int m = 0; m < 2; m++) {
        cr_expect_null(tj_make_fx(fn_object_step, opt, &p, 1, NULL, modes[m]));
        cr_expect_eq(tj_last_status(), TJ_ERR_UNSUPPORTED, "%s", tj_last_error());
        cr_expect(strstr(tj_last_error(), "tj_optimizer_step: called inside tj_make_fx"), "%s", tj_last_error());
        bool same = false;
        cr_assert_eq(tj_allclose(p, before, 0, 0, false, &same), TJ_OK);
        cr_expect(same, "p unchanged");
    }
    cr_expect_null(tj_optimizer_state(opt, 0, "momentum_buffer"), "no step was taken");
    /* outside a trace the same object steps */
    cr_assert_eq(tj_tensor_set_grad(p, grad_at(0)), TJ_OK);
    cr_assert_eq(tj_optimizer_step(opt), TJ_OK, "%s", tj_last_error());
    cr_expect_not_null(tj_optimizer_state(opt, 0, "momentum_buffer"));
    bool same = true;
    cr_assert_eq(tj_allclose(p, before, 0, 0, false, &same), TJ_OK);
    cr_expect_not(same, "the step changed p");
    tj_optimizer_free(opt);
}
