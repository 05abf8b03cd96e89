/* tj_denormal_mode: per operator, its calls, the elements of its float
 * results and how many are denormal; views, integer and fake results not
 * counted; denormals seen as bits even on a thread that flushes them. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "tjit/tjit.h"

static const tj_op *op(const char *name)
{
    const tj_op *o = tj_op_find(name);
    cr_assert_not_null(o, "%s", name);
    return o;
}

static void expect_counts(const tj_denormal_mode *m, const char *name, int64_t calls, int64_t results,
                          int64_t denormals)
{
    int64_t c, r, d;
    tj_denormal_mode_counts(m, op(name), &c, &r, &d);
    cr_expect_eq(c, calls, "%s: %lld calls, want %lld", name, (long long)c, (long long)calls);
    cr_expect_eq(r, results, "%s: %lld results, want %lld", name, (long long)r, (long long)results);
    cr_expect_eq(d, denormals, "%s: %lld denormal, want %lld", name, (long long)d, (long long)denormals);
}

Test(denormal_mode, counts_float_results_and_their_denormals_per_operator)
{
    tj_scope *s = tj_scope_begin();
    /* 1e-30 times: 1e-10 (denormal), -1e-12 (denormal), 1 (normal), 0 (zero), 1e-20 (0: underflow) */
    tj_tensor *a = tj_full((int64_t[]){5}, 1, tj_v_float(1e-30), TJ_FLOAT32);
    tj_tensor *b = tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){5}, (float[]){1e-10f, -1e-12f, 1, 0, 1e-20f});
    double tiny64[3] = {DBL_MIN / 4, 1.0, -DBL_MIN / 1024};
    tj_tensor *d64 = tj_tensor_from_data(TJ_FLOAT64, 1, (int64_t[]){3}, tiny64);
    tj_tensor *i = tj_tensor_from_data(TJ_INT64, 1, (int64_t[]){2}, (int64_t[]){1, 2});

    tj_denormal_mode *m = tj_denormal_mode_new();
    cr_assert_not_null(m);
    cr_assert_eq(tj_mode_push(tj_denormal_mode_base(m)), TJ_OK);
    tj_tensor *p = tj_mul(a, b);
    tj_tensor *v = tj_view(p, (int64_t[]){5, 1}, 2);        /* a view: its base's elements */
    tj_tensor *t = tj_transpose(tj_clone(v), 0, 1);          /* clone counted; the strided view not */
    tj_tensor *n64 = tj_neg(d64);                            /* float64: two denormal */
    tj_tensor *ia = tj_add(i, i);              /* int64: no float results */
    tj_tensor *bad = tj_mm(a, a);                            /* fails: not counted */
    cr_assert_eq(tj_mode_pop(tj_denormal_mode_base(m)), TJ_OK);
    cr_assert(p && v && t && n64 && ia && !bad);

    expect_counts(m, "aten::mul.Tensor", 1, 5, 2);
    expect_counts(m, "aten::view", 1, 0, 0);
    expect_counts(m, "aten::clone", 1, 5, 2);
    expect_counts(m, "aten::transpose.int", 1, 0, 0);
    expect_counts(m, "aten::neg", 1, 3, 2);
    expect_counts(m, "aten::add.Tensor", 1, 0, 0);
    expect_counts(m, "aten::mm", 0, 0, 0);
    tj_denormal_mode_counts(NULL, op("aten::neg"), NULL, NULL, NULL); /* NULL pointers: nothing written */
    tj_denormal_mode_free(m);
    tj_scope_end(s);
}

/* In-place view operators change self's geometry, not its elements: they
 * were counted where computed (transpose_ counted both denormals here). */
Test(denormal_mode, inplace_views_count_calls_not_elements)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){2, 2}, (float[]){FLT_MIN / 4, FLT_MIN / 8, 1, 2});
    tj_denormal_mode *m = tj_denormal_mode_new();
    cr_assert_eq(tj_mode_push(tj_denormal_mode_base(m)), TJ_OK);
    tj_tensor *t = tj_transpose_(x, 0, 1), *u = tj_unsqueeze_(x, 0), *c = tj_mul_scalar(x, tj_v_float(0.5));
    cr_assert_eq(tj_mode_pop(tj_denormal_mode_base(m)), TJ_OK);
    cr_assert(t && u && c, "%s", tj_last_error());
    expect_counts(m, "aten::transpose_", 1, 0, 0);
    expect_counts(m, "aten::unsqueeze_", 1, 0, 0);
    expect_counts(m, "aten::mul.Scalar", 1, 4, 2);
    tj_denormal_mode_free(m);
    tj_scope_end(s);
}

/* With the thread flushing denormals (DAZ: they compare equal to 0), a copy
 * still holds them: the census reads bits. */
Test(denormal_mode, sees_denormals_on_a_thread_that_flushes_them)
{
    tj_scope *s = tj_scope_begin();
    float den = FLT_MIN / 8;
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){2}, (float[]){den, 1});
    cr_assert(tj_set_flush_denormal(true));
    tj_denormal_mode *m = tj_denormal_mode_new();
    cr_assert_eq(tj_mode_push(tj_denormal_mode_base(m)), TJ_OK);
    tj_tensor *c = tj_clone(x);
    cr_assert_eq(tj_mode_pop(tj_denormal_mode_base(m)), TJ_OK);
    cr_assert_not_null(c);
    cr_assert_eq(memcmp(tj_tensor_data(c), &den, sizeof den), 0, "clone changed the denormal's bits");
    expect_counts(m, "aten::clone", 1, 2, 1);
    tj_denormal_mode_free(m);
    tj_scope_end(s);
}

/* Inside a fake-mode make_fx the census sees fake tensors: calls, no results. */
static tj_status neg_under_census(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_denormal_mode *m = ctx;
    tj_status st = tj_mode_push(tj_denormal_mode_base(m));
    if (st != TJ_OK) return st;
    out[0] = tj_neg(in[0]);
    tj_mode_pop(tj_denormal_mode_base(m));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(denormal_mode, fake_results_hold_nothing_to_count)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){1}, (float[]){FLT_MIN / 2});
    tj_denormal_mode *m = tj_denormal_mode_new();
    tj_graph *g = tj_make_fx(neg_under_census, m, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    expect_counts(m, "aten::neg", 1, 0, 0);
    tj_graph_free(g);
    tj_denormal_mode_free(m);
    tj_scope_end(s);
}
