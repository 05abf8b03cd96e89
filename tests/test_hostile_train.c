/* Hostile inputs to the public API (issue 9), continued (see test_hostile.c):
 * autograd.h, optim.h and library.h, one suite each. Cases other tests cover
 * are not repeated (test_optim.c: nesterov without momentum; test_library.c:
 * malformed schemas and bad registrations). Each call must fail with the
 * status and a message naming the function and what was wrong, change
 * nothing else (no parameter, state or gradient half-updated) and leak
 * nothing. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "alloc_counter.h"
#include "hostile.h"
#include "tjit/library.h"

TestSuite(hostile_autograd, .init = count_allocations);
TestSuite(hostile_optim, .init = count_allocations);
TestSuite(hostile_library, .init = count_allocations);

/* ============================== autograd.h ============================== */

Test(hostile_autograd, flags_and_grads_refuse_wrong_tensors)
{
    int64_t base = live_allocations();
    tj_tensor *i = tj_tensor_from_data(TJ_INT64, 1, I64(2), (const int64_t[]){1, 2});
    tj_tensor *x = ramp(1, I64(3), 0);
    cr_expect_eq(tj_tensor_set_requires_grad(NULL, true), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_set_requires_grad");
    cr_expect_eq(tj_tensor_set_requires_grad(i, true), TJ_ERR_DTYPE);
    EXPECT_ERROR(TJ_ERR_DTYPE, "tj_tensor_set_requires_grad", "float");
    cr_expect(!tj_tensor_requires_grad(i));
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    tj_scope *s = tj_scope_begin();
    tj_tensor *y = tj_mul(x, x);
    cr_expect_eq(tj_tensor_set_requires_grad(y, false), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_set_requires_grad", "leaf");
    cr_expect_eq(tj_tensor_set_grad(x, ramp(1, I64(4), 0)), TJ_ERR_SHAPE);
    EXPECT_ERROR(TJ_ERR_SHAPE, "tj_tensor_set_grad", "[4]", "[3]");
    cr_expect_eq(tj_tensor_set_grad(x, tj_to_copy(ramp(1, I64(3), 0), TJ_FLOAT64)), TJ_ERR_DTYPE);
    EXPECT_ERROR(TJ_ERR_DTYPE, "tj_tensor_set_grad", "float64");
    cr_expect_null(tj_tensor_grad(x));
    cr_expect_eq(tj_tensor_set_grad(NULL, x), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_set_grad");
    cr_expect_null(tj_tensor_detach(NULL));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_detach");
    cr_expect_null(tj_tensor_grad(NULL));
    cr_expect(!tj_tensor_requires_grad(NULL));
    cr_expect(tj_tensor_is_leaf(NULL));
    cr_expect(!tj_op_has_derivative(NULL));
    cr_expect(!tj_op_is_differentiable(NULL));
    tj_scope_end(s);
    tj_tensor_release(i);
    tj_tensor_release(x);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_autograd, backward_passes_refuse_bad_outputs_and_leave_grads_alone)
{
    int64_t base = live_allocations();
    tj_tensor *x = ramp(1, I64(3), 1), *plain = ramp(1, I64(3), 0);
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    tj_scope *s = tj_scope_begin();
    tj_tensor *y = tj_mul(x, x), *total = tj_sum(y, -1);
    cr_expect_eq(tj_backward(NULL, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_backward");
    cr_expect_eq(tj_backward(plain, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "does not require grad");
    cr_expect_eq(tj_backward(y, NULL), TJ_ERR_SHAPE);
    EXPECT_ERROR(TJ_ERR_SHAPE, "one-element outputs");
    cr_expect_eq(tj_backward(y, ramp(1, I64(4), 0)), TJ_ERR_SHAPE);
    EXPECT_ERROR(TJ_ERR_SHAPE, "grad_output 0 has shape [4]");
    cr_expect_null(tj_tensor_grad(x), "a refused backward accumulated a gradient");
    tj_tensor *r[1] = {NULL};
    cr_expect_eq(tj_autograd_grad(&total, 1, NULL, &plain, 1, r), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_autograd_grad", "input 0");
    cr_expect_eq(tj_autograd_grad(&total, -1, NULL, &x, 1, r), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_autograd_grad");
    cr_expect_eq(tj_autograd_grad(&total, 1, NULL, &x, -1, r), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_autograd_grad");
    cr_expect_eq(tj_autograd_grad(NULL, 1, NULL, &x, 1, r), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_autograd_grad");
    cr_expect_eq(tj_autograd_grad(&total, 1, NULL, &x, 1, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_autograd_grad");
    cr_expect_eq(tj_autograd_grad((tj_tensor *[]){NULL}, 1, NULL, &x, 1, r), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "output 0 is NULL");
    cr_expect_null(r[0]);
    cr_expect_null(tj_tensor_grad(x));
    tj_scope_end(s);
    expect_values(x, (const float[]){1, 2, 3}, 3);
    tj_tensor_release(x);
    tj_tensor_release(plain);
    cr_expect_eq(live_allocations(), base);
}

/* ================================ optim.h ================================ */

Test(hostile_optim, invalid_hyper_parameters_are_refused_naming_the_value)
{
    int64_t base = live_allocations();
    tj_tensor *p = ramp(1, I64(2), 1), *g = ramp(1, I64(2), 1);
    struct {
        double lr, momentum, weight_decay;
        const char *needle;
    } sgd[] = {{-0.1, 0, 0, "learning rate -0.1"}, {NAN, 0, 0, "learning rate nan"}, {0.1, -1, 0, "momentum"},
               {0.1, 0, -2, "weight_decay"}, {0.1, NAN, 0, "momentum"}};
    for (size_t i = 0; i < sizeof sgd / sizeof *sgd; i++) {
        tj_sgd_options o = tj_sgd_defaults(sgd[i].lr);
        o.momentum = sgd[i].momentum;
        o.weight_decay = sgd[i].weight_decay;
        cr_expect_eq(tj_sgd_update(&o, &p, &g, NULL, 1), TJ_ERR_INVALID_ARGUMENT, "case %zu", i);
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "sgd", sgd[i].needle);
        cr_expect_null(tj_sgd_new(&p, 1, &o));
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "sgd", sgd[i].needle);
    }
    struct {
        double lr, beta1, beta2, eps;
        const char *needle;
    } adamw[] = {{-1, 0.9, 0.999, 1e-8, "learning rate"}, {1e-3, 1.0, 0.999, 1e-8, "index 0"},
                 {1e-3, 0.9, -0.5, 1e-8, "index 1"}, {1e-3, NAN, 0.999, 1e-8, "index 0"},
                 {1e-3, 0.9, 0.999, -1e-8, "epsilon"}};
    tj_tensor *m = ramp(1, I64(2), 0), *v = ramp(1, I64(2), 0), *step = tj_tensor_scalar_f32(0);
    for (size_t i = 0; i < sizeof adamw / sizeof *adamw; i++) {
        tj_adamw_options o = tj_adamw_defaults();
        o.lr = adamw[i].lr, o.beta1 = adamw[i].beta1, o.beta2 = adamw[i].beta2, o.eps = adamw[i].eps;
        cr_expect_eq(tj_adamw_update(&o, &p, &g, &m, &v, NULL, &step, 1), TJ_ERR_INVALID_ARGUMENT, "case %zu", i);
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "adamw", adamw[i].needle);
        cr_expect_null(tj_adamw_new(&p, 1, &o));
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "adamw", adamw[i].needle);
    }
    cr_expect_eq(tj_sgd_update(NULL, &p, &g, NULL, 1), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "NULL options");
    tj_sgd_options o = tj_sgd_defaults(0.1);
    cr_expect_eq(tj_sgd_update(&o, &p, &g, NULL, -1), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_sgd_update");
    expect_values(p, (const float[]){1, 2}, 2);
    expect_values(step, (const float[]){0}, 1);
    tj_tensor_release(p);
    tj_tensor_release(g);
    tj_tensor_release(m);
    tj_tensor_release(v);
    tj_tensor_release(step);
    cr_expect_eq(live_allocations(), base);
}

/* AdamW's step counts and lists: a wrong dtype is a dtype error, a wrong
 * size a shape error, a NULL list is named; nothing changes. */
Test(hostile_optim, adamw_names_a_bad_step_count_or_a_null_list)
{
    int64_t base = live_allocations();
    tj_tensor *p = ramp(1, I64(2), 1), *g = ramp(1, I64(2), 1), *m = ramp(1, I64(2), 0), *v = ramp(1, I64(2), 0);
    tj_tensor *istep = tj_tensor_from_data(TJ_INT64, 0, NULL, (const int64_t[]){0});
    tj_tensor *step2 = ramp(1, I64(2), 0), *step = tj_tensor_scalar_f32(0);
    tj_adamw_options o = tj_adamw_defaults();
    cr_expect_eq(tj_adamw_update(&o, &p, &g, &m, &v, NULL, &istep, 1), TJ_ERR_DTYPE);
    EXPECT_ERROR(TJ_ERR_DTYPE, "step 0", "int64");
    cr_expect_eq(tj_adamw_update(&o, &p, &g, &m, &v, NULL, &step2, 1), TJ_ERR_SHAPE);
    EXPECT_ERROR(TJ_ERR_SHAPE, "step 0", "[2]");
    cr_expect_eq(tj_adamw_update(&o, &p, &g, NULL, &v, NULL, &step, 1), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "exp_avgs list");
    o.amsgrad = true;
    cr_expect_eq(tj_adamw_update(&o, &p, &g, &m, &v, NULL, &step, 1), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "max_exp_avg_sqs");
    expect_values(p, (const float[]){1, 2}, 2);
    expect_values(m, (const float[]){0, 1}, 2);
    expect_values(step, (const float[]){0}, 1);
    tj_tensor *all[] = {p, g, m, v, istep, step2, step};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) tj_tensor_release(all[i]);
    cr_expect_eq(live_allocations(), base);
}

/* The second parameter's gradient does not fit: no parameter (the first
 * included) and no state may change. */
Test(hostile_optim, a_mismatched_gradient_changes_no_parameter_and_no_state)
{
    int64_t base = live_allocations();
    tj_tensor *p[2] = {ramp(1, I64(2), 1), ramp(1, I64(3), 1)}, *g[2] = {ramp(1, I64(2), 1), ramp(1, I64(4), 1)};
    tj_tensor *mom[2] = {NULL, NULL};
    tj_sgd_options so = tj_sgd_defaults(0.1);
    so.momentum = 0.9;
    cr_expect_neq(tj_sgd_update(&so, p, g, mom, 2), TJ_OK);
    EXPECT_ERROR(TJ_ERR_SHAPE, "[4]", "[3]");
    expect_values(p[0], (const float[]){1, 2}, 2);
    cr_expect_null(mom[0], "a refused update created momentum state");
    tj_tensor *m[2] = {ramp(1, I64(2), 0), ramp(1, I64(3), 0)}, *v[2] = {ramp(1, I64(2), 0), ramp(1, I64(3), 0)};
    tj_tensor *steps[2] = {tj_tensor_scalar_f32(0), tj_tensor_scalar_f32(0)};
    tj_adamw_options ao = tj_adamw_defaults();
    cr_expect_neq(tj_adamw_update(&ao, p, g, m, v, NULL, steps, 2), TJ_OK);
    EXPECT_ERROR(TJ_ERR_SHAPE, "[4]", "[3]");
    expect_values(p[0], (const float[]){1, 2}, 2);
    expect_values(m[0], (const float[]){0, 1}, 2);
    expect_values(steps[0], (const float[]){0}, 1);
    expect_values(steps[1], (const float[]){0}, 1);
    /* an int64 parameter */
    tj_tensor *ip = tj_tensor_from_data(TJ_INT64, 1, I64(2), (const int64_t[]){1, 2});
    cr_expect_neq(tj_sgd_update(&so, (tj_tensor *[]){p[0], ip}, (tj_tensor *[]){g[0], ip}, mom, 2), TJ_OK);
    EXPECT_ERROR(TJ_ERR_DTYPE, "int64");
    expect_values(p[0], (const float[]){1, 2}, 2);
    for (int i = 0; i < 2; i++) {
        tj_tensor_release(p[i]);
        tj_tensor_release(g[i]);
        tj_tensor_release(m[i]);
        tj_tensor_release(v[i]);
        tj_tensor_release(steps[i]);
    }
    tj_tensor_release(ip);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_optim, optimizer_objects_refuse_null_and_unknown_state)
{
    int64_t base = live_allocations();
    tj_sgd_options o = tj_sgd_defaults(0.1);
    cr_expect_null(tj_sgd_new(NULL, 2, &o));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "NULL parameter list");
    cr_expect_null(tj_sgd_new((tj_tensor *[]){NULL}, 1, &o));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "parameter 0 is NULL");
    cr_expect_null(tj_adamw_new(NULL, -3, NULL));
    cr_expect_neq(tj_last_status(), TJ_OK);
    tj_clear_error();
    cr_expect_eq(tj_optimizer_step(NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_optimizer_step");
    cr_expect_eq(tj_optimizer_zero_grad(NULL, true), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_optimizer_zero_grad");
    tj_optimizer_set_lr(NULL, 0.5);
    tj_optimizer_free(NULL);
    cr_expect_null(tj_optimizer_state(NULL, 0, "step"));
    tj_tensor *p = ramp(1, I64(2), 1);
    tj_optimizer *opt = tj_adamw_new(&p, 1, NULL);
    if (!opt) { /* NULL options may be refused; then use the defaults */
        tj_clear_error();
        tj_adamw_options d = tj_adamw_defaults();
        opt = tj_adamw_new(&p, 1, &d);
    }
    cr_assert_not_null(opt, "%s", tj_last_error());
    cr_expect_null(tj_optimizer_state(opt, -1, "exp_avg"));
    cr_expect_null(tj_optimizer_state(opt, 1, "exp_avg"));
    cr_expect_null(tj_optimizer_state(opt, 0, NULL));
    cr_expect_null(tj_optimizer_state(opt, 0, "momentum_buffer_typo"));
    cr_expect_eq(tj_optimizer_step(opt), TJ_OK, "%s", tj_last_error()); /* no grad: skipped */
    expect_values(p, (const float[]){1, 2}, 2);
    tj_optimizer_free(opt);
    tj_tensor_release(p);
    cr_expect_eq(live_allocations(), base);
}

/* =============================== library.h =============================== */

/* Shape functions that break the contract in one way each; ctx through a
 * global (tj_meta_fn has none). */
static int meta_mode;

static tj_status bad_meta(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    outs[0].dtype = tj_tensor_dtype(x);
    outs[0].ndim = tj_tensor_ndim(x);
    memcpy(outs[0].shape, tj_tensor_shape(x), sizeof(int64_t) * (size_t)tj_tensor_ndim(x));
    switch (meta_mode) {
    case 0: outs[0].ndim = 99; break;
    case 1: outs[0].ndim = -1; break;
    case 2: outs[0].shape[0] = -5; break;
    case 3: outs[0].dtype = (tj_dtype)42; break;
    case 4: outs[0].shape[0] = INT64_MAX; break;
    }
    return TJ_OK;
}

static tj_status copy_kernel(const tj_value *args, tj_tensor *const *outs)
{
    return tj_tensor_copy_to(args[0].u.t, tj_tensor_data(outs[0]));
}

/* views: alias an argument that is not a tensor, or reach past the storage */
static tj_status bad_view_meta(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    outs[0].dtype = tj_tensor_dtype(x);
    outs[0].ndim = 1;
    outs[0].shape[0] = tj_tensor_numel(x);
    outs[0].strides[0] = 1;
    outs[0].alias = 0;
    switch (meta_mode) {
    case 0: outs[0].offset = 1000; break;        /* starts far past the end */
    case 1: outs[0].strides[0] = 1000; break;    /* steps out of the storage */
    case 2: outs[0].offset = -1; break;          /* starts before it */
    case 3: outs[0].alias = 1; break;            /* argument 1 is an int */
    case 4: outs[0].alias = 7; break;            /* no argument 7 */
    }
    return TJ_OK;
}

Test(hostile_library, a_shape_function_that_breaks_the_contract_is_an_error_not_a_crash)
{
    int64_t base = live_allocations();
    const tj_op *op = tj_op_register("hostile::bad_meta(Tensor x) -> Tensor", TJ_OP_PRIMITIVE, copy_kernel, bad_meta);
    cr_assert_not_null(op, "%s", tj_last_error());
    const tj_op *view = tj_op_register("hostile::bad_view(Tensor(a) x, int k=0) -> Tensor(a)", TJ_OP_PRIMITIVE, NULL,
                                       bad_view_meta);
    cr_assert_not_null(view, "%s", tj_last_error());
    base = live_allocations(); /* the registry keeps the operators */
    tj_tensor *x = ramp(1, I64(4), 0);
    tj_value outs[TJ_MAX_RETURNS];
    for (meta_mode = 0; meta_mode < 5; meta_mode++) {
        cr_expect_neq(tj_dispatch(op, (tj_value[]){tj_v_tensor(x)}, 1, outs), TJ_OK, "bad meta %d accepted", meta_mode);
        cr_expect(strstr(tj_last_error(), "hostile::bad_meta"), "meta %d: %s", meta_mode, tj_last_error());
        cr_expect_eq(outs[0].kind, TJ_V_NONE);
        tj_clear_error();
        cr_expect_neq(tj_dispatch(view, (tj_value[]){tj_v_tensor(x), tj_v_int(0)}, 2, outs), TJ_OK,
                      "bad view meta %d accepted", meta_mode);
        cr_expect(strstr(tj_last_error(), "hostile::bad_view"), "view meta %d: %s", meta_mode, tj_last_error());
        cr_expect_eq(outs[0].kind, TJ_V_NONE);
        tj_clear_error();
    }
    expect_values(x, (const float[]){0, 1, 2, 3}, 4);
    tj_tensor_release(x);
    cr_expect_eq(live_allocations(), base);
}

/* Callbacks that fail with a status but record no error (tj_error). */
static tj_status silent_meta(const tj_value *args, tj_meta *outs)
{
    (void)args;
    (void)outs;
    return TJ_ERR_SHAPE;
}

static tj_status silent_kernel(const tj_value *args, tj_tensor *const *outs)
{
    (void)args;
    (void)outs;
    return TJ_ERR_SHAPE;
}

static tj_status same_shape_meta(const tj_value *args, tj_meta *outs)
{
    meta_mode = -1; /* bad_meta changes nothing */
    return bad_meta(args, outs);
}

static tj_status silent_decomp(const tj_value *args, tj_value *outs)
{
    (void)args;
    (void)outs;
    return TJ_ERR_SHAPE;
}

static tj_status call_first_op(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_value r[2];
    tj_status st = tj_dispatch(ctx, (tj_value[]){tj_v_tensor(in[0])}, 1, r);
    out[0] = st == TJ_OK ? r[0].u.t : NULL;
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status(); /* the caller's idiom: NULL must come with an error */
}

/* Before: the call failed with tj_last_status() still TJ_OK and an empty
 * message (an implicit operator's: "hostile::h: "), so `out ? TJ_OK :
 * tj_last_status()` took the NULL result for a success. */
Test(hostile_library, a_callback_failing_without_recording_an_error_gets_one_naming_it)
{
    const tj_op *meta = tj_op_register("hostile::silent_meta(Tensor x) -> Tensor", TJ_OP_PRIMITIVE, copy_kernel,
                                       silent_meta);
    const tj_op *kernel = tj_op_register("hostile::silent_kernel(Tensor x) -> Tensor", TJ_OP_PRIMITIVE, silent_kernel,
                                         same_shape_meta);
    const tj_op *implicit = tj_op_register("hostile::silent_decomp(Tensor x) -> Tensor", TJ_OP_IMPLICIT, NULL, NULL);
    cr_assert(meta && kernel && implicit, "%s", tj_last_error());
    cr_assert_eq(tj_register_decomposition(implicit, silent_decomp, "silent_decomp"), TJ_OK);
    int64_t base = live_allocations();
    tj_tensor *x = ramp(1, I64(4), 0);
    tj_value outs[TJ_MAX_RETURNS];
    tj_clear_error();
    cr_expect_eq(tj_dispatch(meta, (tj_value[]){tj_v_tensor(x)}, 1, outs), TJ_ERR_SHAPE);
    EXPECT_ERROR(TJ_ERR_SHAPE, "hostile::silent_meta: its shape function returned shape error (2) without recording");
    cr_expect_eq(tj_dispatch(kernel, (tj_value[]){tj_v_tensor(x)}, 1, outs), TJ_ERR_SHAPE);
    EXPECT_ERROR(TJ_ERR_SHAPE, "hostile::silent_kernel: its kernel returned shape error (2) without recording");
    cr_expect_eq(tj_dispatch(implicit, (tj_value[]){tj_v_tensor(x)}, 1, outs), TJ_ERR_SHAPE);
    EXPECT_ERROR(TJ_ERR_SHAPE, "hostile::silent_decomp: its decomposition returned shape error (2) without recording");
    cr_expect_eq(outs[0].kind, TJ_V_NONE);

    /* a decomposition from make_fx's table */
    const tj_op *relu = tj_op_find("aten::relu");
    tj_decomp_table *table = tj_decomp_table_new();
    cr_assert_eq(tj_decomp_table_add_fn(table, relu, silent_decomp, "silent"), TJ_OK);
    tj_graph *g = tj_make_fx(call_first_op, (void *)relu, &x, 1, table, TJ_TRACE_FAKE);
    cr_expect_null(g);
    EXPECT_ERROR(TJ_ERR_SHAPE, "aten::relu: its decomposition returned shape error (2) without recording");
    tj_decomp_table_free(table);

    /* a plan step: the kernel runs only there */
    g = tj_make_fx(call_first_op, (void *)kernel, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *plan = tj_compile(g, NULL);
    cr_assert_not_null(plan, "%s", tj_last_error());
    tj_tensor *out[1];
    tj_clear_error();
    cr_expect_eq(tj_plan_run(plan, &x, 1, out), TJ_ERR_SHAPE);
    EXPECT_ERROR(TJ_ERR_SHAPE, "tj_plan_run: a step's kernel returned shape error (2) without recording");
    tj_plan_free(plan);
    tj_graph_free(g);
    tj_tensor_release(x);
    cr_expect_eq(live_allocations(), base);
}

static int decomp_gives; /* how many of the two outputs */

static tj_status partial_decomp(const tj_value *args, tj_value *outs)
{
    for (int i = 0; i < decomp_gives; i++) outs[i] = tj_v_tensor(tj_relu(args[0].u.t));
    return TJ_OK;
}

/* Before: tj_dispatch returned TJ_OK with outs[0] or outs[1] None, which
 * the caller (and make_fx, and the C wrappers) took for a tensor. */
Test(hostile_library, an_implicit_decomposition_that_gives_no_tensor_is_an_error_and_leaks_nothing)
{
    const tj_op *op = tj_op_register("hostile::pair(Tensor x) -> (Tensor, Tensor)", TJ_OP_IMPLICIT, NULL, NULL);
    cr_assert_not_null(op, "%s", tj_last_error());
    cr_assert_eq(tj_register_decomposition(op, partial_decomp, "partial"), TJ_OK);
    int64_t base = live_allocations();
    tj_tensor *x = ramp(1, I64(4), -2);
    tj_value outs[TJ_MAX_RETURNS];
    for (decomp_gives = 0; decomp_gives < 2; decomp_gives++) {
        cr_expect_eq(tj_dispatch(op, (tj_value[]){tj_v_tensor(x)}, 1, outs), TJ_ERR_INVALID_ARGUMENT);
        char want[96];
        snprintf(want, sizeof want, "hostile::pair: its decomposition gave no Tensor for output %d of 2", decomp_gives);
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, want);
        cr_expect(outs[0].kind == TJ_V_NONE && outs[1].kind == TJ_V_NONE);
    }
    cr_expect_eq(tj_dispatch(op, (tj_value[]){tj_v_tensor(x)}, 1, outs), TJ_OK, "%s", tj_last_error());
    expect_values(outs[1].u.t, (const float[]){0, 0, 0, 1}, 4);
    tj_tensor_release(outs[0].u.t);
    tj_tensor_release(outs[1].u.t);
    tj_tensor_release(x);
    cr_expect_eq(live_allocations(), base);
}

/* A view of 10 elements, whatever its input holds. */
static tj_status wide_view_meta(const tj_value *args, tj_meta *outs)
{
    outs[0].dtype = tj_tensor_dtype(args[0].u.t);
    outs[0].ndim = 1;
    outs[0].shape[0] = 10;
    outs[0].strides[0] = 1;
    outs[0].offset = tj_tensor_storage_offset(args[0].u.t);
    outs[0].alias = 0;
    return TJ_OK;
}

/* Before: eagerly the view read 6 elements past a [4] tensor's (its
 * allocation's uninitialised rounding), a fake-mode trace recorded it
 * unchecked (a fake tensor has no storage), and its plan returned a view
 * reaching past the input's allocation (out of bounds under ASan). */
Test(hostile_library, a_user_view_past_its_input_is_refused_eagerly_when_traced_and_in_a_plan)
{
    const tj_op *op = tj_op_register("hostile::wide_view(Tensor(a) x) -> Tensor(a)", TJ_OP_PRIMITIVE, NULL,
                                     wide_view_meta);
    cr_assert_not_null(op, "%s", tj_last_error());
    int64_t base = live_allocations();
    tj_tensor *x = ramp(1, I64(4), 0), *big = ramp(1, I64(12), 0);
    tj_value outs[TJ_MAX_RETURNS];
    cr_expect_eq(tj_dispatch(op, (tj_value[]){tj_v_tensor(x)}, 1, outs), TJ_ERR_INDEX);
    EXPECT_ERROR(TJ_ERR_INDEX, "hostile::wide_view: output 0", "elements 0..9, outside the 4 elements");
    cr_expect_null(tj_make_fx(call_first_op, (void *)op, &x, 1, NULL, TJ_TRACE_FAKE));
    EXPECT_ERROR(TJ_ERR_INDEX, "hostile::wide_view: output 0", "outside the 4 elements");

    /* traced on the head of 12 elements (allowed, as eagerly), run on 4 */
    tj_tensor *out[1], *head = tj_slice(big, 0, true, 0, true, 4, 1);
    tj_graph *g = tj_make_fx(call_first_op, (void *)op, &head, 1, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *plan = tj_compile(g, NULL);
    cr_assert_not_null(plan, "%s", tj_last_error());
    cr_expect_eq(tj_plan_run(plan, &x, 1, out), TJ_ERR_INDEX);
    EXPECT_ERROR(TJ_ERR_INDEX, "tj_plan_run: node %wide_view: hostile::wide_view: size [10], stride [1]",
                 "out of bounds for the storage of 4 elements of this run's input 0");
    cr_expect_eq(tj_plan_run(plan, &head, 1, out), TJ_OK, "%s", tj_last_error());
    expect_values(out[0], (const float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10);
    tj_tensor_release(out[0]);
    tj_tensor_release(head);
    tj_plan_free(plan);
    tj_graph_free(g);
    tj_tensor_release(x);
    tj_tensor_release(big);
    cr_expect_eq(live_allocations(), base);
}

/* Row 0 as a view; like many shape functions it leaves the dtype alone
 * (library.h asks a view for alias, shape, strides and offset). */
static tj_status first_row_meta(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    outs[0].alias = 0;
    outs[0].ndim = 1;
    outs[0].shape[0] = tj_tensor_size(x, 1);
    outs[0].strides[0] = tj_tensor_strides(x)[1];
    outs[0].offset = tj_tensor_storage_offset(x);
    return TJ_OK;
}

static tj_status first_row_squared(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor *row;
    tj_status st = call_first_op(ctx, in, n, &row, n_out);
    out[0] = st == TJ_OK ? tj_mul(row, row) : NULL;
    return out[0] ? TJ_OK : tj_last_status();
}

/* Before: eager and traced calls gave a float64 view of a float64 input,
 * but tj_compile compared the shape function's float32 default with the
 * recorded float64: "the shape function gives float32[3], the graph
 * records float64[3]". */
Test(hostile_library, a_user_view_of_a_float64_tensor_compiles_with_its_arguments_dtype)
{
    const tj_op *op = tj_op_register("hostile::first_row(Tensor(a) x) -> Tensor(a)", TJ_OP_PRIMITIVE, NULL,
                                     first_row_meta);
    cr_assert_not_null(op, "%s", tj_last_error());
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT64, 2, I64(2, 3), (const double[]){1, -2, 3, 4, 5, 6});
    tj_tensor *eager;
    int n_out;
    cr_assert_eq(first_row_squared((void *)op, &x, 1, &eager, &n_out), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_dtype(eager), TJ_FLOAT64);
    for (int mode = 0; mode < 2; mode++) {
        tj_graph *g = tj_make_fx(first_row_squared, (void *)op, &x, 1, NULL, mode ? TJ_TRACE_FAKE : TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s", tj_last_error());
        tj_plan *plan = tj_compile(g, NULL);
        cr_assert_not_null(plan, "mode %d: %s", mode, tj_last_error());
        tj_tensor *out[1];
        cr_assert_eq(tj_plan_run(plan, &x, 1, out), TJ_OK, "%s", tj_last_error());
        cr_expect_eq(tj_tensor_dtype(out[0]), TJ_FLOAT64);
        const double want[3] = {1, 4, 9};
        for (int i = 0; i < 3; i++) cr_expect_eq(tj_tensor_item_at(out[0], i), want[i]);
        tj_plan_free(plan);
        tj_graph_free(g);
    }
    tj_scope_end(s);
}

/* add_ "decomposed" as add: a new tensor instead of self */
static tj_status add_as_new_tensor(const tj_value *args, tj_value *outs)
{
    outs[0] = tj_v_tensor(tj_add_alpha(args[0].u.t, args[1].u.t, args[2]));
    return outs[0].kind == TJ_V_TENSOR ? TJ_OK : tj_last_status();
}

static tj_status doubled_copy(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n;
    out[0] = tj_clone(in[0]);
    *n_out = 1;
    return out[0] && tj_add_(out[0], in[0], tj_v_int(1)) ? TJ_OK : tj_last_status();
}

/* Before: the graph recorded clone and an unused add, and returned the
 * clone undoubled ([1, 2] for eager's [2, 4]) in real and fake mode. */
Test(hostile_library, a_table_decomposition_of_an_in_place_operator_must_return_its_self)
{
    int64_t base = live_allocations();
    tj_tensor *x = ramp(1, I64(2), 1);
    tj_decomp_table *table = tj_decomp_table_new();
    cr_assert_eq(tj_decomp_table_add_fn(table, tj_op_find("aten::add_.Tensor"), add_as_new_tensor, "add_as_add"), TJ_OK);
    for (int mode = 0; mode < 2; mode++) {
        cr_expect_null(tj_make_fx(doubled_copy, NULL, &x, 1, table, mode ? TJ_TRACE_FAKE : TJ_TRACE_REAL));
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "the decomposition of aten::add_.Tensor gave output 0 as a new tensor, "
                     "not argument 0, which the operator writes in place");
    }
    tj_decomp_table_free(table);
    table = tj_core_decompositions(); /* its write-back decomposition returns self */
    tj_graph *g = tj_make_fx(doubled_copy, NULL, &x, 1, table, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor *out[1];
    cr_assert_eq(tj_graph_run(g, &x, 1, out), TJ_OK, "%s", tj_last_error());
    expect_values(out[0], (const float[]){2, 4}, 2);
    tj_tensor_release(out[0]);
    tj_graph_free(g);
    tj_decomp_table_free(table);
    expect_values(x, (const float[]){1, 2}, 2);
    tj_tensor_release(x);
    cr_expect_eq(live_allocations(), base);
}

/* A parameter given twice (torch.optim warns it will be an error; the step
 * would update it twice, here with two states) is refused, naming both
 * places; nothing is retained. */
Test(hostile_optim, a_parameter_given_twice_is_refused)
{
    tj_tensor *p = tj_zeros((int64_t[]){3}, 1, TJ_FLOAT32), *q = tj_zeros((int64_t[]){3}, 1, TJ_FLOAT32);
    int64_t base = live_allocations();
    tj_sgd_options o = tj_sgd_defaults(0.1);
    cr_expect_null(tj_sgd_new((tj_tensor *[]){p, q, p}, 3, &o));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "parameter 2 is parameter 0 again");
    tj_adamw_options a = tj_adamw_defaults();
    cr_expect_null(tj_adamw_new((tj_tensor *[]){q, q}, 2, &a));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "parameter 1 is parameter 0 again");
    cr_expect_eq(live_allocations(), base);
    tj_tensor_release(p);
    tj_tensor_release(q);
}
