/* The operator registry, the dispatcher's argument checks and defaults, the
 * per-thread mode stack (intercepting, replacing and forwarding modes, the
 * counter and logger modes) and ownership: scopes and error paths leave no
 * live allocation behind (counted through the allocator hook). */
#include <criterion/criterion.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_counter.h"
#include "runtime/internal.h"
#include "test_util.h"


/* ---- tensors and values ---- */

#define VEC3(a, b, c) test_f32(1, (int64_t[]){3}, (float[]){a, b, c})

static void expect_values(const tj_tensor *t, int n, const double *want)
{
    test_expect_close(t, want, n, 0, 1e-6);
}

#define EXPECT_VALUES(t, ...) \
    expect_values((t), sizeof((double[]){__VA_ARGS__}) / sizeof(double), (double[]){__VA_ARGS__})

#define EXPECT_ERROR(status, fragment)                                                                    \
    do {                                                                                                  \
        cr_expect_eq(tj_last_status(), (status), "status %s, want %s (%s)", tj_status_name(tj_last_status()), \
                     tj_status_name(status), tj_last_error());                                           \
        cr_expect(strstr(tj_last_error(), (fragment)) != NULL, "message '%s' lacks '%s'", tj_last_error(), \
                  (fragment));                                                                            \
    } while (0)

/* ---- a configurable test mode and the event log all its instances share ---- */

static char events[32][96];
static int n_events;

static void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (n_events < 32) vsnprintf(events[n_events++], sizeof events[0], fmt, ap);
    va_end(ap);
}

typedef enum {
    FORWARD,            /* logs, then tj_redispatch */
    REPLACE_BY_SUB,     /* add.Tensor computes self - other itself, never forwards */
    CAPTURE,            /* copies the arguments, returns a 0-dim zero */
    FAIL_AFTER_FORWARD, /* forwards, then fails with the result in hand */
    REWRITE_ALPHA,      /* add with alpha 1 re-issued from scratch with alpha 2 */
    FORWARD_LOGGING_FAILURES, /* FORWARD, then notes a failure's message (reading it) */
    FAIL_SILENTLY,      /* fails without recording an error (a handler's bug) */
} behaviour;

typedef struct {
    tj_mode base;
    behaviour how;
    int calls;
    tj_value args[TJ_MAX_ARGS];
    int nargs;
} test_mode;

static tj_status sub_by_hand(const tj_value *args, tj_value *outs)
{
    const tj_tensor *a = args[0].u.t, *b = args[1].u.t;
    tj_tensor *r = tj_tensor_empty(TJ_FLOAT32, a->ndim, a->shape);
    if (!r) return tj_last_status();
    for (int64_t i = 0; i < r->numel; i++)
        ((float *)tj_tensor_data(r))[i] = (float)(tj_tensor_item_at(a, i) - tj_tensor_item_at(b, i));
    outs[0] = tj_v_tensor(r);
    return TJ_OK;
}

static tj_status test_handler(tj_mode *mode, const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    test_mode *m = (test_mode *)mode;
    m->calls++;
    bool add = op == TJ_OPS(add_Tensor);
    if (add) note("%s:%s:alpha=%g", mode->name, tj_op_name(op), tj_value_as_double(&args[2]));
    else note("%s:%s", mode->name, tj_op_name(op));
    switch (m->how) {
    case FORWARD: return tj_redispatch(mode, op, args, nargs, outs);
    case REPLACE_BY_SUB:
        if (!add) return tj_redispatch(mode, op, args, nargs, outs);
        return sub_by_hand(args, outs);
    case CAPTURE: {
        memcpy(m->args, args, sizeof(tj_value) * (size_t)nargs);
        m->nargs = nargs;
        tj_tensor *z = tj_tensor_scalar_f32(0.0f);
        for (int i = 0; i < op->nreturns; i++) outs[i] = tj_v_tensor(z);
        return z ? TJ_OK : tj_last_status();
    }
    case FAIL_AFTER_FORWARD: {
        tj_status st = tj_redispatch(mode, op, args, nargs, outs);
        if (st != TJ_OK) return st;
        return tj_error(TJ_ERR_UNSUPPORTED, "test mode: refuses %s after computing it", tj_op_name(op));
    }
    case REWRITE_ALPHA:
        if (add && args[2].kind == TJ_V_INT && args[2].u.i == 1) {
            tj_value again[3] = {args[0], args[1], tj_v_int(2)};
            return tj_dispatch(op, again, 3, outs); /* starts from the top of the stack */
        }
        return tj_redispatch(mode, op, args, nargs, outs);
    case FORWARD_LOGGING_FAILURES:
        if (tj_redispatch(mode, op, args, nargs, outs) == TJ_OK) return TJ_OK;
        note("%s: failed: %s", mode->name, tj_last_error());
        return tj_last_status();
    case FAIL_SILENTLY: return TJ_ERR_UNSUPPORTED;
    }
    return TJ_ERR_INVALID_ARGUMENT;
}

static test_mode make_mode(const char *name, behaviour how)
{
    test_mode m = {.base = {test_handler, NULL, name}, .how = how};
    return m;
}

static void push(test_mode *m) { cr_assert_eq(tj_mode_push(&m->base), TJ_OK, "%s", tj_last_error()); }
static void pop(test_mode *m) { cr_assert_eq(tj_mode_pop(&m->base), TJ_OK, "%s", tj_last_error()); }

static void expect_events(int n, const char *const *want)
{
    cr_expect_eq(n_events, n, "saw %d events, want %d", n_events, n);
    for (int i = 0; i < n && i < n_events; i++)
        cr_expect_str_eq(events[i], want[i], "event %d", i);
}

#define EXPECT_EVENTS(...) \
    expect_events(sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *), (const char *[]){__VA_ARGS__})

/* ================================ registry ================================ */

Test(registry, every_schema_parses_into_consistent_records)
{
    cr_assert_geq(tj_op_count(), 100);
    for (int i = 0; i < tj_op_count(); i++) {
        const tj_op *op = tj_op_at(i);
        cr_assert_not_null(op);
        const char *name = tj_op_name(op);
        cr_expect_eq(strncmp(name, "aten::", 6), 0, "%s", name);
        cr_expect_eq(strncmp(tj_op_schema(op), name, strlen(name)), 0, "%s", tj_op_schema(op));
        cr_expect_eq(tj_op_schema(op)[strlen(name)], '(', "%s", tj_op_schema(op));
        cr_expect(strstr(tj_op_schema(op), ") -> ") != NULL, "%s", tj_op_schema(op));
        cr_expect_eq(tj_op_find(name), op, "%s does not find itself", name);
        cr_expect_leq(tj_op_num_args(op), TJ_MAX_ARGS);
        cr_expect(tj_op_num_returns(op) >= 1 && tj_op_num_returns(op) <= TJ_MAX_RETURNS, "%s", name);
        bool kwonly = false;
        for (int k = 0; k < op->nargs; k++) {
            const tj_arg_spec *a = &op->args[k];
            cr_expect(a->name && a->name[0], "%s: argument %d has no name", name, k);
            cr_expect(!kwonly || a->kwarg_only, "%s: positional argument after '*'", name);
            kwonly = a->kwarg_only;
            if (!a->has_default) continue;
            /* a default is None only for an optional (or ignored) argument */
            if (a->def.kind == TJ_V_NONE) cr_expect(a->optional || a->type == TJ_A_IGNORED, "%s.%s", name, a->name);
        }
        for (int j = 0; j < i; j++) cr_expect_str_neq(tj_op_name(tj_op_at(j)), name, "duplicate operator");
    }
}

/* Replaces every "SymInt" by "int" (PyTorch treats them alike outside
 * symbolic tracing). */
static void normalise_symint(char *s)
{
    char *p;
    while ((p = strstr(s, "SymInt")) != NULL) {
        memmove(p, p + 3, strlen(p + 3) + 1);
        *p = 'i';
    }
}

Test(registry, schemas_match_the_conformance_readme)
{
    const char *shared = getenv("TJ_SHARED_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/conformance/README.md", shared ? shared : "../shared");
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    char line[1024];
    int checked = 0;
    bool in_schemas = false;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "## Schemas", 10) == 0) in_schemas = true;
        if (!in_schemas || strncmp(line, "aten::", 6) != 0) continue;
        line[strcspn(line, "\n")] = 0;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(line, "("), line);
        const tj_op *op = tj_op_find(name);
        cr_expect_not_null(op, "README operator %s is not registered", name);
        if (!op) continue;
        char ours[1024];
        snprintf(ours, sizeof ours, "%s", tj_op_schema(op));
        normalise_symint(ours);
        normalise_symint(line);
        cr_expect_str_eq(ours, line);
        checked++;
    }
    fclose(f);
    cr_expect_geq(checked, 90, "only %d schemas found in %s", checked, path);
}

Test(registry, find_accepts_namespace_and_default_overload_spellings)
{
    const tj_op *add = tj_op_find("aten::add.Tensor");
    cr_assert_not_null(add);
    cr_expect_eq(tj_op_find("add.Tensor"), add);
    cr_expect_eq(tj_op_find("aten.add.Tensor"), add);
    cr_expect_eq(add, TJ_OPS(add_Tensor));
    cr_expect_str_eq(tj_op_base_name(add), "add");
    cr_expect_str_eq(tj_op_overload(add), "Tensor");
    cr_expect_eq(tj_op_num_args(add), 3);
    cr_expect_eq(tj_op_kind_of(add), TJ_OP_PRIMITIVE);

    const tj_op *abs = tj_op_find("aten::abs");
    cr_assert_not_null(abs);
    cr_expect_eq(tj_op_find("aten::abs.default"), abs);
    cr_expect_eq(tj_op_find("abs"), abs);
    cr_expect_str_eq(tj_op_name(abs), "aten::abs");
    cr_expect_str_eq(tj_op_overload(abs), "");
    cr_expect_str_eq(tj_op_schema(abs), "aten::abs(Tensor self) -> Tensor");
}

Test(registry, unknown_names_give_not_found)
{
    const char *bad[] = {"aten::nope", "aten::add", "add.Nope", "aten::abs.Tensor", "", "aten::",
                         /* torch: "No such operator aten::relu." for both (the default is "relu.default") */
                         "aten::relu.", "aten::add.", "aten.relu.", "relu.",
                         "a_name_far_too_long_to_be_any_operator_at_all_in_this_registry.x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tj_clear_error();
        cr_expect_null(tj_op_find(bad[i]), "%s", bad[i]);
        EXPECT_ERROR(TJ_ERR_NOT_FOUND, "unknown operator");
    }
    cr_expect_null(tj_op_find(NULL));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    cr_expect_null(tj_op_at(-1));
    cr_expect_null(tj_op_at(tj_op_count()));
}

Test(registry, kinds_returns_and_flags_follow_the_table)
{
    cr_expect_eq(tj_op_kind_of(tj_op_find("aten::gelu")), TJ_OP_COMPOSITE);
    cr_expect_eq(tj_op_kind_of(tj_op_find("aten::linear")), TJ_OP_IMPLICIT);
    cr_expect_str_eq(tj_op_kind_name(TJ_OP_IMPLICIT), "implicit");
    cr_expect_eq(tj_op_num_returns(tj_op_find("aten::max.dim")), 2);
    cr_expect_eq(tj_op_num_returns(tj_op_find("aten::native_layer_norm")), 3);
    cr_expect(tj_op_is_view(tj_op_find("aten::view")));
    cr_expect(tj_op_is_view(tj_op_find("aten::t")));
    cr_expect(!tj_op_is_view(tj_op_find("aten::clone")));
    cr_expect(!tj_op_is_view(tj_op_find("aten::reshape")), "implicit composites are not views");
    cr_expect(tj_op_is_random(tj_op_find("aten::native_dropout")));
    cr_expect(!tj_op_is_random(tj_op_find("aten::add.Tensor")));
    cr_expect(!tj_op_is_inplace(tj_op_find("aten::add.Tensor")));
    /* keyword-only and fixed-size list arguments */
    const tj_op *mp = tj_op_find("aten::max_pool2d_with_indices");
    cr_expect_eq(mp->args[1].type, TJ_A_INT_LIST);
    cr_expect_eq(mp->args[1].fixed_len, 2);
    cr_expect(TJ_OPS(add_Tensor)->args[2].kwarg_only);
    cr_expect(!TJ_OPS(add_Tensor)->args[1].kwarg_only);
}

/* ============================ argument checks ============================ */

Test(dispatch, wrong_argument_count_is_rejected)
{
    tj_tensor *a = VEC3(1, 2, 3);
    tj_value outs[TJ_MAX_RETURNS];
    tj_value args[2] = {tj_v_tensor(a), tj_v_tensor(a)};
    cr_expect_eq(tj_dispatch(TJ_OPS(add_Tensor), args, 2, outs), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::add.Tensor: expected 3 arguments, got 2");
    cr_expect_eq(outs[0].kind, TJ_V_NONE);
    tj_tensor_release(a);
}

Test(dispatch, wrong_argument_kinds_are_named)
{
    tj_tensor *a = VEC3(1, 2, 3);
    tj_value outs[TJ_MAX_RETURNS];
    cr_expect_eq(tj_dispatch(TJ_OPS(add_Tensor), (tj_value[]){tj_v_tensor(a), tj_v_int(3), tj_v_int(1)}, 3, outs),
                 TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::add.Tensor: argument 1 'other' expects Tensor, got int");
    tj_dispatch(TJ_OPS(add_Tensor), (tj_value[]){tj_v_tensor(a), tj_v_tensor(a), tj_v_str("x")}, 3, outs);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "argument 2 'alpha' expects Scalar, got str");
    tj_dispatch(TJ_OPS(add_Tensor), (tj_value[]){tj_v_tensor(a), tj_v_tensor(NULL), tj_v_int(1)}, 3, outs);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "argument 1 'other' expects Tensor, got NULL");
    /* a list with a NULL element, a dtype out of range */
    tj_tensor *list[2] = {a, NULL};
    tj_dispatch(tj_op_find("aten::cat"), (tj_value[]){tj_v_tensors(list, 2), tj_v_int(0)}, 2, outs);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::cat: argument 0 'tensors' element 1 is NULL");
    tj_dispatch(tj_op_find("aten::sum"), (tj_value[]){tj_v_tensor(a), tj_v_dtype((tj_dtype)17)}, 2, outs);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::sum: argument 1 'dtype' is not a dtype (17)");
    /* NULL operator or outputs */
    cr_expect_eq(tj_dispatch(NULL, NULL, 0, outs), TJ_ERR_INVALID_ARGUMENT);
    cr_expect_eq(tj_dispatch(TJ_OPS(add_Tensor), NULL, 3, NULL), TJ_ERR_INVALID_ARGUMENT);
    tj_tensor_release(a);
}

/* A chain of calls checked once at the end: the NULL a failed call left
 * names that failure, successful calls in between (a nested expression's
 * other arguments) or not. */
Test(dispatch, null_from_an_earlier_failure_names_that_failure)
{
    tj_tensor *a = VEC3(1, 2, 3);
    tj_tensor *b = test_f32(1, (int64_t[]){4}, (float[]){1, 2, 3, 4});
    tj_tensor *bad = tj_add(a, b);
    cr_assert_null(bad);
    tj_tensor *ok = tj_mul(a, a);
    cr_assert_not_null(ok);
    cr_expect_null(tj_add(bad, ok));
    EXPECT_ERROR(TJ_ERR_SHAPE, "aten::add.Tensor: argument 0 'self' is NULL; earlier error: aten::add.Tensor: shapes "
                               "[3] and [4] cannot be broadcast");
    /* a NULL in a list made by failed calls names the failure too */
    tj_tensor *list[2] = {a, tj_add(a, b)};
    tj_value outs[1];
    tj_dispatch(tj_op_find("aten::cat"), (tj_value[]){tj_v_tensors(list, 2), tj_v_int(0)}, 2, outs);
    EXPECT_ERROR(TJ_ERR_SHAPE, "aten::cat: argument 0 'tensors' element 1 is NULL; earlier error: aten::add.Tensor");
    tj_tensor_release(ok);
    tj_tensor_release(a);
    tj_tensor_release(b);
}

/* A failure once read (or cleared) is no longer the cause of a NULL
 * argument: after successful calls, a NULL tensor or list element is the
 * failing call's own error, its status and message naming nothing earlier. */
Test(dispatch, null_after_a_read_failure_is_the_calls_own_error)
{
    tj_tensor *a = VEC3(1, 2, 3);
    tj_tensor *b = test_f32(1, (int64_t[]){4}, (float[]){1, 2, 3, 4});
    tj_tensor *list[2] = {a, NULL};
    tj_value outs[1];
    for (int how = 0; how < 3; how++) { /* read message and status, the status only, cleared */
        cr_assert_null(tj_add(a, b));
        if (how == 0) cr_expect(strstr(tj_last_error(), "cannot be broadcast"), "%s", tj_last_error());
        if (how < 2) cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
        else tj_clear_error();
        tj_tensor *c = tj_mul(a, a);
        EXPECT_VALUES(c, 1, 4, 9);
        tj_tensor_release(c);
        cr_expect_null(tj_relu(NULL));
        cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT, "%s", tj_status_name(tj_last_status()));
        cr_expect_str_eq(tj_last_error(), "aten::relu: argument 0 'self' expects Tensor, got NULL");
        cr_expect_eq(tj_dispatch(tj_op_find("aten::cat"), (tj_value[]){tj_v_tensors(list, 2), tj_v_int(0)}, 2, outs),
                     TJ_ERR_INVALID_ARGUMENT);
        cr_expect_str_eq(tj_last_error(), "aten::cat: argument 0 'tensors' element 1 is NULL");
    }
    tj_tensor_release(a);
    tj_tensor_release(b);
}

/* A mode that reads the error of a call it forwarded (to log it) does not
 * take it from the chain: the failed dispatch hands it back unread. */
Test(dispatch, a_failure_read_by_a_mode_still_names_the_nulls_it_leaves)
{
    test_mode logging = make_mode("logging", FORWARD_LOGGING_FAILURES);
    tj_tensor *a = VEC3(1, 2, 3);
    tj_tensor *b = test_f32(1, (int64_t[]){4}, (float[]){1, 2, 3, 4});
    n_events = 0;
    push(&logging);
    tj_tensor *bad = tj_add(a, b);
    pop(&logging);
    cr_assert_null(bad);
    EXPECT_EVENTS("logging:aten::add.Tensor:alpha=1",
                  "logging: failed: aten::add.Tensor: shapes [3] and [4] cannot be broadcast (dim 0: 3 vs 4)");
    cr_expect_null(tj_neg(bad));
    EXPECT_ERROR(TJ_ERR_SHAPE, "aten::neg: argument 0 'self' is NULL; earlier error: aten::add.Tensor: shapes");
    tj_tensor_release(a);
    tj_tensor_release(b);
}

/* A handler that fails without recording an error leaves the last error,
 * read and of another status, as it is: the NULL it leaves is not taken for
 * a result of that old failure. */
Test(dispatch, a_failure_without_an_error_revives_no_read_one)
{
    test_mode silent = make_mode("silent", FAIL_SILENTLY);
    tj_tensor *a = VEC3(1, 2, 3);
    tj_tensor *b = test_f32(1, (int64_t[]){4}, (float[]){1, 2, 3, 4});
    cr_assert_null(tj_add(a, b));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    push(&silent);
    tj_tensor *r = tj_neg(a);
    pop(&silent);
    cr_expect_null(r);
    cr_expect_null(tj_relu(r));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT, "%s", tj_status_name(tj_last_status()));
    cr_expect_str_eq(tj_last_error(), "aten::relu: argument 0 'self' expects Tensor, got NULL");
    tj_tensor_release(a);
    tj_tensor_release(b);
}

/* An implicit operator's failure leads with the operator called and the
 * root cause, not the NULL a later call of its decomposition was handed. */
Test(dispatch, implicit_operator_errors_name_it_and_the_root_cause)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = tj_ones((int64_t[]){8, 16}, 2, TJ_FLOAT32), *t = tj_ones((int64_t[]){8}, 1, TJ_FLOAT32);
    cr_expect_null(tj_l1_loss(x, t, 1));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    cr_expect_str_eq(tj_last_error(), "aten::l1_loss: aten::sub.Tensor: shapes [8, 16] and [8] cannot be broadcast "
                                      "(dim 1: 16 vs 8)");
    /* nested implicit operators: each named once */
    tj_tensor *w = tj_ones((int64_t[]){5, 2}, 2, TJ_FLOAT32);
    cr_expect_null(tj_linear(tj_ones((int64_t[]){4, 3}, 2, TJ_FLOAT32), w, NULL));
    cr_expect_str_eq(tj_last_error(), "aten::linear: aten::matmul: self [4, 3] and other [2, 5] cannot be multiplied "
                                      "(3 != 2)");
    tj_scope_end(s);
}

Test(dispatch, kernel_results_are_computed_with_broadcasting)
{
    tj_tensor *a = test_f32(2, (int64_t[]){2, 1}, (float[]){10, 20});
    tj_tensor *b = VEC3(1, 2, 3);
    tj_tensor *c = tj_add_alpha(a, b, tj_v_int(2));
    cr_assert_not_null(c, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_ndim(c), 2);
    cr_expect_eq(tj_tensor_size(c, 0), 2);
    cr_expect_eq(tj_tensor_size(c, 1), 3);
    EXPECT_VALUES(c, 12, 14, 16, 22, 24, 26);
    tj_tensor_release(a);
    tj_tensor_release(b);
    tj_tensor_release(c);
}

Test(dispatch, fake_inputs_give_fake_outputs_without_data)
{
    tj_tensor *a = tj_tensor_fake(TJ_FLOAT32, 2, (int64_t[]){4, 1});
    tj_tensor *b = tj_tensor_fake(TJ_FLOAT64, 1, (int64_t[]){5});
    tj_tensor *c = tj_add(a, b);
    cr_assert_not_null(c, "%s", tj_last_error());
    cr_expect(tj_tensor_is_fake(c));
    cr_expect_null(tj_tensor_data(c));
    cr_expect_eq(tj_tensor_dtype(c), TJ_FLOAT64);
    cr_expect_eq(tj_tensor_size(c, 0), 4);
    cr_expect_eq(tj_tensor_size(c, 1), 5);
    /* tj_dispatch_fake makes fake outputs from real inputs */
    tj_tensor *r = VEC3(1, 2, 3);
    tj_value outs[1];
    cr_assert_eq(tj_dispatch_fake(TJ_OPS(add_Tensor), (tj_value[]){tj_v_tensor(r), tj_v_tensor(r), tj_v_int(1)}, 3,
                                  outs), TJ_OK);
    cr_expect(tj_tensor_is_fake(outs[0].u.t));
    tj_value_release(&outs[0]);
    tj_tensor_release(a);
    tj_tensor_release(b);
    tj_tensor_release(c);
    tj_tensor_release(r);
}

/* x + w with w a captured tensor (ctx): a graph constant in a fake trace */
static tj_status fn_add_ctx(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    out[0] = tj_add(in[0], ctx);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* PyTorch refuses it ("Please convert all Tensors to FakeTensors first").
 * Before, add returned a fake result of real data, and add_ and copy_
 * returned self with TJ_OK having written nothing: eager training on a
 * fake .grad silently did nothing. */
Test(dispatch, fake_and_real_tensors_mix_only_inside_a_fake_trace)
{
    tj_tensor *r = VEC3(1, 2, 3), *f = tj_tensor_fake(TJ_FLOAT32, 1, (int64_t[]){3});
    uint32_t version = tj_tensor_version(r);
    test_expect_error(tj_add(r, f), TJ_ERR_INVALID_ARGUMENT, "aten::add.Tensor",
                      "argument 1 'other' is a fake tensor (~f32[3]) and argument 0 'self' a real one (f32[3])");
    test_expect_error(tj_add_(r, f, tj_v_int(1)), TJ_ERR_INVALID_ARGUMENT, "aten::add_.Tensor",
                      "argument 1 'other' is a fake tensor");
    test_expect_error(tj_copy_(r, f), TJ_ERR_INVALID_ARGUMENT, "aten::copy_", "argument 1 'src' is a fake tensor");
    test_expect_error(tj_mul(f, r), TJ_ERR_INVALID_ARGUMENT, "aten::mul.Tensor",
                      "argument 0 'self' is a fake tensor (~f32[3]) and argument 1 'other' a real one");
    test_expect_error(tj_cat((tj_tensor *[]){r, f}, 2, 0), TJ_ERR_INVALID_ARGUMENT, "aten::cat",
                      "argument 0 'tensors' element 1 is a fake tensor (~f32[3]) and argument 0 'tensors' element 0 a real one");
    /* an implicit composite is refused as called, before it decomposes */
    test_expect_error(tj_matmul(r, f), TJ_ERR_INVALID_ARGUMENT, "aten::matmul", "argument 1 'other' is a fake tensor");
    EXPECT_VALUES(r, 1, 2, 3);
    cr_expect_eq(tj_tensor_version(r), version);
    /* under modes that reach the kernels: a counter, a real-mode trace */
    tj_counter_mode *cm = tj_counter_mode_new();
    cr_assert_eq(tj_mode_push(tj_counter_mode_base(cm)), TJ_OK);
    test_expect_error(tj_add_(r, f, tj_v_int(1)), TJ_ERR_INVALID_ARGUMENT, "aten::add_.Tensor", "is a fake tensor");
    cr_assert_eq(tj_mode_pop(tj_counter_mode_base(cm)), TJ_OK);
    tj_counter_mode_free(cm);
    test_expect_error(tj_make_fx(fn_add_ctx, f, &r, 1, NULL, TJ_TRACE_REAL), TJ_ERR_INVALID_ARGUMENT,
                      "aten::add.Tensor", "argument 1 'other' is a fake tensor");
    /* a fake trace takes a captured real tensor as a constant */
    tj_graph *g = tj_make_fx(fn_add_ctx, r, &f, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor *x = VEC3(10, 20, 30), *y = NULL;
    cr_assert_eq(tj_graph_run(g, &x, 1, &y), TJ_OK, "%s", tj_last_error());
    EXPECT_VALUES(y, 11, 22, 33);
    tj_graph_free(g);
    tj_tensor_release(x);
    tj_tensor_release(y);
    tj_tensor_release(f);
    tj_tensor_release(r);
}

Test(dispatch, operator_without_shape_function_reports_not_implemented)
{
    /* Operators whose kernels are still being written say so; none crashes. */
    tj_tensor *a = VEC3(-1, 2, -3);
    for (int i = 0; i < tj_op_count(); i++) {
        const tj_op *op = tj_op_at(i);
        if (op->kind == TJ_OP_IMPLICIT || op->meta || !(op->nargs == 1 && op->args[0].type == TJ_A_TENSOR)) continue;
        tj_value outs[TJ_MAX_RETURNS];
        cr_expect_eq(tj_dispatch(op, (tj_value[]){tj_v_tensor(a)}, 1, outs), TJ_ERR_UNSUPPORTED, "%s", op->name);
        EXPECT_ERROR(TJ_ERR_UNSUPPORTED, "not implemented yet");
    }
    tj_tensor_release(a);
}

/* ================================ tj_call ================================ */

Test(call, fills_defaults_from_the_schema)
{
    test_mode cap = make_mode("capture", CAPTURE);
    tj_tensor *a = VEC3(1, 2, 3);
    tj_value outs[TJ_MAX_RETURNS];
    push(&cap);

    cr_assert_eq(tj_call("aten::add.Tensor", (tj_value[]){tj_v_tensor(a), tj_v_tensor(a)}, 2, outs), TJ_OK);
    cr_expect_eq(cap.nargs, 3);
    cr_expect_eq(cap.args[2].kind, TJ_V_INT, "alpha=1 is an int Scalar");
    cr_expect_eq(cap.args[2].u.i, 1);
    tj_value_release(&outs[0]);

    cr_assert_eq(tj_call("aten::gelu", (tj_value[]){tj_v_tensor(a)}, 1, outs), TJ_OK);
    cr_expect_eq(cap.args[1].kind, TJ_V_STR);
    cr_expect_str_eq(cap.args[1].u.s, "none");
    tj_value_release(&outs[0]);

    cr_assert_eq(tj_call("aten::clamp", (tj_value[]){tj_v_tensor(a)}, 1, outs), TJ_OK);
    cr_expect_eq(cap.args[1].kind, TJ_V_NONE);
    cr_expect_eq(cap.args[2].kind, TJ_V_NONE);
    tj_value_release(&outs[0]);

    cr_assert_eq(tj_call("aten::max_pool2d_with_indices",
                         (tj_value[]){tj_v_tensor(a), tj_v_ints((int64_t[]){2, 2}, 2)}, 2, outs), TJ_OK);
    cr_expect_eq(cap.nargs, 6);
    cr_expect_eq(cap.args[2].kind, TJ_V_INTS);
    cr_expect_eq(cap.args[2].n, 0, "stride=[]");
    cr_expect_eq(cap.args[3].n, 2, "padding=0 is [0, 0]");
    cr_expect_eq(cap.args[3].u.ints[0], 0);
    cr_expect_eq(cap.args[3].u.ints[1], 0);
    cr_expect_eq(cap.args[4].u.ints[0], 1, "dilation=1 is [1, 1]");
    cr_expect_eq(cap.args[4].u.ints[1], 1);
    cr_expect_eq(cap.args[5].kind, TJ_V_BOOL);
    cr_expect(!cap.args[5].u.b);
    tj_value_release(&outs[0]);
    tj_value_release(&outs[1]);

    cr_assert_eq(tj_call("aten::slice.Tensor", (tj_value[]){tj_v_tensor(a)}, 1, outs), TJ_OK);
    cr_expect_eq(cap.args[1].u.i, 0);
    cr_expect_eq(cap.args[2].kind, TJ_V_NONE);
    cr_expect_eq(cap.args[3].kind, TJ_V_NONE);
    cr_expect_eq(cap.args[4].u.i, 1);
    tj_value_release(&outs[0]);

    cr_assert_eq(tj_call("aten::embedding", (tj_value[]){tj_v_tensor(a), tj_v_tensor(a)}, 2, outs), TJ_OK);
    cr_expect_eq(cap.args[2].u.i, -1);
    tj_value_release(&outs[0]);

    pop(&cap);
    tj_tensor_release(a);
}

Test(call, float_argument_accepts_an_int)
{
    test_mode cap = make_mode("capture", CAPTURE);
    tj_tensor *a = VEC3(1, 2, 3);
    tj_value outs[TJ_MAX_RETURNS];
    push(&cap);
    cr_expect_eq(tj_call("aten::native_dropout", (tj_value[]){tj_v_tensor(a), tj_v_int(0), tj_v_bool(false)}, 3, outs),
                 TJ_OK, "%s", tj_last_error());
    cr_expect_eq(cap.args[1].kind, TJ_V_INT);
    tj_value_release(&outs[0]);
    tj_value_release(&outs[1]);
    pop(&cap);
    tj_tensor_release(a);
}

Test(call, errors_name_the_problem)
{
    tj_tensor *a = VEC3(1, 2, 3);
    tj_value outs[TJ_MAX_RETURNS];
    cr_expect_eq(tj_call("aten::nope", NULL, 0, outs), TJ_ERR_NOT_FOUND);
    EXPECT_ERROR(TJ_ERR_NOT_FOUND, "unknown operator 'aten::nope'");
    cr_expect_eq(tj_call("add.Tensor", (tj_value[]){tj_v_tensor(a)}, 1, outs), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::add.Tensor: argument 1 'other' has no default and was not given");
    tj_value four[4] = {tj_v_tensor(a), tj_v_tensor(a), tj_v_int(1), tj_v_int(1)};
    cr_expect_eq(tj_call("add.Tensor", four, 4, outs), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::add.Tensor: expected at most 3 arguments, got 4");
    cr_expect_eq(tj_call("add.Tensor", four, -1, outs), TJ_ERR_INVALID_ARGUMENT);
    tj_tensor_release(a);
}

Test(call, computes_like_the_typed_api)
{
    tj_tensor *a = VEC3(1, 2, 3), *b = VEC3(10, 20, 30);
    tj_value outs[1];
    cr_assert_eq(tj_call("add.Tensor", (tj_value[]){tj_v_tensor(a), tj_v_tensor(b), tj_v_float(0.5)}, 3, outs), TJ_OK);
    EXPECT_VALUES(outs[0].u.t, 6, 12, 18);
    tj_value_release(&outs[0]);
    cr_expect_eq(outs[0].kind, TJ_V_NONE);
    tj_tensor_release(a);
    tj_tensor_release(b);
}

/* Every typed entry point with a dtype argument, called with `dtype`. */
static tj_tensor *call_with_dtype(int which, tj_tensor *x, int dtype)
{
    const int64_t size[1] = {3};
    switch (which) {
    case 0: return tj_sum(x, dtype);
    case 1: return tj_sum_dim(x, NULL, 0, false, dtype);
    case 2: return tj_mean(x, dtype);
    case 3: return tj_mean_dim(x, NULL, 0, false, dtype);
    case 4: return tj_to_copy(x, dtype);
    case 5: return tj_zeros(size, 1, dtype);
    case 6: return tj_ones(size, 1, dtype);
    case 7: return tj_full(size, 1, tj_v_float(2), dtype);
    case 8: return tj_arange(tj_v_int(0), tj_v_int(3), tj_v_int(1), dtype);
    case 9: return tj_scalar_tensor(tj_v_float(2), dtype);
    case 10: return tj_rand(size, 1, dtype);
    case 11: return tj_randn(size, 1, dtype);
    case 12: return tj__softmax_backward_data(x, x, 0, (tj_dtype)dtype);
    case 13: return tj__log_softmax_backward_data(x, x, 0, (tj_dtype)dtype);
    }
    return NULL;
}

/* Only TJ_DTYPE_NONE (-1) means "no dtype": another negative value used to
 * pass as None (sum(x, -2) gave float32), so a typo went unnoticed. */
Test(call, typed_api_refuses_dtypes_that_are_neither_a_dtype_nor_none)
{
    static const char *ops[] = {"aten::sum:", "aten::sum.dim_IntList:", "aten::mean:", "aten::mean.dim:",
                                "aten::_to_copy:", "aten::zeros:", "aten::ones:", "aten::full:",
                                "aten::arange.start_step:", "aten::scalar_tensor:", "aten::rand:", "aten::randn:",
                                "aten::_softmax_backward_data:", "aten::_log_softmax_backward_data:"};
    const int bad[] = {-2, -100, INT_MIN, TJ_NUM_DTYPES, 99};
    tj_tensor *x = VEC3(1, 2, 3);
    for (int w = 0; w < (int)(sizeof ops / sizeof *ops); w++)
        for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
            tj_clear_error();
            char value[48];
            snprintf(value, sizeof value, "is not a dtype (%d)", bad[b]);
            cr_expect_null(call_with_dtype(w, x, bad[b]), "%s with dtype %d", ops[w], bad[b]);
            EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, ops[w]);
            EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, value);
        }
    /* TJ_DTYPE_NONE still picks the operator's dtype */
    tj_tensor *s = tj_sum(x, TJ_DTYPE_NONE), *z = tj_zeros((const int64_t[]){2}, 1, TJ_DTYPE_NONE);
    cr_assert_not_null(s, "%s", tj_last_error());
    cr_assert_not_null(z, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_dtype(s), TJ_FLOAT32);
    EXPECT_VALUES(s, 6);
    cr_expect_eq(tj_tensor_dtype(z), TJ_FLOAT32);
    EXPECT_VALUES(z, 0, 0);
    tj_tensor_release(s);
    tj_tensor_release(z);
    tj_tensor_release(x);
}

/* ================================= modes ================================= */

Test(modes, intercepting_mode_records_and_forwards)
{
    test_mode rec = make_mode("rec", FORWARD);
    tj_tensor *a = VEC3(1, 2, 3), *b = VEC3(1, 1, 1);
    push(&rec);
    cr_expect_eq(tj_mode_depth(), 1);
    tj_tensor *c = tj_add(a, b);
    pop(&rec);
    cr_expect_eq(tj_mode_depth(), 0);
    EXPECT_VALUES(c, 2, 3, 4);
    EXPECT_EVENTS("rec:aten::add.Tensor:alpha=1");
    tj_tensor *d = tj_add(a, b); /* popped: not seen */
    cr_expect_eq(rec.calls, 1);
    tj_tensor_release(a);
    tj_tensor_release(b);
    tj_tensor_release(c);
    tj_tensor_release(d);
}

Test(modes, replacing_mode_computes_without_forwarding)
{
    test_mode below = make_mode("below", FORWARD);
    test_mode sub = make_mode("sub", REPLACE_BY_SUB);
    tj_tensor *a = VEC3(5, 7, 9), *b = VEC3(1, 2, 3);
    push(&below);
    push(&sub);
    tj_tensor *c = tj_add(a, b);
    pop(&sub);
    pop(&below);
    EXPECT_VALUES(c, 4, 5, 6);
    cr_expect_eq(below.calls, 0, "the mode below never sees a replaced call");
    EXPECT_EVENTS("sub:aten::add.Tensor:alpha=1");
    tj_tensor_release(a);
    tj_tensor_release(b);
    tj_tensor_release(c);
}

Test(modes, replacing_mode_serves_an_operator_without_kernel)
{
    test_mode cap = make_mode("capture", CAPTURE);
    tj_tensor *a = VEC3(1, 2, 3);
    push(&cap);
    tj_tensor *r = tj_erf(a);
    pop(&cap);
    cr_assert_not_null(r, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_ndim(r), 0);
    EXPECT_VALUES(r, 0);
    cr_expect_eq(cap.args[0].u.t, a, "the mode sees the caller's tensor itself");
    tj_tensor_release(a);
    tj_tensor_release(r);
}

Test(modes, nested_modes_see_calls_top_first)
{
    test_mode outer = make_mode("outer", FORWARD), inner = make_mode("inner", FORWARD);
    tj_tensor *a = VEC3(1, 2, 3);
    push(&outer);
    push(&inner);
    tj_tensor *c = tj_add(a, a);
    tj_tensor *d = tj_add_alpha(c, a, tj_v_int(3));
    pop(&inner);
    pop(&outer);
    EXPECT_VALUES(d, 5, 10, 15);
    EXPECT_EVENTS("inner:aten::add.Tensor:alpha=1", "outer:aten::add.Tensor:alpha=1",
                  "inner:aten::add.Tensor:alpha=3", "outer:aten::add.Tensor:alpha=3");
    tj_tensor_release(a);
    tj_tensor_release(c);
    tj_tensor_release(d);
}

Test(modes, calls_made_inside_a_handler_start_from_the_top)
{
    test_mode bottom = make_mode("bottom", FORWARD);
    test_mode rewrite = make_mode("rewrite", REWRITE_ALPHA);
    test_mode top = make_mode("top", FORWARD);
    tj_tensor *a = VEC3(1, 2, 3), *b = VEC3(10, 20, 30);
    push(&bottom);
    push(&rewrite);
    push(&top);
    tj_tensor *c = tj_add(a, b);
    pop(&top);
    pop(&rewrite);
    pop(&bottom);
    EXPECT_VALUES(c, 21, 42, 63);
    EXPECT_EVENTS("top:aten::add.Tensor:alpha=1", "rewrite:aten::add.Tensor:alpha=1",
                  "top:aten::add.Tensor:alpha=2", "rewrite:aten::add.Tensor:alpha=2",
                  "bottom:aten::add.Tensor:alpha=2");
    tj_tensor_release(a);
    tj_tensor_release(b);
    tj_tensor_release(c);
}

Test(modes, dispatch_kernel_skips_every_mode)
{
    test_mode rec = make_mode("rec", FORWARD);
    tj_tensor *a = VEC3(1, 2, 3);
    tj_value outs[1];
    push(&rec);
    cr_assert_eq(tj_dispatch_kernel(TJ_OPS(add_Tensor), (tj_value[]){tj_v_tensor(a), tj_v_tensor(a), tj_v_int(1)}, 3,
                                    outs), TJ_OK);
    pop(&rec);
    EXPECT_VALUES(outs[0].u.t, 2, 4, 6);
    cr_expect_eq(rec.calls, 0);
    tj_value_release(&outs[0]);
    tj_tensor_release(a);
}

Test(modes, pop_of_a_mode_not_on_top_is_refused)
{
    test_mode a = make_mode("a", FORWARD), b = make_mode("b", FORWARD);
    push(&a);
    push(&b);
    cr_expect_eq(tj_mode_pop(&a.base), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_mode_pop: mode 'a' is not the top");
    cr_expect_eq(tj_mode_depth(), 2, "a refused pop changes nothing");
    pop(&b);
    pop(&a);
    cr_expect_eq(tj_mode_pop(&a.base), TJ_ERR_INVALID_ARGUMENT, "pop of an empty stack");
    cr_expect_eq(tj_mode_pop(NULL), TJ_ERR_INVALID_ARGUMENT);
    cr_expect_eq(tj_mode_push(NULL), TJ_ERR_INVALID_ARGUMENT);
    tj_mode no_handler = {NULL, NULL, "none"};
    cr_expect_eq(tj_mode_push(&no_handler), TJ_ERR_INVALID_ARGUMENT);
    cr_expect_eq(tj_mode_depth(), 0);
}

Test(modes, more_than_sixteen_modes_overflow)
{
    test_mode m[17];
    for (int i = 0; i < 16; i++) {
        m[i] = make_mode("m", FORWARD);
        push(&m[i]);
    }
    m[16] = make_mode("extra", FORWARD);
    cr_expect_eq(tj_mode_push(&m[16].base), TJ_ERR_OVERFLOW);
    EXPECT_ERROR(TJ_ERR_OVERFLOW, "more than 16 modes");
    cr_expect_eq(tj_mode_depth(), 16);
    /* all sixteen see a call, in order */
    tj_tensor *a = VEC3(1, 2, 3);
    tj_tensor *c = tj_add(a, a);
    EXPECT_VALUES(c, 2, 4, 6);
    for (int i = 0; i < 16; i++) cr_expect_eq(m[i].calls, 1);
    for (int i = 15; i >= 0; i--) pop(&m[i]);
    cr_expect_eq(tj_mode_depth(), 0);
    tj_tensor_release(a);
    tj_tensor_release(c);
}

Test(modes, redispatch_from_a_mode_not_pushed_is_refused)
{
    test_mode stray = make_mode("stray", FORWARD);
    tj_tensor *a = VEC3(1, 2, 3);
    tj_value outs[1];
    cr_expect_eq(tj_redispatch(&stray.base, TJ_OPS(add_Tensor),
                               (tj_value[]){tj_v_tensor(a), tj_v_tensor(a), tj_v_int(1)}, 3, outs),
                 TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_redispatch: mode 'stray' is not on this thread's stack");
    tj_tensor_release(a);
}

Test(modes, counter_counts_per_operator)
{
    tj_counter_mode *cm = tj_counter_mode_new();
    cr_assert_not_null(cm);
    tj_tensor *a = VEC3(1, 2, 3);
    cr_assert_eq(tj_mode_push(tj_counter_mode_base(cm)), TJ_OK);
    tj_scope *s = tj_scope_begin();
    for (int i = 0; i < 3; i++) cr_expect_not_null(tj_add(a, a));
    tj_erf(a); /* counted whether or not its kernel exists yet */
    tj_erf(a);
    tj_add(a, VEC3(1, 1, 1));
    tj_scope_end(s);
    cr_assert_eq(tj_mode_pop(tj_counter_mode_base(cm)), TJ_OK);
    tj_tensor_release(tj_add(a, a)); /* popped: not counted */
    cr_expect_eq(tj_counter_mode_count(cm, TJ_OPS(add_Tensor)), 4);
    cr_expect_eq(tj_counter_mode_count(cm, TJ_OPS(erf)), 2);
    cr_expect_eq(tj_counter_mode_count(cm, TJ_OPS(mul_Tensor)), 0);
    cr_expect_eq(tj_counter_mode_count(cm, NULL), 0);
    cr_expect_eq(tj_counter_mode_total(cm), 6);
    tj_counter_mode_free(cm);
    tj_tensor_release(a);
}

Test(modes, logger_writes_one_line_per_call)
{
    char buf[512] = {0};
    FILE *f = fmemopen(buf, sizeof buf, "w");
    cr_assert_not_null(f);
    tj_logger_mode *lm = tj_logger_mode_new(f);
    cr_assert_not_null(lm);
    tj_tensor *a = VEC3(1, 2, 3);
    tj_tensor *z = tj_tensor_scalar_f64(2.0);
    tj_tensor *m = tj_tensor_from_data(TJ_INT64, 2, (int64_t[]){2, 3}, (int64_t[]){1, 2, 3, 4, 5, 6});
    cr_assert_eq(tj_mode_push(tj_logger_mode_base(lm)), TJ_OK);
    tj_tensor *c = tj_add(a, a);
    tj_tensor *d = tj_add_alpha(a, z, tj_v_float(2.5));
    tj_tensor *e = tj_add(m, a);
    cr_assert_eq(tj_mode_pop(tj_logger_mode_base(lm)), TJ_OK);
    fclose(f);
    cr_expect_str_eq(buf, "aten::add.Tensor(f32[3], f32[3], 1)\n"
                          "aten::add.Tensor(f32[3], f64[], 2.5)\n"
                          "aten::add.Tensor(i64[2, 3], f32[3], 1)\n");
    EXPECT_VALUES(d, 6, 7, 8);
    cr_expect_eq(tj_tensor_dtype(d), TJ_FLOAT32, "a 0-dim float64 does not raise a float32 tensor");
    cr_expect_eq(tj_tensor_dtype(e), TJ_FLOAT32);
    cr_expect_null(tj_logger_mode_new(NULL));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    tj_logger_mode_free(lm);
    tj_tensor_release(a);
    tj_tensor_release(z);
    tj_tensor_release(m);
    tj_tensor_release(c);
    tj_tensor_release(d);
    tj_tensor_release(e);
}

/* A decomposition for an implicit composite: contiguous(x) = x + 0 (a new
 * contiguous tensor with x's values); the 0-dim zero is an intermediate. */
static tj_status contiguous_by_add(const tj_value *args, tj_value *outs)
{
    tj_tensor *zero = tj_tensor_scalar_f32(0.0f);
    tj_tensor *r = tj_add(args[0].u.t, zero);
    if (!r) return tj_last_status();
    outs[0] = tj_v_tensor(r);
    return TJ_OK;
}

Test(modes, implicit_composites_decompose_before_any_mode, .init = count_allocations)
{
    const tj_op *op = TJ_OPS(contiguous);
    tj_decomp_fn saved = op->decomp;
    const char *saved_name = op->decomp_name;
    tj_op_set_decomposition(op, contiguous_by_add, "contiguous_by_add");
    int64_t base = live_allocations();
    tj_tensor *a = VEC3(1, 2, 3);
    test_mode rec = make_mode("rec", FORWARD);
    push(&rec);
    tj_tensor *c = tj_contiguous(a);
    pop(&rec);
    EXPECT_VALUES(c, 1, 2, 3);
    cr_expect(!tj_tensor_shares_storage(a, c));
    EXPECT_EVENTS("rec:aten::add.Tensor:alpha=1");
    tj_tensor_release(a);
    tj_tensor_release(c);
    cr_expect_eq(live_allocations(), base, "the decomposition's intermediate was released");
    tj_op_set_decomposition(op, saved, saved_name);
}

/* =============================== ownership =============================== */

Test(ownership, scope_releases_results_at_its_end, .init = count_allocations)
{
    int64_t base = live_allocations();
    tj_scope *s = tj_scope_begin();
    cr_assert_not_null(s);
    tj_tensor *a = VEC3(1, 2, 3);
    tj_tensor *c = tj_add(tj_add(a, a), a);
    EXPECT_VALUES(c, 3, 6, 9);
    cr_expect_gt(live_allocations(), base);
    tj_scope_end(s);
    cr_expect_eq(live_allocations(), base);
}

Test(ownership, kept_tensor_outlives_its_scopes, .init = count_allocations)
{
    int64_t base = live_allocations();
    tj_scope *outer = tj_scope_begin();
    tj_tensor *a = VEC3(1, 2, 3);
    tj_scope *inner = tj_scope_begin();
    tj_tensor *kept = tj_scope_keep(tj_add(a, a));
    tj_add(kept, kept); /* not kept: released with the inner scope */
    tj_scope_end(inner);
    EXPECT_VALUES(kept, 2, 4, 6); /* now owned by the outer scope */
    tj_tensor *out = tj_scope_keep(tj_add(kept, a));
    tj_scope_end(outer);
    EXPECT_VALUES(out, 3, 6, 9); /* handed to us */
    tj_tensor_release(out);
    cr_expect_eq(live_allocations(), base);
}

Test(ownership, ending_an_outer_scope_closes_inner_ones, .init = count_allocations)
{
    int64_t base = live_allocations();
    tj_scope *outer = tj_scope_begin();
    tj_tensor *a = VEC3(1, 2, 3);
    tj_scope_begin();
    tj_add(a, a);
    tj_scope_end(outer);
    cr_expect_eq(live_allocations(), base);
    tj_scope *again = tj_scope_begin(); /* the stack is usable afterwards */
    a = VEC3(1, 1, 1);
    cr_expect_not_null(tj_add(a, a));
    tj_scope_end(again);
    cr_expect_eq(live_allocations(), base);
}

Test(ownership, results_outside_a_scope_belong_to_the_caller, .init = count_allocations)
{
    int64_t base = live_allocations();
    tj_tensor *a = VEC3(1, 2, 3);
    tj_tensor *c = tj_add(a, a);
    tj_tensor_release(a);
    EXPECT_VALUES(c, 2, 4, 6);
    tj_tensor_release(c);
    cr_expect_eq(live_allocations(), base);
}

Test(ownership, failing_chain_leaks_nothing, .init = count_allocations)
{
    int64_t base = live_allocations();
    tj_tensor *a = VEC3(1, 2, 3);
    tj_tensor *b = test_f32(1, (int64_t[]){2}, (float[]){1, 2});
    tj_tensor *t1 = tj_add(a, a);
    tj_tensor *t2 = tj_add(t1, b);
    tj_tensor *t3 = tj_add(t2, a);
    cr_expect_not_null(t1);
    cr_expect_null(t2);
    cr_expect_null(t3);
    EXPECT_ERROR(TJ_ERR_SHAPE, "earlier error");
    tj_tensor_release(t1);
    /* in a scope the chain needs no names at all */
    tj_scope *s = tj_scope_begin();
    cr_expect_null(tj_add(tj_add(tj_add(a, a), b), a));
    tj_scope_end(s);
    tj_tensor_release(a);
    tj_tensor_release(b);
    cr_expect_eq(live_allocations(), base);
}

Test(ownership, mode_failing_after_forwarding_leaks_nothing, .init = count_allocations)
{
    int64_t base = live_allocations();
    test_mode fail = make_mode("fail", FAIL_AFTER_FORWARD);
    tj_tensor *a = VEC3(1, 2, 3);
    push(&fail);
    cr_expect_null(tj_add(a, a));
    pop(&fail);
    EXPECT_ERROR(TJ_ERR_UNSUPPORTED, "test mode: refuses aten::add.Tensor");
    tj_tensor_release(a);
    cr_expect_eq(live_allocations(), base);
}

Test(ownership, replacing_mode_intermediates_are_released, .init = count_allocations)
{
    int64_t base = live_allocations();
    test_mode rewrite = make_mode("rewrite", REWRITE_ALPHA);
    test_mode sub = make_mode("sub", REPLACE_BY_SUB);
    tj_tensor *a = VEC3(4, 5, 6);
    push(&sub);
    push(&rewrite);
    tj_tensor *c = tj_add(a, a);
    pop(&rewrite);
    pop(&sub);
    EXPECT_VALUES(c, 0, 0, 0);
    tj_tensor_release(c);
    tj_tensor_release(a);
    cr_expect_eq(live_allocations(), base);
}

/* Fails the 1st, 2nd, ... allocation of `fn` until it succeeds: every failure
 * must be TJ_ERR_OUT_OF_MEMORY and leave nothing allocated but, once, the
 * scope stack's own vector (which stays for the thread's next scopes). The
 * process starts without that vector, so that growing it fails too. */
static void inject_failures(tj_tensor *(*fn)(tj_tensor *), tj_tensor *arg, bool scoped)
{
    int64_t base = live_allocations();
    for (uint64_t n = 1;; n++) {
        cr_assert_lt(n, 100, "never succeeded");
        tj_clear_error();
        tj_scope *s = scoped ? tj_scope_begin() : NULL;
        tj_debug_fail_allocation(n);
        tj_tensor *r = fn(arg);
        tj_debug_fail_allocation(0);
        if (r) {
            EXPECT_VALUES(r, 2, 4, 6);
            if (scoped) tj_scope_end(s);
            else tj_tensor_release(r);
            cr_expect_leq(live_allocations() - base, 1, "after success at n = %d", (int)n);
            cr_expect_gt(n, 1, "the first allocation was never failed");
            break;
        }
        cr_expect_eq(tj_last_status(), TJ_ERR_OUT_OF_MEMORY, "n = %d: %s", (int)n, tj_last_error());
        if (scoped) tj_scope_end(s);
        cr_expect_leq(live_allocations() - base, 1, "n = %d leaked %lld allocations", (int)n, (long long)(live_allocations() - base));
    }
}

static tj_tensor *double_it(tj_tensor *a) { return tj_add(a, a); }

Test(ownership, allocation_failures_in_add_leak_nothing, .init = count_allocations)
{
    tj_tensor *a = VEC3(1, 2, 3);
    inject_failures(double_it, a, false);
    inject_failures(double_it, a, true);
    tj_tensor_release(a);
}

static test_mode fwd_mode;
static tj_tensor *double_it_in_mode(tj_tensor *a)
{
    push(&fwd_mode);
    tj_tensor *r = tj_add(a, a);
    pop(&fwd_mode);
    return r;
}

Test(ownership, allocation_failures_under_a_mode_leak_nothing, .init = count_allocations)
{
    fwd_mode = make_mode("fwd", FORWARD);
    tj_tensor *a = VEC3(1, 2, 3);
    inject_failures(double_it_in_mode, a, false);
    inject_failures(double_it_in_mode, a, true);
    tj_tensor_release(a);
}

/* A decomposition with a Tensor[] result (split.Tensor's kind): [x + x, x + x + x],
 * in an array that outlives the call, as a list result's array must. */
static tj_tensor *two_chunks[2];
static tj_status two_sums(const tj_value *args, tj_value *outs)
{
    tj_tensor *x = args[0].u.t;
    two_chunks[0] = tj_add(x, x);
    two_chunks[1] = tj_add(two_chunks[0], x);
    if (!two_chunks[1]) return tj_last_status();
    outs[0] = tj_v_tensors(two_chunks, 2);
    return TJ_OK;
}

Test(ownership, tensor_list_results_belong_to_the_scope, .init = count_allocations)
{
    const tj_op *op = TJ_OPS(split_Tensor);
    tj_op_set_decomposition(op, two_sums, "two_sums");
    int64_t base = live_allocations();
    tj_tensor *a = VEC3(1, 2, 3);
    tj_scope *s = tj_scope_begin();
    tj_value outs[1];
    cr_assert_eq(tj_call("aten::split.Tensor", (tj_value[]){tj_v_tensor(a), tj_v_int(1)}, 2, outs), TJ_OK, "%s",
                 tj_last_error());
    cr_assert_eq(outs[0].kind, TJ_V_TENSORS);
    cr_assert_eq(outs[0].n, 2);
    EXPECT_VALUES(outs[0].u.ts[0], 2, 4, 6);
    EXPECT_VALUES(outs[0].u.ts[1], 3, 6, 9);
    tj_scope_end(s);
    tj_tensor_release(a);
    cr_expect_eq(live_allocations(), base, "the scope released both chunks");
}

/* A thread's own cached blocks go to the shared cache when it exits, and
 * tj_storage_cache_release frees them: nothing is lost with the thread. */
static void *add_on_a_thread(void *arg)
{
    tj_tensor *a = arg;
    for (int i = 0; i < 10; i++) tj_tensor_release(tj_add(a, a));
    return NULL;
}

static void cached_counting_allocator(void)
{
    count_allocations();
    tj_storage_cache_set_limit((size_t)1 << 30);
}

Test(ownership, blocks_cached_by_an_exiting_thread_are_not_lost, .init = cached_counting_allocator)
{
    int64_t base = live_allocations();
    tj_tensor *a = VEC3(1, 2, 3);
    size_t before = tj_storage_cache_bytes();
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, add_on_a_thread, a), 0);
    pthread_join(th, NULL);
    cr_expect_gt(tj_storage_cache_bytes(), before, "the thread's blocks moved to the shared cache");
    tj_tensor_release(a);
    tj_storage_cache_release();
    cr_expect_eq(tj_storage_cache_bytes(), 0);
    cr_expect_eq(live_allocations(), base, "every block went back to the allocator");
}

/* The public functions that take a call's result (tensors, and the graphs
 * and plans tracing and compiling return) keep the chain as the operators
 * do: a NULL from an unread failure names that failure with its status;
 * once it is read, the NULL is the function's own error. */
Test(dispatch, public_functions_given_a_failed_result_name_the_failure)
{
    tj_tensor *a = VEC3(1, 2, 3);
    tj_tensor *b = test_f32(1, (int64_t[]){4}, (float[]){1, 2, 3, 4});
    static const char cause[] =
        "; earlier error: aten::add.Tensor: shapes [3] and [4] cannot be broadcast (dim 0: 3 vs 4)";
    bool close = false;
    tj_tensor *out = NULL;
    for (int read = 0; read < 2; read++) {
        tj_status want = read ? TJ_ERR_INVALID_ARGUMENT : TJ_ERR_SHAPE;
        char msg[16][256];
        tj_status got[16];
        tj_tensor *parts[2];
        int n_parts;
        int n = 0;
#define RECORD(call)                                                                    \
    do {                                                                                \
        cr_assert_null(tj_add(a, b));                                                   \
        if (read) (void)tj_last_error();                                                \
        (void)(call);                                                                   \
        got[n] = tj_last_status();                                                      \
        snprintf(msg[n++], sizeof msg[0], "%s", tj_last_error());                       \
    } while (0)
        RECORD(tj_backward(read ? NULL : tj_sum(tj_add(a, b), -1), NULL)); /* the root cause, not sum's NULL */
        RECORD(tj_compile(NULL, NULL));
        RECORD(tj_plan_run(NULL, NULL, 0, &out));
        RECORD(tj_tensor_print(NULL, stdout));
        RECORD(tj_allclose(a, NULL, 0, 0, false, &close));
        RECORD(tj_tensor_detach(NULL));
        RECORD(tj_tensor_set_requires_grad(NULL, true));
        RECORD(tj_split(NULL, 1, 0, parts, 2, &n_parts));
        RECORD(tj_graph_print(NULL, stdout));
        RECORD(tj_pass_cse(NULL));
        RECORD(tj_run_passes(NULL, NULL, NULL, 0, NULL));
        RECORD(tj_graph_set_input_name(NULL, 0, "x"));
        RECORD(tj_plan_context_output(NULL, 0));
#undef RECORD
        static const char *const what[] = {"tj_backward: NULL output", "tj_compile: NULL graph",
                                           "tj_plan_run: NULL plan", "tj_tensor_print: NULL tensor",
                                           "aten::allclose: NULL other", "tj_tensor_detach: NULL tensor",
                                           "tj_tensor_set_requires_grad: NULL tensor",
                                           "aten::split.Tensor: argument 0 'self' expects Tensor, got a NULL tensor",
                                           "tj_graph_print: NULL graph", "tj_pass_cse: NULL graph",
                                           "tj_run_passes: NULL graph", "tj_graph_set_input_name: NULL graph",
                                           "tj_plan_context_output: NULL context"};
        for (int i = 0; i < n; i++) {
            char expect[320];
            snprintf(expect, sizeof expect, "%s%s", what[i], read ? "" : cause);
            cr_expect_eq(got[i], want, "%s: %s", what[i], tj_status_name(got[i]));
            cr_expect_str_eq(msg[i], expect);
        }
    }
    tj_tensor_release(a);
    tj_tensor_release(b);
}
